/*-------------------------------------------------------------------------
 *
 * window_checks.c
 *	  The rules a window set obeys, and which of its windows contain an
 *	  event time, on plain numbers.
 *
 * window_set.c decodes windowagg.window[] arguments and calls these; they
 * need nothing of the catalog, so that the fuzzer (test/fuzz/
 * fuzz_windows.c) can check them against enumeration on any int64
 * values.
 *
 * src/query/window_checks.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

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
 * Window i of a set, against itself and the windows before it.
 */
void
wa_window_check(const WaWindowSet *set, int i)
{
	const wa_window *w = &set->windows[i];

	if (w->size <= 0 || w->slide <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window size and slide must be positive")));
	wa_window_check_size_slide(w->size, w->slide);
	for (int j = 0; j < i; j++)
	{
		const wa_window *o = &set->windows[j];
		int64		g = wa_gcd(o->slide, w->slide);

		/*
		 * Two specs of one size that share a start share a window, and the
		 * result would hold two rows for one (key, window).
		 */
		if (o->size == w->size &&
			wa_floor_mod(o->origin, g) == wa_floor_mod(w->origin, g))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("windows %d and %d overlap: both contain windows with the same start and end",
							wa_window_position(set, j), wa_window_position(set, i)),
					 errhint("Keep one of them; a hopping window with the smaller slide already contains the other's windows.")));
	}
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

void
wa_window_check_count(int n)
{
	if (n <= MAX_WINDOWS)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many windows: %d", n),
			 errdetail("A window set holds at most %d windows.", MAX_WINDOWS)));
}

void
wa_window_set_check_limits(const WaWindowSet *set)
{
	int64		per_event = 0;

	wa_window_check_count(set->n_windows);
	for (int i = 0; i < set->n_windows; i++)
	{
		const wa_window *w = &set->windows[i];
		int64		n = w->size / w->slide + (w->size % w->slide != 0);

		if (n > MAX_WINDOWS_PER_EVENT)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("window %d puts each event into " INT64_FORMAT " windows",
							wa_window_position(set, i), n),
					 errdetail("An event may fall into at most %d windows, and each of them is a pane to emit.",
							   MAX_WINDOWS_PER_EVENT),
					 errhint("Use a longer slide or a shorter size.")));
		/* at most 64 windows of at most 100,000: no overflow */
		per_event += n;
	}
	if (per_event > MAX_WINDOWS_PER_EVENT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the windows put each event into " INT64_FORMAT " windows", per_event),
				 errdetail("An event may fall into at most %d windows, and each of them is a pane to emit.",
						   MAX_WINDOWS_PER_EVENT),
				 errhint("Use longer slides or shorter sizes, or fewer windows.")));
}

/*
 * The windows [w, w + size) with w = origin + k * slide that contain t and
 * whose bounds a type with range [lowest, highest] can hold start at *from,
 * *from + slide, ... up to *to, which need not be a start (none if *from >
 * *to).  Returns whether those are all the windows containing t: near the
 * ends of the range, some reach beyond it, and such a window does not
 * exist.
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

/* ---------- windows at the ends of a type's range ---------- */

void
wa_window_range_set(WaWindowRange *range, const WaWindowSet *set,
					wa_tick lowest, wa_tick highest)
{
	wa_tick		longest = 0;

	range->set = set;
	range->lowest = lowest;
	range->highest = highest;
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

/*
 * Whether a window of the set that exists and contains t is still open for
 * an event that arrives when the watermark is wm: its end plus lateness
 * above wm.  The engine decides acceptance over every window containing
 * t, those beyond the type's range too, whose panes are never emitted: for
 * an event of WA_IN_RANGE_SOME, the caller asks this first, and drops an
 * event only such windows would take instead of losing it in the engine.
 */
bool
wa_window_range_open(const WaWindowRange *range, int64 t, wa_tick wm,
					 int64 lateness)
{
	for (int i = 0; i < range->set->n_windows; i++)
	{
		const wa_window *w = &range->set->windows[i];
		wa_tick		from;
		wa_tick		to;

		(void) wa_existing_windows(t, w->size, w->slide, w->origin,
								   range->lowest, range->highest, &from, &to);
		/* the last existing window ends last */
		if (from <= to &&
			from + ((to - from) / w->slide) * w->slide + w->size + lateness > wm)
			return true;
	}
	return false;
}
