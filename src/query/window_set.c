/*-------------------------------------------------------------------------
 *
 * window_set.c
 *	  Window sets: decoding windowagg.window[] arguments (their rules and
 *	  limits are window_checks.c's).
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
		CHECK_FOR_INTERRUPTS();
		wa_window_check(set, i);
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
