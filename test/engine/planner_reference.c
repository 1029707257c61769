/*-------------------------------------------------------------------------
 *
 * planner_reference.c
 *	  Brute-force counterparts of the window-coverage planner (see
 *	  planner_reference.h).
 *
 * test/engine/planner_reference.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "planner_reference.h"
#include "wa_time.h"

/*
 * Enumerate the instances [k s, k s + r) of W for k up to 2 s2 + 1 (the
 * offset of k s modulo s2, which is all that matters, repeats with a period
 * dividing s2), and for each the instances of W' inside it.  hits must
 * hold r counters.
 */
brute_cover
brute_force(int64_t r, int64_t s, int64_t r2, int64_t s2, int *hits)
{
	brute_cover res = {true, true, -1};

	for (int64_t k = 0; k <= 2 * s2 + 1; k++)
	{
		int64_t		a = k * s;
		int64_t		b = a + r;
		int64_t		count = 0;

		memset(hits, 0, (size_t) r * sizeof(int));
		for (int64_t j = (a + s2 - 1) / s2; j * s2 + r2 <= b; j++)
		{
			count++;
			for (int64_t p = j * s2; p < j * s2 + r2; p++)
				hits[p - a]++;
		}
		for (int64_t p = 0; p < r; p++)
		{
			if (hits[p] == 0)
				res.covered = false;
			if (hits[p] > 1)
				res.partitioned = false;
		}
		if (res.m == -1)
			res.m = count;
		else if (res.m != count)
			res.m = -2;			/* covering sets of different sizes */
	}
	res.partitioned = res.partitioned && res.covered;
	return res;
}

/*
 * Algorithm 1's total recomputed with brute-force coverage: each window
 * from the root or from the cheapest other requested window covering it
 * (the later of two twins from the earlier).
 */
double
brute_alg1(const int64_t *r, const int64_t *s, int n,
		   const wa_plan_options *o, int64_t period, int *hits)
{
	double		total = 0.0;

	for (int i = 0; i < n; i++)
	{
		int64_t		ni = wa_recurrence(period, r[i], s[i]);
		bool		in_i = r[i] % s[i] == 0 && s[i] % o->root == 0;
		double		best = (double) ni *
			(double) ((r[i] + o->root - 1) / o->root);

		for (int j = 0; j < n && in_i; j++)
		{
			brute_cover b;

			if (j == i || r[j] % s[j] != 0 || s[j] % o->root != 0 ||
				(j > i && r[j] == r[i] && s[j] == s[i]))
				continue;
			b = brute_force(r[i], s[i], r[j], s[j], hits);
			if (o->mode == WA_COVERED_BY ? b.covered : b.partitioned)
				if ((double) ni * (double) b.m < best)
					best = (double) ni * (double) b.m;
		}
		total += best;
	}
	return total;
}

/*
 * The cheapest plan with exactly one extra window f: every f in the mode
 * (tumbling under partitioned-by) whose range divides the period, so that
 * adding it as a requested window leaves the period, and hence every cost,
 * as it would be for a factor window.
 */
double
best_single_factor(const int64_t *r, const int64_t *s, int n,
				   const wa_plan_options *o, int64_t period, int64_t max_r,
				   int64_t *best_r, int64_t *best_s)
{
	int64_t		rr[16];
	int64_t		ss[16];
	wa_plan_options o1 = *o;
	double		best = -1;

	o1.factor_windows = false;
	memcpy(rr, r, (size_t) n * sizeof(int64_t));
	memcpy(ss, s, (size_t) n * sizeof(int64_t));
	for (int64_t fr = o->root; fr <= max_r; fr += o->root)
	{
		if (period % fr != 0)
			continue;
		for (int64_t fs = o->root; fs <= fr; fs += o->root)
		{
			wa_plan		p;
			bool		dup = fr == o->root && fs == o->root;

			if (fr % fs != 0 || (o->mode == WA_PARTITIONED_BY && fs != fr))
				continue;
			for (int i = 0; i < n; i++)
				dup = dup || (r[i] == fr && s[i] == fs);
			if (dup)
				continue;
			rr[n] = fr;
			ss[n] = fs;
			if (wa_plan_build(rr, ss, n + 1, &o1, &p) == NULL)
			{
				if (best < 0 || p.total_cost < best)
				{
					best = p.total_cost;
					*best_r = fr;
					*best_s = fs;
				}
				wa_plan_free(&p);
			}
		}
	}
	return best;
}
