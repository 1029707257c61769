/*-------------------------------------------------------------------------
 *
 * checkpoint.h
 *	  A pipeline's slice state on disk (see checkpoint.c).
 *
 * src/checkpoint.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_CHECKPOINT_H
#define WINDOWAGG_CHECKPOINT_H

#include "pipeline.h"

typedef struct WaCheckpoint
{
	int32		pipeline_id;
	bool		int_key;
	uint32		acc_size;
	MemoryContext cxt;			/* holds the delta buffer */

	StringInfoData delta;		/* this epoch's changed slices */
	int64		delta_slices;
	int64		seq;			/* of the newest row in the log */
	int64		expired_below;	/* the log's newest expiry bound */
	int64		log_bytes;		/* record bytes in the log */
	int64		live_bytes;		/* estimate of the live state's bytes */
} WaCheckpoint;

extern void wa_ckpt_init(WaCheckpoint *c, int32 pipeline_id, bool int_key,
						 uint32 acc_size, MemoryContext cxt);
extern void wa_ckpt_add_slice(WaCheckpoint *c, const wa_key *key,
							  int64 slice, const void *acc);
extern void wa_ckpt_write(WaCheckpoint *c, int64 expire_below,
						  int64 live_bytes);
extern void wa_ckpt_reset(WaCheckpoint *c);

/* The live records of a pipeline's log, read for a restore. */
typedef struct WaCkptRecord WaCkptRecord;
typedef struct WaCheckpointLog
{
	WaCkptRecord *records;
	int64		n;
	int64		bytes;			/* of records in the log */
} WaCheckpointLog;

extern WaCheckpointLog *wa_ckpt_read(WaCheckpoint *c);
extern void wa_ckpt_restore(WaCheckpoint *c, wa_engine *engine,
							const WaCheckpointLog *log);

#endif							/* WINDOWAGG_CHECKPOINT_H */
