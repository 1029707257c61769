/*-------------------------------------------------------------------------
 *
 * wa_heap.c
 *	  Indexed binary min-heap of deadlines.
 *
 * src/engine/wa_heap.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_heap.h"

#include <stddef.h>

void
wa_heap_init(wa_heap *heap)
{
	heap->items = NULL;
	heap->count = 0;
	heap->capacity = 0;
}

void
wa_heap_destroy(wa_heap *heap, wa_mem *mem)
{
	wa_mem_free(mem, heap->items, heap->capacity * sizeof(wa_heap_entry));
	wa_heap_init(heap);
}

static inline void
set_at(wa_heap *heap, int64_t i, wa_heap_entry entry)
{
	heap->items[i] = entry;
	entry.node->pos = i;
}

static void
sift_up(wa_heap *heap, int64_t i)
{
	wa_heap_entry entry = heap->items[i];

	while (i > 0)
	{
		int64_t		parent = (i - 1) / 2;

		if (heap->items[parent].deadline <= entry.deadline)
			break;
		set_at(heap, i, heap->items[parent]);
		i = parent;
	}
	set_at(heap, i, entry);
}

static void
sift_down(wa_heap *heap, int64_t i)
{
	wa_heap_entry entry = heap->items[i];

	for (;;)
	{
		int64_t		child = 2 * i + 1;

		if (child >= heap->count)
			break;
		if (child + 1 < heap->count &&
			heap->items[child + 1].deadline < heap->items[child].deadline)
			child++;
		if (entry.deadline <= heap->items[child].deadline)
			break;
		set_at(heap, i, heap->items[child]);
		i = child;
	}
	set_at(heap, i, entry);
}

void
wa_heap_push(wa_heap *heap, wa_mem *mem, wa_heap_node *node)
{
	wa_heap_entry entry;

	if (heap->count == heap->capacity)
	{
		int64_t		capacity = heap->capacity ? heap->capacity * 2 : 64;

		heap->items = heap->items == NULL ?
			wa_mem_alloc(mem, capacity * sizeof(wa_heap_entry)) :
			wa_mem_realloc(mem, heap->items,
						   heap->capacity * sizeof(wa_heap_entry),
						   capacity * sizeof(wa_heap_entry));
		heap->capacity = capacity;
	}
	entry.deadline = node->deadline;
	entry.node = node;
	set_at(heap, heap->count++, entry);
	sift_up(heap, node->pos);
}

void
wa_heap_remove(wa_heap *heap, wa_heap_node *node)
{
	int64_t		i = node->pos;
	wa_heap_entry last = heap->items[--heap->count];

	node->pos = -1;
	if (last.node == node)
		return;
	set_at(heap, i, last);
	wa_heap_update(heap, last.node);
}

void
wa_heap_update(wa_heap *heap, wa_heap_node *node)
{
	int64_t		i = node->pos;

	heap->items[i].deadline = node->deadline;
	if (i > 0 && heap->items[(i - 1) / 2].deadline > node->deadline)
		sift_up(heap, i);
	else
		sift_down(heap, i);
}
