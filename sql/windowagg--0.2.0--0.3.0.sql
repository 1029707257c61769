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
