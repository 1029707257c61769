-- test/fuzz/agg_query_setup.sql
--
-- Fixtures for fuzz_agg_query (run-agg-query.sh applies this file to a
-- throwaway server): the tables, views and types the fuzzer's queries
-- read, and an independent reference of windowagg's semantics, written the
-- slow, obvious way in plain SQL and PL/pgSQL (no windowagg function).
--
-- Everything is deterministic: the rows are computed from their number,
-- never from random(), so that a fuzzer input means the same case on
-- every run.  The harness reads these objects only, inside transactions it
-- rolls back.
SET client_min_messages = warning;
SET timezone = 'UTC';

CREATE EXTENSION IF NOT EXISTS windowagg;

DROP VIEW IF EXISTS fzv;
DROP MATERIALIZED VIEW IF EXISTS fzm;
DROP TABLE IF EXISTS fzt, fzt2, fzp;
DROP FUNCTION IF EXISTS fz_accept, fz_ticks(timestamptz), fz_ticks(timestamp),
	fz_floor_mod, fz_feq;
DROP TYPE IF EXISTS fz_mood;
DROP DOMAIN IF EXISTS fz_dom;
DROP COLLATION IF EXISTS fz_ci;

CREATE TYPE fz_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN fz_dom AS int;
-- a nondeterministic collation: equal text keys that differ in their bits
-- (an ICU build has it; without ICU, a deterministic stand-in of that name)
DO $$
BEGIN
	CREATE COLLATION fz_ci (provider = icu, locale = 'und-u-ks-level2',
							deterministic = false);
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
	CREATE COLLATION fz_ci FROM "C";
END
$$;

-- The source.  id is the arrival number (rows are inserted in id order and
-- never updated, so a sequential scan returns them in id order); ord is a
-- second total order, a permutation of id.  Keys have NULLs, duplicates,
-- values that differ only in case or in trailing spaces, long values that
-- are stored compressed, and the ends of their types' ranges; event times
-- come out of order, with both ends of timestamptz and bigint near the
-- end of the arrival order (so most of the stream is processed before
-- the watermark jumps).
CREATE TABLE fzt (
	id		bigint PRIMARY KEY,
	ord		int NOT NULL,
	k2		smallint,
	k4		int,
	k8		bigint,
	kn		bigint NOT NULL,
	s		text,
	c		character(3),
	vc		varchar(8),
	n		numeric,
	f8		float8,
	f4		float4,
	b		boolean,
	d		date,
	tm		time,
	u		uuid,
	m		fz_mood,
	j		jsonb,
	arr		int[],
	ts		timestamptz NOT NULL,	-- event time, both ends of the range
	tl		timestamp NOT NULL,		-- event time without time zone
	tsn		timestamptz,			-- event time with NULL and infinity
	e8		bigint NOT NULL,		-- integer event time, both ends of bigint
	e4		int NOT NULL,
	e2		smallint NOT NULL,
	-- names the row query must quote, and one it names its own columns
	"Key"	int,
	"order"	text,
	"ev time" timestamptz NOT NULL,
	"windowagg column 1" int NOT NULL
);

INSERT INTO fzt
SELECT i,
	(i * 37) % 301,
	CASE WHEN i % 11 = 0 THEN NULL WHEN i = 201 THEN -32768 WHEN i = 202 THEN 32767
		ELSE i % 5 END,
	CASE WHEN i % 10 = 0 THEN NULL WHEN i = 77 THEN 2147483647 WHEN i = 78 THEN -2147483648
		ELSE (i * 7) % 13 - 6 END,
	CASE WHEN i % 9 = 0 THEN NULL WHEN i % 23 = 1 THEN 9223372036854775807
		WHEN i % 23 = 2 THEN -9223372036854775808 ELSE (i % 4) * 1000000000000 - 7 END,
	CASE WHEN i = 100 THEN 9223372036854775807 WHEN i = 101 THEN -9223372036854775808
		ELSE i % 3 END,
	CASE i % 9 WHEN 0 THEN 'a' WHEN 1 THEN 'A' WHEN 2 THEN 'b' WHEN 3 THEN NULL
		WHEN 4 THEN '' WHEN 5 THEN 'é' WHEN 6 THEN repeat('x', 3000) || (i % 2)
		WHEN 7 THEN 'b ' ELSE 'key ' || (i % 4) END,
	CASE WHEN i % 8 = 0 THEN NULL ELSE ('a' || repeat(' ', i % 2) || (i % 3)) END,
	CASE WHEN i % 6 = 0 THEN NULL ELSE 'v' || (i % 4) END,
	CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 10) / 4.0 END,
	-- exact binary fractions, so that sums do not depend on their order;
	-- NaN, both infinities, -0 and one huge value among them
	CASE WHEN i % 13 = 0 THEN NULL WHEN i % 50 = 7 THEN 'NaN'
		WHEN i % 97 = 3 THEN 'Infinity' WHEN i % 89 = 5 THEN '-Infinity'
		WHEN i % 31 = 4 THEN '-0' WHEN i = 150 THEN 1e150
		ELSE ((i * 17) % 41 - 20) * 0.25 END,
	CASE WHEN i % 17 = 0 THEN NULL WHEN i = 33 THEN 'NaN'
		ELSE ((i * 13) % 21 - 10) * 0.5 END,
	CASE i % 3 WHEN 0 THEN true WHEN 1 THEN false END,
	CASE WHEN i = 60 THEN 'infinity' WHEN i = 61 THEN '-infinity'
		WHEN i = 62 THEN '5874897-12-31' WHEN i = 63 THEN '4714-11-24 BC'
		WHEN i % 12 = 0 THEN NULL ELSE date '2024-01-01' + (i % 40) END,
	CASE WHEN i = 70 THEN '24:00:00' WHEN i % 14 = 0 THEN NULL
		ELSE time '00:00' + (i * 997 % 86400) * interval '1 second' END,
	CASE WHEN i % 15 = 0 THEN NULL ELSE md5((i % 9)::text)::uuid END,
	CASE WHEN i % 16 = 0 THEN NULL ELSE (enum_range(NULL::fz_mood))[1 + i % 3] END,
	CASE i % 4 WHEN 0 THEN '{"a": 1}' WHEN 1 THEN '{"a": 1.0}' WHEN 2 THEN NULL
		ELSE jsonb_build_object('b', i % 3) END,
	CASE WHEN i % 18 = 0 THEN NULL ELSE ARRAY[i % 3, i % 2] END,
	CASE i WHEN 291 THEN '294276-12-31 23:59:59.999999+00'
		WHEN 292 THEN '4714-11-24 00:00:00+00 BC'
		WHEN 294 THEN '294276-12-31 23:00:00+00'
		WHEN 295 THEN '4714-11-24 00:00:01+00 BC'
		WHEN 297 THEN '1970-01-01 00:00:00+00'
		WHEN 298 THEN '1999-12-31 23:59:59.999999+00'
		ELSE timestamptz '2024-01-01 00:00:00+00'
			+ (i * 60 + ((i * 7919) % 11 - 5) * 45) * interval '1 second'
			+ (i % 3) * interval '1 microsecond' END,
	CASE i WHEN 292 THEN '294276-12-31 23:59:59.999999'
		WHEN 293 THEN '4714-11-24 00:00:00 BC'
		WHEN 296 THEN '2000-01-01 00:00:00'
		ELSE timestamp '2024-03-31 00:00:00'
			+ (i * 600 + ((i * 31) % 7 - 3) * 900) * interval '1 second' END,
	CASE WHEN i = 50 THEN NULL WHEN i = 120 THEN 'infinity' WHEN i = 121 THEN '-infinity'
		ELSE timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute' END,
	CASE i WHEN 291 THEN 9223372036854775807 WHEN 292 THEN -9223372036854775808
		WHEN 293 THEN 9223372036854775806 WHEN 295 THEN -9223372036854775807
		WHEN 296 THEN 9223372036854775807 - 100 WHEN 298 THEN -9223372036854775808 + 50
		ELSE i * 10 + ((i * 31) % 7 - 3) * 4 END,
	CASE i WHEN 291 THEN 2147483647 WHEN 293 THEN -2147483648
		ELSE i * 3 + (i % 5) * 2 - 4 END,
	CASE i WHEN 292 THEN 32767 WHEN 294 THEN -32768 ELSE (i * 5) % 1000 - 500 END,
	CASE WHEN i % 10 = 3 THEN NULL ELSE i % 5 END,
	CASE i % 4 WHEN 0 THEN 'x' WHEN 1 THEN 'X' WHEN 2 THEN NULL ELSE 'y' END,
	timestamptz '2024-01-01 00:00:00+00' + ((i * 7) % 300) * interval '1 minute',
	(i * 13) % 300
FROM generate_series(1, 300) i
ORDER BY i;

-- For subqueries in WHERE and for joins (which windowagg refuses).
CREATE TABLE fzt2 (k4 int, w text);
INSERT INTO fzt2 SELECT i - 3, 'w' || i FROM generate_series(1, 6) i;

-- The same rows through a view, a materialized view and a table
-- partitioned by arrival number (scanned in id order, partition by
-- partition).
CREATE VIEW fzv AS SELECT * FROM fzt;
CREATE MATERIALIZED VIEW fzm AS SELECT * FROM fzt ORDER BY id;
CREATE TABLE fzp (LIKE fzt) PARTITION BY RANGE (id);
CREATE TABLE fzp_1 PARTITION OF fzp FOR VALUES FROM (MINVALUE) TO (150);
CREATE TABLE fzp_2 PARTITION OF fzp FOR VALUES FROM (150) TO (MAXVALUE);
INSERT INTO fzp SELECT * FROM fzt ORDER BY id;
ANALYZE fzt, fzt2, fzm, fzp;

-- Timestamp ticks (microseconds since 2000-01-01, PostgreSQL's own
-- representation) exactly.  extract(epoch ...) alone rounds in the last
-- ~30 years of the type's range (it would overflow int64 there), so the
-- upper half goes through a shift of 1000 years of hours (an interval's
-- time part: no month or time zone arithmetic).
CREATE FUNCTION fz_ticks(t timestamptz) RETURNS numeric
LANGUAGE sql STABLE
RETURN CASE WHEN t >= timestamptz '2000-01-01 00:00:00+00'
	THEN extract(epoch FROM t - interval '8760000 hours') * 1000000
		+ 31536000000000000 - 946684800000000
	ELSE extract(epoch FROM t) * 1000000 - 946684800000000 END;

CREATE FUNCTION fz_ticks(t timestamp) RETURNS numeric
LANGUAGE sql IMMUTABLE
RETURN CASE WHEN t >= timestamp '2000-01-01 00:00:00'
	THEN extract(epoch FROM t - interval '8760000 hours') * 1000000
		+ 31536000000000000 - 946684800000000
	ELSE extract(epoch FROM t) * 1000000 - 946684800000000 END;

-- floor modulo over numeric: exact (numeric division would round)
CREATE FUNCTION fz_floor_mod(a numeric, b numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE
RETURN CASE WHEN mod(a, b) < 0 THEN mod(a, b) + b ELSE mod(a, b) END;

-- Floats agree when equal (NaN equals NaN, as in GROUP BY) or within a
-- relative tolerance: windowagg adds partial results in another order.
CREATE FUNCTION fz_feq(a float8, b float8, tol float8) RETURNS boolean
LANGUAGE sql IMMUTABLE
RETURN a IS NOT DISTINCT FROM b OR abs(a - b) <= tol * greatest(abs(a), abs(b));

-- Replay the rows of rows_sql (columns wa_fz_id, wa_fz_tk: the event's id
-- and its time in ticks, in arrival order) as README's "Semantics" says:
--   the watermark starts at -infinity; after each event it becomes
--   max(watermark, max event time seen - bound);
--   window [w, w + size) with w = origin + k * slide holds t iff
--   w <= t < w + size, exists iff lowest <= w and w + size <= highest
--   (the range of window_start's type), and accepts the event iff
--   w + size + lateness > watermark just before the event;
--   an event none of whose windows exists is dropped without being an
--   event (it does not move the watermark: windowagg drops such a row
--   before the engine sees it).
-- One row per accepting window, and one row with wa_fz_ws NULL for an
-- event no window accepts; wa_fz_late says the window had fired (its end
-- <= the watermark) when the event came, wa_fz_wm is the watermark the
-- event met (NULL: -infinity), wa_fz_arrival its position in arrival order,
-- wa_fz_part that some window containing the event does not exist.
CREATE FUNCTION fz_accept(rows_sql text, sizes numeric[], slides numeric[],
						  origins numeric[], bound numeric, lateness numeric,
						  lowest numeric, highest numeric)
RETURNS TABLE (wa_fz_id bigint, wa_fz_arrival bigint, wa_fz_ws numeric,
			   wa_fz_we numeric, wa_fz_late boolean, wa_fz_wm numeric,
			   wa_fz_part boolean)
LANGUAGE plpgsql AS $$
DECLARE
	r			record;
	wm			numeric;		-- NULL is -infinity
	max_t		numeric;
	w			numeric;
	n			bigint := 0;
	exists_any	boolean;
	accepted	boolean;
	part		boolean;
BEGIN
	FOR r IN EXECUTE rows_sql LOOP
		n := n + 1;
		exists_any := false;
		accepted := false;
		part := false;
		FOR j IN 1 .. array_length(sizes, 1) LOOP
			w := r.wa_fz_tk - fz_floor_mod(r.wa_fz_tk - origins[j], slides[j]);
			WHILE w > r.wa_fz_tk - sizes[j] LOOP
				part := part OR w < lowest OR w + sizes[j] > highest;
				w := w - slides[j];
			END LOOP;
		END LOOP;
		FOR j IN 1 .. array_length(sizes, 1) LOOP
			w := r.wa_fz_tk - fz_floor_mod(r.wa_fz_tk - origins[j], slides[j]);
			WHILE w > r.wa_fz_tk - sizes[j] LOOP
				IF w >= lowest AND w + sizes[j] <= highest THEN
					exists_any := true;
					IF wm IS NULL OR w + sizes[j] + lateness > wm THEN
						wa_fz_id := r.wa_fz_id;
						wa_fz_arrival := n;
						wa_fz_ws := w;
						wa_fz_we := w + sizes[j];
						wa_fz_late := wm IS NOT NULL AND w + sizes[j] <= wm;
						wa_fz_wm := wm;
						wa_fz_part := part;
						RETURN NEXT;
						accepted := true;
					END IF;
				END IF;
				w := w - slides[j];
			END LOOP;
		END LOOP;
		IF NOT accepted THEN
			wa_fz_id := r.wa_fz_id;
			wa_fz_arrival := n;
			wa_fz_ws := NULL;
			wa_fz_we := NULL;
			wa_fz_late := NULL;
			wa_fz_wm := wm;
			wa_fz_part := part;
			RETURN NEXT;
		END IF;
		IF exists_any THEN
			max_t := greatest(max_t, r.wa_fz_tk);
			wm := greatest(wm, max_t - bound);
		END IF;
	END LOOP;
END
$$;
