/*-------------------------------------------------------------------------
 *
 * fuzz_agg_query.c
 *	  libFuzzer target: the aggregate-query parser's rewrite
 *	  (src/query/agg_query.c) and the batch functions behind it, through a
 *	  server, against a plain-SQL reference.
 *
 * The parser needs a backend (raw_parser, parse analysis, the catalog), so
 * this target is a small libpq client: it connects once to the server
 * named by WA_FUZZ_CONNINFO, into a database where agg_query_setup.sql has
 * made the fixtures (the table fzt and its copies fzv, fzm, fzp, fzt2, the
 * reference functions fz_accept, fz_ticks, fz_feq), and turns each input
 * into one call of windowagg.aggregate() or windowagg.dropped().
 * run-agg-query.sh starts a throwaway server, applies the setup and runs
 * a binary.  WA_FUZZ_PRINT=1 prints what each input decodes to instead,
 * without a server (for looking at a corpus or a finding).
 *
 * The grammar.  The input is a sequence of choices (fuzz_input.h: an
 * exhausted input reads as zeros, the simplest choice), in this order:
 *
 *	 flags		aggregate() or dropped(); windowagg.share_windows on or off;
 *				the session's TimeZone (UTC, New York, Kathmandu)
 *	 source		fzt, public.fzt, fzt AS x, fzt x, ONLY fzt, the view fzv, the
 *				materialized view fzm, the partitioned fzp, TABLESAMPLE; and
 *				sources windowagg refuses (two tables, a join, a subquery, a
 *				function, a table that does not exist)
 *	 event_time	ts (timestamptz, both ends of its range), tl (timestamp),
 *				e8/e4/e2/id/ord (integers, e8 at both ends of bigint),
 *				columns with NULLs (tsn, k4), and wrong ones (text, date,
 *				a system column, a wrong case, "", NULL)
 *	 keys		0-3 select-list keys: columns of every kind, expressions
 *				(k4 % 7, lower(s), casts, CASE, COLLATE), constants, system
 *				columns, a domain, an enum, jsonb, arrays, records, and keys
 *				the README refuses (numeric, float, character(n)); each
 *				maybe qualified, maybe aliased (a reserved name too)
 *	 aggregates	0-4: the kernels' aggregates over every type they take,
 *				over expressions; others through their own functions
 *				(numeric, text, uuid, bool, bit_or, DISTINCT, FILTER,
 *				expressions over aggregates); and refused ones: ORDER BY,
 *				WITHIN GROUP, window functions, windowagg's moving
 *				aggregates, order-dependent aggregates, DISTINCT over two
 *				arguments, columns outside aggregates, volatile
 *				expressions
 *	 order		how keys and aggregates interleave in the select list
 *				(templates: '@' a column's optional qualifier, '#' the
 *				source's name for whole-row references, '$' the event time)
 *	 WHERE		none, conditions, subqueries (IN, EXISTS, scalar), one that
 *				can divide by zero, and ones PostgreSQL refuses
 *	 GROUP BY	by expression, ordinal, alias, reordered, duplicated, a key
 *				missing, an extra item, none, ROLLUP, CUBE, GROUPING SETS,
 *				(), DISTINCT, an ordinal out of range
 *	 clauses	a prefix (DISTINCT, WITH, EXPLAIN, a comment) and a suffix
 *				(HAVING, ORDER BY, LIMIT, OFFSET, FOR UPDATE, WINDOW, UNION,
 *				a second statement), or the whole query in parentheses
 *	 arrival	no arrival_order, total orders (id, ord, the event time
 *				with or without a tiebreak, DESC, NULLS FIRST, COLLATE,
 *				USING), orders with ties, and injections (LIMIT, a second
 *				statement, FOR UPDATE, a closing parenthesis)
 *	 windows	0-3 windows (or 64, or 65) in the event time's domain or,
 *				sometimes, the other one: tumbling and hopping, typed, as
 *				text literals, or hand-built composites; sizes from 1 tick
 *				to the largest bigint, slides from size to size/12, slide
 *				> size, per-event counts over the limit, origins at both
 *				ends of the range, infinite ones, one in the session's zone
 *	 bound, lateness  omitted, NULL, intervals, text literals, integers,
 *				and invalid ones (negative, months, overflow, wrong type)
 *	 splice		now and then raw input bytes or an SQL token spliced into
 *				the query text, the query cut short, or bytes in place of
 *				arrival_order or event_time: odd tokens and garbage
 *
 * Each choice carries what the README says of it: supported, refused, or
 * unknown (the README does not say).  A case is expected to succeed if
 * every choice is supported, to fail if any is refused.
 *
 * What a case runs, in one transaction (statement_timeout 3 s, rolled
 * back): first a probe, the call with a column definition list that
 * cannot match, whose error names the list to use (or says why the call
 * is refused); then the call with that list, compared in the same
 * statement with the reference: fz_accept() replays the rows of the same
 * source and WHERE in the same arrival order with the README's watermark,
 * acceptance and range rules (window starts by integer arithmetic on
 * numeric ticks; timestamps as ticks through fz_ticks(), not through
 * windowagg), and the user's own keys and aggregates are computed by
 * GROUP BY over the accepted (row, window) pairs.  For aggregate() each
 * (keys, window) must have panes with revisions 1..n, the last of which
 * has the reference's value, pane kind and revision count; for dropped()
 * the dropped rows, their event times, the watermarks they met and their
 * arrival numbers must be the reference's.  Floats compare within 1e-9
 * (1e-6 for real): the data's floats are binary fractions, so sums do not
 * depend on their order.  Cases whose arrival order has ties between rows
 * of different event times, spliced cases, and cases that put an event
 * into more than 32 windows run without the comparison.
 *
 * Where the README leaves the model open, the reference follows what
 * windowagg does: a row none of whose windows exists (all of them reach
 * beyond the range of window_start's type) is dropped before it is an
 * event, so it does not move the watermark; a row some of whose windows
 * exist is an event.
 *
 * A finding (abort(), with the case printed):
 *	 - the connection is lost (the backend crashed) or a statement hangs
 *	   past the statement timeout and a cancel;
 *	 - an error with SQLSTATE class XX (internal error: elog, "unexpected"
 *	   states, data corrupted);
 *	 - a result that differs from the reference, or a column type that
 *	   differs from what plain GROUP BY gives, or a column definition list
 *	   that is not keys, window_start, window_end, aggregates, pane,
 *	   revision;
 *	 - a case the README supports that fails (other than by a timeout or
 *	   a resource limit), or one it refuses that succeeds.
 *
 * Bugs it found, fixed, and kept as regression inputs
 * (regressions/fuzz_agg_query/): a row that only windows beyond the type's
 * range would take was lost instead of dropped (dropped-misses-row-of-*);
 * an arrival_order naming a source column called "windowagg column N"
 * ordered by the row query's own output column of that name (arrival-*).
 *
 * Seeds are in corpus/fuzz_agg_query/, made by agg_query_seeds.py, which spells
 * out the byte layout above.
 *
 * test/fuzz/fuzz_agg_query.c
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "fuzz_input.h"

/* statement_timeout of every statement, and the client's own patience */
#define STATEMENT_TIMEOUT_MS 3000
#define CLIENT_TIMEOUT_MS 30000
#define CANCEL_TIMEOUT_MS 10000

/* compare with the reference only when an event falls into so few windows */
#define MAX_COMPARED_WINDOWS_PER_EVENT 32

#define TEXTOID 25

/* ---------- strings ---------- */

/* what '#' means in the templates below: the source's name or alias */
static const char *C_source_name = "fzt";


typedef struct sbuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} sbuf;

static void
sb_reserve(sbuf *b, size_t more)
{
	if (b->len + more + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap : 256;

		while (b->len + more + 1 > cap)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (b->data == NULL)
			abort();
		b->cap = cap;
	}
}

static void
sb_reset(sbuf *b)
{
	sb_reserve(b, 0);
	b->len = 0;
	b->data[0] = '\0';
}

static void
sb_addn(sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void
sb_add(sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

static void
sb_addf(sbuf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
sb_addf(sbuf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sb_reserve(b, (size_t) n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t) n;
}

/*
 * Append a template in which '@' stands for the column qualifier ("x." or
 * ""), '#' for the source's name (a whole-row reference) and '$' for the
 * event time column's name.
 */
static void
sb_template(sbuf *b, const char *t, const char *qual, const char *ev)
{
	for (; *t; t++)
	{
		if (*t == '@')
			sb_add(b, qual);
		else if (*t == '#')
			sb_add(b, C_source_name);
		else if (*t == '$')
			sb_add(b, ev);
		else
			sb_addn(b, t, 1);
	}
}

/* An int64 as an SQL bigint expression (the smallest has no literal). */
static void
sb_int8(sbuf *b, int64_t v)
{
	if (v == INT64_MIN)
		sb_add(b, "(-9223372036854775807::bigint - 1)");
	else
		sb_addf(b, "%" PRId64 "::bigint", v);
}

/* An int64 as a bare literal (an integer, or a bigint if it needs one). */
static void
sb_number(sbuf *b, int64_t v, bool bare)
{
	if (bare && v > INT64_MIN)
		sb_addf(b, "%" PRId64, v);
	else
		sb_int8(b, v);
}

/* Ticks as an interval literal of days and microseconds: exact. */
static void
sb_interval(sbuf *b, int64_t ticks, bool typed)
{
	int64_t		day = INT64_C(86400000000);

	if (ticks >= 0)
		sb_addf(b, "%s'%" PRId64 " days %" PRId64 " microseconds'",
				typed ? "interval " : "", ticks / day, ticks % day);
	else
		sb_addf(b, "%s'%" PRId64 " microseconds'", typed ? "interval " : "",
				ticks);
}

/* ---------- expectations ---------- */

/* What the README says of a choice; a case takes the strongest. */
typedef enum
{
	OK = 0,						/* supported: must succeed */
	UNK = 1,					/* the README does not say */
	REF = 2						/* refused: must fail */
} expect_t;

#define EXPECT(c, e) ((c)->expect = (c)->expect > (e) ? (c)->expect : (e))

/*
 * Pick from a table whose first n_good entries are the common, valid
 * choices: seven times in eight one of those, else (a second byte) any.
 */
static int
pick(fuzz_input *in, int n_good, int n_all)
{
	uint8_t		b = take_u8(in);

	if (b < 224)
		return b % n_good;
	return take_u8(in) % n_all;
}

/* ---------- the grammar's tables ---------- */

typedef enum
{
	EV_TSTZ,					/* timestamptz: interval windows */
	EV_TS,						/* timestamp: interval windows */
	EV_INT,						/* integer: integer windows */
	EV_BAD						/* not an event time */
} ev_kind;

typedef struct
{
	const char *name;			/* NULL: an SQL NULL */
	ev_kind		kind;
	const char *type;			/* its type as format_type prints it */
	expect_t	expect;
} ev_col;

static const ev_col ev_cols[] = {
	{"ts", EV_TSTZ, "timestamp with time zone", OK},
	{"e8", EV_INT, "bigint", OK},
	{"tl", EV_TS, "timestamp without time zone", OK},
	{"e4", EV_INT, "integer", OK},
	{"e2", EV_INT, "smallint", OK},
	{"id", EV_INT, "bigint", OK},
	{"ord", EV_INT, "integer", OK},
	/* NULL or infinite event times are errors */
	{"tsn", EV_TSTZ, "timestamp with time zone", UNK},
	{"k4", EV_INT, "integer", UNK},
	{"k2", EV_INT, "smallint", UNK},
	{"s", EV_BAD, NULL, REF},
	{"d", EV_BAD, NULL, REF},
	{"TS", EV_BAD, NULL, REF},
	{"ctid", EV_BAD, NULL, REF},
	{"tableoid", EV_BAD, NULL, REF},
	{"", EV_BAD, NULL, REF},
	{NULL, EV_BAD, NULL, REF},
	{"f8", EV_BAD, NULL, REF},
	{"nosuch", EV_BAD, NULL, REF},
	{"ev time", EV_TSTZ, "timestamp with time zone", OK},
	{"windowagg column 1", EV_INT, "integer", OK},
};
#define N_EV_GOOD 7

typedef struct
{
	const char *from;
	const char *qual;			/* what qualifies its columns */
	expect_t	expect;
} source_t;

static const source_t sources[] = {
	{"fzt", "fzt", OK},
	{"public.fzt", "fzt", OK},
	{"fzt AS x", "x", OK},
	{"fzt x", "x", OK},
	{"ONLY fzt", "fzt", OK},
	{"fzv", "fzv", OK},
	{"fzm", "fzm", OK},
	{"fzp", "fzp", OK},
	{"fzt TABLESAMPLE SYSTEM (100)", "fzt", UNK},
	{"fzt, fzt2", "fzt", REF},
	{"fzt JOIN fzt2 USING (k4)", "fzt", REF},
	{"(SELECT * FROM fzt) q", "q", REF},
	{"generate_series(1, 3) g", "g", REF},
	{"nosuch", "nosuch", REF},
	{"fzt2", "fzt2", REF},
	{"LATERAL (SELECT * FROM fzt) l", "l", REF},
};
#define N_SOURCE_GOOD 8

typedef struct
{
	const char *expr;			/* template: '@' is the qualifier */
	expect_t	expect;
} item_t;

static const item_t keys[] = {
	{"@k4", OK}, {"@k8", OK}, {"@kn", OK}, {"@k2", OK}, {"@s", OK},
	{"@vc", OK}, {"@b", OK}, {"@d", OK}, {"@u", OK}, {"@tm", OK},
	{"@ts", OK}, {"@tl", OK}, {"@e4", OK}, {"@k4 % 7", OK},
	{"@k8 / 3", OK}, {"lower(@s)", OK}, {"@s || '-'", OK},
	{"coalesce(@k4, -1)", OK}, {"@k4::text", OK}, {"@c::text", OK},
	{"@n::int8", OK}, {"@f8::text", OK}, {"(@k4 IS NULL)", OK},
	{"CASE WHEN @k4 > 0 THEN 'pos' END", OK}, {"date_trunc('hour', @tl)", OK},
	{"7::int", OK}, {"'x'::text", OK}, {"NULL::int", OK},
	{"@s COLLATE \"C\"", OK}, {"md5(@s)", OK}, {"(@k8 % 3)::int", OK},
	{"@k2 % 2", OK}, {"@u::text", OK}, {"@id % 4", OK},
	/* the README does not say */
	{"@m", UNK}, {"@j", UNK}, {"@arr", UNK}, {"ROW(@k4, @s)", UNK},
	{"@ctid", UNK}, {"@tableoid", UNK}, {"@xmin", UNK}, {"@s::name", UNK},
	{"(@k4 % 100)::\"char\"", UNK}, {"@k4::fz_dom", UNK},
	{"interval '1 day' * @k2", UNK}, {"@k4::money", UNK}, {"@s::bytea", UNK},
	{"@k4::int2", UNK}, {"int4range(@k4, 10)", UNK}, {"@tsn", UNK},
	{"@vc::varchar(2)", UNK}, {"(@j ->> 'a')", UNK}, {"#", UNK},
	{"@\"Key\"", OK}, {"@\"order\"", OK}, {"@\"windowagg column 1\"", OK},
	{"@\"ev time\"", OK},
	{"#::text", UNK}, {"@s COLLATE fz_ci", UNK},
	/* refused: equal values can differ in their bits */
	{"@c", REF}, {"@n", REF}, {"@f8", REF}, {"@f4", REF}, {"@c::char(5)", REF},
	{"@n + 1", REF}, {"@f8 * 2", REF}, {"@s::char(2)", REF},
};
#define N_KEY_GOOD 34

static const item_t aggs[] = {
	{"count(*)", OK}, {"count(@s)", OK}, {"count(@f8)", OK}, {"count(@j)", OK},
	{"count(@arr)", OK}, {"count(@n)", OK}, {"count(@c)", OK}, {"count(1)", OK},
	{"sum(@k4)", OK}, {"sum(@k8)", OK}, {"sum(@k2)", OK}, {"sum(@kn)", OK},
	{"sum(@e8)", OK}, {"sum(@f8)", OK}, {"sum(@f4)", OK}, {"avg(@k4)", OK},
	{"avg(@k8)", OK}, {"avg(@k2)", OK}, {"avg(@f8)", OK}, {"avg(@f4)", OK},
	{"avg(@e8)", OK}, {"min(@k4)", OK}, {"max(@k4)", OK}, {"min(@k8)", OK},
	{"max(@k8)", OK}, {"min(@kn)", OK}, {"max(@kn)", OK}, {"min(@k2)", OK},
	{"max(@k2)", OK}, {"min(@f8)", OK}, {"max(@f8)", OK}, {"min(@f4)", OK},
	{"max(@f4)", OK}, {"min(@d)", OK}, {"max(@d)", OK}, {"min(@tm)", OK},
	{"max(@tm)", OK}, {"min(@ts)", OK}, {"max(@ts)", OK}, {"min(@tl)", OK},
	{"max(@tl)", OK}, {"min(@tsn)", OK}, {"max(@tsn)", OK}, {"min(@e8)", OK},
	{"max(@e8)", OK}, {"variance(@f8)", OK}, {"var_samp(@f4)", OK},
	{"var_pop(@f8)", OK}, {"stddev(@f4)", OK}, {"stddev_samp(@f8)", OK},
	{"stddev_pop(@f8)", OK}, {"var_pop(@f4)", OK}, {"sum(@k2 * 2)", OK},
	{"sum(@k4 / 2)", OK}, {"max(@k4 % 5)", OK}, {"min(@f8 * 2)", OK},
	{"sum(CASE WHEN @b THEN @k4 END)", OK}, {"sum(@n::float8)", OK},
	{"avg(length(@s))", OK}, {"pg_catalog.sum(@k4)", OK}, {"sum(@k4::int8)", OK},
	{"min(@k2::float4)", OK}, {"avg(@e4)", OK}, {"sum(@e2)", OK}, {"(count(*))", OK},
	{"variance(@k4::float8)", OK}, {"stddev_pop(@e4::float8)", OK},
	/* through the aggregates' own functions, compared exactly */
	{"sum(@n)", OK}, {"avg(@n)", OK}, {"min(@n)", OK}, {"min(@s)", OK},
	{"bool_or(@b)", OK}, {"bit_and(@k2)", OK}, {"bool_and(@b)", OK}, {"every(@b)", OK},
	{"bit_or(@k4)", OK}, {"count(DISTINCT @k4)", OK}, {"sum(DISTINCT @k4)", OK},
	{"count(*) FILTER (WHERE @b)", OK}, {"sum(@k4) FILTER (WHERE @k4 > 0)", OK},
	{"min(@f8) FILTER (WHERE true)", OK}, {"count(*) + 1", OK},
	{"sum(@k4) / 2", OK}, {"count(*)::int", OK}, {"sum(@f8::numeric)", OK},
	{"avg(@k4::numeric)", OK},
	/* the README does not say */
	{"sum(@k4::fz_dom)", UNK}, {"sum((SELECT 1))", UNK}, {"max(@k4::int2)", UNK},
	{"count(@m)", UNK}, {"count(ROW(@k4))", UNK}, {"count(#)", UNK},
	{"count(#.*)", UNK}, {"count(@s COLLATE fz_ci)", UNK},
	{"sum(@\"Key\")", OK}, {"max(@\"windowagg column 1\")", OK},
	{"min(@\"ev time\")", OK}, {"count(@\"order\")", OK},
	/* floats merged in another order, or types whose text may differ */
	{"corr(@f8, @f4)", UNK}, {"regr_count(@f8, @f8)", UNK}, {"min(@m)", UNK},
	{"sum(@tm - time '00:00')", UNK}, {"range_agg(int4range(@k4, 10))", UNK},
	{"max(@s::name)", UNK}, {"max(@u)", UNK}, {"max(@b)", UNK},
	/* refused */
	{"string_agg(@s, ',')", REF}, {"array_agg(@k4)", REF}, {"json_agg(@k4)", REF},
	{"sum(@k4 ORDER BY @k4)", REF},
	{"percentile_cont(0.5) WITHIN GROUP (ORDER BY @f8)", REF},
	{"mode() WITHIN GROUP (ORDER BY @k4)", REF}, {"windowagg.min(@f8)", REF},
	{"windowagg.sum(@f8)", REF}, {"corr(DISTINCT @f8, @f4)", REF},
	{"max(@k4) OVER ()", REF}, {"row_number() OVER ()", REF},
	{"@k8", REF}, {"@k4 + sum(@k4)", REF}, {"sum(@k4) + random()", REF},
	{"max(@j)", REF},
	{"xmlagg(xmlelement(name a))", REF}, {"grouping(@k4)", REF},
	{"jsonb_object_agg(@s, @k4)", REF},
};
#define N_AGG_GOOD 86

typedef struct
{
	const char *text;			/* NULL: none */
	expect_t	expect;
} clause_t;

static const clause_t wheres[] = {
	{NULL, OK}, {"@k4 > 0", OK}, {"@s IS NOT NULL", OK}, {"@b", OK},
	{"NOT @b", OK}, {"@e4 % 3 = 0", OK}, {"@k4 IN (SELECT k4 FROM fzt2)", OK},
	{"@id < 150", OK}, {"@id % 2 = 0", OK}, {"@id <= 290", OK},
	{"@ts < '3000-01-01'", OK}, {"@f8 = @f8", OK},
	{"@k4 BETWEEN -3 AND 3", OK}, {"@s LIKE 'a%'", OK},
	{"@tsn IS NOT NULL AND isfinite(@tsn)", OK}, {"@s = 'a' COLLATE fz_ci", OK},
	{"EXISTS (SELECT 1 FROM fzt2 WHERE fzt2.k4 = @k4)", OK},
	{"@k4 > (SELECT avg(k4) FROM fzt2)", OK}, {"random() < 2", OK},
	{"@id BETWEEN 280 AND 300", OK}, {"@id > 285", OK},
	{"@u IS NULL OR @k2 = 1", OK}, {"@k4 IS NOT NULL", OK},
	{"@\"Key\" > 1 OR @\"order\" = 'x'", OK},
	/* errors at run time, or not */
	{"1 / (@id - 150) > 0", UNK}, {"@k4::int2 > 0", UNK},
	/* refused by PostgreSQL */
	{"count(*) > 1", REF}, {"row_number() OVER () > 1", REF}, {"nosuch > 0", REF},
};
#define N_WHERE_GOOD 24

static const clause_t prefixes[] = {
	{"SELECT ", OK}, {"SELECT ALL ", OK}, {"/* c */ SELECT ", OK},
	{"select\n\t", OK},
	{"SELECT DISTINCT ", REF}, {"SELECT DISTINCT ON (1) ", REF},
	{"WITH w AS (SELECT 1) SELECT ", REF}, {"EXPLAIN SELECT ", REF},
};
#define N_PREFIX_GOOD 4

static const clause_t suffixes[] = {
	{"", OK}, {";", OK}, {" ", OK},
	{" HAVING count(*) > 0", REF}, {" ORDER BY 1", REF}, {" LIMIT 10", REF},
	{" OFFSET 0", REF}, {" FOR UPDATE", REF}, {" WINDOW w AS ()", UNK},
	{" UNION ALL SELECT 1", REF}, {" FETCH FIRST 1 ROWS ONLY", REF},
	{" LIMIT ALL", UNK}, {" FOR SHARE", REF}, {"; SELECT 1", REF},
	{" INTO TEMP fz_into", REF},
};
#define N_SUFFIX_GOOD 3

typedef struct
{
	const char *sql;			/* NULL: no arrival_order ('$' = event time) */
	const char *ref;			/* the reference's ORDER BY; NULL: ties */
	expect_t	expect;
} arrival_t;

static const arrival_t arrivals[] = {
	{NULL, "id", OK}, {"id", "id", OK}, {"$", "$, id", OK},
	{"id DESC", "id DESC", OK}, {"ord", "ord", OK}, {"ord DESC", "ord DESC", OK},
	{"$ DESC, id", "$ DESC, id", OK}, {"$, ord", "$, ord", OK},
	{"k4 NULLS FIRST, id", "k4 NULLS FIRST, id", OK},
	{"k4 DESC NULLS LAST, ord", "k4 DESC NULLS LAST, ord", OK},
	{"(id % 7), id", "(id % 7), id", OK},
	{"s COLLATE \"C\", id", "s COLLATE \"C\", id", OK},
	{"id USING <", "id USING <", OK}, {"e4 DESC, id", "e4 DESC, id", OK},
	{"\"windowagg column 1\", id", "\"windowagg column 1\", id", OK},
	{"\"order\" NULLS FIRST, \"Key\", id", "\"order\" NULLS FIRST, \"Key\", id", OK},
	/* ties between rows of different event times: no comparison */
	{"k4", NULL, OK}, {"1", NULL, OK}, {"random()", NULL, OK},
	{"(SELECT 1)", NULL, OK}, {"\"windowagg column 1\"", NULL, UNK},
	/* refused */
	{"id LIMIT 1", NULL, REF}, {"id; SELECT 1", NULL, REF},
	{"id FOR UPDATE", NULL, REF}, {"id OFFSET 1", NULL, REF}, {"", NULL, REF},
	{"nosuch", NULL, REF}, {"id) x JOIN fzt2 ON (true", NULL, REF},
	{"id FETCH FIRST 1 ROW ONLY", NULL, REF}, {"id, (SELECT", NULL, REF},
	{"id FOR SHARE OF fzt", NULL, REF},
};
#define N_ARRIVAL_GOOD 16

/* Tokens spliced into the query text. */
static const char *const tokens[] = {
	";", ")", "(", "/*", "*/", "--", "$$", "'", "\"", "::", ",", " FROM ",
	" WHERE ", " GROUP BY ", " UNION SELECT 1", " WITH x AS (SELECT 1) ",
	" HAVING count(*) > 0", " ORDER BY 1", " LIMIT 1", " FOR UPDATE",
	" WINDOW w AS ()", " LATERAL ", "$1", " count(*) ", " sum(", " OVER () ",
	" FILTER (WHERE true) ", " DISTINCT ", " NULL ", " ROW(", " ARRAY[",
	" ::fz_dom", " COLLATE \"C\" ", "\\", "E'\\x00'", " AS window_start",
	" AS \"pane\"", " fzt2 ", " JOIN ", " ON true ", " ONLY ", " * ",
	" GROUPING SETS ((), (k4)) ", " ROLLUP (k4) ", " TABLESAMPLE BERNOULLI (50) ",
	" VALUES (1) ", " windowagg.min(", " percentile_disc(0.5) WITHIN GROUP (",
	" 9223372036854775807 ", " -9223372036854775808 ", " 'NaN'::float8 ",
};

/* Window sizes in ticks: microseconds, or the event time's own units. */
static const int64_t interval_sizes[] = {
	INT64_C(1000000), INT64_C(60000000), INT64_C(300000000),
	INT64_C(420000000), INT64_C(3600000000), INT64_C(86400000000),
	INT64_C(1), INT64_C(1000), INT64_C(90000000), INT64_C(604800000000),
	INT64_C(86400000000000), INT64_C(8640000000000000), INT64_MAX,
	INT64_MAX - 1, INT64_C(4611686018427387904), INT64_C(7),
};

static const int64_t integer_sizes[] = {
	1, 2, 3, 7, 10, 60, 100, 1000, 13, 25, INT64_C(4294967296),
	INT64_C(4611686018427387904), INT64_MAX, INT64_MAX - 1,
};

typedef struct
{
	const char *sql;			/* timestamptz literal; NULL: omitted */
	int64_t		ticks;
	bool		known;			/* ticks known (not in the session's zone) */
	bool		valid;
} origin_t;

static const origin_t interval_origins[] = {
	{NULL, INT64_C(-946684800000000), true, true},
	{"'2000-01-01 00:00:00+00'", 0, true, true},
	{"'2024-01-01 00:00:07.5+00'", INT64_C(757382407500000), true, true},
	{"'1970-01-01 00:00:00+00'", INT64_C(-946684800000000), true, true},
	{"'4714-11-24 00:00:00+00 BC'", INT64_C(-211813488000000000), true, true},
	{"'294276-12-31 23:59:59.999999+00'", INT64_C(9223371331199999999), true, true},
	{"'1999-12-31 23:59:59.999999+00'", -1, true, true},
	{"'2024-06-01 12:00:00'", 0, false, true},
	{"NULL", INT64_C(-946684800000000), true, true},
	{"'infinity'", 0, true, false},
	{"'-infinity'", 0, true, false},
};

static const int64_t integer_origins[] = {
	0, 3, -7, 1000000, INT64_MAX, INT64_MIN, INT64_C(123456789012345), 5,
};

/* Origins of hand-built interval windows: ticks, in range or not. */
static const int64_t raw_origins[] = {
	0, INT64_C(-946684800000000), INT64_C(757382400000000), 7500000,
	INT64_C(-211813488000000000), INT64_C(9223371331199999999), INT64_MAX,
	INT64_MIN,
};

typedef struct
{
	const char *sql;			/* NULL: omitted */
	const char *ticks;			/* for the reference */
	expect_t	expect;
} duration_t;

static const duration_t interval_durations[] = {
	{NULL, "0", OK}, {"NULL", "0", OK}, {"interval '30 seconds'", "30000000", OK},
	{"'30 s'", "30000000", OK}, {"'5 min'::text", "300000000", OK},
	{"0", "0", OK}, {"interval '0'", "0", OK},
	{"interval '1 hour'", "3600000000", OK},
	{"interval '1 day'", "86400000000", OK},
	{"interval '1000 days'", "86400000000000", OK},
	{"interval '106751991 days'", "9223372022400000000", OK},
	{"interval '1 microsecond'", "1", OK}, {"interval '2 min'", "120000000", OK},
	{"'00:10:00'", "600000000", OK},
	{"5", NULL, REF}, {"interval '-1 min'", NULL, REF},
	{"interval '1 mon'", NULL, REF}, {"'1 mon'", NULL, REF}, {"1.5", NULL, REF},
	{"interval '106751992 days'", NULL, REF}, {"'garbage'", NULL, REF},
	{"true", NULL, REF}, {"now()", NULL, REF},
};
#define N_INTERVAL_DURATION_GOOD 14

static const duration_t integer_durations[] = {
	{NULL, "0", OK}, {"NULL", "0", OK}, {"0", "0", OK}, {"1", "1", OK},
	{"5", "5", OK}, {"20", "20", OK}, {"100", "100", OK}, {"1000", "1000", OK},
	{"1000000", "1000000", OK}, {"4294967296", "4294967296", OK},
	{"9223372036854775807", "9223372036854775807", OK}, {"'20'", "20", OK},
	{"20::int2", "20", OK}, {"20::int4", "20", OK},
	{"interval '1 min'", NULL, REF}, {"-1", NULL, REF}, {"1.5", NULL, REF},
	{"'x'", NULL, REF}, {"'-5'", NULL, REF}, {"'9223372036854775808'", NULL, REF},
};
#define N_INTEGER_DURATION_GOOD 14

static const char *const time_zones[] = {"UTC", "America/New_York", "Asia/Kathmandu"};

/* ---------- a decoded case ---------- */

#define MAX_KEYS 3
#define MAX_AGGS 4
#define MAX_WINDOWS 3

typedef struct
{
	/* what to run */
	bool		dropped;		/* windowagg.dropped() instead of aggregate() */
	bool		share_windows;
	const char *time_zone;
	const source_t *source;
	const ev_col *ev;
	char		ev_ident[64];	/* its name as SQL writes it */
	ev_kind		domain;			/* of the windows */
	sbuf		query;			/* $1 */
	sbuf		event_time;		/* $2 */
	bool		event_time_null;
	sbuf		arrival;		/* $3 */
	bool		arrival_null;
	sbuf		windows;		/* the windows argument */
	sbuf		bound;			/* ", bound => ..." or empty */
	sbuf		lateness;

	/* for the reference */
	int			n_keys;
	int			n_aggs;
	sbuf		key_sql[MAX_KEYS];	/* in select-list order */
	sbuf		agg_sql[MAX_AGGS];
	sbuf		key_ref[MAX_KEYS];	/* the same, every column qualified */
	sbuf		agg_ref[MAX_AGGS];
	sbuf		where;			/* without WHERE; empty: none */
	sbuf		rows_sql;		/* $4: fz_accept's rows */
	sbuf		sizes;			/* numeric[] expressions */
	sbuf		slides;
	sbuf		origins;
	const char *bound_ticks;
	const char *lateness_ticks;
	__int128	per_event;		/* windows an event falls into, at most */

	expect_t	expect;
	bool		comparable;		/* compare with the reference */
	bool		spliced;
	const char *spliced_what;
} fz_case;

static fz_case C;

static void
case_reset(fz_case *c)
{
	sbuf	   *bufs[] = {&c->query, &c->event_time, &c->arrival, &c->windows,
		&c->bound, &c->lateness, &c->where, &c->rows_sql, &c->sizes,
	&c->slides, &c->origins};

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		sb_reset(bufs[i]);
	for (int i = 0; i < MAX_KEYS; i++)
	{
		sb_reset(&c->key_sql[i]);
		sb_reset(&c->key_ref[i]);
	}
	for (int i = 0; i < MAX_AGGS; i++)
	{
		sb_reset(&c->agg_sql[i]);
		sb_reset(&c->agg_ref[i]);
	}
	c->dropped = false;
	c->share_windows = true;
	c->time_zone = time_zones[0];
	c->event_time_null = false;
	c->arrival_null = false;
	c->n_keys = 0;
	c->n_aggs = 0;
	c->bound_ticks = "0";
	c->lateness_ticks = "0";
	c->per_event = 0;
	c->expect = OK;
	c->comparable = true;
	c->spliced = false;
	c->spliced_what = NULL;
}

/* ---------- decoding ---------- */

static int64_t
gcd64(int64_t a, int64_t b)
{
	while (b != 0)
	{
		int64_t		t = a % b;

		a = b;
		b = t;
	}
	return a < 0 ? -a : a;
}

static int64_t
floor_mod(int64_t a, int64_t m)
{
	int64_t		r = a % m;

	return r < 0 ? r + m : r;
}

typedef struct
{
	int64_t		size;
	int64_t		slide;
	int64_t		origin;
	bool		origin_known;
} win_t;

/* Choose a slide for a hopping window of that size. */
static int64_t
decode_slide(fuzz_input *in, int64_t size, fz_case *c)
{
	static const int ratios[] = {2, 3, 4, 5, 6, 10, 12, 1};
	uint8_t		b = take_u8(in);

	if (b < 224)
		return size / ratios[b % 8] > 0 ? size / ratios[b % 8] : size;
	switch (b % 4)
	{
		case 0:
			return size > 1 ? size - 1 : size;
		case 1:
			/* wider than the window: gaps */
			if (size <= INT64_MAX / 2)
			{
				EXPECT(c, REF);
				return size * 2;
			}
			return size;
		case 2:
			/* one tick: too many windows per event unless tiny */
			return 1;
		default:
			return size / 1000 > 0 ? size / 1000 : size;
	}
}

static void
decode_windows(fuzz_input *in, fz_case *c)
{
	win_t		w[MAX_WINDOWS];
	uint8_t		b = take_u8(in);
	int			n = 1 + (b & 1) + ((b & 6) == 6);
	bool		interval = c->domain != EV_INT;

	/* degenerate sets */
	if (b >= 250)
	{
		c->comparable = false;
		switch (b)
		{
			case 250:
				sb_add(&c->windows, "ARRAY[]::windowagg.window[]");
				EXPECT(c, REF);
				break;
			case 251:
				sb_add(&c->windows, "NULL");
				EXPECT(c, REF);
				break;
			case 252:
			case 253:
				/* at the limit of 64, and one past it */
				sb_addf(&c->windows, interval ?
						"ARRAY(SELECT windowagg.tumbling(i * interval '1 min') FROM generate_series(1, %d) i)" :
						"ARRAY(SELECT windowagg.tumbling(i::bigint * 7) FROM generate_series(1, %d) i)",
						b == 252 ? 64 : 65);
				EXPECT(c, b == 252 ? OK : REF);
				break;
			case 254:
				sb_add(&c->windows, interval ?
					   "ARRAY[windowagg.tumbling('1 hour'), NULL]" :
					   "ARRAY[windowagg.tumbling(10), NULL]");
				EXPECT(c, REF);
				break;
			default:
				/* a window of the other domain next to a good one */
				sb_add(&c->windows, "ARRAY[windowagg.tumbling(10), windowagg.tumbling('1 hour')]");
				EXPECT(c, REF);
				break;
		}
		return;
	}

	sb_add(&c->windows, "ARRAY[");
	sb_add(&c->sizes, "ARRAY[");
	sb_add(&c->slides, "ARRAY[");
	sb_add(&c->origins, "ARRAY[");
	for (int i = 0; i < n; i++)
	{
		uint8_t		form = take_u8(in);
		uint8_t		sz = take_u8(in);
		bool		hopping = (form & 1) != 0;
		int			shape = (form >> 1) % 4;	/* typed, text, composite,
												 * named */
		int64_t		size;
		const origin_t *io = NULL;
		int64_t		origin_ticks;
		sbuf	   *out = &c->windows;

		if (i > 0)
		{
			sb_add(out, ", ");
			sb_add(&c->sizes, ", ");
			sb_add(&c->slides, ", ");
			sb_add(&c->origins, ", ");
		}
		/* sizes: nearly always from the table, now and then invalid */
		if (sz < 248)
			size = interval ?
				interval_sizes[sz % (sizeof(interval_sizes) / sizeof(interval_sizes[0]))] :
				integer_sizes[sz % (sizeof(integer_sizes) / sizeof(integer_sizes[0]))];
		else
		{
			size = sz % 2 == 0 ? 0 : (interval ? -60000000 : -5);
			EXPECT(c, REF);
		}
		w[i].size = size;
		w[i].slide = hopping ? decode_slide(in, size, c) : size;

		/* origins */
		{
			uint8_t		o = take_u8(in);

			if (shape == 2)
			{
				origin_ticks = interval ?
					raw_origins[o % (sizeof(raw_origins) / sizeof(raw_origins[0]))] :
					integer_origins[o % (sizeof(integer_origins) / sizeof(integer_origins[0]))];
				w[i].origin_known = true;
			}
			else if (interval)
			{
				io = &interval_origins[o % (sizeof(interval_origins) / sizeof(interval_origins[0]))];
				if (!io->valid)
					EXPECT(c, REF);
				origin_ticks = io->ticks;
				w[i].origin_known = io->known;
			}
			else
			{
				origin_ticks = integer_origins[o % (sizeof(integer_origins) / sizeof(integer_origins[0]))];
				w[i].origin_known = true;
			}
			w[i].origin = origin_ticks;
		}

		if (w[i].slide > w[i].size || w[i].size <= 0)
			EXPECT(c, REF);

		/* the windowagg side */
		if (shape == 2)
		{
			sb_addf(out, "ROW('%s', ", interval ? "interval" : "integer");
			sb_int8(out, w[i].size);
			sb_add(out, ", ");
			sb_int8(out, w[i].slide);
			sb_add(out, ", ");
			sb_int8(out, origin_ticks);
			/* the kind a constructor would give, and no calendar fields */
			sb_add(out, w[i].size == w[i].slide ? ", 'tumbling'" : ", 'hopping'");
			sb_add(out, ", NULL, NULL, NULL)::windowagg.window");
		}
		else
		{
			const char *fn = hopping ? "hopping" : "tumbling";
			bool		text = shape == 1;
			bool		named = shape == 3;

			sb_addf(out, "windowagg.%s(%s", fn, named ? "size => " : "");
			if (interval)
				sb_interval(out, w[i].size, !text);
			else
				sb_number(out, w[i].size, text);
			if (hopping)
			{
				sb_add(out, named ? ", slide => " : ", ");
				if (interval)
					sb_interval(out, w[i].slide, !text);
				else
					sb_number(out, w[i].slide, text);
			}
			if (interval && io->sql != NULL)
			{
				sb_add(out, named ? ", origin => " : ", ");
				sb_add(out, io->sql);
				if (!text && strcmp(io->sql, "NULL") != 0)
					sb_add(out, "::timestamptz");
			}
			else if (!interval && origin_ticks != 0)
			{
				sb_add(out, named ? ", origin => " : ", ");
				sb_number(out, origin_ticks, text);
			}
			sb_add(out, ")");
		}

		/* the reference's arrays: ticks computed without windowagg */
		sb_addf(&c->sizes, "%" PRId64, w[i].size);
		sb_addf(&c->slides, "%" PRId64, w[i].slide);
		if (io != NULL && io->sql != NULL && strcmp(io->sql, "NULL") != 0)
			sb_addf(&c->origins, "fz_ticks((%s)::timestamptz)", io->sql);
		else
			sb_addf(&c->origins, "%" PRId64, origin_ticks);

		/* at most 3 windows of at most 2^63 each: no overflow in 128 bits */
		if (w[i].size > 0 && w[i].slide > 0)
			c->per_event += (__int128) (w[i].size / w[i].slide) + (w[i].size % w[i].slide != 0);
	}
	sb_add(&c->windows, "]");
	sb_add(&c->sizes, "]::numeric[]");
	sb_add(&c->slides, "]::numeric[]");
	sb_add(&c->origins, "]::numeric[]");

	/* the rules of a window set, which windowagg must enforce */
	if (c->per_event > 100000)
		EXPECT(c, REF);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
		{
			int64_t		g;

			if (w[i].size <= 0 || w[i].slide <= 0 || w[j].slide <= 0 ||
				w[i].size != w[j].size)
				continue;
			if (!w[i].origin_known || !w[j].origin_known)
			{
				EXPECT(c, UNK);
				continue;
			}
			g = gcd64(w[i].slide, w[j].slide);
			if (floor_mod(w[i].origin, g) == floor_mod(w[j].origin, g))
				EXPECT(c, REF);
		}
	if (c->per_event > MAX_COMPARED_WINDOWS_PER_EVENT)
		c->comparable = false;
}

static void
decode_duration(fuzz_input *in, fz_case *c, sbuf *out, const char *name,
				const char **ticks)
{
	const duration_t *d;

	if (c->domain != EV_INT)
		d = &interval_durations[pick(in, N_INTERVAL_DURATION_GOOD,
									 sizeof(interval_durations) / sizeof(interval_durations[0]))];
	else
		d = &integer_durations[pick(in, N_INTEGER_DURATION_GOOD,
									sizeof(integer_durations) / sizeof(integer_durations[0]))];
	EXPECT(c, d->expect);
	*ticks = d->ticks ? d->ticks : "0";
	if (d->sql != NULL)
		sb_addf(out, ", %s => %s", name, d->sql);
}

/* Splice bytes into a string at a position. */
static void
splice_into(sbuf *s, size_t pos, const char *bytes, size_t n)
{
	sbuf		tail = {0};

	if (pos > s->len)
		pos = s->len;
	sb_reset(&tail);
	sb_add(&tail, s->data + pos);
	s->len = pos;
	s->data[pos] = '\0';
	sb_addn(s, bytes, n);
	sb_addn(s, tail.data, tail.len);
	free(tail.data);
}

static void
decode_case(const uint8_t *data, size_t size, fz_case *c)
{
	fuzz_input	in = {data, size, 0};
	fuzz_input *ip = &in;
	uint8_t		flags;
	int			order[MAX_KEYS + MAX_AGGS];
	int			key_pos[MAX_KEYS];
	int			key_idx[MAX_KEYS];
	char		alias[MAX_KEYS + MAX_AGGS][24];
	char		qual[64];
	int			n_items;
	uint8_t		mask;
	const char *ev_name;		/* the event time column, quoted if need be */
	char		ev_quoted[64];
	const arrival_t *arr;

	case_reset(c);
	flags = take_u8(ip);
	c->dropped = (flags & 7) == 7;
	c->share_windows = (flags & 8) == 0;
	c->time_zone = time_zones[(flags >> 4) % 3];

	c->source = &sources[pick(ip, N_SOURCE_GOOD, sizeof(sources) / sizeof(sources[0]))];
	C_source_name = c->source->qual;
	EXPECT(c, c->source->expect);
	c->ev = &ev_cols[pick(ip, N_EV_GOOD, sizeof(ev_cols) / sizeof(ev_cols[0]))];
	EXPECT(c, c->ev->expect);
	ev_name = c->ev->name ? c->ev->name : "id";
	if (strspn(ev_name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(ev_name))
	{
		snprintf(ev_quoted, sizeof(ev_quoted), "\"%s\"", ev_name);
		ev_name = ev_quoted;
	}
	if (c->ev->name == NULL)
		c->event_time_null = true;
	else
		sb_add(&c->event_time, c->ev->name);
	if (c->ev->kind == EV_BAD)
		c->comparable = false;
	snprintf(c->ev_ident, sizeof(c->ev_ident), "%s", ev_name);

	/* keys and aggregates */
	/* zeros read as one key and one aggregate */
	c->n_keys = (take_u8(ip) + 1) % (MAX_KEYS + 1);
	c->n_aggs = (take_u8(ip) + 1) % (MAX_AGGS + 1);
	n_items = c->n_keys + c->n_aggs;
	for (int i = 0; i < c->n_keys; i++)
	{
		uint8_t		q = take_u8(ip);

		key_idx[i] = pick(ip, N_KEY_GOOD, sizeof(keys) / sizeof(keys[0]));
		EXPECT(c, keys[key_idx[i]].expect);
		snprintf(qual, sizeof(qual), "%s.", c->source->qual);
		sb_template(&c->key_sql[i], keys[key_idx[i]].expr, (q & 1) ? qual : "", ev_name);
		sb_template(&c->key_ref[i], keys[key_idx[i]].expr, qual, ev_name);
		/* two equal keys: the second is no GROUP BY item of its own */
		for (int j = 0; j < i; j++)
			if (key_idx[j] == key_idx[i])
				EXPECT(c, UNK);
		/* alias: none, a name, or a reserved one */
		if ((q & 6) == 2 || (q & 6) == 4)
			snprintf(alias[i], sizeof(alias[i]), " AS fz_k%d", i);
		else if ((q & 0xf6) == 6)
		{
			static const char *const reserved[] = {"window_start", "window_end", "pane", "revision", "updated_at"};

			snprintf(alias[i], sizeof(alias[i]), " AS %s", reserved[(q >> 3) % 5]);
			EXPECT(c, REF);
		}
		else
			alias[i][0] = '\0';
	}
	for (int i = 0; i < c->n_aggs; i++)
	{
		uint8_t		q = take_u8(ip);
		int			a = pick(ip, N_AGG_GOOD, sizeof(aggs) / sizeof(aggs[0]));

		EXPECT(c, aggs[a].expect);
		snprintf(qual, sizeof(qual), "%s.", c->source->qual);
		sb_template(&c->agg_sql[i], aggs[a].expr, (q & 1) ? qual : "", ev_name);
		sb_template(&c->agg_ref[i], aggs[a].expr, qual, ev_name);
		if ((q & 6) == 2)
			snprintf(alias[MAX_KEYS + i], sizeof(alias[0]), " AS fz_a%d", i);
		else if ((q & 0xfe) == 0x86)
		{
			snprintf(alias[MAX_KEYS + i], sizeof(alias[0]), " AS %s",
					 (q & 8) ? "window_end" : "revision");
			EXPECT(c, REF);
		}
		else
			alias[MAX_KEYS + i][0] = '\0';
	}
	/* interleave: keys keep their order, as aggregates do */
	mask = take_u8(ip);
	{
		int			k = 0,
					a = 0;

		for (int i = 0; i < n_items; i++)
		{
			bool		key_next = k < c->n_keys &&
				(a >= c->n_aggs || ((mask >> (i % 8)) & 1) == 0);

			order[i] = key_next ? k++ : MAX_KEYS + a++;
		}
	}

	/* the query */
	{
		const clause_t *prefix = &prefixes[pick(ip, N_PREFIX_GOOD,
												sizeof(prefixes) / sizeof(prefixes[0]))];
		const clause_t *where = &wheres[pick(ip, N_WHERE_GOOD,
											 sizeof(wheres) / sizeof(wheres[0]))];
		uint8_t		gb = take_u8(ip);
		const clause_t *suffix = &suffixes[pick(ip, N_SUFFIX_GOOD,
												sizeof(suffixes) / sizeof(suffixes[0]))];
		bool		parens = (gb & 0xf0) == 0xf0;
		int			variant = gb % 32 < 16 ? gb % 32 : 0;
		sbuf	   *q = &c->query;

		EXPECT(c, prefix->expect);
		EXPECT(c, where->expect);
		EXPECT(c, suffix->expect);
		if (parens)
			EXPECT(c, UNK);
		if (parens)
			sb_add(q, "(");
		sb_add(q, prefix->text);
		if (n_items == 0)
		{
			/* an empty select list: the README does not say */
			EXPECT(c, UNK);
		}
		for (int i = 0; i < n_items; i++)
		{
			int			it = order[i];

			if (i > 0)
				sb_add(q, ", ");
			if (it < MAX_KEYS)
			{
				sb_add(q, c->key_sql[it].data);
				key_pos[it] = i + 1;
			}
			else
				sb_add(q, c->agg_sql[it - MAX_KEYS].data);
			sb_add(q, alias[it]);
		}
		sb_add(q, " FROM ");
		sb_add(q, c->source->from);
		if (where->text != NULL)
		{
			snprintf(qual, sizeof(qual), "%s.", c->source->qual);
			sb_template(&c->where, where->text, (gb & 0x10) ? qual : "", ev_name);
			sb_add(q, " WHERE ");
			sb_add(q, c->where.data);
		}

		/* GROUP BY */
		if (c->n_keys == 0)
		{
			if (variant == 12)
			{
				sb_add(q, " GROUP BY ()");
				EXPECT(c, UNK);
			}
			else if (variant == 7)
			{
				sb_add(q, " GROUP BY ord");
				EXPECT(c, REF);
			}
		}
		else
		{
			int			first = 0;

			sb_add(q, " GROUP BY ");
			switch (variant)
			{
				case 9:
					sb_add(q, "ROLLUP (");
					EXPECT(c, REF);
					break;
				case 10:
					sb_add(q, "CUBE (");
					EXPECT(c, REF);
					break;
				case 11:
					sb_add(q, "GROUPING SETS ((");
					EXPECT(c, UNK);
					break;
				case 13:
					sb_add(q, "DISTINCT ");
					EXPECT(c, UNK);
					break;
				default:
					break;
			}
			for (int i = 0; i < c->n_keys; i++)
			{
				int			k = variant == 4 ? c->n_keys - 1 - i : i;

				if (variant == 6 && k == c->n_keys - 1)
				{
					/* a key left out (a constant key is allowed there) */
					EXPECT(c, REF);
					continue;
				}
				if (first++ > 0)
					sb_add(q, ", ");
				if (variant == 1 || (variant == 3 && i % 2 == 1))
					sb_addf(q, "%d", key_pos[k]);
				else if (variant == 2 && alias[k][0] != '\0')
					sb_add(q, alias[k] + 4);
				else
					sb_add(q, c->key_sql[k].data);
			}
			if (variant == 5)
				sb_addf(q, ", %s", c->key_sql[0].data);
			if (variant == 7)
			{
				sb_add(q, first > 0 ? ", ord" : "ord");
				EXPECT(c, REF);
			}
			if (variant == 14)
			{
				sb_add(q, first > 0 ? ", 99" : "99");
				EXPECT(c, REF);
			}
			if (variant == 6 && c->n_keys == 1)
				sb_add(q, "()");
			if (variant == 8)
			{
				/* no GROUP BY at all */
				q->len -= strlen(" GROUP BY ") + strlen(c->key_sql[0].data);
				for (int i = 1; i < c->n_keys; i++)
					q->len -= 2 + strlen(c->key_sql[i].data);
				q->data[q->len] = '\0';
				EXPECT(c, REF);
			}
			if (variant == 9 || variant == 10)
				sb_add(q, ")");
			if (variant == 11)
				sb_add(q, "))");
			if (variant == 12)
			{
				/* PostgreSQL flattens this into the plain GROUP BY */
				sb_add(q, ", ()");
				EXPECT(c, UNK);
			}
		}
		sb_add(q, suffix->text);
		if (parens)
			sb_add(q, ")");
	}

	/* arrival order */
	arr = &arrivals[pick(ip, N_ARRIVAL_GOOD, sizeof(arrivals) / sizeof(arrivals[0]))];
	EXPECT(c, arr->expect);
	if (arr->sql == NULL)
		c->arrival_null = true;
	else
		sb_template(&c->arrival, arr->sql, "", ev_name);
	if (arr->ref == NULL)
		c->comparable = false;

	/* windows, in the event time's domain or now and then the other one */
	{
		uint8_t		d = take_u8(ip);

		c->domain = c->ev->kind;
		if (c->domain == EV_BAD)
			c->domain = (d & 1) ? EV_INT : EV_TSTZ;
		else if (d >= 248)
		{
			c->domain = c->domain == EV_INT ? EV_TSTZ : EV_INT;
			EXPECT(c, REF);
		}
	}
	decode_windows(ip, c);
	decode_duration(ip, c, &c->bound, "bound", &c->bound_ticks);
	decode_duration(ip, c, &c->lateness, "lateness", &c->lateness_ticks);

	/* garbage */
	{
		uint8_t		sp = take_u8(ip);
		const uint8_t *bytes;
		size_t		n;
		size_t		pos;

		switch (sp % 32)
		{
			case 1:
				pos = take_u16(ip) % (c->query.len + 1);
				n = take_bytes(ip, &bytes, 1 + take_u8(ip) % 8);
				splice_into(&c->query, pos, (const char *) bytes, n);
				c->spliced_what = "raw bytes into the query";
				break;
			case 2:
				pos = take_u16(ip) % (c->query.len + 1);
				{
					const char *t = tokens[take_u8(ip) % (sizeof(tokens) / sizeof(tokens[0]))];

					splice_into(&c->query, pos, t, strlen(t));
				}
				c->spliced_what = "a token into the query";
				break;
			case 3:
				n = take_bytes(ip, &bytes, 1 + take_u8(ip) % 8);
				if (c->arrival_null)
					sb_add(&c->arrival, "id");
				c->arrival_null = false;
				sb_addn(&c->arrival, (const char *) bytes, n);
				c->spliced_what = "raw bytes after arrival_order";
				break;
			case 4:
				n = take_bytes(ip, &bytes, 1 + take_u8(ip) % 8);
				sb_reset(&c->event_time);
				c->event_time_null = false;
				sb_addn(&c->event_time, (const char *) bytes, n);
				c->spliced_what = "raw bytes as event_time";
				break;
			case 5:
				pos = take_u16(ip) % (c->query.len + 1);
				c->query.len = pos;
				c->query.data[pos] = '\0';
				c->spliced_what = "the query cut short";
				break;
			default:
				break;
		}
		if (c->spliced_what != NULL)
		{
			/* garbage may as well repair a refused query (cut it short...) */
			c->spliced = true;
			c->comparable = false;
			c->expect = UNK;
		}
	}

	/* fz_accept's rows: the same source and WHERE, in arrival order */
	if (c->comparable)
	{
		const char *q = c->source->qual;

		sb_addf(&c->rows_sql, "SELECT %s.id AS wa_fz_id, ", q);
		if (c->ev->kind == EV_INT)
			sb_addf(&c->rows_sql, "%s.%s::numeric", q, ev_name);
		else
			sb_addf(&c->rows_sql, "fz_ticks(%s.%s)", q, ev_name);
		sb_addf(&c->rows_sql, " AS wa_fz_tk FROM %s", c->source->from);
		if (c->where.len > 0)
			sb_addf(&c->rows_sql, " WHERE %s", c->where.data);
		sb_add(&c->rows_sql, " ORDER BY ");
		sb_template(&c->rows_sql, arr->ref, "", ev_name);
	}
	if (c->expect == REF)
		c->comparable = false;
}

/* ---------- the server ---------- */

/*
 * libFuzzer sees the coverage of this client only, not of the server.  What
 * the server did is fed back as extra features instead: the source file and
 * line of every error (a place in agg_query.c, batch.c, ...), and the types
 * of the columns of every accepted case, so that inputs that reach a new
 * error or a new kind of column are kept.
 */
__attribute__((used, section("__libfuzzer_extra_counters")))
static uint8_t server_features[1 << 14];

static void
server_feature(const char *a, const char *b)
{
	uint32_t	h = 2166136261u;

	for (const char *p = a ? a : ""; *p; p++)
		h = (h ^ (uint8_t) *p) * 16777619u;
	h = (h ^ '|') * 16777619u;
	for (const char *p = b ? b : ""; *p; p++)
		h = (h ^ (uint8_t) *p) * 16777619u;
	server_features[h % sizeof(server_features)]++;
}

static void
error_feature(const PGresult *res)
{
	char		where[256];

	snprintf(where, sizeof(where), "%s:%s",
			 PQresultErrorField(res, PG_DIAG_SOURCE_FILE) ? PQresultErrorField(res, PG_DIAG_SOURCE_FILE) : "",
			 PQresultErrorField(res, PG_DIAG_SOURCE_LINE) ? PQresultErrorField(res, PG_DIAG_SOURCE_LINE) : "");
	server_feature(where, PQresultErrorField(res, PG_DIAG_SQLSTATE));
}

static PGconn *conn;

/* Bytes as a C string literal, for reports. */
static void
print_escaped(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++)
	{
		unsigned char ch = (unsigned char) s[i];

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 32 || ch >= 127)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void
print_case(FILE *f, const fz_case *c)
{
	static const char *const expects[] = {"supported", "unknown", "refused"};

	fprintf(f, "  function:      windowagg.%s\n", c->dropped ? "dropped" : "aggregate");
	fprintf(f, "  query:         ");
	print_escaped(f, c->query.data, c->query.len);
	fprintf(f, "\n  event_time:    ");
	if (c->event_time_null)
		fprintf(f, "NULL");
	else
		print_escaped(f, c->event_time.data, c->event_time.len);
	fprintf(f, "\n  windows:       %s\n", c->windows.data);
	fprintf(f, "  bound:         %s\n", c->bound.len ? c->bound.data + 2 : "(omitted)");
	fprintf(f, "  lateness:      %s\n", c->lateness.len ? c->lateness.data + 2 : "(omitted)");
	fprintf(f, "  arrival_order: ");
	if (c->arrival_null)
		fprintf(f, "(omitted)");
	else
		print_escaped(f, c->arrival.data, c->arrival.len);
	fprintf(f, "\n  settings:      windowagg.share_windows = %s, TimeZone = %s\n",
			c->share_windows ? "on" : "off", c->time_zone);
	fprintf(f, "  expected:      %s%s%s%s\n", expects[c->expect],
			c->comparable ? ", compared with the reference" : "",
			c->spliced ? ", spliced: " : "", c->spliced ? c->spliced_what : "");
	if (c->comparable)
		fprintf(f, "  reference:     fz_accept(rows: %s; sizes %s, slides %s, origins %s, bound %s, lateness %s)\n",
				c->rows_sql.data, c->sizes.data, c->slides.data, c->origins.data,
				c->bound_ticks, c->lateness_ticks);
}

/* A finding: say what and on what, and abort so that libFuzzer keeps it. */
static void
finding(const char *what, const char *detail, const char *sql)
{
	fprintf(stderr, "\n==== fuzz_agg_query finding: %s\n", what);
	print_case(stderr, &C);
	if (sql != NULL)
		fprintf(stderr, "  statement:     %s\n", sql);
	if (detail != NULL)
		fprintf(stderr, "  details:\n%s\n", detail);
	fflush(stderr);
	abort();
}

static void
quiet_notices(void *arg, const PGresult *res)
{
}

static void
connect_server(void)
{
	const char *conninfo = getenv("WA_FUZZ_CONNINFO");
	PGresult   *res;

	if (conninfo == NULL)
	{
		fprintf(stderr, "fuzz_agg_query: set WA_FUZZ_CONNINFO to a server where test/fuzz/agg_query_setup.sql ran (run-agg-query.sh does)\n");
		exit(2);
	}
	conn = PQconnectdb(conninfo);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "fuzz_agg_query: cannot connect: %s", PQerrorMessage(conn));
		exit(2);
	}
	PQsetNoticeReceiver(conn, quiet_notices, NULL);
	res = PQexec(conn,
				 "SET client_min_messages = error; "
				 "SET windowagg.batch_memory = '64MB'; "
				 "SET windowagg.result_memory = '4MB'; "
				 "SET DateStyle = 'ISO, MDY'; "
				 "SET extra_float_digits = 3; "
				 "SELECT 1 FROM fzt, pg_proc WHERE proname = 'fz_accept' LIMIT 1");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
	{
		fprintf(stderr, "fuzz_agg_query: the fixtures are missing (apply test/fuzz/agg_query_setup.sql): %s",
				PQresultErrorMessage(res));
		exit(2);
	}
	PQclear(res);
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Wait until the server's answer is complete; false on a timeout. */
static bool
wait_ready(long deadline)
{
	while (PQisBusy(conn))
	{
		struct pollfd pfd = {PQsocket(conn), POLLIN, 0};
		long		left = deadline - now_ms();

		if (left <= 0)
			return false;
		if (poll(&pfd, 1, (int) (left > 1000 ? 1000 : left)) < 0)
			continue;
		if (!PQconsumeInput(conn))
			return true;		/* the connection broke: PQgetResult says so */
	}
	return true;
}

/*
 * Run one statement (params: text, NULL for an SQL NULL) and return its
 * last result.  A lost connection or a statement the server neither
 * finishes nor cancels is a finding.
 */
static PGresult *
run(const char *sql, int n_params, const char *const *params)
{
	static const unsigned int types[4] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	PGresult   *last = NULL;
	PGresult   *res;
	bool		sent;

	if (n_params > 0)
		sent = PQsendQueryParams(conn, sql, n_params, types, params, NULL, NULL, 0);
	else
		sent = PQsendQuery(conn, sql);
	if (!sent)
		finding("could not send a statement (connection lost?)", PQerrorMessage(conn), sql);
	if (!wait_ready(now_ms() + CLIENT_TIMEOUT_MS))
	{
		PGcancel   *cancel = PQgetCancel(conn);
		char		err[256];

		if (cancel != NULL)
		{
			PQcancel(cancel, err, sizeof(err));
			PQfreeCancel(cancel);
		}
		if (!wait_ready(now_ms() + CANCEL_TIMEOUT_MS))
			finding("hang: no answer past statement_timeout and a cancel", NULL, sql);
	}
	while ((res = PQgetResult(conn)) != NULL)
	{
		/* keep the first error, else the last result */
		if (last != NULL && PQresultStatus(last) == PGRES_FATAL_ERROR)
			PQclear(res);
		else
		{
			PQclear(last);
			last = res;
		}
	}
	if (PQstatus(conn) != CONNECTION_OK || last == NULL ||
		(PQresultStatus(last) == PGRES_FATAL_ERROR &&
		 PQresultErrorField(last, PG_DIAG_SQLSTATE) == NULL))
		finding("the server connection was lost (a backend crashed?)",
				last ? PQresultErrorMessage(last) : PQerrorMessage(conn), sql);
	if (PQresultStatus(last) == PGRES_FATAL_ERROR)
		error_feature(last);
	return last;
}

static const char *
sqlstate(const PGresult *res)
{
	const char *s = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return s ? s : "?????";
}

/* The error of a failed statement, for reports. */
static const char *
error_text(const PGresult *res)
{
	static sbuf b;
	const char *fields[] = {
		PQresultErrorField(res, PG_DIAG_SEVERITY),
		PQresultErrorField(res, PG_DIAG_SQLSTATE),
		PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
		PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL),
		PQresultErrorField(res, PG_DIAG_MESSAGE_HINT),
		PQresultErrorField(res, PG_DIAG_CONTEXT),
		PQresultErrorField(res, PG_DIAG_SOURCE_FILE),
		PQresultErrorField(res, PG_DIAG_SOURCE_LINE),
	};

	sb_reset(&b);
	sb_addf(&b, "    %s %s: %s\n", fields[0] ? fields[0] : "", fields[1] ? fields[1] : "",
			fields[2] ? fields[2] : "");
	if (fields[3])
		sb_addf(&b, "    DETAIL: %s\n", fields[3]);
	if (fields[4])
		sb_addf(&b, "    HINT: %s\n", fields[4]);
	if (fields[5])
		sb_addf(&b, "    CONTEXT: %s\n", fields[5]);
	if (fields[6])
		sb_addf(&b, "    at %s:%s", fields[6], fields[7] ? fields[7] : "?");
	return b.data;
}

/* Errors that say nothing about windowagg: time and resources. */
static bool
tolerated(const char *state)
{
	return strcmp(state, "57014") == 0 ||	/* statement timeout, cancel */
		strcmp(state, "53200") == 0 ||	/* out of memory */
		strcmp(state, "53100") == 0 ||	/* disk full */
		strcmp(state, "54000") == 0 ||	/* windowagg.batch_memory */
		strcmp(state, "40P01") == 0 ||
		strcmp(state, "55P03") == 0;
}

/* An error: internal ones are findings, and so is refusing a supported case. */
static void
check_error(const PGresult *res, const char *sql)
{
	const char *state = sqlstate(res);

	if (strncmp(state, "XX", 2) == 0)
		finding("internal error (SQLSTATE class XX)", error_text(res), sql);
	if (C.expect == OK && !tolerated(state))
		finding("a case the README supports failed", error_text(res), sql);
}

/* ---------- the column definition list ---------- */

#define MAX_COLS (MAX_KEYS + MAX_AGGS + 8)

typedef struct
{
	int			n;
	char		name[MAX_COLS][128];
	char		type[MAX_COLS][128];
} collist_t;

/*
 * Read "The query produces AS (a integer, window_start ..., ...)." into
 * names and types: split on commas outside parentheses and quotes.
 */
static bool
parse_collist(const char *detail, collist_t *cl)
{
	static const char prefix[] = "The query produces AS (";
	const char *p;
	const char *end;

	cl->n = 0;
	if (detail == NULL || strncmp(detail, prefix, strlen(prefix)) != 0)
		return false;
	p = detail + strlen(prefix);
	end = detail + strlen(detail);
	if (end - p < 2 || strcmp(end - 2, ").") != 0)
		return false;
	end -= 2;
	while (p < end)
	{
		const char *item = p;
		const char *name_end;
		int			depth = 0;
		bool		quoted = false;

		for (; p < end; p++)
		{
			if (*p == '"')
				quoted = !quoted;
			else if (!quoted && *p == '(')
				depth++;
			else if (!quoted && *p == ')')
				depth--;
			else if (!quoted && depth == 0 && *p == ',')
				break;
		}
		if (cl->n == MAX_COLS)
			return false;
		/* name: a quoted identifier or a word */
		if (*item == '"')
		{
			name_end = item + 1;
			while (name_end < p && !(*name_end == '"' && name_end[1] != '"'))
				name_end += *name_end == '"' ? 2 : 1;
			name_end++;
		}
		else
			name_end = memchr(item, ' ', (size_t) (p - item));
		if (name_end == NULL || name_end >= p || *name_end != ' ' ||
			name_end - item >= 128 || p - name_end - 1 >= 128)
			return false;
		memcpy(cl->name[cl->n], item, (size_t) (name_end - item));
		cl->name[cl->n][name_end - item] = '\0';
		memcpy(cl->type[cl->n], name_end + 1, (size_t) (p - name_end - 1));
		cl->type[cl->n][p - name_end - 1] = '\0';
		cl->n++;
		if (p < end)
			p += 2;				/* ", " */
	}
	return true;
}

static const char *
window_type_name(ev_kind domain, const ev_col *ev)
{
	if (domain == EV_INT)
		return "bigint";
	return ev->type;
}

/* The columns windowagg promises must be the ones the README describes. */
static void
check_collist(const collist_t *cl, const char *sql, const char *detail)
{
	const char *wt = window_type_name(C.domain, C.ev);
	bool		ok;

	/* a refused case that gets this far is reported when it runs */
	if (C.spliced || C.expect == REF || C.ev->kind == EV_BAD)
		return;
	if (C.dropped)
		ok = cl->n == C.n_keys + 3 &&
			strcmp(cl->type[C.n_keys], C.ev->type) == 0 &&
			strcmp(cl->type[C.n_keys + 1], wt) == 0 &&
			strcmp(cl->name[C.n_keys + 1], "watermark") == 0 &&
			strcmp(cl->type[C.n_keys + 2], "bigint") == 0 &&
			strcmp(cl->name[C.n_keys + 2], "arrival") == 0;
	else
		ok = cl->n == C.n_keys + C.n_aggs + 4 &&
			strcmp(cl->name[C.n_keys], "window_start") == 0 &&
			strcmp(cl->type[C.n_keys], wt) == 0 &&
			strcmp(cl->name[C.n_keys + 1], "window_end") == 0 &&
			strcmp(cl->type[C.n_keys + 1], wt) == 0 &&
			strcmp(cl->name[cl->n - 2], "pane") == 0 &&
			strcmp(cl->type[cl->n - 2], "text") == 0 &&
			strcmp(cl->name[cl->n - 1], "revision") == 0 &&
			strcmp(cl->type[cl->n - 1], "bigint") == 0;
	if (!ok)
		finding("the column definition list is not what the README describes",
				detail, sql);
}

/* ---------- the statements ---------- */

static sbuf sql_buf;
static sbuf call_buf;

/* The call, with a column definition list. */
static void
build_call(sbuf *b, const char *collist)
{
	sb_addf(b, "SELECT * FROM windowagg.%s($1, $2, %s%s%s, arrival_order => $3) AS fz_x(%s)",
			C.dropped ? "dropped" : "aggregate", C.windows.data, C.bound.data,
			C.lateness.data, collist);
}

static const char *
tick_expr(const char *col, sbuf *b)
{
	sb_reset(b);
	if (C.domain == EV_INT)
		sb_addf(b, "%s::numeric", col);
	else
		sb_addf(b, "fz_ticks(%s)", col);
	return b->data;
}

/* fz_accept(...) over this case's rows */
static void
add_accept(sbuf *b)
{
	bool		ts = C.domain != EV_INT;

	sb_addf(b, "fz_accept($4, %s, %s, %s, %s, %s, %s, %s) fz_a",
			C.sizes.data, C.slides.data, C.origins.data, C.bound_ticks,
			C.lateness_ticks,
			ts ? "-211813488000000000" : "-9223372036854775808",
			ts ? "9223371331199999999" : "9223372036854775807");
}

static bool
is_float(const char *type, double *tol)
{
	if (strcmp(type, "double precision") == 0)
	{
		*tol = 1e-9;
		return true;
	}
	if (strcmp(type, "real") == 0)
	{
		*tol = 1e-6;
		return true;
	}
	return false;
}

/*
 * aggregate(): the final pane of every (keys, window) against GROUP BY over
 * the accepted (row, window) pairs.  Returns the statement in sql_buf.
 */
static void
build_compare_aggregate(const collist_t *cl)
{
	sbuf	   *b = &sql_buf;
	sbuf		k = {0};		/* "k0, k1, " */
	sbuf		cols = {0};
	sbuf		t1 = {0};
	sbuf		t2 = {0};
	const char *q = C.source->qual;

	sb_reset(&k);
	sb_reset(&cols);
	for (int i = 0; i < C.n_keys; i++)
	{
		sb_addf(&k, "k%d, ", i);
		sb_addf(&cols, "k%d %s, ", i, cl->type[i]);
	}
	sb_addf(&cols, "fz_ws %s, fz_we %s, ", cl->type[C.n_keys], cl->type[C.n_keys + 1]);
	for (int i = 0; i < C.n_aggs; i++)
		sb_addf(&cols, "a%d %s, ", i, cl->type[C.n_keys + 2 + i]);
	sb_add(&cols, "fz_pane text, fz_rev bigint");

	sb_reset(b);
	sb_add(b, "WITH fz_w AS (");
	build_call(b, cols.data);
	sb_addf(b, "), fz_wf AS (SELECT DISTINCT ON (%sfz_ws, fz_we) %s%s AS fz_wsk, %s AS fz_wek, ",
			k.data, k.data, tick_expr("fz_ws", &t1), tick_expr("fz_we", &t2));
	for (int i = 0; i < C.n_aggs; i++)
		sb_addf(b, "a%d, ", i);
	sb_addf(b, "fz_pane, fz_rev, count(*) OVER fz_p AS fz_np, min(fz_rev) OVER fz_p AS fz_r1 "
			"FROM fz_w WINDOW fz_p AS (PARTITION BY %sfz_ws, fz_we) "
			"ORDER BY %sfz_ws, fz_we, fz_rev DESC), ", k.data, k.data);

	/* the reference */
	sb_add(b, "fz_r AS (SELECT ");
	for (int i = 0; i < C.n_keys; i++)
		sb_addf(b, "%s AS k%d, ", C.key_ref[i].data, i);
	sb_add(b, "fz_a.wa_fz_ws AS fz_wsk, fz_a.wa_fz_we AS fz_wek, ");
	for (int i = 0; i < C.n_aggs; i++)
		sb_addf(b, "%s AS a%d, ", C.agg_ref[i].data, i);
	sb_add(b, "CASE WHEN bool_or(fz_a.wa_fz_late) THEN 'late' ELSE 'on_time' END AS fz_pane, "
		   "count(*) FILTER (WHERE fz_a.wa_fz_late) + CASE WHEN bool_and(fz_a.wa_fz_late) THEN 0 ELSE 1 END AS fz_rev, "
		   "count(*) FILTER (WHERE fz_a.wa_fz_late) + CASE WHEN bool_and(fz_a.wa_fz_late) THEN 0 ELSE 1 END AS fz_np, "
		   "1::bigint AS fz_r1 ");
	sb_addf(b, "FROM %s JOIN ", C.source->from);
	add_accept(b);
	sb_addf(b, " ON %s.id = fz_a.wa_fz_id WHERE fz_a.wa_fz_ws IS NOT NULL GROUP BY ", q);
	for (int i = 0; i < C.n_keys + 2; i++)
		sb_addf(b, "%s%d", i ? ", " : "", i + 1);
	sb_add(b, "), ");

	sb_addf(b, "fz_wn AS (SELECT row_number() OVER (ORDER BY %sfz_wsk, fz_wek) AS fz_n, * FROM fz_wf), "
			"fz_rn AS (SELECT row_number() OVER (ORDER BY %sfz_wsk, fz_wek) AS fz_n, * FROM fz_r) "
			"SELECT * FROM fz_wn FULL JOIN fz_rn ON fz_wn.fz_n = fz_rn.fz_n "
			"WHERE fz_wn.fz_n IS NULL OR fz_rn.fz_n IS NULL OR NOT (",
			k.data, k.data);
	for (int i = 0; i < C.n_keys; i++)
		sb_addf(b, "fz_wn.k%d::text IS NOT DISTINCT FROM fz_rn.k%d::text AND ", i, i);
	sb_add(b, "fz_wn.fz_wsk = fz_rn.fz_wsk AND fz_wn.fz_wek = fz_rn.fz_wek AND ");
	for (int i = 0; i < C.n_aggs; i++)
	{
		double		tol;

		if (is_float(cl->type[C.n_keys + 2 + i], &tol))
			sb_addf(b, "fz_feq(fz_wn.a%d::float8, fz_rn.a%d::float8, %g) AND ", i, i, tol);
		else
			sb_addf(b, "fz_wn.a%d::text IS NOT DISTINCT FROM fz_rn.a%d::text AND ", i, i);
	}
	sb_add(b, "fz_wn.fz_pane = fz_rn.fz_pane AND fz_wn.fz_rev = fz_rn.fz_rev AND "
		   "fz_wn.fz_np = fz_rn.fz_np AND fz_wn.fz_r1 = fz_rn.fz_r1) LIMIT 10");
	free(k.data);
	free(cols.data);
	free(t1.data);
	free(t2.data);
}

/*
 * dropped(): every dropped row (by arrival number), its keys, event time
 * and the watermark it met, against the reference's.
 */

static void
build_compare_dropped(const collist_t *cl)
{
	sbuf	   *b = &sql_buf;
	sbuf		cols = {0};
	sbuf		t1 = {0};
	const char *q = C.source->qual;
	bool		ts = C.domain != EV_INT;

	sb_reset(&cols);
	for (int i = 0; i < C.n_keys; i++)
		sb_addf(&cols, "k%d %s, ", i, cl->type[i]);
	sb_addf(&cols, "fz_et %s, fz_wm %s, fz_arr bigint", cl->type[C.n_keys],
			cl->type[C.n_keys + 1]);

	sb_reset(b);
	sb_add(b, "WITH fz_w AS (");
	build_call(b, cols.data);
	sb_add(b, "), fz_wn AS (SELECT fz_arr AS fz_n, ");
	for (int i = 0; i < C.n_keys; i++)
		sb_addf(b, "k%d, ", i);
	sb_addf(b, "fz_et::text AS fz_et, %s AS fz_wm, count(*) OVER (PARTITION BY fz_arr) AS fz_dup FROM fz_w), ",
			tick_expr("fz_wm", &t1));
	sb_add(b, "fz_rn AS (SELECT fz_a.wa_fz_arrival AS fz_n, ");
	for (int i = 0; i < C.n_keys; i++)
		sb_addf(b, "%s AS k%d, ", C.key_ref[i].data, i);
	sb_addf(b, "%s.%s::text AS fz_et, CASE WHEN fz_a.wa_fz_wm BETWEEN %s AND %s THEN fz_a.wa_fz_wm END AS fz_wm, "
			"1::bigint AS fz_dup, fz_a.wa_fz_part AS fz_part FROM %s JOIN ",
			q, C.ev_ident, ts ? "-211813488000000000" : "-9223372036854775808",
			ts ? "9223371331199999999" : "9223372036854775807", C.source->from);
	add_accept(b);
	sb_addf(b, " ON %s.id = fz_a.wa_fz_id WHERE fz_a.wa_fz_ws IS NULL) "
			"SELECT * FROM fz_wn FULL JOIN fz_rn ON fz_wn.fz_n = fz_rn.fz_n "
			"WHERE fz_wn.fz_n IS NULL OR fz_rn.fz_n IS NULL "
			"OR (fz_wn.fz_n IS NOT NULL AND fz_rn.fz_n IS NOT NULL AND NOT (", q);
	for (int i = 0; i < C.n_keys; i++)
		sb_addf(b, "fz_wn.k%d::text IS NOT DISTINCT FROM fz_rn.k%d::text AND ", i, i);
	sb_add(b, "fz_wn.fz_et = fz_rn.fz_et AND fz_wn.fz_wm IS NOT DISTINCT FROM fz_rn.fz_wm AND "
		   "fz_wn.fz_dup = fz_rn.fz_dup)) LIMIT 10");
	free(cols.data);
	free(t1.data);
}

/* Rows of a result, for reports. */
static const char *
rows_text(const PGresult *res)
{
	static sbuf b;

	sb_reset(&b);
	for (int c = 0; c < PQnfields(res); c++)
		sb_addf(&b, "%s%s", c ? " | " : "    ", PQfname(res, c));
	sb_add(&b, "\n");
	for (int r = 0; r < PQntuples(res); r++)
	{
		for (int c = 0; c < PQnfields(res); c++)
		{
			const char *v = PQgetisnull(res, r, c) ? "NULL" : PQgetvalue(res, r, c);

			/* long keys (3000 x's) shortened */
			sb_addf(&b, "%s%.60s%s", c ? " | " : "    ", v, strlen(v) > 60 ? "..." : "");
		}
		sb_add(&b, "\n");
	}
	return b.data;
}

/*
 * The two halves of a comparison's result are windowagg's columns and the
 * reference's: keys and aggregates must have the same types (OID and
 * typmod) on both sides, as plain GROUP BY gives them.
 */
static void
check_types(const PGresult *res, const char *sql)
{
	/* where the reference's columns start */
	int			half = C.dropped ? 1 + C.n_keys + 3 : 1 + C.n_keys + 2 + C.n_aggs + 4;
	int			first = 1;
	int			last = C.dropped ? 1 + C.n_keys : 1 + C.n_keys + 2 + C.n_aggs;

	for (int i = first; i < last; i++)
	{
		if (C.dropped || i <= C.n_keys || i >= 1 + C.n_keys + 2)
		{
			if (PQftype(res, i) != PQftype(res, half + i) ||
				PQfmod(res, i) != PQfmod(res, half + i))
			{
				char		msg[256];

				snprintf(msg, sizeof(msg),
						 "    column %s: windowagg gives type %u (typmod %d), GROUP BY gives %u (typmod %d)",
						 PQfname(res, i), PQftype(res, i), PQfmod(res, i),
						 PQftype(res, half + i), PQfmod(res, half + i));
				finding("a result column's type differs from plain GROUP BY", msg, sql);
			}
		}
	}
}

static void
exec_simple(const char *sql)
{
	PGresult   *res = run(sql, 0, NULL);

	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		finding("the harness's own statement failed", error_text(res), sql);
	PQclear(res);
}

/* Run windowagg alone: does it succeed? */
static bool
run_alone(const char *const *params, const collist_t *cl)
{
	PGresult   *res;
	sbuf		cols = {0};
	bool		ok;

	sb_reset(&cols);
	for (int i = 0; i < cl->n; i++)
		sb_addf(&cols, "%sc%d %s", i ? ", " : "", i, cl->type[i]);
	sb_reset(&call_buf);
	sb_add(&call_buf, "SELECT count(*) FROM (");
	build_call(&call_buf, cols.data);
	sb_add(&call_buf, ") fz_c");
	free(cols.data);
	exec_simple("ROLLBACK TO SAVEPOINT fz");
	res = run(call_buf.data, 3, params);
	ok = PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		check_error(res, call_buf.data);
	PQclear(res);
	return ok;
}

static void
run_case(void)
{
	const char *params[4];
	PGresult   *res;
	collist_t	cl;
	const char *detail;
	const char *primary;

	params[0] = C.query.data;
	params[1] = C.event_time_null ? NULL : C.event_time.data;
	params[2] = C.arrival_null ? NULL : C.arrival.data;
	params[3] = C.rows_sql.data;

	sb_reset(&sql_buf);
	sb_addf(&sql_buf, "BEGIN; SET LOCAL statement_timeout = %d; "
			"SET LOCAL windowagg.share_windows = %s; SET LOCAL TimeZone = '%s'; "
			"SAVEPOINT fz", STATEMENT_TIMEOUT_MS, C.share_windows ? "on" : "off",
			C.time_zone);
	exec_simple(sql_buf.data);

	/* the probe: a list that cannot match, or the reason it is refused */
	sb_reset(&call_buf);
	build_call(&call_buf, "fz_probe int");
	res = run(call_buf.data, 3, params);
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		finding("a column definition list of one column was accepted", NULL, call_buf.data);
	detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	if (strcmp(sqlstate(res), "42804") != 0 || primary == NULL ||
		strncmp(primary, "column definition list does not match ", 38) != 0)
	{
		/* refused (or failed) before the column list: must be an error */
		check_error(res, call_buf.data);
		PQclear(res);
		exec_simple("ROLLBACK");
		return;
	}
	if (!parse_collist(detail, &cl))
		finding("cannot read the column definition list windowagg asks for",
				error_text(res), call_buf.data);
	check_collist(&cl, call_buf.data, error_text(res));
	for (int i = 0; i < cl.n; i++)
		server_feature("column type", cl.type[i]);
	PQclear(res);

	if (!C.comparable)
	{
		if (run_alone(params, &cl) && C.expect == REF)
			finding("a case the README refuses succeeded", NULL, call_buf.data);
		exec_simple("ROLLBACK");
		return;
	}

	exec_simple("ROLLBACK TO SAVEPOINT fz");
	if (C.dropped)
		build_compare_dropped(&cl);
	else
		build_compare_aggregate(&cl);
	res = run(sql_buf.data, 4, params);
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
	{
		check_types(res, sql_buf.data);
		if (PQntuples(res) > 0)
			finding("the result differs from the reference (left: windowagg, right: reference)",
					rows_text(res), sql_buf.data);
	}
	else
	{
		const char *state = sqlstate(res);

		if (strncmp(state, "XX", 2) == 0)
			finding("internal error (SQLSTATE class XX)", error_text(res), sql_buf.data);

		/*
		 * Whose error?  windowagg alone says.  If it succeeds, the reference
		 * failed: a float overflow there is the README's documented
		 * difference (a float sum that overflows is Infinity in windowagg).
		 */
		if (run_alone(params, &cl) && !tolerated(state) && strcmp(state, "22003") != 0)
			finding("windowagg succeeded where the reference failed",
					error_text(res), sql_buf.data);
	}
	PQclear(res);
	exec_simple("ROLLBACK");
}

/* ---------- libFuzzer ---------- */

static bool print_only;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	print_only = getenv("WA_FUZZ_PRINT") != NULL;
	if (!print_only)
		connect_server();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode_case(data, size, &C);
	if (print_only)
	{
		print_case(stdout, &C);
		printf("\n");
		return 0;
	}
	run_case();
	return 0;
}
