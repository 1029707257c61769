/*-------------------------------------------------------------------------
 *
 * wa_live.c
 *	  The live view: the windows that hold data and have not fired yet
 *	  (sessions: wa_sessions_live),
 *	  with their current values, read without modifying the engine (see
 *	  wa_engine_live in wa_engine.h).
 *
 * src/engine/wa_live.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

/*
 * The unfired windows of spec j of key k that hold data, in start order:
 * like fire_windows, from the first window ending after fired_end, jumping
 * over empty stretches.  Reads only.  Window geometry comes from the
 * engine's window kind (wa_window_kind.h).
 */
static void
live_windows(const wa_engine *e, const wa_agg_layout *layout,
			 const keystate *k, int j, wa_emit_fn fn, void *arg,
			 void *scratch, wa_result *results)
{
	const wa_window_kind *kind = e->kind;
	const wa_slices *sl = &k->slices;
	wa_tick		ws;
	wa_tick		last;
	uint32_t	pos;
	wa_pane		pane;

	kind->windows_of(e, j, e->fired_end, &ws, &last);
	pos = wa_slices_lower_bound(sl, e->stride, ws);
	pane_key(e, k, &pane.key);
	pane.window = j;
	pane.kind = WA_PANE_ON_TIME;
	pane.revision = 0;
	pane.results = results;
	pane.acc = scratch;
	while (pos < sl->count)
	{
		wa_tick		first = wa_slices_index(sl, e->stride, pos);
		wa_tick		we = kind->window_end(e, j, ws);

		if (first >= we)
		{
			/* empty window: jump to the first window holding that slice */
			kind->windows_of(e, j, first, &ws, &last);
			continue;
		}
		wa_acc_init(layout, scratch);
		for (uint32_t p = pos;
			 p < sl->count && wa_slices_index(sl, e->stride, p) < we; p++)
			wa_acc_merge(layout, scratch, wa_slices_acc(sl, e->stride, p));
		wa_acc_finalize(layout, scratch, results);
		pane.start = kind->slice_start(e, ws);
		pane.end = kind->slice_start(e, we);
		fn(arg, &pane);
		wa_acc_release(layout, scratch);

		ws = kind->next_start(e, j, ws);
		while (pos < sl->count && wa_slices_index(sl, e->stride, pos) < ws)
			pos++;
	}
}

void
wa_engine_live(const wa_engine *e, const wa_agg_generic *generic,
			   wa_emit_fn fn, void *arg, void *scratch, wa_result *results)
{
	/* the reader's callbacks and memory, never the writer's */
	wa_agg_layout layout = e->layout;

	WA_ASSERT(layout.n_generic == 0 || generic != NULL);
	layout.generic = generic;
	layout.mem = NULL;

	/*
	 * Windows ending at or before the global fired_end have fired, even for
	 * a key whose own fired_end lags: those in between hold none of its
	 * data.
	 */
	for (uint64_t i = 0; i <= e->keys.mask; i++)
	{
		const keystate *k = e->keys.slots[i].ptr;

		if (k == NULL)
			continue;
		for (int j = 0; j < e->n_windows; j++)
			live_windows(e, &layout, k, j, fn, arg, scratch, results);
	}
	if (e->sessions.n > 0)
		wa_sessions_live(e, &layout, fn, arg, scratch, results);
}
