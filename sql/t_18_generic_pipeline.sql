-- Any aggregate with a combine function in a pipeline: the states live in
-- the pipeline's shared memory, go through checkpoints (a pause and a
-- resume restore them), are read by live(), and each window's final row
-- equals plain GROUP BY over the rows the window accepted, as the
-- PL/pgSQL replay ref_accept (t_00_setup) decides them.  Rows arrive in
-- uneven batches, out of order, late and too late.
SET client_min_messages = warning;

-- every 19th event is pushed back by up to 300 ticks: late, partly or
-- wholly too late for bound 20 and lateness 60
SELECT make_events('ev_gp', 3000, 5, 2, 15, 19, 300, 0.37);
CREATE TABLE gp_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int NOT NULL,
                     kt text, t bigint NOT NULL, v int, f float8);

-- a user's aggregate with an array state, and one with an internal state
-- and serial functions (numeric's own, wrapped)
CREATE FUNCTION gp_sq_step(int8[], int8) RETURNS int8[]
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT ARRAY[$1[1] + 1, $1[2] + $2 * $2] $$;
CREATE FUNCTION gp_sq_combine(int8[], int8[]) RETURNS int8[]
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT ARRAY[$1[1] + $2[1], $1[2] + $2[2]] $$;
CREATE FUNCTION gp_sq_final(int8[]) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT $1[1] || ' squares sum to ' || $1[2] $$;
CREATE AGGREGATE gp_sumsq(int8) (SFUNC = gp_sq_step, STYPE = int8[], INITCOND = '{0,0}',
                                 COMBINEFUNC = gp_sq_combine, FINALFUNC = gp_sq_final);
CREATE AGGREGATE gp_numsum(numeric) (SFUNC = numeric_avg_accum, STYPE = internal,
                                     COMBINEFUNC = numeric_avg_combine,
                                     SERIALFUNC = numeric_avg_serialize,
                                     DESERIALFUNC = numeric_avg_deserialize,
                                     FINALFUNC = numeric_sum);

-- The result columns, as the pipeline's query and GROUP BY compute them;
-- floats are compared to 9 digits (slices merge in another order than
-- GROUP BY adds rows), everything else exactly.
CREATE TABLE gp_aggs (i int, agg text, float bool);
INSERT INTO gp_aggs VALUES
  (1, 'sum(v::numeric / 7)', false),
  (2, 'avg(v::numeric / 7)', false),
  (3, 'count(*) FILTER (WHERE f > 0)', false),
  (4, 'bool_and(v > -900)', false),
  (5, 'bit_or(v + 1000)', false),
  (6, 'min(kt || v)', false),
  (7, 'max(v::numeric / 3)', false),
  (8, 'gp_sumsq(v)', false),
  (9, 'gp_numsum(v::numeric / 9)', false),
  (10, 'count(DISTINCT v % 40)', false),
  (11, 'sum(DISTINCT v::numeric / 7)', false),
  (12, 'avg(DISTINCT f)', true),
  (13, 'sum(v::numeric / 7) / count(*)', false),
  (14, 'corr(f, v)', true),
  (15, 'count(*)', false),
  (16, 'bool_or(v > 990)', false),
  (17, 'bit_and(v + 1000)', false),
  (18, 'sum(v::int8 * 1000000000000)', false),
  -- numeric(p, s) with p <= 18: the fixed-point kernels, NaN included
  (19, 'sum((v / 7.0)::numeric(12,2))', false),
  (20, 'avg((CASE WHEN v % 89 = 3 THEN ''NaN'' ELSE (v / 3.0)::text END)::numeric(18,4))', false);
CREATE FUNCTION gp_cols() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s AS a%s', agg, i), ', ' ORDER BY i) FROM gp_aggs $$;
CREATE FUNCTION gp_compared(prefix text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(CASE WHEN float THEN format('round(%sa%s::numeric, 9) AS a%s', prefix, i, i)
                           ELSE format('%sa%s AS a%s', prefix, i, i) END, ', ' ORDER BY i)
    FROM gp_aggs $$;

-- GROUP BY over the rows each window accepted, of the first n events
CREATE FUNCTION gp_want(n int, sizes numeric[], slides numeric[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DROP TABLE IF EXISTS gp_prefix, gp_want_t;
    CREATE TABLE gp_prefix AS SELECT * FROM ev_gp WHERE id <= n;
    EXECUTE format($f$
        CREATE TABLE gp_want_t AS
        SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we, %s
        FROM ref_accept('gp_prefix', %L, %L, '{0,0}', 20, 60) a JOIN gp_prefix e USING (id)
        WHERE a.spec IS NOT NULL
        GROUP BY e.k, a.spec, a.ws, a.we$f$,
        gp_cols(), sizes, slides);
END $$;

-- rows that differ between the result table (or live()) and the reference
CREATE FUNCTION gp_differ(got text, only_got_windows bool)
RETURNS TABLE (compared bigint, differing bigint) LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    EXECUTE format('CREATE TEMP VIEW gp_got AS SELECT k, window_start AS ws, window_end AS we, %s FROM %s',
                   gp_compared(''), got);
    EXECUTE format('CREATE TEMP VIEW gp_ref AS SELECT w.k, w.ws, w.we, %s FROM gp_want_t w %s',
                   gp_compared('w.'),
                   CASE WHEN only_got_windows
                        THEN 'JOIN gp_got g ON (g.k, g.ws, g.we) = (w.k, w.ws, w.we)' ELSE '' END);
    FOR r IN
        SELECT * FROM (SELECT * FROM gp_got EXCEPT SELECT * FROM gp_ref) d
        UNION ALL
        SELECT * FROM (SELECT * FROM gp_ref EXCEPT SELECT * FROM gp_got) d
        ORDER BY 1, 2, 3 LIMIT 5
    LOOP
        RAISE WARNING 'differs: %', r;
    END LOOP;
    compared := (SELECT count(*) FROM gp_got);
    differing := (SELECT count(*) FROM (SELECT * FROM gp_got EXCEPT SELECT * FROM gp_ref
                                        UNION ALL
                                        SELECT * FROM gp_ref EXCEPT SELECT * FROM gp_got) d);
    DROP VIEW gp_ref;
    DROP VIEW gp_got;
    RETURN NEXT;
END $$;

-- Feed events [lo, hi] in batches of uneven sizes, each its own
-- transaction, in arrival (id) order, waiting for the pipeline after
-- every third.
CREATE FUNCTION gp_batches(pipeline text, lo int, hi int)
RETURNS TABLE (stmt text) LANGUAGE sql AS $$
    WITH RECURSIVE b(s, e, n) AS (
        SELECT lo, lo - 1, 0
        UNION ALL
        SELECT e + 1, least(hi, e + 1 + (ARRAY[0, 6, 149, 2, 411, 37, 0, 88])[n % 8 + 1]), n + 1
        FROM b WHERE e < hi)
    SELECT stmt FROM (
        SELECT n, 0 AS o,
               format('INSERT INTO gp_src (k, kt, t, v, f) SELECT k, kt, t, v, f FROM ev_gp WHERE id BETWEEN %s AND %s ORDER BY id', s, e)
        FROM b WHERE n > 0
        UNION ALL
        SELECT n, 1, format('DO $d$ BEGIN PERFORM windowagg.wait(%L); END $d$', pipeline)
        FROM b WHERE n > 0 AND n % 3 = 0) x(n, o, stmt)
    ORDER BY n, o
$$;

-- 1. Tumbling windows of 20, and hopping 60/20 over the same slices
-- (two-stack), in one pipeline.
SELECT windowagg.create_pipeline('gp',
  format('SELECT k, %s FROM gp_src GROUP BY k', gp_cols()), 't',
  ARRAY[windowagg.tumbling(20), windowagg.hopping(60, 20)], bound => 20, lateness => 60) > 0
  AS created;
SELECT stmt FROM gp_batches('gp', 1, 1400) \gexec
SELECT windowagg.wait('gp');

-- live(): every open window as GROUP BY over what it accepted so far
SELECT gp_want(1400, '{20,60}', '{20,20}');
SELECT compared > 0 AS some_live, differing
FROM gp_differ('windowagg.live(''gp'') AS l(k int, window_start bigint, window_end bigint, '
               || (SELECT string_agg(format('a%s %s', i,
                     CASE WHEN i IN (1, 2, 7, 9, 11, 13, 18, 19, 20) THEN 'numeric'
                          WHEN i IN (3, 10, 15) THEN 'bigint'
                          WHEN i IN (4, 16) THEN 'boolean' WHEN i IN (5, 17) THEN 'integer'
                          WHEN i IN (6, 8) THEN 'text' ELSE 'double precision' END), ', ' ORDER BY i)
                   FROM gp_aggs) || ')', true);

-- a pause and a resume: the worker restores its states from the checkpoint
SELECT windowagg.pause('gp');
SELECT wait_for_status('gp', 'paused');
SELECT windowagg.resume('gp');
SELECT stmt FROM gp_batches('gp', 1401, 3000) \gexec
SELECT windowagg.flush('gp');

SELECT gp_want(3000, '{20,60}', '{20,20}');
SELECT compared > 1000 AS many_windows, differing FROM gp_differ('gp', false);
-- late panes were written, and late rows went to the dead letters
SELECT count(*) FILTER (WHERE pane = 'late') > 0 AS late_panes,
       (SELECT count(*) FROM gp_dead_letters) > 0 AS dead_letters
FROM gp;
-- the checkpoint names its aggregates
SELECT position('pg_catalog.sum(numeric)' IN convert_from(substr(c.data, 14, 200), 'SQL_ASCII')) > 0
       AS names_aggregates
FROM windowagg.checkpoints c JOIN windowagg.pipelines p ON p.id = c.pipeline
WHERE p.name = 'gp' ORDER BY c.seq DESC LIMIT 1;

-- 2. What the pipeline computes with cannot be dropped while it exists:
-- the aggregate (its result table depends on it), nor, with CASCADE, the
-- result table
DROP AGGREGATE gp_sumsq(int8);
DROP AGGREGATE gp_numsum(numeric) CASCADE;
DROP FUNCTION gp_sq_final(int8[]);

-- 3. A checkpoint written for other aggregates is refused, naming both
-- lists; put back, it restores
SELECT windowagg.pause('gp');
SELECT wait_for_status('gp', 'paused');
CREATE TABLE gp_saved AS SELECT * FROM windowagg.checkpoints
WHERE pipeline = (SELECT id FROM windowagg.pipelines WHERE name = 'gp');
UPDATE windowagg.checkpoints
SET data = overlay(data PLACING convert_to('pg_catalog.max(numeric)', 'SQL_ASCII')
                   FROM position(convert_to('pg_catalog.sum(numeric)', 'SQL_ASCII') IN data))
WHERE pipeline = (SELECT id FROM windowagg.pipelines WHERE name = 'gp');
SELECT windowagg.resume('gp');
SELECT wait_for_status('gp', 'stopped', '%other aggregates%', seconds => 10);
SELECT regexp_replace(last_error, 'pipeline \d+', 'pipeline N')
FROM windowagg.stat_pipelines WHERE name = 'gp';
DELETE FROM windowagg.checkpoints
WHERE pipeline = (SELECT id FROM windowagg.pipelines WHERE name = 'gp');
INSERT INTO windowagg.checkpoints SELECT * FROM gp_saved;
SELECT windowagg.resume('gp');
SELECT windowagg.wait('gp');
SELECT status <> 'stopped' AS restored FROM windowagg.stat_pipelines WHERE name = 'gp';

-- 4. A reader's live() runs the owner's support functions as the owner:
-- this final function reads a table that only the owner may read
CREATE TABLE gp_secret (n int);
INSERT INTO gp_secret VALUES (1000);
CREATE FUNCTION gp_plus_secret(int8) RETURNS int8
    LANGUAGE sql STABLE AS $$ SELECT $1 + (SELECT n FROM gp_secret) $$;
CREATE AGGREGATE gp_secret_sum(int8) (SFUNC = int8pl, STYPE = int8, INITCOND = '0',
                                      COMBINEFUNC = int8pl, FINALFUNC = gp_plus_secret);
CREATE TABLE gps_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint, v int);
SELECT windowagg.create_pipeline('gps',
  'SELECT k, gp_secret_sum(v) AS s FROM gps_src GROUP BY k', 't',
  ARRAY[windowagg.tumbling(10)]) > 0 AS created;
INSERT INTO gps_src (k, t, v) VALUES (1, 1, 5), (1, 2, 6), (2, 3, 7);
SELECT windowagg.wait('gps');
CREATE ROLE gp_reader;
GRANT SELECT ON gps TO gp_reader;
SET ROLE gp_reader;
SELECT * FROM gp_secret;
SELECT k, s FROM windowagg.live('gps') AS (k int, window_start bigint, window_end bigint, s int8)
ORDER BY k;
RESET ROLE;

-- 5. Aggregates whose states a checkpoint cannot hold are refused
CREATE FUNCTION gp_last_acl(aclitem, aclitem) RETURNS aclitem
    LANGUAGE sql IMMUTABLE STRICT AS 'SELECT $2';
CREATE AGGREGATE gp_acl(aclitem) (SFUNC = gp_last_acl, STYPE = aclitem,
                                  COMBINEFUNC = gp_last_acl);
SELECT windowagg.create_pipeline('gp_bad',
  'SELECT k, gp_acl(makeaclitem(10, 10, ''SELECT'', false)) AS a FROM gps_src GROUP BY k', 't',
  ARRAY[windowagg.tumbling(10)]);

-- 6. Dropped with its tables kept, the pipeline no longer holds the
-- aggregates back
SELECT windowagg.drop_pipeline('gp');
SELECT windowagg.drop_pipeline('gps', drop_tables => true);
DROP AGGREGATE gp_sumsq(int8);
DROP AGGREGATE gp_numsum(numeric);
DROP AGGREGATE gp_secret_sum(int8);
DROP AGGREGATE gp_acl(aclitem);
DROP FUNCTION gp_sq_step(int8[], int8), gp_sq_combine(int8[], int8[]), gp_sq_final(int8[]),
              gp_plus_secret(int8), gp_last_acl(aclitem, aclitem);
DROP TABLE gp, gp_dead_letters, gp_src, gps_src, gp_saved, gp_secret, gp_aggs, gp_prefix,
           gp_want_t, ev_gp;
DROP FUNCTION gp_cols(), gp_compared(text), gp_want(int, numeric[], numeric[]),
              gp_differ(text, bool), gp_batches(text, int, int);
DROP OWNED BY gp_reader;
DROP ROLE gp_reader;
