-- test/demo_summary.sql: the end of `make demo`: flush, then check.
\pset footer off
SET timezone = 'UTC';
\echo '== end of input: flush (the watermark goes to +infinity, every window fires)'
SELECT windowagg.flush('temps') AS flushed;
SELECT events_in, panes_on_time, panes_late, dead_letters, events_partial, status
FROM windowagg.stat_pipelines WHERE name = 'temps';
SELECT count(*) AS result_rows,
       count(*) FILTER (WHERE pane = 'late') AS refined_by_late_data,
       max(revision) AS highest_revision
FROM temps;

\echo
\echo '== check: the result table and the dead letters equal the batch function over'
\echo '   the same rows in arrival order (windowagg.aggregate and windowagg.dropped)'
CREATE TEMP TABLE batch AS
SELECT DISTINCT ON (device_id, window_start, window_end) *
FROM windowagg.aggregate(
    $$SELECT device_id, min(temp) AS min_temp, max(temp) AS max_temp,
             avg(temp) AS avg_temp, count(*) AS n FROM readings GROUP BY device_id$$,
    'read_at', ARRAY[windowagg.tumbling('10 min'), windowagg.hopping('1 hour', '5 min')],
    bound => '5 s', lateness => '2 min', arrival_order => 'id')
  AS (device_id int, window_start timestamptz, window_end timestamptz,
      min_temp float8, max_temp float8, avg_temp float8, n bigint, pane text, revision bigint)
ORDER BY device_id, window_start, window_end, revision DESC;
CREATE TEMP TABLE batch_dropped AS
SELECT arrival FROM windowagg.dropped(
    $$SELECT device_id, count(*) AS n FROM readings GROUP BY device_id$$,
    'read_at', ARRAY[windowagg.tumbling('10 min'), windowagg.hopping('1 hour', '5 min')],
    bound => '5 s', lateness => '2 min', arrival_order => 'id')
  AS (device_id int, read_at timestamptz, watermark timestamptz, arrival bigint);
SELECT (SELECT count(*) FROM batch) AS windows,
       (SELECT count(*) FROM (
            (SELECT device_id, window_start, window_end, min_temp, max_temp, n FROM temps
             EXCEPT SELECT device_id, window_start, window_end, min_temp, max_temp, n FROM batch)
            UNION ALL
            (SELECT device_id, window_start, window_end, min_temp, max_temp, n FROM batch
             EXCEPT SELECT device_id, window_start, window_end, min_temp, max_temp, n FROM temps)) d)
         AS window_differences,
       (SELECT count(*) FROM batch_dropped) AS dead_letters,
       (SELECT count(*) FROM (
            (SELECT arrival FROM temps_dead_letters EXCEPT SELECT arrival FROM batch_dropped)
            UNION ALL
            (SELECT arrival FROM batch_dropped EXCEPT SELECT arrival FROM temps_dead_letters)) d)
         AS dead_letter_differences;
