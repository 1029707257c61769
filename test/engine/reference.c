/*-------------------------------------------------------------------------
 *
 * reference.c
 *	  Brute-force reference model of the windowing engine, for the
 *	  differential tests.
 *
 * Deliberately naive: no slices, no heaps, no expiry.  Every event is
 * checked against every window of every specification that contains it,
 * using 128-bit arithmetic throughout so that times at the ends of the int64
 * range (whose windows extend past it) need no special cases.  Each
 * (key, window) folds exactly the events it accepted, in exact integer
 * arithmetic; floats are folded in a fixed-point form (see reference.h) so
 * that the expected value carries no rounding of its own.
 *
 * The fold is done as the events are accepted rather than by keeping lists
 * of events per window: the folds are exact and order-free, so the result is
 * the same and the memory is a fraction.
 *
 * test/engine/reference.c
 *
 *-------------------------------------------------------------------------
 */
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum ref_input_mode
{
	MODE_UNUSED,				/* only count(x) reads it, or nobody */
	MODE_INT,
	MODE_FLOAT,
	MODE_DECIMAL				/* ints, but a NaN (f) is counted apart */
} ref_input_mode;

typedef struct ref_op
{
	bool		is_event;
	int			key;
	int64_t		time;
	wa_tick		advance_to;
} ref_op;

struct ref_model
{
	ref_config	config;
	wa_window  *windows;
	wa_agg_spec *aggs;
	ref_input_mode *modes;

	/* recorded operations */
	ref_op	   *ops;
	wa_value   *values;			/* n_inputs per op */
	int64_t		n_ops;
	int64_t		cap_ops;

	/* results per op */
	ref_outcome *outcomes;
	wa_tick    *wm_after;

	/* windows that accepted something, and a hash index over them */
	ref_window *wins;
	ref_input  *win_inputs;
	int64_t		n_wins;
	int64_t		cap_wins;
	int64_t    *slots;			/* -1 when empty */
	uint64_t	n_slots;		/* power of two */
};

static void *
xmalloc(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "reference: out of memory\n");
		abort();
	}
	return p;
}

static void *
xrealloc(void *ptr, size_t size)
{
	void	   *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "reference: out of memory\n");
		abort();
	}
	return p;
}

/* Floor division with a positive divisor, written out from scratch. */
static __int128
ref_floor_div(__int128 a, int64_t b)
{
	__int128	q = a / b;

	if (a % b != 0 && a < 0)
		q -= 1;
	return q;
}

static bool
kind_reads_int(wa_agg_kind kind)
{
	return kind == WA_AGG_SUM_INT || kind == WA_AGG_MIN_INT ||
		kind == WA_AGG_MAX_INT || kind == WA_AGG_AVG_INT;
}

static bool
kind_reads_float(wa_agg_kind kind)
{
	return kind == WA_AGG_SUM_FLOAT || kind == WA_AGG_MIN_FLOAT ||
		kind == WA_AGG_MAX_FLOAT || kind == WA_AGG_AVG_FLOAT ||
		kind == WA_AGG_VAR_SAMP || kind == WA_AGG_VAR_POP ||
		kind == WA_AGG_STDDEV_SAMP || kind == WA_AGG_STDDEV_POP;
}

ref_model *
ref_create(const ref_config *config)
{
	ref_model  *ref = xmalloc(sizeof(ref_model));

	memset(ref, 0, sizeof(ref_model));
	ref->config = *config;
	ref->windows = xmalloc(sizeof(wa_window) * config->n_windows);
	memcpy(ref->windows, config->windows, sizeof(wa_window) * config->n_windows);
	ref->aggs = xmalloc(sizeof(wa_agg_spec) * config->n_aggs);
	memcpy(ref->aggs, config->aggs, sizeof(wa_agg_spec) * config->n_aggs);
	ref->config.windows = ref->windows;
	ref->config.aggs = ref->aggs;

	/*
	 * Decide once how each input is folded.  An input read both as an
	 * integer and as a float would need two folds; no test does that, so
	 * refuse it rather than guess.
	 */
	ref->modes = xmalloc(sizeof(ref_input_mode) * (config->n_inputs + 1));
	for (int i = 0; i < config->n_inputs; i++)
		ref->modes[i] = MODE_UNUSED;
	for (int a = 0; a < config->n_aggs; a++)
	{
		wa_agg_kind kind = config->aggs[a].kind;
		int			in = config->aggs[a].input;
		ref_input_mode want;

		if (kind == WA_AGG_COUNT_STAR)
			continue;
		if (in < 0 || in >= config->n_inputs)
		{
			fprintf(stderr, "reference: aggregate %d reads input %d\n", a, in);
			abort();
		}
		if (kind == WA_AGG_SUM_DECIMAL || kind == WA_AGG_AVG_DECIMAL)
			want = MODE_DECIMAL;
		else if (kind_reads_int(kind))
			want = MODE_INT;
		else if (kind_reads_float(kind))
			want = MODE_FLOAT;
		else
			continue;
		if (ref->modes[in] != MODE_UNUSED && ref->modes[in] != want)
		{
			fprintf(stderr, "reference: input %d read as int and float\n", in);
			abort();
		}
		ref->modes[in] = want;
	}
	return ref;
}

void
ref_destroy(ref_model *ref)
{
	if (ref == NULL)
		return;
	free(ref->windows);
	free(ref->aggs);
	free(ref->modes);
	free(ref->ops);
	free(ref->values);
	free(ref->outcomes);
	free(ref->wm_after);
	free(ref->wins);
	free(ref->win_inputs);
	free(ref->slots);
	free(ref);
}

static void
grow_ops(ref_model *ref)
{
	if (ref->n_ops < ref->cap_ops)
		return;
	ref->cap_ops = ref->cap_ops ? ref->cap_ops * 2 : 1024;
	ref->ops = xrealloc(ref->ops, sizeof(ref_op) * ref->cap_ops);
	ref->values = xrealloc(ref->values, sizeof(wa_value) *
						   ref->cap_ops * (ref->config.n_inputs + 1));
}

void
ref_add_event(ref_model *ref, int key, int64_t event_time,
			  const wa_value *values)
{
	int			n_in = ref->config.n_inputs;

	grow_ops(ref);
	ref->ops[ref->n_ops].is_event = true;
	ref->ops[ref->n_ops].key = key;
	ref->ops[ref->n_ops].time = event_time;
	ref->ops[ref->n_ops].advance_to = 0;
	if (n_in > 0)
		memcpy(&ref->values[ref->n_ops * n_in], values, sizeof(wa_value) * n_in);
	ref->n_ops++;
}

void
ref_add_advance(ref_model *ref, wa_tick watermark)
{
	grow_ops(ref);
	ref->ops[ref->n_ops].is_event = false;
	ref->ops[ref->n_ops].key = -1;
	ref->ops[ref->n_ops].time = 0;
	ref->ops[ref->n_ops].advance_to = watermark;
	ref->n_ops++;
}

static uint64_t
hash_window(int key, int spec, wa_tick start)
{
	uint64_t	h = (uint64_t) (uint32_t) key * 0x9E3779B97F4A7C15ULL;

	h ^= (uint64_t) spec * 0xC2B2AE3D27D4EB4FULL;
	h ^= (uint64_t) start;
	h ^= (uint64_t) (start >> 64) * 0x165667B19E3779F9ULL;
	/* a splitmix64 finaliser, so nearby starts spread over the table */
	h ^= h >> 30;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 27;
	h *= 0x94D049BB133111EBULL;
	h ^= h >> 31;
	return h;
}

static void
rehash(ref_model *ref)
{
	uint64_t	n = ref->n_slots ? ref->n_slots * 2 : 1024;

	free(ref->slots);
	ref->slots = xmalloc(sizeof(int64_t) * n);
	for (uint64_t i = 0; i < n; i++)
		ref->slots[i] = -1;
	ref->n_slots = n;
	for (int64_t w = 0; w < ref->n_wins; w++)
	{
		ref_window *win = &ref->wins[w];
		uint64_t	s = hash_window(win->key, win->spec, win->start) & (n - 1);

		while (ref->slots[s] >= 0)
			s = (s + 1) & (n - 1);
		ref->slots[s] = w;
	}
}

int64_t
ref_find(const ref_model *ref, int key, int spec, wa_tick start)
{
	uint64_t	s;

	if (ref->n_slots == 0)
		return -1;
	s = hash_window(key, spec, start) & (ref->n_slots - 1);
	while (ref->slots[s] >= 0)
	{
		const ref_window *win = &ref->wins[ref->slots[s]];

		if (win->key == key && win->spec == spec && win->start == start)
			return ref->slots[s];
		s = (s + 1) & (ref->n_slots - 1);
	}
	return -1;
}

/* Find or create the state of a (key, window). */
static ref_window *
get_window(ref_model *ref, int key, int spec, wa_tick start, wa_tick end,
		   int64_t op)
{
	int64_t		w = ref_find(ref, key, spec, start);
	int			n_in = ref->config.n_inputs;
	ref_window *win;
	uint64_t	s;

	if (w >= 0)
		return &ref->wins[w];

	if (ref->n_wins == ref->cap_wins)
	{
		ref->cap_wins = ref->cap_wins ? ref->cap_wins * 2 : 1024;
		ref->wins = xrealloc(ref->wins, sizeof(ref_window) * ref->cap_wins);
		ref->win_inputs = xrealloc(ref->win_inputs, sizeof(ref_input) *
								   ref->cap_wins * (n_in + 1));
		/* the inputs pointers moved with the array */
		for (int64_t i = 0; i < ref->n_wins; i++)
			ref->wins[i].inputs = &ref->win_inputs[i * n_in];
	}
	if ((uint64_t) (ref->n_wins + 1) * 2 > ref->n_slots)
	{
		/* keep the load under one half; rehash before adding the new one */
		rehash(ref);
	}

	w = ref->n_wins++;
	win = &ref->wins[w];
	memset(win, 0, sizeof(ref_window));
	win->key = key;
	win->spec = spec;
	win->start = start;
	win->end = end;
	win->first_op = op;
	win->inputs = &ref->win_inputs[w * n_in];
	for (int i = 0; i < n_in; i++)
	{
		memset(&win->inputs[i], 0, sizeof(ref_input));
		win->inputs[i].min = INT64_MAX;
		win->inputs[i].max = INT64_MIN;
	}

	s = hash_window(key, spec, start) & (ref->n_slots - 1);
	while (ref->slots[s] >= 0)
		s = (s + 1) & (ref->n_slots - 1);
	ref->slots[s] = w;
	return win;
}

/* Turn a float input into its exact fixed-point form, or refuse it. */
static int64_t
float_to_fixed(double f)
{
	double		scaled = f * REF_FLOAT_SCALE;

	if (!isfinite(f) || fabs(f) > 1073741824.0 || scaled != floor(scaled))
	{
		fprintf(stderr, "reference: float input %.17g is not a multiple of "
				"1/%d within 2^30\n", f, REF_FLOAT_SCALE);
		abort();
	}
	return (int64_t) scaled;
}

static void
fold_event(const ref_model *ref, ref_window *win, const wa_value *values)
{
	win->count_star++;
	for (int i = 0; i < ref->config.n_inputs; i++)
	{
		ref_input  *in = &win->inputs[i];
		int64_t		v;

		if (values[i].isnull)
			continue;
		if (ref->modes[i] == MODE_DECIMAL && isnan(values[i].f))
		{
			in->nans++;
			continue;
		}
		in->n++;
		if (ref->modes[i] == MODE_UNUSED)
			continue;
		if (ref->modes[i] == MODE_INT || ref->modes[i] == MODE_DECIMAL)
			v = values[i].i;
		else
			v = float_to_fixed(values[i].f);
		in->sum += v;
		if (ref->modes[i] == MODE_FLOAT)
		{
			/* only floats need these; int64 squares would overflow them */
			in->sumsq += (__int128) v * v;
			in->sumabs += v < 0 ? -(__int128) v : (__int128) v;
		}
		if (v < in->min)
			in->min = v;
		if (v > in->max)
			in->max = v;
	}
}

void
ref_run(ref_model *ref)
{
	const ref_config *cfg = &ref->config;
	wa_tick		wm = REF_NEG_INF;
	bool		have_max = false;
	int64_t		max_ts = 0;

	ref->outcomes = xrealloc(ref->outcomes,
							 sizeof(ref_outcome) * (ref->n_ops + 1));
	ref->wm_after = xrealloc(ref->wm_after, sizeof(wa_tick) * (ref->n_ops + 1));

	for (int64_t op = 0; op < ref->n_ops; op++)
	{
		const ref_op *o = &ref->ops[op];
		const wa_value *values = &ref->values[op * cfg->n_inputs];
		int64_t		n_windows = 0;
		int64_t		n_accepted = 0;
		wa_tick		t;

		if (!o->is_event)
		{
			/* an idle-time advance only ever moves the watermark forward */
			if (o->advance_to > wm)
				wm = o->advance_to;
			ref->outcomes[op] = REF_ACCEPTED;
			ref->wm_after[op] = wm;
			continue;
		}

		t = o->time;
		for (int s = 0; s < cfg->n_windows; s++)
		{
			const wa_window *w = &cfg->windows[s];
			__int128	k = ref_floor_div(t - (wa_tick) w->origin, w->slide);

			/*
			 * k is the last window starting at or before t; walk back
			 * through every earlier start whose window still reaches t.
			 */
			for (;; k--)
			{
				wa_tick		start = (wa_tick) w->origin + k * w->slide;
				wa_tick		end = start + w->size;

				if (end <= t)
					break;
				n_windows++;
				if (end + cfg->lateness > wm)
				{
					ref_window *win = get_window(ref, o->key, s, start, end, op);

					n_accepted++;
					if (end <= wm)
						win->n_late++;
					else
						win->n_ontime++;
					fold_event(ref, win, values);
				}
			}
		}

		if (n_accepted == 0)
			ref->outcomes[op] = REF_DROPPED;
		else if (n_accepted < n_windows)
			ref->outcomes[op] = REF_PARTIAL;
		else
			ref->outcomes[op] = REF_ACCEPTED;

		if (!have_max || o->time > max_ts)
		{
			max_ts = o->time;
			have_max = true;
		}
		if ((wa_tick) max_ts - cfg->bound > wm)
			wm = (wa_tick) max_ts - cfg->bound;
		ref->wm_after[op] = wm;
	}

	/*
	 * The on-time pane of a window is due in the first operation after which
	 * the watermark reaches its end; the watermark never decreases, so a
	 * binary search finds it.
	 */
	for (int64_t w = 0; w < ref->n_wins; w++)
	{
		ref_window *win = &ref->wins[w];
		int64_t		lo = 0;
		int64_t		hi = ref->n_ops;

		while (lo < hi)
		{
			int64_t		mid = lo + (hi - lo) / 2;

			if (ref->wm_after[mid] >= win->end)
				hi = mid;
			else
				lo = mid + 1;
		}
		win->fire_op = lo;
	}
}

int64_t
ref_n_ops(const ref_model *ref)
{
	return ref->n_ops;
}

bool
ref_op_is_event(const ref_model *ref, int64_t op)
{
	return ref->ops[op].is_event;
}

ref_outcome
ref_op_outcome(const ref_model *ref, int64_t op)
{
	return ref->outcomes[op];
}

wa_tick
ref_op_watermark(const ref_model *ref, int64_t op)
{
	return ref->wm_after[op];
}

int64_t
ref_n_windows(const ref_model *ref)
{
	return ref->n_wins;
}

const ref_window *
ref_window_at(const ref_model *ref, int64_t idx)
{
	return &ref->wins[idx];
}

int64_t
ref_count_outcome(const ref_model *ref, ref_outcome outcome)
{
	int64_t		n = 0;

	for (int64_t op = 0; op < ref->n_ops; op++)
		if (ref->ops[op].is_event && ref->outcomes[op] == outcome)
			n++;
	return n;
}

void
ref_value_of(const ref_model *ref, const ref_window *win, int agg,
			 ref_value *out)
{
	wa_agg_kind kind = ref->config.aggs[agg].kind;
	const ref_input *in = NULL;
	double		scale = REF_FLOAT_SCALE;
	double		n;
	double		num;

	memset(out, 0, sizeof(ref_value));
	if (kind != WA_AGG_COUNT_STAR)
		in = &win->inputs[ref->config.aggs[agg].input];

	switch (kind)
	{
		case WA_AGG_COUNT_STAR:
			out->count = win->count_star;
			return;
		case WA_AGG_COUNT:
			out->count = in->n;
			return;
		case WA_AGG_SUM_DECIMAL:
		case WA_AGG_AVG_DECIMAL:
			/* NULL without input; a NaN is input */
			out->isnull = in->n == 0 && in->nans == 0;
			out->sum = in->sum;
			out->count = in->n;
			out->i = in->nans;
			return;
		default:
			break;
	}

	/* every other aggregate is NULL over no non-null input */
	if (in->n == 0)
	{
		out->isnull = true;
		return;
	}
	n = (double) in->n;

	/*
	 * The numerator of the variance, exact: n*Sxx - Sx^2.  Only for float
	 * inputs, whose fixed-point sums are small enough to square.
	 */
	num = 0;
	if (kind == WA_AGG_VAR_POP || kind == WA_AGG_VAR_SAMP ||
		kind == WA_AGG_STDDEV_POP || kind == WA_AGG_STDDEV_SAMP)
		num = (double) (in->n * in->sumsq - in->sum * in->sum);

	switch (kind)
	{
		case WA_AGG_SUM_INT:
			out->sum = in->sum;
			break;
		case WA_AGG_AVG_INT:
			out->sum = in->sum;
			out->count = in->n;
			break;
		case WA_AGG_MIN_INT:
			out->i = in->min;
			break;
		case WA_AGG_MAX_INT:
			out->i = in->max;
			break;
		case WA_AGG_SUM_FLOAT:
			out->f = (double) in->sum / scale;
			out->scale = (double) in->sumabs / scale;
			break;
		case WA_AGG_AVG_FLOAT:
			out->f = (double) in->sum / scale / n;
			out->scale = (double) in->sumabs / scale / n;
			break;
		case WA_AGG_MIN_FLOAT:
			out->f = (double) in->min / scale;
			out->scale = fabs(out->f);
			break;
		case WA_AGG_MAX_FLOAT:
			out->f = (double) in->max / scale;
			out->scale = fabs(out->f);
			break;
		case WA_AGG_VAR_POP:
		case WA_AGG_STDDEV_POP:
			out->f = num / (n * n) / (scale * scale);
			out->scale = (double) in->sumsq / n / (scale * scale);
			if (kind == WA_AGG_STDDEV_POP)
			{
				out->f = sqrt(out->f);
				out->scale = sqrt(out->scale);
			}
			break;
		case WA_AGG_VAR_SAMP:
		case WA_AGG_STDDEV_SAMP:
			/* as in SQL, the sample variance of one value is NULL */
			if (in->n < 2)
			{
				out->isnull = true;
				break;
			}
			out->f = num / (n * (n - 1)) / (scale * scale);
			out->scale = (double) in->sumsq / n / (scale * scale);
			if (kind == WA_AGG_STDDEV_SAMP)
			{
				out->f = sqrt(out->f);
				out->scale = sqrt(out->scale);
			}
			break;
		default:
			break;
	}
}

void
ref_window_init(const ref_model *ref, ref_window *win, ref_input *inputs)
{
	memset(win, 0, sizeof(ref_window));
	win->inputs = inputs;
	for (int i = 0; i < ref->config.n_inputs; i++)
	{
		memset(&inputs[i], 0, sizeof(ref_input));
		inputs[i].min = INT64_MAX;
		inputs[i].max = INT64_MIN;
	}
}

void
ref_fold(const ref_model *ref, ref_window *win, const wa_value *values)
{
	fold_event(ref, win, values);
}
