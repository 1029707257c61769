/*-------------------------------------------------------------------------
 *
 * pipeline_ddl.c
 *	  windowagg.create_pipeline, drop_pipeline, pause and resume.
 *
 * create_pipeline validates everything a worker will rely on before it
 * commits: the aggregate query (parsed as the caller, so the caller must
 * be able to read the source), the windows, bound and lateness, and the
 * arrival column that orders the source's rows.  It then creates, as the
 * caller, the result table, the dead-letter table and the live view, and
 * registers the pipeline; the worker starts when the transaction commits.
 *
 * The arrival column must be filled by a sequence that hands out numbers
 * in time order (an identity or serial column with CACHE 1), and indexed,
 * because the worker finds new rows as "arrival number > the highest one
 * consumed" and recognises the numbers of rows that have not committed yet
 * as gaps (see table.c).
 *
 * A logical source needs no arrival column.  For a table on another
 * server, create_pipeline makes a local stand-in from its definition there
 * (trusting nothing that server sends: column types are built-in types
 * known by OID here, names are quoted).  A local source's slot is made
 * before anything is written (see link.c), and only for an owner
 * that may use replication slots and read the table whole.
 *
 * The tables are created as the caller, under search_path "pg_catalog,
 * pg_temp", so that every type name in their definitions is qualified
 * unless it is a built-in one.
 *
 * src/commands/pipeline_ddl.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"
#include "source/logical/logical.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "catalog/namespace.h"
#include "executor/executor.h"
#include "utils/tuplestore.h"
#include "commands/trigger.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "access/transam.h"
#include "pgtime.h"

PG_FUNCTION_INFO_V1(wa_create_pipeline);
PG_FUNCTION_INFO_V1(wa_drop_pipeline);
PG_FUNCTION_INFO_V1(wa_pause_pipeline);
PG_FUNCTION_INFO_V1(wa_resume_pipeline);
PG_FUNCTION_INFO_V1(wa_pipeline_inserted);

/*
 * The owner whose per-role and per-database limits the catalog insert of
 * the create_pipeline running now must respect (InvalidOid otherwise: a
 * superuser's, or a row pg_restore inserts).  The insert's trigger claims
 * the slot, within those limits.
 */
static Oid	claim_within_limits_of = InvalidOid;

/*
 * The arguments of windowagg.create_pipeline, by position (see its
 * CREATE FUNCTION in sql/windowagg--0.2.0.sql).
 */
enum
{
	Arg_create_name = 0,
	Arg_create_query,
	Arg_create_event_time,
	Arg_create_windows,
	Arg_create_bound,
	Arg_create_lateness,
	Arg_create_result_table,
	Arg_create_arrival_column,
	Arg_create_idle_timeout,
	Arg_create_enabled,
	Arg_create_source,
	Arg_create_connection,
	Arg_create_publication,
	Arg_create_dead_letter_changes,
	Nargs_create
};

/* ---------- the arrival column ---------- */

/* The identity/serial column of the source, if it has exactly one. */
static char *
detect_arrival_column(Oid relid, const char *relname)
{
	Datum		arg = ObjectIdGetDatum(relid);
	Oid			argtype = OIDOID;
	int			ret;

	ret = SPI_execute_with_args("SELECT a.attname::pg_catalog.text FROM pg_catalog.pg_attribute a "
								"WHERE a.attrelid OPERATOR(pg_catalog.=) $1 "
								"AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped "
								"AND pg_catalog.pg_get_serial_sequence($1::pg_catalog.regclass::pg_catalog.text, "
								"a.attname::pg_catalog.text) IS NOT NULL "
								"ORDER BY a.attnum",
								1, &argtype, &arg, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look up identity columns: %s",
			 SPI_result_code_string(ret));
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot choose an arrival column for \"%s\"", relname),
				 errdetail("The table has %llu identity or serial columns; a pipeline needs one that numbers rows as they are inserted.",
						   (unsigned long long) SPI_processed),
				 errhint("Add one, for example ALTER TABLE %s ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY, or name it with arrival_column.",
						 quote_identifier(relname))));
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/*
 * Arrival numbers must come from a sequence with CACHE 1, so that numbers
 * are handed out in time order across sessions, and must be indexed.
 */
static void
check_arrival_column(Oid relid, const char *relname, const char *column)
{
	Datum		args[2];
	Oid			argtypes[2] = {OIDOID, TEXTOID};
	bool		isnull;
	int64		cache;
	int			ret;

	args[0] = ObjectIdGetDatum(relid);
	args[1] = CStringGetTextDatum(column);
	ret = SPI_execute_with_args("SELECT s.seqcache FROM pg_catalog.pg_sequence s "
								"WHERE s.seqrelid OPERATOR(pg_catalog.=) "
								"pg_catalog.pg_get_serial_sequence($1::pg_catalog.regclass::pg_catalog.text, $2)"
								"::pg_catalog.regclass",
								2, argtypes, args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look up the arrival sequence: %s",
			 SPI_result_code_string(ret));
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrival column \"%s\" of \"%s\" is not an identity or serial column",
						column, relname),
				 errdetail("Rows are read in the order a sequence numbers them as they are inserted."),
				 errhint("Use a column declared GENERATED ALWAYS AS IDENTITY or bigserial.")));
	cache = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										SPI_tuptable->tupdesc, 1, &isnull));
	if (cache != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the sequence of arrival column \"%s\" caches %lld values",
						column, (long long) cache),
				 errdetail("With a cache, sessions hand out numbers out of time order, and a row could be taken for a gap forever."),
				 errhint("Run ALTER SEQUENCE ... CACHE 1 on pg_get_serial_sequence('%s', '%s').",
						 relname, column)));

	ret = SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_index i "
								"JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) i.indrelid "
								"AND a.attnum OPERATOR(pg_catalog.=) i.indkey[0] "
								"WHERE i.indrelid OPERATOR(pg_catalog.=) $1 "
								"AND a.attname OPERATOR(pg_catalog.=) $2::pg_catalog.name "
								"AND i.indpred IS NULL AND i.indisvalid",
								2, argtypes, args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look up indexes: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrival column \"%s\" of \"%s\" has no index", column, relname),
				 errdetail("The pipeline reads new rows by arrival number many times a second."),
				 errhint("CREATE INDEX ON %s (%s);", quote_identifier(relname),
						 quote_identifier(column))));
}

/* ---------- the tables a pipeline writes ---------- */

typedef struct ResultNames
{
	const char *schema;			/* quoted */
	const char *result;			/* quoted, unqualified */
	const char *dead_letters;
	const char *live;
	const char *source;			/* a remote source's local stand-in */
	const char *sessions;		/* a session window's beside others, or
								 * NULL */
} ResultNames;

static const char *
suffixed_name(const char *base, const char *suffix)
{
	char	   *name = psprintf("%s%s", base, suffix);

	if (strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("result table name \"%s\" is too long to add \"%s\"",
						base, suffix),
				 errhint("Choose a result_table of at most %d characters.",
						 (int) (NAMEDATALEN - 1 - strlen(suffix)))));
	return quote_identifier(name);
}

/* with_sessions: a session window beside others needs a table of its own */
static void
resolve_result_names(const char *result_table, bool with_sessions,
					 ResultNames *names)
{
	List	   *qualified = wa_string_to_qualified_name_list(result_table);
	RangeVar   *rv = makeRangeVarFromNameList(qualified);
	Oid			nspid = RangeVarGetCreationNamespace(rv);

	if (isAnyTempNamespace(nspid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pipeline's result table cannot be a temporary table"),
				 errdetail("A temporary table belongs to the session that makes it; the pipeline's worker could not write it."),
				 errhint("Name a result_table in a schema that is not temporary.")));
	names->schema = quote_identifier(get_namespace_name(nspid));
	names->result = quote_identifier(rv->relname);
	names->dead_letters = suffixed_name(rv->relname, "_dead_letters");
	names->live = suffixed_name(rv->relname, "_live");
	names->source = suffixed_name(rv->relname, "_source");
	names->sessions = with_sessions ? suffixed_name(rv->relname, "_sessions") : NULL;
}

static void
spi_exec_ddl(const char *sql)
{
	int			ret = SPI_execute(sql, false, 0);

	if (ret < 0)
		elog(ERROR, "could not run \"%s\": %s", sql,
			 SPI_result_code_string(ret));
}

static const char *
window_type_name(const WaAggQuery *q)
{
	return q->domain == WA_TIME_INTEGER ? "bigint" :
		format_type_be(q->event_time_type);
}

/* keys and aggregates with their types; live views end there */
static void
append_value_columns(StringInfo sql, const WaAggQuery *q, bool with_types)
{
	for (int i = 0; i < q->n_keys; i++)
	{
		appendStringInfo(sql, "%s", quote_identifier(q->keys[i].name));
		if (with_types)
			appendStringInfo(sql, " %s",
							 format_type_with_typemod(q->keys[i].typid,
													  q->keys[i].typmod));
		appendStringInfoString(sql, ", ");
	}
	appendStringInfo(sql, "window_start%s%s, window_end%s%s",
					 with_types ? " " : "", with_types ? window_type_name(q) : "",
					 with_types ? " " : "", with_types ? window_type_name(q) : "");
	for (int i = 0; i < q->n_outputs; i++)
	{
		appendStringInfo(sql, ", %s", quote_identifier(q->outputs[i].name));
		if (with_types)
			appendStringInfo(sql, " %s",
							 format_type_with_typemod(q->outputs[i].type,
													  q->outputs[i].typmod));
	}
}

static void
create_result_tables(const char *pipeline, const WaAggQuery *q,
					 const ResultNames *names, bool logical)
{
	StringInfoData sql;
	bool		keys_not_null = true;
	int			nest = wa_pin_search_path();

	for (int i = 0; i < q->n_keys; i++)
		keys_not_null &= q->keys[i].notnull;

	/*
	 * results: one row per (keys, window), upserted; the sessions of a
	 * session window beside other windows in a table of the same columns
	 * (a session may have the bounds of another window's row)
	 */
	initStringInfo(&sql);
	for (int t = 0; t < (names->sessions != NULL ? 2 : 1); t++)
	{
		resetStringInfo(&sql);
		appendStringInfo(&sql, "CREATE TABLE %s.%s (", names->schema,
						 t == 0 ? names->result : names->sessions);
		append_value_columns(&sql, q, true);
		appendStringInfoString(&sql,
							   ", pane text NOT NULL CHECK (pane IN ('on_time', 'late'))"
							   ", revision bigint NOT NULL"
							   ", updated_at timestamptz NOT NULL, ");
		/* a NULL key is a group of its own, as in GROUP BY */
		appendStringInfoString(&sql, keys_not_null ? "PRIMARY KEY (" :
							   "UNIQUE NULLS NOT DISTINCT (");
		for (int i = 0; i < q->n_keys; i++)
			appendStringInfo(&sql, "%s, ", quote_identifier(q->keys[i].name));
		appendStringInfoString(&sql, "window_start, window_end))");
		spi_exec_ddl(sql.data);
	}

	/* dead letters: too-late events, by arrival number or commit LSN */
	resetStringInfo(&sql);
	appendStringInfo(&sql,
					 "CREATE TABLE %s.%s (%s, "
					 "event_time %s, reason text NOT NULL, watermark %s, "
					 "source_row jsonb NOT NULL, "
					 "recorded_at timestamptz NOT NULL DEFAULT pg_catalog.now())",
					 names->schema, names->dead_letters,
					 logical ? "commit_lsn pg_lsn NOT NULL" : "arrival bigint PRIMARY KEY",
					 format_type_be(q->event_time_type), window_type_name(q));
	spi_exec_ddl(sql.data);

	/* live: the windows that have not fired yet */
	resetStringInfo(&sql);
	appendStringInfo(&sql, "CREATE VIEW %s.%s AS SELECT * FROM windowagg.live(%s) AS l(",
					 names->schema, names->live, quote_literal_cstr(pipeline));
	append_value_columns(&sql, q, true);
	appendStringInfoString(&sql, ")");
	spi_exec_ddl(sql.data);
	wa_unpin_search_path(nest);
}

/* ---------- logical sources ---------- */

static void
check_logical_arguments(FunctionCallInfo fcinfo)
{
	if (wal_level < WAL_LEVEL_LOGICAL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a logical source needs wal_level = logical"),
				 errhint("Set wal_level = logical and restart the server.")));
	if (!PG_ARGISNULL(Arg_create_arrival_column))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrival_column applies to source => 'table' only"),
				 errdetail("A logical source is read in commit order from its replication slot.")));
	if (!PG_ARGISNULL(Arg_create_connection) && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to create a pipeline with a connection"),
				 errdetail("As for CREATE SUBSCRIPTION, the connection string reaches another server with its own credentials.")));
	if (PG_ARGISNULL(Arg_create_connection) != PG_ARGISNULL(Arg_create_publication))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("connection and publication go together"),
				 errdetail("A table on another server is read through a publication there; a table of this server needs neither.")));
}

/*
 * A remote source: read the table's definition on the source server (and
 * check that the publication publishes it), then create a local stand-in
 * table with the same columns, never written, that the query is parsed
 * against and the worker decodes rows into.  Returns the stand-in.
 */
static RangeVar *
create_stand_in(const char *connection, const char *publication,
				const char *query, const char *stand_in_name,
				char **remote_schema, char **remote_table)
{
	RangeVar   *written = wa_agg_query_source_name(query);
	WalReceiverConn *conn;
	Oid			types[6] = {TEXTOID, TEXTOID, TEXTOID, OIDOID, INT4OID, BOOLOID};
	WalRcvExecResult *volatile res = NULL;
	TupleTableSlot *slot;
	StringInfoData sql;
	List	   *qualified = wa_string_to_qualified_name_list(stand_in_name);
	RangeVar   *stand_in = makeRangeVarFromNameList(qualified);
	int			ncols = 0;
	int			nest;
	/* replication connections run with an empty search_path */
	const char *remote_name =
		quote_qualified_identifier(written->schemaname ? written->schemaname : "public",
								   written->relname);

	conn = wa_logical_connect(connection, "windowagg");
	PG_TRY();
	{
		res = wa_logical_exec(conn,
							  psprintf("SELECT n.nspname, c.relname, a.attname, a.atttypid, a.atttypmod, "
									   "EXISTS (SELECT 1 FROM pg_catalog.pg_publication_tables t "
									   "WHERE t.pubname OPERATOR(pg_catalog.=) %s "
									   "AND t.schemaname OPERATOR(pg_catalog.=) n.nspname "
									   "AND t.tablename OPERATOR(pg_catalog.=) c.relname) "
									   "FROM pg_catalog.pg_class c "
									   "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
									   "JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid "
									   "AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped "
									   "WHERE c.oid OPERATOR(pg_catalog.=) %s::pg_catalog.regclass ORDER BY a.attnum",
									   quote_literal_cstr(publication),
									   quote_literal_cstr(remote_name)),
							  6, types);
	}
	PG_FINALLY();
	{
		walrcv_disconnect(conn);
	}
	PG_END_TRY();
	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (",
					 quote_qualified_identifier(stand_in->schemaname ?
												stand_in->schemaname :
												get_namespace_name(RangeVarGetCreationNamespace(stand_in)),
												stand_in->relname));
	/*
	 * Whatever the source server sends is untrusted text: names are quoted,
	 * and a type is taken only as the OID of a built-in type, which this
	 * server names itself.
	 */
	nest = wa_pin_search_path();
	slot = MakeSingleTupleTableSlot(res->tupledesc, &TTSOpsMinimalTuple);
	while (tuplestore_gettupleslot(res->tuplestore, true, false, slot))
	{
		bool		isnull[6];
		Datum		v[6];
		char	   *column;
		Oid			typid;

		for (int i = 0; i < 6; i++)
			v[i] = slot_getattr(slot, i + 1, &isnull[i]);
		for (int i = 0; i < 6; i++)
			if (isnull[i])
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("the source server described table %s with a null", remote_name)));
		*remote_schema = TextDatumGetCString(v[0]);
		*remote_table = TextDatumGetCString(v[1]);
		column = TextDatumGetCString(v[2]);
		typid = DatumGetObjectId(v[3]);
		if (!DatumGetBool(v[5]))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("publication \"%s\" does not publish \"%s.%s\" on the source server",
							publication, *remote_schema, *remote_table)));
		if (typid >= FirstGenbkiObjectId ||
			!SearchSysCacheExists1(TYPEOID, ObjectIdGetDatum(typid)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of table %s on the source server is not of a built-in type",
							column, remote_name),
					 errdetail("Its type has OID %u there; a remote source's columns must be of types both servers know by the same OID.",
							   typid)));
		appendStringInfo(&sql, "%s%s %s", ncols++ > 0 ? ", " : "",
						 quote_identifier(column),
						 format_type_with_typemod(typid, DatumGetInt32(v[4])));
	}
	ExecDropSingleTupleTableSlot(slot);
	walrcv_clear_result(res);
	if (ncols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table %s has no columns on the source server", remote_name)));
	appendStringInfoChar(&sql, ')');
	/* as the caller: CREATE on the schema is checked */
	spi_exec_ddl(sql.data);
	wa_unpin_search_path(nest);
	CommandCounterIncrement();
	return stand_in;
}

/* ---------- create_pipeline ---------- */

/*
 * create_pipeline(name, query, event_time, windows, bound, lateness,
 *				   result_table, arrival_column, idle_timeout, enabled,
 *				   source, connection, publication, dead_letter_changes):
 * the positions are the Arg_create_... above.
 */
Datum
wa_create_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *query;
	char	   *event_time;
	char	   *arrival;
	char	   *result_table;
	WaAggQuery *q;
	WaWindowSet windows;
	int64		bound;
	int64		lateness;
	ResultNames names;
	Oid			result_oid;
	WaPipelineInsert row;
	char	   *slot_name;
	char	   *source_kind;
	char	   *publication;
	char	   *connection;
	char	   *remote_schema = NULL;
	char	   *remote_table = NULL;
	bool		logical;
	bool		dead_letter_changes;
	int32		id;

	wa_require_shared();
	for (int i = Arg_create_name; i <= Arg_create_windows; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null",
							i == Arg_create_name ? "name" :
							i == Arg_create_query ? "query" :
							i == Arg_create_event_time ? "event_time" : "windows")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_name));
	query = text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_query));
	event_time = text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_event_time));
	if (name[0] == '\0' || strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("pipeline name must have 1 to %d characters", NAMEDATALEN - 1)));
	result_table = PG_ARGISNULL(Arg_create_result_table) ? name :
		text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_result_table));
	if (!PG_ARGISNULL(Arg_create_idle_timeout) &&
		wa_interval_to_ticks(PG_GETARG_INTERVAL_P(Arg_create_idle_timeout),
							 "idle_timeout", false) <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idle_timeout must be positive")));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	source_kind = PG_ARGISNULL(Arg_create_source) ? "table" :
		text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_source));
	logical = strcmp(source_kind, "logical") == 0;
	if (!logical && strcmp(source_kind, "table") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source must be 'table' or 'logical', not \"%s\"", source_kind)));
	publication = PG_ARGISNULL(Arg_create_publication) ? NULL :
		text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_publication));
	connection = PG_ARGISNULL(Arg_create_connection) ? NULL :
		text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_connection));
	dead_letter_changes = !PG_ARGISNULL(Arg_create_dead_letter_changes) &&
		PG_GETARG_BOOL(Arg_create_dead_letter_changes);
	if (!superuser())
		wa_check_pipeline_limits(MyDatabaseId, GetUserId());
	if (logical)
		check_logical_arguments(fcinfo);
	else if (connection != NULL || publication != NULL || dead_letter_changes)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("connection, publication and dead_letter_changes need source => 'logical'")));

	/* the query, as the caller: SELECT privilege on the source is checked */
	if (connection != NULL)
	{
		resolve_result_names(result_table, false, &names);
		q = wa_agg_query_parse_as(query, event_time,
								  create_stand_in(connection, publication, query,
												  psprintf("%s.%s", names.schema, names.source),
												  &remote_schema, &remote_table));
	}
	else
		q = wa_agg_query_parse(query, event_time, NULL, NULL);
	if (get_rel_relkind(q->relid) != RELKIND_RELATION &&
		get_rel_relkind(q->relid) != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("pipeline source \"%s\" is not a table", q->relname),
				 errdetail("A pipeline tails a table that events are inserted into.")));
	if (get_rel_persistence(q->relid) == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("pipeline source \"%s\" is a temporary table", q->relname),
				 errdetail("A temporary table belongs to the session that makes it; the pipeline's worker could not read it.")));
	arrival = NULL;
	if (!logical)
	{
		arrival = PG_ARGISNULL(Arg_create_arrival_column) ?
			detect_arrival_column(q->relid, q->relname) :
			text_to_cstring(PG_GETARG_TEXT_PP(Arg_create_arrival_column));
		q = wa_agg_query_parse(query, event_time, NULL, arrival);
		check_arrival_column(q->relid, q->relname, arrival);
	}
	/* every generic state can go into a checkpoint */
	wa_generic_check_portable(q);
	/* the caller will own it, and its worker will run this code as the caller */
	wa_agg_query_check_code_owners(q, GetUserId(), name);
	/* a logical source must be the caller's to read */
	if (logical)
		wa_logical_check_source(q->relid, GetUserId(), connection == NULL, q);
	for (int i = 0; i < q->n_keys; i++)
		if (type_is_array(q->keys[i].typid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("GROUP BY key \"%s\" of array type %s is not supported in pipelines",
							q->keys[i].name, format_type_be(q->keys[i].typid))));

	wa_window_set_from_array(PG_GETARG_ARRAYTYPE_P(Arg_create_windows), &windows);
	wa_window_set_check_domain(&windows, q);
	wa_pipeline_check_windows(&windows, NULL);
	bound = wa_duration_arg(fcinfo, Arg_create_bound, "bound", q->domain);
	lateness = wa_duration_arg(fcinfo, Arg_create_lateness, "lateness", q->domain);
	if (!PG_ARGISNULL(Arg_create_idle_timeout) && q->domain != WA_TIME_TIMESTAMP)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idle_timeout needs a timestamp event time"),
				 errdetail("The watermark follows the wall clock when the source is idle, and integer event times have no clock.")));

	/* before creating tables named after it */
	if (wa_catalog_pipeline_exists(name))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("pipeline \"%s\" already exists", name)));

	/*
	 * A local source's slot, before anything is written (see
	 * link.c); kept if this transaction commits.  A remote
	 * source's worker creates its own.
	 */
	slot_name = logical ? wa_logical_new_slot_name(connection != NULL) : NULL;
	if (logical && connection == NULL)
	{
		(void) wa_logical_create_local_slot(slot_name, true);
		wa_request_slot_at_commit(slot_name, true);
	}

	/* the tables, as the caller: CREATE on the schema is checked */
	resolve_result_names(result_table,
						 windows.n_sessions > 0 && windows.n_windows > 0, &names);
	create_result_tables(name, q, &names, logical);
	CommandCounterIncrement();
	/* DROP refuses the aggregates and functions its results come from */
	result_oid = DatumGetObjectId(DirectFunctionCall1(regclassin,
													  CStringGetDatum(psprintf("%s.%s", names.schema, names.result))));
	wa_record_code_dependencies(q, result_oid);

	/* the catalog row */
	row.name = name;
	row.owner = GetUserId();
	row.query = query;
	row.event_time = event_time;
	row.arrival_column = arrival;
	row.windows = PG_GETARG_DATUM(Arg_create_windows);
	row.windows_type = get_fn_expr_argtype(fcinfo->flinfo, Arg_create_windows);
	row.bound = bound;
	row.lateness = lateness;
	row.idle_timeout = PG_ARGISNULL(Arg_create_idle_timeout) ? NULL :
		PG_GETARG_INTERVAL_P(Arg_create_idle_timeout);
	row.source = q->relid;
	row.result_table = psprintf("%s.%s", names.schema, names.result);
	row.dead_letter_table = psprintf("%s.%s", names.schema, names.dead_letters);
	row.live_view = psprintf("%s.%s", names.schema, names.live);
	row.sessions_table = names.sessions == NULL ? NULL :
		psprintf("%s.%s", names.schema, names.sessions);
	row.enabled = PG_ARGISNULL(Arg_create_enabled) ? true :
		PG_GETARG_BOOL(Arg_create_enabled);
	/* names in the query resolve later as they did now */
	row.search_path = pstrdup(namespace_search_path);
	row.source_kind = source_kind;
	row.publication = publication;
	row.dead_letter_changes = dead_letter_changes;
	row.connection = connection;
	row.remote_schema = remote_schema;
	row.remote_table = remote_table;
	row.slot_name = slot_name;
	/* the wall clock of event times without a time zone */
	row.time_zone = pg_get_timezone_name(session_timezone);
	claim_within_limits_of = superuser() ? InvalidOid : GetUserId();
	PG_TRY();
	{
		id = wa_catalog_pipeline_insert(&row);
	}
	PG_CATCH();
	{
		claim_within_limits_of = InvalidOid;
		if (geterrcode() == ERRCODE_UNIQUE_VIOLATION)
		{
			FlushErrorState();
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("pipeline \"%s\" already exists", name)));
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	claim_within_limits_of = InvalidOid;
	wa_catalog_progress_insert(id);
	SPI_finish();

	/* the insert's trigger (wa_pipeline_inserted) claimed the slot */
	PG_RETURN_INT32(id);
}

/* ---------- drop, pause, resume ---------- */

static WaPipelineDef *
lookup_pipeline(const char *name)
{
	WaPipelineDef *def;

	wa_require_shared();
	def = wa_catalog_load(0, name);
	if (def == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" does not exist", name)));
	return def;
}

static WaPipelineDef *
lookup_owned_pipeline(const char *name)
{
	WaPipelineDef *def = lookup_pipeline(name);

	wa_check_pipeline_owner(def);
	return def;
}

/* The pipeline's slot; created pipelines always have one while it runs. */
static WaPipelineSlot *
pipeline_slot(const WaPipelineDef *def)
{
	WaPipelineSlot *slot = wa_slot_find_id(MyDatabaseId, def->id);

	if (slot == NULL)
		slot = wa_slot_claim(MyDatabaseId, def->id, def->owner, def->name,
							 def->result_table, false);
	return slot;
}

/* DROP a relation of the pipeline, as the caller, unless it is gone. */
static void
drop_relation(const char *kind, Oid relid)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		return;
	spi_exec_ddl(psprintf("DROP %s %s.%s", kind,
						  quote_identifier(get_namespace_name(get_rel_namespace(relid))),
						  quote_identifier(relname)));
}

Datum
wa_drop_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		drop_tables = PG_GETARG_BOOL(1);
	WaPipelineDef *def;

	MemoryContext caller = CurrentMemoryContext;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the definition outlives SPI_finish */
	MemoryContextSwitchTo(caller);
	def = lookup_owned_pipeline(name);

	/*
	 * The worker leaves first, before this transaction locks anything: an
	 * epoch in flight would otherwise wait for the catalog row this drop
	 * deletes while holding locks on the tables it drops (a deadlock), and
	 * a logical worker must let go of its slot before it is dropped.
	 */
	wa_hold_worker(pipeline_slot(def), def->name);
	/* the row lock makes concurrent drops, pauses and resumes queue up */
	wa_catalog_pipeline_lock(def->id);
	/* the catalog row first: the tables are the pipeline's no longer */
	wa_catalog_pipeline_delete(def->id);
	drop_relation("VIEW", def->live_view);
	if (drop_tables && def->connection != NULL)
		drop_relation("TABLE", def->source);	/* the stand-in */
	if (drop_tables)
	{
		drop_relation("TABLE", def->result_table);
		if (OidIsValid(def->sessions_table))
			drop_relation("TABLE", def->sessions_table);
		drop_relation("TABLE", def->dead_letter_table);
	}
	else
		wa_forget_code_dependencies(def->result_table);
	SPI_finish();
	wa_request_at_commit(pipeline_slot(def), WA_REQUEST_DROP);
	/* the slot goes once the worker is gone (wa_hold_worker, above) */
	if (def->logical && def->connection != NULL)
		wa_logical_drop_remote_slot(def->connection, def->slot_name);
	else if (def->logical)
		wa_request_slot_at_commit(def->slot_name, false);
	PG_RETURN_VOID();
}

/*
 * Resuming a pipeline whose result table changed hands takes it over: the
 * table's new owner (or a member of it) consents to run its query; its
 * sessions table, if it has one, must have changed hands with it.  The
 * worker refuses to run it as anyone else (worker.c).  A superuser's
 * resume consents for no other role: it only restarts the pipeline, which
 * stops again until that role resumes it.  The slot learns the new owner
 * when the worker starts (wa_slot_admit), after this commits.
 */
static bool
take_over(WaPipelineDef *def)
{
	Oid			owner = wa_relation_owner(def->result_table);

	if (!OidIsValid(owner) || owner == def->owner || !has_privs_of_role(GetUserId(), owner) ||
		(superuser() && GetUserId() != owner))
		return false;
	/* the worker writes both as one role (worker.c, check_owner) */
	if (OidIsValid(def->sessions_table) &&
		wa_relation_owner(def->sessions_table) != owner)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the result table and the sessions table of pipeline \"%s\" belong to different roles",
						def->name),
				 errdetail("A pipeline writes both with the rights of one role, its owner."),
				 errhint("Give table %s to role \"%s\" as well, then resume the pipeline.",
						 get_rel_name(def->sessions_table),
						 GetUserNameFromId(owner, false))));

	/*
	 * Consent covers the query, not the old owner's functions it calls:
	 * those stay theirs to replace.  Parsed as the new owner.
	 */
	def->owner = owner;
	wa_agg_query_check_code_owners(wa_pipeline_query_parse_as_owner(def), owner,
								   def->name);
	wa_catalog_pipeline_set_owner(def->id, owner);
	ereport(NOTICE,
			(errmsg("pipeline \"%s\" now belongs to role \"%s\", the owner of its result table",
					def->name, GetUserNameFromId(owner, false))));
	def->owner = owner;
	return true;
}

static void
set_enabled(const char *name, bool enabled)
{
	WaPipelineDef *def;

	MemoryContext caller = CurrentMemoryContext;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the definition outlives SPI_finish */
	MemoryContextSwitchTo(caller);
	def = lookup_pipeline(name);
	if (!enabled || !take_over(def))
		wa_check_pipeline_owner(def);
	wa_catalog_pipeline_set_enabled(def->id, enabled);
	SPI_finish();
	wa_request_at_commit(pipeline_slot(def),
						 enabled ? WA_REQUEST_RESUME : WA_REQUEST_PAUSE);
}

Datum
wa_pause_pipeline(PG_FUNCTION_ARGS)
{
	set_enabled(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	PG_RETURN_VOID();
}

Datum
wa_resume_pipeline(PG_FUNCTION_ARGS)
{
	set_enabled(text_to_cstring(PG_GETARG_TEXT_PP(0)), true);
	PG_RETURN_VOID();
}

/*
 * AFTER INSERT trigger on windowagg.pipelines: a row restored by
 * pg_restore gets a slot, and a worker once its transaction commits.
 * (create_pipeline's own insert passes here too; claiming is idempotent.)
 * The worker starts only once the pipeline's progress row and checkpoint
 * are complete: see the checkpoint_seq check in worker.c.
 *
 * The function is not executable by PUBLIC, and serves that one table
 * only: a row elsewhere could name any owner.  The owner recorded in the
 * slot is the catalog's, which only windowagg and superusers write (and
 * the worker reads the owner from the catalog again).
 */
Datum
wa_pipeline_inserted(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	tup;
	bool		isnull;
	int32		id;
	Oid			owner;
	char	   *name;
	bool		enabled;
	Oid			result_table;
	WaPipelineSlot *slot;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		elog(ERROR, "wa_pipeline_inserted must be an AFTER INSERT FOR EACH ROW trigger");
	if (RelationGetRelid(trigdata->tg_relation) != wa_catalog_pipelines_relid())
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger function windowagg._pipeline_inserted() fires only for windowagg.pipelines"),
				 errdetail("Trigger \"%s\" on table \"%s\" calls it.",
						   trigdata->tg_trigger->tgname,
						   RelationGetRelationName(trigdata->tg_relation))));
	if (wa_shared == NULL)
		return PointerGetDatum(NULL);	/* not preloaded: nothing to start */
	desc = RelationGetDescr(trigdata->tg_relation);
	tup = trigdata->tg_trigtuple;
	id = DatumGetInt32(heap_getattr(tup, SPI_fnumber(desc, "id"), desc, &isnull));
	owner = DatumGetObjectId(heap_getattr(tup, SPI_fnumber(desc, "owner"), desc, &isnull));
	name = TextDatumGetCString(heap_getattr(tup, SPI_fnumber(desc, "name"), desc, &isnull));
	enabled = DatumGetBool(heap_getattr(tup, SPI_fnumber(desc, "enabled"), desc, &isnull));
	result_table = DatumGetObjectId(heap_getattr(tup, SPI_fnumber(desc, "result_table"),
												 desc, &isnull));

	slot = wa_slot_claim(MyDatabaseId, id, owner, name, result_table,
						 OidIsValid(claim_within_limits_of) &&
						 claim_within_limits_of == owner);
	wa_request_at_commit(slot, WA_REQUEST_CREATE);
	if (!enabled)
		wa_request_at_commit(slot, WA_REQUEST_PAUSE);
	return PointerGetDatum(NULL);
}
