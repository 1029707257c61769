-- bench/timed.sql: timing helper shared by the SQL benchmarks.
-- timed(q, runs): the best wall-clock seconds of running q runs times.
CREATE FUNCTION timed(q text, runs int DEFAULT 3) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    best float8 := 'infinity';
BEGIN
    FOR i IN 1 .. runs LOOP
        t0 := clock_timestamp();
        EXECUTE q;
        best := least(best, extract(epoch FROM clock_timestamp() - t0));
    END LOOP;
    RETURN best;
END
$$;
