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
 * A row on which the query's own expressions raise an error (an argument
 * 100 / v with v = 0, a cast that fails) must not stop the rows behind it.
 * Each read runs in a subtransaction; when one fails outside the worker's
 * own handling of a row, the rows it had not delivered are read again one
 * at a time, each in a subtransaction of its own, and a row that fails
 * alone is consumed as poison (consumer->poison: a dead letter); after a
 * poison row, new rows are read in batches again.  The numbers to read
 * again come from the table's arrival column alone, which evaluates no
 * expression of the owner's.  Errors no row can cause (a cancel, a lock,
 * a revoked privilege, the server's) are never blamed on one, nor are
 * those the query raises on rows it read before (a table its subquery
 * reads, a setting: see query_works_on_past_rows).
 *
 * src/source/table.c
 *
 *-------------------------------------------------------------------------
 */
#include "source/source_internal.h"

#include "access/xact.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/sinvaladt.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

/* Arrival numbers [lo, hi] not seen yet that may still commit. */
typedef struct WaGap
{
	int64		lo;
	int64		hi;
	int			group;
} WaGap;

/* The transactions whose end settles a set of gaps. */
typedef struct WaGapGroup
{
	VirtualTransactionId *vxids;	/* those that held a lock on the source */
	int		   *pids;			/* their processes, for stat_pipelines */
	int			n_vxids;
	TimestampTz created_at;		/* when its gaps were revealed */
	bool		final;			/* all ended before this epoch's snapshot */
	bool		in_use;
} WaGapGroup;


typedef struct WaTableSource
{
	const WaAggQuery *query;
	MemoryContext cxt;			/* gaps, groups, plans */
	MemoryContext epoch_cxt;
	const WaSourceConsumer *consumer;	/* rows go to consumer->row */
	SPIPlanPtr	tail_plan;
	SPIPlanPtr	gap_plan;
	/* after a failed read: the numbers it covered, and one row's read */
	SPIPlanPtr	tail_numbers_plan;
	SPIPlanPtr	gap_numbers_plan;
	SPIPlanPtr	past_numbers_plan;
	SPIPlanPtr	row_plan;
	bool		probing;		/* evaluating rows read before: deliver none */
	List	   *poisoned;		/* numbers blamed this epoch */
	TupleDesc	row_desc;		/* the rows' types, as the worker parsed them */
	bool		in_consumer;	/* the worker handles a row: its errors
								 * are its own, not the row's */

	int64		hwm;			/* highest arrival number consumed */
	WaGap	   *gaps;
	int			n_gaps;
	int			gaps_capacity;
	WaGapGroup *groups;
	int			n_groups;
	int			groups_capacity;

	List	   *found;			/* gap numbers read this epoch */
	int			n_found;		/* how many, once the list is settled */
	bool		gaps_full;		/* windowagg.max_gaps reached: no new rows */
	bool		gaps_changed;	/* since the last checkpoint */
	int64		rows_read;		/* new rows read this epoch */

	/* the pipeline's */
	WaSource   *source;
	Oid			dead_letter_table;
	Oid			arrival_seq;	/* the sequence that numbers its rows */
} WaTableSource;

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
		VirtualTransactionId *conflicts;

		SET_LOCKTAG_RELATION(tag, MyDatabaseId, lfirst_oid(lc));
		/* every lock conflicts with AccessExclusiveLock: every holder */
		conflicts = GetLockConflicts(&tag, AccessExclusiveLock, NULL);
		for (VirtualTransactionId *holders = conflicts;
			 VirtualTransactionIdIsValid(*holders); holders++)
		{
			PGPROC	   *proc = wa_vxid_proc(*holders);

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
		/* in the worker's long-lived memory: one array per group made */
		pfree(conflicts);
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
static void
table_before_snapshot(WaTableSource *src)
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

/* Arrival number a is read (its row delivered, or consumed as poison). */
static void
consume_number(WaTableSource *src, int64 arrival, bool in_gaps)
{
	if (in_gaps)
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
}

static bool
source_receive(TupleTableSlot *slot, DestReceiver *self)
{
	SourceReceiver *r = (SourceReceiver *) self;
	WaTableSource *src = r->src;
	int64		arrival;
	bool		counts;

	slot_getallattrs(slot);
	if (src->probing)
		return true;			/* evaluated only: see query_works_on_past_rows */
	if (slot->tts_isnull[WA_ROW_ARRIVAL(src->query)])
		return true;			/* NULL arrival: not a row we can order */
	arrival = slot_arrival(src, slot);
	counts = !slot->tts_isnull[WA_ROW_COUNTS(src->query)] &&
		DatumGetBool(slot->tts_values[WA_ROW_COUNTS(src->query)]);

	consume_number(src, arrival, r->in_gaps);
	src->in_consumer = true;
	src->consumer->row(src->consumer->arg, slot, arrival, counts);
	src->in_consumer = false;
	return true;
}

static void
receiver_noop(DestReceiver *self)
{
}

/*
 * The worker decodes rows by the types of its own parse.  PostgreSQL
 * analyses a kept statement again when something it uses changes (a
 * function dropped and created again, returning another type), and the
 * rows would then be read as what they are not: a user must resume the
 * pipeline, whose query is then parsed, and checked, again.
 */
static void
receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	WaTableSource *src = ((SourceReceiver *) self)->src;
	TupleDesc	want = src->row_desc;
	bool		same = typeinfo->natts == want->natts;

	for (int i = 0; same && i < want->natts; i++)
		same = TupleDescAttr(typeinfo, i)->atttypid == TupleDescAttr(want, i)->atttypid;
	if (!same)
	{
		src->source->needs_user = true;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the query of the pipeline now returns other types than its worker reads"),
				 errdetail("A function or type it uses was replaced since the worker started."),
				 errhint("Resume the pipeline to parse its query again.")));
	}
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
		elog(ERROR, "could not read the source of the pipeline: %s",
			 SPI_result_code_string(ret));
}

/*
 * Could a row be why the query failed?  Not if the server, an operator, a
 * lock or a privilege stopped it: those errors go on up as before (the
 * worker restarts, or stops for a user), and no row is blamed.
 */
static bool
error_may_be_the_rows(int sqlerrcode)
{
	switch (ERRCODE_TO_CATEGORY(sqlerrcode))
	{
		case ERRCODE_CONNECTION_EXCEPTION:
		case ERRCODE_INVALID_TRANSACTION_STATE:
		case ERRCODE_TRANSACTION_ROLLBACK:
		case ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION:
		case ERRCODE_INSUFFICIENT_RESOURCES:
		case ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE:
		case ERRCODE_OPERATOR_INTERVENTION:
		case ERRCODE_SYSTEM_ERROR:
		case ERRCODE_CONFIG_FILE_ERROR:
		case ERRCODE_INTERNAL_ERROR:
			return false;
	}
	return true;
}

/*
 * run_plan in a subtransaction.  An error of the worker's own handling of
 * a row goes on up (its engine may be half-changed), as does one no row
 * can cause; any other is the query's, on some row not delivered yet: it
 * is returned (a copy), and what the subtransaction did is undone, but not
 * the rows delivered.
 */
static ErrorData *
try_plan(WaTableSource *src, SPIPlanPtr plan, Datum *args, bool in_gaps)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile failure = NULL;

	src->in_consumer = false;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		run_plan(src, plan, args, in_gaps);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		if (src->in_consumer)
			PG_RE_THROW();
		MemoryContextSwitchTo(src->epoch_cxt);
		failure = CopyErrorData();
		if (!error_may_be_the_rows(failure->sqlerrcode))
			PG_RE_THROW();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return failure;
}

/* The arrival numbers a plan of numbers returns, in order. */
static List *
numbers_of(WaTableSource *src, SPIPlanPtr plan, Datum *args)
{
	List	   *numbers = NIL;
	int			ret = SPI_execute_plan(plan, args, NULL, false, 0);

	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the arrival numbers of the pipeline's source: %s",
			 SPI_result_code_string(ret));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
									  1, &isnull);
		MemoryContext old = MemoryContextSwitchTo(src->epoch_cxt);

		if (!isnull)
		{
			numbers = lappend(numbers, palloc(sizeof(int64)));
			*(int64 *) llast(numbers) = DatumGetInt64(d);
		}
		MemoryContextSwitchTo(old);
	}
	SPI_freetuptable(SPI_tuptable);
	return numbers;
}

static bool
list_member_int64(const List *numbers, int64 arrival)
{
	ListCell   *lc;

	foreach(lc, numbers)
		if (*(int64 *) lfirst(lc) == arrival)
			return true;
	return false;
}

static bool
number_found(const WaTableSource *src, int64 arrival)
{
	return list_member_int64(src->found, arrival);
}

/*
 * Does the query still work on a row it read before?  Evaluated, not
 * delivered, for up to eight of the latest numbers consumed that were
 * never blamed (not in the dead letters, nor this epoch's) and are not in
 * a gap (unread).  A query that
 * fails on all of them fails for a reason of its own (a table its
 * subquery reads, a setting, the clock), and no row is to blame; with no
 * such row left (all deleted since), there is no telling, and the rows
 * are.
 */
static bool
query_works_on_past_rows(WaTableSource *src)
{
	Datum		args[4];
	Datum	   *poisoned = palloc(sizeof(Datum) * (list_length(src->poisoned) + 1));
	Datum	   *lo = palloc(sizeof(Datum) * (src->n_gaps + 1));
	Datum	   *hi = palloc(sizeof(Datum) * (src->n_gaps + 1));
	List	   *numbers;
	ListCell   *lc;
	bool		works = true;
	int			n = 0;

	/* this epoch's poison rows are not in the dead letters yet */
	foreach(lc, src->poisoned)
		poisoned[n++] = Int64GetDatum(*(int64 *) lfirst(lc));
	/* rows in gaps may not have been read */
	for (int i = 0; i < src->n_gaps; i++)
	{
		lo[i] = Int64GetDatum(src->gaps[i].lo);
		hi[i] = Int64GetDatum(src->gaps[i].hi);
	}
	args[0] = Int64GetDatum(src->hwm);
	args[1] = PointerGetDatum(construct_array(poisoned, n, INT8OID, 8, true, TYPALIGN_DOUBLE));
	args[2] = PointerGetDatum(construct_array(lo, src->n_gaps, INT8OID, 8, true, TYPALIGN_DOUBLE));
	args[3] = PointerGetDatum(construct_array(hi, src->n_gaps, INT8OID, 8, true, TYPALIGN_DOUBLE));
	numbers = numbers_of(src, src->past_numbers_plan, args);

	src->probing = true;
	foreach(lc, numbers)
	{
		Datum		past = Int64GetDatum(*(int64 *) lfirst(lc));
		ErrorData  *failure = try_plan(src, src->row_plan, &past, false);

		if (failure == NULL)
		{
			works = true;
			break;
		}
		works = false;
		FreeErrorData(failure);
	}
	src->probing = false;
	list_free_deep(numbers);
	return works;
}

/*
 * A read that failed on one of its rows: read what it had not delivered
 * one row at a time; a row that fails alone is poison.  New rows (not
 * gaps) stop after the first poison row, for the caller to go on reading
 * in batches: returns true then.
 */
static bool
isolate_poison(WaTableSource *src, Datum *number_args, bool in_gaps)
{
	List	   *numbers;
	ListCell   *lc;
	bool		stopped = false;

	numbers = numbers_of(src, in_gaps ? src->gap_numbers_plan : src->tail_numbers_plan,
						 number_args);
	foreach(lc, numbers)
	{
		int64		arrival = *(int64 *) lfirst(lc);
		Datum		arg = Int64GetDatum(arrival);
		ErrorData  *failure;

		/* delivered before the failure, or (tail) not after the mark */
		if (in_gaps ? number_found(src, arrival) : arrival <= src->hwm)
			continue;
		failure = try_plan(src, src->row_plan, &arg, in_gaps);
		if (failure == NULL)
			continue;
		consume_number(src, arrival, in_gaps);
		{
			MemoryContext old = MemoryContextSwitchTo(src->epoch_cxt);

			src->poisoned = lappend(src->poisoned, palloc(sizeof(int64)));
			*(int64 *) llast(src->poisoned) = arrival;
			MemoryContextSwitchTo(old);
		}
		src->in_consumer = true;
		src->consumer->poison(src->consumer->arg, arrival, failure->message);
		src->in_consumer = false;
		FreeErrorData(failure);
		if (!in_gaps)
		{
			stopped = true;
			break;
		}
	}
	list_free_deep(numbers);
	return stopped;
}

/* run_plan, with any row the query fails on consumed as poison. */
static void
read_rows(WaTableSource *src, SPIPlanPtr plan, Datum *args, bool in_gaps)
{
	ErrorData  *failure = try_plan(src, plan, args, in_gaps);
	int64		limit = in_gaps ? 0 : DatumGetInt64(args[1]);
	Datum		number_args[2];

	if (failure == NULL)
		return;
	if (!query_works_on_past_rows(src))
		ReThrowError(failure);	/* the query's failure, not a row's */
	FreeErrorData(failure);
	for (;;)
	{
		if (in_gaps)
		{
			number_args[0] = args[0];
			number_args[1] = args[1];
		}
		else
		{
			/* what is left of the limit, after the mark the rows moved */
			number_args[0] = Int64GetDatum(src->hwm);
			number_args[1] = Int64GetDatum(limit - src->rows_read);
		}
		if (!isolate_poison(src, number_args, in_gaps))
			return;

		/* past the poison row: the rest in batches again */
		number_args[1] = Int64GetDatum(limit - src->rows_read);
		if (DatumGetInt64(number_args[1]) <= 0)
			return;
		number_args[0] = Int64GetDatum(src->hwm);
		failure = try_plan(src, plan, number_args, false);
		if (failure == NULL)
			return;
		FreeErrorData(failure);
	}
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

static bool
table_read_rows(WaTableSource *src, int limit)
{
	int			first_new_gap;

	src->found = NIL;
	src->n_found = 0;
	src->rows_read = 0;
	src->poisoned = NIL;		/* in the epoch's memory, reset since */
	src->probing = false;		/* after an error while probing */
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
		read_rows(src, src->gap_plan, args, true);
	}

	/* the gaps that filled or can no longer fill go before the bound is checked */
	settle_gaps(src);
	src->n_found = list_length(src->found);
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
		read_rows(src, src->tail_plan, args, false);
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
static void
table_oldest_gap(const WaTableSource *src, TimestampTz *at, int *pid)
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

/* A statement of the worker's own, prepared and kept. */
static SPIPlanPtr
prepare_kept(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan;

	wa_own_statement(sql);
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "could not prepare \"%s\"", sql);
	return plan;
}

/* The row query's statements, kept for the worker's lifetime. */
static void
table_prepare_plans(WaTableSource *src)
{
	const WaAggQuery *q = src->query;
	MemoryContext old = MemoryContextSwitchTo(src->cxt);
	char	   *arrival = psprintf("s.%s",
									   quote_identifier(psprintf("%s %d", q->row_alias,
																 WA_ROW_ARRIVAL(q) + 1)));
	Oid			tail_types[2] = {INT8OID, INT8OID};
	Oid			gap_types[2] = {INT8ARRAYOID, INT8ARRAYOID};
	Oid			past_types[4] = {INT8OID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID};
	char	   *table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(q->relid)),
												   get_rel_name(q->relid));
	const char *column = quote_identifier(q->arrival_column);
	const char *only = q->inh ? "" : "ONLY ";
	char	   *dead_letters = quote_qualified_identifier(get_namespace_name(get_rel_namespace(src->dead_letter_table)),
														  get_rel_name(src->dead_letter_table));
	char	   *sql;

	sql = psprintf("SELECT * FROM (%s) AS s WHERE %s > $1 ORDER BY %s LIMIT $2",
				   q->row_query, arrival, arrival);
	src->tail_plan = prepare_kept(sql, 2, tail_types);
	/* SPI calls leave SPI's context current */
	MemoryContextSwitchTo(src->cxt);
	src->row_desc = CreateTupleDescCopy(((CachedPlanSource *)
										 linitial(SPI_plan_get_plan_sources(src->tail_plan)))->resultDesc);
	sql = psprintf("SELECT s.* FROM (%s) AS s "
				   "JOIN ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) AS g(lo, hi) ON %s BETWEEN g.lo AND g.hi "
				   "ORDER BY %s", q->row_query, arrival, arrival);
	src->gap_plan = prepare_kept(sql, 2, gap_types);

	/*
	 * After a failed read: the same rows' numbers, from the table itself
	 * (the row query reads every row, flagging those its WHERE rejects), so
	 * that no expression of the query runs; the latest numbers consumed;
	 * and one row.
	 */
	sql = psprintf("SELECT t.%s::pg_catalog.int8 FROM %s%s AS t WHERE t.%s > $1 ORDER BY 1 LIMIT $2",
				   column, only, table, column);
	src->tail_numbers_plan = prepare_kept(sql, 2, tail_types);
	sql = psprintf("SELECT t.%s::pg_catalog.int8 FROM %s%s AS t "
				   "JOIN ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) AS g(lo, hi) ON t.%s BETWEEN g.lo AND g.hi "
				   "ORDER BY 1", column, only, table, column);
	src->gap_numbers_plan = prepare_kept(sql, 2, gap_types);
	/* rows read before, none blamed: see query_works_on_past_rows */
	sql = psprintf("SELECT t.%s::pg_catalog.int8 FROM %s%s AS t WHERE t.%s <= $1 "
				   "AND t.%s <> ALL ($2) "
				   "AND NOT EXISTS (SELECT FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4)) AS g(lo, hi) "
				   "WHERE t.%s BETWEEN g.lo AND g.hi) "
				   "AND NOT EXISTS (SELECT FROM %s AS d WHERE d.arrival = t.%s) "
				   "ORDER BY 1 DESC LIMIT 8",
				   column, only, table, column, column, column, dead_letters, column);
	src->past_numbers_plan = prepare_kept(sql, 4, past_types);
	sql = psprintf("SELECT * FROM (%s) AS s WHERE %s = $1", q->row_query, arrival);
	src->row_plan = prepare_kept(sql, 1, tail_types);
	MemoryContextSwitchTo(old);
}

/*
 * Restore the offset.  Transactions that were running when the gaps were
 * recorded may still run (only the worker restarted), so the restored gaps
 * wait for everything running now.
 */
static void
table_restore(WaTableSource *src, int64 hwm, ArrayType *gaps)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	src->hwm = hwm;
	src->n_gaps = 0;
	src->n_groups = 0;
	if (gaps == NULL)
		return;
	deconstruct_array(gaps, INT8OID, 8, true, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	if (n > 0)
	{
		int			group = new_group(src);

		for (int i = 0; i + 1 < n; i += 2)
			add_gap(src, DatumGetInt64(elems[i]), DatumGetInt64(elems[i + 1]), group);
	}
}

/* The offset to checkpoint: lo, hi pairs. */
static ArrayType *
table_gaps_array(const WaTableSource *src)
{
	Datum	   *elems = palloc(sizeof(Datum) * (2 * src->n_gaps + 1));

	for (int i = 0; i < src->n_gaps; i++)
	{
		elems[2 * i] = Int64GetDatum(src->gaps[i].lo);
		elems[2 * i + 1] = Int64GetDatum(src->gaps[i].hi);
	}
	return construct_array(elems, 2 * src->n_gaps, INT8OID, 8, true, TYPALIGN_DOUBLE);
}

/* ---------- the arrival sequence ---------- */

/* The sequence that numbers the source's rows. */
static Oid
arrival_sequence(WaSource *source)
{
	const WaSourceDef *def = source->def;
	Datum		args[2];
	Oid			argtypes[2] = {OIDOID, TEXTOID};
	bool		isnull;
	Datum		seq;

	args[0] = ObjectIdGetDatum(def->relid);
	args[1] = CStringGetTextDatum(def->arrival_column);
	wa_catalog_exec("SELECT pg_catalog.pg_get_serial_sequence($1::pg_catalog.regclass::pg_catalog.text, $2)"
					"::pg_catalog.regclass::pg_catalog.oid",
					2, argtypes, args, NULL);
	seq = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
	{
		source->needs_user = true;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("arrival column \"%s\" of pipeline \"%s\" is no longer filled by a sequence",
						def->arrival_column, def->pipeline),
				 errhint("Make it an identity column again, or drop and re-create the pipeline.")));
	}
	return DatumGetObjectId(seq);
}

/* The first number the arrival sequence hands out. */
static int64
arrival_sequence_start(Oid seqid)
{
	HeapTuple	tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	int64		start;

	if (!HeapTupleIsValid(tup))
		return 1;				/* gone: the next epoch says so */
	start = ((Form_pg_sequence) GETSTRUCT(tup))->seqmin;
	ReleaseSysCache(tup);
	return start;
}

/*
 * A table source finds new rows as those numbered above the highest
 * arrival number read, so every number must come from the arrival
 * column's sequence, one at a time and in time order.  A row numbered
 * beyond what the sequence has handed out (an explicit value, OVERRIDING
 * SYSTEM VALUE, a sequence set back) would make the rows that later take
 * the numbers below it be skipped; a cache would hand numbers out of
 * order.  Either stops the pipeline, before the epoch commits: nothing is
 * lost, and resume goes on once the sequence is set right.
 */
static void
check_arrival_sequence(WaTableSource *src)
{
	WaSource   *source = src->source;
	const WaSourceDef *def = source->def;
	HeapTuple	tup;
	Form_pg_sequence seq;
	int64		cache;
	int64		increment;
	bool		isnull;
	int64		last;
	bool		called;
	int64		handed_out;
	char	   *seqname;

	tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(src->arrival_seq));
	if (!HeapTupleIsValid(tup))
	{
		source->needs_user = true;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the arrival sequence of pipeline \"%s\" is gone", def->pipeline),
				 errhint("Drop and re-create the pipeline.")));
	}
	seq = (Form_pg_sequence) GETSTRUCT(tup);
	cache = seq->seqcache;
	increment = seq->seqincrement;
	ReleaseSysCache(tup);
	seqname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(src->arrival_seq)),
										 get_rel_name(src->arrival_seq));
	if (cache != 1)
	{
		source->needs_user = true;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the sequence of arrival column \"%s\" of pipeline \"%s\" caches %lld values",
						def->arrival_column, def->pipeline, (long long) cache),
				 errdetail("With a cache, sessions hand out arrival numbers out of time order, and a row could be taken for a gap for ever."),
				 errhint("Run ALTER SEQUENCE %s CACHE 1, then windowagg.resume('%s').",
						 seqname, def->pipeline)));
	}

	/* as the catalog's owner: the pipeline's may read the table, not the sequence */
	wa_catalog_exec(psprintf("SELECT last_value, is_called FROM %s", seqname),
					0, NULL, NULL, NULL);
	last = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	called = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	handed_out = called ? last : last - increment;
	if (handed_out < src->hwm)
	{
		source->needs_user = true;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pipeline \"%s\" has read arrival numbers up to " INT64_FORMAT ", beyond its sequence",
						def->pipeline, src->hwm),
				 errdetail("Sequence %s has handed out numbers up to " INT64_FORMAT ": a row was inserted with an explicit arrival number, or the sequence was set back, and the rows it numbers next would be skipped.",
						   seqname, handed_out),
				 errhint("Set the sequence past the highest arrival number (setval), then call windowagg.resume('%s').",
						 def->pipeline)));
	}
}

/* ---------- the routine (see source.h) ---------- */

static void
table_open(WaSource *source)
{
	WaTableSource *src = MemoryContextAllocZero(source->cxt, sizeof(WaTableSource));

	src->source = source;
	src->query = source->query;
	src->cxt = source->cxt;
	src->epoch_cxt = source->epoch_cxt;
	src->consumer = &source->consumer;
	src->dead_letter_table = source->def->dead_letter_table;
	src->arrival_seq = arrival_sequence(source);
	source->private_data = src;
}

static void
table_prepare(WaSource *source)
{
	table_prepare_plans(source->private_data);
}

static void
table_start(WaSource *source, const WaSourceOffset *committed)
{
	WaTableSource *src = source->private_data;
	MemoryContext old = MemoryContextSwitchTo(src->cxt);

	/* nothing read yet: every number the sequence can give is ahead */
	table_restore(src, committed->arrival_hwm_null ?
				  arrival_sequence_start(src->arrival_seq) - 1 :
				  committed->arrival_hwm,
				  committed->arrival_gaps);
	MemoryContextSwitchTo(old);
}

static void
table_begin_epoch(WaSource *source)
{
	table_before_snapshot(source->private_data);
}

static void
table_read(WaSource *source, int limit, WaReadResult *result)
{
	WaTableSource *src = source->private_data;
	int64		hwm_before = src->hwm;
	int			gaps_before = src->n_gaps;

	result->caught_up = table_read_rows(src, limit);
	check_arrival_sequence(src);	/* before anything of it commits */
	result->stalled = src->gaps_full;
	result->rows = src->rows_read + src->n_found;
	result->offset_dirty = src->hwm != hwm_before || src->n_gaps != gaps_before ||
		src->n_found > 0 || src->gaps_changed;
}

static void
table_get_offset(WaSource *source, WaSourceOffset *offset)
{
	WaTableSource *src = source->private_data;

	offset->arrival_hwm = src->hwm;
	/* an unchanged array is not written again */
	offset->arrival_gaps = src->gaps_changed ? table_gaps_array(src) : NULL;
	offset->lsn = InvalidXLogRecPtr;
}

static void
table_after_commit(WaSource *source, bool offset_written)
{
	WaTableSource *src = source->private_data;

	if (offset_written)
		src->gaps_changed = false;
}

static bool
table_report(WaSource *source, WaSourceStats *stats, char *why, Size why_len)
{
	WaTableSource *src = source->private_data;

	stats->n_gaps = src->n_gaps;
	table_oldest_gap(src, &stats->oldest_gap_at, &stats->oldest_gap_pid);
	if (src->gaps_full)
		snprintf(why, why_len,
				 "%d ranges of arrival numbers may still commit (windowagg.max_gaps): "
				 "no new rows are read until the transactions that may fill them end (the oldest: process %d)",
				 src->n_gaps, stats->oldest_gap_pid);
	return src->gaps_full;
}

static void
table_wait(WaSource *source, long timeout_ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

static void
table_close(WaSource *source, bool drop)
{
	/* start rebuilds the offset; the plans live as long as the worker */
}

const WaSourceRoutine wa_table_routine = {
	.rows_transient = false,
	.open = table_open,
	.check = NULL,
	.prepare = table_prepare,
	.start = table_start,
	.begin_epoch = table_begin_epoch,
	.read = table_read,
	.current_row = NULL,
	.get_offset = table_get_offset,
	.after_commit = table_after_commit,
	.report = table_report,
	.wait = table_wait,
	.close = table_close,
};
