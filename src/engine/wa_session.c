/*-------------------------------------------------------------------------
 *
 * wa_session.c
 *	  Session windows: sessions that events open, extend and merge, fired,
 *	  refined, retracted and closed by the engine's watermark (the rules
 *	  are in wa_engine.h, the state in wa_session.h).
 *
 * An event touches a contiguous range of a run's sessions: sessions are
 * sorted and never overlap, so both ends of the touch interval
 * [start - gap, end] increase along the run.  The usual event extends the
 * key's newest session, which is the last entry: that case costs no
 * search.  A merge keeps the first touched entry, folds the others'
 * accumulators into it and closes the hole.
 *
 * Deadlines are lazy: an event may make a key's deadline earlier (a new
 * session, one that a late event moved past the watermark) and sets it
 * then; a later deadline (a session extended) is found when the old one
 * comes due, at the cost of one visit.
 *
 * src/engine/wa_session.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_engine_int.h"

#include "wa_assert.h"

/* ---------- growable arrays ---------- */

/*
 * Make room in items (an array of *capacity elements of elem bytes, NULL
 * before its first use) for one more than count, doubling from first;
 * returns the array, which may have moved.
 */
static void *
grow(wa_mem *mem, void *items, int64_t count, int64_t *capacity, size_t elem,
	 int64_t first)
{
	int64_t		more;

	if (count < *capacity)
		return items;
	more = *capacity ? *capacity * 2 : first;
	items = items == NULL ? wa_mem_alloc(mem, (size_t) more * elem) :
		wa_mem_realloc(mem, items, (size_t) *capacity * elem, (size_t) more * elem);
	*capacity = more;
	return items;
}

/* ---------- entries ---------- */

static inline session_entry *
entry_at(const wa_sessions *ss, const session_run *r, uint32_t i)
{
	return (session_entry *) (r->items + (size_t) i * ss->stride);
}

static inline void *
entry_acc(session_entry *s)
{
	return (char *) s + SESSION_HEADER;
}

/* Make room for an entry at position pos; returns it (header unset). */
static session_entry *
run_insert(wa_engine *e, session_run *r, uint32_t pos)
{
	wa_sessions *ss = &e->sessions;

	if (r->count == r->capacity)
	{
		uint32_t	capacity = r->capacity ? r->capacity * 2 : 2;

		r->items = r->items == NULL ?
			wa_mem_alloc(&e->mem, (size_t) capacity * ss->stride) :
			wa_mem_realloc(&e->mem, r->items, (size_t) r->capacity * ss->stride,
						   (size_t) capacity * ss->stride);
		r->capacity = capacity;
	}
	memmove(r->items + (size_t) (pos + 1) * ss->stride,
			r->items + (size_t) pos * ss->stride,
			(size_t) (r->count - pos) * ss->stride);
	r->count++;
	e->stats.n_sessions++;
	return entry_at(ss, r, pos);
}

/* Remove entries [from, to), whose accumulators hold no state any more. */
static void
run_remove(wa_engine *e, session_run *r, uint32_t from, uint32_t to)
{
	wa_sessions *ss = &e->sessions;

	memmove(r->items + (size_t) from * ss->stride,
			r->items + (size_t) to * ss->stride,
			(size_t) (r->count - to) * ss->stride);
	r->count -= to - from;
	WA_ASSERT(e->stats.n_sessions >= to - from);
	e->stats.n_sessions -= to - from;
}

/* First entry whose end is >= t (ends increase along a run). */
static uint32_t
run_first_ending_at_or_after(const wa_sessions *ss, const session_run *r,
							 wa_tick t)
{
	uint32_t	lo = 0;
	uint32_t	hi = r->count;

	/* the usual event: at or after the newest session's start */
	if (hi > 0 && entry_at(ss, r, hi - 1)->start <= t)
		return entry_at(ss, r, hi - 1)->end >= t ? hi - 1 : hi;
	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (entry_at(ss, r, mid)->end < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First entry whose start is >= t (starts increase along a run). */
static uint32_t
run_first_starting_at_or_after(const wa_sessions *ss, const session_run *r,
							   wa_tick t)
{
	uint32_t	lo = 0;
	uint32_t	hi = r->count;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (entry_at(ss, r, mid)->start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First entry whose end is above t (ends increase along a run). */
static uint32_t
run_first_ending_after(const wa_sessions *ss, const session_run *r, wa_tick t)
{
	uint32_t	lo = 0;
	uint32_t	hi = r->count;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (entry_at(ss, r, mid)->end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---------- panes ---------- */

static void
emit_session(wa_engine *e, const session_key *k, int i, session_entry *s,
			 wa_pane_kind kind, int64_t revision)
{
	wa_pane		pane;
	const void *acc = entry_acc(s);

	/* a final function that may write to its state gets a copy */
	if (!e->layout.final_reads)
	{
		wa_acc_release(&e->layout, e->scratch);
		wa_acc_copy(&e->layout, e->scratch, acc);
		acc = e->scratch;
	}
	wa_acc_finalize(&e->layout, acc, e->results);
	pane.key.ival = k->ival;
	pane.key.bytes = k->bytes;
	pane.key.len = k->len;
	pane.window = e->sessions.first_window + i;
	pane.start = s->start;
	pane.end = s->end;
	pane.kind = kind;
	pane.revision = revision;
	pane.results = e->results;
	pane.acc = acc;
	if (kind == WA_PANE_ON_TIME)
		e->stats.panes_on_time++;
	else if (kind == WA_PANE_LATE)
		e->stats.panes_late++;
	else
		e->stats.panes_retracted++;
	e->emit(e->emit_arg, &pane);
}

static void key_mark_changed(wa_engine *e, session_key *k, int i);

/* The next pane of s, whose data its last pane (if any) lacks. */
static void
emit_next_revision(wa_engine *e, session_key *k, int i, session_entry *s)
{
	key_mark_changed(e, k, i);
	s->revision++;
	emit_session(e, k, i, s, s->revision == 1 && !s->has_row &&
				 !s->dirty ? WA_PANE_ON_TIME : WA_PANE_LATE, s->revision);
	s->has_row = true;
	s->dirty = false;
}

/* ---------- keys ---------- */

static bool
key_eq_bytes(const void *stored, const void *probe)
{
	const session_key *k = stored;

	return wa_key_bytes_equal(k->bytes, k->len, probe);
}

static inline size_t
key_size(const wa_sessions *ss)
{
	return sizeof(session_key) + sizeof(session_run) * (size_t) ss->n;
}

static session_key *
key_find(wa_engine *e, const wa_key *key, uint64_t hash)
{
	if (e->byte_keys)
		return wa_hashtab_find(&e->sessions.keys, hash, key_eq_bytes, key);
	return wa_hashtab_find(&e->sessions.keys, hash, wa_key_eq_int, key);
}

static session_key *
key_create(wa_engine *e, const wa_key *key, uint64_t hash)
{
	wa_sessions *ss = &e->sessions;
	session_key *k = wa_mem_alloc(&e->mem, key_size(ss));

	memset(k, 0, key_size(ss));
	k->hash = hash;
	k->node.pos = -1;
	k->node.deadline = WA_TICK_MAX;
	k->dirty_pos = -1;
	k->ckpt_pos = -1;
	for (int i = 0; i < ss->n; i++)
		k->runs[i].closed_end = WA_TICK_MIN;
	if (e->byte_keys)
	{
		k->len = key->len;
		k->bytes = wa_key_copy_bytes(&e->mem, key);
	}
	else
		k->ival = key->ival;
	wa_hashtab_insert(&ss->keys, &e->mem, hash, k);
	return k;
}

/* Free a key's sessions (without emitting), then the key. */
static void
key_free_memory(wa_engine *e, session_key *k)
{
	wa_sessions *ss = &e->sessions;

	for (int i = 0; i < ss->n; i++)
	{
		session_run *r = &k->runs[i];

		for (uint32_t j = 0; j < r->count; j++)
			wa_acc_release(&e->layout, entry_acc(entry_at(ss, r, j)));
		WA_ASSERT(e->stats.n_sessions >= r->count);
		e->stats.n_sessions -= r->count;
		if (r->items != NULL)
			wa_mem_free(&e->mem, r->items, (size_t) r->capacity * ss->stride);
	}
	if (k->dirty != NULL)
		wa_mem_free(&e->mem, k->dirty, k->dirty_capacity * sizeof(session_dirty));
	if (e->byte_keys && k->bytes != NULL)
		wa_mem_free(&e->mem, k->bytes, k->len > 0 ? k->len : 1);
	wa_mem_free(&e->mem, k, key_size(ss));
}

static void
key_set_deadline(wa_engine *e, session_key *k, wa_tick deadline)
{
	k->node.deadline = deadline;
	if (k->node.pos < 0)
		wa_heap_push(&e->sessions.deadlines, &e->mem, &k->node);
	else
		wa_heap_update(&e->sessions.deadlines, &k->node);
}

/*
 * Session s of run i of key k is due with data its pane lacks: remember
 * it by its start, so that emit_late finds it without scanning the run
 * (with a long lateness a key may have many sessions, few of them dirty).
 */
static void
key_mark_dirty(wa_engine *e, session_key *k, int i, const session_entry *s)
{
	wa_sessions *ss = &e->sessions;

	k->dirty = grow(&e->mem, k->dirty, k->n_dirty, &k->dirty_capacity,
					sizeof(session_dirty), 2);
	k->dirty[k->n_dirty].run = i;
	k->dirty[k->n_dirty++].start = s->start;
	if (k->dirty_pos >= 0)
		return;
	ss->dirty = grow(&e->mem, ss->dirty, ss->n_dirty, &ss->dirty_capacity,
					 sizeof(session_key *), 64);
	k->dirty_pos = ss->n_dirty;
	ss->dirty[ss->n_dirty++] = k;
}

/* When a session next needs the key's attention: it fires, or closes. */
static inline wa_tick
entry_deadline(const wa_engine *e, const session_entry *s)
{
	return s->end > e->wm ? s->end : s->end + e->lateness;
}

/* Run i of key k changed: the next checkpoint reports it. */
static void
key_mark_changed(wa_engine *e, session_key *k, int i)
{
	wa_sessions *ss = &e->sessions;

	k->ckpt_changed |= UINT64_C(1) << i;
	if (k->ckpt_pos >= 0)
		return;
	ss->changed = grow(&e->mem, ss->changed, ss->n_changed,
					   &ss->changed_capacity, sizeof(session_key *), 64);
	k->ckpt_pos = ss->n_changed;
	ss->changed[ss->n_changed++] = k;
}

/*
 * Key k's next deadline (see wa_session.h), or false if nothing of it is
 * left: no open session, and no horizon that still matters.
 */
static bool
key_next_deadline(const wa_engine *e, const session_key *k, wa_tick *deadline)
{
	const wa_sessions *ss = &e->sessions;
	bool		empty = true;

	*deadline = WA_TICK_MAX;
	for (int i = 0; i < ss->n; i++)
	{
		const session_run *r = &k->runs[i];

		/*
		 * Sessions fire and close in the order of their ends: the first
		 * one closes first, the first one the watermark has not reached
		 * fires first.
		 */
		if (r->count > 0)
		{
			uint32_t	u = run_first_ending_after(ss, r, e->wm);
			wa_tick		d = entry_deadline(e, entry_at(ss, r, 0));

			if (d < *deadline)
				*deadline = d;
			if (u < r->count && entry_at(ss, r, u)->end < *deadline)
				*deadline = entry_at(ss, r, u)->end;
		}
		if (r->closed_end != WA_TICK_MIN &&
			r->closed_end + ss->gaps[i] + e->lateness < *deadline)
			*deadline = r->closed_end + ss->gaps[i] + e->lateness;
		if (r->count > 0 || r->closed_end != WA_TICK_MIN)
			empty = false;
	}
	return !empty;
}

/* Free key k, which holds nothing: off every list, a tombstone if saved. */
static void
key_free(wa_engine *e, session_key *k)
{
	wa_sessions *ss = &e->sessions;

	if (k->node.pos >= 0)
		wa_heap_remove(&ss->deadlines, &k->node);
	if (k->dirty_pos >= 0)
	{
		session_key *last = ss->dirty[--ss->n_dirty];

		ss->dirty[k->dirty_pos] = last;
		last->dirty_pos = k->dirty_pos;
	}
	if (k->ckpt_pos >= 0)
	{
		session_key *last = ss->changed[--ss->n_changed];

		ss->changed[k->ckpt_pos] = last;
		last->ckpt_pos = k->ckpt_pos;
	}
	if (k->ckpt_saved != 0)
	{
		session_gone *g;

		ss->gone = grow(&e->mem, ss->gone, ss->n_gone, &ss->gone_capacity,
						sizeof(session_gone), 16);
		g = &ss->gone[ss->n_gone++];
		g->ival = k->ival;
		g->len = k->len;
		g->bytes = NULL;
		g->runs = k->ckpt_saved;
		if (e->byte_keys)
		{
			/* the key's own copy of its bytes goes to the tombstone */
			g->bytes = k->bytes;
			k->bytes = NULL;
		}
	}
	wa_hashtab_remove(&ss->keys, k->hash, k);
	key_free_memory(e, k);
}

/*
 * Bring key k up to the watermark: fire the sessions it reached, emit and
 * close the ones that closed, forget a horizon that no longer matters;
 * then reschedule the key, or free it when nothing of it is left.
 */
static void
key_visit(wa_engine *e, session_key *k)
{
	wa_sessions *ss = &e->sessions;
	wa_tick		deadline;

	for (int i = 0; i < ss->n; i++)
	{
		session_run *r = &k->runs[i];
		uint32_t	reached = run_first_ending_after(ss, r, e->wm);
		uint32_t	closed = 0;

		/*
		 * Only the sessions that change are visited, so that a key with
		 * many open sessions (a long lateness) costs no more per visit.
		 * The ones the watermark reached since the last visit, which have
		 * no pane yet, are the last of those it reached (a session due
		 * for another reason is dirty, and emit_late's): fire them.
		 */
		for (uint32_t j = reached; j > 0; j--)
		{
			session_entry *s = entry_at(ss, r, j - 1);

			if (s->has_row || s->dirty)
				break;
			emit_next_revision(e, k, i, s);
		}
		/* the closed ones come first: emit what they lack, and drop them */
		while (closed < r->count &&
			   entry_at(ss, r, closed)->end + e->lateness <= e->wm)
		{
			session_entry *s = entry_at(ss, r, closed);

			if (s->dirty)
				emit_next_revision(e, k, i, s);
			if (s->end > r->closed_end)
				r->closed_end = s->end;
			wa_acc_release(&e->layout, entry_acc(s));
			closed++;
		}
		if (closed > 0)
		{
			run_remove(e, r, 0, closed);
			key_mark_changed(e, k, i);
		}

		/*
		 * A horizon matters while an event at or before it could still be
		 * accepted but for it: until horizon + gap + lateness, when every
		 * such event is too late.
		 */
		if (r->closed_end != WA_TICK_MIN &&
			r->closed_end + ss->gaps[i] + e->lateness <= e->wm)
		{
			r->closed_end = WA_TICK_MIN;
			key_mark_changed(e, k, i);
		}
	}
	if (key_next_deadline(e, k, &deadline))
		key_set_deadline(e, k, deadline);
	else
		key_free(e, k);
}

/* ---------- ingest ---------- */

/*
 * Whether session window i takes an event at t of a key whose run is r
 * (NULL: the key has none yet), with the watermark before the event; sets
 * *lo and *hi to the sessions it touches.
 */
static wa_drop_reason
session_decide(const wa_engine *e, int i, const session_run *r, int64_t t,
			   uint32_t *lo, uint32_t *hi)
{
	const wa_sessions *ss = &e->sessions;
	int64_t		gap = ss->gaps[i];

	*lo = *hi = 0;
	if (t > ss->max_times[i])
		return WA_DROP_OUT_OF_RANGE;
	if ((wa_tick) t + gap + e->lateness <= e->wm)
		return WA_DROP_TOO_LATE;
	if (r == NULL)
		return WA_DROP_NONE;

	/*
	 * Not too late, yet at or before a closed session's end: it touches a
	 * closed session (wa_engine.h says why), which must not change.
	 */
	if (t <= r->closed_end)
		return WA_DROP_SESSION_CLOSED;
	*lo = *hi = run_first_ending_at_or_after(ss, r, t);
	while (*hi < r->count && entry_at(ss, r, *hi)->start - gap <= t)
		(*hi)++;
	return WA_DROP_NONE;
}

/* Fold an accepted event at t into sessions [lo, hi) of run i of key k. */
static void
session_accept(wa_engine *e, session_key *k, int i, int64_t t,
			   const wa_value *values, uint32_t lo, uint32_t hi)
{
	wa_sessions *ss = &e->sessions;
	session_run *r = &k->runs[i];
	wa_tick		t_end = (wa_tick) t + ss->gaps[i];
	session_entry *s;
	wa_tick		started = WA_TICK_MIN;	/* start of a dirty session it joins */
	wa_tick		d;

	if (hi == lo)
	{
		/* a session of its own */
		s = run_insert(e, r, lo);
		memset(s, 0, SESSION_HEADER);
		s->start = t;
		s->end = t_end;
		wa_acc_init(&e->layout, entry_acc(s));
	}
	else
	{
		s = entry_at(ss, r, lo);
		started = s->start;
		if (hi - lo > 1 || t < s->start || t_end > s->end)
		{
			/*
			 * The bounds change: the touched sessions are replaced by one,
			 * whose pane is a new row; the rows of theirs are withdrawn.
			 */
			for (uint32_t j = lo; j < hi; j++)
			{
				session_entry *o = entry_at(ss, r, j);

				if (o->has_row)
					emit_session(e, k, i, o, WA_PANE_RETRACT, o->revision);
				if (j == lo)
					continue;
				wa_acc_merge(&e->layout, entry_acc(s), entry_acc(o));
				wa_acc_release(&e->layout, entry_acc(o));
				if (o->revision > s->revision)
					s->revision = o->revision;
				if (o->end > s->end)
					s->end = o->end;
			}
			run_remove(e, r, lo + 1, hi);
			if (t < s->start)
				s->start = t;
			if (t_end > s->end)
				s->end = t_end;
			s->has_row = false;
			s->dirty = false;
		}
	}
	wa_acc_update(&e->layout, entry_acc(s), values);
	key_mark_changed(e, k, i);

	/* a session already due gets its next pane from emit_late */
	if (s->end <= e->wm)
	{
		if (!s->dirty || started != s->start)
			key_mark_dirty(e, k, i, s);
		s->dirty = true;
	}
	d = entry_deadline(e, s);
	if (k->node.pos < 0 || d < k->node.deadline)
		key_set_deadline(e, k, d);
}

wa_ingest_result
wa_sessions_ingest(wa_engine *e, const wa_key *key, int64_t t,
				   const wa_value *values)
{
	wa_sessions *ss = &e->sessions;
	uint64_t	hash = wa_key_hash(e, key);
	session_key *k = key_find(e, key, hash);
	int			accepted = 0;

	ss->last_drop = WA_DROP_NONE;
	for (int i = 0; i < ss->n; i++)
	{
		uint32_t	lo;
		uint32_t	hi;
		wa_drop_reason why = session_decide(e, i, k ? &k->runs[i] : NULL, t,
											&lo, &hi);

		if (why != WA_DROP_NONE)
		{
			if (ss->last_drop == WA_DROP_NONE)
				ss->last_drop = why;
			continue;
		}
		if (k == NULL)
			k = key_create(e, key, hash);
		session_accept(e, k, i, t, values, lo, hi);
		accepted++;
	}
	return accepted == ss->n ? WA_INGEST_ACCEPTED :
		accepted > 0 ? WA_INGEST_PARTIAL : WA_INGEST_DROPPED;
}

/* ---------- the watermark, late panes, flush ---------- */

void
wa_sessions_advance(wa_engine *e)
{
	wa_heap_node *top;

	while ((top = wa_heap_top(&e->sessions.deadlines)) != NULL &&
		   top->deadline <= e->wm)
		key_visit(e, (session_key *) top);
}

void
wa_sessions_emit_late(wa_engine *e)
{
	wa_sessions *ss = &e->sessions;

	for (int64_t d = 0; d < ss->n_dirty; d++)
	{
		session_key *k = ss->dirty[d];

		for (int64_t x = 0; x < k->n_dirty; x++)
		{
			session_run *r = &k->runs[k->dirty[x].run];
			uint32_t	j = run_first_starting_at_or_after(ss, r, k->dirty[x].start);

			/* gone (merged into an earlier one, listed too) or emitted */
			if (j < r->count && entry_at(ss, r, j)->start == k->dirty[x].start &&
				entry_at(ss, r, j)->dirty)
				emit_next_revision(e, k, k->dirty[x].run, entry_at(ss, r, j));
		}
		k->n_dirty = 0;
		k->dirty_pos = -1;
	}
	ss->n_dirty = 0;
}

/* ---------- checkpoints ---------- */

/* Free the tombstones' key bytes, and forget them. */
static void
gone_clear(wa_engine *e)
{
	wa_sessions *ss = &e->sessions;

	for (int64_t g = 0; g < ss->n_gone; g++)
		if (ss->gone[g].bytes != NULL)
			wa_mem_free(&e->mem, ss->gone[g].bytes,
						ss->gone[g].len > 0 ? ss->gone[g].len : 1);
	ss->n_gone = 0;
}

void
wa_engine_checkpoint_sessions(wa_engine *e, wa_save_sessions_fn save, void *arg)
{
	wa_sessions *ss = &e->sessions;

	/*
	 * Tombstones first: a key freed and then made anew since the last
	 * checkpoint is reported as it is now, after its deletion.
	 */
	for (int64_t g = 0; g < ss->n_gone; g++)
	{
		wa_key		key;

		key.ival = ss->gone[g].ival;
		key.bytes = ss->gone[g].bytes;
		key.len = ss->gone[g].len;
		for (int i = 0; i < ss->n; i++)
			if (ss->gone[g].runs & (UINT64_C(1) << i))
				save(arg, &key, ss->first_window + i, WA_TICK_MIN, 0, NULL);
	}
	gone_clear(e);
	wa_mem_free(&e->mem, ss->gone, ss->gone_capacity * sizeof(session_gone));
	ss->gone = NULL;
	ss->gone_capacity = 0;
	for (int64_t c = 0; c < ss->n_changed; c++)
	{
		session_key *k = ss->changed[c];
		wa_key		key;

		key.ival = k->ival;
		key.bytes = k->bytes;
		key.len = k->len;
		for (int i = 0; i < ss->n; i++)
		{
			session_run *r = &k->runs[i];

			if ((k->ckpt_changed & (UINT64_C(1) << i)) == 0)
				continue;
			if (r->count > ss->images_capacity)
			{
				uint32_t	capacity = r->count * 2;

				ss->images = ss->images == NULL ?
					wa_mem_alloc(&e->mem, sizeof(wa_session_image) * capacity) :
					wa_mem_realloc(&e->mem, ss->images,
								   sizeof(wa_session_image) * ss->images_capacity,
								   sizeof(wa_session_image) * capacity);
				ss->images_capacity = capacity;
			}
			for (uint32_t j = 0; j < r->count; j++)
			{
				session_entry *se = entry_at(ss, r, j);

				/* taken after emit_late: nothing is due without its pane */
				WA_ASSERT(!se->dirty);
				ss->images[j].start = se->start;
				ss->images[j].end = se->end;
				ss->images[j].revision = se->revision;
				ss->images[j].has_row = se->has_row;
				ss->images[j].acc = entry_acc(se);
			}
			save(arg, &key, ss->first_window + i, r->closed_end, (int) r->count,
				 ss->images);
			if (r->count > 0 || r->closed_end != WA_TICK_MIN)
				k->ckpt_saved |= UINT64_C(1) << i;
			else
				k->ckpt_saved &= ~(UINT64_C(1) << i);
		}
		k->ckpt_changed = 0;
		k->ckpt_pos = -1;
	}
	ss->n_changed = 0;
}

/* Could events have left these sessions of window i at the watermark? */
static bool
sessions_valid(const wa_engine *e, int i, wa_tick horizon, int n,
			   const wa_session_image *images)
{
	const wa_sessions *ss = &e->sessions;
	int64_t		gap = ss->gaps[i];

	if (n < 0 || (horizon != WA_TICK_MIN &&
				  (horizon + e->lateness > e->wm ||
				   horizon + gap + e->lateness <= e->wm)))
		return false;
	for (int j = 0; j < n; j++)
	{
		const wa_session_image *s = &images[j];

		if (s->start < INT64_MIN || s->start > ss->max_times[i] ||
			s->end - s->start < gap || s->end > (wa_tick) ss->max_times[i] + gap ||
			s->revision < 0 || (s->has_row && s->revision == 0) ||
			s->end + e->lateness <= e->wm || (s->end <= e->wm) != s->has_row ||
			(j > 0 && s->start <= images[j - 1].end) ||
			(horizon != WA_TICK_MIN && s->start <= horizon) ||
			!wa_acc_is_valid(&e->layout, s->acc))
			return false;
	}
	return true;
}

bool
wa_engine_restore_sessions(wa_engine *e, const wa_key *key, int window,
						   wa_tick horizon, int n,
						   const wa_session_image *images)
{
	wa_sessions *ss = &e->sessions;
	/* any int may come from a checkpoint: no overflow for INT_MIN */
	int64_t		index = (int64_t) window - ss->first_window;
	int			i = index >= 0 && index < ss->n ? (int) index : -1;
	session_key *k;
	session_run *r;
	bool		ok = i >= 0 && sessions_valid(e, i, horizon, n, images);

	/* each (key, window) once */
	k = ok ? key_find(e, key, wa_key_hash(e, key)) : NULL;
	if (k != NULL && (k->runs[i].count > 0 || k->runs[i].closed_end != WA_TICK_MIN))
		ok = false;
	if (!ok)
	{
		for (int j = 0; j < n; j++)
			wa_acc_release(&e->layout, images[j].acc);
		return false;
	}
	if (n == 0 && horizon == WA_TICK_MIN)
		return true;
	if (k == NULL)
		k = key_create(e, key, wa_key_hash(e, key));
	r = &k->runs[i];
	r->closed_end = horizon;
	for (int j = 0; j < n; j++)
	{
		session_entry *s = run_insert(e, r, r->count);

		memset(s, 0, SESSION_HEADER);
		s->start = images[j].start;
		s->end = images[j].end;
		s->revision = images[j].revision;
		s->has_row = images[j].has_row;
		memcpy(entry_acc(s), images[j].acc, e->layout.acc_size);
	}
	k->ckpt_saved |= UINT64_C(1) << i;
	return true;
}

/* Bytes held for deletions the next checkpoint reports (wa_engine_flush). */
uint64_t
wa_sessions_pending_bytes(const wa_engine *e)
{
	const wa_sessions *ss = &e->sessions;
	uint64_t	bytes = ss->gone_capacity * sizeof(session_gone);

	for (int64_t g = 0; g < ss->n_gone; g++)
		if (ss->gone[g].bytes != NULL)
			bytes += ss->gone[g].len > 0 ? ss->gone[g].len : 1;
	return bytes;
}

/* After a restore: every key restored gets its deadline. */
void
wa_sessions_restore_done(wa_engine *e)
{
	wa_sessions *ss = &e->sessions;

	for (uint64_t slot = 0; slot <= ss->keys.mask; slot++)
	{
		session_key *k = ss->keys.slots[slot].ptr;
		wa_tick		deadline;

		if (k != NULL && key_next_deadline(e, k, &deadline))
			key_set_deadline(e, k, deadline);
	}
}

/* ---------- life ---------- */

void
wa_sessions_init(wa_engine *e, const wa_config *config)
{
	wa_sessions *ss = &e->sessions;

	memset(ss, 0, sizeof(*ss));
	ss->n = config->n_sessions;
	ss->first_window = config->n_windows;
	ss->stride = SESSION_HEADER + e->layout.acc_size;
	wa_hashtab_init(&ss->keys, &e->mem);
	wa_heap_init(&ss->deadlines);
	if (ss->n == 0)
		return;
	ss->gaps = wa_mem_alloc(&e->mem, sizeof(int64_t) * ss->n);
	ss->max_times = wa_mem_alloc(&e->mem, sizeof(int64_t) * ss->n);
	for (int i = 0; i < ss->n; i++)
	{
		ss->gaps[i] = config->sessions[i].gap;
		ss->max_times[i] = config->sessions[i].max_time;
	}
}

/* After a flush every key is gone: give the containers' capacity back. */
void
wa_sessions_reset(wa_engine *e)
{
	wa_sessions *ss = &e->sessions;

	WA_ASSERT(ss->keys.count == 0 && ss->n_dirty == 0 && ss->n_changed == 0);
	/* the keys the flush freed are deleted by the next checkpoint */
	wa_mem_free(&e->mem, ss->changed, ss->changed_capacity * sizeof(session_key *));
	ss->changed = NULL;
	ss->changed_capacity = 0;
	wa_mem_free(&e->mem, ss->images, sizeof(wa_session_image) * ss->images_capacity);
	ss->images = NULL;
	ss->images_capacity = 0;
	wa_hashtab_destroy(&ss->keys, &e->mem);
	wa_hashtab_init(&ss->keys, &e->mem);
	wa_heap_destroy(&ss->deadlines, &e->mem);
	wa_mem_free(&e->mem, ss->dirty, ss->dirty_capacity * sizeof(session_key *));
	ss->dirty = NULL;
	ss->dirty_capacity = 0;
}

void
wa_sessions_destroy(wa_engine *e)
{
	wa_sessions *ss = &e->sessions;

	for (uint64_t i = 0; i <= ss->keys.mask; i++)
	{
		session_key *k = ss->keys.slots[i].ptr;

		if (k != NULL)
			key_free_memory(e, k);
	}
	wa_hashtab_destroy(&ss->keys, &e->mem);
	wa_heap_destroy(&ss->deadlines, &e->mem);
	wa_mem_free(&e->mem, ss->dirty, ss->dirty_capacity * sizeof(session_key *));
	wa_mem_free(&e->mem, ss->changed, ss->changed_capacity * sizeof(session_key *));
	gone_clear(e);
	wa_mem_free(&e->mem, ss->gone, ss->gone_capacity * sizeof(session_gone));
	wa_mem_free(&e->mem, ss->images, sizeof(wa_session_image) * ss->images_capacity);
	if (ss->n > 0)
	{
		wa_mem_free(&e->mem, ss->gaps, sizeof(int64_t) * ss->n);
		wa_mem_free(&e->mem, ss->max_times, sizeof(int64_t) * ss->n);
	}
}

/* ---------- the live view ---------- */

void
wa_sessions_live(const wa_engine *e, const wa_agg_layout *layout,
				 wa_emit_fn fn, void *arg, void *scratch, wa_result *results)
{
	const wa_sessions *ss = &e->sessions;

	for (uint64_t slot = 0; slot <= ss->keys.mask; slot++)
	{
		const session_key *k = ss->keys.slots[slot].ptr;

		if (k == NULL)
			continue;
		for (int i = 0; i < ss->n; i++)
		{
			const session_run *r = &k->runs[i];

			for (uint32_t j = 0; j < r->count; j++)
			{
				session_entry *s = entry_at(ss, r, j);
				wa_pane		pane;

				/* a session the watermark reached has fired */
				if (s->end <= e->wm)
					continue;
				/* a copy through the reader's callbacks, never the writer's */
				wa_acc_init(layout, scratch);
				wa_acc_merge(layout, scratch, entry_acc(s));
				wa_acc_finalize(layout, scratch, results);
				pane.key.ival = k->ival;
				pane.key.bytes = k->bytes;
				pane.key.len = k->len;
				pane.window = ss->first_window + i;
				pane.start = s->start;
				pane.end = s->end;
				pane.kind = WA_PANE_ON_TIME;
				pane.revision = 0;
				pane.results = results;
				pane.acc = scratch;
				fn(arg, &pane);
				wa_acc_release(layout, scratch);
			}
		}
	}
}
