/*-------------------------------------------------------------------------
 *
 * sink_int.h
 *	  Between the sink's buffers (sink.c) and its statements
 *	  (sink_statements.c); not for the rest of the pipeline.
 *
 * src/pipeline/sink_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WINDOWAGG_SINK_INT_H
#define WINDOWAGG_SINK_INT_H

#include "pipeline/sink.h"

/*
 * The relations a statement reads the epoch's rows from: tuplestores that
 * SPI exposes under these names.
 */
#define PANES_RELATION "windowagg_epoch_panes"
#define SESSIONS_RELATION "windowagg_epoch_sessions"
#define RETRACTED_RELATION "windowagg_epoch_retracted"

/*
 * So many nullable keys get a statement per pattern of NULLs to delete
 * retracted sessions with (sink_statements.c); more get one statement.
 */
#define MAX_NULL_PATTERN_KEYS 4
#define MAX_RETRACT_PLANS (1 << MAX_NULL_PATTERN_KEYS)

/* A kept statement over relation name (rows like desc); $1: the epoch's time */
extern SPIPlanPtr wa_sink_prepare_rows_plan(const char *name, TupleDesc desc,
											const char *sql);
/* A kept statement taking one array argument per column of c. */
extern SPIPlanPtr wa_sink_prepare_unnest_plan(const char *sql,
											  const WaColumns *c);

/* The statements, into sink's plans (after its buffers are set up). */
extern void wa_sink_build_pane_statements(WaSink *sink, const WaPipelineDef *def);
extern void wa_sink_build_dead_letter_insert(WaSink *sink, const WaPipelineDef *def);

#endif							/* WINDOWAGG_SINK_INT_H */
