# Pipelines at their limits: the state memory bound (stop, lose nothing,
# resume once raised) and the idle timeout (the watermark follows the wall
# clock when no rows arrive).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('limits');
$node->init;
$node->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$node->append_conf('postgresql.conf', 'windowagg.max_state_memory = 64kB');
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION windowagg;
	CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                  k int NOT NULL, t bigint NOT NULL, v int);
	SELECT windowagg.create_pipeline('big', 'SELECT k, count(*) AS n, sum(v) AS s FROM src GROUP BY k',
	                                 't', ARRAY[windowagg.hopping(100, 10)], bound => 1000000);
	-- 5000 keys, each with slices in ten windows: far more than 64kB
	INSERT INTO src (k, t, v) SELECT i % 5000, i % 100, i FROM generate_series(1, 20000) i;
});

ok($node->poll_query_until('postgres',
		"SELECT status = 'memory_full' FROM windowagg.stat_pipelines WHERE name = 'big'"),
	'the pipeline stops at windowagg.max_state_memory');
like($node->safe_psql('postgres', "SELECT last_error FROM windowagg.stat_pipelines"),
	qr/reached windowagg.max_state_memory \(64 kB\)/, 'and says why');
is($node->safe_psql('postgres', 'SELECT count(*) FROM big'), '0', 'nothing half-done was committed');

# rows keep arriving while it waits; nothing is lost once the bound is raised
$node->safe_psql('postgres',
	'INSERT INTO src (k, t, v) SELECT i % 5000, 100 + i % 100, i FROM generate_series(20001, 30000) i');
$node->safe_psql('postgres', "ALTER SYSTEM SET windowagg.max_state_memory = '64MB'");
$node->reload;
ok($node->poll_query_until('postgres',
		"SELECT status = 'running' FROM windowagg.stat_pipelines WHERE name = 'big'"),
	'it resumes once the bound is raised');
is($node->safe_psql('postgres', "SELECT windowagg.flush('big', '3 min')"), 't', 'flushed');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
	    (SELECT k, window_start, window_end, n, s FROM big
	     EXCEPT
	     SELECT k, ws, ws + 100, count(*), sum(v)
	     FROM src, LATERAL (SELECT w FROM generate_series(t - t % 10 - 90, t - t % 10, 10) w) x(ws)
	     GROUP BY 1, 2, 3)
	    UNION ALL
	    (SELECT k, ws, ws + 100, count(*), sum(v)
	     FROM src, LATERAL (SELECT w FROM generate_series(t - t % 10 - 90, t - t % 10, 10) w) x(ws)
	     GROUP BY 1, 2, 3
	     EXCEPT
	     SELECT k, window_start, window_end, n, s FROM big)) d}), '0',
	'every window equals GROUP BY over every row');
is($node->safe_psql('postgres', 'SELECT events_in, dead_letters FROM windowagg.stat_pipelines'),
	'30000|0', 'every row counted once');

# idle timeout: no more rows, yet the last window fires by the wall clock
$node->safe_psql('postgres', q{
	CREATE TABLE readings (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                       device int NOT NULL, read_at timestamptz NOT NULL);
	SELECT windowagg.create_pipeline('idle', 'SELECT device, count(*) AS n FROM readings GROUP BY device',
	                                 'read_at', ARRAY[windowagg.tumbling('1 s')],
	                                 bound => '100 ms', idle_timeout => '200 ms');
	INSERT INTO readings (device, read_at) VALUES (1, now()), (1, now());
});
ok($node->poll_query_until('postgres', 'SELECT n = 2 FROM idle'),
	'the window fired without a later event, by the idle timeout');
is($node->safe_psql('postgres', "SELECT pane, revision FROM idle"), 'on_time|1', 'as an on-time pane');

# A worker that is catching up with a long backlog reloads its
# configuration between epochs, not only once it has caught up: a bound
# lowered meanwhile stops it halfway.
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET windowagg.epoch_rows = 200;
	CREATE TABLE backlog (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                      k int NOT NULL, t bigint NOT NULL);
	SELECT windowagg.create_pipeline('lagging', 'SELECT k, count(*) AS n FROM backlog GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(100)], bound => 1000000);
	SELECT windowagg.pause('lagging');
	INSERT INTO backlog (k, t) SELECT i % 5000, i FROM generate_series(1, 300000) i;
});
$node->reload;
$node->safe_psql('postgres', "SELECT windowagg.resume('lagging')");
ok( $node->poll_query_until('postgres',
		"SELECT events_in > 0 FROM windowagg.stat_pipelines WHERE name = 'lagging'"),
	'the lagging pipeline is catching up');
$node->safe_psql('postgres', "ALTER SYSTEM SET windowagg.max_state_memory = '64kB'");
$node->reload;
ok( $node->poll_query_until('postgres',
		"SELECT status = 'memory_full' FROM windowagg.stat_pipelines WHERE name = 'lagging'"),
	'it takes the lowered bound');
cmp_ok($node->safe_psql('postgres',
		"SELECT events_in FROM windowagg.stat_pipelines WHERE name = 'lagging'"),
	'<', 300000, 'before it has caught up');

# With epochs of 200 rows the worker ingests after each read.  Read in
# epochs of the default size, the rows are ingested in batches while the
# source is read, inside the subtransaction that isolates poison rows
# (source/table.c): the bound is met there, the worker rolls back all of
# the epoch and, once the bound is raised, starts afresh in the same
# process (an assertion-enabled server once failed here, the worker having
# rolled back only the subtransaction).
# (no window closes, and each row has a window of its own: 4 MB holds
# what was read so far and is met again some tens of thousands rows on)
my $bound_kb = 4096;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET windowagg.epoch_rows');
$node->safe_psql('postgres', "ALTER SYSTEM SET windowagg.max_state_memory = '${bound_kb}kB'");
$node->reload;
ok( $node->poll_query_until('postgres', qq{
		SELECT status = 'memory_full' AND last_error LIKE '%($bound_kb kB)%'
		FROM windowagg.stat_pipelines WHERE name = 'lagging'}),
	'a bound met halfway through a read stops it again');
$node->safe_psql('postgres', "ALTER SYSTEM SET windowagg.max_state_memory = '64MB'");
$node->reload;
is($node->safe_psql('postgres', "SELECT windowagg.flush('lagging', '3 min')"), 't',
	'it catches up once the bound is raised again');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
	    (SELECT k, window_start, n FROM lagging
	     EXCEPT
	     SELECT k, t - t % 100, count(*) FROM backlog GROUP BY 1, 2)
	    UNION ALL
	    (SELECT k, t - t % 100, count(*) FROM backlog GROUP BY 1, 2
	     EXCEPT
	     SELECT k, window_start, n FROM lagging)) d}), '0',
	'every window equals GROUP BY over every row');
is($node->safe_psql('postgres',
		"SELECT events_in, dead_letters FROM windowagg.stat_pipelines WHERE name = 'lagging'"),
	'300000|0', 'every row counted once');

# The states of aggregates of the generic path count against the bound as
# the kernels' accumulators do: per key and slice, a set of distinct
# values (count(DISTINCT ...)) and a numeric sum's state.  Ten keys of 5000
# distinct users each in one window hold far more than 256 kB: the
# pipeline stops, commits nothing, and once the bound is raised it catches
# up exactly.  (The other pipelines go first: the bound is each
# pipeline's.)
$node->safe_psql('postgres', q{
	SELECT windowagg.drop_pipeline(name) FROM windowagg.pipelines;
	ALTER SYSTEM SET windowagg.max_state_memory = '256kB';
});
$node->reload;
$node->safe_psql('postgres', q{
	CREATE TABLE gsrc (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                   k int NOT NULL, t bigint NOT NULL, u int NOT NULL, amount numeric NOT NULL);
	SELECT windowagg.create_pipeline('gen',
	    'SELECT k, count(DISTINCT u) AS users, sum(amount) AS total FROM gsrc GROUP BY k',
	    't', ARRAY[windowagg.tumbling(100)], bound => 1000000);
	INSERT INTO gsrc (k, t, u, amount)
	SELECT i % 10, i % 100, i, i / 7.0 FROM generate_series(1, 50000) i;
});
ok( $node->poll_query_until('postgres', q{
		SELECT status = 'memory_full' AND last_error LIKE '%(256 kB)%'
		FROM windowagg.stat_pipelines WHERE name = 'gen'}),
	'sets of distinct values fill windowagg.max_state_memory');
is($node->safe_psql('postgres', q{
		SELECT events_in, count(g.*) FROM windowagg.stat_pipelines LEFT JOIN gen g ON true
		WHERE name = 'gen' GROUP BY 1}), '0|0',
	'nothing half-done was committed: no row counted, no window written');
$node->safe_psql('postgres', q{
	INSERT INTO gsrc (k, t, u, amount)
	SELECT i % 10, 100 + i % 100, i % 777, i / 3.0 FROM generate_series(1, 5000) i;
	ALTER SYSTEM SET windowagg.max_state_memory = '64MB';
});
$node->reload;
is($node->safe_psql('postgres', "SELECT windowagg.flush('gen', '3 min')"), 't',
	'it catches up once the bound is raised');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
	    (SELECT k, window_start, users, total FROM gen
	     EXCEPT
	     SELECT k, t - t % 100, count(DISTINCT u), sum(amount) FROM gsrc GROUP BY 1, 2)
	    UNION ALL
	    (SELECT k, t - t % 100, count(DISTINCT u), sum(amount) FROM gsrc GROUP BY 1, 2
	     EXCEPT
	     SELECT k, window_start, users, total FROM gen)) d}), '0',
	'every window equals GROUP BY over every row');
is($node->safe_psql('postgres', q{
		SELECT count(*), sum(users) FROM gen}), '20|55000',
	'twenty windows, with as many users as GROUP BY counts');
is($node->safe_psql('postgres',
		"SELECT events_in, dead_letters FROM windowagg.stat_pipelines WHERE name = 'gen'"),
	'55000|0', 'every row counted once');

$node->stop;
done_testing();
