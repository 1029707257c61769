-- windowagg's moving aggregates against the built-ins, row by row, over
-- random data with NULLs, ties, peers, partitions and every frame shape.
SET client_min_messages = warning;
SET timezone = 'UTC';
SELECT setseed(0.61);
CREATE TABLE mv AS
SELECT i AS id,
       (random() * 4)::int AS p,                           -- partitions
       (random() * 300)::int AS o,                         -- order, with ties
       timestamptz '2024-01-01+00' + (random() * 1000)::int * interval '1 min' AS ot,
       CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 200 - 100)::int2 END AS i2,
       CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 2e6 - 1e6)::int4 END AS i4,
       CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 2e15)::int8 - 1000000000000000 END AS i8,
       CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 100)::float4 END AS f4,
       CASE WHEN random() < 0.1 THEN NULL
            WHEN random() < 0.01 THEN 'NaN'::float8
            WHEN random() < 0.01 THEN 'Infinity'::float8
            ELSE random() * 1000 - 500 END AS f8,
       CASE WHEN random() < 0.1 THEN NULL ELSE round((random() * 1000)::numeric, 3) END AS num,
       CASE WHEN random() < 0.1 THEN NULL
            ELSE timestamptz '2020-01-01+00' + random() * interval '1000 days' END AS tz,
       CASE WHEN random() < 0.1 THEN NULL ELSE md5((random() * 50)::int::text) END AS txt
FROM generate_series(1, 3000) i;

CREATE TABLE frames (n serial, clause text);
INSERT INTO frames (clause) VALUES
    ('PARTITION BY p ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW'),
    ('PARTITION BY p ORDER BY id ROWS BETWEEN 10 PRECEDING AND 2 FOLLOWING'),
    ('PARTITION BY p ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 5 FOLLOWING'),
    ('PARTITION BY p ORDER BY id ROWS BETWEEN 40 PRECEDING AND 30 PRECEDING'),
    ('PARTITION BY p ORDER BY o ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW'),
    ('PARTITION BY p ORDER BY o, id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING'),
    ('PARTITION BY p ORDER BY o RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING'),
    ('PARTITION BY p ORDER BY o RANGE BETWEEN CURRENT ROW AND CURRENT ROW'),
    ('PARTITION BY p ORDER BY o'),
    ('PARTITION BY p'),
    ('ORDER BY o GROUPS BETWEEN 2 PRECEDING AND 1 FOLLOWING'),
    ('PARTITION BY p ORDER BY id ROWS BETWEEN 5 PRECEDING AND 5 FOLLOWING EXCLUDE CURRENT ROW'),
    ('PARTITION BY p ORDER BY o GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP'),
    ('PARTITION BY p ORDER BY o RANGE BETWEEN 3 PRECEDING AND CURRENT ROW EXCLUDE TIES'),
    ('PARTITION BY p ORDER BY ot RANGE BETWEEN interval ''30 min'' PRECEDING AND interval ''10 min'' FOLLOWING'),
    ('ORDER BY id ROWS BETWEEN 200 PRECEDING AND CURRENT ROW');

-- equality for floats: same NULLness and NaN-ness, same infinities,
-- otherwise within a relative tolerance
CREATE FUNCTION float_same(a float8, b float8, tol float8) RETURNS boolean
LANGUAGE sql IMMUTABLE
RETURN (a IS NULL AND b IS NULL)
    OR (a IS NOT NULL AND b IS NOT NULL AND
        (a = b OR (a <> 'NaN' AND b <> 'NaN' AND abs(a - b) <= tol * greatest(1, abs(b)))));

-- rows where windowagg.<agg>(<col>) differs from <agg>(<col>) over a frame
CREATE FUNCTION mismatches(agg text, col text, clause text, tol float8)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format($q$
        SELECT count(*) FROM (
            SELECT windowagg.%1$s(%2$s) OVER w AS ours, %1$s(%2$s) OVER w AS theirs
            FROM mv WINDOW w AS (%3$s)) s
        WHERE %4$s$q$,
        agg, col, clause,
        CASE WHEN tol IS NULL THEN 'ours IS DISTINCT FROM theirs'
             ELSE format('NOT float_same(ours::float8, theirs::float8, %s)', tol) END)
    INTO n;
    RETURN n;
END
$$;

-- the comparison can fail: max against min differs on most rows
SELECT count(*) > 1000 AS control_detects_differences FROM (
    SELECT windowagg.max(i4) OVER w AS ours, min(i4) OVER w AS theirs
    FROM mv WINDOW w AS (PARTITION BY p ORDER BY id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)) s
WHERE ours IS DISTINCT FROM theirs;

-- min and max over every ordered type, exactly
SELECT f.n, sum(mismatches(a.agg, c.col, f.clause, NULL)) AS minmax_mismatches
FROM frames f,
     (VALUES ('min'), ('max')) a(agg),
     (VALUES ('i2'), ('i4'), ('i8'), ('f4'), ('f8'), ('num'), ('tz'), ('txt')) c(col)
GROUP BY f.n ORDER BY f.n;

-- float sums, averages, variances and deviations, within rounding
SELECT f.n, sum(mismatches(a.agg, c.col, f.clause, CASE WHEN c.col = 'f4' AND a.agg = 'sum' THEN 1e-5 ELSE 1e-9 END))
         AS float_mismatches
FROM frames f,
     (VALUES ('sum'), ('avg'), ('variance'), ('var_samp'), ('var_pop'),
             ('stddev'), ('stddev_samp'), ('stddev_pop')) a(agg),
     (VALUES ('f4'), ('f8')) c(col)
GROUP BY f.n ORDER BY f.n;

-- the result types are the built-ins'
SELECT pg_typeof(windowagg.min(i2)) AS min_i2, pg_typeof(windowagg.max(txt)) AS max_txt,
       pg_typeof(windowagg.sum(f4)) AS sum_f4, pg_typeof(windowagg.avg(f4)) AS avg_f4,
       pg_typeof(windowagg.stddev(f8)) AS stddev_f8
FROM mv;

-- as plain aggregates
SELECT p, windowagg.min(i8) = min(i8) AS min_ok, windowagg.max(txt) = max(txt) AS max_ok,
       float_same(windowagg.sum(f8), sum(f8), 1e-9) AS sum_ok,
       float_same(windowagg.var_pop(f8), var_pop(f8), 1e-9) AS var_ok
FROM mv GROUP BY p ORDER BY p;

-- a NaN or an Infinity affects only the frames that contain it
CREATE TABLE spikes (id int, x float8);
INSERT INTO spikes VALUES (1, 1), (2, 2), (3, 'NaN'), (4, 4), (5, 5), (6, 6),
                          (7, 'Infinity'), (8, 8), (9, 9), (10, 10);
SELECT id, x,
       windowagg.sum(x) OVER w AS sum3, windowagg.max(x) OVER w AS max3,
       windowagg.min(x) OVER w AS min3, windowagg.avg(x) OVER w AS avg3
FROM spikes WINDOW w AS (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
ORDER BY id;

-- empty frames and all-NULL frames give NULL, as the built-ins do
SELECT id, windowagg.max(x) OVER w, max(x) OVER w, windowagg.sum(x) OVER w, sum(x) OVER w
FROM (VALUES (1, NULL::float8), (2, NULL), (3, 3.0)) v(id, x)
WINDOW w AS (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 1 FOLLOWING)
ORDER BY id;

-- a type without a btree ordering is refused with a clear error
SELECT windowagg.max(point(1, 2));

-- large by-reference values leave the frame safely (the oldest value is
-- released only after the frame has moved past it)
SELECT count(*) FILTER (WHERE ours IS DISTINCT FROM theirs) AS mismatches, count(*) AS n
FROM (SELECT length(windowagg.min(repeat('x', 300000) || i) OVER w) AS ours,
             length(min(repeat('x', 300000) || i) OVER w) AS theirs
      FROM generate_series(1, 30) i
      WINDOW w AS (ORDER BY i ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)) s;
