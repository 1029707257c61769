/*-------------------------------------------------------------------------
 *
 * agg_generic_int.h
 *	  What the two files of generic aggregates share: the aggregates ready
 *	  to call (agg_generic.c) and their states (agg_generic_state.c).
 *
 * src/query/agg_generic_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_AGG_GENERIC_INT_H
#define WA_AGG_GENERIC_INT_H

#include "query/query.h"

#include "engine/wa_mem.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"

/* A state in the engine's memory, in a form any process can read. */
typedef struct WaGenericBlob
{
	uint32		size;			/* of the allocation, header included */
	bool		isnull;			/* the state is SQL NULL */
	/* the state's bytes follow, at BLOB_DATA_OFFSET */
} WaGenericBlob;

#define BLOB_DATA_OFFSET MAXALIGN(sizeof(WaGenericBlob))
#define BLOB_DATA(b) ((char *) (b) + BLOB_DATA_OFFSET)

/* How a transition type's values are kept (see the file header). */
typedef enum StateForm
{
	STATE_BYVAL,
	STATE_FLAT,
	STATE_SERIALIZED,
	STATE_DISTINCT				/* a set of distinct inputs (agg_distinct.c) */
} StateForm;

/* One generic aggregate, ready to call. */
typedef struct GenericAgg
{
	const WaAggColumn *col;
	StateForm	form;
	Oid			transtype;
	int16		translen;
	bool		transbyval;
	Datum		initval;
	bool		initval_isnull;
	int16		resultlen;
	bool		resultbyval;
	char		finalmodify;	/* AGGMODIFY_* */
	int			n_final_args;	/* 1, or 1 + the inputs (FINALFUNC_EXTRA) */

	FmgrInfo	transfn;
	FmgrInfo	combinefn;
	FmgrInfo	finalfn;		/* fn_oid InvalidOid: none */
	FmgrInfo	serialfn;
	FmgrInfo	deserialfn;
	FunctionCallInfo trans_call;	/* state + inputs */
	FunctionCallInfo combine_call;
	FunctionCallInfo final_call;
	FunctionCallInfo serial_call;
	FunctionCallInfo deserial_call;

	/* DISTINCT: the argument's type and ordering */
	bool		distinct;
	int16		arglen;
	bool		argbyval;
	FmgrInfo	cmpfn;
	FunctionCallInfo cmp_call;

	/* checkpoints: the send and receive functions of portable_type() */
	bool		io_ready;
	FmgrInfo	sendfn;
	FmgrInfo	recvfn;
	Oid			ioparam;
} GenericAgg;

typedef struct WaDistinctSet WaDistinctSet;

struct CachedState;

/*
 * What an accumulator's generic slot points to: the state in a form any
 * process can read (blob), and, in the process that changes it, a live
 * value in that process's cache.  A handle never moves, so the cache can
 * point to it while the engine moves the accumulators around.
 */
typedef struct WaStateHandle
{
	WaGenericBlob *blob;		/* NULL: the initial state, or a value only
								 * cached so far */
	uint64		cache_id;		/* the WaGeneric whose cache holds it, or 0 */
	struct CachedState *cached; /* valid only for that WaGeneric */
} WaStateHandle;

/* A state's live value, in the cache context. */
typedef struct CachedState
{
	WaStateHandle *handle;		/* NULL once released */
	GenericAgg *agg;
	wa_mem	   *mem;			/* where its blob is counted */
	Datum		value;			/* owned by the cache context */
	bool		isnull;
	bool		no_value;		/* no input yet, and no initial value */
	bool		dirty;			/* changed since written to the blob */
	MemoryContext cxt;			/* an internal state's or a set's own
								 * memory (its aggregate context), freed
								 * with it; NULL for other forms */
	Size		counted;		/* cxt's bytes in WaGeneric.states_bytes */
	uint32		changes;		/* by wa_state_set, for when to count */
	struct CachedState *prev;	/* in WaGeneric.cached */
	struct CachedState *next;	/* there, or in WaGeneric.free_states */
} CachedState;

struct WaGeneric
{
	wa_agg_generic callbacks;	/* what the engine calls; arg is this */
	int			n_aggs;
	GenericAgg **aggs;			/* by the query's aggregate index; NULL for
								 * kernels */
	int			first_generic;
	AggState   *aggstate;		/* for AggCheckCallContext and friends */
	uint64		id;				/* marks the handles this cache holds */
	MemoryContext cache_cxt;	/* live values, and their contexts */
	bool		callbacks_registered;	/* by a support function: states'
										 * contexts then live until a flush */
	Size		cache_limit;	/* written back beyond this */
	Size		states_bytes;	/* in the states' own contexts */
	int64		n_cached;		/* entries in cached */
	int64		n_written_back;	/* entries the last flush wrote back */
	int64		calls_since_walk;	/* since all contexts were counted */
	int			calls_since_flush;
	ExprContext *fold_context;	/* aggregate context of DISTINCT folds */
	CachedState *cached;		/* every entry, for the flush */
	CachedState *free_states;	/* released entries, to reuse (with an
								 * empty context if they had one) */
	MemoryContext work_cxt;		/* the support functions' scratch */
	MemoryContext result_cxt;	/* the results of one pane's finalization */
	MemoryContext reader_cxt;	/* blobs of a reader's scratch (NULL mem) */
	WaOwnerCodeGuard guard;		/* after the owner's code (OWNER_CODE) */
	void	   *guard_arg;
};


/*
 * Live values a cache may hold before they are written back, at first, and
 * at most: the limit doubles while the states written back are needed
 * again right away (see wa_state_maybe_flush).
 */
#define WA_GENERIC_CACHE_LIMIT ((Size) 64 * 1024 * 1024)
#define WA_GENERIC_CACHE_MAX ((Size) 512 * 1024 * 1024)

/*
 * The support functions and expressions are the owner's code, and may run
 * long: under a pipeline's state lock, which holds interrupts off, they
 * run with interrupts allowed, so that a cancel or a terminate still
 * stops them (the error then throws the engine away, as any error under
 * the lock does; an error resets the holdoff count itself).  And they may
 * catch an error of their own (a PL/pgSQL EXCEPTION block), whose
 * subtransaction abort releases every LWLock of the process, the state
 * lock included: the guard the lock's holder set (wa_generic_set_guard)
 * takes it again afterwards, or errors out, before anything reads the
 * engine again.  The hold-off count it comes back to is the one the
 * lock's acquisition made, which is right only if the lock was held when
 * the code began: the guard checks that first, and errors out if some
 * other code lost it (the engine is then thrown away).
 */
#define OWNER_CODE(g, call) \
	do { \
		WaGeneric  *g_ = (g); \
		uint32		held_; \
		\
		if (g_->guard != NULL) \
			g_->guard(g_->guard_arg, false); \
		held_ = InterruptHoldoffCount; \
		InterruptHoldoffCount = 0; \
		CHECK_FOR_INTERRUPTS(); \
		call; \
		if (g_->guard != NULL) \
			g_->guard(g_->guard_arg, true); \
		InterruptHoldoffCount = held_; \
	} while (0)

/*
 * The aggregate context a support function sees (AggCheckCallContext) while
 * it works on cached state c: the state's own context, so that releasing
 * the state frees what the function allocated for it; the cache's for a
 * state without one; cxt itself when c is NULL.
 */
static inline void
wa_set_aggcontext(WaGeneric *g, const CachedState *c, MemoryContext cxt)
{
	g->aggstate->curaggcontext->ecxt_per_tuple_memory =
		c == NULL ? cxt : c->cxt != NULL ? c->cxt : g->cache_cxt;
}

/* The live value of h if this cache holds it, else NULL. */
static inline CachedState *
wa_state_cached(const WaGeneric *g, const WaStateHandle *h)
{
	if (h != NULL && h->cache_id == g->id)
		return h->cached;
	return NULL;
}

/* agg_generic_state.c */
extern WaStateHandle *wa_handle_create(WaGeneric *g, wa_mem *mem);
extern void wa_handle_free(WaGeneric *g, wa_mem *mem, WaStateHandle *h);
extern WaStateHandle *wa_handle_copy(WaGeneric *g, wa_mem *mem,
									 WaStateHandle *src);
extern CachedState *wa_state_cache(WaGeneric *g, GenericAgg *a, wa_mem *mem,
								   WaStateHandle *h);
extern Datum wa_state_read(WaGeneric *g, GenericAgg *a, const WaStateHandle *h,
						   bool *isnull, bool *no_value, bool *live);
extern void wa_state_set(WaGeneric *g, CachedState *c, Datum value,
						 bool isnull);
extern Datum wa_state_private_copy(WaGeneric *g, GenericAgg *a, Datum value);
extern Datum wa_state_kept_form(GenericAgg *a, Datum value);
extern void wa_blob_store_kept(WaGeneric *g, wa_mem *mem, GenericAgg *a,
							   WaGenericBlob **blob, Datum value, bool isnull);
extern void wa_state_maybe_flush(WaGeneric *g);

/* agg_distinct.c */
extern void wa_distinct_init(GenericAgg *a, WaGeneric *g, Oid arg_type,
							 Oid collation);
extern WaDistinctSet *wa_distinct_new(void);
extern void wa_distinct_add(GenericAgg *a, WaDistinctSet *set, Datum v,
							bool isnull);
extern void wa_distinct_union(GenericAgg *a, WaDistinctSet *dst,
							  const WaDistinctSet *src);
extern Datum wa_distinct_serialize(GenericAgg *a, const WaDistinctSet *set);
extern WaDistinctSet *wa_distinct_deserialize(GenericAgg *a, const char *bytes);
extern WaDistinctSet *wa_distinct_copy(GenericAgg *a, const WaDistinctSet *src);
extern int	wa_distinct_count(GenericAgg *a, const WaDistinctSet *set);
extern bool wa_distinct_saw_null(const WaDistinctSet *set);
extern Datum wa_distinct_value(GenericAgg *a, const WaDistinctSet *set, int i);
extern Datum wa_distinct_fold(GenericAgg *a, const WaDistinctSet *set,
							  bool *isnull);

#endif							/* WA_AGG_GENERIC_INT_H */
