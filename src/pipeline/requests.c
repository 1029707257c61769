/*-------------------------------------------------------------------------
 *
 * requests.c
 *	  Apply create/pause/resume/drop requests to the shared slots only when
 *	  the transaction that made them commits.
 *
 * The catalog rows that define a pipeline are transactional; its slot in
 * shared memory is not.  So a SQL function that changes a pipeline only
 * queues a request here, and the request reaches the slot (and wakes the
 * launcher or the worker) at commit.  A pipeline created in a transaction
 * that aborts gives its slot back; requests made in an aborted
 * subtransaction are forgotten.
 *
 * src/pipeline/requests.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"
#include "source/logical/logical.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"

typedef struct PendingRequest
{
	WaPipelineSlot *slot;		/* NULL for a replication slot's request */
	char	   *slot_name;		/* a replication slot's request */
	uint32		generation;		/* the slot's, when the request was made */
	WaRequest	request;
	SubTransactionId subid;
} PendingRequest;

/* Requests of the current transaction, in TopTransactionContext. */
static List *pending = NIL;

void
wa_request_at_commit(WaPipelineSlot *slot, WaRequest request)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	PendingRequest *r = palloc(sizeof(PendingRequest));

	r->slot = slot;
	r->generation = slot->generation;
	r->request = request;
	r->subid = GetCurrentSubTransactionId();
	pending = lappend(pending, r);
	MemoryContextSwitchTo(old);
}

/*
 * A local pipeline's replication slot: the one create_pipeline made is kept
 * at commit (before the commit's other requests start its worker) and goes
 * at abort; a dropped pipeline's goes at commit, after the other requests
 * (see link.c).
 */
void
wa_request_slot_at_commit(const char *slot_name, bool create)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	PendingRequest *r = palloc0(sizeof(PendingRequest));

	r->slot_name = pstrdup(slot_name);
	r->request = create ? WA_REQUEST_CREATE_SLOT : WA_REQUEST_DROP_SLOT;
	r->subid = GetCurrentSubTransactionId();
	pending = lappend(pending, r);
	MemoryContextSwitchTo(old);
}

static void
apply_request(PendingRequest *r)
{
	WaPipelineSlot *slot = r->slot;

	if (slot->generation != r->generation)
		return;					/* the slot was released meanwhile */
	SpinLockAcquire(&slot->mutex);
	switch (r->request)
	{
		case WA_REQUEST_CREATE:
		case WA_REQUEST_RESUME:
			slot->wanted = true;
			slot->needs_resume = false;
			slot->failure_streak = 0;
			if (slot->status == WA_STATUS_PAUSED || slot->status == WA_STATUS_STOPPED)
				slot->status = WA_STATUS_STARTING;
			break;
		case WA_REQUEST_PAUSE:
			slot->wanted = false;
			slot->pauses++;
			break;
		case WA_REQUEST_DROP:
			slot->wanted = false;
			slot->drop_requested = true;
			break;
		case WA_REQUEST_HOLD:
			break;				/* a drop follows, or the abort undoes it */
		case WA_REQUEST_CREATE_SLOT:
		case WA_REQUEST_DROP_SLOT:
			break;				/* not a pipeline slot's request */
	}
	SpinLockRelease(&slot->mutex);
	wa_wake_worker(slot);
	wa_wake_launcher();
}

/* The (sub)transaction that made a request aborted: undo what it did now. */
static void
forget_request(PendingRequest *r)
{
	if (r->request == WA_REQUEST_CREATE_SLOT)
		wa_logical_finish_slot(r->slot_name, false);
	if (r->slot == NULL || r->slot->generation != r->generation)
		return;
	if (r->request == WA_REQUEST_CREATE)
		wa_slot_release(r->slot);
	else if (r->request == WA_REQUEST_HOLD)
	{
		SpinLockAcquire(&r->slot->mutex);
		r->slot->held = false;
		SpinLockRelease(&r->slot->mutex);
		wa_wake_launcher();
	}
}

/*
 * A drop stops the pipeline's worker before it locks or drops anything:
 * an epoch in flight could otherwise wait for the dropping transaction
 * while holding locks it needs, and a logical worker must let go of its
 * replication slot.  The worker stays away until the transaction ends; if
 * it aborts, the launcher starts it again.
 */
void
wa_hold_worker(WaPipelineSlot *slot, const char *name)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   60 * 1000);

	SpinLockAcquire(&slot->mutex);
	slot->held = true;
	SpinLockRelease(&slot->mutex);
	wa_request_at_commit(slot, WA_REQUEST_HOLD);
	wa_wake_worker(slot);
	for (;;)
	{
		pid_t		pid;

		SpinLockAcquire(&slot->mutex);
		pid = slot->pid;
		SpinLockRelease(&slot->mutex);
		if (pid == 0)
			break;
		if (GetCurrentTimestamp() >= deadline)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("the worker of pipeline \"%s\" did not stop", name),
					 errdetail("Its process %d still runs after a minute.", (int) pid)));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

static void
requests_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			foreach(lc, pending)
			{
				PendingRequest *r = lfirst(lc);

				if (r->request == WA_REQUEST_CREATE_SLOT)
					wa_logical_finish_slot(r->slot_name, true);
			}
			foreach(lc, pending)
			{
				PendingRequest *r = lfirst(lc);

				if (r->slot != NULL)
					apply_request(r);
			}
			foreach(lc, pending)
			{
				PendingRequest *r = lfirst(lc);

				if (r->request == WA_REQUEST_DROP_SLOT)
					wa_logical_drop_slot_at_commit(r->slot_name);
			}
			pending = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			foreach(lc, pending)
			{
				PendingRequest *r = lfirst(lc);

				forget_request(r);
			}
			pending = NIL;
			break;
		case XACT_EVENT_PREPARE:
			/* refused in wa_requests_check_prepare; nothing to keep */
			pending = NIL;
			break;
		default:
			break;
	}
}

static void
requests_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		PendingRequest *r = lfirst(lc);

		if (r->subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			r->subid = parentSubid;
		else if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			forget_request(r);
			pending = foreach_delete_current(pending, lc);
		}
	}
}

static void
requests_pre_prepare_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_PREPARE && pending != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot prepare a transaction that changed a windowagg pipeline")));
}

void
wa_requests_install_callbacks(void)
{
	RegisterXactCallback(requests_xact_callback, NULL);
	RegisterXactCallback(requests_pre_prepare_callback, NULL);
	RegisterSubXactCallback(requests_subxact_callback, NULL);
}
