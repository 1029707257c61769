-- Installing windowagg, and upgrading it: ALTER EXTENSION UPDATE from
-- 0.1.0 must give exactly the objects a fresh install of the current
-- version gives (functions with their privileges, settings and bodies,
-- tables with their columns, policies and grants, views, triggers), and
-- the install script must refuse a schema an untrusted role prepared.
-- Composite types are compared with their attributes.
\set regress_db :DBNAME
CREATE DATABASE wa_upgrade;
\c wa_upgrade
SET client_min_messages = warning;

-- Every object of the extension, described by name (not by OID, so that
-- two installs compare equal).
CREATE FUNCTION describe_windowagg() RETURNS TABLE (object text, detail text)
LANGUAGE sql AS $$
    WITH members AS (
        SELECT d.classid, d.objid FROM pg_depend d
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'windowagg'
        WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e')
    SELECT 'function ' || p.oid::regprocedure::text,
           concat_ws(' | ', p.prokind, p.provolatile, p.proparallel, p.proisstrict,
                     p.prosecdef, p.proconfig::text, p.prorettype::regtype::text,
                     p.proacl::text, obj_description(p.oid, 'pg_proc'),
                     CASE WHEN p.prokind <> 'a' THEN md5(pg_get_functiondef(p.oid)) END)
    FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    UNION ALL
    SELECT 'aggregate ' || a.aggfnoid::regprocedure::text,
           concat_ws(' | ', a.aggtransfn::regprocedure, a.aggfinalfn::regproc, a.aggfinalextra,
                     a.aggfinalmodify, a.aggmtransfn::regproc, a.aggminvtransfn::regproc,
                     a.aggmfinalfn::regproc, a.aggtranstype::regtype, a.aggmtranstype::regtype)
    FROM members m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
    UNION ALL
    SELECT 'relation ' || c.oid::regclass::text,
           concat_ws(' | ', c.relkind, c.relacl::text, c.relrowsecurity, c.relforcerowsecurity,
                     c.reloptions::text, obj_description(c.oid, 'pg_class'),
                     CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) END)
    FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    UNION ALL
    SELECT 'column ' || c.oid::regclass::text || '.' || a.attname,
           concat_ws(' | ', a.attnum, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                     a.attidentity, a.attstorage, a.attacl::text, pg_get_expr(ad.adbin, ad.adrelid))
    FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    UNION ALL
    SELECT 'constraint ' || co.conrelid::regclass::text || '.' || co.conname, pg_get_constraintdef(co.oid)
    FROM members m JOIN pg_constraint co ON m.classid = 'pg_class'::regclass AND co.conrelid = m.objid
    UNION ALL
    SELECT 'index ' || i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
    FROM members m JOIN pg_index i ON m.classid = 'pg_class'::regclass AND i.indrelid = m.objid
    UNION ALL
    SELECT 'trigger ' || t.tgrelid::regclass::text || '.' || t.tgname, pg_get_triggerdef(t.oid)
    FROM members m JOIN pg_trigger t ON m.classid = 'pg_class'::regclass AND t.tgrelid = m.objid
    WHERE NOT t.tgisinternal
    UNION ALL
    SELECT 'policy ' || po.polrelid::regclass::text || '.' || po.polname,
           concat_ws(' | ', po.polcmd, po.polpermissive, po.polroles::regrole[]::text,
                     pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid))
    FROM members m JOIN pg_policy po ON m.classid = 'pg_class'::regclass AND po.polrelid = m.objid
    UNION ALL
    SELECT 'type ' || t.oid::regtype::text, concat_ws(' | ', t.typtype, t.typacl::text,
                                                     obj_description(t.oid, 'pg_type'))
    FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
    UNION ALL
    SELECT 'attribute ' || t.oid::regtype::text || '.' || a.attname,
           concat_ws(' | ', a.attnum, format_type(a.atttypid, a.atttypmod))
    FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
    JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'event trigger ' || et.evtname, concat_ws(' | ', et.evtevent, et.evtfoid::regproc, et.evtenabled)
    FROM members m JOIN pg_event_trigger et ON m.classid = 'pg_event_trigger'::regclass AND et.oid = m.objid
    UNION ALL
    SELECT 'schema ' || n.nspname, n.nspacl::text
    FROM pg_namespace n WHERE n.nspname = 'windowagg'
    UNION ALL
    SELECT 'extension configuration', e.extconfig::regclass[]::text || ' ' || e.extcondition::text
    FROM pg_extension e WHERE e.extname = 'windowagg'
$$;

CREATE EXTENSION windowagg VERSION '0.1.0';
ALTER EXTENSION windowagg UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'windowagg')
    AS updated_to_the_default
FROM pg_extension WHERE extname = 'windowagg';
CREATE TABLE upgraded AS SELECT * FROM describe_windowagg();
DROP EXTENSION windowagg;
CREATE EXTENSION windowagg;
SELECT count(*) > 50 AS described FROM upgraded;
-- what the upgrade made differently from a fresh install: nothing
(TABLE upgraded EXCEPT SELECT * FROM describe_windowagg())
UNION ALL
(SELECT * FROM describe_windowagg() EXCEPT TABLE upgraded)
ORDER BY 1, 2;
-- (a control: a change the upgrade script forgot shows up here)
COMMENT ON FUNCTION windowagg.pause(text) IS 'changed by hand';
SELECT object FROM (SELECT * FROM describe_windowagg() EXCEPT TABLE upgraded) d;
\c :regress_db
DROP DATABASE wa_upgrade;

-- A pipeline made under 0.1.0's objects (the library serves them until
-- the update) goes on across ALTER EXTENSION UPDATE: every row counted
-- once, every window right, no pane written twice.
CREATE DATABASE wa_live_upgrade;
\c wa_live_upgrade
SET client_min_messages = warning;
CREATE EXTENSION windowagg VERSION '0.1.0';
CREATE TABLE ev (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 k int NOT NULL, t bigint NOT NULL);
SELECT windowagg.create_pipeline('up', 'SELECT k, count(*) AS n, sum(t) AS s FROM ev GROUP BY k',
    't', ARRAY[windowagg.tumbling(10), windowagg.hopping(30, 10)]) > 0 AS created;
INSERT INTO ev (k, t) SELECT i % 3, i FROM generate_series(0, 499) i;
SELECT windowagg.wait('up') AS consumed_before_the_update;
SELECT events_in, panes_late FROM windowagg.stat_pipelines WHERE name = 'up';
ALTER EXTENSION windowagg UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'windowagg';
INSERT INTO ev (k, t) SELECT i % 3, i FROM generate_series(500, 999) i;
SELECT windowagg.flush('up') AS flushed;
-- each row read once, before or after
SELECT events_in, panes_late FROM windowagg.stat_pipelines WHERE name = 'up';
-- the windows against a GROUP BY over the same rows: nothing lost
WITH want AS (
    SELECT e.k, w.ws AS window_start, w.ws + w.size AS window_end, count(*) AS n, sum(e.t) AS s
    FROM ev e
    CROSS JOIN LATERAL (VALUES (10::bigint, (e.t / 10) * 10), (30, (e.t / 10) * 10),
                               (30, (e.t / 10) * 10 - 10), (30, (e.t / 10) * 10 - 20)) w(size, ws)
    WHERE w.size = 10 OR w.ws + 30 > e.t
    GROUP BY 1, 2, 3),
got AS (SELECT k, window_start, window_end, n, s FROM up)
SELECT (SELECT count(*) FROM want) AS windows,
       (SELECT count(*) FROM (TABLE got EXCEPT TABLE want) d) AS wrong,
       (SELECT count(*) FROM (TABLE want EXCEPT TABLE got) d) AS missing,
       (SELECT max(revision) FROM up) AS max_revision;
-- (the pipeline goes with the extension, its worker with the pipeline)
DROP EXTENSION windowagg CASCADE;
\c :regress_db
DROP DATABASE wa_live_upgrade WITH (FORCE);

-- The catalog is found by name, so a table a role put under that name is
-- refused: here the extension's schema was renamed away (a superuser's
-- mistake) and a role made a schema "windowagg" with a "pipelines" table
-- of its own, whose rows would name any owner.
CREATE DATABASE wa_forged;
CREATE ROLE wa_forger;
GRANT CREATE ON DATABASE wa_forged TO wa_forger;
\c wa_forged
SET client_min_messages = warning;
CREATE EXTENSION windowagg;
CREATE TABLE ev (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int NOT NULL, t bigint NOT NULL);
SELECT windowagg.create_pipeline('real', 'SELECT k, count(*) AS n FROM ev GROUP BY k',
    't', ARRAY[windowagg.tumbling(10)]) > 0 AS created;
GRANT SELECT ON ev TO wa_forger;
ALTER SCHEMA windowagg RENAME TO w_real;
SET ROLE wa_forger;
CREATE SCHEMA windowagg;
CREATE TABLE windowagg.pipelines (id int, name text, owner oid);
INSERT INTO windowagg.pipelines VALUES (1, 'real', 10);
SELECT w_real.pause('real');
SELECT w_real.create_pipeline('forged', 'SELECT k, count(*) AS n FROM ev GROUP BY k',
    't', ARRAY[w_real.tumbling(10)]);
RESET ROLE;
-- (the control: with the names given back, the same call goes through)
ALTER SCHEMA windowagg RENAME TO forged;
ALTER SCHEMA w_real RENAME TO windowagg;
SELECT windowagg.pause('real');
DROP EXTENSION windowagg CASCADE;
\c :regress_db
DROP DATABASE wa_forged WITH (FORCE);
DROP ROLE wa_forger;

-- A schema named windowagg that another role created before the
-- extension would let that role replace windowagg's functions: refused.
CREATE DATABASE wa_hostile;
CREATE ROLE wa_squatter;
GRANT CREATE ON DATABASE wa_hostile TO wa_squatter;
\c wa_hostile
SET client_min_messages = warning;
SET ROLE wa_squatter;
CREATE SCHEMA windowagg;
RESET ROLE;
-- (18 adds the script's text to the error's context: shown by neither)
\set SHOW_CONTEXT never
CREATE EXTENSION windowagg;
\c :regress_db
DROP DATABASE wa_hostile;
DROP ROLE wa_squatter;
