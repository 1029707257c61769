-- bench/session/pipeline.sql: see pipeline.sh.  Variables: events, csv.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

-- the events, staged once as CSV: user (i / 50) % 1000 has a burst of 50
-- events every 60 s of event time, each up to 2 s early or late
CREATE UNLOGGED TABLE staged AS
SELECT (i / 50) % 1000 AS user_id,
       timestamptz '2024-01-01 00:00+00' + (i * 1.2 + (random() * 4000 - 2000)) * interval '1 ms' AS at,
       (random() * 100)::int AS amount
FROM generate_series(0, :events - 1) i;
COPY staged TO :'csv' WITH (FORMAT csv);
SELECT set_config('bench.csv', :'csv', false) IS NOT NULL AS csv_set \gset

CREATE TABLE results (copy_s float8, pipeline_s float8, sessions bigint, differing bigint);

CREATE PROCEDURE run_case() LANGUAGE plpgsql AS $$
DECLARE
    t0 float8;
    copy_s float8;
    pipeline_s float8;
    n_sessions bigint;
    differing bigint;
BEGIN
    CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                      user_id int NOT NULL, at timestamptz NOT NULL, amount int);
    PERFORM windowagg.create_pipeline('bursts',
        'SELECT user_id, count(*) AS n, sum(amount) AS total FROM src GROUP BY user_id',
        'at', ARRAY[windowagg.session('10 s')], bound => '5 s', lateness => '1 min');
    COMMIT;
    PERFORM windowagg.wait('bursts');
    t0 := extract(epoch FROM clock_timestamp());
    EXECUTE format('COPY src (user_id, at, amount) FROM %L WITH (FORMAT csv)',
                   current_setting('bench.csv'));
    COMMIT;
    copy_s := extract(epoch FROM clock_timestamp()) - t0;
    t0 := extract(epoch FROM clock_timestamp());
    PERFORM windowagg.wait('bursts', NULL);
    pipeline_s := extract(epoch FROM clock_timestamp()) - t0;
    PERFORM windowagg.flush('bursts', NULL);
    SELECT count(*) INTO n_sessions FROM bursts;
    WITH want AS (
        SELECT user_id, min(at) AS ws, max(at) + interval '10 s' AS we, count(*) AS n,
               sum(amount) AS total
        FROM (SELECT user_id, at, amount,
                     sum(CASE WHEN at - prev <= interval '10 s' THEN 0 ELSE 1 END)
                       OVER (PARTITION BY user_id ORDER BY at, id) AS island
              FROM (SELECT user_id, at, amount, id,
                           lag(at) OVER (PARTITION BY user_id ORDER BY at, id) AS prev
                    FROM src) a) b
        GROUP BY user_id, island),
    got AS (SELECT user_id, window_start, window_end, n, total FROM bursts)
    SELECT (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x) +
           (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x)
      INTO differing;
    INSERT INTO results VALUES (copy_s, pipeline_s, n_sessions, differing);
    PERFORM windowagg.drop_pipeline('bursts', drop_tables => true);
    DROP TABLE src;
    COMMIT;
END
$$;

CALL run_case();

\echo
SELECT :events AS events, sessions,
       round(:events / copy_s) AS "COPY rows/s",
       round(:events / pipeline_s) AS "pipeline events/s",
       round((copy_s / pipeline_s)::numeric, 2) AS "pipeline/COPY",
       differing = 0 AS "sessions = islands"
FROM results;
