-- Any aggregate with a combine function, through its own support
-- functions: each window's final value equals plain GROUP BY over the rows
-- the window accepted, as the PL/pgSQL replay ref_accept (t_00_setup)
-- decides them, with late and too-late rows, several windows, hopping
-- windows (two-stack), and the coverage plan.
SET client_min_messages = warning;

-- every 23rd event is pushed back by up to 400 ticks: late, partly or
-- wholly too late for bound 20 and lateness 60
SELECT make_events('ev_g', 5000, 4, 2, 15, 23, 400, 0.16);

-- a user's aggregate: count and sum of squares in an array state, with a
-- combine function; and a polymorphic one
CREATE FUNCTION g_sq_step(int8[], int8) RETURNS int8[]
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT ARRAY[$1[1] + 1, $1[2] + $2 * $2] $$;
CREATE FUNCTION g_sq_combine(int8[], int8[]) RETURNS int8[]
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT ARRAY[$1[1] + $2[1], $1[2] + $2[2]] $$;
CREATE FUNCTION g_sq_final(int8[]) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT $1[1] || ' squares sum to ' || $1[2] $$;
CREATE AGGREGATE g_sumsq(int8) (SFUNC = g_sq_step, STYPE = int8[], INITCOND = '{0,0}',
                                COMBINEFUNC = g_sq_combine, FINALFUNC = g_sq_final);
-- strict functions: a state made NULL stays NULL (not the next input);
-- and a final function with FINALFUNC_EXTRA (never strict)
-- (g_capsum: a sum of positive inputs that turns NULL past 1000, whatever
-- the order of its rows)
CREATE FUNCTION g_cap_step(int8, int8) RETURNS int8
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT CASE WHEN $1 + $2 > 1000 THEN NULL ELSE $1 + $2 END $$;
CREATE AGGREGATE g_capsum(int8) (SFUNC = g_cap_step, STYPE = int8, COMBINEFUNC = g_cap_step);
CREATE FUNCTION g_sq_extra(int8[], int8) RETURNS int8
    LANGUAGE sql IMMUTABLE AS $$ SELECT $1[2] + coalesce($2, 7) $$;
CREATE AGGREGATE g_extra(int8) (SFUNC = g_sq_step, STYPE = int8[], INITCOND = '{0,0}',
                                COMBINEFUNC = g_sq_combine, FINALFUNC = g_sq_extra,
                                FINALFUNC_EXTRA);
CREATE FUNCTION g_larger(anyelement, anyelement) RETURNS anyelement
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT CASE WHEN $1 > $2 THEN $1 ELSE $2 END $$;
CREATE AGGREGATE g_largest(anyelement) (SFUNC = g_larger, STYPE = anyelement,
                                        COMBINEFUNC = g_larger);
-- a final function that says it may change its state gets a copy of it
-- (a window's state is finalized again for each late pane)
CREATE AGGREGATE g_sumsq_rw(int8) (SFUNC = g_sq_step, STYPE = int8[], INITCOND = '{0,0}',
                                   COMBINEFUNC = g_sq_combine, FINALFUNC = g_sq_final,
                                   FINALFUNC_MODIFY = READ_WRITE);
-- an internal state, kept through its serialization functions
CREATE AGGREGATE g_numsum(numeric) (SFUNC = numeric_avg_accum, STYPE = internal,
                                    COMBINEFUNC = numeric_avg_combine,
                                    SERIALFUNC = numeric_avg_serialize,
                                    DESERIALFUNC = numeric_avg_deserialize,
                                    FINALFUNC = numeric_sum);

-- The aggregates, as the query gives them to windowagg and to GROUP BY;
-- float results are compared to 9 digits (slices merge in another order
-- than GROUP BY adds rows), everything else exactly.
CREATE TABLE g_aggs (agg text, type text);
INSERT INTO g_aggs VALUES
  ('sum(v::numeric / 7)', 'numeric'),
  ('avg(v::numeric / 7)', 'numeric'),
  ('sum(v::int8 * 1000000000000)', 'numeric'),
  ('avg(v::int8 * 1000000000000)', 'numeric'),
  -- int8 inputs near the top of their range: sums far past it
  ('sum(9223372036854774000 - v::int8)', 'numeric'),
  ('avg(9223372036854774000 - v::int8)', 'numeric'),
  ('g_numsum(v::numeric / 9)', 'numeric'),
  ('sum(v) FILTER (WHERE v > 0)', 'bigint'),
  ('count(*) FILTER (WHERE f > 0)', 'bigint'),
  ('count(f) FILTER (WHERE v < 0)', 'bigint'),
  ('bool_and(v > -900)', 'boolean'),
  ('bool_or(v > 990)', 'boolean'),
  ('every(f IS NOT NULL)', 'boolean'),
  ('bit_and(v + 1000)', 'integer'),
  ('bit_or(v + 1000)', 'integer'),
  ('min(kt || v)', 'text'),
  ('max(kt || v)', 'text'),
  ('min(v::numeric / 3)', 'numeric'),
  ('max(make_interval(secs => v))', 'interval'),
  ('corr(f, v)', 'double precision'),
  ('g_sumsq(v)', 'text'),
  ('g_sumsq_rw(v)', 'text'),
  ('g_largest(v::numeric)', 'numeric'),
  ('g_extra(v)', 'bigint'),
  ('g_capsum(abs(v))', 'bigint'),
  -- arguments are computed only for the rows FILTER takes
  ('sum(1000 / v) FILTER (WHERE v <> 0)', 'bigint'),
  -- DISTINCT: sets of values merged, the aggregate folded over them
  ('count(DISTINCT v % 50)', 'bigint'),
  ('sum(DISTINCT v)', 'bigint'),
  ('sum(DISTINCT v::numeric / 7)', 'numeric'),
  ('count(DISTINCT kt)', 'bigint'),
  ('avg(DISTINCT f)', 'double precision'),
  ('count(DISTINCT v % 50) FILTER (WHERE f > 0)', 'bigint'),
  ('g_sumsq(DISTINCT v % 20)', 'text'),
  -- expressions over aggregates, kernels' and others'
  ('sum(v::numeric / 7) / count(*)', 'numeric'),
  ('coalesce(max(f), 0) - min(f)', 'double precision'),
  ('bool_or(v > 0) AND count(*) > 3', 'boolean'),
  ('sum(v) - sum(v) FILTER (WHERE v > 0) + 1', 'bigint'),
  -- sum and avg over numeric(p, s) with p <= 18 run on a fixed-point
  -- kernel: compared as text, which shows the digits after the point too;
  -- a NaN makes a window's value NaN; numeric(19, 2) takes the generic path
  ('sum((v / 7.0)::numeric(12,2))::text', 'text'),
  ('avg((v / 3.0)::numeric(18,4))::text', 'text'),
  ('avg((v / 1000000.0)::numeric(18,18))::text', 'text'),
  ('sum((CASE WHEN v % 97 = 5 THEN ''NaN'' ELSE (v * 100000000000000)::text END)::numeric(18,0))::text', 'text'),
  ('avg((CASE WHEN v % 89 = 3 THEN ''NaN'' ELSE v::text END)::numeric(6,1))::text', 'text'),
  ('sum((v / 7.0)::numeric(19,2))::text', 'text'),
  -- numeric without a typmod: the batch functions read it as fixed point
  -- at the scale of its first value while every value has that scale (a
  -- NaN has none), and start again on the generic path at the first that
  -- does not (another scale late in the stream, an infinity)
  ('sum(round(v::numeric / 7, 3))::text', 'text'),
  ('avg(round(v::numeric / 7, 3))::text', 'text'),
  ('sum((CASE WHEN v % 101 = 7 THEN ''NaN'' ELSE round(v::numeric, 2)::text END)::numeric)::text', 'text'),
  ('sum(CASE WHEN id = 4000 THEN round(v::numeric / 7, 4) ELSE round(v::numeric / 7, 3) END)::text', 'text'),
  ('avg((CASE WHEN id = 3000 THEN ''Infinity'' ELSE round(v::numeric, 2)::text END)::numeric)::text', 'text');

-- Compare every window's last pane with GROUP BY over its accepted rows;
-- returns the counts that show the comparison was not vacuous, and the
-- number of windows whose values differ (every one is listed first).
CREATE FUNCTION check_generic(sizes bigint[], slides bigint[], origins bigint[],
                              bound bigint, lateness bigint, aggs text[])
RETURNS TABLE (windows bigint, late_panes bigint, dropped_rows bigint, differing bigint,
               dropped_differing bigint)
LANGUAGE plpgsql AS $$
DECLARE
    wins windowagg.window[];
    cols text;
    coldefs text;
    compared text;
    r record;
BEGIN
    SELECT array_agg(windowagg.hopping(sizes[i], slides[i], origins[i]) ORDER BY i)
      INTO wins FROM generate_subscripts(sizes, 1) i;
    SELECT string_agg(format('%s AS a%s', a, i), ', ' ORDER BY i),
           string_agg(format('a%s %s', i, t), ', ' ORDER BY i),
           string_agg(CASE WHEN t = 'double precision'
                           THEN format('round(a%s::numeric, 9) AS a%s', i, i)
                           ELSE format('a%s', i) END, ', ' ORDER BY i)
      INTO cols, coldefs, compared
      FROM unnest(aggs) WITH ORDINALITY AS u(a, i),
           LATERAL (SELECT type FROM g_aggs WHERE agg = a) g(t);
    CREATE TEMP TABLE acc AS
    SELECT * FROM ref_accept('ev_g', sizes::numeric[], slides::numeric[],
                             origins::numeric[], bound, lateness);
    EXECUTE format($f$
        CREATE TEMP TABLE got AS
        SELECT * FROM windowagg.aggregate(%L, 't', %L::windowagg.window[],
                                          bound => %s, lateness => %s,
                                          arrival_order => 'id')
          AS (k int, ws bigint, we bigint, %s, pane text, rev bigint)$f$,
        format('SELECT k, %s FROM ev_g GROUP BY k', cols), wins, bound, lateness, coldefs);
    -- windowagg.dropped() over the same query lists the rows no window took
    EXECUTE format($f$
        CREATE TEMP TABLE dropped_got AS
        SELECT arrival FROM windowagg.dropped(%L, 't', %L::windowagg.window[],
                                              bound => %s, lateness => %s,
                                              arrival_order => 'id')
          AS (k int, t bigint, watermark bigint, arrival bigint)$f$,
        format('SELECT k, %s FROM ev_g GROUP BY k', cols), wins, bound, lateness);
    EXECUTE format($f$
        CREATE TEMP TABLE want AS
        SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we, %s
        FROM acc a JOIN ev_g e USING (id)
        WHERE a.spec IS NOT NULL
        GROUP BY e.k, a.spec, a.ws, a.we$f$, cols);
    EXECUTE format($f$
        CREATE TEMP TABLE final AS
        SELECT k, ws, we, %s FROM (SELECT DISTINCT ON (k, ws, we) * FROM got
                                   ORDER BY k, ws, we, rev DESC) g$f$, compared);
    EXECUTE format($f$
        CREATE TEMP VIEW want_compared AS SELECT k, ws, we, %s FROM want$f$, compared);
    FOR r IN
        SELECT * FROM (SELECT * FROM final EXCEPT SELECT * FROM want_compared) d
        UNION ALL
        SELECT * FROM (SELECT * FROM want_compared EXCEPT SELECT * FROM final) d
        ORDER BY 1, 2, 3 LIMIT 5
    LOOP
        RAISE WARNING 'differs: %', r;
    END LOOP;
    windows := (SELECT count(*) FROM want);
    late_panes := (SELECT count(*) FROM got WHERE pane = 'late');
    dropped_rows := (SELECT count(*) FROM acc WHERE spec IS NULL);
    differing := (SELECT count(*) FROM (SELECT * FROM final EXCEPT SELECT * FROM want_compared
                                        UNION ALL
                                        SELECT * FROM want_compared EXCEPT SELECT * FROM final) d);
    -- arrival numbers are ev_g's ids, 1 to n
    dropped_differing := (SELECT count(*) FROM (
        (SELECT arrival FROM dropped_got EXCEPT ALL SELECT id FROM acc WHERE spec IS NULL)
        UNION ALL
        (SELECT id FROM acc WHERE spec IS NULL EXCEPT ALL SELECT arrival FROM dropped_got)) d);
    DROP VIEW want_compared;
    DROP TABLE acc, got, want, final, dropped_got;
    RETURN NEXT;
END
$$;

-- every aggregate, tumbling
SELECT * FROM check_generic('{20}', '{20}', '{0}', 20, 60,
                            (SELECT array_agg(agg) FROM g_aggs));
-- hopping (two-stack) and a second window (coverage plan), every aggregate
-- that merges in any order
SELECT * FROM check_generic('{60,20}', '{20,20}', '{0,0}', 20, 60,
                            (SELECT array_agg(agg) FROM g_aggs WHERE agg NOT LIKE 'g_capsum%'));
-- a state made NULL stays NULL: tumbling windows, one slice each (merging
-- slices of such an aggregate depends on their order, in PostgreSQL's
-- parallel aggregation too)
SELECT * FROM check_generic('{20}', '{20}', '{0}', 20, 60, '{"g_capsum(abs(v))"}');
-- idempotent aggregates alone: windows computed from overlapping parents
SELECT * FROM check_generic('{40,80,120}', '{20,40,40}', '{0,0,0}', 20, 60,
                            '{"bool_and(v > -900)","bit_or(v + 1000)","min(kt || v)","max(make_interval(secs => v))","count(DISTINCT v % 50)","sum(DISTINCT v::numeric / 7)"}');
-- no lateness: every late row is dropped
SELECT * FROM check_generic('{30}', '{10}', '{5}', 10, 0,
                            '{"sum(v::numeric / 7)","g_sumsq(v)","count(*) FILTER (WHERE f > 0)"}');

-- numerics of one scale, on the decimal kernels: tumbling and hopping
SELECT * FROM check_generic('{20}', '{20}', '{0}', 20, 60,
  '{"sum(round(v::numeric / 7, 3))::text","avg(round(v::numeric / 7, 3))::text","sum((CASE WHEN v % 101 = 7 THEN ''NaN'' ELSE round(v::numeric, 2)::text END)::numeric)::text"}');
SELECT * FROM check_generic('{60,20}', '{20,20}', '{0,0}', 20, 60,
  '{"sum(round(v::numeric / 7, 3))::text","avg(round(v::numeric / 7, 3))::text"}');
-- a value of another scale, or an infinity, late in the stream: the call
-- starts again on the generic path, and its output is that path's alone
SELECT * FROM check_generic('{60,20}', '{20,20}', '{0,0}', 20, 60,
  '{"sum(CASE WHEN id = 4000 THEN round(v::numeric / 7, 4) ELSE round(v::numeric / 7, 3) END)::text","sum(round(v::numeric / 7, 3))::text"}');
SELECT * FROM check_generic('{20}', '{20}', '{0}', 20, 60,
  '{"avg((CASE WHEN id = 3000 THEN ''Infinity'' ELSE round(v::numeric, 2)::text END)::numeric)::text"}');

-- The second run resolves names as the first did, whatever the query's
-- code did to search_path in between (here a function that says it is
-- immutable, which a query with volatile functions would need to be: such
-- a query is never run twice, so never guessed for)
CREATE SCHEMA g_ua;
CREATE SCHEMA g_ub;
CREATE FUNCTION g_ua.g(numeric) RETURNS numeric IMMUTABLE LANGUAGE sql AS 'SELECT $1';
CREATE FUNCTION g_ub.g(numeric) RETURNS bigint IMMUTABLE LANGUAGE sql AS 'SELECT 12345::bigint';
CREATE FUNCTION g_flip(int) RETURNS boolean IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
    IF $1 = 2 THEN
        PERFORM set_config('search_path', 'g_ub, public', false);
    END IF;
    RETURN true;
END $$;
CREATE TABLE g_sp (id int, k int, t bigint, x numeric);
INSERT INTO g_sp VALUES (1, 1, 1, 1.25), (2, 1, 2, 2.50), (3, 1, 3, 2.345);
SET search_path = g_ua, public;
SELECT k, s, s2 FROM windowagg.aggregate(
  'SELECT k, sum(g(x)) AS s, g(sum(x)) AS s2 FROM g_sp WHERE g_flip(id) GROUP BY k', 't',
  ARRAY[windowagg.tumbling(10)], arrival_order => 'id')
  AS (k int, ws bigint, we bigint, s numeric, s2 numeric, pane text, rev bigint);
RESET search_path;
DROP TABLE g_sp;
DROP FUNCTION g_flip(int);
DROP SCHEMA g_ua, g_ub CASCADE;

-- sum and avg over numeric(p, s) at the ends of 18 digits (20 of the
-- largest add up past bigint), zeros, negatives, NULLs and NaN: each
-- window's values, as text, equal GROUP BY's
CREATE TABLE g_fixed (id int, k int, t bigint, a numeric(18,0), b numeric(18,2),
                      c numeric(18,18), d numeric(3,1));
INSERT INTO g_fixed VALUES
  (1, 1, 1, 999999999999999999, 9999999999999999.99, 0.999999999999999999, 99.9),
  (2, 1, 2, 999999999999999999, 9999999999999999.99, 0.999999999999999999, 99.9),
  (3, 1, 3, -999999999999999999, -0.01, -0.000000000000000001, -99.9),
  (4, 2, 4, 0, 0.00, 0, 0),
  (5, 3, 5, NULL, NULL, NULL, NULL),
  (6, 4, 6, 'NaN', 'NaN', 'NaN', 'NaN'), (7, 4, 7, 1, 1, 0.5, 1),
  (8, 5, 15, 7, 0.07, 0.000000000000000007, 0.7), (9, 5, 16, -3, -0.03, -0.3, -0.3),
  (10, 5, 17, NULL, 5, NULL, 0.1);
INSERT INTO g_fixed SELECT 10 + i, 6, 20 + i, 999999999999999999, -9999999999999999.99,
                           -0.999999999999999999, -99.9
FROM generate_series(1, 20) i;
CREATE TEMP TABLE g_fixed_got AS
SELECT k, ws, sa, aa, sb, ab, sc, ac, sd, ad
FROM windowagg.aggregate('SELECT k, sum(a)::text AS sa, avg(a)::text AS aa, sum(b)::text AS sb,
                                 avg(b)::text AS ab, sum(c)::text AS sc, avg(c)::text AS ac,
                                 sum(d)::text AS sd, avg(d)::text AS ad
                          FROM g_fixed GROUP BY k', 't', ARRAY[windowagg.tumbling(10)],
                         arrival_order => 'id')
  AS (k int, ws bigint, we bigint, sa text, aa text, sb text, ab text, sc text, ac text,
      sd text, ad text, pane text, rev bigint);
SELECT * FROM g_fixed_got ORDER BY k, ws;
SELECT count(*) AS differing FROM (
    (SELECT * FROM g_fixed_got
     EXCEPT SELECT k, t - t % 10, sum(a)::text, avg(a)::text, sum(b)::text, avg(b)::text,
                   sum(c)::text, avg(c)::text, sum(d)::text, avg(d)::text
            FROM g_fixed GROUP BY 1, 2)
    UNION ALL
    (SELECT k, t - t % 10, sum(a)::text, avg(a)::text, sum(b)::text, avg(b)::text,
            sum(c)::text, avg(c)::text, sum(d)::text, avg(d)::text
     FROM g_fixed GROUP BY 1, 2
     EXCEPT SELECT * FROM g_fixed_got)) x;
DROP TABLE g_fixed, g_fixed_got;

-- Large sets of distinct values: one window of 15000 rows per key over
-- about 10000 distinct values, each seen twice in a row, first with two
-- digits after the point, then with four (equal values, told apart by
-- their text): count and sum over DISTINCT values equal GROUP BY's, and
-- of equal values a slice keeps the first it saw, so the sum has two
-- digits after the point, as the sum of each value's first row has.
CREATE TABLE g_many (id int, k int, t bigint, x numeric);
INSERT INTO g_many
SELECT i, (i / 2) % 2, i % 100,
       CASE WHEN i % 2 = 0 THEN round(((i / 2) * 7919 % 10007) / 100.0, 2)
            ELSE round(((i / 2) * 7919 % 10007) / 100.0, 2)::numeric(12,4) END
FROM generate_series(2, 30001) i;
SELECT w.k, w.n, w.s, w.n_text, (w.n, w.s, w.n_text) = (g.n, g.s, g.n_text) AS as_group_by,
       w.s::text = f.s::text AS first_seen_kept
FROM windowagg.aggregate('SELECT k, count(DISTINCT x) AS n, sum(DISTINCT x) AS s,
                                 count(DISTINCT x::text) AS n_text
                          FROM g_many GROUP BY k', 't', ARRAY[windowagg.tumbling(100)],
                         arrival_order => 'id')
  AS w(k int, ws bigint, we bigint, n bigint, s numeric, n_text bigint, pane text, rev bigint)
JOIN (SELECT k, count(DISTINCT x) AS n, sum(DISTINCT x) AS s, count(DISTINCT x::text) AS n_text
      FROM g_many GROUP BY k) g USING (k)
JOIN (SELECT k, sum(x) AS s
      FROM (SELECT DISTINCT ON (k, x) k, x FROM g_many ORDER BY k, x, id) d GROUP BY k) f USING (k)
ORDER BY 1;
DROP TABLE g_many;

-- text min and max use the column's collation, as GROUP BY does: "C"
-- orders upper case first, ICU's root collation lower case first, so the
-- two columns' extremes differ (the control: a mix-up shows in lo/hi)
CREATE TABLE g_coll (id int, k int, t bigint, s text COLLATE "C", d text COLLATE "und-x-icu");
INSERT INTO g_coll VALUES (1, 1, 1, 'a', 'a'), (2, 1, 2, 'B', 'B'), (3, 1, 3, 'b', 'b'),
                          (4, 1, 4, 'A', 'A'), (5, 2, 15, 'b', 'b'), (6, 2, 12, 'A', 'A');
SELECT w.k, w.ws, w.lo, w.hi, w.lo_d, w.hi_d,
       (w.lo, w.hi, w.lo_d, w.hi_d) = (g.lo, g.hi, g.lo_d, g.hi_d) AS as_group_by
FROM windowagg.aggregate('SELECT k, min(s) AS lo, max(s) AS hi, min(d) AS lo_d, max(d) AS hi_d
                          FROM g_coll GROUP BY k', 't',
                         ARRAY[windowagg.tumbling(10)], arrival_order => 'id')
  AS w(k int, ws bigint, we bigint, lo text, hi text, lo_d text, hi_d text, pane text, rev bigint)
JOIN (SELECT k, t - t % 10 AS ws, min(s) AS lo, max(s) AS hi, min(d) AS lo_d, max(d) AS hi_d
      FROM g_coll GROUP BY 1, 2) g ON (g.k, g.ws) = (w.k, w.ws)
ORDER BY 1, 2;
DROP TABLE g_coll;

-- Aggregates that windows cannot compute are refused, naming them.
SELECT * FROM windowagg.aggregate(
  'SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY f) AS p FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, p float8, pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, mode() WITHIN GROUP (ORDER BY v) AS m FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, m int, pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, array_agg(v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a int[], pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, string_agg(kt, '','') AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a text, pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, corr(DISTINCT f, v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a float8, pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, g_sumsq(v ORDER BY t) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a text, pane text, rev bigint);
CREATE AGGREGATE g_collect(anycompatible) (SFUNC = array_append, STYPE = anycompatiblearray,
                                           COMBINEFUNC = array_cat);
SELECT * FROM windowagg.aggregate(
  'SELECT k, g_collect(v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a int[], pane text, rev bigint);
CREATE AGGREGATE g_nocombine(int8) (SFUNC = g_sq_step, STYPE = int8[], INITCOND = '{0,0}');
SELECT * FROM windowagg.aggregate(
  'SELECT k, g_nocombine(v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a int8[], pane text, rev bigint);

-- Whoever runs the query needs EXECUTE on the aggregate, as in a query.
CREATE ROLE g_reader;
GRANT SELECT ON ev_g TO g_reader;
REVOKE EXECUTE ON FUNCTION g_sumsq(int8) FROM PUBLIC;
SET ROLE g_reader;
SELECT count(*) FROM windowagg.aggregate(
  'SELECT k, g_sumsq(v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a text, pane text, rev bigint);
SELECT count(*) FROM windowagg.aggregate(
  'SELECT k, sum(v::numeric) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)], bound => 1000) AS (k int, ws bigint, we bigint, a numeric, pane text, rev bigint);
RESET ROLE;
-- built-in aggregates that windowagg's kernels compute, too
REVOKE EXECUTE ON FUNCTION pg_catalog.max(int4) FROM PUBLIC;
SET ROLE g_reader;
SELECT count(*) FROM windowagg.aggregate(
  'SELECT k, max(v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a int, pane text, rev bigint);
RESET ROLE;
GRANT EXECUTE ON FUNCTION pg_catalog.max(int4) TO PUBLIC;

-- An expression over aggregates may not read columns outside them, nor
-- be volatile: a late pane computes it again.
SELECT * FROM windowagg.aggregate(
  'SELECT k, k + sum(v) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a bigint, pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, sum(v) + random() AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a float8, pane text, rev bigint);
SELECT * FROM windowagg.aggregate(
  'SELECT k, sum(v) + (SELECT 1) AS a FROM ev_g GROUP BY k',
  't', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, a bigint, pane text, rev bigint);

DROP TABLE g_aggs, ev_g;
DROP FUNCTION check_generic(bigint[], bigint[], bigint[], bigint, bigint, text[]);
DROP AGGREGATE g_nocombine(int8);
DROP AGGREGATE g_collect(anycompatible);
DROP AGGREGATE g_capsum(int8);
DROP AGGREGATE g_numsum(numeric);
DROP AGGREGATE g_sumsq_rw(int8);
DROP AGGREGATE g_extra(int8);
DROP FUNCTION g_cap_step(int8, int8), g_sq_extra(int8[], int8);
DROP AGGREGATE g_sumsq(int8);
DROP AGGREGATE g_largest(anyelement);
DROP FUNCTION g_sq_step(int8[], int8), g_sq_combine(int8[], int8[]), g_sq_final(int8[]),
              g_larger(anyelement, anyelement);
DROP OWNED BY g_reader;
DROP ROLE g_reader;
