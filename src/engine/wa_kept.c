/*-------------------------------------------------------------------------
 *
 * wa_kept.c
 *	  Ring of one key's recent fired instances of one window.
 *
 * src/engine/wa_kept.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_kept.h"

#include <string.h>

void
wa_kept_put(wa_kept *kept, wa_mem *mem, const wa_agg_layout *layout,
			uint32_t capacity, wa_tick ino, wa_tick ws, const void *acc)
{
	uint32_t	slot;

	if (kept->capacity == 0)
	{
		kept->start = wa_mem_alloc(mem, sizeof(wa_tick) * capacity);
		kept->acc = wa_mem_alloc(mem, (size_t) layout->acc_size * capacity);
		kept->capacity = capacity;
		for (uint32_t i = 0; i < capacity; i++)
			kept->start[i] = WA_TICK_MAX;	/* no instance starts there */
	}
	slot = (uint32_t) ((uint64_t) ino & (kept->capacity - 1));
	if (kept->start[slot] != WA_TICK_MAX)
		wa_acc_release(layout, kept->acc + (size_t) slot * layout->acc_size);
	kept->start[slot] = ws;
	wa_acc_copy(layout, kept->acc + (size_t) slot * layout->acc_size, acc);
}

/*
 * Rings are small (the instances that may still change), so a scan of the
 * slots is cheaper than working out which instances hold s.  Only events
 * that are not in order get here.
 */
void
wa_kept_touch(wa_kept *kept, const wa_agg_layout *layout, int64_t size,
			  wa_tick s, const wa_value *values)
{
	for (uint32_t i = 0; i < kept->capacity; i++)
	{
		wa_tick		ws = kept->start[i];

		if (ws <= s && s < ws + size && ws != WA_TICK_MAX)
			wa_acc_update(layout, kept->acc + (size_t) i * layout->acc_size,
						  values);
	}
}

void
wa_kept_free(wa_kept *kept, wa_mem *mem, const wa_agg_layout *layout)
{
	if (kept->capacity > 0)
	{
		for (uint32_t i = 0; layout->n_generic > 0 && i < kept->capacity; i++)
			if (kept->start[i] != WA_TICK_MAX)
				wa_acc_release(layout, kept->acc + (size_t) i * layout->acc_size);
		wa_mem_free(mem, kept->start, sizeof(wa_tick) * kept->capacity);
		wa_mem_free(mem, kept->acc, (size_t) layout->acc_size * kept->capacity);
	}
	memset(kept, 0, sizeof(*kept));
}
