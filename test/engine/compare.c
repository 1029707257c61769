/*-------------------------------------------------------------------------
 *
 * compare.c
 *	  Run a stream through the engine and the brute-force reference, and
 *	  compare.
 *
 * run_stream() feeds a stream to the engine and to the model in reference.c
 * and compares everything wa_engine.h promises: the ingest result of every
 * event, the watermark after every operation, the set of (key, window)
 * pairs that produce panes, the final value of each (the last revision
 * emitted), the revision sequence and pane kinds, when on-time panes fire,
 * how many late panes each window gets, the statistics, and the memory:
 * nothing live after a flush, mem_bytes back to its creation value, every
 * byte returned to the allocator by destroy, every free with the size
 * allocated.  One check per property.
 *
 * Two emission modes: "batch" calls wa_engine_emit_late after every
 * operation, so each late event yields exactly one late pane per window it
 * refines; "epoch N" calls it after every N events, and each window may get
 * at most one late pane per epoch.  A window whose first data arrives after
 * the watermark passed its end counts as already fired: its first pane is a
 * LATE pane (revision 1).
 *
 * test/engine/compare.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef enum problem_kind
{
	P_OUTCOME,
	P_WM,
	P_PANE,
	P_SET,
	P_VALUE,
	P_REV,
	P_KIND,
	P_FIRE,
	P_LATE,
	P_STATS,
	P_MEM,
	P_COUNT
} problem_kind;

static const char *const problem_names[P_COUNT] = {
	"ingest results", "watermark", "panes well-formed", "window set",
	"final values", "revisions", "pane kinds", "on-time firing",
	"late panes", "stats", "memory released"
};

/* Per reference window: what the engine emitted for it so far. */
typedef struct wtrack
{
	int64_t		last_rev;
	int64_t		n_late_panes;
	int64_t		last_late_epoch;
	bool		last_matched;
	wa_result  *bad;			/* copy of the last pane if it mismatched */
} wtrack;

typedef struct run_ctx
{
	const run_opts *opts;
	const wa_agg_spec *aggs;	/* the run's aggregate list */
	int			n_aggs;
	const stream *st;
	ref_model  *ref;
	wtrack	   *track;
	int64_t		phase;			/* 2*op: the op; 2*op+1: emit_late after it;
								 * 2*n_ops: the flush */
	int64_t		epoch;
	int64_t		n_on_time;
	int64_t		n_late;
	problem		probs[P_COUNT];
	logged_pane *log;
	int64_t		n_log;
	int64_t		cap_log;
} run_ctx;

static void
describe_window(char *buf, size_t len, const ref_window *rw)
{
	snprintf(buf, len, "key %d window %d [%s,%s)", rw->key, rw->spec,
			 i128s(rw->start), i128s(rw->end));
}

static bool
float_matches(double got, const ref_value *rv)
{
	double		diff;
	double		tol;

	if (isnan(got) || isinf(got))
		return false;
	diff = fabs((double) got - rv->f);
	tol = 1e-9 * fmax(fabs(rv->f), rv->scale);
	return diff <= tol;
}

/*
 * Compare an emitted pane's results with the reference's final value of the
 * window; on mismatch describe the first differing aggregate in buf.
 */
bool
results_match(const ref_model *ref, const ref_window *rw,
			  const wa_agg_spec *aggs, int n_aggs,
			  const wa_result *res, char *buf, size_t len)
{
	for (int a = 0; a < n_aggs; a++)
	{
		wa_agg_kind kind = aggs[a].kind;
		const wa_result *g = &res[a];
		ref_value	rv;
		bool		ok = true;

		ref_value_of(ref, rw, a, &rv);
		switch (kind)
		{
			case WA_AGG_COUNT_STAR:
			case WA_AGG_COUNT:
				ok = !g->isnull && g->count == rv.count;
				break;
			case WA_AGG_SUM_INT:
				ok = g->isnull == rv.isnull && (rv.isnull || g->sum == rv.sum);
				break;
			case WA_AGG_AVG_INT:
				ok = g->isnull == rv.isnull &&
					(rv.isnull || (g->sum == rv.sum && g->count == rv.count));
				break;
			case WA_AGG_SUM_DECIMAL:
			case WA_AGG_AVG_DECIMAL:
				ok = g->isnull == rv.isnull &&
					(rv.isnull || (g->sum == rv.sum && g->count == rv.count &&
								   g->i == rv.i));
				break;
			case WA_AGG_MIN_INT:
			case WA_AGG_MAX_INT:
				ok = g->isnull == rv.isnull && (rv.isnull || g->i == rv.i);
				break;
			default:
				ok = g->isnull == rv.isnull &&
					(rv.isnull || float_matches(g->f, &rv));
				break;
		}
		if (!ok)
		{
			if (buf != NULL)
				snprintf(buf, len,
						 "aggregate %d (%s): got null=%d count=%" PRId64
						 " i=%" PRId64 " sum=%s f=%.17g; want null=%d "
						 "count=%" PRId64 " i=%" PRId64 " sum=%s f=%.17g",
						 a, kind_name(kind), g->isnull, g->count, g->i,
						 i128s(g->sum), g->f, rv.isnull, rv.count, rv.i,
						 i128s(rv.sum), rv.f);
			return false;
		}
	}
	return true;
}

static void
collect_pane(void *arg, const wa_pane *pane)
{
	run_ctx    *c = arg;
	const run_opts *o = c->opts;
	const wa_window *spec;
	const ref_window *rw;
	wtrack	   *t;
	int64_t		w;
	int			key;
	wa_tick		rel;
	int64_t		flush_phase = 2 * ref_n_ops(c->ref);

	if (pane->kind == WA_PANE_ON_TIME)
		c->n_on_time++;
	else if (pane->kind == WA_PANE_LATE)
		c->n_late++;
	else
		NOTE(c, P_PANE, "pane of unknown kind %d", (int) pane->kind);

	key = keytab_find(&c->st->keys, &pane->key);
	if (key < 0)
	{
		NOTE(c, P_PANE, "pane for a key never ingested (ival %" PRId64
			 ", len %u)", pane->key.ival, pane->key.len);
		return;
	}
	if (pane->window < 0 || pane->window >= o->n_windows)
	{
		NOTE(c, P_PANE, "pane for window index %d", pane->window);
		return;
	}
	spec = &o->windows[pane->window];
	rel = pane->start - (wa_tick) spec->origin;
	if (pane->end - pane->start != spec->size || rel % spec->slide != 0)
		NOTE(c, P_PANE, "key %d window %d: pane [%s,%s) is not a window of "
			 "size %" PRId64 " slide %" PRId64 " origin %" PRId64,
			 key, pane->window, i128s(pane->start), i128s(pane->end),
			 spec->size, spec->slide, spec->origin);
	if (pane->results == NULL)
	{
		NOTE(c, P_PANE, "pane without results");
		return;
	}

	if (o->log_panes)
	{
		logged_pane *lp;

		if (c->n_log == c->cap_log)
		{
			c->cap_log = c->cap_log ? c->cap_log * 2 : 64;
			c->log = realloc(c->log, sizeof(logged_pane) * c->cap_log);
		}
		lp = &c->log[c->n_log++];
		lp->key = key;
		lp->window = pane->window;
		lp->start = pane->start;
		lp->end = pane->end;
		lp->kind = pane->kind;
		lp->revision = pane->revision;
		lp->phase = c->phase;
		memcpy(lp->results, pane->results, sizeof(wa_result) * c->n_aggs);
	}

	w = ref_find(c->ref, key, pane->window, pane->start);
	if (w < 0)
	{
		NOTE(c, P_SET, "engine emitted key %d window %d [%s,%s), which "
			 "accepted no event (phase %" PRId64 ", revision %" PRId64 ")",
			 key, pane->window, i128s(pane->start), i128s(pane->end),
			 c->phase, pane->revision);
		return;
	}
	rw = ref_window_at(c->ref, w);
	t = &c->track[w];

	if (pane->revision != t->last_rev + 1)
		NOTE(c, P_REV, "key %d window %d [%s,%s): revision %" PRId64
			 " after %" PRId64 " (phase %" PRId64 ")", key, pane->window,
			 i128s(pane->start), i128s(pane->end), pane->revision,
			 t->last_rev, c->phase);

	if (t->last_rev == 0)
	{
		/*
		 * A window that had data before the watermark reached its end must
		 * fire on time, in the operation that moved the watermark there.
		 * A window whose first data came after the watermark passed its end
		 * counts as fired already (end <= watermark), so that data is a
		 * refinement: its first pane is LATE, from emit_late.
		 */
		if (rw->n_ontime == 0 && pane->kind != WA_PANE_LATE)
			NOTE(c, P_KIND, "key %d window %d [%s,%s): first data came late "
				 "but the first pane is ON_TIME", key, pane->window,
				 i128s(pane->start), i128s(pane->end));
		if (rw->n_ontime > 0)
		{
			int64_t		want = 2 * rw->fire_op;

			if (pane->kind != WA_PANE_ON_TIME)
				NOTE(c, P_KIND, "key %d window %d [%s,%s): first pane is LATE "
					 "though it had on-time data", key, pane->window,
					 i128s(pane->start), i128s(pane->end));
			if (c->phase != want)
				NOTE(c, P_FIRE, "key %d window %d [%s,%s): on-time pane in "
					 "phase %" PRId64 ", expected %" PRId64 " (op %" PRId64
					 ", watermark after it %s)", key, pane->window,
					 i128s(pane->start), i128s(pane->end), c->phase, want,
					 rw->fire_op,
					 rw->fire_op < ref_n_ops(c->ref) ?
					 i128s(ref_op_watermark(c->ref, rw->fire_op)) : "flush");
		}
	}
	else if (pane->kind != WA_PANE_LATE)
		NOTE(c, P_KIND, "key %d window %d [%s,%s): revision %" PRId64
			 " is not LATE", key, pane->window, i128s(pane->start),
			 i128s(pane->end), pane->revision);

	if (pane->kind == WA_PANE_LATE)
	{
		t->n_late_panes++;
		if (t->last_late_epoch == c->epoch)
			NOTE(c, P_LATE, "key %d window %d [%s,%s): two late panes in one "
				 "emission epoch (%" PRId64 ")", key, pane->window,
				 i128s(pane->start), i128s(pane->end), c->epoch);
		t->last_late_epoch = c->epoch;

		/*
		 * With emit_late after every event nothing stays dirty across
		 * operations, so a refinement can only come from emit_late.
		 */
		if (o->epoch == 0 && c->phase % 2 == 0 && c->phase != flush_phase)
			NOTE(c, P_LATE, "key %d window %d [%s,%s): late pane emitted "
				 "during op %" PRId64 ", not by emit_late", key, pane->window,
				 i128s(pane->start), i128s(pane->end), c->phase / 2);
	}
	t->last_rev = pane->revision;

	t->last_matched = results_match(c->ref, rw, c->aggs, c->n_aggs,
									pane->results, NULL, 0);
	if (t->last_matched)
	{
		free(t->bad);
		t->bad = NULL;
	}
	else
	{
		if (t->bad == NULL)
			t->bad = malloc(sizeof(wa_result) * N_AGGS);
		memcpy(t->bad, pane->results, sizeof(wa_result) * c->n_aggs);
	}
}

void
run_result_free(run_result *rr)
{
	free(rr->log);
	free(rr->outcomes);
	memset(rr, 0, sizeof(run_result));
}

static void
report(const run_opts *o, run_ctx *c, problem_kind cat)
{
	char		name[256];

	snprintf(name, sizeof(name), "%s: %s", o->name, problem_names[cat]);
	if (c->probs[cat].count == 0)
		check(true, name, NULL);
	else
		check(false, name, "%" PRId64 " problem(s); first: %s",
			  c->probs[cat].count, c->probs[cat].first);
}

/* Declared and described in harness.h. */
void
run_stream(const run_opts *o, const stream *st, run_result *rr)
{
	ref_config	rc;
	ref_model  *ref;
	run_ctx		c;
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_engine  *eng;
	const char *msg;
	int64_t		n_ops = st->n_ops;
	int64_t		events_seen = 0;
	int64_t		max_mem = 0;
	int64_t		n_wins;
	uint8_t    *scratch;
	wa_stats	stats;
	uint64_t	base_mem;
	char		mem_detail[200];
	bool		mem_ok;
	double		t_ref;
	double		t_start;
	double		t_engine;
	char		name[256];
	char		buf[200];
	wa_agg_spec ref_aggs[N_AGGS];
	wa_agg_generic generic;

	if (rr != NULL)
		memset(rr, 0, sizeof(run_result));

	/* the reference first: it sees the stream exactly as the engine will */
	t_ref = now_seconds();
	rc.n_windows = o->n_windows;
	rc.windows = o->windows;
	rc.bound = o->bound;
	rc.lateness = o->lateness;
	rc.n_aggs = o->aggs != NULL ? o->n_aggs : N_AGGS;
	/* the reference computes generic aggregates as their kernels */
	for (int a = 0; a < rc.n_aggs; a++)
	{
		ref_aggs[a] = (o->aggs != NULL ? o->aggs : test_aggs)[a];
		ref_aggs[a].kind = test_generic_as(&ref_aggs[a]);
	}
	rc.aggs = ref_aggs;
	rc.n_inputs = N_INPUTS;
	ref = ref_create(&rc);
	for (int64_t i = 0; i < n_ops; i++)
	{
		if (st->ops[i].is_event)
			ref_add_event(ref, st->ops[i].key, st->ops[i].time,
						  &st->values[i * N_INPUTS]);
		else
			ref_add_advance(ref, st->ops[i].advance_to);
	}
	ref_run(ref);
	n_wins = ref_n_windows(ref);
	t_ref = now_seconds() - t_ref;

	/*
	 * At reduced sizes (valgrind) a stream may be too short to show every
	 * kind of event; the property is about the generator, so skip it then.
	 */
	if (o->expect_mix && opt_int("WA_TEST_EVENTS", 100000) >= 100000)
	{
		int64_t		n_late_windows = 0;
		bool		can_partial = o->n_windows > 1;

		/* only overlapping windows can disagree about one event */
		for (int j = 0; j < o->n_windows; j++)
			if (o->windows[j].size > o->windows[j].slide)
				can_partial = true;
		for (int64_t w = 0; w < n_wins; w++)
			if (ref_window_at(ref, w)->n_late > 0)
				n_late_windows++;
		snprintf(name, sizeof(name), "%s: stream has late,%s dropped events",
				 o->name, can_partial ? " partial and" : "");
		check(n_late_windows > 0 && ref_count_outcome(ref, REF_DROPPED) > 0 &&
			  (!can_partial || ref_count_outcome(ref, REF_PARTIAL) > 0), name,
			  "late windows %" PRId64 ", partial %" PRId64 ", dropped %" PRId64,
			  n_late_windows, ref_count_outcome(ref, REF_PARTIAL),
			  ref_count_outcome(ref, REF_DROPPED));
	}

	memset(&c, 0, sizeof(c));
	c.opts = o;
	c.aggs = rc.aggs;
	c.n_aggs = rc.n_aggs;
	c.st = st;
	c.ref = ref;
	c.track = calloc((size_t) (n_wins + 1), sizeof(wtrack));
	for (int64_t w = 0; w < n_wins; w++)
		c.track[w].last_late_epoch = -1;

	ca_setup(&ca, &al);
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = o->n_windows;
	cfg.windows = o->windows;
	cfg.bound = o->bound;
	cfg.lateness = o->lateness;
	cfg.n_aggs = rc.n_aggs;
	cfg.aggs = o->aggs != NULL ? o->aggs : test_aggs;
	test_generic_init(&generic, cfg.aggs);
	cfg.generic = &generic;
	cfg.byte_keys = st->keys.bytes;
	cfg.emit = collect_pane;
	cfg.emit_arg = &c;
	cfg.allocator = &al;
	cfg.merge_every_slice = o->merge_every_slice;
	cfg.share_windows = o->share_windows;

	snprintf(name, sizeof(name), "%s: config accepted", o->name);
	msg = wa_config_check(&cfg);
	check(msg == NULL, name, "%s", msg ? msg : "");
	if (msg != NULL)
	{
		free(c.track);
		ref_destroy(ref);
		return;
	}

	/*
	 * Byte keys are handed over in a scratch buffer that is overwritten
	 * right after each ingest: the engine must keep its own copy.
	 */
	scratch = malloc(256);
	if (rr != NULL)
		rr->outcomes = calloc((size_t) (n_ops + 1), sizeof(wa_ingest_result));

	t_start = now_seconds();
	eng = wa_engine_create(&cfg);
	wa_engine_get_stats(eng, &stats);
	base_mem = stats.mem_bytes;
	if (wa_engine_watermark(eng) != WA_TICK_MIN)
		NOTE(&c, P_WM, "watermark before any event is %s, not WA_TICK_MIN",
			 i128s(wa_engine_watermark(eng)));

	for (int64_t i = 0; i < n_ops; i++)
	{
		const stream_op *op = &st->ops[i];
		wa_tick		wm;

		c.phase = 2 * i;
		if (op->is_event)
		{
			wa_key		key;
			wa_ingest_result res;
			wa_ingest_result want;

			memset(&key, 0, sizeof(key));
			if (st->keys.bytes)
			{
				key.len = st->keys.klens[op->key];
				memcpy(scratch, st->keys.kbytes[op->key], key.len);
				key.bytes = scratch;
			}
			else
				key.ival = st->keys.ivals[op->key];

			res = wa_engine_ingest(eng, &key, op->time,
								   &st->values[i * N_INPUTS]);
			if (st->keys.bytes)
				memset(scratch, 0xA5, 256);
			if (rr != NULL)
				rr->outcomes[i] = res;

			switch (ref_op_outcome(ref, i))
			{
				case REF_ACCEPTED:
					want = WA_INGEST_ACCEPTED;
					break;
				case REF_PARTIAL:
					want = WA_INGEST_PARTIAL;
					break;
				default:
					want = WA_INGEST_DROPPED;
					break;
			}
			if (res != want)
				NOTE(&c, P_OUTCOME, "op %" PRId64 " (key %d, t=%" PRId64
					 "): engine %s, reference %s; watermark before it %s",
					 i, op->key, op->time, outcome_name(res),
					 outcome_name(want),
					 i > 0 ? i128s(ref_op_watermark(ref, i - 1)) : "-inf");
			events_seen++;
		}
		else
			wa_engine_advance(eng, op->advance_to);

		wm = wa_engine_watermark(eng);
		if (wm != ref_op_watermark(ref, i) &&
			!(ref_op_watermark(ref, i) == REF_NEG_INF && wm == WA_TICK_MIN))
			NOTE(&c, P_WM, "after op %" PRId64 ": engine %s, reference %s", i,
				 i128s(wm), i128s(ref_op_watermark(ref, i)));

		if (i % 4096 == 0)
		{
			wa_engine_get_stats(eng, &stats);
			if ((int64_t) stats.mem_bytes > max_mem)
				max_mem = (int64_t) stats.mem_bytes;
			if ((int64_t) stats.mem_bytes > ca.live_bytes)
				NOTE(&c, P_STATS, "after op %" PRId64 ": mem_bytes %" PRIu64
					 " but the allocator has only %" PRId64 " live", i,
					 stats.mem_bytes, ca.live_bytes);
		}

		if (o->epoch == 0 || (op->is_event && events_seen % o->epoch == 0))
		{
			c.phase = 2 * i + 1;
			wa_engine_emit_late(eng);
			c.epoch++;
		}
	}

	c.phase = 2 * n_ops;
	c.epoch++;
	wa_engine_flush(eng);
	t_engine = now_seconds() - t_start;

	/* what the engine must have done, window by window */
	for (int64_t w = 0; w < n_wins; w++)
	{
		const ref_window *rw = ref_window_at(ref, w);
		wtrack	   *t = &c.track[w];
		int64_t		want_revs = (rw->n_ontime > 0 ? 1 : 0) + rw->n_late;

		describe_window(buf, sizeof(buf), rw);
		if (t->last_rev == 0)
		{
			NOTE(&c, P_SET, "%s accepted %" PRId64 " event(s) but was never "
				 "emitted", buf, rw->count_star);
			continue;
		}
		if (!t->last_matched)
		{
			char		detail[500];

			if (t->bad != NULL)
				results_match(ref, rw, c.aggs, c.n_aggs, t->bad, detail,
							  sizeof(detail));
			else
				snprintf(detail, sizeof(detail), "?");
			NOTE(&c, P_VALUE, "%s (revision %" PRId64 "): %s", buf,
				 t->last_rev, detail);
		}
		if (o->epoch == 0)
		{
			/* one pane per firing plus one per late event, exactly */
			if (t->last_rev != want_revs)
				NOTE(&c, P_LATE, "%s: %" PRId64 " revision(s), expected %"
					 PRId64 " (%" PRId64 " on-time, %" PRId64 " late events)",
					 buf, t->last_rev, want_revs, rw->n_ontime, rw->n_late);
		}
		else
		{
			if (rw->n_late == 0 && t->n_late_panes > 0)
				NOTE(&c, P_LATE, "%s: late pane though no event came late",
					 buf);
			if (rw->n_late > 0 && t->n_late_panes == 0)
				NOTE(&c, P_LATE, "%s: %" PRId64 " late event(s) but no late "
					 "pane", buf, rw->n_late);
			if (t->last_rev > want_revs)
				NOTE(&c, P_LATE, "%s: %" PRId64 " revisions for %" PRId64
					 " changes", buf, t->last_rev, want_revs);
		}
		free(t->bad);
		t->bad = NULL;
	}

	/* statistics, and that a flushed engine holds nothing */
	wa_engine_get_stats(eng, &stats);
	if (stats.events_in != (uint64_t) st->n_events ||
		stats.events_partial != (uint64_t) ref_count_outcome(ref, REF_PARTIAL) ||
		stats.events_dropped != (uint64_t) ref_count_outcome(ref, REF_DROPPED))
		NOTE(&c, P_STATS, "events in/partial/dropped %" PRIu64 "/%" PRIu64
			 "/%" PRIu64 ", expected %" PRId64 "/%" PRId64 "/%" PRId64,
			 stats.events_in, stats.events_partial, stats.events_dropped,
			 st->n_events, ref_count_outcome(ref, REF_PARTIAL),
			 ref_count_outcome(ref, REF_DROPPED));
	if (stats.panes_on_time != (uint64_t) c.n_on_time ||
		stats.panes_late != (uint64_t) c.n_late)
		NOTE(&c, P_STATS, "panes on-time/late %" PRIu64 "/%" PRIu64
			 ", callback saw %" PRId64 "/%" PRId64, stats.panes_on_time,
			 stats.panes_late, c.n_on_time, c.n_late);
	if ((int64_t) stats.peak_mem_bytes < max_mem)
		NOTE(&c, P_STATS, "peak_mem_bytes %" PRIu64 " below an observed %"
			 PRId64, stats.peak_mem_bytes, max_mem);
	if (stats.n_slices != 0 || stats.n_keys != 0 || stats.n_late_windows != 0)
		NOTE(&c, P_MEM, "after flush: n_slices %" PRIu64 ", n_keys %" PRIu64
			 ", n_late_windows %" PRIu64, stats.n_slices, stats.n_keys,
			 stats.n_late_windows);

	/*
	 * After a flush the engine holds exactly what it held when created
	 * (wa_engine.h): mem_bytes is back to its creation value, and the
	 * allocator agrees that nothing more is held.
	 */
	mem_ok = stats.mem_bytes == base_mem &&
		ca.live_bytes == (int64_t) base_mem;
	snprintf(mem_detail, sizeof(mem_detail), "mem_bytes %" PRIu64 ", %" PRIu64
			 " when created; allocator holds %" PRId64 " bytes in %" PRId64
			 " blocks", stats.mem_bytes, base_mem, ca.live_bytes,
			 ca.live_blocks);

	/* every event after the flush is dropped, and emits nothing */
	if (st->n_events > 0)
	{
		static const int64_t times[] = {INT64_MIN, 0, INT64_MAX};
		int64_t		panes = c.n_on_time + c.n_late;
		wa_key		key;
		wa_value	v[N_INPUTS];

		memset(&key, 0, sizeof(key));
		memset(v, 0, sizeof(v));
		if (st->keys.bytes)
		{
			key.bytes = st->keys.kbytes[0];
			key.len = st->keys.klens[0];
		}
		else
			key.ival = st->keys.ivals[0];
		for (int i = 0; i < 3; i++)
		{
			wa_ingest_result res = wa_engine_ingest(eng, &key, times[i], v);

			if (res != WA_INGEST_DROPPED)
				NOTE(&c, P_OUTCOME, "event at %" PRId64 " after the flush: %s",
					 times[i], outcome_name(res));
		}
		wa_engine_emit_late(eng);
		wa_engine_flush(eng);
		if (c.n_on_time + c.n_late != panes)
			NOTE(&c, P_PANE, "%" PRId64 " pane(s) after the flush",
				 c.n_on_time + c.n_late - panes);
	}
	if (rr != NULL)
		rr->stats = stats;

	wa_engine_destroy(eng);
	if (ca.live_bytes != 0 || ca.live_blocks != 0 || ca.errors != 0)
		NOTE(&c, P_MEM, "after destroy the allocator holds %" PRId64
			 " bytes in %" PRId64 " blocks; %" PRId64 " misuse(s)%s%s",
			 ca.live_bytes, ca.live_blocks, ca.errors,
			 ca.errors ? ": " : "", ca.first_error);

	if (!o->quiet)
		printf("# %s: %" PRId64 " events (%" PRId64 " partial, %" PRId64
			   " dropped), %" PRId64 " windows, %" PRId64 " on-time + %" PRId64
			   " late panes, peak %" PRIu64 " bytes; reference %.2fs, engine"
			   " and checks %.2fs\n",
			   o->name, st->n_events, ref_count_outcome(ref, REF_PARTIAL),
			   ref_count_outcome(ref, REF_DROPPED), n_wins, c.n_on_time,
			   c.n_late, stats.peak_mem_bytes, t_ref, t_engine);

	for (int p = 0; p < P_COUNT; p++)
		report(o, &c, (problem_kind) p);
	snprintf(name, sizeof(name), "%s: flush returns memory to its creation "
			 "size", o->name);
	check(mem_ok, name, "%s", mem_detail);

	if (rr != NULL)
	{
		rr->ran = true;
		rr->log = c.log;
		rr->n_log = c.n_log;
		c.log = NULL;
	}
	free(c.log);
	free(c.track);
	free(scratch);
	ref_destroy(ref);
}

