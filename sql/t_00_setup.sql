-- Shared fixtures for the regression tests: an independent reference
-- implementation of windowagg's semantics, written the slow, obvious way.
SET client_min_messages = warning;

-- floor modulo over numeric, so that nothing overflows near int64 limits
-- (numeric mod() is exact; numeric division would round)
CREATE FUNCTION ref_floor_mod(a numeric, b numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE
RETURN CASE WHEN mod(a, b) < 0 THEN mod(a, b) + b ELSE mod(a, b) END;

-- Replay the events of a table (columns id, t: arrival order is id) and
-- list, for every event, each window that accepts it:
--   watermark starts at -inf; after each event wm = max(wm, max t - bound);
--   window [w, w+size) with w = origin + k*slide holds t iff w <= t < w+size
--   and accepts the event iff w + size + lateness > wm before the event.
-- Events no window accepts are listed once with ws NULL (dropped).
CREATE FUNCTION ref_accept(events regclass, sizes numeric[], slides numeric[],
                           origins numeric[], bound numeric, lateness numeric)
RETURNS TABLE (id bigint, spec int, ws numeric, we numeric, was_fired boolean,
               wm numeric)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    cur_wm numeric := NULL;      -- NULL is -infinity
    max_t numeric := NULL;
    w numeric;
    accepted boolean;
BEGIN
    FOR r IN EXECUTE format('SELECT id, t FROM %s ORDER BY id', events) LOOP
        accepted := false;
        FOR j IN 1 .. array_length(sizes, 1) LOOP
            w := r.t - ref_floor_mod(r.t - origins[j], slides[j]);
            WHILE w > r.t - sizes[j] LOOP
                IF cur_wm IS NULL OR w + sizes[j] + lateness > cur_wm THEN
                    id := r.id; spec := j; ws := w; we := w + sizes[j];
                    was_fired := cur_wm IS NOT NULL AND w + sizes[j] <= cur_wm;
                    wm := cur_wm;
                    RETURN NEXT;
                    accepted := true;
                END IF;
                w := w - slides[j];
            END LOOP;
        END LOOP;
        IF NOT accepted THEN
            id := r.id; spec := NULL; ws := NULL; we := NULL;
            was_fired := NULL; wm := cur_wm;
            RETURN NEXT;
        END IF;
        max_t := greatest(max_t, r.t);
        cur_wm := greatest(cur_wm, max_t - bound);
    END LOOP;
END
$$;

-- Random out-of-order integer-time events with a fixed seed: the clock
-- advances by step per event, each event is displaced by up to jitter, and
-- every late_every-th event is pushed back by late_by (late or too late).
CREATE FUNCTION make_events(name text, n int, n_keys int, step int,
                            jitter int, late_every int, late_by int,
                            seed float8)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setseed(seed);
    EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, k int NOT NULL,
                    kt text, t bigint NOT NULL, v int, f float8)', name);
    EXECUTE format($q$
        INSERT INTO %I
        SELECT i, kk, 'key-' || kk, t, v, f FROM (
          SELECT i,
                 (random() * (%s - 1))::int AS kk,
                 i::bigint * %s + (random() * 2 * %s)::int - %s
                   - CASE WHEN i %% %s = 0 THEN (random() * %s)::int ELSE 0 END AS t,
                 CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 2000)::int - 1000 END AS v,
                 CASE WHEN random() < 0.05 THEN NULL ELSE random() * 100 - 50 END AS f
          FROM generate_series(1, %s) i) s$q$,
        name, n_keys, step, jitter, jitter, late_every, late_by, n);
END
$$;

-- Wait (at most seconds) until a pipeline's status is want, and its last
-- error matches error_like if given; returns the status it reached.
CREATE FUNCTION wait_for_status(pipeline text, want text, error_like text DEFAULT NULL,
                                seconds int DEFAULT 30)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    got record;
BEGIN
    FOR i IN 1 .. seconds * 20 LOOP
        SELECT status, last_error INTO got FROM windowagg.stat_pipelines WHERE name = pipeline;
        EXIT WHEN got.status = want AND (error_like IS NULL OR got.last_error LIKE error_like);
        PERFORM pg_sleep(0.05);
    END LOOP;
    RETURN got.status;
END
$$;
