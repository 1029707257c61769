-- Session windows in the batch function, against two independent
-- references: a SQL gaps-and-islands query (lag() and a running sum) on
-- streams in order, and a PL/pgSQL replay of the rules event by event on
-- streams with disorder, late and too-late events.  The batch output is
-- replayed into a table as a pipeline would: a 'retract' row deletes its
-- row, any other row upserts one.
SET timezone = 'UTC';
SET client_min_messages = warning;

-- events: arrival order id; keys k; event time t; value v (NULLs too)
CREATE FUNCTION make_session_events(name text, n int, n_keys int, step int,
                                    idle_every int, idle int, jitter int,
                                    late_every int, late_by int, t0 bigint,
                                    seed float8)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setseed(seed);
    EXECUTE format('DROP TABLE IF EXISTS %I', name);
    EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, k int NOT NULL,
                    t bigint NOT NULL, v int)', name);
    -- time moves by step per event, and by idle now and then, so that
    -- sessions end; jitter puts events slightly out of order, and every
    -- late_every-th one is pushed back by up to late_by
    EXECUTE format($q$
        INSERT INTO %I
        SELECT i, kk, %s + base + (random() * %s)::int
                 - CASE WHEN i %% %s = 0 THEN (random() * %s)::bigint ELSE 0 END,
               CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 200)::int - 100 END
        FROM (SELECT i, (random() * (%s - 1))::int AS kk,
                     sum(%s + CASE WHEN random() < 1.0 / %s THEN %s ELSE 0 END)
                       OVER (ORDER BY i) AS base
              FROM generate_series(1, %s) i) s$q$,
        name, t0, jitter, late_every, late_by, n_keys, step, idle_every, idle, n);
END
$$;

-- The batch output of session windows over table ev (gap, bound,
-- lateness), replayed: one row per session in the end.
CREATE FUNCTION batch_sessions(ev text, gap bigint, bound bigint, lateness bigint)
RETURNS TABLE (k int, ws bigint, we bigint, n bigint, s bigint, mn int, mx int,
               rev bigint)
LANGUAGE plpgsql AS $$
DECLARE
    p record;
BEGIN
    CREATE TEMP TABLE replay (k int, ws bigint, we bigint, n bigint, s bigint,
                              mn int, mx int, rev bigint, PRIMARY KEY (k, ws, we));
    FOR p IN
        SELECT * FROM ROWS FROM (windowagg.aggregate(
            format('SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx FROM %I GROUP BY k', ev),
            't', ARRAY[windowagg.session(gap)], bound, lateness, 'id')
          AS (k int, ws bigint, we bigint, n bigint, s bigint, mn int, mx int,
              pane text, rev bigint)) WITH ORDINALITY o ORDER BY o.ordinality
    LOOP
        IF p.pane = 'retract' THEN
            DELETE FROM replay r WHERE r.k = p.k AND r.ws = p.ws AND r.we = p.we
                AND r.rev = p.rev;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'retraction of a row not in the table: % [%, %) rev %',
                    p.k, p.ws, p.we, p.rev;
            END IF;
        ELSE
            -- a key's sessions never overlap
            IF EXISTS (SELECT FROM replay r WHERE r.k = p.k AND r.ws < p.we
                       AND p.ws < r.we AND (r.ws, r.we) <> (p.ws, p.we)) THEN
                RAISE EXCEPTION 'session % [%, %) overlaps a row', p.k, p.ws, p.we;
            END IF;
            INSERT INTO replay VALUES (p.k, p.ws, p.we, p.n, p.s, p.mn, p.mx, p.rev)
            ON CONFLICT ON CONSTRAINT replay_pkey DO UPDATE
                SET n = excluded.n, s = excluded.s, mn = excluded.mn,
                    mx = excluded.mx, rev = excluded.rev
                WHERE replay.rev < excluded.rev;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'revision of % [%, %) went back to %', p.k, p.ws, p.we, p.rev;
            END IF;
        END IF;
    END LOOP;
    RETURN QUERY SELECT * FROM replay;
    DROP TABLE replay;
END
$$;

-- Reference 1: gaps and islands.  In order (no event later than the one
-- before it), a new session starts wherever the gap to the key's previous
-- event exceeds gap.
CREATE FUNCTION islands(ev text, gap bigint)
RETURNS TABLE (k int, ws bigint, we bigint, n bigint, s bigint, mn int, mx int)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT k, min(t), max(t) + %s, count(*), sum(v), min(v), max(v)
        FROM (SELECT k, t, v, sum(CASE WHEN t - prev <= %s THEN 0 ELSE 1 END)
                                  OVER (PARTITION BY k ORDER BY t, id) AS island
              FROM (SELECT k, t, v, id, lag(t) OVER (PARTITION BY k ORDER BY t, id) AS prev
                    FROM %I) a) b
        GROUP BY k, island$q$, gap, gap, ev);
END
$$;

-- Reference 2: the rules, event by event in arrival order, with every
-- session kept for ever (README, "Session windows").
CREATE FUNCTION replay_rules(ev text, gap bigint, bound bigint, lateness bigint)
RETURNS TABLE (k int, ws bigint, we bigint, n bigint, s bigint, mn int, mx int,
               dropped bigint)
LANGUAGE plpgsql AS $$
DECLARE
    e record;
    wm numeric;                 -- NULL: no watermark yet
    max_ts numeric;
    n_dropped bigint := 0;
    m record;
BEGIN
    CREATE TEMP TABLE ref_sess (k int, ws numeric, we numeric, n bigint,
                                s bigint, mn int, mx int);
    CREATE TEMP TABLE ref_dropped (id bigint);
    FOR e IN EXECUTE format('SELECT id, k, t, v FROM %I ORDER BY id', ev) LOOP
        -- too late: the session it would open alone has closed
        IF wm IS NOT NULL AND e.t::numeric + gap + lateness <= wm THEN
            INSERT INTO ref_dropped VALUES (e.id);
            CONTINUE;
        END IF;
        -- it touches a closed session, which must not change
        IF EXISTS (SELECT FROM ref_sess r WHERE r.k = e.k AND r.ws - gap <= e.t
                   AND e.t <= r.we AND r.we + lateness <= wm) THEN
            INSERT INTO ref_dropped VALUES (e.id);
            CONTINUE;
        END IF;
        -- it and every session it touches become one
        SELECT least(min(r.ws), e.t) AS ws, greatest(max(r.we), e.t::numeric + gap) AS we,
               coalesce(sum(r.n), 0) + 1 AS n,
               CASE WHEN count(r.s) = 0 AND e.v IS NULL THEN NULL
                    ELSE coalesce(sum(r.s), 0) + coalesce(e.v, 0) END AS s,
               least(min(r.mn), e.v) AS mn, greatest(max(r.mx), e.v) AS mx
          INTO m
          FROM ref_sess r WHERE r.k = e.k AND r.ws - gap <= e.t AND e.t <= r.we;
        DELETE FROM ref_sess r WHERE r.k = e.k AND r.ws - gap <= e.t AND e.t <= r.we;
        INSERT INTO ref_sess VALUES (e.k, m.ws, m.we, m.n, m.s, m.mn, m.mx);
        max_ts := greatest(max_ts, e.t);
        wm := greatest(wm, max_ts - bound);
    END LOOP;
    SELECT count(*) INTO n_dropped FROM ref_dropped;
    RETURN QUERY SELECT r.k, r.ws::bigint, r.we::bigint, r.n, r.s, r.mn, r.mx, n_dropped
                 FROM ref_sess r;
    DROP TABLE ref_sess;
    DROP TABLE ref_dropped;
END
$$;

-- The sessions of the batch function against a reference, both ways.
CREATE FUNCTION compare_sessions(got regclass, want regclass)
RETURNS TABLE (sessions bigint, wrong bigint, missing bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT (SELECT count(*) FROM %2$s),
               (SELECT count(*) FROM (SELECT k, ws, we, n, s, mn, mx FROM %1$s
                                      EXCEPT SELECT k, ws, we, n, s, mn, mx FROM %2$s) d),
               (SELECT count(*) FROM (SELECT k, ws, we, n, s, mn, mx FROM %2$s
                                      EXCEPT SELECT k, ws, we, n, s, mn, mx FROM %1$s) d)$q$,
        got, want);
END
$$;

-- 1. In order: many keys, few keys, events exactly gap apart, against
-- gaps and islands.  With no disorder nothing is late: bound and
-- lateness 0.
SELECT make_session_events('ev_in', 4000, 50, 1, 40, 30, 0, 1000000, 0, 0, 0.11);
-- (a stream in order: every event at or after the one before it)
SELECT bool_and(t >= prev) AS in_order
FROM (SELECT t, lag(t) OVER (ORDER BY id) AS prev FROM ev_in) d WHERE prev IS NOT NULL;
CREATE TABLE got_in AS SELECT * FROM batch_sessions('ev_in', 10, 0, 0);
CREATE TABLE want_in AS SELECT * FROM islands('ev_in', 10);
SELECT * FROM compare_sessions('got_in', 'want_in');
-- sessions that a merge grew from several (not all single events)
SELECT count(*) FILTER (WHERE n > 1) > 100 AS merged_sessions,
       count(*) FILTER (WHERE n = 1) > 100 AS single_events
FROM want_in;
DROP TABLE got_in, want_in;

-- few keys and events exactly gap apart: one chain is one session.  Both
-- keys have events at the same times, key 0's first: bound 1 keeps a
-- session [t, t + 7) open until key 1's event at t + 7 has arrived (with
-- bound 0 that event would find its session closed, and be dropped).
CREATE TABLE ev_gap (id bigint PRIMARY KEY, k int NOT NULL, t bigint NOT NULL, v int);
INSERT INTO ev_gap SELECT i, i % 2, (i / 2) * 7 + CASE WHEN i >= 200 THEN 1000 ELSE 0 END, i
FROM generate_series(0, 399) i;
CREATE TABLE got_gap AS SELECT * FROM batch_sessions('ev_gap', 7, 1, 0);
CREATE TABLE want_gap AS SELECT * FROM islands('ev_gap', 7);
SELECT * FROM compare_sessions('got_gap', 'want_gap');
SELECT k, ws, we, n FROM got_gap ORDER BY k, ws;
-- one tick more than the gap splits every chain into single events
CREATE TABLE got_gap6 AS SELECT * FROM batch_sessions('ev_gap', 6, 1, 0);
-- (and with bound 0, key 1 loses every other event, as the rules say)
CREATE TABLE got_gap0 AS SELECT * FROM batch_sessions('ev_gap', 7, 0, 0);
CREATE TABLE want_gap0 AS SELECT k, ws, we, n, s, mn, mx FROM replay_rules('ev_gap', 7, 0, 0);
SELECT * FROM compare_sessions('got_gap0', 'want_gap0');
SELECT k, sum(n) AS events FROM got_gap0 GROUP BY k ORDER BY k;
SELECT count(*) AS sessions, max(n) AS largest FROM got_gap6;
DROP TABLE got_gap, want_gap, got_gap6, got_gap0, want_gap0;

-- (a control: islands with a gap one shorter gives other sessions)
SELECT make_session_events('ev_in2', 2000, 5, 2, 30, 40, 0, 1000000, 0, 0, 0.12);
CREATE TABLE got_in AS SELECT * FROM batch_sessions('ev_in2', 12, 0, 0);
CREATE TABLE want_in AS SELECT * FROM islands('ev_in2', 12);
CREATE TABLE want_in11 AS SELECT * FROM islands('ev_in2', 11);
SELECT * FROM compare_sessions('got_in', 'want_in');
SELECT wrong > 0 AS control_differs FROM compare_sessions('got_in', 'want_in11');
DROP TABLE got_in, want_in, want_in11;

-- 2. Disorder, late and too-late events: against the replay of the rules,
-- for several gaps, bounds and lateness.
CREATE FUNCTION check_disorder(ev text, gap bigint, bound bigint, lateness bigint)
RETURNS TABLE (sessions bigint, wrong bigint, missing bigint, dropped_ref bigint,
               dropped_got bigint, dropped_differ bigint, retractions bigint,
               late_panes bigint)
LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE got AS SELECT * FROM batch_sessions(ev, gap, bound, lateness);
    CREATE TEMP TABLE want AS SELECT * FROM replay_rules(ev, gap, bound, lateness);
    SELECT c.sessions, c.wrong, c.missing INTO sessions, wrong, missing
      FROM compare_sessions('got', 'want') c;
    SELECT max(w.dropped) INTO dropped_ref FROM want w;
    -- dropped() names the rows the batch function did not count
    EXECUTE format($q$SELECT count(*) FROM windowagg.dropped(
        'SELECT k, count(*) AS n FROM %I GROUP BY k', 't', ARRAY[windowagg.session(%s)],
        %s, %s, 'id') AS (k int, t bigint, watermark bigint, arrival bigint)$q$,
        ev, gap, bound, lateness) INTO dropped_got;
    -- events in sessions plus dropped events: every event, once
    EXECUTE format('SELECT (SELECT count(*) FROM %I) - (SELECT sum(n) FROM got) - $1', ev)
      USING dropped_got INTO dropped_differ;
    EXECUTE format($q$SELECT count(*) FILTER (WHERE pane = 'retract'),
                             count(*) FILTER (WHERE pane = 'late')
        FROM windowagg.aggregate('SELECT k, count(*) AS n FROM %I GROUP BY k', 't',
            ARRAY[windowagg.session(%s)], %s, %s, 'id')
          AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint)$q$,
        ev, gap, bound, lateness) INTO retractions, late_panes;
    DROP TABLE got;
    DROP TABLE want;
    RETURN NEXT;
END
$$;

SELECT make_session_events('ev_dis', 3000, 20, 1, 25, 25, 6, 7, 80, 0, 0.21);
SELECT * FROM check_disorder('ev_dis', 10, 5, 30);
SELECT * FROM check_disorder('ev_dis', 4, 0, 0);
SELECT * FROM check_disorder('ev_dis', 25, 12, 100);
-- few keys, long lateness: merges of many fired sessions
SELECT make_session_events('ev_few', 2000, 3, 2, 15, 20, 10, 5, 150, 0, 0.22);
SELECT * FROM check_disorder('ev_few', 8, 3, 400);
-- negative times, and times near the top of bigint
SELECT make_session_events('ev_neg', 1500, 7, 1, 20, 30, 5, 6, 60, -9223372036854770000, 0.23);
SELECT * FROM check_disorder('ev_neg', 10, 4, 40);
SELECT make_session_events('ev_top', 1500, 7, 1, 20, 30, 5, 6, 60, 9223372036854771000, 0.24);
SELECT max(t) > 9223372036854774000 AS near_the_top FROM ev_top;
SELECT * FROM check_disorder('ev_top', 10, 4, 40);
-- (a control: the replay with another lateness disagrees)
CREATE TEMP TABLE got_c AS SELECT * FROM batch_sessions('ev_dis', 10, 5, 30);
CREATE TEMP TABLE want_c AS SELECT * FROM replay_rules('ev_dis', 10, 5, 10);
SELECT wrong + missing > 0 AS control_differs FROM compare_sessions('got_c', 'want_c');
DROP TABLE got_c, want_c;

-- A session that would end past the top of bigint is out of range: its
-- event is dropped, not lost.
CREATE TABLE ev_edge (id bigint PRIMARY KEY, k int NOT NULL, t bigint NOT NULL, v int);
INSERT INTO ev_edge VALUES (1, 1, 9223372036854775800, 1), (2, 1, 9223372036854775805, 2),
                           (3, 2, -9223372036854775808, 3), (4, 2, -9223372036854775800, 4);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n, sum(v) AS s FROM ev_edge GROUP BY k',
    't', ARRAY[windowagg.session(5)], 0, 0, 'id')
  AS (k int, ws bigint, we bigint, n bigint, s bigint, pane text, rev bigint)
ORDER BY k, ws;
SELECT * FROM windowagg.dropped('SELECT k, count(*) AS n FROM ev_edge GROUP BY k',
    't', ARRAY[windowagg.session(5)], 0, 0, 'id')
  AS (k int, t bigint, watermark bigint, arrival bigint);

-- 3. The output replays, step by step.  Gap 5, bound 0, lateness 50:
-- [0, 5) and [20, 25) fire on time; late events at 8 and 14 are sessions
-- of their own (late panes, revision 1: 14 is one tick too far from 8);
-- the event at 10 bridges them: a retraction each, then [8, 19) with
-- revision 2.  The event at 22 extends [20, 25): it is retracted, and
-- [20, 27) written with revision 2; the one at 21 falls inside it, whose
-- row gets revision 3.  Key b's only event is late, a session alone.
CREATE TABLE ev_steps (id bigint PRIMARY KEY, k text NOT NULL, t bigint NOT NULL, v int);
INSERT INTO ev_steps VALUES (1, 'a', 0, 1), (2, 'a', 20, 2), (3, 'a', 40, 4),
    (4, 'a', 8, 8), (5, 'a', 14, 16), (6, 'a', 10, 32), (7, 'b', 1, 64),
    (8, 'a', 22, 128), (9, 'a', 21, 256);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n, sum(v) AS s FROM ev_steps GROUP BY k',
    't', ARRAY[windowagg.session(5)], 0, 50, 'id')
  AS (k text, ws bigint, we bigint, n bigint, s bigint, pane text, rev bigint);

-- 4. Timestamps, with other windows of the same stream: the tumbling
-- windows are those of a call without the session window, and the
-- sessions those of gaps and islands.  A key's events are 14 minutes
-- apart, with a pause of two hours after every ninth event.  With a
-- session window among others, each row says which window it is of (its
-- position in the array), after the keys.
CREATE TABLE ev_ts AS
SELECT i AS id, i % 2 AS k,
       timestamptz '2024-03-01' + i * interval '7 min' + (i / 9) * interval '2 hours' AS t,
       i AS v
FROM generate_series(1, 600) i;
CREATE TEMP TABLE mixed AS
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n, sum(v) AS s FROM ev_ts GROUP BY k',
    't', ARRAY[windowagg.session('20 min'), windowagg.tumbling('1 hour')], '0', '0', 'id')
  AS (k int, w int, ws timestamptz, we timestamptz, n bigint, s bigint, pane text, rev bigint);
CREATE TEMP TABLE alone AS
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n, sum(v) AS s FROM ev_ts GROUP BY k',
    't', ARRAY[windowagg.tumbling('1 hour')], '0', '0', 'id')
  AS (k int, ws timestamptz, we timestamptz, n bigint, s bigint, pane text, rev bigint);
SELECT (SELECT count(*) FROM alone) AS tumbling_windows,
       (SELECT count(*) FROM (SELECT k, ws, we, n, s, pane, rev FROM mixed WHERE w = 2
                              EXCEPT SELECT * FROM alone) d) AS tumbling_differ,
       (SELECT count(*) FROM mixed WHERE w = 2) AS tumbling_rows;
WITH isl AS (
    SELECT k, min(t) AS ws, max(t) + interval '20 min' AS we, count(*) AS n, sum(v) AS s
    FROM (SELECT k, t, v, sum(CASE WHEN t - prev <= interval '20 min' THEN 0 ELSE 1 END)
                            OVER (PARTITION BY k ORDER BY t) AS island
          FROM (SELECT k, t, v, lag(t) OVER (PARTITION BY k ORDER BY t) AS prev FROM ev_ts) a) b
    GROUP BY k, island)
SELECT (SELECT count(*) FROM isl) AS sessions,
       (SELECT count(*) FROM (SELECT k, ws, we, n, s FROM mixed WHERE w = 1
                              EXCEPT SELECT * FROM isl) d) AS wrong,
       (SELECT count(*) FROM (SELECT * FROM isl EXCEPT
                              SELECT k, ws, we, n, s FROM mixed WHERE w = 1) d) AS missing;
DROP TABLE mixed, alone;

-- A session can have the bounds of another window's row: here [0, 10)
-- of the tumbling window and of the session of the events at 0 and 5.
-- The window column tells them apart, and replaying the retraction
-- deletes the session's row only.
CREATE TABLE ev_same (id bigint PRIMARY KEY, k int NOT NULL, t bigint NOT NULL);
INSERT INTO ev_same VALUES (1, 1, 0), (2, 1, 5), (3, 2, 20), (4, 1, 10);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_same GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10), windowagg.session(5)], 0, 100, 'id')
  AS (k int, w int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- two session windows, both [H-12, H-2) (H the top of bigint): with gap
-- 5 of both events, with gap 10 of the first alone (the second's would
-- end past H)
CREATE TABLE ev_top2 (id bigint PRIMARY KEY, k int NOT NULL, t bigint NOT NULL);
INSERT INTO ev_top2 VALUES (1, 1, 9223372036854775795), (2, 1, 9223372036854775800);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_top2 GROUP BY k',
    't', ARRAY[windowagg.session(5), windowagg.session(10)], 0, 0, 'id')
  AS (k int, w int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- a single session window needs no such column
SELECT count(*) AS rows FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_same GROUP BY k',
    't', ARRAY[windowagg.session(5)], 0, 100, 'id')
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- Near the top of the range, beside fixed windows, an event that no
-- fixed window can hold, or that the ones that can have closed for, is
-- dropped for the sessions too (README, Semantics): the event at H-11
-- arrives after H-7 (watermark H-7), too late for the tumbling and
-- hopping windows, though a session [H-11, H-1) would still be open.
TRUNCATE ev_top2;
INSERT INTO ev_top2 VALUES (1, 1, 9223372036854775800), (2, 2, 9223372036854775796);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_top2 GROUP BY k',
    't', ARRAY[windowagg.tumbling(1), windowagg.hopping(20, 10), windowagg.session(10)], 0, 0, 'id')
  AS (k int, w int, ws bigint, we bigint, n bigint, pane text, rev bigint)
ORDER BY k, w, ws;
SELECT * FROM windowagg.dropped('SELECT k, count(*) AS n FROM ev_top2 GROUP BY k',
    't', ARRAY[windowagg.tumbling(1), windowagg.hopping(20, 10), windowagg.session(10)], 0, 0, 'id')
  AS (k int, t bigint, watermark bigint, arrival bigint);
-- (the session window alone takes it)
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_top2 GROUP BY k',
    't', ARRAY[windowagg.session(10)], 0, 0, 'id')
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint)
ORDER BY k, ws;
-- an event no fixed window can hold, that a session refuses as it
-- touches a closed one, is dropped, not lost
TRUNCATE ev_top2;
INSERT INTO ev_top2 VALUES (1, 1, 9223372036854775787), (2, 1, 9223372036854775793),
                           (3, 1, 9223372036854775791);
SELECT * FROM windowagg.dropped('SELECT k, count(*) AS n FROM ev_top2 GROUP BY k',
    't', ARRAY[windowagg.tumbling(1000), windowagg.session(5)], 0, 0, 'id')
  AS (k int, t bigint, watermark bigint, arrival bigint);
SELECT * FROM windowagg.dropped('SELECT k, count(*) AS n FROM ev_top2 GROUP BY k',
    't', ARRAY[windowagg.session(5)], 0, 0, 'id')
  AS (k int, t bigint, watermark bigint, arrival bigint);
DROP TABLE ev_same, ev_top2;

-- Any aggregate: numeric sums and averages, and a generic one, over
-- sessions, against GROUP BY over the islands.
WITH got AS (
    SELECT * FROM windowagg.aggregate(
        'SELECT k, sum(v::numeric / 3) AS s, avg(v) AS a, bool_or(v % 7 = 0) AS b FROM ev_ts GROUP BY k',
        't', ARRAY[windowagg.session('20 min')], '0', '0', 'id')
      AS (k int, ws timestamptz, we timestamptz, s numeric, a numeric, b boolean,
          pane text, rev bigint)),
isl AS (
    SELECT k, min(t) AS ws, max(t) + interval '20 min' AS we, sum(v::numeric / 3) AS s,
           avg(v) AS a, bool_or(v % 7 = 0) AS b
    FROM (SELECT k, t, v, sum(CASE WHEN t - prev <= interval '20 min' THEN 0 ELSE 1 END)
                            OVER (PARTITION BY k ORDER BY t) AS island
          FROM (SELECT k, t, v, lag(t) OVER (PARTITION BY k ORDER BY t) AS prev FROM ev_ts) a) b
    GROUP BY k, island)
SELECT (SELECT count(*) FROM isl) AS sessions,
       (SELECT count(*) FROM (SELECT k, ws, we, s, a, b FROM got EXCEPT SELECT * FROM isl) d) AS wrong;

-- 5. explain shows session windows, which share no slices.
SELECT * FROM windowagg.explain(ARRAY[windowagg.session('30 min')]);
SELECT * FROM windowagg.explain(ARRAY[windowagg.tumbling('1 hour'), windowagg.session('30 min'),
                                      windowagg.session('1 day')]);

-- 6. Errors.
SELECT windowagg.session(NULL::interval);
SELECT windowagg.session(0);
SELECT windowagg.session(-5);
SELECT windowagg.session('0 min');
SELECT windowagg.session('-1 hour');
SELECT windowagg.session('1 month');
SELECT windowagg.session(interval '1 year 2 days');
-- an integer gap over a timestamp event time
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_ts GROUP BY k', 't',
    ARRAY[windowagg.session(5)]) AS (k int, ws timestamptz, we timestamptz, n bigint, pane text, rev bigint);
-- one gap twice
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[windowagg.session(5), windowagg.session(5)], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- made by hand: an unknown kind, a session of no gap, a calendar attribute
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 5, 5, 0, 'sliding', NULL, NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 0, 0, 0, 'session', NULL, NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 5, 5, 0, 'tumbling', 'UTC', NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- a tumbling window or a session whose slide is not its size, by hand
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 10, 3, 0, 'tumbling', NULL, NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
SELECT * FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 10, 3, 0, 'session', NULL, NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- a session's origin means nothing: NULL is fine
SELECT count(*) AS rows FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 10, 10, NULL, 'session', NULL, NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);
-- errors name windows by their position in the array
SELECT * FROM windowagg.explain(ARRAY[windowagg.session(3), windowagg.tumbling(10),
                                      windowagg.session(4), windowagg.tumbling(10)]);
-- a window made before 0.3.0 (no kind) is tumbling or hopping
SELECT count(*) AS windows FROM windowagg.aggregate('SELECT k, count(*) AS n FROM ev_gap GROUP BY k', 't',
    ARRAY[ROW('integer', 100, 100, 0, NULL, NULL, NULL, NULL)::windowagg.window], 0, 0)
  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint);

-- (t_21_session_pipeline uses make_session_events, replay_rules and
-- compare_sessions, and drops them)
DROP FUNCTION batch_sessions, islands, check_disorder;
DROP TABLE ev_in, ev_in2, ev_gap, ev_dis, ev_few, ev_neg, ev_top, ev_edge, ev_steps, ev_ts;
