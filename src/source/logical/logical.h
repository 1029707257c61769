/*-------------------------------------------------------------------------
 *
 * logical.h
 *	  Logical replication sources, as the rest of windowagg sees them:
 *	  slots and connections (link.c) and who may read a table this way.
 *	  A worker reads them through src/source/source.h; the transports'
 *	  own declarations are in logical_internal.h.
 *
 * src/source/logical/logical.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_LOGICAL_SOURCE_H
#define WINDOWAGG_LOGICAL_SOURCE_H

#include "query/query.h"

#include "access/xlogdefs.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/relcache.h"
#include "replication/logicalproto.h"
#include "replication/walreceiver.h"

/* ---------- connections and slots (link.c) ---------- */

/* A name for a new pipeline's slot (on another server if remote). */
extern char *wa_logical_new_slot_name(bool remote);
/* Let this process use windowagg's output plugin (see link.c). */
extern void wa_allow_own_output_plugin(void);
/* A slot of this server, with the output plugin "windowagg". */
extern XLogRecPtr wa_logical_create_local_slot(const char *slot, bool keep);
extern void wa_logical_drop_local_slot(const char *slot);
/* At the end of the transaction that created a local slot with keep. */
extern void wa_logical_finish_slot(const char *slot, bool committed);
extern void wa_logical_drop_slot_at_commit(const char *slot);
extern void wa_logical_drop_remote_slot(const char *conninfo, const char *slot);
/* Connect for logical replication; errors name the pipeline's source. */
extern WalReceiverConn *wa_logical_connect(const char *conninfo,
										   const char *appname);
extern bool wa_logical_slot_exists(WalReceiverConn *conn, const char *slot);
extern XLogRecPtr wa_logical_create_slot(WalReceiverConn *conn,
										 const char *slot);
/* Drop a slot (gone already is fine); false if in use and not wait. */
extern bool wa_logical_drop_slot(WalReceiverConn *conn, const char *slot,
								 bool wait);
/* Run one SQL statement over the connection; rows come back as text. */
extern WalRcvExecResult *wa_logical_exec(WalReceiverConn *conn,
										 const char *sql, int nfields,
										 const Oid *types);


/* ---------- who may read a table this way (logical.c) ---------- */

/*
 * Error unless owner may read relid through a logical source with query q:
 * the whole rows, and (local) a replication slot of this server, without a
 * virtual generated column among those q reads (no change carries one).
 */
extern void wa_logical_check_source(Oid relid, Oid owner, bool local,
									const WaAggQuery *q);

#endif							/* WINDOWAGG_LOGICAL_SOURCE_H */
