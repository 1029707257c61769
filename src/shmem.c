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
 * When a worker fails halfway through a change, the arena is freed as a
 * whole and the state is rebuilt from the last checkpoint.
 *
 * src/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

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
				 errmsg("windowagg pipelines need windowagg in shared_preload_libraries"),
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

WaPipelineSlot *
wa_slot_claim(Oid dbid, int32 pipeline_id, Oid owner, const char *name)
{
	WaPipelineSlot *found = NULL;

	wa_require_shared();
	LWLockAcquire(slots_lock, LW_EXCLUSIVE);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];

		if (slot->in_use && slot->dbid == dbid &&
			slot->pipeline_id == pipeline_id)
		{
			found = slot;		/* already registered (discovery ran twice) */
			break;
		}
		if (!slot->in_use && found == NULL)
			found = slot;
	}
	if (found != NULL && !found->in_use)
	{
		found->in_use = true;
		found->generation++;
		found->dbid = dbid;
		found->pipeline_id = pipeline_id;
		found->owner = owner;
		strlcpy(found->name, name, NAMEDATALEN);
		SpinLockAcquire(&found->mutex);
		found->wanted = false;
		found->drop_requested = false;
		found->needs_resume = false;
		found->held = false;
		found->flush_request = 0;
		found->snapshot_seq = 0;
		found->caught_up_seq = 0;
		found->flushed_seq = 0;
		found->pid = 0;
		found->worker_latch = NULL;
		found->status = WA_STATUS_STARTING;
		found->last_error[0] = '\0';
		memset(&found->stats, 0, sizeof(found->stats));
		SpinLockRelease(&found->mutex);
		found->engine = NULL;
		found->arena.head = InvalidDsaPointer;
		found->arena.bytes = 0;
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
	slot->generation++;
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

	if (arena->bytes + size > limit)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("pipeline \"%s\" reached windowagg.max_state_memory (%d kB)",
						slot->name, wa_max_state_memory_kb),
				 errdetail("Its state holds %llu bytes and needs %zu more.",
						   (unsigned long long) arena->bytes, size),
				 errhint("Raise windowagg.max_state_memory and reload the configuration; the pipeline resumes where it stopped.")));
	dp = dsa_allocate_extended(area, BLOCK_HEADER + size,
							   DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(dp))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("windowagg shared memory is exhausted"),
				 errdetail("Pipeline \"%s\" needs %zu more bytes; the pool of windowagg.shared_memory (%d MB) is full.",
						   slot->name, size, wa_shared_memory_mb),
				 errhint("Raise windowagg.shared_memory and restart the server, or lower windowagg.max_state_memory so that pipelines stop before the pool is full.")));
	/* the pool never leaves the main segment: see the file header */
	Assert(dp < wa_shared->pool_size);
	block = block_of(area, dp);
	block->self = dp;
	block->prev = InvalidDsaPointer;
	block->next = arena->head;
	block->size = size;
	if (DsaPointerIsValid(arena->head))
		block_of(area, arena->head)->prev = dp;
	arena->head = dp;
	arena->bytes += size;
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
	}
	return "unknown";
}
