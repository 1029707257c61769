/*-------------------------------------------------------------------------
 *
 * wa_allocator.h
 *	  Where the engine and its planner get memory from.
 *
 * Every byte the engine (wa_engine.h) and the coverage planner
 * (wa_planner.h) hold comes from a caller-given allocator: inside
 * PostgreSQL one over a memory context or the shared pool
 * (src/query/engine_alloc.c), so that an ERROR releases it; in tests, one
 * that counts.  Frees and reallocs pass the size back, which lets a
 * shared-memory allocator skip a header.
 *
 * alloc and realloc either return memory or do not return (they raise an
 * error or abort): the engine never checks for NULL.  The planner does,
 * and fails with "out of memory", giving back what it holds; an allocator
 * that does return NULL (a test's) must then leave the block of a failed
 * realloc as it was, as the C library does.  realloc is never called with
 * a NULL pointer.
 *
 * A NULL allocator where one is asked for means the C library's (wa_mem.c),
 * which aborts when memory runs out: for standalone tools and tests only.
 *
 * src/engine/wa_allocator.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_ALLOCATOR_H
#define WA_ALLOCATOR_H

#include <stddef.h>

/* All three are required. */
typedef struct wa_allocator
{
	void	   *(*alloc) (void *arg, size_t size);
	void	   *(*realloc) (void *arg, void *ptr, size_t old_size,
							size_t new_size);
	void		(*free) (void *arg, void *ptr, size_t size);
	void	   *arg;
} wa_allocator;

/* The C library's, aborting when memory runs out (defined in wa_mem.c) */
extern const wa_allocator wa_libc_allocator;

#endif							/* WA_ALLOCATOR_H */
