/*-------------------------------------------------------------------------
 *
 * sink.c
 *	  What a pipeline epoch writes: panes into the result table, too-late
 *	  rows into the dead-letter table, changed slices into the checkpoint
 *	  log (checkpoint.c).
 *
 * Everything an epoch produces is buffered as columns and written with one
 * statement per table at the end of the epoch (INSERT ... SELECT FROM
 * ROWS FROM (unnest($2), unnest($3), ...)), in the epoch's transaction.  A window emitted
 * twice in one epoch (fired on time, then refined by a late row of the
 * same epoch) is buffered once with its newest value, so every window gets
 * at most one upsert per commit and readers never see an intermediate
 * revision.  The result table computes revisions itself: a new row starts
 * at 1 and every upsert of an existing row adds 1.
 *
 * src/sink.c
 *
 *-------------------------------------------------------------------------
 */
#include "sink.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* A buffered pane's identity, for merging repeats within an epoch. */
typedef struct PaneId
{
	uint64		key_hash;
	int64		ival;
	const uint8 *bytes;
	uint32		len;
	int			window;
	wa_tick		start;
} PaneId;

typedef struct PaneEntry
{
	PaneId		id;
	int			row;			/* index into the column buffers */
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

/*
 * The first nsent columns as arrays, for the unnest() of a prepared
 * statement: every row, or (filter >= 0) the rows whose boolean column
 * filter equals want.  Returns the number of rows sent.
 */
static int
columns_to_arrays(const WaColumns *c, Datum *arrays, int filter, bool want)
{
	int			nrows = 0;
	Datum	   *values = palloc(sizeof(Datum) * Max(c->nrows, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(c->nrows, 1));

	for (int i = 0; i < c->nsent; i++)
	{
		int16		typlen;
		bool		typbyval;
		char		typalign;
		int			dims[1];
		int			lbs[1] = {1};

		nrows = 0;
		for (int row = 0; row < c->nrows; row++)
		{
			if (filter >= 0 && DatumGetBool(c->values[filter][row]) != want)
				continue;
			values[nrows] = c->values[i][row];
			nulls[nrows++] = c->nulls[i][row];
		}
		dims[0] = nrows;
		get_typlenbyvalalign(c->types[i], &typlen, &typbyval, &typalign);
		arrays[i] = PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs,
													   c->types[i], typlen,
													   typbyval, typalign));
	}
	return nrows;
}

static SPIPlanPtr
prepare_unnest_plan(const char *sql, const WaColumns *c, int extra_args,
					const Oid *extra_types)
{
	int			nargs = extra_args + c->nsent;
	Oid		   *types = palloc(sizeof(Oid) * nargs);
	SPIPlanPtr	plan;

	for (int i = 0; i < extra_args; i++)
		types[i] = extra_types[i];
	for (int i = 0; i < c->nsent; i++)
		types[extra_args + i] = get_array_type(c->types[i]);
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the plan of \"%s\"", sql);
	return plan;
}

/* ---------- set-up ---------- */

static uint32
pane_id_hash(const void *key, Size keysize)
{
	const PaneId *id = key;

	return (uint32) (id->key_hash ^ hash_bytes_uint32((uint32) id->window) ^
					 hash_bytes_uint32((uint32) (id->start ^ (id->start >> 32))));
}

static int
pane_id_compare(const void *a, const void *b, Size keysize)
{
	const PaneId *x = a;
	const PaneId *y = b;

	if (x->window != y->window || x->start != y->start || x->len != y->len ||
		x->ival != y->ival)
		return 1;
	return x->len == 0 ? 0 : memcmp(x->bytes, y->bytes, x->len);
}

static char *
qualified_name(Oid relid)
{
	return psprintf("%s.%s",
					quote_identifier(get_namespace_name(get_rel_namespace(relid))),
					quote_identifier(get_rel_name(relid)));
}

/*
 * Two statements write panes.  A window's on-time pane is its first
 * emission, so its row is new: a plain INSERT.  A late pane upserts: a new
 * row (a window that was empty when it fired) starts at revision 1, an
 * existing one gets the new values and the next revision.  $1 is the
 * epoch's time, for updated_at.
 */
static void
build_pane_statements(WaSink *sink, const WaPipelineDef *def)
{
	const WaAggQuery *q = sink->query;
	StringInfoData cols;
	StringInfoData source;
	StringInfoData sql;
	Oid			epoch_time_type = TIMESTAMPTZOID;

	initStringInfo(&cols);
	for (int i = 0; i < q->n_keys; i++)
		appendStringInfo(&cols, "%s, ", quote_identifier(q->keys[i].name));
	appendStringInfoString(&cols, "window_start, window_end");
	for (int i = 0; i < q->n_aggs; i++)
		appendStringInfo(&cols, ", %s", quote_identifier(q->aggs[i].name));

	initStringInfo(&source);
	appendStringInfoString(&source, "ROWS FROM (");
	for (int i = 0; i < sink->panes.nsent; i++)
		appendStringInfo(&source, "%spg_catalog.unnest($%d)", i > 0 ? ", " : "", i + 2);
	appendStringInfoString(&source, ") AS u");

	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (%s, pane, revision, updated_at) "
					 "SELECT u.*, 'on_time', 1, $1 FROM %s",
					 qualified_name(def->result_table), cols.data, source.data);
	sink->insert_plan = prepare_unnest_plan(sql.data, &sink->panes, 1, &epoch_time_type);

	resetStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s AS r (%s, pane, revision, updated_at) "
					 "SELECT u.*, 'late', 1, $1 FROM %s ON CONFLICT (",
					 qualified_name(def->result_table), cols.data, source.data);
	for (int i = 0; i < q->n_keys; i++)
		appendStringInfo(&sql, "%s, ", quote_identifier(q->keys[i].name));
	appendStringInfoString(&sql, "window_start, window_end) DO UPDATE SET ");
	for (int i = 0; i < q->n_aggs; i++)
		appendStringInfo(&sql, "%s = EXCLUDED.%s, ", quote_identifier(q->aggs[i].name),
						 quote_identifier(q->aggs[i].name));
	appendStringInfoString(&sql, "pane = 'late', revision = r.revision + 1, "
						   "updated_at = EXCLUDED.updated_at");
	sink->upsert_plan = prepare_unnest_plan(sql.data, &sink->panes, 1, &epoch_time_type);
}

static void
build_dead_letter_insert(WaSink *sink, const WaPipelineDef *def)
{
	char	   *sql;

	/* the source row is read back by arrival number, in the same snapshot */
	sql = psprintf("INSERT INTO %s (arrival, event_time, reason, watermark, source_row) "
				   "SELECT d.arrival, d.event_time, d.reason, d.watermark, pg_catalog.to_jsonb(s) "
				   "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), pg_catalog.unnest($3), "
				   "pg_catalog.unnest($4)) AS d(arrival, event_time, reason, watermark) "
				   "JOIN %s AS s ON s.%s = d.arrival",
				   qualified_name(def->dead_letter_table), qualified_name(def->source),
				   quote_identifier(def->arrival_column));
	sink->dead_plan = prepare_unnest_plan(sql, &sink->dead, 0, NULL);
}

void
wa_sink_init(WaSink *sink, const WaPipelineDef *def, const WaAggQuery *q,
			 WaKeyCodec *codec, uint32 acc_size, MemoryContext long_lived)
{
	MemoryContext old = MemoryContextSwitchTo(long_lived);
	Oid		   *types;
	int			ncols = q->n_keys + 2 + q->n_aggs;
	Oid			dead_types[4];

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
	for (int i = 0; i < q->n_aggs; i++)
		types[q->n_keys + 2 + i] = q->aggs[i].result_type;
	types[ncols] = BOOLOID;		/* late, not sent: it picks the statement */
	columns_init(&sink->panes, ncols + 1, types, long_lived);
	sink->panes.nsent = ncols;

	dead_types[0] = INT8OID;
	dead_types[1] = q->event_time_type;
	dead_types[2] = TEXTOID;
	dead_types[3] = sink->window_type;
	columns_init(&sink->dead, 4, dead_types, long_lived);

	build_pane_statements(sink, def);
	build_dead_letter_insert(sink, def);
	/* SPI calls leave SPI's context current */
	MemoryContextSwitchTo(long_lived);
	wa_ckpt_init(&sink->ckpt, def->id, q->int_key, acc_size, long_lived);
	sink->key_values = palloc(sizeof(Datum) * (q->n_keys + 1));
	sink->key_nulls = palloc(sizeof(bool) * (q->n_keys + 1));
	MemoryContextSwitchTo(old);
}

/* ---------- buffering (CurrentMemoryContext: the epoch's) ---------- */

void
wa_sink_add_pane(WaSink *sink, const wa_pane *pane)
{
	const WaAggQuery *q = sink->query;
	WaColumns  *c = &sink->panes;
	PaneId		id;
	PaneEntry  *entry;
	bool		found;
	int			row;
	int			col;

	id.ival = pane->key.ival;
	id.len = sink->codec->int_key ? 0 : pane->key.len;
	id.bytes = pane->key.bytes;
	id.key_hash = id.len > 0 ? hash_bytes(pane->key.bytes, (int) id.len) :
		hash_bytes_uint32((uint32) (id.ival ^ (id.ival >> 32)));
	id.window = pane->window;
	id.start = pane->start;

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
	entry = hash_search(sink->pane_index, &id, HASH_ENTER, &found);
	if (found)
		row = entry->row;		/* the newest value replaces the older one */
	else
	{
		if (id.len > 0)
		{
			uint8	   *copy = palloc(id.len);

			memcpy(copy, id.bytes, id.len);
			entry->id.bytes = copy;
		}
		row = columns_add_row(c);
		entry->row = row;
		wa_key_decode(sink->codec, &pane->key, sink->key_values, sink->key_nulls);
		for (int i = 0; i < q->n_keys; i++)
		{
			c->values[i][row] = sink->key_values[i];
			c->nulls[i][row] = sink->key_nulls[i];
		}
		col = q->n_keys;
		c->values[col][row] = wa_ticks_to_datum(pane->start, sink->window_type,
												"window_start");
		c->nulls[col++][row] = false;
		c->values[col][row] = wa_ticks_to_datum(pane->end, sink->window_type,
												"window_end");
		c->nulls[col][row] = false;
		/* the first emission in the epoch decides: see build_pane_statements */
		c->values[c->ncols - 1][row] = BoolGetDatum(pane->kind == WA_PANE_LATE);
		c->nulls[c->ncols - 1][row] = false;
	}
	for (int i = 0; i < q->n_aggs; i++)
	{
		col = q->n_keys + 2 + i;
		c->values[col][row] = wa_result_to_datum(&q->aggs[i], &pane->results[i],
												 &c->nulls[col][row]);
	}
}

void
wa_sink_add_dead_letter(WaSink *sink, int64 arrival, Datum event_time,
						bool event_time_null, const char *reason, wa_tick watermark)
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
}

static void
save_slice(void *arg, const wa_key *key, int64_t slice, const void *acc,
		   uint32_t acc_size)
{
	WaSink	   *sink = arg;

	Assert(acc_size == sink->ckpt.acc_size);
	wa_ckpt_add_slice(&sink->ckpt, key, slice, acc);
}

void
wa_sink_collect_checkpoint(WaSink *sink, wa_engine *engine,
						   wa_time_state *time)
{
	wa_engine_checkpoint(engine, save_slice, sink, &sink->expire_below, time);
}

/* ---------- writing ---------- */

/* Returns the number of rows written. */
static int
execute_unnest(SPIPlanPtr plan, const WaColumns *c, int filter, bool want,
			   Datum epoch_time)
{
	Datum	   *args = palloc(sizeof(Datum) * (c->nsent + 1));
	int			nrows;
	int			ret;

	args[0] = epoch_time;
	nrows = columns_to_arrays(c, args + 1, filter, want);
	if (nrows == 0)
		return 0;
	ret = SPI_execute_plan(plan, args, NULL, false, 0);
	if (ret < 0)
		elog(ERROR, "windowagg could not write an epoch: %s",
			 SPI_result_code_string(ret));
	return nrows;
}

void
wa_sink_write(WaSink *sink, TimestampTz epoch_time)
{
	int			late = sink->panes.ncols - 1;

	if (sink->panes.nrows > 0)
	{
		sink->n_on_time = execute_unnest(sink->insert_plan, &sink->panes, late,
										 false, TimestampTzGetDatum(epoch_time));
		sink->n_late = execute_unnest(sink->upsert_plan, &sink->panes, late,
									  true, TimestampTzGetDatum(epoch_time));
	}
	if (sink->dead.nrows > 0)
	{
		Datum	   *args = palloc(sizeof(Datum) * sink->dead.nsent);

		columns_to_arrays(&sink->dead, args, -1, false);
		if (SPI_execute_plan(sink->dead_plan, args, NULL, false, 0) < 0)
			elog(ERROR, "windowagg could not write dead letters");
	}
}

void
wa_sink_write_checkpoint(WaSink *sink, int64 live_slices)
{
	/* a live slice takes a record: length, key, number, accumulator */
	int64		live_bytes = live_slices * (int64) (sizeof(uint32) + 16 + sizeof(int64) +
												   sink->ckpt.acc_size);

	wa_ckpt_write(&sink->ckpt, sink->expire_below, live_bytes);
}

/* After commit (or abort): forget the epoch's buffers. */
void
wa_sink_reset(WaSink *sink)
{
	if (sink->query == NULL)
		return;					/* never set up */
	columns_reset(&sink->panes);
	columns_reset(&sink->dead);
	wa_ckpt_reset(&sink->ckpt);
	sink->pane_index = NULL;	/* went with the epoch's memory */
	sink->n_on_time = 0;
	sink->n_late = 0;
}
