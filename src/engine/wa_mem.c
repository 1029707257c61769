/*-------------------------------------------------------------------------
 *
 * wa_mem.c
 *	  Default allocator (the C library) for engines and plans made without
 *	  one, and the engine's own allocator as a wa_allocator.
 *
 * The engine aborts on allocation failure only through the allocator: the
 * PostgreSQL allocator raises an ERROR, and this default one aborts, since
 * a half-updated slice store cannot be trusted anyway.
 *
 * src/engine/wa_mem.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_mem.h"

#include <stdio.h>
#include <stdlib.h>

static void *
libc_alloc(void *arg, size_t size)
{
	void	   *p = malloc(size);

	(void) arg;
	if (p == NULL)
	{
		fprintf(stderr, "windowagg engine: out of memory (%zu bytes)\n", size);
		abort();
	}
	return p;
}

static void *
libc_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	void	   *p = realloc(ptr, new_size);

	(void) arg;
	(void) old_size;
	if (p == NULL)
	{
		fprintf(stderr, "windowagg engine: out of memory (%zu bytes)\n",
				new_size);
		abort();
	}
	return p;
}

static void
libc_free(void *arg, void *ptr, size_t size)
{
	(void) arg;
	(void) size;
	free(ptr);
}

const wa_allocator wa_libc_allocator = {
	libc_alloc, libc_realloc, libc_free, NULL
};

void
wa_mem_init(wa_mem *mem, const wa_allocator *allocator)
{
	mem->allocator = allocator ? *allocator : wa_libc_allocator;
	mem->bytes = 0;
	mem->peak = 0;
}

/* The allocator wa_mem_allocator hands out: mem's own, counted in mem */
static void *
counted_alloc(void *arg, size_t size)
{
	return wa_mem_alloc(arg, size);
}

static void *
counted_realloc(void *arg, void *ptr, size_t old_size, size_t new_size)
{
	return wa_mem_realloc(arg, ptr, old_size, new_size);
}

static void
counted_free(void *arg, void *ptr, size_t size)
{
	wa_mem_free(arg, ptr, size);
}

void
wa_mem_allocator(wa_mem *mem, wa_allocator *allocator)
{
	allocator->alloc = counted_alloc;
	allocator->realloc = counted_realloc;
	allocator->free = counted_free;
	allocator->arg = mem;
}
