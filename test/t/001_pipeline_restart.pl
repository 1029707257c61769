# Pipelines across server restarts: the launcher starts a worker per enabled
# pipeline of every database, promptly after create_pipeline and again
# after a restart, and a stream interrupted by a clean restart ends with the
# same windows as the reference.  Also: without the preload, the pipeline
# functions say how to enable them.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $conf = slurp_file('test/windowagg.conf');
my $setup = slurp_file('sql/t_00_setup.sql');

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', $conf);
$node->start;

for my $db ('postgres', 'second')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db") if $db ne 'postgres';
	$node->safe_psql($db, 'CREATE EXTENSION windowagg');
	$node->safe_psql($db, $setup);
	$node->safe_psql($db, q{
		SELECT make_events('ev', 8000, 11, 2, 15, 31, 300, 0.77);
		CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		                  k int NOT NULL, t bigint, v int);
		CREATE FUNCTION feed(lo int, hi int) RETURNS void LANGUAGE sql AS $$
		    INSERT INTO src (k, t, v) SELECT k, t, v FROM ev
		    WHERE id BETWEEN lo AND hi ORDER BY id $$;
	});
}

# a worker starts within a second of the commit
sub worker_started
{
	my ($db, $name) = @_;
	return $node->safe_psql($db,
		"SELECT worker_pid IS NOT NULL FROM windowagg.stat_pipelines WHERE name = '$name'"
	) eq 't';
}

for my $db ('postgres', 'second')
{
	my $start = time();
	$node->safe_psql($db, q{
		SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) AS n, sum(v) AS s, max(v) AS mx
		                                       FROM src GROUP BY k',
		                                 't', ARRAY[windowagg.hopping(60, 20), windowagg.tumbling(45)],
		                                 bound => 20, lateness => 60)});
	my $started;
	for (1 .. 100)
	{
		$started = worker_started($db, 'p');
		last if $started;
		select(undef, undef, undef, 0.01);
	}
	my $elapsed = time() - $start;
	ok($started, "$db: worker started");
	note(sprintf("%s: worker running %.3f s after create_pipeline", $db, $elapsed));
	cmp_ok($elapsed, '<', 1.0, "$db: worker started within a second");
}

# half the stream, then a clean restart
for my $db ('postgres', 'second')
{
	$node->safe_psql($db, 'SELECT feed(1, 3000); SELECT windowagg.wait(\'p\'); SELECT feed(3001, 4000);');
}
$node->restart;

for my $db ('postgres', 'second')
{
	ok($node->poll_query_until($db,
			"SELECT status = 'running' FROM windowagg.stat_pipelines WHERE name = 'p'"),
		"$db: worker back after the restart");
	$node->safe_psql($db, 'SELECT feed(4001, 8000)');
	is($node->safe_psql($db, "SELECT windowagg.flush('p', '3 min')"), 't', "$db: flushed");

	# the final windows equal the row-by-row reference ...
	$node->safe_psql($db, q{
		CREATE TABLE acc AS SELECT * FROM ref_accept('ev', '{60,45}', '{20,45}', '{0,0}', 20, 60)});
	my $diff = $node->safe_psql($db, q{
		WITH want AS (
		    SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we, count(*) AS n,
		           sum(e.v) AS s, max(e.v) AS mx
		    FROM acc a JOIN ev e USING (id)
		    WHERE a.ws IS NOT NULL GROUP BY 1, 2, 3),
		got AS (SELECT k, window_start, window_end, n, s, mx FROM p)
		SELECT (SELECT count(*) FROM want),
		       (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want) x),
		       (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got) x)});
	my ($windows, $wrong, $missing) = split /\|/, $diff;
	cmp_ok($windows, '>', 1000, "$db: $windows windows to check");
	is($wrong, 0, "$db: no window differs from the reference");
	is($missing, 0, "$db: no window is missing");

	# ... and the dead letters are exactly the rows no window accepted
	is($node->safe_psql($db, q{
		SELECT count(*) FROM (
		    (SELECT arrival FROM p_dead_letters EXCEPT SELECT id FROM acc WHERE ws IS NULL)
		    UNION ALL
		    (SELECT id FROM acc WHERE ws IS NULL EXCEPT SELECT arrival FROM p_dead_letters)) x}),
		'0', "$db: dead letters match");
	is($node->safe_psql($db, 'SELECT events_in FROM windowagg.stat_pipelines'), '8000',
		"$db: counters survived the restart");
}

# a paused pipeline stays paused across a restart
$node->safe_psql('second', "SELECT windowagg.pause('p')");
$node->restart;
ok($node->poll_query_until('postgres',
		"SELECT status = 'flushed' AND worker_pid IS NOT NULL FROM windowagg.stat_pipelines WHERE name = 'p'"),
	'the enabled (and flushed) pipeline is back');
is($node->safe_psql('second', "SELECT status, worker_pid IS NULL FROM windowagg.stat_pipelines"),
	'paused|t', 'the paused pipeline has no worker');

# A pipeline that stopped because a source column changed type stays
# stopped across a restart: its new worker must not take the new type for
# the query's own (the result table still has the old one's results).
$node->safe_psql('postgres', q{
	CREATE TABLE src_ty (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                     k int NOT NULL, t bigint, v int);
	SELECT windowagg.create_pipeline('ty', 'SELECT k, sum(v) AS s, min(v) AS mn FROM src_ty GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(10)]);
	INSERT INTO src_ty (k, t, v) VALUES (1, 1, 1);
	SELECT windowagg.wait('ty');
	ALTER TABLE src_ty ALTER COLUMN v TYPE bigint;
	INSERT INTO src_ty (k, t, v) VALUES (1, 2, 2);
});
ok($node->poll_query_until('postgres',
		"SELECT status = 'stopped' AND last_error LIKE '%source table of pipeline \"ty\" changed%' FROM windowagg.stat_pipelines WHERE name = 'ty'"),
	'a pipeline whose source column changed type stops');
$node->restart;
ok($node->poll_query_until('postgres',
		"SELECT status = 'stopped' AND last_error LIKE '%source table of pipeline \"ty\" changed%' FROM windowagg.stat_pipelines WHERE name = 'ty'"),
	'and is stopped again after a restart, its worker refusing the new type');
$node->safe_psql('postgres', q{
	ALTER TABLE src_ty ALTER COLUMN v TYPE int;
	SELECT windowagg.resume('ty');
	INSERT INTO src_ty (k, t, v) VALUES (1, 30, 3);
	SELECT windowagg.wait('ty');
});
is($node->safe_psql('postgres', "SELECT status FROM windowagg.stat_pipelines WHERE name = 'ty'"),
	'running', 'restored and resumed, it runs');
is($node->safe_psql('postgres', "SELECT s, mn FROM ty WHERE window_start = 0"),
	'3|1', 'and its results count every row');
$node->safe_psql('postgres', "SELECT windowagg.drop_pipeline('ty')");
$node->stop;

# without the preload, the pipeline functions explain what to do
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION windowagg');
$plain->safe_psql('postgres',
	'CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, t bigint)');
my ($ret, $stdout, $stderr) = $plain->psql('postgres', q{
	SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) FROM src GROUP BY k', 't',
	                                 ARRAY[windowagg.tumbling(10)])});
isnt($ret, 0, 'create_pipeline fails without the preload');
like($stderr, qr/pipelines need the windowagg library in shared_preload_libraries/, 'the error says why');
like($stderr, qr/HINT:  Add windowagg to shared_preload_libraries/, 'and how to fix it');
# the batch functions work regardless
is($plain->safe_psql('postgres', q{
	INSERT INTO src (k, t) VALUES (1, 1), (1, 2);
	SELECT n FROM windowagg.aggregate('SELECT k, count(*) AS n FROM src GROUP BY k', 't',
	                                  ARRAY[windowagg.tumbling(10)])
	  AS (k int, ws bigint, we bigint, n bigint, pane text, rev bigint)}), '2',
	'batch functions work without the preload');
$plain->stop;

done_testing();
