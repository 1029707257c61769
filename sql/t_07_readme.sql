-- The README's five-minute tour, verbatim: its printed results must stay true.
SET timezone = 'UTC';
CREATE SCHEMA tour;
SET search_path = tour, public;

CREATE TABLE readings (
    arrival   bigint GENERATED ALWAYS AS IDENTITY,  -- order of arrival
    device_id int NOT NULL,
    read_at   timestamptz NOT NULL,                 -- event time
    temp      float8
);
INSERT INTO readings (device_id, read_at, temp) VALUES
    (1, '2024-01-01 10:00:10+00', 20.0),
    (1, '2024-01-01 10:04:00+00', 21.0),
    (2, '2024-01-01 10:06:00+00', 30.0),   -- the watermark passes 10:05
    (1, '2024-01-01 10:03:00+00', 25.0),   -- late, but within lateness
    (1, '2024-01-01 10:09:00+00', 22.0),
    (1, '2024-01-01 10:02:00+00', 99.0),   -- too late: its window is closed
    (2, '2024-01-01 10:12:00+00', 31.0);

SELECT *
FROM windowagg.aggregate(
       query      => 'SELECT device_id, max(temp) AS hi, count(*) AS n
                      FROM readings GROUP BY device_id',
       event_time => 'read_at',
       windows    => ARRAY[windowagg.tumbling('5 min')],
       bound      => '30 s',     -- events may arrive up to 30 s out of order
       lateness   => '3 min',    -- fired windows accept corrections for 3 min
       arrival_order => 'arrival')
     AS (device_id int, window_start timestamptz, window_end timestamptz,
         hi float8, n bigint, pane text, revision bigint);

SELECT *
FROM windowagg.dropped('SELECT device_id, max(temp) AS hi FROM readings GROUP BY device_id',
                       'read_at', ARRAY[windowagg.tumbling('5 min')],
                       bound => '30 s', lateness => '3 min', arrival_order => 'arrival')
     AS (device_id int, read_at timestamptz, watermark timestamptz, arrival bigint);

SELECT count(*) > 0 AS multi_window_runs FROM windowagg.aggregate(
    'SELECT device_id, min(temp) AS lo, avg(temp) AS mean FROM readings GROUP BY device_id',
    'read_at',
    ARRAY[windowagg.tumbling('10 min'), windowagg.hopping('1 hour', '5 min')],
    bound => '30 s')
  AS (device_id int, window_start timestamptz, window_end timestamptz,
      lo float8, mean float8, pane text, revision bigint);

SELECT windowagg.window_starts(timestamptz '2024-01-01 00:07+00', '20 min', '5 min');
ALTER TABLE readings ADD PRIMARY KEY (arrival);  -- pipelines find new rows by it

SELECT windowagg.create_pipeline(
    name       => 'temps',
    query      => 'SELECT device_id, max(temp) AS hi, count(*) AS n
                   FROM readings GROUP BY device_id',
    event_time => 'read_at',
    windows    => ARRAY[windowagg.tumbling('5 min')],
    bound      => '30 s',
    lateness   => '3 min') > 0 AS created;
SELECT windowagg.wait('temps');    -- true once every committed row is in
SELECT device_id, window_start, hi, n, pane, revision FROM temps ORDER BY 1, 2;
INSERT INTO readings (device_id, read_at, temp) VALUES
    (1, '2024-01-01 10:08:00+00', 24.0),   -- late for 10:05-10:10, within lateness
    (2, '2024-01-01 10:20:00+00', 35.0);   -- the watermark moves to 10:19:30
SELECT windowagg.wait('temps');
SELECT device_id, window_start, hi, n, pane, revision FROM temps ORDER BY 1, 2;
SELECT device_id, window_start, hi, n FROM temps_live;     -- not fired yet
SELECT arrival, event_time, reason, watermark FROM temps_dead_letters;
SELECT status, events_in, panes_on_time, panes_late, dead_letters, watermark
FROM windowagg.stat_pipelines WHERE name = 'temps';
SELECT windowagg.flush('temps');   -- end of input: every window fires
SELECT windowagg.drop_pipeline('temps', drop_tables => true);
