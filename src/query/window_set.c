/*-------------------------------------------------------------------------
 *
 * window_set.c
 *	  Window sets: decoding windowagg.window[] arguments, their limits, and
 *	  which windows of a set contain an event time.
 *
 * A window is the composite windowagg.window (time_domain, size, slide,
 * origin), sizes and origin in ticks, made by the constructors in
 * src/commands/windows.c.
 *
 * src/query/window_set.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

void
wa_window_check_size_slide(int64 size, int64 slide)
{
	if (size < slide)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window size must not be smaller than its slide"),
				 errdetail("Such windows leave gaps that no window covers.")));
}

/*
 * The windows [w, w + size) with w = origin + k * slide that contain t and
 * whose bounds a type with range [lowest, highest] can hold start at *from,
 * *from + slide, ... *to (none if *from > *to).  Returns whether those are
 * all the windows containing t: near the ends of the range, some reach
 * beyond it, and such a window does not exist.
 */
bool
wa_existing_windows(wa_tick t, int64 size, int64 slide, int64 origin,
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
		wa_window_check_size_slide(w->size, w->slide);
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

		if (!wa_existing_windows(t, w->size, w->slide, w->origin,
							  range->lowest, range->highest, &from, &to))
			all = false;
		if (from <= to)
			any = true;
	}
	return all ? WA_IN_RANGE_ALL : any ? WA_IN_RANGE_SOME : WA_IN_RANGE_NONE;
}
