/*-------------------------------------------------------------------------
 *
 * agg_result.c
 *	  SQL values into aggregate inputs, and engine results into SQL values.
 *
 * Result types are the ones PostgreSQL's own aggregates return (sum(int8)
 * is numeric, avg(int4) is numeric, sum(float4) is real...), and avg over
 * integers or numeric(p, s) is computed as numeric sum / count exactly as
 * PostgreSQL does, so a windowagg result compares equal to plain GROUP BY.
 *
 * src/query/agg_result.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/params.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/numeric.h"

void
wa_datum_to_value(Oid typid, Datum d, bool isnull, wa_value *out)
{
	out->isnull = isnull;
	if (isnull)
		return;
	/* the Datum itself, for generic aggregates (agg_generic.c) */
	out->i = (int64) d;
	switch (typid)
	{
		case INT2OID:
			out->i = DatumGetInt16(d);
			break;
		case INT4OID:
		case DATEOID:
			out->i = DatumGetInt32(d);
			break;
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			out->i = DatumGetInt64(d);
			break;
		case FLOAT4OID:
			out->f = DatumGetFloat4(d);
			break;
		case FLOAT8OID:
			out->f = DatumGetFloat8(d);
			break;
		default:
			/* count(x) of another type only needs to know about NULL */
			break;
	}
}

/* An exact 128-bit integer as a numeric. */
Datum
wa_int128_to_numeric(wa_int128 value)
{
	return wa_fixed_to_numeric(value, 0);
}

Datum
wa_result_to_datum(const WaAggColumn *col, const wa_result *r, bool *isnull)
{
	*isnull = r->isnull;
	if (r->isnull)
		return (Datum) 0;

	switch (col->kind)
	{
		case WA_AGG_COUNT_STAR:
		case WA_AGG_COUNT:
			return Int64GetDatum(r->count);
		case WA_AGG_SUM_INT:
			if (col->result_type == NUMERICOID)
				return wa_int128_to_numeric(r->sum);
			if (r->sum < PG_INT64_MIN || r->sum > PG_INT64_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("bigint out of range in sum of \"%s\"", col->name)));
			return Int64GetDatum((int64) r->sum);
		case WA_AGG_AVG_INT:
			return DirectFunctionCall2(numeric_div, wa_int128_to_numeric(r->sum),
									   wa_int128_to_numeric(r->count));
		case WA_AGG_SUM_DECIMAL:
		case WA_AGG_AVG_DECIMAL:
			/* as numeric_sum and numeric_avg: one NaN makes a NaN */
			if (r->i > 0)
				return DirectFunctionCall3(numeric_in, CStringGetDatum("NaN"),
										   ObjectIdGetDatum(InvalidOid),
										   Int32GetDatum(-1));
			if (col->kind == WA_AGG_SUM_DECIMAL)
				return wa_fixed_to_numeric(r->sum, col->decimal_scale);
			return DirectFunctionCall2(numeric_div,
									   wa_fixed_to_numeric(r->sum, col->decimal_scale),
									   wa_int128_to_numeric(r->count));
		case WA_AGG_MIN_INT:
		case WA_AGG_MAX_INT:
			switch (col->result_type)
			{
				case INT2OID:
					return Int16GetDatum((int16) r->i);
				case INT4OID:
				case DATEOID:
					return Int32GetDatum((int32) r->i);
				default:
					return Int64GetDatum(r->i);
			}
		case WA_AGG_SUM_FLOAT:
		case WA_AGG_MIN_FLOAT:
		case WA_AGG_MAX_FLOAT:
			if (col->result_type == FLOAT4OID)
				return Float4GetDatum((float4) r->f);
			return Float8GetDatum(r->f);
		case WA_AGG_AVG_FLOAT:
		case WA_AGG_VAR_SAMP:
		case WA_AGG_VAR_POP:
		case WA_AGG_STDDEV_SAMP:
		case WA_AGG_STDDEV_POP:
			return Float8GetDatum(r->f);
		case WA_AGG_GENERIC:
			/* final's value, until the next pane is finalized */
			return (Datum) r->datum;
	}
	elog(ERROR, "unexpected aggregate kind %d", (int) col->kind);
	return (Datum) 0;
}

/*
 * A guessed input's scale is known: its first value's.  The query's
 * decimal aggregates over it compute at that scale from now on.
 */
static void
fix_guessed_scale(const WaAggQuery *q, int input, int scale)
{
	q->input_scales[input] = scale;
	for (int i = 0; i < q->n_aggs; i++)
		if (q->aggs[i].input == input &&
			(q->aggs[i].kind == WA_AGG_SUM_DECIMAL ||
			 q->aggs[i].kind == WA_AGG_AVG_DECIMAL))
			q->aggs[i].decimal_scale = scale;
}

/*
 * The aggregate inputs of a row of the row query (keys, event time, then
 * each distinct aggregate input once) as engine values; false if a
 * guessed input's value does not fit its guess (numeric_fixed.c), and
 * the caller must compute the query another way.
 */
bool
wa_row_inputs(const WaAggQuery *q, TupleTableSlot *slot, wa_value *inputs)
{
	for (int j = 0; j < q->n_inputs; j++)
	{
		int			attno = q->n_keys + 1 + j;

		if (q->input_guessed[j] && !slot->tts_isnull[attno])
		{
			int			scale = q->input_scales[j];

			inputs[j].isnull = false;
			if (!wa_numeric_guess_fixed(slot->tts_values[attno], &scale, &inputs[j]))
				return false;
			if (scale != q->input_scales[j])
				fix_guessed_scale(q, j, scale);
		}
		else if (q->input_scales[j] >= 0 && !slot->tts_isnull[attno])
		{
			inputs[j].isnull = false;
			wa_numeric_to_fixed(slot->tts_values[attno], q->input_scales[j],
								&inputs[j]);
		}
		else
			wa_datum_to_value(q->input_types[j], slot->tts_values[attno],
							  slot->tts_isnull[attno], &inputs[j]);
	}
	return true;
}

/* ---------- output columns ---------- */

struct WaOutputEval
{
	const WaAggQuery *q;
	ExprContext *econtext;		/* its parameters: the aggregates' values */
	ParamListInfo params;
	ExprState **states;			/* per output column; NULL for aggregates */
};

WaOutputEval *
wa_output_eval_create(const WaAggQuery *q)
{
	WaOutputEval *ev = palloc0(sizeof(WaOutputEval));

	ev->q = q;
	if (!q->has_expressions)
		return ev;
	ev->params = makeParamList(q->n_aggs);
	for (int i = 0; i < q->n_aggs; i++)
	{
		ev->params->params[i].ptype = q->aggs[i].result_type;
		ev->params->params[i].pflags = PARAM_FLAG_CONST;
	}
	ev->econtext = CreateStandaloneExprContext();
	ev->econtext->ecxt_param_list_info = ev->params;
	ev->states = palloc0(sizeof(ExprState *) * (q->n_outputs + 1));
	for (int i = 0; i < q->n_outputs; i++)
		if (q->outputs[i].agg < 0)
			ev->states[i] = ExecInitExprWithParams(q->outputs[i].expr, ev->params);
	return ev;
}

void
wa_output_values(WaOutputEval *ev, const wa_result *results, Datum *values,
				 bool *nulls)
{
	const WaAggQuery *q = ev->q;

	if (!q->has_expressions)
	{
		for (int i = 0; i < q->n_aggs; i++)
			values[i] = wa_result_to_datum(&q->aggs[i], &results[i], &nulls[i]);
		return;
	}
	for (int i = 0; i < q->n_aggs; i++)
		ev->params->params[i].value =
			wa_result_to_datum(&q->aggs[i], &results[i],
							   &ev->params->params[i].isnull);
	for (int i = 0; i < q->n_outputs; i++)
	{
		const WaOutputColumn *out = &q->outputs[i];

		if (out->agg >= 0)
		{
			values[i] = ev->params->params[out->agg].value;
			nulls[i] = ev->params->params[out->agg].isnull;
		}
		else
			values[i] = ExecEvalExpr(ev->states[i], ev->econtext, &nulls[i]);
	}
}
