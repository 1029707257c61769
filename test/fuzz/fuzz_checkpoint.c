/*-------------------------------------------------------------------------
 *
 * fuzz_checkpoint.c
 *	  libFuzzer target: a pipeline's checkpoint rows, as arbitrary bytes,
 *	  read and restored into an engine.
 *
 * A checkpoint is read, not trusted (checkpoint_format.c): whatever the
 * rows hold, reading them either succeeds or raises a corrupt-data error
 * (the one that stops a pipeline; for a key column stored in its send
 * form too, whatever its receive function says), never a crash, an
 * internal error or a read out of bounds.  The input chooses the key columns (one integer,
 * or one to three columns of the shim's types), whether format-1 rows may
 * be read, the engine's fixed window and session gap, the restored time
 * state, and one to four rows (expiry bound, accumulator size, bytes; the
 * last row takes what is left of the input).
 *
 * What is read is then checked two ways:
 *	- written back with wa_ckpt_append_record and wa_ckpt_append_sessions
 *	  into one chunk and read again, it gives the same records (the writer
 *	  and the reader agree);
 *	- restored into an engine as a worker does (wa_ckpt_restore), given a
 *	  few more events around the restored watermark, then flushed: every
 *	  accumulator and session the restore takes, however odd (NaN sums,
 *	  slices at the ends of int64, counts that add up past int64), must
 *	  fold into panes without undefined behaviour, and the destroyed engine
 *	  must hold no memory.
 *
 * test/fuzz/fuzz_checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_shim.h"

#include "fuzz_input.h"
#include "utils/lsyscache.h"
#include "harness.h"
#include "pipeline/checkpoint_format.h"

typedef struct Case
{
	fuzz_input	in;
	WaKeyCodec	codec;
	WaKeyColumn cols[3];
	WaKeyPortable keys;
	wa_engine  *engine;
	bool		legacy_allowed;
	const char *signature;		/* of generic aggregates: states expected */
	wa_time_state time;			/* restored before the slices */
	WaCheckpointLog log;
	int64_t		panes;
} Case;

static void
count_pane(void *arg, const wa_pane *pane)
{
	((Case *) arg)->panes++;
}

static void
set_up_keys(void *arg)
{
	Case	   *c = arg;
	uint8_t		shape = take_u8(&c->in);

	shim_take_key_columns(&c->in, (shape & 1) != 0, 3, &c->codec, c->cols);
	wa_key_portable_init(&c->keys, &c->codec);
	c->legacy_allowed = (shape & 2) != 0;
	c->signature = (shape & 4) != 0 ? "pg_catalog.sum(numeric)" : NULL;
}

/* The rows, read as a worker reads them. */
static void
read_rows(void *arg)
{
	Case	   *c = arg;
	WaCkptReader r;
	int			n_rows = 1 + (int) take_below(&c->in, 4);
	uint32		acc_size = wa_engine_acc_size(c->engine);

	wa_ckpt_reader_init(&r, 1, acc_size, c->signature, &c->keys,
						c->legacy_allowed ? c->engine : NULL);
	for (int i = 0; i < n_rows; i++)
	{
		uint8_t		shape = take_u8(&c->in);
		int64		expire_below = shape & 1 ? (int64) take_u64(&c->in) :
			(int64) (int8_t) take_u8(&c->in);
		int32		row_acc_size = shape & 2 ? (int32) take_u16(&c->in) : (int32) acc_size;
		const uint8_t *bytes;
		size_t		len = take_bytes(&c->in, &bytes,
									 i + 1 == n_rows ? SIZE_MAX : take_u16(&c->in));
		/* a row lives in its own block, as a detoasted bytea does */
		char	   *row = palloc(len + 1);

		memcpy(row, bytes, len);
		wa_ckpt_reader_add_row(&r, i + 1, expire_below, row_acc_size, row,
							   (uint32) len);
	}
	wa_ckpt_reader_finish(&r, &c->log);
}

/* What was read, written into one chunk and read back, is the same. */
static void
round_trip(void *arg)
{
	Case	   *c = arg;
	uint32		acc_size = wa_engine_acc_size(c->engine);
	StringInfoData chunk;
	WaCkptReader r;
	WaCheckpointLog again;

	initStringInfo(&chunk);
	wa_ckpt_start_chunk(&chunk, c->signature);
	for (int64 i = 0; i < c->log.n; i++)
	{
		const WaCkptRecord *rec = &c->log.records[i];

		if (rec->is_sessions)
			wa_ckpt_append_sessions(&chunk, rec->key, rec->key_len,
									(int32) rec->slice, rec->horizon,
									rec->n_sessions, rec->acc, rec->states_len);
		else
			wa_ckpt_append_record(&chunk, rec->key, rec->key_len, rec->slice,
								  rec->acc, acc_size, rec->states,
								  rec->states_len);
	}
	wa_ckpt_reader_init(&r, 1, acc_size, c->signature, &c->keys, NULL);
	wa_ckpt_reader_add_row(&r, 1, PG_INT64_MIN, (int32) acc_size, chunk.data,
						   (uint32) chunk.len);
	wa_ckpt_reader_finish(&r, &again);
	if (again.n != c->log.n || again.needs_rewrite)
	{
		fprintf(stderr, "round trip: %lld records read back from %lld\n",
				(long long) again.n, (long long) c->log.n);
		abort();
	}
	for (int64 i = 0; i < again.n; i++)
	{
		const WaCkptRecord *x = &c->log.records[i];
		const WaCkptRecord *y = &again.records[i];

		/* a sessions record's sessions are its acc, states_len bytes */
		uint32		acc_len = x->is_sessions ? x->states_len : acc_size;

		if (x->is_sessions != y->is_sessions ||
			x->key_len != y->key_len || x->slice != y->slice ||
			x->horizon != y->horizon || x->n_sessions != y->n_sessions ||
			memcmp(x->key, y->key, x->key_len) != 0 ||
			memcmp(x->acc, y->acc, acc_len) != 0 ||
			(x->states == NULL) != (y->states == NULL) ||
			x->states_len != y->states_len ||
			(x->states != NULL && memcmp(x->states, y->states, x->states_len) != 0))
		{
			fprintf(stderr, "round trip: record %lld differs\n", (long long) i);
			abort();
		}
	}
}

/* A sessions record into the engine, as wa_ckpt_restore does. */
static bool
restore_sessions(Case *c, const wa_key *key, const WaCkptRecord *rec)
{
	uint32		acc_size = wa_engine_acc_size(c->engine);
	wa_session_image *images = palloc(sizeof(wa_session_image) *
									  (rec->n_sessions + 1));
	const char *p = rec->acc;

	for (uint32 i = 0; i < rec->n_sessions; i++)
	{
		WaCkptSession s;

		p = wa_ckpt_read_session(p, acc_size, c->signature != NULL, &s);
		images[i].start = s.start;
		images[i].end = s.end;
		images[i].revision = s.revision;
		images[i].has_row = s.has_row;
		images[i].acc = palloc(acc_size);
		wa_engine_acc_from_portable(c->engine, (const uint8 *) s.acc, images[i].acc);
	}
	return wa_engine_restore_sessions(c->engine, key, (int) rec->slice,
									  rec->horizon == PG_INT64_MIN ? WA_TICK_MIN : rec->horizon,
									  (int) rec->n_sessions, images);
}

/* Into the engine, as wa_ckpt_restore does, then every pane out. */
static void
restore(void *arg)
{
	Case	   *c = arg;
	uint32		acc_size = wa_engine_acc_size(c->engine);
	char	   *acc = palloc(acc_size);

	wa_engine_restore_time(c->engine, &c->time);
	for (int64 i = 0; i < c->log.n; i++)
	{
		const WaCkptRecord *rec = &c->log.records[i];
		wa_key		key;

		wa_key_from_portable(&c->keys, rec->key, rec->key_len, &key);
		if (rec->is_sessions)
		{
			if (!restore_sessions(c, &key, rec))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("invalid sessions")));
			continue;
		}
		wa_engine_acc_from_portable(c->engine, (const uint8 *) rec->acc, acc);
		if (!wa_engine_restore_slice(c->engine, &key, rec->slice, acc, acc_size))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid accumulator")));
	}
	wa_engine_restore_done(c->engine);

	/*
	 * Events into the restored state, on time and late, so that updates
	 * meet restored (and merged) accumulators too: keyed as the last
	 * record, at times just below the restored maximum (wrapping around
	 * at INT64_MIN: any time is an event time), with int64 extremes
	 * as values; drawn from the restored time (the input has no bytes
	 * left: the last row took them).
	 */
	if (c->log.n > 0)
	{
		const WaCkptRecord *rec = &c->log.records[c->log.n - 1];
		uint64_t	x = (uint64_t) c->time.max_ts;
		wa_key		key;

		wa_key_from_portable(&c->keys, rec->key, rec->key_len, &key);
		for (int i = 0; i < 4; i++)
		{
			wa_value	v[N_INPUTS];

			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			memset(v, 0, sizeof(v));
			v[IN_A].i = (x >> 8) & 1 ? PG_INT64_MAX : PG_INT64_MIN;
			v[IN_B].i = (int64_t) x;
			v[IN_F].f = (double) (int8_t) (x >> 16);
			(void) wa_engine_ingest(c->engine, &key,
									(int64_t) ((uint64_t) c->time.max_ts - (x >> 32) % 64), v);
			wa_engine_emit_late(c->engine);
		}
	}
	wa_engine_flush(c->engine);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int corrupt[] = {ERRCODE_DATA_CORRUPTED};
	Case		c;
	counting_alloc ca;
	wa_allocator al;
	wa_config	cfg;
	wa_window	window;
	wa_session_window session;

	memset(&c, 0, sizeof(c));
	c.in.data = data;
	c.in.size = size;
	if (!shim_try(set_up_keys, &c))
		shim_expect_error(NULL, 0);

	/* the engine the rows are restored into: every aggregate kind */
	window.slide = 1 + (int64_t) take_below(&c.in, 1000);
	window.size = window.slide * (1 + (int64_t) take_below(&c.in, 4));
	window.origin = (int64_t) take_u64(&c.in);
	ca_setup(&ca, &al);
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_windows = 1;
	cfg.windows = &window;
	/* session records name window 1 */
	session.gap = 1 + (int64_t) take_below(&c.in, 1000);
	session.max_time = PG_INT64_MAX - session.gap;
	cfg.n_sessions = 1;
	cfg.sessions = &session;
	cfg.bound = (int64_t) take_below(&c.in, 100);
	cfg.lateness = (int64_t) take_below(&c.in, 100);
	cfg.n_aggs = N_AGGS;
	cfg.aggs = test_aggs;
	cfg.byte_keys = !c.codec.int_key;
	cfg.emit = count_pane;
	cfg.emit_arg = &c;
	cfg.allocator = &al;
	c.engine = wa_engine_create(&cfg);
	c.time.max_ts = (int64_t) take_u64(&c.in);
	c.time.seen_event = (take_u8(&c.in) & 1) != 0;
	c.time.wm = (wa_tick) c.time.max_ts - (wa_tick) take_u16(&c.in);

	if (!shim_try(read_rows, &c))
		shim_expect_error(corrupt, 1);
	else
	{
		if (!shim_try(round_trip, &c))
			shim_expect_error(NULL, 0);
		if (!shim_try(restore, &c))
			shim_expect_error(corrupt, 1);
	}

	wa_engine_destroy(c.engine);
	if (ca.live_bytes != 0 || ca.live_blocks != 0 || ca.errors != 0)
	{
		fprintf(stderr, "engine holds %lld bytes in %lld blocks after destroy; %lld misuses: %s\n",
				(long long) ca.live_bytes, (long long) ca.live_blocks,
				(long long) ca.errors, ca.first_error);
		abort();
	}
	shim_reset_memory();
	return 0;
}
