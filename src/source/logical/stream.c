/*-------------------------------------------------------------------------
 *
 * stream.c
 *	  A pipeline's table on another server: its changes streamed from that
 *	  server's walsender with pgoutput.
 *
 * The worker connects the way a subscription's apply worker does
 * (libpqwalreceiver), asks for binary column values, and decodes pgoutput's
 * messages with PostgreSQL's own logicalrep_read_* functions.  Columns are
 * matched to the local stand-in table by name.  Between transactions, a
 * keepalive from the sender says it has sent everything that committed
 * before its position, which lets the slot move past WAL the pipeline has
 * no rows in.
 *
 * src/source/logical/stream.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/logical/logical_internal.h"

#include "access/sysattr.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/* How to turn a column's value from the stream into a Datum. */
struct WaColumnReader
{
	Oid			typid;
	int32		typmod;
	FmgrInfo	input;
	Oid			input_param;
	FmgrInfo	receive;
	Oid			receive_param;
	bool		dropped;
};

/* Wait this long for the sender to report a position when catching up. */
#define CATCH_UP_WAIT_MS 2000

/* How each column of the stand-in is read from the stream. */
void
wa_stream_init(WaLogicalSource *src, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	src->readers = palloc0(sizeof(WaColumnReader) * desc->natts);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		WaColumnReader *r = &src->readers[i];
		Oid			func;

		r->dropped = att->attisdropped;
		if (r->dropped)
			continue;
		r->typid = att->atttypid;
		r->typmod = att->atttypmod;
		getTypeInputInfo(r->typid, &func, &r->input_param);
		fmgr_info_cxt(func, &r->input, src->cxt);
		getTypeBinaryInputInfo(r->typid, &func, &r->receive_param);
		fmgr_info_cxt(func, &r->receive, src->cxt);
	}
}

void
wa_stream_start(WaLogicalSource *src, XLogRecPtr applied)
{
	WalRcvStreamOptions options;

	src->stream_relid = InvalidOid;
	src->stream_is_ours = false;
	memset(&options, 0, sizeof(options));
	options.logical = true;
	options.slotname = src->slot_name;
	options.startpoint = applied;
	options.proto.logical.proto_version = LOGICALREP_PROTO_VERSION_NUM;
	options.proto.logical.publication_names = src->publications;
	options.proto.logical.binary = true;
	if (!walrcv_startstreaming(src->conn, &options))
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("the logical replication source did not start streaming")));
}

void
wa_stream_close(WaLogicalSource *src)
{
	if (src->conn != NULL)
		walrcv_disconnect(src->conn);
	src->conn = NULL;
	src->fd = PGINVALID_SOCKET;
}

/* Tell the sender how far it may free WAL; optionally ask for a reply. */
void
wa_stream_send_feedback(WaLogicalSource *src, bool reply_requested)
{
	StringInfoData buf;
	XLogRecPtr	lsn = src->confirmed_lsn;

	initStringInfo(&buf);
	pq_sendbyte(&buf, 'r');
	pq_sendint64(&buf, lsn);	/* written */
	pq_sendint64(&buf, lsn);	/* flushed */
	pq_sendint64(&buf, lsn);	/* applied */
	pq_sendint64(&buf, GetCurrentTimestamp());
	pq_sendbyte(&buf, reply_requested ? 1 : 0);
	walrcv_send(src->conn, buf.data, buf.len);
	pfree(buf.data);
}

/* ---------- messages ---------- */

/* Load a row from the stream into base_slot (columns it lacks are NULL). */
static void
load_row(WaLogicalSource *src, LogicalRepTupleData *tup)
{
	TupleTableSlot *slot = src->base_slot;
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	for (int i = 0; i < natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	for (int c = 0; c < tup->ncols && c < src->stream_natts; c++)
	{
		int			i = src->stream_to_local[c];
		WaColumnReader *r;
		StringInfo	value = &tup->colvalues[c];

		if (i < 0)
			continue;
		r = &src->readers[i];
		switch (tup->colstatus[c])
		{
			case LOGICALREP_COLUMN_TEXT:
				slot->tts_values[i] = InputFunctionCall(&r->input, value->data,
														r->input_param, r->typmod);
				slot->tts_isnull[i] = false;
				break;
			case LOGICALREP_COLUMN_BINARY:
				slot->tts_values[i] = ReceiveFunctionCall(&r->receive, value,
														  r->receive_param, r->typmod);
				if (value->cursor != value->len)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
							 errmsg("incorrect binary data format in column %d of the replicated row",
									i + 1)));
				slot->tts_isnull[i] = false;
				break;
			default:
				/* NULL, or an unchanged TOASTed value of an update */
				break;
		}
	}
	ExecStoreVirtualTuple(slot);
}

/* An insert, update or delete: load its row and deliver it. */
static void
handle_change(WaLogicalSource *src, StringInfo msg, char kind)
{
	LogicalRepTupleData oldtup;
	LogicalRepTupleData newtup;
	bool		has_old = false;
	LogicalRepRelId relid;
	MemoryContext old;

	/* the message's and the row's memory lasts until the next row */
	ResetExprContext(src->econtext);
	old = MemoryContextSwitchTo(src->econtext->ecxt_per_tuple_memory);
	if (kind == 'I')
		relid = logicalrep_read_insert(msg, &newtup);
	else if (kind == 'U')
		relid = logicalrep_read_update(msg, &has_old, &oldtup, &newtup);
	else
		relid = logicalrep_read_delete(msg, &oldtup);
	if (!src->skip_txn && src->stream_is_ours && relid == src->stream_relid)
		load_row(src, kind == 'D' ? &oldtup : &newtup);
	MemoryContextSwitchTo(old);
	if (!src->skip_txn && src->stream_is_ours && relid == src->stream_relid)
		wa_logical_deliver(src, kind);
}


/*
 * Every column the row query reads must come in the stream: one that does
 * not would be read as NULL in every row.  The publisher sends a generated
 * column only when it is stored and published (publish_generated_columns,
 * from PostgreSQL 18 on), and only the columns of a publication's column
 * list.
 */
static void
check_columns_streamed(WaLogicalSource *src, TupleDesc desc)
{
	bool		whole_row;
	Bitmapset  *cols = wa_logical_columns_read(src->query, &whole_row);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		bool		streamed = false;

		if (att->attisdropped ||
			(!whole_row &&
			 !bms_is_member(att->attnum - FirstLowInvalidHeapAttributeNumber, cols)))
			continue;
		for (int c = 0; c < src->stream_natts; c++)
			streamed |= src->stream_to_local[c] == i;
		if (!streamed)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of the replicated table %s is not in its change stream",
							NameStr(att->attname),
							quote_qualified_identifier(src->remote_nspname,
													   src->remote_relname)),
					 errdetail("The pipeline reads the column, and the publisher does not send it: it sends a generated column only if it is stored and published, and only the columns of a publication's column list."),
					 errhint("Publish the column, or compute it in the pipeline's query.")));
	}
	bms_free(cols);
}
/* A relation message: is it the source, and where are its columns? */
static void
handle_relation(WaLogicalSource *src, StringInfo msg)
{
	LogicalRepRelation *rel;
	TupleDesc	desc = src->base_slot->tts_tupleDescriptor;
	MemoryContext old;

	/* sent again after every cache invalidation: keep nothing of it */
	ResetExprContext(src->econtext);
	old = MemoryContextSwitchTo(src->econtext->ecxt_per_tuple_memory);
	rel = logicalrep_read_rel(msg);
	MemoryContextSwitchTo(old);

	/* other tables of the publication are described too: skip them */
	if (strcmp(rel->nspname, src->remote_nspname) != 0 ||
		strcmp(rel->relname, src->remote_relname) != 0)
	{
		if (rel->remoteid == src->stream_relid)
			src->stream_is_ours = false;	/* ours was renamed */
		return;
	}
	src->stream_is_ours = true;
	src->stream_relid = rel->remoteid;
	old = MemoryContextSwitchTo(src->cxt);
	if (src->stream_to_local != NULL)
		pfree(src->stream_to_local);
	src->stream_natts = rel->natts;
	src->stream_to_local = palloc(sizeof(int) * Max(rel->natts, 1));
	for (int c = 0; c < rel->natts; c++)
	{
		src->stream_to_local[c] = -1;
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (!att->attisdropped &&
				strcmp(NameStr(att->attname), rel->attnames[c]) == 0)
			{
				if (att->atttypid != rel->atttyps[c])
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("column \"%s\" of the replicated table has type %s, the pipeline reads %s",
									rel->attnames[c], format_type_be(rel->atttyps[c]),
									format_type_be(att->atttypid))));
				src->stream_to_local[c] = i;
			}
		}
	}
	MemoryContextSwitchTo(old);
	check_columns_streamed(src, desc);
}

/* One pgoutput message. */
static void
handle_message(WaLogicalSource *src, StringInfo msg)
{
	char		action = pq_getmsgbyte(msg);

	switch (action)
	{
		case LOGICAL_REP_MSG_BEGIN:
			{
				LogicalRepBeginData begin;

				logicalrep_read_begin(msg, &begin);
				wa_logical_txn_begin(src, begin.final_lsn);
				break;
			}
		case LOGICAL_REP_MSG_COMMIT:
			{
				LogicalRepCommitData commit;

				logicalrep_read_commit(msg, &commit);
				wa_logical_txn_end(src, commit.end_lsn);
				break;
			}
		case LOGICAL_REP_MSG_RELATION:
			handle_relation(src, msg);
			break;
		case LOGICAL_REP_MSG_INSERT:
			handle_change(src, msg, 'I');
			break;
		case LOGICAL_REP_MSG_UPDATE:
			handle_change(src, msg, 'U');
			break;
		case LOGICAL_REP_MSG_DELETE:
			handle_change(src, msg, 'D');
			break;
		case LOGICAL_REP_MSG_TYPE:
		case LOGICAL_REP_MSG_ORIGIN:
		case LOGICAL_REP_MSG_TRUNCATE:
		case LOGICAL_REP_MSG_MESSAGE:
			/* a truncate removes rows, it adds no events */
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_PROTOCOL_VIOLATION),
					 errmsg("unexpected message type \"%c\" in the logical replication stream",
							action)));
	}
}

/* One message of the replication protocol. */
static void
handle_copy_data(WaLogicalSource *src, char *buf, int len)
{
	StringInfoData s;
	char		type;

	s.data = buf;
	s.len = len;
	s.cursor = 0;
	s.maxlen = -1;
	type = pq_getmsgbyte(&s);
	if (type == 'w')
	{
		XLogRecPtr	start = pq_getmsgint64(&s);
		XLogRecPtr	end = pq_getmsgint64(&s);

		(void) start;
		(void) pq_getmsgint64(&s);	/* send time */
		src->server_wal_end = Max(src->server_wal_end, end);
		handle_message(src, &s);
	}
	else if (type == 'k')
	{
		XLogRecPtr	end = pq_getmsgint64(&s);
		bool		reply;

		(void) pq_getmsgint64(&s);	/* send time */
		reply = pq_getmsgbyte(&s);
		src->server_wal_end = Max(src->server_wal_end, end);
		src->keepalives++;

		/*
		 * Between transactions, the sender has sent everything that
		 * committed before end: nothing up to there is left to apply.
		 */
		if (!src->in_txn && end > src->applied_lsn)
			src->applied_lsn = end;
		if (reply)
			wa_stream_send_feedback(src, false);
	}
}

/* ---------- an epoch's reading ---------- */

/*
 * Read whole transactions, about limit rows at most.  Caught up (true)
 * once, between transactions, the sender has answered a keepalive request
 * made when nothing was left to read: it had then sent everything it had
 * decoded.  What committed on its server and was not decoded yet cannot
 * be known here.
 */
bool
wa_stream_read(WaLogicalSource *src, int limit)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   CATCH_UP_WAIT_MS);
	int64		asked_at = -1;	/* keepalives seen when we asked */

	for (;;)
	{
		char	   *buf;
		int			len = walrcv_receive(src->conn, &buf, &src->fd);

		if (len > 0)
		{
			handle_copy_data(src, buf, len);
			if (!src->in_txn && src->rows_read >= limit)
				return false;
			continue;
		}
		if (len < 0)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("the logical replication source ended the stream")));

		/* nothing to read now */
		if (!src->in_txn)
		{
			if (asked_at >= 0 && src->keepalives > asked_at)
				return true;
			if (GetCurrentTimestamp() >= deadline)
				return false;
			if (asked_at < 0)
			{
				/* ask where the sender is: its reply moves applied_lsn on */
				wa_stream_send_feedback(src, true);
				asked_at = src->keepalives;
			}
		}
		/* readers of the live windows must not wait for the network */
		src->txn_end_fn(src->fn_arg);
		(void) WaitLatchOrSocket(MyLatch,
								 WL_LATCH_SET | WL_SOCKET_READABLE | WL_TIMEOUT |
								 WL_EXIT_ON_PM_DEATH,
								 src->fd, 100, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
