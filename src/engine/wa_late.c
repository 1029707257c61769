/*-------------------------------------------------------------------------
 *
 * wa_late.c
 *	  Late windows: fired windows that receive late data, and their late
 *	  panes (see wa_engine.h for the semantics).
 *
 * Fired windows that receive late data get a record in late_windows
 * (revision count and dirty flag) that lives until the window closes; the
 * record heap orders them by closing time so that a dirty window is emitted
 * before its slices can expire.  Ingest marks the records (wa_late_mark),
 * the watermark expires them (wa_late_expire), wa_engine_emit_late emits
 * the dirty ones.
 *
 * src/engine/wa_late.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

static bool
late_eq(const void *stored, const void *probe)
{
	const late_window *w = stored;
	const late_probe *p = probe;

	return w->key == p->key && w->window == p->window && w->start == p->start;
}

static inline uint64_t
late_hash(const keystate *k, int j, wa_tick ws)
{
	return wa_hash64(k->hash ^ wa_hash64((uint64_t) ws ^
										 ((uint64_t) (ws >> 64) << 7) ^
										 ((uint64_t) j << 56)));
}

static void
late_emit(wa_engine *e, late_window *w)
{
	keystate   *k = w->key;
	const spec *sp = &e->specs[w->window];
	const void *acc = NULL;

	/*
	 * Kept values and parents' kept values follow late data: see wa_kept.h.
	 * A kept value is finalized in place unless finalizing may change it.
	 */
	if (k->kept != NULL)
		acc = wa_kept_get(&k->kept[w->window], &e->layout,
						  wa_kept_instance(w->start, sp->phase, sp->slide_s),
						  w->start);
	if (acc != NULL && !e->layout.final_reads)
	{
		wa_acc_release(&e->layout, e->scratch);
		wa_acc_copy(&e->layout, e->scratch, acc);
		acc = e->scratch;
	}
	else if (acc == NULL && sp->parent >= 0)
		acc = merge_from_parent(e, k, w->window, w->start);
	else if (acc == NULL)
		acc = merge_window(e, k,
						   wa_slices_lower_bound(&k->slices, e->stride, w->start),
						   w->start + sp->size_s);
	w->revision++;
	w->dirty = false;
	emit_pane(e, w->key, w->window, w->start, acc, WA_PANE_LATE, w->revision);
}

static void
late_free(wa_engine *e, late_window *w)
{
	wa_mem_free(&e->mem, w, sizeof(late_window));
	e->stats.n_late_windows--;
}

/*
 * Record that fired window ws of spec j of key k receives a late event.
 * Called before the event is applied, so "has data" means "was emitted".
 */
void
wa_late_mark(wa_engine *e, keystate *k, int j, wa_tick ws)
{
	late_probe	probe = {k, j, ws};
	uint64_t	hash = late_hash(k, j, ws);
	late_window *w = wa_hashtab_find(&e->late_windows, hash, late_eq, &probe);

	if (w == NULL)
	{
		wa_tick		ws_end = ws + e->specs[j].size_s;
		uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride, ws);

		w = wa_mem_alloc(&e->mem, sizeof(late_window));
		memset(w, 0, sizeof(*w));
		w->hash = hash;
		w->key = k;
		w->window = j;
		w->start = ws;
		/* it fired on time iff it held data; late data always creates w */
		w->revision = (pos < k->slices.count &&
					   wa_slices_index(&k->slices, e->stride, pos) < ws_end) ? 1 : 0;
		w->node.deadline = slice_tick(e, ws_end) + e->lateness;
		wa_hashtab_insert(&e->late_windows, &e->mem, hash, w);
		wa_heap_push(&e->late_deadlines, &e->mem, &w->node);
		e->stats.n_late_windows++;
	}
	if (!w->dirty)
	{
		if (e->n_dirty == e->dirty_capacity)
		{
			int64_t		capacity = e->dirty_capacity ? e->dirty_capacity * 2 : 64;

			e->dirty = e->dirty == NULL ?
				wa_mem_alloc(&e->mem, capacity * sizeof(late_window *)) :
				wa_mem_realloc(&e->mem, e->dirty,
							   e->dirty_capacity * sizeof(late_window *),
							   capacity * sizeof(late_window *));
			e->dirty_capacity = capacity;
		}
		e->dirty[e->n_dirty++] = w;
		w->dirty = true;
	}
}

/* Drop the records of windows that closed; emit those still dirty first. */
void
wa_late_expire(wa_engine *e)
{
	wa_heap_node *top;

	while ((top = wa_heap_top(&e->late_deadlines)) != NULL &&
		   top->deadline <= e->wm)
	{
		late_window *w = (late_window *) top;

		wa_heap_remove(&e->late_deadlines, top);
		wa_hashtab_remove(&e->late_windows, w->hash, w);
		if (w->dirty)
		{
			/* still listed in dirty: emit now, free in emit_late */
			late_emit(e, w);
			w->closed = true;
		}
		else
			late_free(e, w);
	}
}

void
wa_engine_emit_late(wa_engine *e)
{
	for (int64_t i = 0; i < e->n_dirty; i++)
	{
		late_window *w = e->dirty[i];

		if (w->dirty)
			late_emit(e, w);
		if (w->closed)
			late_free(e, w);
	}
	e->n_dirty = 0;
	if (e->sessions.n > 0)
		wa_sessions_emit_late(e);
}
