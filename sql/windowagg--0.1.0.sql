/* windowagg--0.1.0.sql: windowagg's SQL objects, version 0.1.0 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION windowagg" to load this file. \quit

--
-- Windows.  A window is described in ticks: microseconds for interval
-- windows (timestamp event times), plain units for integer windows.
--
CREATE TYPE windowagg.window AS (
    time_domain text,   -- 'interval' or 'integer'
    size bigint,        -- window length in ticks
    slide bigint,       -- distance between window starts in ticks
    origin bigint       -- a tick at which some window starts
);
COMMENT ON TYPE windowagg.window IS
    'a tumbling or hopping window; build it with windowagg.tumbling or windowagg.hopping';

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
    'panes (keys, window_start, window_end, aggregates, pane, revision) of an aggregate query over windows of event time';
COMMENT ON FUNCTION windowagg.dropped(text, text, windowagg.window[], "any", "any", text) IS
    'rows of the query that arrived too late for every window (keys, event time, watermark, arrival)';
