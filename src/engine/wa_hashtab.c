/*-------------------------------------------------------------------------
 *
 * wa_hashtab.c
 *	  Open-addressing pointer hash table with backward-shift deletion.
 *
 * The load factor stays at most 1/2: probes stay short even with many
 * keys, and a power-of-two capacity turns the modulo into a mask.
 *
 * src/engine/wa_hashtab.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_hashtab.h"

#include <string.h>

#define INITIAL_CAPACITY 16

static void
alloc_slots(wa_hashtab *tab, wa_mem *mem, uint64_t capacity)
{
	size_t		size = capacity * sizeof(wa_hashtab_slot);

	tab->slots = wa_mem_alloc(mem, size);
	memset(tab->slots, 0, size);
	tab->mask = capacity - 1;
}

void
wa_hashtab_init(wa_hashtab *tab, wa_mem *mem)
{
	tab->count = 0;
	alloc_slots(tab, mem, INITIAL_CAPACITY);
}

void
wa_hashtab_destroy(wa_hashtab *tab, wa_mem *mem)
{
	wa_mem_free(mem, tab->slots, (tab->mask + 1) * sizeof(wa_hashtab_slot));
	tab->slots = NULL;
	tab->count = 0;
}

static void
place(wa_hashtab *tab, uint64_t hash, void *ptr)
{
	uint64_t	i = hash & tab->mask;

	while (tab->slots[i].ptr != NULL)
		i = (i + 1) & tab->mask;
	tab->slots[i].hash = hash;
	tab->slots[i].ptr = ptr;
}

void
wa_hashtab_insert(wa_hashtab *tab, wa_mem *mem, uint64_t hash, void *ptr)
{
	if ((tab->count + 1) * 2 > tab->mask + 1)
	{
		wa_hashtab_slot *old = tab->slots;
		uint64_t	old_capacity = tab->mask + 1;

		alloc_slots(tab, mem, old_capacity * 2);
		for (uint64_t i = 0; i < old_capacity; i++)
			if (old[i].ptr != NULL)
				place(tab, old[i].hash, old[i].ptr);
		wa_mem_free(mem, old, old_capacity * sizeof(wa_hashtab_slot));
	}
	place(tab, hash, ptr);
	tab->count++;
}

void
wa_hashtab_remove(wa_hashtab *tab, uint64_t hash, void *ptr)
{
	uint64_t	i = hash & tab->mask;

	while (tab->slots[i].ptr != ptr)
		i = (i + 1) & tab->mask;

	/*
	 * Backward shift: pull later entries of the probe run into the hole
	 * unless their home slot lies cyclically after the hole.
	 */
	for (;;)
	{
		uint64_t	j = (i + 1) & tab->mask;

		for (;; j = (j + 1) & tab->mask)
		{
			uint64_t	home;

			if (tab->slots[j].ptr == NULL)
			{
				tab->slots[i].ptr = NULL;
				tab->count--;
				return;
			}
			home = tab->slots[j].hash & tab->mask;
			/* can the entry at j move to i?  yes if home is not in (i, j] */
			if (((j - home) & tab->mask) >= ((j - i) & tab->mask))
				break;
		}
		tab->slots[i] = tab->slots[j];
		i = j;
	}
}

uint64_t
wa_hash_bytes(const uint8_t *bytes, uint32_t len)
{
	uint64_t	h = UINT64_C(0x9e3779b97f4a7c15) ^ len;
	uint32_t	i = 0;

	for (; i + 8 <= len; i += 8)
	{
		uint64_t	w;

		memcpy(&w, bytes + i, 8);
		h = wa_hash64(h ^ w);
	}
	if (i < len)
	{
		uint64_t	w = 0;

		memcpy(&w, bytes + i, len - i);
		h = wa_hash64(h ^ w ^ ((uint64_t) (len - i) << 56));
	}
	return wa_hash64(h);
}
