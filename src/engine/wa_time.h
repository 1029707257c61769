/*-------------------------------------------------------------------------
 *
 * wa_time.h
 *	  Event-time arithmetic for the windowing engine.
 *
 * Event times are int64 "ticks" (microseconds for timestamptz, plain units
 * for integer time).  Window bounds, the watermark and deadlines such as
 * "window end + allowed lateness" can fall outside the int64 range for
 * events near INT64_MIN/INT64_MAX, so the engine computes them as 128-bit
 * integers (wa_tick).  Division is always floor division, so that negative
 * times land in the right slice.
 *
 * Pure C11 plus the GCC/Clang __int128 extension; no PostgreSQL headers.
 *
 * src/engine/wa_time.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_TIME_H
#define WA_TIME_H

#include <stdbool.h>
#include <stdint.h>

/*
 * 128-bit integers, declared with 8-byte alignment: x86-64 and AArch64 load
 * them as two words anyway, slice entries stay dense, and structs holding
 * them can live in memory from allocators that only promise 8-byte
 * alignment (palloc, shared memory).
 */
__extension__ typedef __int128 wa_int128 __attribute__((aligned(8)));

/* A point in event time, wide enough that no bound ever overflows. */
typedef wa_int128 wa_tick;

/* Watermark before any event: every window accepts. */
#define WA_TICK_MIN (-((wa_tick) 1 << 100))
/* Watermark after end of input: every window has fired and expired. */
#define WA_TICK_MAX ((wa_tick) 1 << 100)

/* floor(a / b) and the matching non-negative remainder; b > 0. */
static inline int64_t
wa_floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	if ((a % b) < 0)
		q--;
	return q;
}

static inline int64_t
wa_floor_mod(int64_t a, int64_t b)
{
	int64_t		r = a % b;

	return r < 0 ? r + b : r;
}

/* floor(a / b) for a 128-bit numerator; fast path when a fits in int64. */
static inline wa_tick
wa_tick_floor_div(wa_tick a, int64_t b)
{
	wa_tick		q;

	if (a >= INT64_MIN && a <= INT64_MAX)
		return wa_floor_div((int64_t) a, b);
	q = a / b;
	if ((a % b) < 0)
		q--;
	return q;
}

static inline wa_tick
wa_tick_floor_mod(wa_tick a, int64_t b)
{
	wa_tick		r;

	if (a >= INT64_MIN && a <= INT64_MAX)
		return wa_floor_mod((int64_t) a, b);
	r = a % b;

	return r < 0 ? r + b : r;
}

static inline int64_t
wa_gcd(int64_t a, int64_t b)
{
	while (b != 0)
	{
		int64_t		t = a % b;

		a = b;
		b = t;
	}
	return a < 0 ? -a : a;
}

#endif							/* WA_TIME_H */
