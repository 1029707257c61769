/*-------------------------------------------------------------------------
 *
 * windowagg.c
 *	  Module entry point: the module magic block and _PG_init.
 *
 * Defines the user-settable GUCs.  Shared memory and the pipeline
 * launcher will be set up here too, and only while the library is
 * preloaded (shared_preload_libraries), as PostgreSQL requires.
 *
 * src/windowagg.c
 *
 *-------------------------------------------------------------------------
 */
#include "windowagg.h"

#include <limits.h>

#include "utils/guc.h"

PG_MODULE_MAGIC;

/* windowagg.result_memory: see the GUC's description below */
int			wa_result_memory_kb = 8192;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("windowagg.result_memory",
							"Memory for the result of windowagg.aggregate and windowagg.dropped before it spills to a temporary file.",
							"The result is written once and read once, in order; a large in-memory "
							"result costs more to build than a temporary file does.",
							&wa_result_memory_kb,
							8192, 64, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("windowagg");
}
