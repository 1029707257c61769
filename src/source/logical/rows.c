/*-------------------------------------------------------------------------
 *
 * rows.c
 *	  A logical source's rows, from either transport, into the row query's
 *	  values.
 *
 * The worker turns each inserted row of the source table into the row
 * query's values (keys, event time, aggregate inputs) by evaluating the
 * same expressions the table source runs in SQL, so both sources mean
 * the same thing.  The transports (decode.c, stream.c) call in here at
 * each transaction's start and end and for each row; this file calls
 * nothing of theirs, only the worker's callbacks.
 *
 * src/source/logical/rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/logical/logical_internal.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/rel.h"

/* The row query's expressions, ready to run over a row of the source. */
void
wa_logical_rows_init(WaLogicalSource *src, Relation rel)
{
	const WaAggQuery *q = src->query;
	TupleDesc	row_desc;
	ListCell   *lc;
	int			i = 0;

	src->n_exprs = list_length(q->row_exprs);
	row_desc = CreateTemplateTupleDesc(src->n_exprs);
	src->exprs = palloc0(sizeof(ExprState *) * src->n_exprs);
	foreach(lc, q->row_exprs)
	{
		Expr	   *e = expression_planner(copyObject(lfirst(lc)));

		TupleDescInitEntry(row_desc, i + 1, NULL, exprType((Node *) e),
						   exprTypmod((Node *) e), 0);
		src->exprs[i++] = ExecInitExpr(e, NULL);
	}
	src->qual = q->row_qual == NULL ? NULL :
		ExecInitQual(make_ands_implicit(expression_planner(copyObject(q->row_qual))),
					 NULL);
	src->base_slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(rel)),
											  &TTSOpsVirtual);
	src->row_slot = MakeSingleTupleTableSlot(row_desc, &TTSOpsVirtual);
	src->econtext = CreateStandaloneExprContext();
	src->econtext->ecxt_scantuple = src->base_slot;
}

/* Evaluate the row query over base_slot into row_slot; false if WHERE rejects it. */
static bool
evaluate_row(WaLogicalSource *src, int only)
{
	TupleTableSlot *out = src->row_slot;

	ExecClearTuple(out);
	for (int i = 0; i < src->n_exprs; i++)
	{
		out->tts_isnull[i] = true;
		out->tts_values[i] = (Datum) 0;
		if (only >= 0 && i != only)
			continue;
		out->tts_values[i] = ExecEvalExprSwitchContext(src->exprs[i], src->econtext,
													   &out->tts_isnull[i]);
	}
	ExecStoreVirtualTuple(out);
	return src->qual == NULL || ExecQual(src->qual, src->econtext);
}

void
wa_logical_txn_begin(WaLogicalSource *src, XLogRecPtr commit_lsn)
{
	src->in_txn = true;
	src->txn_commit_lsn = commit_lsn;
	/* committed before the offset this worker started from */
	src->skip_txn = commit_lsn < src->applied_lsn;
}

/*
 * base_slot holds a row of the source (in the expression context's
 * per-tuple memory): an insert's new row ('I'), an update's new row ('U')
 * or a delete's old one ('D').  Evaluate it and hand it to the worker.
 */
void
wa_logical_deliver(WaLogicalSource *src, char kind)
{
	int			event_time = src->query->n_keys;
	MemoryContext old = MemoryContextSwitchTo(src->econtext->ecxt_per_tuple_memory);
	bool		counts = evaluate_row(src, kind == 'I' ? -1 : event_time);

	MemoryContextSwitchTo(old);
	if (kind == 'I')
	{
		src->rows_read++;
		src->row_fn(src->fn_arg, src->row_slot, (int64) src->txn_commit_lsn, counts);
		return;
	}
	if (kind == 'U')
		src->updates++;
	else
		src->deletes++;
	src->change_fn(src->fn_arg, kind, (int64) src->txn_commit_lsn,
				   src->row_slot->tts_values[event_time],
				   src->row_slot->tts_isnull[event_time]);
}

void
wa_logical_txn_end(WaLogicalSource *src, XLogRecPtr end_lsn)
{
	if (!src->skip_txn && end_lsn > src->applied_lsn)
		src->applied_lsn = end_lsn;
	src->in_txn = false;
	src->skip_txn = false;
	/* decoding rolls back a subtransaction next: see decode.c */
	src->txn_end_fn(src->fn_arg);
}

/* The row being delivered, as jsonb in the current memory context. */
Datum
wa_logical_row_jsonb(WaLogicalSource *src)
{
	TupleTableSlot *slot = src->base_slot;
	HeapTuple	tuple = heap_form_tuple(slot->tts_tupleDescriptor,
										slot->tts_values, slot->tts_isnull);
	Datum		json = DirectFunctionCall1(row_to_json, HeapTupleGetDatum(tuple));

	return DirectFunctionCall1(jsonb_in,
							   CStringGetDatum(text_to_cstring(DatumGetTextPP(json))));
}
