-- Window constructors and window_starts()
SET timezone = 'UTC';

-- constructors: literal sizes resolve to intervals, integers to integer time
SELECT windowagg.tumbling('10 min') = windowagg.tumbling(interval '10 min') AS literal_is_interval;
SELECT (windowagg.tumbling(10)).*;
SELECT (windowagg.hopping(60, 10, 5)).*;
SELECT (windowagg.hopping('1 hour', '5 min')).size = 3600000000 AS one_hour_in_us;
SELECT (windowagg.tumbling('1 day')).size = 86400000000 AS day_is_24h;

-- bad sizes name the argument and the rule
SELECT windowagg.tumbling('1 month');
SELECT windowagg.hopping('1 hour', '1 year');
SELECT windowagg.tumbling('0 s');
SELECT windowagg.tumbling('-5 min');
SELECT windowagg.tumbling(0);
SELECT windowagg.hopping(10, -1);
SELECT windowagg.hopping(10, 20);
SELECT windowagg.tumbling(NULL::interval);
SELECT windowagg.tumbling('1 hour', 'infinity');

-- window_starts against brute force: every start w = origin + k*slide
-- (k in a generous range) with w <= ts < w + size
WITH cases(ts, size, slide, origin) AS (
    VALUES (0::bigint, 10::bigint, 10::bigint, 0::bigint), (-1, 10, 10, 0),
           (17, 60, 10, 0), (-17, 60, 10, 3), (5, 7, 7, -2), (999, 1000, 999, 0),
           (123456, 60, 1, 0), (-5, 12, 4, 1)),
got AS (
    SELECT c.*, array_agg(s ORDER BY s) AS starts
    FROM cases c, windowagg.window_starts(c.ts, c.size, c.slide, c.origin) s
    GROUP BY 1, 2, 3, 4),
want AS (
    SELECT c.*, array_agg(w ORDER BY w) AS starts
    FROM cases c,
         generate_series(-3000, 3000) k,
         LATERAL (SELECT c.origin + ((c.ts - c.origin) / c.slide + k) * c.slide AS w) x
    WHERE x.w <= c.ts AND c.ts < x.w + c.size
    GROUP BY 1, 2, 3, 4)
SELECT ts, size, slide, origin, got.starts = want.starts AS same, cardinality(got.starts) AS n
FROM got JOIN want USING (ts, size, slide, origin)
ORDER BY 1, 2, 3, 4;

-- timestamptz: the one tumbling start equals date_bin's bin
SELECT count(*) AS mismatches
FROM generate_series(timestamptz '2024-03-30 22:00+00', '2024-04-01 02:00+00', '7 min 13 s') ts,
     windowagg.window_starts(ts, '15 min') s
WHERE s <> date_bin('15 min', ts, timestamptz '1970-01-01 00:00+00');
SELECT windowagg.window_starts(timestamptz '2024-01-01 00:07+00', '20 min', '5 min');
SELECT windowagg.window_starts(timestamptz '2024-01-01 00:07+00', '1 hour', '1 hour',
                               timestamptz '2024-01-01 00:30+00');

-- near the int64 limits: a window reaching beyond bigint does not exist
-- (nothing wraps); those within it do
SELECT windowagg.window_starts(9223372036854775800, 10);
SELECT windowagg.window_starts(9223372036854775797, 10);
SELECT windowagg.window_starts(-9223372036854775808, 10);
SELECT windowagg.window_starts(-9223372036854775807, 10, 10, 3);
SELECT windowagg.window_starts(timestamptz 'infinity', '1 hour');

-- the starts stream, one per call: three of the 31.5 trillion windows of
-- a year sliding by a microsecond come at once
SET statement_timeout = '20s';
SELECT windowagg.window_starts(timestamptz '2024-01-01 00:00+00', '365 days', '1 microsecond')
LIMIT 3;
RESET statement_timeout;
