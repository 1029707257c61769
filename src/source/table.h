/*-------------------------------------------------------------------------
 *
 * table.h
 *	  Exactly-once reading of a source table by arrival number
 *	  (see table.c).
 *
 * src/source/table.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_TABLE_SOURCE_H
#define WINDOWAGG_TABLE_SOURCE_H

#include "pipeline/pipeline.h"

#include "executor/tuptable.h"
#include "storage/lock.h"

/* Arrival numbers [lo, hi] not seen yet that may still commit. */
typedef struct WaGap
{
	int64		lo;
	int64		hi;
	int			group;
} WaGap;

/* The transactions whose end settles a set of gaps. */
typedef struct WaGapGroup
{
	VirtualTransactionId *vxids;	/* those that held a lock on the source */
	int		   *pids;			/* their processes, for stat_pipelines */
	int			n_vxids;
	TimestampTz created_at;		/* when its gaps were revealed */
	bool		final;			/* all ended before this epoch's snapshot */
	bool		in_use;
} WaGapGroup;

/* Called for each row read; counts is false when WHERE rejects it. */
typedef void (*wa_source_row_fn) (void *arg, TupleTableSlot *slot,
								  int64 arrival, bool counts);

typedef struct WaTableSource
{
	const WaAggQuery *query;
	MemoryContext cxt;			/* gaps, groups, plans */
	MemoryContext epoch_cxt;
	wa_source_row_fn row_fn;
	void	   *row_arg;
	SPIPlanPtr	tail_plan;
	SPIPlanPtr	gap_plan;

	int64		hwm;			/* highest arrival number consumed */
	WaGap	   *gaps;
	int			n_gaps;
	int			gaps_capacity;
	WaGapGroup *groups;
	int			n_groups;
	int			groups_capacity;

	List	   *found;			/* gap numbers read this epoch */
	bool		gaps_full;		/* windowagg.max_gaps reached: no new rows */
	bool		gaps_changed;	/* since the last checkpoint */
	int64		rows_read;		/* new rows read this epoch */
} WaTableSource;

extern void wa_source_init(WaTableSource *src, const WaAggQuery *q,
						   MemoryContext cxt, wa_source_row_fn row_fn,
						   void *row_arg);
extern void wa_source_set_epoch_context(WaTableSource *src,
										MemoryContext epoch_cxt);
extern void wa_source_restore(WaTableSource *src, int64 hwm, ArrayType *gaps);
extern ArrayType *wa_source_gaps_array(const WaTableSource *src);
extern void wa_source_oldest_gap(const WaTableSource *src, TimestampTz *at,
								 int *pid);
extern void wa_source_before_snapshot(WaTableSource *src);
/* Read gap rows, then up to limit new rows; true if nothing was left. */
extern bool wa_source_read(WaTableSource *src, int limit);

#endif							/* WINDOWAGG_TABLE_SOURCE_H */
