/*-------------------------------------------------------------------------
 *
 * harness.h
 *	  The shared harness of the engine's test programs.
 *
 * What test_cases.c, test_differential.c and test_checkpoint.c have in
 * common: formatting for messages, a deterministic random number generator,
 * a counting allocator, a key table, the aggregate list every test
 * computes, streams of operations and their random generator (harness.c),
 * the differential cases' parameters, a small engine driven by hand
 * ("mini"), a persisted slice table as the PostgreSQL side keeps one, and
 * run_stream() (compare.c), which runs a stream through the engine and
 * through the brute-force reference (reference.c) and reports a check per
 * property.  Checks are reported through tap.h.
 *
 * WA_TEST_EVENTS (default 100000) scales every stream, so that the suite
 * can run under valgrind in reasonable time.
 *
 * test/engine/harness.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reference.h"
#include "tap.h"
#include "wa_engine.h"
#include "wa_mem.h"

/* ----------------------------------------------------------------
 * Messages
 * ----------------------------------------------------------------
 */
extern const char *i128s(__int128 v);
extern const char *kind_name(wa_agg_kind kind);
extern const char *outcome_name(int r);
extern double now_seconds(void);

/* An integer from the environment, or dflt. */
extern int64_t opt_int(const char *name, int64_t dflt);

/* Stream length for a test written for n events at full size. */
extern int64_t scaled(int64_t n);

/* ----------------------------------------------------------------
 * Deterministic PRNG (splitmix64): the same seed gives the same stream on
 * every platform, so a failure can be replayed from its seed.
 * ----------------------------------------------------------------
 */
typedef struct rng
{
	uint64_t	state;
} rng;

extern uint64_t rng_below(rng *r, uint64_t n);

/* ----------------------------------------------------------------
 * Counting allocator: checks every free and realloc against the size the
 * block was allocated with, and counts what is still held.
 * ----------------------------------------------------------------
 */
typedef struct counting_alloc
{
	int64_t		live_bytes;
	int64_t		live_blocks;
	int64_t		peak_bytes;
	int64_t		n_allocs;
	int64_t		errors;
	char		first_error[256];
} counting_alloc;

extern void ca_setup(counting_alloc *ca, wa_allocator *al);

/* ----------------------------------------------------------------
 * Key table: maps the keys of a stream (int64 or byte strings) to dense
 * ids, and back from the key an emitted pane carries.
 * ----------------------------------------------------------------
 */
typedef struct keytab
{
	bool		bytes;
	int			n;
	int			cap;
	int64_t    *ivals;
	uint8_t   **kbytes;
	uint32_t   *klens;
	int		   *slots;			/* -1 when empty */
	uint64_t	n_slots;
} keytab;

extern int keytab_find(const keytab *kt, const wa_key *key);
extern int	keytab_add(keytab *kt, int64_t ival, const uint8_t *b,
					   uint32_t len);

/* ----------------------------------------------------------------
 * The aggregate list every test computes: four inputs (an int column with
 * NULLs and occasional int64 extremes, an int column with full-range values,
 * a float column with NULLs, a numeric(18, s) column as fixed-point
 * integers with NULLs and NaNs) and every kind of aggregate over them.
 * ----------------------------------------------------------------
 */
enum
{
	IN_A,
	IN_B,
	IN_F,
	IN_D,
	N_INPUTS
};

#define N_AGGS 20
extern const wa_agg_spec test_aggs[N_AGGS];

/*
 * The tests' generic aggregates (WA_AGG_GENERIC through wa_agg_generic,
 * with heap states of varying size): over spec->input, an exact sum, or
 * the maximum when spec->idempotent; the reference computes them as the
 * kernel test_generic_as names.  arg of the callbacks is the aggregate
 * list.
 */
extern void test_generic_init(wa_agg_generic *generic, const wa_agg_spec *aggs);
extern wa_agg_kind test_generic_as(const wa_agg_spec *spec);

/* Indexes into test_aggs used by the scripted tests. */
#define AGG_COUNT_STAR 0
#define AGG_SUM_A 2
#define AGG_MIN_F 11
#define AGG_MAX_F 12

/* ----------------------------------------------------------------
 * Streams: operations in arrival order, plus the key table.
 * ----------------------------------------------------------------
 */
typedef struct stream_op
{
	bool		is_event;
	int			key;
	int64_t		time;
	wa_tick		advance_to;
} stream_op;

typedef struct stream
{
	int64_t		n_ops;
	int64_t		cap;
	int64_t		n_events;
	stream_op  *ops;
	wa_value   *values;			/* N_INPUTS per op */
	keytab		keys;
} stream;

extern void stream_init(stream *st, bool byte_keys);
extern void stream_free(stream *st);
extern void stream_event(stream *st, int key, int64_t t,
						 const wa_value *values);
extern void stream_advance(stream *st, wa_tick wm);
extern void random_values(rng *r, wa_value *v);

/* ----------------------------------------------------------------
 * The differential cases: a random stream and the engine's configuration
 * ----------------------------------------------------------------
 */
typedef struct diff_case
{
	const char *name;
	int			n_windows;
	wa_window	windows[5];
	int64_t		bound;
	int64_t		lateness;
	int			n_keys;
	int64_t		t0;
	int64_t		span;
	uint64_t	seed;
	int			epoch;
	int			advance_every;
	bool		byte_keys;
	bool		cycle_keys;
	int64_t		n_events;		/* at full size */
	bool		expect_mix;
	int64_t		spike;			/* 0: twice the largest size plus bound */
	int64_t		advance_ahead;	/* 0: 15 */
} diff_case;

#define MULTI3 3, {{10, 10, 0}, {60, 10, 0}, {30, 15, 5}}
#define NEAR_LIMIT_WINDOWS 3, {{1000, 999, 0}, {7, 7, 3}, {60, 10, -5}}

/* Generate a case's stream (scaled); returns the number of keys. */
extern int diff_case_stream(const diff_case *dc, stream *st);

/* Streams at the int64 limits, and huge windows over the whole range. */
extern void make_huge_stream(stream *st, int64_t n, uint64_t seed);
extern void make_full_range_stream(stream *st, int64_t n, uint64_t seed);
extern const wa_window full_range_g1[2];
extern const wa_window full_range_g60[2];

/* ----------------------------------------------------------------
 * Running a stream through the engine and the reference (compare.c)
 * ----------------------------------------------------------------
 */
typedef struct problem
{
	int64_t		count;
	char		first[1024];
} problem;

/* Record a problem; only the first of each kind is formatted. */
#define NOTE(ctx, cat, ...) \
	do { \
		problem *p_ = &(ctx)->probs[(cat)]; \
		if (p_->count++ == 0) \
			snprintf(p_->first, sizeof(p_->first), __VA_ARGS__); \
	} while (0)

/* A logged pane, for the scripted tests. */
typedef struct logged_pane
{
	int			key;
	int			window;
	wa_tick		start;
	wa_tick		end;
	wa_pane_kind kind;
	int64_t		revision;
	int64_t		phase;
	wa_result	results[N_AGGS];
} logged_pane;

typedef struct run_opts
{
	const char *name;
	int			n_windows;
	const wa_window *windows;
	int64_t		bound;
	int64_t		lateness;
	int			epoch;			/* 0: emit_late after every op; else after
								 * every epoch events */
	bool		expect_mix;		/* the stream must hold late, partial and
								 * dropped events */
	bool		log_panes;
	bool		merge_every_slice;	/* engine without two-stack emission */
	bool		share_windows;	/* engine runs the window coverage plan */
	const wa_agg_spec *aggs;	/* NULL: test_aggs */
	int			n_aggs;
	bool		quiet;			/* no summary line (the fuzzer) */
} run_opts;

typedef struct run_result
{
	bool		ran;
	logged_pane *log;
	int64_t		n_log;
	wa_ingest_result *outcomes;
	wa_stats	stats;
} run_result;

extern bool results_match(const ref_model *ref, const ref_window *rw,
						  const wa_agg_spec *aggs, int n_aggs,
						  const wa_result *res, char *buf, size_t len);
extern void run_result_free(run_result *rr);

/*
 * Run a stream through the reference and the engine and compare.  Prints
 * one check per property; fills rr (if not NULL) for further assertions.
 */
extern void run_stream(const run_opts *o, const stream *st, run_result *rr);

/* ----------------------------------------------------------------
 * An engine driven by hand, for tests that look between operations
 * ----------------------------------------------------------------
 */
/* Drive an engine by hand, for tests that look between operations. */
typedef struct mini
{
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_engine  *eng;
	int64_t		n_panes;
	wa_pane		last;			/* shallow: only the scalar fields are used */
	wa_result	last_results[N_AGGS];
} mini;

extern void mini_emit(void *arg, const wa_pane *pane);
extern void mini_init(mini *m, const wa_window *windows, int n_windows,
					  int64_t bound, int64_t lateness);
extern wa_ingest_result mini_ingest(mini *m, int64_t key, int64_t t,
									int64_t a, double f);
extern bool mini_done(mini *m);

/* ----------------------------------------------------------------
 * A persisted slice table, as the PostgreSQL side keeps one
 * ----------------------------------------------------------------
 */
/* A persisted slice table, as the PostgreSQL side keeps one. */
typedef struct ck_entry
{
	int			key;
	int64_t		slice;
	uint8_t    *acc;
} ck_entry;

typedef struct ck_table
{
	ck_entry   *e;
	int64_t		n;
	int64_t		cap;
} ck_table;

extern void ck_table_add(ck_table *t, int key, int64_t slice, const void *acc,
						 uint32_t size);
extern void ck_sort(void *base, size_t n, size_t size,
					int (*cmp) (const void *, const void *));
extern int ck_entry_cmp(const void *a, const void *b);
extern void ck_table_free(ck_table *t);
extern void ck_table_copy(ck_table *dst, const ck_table *src, uint32_t size);
extern void ck_table_apply(ck_table *t, ck_table *saves, int64_t expire_below);
extern bool ck_table_equal(const ck_table *a, const ck_table *b, uint32_t size,
						   char *buf, size_t len);

#endif							/* HARNESS_H */
