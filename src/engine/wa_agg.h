/*-------------------------------------------------------------------------
 *
 * wa_agg.h
 *	  Mergeable aggregate kernels: the accumulator of one (key, slice).
 *
 * A pipeline computes a fixed list of aggregates.  Their partial states are
 * laid out side by side in one flat accumulator (a few dozen bytes), so a
 * slice is a single allocation and merging two slices is a loop over the
 * list.  Every kernel is associative and commutative: merging slice
 * partials in any grouping gives the same integers as folding the events
 * one by one, and the same floats up to rounding.
 *
 * Integer sums use a 128-bit accumulator: 2^64 events of INT64_MAX cannot
 * overflow it, so an exact integer sum never wraps silently.  Variance uses
 * the (N, Sx, Sxx) form of Youngs and Cramer, whose combine step is the one
 * PostgreSQL's float8_combine uses.
 *
 * src/engine/wa_agg.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_AGG_H
#define WA_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wa_time.h"

typedef enum wa_agg_kind
{
	WA_AGG_COUNT_STAR,			/* count(*): every event */
	WA_AGG_COUNT,				/* count(x): non-null inputs */
	WA_AGG_SUM_INT,				/* exact; result in wa_result.sum */
	WA_AGG_SUM_FLOAT,
	WA_AGG_MIN_INT,
	WA_AGG_MAX_INT,
	WA_AGG_MIN_FLOAT,			/* NaN sorts above every number, as in SQL */
	WA_AGG_MAX_FLOAT,
	WA_AGG_AVG_INT,				/* result: sum and count, caller divides */
	WA_AGG_AVG_FLOAT,
	WA_AGG_VAR_SAMP,
	WA_AGG_VAR_POP,
	WA_AGG_STDDEV_SAMP,
	WA_AGG_STDDEV_POP
} wa_agg_kind;

/* One aggregate of the list: what it computes and which input it reads. */
typedef struct wa_agg_spec
{
	wa_agg_kind kind;
	int			input;			/* index into the event's values; unused
								 * for count(*) */
} wa_agg_spec;

/* One input value of an event.  Integer kinds read i, float kinds read f. */
typedef struct wa_value
{
	bool		isnull;
	int64_t		i;
	double		f;
} wa_value;

/* The final value of one aggregate for one pane. */
typedef struct wa_result
{
	bool		isnull;			/* no non-null input (count is never null) */
	int64_t		count;			/* count kinds; avg_int: number of inputs */
	int64_t		i;				/* min_int / max_int */
	wa_int128	sum;			/* sum_int; avg_int: the exact sum */
	double		f;				/* float kinds */
} wa_result;

/* Byte layout of the accumulator for an aggregate list. */
typedef struct wa_agg_layout
{
	int			n_aggs;
	wa_agg_spec *aggs;
	uint32_t   *offsets;		/* byte offset of each aggregate's state */
	uint32_t	acc_size;		/* multiple of 8 */
} wa_agg_layout;

/* Fill in offsets/acc_size; offsets must have room for n_aggs entries. */
extern void wa_agg_layout_init(wa_agg_layout *layout, int n_aggs,
							   wa_agg_spec *aggs, uint32_t *offsets);

extern void wa_acc_init(const wa_agg_layout *layout, void *acc);
extern void wa_acc_update(const wa_agg_layout *layout, void *acc,
						  const wa_value *values);
extern void wa_acc_merge(const wa_agg_layout *layout, void *dst,
						 const void *src);
extern void wa_acc_finalize(const wa_agg_layout *layout, const void *acc,
							wa_result *results);

/* True if the accumulator has seen no event at all. */
extern bool wa_acc_is_empty(const wa_agg_layout *layout, const void *acc);
/* Whether a restored accumulator could have been built from events. */
extern bool wa_acc_is_valid(const wa_agg_layout *layout, const void *acc);

/*
 * The accumulator in a fixed byte order (little-endian, acc_size bytes),
 * for checkpoints that another machine may read.
 */
extern void wa_acc_to_portable(const wa_agg_layout *layout, const void *acc,
							   uint8_t *out);
extern void wa_acc_from_portable(const wa_agg_layout *layout,
								 const uint8_t *in, void *acc);

/* Name of a kind, for messages and tests. */
extern const char *wa_agg_kind_name(wa_agg_kind kind);

#endif							/* WA_AGG_H */
