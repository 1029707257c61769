/*-------------------------------------------------------------------------
 *
 * key_codec.c
 *	  Grouping keys to engine keys and back.
 *
 * A single integer key travels as an int64, the fastest path (a NULL
 * smallint or integer as a value outside 32 bits; bigint keys only when the
 * column is NOT NULL).
 * Any other key list becomes one byte string: per column a null flag and
 * then the value's image (fixed-length types: their bytes; varlena types:
 * a length and the detoasted payload).  agg_query.c admits only types whose
 * equality is bitwise, so equal keys have equal images.
 *
 * src/query/key_codec.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "utils/datum.h"

/* A NULL smallint or integer key: no such value fits in 32 bits. */
#define WA_NULL_INT_KEY PG_INT64_MIN

void
wa_key_codec_init(WaKeyCodec *codec, const WaAggQuery *q)
{
	codec->n_keys = q->n_keys;
	codec->keys = q->keys;
	codec->int_key = q->int_key;
	initStringInfo(&codec->buf);
}

void
wa_key_encode(WaKeyCodec *codec, const Datum *values, const bool *isnull,
			  wa_key *out)
{
	StringInfo	buf = &codec->buf;

	if (codec->int_key)
	{
		Oid			t = codec->keys[0].typid;

		if (isnull[0])
			out->ival = WA_NULL_INT_KEY;
		else
			out->ival = t == INT8OID ? DatumGetInt64(values[0]) :
				t == INT4OID ? DatumGetInt32(values[0]) : DatumGetInt16(values[0]);
		return;
	}

	resetStringInfo(buf);
	for (int i = 0; i < codec->n_keys; i++)
	{
		const WaKeyColumn *key = &codec->keys[i];

		appendStringInfoChar(buf, isnull[i] ? 1 : 0);
		if (isnull[i])
			continue;
		if (key->typbyval)
		{
			/* store_att_byval's layout, but unaligned */
			union
			{
				int64		i8;
				int32		i4;
				int16		i2;
				char		i1;
			}			v;

			switch (key->typlen)
			{
				case 8:
					v.i8 = DatumGetInt64(values[i]);
					break;
				case 4:
					v.i4 = DatumGetInt32(values[i]);
					break;
				case 2:
					v.i2 = DatumGetInt16(values[i]);
					break;
				default:
					v.i1 = DatumGetChar(values[i]);
					break;
			}
			appendBinaryStringInfo(buf, (char *) &v, key->typlen);
		}
		else if (key->typlen > 0)
			appendBinaryStringInfo(buf, DatumGetPointer(values[i]), key->typlen);
		else
		{
			struct varlena *v = (struct varlena *) DatumGetPointer(values[i]);
			struct varlena *plain = pg_detoast_datum_packed(v);
			uint32		len = VARSIZE_ANY_EXHDR(plain);

			appendBinaryStringInfo(buf, (char *) &len, sizeof(len));
			appendBinaryStringInfo(buf, VARDATA_ANY(plain), len);
			if (plain != v)
				pfree(plain);
		}
	}
	out->bytes = (const uint8_t *) buf->data;
	out->len = buf->len;
}

/*
 * A key that decoding would read past: keys come from another process's
 * memory (live()) or from a checkpoint, so they are checked, not trusted.
 */
static void
key_too_short(const WaKeyCodec *codec)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("malformed window key"),
			 errdetail("The key is shorter than its %d columns need.", codec->n_keys)));
}

void
wa_key_decode(const WaKeyCodec *codec, const wa_key *key, Datum *values,
			  bool *isnull)
{
	const char *p = (const char *) key->bytes;
	const char *end;

	if (codec->int_key)
	{
		Oid			t = codec->keys[0].typid;

		isnull[0] = t != INT8OID && key->ival == WA_NULL_INT_KEY;
		values[0] = isnull[0] ? (Datum) 0 :
			t == INT8OID ? Int64GetDatum(key->ival) :
			t == INT4OID ? Int32GetDatum((int32) key->ival) :
			Int16GetDatum((int16) key->ival);
		return;
	}

	if (p == NULL)
	{
		/* no image: right only for a query without keys */
		if (codec->n_keys > 0)
			key_too_short(codec);
		return;
	}
	end = p + key->len;
	for (int i = 0; i < codec->n_keys; i++)
	{
		const WaKeyColumn *col = &codec->keys[i];

		if (end - p < 1)
			key_too_short(codec);
		isnull[i] = *p++ != 0;
		if (isnull[i])
		{
			values[i] = (Datum) 0;
			continue;
		}
		if (col->typbyval)
		{
			union
			{
				int64		i8;
				int32		i4;
				int16		i2;
				char		i1;
			}			v;

			if (end - p < col->typlen || col->typlen > (int) sizeof(v))
				key_too_short(codec);
			memcpy(&v, p, col->typlen);
			switch (col->typlen)
			{
				case 8:
					values[i] = Int64GetDatum(v.i8);
					break;
				case 4:
					values[i] = Int32GetDatum(v.i4);
					break;
				case 2:
					values[i] = Int16GetDatum(v.i2);
					break;
				default:
					values[i] = CharGetDatum(v.i1);
					break;
			}
			p += col->typlen;
		}
		else if (col->typlen > 0)
		{
			char	   *copy;

			if (end - p < col->typlen)
				key_too_short(codec);
			copy = palloc(col->typlen);
			memcpy(copy, p, col->typlen);
			values[i] = PointerGetDatum(copy);
			p += col->typlen;
		}
		else
		{
			uint32		len;
			struct varlena *v;

			if (end - p < (ptrdiff_t) sizeof(len))
				key_too_short(codec);
			memcpy(&len, p, sizeof(len));
			p += sizeof(len);
			if ((uint32) (end - p) < len || len > MaxAllocSize - VARHDRSZ)
				key_too_short(codec);
			v = palloc(VARHDRSZ + len);
			SET_VARSIZE(v, VARHDRSZ + len);
			memcpy(VARDATA(v), p, len);
			values[i] = PointerGetDatum(v);
			p += len;
		}
	}
}
