/*-------------------------------------------------------------------------
 *
 * xact.c
 *	  A transaction of a background process (the launcher's discovery, a
 *	  worker's set-up, restore and epochs), run as a security-restricted
 *	  operation.
 *
 * A pipeline's worker runs its owner's code (the query, triggers on the
 * result tables), which must never switch back to the worker's own role,
 * the bootstrap superuser: so every transaction of the worker runs as a
 * security-restricted operation, entered right after the transaction
 * starts and left right before it commits.  PostgreSQL requires the
 * security context to be clear outside transactions (StartTransaction
 * asserts it), and an aborting transaction restores the identity it
 * started with by itself.  No code of anybody's runs between a worker's
 * transactions.
 *
 * wa_begin_work also connects SPI and pushes a snapshot; an epoch begins
 * its own transaction, since it picks its isolation level and lets the
 * source act before the snapshot (worker.c), and enters and leaves the
 * restricted operation with the functions below.
 *
 * src/pipeline/xact.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/snapmgr.h"

static Oid	outer_user = InvalidOid;
static int	outer_sec_context = 0;

void
wa_enter_restricted(Oid role)
{
	Assert(IsTransactionState());
	GetUserIdAndSecContext(&outer_user, &outer_sec_context);
	SetUserIdAndSecContext(OidIsValid(role) ? role : outer_user,
						   outer_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

void
wa_leave_restricted(void)
{
	SetUserIdAndSecContext(outer_user, outer_sec_context);
}

void
wa_begin_work(Oid role)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	wa_enter_restricted(role);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
}

void
wa_end_work(void)
{
	SPI_finish();
	PopActiveSnapshot();
	wa_leave_restricted();
	CommitTransactionCommand();
}
