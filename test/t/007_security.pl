# Security that needs server restarts, settings and other servers, which
# the regression suite (sql/t_13_security.sql) cannot arrange:
#
#  1. A database owner chooses the settings every session of the database
#     starts with, the launcher's discovery and the pipeline workers
#     included (they connect as the bootstrap superuser): a search_path
#     that puts her planted operators first must not make them run with
#     anyone's rights but hers.
#  2. Per-role and per-database limits: a role cannot take every slot;
#     pipelines over a lowered limit keep running until they restart, then
#     wait and say why, and start once the limit is raised.
#  3. One role's pipelines cannot fill the shared pool that another role's
#     pipeline needs.
#  4. Cancel and terminate are honoured while a worker holds its state
#     lock (a long flush) and while a reader does (live windows), and a
#     worker stopped halfway never shows its half-changed state.
#  5. A remote source's server is not trusted: what it says about its
#     table's columns cannot inject SQL into the stand-in's definition.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('security');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', slurp_file('test/windowagg.conf'));
$node->append_conf('postgresql.conf', q{
windowagg.max_pipelines_per_role = 3
windowagg.shared_memory = 16MB
windowagg.max_state_memory = 2MB
});
$node->start;

# Run SQL as a role that logs in as itself (no superuser session around).
sub as_role
{
	my ($role, $db, $sql) = @_;
	return $node->safe_psql($db, $sql, extra_params => [ '-U', $role ]);
}

# The trap of sql/t_13_security: it records who runs it and tries to make
# its owner a superuser.
my $trap = q{
	CREATE FUNCTION mallory.trap(what pg_catalog.text) RETURNS pg_catalog.bool
	LANGUAGE plpgsql SET search_path = pg_catalog AS $$
	BEGIN
	    INSERT INTO public.sec_log (who, what) VALUES (current_user, what);
	    BEGIN
	        ALTER ROLE mallory SUPERUSER;
	        INSERT INTO public.sec_log (who, what) VALUES (current_user, what || ': superuser');
	    EXCEPTION WHEN insufficient_privilege THEN NULL;
	    END;
	    RETURN true;
	END $$;
	DO $do$
	DECLARE t text; op text; n int := 0;
	BEGIN
	    FOREACH t IN ARRAY ARRAY['text', 'name', 'int4', 'int8', 'oid'] LOOP
	        FOREACH op IN ARRAY ARRAY['=', '<>', '<', '>'] LOOP
	            n := n + 1;
	            EXECUTE format($f$
	                CREATE FUNCTION mallory.op_%s(a pg_catalog.%s, b pg_catalog.%s)
	                RETURNS pg_catalog.bool LANGUAGE plpgsql SET search_path = pg_catalog AS $b$
	                BEGIN PERFORM mallory.trap(%L); RETURN a OPERATOR(pg_catalog.%s) b; END $b$ $f$,
	                n, t, t, 'operator ' || op || ' on ' || t, op);
	            EXECUTE format('CREATE OPERATOR mallory.%s (LEFTARG = pg_catalog.%s, RIGHTARG = pg_catalog.%s, FUNCTION = mallory.op_%s)',
	                           op, t, t, n);
	        END LOOP;
	    END LOOP;
	END $do$;
};

#
# 1. A database owner's search_path, for discovery and for the worker.
#
$node->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN;
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE DATABASE mdb OWNER mallory;
});
$node->safe_psql('mdb', q{
	CREATE EXTENSION windowagg;
	CREATE TABLE public.sec_log (who name NOT NULL, what text NOT NULL);
	GRANT INSERT ON public.sec_log TO PUBLIC;
});
as_role('mallory', 'mdb', "CREATE SCHEMA mallory; $trap");
as_role('mallory', 'mdb', q{
	CREATE TABLE mallory.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                          k int NOT NULL, t bigint NOT NULL);
	SELECT windowagg.create_pipeline('mp', 'SELECT k, count(*) AS n FROM mallory.src GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(10)],
	                                 result_table => 'mallory.mp');
	ALTER DATABASE mdb SET search_path = mallory, pg_catalog;
});
# discovery finds the pipeline again with the database's settings
$node->restart;
as_role('mallory', 'mdb',
	'INSERT INTO mallory.src (k, t) SELECT i % 3, i FROM generate_series(1, 100) i');
is(as_role('mallory', 'mdb', "SELECT windowagg.flush('mp')"), 't',
	'the pipeline runs after the restart');
is(as_role('mallory', 'mdb', 'SELECT sum(n) FROM mallory.mp'), '100', 'and counts every row');
is( $node->safe_psql('mdb', q{
		SET search_path = pg_catalog;
		SELECT count(*) FROM public.sec_log WHERE who OPERATOR(pg_catalog.<>) 'mallory'}),
	'0',
	'nothing she planted ran with other rights in discovery or the worker');
is($node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'"),
	'f', 'and she is no superuser');
as_role('mallory', 'mdb', "SELECT windowagg.drop_pipeline('mp', drop_tables => true)");

#
# 2. Limits: a role owns at most windowagg.max_pipelines_per_role.
#
$node->safe_psql('postgres', q{
	CREATE EXTENSION windowagg;
	CREATE SCHEMA alice AUTHORIZATION alice;
	CREATE SCHEMA bob AUTHORIZATION bob;
});
as_role('alice', 'postgres', q{
	CREATE TABLE alice.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                        k int NOT NULL, t bigint NOT NULL);
	SELECT windowagg.create_pipeline('a' || i, 'SELECT k, count(*) AS n FROM alice.src GROUP BY k',
	                                 't', ARRAY[windowagg.hopping(40, 10)], bound => 1000000,
	                                 result_table => 'alice.a' || i)
	FROM generate_series(1, 3) i;
});
my ($ret, $out, $err) = $node->psql('postgres', q{
	SELECT windowagg.create_pipeline('a4', 'SELECT k, count(*) AS n FROM alice.src GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'alice.a4')},
	extra_params => [ '-U', 'alice' ]);
like($err, qr/role "alice" already owns 3 pipelines/, 'a fourth one is refused');
ok( $node->poll_query_until('postgres', q{
		SELECT count(*) = 3 FROM windowagg.stat_pipelines WHERE status = 'running'}),
	'the three run');

my $pids = $node->safe_psql('postgres',
	"SELECT string_agg(worker_pid::text, ',' ORDER BY name) FROM windowagg.stat_pipelines");
$node->safe_psql('postgres', 'ALTER SYSTEM SET windowagg.max_pipelines_per_role = 2');
$node->reload;
as_role('alice', 'postgres', "SELECT windowagg.wait('a' || i) FROM generate_series(1, 3) i");
is( $node->safe_psql('postgres',
		"SELECT string_agg(worker_pid::text, ',' ORDER BY name) FROM windowagg.stat_pipelines"),
	$pids,
	'a lowered limit leaves running pipelines running');

$node->restart;
ok( $node->poll_query_until('postgres', q{
		SELECT count(*) FILTER (WHERE status = 'running') = 2
		   AND count(*) FILTER (WHERE status = 'waiting') = 1
		FROM windowagg.stat_pipelines}),
	'after a restart, two run and one waits');
like(
	$node->safe_psql('postgres',
		"SELECT last_error FROM windowagg.stat_pipelines WHERE status = 'waiting'"),
	qr/role "alice" already runs 2 pipelines \(windowagg.max_pipelines_per_role\)/,
	'and says why');

# the database's limit
$node->safe_psql('postgres', 'ALTER SYSTEM SET windowagg.max_pipelines_per_database = 3');
$node->reload;
as_role('bob', 'postgres', q{
	CREATE TABLE bob.src (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	                      k int NOT NULL, t bigint NOT NULL)});
($ret, $out, $err) = $node->psql('postgres', q{
	SELECT windowagg.create_pipeline('b1', 'SELECT k, count(*) AS n FROM bob.src GROUP BY k',
	                                 't', ARRAY[windowagg.tumbling(10)], result_table => 'bob.b1')},
	extra_params => [ '-U', 'bob' ]);
like($err, qr/database "postgres" already has 3 pipelines/,
	'a database holds at most windowagg.max_pipelines_per_database');

$node->safe_psql('postgres', q{
	ALTER SYSTEM SET windowagg.max_pipelines_per_role = 3;
	ALTER SYSTEM SET windowagg.max_pipelines_per_database = 8});
$node->reload;
ok( $node->poll_query_until('postgres', q{
		SELECT count(*) = 3 FROM windowagg.stat_pipelines WHERE status = 'running'}),
	'raised again, the waiting pipeline starts');

#
# 3. The pool: alice's pipelines stop at windowagg.max_state_memory (2MB
# each, 6MB at most for her), and bob's pipeline in the same 16MB pool
# does not notice.
#
as_role('alice', 'postgres',
	'INSERT INTO alice.src (k, t) SELECT i, i % 1000 FROM generate_series(1, 200000) i');
ok( $node->poll_query_until('postgres', q{
		SELECT count(*) = 3 FROM windowagg.stat_pipelines WHERE status = 'memory_full'}),
	"alice's pipelines reach their memory limit");
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM windowagg.stat_pipelines
		WHERE state_bytes > pg_size_bytes('2MB')}),
	'0',
	'none holds more of the pool than the limit');
as_role('bob', 'postgres', q{
	SELECT windowagg.create_pipeline('b1', 'SELECT k, count(*) AS n FROM bob.src GROUP BY k',
	                                 't', ARRAY[windowagg.hopping(2000, 1)], bound => 100000,
	                                 result_table => 'bob.b1');
	INSERT INTO bob.src (k, t) SELECT i % 1000, i % 50 FROM generate_series(1, 50000) i;
});
is(as_role('bob', 'postgres', "SELECT windowagg.wait('b1')"), 't', "bob's pipeline keeps up");
is($node->safe_psql('postgres', "SELECT status FROM windowagg.stat_pipelines WHERE name = 'b1'"),
	'running', 'and runs');
ok(!$node->log_contains('shared memory for pipelines is exhausted'), 'the pool never ran out');

#
# 4. Interrupts under the state lock.  Every key has one event time with
# 50 events, so each of the 1000 keys has 2000 windows of 50 events.
#
($ret, $out, $err) = $node->psql('postgres',
	"SET statement_timeout = '20ms'; SELECT count(*) FROM bob.b1_live",
	extra_params => [ '-U', 'bob' ]);
like($err,
	qr/canceling statement due to statement timeout\nCONTEXT:  reading the live windows of pipeline "b1"/,
	'a reader of two million live windows is cancelled while it reads them');

# Start a flush of two million windows, wait until a reader of live
# windows waits for the worker's lock (the worker is then in the engine's
# flush), signal the worker with $signal ('cancel' or 'terminate'), and
# check that the log shows the signal taken there; then the restarted
# worker flushes, and every window is there once.
sub interrupt_flush
{
	my ($pipeline, $signal, $message) = @_;
	my $log_offset = -s $node->logfile;

	as_role('bob', 'postgres', "SELECT windowagg.flush('$pipeline', '0 s')");
	my $reader = $node->background_psql('postgres', on_error_stop => 0);
	$reader->query_until(qr/reading/,
		"\\echo reading\nSELECT count(*) FROM bob.${pipeline}_live;\n");
	ok( $node->poll_query_until('postgres', q{
			SELECT count(*) > 0 FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND query LIKE '%_live;%'
			  AND wait_event_type = 'Extension'}),
		"$pipeline: a reader waits for the flushing worker");
	$node->safe_psql('postgres', qq{
		SELECT pg_${signal}_backend(worker_pid) FROM windowagg.stat_pipelines
		WHERE name = '$pipeline'});
	ok( $node->wait_for_log(
			qr/$message\n.*CONTEXT:  flushing the windows of pipeline "$pipeline"/,
			$log_offset),
		"$pipeline: the worker is interrupted halfway through the flush ($signal)");
	$reader->quit;
	is(as_role('bob', 'postgres', "SELECT windowagg.flush('$pipeline', '5 min')"),
		't', "$pipeline: restarted, it flushes");
	is( as_role('bob', 'postgres',
			"SELECT count(*), count(*) FILTER (WHERE n <> 50) FROM bob.$pipeline"),
		'2000000|0',
		"$pipeline: every window once, complete");
}

interrupt_flush('b1', 'cancel', 'canceling statement due to user request');

# a second pipeline over the same rows, terminated instead
as_role('bob', 'postgres', q{
	SELECT windowagg.create_pipeline('b2', 'SELECT k, count(*) AS n FROM bob.src GROUP BY k',
	                                 't', ARRAY[windowagg.hopping(2000, 1)], bound => 100000,
	                                 result_table => 'bob.b2')});
is(as_role('bob', 'postgres', "SELECT windowagg.wait('b2')"), 't', 'a second pipeline caught up');
interrupt_flush('b2', 'terminate',
	'terminating background worker "windowagg pipeline" due to administrator command');

#
# 5. A remote source's server is not trusted: one whose format_type() is
# rewritten to inject a statement into the stand-in's CREATE TABLE.
#
my $remote = PostgreSQL::Test::Cluster->new('remote');
$remote->init(allows_streaming => 'logical');
$remote->start;
$remote->safe_psql('postgres', q{
	CREATE TABLE src (k int, t bigint, note varchar(20));
	CREATE PUBLICATION pub FOR TABLE src;
	CREATE OR REPLACE FUNCTION pg_catalog.format_type(oid, integer) RETURNS text
	LANGUAGE sql STABLE AS
	$$ SELECT 'bigint); CREATE TABLE public.injected (x int); CREATE TABLE public.ignored (y int' $$;
});
my $connstr = $remote->connstr('postgres') =~ s/'/''/gr;
$node->safe_psql('postgres', qq{
	SELECT windowagg.create_pipeline('r', 'SELECT k, count(*) AS n FROM src GROUP BY k', 't',
	                                 ARRAY[windowagg.tumbling(10)], source => 'logical',
	                                 connection => '$connstr', publication => 'pub')});
is($node->safe_psql('postgres', "SELECT to_regclass('public.injected') IS NULL"),
	't', 'nothing the source server sent ran here');
is( $node->safe_psql('postgres', q{
		SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
		FROM pg_attribute WHERE attrelid = 'r_source'::regclass AND attnum > 0}),
	'k integer, t bigint, note character varying(20)',
	'and the stand-in has the source table\'s columns');
$node->safe_psql('postgres', "SELECT windowagg.drop_pipeline('r', drop_tables => true)");

ok(!$node->log_contains('TRAP:|PANIC|terminated by signal'), 'no crash in the server log');
$node->stop;
$remote->stop;
done_testing();
