-- Batch aggregation equals plain GROUP BY when no event is late.
--
-- The bound exceeds the disorder, so every event is on time and each
-- window's single pane must equal GROUP BY over the rows the window holds.
SET timezone = 'UTC';
SET client_min_messages = warning;
SELECT make_events('ev_a', 20000, 7, 3, 40, 1000000, 0, 0.11);

-- one shape: the engine's panes vs GROUP BY over window membership
-- computed by plain arithmetic (no windowagg function involved)
CREATE FUNCTION check_shape(size bigint, slide bigint, origin bigint)
RETURNS TABLE (size_ bigint, slide_ bigint, panes bigint, missing bigint,
               extra bigint, late_panes bigint)
LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE got AS
    SELECT * FROM windowagg.aggregate(
        $q$SELECT k, count(*) AS n, count(v) AS nv, sum(v) AS s, min(v) AS mn,
                  max(v) AS mx, avg(v) AS a FROM ev_a GROUP BY k$q$,
        'ewt', ARRAY[windowagg.hopping(size, slide, origin)],
        bound => 100, arrival_order => 'id')
      AS (k int, ws bigint, we bigint, n bigint, nv bigint, s bigint, mn int,
          mx int, a numeric, pane text, rev bigint);
    CREATE TEMP TABLE want AS
    SELECT e.k, w.ws, w.ws + size AS we, count(*) AS n, count(v) AS nv,
           sum(v) AS s, min(v) AS mn, max(v) AS mx, avg(v) AS a
    FROM ev_a e,
         LATERAL (SELECT e.ewt - ref_floor_mod(e.ewt - origin, slide)::bigint
                         - g * slide AS ws
                  FROM generate_series(0, (size - 1) / slide) g) w
    WHERE w.ws + size > e.ewt
    GROUP BY 1, 2, 3;
    size_ := size; slide_ := slide;
    SELECT count(*) INTO panes FROM got;
    SELECT count(*) INTO missing FROM (SELECT k, ws, we, n, nv, s, mn, mx, a FROM want
                                       EXCEPT SELECT k, ws, we, n, nv, s, mn, mx, a FROM got) x;
    SELECT count(*) INTO extra FROM (SELECT k, ws, we, n, nv, s, mn, mx, a FROM got
                                     EXCEPT SELECT k, ws, we, n, nv, s, mn, mx, a FROM want) x;
    SELECT count(*) INTO late_panes FROM got WHERE pane <> 'on_time' OR rev <> 1;
    DROP TABLE got, want;
    RETURN NEXT;
END
$$;
ALTER TABLE ev_a RENAME COLUMN t TO ewt;

SELECT * FROM check_shape(10, 10, 0);
SELECT * FROM check_shape(60, 10, 0);
-- a result larger than windowagg.result_memory spills to a temporary file
SHOW windowagg.result_memory;
SET windowagg.result_memory = '64kB';
SELECT * FROM check_shape(60, 1, 0);
RESET windowagg.result_memory;
SELECT * FROM check_shape(7, 7, 3);
SELECT * FROM check_shape(1000, 999, 0);
SELECT * FROM check_shape(25, 10, -4);

-- timestamptz event time: tumbling equals GROUP BY date_bin, float
-- aggregates within rounding, over text keys
CREATE TABLE readings AS
SELECT id, kt AS device, timestamptz '2024-01-01 00:00+00' + ewt * interval '1 s' AS read_at,
       f AS temp
FROM ev_a;
WITH got AS (
    SELECT * FROM windowagg.aggregate(
        $q$SELECT device, min(temp) AS lo, max(temp) AS hi, avg(temp) AS mean,
                  sum(temp) AS total, stddev(temp) AS sd, var_pop(temp) AS vp,
                  count(*) AS n
           FROM readings GROUP BY device$q$,
        'read_at', ARRAY[windowagg.tumbling('10 min')], bound => '2 min',
        arrival_order => 'id')
      AS (device text, ws timestamptz, we timestamptz, lo float8, hi float8,
          mean float8, total float8, sd float8, vp float8, n bigint, pane text,
          rev bigint)),
want AS (
    SELECT device, date_bin('10 min', read_at, timestamptz '1970-01-01+00') AS ws,
           min(temp) AS lo, max(temp) AS hi, avg(temp) AS mean, sum(temp) AS total,
           stddev(temp) AS sd, var_pop(temp) AS vp, count(*) AS n
    FROM readings GROUP BY 1, 2)
SELECT count(*) AS windows,
       count(*) FILTER (WHERE got.ws IS NULL OR want.ws IS NULL) AS unmatched,
       count(*) FILTER (WHERE got.we <> want.ws + interval '10 min') AS bad_end,
       count(*) FILTER (WHERE got.lo IS DISTINCT FROM want.lo OR got.hi IS DISTINCT FROM want.hi
                           OR got.n <> want.n) AS exact_mismatch,
       count(*) FILTER (WHERE abs(got.mean - want.mean) > 1e-9 * greatest(1, abs(want.mean))
                           OR abs(got.total - want.total) > 1e-9 * greatest(1, abs(want.total))
                           OR abs(got.sd - want.sd) > 1e-9 * greatest(1, abs(want.sd))
                           OR abs(got.vp - want.vp) > 1e-9 * greatest(1, abs(want.vp))) AS float_mismatch
FROM got FULL JOIN want USING (device, ws);

-- hopping over timestamptz vs a generate_series join; several windows at
-- once share one slice store and each equals its own GROUP BY
WITH got AS (
    SELECT * FROM windowagg.aggregate(
        $q$SELECT device, count(*) AS n, max(temp) AS hi FROM readings GROUP BY device$q$,
        'read_at', ARRAY[windowagg.hopping('1 hour', '10 min'), windowagg.tumbling('15 min'),
                         windowagg.hopping('30 min', '5 min', timestamptz '2024-01-01 00:01+00')],
        bound => '2 min', arrival_order => 'id')
      AS (device text, ws timestamptz, we timestamptz, n bigint, hi float8,
          pane text, rev bigint)),
want AS (
    SELECT device, s.ws, s.ws + sz AS we, count(*) AS n, max(temp) AS hi
    FROM readings r,
         (VALUES (interval '1 hour', interval '10 min', timestamptz '1970-01-01+00'),
                 ('15 min', '15 min', '1970-01-01+00'),
                 ('30 min', '5 min', '2024-01-01 00:01+00')) w(sz, sl, org),
         LATERAL (SELECT date_bin(w.sl, r.read_at, w.org) - g * w.sl AS ws
                  FROM generate_series(0, 11) g) s
    WHERE s.ws + w.sz > r.read_at
    GROUP BY 1, 2, 3)
SELECT (SELECT count(*) FROM got) AS panes,
       (SELECT count(*) FROM (SELECT device, ws, we, n, hi FROM got EXCEPT
                              SELECT device, ws, we, n, hi FROM want) x) AS extra,
       (SELECT count(*) FROM (SELECT device, ws, we, n, hi FROM want EXCEPT
                              SELECT device, ws, we, n, hi FROM got) x) AS missing;

-- keys of several types: bigint, uuid, composite (text, int), and NULLs,
-- each equal to GROUP BY
CREATE TABLE typed AS
SELECT id, ewt, k::bigint AS kb, md5(k::text)::uuid AS ku,
       CASE WHEN k = 3 THEN NULL ELSE kt END AS kn, k % 2 AS kp, v
FROM ev_a;
WITH got AS (
    SELECT * FROM windowagg.aggregate(
        $q$SELECT kb, ku, kn, kp, sum(v) AS s, count(*) AS n FROM typed GROUP BY kb, ku, kn, kp$q$,
        'ewt', ARRAY[windowagg.tumbling(50)], bound => 100, arrival_order => 'id')
      AS (kb bigint, ku uuid, kn text, kp int, ws bigint, we bigint, s bigint,
          n bigint, pane text, rev bigint)),
want AS (
    SELECT kb, ku, kn, kp, ewt - ref_floor_mod(ewt, 50)::bigint AS ws, sum(v) AS s,
           count(*) AS n
    FROM typed GROUP BY 1, 2, 3, 4, 5)
SELECT (SELECT count(*) FROM got) AS panes,
       (SELECT count(*) FROM got WHERE kn IS NULL) AS null_key_panes,
       (SELECT count(*) FROM (SELECT kb, ku, kn, kp, ws, s, n FROM got EXCEPT
                              SELECT kb, ku, kn, kp, ws, s, n FROM want) x) AS extra,
       (SELECT count(*) FROM (SELECT kb, ku, kn, kp, ws, s, n FROM want EXCEPT
                              SELECT kb, ku, kn, kp, ws, s, n FROM got) x) AS missing;

-- no GROUP BY: one global key; smallint/int event times; WHERE filters
SELECT * FROM windowagg.aggregate(
    $q$SELECT count(*) AS n, sum(v) AS s FROM ev_a WHERE k = 2 AND ewt < 300$q$,
    'ewt', ARRAY[windowagg.tumbling(100)], bound => 100, arrival_order => 'id')
  AS (ws bigint, we bigint, n bigint, s bigint, pane text, rev bigint);
SELECT ewt - ref_floor_mod(ewt, 100)::bigint AS ws, count(*) AS n, sum(v) AS s
FROM ev_a WHERE k = 2 AND ewt < 300 GROUP BY 1 ORDER BY 1;

-- empty input gives no panes
SELECT count(*) AS panes FROM windowagg.aggregate(
    $q$SELECT k, count(*) AS n FROM ev_a WHERE false GROUP BY k$q$,
    'ewt', ARRAY[windowagg.tumbling(10)]) AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
