/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *	  A pipeline's slice state on disk: a log of per-epoch deltas with
 *	  compaction.
 *
 * Each epoch appends one row to windowagg.checkpoints holding every slice
 * accumulator that changed in the epoch (one bytea of packed records), and
 * the slice number below which slices have expired.  Writing one row per
 * epoch, whatever the number of slices in it, keeps an epoch's cost
 * proportional to what changed; updating one row per slice would cost an
 * index probe and a heap update each.
 *
 * Restoring reads the rows in epoch order: a later record of a (key,
 * slice) replaces an earlier one, and slices below the newest expiry bound
 * are dropped.  So that restoring costs in proportion to the live state
 * rather than to the history, the log is compacted, within the epoch that
 * makes it too long, into one row holding just the live slices: when it
 * has grown past twice the live state (and past a floor), which keeps the
 * amortised cost of compaction proportional to what the epochs wrote.
 * The live state's size is estimated from what the engine holds and the
 * mean sizes of what was written: slice records, sessions records without
 * their sessions, and sessions (a key's sessions record is as long as its
 * sessions, which differ by orders of magnitude from key to key).
 *
 * The bytes of a row, and reading them back, are checkpoint_format.c's.
 * Each row is one chunk of at most CHUNK_BYTES, so that no value nears the
 * 1 GB limit of a bytea however large the state: an epoch or a compaction
 * that writes more writes several rows.  A restore that read a format-1
 * row (0.1.0), or records that later ones replaced, rewrites the log
 * compacted, so that a restarted worker starts from a log as long as its
 * state.
 *
 * Session windows write a sessions record per (key, session window) whose
 * sessions changed in the epoch, whole (a key holds few open sessions),
 * and a deletion record when the key holds nothing there any more; a
 * later record replaces an earlier one as for slices.
 *
 * Generic aggregates' states (any PostgreSQL aggregate) go into their
 * records as portable bytes (agg_generic_portable.c), and each chunk names
 * the aggregates they belong to; the worker writes its cached states back
 * before the engine reports its changed slices.
 *
 * src/pipeline/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/checkpoint.h"

#include "utils/builtins.h"

/* The log is compacted once it holds this much more than the live state. */
#define COMPACT_FLOOR_BYTES (4 * 1024 * 1024)

/* A chunk is closed once a record would take it past this. */
#define CHUNK_BYTES (8 * 1024 * 1024)

void
wa_ckpt_init(WaCheckpoint *c, int32 pipeline_id, const WaKeyCodec *codec,
			 uint32 acc_size, const WaAggQuery *q, WaGeneric *generic,
			 MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	memset(c, 0, sizeof(*c));
	c->pipeline_id = pipeline_id;
	c->acc_size = acc_size;
	c->cxt = cxt;
	wa_key_portable_init(&c->keys, codec);
	initStringInfo(&c->key_buf);
	initStringInfo(&c->delta);
	initStringInfo(&c->sessions_buf);
	if (generic != NULL && wa_generic_callbacks(generic) != NULL)
	{
		StringInfoData sig;

		c->generic = generic;
		initStringInfo(&sig);
		wa_generic_signature(generic, &sig);
		c->signature = sig.data;
		initStringInfo(&c->states_buf);
	}
	MemoryContextSwitchTo(old);
}

/* ---------- sizes ---------- */

static void
sizes_add(WaCkptSizes *to, const WaCkptSizes *delta)
{
	to->slices += delta->slices;
	to->slice_bytes += delta->slice_bytes;
	to->session_keys += delta->session_keys;
	to->session_key_bytes += delta->session_key_bytes;
	to->sessions += delta->sessions;
	to->session_bytes += delta->session_bytes;
}

static void
sizes_add_slice(WaCkptSizes *sizes, uint32 record_bytes)
{
	sizes->slices++;
	sizes->slice_bytes += record_bytes;
}

static void
sizes_add_sessions(WaCkptSizes *sizes, uint32 key_len, uint32 n,
				   uint32 entries_len)
{
	sizes->session_keys++;
	sizes->session_key_bytes += wa_ckpt_sessions_record_bytes(key_len, 0);
	sizes->sessions += n;
	sizes->session_bytes += entries_len;
}

/* The sizes of a log's live records. */
static void
sizes_of_records(WaCheckpoint *c, const WaCkptRecord *recs, int64 n,
				 WaCkptSizes *sizes)
{
	memset(sizes, 0, sizeof(*sizes));
	for (int64 i = 0; i < n; i++)
	{
		if (recs[i].is_sessions)
			sizes_add_sessions(sizes, recs[i].key_len, recs[i].n_sessions,
							   recs[i].states_len);
		else
			sizes_add_slice(sizes, wa_ckpt_record_bytes(recs[i].key_len, c->acc_size) +
							recs[i].states_len);
	}
}

/* count of what the engine holds at the mean size of its kind */
static double
estimate(int64 count, int64 written_bytes, int64 written_count)
{
	return written_count > 0 ? (double) count * written_bytes / written_count : 0;
}

/* ---------- writing ---------- */

static bytea *
to_bytea(const char *data, int len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), data, len);
	return b;
}

/* The chunk being filled goes to the list of full ones. */
static void
close_chunk(WaCheckpoint *c)
{
	WaCkptChunk *chunk = palloc(sizeof(WaCkptChunk));

	chunk->data = to_bytea(c->delta.data, c->delta.len);
	chunk->n_slices = c->chunk_slices;
	c->full_chunks = lappend(c->full_chunks, chunk);
	resetStringInfo(&c->delta);
	c->chunk_slices = 0;
}

/* A slice with generic states: its record through the portable forms. */
static void
add_slice_with_states(WaCheckpoint *c, const wa_engine *engine,
					  const char *key_data, uint32 key_len, int64 slice,
					  const void *acc)
{
	uint32		record_len;

	if (c->acc_buf == NULL)
		c->acc_buf = palloc(c->acc_size);	/* known once an engine exists */
	resetStringInfo(&c->states_buf);
	wa_generic_states_to_portable(c->generic, engine, acc, &c->states_buf);
	wa_engine_acc_to_portable(engine, acc, (uint8 *) c->acc_buf);
	record_len = wa_ckpt_record_bytes(key_len, c->acc_size) + c->states_buf.len;
	if (c->delta.len > WA_CKPT_HEADER_BYTES && c->delta.len + record_len > CHUNK_BYTES)
		close_chunk(c);
	if (c->delta.len == 0)
		wa_ckpt_start_chunk(&c->delta, c->signature);
	wa_ckpt_append_record(&c->delta, key_data, key_len, slice, c->acc_buf,
						  c->acc_size, c->states_buf.data, c->states_buf.len);
	sizes_add_slice(&c->delta_sizes, record_len);
}

/* A key's portable form: its image when it is one already (c->cxt current). */
static void
portable_key(WaCheckpoint *c, const wa_key *key, const char **data,
			 uint32 *len)
{
	if (c->keys.is_image && !c->keys.codec->int_key)
	{
		*data = (const char *) key->bytes;
		*len = key->len;
		return;
	}
	resetStringInfo(&c->key_buf);
	wa_key_to_portable(&c->keys, key, &c->key_buf);
	*data = c->key_buf.data;
	*len = c->key_buf.len;
}

/*
 * Every changed slice of every epoch passes here, so the common case
 * writes the record straight into the delta: on a little-endian machine
 * the portable accumulator is the accumulator's own bytes, and a key of
 * ordinary types is its image.
 */
void
wa_ckpt_add_slice(WaCheckpoint *c, const wa_engine *engine, const wa_key *key,
				  int64 slice, const void *acc)
{
	MemoryContext old = MemoryContextSwitchTo(c->cxt);
	const char *key_data;
	uint32		key_len;
	uint32		record_len;
	char	   *p;

	portable_key(c, key, &key_data, &key_len);
	if (c->generic != NULL)
	{
		add_slice_with_states(c, engine, key_data, key_len, slice, acc);
		c->delta_slices++;
		c->chunk_slices++;
		MemoryContextSwitchTo(old);
		return;
	}
	record_len = wa_ckpt_record_bytes(key_len, c->acc_size);
	if (c->delta.len > WA_CKPT_HEADER_BYTES && c->delta.len + record_len > CHUNK_BYTES)
		close_chunk(c);
	if (c->delta.len == 0)
		wa_ckpt_start_chunk(&c->delta, NULL);
	enlargeStringInfo(&c->delta, record_len);
	p = wa_ckpt_put_record(c->delta.data + c->delta.len, key_data, key_len,
						   slice, c->acc_size);
#ifdef WORDS_BIGENDIAN
	wa_engine_acc_to_portable(engine, acc, (uint8 *) p);
#else
	(void) engine;
	memcpy(p, acc, c->acc_size);
#endif
	c->delta.len += record_len;
	c->delta.data[c->delta.len] = '\0';
	sizes_add_slice(&c->delta_sizes, record_len);
	c->delta_slices++;
	c->chunk_slices++;
	MemoryContextSwitchTo(old);
}

/* A key's sessions in one session window, whole, or their deletion. */
void
wa_ckpt_add_sessions(WaCheckpoint *c, const wa_engine *engine,
					 const wa_key *key, int window, wa_tick horizon, int n,
					 const wa_session_image *sessions)
{
	MemoryContext old = MemoryContextSwitchTo(c->cxt);
	const char *key_data;
	uint32		key_len;
	uint32		record_len;

	if (c->acc_buf == NULL)
		c->acc_buf = palloc(c->acc_size);	/* known once an engine exists */
	portable_key(c, key, &key_data, &key_len);
	resetStringInfo(&c->sessions_buf);
	for (int i = 0; i < n; i++)
	{
		const char *states = NULL;

		if (sessions[i].start < PG_INT64_MIN || sessions[i].end > PG_INT64_MAX)
			elog(ERROR, "session bounds out of the range of bigint");
		if (c->generic != NULL)
		{
			resetStringInfo(&c->states_buf);
			wa_generic_states_to_portable(c->generic, engine, sessions[i].acc,
										  &c->states_buf);
			states = c->states_buf.data;
		}
		wa_engine_acc_to_portable(engine, sessions[i].acc, (uint8 *) c->acc_buf);
		wa_ckpt_put_session(&c->sessions_buf, sessions[i].start,
							sessions[i].end, sessions[i].revision,
							sessions[i].has_row, c->acc_buf, c->acc_size,
							states, states != NULL ? (uint32) c->states_buf.len : 0);
	}
	/* ends lie within the event time's type (max_time), and so do horizons */
	if (horizon != WA_TICK_MIN && (horizon <= PG_INT64_MIN || horizon > PG_INT64_MAX))
		elog(ERROR, "session horizon out of the range of bigint");
	record_len = wa_ckpt_sessions_record_bytes(key_len, c->sessions_buf.len);
	if (c->delta.len > WA_CKPT_HEADER_BYTES && c->delta.len + record_len > CHUNK_BYTES)
		close_chunk(c);
	if (c->delta.len == 0)
		wa_ckpt_start_chunk(&c->delta, c->signature);
	wa_ckpt_append_sessions(&c->delta, key_data, key_len, (int32) window,
							horizon == WA_TICK_MIN ? PG_INT64_MIN : (int64) horizon,
							(uint32) n, c->sessions_buf.data,
							(uint32) c->sessions_buf.len);
	sizes_add_sessions(&c->delta_sizes, key_len, (uint32) n,
					   (uint32) c->sessions_buf.len);
	c->delta_sessions++;
	c->chunk_slices++;
	MemoryContextSwitchTo(old);
}

static void
insert_row(WaCheckpoint *c, int64 seq, int64 expire_below, int64 n_slices,
		   bytea *data)
{
	wa_catalog_checkpoint_insert(c->pipeline_id, seq, expire_below, n_slices,
								 (int32) c->acc_size, data);
	c->log_bytes += VARSIZE(data) - VARHDRSZ;
}

/* ---------- reading and merging ---------- */

/*
 * Read the whole log of a pipeline (SPI connected, in a transaction):
 * the live records, sorted by (key, slice), one per (key, slice).
 * The row data stays in CurrentMemoryContext.
 */
static void
read_log(WaCheckpoint *c, const wa_engine *engine, WaCheckpointLog *log)
{
	WaCkptReader r;
	WaCheckpointRow *rows;
	uint64		n_rows;

	wa_ckpt_reader_init(&r, c->pipeline_id, c->acc_size, c->signature,
						&c->keys, engine);
	rows = wa_catalog_checkpoints_read(c->pipeline_id, &n_rows);
	for (uint64 i = 0; i < n_rows; i++)
		wa_ckpt_reader_add_row(&r, rows[i].seq, rows[i].expire_below,
							   rows[i].acc_size, VARDATA_ANY(rows[i].data),
							   VARSIZE_ANY_EXHDR(rows[i].data));
	wa_ckpt_reader_finish(&r, log);
	c->expired_below = log->expired_below;
}

/*
 * Replace the whole log by the given records (sorted, portable), in
 * chunks, as rows numbered from seq + 1 on.
 */
static void
write_compacted(WaCheckpoint *c, const WaCkptRecord *recs, int64 n)
{
	StringInfoData chunk;
	int64		chunk_slices = 0;

	wa_catalog_checkpoints_delete(c->pipeline_id);
	c->log_bytes = 0;
	initStringInfo(&chunk);
	wa_ckpt_start_chunk(&chunk, c->signature);
	for (int64 i = 0; i < n; i++)
	{
		uint32		record_len = recs[i].is_sessions ?
			wa_ckpt_sessions_record_bytes(recs[i].key_len, recs[i].states_len) :
			wa_ckpt_record_bytes(recs[i].key_len, c->acc_size) + recs[i].states_len;

		if (chunk_slices > 0 && chunk.len + record_len > CHUNK_BYTES)
		{
			insert_row(c, ++c->seq, c->expired_below, chunk_slices,
					   to_bytea(chunk.data, chunk.len));
			resetStringInfo(&chunk);
			wa_ckpt_start_chunk(&chunk, c->signature);
			chunk_slices = 0;
		}
		if (recs[i].is_sessions)
			wa_ckpt_append_sessions(&chunk, recs[i].key, recs[i].key_len,
									(int32) recs[i].slice, recs[i].horizon,
									recs[i].n_sessions, recs[i].acc,
									recs[i].states_len);
		else
			wa_ckpt_append_record(&chunk, recs[i].key, recs[i].key_len, recs[i].slice,
								  recs[i].acc, c->acc_size, recs[i].states,
								  recs[i].states_len);
		chunk_slices++;
	}
	insert_row(c, ++c->seq, c->expired_below, chunk_slices,
			   to_bytea(chunk.data, chunk.len));
	pfree(chunk.data);
	sizes_of_records(c, recs, n, &c->written);
}

static void
compact(WaCheckpoint *c)
{
	WaCheckpointLog log;

	read_log(c, NULL, &log);
	write_compacted(c, log.records, log.n);
}

/*
 * Write the epoch's delta (SPI connected, in the epoch's transaction), and
 * compact the log if it has grown too long.  live_slices is the number of
 * slices the engine holds.
 */
void
wa_ckpt_write(WaCheckpoint *c, int64 expire_below, int64 live_slices,
			  int64 live_session_keys, int64 live_sessions)
{
	int64		live_bytes;
	const WaCkptSizes *w = &c->written;
	ListCell   *lc;

	if (c->delta_slices == 0 && c->delta_sessions == 0 &&
		expire_below <= c->expired_below)
		return;
	foreach(lc, c->full_chunks)
	{
		WaCkptChunk *chunk = lfirst(lc);

		insert_row(c, ++c->seq, expire_below, chunk->n_slices, chunk->data);
	}
	if (c->delta.len == 0)
		wa_ckpt_start_chunk(&c->delta, c->signature);	/* an expiry alone */
	insert_row(c, ++c->seq, expire_below, c->chunk_slices,
			   to_bytea(c->delta.data, c->delta.len));
	sizes_add(&c->written, &c->delta_sizes);
	c->expired_below = Max(c->expired_below, expire_below);

	/*
	 * The live state's size in the log: what the engine holds at the mean
	 * sizes written so far (keys differ in length from one pipeline to the
	 * next, and within one).
	 */
	live_bytes = (int64) (estimate(live_slices, w->slice_bytes, w->slices) +
						  estimate(live_session_keys, w->session_key_bytes, w->session_keys) +
						  estimate(live_sessions, w->session_bytes, w->sessions));
	if (c->log_bytes > Max(COMPACT_FLOOR_BYTES, 2 * live_bytes))
		compact(c);
}

/* After the epoch committed or rolled back: start the next delta. */
void
wa_ckpt_reset(WaCheckpoint *c)
{
	ListCell   *lc;

	foreach(lc, c->full_chunks)
	{
		WaCkptChunk *chunk = lfirst(lc);

		pfree(chunk->data);
		pfree(chunk);
	}
	list_free(c->full_chunks);
	c->full_chunks = NIL;
	resetStringInfo(&c->delta);
	c->delta_slices = 0;
	c->delta_sessions = 0;
	memset(&c->delta_sizes, 0, sizeof(c->delta_sizes));
	c->chunk_slices = 0;
}

/*
 * Read the whole log (SPI connected, in a transaction), sorted and merged,
 * for wa_ckpt_restore; without the state lock: the read and the sort take
 * a while, and need no engine state (the engine's layout converts rows of
 * format 1).
 */
WaCheckpointLog *
wa_ckpt_read(WaCheckpoint *c, const wa_engine *engine)
{
	WaCheckpointLog *log = palloc(sizeof(WaCheckpointLog));

	read_log(c, engine, log);
	c->seq = log->last_seq;
	return log;
}

static pg_noreturn void
restore_corrupt(WaCheckpoint *c)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("checkpoint of pipeline %d holds an accumulator that no events could have built",
					c->pipeline_id),
			 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
}

/* One sessions record into the engine. */
static void
restore_sessions(WaCheckpoint *c, wa_engine *engine, const wa_key *key,
				 const WaCkptRecord *rec)
{
	/* a record holds up to 2^32 - 1 sessions (and bytes for each) */
	wa_session_image *images = palloc_extended(sizeof(wa_session_image) *
											   Max((Size) rec->n_sessions, 1),
											   MCXT_ALLOC_HUGE);
	char	   *accs = palloc_extended((Size) c->acc_size * Max(rec->n_sessions, 1),
									   MCXT_ALLOC_HUGE);
	const char *p = rec->acc;

	for (uint32 i = 0; i < rec->n_sessions; i++)
	{
		WaCkptSession s;

		p = wa_ckpt_read_session(p, c->acc_size, c->generic != NULL, &s);
		images[i].start = s.start;
		images[i].end = s.end;
		images[i].revision = s.revision;
		images[i].has_row = s.has_row;
		images[i].acc = accs + (Size) i * c->acc_size;
		wa_engine_acc_from_portable(engine, (const uint8 *) s.acc, images[i].acc);
		if (c->generic != NULL)
			wa_generic_states_from_portable(c->generic, engine, images[i].acc,
											s.states, s.states_len);
	}
	if (!wa_engine_restore_sessions(engine, key, (int) rec->slice,
									rec->horizon == PG_INT64_MIN ? WA_TICK_MIN : rec->horizon,
									(int) rec->n_sessions, images))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint of pipeline %d holds sessions that no events could have left",
						c->pipeline_id),
				 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
	pfree(accs);
	pfree(images);
}

/*
 * Load a log into the engine (the caller holds the engine's lock; the
 * log's records point into memory that must live until this returns).
 */
void
wa_ckpt_restore(WaCheckpoint *c, wa_engine *engine, const WaCheckpointLog *log)
{
	const WaCkptRecord *recs = log->records;
	char	   *acc = palloc(c->acc_size);

	for (int64 i = 0; i < log->n; i++)
	{
		wa_key		key;

		/* the caller holds the state lock: a big restore stays cancellable */
		if ((i & 1023) == 0)
			wa_check_for_interrupts_locked();
		wa_key_from_portable(&c->keys, recs[i].key, recs[i].key_len, &key);
		if (recs[i].is_sessions)
		{
			restore_sessions(c, engine, &key, &recs[i]);
			continue;
		}
		wa_engine_acc_from_portable(engine, (const uint8 *) recs[i].acc, acc);
		if (c->generic != NULL)
			wa_generic_states_from_portable(c->generic, engine, acc,
											recs[i].states, recs[i].states_len);
		if (!wa_engine_restore_slice(engine, &key, recs[i].slice, acc, c->acc_size))
			restore_corrupt(c);
	}
	pfree(acc);
	c->log_bytes = log->bytes;
	sizes_of_records(c, log->records, log->n, &c->written);
	wa_ckpt_reset(c);
}

/*
 * After a restore (SPI connected, in a transaction, without the state
 * lock): rewrite a log that holds format 1 rows or replaced records as its
 * live records in format 2.  Returns true if it did; the caller records
 * the log's new end (c->seq) in the progress row.
 */
bool
wa_ckpt_rewrite(WaCheckpoint *c, const WaCheckpointLog *log)
{
	if (!log->needs_rewrite)
		return false;
	write_compacted(c, log->records, log->n);
	return true;
}
