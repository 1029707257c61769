-- bench/logical/bench.sql: see run.sh.  Variables: events, rounds.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

CREATE TABLE readings (device int NOT NULL, read_at timestamptz NOT NULL, temp float8);
-- two identical pipelines, so that the pipeline is measured twice on each
-- stream too (one after the other), as the raw reader is
\set query '$$SELECT device, min(temp) AS min_temp, max(temp) AS max_temp, avg(temp) AS avg_temp, count(*) AS n FROM readings GROUP BY device$$'
SELECT windowagg.create_pipeline('temps', :query, 'read_at',
    ARRAY[windowagg.tumbling('1 min'), windowagg.hopping('60 min', '1 min')],
    bound => '5 s', lateness => '1 min', source => 'logical');
SELECT windowagg.create_pipeline('temps2', :query, 'read_at',
    ARRAY[windowagg.tumbling('1 min'), windowagg.hopping('60 min', '1 min')],
    bound => '5 s', lateness => '1 min', source => 'logical');
-- the raw reader's publication (the pipeline's slot needs none)
CREATE PUBLICATION bench_pub FOR TABLE readings;
SELECT windowagg.wait('temps') AND windowagg.wait('temps2') AS started \gset

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

-- (a) the raw rate: a slot of its own over the same stream, best of two
-- reads (peek), then consumed
CREATE PROCEDURE measure_raw(r int) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    best float8 := 'infinity';
    n bigint;
BEGIN
    FOR i IN 1 .. 2 LOOP
        t0 := clock_timestamp();
        SELECT count(*) INTO n
        FROM pg_logical_slot_peek_binary_changes('raw', NULL, NULL,
            'proto_version', '1', 'publication_names', 'bench_pub', 'binary', 'true');
        best := least(best, extract(epoch FROM clock_timestamp() - t0));
    END LOOP;
    PERFORM count(*) FROM pg_logical_slot_get_binary_changes('raw', NULL, NULL,
        'proto_version', '1', 'publication_names', 'bench_pub', 'binary', 'true');
    INSERT INTO results VALUES (r, 'raw', best, current_setting('bench.events')::bigint);
END
$$;

-- (b) a pipeline: resumed with the stream waiting in its slot.  Timed
-- twice: from the resume (worker start and restore included), and from its
-- first committed epoch on (the rate it sustains)
CREATE PROCEDURE measure_pipeline(r int, expect bigint, p text) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    t_first timestamptz;
    n_first bigint;
    n bigint;
    base bigint := expect - current_setting('bench.events')::bigint;
BEGIN
    PERFORM windowagg.resume(p);
    COMMIT;
    LOOP
        n := coalesce((SELECT events_in FROM windowagg.stat_pipelines WHERE name = p), 0);
        IF t_first IS NULL AND n > base THEN
            t_first := clock_timestamp();
            n_first := n;
        END IF;
        EXIT WHEN n >= expect;
        PERFORM pg_sleep(0.005);
    END LOOP;
    INSERT INTO results VALUES
        (r, 'pipeline', extract(epoch FROM clock_timestamp() - t0), n - base),
        (r, 'sustained', extract(epoch FROM clock_timestamp() - t_first), n - n_first);
END
$$;
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
        -- the pipeline's slot moves its restart point to here first (at a
        -- checkpoint's running-transactions record that it has decoded),
        -- as a new slot would start here: the resumed worker then reads
        -- the same WAL as the raw reader, not the previous round's again
        CHECKPOINT;
        PERFORM windowagg.wait('temps') AND windowagg.wait('temps2');
        COMMIT;
        PERFORM windowagg.wait('temps') AND windowagg.wait('temps2');
        COMMIT;
        PERFORM windowagg.pause('temps'), windowagg.pause('temps2');
        COMMIT;
        WHILE EXISTS (SELECT FROM windowagg.stat_pipelines WHERE worker_pid IS NOT NULL) LOOP
            PERFORM pg_sleep(0.01);
        END LOOP;
        PERFORM pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'raw';
        COMMIT;
        PERFORM pg_create_logical_replication_slot('raw', 'pgoutput');
        COMMIT;
        CALL write_stream(n, (r - 1) * (n / 50000 + 10));
        CHECKPOINT;
        -- let the kernel write the checkpoint out before anything is timed
        PERFORM pg_sleep(3);
        expect := expect + n;
        IF r % 2 = 1 THEN
            CALL measure_raw(r);
            CALL measure_pipeline(r, expect, 'temps');
            CALL measure_pipeline(r, expect, 'temps2');
        ELSE
            CALL measure_pipeline(r, expect, 'temps');
            CALL measure_pipeline(r, expect, 'temps2');
            CALL measure_raw(r);
        END IF;
        COMMIT;
    END LOOP;
    PERFORM pg_drop_replication_slot('raw');
END
$$;

\echo
\echo 'logical source: pipeline vs raw pgoutput decoding of the same stream'
-- each a best of two
CREATE VIEW best AS
SELECT round, what, max(events / seconds) AS rate FROM results GROUP BY 1, 2;
CREATE VIEW rates AS
SELECT a.round,
       round(a.rate) AS raw_events_per_s,
       round(b.rate) AS pipeline_events_per_s,
       round(c.rate) AS sustained_events_per_s,
       (b.rate / a.rate)::numeric(4,2) AS pipeline_over_raw,
       (c.rate / a.rate)::numeric(4,2) AS sustained_over_raw
FROM best a
JOIN best b ON b.round = a.round AND b.what = 'pipeline'
JOIN best c ON c.round = a.round AND c.what = 'sustained'
WHERE a.what = 'raw';
SELECT * FROM rates ORDER BY round;
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY pipeline_over_raw)::numeric(4,2)
         AS median_pipeline_over_raw,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY sustained_over_raw)::numeric(4,2)
         AS median_sustained_over_raw,
       min(sustained_over_raw) AS worst_sustained, max(sustained_over_raw) AS best_sustained
FROM rates;
SELECT name, events_in, panes_on_time, panes_late, dead_letters, epochs, last_error
FROM windowagg.stat_pipelines ORDER BY name;
