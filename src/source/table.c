/*-------------------------------------------------------------------------
 *
 * table.c
 *	  Read a source table's new rows exactly once, in commit order.
 *
 * Every source row carries an arrival number from a sequence (CACHE 1, so
 * numbers are handed out in time order).  Each epoch reads, in one
 * snapshot, the rows numbered above the highest number consumed so far
 * (the high-water mark).  Numbers are taken before their rows commit, so a
 * number below the mark that the snapshot does not show is a gap: its row
 * may still commit (a writer that started earlier and commits later), or
 * never will (rolled back, deleted).  Gaps are remembered and looked up
 * again every epoch; a row found in a gap is consumed then, which is the
 * order in which it committed.
 *
 * A gap can be forgotten once it cannot fill any more.  The number was
 * taken, before the snapshot that revealed the gap, by a transaction that
 * had not committed at that snapshot; that transaction was therefore
 * running when the gap was recorded, and every transaction running then
 * is in the gap's list of virtual transaction ids.  Once all of them have
 * ended, a snapshot taken afterwards shows the row if it ever committed;
 * if that snapshot does not show it, the number is dropped for good.
 *
 * The rows a pipeline's WHERE clause rejects are read too (their numbers
 * are not gaps); they reach the worker flagged as not counting.
 *
 * src/source/table.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/table.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "catalog/pg_inherits.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/sinvaladt.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

typedef struct SourceReceiver
{
	DestReceiver pub;
	WaTableSource *src;
	bool		in_gaps;		/* reading gap rows, not new ones */
} SourceReceiver;

/* ---------- gap groups ---------- */

/*
 * The transactions that may still fill the gaps revealed now: those that
 * hold a lock on the source (or one of its partitions).  An INSERT locks
 * the table before it evaluates the arrival column's default, so a
 * transaction that took a number still uncommitted holds such a lock
 * until it ends; one that never touched the source (an idle session, a
 * transaction in another database) cannot fill a gap and is not waited
 * for.  (A number taken by calling nextval by hand and inserted later is
 * an explicit value: see the README on arrival columns.)
 */
static int
new_group(WaTableSource *src)
{
	MemoryContext old = MemoryContextSwitchTo(src->cxt);
	WaGapGroup *g;
	List	   *rels = find_all_inheritors(src->query->relid, NoLock, NULL);
	ListCell   *lc;
	int			capacity = 8;

	if (src->n_groups == src->groups_capacity)
	{
		src->groups_capacity = Max(8, src->groups_capacity * 2);
		src->groups = src->groups == NULL ?
			palloc(sizeof(WaGapGroup) * src->groups_capacity) :
			repalloc(src->groups, sizeof(WaGapGroup) * src->groups_capacity);
	}
	g = &src->groups[src->n_groups];
	g->vxids = palloc(sizeof(VirtualTransactionId) * capacity);
	g->pids = palloc(sizeof(int) * capacity);
	g->n_vxids = 0;
	foreach(lc, rels)
	{
		LOCKTAG		tag;
		VirtualTransactionId *holders;

		SET_LOCKTAG_RELATION(tag, MyDatabaseId, lfirst_oid(lc));
		/* every lock conflicts with AccessExclusiveLock: every holder */
		holders = GetLockConflicts(&tag, AccessExclusiveLock, NULL);
		for (; VirtualTransactionIdIsValid(*holders); holders++)
		{
			PGPROC	   *proc = BackendIdGetProc(holders->backendId);

			if (g->n_vxids == capacity)
			{
				capacity *= 2;
				g->vxids = repalloc(g->vxids, sizeof(VirtualTransactionId) * capacity);
				g->pids = repalloc(g->pids, sizeof(int) * capacity);
			}
			g->vxids[g->n_vxids] = *holders;
			g->pids[g->n_vxids] = proc != NULL ? proc->pid : 0;
			g->n_vxids++;
		}
	}
	list_free(rels);
	g->created_at = GetCurrentTimestamp();
	g->final = false;
	g->in_use = true;
	MemoryContextSwitchTo(old);
	return src->n_groups++;
}

static void
add_gap(WaTableSource *src, int64 lo, int64 hi, int group)
{
	MemoryContext old = MemoryContextSwitchTo(src->cxt);

	if (src->n_gaps == src->gaps_capacity)
	{
		src->gaps_capacity = Max(16, src->gaps_capacity * 2);
		src->gaps = src->gaps == NULL ?
			palloc(sizeof(WaGap) * src->gaps_capacity) :
			repalloc(src->gaps, sizeof(WaGap) * src->gaps_capacity);
	}
	src->gaps[src->n_gaps].lo = lo;
	src->gaps[src->n_gaps].hi = hi;
	src->gaps[src->n_gaps].group = group;
	src->n_gaps++;
	MemoryContextSwitchTo(old);
}

/* Before the epoch's snapshot: which gap groups can no longer fill? */
void
wa_source_before_snapshot(WaTableSource *src)
{
	for (int i = 0; i < src->n_groups; i++)
	{
		WaGapGroup *g = &src->groups[i];
		bool		all_ended = true;

		if (!g->in_use || g->final)
			continue;
		for (int j = 0; j < g->n_vxids && all_ended; j++)
			all_ended = VirtualXactLock(g->vxids[j], false);
		g->final = all_ended;
	}
}

/* ---------- reading ---------- */

static int64
slot_arrival(WaTableSource *src, TupleTableSlot *slot)
{
	int			att = WA_ROW_ARRIVAL(src->query);

	switch (TupleDescAttr(slot->tts_tupleDescriptor, att)->atttypid)
	{
		case INT2OID:
			return DatumGetInt16(slot->tts_values[att]);
		case INT4OID:
			return DatumGetInt32(slot->tts_values[att]);
		default:
			return DatumGetInt64(slot->tts_values[att]);
	}
}

static bool
source_receive(TupleTableSlot *slot, DestReceiver *self)
{
	SourceReceiver *r = (SourceReceiver *) self;
	WaTableSource *src = r->src;
	int64		arrival;
	bool		counts;

	slot_getallattrs(slot);
	if (slot->tts_isnull[WA_ROW_ARRIVAL(src->query)])
		return true;			/* NULL arrival: not a row we can order */
	arrival = slot_arrival(src, slot);
	counts = !slot->tts_isnull[WA_ROW_COUNTS(src->query)] &&
		DatumGetBool(slot->tts_values[WA_ROW_COUNTS(src->query)]);

	if (r->in_gaps)
	{
		MemoryContext old = MemoryContextSwitchTo(src->epoch_cxt);

		src->found = lappend(src->found, palloc(sizeof(int64)));
		*(int64 *) llast(src->found) = arrival;
		MemoryContextSwitchTo(old);
	}
	else
	{
		/* its group is made after the read: see wa_source_read */
		if (arrival > src->hwm + 1)
			add_gap(src, src->hwm + 1, arrival - 1, -1);
		src->hwm = arrival;
		src->rows_read++;
	}
	src->row_fn(src->row_arg, slot, arrival, counts);
	return true;
}

static void
receiver_noop(DestReceiver *self)
{
}

static void
receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
run_plan(WaTableSource *src, SPIPlanPtr plan, Datum *args, bool in_gaps)
{
	SourceReceiver receiver;
	SPIExecuteOptions options;
	ParamListInfo params;
	int			nargs = SPI_getargcount(plan);
	int			ret;

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = source_receive;
	receiver.pub.rStartup = receiver_startup;
	receiver.pub.rShutdown = receiver_noop;
	receiver.pub.rDestroy = receiver_noop;
	receiver.pub.mydest = DestTuplestore;	/* not DestNone: SPI would discard */
	receiver.src = src;
	receiver.in_gaps = in_gaps;

	params = makeParamList(nargs);
	for (int i = 0; i < nargs; i++)
	{
		params->params[i].value = args[i];
		params->params[i].isnull = false;
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = SPI_getargtypeid(plan, i);
	}
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = false;
	options.dest = &receiver.pub;
	ret = SPI_execute_plan_extended(plan, &options);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "windowagg could not read the source: %s",
			 SPI_result_code_string(ret));
}

static int
compare_int64(const ListCell *a, const ListCell *b)
{
	int64		x = *(int64 *) lfirst(a);
	int64		y = *(int64 *) lfirst(b);

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Remove the numbers found this epoch, and the gaps that can no longer fill. */
static void
settle_gaps(WaTableSource *src)
{
	WaGap	   *old_gaps = src->gaps;
	int			n_old = src->n_gaps;
	ListCell   *lc;

	list_sort(src->found, compare_int64);
	src->gaps = NULL;
	src->n_gaps = 0;
	src->gaps_capacity = 0;
	for (int i = 0; i < n_old; i++)
	{
		WaGap		gap = old_gaps[i];

		if (gap.group >= 0 && src->groups[gap.group].final)
		{
			src->gaps_changed = true;
			continue;			/* nothing more can commit in it */
		}
		foreach(lc, src->found)
		{
			int64		a = *(int64 *) lfirst(lc);

			if (a < gap.lo || a > gap.hi)
				continue;
			src->gaps_changed = true;
			if (a > gap.lo)
				add_gap(src, gap.lo, a - 1, gap.group);
			gap.lo = a + 1;
		}
		if (gap.lo <= gap.hi)
			add_gap(src, gap.lo, gap.hi, gap.group);
	}
	if (old_gaps != NULL)
		pfree(old_gaps);

	/* groups no gap refers to any more are free */
	for (int i = 0; i < src->n_groups; i++)
		src->groups[i].in_use = false;
	for (int i = 0; i < src->n_gaps; i++)
		if (src->gaps[i].group >= 0)
			src->groups[src->gaps[i].group].in_use = true;
	while (src->n_groups > 0 && !src->groups[src->n_groups - 1].in_use)
	{
		src->n_groups--;
		pfree(src->groups[src->n_groups].vxids);
		pfree(src->groups[src->n_groups].pids);
	}
}

bool
wa_source_read(WaTableSource *src, int limit)
{
	int			first_new_gap;

	src->found = NIL;
	src->rows_read = 0;
	if (src->n_gaps > 0)
	{
		Datum		args[2];
		Datum	   *lo = palloc(sizeof(Datum) * src->n_gaps);
		Datum	   *hi = palloc(sizeof(Datum) * src->n_gaps);

		for (int i = 0; i < src->n_gaps; i++)
		{
			lo[i] = Int64GetDatum(src->gaps[i].lo);
			hi[i] = Int64GetDatum(src->gaps[i].hi);
		}
		args[0] = PointerGetDatum(construct_array(lo, src->n_gaps, INT8OID, 8, true, TYPALIGN_DOUBLE));
		args[1] = PointerGetDatum(construct_array(hi, src->n_gaps, INT8OID, 8, true, TYPALIGN_DOUBLE));
		run_plan(src, src->gap_plan, args, true);
	}

	/* the gaps that filled or can no longer fill go before the bound is checked */
	settle_gaps(src);
	list_free_deep(src->found);
	src->found = NIL;
	first_new_gap = src->n_gaps;

	/*
	 * At the bound, new rows wait: reading them could reveal more gaps,
	 * and a gap that may still commit is never forgotten.
	 */
	src->gaps_full = src->n_gaps >= wa_max_gaps;
	if (!src->gaps_full)
	{
		Datum		args[2];

		args[0] = Int64GetDatum(src->hwm);
		args[1] = Int64GetDatum(limit);
		run_plan(src, src->tail_plan, args, false);
	}

	/* the gaps this read revealed wait for everything running now */
	if (src->n_gaps > first_new_gap)
	{
		int			group = new_group(src);

		src->gaps_changed = true;
		for (int i = first_new_gap; i < src->n_gaps; i++)
			src->gaps[i].group = group;
	}
	settle_gaps(src);
	/* rows left unread at the bound: not caught up, though nothing to do now */
	return src->rows_read < limit && !src->gaps_full;
}

/* The oldest gap's group: when it was revealed, and a process holding it. */
void
wa_source_oldest_gap(const WaTableSource *src, TimestampTz *at, int *pid)
{
	const WaGapGroup *oldest = NULL;

	*at = 0;
	*pid = 0;
	for (int i = 0; i < src->n_gaps; i++)
	{
		const WaGapGroup *g;

		if (src->gaps[i].group < 0)
			continue;
		g = &src->groups[src->gaps[i].group];
		if (oldest == NULL || g->created_at < oldest->created_at)
			oldest = g;
	}
	if (oldest == NULL)
		return;
	*at = oldest->created_at;
	for (int i = 0; i < oldest->n_vxids && *pid == 0; i++)
		*pid = oldest->pids[i];
}

/* ---------- set-up and persistence ---------- */

void
wa_source_init(WaTableSource *src, const WaAggQuery *q, MemoryContext cxt,
			   wa_source_row_fn row_fn, void *row_arg)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	char	   *arrival = psprintf("s.\"windowagg column %d\"", WA_ROW_ARRIVAL(q) + 1);
	Oid			tail_types[2] = {INT8OID, INT8OID};
	Oid			gap_types[2] = {INT8ARRAYOID, INT8ARRAYOID};
	char	   *sql;

	memset(src, 0, sizeof(*src));
	src->query = q;
	src->cxt = cxt;
	src->row_fn = row_fn;
	src->row_arg = row_arg;

	sql = psprintf("SELECT * FROM (%s) AS s WHERE %s > $1 ORDER BY %s LIMIT $2",
				   q->row_query, arrival, arrival);
	wa_own_statement(sql);
	src->tail_plan = SPI_prepare(sql, 2, tail_types);
	if (src->tail_plan == NULL || SPI_keepplan(src->tail_plan) != 0)
		elog(ERROR, "could not prepare \"%s\"", sql);
	sql = psprintf("SELECT s.* FROM (%s) AS s "
				   "JOIN ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) AS g(lo, hi) ON %s BETWEEN g.lo AND g.hi "
				   "ORDER BY %s", q->row_query, arrival, arrival);
	wa_own_statement(sql);
	src->gap_plan = SPI_prepare(sql, 2, gap_types);
	if (src->gap_plan == NULL || SPI_keepplan(src->gap_plan) != 0)
		elog(ERROR, "could not prepare \"%s\"", sql);
	MemoryContextSwitchTo(old);
}

void
wa_source_set_epoch_context(WaTableSource *src, MemoryContext epoch_cxt)
{
	src->epoch_cxt = epoch_cxt;
}

/*
 * Restore the offset.  Transactions that were running when the gaps were
 * recorded may still run (only the worker restarted), so the restored gaps
 * wait for everything running now.
 */
void
wa_source_restore(WaTableSource *src, int64 hwm, ArrayType *gaps)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	src->hwm = hwm;
	src->n_gaps = 0;
	src->n_groups = 0;
	deconstruct_array(gaps, INT8OID, 8, true, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	if (n > 0)
	{
		int			group = new_group(src);

		for (int i = 0; i + 1 < n; i += 2)
			add_gap(src, DatumGetInt64(elems[i]), DatumGetInt64(elems[i + 1]), group);
	}
}

/* The offset to checkpoint: lo, hi pairs. */
ArrayType *
wa_source_gaps_array(const WaTableSource *src)
{
	Datum	   *elems = palloc(sizeof(Datum) * (2 * src->n_gaps + 1));

	for (int i = 0; i < src->n_gaps; i++)
	{
		elems[2 * i] = Int64GetDatum(src->gaps[i].lo);
		elems[2 * i + 1] = Int64GetDatum(src->gaps[i].hi);
	}
	return construct_array(elems, 2 * src->n_gaps, INT8OID, 8, true, TYPALIGN_DOUBLE);
}
