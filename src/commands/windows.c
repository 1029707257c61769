/*-------------------------------------------------------------------------
 *
 * windows.c
 *	  Window constructors (tumbling, hopping, session) and window_starts().
 *
 * A window is the composite windowagg.window (time_domain, size, slide,
 * origin, kind, and what calendar windows will use), sizes and origin in
 * ticks.  Keeping ticks rather than intervals
 * means validation happens once, in the constructor, where the error can
 * name the argument the user typed.
 *
 * src/commands/windows.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(wa_window_interval);
PG_FUNCTION_INFO_V1(wa_window_integer);
PG_FUNCTION_INFO_V1(wa_window_starts_timestamptz);
PG_FUNCTION_INFO_V1(wa_window_starts_integer);

PG_FUNCTION_INFO_V1(wa_session_interval);
PG_FUNCTION_INFO_V1(wa_session_integer);

/*
 * The attributes of windowagg.window that windowagg fills in; calendar
 * windows will use the ones after (time_zone, size_unit, slide_unit),
 * NULL until then.  Before 0.3.0 the type had the first four only, and
 * the library builds values of whichever type the SQL objects declare.
 */
#define WINDOW_FILLED_NATTS 5

static Datum
make_window(FunctionCallInfo fcinfo, WaTimeDomain domain, int64 size,
			int64 slide, int64 origin, const char *kind)
{
	TupleDesc	tupdesc;
	Datum	   *values;
	bool	   *nulls;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values = palloc0(sizeof(Datum) * Max(tupdesc->natts, WINDOW_FILLED_NATTS));
	nulls = palloc(sizeof(bool) * Max(tupdesc->natts, WINDOW_FILLED_NATTS));
	memset(nulls, true, sizeof(bool) * Max(tupdesc->natts, WINDOW_FILLED_NATTS));
	values[0] = CStringGetTextDatum(wa_time_domain_name(domain));
	values[1] = Int64GetDatum(size);
	values[2] = Int64GetDatum(slide);
	values[3] = Int64GetDatum(origin);
	values[4] = CStringGetTextDatum(kind);
	for (int i = 0; i < WINDOW_FILLED_NATTS; i++)
		nulls[i] = false;
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

static const char *
fixed_kind(int64 size, int64 slide)
{
	return size == slide ? "tumbling" : "hopping";
}

static void
require_arg(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", argname)));
}

/* window(size interval, slide interval, origin timestamptz) */
Datum
wa_window_interval(PG_FUNCTION_ARGS)
{
	int64		size;
	int64		slide;
	int64		origin;

	require_arg(fcinfo, 0, "size");
	size = wa_interval_to_ticks(PG_GETARG_INTERVAL_P(0), "size", false);
	slide = PG_ARGISNULL(1) ? size :
		wa_interval_to_ticks(PG_GETARG_INTERVAL_P(1), "slide", false);
	origin = PG_ARGISNULL(2) ? wa_unix_epoch_ticks() :
		wa_timestamp_to_ticks(PG_GETARG_TIMESTAMPTZ(2), "origin");
	wa_window_check_size_slide(size, slide);
	return make_window(fcinfo, WA_TIME_TIMESTAMP, size, slide, origin,
					   fixed_kind(size, slide));
}

/* window(size bigint, slide bigint, origin bigint) */
Datum
wa_window_integer(PG_FUNCTION_ARGS)
{
	int64		size;
	int64		slide;
	int64		origin;

	require_arg(fcinfo, 0, "size");
	size = PG_GETARG_INT64(0);
	slide = PG_ARGISNULL(1) ? size : PG_GETARG_INT64(1);
	origin = PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2);
	if (size <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("size must be positive")));
	if (slide <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slide must be positive")));
	wa_window_check_size_slide(size, slide);
	return make_window(fcinfo, WA_TIME_INTEGER, size, slide, origin,
					   fixed_kind(size, slide));
}

/*
 * session(gap interval) and session(gap bigint).  A session window's size
 * and slide are its gap; its origin means nothing.
 */
Datum
wa_session_interval(PG_FUNCTION_ARGS)
{
	int64		gap;

	require_arg(fcinfo, 0, "gap");
	gap = wa_interval_to_ticks(PG_GETARG_INTERVAL_P(0), "gap", false);
	return make_window(fcinfo, WA_TIME_TIMESTAMP, gap, gap, 0, "session");
}

Datum
wa_session_integer(PG_FUNCTION_ARGS)
{
	int64		gap;

	require_arg(fcinfo, 0, "gap");
	gap = PG_GETARG_INT64(0);
	if (gap <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gap must be positive")));
	return make_window(fcinfo, WA_TIME_INTEGER, gap, gap, 0, "session");
}


typedef struct WindowStartsState
{
	wa_tick		next;
	wa_tick		last;
	int64		slide;
	Oid			typid;
} WindowStartsState;

/*
 * Return, in ascending order, the start of every window [w, w + size) with
 * w = origin + k * slide that contains t and that the type can hold, one
 * value per call: size / slide may be huge and the caller may stop early.
 */
static Datum
window_starts(FunctionCallInfo fcinfo, int64 t, int64 size, int64 slide,
			  int64 origin, Oid typid)
{
	FuncCallContext *funcctx;
	WindowStartsState *state;
	Datum		value;

	if (SRF_IS_FIRSTCALL())
	{
		wa_tick		lowest;
		wa_tick		highest;

		wa_window_check_size_slide(size, slide);
		funcctx = SRF_FIRSTCALL_INIT();
		state = MemoryContextAlloc(funcctx->multi_call_memory_ctx,
								   sizeof(WindowStartsState));
		wa_ticks_range(typid, &lowest, &highest);
		(void) wa_existing_windows(t, size, slide, origin, lowest, highest,
								&state->next, &state->last);
		state->slide = slide;
		state->typid = typid;
		funcctx->user_fctx = state;
	}
	funcctx = SRF_PERCALL_SETUP();
	state = funcctx->user_fctx;
	if (state->next > state->last)
		SRF_RETURN_DONE(funcctx);
	value = wa_ticks_to_datum(state->next, state->typid, "window start");
	state->next += state->slide;
	SRF_RETURN_NEXT(funcctx, value);
}

/* window_starts(ts timestamptz, size interval, slide interval, origin) */
Datum
wa_window_starts_timestamptz(PG_FUNCTION_ARGS)
{
	int64		t;
	int64		size;
	int64		slide;
	int64		origin;

	require_arg(fcinfo, 0, "ts");
	require_arg(fcinfo, 1, "size");
	t = wa_timestamp_to_ticks(PG_GETARG_TIMESTAMPTZ(0), "ts");
	size = wa_interval_to_ticks(PG_GETARG_INTERVAL_P(1), "size", false);
	slide = PG_ARGISNULL(2) ? size :
		wa_interval_to_ticks(PG_GETARG_INTERVAL_P(2), "slide", false);
	origin = PG_ARGISNULL(3) ? wa_unix_epoch_ticks() :
		wa_timestamp_to_ticks(PG_GETARG_TIMESTAMPTZ(3), "origin");
	return window_starts(fcinfo, t, size, slide, origin, TIMESTAMPTZOID);
}

/* window_starts(ts bigint, size bigint, slide bigint, origin bigint) */
Datum
wa_window_starts_integer(PG_FUNCTION_ARGS)
{
	int64		size;
	int64		slide;

	require_arg(fcinfo, 0, "ts");
	require_arg(fcinfo, 1, "size");
	size = PG_GETARG_INT64(1);
	slide = PG_ARGISNULL(2) ? size : PG_GETARG_INT64(2);
	if (size <= 0 || slide <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be positive", size <= 0 ? "size" : "slide")));
	return window_starts(fcinfo, PG_GETARG_INT64(0), size, slide,
						 PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3), INT8OID);
}
