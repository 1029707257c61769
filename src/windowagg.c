/*-------------------------------------------------------------------------
 *
 * windowagg.c
 *	  Module entry point: the module magic block and _PG_init.
 *
 * The batch functions need nothing at load time.  Shared memory, GUCs and
 * the pipeline launcher will be set up here, and only while the library
 * is preloaded (shared_preload_libraries), as PostgreSQL requires.
 *
 * src/windowagg.c
 *
 *-------------------------------------------------------------------------
 */
#include "windowagg.h"

#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	MarkGUCPrefixReserved("windowagg");
}
