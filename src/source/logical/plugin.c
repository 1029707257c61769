/*-------------------------------------------------------------------------
 *
 * plugin.c
 *	  The logical decoding output plugin "windowagg", for the slots of
 *	  pipelines whose source is a table of this server.
 *
 * Such a slot is decoded inside the pipeline's own worker
 * (logical.c), so nothing needs to be serialized: the callbacks
 * hand each change's heap tuple straight to the worker, which evaluates
 * the pipeline's row expressions over it.  No publication is involved, so
 * a table without a replica identity can still be updated and deleted
 * from (its deletes arrive without their row).
 *
 * Read by anything else (pg_logical_slot_get_changes, a walsender), the
 * plugin refuses with an error: its output is not a stream of bytes.
 *
 * src/source/logical/plugin.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/logical/logical_internal.h"

#include "replication/logical.h"
#include "replication/output_plugin.h"

extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

static WaLogicalSource *
decoding_source(void)
{
	if (wa_decoding_source == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the windowagg output plugin is read by windowagg's pipeline workers only"),
				 errdetail("Its slots belong to pipelines whose source is a table of this server.")));
	return wa_decoding_source;
}

static void
plugin_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt,
			   bool is_init)
{
	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = false;
	/* creating the slot needs no reader; everything else does */
	if (!is_init)
		(void) decoding_source();
}

static void
plugin_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
	wa_logical_decoded_begin(decoding_source(), txn->final_lsn);
}

static void
plugin_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
			  Relation relation, ReorderBufferChange *change)
{
	WaLogicalSource *src = decoding_source();
	HeapTuple	newtuple = wa_change_tuple(change->data.tp.newtuple);
	HeapTuple	oldtuple = wa_change_tuple(change->data.tp.oldtuple);

	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
			wa_logical_decoded_change(src, relation, 'I', newtuple);
			break;
		case REORDER_BUFFER_CHANGE_UPDATE:
			wa_logical_decoded_change(src, relation, 'U', newtuple);
			break;
		case REORDER_BUFFER_CHANGE_DELETE:
			wa_logical_decoded_change(src, relation, 'D', oldtuple);
			break;
		default:
			break;
	}
}

static void
plugin_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
			  XLogRecPtr commit_lsn)
{
	wa_logical_decoded_commit(decoding_source(), txn->end_lsn);
}

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	cb->startup_cb = plugin_startup;
	cb->begin_cb = plugin_begin;
	cb->change_cb = plugin_change;
	cb->commit_cb = plugin_commit;
}
