/*-------------------------------------------------------------------------
 *
 * time_convert.c
 *	  Conversions between SQL time values and engine ticks.
 *
 * Timestamp ticks are PostgreSQL's own microseconds since 2000-01-01, so a
 * timestamptz event time converts for free.  Durations (window sizes,
 * bound, lateness) are intervals without months: a month has no fixed
 * length, and a window must.  A day counts as 24 hours, as in date_bin().
 *
 * src/query/time_convert.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

const char *
wa_time_domain_name(WaTimeDomain domain)
{
	return domain == WA_TIME_TIMESTAMP ? "interval" : "integer";
}

int64
wa_unix_epoch_ticks(void)
{
	return -((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE)) * USECS_PER_DAY;
}

int64
wa_interval_to_ticks(Interval *iv, const char *argname, bool allow_zero)
{
	int64		ticks;
	int64		day_ticks;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not contain months or years", argname),
				 errdetail("Months and years have no fixed length, and windows must."),
				 errhint("Use days instead, for example '30 days'.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &day_ticks) ||
		pg_add_s64_overflow(iv->time, day_ticks, &ticks))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s is out of range", argname)));
	if (ticks < 0 && allow_zero)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be zero or positive", argname)));
	if (ticks <= 0 && !allow_zero)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be positive", argname)));
	return ticks;
}

int64
wa_timestamp_to_ticks(TimestampTz ts, const char *argname)
{
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s must be finite", argname),
				 errdetail("Windows cannot start or end at infinity.")));
	return (int64) ts;
}

int64
wa_duration_arg(FunctionCallInfo fcinfo, int argno, const char *argname,
				WaTimeDomain domain)
{
	Oid			typid;
	Datum		d;
	int64		ticks;

	if (PG_ARGISNULL(argno))
		return 0;
	typid = get_fn_expr_argtype(fcinfo->flinfo, argno);
	d = PG_GETARG_DATUM(argno);

	/* a quoted literal takes the type the event time calls for */
	if (typid == UNKNOWNOID || typid == TEXTOID)
	{
		char	   *str = typid == UNKNOWNOID ? DatumGetCString(d) :
			TextDatumGetCString(d);

		if (domain == WA_TIME_TIMESTAMP)
		{
			typid = INTERVALOID;
			d = DirectFunctionCall3(interval_in, CStringGetDatum(str),
									ObjectIdGetDatum(InvalidOid),
									Int32GetDatum(-1));
		}
		else
		{
			typid = INT8OID;
			d = DirectFunctionCall1(int8in, CStringGetDatum(str));
		}
	}

	switch (typid)
	{
		case INTERVALOID:
			if (domain != WA_TIME_TIMESTAMP)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("%s must be an integer when the event time is an integer",
								argname)));
			return wa_interval_to_ticks(DatumGetIntervalP(d), argname, true);
		case INT2OID:
			ticks = DatumGetInt16(d);
			break;
		case INT4OID:
			ticks = DatumGetInt32(d);
			break;
		case INT8OID:
			ticks = DatumGetInt64(d);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s must be an interval or an integer, not %s",
							argname, format_type_be(typid))));
	}
	if (domain != WA_TIME_INTEGER && ticks != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be an interval when the event time is a timestamp",
						argname)));
	if (ticks < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be zero or positive", argname)));
	return ticks;
}

void
wa_ticks_range(Oid typid, wa_tick *lowest, wa_tick *highest)
{
	if (typid == TIMESTAMPTZOID || typid == TIMESTAMPOID)
	{
		*lowest = MIN_TIMESTAMP;
		*highest = END_TIMESTAMP - 1;
	}
	else
	{
		*lowest = PG_INT64_MIN;
		*highest = PG_INT64_MAX;
	}
}

bool
wa_pane_representable(const wa_pane *pane, Oid typid)
{
	wa_tick		lowest;
	wa_tick		highest;

	wa_ticks_range(typid, &lowest, &highest);
	return pane->start >= lowest && pane->end <= highest;
}

Datum
wa_ticks_to_datum(wa_tick ticks, Oid typid, const char *what)
{
	if (ticks < PG_INT64_MIN || ticks > PG_INT64_MAX ||
		((typid == TIMESTAMPTZOID || typid == TIMESTAMPOID) &&
		 !IS_VALID_TIMESTAMP((int64) ticks)))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s is out of range for type %s", what,
						format_type_be(typid)),
				 errdetail("A window reaches beyond the largest or smallest value the type can hold.")));
	switch (typid)
	{
		case TIMESTAMPTZOID:
			return TimestampTzGetDatum((TimestampTz) ticks);
		case TIMESTAMPOID:
			return TimestampGetDatum((Timestamp) ticks);
		default:
			return Int64GetDatum((int64) ticks);
	}
}

/*
 * _ticks_to_timestamptz(ticks numeric): timestamp ticks (microseconds since
 * 2000-01-01, PostgreSQL's own representation) as a timestamptz, exactly;
 * +/-Infinity as infinity; NULL for NaN and for ticks that are no valid
 * timestamp (an event time near the int64 limits), so that stat_pipelines
 * shows what it can instead of failing.
 */
PG_FUNCTION_INFO_V1(wa_ticks_to_timestamptz);

Datum
wa_ticks_to_timestamptz(PG_FUNCTION_ARGS)
{
	Datum		ticks = PG_GETARG_DATUM(0);
	Datum		lowest = DirectFunctionCall1(int8_numeric, Int64GetDatum(MIN_TIMESTAMP));
	Datum		end = DirectFunctionCall1(int8_numeric, Int64GetDatum(END_TIMESTAMP));
	TimestampTz result;

	if (numeric_is_nan(DatumGetNumeric(ticks)))
		PG_RETURN_NULL();
	if (numeric_is_inf(DatumGetNumeric(ticks)))
	{
		if (DatumGetBool(DirectFunctionCall2(numeric_gt, ticks, end)))
			TIMESTAMP_NOEND(result);
		else
			TIMESTAMP_NOBEGIN(result);
		PG_RETURN_TIMESTAMPTZ(result);
	}
	/* a tick is an integer: a fraction must not round it into range */
	ticks = DirectFunctionCall1(numeric_floor, ticks);
	/* within the range, the value fits in int64 */
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, ticks, lowest)) ||
		DatumGetBool(DirectFunctionCall2(numeric_ge, ticks, end)))
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ((TimestampTz) DatumGetInt64(DirectFunctionCall1(numeric_int8, ticks)));
}

/*
 * The zone of that name; NULL: the server's.  A name this server's time
 * zone data does not know (the pipeline came from another server, or the
 * data changed) falls back to the server's zone with a WARNING, rather than
 * stopping a pipeline over its idle clock.
 */
pg_tz *
wa_time_zone(const char *name, const char *pipeline)
{
	pg_tz	   *zone;

	if (name == NULL)
		return session_timezone;
	zone = pg_tzset(name);
	if (zone == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time zone \"%s\" of pipeline \"%s\" is not recognized", name, pipeline),
				 errdetail("Its idle timeout follows the server's time zone instead.")));
		zone = session_timezone;
	}
	return zone;
}

int64
wa_wall_clock(TimestampTz now, pg_tz *zone)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			offset;
	Timestamp	local;

	/* timezone(zone, now), as timestamptz_zone computes it */
	if (timestamp2tm(now, &offset, &tm, &fsec, NULL, zone) != 0 ||
		tm2timestamp(&tm, fsec, NULL, &local) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	return local;
}

WaEventTimeProblem
wa_event_time_ticks(Oid typid, Datum value, bool isnull, int64 *ticks)
{
	if (isnull)
		return WA_EVENT_TIME_NULL;
	switch (typid)
	{
		case INT2OID:
			*ticks = DatumGetInt16(value);
			break;
		case INT4OID:
			*ticks = DatumGetInt32(value);
			break;
		case INT8OID:
			*ticks = DatumGetInt64(value);
			break;
		default:
			/* timestamp and timestamptz: microseconds, as ticks are */
			if (TIMESTAMP_NOT_FINITE(DatumGetInt64(value)))
				return WA_EVENT_TIME_INFINITE;
			*ticks = DatumGetInt64(value);
			break;
	}
	return WA_EVENT_TIME_OK;
}

/*
 * A tick stored as a numeric (a pipeline's watermark): a whole number in
 * the engine's tick range, or +-Infinity (WA_TICK_MAX, WA_TICK_MIN).  Read
 * by numeric arithmetic, in two halves that each fit in int64, never from
 * its text; anything else (a hand edit, a foreign dump) is a problem for
 * the caller to report.
 */
WaNumericTickProblem
wa_numeric_to_tick(Datum value, wa_tick *tick)
{
	Numeric		n = DatumGetNumeric(value);
	Datum		zero = NumericGetDatum(int64_to_numeric(0));
	Datum		half = NumericGetDatum(int64_to_numeric(INT64CONST(1) << 50));
	Datum		high;
	Datum		low;

	if (numeric_is_nan(n))
		return WA_NUMERIC_TICK_NAN;
	if (numeric_is_inf(n))
	{
		*tick = DatumGetBool(DirectFunctionCall2(numeric_gt, value, zero)) ?
			WA_TICK_MAX : WA_TICK_MIN;
		return WA_NUMERIC_TICK_OK;
	}
	if (!DatumGetBool(DirectFunctionCall2(numeric_eq, value,
										  DirectFunctionCall1(numeric_floor, value))))
		return WA_NUMERIC_TICK_FRACTION;
	if (DatumGetBool(DirectFunctionCall2(numeric_gt, value, wa_int128_to_numeric(WA_TICK_MAX))) ||
		DatumGetBool(DirectFunctionCall2(numeric_lt, value, wa_int128_to_numeric(WA_TICK_MIN))))
		return WA_NUMERIC_TICK_OUT_OF_RANGE;
	/* value = high * 2^50 + low, both truncated towards zero */
	high = DirectFunctionCall2(numeric_div_trunc, value, half);
	low = DirectFunctionCall2(numeric_mod, value, half);
	*tick = (wa_tick) DatumGetInt64(DirectFunctionCall1(numeric_int8, high)) *
		((wa_tick) 1 << 50) + DatumGetInt64(DirectFunctionCall1(numeric_int8, low));
	return WA_NUMERIC_TICK_OK;
}
