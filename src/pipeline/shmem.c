/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  windowagg's shared memory: the pipeline slots and the state pool.
 *
 * Both live in the main shared memory segment, reserved at server start
 * (windowagg.max_pipelines slots, windowagg.shared_memory megabytes of
 * pool).  The pool is a DSA area created in place and capped at its
 * initial size, so it never grows into DSM segments: all of it stays in
 * the main segment, which every PostgreSQL process maps at the same
 * address.  That is what lets a pipeline's engine keep ordinary pointers
 * (PostgreSQL's own shared structures, PGPROC lists for instance, rely on
 * the same property) while any backend reads its live windows.
 *
 * Each pipeline's engine allocates through an arena: a list of the blocks
 * it holds, with a byte count checked against windowagg.max_state_memory.
 * The count is what the blocks take from the pool (their headers and the
 * pool's rounding included), so that no pipeline holds more of the pool
 * than that setting allows.  When a worker fails halfway through a change,
 * the arena is freed as a whole and the state is rebuilt from the last
 * checkpoint.
 *
 * Slots are limited per role and per database (windowagg.max_pipelines_
 * per_role, max_pipelines_per_database; superusers' pipelines are exempt),
 * so that one role or one database cannot take every slot, and with them
 * every background worker and the pool: create_pipeline claims within the
 * limits, and a worker starts only while its owner and its database run
 * fewer pipelines than the limits allow (a pipeline over a lowered limit
 * keeps running until it restarts, then waits for room).
 *
 * src/pipeline/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "commands/dbcommands.h"
#include "utils/timeout.h"

WaShared   *wa_shared = NULL;

static dsa_area *pool_area = NULL;
static LWLock *slots_lock = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

#define SLOTS_TRANCHE "windowagg slots"

static Size
shared_struct_size(void)
{
	return MAXALIGN(add_size(offsetof(WaShared, slots),
							 mul_size(wa_max_pipelines, sizeof(WaPipelineSlot))));
}

static Size
pool_size(void)
{
	return mul_size((Size) wa_shared_memory_mb, 1024 * 1024);
}

static void
wa_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(shared_struct_size(), pool_size()));
	RequestNamedLWLockTranche(SLOTS_TRANCHE, 1);
}

static void
wa_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wa_shared = ShmemInitStruct("windowagg",
								add_size(shared_struct_size(), pool_size()),
								&found);
	if (!found)
	{
		dsa_area   *area;

		memset(wa_shared, 0, shared_struct_size());
		wa_shared->tranche_id = LWLockNewTrancheId();
		wa_shared->max_pipelines = wa_max_pipelines;
		wa_shared->pool_offset = shared_struct_size();
		wa_shared->pool_size = pool_size();
		pg_atomic_init_u32(&wa_shared->discovered_dbid, InvalidOid);
		for (int i = 0; i < wa_max_pipelines; i++)
		{
			WaPipelineSlot *slot = &wa_shared->slots[i];

			SpinLockInit(&slot->mutex);
			LWLockInitialize(&slot->state_lock, wa_shared->tranche_id);
			slot->arena.head = InvalidDsaPointer;
		}
		area = dsa_create_in_place((char *) wa_shared + wa_shared->pool_offset,
								   wa_shared->pool_size,
								   wa_shared->tranche_id, NULL);
		dsa_set_size_limit(area, wa_shared->pool_size);
		/* the postmaster's attachment keeps the area alive; nothing to free */
		dsa_pin(area);
	}
	LWLockRelease(AddinShmemInitLock);
	LWLockRegisterTranche(wa_shared->tranche_id, "windowagg");
	slots_lock = &(GetNamedLWLockTranche(SLOTS_TRANCHE))->lock;
}

void
wa_shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = wa_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = wa_shmem_startup;
}

void
wa_require_shared(void)
{
	if (wa_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipelines need the windowagg library in shared_preload_libraries"),
				 errhint("Add windowagg to shared_preload_libraries in postgresql.conf and restart the server.")));
}

dsa_area *
wa_pool(void)
{
	wa_require_shared();
	if (pool_area == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		pool_area = dsa_attach_in_place((char *) wa_shared + wa_shared->pool_offset,
										NULL);
		MemoryContextSwitchTo(old);
	}
	return pool_area;
}

/* ---------- slots ---------- */

/* A slot that holds a pipeline, not one whose drop is being completed. */
static bool
slot_counts(WaPipelineSlot *slot)
{
	bool		dropping;

	if (!slot->in_use)
		return false;
	SpinLockAcquire(&slot->mutex);
	dropping = slot->drop_requested;
	SpinLockRelease(&slot->mutex);
	return !dropping;
}

/* Error for a role or a database over its limit (slots lock not held). */
static void
limit_reached(Oid dbid, Oid owner, int of_role, int of_db)
{
	if (of_role >= wa_max_pipelines_per_role)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role \"%s\" already owns %d pipelines",
						GetUserNameFromId(owner, false), of_role),
				 errdetail("A role that is not a superuser may own at most %d (windowagg.max_pipelines_per_role).",
						   wa_max_pipelines_per_role),
				 errhint("Drop one of them, or ask an administrator to raise windowagg.max_pipelines_per_role.")));
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("database \"%s\" already has %d pipelines",
					get_database_name(dbid), of_db),
			 errdetail("Roles that are not superusers may create pipelines in a database that has fewer than %d (windowagg.max_pipelines_per_database).",
					   wa_max_pipelines_per_database),
			 errhint("Drop one of them, or ask an administrator to raise windowagg.max_pipelines_per_database.")));
}

static bool
over_limits(int of_role, int of_db)
{
	return of_role >= wa_max_pipelines_per_role ||
		of_db >= wa_max_pipelines_per_database;
}

void
wa_check_pipeline_limits(Oid dbid, Oid owner)
{
	int			of_role = 0;
	int			of_db = 0;

	wa_require_shared();
	LWLockAcquire(slots_lock, LW_SHARED);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];

		if (slot_counts(slot))
		{
			of_role += slot->owner == owner;
			of_db += slot->dbid == dbid;
		}
	}
	LWLockRelease(slots_lock);
	if (over_limits(of_role, of_db))
		limit_reached(dbid, owner, of_role, of_db);
}

WaPipelineSlot *
wa_slot_claim(Oid dbid, int32 pipeline_id, Oid owner, const char *name,
			  Oid result_table, bool check_limits)
{
	WaPipelineSlot *found = NULL;
	bool		registered = false;
	int			of_role = 0;
	int			of_db = 0;

	wa_require_shared();
	LWLockAcquire(slots_lock, LW_EXCLUSIVE);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];

		if (slot->in_use && slot->dbid == dbid &&
			slot->pipeline_id == pipeline_id)
		{
			found = slot;		/* already registered (discovery ran twice) */
			registered = true;
			break;
		}
		if (!slot->in_use && found == NULL)
			found = slot;
		if (slot_counts(slot))
		{
			of_role += slot->owner == owner;
			of_db += slot->dbid == dbid;
		}
	}
	if (!registered && check_limits && over_limits(of_role, of_db))
	{
		LWLockRelease(slots_lock);
		limit_reached(dbid, owner, of_role, of_db);
	}
	if (found != NULL && !found->in_use)
	{
		found->in_use = true;
		found->generation++;
		found->dbid = dbid;
		found->pipeline_id = pipeline_id;
		found->owner = owner;
		found->result_table = result_table;
		found->admitted = false;
		strlcpy(found->name, name, NAMEDATALEN);
		SpinLockAcquire(&found->mutex);
		found->wanted = false;
		found->drop_requested = false;
		found->needs_resume = false;
		found->held = false;
		found->pauses = 0;
		found->restarting = false;
		found->flush_request = 0;
		found->snapshot_seq = 0;
		found->caught_up_seq = 0;
		found->flushed_seq = 0;
		found->pid = 0;
		found->worker_latch = NULL;
		found->status = WA_STATUS_STARTING;
		found->last_error[0] = '\0';
		found->last_failure[0] = '\0';
		found->failure_streak = 0;
		memset(&found->stats, 0, sizeof(found->stats));
		SpinLockRelease(&found->mutex);
		found->engine = NULL;
		found->engine_dbid = InvalidOid;
		found->engine_pipeline_id = 0;
		found->engine_busy = false;
		found->writer_waiting = false;
		found->arena.head = InvalidDsaPointer;
		found->arena.bytes = 0;
		found->memory_limit_hit = false;
	}
	LWLockRelease(slots_lock);
	if (found == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many pipelines"),
				 errdetail("The server has room for %d pipelines (windowagg.max_pipelines).",
						   wa_shared->max_pipelines),
				 errhint("Drop a pipeline, or raise windowagg.max_pipelines and restart the server.")));
	return found;
}

void
wa_slot_release(WaPipelineSlot *slot)
{
	LWLockAcquire(slots_lock, LW_EXCLUSIVE);
	slot->in_use = false;
	slot->admitted = false;
	slot->generation++;
	LWLockRelease(slots_lock);
}

bool
wa_slot_admit(WaPipelineSlot *slot, Oid owner, bool exempt,
			  int *role_running, int *db_running)
{
	bool		admitted;

	*role_running = 0;
	*db_running = 0;
	LWLockAcquire(slots_lock, LW_EXCLUSIVE);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *other = &wa_shared->slots[i];

		if (other == slot || !other->in_use || !other->admitted)
			continue;
		*role_running += other->owner == owner;
		*db_running += other->dbid == slot->dbid;
	}
	admitted = exempt || (*role_running < wa_max_pipelines_per_role &&
						  *db_running < wa_max_pipelines_per_database);
	/* the catalog's word on the owner, whatever claimed the slot */
	slot->owner = owner;
	slot->admitted = admitted;
	LWLockRelease(slots_lock);
	return admitted;
}

void
wa_slot_leave(WaPipelineSlot *slot)
{
	LWLockAcquire(slots_lock, LW_EXCLUSIVE);
	slot->admitted = false;
	LWLockRelease(slots_lock);
}

WaPipelineSlot *
wa_slot_find(Oid dbid, const char *name)
{
	WaPipelineSlot *found = NULL;

	wa_require_shared();
	LWLockAcquire(slots_lock, LW_SHARED);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];

		bool		dropping;

		if (!slot->in_use || slot->dbid != dbid || strcmp(slot->name, name) != 0)
			continue;
		/* a dropped pipeline's slot lingers until its worker has left */
		SpinLockAcquire(&slot->mutex);
		dropping = slot->drop_requested;
		SpinLockRelease(&slot->mutex);
		if (!dropping)
		{
			found = slot;
			break;
		}
	}
	LWLockRelease(slots_lock);
	return found;
}

WaPipelineSlot *
wa_slot_find_id(Oid dbid, int32 pipeline_id)
{
	WaPipelineSlot *found = NULL;

	wa_require_shared();
	LWLockAcquire(slots_lock, LW_SHARED);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];

		if (slot->in_use && slot->dbid == dbid &&
			slot->pipeline_id == pipeline_id)
		{
			found = slot;
			break;
		}
	}
	LWLockRelease(slots_lock);
	return found;
}

void
wa_wake_launcher(void)
{
	Latch	   *latch = wa_shared->launcher_latch;

	if (latch != NULL)
		SetLatch(latch);
}

void
wa_wake_worker(WaPipelineSlot *slot)
{
	Latch	   *latch;

	SpinLockAcquire(&slot->mutex);
	latch = slot->worker_latch;
	SpinLockRelease(&slot->mutex);
	if (latch != NULL)
		SetLatch(latch);
}

/* ---------- the arena allocator ---------- */

/*
 * Every block starts with this header: the arena's doubly linked list of
 * blocks, and the block's own DSA pointer for freeing.
 */
typedef struct ArenaBlock
{
	dsa_pointer self;
	dsa_pointer prev;
	dsa_pointer next;
	Size		size;			/* bytes the engine asked for */
} ArenaBlock;

#define BLOCK_HEADER MAXALIGN(sizeof(ArenaBlock))

/*
 * What a block of size bytes takes from the pool: its header, and the
 * pool's rounding.  DSA serves requests up to 8 kB from size classes four
 * to a doubling (8, 16, ... 64, 80, 96, 112, 128, 160 ...), and larger ones
 * in whole 4 kB pages; rounding the same way counts what a block really
 * holds, within the classes' own spacing.
 */
static Size
block_footprint(Size size)
{
	Size		n = BLOCK_HEADER + size;
	Size		step;

	if (n > 8192)
		return TYPEALIGN(4096, n);
	if (n <= 64)
		return TYPEALIGN(8, n);
	step = (Size) 1 << (pg_leftmost_one_pos64((uint64) (n - 1)) - 2);
	return TYPEALIGN(step, n);
}

static inline ArenaBlock *
block_of(dsa_area *area, dsa_pointer dp)
{
	return (ArenaBlock *) dsa_get_address(area, dp);
}

static void *
arena_alloc(void *arg, size_t size)
{
	WaPipelineSlot *slot = arg;
	WaArena    *arena = &slot->arena;
	dsa_area   *area = wa_pool();
	dsa_pointer dp;
	ArenaBlock *block;
	uint64		limit = (uint64) wa_max_state_memory_kb * 1024;
	Size		footprint = block_footprint(size);

	if (arena->bytes + footprint > limit)
	{
		/* the worker tells this from any other error (memory_full) */
		slot->memory_limit_hit = true;
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("pipeline \"%s\" reached windowagg.max_state_memory (%d kB)",
						slot->name, wa_max_state_memory_kb),
				 errdetail("Its state holds %llu bytes and needs %zu more.",
						   (unsigned long long) arena->bytes, footprint),
				 errhint("Raise windowagg.max_state_memory and reload the configuration; the pipeline resumes where it stopped.")));
	}
	dp = dsa_allocate_extended(area, BLOCK_HEADER + size,
							   DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(dp))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("shared memory for pipelines is exhausted"),
				 errdetail("Pipeline \"%s\" needs %zu more bytes; the pool of windowagg.shared_memory (%d MB) is full.",
						   slot->name, size, wa_shared_memory_mb),
				 errhint("Raise windowagg.shared_memory and restart the server, or lower windowagg.max_state_memory so that pipelines stop before the pool is full.")));
	/* the pool never leaves the main segment: see the file header */
	Assert(dp < wa_shared->pool_size);
	block = block_of(area, dp);
	block->self = dp;
	block->prev = InvalidDsaPointer;
	block->next = arena->head;
	block->size = footprint;
	if (DsaPointerIsValid(arena->head))
		block_of(area, arena->head)->prev = dp;
	arena->head = dp;
	arena->bytes += footprint;
	return (char *) block + BLOCK_HEADER;
}

static void
arena_free(void *arg, void *ptr, size_t size)
{
	WaPipelineSlot *slot = arg;
	WaArena    *arena = &slot->arena;
	dsa_area   *area = wa_pool();
	ArenaBlock *block = (ArenaBlock *) ((char *) ptr - BLOCK_HEADER);

	if (DsaPointerIsValid(block->prev))
		block_of(area, block->prev)->next = block->next;
	else
		arena->head = block->next;
	if (DsaPointerIsValid(block->next))
		block_of(area, block->next)->prev = block->prev;
	arena->bytes -= block->size;
	dsa_free(area, block->self);
}

static void *
arena_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	void	   *p = arena_alloc(arg, new_size);

	memcpy(p, ptr, Min(old_size, new_size));
	arena_free(arg, ptr, old_size);
	return p;
}

void
wa_arena_allocator_init(wa_allocator *allocator, WaPipelineSlot *slot)
{
	allocator->alloc = arena_alloc;
	allocator->realloc = arena_realloc;
	allocator->free = arena_free;
	allocator->arg = slot;
}

void
wa_arena_reset(WaArena *arena)
{
	dsa_area   *area = wa_pool();

	while (DsaPointerIsValid(arena->head))
	{
		ArenaBlock *block = block_of(area, arena->head);

		arena->head = block->next;
		dsa_free(area, block->self);
	}
	arena->bytes = 0;
}

const char *
wa_status_name(WaPipelineStatus status)
{
	switch (status)
	{
		case WA_STATUS_STARTING:
			return "starting";
		case WA_STATUS_RUNNING:
			return "running";
		case WA_STATUS_PAUSED:
			return "paused";
		case WA_STATUS_MEMORY_FULL:
			return "memory_full";
		case WA_STATUS_FAILED:
			return "failed";
		case WA_STATUS_STOPPED:
			return "stopped";
		case WA_STATUS_FLUSHED:
			return "flushed";
		case WA_STATUS_GAPS_FULL:
			return "gaps_full";
		case WA_STATUS_WAITING:
			return "waiting";
	}
	return "unknown";
}

/* ---------- the state lock's writers ---------- */

/*
 * Every writer of a pipeline's engine takes the state lock through here:
 * one that has to wait for readers says so, and readers let it in first
 * (see lock_for_reading in src/commands/pipeline_control.c).
 */
void
wa_state_lock_exclusive(WaPipelineSlot *slot)
{
	if (!LWLockConditionalAcquire(&slot->state_lock, LW_EXCLUSIVE))
	{
		slot->writer_waiting = true;
		LWLockAcquire(&slot->state_lock, LW_EXCLUSIVE);
		slot->writer_waiting = false;
	}
	/* a reader that lost its lock knows from this whether it may go on */
	slot->state_changes++;
}

/* ---------- interrupts under the state lock ---------- */

void
wa_check_for_interrupts_locked(void)
{
	if (likely(!InterruptPending) || CritSectionCount > 0)
		return;
	if (ProcDiePending)
	{
		ProcDiePending = false;
		if (wa_am_background_worker())
			ereport(FATAL,
					(errcode(ERRCODE_ADMIN_SHUTDOWN),
					 errmsg("terminating background worker \"%s\" due to administrator command",
							MyBgworkerEntry->bgw_type)));
		ereport(FATAL,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("terminating connection due to administrator command")));
	}
	if (QueryCancelPending && QueryCancelHoldoffCount == 0)
	{
		QueryCancelPending = false;
		if (get_timeout_indicator(STATEMENT_TIMEOUT, true))
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to statement timeout")));
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling statement due to user request")));
	}
}
