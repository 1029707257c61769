/*-------------------------------------------------------------------------
 *
 * window_set.c
 *	  Window sets: decoding windowagg.window[] arguments (their rules and
 *	  limits are window_checks.c's).
 *
 * A window is the composite windowagg.window (time_domain, size, slide,
 * origin, kind, time_zone, size_unit, slide_unit), sizes and origin in
 * ticks, made by the constructors in src/commands/windows.c.  Values made
 * before 0.3.0 (kept in pipeline definitions) have the first four
 * attributes only, and read as NULL beyond.
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

/* What a window's kind attribute says: tumbling, hopping or either */
typedef enum WindowKind
{
	KIND_FIXED,					/* hopping, or NULL: made before 0.3.0 */
	KIND_TUMBLING,
	KIND_SESSION
} WindowKind;

static WindowKind window_kind(HeapTupleHeader tup, int i);

static void add_session(WaWindowSet *set, int64 gap, int i);

/*
 * Attribute attno of a window value, NULL beyond the attributes the value
 * has: one made before 0.3.0 has four, and so has the type itself while
 * the extension's objects are older than the library.
 */
static Datum
window_attr(HeapTupleHeader tup, int attno, bool *isnull)
{
	if (attno > HeapTupleHeaderGetNatts(tup))
	{
		*isnull = true;
		return (Datum) 0;
	}
	return GetAttributeByNum(tup, attno, isnull);
}

/* Read one field of a windowagg.window value. */
static int64
window_field(HeapTupleHeader tup, int attno, const char *name)
{
	bool		isnull;
	Datum		d = window_attr(tup, attno, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("window %s must not be null", name)));
	return DatumGetInt64(d);
}

void
wa_window_set_from_array(ArrayType *arr, WaWindowSet *set)
{
	int			n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));

	/* before any work in proportion to it: decoding is quadratic */
	wa_window_check_count(n);
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

	set->n_windows = 0;
	set->windows = palloc(sizeof(wa_window) * n);
	set->n_sessions = 0;
	set->sessions = palloc(sizeof(wa_session_window) * n);
	set->positions = palloc(sizeof(int) * n);
	set->session_positions = palloc(sizeof(int) * n);
	for (int i = 0; i < n; i++)
	{
		HeapTupleHeader tup;
		bool		isnull;
		Datum		d_datum;
		char	   *domain;
		WaTimeDomain d;
		wa_window	w;
		WindowKind	kind;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("windows must not contain nulls")));
		tup = DatumGetHeapTupleHeader(elems[i]);
		d_datum = window_attr(tup, 1, &isnull);
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
					 errhint("Build windows with windowagg.tumbling(), windowagg.hopping() or windowagg.session().")));
		if (i == 0)
			set->domain = d;
		else if (d != set->domain)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("windows mix interval and integer sizes"),
					 errhint("Use interval sizes for timestamp event times and integer sizes for integer event times.")));
		w.size = window_field(tup, 2, "size");
		w.slide = window_field(tup, 3, "slide");
		for (int attno = 6; attno <= 8; attno++)
		{
			(void) window_attr(tup, attno, &isnull);
			if (!isnull)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("calendar windows are not supported yet"),
						 errdetail("Window %d has a time zone or a calendar unit.", i + 1),
						 errhint("Build windows with windowagg.tumbling(), windowagg.hopping() or windowagg.session().")));
		}
		CHECK_FOR_INTERRUPTS();
		kind = window_kind(tup, i);
		/* what a constructor makes: no other combination */
		if ((kind == KIND_TUMBLING || kind == KIND_SESSION) && w.size != w.slide)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("window %d is %s but its slide differs from its size", i + 1,
							kind == KIND_SESSION ? "a session window" : "tumbling"),
					 errhint("Build windows with windowagg.tumbling(), windowagg.hopping() or windowagg.session().")));
		if (kind == KIND_SESSION)
		{
			/* a session's origin means nothing */
			set->session_positions[set->n_sessions] = i + 1;
			add_session(set, w.size, i);
		}
		else
		{
			w.origin = window_field(tup, 4, "origin");
			set->positions[set->n_windows] = i + 1;
			set->windows[set->n_windows++] = w;
			wa_window_check(set, set->n_windows - 1);
		}
	}
}

/*
 * The kind of window i (tuple tup); a NULL kind is a window made before
 * sessions existed, tumbling or hopping.
 */
static WindowKind
window_kind(HeapTupleHeader tup, int i)
{
	bool		isnull;
	Datum		d = window_attr(tup, 5, &isnull);
	char	   *kind;

	if (isnull)
		return KIND_FIXED;
	kind = TextDatumGetCString(d);
	if (strcmp(kind, "session") == 0)
		return KIND_SESSION;
	if (strcmp(kind, "tumbling") == 0)
		return KIND_TUMBLING;
	if (strcmp(kind, "hopping") == 0)
		return KIND_FIXED;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid window kind \"%s\"", kind),
			 errdetail("Window %d is not tumbling, hopping or session.", i + 1),
			 errhint("Build windows with windowagg.tumbling(), windowagg.hopping() or windowagg.session().")));
	return KIND_FIXED;			/* keep the compiler quiet */
}

/* A session window of the given gap: positive, and no other has it. */
static void
add_session(WaWindowSet *set, int64 gap, int i)
{
	if (gap <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("session gap must be positive"),
				 errdetail("Window %d has gap " INT64_FORMAT ".", i + 1, gap)));
	for (int j = 0; j < set->n_sessions; j++)
		if (set->sessions[j].gap == gap)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("window %d repeats a session window", i + 1),
					 errdetail("Two session windows with one gap would write every session twice."),
					 errhint("Keep one of them.")));
	set->sessions[set->n_sessions].gap = gap;
	set->sessions[set->n_sessions].max_time = PG_INT64_MAX;
	set->n_sessions++;
}

void
wa_window_set_limit_sessions(WaWindowSet *set, Oid typid)
{
	wa_tick		lowest;
	wa_tick		highest;

	wa_ticks_range(typid, &lowest, &highest);
	for (int i = 0; i < set->n_sessions; i++)
	{
		wa_tick		last = highest - set->sessions[i].gap;

		set->sessions[i].max_time = last > PG_INT64_MAX ? PG_INT64_MAX :
			last < PG_INT64_MIN ? PG_INT64_MIN : (int64) last;
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
	wa_tick		lowest;
	wa_tick		highest;

	wa_ticks_range(window_type, &lowest, &highest);
	wa_window_range_set(range, set, lowest, highest);
}
