/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  A pipeline's query as its definition gives it: parsed under the
 *	  search_path it was created with, as the current user or as its
 *	  owner; and who may control a pipeline.
 *
 * The statements themselves, each beside the enum that names its columns
 * and parameters, are in catalog_pipelines.c (windowagg.pipelines) and
 * catalog_progress.c (pipeline_progress and checkpoints); nothing outside
 * those files names a column of the catalog.
 *
 * The scope itself (catalog_scope.c in src/query) sits below both the
 * pipeline layer and the sources, which read an arrival sequence in it.
 *
 * src/pipeline/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/syscache.h"

/* ---------- a pipeline's query ---------- */

/* Parse under the current search_path: a remote source reads its stand-in. */
WaAggQuery *
wa_pipeline_query_parse_now(const WaPipelineDef *def)
{
	RangeVar   *stand_in;

	if (def->connection == NULL)
		return wa_agg_query_parse(def->query, def->event_time, NULL,
								  def->logical ? NULL : def->arrival_column);
	stand_in = makeRangeVar(get_namespace_name(get_rel_namespace(def->source)),
							get_rel_name(def->source), -1);
	if (stand_in->relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the local stand-in table of pipeline \"%s\" is gone", def->name)));
	return wa_agg_query_parse_as(def->query, def->event_time, stand_in);
}

/* Set a GUC until the end of the current nest level. */
static void
set_for_parse(const char *name, const char *value)
{
	(void) set_config_option(name, value, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
}

/*
 * Parse the pipeline's query under search_path.  For a reader who is not
 * the owner, the session's own settings must neither change what the
 * query means nor make the parser quote it back (a warning, a notice):
 * the lexer's settings are the defaults, and nothing below an error
 * reaches the client.
 */
static WaAggQuery *
parse_under_path(const WaPipelineDef *def, const char *search_path,
				 bool for_reader)
{
	int			save_nestlevel = NewGUCNestLevel();
	WaAggQuery *q;

	set_for_parse("search_path", search_path);
	if (for_reader)
	{
		set_for_parse("standard_conforming_strings", "on");
		set_for_parse("escape_string_warning", "off");
		set_for_parse("backslash_quote", "safe_encoding");
		set_for_parse("transform_null_equals", "off");
		set_for_parse("client_min_messages", "error");
	}
	q = wa_pipeline_query_parse_now(def);
	AtEOXact_GUC(true, save_nestlevel);
	return q;
}

WaAggQuery *
wa_pipeline_query_parse(const WaPipelineDef *def)
{
	return parse_under_path(def, def->search_path, false);
}

/* The parse itself, as the owner and security-restricted. */
static WaAggQuery *
parse_as_owner(const WaPipelineDef *def, bool for_reader)
{
	Oid			save_userid;
	int			save_sec_context;
	WaAggQuery *volatile q = NULL;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(def->owner, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		/* the caller's temporary tables come last: they shadow nothing */
		q = parse_under_path(def, psprintf("%s, pg_temp", def->search_path),
							 for_reader);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	return q;
}

WaAggQuery *
wa_pipeline_query_parse_as_owner(const WaPipelineDef *def)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	WaAggQuery *volatile q = NULL;

	if (wa_is_pipeline_owner(def->owner))
		return parse_as_owner(def, false);

	/*
	 * For anyone else an error would quote the owner's query: it is
	 * caught (in a subtransaction, which cleans up after it) and replaced.
	 */
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		q = parse_as_owner(def, true);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		int			category;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
		/* a cancel, a deadlock or a lack of memory is what it is */
		category = ERRCODE_TO_CATEGORY(edata->sqlerrcode);
		if (category == ERRCODE_TRANSACTION_ROLLBACK ||
			category == ERRCODE_INSUFFICIENT_RESOURCES ||
			category == ERRCODE_OPERATOR_INTERVENTION ||
			edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
			ReThrowError(edata);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the query of pipeline \"%s\" cannot be parsed now", def->name),
				 errhint("The pipeline's owner sees the error in full.")));
	}
	PG_END_TRY();
	return q;
}

bool
wa_is_pipeline_owner(Oid owner)
{
	return has_privs_of_role(GetUserId(), owner);
}

void
wa_check_pipeline_owner(const WaPipelineDef *def)
{
	/* as for any object, the message names no owner */
	if (!wa_is_pipeline_owner(def->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of pipeline \"%s\"", def->name)));
}

WaPipelineDef *
wa_pipeline_lookup(const char *name)
{
	MemoryContext caller = CurrentMemoryContext;
	WaPipelineDef *def;

	wa_require_shared();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the definition must outlive SPI_finish */
	MemoryContextSwitchTo(caller);
	def = wa_catalog_load(0, name);
	SPI_finish();
	MemoryContextSwitchTo(caller);
	if (def == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("pipeline \"%s\" does not exist", name)));
	return def;
}

void
wa_pipeline_shape(const WaPipelineDef *def, const WaAggQuery *q, uint8 *shape)
{
	wa_agg_query_shape(q, &def->windows, def->bound, def->lateness, shape);
}
