/*-------------------------------------------------------------------------
 *
 * checkpoint.h
 *	  A pipeline's slice state on disk (see checkpoint.c).
 *
 * src/pipeline/checkpoint.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_CHECKPOINT_H
#define WINDOWAGG_CHECKPOINT_H

#include "pipeline/checkpoint_format.h"
#include "pipeline/pipeline.h"

/* A full chunk of an epoch's delta, waiting for the epoch's end. */
typedef struct WaCkptChunk
{
	bytea	   *data;
	int64		n_slices;
} WaCkptChunk;

/*
 * Records written, by kind, and their bytes: the means estimate what the
 * live state takes in the log (the compaction rule, checkpoint.c).
 */
typedef struct WaCkptSizes
{
	int64		slices;			/* slice records */
	int64		slice_bytes;
	int64		session_keys;	/* sessions records */
	int64		session_key_bytes;	/* their bytes but their sessions' */
	int64		sessions;		/* sessions in them */
	int64		session_bytes;
} WaCkptSizes;

typedef struct WaCheckpoint
{
	int32		pipeline_id;
	uint32		acc_size;
	MemoryContext cxt;			/* holds the delta */
	WaKeyPortable keys;			/* keys to and from their portable form */
	StringInfoData key_buf;		/* one key's portable form */
	WaGeneric  *generic;		/* generic aggregates' states, or NULL */
	char	   *signature;		/* of the generic aggregates, or NULL */
	StringInfoData states_buf;	/* one accumulator's generic states */
	char	   *acc_buf;		/* one accumulator's portable image */
	StringInfoData sessions_buf;	/* one sessions record's sessions */

	List	   *full_chunks;	/* this epoch's full chunks (WaCkptChunk) */
	StringInfoData delta;		/* the chunk being filled */
	int64		chunk_slices;	/* records in it */
	int64		delta_slices;	/* this epoch's changed slices */
	int64		delta_sessions; /* and its sessions records */
	int64		seq;			/* of the newest row in the log */
	int64		expired_below;	/* the log's newest expiry bound */
	int64		log_bytes;		/* bytes in the log's rows */
	WaCkptSizes written;		/* since the last compaction or restore */
	WaCkptSizes delta_sizes;	/* of this epoch's delta */
} WaCheckpoint;

/* generic: the worker's generic aggregates of q (NULL when it has none) */
extern void wa_ckpt_init(WaCheckpoint *c, int32 pipeline_id,
						 const WaKeyCodec *codec, uint32 acc_size,
						 const WaAggQuery *q, WaGeneric *generic,
						 MemoryContext cxt);
extern void wa_ckpt_add_slice(WaCheckpoint *c, const wa_engine *engine,
							  const wa_key *key, int64 slice,
							  const void *acc);
/* What a key holds in a session window (wa_save_sessions_fn's arguments) */
extern void wa_ckpt_add_sessions(WaCheckpoint *c, const wa_engine *engine,
								 const wa_key *key, int window,
								 wa_tick horizon, int n,
								 const wa_session_image *sessions);
/* live_*: what the engine holds (wa_stats) */
extern void wa_ckpt_write(WaCheckpoint *c, int64 expire_below,
						  int64 live_slices, int64 live_session_keys,
						  int64 live_sessions);
extern void wa_ckpt_reset(WaCheckpoint *c);

extern WaCheckpointLog *wa_ckpt_read(WaCheckpoint *c, const wa_engine *engine);
extern void wa_ckpt_restore(WaCheckpoint *c, wa_engine *engine,
							const WaCheckpointLog *log);
extern bool wa_ckpt_rewrite(WaCheckpoint *c, const WaCheckpointLog *log);

#endif							/* WINDOWAGG_CHECKPOINT_H */
