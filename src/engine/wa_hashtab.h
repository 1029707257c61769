/*-------------------------------------------------------------------------
 *
 * wa_hashtab.h
 *	  Open-addressing hash table of pointers, keyed by a caller's hash.
 *
 * The engine keeps two of these: keys to key state, and fired windows to
 * their revision record.  The table stores (hash, pointer) pairs with
 * linear probing and backward-shift deletion, so lookups touch one or two
 * cache lines and deletion leaves no tombstones.  Equality is decided by a
 * caller-given predicate, called only when the full 64-bit hashes match.
 *
 * src/engine/wa_hashtab.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_HASHTAB_H
#define WA_HASHTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "wa_mem.h"

typedef struct wa_hashtab_slot
{
	uint64_t	hash;
	void	   *ptr;			/* NULL: empty */
} wa_hashtab_slot;

typedef struct wa_hashtab
{
	wa_hashtab_slot *slots;
	uint64_t	mask;			/* capacity - 1; capacity a power of two */
	uint64_t	count;
} wa_hashtab;

/* Does the stored pointer match the probe? */
typedef bool (*wa_hashtab_eq) (const void *stored, const void *probe);

extern void wa_hashtab_init(wa_hashtab *tab, wa_mem *mem);
extern void wa_hashtab_destroy(wa_hashtab *tab, wa_mem *mem);
/* Inline, so that a constant eq callback is inlined too. */
static inline void *
wa_hashtab_find(const wa_hashtab *tab, uint64_t hash, wa_hashtab_eq eq,
				const void *probe)
{
	for (uint64_t i = hash & tab->mask;; i = (i + 1) & tab->mask)
	{
		const wa_hashtab_slot *slot = &tab->slots[i];

		if (slot->ptr == NULL)
			return NULL;
		if (slot->hash == hash && eq(slot->ptr, probe))
			return slot->ptr;
	}
}
/* Insert a pointer known to be absent. */
extern void wa_hashtab_insert(wa_hashtab *tab, wa_mem *mem, uint64_t hash,
							  void *ptr);
/* Remove a pointer known to be present. */
extern void wa_hashtab_remove(wa_hashtab *tab, uint64_t hash, void *ptr);

/*
 * 64-bit mixing (the splitmix64 finalizer: a bijection, so distinct inputs
 * never collide) and a byte-string hash.
 */
static inline uint64_t
wa_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

extern uint64_t wa_hash_bytes(const uint8_t *bytes, uint32_t len);

/*
 * A cheaper bijective mix for int64 keys on the per-event path: an odd
 * multiplier, then the high half folded into the low bits the table's
 * mask keeps.
 */
static inline uint64_t
wa_hash_int(uint64_t x)
{
	x *= UINT64_C(0x9e3779b97f4a7c15);
	return x ^ (x >> 32);
}

#endif							/* WA_HASHTAB_H */
