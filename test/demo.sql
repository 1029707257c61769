-- test/demo.sql: a windowed aggregation over out-of-order sensor readings.
--
-- 50 devices report a temperature every 10 seconds for six hours.  The
-- network delays readings by up to 20 seconds, so they arrive out of
-- order; one reading in 100 arrives 1 to 4 minutes late, and one in 500
-- arrives an hour late.  windowagg computes 10-minute tumbling and
-- 1-hour-every-10-minutes hopping windows with a 30-second bound and
-- 2 minutes of allowed lateness.
\pset footer off
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE EXTENSION windowagg;

\echo
\echo '== generating 108,000 readings in arrival order'
SELECT setseed(0.2024);
CREATE TABLE readings (
    arrival   bigint GENERATED ALWAYS AS IDENTITY,  -- order of arrival
    device_id int NOT NULL,
    read_at   timestamptz NOT NULL,                 -- event time
    temp      float8
);
INSERT INTO readings (device_id, read_at, temp)
SELECT device_id, read_at, temp
FROM (SELECT d AS device_id,
             timestamptz '2024-06-01 00:00+00' + s * interval '10 s' AS read_at,
             round((20 + 5 * sin(s / 360.0) + d * 0.1 + random())::numeric, 2)::float8 AS temp,
             -- when the reading reaches the database
             timestamptz '2024-06-01 00:00+00' + s * interval '10 s'
               + random() * interval '20 s'
               + CASE WHEN random() < 0.01 THEN interval '1 min' + random() * interval '3 min'
                      WHEN random() < 0.002 THEN interval '1 hour'
                      ELSE interval '0' END AS arrives_at
      FROM generate_series(1, 50) d, generate_series(0, 2159) s) r
ORDER BY arrives_at;

\echo
\echo '== the panes of device 7 between 01:00 and 01:30 (10-minute windows)'
CREATE TABLE panes AS
SELECT * FROM windowagg.aggregate(
    query      => $$SELECT device_id, min(temp) AS min_temp, max(temp) AS max_temp,
                           avg(temp) AS avg_temp, count(*) AS n
                    FROM readings GROUP BY device_id$$,
    event_time => 'read_at',
    windows    => ARRAY[windowagg.tumbling('10 min'),
                        windowagg.hopping('1 hour', '10 min')],
    bound      => '30 s',
    lateness   => '2 min',
    arrival_order => 'arrival')
  AS (device_id int, window_start timestamptz, window_end timestamptz,
      min_temp float8, max_temp float8, avg_temp float8, n bigint,
      pane text, revision bigint);
SELECT device_id, window_start, window_end, min_temp, max_temp,
       round(avg_temp::numeric, 3) AS avg_temp, n, pane, revision
FROM panes
WHERE device_id = 7 AND window_end - window_start = interval '10 min'
  AND window_start >= '2024-06-01 01:00+00' AND window_start < '2024-06-01 01:30+00'
ORDER BY window_start, revision;

\echo
\echo '== late readings refined windows that had already fired (first 8)'
SELECT device_id, window_start, window_end - window_start AS length, n, pane, revision
FROM panes WHERE pane = 'late'
ORDER BY window_start, device_id, length, revision
LIMIT 8;

\echo
\echo '== readings that arrived after every window containing them had closed'
CREATE TABLE dropped AS
SELECT * FROM windowagg.dropped(
    $$SELECT device_id, count(*) AS n FROM readings GROUP BY device_id$$,
    'read_at',
    ARRAY[windowagg.tumbling('10 min'), windowagg.hopping('1 hour', '10 min')],
    bound => '30 s', lateness => '2 min', arrival_order => 'arrival')
  AS (device_id int, read_at timestamptz, watermark timestamptz, arrival bigint);
SELECT device_id, read_at, watermark, watermark - read_at AS behind, arrival
FROM dropped ORDER BY arrival LIMIT 5;

\echo
\echo '== summary'
SELECT (SELECT count(*) FROM readings) AS readings,
       (SELECT count(*) FROM panes WHERE pane = 'on_time') AS on_time_panes,
       (SELECT count(*) FROM panes WHERE pane = 'late') AS late_panes,
       (SELECT count(*) FROM dropped) AS dropped_readings;

\echo
\echo '== check: 10-minute windows alone equal GROUP BY over the readings they did not drop'
\echo '   (with several windows a reading can be too late for one and on time for another)'
CREATE TABLE panes10 AS
SELECT * FROM windowagg.aggregate(
    $$SELECT device_id, min(temp) AS min_temp, max(temp) AS max_temp, count(*) AS n
      FROM readings GROUP BY device_id$$,
    'read_at', ARRAY[windowagg.tumbling('10 min')], bound => '30 s', lateness => '2 min',
    arrival_order => 'arrival')
  AS (device_id int, window_start timestamptz, window_end timestamptz,
      min_temp float8, max_temp float8, n bigint, pane text, revision bigint);
CREATE TABLE dropped10 AS
SELECT * FROM windowagg.dropped(
    $$SELECT device_id, count(*) AS n FROM readings GROUP BY device_id$$,
    'read_at', ARRAY[windowagg.tumbling('10 min')], bound => '30 s', lateness => '2 min',
    arrival_order => 'arrival')
  AS (device_id int, read_at timestamptz, watermark timestamptz, arrival bigint);
WITH final AS (
    SELECT DISTINCT ON (device_id, window_start) *
    FROM panes10 ORDER BY device_id, window_start, revision DESC),
kept AS (
    SELECT r.* FROM readings r
    WHERE NOT EXISTS (SELECT 1 FROM dropped10 d WHERE d.arrival = r.arrival)),
plain AS (
    SELECT device_id, date_bin('10 min', read_at, timestamptz '1970-01-01+00') AS window_start,
           min(temp) AS min_temp, max(temp) AS max_temp, count(*) AS n
    FROM kept GROUP BY 1, 2)
SELECT count(*) AS windows,
       (SELECT count(*) FROM dropped10) AS dropped,
       count(*) FILTER (WHERE f.n IS DISTINCT FROM p.n OR f.min_temp IS DISTINCT FROM p.min_temp
                           OR f.max_temp IS DISTINCT FROM p.max_temp) AS differences
FROM final f FULL JOIN plain p USING (device_id, window_start);
