/*-------------------------------------------------------------------------
 *
 * agg_generic_state.c
 *	  The states of generic aggregates: blobs any process can read, and a
 *	  cache of live values in the process that changes them.
 *
 * Each accumulator's generic slot points to a handle (WaStateHandle), in
 * the engine's memory like the blob it holds: the state as bytes (the
 * Datum of a by-value type, the flat image of another, the serial
 * function's bytes of an internal state; see agg_generic.c).  Turning
 * bytes into a value and back for every row would cost a deserialization
 * and a serialization per row (an hll sketch is kilobytes), so the
 * process that feeds the engine keeps the live values of the states it
 * touched in its cache, and writes them back to their blobs only when
 * the cache grows past its limit, when a copy of a state is made, and
 * when asked (wa_generic_flush: before anyone else reads the blobs).  A
 * handle remembers which cache holds it (cache_id: the process id and a
 * count), so that another process, or another WaGeneric, reads the blob
 * and never the pointer.  A process that dies leaves its ids in handles:
 * its engine is then thrown away, never read again.
 *
 * The cache context is the aggregate context the support functions see
 * (AggCheckCallContext): internal states live there, and the callbacks
 * registered with AggRegisterCallback run when it is reset, at a flush.
 *
 * src/query/agg_generic_state.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/agg_generic_int.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "utils/datum.h"


/* ---------- blobs ---------- */

static WaGenericBlob *
blob_alloc(WaGeneric *g, wa_mem *mem, Size data_size)
{
	Size		size = BLOB_DATA_OFFSET + MAXALIGN(data_size);
	WaGenericBlob *b;

	if (size > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("aggregate state of %zu bytes is too large for a window", size)));
	b = mem != NULL ? wa_mem_alloc(mem, size) :
		MemoryContextAlloc(g->reader_cxt, size);
	b->size = (uint32) size;
	b->isnull = false;
	return b;
}

static void
blob_free(wa_mem *mem, WaGenericBlob *b)
{
	if (b == NULL)
		return;
	if (mem != NULL)
		wa_mem_free(mem, b, b->size);
	else
		pfree(b);
}

/*
 * A state value in its kept form: a varlena flattened (detoasted, and an
 * expanded object's flat image) with a 4-byte header; an internal state
 * serialized (a bytea with a 4-byte header); otherwise as it is.
 */
Datum
wa_state_kept_form(GenericAgg *a, Datum value)
{
	FunctionCallInfo call;
	Datum		bytes;

	switch (a->form)
	{
		case STATE_BYVAL:
			return value;
		case STATE_FLAT:
			if (a->translen == -1)
				return PointerGetDatum(pg_detoast_datum((struct varlena *) DatumGetPointer(value)));
			return value;
		case STATE_SERIALIZED:
			call = a->serial_call;
			call->args[0].value = value;
			call->args[0].isnull = false;
			call->isnull = false;
			bytes = FunctionCallInvoke(call);
			if (call->isnull)
				elog(ERROR, "serialization function of aggregate %s returned null",
					 a->col->sql_name);
			return PointerGetDatum(pg_detoast_datum((struct varlena *) DatumGetPointer(bytes)));
		case STATE_DISTINCT:
			return wa_distinct_serialize(a, (WaDistinctSet *) DatumGetPointer(value));
	}
	return value;
}

/* Bytes of a state value in its kept form. */
static Size
state_data_size(const GenericAgg *a, Datum kept)
{
	switch (a->form)
	{
		case STATE_BYVAL:
			return sizeof(Datum);
		case STATE_FLAT:
			return datumGetSize(kept, false, a->translen);
		case STATE_SERIALIZED:
		case STATE_DISTINCT:
			return VARSIZE(DatumGetPointer(kept));
	}
	return 0;
}

/*
 * Write a value in its kept form into *blob, reusing the blob when the
 * size is the same.
 */
void
wa_blob_store_kept(WaGeneric *g, wa_mem *mem, GenericAgg *a,
				   WaGenericBlob **blob, Datum value, bool isnull)
{
	WaGenericBlob *b = *blob;
	Size		data_size = 0;

	if (!isnull)
		data_size = state_data_size(a, value);
	if (b == NULL || b->size != BLOB_DATA_OFFSET + MAXALIGN(data_size))
	{
		WaGenericBlob *nb = blob_alloc(g, mem, data_size);

		blob_free(mem, b);
		b = nb;
		*blob = b;
	}
	b->isnull = isnull;
	if (isnull)
		return;
	if (a->form == STATE_BYVAL)
		memcpy(BLOB_DATA(b), &value, sizeof(Datum));
	else
		memcpy(BLOB_DATA(b), DatumGetPointer(value), data_size);
}

/* An internal state from its serial function's bytes (a 4-byte bytea). */
static Datum
deserialize(GenericAgg *a, Datum bytes, bool *isnull)
{
	FunctionCallInfo call = a->deserial_call;
	Datum		value;

	call->args[0].value = bytes;
	call->args[0].isnull = false;
	call->args[1].value = (Datum) 0;
	call->args[1].isnull = false;
	call->isnull = false;
	value = FunctionCallInvoke(call);
	*isnull = call->isnull;
	return value;
}

/*
 * The value of a blob, in the current memory context (a deserial function
 * may use the aggregate context).  A flat value or a set is copied out of
 * the blob first: the owner's code that reads it may lose the state lock
 * that keeps the blob in place (see OWNER_CODE).
 */
static Datum
blob_value(GenericAgg *a, const WaGenericBlob *b, bool *isnull)
{
	Datum		value;
	char	   *copy;

	*isnull = b->isnull;
	if (b->isnull)
		return (Datum) 0;
	switch (a->form)
	{
		case STATE_BYVAL:
			memcpy(&value, BLOB_DATA(b), sizeof(Datum));
			return value;
		case STATE_FLAT:
			return datumCopy(PointerGetDatum(BLOB_DATA(b)), false, a->translen);
		case STATE_SERIALIZED:
			return deserialize(a, PointerGetDatum(BLOB_DATA(b)), isnull);
		case STATE_DISTINCT:
			copy = palloc(b->size - BLOB_DATA_OFFSET);
			memcpy(copy, BLOB_DATA(b), b->size - BLOB_DATA_OFFSET);
			return PointerGetDatum(wa_distinct_deserialize(a, copy));
	}
	return (Datum) 0;
}

/* The initial value, a copy of its own (in the current memory context). */
static Datum
initial_value(const GenericAgg *a, bool *isnull)
{
	/* DISTINCT: the empty set, whatever the aggregate starts from */
	if (a->form == STATE_DISTINCT)
	{
		*isnull = false;
		return PointerGetDatum(wa_distinct_new());
	}
	*isnull = a->initval_isnull;
	if (a->initval_isnull || a->transbyval)
		return a->initval;
	return datumCopy(a->initval, false, a->translen);
}

/* ---------- handles ---------- */

WaStateHandle *
wa_handle_create(WaGeneric *g, wa_mem *mem)
{
	WaStateHandle *h = mem != NULL ? wa_mem_alloc(mem, sizeof(WaStateHandle)) :
		MemoryContextAlloc(g->reader_cxt, sizeof(WaStateHandle));

	h->blob = NULL;
	h->cache_id = 0;
	h->cached = NULL;
	return h;
}

void
wa_handle_free(WaGeneric *g, wa_mem *mem, WaStateHandle *h)
{
	CachedState *c = wa_state_cached(g, h);

	/*
	 * The cache entry goes with the next flush; its value now (windows'
	 * scratch states come and go once per pane): a flat value, or an
	 * internal state or set with its own context.
	 */
	if (c != NULL)
	{
		if (c->agg->form == STATE_FLAT && !c->isnull)
			pfree(DatumGetPointer(c->value));
		c->isnull = true;
		c->handle = NULL;

		/*
		 * Unless a registered callback may still need the state's memory
		 * at the flush, the entry and its context are reused (emptied:
		 * windows' scratch states would otherwise make and delete a
		 * context each).
		 */
		if (!g->callbacks_registered)
		{
			if (c->cxt != NULL)
			{
				MemoryContextReset(c->cxt);
				g->states_bytes -= c->counted;
				c->counted = 0;
			}
			if (c->prev != NULL)
				c->prev->next = c->next;
			else
				g->cached = c->next;
			if (c->next != NULL)
				c->next->prev = c->prev;
			g->n_cached--;
			c->next = g->free_states;
			g->free_states = c;
		}
	}
	blob_free(mem, h->blob);
	if (mem != NULL)
		wa_mem_free(mem, h, sizeof(WaStateHandle));
	else
		pfree(h);
}

/* Write a cached value back to its blob. */
static void
flush_one(WaGeneric *g, CachedState *c)
{
	MemoryContext old;

	if (c->handle == NULL || !c->dirty || c->no_value)
		return;
	old = MemoryContextSwitchTo(g->work_cxt);
	wa_blob_store_kept(g, c->mem, c->agg, &c->handle->blob,
					   c->isnull ? (Datum) 0 : wa_state_kept_form(c->agg, c->value),
					   c->isnull);
	MemoryContextSwitchTo(old);
	MemoryContextReset(g->work_cxt);
	c->dirty = false;
}

/* A handle of its own holding what src holds (src is written back first). */
WaStateHandle *
wa_handle_copy(WaGeneric *g, wa_mem *mem, WaStateHandle *src)
{
	WaStateHandle *h = wa_handle_create(g, mem);
	CachedState *c = wa_state_cached(g, src);

	if (c != NULL)
		flush_one(g, c);
	if (src->blob != NULL)
	{
		h->blob = blob_alloc(g, mem, src->blob->size - BLOB_DATA_OFFSET);
		memcpy(h->blob, src->blob, src->blob->size);
	}
	return h;
}

/* ---------- the cache ---------- */

/*
 * Keep the count of the states' own contexts current after c changed (a
 * state's context is a leaf, or has the few contexts of its expanded
 * values: counting it costs little, unlike counting every state's).
 */
static void
count_state_memory(WaGeneric *g, CachedState *c)
{
	Size		now;

	if (c->cxt == NULL)
		return;
	now = MemoryContextMemAllocated(c->cxt, true);
	g->states_bytes += now - c->counted;
	c->counted = now;
}

/* The handle's live value, brought into the cache if it is not there. */
CachedState *
wa_state_cache(WaGeneric *g, GenericAgg *a, wa_mem *mem, WaStateHandle *h)
{
	CachedState *c = wa_state_cached(g, h);
	MemoryContext old;
	MemoryContext cxt;

	if (c != NULL)
		return c;

	/* an entry released before, with its (empty) context, or a new one */
	cxt = NULL;
	if (g->free_states != NULL)
	{
		c = g->free_states;
		g->free_states = c->next;
		cxt = c->cxt;
	}
	else
		c = MemoryContextAlloc(g->cache_cxt, sizeof(CachedState));
	c->handle = h;
	c->agg = a;
	c->mem = mem;
	c->dirty = false;
	/* an internal state or a set: in memory of its own, freed with it */
	if (a->form == STATE_SERIALIZED || a->form == STATE_DISTINCT)
	{
		if (cxt == NULL)
			cxt = AllocSetContextCreate(g->cache_cxt, "windowagg aggregate state",
										ALLOCSET_SMALL_SIZES);
	}
	else if (cxt != NULL)
	{
		MemoryContextDelete(cxt);
		cxt = NULL;
	}
	c->cxt = cxt;
	c->counted = 0;
	c->changes = 0;
	old = MemoryContextSwitchTo(c->cxt != NULL ? c->cxt : g->cache_cxt);
	wa_set_aggcontext(g, c, NULL);
	c->no_value = h->blob == NULL && a->initval_isnull &&
		a->form != STATE_DISTINCT;
	if (h->blob == NULL)
		c->value = initial_value(a, &c->isnull);
	else
	{
		/* values of its own: the blob is rewritten at the next flush */
		c->value = blob_value(a, h->blob, &c->isnull);
	}
	MemoryContextSwitchTo(old);
	/* a value read from a blob now; a new one at its first change */
	if (h->blob != NULL)
		count_state_memory(g, c);
	c->prev = NULL;
	c->next = g->cached;
	if (g->cached != NULL)
		g->cached->prev = c;
	g->cached = c;
	g->n_cached++;
	h->cache_id = g->id;
	h->cached = c;
	return c;
}

/*
 * A handle's value, to read: the live one if this cache holds it (*live),
 * else the blob's (see blob_value) or the initial value.  *no_value: no
 * input yet and no initial value.
 */
Datum
wa_state_read(WaGeneric *g, GenericAgg *a, const WaStateHandle *h,
			  bool *isnull, bool *no_value, bool *live)
{
	CachedState *c = wa_state_cached(g, h);

	*live = c != NULL;
	if (c != NULL)
	{
		*isnull = c->isnull;
		*no_value = c->no_value;
		return c->value;
	}
	if (h == NULL || h->blob == NULL)
	{
		*no_value = a->initval_isnull && a->form != STATE_DISTINCT;
		return initial_value(a, isnull);
	}
	*no_value = false;
	return blob_value(a, h->blob, isnull);
}

/*
 * Make a support function's result the cached state's value.  A by-
 * reference value that is not the one it had (a new one, or one of the
 * function's arguments) is copied into the cache, and the old one freed,
 * as nodeAgg does; an internal state is the function's to manage.
 */
void
wa_state_set(WaGeneric *g, CachedState *c, Datum value, bool isnull)
{
	GenericAgg *a = c->agg;

	if (a->form == STATE_FLAT &&
		(isnull || c->isnull || DatumGetPointer(value) != DatumGetPointer(c->value)))
	{
		if (!isnull)
		{
			MemoryContext old = MemoryContextSwitchTo(g->cache_cxt);

			value = datumCopy(value, false, a->translen);
			MemoryContextSwitchTo(old);
		}
		if (!c->isnull)
			pfree(DatumGetPointer(c->value));
	}
	c->value = value;
	c->isnull = isnull;
	c->no_value = false;
	c->dirty = true;

	/*
	 * Reading the state's context is a cache miss per row when rows go to
	 * many states: count it at its 1st, 2nd, 4th ... 64th change, then at
	 * every 64th (and the periodic walk in wa_state_maybe_flush counts
	 * everything), so a state's first allocations are seen at once.
	 */
	c->changes++;
	if ((c->changes & (c->changes - 1)) == 0 || c->changes % 64 == 0)
		count_state_memory(g, c);
}

/*
 * A copy of an internal state that no one else holds, for a function that
 * may change it or keep it (through its serialization, in the current
 * memory context and the aggregate context).
 */
Datum
wa_state_private_copy(WaGeneric *g, GenericAgg *a, Datum value)
{
	bool		isnull;
	Datum		copy = deserialize(a, wa_state_kept_form(a, value), &isnull);

	if (isnull)
		elog(ERROR, "deserialization function of aggregate %s returned null",
			 a->col->sql_name);
	return copy;
}

static void
write_back(WaGeneric *g)
{
	for (CachedState *c = g->cached; c != NULL; c = c->next)
		flush_one(g, c);
}

void
wa_generic_write_back(WaGeneric *g)
{
	/* serial functions are code of the aggregate's owner */
	OWNER_CODE(g, write_back(g));
}

void
wa_generic_forget(WaGeneric *g)
{
	/* the handles are gone with their engine: only the values go here */
	g->cached = NULL;
	g->free_states = NULL;
	g->n_cached = 0;
	g->states_bytes = 0;
	wa_set_aggcontext(g, NULL, g->cache_cxt);
	ReScanExprContext(g->aggstate->curaggcontext);
	g->callbacks_registered = false;
	MemoryContextReset(g->work_cxt);
	MemoryContextReset(g->result_cxt);
	g->calls_since_flush = 0;
}

void
wa_generic_flush(WaGeneric *g)
{
	for (CachedState *c = g->cached; c != NULL; c = c->next)
	{
		flush_one(g, c);
		if (c->handle != NULL)
		{
			c->handle->cache_id = 0;
			c->handle->cached = NULL;
		}
	}
	g->cached = NULL;
	g->free_states = NULL;
	g->n_cached = 0;
	g->states_bytes = 0;
	/* callbacks registered by the support functions run, then the reset */
	wa_set_aggcontext(g, NULL, g->cache_cxt);
	ReScanExprContext(g->aggstate->curaggcontext);
	g->callbacks_registered = false;
}

/*
 * Beyond the limit, write everything back and start afresh.  The cache's
 * own bytes are counted on every call, the states' contexts as they
 * change (wa_state_set), and every context below the cache (expanded
 * values of flat states too) once in four times as many calls as there
 * are cached states, since walking them all costs a cache miss each.  A
 * cache that fills again within 16 calls per state it wrote back is too
 * small for the states in use (a thousand keys' hll sketches take 128 MB
 * unpacked), and writing them back and reading them again would cost
 * more than the rows: the limit doubles, up to WA_GENERIC_CACHE_MAX.
 */
void
wa_state_maybe_flush(WaGeneric *g)
{
	Size		used;

	g->calls_since_flush++;
	used = MemoryContextMemAllocated(g->cache_cxt, false) + g->states_bytes;
	/* the walk, once per four times as many calls as it visits contexts */
	if (used <= g->cache_limit &&
		++g->calls_since_walk >= Max(1024, 4 * g->n_cached))
	{
		g->calls_since_walk = 0;
		used = MemoryContextMemAllocated(g->cache_cxt, true);
	}
	if (used <= g->cache_limit)
		return;
	if (g->calls_since_flush < 16 * g->n_written_back + 16 &&
		g->cache_limit < WA_GENERIC_CACHE_MAX)
		g->cache_limit *= 2;
	else
	{
		g->n_written_back = g->n_cached;
		wa_generic_flush(g);
		g->calls_since_flush = 0;
	}
}
