-- Sketches of other extensions in windows: hll distinct counts and tdigest
-- percentiles, against GROUP BY over the rows each window accepted (the
-- PL/pgSQL replay ref_accept of t_00_setup).  Needs the hll and tdigest
-- extensions (Debian: postgresql-15-hll, postgresql-15-tdigest); where
-- they are not installed the test says so and stops (t_17_sketches_1.out).
SET client_min_messages = warning;
SELECT count(*) = 2 AS have_sketches
FROM pg_available_extensions WHERE name IN ('hll', 'tdigest') \gset
\if :have_sketches
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;
SELECT make_events('ev_s', 4000, 3, 2, 15, 23, 400, 0.17);

-- Every window's sketches against GROUP BY over its accepted rows, for a
-- set of windows (sizes[i] every slides[i]); with hll_only, the hll
-- aggregate alone, which merges idempotently: the coverage plan may then
-- merge windows from overlapping ones.
CREATE FUNCTION check_sketches(sizes bigint[], slides bigint[], hll_only boolean DEFAULT false,
                               hll_args text DEFAULT '')
RETURNS TABLE (windows bigint, late_panes bigint, hll_equal bigint, hll_exact bigint,
               p50_within_2pct bigint, p99_within_2pct bigint, digest_p50_within_2pct bigint,
               digest_count_exact bigint)
LANGUAGE plpgsql AS $$
DECLARE
    wins windowagg.window[];
BEGIN
    SELECT array_agg(windowagg.hopping(sizes[i], slides[i]) ORDER BY i)
      INTO wins FROM generate_subscripts(sizes, 1) i;
    CREATE TEMP TABLE acc AS
    SELECT * FROM ref_accept('ev_s', sizes::numeric[], slides::numeric[],
                             array_fill(0, ARRAY[cardinality(sizes)])::numeric[], 20, 60);
    IF hll_only THEN
        CREATE TEMP TABLE got AS
        SELECT DISTINCT ON (k, ws, we) k, ws, we, distinct_v, NULL::float8 AS p50,
               NULL::float8 AS p99, NULL::float8 AS digest_p50, NULL::bigint AS digest_count
        FROM windowagg.aggregate(
            format($q$SELECT k, hll_cardinality(hll_add_agg(hll_hash_integer(v)%s)) AS distinct_v
                      FROM ev_s GROUP BY k$q$, hll_args),
            't', wins, bound => 20, lateness => 60, arrival_order => 'id')
          AS (k int, ws bigint, we bigint, distinct_v float8, pane text, rev bigint)
        ORDER BY k, ws, we, rev DESC;
    ELSE
        -- tdigest_percentile(f, ...), and the tdigest aggregate itself:
        -- each window's digest, read by tdigest_percentile(tdigest, ...)
        -- and tdigest_count afterwards
        CREATE TEMP TABLE got AS
        SELECT k, ws, we, distinct_v, p50, p99,
               (SELECT tdigest_percentile(x, 0.5) FROM (VALUES (digest)) d(x)) AS digest_p50,
               coalesce(tdigest_count(digest), 0) AS digest_count
        FROM (SELECT DISTINCT ON (k, ws, we) * FROM windowagg.aggregate(
                $q$SELECT k, hll_cardinality(hll_add_agg(hll_hash_integer(v))) AS distinct_v,
                          tdigest_percentile(f, 100, 0.5) AS p50,
                          tdigest_percentile(f, 100, 0.99) AS p99,
                          tdigest(f, 100) AS digest
                   FROM ev_s GROUP BY k$q$,
                't', wins, bound => 20, lateness => 60, arrival_order => 'id')
              AS (k int, ws bigint, we bigint, distinct_v float8, p50 float8, p99 float8,
                  digest tdigest, pane text, rev bigint)
              ORDER BY k, ws, we, rev DESC) w;
    END IF;
    -- the median's bounds: 2% in rank either side, or one value where a
    -- window has fewer than 50 (a quantile's granularity)
    EXECUTE format($q$
    CREATE TEMP TABLE want AS
    SELECT k, ws, we, distinct_v, exact_distinct, p97, p100, n_f,
           fs[1 + floor((0.5 - tol) * (n_f - 1))::int] AS p50_lo,
           fs[1 + ceil((0.5 + tol) * (n_f - 1))::int] AS p50_hi
    FROM (SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we,
                 hll_cardinality(hll_add_agg(hll_hash_integer(e.v)%s)) AS distinct_v,
                 count(DISTINCT e.v) AS exact_distinct,
                 percentile_cont(0.97) WITHIN GROUP (ORDER BY e.f) AS p97,
                 max(e.f) AS p100, count(e.f) AS n_f,
                 array_agg(e.f ORDER BY e.f) FILTER (WHERE e.f IS NOT NULL) AS fs,
                 greatest(0.02, 1.0 / nullif(count(e.f), 0)) AS tol
          FROM acc a JOIN ev_s e USING (id) WHERE a.spec IS NOT NULL
          GROUP BY e.k, a.spec, a.ws, a.we) w$q$, hll_args);
    windows := (SELECT count(*) FROM want);
    late_panes := (SELECT count(*) FROM windowagg.aggregate(
        'SELECT k, count(*) AS n FROM ev_s GROUP BY k', 't',
        wins, bound => 20, lateness => 60,
        arrival_order => 'id') AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint)
        WHERE pane = 'late');
    -- the union of slices' sketches is the sketch of the window's rows
    hll_equal := (SELECT count(*) FROM got JOIN want USING (k, ws, we)
                  WHERE got.distinct_v IS NOT DISTINCT FROM want.distinct_v);
    -- and small sets are counted exactly
    hll_exact := (SELECT count(*) FROM got JOIN want USING (k, ws, we)
                  WHERE round(got.distinct_v) = want.exact_distinct);
    IF NOT hll_only THEN
        -- percentiles within 2% in rank of the exact ones: a t-digest's error
        -- is in rank, smallest at the tails (f is NULL in some rows)
        p50_within_2pct := (SELECT count(*) FROM got JOIN want USING (k, ws, we)
                            WHERE got.p50 BETWEEN want.p50_lo AND want.p50_hi
                               OR (got.p50 IS NULL AND want.n_f = 0));
        p99_within_2pct := (SELECT count(*) FROM got JOIN want USING (k, ws, we)
                            WHERE got.p99 BETWEEN want.p97 AND want.p100
                               OR (got.p99 IS NULL AND want.n_f = 0));
        digest_p50_within_2pct := (SELECT count(*) FROM got JOIN want USING (k, ws, we)
                                   WHERE got.digest_p50 BETWEEN want.p50_lo AND want.p50_hi
                                      OR (got.digest_p50 IS NULL AND want.n_f = 0));
        -- a digest counts its values exactly
        digest_count_exact := (SELECT count(*) FROM got JOIN want USING (k, ws, we)
                               WHERE got.digest_count = want.n_f);
    END IF;
    DROP TABLE acc, got, want;
    RETURN NEXT;
END
$$;

SELECT * FROM check_sketches('{40}', '{40}');
SELECT * FROM check_sketches('{60}', '{20}');
-- two windows in one query, one of them hopping
SELECT * FROM check_sketches('{40,120}', '{40,20}');
-- hll alone merges idempotently: windows from overlapping parents
SELECT * FROM check_sketches('{40,80,120}', '{20,40,40}', true);
-- the same with sketches in their compressed (register) form from the
-- first value on (log2m 11, regwidth 5, no explicit and no sparse form),
-- whose unions merge registers
SELECT * FROM check_sketches('{40,80,120}', '{20,40,40}', true, ', 11, 5, 0, 0');
SELECT line FROM windowagg.explain(ARRAY[windowagg.hopping(40, 20), windowagg.hopping(80, 40),
                                         windowagg.hopping(120, 40)], '{hll_add_agg}') line
WHERE line LIKE 'Window plan%';

-- A window of one slice keeps a digest built in arrival order, as GROUP BY
-- over the rows in that order builds it, and its panes must read it
-- without changing it: tdigest's final functions compact the digest they
-- are given (though they say they only read it), so windowagg gives them
-- a copy.  Windows of 1000 values each, fired, then 1000 late values each,
-- the last pane equals GROUP BY exactly.
CREATE TABLE td (id int, k int, t bigint, f float8);
INSERT INTO td SELECT i, i % 2, i % 1000, (i * 7919 % 10007) / 100.0 FROM generate_series(1, 2000) i;
INSERT INTO td VALUES (2001, 0, 1500, 0), (2002, 1, 1500, 0);
INSERT INTO td SELECT i, i % 2, i % 1000, (i * 104729 % 10007) / 100.0
FROM generate_series(2003, 4000) i;
SELECT count(*) AS windows, count(*) FILTER (WHERE g.pane = 'late') AS late,
       count(*) FILTER (WHERE g.p50 = w.p50 AND g.p99 = w.p99) AS as_group_by
FROM (SELECT DISTINCT ON (k, ws) * FROM windowagg.aggregate(
        'SELECT k, tdigest_percentile(f, 100, 0.5) AS p50, tdigest_percentile(f, 100, 0.99) AS p99
         FROM td GROUP BY k', 't', ARRAY[windowagg.tumbling(1000)], bound => 20,
        lateness => 10000, arrival_order => 'id')
      AS (k int, ws bigint, we bigint, p50 float8, p99 float8, pane text, rev bigint)
      ORDER BY k, ws, rev DESC) g
JOIN (SELECT k, t - t % 1000 AS ws, tdigest_percentile(f, 100, 0.5 ORDER BY id) AS p50,
             tdigest_percentile(f, 100, 0.99 ORDER BY id) AS p99
      FROM td GROUP BY 1, 2) w USING (k, ws)
WHERE g.ws = 0;
DROP TABLE td;

-- The same in a pipeline, fed in three batches, paused and resumed (its
-- sketches restored from the checkpoint) between the second and third.
CREATE TABLE sk_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int NOT NULL,
                     t bigint NOT NULL, v int, f float8);
SELECT windowagg.create_pipeline('sk',
  $q$SELECT k, hll_cardinality(hll_add_agg(hll_hash_integer(v))) AS distinct_v,
            tdigest_percentile(f, 100, 0.5) AS p50, tdigest_percentile(f, 100, 0.99) AS p99
     FROM sk_src GROUP BY k$q$,
  't', ARRAY[windowagg.hopping(60, 20)], bound => 20, lateness => 60) > 0 AS created;
INSERT INTO sk_src (k, t, v, f) SELECT k, t, v, f FROM ev_s WHERE id <= 700 ORDER BY id;
SELECT windowagg.wait('sk');
INSERT INTO sk_src (k, t, v, f) SELECT k, t, v, f FROM ev_s WHERE id BETWEEN 701 AND 2300 ORDER BY id;
SELECT windowagg.wait('sk');
-- live(): the open windows' sketches, read from the pipeline's shared
-- memory by this backend, against GROUP BY over what they accepted so far
CREATE TABLE ev_s_part AS SELECT * FROM ev_s WHERE id <= 2300;
CREATE TEMP TABLE acc AS
SELECT * FROM ref_accept('ev_s_part', '{60}', '{20}', '{0}', 20, 60);
SELECT count(*) > 0 AS some_live,
       count(*) FILTER (WHERE l.distinct_v IS NOT DISTINCT FROM w.distinct_v) = count(*) AS hll_as_group_by,
       count(*) FILTER (WHERE l.p50 BETWEEN w.fs[1 + floor((0.5 - w.tol) * (w.n - 1))::int]
                                        AND w.fs[1 + ceil((0.5 + w.tol) * (w.n - 1))::int]
                           OR (l.p50 IS NULL AND w.n = 0)) = count(*) AS p50_within_2pct
FROM windowagg.live('sk') AS l(k int, window_start bigint, window_end bigint,
                               distinct_v float8, p50 float8, p99 float8)
JOIN (SELECT e.k, a.ws::bigint AS ws,
             hll_cardinality(hll_add_agg(hll_hash_integer(e.v))) AS distinct_v,
             array_agg(e.f ORDER BY e.f) FILTER (WHERE e.f IS NOT NULL) AS fs,
             count(e.f) AS n, greatest(0.02, 1.0 / nullif(count(e.f), 0)) AS tol
      FROM acc a JOIN ev_s_part e USING (id) WHERE a.spec IS NOT NULL
      GROUP BY 1, 2) w ON (w.k, w.ws) = (l.k, l.window_start);
DROP TABLE acc, ev_s_part;
SELECT windowagg.pause('sk');
SELECT wait_for_status('sk', 'paused');
SELECT windowagg.resume('sk');
INSERT INTO sk_src (k, t, v, f) SELECT k, t, v, f FROM ev_s WHERE id > 2300 ORDER BY id;
SELECT windowagg.flush('sk');
-- the extension a pipeline computes with cannot be dropped under it
DROP EXTENSION hll;
CREATE TEMP TABLE acc AS
SELECT * FROM ref_accept('ev_s', '{60}', '{20}', '{0}', 20, 60);
SELECT count(*) AS windows,
       count(*) FILTER (WHERE g.distinct_v IS NOT DISTINCT FROM w.distinct_v) AS hll_equal,
       count(*) FILTER (WHERE g.p50 BETWEEN w.p48 AND w.p52
                           OR (g.p50 IS NULL AND w.p48 IS NULL)) AS p50_within_2pct,
       count(*) FILTER (WHERE g.p99 BETWEEN w.p97 AND w.p100
                           OR (g.p99 IS NULL AND w.p97 IS NULL)) AS p99_within_2pct
FROM (SELECT e.k, a.ws::bigint AS ws,
             hll_cardinality(hll_add_agg(hll_hash_integer(e.v))) AS distinct_v,
             percentile_cont(0.48) WITHIN GROUP (ORDER BY e.f) AS p48,
             percentile_cont(0.52) WITHIN GROUP (ORDER BY e.f) AS p52,
             percentile_cont(0.97) WITHIN GROUP (ORDER BY e.f) AS p97,
             max(e.f) AS p100
      FROM acc a JOIN ev_s e USING (id) WHERE a.spec IS NOT NULL
      GROUP BY e.k, a.ws) w
FULL JOIN (SELECT k, window_start AS ws, distinct_v, p50, p99 FROM sk) g USING (k, ws);
SELECT windowagg.drop_pipeline('sk', drop_tables => true);
-- the plan of a query's hll aggregate: covered-by, as for min and max
SELECT windowagg.create_pipeline('sk_hll',
  $q$SELECT k, hll_add_agg(hll_hash_integer(v)) AS h FROM sk_src GROUP BY k$q$,
  't', ARRAY[windowagg.hopping(40, 20), windowagg.hopping(80, 40), windowagg.hopping(120, 40)],
  bound => 20, enabled => false) > 0 AS created;
SELECT line FROM windowagg.explain('sk_hll') line WHERE line LIKE 'Window plan%';
SELECT windowagg.drop_pipeline('sk_hll', drop_tables => true);
DROP TABLE acc, sk_src;

DROP FUNCTION check_sketches(bigint[], bigint[], boolean, text);
DROP TABLE ev_s;
DROP EXTENSION tdigest;
DROP EXTENSION hll;
\endif
