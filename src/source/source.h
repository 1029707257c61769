/*-------------------------------------------------------------------------
 *
 * source.h
 *	  What a pipeline's worker reads: one routine table for every kind of
 *	  source.
 *
 * A source hands the worker rows of the row query, in whole source
 * transactions, and says where it stands (its offset).  The worker runs
 * the epochs and never asks which kind of source it drives; the kinds
 * are the table tail (table.c) and the two transports of a logical
 * replication stream (logical/logical.c: a slot of this server decoded in
 * the worker, or a remote server's pgoutput stream).  wa_source_open is
 * the one place that chooses.
 *
 * Exactly once, as every routine keeps it:
 *	- get_offset runs inside the epoch's transaction, which writes it with
 *	  the results and the checkpoint; after_commit runs only once that
 *	  transaction committed, and is where a slot may be told to move on;
 *	- start positions the source at a committed offset: after the worker
 *	  starts and after every failure;
 *	- read calls consumer.yield after each source transaction and before
 *	  it blocks, so that the worker releases its locks (local decoding
 *	  rolls back a subtransaction, which releases every LWLock; readers of
 *	  live windows must not wait for the network);
 *	- current_row is valid only inside consumer.row and consumer.change.
 *
 * src/source/source.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_SOURCE_H
#define WA_SOURCE_H

#include "postgres.h"

#include "query/query.h"

#include "access/xlogdefs.h"
#include "executor/tuptable.h"
#include "utils/array.h"

typedef struct WaSource WaSource;

/*
 * windowagg.max_gaps (init.c): how many ranges of arrival numbers a table
 * source waits on before it stops reading new rows.
 */
extern int	wa_max_gaps;

/*
 * What a source knows of its pipeline: the worker copies it out of the
 * pipeline's definition (the source never reads the catalog's rows).
 */
typedef struct WaSourceDef
{
	const char *pipeline;		/* the pipeline's name, for messages */
	Oid			owner;			/* the pipeline's owner */
	Oid			relid;			/* the source table (a remote source's
								 * local stand-in) */
	const char *arrival_column; /* a table source's arrival numbers */
	Oid			dead_letter_table;	/* a table source's: rows blamed before */
	bool		logical;		/* a logical source (else a table source) */
	const char *connection;		/* NULL: this server */
	const char *publication;	/* with a connection: the publication */
	const char *remote_schema;	/* with a connection: the table there */
	const char *remote_table;
	const char *slot_name;		/* a logical source's replication slot */
} WaSourceDef;

/* What a source reports between epochs (windowagg.stat_pipelines). */
typedef struct WaSourceStats
{
	int32		n_gaps;			/* table sources: arrival ranges not seen;
								 * -1: the source has no arrival numbers */
	TimestampTz oldest_gap_at;	/* when the oldest was revealed */
	int32		oldest_gap_pid; /* a process that may still fill it */
	int64		retained_wal;	/* remote sources: bytes the slot holds, */
	bool		retained_wal_known; /* once the worker has heard from it */
} WaSourceStats;

/* How a source hands over what it reads (all called inside read). */
typedef struct WaSourceConsumer
{
	/* a row of the row query; counts is false when its WHERE rejects it */
	void		(*row) (void *arg, TupleTableSlot *slot, int64 arrival,
						bool counts);
	/* an update ('U') or delete ('D') of a source row: not an event */
	void		(*change) (void *arg, char kind, int64 arrival,
						   Datum event_time, bool event_time_null);
	/* a row on which the row query raised an error: not an event */
	void		(*poison) (void *arg, int64 arrival, const char *message);
	/* after each source transaction and before the source blocks */
	void		(*yield) (void *arg);
	void	   *arg;
} WaSourceConsumer;

/* The source's columns of windowagg.pipeline_progress. */
typedef struct WaSourceOffset
{
	/* arrival numbers: a table source's */
	bool		arrival_hwm_null;	/* nothing read yet (restore only) */
	int64		arrival_hwm;	/* every number up to it read, but gaps */
	ArrayType  *arrival_gaps;	/* lo, hi pairs; writing: NULL = unchanged */
	/* a logical stream's: all that committed before it is applied */
	XLogRecPtr	lsn;			/* InvalidXLogRecPtr: NULL */
} WaSourceOffset;

/* What one read did. */
typedef struct WaReadResult
{
	bool		caught_up;		/* read all that committed before the epoch */
	bool		stalled;		/* can read nothing more for now (report) */
	int64		rows;			/* rows handed over (the idle timeout) */
	bool		offset_dirty;	/* the offset moved: write it */
} WaReadResult;

typedef struct WaSourceRoutine
{
	/* a row handed over lives only until the next one */
	bool		rows_transient;

	/* set-up, in a transaction, as the owner */
	void		(*open) (WaSource *src);	/* private state, cheap checks */

	/*
	 * May the owner still read it with q, the query as parsed now?
	 * (Optional; again after the source table changed.)
	 */
	void		(*check) (WaSource *src, const WaAggQuery *q);
	void		(*prepare) (WaSource *src); /* plans and expressions: after
											 * the query's code was checked */
	/* position at a committed offset (after set-up and every failure) */
	void		(*start) (WaSource *src, const WaSourceOffset *committed);

	/* an epoch, in its transaction */
	void		(*begin_epoch) (WaSource *src); /* before its snapshot
												 * (optional) */
	void		(*read) (WaSource *src, int limit, WaReadResult *result);
	Datum		(*current_row) (WaSource *src); /* the row as jsonb, for a
												 * dead letter (optional: the
												 * sink reads it back) */
	void		(*get_offset) (WaSource *src, WaSourceOffset *offset);
	void		(*after_commit) (WaSource *src, bool offset_written);

	/* between epochs */
	bool		(*report) (WaSource *src, WaSourceStats *stats, char *why,
						   Size why_len);	/* true: stalled, why says so */
	void		(*wait) (WaSource *src, long timeout_ms);	/* for rows or the
															 * latch */
	void		(*close) (WaSource *src, bool drop);	/* drop: the pipeline
														 * is gone, so is its
														 * slot */
} WaSourceRoutine;

struct WaSource
{
	const WaSourceRoutine *routine;
	const WaSourceDef *def;
	const WaAggQuery *query;	/* the one the worker runs */
	MemoryContext cxt;			/* the worker's lifetime */
	MemoryContext epoch_cxt;	/* reset after each epoch */
	WaSourceConsumer consumer;
	bool		needs_user;		/* its error needs a user's action */
	void	   *private_data;	/* the routine's own */
};

/* The source of a pipeline, opened and checked (in a transaction). */
extern WaSource *wa_source_open(const WaSourceDef *def, const WaAggQuery *q,
								const WaSourceConsumer *consumer,
								MemoryContext cxt, MemoryContext epoch_cxt);

static inline void
wa_source_check(WaSource *src, const WaAggQuery *q)
{
	if (src->routine->check)
		src->routine->check(src, q);
}

static inline void
wa_source_prepare(WaSource *src)
{
	src->routine->prepare(src);
}

static inline void
wa_source_start(WaSource *src, const WaSourceOffset *committed)
{
	src->routine->start(src, committed);
}

static inline void
wa_source_begin_epoch(WaSource *src)
{
	if (src->routine->begin_epoch)
		src->routine->begin_epoch(src);
}

static inline void
wa_source_read(WaSource *src, int limit, WaReadResult *result)
{
	memset(result, 0, sizeof(*result));
	src->routine->read(src, limit, result);
}

static inline Datum
wa_source_current_row(WaSource *src)
{
	return src->routine->current_row ? src->routine->current_row(src) : (Datum) 0;
}

static inline void
wa_source_get_offset(WaSource *src, WaSourceOffset *offset)
{
	memset(offset, 0, sizeof(*offset));
	src->routine->get_offset(src, offset);
}

static inline void
wa_source_after_commit(WaSource *src, bool offset_written)
{
	src->routine->after_commit(src, offset_written);
}

static inline bool
wa_source_report(WaSource *src, WaSourceStats *stats, char *why, Size why_len)
{
	return src->routine->report(src, stats, why, why_len);
}

static inline void
wa_source_wait(WaSource *src, long timeout_ms)
{
	src->routine->wait(src, timeout_ms);
}

static inline void
wa_source_close(WaSource *src, bool drop)
{
	src->routine->close(src, drop);
}

static inline bool
wa_source_rows_transient(const WaSource *src)
{
	return src->routine->rows_transient;
}

#endif							/* WA_SOURCE_H */
