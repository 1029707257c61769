-- The owner's code that a pipeline runs under its state lock (support
-- functions, expressions over aggregates), and what another role can do
-- to it: plant a function live() would find, replace an aggregate, own a
-- domain whose constraint a restore would run.
SET client_min_messages = warning;
CREATE ROLE wo_owner;
CREATE ROLE wo_mallory;
CREATE SCHEMA wo AUTHORIZATION wo_owner;
GRANT CREATE ON SCHEMA public TO wo_mallory, wo_owner;
-- what mallory's functions record, and when
CREATE TABLE wo_trapped (what text, as_role text);
GRANT INSERT ON wo_trapped TO PUBLIC;
CREATE FUNCTION wo_trap(what text) RETURNS void LANGUAGE sql VOLATILE
    AS $$ INSERT INTO wo_trapped VALUES (what, current_user) $$;

-- 1. Code that catches an error (a PL/pgSQL EXCEPTION block) aborts a
-- subtransaction, which lets go of every LWLock the process holds: the
-- worker takes its state lock again and goes on, and live() too.  Each
-- window equals GROUP BY.
SET ROLE wo_owner;
CREATE FUNCTION wo.swallow() RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM 1 / 0;
EXCEPTION WHEN division_by_zero THEN
    NULL;
END $$;
CREATE FUNCTION wo.careful_final(int8) RETURNS int8 LANGUAGE plpgsql IMMUTABLE
    AS $$ BEGIN PERFORM wo.swallow(); RETURN $1 * 10; END $$;
CREATE FUNCTION wo.careful_expr(int8) RETURNS int8 LANGUAGE plpgsql IMMUTABLE
    AS $$ BEGIN PERFORM wo.swallow(); RETURN $1 + 1; END $$;
CREATE AGGREGATE wo.careful_sum(int8) (SFUNC = int8pl, STYPE = int8, INITCOND = '0',
                                       COMBINEFUNC = int8pl, FINALFUNC = wo.careful_final);
CREATE TABLE wo.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_careful',
  'SELECT k, wo.careful_sum(v) AS s, wo.careful_expr(count(*)) AS n FROM wo.src GROUP BY k', 't',
  ARRAY[windowagg.tumbling(10), windowagg.hopping(30, 10)], result_table => 'wo.careful') > 0
  AS created;
INSERT INTO wo.src (k, t, v) SELECT i % 3, i, i FROM generate_series(1, 100) i;
INSERT INTO wo.src (k, t, v) SELECT i % 3, i, i FROM generate_series(101, 230) i;
SELECT windowagg.wait('wo_careful');
SELECT status <> 'stopped' AS working, last_error FROM windowagg.stat_pipelines WHERE name = 'wo_careful';
-- the windows that fired and the open ones, against GROUP BY over each
-- window's rows
CREATE TEMP VIEW wo_want AS
SELECT s.k, w.ws, w.ws + w.size AS we, sum(s.v) * 10 AS s, count(*) + 1 AS n
FROM wo.src s, (VALUES (10), (30)) w0(size),
     LATERAL (SELECT g AS ws, w0.size FROM generate_series((s.t / 10) * 10 - w0.size + 10, (s.t / 10) * 10, 10) g) w
GROUP BY s.k, w.ws, w.size;
SELECT count(*) AS final_rows,
       count(*) FILTER (WHERE (c.k, c.window_start, c.window_end, c.s, c.n) NOT IN
                              (SELECT k, ws, we, s, n FROM wo_want)) AS differing
FROM wo.careful c;
-- a read whose lock the worker took while the owner's code had let it go
-- stops ("changed while they were read"): try again, as its hint says
CREATE FUNCTION wo.live_differing(OUT some_live bool, OUT differing bigint)
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 100 LOOP
        BEGIN
            SELECT count(*) > 0,
                   count(*) FILTER (WHERE (l.k, l.ws, l.we, l.s, l.n) NOT IN
                                          (SELECT k, ws, we, s, n FROM wo_want))
            INTO some_live, differing
            FROM windowagg.live('wo_careful') AS l(k int, ws bigint, we bigint, s int8, n int8);
            RETURN;
        EXCEPTION WHEN object_not_in_prerequisite_state THEN
            PERFORM pg_sleep(0.01);
        END;
    END LOOP;
END $$;
SELECT * FROM wo.live_differing();
RESET ROLE;

-- 2. A function another role creates later, which would match better
-- under the pipeline's search_path, is not run by live(): the reader's
-- parse passes the rule the worker's does.
SET ROLE wo_owner;
CREATE TABLE wo.src2 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SET search_path = "$user", public;
SELECT windowagg.create_pipeline('wo_sqrt', 'SELECT k, sqrt(sum(v)) AS r FROM wo.src2 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.sqrt_results') > 0 AS created;
RESET search_path;
INSERT INTO wo.src2 (k, t, v) VALUES (1, 1, 16), (1, 2, 9);
SELECT windowagg.wait('wo_sqrt');
SELECT k, r FROM windowagg.live('wo_sqrt') AS l(k int, ws bigint, we bigint, r float8);
RESET ROLE;
SET ROLE wo_mallory;
CREATE FUNCTION public.sqrt(bigint) RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM wo_trap('sqrt');
    RETURN 0;
END $$;
RESET ROLE;
SET ROLE wo_owner;
SELECT k, r FROM windowagg.live('wo_sqrt') AS l(k int, ws bigint, we bigint, r float8);
RESET ROLE;
SELECT * FROM wo_trapped;
DROP FUNCTION public.sqrt(bigint);
SELECT windowagg.drop_pipeline('wo_sqrt', drop_tables => true);

-- 3. An aggregate replaced with another state type: live() refuses the
-- states its worker wrote for the old one, and a restore refuses the
-- checkpoint, naming the state types.
SET ROLE wo_owner;
CREATE AGGREGATE wo.morph(int8) (SFUNC = int8pl, STYPE = int8, INITCOND = '0', COMBINEFUNC = int8pl);
CREATE TABLE wo.src3 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int8);
SELECT windowagg.create_pipeline('wo_morph', 'SELECT k, wo.morph(v) AS m FROM wo.src3 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.morph_results') > 0 AS created;
INSERT INTO wo.src3 (k, t, v) VALUES (1, 1, 2147483648), (1, 12, 1);
SELECT windowagg.wait('wo_morph');
SELECT k, m FROM windowagg.live('wo_morph') AS l(k int, ws bigint, we bigint, m int8);
CREATE FUNCTION wo.morph_step(text, int8) RETURNS text LANGUAGE sql IMMUTABLE
    AS $$ SELECT $1 || $2 $$;
CREATE FUNCTION wo.morph_combine(text, text) RETURNS text LANGUAGE sql IMMUTABLE
    AS $$ SELECT $1 || $2 $$;
CREATE FUNCTION wo.morph_final(text) RETURNS int8 LANGUAGE sql IMMUTABLE
    AS $$ SELECT length($1)::int8 $$;
CREATE OR REPLACE AGGREGATE wo.morph(int8) (SFUNC = wo.morph_step, STYPE = text, INITCOND = '',
                                            COMBINEFUNC = wo.morph_combine,
                                            FINALFUNC = wo.morph_final);
SELECT k, m FROM windowagg.live('wo_morph') AS l(k int, ws bigint, we bigint, m int8);
SELECT windowagg.pause('wo_morph');
SELECT wait_for_status('wo_morph', 'paused');
SELECT windowagg.resume('wo_morph');
SELECT wait_for_status('wo_morph', 'stopped', '%other aggregates%', seconds => 10);
SELECT regexp_replace(last_error, 'pipeline \d+', 'pipeline N')
FROM windowagg.stat_pipelines WHERE name = 'wo_morph';
SELECT windowagg.drop_pipeline('wo_morph', drop_tables => true);
RESET ROLE;

-- 4. Domains.  A restore reads keys, DISTINCT values and states back
-- through their receive functions, which would run every domain's check
-- constraint under the state lock: so another role's domain in the type
-- of anything a pipeline keeps is refused (its owner may add a
-- constraint at any time), and the owner's own are read back as their
-- base type (their values passed the checks when they were made).
SET ROLE wo_mallory;
CREATE FUNCTION public.wo_spy(int) RETURNS bool LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM wo_trap('domain check');
    RETURN true;
END $$;
CREATE DOMAIN public.wo_dom AS int;
CREATE TABLE public.wo_msrc (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint,
                             d public.wo_dom, a public.wo_dom[]);
GRANT SELECT ON public.wo_msrc TO wo_owner;
RESET ROLE;
SET ROLE wo_owner;
SELECT windowagg.create_pipeline('wo_dom', 'SELECT k, count(DISTINCT d) AS n FROM public.wo_msrc GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.dom_results');
SELECT windowagg.create_pipeline('wo_dom', 'SELECT d, count(*) AS n FROM public.wo_msrc GROUP BY d',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.dom_results');
SELECT windowagg.create_pipeline('wo_dom', 'SELECT k, count(DISTINCT a) AS n FROM public.wo_msrc GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.dom_results');
-- the owner's own domain (of a type whose keys a checkpoint holds as
-- its binary send form), whose check catches an error of its own
CREATE FUNCTION wo.own_check(timetz) RETURNS bool LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM wo.swallow();
    PERFORM wo_trap('own domain check');
    RETURN true;
END $$;
CREATE DOMAIN wo.own_dom AS timetz CHECK (wo.own_check(VALUE));
CREATE TABLE wo.src4 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k wo.own_dom, t bigint,
                      d wo.own_dom);
SELECT windowagg.create_pipeline('wo_dom', 'SELECT k, count(DISTINCT d) AS n FROM wo.src4 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.dom_results') > 0 AS created;
INSERT INTO wo.src4 (k, t, d)
SELECT '10:00+02', i, format('11:0%s+02', i % 4)::wo.own_dom FROM generate_series(1, 15) i;
SELECT windowagg.wait('wo_dom');
RESET ROLE;
CREATE TEMP TABLE wo_checks_before AS SELECT count(*) AS n FROM wo_trapped;
SET ROLE wo_owner;
SELECT windowagg.pause('wo_dom');
SELECT wait_for_status('wo_dom', 'paused');
SELECT windowagg.resume('wo_dom');
SELECT windowagg.wait('wo_dom');
SELECT status <> 'stopped' AS working, last_error FROM windowagg.stat_pipelines WHERE name = 'wo_dom';
SELECT k, n FROM windowagg.live('wo_dom') AS l(k wo.own_dom, ws bigint, we bigint, n int8);
RESET ROLE;
-- no check ran at the restore, and none of mallory's ever
SELECT (SELECT count(*) FROM wo_trapped) - n AS checks_at_restore,
       (SELECT count(*) FROM wo_trapped WHERE what = 'domain check') AS mallorys
FROM wo_checks_before;

-- 4b. A transition function made STRICT after CREATE AGGREGATE, without
-- an initial value, would adopt an input of another type as the state:
-- refused, as the executor refuses it.
SET ROLE wo_owner;
CREATE FUNCTION wo.keep_state(text, int8) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT $1';
CREATE FUNCTION wo.first_state(text, text) RETURNS text LANGUAGE sql IMMUTABLE
    AS 'SELECT coalesce($1, $2)';
CREATE AGGREGATE wo.peek(int8) (SFUNC = wo.keep_state, STYPE = text, COMBINEFUNC = wo.first_state);
ALTER FUNCTION wo.keep_state(text, int8) STRICT;
SELECT * FROM windowagg.aggregate('SELECT k, wo.peek(v) AS p FROM wo.src3 GROUP BY k', 't',
                                  ARRAY[windowagg.tumbling(10)])
    AS (k int, ws bigint, we bigint, p text, pane text, rev bigint);
SELECT windowagg.create_pipeline('wo_peek', 'SELECT k, wo.peek(v) AS p FROM wo.src3 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.peek_results');
RESET ROLE;

-- 5. An expression over aggregates runs with interrupts allowed, under
-- the lock too: a cancel stops a slow one at once, not when it ends.
SET ROLE wo_owner;
CREATE FUNCTION wo.slow(int8) RETURNS int8 LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM pg_sleep(30);
    RETURN $1;
END $$;
CREATE TABLE wo.src5 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('wo_slow', 'SELECT k, wo.slow(count(*)) AS n FROM wo.src5 GROUP BY k',
  't', ARRAY[windowagg.tumbling(1000000)], result_table => 'wo.slow_results') > 0 AS created;
INSERT INTO wo.src5 (k, t) VALUES (1, 1);
SELECT windowagg.wait('wo_slow');
CREATE TEMP TABLE wo_clock AS SELECT clock_timestamp() AS t0;
SET statement_timeout = '300ms';
SELECT * FROM windowagg.live('wo_slow') AS l(k int, ws bigint, we bigint, n int8);
RESET statement_timeout;
SELECT clock_timestamp() - t0 < interval '10 s' AS cancelled_at_once FROM wo_clock;
SELECT windowagg.drop_pipeline('wo_slow', drop_tables => true);
RESET ROLE;

-- 6. A row on which the query's own code raises an error (an argument,
-- a FILTER) is a dead letter with that error, and the rows behind it
-- are aggregated: each window equals GROUP BY over the other rows.
SET ROLE wo_owner;
CREATE TABLE wo.src6 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_poison',
  'SELECT k, sum(100 / v) AS s, count(*) FILTER (WHERE 10 / (v + 5) > 0) AS n FROM wo.src6 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.poison_results') > 0 AS created;
-- v = 0 fails the argument, v = -5 the FILTER; batches of uneven sizes
INSERT INTO wo.src6 (k, t, v) SELECT i % 3, i, CASE WHEN i % 17 = 0 THEN 0 ELSE i END
FROM generate_series(1, 40) i;
INSERT INTO wo.src6 (k, t, v) VALUES (1, 41, -5);
INSERT INTO wo.src6 (k, t, v) SELECT i % 3, i, CASE WHEN i % 23 = 0 THEN -5 ELSE i END
FROM generate_series(42, 300) i;
INSERT INTO wo.src6 (k, t, v) VALUES (2, 301, 0), (2, 302, 0), (2, 303, 7);
SELECT windowagg.flush('wo_poison');
SELECT status <> 'stopped' AS working FROM windowagg.stat_pipelines WHERE name = 'wo_poison';
SELECT count(*) AS windows,
       count(*) FILTER (WHERE (r.k, r.window_start, r.s, r.n) NOT IN
         (SELECT k, t / 10 * 10, sum(100 / v), count(*) FILTER (WHERE 10 / (v + 5) > 0)
          FROM wo.src6 WHERE v NOT IN (0, -5) GROUP BY k, t / 10)) AS differing,
       (SELECT count(*) FROM (SELECT k, t / 10 FROM wo.src6 WHERE v NOT IN (0, -5)
                              GROUP BY 1, 2) w) AS want_windows
FROM wo.poison_results r;
-- the dead letters are exactly the failing rows
SELECT (SELECT array_agg(id ORDER BY id) FROM wo.src6 WHERE v IN (0, -5)) =
       (SELECT array_agg(arrival ORDER BY arrival) FROM wo.poison_results_dead_letters)
       AS exactly_the_poison;
SELECT reason, count(*), bool_and(event_time IS NULL) AS no_event_time,
       bool_and((source_row ->> 'v')::int IN (0, -5)) AS rows_kept
FROM wo.poison_results_dead_letters GROUP BY reason;
RESET ROLE;

-- 7. An error no row can cause is never blamed on one: with EXECUTE on a
-- function of its query revoked, the pipeline stops for a user, and no
-- row becomes a dead letter.
SET ROLE wo_owner;
CREATE FUNCTION wo.tenth(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 / 10';
CREATE TABLE wo.src7 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_revoked', 'SELECT k, sum(wo.tenth(v)) AS s FROM wo.src7 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.revoked_results') > 0 AS created;
INSERT INTO wo.src7 (k, t, v) VALUES (1, 1, 10);
SELECT windowagg.wait('wo_revoked');
REVOKE EXECUTE ON FUNCTION wo.tenth(int) FROM PUBLIC, wo_owner;
INSERT INTO wo.src7 (k, t, v) SELECT 1, i, i FROM generate_series(2, 20) i;
SELECT wait_for_status('wo_revoked', 'stopped', '%permission denied%', seconds => 10);
SELECT count(*) AS dead_letters FROM wo.revoked_results_dead_letters;
RESET ROLE;

SELECT windowagg.drop_pipeline(name, drop_tables => true)
FROM (VALUES ('wo_careful'), ('wo_dom'), ('wo_poison'), ('wo_revoked')) p(name);

-- 8. After a third review.
-- 8a. A function of the query dropped and created again with another
-- result type: the worker's kept statements would return rows of other
-- types than it decodes; the pipeline stops instead.
SET ROLE wo_owner;
CREATE FUNCTION wo.kf(int) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'key ' || $1 $$;
CREATE TABLE wo.src8 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_retype', 'SELECT wo.kf(k) AS kk, count(*) AS n FROM wo.src8 GROUP BY 1',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.retype_results') > 0 AS created;
INSERT INTO wo.src8 (k, t) VALUES (1, 1);
SELECT windowagg.wait('wo_retype');
BEGIN;
DROP FUNCTION wo.kf(int);
CREATE FUNCTION wo.kf(int) RETURNS int8 LANGUAGE sql IMMUTABLE AS 'SELECT 4096::int8';
COMMIT;
INSERT INTO wo.src8 (k, t) VALUES (1, 2);
SELECT wait_for_status('wo_retype', 'stopped', '%other types%', seconds => 10);
SELECT windowagg.drop_pipeline('wo_retype', drop_tables => true);

-- 8b. A query that fails on the rows it read before, too, fails for a
-- reason of its own (here a table its function reads): no row is blamed,
-- and once the reason is gone every row is aggregated.
CREATE TABLE wo.rates (d int);
INSERT INTO wo.rates VALUES (1);
CREATE FUNCTION wo.scale(int) RETURNS int LANGUAGE sql STABLE
    AS 'SELECT $1 / (SELECT d FROM wo.rates)';
CREATE TABLE wo.src9 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_rates', 'SELECT k, sum(wo.scale(v)) AS s FROM wo.src9 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.rates_results') > 0 AS created;
INSERT INTO wo.src9 (k, t, v) SELECT 1, i, i FROM generate_series(1, 5) i;
SELECT windowagg.wait('wo_rates');
UPDATE wo.rates SET d = 0;
INSERT INTO wo.src9 (k, t, v) SELECT 1, i, i FROM generate_series(6, 25) i;
SELECT wait_for_status('wo_rates', 'failed', '%division by zero%', seconds => 10);
SELECT count(*) AS dead_letters FROM wo.rates_results_dead_letters;
UPDATE wo.rates SET d = 1;
SELECT wait_for_status('wo_rates', 'running', seconds => 30);
SELECT windowagg.flush('wo_rates');
SELECT count(*) AS windows,
       count(*) FILTER (WHERE (r.window_start, r.s) NOT IN
                        (SELECT t / 10 * 10, sum(v) FROM wo.src9 GROUP BY 1)) AS differing
FROM wo.rates_results r;
SELECT count(*) AS dead_letters FROM wo.rates_results_dead_letters;
SELECT windowagg.drop_pipeline('wo_rates', drop_tables => true);

-- 8c. A volatile function's error is isolated too: the rows' numbers
-- come from the table, not from the query's expressions.
CREATE FUNCTION wo.vinv(int) RETURNS int LANGUAGE plpgsql VOLATILE
    AS $$ BEGIN RETURN 100 / $1; END $$;
CREATE TABLE wo.src10 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_volatile', 'SELECT k, sum(wo.vinv(v)) AS s FROM wo.src10 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.volatile_results') > 0 AS created;
INSERT INTO wo.src10 (k, t, v) SELECT 1, i, CASE WHEN i IN (7, 8, 30) THEN 0 ELSE i END
FROM generate_series(1, 40) i;
SELECT windowagg.flush('wo_volatile');
SELECT count(*) AS windows,
       count(*) FILTER (WHERE (r.window_start, r.s) NOT IN
                        (SELECT t / 10 * 10, sum(100 / v) FROM wo.src10 WHERE v <> 0 GROUP BY 1)) AS differing
FROM wo.volatile_results r;
SELECT array_agg(arrival ORDER BY arrival) AS dead_letters FROM wo.volatile_results_dead_letters;
SELECT windowagg.drop_pipeline('wo_volatile', drop_tables => true);
RESET ROLE;

-- 8d. Row-level security on another role's source runs that role's
-- policies as the pipeline's owner: refused, also when enabled later.
SET ROLE wo_mallory;
CREATE TABLE public.wo_rls (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
GRANT SELECT ON public.wo_rls TO wo_owner;
CREATE FUNCTION public.wo_policy_spy() RETURNS bool LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM wo_trap('policy');
    RETURN true;
END $$;
RESET ROLE;
SET ROLE wo_owner;
SELECT windowagg.create_pipeline('wo_rls', 'SELECT k, count(*) AS n FROM public.wo_rls GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.rls_results') > 0 AS created;
RESET ROLE;
SET ROLE wo_mallory;
ALTER TABLE public.wo_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY spying ON public.wo_rls USING (public.wo_policy_spy());
INSERT INTO public.wo_rls (k, t) VALUES (1, 1);
RESET ROLE;
SELECT wait_for_status('wo_rls', 'stopped', '%row-level security%', seconds => 10);
SELECT regexp_replace(last_error, '\d+', 'N', 'g') FROM windowagg.stat_pipelines WHERE name = 'wo_rls';
SELECT count(*) AS policy_runs_as_owner FROM wo_trapped WHERE what = 'policy' AND as_role = 'wo_owner';
SET ROLE wo_owner;
SELECT windowagg.create_pipeline('wo_rls2', 'SELECT k, count(*) AS n FROM public.wo_rls GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.rls2_results');
SELECT windowagg.drop_pipeline('wo_rls', drop_tables => true);
RESET ROLE;

-- 8e. A composite type of another role's, whose fields it may change
-- (ALTER TYPE) under the states a pipeline keeps: refused.
SET ROLE wo_mallory;
CREATE TYPE public.wo_pair AS (a int8, b int8);
RESET ROLE;
SET ROLE wo_owner;
CREATE FUNCTION wo.pair_step(public.wo_pair, int8) RETURNS public.wo_pair LANGUAGE sql IMMUTABLE
    AS 'SELECT ROW(coalesce(($1).a, 0) + 1, coalesce(($1).b, 0) + $2)::public.wo_pair';
CREATE FUNCTION wo.pair_combine(public.wo_pair, public.wo_pair) RETURNS public.wo_pair
    LANGUAGE sql IMMUTABLE AS 'SELECT ROW(($1).a + ($2).a, ($1).b + ($2).b)::public.wo_pair';
CREATE AGGREGATE wo.pairs(int8) (SFUNC = wo.pair_step, STYPE = public.wo_pair,
                                 COMBINEFUNC = wo.pair_combine);
SELECT windowagg.create_pipeline('wo_pairs', 'SELECT k, wo.pairs(v) AS p FROM wo.src10 GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.pairs_results');
RESET ROLE;

-- 9. After a fourth review.
-- 9a. Rows blamed before are no evidence that the query works: poison
-- rows one per epoch, each after the other, are each a dead letter, and
-- the good row behind them is aggregated.
SET ROLE wo_owner;
CREATE TABLE wo.src11 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('wo_streak', 'SELECT k, sum(100 / v) AS s FROM wo.src11 GROUP BY k',
  't', ARRAY[windowagg.tumbling(100)], result_table => 'wo.streak_results') > 0 AS created;
INSERT INTO wo.src11 (k, t, v) VALUES (1, 1, 1), (1, 2, 2);
SELECT windowagg.wait('wo_streak');
CREATE PROCEDURE wo.one_per_epoch(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. n LOOP
        INSERT INTO wo.src11 (k, t, v) VALUES (1, 2 + i, 0);
        COMMIT;
        PERFORM windowagg.wait('wo_streak');
    END LOOP;
END $$;
CALL wo.one_per_epoch(12);
INSERT INTO wo.src11 (k, t, v) VALUES (1, 50, 4);
SELECT windowagg.flush('wo_streak');
SELECT k, window_start, s FROM wo.streak_results;
SELECT count(*) AS dead_letters FROM wo.streak_results_dead_letters;
SELECT windowagg.drop_pipeline('wo_streak', drop_tables => true);

-- 9b. A source read with ONLY: the rows' numbers come from the parent
-- alone, not its children.
CREATE TABLE wo.parent (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
CREATE TABLE wo.child () INHERITS (wo.parent);
SELECT windowagg.create_pipeline('wo_only', 'SELECT k, sum(100 / v) AS s FROM ONLY wo.parent GROUP BY k',
  't', ARRAY[windowagg.tumbling(100)], result_table => 'wo.only_results') > 0 AS created;
INSERT INTO wo.parent (k, t, v) VALUES (1, 1, 1);
INSERT INTO wo.child (id, k, t, v)
SELECT nextval(pg_get_serial_sequence('wo.parent', 'id')), 1, i, 0 FROM generate_series(2, 11) i;
INSERT INTO wo.parent (k, t, v) VALUES (1, 12, 0), (1, 13, 5), (1, 14, 0), (1, 15, 10);
SELECT windowagg.flush('wo_only');
SELECT k, window_start, s FROM wo.only_results;
SELECT array_agg(arrival ORDER BY arrival) = ARRAY(SELECT id FROM ONLY wo.parent WHERE v = 0 ORDER BY id)
       AS dead_letters_exactly_the_poison
FROM wo.only_results_dead_letters;
SELECT windowagg.drop_pipeline('wo_only', drop_tables => true);

-- 9c. The policies of the owner's own table, forced on the owner, may not
-- call another role's function.
SET ROLE wo_mallory;
CREATE FUNCTION public.wo_policy_ok() RETURNS bool LANGUAGE sql STABLE AS 'SELECT true';
RESET ROLE;
SET ROLE wo_owner;
CREATE TABLE wo.forced (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
ALTER TABLE wo.forced ENABLE ROW LEVEL SECURITY;
ALTER TABLE wo.forced FORCE ROW LEVEL SECURITY;
CREATE POLICY through_mallory ON wo.forced USING (public.wo_policy_ok());
SELECT windowagg.create_pipeline('wo_forced', 'SELECT k, count(*) AS n FROM wo.forced GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.forced_results');
-- 9d. So may those of a table its subquery reads.
CREATE TABLE wo.src12 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('wo_sublink',
  'SELECT k, count(*) AS n FROM wo.src12 WHERE k IN (SELECT k FROM wo.forced) GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.sublink_results');
SELECT windowagg.create_pipeline('wo_sublink',
  'SELECT k, count(*) AS n FROM wo.src12 WHERE k IN (SELECT k FROM public.wo_rls) GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], result_table => 'wo.sublink_results');
RESET ROLE;
DROP SCHEMA wo CASCADE;
DROP FUNCTION public.wo_policy_ok();
DROP TABLE wo_trapped, public.wo_msrc, public.wo_rls;
DROP FUNCTION wo_trap(text), public.wo_policy_spy();
DROP TYPE public.wo_pair;
DROP DOMAIN public.wo_dom;
DROP FUNCTION public.wo_spy(int);
REVOKE CREATE ON SCHEMA public FROM wo_mallory, wo_owner;
DROP OWNED BY wo_owner, wo_mallory;
DROP ROLE wo_owner, wo_mallory;
