-- bench/multiwindow/pipelines.sql: see run.sh.  Variables: events, csv, clk_tck.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

-- 1000 devices, one reading each every 6 s of event time, jittered by up
-- to 10 s; staged once as CSV
CREATE UNLOGGED TABLE staged AS
SELECT i % 1000 AS device,
       timestamptz '2024-01-01 00:00+00' + (i * 6 + (random() * 10000 - 5000)) * interval '1 ms' AS read_at,
       round((random() * 40)::numeric, 2)::float8 AS temp
FROM generate_series(0, :events - 1) i;
COPY staged TO :'csv' WITH (FORMAT csv);

CREATE FUNCTION create_source(name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                                      device int NOT NULL, read_at timestamptz NOT NULL,
                                      temp float8)', name);
END
$$;
CREATE FUNCTION paper_pipeline(name text, source text, windows windowagg.window[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM windowagg.create_pipeline(name,
        format('SELECT device, min(temp) AS min_temp, max(temp) AS max_temp FROM %I GROUP BY device',
               source),
        'read_at', windows, bound => '30 s', lateness => '1 min');
END
$$;
-- CPU seconds the named pipelines' workers have used (user + system, from
-- /proc), since (a) spreads its four workers over the machine's cores
CREATE FUNCTION worker_cpu_s(names text[], hz float8) RETURNS float8 LANGUAGE sql AS $$
    SELECT sum(split_part(f, ' ', 12)::bigint + split_part(f, ' ', 13)::bigint) / hz
    FROM windowagg.stat_pipelines s,
         LATERAL (SELECT substr(x, strpos(x, ') ') + 2) AS f
                  FROM pg_read_file('/proc/' || s.worker_pid || '/stat') x) y
    WHERE s.name = ANY (names)
$$;

SELECT create_source('src_a'), create_source('src_b'), create_source('src_c');
-- pipelines start when the transaction that creates them commits; each
-- worker builds its engine, reading windowagg.share_windows, before the
-- first wait returns
SELECT paper_pipeline('a10', 'src_a', ARRAY[windowagg.tumbling('10 min')]),
       paper_pipeline('a20', 'src_a', ARRAY[windowagg.tumbling('20 min')]),
       paper_pipeline('a30', 'src_a', ARRAY[windowagg.tumbling('30 min')]),
       paper_pipeline('a40', 'src_a', ARRAY[windowagg.tumbling('40 min')]);
SELECT windowagg.wait('a10'), windowagg.wait('a20'), windowagg.wait('a30'), windowagg.wait('a40');
ALTER SYSTEM SET windowagg.share_windows = off;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SELECT paper_pipeline('b', 'src_b', ARRAY[windowagg.tumbling('10 min'), windowagg.tumbling('20 min'),
                                          windowagg.tumbling('30 min'), windowagg.tumbling('40 min')]);
SELECT windowagg.wait('b');
ALTER SYSTEM RESET windowagg.share_windows;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
SELECT paper_pipeline('c', 'src_c', ARRAY[windowagg.tumbling('10 min'), windowagg.tumbling('20 min'),
                                          windowagg.tumbling('30 min'), windowagg.tumbling('40 min')]);
SELECT windowagg.wait('c');
SELECT * FROM windowagg.explain('c');

-- each case: COPY the backlog (one transaction), then wait from its commit
-- until every pipeline named caught up; wall seconds and worker CPU seconds
CREATE PROCEDURE catch_up(source text, names text[], csv text, hz float8,
                          INOUT wall_s float8 DEFAULT NULL, INOUT cpu_s float8 DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    cpu0 float8 := worker_cpu_s(names, hz);
    t0 timestamptz;
    n text;
BEGIN
    EXECUTE format('COPY %I (device, read_at, temp) FROM %L WITH (FORMAT csv)', source, csv);
    COMMIT;
    t0 := clock_timestamp();
    FOREACH n IN ARRAY names LOOP
        PERFORM windowagg.wait(n, NULL);
    END LOOP;
    wall_s := extract(epoch FROM clock_timestamp() - t0);
    cpu_s := worker_cpu_s(names, hz) - cpu0;
END
$$;
CHECKPOINT;
CALL catch_up('src_a', '{a10,a20,a30,a40}', :'csv', :clk_tck) \gset a_
CHECKPOINT;
CALL catch_up('src_b', '{b}', :'csv', :clk_tck) \gset b_
CHECKPOINT;
CALL catch_up('src_c', '{c}', :'csv', :clk_tck) \gset c_

-- the same windows everywhere
CREATE VIEW a_all AS
    SELECT device, window_start, window_end, min_temp, max_temp FROM a10 UNION ALL
    SELECT device, window_start, window_end, min_temp, max_temp FROM a20 UNION ALL
    SELECT device, window_start, window_end, min_temp, max_temp FROM a30 UNION ALL
    SELECT device, window_start, window_end, min_temp, max_temp FROM a40;
SELECT (SELECT count(*) FROM a_all) AS windows,
       (SELECT count(*) FROM (SELECT * FROM a_all EXCEPT
                              SELECT device, window_start, window_end, min_temp, max_temp FROM b) x)
       + (SELECT count(*) FROM (SELECT device, window_start, window_end, min_temp, max_temp FROM b
                                EXCEPT SELECT * FROM a_all) x) AS b_differences,
       (SELECT count(*) FROM (SELECT * FROM a_all EXCEPT
                              SELECT device, window_start, window_end, min_temp, max_temp FROM c) x)
       + (SELECT count(*) FROM (SELECT device, window_start, window_end, min_temp, max_temp FROM c
                                EXCEPT SELECT * FROM a_all) x) AS c_differences;

\echo
-- events/s of wall time from the COPY's commit, and events per CPU second
-- of the workers (the four of (a) share the cores)
SELECT :events AS events,
       round(:events / :a_wall_s) AS "(a) 4 pipelines events/s",
       round(:events / :b_wall_s) AS "(b) shared slices events/s",
       round(:events / :c_wall_s) AS "(c) coverage plan events/s",
       round((:a_wall_s / :c_wall_s)::numeric, 2) AS "(c)/(a)",
       round((:b_wall_s / :c_wall_s)::numeric, 2) AS "(c)/(b)";
SELECT round(:a_cpu_s::numeric, 2) AS "(a) worker CPU s",
       round(:b_cpu_s::numeric, 2) AS "(b) worker CPU s",
       round(:c_cpu_s::numeric, 2) AS "(c) worker CPU s",
       round((:a_cpu_s / :c_cpu_s)::numeric, 2) AS "(c)/(a) per CPU s",
       round((:b_cpu_s / :c_cpu_s)::numeric, 2) AS "(c)/(b) per CPU s";
