# dlrun - one binary that launches distributed deep-learning jobs.
#
#   make                 build build/dlrun
#   make demo            install missing Debian packages, build, run a small job here
#   make check           install missing Debian packages, run every test
#                        (unit, end-to-end with a real Slurm, ASan/UBSan build, fuzzers)
#   make install PREFIX=DIR   dlrun, man pages, libdlrun.so, dlrun.h, dlrun.pc
#   make examples        build contrib/examples (skipped without CUDA/NCCL headers)
#
# Variables: BUILD (output folder), SAN=1 (sanitizer build), FUZZ_SECONDS.

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= cc
CFLAGS    ?= -O2 -g
FUZZ_SECONDS ?= 10
LIBDIR    ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

PKGS      := hwloc yaml-0.1 libssh
HAVE_PMIX := $(shell pkg-config --exists pmix 2>/dev/null && echo 1)
# libpmix is not linked: lib/where/pmixc.c opens it with dlopen when a task
# started by a PMIx server needs it (linked, it cost ~1 ms at every start)
ifeq ($(HAVE_PMIX),1)
FEATURES  += -DHAVE_PMIX=1 $(shell pkg-config --cflags pmix) \
             -DPMIX_LIBDIR='"$(shell pkg-config --variable=libdir pmix)"'
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# hwloc's headers only: lib/place/hwlocdl.c opens libhwloc when a topology is
# first needed (linked, it and its libudev and libm were mapped at every
# start, ~0.17 ms, and a launch with a cached binding plan never calls it)
PKG_LIBS   := $(shell pkg-config --libs $(filter-out hwloc,$(PKGS)) 2>/dev/null)

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(SAN_FLAGS) -MMD -MP
ALL_CPPFLAGS = -D_GNU_SOURCE -DDLRUN_VERSION='"$(VERSION)"' $(FEATURES) \
               -Ilib $(PKG_CFLAGS) $(CPPFLAGS)
# Includes name their folder ("place/plan.h"): only lib/ is on the path.
# No -Icmd: lib/ cannot include cmd/'s headers (cmd/*.c find their own
# beside them); tests/check-layering.sh keeps lib/'s folders in order.
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
# --as-needed: a library dlrun does not call (libssh: lib/run/sshdl.c opens it
# when a relay needs it) is not loaded at every launch.  --exclude-libs:
# nothing of libdlrun-core.a is exported, not even where a linked library
# uses hwloc too (libpmix in t_pmix_host), so that its calls and libhwloc's
# own go to libhwloc, never through lib/place/hwlocdl.c's trampolines.  Only that
# archive: clang's sanitizer runtime is an archive too, and hidden, its
# malloc would no longer replace libc's (a bad-free in every fuzzer)
LDLIBS    := -Wl,--exclude-libs,libdlrun-core.a -Wl,--as-needed $(PKG_LIBS) -ldl -lpthread
# libyaml goes in statically when its archive is there (libyaml-dev has
# it): only `dlrun script` parses YAML, and one more shared library to map
# and search cost ~0.1 ms at every start
YAML_A    := $(shell $(CC) -print-file-name=libyaml.a)
ifneq ($(YAML_A),libyaml.a)
LDLIBS    := $(filter-out -lyaml,$(LDLIBS)) -Wl,-Bstatic -lyaml -Wl,-Bdynamic
endif

# lib/ by concern (README "Layout", docs/architecture.md).
LIB_SRCS  := $(sort $(wildcard lib/*/*.c))
CMD_SRCS  := $(sort $(wildcard cmd/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS  := $(CMD_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/*/t_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))

# libdlrun.so: the client of contrib/include/dlrun.h for ranks, from its own
# position-independent objects; only the dlrun_* symbols are exported
# (hidden by default, dlrun.h's declarations visible, lib/libdlrun.map).
SO_MAJOR  := 0
SO_SRCS   := lib/rendezvous/client.c lib/rendezvous/broker_proto.c lib/rendezvous/token.c \
             lib/util/err.c lib/util/clock.c
SO_OBJS   := $(SO_SRCS:%.c=$(BUILD)/pic/%.o)
SO_FILE   := libdlrun.so.$(VERSION)

.PHONY: all demo check unit layering e2e asan fuzz fuzz-build install install-links deps-build deps-test clean \
        examples FORCE

all: $(BUILD)/dlrun $(BUILD)/libdlrun.so $(BUILD)/dlrun.pc

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# dlrun script finds its templates beside the binary first (BIN/../share/
# dlrun/templates installed, BIN/../templates in a checkout), then here.
$(BUILD)/lib/scripts/profiles.o: ALL_CPPFLAGS += -DDLRUN_TEMPLATE_DIR='"$(PREFIX)/share/dlrun/templates"'

# Made anew: a member of a source that moved or went must not stay behind.
$(BUILD)/libdlrun-core.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/dlrun: $(CMD_OBJS) $(BUILD)/libdlrun-core.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/libdlrun.so: $(SO_OBJS) lib/libdlrun.map
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libdlrun.so.$(SO_MAJOR) \
	    -Wl,--version-script=lib/libdlrun.map -Wl,--no-undefined \
	    -o $(BUILD)/$(SO_FILE) $(SO_OBJS) -ldl
	ln -sf $(SO_FILE) $(BUILD)/libdlrun.so.$(SO_MAJOR)
	ln -sf libdlrun.so.$(SO_MAJOR) $@

# Rewritten only when its text changes (another PREFIX), so the library
# and its users are not rebuilt for nothing.
$(BUILD)/dlrun.pc: contrib/dlrun.pc.in FORCE
	@mkdir -p $(BUILD)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    contrib/dlrun.pc.in >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; echo "wrote $@"; fi

examples: $(BUILD)/libdlrun.so
	@$(MAKE) -C contrib/examples BUILD=$(abspath $(BUILD)) CC=$(CC)

# the PMIx server's test runs real PMIx clients: linked there only
$(BUILD)/tests/mpi/t_pmix_host: LDLIBS += $(if $(HAVE_PMIX),$(shell pkg-config --libs pmix))

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libdlrun-core.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -Itests/unit $(ALL_CFLAGS) -o $@ $< $(BUILD)/libdlrun-core.a $(LDLIBS)

unit: layering $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

# cmd/ holds no poll/signalfd loop, thread, fork or exec, lib/'s folders
# keep their order, cmd/'s files call each other in no circle (read from
# their objects).  Part of unit, so part of check too.
layering: $(CMD_OBJS)
	@tests/check-layering.sh . $(BUILD)/cmd

e2e: $(BUILD)/dlrun $(BUILD)/libdlrun.so
	@DLRUN=$(abspath $(BUILD)/dlrun) E2E_LOG_DIR=$(abspath $(BUILD)/e2e) tests/e2e/run.sh

# The sanitizer build runs the unit tests and the end-to-end tests that need
# no cluster (the Slurm ones already ran against the normal build).
asan: export LSAN_OPTIONS = suppressions=$(abspath tests/lsan.supp)
asan: export UBSAN_OPTIONS = print_stacktrace=1
asan:
	$(MAKE) BUILD=build-asan SAN=1 CC=$(CC) build-asan/dlrun build-asan/libdlrun.so unit
	DLRUN=$(abspath build-asan/dlrun) DLRUN_E2E_NO_CLUSTER=1 E2E_LOG_DIR=$(abspath build-asan/e2e) tests/e2e/run.sh

# The fuzzers share one instrumented build of lib/ (an archive: each links
# only what it calls) instead of compiling all of it again for each.
FUZZ_CFLAGS := -std=c11 -g -O1 -fsanitize=address,undefined
FUZZ_OBJS := $(LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "clang $<"
	@clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(ALL_CPPFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/fuzz/libfuzz-core.a: $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/fuzz/libfuzz-core.a
	@echo "clang $(notdir $@)"
	@clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $(ALL_CPPFLAGS) -MMD -MP -o $@ $< \
	    $(BUILD)/fuzz/libfuzz-core.a $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

deps-build:
	@contrib/install-deps.sh build

deps-test:
	@contrib/install-deps.sh test

demo: deps-build
	$(MAKE) all
	@contrib/examples/demo.sh $(BUILD)/dlrun

check: deps-test
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) e2e
	$(MAKE) asan
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

install: $(BUILD)/dlrun $(BUILD)/libdlrun.so $(BUILD)/dlrun.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7 \
	    $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PREFIX)/share/dlrun/templates/sites \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 0755 $(BUILD)/dlrun $(DESTDIR)$(PREFIX)/bin/dlrun
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 0755 $(BUILD)/$(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_FILE)
	ln -sf $(SO_FILE) $(DESTDIR)$(LIBDIR)/libdlrun.so.$(SO_MAJOR)
	ln -sf libdlrun.so.$(SO_MAJOR) $(DESTDIR)$(LIBDIR)/libdlrun.so
	install -m 0644 contrib/include/dlrun.h $(DESTDIR)$(INCLUDEDIR)/dlrun.h
	install -m 0644 $(BUILD)/dlrun.pc $(DESTDIR)$(LIBDIR)/pkgconfig/dlrun.pc
	install -m 0644 templates/*.sh.in $(DESTDIR)$(PREFIX)/share/dlrun/templates/
	install -m 0644 templates/sites/*.yaml $(DESTDIR)$(PREFIX)/share/dlrun/templates/sites/
	install -m 0644 contrib/completion/dlrun.bash \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/dlrun
	install -m 0644 contrib/completion/_dlrun $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_dlrun

# On request: links named after the tools whose command lines dlrun reads
# (man dlrun, DIALECTS); the name picks the dialect where spellings differ.
DIALECT_LINKS ?= torchrun horovodrun mpirun mpiexec
install-links: install
	for n in $(DIALECT_LINKS); do ln -sf dlrun $(DESTDIR)$(PREFIX)/bin/$$n; done

clean:
	rm -rf build build-asan

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(SO_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) \
         $(FUZZ_BINS:=.d)
