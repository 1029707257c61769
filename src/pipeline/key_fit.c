/*-------------------------------------------------------------------------
 *
 * key_fit.c
 *	  Whether a grouping key fits the result table's primary key index.
 *
 * The result table's index holds the keys and the two window bounds, and
 * btree refuses an index tuple larger than a third of a page (2704 bytes
 * in 8 kB pages).  A key too large for it would make every epoch that
 * writes its panes fail, so the worker tests each key before the row
 * touches any state, and sends a row whose key does not fit to the dead
 * letters.  The size is the one index_form_tuple would give for the value
 * the worker writes, which it decodes from its key image whole (fetched
 * and decompressed, however the source stored it): large values compressed
 * as the index compresses them, by the storage and compression method its
 * columns share with the result table's.
 *
 * src/pipeline/key_fit.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/sink.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "access/nbtree.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

/*
 * btree's largest item: BTMaxItemSize, whose definition changed between
 * major versions (2704 bytes for 8 kB pages in all of them).
 */
#define WA_BTREE_MAX_ITEM \
	MAXALIGN_DOWN((BLCKSZ - \
				   MAXALIGN(SizeOfPageHeaderData + 3 * sizeof(ItemIdData) + \
							3 * sizeof(ItemPointerData)) - \
				   MAXALIGN(sizeof(BTPageOpaqueData))) / 3)

/*
 * No compression shrinks a value by more than about 255 times (lz4; pglz
 * less), so a value beyond this cannot fit whatever it holds, and is not
 * fetched or compressed to find that out.
 */
#define WA_HOPELESS_VALUE (WA_BTREE_MAX_ITEM * 300)

int
wa_btree_max_item(void)
{
	return (int) WA_BTREE_MAX_ITEM;
}

/*
 * The result table's primary key index holds the keys, then window_start
 * and window_end (the shape the worker checks): its own columns say how
 * it stores and compresses them (ALTER TABLE ... SET STORAGE and SET
 * COMPRESSION change the index's columns with the table's).  Without the
 * index, the worker's upserts fail anyway; its first columns are read.
 */
void
wa_key_fit_init(WaKeyFit *fit, const WaAggQuery *q, Oid window_type,
				Oid result_table)
{
	int			natts = q->n_keys + 2;
	Relation	rel = table_open(result_table, AccessShareLock);
	Oid			pk = wa_primary_key_index(rel);
	Relation	index = OidIsValid(pk) ? index_open(pk, AccessShareLock) : NULL;
	TupleDesc	stored = RelationGetDescr(index != NULL ? index : rel);

	fit->n_keys = q->n_keys;
	fit->check = !q->int_key;
	fit->desc = CreateTemplateTupleDesc(natts);
	for (int i = 0; i < q->n_keys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(fit->desc, i);

		TupleDescInitEntry(fit->desc, i + 1, NULL, q->keys[i].typid,
						   q->keys[i].typmod, 0);
		if (i < stored->natts && !TupleDescAttr(stored, i)->attisdropped &&
			TupleDescAttr(stored, i)->atttypid == att->atttypid)
		{
			att->attstorage = TupleDescAttr(stored, i)->attstorage;
			att->attcompression = TupleDescAttr(stored, i)->attcompression;
		}
	}
	if (index != NULL)
		index_close(index, AccessShareLock);
	table_close(rel, AccessShareLock);
	fit->cxt = AllocSetContextCreate(CurrentMemoryContext, "windowagg key fit",
									 ALLOCSET_SMALL_SIZES);
	TupleDescInitEntry(fit->desc, natts - 1, NULL, window_type, -1, 0);
	TupleDescInitEntry(fit->desc, natts, NULL, window_type, -1, 0);
	fit->values = palloc0(sizeof(Datum) * natts);
	fit->isnull = palloc0(sizeof(bool) * natts);

	/*
	 * Keys whose stored sizes add up to at most this fit whatever the
	 * alignment, headers and null bitmap: the header with a bitmap, for
	 * each column its padding and a varlena header, the window bounds, and
	 * the padding at the end.
	 */
	fit->small_enough = WA_BTREE_MAX_ITEM -
		MAXALIGN(sizeof(IndexTupleData) + sizeof(IndexAttributeBitMapData)) -
		natts * (MAXIMUM_ALIGNOF + VARHDRSZ) - 2 * sizeof(int64) -
		MAXIMUM_ALIGNOF;
}

/*
 * A varlena value as index_form_tuple would store the worker's copy of it:
 * whole, then compressed if large.  *hopeless when it is too large to fit
 * whatever its compression (it is then neither fetched nor compressed).
 * Allocates in the current memory context.
 */
static Datum
value_in_index(Form_pg_attribute att, Datum value, bool *hopeless)
{
	struct varlena *v;

	*hopeless = toast_raw_datum_size(value) > WA_HOPELESS_VALUE;
	if (*hopeless)
		return value;
	v = detoast_attr((struct varlena *) DatumGetPointer(value));
	if (VARSIZE_ANY(v) > TOAST_INDEX_TARGET &&
		(att->attstorage == TYPSTORAGE_EXTENDED ||
		 att->attstorage == TYPSTORAGE_MAIN))
	{
		/* an unset method is the inserting session's default, the worker's */
		Datum		compressed = toast_compress_datum(PointerGetDatum(v),
													  att->attcompression);

		if (DatumGetPointer(compressed) != NULL)
			return compressed;
	}
	return PointerGetDatum(v);
}

bool
wa_key_fits(WaKeyFit *fit, const Datum *values, const bool *isnull)
{
	Size		plain = 0;
	bool		hasnull = false;
	bool		hopeless = false;
	Size		size;
	MemoryContext old;

	if (!fit->check)
		return true;
	/* most keys are far from the limit: their stored sizes say so */
	for (int i = 0; i < fit->n_keys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(fit->desc, i);

		if (isnull[i])
			continue;
		if (att->attlen > 0)
			plain += att->attlen;
		else if (att->attlen == -1)
			plain += toast_raw_datum_size(values[i]);	/* whole, as written */
		else
			plain += strlen(DatumGetCString(values[i])) + 1;
	}
	if (plain <= fit->small_enough)
		return true;

	/* the copies made to measure go at the next call */
	MemoryContextReset(fit->cxt);
	old = MemoryContextSwitchTo(fit->cxt);
	for (int i = 0; i < fit->n_keys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(fit->desc, i);

		fit->isnull[i] = isnull[i];
		hasnull |= isnull[i];
		fit->values[i] = isnull[i] || att->attlen != -1 ? values[i] :
			value_in_index(att, values[i], &hopeless);
		if (hopeless)
			break;
	}
	/* the window bounds are never NULL */
	size = hopeless ? WA_HOPELESS_VALUE :
		IndexInfoFindDataOffset(hasnull ? INDEX_NULL_MASK : 0) +
		heap_compute_data_size(fit->desc, fit->values, fit->isnull);
	MemoryContextSwitchTo(old);
	return MAXALIGN(size) <= WA_BTREE_MAX_ITEM;
}
