/*-------------------------------------------------------------------------
 *
 * agg_generic.c
 *	  Any PostgreSQL aggregate with a combine function, as a generic
 *	  aggregate of the engine (wa_agg_generic in engine/wa_agg.h).
 *
 * A slice needs only an associative merge, which is what an aggregate's
 * combine function is: so numeric sums, bool_and, bit_or, min(text), a
 * user's aggregate or an extension's sketch work like the built-in
 * kernels, through the aggregate's own support functions.  They run as the
 * executor's aggregation runs them: in an aggregate context
 * (AggCheckCallContext succeeds, and gives the work context below),
 * strict transition and combine functions skipping NULLs and adopting the
 * first value, polymorphic arguments resolved from the query.
 *
 * The state in the engine.  Each (key, slice) holds a WaGenericBlob, in
 * the engine's memory (a memory context, or a pipeline's shared memory):
 * the state in a form any process can read and copy as bytes.
 *
 *	- a by-value transition type: the Datum itself;
 *	- another type but internal: the value's flat image (a varlena with a
 *	  4-byte header, or the type's fixed bytes), handed to the support
 *	  functions in place: a transition function that updates its state in
 *	  place (int4_avg_accum's array) updates the blob;
 *	- internal: the bytes of the aggregate's serial function, read back
 *	  through its deserial function.
 *
 * So an event of an internal-state aggregate costs a deserialization, the
 * transition and a serialization (for sum(numeric) about a microsecond);
 * every other costs the transition and, when the state changes size, a
 * copy.  Copies (two-stack, kept windows, late panes) copy bytes.  Every
 * support function's memory comes from the work context, reset after each
 * callback, and a final function only ever sees a copy of a state (the
 * engine finalizes the same window again for late panes).
 *
 * src/query/agg_generic.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "engine/wa_mem.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/makefuncs.h"
#include "parser/parse_agg.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* A state in the engine's memory. */
typedef struct WaGenericBlob
{
	uint32		size;			/* of the allocation, header included */
	bool		isnull;			/* the state is SQL NULL */
	/* the state's bytes follow, at BLOB_DATA_OFFSET */
} WaGenericBlob;

#define BLOB_DATA_OFFSET MAXALIGN(sizeof(WaGenericBlob))
#define BLOB_DATA(b) ((char *) (b) + BLOB_DATA_OFFSET)

/* How a transition type's values are kept (see the file header). */
typedef enum StateForm
{
	STATE_BYVAL,
	STATE_FLAT,
	STATE_SERIALIZED
} StateForm;

/* One generic aggregate, ready to call. */
typedef struct GenericAgg
{
	const WaAggColumn *col;
	StateForm	form;
	Oid			transtype;
	int16		translen;
	bool		transbyval;
	Datum		initval;
	bool		initval_isnull;
	int16		resultlen;
	bool		resultbyval;
	char		finalmodify;	/* AGGMODIFY_* */
	int			n_final_args;	/* 1, or 1 + the inputs (FINALFUNC_EXTRA) */

	FmgrInfo	transfn;
	FmgrInfo	combinefn;
	FmgrInfo	finalfn;		/* fn_oid InvalidOid: none */
	FmgrInfo	serialfn;
	FmgrInfo	deserialfn;
	FunctionCallInfo trans_call;	/* state + inputs */
	FunctionCallInfo combine_call;
	FunctionCallInfo final_call;
	FunctionCallInfo serial_call;
	FunctionCallInfo deserial_call;
} GenericAgg;

struct WaGeneric
{
	wa_agg_generic callbacks;	/* what the engine calls; arg is this */
	int			n_aggs;
	GenericAgg **aggs;			/* by the query's aggregate index; NULL for
								 * kernels */
	int			first_generic;
	AggState   *aggstate;		/* for AggCheckCallContext and friends */
	MemoryContext work_cxt;		/* the support functions' memory */
	MemoryContext result_cxt;	/* the results of one pane's finalization */
	MemoryContext reader_cxt;	/* blobs of a reader's scratch (NULL mem) */
};

/* ---------- blobs ---------- */

static WaGenericBlob *
blob_alloc(WaGeneric *g, wa_mem *mem, Size data_size)
{
	Size		size = BLOB_DATA_OFFSET + MAXALIGN(data_size);
	WaGenericBlob *b;

	if (size > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("aggregate state of %zu bytes is too large for a window", size)));
	b = mem != NULL ? wa_mem_alloc(mem, size) :
		MemoryContextAlloc(g->reader_cxt, size);
	b->size = (uint32) size;
	b->isnull = false;
	return b;
}

static void
blob_free(wa_mem *mem, WaGenericBlob *b)
{
	if (mem != NULL)
		wa_mem_free(mem, b, b->size);
	else
		pfree(b);
}

/*
 * A state value in its kept form: a varlena flattened (detoasted, and an
 * expanded object's flat image) with a 4-byte header; otherwise as it is.
 */
static Datum
state_kept_form(const GenericAgg *a, Datum value)
{
	if (a->form == STATE_FLAT && a->translen == -1)
		return PointerGetDatum(pg_detoast_datum((struct varlena *) DatumGetPointer(value)));
	return value;
}

/* Bytes of a state value in its kept form. */
static Size
state_data_size(const GenericAgg *a, Datum value)
{
	switch (a->form)
	{
		case STATE_BYVAL:
			return sizeof(Datum);
		case STATE_FLAT:
			return datumGetSize(value, false, a->translen);
		case STATE_SERIALIZED:
			return VARSIZE(DatumGetPointer(value));
	}
	return 0;
}

/*
 * Store a state value into *slot, reusing the blob when the size is the
 * same.  A value that already is the blob's data (updated in place) stays.
 * A serialized state is a bytea with a 4-byte header.
 */
static void
blob_store(WaGeneric *g, wa_mem *mem, const GenericAgg *a, void **slot,
		   Datum value, bool isnull)
{
	WaGenericBlob *b = *slot;
	Size		data_size = 0;

	if (!isnull)
	{
		if (b != NULL && a->form == STATE_FLAT && !b->isnull &&
			DatumGetPointer(value) == BLOB_DATA(b))
			return;
		value = state_kept_form(a, value);
		data_size = state_data_size(a, value);
	}
	if (b == NULL || b->size != BLOB_DATA_OFFSET + MAXALIGN(data_size))
	{
		WaGenericBlob *nb = blob_alloc(g, mem, data_size);

		if (b != NULL)
			blob_free(mem, b);
		b = nb;
		*slot = b;
	}
	b->isnull = isnull;
	if (isnull)
		return;
	if (a->form == STATE_BYVAL)
		memcpy(BLOB_DATA(b), &value, sizeof(Datum));
	else
		memcpy(BLOB_DATA(b), DatumGetPointer(value), data_size);
}

/*
 * The state of a blob as a value the support functions take: for a
 * serialized state, deserialized into the work context.  A NULL blob is
 * the initial state.  *in_blob tells whether the value is the blob's own
 * bytes (which a function may then change in place).
 */
static Datum
blob_load(WaGeneric *g, GenericAgg *a, const WaGenericBlob *b, bool *isnull)
{
	FunctionCallInfo call;
	Datum		value;

	if (b == NULL)
	{
		*isnull = a->initval_isnull;
		/* a by-reference initial value: a fresh copy, which may change */
		if (a->initval_isnull || a->transbyval)
			return a->initval;
		return datumCopy(a->initval, false, a->translen);
	}
	*isnull = b->isnull;
	if (b->isnull)
		return (Datum) 0;
	switch (a->form)
	{
		case STATE_BYVAL:
			memcpy(&value, BLOB_DATA(b), sizeof(Datum));
			return value;
		case STATE_FLAT:
			return PointerGetDatum(BLOB_DATA(b));
		case STATE_SERIALIZED:
			call = a->deserial_call;
			call->args[0].value = PointerGetDatum(BLOB_DATA(b));
			call->args[0].isnull = false;
			call->args[1].value = (Datum) 0;
			call->args[1].isnull = false;
			call->isnull = false;
			value = FunctionCallInvoke(call);
			*isnull = call->isnull;
			return value;
	}
	return (Datum) 0;
}

/* A state value in the form a blob keeps: serialized when internal. */
static Datum
state_for_blob(GenericAgg *a, Datum value, bool isnull)
{
	FunctionCallInfo call;
	Datum		bytes;

	if (isnull || a->form != STATE_SERIALIZED)
		return value;
	call = a->serial_call;
	call->args[0].value = value;
	call->args[0].isnull = false;
	call->isnull = false;
	bytes = FunctionCallInvoke(call);
	if (call->isnull)
		elog(ERROR, "serialization function of aggregate %s returned null",
			 a->col->sql_name);
	/* a 4-byte header, as blob_store expects */
	return PointerGetDatum(pg_detoast_datum((struct varlena *) DatumGetPointer(bytes)));
}

/*
 * After a callback: run what the support functions registered to run
 * before their aggregate context goes (AggRegisterCallback), then free
 * the work and temporary contexts, whatever they left there.
 */
static inline void
work_done(WaGeneric *g, MemoryContext old)
{
	MemoryContextSwitchTo(old);
	ReScanExprContext(g->aggstate->curaggcontext);
	ReScanExprContext(g->aggstate->tmpcontext);
}

/* ---------- the callbacks ---------- */

static void generic_copy(void *arg, wa_mem *mem, int agg, void **dst,
						 const void *src);

static void
generic_transition(void *arg, wa_mem *mem, int agg, void **slot,
				   const wa_value *values)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	const WaAggColumn *col = a->col;
	FunctionCallInfo call = a->trans_call;
	MemoryContext old;
	Datum		state;
	bool		state_isnull;
	Datum		result;

	/* FILTER (WHERE ...): only rows for which it is true */
	if (col->filter_input >= 0 &&
		(values[col->filter_input].isnull ||
		 !DatumGetBool((Datum) values[col->filter_input].i)))
		return;
	for (int i = 0; i < col->n_args; i++)
	{
		const wa_value *v = &values[col->arg_inputs[i]];

		/* a strict transition function skips rows with a NULL input */
		if (v->isnull && a->transfn.fn_strict)
			return;
		call->args[i + 1].value = (Datum) v->i;
		call->args[i + 1].isnull = v->isnull;
	}

	if (a->transfn.fn_strict)
	{
		/*
		 * No value yet and no initial value: the first input becomes the
		 * state, as in nodeAgg (the types then match, which CREATE
		 * AGGREGATE checks).  A state the function made NULL stays NULL.
		 */
		if (*slot == NULL && a->initval_isnull)
		{
			if (col->n_args > 0)
			{
				old = MemoryContextSwitchTo(g->work_cxt);
				blob_store(g, mem, a, slot, call->args[1].value, false);
				work_done(g, old);
			}
			return;
		}
		if (*slot != NULL && ((WaGenericBlob *) *slot)->isnull)
			return;
	}
	old = MemoryContextSwitchTo(g->work_cxt);
	state = blob_load(g, a, *slot, &state_isnull);
	call->args[0].value = state;
	call->args[0].isnull = state_isnull;
	call->isnull = false;
	result = FunctionCallInvoke(call);
	blob_store(g, mem, a, slot, state_for_blob(a, result, call->isnull),
			   call->isnull);
	work_done(g, old);
}

static void
generic_combine(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	const WaGenericBlob *s = src;
	FunctionCallInfo call = a->combine_call;
	MemoryContext old;
	Datum		d_value;
	bool		d_isnull;
	Datum		s_value;
	bool		s_isnull;
	Datum		result;

	/*
	 * A strict combine function: NULL adds nothing, the first value is
	 * adopted, and a state it made NULL stays NULL (as in nodeAgg).
	 */
	if (a->combinefn.fn_strict && s->isnull)
		return;
	if (*dst == NULL && a->initval_isnull)
	{
		/* combining into "no rows yet" gives the other side */
		generic_copy(g, mem, agg, dst, src);
		return;
	}
	if (a->combinefn.fn_strict && *dst != NULL &&
		((WaGenericBlob *) *dst)->isnull)
		return;
	old = MemoryContextSwitchTo(g->work_cxt);
	d_value = blob_load(g, a, *dst, &d_isnull);
	s_value = blob_load(g, a, s, &s_isnull);
	call->args[0].value = d_value;
	call->args[0].isnull = d_isnull;
	call->args[1].value = s_value;
	call->args[1].isnull = s_isnull;
	call->isnull = false;
	result = FunctionCallInvoke(call);
	blob_store(g, mem, a, dst, state_for_blob(a, result, call->isnull),
			   call->isnull);
	work_done(g, old);
}

static void
generic_copy(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	WaGeneric  *g = arg;
	const WaGenericBlob *s = src;
	WaGenericBlob *copy = blob_alloc(g, mem, s->size - BLOB_DATA_OFFSET);

	(void) agg;
	memcpy(copy, s, s->size);
	*dst = copy;
}

static void
generic_final(void *arg, int agg, const void *state, wa_result *result)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	MemoryContext old;
	Datum		value;
	bool		isnull;

	/* the results of the pane before are no longer needed */
	if (agg == g->first_generic)
		MemoryContextReset(g->result_cxt);
	memset(result, 0, sizeof(*result));

	old = MemoryContextSwitchTo(g->work_cxt);
	value = blob_load(g, a, state, &isnull);

	/* a final function must not change the engine's copy */
	if (!isnull && a->form == STATE_FLAT && OidIsValid(a->finalfn.fn_oid) &&
		a->finalmodify != AGGMODIFY_READ_ONLY)
		value = datumCopy(value, false, a->translen);

	if (OidIsValid(a->finalfn.fn_oid))
	{
		FunctionCallInfo call = a->final_call;

		/* FINALFUNC_EXTRA's NULLs make a strict final function's NULL */
		if (a->finalfn.fn_strict && (isnull || a->n_final_args > 1))
		{
			value = (Datum) 0;
			isnull = true;
		}
		else
		{
			call->args[0].value = value;
			call->args[0].isnull = isnull;
			/* FINALFUNC_EXTRA arguments are NULLs of the input types */
			for (int i = 1; i < a->n_final_args; i++)
			{
				call->args[i].value = (Datum) 0;
				call->args[i].isnull = true;
			}
			call->isnull = false;
			value = FunctionCallInvoke(call);
			isnull = call->isnull;
		}
	}
	result->isnull = isnull;
	MemoryContextSwitchTo(g->result_cxt);
	if (!isnull)
		value = datumCopy(value, a->resultbyval, a->resultlen);
	result->datum = (uint64) value;
	work_done(g, old);
}

static void
generic_release(void *arg, wa_mem *mem, int agg, void *state)
{
	(void) arg;
	(void) agg;
	blob_free(mem, state);
}

/* ---------- setup ---------- */

/*
 * Whoever runs the query must be allowed to call the aggregate, and the
 * aggregate's owner its support functions: what the executor checks
 * before it runs an aggregate (ExecInitAgg).
 */
static void
check_execute(Oid aggfnoid, Oid *support, int n_support)
{
	HeapTuple	tuple;
	Oid			owner;
	AclResult	acl;

	wa_check_aggregate_execute(aggfnoid);
	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggfnoid);
	owner = ((Form_pg_proc) GETSTRUCT(tuple))->proowner;
	ReleaseSysCache(tuple);
	for (int i = 0; i < n_support; i++)
	{
		if (!OidIsValid(support[i]))
			continue;
		acl = wa_proc_aclcheck(support[i], owner, ACL_EXECUTE);
		if (acl != ACLCHECK_OK)
			aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(support[i]));
		InvokeFunctionExecuteHook(support[i]);
	}
}

/* A call of fn (its expression resolving polymorphic types) with n args. */
static FunctionCallInfo
prepare_call(WaGeneric *g, FmgrInfo *flinfo, Oid fn, Expr *expr, int n_args,
			 Oid collation)
{
	FunctionCallInfo call = palloc0(SizeForFunctionCallInfo(n_args));

	fmgr_info(fn, flinfo);
	fmgr_info_set_expr((Node *) expr, flinfo);
	InitFunctionCallInfoData(*call, flinfo, n_args, collation,
							 (Node *) g->aggstate, NULL);
	return call;
}

static GenericAgg *
generic_agg_init(WaGeneric *g, const WaAggColumn *col)
{
	GenericAgg *a = palloc0(sizeof(GenericAgg));
	HeapTuple	tuple;
	Form_pg_aggregate form;
	Oid			declared_transtype;
	Oid			support[5];
	Datum		textinit;
	bool		init_isnull;
	Expr	   *transexpr;
	Expr	   *combineexpr;
	Expr	   *expr;
	Oid			combine_types[2];

	a->col = col;
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(col->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", col->aggfnoid);
	form = (Form_pg_aggregate) GETSTRUCT(tuple);
	declared_transtype = form->aggtranstype;
	support[0] = form->aggtransfn;
	support[1] = form->aggcombinefn;
	support[2] = form->aggfinalfn;
	support[3] = form->aggserialfn;
	support[4] = form->aggdeserialfn;
	a->finalmodify = form->aggfinalmodify;
	a->n_final_args = form->aggfinalextra ? col->n_args + 1 : 1;
	textinit = SysCacheGetAttr(AGGFNOID, tuple, Anum_pg_aggregate_agginitval,
							   &init_isnull);
	ReleaseSysCache(tuple);
	check_execute(col->aggfnoid, support, lengthof(support));

	a->transtype = resolve_aggregate_transtype(col->aggfnoid, declared_transtype,
											   col->arg_types, col->n_args);
	get_typlenbyval(a->transtype, &a->translen, &a->transbyval);
	get_typlenbyval(col->result_type, &a->resultlen, &a->resultbyval);
	if (a->transtype == INTERNALOID)
		a->form = STATE_SERIALIZED;
	else if (a->transbyval)
		a->form = STATE_BYVAL;
	else
		a->form = STATE_FLAT;
	a->initval_isnull = init_isnull;
	if (!init_isnull)
	{
		Oid			typinput;
		Oid			typioparam;
		char	   *str = TextDatumGetCString(textinit);

		getTypeInputInfo(a->transtype, &typinput, &typioparam);
		a->initval = OidInputFunctionCall(typinput, str, typioparam, -1);
	}

	build_aggregate_transfn_expr(col->arg_types, col->n_args, 0,
								 col->variadic, a->transtype, col->collation,
								 support[0], InvalidOid, &transexpr, NULL);
	a->trans_call = prepare_call(g, &a->transfn, support[0], transexpr,
								 col->n_args + 1, col->collation);
	combine_types[0] = combine_types[1] = a->transtype;
	build_aggregate_transfn_expr(combine_types, 1, 0, false, a->transtype,
								 col->collation, support[1], InvalidOid,
								 &combineexpr, NULL);
	a->combine_call = prepare_call(g, &a->combinefn, support[1], combineexpr,
								   2, col->collation);
	if (OidIsValid(support[2]))
	{
		build_aggregate_finalfn_expr(col->arg_types, a->n_final_args,
									 a->transtype, col->result_type,
									 col->collation, support[2], &expr);
		a->final_call = prepare_call(g, &a->finalfn, support[2], expr,
									 a->n_final_args, col->collation);
	}
	if (a->form == STATE_SERIALIZED)
	{
		build_aggregate_serialfn_expr(support[3], &expr);
		a->serial_call = prepare_call(g, &a->serialfn, support[3], expr, 1,
									  InvalidOid);
		build_aggregate_deserialfn_expr(support[4], &expr);
		a->deserial_call = prepare_call(g, &a->deserialfn, support[4], expr, 2,
										InvalidOid);
	}
	return a;
}

WaGeneric *
wa_generic_create(const WaAggQuery *q)
{
	WaGeneric  *g = palloc0(sizeof(WaGeneric));
	ExprContext *econtext = makeNode(ExprContext);
	ExprContext *tmpcontext = makeNode(ExprContext);

	g->n_aggs = q->n_aggs;
	g->aggs = palloc0(sizeof(GenericAgg *) * (q->n_aggs + 1));
	g->first_generic = -1;
	g->work_cxt = AllocSetContextCreate(CurrentMemoryContext,
										"windowagg aggregate work",
										ALLOCSET_DEFAULT_SIZES);
	g->result_cxt = AllocSetContextCreate(CurrentMemoryContext,
										  "windowagg aggregate results",
										  ALLOCSET_SMALL_SIZES);
	g->reader_cxt = CurrentMemoryContext;

	/*
	 * What AggCheckCallContext and AggGetTempMemoryContext read: the
	 * aggregate context is the work context, since every state leaves it
	 * for a blob before the callback returns; the temporary context is
	 * another, which a final function may reset as it likes.  No current
	 * aggregate or transition (AggGetAggref gives NULL, AggStateIsShared
	 * true).
	 */
	econtext->ecxt_per_tuple_memory = g->work_cxt;
	econtext->ecxt_per_query_memory = g->work_cxt;
	tmpcontext->ecxt_per_tuple_memory =
		AllocSetContextCreate(CurrentMemoryContext,
							  "windowagg aggregate temporary",
							  ALLOCSET_SMALL_SIZES);
	tmpcontext->ecxt_per_query_memory = g->work_cxt;
	g->aggstate = makeNode(AggState);
	g->aggstate->curaggcontext = econtext;
	g->aggstate->tmpcontext = tmpcontext;

	for (int i = 0; i < q->n_aggs; i++)
	{
		if (q->aggs[i].kind != WA_AGG_GENERIC)
			continue;
		if (g->first_generic < 0)
			g->first_generic = i;
		g->aggs[i] = generic_agg_init(g, &q->aggs[i]);
	}
	g->callbacks.arg = g;
	g->callbacks.transition = generic_transition;
	g->callbacks.combine = generic_combine;
	g->callbacks.copy = generic_copy;
	g->callbacks.final = generic_final;
	g->callbacks.release = generic_release;
	return g;
}

const wa_agg_generic *
wa_generic_callbacks(const WaGeneric *g)
{
	return g->first_generic >= 0 ? &g->callbacks : NULL;
}
