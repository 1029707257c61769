/*-------------------------------------------------------------------------
 *
 * pipeline.h
 *	  Continuous pipelines: the shared state that backends, the launcher
 *	  and the pipeline workers agree on.
 *
 * A pipeline is a row of windowagg.pipelines plus, while the server runs,
 * a slot in shared memory.  The slot carries the requests backends make
 * (run, pause, drop, flush), the worker's progress counters that
 * windowagg.wait() and windowagg.stat_pipelines read, and the pipeline's
 * engine, whose memory comes from a pool in the main shared memory segment
 * (see shmem.c for why pointers into it are safe to share).
 *
 * src/pipeline/pipeline.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_PIPELINE_H
#define WINDOWAGG_PIPELINE_H

#include "query/query.h"
#include "source/source.h"

#include "access/xlogdefs.h"
#include "executor/spi.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/timestamp.h"

/* What a pipeline is doing, as stat_pipelines shows it. */
typedef enum WaPipelineStatus
{
	WA_STATUS_STARTING,			/* waiting for its worker */
	WA_STATUS_RUNNING,
	WA_STATUS_PAUSED,
	WA_STATUS_MEMORY_FULL,		/* stopped ingesting at max_state_memory */
	WA_STATUS_FAILED,			/* worker failed; restarted after a delay */
	WA_STATUS_STOPPED,			/* its definition no longer works: waits
								 * for windowagg.resume */
	WA_STATUS_FLUSHED,			/* end of input reached */
	WA_STATUS_GAPS_FULL,		/* reads no new rows until gaps settle */
	WA_STATUS_WAITING			/* its role or database runs as many
								 * pipelines as allowed; retried */
} WaPipelineStatus;

extern const char *wa_status_name(WaPipelineStatus status);

/*
 * The memory a pipeline's engine holds in the shared pool.  Every block is
 * on a list, so that a failed worker can give everything back even when
 * the engine was interrupted halfway through a change.
 */
typedef struct WaArena
{
	dsa_pointer head;			/* newest block, or InvalidDsaPointer */
	uint64		bytes;			/* requested bytes held (engine's view) */
} WaArena;

/* Counters the worker publishes after each committed epoch. */
typedef struct WaPipelineStats
{
	int64		events_in;
	int64		events_partial;
	int64		dead_letters;
	int64		panes_on_time;
	int64		panes_late;
	int64		epochs;
	int64		lag_rows;		/* rows left after the last epoch's batch */
	bool		has_watermark;	/* watermark is finite */
	bool		watermark_done; /* watermark is +infinity (flushed) */
	int64		watermark;		/* in ticks, when has_watermark */
	int64		max_event_time; /* ticks; valid when events_in > 0 */
	int64		source_updates; /* logical sources: changes that are not */
	int64		source_deletes; /* inserts */
	int64		retained_wal;	/* remote sources: bytes the slot holds, */
	bool		retained_wal_known; /* once the worker has heard from it */
	int32		n_gaps;			/* table sources: arrival ranges not seen;
								 * -1 for logical ones */
	TimestampTz oldest_gap_at;	/* when the oldest was revealed */
	int32		oldest_gap_pid; /* a process that may still fill it */
	TimestampTz last_epoch_at;
} WaPipelineStats;

typedef struct WaPipelineSlot
{
	/* identity: written under the slots lock, stable while in_use */
	bool		in_use;
	uint32		generation;		/* bumped whenever the slot is reused */
	Oid			dbid;
	int32		pipeline_id;
	Oid			owner;			/* as the catalog says */
	Oid			result_table;	/* whose readers may see its status */
	char		name[NAMEDATALEN];
	bool		admitted;		/* its worker runs within the per-role and
								 * per-database limits */

	/* requests and progress, under mutex */
	slock_t		mutex;
	bool		wanted;			/* committed, enabled: a worker should run */
	bool		drop_requested;
	bool		needs_resume;	/* stopped on an error only a user can fix */
	bool		held;			/* a drop is committing: no worker, please */
	uint32		pauses;			/* pause requests committed, ever */
	bool		restarting;		/* its worker left to start again (a pause
								 * that a resume overtook): no failure */
	uint64		flush_request;	/* epochs numbered from it flush; 0: none */
	uint64		snapshot_seq;	/* epochs that have taken their snapshot */
	uint64		caught_up_seq;	/* newest epoch that saw every visible row */
	uint64		flushed_seq;	/* epoch seq at which a flush committed */
	pid_t		pid;			/* worker, or 0 */
	Latch	   *worker_latch;
	WaPipelineStatus status;
	char		last_error[512];
	char		last_failure[512];	/* the latest failed worker's error */
	int			failure_streak; /* failures with that same error in a row */
	WaPipelineStats stats;

	/*
	 * The engine, in the shared pool, read under state_lock; with the
	 * identity and the shape of the pipeline its worker built it for, so
	 * that a reader decodes it only through that same shape.
	 */
	LWLock		state_lock;
	wa_engine  *engine;
	Oid			engine_dbid;
	int32		engine_pipeline_id;
	uint8		engine_shape[WA_SHAPE_LEN];
	bool		engine_busy;	/* the worker is changing it (see worker.c) */
	uint64		state_changes;	/* exclusive acquisitions of state_lock,
								 * counted under it */
	bool		writer_waiting; /* the worker waits for readers to let go
								 * (read without the lock: a hint) */
	WaArena		arena;
	bool		memory_limit_hit;	/* the arena refused the last request */
} WaPipelineSlot;

/*
 * Has the pipeline that a process knew in this slot as generation gone
 * (dropped, or the slot given to another)?  The caller holds slot->mutex.
 */
static inline bool
wa_slot_gone(const WaPipelineSlot *slot, uint32 generation)
{
	return !slot->in_use || slot->generation != generation ||
		slot->drop_requested;
}

typedef struct WaShared
{
	int			tranche_id;
	int			max_pipelines;
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	pg_atomic_uint32 discovered_dbid;	/* set by a discovery worker that
										 * registered its database */
	Size		pool_offset;	/* from the start of this struct */
	Size		pool_size;
	WaPipelineSlot slots[FLEXIBLE_ARRAY_MEMBER];
} WaShared;

/* ---------- GUCs (init.c) ---------- */

extern int	wa_max_pipelines;
extern int	wa_max_pipelines_per_role;
extern int	wa_max_pipelines_per_database;
extern int	wa_shared_memory_mb;
extern int	wa_max_state_memory_kb;
extern int	wa_epoch_ms;
extern int	wa_epoch_rows;

/* ---------- shared memory (shmem.c) ---------- */

extern WaShared *wa_shared;

extern void wa_shmem_install_hooks(void);
extern void wa_require_shared(void);	/* error unless preloaded */
extern dsa_area *wa_pool(void);

/*
 * Slots: lookups take the slots lock (AddinShmemInitLock is not used).
 * A claim with check_limits refuses an owner that already holds
 * windowagg.max_pipelines_per_role slots, or a database that holds
 * windowagg.max_pipelines_per_database (create_pipeline asks for that).
 */
extern WaPipelineSlot *wa_slot_claim(Oid dbid, int32 pipeline_id, Oid owner,
									 const char *name, Oid result_table,
									 bool check_limits);
extern void wa_slot_release(WaPipelineSlot *slot);
/* The same limits, checked without claiming (an early, friendlier error). */
extern void wa_check_pipeline_limits(Oid dbid, Oid owner);

/*
 * A worker may run if its owner and its database run fewer pipelines than
 * the limits allow (exempt: a superuser's pipeline); else *role_running
 * and *db_running say how many they run.  wa_slot_leave undoes it.
 */
extern bool wa_slot_admit(WaPipelineSlot *slot, Oid owner, bool exempt,
						  int *role_running, int *db_running);
extern void wa_slot_leave(WaPipelineSlot *slot);
extern WaPipelineSlot *wa_slot_find(Oid dbid, const char *name);
extern WaPipelineSlot *wa_slot_find_id(Oid dbid, int32 pipeline_id);
extern void wa_wake_launcher(void);
extern void wa_wake_worker(WaPipelineSlot *slot);

/*
 * CHECK_FOR_INTERRUPTS does nothing while an LWLock is held, and a
 * pipeline's state lock may be held across a long firing, flush, restore
 * or read of live windows.  This reacts to a cancel (ERROR) or terminate
 * (FATAL) all the same: a worker throws its engine away after any error,
 * and a reader only reads, so stopping halfway through is safe.
 */
extern void wa_check_for_interrupts_locked(void);

/* Take a slot's state lock to change its engine (readers give way). */
extern void wa_state_lock_exclusive(WaPipelineSlot *slot);

/* The engine allocator over a pipeline's arena (bounded by a limit). */
extern void wa_arena_allocator_init(wa_allocator *allocator,
									WaPipelineSlot *slot);
extern void wa_arena_reset(WaArena *arena);

/* ---------- a background process's transaction (xact.c) ---------- */

/*
 * Start a transaction, run as role (InvalidOid: the current one) in a
 * security-restricted operation, connect SPI, push a snapshot; and the
 * reverse, committing.  The middle step alone for a transaction that is
 * begun and committed otherwise.
 */
extern void wa_begin_work(Oid role);
extern void wa_end_work(void);
extern void wa_enter_restricted(Oid role);
extern void wa_leave_restricted(void);
extern void wa_forget_restricted(void);

/*
 * ---------- the catalog: windowagg.pipelines (catalog_pipelines.c) and a
 * pipeline's query (catalog.c) ----------
 */

/* A row of windowagg.pipelines, decoded. */
typedef struct WaPipelineDef
{
	int32		id;
	char	   *name;
	Oid			owner;
	char	   *query;
	char	   *search_path;	/* the creator's: names in query resolve by it */
	char	   *event_time;
	char	   *arrival_column;
	WaWindowSet windows;
	int64		bound;
	int64		lateness;
	bool		has_idle_timeout;
	int64		idle_timeout_us;
	char	   *time_zone;		/* the creator's TimeZone: the clock of
								 * timestamp event times; NULL: the server's */
	Oid			source;
	Oid			result_table;
	Oid			sessions_table; /* a session window beside others: its
								 * rows; InvalidOid: result_table's */
	Oid			dead_letter_table;
	Oid			live_view;
	bool		enabled;
	/* a logical source (else a table source) and where its stream is */
	bool		logical;
	char	   *connection;		/* NULL: this server */
	char	   *publication;	/* NULL: the one create_pipeline made */
	char	   *remote_schema;	/* with a connection: the table there */
	char	   *remote_table;
	bool		dead_letter_changes;	/* updates, deletes to dead letters */
	char	   *slot_name;		/* its replication slot */
} WaPipelineDef;

/*
 * Read a pipeline's row, by id or (unless NULL) by name, inside a
 * transaction with SPI connected; NULL if gone.  Allocated in the memory
 * context current at the call, which is current again on return.
 */
extern WaPipelineDef *wa_catalog_load(int32 id, const char *name);
/*
 * The windows a pipeline can run: fixed ones, and at most one session
 * window.  name: the pipeline's, for the message; NULL when it is being
 * created.
 */
extern void wa_pipeline_check_windows(const WaWindowSet *windows,
									  const char *name);

/* What discovery needs of each pipeline to claim a slot for it. */
typedef struct WaPipelineEntry
{
	int32		id;
	char	   *name;
	Oid			owner;
	bool		enabled;
	Oid			result_table;
} WaPipelineEntry;

/*
 * Every pipeline of the database, *n of them, in the memory context
 * current at the call (SPI connected).
 */
extern WaPipelineEntry *wa_catalog_pipeline_list(uint64 *n);

/* Is there a pipeline of that name? */
extern bool wa_catalog_pipeline_exists(const char *name);

/*
 * A new row of windowagg.pipelines, as create_pipeline inserts it: the
 * values as given or resolved, a NULL pointer for a column left null.
 */
typedef struct WaPipelineInsert
{
	const char *name;
	Oid			owner;
	const char *query;
	const char *event_time;
	const char *arrival_column; /* NULL for a logical source */
	Datum		windows;		/* the windowagg.window[] argument as given */
	Oid			windows_type;	/* its type (the extension's: no fixed OID) */
	int64		bound;			/* ticks */
	int64		lateness;		/* ticks */
	Interval   *idle_timeout;	/* NULL: the watermark follows events only */
	Oid			source;
	const char *result_table;	/* qualified names of the relations just */
	const char *dead_letter_table;	/* made, which the insert resolves */
	const char *live_view;		/* (regclass) */
	const char *sessions_table; /* NULL: none */
	bool		enabled;
	const char *search_path;	/* the creator's */
	const char *source_kind;	/* "table" or "logical" */
	const char *publication;	/* NULL: the pipeline's own */
	bool		dead_letter_changes;
	const char *connection;		/* NULL: this server */
	const char *remote_schema;	/* with a connection: the table there */
	const char *remote_table;
	const char *slot_name;		/* logical sources */
	const char *time_zone;		/* the creator's TimeZone */
} WaPipelineInsert;

/*
 * Insert the row and return the new pipeline's id.  Its AFTER INSERT
 * trigger (wa_pipeline_inserted) claims the pipeline's slot; a duplicate
 * name is the unique violation of the insert.
 */
extern int32 wa_catalog_pipeline_insert(const WaPipelineInsert *row);

/*
 * Lock the pipeline's row FOR UPDATE (concurrent drops, pauses and resumes
 * queue up behind it); delete it (its progress and checkpoint rows go
 * with it); change its owner or whether it is enabled.
 */
extern void wa_catalog_pipeline_lock(int32 id);
extern void wa_catalog_pipeline_delete(int32 id);
extern void wa_catalog_pipeline_set_owner(int32 id, Oid owner);
extern void wa_catalog_pipeline_set_enabled(int32 id, bool enabled);

/*
 * The same for a SQL function's argument (connects to SPI): an error if
 * there is no such pipeline.
 */
extern WaPipelineDef *wa_pipeline_lookup(const char *name);

/*
 * Parse the pipeline's query as the current user, with the search_path it
 * was created under.
 */
extern WaAggQuery *wa_pipeline_query_parse(const WaPipelineDef *def);
/* The same under the search_path already in effect. */
extern WaAggQuery *wa_pipeline_query_parse_now(const WaPipelineDef *def);

/*
 * The same as the pipeline's owner, in a security-restricted operation:
 * for a caller who may read the results but not the source.
 */
extern WaAggQuery *wa_pipeline_query_parse_as_owner(const WaPipelineDef *def);

/*
 * The query of pipeline name, parsed as its owner, for a current user who
 * must be allowed to read the pipeline's results (SELECT on its result
 * table); action ("Reading live windows") names what needs that in the
 * error.  Allocated in the current memory context, as is the definition
 * returned through def_out unless that is NULL.  Connects to SPI.
 */
extern WaAggQuery *wa_pipeline_query_for_reader(const char *name,
												const char *action,
												WaPipelineDef **def_out);

/*
 * Has the current user the privileges of owner (a member of the role, or a
 * superuser)?  Control functions ask this of a pipeline's owner.
 */
extern bool wa_is_pipeline_owner(Oid owner);
/* Error unless the current user has the privileges of the pipeline owner. */
extern void wa_check_pipeline_owner(const WaPipelineDef *def);

/* The shape (see wa_agg_query_shape) of the pipeline's engine. */
extern void wa_pipeline_shape(const WaPipelineDef *def, const WaAggQuery *q,
							  uint8 *shape);

/* ---------- where a pipeline stands (catalog_progress.c) ---------- */

/*
 * A pipeline's row of windowagg.pipeline_progress as a restore reads it,
 * with the end of its checkpoint log beside it.  A null bigint reads as 0
 * (its _null flag says so where that matters).  arrival_gaps and watermark
 * are copies in the memory context current at the call.
 */
typedef struct WaProgressRow
{
	bool		arrival_hwm_null;	/* no arrival number consumed yet */
	int64		arrival_hwm;	/* highest arrival number consumed */
	ArrayType  *arrival_gaps;	/* lo, hi pairs not yet seen; NULL if null */
	bool		max_event_time_null;	/* no event seen yet */
	int64		max_event_time; /* ticks */
	bool		watermark_null; /* null: -infinity */
	Datum		watermark;		/* numeric ticks, unchecked (may be NaN or
								 * fractional: the caller's to refuse) */
	WaPipelineStats counters;	/* events_in, events_partial, dead_letters,
								 * panes_on_time, panes_late, epochs,
								 * source_updates, source_deletes as
								 * committed; every other field 0 */
	int64		checkpoint_seq; /* the checkpoint row the progress refers to */
	int64		log_end_seq;	/* the newest row of the checkpoint log, 0 if
								 * it is empty: equal to checkpoint_seq once
								 * both are complete */
	XLogRecPtr	source_lsn;		/* logical sources; InvalidXLogRecPtr: null */
} WaProgressRow;

/*
 * What an epoch writes to its pipeline's progress row: the source's
 * offset, the event clock and the counters the epoch adds (epochs is
 * incremented by one, whatever delta says).
 */
typedef struct WaProgressUpdate
{
	int32		pipeline_id;
	int64		arrival_hwm;
	ArrayType  *arrival_gaps;	/* NULL: the stored array stands */
	bool		max_event_time_null;
	int64		max_event_time;
	bool		watermark_null;
	Datum		watermark;		/* numeric ticks, unless watermark_null */
	const WaPipelineStats *delta;	/* counters the epoch adds */
	int64		checkpoint_seq; /* the newest checkpoint row, written with it */
	XLogRecPtr	source_lsn;		/* InvalidXLogRecPtr: null */
} WaProgressUpdate;

/* A new pipeline's progress row: nothing consumed, counters zero. */
extern void wa_catalog_progress_insert(int32 pipeline_id);

/*
 * Read a pipeline's progress row (SPI connected); false, and *row zeroed,
 * unless it has exactly one.
 */
extern bool wa_catalog_progress_read(int32 pipeline_id, WaProgressRow *row);

/* Make the progress row refer to checkpoint row seq (a rewritten log). */
extern void wa_catalog_progress_set_checkpoint(int32 pipeline_id,
											   int64 checkpoint_seq);

/*
 * The epoch's update, prepared once (and kept: SPI_keepplan) in the
 * catalog's scope; executed by wa_catalog_progress_write, which is false
 * unless it ran as an UPDATE.
 */
extern SPIPlanPtr wa_catalog_progress_prepare(void);
extern bool wa_catalog_progress_write(SPIPlanPtr plan,
									  const WaProgressUpdate *update);

/* A row of windowagg.checkpoints as a restore reads it. */
typedef struct WaCheckpointRow
{
	int64		seq;			/* later rows override earlier ones */
	int64		expire_below;	/* slices numbered below have expired */
	int32		acc_size;		/* bytes per accumulator it was written with */
	bytea	   *data;			/* the chunk, detoasted: a copy in the memory
								 * context current at the call */
} WaCheckpointRow;

extern void wa_catalog_checkpoint_insert(int32 pipeline_id, int64 seq,
										 int64 expire_below, int64 n_slices,
										 int32 acc_size, bytea *data);

/* A pipeline's whole checkpoint log, in seq order; *n rows. */
extern WaCheckpointRow *wa_catalog_checkpoints_read(int32 pipeline_id,
													uint64 *n);
extern void wa_catalog_checkpoints_delete(int32 pipeline_id);

/* ---------- transactional requests (requests.c) ---------- */

typedef enum WaRequest
{
	WA_REQUEST_CREATE,			/* commit: run it; abort: release the slot */
	WA_REQUEST_RESUME,
	WA_REQUEST_PAUSE,
	WA_REQUEST_DROP,
	WA_REQUEST_CREATE_SLOT,		/* a logical source's replication slot */
	WA_REQUEST_DROP_SLOT,
	WA_REQUEST_HOLD				/* undone if the transaction aborts */
} WaRequest;

extern void wa_request_at_commit(WaPipelineSlot *slot, WaRequest request);
/* Stop the pipeline's worker now and keep it away until the transaction ends. */
extern void wa_hold_worker(WaPipelineSlot *slot, const char *name);
extern void wa_request_slot_at_commit(const char *slot_name, bool create);
extern void wa_requests_install_callbacks(void);

/* ---------- launcher and workers (launcher.c, worker.c) ---------- */

extern void wa_launcher_register(void);
extern PGDLLEXPORT void wa_launcher_main(Datum arg);
extern PGDLLEXPORT void wa_discovery_main(Datum arg);
extern PGDLLEXPORT void wa_worker_main(Datum arg);

/* Claim slots for a database's pipelines (discovery and create). */
extern void wa_register_database_pipelines(void);

#endif							/* WINDOWAGG_PIPELINE_H */
