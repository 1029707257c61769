/*-------------------------------------------------------------------------
 *
 * wa_slices.h
 *	  One key's slices: accumulators kept sorted by slice index.
 *
 * Entries are (int64 slice index, accumulator) pairs of a fixed stride in
 * one array, sorted by index, holding only slices that received data.  The
 * live part is [head, head + count): expiry pops from the front by moving
 * head, and events, which arrive nearly in order, insert at or close to the
 * end.  A window is a contiguous run of entries, so merging it walks
 * memory linearly, and a sparse key costs only the slices it has.
 *
 * src/engine/wa_slices.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_SLICES_H
#define WA_SLICES_H

#include <stdint.h>

#include "wa_mem.h"
#include "wa_time.h"

typedef struct wa_slices
{
	char	   *buf;
	uint32_t	head;
	uint32_t	count;
	uint32_t	capacity;
} wa_slices;

/* Bytes per entry: the slice index, then the accumulator. */
#define WA_SLICE_HEADER ((uint32_t) sizeof(int64_t))

static inline char *
wa_slices_entry(const wa_slices *sl, uint32_t stride, uint32_t i)
{
	return sl->buf + (size_t) (sl->head + i) * stride;
}

static inline int64_t
wa_slices_index(const wa_slices *sl, uint32_t stride, uint32_t i)
{
	return *(const int64_t *) wa_slices_entry(sl, stride, i);
}

static inline void *
wa_slices_acc(const wa_slices *sl, uint32_t stride, uint32_t i)
{
	return wa_slices_entry(sl, stride, i) + WA_SLICE_HEADER;
}

/* Binary search for idx among the first hi entries. */
extern uint32_t wa_slices_bisect(const wa_slices *sl, uint32_t stride,
								 wa_tick idx, uint32_t hi);

/*
 * Position of the first entry whose index is >= idx (count if none).
 * Events, new windows and two-stack pushes mostly touch the newest slices,
 * and a busy key has data in every recent slice: so first guess that the
 * entries from idx to the newest are consecutive slices, which puts idx
 * exactly (newest - idx) entries from the end.  Indexes are distinct and
 * increasing, so that entry holds idx or less; when it holds less, walk
 * back a few entries from the end before bisecting.  Inline, since it runs
 * once per event; the guess replaces a data-dependent walk whose branches
 * the CPU cannot predict when events are out of order.
 */
static inline uint32_t
wa_slices_lower_bound(const wa_slices *sl, uint32_t stride, wa_tick idx)
{
	uint32_t	hi = sl->count;
	int64_t		newest;

	if (hi == 0)
		return 0;
	newest = wa_slices_index(sl, stride, hi - 1);
	if (idx > newest)
		return hi;
	if ((wa_tick) newest - idx < (wa_tick) hi)
	{
		uint32_t	guess = hi - 1 - (uint32_t) ((wa_tick) newest - idx);

		if (wa_slices_index(sl, stride, guess) == idx)
			return guess;
	}
	for (int step = 0; step < 8 && hi > 0; step++)
	{
		if (wa_slices_index(sl, stride, hi - 1) < idx)
			return hi;
		hi--;
	}
	return hi == 0 ? 0 : wa_slices_bisect(sl, stride, idx, hi);
}

/* Insert a new entry for idx at position pos; returns its accumulator. */
extern void *wa_slices_insert(wa_slices *sl, wa_mem *mem, uint32_t stride,
							  uint32_t pos, int64_t idx);

static inline void
wa_slices_pop_front(wa_slices *sl)
{
	sl->head++;
	if (--sl->count == 0)
		sl->head = 0;
}

extern void wa_slices_free(wa_slices *sl, wa_mem *mem, uint32_t stride);

#endif							/* WA_SLICES_H */
