/*-------------------------------------------------------------------------
 *
 * wa_kept.h
 *	  The values of one key's most recent fired instances of one window,
 *	  kept so that late panes and the windows computed from this one need
 *	  no merge over slices.
 *
 * Instances of a window are numbered by their start: instance i starts at
 * phase + i * slide (slice units).  The ring holds a power-of-two number
 * of slots, instance i in slot i mod capacity, each tagged with the start
 * it holds, so a lookup is one comparison and a newer instance simply
 * overwrites the one capacity instances older.
 *
 * A kept value must always equal the merge of the slices of its instance.
 * It is computed when the instance fires; after that, only a late event
 * can change those slices, and the engine folds every event that is not
 * in order into the kept instances holding its slice (wa_kept_touch).
 * The kernels are commutative, so that keeps the values exact.
 *
 * src/engine/wa_kept.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_KEPT_H
#define WA_KEPT_H

#include <stdint.h>

#include "wa_agg.h"
#include "wa_mem.h"
#include "wa_time.h"

typedef struct wa_kept
{
	uint32_t	capacity;		/* power of two; 0 until the first put */
	wa_tick    *start;			/* instance start per slot, or WA_TICK_MAX */
	char	   *acc;			/* accumulator per slot */
} wa_kept;

/* Instance number of the instance starting at ws (ws = phase + i slide). */
static inline wa_tick
wa_kept_instance(wa_tick ws, int64_t phase, int64_t slide)
{
	return slide == 1 ? ws : wa_tick_floor_div(ws - phase, slide);
}

/*
 * Keep acc as the value of instance number ino, starting at ws, in a ring
 * of capacity slots (a power of two, the same at every call).
 */
extern void wa_kept_put(wa_kept *kept, wa_mem *mem, const wa_agg_layout *layout,
						uint32_t capacity, wa_tick ino, wa_tick ws,
						const void *acc);

/* The kept value of instance ino starting at ws, or NULL. */
static inline const void *
wa_kept_get(const wa_kept *kept, const wa_agg_layout *layout, wa_tick ino,
			wa_tick ws)
{
	uint32_t	slot;

	if (kept->capacity == 0)
		return NULL;
	slot = (uint32_t) ((uint64_t) ino & (kept->capacity - 1));
	if (kept->start[slot] != ws)
		return NULL;
	return kept->acc + (size_t) slot * layout->acc_size;
}

/*
 * An event with the given values went into slice s: fold it into every
 * kept instance [start, start + size) that holds s.
 */
extern void wa_kept_touch(wa_kept *kept, const wa_agg_layout *layout,
						  int64_t size, wa_tick s, const wa_value *values);

extern void wa_kept_free(wa_kept *kept, wa_mem *mem,
						 const wa_agg_layout *layout);

#endif							/* WA_KEPT_H */
