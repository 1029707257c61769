/*-------------------------------------------------------------------------
 *
 * commands.h
 *	  What the SQL entry points share: returning sets of rows.
 *
 * src/commands/ holds only functions that SQL calls; they build on the
 * pipeline (src/pipeline/pipeline.h) and the query (src/query/query.h).
 * The folder shares its name with PostgreSQL's include/commands, whose
 * headers the layers below include: no header here may take one of their
 * names (test/check-packaging.sh checks).
 *
 * src/commands/commands.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_COMMANDS_H
#define WA_COMMANDS_H

#include "pipeline/pipeline.h"

/* ---------- set-returning functions (batch.c) ---------- */

/* Error, showing the right list, unless the caller's columns match ours. */
extern void wa_check_expected_desc(TupleDesc expected, TupleDesc ours,
								   const char *fname);
/* Materialize mode with a tuplestore bounded by windowagg.result_memory. */
extern void wa_start_result(ReturnSetInfo *rsinfo);

/* pipeline_depend.c: DROP refuses the code a pipeline's results come from */
extern void wa_record_code_dependencies(const WaAggQuery *q, Oid result_table);
extern void wa_forget_code_dependencies(Oid result_table);

#endif							/* WA_COMMANDS_H */
