/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  A pipeline worker: restore the checkpoint, then run epochs.
 *
 * The worker acts as the owner that the pipeline's catalog row names, and
 * nothing else: it connects as the bootstrap superuser (so that an owner
 * who may not log in can still own a pipeline), becomes the owner before
 * it runs any statement of the owner's, and runs every transaction as a
 * security-restricted operation (xact.c), so that no function of the
 * owner's can switch back to the session's user.  It reads the source and writes the
 * result tables with the owner's privileges, under the search_path the
 * pipeline was created with; only catalog statements run as another role,
 * in the pinned scope of query/catalog_scope.c.  Its engine lives in the
 * shared pool (shmem.c), where windowagg.live() can read it.
 *
 * An epoch is one transaction (REPEATABLE READ, so one snapshot):
 *	  read the source's new rows (src/source/source.h) into the engine, emit the
 *	  late panes, then write the panes and dead letters (sink.c), the
 *	  changed slices, the offset, watermark and counters.
 * Everything an epoch did is committed together or not at all, so after
 * any failure the worker throws its engine away and restores it from the
 * last committed epoch, which matches the committed offset exactly.
 *
 * A worker that reaches windowagg.max_state_memory stops ingesting, shows
 * status memory_full, and waits for the setting to be raised.  An error
 * that only a user can fix (the source changed, a privilege was revoked)
 * stops the pipeline until windowagg.resume; any other error is recorded
 * in the slot and ends the worker, which the launcher restarts after a
 * delay.  Either way the committed checkpoint and offset stay as they were.
 *
 * src/pipeline/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "pipeline/sink.h"
#include "source/source.h"

/*
 * A pipeline whose epochs fail with the same error this many times in a
 * row stops (needs windowagg.resume) instead of being retried for ever.
 */
#define FAILURES_BEFORE_STOP 5

/*
 * Rows are ingested in batches of at most this many: the executor runs the
 * owner's expressions for each next row, which must never happen while
 * the state lock is held, and taking the lock for each row would cost
 * more than the engine's own work on it.
 */
#define ROWS_PER_BATCH 256

/* What the engine needs of a row, until its batch is ingested. */
typedef struct PendingRow
{
	int64		arrival;
	int64		t;				/* event time in ticks */
	wa_key		key;			/* byte keys: in the batch's memory */
	bool		some_out_of_range;	/* some of its windows cannot exist */
	wa_tick		wm_before;		/* filled by the ingest: for dead letters */
	wa_ingest_result result;
	const char *reason;			/* of a dropped one: a static string */
} PendingRow;

typedef struct Worker
{
	WaPipelineSlot *slot;
	uint32		generation;
	MemoryContext cxt;			/* lives as long as the engine */
	MemoryContext epoch_cxt;	/* reset after every epoch */
	MemoryContext row_cxt;		/* the batch's keys; reset after each batch */

	WaPipelineDef *def;
	WaAggQuery *query;
	WaGeneric  *generic;		/* its aggregates without kernels */
	int16	   *input_typlen;	/* of each aggregate input */
	bool	   *input_byval;
	uint8		shape[WA_SHAPE_LEN];	/* of the query the engine runs */
	WaKeyCodec	codec;
	wa_engine  *engine;
	wa_allocator allocator;
	WaSource   *source;			/* what it reads, whatever the kind */
	WaSink		sink;
	int			n_inputs;
	wa_value   *inputs;			/* n_inputs for each row of the batch */
	PendingRow *batch;
	int			n_batched;
	WaWindowRange range;		/* windows the window type can hold */
	WaKeyFit	key_fit;		/* keys the result table's index can hold */
	char	   *key_too_large;	/* the dead letters' reason when one cannot */
	pg_tz	   *clock_zone;		/* the wall clock of timestamp event times */
	SPIPlanPtr	progress_plan;

	bool		source_changed; /* relcache invalidation for the source */
	uint32		pauses_seen;	/* the slot's pause count when it started */
	bool		waiting_for_room;	/* refused by the per-role or
									 * per-database limit */
	bool		restoring_from_dump;	/* its catalog rows are still being
										 * loaded (pg_restore) */
	bool		stop_for_user;	/* the error needs a user (status stopped) */

	/* the current epoch */
	bool		locked;			/* holding the slot's state_lock */
	WaPipelineStats delta;		/* counters this epoch adds */
	TimestampTz last_row_at;	/* wall clock of the newest row */
	WaPipelineStats committed;	/* counters as of the last commit */
} Worker;

static Worker *worker;

static void publish_progress(Worker *w, bool caught_up, bool flushed,
							 uint64 seq);
static void leave_dropped(Worker *w);

/* ---------- the state lock ---------- */

/*
 * The state lock is held only while the engine itself runs: never while
 * the executor or anything of the owner's does (the source's expressions,
 * the next row's scan), which could wait for the lock, or for ever, with
 * interrupts held off.  While it is held the engine is marked busy: an
 * error that releases the lock without coming back here (the abort of a
 * decoded transaction) leaves the mark, and readers then keep away from
 * the half-changed engine until the worker throws it away.  A worker that
 * has to wait for readers says so, and readers let it go first.
 */
static void
lock_state(Worker *w)
{
	WaPipelineSlot *slot = w->slot;

	if (w->locked)
		return;
	wa_state_lock_exclusive(slot);
	slot->engine_busy = true;
	w->locked = true;
}

static void
unlock_state(Worker *w)
{
	if (!w->locked)
		return;
	/* readers see generic aggregates' states in the engine, not our cache */
	if (w->engine != NULL)
		wa_generic_write_back(w->generic);
	w->slot->engine_busy = false;
	LWLockRelease(&w->slot->state_lock);
	w->locked = false;
}

/*
 * Around the owner's code under the state lock (OWNER_CODE).  After it: a
 * subtransaction it aborted (a PL/pgSQL EXCEPTION block) let go of every
 * LWLock; the engine stayed marked busy, so no reader came near it, and
 * no one else writes it while this worker runs: take the lock again and
 * go on.  Before it: a lock lost elsewhere (a domain's constraint in a
 * receive function) cannot be taken back with the right hold-off count,
 * so the engine is thrown away.
 */
static void
guard_state_lock(void *arg, bool after)
{
	Worker	   *w = arg;

	if (!w->locked || LWLockHeldByMe(&w->slot->state_lock))
		return;
	if (!after)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" lost its state lock", w->def->name),
				 errdetail("A function that caught an error ran under the lock outside the aggregates' own code (a domain's check constraint, say), which let the lock go.")));
	wa_state_lock_exclusive(w->slot);
}

/*
 * Errors raised while the engine works under the state lock (firing,
 * flushing, restoring) say so: a cancel or terminate taken there shows
 * that the work stopped halfway, as it may.
 */
typedef struct EngineStep
{
	ErrorContextCallback callback;
	Worker	   *worker;
	const char *what;
} EngineStep;

static void
engine_step_context(void *arg)
{
	EngineStep *step = arg;

	errcontext("%s the windows of pipeline \"%s\"", step->what,
			   step->worker->def->name);
}

static void
engine_step_begin(EngineStep *step, Worker *w, const char *what)
{
	step->worker = w;
	step->what = what;
	step->callback.callback = engine_step_context;
	step->callback.arg = step;
	step->callback.previous = error_context_stack;
	error_context_stack = &step->callback;
}

static void
engine_step_end(EngineStep *step)
{
	error_context_stack = step->callback.previous;
}

/* ---------- rows ---------- */

static void
emit_pane(void *arg, const wa_pane *pane)
{
	Worker	   *w = arg;

	/* one row or one flush can fire very many windows, all under the lock */
	wa_check_for_interrupts_locked();
	wa_sink_add_pane(&w->sink, pane);
}

/* The source's current row for a dead letter, or 0: the sink reads it back. */
static Datum
source_row_jsonb(Worker *w)
{
	return wa_source_current_row(w->source);
}

/* The event time in ticks, or a reason why the row cannot have one. */
static const char *
row_event_time(Worker *w, TupleTableSlot *slot, int64 *ticks)
{
	int			att = w->query->n_keys;

	switch (wa_event_time_ticks(w->query->event_time_type,
								slot->tts_values[att], slot->tts_isnull[att],
								ticks))
	{
		case WA_EVENT_TIME_NULL:
			return "event time is null";
		case WA_EVENT_TIME_INFINITE:
			return "event time is not finite";
		case WA_EVENT_TIME_OK:
			break;
	}
	return NULL;
}

/* An event time in ticks as a Datum of the event time's type. */
static Datum
event_time_datum(const Worker *w, int64 t)
{
	switch (w->query->event_time_type)
	{
		case INT2OID:
			return Int16GetDatum((int16) t);
		case INT4OID:
			return Int32GetDatum((int32) t);
		default:
			return Int64GetDatum(t);	/* bigint, timestamp, timestamptz */
	}
}

/* A dead letter's reason: the rule that dropped the event. */
static const char *
drop_reason_text(const Worker *w, wa_drop_reason reason)
{
	switch (reason)
	{
		case WA_DROP_SESSION_CLOSED:
			return "session closed: the event touches a closed session of its key";
		case WA_DROP_OUT_OF_RANGE:
			return "the session the event would open would end beyond the range of its type";
		case WA_DROP_NONE:
		case WA_DROP_TOO_LATE:
			break;
	}
	return w->def->windows.n_windows > 0 ?
		"too late: every window containing the event has closed" :
		"too late: the session the event would open has closed";
}

/*
 * Ingest the batch under the state lock (nothing but the engine runs
 * there), then count its rows and send the too-late ones to the dead
 * letters.  A source whose rows live only until the next (a logical
 * stream) gives batches of one row, still its current one, which a dead
 * letter shows whole.
 */
static void
ingest_batch(Worker *w)
{
	MemoryContext old;

	if (w->n_batched == 0)
		return;
	old = MemoryContextSwitchTo(w->epoch_cxt);
	lock_state(w);
	for (int i = 0; i < w->n_batched; i++)
	{
		PendingRow *r = &w->batch[i];

		r->wm_before = wa_engine_watermark(w->engine);

		/*
		 * An event that only windows beyond the range (which never emit)
		 * would take is dropped, not lost: the engine is not asked, since
		 * it knows nothing of the range.
		 */
		if (r->some_out_of_range &&
			!wa_window_range_open(&w->range, r->t, r->wm_before,
								  w->def->lateness))
		{
			r->result = WA_INGEST_DROPPED;
			r->reason = drop_reason_text(w, WA_DROP_TOO_LATE);
		}
		else
		{
			r->result = wa_engine_ingest(w->engine, &r->key, r->t,
										 &w->inputs[i * w->n_inputs]);
			if (r->result == WA_INGEST_DROPPED)
				r->reason = drop_reason_text(w, wa_engine_drop_reason(w->engine));
		}
	}
	unlock_state(w);
	for (int i = 0; i < w->n_batched; i++)
	{
		PendingRow *r = &w->batch[i];

		w->delta.events_in++;
		if (r->result == WA_INGEST_DROPPED)
		{
			wa_sink_add_dead_letter(&w->sink, r->arrival, event_time_datum(w, r->t),
									false, r->reason, r->wm_before,
									source_row_jsonb(w));
			w->delta.dead_letters++;
		}
		else if (r->result == WA_INGEST_PARTIAL || r->some_out_of_range)
			w->delta.events_partial++;
	}
	MemoryContextSwitchTo(old);
	w->n_batched = 0;
	MemoryContextReset(w->row_cxt);
}

static void
worker_row(void *arg, TupleTableSlot *slot, int64 arrival, bool counts)
{
	Worker	   *w = arg;
	WaAggQuery *q = w->query;
	MemoryContext old;
	const char *problem;
	int64		t = 0;
	PendingRow *r;
	WaWindowsInRange in_range = WA_IN_RANGE_ALL;

	if (!counts)
		return;
	problem = row_event_time(w, slot, &t);
	if (problem == NULL)
	{
		in_range = wa_window_range_of(&w->range, t);
		if (in_range == WA_IN_RANGE_NONE)
			problem = "every window containing the event reaches beyond the range of its type";
	}
	if (problem == NULL)
	{
		bool		fits;

		fits = wa_key_fits(&w->key_fit, slot->tts_values, slot->tts_isnull);
		if (!fits)
			problem = w->key_too_large;
	}
	if (problem != NULL)
	{
		/* its dead letter shows the watermark the rows before it made */
		ingest_batch(w);
		old = MemoryContextSwitchTo(w->epoch_cxt);
		wa_sink_add_dead_letter(&w->sink, arrival,
								datumCopy(slot->tts_values[q->n_keys], true, 8),
								slot->tts_isnull[q->n_keys], problem,
								wa_engine_watermark(w->engine),
								source_row_jsonb(w));
		MemoryContextSwitchTo(old);
		w->delta.dead_letters++;
		return;
	}

	r = &w->batch[w->n_batched];
	r->arrival = arrival;
	r->t = t;
	r->some_out_of_range = in_range == WA_IN_RANGE_SOME;
	/* a pipeline's query guesses no scale: every input fits */
	if (!wa_row_inputs(q, slot, &w->inputs[w->n_batched * w->n_inputs]))
		elog(ERROR, "a pipeline's input was read with a guessed scale");
	old = MemoryContextSwitchTo(w->row_cxt);
	/* generic aggregates read by-reference inputs after the scan moved on */
	for (int j = 0; j < w->n_inputs; j++)
	{
		wa_value   *v = &w->inputs[w->n_batched * w->n_inputs + j];

		if (!w->input_byval[j] && !v->isnull)
			v->i = (int64) datumCopy((Datum) v->i, false, w->input_typlen[j]);
	}
	wa_key_encode(&w->codec, slot->tts_values, slot->tts_isnull, &r->key);
	if (!q->int_key)
	{
		/* the codec reuses its buffer for the next key */
		uint8	   *bytes = palloc(Max(r->key.len, 1));

		memcpy(bytes, r->key.bytes, r->key.len);
		r->key.bytes = bytes;
	}
	MemoryContextSwitchTo(old);
	/* a row that lives only until the next one is a batch of its own */
	if (++w->n_batched == ROWS_PER_BATCH || wa_source_rows_transient(w->source))
		ingest_batch(w);
}

/* An update or delete of a source row: not an event. */
static void
worker_change(void *arg, char kind, int64 arrival, Datum event_time,
			  bool event_time_null)
{
	Worker	   *w = arg;
	MemoryContext old;

	if (kind == 'U')
		w->delta.source_updates++;
	else
		w->delta.source_deletes++;
	if (!w->def->dead_letter_changes)
		return;
	old = MemoryContextSwitchTo(w->epoch_cxt);
	wa_sink_add_dead_letter(&w->sink, arrival,
							event_time_null ? (Datum) 0 : datumCopy(event_time, true, 8),
							event_time_null,
							kind == 'U' ? "update of a source row: the source is read as a stream of inserts" :
							"delete of a source row: the source is read as a stream of inserts",
							wa_engine_watermark(w->engine), source_row_jsonb(w));
	MemoryContextSwitchTo(old);
	w->delta.dead_letters++;
}

/*
 * A row on which the query's own code raised an error (source.h): a dead
 * letter with that error, and no event time, since computing it may be
 * what failed.
 */
static void
worker_poison(void *arg, int64 arrival, const char *message)
{
	Worker	   *w = arg;
	MemoryContext old;

	/* its dead letter shows the watermark the rows before it made */
	ingest_batch(w);
	old = MemoryContextSwitchTo(w->epoch_cxt);
	wa_sink_add_dead_letter(&w->sink, arrival, (Datum) 0, true,
							psprintf("error in the pipeline's query: %s", message),
							wa_engine_watermark(w->engine), source_row_jsonb(w));
	MemoryContextSwitchTo(old);
	w->delta.dead_letters++;
}

/* After each source transaction, and before the source blocks (source.h). */
static void
worker_yield(void *arg)
{
	unlock_state((Worker *) arg);
}

/* ---------- engine state ---------- */

static void
create_engine(Worker *w)
{
	wa_config	config;

	wa_agg_query_engine_config(w->query, &w->def->windows, w->def->bound,
							   w->def->lateness, &config);
	config.emit = emit_pane;
	config.emit_arg = w;
	config.generic = wa_generic_callbacks(w->generic);
	wa_arena_allocator_init(&w->allocator, w->slot);
	config.allocator = &w->allocator;
	wa_engine_config_check(&config);
	lock_state(w);
	w->engine = wa_engine_create(&config);
	w->slot->engine = w->engine;
	w->slot->engine_dbid = MyDatabaseId;
	w->slot->engine_pipeline_id = w->def->id;
	memcpy(w->slot->engine_shape, w->shape, WA_SHAPE_LEN);
	unlock_state(w);
}

/* Forget the engine, whatever state a failure left it in. */
static void
discard_engine(WaPipelineSlot *slot)
{
	bool		held = LWLockHeldByMe(&slot->state_lock);

	if (!held)
		wa_state_lock_exclusive(slot);
	slot->engine = NULL;
	slot->engine_dbid = InvalidOid;
	slot->engine_pipeline_id = 0;
	slot->engine_busy = false;
	wa_arena_reset(&slot->arena);
	if (!held)
		LWLockRelease(&slot->state_lock);
}

static Datum
tick_to_numeric(wa_tick t, bool *isnull)
{
	*isnull = t <= WA_TICK_MIN;
	if (*isnull)
		return (Datum) 0;
	if (t >= WA_TICK_MAX)
		return DirectFunctionCall3(numeric_in, CStringGetDatum("Infinity"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	return wa_int128_to_numeric(t);
}

/* The watermark of the progress row, which must be a whole tick. */
static wa_tick
stored_watermark(Worker *w, Datum value)
{
	wa_tick		wm = 0;
	WaNumericTickProblem problem = wa_numeric_to_tick(value, &wm);

	if (problem == WA_NUMERIC_TICK_OK)
		return wm;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 problem == WA_NUMERIC_TICK_NAN ?
			 errmsg("the watermark stored for pipeline \"%s\" is NaN", w->def->name) :
			 problem == WA_NUMERIC_TICK_FRACTION ?
			 errmsg("the watermark stored for pipeline \"%s\" is not a whole number", w->def->name) :
			 errmsg("the watermark stored for pipeline \"%s\" lies beyond the range of ticks", w->def->name),
			 errdetail("A watermark is a whole number of ticks between -2^100 and 2^100, or Infinity."),
			 errhint("Set windowagg.pipeline_progress.watermark to such a number, or to NULL, then call windowagg.resume('%s').",
					 w->def->name)));
	return wm;					/* not reached */
}

/* Load the definition, the offset and the slices (in a transaction). */
static void
restore(Worker *w)
{
	WaProgressRow row;
	bool		found;
	WaSourceOffset offset;
	wa_time_state time;
	EngineStep	step;
	WaCheckpointLog *log;

	create_engine(w);

	/* the row's array and watermark are copied into the epoch's memory */
	MemoryContextSwitchTo(w->epoch_cxt);
	found = wa_catalog_progress_read(w->def->id, &row);
	/*
	 * The progress row and the checkpoint log are written in one
	 * transaction; while pg_restore is loading them they can disagree, and
	 * the worker waits (fails, and is retried) until they agree.
	 */
	w->restoring_from_dump = true;	/* these two errors last only so long */
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" has no progress row yet", w->def->name),
				 errdetail("It is written with the pipeline, or by pg_restore after it.")));
	if (row.checkpoint_seq != row.log_end_seq)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("checkpoint of pipeline \"%s\" is not complete yet", w->def->name),
				 errdetail("Its progress row refers to checkpoint %lld, the log ends at %lld.",
						   (long long) row.checkpoint_seq,
						   (long long) row.log_end_seq)));
	w->restoring_from_dump = false;
	/* the source's offset as committed */
	memset(&offset, 0, sizeof(offset));
	offset.arrival_hwm_null = row.arrival_hwm_null;
	offset.arrival_hwm = row.arrival_hwm;
	offset.arrival_gaps = row.arrival_gaps;
	offset.lsn = row.source_lsn;
	memset(&time, 0, sizeof(time));
	time.max_ts = row.max_event_time;
	time.seen_event = !row.max_event_time_null;
	time.wm = row.watermark_null ? WA_TICK_MIN : stored_watermark(w, row.watermark);
	w->committed = row.counters;
	w->committed.max_event_time = time.max_ts;

	/*
	 * The slices, from the checkpoint log: read (a query and a sort) before
	 * the state lock is taken, then given to the engine under it, which
	 * stays busy for readers until the restore is complete.
	 */
	w->sink.ckpt.acc_size = wa_engine_acc_size(w->engine);
	log = wa_ckpt_read(&w->sink.ckpt, w->engine);
	lock_state(w);
	engine_step_begin(&step, w, "restoring");
	wa_engine_restore_time(w->engine, &time);
	wa_ckpt_restore(&w->sink.ckpt, w->engine, log);
	wa_engine_restore_done(w->engine);
	engine_step_end(&step);
	unlock_state(w);
	if (wa_ckpt_rewrite(&w->sink.ckpt, log))
		wa_catalog_progress_set_checkpoint(w->def->id, w->sink.ckpt.seq);
	/* read again from the committed offset */
	wa_source_start(w->source, &offset);
	publish_progress(w, false, false, 0);
}

/* ---------- progress ---------- */

/* What the source knows of the pipeline, in the worker's context. */
static const WaSourceDef *
source_def(Worker *w)
{
	WaSourceDef *sd = MemoryContextAllocZero(w->cxt, sizeof(WaSourceDef));

	sd->pipeline = w->def->name;
	sd->owner = w->def->owner;
	sd->relid = w->def->source;
	sd->arrival_column = w->def->arrival_column;
	sd->dead_letter_table = w->def->dead_letter_table;
	sd->logical = w->def->logical;
	sd->connection = w->def->connection;
	sd->publication = w->def->publication;
	sd->remote_schema = w->def->remote_schema;
	sd->remote_table = w->def->remote_table;
	sd->slot_name = w->def->slot_name;
	return sd;
}

/* The source's part of the counters; true if it stalled (why says so). */
static bool
report_source(Worker *w, char *why, Size why_len)
{
	WaSourceStats stats;
	bool		stalled;

	memset(&stats, 0, sizeof(stats));
	stalled = wa_source_report(w->source, &stats, why, why_len);
	w->committed.n_gaps = stats.n_gaps;
	w->committed.oldest_gap_at = stats.oldest_gap_at;
	w->committed.oldest_gap_pid = stats.oldest_gap_pid;
	w->committed.retained_wal = stats.retained_wal;
	w->committed.retained_wal_known = stats.retained_wal_known;
	return stalled;
}

/* Publish the committed counters to the slot (after commit). */
static void
publish_progress(Worker *w, bool caught_up, bool flushed, uint64 seq)
{
	WaPipelineSlot *slot = w->slot;
	wa_tick		wm = wa_engine_watermark(w->engine);
	wa_stats	stats;
	bool		stalled;
	char		why[sizeof(((WaPipelineSlot *) NULL)->last_error)];

	wa_engine_get_stats(w->engine, &stats);
	w->committed.has_watermark = wm > PG_INT64_MIN && wm < PG_INT64_MAX;
	w->committed.watermark_done = wm >= WA_TICK_MAX;
	w->committed.watermark = w->committed.has_watermark ? (int64) wm : 0;
	w->committed.last_epoch_at = GetCurrentTimestamp();
	stalled = report_source(w, why, sizeof(why));
	SpinLockAcquire(&slot->mutex);
	slot->stats = w->committed;
	if (caught_up && seq > slot->caught_up_seq)
		slot->caught_up_seq = seq;
	if (seq > 0)
		slot->failure_streak = 0;	/* an epoch went through */
	if (flushed)
		slot->flushed_seq = seq;
	if (stalled)
	{
		/* the one source that stalls: a table at windowagg.max_gaps */
		slot->status = WA_STATUS_GAPS_FULL;
		strlcpy(slot->last_error, why, sizeof(slot->last_error));
	}
	else
	{
		if (slot->status != WA_STATUS_FLUSHED || !flushed)
			slot->status = w->committed.watermark_done ? WA_STATUS_FLUSHED :
				WA_STATUS_RUNNING;
		slot->last_error[0] = '\0';
	}
	SpinLockRelease(&slot->mutex);
}

static void
write_progress(Worker *w, const wa_time_state *time)
{
	WaSourceOffset offset;
	WaProgressUpdate update;

	wa_source_get_offset(w->source, &offset);
	update.pipeline_id = w->def->id;
	update.arrival_hwm = offset.arrival_hwm;
	update.arrival_gaps = offset.arrival_gaps;
	update.max_event_time_null = !time->seen_event;
	update.max_event_time = time->max_ts;
	update.watermark = tick_to_numeric(time->wm, &update.watermark_null);
	update.delta = &w->delta;
	update.checkpoint_seq = w->sink.ckpt.seq;
	update.source_lsn = offset.lsn;
	if (!wa_catalog_progress_write(w->progress_plan, &update))
		elog(ERROR, "could not record the progress of pipeline \"%s\"", w->def->name);
}

/* ---------- changes to the source table ---------- */

static void
source_invalidated(Datum arg, Oid relid)
{
	Worker	   *w = (Worker *) DatumGetPointer(arg);

	if (w->def != NULL && (relid == InvalidOid || relid == w->def->source))
		w->source_changed = true;
}

/*
 * The source must still be the table the pipeline was created over: a
 * table renamed away and another one made under its name would otherwise
 * be read from the first one's offset.
 */
static void
check_same_source(Worker *w, const WaAggQuery *q)
{
	if (q->relid != w->def->source)
	{
		w->stop_for_user = true;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the query of pipeline \"%s\" no longer reads its source table", w->def->name),
				 errdetail("It names table \"%s\", and the pipeline was created over the table now called \"%s\".",
						   q->relname, get_rel_name(w->def->source) ? get_rel_name(w->def->source) : "(dropped)"),
				 errhint("Rename the tables back and call windowagg.resume('%s'), or drop and re-create the pipeline.",
						 w->def->name)));
	}
}

/* Error unless column name of the result table, if it has one, has type typid. */
static void
check_result_column(Worker *w, Oid result_table, const char *name, Oid typid)
{
	AttrNumber	attnum = get_attnum(result_table, name);
	Oid			stored;
	int32		typmod;
	Oid			collation;

	if (attnum == InvalidAttrNumber)
		return;					/* the upsert says what is missing */
	get_atttypetypmodcoll(result_table, attnum, &stored, &typmod, &collation);
	if (stored == typid)
		return;
	w->stop_for_user = true;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("the source table of pipeline \"%s\" changed", w->def->name),
			 errdetail("Its query now gives column \"%s\" type %s, and the result table holds %s.",
					   name, format_type_be(typid), format_type_be(stored)),
			 errhint("Restore the table's definition and call windowagg.resume('%s'), or drop and re-create the pipeline.",
					 w->def->name)));
}

/*
 * The query's columns must have the types of the result table, which the
 * query had when the pipeline was created: a worker that starts while a
 * source column has another type (after a restart, the pipeline having
 * stopped on that change) must stop again, not read the new type.
 */
static void
check_result_types(Worker *w, const WaAggQuery *q)
{
	Oid			window_type = q->domain == WA_TIME_INTEGER ? INT8OID :
		q->event_time_type;

	for (int t = 0; t < 2; t++)
	{
		Oid			table = t == 0 ? w->def->result_table : w->def->sessions_table;

		if (!OidIsValid(table))
			continue;
		for (int i = 0; i < q->n_keys; i++)
			check_result_column(w, table, q->keys[i].name, q->keys[i].typid);
		check_result_column(w, table, "window_start", window_type);
		check_result_column(w, table, "window_end", window_type);
		for (int i = 0; i < q->n_outputs; i++)
			check_result_column(w, table, q->outputs[i].name, q->outputs[i].type);
	}
}

/*
 * After an ALTER TABLE on the source (or a GRANT, or a change of its
 * row-level security), the query must still mean what it meant: a dropped
 * column fails to parse, and a column whose type changed would otherwise
 * be read as the old type.
 */
static void
recheck_source(Worker *w)
{
	WaAggQuery *now;
	uint8		shape[WA_SHAPE_LEN];

	w->source_changed = false;
	now = wa_pipeline_query_parse_now(w->def);
	check_same_source(w, now);
	wa_agg_query_check_code_owners(now, w->def->owner, w->def->name);
	/* with the query as it reads now: a column may have been replaced */
	wa_source_check(w->source, now);
	wa_pipeline_shape(w->def, now, shape);
	if (memcmp(shape, w->shape, WA_SHAPE_LEN) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the source table of pipeline \"%s\" changed", w->def->name),
				 errdetail("Its query now reads columns of other types than when the pipeline was created."),
				 errhint("Restore the table's definition and call windowagg.resume('%s'), or drop and re-create the pipeline.",
						 w->def->name)));
}

/*
 * The current time as an event time, for idle_timeout: a timestamp
 * without time zone is wall-clock time in the zone the pipeline was
 * created in.
 */
static int64
event_clock(const Worker *w, TimestampTz now)
{
	if (w->query->event_time_type != TIMESTAMPOID)
		return now;
	return wa_wall_clock(now, w->clock_zone);
}

/* ---------- the owner ---------- */

/*
 * A pipeline belongs to the owner of its result table: DROP ROLE refuses
 * an owner that still has the table (a dependency PostgreSQL records).
 * When the table changes hands (REASSIGN OWNED, ALTER TABLE ... OWNER TO),
 * the pipeline does not follow by itself: its query, and the functions it
 * calls, were written by the old owner, and would run with the new one's
 * rights.  The worker stops instead, and the new owner takes the pipeline
 * over by resuming it (src/commands/pipeline_ddl.c), having read the query.
 */
/*
 * The tables a pipeline writes are the ones it was created with, by OID:
 * locked before an epoch writes, so that no one drops them meanwhile (an
 * epoch with nothing to write waits for no one's lock).  The owner of
 * their schema may drop them between epochs (the pipeline's catalog row
 * is invisible to it, so nothing refuses); the worker then stops rather
 * than let its statements find another table of the same name, whose
 * triggers would run as the owner.
 */
static void
lock_pipeline_table(Worker *w, Oid relid, const char *what)
{
	LockRelationOid(relid, AccessShareLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the %s of pipeline \"%s\" was dropped", what, w->def->name),
				 errdetail("The pipeline writes only into the tables it was created with."),
				 errhint("Drop the pipeline with windowagg.drop_pipeline('%s') and create it again.",
						 w->def->name)));
}

/*
 * At setup and each epoch: run as the result table's owner, or not at all;
 * a sessions table belongs to the same role.
 */
static void
check_owner(Worker *w)
{
	/* InvalidOid: dropped, which the epoch reports if it has to write */
	Oid			owner = wa_relation_owner(w->def->result_table);
	Oid			sessions_owner = OidIsValid(w->def->sessions_table) ?
		wa_relation_owner(w->def->sessions_table) : InvalidOid;
	const char *name;

	if (OidIsValid(owner) && owner != w->def->owner)
	{
		name = GetUserNameFromId(owner, true);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the result table of pipeline \"%s\" now belongs to role \"%s\"",
						w->def->name, name ? name : "?"),
				 errdetail("A pipeline's query runs with its owner's rights; a new owner takes it over explicitly."),
				 errhint("Role \"%s\" (or a member) takes the pipeline over by calling windowagg.resume('%s'), after reading its query.",
						 name ? name : "?", w->def->name)));
	}
	if (OidIsValid(sessions_owner) && sessions_owner != w->def->owner)
	{
		name = GetUserNameFromId(sessions_owner, true);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the sessions table of pipeline \"%s\" now belongs to role \"%s\"",
						w->def->name, name ? name : "?"),
				 errdetail("A pipeline writes its result table and its sessions table with the rights of one role, its owner."),
				 errhint("Give both tables to one role; that role (or a member) then takes the pipeline over by calling windowagg.resume('%s').",
						 w->def->name)));
	}
}

/* ---------- an epoch ---------- */

static void
add_stats(WaPipelineStats *to, const WaPipelineStats *delta)
{
	to->events_in += delta->events_in;
	to->events_partial += delta->events_partial;
	to->dead_letters += delta->dead_letters;
	to->panes_on_time += delta->panes_on_time;
	to->panes_late += delta->panes_late;
	to->epochs += delta->epochs;
	to->source_updates += delta->source_updates;
	to->source_deletes += delta->source_deletes;
}

/* One epoch; returns true if the worker should wait for more rows. */
static bool
run_epoch(Worker *w)
{
	WaPipelineSlot *slot = w->slot;
	uint64		seq;
	uint64		flush_request;
	bool		caught_up;
	bool		flush = false;
	bool		changed;
	WaReadResult read;
	TimestampTz now;
	wa_time_state time;
	EngineStep	step;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	wa_enter_restricted(w->def->owner);
	/* one snapshot for the whole epoch */
	XactIsoLevel = XACT_REPEATABLE_READ;
	wa_source_begin_epoch(w->source);
	SpinLockAcquire(&slot->mutex);
	seq = ++slot->snapshot_seq;
	flush_request = slot->flush_request;
	SpinLockRelease(&slot->mutex);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "windowagg epoch");
	MemoryContextSwitchTo(w->epoch_cxt);
	memset(&w->delta, 0, sizeof(w->delta));
	if (!OidIsValid(get_extension_oid("windowagg", true)))
		leave_dropped(w);		/* DROP EXTENSION took the pipeline along */
	check_owner(w);
	if (w->source_changed)
		recheck_source(w);

	wa_source_read(w->source, wa_epoch_rows, &read);
	caught_up = read.caught_up;
	ingest_batch(w);			/* the rows read last */

	lock_state(w);
	MemoryContextSwitchTo(w->epoch_cxt);
	now = GetCurrentTimestamp();
	if (caught_up && flush_request != 0 && seq >= flush_request)
		flush = true;
	engine_step_begin(&step, w, flush ? "flushing" : "firing");
	if (read.rows > 0)
		w->last_row_at = now;
	else if (w->def->has_idle_timeout &&
			 now - w->last_row_at >= w->def->idle_timeout_us)
		wa_engine_advance(w->engine, (wa_tick) event_clock(w, now) - w->def->bound);
	if (flush)
		wa_engine_flush(w->engine);
	wa_engine_emit_late(w->engine);
	/* the checkpoint reads generic states from the engine's memory */
	wa_generic_write_back(w->generic);
	wa_sink_collect_checkpoint(&w->sink, w->engine, &time);
	engine_step_end(&step);
	w->committed.max_event_time = time.max_ts;
	if (flush)
		w->sink.expire_below = PG_INT64_MAX;	/* a flushed engine holds nothing */
	unlock_state(w);

	changed = flush || read.offset_dirty ||
		w->sink.panes.nrows > 0 || w->sink.dead.nrows > 0 ||
		w->sink.sessions.nrows > 0 || w->sink.retracted.nrows > 0 ||
		w->sink.ckpt.delta_slices > 0 || w->sink.ckpt.delta_sessions > 0 ||
		w->sink.expire_below > w->sink.ckpt.expired_below;
	if (changed)
	{
		wa_stats	stats;

		wa_engine_get_stats(w->engine, &stats);
		w->delta.epochs = 1;
		lock_pipeline_table(w, w->def->result_table, "result table");
		if (OidIsValid(w->def->sessions_table))
			lock_pipeline_table(w, w->def->sessions_table, "sessions table");
		lock_pipeline_table(w, w->def->dead_letter_table, "dead-letter table");
		wa_sink_write(&w->sink, now);
		w->delta.panes_on_time = w->sink.n_on_time;
		w->delta.panes_late = w->sink.n_late;
		wa_sink_write_checkpoint(&w->sink, &stats);
		write_progress(w, &time);
	}

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	wa_leave_restricted();
	pgstat_report_activity(STATE_IDLE, NULL);
	wa_sink_reset(&w->sink);
	MemoryContextReset(w->epoch_cxt);
	MemoryContextReset(w->row_cxt);
	add_stats(&w->committed, &w->delta);
	wa_source_after_commit(w->source, changed);
	publish_progress(w, caught_up, flush, seq);
	/* wait for more unless there is a backlog to read */
	return caught_up || read.stalled;
}

/* ---------- set-up ---------- */

/* The pipeline no longer exists: give the slot back and leave. */
static void
leave_dropped(Worker *w)
{
	SpinLockAcquire(&w->slot->mutex);
	w->slot->drop_requested = true;
	SpinLockRelease(&w->slot->mutex);
	wa_wake_launcher();
	proc_exit(0);
}

/*
 * Become the owner the catalog names (never one a trigger or a slot
 * passed on), if its role and its database run fewer pipelines than the
 * limits allow.  Inside setup's restricted transaction (xact.c), which
 * gives the worker's own identity back once it commits; restore and the
 * epochs become the owner again in theirs.
 */
static void
become_owner(Worker *w)
{
	Oid			owner = w->def->owner;
	int			role_running;
	int			db_running;

	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the owner of pipeline \"%s\" no longer exists", w->def->name),
				 errdetail("Role with OID %u was dropped.", owner),
				 errhint("Drop and re-create the pipeline.")));
	if (!wa_slot_admit(w->slot, owner, superuser_arg(owner),
					   &role_running, &db_running))
	{
		bool		role_full = role_running >= wa_max_pipelines_per_role;

		w->waiting_for_room = true;
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 role_full ?
				 errmsg("role \"%s\" already runs %d pipelines (windowagg.max_pipelines_per_role)",
						GetUserNameFromId(owner, false), role_running) :
				 errmsg("database \"%s\" already runs %d pipelines (windowagg.max_pipelines_per_database)",
						get_database_name(MyDatabaseId), db_running),
				 errdetail("Pipeline \"%s\" starts once one of them stops, or the limit is raised.",
						   w->def->name)));
	}
	/* within setup's restricted transaction (xact.c) */
	SetUserIdAndSecContext(owner, SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

static void
setup(Worker *w)
{
	MemoryContext old;
	Oid			window_type;
	WaSourceConsumer consumer;

	wa_begin_work(InvalidOid);	/* become_owner takes the owner's role */

	old = MemoryContextSwitchTo(w->cxt);
	w->def = wa_catalog_load(w->slot->pipeline_id, NULL);
	/* SPI calls leave SPI's context current: switch back after each */
	MemoryContextSwitchTo(w->cxt);
	if (w->def == NULL)
		leave_dropped(w);		/* its creating (sub)transaction rolled
								 * back, or it was dropped */
	check_owner(w);
	become_owner(w);
	wa_trust_only_owned_code(w->def->name);
	pgstat_report_appname(psprintf("windowagg pipeline %s", w->def->name));

	/*
	 * Parsed as the owner (who must still be able to read the source) and
	 * under the creator's search_path, which the worker keeps: the row
	 * query deparsed now runs for the worker's lifetime.
	 */
	(void) set_config_option("search_path", w->def->search_path,
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SET, true, 0, false);
	w->query = wa_pipeline_query_parse_now(w->def);
	check_same_source(w, w->query);
	check_result_types(w, w->query);
	wa_agg_query_check_code_owners(w->query, w->def->owner, w->def->name);
	wa_own_relations(w->query, w->def->result_table, w->def->sessions_table,
					 w->def->dead_letter_table);
	wa_window_set_check_limits(&w->def->windows);
	consumer.row = worker_row;
	consumer.change = worker_change;
	consumer.poison = worker_poison;
	consumer.yield = worker_yield;
	consumer.arg = w;
	w->source = wa_source_open(source_def(w), w->query, &consumer, w->cxt,
							   w->epoch_cxt);
	MemoryContextSwitchTo(w->cxt);	/* SPI left its own current */
	wa_pipeline_shape(w->def, w->query, w->shape);
	wa_key_codec_init(&w->codec, w->query);
	window_type = w->query->domain == WA_TIME_INTEGER ? INT8OID :
		w->query->event_time_type;
	wa_window_range_init(&w->range, &w->def->windows, window_type);
	wa_window_set_limit_sessions(&w->def->windows, window_type);
	wa_key_fit_init(&w->key_fit, w->query, window_type, w->def->result_table);
	w->key_too_large = psprintf("the key is too large for the result table's index (%d bytes after compression)",
								wa_btree_max_item());
	/* only an idle timeout over timestamp without time zone reads it */
	if (w->def->has_idle_timeout && w->query->event_time_type == TIMESTAMPOID)
		w->clock_zone = wa_time_zone(w->def->time_zone, w->def->name);
	w->n_inputs = wa_agg_query_n_inputs(w->query);
	w->inputs = palloc0(sizeof(wa_value) * (w->n_inputs + 1) * ROWS_PER_BATCH);
	w->input_typlen = palloc(sizeof(int16) * (w->n_inputs + 1));
	w->input_byval = palloc(sizeof(bool) * (w->n_inputs + 1));
	for (int j = 0; j < w->n_inputs; j++)
	{
		get_typlenbyval(w->query->input_types[j], &w->input_typlen[j],
						&w->input_byval[j]);
		/* a numeric read as a fixed-point integer is one (numeric_fixed.c) */
		if (w->query->input_scales[j] >= 0)
			w->input_byval[j] = true;
	}
	w->batch = palloc0(sizeof(PendingRow) * ROWS_PER_BATCH);
	/* after the query's code was checked: it plans and compiles the query */
	wa_source_prepare(w->source);
	/* run as the owner, like the query: checks it may call them */
	w->generic = wa_generic_create(w->query);
	wa_generic_set_guard(w->generic, guard_state_lock, w);
	/* the accumulator size is known once an engine exists (restore) */
	wa_sink_init(&w->sink, w->def, w->query, &w->codec, 0, w->generic, w->cxt);
	w->progress_plan = wa_catalog_progress_prepare();
	CacheRegisterRelcacheCallback(source_invalidated, PointerGetDatum(w));
	MemoryContextSwitchTo(old);
	wa_end_work();
}

static void
restore_in_transaction(Worker *w)
{
	wa_begin_work(w->def->owner);
	MemoryContextSwitchTo(w->epoch_cxt);
	restore(w);
	wa_end_work();
	MemoryContextReset(w->epoch_cxt);
	w->last_row_at = GetCurrentTimestamp();
}

/* ---------- requests, failures and exit ---------- */

static void
check_requests(Worker *w)
{
	WaPipelineSlot *slot = w->slot;
	bool		ours;
	bool		wanted;
	bool		restart;

	SpinLockAcquire(&slot->mutex);
	ours = !wa_slot_gone(slot, w->generation) && !slot->held;
	wanted = slot->wanted;
	if (ours && !wanted)
		slot->status = WA_STATUS_PAUSED;

	/*
	 * A pause and a resume can both commit before the worker looks: it
	 * starts again all the same, since whoever paused it may have changed
	 * what a new worker reads (its query's functions, the result table's
	 * owner) and expects the resumed pipeline to see it.
	 */
	restart = ours && wanted && slot->pauses != w->pauses_seen;
	if (restart)
	{
		slot->status = WA_STATUS_STARTING;
		slot->restarting = true;
	}
	SpinLockRelease(&slot->mutex);
	if (!ours || !wanted || restart)
		proc_exit(0);
}

/*
 * A worker terminated while it holds the state lock (halfway through a
 * firing) detaches its engine before the exit's clean-up releases the
 * lock, so that no reader sees it half-modified; worker_exit frees it.
 * Registered after the connection, so that it runs before that clean-up.
 */
static void
detach_engine_at_exit(int code, Datum arg)
{
	WaPipelineSlot *slot = (WaPipelineSlot *) DatumGetPointer(arg);

	if (LWLockHeldByMe(&slot->state_lock))
	{
		slot->engine = NULL;
		slot->engine_dbid = InvalidOid;
		slot->engine_pipeline_id = 0;
	}
}

static void
worker_exit(int code, Datum arg)
{
	WaPipelineSlot *slot = (WaPipelineSlot *) DatumGetPointer(arg);

	if (worker != NULL && worker->generation == slot->generation)
		discard_engine(slot);
	if (worker != NULL && worker->source != NULL)
	{
		bool		dropped;

		SpinLockAcquire(&slot->mutex);
		dropped = wa_slot_gone(slot, worker->generation);
		SpinLockRelease(&slot->mutex);
		wa_source_close(worker->source, dropped);
	}
	SpinLockAcquire(&slot->mutex);
	if (slot->pid == MyProcPid)
	{
		slot->pid = 0;
		slot->worker_latch = NULL;
	}
	SpinLockRelease(&slot->mutex);
	if (worker != NULL && worker->generation == slot->generation)
		wa_slot_leave(slot);
	wa_wake_launcher();
}

/*
 * Errors that retrying cannot cure: the source table or the result table
 * changed or went away, or the owner lost a privilege (SQLSTATE class 42),
 * or the query no longer passes validation, or its checkpoint is corrupt.
 * The pipeline stops until a user calls windowagg.resume, instead of
 * failing again every minute.
 */
static bool
needs_user_action(int sqlerrcode)
{
	return ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION ||
		sqlerrcode == ERRCODE_FEATURE_NOT_SUPPORTED ||
		sqlerrcode == ERRCODE_DATA_CORRUPTED;
}

/*
 * After an error: report it, roll back, and throw the engine away.
 * Returns true if the error was the state memory limit.
 */
static bool
recover_from_error(Worker *w)
{
	ErrorData  *edata;
	bool		memory_full;
	bool		needs_user;
	bool		dropped;

	MemoryContextSwitchTo(w->cxt);
	edata = CopyErrorData();

	/*
	 * The error may have stopped the engine halfway through a change (an
	 * interrupt taken while firing): detach it before the abort releases
	 * the state lock, so that no reader of live windows sees it.
	 */
	discard_engine(w->slot);
	w->engine = NULL;
	if (w->generic != NULL)
		wa_generic_forget(w->generic);

	/*
	 * A pipeline dropped with its tables while its worker runs makes the
	 * worker fail on a vanished table or row; it leaves right after, so
	 * that is no error worth a user's attention.
	 */
	SpinLockAcquire(&w->slot->mutex);
	dropped = wa_slot_gone(w->slot, w->generation);
	SpinLockRelease(&w->slot->mutex);
	if (dropped)
		ereport(DEBUG1,
				(errmsg_internal("pipeline dropped while its worker ran: %s",
								 edata->message)));
	else
		EmitErrorReport();
	FlushErrorState();

	/*
	 * All of it: an error the worker does not handle itself may come from
	 * inside a subtransaction (the source reads in them, source/table.c),
	 * and AbortCurrentTransaction would abort only that, leaving the next
	 * transaction to start inside an aborted one.
	 */
	AbortOutOfAnyTransaction();
	wa_forget_restricted();		/* the abort restored the identity */
	w->locked = false;
	if (w->source != NULL)
		wa_source_close(w->source, false);	/* restore reads from the offset */
	wa_sink_reset(&w->sink);
	w->n_batched = 0;			/* restore reads them again */
	MemoryContextReset(w->epoch_cxt);
	MemoryContextReset(w->row_cxt);

	memory_full = w->slot->memory_limit_hit;
	w->slot->memory_limit_hit = false;
	needs_user = !memory_full && !w->waiting_for_room &&
		(w->stop_for_user || (w->source != NULL && w->source->needs_user) ||
		 needs_user_action(edata->sqlerrcode));
	w->stop_for_user = false;
	if (w->source != NULL)
		w->source->needs_user = false;
	SpinLockAcquire(&w->slot->mutex);
	/* the same failure again and again is not one that retrying cures */
	if (!memory_full && !w->waiting_for_room && !w->restoring_from_dump &&
		!needs_user)
	{
		if (strcmp(w->slot->last_failure, edata->message) == 0)
			w->slot->failure_streak++;
		else
			w->slot->failure_streak = 1;
		strlcpy(w->slot->last_failure, edata->message, sizeof(w->slot->last_failure));
		needs_user = w->slot->failure_streak >= FAILURES_BEFORE_STOP;
	}
	w->slot->status = memory_full ? WA_STATUS_MEMORY_FULL :
		w->waiting_for_room ? WA_STATUS_WAITING :
		needs_user ? WA_STATUS_STOPPED : WA_STATUS_FAILED;
	w->slot->needs_resume = needs_user;
	strlcpy(w->slot->last_error, edata->message, sizeof(w->slot->last_error));
	SpinLockRelease(&w->slot->mutex);
	FreeErrorData(edata);
	return memory_full;
}

/* Stopped at the memory limit: wait until it is raised. */
static void
wait_for_more_memory(Worker *w)
{
	int			limit = wa_max_state_memory_kb;

	while (wa_max_state_memory_kb <= limit)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		check_requests(w);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

void
wa_worker_main(Datum arg)
{
	int			index = DatumGetInt32(arg);
	WaPipelineSlot *slot = &wa_shared->slots[index];
	Oid			dbid;
	uint32		generation;
	uint32		pauses_seen;
	Worker	   *w;

	memcpy(&dbid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	memcpy(&generation, MyBgworkerEntry->bgw_extra + sizeof(Oid), sizeof(uint32));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	SpinLockAcquire(&slot->mutex);
	if (!slot->in_use || slot->generation != generation || slot->pid != 0)
	{
		SpinLockRelease(&slot->mutex);
		proc_exit(0);
	}
	slot->pid = MyProcPid;
	slot->worker_latch = MyLatch;
	slot->status = WA_STATUS_STARTING;
	slot->restarting = false;
	pauses_seen = slot->pauses;
	SpinLockRelease(&slot->mutex);

	w = MemoryContextAllocZero(TopMemoryContext, sizeof(Worker));
	w->slot = slot;
	w->generation = generation;
	w->pauses_seen = pauses_seen;
	w->cxt = AllocSetContextCreate(TopMemoryContext, "windowagg worker",
								   ALLOCSET_DEFAULT_SIZES);
	/* an epoch's buffers are kept between epochs, not given back and faulted in */
	w->epoch_cxt = AllocSetContextCreate(TopMemoryContext, "windowagg epoch",
										 0, 8 * 1024 * 1024, 8 * 1024 * 1024);
	w->row_cxt = AllocSetContextCreate(TopMemoryContext, "windowagg row",
									   ALLOCSET_SMALL_SIZES);
	worker = w;
	/* registered before the connection, so it runs after its clean-up */
	before_shmem_exit(worker_exit, PointerGetDatum(slot));

	/*
	 * Connect as the bootstrap superuser (a role that may not log in can
	 * still own a pipeline), but never act with its rights: every
	 * transaction of the worker is a security-restricted operation
	 * (xact.c), setup becomes the owner before anything of the owner's
	 * runs, and restore and the epochs run as the owner.  Transactions
	 * that abort restore the identity they started with, and only catalog
	 * statements (query/catalog_scope.c) switch away from it.
	 */
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	before_shmem_exit(detach_engine_at_exit, PointerGetDatum(slot));

	for (;;)
	{
		bool		failed = false;

		PG_TRY();
		{
			if (w->def == NULL)
				setup(w);
			restore_in_transaction(w);
			for (;;)
			{
				check_requests(w);
				/* also while catching up with a backlog, which may be long */
				if (ConfigReloadPending)
				{
					ConfigReloadPending = false;
					ProcessConfigFile(PGC_SIGHUP);
				}
				if (!run_epoch(w))
					continue;	/* a backlog: no waiting */
				wa_source_wait(w->source, wa_epoch_ms);
				CHECK_FOR_INTERRUPTS();
			}
		}
		PG_CATCH();
		{
			failed = true;
		}
		PG_END_TRY();

		if (failed && recover_from_error(w))
			wait_for_more_memory(w);
		else if (failed)
			proc_exit(1);
	}
}
