/*-------------------------------------------------------------------------
 *
 * sink.c
 *	  What a pipeline epoch writes: panes into the result table, too-late
 *	  rows into the dead-letter table, changed slices into the checkpoint
 *	  log (checkpoint.c).
 *
 * Everything an epoch produces is buffered as columns and written with one
 * statement per kind at the end of the epoch, in the epoch's transaction:
 * panes through a tuplestore exposed to the statement as a relation, dead
 * letters as arrays (few rows; the statement joins the source for them).
 * A window emitted twice in one epoch (fired on time, then refined by a
 * late row of the same epoch) is buffered once with its newest value, so
 * every window gets at most one write per commit and readers never see an
 * intermediate revision.  The result table computes revisions itself: a
 * new row starts at 1 and every upsert of an existing row adds 1.
 *
 * Session windows' panes take revisions from the engine (1 + the highest
 * among the sessions a merge replaced), and retractions delete the rows of
 * replaced sessions: the epoch deletes them first, then upserts the
 * sessions' panes, so that the table holds exactly the current sessions
 * once it commits.  A session retracted in the epoch that buffered its
 * pane is not written at all (its delete finds nothing).  A replaced
 * session's bounds never come back (sessions only grow), so a delete never
 * takes a row the same epoch writes.
 *
 * The statements themselves are sink_statements.c's.
 *
 * src/pipeline/sink.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/sink_int.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

/* A buffered pane's identity, for merging repeats within an epoch. */
typedef struct PaneId
{
	uint64		key_hash;
	int64		ival;
	const uint8 *bytes;
	uint32		len;
	int			window;
	wa_tick		start;
	wa_tick		end;			/* a fixed window's follows from its start,
								 * a session's does not */
} PaneId;

typedef struct PaneEntry
{
	PaneId		id;
	int			row;			/* index into the column buffers (the
								 * sessions' for a session window) */
} PaneEntry;

/* ---------- column buffers ---------- */

static void
columns_init(WaColumns *c, int ncols, const Oid *types, MemoryContext cxt)
{
	c->ncols = ncols;
	c->nsent = ncols;
	c->nrows = 0;
	c->capacity = 0;
	c->types = MemoryContextAlloc(cxt, sizeof(Oid) * ncols);
	memcpy(c->types, types, sizeof(Oid) * ncols);
	c->values = MemoryContextAllocZero(cxt, sizeof(Datum *) * ncols);
	c->nulls = MemoryContextAllocZero(cxt, sizeof(bool *) * ncols);
}

/* Add a row; returns its index.  Buffers live in CurrentMemoryContext. */
static int
columns_add_row(WaColumns *c)
{
	if (c->nrows == c->capacity)
	{
		int			newcap = c->capacity == 0 ? 256 : c->capacity * 2;

		for (int i = 0; i < c->ncols; i++)
		{
			if (c->capacity == 0)
			{
				c->values[i] = palloc(sizeof(Datum) * newcap);
				c->nulls[i] = palloc(sizeof(bool) * newcap);
			}
			else
			{
				c->values[i] = repalloc(c->values[i], sizeof(Datum) * newcap);
				c->nulls[i] = repalloc(c->nulls[i], sizeof(bool) * newcap);
			}
		}
		c->capacity = newcap;
	}
	return c->nrows++;
}

static void
columns_reset(WaColumns *c)
{
	/* the buffers themselves went with the epoch context */
	c->nrows = 0;
	c->capacity = 0;
}

/* The columns as arrays, one per column, for unnest() in a statement. */
static void
columns_to_arrays(const WaColumns *c, Datum *arrays)
{
	int			dims[1] = {c->nrows};
	int			lbs[1] = {1};

	for (int i = 0; i < c->nsent; i++)
	{
		int16		typlen;
		bool		typbyval;
		char		typalign;

		get_typlenbyvalalign(c->types[i], &typlen, &typbyval, &typalign);
		arrays[i] = PointerGetDatum(construct_md_array(c->values[i], c->nulls[i],
													   1, dims, lbs, c->types[i],
													   typlen, typbyval, typalign));
	}
}

/* A statement taking one array argument per column of c, kept. */
SPIPlanPtr
wa_sink_prepare_unnest_plan(const char *sql, const WaColumns *c)
{
	Oid		   *types = palloc(sizeof(Oid) * c->nsent);
	SPIPlanPtr	plan;

	for (int i = 0; i < c->nsent; i++)
		types[i] = get_array_type(c->types[i]);
	wa_own_statement(sql);
	plan = SPI_prepare(sql, c->nsent, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the plan of \"%s\"", sql);
	return plan;
}

/* ---------- panes through an ephemeral named relation ---------- */

/*
 * The pane statements read the epoch's panes from a tuplestore that SPI
 * exposes as a relation (the mechanism of trigger transition tables):
 * cheaper than passing one array per column and unnesting them, which
 * costs as much again as the insert itself.  Sessions' panes and
 * retractions come the same way, each in a relation of its own (their
 * names: sink_int.h).
 */
static void
register_rows(const char *name, TupleDesc desc, Tuplestorestate *store)
{
	EphemeralNamedRelation enr = palloc0(sizeof(EphemeralNamedRelationData));

	enr->md.name = unconstify(char *, name);
	enr->md.reliddesc = InvalidOid;
	enr->md.tupdesc = desc;
	enr->md.enrtype = ENR_NAMED_TUPLESTORE;
	enr->md.enrtuples = store != NULL ? tuplestore_tuple_count(store) : 0;
	enr->reldata = store;
	if (SPI_register_relation(enr) != SPI_OK_REL_REGISTER)
		elog(ERROR, "could not register the epoch's relation %s", name);
}

static void
unregister_rows(const char *name)
{
	if (SPI_unregister_relation(name) != SPI_OK_REL_UNREGISTER)
		elog(ERROR, "could not unregister the epoch's relation %s", name);
}

/* A statement over relation name (of rows like desc); $1: the epoch's time */
SPIPlanPtr
wa_sink_prepare_rows_plan(const char *name, TupleDesc desc, const char *sql)
{
	Oid			epoch_time_type = TIMESTAMPTZOID;
	SPIPlanPtr	plan;

	register_rows(name, desc, NULL);
	wa_own_statement(sql);
	plan = SPI_prepare(sql, 1, &epoch_time_type);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the plan of \"%s\"", sql);
	unregister_rows(name);
	return plan;
}

/*
 * Run plans, one after the other, over the buffered rows of c whose
 * column pick (not sent) is want; pick -1: every row.  Returns the number
 * of rows given, or, with processed, the number of rows the statements
 * processed.
 */
static int64
write_rows(SPIPlanPtr *plans, int n_plans, const char *name, TupleDesc desc,
		   const WaColumns *c, int pick, bool want, Datum epoch_time,
		   bool processed)
{
	Tuplestorestate *store = tuplestore_begin_heap(false, false, work_mem);
	Datum	   *values = palloc(sizeof(Datum) * c->nsent);
	bool	   *nulls = palloc(sizeof(bool) * c->nsent);
	int64		nrows = 0;
	int			ret;

	for (int row = 0; row < c->nrows; row++)
	{
		if (pick >= 0 && DatumGetBool(c->values[pick][row]) != want)
			continue;
		for (int i = 0; i < c->nsent; i++)
		{
			values[i] = c->values[i][row];
			nulls[i] = c->nulls[i][row];
		}
		tuplestore_putvalues(store, desc, values, nulls);
		nrows++;
	}
	if (nrows > 0)
	{
		int64		done = 0;

		register_rows(name, desc, store);
		for (int p = 0; p < n_plans; p++)
		{
			ret = SPI_execute_plan(plans[p], &epoch_time, NULL, false, 0);
			if (ret < 0)
				elog(ERROR, "could not write the epoch's %s: %s", name,
					 SPI_result_code_string(ret));
			done += (int64) SPI_processed;
		}
		unregister_rows(name);
		if (processed)
			nrows = done;
	}
	tuplestore_end(store);
	return nrows;
}

/* Write the buffered panes of fixed windows of one kind. */
static int64
write_panes(WaSink *sink, SPIPlanPtr plan, bool late, Datum epoch_time)
{
	return write_rows(&plan, 1, PANES_RELATION, sink->panes_desc, &sink->panes,
					  sink->panes.ncols - 1, late, epoch_time, false);
}

/* ---------- set-up ---------- */

static uint32
pane_id_hash(const void *key, Size keysize)
{
	const PaneId *id = key;

	return (uint32) (id->key_hash ^ hash_bytes_uint32((uint32) id->window) ^
					 hash_bytes_uint32((uint32) (id->start ^ (id->start >> 32))) ^
					 hash_bytes_uint32((uint32) (id->end ^ (id->end >> 32))));
}

static int
pane_id_compare(const void *a, const void *b, Size keysize)
{
	const PaneId *x = a;
	const PaneId *y = b;

	if (x->window != y->window || x->start != y->start || x->end != y->end ||
		x->len != y->len ||
		x->ival != y->ival)
		return 1;
	return x->len == 0 ? 0 : memcmp(x->bytes, y->bytes, x->len);
}

/* The descriptor of an epoch's relation: columns c1, c2, ... of types. */
static TupleDesc
relation_desc(int ncols, const Oid *types)
{
	TupleDesc	desc = CreateTemplateTupleDesc(ncols);

	for (int i = 0; i < ncols; i++)
		TupleDescInitEntry(desc, (AttrNumber) (i + 1), psprintf("c%d", i + 1),
						   types[i], -1, 0);
	return desc;
}

void
wa_sink_init(WaSink *sink, const WaPipelineDef *def, const WaAggQuery *q,
			 WaKeyCodec *codec, uint32 acc_size, WaGeneric *generic,
			 MemoryContext long_lived)
{
	MemoryContext old = MemoryContextSwitchTo(long_lived);
	Oid		   *types;
	int			ncols = q->n_keys + 2 + q->n_outputs;
	Oid			dead_types[5];

	memset(sink, 0, sizeof(*sink));
	sink->query = q;
	sink->codec = codec;
	sink->pipeline_id = def->id;
	sink->window_type = q->domain == WA_TIME_INTEGER ? INT8OID : q->event_time_type;

	types = palloc(sizeof(Oid) * (ncols + 1));
	for (int i = 0; i < q->n_keys; i++)
		types[i] = q->keys[i].typid;
	types[q->n_keys] = sink->window_type;
	types[q->n_keys + 1] = sink->window_type;
	sink->out_typlen = palloc(sizeof(int16) * (q->n_outputs + 1));
	sink->out_byval = palloc(sizeof(bool) * (q->n_outputs + 1));
	for (int i = 0; i < q->n_outputs; i++)
	{
		types[q->n_keys + 2 + i] = q->outputs[i].type;
		get_typlenbyval(q->outputs[i].type, &sink->out_typlen[i],
						&sink->out_byval[i]);
	}
	sink->outputs = wa_output_eval_create(q);
	sink->generic = generic;
	sink->out_values = palloc(sizeof(Datum) * (q->n_outputs + 1));
	sink->out_nulls = palloc(sizeof(bool) * (q->n_outputs + 1));
	types[ncols] = BOOLOID;		/* late, not sent: it picks the statement */
	columns_init(&sink->panes, ncols + 1, types, long_lived);
	sink->panes.nsent = ncols;
	sink->panes_desc = relation_desc(ncols, types);
	sink->n_fixed_windows = def->windows.n_windows;
	if (def->windows.n_sessions > 0)
	{
		Oid		   *stypes = palloc(sizeof(Oid) * (ncols + 3));

		/* the value columns, revision, is late (sent); is live (not) */
		memcpy(stypes, types, sizeof(Oid) * ncols);
		stypes[ncols] = INT8OID;
		stypes[ncols + 1] = BOOLOID;
		stypes[ncols + 2] = BOOLOID;
		columns_init(&sink->sessions, ncols + 3, stypes, long_lived);
		sink->sessions.nsent = ncols + 2;
		sink->sessions_desc = relation_desc(ncols + 2, stypes);
		/* keys, start, end */
		columns_init(&sink->retracted, q->n_keys + 2, types, long_lived);
		sink->retracted_desc = relation_desc(q->n_keys + 2, types);
		sink->retract_plans = palloc0(sizeof(SPIPlanPtr) * MAX_RETRACT_PLANS);
	}

	/* a logical source's: commit LSN for arrival, and the row as JSON */
	dead_types[0] = def->logical ? PG_LSNOID : INT8OID;
	dead_types[1] = q->event_time_type;
	dead_types[2] = TEXTOID;
	dead_types[3] = sink->window_type;
	dead_types[4] = JSONBOID;
	columns_init(&sink->dead, def->logical ? 5 : 4, dead_types, long_lived);

	wa_sink_build_pane_statements(sink, def);
	wa_sink_build_dead_letter_insert(sink, def);
	/* SPI calls leave SPI's context current */
	MemoryContextSwitchTo(long_lived);
	wa_ckpt_init(&sink->ckpt, def->id, codec, acc_size, q, generic, long_lived);
	sink->key_values = palloc(sizeof(Datum) * (q->n_keys + 1));
	sink->key_nulls = palloc(sizeof(bool) * (q->n_keys + 1));
	MemoryContextSwitchTo(old);
	sink->ready = true;
}

/* ---------- buffering (CurrentMemoryContext: the epoch's) ---------- */

/* A row's keys, start and end, from a pane (c: any buffer of panes). */
static void
set_keys_and_bounds(WaSink *sink, WaColumns *c, int row, const wa_pane *pane)
{
	int			n_keys = sink->query->n_keys;

	wa_key_decode(sink->codec, &pane->key, sink->key_values, sink->key_nulls);
	for (int i = 0; i < n_keys; i++)
	{
		c->values[i][row] = sink->key_values[i];
		c->nulls[i][row] = sink->key_nulls[i];
	}
	c->values[n_keys][row] = wa_ticks_to_datum(pane->start, sink->window_type,
											   "window_start");
	c->nulls[n_keys][row] = false;
	c->values[n_keys + 1][row] = wa_ticks_to_datum(pane->end, sink->window_type,
												   "window_end");
	c->nulls[n_keys + 1][row] = false;
}

/*
 * A row's aggregate values, from a pane.  Generic aggregates' values live
 * until the next pane's: the epoch keeps copies.
 */
static void
set_values(WaSink *sink, WaColumns *c, int row, const wa_pane *pane)
{
	const WaAggQuery *q = sink->query;

	wa_generic_output_values(sink->generic, sink->outputs, pane->results,
							 sink->out_values, sink->out_nulls);
	for (int i = 0; i < q->n_outputs; i++)
	{
		int			col = q->n_keys + 2 + i;

		c->nulls[col][row] = sink->out_nulls[i];
		c->values[col][row] = sink->out_nulls[i] ? (Datum) 0 :
			datumCopy(sink->out_values[i], sink->out_byval[i],
					  sink->out_typlen[i]);
	}
}

/*
 * The buffered row of a pane's window, or -1 when there is none and
 * create is false.  A new row gets the pane's keys and bounds.
 */
static int
pane_row(WaSink *sink, WaColumns *c, const wa_pane *pane, bool create)
{
	PaneId		id;
	PaneEntry  *entry;
	bool		found;

	id.ival = pane->key.ival;
	id.len = sink->codec->int_key ? 0 : pane->key.len;
	id.bytes = pane->key.bytes;
	id.key_hash = id.len > 0 ? hash_bytes(pane->key.bytes, (int) id.len) :
		hash_bytes_uint32((uint32) (id.ival ^ (id.ival >> 32)));
	id.window = pane->window;
	id.start = pane->start;
	id.end = pane->end;

	if (sink->pane_index == NULL)
	{
		HASHCTL		ctl;

		/* made per epoch, in the epoch's memory: its reset frees it */
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(PaneId);
		ctl.entrysize = sizeof(PaneEntry);
		ctl.hash = pane_id_hash;
		ctl.match = pane_id_compare;
		ctl.hcxt = CurrentMemoryContext;
		sink->pane_index = hash_create("windowagg epoch panes", 1024, &ctl,
									   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE |
									   HASH_CONTEXT);
	}
	entry = hash_search(sink->pane_index, &id, create ? HASH_ENTER : HASH_FIND,
						&found);
	if (found)
		return entry->row;
	if (!create)
		return -1;
	if (id.len > 0)
	{
		uint8	   *copy = palloc(id.len);

		memcpy(copy, id.bytes, id.len);
		entry->id.bytes = copy;
	}
	entry->row = columns_add_row(c);
	set_keys_and_bounds(sink, c, entry->row, pane);
	/* the first emission in the epoch decides: see build_pane_statements */
	c->values[c->ncols - 1][entry->row] = BoolGetDatum(pane->kind == WA_PANE_LATE);
	c->nulls[c->ncols - 1][entry->row] = false;
	return entry->row;
}

/*
 * A session's pane: the newest of the epoch stands, with its revision and
 * kind; a retraction unbuffers the replaced session's pane and deletes its
 * row.
 */
static void
add_session_pane(WaSink *sink, const wa_pane *pane)
{
	WaColumns  *c = &sink->sessions;
	int			revision_col = sink->query->n_keys + 2 + sink->query->n_outputs;
	int			row;

	if (pane->kind == WA_PANE_RETRACT)
	{
		row = pane_row(sink, c, pane, false);
		if (row >= 0)
			c->values[c->ncols - 1][row] = BoolGetDatum(false);
		row = columns_add_row(&sink->retracted);
		set_keys_and_bounds(sink, &sink->retracted, row, pane);
		return;
	}
	row = pane_row(sink, c, pane, true);
	set_values(sink, c, row, pane);
	c->values[revision_col][row] = Int64GetDatum(pane->revision);
	c->nulls[revision_col][row] = false;
	c->values[revision_col + 1][row] = BoolGetDatum(pane->kind == WA_PANE_LATE);
	c->nulls[revision_col + 1][row] = false;
	c->values[c->ncols - 1][row] = BoolGetDatum(true);
	c->nulls[c->ncols - 1][row] = false;
}

void
wa_sink_add_pane(WaSink *sink, const wa_pane *pane)
{
	int			row;

	/* a window the result's type cannot hold does not exist */
	if (!wa_pane_representable(pane, sink->window_type))
		return;
	if (pane->window >= sink->n_fixed_windows)
	{
		add_session_pane(sink, pane);
		return;
	}
	/* the newest value replaces an older one of the epoch */
	row = pane_row(sink, &sink->panes, pane, true);
	set_values(sink, &sink->panes, row, pane);
}

void
wa_sink_add_dead_letter(WaSink *sink, int64 arrival, Datum event_time,
						bool event_time_null, const char *reason, wa_tick watermark,
						Datum source_row)
{
	WaColumns  *c = &sink->dead;
	int			row = columns_add_row(c);

	c->values[0][row] = Int64GetDatum(arrival);
	c->nulls[0][row] = false;
	c->values[1][row] = event_time;
	c->nulls[1][row] = event_time_null;
	c->values[2][row] = CStringGetTextDatum(reason);
	c->nulls[2][row] = false;
	/* -infinity (nothing seen yet) and +infinity (flushed) have no value */
	c->nulls[3][row] = watermark <= PG_INT64_MIN || watermark >= PG_INT64_MAX ||
		(sink->window_type != INT8OID &&
		 !IS_VALID_TIMESTAMP((int64) watermark));
	c->values[3][row] = c->nulls[3][row] ? (Datum) 0 :
		wa_ticks_to_datum(watermark, sink->window_type, "watermark");
	if (c->ncols > 4)
	{
		c->values[4][row] = source_row;
		c->nulls[4][row] = false;
	}
}

static void
save_slice(void *arg, const wa_key *key, int64_t slice, const void *acc,
		   uint32_t acc_size)
{
	WaSink	   *sink = arg;

	Assert(acc_size == sink->ckpt.acc_size);
	wa_ckpt_add_slice(&sink->ckpt, sink->engine, key, slice, acc);
}

static void
save_sessions(void *arg, const wa_key *key, int window, wa_tick horizon,
			  int n, const wa_session_image *sessions)
{
	WaSink	   *sink = arg;

	wa_ckpt_add_sessions(&sink->ckpt, sink->engine, key, window, horizon, n,
						 sessions);
}

void
wa_sink_collect_checkpoint(WaSink *sink, wa_engine *engine,
						   wa_time_state *time)
{
	sink->engine = engine;
	wa_engine_checkpoint(engine, save_slice, sink, &sink->expire_below, time);
	if (sink->sessions_desc != NULL)
		wa_engine_checkpoint_sessions(engine, save_sessions, sink);
	sink->engine = NULL;
}

/* ---------- writing ---------- */

/* Retractions first, then the sessions' panes (see the file's header). */
static void
write_sessions(WaSink *sink, Datum epoch_time)
{
	WaColumns  *c = &sink->sessions;
	int			late_col = c->nsent - 1;

	sink->n_retracted = write_rows(sink->retract_plans, sink->n_retract_plans,
								   RETRACTED_RELATION,
								   sink->retracted_desc, &sink->retracted,
								   -1, false, epoch_time, true);
	(void) write_rows(&sink->session_plan, 1, SESSIONS_RELATION, sink->sessions_desc,
					  c, c->ncols - 1, true, epoch_time, false);
	for (int row = 0; row < c->nrows; row++)
	{
		if (!DatumGetBool(c->values[c->ncols - 1][row]))
			continue;
		if (DatumGetBool(c->values[late_col][row]))
			sink->n_late++;
		else
			sink->n_on_time++;
	}
}

void
wa_sink_write(WaSink *sink, TimestampTz epoch_time)
{
	if (sink->panes.nrows > 0)
	{
		sink->n_on_time = write_panes(sink, sink->insert_plan, false,
									  TimestampTzGetDatum(epoch_time));
		sink->n_late = write_panes(sink, sink->upsert_plan, true,
								   TimestampTzGetDatum(epoch_time));
	}
	if (sink->sessions.nrows > 0 || sink->retracted.nrows > 0)
		write_sessions(sink, TimestampTzGetDatum(epoch_time));
	if (sink->dead.nrows > 0)
	{
		Datum	   *args = palloc(sizeof(Datum) * sink->dead.nsent);

		columns_to_arrays(&sink->dead, args);
		if (SPI_execute_plan(sink->dead_plan, args, NULL, false, 0) < 0)
			elog(ERROR, "could not write dead letters");
	}
}

void
wa_sink_write_checkpoint(WaSink *sink, const wa_stats *stats)
{
	wa_ckpt_write(&sink->ckpt, sink->expire_below, (int64) stats->n_slices,
				  (int64) stats->n_session_keys, (int64) stats->n_sessions);
}

/* After commit (or abort): forget the epoch's buffers. */
void
wa_sink_reset(WaSink *sink)
{
	if (!sink->ready)
		return;					/* never set up, or setting up failed */
	columns_reset(&sink->panes);
	columns_reset(&sink->sessions);
	columns_reset(&sink->retracted);
	columns_reset(&sink->dead);
	wa_ckpt_reset(&sink->ckpt);
	sink->pane_index = NULL;	/* went with the epoch's memory */
	sink->n_on_time = 0;
	sink->n_late = 0;
	sink->n_retracted = 0;
}
