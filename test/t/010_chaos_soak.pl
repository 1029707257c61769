# Chaos soak: the ways of disturbing pipelines that the README documents,
# at random and all in one run, while writers keep inserting.
#
# Seven pipelines in two databases, owned by two roles: table sources (one
# with two writers, so that arrival numbers commit out of order), logical
# sources (one with a timestamptz event time), a text key, one whose state
# is filled up to windowagg.max_state_memory, and one (d1) that is dropped
# for good halfway.  Seven writers insert into the sources all the time,
# reconnecting whenever the server goes away.  Meanwhile a chaos loop,
# driven by a seeded random generator, does one of these per round:
#
#   kill       SIGKILL a pipeline's worker (the postmaster restarts all)
#   immediate  stop the server in immediate mode and start it again
#   pause      pause a pipeline; resume resumes a paused one
#   break      break a source with ALTER TABLE (a column the query reads
#              renamed or its type changed, or the table renamed and
#              another made under its name), and see the pipeline stop;
#              unbreak restores the table and resumes, as the README says
#   fill       lower windowagg.max_state_memory and insert thousands of new
#              keys: the pipeline goes memory_full; raise raises the bound
#   poison     insert rows that cannot be events (NULL or infinite event
#              time, beyond the range of windows, a key too large for the
#              result's index) and rows too late for every window
#   recreate   drop a pipeline with its tables and create it again
#   drop       drop d1 with its tables
#
# At the end every pipeline is flushed and must equal a reference computed
# with plain SQL (GROUP BY over the source rows that committed, window
# starts by arithmetic), the dead letters must be exactly the poison and
# too-late rows, the counters must count every row once, no worker may run
# for a dropped pipeline, and the server log may show no assertion failure,
# no PANIC and no process killed by a signal but the SIGKILLs sent here.
#
# Why the reference is well defined although rows commit in an order no
# one records: the writers stamp each row with the clock (plus up to 1 s of
# jitter, or up to 20 s late), and the lateness (60 s) exceeds by far how
# far a row can fall behind the rows consumed before it (its own jitter and
# lateness, the others' jitter, and the time its transaction takes), so
# every writer's row is accepted by every window whatever the order (m1's
# writer stamps the clock itself, and m1's bound is 30 s).  Rows too late
# are stamped 2,000,000 ms (33 min) before the first rows, which every
# pipeline consumed before the writers started (a re-created logical
# pipeline gets fresh first rows before any too-late one), so they are too
# late in any order.  A re-created table pipeline reads its table from the
# start; a re-created logical one reads what commits after its creation,
# whose first arrival number is found by creating it under a lock that
# holds the writers off.
#
# The source tables are the ground truth: what a writer inserted in a
# transaction the server lost never was.  WA_CHAOS_SEED replays a schedule
# (the writers' timing is the machine's); WA_CHAOS_ROUNDS (default 50) or
# WA_CHAOS_SECONDS (rounds until that much time has passed) make it longer.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $seed = $ENV{WA_CHAOS_SEED} // 20261202;
my $rounds = $ENV{WA_CHAOS_ROUNDS} // 50;
my $seconds = $ENV{WA_CHAOS_SECONDS};
srand($seed);
note("seed $seed (WA_CHAOS_SEED=$seed replays this schedule)");

my $node = PostgreSQL::Test::Cluster->new('chaos');
$node->init;
$node->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$node->append_conf('postgresql.conf', q{
restart_after_crash = on
log_min_messages = warning
max_connections = 60
});
$node->start;

# The pipelines.  Event times are milliseconds of the clock (t) or the
# clock itself (ts); windows and bounds are in ticks (ms, or µs for ts).
my %pipes = (
	t1 => {
		db => 'chaos1', owner => 'alice', source => 'table', writers => 2,
		keys => 'k', aggs => 'count(*) AS n, sum(v) AS s, min(v) AS mn',
		time => 't', windows => [ [ 5000, 5000 ], [ 10000, 2500 ] ],
		bound => 1000, lateness => 60000,
	},
	l1 => {
		db => 'chaos1', owner => 'alice', source => 'logical', writers => 1,
		keys => 'k', aggs => 'count(*) AS n, sum(v) AS s, max(v) AS mx',
		time => 'ts', windows => [ [ 5000000, 5000000 ], [ 10000000, 2500000 ] ],
		bound => 1000000, lateness => 60000000,
	},
	t2 => {
		db => 'chaos1', owner => 'bob', source => 'table', writers => 1,
		keys => 'kt', aggs => 'count(*) AS n, max(v) AS mx, sum(v) AS s',
		time => 't', windows => [ [ 4000, 4000 ], [ 12000, 3000 ] ],
		bound => 1000, lateness => 60000,
	},
	b1 => {
		db => 'chaos2', owner => 'bob', source => 'table', writers => 1,
		keys => 'k', aggs => 'count(*) AS n, sum(v) AS s, min(v) AS mn',
		time => 't', windows => [ [ 5000, 5000 ], [ 10000, 2500 ] ],
		bound => 1000, lateness => 60000,
		breaks => [ 'rename_column', 'column_type', 'replace_table' ],
	},
	l2 => {
		db => 'chaos2', owner => 'bob', source => 'logical', writers => 1,
		keys => 'k', aggs => 'count(*) AS n, sum(v) AS s, min(v) AS mn',
		time => 't', windows => [ [ 5000, 5000 ], [ 10000, 2500 ] ],
		bound => 1000, lateness => 60000,
		# A logical source decodes the rows written while it was broken
		# with the table's definition of that moment, which the restored
		# query cannot read (a column's type changed, say), and resume
		# then fails for ever: only breaks that let no row in (the writers'
		# inserts fail, or go to the other table) are resumed here.
		breaks => [ 'rename_column', 'replace_table' ],
	},
	# no writer: the one dropped for good, whose worker must not come back
	d1 => {
		db => 'chaos2', owner => 'alice', source => 'logical', writers => 0,
		keys => 'k', aggs => 'count(*) AS n',
		time => 't', windows => [ [ 5000, 5000 ] ],
		bound => 1000, lateness => 60000,
	},
	# many keys, a short lateness: the one that fills max_state_memory
	m1 => {
		db => 'chaos2', owner => 'alice', source => 'table', writers => 1, memory => 1,
		keys => 'k', aggs => 'count(*) AS n',
		time => 't', windows => [ [ 1000, 1000 ] ],
		bound => 30000, lateness => 0,
	},
);
my @names = sort keys %pipes;
for my $p (@names)
{
	my ($schema) = $pipes{$p}{owner};
	$pipes{$p}{name} = $p;
	$pipes{$p}{table} = "$schema.ev_$p";
	$pipes{$p}{result} = "$schema.$p";
	$pipes{$p}{boundary} = 0;    # a logical pipeline reads ids above it
	$pipes{$p}{state} = 'run';   # run, paused, broken, memory_full, dropped
}

my $high_memory = '32MB';
my $low_memory = '256kB';    # the others hold about 64kB each
my $now_ms = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

# run SQL as the role that owns pipeline $p, in its database
sub as_owner
{
	my ($p, $sql) = @_;
	return $node->safe_psql($pipes{$p}{db}, $sql,
		extra_params => [ '-U', $pipes{$p}{owner} ]);
}

# an event time in ticks as an SQL literal of the event time's type
sub ticks_sql
{
	my ($p, $ticks) = @_;
	return $pipes{$p}{time} eq 'ts'
	  ? "interval '$ticks microseconds'"
	  : $ticks;
}

sub create_pipeline
{
	my ($p) = @_;
	my $d = $pipes{$p};
	my $windows = join ', ', map {
		$_->[0] == $_->[1]
		  ? 'windowagg.tumbling(' . ticks_sql($p, $_->[0]) . ')'
		  : 'windowagg.hopping(' . ticks_sql($p, $_->[0]) . ', ' . ticks_sql($p, $_->[1]) . ')'
	} @{ $d->{windows} };
	return qq{SELECT windowagg.create_pipeline('$p',
	    'SELECT $d->{keys}, $d->{aggs} FROM $d->{table} GROUP BY $d->{keys}', '$d->{time}',
	    ARRAY[$windows], bound => @{[ ticks_sql($p, $d->{bound}) ]},
	    lateness => @{[ ticks_sql($p, $d->{lateness}) ]},
	    result_table => '$d->{result}', source => '$d->{source}') > 0};
}

# a row per key stamped now (the clock), which puts the watermark past
# every too-late row
sub first_row_sql
{
	my ($p) = @_;
	return qq{INSERT INTO $pipes{$p}{table} (k, kt, t, ts, v)
	    SELECT i, 'key-' || i, ms, timestamptz 'epoch' + ms * interval '1 ms', 0
	    FROM generate_series(0, 12) i, (SELECT $now_ms AS ms) c};
}

#
# Set-up: two roles, two databases, the sources, the writers' procedure.
#
$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN REPLICATION;
	CREATE ROLE bob LOGIN REPLICATION;
	CREATE DATABASE chaos1;
	CREATE DATABASE chaos2;
});
for my $db (qw(chaos1 chaos2))
{
	# A writer inserts a few rows per transaction for some seconds, then
	# returns (its shell loop calls it again until the test ends).  Its
	# rows are stamped with the clock, with up to 1 s of jitter or, one in
	# ten, up to 20 s late; kind 'exact' stamps the clock itself.  One
	# transaction in five waits up to 0.3 s before it commits.
	$node->safe_psql($db, q{
		CREATE EXTENSION windowagg;
		CREATE SCHEMA alice AUTHORIZATION alice;
		CREATE SCHEMA bob AUTHORIZATION bob;
		CREATE PROCEDURE public.chaos_write(tab text, kind text, seconds float8)
		LANGUAGE plpgsql AS $$
		DECLARE
		    stop timestamptz := clock_timestamp() + seconds * interval '1 s';
		BEGIN
		    WHILE clock_timestamp() < stop LOOP
		        EXECUTE format($i$
		            INSERT INTO %s (k, kt, t, ts, v)
		            SELECT k, 'key-' || k, ms, timestamptz 'epoch' + ms * interval '1 ms', v
		            FROM (SELECT (random() * 12)::int AS k,
		                         (extract(epoch from clock_timestamp()) * 1000)::bigint
		                         + CASE WHEN %L = 'exact' THEN 0
		                                WHEN random() < 0.1 THEN -(random() * 20000)::int
		                                ELSE (random() * 2000)::int - 1000 END AS ms,
		                         CASE WHEN random() < 0.05 THEN NULL
		                              ELSE (random() * 2000)::int - 1000 END AS v
		                  FROM generate_series(1, 1 + (random() * 9)::int)) r$i$, tab, kind);
		        -- now and then the rows' numbers are held a while, and a
		        -- writer beside commits higher ones first: gaps
		        IF random() < 0.2 THEN
		            PERFORM pg_sleep(random() * 0.3);
		        END IF;
		        COMMIT;
		        PERFORM pg_sleep(random() * 0.05);
		    END LOOP;
		END $$;
	});
}
for my $p (@names)
{
	as_owner($p, qq{
		CREATE TABLE $pipes{$p}{table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		    k int, kt text, t bigint, ts timestamptz, v int)});
	as_owner($p, create_pipeline($p));
}
my $t0 = $node->safe_psql('postgres', "SELECT $now_ms");
# Rows stamped before this are too late for every window of every pipeline
# once the first rows are in: 1,000,000 ms is more than any window plus
# bound plus lateness.
my $too_late_cut = $t0 - 1_000_000;
for my $p (@names)
{
	as_owner($p, first_row_sql($p));
	is(as_owner($p, "SELECT windowagg.wait('$p')"), 't', "$p: the first rows are in");
}

#
# The writers: each a shell loop around psql that calls chaos_write until
# the stop file exists, and tries again whenever the server is away.
#
my $stop_file = "$PostgreSQL::Test::Utils::tmp_check/chaos_stop";
unlink $stop_file;
my @writers;
for my $p (@names)
{
	my $d = $pipes{$p};
	for my $i (1 .. $d->{writers})
	{
		my $connstr = $node->connstr($d->{db}) . " user=$d->{owner} application_name=chaos_writer";
		my $kind = $d->{memory} ? 'exact' : 'jitter';
		my $log = "$PostgreSQL::Test::Utils::log_path/chaos_writer_${p}_$i.log";
		push @writers, IPC::Run::start(
			[
				'bash', '-c',
				'while [ ! -e "$1" ]; do psql -X -q -v ON_ERROR_STOP=1 -d "$2" -c "$3" >/dev/null 2>>"$4" || sleep 0.2; done',
				'writer', $stop_file, $connstr,
				"CALL public.chaos_write('$d->{table}', '$kind', 3)", $log
			]);
	}
}
my $writers_stopped = 0;

# However the test ends, no writer's loop outlives it.
END
{
	local $?;
	if (@writers && !$writers_stopped)
	{
		open my $stop, '>', $stop_file;
		eval { $_->kill_kill } for @writers;
	}
}

#
# The chaos loop.
#
my %done;          # action -> how many times
my %killed;        # pid -> name, of the workers SIGKILLed
my $fills = 0;
my $max_other_state = 0;

# Poll until $sql returns true, for at most $seconds of the clock (not a
# number of attempts: on a slow server each attempt takes long), through
# errors such as those of a server in recovery (whose refusal can come
# before psql has read its input: IPC::Run then dies of the broken pipe).
sub poll_until
{
	my ($db, $sql, $seconds) = @_;
	my $deadline = time + ($seconds // 60);
	while (time < $deadline)
	{
		my $out = '';
		my $ret = eval { $node->psql($db, $sql, stdout => \$out, stderr => \my $err) };
		return 1 if defined $ret && $ret == 0 && $out eq 't';
		sleep 0.1;
	}
	return 0;
}

sub status_of
{
	my ($p) = @_;
	return $node->safe_psql($pipes{$p}{db},
		"SELECT status || '|' || coalesce(last_error, '') FROM windowagg.stat_pipelines WHERE name = '$p'");
}

sub wait_status
{
	my ($p, $status, $error_like) = @_;
	my $ok = poll_until($pipes{$p}{db}, qq{
		SELECT status = '$status' AND coalesce(last_error, '') ~ '$error_like'
		FROM windowagg.stat_pipelines WHERE name = '$p'});
	diag("$p: wanted status $status with an error like /$error_like/, got " . status_of($p))
	  unless $ok;
	return $ok;
}

# After a SIGKILL the postmaster restarts every process; shared memory is
# new once the killed process has gone from pg_stat_activity.
sub wait_recovered
{
	my ($pid) = @_;
	poll_until('postgres',
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid)", 180)
	  or die 'the server did not come back';
}

sub pick
{
	my @from = @_;
	return @from ? $from[ int(rand(@from)) ] : undef;
}

sub in_state
{
	my ($state) = @_;
	return grep { $pipes{$_}{state} eq $state } @names;
}

my %action;
%action = (
	kill => sub {
		my @running;
		for my $db (qw(chaos1 chaos2))
		{
			push @running, map { [ split /\|/ ] } split /\n/, $node->safe_psql($db,
				'SELECT name, worker_pid FROM windowagg.stat_pipelines WHERE worker_pid IS NOT NULL');
		}
		my $victim = pick(@running) or return 0;
		my ($p, $pid) = @$victim;
		return 0 unless kill 'KILL', $pid;
		$killed{$pid} = $p;
		note("SIGKILL to the worker of $p ($pid)");
		wait_recovered($pid);
		return $p;
	},
	immediate => sub {
		$node->stop('immediate');
		$node->start;
		note('immediate stop and start');
		return 1;
	},
	pause => sub {
		my $p = pick(in_state('run')) or return 0;
		as_owner($p, "SELECT windowagg.pause('$p')");
		$pipes{$p}{state} = 'paused';
		note("paused $p");
		return $p;
	},
	resume => sub {
		my $p = pick(in_state('paused')) or return 0;
		as_owner($p, "SELECT windowagg.resume('$p')");
		$pipes{$p}{state} = 'run';
		note("resumed $p");
		return $p;
	},
	break => sub {
		my $p = shift // pick(grep { $pipes{$_}{breaks} } in_state('run')) or return 0;
		my $d = $pipes{$p};
		my $how = pick(@{ $d->{breaks} });
		my ($table) = $d->{table} =~ /\.(.*)/;
		my %ddl = (
			rename_column => [ "ALTER TABLE $d->{table} RENAME COLUMN v TO v_broken",
				'column "v" does not exist' ],
			# whichever check meets the change first: the worker's own
			# (at an epoch's start), or the read's, whose kept plan is
			# analysed again and returns the new type
			column_type => [ "ALTER TABLE $d->{table} ALTER COLUMN v TYPE bigint",
				"the source table of pipeline \"$p\" changed"
				  . "|the query of the pipeline now returns other types than its worker reads" ],
			# whichever check meets the new table first: the query's,
			# parsed again, or the resolution of a statement's names
			replace_table => [ qq{
				BEGIN;
				ALTER TABLE $d->{table} RENAME TO ${table}_away;
				CREATE TABLE $d->{table} (LIKE $d->{table}_away INCLUDING ALL);
				COMMIT;},
				"the query of pipeline \"$p\" no longer reads its source table"
				  . "|a statement of pipeline \"$p\" now names table $d->{table}, which is not one of its tables" ],);
		as_owner($p, $ddl{$how}[0]);
		note("broke the source of $p: $how");
		ok(wait_status($p, 'stopped', $ddl{$how}[1]), "$p stops when its source breaks ($how)");
		$d->{state} = 'broken';
		$d->{broken} = $how;
		return $p;
	},
	unbreak => sub {
		my $p = pick(in_state('broken')) or return 0;
		my $d = $pipes{$p};
		my ($table) = $d->{table} =~ /\.(.*)/;
		my %ddl = (
			rename_column => "ALTER TABLE $d->{table} RENAME COLUMN v_broken TO v",
			column_type => "ALTER TABLE $d->{table} ALTER COLUMN v TYPE int",
			replace_table => qq{
				BEGIN;
				DROP TABLE $d->{table};
				ALTER TABLE $d->{table}_away RENAME TO $table;
				COMMIT;},);
		as_owner($p, $ddl{ $d->{broken} });
		as_owner($p, "SELECT windowagg.resume('$p')");
		ok(wait_status($p, 'running', ''), "$p runs again once its source is restored and it is resumed");
		note("restored the source of $p and resumed it");
		$d->{state} = 'run';
		return $p;
	},
	fill => sub {
		my $p = pick(grep { $pipes{$_}{memory} } in_state('run')) or return 0;
		$node->safe_psql('postgres', qq{
			ALTER SYSTEM SET windowagg.max_state_memory = '$low_memory';
			SELECT pg_reload_conf();});
		$fills++;
		# 3000 new keys: about 1MB of state
		as_owner($p, qq{
			INSERT INTO $pipes{$p}{table} (k, kt, t, ts, v)
			SELECT 1000000 + $fills * 10000 + i, NULL, $now_ms, NULL, 1
			FROM generate_series(1, 3000) i});
		ok(wait_status($p, 'memory_full', 'reached windowagg\.max_state_memory \(256 kB\)'),
			"$p: memory_full at windowagg.max_state_memory");
		# it keeps its committed state and offset, and reads nothing more
		# while its writer goes on
		my $progress = "SELECT events_in FROM windowagg.stat_pipelines WHERE name = '$p'";
		my $before = $node->safe_psql($pipes{$p}{db}, $progress);
		sleep 1;
		is($node->safe_psql($pipes{$p}{db}, $progress), $before, "$p: reads nothing while memory_full");
		$pipes{$p}{state} = 'memory_full';
		note("filled $p");
		return $p;
	},
	raise => sub {
		my $p = pick(in_state('memory_full')) or return 0;
		$node->safe_psql('postgres', qq{
			ALTER SYSTEM SET windowagg.max_state_memory = '$high_memory';
			SELECT pg_reload_conf();});
		ok(wait_status($p, 'running', ''), "$p goes on once the bound is raised");
		$pipes{$p}{state} = 'run';
		note("raised the bound of $p");
		return $p;
	},
	poison => sub {
		my $p = shift // pick(grep { $pipes{$_}{state} !~ /broken|dropped/ } @names) or return 0;
		my $d = $pipes{$p};
		my @rows;
		# too late for every window (the first rows passed them long ago)
		for (1 .. 3)
		{
			my $ms = $too_late_cut - 1_000_000 - int(rand(100_000));
			push @rows, "($ms, timestamptz 'epoch' + $ms * interval '1 ms')";
		}
		push @rows, '(NULL, NULL)';
		if ($d->{time} eq 'ts')
		{
			push @rows, "($now_ms, 'infinity')", "($now_ms, '-infinity')";
		}
		else
		{
			# in no window that bigint can bound
			push @rows, '(9223372036854775807 - ' . int(rand(500)) . ', NULL)';
		}
		my $sql = 'SELECT (random() * 12)::int, NULL, t, ts, 7 FROM (VALUES '
		  . join(', ', @rows) . ') r(t, ts)';
		if ($d->{keys} eq 'kt')
		{
			# a key of 3,200 random hex digits: too large for a btree entry
			$sql .= qq{ UNION ALL
			    SELECT 1, (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 100)),
			           $now_ms, now(), 7};
		}
		as_owner($p, "INSERT INTO $d->{table} (k, kt, t, ts, v) $sql");
		note("poison rows into $p");
		return $p;
	},
	recreate => sub {
		my $p = shift // pick(in_state('run'), in_state('paused')) or return 0;
		my $d = $pipes{$p};
		as_owner($p, "SELECT windowagg.drop_pipeline('$p', drop_tables => true)");
		ok( poll_until($d->{db}, qq{
				SELECT count(*) = 0 FROM pg_stat_activity
				WHERE application_name = 'windowagg pipeline $p'}),
			"$p: no worker runs once it is dropped");
		if ($d->{source} eq 'logical')
		{
			# It reads what commits after it: under a lock that holds the
			# writers off (they take no transaction id before it), every
			# row numbered above the highest committed one is that.
			my ($boundary, $created) = split /\n/, as_owner($p, qq{
				BEGIN;
				LOCK TABLE $d->{table} IN EXCLUSIVE MODE;
				SELECT coalesce(max(id), 0) FROM $d->{table};
				@{[ create_pipeline($p) ]};
				COMMIT;});
			$d->{boundary} = $boundary;
			as_owner($p, first_row_sql($p));
		}
		else
		{
			as_owner($p, create_pipeline($p));
		}
		$d->{state} = 'run';
		note("dropped and re-created $p");
		return $p;
	},
	drop => sub {
		return 0 if $pipes{d1}{state} eq 'dropped';
		as_owner('d1', "SELECT windowagg.drop_pipeline('d1', drop_tables => true)");
		ok( poll_until('chaos2', q{
				SELECT count(*) = 0 FROM pg_stat_activity
				WHERE application_name = 'windowagg pipeline d1'}),
			'd1: no worker runs once it is dropped');
		$pipes{d1}{state} = 'dropped';
		note('dropped d1 for good');
		return 'd1';
	},);

my @weights = (
	kill => 4, immediate => 1, pause => 2, resume => 2, break => 3,
	unbreak => 3, fill => 1, raise => 1, poison => 3, recreate => 2, drop => 1);
my @wheel;
while (my ($what, $weight) = splice(@weights, 0, 2))
{
	push @wheel, ($what) x $weight;
}

# Count what was done, per action and per action and kind of source.
sub act
{
	my ($what, @args) = @_;
	my $p = $action{$what}->(@args) or return;
	$done{$what}++;
	$done{"$what $pipes{$p}{source}"}++ if $pipes{$p};
}

my $started = time;
my $round = 0;
while (defined $seconds ? time - $started < $seconds : $round < $rounds)
{
	$round++;
	sleep(0.2 + rand(1.0));    # the writers write
	act(pick(@wheel));
	# the others stay far below the memory bound that m1 meets
	for my $db (qw(chaos1 chaos2))
	{
		my $other = $node->safe_psql($db,
			"SELECT max(state_bytes) FROM windowagg.stat_pipelines WHERE name <> 'm1'");
		$max_other_state = $other if $other && $other > $max_other_state;
	}
}
# Every action at least once, and a break and a re-creation of each kind
# of source, whatever the schedule drew (from pipelines put back to running).
my @coverage = ('break table', 'break logical', 'recreate table', 'recreate logical',
	qw(unbreak fill raise pause resume kill immediate poison drop));
my %undoes = (unbreak => 'break', raise => 'fill', resume => 'pause');
for my $want (@coverage)
{
	next if $done{$want};
	act('unbreak') while in_state('broken');
	act('raise') while in_state('memory_full');
	act('resume') while in_state('paused');
	next if $done{$want};
	my ($what, $kind) = split / /, $want;
	act($undoes{$what}) if $undoes{$what};
	act($what, $kind ? pick(grep { $pipes{$_}{source} eq $kind
			  && ($what ne 'break' || $pipes{$_}{breaks}) } in_state('run')) : ());
}
note(sprintf('%d rounds in %.0f s: %s', $round, time - $started,
		join(', ', map { "$_ $done{$_}" } sort keys %done)));
cmp_ok($done{$_} // 0, '>=', 1, "chaos: $_") for @coverage;

#
# The end: every pipeline back to running; the writers, which came back
# after every crash, stop; then flush, and compare.
#
$action{unbreak}->() while in_state('broken');
$action{raise}->() while in_state('memory_full');
$action{resume}->() while in_state('paused');
$node->safe_psql('postgres', qq{
	ALTER SYSTEM SET windowagg.max_state_memory = '$high_memory';
	SELECT pg_reload_conf();});
my @live = grep { $pipes{$_}{state} ne 'dropped' } @names;
for my $p (grep { $pipes{$_}{writers} } @live)
{
	my $last = $node->safe_psql($pipes{$p}{db}, "SELECT max(id) FROM $pipes{$p}{table}");
	ok( poll_until($pipes{$p}{db},
			"SELECT max(id) > $last FROM $pipes{$p}{table}"),
		"$p: its writers are still writing");
}
open my $fh, '>', $stop_file or die "cannot create $stop_file: $!";
close $fh;
$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'chaos_writer'");
$_->finish for @writers;
$writers_stopped = 1;
# one more batch of poison and too-late rows for each, so that every
# pipeline, whenever it was last created, has dead letters to account for
$action{poison}->($_) for @live;
cmp_ok($max_other_state, '<', 256 * 1024,
	"the other pipelines stayed below the lowered bound ($max_other_state bytes)");

my $late_panes = 0;
for my $p (@live)
{
	my $d = $pipes{$p};
	is(as_owner($p, "SELECT windowagg.flush('$p', '5 min')"), 't', "$p: flushed");

	# the event time in ticks, of a source row and of a result row
	my ($tick, $is_null, $not_finite, $start, $end) =
	  $d->{time} eq 'ts'
	  ? ('CASE WHEN isfinite(ts) THEN (extract(epoch FROM ts) * 1000000)::bigint END',
		'ts IS NULL', 'NOT isfinite(ts)',
		'(extract(epoch FROM window_start) * 1000000)::bigint',
		'(extract(epoch FROM window_end) * 1000000)::bigint')
	  : ('t', 't IS NULL', 'false', 'window_start', 'window_end');
	my $cut = $d->{time} eq 'ts' ? $too_late_cut * 1000 : $too_late_cut;
	my $huge = $d->{keys} eq 'kt' ? 'length(kt) > 2000' : 'false';
	my $windows = join ', ', map { "($_->[0], $_->[1])" } @{ $d->{windows} };
	my $aggs = $d->{aggs} =~ s/ AS \w+//gr;
	my $agg_names = join ', ', $d->{aggs} =~ / AS (\w+)/g;

	my ($n_windows, $wrong, $missing, $n_dead, $dead_wrong, $want_in, $want_dead, $rows) =
	  split /\|/, $node->safe_psql($d->{db}, qq{
		CREATE TEMP TABLE src AS
		SELECT id, k, kt, v, $tick AS tick,
		       CASE WHEN $is_null THEN 'event time is null'
		            WHEN $not_finite THEN 'event time is not finite'
		            WHEN $tick > 9223372036854775807 - 100000
		              THEN 'every window containing the event reaches beyond the range of its type'
		            WHEN $huge THEN 'the key is too large for the result table''s index'
		            WHEN $tick < $cut THEN 'too late: every window containing the event has closed'
		       END AS dead
		FROM $d->{table} WHERE id > $d->{boundary};
		WITH acc AS (
		    SELECT e.*, x.ws, x.ws + w.size AS we
		    FROM src e, (VALUES $windows) w(size, slide),
		         LATERAL generate_series(0, w.size / w.slide - 1) j,
		         LATERAL (SELECT e.tick - ((e.tick % w.slide) + w.slide) % w.slide - j * w.slide AS ws) x
		    WHERE e.dead IS NULL),
		want AS (SELECT $d->{keys}, ws, we, $aggs FROM acc GROUP BY $d->{keys}, ws, we),
		got AS (SELECT $d->{keys}, $start, $end, $agg_names FROM $d->{result}),
		dead_want AS (SELECT id, dead FROM src WHERE dead IS NOT NULL),
		dead_got AS (SELECT (source_row->>'id')::bigint, regexp_replace(reason, ' \\(.*\$', '')
		             FROM $d->{result}_dead_letters)
		SELECT (SELECT count(*) FROM want),
		       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x),
		       (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x),
		       (SELECT count(*) FROM dead_want),
		       (SELECT count(*) FROM ((SELECT * FROM dead_got EXCEPT ALL SELECT * FROM dead_want)
		                              UNION ALL
		                              (SELECT * FROM dead_want EXCEPT ALL SELECT * FROM dead_got)) d),
		       (SELECT count(*) FROM src WHERE dead IS NULL OR dead LIKE 'too late%'),
		       (SELECT count(*) FROM src WHERE dead IS NOT NULL),
		       (SELECT count(*) FROM src)});
	note("$p: $rows source rows, $n_windows windows, $n_dead dead letters");
	# how many the writers made in the soak's time varies with the machine's
	# load: enough that the comparison is not vacuous
	cmp_ok($n_windows, '>', 25, "$p: $n_windows windows to check");
	is($wrong, 0, "$p: no window differs from the reference");
	is($missing, 0, "$p: no window is missing");
	cmp_ok($n_dead, '>', 0, "$p: $n_dead rows for the dead letters");
	is($dead_wrong, 0, "$p: the dead letters are exactly the poison and too-late rows, once each");
	is( $node->safe_psql($d->{db}, qq{
			SELECT events_in || '|' || dead_letters || '|' || events_partial
			FROM windowagg.stat_pipelines WHERE name = '$p'}),
		"$want_in|$want_dead|0",
		"$p: the counters count every row once");
	my ($late, $odd) = split /\|/, $node->safe_psql($d->{db}, qq{
		SELECT count(*) FILTER (WHERE pane = 'late'),
		       count(*) FILTER (WHERE pane NOT IN ('on_time', 'late') OR revision < 1)
		FROM $d->{result}});
	is($odd, 0, "$p: every pane is on_time or late, with a revision");
	$late_panes += $late;
}
cmp_ok($late_panes, '>', 0, "late rows refined fired windows ($late_panes late panes)");

#
# No worker for a dropped pipeline: the pipeline workers are exactly the
# pipelines' workers, and none is left once they are all dropped.
#
for my $db (qw(chaos1 chaos2))
{
	my $n = grep { $pipes{$_}{db} eq $db } @live;
	is( $node->safe_psql($db, q{
			SELECT count(*) FILTER (WHERE a.application_name = 'windowagg pipeline ' || p.name)
			       || '|' || count(*)
			FROM (SELECT pid, application_name FROM pg_stat_activity
			      WHERE backend_type = 'windowagg pipeline' AND datname = current_database()) a
			FULL JOIN windowagg.stat_pipelines p ON p.worker_pid = a.pid}),
		"$n|$n",
		"$db: every pipeline has one worker, and every worker a pipeline");
}
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'windowagg_%'"),
	scalar(grep { $pipes{$_}{source} eq 'logical' } @live),
	'a replication slot for each logical pipeline, none for the dropped ones');
for my $p (@live)
{
	as_owner($p, "SELECT windowagg.drop_pipeline('$p', drop_tables => true)");
}
ok( poll_until('postgres', q{
		SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'windowagg pipeline'}),
	'no pipeline worker is left once every pipeline is dropped');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_replication_slots'),
	'0', 'nor any replication slot');

#
# The server log: no assertion failure, no PANIC, and no process killed by
# a signal but the workers SIGKILLed here, each once.
#
$node->stop;
my $log = slurp_file($node->logfile);
unlike($log, qr/TRAP:|PANIC:/, 'no assertion failure or PANIC in the server log');
my @signalled = $log =~ /\(PID (\d+)\) was terminated by signal (\d+)/g;
my %seen;
my @strange;
while (my ($pid, $signal) = splice(@signalled, 0, 2))
{
	push @strange, "$pid (signal $signal)" if $signal != 9 || !$killed{$pid} || $seen{$pid}++;
}
is(join(', ', @strange), '', 'no process was killed by a signal but those SIGKILLed here, each once');
# (a worker that was leaving on its own as it was killed may have exited
# first: that one shows as an exit instead)
cmp_ok(scalar(keys %seen), '>=', scalar(keys %killed) / 2,
	scalar(keys %seen) . ' of the ' . scalar(keys %killed) . ' SIGKILLs show in the log');
unlike($log, qr/exited with exit code [2-9]/, 'no process exited as if it had crashed');

done_testing();
