-- test/demo_setup.sql: the live pipeline of `make demo` (see test/demo.sh).
--
-- 20 devices report a temperature every 2 seconds.  To watch 90 minutes go
-- by in 45 seconds, event time runs 120 times faster than the clock.  The
-- network delays readings by up to 5 seconds, so they arrive out of order;
-- one in 100 arrives 30 to 100 seconds late (windows it belongs to have
-- fired: late revisions), and one in 200 arrives more than an hour late
-- (too late even for the hour-long windows: a dead letter).
\pset footer off
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE EXTENSION windowagg;

CREATE TABLE readings (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- arrival order
    device_id int NOT NULL,
    read_at   timestamptz NOT NULL,                             -- event time
    temp      float8
);

SELECT windowagg.create_pipeline(
  name       => 'temps',
  query      => $$SELECT device_id, min(temp) AS min_temp, max(temp) AS max_temp,
                         avg(temp) AS avg_temp, count(*) AS n
                  FROM readings GROUP BY device_id$$,
  event_time => 'read_at',
  windows    => ARRAY[windowagg.tumbling('10 min'), windowagg.hopping('1 hour', '5 min')],
  bound      => '5 s',        -- out-of-orderness bound of the watermark
  lateness   => '2 min') > 0 AS pipeline_created;

-- The readings, with the moment each reaches the database, drawn once.
DO $$ BEGIN PERFORM setseed(0.2024); END $$;
CREATE TABLE incoming AS
SELECT d AS device_id, t AS read_at,
       round((20 + 5 * sin(extract(epoch FROM t - timestamptz '2024-06-01 08:00+00') / 1800)
              + d * 0.1 + random())::numeric, 2)::float8 AS temp,
       t + random() * interval '5 s'
         + CASE WHEN random() < 0.01 THEN interval '30 s' + random() * interval '70 s'
                WHEN random() < 0.005 THEN interval '63 min' + random() * interval '10 min'
                ELSE interval '0' END AS arrives_at
FROM generate_series(1, 20) d,
     generate_series(timestamptz '2024-06-01 08:00+00', timestamptz '2024-06-01 09:30+00',
                     interval '2 s') t;
CREATE INDEX ON incoming (arrives_at);

-- The generator: every 100 ms of the clock, the readings that arrive in
-- the next 12 seconds of event time, in arrival order, as one transaction.
CREATE PROCEDURE stream_readings() LANGUAGE plpgsql AS $$
DECLARE
    start_clock timestamptz := clock_timestamp();
    t timestamptz := timestamptz '2024-06-01 08:00+00';
    batch int := 0;
BEGIN
    WHILE t < timestamptz '2024-06-01 09:30+00' LOOP
        INSERT INTO readings (device_id, read_at, temp)
        SELECT device_id, read_at, temp FROM incoming
        WHERE arrives_at >= t AND arrives_at < t + interval '12 s'
        ORDER BY arrives_at;
        COMMIT;
        batch := batch + 1;
        t := t + interval '12 s';
        PERFORM pg_sleep(greatest(0, extract(epoch FROM
            start_clock + batch * interval '100 ms' - clock_timestamp())));
    END LOOP;
END
$$;
