/*-------------------------------------------------------------------------
 *
 * wa_heap.h
 *	  Indexed binary min-heap of deadlines.
 *
 * Items are caller structs that embed a wa_heap_node (deadline and current
 * heap position), so a deadline can be moved earlier or later in O(log n)
 * without searching, and an item can be removed from the middle.  The
 * engine uses one heap of keys ordered by their next window end or slice
 * expiry, and one of fired windows ordered by the end of their lateness.
 *
 * src/engine/wa_heap.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_HEAP_H
#define WA_HEAP_H

#include <stdint.h>

#include "wa_mem.h"
#include "wa_time.h"

typedef struct wa_heap_node
{
	wa_tick		deadline;
	int64_t		pos;			/* index in the heap, -1 when absent */
} wa_heap_node;

/*
 * A heap entry holds a copy of its node's deadline, so that sifting
 * compares entries of one array instead of following a pointer per
 * comparison to nodes spread over the caller's memory.
 */
typedef struct wa_heap_entry
{
	wa_tick		deadline;
	wa_heap_node *node;
} wa_heap_entry;

typedef struct wa_heap
{
	wa_heap_entry *items;
	int64_t		count;
	int64_t		capacity;
} wa_heap;

extern void wa_heap_init(wa_heap *heap);
extern void wa_heap_destroy(wa_heap *heap, wa_mem *mem);
extern void wa_heap_push(wa_heap *heap, wa_mem *mem, wa_heap_node *node);
extern void wa_heap_remove(wa_heap *heap, wa_heap_node *node);
/* Re-establish order after node->deadline changed. */
extern void wa_heap_update(wa_heap *heap, wa_heap_node *node);

static inline wa_heap_node *
wa_heap_top(const wa_heap *heap)
{
	return heap->count > 0 ? heap->items[0].node : NULL;
}

#endif							/* WA_HEAP_H */
