/*-------------------------------------------------------------------------
 *
 * logical.c
 *	  A pipeline worker's reader of a logical replication stream.
 *
 * The worker turns each inserted row of the source table into the row
 * query's values (keys, event time, aggregate inputs) by evaluating the
 * same expressions the table source would run in SQL, so both sources mean
 * the same thing.
 *
 * Two transports deliver the rows (to rows.c, which turns them into the
 * row query's values): a table on another server is streamed from that
 * server's walsender with pgoutput (stream.c); a table of this server is
 * decoded in the worker itself, with windowagg's own output plugin
 * (decode.c, plugin.c).  Calls go one way: this file drives the
 * transports, the transports hand rows to rows.c, and rows.c hands them
 * to the worker through the source's consumer.
 *
 * Exactly once.  Transactions arrive whole and in commit order.  An epoch
 * reads whole transactions only, so its offset, the end of the last
 * transaction it applied (or a later position past which the source had
 * nothing more to send), is stored with its results in one transaction;
 * only after that commit is the position confirmed to the slot, which lets
 * the server free WAL.  After a crash of either server the worker reads
 * again from its stored offset: decoding skips every transaction that
 * committed before it (and the worker checks that too), and the slot
 * cannot have moved past it, so nothing is applied twice or skipped.
 *
 * Updates and deletes of source rows are not events: they are counted,
 * and sent to the dead-letter table when the pipeline asks for that.
 *
 * src/source/logical/logical.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/logical/logical_internal.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/xlog.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

/* ---------- what a logical source may read ---------- */

/*
 * The change stream carries whole rows, which reach the query's
 * expressions and the dead letters without the checks a query makes: so
 * the owner must be able to read the table whole (no row-level security
 * that applies to it, SELECT on every column), and, for a table of this
 * server, use replication slots (the REPLICATION attribute, as
 * pg_create_logical_replication_slot() requires).
 */
/*
 * The source table's columns the row query reads (its expressions and its
 * WHERE), as attribute numbers offset by FirstLowInvalidHeapAttributeNumber
 * (pull_varattnos); NULL means none, whole_row that it reads every column.
 */
Bitmapset *
wa_logical_columns_read(const WaAggQuery *q, bool *whole_row)
{
	Bitmapset  *cols = NULL;

	pull_varattnos((Node *) q->row_exprs, 1, &cols);
	if (q->row_qual != NULL)
		pull_varattnos((Node *) q->row_qual, 1, &cols);
	*whole_row = bms_is_member(InvalidAttrNumber - FirstLowInvalidHeapAttributeNumber,
							   cols);
	return cols;
}

/*
 * A logical source of this server decodes the rows as they were written,
 * and a virtual generated column (the default for generated columns from
 * PostgreSQL 18 on) is computed when read and never written: refuse one as
 * an event time, key, aggregate input or filter, rather than read NULLs.
 */
static void
check_no_virtual_columns(Oid relid, const WaAggQuery *q)
{
	bool		whole_row;
	Bitmapset  *cols = wa_logical_columns_read(q, &whole_row);
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->attgenerated != ATTRIBUTE_GENERATED_VIRTUAL)
			continue;
		if (whole_row ||
			bms_is_member(att->attnum - FirstLowInvalidHeapAttributeNumber, cols))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of table \"%s\" is a virtual generated column",
							NameStr(att->attname), RelationGetRelationName(rel)),
					 errdetail("A logical source reads rows as they were written, and a virtual generated column is computed when read."),
					 errhint("Make it a stored generated column, compute it in the query, or read the table with source => 'table'.")));
	}
	table_close(rel, AccessShareLock);
	bms_free(cols);
}

void
wa_logical_check_source(Oid relid, Oid owner, bool local, const WaAggQuery *q)
{
	const char *rolname = GetUserNameFromId(owner, false);
	const char *relname = get_rel_name(relid);

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table with OID %u does not exist", relid)));
	if (local && !has_rolreplication(owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role \"%s\" cannot use replication slots", rolname),
				 errdetail("A pipeline reads a logical source of this server through a replication slot, which needs the REPLICATION attribute."),
				 errhint("Grant it with ALTER ROLE %s REPLICATION, or read the table with source => 'table'.",
						 quote_identifier(rolname))));
	if (check_enable_rls(relid, owner, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("row-level security applies to role \"%s\" on table \"%s\"",
						rolname, relname),
				 errdetail("A logical source hands the pipeline every row of the change stream, which its policies cannot filter."),
				 errhint("Read the table with source => 'table', which applies the policies.")));
	if (pg_class_aclcheck(relid, owner, ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck_all(relid, owner, ACL_SELECT, ACLMASK_ALL) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", relname),
				 errdetail("A logical source reads whole rows: role \"%s\" needs SELECT on every column.",
						   rolname),
				 errhint("Grant SELECT on the table, or read it with source => 'table'.")));
	if (local)
		check_no_virtual_columns(relid, q);
}

/* ---------- set-up ---------- */

void
wa_logical_init(WaLogicalSource *src, const WaSourceDef *def,
				const WaAggQuery *q, MemoryContext cxt,
				wa_logical_row_fn row_fn, wa_logical_change_fn change_fn,
				wa_logical_txn_end_fn txn_end_fn, void *fn_arg)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Relation	rel;

	memset(src, 0, sizeof(*src));
	src->query = q;
	src->cxt = cxt;
	src->row_fn = row_fn;
	src->change_fn = change_fn;
	src->txn_end_fn = txn_end_fn;
	src->fn_arg = fn_arg;
	src->fd = PGINVALID_SOCKET;
	src->slot_name = pstrdup(def->slot_name);
	src->local_relid = def->relid;
	if (def->connection != NULL)
	{
		src->conninfo = pstrdup(def->connection);
		src->remote_nspname = pstrdup(def->remote_schema);
		src->remote_relname = pstrdup(def->remote_table);
		src->publications = list_make1(makeString(pstrdup(def->publication)));
	}

	rel = relation_open(src->local_relid, AccessShareLock);
	wa_logical_rows_init(src, rel);
	if (src->conninfo != NULL)
		wa_stream_init(src, rel);
	relation_close(rel, AccessShareLock);
	MemoryContextSwitchTo(old);
}

/* ---------- the slot ---------- */

void
wa_logical_start(WaLogicalSource *src, XLogRecPtr applied)
{
	MemoryContext old = MemoryContextSwitchTo(src->cxt);
	bool		local = src->conninfo == NULL;

	wa_logical_close(src);
	if (!local)
		src->conn = wa_logical_connect(src->conninfo, "windowagg");
	if (local ? SearchNamedReplicationSlot(src->slot_name, true) == NULL :
		!wa_logical_slot_exists(src->conn, src->slot_name))
	{
		/*
		 * Its creation at commit failed, or the pipeline came back from a
		 * dump: changes from now on are all that can still be read.
		 */
		if (!XLogRecPtrIsInvalid(applied))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("replication slot \"%s\" of the pipeline is gone", src->slot_name),
					 errdetail("The pipeline consumed the source up to %X/%X; without the slot the changes after that cannot be read again.",
							   LSN_FORMAT_ARGS(applied)),
					 errhint("Drop and re-create the pipeline.")));
		if (local)
			(void) wa_logical_create_local_slot(src->slot_name, false);
		else
			(void) wa_logical_create_slot(src->conn, src->slot_name);
	}
	src->applied_lsn = applied;
	src->confirmed_lsn = applied;
	src->server_wal_end = applied;
	src->in_txn = false;
	if (local)
		wa_decode_start(src, applied);
	else
		wa_stream_start(src, applied);
	MemoryContextSwitchTo(old);
}

void
wa_logical_close(WaLogicalSource *src)
{
	wa_decode_close(src);
	wa_stream_close(src);
}

void
wa_logical_drop(WaLogicalSource *src)
{
	MemoryContext cxt = CurrentMemoryContext;

	wa_logical_close(src);
	PG_TRY();
	{
		if (src->conninfo == NULL)
			wa_logical_drop_local_slot(src->slot_name);
		else
			wa_logical_drop_remote_slot(src->conninfo, src->slot_name);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(WARNING,
				(errmsg("could not drop replication slot \"%s\": %s",
						src->slot_name, edata->message),
				 errhint("Drop it with pg_drop_replication_slot(): it holds back WAL.")));
	}
	PG_END_TRY();
}

/* ---------- an epoch ---------- */

bool
wa_logical_read(WaLogicalSource *src, int limit)
{
	src->rows_read = 0;
	src->updates = 0;
	src->deletes = 0;
	if (src->conninfo == NULL)
	{
		/* up to what was flushed when the epoch began */
		src->target_lsn = GetFlushRecPtr(NULL);
		wa_decode_read(src, limit);
		return src->applied_lsn >= src->target_lsn;
	}
	return wa_stream_read(src, limit);
}

XLogRecPtr
wa_logical_offset(const WaLogicalSource *src)
{
	return src->applied_lsn;
}

void
wa_logical_confirm(WaLogicalSource *src)
{
	if (src->applied_lsn > src->confirmed_lsn)
	{
		src->confirmed_lsn = src->applied_lsn;
		if (src->conninfo == NULL)
			LogicalConfirmReceivedLocation(src->confirmed_lsn);
		else
			wa_stream_send_feedback(src, false);
	}
}

void
wa_logical_wait(WaLogicalSource *src, long timeout_ms)
{
	int			events = WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH;

	/* a remote stream's socket is known once the stream was read from */
	if (src->conn != NULL && src->fd != PGINVALID_SOCKET)
		events |= WL_SOCKET_READABLE;
	(void) WaitLatchOrSocket(MyLatch, events, src->fd, timeout_ms,
							 PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

int64
wa_logical_retained_bytes(const WaLogicalSource *src)
{
	return src->server_wal_end > src->confirmed_lsn ?
		(int64) (src->server_wal_end - src->confirmed_lsn) : 0;
}

/* ---------- the routines (see source.h) ---------- */

typedef struct LogicalSourceState
{
	WaLogicalSource stream;
	XLogRecPtr	stored_lsn;		/* the offset last committed */
} LogicalSourceState;

static void
logical_open(WaSource *source)
{
	LogicalSourceState *state = MemoryContextAllocZero(source->cxt,
													   sizeof(LogicalSourceState));

	/* enough to close it, and drop its slot, before prepare (which sets all) */
	state->stream.fd = PGINVALID_SOCKET;
	state->stream.slot_name = MemoryContextStrdup(source->cxt, source->def->slot_name);
	if (source->def->connection != NULL)
		state->stream.conninfo = MemoryContextStrdup(source->cxt, source->def->connection);
	source->private_data = state;
}

/* The owner must still be able to read the source whole (and use a slot). */
static void
logical_check(WaSource *source, const WaAggQuery *q)
{
	wa_logical_check_source(source->def->relid, source->def->owner,
							source->def->connection == NULL, q);
}

static void
logical_prepare(WaSource *source)
{
	LogicalSourceState *state = source->private_data;

	wa_logical_init(&state->stream, source->def, source->query, source->cxt,
					source->consumer.row, source->consumer.change,
					source->consumer.yield, source->consumer.arg);
	/* the slot is told to move on only past results that are durable */
	(void) set_config_option("synchronous_commit", "on",
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SET, true, 0, false);
}

static void
logical_start(WaSource *source, const WaSourceOffset *committed)
{
	LogicalSourceState *state = source->private_data;

	state->stored_lsn = committed->lsn;
	wa_logical_start(&state->stream, state->stored_lsn);
}

static void
logical_read(WaSource *source, int limit, WaReadResult *result)
{
	LogicalSourceState *state = source->private_data;
	WaLogicalSource *stream = &state->stream;

	result->caught_up = wa_logical_read(stream, limit);
	result->rows = stream->rows_read;
	/* a position past what was applied, with nothing of it: keep it */
	result->offset_dirty = wa_logical_offset(stream) != state->stored_lsn &&
		(stream->rows_read > 0 || stream->updates > 0 || stream->deletes > 0);
}

static Datum
logical_current_row(WaSource *source)
{
	return wa_logical_row_jsonb(&((LogicalSourceState *) source->private_data)->stream);
}

static void
logical_get_offset(WaSource *source, WaSourceOffset *offset)
{
	LogicalSourceState *state = source->private_data;

	offset->arrival_hwm = 0;	/* no arrival numbers */
	offset->arrival_gaps = NULL;
	offset->lsn = wa_logical_offset(&state->stream);
}

static void
logical_after_commit(WaSource *source, bool offset_written)
{
	LogicalSourceState *state = source->private_data;

	/* the slot may free what this epoch committed, not more */
	if (offset_written)
		state->stored_lsn = wa_logical_offset(&state->stream);
	wa_logical_confirm(&state->stream);
}

static bool
logical_report(WaSource *source, WaSourceStats *stats, char *why,
			   Size why_len)
{
	LogicalSourceState *state = source->private_data;

	stats->n_gaps = -1;			/* no arrival numbers */
	/* the WAL a remote slot holds back, as its sender last said */
	if (state->stream.conninfo != NULL)
	{
		stats->retained_wal = wa_logical_retained_bytes(&state->stream);
		stats->retained_wal_known = true;
	}
	return false;
}

static void
logical_wait(WaSource *source, long timeout_ms)
{
	wa_logical_wait(&((LogicalSourceState *) source->private_data)->stream,
					timeout_ms);
}

static void
logical_close(WaSource *source, bool drop)
{
	LogicalSourceState *state = source->private_data;

	if (drop)
		wa_logical_drop(&state->stream);
	else
		wa_logical_close(&state->stream);
}

/* Both transports: a slot of this server, or a remote server's stream. */
const WaSourceRoutine wa_logical_routine = {
	.rows_transient = true,
	.open = logical_open,
	.check = logical_check,
	.prepare = logical_prepare,
	.start = logical_start,
	.begin_epoch = NULL,
	.read = logical_read,
	.current_row = logical_current_row,
	.get_offset = logical_get_offset,
	.after_commit = logical_after_commit,
	.report = logical_report,
	.wait = logical_wait,
	.close = logical_close,
};
