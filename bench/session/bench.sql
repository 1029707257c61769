-- bench/session/bench.sql: batch session windows vs gaps and islands.
--
-- Events: 1000 keys over 7 days, in bursts: a key's events come every 5
-- seconds (plus up to 4 s of jitter) for 100 events, then the key is idle
-- for 92 minutes; the keys' bursts are spread apart.  Rows arrive up to
-- 5 seconds after their event time.  Sessions with a gap of 30 minutes
-- (the README's example): one per burst, 100 per key.  With bound 5 s
-- nothing is late, so both ways give the same sessions (checked: the
-- line says how many, and whether they are equal).  Arrival order is the
-- order of the scan, which is the order of insertion here (as in
-- bench/sql): ordering by id would add a sort that the plain way does not
-- need.
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
INSERT INTO events (k, ts, v)
SELECT k, ts, v
FROM (SELECT k, timestamptz '2024-01-01+00'
                  + ((j / 100) * 6000 + (j % 100) * 5 + random() * 4 + k * 6) * interval '1 s' AS ts,
             random() * 100 AS v
      FROM generate_series(0, 999) k, generate_series(0, :events / 1000 - 1) j) e
ORDER BY ts + random() * interval '5 s';
VACUUM ANALYZE events;

CREATE FUNCTION timed_rows(q text, runs int DEFAULT 3) RETURNS float8 LANGUAGE sql
RETURN timed('SELECT count(x) FROM (' || q || ') x', runs);
CREATE FUNCTION report(name text, n bigint, wa float8, plain float8, extra text)
RETURNS text LANGUAGE sql
RETURN format('case=%s events=%s work_mem=%s windowagg_s=%s plain_s=%s ratio=%s %s',
              name, n, current_setting('work_mem'), round(wa::numeric, 3),
              round(plain::numeric, 3), round((plain / wa)::numeric, 2), extra);

CREATE VIEW wa_sessions AS
SELECT * FROM windowagg.aggregate(
    'SELECT k, count(*) AS n, sum(v) AS s, max(v) AS hi FROM events GROUP BY k',
    'ts', ARRAY[windowagg.session('30 min')], bound => '5 s')
  AS (k int, ws timestamptz, we timestamptz, n bigint, s float8, hi float8,
      pane text, rev bigint);
CREATE VIEW sql_sessions AS
SELECT k, min(ts) AS ws, max(ts) + interval '30 min' AS we, count(*) AS n, sum(v) AS s,
       max(v) AS hi
FROM (SELECT k, ts, v, sum(CASE WHEN ts - prev <= interval '30 min' THEN 0 ELSE 1 END)
                         OVER (PARTITION BY k ORDER BY ts) AS island
      FROM (SELECT k, ts, v, lag(ts) OVER (PARTITION BY k ORDER BY ts) AS prev
            FROM events) a) b
GROUP BY k, island;

CREATE FUNCTION run_cases(mem text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM set_config('work_mem', mem, false);
    RETURN NEXT report('session_30min', (SELECT count(*) FROM events),
        timed_rows('SELECT * FROM wa_sessions'),
        timed_rows('SELECT * FROM sql_sessions', 2),
        CASE WHEN mem = '4MB' THEN format('sessions=%s equal=%s',
            (SELECT count(*) FROM sql_sessions),
            NOT EXISTS (SELECT k, ws, we, n FROM wa_sessions
                        EXCEPT SELECT k, ws, we, n FROM sql_sessions)
            AND NOT EXISTS (SELECT k, ws, we, n FROM sql_sessions
                            EXCEPT SELECT k, ws, we, n FROM wa_sessions))
        ELSE '' END);
END
$f$;

SELECT * FROM run_cases('4MB');
SELECT * FROM run_cases('256MB');
