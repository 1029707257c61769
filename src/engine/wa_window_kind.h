/*-------------------------------------------------------------------------
 *
 * wa_window_kind.h
 *	  The seam for window kinds, private to the engine: what a kind of
 *	  window says to the engine.
 *
 * A window kind answers three questions, in slice units (wa_engine_int.h):
 * where slice boundaries lie (slice_start, slice_of), which windows of a
 * spec an event's slice falls into (windows_of, next_start), and when a
 * window ends and so fires (window_end).  The
 * watermark, lateness, late panes, dead letters and checkpoints stay the
 * engine's, the same for every kind.
 *
 * Implemented: fixed windows (tumbling, hopping), wa_fixed_windows in
 * wa_window_fixed.c.  Slices are uniform, g ticks wide; a window is
 * size_s slices starting at every slice congruent to phase mod slide_s;
 * nothing merges.
 *
 * Dispatch.  The live view (wa_live.c) goes through e->kind.  The hot path
 * (slice_of in ingest, the window walks of ingest and firing, key
 * deadlines) calls the fixed kind's static inline primitives (slice_tick,
 * align_up, align_down in wa_engine_int.h) directly: an indirect call per
 * event is not free, and fixed windows are the only kind.  When a second
 * kind arrives, those call sites are the dispatch points: they branch once
 * on e->kind == &wa_fixed_windows and keep the inlined path for it.
 *
 * The kinds that come next, and what each will plug in:
 *
 *	- Calendar windows (days in a time zone, months): slice_start and
 *	  slice_of from a table of boundaries, since days have 23 or 25 hours
 *	  and months 28 to 31 days; windows_of and window_end count slices,
 *	  not ticks, so the slice store, firing and expiry stay as they are.
 *	- Session windows did not plug in here: they have no slices, and this
 *	  table asks slice questions.  They are a store of their own beside the
 *	  slices (wa_session.h, wa_session.c), which the engine drives through
 *	  ingest, the watermark, emit_late, flush and the live view; retracting
 *	  the sessions a merge replaced is theirs too (WA_PANE_RETRACT).
 *	- Aggregates with variable-size states need nothing of a kind: they
 *	  live in accumulators like the kernels' (wa_agg_generic, wa_agg.h).
 *
 * src/engine/wa_window_kind.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_WINDOW_KIND_H
#define WA_WINDOW_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wa_engine.h"
#include "wa_time.h"

/* A window kind: a routine table (the engine never asks which it drives). */
typedef struct wa_window_kind
{
	const char *name;

	/* First tick of slice s (slice boundaries; uniform for fixed windows). */
	wa_tick		(*slice_start) (const wa_engine *e, wa_tick s);

	/* The slice holding event time t. */
	int64_t		(*slice_of) (const wa_engine *e, int64_t t);

	/*
	 * The windows of spec j that hold slice s: starts from *first to *last,
	 * each after the one before by next_start.
	 */
	void		(*windows_of) (const wa_engine *e, int j, wa_tick s,
							   wa_tick *first, wa_tick *last);
	wa_tick		(*next_start) (const wa_engine *e, int j, wa_tick ws);

	/*
	 * The end (a slice number) of window ws of spec j: it fires when the
	 * watermark reaches slice_start(end) and closes lateness later.
	 */
	wa_tick		(*window_end) (const wa_engine *e, int j, wa_tick ws);

} wa_window_kind;

/* Tumbling and hopping windows (wa_window_fixed.c). */
extern const wa_window_kind wa_fixed_windows;

#endif							/* WA_WINDOW_KIND_H */
