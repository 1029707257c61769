/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  The scope every statement on windowagg's catalog tables
 *	  (windowagg.pipelines, pipeline_progress, checkpoints) runs in, and
 *	  a pipeline's query as its definition gives it.
 *
 * The statements themselves, each beside the enum that names its columns
 * and parameters, are in catalog_pipelines.c (windowagg.pipelines) and
 * catalog_progress.c (pipeline_progress and checkpoints); nothing outside
 * those files names a column of the catalog.
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
 * src/pipeline/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
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

/* ---------- a pipeline's query ---------- */

/* Parse under the current search_path: a remote source reads its stand-in. */
WaAggQuery *
wa_pipeline_query_parse_now(const WaPipelineDef *def)
{
	RangeVar   *stand_in;

	if (def->connection == NULL)
		return wa_agg_query_parse(def->query, def->event_time, NULL,
								  def->logical ? NULL : def->arrival_column);
	stand_in = makeRangeVar(get_namespace_name(get_rel_namespace(def->source)),
							get_rel_name(def->source), -1);
	if (stand_in->relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the local stand-in table of pipeline \"%s\" is gone", def->name)));
	return wa_agg_query_parse_as(def->query, def->event_time, stand_in);
}

/* Set a GUC until the end of the current nest level. */
static void
set_for_parse(const char *name, const char *value)
{
	(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
}

/*
 * Parse the pipeline's query under search_path.  For a reader who is not
 * the owner, the session's own settings must neither change what the
 * query means nor make the parser quote it back (a warning, a notice):
 * the lexer's settings are the defaults, and nothing below an error
 * reaches the client.
 */
static WaAggQuery *
parse_under_path(const WaPipelineDef *def, const char *search_path,
				 bool for_reader)
{
	int			save_nestlevel = NewGUCNestLevel();
	WaAggQuery *q;

	set_for_parse("search_path", search_path);
	if (for_reader)
	{
		set_for_parse("standard_conforming_strings", "on");
		set_for_parse("escape_string_warning", "off");
		set_for_parse("backslash_quote", "safe_encoding");
		set_for_parse("transform_null_equals", "off");
		set_for_parse("client_min_messages", "error");
	}
	q = wa_pipeline_query_parse_now(def);
	AtEOXact_GUC(true, save_nestlevel);
	return q;
}

WaAggQuery *
wa_pipeline_query_parse(const WaPipelineDef *def)
{
	return parse_under_path(def, def->search_path, false);
}

/* The parse itself, as the owner and security-restricted. */
static WaAggQuery *
parse_as_owner(const WaPipelineDef *def, bool for_reader)
{
	Oid			save_userid;
	int			save_sec_context;
	WaAggQuery *volatile q = NULL;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(def->owner, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		/* the caller's temporary tables come last: they shadow nothing */
		q = parse_under_path(def, psprintf("%s, pg_temp", def->search_path),
							 for_reader);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	return q;
}

WaAggQuery *
wa_pipeline_query_parse_as_owner(const WaPipelineDef *def)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	WaAggQuery *volatile q = NULL;

	if (wa_is_pipeline_owner(def->owner))
		return parse_as_owner(def, false);

	/*
	 * For anyone else an error would quote the owner's query: it is
	 * caught (in a subtransaction, which cleans up after it) and replaced.
	 */
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		q = parse_as_owner(def, true);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		int			category;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
		/* a cancel, a deadlock or a lack of memory is what it is */
		category = ERRCODE_TO_CATEGORY(edata->sqlerrcode);
		if (category == ERRCODE_TRANSACTION_ROLLBACK ||
			category == ERRCODE_INSUFFICIENT_RESOURCES ||
			category == ERRCODE_OPERATOR_INTERVENTION ||
			edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(edata);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the query of pipeline \"%s\" cannot be parsed now", def->name),
				 errhint("The pipeline's owner sees the error in full.")));
	}
	PG_END_TRY();
	return q;
}

bool
wa_is_pipeline_owner(Oid owner)
{
	return has_privs_of_role(GetUserId(), owner);
}

void
wa_check_pipeline_owner(const WaPipelineDef *def)
{
	/* as for any object, the message names no owner */
	if (!wa_is_pipeline_owner(def->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of pipeline \"%s\"", def->name)));
}

WaPipelineDef *
wa_pipeline_lookup(const char *name)
{
	MemoryContext caller = CurrentMemoryContext;
	WaPipelineDef *def;

	wa_require_shared();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the definition must outlive SPI_finish */
	MemoryContextSwitchTo(caller);
	def = wa_catalog_load(0, name);
	SPI_finish();
	MemoryContextSwitchTo(caller);
	if (def == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" does not exist", name)));
	return def;
}

void
wa_pipeline_shape(const WaPipelineDef *def, const WaAggQuery *q, uint8 *shape)
{
	wa_agg_query_shape(q, &def->windows, def->bound, def->lateness, shape);
}
