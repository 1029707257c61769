-- Pipelines over a logical replication stream (source => 'logical'),
-- against the row-by-row reference (ref_accept in t_00_setup).  The source
-- rows are deleted, updated and truncated right after they commit, and
-- some transactions roll back: only committed inserts are events.
SET timezone = 'UTC';
SET client_min_messages = warning;

-- 6000 events over 5 keys; every 23rd pushed back by up to 400 ticks
SELECT make_events('ev_lg', 6000, 5, 2, 15, 23, 400, 0.27);

-- a primary key, so that deletes come with their row
CREATE TABLE src_l (id bigint PRIMARY KEY, k int NOT NULL, t bigint, v int);

SELECT windowagg.create_pipeline(
    name => 'l_all',
    query => $$SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, max(v) AS mx
               FROM src_l GROUP BY k$$,
    event_time => 't',
    windows => ARRAY[windowagg.hopping(40, 10), windowagg.tumbling(30, 5)],
    bound => 20, lateness => 60, source => 'logical') > 0 AS created;
-- a WHERE clause, and updates and deletes sent to the dead letters
SELECT windowagg.create_pipeline(
    name => 'l_filtered',
    query => $$SELECT k, count(*) AS n, sum(v) AS s FROM src_l WHERE v > -500 GROUP BY k$$,
    event_time => 't',
    windows => ARRAY[windowagg.tumbling(25)],
    bound => 20, lateness => 60, source => 'logical',
    dead_letter_changes => true) > 0 AS created;

-- each pipeline owns a replication slot with windowagg's output plugin,
-- which only its worker can read
SELECT count(*) AS slots FROM pg_replication_slots
WHERE slot_name IN (SELECT slot_name FROM windowagg.pipelines
                    WHERE name IN ('l_all', 'l_filtered')) AND plugin = 'windowagg';
-- (servers with output_plugin_libraries must list it for other readers)
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'output_plugin_libraries') THEN
        PERFORM set_config('output_plugin_libraries', 'windowagg', false);
    END IF;
END
$$;
SELECT slot_name FROM pg_create_logical_replication_slot('not_a_worker', 'windowagg');
CREATE TABLE not_a_source (x int);
INSERT INTO not_a_source VALUES (1);
SELECT count(*) FROM pg_logical_slot_peek_binary_changes('not_a_worker', NULL, NULL);
DROP TABLE not_a_source;
SELECT pg_drop_replication_slot('not_a_worker');
RESET output_plugin_libraries;
SELECT c.relname, string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
WHERE c.relname = 'l_all_dead_letters' GROUP BY 1;

-- Feed the stream in uneven transactions.  Right after each commit the
-- rows are updated, deleted or truncated; a rolled-back batch in between
-- must leave no trace.
CREATE FUNCTION feed_l(lo int, hi int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO src_l SELECT id, k, t, v FROM ev_lg WHERE id BETWEEN lo AND hi ORDER BY id
$$;
SELECT feed_l(1, 700);
UPDATE src_l SET v = 0 WHERE id % 50 = 0;
DELETE FROM src_l WHERE id % 3 = 0;
BEGIN;
INSERT INTO src_l SELECT id + 100000, k, t, v FROM ev_lg WHERE id <= 500;
ROLLBACK;
SELECT feed_l(701, 2500);
TRUNCATE src_l;
SELECT windowagg.wait('l_all') AND windowagg.wait('l_filtered') AS caught_up;
SELECT feed_l(2501, 2600);
DELETE FROM src_l;
SELECT feed_l(2601, 4100);
-- one event per transaction for a while
DO $$
BEGIN
    FOR i IN 4101 .. 4300 LOOP
        PERFORM feed_l(i, i);
        COMMIT;
    END LOOP;
END
$$;
SELECT feed_l(4301, 6000);
UPDATE src_l SET v = v + 1 WHERE id > 5990;
TRUNCATE src_l;
SELECT windowagg.wait('l_all') AND windowagg.wait('l_filtered') AS caught_up;
-- end of input: every window fires
SELECT windowagg.flush('l_all') AND windowagg.flush('l_filtered') AS flushed;

-- Every window's final value is the fold of the events it accepted.
CREATE FUNCTION compare_logical(events regclass, sizes numeric[], slides numeric[],
                                origins numeric[], res regclass, dead regclass,
                                aggs text)
RETURNS TABLE (windows bigint, wrong bigint, missing bigint, too_late bigint,
               too_late_wrong bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$CREATE TEMP TABLE want AS
        SELECT e.k, a.ws::bigint AS window_start, a.we::bigint AS window_end, %1$s
        FROM ref_accept(%2$L, %3$L, %4$L, %5$L, 20, 60) a JOIN %2$s e USING (id)
        WHERE a.ws IS NOT NULL GROUP BY 1, 2, 3$q$,
        aggs, events, sizes, slides, origins);
    EXECUTE format($q$CREATE TEMP TABLE dead_want AS
        SELECT a.id FROM ref_accept(%1$L, %2$L, %3$L, %4$L, 20, 60) a WHERE a.ws IS NULL$q$,
        events, sizes, slides, origins);
    EXECUTE format('CREATE TEMP TABLE got AS SELECT * FROM %s', res);
    ALTER TABLE got DROP COLUMN pane, DROP COLUMN revision, DROP COLUMN updated_at;
    SELECT count(*) INTO windows FROM want;
    SELECT count(*) INTO wrong FROM (SELECT * FROM got EXCEPT SELECT * FROM want) x;
    SELECT count(*) INTO missing FROM (SELECT * FROM want EXCEPT SELECT * FROM got) x;
    EXECUTE format($q$SELECT count(*) FROM %s WHERE reason LIKE 'too late%%'$q$, dead)
      INTO too_late;
    EXECUTE format($q$SELECT count(*) FROM (
        (SELECT (source_row->>'id')::bigint FROM %1$s WHERE reason LIKE 'too late%%'
         EXCEPT SELECT id FROM dead_want)
        UNION ALL
        (SELECT id FROM dead_want
         EXCEPT SELECT (source_row->>'id')::bigint FROM %1$s WHERE reason LIKE 'too late%%')) x$q$,
        dead) INTO too_late_wrong;
    DROP TABLE want, dead_want, got;
    RETURN NEXT;
END
$$;

SELECT * FROM compare_logical('ev_lg', '{40,30}', '{10,30}', '{0,5}', 'l_all', 'l_all_dead_letters',
    'count(*) AS n, sum(e.v) AS s, min(e.v) AS mn, max(e.v) AS mx');
CREATE VIEW ev_lg_filtered AS SELECT * FROM ev_lg WHERE v > -500;
SELECT * FROM compare_logical('ev_lg_filtered', '{25}', '{25}', '{0}', 'l_filtered',
    'l_filtered_dead_letters', 'count(*) AS n, sum(e.v) AS s');

-- late panes happened, and the pipelines counted every
-- update and delete: 14 + 10 updates, 233 + 100 deletes
SELECT count(*) FILTER (WHERE pane = 'late') > 0 AS has_late FROM l_all;
SELECT name, source, events_in, source_updates, source_deletes,
       dead_letters = (SELECT count(*) FROM l_all_dead_letters) AS dead_letters_ok,
       retained_wal_bytes BETWEEN 0 AND 64 * 1024 * 1024 AS retained_wal_shown,
       lag_rows, last_error
FROM windowagg.stat_pipelines WHERE name = 'l_all';
SELECT name, source, source_updates, source_deletes, last_error
FROM windowagg.stat_pipelines WHERE name = 'l_filtered';
-- with dead_letter_changes, each update and delete is a dead letter that
-- carries the row (a delete's has only its key) and its commit LSN
SELECT reason, count(*), bool_and(commit_lsn > '0/0') AS has_lsn,
       bool_and(event_time IS NOT DISTINCT FROM (source_row->>'t')::bigint) AS same_time
FROM l_filtered_dead_letters WHERE reason NOT LIKE 'too late%'
GROUP BY 1 ORDER BY 1;

-- a drop that rolls back stops the worker for a moment only: the pipeline
-- goes on, its slot still there
BEGIN;
SELECT windowagg.drop_pipeline('l_all');
ROLLBACK;
INSERT INTO src_l SELECT id, k, t, v FROM ev_lg WHERE id <= 3;
SELECT windowagg.wait('l_all') AS caught_up;
SELECT events_in FROM windowagg.stat_pipelines WHERE name = 'l_all';
SELECT count(*) AS slots FROM pg_replication_slots
WHERE slot_name = (SELECT slot_name FROM windowagg.pipelines WHERE name = 'l_all');

-- a partitioned source: its rows arrive through its partitions, one of
-- which has its columns in another order
CREATE TABLE part_l (k int NOT NULL, t bigint NOT NULL, v int) PARTITION BY RANGE (t);
CREATE TABLE part_l_1 PARTITION OF part_l FOR VALUES FROM (MINVALUE) TO (1000);
CREATE TABLE part_l_2 (v int, t bigint NOT NULL, k int NOT NULL);
ALTER TABLE part_l ATTACH PARTITION part_l_2 FOR VALUES FROM (1000) TO (MAXVALUE);
SELECT windowagg.create_pipeline('l_part',
    'SELECT k, count(*) AS n, sum(v) AS s FROM part_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(100)], source => 'logical') > 0 AS created;
INSERT INTO part_l SELECT g % 3, g, g FROM generate_series(0, 1999) g;
-- a partition attached while the pipeline runs is read too (perhaps in
-- the same epoch as the rows before it)
CREATE TABLE part_l_3 (k int NOT NULL, v int, t bigint NOT NULL);
ALTER TABLE part_l DETACH PARTITION part_l_2;
ALTER TABLE part_l_2 RENAME TO part_l_2_old;
CREATE TABLE part_l_2 PARTITION OF part_l FOR VALUES FROM (1000) TO (2000);
ALTER TABLE part_l ATTACH PARTITION part_l_3 FOR VALUES FROM (2000) TO (MAXVALUE);
INSERT INTO part_l SELECT g % 3, g, g FROM generate_series(2000, 2999) g;
-- and rows of a detached one are not
INSERT INTO part_l_2_old SELECT 0, 2999, 1 FROM generate_series(1, 10);
SELECT windowagg.flush('l_part') AS flushed;
-- every row inserted through part_l, and nothing else
WITH want AS (SELECT g % 3 AS k, g / 100 * 100 AS ws, count(*) AS n, sum(g) AS s
              FROM generate_series(0, 2999) g GROUP BY 1, 2),
got AS (SELECT k, window_start, n, s FROM l_part)
SELECT (SELECT count(*) FROM want) AS windows,
       (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want) x) AS wrong,
       (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got) x) AS missing;
SELECT windowagg.drop_pipeline('l_part', drop_tables => true);
DROP TABLE part_l, part_l_2_old;

-- a logical pipeline's slot is made before anything is written, so it
-- cannot come after other writes in a transaction; a pipeline that rolls
-- back leaves no slot
BEGIN;
CREATE TABLE later_l (k int, t bigint);
SELECT windowagg.create_pipeline('l_later', 'SELECT k, count(*) FROM later_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], source => 'logical');
ROLLBACK;
CREATE TABLE later_l (k int, t bigint);
BEGIN;
SELECT windowagg.create_pipeline('l_later', 'SELECT k, count(*) FROM later_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], source => 'logical') > 0 AS created;
ROLLBACK;
SELECT count(*) AS orphan_slots FROM pg_replication_slots
WHERE slot_name LIKE 'windowagg_%'
  AND slot_name NOT IN (SELECT slot_name FROM windowagg.pipelines WHERE slot_name IS NOT NULL);
DROP TABLE later_l;

-- a used column dropped and added again (same name, same type, a new
-- place in the row): decoded rows from before and after the change are
-- read by the column's name, none as NULL
CREATE TABLE src_re (k int, t bigint, v int);
SELECT windowagg.create_pipeline('l_re', 'SELECT k, count(v) AS nv, sum(v) AS sv FROM src_re GROUP BY k',
    't', ARRAY[windowagg.tumbling(100)], source => 'logical') > 0 AS created;
INSERT INTO src_re SELECT i % 2, i, i FROM generate_series(1, 50) i;
SELECT windowagg.pause('l_re');
INSERT INTO src_re SELECT i % 2, i, i FROM generate_series(51, 60) i;
ALTER TABLE src_re DROP COLUMN v;
ALTER TABLE src_re ADD COLUMN v int;
INSERT INTO src_re SELECT i % 2, i, 1000 + i FROM generate_series(61, 80) i;
SELECT windowagg.resume('l_re');
INSERT INTO src_re SELECT i % 2, i, 1000 + i FROM generate_series(81, 90) i;
-- in one transaction: a worker that parsed its query in between would
-- rightly stop on the missing column
BEGIN;
ALTER TABLE src_re DROP COLUMN v;
ALTER TABLE src_re ADD COLUMN v int;
COMMIT;
INSERT INTO src_re SELECT i % 2, i, 2000 + i FROM generate_series(91, 99) i;
SELECT windowagg.flush('l_re');
-- against the values inserted (the table now holds the last ones only)
SELECT k, nv, sv,
       nv = (SELECT count(*) FROM generate_series(1, 99) i WHERE i % 2 = r.k) AS every_row,
       sv = (SELECT sum(CASE WHEN i <= 60 THEN i WHEN i <= 90 THEN 1000 + i ELSE 2000 + i END)
             FROM generate_series(1, 99) i WHERE i % 2 = r.k) AS every_value
FROM l_re r ORDER BY k;
SELECT windowagg.drop_pipeline('l_re', drop_tables => true);
DROP TABLE src_re;

-- bad arguments
SELECT windowagg.create_pipeline('l_bad', 'SELECT k, count(*) FROM src_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], source => 'kafka');
SELECT windowagg.create_pipeline('l_bad', 'SELECT k, count(*) FROM src_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], source => 'logical', arrival_column => 'id');
SELECT windowagg.create_pipeline('l_bad', 'SELECT k, count(*) FROM src_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], dead_letter_changes => true);
SELECT windowagg.create_pipeline('l_bad', 'SELECT k, count(*) FROM src_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], source => 'logical', publication => 'some_pub');
SELECT windowagg.create_pipeline('l_bad', 'SELECT k, count(*) FROM src_l GROUP BY k', 't',
    ARRAY[windowagg.tumbling(10)], source => 'logical', connection => 'dbname=x');

-- drop takes the slot along
SELECT windowagg.drop_pipeline('l_all', drop_tables => true);
SELECT windowagg.drop_pipeline('l_filtered', drop_tables => true);
SELECT count(*) AS slots_left FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%';
DROP TABLE src_l, ev_lg CASCADE;
DROP FUNCTION feed_l(int, int);
DROP FUNCTION compare_logical(regclass, numeric[], numeric[], numeric[], regclass, regclass, text);
