/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL major versions windowagg builds
 *	  against (15 and 18), in one place.
 *
 * Every other file calls the newest spelling, or one of the wa_ names
 * below; only this header tests PG_VERSION_NUM.  Each entry says which
 * version changed what.
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_COMPAT_H
#define WA_COMPAT_H

#include "postgres.h"

#include "access/attmap.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/optimizer.h"
#include "replication/reorderbuffer.h"
#include "replication/slot.h"
#include "replication/walreceiver.h"
#include "storage/lock.h"
#include "storage/procarray.h"
#include "utils/regproc.h"
#include "utils/relcache.h"

/* 18: pg_noreturn, a specifier before the return type, replaced the attribute */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 18: generated columns are virtual by default, computed when read and
 * never stored, so no change in the WAL carries them; 15 has only stored
 * ones, and the letter is then never found.
 */
#ifndef ATTRIBUTE_GENERATED_VIRTUAL
#define ATTRIBUTE_GENERATED_VIRTUAL 'v'
#endif

/* 16: names can be parsed without raising an error (escontext) */
#if PG_VERSION_NUM >= 160000
#define wa_string_to_qualified_name_list(string) \
	stringToQualifiedNameList((string), NULL)
#else
#define wa_string_to_qualified_name_list(string) \
	stringToQualifiedNameList(string)
#endif

/* 16: permissions live in the query's RTEPermissionInfo list */
#if PG_VERSION_NUM >= 160000
#define wa_check_query_permissions(query) \
	ExecCheckPermissions((query)->rtable, (query)->rteperminfos, true)
#else
#define wa_check_query_permissions(query) \
	ExecCheckRTPerms((query)->rtable, true)
#endif

/* 16: one aclcheck for every kind of object */
#if PG_VERSION_NUM >= 160000
#define wa_proc_aclcheck(proc, role, mode) \
	object_aclcheck(ProcedureRelationId, (proc), (role), (mode))
#else
#define wa_proc_aclcheck(proc, role, mode) \
	pg_proc_aclcheck((proc), (role), (mode))
#endif

/* 16: a column missing from the other descriptor may be an error or not */
#if PG_VERSION_NUM >= 160000
#define wa_build_attrmap_by_name_if_req(indesc, outdesc) \
	build_attrmap_by_name_if_req((indesc), (outdesc), false)
#else
#define wa_build_attrmap_by_name_if_req(indesc, outdesc) \
	build_attrmap_by_name_if_req((indesc), (outdesc))
#endif

/* 16: must_use_password; 17: replication connections may be non-logical */
#if PG_VERSION_NUM >= 170000
#define wa_walrcv_connect(conninfo, appname, err) \
	walrcv_connect((conninfo), true, true, false, (appname), (err))
#elif PG_VERSION_NUM >= 160000
#define wa_walrcv_connect(conninfo, appname, err) \
	walrcv_connect((conninfo), true, false, (appname), (err))
#else
#define wa_walrcv_connect(conninfo, appname, err) \
	walrcv_connect((conninfo), true, (appname), (err))
#endif

/* 17: slots may fail over to standbys (and be synced there); ours do not */
#if PG_VERSION_NUM >= 170000
#define wa_walrcv_create_slot(conn, slot, temporary, two_phase, action, lsn) \
	walrcv_create_slot((conn), (slot), (temporary), (two_phase), false, \
					   (action), (lsn))
#define wa_replication_slot_create(name, db_specific, persistency, two_phase) \
	ReplicationSlotCreate((name), (db_specific), (persistency), (two_phase), \
						  false, false)
#else
#define wa_walrcv_create_slot(conn, slot, temporary, two_phase, action, lsn) \
	walrcv_create_slot((conn), (slot), (temporary), (two_phase), (action), (lsn))
#define wa_replication_slot_create(name, db_specific, persistency, two_phase) \
	ReplicationSlotCreate((name), (db_specific), (persistency), (two_phase))
#endif

/* 18: acquiring an invalidated slot can be an error at once; we want that */
#if PG_VERSION_NUM >= 180000
#define wa_replication_slot_acquire(name, nowait) \
	ReplicationSlotAcquire((name), (nowait), true)
#else
#define wa_replication_slot_acquire(name, nowait) \
	ReplicationSlotAcquire((name), (nowait))
#endif

/* 17: a decoded change's rows are heap tuples, no longer wrapped */
#if PG_VERSION_NUM >= 170000
#define wa_change_tuple(t) (t)
#else
#define wa_change_tuple(t) ((t) != NULL ? &(t)->tuple : NULL)
#endif

/* 17: a process's kind is asked for, not read from a flag */
#if PG_VERSION_NUM >= 170000
#define wa_am_background_worker() AmBackgroundWorkerProcess()
#else
#define wa_am_background_worker() IsBackgroundWorker
#endif

/* 18: a deferrable primary key may be asked for too */
#if PG_VERSION_NUM >= 180000
#define wa_primary_key_index(rel) RelationGetPrimaryKeyIndex((rel), false)
#else
#define wa_primary_key_index(rel) RelationGetPrimaryKeyIndex(rel)
#endif

/* 17: a virtual transaction names its process by number, not backend id */
#if PG_VERSION_NUM >= 170000
#define wa_vxid_proc(vxid) ProcNumberGetProc((vxid).procNumber)
#else
#define wa_vxid_proc(vxid) BackendIdGetProc((vxid).backendId)
#endif

/*
 * 18: GROUP BY adds a range table entry of its own, and the grouped
 * expressions above it refer to that entry.  windowagg reads the query as
 * one table and its expressions over it, as before 18: the grouped
 * expressions are put back in place and the entry taken out.
 */
static inline void
wa_flatten_group_rte(Query *query)
{
#if PG_VERSION_NUM >= 180000
	if (!query->hasGroupRTE ||
		llast_node(RangeTblEntry, query->rtable)->rtekind != RTE_GROUP)
		return;
	query->targetList = (List *) flatten_group_exprs(NULL, query,
													 (Node *) query->targetList);
	query->havingQual = flatten_group_exprs(NULL, query, query->havingQual);
	query->rtable = list_truncate(query->rtable, list_length(query->rtable) - 1);
	query->hasGroupRTE = false;
#endif
}

#endif							/* WA_COMPAT_H */
