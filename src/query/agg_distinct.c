/*-------------------------------------------------------------------------
 *
 * agg_distinct.c
 *	  The state of an aggregate over DISTINCT values: the set of its
 *	  slice's distinct inputs.
 *
 * count(DISTINCT x) of a window is not a function of its slices' counts,
 * but it is one of their sets of distinct values: a slice keeps the set,
 * sets merge by union (so windows of a DISTINCT aggregate may be merged
 * from overlapping ones, as min and max are), and a pane folds the
 * aggregate's own transition function over its window's set in sorted
 * order, then its final function: what PostgreSQL does with the sorted,
 * deduplicated input of a DISTINCT aggregate.  No combine function is
 * needed.  Values are ordered and told apart by the type's default btree
 * ordering, in the aggregate's input collation.
 *
 * A set is kept as an array of Datums (by-reference values copied into
 * the set's memory context): a sorted run of distinct values, then the
 * values added since, in the order they came, each absent from the run.
 * Inserting each new value into the run would cost time quadratic in a
 * slice's distinct values (a million users an hour); instead the
 * newcomers are sorted and merged into the run once they are as many as
 * the run holds, and before anything reads the set, so a value costs
 * O(log n) amortized.  As bytes, a set is a header, then each value (a
 * Datum, the type's fixed bytes, or a flat varlena), MAXALIGNed, sorted.
 *
 * src/query/agg_distinct.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/agg_generic_int.h"

#include "access/nbtree.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

struct WaDistinctSet
{
	int			n;				/* values[0 .. n): sorted, distinct */
	int			pending;		/* values[n .. n + pending): added since, in
								 * arrival order, none of them in the run */
	int			capacity;
	bool		saw_null;		/* a NULL input: one value of its own */
	Datum	   *values;
	MemoryContext cxt;			/* where values and copies live */
};

/* A newcomer and its place in arrival order, for a stable sort. */
typedef struct PendingValue
{
	Datum		value;
	int			seq;
} PendingValue;

/* The bytes of a set: this header, then the values. */
typedef struct DistinctImage
{
	int32		vl_len_;		/* a varlena, for the blob's bytea form */
	int32		n;
	bool		saw_null;
} DistinctImage;

#define IMAGE_VALUES_OFFSET MAXALIGN(sizeof(DistinctImage))

void
wa_distinct_init(GenericAgg *a, WaGeneric *g, Oid arg_type, Oid collation)
{
	Oid			opclass = GetDefaultOpClass(arg_type, BTREE_AM_OID);
	Oid			cmp;

	if (!OidIsValid(opclass))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("aggregate %s with DISTINCT needs an ordering of type %s",
						a->col->sql_name, format_type_be(arg_type))));
	cmp = get_opfamily_proc(get_opclass_family(opclass),
							get_opclass_input_type(opclass),
							get_opclass_input_type(opclass), BTORDER_PROC);
	if (!OidIsValid(cmp))
		elog(ERROR, "missing support function %d for type %s", BTORDER_PROC,
			 format_type_be(arg_type));
	a->distinct = true;
	get_typlenbyval(arg_type, &a->arglen, &a->argbyval);
	fmgr_info(cmp, &a->cmpfn);
	a->cmp_call = palloc0(SizeForFunctionCallInfo(2));
	InitFunctionCallInfoData(*a->cmp_call, &a->cmpfn, 2, collation, NULL, NULL);
	(void) g;
}

WaDistinctSet *
wa_distinct_new(void)
{
	WaDistinctSet *set = palloc0(sizeof(WaDistinctSet));

	set->cxt = CurrentMemoryContext;
	return set;
}

static int
compare(GenericAgg *a, Datum x, Datum y)
{
	FunctionCallInfo call = a->cmp_call;

	call->args[0].value = x;
	call->args[0].isnull = false;
	call->args[1].value = y;
	call->args[1].isnull = false;
	call->isnull = false;
	return DatumGetInt32(FunctionCallInvoke(call));
}

/* Is v in the sorted run? */
static bool
in_run(GenericAgg *a, const WaDistinctSet *set, Datum v)
{
	int			lo = 0;
	int			hi = set->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = compare(a, set->values[mid], v);

		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int
compare_pending(const void *x, const void *y, void *arg)
{
	const PendingValue *px = x;
	const PendingValue *py = y;
	int			c = compare((GenericAgg *) arg, px->value, py->value);

	if (c != 0)
		return c;
	return px->seq < py->seq ? -1 : px->seq > py->seq;
}

/*
 * Merge the newcomers into the run: sorted, of equal ones the first that
 * came kept (the run's values came before any newcomer), in time
 * O(p log p + n) for p newcomers.  The set holds the same values after
 * as before, so a set that is read only is normalized too.
 */
static void
normalize(GenericAgg *a, WaDistinctSet *set)
{
	PendingValue *sorted;
	Datum	   *merged;
	Datum	   *old_values = set->values;
	int			n_old = set->n;
	int			p = set->pending;
	int			q = 0;
	int			n = 0;
	int			i = 0;
	int			j = 0;

	if (p == 0)
		return;

	/*
	 * The arrays in the set's memory; the comparisons (the type's code) in
	 * the caller's, which it resets.  Nothing of the set changes until the
	 * merge is done, so an error on the way (a cancel, the comparison's
	 * own) leaves it as it was.
	 */
	sorted = MemoryContextAlloc(set->cxt, sizeof(PendingValue) * p);
	for (int k = 0; k < p; k++)
	{
		sorted[k].value = set->values[set->n + k];
		sorted[k].seq = k;
	}
	CHECK_FOR_INTERRUPTS();
	qsort_arg(sorted, p, sizeof(PendingValue), compare_pending, a);
	/* of equal newcomers, the first that came (the others: freed below) */
	for (int k = 0; k < p; k++)
	{
		if (q > 0 && compare(a, sorted[q - 1].value, sorted[k].value) == 0)
			continue;
		sorted[q++] = sorted[k];
	}
	/* no newcomer is in the run (wa_distinct_add): a plain merge */
	merged = MemoryContextAlloc(set->cxt, sizeof(Datum) * ((Size) set->n + q + 1));
	while (i < set->n || j < q)
	{
		if ((n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (j == q ||
			(i < set->n && compare(a, set->values[i], sorted[j].value) < 0))
			merged[n++] = set->values[i++];
		else
			merged[n++] = sorted[j++].value;
	}
	set->values = merged;
	set->n = n;
	set->pending = 0;
	set->capacity = n + 1;

	/* the newcomers dropped as repeats of earlier ones: their copies */
	if (!a->argbyval && q < p)
	{
		bool	   *kept = MemoryContextAllocZero(set->cxt, sizeof(bool) * p);

		for (int k = 0; k < q; k++)
			kept[sorted[k].seq] = true;
		for (int k = 0; k < p; k++)
			if (!kept[k])
				pfree(DatumGetPointer(old_values[n_old + k]));
		pfree(kept);
	}
	pfree(sorted);
	pfree(old_values);
}

/* Append v (copied into the set's memory) to the newcomers. */
static void
append_pending(GenericAgg *a, WaDistinctSet *set, Datum v)
{
	MemoryContext old = MemoryContextSwitchTo(set->cxt);

	if (set->n + set->pending == set->capacity)
	{
		set->capacity = set->capacity ? set->capacity * 2 : 8;
		set->values = set->values == NULL ?
			palloc(sizeof(Datum) * set->capacity) :
			repalloc(set->values, sizeof(Datum) * set->capacity);
	}
	set->values[set->n + set->pending] = a->argbyval ? v : datumCopy(v, false, a->arglen);
	set->pending++;
	MemoryContextSwitchTo(old);
}

void
wa_distinct_add(GenericAgg *a, WaDistinctSet *set, Datum v, bool isnull)
{
	if (isnull)
	{
		set->saw_null = true;
		return;
	}
	/* the value itself, not a pointer into the table's TOAST data */
	if (a->arglen == -1)
		v = PointerGetDatum(pg_detoast_datum_packed((struct varlena *) DatumGetPointer(v)));
	/* in the run, or the newcomer just before (rows repeat values) */
	if (in_run(a, set, v) ||
		(set->pending > 0 &&
		 compare(a, set->values[set->n + set->pending - 1], v) == 0))
		return;
	append_pending(a, set, v);
	/* newcomers as many as the run: merge them (amortized O(log n) each) */
	if (set->pending >= 64 && set->pending >= set->n)
		normalize(a, set);
}

/* A set read as it stands: sorted, nothing pending. */
static const WaDistinctSet *
settled(GenericAgg *a, const WaDistinctSet *set)
{
	if (set->pending > 0)
		normalize(a, unconstify(WaDistinctSet *, set));
	return set;
}

/*
 * dst gets src's values too (copied into dst's memory): a merge of the two
 * sorted arrays, linear in their sizes, where inserting each value would
 * be quadratic.
 */
void
wa_distinct_union(GenericAgg *a, WaDistinctSet *dst, const WaDistinctSet *src)
{
	MemoryContext old;
	Datum	   *merged;
	int			n = 0;
	int			i = 0;
	int			j = 0;

	settled(a, dst);
	settled(a, src);
	dst->saw_null |= src->saw_null;
	if (src->n == 0)
		return;
	/* the comparisons (the type's code) in the caller's memory */
	merged = MemoryContextAlloc(dst->cxt, sizeof(Datum) * ((Size) dst->n + src->n));
	while (i < dst->n || j < src->n)
	{
		int			c;

		/* the comparisons are the type's code, and sets may be large */
		if ((n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (j == src->n)
			c = -1;
		else if (i == dst->n)
			c = 1;
		else
			c = compare(a, dst->values[i], src->values[j]);
		if (c <= 0)
		{
			merged[n++] = dst->values[i++];
			if (c == 0)
				j++;			/* equal: dst keeps the one it saw first */
		}
		else
		{
			Datum		v = src->values[j++];

			if (!a->argbyval)
			{
				old = MemoryContextSwitchTo(dst->cxt);
				v = datumCopy(v, false, a->arglen);
				MemoryContextSwitchTo(old);
			}
			merged[n++] = v;
		}
	}
	if (dst->values != NULL)
		pfree(dst->values);
	dst->values = merged;
	dst->n = dst->capacity = n;
	dst->pending = 0;
}

int
wa_distinct_count(GenericAgg *a, const WaDistinctSet *set)
{
	return settled(a, set)->n;
}

bool
wa_distinct_saw_null(const WaDistinctSet *set)
{
	return set->saw_null;
}

/* The i-th value in the type's order (0 <= i < wa_distinct_count). */
Datum
wa_distinct_value(GenericAgg *a, const WaDistinctSet *set, int i)
{
	settled(a, set);
	Assert(i >= 0 && i < set->n);
	return set->values[i];
}

/* ---------- bytes ---------- */

static Size
value_size(GenericAgg *a, Datum v)
{
	if (a->argbyval)
		return sizeof(Datum);
	return MAXALIGN(datumGetSize(v, false, a->arglen));
}

/* The set as a bytea with a 4-byte header (in the current context). */
Datum
wa_distinct_serialize(GenericAgg *a, const WaDistinctSet *set)
{
	Size		size = IMAGE_VALUES_OFFSET;
	char	   *image;
	char	   *p;

	settled(a, set);
	for (int i = 0; i < set->n; i++)
		size += value_size(a, set->values[i]);
	if (size > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the distinct values of aggregate %s in one slice take too much memory",
						a->col->sql_name)));
	image = palloc0(size);
	SET_VARSIZE(image, size);
	((DistinctImage *) image)->n = set->n;
	((DistinctImage *) image)->saw_null = set->saw_null;
	p = image + IMAGE_VALUES_OFFSET;
	for (int i = 0; i < set->n; i++)
	{
		Datum		v = set->values[i];

		if (a->argbyval)
			memcpy(p, &v, sizeof(Datum));
		else
			memcpy(p, DatumGetPointer(v), datumGetSize(v, false, a->arglen));
		p += value_size(a, v);
	}
	return PointerGetDatum(image);
}

/*
 * A set from its bytes, in the current memory context; by-reference
 * values point into the bytes, which must outlive it.
 */
WaDistinctSet *
wa_distinct_deserialize(GenericAgg *a, const char *bytes)
{
	const DistinctImage *image = (const DistinctImage *) bytes;
	WaDistinctSet *set = wa_distinct_new();
	const char *p = bytes + IMAGE_VALUES_OFFSET;

	set->n = set->capacity = image->n;
	set->saw_null = image->saw_null;
	set->values = palloc(sizeof(Datum) * (set->n + 1));
	for (int i = 0; i < set->n; i++)
	{
		if (a->argbyval)
			memcpy(&set->values[i], p, sizeof(Datum));
		else
			set->values[i] = PointerGetDatum(p);
		p += value_size(a, set->values[i]);
	}
	return set;
}

/* A copy of a set whose values may point into bytes about to go. */
WaDistinctSet *
wa_distinct_copy(GenericAgg *a, const WaDistinctSet *src)
{
	WaDistinctSet *set = wa_distinct_new();

	wa_distinct_union(a, set, src);
	return set;
}

/* ---------- the aggregate over the set ---------- */

/*
 * The aggregate's transition state after its transition function has
 * seen every value of the set in order (NULL last, as in ORDER BY), with
 * the strictness rules of nodeAgg; in the current memory context.
 */
Datum
wa_distinct_fold(GenericAgg *a, const WaDistinctSet *set, bool *isnull)
{
	FunctionCallInfo call = a->trans_call;
	bool		no_value = a->initval_isnull;
	Datum		state = a->initval;
	int			n = settled(a, set)->n + (set->saw_null ? 1 : 0);

	*isnull = a->initval_isnull;
	if (!a->initval_isnull && !a->transbyval)
		state = datumCopy(a->initval, false, a->translen);
	for (int i = 0; i < n; i++)
	{
		bool		v_isnull = i == set->n;
		Datum		v = v_isnull ? (Datum) 0 : set->values[i];

		CHECK_FOR_INTERRUPTS();

		if (a->transfn.fn_strict)
		{
			if (v_isnull)
				continue;
			if (no_value)
			{
				/* a copy: the function may change its state in place */
				state = a->transbyval ? v : datumCopy(v, false, a->translen);
				*isnull = false;
				no_value = false;
				continue;
			}
			if (*isnull)
				break;
		}
		call->args[0].value = state;
		call->args[0].isnull = *isnull;
		call->args[1].value = v;
		call->args[1].isnull = v_isnull;
		call->isnull = false;
		{
			Datum		next = FunctionCallInvoke(call);

			/*
			 * A function that returns its argument (a value of the set)
			 * must not make it the state, which the next call may change
			 * in place: copy it, as nodeAgg does.
			 */
			if (!call->isnull && !a->transbyval && !v_isnull &&
				DatumGetPointer(next) == DatumGetPointer(v))
				next = datumCopy(next, false, a->translen);
			state = next;
		}
		*isnull = call->isnull;
		no_value = false;
	}
	return state;
}
