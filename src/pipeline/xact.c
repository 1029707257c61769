/*-------------------------------------------------------------------------
 *
 * xact.c
 *	  A transaction of a background process (the launcher's discovery, a
 *	  worker's set-up and restore): begun with SPI connected and a
 *	  snapshot, ended by committing.  An epoch begins its own, since it
 *	  picks its isolation level and lets the source act before the
 *	  snapshot (worker.c).
 *
 * src/pipeline/xact.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "access/xact.h"
#include "utils/snapmgr.h"

void
wa_begin_work(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
}

void
wa_end_work(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}
