-- windowagg.explain: the window coverage plans of the paper's examples
-- (Wu et al. 2020), in windowagg's units (one slice = the root).
SET timezone = 'UTC';

-- min over tumbling 10/20/30/40 minutes: 20 and 30 from 10, 40 from 20
SELECT * FROM windowagg.explain(
    ARRAY[windowagg.tumbling('10 min'), windowagg.tumbling('20 min'),
          windowagg.tumbling('30 min'), windowagg.tumbling('40 min')], '{min}');

-- tumbling 20/30/40: here the slices are 10 wide, so they serve as the
-- paper's factor window 10 (the engine tests check 360/246/150 in the
-- paper's own model, with a root of width 1)
SELECT * FROM windowagg.explain(ARRAY[windowagg.tumbling(20), windowagg.tumbling(30),
                                      windowagg.tumbling(40)], '{sum}');

-- with a window of 7 the slices are 1 wide, and the planner adds the
-- factor window 10 (never shown in results) under 20 and 30
SELECT * FROM windowagg.explain(ARRAY[windowagg.tumbling(20), windowagg.tumbling(30),
                                      windowagg.tumbling(40), windowagg.tumbling(7)], '{sum}');

-- covered-by only helps min/max: a hopping window from a smaller hopping one
SELECT * FROM windowagg.explain(ARRAY[windowagg.hopping(30, 10), windowagg.hopping(20, 10)], '{max}');
SELECT * FROM windowagg.explain(ARRAY[windowagg.hopping(30, 10), windowagg.hopping(20, 10)], '{count,max}');

-- a window that overlaps itself 4 times or more is emitted from slices
-- through a two-stack, at about 2 slide/g + 1 merges, which beats any
-- parent here
SELECT * FROM windowagg.explain(ARRAY[windowagg.hopping(600, 1), windowagg.hopping(1200, 1)], '{min}');

-- windowagg.share_windows off: every window from slices, as the engine
-- then runs them
SET windowagg.share_windows = off;
SELECT * FROM windowagg.explain(
    ARRAY[windowagg.tumbling('10 min'), windowagg.tumbling('20 min'),
          windowagg.tumbling('30 min'), windowagg.tumbling('40 min')], '{min}');
RESET windowagg.share_windows;

-- windows that do not start together share only slices
SELECT * FROM windowagg.explain(ARRAY[windowagg.tumbling(10), windowagg.tumbling(20, 5)], '{min}');

-- errors
SELECT * FROM windowagg.explain(NULL, '{min}');
SELECT * FROM windowagg.explain(ARRAY[windowagg.tumbling(10)], '{}');

SELECT * FROM windowagg.explain('no_such_pipeline');

-- a pipeline: the plan its worker runs, from its query's aggregates
CREATE TABLE src_x (id bigint GENERATED ALWAYS AS IDENTITY, k int, t bigint, v int);
CREATE INDEX ON src_x (id);
SELECT windowagg.create_pipeline(
    name => 'p_explain',
    query => $$SELECT k, min(v) AS lo, max(v) AS hi FROM src_x GROUP BY k$$,
    event_time => 't',
    windows => ARRAY[windowagg.tumbling(10), windowagg.tumbling(20),
                     windowagg.tumbling(30), windowagg.tumbling(40)]) > 0 AS created;
SELECT * FROM windowagg.explain('p_explain');
-- whoever may not read the results may not see the plan either
CREATE ROLE explain_stranger;
SET ROLE explain_stranger;
SELECT * FROM windowagg.explain('p_explain');
RESET ROLE;
DROP ROLE explain_stranger;
SELECT windowagg.drop_pipeline('p_explain', drop_tables => true);
DROP TABLE src_x;
