/*-------------------------------------------------------------------------
 *
 * fuzz_engine.c
 *	  libFuzzer target: the windowing engine against the brute-force
 *	  reference, on configurations and streams decoded from the input.
 *
 * The input is read (fuzz_input.h) as: flags (byte or integer keys,
 * shared windows, merging every slice, how often late panes are emitted),
 * a time unit, one to four windows in that unit (slide, size, origin,
 * some at the ends of int64), bound and lateness, a base time (0, near
 * either end of int64, or anywhere), keys (int64 extremes among them, or
 * byte strings with zeros and shared prefixes), then operations until the
 * input ends: events that move a cursor forward and land behind it by
 * up to 64 steps (so out of order, late and too late), with values that
 * have NULLs and int64 extremes, and idle-time watermark advances.
 *
 * The stream then goes through compare.c's run_stream, the differential
 * tests' own comparison: every event's outcome, the watermark after every
 * operation, every window's final value and revisions, the statistics,
 * and that a flushed engine holds only what it held when created and a
 * destroyed one nothing (the counting allocator).  A failed check aborts
 * (fuzz_tap.c), which libFuzzer reports with the input.
 *
 * test/fuzz/fuzz_engine.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "fuzz_input.h"
#include "harness.h"

/* Streams longer than this add time, not coverage. */
#define MAX_OPS 3000

/* Add without leaving int64: events must be valid times. */
static int64_t
add_clamped(int64_t a, __int128 b)
{
	__int128	s = (__int128) a + b;

	return s > INT64_MAX ? INT64_MAX : s < INT64_MIN ? INT64_MIN : (int64_t) s;
}

static void
decode_values(fuzz_input *in, wa_value *v)
{
	static const int64_t extremes[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1,
	INT64_MAX - 1};
	uint8_t		shape = take_u8(in);

	memset(v, 0, sizeof(wa_value) * N_INPUTS);
	v[IN_A].isnull = (shape & 3) == 0;
	v[IN_A].i = (shape & 4) ? extremes[(shape >> 3) & 3] :
		(int64_t) (int8_t) take_u8(in);
	v[IN_B].i = (int64_t) take_u64(in);
	v[IN_F].isnull = (shape & 0x60) == 0;
	/* the reference folds floats exactly: multiples of 2^-10 below 2^30 */
	v[IN_F].f = (double) (int32_t) (take_u64(in) & 0x7fffffffffULL) / 1024.0 -
		(shape & 0x80 ? 1 << 20 : 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t units[] = {1, 7, 1000, (int64_t) 1 << 40};
	fuzz_input	in = {data, size, 0};
	uint8_t		flags = take_u8(&in);
	int64_t		unit = units[take_below(&in, 4)];
	wa_window	windows[4];
	int			n_windows = 1 + (int) take_below(&in, 4);
	int64_t		bound;
	int64_t		lateness;
	int64_t		cursor;
	int			n_keys;
	stream		st;
	run_opts	o;
	static const int epochs[] = {0, 1, 7, 64};

	for (int j = 0; j < n_windows; j++)
	{
		uint8_t		shape = take_u8(&in);
		int64_t		slide = unit * (1 + (int64_t) take_below(&in, 16));

		windows[j].slide = slide;
		windows[j].size = slide * (1 + (int64_t) (shape & 7));
		if (shape & 8)
			windows[j].size += unit * (int64_t) take_below(&in, 4);
		windows[j].origin = (shape & 0x30) == 0x30 ?
			((shape & 0x40) ? INT64_MAX : INT64_MIN) :
			unit * ((int64_t) take_below(&in, 64) - 32);
	}
	bound = unit * (int64_t) take_below(&in, 20);
	lateness = unit * (int64_t) take_below(&in, 40);

	switch (take_below(&in, 4))
	{
		case 0:
			cursor = 0;
			break;
		case 1:
			cursor = INT64_MIN;
			break;
		case 2:
			cursor = add_clamped(INT64_MAX, -(__int128) unit * 300);
			break;
		default:
			cursor = (int64_t) take_u64(&in);
			break;
	}

	stream_init(&st, (flags & 1) != 0);
	n_keys = 1 + (int) take_below(&in, 8);
	for (int k = 0; k < n_keys; k++)
	{
		if (st.keys.bytes)
		{
			const uint8_t *b;
			size_t		len = take_bytes(&in, &b, take_below(&in, 6));

			keytab_add(&st.keys, 0, b, (uint32_t) len);
		}
		else
		{
			uint8_t		c = take_u8(&in);
			int64_t		v = c == 0 ? INT64_MIN : c == 1 ? INT64_MAX :
				(int64_t) (int8_t) c;

			keytab_add(&st.keys, v, NULL, 0);
		}
	}
	n_keys = st.keys.n;			/* repeats collapse */

	while (fuzz_left(&in) > 0 && st.n_ops < MAX_OPS)
	{
		uint8_t		op = take_u8(&in);

		if ((op & 7) < 6)
		{
			wa_value	v[N_INPUTS];
			int			key = (int) take_below(&in, (uint64_t) n_keys);
			int64_t		t;

			cursor = add_clamped(cursor, (__int128) unit * ((op >> 3) & 3));
			t = add_clamped(cursor, -(__int128) unit * take_below(&in, 64));
			decode_values(&in, v);
			stream_event(&st, key, t, v);
		}
		else if ((op & 7) == 6)
			stream_advance(&st, (wa_tick) cursor + (wa_tick) unit *
						   ((int64_t) take_below(&in, 64) - 16));
		else
			cursor = add_clamped(cursor, (__int128) unit * take_u16(&in));
	}

	memset(&o, 0, sizeof(o));
	o.name = "fuzz";
	o.n_windows = n_windows;
	o.windows = windows;
	o.bound = bound;
	o.lateness = lateness;
	o.epoch = epochs[(flags >> 3) & 3];
	o.merge_every_slice = (flags & 4) != 0;
	o.share_windows = (flags & 2) != 0;
	o.quiet = true;
	run_stream(&o, &st, NULL);
	stream_free(&st);
	return 0;
}
