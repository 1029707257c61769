/*-------------------------------------------------------------------------
 *
 * wa_assert.c
 *	  What a failed WA_ASSERT does (see wa_assert.h).
 *
 * Inside PostgreSQL stderr goes to the server log, and abort() takes the
 * backend down as PostgreSQL's own Assert does in a cassert build: a
 * corrupt engine must not write results.
 *
 * src/engine/wa_assert.c
 *
 *-------------------------------------------------------------------------
 */
#include "wa_assert.h"

#include <stdio.h>
#include <stdlib.h>

void
wa_assert_failed(const char *cond, const char *file, int line)
{
	fprintf(stderr, "windowagg engine: assertion failed: %s (%s:%d)\n",
			cond, file, line);
	fflush(stderr);
	abort();
}
