-- bench/logical/bench.sql: see run.sh.  Variables: events, rounds.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

CREATE TABLE readings (device int NOT NULL, read_at timestamptz NOT NULL, temp float8);
SELECT windowagg.create_pipeline('temps',
    $$SELECT device, min(temp) AS min_temp, max(temp) AS max_temp, avg(temp) AS avg_temp,
             count(*) AS n FROM readings GROUP BY device$$,
    'read_at', ARRAY[windowagg.tumbling('1 min'), windowagg.hopping('60 min', '1 min')],
    bound => '5 s', lateness => '1 min', source => 'logical') AS pipeline_id \gset
SELECT 'windowagg_pipeline_' || :pipeline_id AS pub \gset
SELECT windowagg.wait('temps') AS started \gset

-- one stream: :events readings, 50,000 per minute of event time, in
-- transactions of 10,000 rows, starting at minute offset
CREATE PROCEDURE write_stream(n int, offset_min int) LANGUAGE plpgsql AS $$
BEGIN
    FOR lo IN 0 .. n - 1 BY 10000 LOOP
        INSERT INTO readings
        SELECT i % 1000,
               timestamptz '2024-01-01 00:00+00' + offset_min * interval '1 min'
                 + (i * 1.2 + (random() * 4000 - 2000)) * interval '1 ms',
               round((random() * 40)::numeric, 2)::float8
        FROM generate_series(lo, least(lo + 10000, n) - 1) i;
        COMMIT;
    END LOOP;
END
$$;

CREATE TABLE results (round int, what text, seconds float8, events bigint);

-- (a) the raw rate: a slot of its own over the same stream
CREATE PROCEDURE measure_raw(r int) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    n bigint;
BEGIN
    SELECT count(*) INTO n
    FROM pg_logical_slot_get_binary_changes('raw', NULL, NULL,
        'proto_version', '1', 'publication_names', current_setting('bench.pub'),
        'binary', 'true');
    INSERT INTO results VALUES (r, 'raw', extract(epoch FROM clock_timestamp() - t0), n);
END
$$;

-- (b) the pipeline: resumed with the stream waiting in its slot
CREATE PROCEDURE measure_pipeline(r int, expect bigint) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM windowagg.resume('temps');
    COMMIT;
    WHILE (SELECT events_in FROM windowagg.stat_pipelines WHERE name = 'temps') < expect LOOP
        PERFORM pg_sleep(0.01);
    END LOOP;
    INSERT INTO results VALUES (r, 'pipeline', extract(epoch FROM clock_timestamp() - t0),
        (SELECT events_in FROM windowagg.stat_pipelines WHERE name = 'temps'));
END
$$;
SET bench.pub = :'pub';
SET bench.events = :events;
SET bench.rounds = :rounds;

-- each round: pause the pipeline, give the raw reader a new slot, write a
-- new stream, then measure both over it
DO $$
DECLARE
    n int := current_setting('bench.events')::int;
    expect bigint := 0;
BEGIN
    FOR r IN 1 .. current_setting('bench.rounds')::int LOOP
        PERFORM windowagg.pause('temps');
        COMMIT;
        WHILE (SELECT worker_pid FROM windowagg.stat_pipelines WHERE name = 'temps') IS NOT NULL LOOP
            PERFORM pg_sleep(0.01);
        END LOOP;
        PERFORM pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'raw';
        COMMIT;
        PERFORM pg_create_logical_replication_slot('raw', 'pgoutput');
        COMMIT;
        CALL write_stream(n, (r - 1) * (n / 50000 + 10));
        CHECKPOINT;
        expect := expect + n;
        IF r % 2 = 1 THEN
            CALL measure_raw(r);
            CALL measure_pipeline(r, expect);
        ELSE
            CALL measure_pipeline(r, expect);
            CALL measure_raw(r);
        END IF;
        COMMIT;
    END LOOP;
    PERFORM pg_drop_replication_slot('raw');
END
$$;

\echo
\echo 'logical source: pipeline vs raw pgoutput decoding of the same stream'
SELECT a.round,
       round(a.events / a.seconds) AS raw_changes_per_s,
       round(:events / a.seconds) AS raw_events_per_s,
       round(:events / b.seconds) AS pipeline_events_per_s,
       round((a.seconds / b.seconds)::numeric, 2) AS pipeline_over_raw
FROM results a JOIN results b ON a.round = b.round AND a.what = 'raw' AND b.what = 'pipeline'
ORDER BY 1;
SELECT events_in, panes_on_time, panes_late, dead_letters, epochs, last_error
FROM windowagg.stat_pipelines WHERE name = 'temps';
