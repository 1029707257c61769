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
 * check wa_config_check and the slice width.  The engine is built with its
 * assertions on (wa_assert.h), and a unit test makes sure of it.
 *
 * The checkpoint tests ("ckpt" cases, in the diff group) run engines in
 * lockstep over the same streams: one that takes checkpoints and live views
 * against one that does not, and engines restored from its checkpoints
 * against both (see the section that implements them).
 *
 * Output: one line per check, "ok - name" or "not ok - name: detail", lines
 * starting with "#" for information, and a last line "N passed, N failed".
 * The exit status is nonzero if any check failed.
 *
 * Usage: test_engine [unit | diff | <prefix of a differential case name>];
 * "ckpt" runs every checkpoint case, "ckpt extremes" those at the int64
 * limits.
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
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"
#include "wa_engine.h"
#include "wa_mem.h"

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
	bool		share_windows;	/* engine runs the window coverage plan */
	const wa_agg_spec *aggs;	/* NULL: test_aggs */
	int			n_aggs;
} run_opts;

typedef struct run_ctx
{
	const run_opts *opts;
	const wa_agg_spec *aggs;	/* the run's aggregate list */
	int			n_aggs;
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
			  const wa_agg_spec *aggs, int n_aggs,
			  const wa_result *res, char *buf, size_t len)
{
	for (int a = 0; a < n_aggs; a++)
	{
		wa_agg_kind kind = aggs[a].kind;
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
		memcpy(lp->results, pane->results, sizeof(wa_result) * c->n_aggs);
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

	t->last_matched = results_match(c->ref, rw, c->aggs, c->n_aggs,
									pane->results, NULL, 0);
	if (t->last_matched)
	{
		free(t->bad);
		t->bad = NULL;
	}
	else
	{
		if (t->bad == NULL)
			t->bad = malloc(sizeof(wa_result) * N_AGGS);
		memcpy(t->bad, pane->results, sizeof(wa_result) * c->n_aggs);
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
	rc.n_aggs = o->aggs != NULL ? o->n_aggs : N_AGGS;
	rc.aggs = o->aggs != NULL ? o->aggs : test_aggs;
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
	c.aggs = rc.aggs;
	c.n_aggs = rc.n_aggs;
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
	cfg.n_aggs = rc.n_aggs;
	cfg.aggs = rc.aggs;
	cfg.byte_keys = st->keys.bytes;
	cfg.emit = collect_pane;
	cfg.emit_arg = &c;
	cfg.allocator = &al;
	cfg.merge_every_slice = o->merge_every_slice;
	cfg.share_windows = o->share_windows;

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
				results_match(ref, rw, c.aggs, c.n_aggs, t->bad, detail,
							  sizeof(detail));
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

/* Generate a case's stream (scaled); returns the number of keys. */
static int
diff_case_stream(const diff_case *dc, stream *st)
{
	gen_params	g;

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
	generate(st, &g);
	return g.n_keys;
}

static void
run_diff_case(const diff_case *dc)
{
	run_opts	o;
	stream		st;
	int			n_keys = diff_case_stream(dc, &st);

	memset(&o, 0, sizeof(o));
	o.name = dc->name;
	o.n_windows = dc->n_windows;
	o.windows = dc->windows;
	o.bound = dc->bound;
	o.lateness = dc->lateness;
	o.epoch = dc->epoch;
	o.expect_mix = dc->expect_mix;

	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, st.n_events, n_keys);
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

	/* several windows: the same panes when the coverage plan runs */
	if (dc->n_windows > 1)
	{
		char		name[160];

		snprintf(name, sizeof(name), "%s (shared windows)", dc->name);
		o.name = name;
		o.merge_every_slice = false;
		o.share_windows = true;
		run_stream(&o, &st, NULL);
	}
	stream_free(&st);
}

/* min and max only: the coverage plan may merge overlapping parents */
static const wa_agg_spec minmax_aggs[] = {
	{WA_AGG_MIN_INT, IN_A},
	{WA_AGG_MAX_INT, IN_A},
	{WA_AGG_MIN_FLOAT, IN_F},
	{WA_AGG_MAX_FLOAT, IN_F},
};

/*
 * Run one window set with shared windows against the reference, for every
 * aggregate (partitioned-by) and for min and max alone (covered-by), and
 * also without sharing; returns the merge counts through merges[4]
 * (partitioned shared, unshared, covered shared, unshared).
 */
static void
run_shared_set(const diff_case *dc, uint64_t merges[4])
{
	stream		st;
	int			n_keys = diff_case_stream(dc, &st);

	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, st.n_events, n_keys);
	for (int run = 0; run < 4; run++)
	{
		run_opts	o;
		run_result	rr;
		char		name[200];
		bool		minmax = run >= 2;
		bool		shared = run % 2 == 0;

		memset(&o, 0, sizeof(o));
		snprintf(name, sizeof(name), "%s (%s, %s)", dc->name,
				 minmax ? "min/max" : "all aggregates",
				 shared ? "shared windows" : "slices only");
		o.name = name;
		o.n_windows = dc->n_windows;
		o.windows = dc->windows;
		o.bound = dc->bound;
		o.lateness = dc->lateness;
		o.epoch = dc->epoch;
		o.share_windows = shared;
		if (minmax)
		{
			o.aggs = minmax_aggs;
			o.n_aggs = (int) (sizeof(minmax_aggs) / sizeof(minmax_aggs[0]));
		}
		run_stream(&o, &st, &rr);
		merges[run] = rr.ran ? rr.stats.merges : 0;
		run_result_free(&rr);
	}
	stream_free(&st);
}

/*
 * The paper's query (tumbling 10, 20, 30, 40) and random window sets:
 * slides of 1 to 10 units, ranges of 1 to 10 slides, a common origin, so
 * that windows can feed each other.  Every pane, on time and late, must
 * equal the brute-force reference with and without sharing; on the
 * paper's query sharing must also save merges.
 */
static void
test_shared_windows(void)
{
	diff_case	dc;
	uint64_t	merges[4];
	rng			r = {UINT64_C(0x5eed0f5a7ed)};

	memset(&dc, 0, sizeof(dc));
	dc.name = "shared tumbling 10/20/30/40";
	dc.n_windows = 4;
	for (int i = 0; i < 4; i++)
		dc.windows[i] = (wa_window) {10 * (i + 1), 10 * (i + 1), 0};
	dc.bound = 15;
	dc.lateness = 40;
	dc.n_keys = 20;
	dc.span = 20000;
	dc.seed = 401;
	dc.n_events = 60000;
	run_shared_set(&dc, merges);
	check(merges[0] < merges[1] && merges[2] < merges[3],
		  "shared tumbling 10/20/30/40: sharing saves merges",
		  "all aggregates %" PRIu64 " vs %" PRIu64 ", min/max %" PRIu64
		  " vs %" PRIu64, merges[0], merges[1], merges[2], merges[3]);

	for (int set = 0; set < 8; set++)
	{
		char		name[64];
		int64_t		unit = 1 + (int64_t) rng_below(&r, 3);

		snprintf(name, sizeof(name), "shared random set %d", set);
		memset(&dc, 0, sizeof(dc));
		dc.name = name;
		dc.n_windows = 3 + (int) rng_below(&r, 3);
		for (int i = 0; i < dc.n_windows; i++)
		{
			int64_t		slide = unit * (1 + (int64_t) rng_below(&r, 10));
			int64_t		range = slide * (1 + (int64_t) rng_below(&r, 10));

			dc.windows[i] = (wa_window) {range, slide, set % 2 == 0 ? 0 : 7};
		}
		dc.bound = 10 + (int64_t) rng_below(&r, 20);
		dc.lateness = (int64_t) rng_below(&r, 60);
		dc.n_keys = 1 + (int) rng_below(&r, 30);
		dc.t0 = set == 5 ? INT64_MAX - 30000 : (set == 6 ? INT64_MIN + 10 : 0);
		dc.span = 20000;
		dc.seed = 410 + (uint64_t) set;
		dc.epoch = set % 3 == 0 ? 1000 : 0;
		dc.n_events = 30000;
		run_shared_set(&dc, merges);
	}
}

/*
 * Bound and lateness of INT64_MAX with events at both ends of the time
 * range: every deadline computed from them lies outside int64.
 */
static void
make_huge_stream(stream *st, int64_t n, uint64_t seed)
{
	rng			r = {seed};

	stream_init(st, false);
	make_int_keys(st, &r, 5);
	for (int64_t i = 0; i < n; i++)
	{
		wa_value	v[N_INPUTS];
		int64_t		t;

		if (rng_below(&r, 2) == 0)
			t = INT64_MIN + (int64_t) rng_below(&r, 3000);
		else
			t = INT64_MAX - (int64_t) rng_below(&r, 3000);
		random_values(&r, v);
		stream_event(st, (int) rng_below(&r, 5), t, v);
	}
}

static void
test_huge_bound_lateness(int64_t lateness, const char *name, uint64_t seed)
{
	static const wa_window windows[] = {{10, 10, 0}, {7, 7, 1}, {1000, 999, 3}};
	stream		st;
	run_opts	o;

	make_huge_stream(&st, scaled(20000), seed);
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
make_full_range_stream(stream *st, int64_t n, uint64_t seed)
{
	rng			r = {seed};

	stream_init(st, false);
	make_int_keys(st, &r, 7);
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
		stream_event(st, (int) rng_below(&r, 7), clamp_time(t), v);
	}
}

static void
test_full_range(const wa_window *windows, const char *name, uint64_t seed)
{
	stream		st;
	run_opts	o;

	make_full_range_stream(&st, scaled(30000), seed);
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
 * Late panes of a hopping window emitted through the two-stack: the cache
 * keeps the value of the last fired windows that may take late data, so a
 * late pane of one of them costs no merge; its value must still be the sum
 * over every event of the window, late ones included.  Window 60/10
 * (6 slices), bound 0, lateness 30: after events at 0..99 the watermark is
 * 99, [30, 90) is the last window fired and those ending at or before 69
 * are closed; a late event at 55 refines [10, 70), [20, 80) and [30, 90).
 */
static void
test_late_from_kept(void)
{
	static const wa_window win[] = {{60, 10, 0}};
	mini		m;
	wa_stats	before;
	wa_stats	after;
	int64_t		expect_sum = 1000;

	mini_init(&m, win, 1, 0, 30);
	for (int64_t t = 0; t < 100; t++)
		mini_ingest(&m, 1, t, t, 0.0);
	for (int64_t t = 10; t < 70; t++)
		expect_sum += t;
	mini_ingest(&m, 1, 55, 1000, 0.0);
	wa_engine_get_stats(m.eng, &before);
	m.n_panes = 0;
	wa_engine_emit_late(m.eng);
	wa_engine_get_stats(m.eng, &after);
	check(m.n_panes == 3 && after.merges == before.merges,
		  "late from kept: three late panes, no merge",
		  "%" PRId64 " panes, %" PRIu64 " merges", m.n_panes,
		  after.merges - before.merges);
	/* the walk marks the latest window first, so [10, 70) comes last */
	check(m.last.kind == WA_PANE_LATE && m.last.start == 10 &&
		  m.last_results[AGG_COUNT_STAR].count == 61 &&
		  m.last_results[AGG_SUM_A].sum == expect_sum,
		  "late from kept: window [10, 70) holds all 61 events",
		  "start %" PRId64 " count %" PRId64, (int64_t) m.last.start,
		  m.last_results[AGG_COUNT_STAR].count);
	check(mini_done(&m), "late from kept: memory released", "leak");
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

static void *
noop_alloc(void *arg, size_t size)
{
	(void) arg;
	(void) size;
	return NULL;
}

static void *
noop_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	(void) arg;
	(void) ptr;
	(void) old_size;
	(void) new_size;
	return NULL;
}

static void
noop_free(void *arg, void *ptr, size_t size)
{
	(void) arg;
	(void) ptr;
	(void) size;
}

/*
 * The engine's assertions are on in this build (test/engine/Makefile): in
 * a child process, accounting driven below zero must abort.  The allocator
 * does nothing, so that without assertions the child simply exits.
 */
static void
test_assertions_on(void)
{
	static const wa_allocator noop = {noop_alloc, noop_realloc, noop_free,
	NULL};
	pid_t		pid;
	int			status = 0;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
	{
		wa_mem		mem;
		char		block[16];

		/* the assertion's message is expected: keep it off the output */
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(2);
		wa_mem_init(&mem, &noop);
		wa_mem_free(&mem, block, sizeof(block));
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
	{
		check(false, "engine assertions are on", "fork or wait failed");
		return;
	}
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		  "engine assertions are on: accounting below zero aborts",
		  "child %s %d", WIFSIGNALED(status) ? "killed by signal" :
		  "exited with", WIFSIGNALED(status) ? WTERMSIG(status) :
		  WEXITSTATUS(status));
}

/*
 * The coverage plan's memory: wa_engine_plan takes every byte from
 * config->allocator and wa_plan_free gives it all back; an engine plans
 * through its own accounted memory, so its peak covers the planning.
 */
static void
test_plan_memory(void)
{
	static const wa_window win[] = {
		{10, 10, 0}, {20, 20, 0}, {30, 30, 0}, {40, 40, 0}
	};
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_plan		plan;
	wa_engine  *eng;
	wa_stats	st;
	int64_t		g;
	int64_t		plan_peak;
	const char *msg;
	mini		m;

	memset(&m, 0, sizeof(m));
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 4;
	cfg.windows = win;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.share_windows = true;
	cfg.emit = mini_emit;
	cfg.emit_arg = &m;
	cfg.allocator = &al;

	ca_setup(&ca, &al);
	msg = wa_engine_plan(&cfg, &plan, &g);
	plan_peak = ca.peak_bytes;
	check(msg == NULL && ca.n_allocs > 0 &&
		  ca.live_bytes == (int64_t) (plan.n_nodes * sizeof(wa_plan_node)),
		  "wa_engine_plan: from config->allocator, only the nodes held",
		  "%s; %" PRId64 " allocations, %" PRId64 " bytes held",
		  msg ? msg : "planned", ca.n_allocs, ca.live_bytes);
	wa_plan_free(&plan);
	check(ca.live_bytes == 0 && ca.live_blocks == 0 && ca.errors == 0,
		  "wa_engine_plan: wa_plan_free gives every byte back",
		  "%" PRId64 " bytes in %" PRId64 " blocks held; %s", ca.live_bytes,
		  ca.live_blocks, ca.first_error);

	ca_setup(&ca, &al);
	eng = wa_engine_create(&cfg);
	wa_engine_get_stats(eng, &st);
	check(st.peak_mem_bytes == (uint64_t) ca.peak_bytes &&
		  ca.peak_bytes >= plan_peak &&
		  st.mem_bytes == (uint64_t) ca.live_bytes,
		  "shared windows: the engine accounts its planning's memory",
		  "engine peak %" PRIu64 ", allocator peak %" PRId64 ", planning "
		  "alone %" PRId64 "; engine holds %" PRIu64 ", allocator %" PRId64,
		  st.peak_mem_bytes, ca.peak_bytes, plan_peak, st.mem_bytes,
		  ca.live_bytes);
	wa_engine_destroy(eng);
	check(ca.live_bytes == 0 && ca.errors == 0,
		  "shared windows: destroy gives every byte back", "%" PRId64
		  " bytes held; %s", ca.live_bytes, ca.first_error);
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

/* ----------------------------------------------------------------
 * Checkpoint, restore and the live view
 *
 * The differential runs drive several engines over one stream in lockstep:
 * "plain", which only ingests; A, the same plus checkpoints and live views
 * at random points; and B1, B2, ..., each restored at one of A's
 * checkpoints from the slice table persisted so far (the previous B's
 * table, so that restoring a restored engine is covered too).  After every
 * call they must agree: A with plain exactly, pane for pane (checkpoints
 * and live views change nothing), and each B with A up to what wa_engine.h
 * allows (revision counts of late panes, float rounding, the order of the
 * panes of one call).  At every checkpoint, every engine's persisted table
 * must equal the full state dumped by an engine that replayed the stream so
 * far, and a checkpoint must report no more slices than the events since
 * the previous one touched.  Every live view must list exactly the windows
 * that the reference, run on the stream so far, has with data and unfired,
 * with their values, and leave the engine as it was.
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

static void
ck_table_add(ck_table *t, int key, int64_t slice, const void *acc,
			 uint32_t size)
{
	if (t->n == t->cap)
	{
		t->cap = t->cap ? t->cap * 2 : 256;
		t->e = realloc(t->e, sizeof(ck_entry) * t->cap);
	}
	t->e[t->n].key = key;
	t->e[t->n].slice = slice;
	t->e[t->n].acc = malloc(size ? size : 1);
	memcpy(t->e[t->n].acc, acc, size);
	t->n++;
}

/* qsort, which must not see the NULL of an empty array */
static void
ck_sort(void *base, size_t n, size_t size,
		int (*cmp) (const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int
ck_entry_cmp(const void *a, const void *b)
{
	const ck_entry *x = a;
	const ck_entry *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

static void
ck_table_free(ck_table *t)
{
	for (int64_t i = 0; i < t->n; i++)
		free(t->e[i].acc);
	free(t->e);
	memset(t, 0, sizeof(ck_table));
}

static void
ck_table_copy(ck_table *dst, const ck_table *src, uint32_t size)
{
	ck_table_free(dst);
	for (int64_t i = 0; i < src->n; i++)
		ck_table_add(dst, src->e[i].key, src->e[i].slice, src->e[i].acc, size);
}

/*
 * Apply one checkpoint to a table, both sorted: saved slices replace or join
 * the table's, then every slice below expire_below goes.  The saves are
 * consumed.
 */
static void
ck_table_apply(ck_table *t, ck_table *saves, int64_t expire_below)
{
	ck_table	out;
	int64_t		i = 0;
	int64_t		j = 0;

	memset(&out, 0, sizeof(out));
	out.cap = t->n + saves->n + 1;
	out.e = malloc(sizeof(ck_entry) * out.cap);
	while (i < t->n || j < saves->n)
	{
		ck_entry   *take;
		int			cmp = i == t->n ? 1 : j == saves->n ? -1 :
			ck_entry_cmp(&t->e[i], &saves->e[j]);

		if (cmp < 0)
			take = &t->e[i++];
		else
		{
			if (cmp == 0)
				free(t->e[i++].acc);
			take = &saves->e[j++];
		}
		if (take->slice < expire_below)
			free(take->acc);
		else
			out.e[out.n++] = *take;
	}
	free(t->e);
	free(saves->e);
	memset(saves, 0, sizeof(ck_table));
	*t = out;
}

/* Are two sorted tables equal, accumulator bytes included? */
static bool
ck_table_equal(const ck_table *a, const ck_table *b, uint32_t size,
			   char *buf, size_t len)
{
	for (int64_t i = 0; i < a->n || i < b->n; i++)
	{
		if (i == a->n || i == b->n)
		{
			const ck_entry *x = i == a->n ? &b->e[i] : &a->e[i];

			snprintf(buf, len, "%" PRId64 " vs %" PRId64 " entries; first "
					 "extra: key %d slice %" PRId64 " (in the %s)", a->n,
					 b->n, x->key, x->slice, i == a->n ? "second" : "first");
			return false;
		}
		if (ck_entry_cmp(&a->e[i], &b->e[i]) != 0)
		{
			snprintf(buf, len, "entry %" PRId64 ": key %d slice %" PRId64
					 " vs key %d slice %" PRId64, i, a->e[i].key,
					 a->e[i].slice, b->e[i].key, b->e[i].slice);
			return false;
		}
		if (memcmp(a->e[i].acc, b->e[i].acc, size) != 0)
		{
			snprintf(buf, len, "key %d slice %" PRId64 ": accumulators "
					 "differ", a->e[i].key, a->e[i].slice);
			return false;
		}
	}
	return true;
}

/* What a checkpoint's save callback collects. */
typedef struct ck_saves
{
	const keytab *keys;
	uint32_t	acc_size;
	ck_table	t;
	int64_t		n_bad;
	char		bad[200];
} ck_saves;

static void
ck_save(void *arg, const wa_key *key, int64_t slice, const void *acc,
		uint32_t acc_size)
{
	ck_saves   *s = arg;
	int			id = keytab_find(s->keys, key);

	if (id < 0 || acc_size != s->acc_size)
	{
		if (s->n_bad++ == 0)
			snprintf(s->bad, sizeof(s->bad), "slice %" PRId64 ": key %s, "
					 "acc_size %u (engine says %u)", slice,
					 id < 0 ? "never ingested" : "ok", acc_size, s->acc_size);
		return;
	}
	ck_table_add(&s->t, id, slice, acc, acc_size);
}

/* A pane as the lockstep runs keep it. */
typedef struct ck_pane
{
	int			key;
	int			window;
	wa_tick		start;
	wa_tick		end;
	wa_pane_kind kind;
	int64_t		revision;
	wa_result	results[N_AGGS];
} ck_pane;

typedef struct ck_sink
{
	const keytab *keys;
	ck_pane    *p;
	int64_t		n;
	int64_t		cap;
	int64_t		n_unknown;		/* panes for keys never ingested */
} ck_sink;

static void
ck_collect(void *arg, const wa_pane *pane)
{
	ck_sink    *s = arg;
	ck_pane    *p;
	int			key = keytab_find(s->keys, &pane->key);

	if (key < 0)
	{
		s->n_unknown++;
		return;
	}
	if (s->n == s->cap)
	{
		s->cap = s->cap ? s->cap * 2 : 64;
		s->p = realloc(s->p, sizeof(ck_pane) * s->cap);
	}
	p = &s->p[s->n++];
	p->key = key;
	p->window = pane->window;
	p->start = pane->start;
	p->end = pane->end;
	p->kind = pane->kind;
	p->revision = pane->revision;
	memcpy(p->results, pane->results, sizeof(wa_result) * N_AGGS);
}

static void
ck_discard(void *arg, const wa_pane *pane)
{
	(void) arg;
	(void) pane;
}

static int
ck_pane_cmp(const void *a, const void *b)
{
	const ck_pane *x = a;
	const ck_pane *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->window != y->window)
		return x->window < y->window ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return 0;
}

/*
 * Do two panes' results agree?  Exactly, or (restored engines, whose merge
 * caches started empty) with floats up to rounding: every count, integer
 * sum, minimum and maximum still compares exactly, so a missing or extra
 * event cannot hide in the tolerance.
 */
static bool
ck_results_same(const wa_result *a, const wa_result *b, bool exact)
{
	for (int i = 0; i < N_AGGS; i++)
	{
		const wa_result *x = &a[i];
		const wa_result *y = &b[i];
		bool		ok;

		if (x->isnull != y->isnull)
			return false;
		if (x->isnull)
			continue;
		switch (test_aggs[i].kind)
		{
			case WA_AGG_COUNT_STAR:
			case WA_AGG_COUNT:
				ok = x->count == y->count;
				break;
			case WA_AGG_SUM_INT:
				ok = x->sum == y->sum;
				break;
			case WA_AGG_AVG_INT:
				ok = x->sum == y->sum && x->count == y->count;
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				ok = x->i == y->i;
				break;
			default:
				if (isnan(x->f) || isnan(y->f))
					ok = isnan(x->f) && isnan(y->f);
				else if (exact)
					ok = x->f == y->f;
				else
					ok = fabs(x->f - y->f) <=
						1e-9 * fmax(1.0, fmax(fabs(x->f), fabs(y->f)));
				break;
		}
		if (!ok)
			return false;
	}
	return true;
}

static void
describe_ck_pane(char *buf, size_t len, const char *who, const ck_pane *p)
{
	snprintf(buf, len, "%s: key %d window %d [%s,%s) %s revision %" PRId64
			 " count %" PRId64, who, p->key, p->window, i128s(p->start),
			 i128s(p->end), p->kind == WA_PANE_ON_TIME ? "ON_TIME" : "LATE",
			 p->revision, p->results[AGG_COUNT_STAR].count);
}

/* Problems a lockstep run looks for. */
typedef enum ck_problem
{
	C_OUTCOME,
	C_SAME,
	C_RESTORED,
	C_SAVES,
	C_TABLE,
	C_EXPIRE,
	C_COST,
	C_LIVE,
	C_LIVE_RO,
	C_MEM,
	C_COUNT
} ck_problem;

static const char *const ck_problem_names[C_COUNT] = {
	"ingest results and watermarks agree",
	"checkpoints and live views change nothing",
	"restored engines emit what A emits",
	"saves well-formed",
	"persisted table is the live state",
	"expire_below bounds every live slice",
	"checkpoint cost follows the changes",
	"live view matches the reference",
	"live view is read-only and deterministic",
	"memory released"
};

#define CK_MAX_ENGINES 4		/* plain, A and up to two restored */

typedef struct ck_engine
{
	char		role[16];
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_engine  *eng;
	uint64_t	base_mem;		/* mem_bytes when created */
	ck_sink		out;
	ck_table	table;			/* the slices it persisted */
	wa_ingest_result res;		/* of the current operation */
} ck_engine;

typedef struct ck_opts
{
	const char *name;
	int			n_windows;
	const wa_window *windows;
	int64_t		bound;
	int64_t		lateness;
	int			epoch;			/* as in run_opts */
	bool		merge_every_slice;
	bool		share_windows;
	uint64_t	seed;			/* picks the checkpoint and live points */
	int			n_ckpt;			/* checkpoints; every other one restores */
	int			n_live;			/* live views */
} ck_opts;

/* What to do after each operation. */
#define CK_EMIT 1				/* emit_late */
#define CK_CKPT 2				/* then checkpoint */
#define CK_RESTORE 4			/* and restore a new engine from it */
#define CK_LIVE 8				/* live view (before the emit_late) */

typedef struct ck_ctx
{
	const ck_opts *opts;
	const stream *st;
	uint8_t    *plan;
	ck_engine  *eng;			/* [0] plain, [1] A, then the restored */
	int			n_eng;
	uint32_t	acc_size;
	int64_t		g;
	problem		probs[C_COUNT];
	/* keys and event times A accepted since its last checkpoint */
	bool	   *touched;
	int64_t    *tmin;
	int64_t    *tmax;
	int		   *touched_list;
	int			n_touched;
	/* totals, for the summary line */
	int64_t		n_ckpts;
	int64_t		n_saves;
	int64_t		n_live_slices;
	int64_t		n_small;		/* checkpoints saving under a tenth */
	int64_t		n_live_panes;
} ck_ctx;

static void
ck_engine_start(ck_ctx *c, ck_engine *ce, const char *role, wa_emit_fn emit)
{
	const ck_opts *o = c->opts;
	wa_stats	s;

	memset(ce, 0, sizeof(ck_engine));
	snprintf(ce->role, sizeof(ce->role), "%s", role);
	ca_setup(&ce->ca, &ce->al);
	ce->out.keys = &c->st->keys;
	ce->cfg.n_windows = o->n_windows;
	ce->cfg.windows = o->windows;
	ce->cfg.bound = o->bound;
	ce->cfg.lateness = o->lateness;
	ce->cfg.n_aggs = N_AGGS;
	ce->cfg.aggs = test_aggs;
	ce->cfg.byte_keys = c->st->keys.bytes;
	ce->cfg.merge_every_slice = o->merge_every_slice;
	ce->cfg.share_windows = o->share_windows;
	ce->cfg.emit = emit;
	ce->cfg.emit_arg = &ce->out;
	ce->cfg.allocator = &ce->al;
	ce->eng = wa_engine_create(&ce->cfg);
	wa_engine_get_stats(ce->eng, &s);
	ce->base_mem = s.mem_bytes;
}

/* Destroy an engine; everything it allocated must come back. */
static void
ck_engine_end(ck_ctx *c, ck_engine *ce)
{
	wa_engine_destroy(ce->eng);
	ce->eng = NULL;
	if (ce->ca.live_bytes != 0 || ce->ca.errors != 0)
		NOTE(c, C_MEM, "%s: after destroy the allocator holds %" PRId64
			 " bytes; %" PRId64 " misuse(s) %s", ce->role, ce->ca.live_bytes,
			 ce->ca.errors, ce->ca.first_error);
	if (ce->out.n_unknown > 0)
		NOTE(c, C_SAME, "%s: %" PRId64 " pane(s) for keys never ingested",
			 ce->role, ce->out.n_unknown);
	free(ce->out.p);
	ck_table_free(&ce->table);
}

static wa_ingest_result
ck_apply_op(wa_engine *eng, const stream *st, int64_t i)
{
	const stream_op *op = &st->ops[i];
	wa_key		key;

	if (!op->is_event)
	{
		wa_engine_advance(eng, op->advance_to);
		return WA_INGEST_ACCEPTED;
	}
	memset(&key, 0, sizeof(key));
	if (st->keys.bytes)
	{
		key.bytes = st->keys.kbytes[op->key];
		key.len = st->keys.klens[op->key];
	}
	else
		key.ival = st->keys.ivals[op->key];
	return wa_engine_ingest(eng, &key, op->time, &st->values[i * N_INPUTS]);
}

/*
 * Compare what the engines emitted in the current call, then forget it: A
 * against plain exactly and in order, each restored engine against A as a
 * set, with the revision rule of wa_engine_restore_time.
 */
static void
ck_compare_panes(ck_ctx *c, const char *when, int64_t op)
{
	ck_sink    *p = &c->eng[0].out;
	ck_sink    *a = &c->eng[1].out;
	char		x[300];
	char		y[300];

	if (a->n != p->n)
		NOTE(c, C_SAME, "%s op %" PRId64 ": A emitted %" PRId64 " pane(s), "
			 "plain %" PRId64, when, op, a->n, p->n);
	else
	{
		for (int64_t k = 0; k < a->n; k++)
		{
			const ck_pane *u = &a->p[k];
			const ck_pane *v = &p->p[k];

			if (ck_pane_cmp(u, v) != 0 || u->end != v->end ||
				u->revision != v->revision ||
				!ck_results_same(u->results, v->results, true))
			{
				describe_ck_pane(x, sizeof(x), "A", u);
				describe_ck_pane(y, sizeof(y), "plain", v);
				NOTE(c, C_SAME, "%s op %" PRId64 ", pane %" PRId64 ": %s; %s",
					 when, op, k, x, y);
				break;
			}
		}
	}

	for (int b = 2; b < c->n_eng; b++)
	{
		ck_engine  *ce = &c->eng[b];
		ck_sink    *s = &ce->out;
		bool		same_order = s->n == a->n;

		/* sort (the panes are big) only if the orders differ */
		for (int64_t k = 0; k < a->n && same_order; k++)
			same_order = ck_pane_cmp(&a->p[k], &s->p[k]) == 0;
		if (!same_order)
		{
			ck_sort(a->p, (size_t) a->n, sizeof(ck_pane), ck_pane_cmp);
			ck_sort(s->p, (size_t) s->n, sizeof(ck_pane), ck_pane_cmp);
		}
		for (int64_t k = 0; k < a->n || k < s->n; k++)
		{
			const ck_pane *u = k < a->n ? &a->p[k] : NULL;
			const ck_pane *v = k < s->n ? &s->p[k] : NULL;
			bool		ok;

			ok = u != NULL && v != NULL && ck_pane_cmp(u, v) == 0 &&
				u->end == v->end &&
				ck_results_same(u->results, v->results, false);
			/* on time: revision 1 in both; late: never above A's */
			if (ok && u->kind == WA_PANE_ON_TIME)
				ok = u->revision == 1 && v->revision == 1;
			else if (ok)
				ok = v->revision >= 1 && v->revision <= u->revision;
			if (!ok)
			{
				snprintf(x, sizeof(x), "none");
				snprintf(y, sizeof(y), "none");
				if (u != NULL)
					describe_ck_pane(x, sizeof(x), "A", u);
				if (v != NULL)
					describe_ck_pane(y, sizeof(y), ce->role, v);
				NOTE(c, C_RESTORED, "%s op %" PRId64 ": %" PRId64 " vs %"
					 PRId64 " panes; first difference %s; %s", when, op,
					 a->n, s->n, x, y);
				break;
			}
		}
	}
	for (int b = 0; b < c->n_eng; b++)
		c->eng[b].out.n = 0;
}

/*
 * Checkpoint an engine: the saves come back sorted in *saves, after the
 * checks that need nothing else.
 */
static void
ck_take(ck_ctx *c, ck_engine *ce, ck_table *saves, int64_t *expire_below,
		wa_time_state *time)
{
	ck_saves	s;

	memset(&s, 0, sizeof(s));
	s.keys = &c->st->keys;
	s.acc_size = c->acc_size;
	memset(time, 0xA5, sizeof(wa_time_state));
	wa_engine_checkpoint(ce->eng, ck_save, &s, expire_below, time);
	ck_sort(s.t.e, (size_t) s.t.n, sizeof(ck_entry), ck_entry_cmp);
	if (s.n_bad > 0)
		NOTE(c, C_SAVES, "%s: %" PRId64 " bad save(s); first: %s", ce->role,
			 s.n_bad, s.bad);
	for (int64_t i = 0; i < s.t.n; i++)
	{
		if (i > 0 && ck_entry_cmp(&s.t.e[i - 1], &s.t.e[i]) == 0)
			NOTE(c, C_SAVES, "%s: key %d slice %" PRId64 " saved twice in "
				 "one checkpoint", ce->role, s.t.e[i].key, s.t.e[i].slice);
		if (s.t.e[i].slice < *expire_below)
			NOTE(c, C_EXPIRE, "%s: saved key %d slice %" PRId64 " lies below "
				 "expire_below %" PRId64, ce->role, s.t.e[i].key,
				 s.t.e[i].slice, *expire_below);
	}
	*saves = s.t;
}

/* Replay the stream up to op upto into a new engine; dump its whole state. */
static void
ck_replay_dump(ck_ctx *c, int64_t upto, ck_table *dump)
{
	ck_engine	r;
	int64_t		eb;
	wa_time_state time;

	ck_engine_start(c, &r, "replay", ck_discard);
	for (int64_t i = 0; i <= upto; i++)
	{
		ck_apply_op(r.eng, c->st, i);
		if (c->plan[i] & CK_EMIT)
			wa_engine_emit_late(r.eng);
	}
	/* everything has changed since creation: the first checkpoint is all */
	ck_take(c, &r, dump, &eb, &time);
	ck_engine_end(c, &r);
}

/*
 * Restore engine ce from a persisted table, in shuffled or sorted order; it
 * must then hold want_slices slices.
 */
static void
ck_restore(ck_ctx *c, ck_engine *ce, const char *role, const ck_table *from,
		   const wa_time_state *time, rng *r, bool shuffle,
		   int64_t want_slices)
{
	int64_t    *order = malloc(sizeof(int64_t) * (from->n + 1));
	uint8_t		kbuf[256];
	wa_stats	s;
	wa_stats	sa;

	ck_engine_start(c, ce, role, ck_collect);
	for (int64_t i = 0; i < from->n; i++)
		order[i] = i;
	for (int64_t i = from->n - 1; shuffle && i > 0; i--)
	{
		int64_t		j = (int64_t) rng_below(r, (uint64_t) i + 1);
		int64_t		t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	wa_engine_restore_time(ce->eng, time);
	for (int64_t i = 0; i < from->n; i++)
	{
		const ck_entry *en = &from->e[order[i]];
		wa_key		key;

		/* keys come in a buffer reused at once: the engine must copy */
		memset(&key, 0, sizeof(key));
		if (c->st->keys.bytes)
		{
			key.len = c->st->keys.klens[en->key];
			memcpy(kbuf, c->st->keys.kbytes[en->key], key.len);
			key.bytes = kbuf;
		}
		else
			key.ival = c->st->keys.ivals[en->key];
		wa_engine_restore_slice(ce->eng, &key, en->slice, en->acc,
								c->acc_size);
		memset(kbuf, 0xA5, sizeof(kbuf));
	}
	wa_engine_restore_done(ce->eng);
	free(order);

	wa_engine_get_stats(ce->eng, &s);
	wa_engine_get_stats(c->eng[1].eng, &sa);
	if (s.n_slices != (uint64_t) want_slices || s.n_keys != sa.n_keys ||
		s.events_in != 0 || s.panes_on_time != 0)
		NOTE(c, C_TABLE, "%s after restore: %" PRIu64 " slices, %" PRIu64
			 " keys, %" PRIu64 " events in, %" PRIu64 " panes; table has %"
			 PRId64 " slices, A %" PRIu64 " keys", role, s.n_slices, s.n_keys,
			 s.events_in, s.panes_on_time, from->n, sa.n_keys);
	if (wa_engine_watermark(ce->eng) != time->wm)
		NOTE(c, C_OUTCOME, "%s after restore: watermark %s, checkpoint %s",
			 role, i128s(wa_engine_watermark(ce->eng)), i128s(time->wm));
	ck_table_copy(&ce->table, from, c->acc_size);
}

/*
 * The checkpoint after op i: every engine but plain takes one and applies
 * it to its table; the tables must agree with each other and with a full
 * dump; A's saves must stay within what the events since its last
 * checkpoint touched.
 */
static void
ck_checkpoint(ck_ctx *c, int64_t i, rng *r)
{
	ck_engine  *a = &c->eng[1];
	ck_table	saves_a;
	ck_table	dump;
	int64_t		eb_a;
	wa_time_state time_a;
	wa_stats	sa;
	char		buf[300];
	int64_t		k;
	int64_t		saves_n;

	ck_take(c, a, &saves_a, &eb_a, &time_a);
	saves_n = saves_a.n;
	c->n_ckpts++;
	c->n_saves += saves_a.n;

	/* cost: only touched keys, and per key the slices its events spanned */
	for (k = 0; k < saves_a.n;)
	{
		int			key = saves_a.e[k].key;
		int64_t		n = 0;

		for (; k < saves_a.n && saves_a.e[k].key == key; k++)
			n++;
		if (!c->touched[key])
			NOTE(c, C_COST, "op %" PRId64 ": saved %" PRId64 " slice(s) of "
				 "key %d, which no event touched", i, n, key);
		else if ((__int128) n > ((__int128) c->tmax[key] - c->tmin[key]) / c->g + 2)
			NOTE(c, C_COST, "op %" PRId64 ": saved %" PRId64 " slices of key "
				 "%d, whose events spanned [%" PRId64 ", %" PRId64 "]", i, n,
				 key, c->tmin[key], c->tmax[key]);
	}
	for (int t = 0; t < c->n_touched; t++)
		c->touched[c->touched_list[t]] = false;
	c->n_touched = 0;

	/* the restored engines report the same changes and the same time */
	for (int b = 2; b < c->n_eng; b++)
	{
		ck_engine  *ce = &c->eng[b];
		ck_table	saves;
		int64_t		eb;
		wa_time_state time;

		ck_take(c, ce, &saves, &eb, &time);
		if (!ck_table_equal(&saves_a, &saves, c->acc_size, buf, sizeof(buf)))
			NOTE(c, C_SAVES, "op %" PRId64 ": %s saved other slices than A: "
				 "%s", i, ce->role, buf);
		if (eb != eb_a || time.max_ts != time_a.max_ts ||
			time.seen_event != time_a.seen_event || time.wm != time_a.wm)
			NOTE(c, C_SAVES, "op %" PRId64 ": %s checkpoint expire_below %"
				 PRId64 " wm %s max_ts %" PRId64 ", A %" PRId64 " %s %" PRId64,
				 i, ce->role, eb, i128s(time.wm), time.max_ts, eb_a,
				 i128s(time_a.wm), time_a.max_ts);
		ck_table_apply(&ce->table, &saves, eb);
	}
	ck_table_apply(&a->table, &saves_a, eb_a);

	/*
	 * A's table holds every live slice (as many as n_slices, the same as a
	 * full dump) and nothing else: so expire_below deleted no live slice
	 * and left no dead one.
	 */
	wa_engine_get_stats(a->eng, &sa);
	c->n_live_slices += (int64_t) sa.n_slices;
	if (saves_n * 10 < (int64_t) sa.n_slices)
		c->n_small++;
	if (a->table.n != (int64_t) sa.n_slices)
		NOTE(c, C_EXPIRE, "op %" PRId64 ": after deleting below %" PRId64
			 ", the table holds %" PRId64 " slices, the engine %" PRIu64, i,
			 eb_a, a->table.n, sa.n_slices);
	if (time_a.wm != wa_engine_watermark(a->eng))
		NOTE(c, C_SAVES, "op %" PRId64 ": checkpoint wm %s, engine %s", i,
			 i128s(time_a.wm), i128s(wa_engine_watermark(a->eng)));
	/* a replay costs what the stream so far did: only where we restore */
	if (c->plan[i] & CK_RESTORE)
	{
		ck_replay_dump(c, i, &dump);
		if (!ck_table_equal(&a->table, &dump, c->acc_size, buf, sizeof(buf)))
			NOTE(c, C_TABLE, "op %" PRId64 ": A's table vs a full dump: %s",
				 i, buf);
		ck_table_free(&dump);
	}
	for (int b = 2; b < c->n_eng; b++)
		if (!ck_table_equal(&a->table, &c->eng[b].table, c->acc_size, buf,
							sizeof(buf)))
			NOTE(c, C_TABLE, "op %" PRId64 ": A's table vs %s's: %s", i,
				 c->eng[b].role, buf);

	if ((c->plan[i] & CK_RESTORE) && c->n_eng < CK_MAX_ENGINES)
	{
		const ck_engine *from = &c->eng[c->n_eng - 1];
		char		role[16];

		snprintf(role, sizeof(role), "B%d", c->n_eng - 1);
		ck_restore(c, &c->eng[c->n_eng], role, &from->table, &time_a, r,
				   c->n_eng % 2 == 0, from->table.n);
		c->n_eng++;
	}
}

/* The live view after op i, against the reference on ops 0..i. */
static void
ck_live_check(ck_ctx *c, int64_t i)
{
	ck_engine  *a = &c->eng[1];
	ck_sink		l1;
	ck_sink		l2;
	wa_stats	s0;
	wa_stats	s1;
	void	   *scratch = malloc(c->acc_size);
	wa_result	results[N_AGGS];
	ref_config	rc;
	ref_model  *ref;
	wa_tick		wm;
	int64_t		n_expected = 0;
	bool	   *seen;
	char		buf[300];

	memset(&l1, 0, sizeof(l1));
	memset(&l2, 0, sizeof(l2));
	l1.keys = l2.keys = &c->st->keys;
	wa_engine_get_stats(a->eng, &s0);
	wa_engine_live(a->eng, ck_collect, &l1, scratch, results);
	wa_engine_live(a->eng, ck_collect, &l2, scratch, results);
	wa_engine_get_stats(a->eng, &s1);
	c->n_live_panes += l1.n;
	if (memcmp(&s0, &s1, sizeof(wa_stats)) != 0)
		NOTE(c, C_LIVE_RO, "op %" PRId64 ": statistics changed (merges %"
			 PRIu64 "->%" PRIu64 ", mem %" PRIu64 "->%" PRIu64 ")", i,
			 s0.merges, s1.merges, s0.mem_bytes, s1.mem_bytes);
	if (l1.n != l2.n || l1.n_unknown != 0)
		NOTE(c, C_LIVE_RO, "op %" PRId64 ": two live views gave %" PRId64
			 " and %" PRId64 " panes (%" PRId64 " for unknown keys)", i, l1.n,
			 l2.n, l1.n_unknown);
	else
		for (int64_t k = 0; k < l1.n; k++)
			if (ck_pane_cmp(&l1.p[k], &l2.p[k]) != 0 ||
				!ck_results_same(l1.p[k].results, l2.p[k].results, true))
			{
				NOTE(c, C_LIVE_RO, "op %" PRId64 ": two live views differ at "
					 "pane %" PRId64, i, k);
				break;
			}

	/* the reference on the stream so far */
	rc.n_windows = c->opts->n_windows;
	rc.windows = c->opts->windows;
	rc.bound = c->opts->bound;
	rc.lateness = c->opts->lateness;
	rc.n_aggs = N_AGGS;
	rc.aggs = test_aggs;
	rc.n_inputs = N_INPUTS;
	ref = ref_create(&rc);
	for (int64_t j = 0; j <= i; j++)
	{
		if (c->st->ops[j].is_event)
			ref_add_event(ref, c->st->ops[j].key, c->st->ops[j].time,
						  &c->st->values[j * N_INPUTS]);
		else
			ref_add_advance(ref, c->st->ops[j].advance_to);
	}
	ref_run(ref);
	wm = ref_op_watermark(ref, i);
	for (int64_t w = 0; w < ref_n_windows(ref); w++)
		if (ref_window_at(ref, w)->end > wm)
			n_expected++;
	seen = calloc((size_t) ref_n_windows(ref) + 1, sizeof(bool));
	for (int64_t k = 0; k < l1.n; k++)
	{
		const ck_pane *p = &l1.p[k];
		int64_t		w = ref_find(ref, p->key, p->window, p->start);
		const ref_window *rw;

		describe_ck_pane(buf, sizeof(buf), "live", p);
		if (p->kind != WA_PANE_ON_TIME || p->revision != 0)
		{
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: not ON_TIME revision 0", i,
				 buf);
			continue;
		}
		if (w < 0)
		{
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: the window has no data", i,
				 buf);
			continue;
		}
		rw = ref_window_at(ref, w);
		if (rw->end <= wm || p->end != rw->end)
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: the window fired already "
				 "(watermark %s)", i, buf, i128s(wm));
		else if (seen[w])
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: reported twice", i, buf);
		else
		{
			char		detail[400];

			seen[w] = true;
			n_expected--;
			if (!results_match(ref, rw, test_aggs, N_AGGS, p->results, detail,
							   sizeof(detail)))
				NOTE(c, C_LIVE, "op %" PRId64 ": %s: %s", i, buf, detail);
		}
	}
	if (n_expected != 0)
		NOTE(c, C_LIVE, "op %" PRId64 ": %" PRId64 " unfired window(s) with "
			 "data missing from the live view (watermark %s)", i, n_expected,
			 i128s(wm));

	/* a restored engine shows the same windows */
	ck_sort(l1.p, (size_t) l1.n, sizeof(ck_pane), ck_pane_cmp);
	for (int b = 2; b < c->n_eng; b++)
	{
		ck_sink		lb;

		memset(&lb, 0, sizeof(lb));
		lb.keys = &c->st->keys;
		wa_engine_live(c->eng[b].eng, ck_collect, &lb, scratch, results);
		ck_sort(lb.p, (size_t) lb.n, sizeof(ck_pane), ck_pane_cmp);
		if (lb.n != l1.n)
			NOTE(c, C_LIVE, "op %" PRId64 ": live view of %s has %" PRId64
				 " panes, A's %" PRId64, i, c->eng[b].role, lb.n, l1.n);
		else
			for (int64_t k = 0; k < lb.n; k++)
				if (ck_pane_cmp(&l1.p[k], &lb.p[k]) != 0 ||
					!ck_results_same(l1.p[k].results, lb.p[k].results, false))
				{
					NOTE(c, C_LIVE, "op %" PRId64 ": live view of %s differs "
						 "from A's at pane %" PRId64, i, c->eng[b].role, k);
					break;
				}
		free(lb.p);
	}

	free(seen);
	ref_destroy(ref);
	free(l1.p);
	free(l2.p);
	free(scratch);
}

/* Pick the operations after which to checkpoint, restore and look. */
static void
ck_plan(ck_ctx *c, rng *r)
{
	const ck_opts *o = c->opts;
	int64_t		n_ops = c->st->n_ops;
	int64_t    *emits = malloc(sizeof(int64_t) * (n_ops + 1));
	int64_t		n_emits = 0;
	int64_t		events = 0;
	int			n = 0;

	c->plan = calloc((size_t) n_ops + 1, 1);
	for (int64_t i = 0; i < n_ops; i++)
	{
		if (c->st->ops[i].is_event)
			events++;
		if (o->epoch == 0 ||
			(c->st->ops[i].is_event && events % o->epoch == 0))
		{
			c->plan[i] |= CK_EMIT;
			emits[n_emits++] = i;
		}
	}
	/*
	 * Checkpoints only where nothing awaits emit_late (see wa_engine.h).
	 * Each comes with a second one a few emission points later, which must
	 * save only what the few events in between touched.
	 */
	for (int k = 0; k < o->n_ckpt && n_emits > 0; k++)
	{
		int64_t		e = (int64_t) rng_below(r, (uint64_t) n_emits);

		c->plan[emits[e]] |= CK_CKPT;
		if (k % 2 == 1)
			continue;
		e += 1 + (int64_t) rng_below(r, 20);
		if (e < n_emits)
			c->plan[emits[e]] |= CK_CKPT;
	}
	for (int64_t i = 0; i < n_ops; i++)
		if ((c->plan[i] & CK_CKPT) && n++ % 2 == 0)
			c->plan[i] |= CK_RESTORE;
	for (int k = 0; k < o->n_live; k++)
		c->plan[rng_below(r, (uint64_t) n_ops)] |= CK_LIVE;
	free(emits);
}

/*
 * After the flush: nothing is left to save, the persisted table keeps at
 * most slices numbered INT64_MAX (which expire_below cannot reach), and an
 * engine restored from it holds nothing and drops every event.
 */
static void
ck_after_flush(ck_ctx *c, rng *r)
{
	ck_engine  *a = &c->eng[1];
	ck_engine	f;
	ck_table	saves;
	int64_t		eb;
	wa_time_state time;
	wa_stats	s;

	ck_take(c, a, &saves, &eb, &time);
	if (saves.n != 0)
		NOTE(c, C_SAVES, "after the flush: %" PRId64 " slice(s) saved",
			 saves.n);
	ck_table_apply(&a->table, &saves, eb);
	for (int64_t i = 0; i < a->table.n; i++)
		if (a->table.e[i].slice != INT64_MAX)
		{
			NOTE(c, C_EXPIRE, "after the flush: slice %" PRId64 " of key %d "
				 "survives expire_below %" PRId64, a->table.e[i].slice,
				 a->table.e[i].key, eb);
			break;
		}
	ck_restore(c, &f, "F", &a->table, &time, r, true, 0);
	wa_engine_get_stats(f.eng, &s);
	if (s.n_slices != 0 || s.n_keys != 0 || s.mem_bytes != f.base_mem)
		NOTE(c, C_TABLE, "restored after the flush: %" PRIu64 " slices, %"
			 PRIu64 " keys, %" PRIu64 " bytes (%" PRIu64 " when created)",
			 s.n_slices, s.n_keys, s.mem_bytes, f.base_mem);
	for (int64_t i = 0; i < c->st->n_ops && i < 50; i++)
		if (c->st->ops[i].is_event &&
			ck_apply_op(f.eng, c->st, i) != WA_INGEST_DROPPED)
		{
			NOTE(c, C_OUTCOME, "restored after the flush: op %" PRId64
				 " not dropped", i);
			break;
		}
	wa_engine_flush(f.eng);
	if (f.out.n != 0)
		NOTE(c, C_RESTORED, "restored after the flush: %" PRId64 " pane(s)",
			 f.out.n);
	ck_engine_end(c, &f);
}

static void
run_ckpt_stream(const ck_opts *o, const stream *st)
{
	ck_ctx		c;
	rng			r = {o->seed};
	double		t0 = now_seconds();
	char		name[256];

	memset(&c, 0, sizeof(c));
	c.opts = o;
	c.st = st;
	c.eng = calloc(CK_MAX_ENGINES, sizeof(ck_engine));
	c.touched = calloc((size_t) st->keys.n + 1, sizeof(bool));
	c.tmin = calloc((size_t) st->keys.n + 1, sizeof(int64_t));
	c.tmax = calloc((size_t) st->keys.n + 1, sizeof(int64_t));
	c.touched_list = calloc((size_t) st->keys.n + 1, sizeof(int));
	ck_plan(&c, &r);

	ck_engine_start(&c, &c.eng[0], "plain", ck_collect);
	ck_engine_start(&c, &c.eng[1], "A", ck_collect);
	c.n_eng = 2;
	c.acc_size = wa_engine_acc_size(c.eng[1].eng);
	c.g = wa_engine_slice_width(c.eng[1].eng);
	if (c.acc_size != wa_engine_layout(c.eng[1].eng)->acc_size)
		NOTE(&c, C_SAVES, "wa_engine_acc_size %u, layout %u", c.acc_size,
			 wa_engine_layout(c.eng[1].eng)->acc_size);

	for (int64_t i = 0; i < st->n_ops; i++)
	{
		const stream_op *op = &st->ops[i];

		for (int b = 0; b < c.n_eng; b++)
			c.eng[b].res = ck_apply_op(c.eng[b].eng, st, i);
		for (int b = 0; b < c.n_eng; b++)
		{
			if (c.eng[b].res != c.eng[1].res)
				NOTE(&c, C_OUTCOME, "op %" PRId64 ": %s says %s, A %s", i,
					 c.eng[b].role, outcome_name(c.eng[b].res),
					 outcome_name(c.eng[1].res));
			if (wa_engine_watermark(c.eng[b].eng) !=
				wa_engine_watermark(c.eng[1].eng))
				NOTE(&c, C_OUTCOME, "after op %" PRId64 ": %s's watermark %s,"
					 " A's %s", i, c.eng[b].role,
					 i128s(wa_engine_watermark(c.eng[b].eng)),
					 i128s(wa_engine_watermark(c.eng[1].eng)));
		}
		if (op->is_event && c.eng[1].res != WA_INGEST_DROPPED)
		{
			int			k = op->key;

			if (!c.touched[k])
			{
				c.touched[k] = true;
				c.touched_list[c.n_touched++] = k;
				c.tmin[k] = c.tmax[k] = op->time;
			}
			if (op->time < c.tmin[k])
				c.tmin[k] = op->time;
			if (op->time > c.tmax[k])
				c.tmax[k] = op->time;
		}
		ck_compare_panes(&c, "ingest/advance", i);

		if (c.plan[i] & CK_LIVE)
			ck_live_check(&c, i);
		if (c.plan[i] & CK_EMIT)
		{
			for (int b = 0; b < c.n_eng; b++)
				wa_engine_emit_late(c.eng[b].eng);
			ck_compare_panes(&c, "emit_late after", i);
		}
		if (c.plan[i] & CK_CKPT)
			ck_checkpoint(&c, i, &r);
	}

	for (int b = 0; b < c.n_eng; b++)
		wa_engine_flush(c.eng[b].eng);
	ck_compare_panes(&c, "flush after", st->n_ops);
	for (int b = 0; b < c.n_eng; b++)
	{
		wa_stats	s;

		wa_engine_get_stats(c.eng[b].eng, &s);
		if (s.mem_bytes != c.eng[b].base_mem)
			NOTE(&c, C_MEM, "%s after flush: mem_bytes %" PRIu64 ", %" PRIu64
				 " when created", c.eng[b].role, s.mem_bytes,
				 c.eng[b].base_mem);
	}
	ck_after_flush(&c, &r);

	printf("# %s: %" PRId64 " ops, %" PRId64 " checkpoints saving %" PRId64
		   " slices (%" PRId64 " live at the time; %" PRId64 " saved under a "
		   "tenth), %d restores, %" PRId64 " live panes; %.2fs\n", o->name,
		   st->n_ops, c.n_ckpts, c.n_saves, c.n_live_slices, c.n_small,
		   c.n_eng - 2, c.n_live_panes, now_seconds() - t0);
	for (int b = 0; b < c.n_eng; b++)
		ck_engine_end(&c, &c.eng[b]);
	for (int p = 0; p < C_COUNT; p++)
	{
		snprintf(name, sizeof(name), "%s: %s", o->name, ck_problem_names[p]);
		if (c.probs[p].count == 0)
			check(true, name, NULL);
		else
			check(false, name, "%" PRId64 " problem(s); first: %s",
				  c.probs[p].count, c.probs[p].first);
	}
	free(c.eng);
	free(c.plan);
	free(c.touched);
	free(c.tmin);
	free(c.tmax);
	free(c.touched_list);
}

/* Streams for the checkpoint runs: smaller versions of the diff cases. */
static const diff_case ckpt_cases[] = {
	{"ckpt tumbling 10/10", 1, {{10, 10, 0}}, 5, 20, 50, 1000000, 4000, 301,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt hopping 60/10", 1, {{60, 10, 0}}, 30, 60, 20, 0, 20000, 302,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt sliding 60/1", 1, {{60, 1, 0}}, 10, 30, 8, 500, 20000, 303,
	0, 0, false, false, 10000, true, 0, 0},
	{"ckpt hopping 1000/999 origin -17", 1, {{1000, 999, -17}}, 200, 1500, 10,
	0, 200000, 304, 0, 0, false, false, 20000, true, 0, 0},
	{"ckpt multi", MULTI3, 20, 40, 30, 0, 20000, 305,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt lateness 0 hopping 60/10", 1, {{60, 10, 0}}, 30, 0, 20, 0, 20000,
	306, 0, 0, false, false, 20000, false, 0, 0},
	{"ckpt epoch 1000 multi", MULTI3, 20, 40, 30, 0, 20000, 307,
	1000, 0, false, false, 20000, true, 0, 0},
	{"ckpt idle advances multi", MULTI3, 20, 40, 30, 0, 20000, 309,
	0, 777, false, false, 20000, true, 0, 0},
	{"ckpt idle advances far ahead", MULTI3, 20, 40, 30, 0, 20000, 310,
	0, 5000, false, false, 20000, true, 0, 300},
	{"ckpt negative times multi", 2, {{10, 10, 0}, {60, 10, -5}}, 20, 40, 20,
	-30000, 20000, 311, 0, 0, false, false, 20000, true, 0, 0},
	{"ckpt times near INT64_MIN", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MIN + 10, 5000, 312, 0, 0, false, false, 15000, true, 100, 0},
	{"ckpt times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 313, 0, 0, false, false, 15000, true, 100, 0},
	{"ckpt epoch 1000 times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 314, 1000, 0, false, false, 15000, true, 100, 0},
	{"ckpt times near INT64_MAX, slice width 10", 2,
	{{10, 10, 3}, {60, 10, 3}}, 20, 40, 10, INT64_MAX - 5000, 5000, 315,
	0, 0, false, false, 15000, true, 100, 0},
	{"ckpt aligned 10/20/40@20/60@10", 4,
	{{10, 10, 0}, {20, 20, 0}, {40, 20, 0}, {60, 10, 0}}, 20, 40, 30, 0, 20000,
	321, 0, 0, false, false, 20000, true, 0, 0},
	{"ckpt epoch 1000 aligned 10/20/40@20/60@10", 4,
	{{10, 10, 0}, {20, 20, 0}, {40, 20, 0}, {60, 10, 0}}, 20, 40, 30, 0, 20000,
	322, 1000, 0, false, false, 20000, true, 0, 0},
	{"ckpt one key multi", MULTI3, 20, 40, 1, 0, 20000, 316,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt 20000 distinct keys", 1, {{10, 10, 0}}, 5, 20, 20000, 0, 20000,
	317, 0, 0, false, true, 40000, true, 0, 0},
	{"ckpt byte keys multi", MULTI3, 20, 40, 200, 0, 20000, 318,
	0, 0, true, false, 20000, true, 0, 0},
	{"ckpt epoch 1000 byte keys", 1, {{60, 10, 0}}, 30, 60, 200, 0, 20000, 319,
	1000, 0, true, false, 20000, true, 0, 0},
	{"ckpt duplicate specs, origin INT64_MAX", 3,
	{{10, 10, 0}, {10, 10, 0}, {60, 10, INT64_MAX}}, 20, 40, 20, 0, 20000, 320,
	0, 0, false, false, 20000, true, 0, 0},
};

static void
run_ckpt_case(const diff_case *dc)
{
	stream		st;
	ck_opts		o;
	int			n_keys = diff_case_stream(dc, &st);

	memset(&o, 0, sizeof(o));
	o.name = dc->name;
	o.n_windows = dc->n_windows;
	o.windows = dc->windows;
	o.bound = dc->bound;
	o.lateness = dc->lateness;
	o.epoch = dc->epoch;
	o.seed = dc->seed * 7919;
	o.n_ckpt = 6;
	o.n_live = 3;
	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, st.n_events, n_keys);
	run_ckpt_stream(&o, &st);

	/*
	 * Restored engines start with empty rings of kept instances: shared
	 * windows must still give the same panes.
	 */
	if (dc->n_windows > 1)
	{
		char		name[160];

		snprintf(name, sizeof(name), "%s (shared windows)", dc->name);
		o.name = name;
		o.share_windows = true;
		run_ckpt_stream(&o, &st);
	}
	stream_free(&st);
}

/* Checkpoint runs on the streams of the int64-extreme tests. */
static void
test_ckpt_extremes(void)
{
	static const wa_window huge_windows[] = {{10, 10, 0}, {7, 7, 1},
	{1000, 999, 3}};
	stream		st;
	ck_opts		o;

	memset(&o, 0, sizeof(o));
	o.n_ckpt = 6;
	o.n_live = 3;

	make_huge_stream(&st, scaled(5000), 401);
	o.name = "ckpt bound and lateness INT64_MAX";
	o.n_windows = 3;
	o.windows = huge_windows;
	o.bound = INT64_MAX;
	o.lateness = INT64_MAX;
	o.seed = 402;
	run_ckpt_stream(&o, &st);
	o.name = "ckpt bound INT64_MAX, lateness INT64_MAX-100";
	o.lateness = INT64_MAX - 100;
	o.seed = 403;
	run_ckpt_stream(&o, &st);
	stream_free(&st);

	make_full_range_stream(&st, scaled(8000), 404);
	o.name = "ckpt full int64 range, slice width 1";
	o.n_windows = 2;
	o.windows = full_range_g1;
	o.bound = (int64_t) 1 << 58;
	o.lateness = (int64_t) 1 << 61;
	o.seed = 405;
	run_ckpt_stream(&o, &st);
	o.name = "ckpt full int64 range, slice width 2^60";
	o.windows = full_range_g60;
	o.seed = 406;
	run_ckpt_stream(&o, &st);
	stream_free(&st);
}

/* ---------- scripted checkpoint tests, on mini engines with int keys ---------- */

static void
mini_save(void *arg, const wa_key *key, int64_t slice, const void *acc,
		  uint32_t acc_size)
{
	ck_table_add(arg, (int) key->ival, slice, acc, acc_size);
}

/* Checkpoint m into table t (applying the saves); returns how many. */
static int64_t
mini_checkpoint(mini *m, ck_table *t, int64_t *expire_below,
				wa_time_state *time)
{
	ck_table	saves;
	int64_t		n;

	memset(&saves, 0, sizeof(saves));
	wa_engine_checkpoint(m->eng, mini_save, &saves, expire_below, time);
	n = saves.n;
	ck_sort(saves.e, (size_t) saves.n, sizeof(ck_entry), ck_entry_cmp);
	ck_table_apply(t, &saves, *expire_below);
	return n;
}

/* A fresh mini engine like src, restored from table t and time. */
static void
mini_restore(mini *dst, const mini *src, const ck_table *t,
			 const wa_time_state *time)
{
	mini_init(dst, src->cfg.windows, src->cfg.n_windows, src->cfg.bound,
			  src->cfg.lateness);
	wa_engine_restore_time(dst->eng, time);
	/* backwards, to exercise the sort */
	for (int64_t i = t->n; i-- > 0;)
	{
		wa_key		k = {t->e[i].key, NULL, 0};

		wa_engine_restore_slice(dst->eng, &k, t->e[i].slice, t->e[i].acc,
								wa_engine_acc_size(dst->eng));
	}
	wa_engine_restore_done(dst->eng);
}

/*
 * The cost of a checkpoint follows the changes: with 100,000 live keys, a
 * checkpoint after a few events on three keys saves three slices, and one
 * after nothing saves nothing.
 */
static void
test_checkpoint_cost(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	int64_t		n1;
	int64_t		n2;
	int64_t		n3;
	int64_t		n4;
	wa_result	res[N_AGGS];
	bool		value_ok = false;

	memset(&t, 0, sizeof(t));
	mini_init(&m, win, 1, 100, 1000000);
	for (int64_t k = 1; k <= 100000; k++)
		mini_ingest(&m, k, 5, 1, 0);
	n1 = mini_checkpoint(&m, &t, &eb, &time);
	for (int i = 0; i < 10; i++)
		mini_ingest(&m, 1 + i % 3, 6 + i % 3, 1, 0);
	n2 = mini_checkpoint(&m, &t, &eb, &time);
	n3 = mini_checkpoint(&m, &t, &eb, &time);
	mini_ingest(&m, 0, 17, 1, 0);	/* a new key, a new slice */
	mini_ingest(&m, 2, 25, 1, 0);	/* key 2: a second slice */
	n4 = mini_checkpoint(&m, &t, &eb, &time);
	check(n1 == 100000 && n2 == 3 && n3 == 0 && n4 == 2,
		  "checkpoint cost: 100000 keys, then 3 touched, then none, then 2",
		  "saved %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, n1, n2, n3,
		  n4);
	/* key 1 got events 0, 3, 6, 9 on top of its first: five in slice 0 */
	for (int64_t i = 0; i < t.n; i++)
		if (t.e[i].key == 1 && t.e[i].slice == 0)
		{
			wa_acc_finalize(wa_engine_layout(m.eng), t.e[i].acc, res);
			value_ok = res[AGG_COUNT_STAR].count == 5;
		}
	check(value_ok && t.n == 100002,
		  "checkpoint cost: the table holds every slice, with the new values",
		  "%" PRId64 " entries", t.n);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "checkpoint cost: memory released", NULL);
	ck_table_free(&t);
}

/*
 * A restored engine: windows that fired do not fire again, the others
 * fire as usual, and the first late pane after the restore reports
 * revision 2 whatever came before (wa_engine_restore_time).
 */
static void
test_restore_scripted(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		a;
	mini		b;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	wa_stats	s;

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 0, 20);
	mini_ingest(&a, 1, 5, 1, 0);
	mini_ingest(&a, 1, 15, 2, 0);	/* fires [0,10), revision 1 */
	mini_ingest(&a, 1, 7, 4, 0);	/* late */
	wa_engine_emit_late(a.eng);		/* [0,10) revision 2 */
	mini_checkpoint(&a, &t, &eb, &time);
	check(t.n == 2 && eb == -1 && time.wm == 15 && time.max_ts == 15 &&
		  time.seen_event,
		  "restore: checkpoint holds two slices and the time state",
		  "%" PRId64 " slices, expire_below %" PRId64 ", wm %s", t.n, eb,
		  i128s(time.wm));

	mini_restore(&b, &a, &t, &time);
	wa_engine_get_stats(b.eng, &s);
	check(s.n_keys == 1 && s.n_slices == 2 && s.events_in == 0 &&
		  wa_engine_watermark(b.eng) == 15,
		  "restore: one key, two slices, watermark 15, counters at zero",
		  "%" PRIu64 " keys, %" PRIu64 " slices", s.n_keys, s.n_slices);

	/* the same late event into both */
	mini_ingest(&a, 1, 8, 8, 0);
	mini_ingest(&b, 1, 8, 8, 0);
	wa_engine_emit_late(a.eng);
	wa_engine_emit_late(b.eng);
	check(a.n_panes == 3 && a.last.revision == 3 && b.n_panes == 1 &&
		  b.last.kind == WA_PANE_LATE && b.last.start == 0 &&
		  b.last.revision == 2 &&
		  b.last_results[AGG_SUM_A].sum == 13 &&
		  a.last_results[AGG_SUM_A].sum == 13,
		  "restore: late pane of a fired window, revision 3 vs 2 after "
		  "restore, same value", "A revision %" PRId64 ", B %" PRId64
		  " (%" PRId64 " panes)", a.last.revision, b.last.revision,
		  b.n_panes);

	/* the flush fires [10,20) once in each, and not [0,10) again */
	wa_engine_flush(a.eng);
	wa_engine_flush(b.eng);
	check(b.n_panes == 2 && b.last.kind == WA_PANE_ON_TIME &&
		  b.last.start == 10 && b.last.revision == 1 &&
		  b.last_results[AGG_SUM_A].sum == 2 && a.n_panes == 4,
		  "restore: only the unfired window fires after the restore",
		  "%" PRId64 " panes, last [%s,%s)", b.n_panes, i128s(b.last.start),
		  i128s(b.last.end));
	check(mini_done(&a) && mini_done(&b), "restore: memory released", NULL);
	ck_table_free(&t);
}

/*
 * expire_below at the ends of int64: INT64_MIN before any event; with a
 * slice width of 1, slice INT64_MAX exists, and once it expires
 * expire_below stops at INT64_MAX, so the table keeps it: a restore must
 * ignore it.
 */
static void
test_checkpoint_int64_ends(void)
{
	static const wa_window win[] = {{1, 1, 0}};
	mini		a;
	mini		b;
	mini		c;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	wa_time_state time_live;
	wa_stats	s;
	int64_t		n;

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 0, 0);
	n = mini_checkpoint(&a, &t, &eb, &time);
	check(n == 0 && eb == INT64_MIN && time.wm == WA_TICK_MIN &&
		  !time.seen_event,
		  "int64 ends: checkpoint before any event",
		  "%" PRId64 " saves, expire_below %" PRId64 ", wm %s", n, eb,
		  i128s(time.wm));

	mini_ingest(&a, 1, INT64_MAX, 1, 0);
	n = mini_checkpoint(&a, &t, &eb, &time_live);
	check(n == 1 && t.n == 1 && t.e[0].slice == INT64_MAX && eb == INT64_MAX,
		  "int64 ends: slice INT64_MAX saved, expire_below INT64_MAX",
		  "%" PRId64 " saves, expire_below %" PRId64, n, eb);

	/* restored before it expired: it still fires */
	mini_restore(&c, &a, &t, &time_live);
	wa_engine_flush(c.eng);
	check(c.n_panes == 1 && c.last.start == INT64_MAX &&
		  c.last_results[AGG_COUNT_STAR].count == 1,
		  "int64 ends: restored slice INT64_MAX fires",
		  "%" PRId64 " panes", c.n_panes);

	wa_engine_advance(a.eng, WA_TICK_MAX);
	n = mini_checkpoint(&a, &t, &eb, &time);
	check(n == 0 && eb == INT64_MAX && time.wm == WA_TICK_MAX && t.n == 1,
		  "int64 ends: after it expired, expire_below stays INT64_MAX",
		  "%" PRId64 " saves, expire_below %" PRId64 ", %" PRId64
		  " left in the table", n, eb, t.n);
	mini_restore(&b, &a, &t, &time);
	wa_engine_get_stats(b.eng, &s);
	check(s.n_slices == 0 && s.n_keys == 0 &&
		  mini_ingest(&b, 1, INT64_MAX, 1, 0) == WA_INGEST_DROPPED,
		  "int64 ends: restore ignores the expired slice",
		  "%" PRIu64 " slices, %" PRIu64 " keys", s.n_slices, s.n_keys);
	wa_engine_flush(b.eng);
	check(b.n_panes == 0, "int64 ends: nothing fires after that restore",
		  "%" PRId64 " panes", b.n_panes);
	wa_engine_flush(a.eng);
	check(mini_done(&a) && mini_done(&b) && mini_done(&c),
		  "int64 ends: memory released", NULL);
	ck_table_free(&t);
}

/*
 * Restore tolerates what a table scan may hand it: slices in any order and
 * a slice given twice (one copy is kept).
 */
static void
test_restore_order(void)
{
	static const wa_window win[] = {{60, 10, 0}};
	mini		a;
	mini		b;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	wa_stats	s;
	rng			r = {99};
	int64_t		pa;
	int64_t    *order;

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 1000, 1000);
	for (int i = 0; i < 2000; i++)
		mini_ingest(&a, (int64_t) rng_below(&r, 5),
					(int64_t) rng_below(&r, 1000), 1, 0);
	mini_checkpoint(&a, &t, &eb, &time);

	order = malloc(sizeof(int64_t) * (t.n + 1));
	for (int64_t i = 0; i < t.n; i++)
		order[i] = i;
	for (int64_t i = t.n - 1; i > 0; i--)
	{
		int64_t		j = (int64_t) rng_below(&r, (uint64_t) i + 1);
		int64_t		x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	mini_init(&b, win, 1, 1000, 1000);
	wa_engine_restore_time(b.eng, &time);
	for (int64_t i = 0; i < t.n; i++)
	{
		/* every slice in a random order, every tenth one twice */
		int64_t		j = order[i];
		wa_key		k = {t.e[j].key, NULL, 0};

		wa_engine_restore_slice(b.eng, &k, t.e[j].slice, t.e[j].acc,
								wa_engine_acc_size(b.eng));
		if (i % 10 == 0)
			wa_engine_restore_slice(b.eng, &k, t.e[j].slice, t.e[j].acc,
									wa_engine_acc_size(b.eng));
	}
	wa_engine_restore_done(b.eng);
	free(order);
	wa_engine_get_stats(b.eng, &s);
	check(s.n_slices == (uint64_t) t.n && s.n_keys == 5,
		  "restore order: any order, repeats dropped",
		  "%" PRIu64 " slices for %" PRId64, s.n_slices, t.n);
	pa = a.n_panes;
	wa_engine_flush(a.eng);
	wa_engine_flush(b.eng);
	check(b.n_panes == a.n_panes - pa && b.n_panes > 0,
		  "restore order: the restored engine fires what the original does",
		  "%" PRId64 " vs %" PRId64, b.n_panes, a.n_panes - pa);
	check(mini_done(&a) && mini_done(&b), "restore order: memory released",
		  NULL);
	ck_table_free(&t);
}

int
main(int argc, char **argv)
{
	double		t0 = now_seconds();
	const char *only = argc > 1 ? argv[1] : NULL;

	if (only == NULL || strcmp(only, "unit") == 0)
	{
		test_assertions_on();
		test_config_check();
		test_slice_width();
		test_empty();
		test_default_allocator();
		test_plan_memory();
		test_late_within_lateness();
		test_late_from_kept();
		test_past_lateness();
		test_boundaries();
		test_partial();
		test_late_at_expiry();
		test_advance();
		test_nan();
		test_byte_keys_empty();
		test_key_visits();
		test_checkpoint_cost();
		test_restore_scripted();
		test_checkpoint_int64_ends();
		test_restore_order();
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
		test_shared_windows();
		for (size_t i = 0; i < sizeof(ckpt_cases) / sizeof(ckpt_cases[0]); i++)
			run_ckpt_case(&ckpt_cases[i]);
		test_ckpt_extremes();
	}
	else if (only != NULL && strcmp(only, "unit") != 0)
	{
		/* a single differential case by (prefix of its) name */
		for (size_t i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++)
			if (strncmp(diff_cases[i].name, only, strlen(only)) == 0)
				run_diff_case(&diff_cases[i]);
		for (size_t i = 0; i < sizeof(ckpt_cases) / sizeof(ckpt_cases[0]); i++)
			if (strncmp(ckpt_cases[i].name, only, strlen(only)) == 0)
				run_ckpt_case(&ckpt_cases[i]);
		if (strncmp("ckpt extremes", only, strlen(only)) == 0)
			test_ckpt_extremes();
	}

	printf("# total %.1fs\n", now_seconds() - t0);
	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed > 0 ? 1 : 0;
}
