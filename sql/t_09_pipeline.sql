-- Continuous pipelines against the row-by-row reference (ref_accept in
-- t_00_setup) and against the batch function, over a stream that arrives
-- in batches of uneven size, with a pause and resume (the worker restarts
-- from its checkpoint) in the middle.
SET timezone = 'UTC';
SET client_min_messages = warning;

-- 9000 events over 7 keys; every 29th pushed back by up to 300 ticks
SELECT make_events('ev_p', 9000, 7, 2, 15, 29, 300, 0.41);

CREATE TABLE src_p (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    k int NOT NULL, kt text, t bigint, v int, f float8);

-- keys as text (byte keys) over every row; integer keys over a filtered view
-- of the same rows (the WHERE clause), into a result table of another name
SELECT windowagg.create_pipeline(
    name => 'p_text',
    query => $$SELECT kt, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx,
                      count(v) AS nv FROM src_p GROUP BY kt$$,
    event_time => 't',
    windows => ARRAY[windowagg.hopping(40, 10), windowagg.tumbling(30, 5)],
    bound => 20, lateness => 60) > 0 AS created;
SELECT windowagg.create_pipeline(
    name => 'p_int',
    query => $$SELECT k, count(*) AS n, sum(v) AS s, max(f) AS mxf
               FROM src_p WHERE v > -500 GROUP BY k$$,
    event_time => 't',
    windows => ARRAY[windowagg.tumbling(25)],
    bound => 20, lateness => 60,
    result_table => 'p_int_results') > 0 AS created;
-- aligned windows: the worker runs the coverage plan (20 and 30 from 10,
-- 40 from 20), late panes included
SELECT windowagg.create_pipeline(
    name => 'p_shared',
    query => $$SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx
               FROM src_p GROUP BY k$$,
    event_time => 't',
    windows => ARRAY[windowagg.tumbling(10), windowagg.tumbling(20),
                     windowagg.tumbling(30), windowagg.tumbling(40)],
    bound => 20, lateness => 60) > 0 AS created;
SELECT * FROM windowagg.explain('p_shared');

-- the result, dead-letter and live relations exist, with the right columns
SELECT c.relname, c.relkind,
       string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
WHERE c.relname IN ('p_text', 'p_text_dead_letters', 'p_text_live', 'p_int_results')
GROUP BY 1, 2 ORDER BY 1;
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid IN ('p_text'::regclass, 'p_int_results'::regclass) AND contype IN ('p', 'u')
ORDER BY 1;

-- Feed the stream in uneven batches; wait() after some of them only, so
-- that epochs cover different spans each time.
CREATE FUNCTION feed(lo int, hi int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO src_p (k, kt, t, v, f)
    SELECT k, kt, t, v, f FROM ev_p WHERE id BETWEEN lo AND hi ORDER BY id
$$;
SELECT feed(1, 1000);
SELECT windowagg.wait('p_text') AND windowagg.wait('p_int') AND windowagg.wait('p_shared') AS caught_up;

-- live windows: exactly the windows that hold accepted events and have
-- not fired at the watermark the prefix leaves (max t - bound)
CREATE VIEW ev_prefix AS SELECT * FROM ev_p WHERE id <= 1000;
CREATE TEMP TABLE live_want AS
WITH acc AS (SELECT * FROM ref_accept('ev_prefix', '{40,30}', '{10,30}', '{0,5}', 20, 60)),
     wm AS (SELECT max(t) - 20 AS wm FROM ev_prefix)
SELECT e.kt, a.ws::bigint AS ws, a.we::bigint AS we, count(*) AS n, sum(e.v) AS s,
       min(e.v) AS mn, max(e.v) AS mx, count(e.v) AS nv
FROM acc a JOIN ev_prefix e USING (id), wm
WHERE a.ws IS NOT NULL AND a.we > wm.wm GROUP BY 1, 2, 3;
SELECT (SELECT count(*) FROM live_want) AS live_windows,
       (SELECT count(*) FROM (SELECT * FROM p_text_live EXCEPT SELECT * FROM live_want) x) AS unexpected,
       (SELECT count(*) FROM (SELECT * FROM live_want EXCEPT SELECT * FROM p_text_live) x) AS missing,
       (SELECT count(*) FROM p_text_live l JOIN p_text r USING (kt, window_start, window_end)) AS also_fired;

SELECT feed(1001, 1003);
SELECT feed(1004, 2500);
SELECT windowagg.wait('p_text') AS caught_up;
SELECT feed(2501, 4000);

-- pause: the workers stop; resume: they restore their checkpoint and go on
SELECT windowagg.pause('p_text'), windowagg.pause('p_int');
SELECT feed(4001, 5000);
SELECT name, status FROM windowagg.stat_pipelines ORDER BY name;
SELECT windowagg.resume('p_text'), windowagg.resume('p_int');
SELECT feed(5001, 7777);
SELECT windowagg.wait('p_int') AS caught_up;
SELECT feed(7778, 9000);

-- end of input
SELECT windowagg.flush('p_text') AND windowagg.flush('p_int') AND windowagg.flush('p_shared')
    AS flushed;

-- (a) the reference: final value of every window = fold of exactly the
-- events the window accepted, replayed row by row
CREATE FUNCTION compare_pipeline(events regclass, sizes numeric[], slides numeric[],
                                 origins numeric[], res regclass, dead regclass,
                                 keycol text, aggs text)
RETURNS TABLE (windows bigint, wrong bigint, missing bigint, dead_letters bigint,
               dead_wrong bigint, bad_revisions bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$CREATE TEMP TABLE want AS
        SELECT e.%1$I, a.ws::bigint AS window_start, a.we::bigint AS window_end, %2$s
        FROM ref_accept(%3$L, %4$L, %5$L, %6$L, 20, 60) a JOIN %3$s e USING (id)
        WHERE a.ws IS NOT NULL GROUP BY 1, 2, 3$q$,
        keycol, aggs, events, sizes, slides, origins);
    EXECUTE format($q$CREATE TEMP TABLE dead_want AS
        SELECT a.id FROM ref_accept(%1$L, %2$L, %3$L, %4$L, 20, 60) a WHERE a.ws IS NULL$q$,
        events, sizes, slides, origins);
    EXECUTE format('CREATE TEMP TABLE got AS SELECT * FROM %s', res);
    ALTER TABLE got DROP COLUMN pane, DROP COLUMN revision, DROP COLUMN updated_at;
    SELECT count(*) INTO windows FROM want;
    SELECT count(*) INTO wrong FROM (SELECT * FROM got EXCEPT SELECT * FROM want) x;
    SELECT count(*) INTO missing FROM (SELECT * FROM want EXCEPT SELECT * FROM got) x;
    EXECUTE format('SELECT count(*) FROM %s', dead) INTO dead_letters;
    EXECUTE format($q$SELECT count(*) FROM (
        (SELECT arrival FROM %1$s EXCEPT SELECT id FROM dead_want)
        UNION ALL (SELECT id FROM dead_want EXCEPT SELECT arrival FROM %1$s)) x$q$, dead)
      INTO dead_wrong;
    -- a first emission has revision 1; only late upserts raise it
    EXECUTE format($q$SELECT count(*) FROM %s
        WHERE revision < 1 OR (revision > 1 AND pane <> 'late')$q$, res) INTO bad_revisions;
    DROP TABLE want, dead_want, got;
    RETURN NEXT;
END
$$;

SELECT * FROM compare_pipeline('ev_p', '{40,30}', '{10,30}', '{0,5}', 'p_text', 'p_text_dead_letters',
    'kt', 'count(*) AS n, sum(e.v) AS s, min(e.v) AS mn, max(e.v) AS mx, count(e.v) AS nv');
CREATE VIEW ev_p_filtered AS SELECT * FROM ev_p WHERE v > -500;
SELECT * FROM compare_pipeline('ev_p_filtered', '{25}', '{25}', '{0}', 'p_int_results',
    'p_int_results_dead_letters', 'k', 'count(*) AS n, sum(e.v) AS s, max(e.f) AS mxf');

SELECT * FROM compare_pipeline('ev_p', '{10,20,30,40}', '{10,20,30,40}', '{0,0,0,0}', 'p_shared',
    'p_shared_dead_letters', 'k', 'count(*) AS n, sum(e.v) AS s, min(e.v) AS mn, max(e.v) AS mx');
SELECT count(*) FILTER (WHERE pane = 'late') > 0 AS shared_has_late FROM p_shared;

-- the stream had late panes and dead letters to check
SELECT count(*) FILTER (WHERE pane = 'late') > 0 AS has_late,
       max(revision) > 1 AS has_revisions FROM p_text;

-- (b) the batch function over the same rows gives the same final windows
SELECT count(*) AS differences FROM (
    (SELECT kt, window_start, window_end, n, s, mn, mx, nv FROM p_text
     EXCEPT
     SELECT * FROM (
     SELECT DISTINCT ON (kt, ws, we) kt, ws, we, n, s, mn, mx, nv
     FROM windowagg.aggregate(
        $$SELECT kt, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx,
                 count(v) AS nv FROM src_p GROUP BY kt$$,
        't', ARRAY[windowagg.hopping(40, 10), windowagg.tumbling(30, 5)],
        bound => 20, lateness => 60, arrival_order => 'id')
       AS (kt text, ws bigint, we bigint, n bigint, s bigint, mn int, mx int, nv bigint,
           pane text, rev bigint)
     ORDER BY kt, ws, we, rev DESC) final)) x;

-- dead letters carry the source row, its event time, the reason and the
-- watermark it met
SELECT d.event_time = (d.source_row->>'t')::bigint AS same_time,
       d.reason, d.watermark > d.event_time + 60 AS watermark_ok,
       count(*) > 0 AS some
FROM p_text_dead_letters d GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- counters match the tables
SELECT s.name, s.status, s.events_in, s.dead_letters = (SELECT count(*) FROM p_text_dead_letters) AS dl_ok,
       s.panes_on_time > 0 AS on_time, s.panes_late > 0 AS late, s.watermark_ticks,
       s.lag_rows, s.last_error
FROM windowagg.stat_pipelines s WHERE s.name = 'p_text';

-- after a flush every later row is too late
SELECT feed(1, 3);
SELECT windowagg.wait('p_text') AS caught_up;
SELECT count(*) FROM p_text_dead_letters WHERE arrival > 9000;

-- dropping keeps the tables unless asked, and removes the live view
SELECT windowagg.drop_pipeline('p_text');
SELECT windowagg.drop_pipeline('p_int', drop_tables => true);
SELECT windowagg.drop_pipeline('p_shared', drop_tables => true);
SELECT to_regclass('p_text') IS NOT NULL AS kept, to_regclass('p_text_live') AS live,
       to_regclass('p_int_results') AS dropped;
SELECT count(*) FROM windowagg.pipelines;
SELECT count(*) FROM windowagg.checkpoints;
DROP TABLE p_text, p_text_dead_letters;
