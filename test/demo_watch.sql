-- test/demo_watch.sql: what `make demo` prints every two seconds.
\pset footer off
SET timezone = 'UTC';
SELECT to_char(watermark, 'HH24:MI:SS') AS watermark, events_in, panes_on_time,
       panes_late, dead_letters, lag_rows, state_bytes, status
FROM windowagg.stat_pipelines WHERE name = 'temps';
\echo 'newest 10-minute windows of device 7:'
SELECT to_char(window_start, 'HH24:MI') || '-' || to_char(window_end, 'HH24:MI') AS window,
       min_temp, max_temp, round(avg_temp::numeric, 2) AS avg_temp, n, pane, revision
FROM temps WHERE device_id = 7 AND window_end - window_start = '10 min'
ORDER BY window_start DESC LIMIT 2;
\echo 'late revisions in the last 2 seconds:'
SELECT device_id, to_char(window_start, 'HH24:MI') || '-' || to_char(window_end, 'HH24:MI') AS window,
       n, revision
FROM temps WHERE pane = 'late' AND updated_at > now() - interval '2 s'
ORDER BY updated_at DESC, device_id LIMIT 3;
\echo 'newest dead letters:'
SELECT arrival, device_id, to_char(read_at, 'HH24:MI:SS') AS read_at,
       to_char(d.watermark, 'HH24:MI:SS') AS watermark_then
FROM temps_dead_letters d, jsonb_to_record(d.source_row) AS r(device_id int, read_at timestamptz)
ORDER BY arrival DESC LIMIT 2;
\echo 'device 7, still open (temps_live):'
SELECT to_char(window_start, 'HH24:MI') || '-' || to_char(window_end, 'HH24:MI') AS window, n
FROM temps_live WHERE device_id = 7 AND window_end - window_start = '10 min' ORDER BY window_start;
