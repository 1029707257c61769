/*-------------------------------------------------------------------------
 *
 * wa_agg.c
 *	  Mergeable aggregate kernels over a flat accumulator.
 *
 * Layout: an int64 event count (the accumulator header, which also answers
 * count(*) and "does this slice hold data"), then each aggregate's state at
 * its offset.  The kernels' states are plain old data, written to a
 * checkpoint as bytes; a generic aggregate's is a pointer to a state of
 * the caller's (wa_agg_generic), which is why accumulators are copied and
 * dropped through wa_acc_copy and wa_acc_release.
 *
 * src/engine/wa_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_agg.h"
#include "wa_assert.h"

#include <math.h>
#include <string.h>

typedef struct acc_count
{
	int64_t		n;
} acc_count;

typedef struct acc_sum_int
{
	wa_int128	sum;
	int64_t		n;
} acc_sum_int;

typedef struct acc_float
{
	double		sum;			/* or the extreme, for min/max */
	int64_t		n;
} acc_float;

typedef struct acc_int
{
	int64_t		v;
	int64_t		n;
} acc_int;

/* A sum of fixed-point values, their number, and the NaNs met. */
typedef struct acc_decimal
{
	wa_int128	sum;
	int64_t		n;
	int64_t		nans;
} acc_decimal;

/* Youngs-Cramer: N, sum of x, sum of squared deviations from the mean. */
typedef struct acc_var
{
	double		n;
	double		sx;
	double		sxx;
} acc_var;

#define ACC_HEADER_SIZE ((uint32_t) sizeof(int64_t))

__extension__ typedef unsigned __int128 wa_uint128;

/*
 * Counts and exact sums are added with wrap-around, in updates and merges:
 * accumulators built from events never come near the limits (a count is at
 * most the events ingested, a sum of n int64 values is below n * 2^63), but
 * a restored checkpoint is only checked slice by slice (wa_acc_is_valid),
 * and the merge of many slices that passed, and events added to it, must
 * stay defined behaviour, however wrong the numbers.  The adds compile to
 * the same instructions as plain ones.
 */
static inline int64_t
add_wrapping(int64_t a, int64_t b)
{
	return (int64_t) ((uint64_t) a + (uint64_t) b);
}

static inline wa_int128
add_wrapping128(wa_int128 a, wa_int128 b)
{
	return (wa_int128) ((wa_uint128) a + (wa_uint128) b);
}

static uint32_t
state_size(wa_agg_kind kind)
{
	switch (kind)
	{
		case WA_AGG_COUNT_STAR:
			return 0;
		case WA_AGG_COUNT:
			return sizeof(acc_count);
		case WA_AGG_SUM_INT:
		case WA_AGG_AVG_INT:
			return sizeof(acc_sum_int);
		case WA_AGG_SUM_FLOAT:
		case WA_AGG_AVG_FLOAT:
		case WA_AGG_MIN_FLOAT:
		case WA_AGG_MAX_FLOAT:
			return sizeof(acc_float);
		case WA_AGG_MIN_INT:
		case WA_AGG_MAX_INT:
			return sizeof(acc_int);
		case WA_AGG_VAR_SAMP:
		case WA_AGG_VAR_POP:
		case WA_AGG_STDDEV_SAMP:
		case WA_AGG_STDDEV_POP:
			return sizeof(acc_var);
		case WA_AGG_SUM_DECIMAL:
		case WA_AGG_AVG_DECIMAL:
			return sizeof(acc_decimal);
		case WA_AGG_GENERIC:
			return sizeof(uint64_t);	/* a pointer, in a 64-bit word */
	}
	return 0;
}

/* The generic state pointer at offset off of an accumulator. */
static inline void **
generic_slot(void *acc, uint32_t off)
{
	return (void **) ((char *) acc + off);
}

static inline void *
generic_state(const void *acc, uint32_t off)
{
	return *(void *const *) ((const char *) acc + off);
}

void
wa_agg_layout_init(wa_agg_layout *layout, int n_aggs, wa_agg_spec *aggs,
				   uint32_t *offsets)
{
	uint32_t	off = ACC_HEADER_SIZE;

	_Static_assert(sizeof(void *) <= sizeof(uint64_t),
				   "a generic state pointer fits its slot");
	layout->n_aggs = n_aggs;
	layout->aggs = aggs;
	layout->offsets = offsets;
	layout->n_generic = 0;
	layout->generic = NULL;
	layout->mem = NULL;
	layout->final_reads = true;
	for (int i = 0; i < n_aggs; i++)
	{
		offsets[i] = off;
		off += state_size(aggs[i].kind);
		if (aggs[i].kind == WA_AGG_GENERIC)
			layout->n_generic++;
	}
	/* every state is a multiple of 8 bytes, so the total is too */
	layout->acc_size = off;
}

void
wa_acc_init(const wa_agg_layout *layout, void *acc)
{
	/* all zeroes: no events, and a NULL (initial) generic state */
	memset(acc, 0, layout->acc_size);
}

void
wa_acc_release(const wa_agg_layout *layout, void *acc)
{
	if (layout->n_generic == 0)
		return;
	for (int i = 0; i < layout->n_aggs; i++)
	{
		void	  **slot;

		if (layout->aggs[i].kind != WA_AGG_GENERIC)
			continue;
		slot = generic_slot(acc, layout->offsets[i]);
		if (*slot != NULL)
			layout->generic->release(layout->generic->arg, layout->mem, i,
									 *slot);
		*slot = NULL;
	}
}

void
wa_acc_reset(const wa_agg_layout *layout, void *acc)
{
	wa_acc_release(layout, acc);
	wa_acc_init(layout, acc);
}

void
wa_acc_copy(const wa_agg_layout *layout, void *dst, const void *src)
{
	memcpy(dst, src, layout->acc_size);
	if (layout->n_generic == 0)
		return;
	/* dst owns nothing of src's, even if a copy below fails */
	for (int i = 0; i < layout->n_aggs; i++)
		if (layout->aggs[i].kind == WA_AGG_GENERIC)
			*generic_slot(dst, layout->offsets[i]) = NULL;
	for (int i = 0; i < layout->n_aggs; i++)
	{
		const void *from;

		if (layout->aggs[i].kind != WA_AGG_GENERIC)
			continue;
		from = generic_state(src, layout->offsets[i]);
		if (from != NULL)
			layout->generic->copy(layout->generic->arg, layout->mem, i,
								  generic_slot(dst, layout->offsets[i]), from);
	}
}

/*
 * SQL orders NaN above every other float; min and max must agree with
 * ORDER BY, so comparisons go through these.
 */
static inline bool
float_gt(double a, double b)
{
	if (isnan(a))
		return !isnan(b);
	if (isnan(b))
		return false;
	return a > b;
}

static inline void
var_accum(acc_var *s, double x)
{
	double		n_old = s->n;

	s->n += 1.0;
	s->sx += x;
	if (n_old > 0.0)
	{
		double		tmp = x * s->n - s->sx;

		s->sxx += tmp * tmp / (n_old * s->n);
		/* an infinite input makes the deviation undefined */
		if (isinf(s->sx) || isinf(x))
			s->sxx = NAN;
	}
	else
		s->sxx = (isinf(x) || isnan(x)) ? NAN : 0.0;
}

static inline void
var_combine(acc_var *d, const acc_var *s)
{
	double		n;
	double		tmp;

	if (s->n == 0.0)
		return;
	if (d->n == 0.0)
	{
		*d = *s;
		return;
	}
	n = d->n + s->n;
	tmp = d->sx / d->n - s->sx / s->n;
	d->sxx = d->sxx + s->sxx + d->n * s->n * tmp * tmp / n;
	d->sx += s->sx;
	d->n = n;
}

void
wa_acc_update(const wa_agg_layout *layout, void *acc, const wa_value *values)
{
	char	   *base = acc;

	const wa_agg_spec *aggs = layout->aggs;
	const uint32_t *offsets = layout->offsets;
	int			n = layout->n_aggs;

	*(int64_t *) base = add_wrapping(*(int64_t *) base, 1);
	for (int i = 0; i < n; i++)
	{
		wa_agg_kind kind = aggs[i].kind;
		char	   *st;
		const wa_value *v;

		/* count(*) is the accumulator header, counted above */
		if (kind == WA_AGG_COUNT_STAR)
			continue;
		if (kind == WA_AGG_GENERIC)
		{
			layout->generic->transition(layout->generic->arg, layout->mem, i,
										generic_slot(acc, offsets[i]), values);
			continue;
		}
		v = &values[aggs[i].input];
		if (v->isnull)
			continue;
		st = base + offsets[i];
		switch (kind)
		{
			case WA_AGG_COUNT_STAR:
			case WA_AGG_GENERIC:
				break;
			case WA_AGG_COUNT:
				((acc_count *) st)->n = add_wrapping(((acc_count *) st)->n, 1);
				break;
			case WA_AGG_SUM_INT:
			case WA_AGG_AVG_INT:
				((acc_sum_int *) st)->sum = add_wrapping128(((acc_sum_int *) st)->sum, v->i);
				((acc_sum_int *) st)->n = add_wrapping(((acc_sum_int *) st)->n, 1);
				break;
			case WA_AGG_SUM_FLOAT:
			case WA_AGG_AVG_FLOAT:
				((acc_float *) st)->sum += v->f;
				((acc_float *) st)->n = add_wrapping(((acc_float *) st)->n, 1);
				break;
			case WA_AGG_MIN_INT:
				{
					acc_int    *s = (acc_int *) st;

					if (s->n == 0 || v->i < s->v)
						s->v = v->i;
					s->n = add_wrapping(s->n, 1);
					break;
				}
			case WA_AGG_MAX_INT:
				{
					acc_int    *s = (acc_int *) st;

					if (s->n == 0 || v->i > s->v)
						s->v = v->i;
					s->n = add_wrapping(s->n, 1);
					break;
				}
			case WA_AGG_MIN_FLOAT:
				{
					acc_float  *s = (acc_float *) st;

					if (s->n == 0 || float_gt(s->sum, v->f))
						s->sum = v->f;
					s->n = add_wrapping(s->n, 1);
					break;
				}
			case WA_AGG_MAX_FLOAT:
				{
					acc_float  *s = (acc_float *) st;

					if (s->n == 0 || float_gt(v->f, s->sum))
						s->sum = v->f;
					s->n = add_wrapping(s->n, 1);
					break;
				}
			case WA_AGG_VAR_SAMP:
			case WA_AGG_VAR_POP:
			case WA_AGG_STDDEV_SAMP:
			case WA_AGG_STDDEV_POP:
				var_accum((acc_var *) st, v->f);
				break;
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				{
					acc_decimal *s = (acc_decimal *) st;

					if (isnan(v->f))
						s->nans = add_wrapping(s->nans, 1);
					else
					{
						s->sum = add_wrapping128(s->sum, v->i);
						s->n = add_wrapping(s->n, 1);
					}
					break;
				}
		}
	}
}

void
wa_acc_merge(const wa_agg_layout *layout, void *dst, const void *src)
{
	char	   *d = dst;
	const char *s = src;

	*(int64_t *) d = add_wrapping(*(int64_t *) d, *(const int64_t *) s);
	for (int i = 0; i < layout->n_aggs; i++)
	{
		char	   *ds = d + layout->offsets[i];
		const char *ss = s + layout->offsets[i];

		switch (layout->aggs[i].kind)
		{
			case WA_AGG_COUNT_STAR:
				break;
			case WA_AGG_GENERIC:
				if (generic_state(src, layout->offsets[i]) != NULL)
					layout->generic->combine(layout->generic->arg, layout->mem,
											 i, generic_slot(dst, layout->offsets[i]),
											 generic_state(src, layout->offsets[i]));
				break;
			case WA_AGG_COUNT:
				((acc_count *) ds)->n = add_wrapping(((acc_count *) ds)->n,
													 ((const acc_count *) ss)->n);
				break;
			case WA_AGG_SUM_INT:
			case WA_AGG_AVG_INT:
				{
					acc_sum_int *a = (acc_sum_int *) ds;
					const acc_sum_int *b = (const acc_sum_int *) ss;

					a->sum = add_wrapping128(a->sum, b->sum);
					a->n = add_wrapping(a->n, b->n);
					break;
				}
			case WA_AGG_SUM_FLOAT:
			case WA_AGG_AVG_FLOAT:
				((acc_float *) ds)->sum += ((const acc_float *) ss)->sum;
				((acc_float *) ds)->n = add_wrapping(((acc_float *) ds)->n,
													 ((const acc_float *) ss)->n);
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				{
					acc_int    *a = (acc_int *) ds;
					const acc_int *b = (const acc_int *) ss;
					bool		is_min = layout->aggs[i].kind == WA_AGG_MIN_INT;

					if (b->n == 0)
						break;
					if (a->n == 0 || (is_min ? b->v < a->v : b->v > a->v))
						a->v = b->v;
					a->n = add_wrapping(a->n, b->n);
					break;
				}
			case WA_AGG_MIN_FLOAT:
			case WA_AGG_MAX_FLOAT:
				{
					acc_float  *a = (acc_float *) ds;
					const acc_float *b = (const acc_float *) ss;
					bool		is_min = layout->aggs[i].kind == WA_AGG_MIN_FLOAT;

					if (b->n == 0)
						break;
					if (a->n == 0 ||
						(is_min ? float_gt(a->sum, b->sum) : float_gt(b->sum, a->sum)))
						a->sum = b->sum;
					a->n = add_wrapping(a->n, b->n);
					break;
				}
			case WA_AGG_VAR_SAMP:
			case WA_AGG_VAR_POP:
			case WA_AGG_STDDEV_SAMP:
			case WA_AGG_STDDEV_POP:
				var_combine((acc_var *) ds, (const acc_var *) ss);
				break;
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				{
					acc_decimal *a = (acc_decimal *) ds;
					const acc_decimal *b = (const acc_decimal *) ss;

					a->sum = add_wrapping128(a->sum, b->sum);
					a->n = add_wrapping(a->n, b->n);
					a->nans = add_wrapping(a->nans, b->nans);
					break;
				}
		}
	}
}

void
wa_acc_finalize(const wa_agg_layout *layout, const void *acc,
				wa_result *results)
{
	const char *base = acc;

	for (int i = 0; i < layout->n_aggs; i++)
	{
		const char *st = base + layout->offsets[i];
		wa_result  *r = &results[i];

		memset(r, 0, sizeof(*r));
		switch (layout->aggs[i].kind)
		{
			case WA_AGG_COUNT_STAR:
				r->count = *(const int64_t *) base;
				break;
			case WA_AGG_GENERIC:
				layout->generic->final(layout->generic->arg, i,
									   generic_state(acc, layout->offsets[i]),
									   r);
				break;
			case WA_AGG_COUNT:
				r->count = ((const acc_count *) st)->n;
				break;
			case WA_AGG_SUM_INT:
			case WA_AGG_AVG_INT:
				r->sum = ((const acc_sum_int *) st)->sum;
				r->count = ((const acc_sum_int *) st)->n;
				r->isnull = r->count == 0;
				break;
			case WA_AGG_SUM_FLOAT:
			case WA_AGG_MIN_FLOAT:
			case WA_AGG_MAX_FLOAT:
				r->f = ((const acc_float *) st)->sum;
				r->count = ((const acc_float *) st)->n;
				r->isnull = r->count == 0;
				break;
			case WA_AGG_AVG_FLOAT:
				r->count = ((const acc_float *) st)->n;
				r->isnull = r->count == 0;
				if (!r->isnull)
					r->f = ((const acc_float *) st)->sum / (double) r->count;
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				r->i = ((const acc_int *) st)->v;
				r->count = ((const acc_int *) st)->n;
				r->isnull = r->count == 0;
				break;
			case WA_AGG_VAR_SAMP:
			case WA_AGG_STDDEV_SAMP:
			case WA_AGG_VAR_POP:
			case WA_AGG_STDDEV_POP:
				{
					const acc_var *s = (const acc_var *) st;
					bool		samp = layout->aggs[i].kind == WA_AGG_VAR_SAMP ||
						layout->aggs[i].kind == WA_AGG_STDDEV_SAMP;
					bool		sqrt_it = layout->aggs[i].kind == WA_AGG_STDDEV_SAMP ||
						layout->aggs[i].kind == WA_AGG_STDDEV_POP;

					/* n is a whole number below 2^63 (wa_acc_is_valid) */
					r->count = s->n < 0x1p63 ? (int64_t) s->n : INT64_MAX;
					if (s->n < (samp ? 2.0 : 1.0))
					{
						r->isnull = true;
						break;
					}
					r->f = s->sxx / (samp ? s->n - 1.0 : s->n);
					if (sqrt_it)
						r->f = sqrt(r->f);
					break;
				}
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				{
					const acc_decimal *s = (const acc_decimal *) st;

					r->sum = s->sum;
					r->count = s->n;
					r->i = s->nans;
					/* NULL only without any input: a NaN is one */
					r->isnull = s->n == 0 && s->nans == 0;
					break;
				}
		}
	}
}

bool
wa_acc_is_empty(const wa_agg_layout *layout, const void *acc)
{
	(void) layout;
	return *(const int64_t *) acc == 0;
}

/*
 * Whether an accumulator read from a checkpoint could have been built from
 * events: an event count in [0, 2^62] (2^62 events in one slice would take
 * centuries to ingest, and the bound leaves room to add more), every other
 * count in [0, event count], a variance's count a whole number, an exact
 * sum within what that many int64 values can add up to.  Floats may be anything,
 * NaN and infinities included, as the inputs may.  Each count is at most
 * the event count.  (Many slices that pass may still add up past the
 * limits: the kernels wrap then, see add_wrapping.)
 */
bool
wa_acc_is_valid(const wa_agg_layout *layout, const void *acc)
{
	const char *base = acc;
	const int64_t max_count = (int64_t) 1 << 62;

	const int64_t events = *(const int64_t *) base;

	if (events < 0 || events > max_count)
		return false;
#define COUNT_OK(n) ((n) >= 0 && (n) <= events)
	for (int i = 0; i < layout->n_aggs; i++)
	{
		const char *st = base + layout->offsets[i];

		switch (layout->aggs[i].kind)
		{
			case WA_AGG_COUNT_STAR:
				break;
			case WA_AGG_GENERIC:
				break;			/* the caller checked its state */
			case WA_AGG_COUNT:
				if (!COUNT_OK(((const acc_count *) st)->n))
					return false;
				break;
			case WA_AGG_SUM_INT:
			case WA_AGG_AVG_INT:
				{
					const acc_sum_int *a = (const acc_sum_int *) st;
					wa_int128	bound;

					if (!COUNT_OK(a->n))
						return false;
					bound = (wa_int128) a->n << 63;
					if (a->sum > bound || a->sum < -bound)
						return false;
					break;
				}
			case WA_AGG_SUM_FLOAT:
			case WA_AGG_AVG_FLOAT:
			case WA_AGG_MIN_FLOAT:
			case WA_AGG_MAX_FLOAT:
				if (!COUNT_OK(((const acc_float *) st)->n))
					return false;
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				if (!COUNT_OK(((const acc_int *) st)->n))
					return false;
				break;
			case WA_AGG_VAR_SAMP:
			case WA_AGG_VAR_POP:
			case WA_AGG_STDDEV_SAMP:
			case WA_AGG_STDDEV_POP:
				{
					double		n = ((const acc_var *) st)->n;

					if (!(n >= 0.0 && n <= (double) events && n == floor(n)))
						return false;
					break;
				}
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				{
					const acc_decimal *a = (const acc_decimal *) st;
					wa_int128	bound;

					if (!COUNT_OK(a->n) || !COUNT_OK(a->nans) ||
						a->n > events - a->nans)
						return false;
					bound = (wa_int128) a->n << 63;
					if (a->sum > bound || a->sum < -bound)
						return false;
					break;
				}
		}
	}
#undef COUNT_OK
	return true;
}

/* ---------- the portable image (checkpoints) ---------- */

/*
 * Every field of an accumulator is a 64-bit integer, a double or (an exact
 * sum) a 128-bit integer.  The portable image writes each as little-endian
 * bytes, the 128-bit one low half first; doubles by their IEEE bits.  The
 * shifts below are exact on any byte order, and compile to plain stores
 * on a little-endian machine.
 */
static inline void
put_le64(uint8_t *out, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t) (v >> (8 * i));
}

static inline uint64_t
get_le64(const uint8_t *in)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t) in[i] << (8 * i);
	return v;
}

/* Whether the state of this kind starts with a 128-bit integer. */
static bool
starts_with_int128(wa_agg_kind kind)
{
	return kind == WA_AGG_SUM_INT || kind == WA_AGG_AVG_INT ||
		kind == WA_AGG_SUM_DECIMAL || kind == WA_AGG_AVG_DECIMAL;
}

void
wa_acc_to_portable(const wa_agg_layout *layout, const void *acc, uint8_t *out)
{
	const uint8_t *in = acc;
	uint32_t	off = 0;

	for (int i = 0; i <= layout->n_aggs; i++)
	{
		/* the header word, then each aggregate's state */
		uint32_t	end = i < layout->n_aggs ? layout->offsets[i] : layout->acc_size;

		for (; off < end; off += 8)
		{
			uint64_t	w;

			memcpy(&w, in + off, 8);
			put_le64(out + off, w);
		}
		if (i < layout->n_aggs && starts_with_int128(layout->aggs[i].kind))
		{
			wa_int128	v;

			memcpy(&v, in + off, sizeof(v));
			put_le64(out + off, (uint64_t) v);
			put_le64(out + off + 8, (uint64_t) (v >> 64));
			off += 16;
		}
	}
	/* a generic state's pointer means nothing elsewhere */
	for (int i = 0; i < layout->n_aggs; i++)
		if (layout->aggs[i].kind == WA_AGG_GENERIC)
			memset(out + layout->offsets[i], 0, sizeof(void *));
}

void
wa_acc_from_portable(const wa_agg_layout *layout, const uint8_t *in, void *acc)
{
	uint8_t    *out = acc;
	uint32_t	off = 0;

	for (int i = 0; i <= layout->n_aggs; i++)
	{
		uint32_t	end = i < layout->n_aggs ? layout->offsets[i] : layout->acc_size;

		for (; off < end; off += 8)
		{
			uint64_t	w = get_le64(in + off);

			memcpy(out + off, &w, 8);
		}
		if (i < layout->n_aggs && starts_with_int128(layout->aggs[i].kind))
		{
			wa_uint128	u = (wa_uint128) get_le64(in + off + 8) << 64 | get_le64(in + off);
			wa_int128	v = (wa_int128) u;

			memcpy(out + off, &v, sizeof(v));
			off += 16;
		}
	}
	/* the initial states, until the caller restores its own */
	for (int i = 0; i < layout->n_aggs; i++)
		if (layout->aggs[i].kind == WA_AGG_GENERIC)
			memset(out + layout->offsets[i], 0, sizeof(void *));
}

const char *
wa_agg_kind_name(wa_agg_kind kind)
{
	switch (kind)
	{
		case WA_AGG_COUNT_STAR:
			return "count(*)";
		case WA_AGG_COUNT:
			return "count";
		case WA_AGG_SUM_INT:
			return "sum(int)";
		case WA_AGG_SUM_FLOAT:
			return "sum(float)";
		case WA_AGG_MIN_INT:
			return "min(int)";
		case WA_AGG_MAX_INT:
			return "max(int)";
		case WA_AGG_MIN_FLOAT:
			return "min(float)";
		case WA_AGG_MAX_FLOAT:
			return "max(float)";
		case WA_AGG_AVG_INT:
			return "avg(int)";
		case WA_AGG_AVG_FLOAT:
			return "avg(float)";
		case WA_AGG_VAR_SAMP:
			return "var_samp";
		case WA_AGG_VAR_POP:
			return "var_pop";
		case WA_AGG_STDDEV_SAMP:
			return "stddev_samp";
		case WA_AGG_STDDEV_POP:
			return "stddev_pop";
		case WA_AGG_SUM_DECIMAL:
			return "sum(decimal)";
		case WA_AGG_AVG_DECIMAL:
			return "avg(decimal)";
		case WA_AGG_GENERIC:
			return "generic";
	}
	return "?";
}
