/*-------------------------------------------------------------------------
 *
 * pipeline_depend.c
 *	  The aggregates and functions a pipeline's results come from, kept
 *	  from DROP while the pipeline exists.
 *
 * A pipeline reads its source and writes its tables, which the
 * windowagg_refuse_drop event trigger keeps from DROP.  Its query also
 * calls aggregates and functions, of the owner's or of an extension
 * (hll_add_agg, tdigest): a dropped one would stop the pipeline, and a
 * re-created one of the same name would be fed states it did not write.
 * So the result table depends on each PostgreSQL aggregate the query runs
 * and each function of its expressions over aggregates, in pg_depend:
 * DROP AGGREGATE, DROP FUNCTION and DROP EXTENSION then refuse, as for any
 * dependent object, naming the table; with CASCADE they would drop the
 * result table, which the event trigger refuses while the pipeline
 * exists.  (Dependencies on built-in objects are not recorded: they
 * cannot be dropped.)  The dependencies go when the pipeline is dropped
 * and keeps its tables.
 *
 * src/commands/pipeline_depend.c
 *
 *-------------------------------------------------------------------------
 */
#include "commands/commands.h"

#include "catalog/dependency.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "nodes/nodeFuncs.h"

static bool
collect_function(Oid funcid, void *context)
{
	List	  **funcs = context;

	*funcs = list_append_unique_oid(*funcs, funcid);
	return false;
}

static bool
collect_functions(Node *node, List **funcs)
{
	if (node == NULL)
		return false;
	(void) check_functions_in_node(node, collect_function, funcs);
	return expression_tree_walker(node, collect_functions, funcs);
}

void
wa_record_code_dependencies(const WaAggQuery *q, Oid result_table)
{
	ObjectAddress table;
	List	   *funcs = NIL;
	ListCell   *lc;

	for (int i = 0; i < q->n_aggs; i++)
		if (q->aggs[i].kind == WA_AGG_GENERIC)
			funcs = list_append_unique_oid(funcs, q->aggs[i].aggfnoid);
	for (int i = 0; i < q->n_outputs; i++)
		if (q->outputs[i].expr != NULL)
		{
			fix_opfuncids((Node *) q->outputs[i].expr);
			(void) collect_functions((Node *) q->outputs[i].expr, &funcs);
		}
	ObjectAddressSet(table, RelationRelationId, result_table);
	foreach(lc, funcs)
	{
		ObjectAddress func;

		ObjectAddressSet(func, ProcedureRelationId, lfirst_oid(lc));
		recordDependencyOn(&table, &func, DEPENDENCY_NORMAL);
	}
	list_free(funcs);
}

void
wa_forget_code_dependencies(Oid result_table)
{
	/* a table itself depends on no function otherwise (defaults do) */
	(void) deleteDependencyRecordsForClass(RelationRelationId, result_table,
										   ProcedureRelationId,
										   DEPENDENCY_NORMAL);
}
