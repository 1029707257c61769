/*-------------------------------------------------------------------------
 *
 * catalog_scope.c
 *	  The scope every statement on windowagg's catalog tables
 *	  (windowagg.pipelines, pipeline_progress, checkpoints) runs in.
 *
 * The tables belong to the extension's owner, a superuser, and every
 * statement on them runs as that owner: backends changing a pipeline,
 * workers checkpointing one and the launcher finding them all go through
 * the functions below.  Nothing that a caller or a pipeline owner controls
 * may reach such a statement, so each runs in a catalog scope, as
 * PostgreSQL's own maintenance commands run code as a table's owner:
 *
 *	- search_path is pinned to "pg_catalog, pg_temp" for the statement, so
 *	  that no operator, function, type or cast in anybody's schema can be
 *	  picked up (the statement texts qualify them besides);
 *	- it is a security-restricted operation;
 *	- a prepared statement is prepared in the same scope, so that its
 *	  cached plan is re-planned under the pinned path, never under the
 *	  path of whoever prepared it.
 *
 * Everything else a worker does (reading the source, writing the result
 * tables) runs as the pipeline's owner (see worker.c).
 *
 * The statements themselves are in src/pipeline (catalog_pipelines.c,
 * catalog_progress.c); the scope is here, below the pipeline layer and the
 * sources, because a table source reads its arrival sequence in it too.
 *
 * src/query/catalog_scope.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

/* The search_path every catalog statement runs under. */
#define CATALOG_SEARCH_PATH "pg_catalog, pg_temp"

/* ---------- the catalog scope ---------- */

Oid
wa_catalog_pipelines_relid(void)
{
	Oid			nspid = get_namespace_oid("windowagg", true);
	Oid			relid = OidIsValid(nspid) ?
		get_relname_relid("pipelines", nspid) : InvalidOid;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table windowagg.pipelines does not exist"),
				 errhint("Create the extension with CREATE EXTENSION windowagg.")));

	/*
	 * Found by name, so it must also be the extension's own table, owned by
	 * a superuser: the statements run as its owner, and a table that a role
	 * made under that name (in a schema of its own, the extension's renamed
	 * away) would have them run as whoever that role's rows name.
	 */
	if (getExtensionOfObject(RelationRelationId, relid) !=
		get_extension_oid("windowagg", true) ||
		!superuser_arg(wa_relation_owner(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table windowagg.pipelines is not windowagg's catalog"),
				 errdetail("It does not belong to the extension, or a role other than a superuser owns it."),
				 errhint("Drop it, and give the extension's schema back its name.")));
	return relid;
}

/* A relation's owner; InvalidOid if it no longer exists. */
Oid
wa_relation_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		return InvalidOid;
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* The role the catalog statements run as: the owner of the catalog. */
static Oid
catalog_owner(void)
{
	Oid			relid = wa_catalog_pipelines_relid();
	Oid			owner = wa_relation_owner(relid);

	if (!OidIsValid(owner))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	return owner;
}

typedef struct CatalogScope
{
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} CatalogScope;

int
wa_pin_search_path(void)
{
	int			nest_level = NewGUCNestLevel();

	(void) set_config_option("search_path", CATALOG_SEARCH_PATH,
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nest_level;
}

void
wa_unpin_search_path(int nest_level)
{
	AtEOXact_GUC(false, nest_level);
}

static void
catalog_scope_enter(CatalogScope *scope)
{
	Oid			owner = catalog_owner();

	GetUserIdAndSecContext(&scope->save_userid, &scope->save_sec_context);
	SetUserIdAndSecContext(owner, scope->save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	scope->save_nestlevel = wa_pin_search_path();
}

static void
catalog_scope_leave(CatalogScope *scope)
{
	wa_unpin_search_path(scope->save_nestlevel);
	SetUserIdAndSecContext(scope->save_userid, scope->save_sec_context);
}

typedef struct CatalogStatement
{
	const char *sql;
	SPIPlanPtr	plan;			/* to run, or (prepare) the one made */
	bool		prepare;
	int			nargs;
	Oid		   *argtypes;
	Datum	   *values;
	const char *nulls;
} CatalogStatement;

static int
run_statement(CatalogStatement *st)
{
	if (st->prepare)
	{
		st->plan = SPI_prepare(st->sql, st->nargs, st->argtypes);
		if (st->plan == NULL)
			elog(ERROR, "could not prepare a statement on the pipeline catalog: %s",
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(st->plan) != 0)
			elog(ERROR, "could not keep the plan of a statement on the pipeline catalog");
		return 0;
	}
	if (st->plan != NULL)
		return SPI_execute_plan(st->plan, st->values, st->nulls, false, 0);
	return SPI_execute_with_args(st->sql, st->nargs, st->argtypes, st->values,
								 st->nulls, false, 0);
}

/* Run (or prepare) one statement in the catalog scope. */
static int
in_catalog_scope(CatalogStatement *st)
{
	CatalogScope scope;
	volatile int ret = 0;

	catalog_scope_enter(&scope);
	PG_TRY();
	{
		ret = run_statement(st);
	}
	PG_FINALLY();
	{
		catalog_scope_leave(&scope);
	}
	PG_END_TRY();
	return ret;
}

int
wa_catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *values,
				const char *nulls)
{
	CatalogStatement st = {sql, NULL, false, nargs, argtypes, values, nulls};
	int			ret = in_catalog_scope(&st);

	if (ret < 0)
		elog(ERROR, "statement on the pipeline catalog failed: %s",
			 SPI_result_code_string(ret));
	return ret;
}

int
wa_catalog_exec_for(const char *sql, int32 pipeline_id)
{
	Datum		arg = Int32GetDatum(pipeline_id);
	Oid			argtype = INT4OID;

	return wa_catalog_exec(sql, 1, &argtype, &arg, NULL);
}

/* The parameters of wa_catalog_set_for's statements. */
enum
{
	Param_set_for_pipeline = 0,
	Param_set_for_value,
	Nparams_set_for
};

int
wa_catalog_set_for(const char *sql, int32 pipeline_id, Oid type, Datum value)
{
	Datum		values[Nparams_set_for];
	Oid			argtypes[Nparams_set_for];

	values[Param_set_for_pipeline] = Int32GetDatum(pipeline_id);
	argtypes[Param_set_for_pipeline] = INT4OID;
	values[Param_set_for_value] = value;
	argtypes[Param_set_for_value] = type;
	return wa_catalog_exec(sql, Nparams_set_for, argtypes, values, NULL);
}

SPIPlanPtr
wa_catalog_prepare(const char *sql, int nargs, Oid *argtypes)
{
	CatalogStatement st = {sql, NULL, true, nargs, argtypes, NULL, NULL};

	(void) in_catalog_scope(&st);
	return st.plan;
}

int
wa_catalog_execute_plan(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	CatalogStatement st = {NULL, plan, false, 0, NULL, values, nulls};

	return in_catalog_scope(&st);
}
