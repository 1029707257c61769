/*-------------------------------------------------------------------------
 *
 * little_endian.h
 *	  Integers as little-endian bytes, whatever the machine's order: the
 *	  byte order of everything windowagg writes for another machine to
 *	  read (checkpoints, and the aggregate states in them).
 *
 * src/query/little_endian.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_LITTLE_ENDIAN_H
#define WA_LITTLE_ENDIAN_H

#include "port/pg_bswap.h"

static inline void
wa_store_le32(char *p, uint32 v)
{
	v = pg_bswap32(pg_hton32(v));	/* big-endian, reversed: little-endian */
	memcpy(p, &v, sizeof(v));
}

static inline void
wa_store_le64(char *p, uint64 v)
{
	v = pg_bswap64(pg_hton64(v));
	memcpy(p, &v, sizeof(v));
}

static inline uint32
wa_read_le32(const char *p)
{
	uint32		v;

	memcpy(&v, p, sizeof(v));
	return pg_ntoh32(pg_bswap32(v));
}

static inline uint64
wa_read_le64(const char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return pg_ntoh64(pg_bswap64(v));
}

#endif							/* WA_LITTLE_ENDIAN_H */
