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
 * starts and left once it has committed (so that commit-time work runs
 * restricted too).  PostgreSQL requires the security context to be clear
 * when a transaction starts (StartTransaction asserts it), and an
 * aborting transaction restores the identity it started with by itself.
 * Between a worker's transactions it is the bootstrap superuser without
 * restriction, which is safe only because nothing runs SQL or anybody's
 * code there: keep it so.
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
static bool restricted = false;

void
wa_enter_restricted(Oid role)
{
	Assert(IsTransactionState());
	/* one level only: the identity to go back to is kept here */
	if (restricted)
		elog(ERROR, "already in a worker's restricted operation");
	restricted = true;
	GetUserIdAndSecContext(&outer_user, &outer_sec_context);
	SetUserIdAndSecContext(OidIsValid(role) ? role : outer_user,
						   outer_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

void
wa_leave_restricted(void)
{
	SetUserIdAndSecContext(outer_user, outer_sec_context);
	restricted = false;
}

/* After an abort, which restored the identity itself. */
void
wa_forget_restricted(void)
{
	restricted = false;
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
	CommitTransactionCommand();
	wa_leave_restricted();
}
