/*-------------------------------------------------------------------------
 *
 * engine_alloc.c
 *	  An engine allocator over a PostgreSQL memory context.
 *
 * The engine's state then belongs to that context: an ERROR anywhere
 * releases it with the context, and the engine never sees a NULL (palloc
 * raises "out of memory" instead).  Slice arrays of busy keys can exceed
 * 1 GB in long windows, hence the huge variants.
 *
 * src/query/engine_alloc.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

static void *
ctx_alloc(void *arg, size_t size)
{
	return MemoryContextAllocHuge((MemoryContext) arg, size);
}

static void *
ctx_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	(void) arg;
	(void) old_size;
	return repalloc_huge(ptr, new_size);
}

static void
ctx_free(void *arg, void *ptr, size_t size)
{
	(void) arg;
	(void) size;
	pfree(ptr);
}

void
wa_engine_allocator_init(wa_allocator *allocator, MemoryContext context)
{
	allocator->alloc = ctx_alloc;
	allocator->realloc = ctx_realloc;
	allocator->free = ctx_free;
	allocator->arg = context;
}
