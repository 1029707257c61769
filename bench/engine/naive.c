/*-------------------------------------------------------------------------
 *
 * naive.c
 *	  Baseline for the engine benchmark: one accumulator per window.
 *
 * State is a set of window records, one per (key, window spec, window
 * start) that holds data.  Records live in one slab (an array grown by
 * doubling, with a free list), so their indexes are stable and the timers
 * and the dirty list can refer to them by index; no memory is allocated per
 * event once the arrays have grown to the working set.
 *
 * Records are found through an open-addressing index (linear probing,
 * load <= 1/2, backward-shift deletion so no tombstones pile up).  A bucket
 * is 8 bytes, the record's 32-bit hash and its index, so a probe sequence
 * stays inside one or two cache lines and only a matching hash touches the
 * record itself; growing the index rehashes from the stored hashes without
 * visiting any record.
 *
 * Two binary min-heaps are the timers: "fire" holds one entry per unfired
 * window keyed by its end, "expire" one per fired window keyed by end +
 * lateness.  This is the per-(key, window) timer scheme of Flink's window
 * operator.  Late data marks a fired record dirty and appends it to a dirty
 * list; naive_emit_late emits those, and a dirty record is emitted before
 * it is freed, as in the engine.
 *
 * bench/engine/naive.c
 *
 *-------------------------------------------------------------------------
 */
#include "naive.h"

#include <stdlib.h>
#include <string.h>

#define NV_NONE UINT32_MAX

/*
 * Header of a window record; the accumulator (acc_size bytes, a multiple
 * of 8) follows it.  win < 0 marks a free record, whose start field then
 * holds the next free index.
 */
typedef struct nv_rec
{
	int64_t		key;
	int64_t		start;
	int32_t		win;
	int32_t		revision;		/* panes emitted so far */
	uint32_t	hash;
	uint8_t		fired;			/* the watermark has passed its end */
	uint8_t		dirty;			/* late data not yet emitted */
	uint8_t		pad[2];
} nv_rec;

#define NV_REC_HEADER ((uint32_t) sizeof(nv_rec))

/* One bucket of the index; ref is record index + 1, 0 when empty. */
typedef struct nv_bucket
{
	uint32_t	hash;
	uint32_t	ref;
} nv_bucket;

typedef struct nv_timer
{
	int64_t		when;
	uint32_t	rec;
} nv_timer;

typedef struct nv_heap
{
	nv_timer   *items;
	uint32_t	n;
	uint32_t	cap;
} nv_heap;

struct naive_engine
{
	/* configuration */
	int			n_windows;
	wa_window  *windows;
	int64_t		bound;
	int64_t		lateness;
	wa_agg_layout layout;
	wa_agg_spec *aggs;
	uint32_t   *offsets;
	wa_emit_fn	emit;
	void	   *emit_arg;

	/* time */
	bool		have_max;
	int64_t		max_ts;
	wa_tick		wm;

	/* window records */
	char	   *recs;
	uint32_t	rec_size;
	uint32_t	rec_cap;
	uint32_t	rec_used;		/* records ever handed out from the slab */
	uint32_t	free_head;

	/* index */
	nv_bucket  *buckets;
	uint32_t	mask;			/* bucket count - 1 */

	/* timers and late panes */
	nv_heap		fire;
	nv_heap		expire;
	uint32_t   *dirty;
	uint32_t	n_dirty;
	uint32_t	dirty_cap;

	wa_result  *results;		/* finalize buffer, one per aggregate */
	naive_stats stats;
};

static void *
nv_alloc(size_t size)
{
	void	   *p = malloc(size);

	if (p == NULL)
		abort();
	return p;
}

static void *
nv_realloc(void *ptr, size_t size)
{
	void	   *p = realloc(ptr, size);

	if (p == NULL)
		abort();
	return p;
}

/* Account for a change in held memory. */
static inline void
nv_mem(naive_engine *ne, int64_t delta)
{
	ne->stats.mem_bytes += (uint64_t) delta;
	if (ne->stats.mem_bytes > ne->stats.peak_mem_bytes)
		ne->stats.peak_mem_bytes = ne->stats.mem_bytes;
}

static inline nv_rec *
nv_get(const naive_engine *ne, uint32_t idx)
{
	return (nv_rec *) (ne->recs + (size_t) idx * ne->rec_size);
}

static inline void *
nv_acc(nv_rec *rec)
{
	return (char *) rec + NV_REC_HEADER;
}

static inline uint32_t
nv_hash(int64_t key, int64_t start, int32_t win)
{
	uint64_t	h;

	h = (uint64_t) key * UINT64_C(0x9E3779B97F4A7C15);
	h ^= (uint64_t) start * UINT64_C(0xC2B2AE3D27D4EB4F);
	h ^= (uint64_t) win * UINT64_C(0x165667B19E3779F9);
	h ^= h >> 31;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	h ^= h >> 29;
	return (uint32_t) h;
}

/* ---------------------------------------------------------------------
 * Timers
 * ---------------------------------------------------------------------
 */

static void
heap_push(naive_engine *ne, nv_heap *h, int64_t when, uint32_t rec)
{
	uint32_t	i;

	if (h->n == h->cap)
	{
		uint32_t	ncap = h->cap * 2;

		h->items = nv_realloc(h->items, (size_t) ncap * sizeof(nv_timer));
		nv_mem(ne, (int64_t) (ncap - h->cap) * (int64_t) sizeof(nv_timer));
		h->cap = ncap;
	}
	/* sift the hole up rather than swapping at every level */
	i = h->n++;
	while (i > 0)
	{
		uint32_t	parent = (i - 1) / 2;

		if (h->items[parent].when <= when)
			break;
		h->items[i] = h->items[parent];
		i = parent;
	}
	h->items[i].when = when;
	h->items[i].rec = rec;
}

static nv_timer
heap_pop(nv_heap *h)
{
	nv_timer	top = h->items[0];
	nv_timer	last = h->items[--h->n];
	uint32_t	i = 0;

	for (;;)
	{
		uint32_t	child = 2 * i + 1;

		if (child >= h->n)
			break;
		if (child + 1 < h->n && h->items[child + 1].when < h->items[child].when)
			child++;
		if (last.when <= h->items[child].when)
			break;
		h->items[i] = h->items[child];
		i = child;
	}
	if (h->n > 0)
		h->items[i] = last;
	return top;
}

static void
heap_init(naive_engine *ne, nv_heap *h)
{
	h->cap = 16;
	h->n = 0;
	h->items = nv_alloc((size_t) h->cap * sizeof(nv_timer));
	nv_mem(ne, (int64_t) h->cap * (int64_t) sizeof(nv_timer));
}

/* ---------------------------------------------------------------------
 * Records and index
 * ---------------------------------------------------------------------
 */

static void
index_grow(naive_engine *ne)
{
	uint32_t	old_n = ne->mask + 1;
	uint32_t	new_n = old_n * 2;
	uint32_t	new_mask = new_n - 1;
	nv_bucket  *nb = nv_alloc((size_t) new_n * sizeof(nv_bucket));

	memset(nb, 0, (size_t) new_n * sizeof(nv_bucket));
	for (uint32_t i = 0; i < old_n; i++)
	{
		nv_bucket	b = ne->buckets[i];
		uint32_t	j;

		if (b.ref == 0)
			continue;
		j = b.hash & new_mask;
		while (nb[j].ref != 0)
			j = (j + 1) & new_mask;
		nb[j] = b;
	}
	free(ne->buckets);
	ne->buckets = nb;
	ne->mask = new_mask;
	nv_mem(ne, (int64_t) (new_n - old_n) * (int64_t) sizeof(nv_bucket));
}

static uint32_t
rec_alloc(naive_engine *ne)
{
	uint32_t	idx;

	if (ne->free_head != NV_NONE)
	{
		idx = ne->free_head;
		ne->free_head = (uint32_t) nv_get(ne, idx)->start;
		return idx;
	}
	if (ne->rec_used == ne->rec_cap)
	{
		uint32_t	ncap = ne->rec_cap * 2;

		ne->recs = nv_realloc(ne->recs, (size_t) ncap * ne->rec_size);
		nv_mem(ne, (int64_t) (ncap - ne->rec_cap) * ne->rec_size);
		ne->rec_cap = ncap;
	}
	return ne->rec_used++;
}

/*
 * Find the record of (key, win, start), creating an empty one if there is
 * none.  *created says which.  Record pointers taken before this call may
 * be stale after it (the slab can move).
 */
static inline uint32_t
rec_lookup_or_insert(naive_engine *ne, int64_t key, int32_t win,
					 int64_t start, bool *created)
{
	uint32_t	h = nv_hash(key, start, win);
	uint32_t	i = h & ne->mask;
	uint32_t	idx;
	nv_rec	   *rec;

	for (;;)
	{
		nv_bucket	b = ne->buckets[i];

		if (b.ref == 0)
			break;
		if (b.hash == h)
		{
			rec = nv_get(ne, b.ref - 1);
			if (rec->key == key && rec->start == start && rec->win == win)
			{
				*created = false;
				return b.ref - 1;
			}
		}
		i = (i + 1) & ne->mask;
	}

	/* not found: keep the load at most 1/2, then insert */
	if ((ne->stats.n_windows + 1) * 2 > (uint64_t) ne->mask + 1)
	{
		index_grow(ne);
		i = h & ne->mask;
		while (ne->buckets[i].ref != 0)
			i = (i + 1) & ne->mask;
	}
	idx = rec_alloc(ne);
	ne->buckets[i].hash = h;
	ne->buckets[i].ref = idx + 1;

	rec = nv_get(ne, idx);
	rec->key = key;
	rec->start = start;
	rec->win = win;
	rec->revision = 0;
	rec->hash = h;
	rec->fired = 0;
	rec->dirty = 0;
	wa_acc_init(&ne->layout, nv_acc(rec));

	ne->stats.n_windows++;
	if (ne->stats.n_windows > ne->stats.peak_windows)
		ne->stats.peak_windows = ne->stats.n_windows;
	*created = true;
	return idx;
}

/* Remove a record from the index and return it to the free list. */
static void
rec_free(naive_engine *ne, uint32_t idx)
{
	nv_rec	   *rec = nv_get(ne, idx);
	uint32_t	i = rec->hash & ne->mask;
	uint32_t	j;

	while (ne->buckets[i].ref != idx + 1)
		i = (i + 1) & ne->mask;

	/*
	 * Backward-shift deletion: pull later members of the probe run into
	 * the hole unless that would move them before their home bucket.
	 */
	j = i;
	for (;;)
	{
		uint32_t	home;

		j = (j + 1) & ne->mask;
		if (ne->buckets[j].ref == 0)
			break;
		home = ne->buckets[j].hash & ne->mask;
		/* is home cyclically in (i, j]?  then it must stay */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		ne->buckets[i] = ne->buckets[j];
		i = j;
	}
	ne->buckets[i].ref = 0;

	rec->win = -1;
	rec->dirty = 0;
	rec->start = (int64_t) ne->free_head;
	ne->free_head = idx;
	ne->stats.n_windows--;
}

/* ---------------------------------------------------------------------
 * Emission and watermark
 * ---------------------------------------------------------------------
 */

static void
emit_pane(naive_engine *ne, nv_rec *rec, wa_pane_kind kind)
{
	wa_pane		pane;
	void	   *acc = nv_acc(rec);

	rec->revision++;
	wa_acc_finalize(&ne->layout, acc, ne->results);
	pane.key.ival = rec->key;
	pane.key.bytes = NULL;
	pane.key.len = 0;
	pane.window = rec->win;
	pane.start = rec->start;
	pane.end = (wa_tick) rec->start + ne->windows[rec->win].size;
	pane.kind = kind;
	pane.revision = rec->revision;
	pane.results = ne->results;
	pane.acc = acc;
	if (kind == WA_PANE_ON_TIME)
		ne->stats.panes_on_time++;
	else
		ne->stats.panes_late++;
	ne->emit(ne->emit_arg, &pane);
}

static void
advance(naive_engine *ne, wa_tick wm)
{
	ne->wm = wm;

	/* on-time panes first, so a window that also expires now still fires */
	while (ne->fire.n > 0 && (wa_tick) ne->fire.items[0].when <= wm)
	{
		nv_timer	t = heap_pop(&ne->fire);
		nv_rec	   *rec = nv_get(ne, t.rec);

		rec->fired = 1;
		emit_pane(ne, rec, WA_PANE_ON_TIME);
		if ((wa_tick) t.when + ne->lateness <= wm)
			rec_free(ne, t.rec);
		else
			heap_push(ne, &ne->expire, t.when + ne->lateness, t.rec);
	}

	while (ne->expire.n > 0 && (wa_tick) ne->expire.items[0].when <= wm)
	{
		nv_timer	t = heap_pop(&ne->expire);
		nv_rec	   *rec = nv_get(ne, t.rec);

		if (rec->dirty)
		{
			rec->dirty = 0;
			emit_pane(ne, rec, WA_PANE_LATE);
		}
		rec_free(ne, t.rec);
	}
}

static void
dirty_push(naive_engine *ne, uint32_t idx)
{
	if (ne->n_dirty == ne->dirty_cap)
	{
		uint32_t	ncap = ne->dirty_cap * 2;

		ne->dirty = nv_realloc(ne->dirty, (size_t) ncap * sizeof(uint32_t));
		nv_mem(ne, (int64_t) (ncap - ne->dirty_cap) * (int64_t) sizeof(uint32_t));
		ne->dirty_cap = ncap;
	}
	ne->dirty[ne->n_dirty++] = idx;
}

/* ---------------------------------------------------------------------
 * API
 * ---------------------------------------------------------------------
 */

naive_engine *
naive_create(const wa_config *config)
{
	naive_engine *ne;

	if (config->byte_keys || config->n_windows < 1 || config->n_aggs < 1 ||
		config->bound < 0 || config->lateness < 0 || config->emit == NULL)
		return NULL;
	for (int i = 0; i < config->n_windows; i++)
	{
		if (config->windows[i].slide <= 0 ||
			config->windows[i].size < config->windows[i].slide)
			return NULL;
	}

	ne = nv_alloc(sizeof(naive_engine));
	memset(ne, 0, sizeof(naive_engine));
	ne->n_windows = config->n_windows;
	ne->windows = nv_alloc(sizeof(wa_window) * config->n_windows);
	memcpy(ne->windows, config->windows, sizeof(wa_window) * config->n_windows);
	ne->bound = config->bound;
	ne->lateness = config->lateness;
	ne->aggs = nv_alloc(sizeof(wa_agg_spec) * config->n_aggs);
	memcpy(ne->aggs, config->aggs, sizeof(wa_agg_spec) * config->n_aggs);
	ne->offsets = nv_alloc(sizeof(uint32_t) * config->n_aggs);
	wa_agg_layout_init(&ne->layout, config->n_aggs, ne->aggs, ne->offsets);
	ne->results = nv_alloc(sizeof(wa_result) * config->n_aggs);
	ne->emit = config->emit;
	ne->emit_arg = config->emit_arg;

	ne->have_max = false;
	ne->wm = WA_TICK_MIN;

	/* keep every accumulator 8-byte aligned: the header is 32 bytes */
	ne->rec_size = NV_REC_HEADER + ((ne->layout.acc_size + 7) & ~7u);
	ne->rec_cap = 16;
	ne->recs = nv_alloc((size_t) ne->rec_cap * ne->rec_size);
	ne->rec_used = 0;
	ne->free_head = NV_NONE;
	nv_mem(ne, (int64_t) ne->rec_cap * ne->rec_size);

	/* start small so that peak_mem_bytes reflects the state, not presizing */
	ne->mask = 32 - 1;
	ne->buckets = nv_alloc(sizeof(nv_bucket) * 32);
	memset(ne->buckets, 0, sizeof(nv_bucket) * 32);
	nv_mem(ne, (int64_t) sizeof(nv_bucket) * 32);

	heap_init(ne, &ne->fire);
	heap_init(ne, &ne->expire);
	ne->dirty_cap = 16;
	ne->dirty = nv_alloc(sizeof(uint32_t) * ne->dirty_cap);
	nv_mem(ne, (int64_t) sizeof(uint32_t) * ne->dirty_cap);
	return ne;
}

void
naive_destroy(naive_engine *ne)
{
	if (ne == NULL)
		return;
	free(ne->windows);
	free(ne->aggs);
	free(ne->offsets);
	free(ne->results);
	free(ne->recs);
	free(ne->buckets);
	free(ne->fire.items);
	free(ne->expire.items);
	free(ne->dirty);
	free(ne);
}

wa_ingest_result
naive_ingest(naive_engine *ne, const wa_key *key, int64_t event_time,
			 const wa_value *values)
{
	uint64_t	accepted = 0;
	bool		rejected = false;
	wa_tick		wm = ne->wm;

	ne->stats.events_in++;

	for (int w = 0; w < ne->n_windows; w++)
	{
		const wa_window *spec = &ne->windows[w];
		int64_t		start;

		/* latest window containing the event; earlier ones step back */
		start = spec->origin +
			wa_floor_div(event_time - spec->origin, spec->slide) * spec->slide;

		for (; start > event_time - spec->size; start -= spec->slide)
		{
			int64_t		end = start + spec->size;
			bool		created;
			uint32_t	idx;
			nv_rec	   *rec;

			/*
			 * Windows are visited by decreasing end, so once one has closed
			 * for good every earlier one has too.
			 */
			if ((wa_tick) end + ne->lateness <= wm)
			{
				rejected = true;
				break;
			}
			accepted++;

			idx = rec_lookup_or_insert(ne, key->ival, w, start, &created);
			if (created)
			{
				/*
				 * A window first seen after the watermark passed its end has
				 * already fired (empty, so without a pane); its data is
				 * late and it only needs an expiry timer.
				 */
				if ((wa_tick) end <= wm)
				{
					nv_get(ne, idx)->fired = 1;
					heap_push(ne, &ne->expire, end + ne->lateness, idx);
				}
				else
					heap_push(ne, &ne->fire, end, idx);
			}
			rec = nv_get(ne, idx);
			wa_acc_update(&ne->layout, nv_acc(rec), values);
			if (rec->fired && !rec->dirty)
			{
				rec->dirty = 1;
				dirty_push(ne, idx);
			}
		}
	}
	ne->stats.updates += accepted;

	if (!ne->have_max || event_time > ne->max_ts)
	{
		wa_tick		new_wm;

		ne->have_max = true;
		ne->max_ts = event_time;
		new_wm = (wa_tick) event_time - ne->bound;
		if (new_wm > ne->wm)
			advance(ne, new_wm);
	}

	if (accepted == 0)
	{
		ne->stats.events_dropped++;
		return WA_INGEST_DROPPED;
	}
	if (rejected)
	{
		ne->stats.events_partial++;
		return WA_INGEST_PARTIAL;
	}
	return WA_INGEST_ACCEPTED;
}

void
naive_emit_late(naive_engine *ne)
{
	for (uint32_t i = 0; i < ne->n_dirty; i++)
	{
		nv_rec	   *rec = nv_get(ne, ne->dirty[i]);

		/*
		 * Skip records emitted and freed at expiry since they were listed
		 * (their slot may even hold a new record, listed again itself).
		 */
		if (rec->win < 0 || !rec->dirty)
			continue;
		rec->dirty = 0;
		emit_pane(ne, rec, WA_PANE_LATE);
	}
	ne->n_dirty = 0;
}

void
naive_flush(naive_engine *ne)
{
	naive_emit_late(ne);
	advance(ne, WA_TICK_MAX);
}

void
naive_get_stats(const naive_engine *ne, naive_stats *stats)
{
	*stats = ne->stats;
}
