-- bench/checkpoint/bench.sql: see run.sh.  Variables: small, large, events,
-- hot, reps.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION windowagg;

-- one row per case, one per measured run
CREATE TABLE cases (case_no int PRIMARY KEY, label text, pipeline int, prefilled bigint,
                    prefill_s float8, live_slices bigint, state_bytes bigint,
                    log_rows bigint, log_slices bigint, log_bytes bigint,
                    log_rows_end bigint, log_bytes_end bigint, state_bytes_end bigint,
                    events_in bigint, dead_letters bigint, panes bigint, live_events bigint);
CREATE TABLE runs (case_no int, rep int, events bigint, seconds float8, epochs bigint,
                   ckpt_rows bigint, compactions bigint, ckpt_slices bigint,
                   ckpt_bytes bigint, wal_bytes numeric);

-- A case: pipeline ckpt_<case> over table ev_<case>, whose single window
-- (ticks 0 to 10^9) stays open for the whole run, so every slice it holds
-- stays live; n keys with one event each make n live slices.
CREATE PROCEDURE set_up(case_no int, n int) LANGUAGE plpgsql AS $$
DECLARE
    pid int;
    t0 timestamptz;
    secs float8;
BEGIN
    EXECUTE format('CREATE TABLE ev_%s (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    k int NOT NULL, t bigint NOT NULL, v float8)
                    WITH (autovacuum_enabled = false)', case_no);  -- no vacuum mid-measurement
    pid := windowagg.create_pipeline('ckpt_' || case_no,
        format('SELECT k, count(*) AS n, sum(v) AS s FROM ev_%s GROUP BY k', case_no),
        't', ARRAY[windowagg.tumbling(1000000000)], bound => 0, lateness => 0);
    COMMIT;
    PERFORM windowagg.wait('ckpt_' || case_no, NULL);

    -- the live state: n keys, one event each, all in the open window
    EXECUTE format('INSERT INTO ev_%s (k, t, v) SELECT i, 0, 1 FROM generate_series(0, $1 - 1) i',
                   case_no) USING n;
    COMMIT;
    t0 := clock_timestamp();
    PERFORM windowagg.wait('ckpt_' || case_no, NULL);
    secs := extract(epoch FROM clock_timestamp() - t0);
    INSERT INTO cases (case_no, label, pipeline, prefilled, prefill_s, state_bytes,
                       log_rows, log_slices, log_bytes)
    SELECT case_no, to_char(n, 'FM9,999,999,999') || ' live', pid, n, secs,
           (SELECT state_bytes FROM windowagg.stat_pipelines WHERE name = 'ckpt_' || case_no),
           count(*), sum(c.n_slices), sum(octet_length(c.data))
    FROM windowagg.checkpoints c WHERE c.pipeline = pid;
    -- windows that hold data and have not fired: one slice each here
    EXECUTE format('UPDATE cases SET live_slices = (SELECT count(*) FROM ckpt_%s_live)
                    WHERE case_no = $1', case_no) USING case_no;
    COMMIT;
END
$$;

-- One measured run: events events over keys 0 .. hot - 1 at event times
-- base, base + 1, ..., committed in one transaction while the pipeline is
-- running and idle, timed from the commit until wait returns.
CREATE PROCEDURE measure(case_no int, rep int, events int, hot int, base bigint)
LANGUAGE plpgsql AS $$
DECLARE
    pid int := (SELECT pipeline FROM cases c WHERE c.case_no = measure.case_no);
    t0 timestamptz;
    secs float8;
    seq0 bigint;
    epochs0 bigint;
    lsn0 pg_lsn;
BEGIN
    CHECKPOINT;  -- no server checkpoint during the measurement
    SELECT max(seq) INTO seq0 FROM windowagg.checkpoints WHERE pipeline = pid;
    SELECT p.epochs INTO epochs0 FROM windowagg.pipeline_progress p WHERE pipeline = pid;
    EXECUTE format('INSERT INTO ev_%s (k, t, v)
                    SELECT i %% $1, $2 + i, i %% 100 FROM generate_series(0, $3 - 1) i',
                   case_no) USING hot, base, events;
    COMMIT;
    t0 := clock_timestamp();
    lsn0 := pg_current_wal_insert_lsn();
    PERFORM windowagg.wait('ckpt_' || case_no, NULL);
    secs := extract(epoch FROM clock_timestamp() - t0);
    INSERT INTO runs
    SELECT case_no, rep, events, secs, p.epochs - epochs0,
           w.last_seq - seq0, (w.last_seq - seq0) - (p.epochs - epochs0),
           w.slices, w.bytes, pg_wal_lsn_diff(pg_current_wal_insert_lsn(), lsn0)
    FROM windowagg.pipeline_progress p,
         (SELECT max(seq) AS last_seq, sum(n_slices) AS slices,
                 sum(octet_length(data)) AS bytes
          FROM windowagg.checkpoints WHERE pipeline = pid AND seq > seq0) w
    WHERE p.pipeline = pid;
    COMMIT;
END
$$;

CALL set_up(1, :small);
CALL set_up(2, :large);

-- the runs alternate between the cases (1 2, 2 1, 1 2, ...), so that a
-- slow spell of the machine does not fall on one case only
SELECT format('CALL measure(%s, %s, %s, %s, %s)', CASE WHEN rep % 2 = 1 THEN x ELSE 3 - x END,
              rep, :events, :hot, 1 + (rep - 1) * :events::bigint)
FROM generate_series(1, :reps) rep, generate_series(1, 2) x ORDER BY rep, x \gexec

UPDATE cases c
SET log_rows_end = l.rows, log_bytes_end = l.bytes, state_bytes_end = s.state_bytes,
    events_in = s.events_in, dead_letters = s.dead_letters,
    panes = s.panes_on_time + s.panes_late
FROM (SELECT pipeline, count(*) AS rows, sum(octet_length(data)) AS bytes
      FROM windowagg.checkpoints GROUP BY pipeline) l,
     windowagg.stat_pipelines s
WHERE l.pipeline = c.pipeline AND s.name = 'ckpt_' || c.case_no;
UPDATE cases SET live_events = (SELECT sum(n) FROM ckpt_1_live) WHERE case_no = 1;
UPDATE cases SET live_events = (SELECT sum(n) FROM ckpt_2_live) WHERE case_no = 2;

\echo
\echo The live state after the prefill (n keys, one event each) and at the end:
SELECT label AS "case", round(prefilled / prefill_s) AS "prefill events/s",
       live_slices AS "live slices", pg_size_pretty(state_bytes) AS "state",
       log_rows AS "ckpt rows", log_slices AS "ckpt slices",
       pg_size_pretty(log_bytes) AS "ckpt bytes",
       pg_size_pretty(state_bytes_end) AS "state at end",
       log_rows_end AS "ckpt rows at end", pg_size_pretty(log_bytes_end) AS "ckpt bytes at end",
       events_in AS "events in", dead_letters AS "dead letters", panes,
       live_events = events_in AS "live = in"
FROM cases ORDER BY case_no;

\echo
\echo Every measured run, in the order run, and what the pipeline wrote while
\echo consuming it (checkpoint rows, slices and bytes; compactions; all its WAL).
\echo After a compaction, slices and bytes count the rows it left: the compacted one and later ones.
SELECT c.label AS "case", r.rep, r.events, round(r.seconds::numeric, 3) AS seconds,
       round(r.events / r.seconds) AS "events/s", r.epochs, r.ckpt_rows AS "ckpt rows",
       r.compactions, r.ckpt_slices AS "ckpt slices", pg_size_pretty(r.ckpt_bytes) AS "ckpt bytes",
       pg_size_pretty(r.wal_bytes) AS "WAL"
FROM runs r JOIN cases c USING (case_no) ORDER BY r.ctid;

-- the best run of each case
SELECT c.label AS small_label, c.live_slices AS small_live, r.seconds AS small_s
FROM runs r JOIN cases c USING (case_no) WHERE case_no = 1 ORDER BY r.seconds LIMIT 1 \gset
SELECT c.label AS large_label, c.live_slices AS large_live, r.seconds AS large_s
FROM runs r JOIN cases c USING (case_no) WHERE case_no = 2 ORDER BY r.seconds LIMIT 1 \gset

\echo
\echo Ingest throughput, best of :reps runs of the same stream (:events events over :hot keys);
\echo target: the ratio within 1.5x.
SELECT * FROM (VALUES
    (:'small_label', :small_live, :events, round(:small_s::numeric, 3), round(:events / :small_s), NULL),
    (:'large_label', :large_live, :events, round(:large_s::numeric, 3), round(:events / :large_s),
     round((:large_s / :small_s)::numeric, 2))
) AS t("case", "live slices", events, seconds, "events/s", "ratio (small/large events/s)");
