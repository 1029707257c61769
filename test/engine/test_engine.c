/*-------------------------------------------------------------------------
 *
 * test_engine.c
 *	  Unit and differential tests of the event-time windowing engine.
 *
 * The differential tests feed long random out-of-order streams (fixed
 * seeds) to the engine and to the brute-force model in reference.c, and
 * compare everything wa_engine.h promises: the ingest result of every event,
 * the watermark after every operation, the set of (key, window) pairs that
 * produce panes, the final value of each (the last revision emitted), the
 * revision sequence and pane kinds, when on-time panes fire, how many late
 * panes each window gets, the statistics, and the memory: nothing live
 * after a flush, mem_bytes back to its creation value, every byte returned
 * to the allocator by destroy, every free with the size allocated.
 *
 * Two emission modes: "batch" calls wa_engine_emit_late after every
 * operation, so each late event yields exactly one late pane per window it
 * refines; "epoch N" calls it after every N events, and each window may get
 * at most one late pane per epoch.  A window whose first data arrives after
 * the watermark passed its end counts as already fired: its first pane is a
 * LATE pane (revision 1).
 *
 * The unit tests pin down edge cases one scripted stream at a time, and
 * check wa_config_check and the slice width.
 *
 * Output: one line per check, "ok - name" or "not ok - name: detail", lines
 * starting with "#" for information, and a last line "N passed, N failed".
 * The exit status is nonzero if any check failed.
 *
 * Usage: test_engine [unit | diff | <prefix of a differential case name>].
 * WA_TEST_EVENTS (default 100000) scales every stream, so that the suite
 * can run under valgrind in reasonable time.
 *
 * test/engine/test_engine.c
 *
 *-------------------------------------------------------------------------
 */
/* clock_gettime under -std=c11 */
#define _POSIX_C_SOURCE 199309L

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference.h"
#include "wa_engine.h"

/* test_planner.c: the planner's checks, reported through check() */
extern void test_planner(void (*check_fn) (bool ok, const char *name,
										   const char *fmt,...));

/* ----------------------------------------------------------------
 * Reporting
 * ----------------------------------------------------------------
 */
static int	n_passed;
static int	n_failed;

static void check(bool ok, const char *name, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

static void
check(bool ok, const char *name, const char *fmt,...)
{
	if (ok)
	{
		printf("ok - %s\n", name);
		n_passed++;
	}
	else
	{
		char		detail[1200];
		va_list		ap;

		detail[0] = '\0';
		if (fmt != NULL)
		{
			va_start(ap, fmt);
			vsnprintf(detail, sizeof(detail), fmt, ap);
			va_end(ap);
		}
		/* a check is one line, whatever the detail holds */
		for (char *p = detail; *p; p++)
			if (*p == '\n')
				*p = ' ';
		printf("not ok - %s: %s\n", name, detail);
		n_failed++;
	}
	fflush(stdout);
}

/* Format a 128-bit tick; a small ring of buffers serves one printf. */
static const char *
i128s(__int128 v)
{
	static char bufs[16][48];
	static int	next;
	char	   *buf = bufs[next++ % 16];
	char		tmp[48];
	int			n = 0;
	int			o = 0;
	unsigned __int128 u;

	u = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;

	do
	{
		tmp[n++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	if (v < 0)
		buf[o++] = '-';
	while (n > 0)
		buf[o++] = tmp[--n];
	buf[o] = '\0';
	return buf;
}

/* Our own names for the aggregate kinds, so messages need no engine code. */
static const char *
kind_name(wa_agg_kind kind)
{
	static const char *const names[] = {
		"count(*)", "count", "sum_int", "sum_float", "min_int", "max_int",
		"min_float", "max_float", "avg_int", "avg_float", "var_samp",
		"var_pop", "stddev_samp", "stddev_pop"
	};

	if ((int) kind < 0 || (int) kind >= (int) (sizeof(names) / sizeof(names[0])))
		return "?";
	return names[kind];
}

static const char *
outcome_name(int r)
{
	switch (r)
	{
		case WA_INGEST_ACCEPTED:
			return "ACCEPTED";
		case WA_INGEST_PARTIAL:
			return "PARTIAL";
		case WA_INGEST_DROPPED:
			return "DROPPED";
	}
	return "?";
}

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* ----------------------------------------------------------------
 * Deterministic PRNG (splitmix64): the same seed gives the same stream on
 * every platform, so a failure can be replayed from its seed.
 * ----------------------------------------------------------------
 */
typedef struct rng
{
	uint64_t	state;
} rng;

static uint64_t
rng_next(rng *r)
{
	uint64_t	z = (r->state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static uint64_t
rng_below(rng *r, uint64_t n)
{
	return (uint64_t) (((unsigned __int128) rng_next(r) * n) >> 64);
}

/* Uniform in [lo, hi], hi - lo < 2^63. */
static int64_t
rng_range(rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t) rng_below(r, (uint64_t) (hi - lo) + 1);
}

static int64_t
clamp_time(__int128 t)
{
	if (t < INT64_MIN)
		return INT64_MIN;
	if (t > INT64_MAX)
		return INT64_MAX;
	return (int64_t) t;
}

/* ----------------------------------------------------------------
 * Counting allocator: checks every free and realloc against the size the
 * block was allocated with, and counts what is still held.
 * ----------------------------------------------------------------
 */
#define BLOCK_MAGIC 0x5741424c4f434bULL
#define BLOCK_HDR 16			/* keeps the user pointer 16-byte aligned */

typedef struct counting_alloc
{
	int64_t		live_bytes;
	int64_t		live_blocks;
	int64_t		peak_bytes;
	int64_t		n_allocs;
	int64_t		errors;
	char		first_error[256];
} counting_alloc;

typedef struct block_hdr
{
	uint64_t	size;
	uint64_t	magic;
} block_hdr;

static void
ca_error(counting_alloc *ca, const char *msg, size_t a, size_t b)
{
	if (ca->errors++ == 0)
		snprintf(ca->first_error, sizeof(ca->first_error), "%s (%zu vs %zu)",
				 msg, a, b);
}

static void *
ca_alloc(void *arg, size_t size)
{
	counting_alloc *ca = arg;
	block_hdr  *h = malloc(BLOCK_HDR + size);

	if (h == NULL)
	{
		fprintf(stderr, "test: out of memory\n");
		abort();
	}
	h->size = size;
	h->magic = BLOCK_MAGIC;
	ca->live_bytes += (int64_t) size;
	ca->live_blocks++;
	ca->n_allocs++;
	if (ca->live_bytes > ca->peak_bytes)
		ca->peak_bytes = ca->live_bytes;
	return (char *) h + BLOCK_HDR;
}

static void
ca_free(void *arg, void *ptr, size_t size)
{
	counting_alloc *ca = arg;
	block_hdr  *h;

	if (ptr == NULL)
		return;
	h = (block_hdr *) ((char *) ptr - BLOCK_HDR);
	if (h->magic != BLOCK_MAGIC)
	{
		ca_error(ca, "free of a block not from this allocator (or freed twice)",
				 size, 0);
		return;
	}
	if (h->size != size)
		ca_error(ca, "free with a size other than the allocated one",
				 size, (size_t) h->size);
	ca->live_bytes -= (int64_t) h->size;
	ca->live_blocks--;
	h->magic = 0;
	free(h);
}

static void *
ca_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	counting_alloc *ca = arg;
	block_hdr  *h;

	if (ptr == NULL)
	{
		if (old_size != 0)
			ca_error(ca, "realloc of NULL with a nonzero old size",
					 old_size, 0);
		return ca_alloc(arg, new_size);
	}
	h = (block_hdr *) ((char *) ptr - BLOCK_HDR);
	if (h->magic != BLOCK_MAGIC)
	{
		ca_error(ca, "realloc of a block not from this allocator", old_size, 0);
		return NULL;
	}
	if (h->size != old_size)
		ca_error(ca, "realloc with an old size other than the allocated one",
				 old_size, (size_t) h->size);
	ca->live_bytes += (int64_t) new_size - (int64_t) h->size;
	if (ca->live_bytes > ca->peak_bytes)
		ca->peak_bytes = ca->live_bytes;
	h = realloc(h, BLOCK_HDR + new_size);
	if (h == NULL)
	{
		fprintf(stderr, "test: out of memory\n");
		abort();
	}
	h->size = new_size;
	return (char *) h + BLOCK_HDR;
}

static void
ca_setup(counting_alloc *ca, wa_allocator *al)
{
	memset(ca, 0, sizeof(counting_alloc));
	al->alloc = ca_alloc;
	al->realloc = ca_realloc;
	al->free = ca_free;
	al->arg = ca;
}

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

static uint64_t
hash_key(bool bytes, int64_t ival, const uint8_t *b, uint32_t len)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	if (!bytes)
		h ^= (uint64_t) ival;
	else
		for (uint32_t i = 0; i < len; i++)
			h = (h ^ b[i]) * 0x100000001b3ULL;
	h ^= h >> 31;
	h *= 0x9E3779B97F4A7C15ULL;
	h ^= h >> 29;
	return h;
}

static int
keytab_lookup(const keytab *kt, int64_t ival, const uint8_t *b, uint32_t len)
{
	uint64_t	s;

	if (kt->n_slots == 0)
		return -1;
	s = hash_key(kt->bytes, ival, b, len) & (kt->n_slots - 1);
	while (kt->slots[s] >= 0)
	{
		int			id = kt->slots[s];

		if (!kt->bytes && kt->ivals[id] == ival)
			return id;
		if (kt->bytes && kt->klens[id] == len &&
			(len == 0 || memcmp(kt->kbytes[id], b, len) == 0))
			return id;
		s = (s + 1) & (kt->n_slots - 1);
	}
	return -1;
}

static int
keytab_find(const keytab *kt, const wa_key *key)
{
	if (kt->bytes && key->len > 0 && key->bytes == NULL)
		return -1;
	return keytab_lookup(kt, key->ival, key->bytes, kt->bytes ? key->len : 0);
}

static void
keytab_insert_slot(keytab *kt, int id)
{
	uint64_t	s = hash_key(kt->bytes, kt->bytes ? 0 : kt->ivals[id],
							 kt->bytes ? kt->kbytes[id] : NULL,
							 kt->bytes ? kt->klens[id] : 0) & (kt->n_slots - 1);

	while (kt->slots[s] >= 0)
		s = (s + 1) & (kt->n_slots - 1);
	kt->slots[s] = id;
}

/* Add a key unless present; returns its id. */
static int
keytab_add(keytab *kt, int64_t ival, const uint8_t *b, uint32_t len)
{
	int			id = keytab_lookup(kt, ival, b, len);

	if (id >= 0)
		return id;
	if (kt->n == kt->cap)
	{
		kt->cap = kt->cap ? kt->cap * 2 : 64;
		kt->ivals = realloc(kt->ivals, sizeof(int64_t) * kt->cap);
		kt->kbytes = realloc(kt->kbytes, sizeof(uint8_t *) * kt->cap);
		kt->klens = realloc(kt->klens, sizeof(uint32_t) * kt->cap);
	}
	if ((uint64_t) (kt->n + 1) * 2 > kt->n_slots)
	{
		uint64_t	n = kt->n_slots ? kt->n_slots * 2 : 128;

		free(kt->slots);
		kt->slots = malloc(sizeof(int) * n);
		for (uint64_t i = 0; i < n; i++)
			kt->slots[i] = -1;
		kt->n_slots = n;
		for (int i = 0; i < kt->n; i++)
			keytab_insert_slot(kt, i);
	}
	id = kt->n++;
	kt->ivals[id] = kt->bytes ? 0 : ival;
	kt->klens[id] = kt->bytes ? len : 0;
	kt->kbytes[id] = NULL;
	if (kt->bytes)
	{
		kt->kbytes[id] = malloc(len ? len : 1);
		if (len > 0)
			memcpy(kt->kbytes[id], b, len);
	}
	keytab_insert_slot(kt, id);
	return id;
}

static void
keytab_free(keytab *kt)
{
	for (int i = 0; i < kt->n; i++)
		free(kt->kbytes[i]);
	free(kt->ivals);
	free(kt->kbytes);
	free(kt->klens);
	free(kt->slots);
	memset(kt, 0, sizeof(keytab));
}

/* ----------------------------------------------------------------
 * The aggregate list every test computes: three inputs (an int column with
 * NULLs and occasional int64 extremes, an int column with full-range values,
 * a float column with NULLs) and every kind of aggregate over them.
 * ----------------------------------------------------------------
 */
enum
{
	IN_A,
	IN_B,
	IN_F,
	N_INPUTS
};

static const wa_agg_spec test_aggs[] = {
	{WA_AGG_COUNT_STAR, IN_A},
	{WA_AGG_COUNT, IN_A},
	{WA_AGG_SUM_INT, IN_A},
	{WA_AGG_MIN_INT, IN_A},
	{WA_AGG_MAX_INT, IN_A},
	{WA_AGG_SUM_INT, IN_B},
	{WA_AGG_AVG_INT, IN_B},
	{WA_AGG_MIN_INT, IN_B},
	{WA_AGG_MAX_INT, IN_B},
	{WA_AGG_COUNT, IN_F},
	{WA_AGG_SUM_FLOAT, IN_F},
	{WA_AGG_MIN_FLOAT, IN_F},
	{WA_AGG_MAX_FLOAT, IN_F},
	{WA_AGG_AVG_FLOAT, IN_F},
	{WA_AGG_VAR_SAMP, IN_F},
	{WA_AGG_VAR_POP, IN_F},
	{WA_AGG_STDDEV_SAMP, IN_F},
	{WA_AGG_STDDEV_POP, IN_F},
};

#define N_AGGS ((int) (sizeof(test_aggs) / sizeof(test_aggs[0])))

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

static void
stream_init(stream *st, bool byte_keys)
{
	memset(st, 0, sizeof(stream));
	st->keys.bytes = byte_keys;
}

static void
stream_free(stream *st)
{
	free(st->ops);
	free(st->values);
	keytab_free(&st->keys);
	memset(st, 0, sizeof(stream));
}

static stream_op *
stream_push(stream *st)
{
	if (st->n_ops == st->cap)
	{
		st->cap = st->cap ? st->cap * 2 : 1024;
		st->ops = realloc(st->ops, sizeof(stream_op) * st->cap);
		st->values = realloc(st->values, sizeof(wa_value) * N_INPUTS * st->cap);
	}
	memset(&st->ops[st->n_ops], 0, sizeof(stream_op));
	memset(&st->values[st->n_ops * N_INPUTS], 0, sizeof(wa_value) * N_INPUTS);
	return &st->ops[st->n_ops++];
}

static void
stream_event(stream *st, int key, int64_t t, const wa_value *values)
{
	stream_op  *op = stream_push(st);

	op->is_event = true;
	op->key = key;
	op->time = t;
	memcpy(&st->values[(st->n_ops - 1) * N_INPUTS], values,
		   sizeof(wa_value) * N_INPUTS);
	st->n_events++;
}

static void
stream_advance(stream *st, wa_tick wm)
{
	stream_op  *op = stream_push(st);

	op->is_event = false;
	op->key = -1;
	op->advance_to = wm;
}

/* Random values for one event (see test_aggs for what each input is for). */
static void
random_values(rng *r, wa_value *v)
{
	static const int64_t extremes[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1,
	INT64_MAX - 1};

	memset(v, 0, sizeof(wa_value) * N_INPUTS);
	v[IN_A].isnull = rng_below(r, 10) == 0;
	if (rng_below(r, 100) == 0)
		v[IN_A].i = extremes[rng_below(r, 4)];
	else
		v[IN_A].i = rng_range(r, -1000, 1000);
	v[IN_B].isnull = false;
	if (rng_below(r, 20) == 0)
		v[IN_B].i = (int64_t) rng_next(r);
	else
		v[IN_B].i = rng_range(r, -1000000, 1000000);
	/* multiples of 1/1024, so that the reference can fold them exactly */
	v[IN_F].isnull = rng_below(r, 20) == 0;
	v[IN_F].f = (double) rng_range(r, -(1 << 20), 1 << 20) / 1024.0;
}

/* Int keys: the id's first few are the extremes, then random values. */
static void
make_int_keys(stream *st, rng *r, int n_keys)
{
	static const int64_t special[] = {INT64_MIN, INT64_MAX, 0, -1};

	for (int i = 0; i < n_keys; i++)
	{
		int64_t		v;

		do
		{
			v = i < 4 ? special[i] : (int64_t) rng_next(r);
		} while (i >= 4 && keytab_lookup(&st->keys, v, NULL, 0) >= 0);
		keytab_add(&st->keys, v, NULL, 0);
	}
}

/*
 * Byte keys: the empty string, a chain of prefixes of one string (so that
 * "ab" and "abc" must stay apart), then random strings with zero bytes.
 */
static void
make_byte_keys(stream *st, rng *r, int n_keys)
{
	uint8_t		base[40];
	uint8_t		buf[80];

	for (int i = 0; i < 40; i++)
		base[i] = (uint8_t) rng_below(r, 4);	/* many zero bytes */
	while (st->keys.n < n_keys)
	{
		int			i = st->keys.n;
		uint32_t	len;

		if (i == 0)
			len = 0;
		else if (i <= 40)
		{
			len = (uint32_t) i;
			memcpy(buf, base, len);
		}
		else
		{
			len = 1 + (uint32_t) rng_below(r, 79);
			for (uint32_t j = 0; j < len; j++)
				buf[j] = (uint8_t) rng_below(r, 256);
		}
		keytab_add(&st->keys, 0, buf, len);
	}
}

typedef struct gen_params
{
	uint64_t	seed;
	int64_t		n_events;
	int			n_keys;
	bool		byte_keys;
	bool		cycle_keys;		/* key i % n_keys instead of a random one */
	int64_t		t0;				/* base time of the first event */
	int64_t		span;			/* base time advances this much in all */
	int64_t		bound;
	int64_t		lateness;
	int64_t		size_max;		/* largest window size */
	int64_t		spike;			/* how far ahead a future event may be */
	int			advance_every;	/* idle-time advance every N events */
	int64_t		advance_ahead;	/* ... to base - bound + this */
} gen_params;

/*
 * A random out-of-order stream.  Base time rises steadily; each event's time
 * is the base minus a delay drawn from a mixture: mostly within the bound
 * (on time), some late by up to lateness + size past the watermark (late
 * for some windows and maybe partial), some past all lateness (dropped),
 * a few from the future (they push the watermark ahead in jumps), and a few
 * anywhere in a wide band.
 */
static void
generate(stream *st, const gen_params *g)
{
	rng			r = {g->seed};
	int64_t		b = g->bound;
	int64_t		l = g->lateness;
	int64_t		s = g->size_max;

	stream_init(st, g->byte_keys);
	if (g->byte_keys)
		make_byte_keys(st, &r, g->n_keys);
	else
		make_int_keys(st, &r, g->n_keys);

	for (int64_t i = 0; i < g->n_events; i++)
	{
		__int128	base = (__int128) g->t0 +
			(__int128) g->span * i / g->n_events;
		__int128	t;
		uint64_t	c = rng_below(&r, 1000);
		int			key;
		wa_value	v[N_INPUTS];

		if (c < 780)
			t = base - rng_range(&r, 0, b);
		else if (c < 930)
			t = base - b - rng_range(&r, 0, l + s);
		else if (c < 980)
			t = base - b - l - s - rng_range(&r, 0, 2 * s + l);
		else if (c < 990)
			t = base + rng_range(&r, 0, g->spike);
		else
			t = base - rng_range(&r, 0, 3 * (b + l + s));

		if (g->cycle_keys)
			key = (int) (i % g->n_keys);
		else if (rng_below(&r, 4) == 0)
		{
			/* a quarter of the events go to a few hot keys */
			key = (int) rng_below(&r, g->n_keys < 4 ? g->n_keys : 4);
		}
		else
			key = (int) rng_below(&r, g->n_keys);

		random_values(&r, v);
		stream_event(st, key, clamp_time(t), v);

		if (g->advance_every > 0 && (i + 1) % g->advance_every == 0)
			stream_advance(st, base - b + g->advance_ahead);
	}
}

/* ----------------------------------------------------------------
 * Running a stream through the engine and the reference.
 * ----------------------------------------------------------------
 */
typedef enum problem_kind
{
	P_OUTCOME,
	P_WM,
	P_PANE,
	P_SET,
	P_VALUE,
	P_REV,
	P_KIND,
	P_FIRE,
	P_LATE,
	P_STATS,
	P_MEM,
	P_COUNT
} problem_kind;

static const char *const problem_names[P_COUNT] = {
	"ingest results", "watermark", "panes well-formed", "window set",
	"final values", "revisions", "pane kinds", "on-time firing",
	"late panes", "stats", "memory released"
};

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

/* Per reference window: what the engine emitted for it so far. */
typedef struct wtrack
{
	int64_t		last_rev;
	int64_t		n_late_panes;
	int64_t		last_late_epoch;
	bool		last_matched;
	wa_result  *bad;			/* copy of the last pane if it mismatched */
} wtrack;

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
} run_opts;

typedef struct run_ctx
{
	const run_opts *opts;
	const stream *st;
	ref_model  *ref;
	wtrack	   *track;
	int64_t		phase;			/* 2*op: the op; 2*op+1: emit_late after it;
								 * 2*n_ops: the flush */
	int64_t		epoch;
	int64_t		n_on_time;
	int64_t		n_late;
	problem		probs[P_COUNT];
	logged_pane *log;
	int64_t		n_log;
	int64_t		cap_log;
} run_ctx;

static int64_t
opt_int(const char *name, int64_t dflt)
{
	const char *s = getenv(name);

	return (s && *s) ? strtoll(s, NULL, 10) : dflt;
}

/* Stream length for a test written for n events at full size. */
static int64_t
scaled(int64_t n)
{
	int64_t		events = opt_int("WA_TEST_EVENTS", 100000);
	int64_t		v = (int64_t) ((__int128) n * events / 100000);

	return v < 50 ? 50 : v;
}

static void
describe_window(char *buf, size_t len, const ref_window *rw)
{
	snprintf(buf, len, "key %d window %d [%s,%s)", rw->key, rw->spec,
			 i128s(rw->start), i128s(rw->end));
}

static bool
float_matches(double got, const ref_value *rv)
{
	double		diff;
	double		tol;

	if (isnan(got) || isinf(got))
		return false;
	diff = fabs((double) got - rv->f);
	tol = 1e-9 * fmax(fabs(rv->f), rv->scale);
	return diff <= tol;
}

/*
 * Compare an emitted pane's results with the reference's final value of the
 * window; on mismatch describe the first differing aggregate in buf.
 */
static bool
results_match(const ref_model *ref, const ref_window *rw,
			  const wa_result *res, char *buf, size_t len)
{
	for (int a = 0; a < N_AGGS; a++)
	{
		wa_agg_kind kind = test_aggs[a].kind;
		const wa_result *g = &res[a];
		ref_value	rv;
		bool		ok = true;

		ref_value_of(ref, rw, a, &rv);
		switch (kind)
		{
			case WA_AGG_COUNT_STAR:
			case WA_AGG_COUNT:
				ok = !g->isnull && g->count == rv.count;
				break;
			case WA_AGG_SUM_INT:
				ok = g->isnull == rv.isnull && (rv.isnull || g->sum == rv.sum);
				break;
			case WA_AGG_AVG_INT:
				ok = g->isnull == rv.isnull &&
					(rv.isnull || (g->sum == rv.sum && g->count == rv.count));
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				ok = g->isnull == rv.isnull && (rv.isnull || g->i == rv.i);
				break;
			default:
				ok = g->isnull == rv.isnull &&
					(rv.isnull || float_matches(g->f, &rv));
				break;
		}
		if (!ok)
		{
			if (buf != NULL)
				snprintf(buf, len,
						 "aggregate %d (%s): got null=%d count=%" PRId64
						 " i=%" PRId64 " sum=%s f=%.17g; want null=%d "
						 "count=%" PRId64 " i=%" PRId64 " sum=%s f=%.17g",
						 a, kind_name(kind), g->isnull, g->count, g->i,
						 i128s(g->sum), g->f, rv.isnull, rv.count, rv.i,
						 i128s(rv.sum), rv.f);
			return false;
		}
	}
	return true;
}

static void
collect_pane(void *arg, const wa_pane *pane)
{
	run_ctx    *c = arg;
	const run_opts *o = c->opts;
	const wa_window *spec;
	const ref_window *rw;
	wtrack	   *t;
	int64_t		w;
	int			key;
	wa_tick		rel;
	int64_t		flush_phase = 2 * ref_n_ops(c->ref);

	if (pane->kind == WA_PANE_ON_TIME)
		c->n_on_time++;
	else if (pane->kind == WA_PANE_LATE)
		c->n_late++;
	else
		NOTE(c, P_PANE, "pane of unknown kind %d", (int) pane->kind);

	key = keytab_find(&c->st->keys, &pane->key);
	if (key < 0)
	{
		NOTE(c, P_PANE, "pane for a key never ingested (ival %" PRId64
			 ", len %u)", pane->key.ival, pane->key.len);
		return;
	}
	if (pane->window < 0 || pane->window >= o->n_windows)
	{
		NOTE(c, P_PANE, "pane for window index %d", pane->window);
		return;
	}
	spec = &o->windows[pane->window];
	rel = pane->start - (wa_tick) spec->origin;
	if (pane->end - pane->start != spec->size || rel % spec->slide != 0)
		NOTE(c, P_PANE, "key %d window %d: pane [%s,%s) is not a window of "
			 "size %" PRId64 " slide %" PRId64 " origin %" PRId64,
			 key, pane->window, i128s(pane->start), i128s(pane->end),
			 spec->size, spec->slide, spec->origin);
	if (pane->results == NULL)
	{
		NOTE(c, P_PANE, "pane without results");
		return;
	}

	if (o->log_panes)
	{
		logged_pane *lp;

		if (c->n_log == c->cap_log)
		{
			c->cap_log = c->cap_log ? c->cap_log * 2 : 64;
			c->log = realloc(c->log, sizeof(logged_pane) * c->cap_log);
		}
		lp = &c->log[c->n_log++];
		lp->key = key;
		lp->window = pane->window;
		lp->start = pane->start;
		lp->end = pane->end;
		lp->kind = pane->kind;
		lp->revision = pane->revision;
		lp->phase = c->phase;
		memcpy(lp->results, pane->results, sizeof(wa_result) * N_AGGS);
	}

	w = ref_find(c->ref, key, pane->window, pane->start);
	if (w < 0)
	{
		NOTE(c, P_SET, "engine emitted key %d window %d [%s,%s), which "
			 "accepted no event (phase %" PRId64 ", revision %" PRId64 ")",
			 key, pane->window, i128s(pane->start), i128s(pane->end),
			 c->phase, pane->revision);
		return;
	}
	rw = ref_window_at(c->ref, w);
	t = &c->track[w];

	if (pane->revision != t->last_rev + 1)
		NOTE(c, P_REV, "key %d window %d [%s,%s): revision %" PRId64
			 " after %" PRId64 " (phase %" PRId64 ")", key, pane->window,
			 i128s(pane->start), i128s(pane->end), pane->revision,
			 t->last_rev, c->phase);

	if (t->last_rev == 0)
	{
		/*
		 * A window that had data before the watermark reached its end must
		 * fire on time, in the operation that moved the watermark there.
		 * A window whose first data came after the watermark passed its end
		 * counts as fired already (end <= watermark), so that data is a
		 * refinement: its first pane is LATE, from emit_late.
		 */
		if (rw->n_ontime == 0 && pane->kind != WA_PANE_LATE)
			NOTE(c, P_KIND, "key %d window %d [%s,%s): first data came late "
				 "but the first pane is ON_TIME", key, pane->window,
				 i128s(pane->start), i128s(pane->end));
		if (rw->n_ontime > 0)
		{
			int64_t		want = 2 * rw->fire_op;

			if (pane->kind != WA_PANE_ON_TIME)
				NOTE(c, P_KIND, "key %d window %d [%s,%s): first pane is LATE "
					 "though it had on-time data", key, pane->window,
					 i128s(pane->start), i128s(pane->end));
			if (c->phase != want)
				NOTE(c, P_FIRE, "key %d window %d [%s,%s): on-time pane in "
					 "phase %" PRId64 ", expected %" PRId64 " (op %" PRId64
					 ", watermark after it %s)", key, pane->window,
					 i128s(pane->start), i128s(pane->end), c->phase, want,
					 rw->fire_op,
					 rw->fire_op < ref_n_ops(c->ref) ?
					 i128s(ref_op_watermark(c->ref, rw->fire_op)) : "flush");
		}
	}
	else if (pane->kind != WA_PANE_LATE)
		NOTE(c, P_KIND, "key %d window %d [%s,%s): revision %" PRId64
			 " is not LATE", key, pane->window, i128s(pane->start),
			 i128s(pane->end), pane->revision);

	if (pane->kind == WA_PANE_LATE)
	{
		t->n_late_panes++;
		if (t->last_late_epoch == c->epoch)
			NOTE(c, P_LATE, "key %d window %d [%s,%s): two late panes in one "
				 "emission epoch (%" PRId64 ")", key, pane->window,
				 i128s(pane->start), i128s(pane->end), c->epoch);
		t->last_late_epoch = c->epoch;

		/*
		 * With emit_late after every event nothing stays dirty across
		 * operations, so a refinement can only come from emit_late.
		 */
		if (o->epoch == 0 && c->phase % 2 == 0 && c->phase != flush_phase)
			NOTE(c, P_LATE, "key %d window %d [%s,%s): late pane emitted "
				 "during op %" PRId64 ", not by emit_late", key, pane->window,
				 i128s(pane->start), i128s(pane->end), c->phase / 2);
	}
	t->last_rev = pane->revision;

	t->last_matched = results_match(c->ref, rw, pane->results, NULL, 0);
	if (t->last_matched)
	{
		free(t->bad);
		t->bad = NULL;
	}
	else
	{
		if (t->bad == NULL)
			t->bad = malloc(sizeof(wa_result) * N_AGGS);
		memcpy(t->bad, pane->results, sizeof(wa_result) * N_AGGS);
	}
}

typedef struct run_result
{
	bool		ran;
	logged_pane *log;
	int64_t		n_log;
	wa_ingest_result *outcomes;
	wa_stats	stats;
} run_result;

static void
run_result_free(run_result *rr)
{
	free(rr->log);
	free(rr->outcomes);
	memset(rr, 0, sizeof(run_result));
}

static void
report(const run_opts *o, run_ctx *c, problem_kind cat)
{
	char		name[256];

	snprintf(name, sizeof(name), "%s: %s", o->name, problem_names[cat]);
	if (c->probs[cat].count == 0)
		check(true, name, NULL);
	else
		check(false, name, "%" PRId64 " problem(s); first: %s",
			  c->probs[cat].count, c->probs[cat].first);
}

/*
 * Run a stream through the reference and the engine and compare.  Prints
 * one check per property; fills rr (if not NULL) for further assertions.
 */
static void
run_stream(const run_opts *o, const stream *st, run_result *rr)
{
	ref_config	rc;
	ref_model  *ref;
	run_ctx		c;
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_engine  *eng;
	const char *msg;
	int64_t		n_ops = st->n_ops;
	int64_t		events_seen = 0;
	int64_t		max_mem = 0;
	int64_t		n_wins;
	uint8_t    *scratch;
	wa_stats	stats;
	uint64_t	base_mem;
	char		mem_detail[200];
	bool		mem_ok;
	double		t_ref;
	double		t_start;
	double		t_engine;
	char		name[256];
	char		buf[200];

	if (rr != NULL)
		memset(rr, 0, sizeof(run_result));

	/* the reference first: it sees the stream exactly as the engine will */
	t_ref = now_seconds();
	rc.n_windows = o->n_windows;
	rc.windows = o->windows;
	rc.bound = o->bound;
	rc.lateness = o->lateness;
	rc.n_aggs = N_AGGS;
	rc.aggs = test_aggs;
	rc.n_inputs = N_INPUTS;
	ref = ref_create(&rc);
	for (int64_t i = 0; i < n_ops; i++)
	{
		if (st->ops[i].is_event)
			ref_add_event(ref, st->ops[i].key, st->ops[i].time,
						  &st->values[i * N_INPUTS]);
		else
			ref_add_advance(ref, st->ops[i].advance_to);
	}
	ref_run(ref);
	n_wins = ref_n_windows(ref);
	t_ref = now_seconds() - t_ref;

	/*
	 * At reduced sizes (valgrind) a stream may be too short to show every
	 * kind of event; the property is about the generator, so skip it then.
	 */
	if (o->expect_mix && opt_int("WA_TEST_EVENTS", 100000) >= 100000)
	{
		int64_t		n_late_windows = 0;
		bool		can_partial = o->n_windows > 1;

		/* only overlapping windows can disagree about one event */
		for (int j = 0; j < o->n_windows; j++)
			if (o->windows[j].size > o->windows[j].slide)
				can_partial = true;
		for (int64_t w = 0; w < n_wins; w++)
			if (ref_window_at(ref, w)->n_late > 0)
				n_late_windows++;
		snprintf(name, sizeof(name), "%s: stream has late,%s dropped events",
				 o->name, can_partial ? " partial and" : "");
		check(n_late_windows > 0 && ref_count_outcome(ref, REF_DROPPED) > 0 &&
			  (!can_partial || ref_count_outcome(ref, REF_PARTIAL) > 0), name,
			  "late windows %" PRId64 ", partial %" PRId64 ", dropped %" PRId64,
			  n_late_windows, ref_count_outcome(ref, REF_PARTIAL),
			  ref_count_outcome(ref, REF_DROPPED));
	}

	memset(&c, 0, sizeof(c));
	c.opts = o;
	c.st = st;
	c.ref = ref;
	c.track = calloc((size_t) (n_wins + 1), sizeof(wtrack));
	for (int64_t w = 0; w < n_wins; w++)
		c.track[w].last_late_epoch = -1;

	ca_setup(&ca, &al);
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = o->n_windows;
	cfg.windows = o->windows;
	cfg.bound = o->bound;
	cfg.lateness = o->lateness;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.byte_keys = st->keys.bytes;
	cfg.emit = collect_pane;
	cfg.emit_arg = &c;
	cfg.allocator = &al;
	cfg.merge_every_slice = o->merge_every_slice;

	snprintf(name, sizeof(name), "%s: config accepted", o->name);
	msg = wa_config_check(&cfg);
	check(msg == NULL, name, "%s", msg ? msg : "");
	if (msg != NULL)
	{
		free(c.track);
		ref_destroy(ref);
		return;
	}

	/*
	 * Byte keys are handed over in a scratch buffer that is overwritten
	 * right after each ingest: the engine must keep its own copy.
	 */
	scratch = malloc(256);
	if (rr != NULL)
		rr->outcomes = calloc((size_t) (n_ops + 1), sizeof(wa_ingest_result));

	t_start = now_seconds();
	eng = wa_engine_create(&cfg);
	wa_engine_get_stats(eng, &stats);
	base_mem = stats.mem_bytes;
	if (wa_engine_watermark(eng) != WA_TICK_MIN)
		NOTE(&c, P_WM, "watermark before any event is %s, not WA_TICK_MIN",
			 i128s(wa_engine_watermark(eng)));

	for (int64_t i = 0; i < n_ops; i++)
	{
		const stream_op *op = &st->ops[i];
		wa_tick		wm;

		c.phase = 2 * i;
		if (op->is_event)
		{
			wa_key		key;
			wa_ingest_result res;
			wa_ingest_result want;

			memset(&key, 0, sizeof(key));
			if (st->keys.bytes)
			{
				key.len = st->keys.klens[op->key];
				memcpy(scratch, st->keys.kbytes[op->key], key.len);
				key.bytes = scratch;
			}
			else
				key.ival = st->keys.ivals[op->key];

			res = wa_engine_ingest(eng, &key, op->time,
								   &st->values[i * N_INPUTS]);
			if (st->keys.bytes)
				memset(scratch, 0xA5, 256);
			if (rr != NULL)
				rr->outcomes[i] = res;

			switch (ref_op_outcome(ref, i))
			{
				case REF_ACCEPTED:
					want = WA_INGEST_ACCEPTED;
					break;
				case REF_PARTIAL:
					want = WA_INGEST_PARTIAL;
					break;
				default:
					want = WA_INGEST_DROPPED;
					break;
			}
			if (res != want)
				NOTE(&c, P_OUTCOME, "op %" PRId64 " (key %d, t=%" PRId64
					 "): engine %s, reference %s; watermark before it %s",
					 i, op->key, op->time, outcome_name(res),
					 outcome_name(want),
					 i > 0 ? i128s(ref_op_watermark(ref, i - 1)) : "-inf");
			events_seen++;
		}
		else
			wa_engine_advance(eng, op->advance_to);

		wm = wa_engine_watermark(eng);
		if (wm != ref_op_watermark(ref, i) &&
			!(ref_op_watermark(ref, i) == REF_NEG_INF && wm == WA_TICK_MIN))
			NOTE(&c, P_WM, "after op %" PRId64 ": engine %s, reference %s", i,
				 i128s(wm), i128s(ref_op_watermark(ref, i)));

		if (i % 4096 == 0)
		{
			wa_engine_get_stats(eng, &stats);
			if ((int64_t) stats.mem_bytes > max_mem)
				max_mem = (int64_t) stats.mem_bytes;
			if ((int64_t) stats.mem_bytes > ca.live_bytes)
				NOTE(&c, P_STATS, "after op %" PRId64 ": mem_bytes %" PRIu64
					 " but the allocator has only %" PRId64 " live", i,
					 stats.mem_bytes, ca.live_bytes);
		}

		if (o->epoch == 0 || (op->is_event && events_seen % o->epoch == 0))
		{
			c.phase = 2 * i + 1;
			wa_engine_emit_late(eng);
			c.epoch++;
		}
	}

	c.phase = 2 * n_ops;
	c.epoch++;
	wa_engine_flush(eng);
	t_engine = now_seconds() - t_start;

	/* what the engine must have done, window by window */
	for (int64_t w = 0; w < n_wins; w++)
	{
		const ref_window *rw = ref_window_at(ref, w);
		wtrack	   *t = &c.track[w];
		int64_t		want_revs = (rw->n_ontime > 0 ? 1 : 0) + rw->n_late;

		describe_window(buf, sizeof(buf), rw);
		if (t->last_rev == 0)
		{
			NOTE(&c, P_SET, "%s accepted %" PRId64 " event(s) but was never "
				 "emitted", buf, rw->count_star);
			continue;
		}
		if (!t->last_matched)
		{
			char		detail[500];

			if (t->bad != NULL)
				results_match(ref, rw, t->bad, detail, sizeof(detail));
			else
				snprintf(detail, sizeof(detail), "?");
			NOTE(&c, P_VALUE, "%s (revision %" PRId64 "): %s", buf,
				 t->last_rev, detail);
		}
		if (o->epoch == 0)
		{
			/* one pane per firing plus one per late event, exactly */
			if (t->last_rev != want_revs)
				NOTE(&c, P_LATE, "%s: %" PRId64 " revision(s), expected %"
					 PRId64 " (%" PRId64 " on-time, %" PRId64 " late events)",
					 buf, t->last_rev, want_revs, rw->n_ontime, rw->n_late);
		}
		else
		{
			if (rw->n_late == 0 && t->n_late_panes > 0)
				NOTE(&c, P_LATE, "%s: late pane though no event came late",
					 buf);
			if (rw->n_late > 0 && t->n_late_panes == 0)
				NOTE(&c, P_LATE, "%s: %" PRId64 " late event(s) but no late "
					 "pane", buf, rw->n_late);
			if (t->last_rev > want_revs)
				NOTE(&c, P_LATE, "%s: %" PRId64 " revisions for %" PRId64
					 " changes", buf, t->last_rev, want_revs);
		}
		free(t->bad);
		t->bad = NULL;
	}

	/* statistics, and that a flushed engine holds nothing */
	wa_engine_get_stats(eng, &stats);
	if (stats.events_in != (uint64_t) st->n_events ||
		stats.events_partial != (uint64_t) ref_count_outcome(ref, REF_PARTIAL) ||
		stats.events_dropped != (uint64_t) ref_count_outcome(ref, REF_DROPPED))
		NOTE(&c, P_STATS, "events in/partial/dropped %" PRIu64 "/%" PRIu64
			 "/%" PRIu64 ", expected %" PRId64 "/%" PRId64 "/%" PRId64,
			 stats.events_in, stats.events_partial, stats.events_dropped,
			 st->n_events, ref_count_outcome(ref, REF_PARTIAL),
			 ref_count_outcome(ref, REF_DROPPED));
	if (stats.panes_on_time != (uint64_t) c.n_on_time ||
		stats.panes_late != (uint64_t) c.n_late)
		NOTE(&c, P_STATS, "panes on-time/late %" PRIu64 "/%" PRIu64
			 ", callback saw %" PRId64 "/%" PRId64, stats.panes_on_time,
			 stats.panes_late, c.n_on_time, c.n_late);
	if ((int64_t) stats.peak_mem_bytes < max_mem)
		NOTE(&c, P_STATS, "peak_mem_bytes %" PRIu64 " below an observed %"
			 PRId64, stats.peak_mem_bytes, max_mem);
	if (stats.n_slices != 0 || stats.n_keys != 0 || stats.n_late_windows != 0)
		NOTE(&c, P_MEM, "after flush: n_slices %" PRIu64 ", n_keys %" PRIu64
			 ", n_late_windows %" PRIu64, stats.n_slices, stats.n_keys,
			 stats.n_late_windows);

	/*
	 * After a flush the engine holds exactly what it held when created
	 * (wa_engine.h): mem_bytes is back to its creation value, and the
	 * allocator agrees that nothing more is held.
	 */
	mem_ok = stats.mem_bytes == base_mem &&
		ca.live_bytes == (int64_t) base_mem;
	snprintf(mem_detail, sizeof(mem_detail), "mem_bytes %" PRIu64 ", %" PRIu64
			 " when created; allocator holds %" PRId64 " bytes in %" PRId64
			 " blocks", stats.mem_bytes, base_mem, ca.live_bytes,
			 ca.live_blocks);

	/* every event after the flush is dropped, and emits nothing */
	if (st->n_events > 0)
	{
		static const int64_t times[] = {INT64_MIN, 0, INT64_MAX};
		int64_t		panes = c.n_on_time + c.n_late;
		wa_key		key;
		wa_value	v[N_INPUTS];

		memset(&key, 0, sizeof(key));
		memset(v, 0, sizeof(v));
		if (st->keys.bytes)
		{
			key.bytes = st->keys.kbytes[0];
			key.len = st->keys.klens[0];
		}
		else
			key.ival = st->keys.ivals[0];
		for (int i = 0; i < 3; i++)
		{
			wa_ingest_result res = wa_engine_ingest(eng, &key, times[i], v);

			if (res != WA_INGEST_DROPPED)
				NOTE(&c, P_OUTCOME, "event at %" PRId64 " after the flush: %s",
					 times[i], outcome_name(res));
		}
		wa_engine_emit_late(eng);
		wa_engine_flush(eng);
		if (c.n_on_time + c.n_late != panes)
			NOTE(&c, P_PANE, "%" PRId64 " pane(s) after the flush",
				 c.n_on_time + c.n_late - panes);
	}
	if (rr != NULL)
		rr->stats = stats;

	wa_engine_destroy(eng);
	if (ca.live_bytes != 0 || ca.live_blocks != 0 || ca.errors != 0)
		NOTE(&c, P_MEM, "after destroy the allocator holds %" PRId64
			 " bytes in %" PRId64 " blocks; %" PRId64 " misuse(s)%s%s",
			 ca.live_bytes, ca.live_blocks, ca.errors,
			 ca.errors ? ": " : "", ca.first_error);

	printf("# %s: %" PRId64 " events (%" PRId64 " partial, %" PRId64
		   " dropped), %" PRId64 " windows, %" PRId64 " on-time + %" PRId64
		   " late panes, peak %" PRIu64 " bytes; reference %.2fs, engine and"
		   " checks %.2fs\n",
		   o->name, st->n_events, ref_count_outcome(ref, REF_PARTIAL),
		   ref_count_outcome(ref, REF_DROPPED), n_wins, c.n_on_time, c.n_late,
		   stats.peak_mem_bytes, t_ref, t_engine);

	for (int p = 0; p < P_COUNT; p++)
		report(o, &c, (problem_kind) p);
	snprintf(name, sizeof(name), "%s: flush returns memory to its creation "
			 "size", o->name);
	check(mem_ok, name, "%s", mem_detail);

	if (rr != NULL)
	{
		rr->ran = true;
		rr->log = c.log;
		rr->n_log = c.n_log;
		c.log = NULL;
	}
	free(c.log);
	free(c.track);
	free(scratch);
	ref_destroy(ref);
}

/* ----------------------------------------------------------------
 * Differential tests on generated streams
 * ----------------------------------------------------------------
 */
typedef struct diff_case
{
	const char *name;
	int			n_windows;
	wa_window	windows[3];
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

static const diff_case diff_cases[] = {
	{"diff tumbling 10/10", 1, {{10, 10, 0}}, 5, 20, 50, 1000000, 4000, 101,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff hopping 60/10", 1, {{60, 10, 0}}, 30, 60, 20, 0, 20000, 102,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff sliding 60/1", 1, {{60, 1, 0}}, 10, 30, 8, 500, 20000, 103,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff tumbling 7/7 origin 3", 1, {{7, 7, 3}}, 3, 10, 100, 0, 2000, 104,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff hopping 1000/999 origin -17", 1, {{1000, 999, -17}}, 200, 1500, 10,
	0, 200000, 105, 0, 0, false, false, 100000, true, 0, 0},
	{"diff multi 10/10+60/10+30/15@5", MULTI3, 20, 40, 30, 0, 20000, 106,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff lateness 0 hopping 60/10", 1, {{60, 10, 0}}, 30, 0, 20, 0, 20000,
	107, 0, 0, false, false, 100000, false, 0, 0},
	{"epoch 1000 hopping 60/10", 1, {{60, 10, 0}}, 30, 60, 20, 0, 20000, 108,
	1000, 0, false, false, 100000, true, 0, 0},
	{"epoch 1000 multi", MULTI3, 20, 40, 30, 0, 20000, 109,
	1000, 0, false, false, 100000, true, 0, 0},
	{"epoch 1000 sliding 60/1", 1, {{60, 1, 0}}, 10, 30, 8, 0, 20000, 110,
	1000, 0, false, false, 100000, true, 0, 0},
	{"idle advances multi", MULTI3, 20, 40, 30, 0, 20000, 111,
	0, 777, false, false, 100000, true, 0, 0},
	{"negative times multi", 2, {{10, 10, 0}, {60, 10, -5}}, 20, 40, 20,
	-30000, 20000, 112, 0, 0, false, false, 100000, true, 0, 0},
	{"times near INT64_MIN", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MIN + 10, 5000, 113, 0, 0, false, false, 100000, true, 100, 0},
	{"times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 114, 0, 0, false, false, 100000, true, 100, 0},
	{"epoch 1000 times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 115, 1000, 0, false, false, 100000, true, 100, 0},
	{"one key multi", MULTI3, 20, 40, 1, 0, 20000, 116,
	0, 0, false, false, 100000, true, 0, 0},
	{"100000 distinct keys", 1, {{10, 10, 0}}, 5, 20, 100000, 0, 20000, 117,
	0, 0, false, true, 200000, true, 0, 0},
	{"byte keys multi", MULTI3, 20, 40, 200, 0, 20000, 118,
	0, 0, true, false, 100000, true, 0, 0},
	{"epoch 1000 byte keys", 1, {{60, 10, 0}}, 30, 60, 200, 0, 20000, 119,
	1000, 0, true, false, 100000, true, 0, 0},
	{"tumbling 1/1", 1, {{1, 1, 0}}, 2, 5, 20, 0, 20000, 120,
	0, 0, false, false, 100000, true, 0, 0},
	{"duplicate specs, origin INT64_MAX", 3,
	{{10, 10, 0}, {10, 10, 0}, {60, 10, INT64_MAX}}, 20, 40, 20, 0, 20000, 121,
	0, 0, false, false, 50000, true, 0, 0},
	{"idle advances far ahead", MULTI3, 20, 40, 30, 0, 20000, 122,
	0, 5000, false, false, 100000, true, 0, 300},
	{"times near INT64_MIN, slice width 10", 2, {{10, 10, 3}, {60, 10, 3}},
	20, 40, 10, INT64_MIN + 10, 5000, 123, 0, 0, false, false, 50000, true,
	100, 0},
	{"times near INT64_MAX, slice width 10", 2, {{10, 10, 3}, {60, 10, 3}},
	20, 40, 10, INT64_MAX - 5000, 5000, 124, 0, 0, false, false, 50000, true,
	100, 0},
};

static void
run_diff_case(const diff_case *dc)
{
	gen_params	g;
	run_opts	o;
	stream		st;

	memset(&g, 0, sizeof(g));
	g.seed = dc->seed;
	g.n_events = scaled(dc->n_events);
	g.n_keys = dc->n_keys;
	if (dc->cycle_keys)
	{
		/* keep two events per key at any size */
		g.n_keys = (int) (g.n_events / 2);
		if (g.n_keys < 1)
			g.n_keys = 1;
	}
	g.byte_keys = dc->byte_keys;
	g.cycle_keys = dc->cycle_keys;
	g.t0 = dc->t0;
	g.span = dc->span;
	g.bound = dc->bound;
	g.lateness = dc->lateness;
	g.size_max = 0;
	for (int i = 0; i < dc->n_windows; i++)
		if (dc->windows[i].size > g.size_max)
			g.size_max = dc->windows[i].size;
	g.spike = dc->spike > 0 ? dc->spike : 2 * g.size_max + g.bound;
	g.advance_every = dc->advance_every;
	g.advance_ahead = dc->advance_ahead > 0 ? dc->advance_ahead : 15;
	generate(&st, &g);

	memset(&o, 0, sizeof(o));
	o.name = dc->name;
	o.n_windows = dc->n_windows;
	o.windows = dc->windows;
	o.bound = dc->bound;
	o.lateness = dc->lateness;
	o.epoch = dc->epoch;
	o.expect_mix = dc->expect_mix;

	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, g.n_events, g.n_keys);
	run_stream(&o, &st, NULL);

	/*
	 * Windows that overlap themselves are emitted through the two-stack;
	 * the same stream must give the same panes when every window merges
	 * its slices from scratch.
	 */
	for (int i = 0; i < dc->n_windows; i++)
	{
		if (dc->windows[i].size / 4 >= dc->windows[i].slide)
		{
			char		name[160];

			snprintf(name, sizeof(name), "%s (merge every slice)", dc->name);
			o.name = name;
			o.merge_every_slice = true;
			run_stream(&o, &st, NULL);
			break;
		}
	}
	stream_free(&st);
}

/*
 * Bound and lateness of INT64_MAX with events at both ends of the time
 * range: every deadline computed from them lies outside int64.
 */
static void
test_huge_bound_lateness(int64_t lateness, const char *name, uint64_t seed)
{
	static const wa_window windows[] = {{10, 10, 0}, {7, 7, 1}, {1000, 999, 3}};
	rng			r = {seed};
	stream		st;
	run_opts	o;
	int64_t		n = scaled(20000);

	stream_init(&st, false);
	make_int_keys(&st, &r, 5);
	for (int64_t i = 0; i < n; i++)
	{
		wa_value	v[N_INPUTS];
		int64_t		t;

		if (rng_below(&r, 2) == 0)
			t = INT64_MIN + (int64_t) rng_below(&r, 3000);
		else
			t = INT64_MAX - (int64_t) rng_below(&r, 3000);
		random_values(&r, v);
		stream_event(&st, (int) rng_below(&r, 5), t, v);
	}
	memset(&o, 0, sizeof(o));
	o.name = name;
	o.n_windows = 3;
	o.windows = windows;
	o.bound = INT64_MAX;
	o.lateness = lateness;
	run_stream(&o, &st, NULL);
	stream_free(&st);
}

static const wa_window full_range_g1[] = {
	{(int64_t) 1 << 62, (int64_t) 1 << 62, 0},
	{(int64_t) 3 << 60, (int64_t) 1 << 60, 12345},
};
static const wa_window full_range_g60[] = {
	{(int64_t) 1 << 62, (int64_t) 1 << 62, 5},
	{(int64_t) 3 << 60, (int64_t) 1 << 60, ((int64_t) 1 << 60) + 5},
};

/*
 * Huge windows over the whole int64 time range: base time sweeps from
 * INT64_MIN to INT64_MAX and delays are up to 2^62 ticks.  Run with a slice
 * width of 1 (huge slice and window numbers) and of 2^60 with a grid offset
 * (window starts below INT64_MIN, slice numbers near the floor).
 */
static void
test_full_range(const wa_window *windows, const char *name, uint64_t seed)
{
	rng			r = {seed};
	stream		st;
	run_opts	o;
	int64_t		n = scaled(30000);

	stream_init(&st, false);
	make_int_keys(&st, &r, 7);
	for (int64_t i = 0; i < n; i++)
	{
		wa_value	v[N_INPUTS];
		__int128	base = (__int128) INT64_MIN +
			(__int128) UINT64_MAX * i / n;
		__int128	t;
		uint64_t	c = rng_below(&r, 10);

		if (c < 6)
			t = base - (int64_t) rng_below(&r, (uint64_t) 1 << 59);
		else if (c < 9)
			t = base - (int64_t) rng_below(&r, (uint64_t) 1 << 62);
		else
			t = base + (int64_t) rng_below(&r, (uint64_t) 1 << 60);
		random_values(&r, v);
		stream_event(&st, (int) rng_below(&r, 7), clamp_time(t), v);
	}
	memset(&o, 0, sizeof(o));
	o.name = name;
	o.n_windows = 2;
	o.windows = windows;
	o.bound = (int64_t) 1 << 58;
	o.lateness = (int64_t) 1 << 61;
	o.expect_mix = true;
	run_stream(&o, &st, NULL);
	stream_free(&st);
}

/* ----------------------------------------------------------------
 * Scripted tests
 * ----------------------------------------------------------------
 */
static void
push_event(stream *st, int64_t keyval, int64_t t, int64_t a, double f)
{
	wa_value	v[N_INPUTS];
	int			key = keytab_add(&st->keys, keyval, NULL, 0);

	memset(v, 0, sizeof(v));
	v[IN_A].i = a;
	v[IN_B].i = a;
	v[IN_F].f = f;
	stream_event(st, key, t, v);
}

static const logged_pane *
find_pane(const run_result *rr, int window, wa_tick start, int64_t revision)
{
	for (int64_t i = 0; i < rr->n_log; i++)
		if (rr->log[i].window == window && rr->log[i].start == start &&
			rr->log[i].revision == revision)
			return &rr->log[i];
	return NULL;
}

static int64_t
count_panes(const run_result *rr, int window, wa_tick start)
{
	int64_t		n = 0;

	for (int64_t i = 0; i < rr->n_log; i++)
		if (rr->log[i].window == window && rr->log[i].start == start)
			n++;
	return n;
}

/*
 * A late event within lateness refines an already-fired window: the engine
 * emits a LATE pane, revision 2, with the full new value, from emit_late.
 */
static void
test_late_within_lateness(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	stream		st;
	run_opts	o;
	run_result	rr;
	const logged_pane *p1;
	const logged_pane *p2;

	stream_init(&st, false);
	push_event(&st, 1, 5, 10, 0.5);		/* op 0: window [0,10) */
	push_event(&st, 1, 15, 20, 1.5);	/* op 1: wm 15, fires [0,10) */
	push_event(&st, 1, 7, 30, 2.5);		/* op 2: late, within lateness */

	memset(&o, 0, sizeof(o));
	o.name = "late within lateness";
	o.n_windows = 1;
	o.windows = win;
	o.bound = 0;
	o.lateness = 20;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		p1 = find_pane(&rr, 0, 0, 1);
		p2 = find_pane(&rr, 0, 0, 2);
		check(p1 != NULL && p1->kind == WA_PANE_ON_TIME && p1->phase == 2 &&
			  p1->results[AGG_COUNT_STAR].count == 1 &&
			  p1->results[AGG_SUM_A].sum == 10,
			  "late within lateness: on-time pane of [0,10) when wm reaches 15",
			  "pane %s", p1 ? "has wrong kind, phase or value" : "missing");
		check(rr.outcomes[2] == WA_INGEST_ACCEPTED,
			  "late within lateness: ingest says ACCEPTED", "got %s",
			  outcome_name(rr.outcomes[2]));
		check(p2 != NULL && p2->kind == WA_PANE_LATE && p2->phase == 5 &&
			  p2->results[AGG_COUNT_STAR].count == 2 &&
			  p2->results[AGG_SUM_A].sum == 40,
			  "late within lateness: LATE pane revision 2 with the full value",
			  "pane %s (kind %d phase %" PRId64 " count %" PRId64 ")",
			  p2 ? "wrong" : "missing", p2 ? (int) p2->kind : -1,
			  p2 ? p2->phase : -1,
			  p2 ? p2->results[AGG_COUNT_STAR].count : -1);
		check(count_panes(&rr, 0, 0) == 2,
			  "late within lateness: exactly two panes for [0,10)",
			  "%" PRId64 " panes", count_panes(&rr, 0, 0));
	}
	run_result_free(&rr);
	stream_free(&st);
}

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

static void
mini_emit(void *arg, const wa_pane *pane)
{
	mini	   *m = arg;

	m->n_panes++;
	m->last = *pane;
	memcpy(m->last_results, pane->results, sizeof(wa_result) * N_AGGS);
}

static void
mini_init(mini *m, const wa_window *windows, int n_windows, int64_t bound,
		  int64_t lateness)
{
	memset(m, 0, sizeof(mini));
	ca_setup(&m->ca, &m->al);
	m->cfg.n_windows = n_windows;
	m->cfg.windows = windows;
	m->cfg.bound = bound;
	m->cfg.lateness = lateness;
	m->cfg.n_aggs = N_AGGS;
	m->cfg.aggs = test_aggs;
	m->cfg.emit = mini_emit;
	m->cfg.emit_arg = m;
	m->cfg.allocator = &m->al;
	m->eng = wa_engine_create(&m->cfg);
}

static wa_ingest_result
mini_ingest(mini *m, int64_t key, int64_t t, int64_t a, double f)
{
	wa_key		k;
	wa_value	v[N_INPUTS];

	memset(&k, 0, sizeof(k));
	k.ival = key;
	memset(v, 0, sizeof(v));
	v[IN_A].i = a;
	v[IN_B].i = a;
	v[IN_F].f = f;
	return wa_engine_ingest(m->eng, &k, t, v);
}

static bool
mini_done(mini *m)
{
	wa_engine_destroy(m->eng);
	return m->ca.live_bytes == 0 && m->ca.live_blocks == 0 && m->ca.errors == 0;
}

/*
 * An event past allowed lateness is dropped and changes nothing: no pane,
 * no state, no watermark move; the windows' final values exclude it.
 */
static void
test_past_lateness(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_stats	before;
	wa_stats	after;
	wa_tick		wm_before;
	wa_ingest_result res;
	int64_t		panes_before;
	stream		st;
	run_opts	o;
	run_result	rr;
	const logged_pane *p;

	mini_init(&m, win, 1, 0, 20);
	mini_ingest(&m, 1, 5, 1, 0);
	mini_ingest(&m, 1, 15, 1, 0);
	mini_ingest(&m, 1, 7, 1, 0);
	wa_engine_emit_late(m.eng);
	mini_ingest(&m, 1, 40, 1, 0);	/* wm 40: [0,10) closes for good */
	wa_engine_emit_late(m.eng);

	wa_engine_get_stats(m.eng, &before);
	wm_before = wa_engine_watermark(m.eng);
	panes_before = m.n_panes;
	res = mini_ingest(&m, 1, 3, 1000, 0);
	wa_engine_emit_late(m.eng);
	wa_engine_get_stats(m.eng, &after);

	check(res == WA_INGEST_DROPPED, "past lateness: ingest says DROPPED",
		  "got %s", outcome_name(res));
	check(m.n_panes == panes_before, "past lateness: no pane emitted",
		  "%" PRId64 " pane(s)", m.n_panes - panes_before);
	check(after.n_slices == before.n_slices && after.n_keys == before.n_keys &&
		  after.mem_bytes == before.mem_bytes &&
		  after.n_late_windows == before.n_late_windows &&
		  wa_engine_watermark(m.eng) == wm_before,
		  "past lateness: state and watermark unchanged",
		  "slices %" PRIu64 "->%" PRIu64 ", keys %" PRIu64 "->%" PRIu64
		  ", mem %" PRIu64 "->%" PRIu64, before.n_slices, after.n_slices,
		  before.n_keys, after.n_keys, before.mem_bytes, after.mem_bytes);
	check(after.events_dropped == before.events_dropped + 1 &&
		  after.events_in == before.events_in + 1,
		  "past lateness: counted as dropped",
		  "events_dropped %" PRIu64 "->%" PRIu64, before.events_dropped,
		  after.events_dropped);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "past lateness: memory released", NULL);

	/* the same stream against the reference, to see the final values */
	stream_init(&st, false);
	push_event(&st, 1, 5, 1, 0);
	push_event(&st, 1, 15, 1, 0);
	push_event(&st, 1, 7, 1, 0);
	push_event(&st, 1, 40, 1, 0);
	push_event(&st, 1, 3, 1000, 0);
	memset(&o, 0, sizeof(o));
	o.name = "past lateness (differential)";
	o.n_windows = 1;
	o.windows = win;
	o.bound = 0;
	o.lateness = 20;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		p = find_pane(&rr, 0, 0, 2);
		check(rr.outcomes[4] == WA_INGEST_DROPPED && p != NULL &&
			  p->results[AGG_SUM_A].sum == 2 && count_panes(&rr, 0, 0) == 2,
			  "past lateness: [0,10) keeps value 2 in revision 2", NULL);
	}
	run_result_free(&rr);
	stream_free(&st);
}

/*
 * Lateness boundaries: a window accepts iff end + lateness > watermark, and
 * fires when the watermark equals its end.
 */
static void
test_boundaries(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_ingest_result r1;
	wa_ingest_result r2;
	int64_t		panes;

	mini_init(&m, win, 1, 0, 5);
	mini_ingest(&m, 1, 3, 1, 0);
	panes = m.n_panes;
	mini_ingest(&m, 1, 10, 1, 0);	/* wm == 10 == end of [0,10) */
	check(m.n_panes == panes + 1 && m.last.start == 0 &&
		  m.last.kind == WA_PANE_ON_TIME && m.last.revision == 1,
		  "boundary: window fires when the watermark equals its end",
		  "%" PRId64 " pane(s)", m.n_panes - panes);
	mini_ingest(&m, 1, 14, 1, 0);	/* wm 14 */
	r1 = mini_ingest(&m, 1, 9, 1, 0);	/* 10 + 5 > 14: accepted */
	wa_engine_emit_late(m.eng);
	check(r1 == WA_INGEST_ACCEPTED && m.last.start == 0 &&
		  m.last.kind == WA_PANE_LATE && m.last.revision == 2 &&
		  m.last_results[AGG_COUNT_STAR].count == 2,
		  "boundary: end + lateness = wm + 1 accepts", "got %s",
		  outcome_name(r1));
	mini_ingest(&m, 1, 15, 1, 0);	/* wm 15 */
	panes = m.n_panes;
	r2 = mini_ingest(&m, 1, 8, 1, 0);	/* 10 + 5 > 15 is false */
	wa_engine_emit_late(m.eng);
	check(r2 == WA_INGEST_DROPPED && m.n_panes == panes,
		  "boundary: end + lateness = wm drops", "got %s, %" PRId64 " panes",
		  outcome_name(r2), m.n_panes - panes);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "boundary: memory released", NULL);
}

/*
 * In a hopping spec an event can be too late for an older window and in
 * time for a newer one: PARTIAL, and only the newer window counts it.
 */
static void
test_partial(void)
{
	static const wa_window hop[] = {{20, 10, 0}};
	static const wa_window two[] = {{10, 10, 0}, {30, 30, 0}};
	stream		st;
	run_opts	o;
	run_result	rr;
	const logged_pane *p;

	stream_init(&st, false);
	push_event(&st, 1, 25, 1, 0);	/* op 0: wm 25 */
	push_event(&st, 1, 15, 2, 0);	/* op 1: [0,20) closed, [10,30) open */
	memset(&o, 0, sizeof(o));
	o.name = "partial hopping 20/10";
	o.n_windows = 1;
	o.windows = hop;
	o.bound = 0;
	o.lateness = 0;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		check(rr.outcomes[1] == WA_INGEST_PARTIAL,
			  "partial hopping 20/10: ingest says PARTIAL", "got %s",
			  outcome_name(rr.outcomes[1]));
		p = find_pane(&rr, 0, 10, 1);
		check(p != NULL && p->results[AGG_COUNT_STAR].count == 2 &&
			  count_panes(&rr, 0, 0) == 0,
			  "partial hopping 20/10: only [10,30) counts the event", NULL);
	}
	run_result_free(&rr);
	stream_free(&st);

	/* across specs: closed for the 10-tick window, open for the 30-tick one */
	stream_init(&st, false);
	push_event(&st, 7, 12, 1, 0);	/* op 0: wm 12 */
	push_event(&st, 7, 5, 1, 0);	/* op 1: [0,10) closed, [0,30) open */
	push_event(&st, 7, 31, 1, 0);	/* op 2: wm 31 fires [0,30) */
	memset(&o, 0, sizeof(o));
	o.name = "partial across specs";
	o.n_windows = 2;
	o.windows = two;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		p = find_pane(&rr, 1, 0, 1);
		check(rr.outcomes[1] == WA_INGEST_PARTIAL && p != NULL &&
			  p->results[AGG_COUNT_STAR].count == 2 && p->phase == 4,
			  "partial across specs: PARTIAL, [0,30) counts it", "got %s",
			  outcome_name(rr.outcomes[1]));
	}
	run_result_free(&rr);
	stream_free(&st);
}

/* A dirty window about to expire is emitted before its slices go. */
static void
test_late_at_expiry(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	int64_t		panes;

	mini_init(&m, win, 1, 0, 20);
	mini_ingest(&m, 1, 5, 1, 0);
	mini_ingest(&m, 1, 15, 1, 0);	/* fires [0,10) */
	mini_ingest(&m, 1, 7, 1, 0);	/* dirties it; no emit_late */
	panes = m.n_panes;
	mini_ingest(&m, 2, 100, 1, 0);	/* wm 100: [0,10) expires */
	check(m.n_panes > panes, "late at expiry: dirty window emitted on expiry",
		  "no pane during the ingest that expired it");
	if (m.n_panes > panes)
	{
		/* the expired window's pane may be followed by [10,20)'s */
		check(m.ca.errors == 0, "late at expiry: allocator used correctly",
			  "%s", m.ca.first_error);
	}
	wa_engine_emit_late(m.eng);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "late at expiry: memory released", NULL);

	/* the same through the differential runner, in epoch mode */
	{
		stream		st;
		run_opts	o;
		run_result	rr;
		const logged_pane *p;

		stream_init(&st, false);
		push_event(&st, 1, 5, 1, 0);
		push_event(&st, 1, 15, 1, 0);
		push_event(&st, 1, 7, 1, 0);
		push_event(&st, 2, 100, 1, 0);
		memset(&o, 0, sizeof(o));
		o.name = "late at expiry (differential, epoch 1000)";
		o.n_windows = 1;
		o.windows = win;
		o.lateness = 20;
		o.epoch = 1000;
		o.log_panes = true;
		run_stream(&o, &st, &rr);
		if (rr.ran)
		{
			p = find_pane(&rr, 0, 0, 2);
			check(p != NULL && p->kind == WA_PANE_LATE && p->phase == 6 &&
				  p->results[AGG_COUNT_STAR].count == 2,
				  "late at expiry: revision 2 emitted during the expiring ingest",
				  "%s", p ? "wrong phase, kind or value" : "missing");
		}
		run_result_free(&rr);
		stream_free(&st);
	}
}

/* Idle-time advances fire windows and make later events late. */
static void
test_advance(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_ingest_result r;
	int64_t		panes;

	mini_init(&m, win, 1, 0, 0);
	check(wa_engine_watermark(m.eng) == WA_TICK_MIN,
		  "advance: watermark starts at WA_TICK_MIN", "%s",
		  i128s(wa_engine_watermark(m.eng)));
	mini_ingest(&m, 1, 5, 1, 0);
	check(wa_engine_watermark(m.eng) == 5, "advance: watermark follows events",
		  "%s", i128s(wa_engine_watermark(m.eng)));
	panes = m.n_panes;
	wa_engine_advance(m.eng, 10);
	check(m.n_panes == panes + 1 && m.last.start == 0 &&
		  wa_engine_watermark(m.eng) == 10,
		  "advance: moving the watermark to 10 fires [0,10)",
		  "%" PRId64 " pane(s), wm %s", m.n_panes - panes,
		  i128s(wa_engine_watermark(m.eng)));
	wa_engine_advance(m.eng, 3);
	check(wa_engine_watermark(m.eng) == 10,
		  "advance: a watermark behind is a no-op", "%s",
		  i128s(wa_engine_watermark(m.eng)));
	r = mini_ingest(&m, 1, 7, 1, 0);
	check(r == WA_INGEST_DROPPED, "advance: later event for [0,10) dropped",
		  "got %s", outcome_name(r));
	wa_engine_advance(m.eng, WA_TICK_MAX);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "advance: memory released", NULL);
}

/*
 * Byte keys by hand: an empty key passed with no buffer at all (bytes NULL,
 * len 0) must be the same key as an empty key with a buffer, and distinct
 * from "\0"; under UBSan this also checks that no libc call gets the NULL.
 */
static void
test_byte_keys_empty(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	static const uint8_t zero[1] = {0};
	mini		m;
	wa_key		k;
	wa_value	v[N_INPUTS];
	wa_stats	s;

	memset(&m, 0, sizeof(m));
	ca_setup(&m.ca, &m.al);
	m.cfg.n_windows = 1;
	m.cfg.windows = win;
	m.cfg.n_aggs = N_AGGS;
	m.cfg.aggs = test_aggs;
	m.cfg.byte_keys = true;
	m.cfg.emit = mini_emit;
	m.cfg.emit_arg = &m;
	m.cfg.allocator = &m.al;
	m.eng = wa_engine_create(&m.cfg);
	memset(v, 0, sizeof(v));
	memset(&k, 0, sizeof(k));

	k.bytes = NULL;
	k.len = 0;
	wa_engine_ingest(m.eng, &k, 1, v);
	k.bytes = zero;
	k.len = 0;
	wa_engine_ingest(m.eng, &k, 2, v);
	k.bytes = NULL;
	wa_engine_ingest(m.eng, &k, 3, v);
	k.bytes = zero;
	k.len = 1;
	wa_engine_ingest(m.eng, &k, 4, v);
	wa_engine_get_stats(m.eng, &s);
	check(s.n_keys == 2, "byte keys: empty key with and without a buffer is "
		  "one key, \"\\0\" another", "%" PRIu64 " keys", s.n_keys);
	wa_engine_flush(m.eng);
	check(m.n_panes == 2, "byte keys: two panes for the two keys",
		  "%" PRId64 " panes", m.n_panes);
	check(mini_done(&m), "byte keys: memory released", NULL);
}

/*
 * Keys with nothing due are never visited: 1000 idle keys whose only window
 * fired early stay put while one busy key drives the watermark through
 * 2000 window ends.  A scan of every key at every advance would make
 * millions of visits; the heap makes about one per due deadline.
 */
static void
test_key_visits(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_stats	s;

	mini_init(&m, win, 1, 0, 1000000);
	for (int64_t k = 1; k <= 1000; k++)
		mini_ingest(&m, k, 5, 1, 0);
	for (int64_t t = 6; t < 20006; t++)
		mini_ingest(&m, 0, t, 1, 0);
	wa_engine_get_stats(m.eng, &s);
	printf("# key visits: %" PRIu64 "\n", s.key_visits);
	check(s.key_visits <= 4000 && m.n_panes == 1000 + 2000,
		  "key visits: idle keys are not visited on every advance",
		  "%" PRIu64 " key visits, %" PRId64 " panes", s.key_visits,
		  m.n_panes);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "key visits: memory released", NULL);
}

/* NaN sorts above every number in min/max, as in SQL. */
static void
test_nan(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;

	mini_init(&m, win, 1, 0, 0);
	mini_ingest(&m, 1, 1, 0, 2.5);
	mini_ingest(&m, 1, 2, 0, NAN);
	mini_ingest(&m, 1, 3, 0, -1.0);
	wa_engine_flush(m.eng);
	check(m.n_panes == 1 && isnan(m.last_results[AGG_MAX_F].f) &&
		  m.last_results[AGG_MIN_F].f == -1.0,
		  "nan: max is NaN, min ignores it",
		  "min %g max %g", m.last_results[AGG_MIN_F].f,
		  m.last_results[AGG_MAX_F].f);
	check(mini_done(&m), "nan: memory released", NULL);
}

static void
test_empty(void)
{
	static const wa_window win[] = {{10, 10, 0}, {60, 10, 0}};
	mini		m;
	wa_stats	s;
	wa_config	cfg;
	wa_engine  *eng;

	mini_init(&m, win, 2, 5, 5);
	wa_engine_emit_late(m.eng);
	wa_engine_flush(m.eng);
	wa_engine_get_stats(m.eng, &s);
	check(m.n_panes == 0, "empty input: flush emits nothing", "%" PRId64
		  " pane(s)", m.n_panes);
	check(s.events_in == 0 && s.panes_on_time == 0 && s.panes_late == 0 &&
		  s.n_keys == 0 && s.n_slices == 0 && s.n_late_windows == 0,
		  "empty input: stats are zero after flush",
		  "keys %" PRIu64 " slices %" PRIu64, s.n_keys, s.n_slices);
	check(s.mem_bytes == (uint64_t) m.ca.live_bytes,
		  "empty input: mem_bytes is what the allocator holds",
		  "mem_bytes %" PRIu64 ", allocator %" PRId64, s.mem_bytes,
		  m.ca.live_bytes);
	check(mini_done(&m), "empty input: memory released", NULL);

	/* and with the default allocator, create/flush/destroy with no events */
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 1;
	cfg.windows = win;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.emit = mini_emit;
	cfg.emit_arg = &m;
	m.n_panes = 0;
	eng = wa_engine_create(&cfg);
	wa_engine_flush(eng);
	wa_engine_destroy(eng);
	check(m.n_panes == 0, "empty input: default allocator, nothing emitted",
		  NULL);
}

/* The default allocator carries a real stream too. */
static void
test_default_allocator(void)
{
	static const wa_window win[] = {{60, 10, 0}};
	wa_config	cfg;
	wa_engine  *eng;
	mini		m;
	rng			r = {77};
	int64_t		n = scaled(5000);

	memset(&m, 0, sizeof(m));
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 1;
	cfg.windows = win;
	cfg.bound = 5;
	cfg.lateness = 30;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.emit = mini_emit;
	cfg.emit_arg = &m;
	eng = wa_engine_create(&cfg);
	for (int64_t i = 0; i < n; i++)
	{
		wa_key		k = {(int64_t) rng_below(&r, 10), NULL, 0};
		wa_value	v[N_INPUTS];

		random_values(&r, v);
		wa_engine_ingest(eng, &k, i - (int64_t) rng_below(&r, 40), v);
		wa_engine_emit_late(eng);
	}
	wa_engine_flush(eng);
	wa_engine_destroy(eng);
	check(m.n_panes > 0, "default allocator: stream runs", NULL);
}

static void
expect_reject(const char *name, const wa_config *cfg, const char *field1,
			  const char *field2)
{
	const char *msg = wa_config_check(cfg);
	char		full[256];
	bool		named;

	snprintf(full, sizeof(full), "config check rejects %s", name);
	named = msg != NULL && (strstr(msg, field1) != NULL ||
							(field2 != NULL && strstr(msg, field2) != NULL));
	if (msg == NULL)
		check(false, full, "accepted");
	else
		check(named, full, "message \"%s\" does not name %s", msg, field1);
}

static void
test_config_check(void)
{
	wa_window	w[2] = {{10, 10, 0}, {60, 10, 0}};
	wa_agg_spec aggs[N_AGGS];
	wa_config	base;
	wa_config	c;
	const char *msg;

	memcpy(aggs, test_aggs, sizeof(aggs));
	memset(&base, 0, sizeof(base));
	base.n_windows = 2;
	base.windows = w;
	base.bound = 5;
	base.lateness = 10;
	base.n_aggs = N_AGGS;
	base.aggs = aggs;
	base.emit = mini_emit;

	msg = wa_config_check(&base);
	check(msg == NULL, "config check accepts a valid config", "%s", msg);

#define WITH_WINDOW(idx, sz, sl, name, f1, f2) \
	do { \
		wa_window saved = w[idx]; \
		w[idx].size = (sz); \
		w[idx].slide = (sl); \
		expect_reject(name, &base, f1, f2); \
		w[idx] = saved; \
	} while (0)

	WITH_WINDOW(0, 0, 10, "size 0", "size", NULL);
	WITH_WINDOW(0, -10, 10, "negative size", "size", NULL);
	WITH_WINDOW(0, 10, 0, "slide 0", "slide", NULL);
	WITH_WINDOW(0, 10, -5, "negative slide", "slide", NULL);
	WITH_WINDOW(0, 5, 10, "size < slide", "size", "slide");
	WITH_WINDOW(1, 60, 0, "slide 0 in the second window", "slide", NULL);
	WITH_WINDOW(1, 5, 10, "size < slide in the second window", "size", "slide");
#undef WITH_WINDOW

	c = base;
	c.bound = -1;
	expect_reject("negative bound", &c, "bound", NULL);
	c = base;
	c.lateness = -1;
	expect_reject("negative lateness", &c, "lateness", NULL);
	c = base;
	c.n_windows = 0;
	expect_reject("n_windows 0", &c, "window", NULL);
	c = base;
	c.n_windows = -1;
	expect_reject("negative n_windows", &c, "window", NULL);

	aggs[AGG_SUM_A].input = -1;
	expect_reject("negative agg input index", &base, "input", NULL);
	aggs[AGG_SUM_A].input = test_aggs[AGG_SUM_A].input;

	/* count(*) reads no input, so its input field means nothing */
	aggs[AGG_COUNT_STAR].input = -1;
	msg = wa_config_check(&base);
	check(msg == NULL, "config check ignores the input of count(*)", "%s", msg);
	aggs[AGG_COUNT_STAR].input = test_aggs[AGG_COUNT_STAR].input;

	/* size need not be a multiple of slide: slices use the gcd */
	w[0].size = 1000;
	w[0].slide = 999;
	msg = wa_config_check(&base);
	check(msg == NULL, "config check accepts size 1000 slide 999", "%s", msg);
	w[0].size = (int64_t) 1 << 62;
	w[0].slide = (int64_t) 1 << 62;
	w[0].origin = INT64_MIN;
	c = base;
	c.n_windows = 1;
	c.bound = INT64_MAX;
	c.lateness = INT64_MAX;
	msg = wa_config_check(&c);
	check(msg == NULL, "config check accepts int64 extremes", "%s", msg);
}

/* The slice width is the gcd of every size, slide and origin difference. */
static void
test_slice_width(void)
{
	static const struct
	{
		int			n;
		wa_window	w[3];
		int64_t		g;
	}			cases[] = {
		{1, {{10, 10, 0}}, 10},
		{1, {{60, 10, 0}}, 10},
		{1, {{60, 1, 0}}, 1},
		{1, {{7, 7, 3}}, 7},
		{1, {{1000, 999, -17}}, 1},
		{3, {{10, 10, 0}, {60, 10, 0}, {30, 15, 5}}, 5},
		{2, {{10, 10, 0}, {10, 10, 4}}, 2},
		{2, {{60, 20, 0}, {40, 40, 0}}, 20},
		{2, {{(int64_t) 1 << 62, (int64_t) 1 << 62, 5},
		{(int64_t) 3 << 60, (int64_t) 1 << 60, ((int64_t) 1 << 60) + 5}},
		(int64_t) 1 << 60},
		{2, {{10, 10, INT64_MIN}, {10, 10, INT64_MAX}}, 5},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		mini		m;
		int64_t		g;
		char		name[128];

		mini_init(&m, cases[i].w, cases[i].n, 0, 0);
		g = wa_engine_slice_width(m.eng);
		snprintf(name, sizeof(name), "slice width case %zu is %" PRId64, i,
				 cases[i].g);
		check(g == cases[i].g, name, "got %" PRId64, g);
		wa_engine_flush(m.eng);
		mini_done(&m);
	}
}

int
main(int argc, char **argv)
{
	double		t0 = now_seconds();
	const char *only = argc > 1 ? argv[1] : NULL;

	if (only == NULL || strcmp(only, "unit") == 0)
	{
		test_config_check();
		test_slice_width();
		test_empty();
		test_default_allocator();
		test_late_within_lateness();
		test_past_lateness();
		test_boundaries();
		test_partial();
		test_late_at_expiry();
		test_advance();
		test_nan();
		test_byte_keys_empty();
		test_key_visits();
		test_planner(check);
	}
	if (only == NULL || strcmp(only, "diff") == 0)
	{
		for (size_t i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++)
			run_diff_case(&diff_cases[i]);
		test_huge_bound_lateness(INT64_MAX,
								 "bound and lateness INT64_MAX", 201);
		test_huge_bound_lateness(INT64_MAX - 100,
								 "bound INT64_MAX, lateness INT64_MAX-100", 202);
		test_full_range(full_range_g1, "full int64 range, slice width 1", 203);
		test_full_range(full_range_g60, "full int64 range, slice width 2^60",
						204);
	}
	else if (only != NULL && strcmp(only, "unit") != 0)
	{
		/* a single differential case by (prefix of its) name */
		for (size_t i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++)
			if (strncmp(diff_cases[i].name, only, strlen(only)) == 0)
				run_diff_case(&diff_cases[i]);
	}

	printf("# total %.1fs\n", now_seconds() - t0);
	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed > 0 ? 1 : 0;
}
