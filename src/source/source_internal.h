/*-------------------------------------------------------------------------
 *
 * source_internal.h
 *	  The routines behind src/source/source.h, for source.c to choose
 *	  from.  Only the files of src/source include it: the worker cannot
 *	  name a kind of source.
 *
 * src/source/source_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_SOURCE_INTERNAL_H
#define WA_SOURCE_INTERNAL_H

#include "source/source.h"

extern const WaSourceRoutine wa_table_routine;	/* table.c */
extern const WaSourceRoutine wa_logical_routine;	/* logical/logical.c */

#endif							/* WA_SOURCE_INTERNAL_H */
