-- bench/pipeline/bench.sql: see run.sh.  Variables: minutes, fresh_seconds, csv.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

-- the readings, staged once as CSV: 50,000 per minute of event time
CREATE UNLOGGED TABLE staged AS
SELECT i % 1000 AS device,
       timestamptz '2024-01-01 00:00+00' + (i * 1.2 + (random() * 4000 - 2000)) * interval '1 ms' AS read_at,
       round((random() * 40)::numeric, 2)::float8 AS temp
FROM generate_series(0, :minutes * 50000 - 1) i;
SELECT count(*) AS events FROM staged \gset
COPY staged TO :'csv' WITH (FORMAT csv);

CREATE TABLE readings (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                       device int NOT NULL, read_at timestamptz NOT NULL, temp float8);
SELECT windowagg.create_pipeline('temps',
    $$SELECT device, min(temp) AS min_temp, max(temp) AS max_temp, avg(temp) AS avg_temp,
             count(*) AS n FROM readings GROUP BY device$$,
    'read_at', ARRAY[windowagg.tumbling('1 min'), windowagg.hopping('60 min', '1 min')],
    bound => '5 s', lateness => '1 min') AS pipeline_id \gset
-- the worker is up and idle before the backlog commits
SELECT windowagg.wait('temps') AS started \gset

-- (a) COPY writes the backlog (one transaction, so the running pipeline
-- sees none of it until it commits)
CHECKPOINT;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
COPY readings (device, read_at, temp) FROM :'csv' WITH (FORMAT csv);
SELECT extract(epoch FROM clock_timestamp()) - :t0 AS copy_s \gset

-- (b) the pipeline consumes it, from the moment the COPY committed
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
SELECT windowagg.wait('temps', NULL) AS caught_up \gset
SELECT extract(epoch FROM clock_timestamp()) - :t0 AS pipeline_s \gset
SELECT events_in, panes_on_time, panes_late, dead_letters, epochs, state_bytes
FROM windowagg.stat_pipelines WHERE name = 'temps';

-- (c) the plain way: a 1-minute rollup, one upsert per batch of new rows.
-- It reads its own freshly loaded copy of the rows, so that, like the
-- pipeline, it is the first to read them (and sets their hint bits).
CREATE TABLE readings_plain (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                             device int NOT NULL, read_at timestamptz NOT NULL, temp float8);
COPY readings_plain (device, read_at, temp) FROM :'csv' WITH (FORMAT csv);
CREATE TABLE rollup (device int, minute timestamptz, n bigint, sum_temp float8,
                     min_temp float8, max_temp float8, PRIMARY KEY (device, minute));
CREATE PROCEDURE roll_up(batch int) LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := (SELECT max(id) FROM readings_plain);
BEGIN
    FOR lo IN 1 .. hi BY batch LOOP
        INSERT INTO rollup
        SELECT device, date_bin('1 min', read_at, timestamptz '1970-01-01 00:00+00'),
               count(*), sum(temp), min(temp), max(temp)
        FROM readings_plain WHERE id BETWEEN lo AND lo + batch - 1 GROUP BY 1, 2
        ON CONFLICT (device, minute) DO UPDATE
        SET n = rollup.n + EXCLUDED.n, sum_temp = rollup.sum_temp + EXCLUDED.sum_temp,
            min_temp = least(rollup.min_temp, EXCLUDED.min_temp),
            max_temp = greatest(rollup.max_temp, EXCLUDED.max_temp);
        COMMIT;
    END LOOP;
END
$$;
CHECKPOINT;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
CALL roll_up(50000);
SELECT extract(epoch FROM clock_timestamp()) - :t0 AS rollup_s \gset

-- both computed the same 1-minute windows
SELECT count(*) AS tumbling_differences FROM (
    SELECT device, window_start, n FROM temps WHERE window_end - window_start = '1 min'
    EXCEPT SELECT device, minute, n FROM rollup) d;

\echo
SELECT :events AS events,
       round(:events / :copy_s) AS "(a) COPY rows/s",
       round(:events / :pipeline_s) AS "(b) pipeline events/s",
       round(:events / :rollup_s) AS "(c) rollup events/s",
       round((:copy_s / :pipeline_s)::numeric, 2) AS "(b)/(a)",
       round((:rollup_s / :pipeline_s)::numeric, 2) AS "(b)/(c)";

-- (d) freshness under a steady stream: event time runs 120x faster than
-- the wall clock (50,000 events per event-time minute at 100,000 events/s),
-- so windows end every half second.  Every batch records when it committed
-- and the newest event time it carried.
CREATE TABLE live_readings (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                            device int NOT NULL, read_at timestamptz NOT NULL, temp float8);
CREATE UNLOGGED TABLE batches (batch int, max_read_at timestamptz, committed_at timestamptz);
CREATE INDEX ON batches (max_read_at);
SELECT windowagg.create_pipeline('fresh',
    $$SELECT device, min(temp) AS min_temp, max(temp) AS max_temp, avg(temp) AS avg_temp,
             count(*) AS n FROM live_readings GROUP BY device$$,
    'read_at', ARRAY[windowagg.tumbling('1 min'), windowagg.hopping('60 min', '1 min')],
    bound => '5 s', lateness => '1 min') > 0 AS created;
CREATE PROCEDURE stream(seconds int) LANGUAGE plpgsql AS $$
DECLARE
    start timestamptz := clock_timestamp();
    b int := 0;
    t_max timestamptz;
BEGIN
    WHILE clock_timestamp() < start + seconds * interval '1 s' LOOP
        WITH ins AS (
            INSERT INTO live_readings (device, read_at, temp)
            SELECT i % 1000,
                   timestamptz '2024-01-01 00:00+00'
                   + ((b * 1000 + i) * 1.2 + (random() * 4000 - 2000)) * interval '1 ms',
                   random() * 40
            FROM generate_series(0, 999) i
            RETURNING read_at)
        SELECT max(read_at) INTO t_max FROM ins;
        INSERT INTO batches VALUES (b, t_max, clock_timestamp());
        COMMIT;
        b := b + 1;
        -- pace to 100 batches per second
        PERFORM pg_sleep(greatest(0, extract(epoch FROM start + b * interval '10 ms' - clock_timestamp())));
    END LOOP;
END
$$;
CALL stream(:fresh_seconds);
SELECT windowagg.wait('fresh', NULL) AS caught_up \gset
SELECT round(count(*) / :fresh_seconds::numeric) AS "(d) events/s streamed" FROM live_readings;

-- freshness of each (device, window): its upsert time minus the commit time
-- of the first batch whose events moved the watermark past its end
WITH firsts AS (
    SELECT r.window_end, r.updated_at,
           (SELECT min(b.committed_at) FROM batches b
            WHERE b.max_read_at - interval '5 s' >= r.window_end) AS passed_at
    FROM fresh r WHERE r.pane = 'on_time' AND r.revision = 1)
SELECT count(*) AS windows,
       round(1000 * extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY updated_at - passed_at))::numeric, 1) AS "(d) p50 ms",
       round(1000 * extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY updated_at - passed_at))::numeric, 1) AS "(d) p99 ms",
       round(1000 * extract(epoch FROM max(updated_at - passed_at))::numeric, 1) AS "(d) max ms"
FROM firsts WHERE passed_at IS NOT NULL;
