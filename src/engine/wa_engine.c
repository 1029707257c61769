/*-------------------------------------------------------------------------
 *
 * wa_engine.c
 *	  The event-time windowing engine (see wa_engine.h for the semantics).
 *	  This file is the hot path: create, destroy, ingest, key lookup,
 *	  firing and the watermark.  The rest of the engine is in
 *	  wa_engine_plan.c (configuration, coverage planning), wa_late.c (late
 *	  panes), wa_engine_ckpt.c (checkpoint and restore) and wa_live.c (the
 *	  live view), sharing wa_engine_int.h, which also explains the units.
 *
 * Watermark-derived thresholds, recomputed on every advance:
 *	  fired_end:  a window with end slice <= fired_end has fired;
 *	  closed_end: a window with end slice <= closed_end accepts no more
 *				  events (end + lateness <= watermark).
 *
 * Keys.  Each key holds its sorted slices, the fired_end at which it was
 * last brought up to date, and a deadline in the key heap: the earliest of
 * its next window end and its first slice's expiry.  Advancing the
 * watermark visits only keys whose deadline passed.  An event for a key
 * also brings the key up to date, which is safe because a key whose
 * deadline is not due has no data in any window that fired since.
 *
 * Shared windows (config->share_windows).  The coverage planner
 * (wa_planner.h) may compute a window from another window's instances
 * instead of from slices, and may add factor windows nobody asked for to
 * serve as such parents.  All windows then form a forest: specs beyond
 * n_windows are factor windows, computed but never emitted, and a key
 * fires its specs parents first (fire_order), so that when an instance
 * fires, the parent instances it is the union of have fired and sit in the
 * parent's ring of kept values (wa_kept.h).  Kept values mirror the slices,
 * late events included, so a child's late pane merged from them is exact;
 * an instance missing from a ring is merged from slices instead.
 *
 * src/engine/wa_engine.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "wa_assert.h"

/* ---------- time arithmetic in slice units ---------- */

/*
 * The slice holding event time t; fits int64 (see below).  Events arrive
 * nearly in order, so the slices around a recent event are remembered and
 * most events find theirs by counting the slice edges at or below t among
 * them: a few comparisons, no division, and no branch for the CPU to
 * mispredict when events jitter back and forth across slice edges.
 */
#define NEAR_SLICES 9

static inline int64_t
slice_of(wa_engine *e, int64_t t)
{
	int64_t		q;
	int64_t		r;

	if (e->wide_slices && t >= e->hot_lo && t < e->hot_hi)
		return e->hot_slice;
	if (t >= e->near_lo && t < e->near_hi)
	{
		int64_t		d = t - e->near_lo;
		int64_t		s = e->near_first;

		for (int i = 1; i < NEAR_SLICES; i++)
			s += d >= i * e->g;
		if (e->wide_slices)
		{
			e->hot_slice = s;
			e->hot_lo = e->near_lo + (s - e->near_first) * e->g;
			e->hot_hi = e->hot_lo + e->g;
		}
		return s;
	}

	/*
	 * Since base < g, subtracting one never underflows: when g == 1, base is
	 * 0 and the branch is never taken; when g >= 2, q >= INT64_MIN / 2.
	 */
	q = wa_floor_div(t, e->g);
	r = wa_floor_mod(t, e->g);
	if (r < e->base)
	{
		q--;
		r += e->g;
	}

	/*
	 * Remember it, with four slices before and after.  Near the int64
	 * limits, or with slices so wide that those bounds (or the edges
	 * counted above) would overflow, nothing is remembered.
	 */
	e->near_lo = e->near_hi = 0;
	e->hot_lo = e->hot_hi = 0;
	if (e->g <= INT64_MAX / (2 * NEAR_SLICES) &&
		t > INT64_MIN + NEAR_SLICES * e->g && t < INT64_MAX - NEAR_SLICES * e->g)
	{
		e->near_first = q - (NEAR_SLICES - 1) / 2;
		e->near_lo = t - (r - e->base) - (NEAR_SLICES - 1) / 2 * e->g;
		e->near_hi = e->near_lo + NEAR_SLICES * e->g;
		if (e->wide_slices)
		{
			e->hot_slice = q;
			e->hot_lo = t - (r - e->base);
			e->hot_hi = e->hot_lo + e->g;
		}
	}
	return q;
}

/* First tick after slice s, without 128-bit arithmetic for recent slices. */
static inline wa_tick
slice_end_tick(const wa_engine *e, int64_t s)
{
	if (e->near_lo != e->near_hi && s >= e->near_first &&
		s < e->near_first + NEAR_SLICES)
		return e->near_lo + (s - e->near_first + 1) * e->g;
	return slice_tick(e, (wa_tick) s + 1);
}

/* Slice number below which no window of any spec accepts data. */
static wa_tick
compute_expire_limit(const wa_engine *e, wa_tick closed_end)
{
	wa_tick		limit = WA_TICK_MAX;

	for (int j = 0; j < e->n_windows; j++)
	{
		wa_tick		t = align_up(&e->specs[j], closed_end - e->specs[j].size_s + 1);

		if (t < limit)
			limit = t;
	}
	return limit;
}

void
wa_set_watermark(wa_engine *e, wa_tick wm)
{
	/* the watermark never decreases (wa_engine.h) */
	WA_ASSERT(wm >= e->wm);
	e->wm = wm;
	/* the thresholds only move when the watermark crosses a slice edge */
	if (wm < e->wm_next_edge)
		return;
	e->fired_end = wa_tick_floor_div(wm - e->base, e->g);
	e->closed_end = wa_tick_floor_div(wm - e->lateness - e->base, e->g);
	e->expire_limit = compute_expire_limit(e, e->closed_end);
	/* slices from fired_end on: no window holding them has fired */
	e->unfired_ok = e->fired_end <= INT64_MAX;
	e->unfired_from = e->fired_end < INT64_MIN ? INT64_MIN : (int64_t) e->fired_end;
	/* the first watermark at which fired_end or closed_end grows */
	e->wm_next_edge = slice_tick(e, e->fired_end + 1);
	if (slice_tick(e, e->closed_end + 1) + e->lateness < e->wm_next_edge)
		e->wm_next_edge = slice_tick(e, e->closed_end + 1) + e->lateness;
}

/* Tick at which slice s stops being used: its last window closes. */
static wa_tick
slice_expiry(const wa_engine *e, int64_t s)
{
	wa_tick		last_end = WA_TICK_MIN;

	for (int j = 0; j < e->n_windows; j++)
	{
		const spec *sp = &e->specs[j];
		wa_tick		end = align_down(sp, s) + sp->size_s;

		if (end > last_end)
			last_end = end;
	}
	return slice_tick(e, last_end) + e->lateness;
}

/* ---------- creation ---------- */

wa_engine *
wa_engine_create(const wa_config *config)
{
	wa_mem		mem;
	wa_engine  *e;
	int64_t		g;
	int64_t		origin0;

	wa_mem_init(&mem, config->allocator);
	e = wa_mem_alloc(&mem, sizeof(wa_engine));
	memset(e, 0, sizeof(*e));
	e->mem = mem;

	e->n_windows = config->n_windows;
	e->kind = &wa_fixed_windows;
	e->bound = config->bound;
	e->lateness = config->lateness;
	if (e->n_windows > 0)
	{
		e->windows = wa_mem_alloc(&e->mem, sizeof(wa_window) * e->n_windows);
		memcpy(e->windows, config->windows, sizeof(wa_window) * e->n_windows);
		g = wa_config_slice_width(config, &origin0);
		e->g = g;
		e->base = wa_floor_mod(origin0, g);
		wa_specs_init(e, config);
	}
	else
	{
		/* sessions only: no slice ever exists, the grid is the tick */
		e->g = 1;
		e->base = 0;
		e->fire_step = WA_TICK_MAX;
	}
	e->byte_keys = config->byte_keys;
	e->emit = config->emit;
	e->emit_arg = config->emit_arg;

	e->aggs = wa_mem_alloc(&e->mem, sizeof(wa_agg_spec) * (config->n_aggs + 1));
	if (config->n_aggs > 0)
		memcpy(e->aggs, config->aggs, sizeof(wa_agg_spec) * config->n_aggs);
	e->offsets = wa_mem_alloc(&e->mem, sizeof(uint32_t) * (config->n_aggs + 1));
	wa_agg_layout_init(&e->layout, config->n_aggs, e->aggs, e->offsets);
	e->layout.generic = config->generic;
	e->layout.final_reads = config->generic == NULL || !config->generic->final_writes;
	e->layout.mem = &e->mem;
	e->stride = WA_SLICE_HEADER + e->layout.acc_size;
	e->scratch = wa_mem_alloc(&e->mem, e->layout.acc_size);
	wa_acc_init(&e->layout, e->scratch);
	e->results = wa_mem_alloc(&e->mem, sizeof(wa_result) * (config->n_aggs + 1));
	wa_sessions_init(e, config);

	wa_hashtab_init(&e->keys, &e->mem);
	wa_heap_init(&e->key_deadlines);
	wa_hashtab_init(&e->late_windows, &e->mem);
	wa_heap_init(&e->late_deadlines);

	e->wm_next_edge = WA_TICK_MIN;
	e->near_lo = e->near_hi = 0;	/* nothing remembered yet */
	e->hot_lo = e->hot_hi = 0;

	/*
	 * Tumbling windows of a minute over events a second out of order: the
	 * next event is nearly always in the slice of the one before, and one
	 * range test finds it.  With narrow slices it rarely is, and that test
	 * would be a branch mispredicted half the time.
	 */
	e->wide_slices = e->bound <= e->g / 4;
	e->wm = WA_TICK_MIN;
	wa_set_watermark(e, WA_TICK_MIN);
	e->created_bytes = e->mem.bytes;
	return e;
}

/* ---------- keys ---------- */

static bool
key_eq_bytes(const void *stored, const void *probe)
{
	const keystate *k = stored;

	return wa_key_bytes_equal(k->bytes, k->len, probe);
}

static keystate *key_create(wa_engine *e, const wa_key *key, uint64_t hash);

/* Inline: every event looks its key up; few create one. */
static inline keystate *
key_lookup_or_create(wa_engine *e, const wa_key *key)
{
	uint64_t	hash = wa_key_hash(e, key);
	keystate   *k;

	/* two calls, so that each inlines its own equality test */
	if (e->byte_keys)
		k = wa_hashtab_find(&e->keys, hash, key_eq_bytes, key);
	else
		k = wa_hashtab_find(&e->keys, hash, wa_key_eq_int, key);
	if (k != NULL)
		return k;
	return key_create(e, key, hash);
}

static keystate *
key_create(wa_engine *e, const wa_key *key, uint64_t hash)
{
	keystate   *k = wa_mem_alloc(&e->mem, sizeof(keystate));

	memset(k, 0, sizeof(*k));
	k->hash = hash;
	k->node.pos = -1;
	k->node.deadline = WA_TICK_MAX;
	k->fired_end = e->fired_end;
	k->dirty_pos = -1;
	if (e->byte_keys)
	{
		k->len = key->len;
		k->bytes = wa_key_copy_bytes(&e->mem, key);
	}
	else
		k->ival = key->ival;
	wa_hashtab_insert(&e->keys, &e->mem, hash, k);
	e->stats.n_keys++;
	return k;
}

/* Free what a key owns besides itself: slices and two-stack caches. */
static void
key_free_state(wa_engine *e, keystate *k)
{
	for (uint32_t i = 0; e->layout.n_generic > 0 && i < k->slices.count; i++)
		wa_acc_release(&e->layout, wa_slices_acc(&k->slices, e->stride, i));
	wa_slices_free(&k->slices, &e->mem, e->stride);
	if (k->stacks != NULL)
	{
		for (int i = 0; i < e->n_stacks; i++)
			wa_twostack_free(&k->stacks[i], &e->mem, &e->layout);
		wa_mem_free(&e->mem, k->stacks, sizeof(wa_twostack) * e->n_stacks);
		k->stacks = NULL;
	}
	if (k->kept != NULL)
	{
		for (int j = 0; j < e->n_specs; j++)
			wa_kept_free(&k->kept[j], &e->mem, &e->layout);
		wa_mem_free(&e->mem, k->kept, sizeof(wa_kept) * e->n_specs);
		k->kept = NULL;
	}
}

/* Record that slice s of key k changed, for the next checkpoint. */
static inline void
key_mark_dirty(wa_engine *e, keystate *k, int64_t s)
{
	if (k->dirty_pos >= 0)
	{
		if (s < k->dirty_lo)
			k->dirty_lo = s;
		else if (s > k->dirty_hi)
			k->dirty_hi = s;
		return;
	}
	if (e->n_dirty_keys == e->dirty_keys_capacity)
	{
		int64_t		capacity = e->dirty_keys_capacity ?
			e->dirty_keys_capacity * 2 : 64;

		e->dirty_keys = e->dirty_keys == NULL ?
			wa_mem_alloc(&e->mem, capacity * sizeof(keystate *)) :
			wa_mem_realloc(&e->mem, e->dirty_keys,
						   e->dirty_keys_capacity * sizeof(keystate *),
						   capacity * sizeof(keystate *));
		e->dirty_keys_capacity = capacity;
	}
	k->dirty_pos = e->n_dirty_keys;
	k->dirty_lo = k->dirty_hi = s;
	e->dirty_keys[e->n_dirty_keys++] = k;
}

/* Take a key off dirty_keys: its last entry moves into its place. */
static void
key_unmark_dirty(wa_engine *e, keystate *k)
{
	keystate   *last = e->dirty_keys[--e->n_dirty_keys];

	e->dirty_keys[k->dirty_pos] = last;
	last->dirty_pos = k->dirty_pos;
	k->dirty_pos = -1;
}

static void
key_free(wa_engine *e, keystate *k)
{
	if (k->node.pos >= 0)
		wa_heap_remove(&e->key_deadlines, &k->node);
	/* its changed slices have all expired: nothing left to checkpoint */
	if (k->dirty_pos >= 0)
		key_unmark_dirty(e, k);
	wa_hashtab_remove(&e->keys, k->hash, k);
	key_free_state(e, k);
	if (e->byte_keys)
		wa_mem_free(&e->mem, k->bytes, k->len > 0 ? k->len : 1);
	wa_mem_free(&e->mem, k, sizeof(keystate));
	WA_ASSERT(e->stats.n_keys > 0);
	e->stats.n_keys--;
}

static void
key_set_deadline(wa_engine *e, keystate *k, wa_tick deadline)
{
	k->node.deadline = deadline;
	if (k->node.pos < 0)
		wa_heap_push(&e->key_deadlines, &e->mem, &k->node);
	else
		wa_heap_update(&e->key_deadlines, &k->node);
}

/* key_lookup_or_create for restore; ingest calls the static one directly */
keystate *
wa_key_lookup_or_create(wa_engine *e, const wa_key *key)
{
	return key_lookup_or_create(e, key);
}

/* ---------- windows ---------- */

/* The key's two-stack caches, created on first use. */
static wa_twostack *
key_stacks(wa_engine *e, keystate *k)
{
	if (k->stacks == NULL)
	{
		k->stacks = wa_mem_alloc(&e->mem, sizeof(wa_twostack) * e->n_stacks);
		for (int i = 0; i < e->n_stacks; i++)
			wa_twostack_init(&k->stacks[i]);
	}
	return k->stacks;
}

/* The key's rings of kept instances, created on first use. */
static wa_kept *
key_kept(wa_engine *e, keystate *k)
{
	if (k->kept == NULL)
	{
		k->kept = wa_mem_alloc(&e->mem, sizeof(wa_kept) * e->n_specs);
		memset(k->kept, 0, sizeof(wa_kept) * e->n_specs);
	}
	return k->kept;
}

/*
 * Instance ws of spec j fired with value acc (not empty): keep it if the
 * spec keeps instances, and emit it if it was requested.
 */
static void
instance_fired(wa_engine *e, keystate *k, int j, wa_tick ws, const void *acc)
{
	const spec *sp = &e->specs[j];

	if (sp->n_kept > 0)
		wa_kept_put(&key_kept(e, k)[j], &e->mem, &e->layout, sp->n_kept,
					wa_kept_instance(ws, sp->phase, sp->slide_s), ws, acc);
	if (j < e->n_windows)
		emit_pane(e, k, j, ws, acc, WA_PANE_ON_TIME, 1);
}

/*
 * fire_windows for a spec with a two-stack cache: successive windows slide
 * the cache; an empty window makes us jump to the first window holding the
 * next slice, which the cache treats as a fresh start.  Binary searches,
 * whose cache misses dominate when keys are many, happen only on jumps.
 */
static void
fire_windows_stacked(wa_engine *e, keystate *k, int j, wa_tick ws, wa_tick hi)
{
	const spec *sp = &e->specs[j];
	wa_twostack *ts = &key_stacks(e, k)[sp->stack];

	while (ws + sp->size_s <= hi)
	{
		uint32_t	pos;

		e->stats.merges += wa_twostack_window(ts, &e->mem, &e->layout,
											  &k->slices, e->stride, ws,
											  ws + sp->size_s,
											  ws + sp->slide_s, e->scratch);
		if (!wa_acc_is_empty(&e->layout, e->scratch))
		{
			instance_fired(e, k, j, ws, e->scratch);
			ws += sp->slide_s;
			continue;
		}
		/* empty: the next window with data holds the first later slice */
		pos = wa_slices_lower_bound(&k->slices, e->stride, ws + sp->size_s);
		if (pos == k->slices.count)
			break;
		ws = align_up(sp, (wa_tick) wa_slices_index(&k->slices, e->stride, pos) -
					  sp->size_s + 1);
	}
}

/* Fire key k's windows of spec j with end in (lo, hi] that hold data. */
static void
fire_windows(wa_engine *e, keystate *k, int j, wa_tick lo, wa_tick hi)
{
	const spec *sp = &e->specs[j];
	wa_tick		ws = align_up(sp, lo - sp->size_s + 1);
	uint32_t	pos;

	if (sp->stack >= 0)
	{
		fire_windows_stacked(e, k, j, ws, hi);
		return;
	}
	pos = wa_slices_lower_bound(&k->slices, e->stride, ws);
	while (ws + sp->size_s <= hi && pos < k->slices.count)
	{
		int64_t		first;

		while (pos < k->slices.count &&
			   wa_slices_index(&k->slices, e->stride, pos) < ws)
			pos++;
		if (pos == k->slices.count)
			break;
		first = wa_slices_index(&k->slices, e->stride, pos);
		if (first >= ws + sp->size_s)
		{
			/* empty window: jump to the first window holding that slice */
			ws = align_up(sp, (wa_tick) first - sp->size_s + 1);
			continue;
		}
		instance_fired(e, k, j, ws,
					   sp->parent >= 0 ? merge_from_parent(e, k, j, ws) :
					   merge_window(e, k, pos, ws + sp->size_s));
		ws += sp->slide_s;
	}
}

/*
 * Tick at which the first unfired window holding slice s ends, over every
 * spec (factor windows too, as in next_fire_end_after), or WA_TICK_MAX.
 * It depends on s and fired_end only, and events of all keys arrive in
 * the same few slices: remember the last answer.
 */
static wa_tick
first_unfired_end(wa_engine *e, int64_t s)
{
	wa_tick		best = WA_TICK_MAX;
	wa_tick		lo = (wa_tick) s > e->fired_end ? (wa_tick) s : e->fired_end;

	if (e->unfired_end_valid && e->unfired_end_slice == s &&
		e->unfired_end_fired == e->fired_end)
		return e->unfired_end_tick;
	for (int j = 0; j < e->n_specs; j++)
	{
		const spec *sp = &e->specs[j];
		wa_tick		end = align_up(sp, lo + 1 - sp->size_s) + sp->size_s;

		/* only windows that contain s */
		if (end - sp->size_s <= s)
		{
			wa_tick		tick = slice_tick(e, end);

			if (tick < best)
				best = tick;
		}
	}
	e->unfired_end_valid = true;
	e->unfired_end_slice = s;
	e->unfired_end_fired = e->fired_end;
	e->unfired_end_tick = best;
	return best;
}

/*
 * Earliest end (slice number) after "after" of a window of k that holds
 * data, or WA_TICK_MAX.
 */
static wa_tick
next_fire_end_after(const wa_engine *e, const keystate *k, wa_tick after)
{
	wa_tick		best = WA_TICK_MAX;

	/* factor windows too: an event for k assumes nothing of k is due */
	for (int j = 0; j < e->n_specs; j++)
	{
		const spec *sp = &e->specs[j];
		/* the first window that has not fired, and the first slice past it */
		wa_tick		first_end = align_up(sp, after + 1 - sp->size_s) + sp->size_s;
		uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride, first_end);
		wa_tick		threshold;
		wa_tick		s;
		wa_tick		lo;
		wa_tick		end;

		/* usual case for a busy key: that first window holds data */
		if (pos > 0 &&
			wa_slices_index(&k->slices, e->stride, pos - 1) >= first_end - sp->size_s)
		{
			if (first_end < best)
				best = first_end;
			continue;
		}

		/* else: the first slice that belongs to a window ending later */
		threshold = align_up(sp, after - sp->size_s + 1);
		pos = wa_slices_lower_bound(&k->slices, e->stride, threshold);
		if (pos == k->slices.count)
			continue;
		s = wa_slices_index(&k->slices, e->stride, pos);
		lo = s > after ? s : after;
		/* smallest window end > lo: ends are starts shifted by size_s */
		end = align_up(sp, lo + 1 - sp->size_s) + sp->size_s;
		if (end < best)
			best = end;
	}
	return best;
}

static void
key_reschedule(wa_engine *e, keystate *k)
{
	wa_tick		fire = next_fire_end_after(e, k, e->fired_end);
	wa_tick		deadline;

	deadline = slice_expiry(e, wa_slices_index(&k->slices, e->stride, 0));
	if (fire != WA_TICK_MAX && slice_tick(e, fire) < deadline)
		deadline = slice_tick(e, fire);
	key_set_deadline(e, k, deadline);
}

/*
 * Bring key k up to the current watermark: fire its due windows, free the
 * slices no window can use any more, and reschedule it (or free it).
 */
static void
key_visit(wa_engine *e, keystate *k)
{
	e->stats.key_visits++;
	if (k->fired_end < e->fired_end)
	{
		wa_tick		lo = k->fired_end;

		/*
		 * Fire in steps short enough that parents' rings still hold what
		 * their children read (a big watermark jump, a flush), skipping
		 * stretches without data.
		 */
		while (lo < e->fired_end)
		{
			wa_tick		hi = e->fired_end;

			if (hi - lo > e->fire_step)
			{
				hi = next_fire_end_after(e, k, lo);
				if (hi > e->fired_end)
					break;
				if (hi < lo + e->fire_step)
					hi = lo + e->fire_step;
				if (hi > e->fired_end)
					hi = e->fired_end;
			}
			for (int o = 0; o < e->n_specs; o++)
				fire_windows(e, k, e->fire_order[o], lo, hi);
			lo = hi;
		}
		k->fired_end = e->fired_end;
	}
	while (k->slices.count > 0 &&
		   wa_slices_index(&k->slices, e->stride, 0) < e->expire_limit)
	{
		WA_ASSERT(e->stats.n_slices > 0);
		wa_acc_release(&e->layout, wa_slices_acc(&k->slices, e->stride, 0));
		wa_slices_pop_front(&k->slices);
		e->stats.n_slices--;
	}
	if (k->slices.count == 0)
		key_free(e, k);
	else
		key_reschedule(e, k);
}

/* key_reschedule for restore; key_visit calls the static one directly */
void
wa_key_reschedule(wa_engine *e, keystate *k)
{
	key_reschedule(e, k);
}

/* ---------- watermark ---------- */

void
wa_engine_advance(wa_engine *e, wa_tick wm)
{
	wa_heap_node *top;

	if (wm <= e->wm)
		return;
	wa_set_watermark(e, wm);
	wa_late_expire(e);
	while ((top = wa_heap_top(&e->key_deadlines)) != NULL &&
		   top->deadline <= e->wm)
		key_visit(e, (keystate *) top);
	if (e->sessions.n > 0)
		wa_sessions_advance(e);
}

void
wa_engine_flush(wa_engine *e)
{
	wa_engine_emit_late(e);
	wa_engine_advance(e, WA_TICK_MAX);
	wa_engine_emit_late(e);

	/*
	 * Every key, slice and late-window record is gone; give back the
	 * containers' grown capacity too, so that a flushed engine holds what a
	 * new one does.
	 */
	wa_hashtab_destroy(&e->keys, &e->mem);
	wa_hashtab_init(&e->keys, &e->mem);
	wa_hashtab_destroy(&e->late_windows, &e->mem);
	wa_hashtab_init(&e->late_windows, &e->mem);
	wa_heap_destroy(&e->key_deadlines, &e->mem);
	wa_heap_destroy(&e->late_deadlines, &e->mem);
	wa_mem_free(&e->mem, e->dirty, e->dirty_capacity * sizeof(late_window *));
	e->dirty = NULL;
	e->dirty_capacity = 0;
	wa_mem_free(&e->mem, e->dirty_keys,
				e->dirty_keys_capacity * sizeof(keystate *));
	e->dirty_keys = NULL;
	e->dirty_keys_capacity = 0;
	wa_sessions_reset(e);
	/* the last pane's generic states */
	wa_acc_release(&e->layout, e->scratch);

	/* what wa_engine.h promises a flushed engine */
	WA_ASSERT(e->stats.n_keys == 0 && e->stats.n_slices == 0 &&
			  e->stats.n_sessions == 0);
	WA_ASSERT(e->mem.bytes == e->created_bytes + wa_sessions_pending_bytes(e));
}

/* ---------- ingest ---------- */

/* An event at t was folded in: move the watermark, firing what is due. */
static inline void
advance_on_event(wa_engine *e, int64_t t)
{
	wa_tick		wm;

	if (!e->seen_event || t > e->max_ts)
	{
		e->max_ts = t;
		e->seen_event = true;
	}
	wm = (wa_tick) e->max_ts - e->bound;
	if (wm > e->wm)
	{
		wa_heap_node *key_top = wa_heap_top(&e->key_deadlines);
		wa_heap_node *late_top = wa_heap_top(&e->late_deadlines);

		/* usual case: within the same slice, with nothing due */
		if (wm < e->wm_next_edge &&
			(key_top == NULL || key_top->deadline > wm) &&
			(late_top == NULL || late_top->deadline > wm) &&
			(e->sessions.n == 0 || wa_sessions_deadline(e) > wm))
			e->wm = wm;
		else
			wa_engine_advance(e, wm);
	}
}

/*
 * The fixed windows' part of wa_engine_ingest: everything but the
 * watermark and the statistics of dropped and partial events.  Inlined
 * into both of its callers: the hot path is the engine without sessions,
 * and a call per event would cost it 5% (bench/engine shape a).
 */
#if defined(__GNUC__) || defined(__clang__)
#define WA_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define WA_ALWAYS_INLINE inline
#endif

static WA_ALWAYS_INLINE wa_ingest_result
ingest_fixed(wa_engine *e, const wa_key *key, int64_t t,
			 const wa_value *values)
{
	int64_t		s = slice_of(e, t);
	bool		any_accept;
	bool		all_accept = true;
	bool		in_order;
	keystate   *k;
	uint32_t	pos;
	void	   *acc;
	bool		new_slice;
	wa_tick		deadline;
	wa_tick		slice_end;

	/*
	 * The windows of spec j containing slice s start at ws_last, ws_last -
	 * slide_s, ... down to just above s - size_s; their ends decrease in
	 * the same order, so the latest window accepts if any does and the
	 * earliest rejects if any does.  Every such window ends after s, so
	 * when no window ending at s or later has closed (s >= closed_end),
	 * all accept: the usual case, decided without any division.
	 */
	/*
	 * The usual event lands in a slice no window of which has fired: every
	 * window accepts it and none gets a late pane.  One int64 comparison.
	 */
	in_order = e->unfired_ok && s >= e->unfired_from;
	if (!in_order && (wa_tick) s < e->closed_end)
	{
		any_accept = false;
		for (int j = 0; j < e->n_windows; j++)
		{
			const spec *sp = &e->specs[j];
			wa_tick		ws_last = align_down(sp, s);
			wa_tick		ws_first = align_up(sp, (wa_tick) s - sp->size_s + 1);

			if (ws_last + sp->size_s > e->closed_end)
				any_accept = true;
			if (ws_first + sp->size_s <= e->closed_end)
				all_accept = false;
		}
		if (!any_accept)
			return WA_INGEST_DROPPED;
	}

	k = key_lookup_or_create(e, key);
	/* nothing of k is due (else it would have been visited): catch up */
	k->fired_end = e->fired_end;

	/*
	 * The usual event of a busy key: in order, in the newest slice the key
	 * already has.  That slice's expiry and the first window end holding
	 * it were folded into the key's deadline when the slice was made, and
	 * every rescheduling since covered it too, so the deadline stands; no
	 * window holding it has fired, so no late pane or cache changes.  Only
	 * the accumulator and the watermark move.  Tumbling windows, a slice
	 * per window, take this path for all but a key's first event in each.
	 * Only with wide slices: with slices as narrow as the disorder, a
	 * key's events fall in its newest slice half the time, and the test
	 * would be a branch mispredicted half the time (bench/engine shapes b
	 * and c lost 8% to it).
	 */
	if (e->wide_slices && in_order && k->node.pos >= 0 && k->slices.count > 0 &&
		wa_slices_index(&k->slices, e->stride, k->slices.count - 1) == s)
	{
		wa_acc_update(&e->layout,
					  wa_slices_acc(&k->slices, e->stride, k->slices.count - 1),
					  values);
		key_mark_dirty(e, k, s);
		return WA_INGEST_ACCEPTED;
	}

	/*
	 * Fired windows that still accept get late panes.  Every window holding
	 * s ends after s, so none has fired unless s < fired_end; start the walk
	 * at the latest fired one.
	 */
	if (!in_order && (wa_tick) s < e->fired_end)
	{
		for (int j = 0; j < e->n_windows; j++)
		{
			const spec *sp = &e->specs[j];
			wa_tick		ws = align_down(sp, s);
			wa_tick		last_fired = align_down(sp, e->fired_end - sp->size_s);

			if (last_fired < ws)
				ws = last_fired;
			for (; ws > (wa_tick) s - sp->size_s; ws -= sp->slide_s)
			{
				if (ws + sp->size_s <= e->closed_end)
					break;
				wa_late_mark(e, k, j, ws);
			}
		}
	}

	/* fold the event into its slice */
	pos = wa_slices_lower_bound(&k->slices, e->stride, s);
	new_slice = pos == k->slices.count ||
		wa_slices_index(&k->slices, e->stride, pos) != s;
	if (new_slice)
	{
		acc = wa_slices_insert(&k->slices, &e->mem, e->stride, pos, s);
		wa_acc_init(&e->layout, acc);
		e->stats.n_slices++;
	}
	else
		acc = wa_slices_acc(&k->slices, e->stride, pos);
	wa_acc_update(&e->layout, acc, values);
	key_mark_dirty(e, k, s);
	if (!in_order)
	{
		/*
		 * A late event may change a slice that a cached or kept window
		 * covers.  Those windows have fired, so an event in order is in
		 * none of them.
		 */
		if (k->stacks != NULL)
			for (int i = 0; i < e->n_stacks; i++)
				wa_twostack_touch(&k->stacks[i], &e->layout, s, values);
		if (k->kept != NULL)
			for (int j = 0; j < e->n_specs; j++)
				wa_kept_touch(&k->kept[j], &e->layout, e->specs[j].size_s,
							  s, values);
	}

	/* the key's deadline may move earlier: a new slice, an earlier window */
	deadline = k->node.deadline;
	if (new_slice || k->node.pos < 0)
	{
		wa_tick		exp = slice_expiry(e, s);

		if (exp < deadline)
			deadline = exp;
	}
	slice_end = slice_end_tick(e, s);
	if (slice_end < deadline)
	{
		wa_tick		tick = first_unfired_end(e, s);

		if (tick < deadline)
			deadline = tick;
	}
	if (deadline != k->node.deadline || k->node.pos < 0)
		key_set_deadline(e, k, deadline);
	return all_accept ? WA_INGEST_ACCEPTED : WA_INGEST_PARTIAL;
}

/* Both kinds' answers for one event: accepted only if by every window. */
static inline wa_ingest_result
combine_results(wa_ingest_result a, wa_ingest_result b)
{
	if (a == b)
		return a;
	return WA_INGEST_PARTIAL;
}

wa_ingest_result
wa_engine_ingest(wa_engine *e, const wa_key *key, int64_t t,
				 const wa_value *values)
{
	wa_ingest_result result;

	e->stats.events_in++;
	if (e->sessions.n == 0)
	{
		/* fixed windows only: the hot path */
		result = ingest_fixed(e, key, t, values);
		if (result != WA_INGEST_ACCEPTED)
			e->last_drop = WA_DROP_TOO_LATE;
	}
	else
	{
		/* both kinds decide by the watermark before the event */
		result = wa_sessions_ingest(e, key, t, values);
		e->last_drop = e->sessions.last_drop;
		if (e->n_windows > 0)
		{
			wa_ingest_result fixed = ingest_fixed(e, key, t, values);

			if (fixed != WA_INGEST_ACCEPTED)
				e->last_drop = WA_DROP_TOO_LATE;
			result = combine_results(fixed, result);
		}
	}
	if (result == WA_INGEST_DROPPED)
	{
		e->stats.events_dropped++;
		return result;
	}
	if (result == WA_INGEST_PARTIAL)
		e->stats.events_partial++;
	advance_on_event(e, t);
	return result;
}
/* ---------- teardown and accessors ---------- */

void
wa_engine_destroy(wa_engine *e)
{
	wa_mem		mem;

	/* free what is left without emitting anything */
	for (uint64_t i = 0; i <= e->late_windows.mask; i++)
	{
		late_window *w = e->late_windows.slots[i].ptr;

		if (w != NULL)
			wa_mem_free(&e->mem, w, sizeof(late_window));
	}
	for (int64_t i = 0; i < e->n_dirty; i++)
		if (e->dirty[i]->closed)
			wa_mem_free(&e->mem, e->dirty[i], sizeof(late_window));
	for (uint64_t i = 0; i <= e->keys.mask; i++)
	{
		keystate   *k = e->keys.slots[i].ptr;

		if (k != NULL)
		{
			key_free_state(e, k);
			if (e->byte_keys)
				wa_mem_free(&e->mem, k->bytes, k->len > 0 ? k->len : 1);
			wa_mem_free(&e->mem, k, sizeof(keystate));
		}
	}
	wa_hashtab_destroy(&e->keys, &e->mem);
	wa_hashtab_destroy(&e->late_windows, &e->mem);
	wa_heap_destroy(&e->key_deadlines, &e->mem);
	wa_heap_destroy(&e->late_deadlines, &e->mem);
	wa_mem_free(&e->mem, e->dirty, e->dirty_capacity * sizeof(late_window *));
	wa_mem_free(&e->mem, e->dirty_keys,
				e->dirty_keys_capacity * sizeof(keystate *));
	wa_sessions_destroy(e);
	wa_mem_free(&e->mem, e->results, sizeof(wa_result) * (e->layout.n_aggs + 1));
	wa_acc_release(&e->layout, e->scratch);
	wa_mem_free(&e->mem, e->scratch, e->layout.acc_size);
	wa_mem_free(&e->mem, e->offsets, sizeof(uint32_t) * (e->layout.n_aggs + 1));
	wa_mem_free(&e->mem, e->aggs, sizeof(wa_agg_spec) * (e->layout.n_aggs + 1));
	if (e->n_windows > 0)
	{
		wa_mem_free(&e->mem, e->fire_order, sizeof(int) * e->n_specs);
		wa_mem_free(&e->mem, e->specs, sizeof(spec) * e->n_specs);
		wa_mem_free(&e->mem, e->windows, sizeof(wa_window) * e->n_windows);
	}
	/* the engine itself is all that is left, then nothing */
	WA_ASSERT(e->mem.bytes == sizeof(wa_engine));
	mem = e->mem;
	wa_mem_free(&mem, e, sizeof(wa_engine));
	WA_ASSERT(mem.bytes == 0);
}

int64_t
wa_engine_slice_width(const wa_engine *e)
{
	return e->g;
}

uint32_t
wa_engine_acc_size(const wa_engine *e)
{
	return e->layout.acc_size;
}

void
wa_engine_acc_to_portable(const wa_engine *e, const void *acc, uint8_t *out)
{
	wa_acc_to_portable(&e->layout, acc, out);
}

void
wa_engine_acc_from_portable(const wa_engine *e, const uint8_t *in, void *acc)
{
	wa_acc_from_portable(&e->layout, in, acc);
}

void	  **
wa_engine_acc_state(const wa_engine *e, const void *acc, int agg)
{
	WA_ASSERT(agg >= 0 && agg < e->layout.n_aggs &&
			  e->layout.aggs[agg].kind == WA_AGG_GENERIC);
	return (void **) ((const char *) acc + e->layout.offsets[agg]);
}

wa_mem *
wa_engine_mem(wa_engine *e)
{
	return &e->mem;
}

wa_tick
wa_engine_watermark(const wa_engine *e)
{
	return e->wm;
}

wa_drop_reason
wa_engine_drop_reason(const wa_engine *e)
{
	return e->last_drop;
}

void
wa_engine_get_stats(const wa_engine *e, wa_stats *stats)
{
	*stats = e->stats;
	stats->n_session_keys = e->sessions.keys.count;
	stats->mem_bytes = e->mem.bytes;
	stats->peak_mem_bytes = e->mem.peak;
}

const wa_agg_layout *
wa_engine_layout(const wa_engine *e)
{
	return &e->layout;
}
