/*-------------------------------------------------------------------------
 *
 * source.c
 *	  Choosing a pipeline's source: the one place that asks which kind it
 *	  is (see source.h).
 *
 * src/source/source.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/source_internal.h"

WaSource *
wa_source_open(const WaSourceDef *def, const WaAggQuery *q,
			   const WaSourceConsumer *consumer, MemoryContext cxt,
			   MemoryContext epoch_cxt)
{
	WaSource   *src = MemoryContextAllocZero(cxt, sizeof(WaSource));

	src->routine = def->logical ? &wa_logical_routine : &wa_table_routine;
	src->def = def;
	src->query = q;
	src->cxt = cxt;
	src->epoch_cxt = epoch_cxt;
	src->consumer = *consumer;
	src->routine->open(src);
	wa_source_check(src, q);
	return src;
}
