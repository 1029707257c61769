/*-------------------------------------------------------------------------
 *
 * link.c
 *	  Replication connections and the replication slots of logical
 *	  pipelines.
 *
 * A pipeline whose source is on another server reads its changes the way
 * a subscription does: over a replication connection (libpqwalreceiver,
 * loaded on first use), from a slot there with PostgreSQL's pgoutput
 * plugin.  A source table of this server has a slot here, with windowagg's
 * own output plugin (plugin.c), which its worker decodes itself;
 * such slots are created and dropped in-process, with no connection.
 *
 * A local pipeline's slot is created by create_pipeline before it writes
 * anything (a logical slot cannot become consistent while a transaction
 * that has written, like create_pipeline's own, still runs), and kept
 * ephemeral until that transaction commits: every transaction that
 * commits after create_pipeline's is consumed, and an aborted
 * create_pipeline leaves no slot behind.  A remote pipeline's worker
 * creates its slot when it first starts.  drop_pipeline stops the worker
 * first; a local slot is dropped when the drop commits, a remote one by
 * drop_pipeline itself (like DROP SUBSCRIPTION, not undone by a
 * rollback).  A worker that finds its pipeline gone (DROP EXTENSION)
 * drops the slot as it leaves.  Work at commit or abort never throws (see
 * run_at_end_of_transaction).
 *
 * src/source/logical/link.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/logical/logical.h"

#include "access/xlog.h"
#include "access/xlogutils.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/memutils.h"

/*
 * A new slot's name: unique on this server (and, for a remote source, on
 * the source server too, whose other clients may be other servers' pipelines).
 */
char *
wa_logical_new_slot_name(bool remote)
{
	uint64		now = (uint64) GetCurrentTimestamp();

	if (remote)
		return psprintf("windowagg_%llx_%x_%llx",
						(unsigned long long) GetSystemIdentifier(),
						(unsigned) MyProcPid, (unsigned long long) now);
	return psprintf("windowagg_%x_%x_%llx", MyDatabaseId, (unsigned) MyProcPid,
					(unsigned long long) now);
}

/*
 * Servers that allow only listed output plugins (output_plugin_libraries,
 * in recent minor releases) would refuse windowagg's own.  The library is
 * preloaded, so the administrator trusts it already; it allows itself for
 * the current process only (a worker, or a backend creating a slot), and
 * other readers of its slots still need it listed.
 */
void
wa_allow_own_output_plugin(void)
{
	if (GetConfigOption("output_plugin_libraries", true, false) != NULL)
		(void) set_config_option("output_plugin_libraries", "windowagg",
								 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
}

/*
 * As pg_create_logical_replication_slot() does: waits for the transactions
 * running now to end; the calling transaction must not have written
 * anything.  With keep, the slot stays ephemeral and acquired by this
 * backend, to be persisted when the transaction commits or dropped when it
 * aborts (wa_logical_finish_slot); else it is persisted now.
 */
XLogRecPtr
wa_logical_create_local_slot(const char *slot, bool keep)
{
	LogicalDecodingContext *ctx;
	volatile XLogRecPtr lsn = InvalidXLogRecPtr;
	int			nest_level = NewGUCNestLevel();

	if (GetTopTransactionIdIfAny() != InvalidTransactionId)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("a pipeline with a logical source must be created before any write of its transaction"),
				 errdetail("Its replication slot is created first, and a transaction that has written cannot create one."),
				 errhint("Call create_pipeline in a transaction of its own.")));
	if (MyReplicationSlot != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("this session already uses replication slot \"%s\"",
						NameStr(MyReplicationSlot->data.name)),
				 errhint("Create one logical pipeline per transaction.")));
	CheckLogicalDecodingRequirements();
	wa_allow_own_output_plugin();
	wa_replication_slot_create(slot, true, RS_EPHEMERAL, false);
	PG_TRY();
	{
		ctx = CreateInitDecodingContext("windowagg", NIL, false, InvalidXLogRecPtr,
										XL_ROUTINE(.page_read = read_local_xlog_page,
												   .segment_open = wal_segment_open,
												   .segment_close = wal_segment_close),
										NULL, NULL, NULL);
		DecodingContextFindStartpoint(ctx);
		lsn = MyReplicationSlot->data.confirmed_flush;
		FreeDecodingContext(ctx);
		if (!keep)
		{
			ReplicationSlotPersist();
			ReplicationSlotRelease();
		}
	}
	PG_CATCH();
	{
		/* an ephemeral slot goes away on release */
		if (MyReplicationSlot != NULL)
			ReplicationSlotRelease();
		PG_RE_THROW();
	}
	PG_END_TRY();
	AtEOXact_GUC(false, nest_level);
	ereport(LOG,
			(errmsg("created replication slot \"%s\"", slot),
			 errdetail("Transactions that commit after %X/%X are consumed.",
					   LSN_FORMAT_ARGS(lsn))));
	return lsn;
}

/* Drop a local slot; waits while a process is still letting go of it. */
void
wa_logical_drop_local_slot(const char *slot)
{
	if (SearchNamedReplicationSlot(slot, true) != NULL)
		ReplicationSlotDrop(slot, false);
}

static void
load_walreceiver(void)
{
	if (WalReceiverFunctions == NULL)
		load_file("libpqwalreceiver", false);
	if (WalReceiverFunctions == NULL)
		elog(ERROR, "libpqwalreceiver did not initialize");
}

WalReceiverConn *
wa_logical_connect(const char *conninfo, const char *appname)
{
	WalReceiverConn *conn;
	char	   *err = NULL;

	load_walreceiver();
	conn = wa_walrcv_connect(conninfo, appname, &err);
	if (conn == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not connect to the logical replication source: %s",
						err ? err : "unknown error")));
	return conn;
}

WalRcvExecResult *
wa_logical_exec(WalReceiverConn *conn, const char *sql, int nfields,
				const Oid *types)
{
	WalRcvExecResult *res = walrcv_exec(conn, sql, nfields, types);

	if (res->status != WALRCV_OK_TUPLES && res->status != WALRCV_OK_COMMAND)
		ereport(ERROR,
				(errcode(res->sqlstate ? res->sqlstate : ERRCODE_CONNECTION_FAILURE),
				 errmsg("the logical replication source failed: %s",
						res->err ? res->err : "unknown error")));
	return res;
}

bool
wa_logical_slot_exists(WalReceiverConn *conn, const char *slot)
{
	Oid			types[1] = {INT4OID};
	WalRcvExecResult *res;
	bool		found;

	res = wa_logical_exec(conn,
						  psprintf("SELECT 1 FROM pg_catalog.pg_replication_slots WHERE slot_name = %s",
								   quote_literal_cstr(slot)),
						  1, types);
	found = tuplestore_tuple_count(res->tuplestore) > 0;
	walrcv_clear_result(res);
	return found;
}

XLogRecPtr
wa_logical_create_slot(WalReceiverConn *conn, const char *slot)
{
	XLogRecPtr	lsn = InvalidXLogRecPtr;

	(void) wa_walrcv_create_slot(conn, slot, false, false, CRS_NOEXPORT_SNAPSHOT,
							  &lsn);
	ereport(LOG,
			(errmsg("created replication slot \"%s\"", slot),
			 errdetail("Transactions that commit after %X/%X are consumed.",
					   LSN_FORMAT_ARGS(lsn))));
	return lsn;
}

bool
wa_logical_drop_slot(WalReceiverConn *conn, const char *slot, bool wait)
{
	WalRcvExecResult *res;
	bool		in_use;

	res = walrcv_exec(conn, psprintf("DROP_REPLICATION_SLOT %s%s",
									 quote_identifier(slot), wait ? " WAIT" : ""),
					  0, NULL);
	in_use = res->sqlstate == ERRCODE_OBJECT_IN_USE;
	if (res->status != WALRCV_OK_COMMAND && !in_use &&
		res->sqlstate != ERRCODE_UNDEFINED_OBJECT)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not drop replication slot \"%s\": %s", slot,
						res->err ? res->err : "unknown error")));
	walrcv_clear_result(res);
	return !in_use;
}

/*
 * Work at the end of a transaction that must not throw: the transaction has
 * committed (or is aborting) and interrupts are held.  An error is turned
 * into a WARNING, after undoing what the error handling assumes a
 * rollback will undo (errfinish zeroes the interrupt holdoff count).
 */
static void
run_at_end_of_transaction(void (*fn) (const char *slot), const char *slot,
						  const char *what)
{
	MemoryContext cxt = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;

	PG_TRY();
	{
		fn(slot);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		LWLockReleaseAll();
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(WARNING,
				(errmsg("could not %s replication slot \"%s\": %s",
						what, slot, edata->message),
				 errhint("Check pg_replication_slots: a slot no pipeline uses holds back WAL.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

static void
persist_slot(const char *slot)
{
	if (MyReplicationSlot != NULL &&
		strcmp(NameStr(MyReplicationSlot->data.name), slot) == 0)
	{
		ReplicationSlotPersist();
		ReplicationSlotRelease();
	}
}

static void
forget_slot(const char *slot)
{
	/* an ephemeral slot goes away on release */
	if (MyReplicationSlot != NULL &&
		strcmp(NameStr(MyReplicationSlot->data.name), slot) == 0)
		ReplicationSlotRelease();
}

/* A dropped pipeline's local slot, once its worker has let go of it. */
static void
drop_idle_slot(const char *slot)
{
	ReplicationSlot *s = SearchNamedReplicationSlot(slot, true);
	pid_t		active_pid = 0;

	if (s == NULL)
		return;
	SpinLockAcquire(&s->mutex);
	active_pid = s->active_pid;
	SpinLockRelease(&s->mutex);
	if (active_pid == 0)
		ReplicationSlotDrop(slot, true);
}

/*
 * The local slot create_pipeline made (wa_logical_create_local_slot with
 * keep) becomes permanent if its transaction committed, and goes away if
 * it aborted.
 */
void
wa_logical_finish_slot(const char *slot, bool committed)
{
	if (committed)
		run_at_end_of_transaction(persist_slot, slot, "keep");
	else
		run_at_end_of_transaction(forget_slot, slot, "drop");
}

/* At commit of a drop_pipeline: its worker has stopped (wa_hold_worker). */
void
wa_logical_drop_slot_at_commit(const char *slot)
{
	run_at_end_of_transaction(drop_idle_slot, slot, "drop");
}

/*
 * A remote source's slot goes with drop_pipeline, as a subscription's does
 * (and with a worker whose pipeline is gone).  WAIT: the sender its worker
 * streamed from may still be leaving.
 */
void
wa_logical_drop_remote_slot(const char *conninfo, const char *slot)
{
	WalReceiverConn *conn = wa_logical_connect(conninfo, "windowagg");

	PG_TRY();
	{
		(void) wa_logical_drop_slot(conn, slot, true);
	}
	PG_FINALLY();
	{
		walrcv_disconnect(conn);
	}
	PG_END_TRY();
}
