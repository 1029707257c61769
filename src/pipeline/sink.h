/*-------------------------------------------------------------------------
 *
 * sink.h
 *	  The writes of a pipeline epoch (see sink.c).
 *
 * src/pipeline/sink.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_SINK_H
#define WINDOWAGG_SINK_H

#include "pipeline/checkpoint.h"

#include "executor/spi.h"
#include "utils/hsearch.h"

/* Rows buffered column by column, sent as one array per column. */
typedef struct WaColumns
{
	int			ncols;
	int			nsent;			/* the first nsent go to SQL */
	int			nrows;
	int			capacity;
	Oid		   *types;
	Datum	  **values;
	bool	  **nulls;
} WaColumns;

typedef struct WaSink
{
	bool		ready;			/* wa_sink_init completed */
	const WaAggQuery *query;
	WaKeyCodec *codec;
	const wa_engine *engine;	/* while a checkpoint is collected */
	int32		pipeline_id;
	Oid			window_type;

	WaColumns	panes;			/* keys, start, end, aggregates; is late */
	TupleDesc	panes_desc;		/* the sent columns, as a relation */
	HTAB	   *pane_index;		/* (key, window, start) -> row in panes,
								 * in the epoch's memory */
	int			n_fixed_windows;	/* panes of higher windows are sessions' */
	WaColumns	sessions;		/* keys, start, end, aggregates, revision,
								 * is late; is live */
	TupleDesc	sessions_desc;
	WaColumns	retracted;		/* keys, start, end of sessions a merge
								 * replaced */
	TupleDesc	retracted_desc;
	WaColumns	dead;			/* arrival, event time, reason, watermark */
	WaCheckpoint ckpt;			/* changed slices */
	int64		expire_below;	/* this epoch's slice expiry bound */
	int64		n_on_time;		/* rows written by wa_sink_write, by kind */
	int64		n_late;
	int64		n_retracted;	/* rows that retractions deleted */

	SPIPlanPtr	insert_plan;	/* on-time panes */
	SPIPlanPtr	upsert_plan;	/* late panes */
	SPIPlanPtr	session_plan;	/* sessions' panes, with their revisions */
	SPIPlanPtr *retract_plans;	/* delete replaced sessions, one per
								 * pattern of NULL keys */
	int			n_retract_plans;
	SPIPlanPtr	dead_plan;
	Datum	   *key_values;		/* scratch for decoding a key */
	bool	   *key_nulls;
	WaOutputEval *outputs;		/* the result columns of a pane */
	WaGeneric  *generic;		/* runs the owner's code of outputs */
	Datum	   *out_values;		/* scratch for them */
	bool	   *out_nulls;
	int16	   *out_typlen;		/* to copy them into the epoch's memory */
	bool	   *out_byval;
} WaSink;

/* Prepare the statements (SPI connected; long_lived holds the plans). */
extern void wa_sink_init(WaSink *sink, const WaPipelineDef *def,
						 const WaAggQuery *q, WaKeyCodec *codec,
						 uint32 acc_size, WaGeneric *generic,
						 MemoryContext long_lived);
extern void wa_sink_add_pane(WaSink *sink, const wa_pane *pane);
/* source_row: a logical source's row as jsonb (table sources read it back) */
extern void wa_sink_add_dead_letter(WaSink *sink, int64 arrival,
									Datum event_time, bool event_time_null,
									const char *reason, wa_tick watermark,
									Datum source_row);
extern void wa_sink_collect_checkpoint(WaSink *sink, wa_engine *engine,
									   wa_time_state *time);
/* Write panes and dead letters (as the current user). */
extern void wa_sink_write(WaSink *sink, TimestampTz epoch_time);
/* The epoch's changed slices into the checkpoint log. */
extern void wa_sink_write_checkpoint(WaSink *sink, const wa_stats *stats);
/* After the epoch committed or rolled back, before its memory is reset. */
extern void wa_sink_reset(WaSink *sink);

/* Does a key fit the result table's index?  (key_fit.c) */
typedef struct WaKeyFit
{
	bool		check;			/* false: one integer key always fits */
	int			n_keys;
	TupleDesc	desc;			/* the index's columns: keys, start, end */
	Size		small_enough;	/* keys this small need no closer look */
	Datum	   *values;			/* scratch: the index tuple's values */
	MemoryContext cxt;			/* scratch: copies made to measure */
	bool	   *isnull;
} WaKeyFit;

extern void wa_key_fit_init(WaKeyFit *fit, const WaAggQuery *q,
							Oid window_type, Oid result_table);
extern int	wa_btree_max_item(void);
/* values and isnull: the key columns of a row */
extern bool wa_key_fits(WaKeyFit *fit, const Datum *values, const bool *isnull);

#endif							/* WINDOWAGG_SINK_H */
