/*-------------------------------------------------------------------------
 *
 * pipeline_requests.c
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
 * src/pipeline_requests.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline.h"

#include "access/xact.h"

typedef struct PendingRequest
{
	WaPipelineSlot *slot;
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
			if (slot->status == WA_STATUS_PAUSED || slot->status == WA_STATUS_STOPPED)
				slot->status = WA_STATUS_STARTING;
			break;
		case WA_REQUEST_PAUSE:
			slot->wanted = false;
			break;
		case WA_REQUEST_DROP:
			slot->wanted = false;
			slot->drop_requested = true;
			break;
	}
	SpinLockRelease(&slot->mutex);
	wa_wake_worker(slot);
	wa_wake_launcher();
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
				apply_request(lfirst(lc));
			pending = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			foreach(lc, pending)
			{
				PendingRequest *r = lfirst(lc);

				if (r->request == WA_REQUEST_CREATE &&
					r->slot->generation == r->generation)
					wa_slot_release(r->slot);
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
			if (r->request == WA_REQUEST_CREATE &&
				r->slot->generation == r->generation)
				wa_slot_release(r->slot);
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
