/*-------------------------------------------------------------------------
 *
 * key_portable.c
 *	  Engine keys in a form any machine reads back: for checkpoints.
 *
 * The key image (key_codec.c) holds integers in the machine's byte order
 * and fixed-length values by reference as their in-memory bytes.  A
 * checkpoint may be restored elsewhere (pg_dump keeps the checkpoint
 * table), so on disk every integer of the image is little-endian, and a
 * fixed-length value by reference whose type is wider-aligned than a byte
 * (tid, timetz: structs of integers) is its binary send form, preceded by
 * its length.  Lengths of variable-length values are little-endian too;
 * their payload is bytes already.  A single integer key is its int64,
 * little-endian.
 *
 * On a little-endian machine, for keys of ordinary types, the portable
 * form is the image itself and is copied as it is.
 *
 * src/query/key_portable.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "catalog/pg_type.h"
#include "utils/lsyscache.h"

/* A fixed-length value by reference that is not plain bytes. */
static bool
needs_send_form(const WaKeyColumn *col)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (col->typbyval || col->typlen <= 0)
		return false;
	get_typlenbyvalalign(col->typid, &typlen, &typbyval, &typalign);
	return typalign != TYPALIGN_CHAR;
}

void
wa_key_portable_init(WaKeyPortable *kp, const WaKeyCodec *codec)
{
	bool		any_send = false;

	memset(kp, 0, sizeof(*kp));
	kp->codec = codec;
	kp->cxt = CurrentMemoryContext;
	initStringInfo(&kp->image);
	if (!codec->int_key)
	{
		kp->send = palloc0(sizeof(FmgrInfo) * codec->n_keys);
		kp->recv = palloc0(sizeof(FmgrInfo) * codec->n_keys);
		kp->ioparam = palloc0(sizeof(Oid) * codec->n_keys);
		kp->send_form = palloc0(sizeof(bool) * codec->n_keys);
		for (int i = 0; i < codec->n_keys; i++)
		{
			const WaKeyColumn *col = &codec->keys[i];
			Oid			func;
			bool		varlena;

			if (!needs_send_form(col))
				continue;
			any_send = true;
			kp->send_form[i] = true;
			getTypeBinaryOutputInfo(col->typid, &func, &varlena);
			fmgr_info(func, &kp->send[i]);
			/*
			 * The base type's: a domain's would run the constraints of the
			 * domain's owner under the state lock (the values passed them
			 * when they were made).
			 */
			getTypeBinaryInputInfo(getBaseType(col->typid), &func, &kp->ioparam[i]);
			fmgr_info(func, &kp->recv[i]);
		}
	}
#ifdef WORDS_BIGENDIAN
	kp->is_image = false;
#else
	kp->is_image = !any_send;
#endif
}

/* Append an integer of 1, 2, 4 or 8 bytes, reversing it if need be. */
static void
append_le(StringInfo out, const char *native, int len)
{
#ifdef WORDS_BIGENDIAN
	char		b[8];

	for (int i = 0; i < len; i++)
		b[i] = native[len - 1 - i];
	appendBinaryStringInfo(out, b, len);
#else
	appendBinaryStringInfo(out, native, len);
#endif
}

/* A length: native in an image, little-endian in a portable form. */
static uint32
read_length(const char *p, bool portable)
{
	uint32		n;

	memcpy(&n, p, sizeof(n));
#ifdef WORDS_BIGENDIAN
	if (portable)
		n = pg_bswap32(n);
#endif
	return n;
}

static void
malformed(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("checkpoint holds a malformed window key")));
}

/* A send form to the value's bytes, and the other way round. */
static void
append_sent(WaKeyPortable *kp, int i, const char *value, StringInfo out)
{
	bytea	   *sent = SendFunctionCall(&kp->send[i], PointerGetDatum(value));
	uint32		n = VARSIZE(sent) - VARHDRSZ;

	append_le(out, (const char *) &n, sizeof(n));
	appendBinaryStringInfo(out, VARDATA(sent), n);
	pfree(sent);
}

static void
append_received(WaKeyPortable *kp, int i, const char *sent, uint32 n,
				StringInfo out)
{
	const WaKeyColumn *col = &kp->codec->keys[i];
	StringInfoData buf;
	Datum		value;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, sent, n);

	/*
	 * A receive function says what it finds wrong in its own words
	 * ("insufficient data left in message"); in a checkpoint that means
	 * corrupt, which stops the pipeline instead of retrying it.
	 */
	PG_TRY();
	{
		value = ReceiveFunctionCall(&kp->recv[i], &buf, kp->ioparam[i], col->typmod);
	}
	PG_CATCH();
	{
		MemoryContext cxt = MemoryContextSwitchTo(kp->cxt);
		ErrorData  *edata = CopyErrorData();

		MemoryContextSwitchTo(cxt);
		if (edata->sqlerrcode != ERRCODE_PROTOCOL_VIOLATION &&
			edata->sqlerrcode != ERRCODE_INVALID_BINARY_REPRESENTATION)
			PG_RE_THROW();		/* a cancel, out of memory: not the data */
		FlushErrorState();
		malformed();
	}
	PG_END_TRY();
	if (buf.cursor != buf.len)
		malformed();
	appendBinaryStringInfo(out, DatumGetPointer(value), col->typlen);
	pfree(buf.data);
}

/*
 * Walk an image (to_portable) or a portable form column by column,
 * checking every length before reading past it: a checkpoint is read, not
 * trusted.
 */
static void
convert(WaKeyPortable *kp, const char *p, uint32 len, StringInfo out,
		bool to_portable)
{
	const WaKeyCodec *codec = kp->codec;
	const char *end = p + len;

	for (int i = 0; i < codec->n_keys; i++)
	{
		const WaKeyColumn *col = &codec->keys[i];
		uint32		n;

		if (end - p < 1 || (*p != 0 && *p != 1))
			malformed();
		appendStringInfoChar(out, *p);
		if (*p++ != 0)
			continue;			/* NULL */
		if (col->typbyval || (col->typlen > 0 && !kp->send_form[i]))
		{
			if (end - p < col->typlen)
				malformed();
			if (col->typbyval)
				append_le(out, p, col->typlen);
			else
				appendBinaryStringInfo(out, p, col->typlen);
			p += col->typlen;
			continue;
		}
		if (col->typlen > 0 && to_portable)
		{
			if (end - p < col->typlen)
				malformed();
			append_sent(kp, i, p, out);
			p += col->typlen;
			continue;
		}
		/* a length, then that many bytes */
		if (end - p < (ptrdiff_t) sizeof(n))
			malformed();
		n = read_length(p, !to_portable);
		p += sizeof(n);
		if ((uint32) (end - p) < n)
			malformed();
		if (col->typlen > 0)
			append_received(kp, i, p, n, out);
		else
		{
			append_le(out, (const char *) &n, sizeof(n));
			appendBinaryStringInfo(out, p, n);
		}
		p += n;
	}
	if (p != end)
		malformed();
}

void
wa_key_to_portable(WaKeyPortable *kp, const wa_key *key, StringInfo out)
{
	if (kp->codec->int_key)
	{
		int64		v = key->ival;

		append_le(out, (const char *) &v, sizeof(v));
	}
	else if (kp->is_image)
		appendBinaryStringInfo(out, (const char *) key->bytes, key->len);
	else
		convert(kp, (const char *) key->bytes, key->len, out, true);
}

/*
 * The key of a portable form of len bytes, checked column by column even
 * where the form is the image (the engine and live() trust an image); a
 * composite key's image stays valid until the next call.
 */
void
wa_key_from_portable(WaKeyPortable *kp, const char *p, uint32 len, wa_key *out)
{
	memset(out, 0, sizeof(*out));
	if (kp->codec->int_key)
	{
		uint64		v = 0;

		Oid			t = kp->codec->keys[0].typid;
		int64		ival;

		if (len != sizeof(int64))
			malformed();
		for (int i = 0; i < 8; i++)
			v |= (uint64) (uint8) p[i] << (8 * i);
		ival = (int64) v;
		/* a smaller integer's key: in its range, or the NULL key */
		if (ival != PG_INT64_MIN &&
			((t == INT4OID && (ival < PG_INT32_MIN || ival > PG_INT32_MAX)) ||
			 (t == INT2OID && (ival < PG_INT16_MIN || ival > PG_INT16_MAX))))
			malformed();
		out->ival = ival;
		return;
	}
	resetStringInfo(&kp->image);
	convert(kp, p, len, &kp->image, false);
	out->bytes = (const uint8_t *) kp->image.data;
	out->len = kp->image.len;
}
