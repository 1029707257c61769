/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: one background worker that keeps one pipeline worker
 *	  running per enabled pipeline.
 *
 * At start (server start, or after a crash restart, when shared memory is
 * empty) the launcher finds the pipelines of every database: it starts a
 * short-lived discovery worker per database, one at a time from its loop,
 * which claims a slot for each pipeline it finds there; a database whose
 * worker could not start is tried again later.  From then on
 * create_pipeline claims slots itself.  The launcher's loop starts a
 * worker for every slot that wants one, restarts failed workers after a growing delay (1 s doubling to
 * 1 min) unless they stopped on an error that only a user can fix, and
 * releases the slots of dropped pipelines once their worker has gone.
 * Backends wake it through its latch when they commit a change.
 *
 * src/pipeline/launcher.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"

#define MAX_RESTART_DELAY_MS (60 * 1000)
/* a worker that ran this long was healthy: its exit is not a failure streak */
#define HEALTHY_RUN_MS (60 * 1000)

/* What the launcher remembers about each slot's worker. */
typedef struct LaunchState
{
	BackgroundWorkerHandle *handle;
	uint32		generation;		/* slot generation the handle belongs to */
	int			failures;		/* consecutive failed runs */
	TimestampTz started_at;		/* of the current worker, or 0 */
	TimestampTz next_start;
	bool		warned_no_worker;	/* a WARNING said it could not start */
} LaunchState;

static LaunchState *launch_state;

/*
 * Pipelines waiting for room under the per-role and per-database limits
 * are retried as soon as room may have appeared (a worker stopped, the
 * configuration was reloaded), not after the growing failure delay.
 */
static bool room_changed = false;
static bool room_changed_next = false;

void
wa_launcher_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_library_name, "windowagg", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "wa_launcher_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "windowagg launcher", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "windowagg launcher", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

static bool
start_dynamic_worker(const char *function, const char *name, Oid dbid,
					 Datum arg, uint32 extra, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "windowagg", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, function[3] == 'd' ? "windowagg discovery" :
			"windowagg pipeline", BGW_MAXLEN);
	worker.bgw_main_arg = arg;
	memcpy(worker.bgw_extra, &dbid, sizeof(Oid));
	memcpy(worker.bgw_extra + sizeof(Oid), &extra, sizeof(uint32));
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, handle);
}

/* ---------- discovery ---------- */

static List *
list_databases(void)
{
	List	   *dbs = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (db->datallowconn && !db->datistemplate)
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			dbs = lappend_oid(dbs, db->oid);
			MemoryContextSwitchTo(old);
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return dbs;
}

/*
 * Discovery runs one database at a time, from the launcher's loop: a
 * database whose discovery worker could not start (max_worker_processes
 * was full) or failed is tried again, after a delay that doubles from 1 s
 * to 1 min, while the pipelines of the others already run.  A discovery
 * worker says it registered its database through discovered_dbid.
 */
typedef struct Discovery
{
	List	   *pending;		/* databases still to register */
	List	   *warned;			/* of those, the ones a WARNING named */
	Oid			current;		/* whose worker runs, or InvalidOid */
	BackgroundWorkerHandle *handle;
	int			failures;		/* in a row */
	TimestampTz next_try;
} Discovery;

static Discovery discovery;

static void
discovery_failed(TimestampTz now, const char *why)
{
	Oid			dbid = discovery.current != InvalidOid ? discovery.current :
		linitial_oid(discovery.pending);
	int			delay = Min(MAX_RESTART_DELAY_MS, 1000 << Min(discovery.failures, 6));

	if (!list_member_oid(discovery.warned, dbid))
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not find the pipelines of database %u: %s",
						dbid, why),
				 errdetail("They do not run until it can; it tries again after a growing delay."),
				 errhint("Raise max_worker_processes.")));
		discovery.warned = lappend_oid(discovery.warned, dbid);
		MemoryContextSwitchTo(old);
	}
	discovery.failures++;
	discovery.next_try = TimestampTzPlusMilliseconds(now, delay);
	/* the others first: one database must not hold up the rest */
	discovery.pending = list_delete_oid(discovery.pending, dbid);
	discovery.pending = lappend_oid(discovery.pending, dbid);
	discovery.current = InvalidOid;
}

static void
discovery_succeeded(Oid dbid)
{
	if (list_member_oid(discovery.warned, dbid))
	{
		ereport(LOG,
				(errmsg("found the pipelines of database %u", dbid)));
		discovery.warned = list_delete_oid(discovery.warned, dbid);
	}
	discovery.pending = list_delete_oid(discovery.pending, dbid);
	discovery.failures = 0;
	discovery.next_try = 0;
	discovery.current = InvalidOid;
}

/* One step of discovery, from each turn of the loop. */
static void
discovery_step(TimestampTz now, long *next_wakeup_ms)
{
	Oid			dbid;
	pid_t		pid;

	if (discovery.current != InvalidOid)
	{
		if (GetBackgroundWorkerPid(discovery.handle, &pid) != BGWH_STOPPED)
			return;				/* still at work: its exit wakes the loop */
		pfree(discovery.handle);
		discovery.handle = NULL;
		if (pg_atomic_read_u32(&wa_shared->discovered_dbid) == discovery.current)
			discovery_succeeded(discovery.current);
		else
			discovery_failed(now, "its discovery worker failed (see the server log)");
	}
	if (discovery.pending == NIL)
		return;
	if (discovery.next_try != 0 && now < discovery.next_try)
	{
		*next_wakeup_ms = Min(*next_wakeup_ms,
							  Max((long) ((discovery.next_try - now) / 1000), 1));
		return;
	}
	dbid = linitial_oid(discovery.pending);
	pg_atomic_write_u32(&wa_shared->discovered_dbid, InvalidOid);
	if (!start_dynamic_worker("wa_discovery_main", "windowagg discovery",
							  dbid, ObjectIdGetDatum(dbid), 0, &discovery.handle))
	{
		discovery.handle = NULL;
		discovery_failed(now, "no background worker slot was free");
		*next_wakeup_ms = Min(*next_wakeup_ms, 1000);
		return;
	}
	discovery.current = dbid;
}

/*
 * A discovery worker: claim a slot for each pipeline of its database.  It
 * connects as the bootstrap superuser with the database's settings, which
 * the database's owner chooses: it runs nothing but the catalog's own
 * statements, in their pinned scope (query/catalog_scope.c).
 */
void
wa_discovery_main(Datum arg)
{
	Oid			dbid = DatumGetObjectId(arg);

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);

	wa_begin_work(InvalidOid);
	if (OidIsValid(get_extension_oid("windowagg", true)))
		wa_register_database_pipelines();
	wa_end_work();
	pg_atomic_write_u32(&wa_shared->discovered_dbid, dbid);
	proc_exit(0);
}

void
wa_register_database_pipelines(void)
{
	uint64		n;
	WaPipelineEntry *entries = wa_catalog_pipeline_list(&n);

	for (uint64 i = 0; i < n; i++)
	{
		WaPipelineEntry *e = &entries[i];
		WaPipelineSlot *slot = wa_slot_claim(MyDatabaseId, e->id, e->owner,
											 e->name, e->result_table, false);

		SpinLockAcquire(&slot->mutex);
		slot->wanted = e->enabled;
		slot->status = e->enabled ? WA_STATUS_STARTING : WA_STATUS_PAUSED;
		SpinLockRelease(&slot->mutex);
	}
}

/* ---------- the loop ---------- */

static bool
worker_running(LaunchState *ls)
{
	pid_t		pid;

	if (ls->handle == NULL)
		return false;
	if (GetBackgroundWorkerPid(ls->handle, &pid) == BGWH_STOPPED)
	{
		pfree(ls->handle);
		ls->handle = NULL;
		return false;
	}
	return true;
}

static void
manage_slot(int i, TimestampTz now, long *next_wakeup_ms)
{
	WaPipelineSlot *slot = &wa_shared->slots[i];
	LaunchState *ls = &launch_state[i];
	bool		wanted;
	bool		drop;
	bool		needs_resume;
	bool		held;
	bool		restarting;
	WaPipelineStatus status;
	bool		had_worker = ls->handle != NULL;
	bool		running = worker_running(ls);

	if (!slot->in_use)
	{
		/* a worker of a released slot exits on its own (generation check) */
		return;
	}
	SpinLockAcquire(&slot->mutex);
	wanted = slot->wanted;
	drop = slot->drop_requested;
	needs_resume = slot->needs_resume;
	held = slot->held;
	status = slot->status;
	restarting = slot->restarting;
	SpinLockRelease(&slot->mutex);

	/* a worker that ran (not one that was only told to wait) made room */
	if (had_worker && !running && status != WA_STATUS_WAITING)
		room_changed_next = true;

	if (running && ls->generation != slot->generation)
		return;					/* an old pipeline's worker is still leaving */
	if (drop)
	{
		if (!running)
		{
			/*
			 * Normally the worker gave it back already; a live() may read,
			 * running the owner's final functions: never wait for it, or
			 * one role's code would hold up every pipeline.  Next pass.
			 */
			if (!LWLockConditionalAcquire(&slot->state_lock, LW_EXCLUSIVE))
			{
				*next_wakeup_ms = Min(*next_wakeup_ms, 100);
				return;
			}
			slot->engine = NULL;
			wa_arena_reset(&slot->arena);
			slot->state_changes++;
			LWLockRelease(&slot->state_lock);
			wa_slot_release(slot);
			ls->failures = 0;
			ls->next_start = 0;
		}
		return;
	}
	if (!wanted || needs_resume || held)
	{
		/* its worker left because it was asked to, or waits for a user */
		ls->started_at = 0;
		ls->failures = 0;
		ls->next_start = 0;
		return;
	}
	if (running)
		return;

	/*
	 * A worker that left while its pipeline still wanted one failed (a
	 * healthy worker only leaves when paused or dropped): wait before the
	 * next try, longer after each failure in a row.
	 */
	if (ls->generation != slot->generation)
	{
		ls->failures = 0;
		ls->next_start = 0;
	}
	else if (restarting)
	{
		/* it left to start again at once (worker.c, check_requests) */
		ls->next_start = 0;
		ls->started_at = 0;
	}
	else if (ls->started_at != 0 && ls->next_start == 0)
	{
		int			delay;

		if (status != WA_STATUS_FAILED && status != WA_STATUS_MEMORY_FULL &&
			status != WA_STATUS_WAITING)
		{
			/* it died before it could say why (a FATAL error, a crash) */
			SpinLockAcquire(&slot->mutex);
			slot->status = WA_STATUS_FAILED;
			strlcpy(slot->last_error, "the worker exited unexpectedly; see the server log",
					sizeof(slot->last_error));
			SpinLockRelease(&slot->mutex);
		}

		if (now - ls->started_at > HEALTHY_RUN_MS * 1000)
			ls->failures = 0;
		delay = Min(MAX_RESTART_DELAY_MS, 1000 << Min(ls->failures, 6));
		ls->failures++;
		ls->next_start = TimestampTzPlusMilliseconds(now, delay);
		ls->started_at = 0;
	}
	if (status == WA_STATUS_WAITING && room_changed)
		ls->next_start = 0;
	if (ls->next_start != 0 && now < ls->next_start)
	{
		long		wait = (long) ((ls->next_start - now) / 1000);

		*next_wakeup_ms = Min(*next_wakeup_ms, Max(wait, 1));
		return;
	}
	ls->next_start = 0;
	ls->generation = slot->generation;
	ls->started_at = now;
	if (!start_dynamic_worker("wa_worker_main",
							  psprintf("windowagg pipeline %s", slot->name),
							  slot->dbid, Int32GetDatum(i), slot->generation,
							  &ls->handle))
	{
		ls->handle = NULL;
		if (!ls->warned_no_worker)
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start a background worker for pipeline \"%s\" of database %u",
							slot->name, slot->dbid),
					 errdetail("It is tried again every second."),
					 errhint("Raise max_worker_processes.")));
		ls->warned_no_worker = true;
		SpinLockAcquire(&slot->mutex);
		slot->status = WA_STATUS_FAILED;
		strlcpy(slot->last_error,
				"could not start a background worker: raise max_worker_processes",
				sizeof(slot->last_error));
		SpinLockRelease(&slot->mutex);
		ls->next_start = TimestampTzPlusMilliseconds(now, 1000);
		ls->started_at = 0;
	}
	else
		ls->warned_no_worker = false;
}

void
wa_launcher_main(Datum arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	launch_state = MemoryContextAllocZero(TopMemoryContext,
										  sizeof(LaunchState) * wa_shared->max_pipelines);
	wa_shared->launcher_pid = MyProcPid;
	wa_shared->launcher_latch = MyLatch;

	/* no database: only the shared catalogs, to list the databases */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	discovery.pending = list_databases();

	for (;;)
	{
		long		next_wakeup_ms = 1000;
		TimestampTz now = GetCurrentTimestamp();

		room_changed = room_changed_next;
		room_changed_next = false;
		discovery_step(now, &next_wakeup_ms);
		for (int i = 0; i < wa_shared->max_pipelines; i++)
			manage_slot(i, now, &next_wakeup_ms);
		/* a worker stopped in this pass: let waiting ones try at once */
		if (room_changed_next)
			next_wakeup_ms = 1;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 next_wakeup_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			room_changed_next = true;	/* a limit may have been raised */
		}
	}
}
