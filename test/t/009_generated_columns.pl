# Generated columns and logical sources.  A change in the WAL carries what
# was written: a stored generated column, not a virtual one (PostgreSQL
# 18's default), so a pipeline of this server refuses to read a virtual
# one through its slot.  A publisher sends a generated column only when it
# is stored and published (publish_generated_columns, 18), so a pipeline
# over another server stops, saying so, when a column it reads is not in
# the stream.  Every result is compared with a GROUP BY over the same
# rows; each refusal has its control that is accepted.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $source = PostgreSQL::Test::Cluster->new('source');
$source->init(allows_streaming => 'logical');
$source->start;

my $sink = PostgreSQL::Test::Cluster->new('sink');
$sink->init;
$sink->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$sink->start;
$sink->safe_psql('postgres', 'CREATE EXTENSION windowagg');
my $v18 = $sink->pg_version >= 18;

# 500 rows, 5 keys, event times 0..499 in order
my $rows = 'SELECT i, i % 5, i, i % 7 FROM generate_series(0, 499) i';

# want_equal NAME, PIPELINE, COLUMN: the pipeline's final windows equal a
# GROUP BY of COLUMN over the rows of its source table
sub want_equal
{
	my ($name, $pipeline, $table, $column) = @_;
	is( $sink->safe_psql('postgres', qq{
		WITH got AS (SELECT k, window_start, s FROM $pipeline),
		     want AS (SELECT k, (t / 100) * 100 AS window_start, sum($column) AS s
		              FROM $table GROUP BY 1, 2)
		SELECT (SELECT count(*) FROM want),
		       (SELECT count(*) FROM (TABLE got EXCEPT TABLE want) d),
		       (SELECT count(*) FROM (TABLE want EXCEPT TABLE got) d)}),
		'25|0|0', $name);
}

# ---------- this server, through its own slot ----------

$sink->safe_psql('postgres', q{
	CREATE TABLE g (id bigint, k int NOT NULL, t bigint NOT NULL, v int,
	                w int GENERATED ALWAYS AS (v * 2) STORED)});
# the control: a stored generated column is in every change
$sink->safe_psql('postgres', q{
	SELECT windowagg.create_pipeline('stored_w',
	    'SELECT k, sum(w) AS s FROM g GROUP BY k', 't',
	    ARRAY[windowagg.tumbling(100)], source => 'logical')});
$sink->safe_psql('postgres', "INSERT INTO g (id, k, t, v) $rows");
$sink->safe_psql('postgres', "SELECT windowagg.flush('stored_w')");
want_equal('a stored generated column is read through the slot', 'stored_w', 'g', 'w');

if ($v18)
{
	$sink->safe_psql('postgres',
		'CREATE TABLE gv (id bigint, k int NOT NULL, t bigint NOT NULL, v int,
		                  w int GENERATED ALWAYS AS (v * 3) VIRTUAL,
		                  tv bigint GENERATED ALWAYS AS (t) VIRTUAL,
		                  kv int GENERATED ALWAYS AS (k) VIRTUAL)');
	my %uses = (
		'an aggregate input' => ["SELECT k, sum(w) AS s FROM gv GROUP BY k", 't'],
		'the event time'     => ["SELECT k, sum(v) AS s FROM gv GROUP BY k", 'tv'],
		'a key'              => ["SELECT kv, sum(v) AS s FROM gv GROUP BY kv", 't'],
		'a filter'           => ["SELECT k, sum(v) AS s FROM gv WHERE w > 3 GROUP BY k", 't'],
		'a whole row'        => ["SELECT k, count(*) AS s FROM gv WHERE gv IS NOT NULL GROUP BY k", 't']);
	for my $use (sort keys %uses)
	{
		my ($query, $time) = @{ $uses{$use} };
		my ($ret, $out, $err) = $sink->psql('postgres', qq{
			SELECT windowagg.create_pipeline('virtual_w', \$q\$$query\$q\$, '$time',
			    ARRAY[windowagg.tumbling(100)], source => 'logical')});
		like($err, qr/column "(w|tv|kv)" of table "gv" is a virtual generated column/,
			"a virtual generated column as $use is refused");
	}
	# the controls: the same table, its virtual columns unread, through the
	# slot; and read through a table source, which computes them
	$sink->safe_psql('postgres', q{
		ALTER TABLE gv ADD COLUMN arrival bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
		SELECT windowagg.create_pipeline('virtual_unread',
		    'SELECT k, sum(v) AS s FROM gv GROUP BY k', 't',
		    ARRAY[windowagg.tumbling(100)], source => 'logical');
		SELECT windowagg.create_pipeline('virtual_table',
		    'SELECT k, sum(w) AS s FROM gv GROUP BY k', 't',
		    ARRAY[windowagg.tumbling(100)]);});
	$sink->safe_psql('postgres', "INSERT INTO gv (id, k, t, v) $rows");
	$sink->safe_psql('postgres',
		"SELECT windowagg.flush('virtual_unread') AND windowagg.flush('virtual_table')");
	want_equal('a table with virtual columns it does not read: through the slot',
		'virtual_unread', 'gv', 'v');
	want_equal('a virtual generated column through a table source', 'virtual_table', 'gv', 'w');

	# a column replaced by a virtual one under a running pipeline: the
	# worker checks the query as it now reads, and stops
	$sink->safe_psql('postgres', q{
		CREATE TABLE gs (id bigint, k int NOT NULL, t bigint NOT NULL, v int);
		SELECT windowagg.create_pipeline('swapped', 'SELECT k, sum(v) AS s FROM gs GROUP BY k', 't',
		    ARRAY[windowagg.tumbling(100)], source => 'logical');});
	$sink->safe_psql('postgres', "INSERT INTO gs (id, k, t, v) $rows");
	$sink->safe_psql('postgres', "SELECT windowagg.wait('swapped')");
	$sink->safe_psql('postgres', q{
		BEGIN;
		ALTER TABLE gs RENAME COLUMN v TO v_old;
		ALTER TABLE gs ADD COLUMN v int GENERATED ALWAYS AS (k * 2) VIRTUAL;
		COMMIT;
		INSERT INTO gs (id, k, t, v_old) VALUES (500, 1, 500, 1);});
	ok( $sink->poll_query_until('postgres', q{
			SELECT last_error LIKE 'column "v" of table "gs" is a virtual generated column%'
			FROM windowagg.stat_pipelines WHERE name = 'swapped'}),
		'a column replaced by a virtual one under a running pipeline stops it');
}

# ---------- another server, over a replication connection ----------

$source->safe_psql('postgres', q{
	CREATE TABLE r (id bigint PRIMARY KEY, k int NOT NULL, t bigint NOT NULL, v int,
	                w int GENERATED ALWAYS AS (v * 2) STORED);
	CREATE PUBLICATION r_pub FOR TABLE r});
# 18 can publish stored generated columns (decoding reads a publication as
# it was when the change was written: it must say so before the rows)
$source->safe_psql('postgres',
	'CREATE PUBLICATION r_pub_generated FOR TABLE r WITH (publish_generated_columns = stored)')
  if $v18;
my $connstr = $source->connstr('postgres');
my @remote = (['remote_v', 'v', 'r_pub'], ['remote_w', 'w', 'r_pub']);
push @remote, ['remote_w_published', 'w', 'r_pub_generated'] if $v18;
for my $p (@remote)
{
	my ($name, $column, $publication) = @$p;
	$sink->safe_psql('postgres', qq{
		SELECT windowagg.create_pipeline('$name', 'SELECT k, sum($column) AS s FROM r GROUP BY k', 't',
		    ARRAY[windowagg.tumbling(100)], source => 'logical',
		    connection => \$\$${connstr}\$\$, publication => '$publication')});
	# its worker makes its slot when it first starts: the stream from then on
	$sink->safe_psql('postgres', "SELECT windowagg.wait('$name')");
}
$source->safe_psql('postgres', "INSERT INTO r (id, k, t, v) $rows");
$sink->safe_psql('postgres', q{
	CREATE TABLE r_copy (id bigint, k int, t bigint, v int,
	                     w int GENERATED ALWAYS AS (v * 2) STORED)});
$sink->safe_psql('postgres', "INSERT INTO r_copy (id, k, t, v) $rows");
# the control: a column that is sent
$sink->safe_psql('postgres', "SELECT windowagg.flush('remote_v')");
want_equal('a remote pipeline over columns the publisher sends', 'remote_v', 'r_copy', 'v');
# the stored generated column is not sent: the pipeline says so
ok( $sink->poll_query_until('postgres', q{
		SELECT last_error LIKE 'column "w" of the replicated table public.r is not in its change stream%'
		FROM windowagg.stat_pipelines WHERE name = 'remote_w'}),
	'a remote pipeline reading a column the publisher does not send reports it');
is($sink->safe_psql('postgres', 'SELECT count(*) FROM remote_w'), '0',
	'and writes no window of NULLs');
if ($v18)
{
	$sink->safe_psql('postgres', "SELECT windowagg.flush('remote_w_published')");
	want_equal('a published stored generated column is read', 'remote_w_published', 'r_copy', 'w');
}

$sink->safe_psql('postgres', 'DROP EXTENSION windowagg CASCADE');
$sink->stop;
$source->stop;
done_testing();
