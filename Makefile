# windowagg: windowed stream aggregation for PostgreSQL (PGXS build)
#
# make            build the extension
# make install    install it into the PostgreSQL that pg_config names
# make test       (as root on Debian) install what is missing, build,
#                 install, and run every test
# make demo       (as root on Debian) the same set-up, then a live
#                 pipeline on a throwaway server
# make bench      every benchmark; make bench-engine the engine one alone
# make fuzz       every fuzz target for FUZZ_SECONDS (default 60) each

EXTENSION   = windowagg
EXTVERSION  = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" windowagg.control)
MODULE_big  = windowagg

# src/README maps the layers: commands -> pipeline -> source, query -> engine
ENGINE_SRCS = $(wildcard src/engine/*.c)
PG_SRCS     = src/init.c $(wildcard src/query/*.c src/source/*.c src/source/logical/*.c \
                                    src/pipeline/*.c src/commands/*.c)
OBJS        = $(PG_SRCS:.c=.o) $(ENGINE_SRCS:.c=.o)

# the install script of every version, and the upgrade scripts between them
DATA        = $(wildcard sql/$(EXTENSION)--*.sql)
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS   = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers

# pg_regress gets its own throwaway server, configured for windowagg
REGRESS      = $(sort $(basename $(notdir $(wildcard sql/t_*.sql))))
REGRESS_OPTS = --temp-config=$(srcdir)/test/windowagg.conf \
               --temp-instance=./tmp_check --load-extension=$(EXTENSION) --encoding=UTF8

# isolation specs (concurrent writers), on a throwaway server of their own
ISOLATION      = $(sort $(basename $(notdir $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=$(srcdir)/test/isolation --outputdir=./output_iso \
                 --temp-config=$(srcdir)/test/windowagg.conf \
                 --temp-instance=./tmp_check_iso --load-extension=$(EXTENSION) --encoding=UTF8

# TAP tests (server restarts, several servers), with PostgreSQL's own
# PostgreSQL::Test::Cluster
TAP_TESTS   = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config

# the engine checks its own invariants (src/engine/wa_assert.h) where
# PostgreSQL checks its own: in a server built with --enable-cassert
ifneq (,$(findstring --enable-cassert,$(shell $(PG_CONFIG) --configure)))
PG_CPPFLAGS += -DWA_ENGINE_ASSERTIONS
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.PHONY: test demo fuzz bench bench-engine bench-sql bench-moving bench-pipeline bench-checkpoint bench-multiwindow bench-logical bench-session check-engine

check-engine:
	$(MAKE) -C test/engine check

test:
	bash test/run-all.sh

fuzz:
	$(MAKE) -C test/fuzz PG_CONFIG=$(PG_CONFIG) run

demo:
	bash test/demo.sh

bench: bench-engine bench-sql bench-moving bench-pipeline bench-checkpoint bench-multiwindow bench-logical bench-session

bench-engine:
	$(MAKE) -C bench/engine run

bench-multiwindow:
	bash bench/multiwindow/run.sh

bench-sql:
	bash bench/sql/run.sh

bench-moving:
	bash bench/moving/run.sh

bench-pipeline:
	bash bench/pipeline/run.sh
	bash bench/pipeline/generic.sh

bench-logical:
	bash bench/logical/run.sh

bench-session:
	bash bench/session/run.sh
	bash bench/session/pipeline.sh

bench-checkpoint:
	bash bench/checkpoint/run.sh

# rebuild everything when a header changes (PGXS tracks no dependencies)
$(OBJS): $(wildcard src/*/*.h src/*/*/*.h)
