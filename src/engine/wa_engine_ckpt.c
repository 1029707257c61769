/*-------------------------------------------------------------------------
 *
 * wa_engine_ckpt.c
 *	  Checkpoint and restore of the engine (see wa_engine.h for the
 *	  contract).
 *
 * Checkpoints.  A key that receives an event joins the dirty_keys array
 * (it stores its index there, so that a freed key leaves by a swap with the
 * last entry) and widens its range [dirty_lo, dirty_hi] of changed slices;
 * a checkpoint reports the live slices of each dirty key in its range and
 * empties the array.  Events arrive nearly in order, so the range of a key
 * is a few slices.  Slices leave only by expiring below expire_limit, and
 * every key whose first slice expired has been visited (its deadline is at
 * most that expiry), so no live slice lies below expire_limit: the bound a
 * checkpoint hands out for deleting persisted slices.  (wa_engine.c keeps
 * dirty_keys up to date on the hot path.)
 *
 * A restore needs only the watermark and the slices: every threshold is a
 * function of the watermark, a key's fired_end can be the global one
 * (windows between the two hold no data of the key, or it would have been
 * due), and deadlines follow from the slices.
 *
 * src/engine/wa_engine_ckpt.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

#include <stdlib.h>

void
wa_engine_checkpoint(wa_engine *e, wa_save_slice_fn save, void *arg,
					 int64_t *expire_below, wa_time_state *time)
{
	for (int64_t i = 0; i < e->n_dirty_keys; i++)
	{
		keystate   *k = e->dirty_keys[i];
		uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride,
												k->dirty_lo);
		wa_key		key;

		pane_key(e, k, &key);
		for (; pos < k->slices.count; pos++)
		{
			int64_t		s = wa_slices_index(&k->slices, e->stride, pos);

			if (s > k->dirty_hi)
				break;
			save(arg, &key, s, wa_slices_acc(&k->slices, e->stride, pos),
				 e->layout.acc_size);
		}
		k->dirty_pos = -1;
	}
	e->n_dirty_keys = 0;

	/*
	 * No live slice lies below expire_limit (see the file header).  The
	 * limit is a wa_tick: before the first event it lies far below
	 * INT64_MIN, where INT64_MIN does as well; once it passes INT64_MAX no
	 * slice can be live at all, and INT64_MAX is the closest bound.
	 */
	if (e->expire_limit < INT64_MIN)
		*expire_below = INT64_MIN;
	else if (e->expire_limit > INT64_MAX)
		*expire_below = INT64_MAX;
	else
		*expire_below = (int64_t) e->expire_limit;

	time->max_ts = e->max_ts;
	time->seen_event = e->seen_event;
	time->wm = e->wm;
}

void
wa_engine_restore_time(wa_engine *e, const wa_time_state *time)
{
	e->max_ts = time->max_ts;
	e->seen_event = time->seen_event;
	/* every threshold is a function of the watermark alone */
	if (time->wm > e->wm)
		wa_set_watermark(e, time->wm);
}

bool
wa_engine_restore_slice(wa_engine *e, const wa_key *key, int64_t slice,
						void *acc, uint32_t acc_size)
{
	keystate   *k;
	void	   *dst;

	if (acc_size != e->layout.acc_size)
		return true;
	if (!wa_acc_is_valid(&e->layout, acc))
	{
		wa_acc_release(&e->layout, acc);
		return false;
	}

	/*
	 * A slice below expire_limit has expired by the restored watermark (a
	 * leftover the caller's delete could not express, see the header).
	 */
	if ((wa_tick) slice < e->expire_limit)
	{
		wa_acc_release(&e->layout, acc);
		return true;
	}

	/* append; restore_done sorts the keys that came out of order */
	k = wa_key_lookup_or_create(e, key);
	dst = wa_slices_insert(&k->slices, &e->mem, e->stride, k->slices.count,
						   slice);
	memcpy(dst, acc, acc_size);
	e->stats.n_slices++;
	return true;
}

static int
slice_entry_cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* Sort a restored key's slices, dropping repeats of one slice. */
static void
key_sort_slices(wa_engine *e, keystate *k)
{
	wa_slices  *sl = &k->slices;
	uint32_t	n = 0;
	bool		sorted = true;

	for (uint32_t i = 1; i < sl->count && sorted; i++)
		sorted = wa_slices_index(sl, e->stride, i - 1) <
			wa_slices_index(sl, e->stride, i);
	if (sorted)
		return;
	qsort(wa_slices_entry(sl, e->stride, 0), sl->count, e->stride,
		  slice_entry_cmp);
	for (uint32_t i = 0; i < sl->count; i++)
	{
		if (n > 0 && wa_slices_index(sl, e->stride, i) ==
			wa_slices_index(sl, e->stride, n - 1))
		{
			wa_acc_release(&e->layout, wa_slices_acc(sl, e->stride, i));
			continue;
		}
		if (i != n)
			memcpy(wa_slices_entry(sl, e->stride, n),
				   wa_slices_entry(sl, e->stride, i), e->stride);
		n++;
	}
	e->stats.n_slices -= sl->count - n;
	sl->count = n;
}

void
wa_engine_restore_done(wa_engine *e)
{
	for (uint64_t i = 0; i <= e->keys.mask; i++)
	{
		keystate   *k = e->keys.slots[i].ptr;

		if (k == NULL)
			continue;
		key_sort_slices(e, k);

		/*
		 * The checkpointed key's fired_end may have lagged the global one,
		 * but only over windows without its data; and nothing is due, since
		 * every slice is live and every window with data is unfired.
		 */
		k->fired_end = e->fired_end;
		wa_key_reschedule(e, k);
	}
	if (e->sessions.n > 0)
		wa_sessions_restore_done(e);
}
