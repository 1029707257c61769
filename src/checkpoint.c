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
 * WaCkptRecord format (native byte order: a checkpoint is read back by the same
 * build on the same machine, or after pg_dump by the same architecture):
 *	  uint32 key length, key bytes, int64 slice, accumulator bytes.
 *
 * src/checkpoint.c
 *
 *-------------------------------------------------------------------------
 */
#include "checkpoint.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

/* The log is compacted once it holds this much more than the live state. */
#define COMPACT_FLOOR_BYTES (4 * 1024 * 1024)

void
wa_ckpt_init(WaCheckpoint *c, int32 pipeline_id, bool int_key,
			 uint32 acc_size, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	memset(c, 0, sizeof(*c));
	c->pipeline_id = pipeline_id;
	c->int_key = int_key;
	c->acc_size = acc_size;
	c->cxt = cxt;
	initStringInfo(&c->delta);
	MemoryContextSwitchTo(old);
}

/* ---------- writing ---------- */

static void
append_record(StringInfo buf, const uint8 *key, uint32 key_len, int64 slice,
			  const void *acc, uint32 acc_size)
{
	appendBinaryStringInfo(buf, (const char *) &key_len, sizeof(uint32));
	appendBinaryStringInfo(buf, (const char *) key, key_len);
	appendBinaryStringInfo(buf, (const char *) &slice, sizeof(int64));
	appendBinaryStringInfo(buf, (const char *) acc, acc_size);
}

void
wa_ckpt_add_slice(WaCheckpoint *c, const wa_key *key, int64 slice,
				  const void *acc)
{
	MemoryContext old = MemoryContextSwitchTo(c->cxt);

	if (c->int_key)
		append_record(&c->delta, (const uint8 *) &key->ival, sizeof(int64),
					  slice, acc, c->acc_size);
	else
		append_record(&c->delta, key->bytes, key->len, slice, acc, c->acc_size);
	c->delta_slices++;
	MemoryContextSwitchTo(old);
}

static bytea *
to_bytea(const char *data, int len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), data, len);
	return b;
}

static void
insert_row(WaCheckpoint *c, int64 seq, int64 expire_below, int64 n_slices,
		   bytea *data)
{
	Datum		values[6];
	Oid			types[6] = {INT4OID, INT8OID, INT8OID, INT8OID, INT4OID, BYTEAOID};

	values[0] = Int32GetDatum(c->pipeline_id);
	values[1] = Int64GetDatum(seq);
	values[2] = Int64GetDatum(expire_below);
	values[3] = Int64GetDatum(n_slices);
	values[4] = Int32GetDatum((int32) c->acc_size);
	values[5] = PointerGetDatum(data);
	wa_catalog_exec("INSERT INTO windowagg.checkpoints "
					"(pipeline, seq, expire_below, n_slices, acc_size, data) "
					"VALUES ($1, $2, $3, $4, $5, $6)",
					6, types, values, NULL);
}

/* ---------- reading and merging ---------- */

static void
checkpoint_truncated(const WaCheckpoint *c)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("checkpoint of pipeline %d is truncated", c->pipeline_id)));
}

/* One record of the log, pointing into the row that holds it. */
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

/*
 * Read the whole log of a pipeline (SPI connected, in a transaction):
 * the live records, sorted by (key, slice), one per (key, slice).
 * The row data stays in CurrentMemoryContext.
 */
static WaCkptRecord *
read_log(WaCheckpoint *c, int64 *n_out, int64 *bytes_out, int64 *last_seq)
{
	Datum		arg = Int32GetDatum(c->pipeline_id);
	Oid			argtype = INT4OID;
	MemoryContext caller = CurrentMemoryContext;
	WaCkptRecord	   *recs = NULL;
	int64		n = 0;
	int64		capacity = 0;
	int64		bytes = 0;
	int64		expire_below = PG_INT64_MIN;
	int64		kept = 0;

	*last_seq = 0;
	wa_catalog_exec("SELECT seq, expire_below, acc_size, data FROM windowagg.checkpoints "
					"WHERE pipeline OPERATOR(pg_catalog.=) $1 ORDER BY seq",
					1, &argtype, &arg, NULL);
	MemoryContextSwitchTo(caller);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int32		acc_size;
		bytea	   *data;
		const char *p;
		const char *end;

		*last_seq = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		expire_below = Max(expire_below,
						   DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull)));
		acc_size = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		if (acc_size != (int32) c->acc_size)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("checkpoint of pipeline %d has accumulators of %d bytes, expected %u",
							c->pipeline_id, acc_size, c->acc_size),
					 errdetail("The checkpoint was written by a different build of windowagg.")));
		data = DatumGetByteaPCopy(SPI_getbinval(tup, desc, 4, &isnull));
		bytes += VARSIZE_ANY_EXHDR(data);
		p = VARDATA_ANY(data);
		end = p + VARSIZE_ANY_EXHDR(data);
		while (p < end)
		{
			WaCkptRecord	   *r;

			if (n == capacity)
			{
				capacity = Max(1024, capacity * 2);
				recs = recs == NULL ? palloc_extended(sizeof(WaCkptRecord) * capacity, MCXT_ALLOC_HUGE) :
					repalloc_huge(recs, sizeof(WaCkptRecord) * capacity);
			}
			r = &recs[n];
			/* every length is checked before it is read past */
			if (end - p < (ptrdiff_t) sizeof(uint32))
				checkpoint_truncated(c);
			memcpy(&r->key_len, p, sizeof(uint32));
			p += sizeof(uint32);
			if ((uint64) (end - p) < (uint64) r->key_len + sizeof(int64) + c->acc_size)
				checkpoint_truncated(c);
			r->key = p;
			p += r->key_len;
			memcpy(&r->slice, p, sizeof(int64));
			p += sizeof(int64);
			r->acc = p;
			p += c->acc_size;
			r->order = n++;
		}
	}

	/* the newest record of each (key, slice) that has not expired */
	if (n > 0)
		qsort(recs, n, sizeof(WaCkptRecord), compare_records);
	for (int64 i = 0; i < n; i++)
	{
		/* sorted by (key, slice, order): the newest ends its group */
		bool		newest = i + 1 == n || !same_slice(&recs[i], &recs[i + 1]);

		if (newest && recs[i].slice >= expire_below)
			recs[kept++] = recs[i];
	}
	*n_out = kept;
	*bytes_out = bytes;
	c->expired_below = expire_below;
	return recs;
}

static void
compact(WaCheckpoint *c, int64 seq)
{
	Datum		arg = Int32GetDatum(c->pipeline_id);
	Oid			argtype = INT4OID;
	int64		n;
	int64		bytes;
	int64		last_seq;
	WaCkptRecord	   *recs = read_log(c, &n, &bytes, &last_seq);
	StringInfoData base;

	initStringInfo(&base);
	for (int64 i = 0; i < n; i++)
		append_record(&base, (const uint8 *) recs[i].key, recs[i].key_len,
					  recs[i].slice, recs[i].acc, c->acc_size);
	wa_catalog_exec("DELETE FROM windowagg.checkpoints WHERE pipeline OPERATOR(pg_catalog.=) $1",
					1, &argtype, &arg, NULL);
	insert_row(c, seq, c->expired_below, n, to_bytea(base.data, base.len));
	c->log_bytes = base.len;
	c->live_bytes = base.len;
}

/*
 * Write the epoch's delta (SPI connected, in the epoch's transaction), and
 * compact the log if it has grown too long.  live_bytes estimates the
 * live state's size in the log's format.
 */
void
wa_ckpt_write(WaCheckpoint *c, int64 expire_below, int64 live_bytes)
{
	if (c->delta_slices == 0 && expire_below <= c->expired_below)
		return;
	c->seq++;
	insert_row(c, c->seq, expire_below, c->delta_slices,
			   to_bytea(c->delta.data, c->delta.len));
	c->log_bytes += c->delta.len;
	c->live_bytes = live_bytes;
	if (c->log_bytes > Max(COMPACT_FLOOR_BYTES, 2 * live_bytes))
	{
		c->seq++;
		compact(c, c->seq);
	}
	c->expired_below = Max(c->expired_below, expire_below);
}

/* After the epoch committed or rolled back: start the next delta. */
void
wa_ckpt_reset(WaCheckpoint *c)
{
	resetStringInfo(&c->delta);
	c->delta_slices = 0;
}

/*
 * Read the whole log (SPI connected, in a transaction), sorted and merged,
 * for wa_ckpt_restore; without the state lock: the read and the sort take
 * a while, and need no engine.
 */
WaCheckpointLog *
wa_ckpt_read(WaCheckpoint *c)
{
	WaCheckpointLog *log = palloc(sizeof(WaCheckpointLog));

	log->records = read_log(c, &log->n, &log->bytes, &c->seq);
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

	for (int64 i = 0; i < log->n; i++)
	{
		wa_key		key;

		/* the caller holds the state lock: a big restore stays cancellable */
		if ((i & 1023) == 0)
			wa_check_for_interrupts_locked();
		memset(&key, 0, sizeof(key));
		if (c->int_key)
			memcpy(&key.ival, recs[i].key, sizeof(int64));
		else
		{
			key.bytes = (const uint8_t *) recs[i].key;
			key.len = recs[i].key_len;
		}
		wa_engine_restore_slice(engine, &key, recs[i].slice, recs[i].acc,
								c->acc_size);
	}
	c->log_bytes = log->bytes;
	wa_ckpt_reset(c);
}
