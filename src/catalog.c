/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Read and write windowagg's catalog tables (windowagg.pipelines,
 *	  pipeline_progress, slices).
 *
 * The tables belong to the extension's owner.  Backends changing a
 * pipeline and workers checkpointing one write them through
 * wa_catalog_exec, which switches to the bootstrap superuser for the one
 * statement, the way PostgreSQL's own maintenance code switches user for
 * internal work; everything else a worker does (reading the source,
 * writing the result tables) runs as the pipeline's owner.
 *
 * src/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "nodes/makefuncs.h"

/* Run fn(arg) as the bootstrap superuser, restoring the user on error. */
static int
as_superuser(int (*fn) (void *arg), void *arg)
{
	Oid			save_userid;
	int			save_sec_context;
	volatile int ret = 0;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		ret = fn(arg);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	return ret;
}

typedef struct CatalogStatement
{
	const char *sql;
	SPIPlanPtr	plan;
	int			nargs;
	Oid		   *argtypes;
	Datum	   *values;
	const char *nulls;
} CatalogStatement;

static int
run_statement(void *arg)
{
	CatalogStatement *st = arg;

	if (st->plan != NULL)
		return SPI_execute_plan(st->plan, st->values, st->nulls, false, 0);
	return SPI_execute_with_args(st->sql, st->nargs, st->argtypes, st->values,
								 st->nulls, false, 0);
}

int
wa_catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *values,
				const char *nulls)
{
	CatalogStatement st = {sql, NULL, nargs, argtypes, values, nulls};
	int			ret = as_superuser(run_statement, &st);

	if (ret < 0)
		elog(ERROR, "windowagg catalog statement failed: %s",
			 SPI_result_code_string(ret));
	return ret;
}

int
wa_catalog_execute_plan(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	CatalogStatement st = {NULL, plan, 0, NULL, values, nulls};

	return as_superuser(run_statement, &st);
}


static char *
get_text(HeapTuple tup, TupleDesc desc, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(tup, desc, col, isnull);

	return *isnull ? NULL : TextDatumGetCString(d);
}

WaPipelineDef *
wa_catalog_load(int32 id, const char *name)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		arg;
	Oid			argtype;
	HeapTuple	tup;
	TupleDesc	desc;
	WaPipelineDef *def;
	bool		isnull;
	Datum		d;

	/* after DROP EXTENSION, every pipeline of the database is gone */
	if (SPI_execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'windowagg'",
					true, 0) != SPI_OK_SELECT || SPI_processed == 0)
	{
		MemoryContextSwitchTo(caller);
		return NULL;
	}
	if (name != NULL)
	{
		arg = CStringGetTextDatum(name);
		argtype = TEXTOID;
	}
	else
	{
		arg = Int32GetDatum(id);
		argtype = INT4OID;
	}
	wa_catalog_exec(psprintf("SELECT id, name, owner::oid, query, event_time, arrival_column, "
							 "windows, bound, lateness, idle_timeout, source::oid, "
							 "result_table::oid, dead_letter_table::oid, live_view::oid, enabled, "
							 "search_path, source_kind = 'logical', connection, publication, "
							 "remote_schema, remote_table, dead_letter_changes, slot_name "
							 "FROM windowagg.pipelines WHERE %s = $1",
							 name != NULL ? "name" : "id"),
					1, &argtype, &arg, NULL);
	/* SPI leaves its own context current: the result is the caller's */
	MemoryContextSwitchTo(caller);
	if (SPI_processed == 0)
		return NULL;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;

	def = palloc0(sizeof(WaPipelineDef));
	def->id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	def->name = get_text(tup, desc, 2, &isnull);
	def->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
	def->query = get_text(tup, desc, 4, &isnull);
	def->event_time = get_text(tup, desc, 5, &isnull);
	def->arrival_column = get_text(tup, desc, 6, &isnull);
	d = SPI_getbinval(tup, desc, 7, &isnull);
	wa_window_set_from_array(DatumGetArrayTypePCopy(d), &def->windows);
	def->bound = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
	def->lateness = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	d = SPI_getbinval(tup, desc, 10, &isnull);
	def->has_idle_timeout = !isnull;
	if (!isnull)
		def->idle_timeout_us = wa_interval_to_ticks(DatumGetIntervalP(d),
													"idle_timeout", true);
	def->source = DatumGetObjectId(SPI_getbinval(tup, desc, 11, &isnull));
	def->result_table = DatumGetObjectId(SPI_getbinval(tup, desc, 12, &isnull));
	def->dead_letter_table = DatumGetObjectId(SPI_getbinval(tup, desc, 13, &isnull));
	def->live_view = DatumGetObjectId(SPI_getbinval(tup, desc, 14, &isnull));
	def->enabled = DatumGetBool(SPI_getbinval(tup, desc, 15, &isnull));
	def->search_path = get_text(tup, desc, 16, &isnull);
	def->logical = DatumGetBool(SPI_getbinval(tup, desc, 17, &isnull));
	def->connection = get_text(tup, desc, 18, &isnull);
	def->publication = get_text(tup, desc, 19, &isnull);
	def->remote_schema = get_text(tup, desc, 20, &isnull);
	def->remote_table = get_text(tup, desc, 21, &isnull);
	def->dead_letter_changes = DatumGetBool(SPI_getbinval(tup, desc, 22, &isnull));
	def->slot_name = get_text(tup, desc, 23, &isnull);
	return def;
}

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

WaAggQuery *
wa_pipeline_query_parse(const WaPipelineDef *def)
{
	int			save_nestlevel = NewGUCNestLevel();
	WaAggQuery *q;

	(void) set_config_option("search_path", def->search_path,
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	q = wa_pipeline_query_parse_now(def);
	AtEOXact_GUC(true, save_nestlevel);
	return q;
}

void
wa_check_pipeline_owner(const WaPipelineDef *def)
{
	if (!has_privs_of_role(GetUserId(), def->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of pipeline \"%s\"", def->name),
				 errdetail("The pipeline belongs to role \"%s\".",
						   GetUserNameFromId(def->owner, false))));
}
