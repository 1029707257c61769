/*-------------------------------------------------------------------------
 *
 * reference.h
 *	  A brute-force reference model of the windowing engine, used by the
 *	  differential tests in test_engine.c.
 *
 * The reference records the operations of a stream (events and idle-time
 * watermark advances) in arrival order and, when run, applies the semantics
 * stated in src/engine/wa_engine.h as literally as possible: it enumerates
 * every window of every specification that contains each event, decides
 * acceptance against the watermark just before the event, and folds the
 * accepted events of each (key, window) with its own exact arithmetic.  It
 * shares nothing with the engine but the public type definitions, so a bug
 * in the engine's slices, heaps or kernels cannot hide in both.
 *
 * To fold floats exactly the reference only accepts float inputs that are
 * finite multiples of 2^-10 with magnitude at most 2^30; it then keeps
 * sums and sums of squares as exact 128-bit integers, and rounds only when
 * it turns a finished fold into a double (relative error ~1e-16).  It uses
 * plain doubles, not long double: valgrind computes long double with
 * 64-bit precision and would make the reference itself wrong.
 *
 * test/engine/reference.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_TEST_REFERENCE_H
#define WA_TEST_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wa_agg.h"
#include "wa_engine.h"
#include "wa_time.h"

/* The reference's "minus infinity": below every end + lateness there is. */
#define REF_NEG_INF (-((wa_tick) 1 << 120))

/* Scale of the fixed-point form the reference folds floats in. */
#define REF_FLOAT_SCALE 1024

typedef enum ref_outcome
{
	REF_ACCEPTED,
	REF_PARTIAL,
	REF_DROPPED
} ref_outcome;

typedef struct ref_config
{
	int			n_windows;
	const wa_window *windows;
	int64_t		bound;
	int64_t		lateness;
	int			n_aggs;
	const wa_agg_spec *aggs;
	int			n_inputs;		/* values per event */
} ref_config;

/* Folded state of one input over the events a window accepted. */
typedef struct ref_input
{
	int64_t		n;				/* non-null values (decimals: not NaN) */
	int64_t		nans;			/* decimals: NaN values */
	__int128	sum;			/* ints: exact sum; floats: sum of x*1024 */
	__int128	sumsq;			/* floats: sum of (x*1024)^2 */
	__int128	sumabs;			/* floats: sum of |x*1024|, for tolerances */
	int64_t		min;			/* ints: value; floats: x*1024 */
	int64_t		max;
} ref_input;

/* One (key, window) that accepted at least one event. */
typedef struct ref_window
{
	int			key;
	int			spec;			/* index into the config's windows */
	wa_tick		start;
	wa_tick		end;
	int64_t		count_star;		/* accepted events */
	int64_t		n_ontime;		/* accepted while end > watermark */
	int64_t		n_late;			/* accepted while end <= watermark */
	int64_t		first_op;		/* op that first put data in the window */
	int64_t		fire_op;		/* op whose watermark reaches end, or the
								 * number of ops if only the flush does */
	ref_input  *inputs;			/* n_inputs entries */
} ref_window;

/* One aggregate's expected final value. */
typedef struct ref_value
{
	bool		isnull;
	int64_t		count;
	int64_t		i;
	__int128	sum;
	double		f;
	double		scale;			/* magnitude of the inputs, for float
								 * tolerances */
} ref_value;

typedef struct ref_model ref_model;

extern ref_model *ref_create(const ref_config *config);
extern void ref_destroy(ref_model *ref);

/* Record operations, in arrival order. */
extern void ref_add_event(ref_model *ref, int key, int64_t event_time,
						  const wa_value *values);
extern void ref_add_advance(ref_model *ref, wa_tick watermark);

/* Apply the semantics to every recorded operation. */
extern void ref_run(ref_model *ref);

/* Results, valid after ref_run. */
extern int64_t ref_n_ops(const ref_model *ref);
extern bool ref_op_is_event(const ref_model *ref, int64_t op);
extern ref_outcome ref_op_outcome(const ref_model *ref, int64_t op);
extern wa_tick ref_op_watermark(const ref_model *ref, int64_t op);
extern int64_t ref_n_windows(const ref_model *ref);
extern const ref_window *ref_window_at(const ref_model *ref, int64_t idx);
extern int64_t ref_find(const ref_model *ref, int key, int spec,
						wa_tick start);
extern void ref_value_of(const ref_model *ref, const ref_window *win,
						 int agg, ref_value *out);
extern int64_t ref_count_outcome(const ref_model *ref, ref_outcome outcome);

/*
 * A window's value built by hand, for references of other window kinds
 * (the sessions' in test_sessions.c): win starts empty, with inputs (the
 * config's n_inputs entries) as its per-input state, and takes the values
 * of each event folded into it; ref_value_of then reads it.
 */
extern void ref_window_init(const ref_model *ref, ref_window *win,
							ref_input *inputs);
extern void ref_fold(const ref_model *ref, ref_window *win,
					 const wa_value *values);

#endif							/* WA_TEST_REFERENCE_H */
