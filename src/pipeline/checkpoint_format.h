/*-------------------------------------------------------------------------
 *
 * checkpoint_format.h
 *	  The bytes of a pipeline's checkpoint log (see checkpoint_format.c).
 *
 * Only the format: no catalog, no SPI, so that the fuzzer
 * (test/fuzz/fuzz_checkpoint.c) can feed it arbitrary rows.
 *
 * src/pipeline/checkpoint_format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_CHECKPOINT_FORMAT_H
#define WINDOWAGG_CHECKPOINT_FORMAT_H

#include "query/query.h"

/* Bytes of a chunk's header, and of a record's kind and length. */
#define WA_CKPT_HEADER_BYTES 8
#define WA_CKPT_RECORD_HEADER_BYTES (1 + sizeof(uint32))

/* ---------- writing ---------- */

/* Bytes of a slice record, header included. */
static inline uint32
wa_ckpt_record_bytes(uint32 key_len, uint32 acc_size)
{
	return WA_CKPT_RECORD_HEADER_BYTES + sizeof(uint32) + key_len +
		sizeof(int64) + acc_size;
}

/* signature: of the generic aggregates (wa_generic_signature), or NULL */
extern void wa_ckpt_start_chunk(StringInfo buf, const char *signature);
extern char *wa_ckpt_put_record(char *p, const char *key, uint32 key_len,
								int64 slice, uint32 acc_size);
/* states: the generic states (wa_generic_states_to_portable), or NULL */
extern void wa_ckpt_append_record(StringInfo buf, const char *key,
								  uint32 key_len, int64 slice,
								  const char *acc, uint32 acc_size,
								  const char *states, uint32 states_len);

/*
 * A sessions record: what a key holds in one session window (see
 * wa_engine_checkpoint_sessions).  Its sessions are written one by one
 * into a buffer with wa_ckpt_put_session (acc portable; states: the
 * generic states, portable, or NULL when the pipeline has none), then the
 * record with wa_ckpt_append_sessions.  n = 0 and horizon WA_TICK_MIN
 * deletes what earlier records said of (key, window).
 */
extern void wa_ckpt_put_session(StringInfo entries, int64 start, int64 end,
								int64 revision, bool has_row,
								const char *acc, uint32 acc_size,
								const char *states, uint32 states_len);
extern void wa_ckpt_append_sessions(StringInfo buf, const char *key,
									uint32 key_len, int32 window,
									int64 horizon, uint32 n,
									const char *entries, uint32 entries_len);
/* Bytes of a sessions record, header included. */
extern uint32 wa_ckpt_sessions_record_bytes(uint32 key_len, uint32 entries_len);

/* ---------- reading ---------- */

/* One record of the log (portable), pointing into the row that holds it. */
typedef struct WaCkptRecord
{
	bool		is_sessions;	/* a sessions record, not a slice's */
	const char *key;
	uint32		key_len;
	int64		slice;			/* sessions: the window (as in panes) */
	const char *acc;			/* sessions: the first session */
	const char *states;			/* generic states, or NULL */
	uint32		states_len;		/* sessions: the bytes of the sessions */
	int64		horizon;		/* sessions: the latest closed end */
	uint32		n_sessions;
	int64		order;			/* position in the log: later wins */
} WaCkptRecord;

/* One session of a sessions record, pointing into it. */
typedef struct WaCkptSession
{
	int64		start;
	int64		end;
	int64		revision;
	bool		has_row;
	const char *acc;			/* portable */
	const char *states;			/* generic states, or NULL */
	uint32		states_len;
} WaCkptSession;

/*
 * The session at p of a record the reader accepted (with_states: the
 * pipeline has generic aggregates); returns where the next one begins.
 */
extern const char *wa_ckpt_read_session(const char *p, uint32 acc_size,
										bool with_states, WaCkptSession *s);

/* The live records of a pipeline's log, read for a restore. */
typedef struct WaCheckpointLog
{
	WaCkptRecord *records;		/* sorted by (kind, key, slice), one per
								 * (kind, key, slice), no deletions */
	int64		n;
	int64		bytes;			/* in the log's rows */
	int64		last_seq;		/* the newest row's */
	int64		expired_below;	/* the newest expiry bound */
	bool		needs_rewrite;	/* format 1 rows or replaced records */
} WaCheckpointLog;

/* Rows of a log, read one after the other in seq order. */
typedef struct WaCkptReader
{
	int32		pipeline_id;	/* for messages */
	uint32		acc_size;
	const char *signature;		/* of the generic aggregates, or NULL */
	WaKeyPortable *keys;		/* converts format 1 keys */
	const wa_engine *engine;	/* converts format 1 accumulators; NULL:
								 * such rows are corrupt */
	WaCkptRecord *recs;
	int64		n;
	int64		capacity;
	bool		legacy;			/* a format 1 row was read */
	StringInfoData scratch;		/* a format 1 key, made portable */
	int64		bytes;
	int64		last_seq;
	int64		expired_below;
} WaCkptReader;

extern void wa_ckpt_reader_init(WaCkptReader *r, int32 pipeline_id,
								uint32 acc_size, const char *signature,
								WaKeyPortable *keys, const wa_engine *engine);
extern void wa_ckpt_reader_add_row(WaCkptReader *r, int64 seq,
								   int64 expire_below, int32 acc_size,
								   const char *data, uint32 len);
extern void wa_ckpt_reader_finish(WaCkptReader *r, WaCheckpointLog *log);

#endif							/* WINDOWAGG_CHECKPOINT_FORMAT_H */
