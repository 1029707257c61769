-- Attacks on windowagg by an ordinary role, written as the attacker would.
--
-- wa_mallory has nothing but a schema of her own.  She plants operators,
-- functions and casts (domains named like the built-in types) that record
-- who runs them and try to make her a superuser, puts her schema first on
-- the search_path, and then drives every windowagg entry point and worker
-- through them; she forges catalog rows, hangs code on her result tables,
-- and goes after another role's pipeline.  The oracle, after each step:
-- nothing she planted ran with anyone's rights but hers, and she is no
-- superuser; the legitimate calls still do their job.
SET timezone = 'UTC';
SET client_min_messages = warning;

CREATE ROLE wa_mallory;
CREATE ROLE wa_victim;
CREATE ROLE wa_reader;
CREATE ROLE wa_watcher IN ROLE pg_monitor;
CREATE SCHEMA mallory AUTHORIZATION wa_mallory;
CREATE SCHEMA victim AUTHORIZATION wa_victim;
GRANT USAGE ON SCHEMA victim TO wa_reader;

-- what planted code did, and as whom: anyone may write here
CREATE TABLE sec_log (who name NOT NULL, what text NOT NULL);
GRANT INSERT ON sec_log TO PUBLIC;
CREATE FUNCTION sec_breaches() RETURNS TABLE (ran_with_other_rights bigint,
                                              mallory_is_superuser boolean)
LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM sec_log WHERE who <> 'wa_mallory'),
           (SELECT rolsuper FROM pg_roles WHERE rolname = 'wa_mallory')
$$;
CREATE FUNCTION sec_breach_list() RETURNS SETOF text LANGUAGE sql AS $$
    SELECT DISTINCT what FROM sec_log WHERE who <> 'wa_mallory' ORDER BY 1
$$;
-- each step is judged on its own: forget the last one's traces
CREATE PROCEDURE sec_next_step() LANGUAGE sql AS $$
    DELETE FROM sec_log;
    ALTER ROLE wa_mallory NOSUPERUSER;
$$;

SET ROLE wa_mallory;
-- The trap: record who runs it, then try to become superuser.
CREATE FUNCTION mallory.trap(what pg_catalog.text) RETURNS pg_catalog.bool
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    INSERT INTO public.sec_log (who, what) VALUES (current_user, what);
    BEGIN
        ALTER ROLE wa_mallory SUPERUSER;
        INSERT INTO public.sec_log (who, what)
        VALUES (current_user, what || ': made wa_mallory superuser');
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
    RETURN true;
END $$;
-- In a worker the session user is the bootstrap superuser: try to get back
-- to it.  (Only the worker calls this: in this test session it would work.)
CREATE FUNCTION mallory.try_switch(what pg_catalog.text) RETURNS pg_catalog.bool
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    BEGIN
        EXECUTE format('SET ROLE %I', (SELECT rolname FROM pg_roles WHERE oid = 10));
        PERFORM mallory.trap(what || ' after SET ROLE');
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    BEGIN
        SET SESSION AUTHORIZATION DEFAULT;
        PERFORM mallory.trap(what || ' after SET SESSION AUTHORIZATION');
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    BEGIN
        RESET ROLE;
        PERFORM mallory.trap(what || ' after RESET ROLE');
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    RETURN true;
END $$;
-- Operators that shadow pg_catalog's for a search_path that lists mallory
-- first: comparisons and + on the types windowagg's statements use.
DO $do$
DECLARE
    t text;
    op text;
    n int := 0;
BEGIN
    FOREACH t IN ARRAY ARRAY['text', 'name', 'int4', 'int8', 'oid', 'bool'] LOOP
        FOREACH op IN ARRAY ARRAY['=', '<>', '<', '>', '<=', '>='] LOOP
            n := n + 1;
            EXECUTE format($f$
                CREATE FUNCTION mallory.op_%s(a pg_catalog.%s, b pg_catalog.%s)
                RETURNS pg_catalog.bool LANGUAGE plpgsql SET search_path = pg_catalog AS $b$
                BEGIN
                    PERFORM mallory.trap(%L);
                    RETURN a OPERATOR(pg_catalog.%s) b;
                END $b$ $f$, n, t, t, 'operator ' || op || ' on ' || t, op);
            EXECUTE format('CREATE OPERATOR mallory.%s (LEFTARG = pg_catalog.%s, RIGHTARG = pg_catalog.%s, FUNCTION = mallory.op_%s)',
                           op, t, t, n);
        END LOOP;
    END LOOP;
    FOREACH t IN ARRAY ARRAY['int4', 'int8'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION mallory.plus_%s(a pg_catalog.%s, b pg_catalog.%s)
            RETURNS pg_catalog.%s LANGUAGE plpgsql SET search_path = pg_catalog AS $b$
            BEGIN
                PERFORM mallory.trap(%L);
                RETURN a OPERATOR(pg_catalog.+) b;
            END $b$ $f$, t, t, t, t, 'operator + on ' || t);
        EXECUTE format('CREATE OPERATOR mallory.+ (LEFTARG = pg_catalog.%s, RIGHTARG = pg_catalog.%s, FUNCTION = mallory.plus_%s)',
                       t, t, t);
    END LOOP;
END $do$;
-- Functions and an aggregate that shadow pg_catalog's.
CREATE FUNCTION mallory.now() RETURNS pg_catalog.timestamptz
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM mallory.trap('function now'); RETURN pg_catalog.now(); END $$;
CREATE FUNCTION mallory.unnest(a pg_catalog.anyarray) RETURNS SETOF pg_catalog.anyelement
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM mallory.trap('function unnest'); RETURN QUERY SELECT pg_catalog.unnest(a); END $$;
CREATE FUNCTION mallory.pg_get_serial_sequence(a pg_catalog.text, b pg_catalog.text)
RETURNS pg_catalog.text LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM mallory.trap('function pg_get_serial_sequence');
    RETURN pg_catalog.pg_get_serial_sequence(a, b);
END $$;
CREATE FUNCTION mallory.to_jsonb(a pg_catalog.anyelement) RETURNS pg_catalog.jsonb
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM mallory.trap('function to_jsonb'); RETURN pg_catalog.to_jsonb(a); END $$;
CREATE FUNCTION mallory.max_step(s pg_catalog.int8, v pg_catalog.int8) RETURNS pg_catalog.int8
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN PERFORM mallory.trap('aggregate max'); RETURN greatest(s, v); END $$;
CREATE AGGREGATE mallory.max(pg_catalog.int8) (sfunc = mallory.max_step, stype = pg_catalog.int8);
RESET ROLE;
-- Casts: domains named like the types windowagg's statements cast to, in
-- a schema of their own (on the path they break many ordinary queries).
CREATE SCHEMA mallory_casts AUTHORIZATION wa_mallory;
SET ROLE wa_mallory;
CREATE DOMAIN mallory_casts.oid AS pg_catalog.oid CHECK (mallory.trap('cast to oid'));
CREATE DOMAIN mallory_casts.text AS pg_catalog.text CHECK (mallory.trap('cast to text'));
CREATE DOMAIN mallory_casts.regclass AS pg_catalog.regclass CHECK (mallory.trap('cast to regclass'));
CREATE DOMAIN mallory_casts.int8 AS pg_catalog.int8 CHECK (mallory.trap('cast to int8'));
CREATE DOMAIN mallory_casts.numeric AS pg_catalog.numeric CHECK (mallory.trap('cast to numeric'));

CREATE TABLE mallory.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                          k int NOT NULL, kt text, t bigint NOT NULL, v int);
RESET ROLE;

--
-- 1. Every control function, called under the planted search_path.
--
SET ROLE wa_mallory;
SET search_path = mallory, pg_catalog;
SELECT windowagg.create_pipeline('m1', 'SELECT k, count(*) AS n, sum(v) AS s FROM mallory.src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], bound => 5, arrival_column => 'id',
                                 result_table => 'mallory.m1') IS NOT NULL AS created;
SELECT windowagg.pause('m1');
SELECT windowagg.resume('m1');
SELECT windowagg.wait('m1');
SELECT count(*) AS live_windows FROM mallory.m1_live;
SELECT count(*) > 0 AS explained FROM windowagg.explain('m1');
SELECT count(*) AS stat_rows FROM windowagg.stat_pipelines;
-- and with the casts planted too
SET search_path = mallory_casts, mallory, pg_catalog;
SELECT windowagg.create_pipeline('m_casts', 'SELECT k, count(*) AS n FROM mallory.src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], arrival_column => 'id',
                                 result_table => 'mallory.m_casts') IS NOT NULL AS created;
SELECT windowagg.pause('m1');
SELECT windowagg.resume('m1');
SELECT windowagg.wait('m1');
SELECT count(*) AS live_windows FROM mallory.m1_live;
SELECT count(*) > 0 AS explained FROM windowagg.explain('m1');
SELECT windowagg.drop_pipeline('m_casts', drop_tables => true);
RESET search_path;
RESET ROLE;
SELECT * FROM sec_breaches();
SELECT * FROM sec_breach_list();
CALL sec_next_step();

--
-- 2. The worker, whose pipeline keeps the planted search_path: it reads
-- the source, writes results, checkpoints and restores (pause, resume).
--
SET ROLE wa_mallory;
INSERT INTO mallory.src (k, kt, t, v) SELECT i % 3, 'k' || i % 3, i, i FROM generate_series(1, 100) i;
SELECT windowagg.wait('m1');
SELECT windowagg.pause('m1');
SELECT windowagg.resume('m1');
INSERT INTO mallory.src (k, kt, t, v) SELECT i % 3, 'k' || i % 3, i, i FROM generate_series(101, 200) i;
INSERT INTO mallory.src (k, kt, t, v) VALUES (0, 'k0', 1, 1);   -- too late: a dead letter
SELECT windowagg.flush('m1');
RESET ROLE;
SELECT * FROM sec_breaches();
SELECT * FROM sec_breach_list();
CALL sec_next_step();
-- and the pipeline still did its job: every window as GROUP BY computes it
SELECT count(*) AS wrong_or_missing FROM (
    (SELECT k, window_start, n, s FROM mallory.m1
     EXCEPT SELECT k, t - t % 10, count(*), sum(v) FROM mallory.src WHERE id <= 200 GROUP BY 1, 2)
    UNION ALL
    (SELECT k, t - t % 10, count(*), sum(v) FROM mallory.src WHERE id <= 200 GROUP BY 1, 2
     EXCEPT SELECT k, window_start, n, s FROM mallory.m1)) d;
SELECT arrival = 201 AS dead_letter_is_the_late_row, reason FROM mallory.m1_dead_letters;
SET ROLE wa_mallory;
SELECT windowagg.drop_pipeline('m1', drop_tables => true);
RESET ROLE;

--
-- 3. Forged catalog rows: attach windowagg's catalog trigger to a table of
-- her own and insert a pipeline row owned by the bootstrap superuser, with
-- the id her next real pipeline will get, so that its worker would run her
-- query as that superuser.
--
SET ROLE wa_mallory;
CREATE TABLE mallory.fake_pipelines (id integer, name text, owner regrole, enabled boolean);
CREATE TRIGGER forge AFTER INSERT ON mallory.fake_pipelines
    FOR EACH ROW EXECUTE FUNCTION windowagg._pipeline_inserted();
SELECT windowagg.create_pipeline('m_probe', 'SELECT k, count(*) AS n FROM mallory.src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'mallory.m_probe') AS probe_id \gset
BEGIN;
INSERT INTO mallory.fake_pipelines VALUES (:probe_id + 1, 'forged', 10::regrole, true);
SELECT windowagg.create_pipeline('m_forged',
    'SELECT k, count(*) AS n FROM mallory.src WHERE mallory.trap(''forged pipeline query'') GROUP BY k',
    't', ARRAY[windowagg.tumbling(10)], result_table => 'mallory.m_forged') = :probe_id + 1 AS got_the_forged_id;
COMMIT;
INSERT INTO mallory.src (k, kt, t, v) VALUES (1, 'k1', 500, 1);
RESET ROLE;
-- until the worker has run the query
DO $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN EXISTS (SELECT FROM sec_log WHERE what = 'forged pipeline query');
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
-- even attached by a superuser, the trigger serves windowagg's catalog only
CREATE TRIGGER forge_again AFTER INSERT ON mallory.fake_pipelines
    FOR EACH ROW EXECUTE FUNCTION windowagg._pipeline_inserted();
SET ROLE wa_mallory;
INSERT INTO mallory.fake_pipelines VALUES (:probe_id + 100, 'forged_again', 10::regrole, true);
RESET ROLE;
DROP TRIGGER forge_again ON mallory.fake_pipelines;
-- the catalog itself is windowagg's to write
SET ROLE wa_mallory;
INSERT INTO windowagg.pipelines (name, owner, query, search_path, event_time, windows, bound,
                                 lateness, source, result_table, dead_letter_table, live_view,
                                 source_kind)
SELECT 'forged_row', 10::regrole, query, search_path, event_time, windows, bound, lateness,
       source, result_table, dead_letter_table, live_view, 'logical'
FROM windowagg.pipelines WHERE name = 'm_probe';
UPDATE windowagg.pipelines SET owner = 10::regrole WHERE name = 'm_probe';
RESET ROLE;
SELECT * FROM sec_breaches();
SELECT * FROM sec_breach_list();
CALL sec_next_step();

--
-- 4. Code on her own result and dead-letter tables (a trigger, an index
-- expression, a column default) runs in the worker: as her, and unable to
-- switch back to the worker's session user.
--
SET ROLE wa_mallory;
CREATE FUNCTION mallory.on_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM mallory.trap(TG_TABLE_NAME || ' trigger');
    PERFORM mallory.try_switch(TG_TABLE_NAME || ' trigger');
    RETURN NEW;
END $$;
CREATE FUNCTION mallory.idx(k int) RETURNS int
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog AS $$
BEGIN
    PERFORM mallory.trap('index expression');
    PERFORM mallory.try_switch('index expression');
    RETURN k;
END $$;
CREATE FUNCTION mallory.stamp() RETURNS timestamptz
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM mallory.trap('dead-letter default');
    PERFORM mallory.try_switch('dead-letter default');
    RETURN now();
END $$;
CREATE TRIGGER grab BEFORE INSERT OR UPDATE ON mallory.m_probe
    FOR EACH ROW EXECUTE FUNCTION mallory.on_write();
CREATE TRIGGER grab BEFORE INSERT ON mallory.m_probe_dead_letters
    FOR EACH ROW EXECUTE FUNCTION mallory.on_write();
CREATE INDEX ON mallory.m_probe (mallory.idx(k));
ALTER TABLE mallory.m_probe_dead_letters ALTER COLUMN recorded_at SET DEFAULT mallory.stamp();
INSERT INTO mallory.src (k, kt, t, v) VALUES (2, 'k2', 900, 1), (2, 'k2', 3, 1);
SELECT windowagg.flush('m_probe');
SELECT count(*) > 0 AS wrote_results, (SELECT count(*) FROM mallory.m_probe_dead_letters) AS dead_letters
FROM mallory.m_probe;
RESET ROLE;
SELECT * FROM sec_breaches();
SELECT count(*) > 0 AS her_code_ran_as_her FROM sec_log WHERE what LIKE 'm\_probe%trigger';
SELECT * FROM sec_breach_list();
CALL sec_next_step();

-- Her code that the worker runs while it reads the source runs with no
-- lock of the pipeline held: it may even read the pipeline's own live
-- windows (which would wait for ever, uninterruptibly, on a lock held).
SET ROLE wa_mallory;
CREATE TABLE mallory.loop_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                               t bigint NOT NULL, v int NOT NULL);
CREATE FUNCTION mallory.peek(v int) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = pg_catalog AS $$
BEGIN
    IF v = 2 THEN
        PERFORM count(*) FROM windowagg.live('m_loop') AS l(window_start bigint, window_end bigint, n bigint);
    END IF;
    RETURN true;
END $$;
SELECT windowagg.create_pipeline('m_loop', 'SELECT count(*) AS n FROM mallory.loop_src WHERE mallory.peek(v)',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'mallory.m_loop') IS NOT NULL AS created;
INSERT INTO mallory.loop_src (t, v) VALUES (1, 1), (2, 2), (3, 3);
SELECT windowagg.flush('m_loop', '1 min');
SELECT window_start, n FROM mallory.m_loop;
RESET ROLE;

--
-- 5. Another role's pipeline: neither controlled nor read by her.
--
SET ROLE wa_victim;
CREATE TABLE victim.vsrc (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                          k int NOT NULL, t bigint NOT NULL, v int);
SELECT windowagg.create_pipeline('v1', 'SELECT k, count(*) AS n FROM victim.vsrc GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], bound => 5,
                                 result_table => 'victim.v1') IS NOT NULL AS created;
CREATE TABLE victim.vbroken (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                             k int NOT NULL, t bigint NOT NULL);
SELECT windowagg.create_pipeline('v_broken', 'SELECT k, count(*) AS n FROM victim.vbroken GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'victim.v_broken') IS NOT NULL AS created;
GRANT SELECT ON victim.v1 TO wa_reader;
INSERT INTO victim.vsrc (k, t, v) SELECT i % 2, i, i FROM generate_series(1, 50) i;
SELECT windowagg.wait('v1');
-- one whose query names its table through the search_path
CREATE TABLE victim.v2src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                           k int NOT NULL, t bigint NOT NULL, secret_flag int, note text);
SET search_path = victim;
SELECT windowagg.create_pipeline('v2', $$SELECT k, count(*) AS n FROM v2src
                                       WHERE secret_flag <> 42 AND note IS DISTINCT FROM 'api\key' GROUP BY k$$,
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'victim.v2') IS NOT NULL AS created;
RESET search_path;
GRANT SELECT ON victim.v2 TO wa_reader;
INSERT INTO victim.v2src (k, t, secret_flag) VALUES (1, 1, 0);
SELECT windowagg.wait('v2');
-- and one with events at the end of time (stat_pipelines must show them;
-- the last, in no minute that ends within the type, is a dead letter)
CREATE TABLE victim.tsrc (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ts timestamptz NOT NULL);
SELECT windowagg.create_pipeline('v_late_ts', 'SELECT count(*) AS n FROM victim.tsrc',
                                 'ts', ARRAY[windowagg.tumbling('1 min')],
                                 result_table => 'victim.v_late_ts') IS NOT NULL AS created;
INSERT INTO victim.tsrc (ts) VALUES ('294276-12-31 23:58:59.999999+00'),
                                    ('294276-12-31 23:59:59.999999+00');
SELECT windowagg.wait('v_late_ts');
SELECT name, status, watermark, watermark_ticks FROM windowagg.stat_pipelines WHERE name = 'v_late_ts';
-- (ticks that are no timestamp are NULL, not an error; a fraction is floored)
SELECT windowagg._ticks_to_timestamptz(9223371331199999999.5) AS rounded,
       windowagg._ticks_to_timestamptz(9223371331200000000) AS past_the_end,
       windowagg._ticks_to_timestamptz(-9223372036854775808) AS before_the_start,
       windowagg._ticks_to_timestamptz('NaN') AS nan,
       windowagg._ticks_to_timestamptz('Infinity') AS infinity,
       windowagg._ticks_to_timestamptz(0) AS y2000;
-- v_broken stops: its owner can no longer read its source
REVOKE SELECT ON victim.vbroken FROM wa_victim;
SELECT windowagg.pause('v_broken');
SELECT windowagg.resume('v_broken');
RESET ROLE;
SELECT wait_for_status('v_broken', 'stopped');

SET ROLE wa_mallory;
SELECT windowagg.flush('v1', '1 s');
SELECT windowagg.wait('v1', '1 s');
SELECT windowagg.pause('v1');
SELECT windowagg.resume('v1');
SELECT windowagg.drop_pipeline('v1');
SELECT * FROM windowagg.live('v1') AS l(k int, window_start bigint, window_end bigint, n bigint);
SELECT * FROM windowagg.explain('v1');
-- the catalog shows her her own pipelines only
SELECT name FROM windowagg.pipelines ORDER BY 1;
SELECT count(*) AS progress_rows FROM windowagg.pipeline_progress;
SELECT name FROM windowagg.stat_pipelines ORDER BY 1;
-- every column of every row she sees, though others' sources lie in
-- schemas she cannot use: no error
SELECT count(*) AS whole_rows FROM windowagg.stat_pipelines s WHERE s::text IS NOT NULL;
SELECT count(*) AS status_rows FROM windowagg._pipeline_status();
RESET ROLE;
SELECT name, status, watermark_ticks FROM windowagg.stat_pipelines WHERE name = 'v1';
-- a reader of the results sees the name and status, no more
SET ROLE wa_reader;
SELECT name, status, events_in, watermark_ticks, state_bytes, last_error
FROM windowagg.stat_pipelines ORDER BY 1;
SELECT count(*) AS live_windows FROM windowagg.live('v1') AS l(k int, window_start bigint, window_end bigint, n bigint);
SELECT name FROM windowagg.pipelines;
-- her temporary table named like the source shadows nothing in the owner's query
CREATE TEMP TABLE v2src (k int, t bigint);
SELECT count(*) AS live_windows FROM windowagg.live('v2') AS l(k int, window_start bigint, window_end bigint, n bigint);
DROP TABLE v2src;
-- nor do her lexer settings make the parser quote it back in a warning
SET standard_conforming_strings = off;
SET escape_string_warning = on;
SELECT count(*) AS live_windows FROM windowagg.live('v2') AS l(k int, window_start bigint, window_end bigint, n bigint);
RESET standard_conforming_strings;
RESET escape_string_warning;
RESET ROLE;
-- a query that no longer parses: the owner sees why, a reader not its text
ALTER TABLE victim.v2src RENAME COLUMN secret_flag TO renamed_flag;
SET ROLE wa_reader;
SELECT count(*) FROM windowagg.live('v2') AS l(k int, window_start bigint, window_end bigint, n bigint);
RESET ROLE;
SET ROLE wa_victim;
SELECT count(*) FROM windowagg.live('v2') AS l(k int, window_start bigint, window_end bigint, n bigint);
ALTER TABLE victim.v2src RENAME COLUMN renamed_flag TO secret_flag;
-- row-level security on the results: the reader's live windows cannot be filtered
ALTER TABLE victim.v1 ENABLE ROW LEVEL SECURITY;
RESET ROLE;
SET ROLE wa_reader;
SELECT count(*) FROM windowagg.live('v1') AS l(k int, window_start bigint, window_end bigint, n bigint);
RESET ROLE;
ALTER TABLE victim.v1 DISABLE ROW LEVEL SECURITY;
-- her pipeline over a table the victim let her read does not keep the
-- victim from dropping it (her pipeline stops instead)
SET ROLE wa_victim;
CREATE TABLE victim.shared (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
GRANT USAGE ON SCHEMA victim TO wa_mallory;
GRANT SELECT ON victim.shared TO wa_mallory;
SET ROLE wa_mallory;
SELECT windowagg.create_pipeline('m_squat', 'SELECT k, count(*) AS n FROM victim.shared GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'mallory.m_squat') IS NOT NULL AS created;
SET ROLE wa_victim;
DROP TABLE victim.shared;
REVOKE USAGE ON SCHEMA victim FROM wa_mallory;
RESET ROLE;
SELECT wait_for_status('m_squat', 'stopped');
SELECT status FROM windowagg.stat_pipelines WHERE name = 'm_squat';
-- with row_security off (as in pg_dump --clean scripts) a role's drops still work
SET ROLE wa_reader;
SET row_security = off;
CREATE TEMP TABLE scratch ();
DROP TABLE scratch;
RESET row_security;
RESET ROLE;
-- a table whose own pipeline reads it is kept, with the pipeline named
SET ROLE wa_victim;
DROP TABLE victim.vsrc;
RESET ROLE;
-- a monitor sees every pipeline's status and counters, not its errors
SET ROLE wa_watcher;
SELECT name, status, events_in IS NOT NULL AS counters, last_error
FROM windowagg.stat_pipelines ORDER BY 1;
SELECT count(*) AS status_rows FROM windowagg._pipeline_status();
RESET ROLE;
-- the owner sees everything about hers
SET ROLE wa_victim;
SELECT name, status, events_in, last_error FROM windowagg.stat_pipelines ORDER BY 1;
SELECT name, query FROM windowagg.pipelines ORDER BY 1;
RESET ROLE;
-- and so does a member of the owner role, who may control it too
CREATE ROLE wa_colleague IN ROLE wa_victim;
SET ROLE wa_colleague;
SELECT name FROM windowagg.pipelines ORDER BY 1;
SELECT windowagg.wait('v1');
RESET ROLE;
SET ROLE wa_victim;
SELECT windowagg.drop_pipeline(name, drop_tables => true) FROM windowagg.pipelines
WHERE name IN ('v2', 'v_late_ts') ORDER BY name;
SET ROLE wa_mallory;
SELECT windowagg.drop_pipeline(name, drop_tables => true) FROM windowagg.pipelines
WHERE name IN ('m_loop', 'm_squat') ORDER BY name;
RESET ROLE;

--
-- 6. Logical sources: a replication slot needs the REPLICATION attribute,
-- and decoded rows must not reveal what the owner could not SELECT.
--
SET ROLE wa_mallory;
CREATE TABLE mallory.lsrc (k int, t bigint, v int);
SELECT windowagg.create_pipeline('m_logical', 'SELECT k, count(*) AS n FROM mallory.lsrc GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], source => 'logical',
                                 result_table => 'mallory.m_logical');
RESET ROLE;
SELECT count(*) AS pipelines, (SELECT count(*) FROM pg_replication_slots) AS slots
FROM windowagg.pipelines WHERE name = 'm_logical';
ALTER ROLE wa_victim REPLICATION;
-- a table whose rows the owner may only partly read
CREATE TABLE public.lcols (k int, t bigint, secret text);
GRANT SELECT (k, t) ON public.lcols TO wa_victim;
SET ROLE wa_victim;
SELECT windowagg.create_pipeline('v_cols', 'SELECT k, count(*) AS n FROM public.lcols GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], source => 'logical',
                                 result_table => 'victim.v_cols');
-- row-level security that applies to the owner
CREATE TABLE victim.lsrc (k int, t bigint, v int);
ALTER TABLE victim.lsrc ENABLE ROW LEVEL SECURITY;
ALTER TABLE victim.lsrc FORCE ROW LEVEL SECURITY;
CREATE POLICY positive ON victim.lsrc USING (k > 0);
SELECT windowagg.create_pipeline('v_logical', 'SELECT k, count(*) AS n FROM victim.lsrc GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], source => 'logical',
                                 result_table => 'victim.v_logical');
-- not forced, the owner reads every row: accepted
ALTER TABLE victim.lsrc NO FORCE ROW LEVEL SECURITY;
SELECT windowagg.create_pipeline('v_logical', 'SELECT k, count(*) AS n FROM victim.lsrc GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], source => 'logical',
                                 result_table => 'victim.v_logical') IS NOT NULL AS created;
INSERT INTO victim.lsrc VALUES (0, 1, 1), (1, 2, 1);
SELECT windowagg.flush('v_logical');
SELECT k, n FROM victim.v_logical ORDER BY 1;
-- paused, its slot still holds WAL back, and stat_pipelines shows how much
SELECT windowagg.pause('v_logical');
INSERT INTO victim.lsrc SELECT 1, i, i FROM generate_series(1, 1000) i;
RESET ROLE;
DO $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN (SELECT status = 'paused' AND worker_pid IS NULL
                   FROM windowagg.stat_pipelines WHERE name = 'v_logical');
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
SET ROLE wa_victim;
SELECT status, retained_wal_bytes > 0 AS holds_wal FROM windowagg.stat_pipelines WHERE name = 'v_logical';
-- forced now: the running worker stops, and says why
SELECT windowagg.resume('v_logical');
SELECT windowagg.wait('v_logical');
ALTER TABLE victim.lsrc FORCE ROW LEVEL SECURITY;
RESET ROLE;
SELECT wait_for_status('v_logical', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'v_logical';
-- without REPLICATION any more, the next start stops too
ALTER TABLE victim.lsrc NO FORCE ROW LEVEL SECURITY;
ALTER ROLE wa_victim NOREPLICATION;
SET ROLE wa_victim;
SELECT windowagg.resume('v_logical');
RESET ROLE;
SELECT wait_for_status('v_logical', 'stopped', '%replication slots%');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'v_logical';
SET ROLE wa_victim;
SELECT windowagg.drop_pipeline('v_logical', drop_tables => true);
RESET ROLE;
SELECT count(*) AS slots_left FROM pg_replication_slots;

--
-- 7. A role cannot take every pipeline slot: windowagg.max_pipelines_per_role.
--
SET ROLE wa_mallory;
SELECT windowagg.drop_pipeline(name, drop_tables => true) FROM windowagg.pipelines ORDER BY name;
SELECT windowagg.create_pipeline('m_many_' || i, 'SELECT k, count(*) AS n FROM mallory.src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'mallory.m_many_' || i) IS NOT NULL AS created
FROM generate_series(1, 4) i;
SELECT windowagg.create_pipeline('m_many_5', 'SELECT k, count(*) AS n FROM mallory.src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'mallory.m_many_5');
SELECT windowagg.drop_pipeline(name, drop_tables => true) FROM windowagg.pipelines ORDER BY name;
RESET ROLE;

--
-- 8. live() reads the worker's memory only through the shape the worker
-- built it with: a column type changed in the reading transaction, or a
-- pipeline dropped and re-created under the same name, is no way in.
--
SET ROLE wa_victim;
INSERT INTO victim.vsrc (k, t, v) SELECT i % 2, i, i FROM generate_series(100, 150) i;
SELECT windowagg.wait('v1');
SELECT count(*) > 0 AS has_live_windows FROM victim.v1_live;
BEGIN;
ALTER TABLE victim.vsrc ALTER COLUMN k TYPE text;
SELECT * FROM windowagg.live('v1') AS l(k text, window_start bigint, window_end bigint, n bigint);
ROLLBACK;
BEGIN;
SELECT windowagg.drop_pipeline('v1');
SELECT windowagg.create_pipeline('v1', 'SELECT t::text AS k, count(*) AS n FROM victim.vsrc GROUP BY 1',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'victim.v1_again') IS NOT NULL AS created;
SELECT * FROM windowagg.live('v1') AS l(k text, window_start bigint, window_end bigint, n bigint);
ROLLBACK;
-- (the drop stopped the worker; the rollback starts it again)
SELECT windowagg.wait('v1');
SELECT count(*) > 0 AS still_live FROM victim.v1_live;
RESET ROLE;

--
-- 9. Shapes whose output per event is absurd are refused up front.
--
SELECT windowagg.create_pipeline('absurd', 'SELECT k, count(*) AS n FROM victim.vsrc GROUP BY k',
                                 't', ARRAY[windowagg.hopping(86400000000, 1)]);
SELECT count(*) FROM windowagg.aggregate('SELECT k, count(*) AS n FROM victim.vsrc GROUP BY k', 't',
                                         ARRAY[windowagg.hopping('1 day', '1 microsecond')])
    AS a(k int, window_start bigint, window_end bigint, n bigint, pane text, revision bigint);
SELECT count(*) FROM windowagg.explain(ARRAY[windowagg.hopping('1 day', '1 microsecond')]);
SELECT count(*) FROM windowagg.explain((SELECT array_agg(windowagg.tumbling(i)) FROM generate_series(1, 65) i));

--
-- 10. Every function of the extension, and who may execute it.  PUBLIC may
-- execute only those listed here, each with the reason it is safe.
--
CREATE TEMP TABLE public_functions (signature text PRIMARY KEY, reason text NOT NULL);
INSERT INTO public_functions VALUES
    ('windowagg._window(interval,interval,timestamp with time zone)', 'window constructor; tumbling and hopping call it as the invoker'),
    ('windowagg._window(bigint,bigint,bigint)', 'window constructor; tumbling and hopping call it as the invoker'),
    ('windowagg.tumbling(interval,timestamp with time zone)', 'window constructor'),
    ('windowagg.tumbling(bigint,bigint)', 'window constructor'),
    ('windowagg.tumbling(text,text)', 'window constructor'),
    ('windowagg.hopping(interval,interval,timestamp with time zone)', 'window constructor'),
    ('windowagg.hopping(bigint,bigint,bigint)', 'window constructor'),
    ('windowagg.hopping(text,text,text)', 'window constructor'),
    ('windowagg.session(interval)', 'window constructor'),
    ('windowagg.session(bigint)', 'window constructor'),
    ('windowagg.session(text)', 'window constructor'),
    ('windowagg.window_starts(timestamp with time zone,interval,interval,timestamp with time zone)', 'pure computation'),
    ('windowagg.window_starts(bigint,bigint,bigint,bigint)', 'pure computation'),
    ('windowagg.aggregate(text,text,windowagg."window"[],"any","any",text)', 'runs the query as the caller'),
    ('windowagg.dropped(text,text,windowagg."window"[],"any","any",text)', 'runs the query as the caller'),
    ('windowagg.explain(windowagg."window"[],text[])', 'pure computation'),
    ('windowagg.explain(text)', 'checks SELECT on the pipeline''s results'),
    ('windowagg.create_pipeline(text,text,text,windowagg."window"[],"any","any",text,text,interval,boolean,text,text,text,boolean)', 'the caller becomes the owner; checks the caller''s privileges'),
    ('windowagg.drop_pipeline(text,boolean)', 'checks ownership'),
    ('windowagg.pause(text)', 'checks ownership'),
    ('windowagg.resume(text)', 'checks ownership'),
    ('windowagg.wait(text,interval)', 'checks ownership'),
    ('windowagg.flush(text,interval)', 'checks ownership'),
    ('windowagg.live(text)', 'checks SELECT on the pipeline''s results'),
    ('windowagg._pipeline_status()', 'shows each caller what the caller may see (stat_pipelines)'),
    ('windowagg._ticks_to_timestamptz(numeric)', 'pure computation (stat_pipelines)'),
    ('windowagg.min(anyelement)', 'aggregate'), ('windowagg.max(anyelement)', 'aggregate'),
    ('windowagg.sum(double precision)', 'aggregate'), ('windowagg.sum(real)', 'aggregate'),
    ('windowagg.avg(double precision)', 'aggregate'), ('windowagg.avg(real)', 'aggregate'),
    ('windowagg.variance(double precision)', 'aggregate'), ('windowagg.variance(real)', 'aggregate'),
    ('windowagg.var_samp(double precision)', 'aggregate'), ('windowagg.var_samp(real)', 'aggregate'),
    ('windowagg.var_pop(double precision)', 'aggregate'), ('windowagg.var_pop(real)', 'aggregate'),
    ('windowagg.stddev(double precision)', 'aggregate'), ('windowagg.stddev(real)', 'aggregate'),
    ('windowagg.stddev_samp(double precision)', 'aggregate'), ('windowagg.stddev_samp(real)', 'aggregate'),
    ('windowagg.stddev_pop(double precision)', 'aggregate'), ('windowagg.stddev_pop(real)', 'aggregate');
CREATE TEMP VIEW extension_functions AS
SELECT p.oid::regprocedure::text AS signature,
       pg_catalog.has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_execute,
       p.prosecdef AS security_definer, p.proconfig AS settings
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'windowagg';
SELECT signature, public_may_execute, security_definer, settings
FROM extension_functions ORDER BY 1;
-- public without a reason: must be empty
SELECT signature FROM extension_functions f
WHERE public_may_execute AND NOT EXISTS (SELECT FROM public_functions l WHERE l.signature = f.signature);
-- the aggregates work for everyone, though their support functions are not PUBLIC
SET ROLE wa_reader;
SELECT windowagg.max(x) OVER (ROWS 2 PRECEDING), windowagg.sum(x::float8) OVER (ROWS 2 PRECEDING)
FROM generate_series(1, 4) x;
RESET ROLE;
-- every SECURITY DEFINER function pins its search_path
SELECT signature FROM extension_functions
WHERE security_definer AND NOT 'search_path=pg_catalog, pg_temp' = ANY (coalesce(settings, '{}'));

--
-- The end: nothing ran with borrowed rights, all along.
--
SELECT * FROM sec_breaches();
SELECT * FROM sec_breach_list();
CALL sec_next_step();

SET ROLE wa_victim;
SELECT windowagg.drop_pipeline(name, drop_tables => true) FROM windowagg.pipelines ORDER BY name;
RESET ROLE;
DROP SCHEMA mallory, mallory_casts CASCADE;
DROP SCHEMA victim CASCADE;
DROP TABLE sec_log, public.lcols;
DROP FUNCTION sec_breaches(), sec_breach_list();
DROP PROCEDURE sec_next_step();
DROP OWNED BY wa_reader, wa_watcher;
DROP ROLE wa_mallory, wa_colleague, wa_victim, wa_reader, wa_watcher;
