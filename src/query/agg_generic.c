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
 * (AggCheckCallContext succeeds), strict transition and combine functions
 * skipping NULLs, adopting the first value and keeping a NULL they made,
 * polymorphic arguments resolved from the query.
 *
 * A state is kept, in the engine's memory (a memory context, or a
 * pipeline's shared memory), in a form any process can read:
 *
 *	- a by-value transition type: the Datum itself;
 *	- another type but internal: the value's flat image (a varlena with a
 *	  4-byte header, or the type's fixed bytes);
 *	- internal: the bytes of the aggregate's serial function, read back
 *	  through its deserial function.
 *
 * (an aggregate over DISTINCT values keeps the set of them instead:
 * agg_distinct.c), and, while rows arrive, as a live value in this
 * process's cache
 * (agg_generic_state.c): a row costs its transition function, and a
 * state's serialization happens when the cache is written back, not per
 * row.  A final function only ever sees a value it may keep or change
 * when it says it changes it (FINALFUNC_MODIFY), or when it is an
 * internal state's final function that windowagg does not trust to leave
 * its state as it was (WaAggColumn.final_writes: the engine then gives it
 * a merged copy): the engine finalizes the same window again for late
 * panes.
 *
 * src/query/agg_generic.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/agg_generic_int.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_agg.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* WaGenerics made by this process, for their cache ids */
static uint32 generic_count = 0;

/* After a callback: free the scratch the support functions left. */
static inline void
work_done(WaGeneric *g, MemoryContext old)
{
	MemoryContextSwitchTo(old);
	MemoryContextReset(g->work_cxt);
	ReScanExprContext(g->aggstate->tmpcontext);
	if (g->aggstate->curaggcontext->ecxt_callbacks != NULL)
		g->callbacks_registered = true;
}

/* ---------- the callbacks ---------- */

static void
generic_transition_body(void *arg, wa_mem *mem, int agg, void **slot,
				   const wa_value *values)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	const WaAggColumn *col = a->col;
	FunctionCallInfo call = a->trans_call;
	MemoryContext old;
	CachedState *c;
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

	wa_state_maybe_flush(g);
	if (*slot == NULL)
		*slot = wa_handle_create(g, mem);
	c = wa_state_cache(g, a, mem, *slot);
	if (a->form == STATE_DISTINCT)
	{
		/* one argument: the set keeps it; the pane folds the set */
		old = MemoryContextSwitchTo(g->work_cxt);
		wa_distinct_add(a, (WaDistinctSet *) DatumGetPointer(c->value),
						call->args[1].value, call->args[1].isnull);
		wa_state_set(g, c, c->value, false);
		work_done(g, old);
		return;
	}
	if (a->transfn.fn_strict)
	{
		/*
		 * No value yet and no initial value: the first input becomes the
		 * state, as in nodeAgg (the types then match, which CREATE
		 * AGGREGATE checks).  A state the function made NULL stays NULL.
		 */
		if (c->no_value)
		{
			if (col->n_args > 0)
				wa_state_set(g, c, call->args[1].value, false);
			return;
		}
		if (c->isnull)
			return;
	}
	old = MemoryContextSwitchTo(g->work_cxt);
	wa_set_aggcontext(g, c, NULL);
	call->args[0].value = c->value;
	call->args[0].isnull = c->isnull;
	call->isnull = false;
	result = FunctionCallInvoke(call);
	wa_state_set(g, c, result, call->isnull);
	work_done(g, old);
}

static void
generic_combine_body(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	FunctionCallInfo call = a->combine_call;
	MemoryContext old;
	CachedState *c;
	Datum		s_value;
	bool		s_isnull;
	bool		s_no_value;
	bool		s_live;
	Datum		result;

	wa_state_maybe_flush(g);
	if (*dst == NULL)
		*dst = wa_handle_create(g, mem);
	c = wa_state_cache(g, a, mem, *dst);
	old = MemoryContextSwitchTo(g->work_cxt);
	wa_set_aggcontext(g, wa_state_cached(g, src), g->work_cxt);
	s_value = wa_state_read(g, a, src, &s_isnull, &s_no_value, &s_live);
	if (a->form == STATE_DISTINCT)
	{
		/* sets merge by union; values are copied into dst's */
		wa_distinct_union(a, (WaDistinctSet *) DatumGetPointer(c->value),
						  (const WaDistinctSet *) DatumGetPointer(s_value));
		wa_state_set(g, c, c->value, false);
		work_done(g, old);
		return;
	}

	/*
	 * A strict combine function: NULL adds nothing, the first value is
	 * adopted (a copy of it: src keeps its own), and a state it made NULL
	 * stays NULL, as in nodeAgg.
	 */
	if (s_no_value || (a->combinefn.fn_strict && s_isnull) ||
		(a->combinefn.fn_strict && !c->no_value && c->isnull))
	{
		work_done(g, old);
		return;
	}
	if (a->combinefn.fn_strict && c->no_value)
	{
		/* an internal state of its own, in the cache (the aggregate context) */
		if (a->form == STATE_SERIALIZED)
		{
			MemoryContextSwitchTo(c->cxt);
			wa_set_aggcontext(g, c, NULL);
			s_value = wa_state_private_copy(g, a, s_value);
			MemoryContextSwitchTo(g->work_cxt);
		}
		wa_state_set(g, c, s_value, false);
		work_done(g, old);
		return;
	}
	wa_set_aggcontext(g, c, NULL);
	call->args[0].value = c->value;
	call->args[0].isnull = c->isnull;
	call->args[1].value = s_value;
	call->args[1].isnull = s_isnull;
	call->isnull = false;
	result = FunctionCallInvoke(call);
	wa_state_set(g, c, result, call->isnull);
	work_done(g, old);
}

/*
 * A copy of a live state stays live: its value copied (a set, or an
 * internal state through its combine function into a fresh state, which
 * is how the executor's aggregation starts a combine), rather than
 * serialized into a blob that the copy would deserialize at its first
 * merge.  Two-stack windows copy a state per window.  A state only in
 * its blob is copied as bytes.
 */
static void
generic_copy_body(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	CachedState *s;
	CachedState *c;

	wa_state_maybe_flush(g);
	s = wa_state_cached(g, src);
	if (s == NULL)
	{
		*dst = wa_handle_copy(g, mem, (WaStateHandle *) src);
		return;
	}
	*dst = wa_handle_create(g, mem);
	if (a->form == STATE_SERIALIZED || a->form == STATE_DISTINCT)
	{
		generic_combine_body(arg, mem, agg, dst, src);
		return;
	}
	c = wa_state_cache(g, a, mem, *dst);
	if (!s->no_value)
		wa_state_set(g, c, s->value, s->isnull);
}

static void
generic_final_body(void *arg, int agg, const void *state, wa_result *result)
{
	WaGeneric  *g = arg;
	GenericAgg *a = g->aggs[agg];
	MemoryContext old;
	Datum		value;
	bool		isnull;
	bool		no_value;
	bool		live;

	/* the results of the pane before are no longer needed */
	if (agg == g->first_generic)
		MemoryContextReset(g->result_cxt);
	memset(result, 0, sizeof(*result));

	old = MemoryContextSwitchTo(g->work_cxt);
	/* a live state's own context; scratch for one read from its bytes */
	wa_set_aggcontext(g, wa_state_cached(g, state), g->work_cxt);
	value = wa_state_read(g, a, state, &isnull, &no_value, &live);

	/* DISTINCT: the aggregate's state over the window's set, a fresh one */
	if (a->form == STATE_DISTINCT)
	{
		/* the fold's states are scratch: the work context is their home */
		ExprContext *cache = g->aggstate->curaggcontext;

		g->aggstate->curaggcontext = g->fold_context;
		PG_TRY();
		{
			value = wa_distinct_fold(a, (const WaDistinctSet *) DatumGetPointer(value),
									 &isnull);
		}
		PG_FINALLY();
		{
			g->aggstate->curaggcontext = cache;
		}
		PG_END_TRY();
	}
	/* a final function that may change its state gets a copy of its own */
	else if (!isnull && OidIsValid(a->finalfn.fn_oid) &&
			 a->finalmodify != AGGMODIFY_READ_ONLY)
	{
		wa_set_aggcontext(g, NULL, g->work_cxt);
		if (a->form == STATE_FLAT)
			value = datumCopy(value, false, a->translen);
		else if (a->form == STATE_SERIALIZED && live)
			value = wa_state_private_copy(g, a, value);
	}

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
generic_release_body(void *arg, wa_mem *mem, int agg, void *state)
{
	(void) agg;
	wa_handle_free(arg, mem, state);
}

static void
generic_transition(void *arg, wa_mem *mem, int agg, void **slot,
				   const wa_value *values)
{
	OWNER_CODE(arg, generic_transition_body(arg, mem, agg, slot, values));
}

static void
generic_combine(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	OWNER_CODE(arg, generic_combine_body(arg, mem, agg, dst, src));
}

static void
generic_copy(void *arg, wa_mem *mem, int agg, void **dst, const void *src)
{
	OWNER_CODE(arg, generic_copy_body(arg, mem, agg, dst, src));
}

static void
generic_final(void *arg, int agg, const void *state, wa_result *result)
{
	OWNER_CODE(arg, generic_final_body(arg, agg, state, result));
}

static void
generic_release(void *arg, wa_mem *mem, int agg, void *state)
{
	OWNER_CODE(arg, generic_release_body(arg, mem, agg, state));
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

/*
 * What the catalog says now of col's aggregate: its state type (resolved
 * for the query's argument types), support functions and final function
 * flags.  Shapes and checkpoint signatures carry them, so that an
 * aggregate replaced (CREATE OR REPLACE AGGREGATE with another state type
 * or functions) is never handed states written for the old one.
 */
void
wa_generic_describe(const WaAggColumn *col, WaGenericDescription *d)
{
	HeapTuple	tuple;
	Form_pg_aggregate form;

	memset(d, 0, sizeof(*d));
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(col->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", col->aggfnoid);
	form = (Form_pg_aggregate) GETSTRUCT(tuple);
	d->support[0] = form->aggtransfn;
	d->support[1] = form->aggcombinefn;
	d->support[2] = form->aggfinalfn;
	d->support[3] = form->aggserialfn;
	d->support[4] = form->aggdeserialfn;
	d->finalmodify = form->aggfinalmodify;
	d->finalextra = form->aggfinalextra;
	d->transtype = resolve_aggregate_transtype(col->aggfnoid, form->aggtranstype,
											   col->arg_types, col->n_args);
	ReleaseSysCache(tuple);
}

static GenericAgg *
generic_agg_init(WaGeneric *g, const WaAggColumn *col)
{
	GenericAgg *a = palloc0(sizeof(GenericAgg));
	WaGenericDescription d;
	HeapTuple	tuple;
	Oid		   *support = d.support;
	Datum		textinit;
	bool		init_isnull;
	Expr	   *transexpr;
	Expr	   *combineexpr;
	Expr	   *expr;
	Oid			combine_types[2];

	a->col = col;
	wa_generic_describe(col, &d);
	a->finalmodify = d.finalmodify;
	a->n_final_args = d.finalextra ? col->n_args + 1 : 1;
	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(col->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", col->aggfnoid);
	textinit = SysCacheGetAttr(AGGFNOID, tuple, Anum_pg_aggregate_agginitval,
							   &init_isnull);
	if (!init_isnull)
		textinit = PointerGetDatum(PG_DETOAST_DATUM_COPY(textinit));
	ReleaseSysCache(tuple);
	/* DISTINCT calls the transition and final functions only */
	if (col->distinct)
		support[1] = support[3] = support[4] = InvalidOid;
	check_execute(col->aggfnoid, support, lengthof(d.support));

	a->transtype = d.transtype;
	get_typlenbyval(a->transtype, &a->translen, &a->transbyval);
	get_typlenbyval(col->result_type, &a->resultlen, &a->resultbyval);
	if (col->distinct)
		wa_distinct_init(a, g, col->arg_types[0], col->collation);
	if (col->distinct)
		a->form = STATE_DISTINCT;
	else if (a->transtype == INTERNALOID)
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

		/*
		 * The base type's input function: a domain's would run the
		 * constraints of the domain's owner, who may not be the pipeline's
		 * (functions' results are never checked against a domain either).
		 */
		getTypeInputInfo(getBaseType(a->transtype), &typinput, &typioparam);
		a->initval = OidInputFunctionCall(typinput, str, typioparam, -1);
	}

	build_aggregate_transfn_expr(col->arg_types, col->n_args, 0,
								 col->variadic, a->transtype, col->collation,
								 support[0], InvalidOid, &transexpr, NULL);
	a->trans_call = prepare_call(g, &a->transfn, support[0], transexpr,
								 col->n_args + 1, col->collation);

	/*
	 * A strict transition function without an initial value adopts the
	 * first input as the state, which must then be of the state's type.
	 * CREATE AGGREGATE checks that only for a function strict by then:
	 * ALTER FUNCTION ... STRICT may come later, so it is checked here, as
	 * the executor checks it on every run.
	 */
	if (a->transfn.fn_strict && a->initval_isnull &&
		(col->n_args < 1 || !IsBinaryCoercible(col->arg_types[0], a->transtype)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_FUNCTION_DEFINITION),
				 errmsg("aggregate %s needs to have compatible input type and transition type",
						col->sql_name),
				 errdetail("Its transition function is strict and it has no initial value, so its first input becomes its state.")));
	/* DISTINCT merges sets, and needs no combine function */
	if (OidIsValid(support[1]))
	{
		combine_types[0] = combine_types[1] = a->transtype;
		build_aggregate_transfn_expr(combine_types, 1, 0, false, a->transtype,
									 col->collation, support[1], InvalidOid,
									 &combineexpr, NULL);
		a->combine_call = prepare_call(g, &a->combinefn, support[1],
									   combineexpr, 2, col->collation);
	}
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
	/* random: a handle another process left must never look like ours */
	if (!pg_strong_random(&g->id, sizeof(g->id)))
		g->id = ((uint64) MyProcPid << 32) | ++generic_count;
	if (g->id == 0)
		g->id = 1;
	g->cache_limit = WA_GENERIC_CACHE_LIMIT;
	g->cache_cxt = AllocSetContextCreate(CurrentMemoryContext,
										 "windowagg aggregate states",
										 ALLOCSET_DEFAULT_SIZES);
	g->work_cxt = AllocSetContextCreate(CurrentMemoryContext,
										"windowagg aggregate work",
										ALLOCSET_DEFAULT_SIZES);
	g->result_cxt = AllocSetContextCreate(CurrentMemoryContext,
										  "windowagg aggregate results",
										  ALLOCSET_SMALL_SIZES);
	g->reader_cxt = CurrentMemoryContext;

	/*
	 * What AggCheckCallContext and AggGetTempMemoryContext read: the
	 * aggregate context is the cache's (agg_generic_state.c); the
	 * temporary context is another, which a final function may reset as
	 * it likes.  No current aggregate or transition (AggGetAggref gives
	 * NULL, AggStateIsShared true).
	 */
	econtext->ecxt_per_tuple_memory = g->cache_cxt;
	econtext->ecxt_per_query_memory = g->cache_cxt;
	tmpcontext->ecxt_per_tuple_memory =
		AllocSetContextCreate(CurrentMemoryContext,
							  "windowagg aggregate temporary",
							  ALLOCSET_SMALL_SIZES);
	tmpcontext->ecxt_per_query_memory = g->work_cxt;
	g->aggstate = makeNode(AggState);
	g->aggstate->curaggcontext = econtext;
	g->aggstate->tmpcontext = tmpcontext;
	/* a DISTINCT pane's fold: states of the work context */
	g->fold_context = makeNode(ExprContext);
	g->fold_context->ecxt_per_tuple_memory = g->work_cxt;
	g->fold_context->ecxt_per_query_memory = g->work_cxt;

	for (int i = 0; i < q->n_aggs; i++)
	{
		if (q->aggs[i].kind != WA_AGG_GENERIC)
			continue;
		if (g->first_generic < 0)
			g->first_generic = i;
		g->aggs[i] = generic_agg_init(g, &q->aggs[i]);
		if (q->aggs[i].final_writes)
			g->callbacks.final_writes = true;
	}
	g->callbacks.arg = g;
	g->callbacks.transition = generic_transition;
	g->callbacks.combine = generic_combine;
	g->callbacks.copy = generic_copy;
	g->callbacks.final = generic_final;
	g->callbacks.release = generic_release;
	return g;
}

void
wa_generic_set_guard(WaGeneric *g, WaOwnerCodeGuard guard, void *arg)
{
	g->guard = guard;
	g->guard_arg = arg;
}

void
wa_generic_output_values(WaGeneric *g, WaOutputEval *ev,
						 const wa_result *results, Datum *values, bool *nulls)
{
	OWNER_CODE(g, wa_output_values(ev, results, values, nulls));
}

const wa_agg_generic *
wa_generic_callbacks(const WaGeneric *g)
{
	return g->first_generic >= 0 ? &g->callbacks : NULL;
}

void
wa_generic_done(WaGeneric *g)
{
	wa_generic_flush(g);
	ReScanExprContext(g->aggstate->tmpcontext);
}
