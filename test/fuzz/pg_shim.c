/*-------------------------------------------------------------------------
 *
 * pg_shim.c
 *	  Just enough of a PostgreSQL backend for the fuzzers (see pg_shim.h).
 *
 * test/fuzz/pg_shim.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_shim.h"

#include <stdio.h>
#include <stdlib.h>

#include "catalog/pg_type.h"
#include "fuzz_input.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

ShimError	shim_error;
sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;
MemoryContext CurrentMemoryContext = NULL;

/* ---------- memory: every block on one list, freed by a reset ---------- */

typedef struct Block
{
	struct Block *prev;
	struct Block *next;
	Size		size;
	/* 16 bytes of alignment, as palloc gives */
	max_align_t payload[];
} Block;

static Block blocks = {&blocks, &blocks, 0};

static void *
shim_alloc(Size size, bool zero)
{
	Block	   *b;

	/* what palloc refuses, as an internal error: a finding if reached */
	if (!AllocHugeSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	b = zero ? calloc(1, sizeof(Block) + size) : malloc(sizeof(Block) + size);
	if (b == NULL)
		abort();
	b->size = size;
	b->next = blocks.next;
	b->prev = &blocks;
	blocks.next->prev = b;
	blocks.next = b;
	return b->payload;
}

static Block *
block_of(void *p)
{
	return (Block *) ((char *) p - offsetof(Block, payload));
}

void *
palloc(Size size)
{
	if (!AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	return shim_alloc(size, false);
}

void *
palloc0(Size size)
{
	if (!AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	return shim_alloc(size, true);
}

void *
palloc_extended(Size size, int flags)
{
	if (!(flags & MCXT_ALLOC_HUGE) && !AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	return shim_alloc(size, (flags & MCXT_ALLOC_ZERO) != 0);
}

void
pfree(void *p)
{
	Block	   *b = block_of(p);

	b->prev->next = b->next;
	b->next->prev = b->prev;
	free(b);
}

void *
repalloc_huge(void *p, Size size)
{
	Block	   *old = block_of(p);
	void	   *q = shim_alloc(size, false);

	memcpy(q, p, Min(old->size, size));
	pfree(p);
	return q;
}

void *
repalloc(void *p, Size size)
{
	if (!AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	return repalloc_huge(p, size);
}

void
shim_reset_memory(void)
{
	while (blocks.next != &blocks)
		pfree(blocks.next->payload);
}

char *
psprintf(const char *fmt,...)
{
	char		buf[1024];
	va_list		ap;
	char	   *s;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = palloc(strlen(buf) + 1);
	strcpy(s, buf);
	return s;
}

/* ---------- StringInfo ---------- */

void
initStringInfo(StringInfo str)
{
	str->maxlen = 64;
	str->data = palloc(str->maxlen);
	resetStringInfo(str);
}

void
resetStringInfo(StringInfo str)
{
	str->data[0] = '\0';
	str->len = 0;
	str->cursor = 0;
}

void
enlargeStringInfo(StringInfo str, int needed)
{
	Size		want;

	if (needed < 0 || (Size) needed >= MaxAllocSize - (Size) str->len)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("out of memory")));
	want = (Size) str->len + needed + 1;
	if (want <= (Size) str->maxlen)
		return;
	while (want > (Size) str->maxlen)
		str->maxlen = Min((Size) str->maxlen * 2, MaxAllocSize);
	str->data = repalloc(str->data, str->maxlen);
}

void
appendBinaryStringInfo(StringInfo str, const char *data, int datalen)
{
	enlargeStringInfo(str, datalen);
	memcpy(str->data + str->len, data, datalen);
	str->len += datalen;
	str->data[str->len] = '\0';
}

void
appendStringInfoChar(StringInfo str, char ch)
{
	appendBinaryStringInfo(str, &ch, 1);
}

/* ---------- errors: an ERROR jumps back to shim_try ---------- */

static ShimError pending;

bool
errstart(int elevel, const char *domain)
{
	if (elevel < ERROR)
		return false;			/* notices and warnings are not findings */
	memset(&pending, 0, sizeof(pending));
	pending.elevel = elevel;
	pending.sqlerrcode = ERRCODE_INTERNAL_ERROR;	/* elog's */
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	pending.filename = filename;
	pending.lineno = lineno;
	shim_error = pending;
	if (pending.elevel > ERROR || PG_exception_stack == NULL)
	{
		fprintf(stderr, "%s:%d: FATAL or an ERROR outside shim_try: %s\n",
				filename, lineno, pending.message);
		abort();
	}
	siglongjmp(*PG_exception_stack, 1);
}

int
errcode(int sqlerrcode)
{
	pending.sqlerrcode = sqlerrcode;
	return 0;
}

#define FORMAT_INTO(field) \
	do { \
		va_list		ap; \
		va_start(ap, fmt); \
		vsnprintf(pending.field, sizeof(pending.field), fmt, ap); \
		va_end(ap); \
	} while (0)

int
errmsg(const char *fmt,...)
{
	FORMAT_INTO(message);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	FORMAT_INTO(message);
	return 0;
}

int
errdetail(const char *fmt,...)
{
	FORMAT_INTO(detail);
	return 0;
}

int
errhint(const char *fmt,...)
{
	FORMAT_INTO(hint);
	return 0;
}

/* PG_CATCH's tools: the error just raised, forgotten, or raised again */
ErrorData *
CopyErrorData(void)
{
	ErrorData  *edata = palloc0(sizeof(ErrorData));

	edata->elevel = shim_error.elevel;
	edata->sqlerrcode = shim_error.sqlerrcode;
	edata->message = psprintf("%s", shim_error.message);
	return edata;
}

void
FlushErrorState(void)
{
}

void
pg_re_throw(void)
{
	if (PG_exception_stack == NULL)
		abort();
	siglongjmp(*PG_exception_stack, 1);
}

bool
shim_try(void (*fn) (void *arg), void *arg)
{
	sigjmp_buf	jb;
	sigjmp_buf *volatile saved = PG_exception_stack;

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		fn(arg);
		PG_exception_stack = saved;
		return true;
	}
	PG_exception_stack = saved;
	/* WA_FUZZ_VERBOSE=1: say which error an input ended in */
	if (getenv("WA_FUZZ_VERBOSE") != NULL)
		fprintf(stderr, "ERROR at %s:%d: %s\n", shim_error.filename,
				shim_error.lineno, shim_error.message);
	return false;
}

void
shim_expect_error(const int *codes, int n_codes)
{
	char		state[6];

	for (int i = 0; i < n_codes; i++)
		if (shim_error.sqlerrcode == codes[i])
			return;
	for (int i = 0; i < 5; i++)
		state[i] = PGUNSIXBIT(shim_error.sqlerrcode >> (6 * i));
	state[5] = '\0';
	fprintf(stderr, "unexpected error (SQLSTATE %s) at %s:%d: %s\n",
			state, shim_error.filename, shim_error.lineno, shim_error.message);
	abort();
}

/* The harnesses hand over plain varlenas only: nothing to detoast. */
struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	if (VARATT_IS_EXTENDED(datum) && !VARATT_IS_SHORT(datum))
		abort();
	return datum;
}

/* ---------- a catalog of a few types, for key columns ---------- */

const ShimType shim_types[] = {
	{BOOLOID, 1, true, TYPALIGN_CHAR},
	{CHAROID, 1, true, TYPALIGN_CHAR},
	{INT2OID, 2, true, TYPALIGN_SHORT},
	{INT4OID, 4, true, TYPALIGN_INT},
	{INT8OID, 8, true, TYPALIGN_DOUBLE},
	{FLOAT8OID, 8, true, TYPALIGN_DOUBLE},
	{TEXTOID, -1, false, TYPALIGN_INT},
	{BYTEAOID, -1, false, TYPALIGN_INT},
	{UUIDOID, 16, false, TYPALIGN_CHAR},
	{NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR},
	{TIDOID, 6, false, TYPALIGN_SHORT},
};
const int	shim_n_types = lengthof(shim_types);

void
get_typlenbyvalalign(Oid typid, int16 *typlen, bool *typbyval, char *typalign)
{
	for (int i = 0; i < shim_n_types; i++)
		if (shim_types[i].typid == typid)
		{
			*typlen = shim_types[i].typlen;
			*typbyval = shim_types[i].typbyval;
			*typalign = shim_types[i].typalign;
			return;
		}
	elog(ERROR, "cache lookup failed for type %u", typid);
}

void
shim_take_key_columns(fuzz_input *in, bool int_key, int max_cols,
					  WaKeyCodec *codec, WaKeyColumn *cols)
{
	memset(codec, 0, sizeof(*codec));
	memset(cols, 0, sizeof(WaKeyColumn) * max_cols);
	codec->keys = cols;
	if (int_key)
	{
		static const Oid ints[] = {INT2OID, INT4OID, INT8OID};

		codec->int_key = true;
		codec->n_keys = 1;
		cols[0].typid = ints[take_below(in, 3)];
	}
	else
	{
		codec->n_keys = 1 + (int) take_below(in, max_cols);
		for (int i = 0; i < codec->n_keys; i++)
			cols[i].typid = shim_types[take_below(in, shim_n_types)].typid;
	}
	for (int i = 0; i < codec->n_keys; i++)
	{
		char		align;

		get_typlenbyvalalign(cols[i].typid, &cols[i].typlen,
							 &cols[i].typbyval, &align);
	}
	initStringInfo(&codec->buf);
}

/* tid's send and receive functions, as fmgr would find them */
#define SHIM_TIDSEND 1
#define SHIM_TIDRECV 2

void
getTypeBinaryOutputInfo(Oid type, Oid *typSend, bool *typIsVarlena)
{
	if (type != TIDOID)
		elog(ERROR, "no binary output function available for type %u", type);
	*typSend = SHIM_TIDSEND;
	*typIsVarlena = false;
}

/* the shim's types are no domains */
Oid
getBaseType(Oid typid)
{
	return typid;
}

void
getTypeBinaryInputInfo(Oid type, Oid *typReceive, Oid *typIOParam)
{
	if (type != TIDOID)
		elog(ERROR, "no binary input function available for type %u", type);
	*typReceive = SHIM_TIDRECV;
	*typIOParam = type;
}

void
fmgr_info(Oid functionId, FmgrInfo *finfo)
{
	memset(finfo, 0, sizeof(*finfo));
	finfo->fn_oid = functionId;
}

/* tidsend: block number and offset, big-endian */
bytea *
SendFunctionCall(FmgrInfo *flinfo, Datum val)
{
	const uint8 *t = (const uint8 *) DatumGetPointer(val);
	bytea	   *out = palloc(VARHDRSZ + 6);
	uint16		half[3];

	Assert(flinfo->fn_oid == SHIM_TIDSEND);
	memcpy(half, t, sizeof(half));
	for (int i = 0; i < 3; i++)
	{
		((uint8 *) VARDATA(out))[2 * i] = half[i] >> 8;
		((uint8 *) VARDATA(out))[2 * i + 1] = half[i] & 0xff;
	}
	SET_VARSIZE(out, VARHDRSZ + 6);
	return out;
}

/* tidrecv: pq_getmsgint's error when the message is short */
Datum
ReceiveFunctionCall(FmgrInfo *flinfo, StringInfo buf, Oid typioparam,
					int32 typmod)
{
	uint16	   *t = palloc(6);

	Assert(flinfo->fn_oid == SHIM_TIDRECV);
	for (int i = 0; i < 3; i++)
	{
		if (buf->len - buf->cursor < 2)
			ereport(ERROR,
					(errcode(ERRCODE_PROTOCOL_VIOLATION),
					 errmsg("insufficient data left in message")));
		t[i] = (uint16) ((uint8) buf->data[buf->cursor] << 8 |
						 (uint8) buf->data[buf->cursor + 1]);
		buf->cursor += 2;
	}
	return PointerGetDatum(t);
}
