/*-------------------------------------------------------------------------
 *
 * wa_engine.h
 *	  The event-time windowing engine: slices, watermark, firing, allowed
 *	  lateness, late panes and dropped events.
 *
 * One engine instance aggregates one stream for a set of tumbling/hopping
 * window specifications.  Time is cut into slices of width g = gcd of every
 * size, slide and origin difference; each event updates exactly one
 * accumulator, that of its (key, slice), and a window is the merge of the
 * slices it covers.  All windows share the one slice store.
 *
 * Semantics (identical for the batch function and for pipelines):
 *
 *	- Events are ingested in arrival order.  The watermark starts at -inf and
 *	  after each event becomes max(watermark, max event time - bound).
 *	- A window [start, end) accepts an event iff end + lateness > the
 *	  watermark just before the event.  An accepted event joins a window that
 *	  has not fired, or refines one that has (a late pane).  An event no
 *	  window accepts is dropped: wa_engine_ingest says so and the caller sends
 *	  it to a dead-letter table.
 *	- A window fires (on-time pane, revision 1) when the watermark reaches its
 *	  end, provided it holds data.  Late events mark fired windows dirty;
 *	  wa_engine_emit_late emits one late pane per dirty window carrying the
 *	  full accumulated value and the next revision.  A dirty window about to
 *	  expire is emitted before its slices are freed.
 *	- A slice is freed once every window containing it has end + lateness <=
 *	  watermark; a key is freed with its last slice.
 *
 * Session windows (wa_session.c).  Per key, two events are in one session
 * of a session window with gap G iff a chain of the key's accepted events
 * links them with consecutive differences of at most G.  A session is the
 * window [first event, last event + G); an event at t touches a session
 * S iff S.start - G <= t <= S.end.  With the watermark wm just before the
 * event:
 *
 *	- A session is closed once end + lateness <= wm; closed sessions never
 *	  change, and a key's sessions never overlap.
 *	- The event is dropped as WA_DROP_TOO_LATE if the session it would open
 *	  alone is closed: t + G + lateness <= wm, even when it touches an open
 *	  session.  (Were it merged then, an open session could grow back, one
 *	  late event at a time, over a closed one, and every closed session
 *	  would have to be remembered for ever.)  Else it is dropped as
 *	  WA_DROP_SESSION_CLOSED if it touches a closed session of its key;
 *	  else it is accepted, and it and the sessions it touches become one.
 *	- So an event touches a closed session iff it is not too late and at
 *	  or before the latest end of its key's closed sessions: if it fell in
 *	  a gap before a closed session C instead, t + G < C.start and it
 *	  would be too late.  That end is all a key keeps of its closed
 *	  sessions, and only until it is G + lateness below the watermark.
 *	- A session fires when the watermark reaches its end: an on-time pane,
 *	  revision 1, or, if it replaced sessions that had panes, a late pane
 *	  with 1 + the highest revision among them.  A merge retracts every
 *	  replaced session that has a pane (a WA_PANE_RETRACT pane with its old
 *	  bounds, its values when replaced and its last revision), at once; an
 *	  event inside the bounds of a fired session makes it dirty, and
 *	  wa_engine_emit_late emits its next revision, as for fixed windows.
 *	- Sessions share no slices with fixed windows or with each other; they
 *	  share the watermark, the lateness and the arrival order.  An engine
 *	  may have only session windows.  Sessions are checkpointed on their
 *	  own (wa_engine_checkpoint_sessions).
 *
 * Firing work is proportional to the (key, window) pairs that hold data:
 * keys wait in a min-heap ordered by their next deadline (next window end
 * or next slice expiry), so keys with nothing due are never visited.
 *
 * Checkpoints.  The state that cannot be recomputed is the (key, slice)
 * accumulators and the time state (max event time, watermark); everything
 * else (key deadlines, two-stack caches, ...) is derived from them.  A
 * checkpoint reports only the accumulators changed since the previous one,
 * plus a slice number below which every persisted slice can be deleted, so
 * that its cost follows the stream, not the size of the state.  A restore
 * rebuilds an engine that continues as the checkpointed one would, except
 * for revision numbers of late panes and the statistics (see
 * wa_engine_restore_time).  A read-only live view reports the windows that
 * have not fired yet, with their current values.
 *
 * The engine knows nothing of PostgreSQL.  Memory comes from a caller-given
 * allocator, output goes to a caller-given callback.
 *
 * src/engine/wa_engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_ENGINE_H
#define WA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wa_agg.h"
#include "wa_allocator.h"
#include "wa_planner.h"
#include "wa_time.h"

/* A window specification, in ticks: [origin + k*slide, +size). */
typedef struct wa_window
{
	int64_t		size;			/* >= slide */
	int64_t		slide;			/* > 0 */
	int64_t		origin;			/* any tick a window starts at */
} wa_window;

/*
 * A session window (see "Session windows" above): a key's events at most
 * gap ticks apart form one session [first event, last event + gap).
 * max_time is the latest event time the window takes (so that no session
 * ends past max_time + gap, which the caller's type can still hold);
 * later events are not accepted by it (WA_DROP_OUT_OF_RANGE).
 */
typedef struct wa_session_window
{
	int64_t		gap;			/* > 0 */
	int64_t		max_time;
} wa_session_window;

/* A grouping key: an int64, or an opaque byte string. */
typedef struct wa_key
{
	int64_t		ival;			/* used when the engine has int64 keys */
	const uint8_t *bytes;		/* used when it has byte keys */
	uint32_t	len;
} wa_key;

typedef enum wa_pane_kind
{
	WA_PANE_ON_TIME,
	WA_PANE_LATE,
	WA_PANE_RETRACT				/* a session that a merge replaced: its
								 * last pane no longer stands */
} wa_pane_kind;

/* One emitted result row: the value of a (key, window) at some revision. */
typedef struct wa_pane
{
	wa_key		key;
	int			window;			/* index into the config's windows, then
								 * n_windows + index into its sessions */
	wa_tick		start;
	wa_tick		end;
	wa_pane_kind kind;
	int64_t		revision;		/* 1 for the first emission of the window;
								 * a retraction's is that of the pane it
								 * withdraws */
	const wa_result *results;	/* one per aggregate */
	const void *acc;			/* the merged accumulator (for tests) */
} wa_pane;

typedef void (*wa_emit_fn) (void *arg, const wa_pane *pane);

typedef struct wa_config
{
	int			n_windows;		/* fixed windows */
	const wa_window *windows;
	int			n_sessions;		/* session windows */
	const wa_session_window *sessions;
	int64_t		bound;			/* >= 0: out-of-orderness bound */
	int64_t		lateness;		/* >= 0: allowed lateness */
	int			n_aggs;
	const wa_agg_spec *aggs;
	const wa_agg_generic *generic;	/* required with WA_AGG_GENERIC
									 * aggregates (wa_agg.h); the engine
									 * keeps the pointer */
	bool		byte_keys;		/* keys are byte strings, not int64 */
	bool		merge_every_slice;	/* never use two-stack emission (for
									 * benchmarks and tests) */
	bool		share_windows;	/* compute windows from other windows'
								 * instances where the coverage plan (see
								 * wa_engine_plan) says it is cheaper */
	wa_emit_fn	emit;
	void	   *emit_arg;
	const wa_allocator *allocator;	/* NULL: the C library's (see
									 * wa_allocator.h) */
} wa_config;

/* What happened to an ingested event. */
typedef enum wa_ingest_result
{
	WA_INGEST_ACCEPTED,			/* every window containing it accepted it */
	WA_INGEST_PARTIAL,			/* some windows had closed for good */
	WA_INGEST_DROPPED			/* no window accepted it: dead letter */
} wa_ingest_result;

/* Why the last event that was not accepted everywhere was turned down. */
typedef enum wa_drop_reason
{
	WA_DROP_NONE,
	WA_DROP_TOO_LATE,			/* its windows, or the session it would
								 * form, closed: end + lateness <= wm */
	WA_DROP_SESSION_CLOSED,		/* at or before the end of a closed
								 * session of its key */
	WA_DROP_OUT_OF_RANGE		/* after a session window's max_time */
} wa_drop_reason;

typedef struct wa_stats
{
	uint64_t	events_in;
	uint64_t	events_partial;
	uint64_t	events_dropped;
	uint64_t	panes_on_time;
	uint64_t	panes_late;
	uint64_t	merges;			/* slice accumulators merged into panes */
	uint64_t	key_visits;		/* keys brought up to date by the watermark */
	uint64_t	n_keys;			/* live keys */
	uint64_t	n_slices;		/* live (key, slice) accumulators */
	uint64_t	n_late_windows; /* fired windows tracked for revisions */
	uint64_t	n_sessions;		/* open sessions */
	uint64_t	n_session_keys; /* keys that hold sessions or a horizon */
	uint64_t	panes_retracted;	/* sessions withdrawn by a merge */
	uint64_t	mem_bytes;		/* bytes held from the allocator */
	uint64_t	peak_mem_bytes; /* the coverage planning at creation
								 * included */
} wa_stats;

typedef struct wa_engine wa_engine;

/*
 * Check a configuration.  Returns NULL if it is usable, else a message that
 * names the offending field (a static string).
 */
extern const char *wa_config_check(const wa_config *config);

/* Create an engine; the config must pass wa_config_check. */
extern wa_engine *wa_engine_create(const wa_config *config);
extern void wa_engine_destroy(wa_engine *engine);

/*
 * The coverage plan for the config's windows (see wa_planner.h), in slice
 * units, with *slice_width set to the slice width g: requested windows
 * first, in order, then factor windows: what the engine runs.  Without
 * config->share_windows, every window is computed from slices; with it,
 * windows whose instances do not line up
 * (origins that differ modulo a slide), and windows whose sharing would
 * save less than 5% of the merges, are all computed from slices.
 * The plan's memory comes from config->allocator (NULL: the C library's,
 * see wa_allocator.h), and so does the scratch of the planning, given back
 * before the call returns.  Returns NULL, or the planner's message (the
 * plan is then empty); free with wa_plan_free.
 */
extern const char *wa_engine_plan(const wa_config *config, wa_plan *plan,
								  int64_t *slice_width);

/* Slice width g in ticks. */
extern int64_t wa_engine_slice_width(const wa_engine *engine);

/* Bytes of one slice accumulator (as passed to save and restore below). */
extern uint32_t wa_engine_acc_size(const wa_engine *engine);
/* An accumulator to and from its portable image (see wa_agg.h). */
extern void wa_engine_acc_to_portable(const wa_engine *engine, const void *acc,
									  uint8_t *out);
extern void wa_engine_acc_from_portable(const wa_engine *engine,
										const uint8_t *in, void *acc);
/*
 * Where an accumulator keeps generic aggregate agg's state (a checkpoint
 * saves and restores it), and the memory such states are counted in.
 */
extern void **wa_engine_acc_state(const wa_engine *engine, const void *acc,
								  int agg);
extern struct wa_mem *wa_engine_mem(wa_engine *engine);

/*
 * Ingest one event in arrival order: update its slice, mark late windows
 * dirty, advance the watermark and emit the on-time panes it fires.
 * values holds one entry per input the aggregates read.
 */
extern wa_ingest_result wa_engine_ingest(wa_engine *engine, const wa_key *key,
										 int64_t event_time,
										 const wa_value *values);

/* Emit one late pane per window dirtied since the last call. */
extern void wa_engine_emit_late(wa_engine *engine);

/*
 * Move the watermark forward to wm (no-op if it is not ahead), firing and
 * expiring as needed.  Used for idle-time advances.
 */
extern void wa_engine_advance(wa_engine *engine, wa_tick wm);

/*
 * End of input: emit late panes, fire every window, free every slice and
 * key.  Afterwards the engine holds exactly the memory it held when it was
 * created (wa_stats.mem_bytes), but for the keys of session windows that
 * a checkpoint had saved, whose deletions the next
 * wa_engine_checkpoint_sessions reports; every later event is dropped.
 */
extern void wa_engine_flush(wa_engine *engine);

/*
 * Time state that a checkpoint must persist (besides the slices).  wm is a
 * 128-bit tick: it is WA_TICK_MIN until the first event or advance and
 * WA_TICK_MAX after a flush, and max_ts - bound can fall below INT64_MIN.
 * max_ts means nothing while seen_event is false.
 */
typedef struct wa_time_state
{
	int64_t		max_ts;			/* max event time seen */
	bool		seen_event;
	wa_tick		wm;				/* watermark */
} wa_time_state;

typedef void (*wa_save_slice_fn) (void *arg, const wa_key *key,
								  int64_t slice, const void *acc,
								  uint32_t acc_size);

/*
 * Report every (key, slice) accumulator changed since the previous call
 * (or since creation or restore) that is still live, through save(); then
 * forget the changes.  The cost is proportional to what changed: the keys
 * that received events, and per key the live slices between the lowest and
 * the highest one it changed (a few, since events arrive nearly in order).
 * A slice that changed and then expired is not reported.
 *
 * *expire_below receives a slice number such that every live slice has an
 * index >= it and every slice below it has expired: the caller deletes its
 * persisted slices with slice < *expire_below.  (It stops at INT64_MAX,
 * so a persisted slice numbered INT64_MAX may survive the delete after it
 * expired; wa_engine_restore_slice ignores it, as it ignores every slice
 * that has expired by the restored watermark.)  *time receives the time
 * state.
 *
 * Sessions are checkpointed apart from the slices, by
 * wa_engine_checkpoint_sessions below; an engine with session windows
 * takes both, at the same moment.
 *
 * Take the checkpoint right after wa_engine_emit_late: late panes still
 * pending (windows dirtied since the last emit_late) are not part of the
 * checkpoint, and a restored engine would never emit them.  save() must
 * not call into the engine; key and acc are valid only during the call.
 */
extern void wa_engine_checkpoint(wa_engine *engine, wa_save_slice_fn save,
								 void *arg, int64_t *expire_below,
								 wa_time_state *time);

/*
 * Restore a checkpoint into a freshly created engine (same configuration,
 * no event ingested, no advance): wa_engine_restore_time first, then
 * wa_engine_restore_slice for every persisted slice, in any order, each
 * (key, slice) once (of repeats, one is kept), then wa_engine_restore_done,
 * before any other call.
 * acc_size must be wa_engine_acc_size() (a slice of another size is
 * ignored).  The engine takes over acc's generic states (see
 * wa_engine_acc_state): it keeps them, or releases them with a slice it
 * does not keep.  A checkpoint is read, not trusted: restore_slice returns
 * false, and keeps nothing, for an accumulator that events could not have
 * built (wa_acc_is_valid); the caller reports the checkpoint corrupt.
 * Restored slices are not "changed": the next checkpoint reports only
 * what changes after the restore.
 *
 * Afterwards the engine behaves as the checkpointed one would for every
 * later ingest, emit_late, advance and flush: the same ingest results and
 * watermarks, and the same panes with the same values (floats up to
 * rounding, since merge caches start empty), though panes emitted by one
 * call may come in another order.  Windows that fired before the
 * checkpoint do not fire again; windows that had not fired fire as usual.
 * Two exceptions:
 *
 *	- Revision counts of late panes are not persisted.  After a restore the
 *	  first late pane of a window that already held data reports revision 2
 *	  (1 if its only data is the late event), whatever the window had
 *	  emitted before; later ones count on from there.
 *	- Statistics restart from zero, except n_keys, n_slices and the memory
 *	  figures, which describe the restored state (n_late_windows counts
 *	  the windows refined since the restore).
 */
extern void wa_engine_restore_time(wa_engine *engine,
								   const wa_time_state *time);
extern bool wa_engine_restore_slice(wa_engine *engine, const wa_key *key,
									int64_t slice, void *acc,
									uint32_t acc_size);
/* After the last slice: rebuild key deadlines and per-key firing state. */
extern void wa_engine_restore_done(wa_engine *engine);

/*
 * A session as a checkpoint holds it (acc: wa_engine_acc_size() bytes).
 */
typedef struct wa_session_image
{
	wa_tick		start;
	wa_tick		end;
	int64_t		revision;		/* panes emitted for it, inherited too */
	bool		has_row;		/* its last pane stands */
	void	   *acc;			/* read only, when the engine reports it */
} wa_session_image;

/*
 * What a key holds in one session window (window: n_windows + the index
 * of its session window, as in panes): its open sessions, in start order,
 * and the latest end of its closed ones (WA_TICK_MIN: none).  n = 0 with
 * no horizon means the key holds nothing there any more: the caller
 * deletes what it saved for (key, window).  key, sessions and their
 * accumulators are valid only during the call.
 */
typedef void (*wa_save_sessions_fn) (void *arg, const wa_key *key, int window,
									 wa_tick horizon, int n,
									 const wa_session_image *sessions);

/*
 * Report every (key, session window) whose sessions or horizon changed
 * since the previous call (or since creation or restore), through save(),
 * in no particular order; then forget the changes.  Take it with
 * wa_engine_checkpoint, right after wa_engine_emit_late (so that no
 * session is due without its pane).  save() must not call into the
 * engine.
 */
extern void wa_engine_checkpoint_sessions(wa_engine *engine,
										  wa_save_sessions_fn save, void *arg);

/*
 * Restore what wa_engine_checkpoint_sessions reported last for one (key,
 * session window), after wa_engine_restore_time and before
 * wa_engine_restore_done, each (key, window) at most once.  The engine
 * takes over the accumulators' generic states (it keeps them, or releases
 * them when it returns false).  Returns false, and keeps nothing, for
 * sessions that events could not have left at the restored watermark (out
 * of order or overlapping, shorter than the gap, closed, due without a
 * pane, past max_time, an invalid accumulator, an unknown window): the
 * caller reports the checkpoint corrupt.  Revisions go on from the
 * restored ones.
 */
extern bool wa_engine_restore_sessions(wa_engine *engine, const wa_key *key,
									   int window, wa_tick horizon, int n,
									   const wa_session_image *sessions);

/*
 * Call fn for every window that holds data and has not fired yet (its end
 * is above the watermark), with its current merged value: kind
 * WA_PANE_ON_TIME, revision 0.  Windows whose data all came late are not
 * included (they count as fired).  Reads the engine without modifying it
 * in any way (no statistics, no caches), so it may run in another process
 * while the owner holds a lock that excludes writers.  scratch must hold
 * wa_engine_acc_size() bytes and results one wa_result per aggregate; the
 * pane points into both.  The order is unspecified but is the same for
 * the same engine state.  generic: the reader's own callbacks for generic
 * aggregates (NULL when there are none), called with a NULL wa_mem: the
 * scratch's states are the reader's, and the engine's are only read.
 */
extern void wa_engine_live(const wa_engine *engine,
						   const wa_agg_generic *generic, wa_emit_fn fn,
						   void *arg, void *scratch, wa_result *results);

extern wa_tick wa_engine_watermark(const wa_engine *engine);
/*
 * Why the last ingest that returned WA_INGEST_DROPPED or PARTIAL turned the
 * event down (for a partial event: the reason of the first window that
 * did, fixed windows before sessions).
 */
extern wa_drop_reason wa_engine_drop_reason(const wa_engine *engine);
extern void wa_engine_get_stats(const wa_engine *engine, wa_stats *stats);
extern const wa_agg_layout *wa_engine_layout(const wa_engine *engine);

#endif							/* WA_ENGINE_H */
