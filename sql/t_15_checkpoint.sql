-- The checkpoint format (src/pipeline/checkpoint.c): fixtures written by hand from
-- the format's description, not by the code, are read back; a log with
-- replaced records and a log of 0.1.0 (format 1) are both rewritten to
-- the same bytes; corrupt rows stop the pipeline with a clear error; big
-- states are written in chunks and compacted by their real size.
SET client_min_messages = warning;

-- Pieces of the fixtures, every integer little-endian.  The pipelines
-- below have one integer key and count(*), sum(v): an accumulator is
-- the event count (8 bytes), then sum(v)'s state, a 128-bit sum (16
-- bytes, low half first) and the number of inputs (8 bytes).  A slice
-- record is kind 1, its body length (52), the key length (8), the key,
-- the slice number (tumbling(10): t / 10), the accumulator.
\set header '5741434b' '02' '000000'
\set rec '01' '34000000' '08000000'
-- key 1, slice 0: two events, sum 7
\set k1s0 '0100000000000000' '0000000000000000' '0200000000000000' '0700000000000000' '0000000000000000' '0200000000000000'
-- key 1, slice 0 as an earlier epoch left it: one event, sum 3
\set k1s0_old '0100000000000000' '0000000000000000' '0100000000000000' '0300000000000000' '0000000000000000' '0100000000000000'
-- key 1, slice 1: one event, sum -3 (both halves of the sum negative)
\set k1s1 '0100000000000000' '0100000000000000' '0100000000000000' 'fdffffffffffffff' 'ffffffffffffffff' '0100000000000000'
-- key 2, slice 0: one event, sum 100
\set k2s0 '0200000000000000' '0000000000000000' '0100000000000000' '6400000000000000' '0000000000000000' '0100000000000000'

-- The events those slices hold, in the source; the pipelines are told
-- they have read them already (arrival_hwm), so that whatever they
-- report comes from the checkpoint.
CREATE FUNCTION fixture_pipeline(name text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, '
                   'k int, t bigint, v int)', name || '_src');
    EXECUTE format('INSERT INTO %I (k, t, v) VALUES (1, 1, 3), (1, 5, 4), (1, 12, -3), (2, 7, 100)',
                   name || '_src');
    PERFORM windowagg.create_pipeline(name,
        format('SELECT k, count(*) AS n, sum(v) AS s FROM %I GROUP BY k', name || '_src'),
        't', ARRAY[windowagg.tumbling(10)], enabled => false);
    UPDATE windowagg.pipeline_progress g
    SET arrival_hwm = 4, max_event_time = 12, events_in = 4, checkpoint_seq = 2
    FROM windowagg.pipelines p WHERE p.id = g.pipeline AND p.name = fixture_pipeline.name;
END $$;
CREATE FUNCTION put_checkpoint(pipeline text, seq bigint, data bytea) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO windowagg.checkpoints (pipeline, seq, expire_below, n_slices, acc_size, data)
    SELECT id, seq, 0, 0, 32, data FROM windowagg.pipelines WHERE name = pipeline
$$;
\set compact :header :rec :k1s0 :rec :k1s1 :rec :k2s0
-- the results against the source, and the log as it is now
CREATE FUNCTION fixture_check(name text, compact bytea)
RETURNS TABLE (differ bigint, rows bigint, compacted boolean) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT (SELECT count(*) FROM (
                   (SELECT k, window_start, n, s FROM %1$I
                    EXCEPT SELECT k, t - t %% 10, count(*), sum(v) FROM %2$I GROUP BY 1, 2)
                   UNION ALL
                   (SELECT k, t - t %% 10, count(*), sum(v) FROM %2$I GROUP BY 1, 2
                    EXCEPT SELECT k, window_start, n, s FROM %1$I)) x),
               (SELECT count(*) FROM windowagg.checkpoints c JOIN windowagg.pipelines p
                  ON p.id = c.pipeline WHERE p.name = %3$L),
               (SELECT bool_and(c.data = $1) FROM windowagg.checkpoints c
                  JOIN windowagg.pipelines p ON p.id = c.pipeline WHERE p.name = %3$L)
        $q$, name, name || '_src', name)
    USING compact;
END $$;

-- 1. Format 2 over two rows, the second replacing a record of the first:
-- the restore merges them and rewrites the log as one row, sorted by key
-- and slice, byte for byte the fixture.
SELECT fixture_pipeline('ck_new');
SELECT put_checkpoint('ck_new', 1, decode(:'header' || :'rec' || :'k1s0_old' || :'rec' || :'k2s0', 'hex'));
SELECT put_checkpoint('ck_new', 2, decode(:'header' || :'rec' || :'k1s0' || :'rec' || :'k1s1', 'hex'));
SELECT windowagg.resume('ck_new');
SELECT windowagg.wait('ck_new');
SELECT rows, compacted FROM fixture_check('ck_new', decode(:'compact', 'hex'));
SELECT windowagg.flush('ck_new');
SELECT differ FROM fixture_check('ck_new', decode(:'compact', 'hex'));

-- 2. The same state in format 1, as 0.1.0 wrote it on this (little-endian)
-- machine: records without kind or length, in native order.  Read, and
-- rewritten to the same bytes.
SELECT fixture_pipeline('ck_old');
SELECT put_checkpoint('ck_old', 1, decode('08000000' || :'k1s0_old', 'hex'));
SELECT put_checkpoint('ck_old', 2, decode('08000000' || :'k1s0' || '08000000' || :'k1s1' ||
                                          '08000000' || :'k2s0', 'hex'));
SELECT windowagg.resume('ck_old');
SELECT windowagg.wait('ck_old');
SELECT rows, compacted FROM fixture_check('ck_old', decode(:'compact', 'hex'));
SELECT windowagg.flush('ck_old');
SELECT differ FROM fixture_check('ck_old', decode(:'compact', 'hex'));

-- 3. Corrupt rows stop the pipeline (no retry loop, no crash) and say what
-- is wrong; with the row put right, resume goes on.
SELECT fixture_pipeline('ck_bad');
CREATE FUNCTION set_bad(data bytea) RETURNS void LANGUAGE sql AS $$
    DELETE FROM windowagg.checkpoints c USING windowagg.pipelines p
    WHERE p.id = c.pipeline AND p.name = 'ck_bad';
    SELECT put_checkpoint('ck_bad', 2, data);
$$;
CREATE FUNCTION bad_status(error_like text) RETURNS text LANGUAGE sql AS $$
    SELECT wait_for_status('ck_bad', 'stopped', error_like, seconds => 5);
    SELECT status || ': ' || regexp_replace(last_error, 'pipeline \d+', 'pipeline N')
    FROM windowagg.stat_pipelines WHERE name = 'ck_bad';
$$;
-- a record of a kind this version does not know
SELECT set_bad(decode(:'header' || '07' || '00000000', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%unknown kind%');
-- a record longer than what is left of the row
SELECT set_bad(decode(:'header' || :'rec' || '0100', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%past the end%');
-- lengths that do not add up to a slice record
SELECT set_bad(decode(:'header' || '01' || '04000000' || '09000000', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%add up%');
-- a header cut short, and a format from the future
SELECT set_bad(decode('5741434b02', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%header%');
SELECT set_bad(decode('5741434b09000000', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%format 9%');
-- format 1 with a record cut short
SELECT set_bad(decode('08000000' || '01000000', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%reaches past%');
-- a well-formed record whose accumulator no events could have built: a
-- negative event count (the engine's kernels would overflow on it)
SELECT set_bad(decode(:'header' || :'rec' || '0100000000000000' || '0000000000000000'
    || 'ffffffffffffffff' || '0700000000000000' || '0000000000000000' || '0200000000000000', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%no events could have built%');
-- a stored watermark that is not a whole tick (a hand edit, a foreign
-- dump) is read as a number, never as text: NaN, a fraction and a value
-- beyond the tick range each stop the pipeline
CREATE TABLE ck_bad_wm AS
SELECT pp.watermark FROM windowagg.pipeline_progress pp JOIN windowagg.pipelines p
ON p.id = pp.pipeline WHERE p.name = 'ck_bad';
CREATE FUNCTION set_bad_watermark(wm numeric) RETURNS void LANGUAGE sql AS $$
    UPDATE windowagg.pipeline_progress pp SET watermark = wm FROM windowagg.pipelines p
    WHERE p.id = pp.pipeline AND p.name = 'ck_bad';
$$;
SELECT set_bad_watermark('NaN');
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%is NaN');
SELECT set_bad_watermark(1.5);
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%whole number');
SELECT set_bad_watermark(2::numeric ^ 101);
SELECT windowagg.resume('ck_bad');
SELECT bad_status('%range of ticks');
SELECT set_bad_watermark((SELECT watermark FROM ck_bad_wm));
-- put right
DELETE FROM windowagg.checkpoints c USING windowagg.pipelines p
WHERE p.id = c.pipeline AND p.name = 'ck_bad';
SELECT put_checkpoint('ck_bad', 2, decode(:'header' || :'rec' || :'k1s0' || :'rec' || :'k1s1' ||
                                          :'rec' || :'k2s0', 'hex'));
SELECT windowagg.resume('ck_bad');
SELECT windowagg.flush('ck_bad');
SELECT differ FROM fixture_check('ck_bad', decode(:'compact', 'hex'));

-- 4. A state of ~10 MB in long text keys: one epoch writes it in chunks of
-- at most 8 MB, and the compaction rule weighs records by their real size,
-- so that an epoch that changes half the keys leaves the log as it is
-- (an estimate of 16 bytes a key compacted it every epoch).  A restart
-- rewrites the replaced records away.
CREATE TABLE ck_big_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k text, t bigint);
SELECT windowagg.create_pipeline('ck_big', 'SELECT k, count(*) AS n FROM ck_big_src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(1000)], enabled => false) > 0 AS created;
INSERT INTO ck_big_src (k, t) SELECT repeat(md5(i::text), 10), 1 FROM generate_series(1, 30000) i;
SELECT windowagg.resume('ck_big');
SELECT windowagg.wait('ck_big');
CREATE VIEW ck_big_log AS
SELECT count(*) AS rows, sum(c.n_slices) AS records, max(length(c.data)) <= 8 * 1024 * 1024 AS chunks_fit,
       sum(length(c.data)) > 8 * 1024 * 1024 AS state_exceeds_a_chunk
FROM windowagg.checkpoints c JOIN windowagg.pipelines p ON p.id = c.pipeline
WHERE p.name = 'ck_big';
SELECT * FROM ck_big_log;
INSERT INTO ck_big_src (k, t) SELECT repeat(md5(i::text), 10), 2 FROM generate_series(1, 15000) i;
SELECT windowagg.wait('ck_big');
SELECT * FROM ck_big_log;
SELECT windowagg.pause('ck_big');
-- the worker must have left, or resume only keeps it running
SELECT wait_for_status('ck_big', 'paused');
SELECT windowagg.resume('ck_big');
SELECT windowagg.wait('ck_big');
SELECT * FROM ck_big_log;
SELECT windowagg.flush('ck_big');
SELECT count(*) AS differ FROM (
    (SELECT k, n FROM ck_big EXCEPT SELECT k, count(*) FROM ck_big_src GROUP BY k)
    UNION ALL
    (SELECT k, count(*) FROM ck_big_src GROUP BY k EXCEPT SELECT k, n FROM ck_big)) x;

SELECT windowagg.drop_pipeline(name, drop_tables => true)
FROM windowagg.pipelines WHERE name LIKE 'ck\_%' ORDER BY name;
DROP VIEW ck_big_log;
DROP TABLE ck_big_src, ck_new_src, ck_old_src, ck_bad_src;
DROP FUNCTION fixture_pipeline(text), put_checkpoint(text, bigint, bytea),
              fixture_check(text, bytea), set_bad(bytea), bad_status(text);
