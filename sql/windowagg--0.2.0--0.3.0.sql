/* windowagg--0.2.0--0.3.0.sql: from version 0.2.0 to 0.3.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION windowagg UPDATE TO '0.3.0'" to load this file. \quit

-- Only a schema that the installing role or a superuser owns may hold
-- windowagg's objects: whoever owns it could replace them.
DO $guard$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace n
               JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
               WHERE n.nspname OPERATOR(pg_catalog.=) 'windowagg'
                 AND NOT r.rolsuper AND r.rolname OPERATOR(pg_catalog.<>) CURRENT_USER) THEN
        RAISE EXCEPTION 'schema "windowagg" belongs to role "%"',
                        (SELECT n.nspowner::pg_catalog.regrole FROM pg_catalog.pg_namespace n
                         WHERE n.nspname OPERATOR(pg_catalog.=) 'windowagg')
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'The owner of the schema could replace the extension''s objects.',
                  HINT = 'Drop the schema, or have a superuser own it, before updating the extension.';
    END IF;
END
$guard$;

-- A window gains a kind (sessions), and what calendar windows will need:
-- a time zone and the units its size and slide count.  The windows of
-- existing pipelines keep a NULL kind, which means what it always meant:
-- tumbling or hopping, from size and slide.
ALTER TYPE windowagg.window
    ADD ATTRIBUTE kind text,
    ADD ATTRIBUTE time_zone text,
    ADD ATTRIBUTE size_unit text,
    ADD ATTRIBUTE slide_unit text;
COMMENT ON TYPE windowagg.window IS
    'a window; build it with windowagg.tumbling, windowagg.hopping or windowagg.session';

CREATE FUNCTION windowagg.session(gap interval)
RETURNS windowagg.window
AS 'MODULE_PATHNAME', 'wa_session_interval'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowagg.session(gap bigint)
RETURNS windowagg.window
AS 'MODULE_PATHNAME', 'wa_session_integer'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowagg.session(gap text)
RETURNS windowagg.window
LANGUAGE sql STABLE PARALLEL SAFE
RETURN windowagg.session(gap::pg_catalog.interval);

COMMENT ON FUNCTION windowagg.session(interval) IS
    'session window: per key, events at most gap apart form one window [first event, last event + gap)';
COMMENT ON FUNCTION windowagg.session(bigint) IS
    'session window over integer event time';
COMMENT ON FUNCTION windowagg.session(text) IS
    'session window with the gap written as an interval literal';

COMMENT ON FUNCTION windowagg.aggregate(text, text, windowagg.window[], "any", "any", text) IS
    'panes (keys, window_start, window_end, aggregates, pane, revision) of an aggregate query over windows of event time; pane is on_time, late or retract';

-- A session window beside other windows writes its sessions into a table
-- of their own, which the catalog names, and which DROP TABLE refuses
-- like the pipeline's other tables.
ALTER TABLE windowagg.pipelines ADD COLUMN sessions_table regclass;
GRANT SELECT (sessions_table) ON windowagg.pipelines TO PUBLIC;
CREATE OR REPLACE FUNCTION windowagg._refuse_drop() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET row_security = on AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT p.name, d.object_identity,
               CASE d.objid WHEN p.source::pg_catalog.oid THEN 'reads'
                            ELSE 'writes' END AS verb
        FROM pg_catalog.pg_event_trigger_dropped_objects() d
        JOIN windowagg.pipelines p
          ON d.objid IN (p.source::pg_catalog.oid, p.result_table::pg_catalog.oid,
                         p.dead_letter_table::pg_catalog.oid, p.sessions_table::pg_catalog.oid)
        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
          AND d.objsubid OPERATOR(pg_catalog.=) 0
    LOOP
        RAISE EXCEPTION 'cannot drop table % because pipeline "%" % it',
                        r.object_identity, r.name, r.verb
            USING ERRCODE = 'dependent_objects_still_exist',
                  HINT = pg_catalog.format('Drop the pipeline first: SELECT windowagg.drop_pipeline(%L);', r.name);
    END LOOP;
END
$$;
