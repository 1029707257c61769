/*-------------------------------------------------------------------------
 *
 * wa_session.h
 *	  The state of session windows, private to the engine: per key and
 *	  session window, the ordered open sessions with their accumulators.
 *
 * Sessions need no slices: a session is one accumulator that events
 * update and that merges whole with its neighbours when an event bridges
 * the gap between them (wa_engine.h gives the rules; wa_session.c
 * implements them).  A key's state is one run per session window: its
 * open sessions sorted by start, which never overlap (so their ends are
 * sorted too), and the latest end among its closed sessions, which is all
 * that is left of them: an event at or before it is dropped.
 *
 * Keys wait in their own heap, by their next deadline: the earliest end
 * of a session that has not fired, or end + lateness of one that has
 * (it then closes), or, for a key left with closed sessions only, the
 * watermark at which their horizon no longer matters (horizon + gap +
 * lateness: every event at or before it is then too late anyway), when
 * the key is freed.
 *
 * src/engine/wa_session.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_SESSION_H
#define WA_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "wa_engine.h"
#include "wa_hashtab.h"
#include "wa_heap.h"
#include "wa_time.h"

/*
 * One session: the entry header, then the accumulator at
 * SESSION_HEADER bytes (a multiple of 8, as accumulators need).
 */
typedef struct session_entry
{
	wa_tick		start;			/* first event time */
	wa_tick		end;			/* last event time + gap */
	int64_t		revision;		/* panes emitted for it and for the
								 * sessions it replaced, the highest */
	bool		has_row;		/* its last pane stands (a merge retracts
								 * it) */
	bool		dirty;			/* due (end <= watermark), with data its
								 * last pane lacks */
} session_entry;

#define SESSION_HEADER ((uint32_t) ((sizeof(session_entry) + 7) & ~(size_t) 7))

/* Session windows per engine: a key's changed runs are bits of a uint64. */
#define WA_MAX_SESSION_WINDOWS 64

/* The sessions of one session window for one key. */
typedef struct session_run
{
	char	   *items;			/* count entries of wa_sessions.stride */
	uint32_t	count;
	uint32_t	capacity;
	wa_tick		closed_end;		/* latest end of a closed session, or
								 * WA_TICK_MIN */
} session_run;

/* A session of a key that waits for its late pane (wa_engine_emit_late). */
typedef struct session_dirty
{
	int			run;
	wa_tick		start;			/* its start when it was made dirty */
} session_dirty;

typedef struct session_key
{
	wa_heap_node node;			/* first: the heap hands back this pointer */
	uint64_t	hash;
	int64_t		ival;
	uint8_t    *bytes;
	uint32_t	len;
	int64_t		dirty_pos;		/* index in wa_sessions.dirty, or -1 */
	session_dirty *dirty;		/* its dirty sessions (repeats, and ones
								 * merged away since, are skipped) */
	int64_t		n_dirty;
	int64_t		dirty_capacity;
	int64_t		ckpt_pos;		/* index in wa_sessions.changed, or -1 */
	uint64_t	ckpt_changed;	/* runs changed since the last checkpoint */
	uint64_t	ckpt_saved;		/* runs whose last checkpoint held state */
	session_run runs[];			/* one per session window */
} session_key;

/* A freed key whose runs a checkpoint saved: they must be deleted. */
typedef struct session_gone
{
	int64_t		ival;
	uint8_t    *bytes;
	uint32_t	len;
	uint64_t	runs;			/* ckpt_saved when it was freed */
} session_gone;

typedef struct wa_sessions
{
	int			n;				/* session windows (0: none) */
	int			first_window;	/* pane number of the first: n_windows */
	int64_t    *gaps;
	int64_t    *max_times;
	uint32_t	stride;			/* SESSION_HEADER + accumulator */
	wa_hashtab	keys;
	wa_heap		deadlines;
	session_key **dirty;		/* keys with dirty sessions */
	int64_t		n_dirty;
	int64_t		dirty_capacity;
	session_key **changed;		/* keys changed since the last checkpoint */
	int64_t		n_changed;
	int64_t		changed_capacity;
	session_gone *gone;			/* keys freed since then */
	int64_t		n_gone;
	int64_t		gone_capacity;
	wa_session_image *images;	/* a checkpoint's scratch */
	uint32_t	images_capacity;
	wa_drop_reason last_drop;
} wa_sessions;

#endif							/* WA_SESSION_H */
