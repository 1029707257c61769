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
 * those rows.
 *
 * src/pipeline_control.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(wa_wait_pipeline);
PG_FUNCTION_INFO_V1(wa_flush_pipeline);
PG_FUNCTION_INFO_V1(wa_live);
PG_FUNCTION_INFO_V1(wa_pipeline_status);

static WaPipelineSlot *
running_slot(const char *name)
{
	WaPipelineSlot *slot = wa_slot_find(MyDatabaseId, name);

	if (slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" does not exist", name)));
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
wait_for_slot(WaPipelineSlot *slot, const char *name, uint64 target,
			  bool flushed, int64 timeout)
{
	TimestampTz start = GetCurrentTimestamp();

	wa_wake_worker(slot);
	for (;;)
	{
		uint64		reached;
		bool		wanted;
		bool		dropped;

		SpinLockAcquire(&slot->mutex);
		reached = flushed ? slot->flushed_seq : slot->caught_up_seq;
		wanted = slot->wanted;
		dropped = slot->drop_requested || !slot->in_use;
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
		if (timeout >= 0 &&
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), (int) Min(timeout, INT_MAX)))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 5, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The pipeline named by argument 0, for wait() and flush(). */
static WaPipelineSlot *
pipeline_arg(FunctionCallInfo fcinfo, char **name)
{
	wa_require_shared();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be null")));
	*name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	return running_slot(*name);
}

/* wait(name, timeout) returns boolean */
Datum
wa_wait_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name;
	WaPipelineSlot *slot = pipeline_arg(fcinfo, &name);
	uint64		target;

	SpinLockAcquire(&slot->mutex);
	target = slot->snapshot_seq;
	SpinLockRelease(&slot->mutex);
	PG_RETURN_BOOL(wait_for_slot(slot, name, target, false, timeout_ms(fcinfo, 1)));
}

/* flush(name, timeout) returns boolean */
Datum
wa_flush_pipeline(PG_FUNCTION_ARGS)
{
	char	   *name;
	WaPipelineSlot *slot = pipeline_arg(fcinfo, &name);
	uint64		target;

	SpinLockAcquire(&slot->mutex);
	target = slot->snapshot_seq;
	/* the first epoch to start after this call flushes (0 means none) */
	if (slot->flush_request < target + 1)
		slot->flush_request = target + 1;
	SpinLockRelease(&slot->mutex);
	PG_RETURN_BOOL(wait_for_slot(slot, name, target, true, timeout_ms(fcinfo, 1)));
}

/* ---------- live windows ---------- */

typedef struct LiveOutput
{
	const WaAggQuery *query;
	WaKeyCodec	codec;
	Oid			window_type;
	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
	Datum	   *values;
	bool	   *nulls;
} LiveOutput;

static void
emit_live(void *arg, const wa_pane *pane)
{
	LiveOutput *out = arg;
	const WaAggQuery *q = out->query;
	int			col;

	wa_key_decode(&out->codec, &pane->key, out->values, out->nulls);
	col = q->n_keys;
	out->values[col] = wa_ticks_to_datum(pane->start, out->window_type, "window_start");
	out->nulls[col++] = false;
	out->values[col] = wa_ticks_to_datum(pane->end, out->window_type, "window_end");
	out->nulls[col++] = false;
	for (int i = 0; i < q->n_aggs; i++, col++)
		out->values[col] = wa_result_to_datum(&q->aggs[i], &pane->results[i],
											  &out->nulls[col]);
	tuplestore_putvalues(out->tupstore, out->tupdesc, out->values, out->nulls);
}

WaAggQuery *
wa_pipeline_query_for_reader(const char *name, const char *action,
							 WaPipelineDef **def_out)
{
	MemoryContext caller = CurrentMemoryContext;
	WaPipelineDef *def;
	WaAggQuery *query;
	Oid			save_userid;
	int			save_sec_context;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the definition must outlive SPI_finish */
	MemoryContextSwitchTo(caller);
	def = wa_catalog_load(0, name);
	if (def == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" does not exist", name)));
	if (pg_class_aclcheck(def->result_table, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for the results of pipeline \"%s\"", name),
				 errdetail("%s needs SELECT on table %s.", action,
						   get_rel_name(def->result_table))));
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(def->owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	query = wa_pipeline_query_parse(def);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	SPI_finish();
	MemoryContextSwitchTo(caller);
	if (def_out != NULL)
		*def_out = def;
	return query;
}

/* live(name) returns setof record: keys, window_start, window_end, aggregates */
Datum
wa_live(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	WaPipelineSlot *slot;
	LiveOutput	out;
	TupleDesc	ours;
	AttrNumber	att = 1;

	wa_require_shared();
	slot = running_slot(name);
	out.query = wa_pipeline_query_for_reader(name, "Reading live windows", NULL);

	out.window_type = out.query->domain == WA_TIME_INTEGER ? INT8OID :
		out.query->event_time_type;
	ours = CreateTemplateTupleDesc(out.query->n_keys + 2 + out.query->n_aggs);
	for (int i = 0; i < out.query->n_keys; i++)
		TupleDescInitEntry(ours, att++, out.query->keys[i].name,
						   out.query->keys[i].typid, out.query->keys[i].typmod, 0);
	TupleDescInitEntry(ours, att++, "window_start", out.window_type, -1, 0);
	TupleDescInitEntry(ours, att++, "window_end", out.window_type, -1, 0);
	for (int i = 0; i < out.query->n_aggs; i++)
		TupleDescInitEntry(ours, att++, out.query->aggs[i].name,
						   out.query->aggs[i].result_type, -1, 0);
	wa_check_expected_desc(rsinfo ? rsinfo->expectedDesc : NULL, ours, "live");
	wa_start_result(rsinfo);
	out.tupstore = rsinfo->setResult;
	out.tupdesc = rsinfo->setDesc;
	out.values = palloc0(sizeof(Datum) * ours->natts);
	out.nulls = palloc0(sizeof(bool) * ours->natts);
	wa_key_codec_init(&out.codec, out.query);

	(void) wa_pool();			/* attach before reading pool memory */
	LWLockAcquire(&slot->state_lock, LW_SHARED);
	if (slot->engine != NULL)
	{
		void	   *scratch = palloc(wa_engine_acc_size(slot->engine));
		wa_result  *results = palloc(sizeof(wa_result) * (out.query->n_aggs + 1));

		wa_engine_live(slot->engine, emit_live, &out, scratch, results);
	}
	LWLockRelease(&slot->state_lock);
	return (Datum) 0;
}

/* ---------- status ---------- */

Datum
wa_pipeline_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	wa_require_shared();
	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < wa_shared->max_pipelines; i++)
	{
		WaPipelineSlot *slot = &wa_shared->slots[i];
		WaPipelineSlot copy;
		Datum		values[16];
		bool		nulls[16];
		int			c = 0;

		SpinLockAcquire(&slot->mutex);
		copy.in_use = slot->in_use;
		copy.dbid = slot->dbid;
		copy.pipeline_id = slot->pipeline_id;
		copy.status = slot->status;
		copy.pid = slot->pid;
		copy.stats = slot->stats;
		copy.arena.bytes = slot->arena.bytes;
		strlcpy(copy.last_error, slot->last_error, sizeof(copy.last_error));
		SpinLockRelease(&slot->mutex);
		if (!copy.in_use || copy.dbid != MyDatabaseId)
			continue;

		memset(nulls, false, sizeof(nulls));
		values[c++] = Int32GetDatum(copy.pipeline_id);
		values[c++] = CStringGetTextDatum(wa_status_name(copy.status));
		values[c] = Int32GetDatum(copy.pid);
		nulls[c++] = copy.pid == 0;
		values[c++] = Int64GetDatum(copy.stats.events_in);
		values[c++] = Int64GetDatum(copy.stats.events_partial);
		values[c++] = Int64GetDatum(copy.stats.dead_letters);
		values[c++] = Int64GetDatum(copy.stats.panes_on_time);
		values[c++] = Int64GetDatum(copy.stats.panes_late);
		values[c++] = Int64GetDatum(copy.stats.epochs);
		if (copy.stats.watermark_done)
			values[c] = DirectFunctionCall3(numeric_in, CStringGetDatum("Infinity"),
											ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
		else
			values[c] = DirectFunctionCall1(int8_numeric,
											Int64GetDatum(copy.stats.watermark));
		nulls[c++] = !copy.stats.has_watermark && !copy.stats.watermark_done;
		values[c] = Int64GetDatum(copy.stats.max_event_time);
		nulls[c++] = copy.stats.events_in == 0;
		values[c++] = Int64GetDatum((int64) copy.arena.bytes);
		values[c] = TimestampTzGetDatum(copy.stats.last_epoch_at);
		nulls[c++] = copy.stats.last_epoch_at == 0;
		values[c] = CStringGetTextDatum(copy.last_error);
		nulls[c++] = copy.last_error[0] == '\0';
		values[c++] = Int64GetDatum(copy.stats.retained_wal);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
