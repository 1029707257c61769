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

CREATE FUNCTION check_sketches(size bigint, slide bigint)
RETURNS TABLE (windows bigint, late_panes bigint, hll_equal bigint, hll_exact bigint,
               p50_within_2pct bigint, p99_within_2pct bigint)
LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE acc AS
    SELECT * FROM ref_accept('ev_s', ARRAY[size]::numeric[], ARRAY[slide]::numeric[],
                             '{0}', 20, 60);
    CREATE TEMP TABLE got AS
    SELECT DISTINCT ON (k, ws) * FROM windowagg.aggregate(
        $q$SELECT k, hll_cardinality(hll_add_agg(hll_hash_integer(v))) AS distinct_v,
                  tdigest_percentile(f, 100, 0.5) AS p50,
                  tdigest_percentile(f, 100, 0.99) AS p99
           FROM ev_s GROUP BY k$q$,
        't', ARRAY[windowagg.hopping(size, slide)], bound => 20, lateness => 60,
        arrival_order => 'id')
      AS (k int, ws bigint, we bigint, distinct_v float8, p50 float8, p99 float8,
          pane text, rev bigint)
    ORDER BY k, ws, rev DESC;
    CREATE TEMP TABLE want AS
    SELECT e.k, a.ws::bigint AS ws,
           hll_cardinality(hll_add_agg(hll_hash_integer(e.v))) AS distinct_v,
           count(DISTINCT e.v) AS exact_distinct,
           percentile_cont(0.48) WITHIN GROUP (ORDER BY e.f) AS p48,
           percentile_cont(0.52) WITHIN GROUP (ORDER BY e.f) AS p52,
           percentile_cont(0.97) WITHIN GROUP (ORDER BY e.f) AS p97,
           max(e.f) AS p100
    FROM acc a JOIN ev_s e USING (id) WHERE a.spec IS NOT NULL
    GROUP BY e.k, a.ws;
    windows := (SELECT count(*) FROM want);
    late_panes := (SELECT count(*) FROM windowagg.aggregate(
        'SELECT k, count(*) AS n FROM ev_s GROUP BY k', 't',
        ARRAY[windowagg.hopping(size, slide)], bound => 20, lateness => 60,
        arrival_order => 'id') AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint)
        WHERE pane = 'late');
    -- the union of slices' sketches is the sketch of the window's rows
    hll_equal := (SELECT count(*) FROM got JOIN want USING (k, ws)
                  WHERE got.distinct_v IS NOT DISTINCT FROM want.distinct_v);
    -- and small sets are counted exactly
    hll_exact := (SELECT count(*) FROM got JOIN want USING (k, ws)
                  WHERE round(got.distinct_v) = want.exact_distinct);
    -- percentiles within 2% in rank of the exact ones: a t-digest's error
    -- is in rank, smallest at the tails (f is NULL in some rows)
    p50_within_2pct := (SELECT count(*) FROM got JOIN want USING (k, ws)
                        WHERE got.p50 BETWEEN want.p48 AND want.p52
                           OR (got.p50 IS NULL AND want.p48 IS NULL));
    p99_within_2pct := (SELECT count(*) FROM got JOIN want USING (k, ws)
                        WHERE got.p99 BETWEEN want.p97 AND want.p100
                           OR (got.p99 IS NULL AND want.p97 IS NULL));
    DROP TABLE acc, got, want;
    RETURN NEXT;
END
$$;

SELECT * FROM check_sketches(40, 40);
SELECT * FROM check_sketches(60, 20);

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
DROP TABLE acc, sk_src;

DROP FUNCTION check_sketches(bigint, bigint);
DROP TABLE ev_s;
DROP EXTENSION tdigest;
DROP EXTENSION hll;
\endif
