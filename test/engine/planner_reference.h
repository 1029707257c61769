/*-------------------------------------------------------------------------
 *
 * planner_reference.h
 *	  Brute-force counterparts of the window-coverage planner, for
 *	  test_planner.c.
 *
 * Coverage by enumerating window instances (Definitions 2 and 3 of the
 * paper), Algorithm 1's total recomputed from it, and the cheapest plan
 * with exactly one extra window, found by trying every candidate.
 *
 * test/engine/planner_reference.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PLANNER_REFERENCE_H
#define PLANNER_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "wa_planner.h"

typedef struct brute_cover
{
	bool		covered;
	bool		partitioned;
	int64_t		m;				/* instances per covering set, if covered */
} brute_cover;

/* Is W<r, s> covered, partitioned by W'<r2, s2>, and M(W, W')? */
extern brute_cover brute_force(int64_t r, int64_t s, int64_t r2, int64_t s2,
							   int *hits);

/* Algorithm 1's total for the requested windows alone, by brute force. */
extern double brute_alg1(const int64_t *r, const int64_t *s, int n,
						 const wa_plan_options *o, int64_t period, int *hits);

/* The cost of the cheapest plan with one extra window; -1 if none. */
extern double best_single_factor(const int64_t *r, const int64_t *s, int n,
								 const wa_plan_options *o, int64_t period,
								 int64_t max_r, int64_t *best_r,
								 int64_t *best_s);

#endif							/* PLANNER_REFERENCE_H */
