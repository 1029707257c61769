/*-------------------------------------------------------------------------
 *
 * agg_query.c
 *	  Parse, validate and rewrite a user's aggregate query.
 *
 * Users describe what to compute as an ordinary aggregate query:
 *
 *	  SELECT device_id, min(temp) AS min_temp, count(*) AS n
 *	  FROM readings WHERE ok GROUP BY device_id
 *
 * windowagg analyzes it with PostgreSQL's own parser (so names resolve,
 * types are known and privileges are checked as for any query), rejects
 * what a slice store cannot maintain, and deparses a row query that yields
 * per source row the grouping keys, the event time and each aggregate's
 * input.  Built-in aggregates over types whose values map to int64 or
 * float8, and sum and avg over numeric(p, s) of up to 18 digits (as
 * fixed-point integers), run on the engine's kernels; any other aggregate
 * with a combine
 * function, or over DISTINCT values, through its own support functions
 * (agg_generic.c); the rest (ordered-set aggregates, ones that depend on
 * their rows' order) get an error that says what to do instead.
 *
 * src/query/agg_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "access/nbtree.h"
#include "access/relation.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "common/cryptohash.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/clauses.h"
#include "parser/parse_agg.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

/* Output column names that windowagg adds next to the user's. */
static const char *const reserved_names[] = {
	"window_start", "window_end", "pane", "revision", "updated_at", NULL
};

/*
 * Reject an unsupported query shape.  A macro, so that each message stays
 * one literal string (translatable, greppable).
 */
#define REJECT_QUERY(msg, hint) \
	ereport(ERROR, \
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED), \
			 errmsg(msg), \
			 (hint) ? errhint("%s", (const char *) (hint)) : 0))

static bool
is_integer_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

static bool
is_float_type(Oid t)
{
	return t == FLOAT4OID || t == FLOAT8OID;
}

/* Types whose values are int64-comparable: min/max map to the int kernels. */
static bool
is_ordered_integer_like(Oid t)
{
	return is_integer_type(t) || t == DATEOID || t == TIMESTAMPOID ||
		t == TIMESTAMPTZOID || t == TIMEOID;
}

/*
 * What to do instead with an aggregate that needs all of a window's rows,
 * in order: run it in a plain query, over each row's windows.
 */
#define WINDOW_ROWS_HINT \
	"To compute %s over each window's rows, join the rows with windowagg.window_starts() and group them by window in a plain query."

/* Built-in aggregates whose result lists their input in its order. */
static bool
is_order_dependent_aggregate(const char *name)
{
	static const char *const names[] = {
		"array_agg", "string_agg", "json_agg", "jsonb_agg", "json_agg_strict",
		"jsonb_agg_strict", "json_object_agg", "jsonb_object_agg",
		"json_object_agg_strict", "jsonb_object_agg_strict",
		"json_object_agg_unique", "jsonb_object_agg_unique",
		"json_object_agg_unique_strict", "jsonb_object_agg_unique_strict",
		"xmlagg",
	};

	for (size_t i = 0; i < lengthof(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/*
 * The kernel (wa_agg.h) that computes a built-in aggregate over its input
 * type, with the result type PostgreSQL itself gives it, so that results
 * line up with plain GROUP BY; false if there is none.
 */
static bool
map_kernel(Aggref *aggref, const char *name, WaAggColumn *col,
		   bool guess_numeric_scales)
{
	Oid			in;

	if (get_func_namespace(aggref->aggfnoid) != PG_CATALOG_NAMESPACE ||
		aggref->aggfilter != NULL || col->distinct)
		return false;
	if (aggref->aggstar)
	{
		col->kind = WA_AGG_COUNT_STAR;
		col->input_type = InvalidOid;
		return true;
	}
	if (list_length(aggref->args) != 1)
		return false;
	in = exprType((Node *) ((TargetEntry *) linitial(aggref->args))->expr);
	col->input_type = in;
	col->decimal_scale = in == NUMERICOID ?
		wa_fixed_point_scale(exprTypmod((Node *) ((TargetEntry *) linitial(aggref->args))->expr)) :
		-1;
	/* any other numeric: at the scale of its first value (numeric_fixed.c) */
	if (in == NUMERICOID && col->decimal_scale < 0 && guess_numeric_scales &&
		(strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0))
		col->decimal_scale = WA_SCALE_UNKNOWN;

	if (strcmp(name, "count") == 0)
		col->kind = WA_AGG_COUNT;
	else if (strcmp(name, "sum") == 0 && is_integer_type(in))
		col->kind = WA_AGG_SUM_INT;
	else if (strcmp(name, "sum") == 0 && is_float_type(in))
		col->kind = WA_AGG_SUM_FLOAT;
	else if (strcmp(name, "avg") == 0 && is_integer_type(in))
		col->kind = WA_AGG_AVG_INT;
	else if (strcmp(name, "avg") == 0 && is_float_type(in))
		col->kind = WA_AGG_AVG_FLOAT;
	/* numeric(p, s) of up to 18 digits: exact in 64 bits (numeric_fixed.c) */
	else if (strcmp(name, "sum") == 0 &&
			 (col->decimal_scale >= 0 || col->decimal_scale == WA_SCALE_UNKNOWN))
		col->kind = WA_AGG_SUM_DECIMAL;
	else if (strcmp(name, "avg") == 0 &&
			 (col->decimal_scale >= 0 || col->decimal_scale == WA_SCALE_UNKNOWN))
		col->kind = WA_AGG_AVG_DECIMAL;
	else if (strcmp(name, "min") == 0 && is_ordered_integer_like(in))
		col->kind = WA_AGG_MIN_INT;
	else if (strcmp(name, "max") == 0 && is_ordered_integer_like(in))
		col->kind = WA_AGG_MAX_INT;
	else if (strcmp(name, "min") == 0 && is_float_type(in))
		col->kind = WA_AGG_MIN_FLOAT;
	else if (strcmp(name, "max") == 0 && is_float_type(in))
		col->kind = WA_AGG_MAX_FLOAT;
	else if ((strcmp(name, "var_samp") == 0 || strcmp(name, "variance") == 0) &&
			 is_float_type(in))
		col->kind = WA_AGG_VAR_SAMP;
	else if (strcmp(name, "var_pop") == 0 && is_float_type(in))
		col->kind = WA_AGG_VAR_POP;
	else if ((strcmp(name, "stddev_samp") == 0 || strcmp(name, "stddev") == 0) &&
			 is_float_type(in))
		col->kind = WA_AGG_STDDEV_SAMP;
	else if (strcmp(name, "stddev_pop") == 0 && is_float_type(in))
		col->kind = WA_AGG_STDDEV_POP;
	else
		return false;
	return true;
}

/*
 * Built-in aggregates whose combine function gives the same state when a
 * state is merged with one that already holds some of its rows: windows
 * may then be merged from overlapping ones (the coverage plan's
 * covered-by).
 */
static const char *const idempotent_builtins[] = {
	"min", "max", "bool_and", "bool_or", "every", "bit_and", "bit_or",
};

/*
 * The hll extension's aggregates merge sketches by union (register-wise
 * maximum), which is idempotent too.
 */
#define HLL_EXTENSION_NAME "hll"
#define HLL_UNION_COMBINE "hll_union_internal"
static const char *const idempotent_hll[] = {"hll_add_agg", "hll_union_agg"};

static bool
name_in(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pg_strcasecmp(name, names[i]) == 0)
			return true;
	return false;
}

/* By name alone, for explain(windows, aggregates), which takes names. */
bool
wa_aggregate_name_is_idempotent(const char *name)
{
	return name_in(name, idempotent_builtins, lengthof(idempotent_builtins)) ||
		name_in(name, idempotent_hll, lengthof(idempotent_hll));
}

/* Is function fn a member of the extension named ext_name? */
static bool
is_extension_function(Oid fn, const char *ext_name)
{
	Oid			ext = getExtensionOfObject(ProcedureRelationId, fn);
	char	   *name;

	if (!OidIsValid(ext))
		return false;
	name = get_extension_name(ext);
	return name != NULL && strcmp(name, ext_name) == 0;
}

/*
 * For a query's aggregate: a built-in one of the list, by name in
 * pg_catalog, or any aggregate whose combine function is the hll
 * extension's union (whatever the aggregate's name or schema, and only
 * the extension's own function: one of that name elsewhere proves
 * nothing).
 */
static bool
is_idempotent_aggregate(Oid aggfnoid, const char *name, Oid combinefn)
{
	char	   *combine_name;

	if (get_func_namespace(aggfnoid) == PG_CATALOG_NAMESPACE &&
		name_in(name, idempotent_builtins, lengthof(idempotent_builtins)))
		return true;
	if (!OidIsValid(combinefn))
		return false;
	/* NULL if it was dropped meanwhile */
	combine_name = get_func_name(combinefn);
	return combine_name != NULL &&
		strcmp(combine_name, HLL_UNION_COMBINE) == 0 &&
		is_extension_function(combinefn, HLL_EXTENSION_NAME);
}

/*
 * May the final function change the internal state it is given, though
 * it says it does not (FINALFUNC_MODIFY READ_ONLY, the default)?  Nothing
 * checks what a C function does, and some change their state to answer:
 * the tdigest extension's compact the digest they read, which then
 * differs from one that has seen the same values without being read.
 * PostgreSQL finalizes a group's state once; windowagg finalizes a slice
 * for every pane of its windows, late panes too, so only the final
 * functions of PostgreSQL's own aggregates and of hll are trusted to
 * leave an internal state as it was.  States of other types are values
 * that PostgreSQL itself passes to final functions as they are.
 */
static bool
final_may_write_internal_state(Oid transtype, Oid finalfn, char finalmodify)
{
	if (transtype != INTERNALOID || !OidIsValid(finalfn) ||
		finalmodify != AGGMODIFY_READ_ONLY)
		return false;
	return get_func_namespace(finalfn) != PG_CATALOG_NAMESPACE &&
		!is_extension_function(finalfn, HLL_EXTENSION_NAME);
}

/*
 * Built-in combine functions that append one state to the other: an
 * aggregate of anyone's that combines with them keeps its rows in order.
 */
static bool
combine_concatenates(Oid combinefn)
{
	static const char *const names[] = {
		"array_cat", "textcat", "byteacat", "array_agg_combine",
		"array_agg_array_combine", "string_agg_combine",
	};
	const char *name;

	if (get_func_namespace(combinefn) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(combinefn);
	for (size_t i = 0; i < lengthof(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/*
 * Any other aggregate runs through its own support functions
 * (agg_generic.c): it needs a combine function, and, with an internal
 * state, serialization functions to keep the state where any process can
 * read it.
 */
static void
map_generic(Aggref *aggref, const char *name, WaAggColumn *col)
{
	HeapTuple	tuple;
	Form_pg_aggregate form;
	bool		combines;
	Oid			combinefn;
	bool		serializes;
	Oid			transtype;
	Oid			finalfn;
	char		finalmodify;

	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggref->aggfnoid);
	form = (Form_pg_aggregate) GETSTRUCT(tuple);
	combines = OidIsValid(form->aggcombinefn);
	combinefn = form->aggcombinefn;
	serializes = OidIsValid(form->aggserialfn) && OidIsValid(form->aggdeserialfn);
	transtype = form->aggtranstype;
	finalfn = form->aggfinalfn;
	finalmodify = form->aggfinalmodify;
	ReleaseSysCache(tuple);

	col->kind = WA_AGG_GENERIC;
	col->aggfnoid = aggref->aggfnoid;
	col->collation = aggref->inputcollid;
	col->variadic = aggref->aggvariadic;
	col->input_type = list_length(aggref->args) > 0 ?
		exprType((Node *) ((TargetEntry *) linitial(aggref->args))->expr) :
		InvalidOid;

	/*
	 * DISTINCT keeps sets of values and folds the transition function over
	 * a window's: no combine or serialization function needed, and sets
	 * merge idempotently.
	 */
	if (col->distinct)
	{
		col->idempotent = true;
		return;
	}
	col->idempotent = is_idempotent_aggregate(aggref->aggfnoid, name, combinefn);
	col->final_writes = final_may_write_internal_state(transtype, finalfn, finalmodify);
	if (combines && combine_concatenates(combinefn))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s is not supported", name),
				 errdetail("Its combine function %s concatenates, so its result depends on the order of its input rows, which a window merged from slices does not keep.",
						   get_func_name(combinefn)),
				 errhint(WINDOW_ROWS_HINT, name)));
	if (!combines)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s cannot be computed in windows", name),
				 errdetail("It has no combine function, which merging the slices of a window needs."),
				 errhint("Give the aggregate a COMBINEFUNC, or use another aggregate.")));
	if (transtype == INTERNALOID && !serializes)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s cannot be computed in windows", name),
				 errdetail("Its state has type internal and it has no serialization functions, which keeping the state of a window needs."),
				 errhint("Give the aggregate a SERIALFUNC and a DESERIALFUNC.")));
}

void
wa_check_aggregate_execute(Oid aggfnoid)
{
	AclResult	acl = wa_proc_aclcheck(aggfnoid, GetUserId(), ACL_EXECUTE);

	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_AGGREGATE, get_func_name(aggfnoid));
	InvokeFunctionExecuteHook(aggfnoid);
}

static void
map_aggregate(Aggref *aggref, WaAggColumn *col, bool guess_numeric_scales)
{
	char	   *name = get_func_name(aggref->aggfnoid);

	col->sql_name = name;
	/* the kernels too: as the executor would check the aggregate */
	wa_check_aggregate_execute(aggref->aggfnoid);
	col->result_type = aggref->aggtype;
	col->filter_input = -1;
	if (aggref->aggkind != AGGKIND_NORMAL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ordered-set aggregate %s cannot be computed in windows", name),
				 errdetail("Ordered-set and hypothetical-set aggregates need all of a window's rows at once; windows are merged from slices."),
				 strncmp(name, "percentile", 10) == 0 ?
				 errhint("For percentiles, use tdigest_percentile of the tdigest extension, whose sketches merge.") :
				 errhint(WINDOW_ROWS_HINT, name)));
	/* DISTINCT: the set of a slice's distinct inputs (agg_distinct.c) */
	col->distinct = aggref->aggdistinct != NIL;
	if (col->distinct && list_length(aggref->args) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s with DISTINCT over %d arguments is not supported",
						name, list_length(aggref->args)),
				 errhint("Aggregate DISTINCT over one argument, such as a row: count(DISTINCT (a, b)).")));
	if (aggref->aggorder != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s with ORDER BY is not supported", name),
				 errdetail("A window merged from slices does not keep the order of its rows.")));

	/*
	 * These have combine functions from PostgreSQL 16 on, but their result
	 * is the order in which rows reached them, which a window merged from
	 * slices (or a late pane) does not keep: refused on every version.
	 */
	if (get_func_namespace(aggref->aggfnoid) == PG_CATALOG_NAMESPACE &&
		is_order_dependent_aggregate(name))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s is not supported", name),
				 errdetail("Its result depends on the order of its input rows, which a window merged from slices does not keep."),
				 errhint(WINDOW_ROWS_HINT, name)));

	if (!map_kernel(aggref, name, col, guess_numeric_scales))
		map_generic(aggref, name, col);
}

/*
 * An input of the row query: an expression, and how its values are read
 * (as they are, or as fixed-point integers of units of 10^-scale).
 */
typedef struct AggInput
{
	Expr	   *expr;
	int			scale;			/* -1: as it is */
} AggInput;

/* The index of an input among the row query's, added if new. */
static int
aggregate_input(List **inputs, Expr *expr, int scale)
{
	ListCell   *lc;
	AggInput   *input;

	/* min(x), max(x), count(x) read x once */
	foreach(lc, *inputs)
	{
		input = lfirst(lc);
		if (input->scale == scale && equal(input->expr, expr))
			return foreach_current_index(lc);
	}
	input = palloc(sizeof(AggInput));
	input->expr = expr;
	input->scale = scale;
	*inputs = lappend(*inputs, input);
	return list_length(*inputs) - 1;
}

/* CASE WHEN filter THEN arg END: arg, computed only where filter is true. */
static Expr *
only_if_filtered(Expr *arg, Expr *filter)
{
	CaseExpr   *c = makeNode(CaseExpr);
	CaseWhen   *w = makeNode(CaseWhen);

	w->expr = (Expr *) copyObject(filter);
	w->result = (Expr *) copyObject(arg);
	w->location = -1;
	c->casetype = exprType((Node *) arg);
	c->casecollid = exprCollation((Node *) arg);
	c->args = list_make1(w);
	c->defresult = (Expr *) makeNullConst(exprType((Node *) arg),
										  exprTypmod((Node *) arg),
										  exprCollation((Node *) arg));
	c->location = -1;
	return (Expr *) c;
}

/* Where an aggregate's arguments and FILTER come from in the row query. */
static void
map_aggregate_inputs(Aggref *aggref, WaAggColumn *col, List **inputs)
{
	ListCell   *lc;

	col->input = -1;
	if (col->kind != WA_AGG_GENERIC)
	{
		bool		fixed = col->kind == WA_AGG_SUM_DECIMAL ||
			col->kind == WA_AGG_AVG_DECIMAL;

		if (!aggref->aggstar)
			col->input = aggregate_input(inputs,
										 ((TargetEntry *) linitial(aggref->args))->expr,
										 fixed ? col->decimal_scale : -1);
		return;
	}
	col->n_args = list_length(aggref->args);
	col->arg_inputs = palloc0(sizeof(int) * (col->n_args + 1));
	col->arg_types = palloc0(sizeof(Oid) * (col->n_args + 1));
	foreach(lc, aggref->args)
	{
		Expr	   *arg = ((TargetEntry *) lfirst(lc))->expr;
		int			i = foreach_current_index(lc);

		col->arg_types[i] = exprType((Node *) arg);
		/*
		 * As in the executor, arguments are computed only for rows that
		 * pass the filter: sum(1 / x) FILTER (WHERE x <> 0) must work.
		 */
		if (aggref->aggfilter != NULL)
			arg = only_if_filtered(arg, aggref->aggfilter);
		col->arg_inputs[i] = aggregate_input(inputs, arg, -1);
	}
	if (aggref->aggfilter != NULL)
		col->filter_input = aggregate_input(inputs, aggref->aggfilter, -1);
	col->input = col->n_args > 0 ? col->arg_inputs[0] : -1;
}

/*
 * Keys are compared as bytes, which is only right when the type's equality
 * is bitwise ("equalimage" in btree terms: true for integers, text under a
 * deterministic collation, uuid, dates..., false for numeric or float).
 */
static void
check_key_type(const WaKeyColumn *key)
{
	Oid			opclass = GetDefaultOpClass(key->typid, BTREE_AM_OID);
	Oid			opcintype;
	Oid			proc;

	/*
	 * character(n) says its equality is bitwise, which holds only for values
	 * padded to one length: 'a' and 'a ' are one group to GROUP BY.
	 */
	if (getBaseType(key->typid) == BPCHAROID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("GROUP BY key \"%s\" of type %s cannot be used as a window key",
						key->name, format_type_be(key->typid)),
				 errdetail("Equal values of type character can differ in their trailing spaces."),
				 errhint("Cast the key to text, which drops the trailing spaces as GROUP BY ignores them.")));

	if (OidIsValid(opclass))
	{
		opcintype = get_opclass_input_type(opclass);
		proc = get_opfamily_proc(get_opclass_family(opclass), opcintype,
								 opcintype, BTEQUALIMAGE_PROC);
		if (OidIsValid(proc) &&
			DatumGetBool(OidFunctionCall1Coll(proc, key->collation,
											  ObjectIdGetDatum(opcintype))))
			return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("GROUP BY key \"%s\" of type %s cannot be used as a window key",
					key->name, format_type_be(key->typid)),
			 errdetail("Keys are compared bitwise, and equal values of this type can differ in their bits."),
			 errhint("Cast the key to text or to an integer type.")));
}

/* Aggregate calls in a tree (not inside one another: they cannot nest). */
static bool
count_aggregates_walker(Node *node, int *count)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		(*count)++;
		return false;
	}
	return expression_tree_walker(node, count_aggregates_walker, count);
}

static int
count_aggregates(Node *node)
{
	int			count = 0;

	(void) count_aggregates_walker(node, &count);
	return count;
}

/* Add an aggregate the engine computes; returns its index. */
static int
add_aggregate(WaAggQuery *result, Aggref *aggref, const char *name,
			  List **inputs)
{
	WaAggColumn *col = &result->aggs[result->n_aggs];

	col->name = pstrdup(name);
	map_aggregate(aggref, col, result->guess_numeric_scales);
	map_aggregate_inputs(aggref, col, inputs);
	return result->n_aggs++;
}

typedef struct OutputContext
{
	WaAggQuery *result;
	const char *name;			/* the output column's */
	List	  **inputs;
} OutputContext;

/*
 * An expression over aggregates, with each aggregate call replaced by the
 * parameter that will hold its value.  Columns may appear only inside
 * aggregates: a window's row has no value of them.
 */
static Node *
aggregates_to_params(Node *node, OutputContext *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref))
	{
		Aggref	   *aggref = (Aggref *) node;
		Param	   *param = makeNode(Param);

		param->paramkind = PARAM_EXTERN;
		param->paramid = add_aggregate(cxt->result, aggref, cxt->name,
									   cxt->inputs) + 1;
		param->paramtype = aggref->aggtype;
		param->paramtypmod = -1;
		param->paramcollid = aggref->aggcollid;
		param->location = -1;
		return (Node *) param;
	}
	if (IsA(node, Var))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("select list item \"%s\" uses a column outside its aggregates",
						cxt->name),
				 errhint("Aggregate the column, or list it as a key on its own.")));
	if (IsA(node, SubLink))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("select list item \"%s\" must not use a subquery", cxt->name)));
	return expression_tree_mutator(node, aggregates_to_params, cxt);
}

/*
 * An output column: one aggregate, or an immutable expression over
 * aggregates, computed from their values for each pane.
 */
static void
add_output(WaAggQuery *result, const char *name, Expr *expr, List **inputs)
{
	WaOutputColumn *out = &result->outputs[result->n_outputs++];
	OutputContext cxt = {result, name, inputs};

	out->name = pstrdup(name);
	out->type = exprType((Node *) expr);
	out->typmod = -1;
	if (IsA(expr, Aggref))
	{
		out->agg = add_aggregate(result, (Aggref *) expr, name, inputs);
		return;
	}
	out->agg = -1;
	out->expr = (Expr *) aggregates_to_params((Node *) expr, &cxt);
	out->typmod = exprTypmod((Node *) out->expr);
	if (contain_mutable_functions((Node *) out->expr))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("select list item \"%s\" must be immutable over its aggregates", name),
				 errdetail("A late pane computes it again, and must get what the first did.")));
	result->has_expressions = true;
}

static void
check_output_name(const char *name)
{
	for (int i = 0; reserved_names[i] != NULL; i++)
		if (strcmp(name, reserved_names[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("query output column name \"%s\" is reserved", name),
					 errhint("Give the column another alias.")));
}

static void
check_query_shape(Query *q)
{
	if (q->commandType != CMD_SELECT || q->utilityStmt != NULL)
		REJECT_QUERY("query must be a SELECT", NULL);
	if (q->setOperations != NULL)
		REJECT_QUERY("query must not use UNION, INTERSECT or EXCEPT", NULL);
	if (q->cteList != NIL)
		REJECT_QUERY("query must not use WITH", "Put the WITH query in a view and aggregate the view.");
	if (q->hasWindowFuncs)
		REJECT_QUERY("query must not use window functions", NULL);
	if (q->hasTargetSRFs)
		REJECT_QUERY("query must not use set-returning functions in the select list", NULL);
	if (q->distinctClause != NIL)
		REJECT_QUERY("query must not use DISTINCT", NULL);
	if (q->sortClause != NIL)
		REJECT_QUERY("query must not use ORDER BY",
			   "Rows are processed in arrival order; give arrival_order to choose it.");
	if (q->limitCount != NULL || q->limitOffset != NULL)
		REJECT_QUERY("query must not use LIMIT or OFFSET", NULL);
	if (q->havingQual != NULL)
		REJECT_QUERY("query must not use HAVING", "Filter the result rows when you read them.");
	if (q->groupingSets != NIL)
		REJECT_QUERY("query must not use GROUPING SETS, ROLLUP or CUBE", NULL);
	if (q->rowMarks != NIL)
		REJECT_QUERY("query must not use FOR UPDATE or FOR SHARE", NULL);
	if (list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), RangeTblRef) ||
		list_length(q->rtable) != 1 ||
		rt_fetch(1, q->rtable)->rtekind != RTE_RELATION)
		REJECT_QUERY("query must read exactly one table or view",
			   "Join in a view and aggregate the view.");
}

static void
resolve_event_time(WaAggQuery *result, const char *event_time,
				   Var **event_var)
{
	AttrNumber	attnum;
	Oid			typid;
	int32		typmod;
	Oid			collid;

	if (event_time == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("event_time must not be null"),
				 errhint("Name the column that holds each event's time.")));
	attnum = get_attnum(result->relid, event_time);
	if (attnum == InvalidAttrNumber || attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("event_time column \"%s\" does not exist in \"%s\"",
						event_time, result->relname)));
	get_atttypetypmodcoll(result->relid, attnum, &typid, &typmod, &collid);
	if (typid == TIMESTAMPTZOID || typid == TIMESTAMPOID)
		result->domain = WA_TIME_TIMESTAMP;
	else if (is_integer_type(typid))
		result->domain = WA_TIME_INTEGER;
	else
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("event_time column \"%s\" has type %s", event_time,
						format_type_be(typid)),
				 errdetail("Event times must be timestamptz, timestamp, smallint, integer or bigint.")));
	result->event_time_name = pstrdup(event_time);
	result->event_time_type = typid;
	*event_var = makeVar(1, attnum, typid, typmod, collid, 0);
}

/* Is the key a plain column that NOT NULL guards (on a real table)? */
static bool
key_is_not_null_column(WaAggQuery *result, Expr *expr)
{
	Relation	rel;
	Var		   *var;
	bool		notnull;

	if (!IsA(expr, Var) || ((Var *) expr)->varattno <= 0)
		return false;
	var = (Var *) expr;
	rel = relation_open(result->relid, AccessShareLock);
	/* NOT NULL is only enforced on tables of our own (not foreign ones) */
	notnull = TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attnotnull &&
		(rel->rd_rel->relkind == RELKIND_RELATION ||
		 rel->rd_rel->relkind == RELKIND_MATVIEW ||
		 rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE);
	relation_close(rel, AccessShareLock);
	return notnull;
}

/*
 * Can the single key travel as an int64?  smallint and integer keys always
 * can (NULL maps to a value outside their range); bigint keys only when
 * the column is NOT NULL, since every int64 is then a possible value.
 */
static bool
key_is_plain_integer(WaAggQuery *result)
{
	if (result->n_keys != 1 || !is_integer_type(result->keys[0].typid))
		return false;
	return result->keys[0].typid != INT8OID || result->keys[0].notnull;
}

/*
 * The row query's columns are named "<prefix> N".  For the batch functions
 * arrival_order is appended to it as an ORDER BY, where a bare name means
 * an output column before a column of the source: so no column of the
 * source, as the query names them (an alias list renames them), may start
 * with the prefix.  It is "windowagg column", or "windowagg_2 column",
 * "windowagg_3 column", ... for the first that none starts with.
 * Pipelines give no arrival_order and always take the first, so that the
 * row query (part of a pipeline's shape) does not change with columns the
 * query does not read.
 */
static char *
row_alias_prefix(Query *q, const char *arrival_order)
{
	List	   *colnames = rt_fetch(1, q->rtable)->eref->colnames;

	if (arrival_order == NULL)
		return pstrdup("windowagg column");
	for (int n = 1;; n++)
	{
		char	   *prefix = n == 1 ? pstrdup("windowagg column") :
			psprintf("windowagg_%d column", n);
		size_t		len = strlen(prefix);
		bool		clash = false;
		ListCell   *lc;

		foreach(lc, colnames)
		{
			if (strncmp(strVal(lfirst(lc)), prefix, len) == 0)
			{
				clash = true;
				break;
			}
		}
		if (!clash)
			return prefix;
		pfree(prefix);
	}
}

static TargetEntry *
row_column(const WaAggQuery *result, Expr *expr, int *resno)
{
	char	   *name = psprintf("%s %d", result->row_alias, *resno);

	return makeTargetEntry(expr, (AttrNumber) (*resno)++, name, false);
}

/*
 * Errors raised while parsing the user's query point into the query text,
 * not into the statement that called windowagg: report the position as an
 * internal query position, as PostgreSQL does for SQL function bodies.
 */
static void
query_error_callback(void *arg)
{
	const char *query = arg;
	int			pos = geterrposition();

	if (pos > 0)
	{
		errposition(0);
		internalerrposition(pos);
		internalerrquery(query);
	}
	errcontext("parsing the query given to windowagg");
}

/*
 * A pipeline reads every new row of its source, including the rows its
 * WHERE clause rejects: their arrival numbers tell it which numbers are
 * taken, so that a number it has not seen is known to be a gap.  The
 * condition becomes a boolean column ("counts"), and the arrival column is
 * returned after it.
 */
static void
add_arrival_columns(WaAggQuery *result, Query *q, const char *arrival_column,
					List **row_tlist, int *resno)
{
	AttrNumber	attnum = get_attnum(result->relid, arrival_column);
	Oid			typid;
	int32		typmod;
	Oid			collid;
	Expr	   *counts;

	if (attnum == InvalidAttrNumber || attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("arrival column \"%s\" does not exist in \"%s\"",
						arrival_column, result->relname)));
	get_atttypetypmodcoll(result->relid, attnum, &typid, &typmod, &collid);
	if (!is_integer_type(typid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("arrival column \"%s\" has type %s", arrival_column,
						format_type_be(typid)),
				 errdetail("The arrival column must be an integer identity or serial column.")));
	result->arrival_column = pstrdup(arrival_column);
	result->arrival_attnum = attnum;
	*row_tlist = lappend(*row_tlist,
						 row_column(result, (Expr *) makeVar(1, attnum, typid, typmod, collid, 0),
									resno));
	if (q->jointree->quals != NULL)
	{
		BooleanTest *test = makeNode(BooleanTest);

		test->arg = (Expr *) q->jointree->quals;
		test->booltesttype = IS_TRUE;
		test->location = -1;
		counts = (Expr *) test;
		q->jointree->quals = NULL;
	}
	else
		counts = (Expr *) makeBoolConst(true, false);
	*row_tlist = lappend(*row_tlist, row_column(result, counts, resno));
}

/*
 * The one table a query reads, as written in its FROM clause, or NULL if
 * the FROM clause is not one plain table name.
 */
static RangeVar *
raw_source(RawStmt *raw)
{
	SelectStmt *stmt = (SelectStmt *) raw->stmt;

	if (!IsA(stmt, SelectStmt) || list_length(stmt->fromClause) != 1 ||
		!IsA(linitial(stmt->fromClause), RangeVar))
		return NULL;
	return linitial(stmt->fromClause);
}

static WaAggQuery *parse_query(const char *query, const char *event_time,
							   const char *arrival_order,
							   const char *arrival_column,
							   const RangeVar *source_as,
							   bool guess_numeric_scales);

WaAggQuery *
wa_agg_query_parse(const char *query, const char *event_time,
				   const char *arrival_order, const char *arrival_column)
{
	return parse_query(query, event_time, arrival_order, arrival_column, NULL,
					   false);
}

/*
 * For the batch functions, which may guess: sum and avg over a numeric
 * without a fixed-point typmod then run on the decimal kernels, at the
 * scale of the input's first value (numeric_fixed.c), until a value does
 * not fit and the caller parses again without guessing.
 */
WaAggQuery *
wa_agg_query_parse_batch(const char *query, const char *event_time,
						 const char *arrival_order, bool guess_numeric_scales)
{
	return parse_query(query, event_time, arrival_order, NULL, NULL,
					   guess_numeric_scales);
}

/*
 * Parse a query whose table lives on another server: the table it names is
 * read as source_as, a local table of the same columns (the stand-in).  Its
 * name keeps working as a qualifier in the query.
 */
WaAggQuery *
wa_agg_query_parse_as(const char *query, const char *event_time,
					  const RangeVar *source_as)
{
	return parse_query(query, event_time, NULL, NULL, source_as, false);
}

RangeVar *
wa_agg_query_source_name(const char *query)
{
	List	   *raw = pg_parse_query(query);
	RangeVar   *rv = list_length(raw) == 1 ? raw_source(linitial(raw)) : NULL;

	if (rv == NULL)
		REJECT_QUERY("query must read exactly one table",
					 "Join or combine the rows before they reach the pipeline.");
	return rv;
}

static WaAggQuery *
parse_query(const char *query, const char *event_time,
			const char *arrival_order, const char *arrival_column,
			const RangeVar *source_as, bool guess_numeric_scales)
{
	ErrorContextCallback errcallback;
	WaAggQuery *result = palloc0(sizeof(WaAggQuery));
	List	   *raw;
	Query	   *q;
	ListCell   *lc;
	List	   *key_exprs = NIL;
	List	   *agg_inputs = NIL;
	List	   *row_tlist = NIL;
	Var		   *event_var;
	int			resno = 1;
	int			n_targets;
	StringInfoData sql;

	if (query == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query must not be null")));
	result->guess_numeric_scales = guess_numeric_scales;
	errcallback.callback = query_error_callback;
	errcallback.arg = (void *) query;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	raw = pg_parse_query(query);
	if (list_length(raw) != 1 ||
		!IsA(((RawStmt *) linitial(raw))->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("query must be a single SELECT statement")));
	if (source_as != NULL && raw_source(linitial(raw)) != NULL)
	{
		RangeVar   *written = raw_source(linitial(raw));
		RangeVar   *stand_in = copyObject((RangeVar *) source_as);

		stand_in->alias = written->alias != NULL ? written->alias :
			makeAlias(written->relname, NIL);
		stand_in->location = written->location;
		linitial(((SelectStmt *) ((RawStmt *) linitial(raw))->stmt)->fromClause) = stand_in;
	}
	q = parse_analyze_fixedparams(linitial(raw), query, NULL, 0, NULL);
	wa_flatten_group_rte(q);
	error_context_stack = errcallback.previous;
	/* privileges are otherwise checked only when a query runs */
	wa_check_query_permissions(q);
	check_query_shape(q);
	/*
	 * A guess proved wrong runs the query again (numeric_fixed.c): not a
	 * query whose volatile functions would then run twice, or give the
	 * second run other rows.
	 */
	if (result->guess_numeric_scales && contain_volatile_functions((Node *) q))
		result->guess_numeric_scales = false;

	result->relid = rt_fetch(1, q->rtable)->relid;
	result->inh = rt_fetch(1, q->rtable)->inh;
	result->relname = get_rel_name(result->relid);
	resolve_event_time(result, event_time, &event_var);

	n_targets = list_length(q->targetList);
	result->keys = palloc0(sizeof(WaKeyColumn) * n_targets);
	result->outputs = palloc0(sizeof(WaOutputColumn) * n_targets);
	result->aggs = palloc0(sizeof(WaAggColumn) *
						   (count_aggregates((Node *) q->targetList) + 1));

	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		char	   *name = tle->resname ? tle->resname : "?column?";

		if (tle->resjunk)
		{
			if (tle->ressortgroupref != 0 &&
				get_sortgroupref_clause_noerr(tle->ressortgroupref,
											  q->groupClause) != NULL)
				REJECT_QUERY("query must list every GROUP BY expression in its select list",
					   "The keys identify result rows, so they must be output.");
			continue;
		}
		check_output_name(name);
		if (tle->ressortgroupref != 0 &&
			get_sortgroupref_clause_noerr(tle->ressortgroupref,
										  q->groupClause) != NULL)
		{
			WaKeyColumn *key = &result->keys[result->n_keys++];

			key->name = pstrdup(name);
			key->typid = exprType((Node *) tle->expr);
			key->typmod = exprTypmod((Node *) tle->expr);
			key->collation = exprCollation((Node *) tle->expr);
			key->notnull = key_is_not_null_column(result, tle->expr);
			get_typlenbyval(key->typid, &key->typlen, &key->typbyval);
			check_key_type(key);
			key_exprs = lappend(key_exprs, tle->expr);
		}
		else if (IsA(tle->expr, Aggref) || contain_agg_clause((Node *) tle->expr))
			add_output(result, name, tle->expr, &agg_inputs);
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("select list item \"%s\" must be a GROUP BY key or an aggregate",
							name),
					 errhint("Group by it, or compute it from aggregates.")));
	}
	if (list_length(q->groupClause) != result->n_keys)
		REJECT_QUERY("query must list every GROUP BY expression in its select list exactly once",
			   "The keys identify result rows, so they must be output.");
	result->int_key = key_is_plain_integer(result);

	/* the row query: keys, event time, aggregate inputs */
	result->row_alias = row_alias_prefix(q, arrival_order);
	foreach(lc, key_exprs)
		row_tlist = lappend(row_tlist, row_column(result, copyObject(lfirst(lc)), &resno));
	row_tlist = lappend(row_tlist, row_column(result, (Expr *) event_var, &resno));
	result->n_inputs = list_length(agg_inputs);
	result->input_types = palloc0(sizeof(Oid) * (result->n_inputs + 1));
	result->input_scales = palloc0(sizeof(int) * (result->n_inputs + 1));
	result->input_guessed = palloc0(sizeof(bool) * (result->n_inputs + 1));
	foreach(lc, agg_inputs)
	{
		AggInput   *input = lfirst(lc);

		result->input_types[foreach_current_index(lc)] = exprType((Node *) input->expr);
		result->input_scales[foreach_current_index(lc)] = input->scale;
		result->input_guessed[foreach_current_index(lc)] =
			input->scale == WA_SCALE_UNKNOWN;
		row_tlist = lappend(row_tlist, row_column(result, copyObject(input->expr), &resno));
	}
	if (arrival_column != NULL)
		add_arrival_columns(result, q, arrival_column, &row_tlist, &resno);
	foreach(lc, row_tlist)
		result->row_exprs = lappend(result->row_exprs,
									((TargetEntry *) lfirst(lc))->expr);
	result->row_qual = (Expr *) q->jointree->quals;
	q->targetList = row_tlist;
	q->groupClause = NIL;
	q->hasAggs = false;

	initStringInfo(&sql);
	appendStringInfoString(&sql, pg_get_querydef(q, false));
	if (arrival_order != NULL)
	{
		List	   *check;
		SelectStmt *stmt;

		appendStringInfo(&sql, " ORDER BY %s", arrival_order);

		/*
		 * arrival_order must be an ORDER BY list and nothing more: no second
		 * statement, no LIMIT/OFFSET/FETCH, no locking clause.  Syntax
		 * errors point into the row query, shown with the error.
		 */
		errcallback.callback = query_error_callback;
		errcallback.arg = (void *) sql.data;
		errcallback.previous = error_context_stack;
		error_context_stack = &errcallback;
		check = pg_parse_query(sql.data);
		error_context_stack = errcallback.previous;
		stmt = list_length(check) == 1 &&
			IsA(((RawStmt *) linitial(check))->stmt, SelectStmt) ?
			(SelectStmt *) ((RawStmt *) linitial(check))->stmt : NULL;
		if (stmt == NULL || stmt->limitCount != NULL ||
			stmt->limitOffset != NULL || stmt->lockingClause != NIL)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("arrival_order must be a list of ORDER BY expressions"),
					 errhint("For example 'id' or 'received_at, id'.")));
	}
	result->row_query = sql.data;
	return result;
}

void
wa_agg_query_engine_aggs(const WaAggQuery *q, wa_agg_spec *out)
{
	for (int i = 0; i < q->n_aggs; i++)
	{
		out[i].kind = q->aggs[i].kind;
		out[i].input = Max(q->aggs[i].input, 0);
		out[i].idempotent = q->aggs[i].idempotent;
	}
}

/* Feed a value's bytes to the digest. */
#define SHAPE_ADD(ctx, value) \
	(void) pg_cryptohash_update((ctx), (const uint8 *) &(value), sizeof(value))

void
wa_agg_query_shape(const WaAggQuery *q, const WaWindowSet *windows,
				   int64 bound, int64 lateness, uint8 *shape)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	int32		len = (int32) strlen(q->row_query);

	if (ctx == NULL || pg_cryptohash_init(ctx) < 0)
		elog(ERROR, "could not compute the shape of a windowagg query");
	SHAPE_ADD(ctx, len);
	(void) pg_cryptohash_update(ctx, (const uint8 *) q->row_query, len);
	SHAPE_ADD(ctx, q->event_time_type);
	SHAPE_ADD(ctx, q->int_key);
	SHAPE_ADD(ctx, q->n_keys);
	for (int i = 0; i < q->n_keys; i++)
	{
		SHAPE_ADD(ctx, q->keys[i].typid);
		SHAPE_ADD(ctx, q->keys[i].typmod);
		SHAPE_ADD(ctx, q->keys[i].collation);
		SHAPE_ADD(ctx, q->keys[i].typlen);
		SHAPE_ADD(ctx, q->keys[i].typbyval);
	}
	SHAPE_ADD(ctx, q->n_inputs);
	for (int i = 0; i < q->n_inputs; i++)
	{
		SHAPE_ADD(ctx, q->input_types[i]);
		SHAPE_ADD(ctx, q->input_scales[i]);
	}
	SHAPE_ADD(ctx, q->n_aggs);
	for (int i = 0; i < q->n_aggs; i++)
	{
		SHAPE_ADD(ctx, q->aggs[i].kind);
		SHAPE_ADD(ctx, q->aggs[i].input);
		SHAPE_ADD(ctx, q->aggs[i].input_type);
		SHAPE_ADD(ctx, q->aggs[i].result_type);
		SHAPE_ADD(ctx, q->aggs[i].decimal_scale);
		SHAPE_ADD(ctx, q->aggs[i].aggfnoid);
		SHAPE_ADD(ctx, q->aggs[i].collation);
		SHAPE_ADD(ctx, q->aggs[i].filter_input);
		SHAPE_ADD(ctx, q->aggs[i].distinct);
		SHAPE_ADD(ctx, q->aggs[i].n_args);
		for (int j = 0; j < q->aggs[i].n_args; j++)
		{
			SHAPE_ADD(ctx, q->aggs[i].arg_inputs[j]);
			SHAPE_ADD(ctx, q->aggs[i].arg_types[j]);
		}
		/* an aggregate replaced since keeps its OID, not its states' form */
		if (q->aggs[i].kind == WA_AGG_GENERIC)
		{
			WaGenericDescription d;

			wa_generic_describe(&q->aggs[i], &d);
			SHAPE_ADD(ctx, d.transtype);
			for (int j = 0; j < (int) lengthof(d.support); j++)
			{
				/* ALTER FUNCTION ... STRICT changes how states are made */
				bool		strict = OidIsValid(d.support[j]) &&
					func_strict(d.support[j]);

				SHAPE_ADD(ctx, d.support[j]);
				SHAPE_ADD(ctx, strict);
			}
			SHAPE_ADD(ctx, d.finalmodify);
			SHAPE_ADD(ctx, d.finalextra);
		}
	}
	/* the expressions over aggregates, as this parse resolved them */
	SHAPE_ADD(ctx, q->n_outputs);
	for (int i = 0; i < q->n_outputs; i++)
	{
		char	   *expr = q->outputs[i].expr != NULL ?
			nodeToString(q->outputs[i].expr) : "";

		len = (int32) strlen(expr);
		SHAPE_ADD(ctx, q->outputs[i].agg);
		SHAPE_ADD(ctx, len);
		(void) pg_cryptohash_update(ctx, (const uint8 *) expr, len);
	}
	SHAPE_ADD(ctx, windows->n_windows);
	for (int i = 0; i < windows->n_windows; i++)
	{
		SHAPE_ADD(ctx, windows->windows[i].size);
		SHAPE_ADD(ctx, windows->windows[i].slide);
		SHAPE_ADD(ctx, windows->windows[i].origin);
	}
	/* only when there are any: a shape made before sessions stays as it was */
	if (windows->n_sessions > 0)
	{
		SHAPE_ADD(ctx, windows->n_sessions);
		for (int i = 0; i < windows->n_sessions; i++)
			SHAPE_ADD(ctx, windows->sessions[i].gap);
	}
	SHAPE_ADD(ctx, bound);
	SHAPE_ADD(ctx, lateness);
	if (pg_cryptohash_final(ctx, shape, WA_SHAPE_LEN) < 0)
		elog(ERROR, "could not compute the shape of a windowagg query");
	pg_cryptohash_free(ctx);
}

/* How many aggregate inputs row_query returns (count(*) reads none). */
int
wa_agg_query_n_inputs(const WaAggQuery *q)
{
	return q->n_inputs;
}

void
wa_agg_query_engine_config(const WaAggQuery *q, const WaWindowSet *windows,
						   int64 bound, int64 lateness, wa_config *config)
{
	wa_agg_spec *aggs = palloc0(sizeof(wa_agg_spec) * (q->n_aggs + 1));

	wa_agg_query_engine_aggs(q, aggs);
	memset(config, 0, sizeof(*config));
	config->n_windows = windows->n_windows;
	config->windows = windows->windows;
	config->n_sessions = windows->n_sessions;
	config->sessions = windows->sessions;
	config->bound = bound;
	config->lateness = lateness;
	config->n_aggs = q->n_aggs;
	config->aggs = aggs;
	config->byte_keys = !q->int_key;
	config->share_windows = wa_share_windows;
}

void
wa_engine_config_check(const wa_config *config)
{
	const char *problem = wa_config_check(config);

	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid windowing configuration: %s", problem)));
}
