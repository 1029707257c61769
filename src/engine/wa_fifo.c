/*-------------------------------------------------------------------------
 *
 * wa_fifo.c
 *	  Two-stack FIFO of partial aggregates.
 *
 * src/engine/wa_fifo.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_fifo.h"

#include <string.h>

static inline char *
slot(const wa_fifo *fifo, char *ring, uint64_t pos)
{
	return ring + (size_t) (pos & (fifo->capacity - 1)) * fifo->elem_size;
}

void
wa_fifo_init(wa_fifo *fifo, wa_mem *mem, uint32_t elem_size,
			 wa_fifo_combine_fn combine, wa_fifo_identity_fn identity,
			 void *arg)
{
	memset(fifo, 0, sizeof(*fifo));
	fifo->elem_size = elem_size;
	fifo->combine = combine;
	fifo->identity = identity;
	fifo->arg = arg;
	fifo->mem = mem;
	fifo->back = wa_mem_alloc(mem, elem_size);
	identity(fifo->back, arg);
}

void
wa_fifo_free(wa_fifo *fifo)
{
	size_t		ring = (size_t) fifo->capacity * fifo->elem_size;

	wa_mem_free(fifo->mem, fifo->elems, ring);
	wa_mem_free(fifo->mem, fifo->suffix, ring);
	wa_mem_free(fifo->mem, fifo->back, fifo->elem_size);
	fifo->elems = fifo->suffix = fifo->back = NULL;
	fifo->capacity = 0;
}

/* Double the rings, keeping every position's contents. */
static void
grow(wa_fifo *fifo)
{
	uint64_t	capacity = fifo->capacity ? fifo->capacity * 2 : 16;
	size_t		ring = (size_t) capacity * fifo->elem_size;
	char	   *elems = wa_mem_alloc(fifo->mem, ring);
	char	   *suffix = wa_mem_alloc(fifo->mem, ring);
	wa_fifo		bigger = *fifo;

	bigger.capacity = capacity;
	for (uint64_t pos = fifo->head; pos < fifo->tail; pos++)
	{
		memcpy(slot(&bigger, elems, pos), slot(fifo, fifo->elems, pos),
			   fifo->elem_size);
		if (pos < fifo->mid)
			memcpy(slot(&bigger, suffix, pos), slot(fifo, fifo->suffix, pos),
				   fifo->elem_size);
	}
	wa_mem_free(fifo->mem, fifo->elems, (size_t) fifo->capacity * fifo->elem_size);
	wa_mem_free(fifo->mem, fifo->suffix, (size_t) fifo->capacity * fifo->elem_size);
	fifo->elems = elems;
	fifo->suffix = suffix;
	fifo->capacity = capacity;
}

void
wa_fifo_push(wa_fifo *fifo, const void *elem)
{
	if (fifo->tail - fifo->head == fifo->capacity)
		grow(fifo);
	memcpy(slot(fifo, fifo->elems, fifo->tail), elem, fifo->elem_size);
	fifo->combine(fifo->back, elem, fifo->arg);
	fifo->tail++;
}

const void *
wa_fifo_oldest(const wa_fifo *fifo)
{
	if (fifo->head == fifo->tail)
		return NULL;
	return slot(fifo, fifo->elems, fifo->head);
}

/* Move the back into the front: suffix aggregates, newest first. */
static void
flip(wa_fifo *fifo)
{
	const char *later = NULL;

	for (uint64_t pos = fifo->tail; pos-- > fifo->head;)
	{
		char	   *s = slot(fifo, fifo->suffix, pos);

		memcpy(s, slot(fifo, fifo->elems, pos), fifo->elem_size);
		if (later != NULL)
			fifo->combine(s, later, fifo->arg);
		later = s;
	}
	fifo->mid = fifo->tail;
	fifo->identity(fifo->back, fifo->arg);
}

void
wa_fifo_pop(wa_fifo *fifo)
{
	if (fifo->head == fifo->mid)
		flip(fifo);
	fifo->head++;
	if (fifo->head == fifo->tail)
	{
		/* empty: restart positions so they never wrap in practice */
		fifo->head = fifo->mid = fifo->tail = 0;
		fifo->identity(fifo->back, fifo->arg);
	}
}

void
wa_fifo_query(const wa_fifo *fifo, void *out)
{
	if (fifo->head < fifo->mid)
		memcpy(out, slot(fifo, fifo->suffix, fifo->head), fifo->elem_size);
	else
		fifo->identity(out, fifo->arg);
	fifo->combine(out, fifo->back, fifo->arg);
}
