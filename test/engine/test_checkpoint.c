/*-------------------------------------------------------------------------
 *
 * test_checkpoint.c
 *	  Tests of the engine's checkpoint, restore and live view.
 *
 * The differential runs drive several engines over one stream in lockstep:
 * "plain", which only ingests; A, the same plus checkpoints and live views
 * at random points; and B1, B2, ..., each restored at one of A's
 * checkpoints from the slice table persisted so far (the previous B's
 * table, so that restoring a restored engine is covered too).  After every
 * call they must agree: A with plain exactly, pane for pane (checkpoints
 * and live views change nothing), and each B with A up to what wa_engine.h
 * allows (revision counts of late panes, float rounding, the order of the
 * panes of one call).  At every checkpoint, every engine's persisted table
 * must equal the full state dumped by an engine that replayed the stream so
 * far, and a checkpoint must report no more slices than the events since
 * the previous one touched.  Every live view must list exactly the windows
 * that the reference, run on the stream so far, has with data and unfired,
 * with their values, and leave the engine as it was.
 *
 * The streams are smaller versions of the differential cases
 * (test_differential.c) and of its int64-extreme streams.
 *
 * The scripted tests, on mini engines with int keys, check that the cost of
 * a checkpoint follows the changes, what a restored engine fires, the int64
 * ends, and that restore takes slices in any order.
 *
 * Output is TAP (tap.h).
 *
 * Usage: test_checkpoint [<prefix of a case name>]; "ckpt extremes" runs
 * those at the int64 limits.
 *
 * test/engine/test_checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* What a checkpoint's save callback collects. */
typedef struct ck_saves
{
	const keytab *keys;
	uint32_t	acc_size;
	ck_table	t;
	int64_t		n_bad;
	char		bad[200];
} ck_saves;

static void
ck_save(void *arg, const wa_key *key, int64_t slice, const void *acc,
		uint32_t acc_size)
{
	ck_saves   *s = arg;
	int			id = keytab_find(s->keys, key);

	if (id < 0 || acc_size != s->acc_size)
	{
		if (s->n_bad++ == 0)
			snprintf(s->bad, sizeof(s->bad), "slice %" PRId64 ": key %s, "
					 "acc_size %u (engine says %u)", slice,
					 id < 0 ? "never ingested" : "ok", acc_size, s->acc_size);
		return;
	}
	ck_table_add(&s->t, id, slice, acc, acc_size);
}

/* A pane as the lockstep runs keep it. */
typedef struct ck_pane
{
	int			key;
	int			window;
	wa_tick		start;
	wa_tick		end;
	wa_pane_kind kind;
	int64_t		revision;
	wa_result	results[N_AGGS];
} ck_pane;

typedef struct ck_sink
{
	const keytab *keys;
	ck_pane    *p;
	int64_t		n;
	int64_t		cap;
	int64_t		n_unknown;		/* panes for keys never ingested */
} ck_sink;

static void
ck_collect(void *arg, const wa_pane *pane)
{
	ck_sink    *s = arg;
	ck_pane    *p;
	int			key = keytab_find(s->keys, &pane->key);

	if (key < 0)
	{
		s->n_unknown++;
		return;
	}
	if (s->n == s->cap)
	{
		s->cap = s->cap ? s->cap * 2 : 64;
		s->p = realloc(s->p, sizeof(ck_pane) * s->cap);
	}
	p = &s->p[s->n++];
	p->key = key;
	p->window = pane->window;
	p->start = pane->start;
	p->end = pane->end;
	p->kind = pane->kind;
	p->revision = pane->revision;
	memcpy(p->results, pane->results, sizeof(wa_result) * N_AGGS);
}

static void
ck_discard(void *arg, const wa_pane *pane)
{
	(void) arg;
	(void) pane;
}

static int
ck_pane_cmp(const void *a, const void *b)
{
	const ck_pane *x = a;
	const ck_pane *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->window != y->window)
		return x->window < y->window ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return 0;
}

/*
 * Do two panes' results agree?  Exactly, or (restored engines, whose merge
 * caches started empty) with floats up to rounding: every count, integer
 * sum, minimum and maximum still compares exactly, so a missing or extra
 * event cannot hide in the tolerance.
 */
static bool
ck_results_same(const wa_result *a, const wa_result *b, bool exact)
{
	for (int i = 0; i < N_AGGS; i++)
	{
		const wa_result *x = &a[i];
		const wa_result *y = &b[i];
		bool		ok;

		if (x->isnull != y->isnull)
			return false;
		if (x->isnull)
			continue;
		switch (test_aggs[i].kind)
		{
			case WA_AGG_COUNT_STAR:
			case WA_AGG_COUNT:
				ok = x->count == y->count;
				break;
			case WA_AGG_SUM_INT:
				ok = x->sum == y->sum;
				break;
			case WA_AGG_AVG_INT:
				ok = x->sum == y->sum && x->count == y->count;
				break;
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				ok = x->sum == y->sum && x->count == y->count && x->i == y->i;
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				ok = x->i == y->i;
				break;
			default:
				if (isnan(x->f) || isnan(y->f))
					ok = isnan(x->f) && isnan(y->f);
				else if (exact)
					ok = x->f == y->f;
				else
					ok = fabs(x->f - y->f) <=
						1e-9 * fmax(1.0, fmax(fabs(x->f), fabs(y->f)));
				break;
		}
		if (!ok)
			return false;
	}
	return true;
}

static void
describe_ck_pane(char *buf, size_t len, const char *who, const ck_pane *p)
{
	snprintf(buf, len, "%s: key %d window %d [%s,%s) %s revision %" PRId64
			 " count %" PRId64, who, p->key, p->window, i128s(p->start),
			 i128s(p->end), p->kind == WA_PANE_ON_TIME ? "ON_TIME" : "LATE",
			 p->revision, p->results[AGG_COUNT_STAR].count);
}

/* Problems a lockstep run looks for. */
typedef enum ck_problem
{
	C_OUTCOME,
	C_SAME,
	C_RESTORED,
	C_SAVES,
	C_TABLE,
	C_EXPIRE,
	C_COST,
	C_LIVE,
	C_LIVE_RO,
	C_MEM,
	C_COUNT
} ck_problem;

static const char *const ck_problem_names[C_COUNT] = {
	"ingest results and watermarks agree",
	"checkpoints and live views change nothing",
	"restored engines emit what A emits",
	"saves well-formed",
	"persisted table is the live state",
	"expire_below bounds every live slice",
	"checkpoint cost follows the changes",
	"live view matches the reference",
	"live view is read-only and deterministic",
	"memory released"
};

#define CK_MAX_ENGINES 4		/* plain, A and up to two restored */

typedef struct ck_engine
{
	char		role[16];
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_engine  *eng;
	uint64_t	base_mem;		/* mem_bytes when created */
	ck_sink		out;
	ck_table	table;			/* the slices it persisted */
	wa_ingest_result res;		/* of the current operation */
} ck_engine;

typedef struct ck_opts
{
	const char *name;
	int			n_windows;
	const wa_window *windows;
	int64_t		bound;
	int64_t		lateness;
	int			epoch;			/* as in run_opts */
	bool		merge_every_slice;
	bool		share_windows;
	uint64_t	seed;			/* picks the checkpoint and live points */
	int			n_ckpt;			/* checkpoints; every other one restores */
	int			n_live;			/* live views */
} ck_opts;

/* What to do after each operation. */
#define CK_EMIT 1				/* emit_late */
#define CK_CKPT 2				/* then checkpoint */
#define CK_RESTORE 4			/* and restore a new engine from it */
#define CK_LIVE 8				/* live view (before the emit_late) */

typedef struct ck_ctx
{
	const ck_opts *opts;
	const stream *st;
	uint8_t    *plan;
	ck_engine  *eng;			/* [0] plain, [1] A, then the restored */
	int			n_eng;
	uint32_t	acc_size;
	int64_t		g;
	problem		probs[C_COUNT];
	/* keys and event times A accepted since its last checkpoint */
	bool	   *touched;
	int64_t    *tmin;
	int64_t    *tmax;
	int		   *touched_list;
	int			n_touched;
	/* totals, for the summary line */
	int64_t		n_ckpts;
	int64_t		n_saves;
	int64_t		n_live_slices;
	int64_t		n_small;		/* checkpoints saving under a tenth */
	int64_t		n_live_panes;
} ck_ctx;

static void
ck_engine_start(ck_ctx *c, ck_engine *ce, const char *role, wa_emit_fn emit)
{
	const ck_opts *o = c->opts;
	wa_stats	s;

	memset(ce, 0, sizeof(ck_engine));
	snprintf(ce->role, sizeof(ce->role), "%s", role);
	ca_setup(&ce->ca, &ce->al);
	ce->out.keys = &c->st->keys;
	ce->cfg.n_windows = o->n_windows;
	ce->cfg.windows = o->windows;
	ce->cfg.bound = o->bound;
	ce->cfg.lateness = o->lateness;
	ce->cfg.n_aggs = N_AGGS;
	ce->cfg.aggs = test_aggs;
	ce->cfg.byte_keys = c->st->keys.bytes;
	ce->cfg.merge_every_slice = o->merge_every_slice;
	ce->cfg.share_windows = o->share_windows;
	ce->cfg.emit = emit;
	ce->cfg.emit_arg = &ce->out;
	ce->cfg.allocator = &ce->al;
	ce->eng = wa_engine_create(&ce->cfg);
	wa_engine_get_stats(ce->eng, &s);
	ce->base_mem = s.mem_bytes;
}

/* Destroy an engine; everything it allocated must come back. */
static void
ck_engine_end(ck_ctx *c, ck_engine *ce)
{
	wa_engine_destroy(ce->eng);
	ce->eng = NULL;
	if (ce->ca.live_bytes != 0 || ce->ca.errors != 0)
		NOTE(c, C_MEM, "%s: after destroy the allocator holds %" PRId64
			 " bytes; %" PRId64 " misuse(s) %s", ce->role, ce->ca.live_bytes,
			 ce->ca.errors, ce->ca.first_error);
	if (ce->out.n_unknown > 0)
		NOTE(c, C_SAME, "%s: %" PRId64 " pane(s) for keys never ingested",
			 ce->role, ce->out.n_unknown);
	free(ce->out.p);
	ck_table_free(&ce->table);
}

static wa_ingest_result
ck_apply_op(wa_engine *eng, const stream *st, int64_t i)
{
	const stream_op *op = &st->ops[i];
	wa_key		key;

	if (!op->is_event)
	{
		wa_engine_advance(eng, op->advance_to);
		return WA_INGEST_ACCEPTED;
	}
	memset(&key, 0, sizeof(key));
	if (st->keys.bytes)
	{
		key.bytes = st->keys.kbytes[op->key];
		key.len = st->keys.klens[op->key];
	}
	else
		key.ival = st->keys.ivals[op->key];
	return wa_engine_ingest(eng, &key, op->time, &st->values[i * N_INPUTS]);
}

/*
 * Compare what the engines emitted in the current call, then forget it: A
 * against plain exactly and in order, each restored engine against A as a
 * set, with the revision rule of wa_engine_restore_time.
 */
static void
ck_compare_panes(ck_ctx *c, const char *when, int64_t op)
{
	ck_sink    *p = &c->eng[0].out;
	ck_sink    *a = &c->eng[1].out;
	char		x[300];
	char		y[300];

	if (a->n != p->n)
		NOTE(c, C_SAME, "%s op %" PRId64 ": A emitted %" PRId64 " pane(s), "
			 "plain %" PRId64, when, op, a->n, p->n);
	else
	{
		for (int64_t k = 0; k < a->n; k++)
		{
			const ck_pane *u = &a->p[k];
			const ck_pane *v = &p->p[k];

			if (ck_pane_cmp(u, v) != 0 || u->end != v->end ||
				u->revision != v->revision ||
				!ck_results_same(u->results, v->results, true))
			{
				describe_ck_pane(x, sizeof(x), "A", u);
				describe_ck_pane(y, sizeof(y), "plain", v);
				NOTE(c, C_SAME, "%s op %" PRId64 ", pane %" PRId64 ": %s; %s",
					 when, op, k, x, y);
				break;
			}
		}
	}

	for (int b = 2; b < c->n_eng; b++)
	{
		ck_engine  *ce = &c->eng[b];
		ck_sink    *s = &ce->out;
		bool		same_order = s->n == a->n;

		/* sort (the panes are big) only if the orders differ */
		for (int64_t k = 0; k < a->n && same_order; k++)
			same_order = ck_pane_cmp(&a->p[k], &s->p[k]) == 0;
		if (!same_order)
		{
			ck_sort(a->p, (size_t) a->n, sizeof(ck_pane), ck_pane_cmp);
			ck_sort(s->p, (size_t) s->n, sizeof(ck_pane), ck_pane_cmp);
		}
		for (int64_t k = 0; k < a->n || k < s->n; k++)
		{
			const ck_pane *u = k < a->n ? &a->p[k] : NULL;
			const ck_pane *v = k < s->n ? &s->p[k] : NULL;
			bool		ok;

			ok = u != NULL && v != NULL && ck_pane_cmp(u, v) == 0 &&
				u->end == v->end &&
				ck_results_same(u->results, v->results, false);
			/* on time: revision 1 in both; late: never above A's */
			if (ok && u->kind == WA_PANE_ON_TIME)
				ok = u->revision == 1 && v->revision == 1;
			else if (ok)
				ok = v->revision >= 1 && v->revision <= u->revision;
			if (!ok)
			{
				snprintf(x, sizeof(x), "none");
				snprintf(y, sizeof(y), "none");
				if (u != NULL)
					describe_ck_pane(x, sizeof(x), "A", u);
				if (v != NULL)
					describe_ck_pane(y, sizeof(y), ce->role, v);
				NOTE(c, C_RESTORED, "%s op %" PRId64 ": %" PRId64 " vs %"
					 PRId64 " panes; first difference %s; %s", when, op,
					 a->n, s->n, x, y);
				break;
			}
		}
	}
	for (int b = 0; b < c->n_eng; b++)
		c->eng[b].out.n = 0;
}

/*
 * Checkpoint an engine: the saves come back sorted in *saves, after the
 * checks that need nothing else.
 */
static void
ck_take(ck_ctx *c, ck_engine *ce, ck_table *saves, int64_t *expire_below,
		wa_time_state *time)
{
	ck_saves	s;

	memset(&s, 0, sizeof(s));
	s.keys = &c->st->keys;
	s.acc_size = c->acc_size;
	memset(time, 0xA5, sizeof(wa_time_state));
	wa_engine_checkpoint(ce->eng, ck_save, &s, expire_below, time);
	ck_sort(s.t.e, (size_t) s.t.n, sizeof(ck_entry), ck_entry_cmp);
	if (s.n_bad > 0)
		NOTE(c, C_SAVES, "%s: %" PRId64 " bad save(s); first: %s", ce->role,
			 s.n_bad, s.bad);
	for (int64_t i = 0; i < s.t.n; i++)
	{
		if (i > 0 && ck_entry_cmp(&s.t.e[i - 1], &s.t.e[i]) == 0)
			NOTE(c, C_SAVES, "%s: key %d slice %" PRId64 " saved twice in "
				 "one checkpoint", ce->role, s.t.e[i].key, s.t.e[i].slice);
		if (s.t.e[i].slice < *expire_below)
			NOTE(c, C_EXPIRE, "%s: saved key %d slice %" PRId64 " lies below "
				 "expire_below %" PRId64, ce->role, s.t.e[i].key,
				 s.t.e[i].slice, *expire_below);
	}
	*saves = s.t;
}

/* Replay the stream up to op upto into a new engine; dump its whole state. */
static void
ck_replay_dump(ck_ctx *c, int64_t upto, ck_table *dump)
{
	ck_engine	r;
	int64_t		eb;
	wa_time_state time;

	ck_engine_start(c, &r, "replay", ck_discard);
	for (int64_t i = 0; i <= upto; i++)
	{
		ck_apply_op(r.eng, c->st, i);
		if (c->plan[i] & CK_EMIT)
			wa_engine_emit_late(r.eng);
	}
	/* everything has changed since creation: the first checkpoint is all */
	ck_take(c, &r, dump, &eb, &time);
	ck_engine_end(c, &r);
}

/*
 * Restore engine ce from a persisted table, in shuffled or sorted order; it
 * must then hold want_slices slices.
 */
static void
ck_restore(ck_ctx *c, ck_engine *ce, const char *role, const ck_table *from,
		   const wa_time_state *time, rng *r, bool shuffle,
		   int64_t want_slices)
{
	int64_t    *order = malloc(sizeof(int64_t) * (from->n + 1));
	uint8_t		kbuf[256];
	wa_stats	s;
	wa_stats	sa;

	ck_engine_start(c, ce, role, ck_collect);
	for (int64_t i = 0; i < from->n; i++)
		order[i] = i;
	for (int64_t i = from->n - 1; shuffle && i > 0; i--)
	{
		int64_t		j = (int64_t) rng_below(r, (uint64_t) i + 1);
		int64_t		t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	wa_engine_restore_time(ce->eng, time);
	for (int64_t i = 0; i < from->n; i++)
	{
		const ck_entry *en = &from->e[order[i]];
		wa_key		key;

		/* keys come in a buffer reused at once: the engine must copy */
		memset(&key, 0, sizeof(key));
		if (c->st->keys.bytes)
		{
			key.len = c->st->keys.klens[en->key];
			memcpy(kbuf, c->st->keys.kbytes[en->key], key.len);
			key.bytes = kbuf;
		}
		else
			key.ival = c->st->keys.ivals[en->key];
		wa_engine_restore_slice(ce->eng, &key, en->slice, en->acc,
								c->acc_size);
		memset(kbuf, 0xA5, sizeof(kbuf));
	}
	wa_engine_restore_done(ce->eng);
	free(order);

	wa_engine_get_stats(ce->eng, &s);
	wa_engine_get_stats(c->eng[1].eng, &sa);
	if (s.n_slices != (uint64_t) want_slices || s.n_keys != sa.n_keys ||
		s.events_in != 0 || s.panes_on_time != 0)
		NOTE(c, C_TABLE, "%s after restore: %" PRIu64 " slices, %" PRIu64
			 " keys, %" PRIu64 " events in, %" PRIu64 " panes; table has %"
			 PRId64 " slices, A %" PRIu64 " keys", role, s.n_slices, s.n_keys,
			 s.events_in, s.panes_on_time, from->n, sa.n_keys);
	if (wa_engine_watermark(ce->eng) != time->wm)
		NOTE(c, C_OUTCOME, "%s after restore: watermark %s, checkpoint %s",
			 role, i128s(wa_engine_watermark(ce->eng)), i128s(time->wm));
	ck_table_copy(&ce->table, from, c->acc_size);
}

/*
 * The checkpoint after op i: every engine but plain takes one and applies
 * it to its table; the tables must agree with each other and with a full
 * dump; A's saves must stay within what the events since its last
 * checkpoint touched.
 */
static void
ck_checkpoint(ck_ctx *c, int64_t i, rng *r)
{
	ck_engine  *a = &c->eng[1];
	ck_table	saves_a;
	ck_table	dump;
	int64_t		eb_a;
	wa_time_state time_a;
	wa_stats	sa;
	char		buf[300];
	int64_t		k;
	int64_t		saves_n;

	ck_take(c, a, &saves_a, &eb_a, &time_a);
	saves_n = saves_a.n;
	c->n_ckpts++;
	c->n_saves += saves_a.n;

	/* cost: only touched keys, and per key the slices its events spanned */
	for (k = 0; k < saves_a.n;)
	{
		int			key = saves_a.e[k].key;
		int64_t		n = 0;

		for (; k < saves_a.n && saves_a.e[k].key == key; k++)
			n++;
		if (!c->touched[key])
			NOTE(c, C_COST, "op %" PRId64 ": saved %" PRId64 " slice(s) of "
				 "key %d, which no event touched", i, n, key);
		else if ((__int128) n > ((__int128) c->tmax[key] - c->tmin[key]) / c->g + 2)
			NOTE(c, C_COST, "op %" PRId64 ": saved %" PRId64 " slices of key "
				 "%d, whose events spanned [%" PRId64 ", %" PRId64 "]", i, n,
				 key, c->tmin[key], c->tmax[key]);
	}
	for (int t = 0; t < c->n_touched; t++)
		c->touched[c->touched_list[t]] = false;
	c->n_touched = 0;

	/* the restored engines report the same changes and the same time */
	for (int b = 2; b < c->n_eng; b++)
	{
		ck_engine  *ce = &c->eng[b];
		ck_table	saves;
		int64_t		eb;
		wa_time_state time;

		ck_take(c, ce, &saves, &eb, &time);
		if (!ck_table_equal(&saves_a, &saves, c->acc_size, buf, sizeof(buf)))
			NOTE(c, C_SAVES, "op %" PRId64 ": %s saved other slices than A: "
				 "%s", i, ce->role, buf);
		if (eb != eb_a || time.max_ts != time_a.max_ts ||
			time.seen_event != time_a.seen_event || time.wm != time_a.wm)
			NOTE(c, C_SAVES, "op %" PRId64 ": %s checkpoint expire_below %"
				 PRId64 " wm %s max_ts %" PRId64 ", A %" PRId64 " %s %" PRId64,
				 i, ce->role, eb, i128s(time.wm), time.max_ts, eb_a,
				 i128s(time_a.wm), time_a.max_ts);
		ck_table_apply(&ce->table, &saves, eb);
	}
	ck_table_apply(&a->table, &saves_a, eb_a);

	/*
	 * A's table holds every live slice (as many as n_slices, the same as a
	 * full dump) and nothing else: so expire_below deleted no live slice
	 * and left no dead one.
	 */
	wa_engine_get_stats(a->eng, &sa);
	c->n_live_slices += (int64_t) sa.n_slices;
	if (saves_n * 10 < (int64_t) sa.n_slices)
		c->n_small++;
	if (a->table.n != (int64_t) sa.n_slices)
		NOTE(c, C_EXPIRE, "op %" PRId64 ": after deleting below %" PRId64
			 ", the table holds %" PRId64 " slices, the engine %" PRIu64, i,
			 eb_a, a->table.n, sa.n_slices);
	if (time_a.wm != wa_engine_watermark(a->eng))
		NOTE(c, C_SAVES, "op %" PRId64 ": checkpoint wm %s, engine %s", i,
			 i128s(time_a.wm), i128s(wa_engine_watermark(a->eng)));
	/* a replay costs what the stream so far did: only where we restore */
	if (c->plan[i] & CK_RESTORE)
	{
		ck_replay_dump(c, i, &dump);
		if (!ck_table_equal(&a->table, &dump, c->acc_size, buf, sizeof(buf)))
			NOTE(c, C_TABLE, "op %" PRId64 ": A's table vs a full dump: %s",
				 i, buf);
		ck_table_free(&dump);
	}
	for (int b = 2; b < c->n_eng; b++)
		if (!ck_table_equal(&a->table, &c->eng[b].table, c->acc_size, buf,
							sizeof(buf)))
			NOTE(c, C_TABLE, "op %" PRId64 ": A's table vs %s's: %s", i,
				 c->eng[b].role, buf);

	if ((c->plan[i] & CK_RESTORE) && c->n_eng < CK_MAX_ENGINES)
	{
		const ck_engine *from = &c->eng[c->n_eng - 1];
		char		role[16];

		snprintf(role, sizeof(role), "B%d", c->n_eng - 1);
		ck_restore(c, &c->eng[c->n_eng], role, &from->table, &time_a, r,
				   c->n_eng % 2 == 0, from->table.n);
		c->n_eng++;
	}
}

/* The live view after op i, against the reference on ops 0..i. */
static void
ck_live_check(ck_ctx *c, int64_t i)
{
	ck_engine  *a = &c->eng[1];
	ck_sink		l1;
	ck_sink		l2;
	wa_stats	s0;
	wa_stats	s1;
	void	   *scratch = malloc(c->acc_size);
	wa_result	results[N_AGGS];
	ref_config	rc;
	ref_model  *ref;
	wa_tick		wm;
	int64_t		n_expected = 0;
	bool	   *seen;
	char		buf[300];

	memset(&l1, 0, sizeof(l1));
	memset(&l2, 0, sizeof(l2));
	l1.keys = l2.keys = &c->st->keys;
	wa_engine_get_stats(a->eng, &s0);
	wa_engine_live(a->eng, NULL, ck_collect, &l1, scratch, results);
	wa_engine_live(a->eng, NULL, ck_collect, &l2, scratch, results);
	wa_engine_get_stats(a->eng, &s1);
	c->n_live_panes += l1.n;
	if (memcmp(&s0, &s1, sizeof(wa_stats)) != 0)
		NOTE(c, C_LIVE_RO, "op %" PRId64 ": statistics changed (merges %"
			 PRIu64 "->%" PRIu64 ", mem %" PRIu64 "->%" PRIu64 ")", i,
			 s0.merges, s1.merges, s0.mem_bytes, s1.mem_bytes);
	if (l1.n != l2.n || l1.n_unknown != 0)
		NOTE(c, C_LIVE_RO, "op %" PRId64 ": two live views gave %" PRId64
			 " and %" PRId64 " panes (%" PRId64 " for unknown keys)", i, l1.n,
			 l2.n, l1.n_unknown);
	else
		for (int64_t k = 0; k < l1.n; k++)
			if (ck_pane_cmp(&l1.p[k], &l2.p[k]) != 0 ||
				!ck_results_same(l1.p[k].results, l2.p[k].results, true))
			{
				NOTE(c, C_LIVE_RO, "op %" PRId64 ": two live views differ at "
					 "pane %" PRId64, i, k);
				break;
			}

	/* the reference on the stream so far */
	rc.n_windows = c->opts->n_windows;
	rc.windows = c->opts->windows;
	rc.bound = c->opts->bound;
	rc.lateness = c->opts->lateness;
	rc.n_aggs = N_AGGS;
	rc.aggs = test_aggs;
	rc.n_inputs = N_INPUTS;
	ref = ref_create(&rc);
	for (int64_t j = 0; j <= i; j++)
	{
		if (c->st->ops[j].is_event)
			ref_add_event(ref, c->st->ops[j].key, c->st->ops[j].time,
						  &c->st->values[j * N_INPUTS]);
		else
			ref_add_advance(ref, c->st->ops[j].advance_to);
	}
	ref_run(ref);
	wm = ref_op_watermark(ref, i);
	for (int64_t w = 0; w < ref_n_windows(ref); w++)
		if (ref_window_at(ref, w)->end > wm)
			n_expected++;
	seen = calloc((size_t) ref_n_windows(ref) + 1, sizeof(bool));
	for (int64_t k = 0; k < l1.n; k++)
	{
		const ck_pane *p = &l1.p[k];
		int64_t		w = ref_find(ref, p->key, p->window, p->start);
		const ref_window *rw;

		describe_ck_pane(buf, sizeof(buf), "live", p);
		if (p->kind != WA_PANE_ON_TIME || p->revision != 0)
		{
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: not ON_TIME revision 0", i,
				 buf);
			continue;
		}
		if (w < 0)
		{
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: the window has no data", i,
				 buf);
			continue;
		}
		rw = ref_window_at(ref, w);
		if (rw->end <= wm || p->end != rw->end)
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: the window fired already "
				 "(watermark %s)", i, buf, i128s(wm));
		else if (seen[w])
			NOTE(c, C_LIVE, "op %" PRId64 ": %s: reported twice", i, buf);
		else
		{
			char		detail[400];

			seen[w] = true;
			n_expected--;
			if (!results_match(ref, rw, test_aggs, N_AGGS, p->results, detail,
							   sizeof(detail)))
				NOTE(c, C_LIVE, "op %" PRId64 ": %s: %s", i, buf, detail);
		}
	}
	if (n_expected != 0)
		NOTE(c, C_LIVE, "op %" PRId64 ": %" PRId64 " unfired window(s) with "
			 "data missing from the live view (watermark %s)", i, n_expected,
			 i128s(wm));

	/* a restored engine shows the same windows */
	ck_sort(l1.p, (size_t) l1.n, sizeof(ck_pane), ck_pane_cmp);
	for (int b = 2; b < c->n_eng; b++)
	{
		ck_sink		lb;

		memset(&lb, 0, sizeof(lb));
		lb.keys = &c->st->keys;
		wa_engine_live(c->eng[b].eng, NULL, ck_collect, &lb, scratch, results);
		ck_sort(lb.p, (size_t) lb.n, sizeof(ck_pane), ck_pane_cmp);
		if (lb.n != l1.n)
			NOTE(c, C_LIVE, "op %" PRId64 ": live view of %s has %" PRId64
				 " panes, A's %" PRId64, i, c->eng[b].role, lb.n, l1.n);
		else
			for (int64_t k = 0; k < lb.n; k++)
				if (ck_pane_cmp(&l1.p[k], &lb.p[k]) != 0 ||
					!ck_results_same(l1.p[k].results, lb.p[k].results, false))
				{
					NOTE(c, C_LIVE, "op %" PRId64 ": live view of %s differs "
						 "from A's at pane %" PRId64, i, c->eng[b].role, k);
					break;
				}
		free(lb.p);
	}

	free(seen);
	ref_destroy(ref);
	free(l1.p);
	free(l2.p);
	free(scratch);
}

/* Pick the operations after which to checkpoint, restore and look. */
static void
ck_plan(ck_ctx *c, rng *r)
{
	const ck_opts *o = c->opts;
	int64_t		n_ops = c->st->n_ops;
	int64_t    *emits = malloc(sizeof(int64_t) * (n_ops + 1));
	int64_t		n_emits = 0;
	int64_t		events = 0;
	int			n = 0;

	c->plan = calloc((size_t) n_ops + 1, 1);
	for (int64_t i = 0; i < n_ops; i++)
	{
		if (c->st->ops[i].is_event)
			events++;
		if (o->epoch == 0 ||
			(c->st->ops[i].is_event && events % o->epoch == 0))
		{
			c->plan[i] |= CK_EMIT;
			emits[n_emits++] = i;
		}
	}
	/*
	 * Checkpoints only where nothing awaits emit_late (see wa_engine.h).
	 * Each comes with a second one a few emission points later, which must
	 * save only what the few events in between touched.
	 */
	for (int k = 0; k < o->n_ckpt && n_emits > 0; k++)
	{
		int64_t		e = (int64_t) rng_below(r, (uint64_t) n_emits);

		c->plan[emits[e]] |= CK_CKPT;
		if (k % 2 == 1)
			continue;
		e += 1 + (int64_t) rng_below(r, 20);
		if (e < n_emits)
			c->plan[emits[e]] |= CK_CKPT;
	}
	for (int64_t i = 0; i < n_ops; i++)
		if ((c->plan[i] & CK_CKPT) && n++ % 2 == 0)
			c->plan[i] |= CK_RESTORE;
	for (int k = 0; k < o->n_live; k++)
		c->plan[rng_below(r, (uint64_t) n_ops)] |= CK_LIVE;
	free(emits);
}

/*
 * After the flush: nothing is left to save, the persisted table keeps at
 * most slices numbered INT64_MAX (which expire_below cannot reach), and an
 * engine restored from it holds nothing and drops every event.
 */
static void
ck_after_flush(ck_ctx *c, rng *r)
{
	ck_engine  *a = &c->eng[1];
	ck_engine	f;
	ck_table	saves;
	int64_t		eb;
	wa_time_state time;
	wa_stats	s;

	ck_take(c, a, &saves, &eb, &time);
	if (saves.n != 0)
		NOTE(c, C_SAVES, "after the flush: %" PRId64 " slice(s) saved",
			 saves.n);
	ck_table_apply(&a->table, &saves, eb);
	for (int64_t i = 0; i < a->table.n; i++)
		if (a->table.e[i].slice != INT64_MAX)
		{
			NOTE(c, C_EXPIRE, "after the flush: slice %" PRId64 " of key %d "
				 "survives expire_below %" PRId64, a->table.e[i].slice,
				 a->table.e[i].key, eb);
			break;
		}
	ck_restore(c, &f, "F", &a->table, &time, r, true, 0);
	wa_engine_get_stats(f.eng, &s);
	if (s.n_slices != 0 || s.n_keys != 0 || s.mem_bytes != f.base_mem)
		NOTE(c, C_TABLE, "restored after the flush: %" PRIu64 " slices, %"
			 PRIu64 " keys, %" PRIu64 " bytes (%" PRIu64 " when created)",
			 s.n_slices, s.n_keys, s.mem_bytes, f.base_mem);
	for (int64_t i = 0; i < c->st->n_ops && i < 50; i++)
		if (c->st->ops[i].is_event &&
			ck_apply_op(f.eng, c->st, i) != WA_INGEST_DROPPED)
		{
			NOTE(c, C_OUTCOME, "restored after the flush: op %" PRId64
				 " not dropped", i);
			break;
		}
	wa_engine_flush(f.eng);
	if (f.out.n != 0)
		NOTE(c, C_RESTORED, "restored after the flush: %" PRId64 " pane(s)",
			 f.out.n);
	ck_engine_end(c, &f);
}

static void
run_ckpt_stream(const ck_opts *o, const stream *st)
{
	ck_ctx		c;
	rng			r = {o->seed};
	double		t0 = now_seconds();
	char		name[256];

	memset(&c, 0, sizeof(c));
	c.opts = o;
	c.st = st;
	c.eng = calloc(CK_MAX_ENGINES, sizeof(ck_engine));
	c.touched = calloc((size_t) st->keys.n + 1, sizeof(bool));
	c.tmin = calloc((size_t) st->keys.n + 1, sizeof(int64_t));
	c.tmax = calloc((size_t) st->keys.n + 1, sizeof(int64_t));
	c.touched_list = calloc((size_t) st->keys.n + 1, sizeof(int));
	ck_plan(&c, &r);

	ck_engine_start(&c, &c.eng[0], "plain", ck_collect);
	ck_engine_start(&c, &c.eng[1], "A", ck_collect);
	c.n_eng = 2;
	c.acc_size = wa_engine_acc_size(c.eng[1].eng);
	c.g = wa_engine_slice_width(c.eng[1].eng);
	if (c.acc_size != wa_engine_layout(c.eng[1].eng)->acc_size)
		NOTE(&c, C_SAVES, "wa_engine_acc_size %u, layout %u", c.acc_size,
			 wa_engine_layout(c.eng[1].eng)->acc_size);

	for (int64_t i = 0; i < st->n_ops; i++)
	{
		const stream_op *op = &st->ops[i];

		for (int b = 0; b < c.n_eng; b++)
			c.eng[b].res = ck_apply_op(c.eng[b].eng, st, i);
		for (int b = 0; b < c.n_eng; b++)
		{
			if (c.eng[b].res != c.eng[1].res)
				NOTE(&c, C_OUTCOME, "op %" PRId64 ": %s says %s, A %s", i,
					 c.eng[b].role, outcome_name(c.eng[b].res),
					 outcome_name(c.eng[1].res));
			if (wa_engine_watermark(c.eng[b].eng) !=
				wa_engine_watermark(c.eng[1].eng))
				NOTE(&c, C_OUTCOME, "after op %" PRId64 ": %s's watermark %s,"
					 " A's %s", i, c.eng[b].role,
					 i128s(wa_engine_watermark(c.eng[b].eng)),
					 i128s(wa_engine_watermark(c.eng[1].eng)));
		}
		if (op->is_event && c.eng[1].res != WA_INGEST_DROPPED)
		{
			int			k = op->key;

			if (!c.touched[k])
			{
				c.touched[k] = true;
				c.touched_list[c.n_touched++] = k;
				c.tmin[k] = c.tmax[k] = op->time;
			}
			if (op->time < c.tmin[k])
				c.tmin[k] = op->time;
			if (op->time > c.tmax[k])
				c.tmax[k] = op->time;
		}
		ck_compare_panes(&c, "ingest/advance", i);

		if (c.plan[i] & CK_LIVE)
			ck_live_check(&c, i);
		if (c.plan[i] & CK_EMIT)
		{
			for (int b = 0; b < c.n_eng; b++)
				wa_engine_emit_late(c.eng[b].eng);
			ck_compare_panes(&c, "emit_late after", i);
		}
		if (c.plan[i] & CK_CKPT)
			ck_checkpoint(&c, i, &r);
	}

	for (int b = 0; b < c.n_eng; b++)
		wa_engine_flush(c.eng[b].eng);
	ck_compare_panes(&c, "flush after", st->n_ops);
	for (int b = 0; b < c.n_eng; b++)
	{
		wa_stats	s;

		wa_engine_get_stats(c.eng[b].eng, &s);
		if (s.mem_bytes != c.eng[b].base_mem)
			NOTE(&c, C_MEM, "%s after flush: mem_bytes %" PRIu64 ", %" PRIu64
				 " when created", c.eng[b].role, s.mem_bytes,
				 c.eng[b].base_mem);
	}
	ck_after_flush(&c, &r);

	printf("# %s: %" PRId64 " ops, %" PRId64 " checkpoints saving %" PRId64
		   " slices (%" PRId64 " live at the time; %" PRId64 " saved under a "
		   "tenth), %d restores, %" PRId64 " live panes; %.2fs\n", o->name,
		   st->n_ops, c.n_ckpts, c.n_saves, c.n_live_slices, c.n_small,
		   c.n_eng - 2, c.n_live_panes, now_seconds() - t0);
	for (int b = 0; b < c.n_eng; b++)
		ck_engine_end(&c, &c.eng[b]);
	for (int p = 0; p < C_COUNT; p++)
	{
		snprintf(name, sizeof(name), "%s: %s", o->name, ck_problem_names[p]);
		if (c.probs[p].count == 0)
			check(true, name, NULL);
		else
			check(false, name, "%" PRId64 " problem(s); first: %s",
				  c.probs[p].count, c.probs[p].first);
	}
	free(c.eng);
	free(c.plan);
	free(c.touched);
	free(c.tmin);
	free(c.tmax);
	free(c.touched_list);
}

/* Streams for the checkpoint runs: smaller versions of the diff cases. */
static const diff_case ckpt_cases[] = {
	{"ckpt tumbling 10/10", 1, {{10, 10, 0}}, 5, 20, 50, 1000000, 4000, 301,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt hopping 60/10", 1, {{60, 10, 0}}, 30, 60, 20, 0, 20000, 302,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt sliding 60/1", 1, {{60, 1, 0}}, 10, 30, 8, 500, 20000, 303,
	0, 0, false, false, 10000, true, 0, 0},
	{"ckpt hopping 1000/999 origin -17", 1, {{1000, 999, -17}}, 200, 1500, 10,
	0, 200000, 304, 0, 0, false, false, 20000, true, 0, 0},
	{"ckpt multi", MULTI3, 20, 40, 30, 0, 20000, 305,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt lateness 0 hopping 60/10", 1, {{60, 10, 0}}, 30, 0, 20, 0, 20000,
	306, 0, 0, false, false, 20000, false, 0, 0},
	{"ckpt epoch 1000 multi", MULTI3, 20, 40, 30, 0, 20000, 307,
	1000, 0, false, false, 20000, true, 0, 0},
	{"ckpt idle advances multi", MULTI3, 20, 40, 30, 0, 20000, 309,
	0, 777, false, false, 20000, true, 0, 0},
	{"ckpt idle advances far ahead", MULTI3, 20, 40, 30, 0, 20000, 310,
	0, 5000, false, false, 20000, true, 0, 300},
	{"ckpt negative times multi", 2, {{10, 10, 0}, {60, 10, -5}}, 20, 40, 20,
	-30000, 20000, 311, 0, 0, false, false, 20000, true, 0, 0},
	{"ckpt times near INT64_MIN", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MIN + 10, 5000, 312, 0, 0, false, false, 15000, true, 100, 0},
	{"ckpt times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 313, 0, 0, false, false, 15000, true, 100, 0},
	{"ckpt epoch 1000 times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 314, 1000, 0, false, false, 15000, true, 100, 0},
	{"ckpt times near INT64_MAX, slice width 10", 2,
	{{10, 10, 3}, {60, 10, 3}}, 20, 40, 10, INT64_MAX - 5000, 5000, 315,
	0, 0, false, false, 15000, true, 100, 0},
	{"ckpt aligned 10/20/40@20/60@10", 4,
	{{10, 10, 0}, {20, 20, 0}, {40, 20, 0}, {60, 10, 0}}, 20, 40, 30, 0, 20000,
	321, 0, 0, false, false, 20000, true, 0, 0},
	{"ckpt epoch 1000 aligned 10/20/40@20/60@10", 4,
	{{10, 10, 0}, {20, 20, 0}, {40, 20, 0}, {60, 10, 0}}, 20, 40, 30, 0, 20000,
	322, 1000, 0, false, false, 20000, true, 0, 0},
	{"ckpt one key multi", MULTI3, 20, 40, 1, 0, 20000, 316,
	0, 0, false, false, 20000, true, 0, 0},
	{"ckpt 20000 distinct keys", 1, {{10, 10, 0}}, 5, 20, 20000, 0, 20000,
	317, 0, 0, false, true, 40000, true, 0, 0},
	{"ckpt byte keys multi", MULTI3, 20, 40, 200, 0, 20000, 318,
	0, 0, true, false, 20000, true, 0, 0},
	{"ckpt epoch 1000 byte keys", 1, {{60, 10, 0}}, 30, 60, 200, 0, 20000, 319,
	1000, 0, true, false, 20000, true, 0, 0},
	{"ckpt duplicate specs, origin INT64_MAX", 3,
	{{10, 10, 0}, {10, 10, 0}, {60, 10, INT64_MAX}}, 20, 40, 20, 0, 20000, 320,
	0, 0, false, false, 20000, true, 0, 0},
};

static void
run_ckpt_case(const diff_case *dc)
{
	stream		st;
	ck_opts		o;
	int			n_keys = diff_case_stream(dc, &st);

	memset(&o, 0, sizeof(o));
	o.name = dc->name;
	o.n_windows = dc->n_windows;
	o.windows = dc->windows;
	o.bound = dc->bound;
	o.lateness = dc->lateness;
	o.epoch = dc->epoch;
	o.seed = dc->seed * 7919;
	o.n_ckpt = 6;
	o.n_live = 3;
	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, st.n_events, n_keys);
	run_ckpt_stream(&o, &st);

	/*
	 * Restored engines start with empty rings of kept instances: shared
	 * windows must still give the same panes.
	 */
	if (dc->n_windows > 1)
	{
		char		name[160];

		snprintf(name, sizeof(name), "%s (shared windows)", dc->name);
		o.name = name;
		o.share_windows = true;
		run_ckpt_stream(&o, &st);
	}
	stream_free(&st);
}

/* Checkpoint runs on the streams of the int64-extreme tests. */
static void
test_ckpt_extremes(void)
{
	static const wa_window huge_windows[] = {{10, 10, 0}, {7, 7, 1},
	{1000, 999, 3}};
	stream		st;
	ck_opts		o;

	memset(&o, 0, sizeof(o));
	o.n_ckpt = 6;
	o.n_live = 3;

	make_huge_stream(&st, scaled(5000), 401);
	o.name = "ckpt bound and lateness INT64_MAX";
	o.n_windows = 3;
	o.windows = huge_windows;
	o.bound = INT64_MAX;
	o.lateness = INT64_MAX;
	o.seed = 402;
	run_ckpt_stream(&o, &st);
	o.name = "ckpt bound INT64_MAX, lateness INT64_MAX-100";
	o.lateness = INT64_MAX - 100;
	o.seed = 403;
	run_ckpt_stream(&o, &st);
	stream_free(&st);

	make_full_range_stream(&st, scaled(8000), 404);
	o.name = "ckpt full int64 range, slice width 1";
	o.n_windows = 2;
	o.windows = full_range_g1;
	o.bound = (int64_t) 1 << 58;
	o.lateness = (int64_t) 1 << 61;
	o.seed = 405;
	run_ckpt_stream(&o, &st);
	o.name = "ckpt full int64 range, slice width 2^60";
	o.windows = full_range_g60;
	o.seed = 406;
	run_ckpt_stream(&o, &st);
	stream_free(&st);
}

/* ---------- scripted checkpoint tests, on mini engines with int keys ---------- */

static void
mini_save(void *arg, const wa_key *key, int64_t slice, const void *acc,
		  uint32_t acc_size)
{
	ck_table_add(arg, (int) key->ival, slice, acc, acc_size);
}

/* Checkpoint m into table t (applying the saves); returns how many. */
static int64_t
mini_checkpoint(mini *m, ck_table *t, int64_t *expire_below,
				wa_time_state *time)
{
	ck_table	saves;
	int64_t		n;

	memset(&saves, 0, sizeof(saves));
	wa_engine_checkpoint(m->eng, mini_save, &saves, expire_below, time);
	n = saves.n;
	ck_sort(saves.e, (size_t) saves.n, sizeof(ck_entry), ck_entry_cmp);
	ck_table_apply(t, &saves, *expire_below);
	return n;
}

/* A fresh mini engine like src, restored from table t and time. */
static void
mini_restore(mini *dst, const mini *src, const ck_table *t,
			 const wa_time_state *time)
{
	mini_init(dst, src->cfg.windows, src->cfg.n_windows, src->cfg.bound,
			  src->cfg.lateness);
	wa_engine_restore_time(dst->eng, time);
	/* backwards, to exercise the sort */
	for (int64_t i = t->n; i-- > 0;)
	{
		wa_key		k = {t->e[i].key, NULL, 0};

		wa_engine_restore_slice(dst->eng, &k, t->e[i].slice, t->e[i].acc,
								wa_engine_acc_size(dst->eng));
	}
	wa_engine_restore_done(dst->eng);
}

/*
 * The cost of a checkpoint follows the changes: with 100,000 live keys, a
 * checkpoint after a few events on three keys saves three slices, and one
 * after nothing saves nothing.
 */
static void
test_checkpoint_cost(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	int64_t		n1;
	int64_t		n2;
	int64_t		n3;
	int64_t		n4;
	wa_result	res[N_AGGS];
	bool		value_ok = false;

	memset(&t, 0, sizeof(t));
	mini_init(&m, win, 1, 100, 1000000);
	for (int64_t k = 1; k <= 100000; k++)
		mini_ingest(&m, k, 5, 1, 0);
	n1 = mini_checkpoint(&m, &t, &eb, &time);
	for (int i = 0; i < 10; i++)
		mini_ingest(&m, 1 + i % 3, 6 + i % 3, 1, 0);
	n2 = mini_checkpoint(&m, &t, &eb, &time);
	n3 = mini_checkpoint(&m, &t, &eb, &time);
	mini_ingest(&m, 0, 17, 1, 0);	/* a new key, a new slice */
	mini_ingest(&m, 2, 25, 1, 0);	/* key 2: a second slice */
	n4 = mini_checkpoint(&m, &t, &eb, &time);
	check(n1 == 100000 && n2 == 3 && n3 == 0 && n4 == 2,
		  "checkpoint cost: 100000 keys, then 3 touched, then none, then 2",
		  "saved %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, n1, n2, n3,
		  n4);
	/* key 1 got events 0, 3, 6, 9 on top of its first: five in slice 0 */
	for (int64_t i = 0; i < t.n; i++)
		if (t.e[i].key == 1 && t.e[i].slice == 0)
		{
			wa_acc_finalize(wa_engine_layout(m.eng), t.e[i].acc, res);
			value_ok = res[AGG_COUNT_STAR].count == 5;
		}
	check(value_ok && t.n == 100002,
		  "checkpoint cost: the table holds every slice, with the new values",
		  "%" PRId64 " entries", t.n);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "checkpoint cost: memory released", NULL);
	ck_table_free(&t);
}

/*
 * A restored engine: windows that fired do not fire again, the others
 * fire as usual, and the first late pane after the restore reports
 * revision 2 whatever came before (wa_engine_restore_time).
 */
static void
test_restore_scripted(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		a;
	mini		b;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	wa_stats	s;

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 0, 20);
	mini_ingest(&a, 1, 5, 1, 0);
	mini_ingest(&a, 1, 15, 2, 0);	/* fires [0,10), revision 1 */
	mini_ingest(&a, 1, 7, 4, 0);	/* late */
	wa_engine_emit_late(a.eng);		/* [0,10) revision 2 */
	mini_checkpoint(&a, &t, &eb, &time);
	check(t.n == 2 && eb == -1 && time.wm == 15 && time.max_ts == 15 &&
		  time.seen_event,
		  "restore: checkpoint holds two slices and the time state",
		  "%" PRId64 " slices, expire_below %" PRId64 ", wm %s", t.n, eb,
		  i128s(time.wm));

	mini_restore(&b, &a, &t, &time);
	wa_engine_get_stats(b.eng, &s);
	check(s.n_keys == 1 && s.n_slices == 2 && s.events_in == 0 &&
		  wa_engine_watermark(b.eng) == 15,
		  "restore: one key, two slices, watermark 15, counters at zero",
		  "%" PRIu64 " keys, %" PRIu64 " slices", s.n_keys, s.n_slices);

	/* the same late event into both */
	mini_ingest(&a, 1, 8, 8, 0);
	mini_ingest(&b, 1, 8, 8, 0);
	wa_engine_emit_late(a.eng);
	wa_engine_emit_late(b.eng);
	check(a.n_panes == 3 && a.last.revision == 3 && b.n_panes == 1 &&
		  b.last.kind == WA_PANE_LATE && b.last.start == 0 &&
		  b.last.revision == 2 &&
		  b.last_results[AGG_SUM_A].sum == 13 &&
		  a.last_results[AGG_SUM_A].sum == 13,
		  "restore: late pane of a fired window, revision 3 vs 2 after "
		  "restore, same value", "A revision %" PRId64 ", B %" PRId64
		  " (%" PRId64 " panes)", a.last.revision, b.last.revision,
		  b.n_panes);

	/* the flush fires [10,20) once in each, and not [0,10) again */
	wa_engine_flush(a.eng);
	wa_engine_flush(b.eng);
	check(b.n_panes == 2 && b.last.kind == WA_PANE_ON_TIME &&
		  b.last.start == 10 && b.last.revision == 1 &&
		  b.last_results[AGG_SUM_A].sum == 2 && a.n_panes == 4,
		  "restore: only the unfired window fires after the restore",
		  "%" PRId64 " panes, last [%s,%s)", b.n_panes, i128s(b.last.start),
		  i128s(b.last.end));
	check(mini_done(&a) && mini_done(&b), "restore: memory released", NULL);
	ck_table_free(&t);
}

/*
 * A checkpoint is read, not trusted: restore_slice refuses an accumulator
 * that no events could have built (a negative or absurd count, a count
 * beyond the slice's events, a sum beyond what that many int64 values add
 * up to, a variance over a count that is not a whole number), keeping
 * nothing of it, and takes one at the limits.  The fields are set by their layout in wa_agg.c, not
 * through the engine.
 */
static void
test_restore_refuses_invalid(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	enum
	{
		AGG_COUNT_A = 1,		/* indexes into test_aggs */
		AGG_AVG_B = 6,
		AGG_VAR_F = 14
	};
	mini		a;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	uint32_t	size;
	const uint32_t *offsets;
	const int64_t max_count = (int64_t) 1 << 62;
	struct
	{
		const char *what;
		int			agg;		/* -1: the event count, the header */
		int			field;		/* byte offset in the state */
		int			kind;		/* 0 int64, 1 double, 2 int128 */
		double		value;		/* for doubles */
		int64_t		ivalue;
		bool		valid;
	}			cases[] = {
		{"the event count negative", -1, 0, 0, 0, -1, false},
		{"the event count 2^62 + 1", -1, 0, 0, 0, max_count + 1, false},
		{"the event count 2^62", -1, 0, 0, 0, max_count, true},
		{"count(x) negative", AGG_COUNT_A, 0, 0, 0, INT64_MIN, false},
		{"avg's count negative", AGG_AVG_B, 16, 0, 0, -5, false},
		{"avg's sum beyond n * 2^63", AGG_AVG_B, 0, 2, 0, 0, false},
		{"variance over half an event", AGG_VAR_F, 0, 1, 0.5, 0, false},
		{"variance over NaN events", AGG_VAR_F, 0, 1, NAN, 0, false},
		{"variance over more events than the slice holds", AGG_VAR_F, 0, 1, 2.0, 0, false},
		{"count(x) of every event", AGG_COUNT_A, 0, 0, 0, 1, true},
		{"count(x) beyond the events", AGG_COUNT_A, 0, 0, 0, 2, false},
	};

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 0, 0);
	mini_ingest(&a, 1, 5, 3, 1.5);
	mini_checkpoint(&a, &t, &eb, &time);
	size = wa_engine_acc_size(a.eng);
	offsets = wa_engine_layout(a.eng)->offsets;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		mini		b;
		uint8_t    *acc = malloc(size);
		uint8_t    *field;
		wa_key		k = {1, NULL, 0};
		wa_stats	s;
		bool		taken;
		char		name[200];

		memcpy(acc, t.e[0].acc, size);
		field = acc + (cases[i].agg < 0 ? 0 : offsets[cases[i].agg]) +
			cases[i].field;
		if (cases[i].kind == 0)
			memcpy(field, &cases[i].ivalue, sizeof(int64_t));
		else if (cases[i].kind == 1)
			memcpy(field, &cases[i].value, sizeof(double));
		else
		{
			/* the state's own count is 1: a sum of 2^63 + 1 is too much */
			wa_int128	sum = ((wa_int128) 1 << 63) + 1;

			memcpy(field, &sum, sizeof(sum));
		}
		mini_init(&b, win, 1, 0, 0);
		wa_engine_restore_time(b.eng, &time);
		taken = wa_engine_restore_slice(b.eng, &k, t.e[0].slice, acc, size);
		wa_engine_restore_done(b.eng);
		wa_engine_get_stats(b.eng, &s);
		snprintf(name, sizeof(name), "restore: %s is %s", cases[i].what,
				 cases[i].valid ? "taken" : "refused");
		check(taken == cases[i].valid && s.n_slices == (cases[i].valid ? 1 : 0),
			  name, "restore_slice returned %d, %" PRIu64 " slices", taken,
			  s.n_slices);
		wa_engine_flush(b.eng);
		snprintf(name, sizeof(name), "restore: memory released (%s)",
				 cases[i].what);
		check(mini_done(&b), name, NULL);
		free(acc);
	}
	wa_engine_flush(a.eng);
	check(mini_done(&a), "restore: memory released", NULL);
	ck_table_free(&t);
}

/*
 * expire_below at the ends of int64: INT64_MIN before any event; with a
 * slice width of 1, slice INT64_MAX exists, and once it expires
 * expire_below stops at INT64_MAX, so the table keeps it: a restore must
 * ignore it.
 */
static void
test_checkpoint_int64_ends(void)
{
	static const wa_window win[] = {{1, 1, 0}};
	mini		a;
	mini		b;
	mini		c;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	wa_time_state time_live;
	wa_stats	s;
	int64_t		n;

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 0, 0);
	n = mini_checkpoint(&a, &t, &eb, &time);
	check(n == 0 && eb == INT64_MIN && time.wm == WA_TICK_MIN &&
		  !time.seen_event,
		  "int64 ends: checkpoint before any event",
		  "%" PRId64 " saves, expire_below %" PRId64 ", wm %s", n, eb,
		  i128s(time.wm));

	mini_ingest(&a, 1, INT64_MAX, 1, 0);
	n = mini_checkpoint(&a, &t, &eb, &time_live);
	check(n == 1 && t.n == 1 && t.e[0].slice == INT64_MAX && eb == INT64_MAX,
		  "int64 ends: slice INT64_MAX saved, expire_below INT64_MAX",
		  "%" PRId64 " saves, expire_below %" PRId64, n, eb);

	/* restored before it expired: it still fires */
	mini_restore(&c, &a, &t, &time_live);
	wa_engine_flush(c.eng);
	check(c.n_panes == 1 && c.last.start == INT64_MAX &&
		  c.last_results[AGG_COUNT_STAR].count == 1,
		  "int64 ends: restored slice INT64_MAX fires",
		  "%" PRId64 " panes", c.n_panes);

	wa_engine_advance(a.eng, WA_TICK_MAX);
	n = mini_checkpoint(&a, &t, &eb, &time);
	check(n == 0 && eb == INT64_MAX && time.wm == WA_TICK_MAX && t.n == 1,
		  "int64 ends: after it expired, expire_below stays INT64_MAX",
		  "%" PRId64 " saves, expire_below %" PRId64 ", %" PRId64
		  " left in the table", n, eb, t.n);
	mini_restore(&b, &a, &t, &time);
	wa_engine_get_stats(b.eng, &s);
	check(s.n_slices == 0 && s.n_keys == 0 &&
		  mini_ingest(&b, 1, INT64_MAX, 1, 0) == WA_INGEST_DROPPED,
		  "int64 ends: restore ignores the expired slice",
		  "%" PRIu64 " slices, %" PRIu64 " keys", s.n_slices, s.n_keys);
	wa_engine_flush(b.eng);
	check(b.n_panes == 0, "int64 ends: nothing fires after that restore",
		  "%" PRId64 " panes", b.n_panes);
	wa_engine_flush(a.eng);
	check(mini_done(&a) && mini_done(&b) && mini_done(&c),
		  "int64 ends: memory released", NULL);
	ck_table_free(&t);
}

/*
 * Restore tolerates what a table scan may hand it: slices in any order and
 * a slice given twice (one copy is kept).
 */
static void
test_restore_order(void)
{
	static const wa_window win[] = {{60, 10, 0}};
	mini		a;
	mini		b;
	ck_table	t;
	int64_t		eb;
	wa_time_state time;
	wa_stats	s;
	rng			r = {99};
	int64_t		pa;
	int64_t    *order;

	memset(&t, 0, sizeof(t));
	mini_init(&a, win, 1, 1000, 1000);
	for (int i = 0; i < 2000; i++)
		mini_ingest(&a, (int64_t) rng_below(&r, 5),
					(int64_t) rng_below(&r, 1000), 1, 0);
	mini_checkpoint(&a, &t, &eb, &time);

	order = malloc(sizeof(int64_t) * (t.n + 1));
	for (int64_t i = 0; i < t.n; i++)
		order[i] = i;
	for (int64_t i = t.n - 1; i > 0; i--)
	{
		int64_t		j = (int64_t) rng_below(&r, (uint64_t) i + 1);
		int64_t		x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	mini_init(&b, win, 1, 1000, 1000);
	wa_engine_restore_time(b.eng, &time);
	for (int64_t i = 0; i < t.n; i++)
	{
		/* every slice in a random order, every tenth one twice */
		int64_t		j = order[i];
		wa_key		k = {t.e[j].key, NULL, 0};

		wa_engine_restore_slice(b.eng, &k, t.e[j].slice, t.e[j].acc,
								wa_engine_acc_size(b.eng));
		if (i % 10 == 0)
			wa_engine_restore_slice(b.eng, &k, t.e[j].slice, t.e[j].acc,
									wa_engine_acc_size(b.eng));
	}
	wa_engine_restore_done(b.eng);
	free(order);
	wa_engine_get_stats(b.eng, &s);
	check(s.n_slices == (uint64_t) t.n && s.n_keys == 5,
		  "restore order: any order, repeats dropped",
		  "%" PRIu64 " slices for %" PRId64, s.n_slices, t.n);
	pa = a.n_panes;
	wa_engine_flush(a.eng);
	wa_engine_flush(b.eng);
	check(b.n_panes == a.n_panes - pa && b.n_panes > 0,
		  "restore order: the restored engine fires what the original does",
		  "%" PRId64 " vs %" PRId64, b.n_panes, a.n_panes - pa);
	check(mini_done(&a) && mini_done(&b), "restore order: memory released",
		  NULL);
	ck_table_free(&t);
}

int
main(int argc, char **argv)
{
	double		t0 = now_seconds();
	const char *only = argc > 1 ? argv[1] : NULL;

	if (only == NULL)
	{
		test_checkpoint_cost();
		test_restore_scripted();
		test_restore_refuses_invalid();
		test_checkpoint_int64_ends();
		test_restore_order();
	}
	/* every case, or those whose name starts with the argument */
	for (size_t i = 0; i < sizeof(ckpt_cases) / sizeof(ckpt_cases[0]); i++)
		if (only == NULL ||
			strncmp(ckpt_cases[i].name, only, strlen(only)) == 0)
			run_ckpt_case(&ckpt_cases[i]);
	if (only == NULL || strncmp("ckpt extremes", only, strlen(only)) == 0)
		test_ckpt_extremes();
	printf("# total %.1fs\n", now_seconds() - t0);
	return tap_done();
}
