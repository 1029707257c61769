/*-------------------------------------------------------------------------
 *
 * explain.c
 *	  windowagg.explain(): the window coverage plan that the engine runs for
 *	  a window set (or a pipeline), shown as a tree in the manner of
 *	  EXPLAIN.
 *
 * The plan is the engine's own (wa_engine_plan), so what is shown is what
 * runs.  Windows are expressed in units of the slice width g (the gcd of
 * all sizes, slides and origin offsets), so the planner's root S<1,1> is
 * one slice and costs count merges per period.  The aggregates decide the
 * sharing mode: min and max may read overlapping parents (covered-by),
 * every other aggregate needs disjoint ones (partitioned-by).  A window
 * that overlaps itself four times or more is emitted from slices through
 * a two-stack, at about 2 slide/g + 1 merges per instance.
 *
 * src/commands/explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"


PG_FUNCTION_INFO_V1(wa_explain);
PG_FUNCTION_INFO_V1(wa_explain_pipeline);

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

/*
 * Engine aggregates standing for the named ones: only whether each merges
 * idempotently (min, max, bool_and, bit_or, ...) matters to the plan.
 */
static wa_agg_spec *
aggs_from_names(ArrayType *aggregates, int *n_aggs)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	wa_agg_spec *aggs;

	deconstruct_array(aggregates, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("aggregates must not be empty")));
	aggs = palloc0(sizeof(wa_agg_spec) * n);
	for (int i = 0; i < n; i++)
	{
		char	   *name;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("aggregates must not contain nulls")));
		name = TextDatumGetCString(elems[i]);
		/* only whether its merge is idempotent matters to the plan */
		if (wa_aggregate_name_is_idempotent(name))
			aggs[i].kind = WA_AGG_MIN_INT;
		else
			aggs[i].kind = WA_AGG_COUNT_STAR;
	}
	*n_aggs = n;
	return aggs;
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
		emit_line(out, psprintf("%*s-> %s%s%s  (n=" INT64_FORMAT " M=" INT64_FORMAT " cost=%.0f)",
								depth * 2, "",
								window_label(node->range, node->slide, out->g,
											 out->domain),
								node->factor ? " [factor window]" : "",
								node->stacked ? " [two-stack]" : "",
								node->n, node->m, node->cost));
		emit_children(out, i, depth + 1);
	}
}

/*
 * Session windows: one accumulator per open session and key, which events
 * merge; nothing to plan.
 */
static void
emit_sessions(ExplainOutput *out, const WaWindowSet *windows)
{
	if (windows->n_sessions == 0)
		return;
	emit_line(out, "Session windows (per key, one state per open session; they share no slices)");
	for (int i = 0; i < windows->n_sessions; i++)
		emit_line(out, psprintf("  -> session gap %s",
								format_ticks(windows->sessions[i].gap,
											 windows->domain)));
}

/*
 * Plan the windows as the engine would and return the plan as rows of the
 * set-returning function; title names what is explained, or is NULL.
 */
static Datum
explain_windows(FunctionCallInfo fcinfo, const WaWindowSet *windows,
				wa_agg_spec *aggs, int n_aggs, const char *title)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	wa_allocator allocator;
	wa_config	config;
	wa_plan		plan;
	int64		g;
	bool		aligned = true;
	const char *problem;
	ExplainOutput out;

	if (windows->n_windows == 0)
	{
		InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
		out.rsinfo = rsinfo;
		out.domain = windows->domain;
		if (title != NULL)
			emit_line(&out, title);
		emit_sessions(&out, windows);
		return (Datum) 0;
	}
	memset(&config, 0, sizeof(config));
	config.n_windows = windows->n_windows;
	config.windows = windows->windows;
	config.n_aggs = n_aggs;
	config.aggs = aggs;
	config.share_windows = wa_share_windows;
	/* the plan lives in this context: an ERROR below releases it too */
	wa_engine_allocator_init(&allocator, CurrentMemoryContext);
	config.allocator = &allocator;
	problem = wa_engine_plan(&config, &plan, &g);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot plan these windows: %s", problem)));
	if ((wa_tick) plan.period * g > PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the windows' common period is too long to plan"),
				 errdetail("The least common multiple of the window sizes exceeds the range of bigint.")));
	for (int i = 0; i < windows->n_windows; i++)
		if (wa_tick_floor_mod((wa_tick) windows->windows[i].origin -
							  windows->windows[0].origin,
							  windows->windows[i].slide) != 0)
			aligned = false;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	out.rsinfo = rsinfo;
	out.plan = &plan;
	out.g = g;
	out.domain = windows->domain;
	if (title != NULL)
		emit_line(&out, title);
	emit_line(&out, psprintf("Window plan (%s, period %s)",
							 plan.mode == WA_COVERED_BY ?
							 "covered-by: idempotent merges only" : "partitioned-by",
							 format_ticks(plan.period * g, windows->domain)));
	emit_line(&out, psprintf("slices of %s", format_ticks(g, windows->domain)));
	emit_children(&out, WA_PLAN_ROOT, 1);
	emit_line(&out, psprintf("Total cost: %.0f merges per period", plan.total_cost));
	emit_line(&out, psprintf("Without coverage sharing (shared slices only): %.0f",
							 plan.slices_cost));
	emit_line(&out, psprintf("Every window from raw events: %.0f", plan.raw_cost));
	if (!wa_share_windows)
		emit_line(&out, "windowagg.share_windows is off: each window is computed from slices.");
	else if (!aligned)
		emit_line(&out, "Windows start at different origins: each is computed from slices.");
	emit_sessions(&out, windows);
	wa_plan_free(&plan);
	return (Datum) 0;
}

/* explain(windows windowagg.window[], aggregates text[]) returns setof text */
Datum
wa_explain(PG_FUNCTION_ARGS)
{
	WaWindowSet windows;
	wa_agg_spec *aggs;
	int			n_aggs;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("windows must not be null")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("aggregates must not be null")));
	wa_window_set_from_array(PG_GETARG_ARRAYTYPE_P(0), &windows);
	aggs = aggs_from_names(PG_GETARG_ARRAYTYPE_P(1), &n_aggs);
	return explain_windows(fcinfo, &windows, aggs, n_aggs, NULL);
}

/*
 * explain(pipeline text) returns setof text: the plan the pipeline's
 * worker runs.  Whoever may read the pipeline's results may see it.
 */
Datum
wa_explain_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	WaPipelineDef *def;
	WaAggQuery *query;
	wa_agg_spec *aggs;

	query = wa_pipeline_query_for_reader(name, "Explaining a pipeline", &def);
	aggs = palloc0(sizeof(wa_agg_spec) * (query->n_aggs + 1));
	wa_agg_query_engine_aggs(query, aggs);
	return explain_windows(fcinfo, &def->windows, aggs, query->n_aggs,
						   psprintf("Pipeline %s", def->name));
}
