-- bench/pipeline/generic.sql: see generic.sh.  Variables: minutes, csv.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;
SELECT count(*) = 2 AS have_sketches
FROM pg_available_extensions WHERE name IN ('hll', 'tdigest') \gset
\if :have_sketches
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;
\endif

-- the readings, staged once as CSV: 50,000 per minute of event time, from
-- 1000 devices, with a user id of 100,000 and a latency
CREATE UNLOGGED TABLE staged AS
SELECT i % 1000 AS device,
       timestamptz '2024-01-01 00:00+00' + (i * 1.2 + (random() * 4000 - 2000)) * interval '1 ms' AS read_at,
       round((random() * 40)::numeric, 2) AS amount,
       (random() * 100000)::int AS user_id,
       random() * random() * 1000 AS latency
FROM generate_series(0, :minutes * 50000 - 1) i;
SELECT count(*) AS events FROM staged \gset
COPY staged TO :'csv' WITH (FORMAT csv);

CREATE TABLE results (name text, copy_s float8, pipeline_s float8, check_ok bool);

-- One case: a fresh source, a pipeline over it (tumbling 1 minute), the
-- backlog COPYed in one transaction, then the time the pipeline takes to
-- consume it from the moment the COPY committed; the 1-minute windows are
-- checked against GROUP BY over the source.
CREATE PROCEDURE run_case(name text, aggs text, checked text, want text,
                          amount_type text DEFAULT 'numeric') LANGUAGE plpgsql AS $$
DECLARE
    t0 float8;
    copy_s float8;
    pipeline_s float8;
    differing bigint;
BEGIN
    EXECUTE format('CREATE TABLE %I (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, '
                   'device int NOT NULL, read_at timestamptz NOT NULL, amount %s, '
                   'user_id int, latency float8)', name || '_src', amount_type);
    PERFORM windowagg.create_pipeline(name,
        format('SELECT device, %s FROM %I GROUP BY device', aggs, name || '_src'),
        'read_at', ARRAY[windowagg.tumbling('1 min')], bound => '5 s', lateness => '1 min');
    COMMIT;
    PERFORM windowagg.wait(name);
    t0 := extract(epoch FROM clock_timestamp());
    EXECUTE format('COPY %I (device, read_at, amount, user_id, latency) FROM %L WITH (FORMAT csv)',
                   name || '_src', current_setting('bench.csv'));
    COMMIT;
    copy_s := extract(epoch FROM clock_timestamp()) - t0;
    t0 := extract(epoch FROM clock_timestamp());
    PERFORM windowagg.wait(name, NULL);
    pipeline_s := extract(epoch FROM clock_timestamp()) - t0;
    PERFORM windowagg.flush(name, NULL);
    EXECUTE format($q$
        SELECT count(*) FROM (
            (SELECT device, window_start, %1$s FROM %2$I
             EXCEPT SELECT device, date_bin('1 min', read_at, timestamptz '2024-01-01 00:00+00'),
                           %3$s FROM %4$I GROUP BY 1, 2)
            UNION ALL
            (SELECT device, date_bin('1 min', read_at, timestamptz '2024-01-01 00:00+00'),
                    %3$s FROM %4$I GROUP BY 1, 2
             EXCEPT SELECT device, window_start, %1$s FROM %2$I)) d$q$,
        checked, name, want, name || '_src')
      INTO differing;
    INSERT INTO results VALUES (name, copy_s, pipeline_s, differing = 0);
    PERFORM windowagg.drop_pipeline(name, drop_tables => true);
    EXECUTE format('DROP TABLE %I', name || '_src');
    COMMIT;
END
$$;
SELECT set_config('bench.csv', :'csv', false) IS NOT NULL AS csv_set \gset

-- (float sums compared to 6 digits: slices add in another order)
CALL run_case('kernel_sum_float8', 'sum(latency) AS s, count(*) AS n', 'round(s::numeric, 6), n',
              'round(sum(latency)::numeric, 6), count(*)');
CALL run_case('generic_sum_numeric', 'sum(amount) AS s, count(*) AS n', 's, n',
              'sum(amount), count(*)');
-- the same amounts typed numeric(12,2): a fixed-point kernel
CALL run_case('kernel_sum_numeric_12_2', 'sum(amount) AS s, count(*) AS n', 's, n',
              'sum(amount), count(*)', 'numeric(12,2)');
\if :have_sketches
CALL run_case('generic_hll', 'hll_cardinality(hll_add_agg(hll_hash_integer(user_id))) AS d', 'd',
              'hll_cardinality(hll_add_agg(hll_hash_integer(user_id)))');
CALL run_case('generic_tdigest_p99', 'tdigest_percentile(latency, 100, 0.99) AS p99, count(*) AS n', 'n',
              'count(*)');
\endif

\echo
SELECT name, :events AS events,
       round(:events / copy_s) AS "COPY rows/s",
       round(:events / pipeline_s) AS "pipeline events/s",
       round((copy_s / pipeline_s)::numeric, 2) AS "pipeline/COPY",
       check_ok AS "windows = GROUP BY"
FROM results ORDER BY name;
