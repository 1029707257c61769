/*-------------------------------------------------------------------------
 *
 * window_spec.c
 *	  Window constructors (tumbling, hopping), window_starts(), and decoding
 *	  of windowagg.window[] arguments.
 *
 * A window is the composite windowagg.window (time_domain, size, slide,
 * origin), sizes and origin in ticks.  Keeping ticks rather than intervals
 * means validation happens once, in the constructor, where the error can
 * name the argument the user typed.
 *
 * src/window_spec.c
 *
 *-------------------------------------------------------------------------
 */
#include "windowagg.h"

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

#define WINDOW_NATTS 4

static void
check_size_slide(int64 size, int64 slide)
{
	if (size < slide)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window size must not be smaller than its slide"),
				 errdetail("Such windows leave gaps that no window covers.")));
}

static Datum
make_window(FunctionCallInfo fcinfo, WaTimeDomain domain, int64 size,
			int64 slide, int64 origin)
{
	TupleDesc	tupdesc;
	Datum		values[WINDOW_NATTS];
	bool		nulls[WINDOW_NATTS] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = CStringGetTextDatum(wa_time_domain_name(domain));
	values[1] = Int64GetDatum(size);
	values[2] = Int64GetDatum(slide);
	values[3] = Int64GetDatum(origin);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
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
	check_size_slide(size, slide);
	return make_window(fcinfo, WA_TIME_TIMESTAMP, size, slide, origin);
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
	check_size_slide(size, slide);
	return make_window(fcinfo, WA_TIME_INTEGER, size, slide, origin);
}

/*
 * The windows [w, w + size) with w = origin + k * slide that contain t and
 * whose bounds a type with range [lowest, highest] can hold start at *from,
 * *from + slide, ... *to (none if *from > *to).  Returns whether those are
 * all the windows containing t: near the ends of the range, some reach
 * beyond it, and such a window does not exist.
 */
static bool
existing_windows(wa_tick t, int64 size, int64 slide, int64 origin,
				 wa_tick lowest, wa_tick highest, wa_tick *from, wa_tick *to)
{
	/* the windows containing t start at first, first + slide, ... last */
	wa_tick		last = t - wa_tick_floor_mod(t - origin, slide);
	wa_tick		first = last - ((last - (t - size + 1)) / slide) * slide;

	*from = first;
	if (first < lowest)
		*from = first + ((lowest - first + slide - 1) / slide) * slide;
	*to = Min(last, highest - size);
	return first >= lowest && last + size <= highest;
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

		check_size_slide(size, slide);
		funcctx = SRF_FIRSTCALL_INIT();
		state = MemoryContextAlloc(funcctx->multi_call_memory_ctx,
								   sizeof(WindowStartsState));
		wa_ticks_range(typid, &lowest, &highest);
		(void) existing_windows(t, size, slide, origin, lowest, highest,
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

/* Read one field of a windowagg.window value. */
static int64
window_field(HeapTupleHeader tup, int attno, const char *name)
{
	bool		isnull;
	Datum		d = GetAttributeByNum(tup, attno, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("window %s must not be null", name)));
	return DatumGetInt64(d);
}

/*
 * The most windows a set may hold: the engine keeps state and does work per
 * window for every key, and its planner is quadratic in them.
 */
#define MAX_WINDOWS 64

/*
 * The most windows one event may fall into, over every window of a set: each
 * of them is a pane to emit for it (and again for a late event), and a
 * hopping('1 day', '1 microsecond') would give 86,400,000,000.
 */
#define MAX_WINDOWS_PER_EVENT 100000

static void
too_many_windows(int n)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many windows: %d", n),
			 errdetail("A window set holds at most %d windows.", MAX_WINDOWS)));
}

void
wa_window_set_check_limits(const WaWindowSet *set)
{
	int64		per_event = 0;

	if (set->n_windows > MAX_WINDOWS)
		too_many_windows(set->n_windows);
	for (int i = 0; i < set->n_windows; i++)
	{
		const wa_window *w = &set->windows[i];
		int64		n = w->size / w->slide + (w->size % w->slide != 0);

		per_event += n;
		if (n > MAX_WINDOWS_PER_EVENT)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("window %d puts each event into " INT64_FORMAT " windows", i + 1, n),
					 errdetail("An event may fall into at most %d windows, and each of them is a pane to emit.",
							   MAX_WINDOWS_PER_EVENT),
					 errhint("Use a longer slide or a shorter size.")));
	}
	if (per_event > MAX_WINDOWS_PER_EVENT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the windows put each event into " INT64_FORMAT " windows", per_event),
				 errdetail("An event may fall into at most %d windows, and each of them is a pane to emit.",
						   MAX_WINDOWS_PER_EVENT),
				 errhint("Use longer slides or shorter sizes, or fewer windows.")));
}

void
wa_window_set_from_array(ArrayType *arr, WaWindowSet *set)
{
	int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));

	/* before any work in proportion to it: decoding is quadratic */
	if (n > MAX_WINDOWS)
		too_many_windows(n);
	wa_window_set_decode(arr, set);
	wa_window_set_check_limits(set);
}

void
wa_window_set_decode(ArrayType *arr, WaWindowSet *set)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("windows must not be empty"),
				 errhint("Pass for example ARRAY[windowagg.tumbling('1 hour')].")));

	set->n_windows = n;
	set->windows = palloc(sizeof(wa_window) * n);
	for (int i = 0; i < n; i++)
	{
		HeapTupleHeader tup;
		bool		isnull;
		Datum		d_datum;
		char	   *domain;
		WaTimeDomain d;
		wa_window  *w = &set->windows[i];

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("windows must not contain nulls")));
		tup = DatumGetHeapTupleHeader(elems[i]);
		d_datum = GetAttributeByNum(tup, 1, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("window time_domain must not be null")));
		domain = TextDatumGetCString(d_datum);
		if (strcmp(domain, "interval") == 0)
			d = WA_TIME_TIMESTAMP;
		else if (strcmp(domain, "integer") == 0)
			d = WA_TIME_INTEGER;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid window time_domain \"%s\"", domain),
					 errhint("Build windows with windowagg.tumbling() or windowagg.hopping().")));
		if (i == 0)
			set->domain = d;
		else if (d != set->domain)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("windows mix interval and integer sizes"),
					 errhint("Use interval sizes for timestamp event times and integer sizes for integer event times.")));
		w->size = window_field(tup, 2, "size");
		w->slide = window_field(tup, 3, "slide");
		w->origin = window_field(tup, 4, "origin");
		if (w->size <= 0 || w->slide <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("window size and slide must be positive")));
		check_size_slide(w->size, w->slide);
		CHECK_FOR_INTERRUPTS();
		for (int j = 0; j < i; j++)
		{
			wa_window  *o = &set->windows[j];

			int64		g = wa_gcd(o->slide, w->slide);

			/*
			 * Two specs of one size that share a start share a window, and
			 * the result would hold two rows for one (key, window).
			 */
			if (o->size == w->size &&
				wa_floor_mod(o->origin, g) == wa_floor_mod(w->origin, g))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("windows %d and %d overlap: both contain windows with the same start and end",
								j + 1, i + 1),
						 errhint("Keep one of them; a hopping window with the smaller slide already contains the other's windows.")));
		}
	}
}

void
wa_window_set_check_domain(const WaWindowSet *set, const WaAggQuery *q)
{
	if (set->domain != q->domain)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("windows have %s sizes but event_time column \"%s\" has type %s",
						wa_time_domain_name(set->domain),
						q->event_time_name,
						format_type_be(q->event_time_type)),
				 errhint(q->domain == WA_TIME_TIMESTAMP ?
						 "Use interval sizes, for example windowagg.tumbling('1 hour')." :
						 "Use integer sizes, for example windowagg.tumbling(100).")));
}

/* ---------- windows at the ends of a type's range ---------- */

void
wa_window_range_init(WaWindowRange *range, const WaWindowSet *set,
					 Oid window_type)
{
	wa_tick		longest = 0;

	range->set = set;
	wa_ticks_range(window_type, &range->lowest, &range->highest);
	for (int i = 0; i < set->n_windows; i++)
		longest = Max(longest, (wa_tick) set->windows[i].size);
	/* every window containing such a t lies within [t - size, t + size] */
	range->safe_from = range->lowest + longest;
	range->safe_to = range->highest - longest;
}

WaWindowsInRange
wa_window_range_check(const WaWindowRange *range, int64 t)
{
	bool		all = true;
	bool		any = false;

	for (int i = 0; i < range->set->n_windows; i++)
	{
		const wa_window *w = &range->set->windows[i];
		wa_tick		from;
		wa_tick		to;

		if (!existing_windows(t, w->size, w->slide, w->origin,
							  range->lowest, range->highest, &from, &to))
			all = false;
		if (from <= to)
			any = true;
	}
	return all ? WA_IN_RANGE_ALL : any ? WA_IN_RANGE_SOME : WA_IN_RANGE_NONE;
}
