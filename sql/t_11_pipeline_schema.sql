-- Pipelines and schema changes: a pipeline's tables cannot be dropped from
-- under it; a change to the source that breaks its query stops it with a
-- clear error, keeps its state, and it resumes where it stopped once the
-- table is fixed.
SET client_min_messages = warning;

CREATE TABLE src_s (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    k int NOT NULL, t bigint NOT NULL, v int, w int, unused text);
SELECT windowagg.create_pipeline('p_schema',
    'SELECT k, count(*) AS n, sum(v) AS s, max(w) AS mw FROM src_s GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], bound => 5, lateness => 10) > 0 AS created;
CREATE FUNCTION feed_s(lo int, hi int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO src_s (k, t, v, w)
    SELECT i % 3, i, i % 7, i % 11 FROM generate_series(lo, hi) i
$$;
SELECT feed_s(1, 100);
SELECT windowagg.wait('p_schema');

-- the tables a pipeline reads and writes cannot be dropped
DROP TABLE src_s;
DROP TABLE p_schema;
DROP TABLE p_schema_dead_letters;
-- changes that do not touch the query go unnoticed
ALTER TABLE src_s ALTER COLUMN unused TYPE varchar(20);
SELECT feed_s(101, 120);
SELECT windowagg.wait('p_schema');

-- a used column changes type: the pipeline stops instead of misreading it
ALTER TABLE src_s ALTER COLUMN v TYPE bigint;
SELECT feed_s(121, 130);
SELECT wait_for_status('p_schema', 'stopped');
SELECT status, worker_pid IS NULL AS no_worker, last_error
FROM windowagg.stat_pipelines WHERE name = 'p_schema';
SELECT windowagg.wait('p_schema', '1 s');   -- stopped: an error at once
-- its offset and checkpoint are intact
SELECT arrival_hwm FROM windowagg.pipeline_progress;
SELECT count(*) > 0 AS has_checkpoint FROM windowagg.checkpoints;

-- fixed, resumed: it goes on from where it stopped
ALTER TABLE src_s ALTER COLUMN v TYPE int;
SELECT windowagg.resume('p_schema');
SELECT windowagg.wait('p_schema');
SELECT status FROM windowagg.stat_pipelines WHERE name = 'p_schema';

-- a used column is dropped: stopped again, with the column named
ALTER TABLE src_s RENAME COLUMN w TO w_old;
INSERT INTO src_s (k, t, v) SELECT i % 3, i, i % 7 FROM generate_series(131, 140) i;
SELECT wait_for_status('p_schema', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'p_schema';
ALTER TABLE src_s RENAME COLUMN w_old TO w;
SELECT windowagg.resume('p_schema');

-- the source renamed away and another table made under its name: stopped
-- (it would read the new table from the old one's offset); in one
-- transaction, so that no epoch finds no table of that name
BEGIN;
ALTER TABLE src_s RENAME TO src_s_moved;
CREATE TABLE src_s (LIKE src_s_moved);
COMMIT;
SELECT wait_for_status('p_schema', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'p_schema';
DROP TABLE src_s;
ALTER TABLE src_s_moved RENAME TO src_s;
SELECT windowagg.resume('p_schema');
SELECT windowagg.wait('p_schema');

-- a row numbered beyond the arrival sequence (an explicit number) would
-- make the rows it numbers next be skipped: stopped before anything of it
-- commits; set right, the pipeline goes on and loses nothing
INSERT INTO src_s (id, k, t, v, w) OVERRIDING SYSTEM VALUE VALUES (100000, 1, 150, 1, 1);
SELECT wait_for_status('p_schema', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'p_schema';
SELECT setval(pg_get_serial_sequence('src_s', 'id'), 100000);
SELECT windowagg.resume('p_schema');
SELECT windowagg.wait('p_schema');
-- a sequence set back the same
SELECT setval(pg_get_serial_sequence('src_s', 'id'), 500);
SELECT feed_s(141, 141);
SELECT wait_for_status('p_schema', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'p_schema';
DELETE FROM src_s WHERE id BETWEEN 501 AND 100000 AND t = 141;
SELECT setval(pg_get_serial_sequence('src_s', 'id'), 100000);
SELECT windowagg.resume('p_schema');
SELECT windowagg.wait('p_schema');
-- and a cache on the sequence, which hands numbers out of order
ALTER SEQUENCE src_s_id_seq CACHE 20;
SELECT wait_for_status('p_schema', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'p_schema';
ALTER SEQUENCE src_s_id_seq CACHE 1;
SELECT windowagg.resume('p_schema');
SELECT windowagg.wait('p_schema');

-- an epoch that fails with the same error again and again (here every
-- write of a result) is no longer retried for ever: stopped after five
ALTER TABLE p_schema ADD CONSTRAINT never CHECK (n < 0) NOT VALID;
SELECT feed_s(142, 160);
SELECT wait_for_status('p_schema', 'stopped', seconds => 90);
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'p_schema';
ALTER TABLE p_schema DROP CONSTRAINT never;
SELECT windowagg.resume('p_schema');
SELECT windowagg.wait('p_schema');

-- nothing was lost or counted twice: the results equal the batch function
SELECT feed_s(161, 200);
SELECT windowagg.flush('p_schema');
SELECT count(*) AS windows,
       count(*) FILTER (WHERE r.n IS DISTINCT FROM b.n OR r.s IS DISTINCT FROM b.s
                           OR r.mw IS DISTINCT FROM b.mw) AS differences
FROM p_schema r FULL JOIN (
    SELECT DISTINCT ON (k, ws) * FROM windowagg.aggregate(
        'SELECT k, count(*) AS n, sum(v) AS s, max(w) AS mw FROM src_s GROUP BY k', 't',
        ARRAY[windowagg.tumbling(10)], bound => 5, lateness => 10, arrival_order => 'id')
      AS (k int, ws bigint, we bigint, n bigint, s bigint, mw int, pane text, rev bigint)
    ORDER BY k, ws, rev DESC) b ON b.k = r.k AND b.ws = r.window_start;
SELECT events_in FROM windowagg.stat_pipelines WHERE name = 'p_schema';

-- dropping the pipeline frees its tables
SELECT windowagg.drop_pipeline('p_schema', drop_tables => true);
DROP TABLE src_s;
SELECT to_regclass('p_schema') AS result_table;
