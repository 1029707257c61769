# pg_dump and pg_restore: a pipeline's definition, checkpoint and result
# tables move to a fresh server, and the restored pipeline goes on from
# its offset without reprocessing anything; so does a pipeline with a
# session window beside a tumbling one, whose sessions (their own table)
# end as the batch function's over the same rows.  Run on PostgreSQL 18, the old
# server is a PostgreSQL 15 with windowagg installed (Debian's, or the
# install WA_PG15_INSTALL names) when there is one: the way a database
# with pipelines moves to 18, dumped with 18's pg_dump as PostgreSQL
# advises.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = slurp_file('test/windowagg.conf');
my $setup = slurp_file('sql/t_00_setup.sql');

my $new = PostgreSQL::Test::Cluster->new('new');
my $old_install = $ENV{WA_PG15_INSTALL} // '/usr/lib/postgresql/15';
my @old_install = ();
if ($new->pg_version >= 18 && -x "$old_install/bin/postgres"
	&& -e "$old_install/lib/windowagg.so")
{
	@old_install = (install_path => $old_install);
}
my $old = PostgreSQL::Test::Cluster->new('old', @old_install);
note('from PostgreSQL ' . $old->pg_version . ' to ' . $new->pg_version);
$old->init;
$old->append_conf('postgresql.conf', $conf);
$old->start;
$old->safe_psql('postgres', 'CREATE DATABASE app');
$old->safe_psql('app', 'CREATE EXTENSION windowagg');
$old->safe_psql('app', $setup);
$old->safe_psql('app', q{
	SELECT make_events('ev', 6000, 9, 2, 15, 23, 300, 0.31);
	CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                  k int NOT NULL, t bigint, v int);
	CREATE FUNCTION feed(lo int, hi int) RETURNS void LANGUAGE sql AS $$
	    INSERT INTO src (k, t, v) SELECT k, t, v FROM ev
	    WHERE id BETWEEN lo AND hi ORDER BY id $$;
	SELECT windowagg.create_pipeline('p', 'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn
	                                       FROM src GROUP BY k',
	                                 't', ARRAY[windowagg.hopping(60, 20), windowagg.tumbling(30)],
	                                 bound => 20, lateness => 60);
	SELECT windowagg.create_pipeline('q', 'SELECT k, count(*) AS n, sum(v) AS s FROM src GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(30), windowagg.session(12::bigint)],
	                                 bound => 20, lateness => 60);
	SELECT feed(1, 3000);
	SELECT windowagg.wait('p'), windowagg.wait('q');
});
my $stats = 'SELECT name, events_in, panes_on_time, panes_late, dead_letters '
  . 'FROM windowagg.stat_pipelines ORDER BY name';
my $results = q{SELECT (SELECT count(*) || ' ' || sum(n) || ' ' || sum(revision) FROM p),
	(SELECT count(*) || ' ' || sum(n) || ' ' || sum(revision) FROM q_sessions)};
my $before = $old->safe_psql('app', $stats);
my $results_before = $old->safe_psql('app', $results);
my $dump = $old->basedir . '/app.dump';
$new->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $old->connstr('app') ],
	'pg_dump ' . $new->pg_version . ' of a PostgreSQL ' . $old->pg_version . ' database');
$old->stop;

$new->init;
$new->append_conf('postgresql.conf', $conf);
$new->start;
$new->safe_psql('postgres', 'CREATE DATABASE app');
if ($old->pg_version == $new->pg_version)
{
	$new->command_ok([ 'pg_restore', '-d', $new->connstr('app'), $dump ], 'pg_restore');
}
else
{
	# Debian's 15 marks every column with an attribute option, pg_attver,
	# that no other build knows: the script is restored without those
	# lines (the README says so)
	my $script = $new->basedir . '/app.sql';
	$new->command_ok([ 'pg_restore', '-f', $script, $dump ], 'pg_restore to a script');
	my $sql = slurp_file($script);
	$sql =~ s/^ALTER TABLE ONLY \S+ ALTER COLUMN \S+ SET \(pg_attver=\d+\);\n//mg;
	open(my $fh, '>', $script) or die "could not write $script: $!";
	print $fh $sql;
	close($fh);
	$new->command_ok([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-q', '-d', $new->connstr('app'),
			'-f', $script ], 'the script restored into ' . $new->pg_version);
}

ok($new->poll_query_until('app',
		"SELECT count(*) = 2 FROM windowagg.stat_pipelines WHERE status = 'running'"),
	'the restored pipelines run');
is($new->safe_psql('app', $stats), $before,
	'their counters are where they were: nothing was reprocessed');
is($new->safe_psql('app', $results), $results_before,
	'their result and sessions tables are as they were');
is($new->safe_psql('app', q{SELECT sessions_table FROM windowagg.pipelines WHERE name = 'q'}),
	'q_sessions', 'the restored catalog names the sessions table');

# the rest of the stream, on the new server
$new->safe_psql('app', 'SELECT feed(3001, 6000)');
is($new->safe_psql('app', "SELECT windowagg.flush('p', '3 min')"), 't', 'flushed');
is($new->safe_psql('app', "SELECT windowagg.flush('q', '3 min')"), 't', 'flushed q');
my ($q_sessions, $q_differ) = split /\|/, $new->safe_psql('app', q{
	WITH batch AS (
	    SELECT DISTINCT ON (k, ws, we) k, ws, we, n, s, pane
	    FROM ROWS FROM (windowagg.aggregate('SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k',
	        't', ARRAY[windowagg.session(12::bigint)], 20::bigint, 60::bigint, 'id')
	      AS (k int, ws bigint, we bigint, n bigint, s bigint, pane text, rev bigint))
	      WITH ORDINALITY o
	    ORDER BY k, ws, we, o.ordinality DESC),
	want AS (SELECT k, ws, we, n, s FROM batch WHERE pane <> 'retract'),
	got AS (SELECT k, window_start, window_end, n, s FROM q_sessions)
	SELECT (SELECT count(*) FROM want),
	       (SELECT count(*) FROM ((SELECT * FROM got EXCEPT SELECT * FROM want)
	                              UNION ALL (SELECT * FROM want EXCEPT SELECT * FROM got)) d)});
cmp_ok($q_sessions, '>', 100, "$q_sessions sessions to check");
is($q_differ, 0, 'the sessions across the two servers are those of one batch call');
my ($windows, $wrong, $missing, $dead_wrong) = split /\|/, $new->safe_psql('app', q{
	CREATE TABLE acc AS SELECT * FROM ref_accept('ev', '{60,30}', '{20,30}', '{0,0}', 20, 60);
	WITH want AS (
	    SELECT e.k, a.ws::bigint AS ws, a.we::bigint AS we, count(*) AS n,
	           sum(e.v) AS s, min(e.v) AS mn
	    FROM acc a JOIN ev e USING (id) WHERE a.ws IS NOT NULL GROUP BY 1, 2, 3),
	got AS (SELECT k, window_start, window_end, n, s, mn FROM p)
	SELECT (SELECT count(*) FROM want),
	       (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want) x),
	       (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got) x),
	       (SELECT count(*) FROM (
	           (SELECT arrival FROM p_dead_letters EXCEPT SELECT id FROM acc WHERE ws IS NULL)
	           UNION ALL
	           (SELECT id FROM acc WHERE ws IS NULL EXCEPT SELECT arrival FROM p_dead_letters)) d)});
cmp_ok($windows, '>', 500, "$windows windows to check");
is($wrong, 0, 'no window differs from the reference');
is($missing, 0, 'no window is missing');
is($dead_wrong, 0, 'the dead letters are exactly the too-late rows');
is($new->safe_psql('app', 'SELECT events_in FROM windowagg.stat_pipelines ORDER BY name'),
	"6000\n6000", 'every row counted once across the two servers');
$new->stop;
done_testing();
