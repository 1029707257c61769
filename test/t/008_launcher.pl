# The launcher when max_worker_processes is full: a database whose
# pipelines could not be found at start is tried again, and a pipeline
# that cannot get a worker says so and starts once one is free.
#
# pg_prewarm's leader (a static background worker that runs until it is
# terminated) fills the one slot that max_worker_processes = 2 leaves
# beside the launcher, as another extension's workers would.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('launcher');
$node->init;
$node->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION windowagg;
	CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint);
	SELECT windowagg.create_pipeline('p1', 'SELECT k, count(*) AS n FROM src GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(10)]);
	SELECT windowagg.create_pipeline('p2', 'SELECT k, count(*) AS n FROM src GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(100)]);
	INSERT INTO src (k, t) SELECT i % 3, i FROM generate_series(1, 100) i;
});
is($node->safe_psql('postgres', "SELECT windowagg.wait('p1') AND windowagg.wait('p2')"), 't',
	'both pipelines run with room to spare');
$node->stop;

$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'windowagg,pg_prewarm'
max_worker_processes = 2
max_logical_replication_workers = 0
max_parallel_workers = 0
});
my $log_offset = -s $node->logfile;
$node->start;
$node->safe_psql('postgres', 'INSERT INTO src (k, t) SELECT i % 3, i FROM generate_series(101, 300) i');

ok($node->wait_for_log(qr/could not find the pipelines of database \d+: no background worker slot was free/,
		$log_offset),
	'a database that cannot be searched at start is reported');
is($node->safe_psql('postgres',
		"SELECT string_agg(status, ',' ORDER BY name) FROM windowagg.stat_pipelines"),
	'starting,starting', 'its pipelines wait');

# a slot frees: the database is searched again, without a restart
# (the leader has no row in pg_stat_activity: found among the postmaster's children)
my $postmaster = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
my $leader = `pgrep -P $postmaster -f 'autoprewarm leader'`;
chomp $leader;
like($leader, qr/^\d+$/, 'the autoprewarm leader holds the last worker slot');
kill 'TERM', $leader;
ok($node->wait_for_log(qr/found the pipelines of database \d+/, $log_offset),
	'the database is searched again once a worker slot is free');

# one slot for two pipelines: one runs, the other says why it does not
ok($node->poll_query_until('postgres', q{
	SELECT count(*) FILTER (WHERE status = 'running') = 1
	   AND count(*) FILTER (WHERE status = 'failed'
	                          AND last_error LIKE 'could not start a background worker%') = 1
	FROM windowagg.stat_pipelines}),
	'one pipeline runs, the other reports that it cannot get a worker');
ok($node->wait_for_log(qr/could not start a background worker for pipeline "p[12]"/, $log_offset),
	'and the server log says so');

# each gets the slot in turn, and has lost nothing
my $first = $node->safe_psql('postgres',
	"SELECT name FROM windowagg.stat_pipelines WHERE status = 'running'");
my $second = $first eq 'p1' ? 'p2' : 'p1';
is($node->safe_psql('postgres', "SELECT windowagg.wait('$first')"), 't', "$first catches up");
$node->safe_psql('postgres', "SELECT windowagg.pause('$first')");
ok($node->poll_query_until('postgres',
		"SELECT status = 'running' FROM windowagg.stat_pipelines WHERE name = '$second'"),
	"$second starts once $first leaves its worker");
is($node->safe_psql('postgres', "SELECT windowagg.flush('$second')"), 't', "$second flushed");
$node->safe_psql('postgres', "SELECT windowagg.pause('$second')");
$node->safe_psql('postgres', "SELECT windowagg.resume('$first')");
is($node->safe_psql('postgres', "SELECT windowagg.flush('$first')"), 't', "$first flushed");

foreach my $p (['p1', 10], ['p2', 100])
{
	my ($name, $size) = @$p;
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM (
		    (SELECT k, window_start, n FROM $name
		     EXCEPT SELECT k, t - t % $size, count(*) FROM src GROUP BY 1, 2)
		    UNION ALL
		    (SELECT k, t - t % $size, count(*) FROM src GROUP BY 1, 2
		     EXCEPT SELECT k, window_start, n FROM $name)) d}), '0',
		"$name: every window equals GROUP BY over every row");
}

$node->stop;
done_testing();
