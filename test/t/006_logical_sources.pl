# Logical replication sources, exactly once across crashes of either
# server.  Two servers: "source" has the events table and a publication;
# "sink" runs two pipelines over the same stream of 40,000 events (out of
# order, late and too late, 11 keys): one reads the source server's table
# over a replication connection, the other a table of the sink itself
# through its own slot.  The events arrive in 20 transactions; rows are
# deleted or truncated right after they commit.  Between batches the
# source server is stopped in immediate mode and, later, its walsender is
# killed with SIGKILL (a crash restart); the sink's worker is killed; and
# the sink is stopped in immediate mode.  Afterwards both result tables
# must equal the brute-force reference, every event must be counted once,
# and the slots must have let go of the WAL they no longer need.  (The
# sink's own table has no replica identity: its deletes and updates still
# work, and are counted.)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $events = 40_000;
my $batches = 20;
my $batch_size = $events / $batches;

my $source = PostgreSQL::Test::Cluster->new('source');
$source->init(allows_streaming => 'logical');
$source->append_conf('postgresql.conf', "restart_after_crash = on\nlog_min_messages = warning");
$source->start;

my $sink = PostgreSQL::Test::Cluster->new('sink');
$sink->init;
$sink->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$sink->append_conf('postgresql.conf', "restart_after_crash = on\nlog_min_messages = warning");
$sink->start;

# the same events on both servers (same seed), and the reference on the sink
for my $node ($source, $sink)
{
	$node->safe_psql('postgres', slurp_file('sql/t_00_setup.sql'));
	$node->safe_psql('postgres', "SELECT make_events('ev', $events, 11, 2, 15, 31, 350, 0.61)");
}
# the published table needs a replica identity for its deletes; the
# sink's own source does without
$source->safe_psql('postgres',
	'CREATE TABLE src (id bigint PRIMARY KEY, k int NOT NULL, t bigint NOT NULL, v int)');
$sink->safe_psql('postgres',
	'CREATE TABLE src (id bigint NOT NULL, k int NOT NULL, t bigint NOT NULL, v int)');
$source->safe_psql('postgres', 'CREATE PUBLICATION events_pub FOR TABLE src');
$sink->safe_psql('postgres', 'CREATE EXTENSION windowagg');

my $query = 'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn FROM src GROUP BY k';
my $windows = 'ARRAY[windowagg.hopping(300, 100), windowagg.tumbling(150)]';
my $connstr = $source->connstr('postgres');
# the sink's own src is shadowed by nothing: the remote pipeline reads a
# stand-in (remote_src_source) that create_pipeline makes from the source's
# definition of src
$sink->safe_psql('postgres', qq{
	SELECT windowagg.create_pipeline('remote_src', '$query', 't', $windows,
	    bound => 20, lateness => 60, source => 'logical',
	    connection => \$\$${connstr}\$\$, publication => 'events_pub');
	SELECT windowagg.create_pipeline('local_src', '$query', 't', $windows,
	    bound => 20, lateness => 60, source => 'logical');});
# the remote pipeline's worker makes its slot when it first starts: the
# stream is consumed from then on
is($sink->safe_psql('postgres', "SELECT windowagg.wait('remote_src')"),
	't', 'the remote pipeline is running');
is( $source->safe_psql('postgres',
		"SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'"),
	1, 'the remote pipeline has its slot on the source server');
is( $sink->safe_psql('postgres',
		"SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'remote_src_source'::regclass AND attnum > 0"),
	'id,k,t,v', 'the stand-in has the remote table\'s columns');

sub wait_for_worker
{
	my ($name) = @_;
	$sink->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL FROM windowagg.stat_pipelines WHERE name = '$name'")
	  or die "no worker for $name";
}

sub kill_worker
{
	my ($name) = @_;
	my $pid = $sink->safe_psql('postgres',
		"SELECT worker_pid FROM windowagg.stat_pipelines WHERE name = '$name'");
	kill 'KILL', $pid if $pid;
	$sink->poll_query_until('postgres', 'SELECT true') or die 'sink did not come back';
	note("SIGKILL to the worker of $name");
}

my %crash_at = (
	3 => sub { $source->stop('immediate'); $source->start; note('source: immediate stop'); },
	6 => sub { kill_worker('remote_src'); },
	9 => sub {
		my $pid = $source->safe_psql('postgres',
			"SELECT active_pid FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'");
		kill 'KILL', $pid if $pid;
		$source->poll_query_until('postgres', 'SELECT true') or die 'source did not come back';
		note("source: SIGKILL to walsender $pid");
	},
	12 => sub { $sink->stop('immediate'); $sink->start; note('sink: immediate stop'); },
	15 => sub { kill_worker('local_src'); },);

my $crashes = 0;
for my $b (0 .. $batches - 1)
{
	my $hi = ($b + 1) * $batch_size;
	for my $node ($source, $sink)
	{
		# the rows go in one transaction, and (often) away right after
		$node->safe_psql('postgres', qq{
			INSERT INTO src SELECT id, k, t, v FROM ev WHERE id > $hi - $batch_size AND id <= $hi ORDER BY id});
		$node->safe_psql('postgres', 'DELETE FROM src WHERE id % 7 = 0') if $b % 3 == 0;
		$node->safe_psql('postgres', 'TRUNCATE src') if $b % 4 == 1;
		$node->safe_psql('postgres', 'UPDATE src SET v = v + 1 WHERE id % 97 = 0') if $b % 5 == 2;
	}
	if (my $crash = $crash_at{$b})
	{
		select(undef, undef, undef, rand(0.3));
		$crash->();
		$crashes++;
	}
}
wait_for_worker($_) for qw(remote_src local_src);

for my $name (qw(remote_src local_src))
{
	ok( $sink->poll_query_until('postgres',
			"SELECT events_in = $events FROM windowagg.stat_pipelines WHERE name = '$name'"),
		"$name: every event arrived");
	is($sink->safe_psql('postgres', "SELECT windowagg.flush('$name', '5 min')"),
		't', "$name: flushed after $crashes crashes");

	my ($n_windows, $wrong, $missing, $dead, $dead_wrong) = split /\|/,
	  $sink->safe_psql('postgres', qq{
		CREATE TEMP TABLE acc AS
		SELECT a.id, e.k, e.v, a.ws, a.we
		FROM ref_accept('ev', '{300,150}', '{100,150}', '{0,0}', 20, 60) a JOIN ev e USING (id);
		WITH want AS (
		    SELECT k, ws::bigint, we::bigint, count(*) AS n, sum(v) AS s, min(v) AS mn
		    FROM acc WHERE ws IS NOT NULL GROUP BY 1, 2, 3),
		got AS (SELECT k, window_start, window_end, n, s, mn FROM $name),
		dead_want AS (SELECT id FROM acc WHERE ws IS NULL),
		dead_got AS (SELECT (source_row->>'id')::bigint AS id FROM ${name}_dead_letters
		             WHERE reason LIKE 'too late%')
		SELECT (SELECT count(*) FROM want),
		       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x),
		       (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x),
		       (SELECT count(*) FROM dead_want),
		       (SELECT count(*) FROM ((SELECT * FROM dead_got EXCEPT ALL SELECT * FROM dead_want)
		                              UNION ALL
		                              (SELECT * FROM dead_want EXCEPT ALL SELECT * FROM dead_got)) d)});
	cmp_ok($n_windows, '>', 1000, "$name: $n_windows windows to check");
	is($wrong, 0, "$name: no window differs from the reference");
	is($missing, 0, "$name: no window is missing");
	cmp_ok($dead, '>', 0, "$name: $dead too-late events");
	is($dead_wrong, 0, "$name: dead letters are exactly the too-late events, once each");
	is( $sink->safe_psql('postgres',
			"SELECT events_in FROM windowagg.stat_pipelines WHERE name = '$name'"),
		$events, "$name: the counters count every event once");
	cmp_ok( $sink->safe_psql('postgres',
			"SELECT source_updates + source_deletes FROM windowagg.stat_pipelines WHERE name = '$name'"),
		'>', 0, "$name: updates and deletes are counted");
}
is($crashes, 5, 'five crashes');

# The slots let go of what was applied: after a checkpoint on each server
# the slots' restart points pass where the last batch began.
for my $pair ([ $source, 'remote_src' ], [ $sink, 'local_src' ])
{
	my ($node, $name) = @$pair;
	my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	my $caught_up = 0;
	for (1 .. 60)
	{
		$node->safe_psql('postgres', 'CHECKPOINT');
		$caught_up = $node->safe_psql('postgres',
			"SELECT bool_and(restart_lsn >= '$lsn') FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'");
		last if $caught_up eq 't';
		sleep 1;
	}
	is($caught_up, 't', "$name: its slot holds no WAL from before the last checkpoint");
}
cmp_ok( $sink->safe_psql('postgres',
		"SELECT max(retained_wal_bytes) FROM windowagg.stat_pipelines"),
	'<', 16 * 1024 * 1024, 'stat_pipelines shows the retained WAL');

# dropping the pipelines drops their slots, on both servers
$sink->safe_psql('postgres', qq{
	SELECT windowagg.drop_pipeline('remote_src', drop_tables => true);
	SELECT windowagg.drop_pipeline('local_src', drop_tables => true);});
ok( $source->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'"),
	'the remote slot is dropped');
ok( $sink->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'"),
	'the local slot is dropped');

# DROP EXTENSION takes a running logical pipeline along with its slot
$sink->safe_psql('postgres', qq{
	SELECT windowagg.create_pipeline('doomed', '$query', 't', $windows, source => 'logical');});
wait_for_worker('doomed');
$sink->safe_psql('postgres', 'DROP EXTENSION windowagg CASCADE');
ok( $sink->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'"),
	'DROP EXTENSION: the slot is dropped');

$sink->stop;
$source->stop;
done_testing();
