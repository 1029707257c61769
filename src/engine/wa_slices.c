/*-------------------------------------------------------------------------
 *
 * wa_slices.c
 *	  One key's sorted slice array.
 *
 * src/engine/wa_slices.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_slices.h"

#include <string.h>

uint32_t
wa_slices_bisect(const wa_slices *sl, uint32_t stride, wa_tick idx,
				 uint32_t hi)
{
	uint32_t	lo = 0;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (wa_slices_index(sl, stride, mid) < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void *
wa_slices_insert(wa_slices *sl, wa_mem *mem, uint32_t stride, uint32_t pos,
				 int64_t idx)
{
	char	   *entry;

	if (sl->head + sl->count == sl->capacity)
	{
		/*
		 * A key in steady state frees slices at the front as fast as it
		 * adds them at the back: slide the live part down once a quarter of
		 * the array has been freed, rather than growing (each slide moves
		 * at most three entries per insert since the last one).
		 */
		if (sl->head > 0 && sl->head >= sl->capacity / 4)
		{
			memmove(sl->buf, sl->buf + (size_t) sl->head * stride,
					(size_t) sl->count * stride);
			sl->head = 0;
		}
		else
		{
			uint32_t	capacity = sl->capacity ? sl->capacity * 2 : 4;

			sl->buf = sl->buf == NULL ?
				wa_mem_alloc(mem, (size_t) capacity * stride) :
				wa_mem_realloc(mem, sl->buf, (size_t) sl->capacity * stride,
							   (size_t) capacity * stride);
			sl->capacity = capacity;
		}
	}
	entry = sl->buf + (size_t) (sl->head + pos) * stride;
	if (pos < sl->count)
		memmove(entry + stride, entry, (size_t) (sl->count - pos) * stride);
	sl->count++;
	*(int64_t *) entry = idx;
	return entry + WA_SLICE_HEADER;
}

void
wa_slices_free(wa_slices *sl, wa_mem *mem, uint32_t stride)
{
	wa_mem_free(mem, sl->buf, (size_t) sl->capacity * stride);
	sl->buf = NULL;
	sl->head = sl->count = sl->capacity = 0;
}
