-- Pipelines: bad input, privileges and hostile names.
SET timezone = 'UTC';
SET client_min_messages = warning;

CREATE TABLE ev_plain (k int, t bigint, v int);
CREATE TABLE ev_cached (id bigint GENERATED ALWAYS AS IDENTITY (CACHE 20) PRIMARY KEY,
                        k int, t bigint, v int);
CREATE TABLE ev_noindex (id bigint GENERATED ALWAYS AS IDENTITY, k int, t bigint, v int);
CREATE TABLE ev_ok (id bigserial PRIMARY KEY, k int, t bigint, ts timestamptz, v int);
CREATE VIEW ev_view AS SELECT * FROM ev_ok;

-- the arguments
SELECT windowagg.create_pipeline(NULL, 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', NULL, 't', ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling('1 min')]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], idle_timeout => '1 s');
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 'ts',
                                 ARRAY[windowagg.tumbling('1 min')], idle_timeout => '0 s');
SELECT windowagg.create_pipeline('p', 'SELECT k, string_agg(v::text, '','') FROM ev_ok GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], bound => -1);

-- the source and its arrival column
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_plain GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], arrival_column => 'v');
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], arrival_column => 'nope');
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_cached GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_noindex GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_view GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], arrival_column => 'id');
-- a temporary table is one session's: no worker could read or write it
CREATE TEMP TABLE ev_temp (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_temp GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], result_table => 'pg_temp.p');
-- character(n) keys compare without their trailing spaces, their bytes with them
CREATE TABLE ev_char (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, c char(3), t bigint);
SELECT windowagg.create_pipeline('p', 'SELECT c, count(*) FROM ev_char GROUP BY c', 't',
                                 ARRAY[windowagg.tumbling(10)]);
SELECT * FROM windowagg.aggregate('SELECT c::char, count(*) FROM ev_char GROUP BY 1', 't',
                                  ARRAY[windowagg.tumbling(10)])
    AS a(c char, window_start bigint, window_end bigint, count bigint, pane text, revision bigint);

-- nothing was left behind by the failures
SELECT count(*) FROM windowagg.pipelines;
SELECT count(*) FROM pg_class WHERE relname LIKE 'p\_%' OR relname = 'p';

-- a name is taken once; the second attempt leaves the first intact
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) AS n FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]) > 0 AS created;
SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) AS n FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], result_table => 'other');
SELECT windowagg.create_pipeline('q', 'SELECT k, count(*) AS n FROM ev_ok GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)], result_table => 'p');
-- a pipeline created in a rolled-back transaction never existed
BEGIN;
SELECT windowagg.create_pipeline('rolled_back', 'SELECT k, count(*) AS n FROM ev_ok GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)]) > 0 AS created;
ROLLBACK;
SELECT name FROM windowagg.pipelines ORDER BY name;
SELECT to_regclass('rolled_back') AS table_left;

-- the functions on pipelines that do not exist
SELECT windowagg.wait('nope');
SELECT windowagg.flush('nope');
SELECT windowagg.pause('nope');
SELECT windowagg.resume('nope');
SELECT windowagg.drop_pipeline('nope');
SELECT * FROM windowagg.live('nope') AS l(k int);
-- live needs the column list its view has
SELECT * FROM windowagg.live('p') AS l(k int);
SELECT count(*) FROM p_live;

-- a paused pipeline cannot be waited for
SELECT windowagg.pause('p');
SELECT windowagg.wait('p');
SELECT windowagg.resume('p');
SELECT windowagg.wait('p');

-- privileges: the source must be readable, the schema writable, and only
-- the owner changes a pipeline
CREATE ROLE wa_alice;
CREATE ROLE wa_bob;
CREATE SCHEMA alice_space AUTHORIZATION wa_alice;
GRANT USAGE ON SCHEMA alice_space TO wa_bob;
SET ROLE wa_alice;
CREATE TABLE alice_space.secret (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                                 k int, t bigint);
SELECT windowagg.create_pipeline('alice_p', 'SELECT k, count(*) AS n FROM alice_space.secret GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'alice_space.alice_p') > 0 AS created;
RESET ROLE;
SET ROLE wa_bob;
SELECT windowagg.create_pipeline('bob_p', 'SELECT k, count(*) AS n FROM alice_space.secret GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)]);
SELECT windowagg.create_pipeline('bob_p', 'SELECT k, count(*) AS n FROM ev_ok GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'alice_space.bob_p');
SELECT windowagg.pause('alice_p');
SELECT windowagg.drop_pipeline('alice_p');
SELECT * FROM alice_space.alice_p_live;
RESET ROLE;

-- the worker runs as the owner: it stops with a clear error when the
-- owner can no longer read the source (until resumed)
SET ROLE wa_alice;
INSERT INTO alice_space.secret (k, t) VALUES (1, 5), (1, 25);
SELECT windowagg.wait('alice_p');
SELECT k, window_start, n FROM alice_space.alice_p ORDER BY 1, 2;
REVOKE SELECT ON alice_space.secret FROM wa_alice;
RESET ROLE;
SELECT windowagg.pause('alice_p');
SELECT windowagg.resume('alice_p');
SELECT wait_for_status('alice_p', 'stopped');
SELECT status, last_error FROM windowagg.stat_pipelines WHERE name = 'alice_p';
-- waiting for a stopped pipeline is pointless: an error at once, with why
SELECT windowagg.wait('alice_p', '10 min');
SELECT windowagg.flush('alice_p', '10 min');
SET ROLE wa_alice;
GRANT SELECT ON alice_space.secret TO wa_alice;
SELECT windowagg.drop_pipeline('alice_p', drop_tables => true);
RESET ROLE;

-- every identifier is quoted: a hostile table and column name is a name
CREATE TABLE "a""b; drop table ev_ok;--" (
    "i d" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    "k""ey" text, "t;" bigint, "v)" int);
SELECT windowagg.create_pipeline('hostile',
    $$SELECT "k""ey", sum("v)") AS "s""um" FROM "a""b; drop table ev_ok;--" GROUP BY "k""ey"$$,
    't;', ARRAY[windowagg.tumbling(10)],
    result_table => 'r"x; drop table ev_ok;--');
-- result_table is an SQL name, quoted like one
SELECT windowagg.create_pipeline('hostile',
    $$SELECT "k""ey", sum("v)") AS "s""um" FROM "a""b; drop table ev_ok;--" GROUP BY "k""ey"$$,
    't;', ARRAY[windowagg.tumbling(10)],
    result_table => '"r""x; drop table ev_ok;--"') > 0 AS created;
INSERT INTO "a""b; drop table ev_ok;--" ("k""ey", "t;", "v)")
VALUES ('x', 1, 10), ('x', 2, 5), ('y', 3, 1), ('x', 40, 7), (NULL, 4, 2);
SELECT windowagg.flush('hostile');
SELECT "k""ey", window_start, window_end, "s""um", pane, revision
FROM "r""x; drop table ev_ok;--" ORDER BY 1 NULLS FIRST, 2;
SELECT arrival, reason FROM "r""x; drop table ev_ok;--_dead_letters";
SELECT to_regclass('ev_ok') IS NOT NULL AS ev_ok_survives;
SELECT windowagg.drop_pipeline('hostile', drop_tables => true);
SELECT windowagg.drop_pipeline('p', drop_tables => true);
DROP SCHEMA alice_space CASCADE;
DROP ROLE wa_alice;
DROP ROLE wa_bob;
