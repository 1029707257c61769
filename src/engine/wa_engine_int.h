/*-------------------------------------------------------------------------
 *
 * wa_engine_int.h
 *	  Definitions shared by the files of the windowing engine, and by no one
 *	  else: only the engine's own .c files include it.
 *
 * The engine is split by concern:
 *
 *	  wa_engine.c		create, destroy, ingest, key lookup, firing and the
 *						watermark: the hot path, kept in one file so that
 *						its helpers inline
 *	  wa_engine_plan.c	the configuration, and the glue to the coverage
 *						planner (wa_planner.h) that turns a config into specs
 *	  wa_late.c			fired windows that receive late data (late panes)
 *	  wa_engine_ckpt.c	checkpoint and restore
 *	  wa_live.c			the read-only live view
 *	  wa_window_kind.h	the seam for window kinds; wa_window_fixed.c
 *						implements it for fixed windows
 *	  wa_session.c		session windows (their state: wa_session.h)
 *
 * Helpers that the hot path and another file both need are static inline
 * here; functions one file gives another are declared at the end, under
 * the file that defines them.
 *
 * Units.  Internally everything is counted in slices: slice s covers ticks
 * [s*g + base, (s+1)*g + base), where g is the slice width and base the
 * grid offset.  A window of spec j covers the slices [ws, ws + size_s) for
 * every start ws congruent to phase_j modulo slide_s; its end is the slice
 * number ws + size_s.  Window numbers can leave the int64 range near the
 * limits of event time, so they are wa_tick (128-bit) values.
 *
 * src/engine/wa_engine_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_ENGINE_INT_H
#define WA_ENGINE_INT_H

#include <string.h>

#include "wa_engine.h"
#include "wa_hashtab.h"
#include "wa_heap.h"
#include "wa_kept.h"
#include "wa_mem.h"
#include "wa_session.h"
#include "wa_slices.h"
#include "wa_twostack.h"
#include "wa_window_kind.h"

/* A window spec in slice units. */
typedef struct spec
{
	int64_t		size_s;
	int64_t		slide_s;
	int64_t		phase;			/* window starts are phase mod slide_s */
	int			stack;			/* index into a key's two-stacks, or -1 */
	int			parent;			/* spec computed from, or -1: slices */
	int64_t		m;				/* parent instances per instance */
	uint32_t	n_kept;			/* ring size for kept instances, or 0 */
} spec;

typedef struct keystate
{
	wa_heap_node node;			/* first: the heap hands back this pointer */
	uint64_t	hash;
	int64_t		ival;
	uint8_t    *bytes;
	uint32_t	len;
	wa_tick		fired_end;		/* windows ending at or before: handled */
	wa_slices	slices;
	wa_twostack *stacks;		/* one per overlapping spec, or NULL */
	wa_kept    *kept;			/* one per spec, or NULL */
	int64_t		dirty_pos;		/* index in dirty_keys, or -1 */
	int64_t		dirty_lo;		/* slices changed since the last */
	int64_t		dirty_hi;		/* checkpoint lie in [dirty_lo, dirty_hi] */
} keystate;

typedef struct late_window
{
	wa_heap_node node;			/* deadline: the window's closing tick */
	uint64_t	hash;
	keystate   *key;
	int			window;
	wa_tick		start;			/* slice number of the window start */
	int64_t		revision;		/* emissions so far */
	bool		dirty;			/* late data not yet emitted */
	bool		closed;			/* off the table; free after emit_late */
} late_window;

/* Probe for late_windows lookups. */
typedef struct late_probe
{
	keystate   *key;
	int			window;
	wa_tick		start;
} late_probe;

struct wa_engine
{
	wa_mem		mem;
	int			n_windows;		/* requested fixed windows: emitted */
	wa_window  *windows;
	const wa_window_kind *kind;	/* wa_window_kind.h */
	int			n_specs;		/* requested, then factor windows */
	spec	   *specs;
	int		   *fire_order;		/* spec numbers, parents first */
	wa_tick		fire_step;		/* slices a key fires at a time */
	int64_t		g;				/* slice width in ticks */
	int64_t		base;			/* grid offset, in [0, g) */
	int64_t		bound;
	int64_t		lateness;
	bool		byte_keys;
	wa_emit_fn	emit;
	void	   *emit_arg;

	int			n_stacks;		/* specs emitted through a two-stack */

	wa_agg_layout layout;
	wa_agg_spec *aggs;
	uint32_t   *offsets;
	uint32_t	stride;			/* bytes per slice entry */
	void	   *scratch;		/* accumulator for merging a window */
	wa_result  *results;

	/* time */
	int64_t		max_ts;
	bool		seen_event;
	wa_tick		wm;
	wa_tick		fired_end;
	wa_tick		closed_end;
	wa_tick		expire_limit;	/* slices below this number are unused */
	wa_tick		wm_next_edge;	/* watermark at which the above change */
	bool		unfired_ok;		/* fired_end fits int64 (as unfired_from): */
	int64_t		unfired_from;	/* events in slices >= it are plain on time */
	bool		unfired_end_valid;	/* first_unfired_end's last answer: */
	int64_t		unfired_end_slice;	/* for this slice */
	wa_tick		unfired_end_fired;	/* and this fired_end */
	wa_tick		unfired_end_tick;
	int64_t		near_first;		/* NEAR_SLICES slices around a recent */
	int64_t		near_lo;		/* event, near_first the first of them, */
	int64_t		near_hi;		/* spanning ticks [near_lo, near_hi) */
	bool		wide_slices;	/* slices much wider than the disorder: */
	int64_t		hot_slice;		/* most events fall in the slice of the */
	int64_t		hot_lo;			/* one before, hot_slice, spanning ticks */
	int64_t		hot_hi;			/* [hot_lo, hot_hi) */

	uint64_t	created_bytes;	/* mem.bytes when created: flush returns to
								 * it */

	wa_hashtab	keys;
	wa_heap		key_deadlines;
	wa_hashtab	late_windows;
	wa_heap		late_deadlines;
	late_window **dirty;
	int64_t		n_dirty;
	int64_t		dirty_capacity;
	keystate  **dirty_keys;		/* keys changed since the last checkpoint */
	int64_t		n_dirty_keys;
	int64_t		dirty_keys_capacity;

	wa_sessions sessions;		/* session windows (wa_session.h) */
	wa_drop_reason last_drop;	/* wa_engine_drop_reason */

	wa_stats	stats;
};

/* ---------- keys (the fixed windows' table and the sessions') ---------- */

/*
 * int64 keys hash through wa_hash_int, a bijection on 64-bit integers:
 * equal hashes mean equal keys, and the key itself need not be compared.
 */
static inline uint64_t
wa_key_hash(const wa_engine *e, const wa_key *key)
{
	return e->byte_keys ? wa_hash_bytes(key->bytes, key->len) :
		wa_hash_int((uint64_t) key->ival);
}

/* int64 keys: equal hashes are equal keys (wa_key_hash) */
static inline bool
wa_key_eq_int(const void *stored, const void *probe)
{
	(void) stored;
	(void) probe;
	return true;
}

/* A key's own copy of its bytes (one byte for an empty key). */
static inline uint8_t *
wa_key_copy_bytes(wa_mem *mem, const wa_key *key)
{
	uint8_t    *bytes = wa_mem_alloc(mem, key->len > 0 ? key->len : 1);

	if (key->len > 0)
		memcpy(bytes, key->bytes, key->len);
	return bytes;
}

/* A stored byte key against a probe (memcmp never sees a NULL pointer). */
static inline bool
wa_key_bytes_equal(const uint8_t *bytes, uint32_t len, const wa_key *probe)
{
	return len == probe->len &&
		(len == 0 || memcmp(bytes, probe->bytes, len) == 0);
}

/* ---------- time arithmetic in slice units ---------- */

static inline wa_tick
slice_tick(const wa_engine *e, wa_tick s)
{
	return s * e->g + e->base;
}

/*
 * Smallest window start >= x for spec sp.  A window that slides by one
 * slice starts at every slice: no division (the common case, since the
 * slice width is usually the slide).
 */
static inline wa_tick
align_up(const spec *sp, wa_tick x)
{
	if (sp->slide_s == 1)
		return x;
	return x + wa_tick_floor_mod(sp->phase - x, sp->slide_s);
}

/* Largest window start <= x for spec sp. */
static inline wa_tick
align_down(const spec *sp, wa_tick x)
{
	if (sp->slide_s == 1)
		return x;
	return x - wa_tick_floor_mod(x - sp->phase, sp->slide_s);
}

/* ---------- merging and emitting a window (firing and late panes) ---------- */

static inline void
pane_key(const wa_engine *e, const keystate *k, wa_key *out)
{
	out->ival = k->ival;
	out->bytes = k->bytes;
	out->len = k->len;
	(void) e;
}

/*
 * The value of window [ws, ws + size_s) of key k, whose first slice (>= ws)
 * is at position pos: the accumulator of that slice itself when it is the
 * window's only one and finalizing leaves it as it was (final_reads),
 * else the window's slices merged into e->scratch.  Copying an
 * accumulator can cost more than the whole window (a generic aggregate's
 * state is copied through its combine function: an hll sketch's 128 kB),
 * so a tumbling window made of one slice is not copied where it need not
 * be.  The pointer is valid until the engine changes the key's slices.
 */
static inline const void *
merge_window(wa_engine *e, const keystate *k, uint32_t pos, wa_tick ws_end)
{
	uint32_t	n = 0;

	if (e->layout.final_reads && pos < k->slices.count &&
		wa_slices_index(&k->slices, e->stride, pos) < ws_end &&
		(pos + 1 == k->slices.count ||
		 wa_slices_index(&k->slices, e->stride, pos + 1) >= ws_end))
	{
		e->stats.merges++;
		return wa_slices_acc(&k->slices, e->stride, pos);
	}
	wa_acc_reset(&e->layout, e->scratch);
	for (; pos < k->slices.count; pos++, n++)
	{
		if (wa_slices_index(&k->slices, e->stride, pos) >= ws_end)
			break;
		wa_acc_merge(&e->layout, e->scratch,
					 wa_slices_acc(&k->slices, e->stride, pos));
	}
	e->stats.merges += n;
	return e->scratch;
}

/* Emit the pane of instance ws of spec j, whose value is acc. */
static inline void
emit_pane(wa_engine *e, const keystate *k, int j, wa_tick ws, const void *acc,
		  wa_pane_kind kind, int64_t revision)
{
	wa_pane		pane;

	wa_acc_finalize(&e->layout, acc, e->results);
	pane_key(e, k, &pane.key);
	pane.window = j;
	pane.start = slice_tick(e, ws);
	pane.end = slice_tick(e, ws + e->specs[j].size_s);
	pane.kind = kind;
	pane.revision = revision;
	pane.results = e->results;
	pane.acc = acc;
	if (kind == WA_PANE_ON_TIME)
		e->stats.panes_on_time++;
	else
		e->stats.panes_late++;
	e->emit(e->emit_arg, &pane);
}

/* Does instance [ws, ws + size_s) of spec sp hold data of key k? */
static inline bool
instance_has_data(const wa_engine *e, const keystate *k, const spec *sp,
				  wa_tick ws)
{
	uint32_t	pos = wa_slices_lower_bound(&k->slices, e->stride, ws);

	return pos < k->slices.count &&
		wa_slices_index(&k->slices, e->stride, pos) < ws + sp->size_s;
}

/*
 * The value of instance ws of spec j (which has a parent), merged into
 * e->scratch from the parent's kept instances, M of them starting at ws.
 * A parent instance that is not kept and holds data (it fired before the
 * ring existed, or was overwritten) makes us merge the instance from its
 * slices instead (merge_window).
 */
static inline const void *
merge_from_parent(wa_engine *e, keystate *k, int j, wa_tick ws)
{
	const spec *sp = &e->specs[j];
	const spec *pp = &e->specs[sp->parent];
	const wa_kept *ring = k->kept != NULL ? &k->kept[sp->parent] : NULL;
	wa_tick		ino = wa_kept_instance(ws, pp->phase, pp->slide_s);
	uint64_t	merges = 0;

	wa_acc_reset(&e->layout, e->scratch);
	for (int64_t i = 0; i < sp->m; i++)
	{
		wa_tick		ps = ws + (wa_tick) i * pp->slide_s;
		const void *v = ring != NULL ?
			wa_kept_get(ring, &e->layout, ino + i, ps) : NULL;

		if (v != NULL)
		{
			wa_acc_merge(&e->layout, e->scratch, v);
			merges++;
		}
		else if (instance_has_data(e, k, pp, ps))
		{
			e->stats.merges += merges;
			return merge_window(e, k,
								wa_slices_lower_bound(&k->slices, e->stride, ws),
								ws + sp->size_s);
		}
	}
	e->stats.merges += merges;
	return e->scratch;
}

/* ---------- functions one file of the engine gives the others ---------- */

/* wa_engine_plan.c */
extern int64_t wa_config_slice_width(const wa_config *config, int64_t *origin0);
extern void wa_specs_init(wa_engine *e, const wa_config *config);

/* wa_engine.c */
extern void wa_set_watermark(wa_engine *e, wa_tick wm);
extern keystate *wa_key_lookup_or_create(wa_engine *e, const wa_key *key);
extern void wa_key_reschedule(wa_engine *e, keystate *k);

/* wa_session.c */
extern void wa_sessions_init(wa_engine *e, const wa_config *config);
extern wa_ingest_result wa_sessions_ingest(wa_engine *e, const wa_key *key,
										   int64_t t, const wa_value *values);
extern void wa_sessions_advance(wa_engine *e);
extern void wa_sessions_emit_late(wa_engine *e);
extern void wa_sessions_reset(wa_engine *e);
extern void wa_sessions_restore_done(wa_engine *e);
extern uint64_t wa_sessions_pending_bytes(const wa_engine *e);
extern void wa_sessions_destroy(wa_engine *e);
extern void wa_sessions_live(const wa_engine *e, const wa_agg_layout *layout,
							 wa_emit_fn fn, void *arg, void *scratch,
							 wa_result *results);

/* The watermark at which a session window's key next needs a visit. */
static inline wa_tick
wa_sessions_deadline(const wa_engine *e)
{
	const wa_heap_node *top = wa_heap_top(&e->sessions.deadlines);

	return top != NULL ? top->deadline : WA_TICK_MAX;
}

/* wa_late.c */
extern void wa_late_mark(wa_engine *e, keystate *k, int j, wa_tick ws);
extern void wa_late_expire(wa_engine *e);

#endif							/* WA_ENGINE_INT_H */
