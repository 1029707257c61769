-- bench/sql/bench.sql: batch windowing vs plain SQL on the same rows.
--
-- Events: 1000 keys over 7 days, arriving with mild disorder (each event
-- is up to 5 seconds later than its event time).  Each query runs three
-- times (the slow plain join twice) and the best time is kept.
\pset footer off
\pset tuples_only on
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE EXTENSION windowagg;

SELECT setseed(0.7);
CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY,
    k int NOT NULL,
    ts timestamptz NOT NULL,
    v float8 NOT NULL
);
-- arrival order: event time plus up to 5 s of delay
INSERT INTO events (k, ts, v)
SELECT (random() * 999)::int,
       timestamptz '2024-01-01+00' + (i * (604800.0 / :events) + random() * 5 - 5) * interval '1 s',
       random() * 100
FROM generate_series(1, :events) i;
CREATE TABLE hop_events AS SELECT * FROM events WHERE id <= :hop_events;
VACUUM ANALYZE events;
VACUUM ANALYZE hop_events;

-- seconds to run a query and discard its rows (timed() is bench/timed.sql)
CREATE FUNCTION timed_rows(q text, runs int DEFAULT 3) RETURNS float8 LANGUAGE sql
RETURN timed('SELECT count(*) FROM (' || q || ') x', runs);
CREATE FUNCTION report(name text, n bigint, wa float8, plain float8) RETURNS text
LANGUAGE sql RETURN format('case=%s events=%s work_mem=%s windowagg_s=%s plain_s=%s ratio=%s',
                           name, n, current_setting('work_mem'), round(wa::numeric, 3),
                           round(plain::numeric, 3), round((plain / wa)::numeric, 2));

CREATE FUNCTION run_cases(mem text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM set_config('work_mem', mem, false);

    -- tumbling 1 hour: windowagg vs GROUP BY date_bin
    RETURN NEXT report('tumbling_1h', (SELECT count(*) FROM events),
        timed_rows($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM events GROUP BY k',
                  'ts', ARRAY[windowagg.tumbling('1 hour')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, n bigint, s float8, lo float8,
                    hi float8, pane text, rev bigint)$q$),
        timed_rows($q$SELECT k, date_bin('1 hour', ts, timestamptz '1970-01-01+00'), count(*), sum(v),
                      min(v), max(v)
                 FROM events GROUP BY 1, 2$q$));

    -- hopping 60 min every 1 min: windowagg vs a generate_series join
    RETURN NEXT report('hopping_60m_1m', (SELECT count(*) FROM hop_events),
        timed_rows($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM hop_events GROUP BY k',
                  'ts', ARRAY[windowagg.hopping('60 min', '1 min')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, n bigint, s float8, lo float8,
                    hi float8, pane text, rev bigint)$q$),
        timed_rows($q$SELECT k, ws, count(*), sum(v), min(v), max(v)
                 FROM hop_events,
                      generate_series(date_bin('1 min', ts, timestamptz '1970-01-01+00') - interval '59 min',
                                      date_bin('1 min', ts, timestamptz '1970-01-01+00'),
                                      interval '1 min') ws
                 GROUP BY 1, 2$q$, 2));
END
$f$;

SELECT run_cases('4MB');
SELECT run_cases('256MB');
