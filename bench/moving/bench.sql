-- bench/moving/bench.sql: moving max and float sum over ROWS frames.
--
-- 10 partitions of rows/10, ordered by t; frames of w PRECEDING AND
-- CURRENT ROW.  Every query sums its window column so nothing is pruned.
-- Fast queries take the best of three runs, the built-ins at large w one.
\pset footer off
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

SELECT setseed(0.9);
CREATE TABLE series AS
SELECT i % 10 AS k, i / 10 AS t, random() * 1000 AS x, random() * 1000 AS f
FROM generate_series(0, :rows - 1) i;
VACUUM ANALYZE series;
-- read the table once so the first timed query does not pay for caching it
SELECT count(*) FROM series \g /dev/null

CREATE FUNCTION frame_query(expr text, w int) RETURNS text LANGUAGE sql
RETURN format('SELECT sum(v) FROM (SELECT %s OVER (PARTITION BY k ORDER BY t ROWS BETWEEN %s PRECEDING AND CURRENT ROW) AS v FROM series) s',
              expr, w);

CREATE TABLE results (w int, floor_s float8, wa_max_s float8, pg_max_s float8,
                      wa_sum_s float8, pg_sum_s float8);
DO $$
DECLARE
    w int;
BEGIN
    FOREACH w IN ARRAY ARRAY[10, 100, 1000, 10000] LOOP
        INSERT INTO results VALUES (
            w,
            timed(frame_query('row_number()', w), 3),
            timed(frame_query('windowagg.max(x)', w), 3),
            CASE WHEN w <= 1000 THEN timed(frame_query('max(x)', w), CASE WHEN w <= 100 THEN 3 ELSE 1 END) END,
            timed(frame_query('windowagg.sum(f)', w), 3),
            CASE WHEN w <= 1000 THEN timed(frame_query('sum(f)', w), CASE WHEN w <= 100 THEN 3 ELSE 1 END) END);
    END LOOP;
END
$$;

SELECT format('w=%s floor_s=%s windowagg_max_s=%s builtin_max_s=%s max_speedup=%s max_vs_floor=%s windowagg_sum_s=%s builtin_sum_s=%s sum_speedup=%s sum_vs_floor=%s',
              w, round(floor_s::numeric, 3),
              round(wa_max_s::numeric, 3), coalesce(round(pg_max_s::numeric, 3)::text, 'skipped'),
              coalesce(round((pg_max_s / wa_max_s)::numeric, 1)::text, '-'),
              round((wa_max_s / floor_s)::numeric, 2),
              round(wa_sum_s::numeric, 3), coalesce(round(pg_sum_s::numeric, 3)::text, 'skipped'),
              coalesce(round((pg_sum_s / wa_sum_s)::numeric, 1)::text, '-'),
              round((wa_sum_s / floor_s)::numeric, 2))
FROM results ORDER BY w;
