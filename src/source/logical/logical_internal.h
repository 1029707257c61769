/*-------------------------------------------------------------------------
 *
 * logical_internal.h
 *	  Inside a logical source: the stream's state and its two transports,
 *	  a slot of this server decoded in the worker (decode.c, with the
 *	  output plugin of plugin.c) and a remote server's pgoutput stream
 *	  (stream.c).  Only the files of src/source/logical include it.
 *
 * src/source/logical/logical_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_LOGICAL_INTERNAL_H
#define WA_LOGICAL_INTERNAL_H

#include "source/logical/logical.h"
#include "source/source_internal.h"

/* ---------- the stream, in a worker (logical.c) ---------- */


/* Called for each inserted row; counts is false when WHERE rejects it. */
typedef void (*wa_logical_row_fn) (void *arg, TupleTableSlot *slot,
								   int64 arrival, bool counts);
/* Called for each update or delete (kind 'U' or 'D'), with its event time. */
typedef void (*wa_logical_change_fn) (void *arg, char kind, int64 arrival,
									  Datum event_time, bool event_time_null);

/*
 * Called after each source transaction, and before the reader waits for
 * more.  A local source's callbacks run inside a subtransaction that
 * decoding rolls back right after, which releases every LWLock; and
 * readers of live windows must not wait for the network: the worker lets
 * go of its locks here.
 */
typedef void (*wa_logical_txn_end_fn) (void *arg);

typedef struct WaColumnReader WaColumnReader;

typedef struct WaLogicalSource
{
	const WaAggQuery *query;
	MemoryContext cxt;			/* lives as long as the worker */
	wa_logical_row_fn row_fn;
	wa_logical_change_fn change_fn;
	wa_logical_txn_end_fn txn_end_fn;
	void	   *fn_arg;

	/* where the changes come from */
	char	   *conninfo;		/* NULL: a table of this server */
	char	   *slot_name;
	Oid			local_relid;	/* the source, or a remote one's stand-in */
	HTAB	   *relations;		/* local: decoded relation -> RelationMatch */
	MemoryContext relations_cxt;	/* holds them */
	bool		relations_stale;	/* a relcache invalidation came */
	/* a remote source: its publication, and the table's name there */
	List	   *publications;	/* of String */
	char	   *remote_nspname;
	char	   *remote_relname;
	WalReceiverConn *conn;		/* a remote source's stream */
	pgsocket	fd;
	struct LogicalDecodingContext *decoding;	/* a local source's */

	/* the relation of the stream's current changes, as pgoutput sent it */
	LogicalRepRelId stream_relid;	/* InvalidOid: not ours */
	bool		stream_is_ours;
	int			stream_natts;
	int		   *stream_to_local;	/* stream column -> local index, or -1 */

	/* turning a row into the row query's values */
	WaColumnReader *readers;	/* per local column */
	TupleTableSlot *base_slot;	/* a row of the source table */
	TupleTableSlot *row_slot;	/* keys, event time, inputs */
	ExprContext *econtext;
	ExprState **exprs;
	ExprState  *qual;
	int			n_exprs;

	/* positions in the stream */
	XLogRecPtr	applied_lsn;	/* everything before it is in the engine */
	XLogRecPtr	confirmed_lsn;	/* told to the sender after a commit */
	XLogRecPtr	server_wal_end; /* the sender's newest position */
	XLogRecPtr	target_lsn;		/* read up to here to be caught up */
	bool		in_txn;
	bool		skip_txn;		/* applied before a restart */
	int64		keepalives;		/* from a remote sender, so far */
	XLogRecPtr	txn_commit_lsn;

	/* this epoch */
	int64		rows_read;
	int64		updates;
	int64		deletes;
} WaLogicalSource;

extern void wa_logical_init(WaLogicalSource *src, const WaSourceDef *def,
							const WaAggQuery *q, MemoryContext cxt,
							wa_logical_row_fn row_fn,
							wa_logical_change_fn change_fn,
							wa_logical_txn_end_fn txn_end_fn, void *fn_arg);
/* Connect and stream from after applied (InvalidXLogRecPtr: the slot's). */
extern void wa_logical_start(WaLogicalSource *src, XLogRecPtr applied);
/* Read whole transactions, up to about limit rows; true if caught up. */
extern bool wa_logical_read(WaLogicalSource *src, int limit);
/* The row being read, as jsonb in the current memory context. */
extern Datum wa_logical_row_jsonb(WaLogicalSource *src);
/* The offset to store with the epoch. */
extern XLogRecPtr wa_logical_offset(const WaLogicalSource *src);
/* After the epoch committed: let the slot move on. */
extern void wa_logical_confirm(WaLogicalSource *src);
/* Wait for data or the latch, at most timeout_ms. */
extern void wa_logical_wait(WaLogicalSource *src, long timeout_ms);
extern void wa_logical_close(WaLogicalSource *src);
/* Leaving for good (the pipeline was dropped): drop the slot too. */
extern void wa_logical_drop(WaLogicalSource *src);
/* WAL the slot holds back, as far as the worker knows (remote sources). */
extern int64 wa_logical_retained_bytes(const WaLogicalSource *src);

/* ---------- inside the reader: logical.c and its transports ---------- */

/* rows.c: the row query's expressions, ready to run over a row of rel */
extern void wa_logical_rows_init(WaLogicalSource *src, Relation rel);
/* A transaction of the source begins and ends (commit_lsn: its commit record). */
extern void wa_logical_txn_begin(WaLogicalSource *src, XLogRecPtr commit_lsn);
extern void wa_logical_txn_end(WaLogicalSource *src, XLogRecPtr end_lsn);
/* base_slot holds a row of kind 'I', 'U' or 'D': hand it to the worker. */
extern void wa_logical_deliver(WaLogicalSource *src, char kind);

/* stream.c: a table on another server */
extern void wa_stream_init(WaLogicalSource *src, Relation rel);
extern void wa_stream_start(WaLogicalSource *src, XLogRecPtr applied);
extern bool wa_stream_read(WaLogicalSource *src, int limit);
extern void wa_stream_send_feedback(WaLogicalSource *src, bool reply_requested);
extern void wa_stream_close(WaLogicalSource *src);

/* decode.c: a table of this server */
extern void wa_decode_start(WaLogicalSource *src, XLogRecPtr applied);
extern void wa_decode_read(WaLogicalSource *src, int limit);
extern void wa_decode_close(WaLogicalSource *src);

/* ---------- a local slot's changes (plugin.c calls decode.c) ---------- */

/* The source the worker is decoding for, while it decodes (decode.c). */
extern WaLogicalSource *wa_decoding_source;
extern void wa_logical_decoded_begin(WaLogicalSource *src,
									 XLogRecPtr commit_lsn);
/* kind: 'I', 'U' or 'D'; tuple: the new row, or a delete's old one */
extern void wa_logical_decoded_change(WaLogicalSource *src, Relation relation,
									  char kind, HeapTuple tuple);
extern void wa_logical_decoded_commit(WaLogicalSource *src,
									  XLogRecPtr end_lsn);

/* The columns of the source table that the row query reads (logical.c). */
extern Bitmapset *wa_logical_columns_read(const WaAggQuery *q, bool *whole_row);

#endif							/* WA_LOGICAL_INTERNAL_H */
