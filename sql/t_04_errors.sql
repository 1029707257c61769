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
SELECT * FROM windowagg.aggregate('SELECT k, string_agg(j::text, '','') FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
-- order-dependent aggregates, refused on every version (16 gave them
-- combine functions)
SELECT * FROM windowagg.aggregate('SELECT k, array_agg(j) FROM src GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, jsonb_agg(j) FROM src GROUP BY k', 'ts',
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
    ARRAY[ROW('interval', 10, 20, 0, 'hopping', NULL, NULL, NULL)::windowagg.window]) AS (k int);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) FROM src GROUP BY k', 'ts',
    ARRAY[ROW('weeks', 10, 10, 0, 'tumbling', NULL, NULL, NULL)::windowagg.window]) AS (k int);

-- bad rows: NULL and infinite event times name the row
INSERT INTO src VALUES (2, 1, NULL, NULL, 1), (3, 1, 'infinity', 7, 1);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src WHERE id <= 2 GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], arrival_order => 'id')
  AS (k int, ws timestamptz, we timestamptz, n bigint, pane text, rev bigint);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src WHERE id <> 2 GROUP BY k', 'ts',
    ARRAY[windowagg.tumbling('1 hour')], arrival_order => 'id')
  AS (k int, ws timestamptz, we timestamptz, n bigint, pane text, rev bigint);

-- a window whose bounds the type cannot hold does not exist: near the ends
-- of bigint an event falls into those of its windows that exist, or into
-- none and is dropped.  The reference works in numeric, which has no ends;
-- events arrive in time order so that none is late.
CREATE TABLE lim (id int, k int, t bigint);
INSERT INTO lim VALUES
    (1, 1, 9223372036854775807), (2, 1, 9223372036854775799),
    (3, 1, 9223372036854775795), (4, 1, 9223372036854775790),
    (5, 2, -9223372036854775808), (6, 2, -9223372036854775800),
    (7, 2, -9223372036854775791), (8, 3, 0), (9, 3, 15);
CREATE VIEW lim_ref AS
    SELECT l.id, l.k, l.t, w.size, s AS ws
    FROM lim l,
         (VALUES (10, 10), (20, 10)) AS w(size, slide),
         LATERAL (SELECT l.t - ((l.t::numeric % w.slide) + w.slide) % w.slide - w.slide * g AS s
                  FROM generate_series(0, w.size / w.slide - 1) g) c
    WHERE s >= -9223372036854775808 AND s + w.size <= 9223372036854775807;
SELECT count(*) AS windows, count(DISTINCT id) AS events FROM lim_ref;
(SELECT k, ws::numeric, we::numeric, n
   FROM windowagg.aggregate(
       $q$SELECT k, count(*) AS n FROM lim GROUP BY k$q$,
       't', ARRAY[windowagg.tumbling(10), windowagg.hopping(20, 10)],
       arrival_order => 't')
     AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint)
 EXCEPT
 SELECT k, ws, ws + size, count(*) FROM lim_ref GROUP BY k, ws, size)
UNION ALL
(SELECT k, ws, ws + size, count(*) FROM lim_ref GROUP BY k, ws, size
 EXCEPT
 SELECT k, ws::numeric, we::numeric, n
   FROM windowagg.aggregate(
       $q$SELECT k, count(*) AS n FROM lim GROUP BY k$q$,
       't', ARRAY[windowagg.tumbling(10), windowagg.hopping(20, 10)],
       arrival_order => 't')
     AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint));
-- dropped: exactly the events no window that exists contains
SELECT k, t, watermark IS NULL AS no_watermark, arrival
  FROM windowagg.dropped(
      $q$SELECT k, count(*) AS n FROM lim GROUP BY k$q$,
      't', ARRAY[windowagg.tumbling(10), windowagg.hopping(20, 10)],
      arrival_order => 't')
    AS (k int, t bigint, watermark bigint, arrival bigint)
  ORDER BY arrival;
SELECT id, k, t FROM lim WHERE id NOT IN (SELECT id FROM lim_ref) ORDER BY id;
-- window_starts agrees: the starts of the windows that exist
SELECT l.id, array_agg(s ORDER BY s) AS starts
  FROM lim l, windowagg.window_starts(l.t, 20, 10) s GROUP BY l.id
EXCEPT
SELECT id, array_agg(ws::bigint ORDER BY ws) FROM lim_ref WHERE size = 20 GROUP BY id;
SELECT id FROM lim_ref WHERE size = 20
EXCEPT SELECT l.id FROM lim l, windowagg.window_starts(l.t, 20, 10);
-- timestamps end at 294276 AD: a window ending after that does not exist
SELECT * FROM windowagg.window_starts('294276-12-31 23:59:59.999999+00'::timestamptz, '1 hour');
SELECT * FROM windowagg.window_starts('294276-12-31 22:59:59.999999+00'::timestamptz, '1 hour');
SELECT * FROM windowagg.window_starts('4714-11-24 00:00:00+00 BC'::timestamptz, '1 day');
SELECT * FROM windowagg.window_starts('4714-11-24 00:00:00+00 BC'::timestamptz, '1 week');

-- the windows' state is bounded by windowagg.batch_memory: 20000 keys do
-- not fit in 1MB, and fit again in the default
CREATE TABLE many_keys AS SELECT g AS k, g::bigint AS t FROM generate_series(1, 20000) g;
SET windowagg.batch_memory = '1MB';
\set VERBOSITY terse
SELECT count(*) FROM windowagg.aggregate('SELECT k, count(*) AS n FROM many_keys GROUP BY k',
    't', ARRAY[windowagg.tumbling(1000000)])
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
\set VERBOSITY default
RESET windowagg.batch_memory;
SELECT count(*) = (SELECT count(DISTINCT k) FROM many_keys) AS every_key
  FROM windowagg.aggregate('SELECT k, count(*) AS n FROM many_keys GROUP BY k',
    't', ARRAY[windowagg.tumbling(1000000)])
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
DROP TABLE many_keys;

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
SELECT * FROM windowagg.explain(ARRAY[ROW(NULL, 10, 10, 0, 'tumbling', NULL, NULL, NULL)::windowagg.window]);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 't',
    ARRAY[ROW(NULL, 10, 10, 0, 'tumbling', NULL, NULL, NULL)::windowagg.window]) AS (k int);

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
