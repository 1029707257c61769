/*-------------------------------------------------------------------------
 *
 * sink_statements.c
 *	  The SQL an epoch's writes run (see sink.c): the inserts and upserts
 *	  of panes, the statements that keep a table of sessions, the insert
 *	  of dead letters.
 *
 * Each is prepared once, as the owner, under the creator's search_path
 * (the query's names resolve by it): so every name a statement writes is
 * qualified, every table is named from its OID, and every operator is
 * named by its schema, so that no object another role put on that path
 * takes part.
 *
 * src/pipeline/sink_statements.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/sink_int.h"

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_operator.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

static char *
qualified_name(Oid relid)
{
	char	   *relname = get_rel_name(relid);
	char	   *nspname = relname != NULL ?
		get_namespace_name(get_rel_namespace(relid)) : NULL;

	/* gone since the definition was read: a drop_pipeline committed */
	if (relname == NULL || nspname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table with OID %u does not exist", relid)));
	return psprintf("%s.%s", quote_identifier(nspname), quote_identifier(relname));
}

/*
 * An upsert's conflict clause on a pane table's key, and the aggregates'
 * new values; the caller appends the pane, revision and updated_at.
 */
static void
append_on_conflict_update(StringInfo sql, const WaAggQuery *q)
{
	appendStringInfoString(sql, " ON CONFLICT (");
	for (int i = 0; i < q->n_keys; i++)
		appendStringInfo(sql, "%s, ", quote_identifier(q->keys[i].name));
	appendStringInfoString(sql, "window_start, window_end) DO UPDATE SET ");
	for (int i = 0; i < q->n_outputs; i++)
		appendStringInfo(sql, "%s = EXCLUDED.%s, ", quote_identifier(q->outputs[i].name),
						 quote_identifier(q->outputs[i].name));
}

/*
 * "left = right" for key values of type typid, with the equality of the
 * type's default btree operator class (that of the table's unique index),
 * named by its schema and applied to its own input type: no operator of
 * the search path, which whoever may create in one of its schemas could
 * have put there, is ever chosen instead.  A key of another type than the
 * class's (varchar for text, a domain) is cast to it without a typmod,
 * which would cut values (bit is bit(1)); a polymorphic input type, as
 * enums have, cannot be cast to, and needs no cast: its operator is
 * pg_catalog's, where nobody else creates operators.
 */
static char *
key_equality(Oid typid, const char *left, const char *right)
{
	Oid			opclass = GetDefaultOpClass(typid, BTREE_AM_OID);
	Oid			intype;
	Oid			opno;
	HeapTuple	tup;
	Form_pg_operator op;
	char	   *opname;
	char	   *cast = "";

	if (!OidIsValid(opclass))
		elog(ERROR, "key type %s has no default btree operator class",
			 format_type_be(typid));
	intype = get_opclass_input_type(opclass);
	opno = get_opfamily_member(get_opclass_family(opclass), intype, intype,
							   BTEqualStrategyNumber);
	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "key type %s has no btree equality operator",
			 format_type_be(typid));
	op = (Form_pg_operator) GETSTRUCT(tup);
	opname = psprintf("OPERATOR(%s.%s)",
					  quote_identifier(get_namespace_name(op->oprnamespace)),
					  NameStr(op->oprname));
	ReleaseSysCache(tup);
	if (intype != typid && !IsPolymorphicType(intype))
		cast = psprintf("::%s",
						format_type_extended(intype, -1,
											 FORMAT_TYPE_TYPEMOD_GIVEN |
											 FORMAT_TYPE_FORCE_QUALIFY));
	return psprintf("%s%s %s %s%s", left, cast, opname, right, cast);
}

/*
 * The condition that row r of a table of sessions is row d of the epoch's
 * retracted sessions: the same keys and bounds, where a NULL key matches a
 * NULL key.  So that each retraction is one probe of the table's unique
 * index on (keys, window_start, window_end), pattern (a bit per nullable
 * key, set: NULL) says which nullable keys are NULL on both sides: a
 * condition with "k IS NULL" for those and "=" for the others is an index
 * condition on every column, where "(= OR both NULL)" is not (the planner
 * takes the bounds out of such an OR, and probes by the keys alone).  With
 * pattern -1 (beyond MAX_NULL_PATTERN_KEYS nullable keys), each nullable
 * key gets its "(= OR both NULL)" instead.
 */
static void
append_retracted_match(StringInfo sql, const WaAggQuery *q, int pattern)
{
	int			nullable = 0;

	for (int i = 0; i < q->n_keys; i++)
	{
		const char *key = quote_identifier(q->keys[i].name);
		char	   *left = psprintf("r.%s", key);
		char	   *right = psprintf("d.c%d", i + 1);
		char	   *equal = key_equality(q->keys[i].typid, left, right);

		if (q->keys[i].notnull)
			appendStringInfo(sql, "%s AND ", equal);
		else if (pattern < 0)
			appendStringInfo(sql, "(%s OR (%s IS NULL AND %s IS NULL)) AND ",
							 equal, left, right);
		else if ((pattern >> nullable++) & 1)
			appendStringInfo(sql, "%s IS NULL AND %s IS NULL AND ", left, right);
		else
			appendStringInfo(sql, "%s AND ", equal);
	}
	appendStringInfo(sql, "r.window_start OPERATOR(pg_catalog.=) d.c%d AND "
					 "r.window_end OPERATOR(pg_catalog.=) d.c%d",
					 q->n_keys + 1, q->n_keys + 2);
}

/*
 * Two statements keep a table of sessions (the result table, or the
 * sessions table of a session window beside others): one deletes the rows of the
 * sessions that merges replaced, one upserts the sessions' panes with the
 * revisions the engine gives.  A NULL key is a group of its own (the
 * table's unique index treats NULLs as equal), so nullable keys match
 * NULL to NULL.  cols: the value columns, as the pane statements name
 * them.
 */
static void
build_session_statements(WaSink *sink, const WaPipelineDef *def,
						 const char *cols)
{
	const WaAggQuery *q = sink->query;
	char	   *table = qualified_name(OidIsValid(def->sessions_table) ?
									def->sessions_table : def->result_table);
	StringInfoData sql;
	int			col;
	int			n_nullable = 0;

	for (int i = 0; i < q->n_keys; i++)
		n_nullable += q->keys[i].notnull ? 0 : 1;
	/* (the array is the sink's: SPI's context is current here) */
	sink->n_retract_plans = n_nullable <= MAX_NULL_PATTERN_KEYS ? 1 << n_nullable : 1;
	initStringInfo(&sql);
	for (int pattern = 0; pattern < sink->n_retract_plans; pattern++)
	{
		resetStringInfo(&sql);
		appendStringInfo(&sql, "DELETE FROM %s AS r USING " RETRACTED_RELATION " d WHERE ",
						 table);
		append_retracted_match(&sql, q,
							   n_nullable <= MAX_NULL_PATTERN_KEYS ? pattern : -1);
		sink->retract_plans[pattern] = wa_sink_prepare_rows_plan(RETRACTED_RELATION,
																 sink->retracted_desc,
																 sql.data);
	}

	/* the sessions' relation: the value columns, revision, is late */
	col = q->n_keys + 2 + q->n_outputs + 1;
	resetStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s AS r (%s, pane, revision, updated_at) SELECT ",
					 table, cols);
	for (int i = 1; i < col; i++)
		appendStringInfo(&sql, "p.c%d, ", i);
	appendStringInfo(&sql, "CASE WHEN p.c%d THEN 'late' ELSE 'on_time' END, p.c%d, $1 "
					 "FROM " SESSIONS_RELATION " p", col + 1, col);
	append_on_conflict_update(&sql, q);
	appendStringInfoString(&sql, "pane = EXCLUDED.pane, revision = EXCLUDED.revision, "
						   "updated_at = EXCLUDED.updated_at");
	sink->session_plan = wa_sink_prepare_rows_plan(SESSIONS_RELATION, sink->sessions_desc,
										   sql.data);
}

/*
 * Two statements write panes.  A window's on-time pane is its first
 * emission, so its row is new: a plain INSERT.  A late pane upserts: a new
 * row (a window that was empty when it fired) starts at revision 1, an
 * existing one gets the new values and the next revision.  $1 is the
 * epoch's time, for updated_at.
 */
void
wa_sink_build_pane_statements(WaSink *sink, const WaPipelineDef *def)
{
	const WaAggQuery *q = sink->query;
	StringInfoData cols;
	StringInfoData sql;

	initStringInfo(&cols);
	for (int i = 0; i < q->n_keys; i++)
		appendStringInfo(&cols, "%s, ", quote_identifier(q->keys[i].name));
	appendStringInfoString(&cols, "window_start, window_end");
	for (int i = 0; i < q->n_outputs; i++)
		appendStringInfo(&cols, ", %s", quote_identifier(q->outputs[i].name));

	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (%s, pane, revision, updated_at) "
					 "SELECT p.*, 'on_time', 1, $1 FROM " PANES_RELATION " p",
					 qualified_name(def->result_table), cols.data);
	sink->insert_plan = wa_sink_prepare_rows_plan(PANES_RELATION, sink->panes_desc, sql.data);

	resetStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s AS r (%s, pane, revision, updated_at) "
					 "SELECT p.*, 'late', 1, $1 FROM " PANES_RELATION " p",
					 qualified_name(def->result_table), cols.data);
	append_on_conflict_update(&sql, q);
	appendStringInfoString(&sql, "pane = 'late', revision = r.revision + 1, "
						   "updated_at = EXCLUDED.updated_at");
	sink->upsert_plan = wa_sink_prepare_rows_plan(PANES_RELATION, sink->panes_desc, sql.data);
	if (sink->sessions_desc != NULL)
		build_session_statements(sink, def, cols.data);
}

void
wa_sink_build_dead_letter_insert(WaSink *sink, const WaPipelineDef *def)
{
	char	   *sql;

	if (def->logical)
	{
		/* the row came with the stream: the table may not have it any more */
		sql = psprintf("INSERT INTO %s (commit_lsn, event_time, reason, watermark, source_row) "
					   "SELECT d.* FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), "
					   "pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5)) AS d",
					   qualified_name(def->dead_letter_table));
		sink->dead_plan = wa_sink_prepare_unnest_plan(sql, &sink->dead);
		return;
	}
	/* the source row is read back by arrival number, in the same snapshot */
	sql = psprintf("INSERT INTO %s (arrival, event_time, reason, watermark, source_row) "
				   "SELECT d.arrival, d.event_time, d.reason, d.watermark, pg_catalog.to_jsonb(s) "
				   "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), pg_catalog.unnest($3), "
				   "pg_catalog.unnest($4)) AS d(arrival, event_time, reason, watermark) "
				   "JOIN %s AS s ON s.%s OPERATOR(pg_catalog.=) d.arrival",
				   qualified_name(def->dead_letter_table), qualified_name(def->source),
				   quote_identifier(def->arrival_column));
	sink->dead_plan = wa_sink_prepare_unnest_plan(sql, &sink->dead);
}
