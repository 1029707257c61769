/*-------------------------------------------------------------------------
 *
 * init.c
 *	  Module entry point: the module magic block and _PG_init.
 *
 * Defines the GUCs.  When the library is preloaded
 * (shared_preload_libraries), also reserves shared memory for pipelines
 * and registers the launcher; loaded any other way, the batch functions
 * and aggregates work and the pipeline functions explain how to enable
 * pipelines.
 *
 * src/init.c
 *
 *-------------------------------------------------------------------------
 */
#include "pipeline/pipeline.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

/* see each GUC's description below */
int			wa_result_memory_kb = 8192;
int			wa_batch_memory_kb = 1024 * 1024;
int			wa_max_pipelines = 16;
int			wa_max_pipelines_per_role = 4;
int			wa_max_pipelines_per_database = 8;
int			wa_shared_memory_mb = 256;
int			wa_max_state_memory_kb = 32 * 1024;
int			wa_epoch_ms = 50;
int			wa_epoch_rows = 100000;
int			wa_max_gaps = 10000;
bool		wa_share_windows = true;

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
	DefineCustomIntVariable("windowagg.batch_memory",
							"Memory the windows of one windowagg.aggregate or windowagg.dropped call may hold.",
							"Their state grows with the keys and the open windows; the call "
							"fails with an error naming this setting when it would hold more.",
							&wa_batch_memory_kb,
							1024 * 1024, 1024, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("windowagg.max_state_memory",
							"Shared memory one pipeline's slice state may hold.",
							"A pipeline that reaches it stops ingesting, keeps its committed state "
							"and offset, and resumes once the setting is raised.",
							&wa_max_state_memory_kb,
							32 * 1024, 64, MAX_KILOBYTES,
							PGC_SIGHUP, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("windowagg.epoch_interval",
							"Longest time a pipeline waits before reading new rows.",
							"Each epoch commits results, dead letters, changed state and the source "
							"offset in one transaction; longer epochs write less often, shorter ones "
							"make results fresher.",
							&wa_epoch_ms,
							50, 1, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("windowagg.epoch_rows",
							"Most source rows one pipeline epoch reads.",
							NULL,
							&wa_epoch_rows,
							100000, 1, INT_MAX,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowagg.max_gaps",
							"Most ranges of arrival numbers a table source's pipeline waits for.",
							"At the limit it reads no new rows until transactions that may still fill them end.",
							&wa_max_gaps,
							10000, 1, 1000000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("windowagg.max_pipelines_per_role",
							"Most pipelines a role that is not a superuser may own and run.",
							"Counted over every database of the server.  A pipeline over a lowered "
							"limit keeps running until its worker restarts, then waits for room.",
							&wa_max_pipelines_per_role,
							4, 0, 1024,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("windowagg.max_pipelines_per_database",
							"Most pipelines one database may hold and run for roles that are not superusers.",
							"Superusers' pipelines count towards it but are never refused.",
							&wa_max_pipelines_per_database,
							8, 0, 1024,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("windowagg.share_windows",
							 "Computes windows from other windows' results where the coverage plan says it is cheaper.",
							 "Off, every window is computed from the shared slices; results are the same. "
							 "A pipeline reads it when its worker starts.",
							 &wa_share_windows,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomIntVariable("windowagg.max_pipelines",
								"Most pipelines the server can run (a shared memory slot each).",
								NULL,
								&wa_max_pipelines,
								16, 1, 1024,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("windowagg.shared_memory",
								"Shared memory reserved at server start for the state of every pipeline.",
								"Keep it at least twice windowagg.max_pipelines_per_role times "
								"windowagg.max_state_memory, so that one role's pipelines cannot fill it.",
								&wa_shared_memory_mb,
								256, 1, 1024 * 1024,
								PGC_POSTMASTER, GUC_UNIT_MB,
								NULL, NULL, NULL);
		wa_shmem_install_hooks();
		wa_launcher_register();
	}
	MarkGUCPrefixReserved("windowagg");
	wa_requests_install_callbacks();
}
