/*-------------------------------------------------------------------------
 *
 * pipeline_control.c
 *	  windowagg.wait, flush, live and the status behind stat_pipelines.
 *
 * wait() and flush() synchronise with the worker through two counters in
 * the slot: every epoch bumps snapshot_seq just before it takes its
 * snapshot, and publishes caught_up_seq after it committed having read
 * everything its snapshot showed.  An epoch numbered above the value a
 * caller read started after the call, so its snapshot shows every row
 * committed before the call; once it is caught up and committed, so are
 * those rows.  Both are the owner's (flushing moves the watermark to
 * +infinity for good).
 *
 * live() reads the worker's engine in shared memory.  It decodes keys and
 * values with its own parse of the pipeline's query, so it does so only
 * if that parse has the shape the worker built the engine with (a column
 * type may have changed since, or the name may now belong to another
 * pipeline).
 *
 * _pipeline_status() shows each caller what the caller may see: members
 * of a pipeline's owner role everything, members of pg_monitor every
 * pipeline's status and counters, and whoever may read a pipeline's
 * results its status.
 *
 * src/commands/pipeline_control.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(wa_wait_pipeline);
PG_FUNCTION_INFO_V1(wa_flush_pipeline);
PG_FUNCTION_INFO_V1(wa_live);
PG_FUNCTION_INFO_V1(wa_pipeline_status);

/* The slot of a pipeline, which it has once created or found at start. */
static WaPipelineSlot *
pipeline_slot(const WaPipelineDef *def)
{
	WaPipelineSlot *slot = wa_slot_find_id(MyDatabaseId, def->id);

	if (slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" has no slot in shared memory", def->name),
				 errdetail("The server had no free slot for it when it started (windowagg.max_pipelines)."),
				 errhint("Raise windowagg.max_pipelines and restart the server.")));
	return slot;
}

static int64
timeout_ms(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		return -1;				/* no limit */
	return wa_interval_to_ticks(PG_GETARG_INTERVAL_P(argno), "timeout", true) / 1000;
}

/*
 * Wait until the counter that pick() reads from the slot exceeds target.
 * Returns false on timeout.
 */
static bool
wait_for_slot(WaPipelineSlot *slot, uint32 generation, const char *name,
			  uint64 target, bool flushed, int64 timeout)
{
	TimestampTz start = GetCurrentTimestamp();
	WaPipelineStatus noticed = WA_STATUS_RUNNING;

	wa_wake_worker(slot);
	for (;;)
	{
		uint64		reached;
		bool		wanted;
		bool		dropped;
		bool		needs_resume;
		WaPipelineStatus status;
		char		last_error[sizeof(slot->last_error)];

		SpinLockAcquire(&slot->mutex);
		reached = flushed ? slot->flushed_seq : slot->caught_up_seq;
		wanted = slot->wanted;
		needs_resume = slot->needs_resume;
		status = slot->status;
		strlcpy(last_error, slot->last_error, sizeof(last_error));
		dropped = wa_slot_gone(slot, generation);
		SpinLockRelease(&slot->mutex);
		if (reached > target)
			return true;
		if (dropped)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("pipeline \"%s\" was dropped", name)));
		if (!wanted)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("pipeline \"%s\" is paused", name),
					 errhint("Resume it with windowagg.resume('%s').", name)));
		/* stopped: nothing will happen until a user acts */
		if (needs_resume)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("pipeline \"%s\" is stopped", name),
					 errdetail("It stopped on: %s", last_error),
					 errhint("Fix the cause, then call windowagg.resume('%s').", name)));
		/* a state it may leave by itself: wait, but say so (once) */
		if ((status == WA_STATUS_FAILED || status == WA_STATUS_MEMORY_FULL ||
			 status == WA_STATUS_WAITING || status == WA_STATUS_GAPS_FULL) &&
			status != noticed)
		{
			ereport(NOTICE,
					(errmsg("pipeline \"%s\" is %s; waiting for it to recover",
							name, wa_status_name(status)),
					 last_error[0] != '\0' ? errdetail("%s", last_error) : 0));
			noticed = status;
		}
		if (timeout >= 0 &&
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), (int) Min(timeout, INT_MAX)))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 5, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The pipeline named by argument 0, for wait() and flush(): the current
 * user must own it.
 */
static WaPipelineSlot *
owned_pipeline_arg(FunctionCallInfo fcinfo, WaPipelineDef **def)
{
	wa_require_shared();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be null")));
	*def = wa_pipeline_lookup(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	wa_check_pipeline_owner(*def);
	return pipeline_slot(*def);
}

/*
 * wait(name, timeout) and flush(name, timeout): until an epoch that
 * started after the call has read everything (and, for flush, fired every
 * window).
 */
static bool
wait_or_flush(FunctionCallInfo fcinfo, bool flush)
{
	WaPipelineDef *def;
	WaPipelineSlot *slot = owned_pipeline_arg(fcinfo, &def);
	uint64		target;
	uint32		generation;

	SpinLockAcquire(&slot->mutex);
	target = slot->snapshot_seq;
	generation = slot->generation;
	/* the first epoch to start after this call flushes (0 means none) */
	if (flush && slot->flush_request < target + 1)
		slot->flush_request = target + 1;
	SpinLockRelease(&slot->mutex);
	return wait_for_slot(slot, generation, def->name, target, flush,
						 timeout_ms(fcinfo, 1));
}

Datum
wa_wait_pipeline(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(wait_or_flush(fcinfo, false));
}

Datum
wa_flush_pipeline(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(wait_or_flush(fcinfo, true));
}

/* ---------- live windows ---------- */

typedef struct LiveOutput
{
	const WaAggQuery *query;
	WaOutputEval *outputs;		/* the result columns of a pane */
	WaKeyCodec	codec;
	Oid			window_type;
	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
	Datum	   *values;
	bool	   *nulls;
	WaGeneric  *generic;		/* runs the owner's code */
	const char *name;
	WaPipelineSlot *slot;
	uint64		state_changes;	/* the slot's, when its lock was taken */
	bool		reading;		/* under the lock, in wa_engine_live */
} LiveOutput;

static void
emit_live(void *arg, const wa_pane *pane)
{
	LiveOutput *out = arg;
	const WaAggQuery *q = out->query;
	int			col;

	/* the worker may be waiting for the lock held here */
	wa_check_for_interrupts_locked();
	if (!wa_pane_representable(pane, out->window_type))
		return;
	wa_key_decode(&out->codec, &pane->key, out->values, out->nulls);
	col = q->n_keys;
	out->values[col] = wa_ticks_to_datum(pane->start, out->window_type, "window_start");
	out->nulls[col++] = false;
	out->values[col] = wa_ticks_to_datum(pane->end, out->window_type, "window_end");
	out->nulls[col++] = false;
	wa_generic_output_values(out->generic, out->outputs, pane->results,
							 &out->values[col], &out->nulls[col]);
	tuplestore_putvalues(out->tupstore, out->tupdesc, out->values, out->nulls);
}

WaAggQuery *
wa_pipeline_query_for_reader(const char *name, const char *action,
							 WaPipelineDef **def_out)
{
	WaPipelineDef *def = wa_pipeline_lookup(name);
	WaAggQuery *q;

	/* live windows hold the sessions too: both tables' readers only */
	for (int t = 0; t < 2; t++)
	{
		Oid			table = t == 0 ? def->result_table : def->sessions_table;
		bool		missing = false;

		if (!OidIsValid(table))
			continue;
		if (pg_class_aclcheck_ext(table, GetUserId(), ACL_SELECT,
								  &missing) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for the results of pipeline \"%s\"", name),
					 errdetail("%s needs SELECT on table %s.", action,
							   missing ? "(dropped)" : get_rel_name(table))));
	}
	if (def_out != NULL)
		*def_out = def;
	q = wa_pipeline_query_parse_as_owner(def);

	/*
	 * live() runs what this parse found, as the owner, as the worker runs
	 * its own parse: the same rule on whose code that may be (a function
	 * another role created since, matching better under the pipeline's
	 * search_path, must not run as the owner here either).
	 */
	wa_agg_query_check_code_owners(q, def->owner, def->name);
	return q;
}

/*
 * Take the state lock to read the engine: cancellable while the worker
 * holds it (a long flush), and never ahead of a worker that waits for it.
 */
static void
lock_for_reading(WaPipelineSlot *slot, const char *name)
{
	if (LWLockHeldByMe(&slot->state_lock))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the live windows of pipeline \"%s\" cannot be read while they change", name)));
	for (;;)
	{
		if (!slot->writer_waiting &&
			LWLockConditionalAcquire(&slot->state_lock, LW_SHARED))
			return;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Around the owner's code under the lock (OWNER_CODE): after it, a
 * subtransaction it aborted (a PL/pgSQL EXCEPTION block) let go of every
 * LWLock.  Take the lock again; if a writer had it meanwhile, what this
 * read holds of the engine may be gone, and the read stops.  Before it,
 * a lock lost elsewhere stops the read too.
 */
static void
relock_for_reading(void *arg, bool after)
{
	LiveOutput *out = arg;

	if (!out->reading || LWLockHeldByMe(&out->slot->state_lock))
		return;
	if (!after)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the live windows of pipeline \"%s\" changed while they were read", out->name),
				 errdetail("A function that caught an error let go of the lock that keeps the windows in place.")));
	lock_for_reading(out->slot, out->name);
	if (out->slot->state_changes != out->state_changes)
	{
		LWLockRelease(&out->slot->state_lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the live windows of pipeline \"%s\" changed while they were read", out->name),
				 errdetail("A function of its query caught an error, which let go of the lock that keeps the windows in place."),
				 errhint("Try again.")));
	}
}

static void
live_context(void *arg)
{
	errcontext("reading the live windows of pipeline \"%s\"", (const char *) arg);
}

/* Read the engine under the state lock (see read_live_as_owner). */
static void
read_live_locked(const WaPipelineDef *def, WaPipelineSlot *slot,
				 const uint8 *shape, LiveOutput *out,
				 const wa_agg_generic *generic)
{
	ErrorContextCallback reading;

	(void) wa_pool();			/* attach before reading pool memory */
	lock_for_reading(slot, def->name);
	out->state_changes = slot->state_changes;

	/*
	 * An engine of this pipeline, in this database (the slot may be
	 * reused), that no failed change left half-done.
	 */
	if (slot->engine != NULL && slot->engine_dbid == MyDatabaseId &&
		slot->engine_pipeline_id == def->id && !slot->engine_busy)
	{
		void	   *scratch;
		wa_result  *results;

		if (memcmp(slot->engine_shape, shape, WA_SHAPE_LEN) != 0)
		{
			LWLockRelease(&slot->state_lock);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the live windows of pipeline \"%s\" cannot be read now", def->name),
					 errdetail("Its query no longer means what it meant when its worker started: its source table, or an aggregate or function it uses, has changed."),
					 errhint("Try again once the worker has restarted, or has stopped (see windowagg.stat_pipelines).")));
		}
		scratch = palloc(wa_engine_acc_size(slot->engine));
		results = palloc(sizeof(wa_result) * (out->query->n_aggs + 1));
		/* a cancel taken under the lock says where it stopped the read */
		reading.callback = live_context;
		reading.arg = def->name;
		reading.previous = error_context_stack;
		error_context_stack = &reading;
		out->reading = true;
		wa_engine_live(slot->engine, generic, emit_live, out, scratch, results);
		out->reading = false;
		error_context_stack = reading.previous;
	}
	LWLockRelease(&slot->state_lock);
}

/*
 * The live windows' values, computed as the worker computes them: generic
 * aggregates' and expressions' code is the owner's, and runs as the owner,
 * security-restricted, under the pipeline's search_path (never with the
 * reader's rights), with any setting it changes undone.  The support
 * functions are looked up before the state lock is taken: a catalog
 * lookup may wait for a lock, which must never happen under it.
 */
static void
read_live_as_owner(const WaPipelineDef *def, WaPipelineSlot *slot,
				   const uint8 *shape, LiveOutput *out)
{
	Oid			save_userid;
	int			save_sec_context;
	int			nest;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(def->owner, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	nest = NewGUCNestLevel();
	PG_TRY();
	{
		WaGeneric  *generic;

		(void) set_config_option("search_path",
								 psprintf("%s, pg_temp", def->search_path),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
		generic = wa_generic_create(out->query);
		out->generic = generic;
		out->name = def->name;
		out->slot = slot;
		wa_generic_set_guard(generic, relock_for_reading, out);
		out->outputs = wa_output_eval_create(out->query);
		read_live_locked(def, slot, shape, out, wa_generic_callbacks(generic));
		wa_generic_done(generic);
	}
	PG_FINALLY();
	{
		AtEOXact_GUC(false, nest);
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
}

/* live(name) returns setof record: keys, window_start, window_end, aggregates */
Datum
wa_live(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	WaPipelineDef *def;
	WaPipelineSlot *slot;
	LiveOutput	out;
	TupleDesc	ours;
	AttrNumber	att = 1;
	uint8		shape[WA_SHAPE_LEN];

	wa_require_shared();
	out.query = wa_pipeline_query_for_reader(name, "Reading live windows", &def);
	/* live windows have no rows to apply the tables' policies to */
	for (int t = 0; t < 2; t++)
	{
		Oid			table = t == 0 ? def->result_table : def->sessions_table;

		if (OidIsValid(table) &&
			check_enable_rls(table, InvalidOid, true) == RLS_ENABLED)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for the live windows of pipeline \"%s\"", name),
					 errdetail("Row-level security applies to you on table %s, and live windows cannot be filtered by its policies.",
							   get_rel_name(table))));
	}
	slot = pipeline_slot(def);
	wa_pipeline_shape(def, out.query, shape);

	out.window_type = out.query->domain == WA_TIME_INTEGER ? INT8OID :
		out.query->event_time_type;
	ours = CreateTemplateTupleDesc(out.query->n_keys + 2 + out.query->n_outputs);
	for (int i = 0; i < out.query->n_keys; i++)
		TupleDescInitEntry(ours, att++, out.query->keys[i].name,
						   out.query->keys[i].typid, out.query->keys[i].typmod, 0);
	TupleDescInitEntry(ours, att++, "window_start", out.window_type, -1, 0);
	TupleDescInitEntry(ours, att++, "window_end", out.window_type, -1, 0);
	for (int i = 0; i < out.query->n_outputs; i++)
		TupleDescInitEntry(ours, att++, out.query->outputs[i].name,
						   out.query->outputs[i].type, -1, 0);
	wa_check_expected_desc(rsinfo ? rsinfo->expectedDesc : NULL, ours, "live");
	wa_start_result(rsinfo);
	out.tupstore = rsinfo->setResult;
	out.tupdesc = rsinfo->setDesc;
	out.values = palloc0(sizeof(Datum) * ours->natts);
	out.nulls = palloc0(sizeof(bool) * ours->natts);
	wa_key_codec_init(&out.codec, out.query);

	read_live_as_owner(def, slot, shape, &out);
	return (Datum) 0;
}

/* ---------- status ---------- */

/* What the current user may see of a pipeline's status. */
typedef enum StatusAccess
{
	STATUS_NONE,				/* not even that it exists */
	STATUS_READER,				/* may read its results: its status */
	STATUS_MONITOR,				/* pg_monitor: status and counters */
	STATUS_OWNER				/* everything, its last error too */
} StatusAccess;

/*
 * The output columns of windowagg._pipeline_status (its OUT arguments in
 * sql/windowagg--0.2.0.sql), as indexes into values[] and nulls[].  A
 * server still at 0.1.0 declares the first 15 only: tuplestore_putvalues
 * reads as many as the declared row type has.
 */
enum
{
	Col_status_pipeline = 0,
	Col_status_status,
	Col_status_worker_pid,
	Col_status_events_in,
	Col_status_events_partial,
	Col_status_dead_letters,
	Col_status_panes_on_time,
	Col_status_panes_late,
	Col_status_epochs,
	Col_status_watermark,
	Col_status_max_event_time,
	Col_status_state_bytes,
	Col_status_last_epoch_at,
	Col_status_last_error,
	Col_status_retained_wal_bytes,
	Col_status_gaps,
	Col_status_oldest_gap_at,
	Col_status_oldest_gap_pid,
	Ncols_status
};

static StatusAccess
status_access(Oid owner, Oid result_table, bool monitor)
{
	bool		missing = false;

	if (wa_is_pipeline_owner(owner))
		return STATUS_OWNER;
	if (monitor)
		return STATUS_MONITOR;
	if (OidIsValid(result_table) &&
		pg_class_aclcheck_ext(result_table, GetUserId(), ACL_SELECT,
							  &missing) == ACLCHECK_OK)
		return STATUS_READER;
	return STATUS_NONE;
}

Datum
wa_pipeline_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		monitor = has_privs_of_role(GetUserId(), ROLE_PG_MONITOR);

	wa_require_shared();
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];
		WaPipelineSlot copy;
		StatusAccess access;
		Datum		values[Ncols_status];
		bool		nulls[Ncols_status];

		SpinLockAcquire(&slot->mutex);
		copy.in_use = slot->in_use;
		copy.dbid = slot->dbid;
		copy.pipeline_id = slot->pipeline_id;
		copy.owner = slot->owner;
		copy.result_table = slot->result_table;
		copy.status = slot->status;
		copy.pid = slot->pid;
		copy.stats = slot->stats;
		copy.arena.bytes = slot->arena.bytes;
		strlcpy(copy.last_error, slot->last_error, sizeof(copy.last_error));
		SpinLockRelease(&slot->mutex);
		if (!copy.in_use || copy.dbid != MyDatabaseId)
			continue;
		access = status_access(copy.owner, copy.result_table, monitor);
		if (access == STATUS_NONE)
			continue;

		/* readers get the first two columns; the rest stay NULL */
		memset(nulls, true, sizeof(nulls));
		memset(values, 0, sizeof(values));
		values[Col_status_pipeline] = Int32GetDatum(copy.pipeline_id);
		nulls[Col_status_pipeline] = false;
		values[Col_status_status] = CStringGetTextDatum(wa_status_name(copy.status));
		nulls[Col_status_status] = false;
		if (access >= STATUS_MONITOR)
		{
			values[Col_status_worker_pid] = Int32GetDatum(copy.pid);
			nulls[Col_status_worker_pid] = copy.pid == 0;
			values[Col_status_events_in] = Int64GetDatum(copy.stats.events_in);
			nulls[Col_status_events_in] = false;
			values[Col_status_events_partial] = Int64GetDatum(copy.stats.events_partial);
			nulls[Col_status_events_partial] = false;
			values[Col_status_dead_letters] = Int64GetDatum(copy.stats.dead_letters);
			nulls[Col_status_dead_letters] = false;
			values[Col_status_panes_on_time] = Int64GetDatum(copy.stats.panes_on_time);
			nulls[Col_status_panes_on_time] = false;
			values[Col_status_panes_late] = Int64GetDatum(copy.stats.panes_late);
			nulls[Col_status_panes_late] = false;
			values[Col_status_epochs] = Int64GetDatum(copy.stats.epochs);
			nulls[Col_status_epochs] = false;
			if (copy.stats.watermark_done)
				values[Col_status_watermark] =
					DirectFunctionCall3(numeric_in, CStringGetDatum("Infinity"),
										ObjectIdGetDatum(InvalidOid),
										Int32GetDatum(-1));
			else
				values[Col_status_watermark] =
					DirectFunctionCall1(int8_numeric,
										Int64GetDatum(copy.stats.watermark));
			nulls[Col_status_watermark] = !copy.stats.has_watermark &&
				!copy.stats.watermark_done;
			values[Col_status_max_event_time] = Int64GetDatum(copy.stats.max_event_time);
			nulls[Col_status_max_event_time] = copy.stats.events_in == 0;
			values[Col_status_state_bytes] = Int64GetDatum((int64) copy.arena.bytes);
			nulls[Col_status_state_bytes] = false;
			values[Col_status_last_epoch_at] = TimestampTzGetDatum(copy.stats.last_epoch_at);
			nulls[Col_status_last_epoch_at] = copy.stats.last_epoch_at == 0;
			/* an error may quote the owner's data: the owner's to see */
			values[Col_status_last_error] = CStringGetTextDatum(copy.last_error);
			nulls[Col_status_last_error] = access < STATUS_OWNER ||
				copy.last_error[0] == '\0';
			values[Col_status_retained_wal_bytes] = Int64GetDatum(copy.stats.retained_wal);
			nulls[Col_status_retained_wal_bytes] = !copy.stats.retained_wal_known;
			/* table sources: the gaps it waits for, and who holds the oldest */
			values[Col_status_gaps] = Int32GetDatum(copy.stats.n_gaps);
			nulls[Col_status_gaps] = copy.stats.last_epoch_at == 0 ||
				copy.stats.n_gaps < 0;
			values[Col_status_oldest_gap_at] = TimestampTzGetDatum(copy.stats.oldest_gap_at);
			nulls[Col_status_oldest_gap_at] = copy.stats.oldest_gap_at == 0;
			values[Col_status_oldest_gap_pid] = Int32GetDatum(copy.stats.oldest_gap_pid);
			nulls[Col_status_oldest_gap_pid] = copy.stats.oldest_gap_pid == 0;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
