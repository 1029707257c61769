/*-------------------------------------------------------------------------
 *
 * explain.c
 *	  windowagg.explain(): the window coverage plan of a window set, shown
 *	  as a tree in the manner of EXPLAIN.
 *
 * The windows are expressed in units of the slice width g (the gcd of all
 * sizes, slides and origin offsets, as in the engine), so the planner's
 * root S<1,1> is one slice and costs count slice merges per period.  The
 * aggregates decide the sharing mode: min and max may read overlapping
 * parents (covered-by), every other aggregate needs disjoint ones
 * (partitioned-by).
 *
 * src/explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "windowagg.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "engine/wa_planner.h"

PG_FUNCTION_INFO_V1(wa_explain);

/* A duration in ticks as the user wrote it: an interval or a number. */
static char *
format_ticks(int64 ticks, WaTimeDomain domain)
{
	Interval	iv;

	if (domain == WA_TIME_INTEGER)
		return psprintf(INT64_FORMAT, ticks);
	memset(&iv, 0, sizeof(iv));
	iv.time = ticks;
	return DatumGetCString(DirectFunctionCall1(interval_out,
											   IntervalPGetDatum(&iv)));
}

static char *
window_label(int64 range, int64 slide, int64 g, WaTimeDomain domain)
{
	if (range == slide)
		return psprintf("tumbling %s", format_ticks(range * g, domain));
	return psprintf("hopping %s every %s", format_ticks(range * g, domain),
					format_ticks(slide * g, domain));
}

/* Which sharing an aggregate allows: only min and max tolerate overlaps. */
static wa_cover_mode
mode_for_aggregates(ArrayType *aggregates)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(aggregates, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("aggregates must not be empty")));
	for (int i = 0; i < n; i++)
	{
		char	   *name;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("aggregates must not contain nulls")));
		name = TextDatumGetCString(elems[i]);
		if (pg_strcasecmp(name, "min") != 0 && pg_strcasecmp(name, "max") != 0)
			return WA_PARTITIONED_BY;
	}
	return WA_COVERED_BY;
}

typedef struct ExplainOutput
{
	ReturnSetInfo *rsinfo;
	const wa_plan *plan;
	int64		g;
	WaTimeDomain domain;
} ExplainOutput;

static void
emit_line(ExplainOutput *out, const char *line)
{
	Datum		value = CStringGetTextDatum(line);
	bool		isnull = false;

	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc,
						 &value, &isnull);
}

/* Print the children of parent (WA_PLAN_ROOT for the root), depth first. */
static void
emit_children(ExplainOutput *out, int parent, int depth)
{
	for (int i = 0; i < out->plan->n_nodes; i++)
	{
		const wa_plan_node *node = &out->plan->nodes[i];

		if (node->parent != parent)
			continue;
		emit_line(out, psprintf("%*s-> %s%s  (n=" INT64_FORMAT " M=" INT64_FORMAT " cost=%.0f)",
								depth * 2, "",
								window_label(node->range, node->slide, out->g,
											 out->domain),
								node->factor ? " [factor window]" : "",
								node->n, node->m, node->cost));
		emit_children(out, i, depth + 1);
	}
}

/* explain(windows windowagg.window[], aggregates text[]) returns setof text */
Datum
wa_explain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WaWindowSet windows;
	wa_plan_options options;
	wa_plan		plan;
	int64	   *ranges;
	int64	   *slides;
	int64		g = 0;
	int64		origin0;
	bool		aligned = true;
	const char *problem;
	ExplainOutput out;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("windows must not be null")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("aggregates must not be null")));
	wa_window_set_from_array(PG_GETARG_ARRAYTYPE_P(0), &windows);

	/* the slice width, exactly as the engine computes it */
	origin0 = wa_floor_mod(windows.windows[0].origin, windows.windows[0].slide);
	for (int i = 0; i < windows.n_windows; i++)
	{
		const wa_window *w = &windows.windows[i];

		g = wa_gcd(g, w->size);
		g = wa_gcd(g, w->slide);
		g = wa_gcd(g, wa_floor_mod(w->origin, w->slide) - origin0);
	}

	/*
	 * One window can feed another only if their instances line up: every
	 * window must start where the first one does, modulo its slide.
	 */
	for (int i = 0; i < windows.n_windows; i++)
		if (wa_tick_floor_mod((wa_tick) windows.windows[i].origin -
							  windows.windows[0].origin,
							  windows.windows[i].slide) != 0)
			aligned = false;

	ranges = palloc(sizeof(int64) * windows.n_windows);
	slides = palloc(sizeof(int64) * windows.n_windows);
	for (int i = 0; i < windows.n_windows; i++)
	{
		ranges[i] = windows.windows[i].size / g;
		slides[i] = windows.windows[i].slide / g;
	}

	memset(&options, 0, sizeof(options));
	options.mode = mode_for_aggregates(PG_GETARG_ARRAYTYPE_P(1));
	options.factor_windows = aligned;
	options.root = 1;
	options.event_rate = 1.0;
	problem = wa_plan_build(ranges, slides, windows.n_windows, &options, &plan);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot plan these windows: %s", problem)));
	else
	{
		/* the planner mallocs: move its nodes into palloc'd memory at once */
		wa_plan	copy = plan;
		wa_plan_node *nodes = palloc(sizeof(wa_plan_node) * plan.n_nodes);

		memcpy(nodes, plan.nodes, sizeof(wa_plan_node) * plan.n_nodes);
		wa_plan_free(&plan);	/* clears the struct: restore the totals */
		plan = copy;
		plan.nodes = nodes;
	}
	if ((wa_tick) plan.period * g > PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the windows' common period is too long to plan"),
				 errdetail("The least common multiple of the window sizes exceeds the range of bigint.")));
	if (!aligned)
	{
		/* no coverage between misaligned windows: each from the slices */
		for (int i = 0; i < plan.n_nodes; i++)
		{
			plan.nodes[i].parent = WA_PLAN_ROOT;
			plan.nodes[i].m = plan.nodes[i].range;
			plan.nodes[i].cost = (double) plan.nodes[i].n * plan.nodes[i].m;
		}
		plan.total_cost = plan.slices_cost;
	}

	SetSingleFuncCall(fcinfo, SRF_SINGLE_USE_EXPECTED);
	out.rsinfo = rsinfo;
	out.plan = &plan;
	out.g = g;
	out.domain = windows.domain;
	emit_line(&out, psprintf("Window plan (%s, period %s)",
							 options.mode == WA_COVERED_BY ?
							 "covered-by: min/max only" : "partitioned-by",
							 format_ticks(plan.period * g, windows.domain)));
	emit_line(&out, psprintf("slices of %s", format_ticks(g, windows.domain)));
	emit_children(&out, WA_PLAN_ROOT, 1);
	emit_line(&out, psprintf("Total cost: %.0f merges per period", plan.total_cost));
	emit_line(&out, psprintf("Without coverage sharing (shared slices only): %.0f",
							 plan.slices_cost));
	emit_line(&out, psprintf("Every window from raw events: %.0f", plan.raw_cost));
	if (!aligned)
		emit_line(&out, "Windows start at different origins: each is computed from slices.");
	return (Datum) 0;
}
