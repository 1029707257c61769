/* windowagg--0.3.0.sql: windowagg's SQL objects, version 0.3.0 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION windowagg" to load this file. \quit

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
                  HINT = 'Drop the schema, or have a superuser own it, before creating the extension.';
    END IF;
END
$guard$;

-- Everyone may call windowagg's functions: each checks the privileges of
-- what it reads and writes (the source, the result tables) itself.
GRANT USAGE ON SCHEMA windowagg TO PUBLIC;

--
-- Windows.  A window is described in ticks: microseconds for interval
-- windows (timestamp event times), plain units for integer windows.
-- Build them with the constructors below, never by hand.
--
CREATE TYPE windowagg.window AS (
    time_domain text,   -- 'interval' or 'integer'
    size bigint,        -- window length in ticks (a session's gap)
    slide bigint,       -- distance between window starts in ticks
    origin bigint,      -- a tick at which some window starts
    kind text,          -- 'tumbling', 'hopping' or 'session'; NULL (values
                        -- made before 0.3.0): tumbling or hopping
    time_zone text,     -- calendar windows: the zone their days follow
    size_unit text,     -- calendar windows: what size counts (NULL: ticks)
    slide_unit text     -- calendar windows: what slide counts (NULL: ticks)
);
COMMENT ON TYPE windowagg.window IS
    'a window; build it with windowagg.tumbling, windowagg.hopping or windowagg.session';

CREATE FUNCTION windowagg._window(size interval, slide interval, origin timestamptz)
RETURNS windowagg.window
AS 'MODULE_PATHNAME', 'wa_window_interval'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowagg._window(size bigint, slide bigint, origin bigint)
RETURNS windowagg.window
AS 'MODULE_PATHNAME', 'wa_window_integer'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowagg.tumbling(size interval, origin timestamptz DEFAULT NULL)
RETURNS windowagg.window
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN windowagg._window(size, size, origin);

CREATE FUNCTION windowagg.tumbling(size bigint, origin bigint DEFAULT 0)
RETURNS windowagg.window
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN windowagg._window(size, size, origin);

-- a quoted literal such as '10 min' resolves to text: read it as an interval
CREATE FUNCTION windowagg.tumbling(size text, origin text DEFAULT NULL)
RETURNS windowagg.window
LANGUAGE sql STABLE PARALLEL SAFE
RETURN windowagg._window(size::pg_catalog.interval, size::pg_catalog.interval,
                         origin::pg_catalog.timestamptz);

CREATE FUNCTION windowagg.hopping(size interval, slide interval, origin timestamptz DEFAULT NULL)
RETURNS windowagg.window
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN windowagg._window(size, slide, origin);

CREATE FUNCTION windowagg.hopping(size bigint, slide bigint, origin bigint DEFAULT 0)
RETURNS windowagg.window
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN windowagg._window(size, slide, origin);

CREATE FUNCTION windowagg.hopping(size text, slide text, origin text DEFAULT NULL)
RETURNS windowagg.window
LANGUAGE sql STABLE PARALLEL SAFE
RETURN windowagg._window(size::pg_catalog.interval, slide::pg_catalog.interval,
                         origin::pg_catalog.timestamptz);

-- Session windows: a key's events at most gap apart form one session.
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

COMMENT ON FUNCTION windowagg.tumbling(interval, timestamptz) IS
    'tumbling window of the given size, aligned to origin (default the Unix epoch)';
COMMENT ON FUNCTION windowagg.tumbling(bigint, bigint) IS
    'tumbling window over integer event time, aligned to origin (default 0)';
COMMENT ON FUNCTION windowagg.tumbling(text, text) IS
    'tumbling window of the given size written as an interval literal';
COMMENT ON FUNCTION windowagg.hopping(interval, interval, timestamptz) IS
    'hopping window: windows of the given size starting every slide';
COMMENT ON FUNCTION windowagg.hopping(bigint, bigint, bigint) IS
    'hopping window over integer event time';
COMMENT ON FUNCTION windowagg.hopping(text, text, text) IS
    'hopping window with size and slide written as interval literals';

CREATE FUNCTION windowagg.window_starts(ts timestamptz, size interval,
                                        slide interval DEFAULT NULL,
                                        origin timestamptz DEFAULT NULL)
RETURNS SETOF timestamptz
AS 'MODULE_PATHNAME', 'wa_window_starts_timestamptz'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowagg.window_starts(ts bigint, size bigint,
                                        slide bigint DEFAULT NULL,
                                        origin bigint DEFAULT 0)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'wa_window_starts_integer'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION windowagg.window_starts(timestamptz, interval, interval, timestamptz) IS
    'starts of every window of the given size and slide that contains ts, ascending';
COMMENT ON FUNCTION windowagg.window_starts(bigint, bigint, bigint, bigint) IS
    'starts of every integer window of the given size and slide that contains ts, ascending';

--
-- Batch aggregation: run the windowing engine over the rows of a query.
--
CREATE FUNCTION windowagg.aggregate(query text,
                                    event_time text,
                                    windows windowagg.window[],
                                    bound "any" DEFAULT NULL,
                                    lateness "any" DEFAULT NULL,
                                    arrival_order text DEFAULT NULL)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'wa_aggregate'
LANGUAGE C VOLATILE;

CREATE FUNCTION windowagg.dropped(query text,
                                  event_time text,
                                  windows windowagg.window[],
                                  bound "any" DEFAULT NULL,
                                  lateness "any" DEFAULT NULL,
                                  arrival_order text DEFAULT NULL)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'wa_dropped'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION windowagg.aggregate(text, text, windowagg.window[], "any", "any", text) IS
    'panes (keys, window_start, window_end, aggregates, pane, revision) of an aggregate query over windows of event time; pane is on_time, late or retract';
COMMENT ON FUNCTION windowagg.dropped(text, text, windowagg.window[], "any", "any", text) IS
    'rows of the query that arrived too late for every window (keys, event time, watermark, arrival)';

--
-- Moving aggregates: min, max, float sum/avg/variance/stddev whose window
-- frames slide in amortised O(1) per row (a two-stack FIFO gives the
-- executor the inverse transition these aggregates otherwise lack).
--
CREATE FUNCTION windowagg._min_sfunc(internal, anyelement) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_min_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._max_sfunc(internal, anyelement) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_max_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._minmax_final(internal, anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'wa_minmax_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._min_msfunc(internal, anyelement) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_min_msfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._max_msfunc(internal, anyelement) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_max_msfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._minmax_minvfunc(internal, anyelement) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_moving_minvfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._minmax_mfinal(internal, anyelement) RETURNS anyelement
AS 'MODULE_PATHNAME', 'wa_minmax_mfinal' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE windowagg.min(anyelement) (
    sfunc = windowagg._min_sfunc, stype = internal,
    finalfunc = windowagg._minmax_final, finalfunc_extra, finalfunc_modify = read_only,
    msfunc = windowagg._min_msfunc, minvfunc = windowagg._minmax_minvfunc,
    mstype = internal,
    mfinalfunc = windowagg._minmax_mfinal, mfinalfunc_extra, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.max(anyelement) (
    sfunc = windowagg._max_sfunc, stype = internal,
    finalfunc = windowagg._minmax_final, finalfunc_extra, finalfunc_modify = read_only,
    msfunc = windowagg._max_msfunc, minvfunc = windowagg._minmax_minvfunc,
    mstype = internal,
    mfinalfunc = windowagg._minmax_mfinal, mfinalfunc_extra, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.min(anyelement) IS
    'minimum of any type with a btree ordering; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.max(anyelement) IS
    'maximum of any type with a btree ordering; slides in O(1) per row in window frames';

-- float aggregates: transition functions per input type, shared finals
CREATE FUNCTION windowagg._fsum_sfunc(internal, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fsum_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fsum_sfunc(internal, float4) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fsum_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fsum_msfunc(internal, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fsum_msfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fsum_msfunc(internal, float4) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fsum_msfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fvar_sfunc(internal, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fvar_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fvar_sfunc(internal, float4) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fvar_sfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fvar_msfunc(internal, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fvar_msfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._fvar_msfunc(internal, float4) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_fvar_msfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._moving_minvfunc(internal, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_moving_minvfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._moving_minvfunc(internal, float4) RETURNS internal
AS 'MODULE_PATHNAME', 'wa_moving_minvfunc' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._float8_sum_final(internal) RETURNS float8
AS 'MODULE_PATHNAME', 'wa_float_sum_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._float4_sum_final(internal) RETURNS float4
AS 'MODULE_PATHNAME', 'wa_float4_sum_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._float_avg_final(internal) RETURNS float8
AS 'MODULE_PATHNAME', 'wa_float_avg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._var_samp_final(internal) RETURNS float8
AS 'MODULE_PATHNAME', 'wa_var_samp_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._var_pop_final(internal) RETURNS float8
AS 'MODULE_PATHNAME', 'wa_var_pop_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._stddev_samp_final(internal) RETURNS float8
AS 'MODULE_PATHNAME', 'wa_stddev_samp_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION windowagg._stddev_pop_final(internal) RETURNS float8
AS 'MODULE_PATHNAME', 'wa_stddev_pop_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE windowagg.sum(float8) (
    sfunc = windowagg._fsum_sfunc, stype = internal,
    finalfunc = windowagg._float8_sum_final, finalfunc_modify = read_only,
    msfunc = windowagg._fsum_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._float8_sum_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.sum(float4) (
    sfunc = windowagg._fsum_sfunc, stype = internal,
    finalfunc = windowagg._float4_sum_final, finalfunc_modify = read_only,
    msfunc = windowagg._fsum_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._float4_sum_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.sum(float8) IS
    'sum of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.sum(float4) IS
    'sum of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.avg(float8) (
    sfunc = windowagg._fsum_sfunc, stype = internal,
    finalfunc = windowagg._float_avg_final, finalfunc_modify = read_only,
    msfunc = windowagg._fsum_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._float_avg_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.avg(float4) (
    sfunc = windowagg._fsum_sfunc, stype = internal,
    finalfunc = windowagg._float_avg_final, finalfunc_modify = read_only,
    msfunc = windowagg._fsum_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._float_avg_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.avg(float8) IS
    'avg of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.avg(float4) IS
    'avg of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.variance(float8) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._var_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._var_samp_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.variance(float4) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._var_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._var_samp_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.variance(float8) IS
    'variance of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.variance(float4) IS
    'variance of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.var_samp(float8) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._var_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._var_samp_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.var_samp(float4) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._var_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._var_samp_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.var_samp(float8) IS
    'var_samp of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.var_samp(float4) IS
    'var_samp of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.var_pop(float8) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._var_pop_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._var_pop_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.var_pop(float4) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._var_pop_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._var_pop_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.var_pop(float8) IS
    'var_pop of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.var_pop(float4) IS
    'var_pop of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.stddev(float8) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._stddev_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._stddev_samp_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.stddev(float4) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._stddev_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._stddev_samp_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.stddev(float8) IS
    'stddev of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.stddev(float4) IS
    'stddev of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.stddev_samp(float8) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._stddev_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._stddev_samp_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.stddev_samp(float4) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._stddev_samp_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._stddev_samp_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.stddev_samp(float8) IS
    'stddev_samp of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.stddev_samp(float4) IS
    'stddev_samp of float4 values; slides in O(1) per row in window frames';
CREATE AGGREGATE windowagg.stddev_pop(float8) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._stddev_pop_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._stddev_pop_final, mfinalfunc_modify = read_only);
CREATE AGGREGATE windowagg.stddev_pop(float4) (
    sfunc = windowagg._fvar_sfunc, stype = internal,
    finalfunc = windowagg._stddev_pop_final, finalfunc_modify = read_only,
    msfunc = windowagg._fvar_msfunc, minvfunc = windowagg._moving_minvfunc,
    mstype = internal, mfinalfunc = windowagg._stddev_pop_final, mfinalfunc_modify = read_only);
COMMENT ON AGGREGATE windowagg.stddev_pop(float8) IS
    'stddev_pop of float8 values; slides in O(1) per row in window frames';
COMMENT ON AGGREGATE windowagg.stddev_pop(float4) IS
    'stddev_pop of float4 values; slides in O(1) per row in window frames';
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

--
-- The window coverage plan of a window set (which windows are computed
-- from which), shown like EXPLAIN.
--
CREATE FUNCTION windowagg.explain(windows windowagg.window[],
                                  aggregates text[] DEFAULT ARRAY['count'])
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'wa_explain'
LANGUAGE C STABLE;
COMMENT ON FUNCTION windowagg.explain(windowagg.window[], text[]) IS
    'cost-based window coverage plan for a window set and the aggregates computed over it';
CREATE FUNCTION windowagg.explain(pipeline text)
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'wa_explain_pipeline'
LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION windowagg.explain(text) IS
    'the window coverage plan a pipeline runs';

--
-- Continuous pipelines.  A background worker per pipeline tails the source
-- table, keeps the slice state in shared memory, and upserts panes into
-- the pipeline's result table.  The tables below are windowagg's catalog;
-- they are written by windowagg's functions and workers only.
--
CREATE TABLE windowagg.pipelines (
    id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE,
    owner regrole NOT NULL,
    query text NOT NULL,
    search_path text NOT NULL,      -- the creator's, for resolving the query
    event_time text NOT NULL,
    arrival_column text,            -- table sources: orders the rows
    windows windowagg.window[] NOT NULL,
    bound bigint NOT NULL,          -- in ticks of the event time
    lateness bigint NOT NULL,       -- in ticks of the event time
    idle_timeout interval,          -- NULL: the watermark follows events only
    source regclass NOT NULL,
    result_table regclass NOT NULL,
    dead_letter_table regclass NOT NULL,
    live_view regclass NOT NULL,
    enabled boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    source_kind text NOT NULL DEFAULT 'table',
    connection text,                -- logical: the source server; NULL: this one
    publication text,               -- logical: NULL is the pipeline's own
    remote_schema text,             -- logical with a connection: the table
    remote_table text,              --   on the source server
    dead_letter_changes boolean NOT NULL DEFAULT false,
    slot_name text,                 -- logical: its replication slot
    time_zone text,                 -- the creator's TimeZone, the clock of
                                    -- timestamp event times; NULL: the server's
    sessions_table regclass,        -- a session window beside other windows:
                                    -- its rows; NULL: they go to result_table
    CHECK (bound >= 0 AND lateness >= 0),
    CHECK (source_kind IN ('table', 'logical')),
    CHECK ((source_kind = 'table') = (arrival_column IS NOT NULL))
);
COMMENT ON TABLE windowagg.pipelines IS
    'one row per continuous pipeline (see windowagg.create_pipeline)';

-- Where each pipeline stands: its input offset, its watermark and its
-- counters, committed in the same transaction as its results.
CREATE TABLE windowagg.pipeline_progress (
    pipeline integer PRIMARY KEY
        REFERENCES windowagg.pipelines ON DELETE CASCADE,
    arrival_hwm bigint,             -- highest arrival number consumed
    arrival_gaps bigint[] NOT NULL DEFAULT '{}',  -- lo, hi pairs not yet seen
    max_event_time bigint,          -- ticks; NULL before the first event
    watermark numeric,              -- ticks; NULL is -infinity
    events_in bigint NOT NULL DEFAULT 0,
    events_partial bigint NOT NULL DEFAULT 0,
    dead_letters bigint NOT NULL DEFAULT 0,
    panes_on_time bigint NOT NULL DEFAULT 0,
    panes_late bigint NOT NULL DEFAULT 0,
    epochs bigint NOT NULL DEFAULT 0,
    checkpoint_seq bigint NOT NULL DEFAULT 0,  -- newest row of the checkpoint log
    source_lsn pg_lsn,              -- logical: the stream is applied up to here
    source_updates bigint NOT NULL DEFAULT 0,  -- logical: changes that are
    source_deletes bigint NOT NULL DEFAULT 0,  --   not inserts
    updated_at timestamptz
);
COMMENT ON TABLE windowagg.pipeline_progress IS
    'checkpointed input offset, watermark and counters of each pipeline';

-- Checkpointed slice accumulators, the live state of each pipeline: one
-- row per epoch with the slices it changed, compacted now and then into one
-- row of the live slices (see src/pipeline/checkpoint.c).
CREATE TABLE windowagg.checkpoints (
    pipeline integer NOT NULL
        REFERENCES windowagg.pipelines ON DELETE CASCADE,
    seq bigint NOT NULL,            -- later rows override earlier ones
    expire_below bigint NOT NULL,   -- slices numbered below have expired
    n_slices bigint NOT NULL,
    acc_size integer NOT NULL,      -- bytes per accumulator (format check)
    data bytea NOT NULL,            -- packed (key, slice, accumulator) records
    PRIMARY KEY (pipeline, seq)
);
ALTER TABLE windowagg.checkpoints ALTER COLUMN data SET STORAGE EXTERNAL;
COMMENT ON TABLE windowagg.checkpoints IS
    'checkpointed slice accumulators of each pipeline (internal format)';

REVOKE ALL ON windowagg.pipelines, windowagg.pipeline_progress,
              windowagg.checkpoints FROM PUBLIC;
GRANT SELECT ON windowagg.pipeline_progress TO PUBLIC;
-- every column but the connection string, which may hold a password
GRANT SELECT (id, name, owner, query, search_path, event_time, arrival_column,
              windows, bound, lateness, idle_timeout, source, result_table,
              dead_letter_table, live_view, enabled, created_at, source_kind,
              publication, remote_schema, remote_table, dead_letter_changes,
              slot_name, time_zone, sessions_table)
    ON windowagg.pipelines TO PUBLIC;
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

SELECT pg_catalog.pg_extension_config_dump('windowagg.pipelines', '');
SELECT pg_catalog.pg_extension_config_dump('windowagg.pipeline_progress', '');
SELECT pg_catalog.pg_extension_config_dump('windowagg.checkpoints', '');

-- A pipeline row that arrives without create_pipeline (pg_restore of a
-- dump) gets its worker when its transaction commits, like a created one.
CREATE FUNCTION windowagg._pipeline_inserted() RETURNS trigger
AS 'MODULE_PATHNAME', 'wa_pipeline_inserted'
LANGUAGE C;
-- for this table's trigger only (the function checks that it is)
REVOKE ALL ON FUNCTION windowagg._pipeline_inserted() FROM PUBLIC;
CREATE TRIGGER start_pipeline AFTER INSERT ON windowagg.pipelines
    FOR EACH ROW EXECUTE FUNCTION windowagg._pipeline_inserted();

CREATE FUNCTION windowagg.create_pipeline(name text,
                                          query text,
                                          event_time text,
                                          windows windowagg.window[],
                                          bound "any" DEFAULT NULL,
                                          lateness "any" DEFAULT NULL,
                                          result_table text DEFAULT NULL,
                                          arrival_column text DEFAULT NULL,
                                          idle_timeout interval DEFAULT NULL,
                                          enabled boolean DEFAULT true,
                                          source text DEFAULT 'table',
                                          connection text DEFAULT NULL,
                                          publication text DEFAULT NULL,
                                          dead_letter_changes boolean DEFAULT false)
RETURNS integer
AS 'MODULE_PATHNAME', 'wa_create_pipeline'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION windowagg.create_pipeline(text, text, text, windowagg.window[], "any", "any", text, text, interval, boolean, text, text, text, boolean) IS
    'create a continuous pipeline (source ''table'' or ''logical''), its result, dead-letter and live tables; returns its id';

CREATE FUNCTION windowagg.drop_pipeline(name text, drop_tables boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'wa_drop_pipeline'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION windowagg.drop_pipeline(text, boolean) IS
    'stop and remove a pipeline; its result and dead-letter tables are kept unless drop_tables';

CREATE FUNCTION windowagg.pause(name text) RETURNS void
AS 'MODULE_PATHNAME', 'wa_pause_pipeline'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION windowagg.pause(text) IS
    'stop a pipeline''s worker; the pipeline keeps its offset and state';

CREATE FUNCTION windowagg.resume(name text) RETURNS void
AS 'MODULE_PATHNAME', 'wa_resume_pipeline'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION windowagg.resume(text) IS
    'restart a paused pipeline from where it stopped';

CREATE FUNCTION windowagg.wait(name text, timeout interval DEFAULT '1 min')
RETURNS boolean
AS 'MODULE_PATHNAME', 'wa_wait_pipeline'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION windowagg.wait(text, interval) IS
    'wait until the pipeline has consumed and committed every source row committed before the call; false on timeout';

CREATE FUNCTION windowagg.flush(name text, timeout interval DEFAULT '1 min')
RETURNS boolean
AS 'MODULE_PATHNAME', 'wa_flush_pipeline'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION windowagg.flush(text, interval) IS
    'end of input: consume every committed row, move the watermark to +infinity, wait until every final pane is committed';

CREATE FUNCTION windowagg.live(name text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'wa_live'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION windowagg.live(text) IS
    'the pipeline''s windows that have not fired yet, with their current values (needs a column list; the pipeline''s _live view has it)';

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

-- Timestamp ticks are microseconds since 2000-01-01, PostgreSQL's own epoch.
-- Exact, and NULL where the tick is no timestamp (an event time near the
-- int64 limits), so that stat_pipelines never fails on one.
CREATE FUNCTION windowagg._ticks_to_timestamptz(ticks numeric)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'wa_ticks_to_timestamptz'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- What each reader may see: members of a pipeline's owner role and of
-- pg_monitor its status and counters (the last error only the former,
-- through _pipeline_status), whoever may read its results its status;
-- other pipelines do not appear.  A security barrier, so that no function
-- of the reader's sees the rows the view hides.
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

--
-- A pipeline's tables cannot be dropped from under it: DROP TABLE of its
-- source, result, sessions or dead-letter table fails and says to drop the
-- pipeline first (windowagg.drop_pipeline(name, drop_tables => true) drops
-- them all).
--
-- It runs as whoever drops a table, and sees through the catalog's
-- row-level security the pipelines of the roles the dropper is a member
-- of: a table of someone else's that another role's pipeline reads is not
-- kept from its owner (that pipeline stops), nor is that pipeline named.
-- row_security is on for it whatever the session says (pg_dump --clean
-- scripts turn it off), so that the policy filters rather than refuses.
CREATE FUNCTION windowagg._refuse_drop() RETURNS event_trigger
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
REVOKE ALL ON FUNCTION windowagg._refuse_drop() FROM PUBLIC;
CREATE EVENT TRIGGER windowagg_refuse_drop ON sql_drop
    EXECUTE FUNCTION windowagg._refuse_drop();
