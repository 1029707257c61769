/*-------------------------------------------------------------------------
 *
 * fuzz_windows.c
 *	  libFuzzer target: window specifications, their checks
 *	  (window_checks.c, the engine's wa_config_check and slice width), and
 *	  which windows contain an event time, against enumeration.
 *
 * The input gives one to six windows of any int64 size, slide and origin
 * (small numbers, the ends of int64, or anything), a type's range in
 * ticks, and event times.  Then:
 *
 *	- the set is accepted exactly when the rules hold, computed here in
 *	  128-bit arithmetic: size and slide positive, size at least the slide,
 *	  no two windows of one size with starts in common (origins congruent
 *	  modulo the gcd of the slides), at most 64 windows, and at most
 *	  100,000 windows per event in all;
 *	- an accepted set is accepted by the engine too, and its slice width
 *	  divides every size, slide and origin difference;
 *	- for each event time, wa_existing_windows gives the windows that
 *	  contain it and that the range can hold, as enumerating them one by
 *	  one does, and wa_window_range_check agrees with that enumeration,
 *	  and says "all" wherever wa_window_range_of takes its fast path;
 *	  wa_window_range_open says whether one of those windows is still open
 *	  at a watermark, as the enumeration does.
 *
 * test/fuzz/fuzz_windows.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_shim.h"

#include "fuzz_input.h"
#include "query/query.h"

#define MAX_SPECS 6

/* Enumerate at most this many windows per event; more are checked by
 * their first and last only. */
#define ENUMERATE 4096

typedef __int128 i128;

typedef struct Case
{
	fuzz_input	in;
	WaWindowSet set;
	wa_window	windows[MAX_SPECS];
} Case;

static pg_noreturn void
finding(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static int64
take_number(fuzz_input *in)
{
	static const int64 special[] = {PG_INT64_MIN, PG_INT64_MAX, 0, -1,
		PG_INT64_MIN + 1, PG_INT64_MAX - 1, PG_INT64_MAX / 2 + 1,
	(int64) 1 << 32};
	uint8_t		shape = take_u8(in);

	switch (shape & 3)
	{
		case 0:
			return (int64) (int8_t) take_u8(in);
		case 1:
			return special[(shape >> 2) & 7];
		case 2:
			return (int64) ((uint64) take_u16(in) << ((shape >> 2) & 63));
		default:
			return (int64) take_u64(in);
	}
}

static i128
floor_mod128(i128 a, i128 m)
{
	i128		r = a % m;

	return r < 0 ? r + m : r;
}

static i128
gcd128(i128 a, i128 b)
{
	if (a < 0)
		a = -a;
	if (b < 0)
		b = -b;
	while (b != 0)
	{
		i128		t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The rules, as the documentation states them. */
static bool
set_is_valid(const wa_window *w, int n)
{
	i128		per_event = 0;

	if (n > 64)
		return false;
	for (int i = 0; i < n; i++)
	{
		i128		each;

		if (w[i].size <= 0 || w[i].slide <= 0 || w[i].size < w[i].slide)
			return false;
		for (int j = 0; j < i; j++)
			if (w[j].size == w[i].size &&
				floor_mod128((i128) w[i].origin - w[j].origin,
							 gcd128(w[i].slide, w[j].slide)) == 0)
				return false;
		each = ((i128) w[i].size + w[i].slide - 1) / w[i].slide;
		if (each > 100000)
			return false;
		per_event += each;
	}
	return per_event <= 100000;
}

static void
check_set(void *arg)
{
	Case	   *c = arg;

	wa_window_check_count(c->set.n_windows);
	for (int i = 0; i < c->set.n_windows; i++)
		wa_window_check(&c->set, i);
	wa_window_set_check_limits(&c->set);
}

static void
no_emit(void *arg, const wa_pane *pane)
{
}

/* The engine takes every set SQL accepts, and slices it exactly. */
static void
check_engine(const Case *c)
{
	static const wa_agg_spec count = {WA_AGG_COUNT_STAR, -1};
	wa_config	cfg;
	const char *msg;
	wa_engine  *engine;
	int64		g;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = c->set.n_windows;
	cfg.windows = c->set.windows;
	cfg.n_aggs = 1;
	cfg.aggs = &count;
	cfg.emit = no_emit;
	msg = wa_config_check(&cfg);
	if (msg != NULL)
		finding("the engine refuses a valid set: %s", msg);
	engine = wa_engine_create(&cfg);
	g = wa_engine_slice_width(engine);
	wa_engine_destroy(engine);
	if (g <= 0)
		finding("slice width %lld", (long long) g);
	for (int i = 0; i < c->set.n_windows; i++)
	{
		const wa_window *w = &c->set.windows[i];

		if (w->size % g != 0 || w->slide % g != 0 ||
			floor_mod128((i128) w->origin - c->set.windows[0].origin, g) != 0)
			finding("slice width %lld does not divide window %d", (long long) g, i);
	}
}

/*
 * Window w's starts that contain t and fit in [lowest, highest], by
 * enumeration: the first and last such start and how many there are.
 */
static bool
enumerate(const wa_window *w, int64 t, i128 lowest, i128 highest,
		  i128 *from, i128 *to, bool *all)
{
	i128		last = (i128) t - floor_mod128((i128) t - w->origin, w->slide);
	int			n = 0;

	*all = true;
	*from = 1;
	*to = 0;
	for (i128 s = last; s > (i128) t - w->size; s -= w->slide)
	{
		if (++n > ENUMERATE)
			return false;
		if (s < lowest || s + w->size > highest)
		{
			*all = false;
			continue;
		}
		if (*from > *to)
			*to = s;
		*from = s;
	}
	return true;
}

static void
check_times(Case *c)
{
	i128		lowest = take_number(&c->in);
	i128		highest = lowest + (i128) (uint64) take_number(&c->in);
	WaWindowRange range;

	wa_window_range_set(&range, &c->set, lowest, highest);
	while (fuzz_left(&c->in) > 0)
	{
		int64		t = take_number(&c->in);
		wa_tick		wm = (wa_tick) t + (wa_tick) take_number(&c->in);
		int64		lateness = (int64) take_below(&c->in, 1000);
		bool		any = false;
		bool		all = true;
		bool		open = false;
		bool		enumerated = true;
		WaWindowsInRange got;

		for (int i = 0; i < c->set.n_windows; i++)
		{
			const wa_window *w = &c->set.windows[i];
			wa_tick		from;
			wa_tick		to;
			i128		want_from;
			i128		want_to;
			bool		want_all;
			bool		got_all = wa_existing_windows(t, w->size, w->slide,
													  w->origin, lowest, highest,
													  &from, &to);

			if (!enumerate(w, t, lowest, highest, &want_from, &want_to, &want_all))
			{
				enumerated = false;
				if (from <= to)
					any = true;
				if (!got_all)
					all = false;
				continue;
			}
			/* to bounds the starts: the last is the one at or below it */
			if (from <= to)
				to = from + ((to - from) / w->slide) * w->slide;
			if (got_all != want_all ||
				(want_from <= want_to) != (from <= to) ||
				(from <= to && (from != want_from || to != want_to)))
				finding("window %d at t=%lld: [%lld, %lld] all=%d, enumeration [%lld, %lld] all=%d",
						i, (long long) t, (long long) from, (long long) to, got_all,
						(long long) want_from, (long long) want_to, want_all);
			if (want_from <= want_to)
			{
				any = true;
				/* the last existing window ends last */
				if (want_to + w->size + lateness > wm)
					open = true;
			}
			if (!want_all)
				all = false;
		}
		got = wa_window_range_of(&range, t);
		if (enumerated &&
			got != (all ? WA_IN_RANGE_ALL : any ? WA_IN_RANGE_SOME : WA_IN_RANGE_NONE))
			finding("t=%lld: range check says %d, enumeration all=%d any=%d",
					(long long) t, (int) got, all, any);
		if (enumerated && wa_window_range_open(&range, t, wm, lateness) != open)
			finding("t=%lld, watermark %lld, lateness %lld: an existing window %s open, enumeration says %s",
					(long long) t, (long long) wm, (long long) lateness,
					open ? "is not" : "is", open ? "one is" : "none is");
		if (got != WA_IN_RANGE_ALL && (wa_tick) t >= range.safe_from &&
			(wa_tick) t <= range.safe_to)
			finding("t=%lld is in the safe range but not in all windows", (long long) t);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int refusals[] = {ERRCODE_INVALID_PARAMETER_VALUE,
	ERRCODE_PROGRAM_LIMIT_EXCEEDED};
	Case		c;
	bool		accepted;

	memset(&c, 0, sizeof(c));
	c.in.data = data;
	c.in.size = size;
	c.set.n_windows = 1 + (int) take_below(&c.in, MAX_SPECS);
	c.set.windows = c.windows;
	for (int i = 0; i < c.set.n_windows; i++)
	{
		uint8_t		shape = take_u8(&c.in);

		/* mostly small slides, so that windows per event stay countable */
		c.windows[i].slide = shape & 1 ? take_number(&c.in) :
			1 + (int64) take_below(&c.in, 1000);
		if (shape & 2)
			c.windows[i].size = take_number(&c.in);
		else
		{
			i128		size = (i128) c.windows[i].slide * (1 + (int64) take_below(&c.in, 8));

			c.windows[i].size = size > PG_INT64_MAX ? PG_INT64_MAX :
				size < PG_INT64_MIN ? PG_INT64_MIN : (int64) size;
		}
		c.windows[i].origin = take_number(&c.in);
	}
	accepted = shim_try(check_set, &c);
	if (!accepted)
		shim_expect_error(refusals, lengthof(refusals));
	if (accepted != set_is_valid(c.windows, c.set.n_windows))
		finding("set %s but the rules say %s", accepted ? "accepted" : "refused",
				accepted ? "refuse" : "accept");
	if (accepted)
	{
		check_engine(&c);
		check_times(&c);
	}
	shim_reset_memory();
	return 0;
}
