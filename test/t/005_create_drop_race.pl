# A pipeline dropped, with its tables, while its worker is still starting:
# the worker may find its result table gone while it sets up, or fail
# half set up.  It must leave with an error, never crash the server, and
# the pipeline's name and tables must be free again at once.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('race');
$node->init;
$node->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION windowagg');

my $cycles = 150;
my $created = 0;
for my $i (1 .. $cycles)
{
	# a short random pause, so that the drop meets the worker at every
	# stage of its start
	my $pause = sprintf('%.3f', rand(0.04));
	my $out = $node->safe_psql('postgres', qq{
		CREATE TABLE src (id bigint GENERATED ALWAYS AS IDENTITY, k int, t bigint, v int);
		CREATE INDEX ON src (id);
		SELECT windowagg.create_pipeline('racer',
		    'SELECT k, min(v) AS lo, count(*) AS n FROM src GROUP BY k', 't',
		    ARRAY[windowagg.tumbling(10), windowagg.tumbling(20)]) > 0;
		SELECT pg_sleep($pause);
		SELECT windowagg.drop_pipeline('racer', drop_tables => true);
		DROP TABLE src;
	});
	$created++ if $out =~ /^t$/m;
}
is($created, $cycles, "$cycles pipelines created and dropped, with their tables");

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|server process .* exited/,
	'no worker crashed on the way');
is($node->safe_psql('postgres', 'SELECT count(*) FROM windowagg.pipelines'), '0',
	'no pipeline is left');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname LIKE 'racer%'"),
	'0', 'nor any of their tables');

$node->stop;
done_testing();
