/*-------------------------------------------------------------------------
 *
 * catalog_pipelines.c
 *	  The statements on windowagg.pipelines: a pipeline's definition.
 *
 * create_pipeline inserts a row, drop_pipeline deletes it, pause and
 * resume change it, a worker loads it and the launcher's discovery lists
 * them all.  Each statement's text sits next to the enum that names its
 * result columns (Anum_..., numbered from 1 as SPI_getbinval counts them)
 * or its parameters (Param_..., numbered from 0 as the values[], nulls[]
 * and argtypes[] arrays count them: $n is Param_... + 1).
 *
 * Every statement runs in the catalog scope of catalog.c (as the catalog's
 * owner, search_path pinned, operators qualified).  What a read returns is
 * allocated in the memory context that was current at the call, which is
 * current again on return: it outlives SPI's.
 *
 * src/pipeline/catalog_pipelines.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* ---------- reading ---------- */

/* The columns wa_catalog_load reads, by their position in its SELECT. */
enum
{
	Anum_load_id = 1,
	Anum_load_name,
	Anum_load_owner,
	Anum_load_query,
	Anum_load_event_time,
	Anum_load_arrival_column,
	Anum_load_windows,
	Anum_load_bound,
	Anum_load_lateness,
	Anum_load_idle_timeout,
	Anum_load_source,
	Anum_load_result_table,
	Anum_load_dead_letter_table,
	Anum_load_live_view,
	Anum_load_enabled,
	Anum_load_search_path,
	Anum_load_logical,
	Anum_load_connection,
	Anum_load_publication,
	Anum_load_remote_schema,
	Anum_load_remote_table,
	Anum_load_dead_letter_changes,
	Anum_load_slot_name,
	Anum_load_time_zone,
	Anum_load_sessions_table,
	Natts_load = Anum_load_sessions_table
};

#define LOAD_COLUMNS \
	"id, name, owner::pg_catalog.oid, query, event_time, arrival_column, " \
	"windows, bound, lateness, idle_timeout, source::pg_catalog.oid, " \
	"result_table::pg_catalog.oid, dead_letter_table::pg_catalog.oid, " \
	"live_view::pg_catalog.oid, enabled, search_path, " \
	"source_kind OPERATOR(pg_catalog.=) 'logical', connection, publication, " \
	"remote_schema, remote_table, dead_letter_changes, slot_name, "

/*
 * Version 0.1.0's windowagg.pipelines has no time_zone column (0.2.0 added
 * it): until ALTER EXTENSION windowagg UPDATE, the library serves those
 * objects, and its pipelines keep 0.1.0's clock, the server's TimeZone.
 */
static bool
pipelines_have_time_zone(void)
{
	return get_attnum(wa_catalog_pipelines_relid(), "time_zone") != InvalidAttrNumber;
}

/*
 * Nor has 0.2.0's a sessions_table column (0.3.0 added it), and no
 * pipeline of those has session windows.
 */
static bool
pipelines_have_sessions_table(void)
{
	return get_attnum(wa_catalog_pipelines_relid(), "sessions_table") != InvalidAttrNumber;
}

static char *
get_text(HeapTuple tup, TupleDesc desc, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

static Datum
get_datum(HeapTuple tup, TupleDesc desc, int col, bool *isnull)
{
	return SPI_getbinval(tup, desc, col, isnull);
}

void
wa_pipeline_check_windows(const WaWindowSet *windows, const char *name)
{
	if (windows->n_sessions == 0)
		return;
	if (windows->n_sessions > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 name != NULL ?
				 errmsg("pipeline \"%s\" has more than one session window, which pipelines do not support yet",
						name) :
				 errmsg("a pipeline cannot have more than one session window yet"),
				 errdetail("A pipeline writes its sessions into one table, where sessions of two gaps could have the same bounds."),
				 errhint("Create one pipeline per session window.")));
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
	if (!OidIsValid(get_extension_oid("windowagg", true)))
		return NULL;
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
	wa_catalog_exec(psprintf("SELECT " LOAD_COLUMNS "%s, %s FROM windowagg.pipelines "
							 "WHERE %s OPERATOR(pg_catalog.=) $1",
							 pipelines_have_time_zone() ? "time_zone" : "NULL::pg_catalog.text",
							 pipelines_have_sessions_table() ?
							 "sessions_table::pg_catalog.oid" : "NULL::pg_catalog.oid",
							 name != NULL ? "name" : "id"),
					1, &argtype, &arg, NULL);
	/* SPI leaves its own context current: the result is the caller's */
	MemoryContextSwitchTo(caller);
	if (SPI_processed == 0)
		return NULL;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	Assert(desc->natts == Natts_load);

	def = palloc0(sizeof(WaPipelineDef));
	def->id = DatumGetInt32(get_datum(tup, desc, Anum_load_id, &isnull));
	def->name = get_text(tup, desc, Anum_load_name);
	def->owner = DatumGetObjectId(get_datum(tup, desc, Anum_load_owner, &isnull));
	def->query = get_text(tup, desc, Anum_load_query);
	def->event_time = get_text(tup, desc, Anum_load_event_time);
	def->arrival_column = get_text(tup, desc, Anum_load_arrival_column);
	d = get_datum(tup, desc, Anum_load_windows, &isnull);
	/* a definition is read as it was made: its worker checks the limits */
	wa_window_set_decode(DatumGetArrayTypePCopy(d), &def->windows);
	/* create_pipeline refuses them; a definition is not to be trusted more */
	wa_pipeline_check_windows(&def->windows, def->name);
	d = get_datum(tup, desc, Anum_load_sessions_table, &isnull);
	def->sessions_table = isnull ? InvalidOid : DatumGetObjectId(d);
	if ((def->windows.n_sessions > 0 && def->windows.n_windows > 0) !=
		OidIsValid(def->sessions_table))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 OidIsValid(def->sessions_table) ?
				 errmsg("pipeline \"%s\" has a sessions table but no session window beside other windows",
						def->name) :
				 errmsg("pipeline \"%s\" has a session window beside other windows but no sessions table",
						def->name),
				 errhint("Drop the pipeline and create it again.")));
	def->bound = DatumGetInt64(get_datum(tup, desc, Anum_load_bound, &isnull));
	def->lateness = DatumGetInt64(get_datum(tup, desc, Anum_load_lateness, &isnull));
	d = get_datum(tup, desc, Anum_load_idle_timeout, &isnull);
	def->has_idle_timeout = !isnull;
	if (!isnull)
		def->idle_timeout_us = wa_interval_to_ticks(DatumGetIntervalP(d),
													"idle_timeout", true);
	def->source = DatumGetObjectId(get_datum(tup, desc, Anum_load_source, &isnull));
	def->result_table = DatumGetObjectId(get_datum(tup, desc, Anum_load_result_table,
												   &isnull));
	def->dead_letter_table = DatumGetObjectId(get_datum(tup, desc,
														Anum_load_dead_letter_table,
														&isnull));
	def->live_view = DatumGetObjectId(get_datum(tup, desc, Anum_load_live_view, &isnull));
	/* a table of its own: no row of a restored dump says otherwise */
	if (OidIsValid(def->sessions_table) &&
		(def->sessions_table == def->result_table ||
		 def->sessions_table == def->dead_letter_table ||
		 def->sessions_table == def->source))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the sessions table of pipeline \"%s\" is also its source, result or dead-letter table",
						def->name),
				 errhint("Drop the pipeline and create it again.")));
	def->enabled = DatumGetBool(get_datum(tup, desc, Anum_load_enabled, &isnull));
	def->search_path = get_text(tup, desc, Anum_load_search_path);
	def->logical = DatumGetBool(get_datum(tup, desc, Anum_load_logical, &isnull));
	def->connection = get_text(tup, desc, Anum_load_connection);
	def->publication = get_text(tup, desc, Anum_load_publication);
	def->remote_schema = get_text(tup, desc, Anum_load_remote_schema);
	def->remote_table = get_text(tup, desc, Anum_load_remote_table);
	def->dead_letter_changes = DatumGetBool(get_datum(tup, desc,
													  Anum_load_dead_letter_changes,
													  &isnull));
	def->slot_name = get_text(tup, desc, Anum_load_slot_name);
	def->time_zone = get_text(tup, desc, Anum_load_time_zone);
	return def;
}

/* The columns wa_catalog_pipeline_list reads, by their position. */
enum
{
	Anum_list_id = 1,
	Anum_list_name,
	Anum_list_owner,
	Anum_list_enabled,
	Anum_list_result_table,
	Natts_list = Anum_list_result_table
};

WaPipelineEntry *
wa_catalog_pipeline_list(uint64 *n)
{
	MemoryContext caller = CurrentMemoryContext;
	WaPipelineEntry *entries;

	wa_catalog_exec("SELECT id, name, owner::pg_catalog.oid, enabled, "
					"result_table::pg_catalog.oid FROM windowagg.pipelines",
					0, NULL, NULL, NULL);
	/* SPI leaves its own context current: the entries are the caller's */
	MemoryContextSwitchTo(caller);
	*n = SPI_processed;
	entries = palloc0(sizeof(WaPipelineEntry) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		Assert(desc->natts == Natts_list);
		entries[i].id = DatumGetInt32(get_datum(tup, desc, Anum_list_id, &isnull));
		entries[i].name = SPI_getvalue(tup, desc, Anum_list_name);
		entries[i].owner = DatumGetObjectId(get_datum(tup, desc, Anum_list_owner,
													  &isnull));
		entries[i].enabled = DatumGetBool(get_datum(tup, desc, Anum_list_enabled,
													&isnull));
		entries[i].result_table = DatumGetObjectId(get_datum(tup, desc,
															 Anum_list_result_table,
															 &isnull));
	}
	return entries;
}

bool
wa_catalog_pipeline_exists(const char *name)
{
	Datum		arg = CStringGetTextDatum(name);
	Oid			argtype = TEXTOID;

	wa_catalog_exec("SELECT 1 FROM windowagg.pipelines WHERE name OPERATOR(pg_catalog.=) $1",
					1, &argtype, &arg, NULL);
	return SPI_processed > 0;
}

/* ---------- writing ---------- */

/* The parameters of wa_catalog_pipeline_insert's statement. */
enum
{
	Param_insert_name = 0,
	Param_insert_owner,
	Param_insert_query,
	Param_insert_event_time,
	Param_insert_arrival_column,
	Param_insert_windows,
	Param_insert_bound,
	Param_insert_lateness,
	Param_insert_idle_timeout,
	Param_insert_source,
	Param_insert_result_table,
	Param_insert_enabled,
	Param_insert_search_path,
	Param_insert_source_kind,
	Param_insert_publication,
	Param_insert_dead_letter_changes,
	Param_insert_connection,
	Param_insert_remote_schema,
	Param_insert_remote_table,
	Param_insert_slot_name,
	Param_insert_time_zone,
	Param_insert_sessions_table,
	Nparams_insert
};

/* Its one result column, the new pipeline's id. */
enum
{
	Anum_insert_id = 1
};

/*
 * The types of its parameters; that of windows is the extension's own
 * array type, which has no fixed OID: the row says which.
 */
static const Oid insert_types[Nparams_insert] = {
	[Param_insert_name] = TEXTOID,
	[Param_insert_owner] = OIDOID,
	[Param_insert_query] = TEXTOID,
	[Param_insert_event_time] = TEXTOID,
	[Param_insert_arrival_column] = TEXTOID,
	[Param_insert_windows] = InvalidOid,
	[Param_insert_bound] = INT8OID,
	[Param_insert_lateness] = INT8OID,
	[Param_insert_idle_timeout] = INTERVALOID,
	[Param_insert_source] = OIDOID,
	[Param_insert_result_table] = TEXTOID,
	[Param_insert_enabled] = BOOLOID,
	[Param_insert_search_path] = TEXTOID,
	[Param_insert_source_kind] = TEXTOID,
	[Param_insert_publication] = TEXTOID,
	[Param_insert_dead_letter_changes] = BOOLOID,
	[Param_insert_connection] = TEXTOID,
	[Param_insert_remote_schema] = TEXTOID,
	[Param_insert_remote_table] = TEXTOID,
	[Param_insert_slot_name] = TEXTOID,
	[Param_insert_time_zone] = TEXTOID,
	[Param_insert_sessions_table] = TEXTOID,
};

/* A text parameter, null where the string is NULL. */
static void
text_param(Datum *values, char *nulls, int param, const char *s)
{
	values[param] = s != NULL ? CStringGetTextDatum(s) : (Datum) 0;
	nulls[param] = s != NULL ? ' ' : 'n';
}

int32
wa_catalog_pipeline_insert(const WaPipelineInsert *row)
{
	Datum		values[Nparams_insert];
	char		nulls[Nparams_insert];
	Oid			types[Nparams_insert];
	bool		isnull;
	bool		has_time_zone;
	bool		has_sessions_table;

	memcpy(types, insert_types, sizeof(types));
	types[Param_insert_windows] = row->windows_type;
	memset(nulls, ' ', sizeof(nulls));
	text_param(values, nulls, Param_insert_name, row->name);
	values[Param_insert_owner] = ObjectIdGetDatum(row->owner);
	text_param(values, nulls, Param_insert_query, row->query);
	text_param(values, nulls, Param_insert_event_time, row->event_time);
	text_param(values, nulls, Param_insert_arrival_column, row->arrival_column);
	values[Param_insert_windows] = row->windows;
	values[Param_insert_bound] = Int64GetDatum(row->bound);
	values[Param_insert_lateness] = Int64GetDatum(row->lateness);
	values[Param_insert_idle_timeout] = row->idle_timeout != NULL ?
		IntervalPGetDatum(row->idle_timeout) : (Datum) 0;
	nulls[Param_insert_idle_timeout] = row->idle_timeout != NULL ? ' ' : 'n';
	values[Param_insert_source] = ObjectIdGetDatum(row->source);
	text_param(values, nulls, Param_insert_result_table, row->result_table);
	values[Param_insert_enabled] = BoolGetDatum(row->enabled);
	text_param(values, nulls, Param_insert_search_path, row->search_path);
	text_param(values, nulls, Param_insert_source_kind, row->source_kind);
	text_param(values, nulls, Param_insert_publication, row->publication);
	values[Param_insert_dead_letter_changes] = BoolGetDatum(row->dead_letter_changes);
	text_param(values, nulls, Param_insert_connection, row->connection);
	text_param(values, nulls, Param_insert_remote_schema, row->remote_schema);
	text_param(values, nulls, Param_insert_remote_table, row->remote_table);
	text_param(values, nulls, Param_insert_slot_name, row->slot_name);
	text_param(values, nulls, Param_insert_time_zone, row->time_zone);
	text_param(values, nulls, Param_insert_sessions_table, row->sessions_table);

	/*
	 * The two tables made with it are named by literals, not parameters;
	 * 0.1.0's table has no time_zone, and $21 then goes unused; 0.2.0's
	 * has no sessions_table (no session windows either), nor $22.
	 */
	has_time_zone = pipelines_have_time_zone();
	has_sessions_table = pipelines_have_sessions_table();
	if (!has_sessions_table && row->sessions_table != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("session windows beside other windows need version 0.3.0 of extension \"windowagg\""),
				 errhint("Run ALTER EXTENSION windowagg UPDATE.")));
	wa_catalog_exec(psprintf("INSERT INTO windowagg.pipelines "
							 "(name, owner, query, event_time, arrival_column, windows, "
							 "bound, lateness, idle_timeout, source, result_table, "
							 "dead_letter_table, live_view, enabled, search_path, "
							 "source_kind, publication, dead_letter_changes, connection, "
							 "remote_schema, remote_table, slot_name%s%s) "
							 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
							 "$11::pg_catalog.regclass, %s::pg_catalog.regclass, "
							 "%s::pg_catalog.regclass, $12, $13, $14, $15, $16, $17, $18, $19, $20%s%s) "
							 "RETURNING id",
							 has_time_zone ? ", time_zone" : "",
							 has_sessions_table ? ", sessions_table" : "",
							 quote_literal_cstr(row->dead_letter_table),
							 quote_literal_cstr(row->live_view),
							 has_time_zone ? ", $21" : "",
							 has_sessions_table ? ", $22::pg_catalog.regclass" : ""),
					Nparams_insert, types, values, nulls);
	return DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   Anum_insert_id, &isnull));
}

/* Lock the row: concurrent drops, pauses and resumes queue up behind it. */
void
wa_catalog_pipeline_lock(int32 id)
{
	wa_catalog_exec_for("SELECT 1 FROM windowagg.pipelines WHERE id OPERATOR(pg_catalog.=) $1 FOR UPDATE",
						id);
}

/* Its progress and checkpoint rows go with it (ON DELETE CASCADE). */
void
wa_catalog_pipeline_delete(int32 id)
{
	wa_catalog_exec_for("DELETE FROM windowagg.pipelines WHERE id OPERATOR(pg_catalog.=) $1",
						id);
}

void
wa_catalog_pipeline_set_owner(int32 id, Oid owner)
{
	wa_catalog_set_for("UPDATE windowagg.pipelines SET owner = $2::pg_catalog.regrole "
					   "WHERE id OPERATOR(pg_catalog.=) $1",
					   id, OIDOID, ObjectIdGetDatum(owner));
}

void
wa_catalog_pipeline_set_enabled(int32 id, bool enabled)
{
	wa_catalog_set_for("UPDATE windowagg.pipelines SET enabled = $2 WHERE id OPERATOR(pg_catalog.=) $1",
					   id, BOOLOID, BoolGetDatum(enabled));
}
