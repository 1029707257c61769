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

-- near the ends of bigint, a window the type cannot hold does not exist:
-- an event in none of the windows that exist is a dead letter, one in some
-- of them counts as partial, and neither stops the rows behind it
CREATE TABLE ev_near_ends (id bigserial PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('near_ends', 'SELECT k, count(*) AS n FROM ev_near_ends GROUP BY k', 't',
                                 ARRAY[windowagg.hopping(20, 10)], lateness => 9223372036854775807) > 0 AS created;
INSERT INTO ev_near_ends (k, t) VALUES
    (1, -9223372036854775808), (1, -9223372036854775791), (1, -9223372036854775800),
    (2, 5), (2, 9223372036854775795), (2, 9223372036854775807), (2, 9223372036854775790);
SELECT windowagg.flush('near_ends');
-- the reference, in numeric: the windows containing each event that end by
-- bigint's largest value and start at or after its smallest
CREATE TEMP VIEW near_ends_want AS
    SELECT k, s AS window_start, s + 20 AS window_end, count(*) AS n
    FROM ev_near_ends, LATERAL (SELECT t - ((t::numeric % 10) + 10) % 10 - 10 * g AS s
                          FROM generate_series(0, 1) g) w
    WHERE s >= -9223372036854775808 AND s + 20 <= 9223372036854775807
    GROUP BY k, s;
SELECT (SELECT count(*) FROM near_ends_want) AS windows,
       (SELECT count(*) FROM (SELECT k, window_start::numeric, window_end::numeric, n FROM near_ends
                              EXCEPT SELECT * FROM near_ends_want) x) AS wrong,
       (SELECT count(*) FROM (SELECT * FROM near_ends_want
                              EXCEPT SELECT k, window_start, window_end, n FROM near_ends) x) AS missing;
SELECT arrival, event_time, reason, watermark FROM near_ends_dead_letters ORDER BY arrival;
SELECT status, events_in, events_partial, dead_letters FROM windowagg.stat_pipelines WHERE name = 'near_ends';
-- an event that only windows beyond the type's range would take is a dead
-- letter too, not lost (the query fuzzer found it lost): the window
-- [3, 3 + 2^63 - 1) of tumbling(2^63 - 1, 3) does not exist, and [0, 10)
-- of tumbling(10) has closed when the event at 5 comes after one at 100
CREATE TABLE ev_beyond_p (id bigserial PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('beyond', 'SELECT k, count(*) AS n FROM ev_beyond_p GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10), windowagg.tumbling(9223372036854775807, 3)]) > 0 AS created;
INSERT INTO ev_beyond_p (k, t) VALUES (1, 100), (1, 5), (1, 103);
SELECT windowagg.flush('beyond');
SELECT k, window_start, window_end, n FROM beyond ORDER BY window_start;
SELECT arrival, event_time, reason, watermark FROM beyond_dead_letters ORDER BY arrival;
SELECT status, events_in, events_partial, dead_letters FROM windowagg.stat_pipelines WHERE name = 'beyond';
SELECT windowagg.drop_pipeline('beyond', drop_tables => true);
SELECT windowagg.drop_pipeline('near_ends', drop_tables => true);
DROP VIEW near_ends_want;

-- a key too large for the result table's index is a dead letter before
-- it touches any state: PostgreSQL's own btree, on a table with the same
-- primary key, says which keys fit
CREATE TABLE ev_big_keys (id bigserial PRIMARY KEY, k text, t bigint);
SELECT windowagg.create_pipeline('big_keys', 'SELECT k, count(*) AS n FROM ev_big_keys GROUP BY k', 't',
                                 ARRAY[windowagg.tumbling(10)]) > 0 AS created;
SELECT setseed(0.25);
CREATE TEMP TABLE big_key_cases AS
    SELECT n AS len, (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 90))::text AS hex
    FROM generate_series(2600, 2720, 8) n;
INSERT INTO ev_big_keys (k, t)
    SELECT left(hex, len), len FROM big_key_cases
    UNION ALL SELECT repeat('x', 100000), 3001
    UNION ALL SELECT repeat('y', 2000000), 3002
    UNION ALL SELECT 'small', 3003
    UNION ALL SELECT repeat(left(hex, 2000), 2), 3004 FROM big_key_cases WHERE len = 2600;
-- stored small by lz4 (2.5 kB), but written whole and compressed by the
-- index's own method, it does not fit: what counts is the value written
SET default_toast_compression = lz4;
INSERT INTO ev_big_keys (k, t)
    SELECT left(hex, 1280) || repeat('0', 300000), 3005 FROM big_key_cases WHERE len = 2600;
RESET default_toast_compression;
SELECT windowagg.flush('big_keys');
CREATE TEMP TABLE big_key_probe (k text, window_start bigint, window_end bigint,
                                 PRIMARY KEY (k, window_start, window_end));
CREATE FUNCTION pg_index_takes(key text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO big_key_probe VALUES (key, 0, 10);
    RETURN true;
EXCEPTION WHEN program_limit_exceeded THEN
    RETURN false;
END $$;
-- the worker writes each key whole (decoded from its own copy), as k || ''
-- is, however the source stored it
CREATE TEMP TABLE big_key_want AS
    SELECT id, t, pg_index_takes(k || '') AS fits FROM ev_big_keys;
SELECT count(*) FILTER (WHERE fits) AS fit, count(*) FILTER (WHERE NOT fits) AS refused,
       min(t) FILTER (WHERE NOT fits AND t < 3000) AS shortest_refused_hex
FROM big_key_want;
-- every key that fits is in the results, every other one a dead letter
SELECT (SELECT count(*) FROM big_key_want w
        WHERE w.fits <> EXISTS (SELECT FROM big_keys r JOIN ev_big_keys e ON e.k = r.k WHERE e.id = w.id))
         AS results_differ,
       (SELECT count(*) FROM big_key_want w
        WHERE w.fits = EXISTS (SELECT FROM big_keys_dead_letters d WHERE d.arrival = w.id))
         AS dead_letters_differ;
SELECT DISTINCT reason FROM big_keys_dead_letters;
SELECT status, events_in, dead_letters FROM windowagg.stat_pipelines WHERE name = 'big_keys';
SELECT windowagg.drop_pipeline('big_keys', drop_tables => true);
DROP FUNCTION pg_index_takes(text);
DROP TABLE big_key_want, big_key_probe, big_key_cases, ev_big_keys;

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
-- idle_timeout over a timestamp without time zone follows the wall clock
-- of the zone the pipeline was created in (Honolulu: UTC-10, no summer
-- time), not UTC's: an event half an hour ahead of that clock is on time
SET TimeZone = 'Pacific/Honolulu';
CREATE TABLE ev_local (id bigserial PRIMARY KEY, ts timestamp);
SELECT windowagg.create_pipeline('local_clock', 'SELECT count(*) AS n FROM ev_local', 'ts',
                                 ARRAY[windowagg.tumbling('1 hour')],
                                 idle_timeout => '100 ms') > 0 AS created;
SELECT time_zone FROM windowagg.pipelines WHERE name = 'local_clock';
RESET TimeZone;
CREATE FUNCTION honolulu_ticks(at timestamptz) RETURNS numeric LANGUAGE sql AS $$
    SELECT extract(epoch FROM at AT TIME ZONE 'Pacific/Honolulu') * 1000000 - 946684800000000
$$;
INSERT INTO ev_local (ts) VALUES (now() AT TIME ZONE 'Pacific/Honolulu' - interval '2 hours');
DO $$
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN (SELECT watermark_ticks > honolulu_ticks(now()) - 60000000
                   FROM windowagg.stat_pipelines WHERE name = 'local_clock');
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
-- (the upper bound read after the watermark: the worker moves it on
-- while this statement runs, past the now() of its start)
SELECT watermark_ticks BETWEEN honolulu_ticks(now()) - 60000000
                           AND honolulu_ticks(clock_timestamp())
         AS watermark_is_honolulu_now
FROM windowagg.stat_pipelines WHERE name = 'local_clock';
INSERT INTO ev_local (ts) VALUES (now() AT TIME ZONE 'Pacific/Honolulu' + interval '30 min');
SELECT windowagg.flush('local_clock');
SELECT count(*) AS events, (SELECT count(*) FROM local_clock_dead_letters) AS dead_letters
FROM ev_local;
SELECT sum(n) AS counted FROM local_clock;
SELECT windowagg.drop_pipeline('local_clock', drop_tables => true);
DROP FUNCTION honolulu_ticks(timestamptz);

-- a pipeline belongs to the owner of its result table: DROP ROLE refuses
-- that owner; when REASSIGN OWNED (or ALTER TABLE ... OWNER TO) gives the
-- table to another role, the pipeline stops rather than run its query with
-- that role's rights, until that role takes it over by resuming it
CREATE ROLE wa_carol;
CREATE ROLE wa_dave;
CREATE SCHEMA handover;
GRANT USAGE, CREATE ON SCHEMA handover TO wa_carol, wa_dave;
SET ROLE wa_carol;
CREATE TABLE handover.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('handed', 'SELECT k, count(*) AS n FROM handover.src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)],
                                 result_table => 'handover.handed') > 0 AS created;
INSERT INTO handover.src (k, t) VALUES (1, 1), (1, 2);
SELECT windowagg.wait('handed');
RESET ROLE;
\set VERBOSITY terse
DROP ROLE wa_carol;
\set VERBOSITY default
REASSIGN OWNED BY wa_carol TO wa_dave;
DROP OWNED BY wa_carol;
DROP ROLE wa_carol;
INSERT INTO handover.src (k, t) VALUES (1, 3), (2, 15), (1, 25);
SELECT wait_for_status('handed', 'stopped');
SELECT last_error FROM windowagg.stat_pipelines WHERE name = 'handed';
SELECT count(*) AS counted_meanwhile FROM handover.handed WHERE window_start > 0;
-- a superuser's resume restarts it, but consents for no one: it stops again
SELECT windowagg.resume('handed');
SELECT owner = 'wa_dave'::regrole AS taken_over FROM windowagg.pipelines WHERE name = 'handed';
SELECT wait_for_status('handed', 'stopped', '%now belongs to role%');
-- a role that is not the table's owner cannot take it over
SET ROLE wa_bob;
SELECT windowagg.resume('handed');
SET ROLE wa_dave;
SELECT windowagg.resume('handed');
SELECT owner FROM windowagg.pipelines WHERE name = 'handed';
SELECT windowagg.flush('handed');
SELECT count(*) AS differ FROM (
    (SELECT k, window_start, n FROM handover.handed
     EXCEPT SELECT k, t - t % 10, count(*) FROM handover.src GROUP BY 1, 2)
    UNION ALL
    (SELECT k, t - t % 10, count(*) FROM handover.src GROUP BY 1, 2
     EXCEPT SELECT k, window_start, n FROM handover.handed)) x;
RESET ROLE;
-- to a superuser likewise: it stops, and nothing runs with every right
ALTER TABLE handover.handed OWNER TO CURRENT_USER;
INSERT INTO handover.src (k, t) VALUES (3, 40);
SELECT wait_for_status('handed', 'stopped');
SELECT regexp_replace(last_error, 'role "[^"]*"', 'role R') AS last_error
FROM windowagg.stat_pipelines WHERE name = 'handed';
SELECT owner FROM windowagg.pipelines WHERE name = 'handed';
ALTER TABLE handover.handed OWNER TO wa_dave;
SELECT windowagg.resume('handed');
SELECT windowagg.wait('handed');
-- read after the resume: too late, the first flush having fired every window
SELECT count(*) AS too_late FROM handover.handed_dead_letters;
SET ROLE wa_dave;
SELECT windowagg.drop_pipeline('handed', drop_tables => true);
RESET ROLE;
DROP SCHEMA handover CASCADE;
DROP ROLE wa_dave;

-- a pipeline runs only code that its owner or a superuser owns: the owner
-- of a function (or of a domain's constraints) can replace it at any time,
-- and the worker would run it with the pipeline owner's rights
CREATE SCHEMA code;
GRANT USAGE, CREATE ON SCHEMA code TO wa_alice, wa_bob;
CREATE FUNCTION code.by_superuser(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE
    AS 'SELECT $1 % 3';
SET ROLE wa_alice;
CREATE TABLE code.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k bigint, t bigint);
GRANT SELECT ON code.src TO wa_bob;
CREATE FUNCTION code.by_alice(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT $1 % 2';
CREATE DOMAIN code.alice_dom AS bigint CHECK (VALUE >= 0);
SET ROLE wa_bob;
-- bob's pipeline may not run alice's function, nor check alice's domain
SELECT windowagg.create_pipeline('bob_code', 'SELECT code.by_alice(k) AS g, count(*) AS n FROM code.src GROUP BY 1',
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'code.bob_code');
SELECT windowagg.create_pipeline('bob_code', 'SELECT k, count(*) AS n FROM code.src WHERE k::code.alice_dom > 0 GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'code.bob_code');
-- a superuser's function is fine
SELECT windowagg.create_pipeline('bob_code', 'SELECT code.by_superuser(k) AS g, count(*) AS n FROM code.src GROUP BY 1',
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'code.bob_code') > 0 AS created;
-- alice's own, under a search_path with a schema bob can create in
SET ROLE wa_alice;
SET search_path = code, public;
CREATE FUNCTION code.pick(numeric) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT 7';
SELECT windowagg.create_pipeline('alice_code', 'SELECT pick(k) AS g, count(*) AS n FROM code.src GROUP BY 1',
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'code.alice_code') > 0 AS created;
INSERT INTO code.src (k, t) VALUES (1, 1);
SELECT windowagg.wait('alice_code');
SELECT windowagg.pause('alice_code');
RESET search_path;
-- bob plants a better match for pick(bigint): the restarted worker parses
-- the query again, finds bob's function, and stops rather than run it
SET ROLE wa_bob;
CREATE FUNCTION code.pick(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT -1';
SET ROLE wa_alice;
SELECT windowagg.resume('alice_code');
INSERT INTO code.src (k, t) VALUES (2, 2);
SELECT wait_for_status('alice_code', 'stopped');
SELECT last_error FROM windowagg.stat_pipelines WHERE name = 'alice_code';
SELECT g, n FROM code.alice_code ORDER BY 1;
-- gone again, the pipeline resumes with alice's own function, nothing lost
SET ROLE wa_bob;
DROP FUNCTION code.pick(bigint);
SET ROLE wa_alice;
SELECT windowagg.resume('alice_code');
SELECT windowagg.flush('alice_code');
SELECT g, n FROM code.alice_code ORDER BY 1;
-- a new owner takes over only code it (or a superuser) owns: alice's
-- function stays hers to replace after the table is given to bob
RESET ROLE;
ALTER TABLE code.alice_code OWNER TO wa_bob;
SELECT wait_for_status('alice_code', 'stopped', '%now belongs to role%');
SET ROLE wa_bob;
SELECT windowagg.resume('alice_code');
RESET ROLE;
SELECT owner FROM windowagg.pipelines WHERE name = 'alice_code';
ALTER FUNCTION code.pick(numeric) OWNER TO wa_bob;
SET ROLE wa_bob;
SELECT windowagg.resume('alice_code');
RESET ROLE;
SELECT owner FROM windowagg.pipelines WHERE name = 'alice_code';
SELECT windowagg.drop_pipeline('alice_code', drop_tables => true);
SELECT windowagg.drop_pipeline('bob_code', drop_tables => true);
DROP SCHEMA code CASCADE;

-- PostgreSQL analyses a kept statement again, by name, after an
-- invalidation: in a worker every analysis passes the same check.  Here the
-- owner of the schema that alice's function lives in replaces it with his
-- own; the next epoch stops instead of running it as alice.
CREATE SCHEMA bobs AUTHORIZATION wa_bob;
GRANT USAGE, CREATE ON SCHEMA bobs TO wa_alice;
SET ROLE wa_bob;
CREATE TABLE bobs.ran (who text);
GRANT INSERT ON bobs.ran TO PUBLIC;
SET ROLE wa_alice;
CREATE TABLE bobs.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k bigint, t bigint);
CREATE FUNCTION bobs.bucket(bigint) RETURNS bigint LANGUAGE sql AS 'SELECT $1 % 2';
SELECT windowagg.create_pipeline('swapped', 'SELECT bobs.bucket(k) AS g, count(*) AS n FROM bobs.src GROUP BY 1',
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'bobs.swapped') > 0 AS created;
INSERT INTO bobs.src (k, t) VALUES (1, 1), (2, 2);
SELECT windowagg.wait('swapped');
SET ROLE wa_bob;
BEGIN;
DROP FUNCTION bobs.bucket(bigint);
CREATE FUNCTION bobs.bucket(bigint) RETURNS bigint LANGUAGE plpgsql AS
    $$BEGIN INSERT INTO bobs.ran VALUES (current_user); RETURN -1; END$$;
COMMIT;
SET ROLE wa_alice;
INSERT INTO bobs.src (k, t) VALUES (3, 3);
SELECT wait_for_status('swapped', 'stopped');
SELECT last_error FROM windowagg.stat_pipelines WHERE name = 'swapped';
RESET ROLE;
SELECT count(*) AS ran_as_alice FROM bobs.ran;
SET ROLE wa_bob;
DROP FUNCTION bobs.bucket(bigint);
SET ROLE wa_alice;
CREATE FUNCTION bobs.bucket(bigint) RETURNS bigint LANGUAGE sql AS 'SELECT $1 % 2';
SELECT windowagg.resume('swapped');
SELECT windowagg.flush('swapped');
SELECT g, n FROM bobs.swapped ORDER BY 1;
-- the schema's owner drops the result table and makes one of the same
-- name (where a trigger of his could run as alice): the pipeline stops,
-- and writes nothing there
RESET ROLE;
CREATE TABLE bobs.fake (LIKE bobs.swapped);
ALTER TABLE bobs.fake OWNER TO wa_bob;
SET ROLE wa_bob;
GRANT ALL ON bobs.fake TO PUBLIC;
DROP TABLE bobs.swapped CASCADE;
ALTER TABLE bobs.fake RENAME TO swapped;
SET ROLE wa_alice;
INSERT INTO bobs.src (k, t) VALUES (5, 25);
SELECT wait_for_status('swapped', 'stopped', '%was dropped%');
SELECT last_error FROM windowagg.stat_pipelines WHERE name = 'swapped';
SELECT count(*) AS written_to_bobs_table FROM bobs.swapped;
RESET ROLE;
SELECT windowagg.drop_pipeline('swapped');
DROP SCHEMA bobs CASCADE;

-- a kept statement names its tables, and PostgreSQL resolves the names
-- again after an invalidation: when the result table's schema is renamed
-- and a table of the same name takes its place, the pipeline stops rather
-- than write there (a trigger on it would run as alice)
CREATE SCHEMA renamed AUTHORIZATION wa_bob;
GRANT USAGE, CREATE ON SCHEMA renamed TO wa_alice;
SET ROLE wa_alice;
CREATE TABLE alice_space.ev (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
SELECT windowagg.create_pipeline('moved', 'SELECT k, count(*) AS n FROM alice_space.ev GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'renamed.moved') > 0 AS created;
INSERT INTO alice_space.ev (k, t) VALUES (1, 1), (1, 12);
SELECT windowagg.wait('moved');
RESET ROLE;
ALTER SCHEMA renamed RENAME TO renamed_before;
CREATE SCHEMA renamed AUTHORIZATION wa_bob;
CREATE TABLE renamed.moved (LIKE renamed_before.moved INCLUDING ALL);
GRANT USAGE ON SCHEMA renamed TO PUBLIC;
ALTER TABLE renamed.moved OWNER TO wa_bob;
GRANT ALL ON renamed.moved TO PUBLIC;
SET ROLE wa_alice;
INSERT INTO alice_space.ev (k, t) VALUES (2, 25);
SELECT wait_for_status('moved', 'stopped');
SELECT last_error FROM windowagg.stat_pipelines WHERE name = 'moved';
RESET ROLE;
SELECT count(*) AS written_to_the_new_table FROM renamed.moved;
-- with the names restored, it goes on where it stopped
DROP SCHEMA renamed CASCADE;
ALTER SCHEMA renamed_before RENAME TO renamed;
SET ROLE wa_alice;
SELECT windowagg.resume('moved');
SELECT windowagg.flush('moved');
SELECT count(*) AS differ FROM (
    (SELECT k, window_start, n FROM renamed.moved
     EXCEPT SELECT k, t - t % 10, count(*) FROM alice_space.ev GROUP BY 1, 2)
    UNION ALL
    (SELECT k, t - t % 10, count(*) FROM alice_space.ev GROUP BY 1, 2
     EXCEPT SELECT k, window_start, n FROM renamed.moved)) x;
SELECT windowagg.drop_pipeline('moved', drop_tables => true);
RESET ROLE;
DROP SCHEMA renamed CASCADE;

DROP SCHEMA alice_space CASCADE;
DROP ROLE wa_alice;
DROP ROLE wa_bob;

-- A pause and a resume that commit together still start the worker again:
-- whoever paused a pipeline may have changed what a new worker reads, and
-- the resumed pipeline must see it.  Nothing is lost on the way.
CREATE FUNCTION worker_replaced(pipeline text, old_pid int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..600 LOOP
        IF EXISTS (SELECT FROM windowagg.stat_pipelines
                   WHERE name = pipeline AND status = 'running'
                     AND worker_pid NOT IN (0, old_pid)) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.05);
    END LOOP;
    RETURN false;
END
$$;
CREATE TABLE restart_src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                          k int NOT NULL, t bigint NOT NULL);
SELECT windowagg.create_pipeline('p_restart', 'SELECT k, count(*) AS n FROM restart_src GROUP BY k',
                                 't', ARRAY[windowagg.tumbling(10)]) > 0 AS created;
INSERT INTO restart_src (k, t) VALUES (1, 1);
SELECT windowagg.wait('p_restart');
SELECT worker_pid AS old_pid FROM windowagg.stat_pipelines WHERE name = 'p_restart' \gset
BEGIN;
SELECT windowagg.pause('p_restart');
SELECT windowagg.resume('p_restart');
COMMIT;
SELECT worker_replaced('p_restart', :old_pid) AS restarted;
INSERT INTO restart_src (k, t) VALUES (1, 2), (2, 3);
SELECT windowagg.flush('p_restart');
SELECT k, n FROM p_restart ORDER BY k;
SELECT status, last_error, events_in FROM windowagg.stat_pipelines WHERE name = 'p_restart';
SELECT windowagg.drop_pipeline('p_restart', drop_tables => true);
DROP TABLE restart_src;
DROP FUNCTION worker_replaced(text, int);
