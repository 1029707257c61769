/*-------------------------------------------------------------------------
 *
 * wa_planner.h
 *	  Cost-based sharing across windows: the window coverage graph, with
 *	  factor windows (Wu, Bernstein, Raizman, Pavlopoulou, "Cost-based
 *	  Query Rewriting Techniques for Optimizing Aggregates Over Correlated
 *	  Windows", 2020).
 *
 * A window W<r, s> has range r and slide s, r a multiple of s.  W is
 * covered by W'<r', s'> iff s is a multiple of s' and r - r' is a
 * non-negative multiple of s'; each instance of W is then the union of
 * M(W, W') = 1 + (r - r') / s' consecutive instances of W'.  W is
 * partitioned by W' iff it is covered by it, W' is tumbling (r' = s') and
 * r is a multiple of s' (the instances are then disjoint); or if it is
 * covered by it with r = r' (M = 1, a case Theorem 4 overlooks).  min
 * and max may use covered-by (overlaps are harmless); sum, count and avg
 * need partitioned-by.
 *
 * Costs are counted over a period R = lcm of the ranges, in which W recurs
 * n = 1 + (R / r - 1) * (r / s) times.  Computing W from raw events costs
 * n * eta * r (eta events per time unit); from a parent W', n * M(W, W').
 * The virtual root S<root, root> stands for the engine's slices: every
 * window is covered by it, and a window computed from it costs
 * n * M(W, S).  With root 1 and eta 1 this is the paper's own model, where
 * computing from the root costs the same as from raw events.
 *
 * Algorithm 1 gives every window its cheapest parent (the result is a
 * forest under the root).  Algorithm 2 adds factor windows (windows nobody
 * asked for, never shown) between a window and its children when that
 * lowers the total cost, and keeps the cheaper plan.  Algorithm 4 chooses
 * factor windows under partitioned-by: tumbling windows whose range
 * divides the gcd of the children's ranges and is a multiple of the
 * parent's range.
 *
 * The engine emits a window that overlaps itself a lot through a two-stack
 * (wa_twostack.h), which costs far less than M(W, S) per instance.  With
 * options.stack_overlap set, such a window (r >= stack_overlap * s) costs
 * min(M(W, S), 2 s / root + 1) from the root: each instance pushes s / root
 * slices, pops as many (each popped entry was merged once when flipped)
 * and merges once to answer.  Left at 0, costs are the paper's.
 *
 * Pure C, no PostgreSQL headers.  All quantities are in one time unit; the
 * caller divides by the slice width first so that numbers stay small.
 *
 * src/engine/wa_planner.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_PLANNER_H
#define WA_PLANNER_H

#include <stdbool.h>
#include <stdint.h>

#include "wa_allocator.h"

typedef enum wa_cover_mode
{
	WA_COVERED_BY,				/* min/max only: overlapping parents allowed */
	WA_PARTITIONED_BY			/* any mergeable aggregate: disjoint parents */
} wa_cover_mode;

/* Is W<r, s> covered by W'<r2, s2>?  (Theorem 1.) */
extern bool wa_covered_by(int64_t r, int64_t s, int64_t r2, int64_t s2);

/* Is W<r, s> partitioned by W'<r2, s2>?  (Theorem 4, and r = r2.) */
extern bool wa_partitioned_by(int64_t r, int64_t s, int64_t r2, int64_t s2);

/* M(W, W') = 1 + (r - r2) / s2; W must be covered by W'. */
extern int64_t wa_cover_multiplier(int64_t r, int64_t s, int64_t r2, int64_t s2);

/*
 * n = 1 + (R / r - 1) * (r / s): instances of W<r, s> in a period R.
 * Computed as 1 + (R - r) / s, the same when s | r | R and still the count
 * of whole instances in [0, R) otherwise; 0 if R < r.
 */
extern int64_t wa_recurrence(int64_t period, int64_t r, int64_t s);

#define WA_PLAN_ROOT (-1)		/* parent index of windows fed by the root */

typedef struct wa_plan_node
{
	int64_t		range;
	int64_t		slide;
	bool		factor;			/* added by the planner, not requested */
	bool		stacked;		/* from the root through a two-stack */
	int			parent;			/* index into nodes, or WA_PLAN_ROOT */
	int64_t		n;				/* recurrence count in the period */
	int64_t		m;				/* M(W, parent) (parent = root: M(W, S)) */
	double		cost;			/* n * m */
} wa_plan_node;

typedef struct wa_plan
{
	int			n_nodes;		/* requested windows first, in input order,
								 * then factor windows */
	int			n_requested;
	wa_plan_node *nodes;		/* from allocator; free with wa_plan_free */
	wa_allocator allocator;		/* the options' (a copy): wa_plan_free
								 * gives the nodes back to it */
	wa_cover_mode mode;			/* as in the options */
	int64_t		period;			/* R = lcm of the requested ranges */
	double		total_cost;		/* the plan: sum of node costs */
	double		raw_cost;		/* every requested window from raw events */
	double		slices_cost;	/* every requested window from the root */
	double		alg1_cost;		/* Algorithm 1 alone, without factors */
} wa_plan;

typedef struct wa_plan_options
{
	wa_cover_mode mode;
	bool		factor_windows; /* run Algorithm 2/4 after Algorithm 1 */
	int64_t		root;			/* range = slide of the virtual root (>= 1) */
	double		event_rate;		/* eta: events per time unit */
	int64_t		stack_overlap;	/* > 0: two-stack costs, see above */
	bool		root_only;		/* no sharing: every window from the root
								 * (windows whose instances do not line up) */
	int64_t		max_multiplier; /* > 0: no parent with M above this */
	const wa_allocator *allocator;	/* every byte of the plan and of the
									 * planning; NULL: the C library's,
									 * for standalone tools and tests
									 * only (wa_allocator.h) */
} wa_plan_options;

/*
 * Plan the windows (ranges[i], slides[i]).  Windows whose range is not a
 * multiple of their slide, or that are not covered by the root, are
 * planned from the root only.  Returns NULL on success, else a static
 * message naming the problem (empty set, non-positive values, a period
 * that overflows int64, "out of memory" from an allocator that returned
 * NULL).  Scratch memory is given back before it returns, whatever it
 * returns; on success the plan holds only its nodes, taken from
 * options->allocator, until wa_plan_free.  On failure the plan is empty.
 */
extern const char *wa_plan_build(const int64_t *ranges, const int64_t *slides,
								 int n, const wa_plan_options *options,
								 wa_plan *plan);
/* Give the nodes back; the plan is then empty, and may be freed again. */
extern void wa_plan_free(wa_plan *plan);

#endif							/* WA_PLANNER_H */
