/*-------------------------------------------------------------------------
 *
 * wa_window_fixed.c
 *	  Fixed windows (tumbling, hopping) as a window kind (wa_window_kind.h).
 *
 * Slices are g ticks wide from the grid offset base; a window of spec j is
 * size_s slices from every start congruent to phase mod slide_s.  Each
 * routine is the static inline primitive that the engine's hot path calls
 * directly (wa_engine_int.h), so the two cannot disagree.
 *
 * src/engine/wa_window_fixed.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

#include "wa_window_kind.h"

static wa_tick
fixed_slice_start(const wa_engine *e, wa_tick s)
{
	return slice_tick(e, s);
}

/* The slice holding t, without the hot path's cache of recent slices. */
static int64_t
fixed_slice_of(const wa_engine *e, int64_t t)
{
	return (int64_t) wa_tick_floor_div((wa_tick) t - e->base, e->g);
}

/* Starts from the first window ending after s to the last starting at s. */
static void
fixed_windows_of(const wa_engine *e, int j, wa_tick s, wa_tick *first,
				 wa_tick *last)
{
	const spec *sp = &e->specs[j];

	*first = align_up(sp, s - sp->size_s + 1);
	*last = align_down(sp, s);
}

static wa_tick
fixed_next_start(const wa_engine *e, int j, wa_tick ws)
{
	return ws + e->specs[j].slide_s;
}

static wa_tick
fixed_window_end(const wa_engine *e, int j, wa_tick ws)
{
	return ws + e->specs[j].size_s;
}

const wa_window_kind wa_fixed_windows = {
	.name = "fixed",
	.slice_start = fixed_slice_start,
	.slice_of = fixed_slice_of,
	.windows_of = fixed_windows_of,
	.next_start = fixed_next_start,
	.window_end = fixed_window_end,
};
