-- Session windows in pipelines: a stream with disorder, late and too-late
-- events, fed in uneven batches with pauses and resumes (each resume
-- restores the sessions from the checkpoint log), ends equal to the
-- PL/pgSQL replay of the rules (replay_rules, t_20_sessions), and its
-- dead letters are the events the replay dropped.  After every batch the
-- result table holds no two overlapping sessions of a key, and no update
-- of the table ever lowers a revision.
SET timezone = 'UTC';
SET client_min_messages = warning;

-- Feed the events of table ev (id order) into source src in batches of
-- uneven sizes, waiting for the pipeline after each; pause and resume it
-- every few batches.  Returns how often the table held overlapping
-- sessions of a key after a batch.
CREATE PROCEDURE feed_sessions(ev text, src text, pipeline text, INOUT overlapping bigint)
LANGUAGE plpgsql AS $$
DECLARE
    sizes int[] := ARRAY[1, 7, 130, 2, 450, 33, 1, 260, 90, 5];
    lo bigint := 1;
    hi bigint;
    n bigint;
    i int := 0;
    bad bigint;
BEGIN
    overlapping := 0;
    EXECUTE format('SELECT max(id) FROM %I', ev) INTO n;
    WHILE lo <= n LOOP
        hi := lo + sizes[1 + i % array_length(sizes, 1)] - 1;
        EXECUTE format('INSERT INTO %I (k, t, v) SELECT k, t, v FROM %I
                        WHERE id BETWEEN $1 AND $2 ORDER BY id', src, ev)
          USING lo, hi;
        COMMIT;
        IF NOT windowagg.wait(pipeline) THEN
            RAISE EXCEPTION 'pipeline % did not catch up', pipeline;
        END IF;
        EXECUTE format($q$SELECT count(*) FROM %I a JOIN %I b
                         ON a.k IS NOT DISTINCT FROM b.k
                        AND a.window_start < b.window_end AND b.window_start < a.window_end
                        AND (a.window_start, a.window_end) <> (b.window_start, b.window_end)$q$,
                       pipeline, pipeline) INTO bad;
        overlapping := overlapping + bad;
        IF i % 4 = 3 THEN
            PERFORM windowagg.pause(pipeline);
            COMMIT;
            PERFORM windowagg.resume(pipeline);
            COMMIT;
        END IF;
        lo := hi + 1;
        i := i + 1;
    END LOOP;
END
$$;

-- Updates that lower a revision, and deletes, as they happen.
CREATE TABLE revision_log (tab text, k int, ws bigint, we bigint, old_rev bigint,
                           new_rev bigint);
CREATE FUNCTION log_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO revision_log
    VALUES (TG_TABLE_NAME, OLD.k, OLD.window_start, OLD.window_end, OLD.revision,
            CASE WHEN TG_OP = 'UPDATE' THEN NEW.revision END);
    RETURN NULL;
END
$$;
GRANT INSERT ON revision_log TO PUBLIC;

-- 1. Integer times: the same stream, the same rules as the batch tests.
SELECT make_session_events('ev_sp', 3000, 20, 1, 25, 25, 6, 7, 80, 0, 0.31);
CREATE TABLE sp_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int NOT NULL,
                     t bigint NOT NULL, v int);
SELECT windowagg.create_pipeline('sp',
    'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx FROM sp_src GROUP BY k',
    't', ARRAY[windowagg.session(10::bigint)], bound => 5::bigint, lateness => 30::bigint) > 0 AS created;
CREATE TRIGGER log_revision AFTER UPDATE OR DELETE ON sp
    FOR EACH ROW EXECUTE FUNCTION log_revision();
CALL feed_sessions('ev_sp', 'sp_src', 'sp', NULL);
-- open sessions, before the end of input, are live and not in the table
SELECT count(*) > 0 AS some_live,
       count(*) FILTER (WHERE (l.k, l.window_start, l.window_end) IN
                        (SELECT k, window_start, window_end FROM sp)) AS live_in_table,
       count(*) FILTER (WHERE l.window_end <= (SELECT watermark_ticks FROM windowagg.stat_pipelines
                                               WHERE name = 'sp')) AS live_but_due
FROM windowagg.live('sp') AS l(k int, window_start bigint, window_end bigint, n bigint,
                               s bigint, mn int, mx int);
SELECT windowagg.flush('sp');
SELECT count(*) AS live_after_flush
FROM windowagg.live('sp') AS l(k int, window_start bigint, window_end bigint, n bigint,
                               s bigint, mn int, mx int);
CREATE TABLE sp_got AS SELECT k, window_start AS ws, window_end AS we, n, s, mn, mx FROM sp;
CREATE TABLE sp_want AS SELECT * FROM replay_rules('ev_sp', 10, 5, 30);
SELECT * FROM compare_sessions('sp_got', 'sp_want');
-- the dead letters are the events the replay dropped, each once; with the
-- events in sessions, every event once
SELECT (SELECT count(*) FROM sp_dead_letters) AS dead_letters,
       (SELECT max(dropped) FROM sp_want) AS dropped_ref,
       (SELECT count(*) FROM ev_sp) - (SELECT sum(n) FROM sp) - (SELECT count(*) FROM sp_dead_letters)
         AS events_differ;
SELECT reason, count(*) FROM sp_dead_letters GROUP BY reason ORDER BY reason;
-- merges of fired sessions happened: rows were deleted, revisions rose
SELECT count(*) FILTER (WHERE new_rev IS NULL) > 0 AS retracted,
       count(*) FILTER (WHERE new_rev <= old_rev) AS revisions_back,
       (SELECT max(revision) FROM sp) > 1 AS refined
FROM revision_log WHERE tab = 'sp';
-- (revisions count the panes of a session and of those it replaced,
-- and an epoch writes a session's newest pane only: they depend on epoch
-- sizes, as a fixed window's do; they start at 1 and never go back)
SELECT min(revision) AS lowest_revision FROM sp;
-- (a control: the replay with another lateness disagrees)
CREATE TABLE sp_want_c AS SELECT * FROM replay_rules('ev_sp', 10, 5, 10);
SELECT wrong + missing > 0 AS control_differs FROM compare_sessions('sp_got', 'sp_want_c');
SELECT * FROM windowagg.explain('sp');
SELECT windowagg.drop_pipeline('sp', drop_tables => true);

-- 2. Few keys, long lateness (merges of many fired sessions), times near
-- the top of bigint, a NULL key, and aggregates of the generic path
-- (their states go through the checkpoint's sessions records).
SELECT make_session_events('ev_sq', 1500, 3, 2, 15, 20, 10, 5, 150, 9223372036854770000, 0.32);
CREATE TABLE sq_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int,
                     t bigint NOT NULL, v int);
SELECT windowagg.create_pipeline('sq',
    'SELECT nullif(k, 1) AS k, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx,
            sum(v::numeric / 7) AS g, bit_or(v + 1000) AS b FROM sq_src GROUP BY 1',
    't', ARRAY[windowagg.session(8::bigint)], bound => 3::bigint, lateness => 400::bigint) > 0 AS created;
CREATE TRIGGER log_revision AFTER UPDATE OR DELETE ON sq
    FOR EACH ROW EXECUTE FUNCTION log_revision();
CALL feed_sessions('ev_sq', 'sq_src', 'sq', NULL);
SELECT windowagg.flush('sq');
CREATE TABLE sq_got AS SELECT coalesce(k, 1) AS k, window_start AS ws, window_end AS we,
                              n, s, mn, mx FROM sq;
CREATE TABLE sq_want AS SELECT * FROM replay_rules('ev_sq', 8, 3, 400);
SELECT * FROM compare_sessions('sq_got', 'sq_want');
SELECT count(*) FILTER (WHERE k IS NULL) > 0 AS null_key_sessions,
       max(window_end) > 9223372036854774000 AS near_the_top
FROM sq;
-- the generic aggregates over each session's events, by GROUP BY
SELECT count(*) AS generic_differ
FROM sq r
CROSS JOIN LATERAL (
    SELECT sum(e.v::numeric / 7) AS g, bit_or(e.v + 1000) AS b FROM ev_sq e
    WHERE e.k = coalesce(r.k, 1) AND e.t >= r.window_start AND e.t < r.window_end
      AND e.id NOT IN (SELECT arrival FROM sq_dead_letters)) want
WHERE (r.g, r.b) IS DISTINCT FROM (want.g, want.b);
SELECT (SELECT count(*) FROM sq_dead_letters) AS dead_letters,
       (SELECT max(dropped) FROM sq_want) AS dropped_ref;
SELECT count(*) FILTER (WHERE new_rev IS NULL) > 0 AS retracted,
       count(*) FILTER (WHERE new_rev <= old_rev) AS revisions_back
FROM revision_log WHERE tab = 'sq';
SELECT windowagg.drop_pipeline('sq', drop_tables => true);

-- 3. Timestamps, a gap in minutes: sessions of an in-order stream are the
-- islands of its events.
CREATE TABLE st_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, u text NOT NULL,
                     at timestamptz NOT NULL);
SELECT windowagg.create_pipeline('st', 'SELECT u, count(*) AS n FROM st_src GROUP BY u', 'at',
    ARRAY[windowagg.session('30 minutes')]) > 0 AS created;
INSERT INTO st_src (u, at)
SELECT 'u' || (i % 4), '2026-01-01'::timestamptz + i * interval '7 minutes'
                       + CASE WHEN i % 23 = 0 THEN interval '2 hours' ELSE interval '0' END
                       + (i / 40) * interval '3 hours'
FROM generate_series(1, 400) i ORDER BY 2;
SELECT windowagg.flush('st');
SELECT count(*) AS sessions,
       count(*) FILTER (WHERE (u, window_start, window_end, n) NOT IN (
           SELECT u, min(at), max(at) + interval '30 minutes', count(*)
           FROM (SELECT u, at, sum(CASE WHEN at - prev <= interval '30 minutes' THEN 0 ELSE 1 END)
                                 OVER (PARTITION BY u ORDER BY at, id) AS island
                 FROM (SELECT u, at, id, lag(at) OVER (PARTITION BY u ORDER BY at, id) AS prev
                       FROM st_src) a) b
           GROUP BY u, island)) AS wrong
FROM st;
SELECT windowagg.drop_pipeline('st', drop_tables => true);

-- 4. A session window beside a tumbling window: the sessions go to
-- <result_table>_sessions, the windows to the result table, each equal to
-- its reference over an in-order stream (nothing is late).
CREATE TABLE sx_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int NOT NULL,
                     t bigint NOT NULL);
SELECT windowagg.create_pipeline('sx', 'SELECT k, count(*) AS n FROM sx_src GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10), windowagg.session(10)]) > 0 AS created;
SELECT result_table, sessions_table, dead_letter_table FROM windowagg.pipelines WHERE name = 'sx';
-- events 1..600: key i % 3 at time i, with a pause of 40 after every 50th,
-- so that a key's sessions end there; tumbling [0, 10) windows start on
-- the same ticks as some sessions
INSERT INTO sx_src (k, t) SELECT i % 3, i + (i / 50) * 40 FROM generate_series(1, 600) i;
SELECT windowagg.flush('sx');
SELECT count(*) AS windows,
       count(*) FILTER (WHERE (k, window_start, window_end, n) NOT IN (
           SELECT k, t - t % 10, t - t % 10 + 10, count(*) FROM sx_src GROUP BY 1, 2, 3)) AS wrong,
       (SELECT count(DISTINCT (k, t - t % 10)) FROM sx_src) AS want
FROM sx;
SELECT count(*) AS sessions,
       count(*) FILTER (WHERE (k, window_start, window_end, n) NOT IN (
           SELECT k, min(t), max(t) + 10, count(*)
           FROM (SELECT k, t, sum(CASE WHEN t - prev <= 10 THEN 0 ELSE 1 END)
                                OVER (PARTITION BY k ORDER BY t) AS island
                 FROM (SELECT k, t, lag(t) OVER (PARTITION BY k ORDER BY t) AS prev
                       FROM sx_src) a) b
           GROUP BY k, island)) AS wrong
FROM sx_sessions;
-- some session has the bounds of a tumbling window's row (why they are
-- apart)
SELECT count(*) > 0 AS shared_bounds
FROM sx_sessions s JOIN sx w USING (k, window_start, window_end);
SELECT * FROM windowagg.explain('sx');
-- live windows hold sessions: a reader of the result table alone may not
-- read them
CREATE ROLE wa_reader;
GRANT SELECT ON sx TO wa_reader;
GRANT USAGE ON SCHEMA windowagg TO wa_reader;
SET ROLE wa_reader;
SELECT count(*) FROM windowagg.live('sx') AS l(k int, window_start bigint, window_end bigint, n bigint);
RESET ROLE;
GRANT SELECT ON sx_sessions TO wa_reader;
SET ROLE wa_reader;
SELECT count(*) FROM windowagg.live('sx') AS l(k int, window_start bigint, window_end bigint, n bigint);
RESET ROLE;
REVOKE ALL ON sx, sx_sessions FROM wa_reader;
REVOKE USAGE ON SCHEMA windowagg FROM wa_reader;
DROP ROLE wa_reader;
-- a new owner takes the pipeline over only with both its tables
CREATE ROLE wa_heir;
GRANT SELECT ON sx_src TO wa_heir;
ALTER TABLE sx OWNER TO wa_heir;
SET ROLE wa_heir;
SELECT windowagg.resume('sx');
RESET ROLE;
ALTER TABLE sx_sessions OWNER TO wa_heir;
SET ROLE wa_heir;
SELECT windowagg.resume('sx');
RESET ROLE;
SELECT owner FROM windowagg.pipelines WHERE name = 'sx';
-- the sessions table is the pipeline's, as its other tables are
DROP TABLE sx_sessions;
SELECT windowagg.drop_pipeline('sx', drop_tables => true);
SELECT count(*) AS tables_left FROM pg_class WHERE relname IN ('sx', 'sx_sessions', 'sx_dead_letters');
REVOKE ALL ON sx_src FROM wa_heir;
DROP ROLE wa_heir;

-- 5. What pipelines refuse: two session windows.
SELECT windowagg.create_pipeline('sx', 'SELECT k, count(*) AS n FROM sx_src GROUP BY k', 't',
    ARRAY[windowagg.session(5), windowagg.session(7)]);
SELECT count(*) AS pipelines FROM windowagg.pipelines;

-- 6. The statement that deletes replaced sessions compares keys with the
-- key type's own btree equality, named by schema: an "=" that another
-- role put on the creator's search path is never called (it would stop
-- the pipeline, as code of another role), nor one of the owner's that
-- says unequal keys are equal (it would delete another key's session).
CREATE TYPE mood AS ENUM ('ok', 'sad');
CREATE SCHEMA shared;
CREATE ROLE wa_mallory;
GRANT CREATE, USAGE ON SCHEMA shared TO wa_mallory;
SET ROLE wa_mallory;
CREATE FUNCTION shared.mood_eq(mood, mood) RETURNS bool LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR shared.= (LEFTARG = mood, RIGHTARG = mood, FUNCTION = shared.mood_eq);
RESET ROLE;
CREATE FUNCTION public.mood_eq_all(mood, mood) RETURNS bool LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR public.= (LEFTARG = mood, RIGHTARG = mood, FUNCTION = public.mood_eq_all);
CREATE TABLE sm_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, m mood NOT NULL,
                     t bigint NOT NULL);
SET search_path = shared, public;
SELECT windowagg.create_pipeline('sm', 'SELECT m, count(*) AS n FROM sm_src GROUP BY m', 't',
    ARRAY[windowagg.session(10::bigint)], lateness => 100::bigint,
    result_table => 'public.sm') > 0 AS created;
RESET search_path;
-- two sessions of 'sad' and one of 'ok' with the same bounds fire; then an
-- event bridges the two of 'sad', which retracts [0, 10) of 'sad' only
INSERT INTO sm_src (m, t) VALUES ('ok', 0), ('sad', 0), ('sad', 15), ('ok', 60);
SELECT windowagg.wait('sm');
SELECT m, window_start, window_end, n FROM sm ORDER BY m, window_start;
INSERT INTO sm_src (m, t) VALUES ('sad', 8);
SELECT windowagg.wait('sm');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'sm';
SELECT m, window_start, window_end, n, revision FROM sm ORDER BY m, window_start;
SELECT windowagg.drop_pipeline('sm', drop_tables => true);
DROP TABLE sm_src;
-- a key of a type with a typmod (bit(3)) is compared whole, not cut to
-- the type's default (bit is bit(1)), and a NULL key only with NULL
CREATE TABLE sb_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, b bit(3),
                     t bigint NOT NULL);
SELECT windowagg.create_pipeline('sb', 'SELECT b, count(*) AS n FROM sb_src GROUP BY b', 't',
    ARRAY[windowagg.session(10::bigint)], lateness => 100::bigint) > 0 AS created;
INSERT INTO sb_src (b, t) VALUES (B'101', 0), (B'100', 0), (NULL, 0), (B'100', 15),
                                 (NULL, 15), (B'101', 60);
SELECT windowagg.wait('sb');
INSERT INTO sb_src (b, t) VALUES (B'100', 8), (NULL, 8);
SELECT windowagg.wait('sb');
SELECT b, window_start, window_end, n, revision FROM sb ORDER BY b, window_start;
SELECT windowagg.drop_pipeline('sb', drop_tables => true);
DROP TABLE sb_src;
DROP OPERATOR shared.= (mood, mood);
DROP OPERATOR public.= (mood, mood);
DROP FUNCTION shared.mood_eq, public.mood_eq_all;
DROP SCHEMA shared;
DROP TYPE mood;
DROP ROLE wa_mallory;

DROP TABLE sp_src, sq_src, st_src, sx_src, sp_got, sp_want, sp_want_c, sq_got, sq_want,
    revision_log, ev_sp, ev_sq;
DROP FUNCTION log_revision;
DROP PROCEDURE feed_sessions;
DROP FUNCTION make_session_events, replay_rules, compare_sessions;
