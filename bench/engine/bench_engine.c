/*-------------------------------------------------------------------------
 *
 * bench_engine.c
 *	  Throughput and state of the slice engine against one accumulator per
 *	  window, on the same events in the same process.
 *
 * The four shapes are those of the "Complexity and constants" section of
 * the windowed stream aggregation notes:
 *
 *	a  size 6000 = slide 6000 (tumbling), 10 keys
 *	b  size 6000, slide 100 (60 slices), 10 keys, 10 events/key/slice
 *	c  size 60000, slide 100 (600 slices), same load as b
 *	d  size 6000, slide 100, 1000 keys, 0.1 events/key/slice
 *
 * Input: N events (3,000,000 by default) generated from a fixed seed.  A
 * clock advances one tick per event, so every shape sees 100 events per
 * 100-tick slice spread uniformly over its keys; each event time is the
 * clock plus a jitter in [0, bound), bound = 200.  That disorder never
 * passes the watermark, so to keep the late-pane and drop paths in the
 * measurement one event in STRAGGLER_EVERY is instead a straggler up to
 * 3 * bound behind the clock; with allowed lateness = bound some of those
 * refine fired windows and a few are dropped.  Aggregates: count(*),
 * sum, min and max of one int64 value.
 *
 * Each implementation runs through create, ingest (emit_late every 1000
 * events) and flush, twice, alternating with the other; the best thread
 * CPU time counts (see now_sec).  A third, untimed run
 * checks that both emitted the same on-time panes and the same total of
 * count(*) over final panes (the last revision of every window), which is
 * the number of accepted (event, window) pairs.  The pane sink in timed
 * runs only counts, so that output handling does not dilute the ratio.
 *
 * Output, one line per shape:
 *	shape=b windowagg_mev_s=... naive_mev_s=... ratio=... peak_state=EB/NB
 * where ratio = windowagg / naive throughput and EB, NB are the peak bytes
 * each held.  -v adds details on stderr.
 *
 * bench/engine/bench_engine.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "naive.h"
#include "wa_engine.h"

#define DEFAULT_EVENTS	3000000
#define BOUND			200
#define LATENESS		200
#define STRAGGLER_EVERY 1000	/* on average one event in this many */

/* stragglers in the stream being generated: STRAGGLER_EVERY, or 0: none */
static uint64_t straggler_every = STRAGGLER_EVERY;
#define LATE_EVERY		1000	/* events between emit_late calls */
#define SEED			UINT64_C(20240917)
#define N_RUNS			2
#define N_EMISSION_RUNS	5		/* the engine alone is fast: more runs */

typedef struct bench_shape
{
	const char *name;
	int64_t		size;
	int64_t		slide;
	int			n_keys;
} bench_shape;

static const bench_shape shapes[] = {
	{"a", 6000, 6000, 10},
	{"b", 6000, 100, 10},
	{"c", 60000, 100, 10},
	{"d", 6000, 100, 1000},
};

#define N_SHAPES ((int) (sizeof(shapes) / sizeof(shapes[0])))

/* A late pane, kept to work out final values after the run. */
typedef struct late_pane
{
	int64_t		key;
	int64_t		start;
	int32_t		window;
	int64_t		revision;
	int64_t		count;
} late_pane;

/*
 * The set of windows that received late panes, with the count of their
 * on-time pane (-1: none).  Open addressing; small, since late panes are.
 */
typedef struct late_slot
{
	int64_t		key;
	int64_t		start;
	int32_t		window;
	bool		used;
	int64_t		on_time_count;	/* -1: the window had no on-time pane */
	int64_t		last_revision;	/* highest late revision seen, 0: none */
	int64_t		last_count;		/* count(*) of that revision */
} late_slot;

typedef struct late_set
{
	late_slot  *slots;
	uint64_t	mask;
} late_set;

typedef struct bench_sink
{
	uint64_t	panes_on_time;
	uint64_t	panes_late;
	int64_t		on_time_count;	/* sum of count(*) over on-time panes */
	late_pane  *late;
	size_t		n_late;
	size_t		late_cap;
	late_set   *check;			/* verification run only */
} bench_sink;

/* What one implementation did on one shape. */
typedef struct bench_outcome
{
	double		best_sec;
	uint64_t	panes_on_time;
	uint64_t	panes_late;
	uint64_t	dropped;
	uint64_t	partial;
	int64_t		final_count;
	uint64_t	peak_bytes;
	uint64_t	peak_entries;	/* naive only: peak live windows */
	uint64_t	work;			/* engine: slice merges; naive: updates */
} bench_outcome;

static bool verbose = false;

static void
generate(bench_event *ev, size_t n, int n_keys)
{
	uint64_t	rng = SEED;

	for (size_t i = 0; i < n; i++)
	{
		int64_t		clock = (int64_t) i;
		uint64_t	r = rng_next(&rng);

		ev[i].key = (int64_t) (rng_next(&rng) % (uint64_t) n_keys);
		ev[i].val = (int64_t) (rng_next(&rng) % 2001) - 1000;
		if (straggler_every != 0 && r % straggler_every == 0)
			ev[i].ts = clock - (int64_t) (rng_next(&rng) % (3 * BOUND));
		else
			ev[i].ts = clock + (int64_t) (rng_next(&rng) % BOUND);
	}
}

static uint64_t
window_hash(int64_t key, int32_t window, int64_t start)
{
	uint64_t	h = (uint64_t) key * UINT64_C(0x9E3779B97F4A7C15);

	h ^= (uint64_t) start * UINT64_C(0xC2B2AE3D27D4EB4F);
	h ^= (uint64_t) window;
	h ^= h >> 31;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	return h ^ (h >> 29);
}

static late_slot *
late_set_find(late_set *set, int64_t key, int32_t window, int64_t start,
			  bool insert)
{
	uint64_t	i = window_hash(key, window, start) & set->mask;

	for (;;)
	{
		late_slot  *s = &set->slots[i];

		if (!s->used)
		{
			if (!insert)
				return NULL;
			s->used = true;
			s->key = key;
			s->window = window;
			s->start = start;
			s->on_time_count = -1;
			s->last_revision = 0;
			s->last_count = 0;
			return s;
		}
		if (s->key == key && s->window == window && s->start == start)
			return s;
		i = (i + 1) & set->mask;
	}
}

static late_set *
late_set_build(const late_pane *late, size_t n)
{
	late_set   *set = malloc(sizeof(late_set));
	uint64_t	cap = 16;

	while (cap < 2 * n + 16)
		cap *= 2;
	set->slots = calloc(cap, sizeof(late_slot));
	set->mask = cap - 1;
	if (set->slots == NULL)
		abort();
	for (size_t i = 0; i < n; i++)
		late_set_find(set, late[i].key, late[i].window, late[i].start, true);
	return set;
}

static void
late_set_free(late_set *set)
{
	free(set->slots);
	free(set);
}

/* The pane callback shared by both implementations. */
static void
sink_emit(void *arg, const wa_pane *pane)
{
	bench_sink *sink = arg;
	int64_t		count = pane->results[0].count;

	if (pane->kind == WA_PANE_ON_TIME)
	{
		sink->panes_on_time++;
		sink->on_time_count += count;
		if (sink->check != NULL)
		{
			late_slot  *s = late_set_find(sink->check, pane->key.ival,
										  pane->window, (int64_t) pane->start,
										  false);

			if (s != NULL)
				s->on_time_count = count;
		}
		return;
	}

	/* late panes are rare: keep them all */
	sink->panes_late++;
	if (sink->n_late == sink->late_cap)
	{
		sink->late_cap = sink->late_cap ? sink->late_cap * 2 : 1024;
		sink->late = realloc(sink->late, sink->late_cap * sizeof(late_pane));
		if (sink->late == NULL)
			abort();
	}
	sink->late[sink->n_late].key = pane->key.ival;
	sink->late[sink->n_late].window = pane->window;
	sink->late[sink->n_late].start = (int64_t) pane->start;
	sink->late[sink->n_late].revision = pane->revision;
	sink->late[sink->n_late].count = count;
	sink->n_late++;
}

/*
 * Sum of count(*) over final panes: the on-time total, corrected for every
 * window whose last pane is a late one (its final count replaces the
 * on-time count, if it had an on-time pane at all).
 */
static int64_t
final_count(const bench_sink *sink)
{
	int64_t		total = sink->on_time_count;
	late_set   *set = sink->check;

	for (size_t i = 0; i < sink->n_late; i++)
	{
		const late_pane *p = &sink->late[i];
		late_slot  *s = late_set_find(set, p->key, p->window, p->start, true);

		if (p->revision > s->last_revision)
		{
			s->last_revision = p->revision;
			s->last_count = p->count;
		}
	}
	for (uint64_t i = 0; i <= set->mask; i++)
	{
		late_slot  *s = &set->slots[i];

		if (!s->used || s->last_revision == 0)
			continue;
		total += s->last_count;
		if (s->on_time_count >= 0)
			total -= s->on_time_count;
	}
	return total;
}

static void
sink_reset(bench_sink *sink, late_set *check)
{
	free(sink->late);
	memset(sink, 0, sizeof(bench_sink));
	sink->check = check;
}

static void
fill_config(wa_config *cfg, const bench_shape *shape, wa_window *win,
			wa_agg_spec *aggs, bench_sink *sink)
{
	win->size = shape->size;
	win->slide = shape->slide;
	win->origin = 0;
	aggs[0].kind = WA_AGG_COUNT_STAR;
	aggs[0].input = 0;
	aggs[1].kind = WA_AGG_SUM_INT;
	aggs[1].input = 0;
	aggs[2].kind = WA_AGG_MIN_INT;
	aggs[2].input = 0;
	aggs[3].kind = WA_AGG_MAX_INT;
	aggs[3].input = 0;

	memset(cfg, 0, sizeof(wa_config));
	cfg->n_windows = 1;
	cfg->windows = win;
	cfg->bound = BOUND;
	cfg->lateness = LATENESS;
	cfg->n_aggs = 4;
	cfg->aggs = aggs;
	cfg->byte_keys = false;
	cfg->emit = sink_emit;
	cfg->emit_arg = sink;
	cfg->allocator = NULL;
}

/*
 * One pass of the windowagg engine over the events; returns seconds.  The
 * loop is duplicated for the naive side rather than going through function
 * pointers, so neither pays an indirect call the other does not.
 */
static double
run_windowagg(const wa_config *cfg, const bench_event *ev, size_t n,
			  wa_stats *stats)
{
	double		t0 = now_sec();
	double		t1;
	wa_engine  *eng = wa_engine_create(cfg);

	if (eng == NULL)
	{
		fprintf(stderr, "wa_engine_create failed\n");
		exit(1);
	}
	bench_feed(eng, ev, n, LATE_EVERY);
	t1 = now_sec();
	wa_engine_get_stats(eng, stats);
	wa_engine_destroy(eng);
	return t1 - t0;
}

static double
run_naive(const wa_config *cfg, const bench_event *ev, size_t n,
		  naive_stats *stats)
{
	double		t0 = now_sec();
	double		t1;
	naive_engine *ne = naive_create(cfg);

	if (ne == NULL)
	{
		fprintf(stderr, "naive_create failed\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
	{
		wa_key		key;
		wa_value	v;

		bench_event_input(&ev[i], &key, &v);
		(void) naive_ingest(ne, &key, ev[i].ts, &v);
		if ((i + 1) % LATE_EVERY == 0)
			naive_emit_late(ne);
	}
	naive_flush(ne);
	t1 = now_sec();
	naive_get_stats(ne, stats);
	naive_destroy(ne);
	return t1 - t0;
}

/* One timed run of one implementation; returns seconds. */
static double
time_run(bool use_engine, const wa_config *cfg, const bench_event *ev,
		 size_t n)
{
	wa_stats	es;
	naive_stats ns;

	if (use_engine)
		return run_windowagg(cfg, ev, n, &es);
	return run_naive(cfg, ev, n, &ns);
}

/*
 * The untimed checking run of one implementation.  The windows that got
 * late panes in a timed run (the same ones: runs are deterministic) are
 * marked, so the sink can note their on-time counts as they go by.
 */
static void
check_run(bool use_engine, const wa_config *cfg, bench_sink *sink,
		  const bench_event *ev, size_t n, bench_outcome *out)
{
	wa_stats	es;
	naive_stats ns;
	late_set   *check = late_set_build(sink->late, sink->n_late);

	sink_reset(sink, check);
	if (use_engine)
	{
		(void) run_windowagg(cfg, ev, n, &es);
		out->dropped = es.events_dropped;
		out->partial = es.events_partial;
		out->peak_bytes = es.peak_mem_bytes;
		out->work = es.merges;
	}
	else
	{
		(void) run_naive(cfg, ev, n, &ns);
		out->dropped = ns.events_dropped;
		out->partial = ns.events_partial;
		out->peak_bytes = ns.peak_mem_bytes;
		out->peak_entries = ns.peak_windows;
		out->work = ns.updates;
	}
	out->panes_on_time = sink->panes_on_time;
	out->panes_late = sink->panes_late;
	out->final_count = final_count(sink);
	late_set_free(check);
	sink_reset(sink, NULL);
}

/*
 * Measure one shape.  The timed runs of the two implementations alternate,
 * so that a change in machine load hits both alike.
 */
static void
measure(const bench_shape *shape, const bench_event *ev, size_t n,
		bool do_engine, bool do_naive, bench_outcome *eo, bench_outcome *no)
{
	bench_sink	esink;
	bench_sink	nsink;
	wa_config	ecfg;
	wa_config	ncfg;
	wa_window	ewin;
	wa_window	nwin;
	wa_agg_spec eaggs[4];
	wa_agg_spec naggs[4];
	const char *err;

	memset(&esink, 0, sizeof(esink));
	memset(&nsink, 0, sizeof(nsink));
	memset(eo, 0, sizeof(*eo));
	memset(no, 0, sizeof(*no));
	fill_config(&ecfg, shape, &ewin, eaggs, &esink);
	fill_config(&ncfg, shape, &nwin, naggs, &nsink);
	err = wa_config_check(&ecfg);
	if (err != NULL)
	{
		fprintf(stderr, "bad config for shape %s: %s\n", shape->name, err);
		exit(1);
	}

	eo->best_sec = no->best_sec = -1.0;
	for (int run = 0; run < N_RUNS; run++)
	{
		for (int impl = 0; impl < 2; impl++)
		{
			bool		use_engine = impl == 0;
			bench_outcome *out = use_engine ? eo : no;
			double		sec;

			if (use_engine ? !do_engine : !do_naive)
				continue;
			sink_reset(use_engine ? &esink : &nsink, NULL);
			sec = time_run(use_engine, use_engine ? &ecfg : &ncfg, ev, n);
			if (out->best_sec < 0 || sec < out->best_sec)
				out->best_sec = sec;
			if (verbose)
				fprintf(stderr, "  shape=%s %s run %d: %.3f s\n", shape->name,
						use_engine ? "windowagg" : "naive", run + 1, sec);
		}
	}

	if (do_engine)
		check_run(true, &ecfg, &esink, ev, n, eo);
	if (do_naive)
		check_run(false, &ncfg, &nsink, ev, n, no);
}

/*
 * What two-stack emission buys: the engine on the same events with the
 * two-stack and with every window merged from its slices (best of
 * N_EMISSION_RUNS each, alternating).  One line per shape whose windows overlap.
 */
static void
measure_emission(const bench_shape *shape, const bench_event *ev, size_t n,
				 const char *stream)
{
	bench_sink	sink;
	wa_config	cfg;
	wa_window	win;
	wa_agg_spec aggs[4];
	double		best[2] = {-1.0, -1.0};
	uint64_t	merges[2] = {0, 0};

	if (shape->size / 4 < shape->slide)
		return;
	memset(&sink, 0, sizeof(sink));
	fill_config(&cfg, shape, &win, aggs, &sink);
	for (int run = 0; run < N_EMISSION_RUNS; run++)
	{
		for (int mode = 0; mode < 2; mode++)
		{
			wa_stats	es;
			double		sec;

			cfg.merge_every_slice = mode == 1;
			sink_reset(&sink, NULL);
			sec = run_windowagg(&cfg, ev, n, &es);
			if (best[mode] < 0 || sec < best[mode])
				best[mode] = sec;
			merges[mode] = es.merges;
		}
	}
	printf("emission shape=%s stream=%s twostack_mev_s=%.2f merge_every_slice_mev_s=%.2f ratio=%.2f merges=%" PRIu64 "/%" PRIu64 "\n",
		   shape->name, stream, (double) n / best[0] / 1e6, (double) n / best[1] / 1e6,
		   best[1] / best[0], merges[0], merges[1]);
	fflush(stdout);
}

/* Details of one outcome, on stderr (-v). */
static void
print_details(const bench_shape *shape, const char *impl,
			  const bench_outcome *o, const char *work_name)
{
	fprintf(stderr,
			"  shape=%s %s: on_time=%" PRIu64 " late=%" PRIu64
			" final_count=%" PRId64 " dropped=%" PRIu64 " partial=%" PRIu64
			" peak=%" PRIu64 "B",
			shape->name, impl, o->panes_on_time, o->panes_late,
			o->final_count, o->dropped, o->partial, o->peak_bytes);
	if (o->peak_entries > 0)
		fprintf(stderr, " peak_windows=%" PRIu64, o->peak_entries);
	fprintf(stderr, " %s=%" PRIu64 "\n", work_name, o->work);
}

static void
usage(const char *prog)
{
	fprintf(stderr,
			"usage: %s [-v] [-n events] [-s shapes] [-i windowagg|naive|both]\n"
			"  -s abcd   shapes to run (default all)\n"
			"  -i ...    implementations to run (default both; one alone is\n"
			"            for profiling and prints no ratio)\n",
			prog);
	exit(2);
}

int
main(int argc, char **argv)
{
	size_t		n = DEFAULT_EVENTS;
	const char *which = "abcd";
	bool		do_engine = true;
	bool		do_naive = true;
	bench_event *ev;
	int			keys_generated = -1;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "-v") == 0)
			verbose = true;
		else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = (size_t) strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			which = argv[++i];
		else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc)
		{
			const char *impl = argv[++i];

			do_engine = strcmp(impl, "windowagg") == 0 || strcmp(impl, "both") == 0;
			do_naive = strcmp(impl, "naive") == 0 || strcmp(impl, "both") == 0;
			if (!do_engine && !do_naive)
				usage(argv[0]);
		}
		else
			usage(argv[0]);
	}
	if (n == 0)
		usage(argv[0]);

	ev = malloc(n * sizeof(bench_event));
	if (ev == NULL)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}

	for (int s = 0; s < N_SHAPES; s++)
	{
		const bench_shape *shape = &shapes[s];
		bench_outcome eo;
		bench_outcome no;
		double		e_mev = 0.0;
		double		n_mev = 0.0;

		if (strchr(which, shape->name[0]) == NULL)
			continue;
		/* shapes with the same key count share one event array */
		if (keys_generated != shape->n_keys)
		{
			generate(ev, n, shape->n_keys);
			keys_generated = shape->n_keys;
		}

		measure(shape, ev, n, do_engine, do_naive, &eo, &no);
		if (do_engine)
			e_mev = (double) n / eo.best_sec / 1e6;
		if (do_naive)
			n_mev = (double) n / no.best_sec / 1e6;

		if (do_engine && do_naive)
		{
			if (eo.panes_on_time != no.panes_on_time)
				printf("warning: shape=%s on-time panes differ: windowagg=%" PRIu64 " naive=%" PRIu64 "\n",
					   shape->name, eo.panes_on_time, no.panes_on_time);
			if (eo.final_count != no.final_count)
				printf("warning: shape=%s final count totals differ: windowagg=%" PRId64 " naive=%" PRId64 "\n",
					   shape->name, eo.final_count, no.final_count);
			if (eo.dropped != no.dropped)
				printf("warning: shape=%s dropped events differ: windowagg=%" PRIu64 " naive=%" PRIu64 "\n",
					   shape->name, eo.dropped, no.dropped);
			printf("shape=%s windowagg_mev_s=%.2f naive_mev_s=%.2f ratio=%.2f peak_state=%" PRIu64 "B/%" PRIu64 "B\n",
				   shape->name, e_mev, n_mev, e_mev / n_mev,
				   eo.peak_bytes, no.peak_bytes);
		}
		else if (do_engine)
			printf("shape=%s windowagg_mev_s=%.2f peak_state=%" PRIu64 "B\n",
				   shape->name, e_mev, eo.peak_bytes);
		else
			printf("shape=%s naive_mev_s=%.2f peak_state=%" PRIu64 "B\n",
				   shape->name, n_mev, no.peak_bytes);
		fflush(stdout);

		if (do_engine)
		{
			/*
			 * Emission alone, on this stream and on one whose disorder
			 * stays within the bound (no late panes, whose cost is the
			 * same either way).
			 */
			measure_emission(shape, ev, n, "stragglers");
			if (shape->size / 4 >= shape->slide)
			{
				straggler_every = 0;
				generate(ev, n, shape->n_keys);
				measure_emission(shape, ev, n, "in_bound");
				straggler_every = STRAGGLER_EVERY;
				generate(ev, n, shape->n_keys);
			}
		}

		if (verbose)
		{
			if (do_engine)
				print_details(shape, "windowagg", &eo, "merges");
			if (do_naive)
				print_details(shape, "naive", &no, "updates");
		}
	}
	free(ev);
	return 0;
}
