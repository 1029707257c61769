/*-------------------------------------------------------------------------
 *
 * wa_engine_plan.c
 *	  The engine's configuration: checking a config, the slice width, and
 *	  the glue to the window coverage planner (wa_planner.h) that turns the
 *	  config's windows into the specs the engine runs.
 *
 * Shared windows (config->share_windows).  The coverage planner may compute
 * a window from another window's instances instead of from slices, and may
 * add factor windows nobody asked for to serve as such parents: specs
 * beyond n_windows.  Here each spec gets its parent, the number of parent
 * instances it merges (m), its ring of kept instances (n_kept), its
 * two-stack cache if it overlaps itself enough, and its place in the fire
 * order (parents first); wa_engine.c fires them.
 *
 * src/engine/wa_engine_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

#include "wa_planner.h"

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

/* ---------- configuration ---------- */

const char *
wa_config_check(const wa_config *config)
{
	if (config->n_windows < 0 || config->n_sessions < 0 ||
		config->n_windows + config->n_sessions == 0)
		return "at least one window is required";
	if (config->n_windows > 0 && config->windows == NULL)
		return "windows must not be NULL";
	if (config->n_sessions > 0 && config->sessions == NULL)
		return "sessions must not be NULL";
	if (config->n_sessions > WA_MAX_SESSION_WINDOWS)
		return "too many session windows";
	for (int i = 0; i < config->n_sessions; i++)
		if (config->sessions[i].gap <= 0)
			return "session gap must be positive";
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

		if ((int) kind < WA_AGG_COUNT_STAR || kind > WA_AGG_LAST_KIND)
			return "unknown aggregate kind";
		if (kind != WA_AGG_COUNT_STAR && config->aggs[i].input < 0)
			return "aggregate input index must not be negative";
		if (kind == WA_AGG_GENERIC &&
			(config->generic == NULL || config->generic->transition == NULL ||
			 config->generic->combine == NULL || config->generic->copy == NULL ||
			 config->generic->final == NULL || config->generic->release == NULL))
			return "generic aggregates need every callback";
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
int64_t
wa_config_slice_width(const wa_config *config, int64_t *origin0)
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

/*
 * min and max, and generic aggregates whose merge is idempotent, may merge
 * overlapping parents; anything else may not
 */
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
			case WA_AGG_GENERIC:
				if (!config->aggs[i].idempotent)
					return WA_PARTITIONED_BY;
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
	int64_t		g = wa_config_slice_width(config, &origin0);
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
	if (config->n_windows == 0)
	{
		/* session windows only: nothing shares slices */
		memset(plan, 0, sizeof(*plan));
		*slice_width = 1;
		return NULL;
	}
	return plan_windows(config, config->allocator, plan, slice_width);
}

/* ---------- specs ---------- */

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

/*
 * The specs of a new engine, whose windows, g, base and lateness are set:
 * the requested windows, then the plan's factor windows, with their
 * parents, rings, two-stacks, fire step and fire order.
 */
void
wa_specs_init(wa_engine *e, const wa_config *config)
{
	int64_t		g = e->g;
	wa_plan		plan;
	wa_allocator own;
	bool		shared = false;

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
}
