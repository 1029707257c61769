/*-------------------------------------------------------------------------
 *
 * moving_agg.c
 *	  windowagg.min/max/sum/avg/variance/stddev: aggregates whose moving
 *	  (window frame) mode slides in amortised O(1) per row.
 *
 * PostgreSQL's window executor can slide a frame incrementally only when
 * an aggregate has an inverse transition; min, max and float sums have
 * none, so nodeWindowAgg.c recomputes them from scratch whenever the frame
 * start moves, O(rows x frame).  These aggregates give the executor an
 * inverse by keeping the frame as a two-stack FIFO of partial aggregates
 * (src/engine/wa_fifo.h): the forward transition pushes the new row, the
 * inverse pops the oldest one (the executor always removes rows in the
 * order it added them), and the final function queries the FIFO without
 * changing it.  The FIFO is exact for any associative operator, so a NaN
 * or an outlier only affects the frames that contain it.
 *
 * In plain (non-moving) mode, as an ordinary aggregate or over frames
 * that start at UNBOUNDED PRECEDING, the state is a single running value
 * and the results are exactly the built-ins'.
 *
 * Transition functions are not strict: a NULL input is pushed as an empty
 * element, so pushes and pops stay paired with the executor's rows.
 *
 * src/commands/moving_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/typcache.h"

#include <math.h>

#include "engine/wa_fifo.h"

PG_FUNCTION_INFO_V1(wa_min_sfunc);
PG_FUNCTION_INFO_V1(wa_max_sfunc);
PG_FUNCTION_INFO_V1(wa_minmax_final);
PG_FUNCTION_INFO_V1(wa_min_msfunc);
PG_FUNCTION_INFO_V1(wa_max_msfunc);
PG_FUNCTION_INFO_V1(wa_moving_minvfunc);
PG_FUNCTION_INFO_V1(wa_minmax_mfinal);
PG_FUNCTION_INFO_V1(wa_fsum_sfunc);
PG_FUNCTION_INFO_V1(wa_fvar_sfunc);
PG_FUNCTION_INFO_V1(wa_fsum_msfunc);
PG_FUNCTION_INFO_V1(wa_fvar_msfunc);
PG_FUNCTION_INFO_V1(wa_float_sum_final);
PG_FUNCTION_INFO_V1(wa_float4_sum_final);
PG_FUNCTION_INFO_V1(wa_float_avg_final);
PG_FUNCTION_INFO_V1(wa_var_samp_final);
PG_FUNCTION_INFO_V1(wa_var_pop_final);
PG_FUNCTION_INFO_V1(wa_stddev_samp_final);
PG_FUNCTION_INFO_V1(wa_stddev_pop_final);

/* A min/max element: one value, or the extreme of a run of values. */
typedef struct MinMaxElem
{
	Datum		value;
	bool		isnull;
} MinMaxElem;

/* The state of every aggregate here; which half is used depends on kind. */
typedef struct MovingState
{
	MemoryContext context;		/* the aggregate context: owns everything */
	wa_allocator allocator;
	wa_mem		mem;
	bool		moving;			/* a FIFO (moving mode) or a running value */
	wa_fifo		fifo;

	/* min/max over any type with a btree ordering */
	bool		holds_datums;	/* min/max: elements own copied values */
	bool		is_max;
	char		fast_cmp;		/* 'l': int64-like, 'i': int32-like, 'h': int16,
								 * 'f': float8, 'g': float4, 0: call the btree
								 * comparison function */
	int16		typlen;
	bool		typbyval;
	FmgrInfo	cmp;
	Oid			collation;
	MinMaxElem	running;

	/* float aggregates: one engine accumulator */
	Oid			input_type;		/* float4 or float8 */
	wa_agg_spec spec;
	uint32_t	offset;
	wa_agg_layout layout;
	char	   *acc;			/* running accumulator, or query scratch */
	char	   *elem;			/* element being pushed */
} MovingState;

static MemoryContext
aggregate_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext context;

	if (!AggCheckCallContext(fcinfo, &context))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return context;
}

static MovingState *
state_create(FunctionCallInfo fcinfo, bool moving, const char *fname)
{
	MemoryContext context = aggregate_context(fcinfo, fname);
	MovingState *state = MemoryContextAllocZero(context, sizeof(MovingState));

	state->context = context;
	state->moving = moving;
	wa_engine_allocator_init(&state->allocator, context);
	wa_mem_init(&state->mem, &state->allocator);
	return state;
}

/* ---------- min and max ---------- */

/* btree order of floats: NaN equals NaN and sorts above every number */
static inline int32
float_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a < b ? -1 : (a > b ? 1 : 0);
}

static inline int32
minmax_cmp(MovingState *state, Datum a, Datum b)
{
	switch (state->fast_cmp)
	{
		case 'l':
			return DatumGetInt64(a) < DatumGetInt64(b) ? -1 :
				(DatumGetInt64(a) > DatumGetInt64(b) ? 1 : 0);
		case 'i':
			return DatumGetInt32(a) < DatumGetInt32(b) ? -1 :
				(DatumGetInt32(a) > DatumGetInt32(b) ? 1 : 0);
		case 'h':
			return DatumGetInt16(a) < DatumGetInt16(b) ? -1 :
				(DatumGetInt16(a) > DatumGetInt16(b) ? 1 : 0);
		case 'f':
			return float_cmp(DatumGetFloat8(a), DatumGetFloat8(b));
		case 'g':
			return float_cmp(DatumGetFloat4(a), DatumGetFloat4(b));
		default:
			return DatumGetInt32(FunctionCall2Coll(&state->cmp, state->collation,
												   a, b));
	}
}

static void
minmax_combine(void *acc, const void *later, void *arg)
{
	MovingState *state = arg;
	MinMaxElem *a = acc;
	const MinMaxElem *b = later;
	int32		c;

	if (b->isnull)
		return;
	if (a->isnull)
	{
		*a = *b;
		return;
	}
	c = minmax_cmp(state, a->value, b->value);
	/* as the built-in smaller/larger functions: ties take the later value */
	if (state->is_max ? c <= 0 : c >= 0)
		*a = *b;
}

static void
minmax_identity(void *acc, void *arg)
{
	MinMaxElem *a = acc;

	a->value = (Datum) 0;
	a->isnull = true;
}

static MovingState *
minmax_state(FunctionCallInfo fcinfo, bool is_max, bool moving, const char *fname)
{
	MovingState *state;
	Oid			type;
	TypeCacheEntry *tce;

	if (!PG_ARGISNULL(0))
		return (MovingState *) PG_GETARG_POINTER(0);

	state = state_create(fcinfo, moving, fname);
	type = get_fn_expr_argtype(fcinfo->flinfo, 1);
	tce = lookup_type_cache(type, TYPECACHE_CMP_PROC_FINFO);
	if (!OidIsValid(tce->cmp_proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify a comparison function for type %s",
						format_type_be(type)),
				 errhint("windowagg.min and windowagg.max need a type with a default btree operator class.")));
	state->holds_datums = true;
	state->is_max = is_max;

	/*
	 * The common by-value types compare inline (same order as their btree
	 * functions), saving a function call per comparison.
	 */
	switch (type)
	{
		case INT2OID:
			state->fast_cmp = 'h';
			break;
		case INT4OID:
		case DATEOID:
			state->fast_cmp = 'i';
			break;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			state->fast_cmp = 'l';
			break;
		case FLOAT8OID:
			state->fast_cmp = 'f';
			break;
		case FLOAT4OID:
			state->fast_cmp = 'g';
			break;
		default:
			state->fast_cmp = 0;
			break;
	}
	state->typlen = tce->typlen;
	state->typbyval = tce->typbyval;
	fmgr_info_cxt(tce->cmp_proc, &state->cmp, state->context);
	state->collation = PG_GET_COLLATION();
	state->running.isnull = true;
	if (moving)
		wa_fifo_init(&state->fifo, &state->mem, sizeof(MinMaxElem),
					 minmax_combine, minmax_identity, state);
	return state;
}

/* A copy of the input that lives as long as the state needs it. */
static MinMaxElem
minmax_input(FunctionCallInfo fcinfo, MovingState *state)
{
	MinMaxElem	e;

	e.isnull = PG_ARGISNULL(1);
	e.value = (Datum) 0;
	if (!e.isnull && state->typbyval)
		e.value = PG_GETARG_DATUM(1);
	else if (!e.isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(state->context);

		e.value = datumCopy(PG_GETARG_DATUM(1), state->typbyval, state->typlen);
		MemoryContextSwitchTo(old);
	}
	return e;
}

static void
minmax_release(MovingState *state, const MinMaxElem *e)
{
	if (!e->isnull && !state->typbyval)
		pfree(DatumGetPointer(e->value));
}

/* Plain mode: keep only the running extreme. */
static Datum
minmax_sfunc(FunctionCallInfo fcinfo, bool is_max)
{
	MovingState *state = minmax_state(fcinfo, is_max, false, "windowagg min/max");
	MinMaxElem	candidate;
	MinMaxElem	before;

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(state);
	candidate.isnull = false;
	candidate.value = PG_GETARG_DATUM(1);
	before = state->running;
	minmax_combine(&state->running, &candidate, state);
	if (state->running.value != before.value || before.isnull)
	{
		/* the input won: keep a copy of it, drop the old one */
		state->running = minmax_input(fcinfo, state);
		minmax_release(state, &before);
	}
	PG_RETURN_POINTER(state);
}

Datum
wa_min_sfunc(PG_FUNCTION_ARGS)
{
	return minmax_sfunc(fcinfo, false);
}

Datum
wa_max_sfunc(PG_FUNCTION_ARGS)
{
	return minmax_sfunc(fcinfo, true);
}

static Datum
minmax_result(FunctionCallInfo fcinfo, MovingState *state, const MinMaxElem *e)
{
	if (e->isnull)
		PG_RETURN_NULL();
	/* a copy: the state may free the value when it leaves the frame */
	return datumCopy(e->value, state->typbyval, state->typlen);
}

Datum
wa_minmax_final(PG_FUNCTION_ARGS)
{
	MovingState *state;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (MovingState *) PG_GETARG_POINTER(0);
	return minmax_result(fcinfo, state, &state->running);
}

static Datum
minmax_msfunc(FunctionCallInfo fcinfo, bool is_max)
{
	MovingState *state = minmax_state(fcinfo, is_max, true, "windowagg min/max");
	MinMaxElem	e = minmax_input(fcinfo, state);

	wa_fifo_push(&state->fifo, &e);
	PG_RETURN_POINTER(state);
}

Datum
wa_min_msfunc(PG_FUNCTION_ARGS)
{
	return minmax_msfunc(fcinfo, false);
}

Datum
wa_max_msfunc(PG_FUNCTION_ARGS)
{
	return minmax_msfunc(fcinfo, true);
}

Datum
wa_minmax_mfinal(PG_FUNCTION_ARGS)
{
	MovingState *state;
	MinMaxElem	result;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (MovingState *) PG_GETARG_POINTER(0);
	wa_fifo_query(&state->fifo, &result);
	return minmax_result(fcinfo, state, &result);
}

/* ---------- float sum, avg, variance, stddev ---------- */

static void
acc_combine(void *acc, const void *later, void *arg)
{
	wa_acc_merge(&((MovingState *) arg)->layout, acc, later);
}

static void
acc_identity(void *acc, void *arg)
{
	wa_acc_init(&((MovingState *) arg)->layout, acc);
}

/*
 * The state of a float aggregate: sum and avg keep (sum, count), the
 * variance family (N, Sx, Sxx); the final function chooses the formula.
 */
static MovingState *
float_state(FunctionCallInfo fcinfo, wa_agg_kind kind, bool moving)
{
	MovingState *state;

	if (!PG_ARGISNULL(0))
		return (MovingState *) PG_GETARG_POINTER(0);
	state = state_create(fcinfo, moving, "windowagg float aggregate");
	state->input_type = get_fn_expr_argtype(fcinfo->flinfo, 1);
	state->spec.kind = kind;
	state->spec.input = 0;
	wa_agg_layout_init(&state->layout, 1, &state->spec, &state->offset);
	state->acc = MemoryContextAllocZero(state->context, state->layout.acc_size);
	state->elem = MemoryContextAllocZero(state->context, state->layout.acc_size);
	wa_acc_init(&state->layout, state->acc);
	if (moving)
		wa_fifo_init(&state->fifo, &state->mem, state->layout.acc_size,
					 acc_combine, acc_identity, state);
	return state;
}

static void
float_input(FunctionCallInfo fcinfo, MovingState *state, wa_value *v)
{
	v->isnull = PG_ARGISNULL(1);
	if (!v->isnull)
		v->f = state->input_type == FLOAT4OID ?
			(double) PG_GETARG_FLOAT4(1) : PG_GETARG_FLOAT8(1);
}

static Datum
float_sfunc(FunctionCallInfo fcinfo, wa_agg_kind kind)
{
	MovingState *state = float_state(fcinfo, kind, false);
	wa_value	v;

	float_input(fcinfo, state, &v);
	wa_acc_update(&state->layout, state->acc, &v);
	PG_RETURN_POINTER(state);
}

Datum
wa_fsum_sfunc(PG_FUNCTION_ARGS)
{
	return float_sfunc(fcinfo, WA_AGG_SUM_FLOAT);
}

Datum
wa_fvar_sfunc(PG_FUNCTION_ARGS)
{
	return float_sfunc(fcinfo, WA_AGG_VAR_SAMP);
}

static Datum
float_msfunc(FunctionCallInfo fcinfo, wa_agg_kind kind)
{
	MovingState *state = float_state(fcinfo, kind, true);
	wa_value	v;

	float_input(fcinfo, state, &v);
	wa_acc_init(&state->layout, state->elem);
	wa_acc_update(&state->layout, state->elem, &v);
	wa_fifo_push(&state->fifo, state->elem);
	PG_RETURN_POINTER(state);
}

Datum
wa_fsum_msfunc(PG_FUNCTION_ARGS)
{
	return float_msfunc(fcinfo, WA_AGG_SUM_FLOAT);
}

Datum
wa_fvar_msfunc(PG_FUNCTION_ARGS)
{
	return float_msfunc(fcinfo, WA_AGG_VAR_SAMP);
}

/* Inverse transition, shared by every aggregate here: drop the oldest row. */
Datum
wa_moving_minvfunc(PG_FUNCTION_ARGS)
{
	MovingState *state;

	if (PG_ARGISNULL(0))
		elog(ERROR, "inverse transition function called without a state");
	state = (MovingState *) PG_GETARG_POINTER(0);
	if (wa_fifo_length(&state->fifo) == 0)
		elog(ERROR, "inverse transition function called on an empty frame");
	if (state->holds_datums)
	{
		/* pop first: popping may flip, which compares the oldest value */
		MinMaxElem	oldest = *(const MinMaxElem *) wa_fifo_oldest(&state->fifo);

		wa_fifo_pop(&state->fifo);
		minmax_release(state, &oldest);
	}
	else
		wa_fifo_pop(&state->fifo);
	PG_RETURN_POINTER(state);
}

/*
 * Finalize a float state as the given kind (which shares the state's
 * layout); NULL when there is no state or too few inputs.
 */
static bool
float_result(FunctionCallInfo fcinfo, wa_agg_kind kind, double *out)
{
	MovingState *state;
	wa_agg_spec spec;
	wa_agg_layout layout;
	wa_result	r;
	const char *acc;

	if (PG_ARGISNULL(0))
		return false;
	state = (MovingState *) PG_GETARG_POINTER(0);
	acc = state->acc;
	if (state->moving)
	{
		/* the running accumulator is unused in moving mode: scratch */
		wa_fifo_query(&state->fifo, state->acc);
	}
	spec.kind = kind;
	spec.input = 0;
	layout = state->layout;
	layout.aggs = &spec;
	wa_acc_finalize(&layout, acc, &r);
	*out = r.f;
	return !r.isnull;
}

/* A float result of the given kind, or NULL. */
static Datum
float_final(FunctionCallInfo fcinfo, wa_agg_kind kind, bool as_float4)
{
	double		f;

	if (!float_result(fcinfo, kind, &f))
		PG_RETURN_NULL();
	if (as_float4)
		PG_RETURN_FLOAT4((float4) f);
	PG_RETURN_FLOAT8(f);
}

Datum
wa_float_sum_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_SUM_FLOAT, false);
}

Datum
wa_float4_sum_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_SUM_FLOAT, true);
}

Datum
wa_float_avg_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_AVG_FLOAT, false);
}

Datum
wa_var_samp_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_VAR_SAMP, false);
}

Datum
wa_var_pop_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_VAR_POP, false);
}

Datum
wa_stddev_samp_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_STDDEV_SAMP, false);
}

Datum
wa_stddev_pop_final(PG_FUNCTION_ARGS)
{
	return float_final(fcinfo, WA_AGG_STDDEV_POP, false);
}
