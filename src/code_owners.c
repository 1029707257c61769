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
 * src/code_owners.c
 *
 *-------------------------------------------------------------------------
 */
#include "windowagg.h"

#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

typedef struct CodeOwnerWalk
{
	Oid			owner;			/* the role the code would run as */
	Oid			offender;		/* a function or domain of another role */
	Oid			offender_owner;
	bool		offender_is_domain;
} CodeOwnerWalk;

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
	walk->offender_is_domain = false;
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
			walk->offender_is_domain = true;
			return true;
		}
		typid = base;
	}
	return false;
}

static bool
untrusted_code_walker(Node *node, CodeOwnerWalk *walk)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, untrusted_code_walker, walk, 0);
	if (check_functions_in_node(node, function_untrusted, walk))
		return true;
	if (IsA(node, CoerceToDomain) &&
		domain_untrusted(((CoerceToDomain *) node)->resulttype, walk))
		return true;
	return expression_tree_walker(node, untrusted_code_walker, walk);
}

/*
 * Error out unless every function and domain that q's row expressions and
 * filter use belongs to owner or to a superuser.
 */
void
wa_agg_query_check_code_owners(const WaAggQuery *q, Oid owner,
							   const char *pipeline_name)
{
	CodeOwnerWalk walk = {owner, InvalidOid, InvalidOid, false};
	Node	   *exprs[2] = {(Node *) q->row_exprs, (Node *) q->row_qual};

	for (int i = 0; i < (int) lengthof(exprs); i++)
	{
		/* operators' function OIDs are filled in by the parser already */
		fix_opfuncids(exprs[i]);
		if (!untrusted_code_walker(exprs[i], &walk))
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 walk.offender_is_domain ?
				 errmsg("the query of pipeline \"%s\" uses domain %s, which belongs to role \"%s\"",
						pipeline_name, format_type_be(walk.offender),
						GetUserNameFromId(walk.offender_owner, false)) :
				 errmsg("the query of pipeline \"%s\" calls function %s, which belongs to role \"%s\"",
						pipeline_name, format_procedure(walk.offender),
						GetUserNameFromId(walk.offender_owner, false)),
				 errdetail("A pipeline runs only code that its owner or a superuser owns: the owner of a function or domain can change it at any time, and the pipeline would run the new code with the rights of role \"%s\".",
						   GetUserNameFromId(owner, false)),
				 errhint("Have role \"%s\" own it, or use one of its own.",
						 GetUserNameFromId(owner, false))));
	}
}
