-- Late and too-late events against a reference that replays the
-- watermark row by row (ref_accept in t_00_setup).
SET timezone = 'UTC';
SET client_min_messages = warning;

-- A stream where every 37th event is pushed back by up to 300 ticks: with
-- bound 20 and lateness 60 some of those are late but accepted, some are
-- too late for some windows, and some are too late for all.
SELECT make_events('ev_l', 6000, 5, 2, 15, 37, 300, 0.23);

CREATE FUNCTION check_late(sizes bigint[], slides bigint[], origins bigint[],
                           bound bigint, lateness bigint, aggs text DEFAULT 'all')
RETURNS TABLE (panes bigint, late_panes bigint, windows bigint, wrong_final bigint,
               missing_windows bigint, fired_windows_without_late_pane bigint,
               bad_revisions bigint, dropped bigint, dropped_mismatch bigint)
LANGUAGE plpgsql AS $$
DECLARE
    wins windowagg.window[];
BEGIN
    SELECT array_agg(windowagg.hopping(sizes[i], slides[i], origins[i]) ORDER BY i)
      INTO wins FROM generate_subscripts(sizes, 1) i;

    CREATE TEMP TABLE acc AS
    SELECT * FROM ref_accept('ev_l', sizes::numeric[], slides::numeric[],
                             origins::numeric[], bound, lateness);
    -- min and max alone let windows be computed from overlapping parents
    IF aggs = 'minmax' THEN
        CREATE TEMP TABLE got AS
        SELECT k, ws, we, NULL::bigint AS n, NULL::bigint AS s, mn, mx, pane, rev
        FROM windowagg.aggregate(
            $q$SELECT k, min(v) AS mn, max(v) AS mx FROM ev_l GROUP BY k$q$,
            't', wins, bound => bound, lateness => lateness, arrival_order => 'id')
          AS (k int, ws bigint, we bigint, mn int, mx int, pane text, rev bigint);
    ELSE
        CREATE TEMP TABLE got AS
        SELECT * FROM windowagg.aggregate(
            $q$SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx
               FROM ev_l GROUP BY k$q$,
            't', wins, bound => bound, lateness => lateness, arrival_order => 'id')
          AS (k int, ws bigint, we bigint, n bigint, s bigint, mn int, mx int,
              pane text, rev bigint);
    END IF;

    SELECT count(*), count(*) FILTER (WHERE g.pane = 'late') INTO panes, late_panes FROM got g;

    -- final value of each window: its last revision vs the fold of exactly
    -- the events the reference says it accepted
    CREATE TEMP TABLE final AS
    SELECT DISTINCT ON (g.k, g.ws, g.we) g.* FROM got g ORDER BY g.k, g.ws, g.we, g.rev DESC;
    CREATE TEMP TABLE want AS
    SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we, count(*) AS n, sum(e.v) AS s,
           min(e.v) AS mn, max(e.v) AS mx
    FROM acc a JOIN ev_l e USING (id) WHERE a.ws IS NOT NULL GROUP BY 1, 2, 3;
    IF aggs = 'minmax' THEN
        UPDATE want SET n = NULL, s = NULL;
    END IF;
    SELECT count(*) INTO windows FROM want;
    SELECT count(*) INTO wrong_final FROM (
        SELECT k, ws, we, n, s, mn, mx FROM final EXCEPT SELECT * FROM want) x;
    SELECT count(*) INTO missing_windows FROM (
        SELECT * FROM want EXCEPT SELECT k, ws, we, n, s, mn, mx FROM final) x;

    -- a window that accepted an event after it had fired shows a late pane
    SELECT count(*) INTO fired_windows_without_late_pane FROM (
        SELECT DISTINCT e.k, a.ws::bigint AS ws, a.we::bigint AS we
        FROM acc a JOIN ev_l e USING (id) WHERE a.was_fired
        EXCEPT SELECT k, ws, we FROM got WHERE pane = 'late') x;

    -- revisions of a window are 1, 2, 3, ... with on_time only as 1
    SELECT count(*) INTO bad_revisions FROM (
        SELECT k, ws, we, array_agg(rev ORDER BY rev) AS revs,
               bool_and(pane = 'late' OR rev = 1) AS kinds_ok
        FROM got GROUP BY 1, 2, 3) x
    WHERE revs <> (SELECT array_agg(i::bigint) FROM generate_series(1, cardinality(revs)) i)
       OR NOT kinds_ok;

    -- dropped rows: exactly the events no window accepted, with the
    -- watermark they met
    CREATE TEMP TABLE drops AS
    SELECT * FROM windowagg.dropped(
        $q$SELECT k, count(*) AS n FROM ev_l GROUP BY k$q$,
        't', wins, bound => bound, lateness => lateness, arrival_order => 'id')
      AS (k int, t bigint, wm bigint, arrival bigint);
    SELECT count(*) INTO dropped FROM drops;
    SELECT count(*) INTO dropped_mismatch FROM (
        (SELECT e.k, e.t, a.wm::bigint, a.id FROM acc a JOIN ev_l e USING (id) WHERE a.ws IS NULL
         EXCEPT SELECT * FROM drops)
        UNION ALL
        (SELECT * FROM drops
         EXCEPT SELECT e.k, e.t, a.wm::bigint, a.id FROM acc a JOIN ev_l e USING (id) WHERE a.ws IS NULL)) x;

    DROP TABLE acc, got, final, want, drops;
    RETURN NEXT;
END
$$;

-- the stream really has late, partially accepted and dropped events
SELECT * FROM check_late('{10}', '{10}', '{0}', 20, 60);
SELECT * FROM check_late('{60}', '{10}', '{0}', 20, 60);
SELECT * FROM check_late('{60}', '{1}', '{0}', 20, 60);
SELECT * FROM check_late('{7}', '{7}', '{3}', 20, 60);
SELECT * FROM check_late('{1000}', '{999}', '{0}', 20, 60);
SELECT * FROM check_late('{10,60,30}', '{10,10,15}', '{0,0,5}', 20, 60);
-- several windows computed from each other (windowagg.explain shows the
-- plans): the paper's tumbling 10/20/30/40, hopping windows from hopping
-- ones (min/max only), and a set where the planner adds a factor window
SELECT * FROM check_late('{10,20,30,40}', '{10,20,30,40}', '{0,0,0,0}', 20, 60);
SELECT * FROM check_late('{10,20,30,40}', '{10,20,30,40}', '{0,0,0,0}', 20, 60, 'minmax');
SELECT * FROM check_late('{20,10,40}', '{5,5,10}', '{0,0,0}', 20, 60, 'minmax');
SELECT * FROM check_late('{20,30,40,7}', '{20,30,40,7}', '{0,0,0,0}', 20, 60);
SELECT * FROM check_late('{20,30,40,7}', '{20,30,40,7}', '{0,0,0,0}', 20, 60, 'minmax');
-- and the same windows computed from slices alone
SET windowagg.share_windows = off;
SELECT * FROM check_late('{10,20,30,40}', '{10,20,30,40}', '{0,0,0,0}', 20, 60);
RESET windowagg.share_windows;
-- no lateness at all, and lateness so long that nothing is dropped
SELECT * FROM check_late('{20}', '{5}', '{0}', 0, 0);
SELECT * FROM check_late('{20}', '{5}', '{0}', 10, 100000);

-- timestamptz: a late reading refines its window with revision 2, a
-- reading past lateness is dropped, and the windows around it are unchanged
CREATE TABLE late_readings (id int, device text, read_at timestamptz, temp float8);
INSERT INTO late_readings VALUES
    (1, 'a', '2024-01-01 10:00:10+00', 20.0),
    (2, 'a', '2024-01-01 10:04:00+00', 21.0),
    (3, 'b', '2024-01-01 10:06:00+00', 30.0),   -- watermark passes 10:05
    (4, 'a', '2024-01-01 10:03:00+00', 25.0),   -- late, within lateness
    (5, 'a', '2024-01-01 10:09:00+00', 22.0),
    (6, 'a', '2024-01-01 10:02:00+00', 99.0),   -- past lateness: dropped
    (7, 'b', '2024-01-01 10:12:00+00', 31.0);
SELECT * FROM windowagg.aggregate(
    $q$SELECT device, max(temp) AS hi, count(*) AS n FROM late_readings GROUP BY device$q$,
    'read_at', ARRAY[windowagg.tumbling('5 min')], bound => '30 s', lateness => '3 min',
    arrival_order => 'id')
  AS (device text, window_start timestamptz, window_end timestamptz, hi float8, n bigint,
      pane text, revision bigint);
SELECT * FROM windowagg.dropped(
    $q$SELECT device, max(temp) AS hi FROM late_readings GROUP BY device$q$,
    'read_at', ARRAY[windowagg.tumbling('5 min')], bound => '30 s', lateness => '3 min',
    arrival_order => 'id')
  AS (device text, read_at timestamptz, watermark timestamptz, arrival bigint);
