/*-------------------------------------------------------------------------
 *
 * fuzz_keys.c
 *	  libFuzzer target: the key codec (key_codec.c) and the keys' portable
 *	  form (key_portable.c).
 *
 * The input chooses the key columns (one integer key, or one to four
 * columns of the shim's types: by value, fixed length by reference,
 * variable length, and tid, which takes the send/receive path), then one
 * of two cases:
 *
 *	- arbitrary bytes as a portable key, as a checkpoint hands them over:
 *	  reading them either fails with a clear error or gives an image that
 *	  decodes into values, which encode into the same image, whose
 *	  portable form is the bytes we started from;
 *	- values decoded from the input (NULLs, int64 extremes, empty and
 *	  long strings): encoded, made portable, read back and decoded, they
 *	  are the values we started from.
 *
 * test/fuzz/fuzz_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_shim.h"

#include "catalog/pg_type.h"
#include "fuzz_input.h"
#include "utils/lsyscache.h"
#include "query/query.h"

#define MAX_COLS 4

typedef struct Case
{
	fuzz_input	in;
	WaKeyColumn cols[MAX_COLS];
	WaKeyCodec	codec;
	WaKeyPortable kp;
	bool		arbitrary;
	/* the arbitrary case */
	char	   *bytes;
	size_t		len;
	wa_key		key;
} Case;

static void
set_up(void *arg)
{
	Case	   *c = arg;
	uint8_t		shape = take_u8(&c->in);

	shim_take_key_columns(&c->in, (shape & 1) != 0, MAX_COLS, &c->codec, c->cols);
	wa_key_portable_init(&c->kp, &c->codec);
	c->arbitrary = (shape & 2) != 0;
}

static bool
same_value(const WaKeyColumn *col, Datum a, Datum b)
{
	if (col->typbyval)
		switch (col->typlen)
		{
			case 8:
				return DatumGetInt64(a) == DatumGetInt64(b);
			case 4:
				return DatumGetInt32(a) == DatumGetInt32(b);
			case 2:
				return DatumGetInt16(a) == DatumGetInt16(b);
			default:
				return DatumGetChar(a) == DatumGetChar(b);
		}
	if (col->typlen > 0)
		return memcmp(DatumGetPointer(a), DatumGetPointer(b), col->typlen) == 0;
	return VARSIZE_ANY_EXHDR(DatumGetPointer(a)) == VARSIZE_ANY_EXHDR(DatumGetPointer(b)) &&
		memcmp(VARDATA_ANY(DatumGetPointer(a)), VARDATA_ANY(DatumGetPointer(b)),
			   VARSIZE_ANY_EXHDR(DatumGetPointer(a))) == 0;
}

static pg_noreturn void
finding(const char *what)
{
	fprintf(stderr, "key codec: %s\n", what);
	abort();
}

/* Bytes read as a portable key, as a checkpoint hands them over. */
static void
read_arbitrary(void *arg)
{
	Case	   *c = arg;
	const uint8_t *p;

	c->len = take_bytes(&c->in, &p, SIZE_MAX);
	c->bytes = palloc(c->len + 1);	/* its own block, for ASan */
	memcpy(c->bytes, p, c->len);
	wa_key_from_portable(&c->kp, c->bytes, (uint32) c->len, &c->key);
}

/* An accepted portable key is canonical, and decodes without error. */
static void
check_accepted(void *arg)
{
	Case	   *c = arg;
	Datum		values[MAX_COLS];
	bool		isnull[MAX_COLS];
	wa_key		again;
	StringInfoData portable;

	memset(&again, 0, sizeof(again));
	wa_key_decode(&c->codec, &c->key, values, isnull);
	wa_key_encode(&c->codec, values, isnull, &again);
	if (c->codec.int_key)
	{
		if (again.ival != c->key.ival)
			finding("an integer key read from its portable form does not survive decoding");
		return;
	}
	if (again.len != c->key.len || memcmp(again.bytes, c->key.bytes, c->key.len) != 0)
		finding("a key read from its portable form encodes differently");
	initStringInfo(&portable);
	wa_key_to_portable(&c->kp, &c->key, &portable);
	if ((size_t) portable.len != c->len || memcmp(portable.data, c->bytes, c->len) != 0)
		finding("a portable form read back is not written back the same");
}

static Datum
take_value(fuzz_input *in, const WaKeyColumn *col)
{
	static const int64 extremes[] = {PG_INT64_MIN, PG_INT64_MAX, 0, -1};
	uint8_t		shape = take_u8(in);

	if (col->typbyval)
	{
		int64		v = shape & 1 ? extremes[(shape >> 1) & 3] : (int64) take_u64(in);

		switch (col->typlen)
		{
			case 8:
				return Int64GetDatum(v);
			case 4:
				return Int32GetDatum((int32) v);
			case 2:
				return Int16GetDatum((int16) v);
			default:
				return CharGetDatum((char) v);
		}
	}
	else
	{
		const uint8_t *p;
		size_t		n = col->typlen > 0 ? (size_t) col->typlen : take_below(in, 300);
		char	   *v = palloc0(VARHDRSZ + n);
		char	   *dst = col->typlen > 0 ? v : VARDATA(v);

		n = take_bytes(in, &p, n);
		memcpy(dst, p, n);
		if (col->typlen < 0)
			SET_VARSIZE(v, VARHDRSZ + n);
		return PointerGetDatum(v);
	}
}

/* Values through the image and the portable form, and back. */
static void
round_trip(void *arg)
{
	Case	   *c = arg;
	Datum		values[MAX_COLS];
	bool		isnull[MAX_COLS];
	Datum		back[MAX_COLS];
	bool		back_null[MAX_COLS];
	wa_key		key;
	wa_key		read;
	StringInfoData portable;

	for (int i = 0; i < c->codec.n_keys; i++)
	{
		/* an int8 is an integer key only where NOT NULL guards it */
		isnull[i] = (take_u8(&c->in) & 7) == 0 &&
			!(c->codec.int_key && c->cols[0].typid == INT8OID);
		values[i] = isnull[i] ? (Datum) 0 : take_value(&c->in, &c->cols[i]);
	}
	memset(&key, 0, sizeof(key));
	wa_key_encode(&c->codec, values, isnull, &key);
	initStringInfo(&portable);
	wa_key_to_portable(&c->kp, &key, &portable);
	wa_key_from_portable(&c->kp, portable.data, (uint32) portable.len, &read);
	if (c->codec.int_key ? read.ival != key.ival :
		read.len != key.len || memcmp(read.bytes, key.bytes, key.len) != 0)
		finding("a key changed on its way through the portable form");
	wa_key_decode(&c->codec, &read, back, back_null);
	for (int i = 0; i < c->codec.n_keys; i++)
		if (back_null[i] != isnull[i] ||
			(!isnull[i] && !same_value(&c->cols[i], values[i], back[i])))
			finding("a key's values changed on their way through the codec");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int clear[] = {ERRCODE_DATA_CORRUPTED};
	Case		c;

	memset(&c, 0, sizeof(c));
	c.in.data = data;
	c.in.size = size;
	if (!shim_try(set_up, &c))
		shim_expect_error(NULL, 0);
	if (c.arbitrary)
	{
		if (!shim_try(read_arbitrary, &c))
			shim_expect_error(clear, lengthof(clear));
		else if (!shim_try(check_accepted, &c))
			shim_expect_error(NULL, 0);
	}
	else if (!shim_try(round_trip, &c))
		shim_expect_error(NULL, 0);
	shim_reset_memory();
	return 0;
}
