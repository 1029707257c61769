/*-------------------------------------------------------------------------
 *
 * checkpoint_format.c
 *	  The bytes of a pipeline's checkpoint log: writing records into
 *	  chunks, and reading rows back into records, which are checked, not
 *	  trusted.
 *
 * The format (2, since windowagg 0.2.0) is the same on every machine and
 * leaves room for records of other kinds.  Each row of
 * windowagg.checkpoints is one chunk (checkpoint.c bounds its size).  A
 * chunk is
 *	  "WACK", uint8 format version, 3 zero bytes, then records:
 *	  uint8 kind, uint32 body length, body.
 * A slice record (kind 1) has the body
 *	  uint32 key length, key (key_portable.c), int64 slice number,
 *	  accumulator (wa_acc_to_portable: acc_size bytes).
 * A pipeline with generic aggregates (any PostgreSQL aggregate) writes,
 * instead, an aggregates record (kind 2) first in each chunk, whose body
 * is the text of their signatures (wa_generic_signature), then slice
 * records with states (kind 3): the body of a slice record followed by the
 * accumulator's generic states (agg_generic_portable.c).  A chunk whose
 * signatures are not the pipeline's is refused: its states were written
 * for other aggregates.
 * A sessions record (kind 4, since 0.3.0) holds what a key holds in one
 * session window (wa_engine_checkpoint_sessions), whole:
 *	  uint32 key length, key, int32 window, int64 horizon (the latest end
 *	  of a closed session; INT64_MIN, which no session ends at: none),
 *	  uint32 count,
 *	  then count sessions: int64 start, int64 end, int64 revision,
 *	  uint8 has_row (0 or 1), accumulator, and with generic aggregates
 *	  uint32 states length, states.
 * A count of 0 with horizon INT64_MIN deletes what earlier records said of
 * the key's window.
 * Every integer is little-endian.  Records of a kind this build does not
 * know, a version it does not know, or any length that reaches past the
 * chunk are errors (ERRCODE_DATA_CORRUPTED), which stop the pipeline
 * instead of failing it again and again.
 *
 * Format 1 (windowagg 0.1.0) has no header: uint32 key length, key image,
 * int64 slice, accumulator, in the writing machine's byte order.  Its
 * rows can never begin with "WACK", which as a key length would exceed
 * the bytea holding it.  They are read on a machine of the same byte
 * order, converted to format 2 in memory, and mark the log for a rewrite.
 *
 * Reading keeps, of each (key, slice) and of each (key, session window),
 * the record of the latest row, drops slices below the newest expiry bound,
 * and drops deletions.
 *
 * This file knows nothing of the catalog, so that the fuzzer
 * (test/fuzz/fuzz_checkpoint.c) can feed it arbitrary rows.
 *
 * src/pipeline/checkpoint_format.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/checkpoint_format.h"

#include "query/little_endian.h"

#define CKPT_MAGIC "WACK"
#define CKPT_FORMAT 2
#define RECORD_SLICE 1
#define RECORD_AGGREGATES 2
#define RECORD_SLICE_STATES 3
#define RECORD_SESSIONS 4

/* A session's bytes before its accumulator: start, end, revision, has_row. */
#define SESSION_HEAD_BYTES (3 * sizeof(int64) + 1)

/* ---------- writing ---------- */

void
wa_ckpt_start_chunk(StringInfo buf, const char *signature)
{
	static const char header[WA_CKPT_HEADER_BYTES] = {'W', 'A', 'C', 'K', CKPT_FORMAT, 0, 0, 0};
	char		len[4];

	appendBinaryStringInfo(buf, header, WA_CKPT_HEADER_BYTES);
	if (signature == NULL)
		return;
	appendStringInfoChar(buf, RECORD_AGGREGATES);
	wa_store_le32(len, (uint32) strlen(signature));
	appendBinaryStringInfo(buf, len, sizeof(len));
	appendBinaryStringInfo(buf, signature, (int) strlen(signature));
}

/*
 * Write a slice record's header, key and slice number at p, which has room
 * for wa_ckpt_record_bytes(key_len, acc_size); returns where its
 * accumulator goes (the caller copies it, portable).
 */
char *
wa_ckpt_put_record(char *p, const char *key, uint32 key_len, int64 slice,
				   uint32 acc_size)
{
	*p++ = RECORD_SLICE;
	wa_store_le32(p, wa_ckpt_record_bytes(key_len, acc_size) - WA_CKPT_RECORD_HEADER_BYTES);
	wa_store_le32(p + 4, key_len);
	memcpy(p + 8, key, key_len);
	wa_store_le64(p + 8 + key_len, (uint64) slice);
	return p + 8 + key_len + sizeof(int64);
}

/* A record whose key, accumulator and states are portable already. */
void
wa_ckpt_append_record(StringInfo buf, const char *key, uint32 key_len,
					  int64 slice, const char *acc, uint32 acc_size,
					  const char *states, uint32 states_len)
{
	uint32		len = wa_ckpt_record_bytes(key_len, acc_size);
	char	   *p;

	if (states != NULL)
	{
		if ((uint64) len + states_len > PG_UINT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("aggregate states of %u bytes in one slice are too large for a checkpoint",
							states_len)));
		len += states_len;
	}
	enlargeStringInfo(buf, len);
	p = wa_ckpt_put_record(buf->data + buf->len, key, key_len, slice, acc_size);
	if (states != NULL)
	{
		buf->data[buf->len] = RECORD_SLICE_STATES;
		wa_store_le32(buf->data + buf->len + 1, len - WA_CKPT_RECORD_HEADER_BYTES);
	}
	memcpy(p, acc, acc_size);
	if (states != NULL)
		memcpy(p + acc_size, states, states_len);
	buf->len += len;
	buf->data[buf->len] = '\0';
}

void
wa_ckpt_put_session(StringInfo entries, int64 start, int64 end,
					int64 revision, bool has_row, const char *acc,
					uint32 acc_size, const char *states, uint32 states_len)
{
	char		head[SESSION_HEAD_BYTES];
	char		len[4];

	wa_store_le64(head, (uint64) start);
	wa_store_le64(head + 8, (uint64) end);
	wa_store_le64(head + 16, (uint64) revision);
	head[24] = has_row ? 1 : 0;
	appendBinaryStringInfo(entries, head, sizeof(head));
	appendBinaryStringInfo(entries, acc, (int) acc_size);
	if (states == NULL)
		return;
	wa_store_le32(len, states_len);
	appendBinaryStringInfo(entries, len, sizeof(len));
	appendBinaryStringInfo(entries, states, (int) states_len);
}

/* The body before the sessions: key length, key, window, horizon, count. */
#define SESSIONS_FIXED_BYTES(key_len) \
	(sizeof(uint32) + (key_len) + sizeof(int32) + sizeof(int64) + sizeof(uint32))

uint32
wa_ckpt_sessions_record_bytes(uint32 key_len, uint32 entries_len)
{
	uint64		len = (uint64) WA_CKPT_RECORD_HEADER_BYTES +
		SESSIONS_FIXED_BYTES(key_len) + entries_len;

	if (len > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sessions of %u bytes for one key are too large for a checkpoint",
						entries_len)));
	return (uint32) len;
}

void
wa_ckpt_append_sessions(StringInfo buf, const char *key, uint32 key_len,
						int32 window, int64 horizon, uint32 n,
						const char *entries, uint32 entries_len)
{
	uint32		len = wa_ckpt_sessions_record_bytes(key_len, entries_len);
	char	   *p;

	enlargeStringInfo(buf, len);
	p = buf->data + buf->len;
	*p++ = RECORD_SESSIONS;
	wa_store_le32(p, len - WA_CKPT_RECORD_HEADER_BYTES);
	wa_store_le32(p + 4, key_len);
	p += 8;
	memcpy(p, key, key_len);
	p += key_len;
	wa_store_le32(p, (uint32) window);
	wa_store_le64(p + 4, (uint64) horizon);
	wa_store_le32(p + 12, n);
	memcpy(p + 16, entries, entries_len);
	buf->len += len;
	buf->data[buf->len] = '\0';
}

/* ---------- reading ---------- */

static pg_noreturn void
corrupt(const WaCkptReader *r, int64 seq, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("checkpoint row %lld of pipeline %d is corrupt: %s",
					(long long) seq, r->pipeline_id, detail),
			 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
}

static int
compare_records(const void *a, const void *b)
{
	const WaCkptRecord *x = a;
	const WaCkptRecord *y = b;
	int			cmp;

	if (x->is_sessions != y->is_sessions)
		return x->is_sessions ? 1 : -1;
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
	return x->is_sessions == y->is_sessions &&
		x->slice == y->slice && x->key_len == y->key_len &&
		memcmp(x->key, y->key, x->key_len) == 0;
}

static WaCkptRecord *
next_record(WaCkptReader *r)
{
	if (r->n == r->capacity)
	{
		r->capacity = Max(1024, r->capacity * 2);
		r->recs = r->recs == NULL ?
			palloc_extended(sizeof(WaCkptRecord) * r->capacity, MCXT_ALLOC_HUGE) :
			repalloc_huge(r->recs, sizeof(WaCkptRecord) * r->capacity);
	}
	memset(&r->recs[r->n], 0, sizeof(WaCkptRecord));
	r->recs[r->n].order = r->n;
	return &r->recs[r->n++];
}

const char *
wa_ckpt_read_session(const char *p, uint32 acc_size, bool with_states,
					 WaCkptSession *s)
{
	s->start = (int64) wa_read_le64(p);
	s->end = (int64) wa_read_le64(p + 8);
	s->revision = (int64) wa_read_le64(p + 16);
	s->has_row = p[24] != 0;
	s->acc = p + SESSION_HEAD_BYTES;
	p = s->acc + acc_size;
	s->states = NULL;
	s->states_len = 0;
	if (with_states)
	{
		s->states_len = wa_read_le32(p);
		s->states = p + sizeof(uint32);
		p = s->states + s->states_len;
	}
	return p;
}

/*
 * A sessions record's body: every length checked before it is read past,
 * so that wa_ckpt_read_session may walk it later.
 */
static void
read_sessions(WaCkptReader *r, int64 seq, const char *body, uint32 body_len)
{
	const char *end = body + body_len;
	const char *p;
	WaCkptRecord *rec;
	bool		with_states = r->signature != NULL;

	if (body_len < sizeof(uint32))
		corrupt(r, seq, "a sessions record is cut short");
	rec = next_record(r);
	rec->is_sessions = true;
	rec->key_len = wa_read_le32(body);
	if ((uint64) body_len < SESSIONS_FIXED_BYTES((uint64) rec->key_len))
		corrupt(r, seq, "a sessions record is cut short");
	rec->key = body + sizeof(uint32);
	p = rec->key + rec->key_len;
	rec->slice = (int32) wa_read_le32(p);
	rec->horizon = (int64) wa_read_le64(p + 4);
	rec->n_sessions = wa_read_le32(p + 12);
	p += 16;
	rec->acc = p;
	for (uint32 i = 0; i < rec->n_sessions; i++)
	{
		if ((uint64) (end - p) < SESSION_HEAD_BYTES + (uint64) r->acc_size +
			(with_states ? sizeof(uint32) : 0))
			corrupt(r, seq, "a session reaches past the end of its record");
		if ((uint8) p[24] > 1)
			corrupt(r, seq, "a session's row flag is neither 0 nor 1");
		p += SESSION_HEAD_BYTES + r->acc_size;
		if (with_states)
		{
			uint32		states_len = wa_read_le32(p);

			p += sizeof(uint32);
			if ((uint64) (end - p) < states_len)
				corrupt(r, seq, "a session's states reach past the end of its record");
			p += states_len;
		}
	}
	if (p != end)
		corrupt(r, seq, "a sessions record's lengths do not add up");
	rec->states_len = (uint32) (end - rec->acc);
}

/* A format 2 chunk: every length checked before it is read past. */
static void
read_chunk(WaCkptReader *r, int64 seq, const char *p, const char *end)
{
	bool		named = false;	/* this chunk's aggregates record was read */

	if (end - p < WA_CKPT_HEADER_BYTES)
		corrupt(r, seq, "the header is cut short");
	if (p[4] != CKPT_FORMAT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint of pipeline %d has format %d, which this version of windowagg cannot read",
						r->pipeline_id, (int) (uint8) p[4]),
				 errhint("Install the version of windowagg that wrote it.")));
	p += WA_CKPT_HEADER_BYTES;
	while (p < end)
	{
		uint8		kind;
		uint32		body_len;
		const char *body;
		WaCkptRecord *rec;
		uint32		fixed_len;

		if (end - p < (ptrdiff_t) WA_CKPT_RECORD_HEADER_BYTES)
			corrupt(r, seq, "a record header is cut short");
		kind = (uint8) p[0];
		body_len = wa_read_le32(p + 1);
		p += WA_CKPT_RECORD_HEADER_BYTES;
		if ((uint64) (end - p) < body_len)
			corrupt(r, seq, "a record reaches past the end of its row");
		body = p;
		p += body_len;
		if (kind == RECORD_AGGREGATES)
		{
			if (r->signature == NULL)
				corrupt(r, seq, "it names aggregates, and the pipeline has no generic ones");
			if (body_len != strlen(r->signature) ||
				memcmp(body, r->signature, body_len) != 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("checkpoint of pipeline %d holds states of other aggregates than its query's",
								r->pipeline_id),
						 errdetail("The checkpoint names %.*s; the query names %s.",
								   (int) Min(body_len, 1024), body, r->signature),
						 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
			named = true;
			continue;
		}
		if (kind == RECORD_SESSIONS)
		{
			if (r->signature != NULL && !named)
				corrupt(r, seq, "aggregate states come before the record naming their aggregates");
			read_sessions(r, seq, body, body_len);
			continue;
		}
		if (kind != RECORD_SLICE && kind != RECORD_SLICE_STATES)
			corrupt(r, seq, psprintf("a record is of unknown kind %d", (int) kind));
		if ((kind == RECORD_SLICE_STATES) != (r->signature != NULL))
			corrupt(r, seq, r->signature != NULL ?
					"a slice record has no aggregate states" :
					"a slice record has aggregate states, and the pipeline has no generic aggregates");
		if (kind == RECORD_SLICE_STATES && !named)
			corrupt(r, seq, "aggregate states come before the record naming their aggregates");
		rec = next_record(r);
		if (body_len < sizeof(uint32))
			corrupt(r, seq, "a slice record is cut short");
		rec->key_len = wa_read_le32(body);
		if ((uint64) body_len < (uint64) sizeof(uint32) + rec->key_len +
			sizeof(int64) + r->acc_size)
			corrupt(r, seq, "a slice record's lengths do not add up");
		fixed_len = sizeof(uint32) + rec->key_len + sizeof(int64) + r->acc_size;
		if (kind == RECORD_SLICE && body_len != fixed_len)
			corrupt(r, seq, "a slice record's lengths do not add up");
		rec->key = body + sizeof(uint32);
		rec->slice = (int64) wa_read_le64(rec->key + rec->key_len);
		rec->acc = rec->key + rec->key_len + sizeof(int64);
		rec->states = kind == RECORD_SLICE_STATES ? rec->acc + r->acc_size : NULL;
		rec->states_len = body_len - fixed_len;
	}
}

/*
 * A format 1 row (0.1.0, this machine's byte order): its records are
 * converted to the portable form, in memory of the caller's context.
 */
static void
read_legacy_row(WaCkptReader *r, int64 seq, const char *p, const char *end)
{
	if (r->engine == NULL)
		corrupt(r, seq, "a row of format 1 follows rows of format 2");
	if (r->signature != NULL)
		corrupt(r, seq, "a row of format 1 has no aggregate states");
	r->legacy = true;
	while (p < end)
	{
		WaCkptRecord *rec;
		uint32		key_len;
		wa_key		key;
		int64		slice;
		char	   *portable;
		char	   *acc;

		if (end - p < (ptrdiff_t) sizeof(uint32))
			corrupt(r, seq, "a record is cut short");
		memcpy(&key_len, p, sizeof(uint32));
		p += sizeof(uint32);
		if ((uint64) (end - p) < (uint64) key_len + sizeof(int64) + r->acc_size)
			corrupt(r, seq, "a record reaches past the end of its row");
		memset(&key, 0, sizeof(key));
		if (r->keys->codec->int_key)
		{
			if (key_len != sizeof(int64))
				corrupt(r, seq, "an integer key is not 8 bytes long");
			memcpy(&key.ival, p, sizeof(int64));
		}
		else
		{
			key.bytes = (const uint8_t *) p;
			key.len = key_len;
		}
		/* each key at its own size: a legacy log may hold millions */
		if (r->scratch.data == NULL)
			initStringInfo(&r->scratch);
		resetStringInfo(&r->scratch);
		wa_key_to_portable(r->keys, &key, &r->scratch);
		portable = palloc(Max(r->scratch.len, 1));
		memcpy(portable, r->scratch.data, r->scratch.len);
		p += key_len;
		memcpy(&slice, p, sizeof(int64));
		p += sizeof(int64);
		acc = palloc(r->acc_size);
		wa_engine_acc_to_portable(r->engine, p, (uint8 *) acc);
		p += r->acc_size;

		rec = next_record(r);
		rec->key = portable;
		rec->key_len = r->scratch.len;
		rec->slice = slice;
		rec->acc = acc;
		rec->states = NULL;
		rec->states_len = 0;
	}
}

void
wa_ckpt_reader_init(WaCkptReader *r, int32 pipeline_id, uint32 acc_size,
					const char *signature, WaKeyPortable *keys,
					const wa_engine *engine)
{
	memset(r, 0, sizeof(*r));
	r->pipeline_id = pipeline_id;
	r->acc_size = acc_size;
	r->signature = signature;
	r->keys = keys;
	r->engine = engine;
	r->expired_below = PG_INT64_MIN;
}

/*
 * Read one row of the log; its data must live until the records are used
 * (they point into it).
 */
void
wa_ckpt_reader_add_row(WaCkptReader *r, int64 seq, int64 expire_below,
					   int32 acc_size, const char *data, uint32 len)
{
	const char *end = data + len;

	r->last_seq = seq;
	r->expired_below = Max(r->expired_below, expire_below);
	if (acc_size != (int32) r->acc_size)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint of pipeline %d has accumulators of %d bytes, expected %u",
						r->pipeline_id, acc_size, r->acc_size),
				 errdetail("The checkpoint was written by a different build of windowagg.")));
	r->bytes += len;
	if (len >= 4 && memcmp(data, CKPT_MAGIC, 4) == 0)
		read_chunk(r, seq, data, end);
	else
		read_legacy_row(r, seq, data, end);
}

/*
 * The live records: the newest of each (key, slice) that has not expired,
 * and the newest of each (key, session window) that is no deletion.
 */
void
wa_ckpt_reader_finish(WaCkptReader *r, WaCheckpointLog *log)
{
	int64		kept = 0;

	if (r->n > 0)
		qsort(r->recs, r->n, sizeof(WaCkptRecord), compare_records);
	for (int64 i = 0; i < r->n; i++)
	{
		const WaCkptRecord *rec = &r->recs[i];

		/* sorted by (kind, key, slice, order): the newest ends its group */
		bool		newest = i + 1 == r->n || !same_slice(rec, &r->recs[i + 1]);
		bool		live = rec->is_sessions ?
			rec->n_sessions > 0 || rec->horizon != PG_INT64_MIN :
			rec->slice >= r->expired_below;

		if (newest && live)
			r->recs[kept++] = *rec;
	}
	log->records = r->recs;
	log->n = kept;
	log->bytes = r->bytes;
	log->last_seq = r->last_seq;
	log->expired_below = r->expired_below;
	log->needs_rewrite = r->legacy || kept < r->n;
}
