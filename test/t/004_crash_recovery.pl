# Exactly-once across crashes.  For each of three seeds, a stream of
# 1,000,000 events (out of order, late and too-late ones, 13 keys) is fed
# in batches while the pipeline's worker is killed with SIGKILL (the
# postmaster then restarts every process) and, separately, the server is
# stopped in immediate mode, at random points: six times per run.  After
# recovery and a flush, the result table must equal a brute-force
# reference row for row, the dead letters must be exactly the too-late
# events, and a reader polling the result table during the run must never
# see a window's revision go back or a revision change its values.  One
# of the aggregates, sum over numeric, has no kernel: its states go through
# the generic path (PostgreSQL's own support functions) and checkpoints.
#
# Then a session window's pipeline goes through the same crashes, on a
# stream whose disorder stays within bound + lateness, so that no event is
# dropped and the sessions in the end are the islands of the events (a
# gaps-and-islands query); late events bridge fired sessions, whose rows
# merges delete.  A reader checks after every batch that no session's
# revision went back and that no two rows of a key overlap.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $events = $ENV{WA_CRASH_EVENTS} || 1_000_000;
my $batches = 40;
my $batch_size = int(($events + $batches - 1) / $batches);

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$node->append_conf('postgresql.conf', "restart_after_crash = on\nlog_min_messages = warning");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION windowagg');
$node->safe_psql('postgres', slurp_file('sql/t_00_setup.sql'));

# The reader: each poll compares every row of the result table with what
# the previous polls saw (kept in a table, so that it survives the
# crashes), then remembers the rows.
my $reader_polls = 0;
my $reader_violations = 0;

sub poll_results
{
	my ($name) = @_;
	my $bad = $node->safe_psql('postgres', qq{
		SELECT count(*) FROM $name r JOIN seen s
		  ON s.k = r.k AND s.ws = r.window_start AND s.we = r.window_end
		WHERE r.revision < s.rev
		   OR (r.revision = s.rev AND (r.n, r.s, r.mn, r.sn) IS DISTINCT FROM (s.n, s.s, s.mn, s.sn));
		INSERT INTO seen
		SELECT r.k, r.window_start, r.window_end, r.revision, r.n, r.s, r.mn, r.sn
		FROM $name r LEFT JOIN seen s
		  ON s.k = r.k AND s.ws = r.window_start AND s.we = r.window_end
		WHERE s.k IS NULL OR s.rev <> r.revision
		ON CONFLICT (k, ws, we) DO UPDATE
		SET rev = EXCLUDED.rev, n = EXCLUDED.n, s = EXCLUDED.s, mn = EXCLUDED.mn,
		    sn = EXCLUDED.sn;});
	$reader_polls++;
	$reader_violations += $bad;
	diag("poll $reader_polls: $bad windows went back") if $bad;
}

# poll_query_until, but a psql that exits before it has been given its
# query (the postmaster restarting everything refuses connections, and
# IPC::Run then dies writing to it) is one more try, not the test's end.
sub poll_through_restart
{
	my ($sql) = @_;
	my $deadline = time + 180;
	while (time < $deadline)
	{
		my $out = '';
		my $ret = eval { $node->psql('postgres', $sql, stdout => \$out, stderr => \my $err) };
		return 1 if defined $ret && $ret == 0 && $out eq 't';
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

sub crash
{
	my ($how) = @_;
	if ($how eq 'worker')
	{
		my $pid = $node->safe_psql('postgres',
			'SELECT worker_pid FROM windowagg.stat_pipelines');
		if ($pid)
		{
			kill 'KILL', $pid;
			note("SIGKILL to worker $pid");
			# The postmaster restarts everything.  Answering is not enough: a
			# query may come before it has noticed the death; once the killed
			# process is gone from pg_stat_activity, shared memory is new.
			poll_through_restart(
				"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid)")
			  or die 'server did not come back';
		}
	}
	else
	{
		$node->stop('immediate');
		$node->start;
		note('immediate stop and start');
	}
	poll_through_restart("SELECT worker_pid IS NOT NULL FROM windowagg.stat_pipelines")
	  or die 'no worker after the crash';
}

# Feed table $ev into $src in $n_batches batches of $batch_size events,
# calling $poll after each, with $kills worker kills and $stops immediate
# stops at random batches; returns the number of crashes.
sub feed_with_crashes
{
	my ($ev, $src, $n_batches, $batch_size, $kills, $stops, $poll) = @_;
	my %crash_at;
	while (keys %crash_at < $kills + $stops)
	{
		my $b = 1 + int(rand($n_batches - 2));
		$crash_at{$b} = (keys %crash_at < $kills) ? 'worker' : 'server'
		  unless exists $crash_at{$b};
	}
	my $crashes = 0;
	for my $b (0 .. $n_batches - 1)
	{
		# the next rows after what has committed (a crash may have cut a batch)
		my $done = $node->safe_psql('postgres', "SELECT coalesce(max(ev_id), 0) FROM $src");
		my $hi = ($b + 1) * $batch_size;
		$node->safe_psql('postgres', qq{
			INSERT INTO $src (ev_id, k, t, v)
			SELECT id, k, t, v FROM $ev WHERE id > $done AND id <= $hi ORDER BY id});
		$poll->();
		if (my $how = $crash_at{$b})
		{
			# let the worker get into an epoch, then crash at a random moment
			select(undef, undef, undef, rand(0.3));
			crash($how);
			$crashes++;
			$poll->();
		}
	}
	return $crashes;
}

for my $seed (1 .. 3)
{
	srand(1000 + $seed);
	my $name = "p$seed";
	$node->safe_psql('postgres', qq{
		DROP TABLE IF EXISTS seen;
		CREATE TABLE seen (k int, ws bigint, we bigint, rev bigint, n bigint, s bigint, mn int,
		                   sn numeric, PRIMARY KEY (k, ws, we));
		SELECT make_events('ev$seed', $events, 13, 2, 15, 29, 300, 0.$seed);
		CREATE TABLE src$seed (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		                       ev_id bigint NOT NULL, k int NOT NULL, t bigint, v int);
		SELECT windowagg.create_pipeline('$name',
		    'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, sum(v::numeric / 4) AS sn
		     FROM src$seed GROUP BY k',
		    't', ARRAY[windowagg.hopping(300, 100), windowagg.tumbling(150)],
		    bound => 20, lateness => 60);
	});

	# six crashes at random batches: four worker kills, two immediate stops
	my $crashes = feed_with_crashes("ev$seed", "src$seed", $batches, $batch_size, 4, 2,
		sub { poll_results($name) });
	is($node->safe_psql('postgres', "SELECT count(*) FROM src$seed"), $events,
		"seed $seed: every event fed once");
	is($node->safe_psql('postgres', "SELECT windowagg.flush('$name', '10 min')"), 't',
		"seed $seed: flushed after $crashes crashes");
	cmp_ok($crashes, '>=', 5, "seed $seed: at least five crashes");
	poll_results($name);

	# the reference: replay the watermark over the events in arrival order,
	# with window arithmetic written out in SQL (independent of the engine)
	my ($windows, $wrong, $missing, $dead, $dead_wrong) = split /\|/, $node->safe_psql('postgres', qq{
		CREATE TABLE wm$seed AS
		SELECT id, k, t, v,
		       max(t) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) - 20 AS wm
		FROM ev$seed;
		CREATE TABLE acc$seed AS
		SELECT e.id, e.k, e.v, ws, ws + s.size AS we
		FROM wm$seed e,
		     (VALUES (300, 100), (150, 150)) s(size, slide),
		     LATERAL generate_series(0, s.size / s.slide - 1) j,
		     LATERAL (SELECT e.t - ((e.t % s.slide) + s.slide) % s.slide - j * s.slide AS ws) w
		WHERE e.wm IS NULL OR ws + s.size + 60 > e.wm;
		WITH want AS (
		    SELECT k, ws, we, count(*) AS n, sum(v) AS s, min(v) AS mn, sum(v::numeric / 4) AS sn
		    FROM acc$seed GROUP BY 1, 2, 3),
		got AS (SELECT k, window_start, window_end, n, s, mn, sn FROM $name),
		dead_want AS (SELECT id FROM ev$seed EXCEPT SELECT id FROM acc$seed),
		dead_got AS (SELECT (source_row->>'ev_id')::bigint AS id FROM ${name}_dead_letters)
		SELECT (SELECT count(*) FROM want),
		       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x),
		       (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x),
		       (SELECT count(*) FROM dead_want),
		       (SELECT count(*) FROM ((SELECT * FROM dead_got EXCEPT ALL SELECT * FROM dead_want)
		                              UNION ALL
		                              (SELECT * FROM dead_want EXCEPT ALL SELECT * FROM dead_got)) d)});
	cmp_ok($windows, '>', $events / 10, "seed $seed: $windows windows to check");
	is($wrong, 0, "seed $seed: no window differs from the reference");
	is($missing, 0, "seed $seed: no window is missing");
	cmp_ok($dead, '>', 0, "seed $seed: $dead too-late events");
	is($dead_wrong, 0, "seed $seed: dead letters are exactly the too-late events, once each");
	is($node->safe_psql('postgres', "SELECT events_in FROM windowagg.stat_pipelines WHERE name = '$name'"),
		$events, "seed $seed: the counters count every event once");
	$node->safe_psql('postgres', qq{
		SELECT windowagg.drop_pipeline('$name', drop_tables => true);
		DROP TABLE src$seed, ev$seed, wm$seed, acc$seed;});
}
cmp_ok($reader_polls, '>', 3 * $batches, "the reader polled the results $reader_polls times");
is($reader_violations, 0, 'no revision ever went back or changed its values');

# ---------- sessions ----------

my $session_events = int($events / 5);
my $session_batches = 20;
my $session_batch = int(($session_events + $session_batches - 1) / $session_batches);
my ($session_polls, $session_back, $session_overlaps) = (0, 0, 0);

sub poll_sessions
{
	my ($back, $overlaps) = split /\|/, $node->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM ps r JOIN seen_s s
		          ON s.k = r.k AND s.ws = r.window_start AND s.we = r.window_end
		        WHERE r.revision < s.rev),
		       (SELECT count(*) FROM ps a JOIN ps b
		          ON a.k = b.k AND a.window_start < b.window_end AND b.window_start < a.window_end
		         AND (a.window_start, a.window_end) <> (b.window_start, b.window_end));
		INSERT INTO seen_s SELECT k, window_start, window_end, revision FROM ps
		ON CONFLICT (k, ws, we) DO UPDATE SET rev = EXCLUDED.rev;});
	$session_polls++;
	$session_back += $back;
	$session_overlaps += $overlaps;
	diag("session poll $session_polls: $back went back, $overlaps overlap")
	  if $back || $overlaps;
}

srand(2000);
# time moves by 1 per event and by 40 after every 500th; every 7th event is
# up to 50 late: within bound 20 + lateness 40 of the watermark
$node->safe_psql('postgres', qq{
	SELECT setseed(0.5);
	CREATE TABLE seen_s (k int, ws bigint, we bigint, rev bigint, PRIMARY KEY (k, ws, we));
	CREATE TABLE evs AS
	SELECT i AS id, (random() * 12)::int AS k,
	       i + (i / 500) * 40 - CASE WHEN i % 7 = 0 THEN (random() * 50)::int ELSE 0 END AS t,
	       (random() * 100)::int AS v
	FROM generate_series(1, $session_events) i;
	CREATE TABLE srcs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                   ev_id bigint NOT NULL, k int NOT NULL, t bigint NOT NULL, v int);
	SELECT windowagg.create_pipeline('ps',
	    'SELECT k, count(*) AS n, sum(v) AS s, min(v) AS mn, sum(v::numeric / 4) AS sn
	     FROM srcs GROUP BY k',
	    't', ARRAY[windowagg.session(20::bigint)], bound => 20, lateness => 40);
});
my $session_crashes = feed_with_crashes('evs', 'srcs', $session_batches, $session_batch, 3, 2,
	\&poll_sessions);
is($node->safe_psql('postgres', "SELECT windowagg.flush('ps', '10 min')"), 't',
	"sessions: flushed after $session_crashes crashes");
poll_sessions();
my ($sessions, $s_wrong, $s_missing, $s_dead, $s_merged) = split /\|/, $node->safe_psql('postgres', q{
	WITH want AS (
	    SELECT k, min(t) AS ws, max(t) + 20 AS we, count(*) AS n, sum(v) AS s, min(v) AS mn,
	           sum(v::numeric / 4) AS sn
	    FROM (SELECT k, t, v, sum(CASE WHEN t - prev <= 20 THEN 0 ELSE 1 END)
	                            OVER (PARTITION BY k ORDER BY t, id) AS island
	          FROM (SELECT k, t, v, id, lag(t) OVER (PARTITION BY k ORDER BY t, id) AS prev
	                FROM evs) a) b
	    GROUP BY k, island),
	got AS (SELECT k, window_start, window_end, n, s, mn, sn FROM ps)
	SELECT (SELECT count(*) FROM want),
	       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x),
	       (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x),
	       (SELECT count(*) FROM ps_dead_letters),
	       (SELECT count(*) FROM ps WHERE revision > 1)});
cmp_ok($sessions, '>', $session_events / 20, "sessions: $sessions sessions to check");
is($s_wrong, 0, 'sessions: no session differs from the islands');
is($s_missing, 0, 'sessions: no session is missing');
is($s_dead, 0, 'sessions: no event was dropped');
cmp_ok($s_merged, '>', 0, "sessions: $s_merged sessions were refined or merged after they fired");
is($session_back, 0, "sessions: no revision went back in $session_polls polls");
is($session_overlaps, 0, 'sessions: no two rows of a key ever overlapped');

$node->stop;
done_testing();
