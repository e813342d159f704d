# Top-level build.  `make` builds build/stored, build/relayd, build/relayctl.
# `make run` starts the relay with etc/relay.conf; `make test` runs every test.
# SAN=address,undefined or SAN=thread builds into build-<san>/ with sanitizers.
# WERROR=1 turns warnings into errors (CI sets it).

CC ?= cc
SAN ?=
WERROR ?=
CONFIG ?= etc/relay.conf

ifeq ($(SAN),)
BUILD ?= build
SANFLAGS :=
else
BUILD ?= build-$(subst $(comma),-,$(SAN))
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer
endif
comma := ,

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifneq ($(WERROR),)
WARN += -Werror
endif
CFLAGS ?= -O2 -g
# override: a CFLAGS given on the command line (make sanitize passes one)
# must not drop the language, warning and sanitizer flags.
override CFLAGS += -std=c11 -D_GNU_SOURCE -pthread $(WARN) $(SANFLAGS) -MMD -MP
override LDFLAGS += -pthread $(SANFLAGS)
LIBS := -lwebsockets -lev -lcjson -lsecp256k1 -lsqlite3 -lnng -lcrypto -lz -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

# The commit the binaries report (--version, relay_build_info), from git at
# build time; "unknown" in a tree without .git, such as a release tarball.
# $(BUILD)/commit changes only with the commit, so only version.o rebuilds.
RELAY_COMMIT := $(shell [ -e .git ] && git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
COMMIT_STAMP := $(BUILD)/commit
$(shell mkdir -p $(BUILD) && [ "$$(cat $(COMMIT_STAMP) 2>/dev/null)" = "$(RELAY_COMMIT)" ] || \
	echo "$(RELAY_COMMIT)" > $(COMMIT_STAMP))

COMMON_SRC := $(wildcard common/*.c) $(wildcard proto/*.c)
STORED_SRC := $(filter-out stored/main.c,$(wildcard stored/*.c))
# wsguard_hooks.c replaces recv() and close() for the relayd executable
# alone (relayd/wsguard.h), not for the unit tests that link RELAYD_OBJ.
RELAYD_SRC := $(filter-out relayd/main.c relayd/wsguard_hooks.c,$(wildcard relayd/*.c))
CTL_SRC := $(wildcard stored/relayctl/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
COMMON_OBJ := $(call obj,$(COMMON_SRC))
STORED_OBJ := $(call obj,$(STORED_SRC))
RELAYD_OBJ := $(call obj,$(RELAYD_SRC))
CTL_OBJ := $(call obj,$(CTL_SRC))

UNIT_SRC := $(wildcard tests/common/test_*.c tests/proto/test_*.c tests/stored/test_*.c tests/relayd/test_*.c)
UNIT_SRC += $(wildcard tests/stored/relayctl/test_*.c)
UNIT_BIN := $(patsubst %.c,$(BUILD)/%,$(UNIT_SRC))

.PHONY: all deps run test unit integration clean sanitize node_modules
# Keep test objects: they are intermediates of a pattern chain.
.SECONDARY:

all: $(BUILD)/stored $(BUILD)/relayd $(BUILD)/relayctl

# The Debian packages, installed once per checkout (make clean forgets it).
# Every object waits for them, so `make all` or `make -j2 run` on a fresh
# machine installs them before the first compile, and only one apt-get runs.
DEPS_STAMP := build/.deps-installed

deps: $(DEPS_STAMP)

$(DEPS_STAMP): etc/install-deps.sh
	@sh etc/install-deps.sh
	@mkdir -p $(dir $@) && touch $@

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(DEFS) -c $< -o $@

# DEFS, not CFLAGS: a CFLAGS given on the command line would drop it.
$(call obj,common/version.c): DEFS = -DRELAY_COMMIT='"$(RELAY_COMMIT)"'
$(call obj,common/version.c): $(COMMIT_STAMP)

$(BUILD)/libcommon.a: $(COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/stored: $(call obj,stored/main.c) $(STORED_OBJ) $(BUILD)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/relayd: $(call obj,relayd/main.c relayd/wsguard_hooks.c) $(RELAYD_OBJ) $(BUILD)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/relayctl: $(CTL_OBJ) $(BUILD)/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Unit tests: tests/<dir>/test_<file>.c checks <dir>/<file>.c and links the
# objects of its own process (without main.c) plus libcommon.
$(BUILD)/tests/common/%: $(call obj,tests/common/%.c) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)
$(BUILD)/tests/proto/%: $(call obj,tests/proto/%.c) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)
$(BUILD)/tests/stored/%: $(call obj,tests/stored/%.c) $(STORED_OBJ) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)
# relayctl's: the one object the test checks (relayctl.c holds main).
$(BUILD)/tests/stored/relayctl/test_%: $(call obj,tests/stored/relayctl/test_%.c) $(BUILD)/obj/stored/relayctl/%.o $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)
$(BUILD)/tests/relayd/%: $(call obj,tests/relayd/%.c) $(RELAYD_OBJ) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)

run: deps all
	@sh etc/run.sh $(BUILD) $(CONFIG)

unit: deps $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

# etc/relay.conf and the README's config table come from common/config.c's
# table: this rewrites both (tests/common/test_config.c fails while they differ).
CONFIG_TABLE_BEGIN := <!-- config-table: generated by make config-docs from common/config.c; do not edit -->
CONFIG_TABLE_END := <!-- end config-table -->
.PHONY: config-docs
config-docs: $(BUILD)/stored
	$(BUILD)/stored --print-config > etc/relay.conf
	$(BUILD)/stored --print-config=markdown > $(BUILD)/config-table.md
	awk -v table=$(BUILD)/config-table.md -v begin='$(CONFIG_TABLE_BEGIN)' -v end='$(CONFIG_TABLE_END)' \
		'$$0 == end { skip = 0; n++ } !skip { print } $$0 == begin { \
		while ((getline line < table) > 0) print line; skip = 1; n++ } \
		END { if (n != 2 || skip) { print "README.md: no config-table markers" > "/dev/stderr"; exit 1 } }' \
		README.md > $(BUILD)/README.md.new
	mv $(BUILD)/README.md.new README.md

node_modules: tests/integration/node_modules/.installed

tests/integration/node_modules/.installed: tests/integration/package.json tests/integration/package-lock.json | $(DEPS_STAMP)
	cd tests/integration && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

integration: deps all node_modules
	cd tests/integration && RELAY_BUILD=$(abspath $(BUILD)) node --test --test-concurrency=1 *.test.mjs

test: unit integration

# The test client under Debian 12's own Node 18 (tests/node18/run.sh
# fetches it into $(BUILD)/node18), whatever node the machine has:
# the helpers' own tests, then events signed, sent and read back.
# NODE18_FILES=*.test.mjs runs the whole integration suite under it.
NODE18_FILES ?= helpers.test.mjs nip01-events.test.mjs
.PHONY: node18-check
node18-check: deps all node_modules
	@sh tests/node18/run.sh $(BUILD) sh -c 'cd tests/integration && node --version && \
		RELAY_BUILD=$(abspath $(BUILD)) node --test --test-concurrency=1 $(NODE18_FILES)'

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer
# (tests/lsan.supp: the leaks that are nng's, not ours).  Its builds run
# several times slower, so the integration tests' waits are bounded 4x longer.
sanitize:
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp RELAY_WAIT_SCALE=4 $(MAKE) SAN=address,undefined \
		CFLAGS="-O1 -g" test

# ThreadSanitizer on the unit suites of the code threads share: stored's
# queues (the query pool's turn queue too) and jobs, the search index's
# watermark, relayd's mailbox, outgoing queues and NIP-42 table, the
# subscription index's owner hand-off, the listener check, relayd's backlog
# of requests to stored and its table of followed websocket streams, and
# stored's backup thread, and relayctl import's threads judging lines
# (libwebsockets, nng and SQLite themselves are not instrumented, so the
# daemons as a whole are not run under TSan).
TSAN_UNITS := tests/stored/test_queue tests/stored/test_turnqueue tests/stored/test_jobs tests/stored/test_checkpoint \
	tests/stored/test_search_index tests/stored/test_visible tests/stored/test_backup tests/stored/test_workask \
	tests/relayd/test_mailbox tests/relayd/test_auth tests/relayd/test_wsguard \
	tests/relayd/test_outq tests/relayd/test_conn tests/relayd/test_backlog tests/common/test_listencheck \
	tests/stored/relayctl/test_ctl_judge
.PHONY: tsan
tsan: deps
	$(MAKE) SAN=thread CFLAGS="-O1 -g" $(addprefix build-thread/,$(TSAN_UNITS))
	@sh tests/run-unit.sh $(addprefix build-thread/,$(TSAN_UNITS))

# The cycle check (tests/lint/cycles.mjs): no include or call cycle between
# the production .c files.  It reads the objects with nm, so it builds them;
# its self-test on tests/lint/fixture/ runs first and must find that
# fixture's planted cycles.
CYCLE_OBJ := $(COMMON_OBJ) $(STORED_OBJ) $(RELAYD_OBJ) $(CTL_OBJ) \
	$(call obj,stored/main.c relayd/main.c relayd/wsguard_hooks.c)
CYCLE_FIXTURE_OBJ := $(call obj,$(wildcard tests/lint/fixture/*.c))
.PHONY: cycles
cycles: $(CYCLE_OBJ) $(CYCLE_FIXTURE_OBJ)
	@node tests/lint/cycles.mjs --self-test $(BUILD)
	@node tests/lint/cycles.mjs $(BUILD)

# The README's sentence statistics (tests/lint/prose.mjs says what it counts).
.PHONY: prose
prose:
	@node tests/lint/prose.mjs --check README.md

clean:
	rm -rf build build-*

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- bench/: the load generator (issue 6).  `make bench` builds
# build/bench/loadgen; bench/run runs the standard scenarios with it.
# Its objects always build with -Werror.
# build/bench/storebench drives stored's write path alone (no sockets).
# build/bench/idxbench compares an owner thread with a striped subscription index.
# build/bench/nngping measures one round trip over nng alone (ipc, tcp or tls).
# build/bench/sendcost measures one send() to many loopback TCP connections.
# build/bench/turnstorm pushes a storm of query jobs through stored's turn queue.
BENCH_SRC := $(filter-out bench/storebench.c bench/idxbench.c bench/idxwork.c bench/nngping.c \
	bench/sendcost.c bench/turnstorm.c,\
	$(wildcard bench/*.c))
BENCH_OBJ := $(call obj,$(BENCH_SRC))
$(BENCH_OBJ) $(call obj,bench/storebench.c bench/idxbench.c bench/idxwork.c bench/nngping.c \
	bench/sendcost.c bench/turnstorm.c): \
	CFLAGS += -Werror

.PHONY: bench
bench: $(BUILD)/bench/loadgen $(BUILD)/bench/storebench $(BUILD)/bench/idxbench \
	$(BUILD)/bench/nngping $(BUILD)/bench/sendcost $(BUILD)/bench/turnstorm

$(BUILD)/bench/loadgen: $(BENCH_OBJ) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bench/storebench: $(call obj,bench/storebench.c bench/evfile.c) $(STORED_OBJ) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bench/idxbench: $(call obj,bench/idxbench.c bench/idxwork.c) $(STORED_OBJ) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bench/turnstorm: $(call obj,bench/turnstorm.c) $(STORED_OBJ) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bench/nngping: $(call obj,bench/nngping.c) $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/bench/sendcost: $(call obj,bench/sendcost.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -pthread -o $@ $^

# ---- install and the systemd test (issue 3).  `make install` puts the
# binaries in $(DESTDIR)$(BINDIR), the units (generated from etc/systemd/,
# with ExecStart= under $(BINDIR)) in $(DESTDIR)$(UNITDIR) and, unless one
# exists, $(DESTDIR)$(CONFDIR)/relay.conf; a real install by root also
# creates the user crelay and reloads systemd.  `make uninstall` keeps the
# config, the database and the user.  `make test-systemd` boots systemd in a
# container and runs the relay under it (tests/systemd/run.sh).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= /etc/systemd/system
CONFDIR ?= /etc/crelay
INSTALL_ENV = BUILD=$(BUILD) DESTDIR=$(DESTDIR) BINDIR=$(BINDIR) UNITDIR=$(UNITDIR) CONFDIR=$(CONFDIR) \
	WORKER_HOST=$(WORKER_HOST)

.PHONY: install uninstall test-systemd
install: all
	@$(INSTALL_ENV) sh etc/systemd/install.sh install

uninstall:
	@$(INSTALL_ENV) sh etc/systemd/install.sh uninstall

test-systemd: deps all node_modules
	@bash tests/systemd/run.sh $(BUILD)

# ---- fuzzing (libFuzzer, clang) ----
# `make fuzz` builds each tests/fuzz/fuzz_*.c with clang's libFuzzer plus
# AddressSanitizer and UndefinedBehaviorSanitizer and runs it for
# FUZZ_SECONDS on a scratch copy of its seed corpus (tests/fuzz/corpus/NAME),
# so new inputs do not pile up in the repository.  A crash fails the target
# and leaves the input in build-fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE $(WARN)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRC))
# The parsers under fuzz call no nng; the listener check and the socket
# listener (rundir.c) are all nng; config.c checks link URLs through
# peerlink.c, whose dialing needs -lnng at link time.  SQLite is there for common/search.c
# (live NIP-50 matching uses FTS5's tokenizer).
FUZZ_LIB_SRC := $(filter-out common/listencheck.c common/rundir.c,$(wildcard common/*.c)) $(wildcard proto/*.c)

# relayd's permessage-deflate input path (fuzz_inflate) needs only zlib.
FUZZ_LIB_SRC += relayd/pmdz.c relayd/pmdoffer.c

build-fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) | $(DEPS_STAMP)
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LIB_SRC) -lcjson -lsecp256k1 -lsqlite3 -lcrypto -lz -lnng

.PHONY: fuzz
fuzz: deps $(FUZZ_BIN)
	@for bin in $(FUZZ_BIN); do \
		name=$${bin#build-fuzz/fuzz_}; \
		work=build-fuzz/corpus-$$name; rm -rf $$work; mkdir -p $$work; \
		echo "== fuzz $$name for $(FUZZ_SECONDS) s"; \
		(cd build-fuzz && ../$$bin -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-rss_limit_mb=2048 corpus-$$name ../tests/fuzz/corpus/$$name > $$name.log 2>&1); \
		rc=$$?; grep -E "stat::number_of_executed_units|SUMMARY" build-fuzz/$$name.log; \
		if [ $$rc -ne 0 ]; then tail -40 build-fuzz/$$name.log; exit 1; fi; \
	done

# ---- the status page in headless Chromium (installs chromium if missing) ----
.PHONY: test-browser
test-browser: deps all node_modules
	@sh tests/browser/run.sh $(BUILD)
