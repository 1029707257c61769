/*-------------------------------------------------------------------------
 *
 * harness.c
 *	  The shared harness of the engine's test programs (see harness.h).
 *
 * test/engine/harness.c
 *
 *-------------------------------------------------------------------------
 */
/* clock_gettime under -std=c11 */
#define _POSIX_C_SOURCE 199309L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

/* Format a 128-bit tick; a small ring of buffers serves one printf. */
const char *
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
const char *
kind_name(wa_agg_kind kind)
{
	return wa_agg_kind_name(kind);
}

const char *
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

double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* ---------- Deterministic PRNG (splitmix64) ---------- */

static uint64_t
rng_next(rng *r)
{
	uint64_t	z = (r->state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
uint64_t
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

/* ---------- Counting allocator ---------- */
#define BLOCK_MAGIC 0x5741424c4f434bULL
#define BLOCK_HDR 16			/* keeps the user pointer 16-byte aligned */

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

void
ca_setup(counting_alloc *ca, wa_allocator *al)
{
	memset(ca, 0, sizeof(counting_alloc));
	al->alloc = ca_alloc;
	al->realloc = ca_realloc;
	al->free = ca_free;
	al->arg = ca;
}

/* ---------- Key table ---------- */

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

int
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
int
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

const wa_agg_spec test_aggs[] = {
	{WA_AGG_COUNT_STAR, IN_A, false},
	{WA_AGG_COUNT, IN_A, false},
	{WA_AGG_SUM_INT, IN_A, false},
	{WA_AGG_MIN_INT, IN_A, false},
	{WA_AGG_MAX_INT, IN_A, false},
	{WA_AGG_SUM_INT, IN_B, false},
	{WA_AGG_AVG_INT, IN_B, false},
	{WA_AGG_MIN_INT, IN_B, false},
	{WA_AGG_MAX_INT, IN_B, false},
	{WA_AGG_COUNT, IN_F, false},
	{WA_AGG_SUM_FLOAT, IN_F, false},
	{WA_AGG_MIN_FLOAT, IN_F, false},
	{WA_AGG_MAX_FLOAT, IN_F, false},
	{WA_AGG_AVG_FLOAT, IN_F, false},
	{WA_AGG_VAR_SAMP, IN_F, false},
	{WA_AGG_VAR_POP, IN_F, false},
	{WA_AGG_STDDEV_SAMP, IN_F, false},
	{WA_AGG_STDDEV_POP, IN_F, false},
	{WA_AGG_SUM_DECIMAL, IN_D, false},
	{WA_AGG_AVG_DECIMAL, IN_D, false},
};

_Static_assert(sizeof(test_aggs) / sizeof(test_aggs[0]) == N_AGGS,
			   "N_AGGS counts test_aggs");

/* ---------- The tests' generic aggregates ---------- */

/*
 * A state on the heap, as a PostgreSQL aggregate's is: an exact sum and a
 * count, or (idempotent) the maximum and a count.  Its size varies, as
 * generic states do: "bytes" grows with the inputs it holds (up to 64),
 * so that reallocations and the memory accounting see sizes that change.
 */
typedef struct test_gstate
{
	wa_int128	sum;			/* or the maximum */
	int64_t		n;
	uint32_t	bytes;			/* of the whole allocation */
} test_gstate;

static uint32_t
gstate_bytes(int64_t n)
{
	return (uint32_t) sizeof(test_gstate) + (uint32_t) (n < 64 ? n : 64) * 8;
}

static test_gstate *
gstate_alloc(wa_mem *mem, uint32_t bytes)
{
	test_gstate *g = mem != NULL ? wa_mem_alloc(mem, bytes) : malloc(bytes);

	memset(g, 0, bytes);
	g->bytes = bytes;
	return g;
}

static void
gstate_free(wa_mem *mem, test_gstate *g)
{
	if (mem != NULL)
		wa_mem_free(mem, g, g->bytes);
	else
		free(g);
}

/* Make *state room for n inputs, keeping what it holds. */
static test_gstate *
gstate_grow(wa_mem *mem, void **state, int64_t n)
{
	test_gstate *g = *state;
	uint32_t	bytes = gstate_bytes(n);

	if (g == NULL)
		g = gstate_alloc(mem, bytes);
	else if (g->bytes != bytes)
	{
		test_gstate *bigger = gstate_alloc(mem, bytes);

		bigger->sum = g->sum;
		bigger->n = g->n;
		gstate_free(mem, g);
		g = bigger;
	}
	*state = g;
	return g;
}

static void
test_transition(void *arg, wa_mem *mem, int agg, void **state,
				const wa_value *values)
{
	const wa_agg_spec *spec = &((const wa_agg_spec *) arg)[agg];
	const wa_value *v = &values[spec->input];
	test_gstate *g;

	if (v->isnull)
		return;
	g = gstate_grow(mem, state, *state != NULL ?
					((test_gstate *) *state)->n + 1 : 1);
	if (spec->idempotent)
		g->sum = g->n == 0 || v->i > g->sum ? v->i : g->sum;
	else
		g->sum += v->i;
	g->n++;
}

static void
test_combine(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	const wa_agg_spec *spec = &((const wa_agg_spec *) arg)[agg];
	const test_gstate *s = src;
	test_gstate *d;
	int64_t		n_before = *dst != NULL ? ((test_gstate *) *dst)->n : 0;

	if (s->n == 0)
		return;
	d = gstate_grow(mem, dst, n_before + s->n);
	if (spec->idempotent)
		d->sum = n_before == 0 || s->sum > d->sum ? s->sum : d->sum;
	else
		d->sum += s->sum;
	d->n = n_before + s->n;
}

static void
test_copy(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	const test_gstate *s = src;
	test_gstate *d = gstate_alloc(mem, s->bytes);

	(void) arg;
	(void) agg;
	d->sum = s->sum;
	d->n = s->n;
	*dst = d;
}

static void
test_final(void *arg, int agg, const void *state, wa_result *result)
{
	const wa_agg_spec *spec = &((const wa_agg_spec *) arg)[agg];
	const test_gstate *g = state;

	memset(result, 0, sizeof(*result));
	result->isnull = g == NULL || g->n == 0;
	if (result->isnull)
		return;
	result->count = g->n;
	if (spec->idempotent)
		result->i = (int64_t) g->sum;
	else
		result->sum = g->sum;
	result->datum = 1;			/* final ran */
}

static void
test_release(void *arg, wa_mem *mem, int agg, void *state)
{
	(void) arg;
	(void) agg;
	gstate_free(mem, state);
}

void
test_generic_init(wa_agg_generic *generic, const wa_agg_spec *aggs)
{
	generic->arg = (void *) aggs;
	generic->transition = test_transition;
	generic->combine = test_combine;
	generic->copy = test_copy;
	generic->final = test_final;
	generic->release = test_release;
	generic->final_writes = false;
}

wa_agg_kind
test_generic_as(const wa_agg_spec *spec)
{
	if (spec->kind != WA_AGG_GENERIC)
		return spec->kind;
	return spec->idempotent ? WA_AGG_MAX_INT : WA_AGG_SUM_INT;
}

/* ---------- Streams ---------- */
void
stream_init(stream *st, bool byte_keys)
{
	memset(st, 0, sizeof(stream));
	st->keys.bytes = byte_keys;
}

void
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

void
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

void
stream_advance(stream *st, wa_tick wm)
{
	stream_op  *op = stream_push(st);

	op->is_event = false;
	op->key = -1;
	op->advance_to = wm;
}

/* Random values for one event (see test_aggs for what each input is for). */
void
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
	/* numeric(18, s): up to 18 digits, and now and then a NaN */
	v[IN_D].isnull = rng_below(r, 10) == 0;
	if (rng_below(r, 50) == 0)
		v[IN_D].f = NAN;
	else if (rng_below(r, 20) == 0)
		v[IN_D].i = rng_below(r, 2) ? 999999999999999999 : -999999999999999999;
	else
		v[IN_D].i = rng_range(r, -1000000000, 1000000000);
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

int64_t
opt_int(const char *name, int64_t dflt)
{
	const char *s = getenv(name);

	return (s && *s) ? strtoll(s, NULL, 10) : dflt;
}

/* Stream length for a test written for n events at full size. */
int64_t
scaled(int64_t n)
{
	int64_t		events = opt_int("WA_TEST_EVENTS", 100000);
	int64_t		v = (int64_t) ((__int128) n * events / 100000);

	return v < 50 ? 50 : v;
}

/* Generate a case's stream (scaled); returns the number of keys. */
int
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

/*
 * Bound and lateness of INT64_MAX with events at both ends of the time
 * range: every deadline computed from them lies outside int64.
 */
void
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

const wa_window full_range_g1[2] = {
	{(int64_t) 1 << 62, (int64_t) 1 << 62, 0},
	{(int64_t) 3 << 60, (int64_t) 1 << 60, 12345},
};
const wa_window full_range_g60[2] = {
	{(int64_t) 1 << 62, (int64_t) 1 << 62, 5},
	{(int64_t) 3 << 60, (int64_t) 1 << 60, ((int64_t) 1 << 60) + 5},
};

/*
 * Huge windows over the whole int64 time range: base time sweeps from
 * INT64_MIN to INT64_MAX and delays are up to 2^62 ticks.  Run with a slice
 * width of 1 (huge slice and window numbers) and of 2^60 with a grid offset
 * (window starts below INT64_MIN, slice numbers near the floor).
 */
void
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

void
mini_emit(void *arg, const wa_pane *pane)
{
	mini	   *m = arg;

	m->n_panes++;
	m->last = *pane;
	memcpy(m->last_results, pane->results, sizeof(wa_result) * N_AGGS);
}

void
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

wa_ingest_result
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

bool
mini_done(mini *m)
{
	wa_engine_destroy(m->eng);
	return m->ca.live_bytes == 0 && m->ca.live_blocks == 0 && m->ca.errors == 0;
}

void
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
void
ck_sort(void *base, size_t n, size_t size,
		int (*cmp) (const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

int
ck_entry_cmp(const void *a, const void *b)
{
	const ck_entry *x = a;
	const ck_entry *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

void
ck_table_free(ck_table *t)
{
	for (int64_t i = 0; i < t->n; i++)
		free(t->e[i].acc);
	free(t->e);
	memset(t, 0, sizeof(ck_table));
}

void
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
void
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
bool
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

