/*-------------------------------------------------------------------------
 *
 * naive.h
 *	  Baseline for the engine benchmark: one accumulator per window.
 *
 * This is the structure most stream processors use for incremental window
 * aggregation (Flink's heap state backend with an AggregateFunction, Kafka
 * Streams' windowed aggregate): every (key, window) that holds data owns an
 * accumulator, an event updates the accumulator of each of the size/slide
 * windows that contain it, and a timer per window fires it at its end and
 * frees it at end + allowed lateness.  It has the same semantics as
 * wa_engine (see wa_engine.h) and uses the same aggregate kernels, so that
 * the benchmark compares the slice structure with this one and nothing
 * else.
 *
 * Limits, acceptable for a benchmark baseline: int64 keys only, and window
 * bounds (start, end, end + lateness) must fit in int64.
 *
 * bench/engine/naive.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef NAIVE_H
#define NAIVE_H

#include <stdint.h>

#include "wa_engine.h"

typedef struct naive_stats
{
	uint64_t	events_in;
	uint64_t	events_partial;
	uint64_t	events_dropped;
	uint64_t	panes_on_time;
	uint64_t	panes_late;
	uint64_t	updates;		/* accumulator updates: events x windows */
	uint64_t	n_windows;		/* live (key, window) accumulators */
	uint64_t	peak_windows;
	uint64_t	mem_bytes;		/* bytes held: table, records, timers */
	uint64_t	peak_mem_bytes;
} naive_stats;

typedef struct naive_engine naive_engine;

/*
 * Create a baseline engine from the same configuration wa_engine takes.
 * byte_keys must be false; the allocator is ignored (malloc is used).
 * Returns NULL if the configuration is not usable.
 */
extern naive_engine *naive_create(const wa_config *config);
extern void naive_destroy(naive_engine *ne);

/* Same contract as wa_engine_ingest. */
extern wa_ingest_result naive_ingest(naive_engine *ne, const wa_key *key,
									 int64_t event_time,
									 const wa_value *values);

/* Same contract as wa_engine_emit_late. */
extern void naive_emit_late(naive_engine *ne);

/* Same contract as wa_engine_flush. */
extern void naive_flush(naive_engine *ne);

extern void naive_get_stats(const naive_engine *ne, naive_stats *stats);

#endif							/* NAIVE_H */
