/*-------------------------------------------------------------------------
 *
 * test_sessions.c
 *	  Session windows against a brute-force sessionizer.
 *
 * The reference replays the rules of wa_engine.h event by event, in the
 * most direct way: it keeps every session of every key for ever, with the
 * list of its events, tests each one for "touches" and "closed" afresh
 * for every event, and computes values by folding a session's events
 * (reference.c's fold).  It knows nothing of the engine's horizon, of its
 * sorted runs or of deadlines.
 *
 * The engine's panes are replayed into a table keyed by (key, window,
 * start), as a pipeline's result table is: a retraction deletes its row,
 * a pane upserts one.  The checks:
 *
 *	- every event's outcome, and the drop reason, equal the reference's;
 *	- every few hundred events (late panes emitted after each event), the
 *	  table holds exactly the reference's sessions that the watermark
 *	  reached, with their values; the live view holds exactly its open
 *	  sessions the watermark has not reached;
 *	- after the flush, the table holds every reference session, whatever
 *	  the epoch (late panes emitted after 1 or after many events);
 *	- revisions: a row's panes count up by one; a new row that replaces
 *	  retracted ones has 1 + their highest revision; an on-time pane is
 *	  revision 1; no retraction is left without its replacement;
 *	- fixed windows in the same engine give the panes they give alone;
 *	- the stream holds what the case needs (merges, late, too late and
 *	  closed drops), and the engine gives back all its memory.
 *
 * test/engine/test_sessions.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MAX_SESSIONS 3
#define MAX_FIXED 2
#define N_SESSION_AGGS (N_AGGS + 2)

typedef struct sess_case
{
	const char *name;
	int			n_sessions;
	int64_t		gaps[MAX_SESSIONS];
	int			n_fixed;
	wa_window	fixed[MAX_FIXED];
	int64_t		bound;
	int64_t		lateness;
	int			n_keys;
	int64_t		t0;				/* where the stream's time starts */
	int64_t		step;			/* mean distance between events */
	uint64_t	seed;
	int64_t		n_events;		/* at full size */
	bool		byte_keys;
	bool		limit_time;		/* max_time halfway: some out of range */
	int			epoch;			/* the second run's emit_late period */
	bool		expect_drops;	/* too-late and closed drops both occur */
	bool		final_writes;	/* the generic aggregates' final function
								 * scribbles on its state */
} sess_case;

/* test_aggs, and two generic aggregates (a sum, and an idempotent max) */
static wa_agg_spec session_aggs[N_SESSION_AGGS];
static wa_agg_spec ref_aggs[N_SESSION_AGGS];

/* ---------- the stream ---------- */

typedef struct event
{
	int			key;
	int64_t		t;
	wa_value	v[N_INPUTS];
} event;

static int64_t
clamp128(__int128 t)
{
	if (t > INT64_MAX)
		return INT64_MAX;
	if (t < INT64_MIN)
		return INT64_MIN;
	return (int64_t) t;
}

/*
 * Bursts per key with idle stretches between them, events in order but for
 * the bound, events exactly one gap (and one more tick) after their key's
 * last, late events and too-late ones, and events that fall into the gap
 * between two sessions, which may bridge them.
 */
static event *
make_stream(const sess_case *c, int64_t n, rng *r)
{
	event	   *ev = calloc((size_t) n, sizeof(event));
	int64_t    *last = calloc((size_t) c->n_keys, sizeof(int64_t));
	__int128	base = c->t0;
	int64_t		gap = c->gaps[0];

	for (int k = 0; k < c->n_keys; k++)
		last[k] = c->t0;
	for (int64_t i = 0; i < n; i++)
	{
		event	   *e = &ev[i];
		uint64_t	pick = rng_below(r, 100);
		__int128	t;

		base += (__int128) rng_below(r, (uint64_t) c->step * 2 + 1);
		if (rng_below(r, 50) == 0)
			base += (__int128) gap * (1 + (int64_t) rng_below(r, 3));
		e->key = (int) rng_below(r, (uint64_t) c->n_keys);
		if (pick < 55)
			t = base - (__int128) rng_below(r, (uint64_t) c->bound + 1);
		else if (pick < 65)
			t = (__int128) last[e->key] + gap;
		else if (pick < 70)
			t = (__int128) last[e->key] + gap + 1;
		else if (pick < 85)
			t = base - (__int128) rng_below(r, (uint64_t) (c->lateness / 2 + 3 * gap + 1));
		else if (pick < 92)
			t = base - c->bound - c->lateness -
				(__int128) rng_below(r, (uint64_t) (8 * gap + 1));
		else
			t = base - (__int128) rng_below(r, (uint64_t) (c->bound + c->lateness + 4 * gap + 1));
		e->t = clamp128(t);
		last[e->key] = e->t;
		random_values(r, e->v);
	}
	free(last);
	return ev;
}

static void
encode_key(const sess_case *c, int key, wa_key *out, uint8_t *buf)
{
	memset(out, 0, sizeof(*out));
	if (!c->byte_keys)
	{
		out->ival = (int64_t) key * 7919 - 40000;
		return;
	}
	buf[0] = 'k';
	memcpy(buf + 1, &key, sizeof(int));
	for (int i = 0; i < key % 3; i++)
		buf[1 + sizeof(int) + i] = 'x';
	out->bytes = buf;
	out->len = 1 + sizeof(int) + key % 3;
}

static int
decode_key(const sess_case *c, const wa_key *k)
{
	int			key;

	if (!c->byte_keys)
		return (int) ((k->ival + 40000) / 7919);
	memcpy(&key, k->bytes + 1, sizeof(int));
	return key;
}

/* ---------- the reference: every session, kept for ever ---------- */

typedef struct rsession
{
	wa_tick		start;
	wa_tick		end;
	int64_t    *events;			/* indexes into the stream */
	int64_t		n;
	int64_t		cap;
	bool		gone;			/* merged into another */
} rsession;

typedef struct rrun
{
	rsession   *s;
	int64_t		n;
	int64_t		cap;
} rrun;

typedef struct sref
{
	const sess_case *c;
	int64_t		max_times[MAX_SESSIONS];
	rrun	   *runs;			/* key * n_sessions + spec */
	wa_tick		wm;
	int64_t		max_ts;
	bool		seen;
	int64_t		n_too_late;
	int64_t		n_closed;
	int64_t		n_merges;		/* events that joined two or more sessions */
	int64_t		n_late;			/* accepted into a session already due */
} sref;

static void
rsession_add(rsession *s, int64_t ev)
{
	if (s->n == s->cap)
	{
		s->cap = s->cap ? s->cap * 2 : 4;
		s->events = realloc(s->events, sizeof(int64_t) * (size_t) s->cap);
	}
	s->events[s->n++] = ev;
}

static rsession *
rrun_new(rrun *r)
{
	if (r->n == r->cap)
	{
		r->cap = r->cap ? r->cap * 2 : 8;
		r->s = realloc(r->s, sizeof(rsession) * (size_t) r->cap);
	}
	memset(&r->s[r->n], 0, sizeof(rsession));
	return &r->s[r->n++];
}

static bool
ref_closed(const sref *ref, const rsession *s)
{
	return s->end + ref->c->lateness <= ref->wm;
}

static bool
touches(const rsession *s, int64_t gap, int64_t t)
{
	return s->start - gap <= t && t <= s->end;
}

/* One session window's decision for event ev, and its effect. */
static wa_drop_reason
ref_session_event(sref *ref, int i, const event *events, int64_t ev)
{
	const sess_case *c = ref->c;
	rrun	   *run = &ref->runs[events[ev].key * c->n_sessions + i];
	int64_t		t = events[ev].t;
	int64_t		gap = c->gaps[i];
	rsession   *into = NULL;
	int			n_touched = 0;

	if (t > ref->max_times[i])
		return WA_DROP_OUT_OF_RANGE;
	if ((wa_tick) t + gap + c->lateness <= ref->wm)
		return WA_DROP_TOO_LATE;
	for (int64_t j = 0; j < run->n; j++)
	{
		rsession   *s = &run->s[j];

		if (!s->gone && touches(s, gap, t) && ref_closed(ref, s))
			return WA_DROP_SESSION_CLOSED;
	}

	for (int64_t j = 0; j < run->n; j++)
	{
		rsession   *s = &run->s[j];

		if (s->gone || !touches(s, gap, t))
			continue;
		n_touched++;
		if (into == NULL)
		{
			into = s;
			continue;
		}
		for (int64_t x = 0; x < s->n; x++)
			rsession_add(into, s->events[x]);
		if (s->start < into->start)
			into->start = s->start;
		if (s->end > into->end)
			into->end = s->end;
		s->gone = true;
	}
	if (into == NULL)
	{
		into = rrun_new(run);
		into->start = t;
		into->end = (wa_tick) t + gap;
	}
	if (n_touched > 1)
		ref->n_merges++;
	if (t < into->start)
		into->start = t;
	if ((wa_tick) t + gap > into->end)
		into->end = (wa_tick) t + gap;
	if (into->end <= ref->wm)
		ref->n_late++;
	rsession_add(into, ev);
	return WA_DROP_NONE;
}

/* The event's outcome over the session windows, its first drop reason. */
static wa_ingest_result
ref_event(sref *ref, const event *events, int64_t ev, wa_drop_reason *why)
{
	int			accepted = 0;

	*why = WA_DROP_NONE;
	for (int i = 0; i < ref->c->n_sessions; i++)
	{
		wa_drop_reason r = ref_session_event(ref, i, events, ev);

		if (r == WA_DROP_NONE)
			accepted++;
		else if (*why == WA_DROP_NONE)
			*why = r;
		if (r == WA_DROP_TOO_LATE)
			ref->n_too_late++;
		if (r == WA_DROP_SESSION_CLOSED)
			ref->n_closed++;
	}
	return accepted == ref->c->n_sessions ? WA_INGEST_ACCEPTED :
		accepted > 0 ? WA_INGEST_PARTIAL : WA_INGEST_DROPPED;
}

/* An event no window took does not move the watermark. */
static void
ref_advance(sref *ref, int64_t t)
{
	wa_tick		wm;

	if (!ref->seen || t > ref->max_ts)
		ref->max_ts = t;
	ref->seen = true;
	wm = (wa_tick) ref->max_ts - ref->c->bound;
	if (wm > ref->wm)
		ref->wm = wm;
}

static void
sref_free(sref *ref)
{
	for (int64_t r = 0; r < (int64_t) ref->c->n_keys * ref->c->n_sessions; r++)
	{
		for (int64_t j = 0; j < ref->runs[r].n; j++)
			free(ref->runs[r].s[j].events);
		free(ref->runs[r].s);
	}
	free(ref->runs);
}

/* ---------- the engine's panes, replayed into a table ---------- */

typedef struct trow
{
	int			key;
	int			window;
	wa_tick		start;
	wa_tick		end;
	int64_t		revision;
	bool		live;
	wa_result	res[N_SESSION_AGGS];
} trow;

typedef struct retraction
{
	int			key;
	int			window;
	wa_tick		start;
	wa_tick		end;
	int64_t		revision;
} retraction;

typedef struct table
{
	const sess_case *c;
	trow	   *rows;
	int64_t		n;
	int64_t		cap;
	int64_t    *index;			/* open addressing over rows, -1: empty */
	uint64_t	n_slots;
	int64_t		n_live;
	retraction *pending;
	int64_t		n_pending;
	int64_t		cap_pending;
	problem		probs[4];		/* revisions, retractions, overlaps, kinds */
} table;

enum
{
	P_REVISION,
	P_RETRACT,
	P_OVERLAP,
	P_KIND
};

static uint64_t
row_hash(int key, int window, wa_tick start)
{
	uint64_t	h = (uint64_t) key * UINT64_C(0x9e3779b97f4a7c15) ^
		(uint64_t) window * UINT64_C(0xbf58476d1ce4e5b9) ^
		(uint64_t) start ^ (uint64_t) (start >> 64);

	h ^= h >> 31;
	h *= UINT64_C(0x94d049bb133111eb);
	return h ^ (h >> 29);
}

/* The live row of (key, window, start); rows retracted stay, not live. */
static trow *
table_find(table *tb, int key, int window, wa_tick start)
{
	if (tb->n_slots == 0)
		return NULL;
	for (uint64_t i = row_hash(key, window, start) & (tb->n_slots - 1);;
		 i = (i + 1) & (tb->n_slots - 1))
	{
		trow	   *r;

		if (tb->index[i] < 0)
			return NULL;
		r = &tb->rows[tb->index[i]];
		if (r->live && r->key == key && r->window == window && r->start == start)
			return r;
	}
}

static void
table_index_put(table *tb, int64_t row)
{
	const trow *r = &tb->rows[row];
	uint64_t	i = row_hash(r->key, r->window, r->start) & (tb->n_slots - 1);

	while (tb->index[i] >= 0)
		i = (i + 1) & (tb->n_slots - 1);
	tb->index[i] = row;
}

/* A new row at the end, indexed. */
static trow *
table_add(table *tb, int key, int window, wa_tick start)
{
	trow	   *row;

	if (tb->n == tb->cap)
	{
		tb->cap = tb->cap ? tb->cap * 2 : 1024;
		tb->rows = realloc(tb->rows, sizeof(trow) * (size_t) tb->cap);
	}
	if ((uint64_t) (tb->n + 1) * 2 > tb->n_slots)
	{
		tb->n_slots = tb->n_slots ? tb->n_slots * 2 : 2048;
		free(tb->index);
		tb->index = malloc(sizeof(int64_t) * tb->n_slots);
		memset(tb->index, 0xff, sizeof(int64_t) * tb->n_slots);
		for (int64_t i = 0; i < tb->n; i++)
			table_index_put(tb, i);
	}
	row = &tb->rows[tb->n];
	memset(row, 0, sizeof(*row));
	row->key = key;
	row->window = window;
	row->start = start;
	row->live = true;
	table_index_put(tb, tb->n++);
	return row;
}

static void
table_emit(void *arg, const wa_pane *pane)
{
	table	   *tb = arg;
	const sess_case *c = tb->c;
	int			key = decode_key(c, &pane->key);
	trow	   *row = table_find(tb, key, pane->window, pane->start);

	if (pane->kind == WA_PANE_RETRACT)
	{
		retraction *p;

		if (row == NULL || row->end != pane->end || row->revision != pane->revision)
		{
			NOTE(tb, P_RETRACT, "key %d window %d [%s, %s) rev %" PRId64
				 " retracted but the table has %s", key, pane->window,
				 i128s(pane->start), i128s(pane->end), pane->revision,
				 row ? "another row" : "no row");
			return;
		}
		row->live = false;
		tb->n_live--;
		if (tb->n_pending == tb->cap_pending)
		{
			tb->cap_pending = tb->cap_pending ? tb->cap_pending * 2 : 64;
			tb->pending = realloc(tb->pending, sizeof(retraction) * (size_t) tb->cap_pending);
		}
		p = &tb->pending[tb->n_pending++];
		p->key = key;
		p->window = pane->window;
		p->start = pane->start;
		p->end = pane->end;
		p->revision = pane->revision;
		return;
	}
	if (pane->kind == WA_PANE_ON_TIME && pane->revision != 1)
		NOTE(tb, P_KIND, "on-time pane with revision %" PRId64, pane->revision);
	if (row != NULL)
	{
		if (row->end != pane->end)
			NOTE(tb, P_OVERLAP, "key %d window %d: [%s, %s) written over [%s, %s) "
				 "without a retraction", key, pane->window, i128s(pane->start),
				 i128s(pane->end), i128s(row->start), i128s(row->end));
		if (pane->revision != row->revision + 1)
			NOTE(tb, P_REVISION, "key %d [%s, %s): revision %" PRId64 " after %" PRId64,
				 key, i128s(pane->start), i128s(pane->end), pane->revision,
				 row->revision);
	}
	else
	{
		int64_t		want = 1;
		int64_t		kept = 0;

		/* the retracted rows it replaces: those within its bounds */
		for (int64_t i = 0; i < tb->n_pending; i++)
		{
			retraction *p = &tb->pending[i];

			if (p->key == key && p->window == pane->window &&
				p->start >= pane->start && p->end <= pane->end)
			{
				if (p->revision + 1 > want)
					want = p->revision + 1;
				continue;
			}
			tb->pending[kept++] = *p;
		}
		tb->n_pending = kept;
		if (pane->revision != want)
			NOTE(tb, P_REVISION, "key %d new row [%s, %s): revision %" PRId64
				 ", want %" PRId64, key, i128s(pane->start), i128s(pane->end),
				 pane->revision, want);
		row = table_add(tb, key, pane->window, pane->start);
		tb->n_live++;
	}
	row->end = pane->end;
	row->revision = pane->revision;
	memcpy(row->res, pane->results, sizeof(wa_result) * N_SESSION_AGGS);
}

/* Fixed windows' panes: the last value of each window. */
typedef struct fixed_log
{
	const sess_case *c;
	int			n_fixed;
	table		tb;				/* only its rows are used */
	table	   *sessions;		/* where session panes go, or NULL */
} fixed_log;

static void
fixed_upsert(table *tb, int key, const wa_pane *pane)
{
	trow	   *row = table_find(tb, key, pane->window, pane->start);

	if (row == NULL)
		row = table_add(tb, key, pane->window, pane->start);
	row->end = pane->end;
	row->revision = pane->revision;
	memcpy(row->res, pane->results, sizeof(wa_result) * N_SESSION_AGGS);
}

static void
split_emit(void *arg, const wa_pane *pane)
{
	fixed_log  *fl = arg;

	if (pane->window < fl->n_fixed)
		fixed_upsert(&fl->tb, decode_key(fl->c, &pane->key), pane);
	else if (fl->sessions != NULL)
		table_emit(fl->sessions, pane);
}

/*
 * Two panes' results, field by field where the aggregate (as the reference
 * computes it) sets one: finalizing leaves the other fields as they were.
 */
static bool
same_results(const wa_result *a, const wa_result *b)
{
	for (int x = 0; x < N_SESSION_AGGS; x++)
	{
		wa_agg_kind kind = ref_aggs[x].kind;

		if (kind != WA_AGG_COUNT_STAR && kind != WA_AGG_COUNT &&
			a[x].isnull != b[x].isnull)
			return false;
		if (a[x].isnull && kind != WA_AGG_COUNT_STAR && kind != WA_AGG_COUNT)
			continue;
		switch (kind)
		{
			case WA_AGG_COUNT_STAR:
			case WA_AGG_COUNT:
				if (a[x].count != b[x].count)
					return false;
				break;
			case WA_AGG_SUM_INT:
				if (a[x].sum != b[x].sum)
					return false;
				break;
			case WA_AGG_AVG_INT:
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				if (a[x].sum != b[x].sum || a[x].count != b[x].count ||
					(kind != WA_AGG_AVG_INT && a[x].i != b[x].i))
					return false;
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				if (a[x].i != b[x].i)
					return false;
				break;
			default:
				if (a[x].f != b[x].f)
					return false;
				break;
		}
	}
	return true;
}

/* ---------- comparing with the reference ---------- */

static ref_model *value_ref;	/* folds values and reads them back */

static bool
values_match(const rsession *s, const event *events, const wa_result *res,
			 char *buf, size_t len)
{
	ref_window	rw;
	ref_input	inputs[N_INPUTS];

	ref_window_init(value_ref, &rw, inputs);
	for (int64_t x = 0; x < s->n; x++)
		ref_fold(value_ref, &rw, events[s->events[x]].v);
	return results_match(value_ref, &rw, ref_aggs, N_SESSION_AGGS, res, buf, len);
}

/*
 * The table against the reference's sessions that the watermark reached
 * (all of them after a flush): the same rows, the same values.
 */
static bool
table_matches(const sref *ref, const table *tb, const event *events,
			  bool all, char *msg, size_t len)
{
	const sess_case *c = ref->c;
	int64_t		want = 0;

	for (int k = 0; k < c->n_keys; k++)
		for (int i = 0; i < c->n_sessions; i++)
		{
			const rrun *run = &ref->runs[k * c->n_sessions + i];

			for (int64_t j = 0; j < run->n; j++)
			{
				const rsession *s = &run->s[j];
				trow	   *row;
				char		why[512];

				if (s->gone || (!all && s->end > ref->wm))
					continue;
				want++;
				row = table_find((table *) tb, k, c->n_fixed + i, s->start);
				if (row == NULL || row->end != s->end)
				{
					snprintf(msg, len, "key %d session %d [%s, %s): %s", k, i,
							 i128s(s->start), i128s(s->end),
							 row ? "the row has another end" : "no row");
					return false;
				}
				if (!values_match(s, events, row->res, why, sizeof(why)))
				{
					snprintf(msg, len, "key %d session %d [%s, %s): %s", k, i,
							 i128s(s->start), i128s(s->end), why);
					return false;
				}
			}
		}
	if (want != tb->n_live)
	{
		snprintf(msg, len, "%" PRId64 " rows, want %" PRId64, tb->n_live, want);
		return false;
	}
	return true;
}

/* The live view: exactly the open sessions the watermark has not reached. */
typedef struct live_ctx
{
	const sref *ref;
	const event *events;
	int64_t		n;
	int64_t		wrong;
	char		first[512];
} live_ctx;

static void
live_emit(void *arg, const wa_pane *pane)
{
	live_ctx   *lc = arg;
	const sess_case *c = lc->ref->c;
	int			key = decode_key(c, &pane->key);
	int			i = pane->window - c->n_fixed;
	const rrun *run;
	char		why[512];

	if (i < 0)
		return;
	lc->n++;
	run = &lc->ref->runs[key * c->n_sessions + i];
	for (int64_t j = 0; j < run->n; j++)
	{
		const rsession *s = &run->s[j];

		if (!s->gone && s->start == pane->start)
		{
			if (s->end != pane->end || s->end <= lc->ref->wm ||
				!values_match(s, lc->events, pane->results, why, sizeof(why)))
			{
				if (lc->wrong++ == 0)
					snprintf(lc->first, sizeof(lc->first),
							 "key %d [%s, %s) differs", key, i128s(pane->start),
							 i128s(pane->end));
			}
			return;
		}
	}
	if (lc->wrong++ == 0)
		snprintf(lc->first, sizeof(lc->first), "key %d [%s, %s) is no session",
				 key, i128s(pane->start), i128s(pane->end));
}

static int64_t
open_unreached(const sref *ref)
{
	const sess_case *c = ref->c;
	int64_t		n = 0;

	for (int64_t r = 0; r < (int64_t) c->n_keys * c->n_sessions; r++)
		for (int64_t j = 0; j < ref->runs[r].n; j++)
			if (!ref->runs[r].s[j].gone && ref->runs[r].s[j].end > ref->wm)
				n++;
	return n;
}

/* ---------- checkpoints: a store as a pipeline keeps one ---------- */

typedef struct saved_slice
{
	int			key;
	int64_t		slice;
	void	   *acc;
} saved_slice;

typedef struct saved_run
{
	bool		used;
	wa_tick		horizon;
	int			n;
	wa_session_image *images;
} saved_run;

typedef struct store
{
	const sess_case *c;
	const wa_agg_generic *generic;
	uint32_t	acc_size;
	saved_slice *slices;
	int64_t		n_slices;
	int64_t		cap_slices;
	saved_run  *runs;			/* key * n_sessions + session window */
	size_t		state_at[N_SESSION_AGGS];	/* generic states' offsets */
	int64_t		n_saves;
	wa_time_state time;
} store;

/* The generic aggregates of session_aggs: the last two. */
#define FIRST_GENERIC N_AGGS

/*
 * A copy of an accumulator with generic states of its own, made with
 * owner's memory (NULL: the C library's, as a pipeline's table holds them
 * apart from any engine).
 */
static void **
state_slot(const store *st, void *acc, int a)
{
	return (void **) ((char *) acc + st->state_at[a]);
}

static void *
copy_acc(const store *st, struct wa_mem *owner, const void *src)
{
	void	   *dst = malloc(st->acc_size);

	memcpy(dst, src, st->acc_size);
	for (int a = FIRST_GENERIC; a < N_SESSION_AGGS; a++)
	{
		void	  **slot = state_slot(st, dst, a);
		void	   *copy = NULL;

		if (*slot != NULL)
			st->generic->copy(st->generic->arg, owner, a, &copy, *slot);
		*slot = copy;
	}
	return dst;
}

static void
free_acc(const store *st, void *acc)
{
	for (int a = FIRST_GENERIC; a < N_SESSION_AGGS; a++)
	{
		void	  **slot = state_slot(st, acc, a);

		if (*slot != NULL)
			st->generic->release(st->generic->arg, NULL, a, *slot);
	}
	free(acc);
}

static void
store_slice(void *arg, const wa_key *key, int64_t slice, const void *acc,
			uint32_t acc_size)
{
	store	   *st = arg;
	int			k = decode_key(st->c, key);

	(void) acc_size;
	for (int64_t i = 0; i < st->n_slices; i++)
		if (st->slices[i].key == k && st->slices[i].slice == slice)
		{
			free_acc(st, st->slices[i].acc);
			st->slices[i].acc = copy_acc(st, NULL, acc);
			return;
		}
	if (st->n_slices == st->cap_slices)
	{
		st->cap_slices = st->cap_slices ? st->cap_slices * 2 : 256;
		st->slices = realloc(st->slices, sizeof(saved_slice) * (size_t) st->cap_slices);
	}
	st->slices[st->n_slices].key = k;
	st->slices[st->n_slices].slice = slice;
	st->slices[st->n_slices++].acc = copy_acc(st, NULL, acc);
}

static void
run_clear(const store *st, saved_run *r)
{
	for (int j = 0; j < r->n; j++)
		free_acc(st, r->images[j].acc);
	free(r->images);
	memset(r, 0, sizeof(*r));
}

static void
store_sessions(void *arg, const wa_key *key, int window, wa_tick horizon, int n,
			   const wa_session_image *images)
{
	store	   *st = arg;
	saved_run  *r = &st->runs[decode_key(st->c, key) * st->c->n_sessions +
							  window - st->c->n_fixed];

	st->n_saves++;
	run_clear(st, r);
	if (n == 0 && horizon == WA_TICK_MIN)
		return;
	r->used = true;
	r->horizon = horizon;
	r->n = n;
	r->images = calloc((size_t) n + 1, sizeof(wa_session_image));
	for (int j = 0; j < n; j++)
	{
		r->images[j] = images[j];
		r->images[j].acc = copy_acc(st, NULL, images[j].acc);
	}
}

/* Checkpoint e into the store (right after emit_late). */
static void
store_checkpoint(store *st, wa_engine *e)
{
	int64_t		expire_below;
	int64_t		kept = 0;

	wa_engine_checkpoint(e, store_slice, st, &expire_below, &st->time);
	wa_engine_checkpoint_sessions(e, store_sessions, st);
	for (int64_t i = 0; i < st->n_slices; i++)
	{
		if (st->slices[i].slice < expire_below)
			free_acc(st, st->slices[i].acc);
		else
			st->slices[kept++] = st->slices[i];
	}
	st->n_slices = kept;
}

/* A new engine with what the store holds; false if it refused any of it. */
static bool
store_restore(store *st, wa_engine *e)
{
	uint8_t		kbuf[16];
	bool		ok = true;

	wa_engine_restore_time(e, &st->time);
	for (int64_t i = 0; i < st->n_slices; i++)
	{
		wa_key		key;
		void	   *acc = copy_acc(st, wa_engine_mem(e), st->slices[i].acc);

		encode_key(st->c, st->slices[i].key, &key, kbuf);
		ok &= wa_engine_restore_slice(e, &key, st->slices[i].slice, acc,
									  st->acc_size);
		free(acc);
	}
	for (int k = 0; k < st->c->n_keys; k++)
		for (int i = 0; i < st->c->n_sessions; i++)
		{
			saved_run  *r = &st->runs[k * st->c->n_sessions + i];
			wa_session_image *images;
			wa_key		key;

			if (!r->used)
				continue;
			images = calloc((size_t) r->n + 1, sizeof(wa_session_image));
			for (int j = 0; j < r->n; j++)
			{
				images[j] = r->images[j];
				images[j].acc = copy_acc(st, wa_engine_mem(e), r->images[j].acc);
			}
			encode_key(st->c, k, &key, kbuf);
			ok &= wa_engine_restore_sessions(e, &key, st->c->n_fixed + i,
											 r->horizon, r->n, images);
			for (int j = 0; j < r->n; j++)
				free(images[j].acc);
			free(images);
		}
	wa_engine_restore_done(e);
	return ok;
}

static void
store_free(store *st)
{
	for (int64_t i = 0; i < st->n_slices; i++)
		free_acc(st, st->slices[i].acc);
	free(st->slices);
	for (int64_t r = 0; r < (int64_t) st->c->n_keys * st->c->n_sessions; r++)
		run_clear(st, &st->runs[r]);
	free(st->runs);
}

/* ---------- one case ---------- */

/*
 * A final function that writes to the state it is given (as tdigest's
 * compact theirs): the value it returns is right, the state is spoiled
 * for whoever reads it next.
 */
static void
scribbling_final(void *arg, int agg, const void *state, wa_result *result)
{
	static const wa_agg_generic *plain;
	static wa_agg_generic plain_callbacks;

	if (plain == NULL)
	{
		test_generic_init(&plain_callbacks, session_aggs);
		plain = &plain_callbacks;
	}
	plain->final(arg, agg, state, result);
	if (state != NULL)
		memset((void *) state, 0x5a, sizeof(wa_int128));
}

static wa_engine *
make_engine(const sess_case *c, bool with_sessions, bool with_fixed,
			const wa_session_window *sw, fixed_log *fl, wa_allocator *al,
			wa_agg_generic *generic)
{
	wa_config	cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = with_fixed ? c->n_fixed : 0;
	cfg.windows = c->fixed;
	cfg.n_sessions = with_sessions ? c->n_sessions : 0;
	cfg.sessions = sw;
	cfg.bound = c->bound;
	cfg.lateness = c->lateness;
	cfg.n_aggs = N_SESSION_AGGS;
	cfg.aggs = session_aggs;
	test_generic_init(generic, session_aggs);
	if (c->final_writes)
	{
		generic->final = scribbling_final;
		generic->final_writes = true;
	}
	cfg.generic = generic;
	cfg.byte_keys = c->byte_keys;
	cfg.emit = split_emit;
	cfg.emit_arg = fl;
	cfg.allocator = al;
	cfg.share_windows = true;
	if (wa_config_check(&cfg) != NULL)
	{
		fprintf(stderr, "%s: %s\n", c->name, wa_config_check(&cfg));
		abort();
	}
	return wa_engine_create(&cfg);
}

static void
check_problems(const sess_case *c, const table *tb, const char *run)
{
	static const char *what[] = {"revisions", "retractions", "no overlapping rows",
	"on-time panes are revision 1"};
	char		name[256];

	for (int p = 0; p < 4; p++)
	{
		snprintf(name, sizeof(name), "%s (%s): %s", c->name, run, what[p]);
		check(tb->probs[p].count == 0, name, "%" PRId64 " problems, first: %s",
			  tb->probs[p].count, tb->probs[p].first);
	}
	snprintf(name, sizeof(name), "%s (%s): every retracted row was replaced",
			 c->name, run);
	check(tb->n_pending == 0, name, "%" PRId64 " retractions pending",
		  tb->n_pending);
}

/* Empty tables for a run: session panes into tb, fixed ones into fl. */
static void
tables_reset(const sess_case *c, table *tb, fixed_log *fl)
{
	free(tb->rows);
	free(tb->index);
	free(tb->pending);
	free(fl->tb.rows);
	free(fl->tb.index);
	memset(tb, 0, sizeof(*tb));
	tb->c = c;
	memset(fl, 0, sizeof(*fl));
	fl->c = c;
	fl->n_fixed = c->n_fixed;
	fl->sessions = tb;
}

static void
run_case(const sess_case *c)
{
	int64_t		n = scaled(c->n_events);
	rng			r = {c->seed};
	event	   *events = make_stream(c, n, &r);
	wa_session_window sw[MAX_SESSIONS];
	wa_ingest_result *fixed_outcome = calloc((size_t) n, sizeof(wa_ingest_result));
	sref		ref;
	table		tb;
	fixed_log	fl;
	fixed_log	alone;
	counting_alloc ca;
	wa_allocator al;
	wa_agg_generic generic;
	wa_engine  *e;
	uint8_t		kbuf[16];
	char		name[256];
	char		msg[1024] = "";
	int64_t		bad_outcome = 0;
	int64_t		bad_reason = 0;
	int64_t		bad_table = 0;
	int64_t		bad_live = 0;
	char		first_outcome[512] = "";
	char		first_table[1100] = "";
	char		first_live[600] = "";
	int64_t		every = n / 40 + 1;

	memset(&ref, 0, sizeof(ref));
	ref.c = c;
	ref.wm = WA_TICK_MIN;
	ref.runs = calloc((size_t) c->n_keys * c->n_sessions, sizeof(rrun));
	for (int i = 0; i < c->n_sessions; i++)
	{
		sw[i].gap = c->gaps[i];
		sw[i].max_time = c->limit_time ? c->t0 + c->step * (n / 2) : INT64_MAX;
		ref.max_times[i] = sw[i].max_time;
	}

	/* the fixed windows alone: their panes, and each event's outcome */
	memset(&alone, 0, sizeof(alone));
	alone.c = c;
	alone.n_fixed = c->n_fixed;
	if (c->n_fixed > 0)
	{
		ca_setup(&ca, &al);
		e = make_engine(c, false, true, sw, &alone, &al, &generic);
		for (int64_t i = 0; i < n; i++)
		{
			wa_key		key;

			encode_key(c, events[i].key, &key, kbuf);
			fixed_outcome[i] = wa_engine_ingest(e, &key, events[i].t, events[i].v);
			wa_engine_emit_late(e);
		}
		wa_engine_flush(e);
		wa_engine_destroy(e);
	}

	/* run 1: late panes after every event, compared as it goes */
	memset(&tb, 0, sizeof(tb));
	memset(&fl, 0, sizeof(fl));
	tables_reset(c, &tb, &fl);
	ca_setup(&ca, &al);
	e = make_engine(c, true, true, sw, &fl, &al, &generic);
	for (int64_t i = 0; i < n; i++)
	{
		wa_key		key;
		wa_drop_reason want_why;
		wa_ingest_result want = ref_event(&ref, events, i, &want_why);
		wa_ingest_result got;

		if (c->n_fixed > 0)
		{
			if (fixed_outcome[i] != WA_INGEST_ACCEPTED)
				want_why = WA_DROP_TOO_LATE;
			want = want == fixed_outcome[i] ? want : WA_INGEST_PARTIAL;
		}
		encode_key(c, events[i].key, &key, kbuf);
		got = wa_engine_ingest(e, &key, events[i].t, events[i].v);
		if (got != want && bad_outcome++ == 0)
			snprintf(first_outcome, sizeof(first_outcome),
					 "event %" PRId64 " (key %d, t %" PRId64 "): %s, want %s",
					 i, events[i].key, events[i].t, outcome_name(got),
					 outcome_name(want));
		if (got != WA_INGEST_ACCEPTED && wa_engine_drop_reason(e) != want_why)
			bad_reason++;
		if (want != WA_INGEST_DROPPED)
			ref_advance(&ref, events[i].t);
		wa_engine_emit_late(e);

		if ((i + 1) % every == 0 || i + 1 == n)
		{
			live_ctx	lc;
			void	   *scratch = malloc(wa_engine_acc_size(e));
			wa_result	results[N_SESSION_AGGS];

			if (!table_matches(&ref, &tb, events, false, msg, sizeof(msg)) &&
				bad_table++ == 0)
				snprintf(first_table, sizeof(first_table), "after event %" PRId64
						 ": %s", i, msg);
			memset(&lc, 0, sizeof(lc));
			lc.ref = &ref;
			lc.events = events;
			wa_engine_live(e, &generic, live_emit, &lc, scratch, results);
			if (lc.wrong == 0 && lc.n != open_unreached(&ref))
			{
				lc.wrong++;
				snprintf(lc.first, sizeof(lc.first), "%" PRId64 " live sessions, want %"
						 PRId64, lc.n, open_unreached(&ref));
			}
			if (lc.wrong > 0 && bad_live++ == 0)
				snprintf(first_live, sizeof(first_live), "after event %" PRId64
						 ": %s", i, lc.first);
			free(scratch);
		}
	}
	snprintf(name, sizeof(name), "%s: outcomes", c->name);
	check(bad_outcome == 0, name, "%" PRId64 " wrong, first: %s", bad_outcome,
		  first_outcome);
	snprintf(name, sizeof(name), "%s: drop reasons", c->name);
	check(bad_reason == 0, name, "%" PRId64 " wrong", bad_reason);
	snprintf(name, sizeof(name), "%s: table holds the sessions reached, as it goes",
			 c->name);
	check(bad_table == 0, name, "%" PRId64 " wrong, first: %s", bad_table,
		  first_table);
	snprintf(name, sizeof(name), "%s: live view holds the open sessions", c->name);
	check(bad_live == 0, name, "%" PRId64 " wrong, first: %s", bad_live, first_live);

	wa_engine_flush(e);
	snprintf(name, sizeof(name), "%s: after the flush, every session", c->name);
	check(table_matches(&ref, &tb, events, true, msg, sizeof(msg)), name, "%s", msg);
	check_problems(c, &tb, "epoch 1");
	if (c->n_fixed > 0)
	{
		int64_t		differ = 0;

		for (int64_t i = 0; i < alone.tb.n; i++)
		{
			trow	   *a = &alone.tb.rows[i];
			trow	   *b = table_find(&fl.tb, a->key, a->window, a->start);

			if (b == NULL || b->end != a->end || !same_results(a->res, b->res))
				differ++;
		}
		snprintf(name, sizeof(name), "%s: fixed windows as without sessions", c->name);
		check(differ == 0 && alone.tb.n == fl.tb.n, name,
			  "%" PRId64 " differ; %" PRId64 " windows alone, %" PRId64 " with sessions",
			  differ, alone.tb.n, fl.tb.n);
	}
	{
		wa_stats	st;

		wa_engine_get_stats(e, &st);
		/* without lateness, a session the watermark reached is closed */
		bool		late = c->lateness > 0;

		snprintf(name, sizeof(name), "%s: stream has merges%s%s", c->name,
				 late ? ", late events, retractions" : "",
				 c->expect_drops ? ", too-late and closed drops" : "");
		/*
		 * At reduced sizes (valgrind) a stream may be too short to show
		 * every kind of event; the property is the generator's.
		 */
		check(opt_int("WA_TEST_EVENTS", 100000) < 100000 ||
			  (ref.n_merges > 0 &&
			   (!late || (ref.n_late > 0 && st.panes_retracted > 0)) &&
			   (!c->expect_drops || (ref.n_too_late > 0 && ref.n_closed > 0))),
			  name, "merges %" PRId64 ", late %" PRId64 ", retracted %" PRIu64
			  ", too late %" PRId64 ", closed %" PRId64, ref.n_merges, ref.n_late,
			  st.panes_retracted, ref.n_too_late, ref.n_closed);
	}
	wa_engine_destroy(e);
	snprintf(name, sizeof(name), "%s: memory given back", c->name);
	check(ca.live_bytes == 0 && ca.errors == 0, name, "%" PRId64 " bytes held, %s",
		  ca.live_bytes, ca.first_error);

	/* run 2: late panes only every epoch events: the same final table */
	tables_reset(c, &tb, &fl);
	ca_setup(&ca, &al);
	e = make_engine(c, true, true, sw, &fl, &al, &generic);
	for (int64_t i = 0; i < n; i++)
	{
		wa_key		key;

		encode_key(c, events[i].key, &key, kbuf);
		(void) wa_engine_ingest(e, &key, events[i].t, events[i].v);
		if ((i + 1) % c->epoch == 0)
			wa_engine_emit_late(e);
	}
	wa_engine_flush(e);
	wa_engine_destroy(e);
	snprintf(name, sizeof(name), "%s: epochs of %d events, the same sessions",
			 c->name, c->epoch);
	check(table_matches(&ref, &tb, events, true, msg, sizeof(msg)), name, "%s", msg);
	check_problems(c, &tb, "epochs");

	/*
	 * run 3: a checkpoint after every epoch, and every few epochs the
	 * engine thrown away and restored from the checkpoints, as a pipeline's
	 * worker is after a crash: the same final sessions, revisions going on
	 */
	{
		store		st;
		bool		restored = true;
		int64_t		n_restores = 0;
		int64_t		crash_every = (n / 5 / c->epoch + 1) * c->epoch;

		tables_reset(c, &tb, &fl);
		memset(&st, 0, sizeof(st));
		st.c = c;
		st.generic = &generic;
		st.runs = calloc((size_t) c->n_keys * c->n_sessions, sizeof(saved_run));
		ca_setup(&ca, &al);
		e = make_engine(c, true, true, sw, &fl, &al, &generic);
		st.acc_size = wa_engine_acc_size(e);
		{
			char	   *base = malloc(st.acc_size);

			for (int a = FIRST_GENERIC; a < N_SESSION_AGGS; a++)
				st.state_at[a] = (size_t) ((char *) wa_engine_acc_state(e, base, a) - base);
			free(base);
		}
		for (int64_t i = 0; i < n; i++)
		{
			wa_key		key;

			encode_key(c, events[i].key, &key, kbuf);
			(void) wa_engine_ingest(e, &key, events[i].t, events[i].v);
			if ((i + 1) % c->epoch != 0)
				continue;
			wa_engine_emit_late(e);
			store_checkpoint(&st, e);
			if ((i + 1) % crash_every == 0)
			{
				wa_engine_destroy(e);
				e = make_engine(c, true, true, sw, &fl, &al, &generic);
				restored &= store_restore(&st, e);
				n_restores++;
			}
		}
		wa_engine_flush(e);
		/* the flush freed every key: the next checkpoint deletes them all */
		store_checkpoint(&st, e);
		{
			int64_t		left = 0;

			for (int64_t r = 0; r < (int64_t) c->n_keys * c->n_sessions; r++)
				left += st.runs[r].used;
			snprintf(name, sizeof(name), "%s: after the flush, a checkpoint deletes "
					 "every key's sessions", c->name);
			check(left == 0, name, "%" PRId64 " (key, window) pairs left", left);
		}
		wa_engine_destroy(e);
		snprintf(name, sizeof(name), "%s: restored %" PRId64 " times from checkpoints, "
				 "the same sessions", c->name, n_restores);
		check(restored && n_restores > 0 &&
			  table_matches(&ref, &tb, events, true, msg, sizeof(msg)), name,
			  "%s%s", restored ? "" : "a restore refused a checkpoint; ", msg);
		check_problems(c, &tb, "restored");
		snprintf(name, sizeof(name), "%s: checkpoints report sessions", c->name);
		check(st.n_saves > 0, name, "%" PRId64 " saves", st.n_saves);
		store_free(&st);
		snprintf(name, sizeof(name), "%s: memory given back after restores", c->name);
		check(ca.live_bytes == 0 && ca.errors == 0, name, "%" PRId64 " bytes held, %s",
			  ca.live_bytes, ca.first_error);
	}

	tables_reset(c, &tb, &fl);
	free(alone.tb.rows);
	free(alone.tb.index);
	sref_free(&ref);
	free(fixed_outcome);
	free(events);
}

/*
 * Gaps, bounds and lateness are chosen so that sessions merge often: the
 * stream's step is a fraction of the gap.
 */
static const sess_case cases[] = {
	{"one session window", 1, {10}, 0, {{0, 0, 0}}, 3, 0, 5, 0, 3, 101, 20000,
	false, false, 7, true, false},
	{"lateness, many keys", 1, {10}, 0, {{0, 0, 0}}, 5, 30, 60, 1000, 1, 102,
	30000, false, false, 50, true, false},
	{"two gaps with fixed windows", 2, {6, 25}, 2, {{10, 10, 0}, {60, 10, 0}},
	4, 20, 8, -5000, 2, 103, 30000, false, false, 13, true, false},
	{"byte keys, gap 1", 1, {1}, 0, {{0, 0, 0}}, 0, 2, 4, 0, 1, 104, 20000,
	true, false, 3, false, false},
	{"negative times near INT64_MIN", 1, {1000}, 1, {{500, 100, 7}}, 200,
	700, 20, INT64_MIN + 5, 150, 105, 20000, false, false, 9, true, false},
	{"near INT64_MAX", 2, {1000, 4000}, 0, {{0, 0, 0}}, 100, 2500, 10,
	INT64_MAX - 50000000, 300, 106, 20000, false, false, 11, true, false},
	{"out of range past max_time", 1, {20}, 0, {{0, 0, 0}}, 5, 40, 30, 0, 4,
	107, 20000, false, true, 17, true, false},
	{"huge gap and lateness", 1, {INT64_MAX / 8}, 0, {{0, 0, 0}}, 10,
	INT64_MAX / 4, 3, 0, INT64_MAX / 64, 108, 5000, false, false, 5, false, false},
	{"a final function that writes to its state", 2, {10, 40}, 1, {{20, 20, 0}},
	5, 60, 12, 0, 2, 109, 20000, false, false, 7, true, true},
};

/*
 * A restore refuses sessions events could not have left: one with a pane
 * that the watermark has not reached (before which a session without one
 * would never fire), or one the watermark reached without a pane.  The
 * same sessions with a pane once the watermark is past their end, or
 * without one before, are taken.
 */
static void
test_restore_refusals(void)
{
	static const sess_case c = {"refusals", 1, {10}, 0, {{0, 0, 0}}, 0, 100, 1,
	0, 1, 1, 1, false, false, 1, false, false};
	wa_session_window sw = {10, INT64_MAX};
	struct
	{
		wa_tick		wm;
		bool		second_has_row;
		bool		want;
	}			tries[] = {{5, true, false}, {5, false, true}, {25, true, false},
	{30, true, true}, {35, false, false}};

	for (size_t x = 0; x < sizeof(tries) / sizeof(tries[0]); x++)
	{
		counting_alloc ca;
		wa_allocator al;
		wa_agg_generic generic;
		fixed_log	fl;
		table		tb;
		wa_time_state time = {30, true, tries[x].wm};
		wa_session_image images[2];
		wa_engine  *e;
		wa_key		key = {0, NULL, 0};
		char		name[160];
		bool		got;

		memset(&tb, 0, sizeof(tb));
		memset(&fl, 0, sizeof(fl));
		tables_reset(&c, &tb, &fl);
		ca_setup(&ca, &al);
		e = make_engine(&c, true, false, &sw, &fl, &al, &generic);
		wa_engine_restore_time(e, &time);
		for (int j = 0; j < 2; j++)
		{
			images[j].start = j == 0 ? 0 : 20;
			images[j].end = images[j].start + 10;
			images[j].acc = malloc(wa_engine_acc_size(e));
			memset(images[j].acc, 0, wa_engine_acc_size(e));
			images[j].revision = j == 0 ? (tries[x].wm >= 10) : tries[x].second_has_row;
			images[j].has_row = j == 0 ? tries[x].wm >= 10 : tries[x].second_has_row;
		}
		got = wa_engine_restore_sessions(e, &key, 0, WA_TICK_MIN, 2, images);
		wa_engine_restore_done(e);
		wa_engine_flush(e);
		wa_engine_destroy(e);
		for (int j = 0; j < 2; j++)
			free(images[j].acc);
		tables_reset(&c, &tb, &fl);
		snprintf(name, sizeof(name), "restore at watermark %s, second session %s a pane: %s",
				 i128s(tries[x].wm), tries[x].second_has_row ? "with" : "without",
				 tries[x].want ? "taken" : "refused");
		check(got == tries[x].want, name, "got %d", got);
	}
}

int
main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	ref_config rc;
	wa_window	one = {1, 1, 0};

	for (int a = 0; a < N_AGGS; a++)
		session_aggs[a] = test_aggs[a];
	session_aggs[N_AGGS] = (wa_agg_spec) {WA_AGG_GENERIC, IN_A, false};
	session_aggs[N_AGGS + 1] = (wa_agg_spec) {WA_AGG_GENERIC, IN_B, true};
	for (int a = 0; a < N_SESSION_AGGS; a++)
	{
		ref_aggs[a] = session_aggs[a];
		ref_aggs[a].kind = test_generic_as(&ref_aggs[a]);
	}
	memset(&rc, 0, sizeof(rc));
	rc.n_windows = 1;
	rc.windows = &one;
	rc.n_aggs = N_SESSION_AGGS;
	rc.aggs = ref_aggs;
	rc.n_inputs = N_INPUTS;
	value_ref = ref_create(&rc);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (only == NULL || strncmp(cases[i].name, only, strlen(only)) == 0)
			run_case(&cases[i]);
	if (only == NULL)
		test_restore_refusals();
	ref_destroy(value_ref);
	return tap_done();
}
