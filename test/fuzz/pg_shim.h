/*-------------------------------------------------------------------------
 *
 * pg_shim.h
 *	  Just enough of a PostgreSQL backend to run windowagg's format code
 *	  (checkpoint rows, keys, window checks) in a fuzzer, without a server.
 *
 * The code under test is compiled against the server's headers unchanged;
 * this shim supplies what it links against: palloc and friends (every
 * block tracked, so that one input's memory is freed when it ends, as a
 * memory context reset would), ereport (an ERROR jumps back to the
 * harness with its SQLSTATE and message, as PG_TRY would), StringInfo, and
 * a catalog of a few types for the key codec.
 *
 * Only what the tested files call is here; anything else they reach fails
 * to link, which is how a change that pulls in more of the server shows
 * up.
 *
 * test/fuzz/pg_shim.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_FUZZ_PG_SHIM_H
#define WA_FUZZ_PG_SHIM_H

#include "postgres.h"

#include "query/query.h"

/* The error an ERROR raised, for the harness to judge. */
typedef struct ShimError
{
	int			elevel;
	int			sqlerrcode;
	char		message[512];
	char		detail[512];
	char		hint[512];
	const char *filename;
	int			lineno;
} ShimError;

extern ShimError shim_error;

/*
 * Run fn(arg) as the backend would inside PG_TRY: returns true if it
 * returned, false if it raised an ERROR (then shim_error holds it).
 */
extern bool shim_try(void (*fn) (void *arg), void *arg);

/* Free every block allocated since the last call: a context reset. */
extern void shim_reset_memory(void);

/* Abort, printing the error, unless it is one of the given SQLSTATEs. */
extern void shim_expect_error(const int *codes, int n_codes);

/*
 * Types the shim's catalog knows, for key columns: their length, by-value
 * and alignment as in pg_type.  tid (fixed length, by reference, aligned
 * wider than a byte) takes the send/receive path of key_portable.c; its
 * functions here behave as tidsend and tidrecv do.
 */
typedef struct ShimType
{
	Oid			typid;
	int16		typlen;
	bool		typbyval;
	char		typalign;
} ShimType;

extern const ShimType shim_types[];
extern const int shim_n_types;

/*
 * Key columns chosen by the input, as a query's keys would be: one integer
 * key (int2, int4 or int8) if int_key, else 1 to max_cols columns of the
 * types above; sets up codec over cols (max_cols entries).  Raises an
 * ERROR only if the shim's catalog is broken.
 */
struct fuzz_input;
extern void shim_take_key_columns(struct fuzz_input *in, bool int_key,
								  int max_cols, WaKeyCodec *codec,
								  WaKeyColumn *cols);

#endif							/* WA_FUZZ_PG_SHIM_H */
