/*-------------------------------------------------------------------------
 *
 * wa_engine.c
 *	  The event-time windowing engine (see wa_engine.h for the semantics).
 *
 * Units.  Internally everything is counted in slices: slice s covers ticks
 * [s*g + base, (s+1)*g + base), where g is the slice width and base the
 * grid offset.  A window of spec j covers the slices [ws, ws + size_s) for
 * every start ws congruent to phase_j modulo slide_s; its end is the slice
 * number ws + size_s.  Window numbers can leave the int64 range near the
 * limits of event time, so they are wa_tick (128-bit) values.
 *
 * Watermark-derived thresholds, recomputed on every advance:
 *	  fired_end:  a window with end slice <= fired_end has fired;
 *	  closed_end: a window with end slice <= closed_end accepts no more
 *				  events (end + lateness <= watermark).
 *
 * Keys.  Each key holds its sorted slices, the fired_end at which it was
 * last brought up to date, and a deadline in the key heap: the earliest of
 * its next window end and its first slice's expiry.  Advancing the
 * watermark visits only keys whose deadline passed.  An event for a key
 * also brings the key up to date, which is safe because a key whose
 * deadline is not due has no data in any window that fired since.
 *
 * Fired windows that receive late data get a record in late_windows
 * (revision count and dirty flag) that lives until the window closes; the
 * record heap orders them by closing time so that a dirty window is emitted
 * before its slices can expire.
 *
 * Shared windows (config->share_windows).  The coverage planner
 * (wa_planner.h) may compute a window from another window's instances
 * instead of from slices, and may add factor windows nobody asked for to
 * serve as such parents.  All windows then form a forest: specs beyond
 * n_windows are factor windows, computed but never emitted, and a key
 * fires its specs parents first (fire_order), so that when an instance
 * fires, the parent instances it is the union of have fired and sit in the
 * parent's ring of kept values (wa_kept.h).  Kept values mirror the slices,
 * late events included, so a child's late pane merged from them is exact;
 * an instance missing from a ring is merged from slices instead.
 *
 * Checkpoints.  A key that receives an event joins the dirty_keys array
 * (it stores its index there, so that a freed key leaves by a swap with the
 * last entry) and widens its range [dirty_lo, dirty_hi] of changed slices;
 * a checkpoint reports the live slices of each dirty key in its range and
 * empties the array.  Events arrive nearly in order, so the range of a key
 * is a few slices.  Slices leave only by expiring below expire_limit, and
 * every key whose first slice expired has been visited (its deadline is at
 * most that expiry), so no live slice lies below expire_limit: the bound a
 * checkpoint hands out for deleting persisted slices.
 *
 * A restore needs only the watermark and the slices: every threshold is a
 * function of the watermark, a key's fired_end can be the global one
 * (windows between the two hold no data of the key, or it would have been
 * due), and deadlines follow from the slices.
 *
 * src/engine/wa_engine.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine.h"

#include <stdlib.h>
#include <string.h>

#include "wa_assert.h"
#include "wa_hashtab.h"
#include "wa_heap.h"
#include "wa_kept.h"
#include "wa_mem.h"
#include "wa_planner.h"
#include "wa_slices.h"
#include "wa_twostack.h"

/*
 * Windows that overlap this many times or more are emitted through a
 * two-stack cache; below that, merging the window's slices directly is as
 * cheap and needs no extra state.
 */
#define TWOSTACK_MIN_OVERLAP 4

/*
 * A window keeps at most this many fired instances (a power of two; see
 * kept_capacity).  The plan gives no window more than MAX_PARENT_INSTANCES
 * parent instances, so that on-time panes always find theirs kept.
 */
#define MAX_KEPT 256
#define MAX_PARENT_INSTANCES (MAX_KEPT / 2)

/*
 * The cost model counts merges only, and estimates a two-stack's; each
 * instance computed from a parent also costs ring lookups, and a factor
 * window costs key visits.  A plan that saves less than this fraction of
 * the merges of shared slices alone is not worth that: the engine then
 * computes every window from slices.
 */
#define MIN_PLAN_SAVING 0.05

/* A window spec in slice units. */
typedef struct spec
{
	int64_t		size_s;
	int64_t		slide_s;
	int64_t		phase;			/* window starts are phase mod slide_s */
	int			stack;			/* index into a key's two-stacks, or -1 */
	int			parent;			/* spec computed from, or -1: slices */
	int64_t		m;				/* parent instances per instance */
	uint32_t	n_kept;			/* ring size for kept instances, or 0 */
} spec;

typedef struct keystate
{
	wa_heap_node node;			/* first: the heap hands back this pointer */
	uint64_t	hash;
	int64_t		ival;
	uint8_t    *bytes;
	uint32_t	len;
	wa_tick		fired_end;		/* windows ending at or before: handled */
	wa_slices	slices;
	wa_twostack *stacks;		/* one per overlapping spec, or NULL */
	wa_kept    *kept;			/* one per spec, or NULL */
	int64_t		dirty_pos;		/* index in dirty_keys, or -1 */
	int64_t		dirty_lo;		/* slices changed since the last */
	int64_t		dirty_hi;		/* checkpoint lie in [dirty_lo, dirty_hi] */
} keystate;

typedef struct late_window
{
	wa_heap_node node;			/* deadline: the window's closing tick */
	uint64_t	hash;
	keystate   *key;
	int			window;
	wa_tick		start;			/* slice number of the window start */
	int64_t		revision;		/* emissions so far */
	bool		dirty;			/* late data not yet emitted */
	bool		closed;			/* off the table; free after emit_late */
} late_window;

/* Probe for late_windows lookups. */
typedef struct late_probe
{
	keystate   *key;
	int			window;
	wa_tick		start;
} late_probe;

struct wa_engine
{
	wa_mem		mem;
	int			n_windows;		/* requested windows: emitted */
	wa_window  *windows;
	int			n_specs;		/* requested, then factor windows */
	spec	   *specs;
	int		   *fire_order;		/* spec numbers, parents first */
	wa_tick		fire_step;		/* slices a key fires at a time */
	int64_t		g;				/* slice width in ticks */
	int64_t		base;			/* grid offset, in [0, g) */
	int64_t		bound;
	int64_t		lateness;
	bool		byte_keys;
	wa_emit_fn	emit;
	void	   *emit_arg;

	int			n_stacks;		/* specs emitted through a two-stack */

	wa_agg_layout layout;
	wa_agg_spec *aggs;
	uint32_t   *offsets;
	uint32_t	stride;			/* bytes per slice entry */
	void	   *scratch;		/* accumulator for merging a window */
	wa_result  *results;

	/* time */
	int64_t		max_ts;
	bool		seen_event;
	wa_tick		wm;
	wa_tick		fired_end;
	wa_tick		closed_end;
	wa_tick		expire_limit;	/* slices below this number are unused */
	wa_tick		wm_next_edge;	/* watermark at which the above change */
	bool		unfired_ok;		/* fired_end fits int64 (as unfired_from): */
	int64_t		unfired_from;	/* events in slices >= it are plain on time */
	bool		unfired_end_valid;	/* first_unfired_end's last answer: */
	int64_t		unfired_end_slice;	/* for this slice */
	wa_tick		unfired_end_fired;	/* and this fired_end */
	wa_tick		unfired_end_tick;
	int64_t		near_first;		/* NEAR_SLICES slices around a recent */
	int64_t		near_lo;		/* event, near_first the first of them, */
	int64_t		near_hi;		/* spanning ticks [near_lo, near_hi) */

	uint64_t	created_bytes;	/* mem.bytes when created: flush returns to
								 * it */

	wa_hashtab	keys;
	wa_heap		key_deadlines;
	wa_hashtab	late_windows;
	wa_heap		late_deadlines;
	late_window **dirty;
	int64_t		n_dirty;
	int64_t		dirty_capacity;
	keystate  **dirty_keys;		/* keys changed since the last checkpoint */
	int64_t		n_dirty_keys;
	int64_t		dirty_keys_capacity;

	wa_stats	stats;
};

/* ---------- time arithmetic in slice units ---------- */

static inline wa_tick
slice_tick(const wa_engine *e, wa_tick s)
{
	return s * e->g + e->base;
}

/*
 * The slice holding event time t; fits int64 (see below).  Events arrive
 * nearly in order, so the slices around a recent event are remembered and
 * most events find theirs by counting the slice edges at or below t among
 * them: a few comparisons, no division, and no branch for the CPU to
 * mispredict when events jitter back and forth across slice edges.
 */
#define NEAR_SLICES 9

static inline int64_t
slice_of(wa_engine *e, int64_t t)
{
	int64_t		q;
	int64_t		r;

	if (t >= e->near_lo && t < e->near_hi)
	{
		int64_t		d = t - e->near_lo;
		int64_t		s = e->near_first;

		for (int i = 1; i < NEAR_SLICES; i++)
			s += d >= i * e->g;
		return s;
	}

	/*
	 * Since base < g, subtracting one never underflows: when g == 1, base is
	 * 0 and the branch is never taken; when g >= 2, q >= INT64_MIN / 2.
	 */
	q = wa_floor_div(t, e->g);
	r = wa_floor_mod(t, e->g);
	if (r < e->base)
	{
		q--;
		r += e->g;
	}

	/*
	 * Remember it, with four slices before and after.  Near the int64
	 * limits, or with slices so wide that those bounds (or the edges
	 * counted above) would overflow, nothing is remembered.
	 */
	e->near_lo = e->near_hi = 0;
	if (e->g <= INT64_MAX / (2 * NEAR_SLICES) &&
		t > INT64_MIN + NEAR_SLICES * e->g && t < INT64_MAX - NEAR_SLICES * e->g)
	{
		e->near_first = q - (NEAR_SLICES - 1) / 2;
		e->near_lo = t - (r - e->base) - (NEAR_SLICES - 1) / 2 * e->g;
		e->near_hi = e->near_lo + NEAR_SLICES * e->g;
	}
	return q;
}

/* First tick after slice s, without 128-bit arithmetic for recent slices. */
static inline wa_tick
slice_end_tick(const wa_engine *e, int64_t s)
{
	if (e->near_lo != e->near_hi && s >= e->near_first &&
		s < e->near_first + NEAR_SLICES)
		return e->near_lo + (s - e->near_first + 1) * e->g;
	return slice_tick(e, (wa_tick) s + 1);
}

/*
 * Smallest window start >= x for spec sp.  A window that slides by one
 * slice starts at every slice: no division (the common case, since the
 * slice width is usually the slide).
 */
static inline wa_tick
align_up(const spec *sp, wa_tick x)
{
	if (sp->slide_s == 1)
		return x;
	return x + wa_tick_floor_mod(sp->phase - x, sp->slide_s);
}

/* Largest window start <= x for spec sp. */
static inline wa_tick
align_down(const spec *sp, wa_tick x)
{
	if (sp->slide_s == 1)
		return x;
	return x - wa_tick_floor_mod(x - sp->phase, sp->slide_s);
}

/* Slice number below which no window of any spec accepts data. */
static wa_tick
compute_expire_limit(const wa_engine *e, wa_tick closed_end)
{
	wa_tick		limit = WA_TICK_MAX;

	for (int j = 0; j < e->n_windows; j++)
	{
		wa_tick		t = align_up(&e->specs[j], closed_end - e->specs[j].size_s + 1);

		if (t < limit)
			limit = t;
	}
	return limit;
}

static void
set_watermark(wa_engine *e, wa_tick wm)
{
	/* the watermark never decreases (wa_engine.h) */
	WA_ASSERT(wm >= e->wm);
	e->wm = wm;
	/* the thresholds only move when the watermark crosses a slice edge */
	if (wm < e->wm_next_edge)
		return;
	e->fired_end = wa_tick_floor_div(wm - e->base, e->g);
	e->closed_end = wa_tick_floor_div(wm - e->lateness - e->base, e->g);
	e->expire_limit = compute_expire_limit(e, e->closed_end);
	/* slices from fired_end on: no window holding them has fired */
	e->unfired_ok = e->fired_end <= INT64_MAX;
	e->unfired_from = e->fired_end < INT64_MIN ? INT64_MIN : (int64_t) e->fired_end;
	/* the first watermark at which fired_end or closed_end grows */
	e->wm_next_edge = slice_tick(e, e->fired_end + 1);
	if (slice_tick(e, e->closed_end + 1) + e->lateness < e->wm_next_edge)
		e->wm_next_edge = slice_tick(e, e->closed_end + 1) + e->lateness;
}

/* Tick at which slice s stops being used: its last window closes. */
static wa_tick
slice_expiry(const wa_engine *e, int64_t s)
{
	wa_tick		last_end = WA_TICK_MIN;

	for (int j = 0; j < e->n_windows; j++)
	{
		const spec *sp = &e->specs[j];
		wa_tick		end = align_down(sp, s) + sp->size_s;

		if (end > last_end)
			last_end = end;
	}
	return slice_tick(e, last_end) + e->lateness;
}

/* ---------- configuration ---------- */

const char *
wa_config_check(const wa_config *config)
{
	if (config->n_windows <= 0)
		return "at least one window is required";
	if (config->windows == NULL)
		return "windows must not be NULL";
	for (int j = 0; j < config->n_windows; j++)
	{
		const wa_window *w = &config->windows[j];

		if (w->size <= 0)
			return "window size must be positive";
		if (w->slide <= 0)
			return "window slide must be positive";
		if (w->size < w->slide)
			return "window size must be at least the slide";
	}
	if (config->bound < 0)
		return "bound must not be negative";
	if (config->lateness < 0)
		return "lateness must not be negative";
	if (config->n_aggs < 0 || (config->n_aggs > 0 && config->aggs == NULL))
		return "aggregate list is invalid";
	for (int i = 0; i < config->n_aggs; i++)
	{
		wa_agg_kind kind = config->aggs[i].kind;

		if ((int) kind < WA_AGG_COUNT_STAR || kind > WA_AGG_STDDEV_POP)
			return "unknown aggregate kind";
		if (kind != WA_AGG_COUNT_STAR && config->aggs[i].input < 0)
			return "aggregate input index must not be negative";
	}
	if (config->emit == NULL)
		return "an emit callback is required";
	return NULL;
}

/*
 * Slice width: the gcd of every size and slide, and of the differences
 * between the (normalized) origins, so that every window boundary of
 * every spec is a slice boundary.  Sets *origin0 to the first window's
 * normalized origin.
 */
static int64_t
config_slice_width(const wa_config *config, int64_t *origin0)
{
	int64_t		g = 0;

	*origin0 = wa_floor_mod(config->windows[0].origin, config->windows[0].slide);
	for (int j = 0; j < config->n_windows; j++)
	{
		const wa_window *w = &config->windows[j];

		g = wa_gcd(g, w->size);
		g = wa_gcd(g, w->slide);
		g = wa_gcd(g, wa_floor_mod(w->origin, w->slide) - *origin0);
	}
	return g;
}

/* min and max may merge overlapping parents; anything else may not */
static wa_cover_mode
config_cover_mode(const wa_config *config)
{
	if (config->n_aggs == 0)
		return WA_PARTITIONED_BY;
	for (int i = 0; i < config->n_aggs; i++)
	{
		switch (config->aggs[i].kind)
		{
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
			case WA_AGG_MIN_FLOAT:
			case WA_AGG_MAX_FLOAT:
				break;
			default:
				return WA_PARTITIONED_BY;
		}
	}
	return WA_COVERED_BY;
}

/*
 * wa_engine_plan with every byte from allocator (NULL: the C library's):
 * the plan's nodes, the planner's scratch, and our ranges.
 */
static const char *
plan_windows(const wa_config *config, const wa_allocator *allocator,
			 wa_plan *plan, int64_t *slice_width)
{
	int64_t		origin0;
	int64_t		g = config_slice_width(config, &origin0);
	int			n = config->n_windows;
	wa_allocator al = allocator ? *allocator : wa_libc_allocator;
	size_t		ranges_bytes = sizeof(int64_t) * 2 * (size_t) n;
	int64_t    *ranges = al.alloc(al.arg, ranges_bytes);
	bool		aligned = true;
	wa_plan_options options;
	const char *err;

	*slice_width = g;
	if (ranges == NULL)
	{
		memset(plan, 0, sizeof(*plan));
		return "out of memory";
	}
	for (int j = 0; j < n; j++)
	{
		const wa_window *w = &config->windows[j];

		ranges[j] = w->size / g;
		ranges[n + j] = w->slide / g;

		/*
		 * One window can feed another only if their instances line up:
		 * every window must start where the first one does, modulo its
		 * slide.
		 */
		if (wa_tick_floor_mod((wa_tick) w->origin - config->windows[0].origin,
							  w->slide) != 0)
			aligned = false;
	}
	memset(&options, 0, sizeof(options));
	options.mode = config_cover_mode(config);
	options.factor_windows = true;
	options.root_only = !aligned || !config->share_windows;
	options.root = 1;
	options.event_rate = 1.0;
	options.stack_overlap = config->merge_every_slice ? 0 : TWOSTACK_MIN_OVERLAP;
	options.max_multiplier = MAX_PARENT_INSTANCES;
	options.allocator = &al;
	err = wa_plan_build(ranges, ranges + n, n, &options, plan);
	if (err == NULL && !options.root_only &&
		plan->total_cost > (1.0 - MIN_PLAN_SAVING) * plan->slices_cost)
	{
		wa_plan_free(plan);
		options.root_only = true;
		err = wa_plan_build(ranges, ranges + n, n, &options, plan);
	}
	al.free(al.arg, ranges, ranges_bytes);
	return err;
}

const char *
wa_engine_plan(const wa_config *config, wa_plan *plan, int64_t *slice_width)
{
	return plan_windows(config, config->allocator, plan, slice_width);
}

/*
 * Ring size for spec j.  A child instance fires right after the last of
 * the M parent instances it reads, so on-time panes need the last M; its
 * late panes read them again until it closes, lateness after its end, and
 * a two-stack's own late panes read its instances that may take late
 * data.  Keeping every instance that late data may still reach could cost
 * many accumulators per key for a long lateness: beyond the on-time need,
 * rings keep at most KEPT_FOR_LATE, and older late panes are merged from
 * slices.
 */
#define KEPT_FOR_LATE 16

static uint32_t
kept_capacity(const wa_engine *e, int j)
{
	const spec *sp = &e->specs[j];
	wa_tick		late_slices = (wa_tick) (e->lateness / e->g) + 1;
	wa_tick		on_time = 0;
	wa_tick		late = 0;
	wa_tick		need;
	uint32_t	capacity = 1;

	for (int c = 0; c < e->n_specs; c++)
	{
		if (e->specs[c].parent == j)
		{
			wa_tick		n = (e->specs[c].size_s + late_slices) / sp->slide_s + 1;

			if (e->specs[c].m > on_time)
				on_time = e->specs[c].m;
			if (n > late)
				late = n;
		}
	}
	if (sp->stack >= 0 && e->lateness > 0 && late_slices / sp->slide_s + 1 > late)
		late = late_slices / sp->slide_s + 1;
	if (late > KEPT_FOR_LATE)
		late = KEPT_FOR_LATE;
	need = on_time > late ? on_time : late;
	if (need == 0)
		return 0;
	while (capacity < need && capacity < MAX_KEPT)
		capacity *= 2;
	return capacity;
}

/* Order the specs so that every parent comes before its children. */
static void
set_fire_order(wa_engine *e)
{
	int		   *depth = wa_mem_alloc(&e->mem, sizeof(int) * e->n_specs);
	int			n = 0;
	int			max_depth = 0;

	for (int j = 0; j < e->n_specs; j++)
	{
		depth[j] = 0;
		for (int p = e->specs[j].parent; p >= 0; p = e->specs[p].parent)
			depth[j]++;
		if (depth[j] > max_depth)
			max_depth = depth[j];
	}
	for (int d = 0; d <= max_depth; d++)
		for (int j = 0; j < e->n_specs; j++)
			if (depth[j] == d)
				e->fire_order[n++] = j;
	wa_mem_free(&e->mem, depth, sizeof(int) * e->n_specs);
}

wa_engine *
wa_engine_create(const wa_config *config)
{
	wa_mem		mem;
	wa_engine  *e;
	int64_t		g;
	int64_t		origin0;
	wa_plan		plan;
	wa_allocator own;
	bool		shared = false;

	wa_mem_init(&mem, config->allocator);
	e = wa_mem_alloc(&mem, sizeof(wa_engine));
	memset(e, 0, sizeof(*e));
	e->mem = mem;

	e->n_windows = config->n_windows;
	e->windows = wa_mem_alloc(&e->mem, sizeof(wa_window) * e->n_windows);
	memcpy(e->windows, config->windows, sizeof(wa_window) * e->n_windows);
	g = config_slice_width(config, &origin0);
	e->g = g;
	e->base = wa_floor_mod(origin0, g);
	e->bound = config->bound;
	e->lateness = config->lateness;

	/*
	 * A plan that cannot be made (a period beyond int64) only means no
	 * sharing: every window is then computed from slices.  The planner
	 * allocates through the engine's own memory, so that its bytes count
	 * (in the peak) like the engine's state.
	 */
	e->n_specs = e->n_windows;
	wa_mem_allocator(&e->mem, &own);
	if (config->share_windows &&
		plan_windows(config, &own, &plan, &g) == NULL)
	{
		shared = true;
		e->n_specs = plan.n_nodes;
	}
	e->specs = wa_mem_alloc(&e->mem, sizeof(spec) * e->n_specs);
	e->fire_order = wa_mem_alloc(&e->mem, sizeof(int) * e->n_specs);
	for (int j = 0; j < e->n_specs; j++)
	{
		spec	   *sp = &e->specs[j];
		wa_window	w;

		if (j < e->n_windows)
			w = config->windows[j];
		else
		{
			/* a factor window: aligned with the first requested window */
			w.size = plan.nodes[j].range * g;
			w.slide = plan.nodes[j].slide * g;
			w.origin = config->windows[0].origin;
		}
		sp->size_s = w.size / g;
		sp->slide_s = w.slide / g;
		sp->phase = wa_floor_mod((wa_floor_mod(w.origin, w.slide) - e->base) / g,
								 sp->slide_s);
		sp->parent = shared ? plan.nodes[j].parent : -1;
		sp->m = shared ? plan.nodes[j].m : 0;
		sp->stack = !config->merge_every_slice && sp->parent < 0 &&
			sp->size_s / TWOSTACK_MIN_OVERLAP >= sp->slide_s ?
			e->n_stacks++ : -1;
	}
	if (shared)
		wa_plan_free(&plan);
	e->fire_step = WA_TICK_MAX;
	for (int j = 0; j < e->n_specs; j++)
	{
		spec	   *sp = &e->specs[j];
		int64_t		max_m = 0;

		sp->n_kept = kept_capacity(e, j);
		for (int c = 0; c < e->n_specs; c++)
			if (e->specs[c].parent == j && e->specs[c].m > max_m)
				max_m = e->specs[c].m;
		/* a child read its M parent instances; the rest of the ring is slack */
		if (max_m > 0)
		{
			wa_tick		step = ((wa_tick) sp->n_kept - max_m) * sp->slide_s;

			if (step < 1)
				step = 1;
			if (step < e->fire_step)
				e->fire_step = step;
		}
	}
	set_fire_order(e);
	e->byte_keys = config->byte_keys;
	e->emit = config->emit;
	e->emit_arg = config->emit_arg;

	e->aggs = wa_mem_alloc(&e->mem, sizeof(wa_agg_spec) * (config->n_aggs + 1));
	if (config->n_aggs > 0)
		memcpy(e->aggs, config->aggs, sizeof(wa_agg_spec) * config->n_aggs);
	e->offsets = wa_mem_alloc(&e->mem, sizeof(uint32_t) * (config->n_aggs + 1));
	wa_agg_layout_init(&e->layout, config->n_aggs, e->aggs, e->offsets);
	e->stride = WA_SLICE_HEADER + e->layout.acc_size;
	e->scratch = wa_mem_alloc(&e->mem, e->layout.acc_size);
	e->results = wa_mem_alloc(&e->mem, sizeof(wa_result) * (config->n_aggs + 1));

	wa_hashtab_init(&e->keys, &e->mem);
	wa_heap_init(&e->key_deadlines);
	wa_hashtab_init(&e->late_windows, &e->mem);
	wa_heap_init(&e->late_deadlines);

	e->wm_next_edge = WA_TICK_MIN;
	e->near_lo = e->near_hi = 0;	/* nothing remembered yet */
	e->wm = WA_TICK_MIN;
	set_watermark(e, WA_TICK_MIN);
	e->created_bytes = e->mem.bytes;
	return e;
}

/* ---------- keys ---------- */

/*
 * int64 keys hash through wa_hash_int, a bijection on 64-bit integers:
 * equal hashes mean equal keys, and the key itself need not be loaded.
 */
static bool
key_eq_int(const void *stored, const void *probe)
{
	(void) stored;
	(void) probe;
	return true;
}

static bool
key_eq_bytes(const void *stored, const void *probe)
{
	const keystate *k = stored;
	const wa_key *p = probe;

	/* memcmp must not see a NULL pointer, even for zero bytes */
	return k->len == p->len &&
		(p->len == 0 || memcmp(k->bytes, p->bytes, p->len) == 0);
}

static inline uint64_t
key_hash(const wa_engine *e, const wa_key *key)
{
	return e->byte_keys ? wa_hash_bytes(key->bytes, key->len) :
		wa_hash_int((uint64_t) key->ival);
}

static keystate *
key_lookup_or_create(wa_engine *e, const wa_key *key)
{
	uint64_t	hash = key_hash(e, key);
	keystate   *k;

	/* two calls, so that each inlines its own equality test */
	if (e->byte_keys)
		k = wa_hashtab_find(&e->keys, hash, key_eq_bytes, key);
	else
		k = wa_hashtab_find(&e->keys, hash, key_eq_int, key);
	if (k != NULL)
		return k;

	k = wa_mem_alloc(&e->mem, sizeof(keystate));
	memset(k, 0, sizeof(*k));
	k->hash = hash;
	k->node.pos = -1;
	k->node.deadline = WA_TICK_MAX;
	k->fired_end = e->fired_end;
	k->dirty_pos = -1;
	if (e->byte_keys)
	{
		k->len = key->len;
		k->bytes = wa_mem_alloc(&e->mem, key->len > 0 ? key->len : 1);
		if (key->len > 0)
			memcpy(k->bytes, key->bytes, key->len);
	}
	else
		k->ival = key->ival;
	wa_hashtab_insert(&e->keys, &e->mem, hash, k);
	e->stats.n_keys++;
	return k;
}

/* Free what a key owns besides itself: slices and two-stack caches. */
static void
key_free_state(wa_engine *e, keystate *k)
{
	wa_slices_free(&k->slices, &e->mem, e->stride);
	if (k->stacks != NULL)
	{
		for (int i = 0; i < e->n_stacks; i++)
			wa_twostack_free(&k->stacks[i], &e->mem, &e->layout);
		wa_mem_free(&e->mem, k->stacks, sizeof(wa_twostack) * e->n_stacks);
		k->stacks = NULL;
	}
	if (k->kept != NULL)
	{
		for (int j = 0; j < e->n_specs; j++)
			wa_kept_free(&k->kept[j], &e->mem, &e->layout);
		wa_mem_free(&e->mem, k->kept, sizeof(wa_kept) * e->n_specs);
		k->kept = NULL;
	}
}

/* Record that slice s of key k changed, for the next checkpoint. */
static inline void
key_mark_dirty(wa_engine *e, keystate *k, int64_t s)
{
	if (k->dirty_pos >= 0)
	{
		if (s < k->dirty_lo)
			k->dirty_lo = s;
		else if (s > k->dirty_hi)
			k->dirty_hi = s;
		return;
	}
	if (e->n_dirty_keys == e->dirty_keys_capacity)
	{
		int64_t		capacity = e->dirty_keys_capacity ?
			e->dirty_keys_capacity * 2 : 64;

		e->dirty_keys = e->dirty_keys == NULL ?
			wa_mem_alloc(&e->mem, capacity * sizeof(keystate *)) :
			wa_mem_realloc(&e->mem, e->dirty_keys,
						   e->dirty_keys_capacity * sizeof(keystate *),
						   capacity * sizeof(keystate *));
		e->dirty_keys_capacity = capacity;
	}
	k->dirty_pos = e->n_dirty_keys;
	k->dirty_lo = k->dirty_hi = s;
	e->dirty_keys[e->n_dirty_keys++] = k;
}

/* Take a key off dirty_keys: its last entry moves into its place. */
static void
key_unmark_dirty(wa_engine *e, keystate *k)
{
	keystate   *last = e->dirty_keys[--e->n_dirty_keys];

	e->dirty_keys[k->dirty_pos] = last;
	last->dirty_pos = k->dirty_pos;
	k->dirty_pos = -1;
}

static void
key_free(wa_engine *e, keystate *k)
{
	if (k->node.pos >= 0)
		wa_heap_remove(&e->key_deadlines, &k->node);
	/* its changed slices have all expired: nothing left to checkpoint */
	if (k->dirty_pos >= 0)
		key_unmark_dirty(e, k);
	wa_hashtab_remove(&e->keys, k->hash, k);
	key_free_state(e, k);
	if (e->byte_keys)
		wa_mem_free(&e->mem, k->bytes, k->len > 0 ? k->len : 1);
	wa_mem_free(&e->mem, k, sizeof(keystate));
	WA_ASSERT(e->stats.n_keys > 0);
	e->stats.n_keys--;
}

static void
key_set_deadline(wa_engine *e, keystate *k, wa_tick deadline)
{
	k->node.deadline = deadline;
	if (k->node.pos < 0)
		wa_heap_push(&e->key_deadlines, &e->mem, &k->node);
	else
		wa_heap_update(&e->key_deadlines, &k->node);
}

static inline void
pane_key(const wa_engine *e, const keystate *k, wa_key *out)
{
	out->ival = k->ival;
	out->bytes = k->bytes;
	out->len = k->len;
	(void) e;
}

/* ---------- windows ---------- */

/*
 * Merge the slices of window [ws, ws + size_s) of key k, starting the scan
 * at position pos (the first slice >= ws); returns the number merged.
 */
static uint32_t
merge_window(wa_engine *e, const keystate *k, uint32_t pos, wa_tick ws_end)
{
	uint32_t	n = 0;

	wa_acc_init(&e->layout, e->scratch);
	for (; pos < k->slices.count; pos++, n++)
	{
		if (wa_slices_index(&k->slices, e->stride, pos) >= ws_end)
			break;
		wa_acc_merge(&e->layout, e->scratch,
					 wa_slices_acc(&k->slices, e->stride, pos));
	}
	e->stats.merges += n;
	return n;
}

static void
emit_pane(wa_engine *e, const keystate *k, int j, wa_tick ws,
		  wa_pane_kind kind, int64_t revision)
{
	wa_pane		pane;

	wa_acc_finalize(&e->layout, e->scratch, e->results);
	pane_key(e, k, &pane.key);
	pane.window = j;
	pane.start = slice_tick(e, ws);
	pane.end = slice_tick(e, ws + e->specs[j].size_s);
	pane.kind = kind;
	pane.revision = revision;
	pane.results = e->results;
	pane.acc = e->scratch;
	if (kind == WA_PANE_ON_TIME)
		e->stats.panes_on_time++;
	else
		e->stats.panes_late++;
	e->emit(e->emit_arg, &pane);
}

/* The key's two-stack caches, created on first use. */
static wa_twostack *
key_stacks(wa_engine *e, keystate *k)
{
	if (k->stacks == NULL)
	{
		k->stacks = wa_mem_alloc(&e->mem, sizeof(wa_twostack) * e->n_stacks);
		for (int i = 0; i < e->n_stacks; i++)
			wa_twostack_init(&k->stacks[i]);
	}
	return k->stacks;
}

/* The key's rings of kept instances, created on first use. */
static wa_kept *
key_kept(wa_engine *e, keystate *k)
{
	if (k->kept == NULL)
	{
		k->kept = wa_mem_alloc(&e->mem, sizeof(wa_kept) * e->n_specs);
		memset(k->kept, 0, sizeof(wa_kept) * e->n_specs);
	}
	return k->kept;
}

/* Does instance [ws, ws + size_s) of spec sp hold data of key k? */
static bool
instance_has_data(const wa_engine *e, const keystate *k, const spec *sp,
				  wa_tick ws)
{
	uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride, ws);

	return pos < k->slices.count &&
		wa_slices_index(&k->slices, e->stride, pos) < ws + sp->size_s;
}

/*
 * Merge instance ws of spec j (which has a parent) into e->scratch from the
 * parent's kept instances, M of them starting at ws.  A parent instance
 * that is not kept and holds data (it fired before the ring existed, or
 * was overwritten) makes us merge the instance from its slices instead.
 */
static void
merge_from_parent(wa_engine *e, keystate *k, int j, wa_tick ws)
{
	const spec *sp = &e->specs[j];
	const spec *pp = &e->specs[sp->parent];
	const wa_kept *ring = k->kept != NULL ? &k->kept[sp->parent] : NULL;
	wa_tick		ino = wa_kept_instance(ws, pp->phase, pp->slide_s);
	uint64_t	merges = 0;

	wa_acc_init(&e->layout, e->scratch);
	for (int64_t i = 0; i < sp->m; i++)
	{
		wa_tick		ps = ws + (wa_tick) i * pp->slide_s;
		const void *v = ring != NULL ?
			wa_kept_get(ring, &e->layout, ino + i, ps) : NULL;

		if (v != NULL)
		{
			wa_acc_merge(&e->layout, e->scratch, v);
			merges++;
		}
		else if (instance_has_data(e, k, pp, ps))
		{
			e->stats.merges += merges;
			merge_window(e, k, wa_slices_lower_bound(&k->slices, e->stride, ws),
						 ws + sp->size_s);
			return;
		}
	}
	e->stats.merges += merges;
}

/*
 * Instance ws of spec j fired with value e->scratch (not empty): keep it
 * if the spec keeps instances, and emit it if it was requested.
 */
static void
instance_fired(wa_engine *e, keystate *k, int j, wa_tick ws)
{
	const spec *sp = &e->specs[j];

	if (sp->n_kept > 0)
		wa_kept_put(&key_kept(e, k)[j], &e->mem, &e->layout, sp->n_kept,
					wa_kept_instance(ws, sp->phase, sp->slide_s), ws,
					e->scratch);
	if (j < e->n_windows)
		emit_pane(e, k, j, ws, WA_PANE_ON_TIME, 1);
}

/*
 * fire_windows for a spec with a two-stack cache: successive windows slide
 * the cache; an empty window makes us jump to the first window holding the
 * next slice, which the cache treats as a fresh start.  Binary searches,
 * whose cache misses dominate when keys are many, happen only on jumps.
 */
static void
fire_windows_stacked(wa_engine *e, keystate *k, int j, wa_tick ws, wa_tick hi)
{
	const spec *sp = &e->specs[j];
	wa_twostack *ts = &key_stacks(e, k)[sp->stack];

	while (ws + sp->size_s <= hi)
	{
		uint32_t	pos;

		e->stats.merges += wa_twostack_window(ts, &e->mem, &e->layout,
											  &k->slices, e->stride, ws,
											  ws + sp->size_s, e->scratch);
		if (!wa_acc_is_empty(&e->layout, e->scratch))
		{
			instance_fired(e, k, j, ws);
			ws += sp->slide_s;
			continue;
		}
		/* empty: the next window with data holds the first later slice */
		pos = wa_slices_lower_bound(&k->slices, e->stride, ws + sp->size_s);
		if (pos == k->slices.count)
			break;
		ws = align_up(sp, (wa_tick) wa_slices_index(&k->slices, e->stride, pos) -
					  sp->size_s + 1);
	}
}

/* Fire key k's windows of spec j with end in (lo, hi] that hold data. */
static void
fire_windows(wa_engine *e, keystate *k, int j, wa_tick lo, wa_tick hi)
{
	const spec *sp = &e->specs[j];
	wa_tick		ws = align_up(sp, lo - sp->size_s + 1);
	uint32_t	pos;

	if (sp->stack >= 0)
	{
		fire_windows_stacked(e, k, j, ws, hi);
		return;
	}
	pos = wa_slices_lower_bound(&k->slices, e->stride, ws);
	while (ws + sp->size_s <= hi && pos < k->slices.count)
	{
		int64_t		first;

		while (pos < k->slices.count &&
			   wa_slices_index(&k->slices, e->stride, pos) < ws)
			pos++;
		if (pos == k->slices.count)
			break;
		first = wa_slices_index(&k->slices, e->stride, pos);
		if (first >= ws + sp->size_s)
		{
			/* empty window: jump to the first window holding that slice */
			ws = align_up(sp, (wa_tick) first - sp->size_s + 1);
			continue;
		}
		if (sp->parent >= 0)
			merge_from_parent(e, k, j, ws);
		else
			merge_window(e, k, pos, ws + sp->size_s);
		instance_fired(e, k, j, ws);
		ws += sp->slide_s;
	}
}

/*
 * Tick at which the first unfired window holding slice s ends, over every
 * spec (factor windows too, as in next_fire_end_after), or WA_TICK_MAX.
 * It depends on s and fired_end only, and events of all keys arrive in
 * the same few slices: remember the last answer.
 */
static wa_tick
first_unfired_end(wa_engine *e, int64_t s)
{
	wa_tick		best = WA_TICK_MAX;
	wa_tick		lo = (wa_tick) s > e->fired_end ? (wa_tick) s : e->fired_end;

	if (e->unfired_end_valid && e->unfired_end_slice == s &&
		e->unfired_end_fired == e->fired_end)
		return e->unfired_end_tick;
	for (int j = 0; j < e->n_specs; j++)
	{
		const spec *sp = &e->specs[j];
		wa_tick		end = align_up(sp, lo + 1 - sp->size_s) + sp->size_s;

		/* only windows that contain s */
		if (end - sp->size_s <= s)
		{
			wa_tick		tick = slice_tick(e, end);

			if (tick < best)
				best = tick;
		}
	}
	e->unfired_end_valid = true;
	e->unfired_end_slice = s;
	e->unfired_end_fired = e->fired_end;
	e->unfired_end_tick = best;
	return best;
}

/*
 * Earliest end (slice number) after "after" of a window of k that holds
 * data, or WA_TICK_MAX.
 */
static wa_tick
next_fire_end_after(const wa_engine *e, const keystate *k, wa_tick after)
{
	wa_tick		best = WA_TICK_MAX;

	/* factor windows too: an event for k assumes nothing of k is due */
	for (int j = 0; j < e->n_specs; j++)
	{
		const spec *sp = &e->specs[j];
		/* the first window that has not fired, and the first slice past it */
		wa_tick		first_end = align_up(sp, after + 1 - sp->size_s) + sp->size_s;
		uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride, first_end);
		wa_tick		threshold;
		wa_tick		s;
		wa_tick		lo;
		wa_tick		end;

		/* usual case for a busy key: that first window holds data */
		if (pos > 0 &&
			wa_slices_index(&k->slices, e->stride, pos - 1) >= first_end - sp->size_s)
		{
			if (first_end < best)
				best = first_end;
			continue;
		}

		/* else: the first slice that belongs to a window ending later */
		threshold = align_up(sp, after - sp->size_s + 1);
		pos = wa_slices_lower_bound(&k->slices, e->stride, threshold);
		if (pos == k->slices.count)
			continue;
		s = wa_slices_index(&k->slices, e->stride, pos);
		lo = s > after ? s : after;
		/* smallest window end > lo: ends are starts shifted by size_s */
		end = align_up(sp, lo + 1 - sp->size_s) + sp->size_s;
		if (end < best)
			best = end;
	}
	return best;
}

static void
key_reschedule(wa_engine *e, keystate *k)
{
	wa_tick		fire = next_fire_end_after(e, k, e->fired_end);
	wa_tick		deadline;

	deadline = slice_expiry(e, wa_slices_index(&k->slices, e->stride, 0));
	if (fire != WA_TICK_MAX && slice_tick(e, fire) < deadline)
		deadline = slice_tick(e, fire);
	key_set_deadline(e, k, deadline);
}

/*
 * Bring key k up to the current watermark: fire its due windows, free the
 * slices no window can use any more, and reschedule it (or free it).
 */
static void
key_visit(wa_engine *e, keystate *k)
{
	e->stats.key_visits++;
	if (k->fired_end < e->fired_end)
	{
		wa_tick		lo = k->fired_end;

		/*
		 * Fire in steps short enough that parents' rings still hold what
		 * their children read (a big watermark jump, a flush), skipping
		 * stretches without data.
		 */
		while (lo < e->fired_end)
		{
			wa_tick		hi = e->fired_end;

			if (hi - lo > e->fire_step)
			{
				hi = next_fire_end_after(e, k, lo);
				if (hi > e->fired_end)
					break;
				if (hi < lo + e->fire_step)
					hi = lo + e->fire_step;
				if (hi > e->fired_end)
					hi = e->fired_end;
			}
			for (int o = 0; o < e->n_specs; o++)
				fire_windows(e, k, e->fire_order[o], lo, hi);
			lo = hi;
		}
		k->fired_end = e->fired_end;
	}
	while (k->slices.count > 0 &&
		   wa_slices_index(&k->slices, e->stride, 0) < e->expire_limit)
	{
		WA_ASSERT(e->stats.n_slices > 0);
		wa_slices_pop_front(&k->slices);
		e->stats.n_slices--;
	}
	if (k->slices.count == 0)
		key_free(e, k);
	else
		key_reschedule(e, k);
}

/* ---------- late windows ---------- */

static bool
late_eq(const void *stored, const void *probe)
{
	const late_window *w = stored;
	const late_probe *p = probe;

	return w->key == p->key && w->window == p->window && w->start == p->start;
}

static inline uint64_t
late_hash(const keystate *k, int j, wa_tick ws)
{
	return wa_hash64(k->hash ^ wa_hash64((uint64_t) ws ^
										 ((uint64_t) (ws >> 64) << 7) ^
										 ((uint64_t) j << 56)));
}

static void
late_emit(wa_engine *e, late_window *w)
{
	keystate   *k = w->key;
	const spec *sp = &e->specs[w->window];
	const void *kept = NULL;

	/* kept values and parents' kept values follow late data: see wa_kept.h */
	if (k->kept != NULL)
		kept = wa_kept_get(&k->kept[w->window], &e->layout,
						   wa_kept_instance(w->start, sp->phase, sp->slide_s),
						   w->start);
	if (kept != NULL)
		memcpy(e->scratch, kept, e->layout.acc_size);
	else if (sp->parent >= 0)
		merge_from_parent(e, k, w->window, w->start);
	else
		merge_window(e, k, wa_slices_lower_bound(&k->slices, e->stride, w->start),
					 w->start + sp->size_s);
	w->revision++;
	w->dirty = false;
	emit_pane(e, w->key, w->window, w->start, WA_PANE_LATE, w->revision);
}

static void
late_free(wa_engine *e, late_window *w)
{
	wa_mem_free(&e->mem, w, sizeof(late_window));
	e->stats.n_late_windows--;
}

/*
 * Record that fired window ws of spec j of key k receives a late event.
 * Called before the event is applied, so "has data" means "was emitted".
 */
static void
late_mark(wa_engine *e, keystate *k, int j, wa_tick ws)
{
	late_probe	probe = {k, j, ws};
	uint64_t	hash = late_hash(k, j, ws);
	late_window *w = wa_hashtab_find(&e->late_windows, hash, late_eq, &probe);

	if (w == NULL)
	{
		wa_tick		ws_end = ws + e->specs[j].size_s;
		uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride, ws);

		w = wa_mem_alloc(&e->mem, sizeof(late_window));
		memset(w, 0, sizeof(*w));
		w->hash = hash;
		w->key = k;
		w->window = j;
		w->start = ws;
		/* it fired on time iff it held data; late data always creates w */
		w->revision = (pos < k->slices.count &&
					   wa_slices_index(&k->slices, e->stride, pos) < ws_end) ? 1 : 0;
		w->node.deadline = slice_tick(e, ws_end) + e->lateness;
		wa_hashtab_insert(&e->late_windows, &e->mem, hash, w);
		wa_heap_push(&e->late_deadlines, &e->mem, &w->node);
		e->stats.n_late_windows++;
	}
	if (!w->dirty)
	{
		if (e->n_dirty == e->dirty_capacity)
		{
			int64_t		capacity = e->dirty_capacity ? e->dirty_capacity * 2 : 64;

			e->dirty = e->dirty == NULL ?
				wa_mem_alloc(&e->mem, capacity * sizeof(late_window *)) :
				wa_mem_realloc(&e->mem, e->dirty,
							   e->dirty_capacity * sizeof(late_window *),
							   capacity * sizeof(late_window *));
			e->dirty_capacity = capacity;
		}
		e->dirty[e->n_dirty++] = w;
		w->dirty = true;
	}
}

/* Drop the records of windows that closed; emit those still dirty first. */
static void
late_expire(wa_engine *e)
{
	wa_heap_node *top;

	while ((top = wa_heap_top(&e->late_deadlines)) != NULL &&
		   top->deadline <= e->wm)
	{
		late_window *w = (late_window *) top;

		wa_heap_remove(&e->late_deadlines, top);
		wa_hashtab_remove(&e->late_windows, w->hash, w);
		if (w->dirty)
		{
			/* still listed in dirty: emit now, free in emit_late */
			late_emit(e, w);
			w->closed = true;
		}
		else
			late_free(e, w);
	}
}

void
wa_engine_emit_late(wa_engine *e)
{
	for (int64_t i = 0; i < e->n_dirty; i++)
	{
		late_window *w = e->dirty[i];

		if (w->dirty)
			late_emit(e, w);
		if (w->closed)
			late_free(e, w);
	}
	e->n_dirty = 0;
}

/* ---------- watermark ---------- */

void
wa_engine_advance(wa_engine *e, wa_tick wm)
{
	wa_heap_node *top;

	if (wm <= e->wm)
		return;
	set_watermark(e, wm);
	late_expire(e);
	while ((top = wa_heap_top(&e->key_deadlines)) != NULL &&
		   top->deadline <= e->wm)
		key_visit(e, (keystate *) top);
}

void
wa_engine_flush(wa_engine *e)
{
	wa_engine_emit_late(e);
	wa_engine_advance(e, WA_TICK_MAX);
	wa_engine_emit_late(e);

	/*
	 * Every key, slice and late-window record is gone; give back the
	 * containers' grown capacity too, so that a flushed engine holds what a
	 * new one does.
	 */
	wa_hashtab_destroy(&e->keys, &e->mem);
	wa_hashtab_init(&e->keys, &e->mem);
	wa_hashtab_destroy(&e->late_windows, &e->mem);
	wa_hashtab_init(&e->late_windows, &e->mem);
	wa_heap_destroy(&e->key_deadlines, &e->mem);
	wa_heap_destroy(&e->late_deadlines, &e->mem);
	wa_mem_free(&e->mem, e->dirty, e->dirty_capacity * sizeof(late_window *));
	e->dirty = NULL;
	e->dirty_capacity = 0;
	wa_mem_free(&e->mem, e->dirty_keys,
				e->dirty_keys_capacity * sizeof(keystate *));
	e->dirty_keys = NULL;
	e->dirty_keys_capacity = 0;

	/* what wa_engine.h promises a flushed engine */
	WA_ASSERT(e->stats.n_keys == 0 && e->stats.n_slices == 0);
	WA_ASSERT(e->mem.bytes == e->created_bytes);
}

/* ---------- ingest ---------- */

wa_ingest_result
wa_engine_ingest(wa_engine *e, const wa_key *key, int64_t t,
				 const wa_value *values)
{
	int64_t		s = slice_of(e, t);
	bool		any_accept;
	bool		all_accept = true;
	bool		in_order;
	keystate   *k;
	uint32_t	pos;
	void	   *acc;
	bool		new_slice;
	wa_tick		deadline;
	wa_tick		slice_end;
	wa_tick		wm;

	e->stats.events_in++;

	/*
	 * The windows of spec j containing slice s start at ws_last, ws_last -
	 * slide_s, ... down to just above s - size_s; their ends decrease in
	 * the same order, so the latest window accepts if any does and the
	 * earliest rejects if any does.  Every such window ends after s, so
	 * when no window ending at s or later has closed (s >= closed_end),
	 * all accept: the usual case, decided without any division.
	 */
	/*
	 * The usual event lands in a slice no window of which has fired: every
	 * window accepts it and none gets a late pane.  One int64 comparison.
	 */
	in_order = e->unfired_ok && s >= e->unfired_from;
	if (!in_order && (wa_tick) s < e->closed_end)
	{
		any_accept = false;
		for (int j = 0; j < e->n_windows; j++)
		{
			const spec *sp = &e->specs[j];
			wa_tick		ws_last = align_down(sp, s);
			wa_tick		ws_first = align_up(sp, (wa_tick) s - sp->size_s + 1);

			if (ws_last + sp->size_s > e->closed_end)
				any_accept = true;
			if (ws_first + sp->size_s <= e->closed_end)
				all_accept = false;
		}
		if (!any_accept)
		{
			e->stats.events_dropped++;
			return WA_INGEST_DROPPED;
		}
	}
	if (!all_accept)
		e->stats.events_partial++;

	k = key_lookup_or_create(e, key);
	/* nothing of k is due (else it would have been visited): catch up */
	k->fired_end = e->fired_end;

	/*
	 * Fired windows that still accept get late panes.  Every window holding
	 * s ends after s, so none has fired unless s < fired_end; start the walk
	 * at the latest fired one.
	 */
	if (!in_order && (wa_tick) s < e->fired_end)
	{
		for (int j = 0; j < e->n_windows; j++)
		{
			const spec *sp = &e->specs[j];
			wa_tick		ws = align_down(sp, s);
			wa_tick		last_fired = align_down(sp, e->fired_end - sp->size_s);

			if (last_fired < ws)
				ws = last_fired;
			for (; ws > (wa_tick) s - sp->size_s; ws -= sp->slide_s)
			{
				if (ws + sp->size_s <= e->closed_end)
					break;
				late_mark(e, k, j, ws);
			}
		}
	}

	/* fold the event into its slice */
	pos = wa_slices_lower_bound(&k->slices, e->stride, s);
	new_slice = pos == k->slices.count ||
		wa_slices_index(&k->slices, e->stride, pos) != s;
	if (new_slice)
	{
		acc = wa_slices_insert(&k->slices, &e->mem, e->stride, pos, s);
		wa_acc_init(&e->layout, acc);
		e->stats.n_slices++;
	}
	else
		acc = wa_slices_acc(&k->slices, e->stride, pos);
	wa_acc_update(&e->layout, acc, values);
	key_mark_dirty(e, k, s);
	if (!in_order)
	{
		/*
		 * A late event may change a slice that a cached or kept window
		 * covers.  Those windows have fired, so an event in order is in
		 * none of them.
		 */
		if (k->stacks != NULL)
			for (int i = 0; i < e->n_stacks; i++)
				wa_twostack_touch(&k->stacks[i], &e->layout, s, values);
		if (k->kept != NULL)
			for (int j = 0; j < e->n_specs; j++)
				wa_kept_touch(&k->kept[j], &e->layout, e->specs[j].size_s,
							  s, values);
	}

	/* the key's deadline may move earlier: a new slice, an earlier window */
	deadline = k->node.deadline;
	if (new_slice || k->node.pos < 0)
	{
		wa_tick		exp = slice_expiry(e, s);

		if (exp < deadline)
			deadline = exp;
	}
	slice_end = slice_end_tick(e, s);
	if (slice_end < deadline)
	{
		wa_tick		tick = first_unfired_end(e, s);

		if (tick < deadline)
			deadline = tick;
	}
	if (deadline != k->node.deadline || k->node.pos < 0)
		key_set_deadline(e, k, deadline);

	/* advance the watermark */
	if (!e->seen_event || t > e->max_ts)
	{
		e->max_ts = t;
		e->seen_event = true;
	}
	wm = (wa_tick) e->max_ts - e->bound;
	if (wm > e->wm)
	{
		wa_heap_node *key_top = wa_heap_top(&e->key_deadlines);
		wa_heap_node *late_top = wa_heap_top(&e->late_deadlines);

		/* usual case: within the same slice, with nothing due */
		if (wm < e->wm_next_edge &&
			(key_top == NULL || key_top->deadline > wm) &&
			(late_top == NULL || late_top->deadline > wm))
			e->wm = wm;
		else
			wa_engine_advance(e, wm);
	}

	return all_accept ? WA_INGEST_ACCEPTED : WA_INGEST_PARTIAL;
}

/* ---------- checkpoint and restore ---------- */

void
wa_engine_checkpoint(wa_engine *e, wa_save_slice_fn save, void *arg,
					 int64_t *expire_below, wa_time_state *time)
{
	for (int64_t i = 0; i < e->n_dirty_keys; i++)
	{
		keystate   *k = e->dirty_keys[i];
		uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride,
												k->dirty_lo);
		wa_key		key;

		pane_key(e, k, &key);
		for (; pos < k->slices.count; pos++)
		{
			int64_t		s = wa_slices_index(&k->slices, e->stride, pos);

			if (s > k->dirty_hi)
				break;
			save(arg, &key, s, wa_slices_acc(&k->slices, e->stride, pos),
				 e->layout.acc_size);
		}
		k->dirty_pos = -1;
	}
	e->n_dirty_keys = 0;

	/*
	 * No live slice lies below expire_limit (see the file header).  The
	 * limit is a wa_tick: before the first event it lies far below
	 * INT64_MIN, where INT64_MIN does as well; once it passes INT64_MAX no
	 * slice can be live at all, and INT64_MAX is the closest bound.
	 */
	if (e->expire_limit < INT64_MIN)
		*expire_below = INT64_MIN;
	else if (e->expire_limit > INT64_MAX)
		*expire_below = INT64_MAX;
	else
		*expire_below = (int64_t) e->expire_limit;

	time->max_ts = e->max_ts;
	time->seen_event = e->seen_event;
	time->wm = e->wm;
}

void
wa_engine_restore_time(wa_engine *e, const wa_time_state *time)
{
	e->max_ts = time->max_ts;
	e->seen_event = time->seen_event;
	/* every threshold is a function of the watermark alone */
	if (time->wm > e->wm)
		set_watermark(e, time->wm);
}

void
wa_engine_restore_slice(wa_engine *e, const wa_key *key, int64_t slice,
						const void *acc, uint32_t acc_size)
{
	keystate   *k;
	void	   *dst;

	/*
	 * A slice below expire_limit has expired by the restored watermark (a
	 * leftover the caller's delete could not express, see the header).
	 */
	if (acc_size != e->layout.acc_size || (wa_tick) slice < e->expire_limit)
		return;

	/* append; restore_done sorts the keys that came out of order */
	k = key_lookup_or_create(e, key);
	dst = wa_slices_insert(&k->slices, &e->mem, e->stride, k->slices.count,
						   slice);
	memcpy(dst, acc, acc_size);
	e->stats.n_slices++;
}

static int
slice_entry_cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* Sort a restored key's slices, dropping repeats of one slice. */
static void
key_sort_slices(wa_engine *e, keystate *k)
{
	wa_slices  *sl = &k->slices;
	uint32_t	n = 0;
	bool		sorted = true;

	for (uint32_t i = 1; i < sl->count && sorted; i++)
		sorted = wa_slices_index(sl, e->stride, i - 1) <
			wa_slices_index(sl, e->stride, i);
	if (sorted)
		return;
	qsort(wa_slices_entry(sl, e->stride, 0), sl->count, e->stride,
		  slice_entry_cmp);
	for (uint32_t i = 0; i < sl->count; i++)
	{
		if (n > 0 && wa_slices_index(sl, e->stride, i) ==
			wa_slices_index(sl, e->stride, n - 1))
			continue;
		if (i != n)
			memcpy(wa_slices_entry(sl, e->stride, n),
				   wa_slices_entry(sl, e->stride, i), e->stride);
		n++;
	}
	e->stats.n_slices -= sl->count - n;
	sl->count = n;
}

void
wa_engine_restore_done(wa_engine *e)
{
	for (uint64_t i = 0; i <= e->keys.mask; i++)
	{
		keystate   *k = e->keys.slots[i].ptr;

		if (k == NULL)
			continue;
		key_sort_slices(e, k);

		/*
		 * The checkpointed key's fired_end may have lagged the global one,
		 * but only over windows without its data; and nothing is due, since
		 * every slice is live and every window with data is unfired.
		 */
		k->fired_end = e->fired_end;
		key_reschedule(e, k);
	}
}

/* ---------- live view ---------- */

/*
 * The unfired windows of spec j of key k that hold data, in start order:
 * like fire_windows, from the first window ending after fired_end, jumping
 * over empty stretches.  Reads only.
 */
static void
live_windows(const wa_engine *e, const keystate *k, int j, wa_emit_fn fn,
			 void *arg, void *scratch, wa_result *results)
{
	const spec *sp = &e->specs[j];
	const wa_slices *sl = &k->slices;
	wa_tick		ws = align_up(sp, e->fired_end - sp->size_s + 1);
	uint32_t	pos = wa_slices_lower_bound(sl, e->stride, ws);
	wa_pane		pane;

	pane_key(e, k, &pane.key);
	pane.window = j;
	pane.kind = WA_PANE_ON_TIME;
	pane.revision = 0;
	pane.results = results;
	pane.acc = scratch;
	while (pos < sl->count)
	{
		wa_tick		first = wa_slices_index(sl, e->stride, pos);
		wa_tick		we = ws + sp->size_s;

		if (first >= we)
		{
			/* empty window: jump to the first window holding that slice */
			ws = align_up(sp, first - sp->size_s + 1);
			continue;
		}
		wa_acc_init(&e->layout, scratch);
		for (uint32_t p = pos;
			 p < sl->count && wa_slices_index(sl, e->stride, p) < we; p++)
			wa_acc_merge(&e->layout, scratch,
						 wa_slices_acc(sl, e->stride, p));
		wa_acc_finalize(&e->layout, scratch, results);
		pane.start = slice_tick(e, ws);
		pane.end = slice_tick(e, we);
		fn(arg, &pane);

		ws += sp->slide_s;
		while (pos < sl->count && wa_slices_index(sl, e->stride, pos) < ws)
			pos++;
	}
}

void
wa_engine_live(const wa_engine *e, wa_emit_fn fn, void *arg, void *scratch,
			   wa_result *results)
{
	/*
	 * Windows ending at or before the global fired_end have fired, even for
	 * a key whose own fired_end lags: those in between hold none of its
	 * data.
	 */
	for (uint64_t i = 0; i <= e->keys.mask; i++)
	{
		const keystate *k = e->keys.slots[i].ptr;

		if (k == NULL)
			continue;
		for (int j = 0; j < e->n_windows; j++)
			live_windows(e, k, j, fn, arg, scratch, results);
	}
}

/* ---------- teardown and accessors ---------- */

void
wa_engine_destroy(wa_engine *e)
{
	wa_mem		mem;

	/* free what is left without emitting anything */
	for (uint64_t i = 0; i <= e->late_windows.mask; i++)
	{
		late_window *w = e->late_windows.slots[i].ptr;

		if (w != NULL)
			wa_mem_free(&e->mem, w, sizeof(late_window));
	}
	for (int64_t i = 0; i < e->n_dirty; i++)
		if (e->dirty[i]->closed)
			wa_mem_free(&e->mem, e->dirty[i], sizeof(late_window));
	for (uint64_t i = 0; i <= e->keys.mask; i++)
	{
		keystate   *k = e->keys.slots[i].ptr;

		if (k != NULL)
		{
			key_free_state(e, k);
			if (e->byte_keys)
				wa_mem_free(&e->mem, k->bytes, k->len > 0 ? k->len : 1);
			wa_mem_free(&e->mem, k, sizeof(keystate));
		}
	}
	wa_hashtab_destroy(&e->keys, &e->mem);
	wa_hashtab_destroy(&e->late_windows, &e->mem);
	wa_heap_destroy(&e->key_deadlines, &e->mem);
	wa_heap_destroy(&e->late_deadlines, &e->mem);
	wa_mem_free(&e->mem, e->dirty, e->dirty_capacity * sizeof(late_window *));
	wa_mem_free(&e->mem, e->dirty_keys,
				e->dirty_keys_capacity * sizeof(keystate *));
	wa_mem_free(&e->mem, e->results, sizeof(wa_result) * (e->layout.n_aggs + 1));
	wa_mem_free(&e->mem, e->scratch, e->layout.acc_size);
	wa_mem_free(&e->mem, e->offsets, sizeof(uint32_t) * (e->layout.n_aggs + 1));
	wa_mem_free(&e->mem, e->aggs, sizeof(wa_agg_spec) * (e->layout.n_aggs + 1));
	wa_mem_free(&e->mem, e->fire_order, sizeof(int) * e->n_specs);
	wa_mem_free(&e->mem, e->specs, sizeof(spec) * e->n_specs);
	wa_mem_free(&e->mem, e->windows, sizeof(wa_window) * e->n_windows);
	/* the engine itself is all that is left, then nothing */
	WA_ASSERT(e->mem.bytes == sizeof(wa_engine));
	mem = e->mem;
	wa_mem_free(&mem, e, sizeof(wa_engine));
	WA_ASSERT(mem.bytes == 0);
}

int64_t
wa_engine_slice_width(const wa_engine *e)
{
	return e->g;
}

uint32_t
wa_engine_acc_size(const wa_engine *e)
{
	return e->layout.acc_size;
}

void
wa_engine_acc_to_portable(const wa_engine *e, const void *acc, uint8_t *out)
{
	wa_acc_to_portable(&e->layout, acc, out);
}

void
wa_engine_acc_from_portable(const wa_engine *e, const uint8_t *in, void *acc)
{
	wa_acc_from_portable(&e->layout, in, acc);
}

wa_tick
wa_engine_watermark(const wa_engine *e)
{
	return e->wm;
}

void
wa_engine_get_stats(const wa_engine *e, wa_stats *stats)
{
	*stats = e->stats;
	stats->mem_bytes = e->mem.bytes;
	stats->peak_mem_bytes = e->mem.peak;
}

const wa_agg_layout *
wa_engine_layout(const wa_engine *e)
{
	return &e->layout;
}
