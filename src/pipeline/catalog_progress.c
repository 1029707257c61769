/*-------------------------------------------------------------------------
 *
 * catalog_progress.c
 *	  Where a pipeline stands: its row of windowagg.pipeline_progress and
 *	  its log in windowagg.checkpoints.
 *
 * Every epoch writes both tables in its transaction, and a restore reads
 * both (the progress row names the newest checkpoint row it agrees with),
 * so their statements live together, here.  Each statement's text sits
 * next to the enum that names its result columns (Anum_..., numbered from
 * 1 as SPI_getbinval counts them) or its parameters (Param_..., numbered
 * from 0 as the values[], nulls[] and argtypes[] arrays count them: $n is
 * Param_... + 1), so that a column added to one is added to the other.
 *
 * Every statement runs in the catalog scope of catalog.c (as the catalog's
 * owner, search_path pinned, operators qualified).  What a read returns is
 * copied out of SPI's memory into the memory context that was current at
 * the call, which is current again on return.
 *
 * src/pipeline/catalog_progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/pg_lsn.h"

/* ---------- windowagg.pipeline_progress ---------- */

void
wa_catalog_progress_insert(int32 pipeline_id)
{
	wa_catalog_exec_for("INSERT INTO windowagg.pipeline_progress (pipeline) VALUES ($1)",
						pipeline_id);
}

/* The columns wa_catalog_progress_read reads, by their position. */
enum
{
	Anum_progress_arrival_hwm = 1,
	Anum_progress_arrival_gaps,
	Anum_progress_max_event_time,
	Anum_progress_watermark,
	Anum_progress_events_in,
	Anum_progress_events_partial,
	Anum_progress_dead_letters,
	Anum_progress_panes_on_time,
	Anum_progress_panes_late,
	Anum_progress_epochs,
	Anum_progress_checkpoint_seq,
	Anum_progress_log_end_seq,
	Anum_progress_source_lsn,
	Anum_progress_source_updates,
	Anum_progress_source_deletes,
	Natts_progress_read = Anum_progress_source_deletes
};

#define PROGRESS_READ_SQL \
	"SELECT p.arrival_hwm, p.arrival_gaps, p.max_event_time, p.watermark, " \
	"p.events_in, p.events_partial, p.dead_letters, p.panes_on_time, " \
	"p.panes_late, p.epochs, p.checkpoint_seq, " \
	"(SELECT COALESCE(pg_catalog.max(c.seq), 0) FROM windowagg.checkpoints c " \
	" WHERE c.pipeline OPERATOR(pg_catalog.=) p.pipeline), " \
	"p.source_lsn, p.source_updates, p.source_deletes " \
	"FROM windowagg.pipeline_progress p " \
	"WHERE p.pipeline OPERATOR(pg_catalog.=) $1"

/* A bigint column; 0 where it is null, as the callers have always read it. */
static int64
column_int64(HeapTuple tup, TupleDesc desc, int col, bool *isnull)
{
	return DatumGetInt64(SPI_getbinval(tup, desc, col, isnull));
}

bool
wa_catalog_progress_read(int32 pipeline_id, WaProgressRow *row)
{
	MemoryContext caller = CurrentMemoryContext;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;
	WaPipelineStats *counters = &row->counters;

	wa_catalog_exec_for(PROGRESS_READ_SQL, pipeline_id);
	/* SPI leaves its own context current: the copies are the caller's */
	MemoryContextSwitchTo(caller);
	memset(row, 0, sizeof(*row));
	if (SPI_processed != 1)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	Assert(desc->natts == Natts_progress_read);

	row->arrival_hwm = column_int64(tup, desc, Anum_progress_arrival_hwm,
									&row->arrival_hwm_null);
	d = SPI_getbinval(tup, desc, Anum_progress_arrival_gaps, &isnull);
	row->arrival_gaps = isnull ? NULL : DatumGetArrayTypePCopy(d);
	row->max_event_time = column_int64(tup, desc, Anum_progress_max_event_time,
									   &row->max_event_time_null);
	d = SPI_getbinval(tup, desc, Anum_progress_watermark, &row->watermark_null);
	row->watermark = row->watermark_null ? (Datum) 0 :
		PointerGetDatum(DatumGetNumericCopy(d));
	counters->events_in = column_int64(tup, desc, Anum_progress_events_in, &isnull);
	counters->events_partial = column_int64(tup, desc, Anum_progress_events_partial,
											&isnull);
	counters->dead_letters = column_int64(tup, desc, Anum_progress_dead_letters,
										  &isnull);
	counters->panes_on_time = column_int64(tup, desc, Anum_progress_panes_on_time,
										   &isnull);
	counters->panes_late = column_int64(tup, desc, Anum_progress_panes_late, &isnull);
	counters->epochs = column_int64(tup, desc, Anum_progress_epochs, &isnull);
	counters->source_updates = column_int64(tup, desc, Anum_progress_source_updates,
											&isnull);
	counters->source_deletes = column_int64(tup, desc, Anum_progress_source_deletes,
											&isnull);
	row->checkpoint_seq = column_int64(tup, desc, Anum_progress_checkpoint_seq,
									   &isnull);
	row->log_end_seq = column_int64(tup, desc, Anum_progress_log_end_seq, &isnull);
	d = SPI_getbinval(tup, desc, Anum_progress_source_lsn, &isnull);
	row->source_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	return true;
}

void
wa_catalog_progress_set_checkpoint(int32 pipeline_id, int64 checkpoint_seq)
{
	wa_catalog_set_for("UPDATE windowagg.pipeline_progress SET checkpoint_seq = $2 "
					   "WHERE pipeline OPERATOR(pg_catalog.=) $1",
					   pipeline_id, INT8OID, Int64GetDatum(checkpoint_seq));
}

/* The parameters of an epoch's update ($n is Param_... + 1). */
enum
{
	Param_progress_pipeline = 0,
	Param_progress_arrival_hwm,
	Param_progress_arrival_gaps,
	Param_progress_max_event_time,
	Param_progress_watermark,
	Param_progress_events_in,
	Param_progress_events_partial,
	Param_progress_dead_letters,
	Param_progress_panes_on_time,
	Param_progress_panes_late,
	Param_progress_checkpoint_seq,
	Param_progress_source_lsn,
	Param_progress_source_updates,
	Param_progress_source_deletes,
	Param_progress_gaps_changed,
	Nparams_progress
};

SPIPlanPtr
wa_catalog_progress_prepare(void)
{
	Oid			types[Nparams_progress];

	types[Param_progress_pipeline] = INT4OID;
	types[Param_progress_arrival_hwm] = INT8OID;
	types[Param_progress_arrival_gaps] = INT8ARRAYOID;
	types[Param_progress_max_event_time] = INT8OID;
	types[Param_progress_watermark] = NUMERICOID;
	types[Param_progress_events_in] = INT8OID;
	types[Param_progress_events_partial] = INT8OID;
	types[Param_progress_dead_letters] = INT8OID;
	types[Param_progress_panes_on_time] = INT8OID;
	types[Param_progress_panes_late] = INT8OID;
	types[Param_progress_checkpoint_seq] = INT8OID;
	types[Param_progress_source_lsn] = PG_LSNOID;
	types[Param_progress_source_updates] = INT8OID;
	types[Param_progress_source_deletes] = INT8OID;
	types[Param_progress_gaps_changed] = BOOLOID;

	/* prepared in the catalog's scope, so that it is re-planned there too */
	return wa_catalog_prepare("UPDATE windowagg.pipeline_progress SET "
							  "arrival_hwm = $2, max_event_time = $4, "
							  /* an unchanged array keeps its TOAST value: no WAL */
							  "arrival_gaps = CASE WHEN $15 THEN $3 ELSE arrival_gaps END, "
							  "watermark = $5, events_in = events_in OPERATOR(pg_catalog.+) $6, "
							  "events_partial = events_partial OPERATOR(pg_catalog.+) $7, "
							  "dead_letters = dead_letters OPERATOR(pg_catalog.+) $8, "
							  "panes_on_time = panes_on_time OPERATOR(pg_catalog.+) $9, "
							  "panes_late = panes_late OPERATOR(pg_catalog.+) $10, "
							  "epochs = epochs OPERATOR(pg_catalog.+) 1, "
							  "checkpoint_seq = $11, source_lsn = $12, "
							  "source_updates = source_updates OPERATOR(pg_catalog.+) $13, "
							  "source_deletes = source_deletes OPERATOR(pg_catalog.+) $14, "
							  "updated_at = pg_catalog.now() "
							  "WHERE pipeline OPERATOR(pg_catalog.=) $1",
							  Nparams_progress, types);
}

bool
wa_catalog_progress_write(SPIPlanPtr plan, const WaProgressUpdate *u)
{
	Datum		values[Nparams_progress];
	char		nulls[Nparams_progress];

	memset(nulls, ' ', sizeof(nulls));
	values[Param_progress_pipeline] = Int32GetDatum(u->pipeline_id);
	values[Param_progress_arrival_hwm] = Int64GetDatum(u->arrival_hwm);
	if (u->arrival_gaps != NULL)
		values[Param_progress_arrival_gaps] = PointerGetDatum(u->arrival_gaps);
	else
		nulls[Param_progress_arrival_gaps] = 'n';	/* the stored array stands */
	values[Param_progress_max_event_time] = Int64GetDatum(u->max_event_time);
	nulls[Param_progress_max_event_time] = u->max_event_time_null ? 'n' : ' ';
	values[Param_progress_watermark] = u->watermark;
	nulls[Param_progress_watermark] = u->watermark_null ? 'n' : ' ';
	values[Param_progress_events_in] = Int64GetDatum(u->delta->events_in);
	values[Param_progress_events_partial] = Int64GetDatum(u->delta->events_partial);
	values[Param_progress_dead_letters] = Int64GetDatum(u->delta->dead_letters);
	values[Param_progress_panes_on_time] = Int64GetDatum(u->delta->panes_on_time);
	values[Param_progress_panes_late] = Int64GetDatum(u->delta->panes_late);
	values[Param_progress_checkpoint_seq] = Int64GetDatum(u->checkpoint_seq);
	values[Param_progress_source_lsn] = LSNGetDatum(u->source_lsn);
	nulls[Param_progress_source_lsn] = XLogRecPtrIsInvalid(u->source_lsn) ? 'n' : ' ';
	values[Param_progress_source_updates] = Int64GetDatum(u->delta->source_updates);
	values[Param_progress_source_deletes] = Int64GetDatum(u->delta->source_deletes);
	values[Param_progress_gaps_changed] = BoolGetDatum(u->arrival_gaps != NULL);
	return wa_catalog_execute_plan(plan, values, nulls) == SPI_OK_UPDATE;
}

/* ---------- windowagg.checkpoints ---------- */

/* The parameters of a checkpoint row's insert. */
enum
{
	Param_checkpoint_pipeline = 0,
	Param_checkpoint_seq,
	Param_checkpoint_expire_below,
	Param_checkpoint_n_slices,
	Param_checkpoint_acc_size,
	Param_checkpoint_data,
	Nparams_checkpoint
};

void
wa_catalog_checkpoint_insert(int32 pipeline_id, int64 seq, int64 expire_below,
							 int64 n_slices, int32 acc_size, bytea *data)
{
	Datum		values[Nparams_checkpoint];
	Oid			types[Nparams_checkpoint];

	types[Param_checkpoint_pipeline] = INT4OID;
	values[Param_checkpoint_pipeline] = Int32GetDatum(pipeline_id);
	types[Param_checkpoint_seq] = INT8OID;
	values[Param_checkpoint_seq] = Int64GetDatum(seq);
	types[Param_checkpoint_expire_below] = INT8OID;
	values[Param_checkpoint_expire_below] = Int64GetDatum(expire_below);
	types[Param_checkpoint_n_slices] = INT8OID;
	values[Param_checkpoint_n_slices] = Int64GetDatum(n_slices);
	types[Param_checkpoint_acc_size] = INT4OID;
	values[Param_checkpoint_acc_size] = Int32GetDatum(acc_size);
	types[Param_checkpoint_data] = BYTEAOID;
	values[Param_checkpoint_data] = PointerGetDatum(data);
	wa_catalog_exec("INSERT INTO windowagg.checkpoints "
					"(pipeline, seq, expire_below, n_slices, acc_size, data) "
					"VALUES ($1, $2, $3, $4, $5, $6)",
					Nparams_checkpoint, types, values, NULL);
}

/* The columns wa_catalog_checkpoints_read reads, by their position. */
enum
{
	Anum_checkpoint_seq = 1,
	Anum_checkpoint_expire_below,
	Anum_checkpoint_acc_size,
	Anum_checkpoint_data,
	Natts_checkpoint_read = Anum_checkpoint_data
};

WaCheckpointRow *
wa_catalog_checkpoints_read(int32 pipeline_id, uint64 *n)
{
	MemoryContext caller = CurrentMemoryContext;
	WaCheckpointRow *rows;

	wa_catalog_exec_for("SELECT seq, expire_below, acc_size, data FROM windowagg.checkpoints "
						"WHERE pipeline OPERATOR(pg_catalog.=) $1 ORDER BY seq",
						pipeline_id);
	/* SPI leaves its own context current: the rows are the caller's */
	MemoryContextSwitchTo(caller);
	*n = SPI_processed;
	rows = palloc0(sizeof(WaCheckpointRow) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		Assert(desc->natts == Natts_checkpoint_read);

		rows[i].seq = DatumGetInt64(SPI_getbinval(tup, desc, Anum_checkpoint_seq,
												  &isnull));
		rows[i].expire_below =
			DatumGetInt64(SPI_getbinval(tup, desc, Anum_checkpoint_expire_below,
										&isnull));
		rows[i].acc_size = DatumGetInt32(SPI_getbinval(tup, desc, Anum_checkpoint_acc_size,
													   &isnull));
		rows[i].data = DatumGetByteaPCopy(SPI_getbinval(tup, desc, Anum_checkpoint_data,
														&isnull));
	}
	return rows;
}

void
wa_catalog_checkpoints_delete(int32 pipeline_id)
{
	wa_catalog_exec_for("DELETE FROM windowagg.checkpoints WHERE pipeline OPERATOR(pg_catalog.=) $1",
						pipeline_id);
}
