/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  windowagg.aggregate() and windowagg.dropped(): the engine over the
 *	  rows of a query, in one SQL call.
 *
 * The user's aggregate query is rewritten into a row query (agg_query.c)
 * and executed through SPI with a DestReceiver that feeds every row to the
 * engine as it is produced, so no intermediate result is materialized.
 * Rows are ingested in the order the row query returns them (arrival
 * order), and late panes are emitted after each row, exactly as a pipeline
 * whose every epoch held one row would.  Session windows add panes of
 * kind 'retract': a session that a merge replaced, emitted before the
 * pane of the session that replaces it, so that the output replays into
 * a table (delete the retracted row, upsert the others).
 *
 * Both functions return SETOF record.  PostgreSQL needs the caller's
 * column definition list to plan the call; the list is checked against the
 * columns windowagg derives from the query, and a mismatch is reported with
 * the list to use.
 *
 * src/commands/batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "tcop/dest.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(wa_aggregate);
PG_FUNCTION_INFO_V1(wa_dropped);

/* One run of the engine over a row query, and where its output goes. */
typedef struct BatchRun
{
	WaAggQuery *query;
	WaWindowSet windows;
	WaWindowRange range;		/* windows the window type can hold */
	int64		lateness;
	bool		want_dropped;	/* output dropped rows, not panes */
	bool		window_column;	/* panes say which window: sessions share
								 * no bounds rule with other windows */
	Oid			window_type;	/* type of window_start/end and watermark */

	wa_engine  *engine;
	WaKeyCodec	codec;
	WaOutputEval *outputs;		/* the output columns of a pane */
	WaGeneric  *generic;		/* the aggregates without kernels */
	int			n_inputs;
	wa_value   *inputs;
	int64		arrival;		/* ordinal of the current row */
	bool		guess_failed;	/* a row did not fit a guessed scale */

	Tuplestorestate *tupstore;
	TupleDesc	tupdesc;
	Datum	   *out_values;
	bool	   *out_nulls;
	MemoryContext engine_context;	/* the engine's state, and only it */
	MemoryContext row_context;	/* per-row and per-pane scratch */
	uint32		row_allocs;		/* rows and panes since its last reset */
	Datum		pane_on_time;	/* the pane kinds, made once */
	Datum		pane_late;
	Datum		pane_retract;
} BatchRun;

/*
 * Scratch memory is reset every this many rows and panes rather than after
 * each: most rows allocate nothing, and a reset per row costs more than
 * the rows it frees.
 */
#define ROWS_PER_RESET 1024

static inline void
row_context_done(BatchRun *run)
{
	if (++run->row_allocs >= ROWS_PER_RESET)
	{
		MemoryContextReset(run->row_context);
		run->row_allocs = 0;
	}
}

typedef struct BatchReceiver
{
	DestReceiver pub;
	BatchRun   *run;
} BatchReceiver;

/* ---------- output ---------- */

static void
emit_pane(void *arg, const wa_pane *pane)
{
	BatchRun   *run = arg;
	WaAggQuery *q = run->query;
	MemoryContext old = MemoryContextSwitchTo(run->row_context);
	int			col = 0;

	/* one event can fire millions of windows: stay cancellable */
	CHECK_FOR_INTERRUPTS();
	/* a window the result's type cannot hold does not exist */
	if (run->want_dropped || !wa_pane_representable(pane, run->window_type))
	{
		MemoryContextSwitchTo(old);
		return;
	}
	wa_key_decode(&run->codec, &pane->key, run->out_values, run->out_nulls);
	col = q->n_keys;
	if (run->window_column)
	{
		run->out_values[col] = Int32GetDatum(wa_window_position(&run->windows,
																pane->window));
		run->out_nulls[col++] = false;
	}
	run->out_values[col] = wa_ticks_to_datum(pane->start, run->window_type,
											 "window_start");
	run->out_nulls[col++] = false;
	run->out_values[col] = wa_ticks_to_datum(pane->end, run->window_type,
											 "window_end");
	run->out_nulls[col++] = false;
	wa_output_values(run->outputs, pane->results, &run->out_values[col],
					 &run->out_nulls[col]);
	col += q->n_outputs;
	run->out_values[col] = pane->kind == WA_PANE_ON_TIME ? run->pane_on_time :
		pane->kind == WA_PANE_LATE ? run->pane_late : run->pane_retract;
	run->out_nulls[col++] = false;
	run->out_values[col] = Int64GetDatum(pane->revision);
	run->out_nulls[col++] = false;

	tuplestore_putvalues(run->tupstore, run->tupdesc, run->out_values,
						 run->out_nulls);
	MemoryContextSwitchTo(old);
	row_context_done(run);
}

static void
emit_dropped(BatchRun *run, TupleTableSlot *slot)
{
	WaAggQuery *q = run->query;
	int			col;

	for (col = 0; col < q->n_keys; col++)
	{
		run->out_values[col] = slot->tts_values[col];
		run->out_nulls[col] = slot->tts_isnull[col];
	}
	run->out_values[col] = slot->tts_values[q->n_keys];
	run->out_nulls[col++] = false;
	{
		wa_tick		wm = wa_engine_watermark(run->engine);
		wa_tick		lowest;
		wa_tick		highest;

		/* no watermark yet (-infinity), or none the type can hold: NULL */
		wa_ticks_range(run->window_type, &lowest, &highest);
		run->out_nulls[col] = wm < lowest || wm > highest;
		run->out_values[col] = run->out_nulls[col] ? (Datum) 0 :
			wa_ticks_to_datum(wm, run->window_type, "watermark");
		col++;
	}
	run->out_values[col] = Int64GetDatum(run->arrival);
	run->out_nulls[col++] = false;
	tuplestore_putvalues(run->tupstore, run->tupdesc, run->out_values,
						 run->out_nulls);
}

/* ---------- input ---------- */

static int64
event_ticks(BatchRun *run, TupleTableSlot *slot)
{
	WaAggQuery *q = run->query;
	int64		ticks = 0;

	switch (wa_event_time_ticks(q->event_time_type, slot->tts_values[q->n_keys],
								slot->tts_isnull[q->n_keys], &ticks))
	{
		case WA_EVENT_TIME_NULL:
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("event_time column \"%s\" is null", q->event_time_name),
					 errdetail("Row %lld in arrival order has no event time.",
							   (long long) run->arrival)));
			break;
		case WA_EVENT_TIME_INFINITE:
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("event_time column \"%s\" is not finite",
							q->event_time_name),
					 errdetail("Row %lld in arrival order has event time infinity or -infinity.",
							   (long long) run->arrival)));
			break;
		case WA_EVENT_TIME_OK:
			break;
	}
	return ticks;
}

/*
 * The engine keeps a state per key and open window, and cannot spill: past
 * windowagg.batch_memory the call fails rather than take the server's
 * memory.  Checked after each event: the key table and slice arrays grow
 * by doubling, so the call may pass the bound by about as much again.
 */
static void
check_engine_memory(BatchRun *run)
{
	Size		held = MemoryContextMemAllocated(run->engine_context, false);

	if (unlikely(held > (Size) wa_batch_memory_kb * 1024))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the windows of this call need more than windowagg.batch_memory (%d kB)",
						wa_batch_memory_kb),
				 errdetail("They hold %zu kB after row %lld in arrival order.",
						   held / 1024, (long long) run->arrival),
				 errhint("Raise windowagg.batch_memory, or aggregate fewer keys or shorter windows in one call.")));
}

static bool
batch_receive(TupleTableSlot *slot, DestReceiver *self)
{
	BatchRun   *run = ((BatchReceiver *) self)->run;
	WaAggQuery *q = run->query;
	MemoryContext old;
	wa_key		key;
	int64		t;
	WaWindowsInRange in_range;
	wa_ingest_result result;

	CHECK_FOR_INTERRUPTS();
	run->arrival++;
	slot_getallattrs(slot);
	t = event_ticks(run, slot);
	/*
	 * No window containing it exists: dropped, as if too late for all.
	 * (This is about the set's fixed windows: a set of session windows
	 * alone is always in range, and the engine drops what would end past
	 * max_time.  Beside fixed windows, an event none of them can hold, or
	 * none that can is open for, is dropped for the sessions too: the
	 * engine cannot be asked for the sessions alone.)
	 */
	in_range = wa_window_range_of(&run->range, t);
	if (in_range == WA_IN_RANGE_NONE)
	{
		if (run->want_dropped)
			emit_dropped(run, slot);
		return true;
	}

	/* a value that does not fit a guessed scale: stop, to start again */
	if (!wa_row_inputs(q, slot, run->inputs))
	{
		run->guess_failed = true;
		return false;
	}

	old = MemoryContextSwitchTo(run->row_context);
	wa_key_encode(&run->codec, slot->tts_values, slot->tts_isnull, &key);
	MemoryContextSwitchTo(old);

	/*
	 * An event that only windows beyond the range (which never emit) would
	 * take is dropped, not lost: the engine is not asked, since it knows
	 * nothing of the range.
	 */
	if (in_range == WA_IN_RANGE_SOME &&
		!wa_window_range_open(&run->range, t, wa_engine_watermark(run->engine),
							  run->lateness))
		result = WA_INGEST_DROPPED;
	else
	{
		result = wa_engine_ingest(run->engine, &key, t, run->inputs);
		check_engine_memory(run);
	}
	if (run->want_dropped)
	{
		if (result == WA_INGEST_DROPPED)
			emit_dropped(run, slot);
	}
	else
		wa_engine_emit_late(run->engine);
	row_context_done(run);
	return true;
}

static pg_noreturn void
columns_changed(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the query's columns changed while windowagg ran it"),
			 errdetail("A function or type the query names was replaced during the call."),
			 errhint("Run the call again.")));
}

/*
 * The row query's columns must be those its WaAggQuery reads: keys, event
 * time, inputs.  They are, unless what its names resolve to changed since
 * the query was parsed (a function dropped and made anew meanwhile, by
 * another session or by the query's own code before a second run), and
 * the values would then be read as what they are not.
 */
static void
batch_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	const WaAggQuery *q = ((BatchReceiver *) self)->run->query;
	int			n = q->n_keys + 1 + q->n_inputs;
	bool		same = typeinfo->natts >= n;

	for (int i = 0; same && i < n; i++)
	{
		Oid			want = i < q->n_keys ? q->keys[i].typid :
			i == q->n_keys ? q->event_time_type :
			q->input_types[i - q->n_keys - 1];

		same = TupleDescAttr(typeinfo, i)->atttypid == want;
	}
	if (!same)
		columns_changed();
}

static void
batch_shutdown(DestReceiver *self)
{
}

static void
batch_destroy(DestReceiver *self)
{
}

/* ---------- result shape ---------- */

static TupleDesc
build_tupdesc(BatchRun *run)
{
	WaAggQuery *q = run->query;
	int			natts = run->want_dropped ? q->n_keys + 3 :
		q->n_keys + run->window_column + q->n_outputs + 4;
	TupleDesc	desc = CreateTemplateTupleDesc(natts);
	AttrNumber	att = 1;

	for (int i = 0; i < q->n_keys; i++)
		TupleDescInitEntry(desc, att++, q->keys[i].name, q->keys[i].typid,
						   q->keys[i].typmod, 0);
	if (run->want_dropped)
	{
		TupleDescInitEntry(desc, att++, q->event_time_name, q->event_time_type, -1, 0);
		TupleDescInitEntry(desc, att++, "watermark", run->window_type, -1, 0);
		TupleDescInitEntry(desc, att++, "arrival", INT8OID, -1, 0);
		return desc;
	}
	if (run->window_column)
		TupleDescInitEntry(desc, att++, "window_index", INT4OID, -1, 0);
	TupleDescInitEntry(desc, att++, "window_start", run->window_type, -1, 0);
	TupleDescInitEntry(desc, att++, "window_end", run->window_type, -1, 0);
	for (int i = 0; i < q->n_outputs; i++)
		TupleDescInitEntry(desc, att++, q->outputs[i].name, q->outputs[i].type,
						   q->outputs[i].typmod, 0);
	TupleDescInitEntry(desc, att++, "pane", TEXTOID, -1, 0);
	TupleDescInitEntry(desc, att++, "revision", INT8OID, -1, 0);
	return desc;
}

/*
 * The caller's column definition list must have our column types; names
 * are the caller's to choose.
 */
void
wa_check_expected_desc(TupleDesc expected, TupleDesc ours, const char *fname)
{
	bool		ok = expected != NULL && expected->natts == ours->natts;
	StringInfoData list;

	for (int i = 0; ok && i < ours->natts; i++)
	{
		Form_pg_attribute e = TupleDescAttr(expected, i);
		Form_pg_attribute o = TupleDescAttr(ours, i);

		/* a declared typmod (numeric(3,1)...) would not be enforced */
		if (e->atttypid != o->atttypid ||
			(e->atttypmod >= 0 && e->atttypmod != o->atttypmod))
			ok = false;
	}
	if (ok)
		return;

	initStringInfo(&list);
	for (int i = 0; i < ours->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(ours, i);

		appendStringInfo(&list, "%s%s %s", i > 0 ? ", " : "",
						 quote_identifier(NameStr(a->attname)),
						 format_type_with_typemod(a->atttypid, a->atttypmod));
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column definition list does not match the result of %s", fname),
			 errdetail("The query produces AS (%s).", list.data),
			 errhint("Call it as SELECT * FROM windowagg.%s(...) AS (%s).",
					 fname, list.data)));
}

/*
 * Set up the materialized result, as SetSingleFuncCall does, but with its
 * in-memory part bounded by windowagg.result_memory rather than work_mem:
 * a result of millions of panes is written once and read once in order,
 * and building it in fresh memory costs more than spilling it (measured:
 * hopping 60/1 min over 1M events, 0.8 s at 4MB, 1.2 s at 256MB).
 */
void
wa_start_result(ReturnSetInfo *rsinfo)
{
	MemoryContext old;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		(rsinfo->allowedModes & SFRM_Materialize) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setDesc = CreateTupleDescCopy(rsinfo->expectedDesc);
	rsinfo->setResult = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
											  false,
											  Min(wa_result_memory_kb, work_mem));
	MemoryContextSwitchTo(old);
}

/* ---------- the run ---------- */

/*
 * The columns a second parse of the query gives: those of the first, and
 * the same event time (the windows were read for its type).
 */
static void
check_same_columns(const WaAggQuery *first_query, TupleDesc first,
				   const WaAggQuery *second_query, TupleDesc second)
{
	bool		same = first->natts == second->natts &&
		first_query->event_time_type == second_query->event_time_type &&
		first_query->domain == second_query->domain;

	for (int i = 0; same && i < first->natts; i++)
		same = TupleDescAttr(first, i)->atttypid == TupleDescAttr(second, i)->atttypid;
	if (!same)
		columns_changed();
}

static WaAggQuery *
parse_batch_query(FunctionCallInfo fcinfo, bool guess_numeric_scales)
{
	return wa_agg_query_parse_batch(PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0)),
									PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)),
									PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5)),
									guess_numeric_scales);
}

/*
 * Run the engine over the rows of run->query, emitting into the
 * tuplestore; false if a value proved a guessed scale wrong, and the run
 * stopped there.
 */
static bool
stream_rows(BatchRun *run, int64 bound, int64 lateness)
{
	BatchReceiver receiver;
	SPIExecuteOptions options;
	wa_config	config;
	wa_allocator allocator;
	MemoryContext engine_context;
	int			ret;

	run->arrival = 0;
	run->guess_failed = false;

	/* the engine */
	engine_context = AllocSetContextCreate(CurrentMemoryContext,
										   "windowagg engine",
										   ALLOCSET_DEFAULT_SIZES);
	run->engine_context = engine_context;
	run->row_context = AllocSetContextCreate(CurrentMemoryContext,
											 "windowagg row",
											 ALLOCSET_SMALL_SIZES);
	run->row_allocs = 0;
	wa_engine_allocator_init(&allocator, engine_context);
	run->n_inputs = wa_agg_query_n_inputs(run->query);
	run->inputs = palloc0(sizeof(wa_value) * (run->n_inputs + 1));

	run->lateness = lateness;
	wa_agg_query_engine_config(run->query, &run->windows, bound, lateness,
							   &config);
	run->generic = wa_generic_create(run->query);
	config.generic = wa_generic_callbacks(run->generic);
	run->outputs = wa_output_eval_create(run->query);
	config.emit = emit_pane;
	config.emit_arg = run;
	config.allocator = &allocator;
	wa_engine_config_check(&config);
	run->engine = wa_engine_create(&config);
	wa_key_codec_init(&run->codec, run->query);

	/* stream the rows through the engine */
	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = batch_receive;
	receiver.pub.rStartup = batch_startup;
	receiver.pub.rShutdown = batch_shutdown;
	receiver.pub.rDestroy = batch_destroy;
	receiver.pub.mydest = DestTuplestore;	/* not DestNone: SPI would discard */
	receiver.run = run;

	memset(&options, 0, sizeof(options));
	options.read_only = false;
	options.dest = &receiver.pub;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_extended(run->query->row_query, &options);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "row query failed: %s", SPI_result_code_string(ret));
	SPI_finish();

	/* end of input: every window fires */
	if (!run->guess_failed)
		wa_engine_flush(run->engine);
	wa_engine_destroy(run->engine);
	wa_generic_done(run->generic);
	MemoryContextDelete(engine_context);
	MemoryContextDelete(run->row_context);
	pfree(run->inputs);
	return !run->guess_failed;
}

static void
batch_run(FunctionCallInfo fcinfo, bool want_dropped)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BatchRun   *run = palloc0(sizeof(BatchRun));
	TupleDesc	ours;
	int64		bound;
	int64		lateness;
	char	   *search_path = pstrdup(GetConfigOption("search_path", false, false));
	int			nest_level;
	WaAggQuery *first;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("windows must not be null")));
	run->want_dropped = want_dropped;
	/* dropped() shows no aggregate: nothing to guess */
	run->query = parse_batch_query(fcinfo, !want_dropped);
	wa_window_set_from_array(PG_GETARG_ARRAYTYPE_P(2), &run->windows);
	wa_window_set_check_domain(&run->windows, run->query);
	bound = wa_duration_arg(fcinfo, 3, "bound", run->query->domain);
	lateness = wa_duration_arg(fcinfo, 4, "lateness", run->query->domain);
	run->window_type = run->query->domain == WA_TIME_INTEGER ? INT8OID :
		run->query->event_time_type;
	wa_window_range_init(&run->range, &run->windows, run->window_type);
	wa_window_set_limit_sessions(&run->windows, run->window_type);

	/*
	 * Two fixed windows never share a (start, end) (window_checks.c), but a
	 * session can share its bounds with any other window: then every pane
	 * says which window it is of, by its position in the array.
	 */
	run->window_column = run->windows.n_sessions > 0 &&
		run->windows.n_windows + run->windows.n_sessions > 1;

	ours = build_tupdesc(run);
	wa_check_expected_desc(rsinfo ? rsinfo->expectedDesc : NULL, ours,
						want_dropped ? "dropped" : "aggregate");
	wa_start_result(rsinfo);
	run->tupstore = rsinfo->setResult;
	run->tupdesc = rsinfo->setDesc;
	run->out_values = palloc0(sizeof(Datum) * ours->natts);
	run->out_nulls = palloc0(sizeof(bool) * ours->natts);
	run->pane_on_time = CStringGetTextDatum("on_time");
	run->pane_late = CStringGetTextDatum("late");
	run->pane_retract = CStringGetTextDatum("retract");

	/*
	 * Sums and averages of numerics without a fixed-point typmod are
	 * guessed to have the scale of their first value, and run on the
	 * decimal kernels (numeric_fixed.c); the first value that proves the
	 * guess wrong stops the run, and the query runs again, with what it
	 * emitted thrown away, on the generic path.
	 */
	if (!stream_rows(run, bound, lateness))
	{
		/*
		 * Names resolve as they did for the first run, whatever the
		 * query's code did to search_path meanwhile (batch_startup checks
		 * the columns too).
		 */
		tuplestore_clear(run->tupstore);
		nest_level = NewGUCNestLevel();
		(void) set_config_option("search_path", search_path, PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
		first = run->query;
		run->query = parse_batch_query(fcinfo, false);
		check_same_columns(first, ours, run->query, build_tupdesc(run));
		if (!stream_rows(run, bound, lateness))
			elog(ERROR, "a batch run without guessed scales stopped early");
		AtEOXact_GUC(true, nest_level);
	}
}

/*
 * aggregate(query text, event_time text, windows window[], bound "any",
 *			 lateness "any", arrival_order text) returns setof record
 */
Datum
wa_aggregate(PG_FUNCTION_ARGS)
{
	batch_run(fcinfo, false);
	return (Datum) 0;
}

/* dropped(...same arguments...) returns setof record */
Datum
wa_dropped(PG_FUNCTION_ARGS)
{
	batch_run(fcinfo, true);
	return (Datum) 0;
}
