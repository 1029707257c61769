/*-------------------------------------------------------------------------
 *
 * query.h
 *	  Declarations shared by the PostgreSQL side of windowagg.
 *
 * The PostgreSQL side turns SQL values into engine inputs (ticks, keys,
 * aggregate inputs) and engine output back into SQL rows.  The engine in
 * src/engine/ knows nothing of this file.
 *
 * src/query/query.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_QUERY_H
#define WA_QUERY_H

#include "postgres.h"

#include "compat.h"

#include "datatype/timestamp.h"
#include "pgtime.h"
#include "fmgr.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "engine/wa_engine.h"

/* ---------- time domains (time_convert.c) ---------- */

/*
 * A pipeline's event time is either a timestamp (ticks are microseconds,
 * PostgreSQL's own representation) or an integer (ticks are its units).
 */
typedef enum WaTimeDomain
{
	WA_TIME_TIMESTAMP,
	WA_TIME_INTEGER
} WaTimeDomain;

extern const char *wa_time_domain_name(WaTimeDomain domain);
/* The Unix epoch in timestamp ticks: the default window origin. */
extern int64 wa_unix_epoch_ticks(void);
extern int64 wa_interval_to_ticks(Interval *iv, const char *argname,
								  bool allow_zero);
extern int64 wa_timestamp_to_ticks(TimestampTz ts, const char *argname);
/* Read a bound/lateness argument declared "any"; NULL means zero. */
extern int64 wa_duration_arg(FunctionCallInfo fcinfo, int argno,
							 const char *argname, WaTimeDomain domain);
/* A tick value as a Datum of the domain's output type, or error. */
extern Datum wa_ticks_to_datum(wa_tick ticks, Oid typid, const char *what);
/* The ticks a window bound of type typid can take: [*lowest, *highest]. */
extern void wa_ticks_range(Oid typid, wa_tick *lowest, wa_tick *highest);
/* Can the pane's bounds be values of type typid? */
extern bool wa_pane_representable(const wa_pane *pane, Oid typid);
/* Why an event time gives no ticks. */
typedef enum WaEventTimeProblem
{
	WA_EVENT_TIME_OK,
	WA_EVENT_TIME_NULL,
	WA_EVENT_TIME_INFINITE
} WaEventTimeProblem;

/* An event time of type typid in ticks, or why it has none. */
extern WaEventTimeProblem wa_event_time_ticks(Oid typid, Datum value,
											  bool isnull, int64 *ticks);
/* A tick stored as a numeric, or what is wrong with it. */
typedef enum WaNumericTickProblem
{
	WA_NUMERIC_TICK_OK,
	WA_NUMERIC_TICK_NAN,
	WA_NUMERIC_TICK_FRACTION,
	WA_NUMERIC_TICK_OUT_OF_RANGE
} WaNumericTickProblem;

extern WaNumericTickProblem wa_numeric_to_tick(Datum value, wa_tick *tick);
/* A time zone by name (NULL: the session's), or error. */
extern pg_tz *wa_time_zone(const char *name, const char *pipeline);
/* The wall-clock time in zone at now, as a timestamp without time zone. */
extern int64 wa_wall_clock(TimestampTz now, pg_tz *zone);

/* ---------- window specifications (window_set.c) ---------- */

/*
 * A decoded window set: its fixed windows (tumbling, hopping) and its
 * session windows, each in the order the array gives them.  The engine
 * numbers them so too, fixed windows first.  A session's max_time is
 * INT64_MAX until the caller limits it to the event time's type
 * (wa_window_set_limit_sessions).
 */
typedef struct WaWindowSet
{
	WaTimeDomain domain;
	int			n_windows;
	wa_window  *windows;
	int			n_sessions;
	wa_session_window *sessions;
	int		   *positions;		/* each fixed window's 1-based position in
								 * the array (NULL: its index + 1) */
	int		   *session_positions;	/* each session window's */
} WaWindowSet;

/* The 1-based position in its array of the engine's window j. */
static inline int
wa_window_position(const WaWindowSet *set, int j)
{
	if (j < set->n_windows)
		return set->positions != NULL ? set->positions[j] : j + 1;
	return set->session_positions != NULL ?
		set->session_positions[j - set->n_windows] : j + 1;
}

/* Decode and check a windowagg.window[] argument. */
extern void wa_window_set_from_array(ArrayType *arr, WaWindowSet *set);
/* No session may end past what type typid can hold. */
extern void wa_window_set_limit_sessions(WaWindowSet *set, Oid typid);
/* The same without the limits below (definitions made by older versions). */
extern void wa_window_set_decode(ArrayType *arr, WaWindowSet *set);

/* ---------- window checks (window_checks.c) ---------- */

/* Error unless a window of that size and slide leaves no gaps. */
extern void wa_window_check_size_slide(int64 size, int64 slide);

/*
 * The windows [w, w + size) with w = origin + k * slide that contain t and
 * that a type with range [lowest, highest] can hold start at *from,
 * *from + slide, ... up to *to (which need not be a start; none if
 * *from > *to); returns whether those are all the windows containing t.
 */
extern bool wa_existing_windows(wa_tick t, int64 size, int64 slide,
								int64 origin, wa_tick lowest, wa_tick highest,
								wa_tick *from, wa_tick *to);

/* Error unless window i is valid and shares no window with those before. */
extern void wa_window_check(const WaWindowSet *set, int i);
/* Error unless a set may hold n windows. */
extern void wa_window_check_count(int n);
/* Error unless the set is within the windows a set and an event may have. */
extern void wa_window_set_check_limits(const WaWindowSet *set);

/*
 * Windows of a set whose bounds a type cannot hold (at the ends of its
 * range) do not exist for the set's events: an event falls into some, all
 * or none of the windows that exist.  wa_window_range_init computes, once,
 * the event times that are far enough from the ends for every window.
 */
typedef enum WaWindowsInRange
{
	WA_IN_RANGE_ALL,
	WA_IN_RANGE_SOME,			/* the event counts as partial */
	WA_IN_RANGE_NONE			/* the event is a dead letter */
} WaWindowsInRange;

typedef struct WaWindowRange
{
	const WaWindowSet *set;
	wa_tick		lowest;			/* the type's range, in ticks */
	wa_tick		highest;
	wa_tick		safe_from;		/* events within [safe_from, safe_to] */
	wa_tick		safe_to;		/* fall into existing windows only */
} WaWindowRange;

extern void wa_window_range_init(WaWindowRange *range, const WaWindowSet *set,
								 Oid window_type);
/* The same for a range given in ticks. */
extern void wa_window_range_set(WaWindowRange *range, const WaWindowSet *set,
								wa_tick lowest, wa_tick highest);
static inline WaWindowsInRange wa_window_range_of(const WaWindowRange *range,
												  int64 t);
extern WaWindowsInRange wa_window_range_check(const WaWindowRange *range,
											  int64 t);
/* Whether a window that exists and contains t takes an event at wm. */
extern bool wa_window_range_open(const WaWindowRange *range, int64 t,
								 wa_tick wm, int64 lateness);

static inline WaWindowsInRange
wa_window_range_of(const WaWindowRange *range, int64 t)
{
	if (likely((wa_tick) t >= range->safe_from && (wa_tick) t <= range->safe_to))
		return WA_IN_RANGE_ALL;
	return wa_window_range_check(range, t);
}

struct WaAggQuery;
/* The windows' time domain must be the event time's. */
extern void wa_window_set_check_domain(const WaWindowSet *set,
									   const struct WaAggQuery *q);

/* ---------- the aggregate query (agg_query.c) ---------- */

typedef struct WaKeyColumn
{
	char	   *name;
	Oid			typid;
	int32		typmod;
	Oid			collation;
	int16		typlen;
	bool		typbyval;
	bool		notnull;		/* a column that NOT NULL guards */
} WaKeyColumn;

typedef struct WaAggColumn
{
	char	   *name;
	wa_agg_kind kind;
	Oid			input_type;		/* InvalidOid for count(*) */
	int			input;			/* index of its input in the row query's
								 * inputs; -1 for count(*) */
	Oid			result_type;
	const char *sql_name;		/* "min", "count", ... for messages */
	int			decimal_scale;	/* the decimal kinds: s of numeric(p, s), or
								 * of the input's first value where it is
								 * guessed (WA_SCALE_UNKNOWN until then) */

	/* kind WA_AGG_GENERIC: a PostgreSQL aggregate (agg_generic.c) */
	Oid			aggfnoid;
	int			n_args;
	int		   *arg_inputs;		/* each argument's index in the inputs */
	Oid		   *arg_types;
	int			filter_input;	/* FILTER's index in the inputs, or -1 */
	Oid			collation;		/* the aggregate's input collation */
	bool		variadic;
	bool		distinct;		/* over DISTINCT values (agg_distinct.c) */
	bool		idempotent;		/* see wa_agg_spec */
	bool		final_writes;	/* see wa_agg_spec */
} WaAggColumn;

/*
 * An output column after the keys: one aggregate's value, or an expression
 * over aggregates' values (sum(a) / count(*), hll_cardinality(...)),
 * whose aggregates are then hidden ones of the query's list, read by the
 * expression as parameters $1 ... $n_aggs (every aggregate's value, in
 * list order).
 */
typedef struct WaOutputColumn
{
	char	   *name;
	Oid			type;
	int32		typmod;
	int			agg;			/* the aggregate it shows, or -1 */
	Expr	   *expr;			/* agg -1: the expression */
} WaOutputColumn;

/*
 * A validated aggregate query: "SELECT keys..., aggs... FROM one_table
 * [WHERE ...] GROUP BY keys", rewritten into a row query that returns, per
 * source row, the keys, the event time and each aggregate's input.
 */
typedef struct WaAggQuery
{
	Oid			relid;
	bool		inh;			/* its children too (no ONLY) */
	char	   *relname;
	char	   *event_time_name;
	Oid			event_time_type;
	WaTimeDomain domain;
	int			n_keys;
	WaKeyColumn *keys;
	bool		int_key;		/* one integer key: int64 engine keys */
	int			n_aggs;
	WaAggColumn *aggs;			/* what the engine computes */
	int			n_outputs;		/* what the query's select list shows */
	WaOutputColumn *outputs;
	bool		has_expressions;	/* some output is not one aggregate */
	int			n_inputs;		/* distinct aggregate inputs */
	Oid		   *input_types;	/* their types */
	int		   *input_scales;	/* -1, or s: the input is a numeric(p, s)
								 * read as a fixed-point integer
								 * (numeric_fixed.c) */
	bool	   *input_guessed;	/* the batch functions: s is the scale of
								 * the input's first value, and a value of
								 * another makes wa_row_inputs false */
	bool		guess_numeric_scales;	/* parse the batch functions' way */
	char	   *row_query;		/* keys, event time, inputs, in order */
	char	   *row_alias;		/* its columns are "<row_alias> 1", ... */
	/* pipelines: row_query then also returns these (see agg_query.c) */
	char	   *arrival_column; /* NULL for the batch functions */
	AttrNumber	arrival_attnum;
	/* row_query's output expressions and WHERE, over the source as varno 1 */
	List	   *row_exprs;
	Expr	   *row_qual;
} WaAggQuery;

/*
 * arrival_order: batch functions' ORDER BY; arrival_column: a pipeline's
 * arrival number column (at most one of the two).
 */
extern WaAggQuery *wa_agg_query_parse(const char *query,
									  const char *event_time,
									  const char *arrival_order,
									  const char *arrival_column);
extern WaAggQuery *wa_agg_query_parse_batch(const char *query,
											const char *event_time,
											const char *arrival_order,
											bool guess_numeric_scales);
extern WaAggQuery *wa_agg_query_parse_as(const char *query,
										 const char *event_time,
										 const RangeVar *source_as);
/* The table a query's FROM clause names (error unless exactly one). */
extern RangeVar *wa_agg_query_source_name(const char *query);
/* Position of the arrival number and "counts" flag in row_query's output. */
#define WA_ROW_ARRIVAL(q)	((q)->n_keys + 1 + wa_agg_query_n_inputs(q))
#define WA_ROW_COUNTS(q)	(WA_ROW_ARRIVAL(q) + 1)
extern int	wa_agg_query_n_inputs(const WaAggQuery *q);
/*
 * The engine configuration that runs q over windows: everything but the
 * pane callback and the allocator, which the caller sets before checking
 * it with wa_engine_config_check.
 */
extern void wa_agg_query_engine_config(const WaAggQuery *q,
									   const WaWindowSet *windows,
									   int64 bound, int64 lateness,
									   wa_config *config);
/* Error unless the engine accepts config. */
extern void wa_engine_config_check(const wa_config *config);
/* Error unless all code q runs belongs to owner or a superuser (code_owners.c). */
extern void wa_agg_query_check_code_owners(const WaAggQuery *q, Oid owner,
										   const char *pipeline_name);
/* In a worker: every statement analysed from now on is checked likewise. */
extern void wa_trust_only_owned_code(const char *pipeline_name);
/*
 * In a worker: the tables its own statements may name (sessions_table:
 * InvalidOid when there is none), and those statements.
 */
extern void wa_own_relations(const WaAggQuery *q, Oid result_table,
							 Oid sessions_table, Oid dead_letter_table);
extern void wa_own_statement(const char *sql);
extern void wa_agg_query_engine_aggs(const WaAggQuery *q, wa_agg_spec *out);
/* Error unless the current user may run the aggregate (as a query would). */
extern void wa_check_aggregate_execute(Oid aggfnoid);
/* Is the built-in aggregate of that name idempotent (see wa_agg_spec)? */
extern bool wa_aggregate_name_is_idempotent(const char *name);

/*
 * The shape of an engine that runs a query over a window set: a SHA-256
 * digest of everything that decides how its state and its panes are to be
 * read (the row query, key, input and result types, aggregate kinds,
 * windows, bound and lateness).  A reader of another process's engine
 * decodes it only if its own parse of the query has the same shape.
 */
#define WA_SHAPE_LEN 32
extern void wa_agg_query_shape(const WaAggQuery *q, const WaWindowSet *windows,
							   int64 bound, int64 lateness, uint8 *shape);

/* ---------- output columns (agg_result.c) ---------- */

typedef struct WaOutputEval WaOutputEval;

/* Ready to compute q's output columns (in the current memory context). */
extern WaOutputEval *wa_output_eval_create(const WaAggQuery *q);
/* The output columns of a pane's results, in the current memory context. */
extern void wa_output_values(WaOutputEval *ev, const wa_result *results,
							 Datum *values, bool *nulls);

/* ---------- PostgreSQL aggregates in the engine (agg_generic.c) ---------- */

typedef struct WaGeneric WaGeneric;

/*
 * The support functions of q's generic aggregates, ready to call (in the
 * current memory context, which must outlive the engine), after checking
 * that the current user may run them.
 */
extern WaGeneric *wa_generic_create(const WaAggQuery *q);
/* The engine's callbacks (wa_config.generic): NULL when q has none. */
extern const wa_agg_generic *wa_generic_callbacks(const WaGeneric *g);

/*
 * Called before (after false) and after (after true) each piece of the
 * owner's code that g runs (support functions, and expressions through
 * wa_generic_output_values): a holder of a pipeline's state lock checks
 * that it holds it, and after, takes it again if that code let it go (see
 * OWNER_CODE in agg_generic_int.h).
 */
typedef void (*WaOwnerCodeGuard) (void *arg, bool after);
extern void wa_generic_set_guard(WaGeneric *g, WaOwnerCodeGuard guard,
								 void *arg);
/* wa_output_values, as the owner's code under g's guard. */
extern void wa_generic_output_values(WaGeneric *g, WaOutputEval *ev,
									 const wa_result *results, Datum *values,
									 bool *nulls);
/*
 * Write every state the process changed back to the engine's memory, where
 * other processes read it (and checkpoints will); the engine's states are
 * otherwise current only in this process.
 */
extern void wa_generic_flush(WaGeneric *g);
/* Done with the engine: run what the support functions registered. */
extern void wa_generic_done(WaGeneric *g);
/*
 * Write the changed states back but keep them cached (a pipeline's worker,
 * before it lets readers in); forget the cache of an engine thrown away.
 */
extern void wa_generic_write_back(WaGeneric *g);
extern void wa_generic_forget(WaGeneric *g);

/* ---------- generic states in checkpoints (agg_generic_portable.c) ---------- */

/* Error unless every generic state of q can be checkpointed. */
extern void wa_generic_check_portable(const WaAggQuery *q);
/* The signatures of g's generic aggregates, which checkpoints carry. */
extern void wa_generic_signature(const WaGeneric *g, StringInfo out);

/* What the catalog says of a generic aggregate's state (agg_generic.c). */
typedef struct WaGenericDescription
{
	Oid			transtype;		/* resolved for the query's arguments */
	Oid			support[5];		/* transition, combine, final, serial,
								 * deserial functions (or InvalidOid) */
	char		finalmodify;
	bool		finalextra;
} WaGenericDescription;

extern void wa_generic_describe(const WaAggColumn *col,
								WaGenericDescription *d);
/* The generic states of an engine's accumulator, as portable bytes. */
extern void wa_generic_states_to_portable(WaGeneric *g, const wa_engine *engine,
										  const void *acc, StringInfo out);
/* Set an accumulator's generic states from such bytes (checked). */
extern void wa_generic_states_from_portable(WaGeneric *g, wa_engine *engine,
											void *acc, const char *data,
											uint32 len);

/* ---------- keys (key_codec.c) ---------- */

typedef struct WaKeyCodec
{
	int			n_keys;
	const WaKeyColumn *keys;
	bool		int_key;
	StringInfoData buf;			/* reused for every encoded key */
} WaKeyCodec;

extern void wa_key_codec_init(WaKeyCodec *codec, const WaAggQuery *q);
extern void wa_key_encode(WaKeyCodec *codec, const Datum *values,
						  const bool *isnull, wa_key *out);
extern void wa_key_decode(const WaKeyCodec *codec, const wa_key *key,
						  Datum *values, bool *isnull);

/* ---------- keys on disk (key_portable.c) ---------- */

typedef struct WaKeyPortable
{
	const WaKeyCodec *codec;
	bool		is_image;		/* the portable form is the image itself */
	bool	   *send_form;		/* per column: stored in its send form */
	FmgrInfo   *send;			/* per column; set for fixed-length types by
								 * reference that are not plain bytes */
	FmgrInfo   *recv;
	Oid		   *ioparam;
	StringInfoData image;		/* the last key read back */
	MemoryContext cxt;			/* where it lives */
} WaKeyPortable;

extern void wa_key_portable_init(WaKeyPortable *kp, const WaKeyCodec *codec);
extern void wa_key_to_portable(WaKeyPortable *kp, const wa_key *key,
							   StringInfo out);
extern void wa_key_from_portable(WaKeyPortable *kp, const char *p, uint32 len,
								 wa_key *out);

/* ---------- results (agg_result.c) ---------- */

extern Datum wa_result_to_datum(const WaAggColumn *col, const wa_result *r,
								bool *isnull);
extern void wa_datum_to_value(Oid typid, Datum d, bool isnull, wa_value *out);
extern Datum wa_int128_to_numeric(wa_int128 value);

/* ---------- numeric(p, s) as fixed point (numeric_fixed.c) ---------- */

/* the scale of a guessed input before its first value */
#define WA_SCALE_UNKNOWN (-2)

extern int	wa_fixed_point_scale(int32 typmod);
extern void wa_numeric_to_fixed(Datum d, int scale, wa_value *out);
extern bool wa_numeric_guess_fixed(Datum d, int *scale, wa_value *out);
extern Datum wa_fixed_to_numeric(wa_int128 value, int scale);
extern bool wa_row_inputs(const WaAggQuery *q, TupleTableSlot *slot,
						  wa_value *inputs);

/* ---------- GUCs (init.c) ---------- */

extern int	wa_result_memory_kb;
extern int	wa_batch_memory_kb;
extern bool wa_share_windows;	/* windowagg.share_windows */

/* ---------- engine memory (engine_alloc.c) ---------- */

extern void wa_engine_allocator_init(wa_allocator *allocator,
									 MemoryContext context);

/* ---------- the catalog scope (catalog_scope.c) ---------- */

/*
 * Run a statement on windowagg's catalog tables, as the catalog's owner,
 * in a security-restricted operation under search_path "pg_catalog,
 * pg_temp" (see catalog_scope.c).  The text is windowagg's own and qualifies
 * every type, function and operator it names.
 */
extern int	wa_catalog_exec(const char *sql, int nargs, Oid *argtypes,
							Datum *values, const char *nulls);

/*
 * The same for a statement whose one parameter, $1, is a pipeline's id;
 * and for one whose $1 is a pipeline's id and $2 a value of type.
 */
extern int	wa_catalog_exec_for(const char *sql, int32 pipeline_id);
extern int	wa_catalog_set_for(const char *sql, int32 pipeline_id, Oid type,
							   Datum value);

/* The same for a statement prepared (and kept) in that same scope. */
extern SPIPlanPtr wa_catalog_prepare(const char *sql, int nargs, Oid *argtypes);
extern int	wa_catalog_execute_plan(SPIPlanPtr plan, Datum *values,
									const char *nulls);

/* windowagg.pipelines, the table whose trigger claims slots. */
extern Oid	wa_catalog_pipelines_relid(void);

/*
 * Set search_path to "pg_catalog, pg_temp" until the matching unpin (or
 * the end of the (sub)transaction): names then resolve to built-in objects
 * only, and format_type qualifies every other type.
 */
extern int	wa_pin_search_path(void);
extern void wa_unpin_search_path(int nest_level);

/* A relation's owner; InvalidOid if it no longer exists. */
extern Oid	wa_relation_owner(Oid relid);

#endif							/* WA_QUERY_H */
