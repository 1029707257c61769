/*-------------------------------------------------------------------------
 *
 * test_planner.c
 *	  Tests of the window-coverage planner (wa_planner.h).
 *
 * The coverage theorems are checked against brute-force enumeration of
 * window instances: W<r, s> has the instances [k s, k s + r), and W is
 * covered by W' iff every instance of W is the union of the instances of
 * W' it contains (Definitions 2 and 3 of the paper), partitioned by W' iff
 * those are moreover disjoint, and M(W, W') is how many there are.
 *
 * The planner is checked on the paper's worked examples (Examples 6, 7 and
 * 8, in the paper's own model: one event per time unit, root S<1, 1>), on
 * hand-computed hopping, duplicate, out-of-model and single-window cases,
 * on invalid input, and on random window sets, where every plan must be a
 * well-formed forest whose edges are coverage edges, whose costs add up,
 * whose Algorithm 1 total matches a brute-force recomputation, and which is
 * never worse than the best single factor window.  Its memory is checked
 * with a counting allocator that can fail on demand: every byte comes from
 * the caller's allocator, planning gives back all its scratch whatever it
 * returns, and wa_plan_free gives back the rest.
 *
 * The brute-force side is in planner_reference.c.  Linked with the
 * planner, the default allocator and the assertions' failure handler only
 * (wa_planner.c, wa_mem.c, wa_assert.c): it needs nothing else from the
 * engine.  Output is TAP (tap.h).
 *
 * test/engine/test_planner.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_reference.h"
#include "tap.h"
#include "wa_planner.h"
#include "wa_time.h"

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

/* splitmix64: small, and the same sequence everywhere */
static uint64_t
next_rand(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static int64_t
rand_between(uint64_t *state, int64_t lo, int64_t hi)
{
	return lo + (int64_t) (next_rand(state) % (uint64_t) (hi - lo + 1));
}

static wa_plan_options
paper_options(wa_cover_mode mode, bool factors)
{
	wa_plan_options o;

	memset(&o, 0, sizeof(o));
	o.mode = mode;
	o.factor_windows = factors;
	o.root = 1;
	o.event_rate = 1.0;
	return o;
}

static const char *
mode_name(wa_cover_mode mode)
{
	return mode == WA_COVERED_BY ? "covered-by" : "partitioned-by";
}

static int
count_factors(const wa_plan *p)
{
	int			k = 0;

	for (int i = 0; i < p->n_nodes; i++)
		k += p->nodes[i].factor;
	return k;
}

/*
 * Compare the three coverage functions with brute force on pairs drawn by
 * draw().  Returns a description of the first mismatch in why, and counts
 * the positives so the caller can tell the sample was not all negatives.
 */
typedef void (*pair_draw) (uint64_t *state, int64_t *w);

static void
draw_multiples(uint64_t *state, int64_t *w)
{
	/* half the pairs get a slide multiple of the other's, to hit coverage */
	w[3] = rand_between(state, 1, 10);
	w[2] = w[3] * rand_between(state, 1, 10);
	if (next_rand(state) % 2 == 0)
		w[1] = rand_between(state, 1, 10);
	else
		w[1] = w[3] * rand_between(state, 1, 10 / w[3]);
	w[0] = w[1] * rand_between(state, 1, 10);
}

static void
draw_any_ranges(uint64_t *state, int64_t *w)
{
	/* ranges not necessarily multiples of the slides (still s <= r) */
	w[3] = rand_between(state, 1, 10);
	w[2] = rand_between(state, w[3], 10 * w[3]);
	if (next_rand(state) % 2 == 0)
		w[1] = rand_between(state, 1, 10);
	else
		w[1] = w[3] * rand_between(state, 1, 10 / w[3]);
	w[0] = rand_between(state, w[1], 10 * w[1]);
}

static void
property_coverage(const char *label, pair_draw draw, uint64_t seed,
				  int pairs)
{
	uint64_t	state = seed;
	int		   *hits = malloc(100 * sizeof(int));
	int			n_cov = 0;
	int			n_part = 0;
	int			n_part_hopping = 0;
	char		why[256] = "";
	char		name[160];

	for (int i = 0; i < pairs && why[0] == '\0'; i++)
	{
		int64_t		w[4];
		brute_cover b;
		bool		cov;
		bool		part;
		int64_t		m;

		draw(&state, w);
		b = brute_force(w[0], w[1], w[2], w[3], hits);
		cov = wa_covered_by(w[0], w[1], w[2], w[3]);
		part = wa_partitioned_by(w[0], w[1], w[2], w[3]);
		m = wa_cover_multiplier(w[0], w[1], w[2], w[3]);
		if (cov != b.covered || part != b.partitioned ||
			(b.covered && m != b.m) || (!b.covered && m != 0))
			snprintf(why, sizeof(why),
					 "W<%" PRId64 ",%" PRId64 "> by W'<%" PRId64 ",%" PRId64
					 ">: covered %d (brute %d), partitioned %d (brute %d), "
					 "M %" PRId64 " (brute %" PRId64 ")",
					 w[0], w[1], w[2], w[3], cov, b.covered, part,
					 b.partitioned, m, b.m);
		n_cov += b.covered;
		n_part += b.partitioned;
		n_part_hopping += b.partitioned && w[2] != w[3];
	}
	free(hits);
	printf("# %s: %d pairs, %d covered, %d partitioned (%d by a hopping "
		   "window with M = 1)\n", label, pairs, n_cov, n_part,
		   n_part_hopping);
	snprintf(name, sizeof(name), "coverage theorem and M match brute force "
			 "(%s)", label);
	check(why[0] == '\0', name, "%s", why);
	snprintf(name, sizeof(name), "brute-force sample has positives (%s)",
			 label);
	check(n_cov >= pairs / 20 && n_part >= pairs / 50, name,
		  "%d covered, %d partitioned of %d", n_cov, n_part, pairs);
}

/* ----------------------------------------------------------------
 * Coverage functions by hand
 * ----------------------------------------------------------------
 */

static void
test_coverage_cases(void)
{
	/* the hopping example of the brief: W<20,5> over W'<10,5> */
	check(wa_covered_by(20, 5, 10, 5) &&
		  wa_cover_multiplier(20, 5, 10, 5) == 3 &&
		  !wa_partitioned_by(20, 5, 10, 5),
		  "W<20,5> covered by W'<10,5> with M = 3, not partitioned",
		  "covered %d, M %" PRId64 ", partitioned %d",
		  wa_covered_by(20, 5, 10, 5), wa_cover_multiplier(20, 5, 10, 5),
		  wa_partitioned_by(20, 5, 10, 5));
	/* Example 6's edges */
	check(wa_cover_multiplier(20, 20, 10, 10) == 2 &&
		  wa_cover_multiplier(30, 30, 10, 10) == 3 &&
		  wa_cover_multiplier(40, 40, 20, 20) == 2 &&
		  wa_cover_multiplier(40, 40, 10, 10) == 4 &&
		  !wa_covered_by(30, 30, 20, 20) && !wa_covered_by(40, 40, 30, 30),
		  "Example 6 multipliers 2, 3, 2, 4; 30 and 40 not covered by 20, 30",
		  NULL);
	check(wa_partitioned_by(40, 40, 20, 20) &&
		  wa_partitioned_by(60, 10, 10, 10) &&
		  !wa_partitioned_by(60, 10, 20, 20),
		  "partitioned by tumbling windows (Theorem 4)", NULL);
	/* a window covers itself (Theorem 2) but r2 > r never covers */
	check(wa_covered_by(30, 10, 30, 10) &&
		  wa_cover_multiplier(30, 10, 30, 10) == 1 &&
		  wa_partitioned_by(30, 10, 30, 10) &&
		  !wa_covered_by(10, 10, 20, 10) &&
		  wa_cover_multiplier(10, 10, 20, 10) == 0,
		  "reflexive with M = 1; a longer range never covers", NULL);
	/* the case Theorem 4 misses: one hopping instance per instance */
	check(wa_partitioned_by(30, 30, 30, 10) &&
		  wa_partitioned_by(30, 20, 30, 10) &&
		  !wa_partitioned_by(30, 30, 20, 10),
		  "r = r2 partitions even with a hopping W' (M = 1)", NULL);
	check(!wa_covered_by(0, 1, 1, 1) && !wa_covered_by(1, 1, 1, 0) &&
		  !wa_covered_by(-10, 10, 10, 10) && !wa_covered_by(10, 20, 5, 5) &&
		  !wa_covered_by(20, 10, 2, 4) && !wa_partitioned_by(0, 0, 0, 0) &&
		  wa_cover_multiplier(-5, 1, 1, 1) == 0,
		  "invalid windows (non-positive, slide past range) cover nothing",
		  NULL);
	check(wa_recurrence(120, 10, 10) == 12 &&
		  wa_recurrence(120, 20, 20) == 6 &&
		  wa_recurrence(120, 30, 30) == 4 &&
		  wa_recurrence(120, 40, 40) == 3,
		  "Example 6 recurrence counts 12, 6, 4, 3", NULL);
	check(wa_recurrence(20, 20, 5) == 1 && wa_recurrence(20, 10, 5) == 3 &&
		  wa_recurrence(120, 60, 10) == 1 + (120 / 60 - 1) * (60 / 10) &&
		  wa_recurrence(120, 50, 10) == 8 && wa_recurrence(10, 20, 10) == 0 &&
		  wa_recurrence(100, 0, 10) == 0 && wa_recurrence(100, 10, 0) == 0,
		  "recurrence of hopping windows, whole instances only, invalid 0",
		  NULL);
}

/* ----------------------------------------------------------------
 * Plan checks
 * ----------------------------------------------------------------
 */

/* Does node i of p match (range, slide, factor, parent, m, cost)? */
static bool
node_is(const wa_plan *p, int i, int64_t range, int64_t slide, bool factor,
		int parent, int64_t m, double cost, char *why, size_t len)
{
	const wa_plan_node *x;

	if (i >= p->n_nodes)
	{
		snprintf(why, len, "no node %d", i);
		return false;
	}
	x = &p->nodes[i];
	if (x->range == range && x->slide == slide && x->factor == factor &&
		x->parent == parent && x->m == m && x->cost == cost)
		return true;
	snprintf(why, len, "node %d is <%" PRId64 ",%" PRId64 "> factor %d "
			 "parent %d m %" PRId64 " cost %g; expected <%" PRId64 ",%" PRId64
			 "> factor %d parent %d m %" PRId64 " cost %g", i, x->range,
			 x->slide, x->factor, x->parent, x->m, x->cost, range, slide,
			 factor, parent, m, cost);
	return false;
}

/*
 * Everything a plan must satisfy, whatever its windows: requested windows
 * first and unchanged, parents valid and acyclic, each edge a coverage
 * (or partitioning) edge with the right multiplier, costs n * m adding up
 * to the totals, factors distinct and feeding something, totals ordered.
 */
static bool
plan_is_sound(const wa_plan *p, const int64_t *ranges, const int64_t *slides,
			  int n, const wa_plan_options *o, char *why, size_t len)
{
	double		total = 0.0;
	double		raw = 0.0;
	double		slices = 0.0;
	int64_t		period = 1;

	for (int i = 0; i < n; i++)
		period = period / wa_gcd(period, ranges[i]) * ranges[i];
	if (p->n_requested != n || p->n_nodes < n || p->period != period)
	{
		snprintf(why, len, "%d requested of %d nodes, period %" PRId64
				 "; expected %d requested, period %" PRId64, p->n_requested,
				 p->n_nodes, p->period, n, period);
		return false;
	}
	for (int i = 0; i < p->n_nodes; i++)
	{
		const wa_plan_node *x = &p->nodes[i];
		bool		in_model = x->range % x->slide == 0 &&
			wa_covered_by(x->range, x->slide, o->root, o->root);
		int			steps = 0;
		int64_t		m;
		int			children = 0;

		if (i < n && (x->range != ranges[i] || x->slide != slides[i] ||
					  x->factor))
		{
			snprintf(why, len, "requested node %d changed", i);
			return false;
		}
		if (i >= n && (!x->factor || !in_model))
		{
			snprintf(why, len, "node %d after the requested ones is not a "
					 "factor window in the model", i);
			return false;
		}
		for (int j = 0; j < p->n_nodes; j++)
			if (j != i && p->nodes[j].range == x->range &&
				p->nodes[j].slide == x->slide && (i >= n || j >= n))
			{
				snprintf(why, len, "factor node duplicates node %d or %d",
						 i, j);
				return false;
			}
		if (x->n != wa_recurrence(period, x->range, x->slide))
		{
			snprintf(why, len, "node %d: n %" PRId64, i, x->n);
			return false;
		}
		if (x->parent == WA_PLAN_ROOT)
		{
			m = in_model ? x->range / o->root :
				(x->range + o->root - 1) / o->root;
			/* a two-stack: s / root slices pushed, as many flipped, one query */
			if (x->stacked)
			{
				int64_t		s_slices = (x->slide + o->root - 1) / o->root;

				if (o->stack_overlap == 0 || x->range / o->stack_overlap < x->slide ||
					2 * s_slices + 1 >= m)
				{
					snprintf(why, len, "node %d: stacked but not eligible", i);
					return false;
				}
				m = 2 * s_slices + 1;
			}
		}
		else
		{
			const wa_plan_node *y;
			bool		feeds;

			if (x->parent < 0 || x->parent >= p->n_nodes || x->parent == i)
			{
				snprintf(why, len, "node %d: parent %d", i, x->parent);
				return false;
			}
			y = &p->nodes[x->parent];
			feeds = o->mode == WA_COVERED_BY ?
				wa_covered_by(x->range, x->slide, y->range, y->slide) :
				wa_partitioned_by(x->range, x->slide, y->range, y->slide);
			if (!feeds || !in_model ||
				!(y->range % y->slide == 0 &&
				  wa_covered_by(y->range, y->slide, o->root, o->root)))
			{
				snprintf(why, len, "node %d <%" PRId64 ",%" PRId64 "> is not "
						 "%s <%" PRId64 ",%" PRId64 ">", i, x->range, x->slide,
						 mode_name(o->mode), y->range, y->slide);
				return false;
			}
			m = wa_cover_multiplier(x->range, x->slide, y->range, y->slide);
		}
		/* following parents must reach the root */
		for (int k = x->parent; k != WA_PLAN_ROOT; k = p->nodes[k].parent)
			if (++steps > p->n_nodes)
			{
				snprintf(why, len, "node %d is on a cycle", i);
				return false;
			}
		if (x->m != m || x->cost != (double) x->n * (double) m)
		{
			snprintf(why, len, "node %d: m %" PRId64 " cost %g, expected m %"
					 PRId64, i, x->m, x->cost, m);
			return false;
		}
		for (int j = 0; j < p->n_nodes; j++)
			children += p->nodes[j].parent == i;
		if (x->factor && children == 0)
		{
			snprintf(why, len, "factor node %d feeds nothing", i);
			return false;
		}
		total += x->cost;
		if (i < n)
		{
			int64_t		root_m = in_model ? x->range / o->root :
				(x->range + o->root - 1) / o->root;
			int64_t		s_slices = (x->slide + o->root - 1) / o->root;

			/* from the root through a two-stack when that is cheaper */
			if (o->stack_overlap > 0 && x->range / o->stack_overlap >= x->slide &&
				2 * s_slices + 1 < root_m)
				root_m = 2 * s_slices + 1;
			raw += (double) x->n * o->event_rate * (double) x->range;
			slices += (double) x->n * (double) root_m;
		}
	}
	if (total != p->total_cost || raw != p->raw_cost ||
		slices != p->slices_cost)
	{
		snprintf(why, len, "totals %g raw %g slices %g, nodes add up to %g "
				 "%g %g", p->total_cost, p->raw_cost, p->slices_cost, total,
				 raw, slices);
		return false;
	}
	if (!(p->total_cost <= p->alg1_cost && p->alg1_cost <= p->slices_cost) ||
		(!o->factor_windows &&
		 (p->n_nodes != n || p->total_cost != p->alg1_cost)))
	{
		snprintf(why, len, "total %g, Algorithm 1 %g, from slices %g, %d "
				 "nodes", p->total_cost, p->alg1_cost, p->slices_cost,
				 p->n_nodes);
		return false;
	}
	return true;
}

static const char *
build(const int64_t *ranges, const int64_t *slides, int n,
	  const wa_plan_options *o, wa_plan *p)
{
	return wa_plan_build(ranges, slides, n, o, p);
}

/* ----------------------------------------------------------------
 * The paper's examples
 * ----------------------------------------------------------------
 */

/* Example 6: tumbling 10/20/30/40, R = 120 */
static void
test_example6(void)
{
	static const int64_t r[] = {10, 20, 30, 40};

	for (int mode = 0; mode < 2; mode++)
		for (int factors = 0; factors < 2; factors++)
		{
			wa_plan_options o = paper_options((wa_cover_mode) mode, factors);
			wa_plan		p;
			const char *msg = build(r, r, 4, &o, &p);
			char		why[400] = "";
			char		name[160];
			bool		ok = msg == NULL;

			ok = ok && plan_is_sound(&p, r, r, 4, &o, why, sizeof(why));
			ok = ok && node_is(&p, 0, 10, 10, false, WA_PLAN_ROOT, 10, 120,
							   why, sizeof(why));
			ok = ok && node_is(&p, 1, 20, 20, false, 0, 2, 12, why,
							   sizeof(why));
			ok = ok && node_is(&p, 2, 30, 30, false, 0, 3, 12, why,
							   sizeof(why));
			ok = ok && node_is(&p, 3, 40, 40, false, 1, 2, 6, why,
							   sizeof(why));
			if (ok && !(p.n_nodes == 4 && p.period == 120 &&
						p.total_cost == 150 && p.alg1_cost == 150 &&
						p.raw_cost == 480 && p.slices_cost == 480))
			{
				ok = false;
				snprintf(why, sizeof(why), "%d nodes, period %" PRId64
						 ", total %g, Algorithm 1 %g, raw %g, slices %g",
						 p.n_nodes, p.period, p.total_cost, p.alg1_cost,
						 p.raw_cost, p.slices_cost);
			}
			snprintf(name, sizeof(name), "Example 6 (10/20/30/40, %s, factors "
					 "%s): 20<-10, 30<-10, 40<-20, cost 150 of 480",
					 mode_name(o.mode), factors ? "on" : "off");
			check(ok, name, "%s", msg ? msg : why);
			wa_plan_free(&p);
		}
}

/*
 * The options the engine adds to the paper's model: two-stack costs from
 * the root, no sharing at all, and a bound on M.
 */
static void
test_engine_options(void)
{
	static const int64_t hr[] = {600, 1200};
	static const int64_t hs[] = {1, 1};
	static const int64_t tr[] = {10, 20, 30, 40};
	static const int64_t big[] = {10, 400};
	wa_plan_options o = paper_options(WA_COVERED_BY, true);
	wa_plan		p;
	const char *msg;
	char		why[400] = "";
	bool		ok;

	/* sliding windows from slices cost 2 s + 1 = 3 merges: no parent helps */
	o.stack_overlap = 4;
	msg = build(hr, hs, 2, &o, &p);
	ok = msg == NULL && plan_is_sound(&p, hr, hs, 2, &o, why, sizeof(why));
	ok = ok && p.n_nodes == 2 && p.nodes[0].stacked && p.nodes[1].stacked &&
		p.nodes[0].parent == WA_PLAN_ROOT && p.nodes[1].parent == WA_PLAN_ROOT &&
		p.nodes[0].m == 3 && p.nodes[1].m == 3 && p.total_cost == p.slices_cost;
	check(ok, "engine options: sliding 600/1 and 1200/1 stay on two-stacks",
		  "%s", msg ? msg : why[0] ? why : "unexpected plan");
	wa_plan_free(&p);

	/* root only: every window from slices, no factor */
	o.stack_overlap = 0;
	o.root_only = true;
	msg = build(tr, tr, 4, &o, &p);
	ok = msg == NULL && p.n_nodes == 4 && p.total_cost == p.slices_cost;
	for (int i = 0; ok && i < 4; i++)
		ok = p.nodes[i].parent == WA_PLAN_ROOT && p.nodes[i].m == tr[i];
	check(ok, "engine options: root only plans every window from slices",
		  "%s", msg ? msg : "unexpected plan");
	wa_plan_free(&p);

	/* a bound on M: 400 may not read 40 instances of 10 */
	o.root_only = false;
	o.factor_windows = false;
	o.max_multiplier = 16;
	msg = build(big, big, 2, &o, &p);
	ok = msg == NULL && p.n_nodes == 2 && p.nodes[1].parent == WA_PLAN_ROOT;
	wa_plan_free(&p);
	o.max_multiplier = 0;
	msg = msg ? msg : build(big, big, 2, &o, &p);
	ok = ok && msg == NULL && p.nodes[1].parent == 0 && p.nodes[1].m == 40;
	check(ok, "engine options: max_multiplier bounds M",
		  "%s", msg ? msg : "unexpected plan");
	wa_plan_free(&p);
}

/* Example 7: tumbling 20/30/40; 360 raw, 246 by Algorithm 1, 150 with 10 */
static void
test_example7(void)
{
	static const int64_t r[] = {20, 30, 40};

	for (int mode = 0; mode < 2; mode++)
	{
		wa_plan_options o = paper_options((wa_cover_mode) mode, false);
		wa_plan		p;
		const char *msg = build(r, r, 3, &o, &p);
		char		why[400] = "";
		char		name[160];
		bool		ok = msg == NULL;

		ok = ok && plan_is_sound(&p, r, r, 3, &o, why, sizeof(why));
		ok = ok && node_is(&p, 0, 20, 20, false, WA_PLAN_ROOT, 20, 120, why,
						   sizeof(why));
		ok = ok && node_is(&p, 1, 30, 30, false, WA_PLAN_ROOT, 30, 120, why,
						   sizeof(why));
		ok = ok && node_is(&p, 2, 40, 40, false, 0, 2, 6, why, sizeof(why));
		if (ok && !(p.raw_cost == 360 && p.total_cost == 246 &&
					p.alg1_cost == 246))
		{
			ok = false;
			snprintf(why, sizeof(why), "raw %g, total %g, Algorithm 1 %g",
					 p.raw_cost, p.total_cost, p.alg1_cost);
		}
		snprintf(name, sizeof(name), "Example 7 without factors (%s): 360 "
				 "raw, 246 by Algorithm 1", mode_name(o.mode));
		check(ok, name, "%s", msg ? msg : why);
		wa_plan_free(&p);

		o.factor_windows = true;
		msg = build(r, r, 3, &o, &p);
		ok = msg == NULL;
		why[0] = '\0';
		ok = ok && plan_is_sound(&p, r, r, 3, &o, why, sizeof(why));
		ok = ok && node_is(&p, 3, 10, 10, true, WA_PLAN_ROOT, 10, 120, why,
						   sizeof(why));
		ok = ok && node_is(&p, 0, 20, 20, false, 3, 2, 12, why, sizeof(why));
		ok = ok && node_is(&p, 1, 30, 30, false, 3, 3, 12, why, sizeof(why));
		ok = ok && node_is(&p, 2, 40, 40, false, 0, 2, 6, why, sizeof(why));
		if (ok && !(p.n_nodes == 4 && p.total_cost == 150 &&
					p.alg1_cost == 246 && p.raw_cost == 360))
		{
			ok = false;
			snprintf(why, sizeof(why), "%d nodes, total %g, Algorithm 1 %g",
					 p.n_nodes, p.total_cost, p.alg1_cost);
		}
		snprintf(name, sizeof(name), "Example 7 with factors (%s): factor "
				 "window 10 brings 246 down to 150", mode_name(o.mode));
		check(ok, name, "%s", msg ? msg : why);
		wa_plan_free(&p);
	}
}

/*
 * Example 8: under partitioned-by, Algorithm 4's candidates for the root
 * S<1,1> above 20, 30 and 40 are the divisors of gcd(20, 30, 40) = 10 that
 * are multiples of 1, other than 1: 2, 5 and 10.  Each costs, with the
 * three windows, what Algorithm 1 gives for the four as a set (the period
 * stays 120): 246 (no better), 174 and 150; 10 wins.
 */
static void
test_example8(void)
{
	static const int64_t r[] = {20, 30, 40, 0};
	int64_t		set[4];
	int64_t		d = wa_gcd(wa_gcd(r[0], r[1]), r[2]);
	int64_t		cands[8];
	int			nc = 0;
	static const double expected[] = {246, 174, 150};
	double		best_cost = 0;
	int64_t		best = 0;
	bool		ok = true;
	char		why[400] = "";
	wa_plan_options o = paper_options(WA_PARTITIONED_BY, false);
	wa_plan		p;
	const char *msg;

	/* the target's range r_W = 1 divides everything; r_W itself is out */
	for (int64_t f = 2; f <= d; f++)
		if (d % f == 0 && nc < 8)
			cands[nc++] = f;
	check(nc == 3 && cands[0] == 2 && cands[1] == 5 && cands[2] == 10,
		  "Example 8: Algorithm 4 candidates are 2, 5 and 10",
		  "%d candidates", nc);

	memcpy(set, r, sizeof(set));
	for (int i = 0; i < nc && i < 3 && ok; i++)
	{
		set[3] = cands[i];
		msg = build(set, set, 4, &o, &p);
		if (msg != NULL || p.period != 120 || p.total_cost != expected[i])
		{
			ok = false;
			snprintf(why, sizeof(why), "candidate %" PRId64 ": %s, total %g"
					 " (expected %g)", cands[i], msg ? msg : "ok",
					 p.total_cost, expected[i]);
		}
		if (i == 0 || p.total_cost < best_cost)
		{
			best_cost = p.total_cost;
			best = cands[i];
		}
		wa_plan_free(&p);
	}
	check(ok && best == 10, "Example 8: candidates 2, 5, 10 cost 246, 174, "
		  "150", "%s", why);

	o.factor_windows = true;
	msg = build(r, r, 3, &o, &p);
	check(msg == NULL && p.n_nodes == 4 && count_factors(&p) == 1 &&
		  p.nodes[3].range == best && p.nodes[3].slide == best &&
		  p.total_cost == best_cost,
		  "Example 8: the planner picks the cheapest candidate, 10",
		  "%s, %d nodes, total %g", msg ? msg : "ok", p.n_nodes,
		  p.total_cost);
	wa_plan_free(&p);
}

/* ----------------------------------------------------------------
 * Hand-computed plans
 * ----------------------------------------------------------------
 */

/*
 * W<20,5> and W'<10,5>, R = 20: W recurs once, W' three times.  Covered-by
 * feeds W from W' (M = 3): 30 + 3 = 33.  Partitioned-by cannot: 30 + 20.
 * With factors, the tumbling 5 feeds W' (M = 2) and, under partitioned-by,
 * W too (M = 4): 20 + 6 + 3 = 29, and 20 + 6 + 4 = 30.
 */
static void
test_hopping(void)
{
	static const int64_t r[] = {20, 10};
	static const int64_t s[] = {5, 5};
	static const struct
	{
		wa_cover_mode mode;
		bool		factors;
		double		total;
		int			parent0;
		int64_t		m0;
	}			cases[] = {
		{WA_COVERED_BY, false, 33, 1, 3},
		{WA_PARTITIONED_BY, false, 50, WA_PLAN_ROOT, 20},
		{WA_COVERED_BY, true, 29, 1, 3},
		{WA_PARTITIONED_BY, true, 30, 2, 4},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		wa_plan_options o = paper_options(cases[i].mode, cases[i].factors);
		wa_plan		p;
		const char *msg = build(r, s, 2, &o, &p);
		char		why[400] = "";
		char		name[160];
		bool		ok = msg == NULL;

		ok = ok && plan_is_sound(&p, r, s, 2, &o, why, sizeof(why));
		ok = ok && node_is(&p, 0, 20, 5, false, cases[i].parent0, cases[i].m0,
						   (double) cases[i].m0, why, sizeof(why));
		if (ok && cases[i].factors)
			ok = node_is(&p, 2, 5, 5, true, WA_PLAN_ROOT, 5, 20, why,
						 sizeof(why)) &&
				node_is(&p, 1, 10, 5, false, 2, 2, 6, why, sizeof(why));
		if (ok && p.total_cost != cases[i].total)
		{
			ok = false;
			snprintf(why, sizeof(why), "total %g", p.total_cost);
		}
		snprintf(name, sizeof(name), "hopping W<20,5> and W'<10,5> (%s, "
				 "factors %s) costs %g", mode_name(o.mode),
				 o.factor_windows ? "on" : "off", cases[i].total);
		check(ok, name, "%s", msg ? msg : why);
		wa_plan_free(&p);
	}
}

static void
test_small_plans(void)
{
	wa_plan_options o = paper_options(WA_COVERED_BY, true);
	wa_plan		p;
	const char *msg;
	char		why[400] = "";
	bool		ok;

	/* one tumbling window: from the root, nothing to share */
	{
		static const int64_t r[] = {10};

		msg = build(r, r, 1, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, r, 1, &o, why, sizeof(why)) &&
			node_is(&p, 0, 10, 10, false, WA_PLAN_ROOT, 10, 10, why,
					sizeof(why)) &&
			p.n_nodes == 1 && p.period == 10 && p.total_cost == 10;
		check(ok, "single tumbling window: from the root, cost 10", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}

	/*
	 * One hopping window W<100,10>: R = 100, so it recurs once (n = 1) and
	 * costs 100; the factor 10 would cost 10 * 10 + 1 * 10 = 110.
	 */
	{
		static const int64_t r[] = {100};
		static const int64_t s[] = {10};

		msg = build(r, s, 1, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 1, &o, why, sizeof(why)) &&
			node_is(&p, 0, 100, 10, false, WA_PLAN_ROOT, 100, 100, why,
					sizeof(why)) &&
			p.n_nodes == 1;
		check(ok, "single hopping window W<100,10>: n = 1, no factor", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}

	/*
	 * In windowagg's units the root is the slice width: W<60,10> and
	 * W<120,60> over slices of 10.  R = 120; n = 7 and 1; from the root
	 * M = 6 and 12; W<120,60> from W<60,10> M = 7 under covered-by only.
	 */
	{
		static const int64_t r[] = {60, 120};
		static const int64_t s[] = {10, 60};
		wa_plan_options o2 = o;

		o2.root = 10;
		o2.event_rate = 2.5;
		o2.factor_windows = false;
		msg = build(r, s, 2, &o2, &p);
		ok = msg == NULL &&
			plan_is_sound(&p, r, s, 2, &o2, why, sizeof(why)) &&
			node_is(&p, 0, 60, 10, false, WA_PLAN_ROOT, 6, 42, why,
					sizeof(why)) &&
			node_is(&p, 1, 120, 60, false, 0, 7, 7, why, sizeof(why));
		if (ok && !(p.raw_cost == 2.5 * (7 * 60 + 120) &&
					p.slices_cost == 54 && p.total_cost == 49))
		{
			ok = false;
			snprintf(why, sizeof(why), "raw %g slices %g total %g",
					 p.raw_cost, p.slices_cost, p.total_cost);
		}
		check(ok, "root 10, event rate 2.5: M from the root is r / 10, raw "
			  "cost scales with the rate", "%s", msg ? msg : why);
		wa_plan_free(&p);

		o2.mode = WA_PARTITIONED_BY;
		msg = build(r, s, 2, &o2, &p);
		ok = msg == NULL &&
			plan_is_sound(&p, r, s, 2, &o2, why, sizeof(why)) &&
			node_is(&p, 1, 120, 60, false, WA_PLAN_ROOT, 12, 12, why,
					sizeof(why));
		check(ok, "root 10, partitioned-by: a hopping window feeds nothing",
			  "%s", msg ? msg : why);
		wa_plan_free(&p);
	}

	/* twins: the second is the first, at one instance per instance */
	{
		static const int64_t r[] = {10, 10};

		msg = build(r, r, 2, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, r, 2, &o, why, sizeof(why)) &&
			node_is(&p, 0, 10, 10, false, WA_PLAN_ROOT, 10, 10, why,
					sizeof(why)) &&
			node_is(&p, 1, 10, 10, false, 0, 1, 1, why, sizeof(why));
		check(ok, "duplicate windows: the later one is fed by the earlier",
			  "%s", msg ? msg : why);
		wa_plan_free(&p);
	}

	/*
	 * Outside the model: W<10,3> (range not a multiple of the slide) and,
	 * over a root of 10, W<15,15>: planned from the root, m = ceil(r /
	 * root), never a parent.  W<30,30> costs 3 from W<10,10> as from the
	 * root, whose range is the same: the root wins the tie.
	 */
	{
		static const int64_t r[] = {10, 20};
		static const int64_t s[] = {3, 10};
		static const int64_t r2[] = {10, 15, 30};
		wa_plan_options o2 = o;

		msg = build(r, s, 2, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 2, &o, why, sizeof(why)) &&
			node_is(&p, 0, 10, 3, false, WA_PLAN_ROOT, 10, 40, why,
					sizeof(why)) &&
			node_is(&p, 1, 20, 10, false, WA_PLAN_ROOT, 20, 20, why,
					sizeof(why));
		check(ok, "range not a multiple of the slide: planned from the root",
			  "%s", msg ? msg : why);
		wa_plan_free(&p);

		o2.root = 10;
		msg = build(r2, r2, 3, &o2, &p);
		ok = msg == NULL &&
			plan_is_sound(&p, r2, r2, 3, &o2, why, sizeof(why)) &&
			node_is(&p, 1, 15, 15, false, WA_PLAN_ROOT, 2, 4, why,
					sizeof(why)) &&
			node_is(&p, 2, 30, 30, false, WA_PLAN_ROOT, 3, 3, why,
					sizeof(why));
		check(ok, "window not covered by the root: from the root, m = "
			  "ceil(r / root), feeds nothing; ties go to the root", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}

	/*
	 * 20, 30 and 7: gcd 1, so no factor covers all three, but 10 serves
	 * 20 and 30.  R = 420: 3 * 420 from the root; with 10, 420 + 42 + 42
	 * + 420.
	 */
	{
		static const int64_t r[] = {20, 30, 7};
		wa_plan_options o2 = paper_options(WA_PARTITIONED_BY, true);

		msg = build(r, r, 3, &o2, &p);
		ok = msg == NULL &&
			plan_is_sound(&p, r, r, 3, &o2, why, sizeof(why)) &&
			node_is(&p, 3, 10, 10, true, WA_PLAN_ROOT, 10, 420, why,
					sizeof(why)) &&
			p.alg1_cost == 1260 && p.total_cost == 924;
		check(ok, "20, 30 and 7: a factor serves a subset (10 for 20 and 30)",
			  "%s, total %g", msg ? msg : why, p.total_cost);
		wa_plan_free(&p);
	}

	/* many candidates (slides of 1 up to a day in seconds): capped */
	{
		static const int64_t r[] = {86400, 3600, 60, 7200};
		static const int64_t s[] = {60, 60, 1, 30};

		msg = build(r, s, 4, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 4, &o, why, sizeof(why));
		check(ok, "large ranges: candidate list capped, plan sound", "%s",
			  msg ? msg : why);
		printf("# large ranges: %d nodes, total %g, Algorithm 1 %g, "
			   "slices %g\n", p.n_nodes, p.total_cost, p.alg1_cost,
			   p.slices_cost);
		wa_plan_free(&p);
	}
}

/*
 * Ties between parents, and factor windows that later ones make useless.
 */
static void
test_ties_and_pruning(void)
{
	wa_plan_options o = paper_options(WA_COVERED_BY, false);
	wa_plan		p;
	const char *msg;
	char		why[400] = "";
	bool		ok;

	/*
	 * R = 120: W<40,40> (n = 3) costs 6 from W<20,20> (M = 2) and from
	 * W<30,10> (M = 1 + 10 / 10 = 2); the larger range wins.
	 */
	{
		static const int64_t r[] = {40, 20, 30};
		static const int64_t s[] = {40, 20, 10};

		msg = build(r, s, 3, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 3, &o, why, sizeof(why)) &&
			node_is(&p, 0, 40, 40, false, 2, 2, 6, why, sizeof(why)) &&
			p.total_cost == 426;
		check(ok, "equal costs: the parent with the larger range wins", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}

	/* W<20,20> is one instance of W<20,5> and of W<20,10>: lowest index */
	{
		static const int64_t r[] = {20, 20, 20};
		static const int64_t s[] = {20, 5, 10};

		msg = build(r, s, 3, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 3, &o, why, sizeof(why)) &&
			node_is(&p, 0, 20, 20, false, 1, 1, 1, why, sizeof(why)) &&
			node_is(&p, 2, 20, 10, false, 1, 1, 1, why, sizeof(why)) &&
			p.total_cost == 22;
		check(ok, "equal costs and ranges: the lowest index wins", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}

	/*
	 * W<30,10> and W<12,6>, R = 60, from the root 120 + 108.  The greedy
	 * search first adds the tumbling 2 (feeding both: 60 + 60 + 54), then
	 * 10 and 6 from it; 2 then only feeds 10 and 6, at 60 + 30 + 30, what
	 * they cost from the root, and is dropped: 60 + 60 + 12 + 18 = 150.
	 */
	{
		static const int64_t r[] = {30, 12};
		static const int64_t s[] = {10, 6};

		o.factor_windows = true;
		msg = build(r, s, 2, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 2, &o, why, sizeof(why)) &&
			node_is(&p, 2, 10, 10, true, WA_PLAN_ROOT, 10, 60, why,
					sizeof(why)) &&
			node_is(&p, 3, 6, 6, true, WA_PLAN_ROOT, 6, 60, why,
					sizeof(why)) &&
			p.n_nodes == 4 && p.total_cost == 150 && p.alg1_cost == 228;
		check(ok, "a factor that no longer saves anything is dropped", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}

	/*
	 * Partitioned-by, R = 720: the factor 4, added first for 48 and 24,
	 * costs more than it saves once 8 serves 48, and goes; 12 (from 3)
	 * then serves 24.  Factors 3, 10, 8 and 12; 11146 down to 4580.
	 */
	{
		static const int64_t r[] = {48, 24, 20, 18};
		static const int64_t s[] = {8, 12, 10, 3};
		bool		has4 = false;

		o.mode = WA_PARTITIONED_BY;
		msg = build(r, s, 4, &o, &p);
		ok = msg == NULL && plan_is_sound(&p, r, s, 4, &o, why, sizeof(why));
		for (int i = 0; ok && i < p.n_nodes; i++)
			has4 = has4 || p.nodes[i].range == 4;
		ok = ok && !has4 && p.n_nodes == 8 && p.total_cost == 4580 &&
			p.alg1_cost == 11146;
		check(ok, "a factor that later ones make costly is dropped", "%s",
			  msg ? msg : why);
		wa_plan_free(&p);
	}
}

static void
test_invalid(void)
{
	static const int64_t r[] = {10, 20};
	static const int64_t bad[] = {10, 0};
	static const int64_t neg[] = {-10, 20};
	/* three primes near 2^30: the lcm needs about 90 bits */
	static const int64_t primes[] = {1000000007, 1000000009, 998244353};
	wa_plan_options o = paper_options(WA_COVERED_BY, true);
	wa_plan_options o2;
	wa_plan		p;
	const char *msg;
	bool		ok = true;
	char		why[200] = "";
	struct
	{
		const char *what;
		const int64_t *ranges;
		const int64_t *slides;
		int			n;
		bool		bad_root;
		int			bad_rate;
	}			cases[] = {
		{"empty set", r, r, 0, false, 0},
		{"NULL ranges", NULL, r, 2, false, 0},
		{"NULL slides", r, NULL, 2, false, 0},
		{"zero slide", r, bad, 2, false, 0},
		{"zero range", bad, r, 2, false, 0},
		{"negative range", neg, r, 2, false, 0},
		{"root 0", r, r, 2, true, 0},
		{"event rate 0", r, r, 2, false, 1},
		{"event rate NaN", r, r, 2, false, 2},
		{"event rate infinite", r, r, 2, false, 3},
		{"period overflow", primes, primes, 3, false, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		o2 = o;
		if (cases[i].bad_root)
			o2.root = 0;
		if (cases[i].bad_rate == 1)
			o2.event_rate = 0.0;
		else if (cases[i].bad_rate == 2)
			o2.event_rate = NAN;
		else if (cases[i].bad_rate == 3)
			o2.event_rate = HUGE_VAL;
		memset(&p, 0x5a, sizeof(p));
		msg = wa_plan_build(cases[i].ranges, cases[i].slides, cases[i].n,
							&o2, &p);
		printf("# %s: %s\n", cases[i].what, msg ? msg : "(accepted)");
		if (msg == NULL || msg[0] == '\0' || p.nodes != NULL ||
			p.n_nodes != 0)
		{
			ok = false;
			snprintf(why, sizeof(why), "%s: %s", cases[i].what,
					 msg ? msg : "accepted");
		}
		wa_plan_free(&p);
	}
	check(ok, "invalid input: a message, and an empty plan", "%s", why);

	msg = wa_plan_build(r, r, 2, NULL, &p);
	check(msg != NULL && p.nodes == NULL, "no options: a message", NULL);
	msg = wa_plan_build(r, r, 2, &o, NULL);
	check(msg != NULL, "no plan: a message", NULL);

	msg = wa_plan_build(r, r, 2, &o, &p);
	check(msg == NULL && p.n_nodes == 2, "valid input after invalid ones",
		  "%s", msg);
	wa_plan_free(&p);
	wa_plan_free(&p);
	check(p.nodes == NULL && p.n_nodes == 0,
		  "wa_plan_free empties the plan and may be called twice", NULL);

	{
		/* the largest periods still fit */
		static const int64_t big[] = {(int64_t) 1 << 61, (int64_t) 3 << 60};

		msg = wa_plan_build(big, big, 2, &o, &p);
		check(msg == NULL && p.period == (int64_t) 3 << 61,
			  "period 3 * 2^61 does not overflow", "%s",
			  msg ? msg : "wrong period");
		wa_plan_free(&p);
	}
}

/* ----------------------------------------------------------------
 * Memory
 * ----------------------------------------------------------------
 */

/*
 * A counting allocator that checks the sizes frees and reallocs pass back
 * and fails (returns NULL) at one chosen call.
 */
typedef struct plan_counter
{
	int64_t		live;			/* bytes held */
	int64_t		peak;
	int64_t		calls;			/* allocs and reallocs so far */
	int64_t		reallocs;
	int64_t		fail_at;		/* the call (from 0) that fails, or -1 */
	int64_t		errors;			/* wrong sizes, NULL reallocs */
} plan_counter;

#define PC_HDR 16				/* the block's size, then the user's bytes */

static void *
pc_alloc(void *arg, size_t size)
{
	plan_counter *pc = arg;
	char	   *h;

	if (pc->calls++ == pc->fail_at)
		return NULL;
	h = malloc(PC_HDR + size);
	if (h == NULL)
		abort();
	memcpy(h, &size, sizeof(size));
	pc->live += (int64_t) size;
	if (pc->live > pc->peak)
		pc->peak = pc->live;
	return h + PC_HDR;
}

static void *
pc_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	plan_counter *pc = arg;
	char	   *h;
	size_t		size;

	pc->reallocs++;
	if (ptr == NULL)
	{
		pc->errors++;			/* wa_allocator.h: never */
		return pc_alloc(arg, new_size);
	}
	if (pc->calls++ == pc->fail_at)
		return NULL;			/* the block stays as it was */
	h = (char *) ptr - PC_HDR;
	memcpy(&size, h, sizeof(size));
	if (size != old_size)
		pc->errors++;
	h = realloc(h, PC_HDR + new_size);
	if (h == NULL)
		abort();
	memcpy(h, &new_size, sizeof(new_size));
	pc->live += (int64_t) new_size - (int64_t) size;
	if (pc->live > pc->peak)
		pc->peak = pc->live;
	return h + PC_HDR;
}

static void
pc_free(void *arg, void *ptr, size_t size)
{
	plan_counter *pc = arg;
	char	   *h = (char *) ptr - PC_HDR;
	size_t		held;

	memcpy(&held, h, sizeof(held));
	if (held != size)
		pc->errors++;
	pc->live -= (int64_t) held;
	free(h);
}

static void
pc_setup(plan_counter *pc, wa_allocator *al, int64_t fail_at)
{
	memset(pc, 0, sizeof(*pc));
	pc->fail_at = fail_at;
	al->alloc = pc_alloc;
	al->realloc = pc_realloc;
	al->free = pc_free;
	al->arg = pc;
}

/*
 * Plan through a counting allocator: after planning only the nodes are
 * held, and after wa_plan_free nothing, though the allocator struct the
 * options pointed to is gone by then (the plan keeps a copy).  Then fail
 * each allocation of that planning in turn: "out of memory", an empty
 * plan, and nothing held.
 */
static void
test_memory(void)
{
	/* 720720 has 240 divisors: the slide list grows by realloc */
	static const int64_t hr[] = {2 * 720720, 3 * 720720, 720720};
	static const int64_t hs[] = {720720, 720720, 720720};
	static const int64_t tr[] = {10, 20, 30, 40};
	struct
	{
		const char *what;
		const int64_t *ranges;
		const int64_t *slides;
		int			n;
		wa_cover_mode mode;
	}			cases[] = {
		{"example 6 with factors", tr, tr, 4, WA_PARTITIONED_BY},
		{"hopping, slide 720720, covered-by", hr, hs, 3, WA_COVERED_BY},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		wa_plan_options o = paper_options(cases[i].mode, true);
		plan_counter pc;
		wa_allocator al;
		wa_plan		p;
		const char *msg;
		int64_t		calls;
		int64_t		nodes_bytes;
		char		name[160];
		char		why[200] = "";
		bool		ok = true;

		o.allocator = &al;
		pc_setup(&pc, &al, -1);
		msg = wa_plan_build(cases[i].ranges, cases[i].slides, cases[i].n,
							&o, &p);
		nodes_bytes = (int64_t) (p.n_nodes * sizeof(wa_plan_node));
		calls = pc.calls;
		snprintf(name, sizeof(name),
				 "planner memory, %s: from the allocator, only the nodes "
				 "held after planning", cases[i].what);
		check(msg == NULL && calls > 1 && pc.peak > nodes_bytes &&
			  pc.live == nodes_bytes && pc.errors == 0, name,
			  "%s; %" PRId64 " calls, peak %" PRId64 ", %" PRId64
			  " held for %" PRId64 " bytes of nodes, %" PRId64 " errors",
			  msg ? msg : "planned", calls, pc.peak, pc.live, nodes_bytes,
			  pc.errors);
		memset(&al, 0, sizeof(al));
		wa_plan_free(&p);
		snprintf(name, sizeof(name),
				 "planner memory, %s: wa_plan_free gives every byte back to "
				 "the plan's allocator", cases[i].what);
		check(pc.live == 0 && pc.errors == 0 && p.nodes == NULL, name,
			  "%" PRId64 " bytes held, %" PRId64 " errors", pc.live,
			  pc.errors);
		if (i == 1)
			check(pc.reallocs > 0, "planner memory: slide lists grow by "
				  "realloc", "%" PRId64 " reallocs", pc.reallocs);

		for (int64_t k = 0; k < calls && ok; k++)
		{
			pc_setup(&pc, &al, k);
			memset(&p, 0x5a, sizeof(p));
			msg = wa_plan_build(cases[i].ranges, cases[i].slides, cases[i].n,
								&o, &p);
			if (msg == NULL || strcmp(msg, "out of memory") != 0 ||
				p.nodes != NULL || p.n_nodes != 0 || pc.live != 0 ||
				pc.errors != 0)
			{
				ok = false;
				snprintf(why, sizeof(why), "call %" PRId64 " failing: %s, "
						 "%" PRId64 " bytes held, %" PRId64 " errors", k,
						 msg ? msg : "planned", pc.live, pc.errors);
			}
			wa_plan_free(&p);
		}
		snprintf(name, sizeof(name),
				 "planner memory, %s: out of memory at each of %" PRId64
				 " calls gives everything back", cases[i].what, calls);
		check(ok, name, "%s", why);
	}
}

/* ----------------------------------------------------------------
 * Random window sets
 * ----------------------------------------------------------------
 */

static void
test_random_plans(uint64_t seed, int sets)
{
	uint64_t	state = seed;
	int		   *hits = malloc(200 * sizeof(int));
	char		why[400] = "";
	int			n_plans = 0;
	int			n_with_factors = 0;
	int			n_hopping_factors = 0;
	double		saved_alg1 = 0;
	double		saved_factors = 0;
	bool		sound = true;
	bool		alg1_ok = true;
	bool		single_ok = true;
	bool		deterministic = true;

	for (int k = 0; k < sets; k++)
	{
		int64_t		r[16];
		int64_t		s[16];
		int			n = (int) rand_between(&state, 1, 7);
		int64_t		max_r = 0;
		int64_t		root = next_rand(&state) % 4 == 0 ? 2 : 1;

		for (int i = 0; i < n; i++)
		{
			/* a few windows outside the model, and some twins */
			if (i > 0 && next_rand(&state) % 8 == 0)
			{
				int			j = (int) rand_between(&state, 0, i - 1);

				r[i] = r[j];
				s[i] = s[j];
			}
			else
			{
				s[i] = rand_between(&state, 1, 12);
				r[i] = s[i] * rand_between(&state, 1, 8);
				if (next_rand(&state) % 16 == 0)
					r[i] += 1;
			}
			if (r[i] > max_r)
				max_r = r[i];
		}
		for (int mode = 0; mode < 2; mode++)
		{
			wa_plan_options o = paper_options((wa_cover_mode) mode, false);
			wa_plan		p0;
			wa_plan		p1;
			wa_plan		p2;
			double		single;
			int64_t		fr = 0;
			int64_t		fs = 0;

			o.root = root;
			if (build(r, s, n, &o, &p0) != NULL)
			{
				sound = false;
				snprintf(why, sizeof(why), "set %d rejected", k);
				continue;
			}
			o.factor_windows = true;
			if (build(r, s, n, &o, &p1) != NULL ||
				build(r, s, n, &o, &p2) != NULL)
			{
				sound = false;
				snprintf(why, sizeof(why), "set %d rejected", k);
				wa_plan_free(&p0);
				continue;
			}
			n_plans++;
			o.factor_windows = false;
			if (sound && !plan_is_sound(&p0, r, s, n, &o, why, sizeof(why)))
				sound = false;
			o.factor_windows = true;
			if (sound && !plan_is_sound(&p1, r, s, n, &o, why, sizeof(why)))
				sound = false;
			if (alg1_ok &&
				(p0.total_cost != brute_alg1(r, s, n, &o, p0.period, hits) ||
				 p1.alg1_cost != p0.total_cost))
			{
				alg1_ok = false;
				snprintf(why, sizeof(why), "set %d %s: Algorithm 1 %g, "
						 "brute force %g", k, mode_name(o.mode),
						 p0.total_cost,
						 brute_alg1(r, s, n, &o, p0.period, hits));
			}
			single = best_single_factor(r, s, n, &o, p0.period, max_r,
										&fr, &fs);
			if (single_ok && single >= 0 && p1.total_cost > single)
			{
				single_ok = false;
				snprintf(why, sizeof(why), "set %d %s: factor plan %g, but "
						 "<%" PRId64 ",%" PRId64 "> alone gives %g", k,
						 mode_name(o.mode), p1.total_cost, fr, fs, single);
			}
			if (p1.n_nodes != p2.n_nodes || p1.total_cost != p2.total_cost)
				deterministic = false;
			for (int i = 0; deterministic && i < p1.n_nodes; i++)
			{
				const wa_plan_node *a = &p1.nodes[i];
				const wa_plan_node *b = &p2.nodes[i];

				deterministic = a->range == b->range &&
					a->slide == b->slide && a->factor == b->factor &&
					a->parent == b->parent && a->n == b->n &&
					a->m == b->m && a->cost == b->cost;
			}
			n_with_factors += p1.n_nodes > n;
			for (int i = n; i < p1.n_nodes; i++)
				n_hopping_factors += p1.nodes[i].range != p1.nodes[i].slide;
			saved_alg1 += p0.slices_cost - p0.total_cost;
			saved_factors += p0.total_cost - p1.total_cost;
			wa_plan_free(&p0);
			wa_plan_free(&p1);
			wa_plan_free(&p2);
		}
	}
	free(hits);
	printf("# random plans: %d, %d with factor windows (%d hopping "
		   "factors); Algorithm 1 saved %.0f, factors %.0f more\n", n_plans,
		   n_with_factors, n_hopping_factors, saved_alg1, saved_factors);
	check(sound, "random plans are sound forests of coverage edges", "%s",
		  why);
	check(alg1_ok, "random plans: Algorithm 1 total matches brute force",
		  "%s", why);
	check(single_ok, "random plans: never worse than the best single factor",
		  "%s", why);
	check(deterministic, "random plans: the same input gives the same plan",
		  NULL);
	check(n_with_factors > 0 && n_hopping_factors > 0,
		  "random plans exercise factor windows, hopping ones too",
		  "%d with factors, %d hopping", n_with_factors, n_hopping_factors);
}

/* ----------------------------------------------------------------
 * Entry points
 * ----------------------------------------------------------------
 */

static void
test_planner(void)
{
	test_coverage_cases();
	property_coverage("ranges multiples of slides", draw_multiples,
					  UINT64_C(20200901), 5000);
	property_coverage("any ranges", draw_any_ranges, UINT64_C(4), 3000);
	test_example6();
	test_engine_options();
	test_example7();
	test_example8();
	test_hopping();
	test_small_plans();
	test_ties_and_pruning();
	test_invalid();
	test_memory();
	test_random_plans(UINT64_C(7), 300);
}

int
main(void)
{
	test_planner();
	return tap_done();
}
