-- bench/sql/bench.sql: batch windowing vs plain SQL on the same rows.
--
-- Events: 1000 keys over 7 days, arriving with mild disorder (each event
-- is up to 5 seconds later than its event time).  Each query runs three
-- times (the slow plain join twice) and the best time is kept.
\pset footer off
\pset tuples_only on
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE EXTENSION windowagg;
-- the sketch cases need the hll and tdigest extensions
SELECT count(*) = 2 AS have_sketches
FROM pg_available_extensions WHERE name IN ('hll', 'tdigest') \gset
\if :have_sketches
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;
\endif

SELECT setseed(0.7);
CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY,
    k int NOT NULL,
    ts timestamptz NOT NULL,
    v float8 NOT NULL,
    amount numeric NOT NULL,        -- money: sum(numeric) is exact
    price numeric(12,2) NOT NULL,   -- the same, typed as money columns are
    u int NOT NULL                  -- a user, for distinct counts
);
-- arrival order: event time plus up to 5 s of delay
INSERT INTO events (k, ts, v, amount, price, u)
SELECT k, ts, v, round(v::numeric, 2), round(v::numeric, 2), (random() * 99999)::int
FROM (SELECT (random() * 999)::int AS k,
             timestamptz '2024-01-01+00' + (i * (604800.0 / :events) + random() * 5 - 5) * interval '1 s' AS ts,
             random() * 100 AS v
      FROM generate_series(1, :events) i) e;
CREATE TABLE hop_events AS SELECT * FROM events WHERE id <= :hop_events;
-- hopping windows over sketches: a smaller table (see run.sh)
CREATE TABLE hop_sketch_events AS SELECT * FROM events WHERE id <= :hop_sketch_events;
VACUUM ANALYZE events;
VACUUM ANALYZE hop_events;
VACUUM ANALYZE hop_sketch_events;

-- seconds to run a query and discard its rows (timed() is bench/timed.sql)
CREATE FUNCTION timed_rows(q text, runs int DEFAULT 3) RETURNS float8 LANGUAGE sql
RETURN timed('SELECT count(x) FROM (' || q || ') x', runs);
CREATE FUNCTION report(name text, n bigint, wa float8, plain float8) RETURNS text
LANGUAGE sql RETURN format('case=%s events=%s work_mem=%s windowagg_s=%s plain_s=%s ratio=%s',
                           name, n, current_setting('work_mem'), round(wa::numeric, 3),
                           round(plain::numeric, 3), round((plain / wa)::numeric, 2));

CREATE FUNCTION run_cases(mem text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM set_config('work_mem', mem, false);

    -- tumbling 1 hour: windowagg vs GROUP BY date_bin
    RETURN NEXT report('tumbling_1h', (SELECT count(*) FROM events),
        timed_rows($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM events GROUP BY k',
                  'ts', ARRAY[windowagg.tumbling('1 hour')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, n bigint, s float8, lo float8,
                    hi float8, pane text, rev bigint)$q$),
        timed_rows($q$SELECT k, date_bin('1 hour', ts, timestamptz '1970-01-01+00'), count(*), sum(v),
                      min(v), max(v)
                 FROM events GROUP BY 1, 2$q$));

    -- hopping 60 min every 1 min: windowagg vs a generate_series join
    RETURN NEXT report('hopping_60m_1m', (SELECT count(*) FROM hop_events),
        timed_rows($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM hop_events GROUP BY k',
                  'ts', ARRAY[windowagg.hopping('60 min', '1 min')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, n bigint, s float8, lo float8,
                    hi float8, pane text, rev bigint)$q$),
        timed_rows($q$SELECT k, ws, count(*), sum(v), min(v), max(v)
                 FROM hop_events,
                      generate_series(date_bin('1 min', ts, timestamptz '1970-01-01+00') - interval '59 min',
                                      date_bin('1 min', ts, timestamptz '1970-01-01+00'),
                                      interval '1 min') ws
                 GROUP BY 1, 2$q$, 2));
END
$f$;

-- Aggregates that run through their own functions (generic), against the
-- same aggregates in plain SQL; and the generic path against the kernel
-- on one aggregate both compute (sum(float8); FILTER (WHERE true) sends it
-- through the generic path): ratio = generic time / kernel time.
CREATE FUNCTION tumbling_case(name text, aggs text, coldefs text) RETURNS text
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN report(name, (SELECT count(*) FROM events),
        timed_rows(format($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, %s FROM events GROUP BY k',
                  'ts', ARRAY[windowagg.tumbling('1 hour')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, %s, pane text, rev bigint)$q$,
                aggs, coldefs)),
        timed_rows(format($q$SELECT k, date_bin('1 hour', ts, timestamptz '1970-01-01+00'), %s
                 FROM events GROUP BY 1, 2$q$, aggs)));
END
$f$;

CREATE FUNCTION hopping_case(name text, agg text, result_type text DEFAULT 'numeric',
                             source text DEFAULT 'hop_events') RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %I', source) INTO n;
    RETURN report(name, n,
        timed_rows(format($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, %s AS s FROM %I GROUP BY k',
                  'ts', ARRAY[windowagg.hopping('60 min', '1 min')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, s %s, pane text, rev bigint)$q$,
                agg, source, result_type)),
        timed_rows(format($q$SELECT k, ws, %s
                 FROM %I,
                      generate_series(date_bin('1 min', ts, timestamptz '1970-01-01+00') - interval '59 min',
                                      date_bin('1 min', ts, timestamptz '1970-01-01+00'),
                                      interval '1 min') ws
                 GROUP BY 1, 2$q$, agg, source), 2));
END
$f$;

CREATE FUNCTION run_generic_cases(mem text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM set_config('work_mem', mem, false);
    RETURN NEXT tumbling_case('tumbling_1h_sum_numeric', 'sum(amount) AS s', 's numeric');
    IF (SELECT count(*) = 2 FROM pg_extension WHERE extname IN ('hll', 'tdigest')) THEN
        RETURN NEXT tumbling_case('tumbling_1h_hll',
            'hll_cardinality(hll_add_agg(hll_hash_integer(u))) AS d', 'd float8');
        RETURN NEXT tumbling_case('tumbling_1h_tdigest_p99',
            'tdigest_percentile(v, 100, 0.99) AS p99', 'p99 float8');
    END IF;
    RETURN NEXT hopping_case('hopping_60m_1m_sum_numeric', 'sum(amount)');
    -- numeric(12,2): sums as fixed-point integers, on a kernel
    RETURN NEXT tumbling_case('tumbling_1h_sum_numeric_12_2', 'sum(price) AS s', 's numeric');
    RETURN NEXT hopping_case('hopping_60m_1m_sum_numeric_12_2', 'sum(price)');
    -- sketches: each window merges sketches, where the join adds rows
    IF (SELECT count(*) = 2 FROM pg_extension WHERE extname IN ('hll', 'tdigest')) THEN
        RETURN NEXT hopping_case('hopping_60m_1m_tdigest_p99', 'tdigest_percentile(v, 100, 0.99)',
                                 'float8', 'hop_sketch_events');
        RETURN NEXT hopping_case('hopping_60m_1m_hll',
                                 'hll_cardinality(hll_add_agg(hll_hash_integer(u)))',
                                 'float8', 'hop_sketch_events');
    END IF;
    RETURN NEXT replace(replace(report('generic_vs_kernel_sum_float8', (SELECT count(*) FROM events),
        timed_rows($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, sum(v) AS s FROM events GROUP BY k',
                  'ts', ARRAY[windowagg.tumbling('1 hour')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, s float8, pane text, rev bigint)$q$),
        timed_rows($q$SELECT * FROM windowagg.aggregate(
                  'SELECT k, sum(v) FILTER (WHERE true) AS s FROM events GROUP BY k',
                  'ts', ARRAY[windowagg.tumbling('1 hour')], bound => '5 s')
                AS (k int, ws timestamptz, we timestamptz, s float8, pane text, rev bigint)$q$)),
        'windowagg_s=', 'kernel_s='), 'plain_s=', 'generic_s=');
END
$f$;

SELECT run_cases('4MB');
SELECT run_cases('256MB');
SELECT run_generic_cases('4MB');
SELECT run_generic_cases('256MB');
