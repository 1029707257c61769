/*-------------------------------------------------------------------------
 *
 * test_cases.c
 *	  Scripted unit tests of the windowing engine.
 *
 * Each test pins down an edge case with one short stream written by hand:
 * late events within and past allowed lateness, the lateness boundaries,
 * partial ingests, windows expiring dirty, idle-time advances, NaN, empty
 * byte keys, keys with nothing due, an empty engine, the default allocator
 * and the coverage plan's memory.  Some run through run_stream() against the
 * reference and look at the logged panes; others drive a "mini" engine by
 * hand between operations.  Also wa_config_check and the slice width, and
 * that the engine's assertions (wa_assert.h) are on in this build.
 *
 * Output is TAP (tap.h).
 *
 * test/engine/test_cases.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void
push_event(stream *st, int64_t keyval, int64_t t, int64_t a, double f)
{
	wa_value	v[N_INPUTS];
	int			key = keytab_add(&st->keys, keyval, NULL, 0);

	memset(v, 0, sizeof(v));
	v[IN_A].i = a;
	v[IN_B].i = a;
	v[IN_F].f = f;
	stream_event(st, key, t, v);
}

static const logged_pane *
find_pane(const run_result *rr, int window, wa_tick start, int64_t revision)
{
	for (int64_t i = 0; i < rr->n_log; i++)
		if (rr->log[i].window == window && rr->log[i].start == start &&
			rr->log[i].revision == revision)
			return &rr->log[i];
	return NULL;
}

static int64_t
count_panes(const run_result *rr, int window, wa_tick start)
{
	int64_t		n = 0;

	for (int64_t i = 0; i < rr->n_log; i++)
		if (rr->log[i].window == window && rr->log[i].start == start)
			n++;
	return n;
}

/*
 * A late event within lateness refines an already-fired window: the engine
 * emits a LATE pane, revision 2, with the full new value, from emit_late.
 */
static void
test_late_within_lateness(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	stream		st;
	run_opts	o;
	run_result	rr;
	const logged_pane *p1;
	const logged_pane *p2;

	stream_init(&st, false);
	push_event(&st, 1, 5, 10, 0.5);		/* op 0: window [0,10) */
	push_event(&st, 1, 15, 20, 1.5);	/* op 1: wm 15, fires [0,10) */
	push_event(&st, 1, 7, 30, 2.5);		/* op 2: late, within lateness */

	memset(&o, 0, sizeof(o));
	o.name = "late within lateness";
	o.n_windows = 1;
	o.windows = win;
	o.bound = 0;
	o.lateness = 20;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		p1 = find_pane(&rr, 0, 0, 1);
		p2 = find_pane(&rr, 0, 0, 2);
		check(p1 != NULL && p1->kind == WA_PANE_ON_TIME && p1->phase == 2 &&
			  p1->results[AGG_COUNT_STAR].count == 1 &&
			  p1->results[AGG_SUM_A].sum == 10,
			  "late within lateness: on-time pane of [0,10) when wm reaches 15",
			  "pane %s", p1 ? "has wrong kind, phase or value" : "missing");
		check(rr.outcomes[2] == WA_INGEST_ACCEPTED,
			  "late within lateness: ingest says ACCEPTED", "got %s",
			  outcome_name(rr.outcomes[2]));
		check(p2 != NULL && p2->kind == WA_PANE_LATE && p2->phase == 5 &&
			  p2->results[AGG_COUNT_STAR].count == 2 &&
			  p2->results[AGG_SUM_A].sum == 40,
			  "late within lateness: LATE pane revision 2 with the full value",
			  "pane %s (kind %d phase %" PRId64 " count %" PRId64 ")",
			  p2 ? "wrong" : "missing", p2 ? (int) p2->kind : -1,
			  p2 ? p2->phase : -1,
			  p2 ? p2->results[AGG_COUNT_STAR].count : -1);
		check(count_panes(&rr, 0, 0) == 2,
			  "late within lateness: exactly two panes for [0,10)",
			  "%" PRId64 " panes", count_panes(&rr, 0, 0));
	}
	run_result_free(&rr);
	stream_free(&st);
}

/*
 * Late panes of a hopping window emitted through the two-stack: the cache
 * keeps the value of the last fired windows that may take late data, so a
 * late pane of one of them costs no merge; its value must still be the sum
 * over every event of the window, late ones included.  Window 60/10
 * (6 slices), bound 0, lateness 30: after events at 0..99 the watermark is
 * 99, [30, 90) is the last window fired and those ending at or before 69
 * are closed; a late event at 55 refines [10, 70), [20, 80) and [30, 90).
 */
static void
test_late_from_kept(void)
{
	static const wa_window win[] = {{60, 10, 0}};
	mini		m;
	wa_stats	before;
	wa_stats	after;
	int64_t		expect_sum = 1000;

	mini_init(&m, win, 1, 0, 30);
	for (int64_t t = 0; t < 100; t++)
		mini_ingest(&m, 1, t, t, 0.0);
	for (int64_t t = 10; t < 70; t++)
		expect_sum += t;
	mini_ingest(&m, 1, 55, 1000, 0.0);
	wa_engine_get_stats(m.eng, &before);
	m.n_panes = 0;
	wa_engine_emit_late(m.eng);
	wa_engine_get_stats(m.eng, &after);
	check(m.n_panes == 3 && after.merges == before.merges,
		  "late from kept: three late panes, no merge",
		  "%" PRId64 " panes, %" PRIu64 " merges", m.n_panes,
		  after.merges - before.merges);
	/* the walk marks the latest window first, so [10, 70) comes last */
	check(m.last.kind == WA_PANE_LATE && m.last.start == 10 &&
		  m.last_results[AGG_COUNT_STAR].count == 61 &&
		  m.last_results[AGG_SUM_A].sum == expect_sum,
		  "late from kept: window [10, 70) holds all 61 events",
		  "start %" PRId64 " count %" PRId64, (int64_t) m.last.start,
		  m.last_results[AGG_COUNT_STAR].count);
	check(mini_done(&m), "late from kept: memory released", "leak");
}

/*
 * An event past allowed lateness is dropped and changes nothing: no pane,
 * no state, no watermark move; the windows' final values exclude it.
 */
static void
test_past_lateness(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_stats	before;
	wa_stats	after;
	wa_tick		wm_before;
	wa_ingest_result res;
	int64_t		panes_before;
	stream		st;
	run_opts	o;
	run_result	rr;
	const logged_pane *p;

	mini_init(&m, win, 1, 0, 20);
	mini_ingest(&m, 1, 5, 1, 0);
	mini_ingest(&m, 1, 15, 1, 0);
	mini_ingest(&m, 1, 7, 1, 0);
	wa_engine_emit_late(m.eng);
	mini_ingest(&m, 1, 40, 1, 0);	/* wm 40: [0,10) closes for good */
	wa_engine_emit_late(m.eng);

	wa_engine_get_stats(m.eng, &before);
	wm_before = wa_engine_watermark(m.eng);
	panes_before = m.n_panes;
	res = mini_ingest(&m, 1, 3, 1000, 0);
	wa_engine_emit_late(m.eng);
	wa_engine_get_stats(m.eng, &after);

	check(res == WA_INGEST_DROPPED, "past lateness: ingest says DROPPED",
		  "got %s", outcome_name(res));
	check(m.n_panes == panes_before, "past lateness: no pane emitted",
		  "%" PRId64 " pane(s)", m.n_panes - panes_before);
	check(after.n_slices == before.n_slices && after.n_keys == before.n_keys &&
		  after.mem_bytes == before.mem_bytes &&
		  after.n_late_windows == before.n_late_windows &&
		  wa_engine_watermark(m.eng) == wm_before,
		  "past lateness: state and watermark unchanged",
		  "slices %" PRIu64 "->%" PRIu64 ", keys %" PRIu64 "->%" PRIu64
		  ", mem %" PRIu64 "->%" PRIu64, before.n_slices, after.n_slices,
		  before.n_keys, after.n_keys, before.mem_bytes, after.mem_bytes);
	check(after.events_dropped == before.events_dropped + 1 &&
		  after.events_in == before.events_in + 1,
		  "past lateness: counted as dropped",
		  "events_dropped %" PRIu64 "->%" PRIu64, before.events_dropped,
		  after.events_dropped);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "past lateness: memory released", NULL);

	/* the same stream against the reference, to see the final values */
	stream_init(&st, false);
	push_event(&st, 1, 5, 1, 0);
	push_event(&st, 1, 15, 1, 0);
	push_event(&st, 1, 7, 1, 0);
	push_event(&st, 1, 40, 1, 0);
	push_event(&st, 1, 3, 1000, 0);
	memset(&o, 0, sizeof(o));
	o.name = "past lateness (differential)";
	o.n_windows = 1;
	o.windows = win;
	o.bound = 0;
	o.lateness = 20;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		p = find_pane(&rr, 0, 0, 2);
		check(rr.outcomes[4] == WA_INGEST_DROPPED && p != NULL &&
			  p->results[AGG_SUM_A].sum == 2 && count_panes(&rr, 0, 0) == 2,
			  "past lateness: [0,10) keeps value 2 in revision 2", NULL);
	}
	run_result_free(&rr);
	stream_free(&st);
}

/*
 * Lateness boundaries: a window accepts iff end + lateness > watermark, and
 * fires when the watermark equals its end.
 */
static void
test_boundaries(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_ingest_result r1;
	wa_ingest_result r2;
	int64_t		panes;

	mini_init(&m, win, 1, 0, 5);
	mini_ingest(&m, 1, 3, 1, 0);
	panes = m.n_panes;
	mini_ingest(&m, 1, 10, 1, 0);	/* wm == 10 == end of [0,10) */
	check(m.n_panes == panes + 1 && m.last.start == 0 &&
		  m.last.kind == WA_PANE_ON_TIME && m.last.revision == 1,
		  "boundary: window fires when the watermark equals its end",
		  "%" PRId64 " pane(s)", m.n_panes - panes);
	mini_ingest(&m, 1, 14, 1, 0);	/* wm 14 */
	r1 = mini_ingest(&m, 1, 9, 1, 0);	/* 10 + 5 > 14: accepted */
	wa_engine_emit_late(m.eng);
	check(r1 == WA_INGEST_ACCEPTED && m.last.start == 0 &&
		  m.last.kind == WA_PANE_LATE && m.last.revision == 2 &&
		  m.last_results[AGG_COUNT_STAR].count == 2,
		  "boundary: end + lateness = wm + 1 accepts", "got %s",
		  outcome_name(r1));
	mini_ingest(&m, 1, 15, 1, 0);	/* wm 15 */
	panes = m.n_panes;
	r2 = mini_ingest(&m, 1, 8, 1, 0);	/* 10 + 5 > 15 is false */
	wa_engine_emit_late(m.eng);
	check(r2 == WA_INGEST_DROPPED && m.n_panes == panes,
		  "boundary: end + lateness = wm drops", "got %s, %" PRId64 " panes",
		  outcome_name(r2), m.n_panes - panes);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "boundary: memory released", NULL);
}

/*
 * In a hopping spec an event can be too late for an older window and in
 * time for a newer one: PARTIAL, and only the newer window counts it.
 */
static void
test_partial(void)
{
	static const wa_window hop[] = {{20, 10, 0}};
	static const wa_window two[] = {{10, 10, 0}, {30, 30, 0}};
	stream		st;
	run_opts	o;
	run_result	rr;
	const logged_pane *p;

	stream_init(&st, false);
	push_event(&st, 1, 25, 1, 0);	/* op 0: wm 25 */
	push_event(&st, 1, 15, 2, 0);	/* op 1: [0,20) closed, [10,30) open */
	memset(&o, 0, sizeof(o));
	o.name = "partial hopping 20/10";
	o.n_windows = 1;
	o.windows = hop;
	o.bound = 0;
	o.lateness = 0;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		check(rr.outcomes[1] == WA_INGEST_PARTIAL,
			  "partial hopping 20/10: ingest says PARTIAL", "got %s",
			  outcome_name(rr.outcomes[1]));
		p = find_pane(&rr, 0, 10, 1);
		check(p != NULL && p->results[AGG_COUNT_STAR].count == 2 &&
			  count_panes(&rr, 0, 0) == 0,
			  "partial hopping 20/10: only [10,30) counts the event", NULL);
	}
	run_result_free(&rr);
	stream_free(&st);

	/* across specs: closed for the 10-tick window, open for the 30-tick one */
	stream_init(&st, false);
	push_event(&st, 7, 12, 1, 0);	/* op 0: wm 12 */
	push_event(&st, 7, 5, 1, 0);	/* op 1: [0,10) closed, [0,30) open */
	push_event(&st, 7, 31, 1, 0);	/* op 2: wm 31 fires [0,30) */
	memset(&o, 0, sizeof(o));
	o.name = "partial across specs";
	o.n_windows = 2;
	o.windows = two;
	o.log_panes = true;
	run_stream(&o, &st, &rr);
	if (rr.ran)
	{
		p = find_pane(&rr, 1, 0, 1);
		check(rr.outcomes[1] == WA_INGEST_PARTIAL && p != NULL &&
			  p->results[AGG_COUNT_STAR].count == 2 && p->phase == 4,
			  "partial across specs: PARTIAL, [0,30) counts it", "got %s",
			  outcome_name(rr.outcomes[1]));
	}
	run_result_free(&rr);
	stream_free(&st);
}

/* A dirty window about to expire is emitted before its slices go. */
static void
test_late_at_expiry(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	int64_t		panes;

	mini_init(&m, win, 1, 0, 20);
	mini_ingest(&m, 1, 5, 1, 0);
	mini_ingest(&m, 1, 15, 1, 0);	/* fires [0,10) */
	mini_ingest(&m, 1, 7, 1, 0);	/* dirties it; no emit_late */
	panes = m.n_panes;
	mini_ingest(&m, 2, 100, 1, 0);	/* wm 100: [0,10) expires */
	check(m.n_panes > panes, "late at expiry: dirty window emitted on expiry",
		  "no pane during the ingest that expired it");
	if (m.n_panes > panes)
	{
		/* the expired window's pane may be followed by [10,20)'s */
		check(m.ca.errors == 0, "late at expiry: allocator used correctly",
			  "%s", m.ca.first_error);
	}
	wa_engine_emit_late(m.eng);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "late at expiry: memory released", NULL);

	/* the same through the differential runner, in epoch mode */
	{
		stream		st;
		run_opts	o;
		run_result	rr;
		const logged_pane *p;

		stream_init(&st, false);
		push_event(&st, 1, 5, 1, 0);
		push_event(&st, 1, 15, 1, 0);
		push_event(&st, 1, 7, 1, 0);
		push_event(&st, 2, 100, 1, 0);
		memset(&o, 0, sizeof(o));
		o.name = "late at expiry (differential, epoch 1000)";
		o.n_windows = 1;
		o.windows = win;
		o.lateness = 20;
		o.epoch = 1000;
		o.log_panes = true;
		run_stream(&o, &st, &rr);
		if (rr.ran)
		{
			p = find_pane(&rr, 0, 0, 2);
			check(p != NULL && p->kind == WA_PANE_LATE && p->phase == 6 &&
				  p->results[AGG_COUNT_STAR].count == 2,
				  "late at expiry: revision 2 emitted during the expiring ingest",
				  "%s", p ? "wrong phase, kind or value" : "missing");
		}
		run_result_free(&rr);
		stream_free(&st);
	}
}

/* Idle-time advances fire windows and make later events late. */
static void
test_advance(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_ingest_result r;
	int64_t		panes;

	mini_init(&m, win, 1, 0, 0);
	check(wa_engine_watermark(m.eng) == WA_TICK_MIN,
		  "advance: watermark starts at WA_TICK_MIN", "%s",
		  i128s(wa_engine_watermark(m.eng)));
	mini_ingest(&m, 1, 5, 1, 0);
	check(wa_engine_watermark(m.eng) == 5, "advance: watermark follows events",
		  "%s", i128s(wa_engine_watermark(m.eng)));
	panes = m.n_panes;
	wa_engine_advance(m.eng, 10);
	check(m.n_panes == panes + 1 && m.last.start == 0 &&
		  wa_engine_watermark(m.eng) == 10,
		  "advance: moving the watermark to 10 fires [0,10)",
		  "%" PRId64 " pane(s), wm %s", m.n_panes - panes,
		  i128s(wa_engine_watermark(m.eng)));
	wa_engine_advance(m.eng, 3);
	check(wa_engine_watermark(m.eng) == 10,
		  "advance: a watermark behind is a no-op", "%s",
		  i128s(wa_engine_watermark(m.eng)));
	r = mini_ingest(&m, 1, 7, 1, 0);
	check(r == WA_INGEST_DROPPED, "advance: later event for [0,10) dropped",
		  "got %s", outcome_name(r));
	wa_engine_advance(m.eng, WA_TICK_MAX);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "advance: memory released", NULL);
}

/*
 * Byte keys by hand: an empty key passed with no buffer at all (bytes NULL,
 * len 0) must be the same key as an empty key with a buffer, and distinct
 * from "\0"; under UBSan this also checks that no libc call gets the NULL.
 */
static void
test_byte_keys_empty(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	static const uint8_t zero[1] = {0};
	mini		m;
	wa_key		k;
	wa_value	v[N_INPUTS];
	wa_stats	s;

	memset(&m, 0, sizeof(m));
	ca_setup(&m.ca, &m.al);
	m.cfg.n_windows = 1;
	m.cfg.windows = win;
	m.cfg.n_aggs = N_AGGS;
	m.cfg.aggs = test_aggs;
	m.cfg.byte_keys = true;
	m.cfg.emit = mini_emit;
	m.cfg.emit_arg = &m;
	m.cfg.allocator = &m.al;
	m.eng = wa_engine_create(&m.cfg);
	memset(v, 0, sizeof(v));
	memset(&k, 0, sizeof(k));

	k.bytes = NULL;
	k.len = 0;
	wa_engine_ingest(m.eng, &k, 1, v);
	k.bytes = zero;
	k.len = 0;
	wa_engine_ingest(m.eng, &k, 2, v);
	k.bytes = NULL;
	wa_engine_ingest(m.eng, &k, 3, v);
	k.bytes = zero;
	k.len = 1;
	wa_engine_ingest(m.eng, &k, 4, v);
	wa_engine_get_stats(m.eng, &s);
	check(s.n_keys == 2, "byte keys: empty key with and without a buffer is "
		  "one key, \"\\0\" another", "%" PRIu64 " keys", s.n_keys);
	wa_engine_flush(m.eng);
	check(m.n_panes == 2, "byte keys: two panes for the two keys",
		  "%" PRId64 " panes", m.n_panes);
	check(mini_done(&m), "byte keys: memory released", NULL);
}

/*
 * Keys with nothing due are never visited: 1000 idle keys whose only window
 * fired early stay put while one busy key drives the watermark through
 * 2000 window ends.  A scan of every key at every advance would make
 * millions of visits; the heap makes about one per due deadline.
 */
static void
test_key_visits(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;
	wa_stats	s;

	mini_init(&m, win, 1, 0, 1000000);
	for (int64_t k = 1; k <= 1000; k++)
		mini_ingest(&m, k, 5, 1, 0);
	for (int64_t t = 6; t < 20006; t++)
		mini_ingest(&m, 0, t, 1, 0);
	wa_engine_get_stats(m.eng, &s);
	printf("# key visits: %" PRIu64 "\n", s.key_visits);
	check(s.key_visits <= 4000 && m.n_panes == 1000 + 2000,
		  "key visits: idle keys are not visited on every advance",
		  "%" PRIu64 " key visits, %" PRId64 " panes", s.key_visits,
		  m.n_panes);
	wa_engine_flush(m.eng);
	check(mini_done(&m), "key visits: memory released", NULL);
}

/* NaN sorts above every number in min/max, as in SQL. */
static void
test_nan(void)
{
	static const wa_window win[] = {{10, 10, 0}};
	mini		m;

	mini_init(&m, win, 1, 0, 0);
	mini_ingest(&m, 1, 1, 0, 2.5);
	mini_ingest(&m, 1, 2, 0, NAN);
	mini_ingest(&m, 1, 3, 0, -1.0);
	wa_engine_flush(m.eng);
	check(m.n_panes == 1 && isnan(m.last_results[AGG_MAX_F].f) &&
		  m.last_results[AGG_MIN_F].f == -1.0,
		  "nan: max is NaN, min ignores it",
		  "min %g max %g", m.last_results[AGG_MIN_F].f,
		  m.last_results[AGG_MAX_F].f);
	check(mini_done(&m), "nan: memory released", NULL);
}

static void
test_empty(void)
{
	static const wa_window win[] = {{10, 10, 0}, {60, 10, 0}};
	mini		m;
	wa_stats	s;
	wa_config	cfg;
	wa_engine  *eng;

	mini_init(&m, win, 2, 5, 5);
	wa_engine_emit_late(m.eng);
	wa_engine_flush(m.eng);
	wa_engine_get_stats(m.eng, &s);
	check(m.n_panes == 0, "empty input: flush emits nothing", "%" PRId64
		  " pane(s)", m.n_panes);
	check(s.events_in == 0 && s.panes_on_time == 0 && s.panes_late == 0 &&
		  s.n_keys == 0 && s.n_slices == 0 && s.n_late_windows == 0,
		  "empty input: stats are zero after flush",
		  "keys %" PRIu64 " slices %" PRIu64, s.n_keys, s.n_slices);
	check(s.mem_bytes == (uint64_t) m.ca.live_bytes,
		  "empty input: mem_bytes is what the allocator holds",
		  "mem_bytes %" PRIu64 ", allocator %" PRId64, s.mem_bytes,
		  m.ca.live_bytes);
	check(mini_done(&m), "empty input: memory released", NULL);

	/* and with the default allocator, create/flush/destroy with no events */
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 1;
	cfg.windows = win;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.emit = mini_emit;
	cfg.emit_arg = &m;
	m.n_panes = 0;
	eng = wa_engine_create(&cfg);
	wa_engine_flush(eng);
	wa_engine_destroy(eng);
	check(m.n_panes == 0, "empty input: default allocator, nothing emitted",
		  NULL);
}

/* The default allocator carries a real stream too. */
static void
test_default_allocator(void)
{
	static const wa_window win[] = {{60, 10, 0}};
	wa_config	cfg;
	wa_engine  *eng;
	mini		m;
	rng			r = {77};
	int64_t		n = scaled(5000);

	memset(&m, 0, sizeof(m));
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 1;
	cfg.windows = win;
	cfg.bound = 5;
	cfg.lateness = 30;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.emit = mini_emit;
	cfg.emit_arg = &m;
	eng = wa_engine_create(&cfg);
	for (int64_t i = 0; i < n; i++)
	{
		wa_key		k = {(int64_t) rng_below(&r, 10), NULL, 0};
		wa_value	v[N_INPUTS];

		random_values(&r, v);
		wa_engine_ingest(eng, &k, i - (int64_t) rng_below(&r, 40), v);
		wa_engine_emit_late(eng);
	}
	wa_engine_flush(eng);
	wa_engine_destroy(eng);
	check(m.n_panes > 0, "default allocator: stream runs", NULL);
}

static void *
noop_alloc(void *arg, size_t size)
{
	(void) arg;
	(void) size;
	return NULL;
}

static void *
noop_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	(void) arg;
	(void) ptr;
	(void) old_size;
	(void) new_size;
	return NULL;
}

static void
noop_free(void *arg, void *ptr, size_t size)
{
	(void) arg;
	(void) ptr;
	(void) size;
}

/*
 * The engine's assertions are on in this build (test/engine/Makefile): in
 * a child process, accounting driven below zero must abort.  The allocator
 * does nothing, so that without assertions the child simply exits.
 */
static void
test_assertions_on(void)
{
	static const wa_allocator noop = {noop_alloc, noop_realloc, noop_free,
	NULL};
	pid_t		pid;
	int			status = 0;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
	{
		wa_mem		mem;
		char		block[16];

		/* the assertion's message is expected: keep it off the output */
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(2);
		wa_mem_init(&mem, &noop);
		wa_mem_free(&mem, block, sizeof(block));
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
	{
		check(false, "engine assertions are on", "fork or wait failed");
		return;
	}
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		  "engine assertions are on: accounting below zero aborts",
		  "child %s %d", WIFSIGNALED(status) ? "killed by signal" :
		  "exited with", WIFSIGNALED(status) ? WTERMSIG(status) :
		  WEXITSTATUS(status));
}

/*
 * The coverage plan's memory: wa_engine_plan takes every byte from
 * config->allocator and wa_plan_free gives it all back; an engine plans
 * through its own accounted memory, so its peak covers the planning.
 */
static void
test_plan_memory(void)
{
	static const wa_window win[] = {
		{10, 10, 0}, {20, 20, 0}, {30, 30, 0}, {40, 40, 0}
	};
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_plan		plan;
	wa_engine  *eng;
	wa_stats	st;
	int64_t		g;
	int64_t		plan_peak;
	const char *msg;
	mini		m;

	memset(&m, 0, sizeof(m));
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 4;
	cfg.windows = win;
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.share_windows = true;
	cfg.emit = mini_emit;
	cfg.emit_arg = &m;
	cfg.allocator = &al;

	ca_setup(&ca, &al);
	msg = wa_engine_plan(&cfg, &plan, &g);
	plan_peak = ca.peak_bytes;
	check(msg == NULL && ca.n_allocs > 0 &&
		  ca.live_bytes == (int64_t) (plan.n_nodes * sizeof(wa_plan_node)),
		  "wa_engine_plan: from config->allocator, only the nodes held",
		  "%s; %" PRId64 " allocations, %" PRId64 " bytes held",
		  msg ? msg : "planned", ca.n_allocs, ca.live_bytes);
	wa_plan_free(&plan);
	check(ca.live_bytes == 0 && ca.live_blocks == 0 && ca.errors == 0,
		  "wa_engine_plan: wa_plan_free gives every byte back",
		  "%" PRId64 " bytes in %" PRId64 " blocks held; %s", ca.live_bytes,
		  ca.live_blocks, ca.first_error);

	ca_setup(&ca, &al);
	eng = wa_engine_create(&cfg);
	wa_engine_get_stats(eng, &st);
	check(st.peak_mem_bytes == (uint64_t) ca.peak_bytes &&
		  ca.peak_bytes >= plan_peak &&
		  st.mem_bytes == (uint64_t) ca.live_bytes,
		  "shared windows: the engine accounts its planning's memory",
		  "engine peak %" PRIu64 ", allocator peak %" PRId64 ", planning "
		  "alone %" PRId64 "; engine holds %" PRIu64 ", allocator %" PRId64,
		  st.peak_mem_bytes, ca.peak_bytes, plan_peak, st.mem_bytes,
		  ca.live_bytes);
	wa_engine_destroy(eng);
	check(ca.live_bytes == 0 && ca.errors == 0,
		  "shared windows: destroy gives every byte back", "%" PRId64
		  " bytes held; %s", ca.live_bytes, ca.first_error);
}

static void
expect_reject(const char *name, const wa_config *cfg, const char *field1,
			  const char *field2)
{
	const char *msg = wa_config_check(cfg);
	char		full[256];
	bool		named;

	snprintf(full, sizeof(full), "config check rejects %s", name);
	named = msg != NULL && (strstr(msg, field1) != NULL ||
							(field2 != NULL && strstr(msg, field2) != NULL));
	if (msg == NULL)
		check(false, full, "accepted");
	else
		check(named, full, "message \"%s\" does not name %s", msg, field1);
}

static void
test_config_check(void)
{
	wa_window	w[2] = {{10, 10, 0}, {60, 10, 0}};
	wa_agg_spec aggs[N_AGGS];
	wa_config	base;
	wa_config	c;
	const char *msg;

	memcpy(aggs, test_aggs, sizeof(aggs));
	memset(&base, 0, sizeof(base));
	base.n_windows = 2;
	base.windows = w;
	base.bound = 5;
	base.lateness = 10;
	base.n_aggs = N_AGGS;
	base.aggs = aggs;
	base.emit = mini_emit;

	msg = wa_config_check(&base);
	check(msg == NULL, "config check accepts a valid config", "%s", msg);

#define WITH_WINDOW(idx, sz, sl, name, f1, f2) \
	do { \
		wa_window saved = w[idx]; \
		w[idx].size = (sz); \
		w[idx].slide = (sl); \
		expect_reject(name, &base, f1, f2); \
		w[idx] = saved; \
	} while (0)

	WITH_WINDOW(0, 0, 10, "size 0", "size", NULL);
	WITH_WINDOW(0, -10, 10, "negative size", "size", NULL);
	WITH_WINDOW(0, 10, 0, "slide 0", "slide", NULL);
	WITH_WINDOW(0, 10, -5, "negative slide", "slide", NULL);
	WITH_WINDOW(0, 5, 10, "size < slide", "size", "slide");
	WITH_WINDOW(1, 60, 0, "slide 0 in the second window", "slide", NULL);
	WITH_WINDOW(1, 5, 10, "size < slide in the second window", "size", "slide");
#undef WITH_WINDOW

	c = base;
	c.bound = -1;
	expect_reject("negative bound", &c, "bound", NULL);
	c = base;
	c.lateness = -1;
	expect_reject("negative lateness", &c, "lateness", NULL);
	c = base;
	c.n_windows = 0;
	expect_reject("n_windows 0", &c, "window", NULL);
	c = base;
	c.n_windows = -1;
	expect_reject("negative n_windows", &c, "window", NULL);

	aggs[AGG_SUM_A].input = -1;
	expect_reject("negative agg input index", &base, "input", NULL);
	aggs[AGG_SUM_A].input = test_aggs[AGG_SUM_A].input;

	/* count(*) reads no input, so its input field means nothing */
	aggs[AGG_COUNT_STAR].input = -1;
	msg = wa_config_check(&base);
	check(msg == NULL, "config check ignores the input of count(*)", "%s", msg);
	aggs[AGG_COUNT_STAR].input = test_aggs[AGG_COUNT_STAR].input;

	/* size need not be a multiple of slide: slices use the gcd */
	w[0].size = 1000;
	w[0].slide = 999;
	msg = wa_config_check(&base);
	check(msg == NULL, "config check accepts size 1000 slide 999", "%s", msg);
	w[0].size = (int64_t) 1 << 62;
	w[0].slide = (int64_t) 1 << 62;
	w[0].origin = INT64_MIN;
	c = base;
	c.n_windows = 1;
	c.bound = INT64_MAX;
	c.lateness = INT64_MAX;
	msg = wa_config_check(&c);
	check(msg == NULL, "config check accepts int64 extremes", "%s", msg);
}

/* The slice width is the gcd of every size, slide and origin difference. */
static void
test_slice_width(void)
{
	static const struct
	{
		int			n;
		wa_window	w[3];
		int64_t		g;
	}			cases[] = {
		{1, {{10, 10, 0}}, 10},
		{1, {{60, 10, 0}}, 10},
		{1, {{60, 1, 0}}, 1},
		{1, {{7, 7, 3}}, 7},
		{1, {{1000, 999, -17}}, 1},
		{3, {{10, 10, 0}, {60, 10, 0}, {30, 15, 5}}, 5},
		{2, {{10, 10, 0}, {10, 10, 4}}, 2},
		{2, {{60, 20, 0}, {40, 40, 0}}, 20},
		{2, {{(int64_t) 1 << 62, (int64_t) 1 << 62, 5},
		{(int64_t) 3 << 60, (int64_t) 1 << 60, ((int64_t) 1 << 60) + 5}},
		(int64_t) 1 << 60},
		{2, {{10, 10, INT64_MIN}, {10, 10, INT64_MAX}}, 5},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		mini		m;
		int64_t		g;
		char		name[128];

		mini_init(&m, cases[i].w, cases[i].n, 0, 0);
		g = wa_engine_slice_width(m.eng);
		snprintf(name, sizeof(name), "slice width case %zu is %" PRId64, i,
				 cases[i].g);
		check(g == cases[i].g, name, "got %" PRId64, g);
		wa_engine_flush(m.eng);
		mini_done(&m);
	}
}

int
main(void)
{
	double		t0 = now_seconds();

	test_assertions_on();
	test_config_check();
	test_slice_width();
	test_empty();
	test_default_allocator();
	test_plan_memory();
	test_late_within_lateness();
	test_late_from_kept();
	test_past_lateness();
	test_boundaries();
	test_partial();
	test_late_at_expiry();
	test_advance();
	test_nan();
	test_byte_keys_empty();
	test_key_visits();
	printf("# total %.1fs\n", now_seconds() - t0);
	return tap_done();
}
