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
 *
 * The format (2, since windowagg 0.2.0) is the same on every machine and
 * leaves room for records of other kinds.  Each row is one chunk of at
 * most CHUNK_BYTES, so that no value nears the 1 GB limit of a bytea
 * however large the state: an epoch or a compaction that writes more
 * writes several rows.  A chunk is
 *	  "WACK", uint8 format version, 3 zero bytes, then records:
 *	  uint8 kind, uint32 body length, body.
 * A slice record (kind 1) has the body
 *	  uint32 key length, key (key_portable.c), int64 slice number,
 *	  accumulator (wa_acc_to_portable: acc_size bytes).
 * Every integer is little-endian.  Records of a kind this build does not
 * know, a version it does not know, or any length that reaches past the
 * chunk are errors (ERRCODE_DATA_CORRUPTED), which stop the pipeline
 * instead of failing it again and again.
 *
 * Format 1 (windowagg 0.1.0) has no header: uint32 key length, key image,
 * int64 slice, accumulator, in the writing machine's byte order.  Its
 * rows can never begin with "WACK", which as a key length would exceed
 * the bytea holding it.  They are read on a machine of the same byte
 * order.  A restore that read a format-1 row, or records that later ones
 * replaced, rewrites the log compacted in format 2, so that a restarted
 * worker starts from a log as long as its state.
 *
 * src/pipeline/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/checkpoint.h"

#include "port/pg_bswap.h"
#include "utils/builtins.h"

/* The log is compacted once it holds this much more than the live state. */
#define COMPACT_FLOOR_BYTES (4 * 1024 * 1024)

/* A chunk is closed once a record would take it past this. */
#define CHUNK_BYTES (8 * 1024 * 1024)

#define CKPT_MAGIC "WACK"
#define CKPT_FORMAT 2
#define CKPT_HEADER_BYTES 8
#define RECORD_SLICE 1
#define RECORD_HEADER_BYTES (1 + sizeof(uint32))

/* ---------- little-endian integers ---------- */

static inline void
store_le32(char *p, uint32 v)
{
	v = pg_bswap32(pg_hton32(v));	/* big-endian, reversed: little-endian */
	memcpy(p, &v, sizeof(v));
}

static inline void
store_le64(char *p, uint64 v)
{
	v = pg_bswap64(pg_hton64(v));
	memcpy(p, &v, sizeof(v));
}

static void
append_le32(StringInfo buf, uint32 v)
{
	v = pg_hton32(v);			/* big-endian ... */
	v = pg_bswap32(v);			/* ... reversed: little-endian */
	appendBinaryStringInfo(buf, (const char *) &v, sizeof(v));
}

static void
append_le64(StringInfo buf, uint64 v)
{
	v = pg_bswap64(pg_hton64(v));
	appendBinaryStringInfo(buf, (const char *) &v, sizeof(v));
}

static uint32
read_le32(const char *p)
{
	uint32		v;

	memcpy(&v, p, sizeof(v));
	return pg_ntoh32(pg_bswap32(v));
}

static uint64
read_le64(const char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return pg_ntoh64(pg_bswap64(v));
}

void
wa_ckpt_init(WaCheckpoint *c, int32 pipeline_id, const WaKeyCodec *codec,
			 uint32 acc_size, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	memset(c, 0, sizeof(*c));
	c->pipeline_id = pipeline_id;
	c->acc_size = acc_size;
	c->cxt = cxt;
	wa_key_portable_init(&c->keys, codec);
	initStringInfo(&c->key_buf);
	initStringInfo(&c->delta);
	MemoryContextSwitchTo(old);
}

/* ---------- writing ---------- */

static void
start_chunk(StringInfo buf)
{
	static const char header[CKPT_HEADER_BYTES] = {'W', 'A', 'C', 'K', CKPT_FORMAT, 0, 0, 0};

	appendBinaryStringInfo(buf, header, CKPT_HEADER_BYTES);
}

/* A record whose key and accumulator are portable already. */
static void
append_record(StringInfo buf, const char *key, uint32 key_len, int64 slice,
			  const char *acc, uint32 acc_size)
{
	appendStringInfoChar(buf, RECORD_SLICE);
	append_le32(buf, sizeof(uint32) + key_len + sizeof(int64) + acc_size);
	append_le32(buf, key_len);
	appendBinaryStringInfo(buf, key, key_len);
	append_le64(buf, (uint64) slice);
	appendBinaryStringInfo(buf, acc, acc_size);
}

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

/*
 * Every changed slice of every epoch passes here, so the common case
 * writes the record straight into the delta: on a little-endian machine
 * the portable accumulator is the accumulator's own bytes, and an integer
 * key or a key of ordinary types is its image.
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

	if (c->keys.codec->int_key)
	{
		int64		v = key->ival;

		resetStringInfo(&c->key_buf);
		append_le64(&c->key_buf, (uint64) v);
		key_data = c->key_buf.data;
		key_len = sizeof(int64);
	}
	else if (c->keys.is_image)
	{
		key_data = (const char *) key->bytes;
		key_len = key->len;
	}
	else
	{
		resetStringInfo(&c->key_buf);
		wa_key_to_portable(&c->keys, key, &c->key_buf);
		key_data = c->key_buf.data;
		key_len = c->key_buf.len;
	}
	record_len = RECORD_HEADER_BYTES + sizeof(uint32) + key_len + sizeof(int64) + c->acc_size;
	if (c->delta.len > CKPT_HEADER_BYTES && c->delta.len + record_len > CHUNK_BYTES)
		close_chunk(c);
	if (c->delta.len == 0)
		start_chunk(&c->delta);
	enlargeStringInfo(&c->delta, record_len);
	p = c->delta.data + c->delta.len;
	*p++ = RECORD_SLICE;
	store_le32(p, record_len - RECORD_HEADER_BYTES);
	store_le32(p + 4, key_len);
	memcpy(p + 8, key_data, key_len);
	store_le64(p + 8 + key_len, (uint64) slice);
	p += 8 + key_len + sizeof(int64);
#ifdef WORDS_BIGENDIAN
	wa_engine_acc_to_portable(engine, acc, (uint8 *) p);
#else
	(void) engine;
	memcpy(p, acc, c->acc_size);
#endif
	c->delta.len += record_len;
	c->delta.data[c->delta.len] = '\0';
	c->delta_slices++;
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

static pg_noreturn void
corrupt(const WaCheckpoint *c, int64 seq, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("checkpoint row %lld of pipeline %d is corrupt: %s",
					(long long) seq, c->pipeline_id, detail),
			 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
}

/* One record of the log (portable), pointing into the row that holds it. */
struct WaCkptRecord
{
	const char *key;
	uint32		key_len;
	int64		slice;
	const char *acc;
	int64		order;			/* position in the log: later wins */
};

static int
compare_records(const void *a, const void *b)
{
	const WaCkptRecord *x = a;
	const WaCkptRecord *y = b;
	int			cmp;

	if (x->key_len != y->key_len)
		return x->key_len < y->key_len ? -1 : 1;
	cmp = memcmp(x->key, y->key, x->key_len);
	if (cmp != 0)
		return cmp;
	if (x->slice != y->slice)
		return x->slice < y->slice ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order ? 1 : 0;
}

static bool
same_slice(const WaCkptRecord *x, const WaCkptRecord *y)
{
	return x->slice == y->slice && x->key_len == y->key_len &&
		memcmp(x->key, y->key, x->key_len) == 0;
}

/* Records gathered from the rows of a log. */
typedef struct LogReader
{
	WaCheckpoint *c;
	const wa_engine *engine;	/* for format 1 rows */
	WaCkptRecord *recs;
	int64		n;
	int64		capacity;
	bool		legacy;			/* a format 1 row was read */
} LogReader;

static WaCkptRecord *
next_record(LogReader *r)
{
	if (r->n == r->capacity)
	{
		r->capacity = Max(1024, r->capacity * 2);
		r->recs = r->recs == NULL ?
			palloc_extended(sizeof(WaCkptRecord) * r->capacity, MCXT_ALLOC_HUGE) :
			repalloc_huge(r->recs, sizeof(WaCkptRecord) * r->capacity);
	}
	r->recs[r->n].order = r->n;
	return &r->recs[r->n++];
}

/* A format 2 chunk: every length checked before it is read past. */
static void
read_chunk(LogReader *r, int64 seq, const char *p, const char *end)
{
	WaCheckpoint *c = r->c;

	if (end - p < CKPT_HEADER_BYTES)
		corrupt(c, seq, "the header is cut short");
	if (p[4] != CKPT_FORMAT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint of pipeline %d has format %d, which this version of windowagg cannot read",
						c->pipeline_id, (int) (uint8) p[4]),
				 errhint("Install the version of windowagg that wrote it.")));
	p += CKPT_HEADER_BYTES;
	while (p < end)
	{
		uint8		kind;
		uint32		body_len;
		const char *body;
		WaCkptRecord *rec;

		if (end - p < (ptrdiff_t) RECORD_HEADER_BYTES)
			corrupt(c, seq, "a record header is cut short");
		kind = (uint8) p[0];
		body_len = read_le32(p + 1);
		p += RECORD_HEADER_BYTES;
		if ((uint64) (end - p) < body_len)
			corrupt(c, seq, "a record reaches past the end of its row");
		body = p;
		p += body_len;
		if (kind != RECORD_SLICE)
			corrupt(c, seq, psprintf("a record is of unknown kind %d", (int) kind));
		rec = next_record(r);
		if (body_len < sizeof(uint32))
			corrupt(c, seq, "a slice record is cut short");
		rec->key_len = read_le32(body);
		if ((uint64) body_len != (uint64) sizeof(uint32) + rec->key_len +
			sizeof(int64) + c->acc_size)
			corrupt(c, seq, "a slice record's lengths do not add up");
		rec->key = body + sizeof(uint32);
		rec->slice = (int64) read_le64(rec->key + rec->key_len);
		rec->acc = rec->key + rec->key_len + sizeof(int64);
	}
}

/*
 * A format 1 row (0.1.0, this machine's byte order): its records are
 * converted to the portable form, in memory of the caller's context.
 */
static void
read_legacy_row(LogReader *r, int64 seq, const char *p, const char *end)
{
	WaCheckpoint *c = r->c;

	if (r->engine == NULL)
		corrupt(c, seq, "a row of format 1 follows rows of format 2");
	r->legacy = true;
	while (p < end)
	{
		WaCkptRecord *rec;
		uint32		key_len;
		wa_key		key;
		int64		slice;
		StringInfoData portable;
		char	   *acc;

		if (end - p < (ptrdiff_t) sizeof(uint32))
			corrupt(c, seq, "a record is cut short");
		memcpy(&key_len, p, sizeof(uint32));
		p += sizeof(uint32);
		if ((uint64) (end - p) < (uint64) key_len + sizeof(int64) + c->acc_size)
			corrupt(c, seq, "a record reaches past the end of its row");
		memset(&key, 0, sizeof(key));
		if (c->keys.codec->int_key)
		{
			if (key_len != sizeof(int64))
				corrupt(c, seq, "an integer key is not 8 bytes long");
			memcpy(&key.ival, p, sizeof(int64));
		}
		else
		{
			key.bytes = (const uint8_t *) p;
			key.len = key_len;
		}
		initStringInfo(&portable);
		wa_key_to_portable(&c->keys, &key, &portable);
		p += key_len;
		memcpy(&slice, p, sizeof(int64));
		p += sizeof(int64);
		acc = palloc(c->acc_size);
		wa_engine_acc_to_portable(r->engine, p, (uint8 *) acc);
		p += c->acc_size;

		rec = next_record(r);
		rec->key = portable.data;
		rec->key_len = portable.len;
		rec->slice = slice;
		rec->acc = acc;
	}
}

/*
 * Read the whole log of a pipeline (SPI connected, in a transaction):
 * the live records, sorted by (key, slice), one per (key, slice).
 * The row data stays in CurrentMemoryContext.
 */
static void
read_log(WaCheckpoint *c, const wa_engine *engine, WaCheckpointLog *log)
{
	LogReader	r;
	WaCheckpointRow *rows;
	uint64		n_rows;
	int64		bytes = 0;
	int64		expire_below = PG_INT64_MIN;
	int64		kept = 0;
	int64		last_seq = 0;

	memset(&r, 0, sizeof(r));
	r.c = c;
	r.engine = engine;
	rows = wa_catalog_checkpoints_read(c->pipeline_id, &n_rows);
	for (uint64 i = 0; i < n_rows; i++)
	{
		bytea	   *data = rows[i].data;
		const char *p;
		const char *end;

		last_seq = rows[i].seq;
		expire_below = Max(expire_below, rows[i].expire_below);
		if (rows[i].acc_size != (int32) c->acc_size)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("checkpoint of pipeline %d has accumulators of %d bytes, expected %u",
							c->pipeline_id, rows[i].acc_size, c->acc_size),
					 errdetail("The checkpoint was written by a different build of windowagg.")));
		bytes += VARSIZE_ANY_EXHDR(data);
		p = VARDATA_ANY(data);
		end = p + VARSIZE_ANY_EXHDR(data);
		if (end - p >= 4 && memcmp(p, CKPT_MAGIC, 4) == 0)
			read_chunk(&r, last_seq, p, end);
		else
			read_legacy_row(&r, last_seq, p, end);
	}

	/* the newest record of each (key, slice) that has not expired */
	if (r.n > 0)
		qsort(r.recs, r.n, sizeof(WaCkptRecord), compare_records);
	for (int64 i = 0; i < r.n; i++)
	{
		/* sorted by (key, slice, order): the newest ends its group */
		bool		newest = i + 1 == r.n || !same_slice(&r.recs[i], &r.recs[i + 1]);

		if (newest && r.recs[i].slice >= expire_below)
			r.recs[kept++] = r.recs[i];
	}
	log->records = r.recs;
	log->n = kept;
	log->bytes = bytes;
	log->last_seq = last_seq;
	log->needs_rewrite = r.legacy || kept < r.n;
	c->expired_below = expire_below;
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
	start_chunk(&chunk);
	for (int64 i = 0; i < n; i++)
	{
		if (chunk_slices > 0 &&
			chunk.len + RECORD_HEADER_BYTES + 12 + recs[i].key_len + c->acc_size > CHUNK_BYTES)
		{
			insert_row(c, ++c->seq, c->expired_below, chunk_slices,
					   to_bytea(chunk.data, chunk.len));
			resetStringInfo(&chunk);
			start_chunk(&chunk);
			chunk_slices = 0;
		}
		append_record(&chunk, recs[i].key, recs[i].key_len, recs[i].slice,
					  recs[i].acc, c->acc_size);
		chunk_slices++;
	}
	insert_row(c, ++c->seq, c->expired_below, chunk_slices,
			   to_bytea(chunk.data, chunk.len));
	pfree(chunk.data);
	c->written_bytes = c->log_bytes;
	c->written_records = n;
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
wa_ckpt_write(WaCheckpoint *c, int64 expire_below, int64 live_slices)
{
	int64		live_bytes;
	ListCell   *lc;

	if (c->delta_slices == 0 && expire_below <= c->expired_below)
		return;
	foreach(lc, c->full_chunks)
	{
		WaCkptChunk *chunk = lfirst(lc);

		insert_row(c, ++c->seq, expire_below, chunk->n_slices, chunk->data);
	}
	if (c->delta.len == 0)
		start_chunk(&c->delta);	/* an expiry alone */
	insert_row(c, ++c->seq, expire_below, c->chunk_slices,
			   to_bytea(c->delta.data, c->delta.len));
	c->written_bytes += c->delta.len;
	foreach(lc, c->full_chunks)
		c->written_bytes += VARSIZE(((WaCkptChunk *) lfirst(lc))->data) - VARHDRSZ;
	c->written_records += c->delta_slices;
	c->expired_below = Max(c->expired_below, expire_below);

	/*
	 * The live state's size in the log: its slices at the mean size of the
	 * records written so far (keys differ in length from one pipeline to
	 * the next, and within one).
	 */
	live_bytes = c->written_records > 0 ?
		(int64) ((double) live_slices * c->written_bytes / c->written_records) : 0;
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
		wa_engine_acc_from_portable(engine, (const uint8 *) recs[i].acc, acc);
		wa_engine_restore_slice(engine, &key, recs[i].slice, acc, c->acc_size);
	}
	pfree(acc);
	c->log_bytes = log->bytes;
	c->written_bytes = log->bytes;
	c->written_records = log->n;
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
