/*-------------------------------------------------------------------------
 *
 * wa_mem.h
 *	  The engine's view of memory: a caller-given allocator plus accounting.
 *
 * Every byte the engine holds goes through these wrappers, so that the
 * engine can report its state size (for stat views and the memory bound)
 * and tests can check that a flushed engine holds nothing.  Frees pass the
 * size back, which lets a shared-memory allocator skip a header.
 *
 * src/engine/wa_mem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_MEM_H
#define WA_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "wa_assert.h"
#include "wa_engine.h"

typedef struct wa_mem
{
	wa_allocator allocator;
	uint64_t	bytes;
	uint64_t	peak;
} wa_mem;

extern void wa_mem_init(wa_mem *mem, const wa_allocator *allocator);

/*
 * An allocator that allocates through mem, so that what it hands out is
 * counted in mem like the engine's own state (the engine gives it to the
 * planner).  mem must outlive every block it hands out.
 */
extern void wa_mem_allocator(wa_mem *mem, wa_allocator *allocator);

static inline void *
wa_mem_alloc(wa_mem *mem, size_t size)
{
	void	   *p = mem->allocator.alloc(mem->allocator.arg, size);

	mem->bytes += size;
	if (mem->bytes > mem->peak)
		mem->peak = mem->bytes;
	return p;
}

static inline void *
wa_mem_realloc(wa_mem *mem, void *ptr, size_t old_size, size_t new_size)
{
	void	   *p;

	/* the accounting never goes below zero: old_size is what was counted */
	WA_ASSERT(mem->bytes >= old_size);
	p = mem->allocator.realloc(mem->allocator.arg, ptr, old_size, new_size);
	mem->bytes += new_size;
	mem->bytes -= old_size;
	if (mem->bytes > mem->peak)
		mem->peak = mem->bytes;
	return p;
}

static inline void
wa_mem_free(wa_mem *mem, void *ptr, size_t size)
{
	if (ptr == NULL)
		return;
	WA_ASSERT(mem->bytes >= size);
	mem->allocator.free(mem->allocator.arg, ptr, size);
	mem->bytes -= size;
}

#endif							/* WA_MEM_H */
