/*-------------------------------------------------------------------------
 *
 * wa_twostack.c
 *	  Two-stack sliding aggregation over one key's slices.
 *
 * Front entries reuse the slice entry layout (int64 slice index, then an
 * accumulator), but the accumulator holds the suffix merge: entry i is the
 * merge of front slices i..end.  Entries are copies, so the slice array
 * may move or expire slices without affecting them.
 *
 * src/engine/wa_twostack.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_twostack.h"

#include <string.h>

static inline char *
front_entry(const wa_twostack *ts, uint32_t stride, uint32_t i)
{
	return ts->front + (size_t) i * stride;
}

void
wa_twostack_init(wa_twostack *ts)
{
	memset(ts, 0, sizeof(*ts));
}

/* Drop the states the front's entries hold (generic aggregates). */
static void
release_front(wa_twostack *ts, const wa_agg_layout *layout, uint32_t stride)
{
	if (layout->n_generic == 0)
		return;
	for (uint32_t i = 0; i < ts->front_count; i++)
		wa_acc_release(layout, front_entry(ts, stride, i) + WA_SLICE_HEADER);
	ts->front_head = ts->front_count = 0;
}

void
wa_twostack_free(wa_twostack *ts, wa_mem *mem, const wa_agg_layout *layout)
{
	uint32_t	stride = WA_SLICE_HEADER + layout->acc_size;

	release_front(ts, layout, stride);
	if (ts->back != NULL)
		wa_acc_release(layout, ts->back);
	wa_mem_free(mem, ts->front, (size_t) ts->front_capacity * stride);
	wa_mem_free(mem, ts->back, layout->acc_size);
	wa_twostack_init(ts);
}

/*
 * Move the back's slices at or after ws into the front, computing suffix
 * merges newest first; the back becomes empty.
 */
static uint64_t
flip(wa_twostack *ts, wa_mem *mem, const wa_agg_layout *layout,
	 const wa_slices *slices, uint32_t stride, wa_tick ws)
{
	uint32_t	p0 = wa_slices_lower_bound(slices, stride, ws > ts->mid ? ws : ts->mid);
	uint32_t	p1 = wa_slices_lower_bound(slices, stride, ts->hi);
	uint32_t	n = p1 - p0;
	void	   *next = NULL;

	release_front(ts, layout, stride);
	if (n > ts->front_capacity)
	{
		uint32_t	capacity = ts->front_capacity ? ts->front_capacity : 8;

		while (capacity < n)
			capacity *= 2;
		wa_mem_free(mem, ts->front, (size_t) ts->front_capacity * stride);
		ts->front = wa_mem_alloc(mem, (size_t) capacity * stride);
		ts->front_capacity = capacity;
	}
	for (uint32_t i = n; i-- > 0;)
	{
		char	   *entry = front_entry(ts, stride, i);
		void	   *acc = entry + WA_SLICE_HEADER;

		*(int64_t *) entry = wa_slices_index(slices, stride, p0 + i);
		wa_acc_copy(layout, acc, wa_slices_acc(slices, stride, p0 + i));
		if (next != NULL)
			wa_acc_merge(layout, acc, next);
		next = acc;
	}
	ts->front_head = 0;
	ts->front_count = n;
	ts->mid = ts->hi;
	wa_acc_reset(layout, ts->back);
	return n;
}

uint64_t
wa_twostack_window(wa_twostack *ts, wa_mem *mem, const wa_agg_layout *layout,
				   const wa_slices *slices, uint32_t stride, wa_tick ws,
				   wa_tick we, wa_tick next_ws, void *out)
{
	char	   *oldest;

	uint64_t	merges = 0;
	uint32_t	pos;

	if (ts->back == NULL)
	{
		ts->back = wa_mem_alloc(mem, layout->acc_size);
		wa_acc_init(layout, ts->back);
	}
	if (!ts->valid || ws < ts->lo || ws > ts->hi)
	{
		/* not a continuation of the cached window: start over at ws */
		ts->valid = true;
		ts->lo = ts->mid = ts->hi = ws;
		release_front(ts, layout, stride);
		ts->front_head = ts->front_count = 0;
		wa_acc_reset(layout, ts->back);
	}

	/* evict slices before ws */
	while (ts->front_head < ts->front_count &&
		   *(int64_t *) front_entry(ts, stride, ts->front_head) < ws)
		ts->front_head++;
	if (ts->front_head == ts->front_count && ts->mid < ws)
		merges += flip(ts, mem, layout, slices, stride, ws);
	ts->lo = ws;

	/* push the slices in [hi, we) */
	for (pos = wa_slices_lower_bound(slices, stride, ts->hi);
		 pos < slices->count && wa_slices_index(slices, stride, pos) < we; pos++)
	{
		wa_acc_merge(layout, ts->back, wa_slices_acc(slices, stride, pos));
		merges++;
	}
	if (we > ts->hi)
		ts->hi = we;

	/* the window is the front's oldest suffix merge plus the back */
	wa_acc_release(layout, out);
	if (ts->front_head == ts->front_count)
		wa_acc_init(layout, out);
	else if (*(int64_t *) (oldest = front_entry(ts, stride, ts->front_head)) < next_ws)
	{
		/*
		 * No later window holds that slice: out takes the merge (a copy
		 * would cost a combine of a generic state), and the cache covers
		 * only what follows it.
		 */
		memcpy(out, oldest + WA_SLICE_HEADER, layout->acc_size);
		wa_acc_init(layout, oldest + WA_SLICE_HEADER);
		ts->lo = (wa_tick) *(int64_t *) oldest + 1;
		ts->front_head++;
	}
	else
		wa_acc_copy(layout, out, oldest + WA_SLICE_HEADER);
	wa_acc_merge(layout, out, ts->back);
	return merges + 1;
}
