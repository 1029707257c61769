/*-------------------------------------------------------------------------
 *
 * logical_source.c
 *	  A pipeline worker's reader of a logical replication stream.
 *
 * The worker streams its slot with pgoutput (binary column values) and
 * turns each inserted row of the source table into the row query's values
 * (keys, event time, aggregate inputs) by evaluating the same expressions
 * the table source would run in SQL, so both sources mean the same thing.
 *
 * Exactly once.  The sender delivers transactions whole and in commit
 * order.  An epoch reads whole transactions only, so its offset, the end
 * of the last transaction it applied (or a later position the sender said
 * it had passed with nothing more to send), is stored with its results in
 * one transaction; only after that commit is the position confirmed to
 * the slot, which lets the sender free WAL.  After a crash of either
 * server the worker streams again from its stored offset: the sender skips
 * every transaction that committed before it (and the worker checks that
 * too), and the slot cannot have moved past it, so nothing is applied
 * twice or skipped.
 *
 * Updates and deletes of source rows are not events: they are counted,
 * and sent to the dead-letter table when the pipeline asks for that.
 *
 * src/logical_source.c
 *
 *-------------------------------------------------------------------------
 */
#include "logical_source.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "libpq/pqformat.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

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

/* ---------- set-up ---------- */

static void
init_readers(WaLogicalSource *src, Relation rel)
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

/* The row query's expressions, ready to run over a row of the source. */
static void
init_expressions(WaLogicalSource *src, Relation rel)
{
	const WaAggQuery *q = src->query;
	TupleDesc	row_desc;
	ListCell   *lc;
	int			i = 0;

	src->n_exprs = list_length(q->row_exprs);
	row_desc = CreateTemplateTupleDesc(src->n_exprs);
	src->exprs = palloc0(sizeof(ExprState *) * src->n_exprs);
	foreach(lc, q->row_exprs)
	{
		Expr	   *e = expression_planner(copyObject(lfirst(lc)));

		TupleDescInitEntry(row_desc, i + 1, NULL, exprType((Node *) e),
						   exprTypmod((Node *) e), 0);
		src->exprs[i++] = ExecInitExpr(e, NULL);
	}
	src->qual = q->row_qual == NULL ? NULL :
		ExecInitQual(make_ands_implicit(expression_planner(copyObject(q->row_qual))),
					 NULL);
	src->base_slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(rel)),
											  &TTSOpsVirtual);
	src->row_slot = MakeSingleTupleTableSlot(row_desc, &TTSOpsVirtual);
	src->econtext = CreateStandaloneExprContext();
	src->econtext->ecxt_scantuple = src->base_slot;
}

void
wa_logical_init(WaLogicalSource *src, const WaPipelineDef *def,
				const WaAggQuery *q, MemoryContext cxt,
				wa_logical_row_fn row_fn, wa_logical_change_fn change_fn,
				void *fn_arg)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Relation	rel;

	memset(src, 0, sizeof(*src));
	src->query = q;
	src->cxt = cxt;
	src->row_fn = row_fn;
	src->change_fn = change_fn;
	src->fn_arg = fn_arg;
	src->fd = PGINVALID_SOCKET;
	src->slot_name = wa_logical_slot_name(def->id);
	src->local_relid = def->source;
	if (def->connection != NULL)
	{
		src->conninfo = pstrdup(def->connection);
		src->remote_relid = InvalidOid;
		src->remote_nspname = pstrdup(def->remote_schema);
		src->remote_relname = pstrdup(def->remote_table);
	}
	else
	{
		src->conninfo = wa_local_conninfo();
		src->remote_relid = def->source;
	}
	src->publications = list_make1(makeString(def->publication != NULL ?
											  pstrdup(def->publication) :
											  wa_logical_publication_name(def->id)));

	rel = relation_open(src->local_relid, AccessShareLock);
	init_readers(src, rel);
	init_expressions(src, rel);
	relation_close(rel, AccessShareLock);
	MemoryContextSwitchTo(old);
}

/* ---------- the connection ---------- */

void
wa_logical_start(WaLogicalSource *src, XLogRecPtr applied)
{
	WalRcvStreamOptions options;
	MemoryContext old = MemoryContextSwitchTo(src->cxt);

	wa_logical_close(src);
	src->conn = wa_logical_connect(src->conninfo, "windowagg");
	if (!wa_logical_slot_exists(src->conn, src->slot_name))
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
		(void) wa_logical_create_slot(src->conn, src->slot_name);
	}

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
	src->applied_lsn = applied;
	src->confirmed_lsn = applied;
	src->server_wal_end = applied;
	src->in_txn = false;
	src->stream_relid = InvalidOid;
	src->stream_is_ours = false;
	MemoryContextSwitchTo(old);
}

void
wa_logical_close(WaLogicalSource *src)
{
	if (src->conn != NULL)
		walrcv_disconnect(src->conn);
	src->conn = NULL;
	src->fd = PGINVALID_SOCKET;
}

void
wa_logical_drop(WaLogicalSource *src)
{
	MemoryContext cxt = CurrentMemoryContext;

	wa_logical_close(src);
	PG_TRY();
	{
		src->conn = wa_logical_connect(src->conninfo, "windowagg");
		/* WAIT: the sender this worker streamed from may still be leaving */
		(void) wa_logical_drop_slot(src->conn, src->slot_name, true);
		wa_logical_close(src);
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

/* Tell the sender how far it may free WAL; optionally ask for a reply. */
static void
send_feedback(WaLogicalSource *src, bool reply_requested)
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

/* ---------- rows ---------- */

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

/* Evaluate the row query over base_slot into row_slot; false if WHERE rejects it. */
static bool
evaluate_row(WaLogicalSource *src, int only)
{
	TupleTableSlot *out = src->row_slot;

	ExecClearTuple(out);
	for (int i = 0; i < src->n_exprs; i++)
	{
		out->tts_isnull[i] = true;
		out->tts_values[i] = (Datum) 0;
		if (only >= 0 && i != only)
			continue;
		out->tts_values[i] = ExecEvalExprSwitchContext(src->exprs[i], src->econtext,
													   &out->tts_isnull[i]);
	}
	ExecStoreVirtualTuple(out);
	return src->qual == NULL || ExecQual(src->qual, src->econtext);
}

static void
handle_insert(WaLogicalSource *src, StringInfo msg)
{
	LogicalRepTupleData tup;
	LogicalRepRelId relid;
	bool		counts;
	MemoryContext old;

	/* the message's and the row's memory lasts until the next row */
	ResetExprContext(src->econtext);
	old = MemoryContextSwitchTo(src->econtext->ecxt_per_tuple_memory);
	relid = logicalrep_read_insert(msg, &tup);
	if (src->skip_txn || !src->stream_is_ours || relid != src->stream_relid)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	load_row(src, &tup);
	counts = evaluate_row(src, -1);
	MemoryContextSwitchTo(old);
	src->rows_read++;
	src->row_fn(src->fn_arg, src->row_slot, (int64) src->txn_commit_lsn, counts);
}

/* An update or delete: report it with the event time of the row. */
static void
handle_change(WaLogicalSource *src, StringInfo msg, char kind)
{
	LogicalRepTupleData oldtup;
	LogicalRepTupleData newtup;
	LogicalRepTupleData *tup;
	bool		has_old = false;
	LogicalRepRelId relid;
	int			event_time = src->query->n_keys;
	MemoryContext old;

	ResetExprContext(src->econtext);
	old = MemoryContextSwitchTo(src->econtext->ecxt_per_tuple_memory);
	if (kind == 'U')
	{
		relid = logicalrep_read_update(msg, &has_old, &oldtup, &newtup);
		tup = &newtup;
	}
	else
	{
		relid = logicalrep_read_delete(msg, &oldtup);
		tup = &oldtup;
	}
	if (src->skip_txn || !src->stream_is_ours || relid != src->stream_relid)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	if (kind == 'U')
		src->updates++;
	else
		src->deletes++;
	load_row(src, tup);
	(void) evaluate_row(src, event_time);
	MemoryContextSwitchTo(old);
	src->change_fn(src->fn_arg, kind, (int64) src->txn_commit_lsn,
				   src->row_slot->tts_values[event_time],
				   src->row_slot->tts_isnull[event_time]);
}

/* A relation message: is it the source, and where are its columns? */
static void
handle_relation(WaLogicalSource *src, StringInfo msg)
{
	LogicalRepRelation *rel = logicalrep_read_rel(msg);
	TupleDesc	desc = src->base_slot->tts_tupleDescriptor;
	MemoryContext old;

	if (OidIsValid(src->remote_relid))
		src->stream_is_ours = rel->remoteid == src->remote_relid;
	else
		src->stream_is_ours = strcmp(rel->nspname, src->remote_nspname) == 0 &&
			strcmp(rel->relname, src->remote_relname) == 0;
	if (!src->stream_is_ours)
		return;
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
				src->in_txn = true;
				src->txn_commit_lsn = begin.final_lsn;
				/* committed before the offset this worker started from */
				src->skip_txn = begin.final_lsn < src->applied_lsn;
				break;
			}
		case LOGICAL_REP_MSG_COMMIT:
			{
				LogicalRepCommitData commit;

				logicalrep_read_commit(msg, &commit);
				if (!src->skip_txn && commit.end_lsn > src->applied_lsn)
					src->applied_lsn = commit.end_lsn;
				src->in_txn = false;
				src->skip_txn = false;
				break;
			}
		case LOGICAL_REP_MSG_RELATION:
			handle_relation(src, msg);
			break;
		case LOGICAL_REP_MSG_INSERT:
			handle_insert(src, msg);
			break;
		case LOGICAL_REP_MSG_UPDATE:
		case LOGICAL_REP_MSG_DELETE:
			handle_change(src, msg, action);
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

		/*
		 * Between transactions, the sender has sent everything that
		 * committed before end: nothing up to there is left to apply.
		 */
		if (!src->in_txn && end > src->applied_lsn)
			src->applied_lsn = end;
		if (reply)
			send_feedback(src, false);
	}
}

/* ---------- an epoch's reading ---------- */

bool
wa_logical_read(WaLogicalSource *src, int limit)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   CATCH_UP_WAIT_MS);
	bool		asked = false;

	src->rows_read = 0;
	src->updates = 0;
	src->deletes = 0;
	/* a local source knows how far it must read to be caught up */
	src->target_lsn = src->remote_relid != InvalidOid ?
		GetFlushRecPtr(NULL) : InvalidXLogRecPtr;

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
		if (!src->in_txn &&
			(src->applied_lsn >= src->target_lsn ||
			 GetCurrentTimestamp() >= deadline))
			return src->applied_lsn >= src->target_lsn;
		if (!src->in_txn && !asked)
		{
			/* ask where the sender is: its reply moves applied_lsn on */
			send_feedback(src, true);
			asked = true;
		}
		(void) WaitLatchOrSocket(MyLatch,
								 WL_LATCH_SET | WL_SOCKET_READABLE | WL_TIMEOUT |
								 WL_EXIT_ON_PM_DEATH,
								 src->fd, 100, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

Datum
wa_logical_row_jsonb(WaLogicalSource *src)
{
	TupleTableSlot *slot = src->base_slot;
	HeapTuple	tuple = heap_form_tuple(slot->tts_tupleDescriptor,
										slot->tts_values, slot->tts_isnull);
	Datum		json = DirectFunctionCall1(row_to_json, HeapTupleGetDatum(tuple));

	return DirectFunctionCall1(jsonb_in,
							   CStringGetDatum(text_to_cstring(DatumGetTextPP(json))));
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
		send_feedback(src, false);
	}
}

void
wa_logical_wait(WaLogicalSource *src, long timeout_ms)
{
	int			events = WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH;

	/* the socket is known once the stream was read from */
	if (src->fd != PGINVALID_SOCKET)
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
