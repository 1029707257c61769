/*-------------------------------------------------------------------------
 *
 * agg_generic_portable.c
 *	  Generic aggregates' states in a pipeline's checkpoint: bytes another
 *	  build or machine can read, and the aggregates named by signature.
 *
 * A blob (agg_generic_state.c) holds a by-value Datum or a flat image in
 * this machine's format, which another machine, or another major version
 * of PostgreSQL, may read otherwise.  So a checkpoint holds each state in
 * the form PostgreSQL itself moves values between machines in:
 *
 *	- a by-value or flat state: its type's binary send function's bytes,
 *	  read back through its receive function;
 *	- an internal state: its serial function's bytes, which are what its
 *	  deserial function reads (the blob holds them already);
 *	- a set of DISTINCT values: the number of values, whether a NULL was
 *	  seen, then each value's send bytes, in order.
 *
 * The states of one accumulator follow each other, one per generic
 * aggregate in the query's order: a tag byte (0: the initial state, which
 * needs no bytes; 1: SQL NULL; 2: bytes), then for tag 2 a uint32 length,
 * little-endian, and the bytes.  Bytes are read, not trusted: a receive
 * function checks its input as it does for a COPY BINARY, and any length
 * that reaches past the record is reported as corruption.
 *
 * A checkpoint names its aggregates by signature (the aggregate's
 * qualified name and argument types, its state type, and an internal
 * state's deserial function), not by OID:
 * OIDs change with a dump and restore, and the same OID may name another
 * aggregate after a drop.  A restore refuses states written for another
 * list of aggregates.
 *
 * src/query/agg_generic_portable.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/agg_generic_int.h"
#include "query/little_endian.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#define TAG_INITIAL 0
#define TAG_NULL 1
#define TAG_BYTES 2

/* ---------- the type whose send and receive functions carry a state ---------- */

/*
 * The type of a form's values (InvalidOid: the serial function's bytes).
 * A domain's base type: a domain's receive function would run the
 * constraints of the domain's owner, who may not be the pipeline's, and
 * the values were checked, if ever, when they were made.
 */
static Oid
portable_type(const GenericAgg *a)
{
	switch (a->form)
	{
		case STATE_BYVAL:
		case STATE_FLAT:
			return getBaseType(a->transtype);
		case STATE_DISTINCT:
			return getBaseType(a->col->arg_types[0]);
		case STATE_SERIALIZED:
			break;
	}
	return InvalidOid;
}

/* Error unless values of typid can be sent and received as bytes. */
static void
check_binary_io(const WaAggColumn *col, Oid typid, const char *what)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type typ;
	bool		ok;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for type %u", typid);
	typ = (Form_pg_type) GETSTRUCT(tup);
	ok = OidIsValid(typ->typsend) && OidIsValid(typ->typreceive);
	ReleaseSysCache(tup);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("aggregate %s cannot be used in a pipeline", col->sql_name),
				 errdetail("Its %s, of type %s, has no binary send and receive functions, which a pipeline's checkpoint needs.",
						   what, format_type_be(typid))));
}

void
wa_generic_check_portable(const WaAggQuery *q)
{
	WaGeneric  *g = wa_generic_create(q);

	for (int i = 0; i < g->n_aggs; i++)
	{
		GenericAgg *a = g->aggs[i];

		if (a == NULL)
			continue;
		if (a->form == STATE_DISTINCT)
			check_binary_io(a->col, portable_type(a), "argument");
		else if (a->form != STATE_SERIALIZED)
			check_binary_io(a->col, portable_type(a), "transition state");
	}
	wa_generic_done(g);
}

static void
ensure_binary_io(GenericAgg *a)
{
	Oid			typid = portable_type(a);
	Oid			send;
	Oid			recv;
	bool		varlena;

	if (a->io_ready || !OidIsValid(typid))
		return;
	check_binary_io(a->col, typid, a->form == STATE_DISTINCT ? "argument" :
					"transition state");
	getTypeBinaryOutputInfo(typid, &send, &varlena);
	getTypeBinaryInputInfo(typid, &recv, &a->ioparam);
	fmgr_info_cxt(send, &a->sendfn, GetMemoryChunkContext(a));
	fmgr_info_cxt(recv, &a->recvfn, GetMemoryChunkContext(a));
	a->io_ready = true;
}

/* ---------- signatures ---------- */

void
wa_generic_signature(const WaGeneric *g, StringInfo out)
{
	bool		first = true;

	for (int i = 0; i < g->n_aggs; i++)
	{
		const GenericAgg *a = g->aggs[i];

		if (a == NULL)
			continue;
		appendStringInfo(out, "%s%s%s", first ? "" : ", ",
						 a->col->distinct ? "DISTINCT " : "",
						 format_procedure_qualified(a->col->aggfnoid));
		first = false;
		if (a->col->distinct)
			continue;			/* a set of the argument's values */

		/*
		 * The state's type, and for internal states the function that
		 * reads their bytes, as this process found them: a state is handed
		 * only to what wrote it.
		 */
		appendStringInfo(out, " STATE %s", format_type_be_qualified(a->transtype));
		if (a->form == STATE_SERIALIZED)
			appendStringInfo(out, " DESERIALFUNC %s",
							 format_procedure_qualified(a->deserialfn.fn_oid));
	}
}

/* ---------- states to bytes ---------- */

static void
put_le32(StringInfo out, uint32 v)
{
	char		bytes[4];

	wa_store_le32(bytes, v);
	appendBinaryStringInfo(out, bytes, sizeof(bytes));
}

/* One value's send bytes, with their length. */
static void
put_sent(StringInfo out, GenericAgg *a, Datum value)
{
	bytea	   *sent = SendFunctionCall(&a->sendfn, value);

	put_le32(out, VARSIZE(sent) - VARHDRSZ);
	appendBinaryStringInfo(out, VARDATA(sent), VARSIZE(sent) - VARHDRSZ);
}

static void
blob_to_portable(GenericAgg *a, const WaGenericBlob *b, StringInfo out)
{
	const char *data = BLOB_DATA(b);
	StringInfoData set;
	WaDistinctSet *values;
	int			n;

	switch (a->form)
	{
		case STATE_BYVAL:
			{
				Datum		d;

				memcpy(&d, data, sizeof(Datum));
				put_sent(out, a, d);
				return;
			}
		case STATE_FLAT:
			put_sent(out, a, PointerGetDatum(data));
			return;
		case STATE_SERIALIZED:
			put_le32(out, VARSIZE(data) - VARHDRSZ);
			appendBinaryStringInfo(out, VARDATA(data), VARSIZE(data) - VARHDRSZ);
			return;
		case STATE_DISTINCT:
			values = wa_distinct_deserialize(a, data);
			initStringInfo(&set);
			n = wa_distinct_count(a, values);
			put_le32(&set, (uint32) n);
			appendStringInfoChar(&set, wa_distinct_saw_null(values) ? 1 : 0);
			for (int i = 0; i < n; i++)
				put_sent(&set, a, wa_distinct_value(a, values, i));
			put_le32(out, (uint32) set.len);
			appendBinaryStringInfo(out, set.data, set.len);
			return;
	}
}

void
wa_generic_states_to_portable(WaGeneric *g, const wa_engine *engine,
							  const void *acc, StringInfo out)
{
	MemoryContext old = MemoryContextSwitchTo(g->work_cxt);

	for (int i = 0; i < g->n_aggs; i++)
	{
		GenericAgg *a = g->aggs[i];
		WaStateHandle *h;

		if (a == NULL)
			continue;
		h = *wa_engine_acc_state(engine, acc, i);
		/* written back before the checkpoint (wa_generic_write_back) */
		Assert(h == NULL || wa_state_cached(g, h) == NULL ||
			   !wa_state_cached(g, h)->dirty);
		if (h == NULL || h->blob == NULL)
			appendStringInfoChar(out, TAG_INITIAL);
		else if (h->blob->isnull)
			appendStringInfoChar(out, TAG_NULL);
		else
		{
			ensure_binary_io(a);
			appendStringInfoChar(out, TAG_BYTES);
			blob_to_portable(a, h->blob, out);
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(g->work_cxt);
}

/* ---------- bytes to states ---------- */

static pg_noreturn void
corrupt_states(const GenericAgg *a, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("checkpoint holds a corrupt state of aggregate %s: %s",
					a->col->sql_name, detail),
			 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
}

/* A value from its send bytes, every byte of them read. */
static Datum
receive(GenericAgg *a, const char *data, uint32 len)
{
	StringInfoData buf;
	Datum		value;

	buf.data = palloc(len + 1);
	memcpy(buf.data, data, len);
	buf.data[len] = '\0';
	buf.len = (int) len;
	buf.maxlen = (int) len + 1;
	buf.cursor = 0;
	value = ReceiveFunctionCall(&a->recvfn, &buf, a->ioparam, -1);
	if (buf.cursor != buf.len)
		corrupt_states(a, "a value has bytes its type does not read");
	return value;
}

/* The bytes of one length-prefixed field at *p, within end. */
static const char *
take_field(const GenericAgg *a, const char **p, const char *end, uint32 *len)
{
	const char *data;

	if (end - *p < (ptrdiff_t) sizeof(uint32))
		corrupt_states(a, "a length is cut short");
	*len = wa_read_le32(*p);
	*p += sizeof(uint32);
	if ((uint64) (end - *p) < *len)
		corrupt_states(a, "a state reaches past the end of its record");
	data = *p;
	*p += *len;
	return data;
}

/* The state in bytes, in the form a blob keeps (wa_state_kept_form). */
static Datum
portable_to_value(GenericAgg *a, const char *data, uint32 len)
{
	const char *p = data;
	const char *end = data + len;
	WaDistinctSet *set;
	uint32		n;
	bytea	   *bytes;

	switch (a->form)
	{
		case STATE_BYVAL:
		case STATE_FLAT:
			return wa_state_kept_form(a, receive(a, data, len));
		case STATE_SERIALIZED:
			bytes = palloc(VARHDRSZ + len);
			SET_VARSIZE(bytes, VARHDRSZ + len);
			memcpy(VARDATA(bytes), data, len);
			return PointerGetDatum(bytes);
		case STATE_DISTINCT:
			if (len < sizeof(uint32) + 1)
				corrupt_states(a, "a set of distinct values is cut short");
			n = wa_read_le32(p);
			set = wa_distinct_new();
			if (p[sizeof(uint32)] != 0)
				wa_distinct_add(a, set, (Datum) 0, true);
			p += sizeof(uint32) + 1;
			for (uint32 i = 0; i < n; i++)
			{
				uint32		vlen;
				const char *v = take_field(a, &p, end, &vlen);

				wa_distinct_add(a, set, receive(a, v, vlen), false);
			}
			if (p != end || wa_distinct_count(a, set) != (int) n)
				corrupt_states(a, "a set of distinct values does not add up");
			return wa_state_kept_form(a, PointerGetDatum(set));
	}
	return (Datum) 0;
}

void
wa_generic_states_from_portable(WaGeneric *g, wa_engine *engine, void *acc,
								const char *data, uint32 len)
{
	const char *p = data;
	const char *end = data + len;
	wa_mem	   *mem = wa_engine_mem(engine);
	MemoryContext old = MemoryContextSwitchTo(g->work_cxt);

	for (int i = 0; i < g->n_aggs; i++)
	{
		GenericAgg *a = g->aggs[i];
		void	  **slot;
		WaStateHandle *h;
		uint8		tag;

		if (a == NULL)
			continue;
		slot = wa_engine_acc_state(engine, acc, i);
		*slot = NULL;
		if (p >= end)
			corrupt_states(a, "the record ends before it");
		tag = (uint8) *p++;
		if (tag == TAG_INITIAL)
			continue;
		if (tag != TAG_NULL && tag != TAG_BYTES)
			corrupt_states(a, psprintf("unknown tag %d", (int) tag));
		h = wa_handle_create(g, mem);
		*slot = h;
		if (tag == TAG_NULL)
			wa_blob_store_kept(g, mem, a, &h->blob, (Datum) 0, true);
		else
		{
			uint32		flen;
			const char *field = take_field(a, &p, end, &flen);

			ensure_binary_io(a);
			wa_blob_store_kept(g, mem, a, &h->blob,
							   portable_to_value(a, field, flen), false);
		}
	}
	if (p != end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint holds more aggregate states than the pipeline's aggregates"),
				 errhint("Drop the pipeline and create it again to rebuild its state from its source.")));
	MemoryContextSwitchTo(old);
	MemoryContextReset(g->work_cxt);
}
