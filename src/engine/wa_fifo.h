/*-------------------------------------------------------------------------
 *
 * wa_fifo.h
 *	  A FIFO of partial aggregates with amortised O(1) push, pop and query,
 *	  for any associative operator (the "two-stack" sliding aggregator).
 *
 * Elements are fixed-size byte blobs, each already a partial aggregate (a
 * single value is the partial aggregate of itself).  The queue is split at
 * "mid": elements [head, mid) form the front, for which suffix[i] holds
 * elem[i] + elem[i+1] + ... + elem[mid-1]; elements [mid, tail) form the
 * back, summarised by one running aggregate.  The aggregate of the whole
 * queue is suffix[head] + back.  Popping from an empty front first flips
 * the back into the front, computing its suffixes once; every element is
 * combined a constant number of times over its life.
 *
 * Combination order is preserved (older on the left), so the operator need
 * not be commutative, only associative.  An element that falls out of the
 * window never contributes again: a NaN or an outlier only affects the
 * aggregates of queues that contain it.
 *
 * The engine's hopping emission (wa_twostack) applies the same idea to a
 * key's slices; this one serves per-row moving aggregates in SQL.
 *
 * src/engine/wa_fifo.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_FIFO_H
#define WA_FIFO_H

#include <stdint.h>

#include "wa_mem.h"

/* acc := acc + later, where later covers elements after acc's. */
typedef void (*wa_fifo_combine_fn) (void *acc, const void *later, void *arg);
/* The empty aggregate. */
typedef void (*wa_fifo_identity_fn) (void *acc, void *arg);

typedef struct wa_fifo
{
	uint32_t	elem_size;
	wa_fifo_combine_fn combine;
	wa_fifo_identity_fn identity;
	void	   *arg;
	wa_mem	   *mem;

	char	   *elems;			/* ring of capacity elements */
	char	   *suffix;			/* ring of capacity suffix aggregates */
	char	   *back;			/* aggregate of [mid, tail) */
	uint64_t	capacity;		/* a power of two, or 0 */
	uint64_t	head;			/* positions grow forever; slot = pos & mask */
	uint64_t	mid;
	uint64_t	tail;
} wa_fifo;

extern void wa_fifo_init(wa_fifo *fifo, wa_mem *mem, uint32_t elem_size,
						 wa_fifo_combine_fn combine,
						 wa_fifo_identity_fn identity, void *arg);
extern void wa_fifo_free(wa_fifo *fifo);

/* Append an element (copied) at the tail. */
extern void wa_fifo_push(wa_fifo *fifo, const void *elem);
/* The oldest element, or NULL if the queue is empty. */
extern const void *wa_fifo_oldest(const wa_fifo *fifo);
/* Remove the oldest element; the queue must not be empty. */
extern void wa_fifo_pop(wa_fifo *fifo);
/* The aggregate of every element, oldest first, into out. */
extern void wa_fifo_query(const wa_fifo *fifo, void *out);

static inline uint64_t
wa_fifo_length(const wa_fifo *fifo)
{
	return fifo->tail - fifo->head;
}

#endif							/* WA_FIFO_H */
