/*-------------------------------------------------------------------------
 *
 * code_owners.c
 *	  Whose code a pipeline's query runs.
 *
 * A pipeline's worker runs its query for as long as the pipeline lives,
 * with its owner's rights and without the owner watching.  Every function
 * the query calls (directly, through an operator or a cast, or through
 * the check constraints of a domain it casts to) can be replaced at any
 * time by the role that owns it, with CREATE OR REPLACE or ALTER DOMAIN.
 * A function owned by another role would therefore let that role run code
 * as the pipeline's owner, in a background process, whenever it likes:
 * rights borrowed without a call by the owner.  So a pipeline runs only
 * code that its owner or a superuser owns.
 *
 * The rule is checked on every parse that a worker will run: when the
 * pipeline is created, when a new owner takes it over (its old owner
 * keeps the functions it wrote), and each time a worker parses the query
 * again under its stored search_path (where another role may since have
 * created a function that now matches better).  The batch functions run
 * as their caller, while the caller waits, and are not restricted.
 *
 * A worker also keeps prepared statements, which PostgreSQL analyses again
 * by name when an invalidation (a dropped function, any CREATE OPERATOR,
 * a renamed schema) reaches them: the query's own parse is then no longer
 * what runs.  So in a worker, every analysis of every statement passes
 * the same check (wa_trust_only_owned_code), with the role it runs as at
 * that moment: a function, domain or view of another role makes the
 * statement fail before it runs, and the pipeline stops.
 *
 * src/query/code_owners.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "access/relation.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "rewrite/rowsecurity.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

typedef enum CodeKind
{
	CODE_FUNCTION,
	CODE_DOMAIN,
	CODE_TYPE,					/* a composite type (its fields may change) */
	CODE_POLICIES,				/* a table's row-level security */
	CODE_VIEW,
	CODE_RELATION				/* not a pipeline's table (its statements) */
} CodeKind;

typedef struct CodeOwnerWalk
{
	Oid			owner;			/* the role the code would run as */
	bool		own_tables_only;	/* a statement of the pipeline's own */
	Oid			offender;		/* a function, domain or view of another
								 * role */
	Oid			offender_owner;
	CodeKind	offender_kind;
} CodeOwnerWalk;

/*
 * In a worker: the texts of the statements the pipeline itself prepares,
 * and the tables they may name (all in TopMemoryContext).
 */
static List *own_statements = NIL;
static List *own_relations = NIL;

/* May code owned by code_owner run as owner without either watching? */
static bool
trusted_code_owner(Oid code_owner, Oid owner)
{
	return code_owner == owner || superuser_arg(code_owner);
}

static bool
function_untrusted(Oid funcid, void *context)
{
	CodeOwnerWalk *walk = (CodeOwnerWalk *) context;
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	Oid			proowner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", funcid);
	proowner = ((Form_pg_proc) GETSTRUCT(tup))->proowner;
	ReleaseSysCache(tup);
	if (trusted_code_owner(proowner, walk->owner))
		return false;
	walk->offender = funcid;
	walk->offender_owner = proowner;
	walk->offender_kind = CODE_FUNCTION;
	return true;
}

/* A domain and the domains it is based on: their owners add constraints. */
static bool
domain_untrusted(Oid typid, CodeOwnerWalk *walk)
{
	while (get_typtype(typid) == TYPTYPE_DOMAIN)
	{
		HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
		Form_pg_type typ;
		Oid			typowner;
		Oid			base;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for type %u", typid);
		typ = (Form_pg_type) GETSTRUCT(tup);
		typowner = typ->typowner;
		base = typ->typbasetype;
		ReleaseSysCache(tup);
		if (!trusted_code_owner(typowner, walk->owner))
		{
			walk->offender = typid;
			walk->offender_owner = typowner;
			walk->offender_kind = CODE_DOMAIN;
			return true;
		}
		typid = base;
	}
	return false;
}

/*
 * A type whose values the pipeline keeps (keys, aggregate inputs, states,
 * results): a restore reads them back through their receive functions,
 * which check the constraints of every domain in them, an array's
 * elements', a composite's fields', a range's bounds' included.
 */
static bool
type_untrusted(Oid typid, CodeOwnerWalk *walk)
{
	HeapTuple	tup;
	Form_pg_type typ;
	Oid			elem;
	Oid			relid;
	Oid			typowner;
	char		typtype;

	check_stack_depth();
	if (domain_untrusted(typid, walk))
		return true;
	typid = getBaseType(typid);
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for type %u", typid);
	typ = (Form_pg_type) GETSTRUCT(tup);
	elem = IsTrueArrayType(typ) ? typ->typelem : InvalidOid;
	relid = typ->typrelid;
	typtype = typ->typtype;
	typowner = typ->typowner;
	ReleaseSysCache(tup);

	/* a composite's owner may change its fields (ALTER TYPE) under it */
	if (typtype == TYPTYPE_COMPOSITE && !trusted_code_owner(typowner, walk->owner))
	{
		walk->offender = typid;
		walk->offender_owner = typowner;
		walk->offender_kind = CODE_TYPE;
		return true;
	}
	if (OidIsValid(elem))
		return type_untrusted(elem, walk);
	if (typtype == TYPTYPE_RANGE)
		return type_untrusted(get_range_subtype(typid), walk);
	if (typtype == TYPTYPE_MULTIRANGE)
		return type_untrusted(get_multirange_range(typid), walk);
	if (typtype == TYPTYPE_COMPOSITE && OidIsValid(relid))
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(typid, -1);
		bool		found = false;

		for (int i = 0; i < desc->natts && !found; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				found = type_untrusted(TupleDescAttr(desc, i)->atttypid, walk);
		ReleaseTupleDesc(desc);
		return found;
	}
	return false;
}

/*
 * An aggregate runs its transition, combine, final, serial and deserial
 * functions too; a pipeline's checkpoint runs its state type's binary send
 * and receive functions.  The aggregate itself can be replaced by its
 * owner (CREATE OR REPLACE AGGREGATE).
 */
static bool
aggregate_untrusted(Oid aggfnoid, CodeOwnerWalk *walk)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Form_pg_aggregate agg;
	Oid			support[8];
	int			n = 0;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for aggregate %u", aggfnoid);
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	support[n++] = aggfnoid;
	support[n++] = agg->aggtransfn;
	support[n++] = agg->aggfinalfn;
	support[n++] = agg->aggcombinefn;
	support[n++] = agg->aggserialfn;
	support[n++] = agg->aggdeserialfn;
	if (agg->aggtranstype != INTERNALOID)
	{
		HeapTuple	typtup = SearchSysCache1(TYPEOID,
											 ObjectIdGetDatum(agg->aggtranstype));

		if (HeapTupleIsValid(typtup))
		{
			support[n++] = ((Form_pg_type) GETSTRUCT(typtup))->typsend;
			support[n++] = ((Form_pg_type) GETSTRUCT(typtup))->typreceive;
			ReleaseSysCache(typtup);
		}
	}
	ReleaseSysCache(tup);
	for (int i = 0; i < n; i++)
		if (OidIsValid(support[i]) && function_untrusted(support[i], walk))
			return true;
	return false;
}

/* A view's definition runs with the rights of whoever reads it. */
static bool
view_untrusted(Oid relid, CodeOwnerWalk *walk)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class rel;
	bool		untrusted;

	if (!HeapTupleIsValid(tup))
		return false;			/* the executor reports a dropped relation */
	rel = (Form_pg_class) GETSTRUCT(tup);
	untrusted = rel->relkind == RELKIND_VIEW &&
		!trusted_code_owner(rel->relowner, walk->owner);
	if (untrusted)
	{
		walk->offender = relid;
		walk->offender_owner = rel->relowner;
		walk->offender_kind = CODE_VIEW;
	}
	ReleaseSysCache(tup);
	return untrusted;
}

static bool untrusted_code_walker(Node *node, CodeOwnerWalk *walk);

/*
 * A table's row-level security policies run as whoever reads the table:
 * another role's table with row-level security enabled (it may add any
 * policy at any time), or any policy calling another role's code.
 */
static bool
policies_untrusted(Oid relid, CodeOwnerWalk *walk)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Form_pg_class form;
	Relation	rel;
	ListCell   *lc;
	bool		untrusted = false;

	if (!HeapTupleIsValid(tup))
		return false;			/* the executor reports a dropped relation */
	form = (Form_pg_class) GETSTRUCT(tup);
	if (!form->relrowsecurity)
	{
		ReleaseSysCache(tup);
		return false;
	}
	if (!trusted_code_owner(form->relowner, walk->owner))
	{
		walk->offender = relid;
		walk->offender_owner = form->relowner;
		walk->offender_kind = CODE_POLICIES;
		ReleaseSysCache(tup);
		return true;
	}
	ReleaseSysCache(tup);

	check_stack_depth();		/* policies may read tables with policies */
	rel = relation_open(relid, AccessShareLock);
	if (rel->rd_rsdesc != NULL)
	{
		foreach(lc, rel->rd_rsdesc->policies)
		{
			RowSecurityPolicy *policy = lfirst(lc);
			Node	   *quals[2] = {copyObject((Node *) policy->qual),
			copyObject((Node *) policy->with_check_qual)};

			for (int i = 0; i < (int) lengthof(quals) && !untrusted; i++)
			{
				fix_opfuncids(quals[i]);
				untrusted = untrusted_code_walker(quals[i], walk);
			}
			if (untrusted)
				break;
		}
	}
	relation_close(rel, NoLock);
	return untrusted;
}

static bool
untrusted_code_walker(Node *node, CodeOwnerWalk *walk)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, untrusted_code_walker, walk,
								 QTW_EXAMINE_RTES_BEFORE);
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind != RTE_RELATION)
			return false;
		if (walk->own_tables_only && !list_member_oid(own_relations, rte->relid))
		{
			walk->offender = rte->relid;
			walk->offender_owner = InvalidOid;
			walk->offender_kind = CODE_RELATION;
			return true;
		}
		return view_untrusted(rte->relid, walk) ||
			policies_untrusted(rte->relid, walk);
	}
	if (check_functions_in_node(node, function_untrusted, walk))
		return true;
	if (IsA(node, Aggref) && aggregate_untrusted(((Aggref *) node)->aggfnoid, walk))
		return true;
	if (IsA(node, CoerceToDomain) &&
		domain_untrusted(((CoerceToDomain *) node)->resulttype, walk))
		return true;
	return expression_tree_walker(node, untrusted_code_walker, walk);
}

static void
report_untrusted(const CodeOwnerWalk *walk, const char *pipeline_name)
{
	const char *what;

	if (walk->offender_kind == CODE_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("a statement of pipeline \"%s\" now names table %s, which is not one of its tables",
						pipeline_name,
						quote_qualified_identifier(get_namespace_name(get_rel_namespace(walk->offender)),
												   get_rel_name(walk->offender))),
				 errdetail("A name the pipeline was created with now means another table: a schema or table was renamed, or a table was created ahead of it on the search_path."),
				 errhint("Restore the names, then call windowagg.resume('%s').",
						 pipeline_name)));
	switch (walk->offender_kind)
	{
		case CODE_DOMAIN:
			what = psprintf("uses domain %s", format_type_be(walk->offender));
			break;
		case CODE_TYPE:
			what = psprintf("keeps values of type %s", format_type_be(walk->offender));
			break;
		case CODE_POLICIES:
			what = psprintf("reads table %s with row-level security",
							quote_qualified_identifier(get_namespace_name(get_rel_namespace(walk->offender)),
													   get_rel_name(walk->offender)));
			break;
		case CODE_VIEW:
			what = psprintf("reads view %s",
							quote_qualified_identifier(get_namespace_name(get_rel_namespace(walk->offender)),
													   get_rel_name(walk->offender)));
			break;
		default:
			what = psprintf("calls function %s", format_procedure(walk->offender));
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("pipeline \"%s\" %s, which belongs to role \"%s\"",
					pipeline_name, what,
					GetUserNameFromId(walk->offender_owner, false)),
			 errdetail("A pipeline runs only code that the role it acts as or a superuser owns: the owner of a function, domain or view can change it at any time, and the pipeline would run the new code with the rights of role \"%s\".",
					   GetUserNameFromId(walk->owner, false)),
			 errhint("Have role \"%s\" own it, or use one of its own.",
					 GetUserNameFromId(walk->owner, false))));
}

/*
 * Error out unless every function and domain that q's row expressions,
 * filter, aggregates and expressions over them use, and every domain in
 * the types of the values it keeps, belongs to owner or to a superuser.
 */
void
wa_agg_query_check_code_owners(const WaAggQuery *q, Oid owner,
							   const char *pipeline_name)
{
	CodeOwnerWalk walk = {owner, false, InvalidOid, InvalidOid, CODE_FUNCTION};
	Node	   *exprs[2] = {(Node *) q->row_exprs, (Node *) q->row_qual};

	for (int i = 0; i < (int) lengthof(exprs); i++)
	{
		/* operators' function OIDs are filled in by the parser already */
		fix_opfuncids(exprs[i]);
		if (!untrusted_code_walker(exprs[i], &walk))
			continue;
		report_untrusted(&walk, pipeline_name);
	}
	/* PostgreSQL aggregates, and expressions over their values */
	for (int i = 0; i < q->n_aggs; i++)
		if (q->aggs[i].kind == WA_AGG_GENERIC &&
			aggregate_untrusted(q->aggs[i].aggfnoid, &walk))
			report_untrusted(&walk, pipeline_name);

	/*
	 * The source's row-level security policies run as the role that reads
	 * the table (the tables of sublinks are walked with their expressions).
	 */
	if (OidIsValid(q->relid) && policies_untrusted(q->relid, &walk))
		report_untrusted(&walk, pipeline_name);

	/* the types of what it keeps, and reads back at a restore */
	for (int i = 0; i < q->n_keys; i++)
		if (type_untrusted(q->keys[i].typid, &walk))
			report_untrusted(&walk, pipeline_name);
	for (int i = 0; i < q->n_inputs; i++)
		if (type_untrusted(q->input_types[i], &walk))
			report_untrusted(&walk, pipeline_name);
	for (int i = 0; i < q->n_aggs; i++)
	{
		WaGenericDescription d;

		if (q->aggs[i].kind != WA_AGG_GENERIC)
			continue;
		wa_generic_describe(&q->aggs[i], &d);
		if (type_untrusted(d.transtype, &walk))
			report_untrusted(&walk, pipeline_name);
	}
	for (int i = 0; i < q->n_outputs; i++)
	{
		if (q->outputs[i].expr == NULL)
			continue;
		fix_opfuncids((Node *) q->outputs[i].expr);
		if (untrusted_code_walker((Node *) q->outputs[i].expr, &walk))
			report_untrusted(&walk, pipeline_name);
	}
}

/* ---------- every analysis in a worker ---------- */

static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;
static const char *trusting_pipeline = NULL;

static bool
is_own_statement(const char *sql)
{
	ListCell   *lc;

	if (sql == NULL)
		return false;
	foreach(lc, own_statements)
		if (strcmp(lfirst(lc), sql) == 0)
			return true;
	return false;
}

static void
check_analyzed_query(ParseState *pstate, Query *query, JumbleState *jstate)
{
	CodeOwnerWalk walk = {GetUserId(), is_own_statement(pstate->p_sourcetext),
	InvalidOid, InvalidOid, CODE_FUNCTION};

	if (prev_post_parse_analyze_hook)
		prev_post_parse_analyze_hook(pstate, query, jstate);
	if (untrusted_code_walker((Node *) query, &walk))
		report_untrusted(&walk, trusting_pipeline);
}

/*
 * From now on, in this process (a pipeline's worker), every statement
 * analysed, and analysed again, runs only code that the role it runs as
 * or a superuser owns.
 */
void
wa_trust_only_owned_code(const char *pipeline_name)
{
	if (trusting_pipeline != NULL)
		return;					/* set up again after an error */
	trusting_pipeline = MemoryContextStrdup(TopMemoryContext, pipeline_name);
	prev_post_parse_analyze_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = check_analyzed_query;
}

/* Collect the tables that the query's sublinks read. */
static bool
collect_relations(Node *node, List **relids)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, collect_relations, relids,
								 QTW_EXAMINE_RTES_BEFORE);
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
			*relids = list_append_unique_oid(*relids, rte->relid);
		return false;
	}
	return expression_tree_walker(node, collect_relations, relids);
}

/*
 * The tables a worker's own statements may name: the source (and what the
 * query's sublinks read, as this worker's parse resolved them) and the
 * result, sessions and dead-letter tables, all by OID.  The statements themselves
 * are registered with wa_own_statement before they are prepared: when
 * PostgreSQL analyses one again after an invalidation, a name that now
 * means another table stops the pipeline instead of writing there.
 */
void
wa_own_relations(const WaAggQuery *q, Oid result_table, Oid sessions_table,
				 Oid dead_letter_table)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	List	   *relids = NIL;

	relids = lappend_oid(relids, q->relid);
	relids = lappend_oid(relids, result_table);
	if (OidIsValid(sessions_table))
		relids = lappend_oid(relids, sessions_table);
	relids = lappend_oid(relids, dead_letter_table);
	(void) collect_relations((Node *) q->row_exprs, &relids);
	(void) collect_relations((Node *) q->row_qual, &relids);
	list_free(own_relations);
	own_relations = relids;
	MemoryContextSwitchTo(old);
}

void
wa_own_statement(const char *sql)
{
	MemoryContext old;

	if (is_own_statement(sql))
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	own_statements = lappend(own_statements, pstrdup(sql));
	MemoryContextSwitchTo(old);
}
