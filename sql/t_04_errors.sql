-- Bad input gets errors that name the argument and the rule it broke
SET timezone = 'UTC';
CREATE TABLE src (id int, k int, ts timestamptz, t bigint, v int, x numeric,
                  f float8, j jsonb);
INSERT INTO src VALUES (1, 1, '2024-01-01 00:00+00', 5, 1, 1.5, 1.5, '{}');

-- the column definition list must match; the hint gives the right one
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int, n bigint);

-- queries windowagg cannot maintain
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src a JOIN src b USING (k) GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k HAVING count(*) > 1', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k ORDER BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(DISTINCT v) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FILTER (WHERE v > 0) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, sum(x) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, string_agg(j::text, '','') FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) + 1 AS n FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS pane FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT x, count(*) FROM src GROUP BY x', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT f, count(*) FROM src GROUP BY f', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k; DROP TABLE src', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('INSERT INTO src VALUES (2)', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM no_such_table GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);

-- event time column
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'nope',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'f',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', NULL,
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);

-- windows, bound and lateness
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling(10)]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 't',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[]::windowagg.window[]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    NULL) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour'), windowagg.tumbling(10)]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.hopping('1 hour', '10 min'), windowagg.hopping('1 hour', '15 min')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], bound => '1 month') AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], lateness => '-1 s') AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], bound => 5) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], bound => interval '5 s') AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], bound => -5) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], bound => 1.5) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], arrival_order => 'id; DROP TABLE src') AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[ROW('interval', 10, 20, 0)::windowagg.window]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[ROW('weeks', 10, 10, 0)::windowagg.window]) AS (k int);

-- bad rows: NULL and infinite event times name the row
INSERT INTO src VALUES (2, 1, NULL, NULL, 1), (3, 1, 'infinity', 7, 1);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src WHERE id <= 2 GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], arrival_order => 'id')
  AS (k int, ws timestamptz, we timestamptz, n bigint, pane text, rev bigint);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src WHERE id <> 2 GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], arrival_order => 'id')
  AS (k int, ws timestamptz, we timestamptz, n bigint, pane text, rev bigint);

-- the engine's window bounds never wrap: a window past bigint is an error
CREATE TABLE lim (k int, t bigint);
INSERT INTO lim VALUES (1, 9223372036854775807);
SELECT * FROM windowagg.aggregate(
    $q$SELECT k, count(*) AS n FROM lim GROUP BY k$q$,
    't', ARRAY[windowagg.tumbling(10)])
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);

-- privileges are the caller's: a role that cannot read the table cannot aggregate it
CREATE ROLE wa_nobody;
GRANT USAGE ON SCHEMA windowagg TO wa_nobody;
SET ROLE wa_nobody;
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')])
  AS (k int, ws timestamptz, we timestamptz, n bigint, pane text, rev bigint);
RESET ROLE;
REVOKE USAGE ON SCHEMA windowagg FROM wa_nobody;
DROP ROLE wa_nobody;

-- a hand-built window with a NULL field is an error, not a crash
SELECT * FROM windowagg.explain(ARRAY[ROW(NULL, 10, 10, 0)::windowagg.window]);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 't',
    ARRAY[ROW(NULL, 10, 10, 0)::windowagg.window]) AS (k int);

-- arrival_order: no OFFSET or LIMIT, syntax errors shown in the row query
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], arrival_order => 'id OFFSET 1') AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], arrival_order => 'id +') AS (k int);

-- arrival_order names the source's columns, even one called like an
-- internal alias: c1 orders by the table's c1, not by the key
CREATE TABLE ao (c1 int, k int, t bigint);
INSERT INTO ao VALUES (1, 9, 10), (2, 1, 200), (3, 5, 20);
SELECT * FROM windowagg.dropped('SELECT k, count(*) AS n FROM ao GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], arrival_order => 'c1')
  AS (k int, t bigint, wm bigint, arrival bigint);

-- a typmod in the column definition list cannot be honoured
SELECT * FROM windowagg.aggregate('SELECT k, avg(t) AS a FROM ao GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)])
  AS (k int, ws bigint, we bigint, a numeric(3,1), pane text, rev bigint);

-- long loops stay cancellable
SET statement_timeout = '200ms';
SELECT count(*) FROM windowagg.window_starts(0::bigint, 2000000000, 1);
RESET statement_timeout;
