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

-- The support functions take internal states and are the aggregates'
-- alone to call (an aggregate checks that its owner may call them).
REVOKE ALL ON FUNCTION
    windowagg._min_sfunc(internal, anyelement), windowagg._max_sfunc(internal, anyelement),
    windowagg._minmax_final(internal, anyelement),
    windowagg._min_msfunc(internal, anyelement), windowagg._max_msfunc(internal, anyelement),
    windowagg._minmax_minvfunc(internal, anyelement), windowagg._minmax_mfinal(internal, anyelement),
    windowagg._fsum_sfunc(internal, float8), windowagg._fsum_sfunc(internal, float4),
    windowagg._fsum_msfunc(internal, float8), windowagg._fsum_msfunc(internal, float4),
    windowagg._fvar_sfunc(internal, float8), windowagg._fvar_sfunc(internal, float4),
    windowagg._fvar_msfunc(internal, float8), windowagg._fvar_msfunc(internal, float4),
    windowagg._moving_minvfunc(internal, float8), windowagg._moving_minvfunc(internal, float4),
    windowagg._float8_sum_final(internal), windowagg._float4_sum_final(internal),
    windowagg._float_avg_final(internal), windowagg._var_samp_final(internal),
    windowagg._var_pop_final(internal), windowagg._stddev_samp_final(internal),
    windowagg._stddev_pop_final(internal)
FROM PUBLIC;

-- for the catalog's trigger only (the function checks that it is)
REVOKE ALL ON FUNCTION windowagg._pipeline_inserted() FROM PUBLIC;

-- Exact, and NULL where the tick is no timestamp (an event time near the
-- int64 limits), so that stat_pipelines never fails on one.
CREATE OR REPLACE FUNCTION windowagg._ticks_to_timestamptz(ticks numeric)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'wa_ticks_to_timestamptz'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The wall clock of timestamp (without time zone) event times, which
-- idle_timeout compares with: the creator's TimeZone from now on, the
-- updater's for the pipelines there are.
ALTER TABLE windowagg.pipelines ADD COLUMN time_zone text;
UPDATE windowagg.pipelines SET time_zone = pg_catalog.current_setting('TimeZone');
GRANT SELECT (time_zone) ON windowagg.pipelines TO PUBLIC;

-- Everyone sees the catalog rows of the pipelines whose owner role they
-- are a member of (superusers every row); windowagg itself reads and
-- writes them as the tables' owner.  stat_pipelines shows others' status.
ALTER TABLE windowagg.pipelines ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_reads ON windowagg.pipelines FOR SELECT
    USING (pg_catalog.pg_has_role(owner::pg_catalog.oid, 'USAGE'));
ALTER TABLE windowagg.pipeline_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_reads ON windowagg.pipeline_progress FOR SELECT
    USING (EXISTS (SELECT FROM windowagg.pipelines p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline));

-- What each reader may see: members of a pipeline's owner role and of
-- pg_monitor its status and counters (the last error only the former,
-- through _pipeline_status), whoever may read its results its status;
-- other pipelines do not appear.  A security barrier, so that no function
-- of the reader's sees the rows the view hides.
-- _pipeline_status gains the gap columns: the view that reads it is made
-- again (a view of a user's over it makes the update fail, and says so).
DROP VIEW windowagg.stat_pipelines;
DROP FUNCTION windowagg._pipeline_status();
CREATE FUNCTION windowagg._pipeline_status(
    OUT pipeline integer, OUT status text, OUT worker_pid integer,
    OUT events_in bigint, OUT events_partial bigint, OUT dead_letters bigint,
    OUT panes_on_time bigint, OUT panes_late bigint, OUT epochs bigint,
    OUT watermark numeric, OUT max_event_time bigint,
    OUT state_bytes bigint, OUT last_epoch_at timestamptz, OUT last_error text,
    OUT retained_wal_bytes bigint, OUT gaps integer, OUT oldest_gap_at timestamptz,
    OUT oldest_gap_pid integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'wa_pipeline_status'
LANGUAGE C VOLATILE;
CREATE VIEW windowagg.stat_pipelines WITH (security_barrier) AS
SELECT p.name,
       CASE WHEN NOT p.enabled THEN 'paused' ELSE COALESCE(s.status, 'starting') END AS status,
       s.worker_pid, s.events_in, s.events_partial, s.dead_letters,
       s.panes_on_time, s.panes_late, s.epochs,
       CASE WHEN (p.windows[1]).time_domain OPERATOR(pg_catalog.=) 'interval'
            THEN windowagg._ticks_to_timestamptz(s.watermark) END AS watermark,
       s.watermark AS watermark_ticks,
       CASE WHEN a.counters AND pg_catalog.has_sequence_privilege(q.seq, 'SELECT')
            THEN pg_catalog.pg_sequence_last_value(q.seq) OPERATOR(pg_catalog.-) g.arrival_hwm
       END AS lag_rows,
       CASE WHEN (p.windows[1]).time_domain OPERATOR(pg_catalog.=) 'interval'
            THEN pg_catalog.now() OPERATOR(pg_catalog.-) windowagg._ticks_to_timestamptz(s.max_event_time)
       END AS lag_event_time,
       s.state_bytes, s.last_epoch_at, s.last_error,
       CASE WHEN a.counters THEN p.source_kind END AS source,
       CASE WHEN a.counters THEN g.source_updates END AS source_updates,
       CASE WHEN a.counters THEN g.source_deletes END AS source_deletes,
       CASE WHEN NOT a.counters OR p.source_kind OPERATOR(pg_catalog.<>) 'logical' THEN NULL
            WHEN p.connection IS NULL
            THEN (SELECT pg_catalog.pg_wal_lsn_diff(
                             CASE WHEN pg_catalog.pg_is_in_recovery()
                                  THEN pg_catalog.pg_last_wal_replay_lsn()
                                  ELSE pg_catalog.pg_current_wal_lsn() END,
                             r.restart_lsn)::pg_catalog.int8
                  FROM pg_catalog.pg_replication_slots r
                  WHERE r.slot_name OPERATOR(pg_catalog.=) p.slot_name)
            ELSE s.retained_wal_bytes
       END AS retained_wal_bytes,
       s.gaps, pg_catalog.now() OPERATOR(pg_catalog.-) s.oldest_gap_at AS oldest_gap_age,
       s.oldest_gap_pid
FROM windowagg.pipelines p
JOIN windowagg.pipeline_progress g ON g.pipeline OPERATOR(pg_catalog.=) p.id
CROSS JOIN LATERAL (
    SELECT pg_catalog.pg_has_role(p.owner::pg_catalog.oid, 'USAGE')
           OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')) a(counters)
-- the arrival column's sequence, found by dependency (no names to resolve)
LEFT JOIN LATERAL (
    SELECT d.objid
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_attribute att
      ON att.attrelid OPERATOR(pg_catalog.=) d.refobjid
     AND att.attnum OPERATOR(pg_catalog.=) d.refobjsubid
    WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
      AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
      AND d.refobjid OPERATOR(pg_catalog.=) p.source::pg_catalog.oid
      AND att.attname OPERATOR(pg_catalog.=) p.arrival_column::pg_catalog.name
      AND (d.deptype OPERATOR(pg_catalog.=) 'a' OR d.deptype OPERATOR(pg_catalog.=) 'i')
    LIMIT 1) q(seq) ON true
LEFT JOIN windowagg._pipeline_status() s ON s.pipeline OPERATOR(pg_catalog.=) p.id
WHERE a.counters
   OR pg_catalog.has_table_privilege(p.result_table::pg_catalog.oid, 'SELECT');
COMMENT ON VIEW windowagg.stat_pipelines IS
    'one row per pipeline of this database: status, worker, counters, watermark, lag, state memory, last error, gaps';
GRANT SELECT ON windowagg.stat_pipelines TO PUBLIC;

-- It runs as whoever drops a table, and sees through the catalog's
-- row-level security the pipelines of the roles the dropper is a member
-- of: a table of someone else's that another role's pipeline reads is not
-- kept from its owner (that pipeline stops), nor is that pipeline named.
-- row_security is on for it whatever the session says (pg_dump --clean
-- scripts turn it off), so that the policy filters rather than refuses.
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
                         p.dead_letter_table::pg_catalog.oid)
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
REVOKE ALL ON FUNCTION windowagg._refuse_drop() FROM PUBLIC;
