/*-------------------------------------------------------------------------
 *
 * wa_planner.c
 *	  Cost-based sharing across windows: coverage tests, the min-cost
 *	  window coverage graph (Algorithm 1) and factor windows (Algorithms 2
 *	  and 4) of Wu, Bernstein, Raizman and Pavlopoulou.
 *
 * Model (see wa_planner.h): costs are counted over the period R, the lcm
 * of the requested ranges.  A window is computed either from the virtual
 * root S<root, root> (the engine's slices) or from one other window of the
 * plan that covers it (covered-by) or partitions it (partitioned-by), at
 * n * M per period.  The root's own cost (building the slices) is the same
 * for every plan, so like the paper we leave it out of the totals.
 *
 * Windows outside the model, those whose range is not a multiple of their
 * slide or that the root does not cover, neither feed nor are fed by other
 * windows: they are planned from the root with m = ceil(r / root), an
 * estimate of the slices an instance spans.
 *
 * Algorithm 1 is exact: with the parent's own cost left out of a child's
 * cost (as in the paper), each window's cheapest parent can be chosen on
 * its own.  Factor windows make the problem a Steiner tree problem, so,
 * like the paper, we only search greedily; unlike the paper's
 * FindBestFactorWindow, which scores candidates with Equations 2/3 and
 * Theorem 9 against one target and its downstream windows, we score each
 * candidate by the exact change it brings to the Algorithm 1 total, which
 * also counts windows that would re-parent onto it from elsewhere in the
 * plan.  The candidates are a superset of the paper's:
 *
 *	 - every tumbling window <d, d> with d a multiple of the root dividing
 *	   some requested slide: exactly the tumbling windows that partition at
 *	   least one requested window.  The paper's Algorithm 4 candidates for
 *	   a target W (divisors of the gcd of its children's ranges, multiples
 *	   of r_W) are those that partition all of W's children, when these are
 *	   tumbling; a hopping child also needs d to divide its slide (Theorem
 *	   4), which the ranges alone do not ensure.  Only these candidates in
 *	   partitioned-by mode.
 *	 - in covered-by mode, also every hopping window <r_f, d> (d as above,
 *	   r_f a multiple of d up to the largest range d can serve), i.e. every
 *	   window with r_f a multiple of s_f that covers at least one requested
 *	   window; largest slides first, WA_PLAN_MAX_CANDIDATES in all.
 *
 * A candidate need not cover every window below its target: with a root
 * that covers everything, "every downstream window" would let one
 * unrelated window (say a 7 next to 20 and 30) rule out the factor 10.
 *
 * Memory.  Every byte, scratch and plan alike, comes from the caller's
 * allocator (options->allocator) through plan_mem, which counts what is
 * held: wa_plan_build gives back all scratch on every return path, so the
 * plan holds only its nodes (or nothing, on failure), and asserts it.
 * Inside PostgreSQL that allocator works over a memory context, so an
 * ERROR between planning and wa_plan_free leaks nothing either.
 *
 * src/engine/wa_planner.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_planner.h"

#include "wa_assert.h"
#include "wa_time.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* bounds on the factor search, which runs at query planning time */
#define WA_PLAN_MAX_CANDIDATES 4096
#define WA_PLAN_MAX_FACTORS 64
/* divisors are found by trial division up to the square root */
#define WA_PLAN_MAX_DIVISOR_BASE ((int64_t) 1 << 40)

typedef struct plan_win
{
	int64_t		r;
	int64_t		s;
	int64_t		n;				/* recurrence count in the period */
	bool		in_model;		/* s divides r and the root covers it */
	bool		factor;
} plan_win;

typedef struct plan_ctx
{
	wa_cover_mode mode;
	int64_t		root;
	int64_t		stack_overlap;
	bool		root_only;
	int64_t		max_multiplier;
	int64_t		period;
} plan_ctx;

/* Algorithm 1's answer for one window set */
typedef struct plan_choice
{
	int		   *parent;
	int64_t    *m;
	double	   *cost;
	double		total;
} plan_choice;

typedef struct cand
{
	int64_t		r;
	int64_t		s;
} cand;

/* The planner's memory: the caller's allocator, and what is held of it */
typedef struct plan_mem
{
	wa_allocator allocator;
	size_t		held;			/* bytes not given back yet */
} plan_mem;

/* ----------------------------------------------------------------
 * Memory
 * ----------------------------------------------------------------
 */

static void *
plan_alloc(plan_mem *mem, size_t size)
{
	void	   *p = mem->allocator.alloc(mem->allocator.arg, size);

	if (p != NULL)
		mem->held += size;
	return p;
}

/* NULL if out of memory, the block then left as it was */
static void *
plan_realloc(plan_mem *mem, void *ptr, size_t old_size, size_t new_size)
{
	void	   *p;

	/* allocators never see a NULL pointer (wa_allocator.h) */
	if (ptr == NULL)
		return plan_alloc(mem, new_size);
	p = mem->allocator.realloc(mem->allocator.arg, ptr, old_size, new_size);
	if (p != NULL)
		mem->held = mem->held - old_size + new_size;
	return p;
}

static void
plan_free(plan_mem *mem, void *ptr, size_t size)
{
	if (ptr == NULL)
		return;
	WA_ASSERT(mem->held >= size);
	mem->allocator.free(mem->allocator.arg, ptr, size);
	mem->held -= size;
}

/* ----------------------------------------------------------------
 * Coverage (Theorems 1, 3 and 4) and recurrence (Equation 1)
 * ----------------------------------------------------------------
 */

/*
 * The paper assumes 0 < s <= r for every window.  A "window" with s > r
 * has gaps between its instances, so consecutive instances of such a W'
 * cannot tile anything: we answer false rather than extend the theorem.
 */
bool
wa_covered_by(int64_t r, int64_t s, int64_t r2, int64_t s2)
{
	if (r <= 0 || s <= 0 || r2 <= 0 || s2 <= 0 || s > r || s2 > r2)
		return false;
	return s % s2 == 0 && r >= r2 && (r - r2) % s2 == 0;
}

/*
 * Theorem 4 asks for a tumbling W'.  Its proof overlooks a covering set of
 * a single instance, which is trivially disjoint: when r = r2 (M = 1) each
 * instance of W is one instance of W', hopping or not, so sum, count and
 * avg may use it as is.  Brute-force enumeration agrees (test_planner.c).
 * With W' tumbling, coverage already makes r a multiple of s2.
 */
bool
wa_partitioned_by(int64_t r, int64_t s, int64_t r2, int64_t s2)
{
	return wa_covered_by(r, s, r2, s2) && (r2 == s2 || r == r2);
}

int64_t
wa_cover_multiplier(int64_t r, int64_t s, int64_t r2, int64_t s2)
{
	if (!wa_covered_by(r, s, r2, s2))
		return 0;
	return 1 + (r - r2) / s2;
}

/*
 * The instances [k s, k s + r) that lie in [0, period): 1 + (R - r) / s,
 * which is Equation 1 when s divides r and r divides R, and still counts
 * whole instances otherwise (factor windows, windows outside the model).
 */
int64_t
wa_recurrence(int64_t period, int64_t r, int64_t s)
{
	if (r <= 0 || s <= 0 || period < r)
		return 0;
	return 1 + (period - r) / s;
}

/* ----------------------------------------------------------------
 * Algorithm 1
 * ----------------------------------------------------------------
 */

/* Can child be computed from parent under the plan's mode? */
static bool
can_feed(const plan_ctx *ctx, const plan_win *child, const plan_win *parent)
{
	if (!child->in_model || !parent->in_model || ctx->root_only)
		return false;
	if (ctx->max_multiplier > 0 &&
		wa_cover_multiplier(child->r, child->s, parent->r, parent->s) > ctx->max_multiplier)
		return false;
	if (ctx->mode == WA_COVERED_BY)
		return wa_covered_by(child->r, child->s, parent->r, parent->s);
	return wa_partitioned_by(child->r, child->s, parent->r, parent->s);
}

/* Is W emitted through a two-stack when computed from the root? */
static bool
root_stacked(const plan_ctx *ctx, const plan_win *w)
{
	int64_t		slices = w->s / ctx->root + (w->s % ctx->root != 0);

	return ctx->stack_overlap > 0 && w->r / ctx->stack_overlap >= w->s &&
		2 * slices + 1 < w->r / ctx->root;
}

/*
 * M(W, S): r / root inside the model, an estimate outside it; for a
 * two-stack, the merges per instance (see wa_planner.h).
 */
static int64_t
root_multiplier(const plan_ctx *ctx, const plan_win *w)
{
	if (root_stacked(ctx, w))
		return 2 * (w->s / ctx->root + (w->s % ctx->root != 0)) + 1;
	if (w->in_model)
		return w->r / ctx->root;
	return w->r / ctx->root + (w->r % ctx->root != 0);
}

/*
 * The cheapest parent of window i among w (skipping index skip, or none if
 * -1): the root, or another window that feeds it.  Equal costs go to the
 * parent with the largest range, whose instances are the closest in size
 * to the window's, then to the root, then to the lowest index, so that
 * requested windows win over factors.  Coverage is a partial order, so
 * only identical windows could feed each other; the later one of two twins
 * is fed by the earlier one, never the reverse, which keeps the graph a
 * forest.  Returns the parent, WA_PLAN_ROOT for the root.
 */
static int
best_parent(const plan_ctx *ctx, const plan_win *w, int count, int i,
			int skip, int64_t *m_out, double *cost_out)
{
	int			best = WA_PLAN_ROOT;
	int64_t		best_m = root_multiplier(ctx, &w[i]);
	double		best_cost = (double) w[i].n * (double) best_m;
	int64_t		best_range = ctx->root;

	for (int j = 0; j < count; j++)
	{
		int64_t		m;
		double		cost;

		if (j == i || j == skip || !can_feed(ctx, &w[i], &w[j]))
			continue;
		if (j > i && w[j].r == w[i].r && w[j].s == w[i].s)
			continue;
		m = wa_cover_multiplier(w[i].r, w[i].s, w[j].r, w[j].s);
		cost = (double) w[i].n * (double) m;
		if (cost < best_cost || (cost == best_cost && w[j].r > best_range))
		{
			best = j;
			best_m = m;
			best_cost = cost;
			best_range = w[j].r;
		}
	}
	*m_out = best_m;
	*cost_out = best_cost;
	return best;
}

/* Algorithm 1: every window from its cheapest parent */
static void
choose_parents(const plan_ctx *ctx, const plan_win *w, int count,
			   plan_choice *out)
{
	out->total = 0.0;
	for (int i = 0; i < count; i++)
	{
		out->parent[i] = best_parent(ctx, w, count, i, -1, &out->m[i],
									 &out->cost[i]);
		out->total += out->cost[i];
	}
}

/* ----------------------------------------------------------------
 * Factor windows (Algorithms 2 and 4)
 * ----------------------------------------------------------------
 */

static int
cmp_int64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a;
	int64_t		y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/*
 * The slides a factor window may have: multiples of the root that divide
 * some requested slide (a factor must cover a requested window, so its
 * slide divides that window's, and the root must cover the factor).
 * Returns the number of distinct values, sorted ascending, in *out (from
 * mem, *out_bytes long, or NULL with 0), or -1 if out of memory.
 */
static int
factor_slides(const plan_ctx *ctx, plan_mem *mem, const plan_win *req,
			  int n_req, int64_t **out, size_t *out_bytes)
{
	int64_t    *d = NULL;
	int			count = 0;
	int			capacity = 0;
	int			distinct = 0;

	for (int j = 0; j < n_req; j++)
	{
		int64_t		q;

		if (!req[j].in_model)
			continue;
		q = req[j].s / ctx->root;
		/* absurdly fine slides: no factors rather than a long search */
		if (q > WA_PLAN_MAX_DIVISOR_BASE)
			continue;
		for (int64_t e = 1; e <= q / e; e++)
		{
			if (q % e != 0)
				continue;
			if (count + 2 > capacity)
			{
				int			newcap = capacity ? capacity * 2 : 64;
				int64_t    *nd = plan_realloc(mem, d,
											  (size_t) capacity * sizeof(int64_t),
											  (size_t) newcap * sizeof(int64_t));

				if (nd == NULL)
				{
					plan_free(mem, d, (size_t) capacity * sizeof(int64_t));
					return -1;
				}
				d = nd;
				capacity = newcap;
			}
			d[count++] = e * ctx->root;
			if (e != q / e)
				d[count++] = (q / e) * ctx->root;
		}
	}
	if (count > 0)
		qsort(d, (size_t) count, sizeof(int64_t), cmp_int64);
	for (int i = 0; i < count; i++)
		if (distinct == 0 || d[i] != d[distinct - 1])
			d[distinct++] = d[i];
	*out = d;
	*out_bytes = (size_t) capacity * sizeof(int64_t);
	return distinct;
}

/*
 * Candidate factor windows, best prospects first, since the list is
 * capped: tumbling windows with the largest ranges (fewest instances),
 * then, in covered-by mode, hopping windows by decreasing slide and
 * increasing range.  Every candidate covers at least one requested window
 * under the mode, and is covered by the root.  Returns the count, with
 * *out from mem (CANDIDATES_BYTES long), or -1 if out of memory.
 */
#define CANDIDATES_BYTES (WA_PLAN_MAX_CANDIDATES * sizeof(cand))

static int
factor_candidates(const plan_ctx *ctx, plan_mem *mem, const plan_win *req,
				  int n_req, cand **out)
{
	int64_t    *d;
	size_t		d_bytes;
	int			nd = factor_slides(ctx, mem, req, n_req, &d, &d_bytes);
	cand	   *c;
	int			count = 0;

	*out = NULL;
	if (nd < 0)
		return -1;
	c = plan_alloc(mem, CANDIDATES_BYTES);
	if (c == NULL)
	{
		plan_free(mem, d, d_bytes);
		return -1;
	}

	/* the root itself is no factor */
	for (int i = nd - 1; i >= 0 && count < WA_PLAN_MAX_CANDIDATES; i--)
		if (d[i] != ctx->root)
		{
			c[count].r = d[i];
			c[count].s = d[i];
			count++;
		}

	if (ctx->mode == WA_COVERED_BY)
	{
		for (int i = nd - 1; i >= 0 && count < WA_PLAN_MAX_CANDIDATES; i--)
		{
			int64_t		slide = d[i];
			int64_t		max_range = 0;

			/*
			 * <r_f, slide> covers W_j iff slide divides s_j (hence r_j) and
			 * r_f <= r_j, so ranges past the largest such r_j serve nobody.
			 */
			for (int j = 0; j < n_req; j++)
				if (req[j].in_model && req[j].s % slide == 0 &&
					req[j].r > max_range)
					max_range = req[j].r;
			for (int64_t r = 2 * slide;
				 r <= max_range && count < WA_PLAN_MAX_CANDIDATES;
				 r += slide)
			{
				c[count].r = r;
				c[count].s = slide;
				count++;
				if (r > max_range - slide)
					break;		/* the next one is out of range anyway */
			}
		}
	}
	plan_free(mem, d, d_bytes);
	*out = c;
	return count;
}

/*
 * The change in the Algorithm 1 total if candidate f joined the windows w
 * (whose current choice is cur): f's own cost from its cheapest parent,
 * minus what every window fed more cheaply by f saves.  Adding a window
 * only adds parent options, so nobody else's choice changes; f cannot be
 * both fed by and feed the same window, as it is not identical to any.
 */
static double
factor_delta(const plan_ctx *ctx, const plan_win *w, int count,
			 const plan_choice *cur, const plan_win *f)
{
	double		own = (double) f->n * (double) root_multiplier(ctx, f);
	double		saved = 0.0;

	for (int j = 0; j < count; j++)
	{
		if (can_feed(ctx, f, &w[j]))
		{
			double		c = (double) f->n *
				(double) wa_cover_multiplier(f->r, f->s, w[j].r, w[j].s);

			if (c < own)
				own = c;
		}
		if (can_feed(ctx, &w[j], f))
		{
			double		c = (double) w[j].n *
				(double) wa_cover_multiplier(w[j].r, w[j].s, f->r, f->s);

			if (c < cur->cost[j])
				saved += cur->cost[j] - c;
		}
	}
	return own - saved;
}

/*
 * Drop factor windows the plan can do without: any that no longer feeds
 * anything (a later factor took its children), and any whose removal does
 * not raise the total.  Removing f only sends f's children to their next
 * best parents, so that is all we cost before committing.  Returns the
 * new count.
 */
static int
prune_factors(const plan_ctx *ctx, plan_win *w, int count, int n_req,
			  plan_choice *cur)
{
	int			f = n_req;

	while (f < count)
	{
		double		delta = -cur->cost[f];

		for (int i = 0; i < count; i++)
		{
			int64_t		m;
			double		cost;

			if (cur->parent[i] != f)
				continue;
			(void) best_parent(ctx, w, count, i, f, &m, &cost);
			delta += cost - cur->cost[i];
		}
		if (delta <= 0.0)
		{
			memmove(&w[f], &w[f + 1],
					(size_t) (count - f - 1) * sizeof(plan_win));
			count--;
			choose_parents(ctx, w, count, cur);
			f = n_req;			/* a removal can make others removable */
		}
		else
			f++;
	}
	return count;
}

/*
 * Greedy Algorithm 2/4: add the candidate that lowers the total most, as
 * long as one does, pruning factors made useless along the way.  w has
 * room for n_req + WA_PLAN_MAX_FACTORS windows; cur holds Algorithm 1's
 * answer for the first n_req on entry and for the result on return.
 * Returns the window count, or -1 if out of memory.
 */
static int
add_factors(const plan_ctx *ctx, plan_mem *mem, plan_win *w, int n_req,
			plan_choice *cur)
{
	cand	   *c;
	int			nc = factor_candidates(ctx, mem, w, n_req, &c);
	int			count = n_req;
	int			rounds = 0;

	if (nc < 0)
		return -1;

	/* each round lowers the total strictly, so no set comes back */
	while (count < n_req + WA_PLAN_MAX_FACTORS &&
		   rounds++ < 4 * WA_PLAN_MAX_FACTORS)
	{
		int			best = -1;
		double		best_delta = 0.0;
		plan_win	f;

		for (int i = 0; i < nc; i++)
		{
			bool		present = false;
			double		delta;

			for (int j = 0; j < count && !present; j++)
				present = w[j].r == c[i].r && w[j].s == c[i].s;
			if (present)
				continue;
			f.r = c[i].r;
			f.s = c[i].s;
			f.n = wa_recurrence(ctx->period, f.r, f.s);
			f.in_model = true;
			f.factor = true;
			delta = factor_delta(ctx, w, count, cur, &f);
			/* strictly better only: the first of equals is kept */
			if (delta < best_delta)
			{
				best = i;
				best_delta = delta;
			}
		}
		if (best < 0)
			break;

		w[count].r = c[best].r;
		w[count].s = c[best].s;
		w[count].n = wa_recurrence(ctx->period, c[best].r, c[best].s);
		w[count].in_model = true;
		w[count].factor = true;
		count++;
		choose_parents(ctx, w, count, cur);
		count = prune_factors(ctx, w, count, n_req, cur);
	}
	plan_free(mem, c, CANDIDATES_BYTES);
	return count;
}

/* ----------------------------------------------------------------
 * Entry points
 * ----------------------------------------------------------------
 */

/* On failure, what was allocated stays for free_choice */
static bool
alloc_choice(plan_mem *mem, plan_choice *pc, int capacity)
{
	pc->parent = plan_alloc(mem, (size_t) capacity * sizeof(int));
	pc->m = plan_alloc(mem, (size_t) capacity * sizeof(int64_t));
	pc->cost = plan_alloc(mem, (size_t) capacity * sizeof(double));
	pc->total = 0.0;
	return pc->parent != NULL && pc->m != NULL && pc->cost != NULL;
}

static void
free_choice(plan_mem *mem, plan_choice *pc, int capacity)
{
	plan_free(mem, pc->parent, (size_t) capacity * sizeof(int));
	plan_free(mem, pc->m, (size_t) capacity * sizeof(int64_t));
	plan_free(mem, pc->cost, (size_t) capacity * sizeof(double));
}

const char *
wa_plan_build(const int64_t *ranges, const int64_t *slides, int n,
			  const wa_plan_options *options, wa_plan *plan)
{
	plan_ctx	ctx;
	plan_mem	mem;
	plan_win   *w;
	plan_choice cur;
	double		alg1_total;
	int			capacity;
	int			count;
	const char *err = NULL;

	memset(&cur, 0, sizeof(cur));
	w = NULL;
	if (plan == NULL)
		return "no plan to fill";
	memset(plan, 0, sizeof(*plan));
	if (options == NULL)
		return "no planner options";
	if (n <= 0 || ranges == NULL || slides == NULL)
		return "no windows to plan";
	if (options->mode != WA_COVERED_BY && options->mode != WA_PARTITIONED_BY)
		return "unknown cover mode";
	if (options->root < 1)
		return "planner root must be at least 1";
	/* also rejects NaN and infinity */
	if (!(options->event_rate > 0.0 && options->event_rate <= DBL_MAX))
		return "event rate must be positive and finite";
	if (n > INT32_MAX - WA_PLAN_MAX_FACTORS)
		return "too many windows to plan";

	if (options->stack_overlap < 0)
		return "stack overlap must not be negative";
	ctx.mode = options->mode;
	ctx.root = options->root;
	ctx.stack_overlap = options->stack_overlap;
	ctx.root_only = options->root_only;
	ctx.max_multiplier = options->max_multiplier;
	ctx.period = 1;
	for (int i = 0; i < n; i++)
	{
		int64_t		a;

		if (ranges[i] <= 0 || slides[i] <= 0)
			return "window range and slide must be positive";
		a = ctx.period / wa_gcd(ctx.period, ranges[i]);
		if (a > INT64_MAX / ranges[i])
			return "period (lcm of the window ranges) overflows int64";
		ctx.period = a * ranges[i];
	}

	mem.allocator = options->allocator ? *options->allocator :
		wa_libc_allocator;
	mem.held = 0;
	capacity = n + (options->factor_windows && !options->root_only ?
					 WA_PLAN_MAX_FACTORS : 0);
	w = plan_alloc(&mem, (size_t) capacity * sizeof(plan_win));
	if (w == NULL || !alloc_choice(&mem, &cur, capacity))
	{
		err = "out of memory";
		goto done;
	}

	plan->raw_cost = 0.0;
	plan->slices_cost = 0.0;
	for (int i = 0; i < n; i++)
	{
		w[i].r = ranges[i];
		w[i].s = slides[i];
		w[i].n = wa_recurrence(ctx.period, ranges[i], slides[i]);
		w[i].in_model = ranges[i] % slides[i] == 0 &&
			wa_covered_by(ranges[i], slides[i], ctx.root, ctx.root);
		w[i].factor = false;
		plan->raw_cost += (double) w[i].n * options->event_rate *
			(double) ranges[i];
		plan->slices_cost += (double) w[i].n *
			(double) root_multiplier(&ctx, &w[i]);
	}

	choose_parents(&ctx, w, n, &cur);
	alg1_total = cur.total;
	count = n;
	if (options->factor_windows && !options->root_only)
	{
		count = add_factors(&ctx, &mem, w, n, &cur);
		if (count < 0)
		{
			err = "out of memory";
			goto done;
		}
		/* keep the cheaper plan; with a tie, the one without factors */
		if (count > n && !(cur.total < alg1_total))
		{
			count = n;
			choose_parents(&ctx, w, n, &cur);
		}
	}

	plan->nodes = plan_alloc(&mem, (size_t) count * sizeof(wa_plan_node));
	if (plan->nodes == NULL)
	{
		err = "out of memory";
		goto done;
	}
	/* zeroed, padding included, so that equal plans compare equal */
	memset(plan->nodes, 0, (size_t) count * sizeof(wa_plan_node));
	for (int i = 0; i < count; i++)
	{
		/* a forest: every parent is the root or another node */
		WA_ASSERT(cur.parent[i] == WA_PLAN_ROOT ||
				  (cur.parent[i] >= 0 && cur.parent[i] < count &&
				   cur.parent[i] != i));
		plan->nodes[i].range = w[i].r;
		plan->nodes[i].slide = w[i].s;
		plan->nodes[i].factor = w[i].factor;
		plan->nodes[i].stacked = cur.parent[i] == WA_PLAN_ROOT &&
			root_stacked(&ctx, &w[i]);
		plan->nodes[i].parent = cur.parent[i];
		plan->nodes[i].n = w[i].n;
		plan->nodes[i].m = cur.m[i];
		plan->nodes[i].cost = cur.cost[i];
	}
	plan->n_nodes = count;
	plan->allocator = mem.allocator;
	plan->n_requested = n;
	plan->mode = ctx.mode;
	plan->period = ctx.period;
	plan->total_cost = cur.total;
	plan->alg1_cost = alg1_total;

done:
	/* nothing fails once the nodes are allocated: on failure there are none */
	plan_free(&mem, w, (size_t) capacity * sizeof(plan_win));
	free_choice(&mem, &cur, capacity);
	if (err != NULL)
		memset(plan, 0, sizeof(*plan));
	WA_ASSERT(mem.held == (size_t) plan->n_nodes * sizeof(wa_plan_node));
	return err;
}

void
wa_plan_free(wa_plan *plan)
{
	if (plan == NULL)
		return;
	if (plan->nodes != NULL)
		plan->allocator.free(plan->allocator.arg, plan->nodes,
							 (size_t) plan->n_nodes * sizeof(wa_plan_node));
	memset(plan, 0, sizeof(*plan));
}
