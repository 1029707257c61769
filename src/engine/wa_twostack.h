/*-------------------------------------------------------------------------
 *
 * wa_twostack.h
 *	  Two-stack sliding aggregation over one key's slices, for emitting
 *	  successive overlapping windows in amortised O(1) merges each.
 *
 * A hopping window of size/g slices that advances by slide/g slices would
 * cost size/g merges per window if merged from scratch.  The two-stack
 * keeps the window as a FIFO of slice partials split in two: a "front"
 * stack holding, for each of its slices, the merge of that slice and every
 * later front slice (so the oldest entry is the merge of the whole front),
 * and a "back" that is just a running merge of the newer slices.  Sliding
 * pushes new slices into the back (one merge each) and pops old ones off
 * the front; when the front runs empty, the back's slices are flipped into
 * it, computing the suffix merges once.  Every slice is merged a constant
 * number of times, which works for any associative operator: min, max and
 * float sums included, which have no inverse.
 *
 * The cache must follow changes to the slices it covers: a late event in
 * a back slice is folded into the back's merge as well, one in a front
 * slice drops the cache, which is rebuilt on the next window.
 *
 * src/engine/wa_twostack.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_TWOSTACK_H
#define WA_TWOSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "wa_agg.h"
#include "wa_mem.h"
#include "wa_slices.h"

typedef struct wa_twostack
{
	bool		valid;
	wa_tick		lo;				/* covered slices: [lo, hi) */
	wa_tick		mid;			/* front covers [lo, mid), back [mid, hi) */
	wa_tick		hi;
	char	   *front;			/* entries: slice index + suffix merge */
	uint32_t	front_head;		/* first live front entry */
	uint32_t	front_count;	/* entries in front, live or popped */
	uint32_t	front_capacity;
	void	   *back;			/* running merge of [mid, hi) */
} wa_twostack;

extern void wa_twostack_init(wa_twostack *ts);
extern void wa_twostack_free(wa_twostack *ts, wa_mem *mem,
							 const wa_agg_layout *layout);

/*
 * Merge the slices of window [ws, we) of the given slice array into out,
 * sliding the cache forward when the window follows the previous one.
 * next_ws is where the next window the caller asks for starts, at the
 * earliest: what only windows before it need is moved into out rather
 * than copied (a later window starting earlier rebuilds the cache).
 * Returns the number of accumulator merges performed.
 */
extern uint64_t wa_twostack_window(wa_twostack *ts, wa_mem *mem,
								   const wa_agg_layout *layout,
								   const wa_slices *slices, uint32_t stride,
								   wa_tick ws, wa_tick we, wa_tick next_ws,
								   void *out);

/*
 * An event with the given values was folded into slice s.  If the cache
 * covers s: in the back, fold the event into the back's running merge too
 * (the kernels are commutative, so the merge stays exact); in the front,
 * whose suffix merges would all need it, drop the cache.
 */
static inline void
wa_twostack_touch(wa_twostack *ts, const wa_agg_layout *layout, wa_tick s,
				  const wa_value *values)
{
	if (!ts->valid || s >= ts->hi)
		return;
	if (s >= ts->mid)
		wa_acc_update(layout, ts->back, values);
	else
		ts->valid = false;
}

#endif							/* WA_TWOSTACK_H */
