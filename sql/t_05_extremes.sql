-- Integer event times near the int64 limits: floor division and window
-- bounds must neither overflow nor wrap.  Checked against the reference.
SET timezone = 'UTC';
SET client_min_messages = warning;

CREATE TABLE ev_hi (id bigint, k int, t bigint, v int);
CREATE TABLE ev_lo (id bigint, k int, t bigint, v int);
SELECT setseed(0.5);
INSERT INTO ev_hi
SELECT i, i % 3, 9223372036854775807 - 100 - 4000 + i * 2 - (random() * 30)::bigint
       - CASE WHEN i % 25 = 0 THEN 200 ELSE 0 END, i
FROM generate_series(1, 2000) i;
INSERT INTO ev_lo
SELECT i, i % 3, -9223372036854775808 + 100 + i * 2 - (random() * 30)::bigint
       + CASE WHEN i % 25 = 0 THEN 0 ELSE 60 END, i
FROM generate_series(1, 2000) i;

CREATE FUNCTION check_extreme(tab regclass, size bigint, slide bigint, origin bigint,
                              bound bigint, lateness bigint)
RETURNS TABLE (panes bigint, windows bigint, wrong_final bigint, missing bigint,
               dropped bigint, dropped_mismatch bigint)
LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE acc AS
    SELECT * FROM ref_accept(tab, ARRAY[size::numeric], ARRAY[slide::numeric],
                             ARRAY[origin::numeric], bound, lateness);
    EXECUTE format($f$CREATE TEMP TABLE got AS
        SELECT * FROM windowagg.aggregate(
            'SELECT k, count(*) AS n, sum(v) AS s FROM %s GROUP BY k', 't',
            ARRAY[windowagg.hopping(%s, %s, %s)], bound => %s, lateness => %s,
            arrival_order => 'id')
        AS (k int, ws bigint, we bigint, n bigint, s bigint, pane text, rev bigint)$f$,
        tab, size, slide, origin, bound, lateness);
    EXECUTE format($f$CREATE TEMP TABLE want AS
        SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we, count(*) AS n, sum(e.v) AS s
        FROM acc a JOIN %s e USING (id) WHERE a.ws IS NOT NULL GROUP BY 1, 2, 3$f$, tab);
    SELECT count(*) INTO panes FROM got;
    SELECT count(*) INTO windows FROM want;
    SELECT count(*) INTO wrong_final FROM (
        (SELECT DISTINCT ON (k, ws, we) k, ws, we, n, s FROM got ORDER BY k, ws, we, rev DESC)
        EXCEPT SELECT * FROM want) x;
    SELECT count(*) INTO missing FROM (
        SELECT * FROM want EXCEPT SELECT k, ws, we, n, s FROM got) x;
    EXECUTE format($f$CREATE TEMP TABLE drops AS
        SELECT * FROM windowagg.dropped(
            'SELECT k, count(*) AS n FROM %s GROUP BY k', 't',
            ARRAY[windowagg.hopping(%s, %s, %s)], bound => %s, lateness => %s,
            arrival_order => 'id')
        AS (k int, t bigint, wm bigint, arrival bigint)$f$,
        tab, size, slide, origin, bound, lateness);
    SELECT count(*) INTO dropped FROM drops;
    SELECT count(*) INTO dropped_mismatch FROM (
        (SELECT id FROM acc WHERE ws IS NULL EXCEPT SELECT arrival FROM drops)
        UNION ALL
        (SELECT arrival FROM drops EXCEPT SELECT id FROM acc WHERE ws IS NULL)) x;
    DROP TABLE acc, got, want, drops;
    RETURN NEXT;
END
$$;

SELECT * FROM check_extreme('ev_hi', 10, 10, 0, 20, 30);
SELECT * FROM check_extreme('ev_hi', 60, 7, 3, 20, 30);
SELECT * FROM check_extreme('ev_lo', 10, 10, 0, 20, 30);
SELECT * FROM check_extreme('ev_lo', 60, 7, -3, 20, 30);
SELECT * FROM check_extreme('ev_lo', 1000, 999, 0, 5, 0);

-- Found by the query fuzzer (test/fuzz/fuzz_agg_query.c).
-- An event that only windows beyond bigint's range would take is dropped,
-- not lost: [3, 3 + 2^63 - 1) does not exist, and [0, 10) has closed when
-- the event at 5 comes after the one at 100.
CREATE TABLE ev_beyond (id int, k int, t bigint);
INSERT INTO ev_beyond VALUES (1, 1, 100), (2, 1, 5), (3, 1, 103);
SELECT * FROM windowagg.dropped('SELECT k, count(*) FROM ev_beyond GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10), windowagg.tumbling(9223372036854775807, 3)],
    arrival_order => 'id') AS (k int, t bigint, wm bigint, arrival bigint);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_beyond GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10), windowagg.tumbling(9223372036854775807, 3)],
    arrival_order => 'id') AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- arrival_order names a column of the source even when the row query's
-- own columns could be named alike: here id 2 arrives first, so the event
-- at 10 comes after the watermark reached 20
CREATE TABLE ev_alias (id int, t bigint, "windowagg column 1" int);
INSERT INTO ev_alias VALUES (1, 10, 2), (2, 20, 1);
SELECT * FROM windowagg.dropped('SELECT count(*) FROM ev_alias', 't', ARRAY[windowagg.tumbling(10)],
    arrival_order => '"windowagg column 1"') AS (t bigint, wm bigint, arrival bigint);
-- the same through an alias list, which renames the source's columns
CREATE TABLE ev_alias2 (id int, t bigint, ord int);
INSERT INTO ev_alias2 VALUES (1, 10, 2), (2, 20, 1);
SELECT * FROM windowagg.dropped('SELECT count(*) FROM ev_alias2 AS e(id, t, "windowagg column 1")', 't',
    ARRAY[windowagg.tumbling(10)], arrival_order => '"windowagg column 1"')
    AS (t bigint, wm bigint, arrival bigint);
