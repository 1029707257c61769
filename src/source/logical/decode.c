/*-------------------------------------------------------------------------
 *
 * decode.c
 *	  A pipeline's table of this server: its slot decoded in the worker.
 *
 * As pg_logical_slot_get_binary_changes() does, but for the worker's whole
 * life: the worker holds its slot and keeps one decoding context, and each
 * epoch continues reading WAL where the previous one stopped, up to what
 * was flushed when it began.  The slot's output plugin is windowagg's own
 * (plugin.c), which hands over each change's heap tuple: nothing is
 * serialized, and there is no walsender to send each change to (a send()
 * per row, which would cost several times what decoding does).
 *
 * Decoding runs inside the epoch's transaction.  Each decoded transaction
 * reaches the callbacks whole, when its commit record is read, replayed in
 * a subtransaction that decoding rolls back right after: the callbacks
 * only fill the engine and the epoch's buffers, which live outside it, and
 * the rollback releases every LWLock, so the worker lets go of its own
 * after each transaction (wa_logical_txn_end).  The catalog caches are
 * flushed before and after, since decoding fills them with historic
 * entries.
 *
 * src/source/logical/decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/logical/logical_internal.h"

#include "access/attmap.h"
#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/xlogutils.h"
#include "catalog/partition.h"
#include "miscadmin.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* The source the worker is decoding for, while it decodes; else NULL. */
WaLogicalSource *wa_decoding_source = NULL;

/* ---------- changes, from the output plugin ---------- */

/*
 * Is a decoded relation the source (or one of its partitions), and where
 * are its columns?  Forgotten on any relcache invalidation, which decoding
 * also sends when it replays a transaction that changed the catalog (an
 * ATTACH or DETACH PARTITION, an ALTER TABLE, say).
 */
typedef struct RelationMatch
{
	Oid			relid;			/* hash key */
	bool		ours;
	AttrMap    *map;			/* source column -> the relation's; NULL:
								 * same columns */
} RelationMatch;

static WaLogicalSource *invalidated_source = NULL;

static void
relations_invalidated(Datum arg, Oid relid)
{
	if (invalidated_source != NULL)
		invalidated_source->relations_stale = true;
}

static RelationMatch *
match_relation(WaLogicalSource *src, Relation relation)
{
	Oid			relid = RelationGetRelid(relation);
	RelationMatch *m;
	bool		found;

	if (src->relations_stale)
	{
		MemoryContextReset(src->relations_cxt);
		src->relations = NULL;
		src->relations_stale = false;
	}
	if (src->relations == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(RelationMatch);
		ctl.hcxt = src->relations_cxt;
		src->relations = hash_create("windowagg decoded relations", 16, &ctl,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	m = hash_search(src->relations, &relid, HASH_ENTER, &found);
	if (found)
		return m;
	m->ours = relid == src->local_relid;
	m->map = NULL;
	/* a partition of a partitioned source */
	if (!m->ours && relation->rd_rel->relispartition)
		m->ours = list_member_oid(get_partition_ancestors(relid), src->local_relid);

	/*
	 * Columns are matched by name: a partition may have its columns
	 * elsewhere, and the source itself, as decoded, may be laid out
	 * otherwise than when the worker started (a column dropped and added
	 * again, in the stream before or after the change).
	 */
	if (m->ours)
	{
		MemoryContext old = MemoryContextSwitchTo(src->relations_cxt);

		m->map = wa_build_attrmap_by_name_if_req(RelationGetDescr(relation),
											  src->base_slot->tts_tupleDescriptor);
		MemoryContextSwitchTo(old);
	}
	return m;
}

/*
 * Load a decoded heap tuple into base_slot.  Values stored out of line
 * come as pointers into decoding's memory, possibly compressed: they are
 * expanded into the row's memory, so that keys and inputs read them plainly.
 */
static void
load_heap_row(WaLogicalSource *src, Relation relation, const AttrMap *map,
			  HeapTuple tuple)
{
	TupleDesc	desc = RelationGetDescr(relation);
	TupleTableSlot *slot = src->base_slot;
	TupleDesc	base = slot->tts_tupleDescriptor;
	Datum	   *values = palloc(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc(sizeof(bool) * desc->natts);

	heap_deform_tuple(tuple, desc, values, nulls);
	ExecClearTuple(slot);
	for (int i = 0; i < base->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(base, i);
		int			j = map != NULL ? map->attnums[i] - 1 : i;

		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
		if (att->attisdropped || j < 0 || j >= desc->natts || nulls[j])
			continue;
		if (TupleDescAttr(desc, j)->atttypid != att->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of a decoded row has type %s, the pipeline reads %s",
							NameStr(att->attname),
							format_type_be(TupleDescAttr(desc, j)->atttypid),
							format_type_be(att->atttypid))));
		/*
		 * An update's unchanged out-of-line value still points into the
		 * TOAST table, which may no longer hold it: like pgoutput, treat it
		 * as unknown rather than read the table.
		 */
		if (att->attlen == -1 && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(values[j])))
			continue;
		slot->tts_values[i] = values[j];
		slot->tts_isnull[i] = false;
		if (att->attlen == -1 && VARATT_IS_EXTENDED(DatumGetPointer(values[j])))
			slot->tts_values[i] =
				PointerGetDatum(detoast_attr((struct varlena *) DatumGetPointer(values[j])));
	}
	ExecStoreVirtualTuple(slot);
}

void
wa_logical_decoded_begin(WaLogicalSource *src, XLogRecPtr commit_lsn)
{
	wa_logical_txn_begin(src, commit_lsn);
}

void
wa_logical_decoded_change(WaLogicalSource *src, Relation relation, char kind,
						  HeapTuple tuple)
{
	RelationMatch *m = match_relation(src, relation);
	MemoryContext old;

	if (!m->ours || src->skip_txn)
		return;
	ResetExprContext(src->econtext);
	old = MemoryContextSwitchTo(src->econtext->ecxt_per_tuple_memory);
	if (tuple != NULL)
		load_heap_row(src, relation, m->map, tuple);
	else
	{
		/* a delete from a table without a replica identity: no row */
		ExecClearTuple(src->base_slot);
		memset(src->base_slot->tts_isnull, true,
			   sizeof(bool) * src->base_slot->tts_tupleDescriptor->natts);
		ExecStoreVirtualTuple(src->base_slot);
	}
	MemoryContextSwitchTo(old);
	wa_logical_deliver(src, kind);
}

void
wa_logical_decoded_commit(WaLogicalSource *src, XLogRecPtr end_lsn)
{
	wa_logical_txn_end(src, end_lsn);
}

/* ---------- the decoding context ---------- */

void
wa_decode_start(WaLogicalSource *src, XLogRecPtr applied)
{
	if (src->relations_cxt == NULL)
		src->relations_cxt = AllocSetContextCreate(src->cxt, "windowagg decoded relations",
												   ALLOCSET_SMALL_SIZES);
	MemoryContextReset(src->relations_cxt);
	src->relations = NULL;
	src->relations_stale = false;
	if (invalidated_source == NULL)
		CacheRegisterRelcacheCallback(relations_invalidated, (Datum) 0);
	invalidated_source = src;
	CheckLogicalDecodingRequirements();
	wa_allow_own_output_plugin();	/* CreateDecodingContext loads it */
	wa_replication_slot_acquire(src->slot_name, true);
	if (XLogRecPtrIsInvalid(MyReplicationSlot->data.restart_lsn))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("replication slot \"%s\" of the pipeline can no longer be read",
						src->slot_name),
				 errdetail("The WAL it needed was removed (see max_slot_wal_keep_size)."),
				 errhint("Drop and re-create the pipeline.")));
	if (strcmp(NameStr(MyReplicationSlot->data.plugin), "windowagg") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("replication slot \"%s\" uses output plugin \"%s\", not \"windowagg\"",
						src->slot_name, NameStr(MyReplicationSlot->data.plugin))));

	/*
	 * An offset past the slot's confirmed position (the slot is saved to
	 * disk only at checkpoints) makes decoding skip what was applied.
	 */
	wa_decoding_source = src;
	PG_TRY();
	{
		src->decoding = CreateDecodingContext(applied, NIL, false,
											  XL_ROUTINE(.page_read = read_local_xlog_page,
														 .segment_open = wal_segment_open,
														 .segment_close = wal_segment_close),
											  NULL, NULL, NULL);
	}
	PG_FINALLY();
	{
		wa_decoding_source = NULL;
	}
	PG_END_TRY();
	XLogBeginRead(src->decoding->reader, MyReplicationSlot->data.restart_lsn);
	if (applied < MyReplicationSlot->data.confirmed_flush)
		src->applied_lsn = src->confirmed_lsn = MyReplicationSlot->data.confirmed_flush;
}

/*
 * Decode the WAL flushed when the epoch began (target_lsn), or until about
 * limit rows.  A decoded transaction reaches the callbacks whole, when its
 * commit record is read, so the reader stops between transactions only.
 */
void
wa_decode_read(WaLogicalSource *src, int limit)
{
	XLogReaderState *reader = src->decoding->reader;
	MemoryContext old = CurrentMemoryContext;

	if (reader->EndRecPtr >= src->target_lsn)
		return;					/* nothing new: leave the caches alone */
	/* catalog entries built for the worker's own statements are not historic */
	InvalidateSystemCaches();
	wa_decoding_source = src;
	PG_TRY();
	{
		while (reader->EndRecPtr < src->target_lsn && src->rows_read < limit)
		{
			char	   *errm = NULL;
			XLogRecord *record;

			/*
			 * The reader keeps what it allocates (large records, its record
			 * buffer) from one call to the next, so in decoding's own
			 * context; replaying a transaction leaves another one current.
			 */
			MemoryContextSwitchTo(src->decoding->context);
			record = XLogReadRecord(reader, &errm);

			if (errm != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("could not decode WAL for replication slot \"%s\": %s",
								src->slot_name, errm)));
			if (record != NULL)
				LogicalDecodingProcessRecord(src->decoding, reader);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		/* ... and those decoding built are for decoding only */
		InvalidateSystemCaches();
		wa_decoding_source = NULL;
		MemoryContextSwitchTo(old);
	}
	PG_END_TRY();
	/* everything that committed before here has been applied */
	if (reader->EndRecPtr > src->applied_lsn)
		src->applied_lsn = reader->EndRecPtr;
}

void
wa_decode_close(WaLogicalSource *src)
{
	/* a leaving process frees nothing, and after an error nothing more */
	if (src->decoding != NULL && !proc_exit_inprogress)
		FreeDecodingContext(src->decoding);
	src->decoding = NULL;
	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
}

