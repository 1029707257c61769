/*-------------------------------------------------------------------------
 *
 * test_differential.c
 *	  Differential tests of the windowing engine on random streams.
 *
 * Long random out-of-order streams (fixed seeds, many window shapes, late
 * and too-late events, idle-time advances, int64 extremes, 100,000 keys,
 * byte keys) go through the engine and through the brute-force model in
 * reference.c, and run_stream() (compare.c) checks that they agree on
 * everything wa_engine.h promises.  Windows that overlap themselves run
 * again with every window merging its slices from scratch, and window sets
 * again with the coverage plan (shared windows); random window sets with
 * shared windows check the planner's choices against the reference too.
 *
 * Output is TAP (tap.h).
 *
 * Usage: test_differential [<prefix of a case name>]
 *
 * test/engine/test_differential.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define lengthof(array) ((int) (sizeof(array) / sizeof((array)[0])))

static const diff_case diff_cases[] = {
	{"diff tumbling 10/10", 1, {{10, 10, 0}}, 5, 20, 50, 1000000, 4000, 101,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff hopping 60/10", 1, {{60, 10, 0}}, 30, 60, 20, 0, 20000, 102,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff sliding 60/1", 1, {{60, 1, 0}}, 10, 30, 8, 500, 20000, 103,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff tumbling 7/7 origin 3", 1, {{7, 7, 3}}, 3, 10, 100, 0, 2000, 104,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff hopping 1000/999 origin -17", 1, {{1000, 999, -17}}, 200, 1500, 10,
	0, 200000, 105, 0, 0, false, false, 100000, true, 0, 0},
	{"diff multi 10/10+60/10+30/15@5", MULTI3, 20, 40, 30, 0, 20000, 106,
	0, 0, false, false, 100000, true, 0, 0},
	{"diff lateness 0 hopping 60/10", 1, {{60, 10, 0}}, 30, 0, 20, 0, 20000,
	107, 0, 0, false, false, 100000, false, 0, 0},
	{"epoch 1000 hopping 60/10", 1, {{60, 10, 0}}, 30, 60, 20, 0, 20000, 108,
	1000, 0, false, false, 100000, true, 0, 0},
	{"epoch 1000 multi", MULTI3, 20, 40, 30, 0, 20000, 109,
	1000, 0, false, false, 100000, true, 0, 0},
	{"epoch 1000 sliding 60/1", 1, {{60, 1, 0}}, 10, 30, 8, 0, 20000, 110,
	1000, 0, false, false, 100000, true, 0, 0},
	{"idle advances multi", MULTI3, 20, 40, 30, 0, 20000, 111,
	0, 777, false, false, 100000, true, 0, 0},
	{"negative times multi", 2, {{10, 10, 0}, {60, 10, -5}}, 20, 40, 20,
	-30000, 20000, 112, 0, 0, false, false, 100000, true, 0, 0},
	{"times near INT64_MIN", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MIN + 10, 5000, 113, 0, 0, false, false, 100000, true, 100, 0},
	{"times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 114, 0, 0, false, false, 100000, true, 100, 0},
	{"epoch 1000 times near INT64_MAX", NEAR_LIMIT_WINDOWS, 50, 200, 10,
	INT64_MAX - 5000, 5000, 115, 1000, 0, false, false, 100000, true, 100, 0},
	{"one key multi", MULTI3, 20, 40, 1, 0, 20000, 116,
	0, 0, false, false, 100000, true, 0, 0},
	{"100000 distinct keys", 1, {{10, 10, 0}}, 5, 20, 100000, 0, 20000, 117,
	0, 0, false, true, 200000, true, 0, 0},
	{"byte keys multi", MULTI3, 20, 40, 200, 0, 20000, 118,
	0, 0, true, false, 100000, true, 0, 0},
	{"epoch 1000 byte keys", 1, {{60, 10, 0}}, 30, 60, 200, 0, 20000, 119,
	1000, 0, true, false, 100000, true, 0, 0},
	{"tumbling 1/1", 1, {{1, 1, 0}}, 2, 5, 20, 0, 20000, 120,
	0, 0, false, false, 100000, true, 0, 0},
	{"duplicate specs, origin INT64_MAX", 3,
	{{10, 10, 0}, {10, 10, 0}, {60, 10, INT64_MAX}}, 20, 40, 20, 0, 20000, 121,
	0, 0, false, false, 50000, true, 0, 0},
	{"idle advances far ahead", MULTI3, 20, 40, 30, 0, 20000, 122,
	0, 5000, false, false, 100000, true, 0, 300},
	{"times near INT64_MIN, slice width 10", 2, {{10, 10, 3}, {60, 10, 3}},
	20, 40, 10, INT64_MIN + 10, 5000, 123, 0, 0, false, false, 50000, true,
	100, 0},
	{"times near INT64_MAX, slice width 10", 2, {{10, 10, 3}, {60, 10, 3}},
	20, 40, 10, INT64_MAX - 5000, 5000, 124, 0, 0, false, false, 50000, true,
	100, 0},
};

/*
 * Generic aggregates beside kernels: exact sums (partitioned-by) and an
 * idempotent maximum, computed by the reference as the kernels
 * test_generic_as names.
 */
static const wa_agg_spec generic_aggs[] = {
	{WA_AGG_COUNT_STAR, IN_A, false},
	{WA_AGG_GENERIC, IN_A, false},
	{WA_AGG_GENERIC, IN_B, false},
	{WA_AGG_GENERIC, IN_A, true},
	{WA_AGG_SUM_INT, IN_A, false},
};

/* Idempotent ones only: the coverage plan may merge overlapping parents. */
static const wa_agg_spec generic_idempotent_aggs[] = {
	{WA_AGG_GENERIC, IN_A, true},
	{WA_AGG_GENERIC, IN_B, true},
	{WA_AGG_MAX_INT, IN_A, false},
};

static void
run_diff_case(const diff_case *dc)
{
	run_opts	o;
	stream		st;
	int			n_keys = diff_case_stream(dc, &st);

	memset(&o, 0, sizeof(o));
	o.name = dc->name;
	o.n_windows = dc->n_windows;
	o.windows = dc->windows;
	o.bound = dc->bound;
	o.lateness = dc->lateness;
	o.epoch = dc->epoch;
	o.expect_mix = dc->expect_mix;

	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, st.n_events, n_keys);
	run_stream(&o, &st, NULL);

	/*
	 * Generic aggregates (states of the caller's, through callbacks) go
	 * everywhere the kernels' accumulators go: slices, the two-stack, kept
	 * instances, late panes.  run_stream checks that the engine gives back
	 * every byte, so a state copied without wa_acc_copy or dropped without
	 * wa_acc_release shows.  Every other case is enough to cover each
	 * shape (tumbling, hopping, sliding, several windows, epochs, byte
	 * keys, the int64 limits) and keeps the sanitized runs short.
	 */
	if ((dc - diff_cases) % 2 == 0)
	{
		char		name[160];

		snprintf(name, sizeof(name), "%s (generic)", dc->name);
		o.name = name;
		o.aggs = generic_aggs;
		o.n_aggs = lengthof(generic_aggs);
		run_stream(&o, &st, NULL);
		o.name = dc->name;
		o.aggs = NULL;
		o.n_aggs = 0;
	}

	/*
	 * Windows that overlap themselves are emitted through the two-stack;
	 * the same stream must give the same panes when every window merges
	 * its slices from scratch.
	 */
	for (int i = 0; i < dc->n_windows; i++)
	{
		if (dc->windows[i].size / 4 >= dc->windows[i].slide)
		{
			char		name[160];

			snprintf(name, sizeof(name), "%s (merge every slice)", dc->name);
			o.name = name;
			o.merge_every_slice = true;
			run_stream(&o, &st, NULL);
			break;
		}
	}

	/* several windows: the same panes when the coverage plan runs */
	if (dc->n_windows > 1)
	{
		char		name[160];

		snprintf(name, sizeof(name), "%s (shared windows)", dc->name);
		o.name = name;
		o.merge_every_slice = false;
		o.share_windows = true;
		run_stream(&o, &st, NULL);
	}
	stream_free(&st);
}

/* min and max only: the coverage plan may merge overlapping parents */
static const wa_agg_spec minmax_aggs[] = {
	{WA_AGG_MIN_INT, IN_A, false},
	{WA_AGG_MAX_INT, IN_A, false},
	{WA_AGG_MIN_FLOAT, IN_F, false},
	{WA_AGG_MAX_FLOAT, IN_F, false},
};

/*
 * Run one window set with shared windows against the reference, for every
 * aggregate (partitioned-by) and for min and max alone (covered-by), and
 * also without sharing, then generic aggregates with sharing; returns the
 * merge counts through merges[6] (partitioned shared, unshared, covered
 * shared, unshared, generic idempotent shared, generic shared).
 */
static void
run_shared_set(const diff_case *dc, uint64_t merges[6])
{
	stream		st;
	int			n_keys = diff_case_stream(dc, &st);

	printf("# %s: seed %" PRIu64 ", %" PRId64 " events, %d keys\n", dc->name,
		   dc->seed, st.n_events, n_keys);
	for (int run = 0; run < 6; run++)
	{
		static const struct
		{
			const char *what;
			const wa_agg_spec *aggs;	/* NULL: test_aggs */
			int			n_aggs;
			bool		shared;
		}			runs[6] = {
			{"all aggregates, shared windows", NULL, 0, true},
			{"all aggregates, slices only", NULL, 0, false},
			{"min/max, shared windows", minmax_aggs, lengthof(minmax_aggs), true},
			{"min/max, slices only", minmax_aggs, lengthof(minmax_aggs), false},
			{"generic idempotent, shared windows", generic_idempotent_aggs,
			lengthof(generic_idempotent_aggs), true},
			{"generic, shared windows", generic_aggs, lengthof(generic_aggs), true},
		};
		run_opts	o;
		run_result	rr;
		char		name[200];

		memset(&o, 0, sizeof(o));
		snprintf(name, sizeof(name), "%s (%s)", dc->name, runs[run].what);
		o.name = name;
		o.n_windows = dc->n_windows;
		o.windows = dc->windows;
		o.bound = dc->bound;
		o.lateness = dc->lateness;
		o.epoch = dc->epoch;
		o.share_windows = runs[run].shared;
		o.aggs = runs[run].aggs;
		o.n_aggs = runs[run].n_aggs;
		run_stream(&o, &st, &rr);
		merges[run] = rr.ran ? rr.stats.merges : 0;
		run_result_free(&rr);
	}
	stream_free(&st);
}

/*
 * The paper's query (tumbling 10, 20, 30, 40) and random window sets:
 * slides of 1 to 10 units, ranges of 1 to 10 slides, a common origin, so
 * that windows can feed each other.  Every pane, on time and late, must
 * equal the brute-force reference with and without sharing; on the
 * paper's query sharing must also save merges.
 */
static void
test_shared_windows(void)
{
	diff_case	dc;
	uint64_t	merges[6];
	rng			r = {UINT64_C(0x5eed0f5a7ed)};
	int			plans_differ = 0;
	int			generic_plans_wrong = 0;

	memset(&dc, 0, sizeof(dc));
	dc.name = "shared tumbling 10/20/30/40";
	dc.n_windows = 4;
	for (int i = 0; i < 4; i++)
		dc.windows[i] = (wa_window) {10 * (i + 1), 10 * (i + 1), 0};
	dc.bound = 15;
	dc.lateness = 40;
	dc.n_keys = 20;
	dc.span = 20000;
	dc.seed = 401;
	dc.n_events = 60000;
	run_shared_set(&dc, merges);
	check(merges[0] < merges[1] && merges[2] < merges[3],
		  "shared tumbling 10/20/30/40: sharing saves merges",
		  "all aggregates %" PRIu64 " vs %" PRIu64 ", min/max %" PRIu64
		  " vs %" PRIu64, merges[0], merges[1], merges[2], merges[3]);

	for (int set = 0; set < 8; set++)
	{
		char		name[64];
		int64_t		unit = 1 + (int64_t) rng_below(&r, 3);

		snprintf(name, sizeof(name), "shared random set %d", set);
		memset(&dc, 0, sizeof(dc));
		dc.name = name;
		dc.n_windows = 3 + (int) rng_below(&r, 3);
		for (int i = 0; i < dc.n_windows; i++)
		{
			int64_t		slide = unit * (1 + (int64_t) rng_below(&r, 10));
			int64_t		range = slide * (1 + (int64_t) rng_below(&r, 10));

			dc.windows[i] = (wa_window) {range, slide, set % 2 == 0 ? 0 : 7};
		}
		dc.bound = 10 + (int64_t) rng_below(&r, 20);
		dc.lateness = (int64_t) rng_below(&r, 60);
		dc.n_keys = 1 + (int) rng_below(&r, 30);
		dc.t0 = set == 5 ? INT64_MAX - 30000 : (set == 6 ? INT64_MIN + 10 : 0);
		dc.span = 20000;
		dc.seed = 410 + (uint64_t) set;
		dc.epoch = set % 3 == 0 ? 1000 : 0;
		dc.n_events = 30000;
		run_shared_set(&dc, merges);

		/*
		 * Generic aggregates get the plan of the kernels they stand for:
		 * covered-by when idempotent, as min and max, else partitioned-by.
		 * The two plans differ in merges on some of these sets.
		 */
		if (merges[0] != merges[2])
			plans_differ++;
		if (merges[4] != merges[2] || merges[5] != merges[0])
			generic_plans_wrong++;
	}
	check(plans_differ > 0 && generic_plans_wrong == 0,
		  "shared random sets: generic aggregates share as the kernels do",
		  "%d sets where the plans differ, %d where a generic plan did not match",
		  plans_differ, generic_plans_wrong);
}

/* Bound and lateness of INT64_MAX, on a stream from make_huge_stream(). */
static void
test_huge_bound_lateness(int64_t lateness, const char *name, uint64_t seed)
{
	static const wa_window windows[] = {{10, 10, 0}, {7, 7, 1}, {1000, 999, 3}};
	stream		st;
	run_opts	o;

	make_huge_stream(&st, scaled(20000), seed);
	memset(&o, 0, sizeof(o));
	o.name = name;
	o.n_windows = 3;
	o.windows = windows;
	o.bound = INT64_MAX;
	o.lateness = lateness;
	run_stream(&o, &st, NULL);
	stream_free(&st);
}

/* Huge windows over the whole int64 time range (make_full_range_stream). */
static void
test_full_range(const wa_window *windows, const char *name, uint64_t seed)
{
	stream		st;
	run_opts	o;

	make_full_range_stream(&st, scaled(30000), seed);
	memset(&o, 0, sizeof(o));
	o.name = name;
	o.n_windows = 2;
	o.windows = windows;
	o.bound = (int64_t) 1 << 58;
	o.lateness = (int64_t) 1 << 61;
	o.expect_mix = true;
	run_stream(&o, &st, NULL);
	stream_free(&st);
}

int
main(int argc, char **argv)
{
	double		t0 = now_seconds();
	const char *only = argc > 1 ? argv[1] : NULL;

	/* every case, or a single one by (prefix of its) name */
	for (size_t i = 0; i < sizeof(diff_cases) / sizeof(diff_cases[0]); i++)
		if (only == NULL ||
			strncmp(diff_cases[i].name, only, strlen(only)) == 0)
			run_diff_case(&diff_cases[i]);
	if (only == NULL)
	{
		test_huge_bound_lateness(INT64_MAX,
								 "bound and lateness INT64_MAX", 201);
		test_huge_bound_lateness(INT64_MAX - 100,
								 "bound INT64_MAX, lateness INT64_MAX-100", 202);
		test_full_range(full_range_g1, "full int64 range, slice width 1", 203);
		test_full_range(full_range_g60, "full int64 range, slice width 2^60",
						204);
		test_shared_windows();
	}
	printf("# total %.1fs\n", now_seconds() - t0);
	return tap_done();
}
