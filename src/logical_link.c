/*-------------------------------------------------------------------------
 *
 * logical_link.c
 *	  Replication connections and the replication slots of logical
 *	  pipelines.
 *
 * A pipeline whose source is on another server reads its changes the way
 * a subscription does: over a replication connection (libpqwalreceiver,
 * loaded on first use), from a slot there with PostgreSQL's pgoutput
 * plugin.  A source table of this server has a slot here, with windowagg's
 * own output plugin (output_plugin.c), which its worker decodes itself;
 * such slots are created and dropped in-process, with no connection.
 *
 * A pipeline's slot is created when the transaction that created the
 * pipeline commits, not inside it: a logical slot becomes usable only once
 * every transaction running at its creation has ended, and the creating
 * transaction is one of those.  Created at commit, the slot starts after
 * the pipeline's publication and tables exist, and every transaction that
 * commits after create_pipeline's is consumed.  drop_pipeline stops the
 * worker first (pipeline_requests.c), and the slot is dropped when the
 * dropping transaction commits; a worker that finds its pipeline gone
 * (DROP EXTENSION) drops the slot itself as it leaves.  A failure at commit is reported as a WARNING (the transaction
 * has committed by then): a missing slot is created by the worker, a
 * leftover one is named in the message.
 *
 * src/logical_link.c
 *
 *-------------------------------------------------------------------------
 */
#include "logical_source.h"

#include "access/xlog.h"
#include "access/xlogutils.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

char *
wa_logical_slot_name(int32 pipeline_id)
{
	return psprintf("windowagg_" UINT64_FORMAT "_%u_%d",
					GetSystemIdentifier(), MyDatabaseId, pipeline_id);
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
 * As pg_create_logical_replication_slot() does.  Waits for the
 * transactions running now to end; the calling transaction must not have
 * written anything (at commit, it has ended).
 */
XLogRecPtr
wa_logical_create_local_slot(const char *slot)
{
	LogicalDecodingContext *ctx;
	volatile XLogRecPtr lsn = InvalidXLogRecPtr;
	int			nest_level = NewGUCNestLevel();

	CheckLogicalDecodingRequirements();
	wa_allow_own_output_plugin();
	ReplicationSlotCreate(slot, true, RS_EPHEMERAL, false);
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
		ReplicationSlotPersist();
	}
	PG_FINALLY();
	{
		/* an ephemeral slot (creation failed) goes away on release */
		ReplicationSlotRelease();
		AtEOXact_GUC(false, nest_level);
	}
	PG_END_TRY();
	ereport(LOG,
			(errmsg("created replication slot \"%s\"", slot),
			 errdetail("Transactions that commit after %X/%X are consumed.",
					   LSN_FORMAT_ARGS(lsn))));
	return lsn;
}

/* Drop a local slot; waits while its worker is still letting go of it. */
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
	conn = walrcv_connect(conninfo, true, appname, &err);
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

	(void) walrcv_create_slot(conn, slot, false, false, CRS_NOEXPORT_SNAPSHOT,
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
 * Create or drop a pipeline's slot after its transaction committed.  No
 * error may escape from here: it is reported and the work left to the
 * worker (create) or to the user (drop).
 */
void
wa_logical_slot_at_commit(const char *conninfo, const char *slot, bool create)
{
	MemoryContext cxt = CurrentMemoryContext;
	WalReceiverConn *volatile conn = NULL;

	PG_TRY();
	{
		/* no catalog lookups here: the transaction is over */
		if (conninfo == NULL && create)
			(void) wa_logical_create_local_slot(slot);
		else if (conninfo == NULL)
			wa_logical_drop_local_slot(slot);
		else
		{
			conn = wa_logical_connect(conninfo, "windowagg");
			if (create)
				(void) wa_logical_create_slot(conn, slot);
			else
				(void) wa_logical_drop_slot(conn, slot, true);
			walrcv_disconnect(conn);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		if (conn != NULL)
			walrcv_disconnect(conn);
		if (create)
			ereport(WARNING,
					(errmsg("could not create replication slot \"%s\": %s",
							slot, edata->message),
					 errdetail("The pipeline's worker creates it when it starts; transactions that commit before then are not consumed.")));
		else
			ereport(WARNING,
					(errmsg("could not drop replication slot \"%s\": %s",
							slot, edata->message),
					 errhint("Drop it with pg_drop_replication_slot() on the source server: it holds back WAL.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

PG_FUNCTION_INFO_V1(wa_slot_name);

/* windowagg._slot_name(pipeline): for stat_pipelines. */
Datum
wa_slot_name(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(wa_logical_slot_name(PG_GETARG_INT32(0))));
}
