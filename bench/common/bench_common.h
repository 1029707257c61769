/*-------------------------------------------------------------------------
 *
 * bench_common.h
 *	  What the standalone engine benchmarks share: their event record, a
 *	  seeded generator, thread CPU time, and the loop that feeds events
 *	  to an engine.
 *
 * bench/common/bench_common.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "wa_engine.h"

typedef struct bench_event
{
	int64_t		key;
	int64_t		ts;
	int64_t		val;
} bench_event;

/* splitmix64: small, fast and good enough to spread keys and jitter */
static inline uint64_t
rng_next(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/*
 * CPU time of this thread.  The runs are single-threaded and compute-bound,
 * so on a quiet machine this equals wall time; on a shared one it leaves
 * out the time other processes held the CPU, which wall time would charge
 * to whichever implementation happened to be running.
 */
static inline double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* An event's integer key, and its value as both int and float. */
static inline void
bench_event_input(const bench_event *e, wa_key *key, wa_value *v)
{
	key->ival = e->key;
	key->bytes = NULL;
	key->len = 0;
	v->isnull = false;
	v->i = e->val;
	v->f = (double) e->val;
}

/* Ingest every event, emitting late panes every late_every events, then flush. */
static inline void
bench_feed(wa_engine *eng, const bench_event *ev, size_t n, size_t late_every)
{
	for (size_t i = 0; i < n; i++)
	{
		wa_key		key;
		wa_value	v;

		bench_event_input(&ev[i], &key, &v);
		(void) wa_engine_ingest(eng, &key, ev[i].ts, &v);
		if ((i + 1) % late_every == 0)
			wa_engine_emit_late(eng);
	}
	wa_engine_flush(eng);
}

#endif							/* BENCH_COMMON_H */
