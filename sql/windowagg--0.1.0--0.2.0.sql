/* windowagg--0.1.0--0.2.0.sql: from version 0.1.0 to 0.2.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION windowagg UPDATE TO '0.2.0'" to load this file. \quit

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
