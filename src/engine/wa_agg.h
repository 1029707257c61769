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
	WA_AGG_STDDEV_POP,
	WA_AGG_GENERIC,				/* the caller's, through wa_agg_generic */
	WA_AGG_SUM_DECIMAL,			/* exact, over fixed-point values: see below */
	WA_AGG_AVG_DECIMAL
} wa_agg_kind;

#define WA_AGG_LAST_KIND WA_AGG_AVG_DECIMAL

/* One aggregate of the list: what it computes and which input it reads. */
typedef struct wa_agg_spec
{
	wa_agg_kind kind;
	int			input;			/* index into the event's values; unused
								 * for count(*) and generic aggregates */
	bool		idempotent;		/* generic: merging a state with one that
								 * already holds its events changes nothing
								 * (min, bool_or, an hll union), so windows
								 * may be merged from overlapping ones */
} wa_agg_spec;

/*
 * One input value of an event.  Integer kinds read i, float kinds read f;
 * for generic aggregates i holds whatever the caller put there (a Datum).
 *
 * The decimal kinds read a fixed-point number (numeric(p, s) with p <= 18:
 * i is the value times 10^s, which fits in 63 bits) or, when f is NaN, a
 * NaN: counted apart, as PostgreSQL's numeric aggregates count them, since
 * one NaN makes the sum and the average NaN.
 */
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
	int64_t		count;			/* count kinds; avg_int and the decimal
								 * kinds: number of (non-NaN) inputs */
	int64_t		i;				/* min_int / max_int; decimal kinds: the
								 * number of NaN inputs */
	wa_int128	sum;			/* sum_int, the decimal kinds; avg_int: the
								 * exact sum */
	double		f;				/* float kinds */
	uint64_t	datum;			/* generic: the value final gave */
} wa_result;

struct wa_mem;

/*
 * Aggregates the engine has no kernel for (a PostgreSQL aggregate with a
 * combine function: numeric sums, sketches, user-defined states) keep, in
 * their place in the accumulator, a pointer to a state the caller owns.
 * NULL is the aggregate's initial state, before any input: a slice that
 * received events but no input for this aggregate (all NULL, say) keeps
 * it.  The engine calls:
 *
 *	transition	once per event, with the event's values (all of them: the
 *				callbacks know which inputs each aggregate reads);
 *	combine		to merge src (not NULL, left unchanged) into *dst, as
 *				wa_acc_merge does; *dst may be NULL;
 *	copy		to make *dst (NULL before) an independent copy of src (not
 *				NULL): the two-stack, kept instances and late panes hold
 *				states of their own;
 *	final		for a pane: the result of a state (NULL too), which must
 *				stay as it was (the same state may be finalized again for
 *				a late pane); the value is result->datum;
 *	release		when an accumulator holding a state is dropped.
 *
 * States are allocated through mem, the engine's accounting (wa_mem.h),
 * so that the memory bound sees every byte; mem is NULL for the scratch
 * of a reader of another process's engine (wa_engine_live), whose states
 * are the reader's own.  The callbacks raise errors as the caller does;
 * the engine is then not to be used again.  agg is the aggregate's index
 * in the list; arg is passed back unchanged.
 */
typedef struct wa_agg_generic
{
	void	   *arg;
	void		(*transition) (void *arg, struct wa_mem *mem, int agg,
							   void **state, const struct wa_value *values);
	void		(*combine) (void *arg, struct wa_mem *mem, int agg,
							void **dst, const void *src);
	void		(*copy) (void *arg, struct wa_mem *mem, int agg, void **dst,
						 const void *src);
	void		(*final) (void *arg, int agg, const void *state,
						  wa_result *result);
	void		(*release) (void *arg, struct wa_mem *mem, int agg,
							void *state);
	bool		final_writes;	/* final may change the state it is given,
								 * which must then be a copy (see
								 * wa_agg_layout.final_reads) */
} wa_agg_generic;

/* Byte layout of the accumulator for an aggregate list. */
typedef struct wa_agg_layout
{
	int			n_aggs;
	wa_agg_spec *aggs;
	uint32_t   *offsets;		/* byte offset of each aggregate's state */
	uint32_t	acc_size;		/* multiple of 8 */
	int			n_generic;		/* aggregates of kind WA_AGG_GENERIC */
	const wa_agg_generic *generic;	/* their callbacks */
	struct wa_mem *mem;			/* where their states are counted */
	bool		final_reads;	/* wa_acc_finalize leaves the accumulator
								 * as it was: no generic->final_writes */
} wa_agg_layout;

/*
 * Fill in offsets/acc_size; offsets must have room for n_aggs entries.
 * generic and mem are for the caller to set when there are generic
 * aggregates.
 */
extern void wa_agg_layout_init(wa_agg_layout *layout, int n_aggs,
							   wa_agg_spec *aggs, uint32_t *offsets);

/*
 * An accumulator's memory holds no state until wa_acc_init; one that does
 * hold a state is dropped with wa_acc_release (or reused with
 * wa_acc_reset), and duplicated with wa_acc_copy, never with memcpy: a
 * generic aggregate's state belongs to one accumulator.
 */
extern void wa_acc_init(const wa_agg_layout *layout, void *acc);
extern void wa_acc_release(const wa_agg_layout *layout, void *acc);
extern void wa_acc_reset(const wa_agg_layout *layout, void *acc);
/* dst: memory holding no state (uninitialized, or released) */
extern void wa_acc_copy(const wa_agg_layout *layout, void *dst,
						const void *src);
extern void wa_acc_update(const wa_agg_layout *layout, void *acc,
						  const wa_value *values);
extern void wa_acc_merge(const wa_agg_layout *layout, void *dst,
						 const void *src);
extern void wa_acc_finalize(const wa_agg_layout *layout, const void *acc,
							wa_result *results);

/* True if the accumulator has seen no event at all. */
extern bool wa_acc_is_empty(const wa_agg_layout *layout, const void *acc);
/*
 * Whether a restored accumulator could have been built from events (its
 * generic aggregates' states are the caller's to check).
 */
extern bool wa_acc_is_valid(const wa_agg_layout *layout, const void *acc);

/*
 * The accumulator in a fixed byte order (little-endian, acc_size bytes),
 * for checkpoints that another machine may read.  Generic aggregates'
 * places hold zeros in the image, and their initial state (NULL) once
 * read back: their states are the caller's to save and restore
 * (wa_engine_acc_state).
 */
extern void wa_acc_to_portable(const wa_agg_layout *layout, const void *acc,
							   uint8_t *out);
extern void wa_acc_from_portable(const wa_agg_layout *layout,
								 const uint8_t *in, void *acc);

/* Name of a kind, for messages and tests. */
extern const char *wa_agg_kind_name(wa_agg_kind kind);

#endif							/* WA_AGG_H */
