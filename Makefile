# dlrun - one binary that launches distributed deep-learning jobs.
#
#   make                 build build/dlrun
#   make demo            install missing Debian packages, build, run a small job here
#   make check           install missing Debian packages, run every test
#                        (unit, end-to-end with a real Slurm, ASan/UBSan build, fuzzers)
#   make install PREFIX=DIR
#
# Variables: BUILD (output folder), SAN=1 (sanitizer build), FUZZ_SECONDS.

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= cc
CFLAGS    ?= -O2 -g
FUZZ_SECONDS ?= 10

PKGS      := hwloc yaml-0.1 libssh
HAVE_PMIX := $(shell pkg-config --exists pmix 2>/dev/null && echo 1)
ifeq ($(HAVE_PMIX),1)
PKGS      += pmix
FEATURES  += -DHAVE_PMIX=1
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(SAN_FLAGS) -MMD -MP
ALL_CPPFLAGS = -D_GNU_SOURCE -DDLRUN_VERSION='"$(VERSION)"' $(FEATURES) \
               -Ilib -Ilaunchers -Icmd $(PKG_CFLAGS) $(CPPFLAGS)
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
# --as-needed: a library dlrun does not call yet (libssh, libyaml) is not
# loaded at every launch
LDLIBS    := -Wl,--as-needed $(PKG_LIBS) -ldl -lpthread

LIB_SRCS  := $(sort $(wildcard lib/*.c launchers/*.c))
CMD_SRCS  := $(sort $(wildcard cmd/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS  := $(CMD_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/t_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))

.PHONY: all demo check unit e2e asan fuzz fuzz-build install deps-build deps-test clean

all: $(BUILD)/dlrun

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# dlrun script finds its templates beside the binary first (BIN/../share/
# dlrun/templates installed, BIN/../templates in a checkout), then here.
$(BUILD)/cmd/script.o: ALL_CPPFLAGS += -DDLRUN_TEMPLATE_DIR='"$(PREFIX)/share/dlrun/templates"'

$(BUILD)/libdlrun-core.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/dlrun: $(CMD_OBJS) $(BUILD)/libdlrun-core.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libdlrun-core.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -Itests/unit $(ALL_CFLAGS) -o $@ $< $(BUILD)/libdlrun-core.a $(LDLIBS)

unit: $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

e2e: $(BUILD)/dlrun
	@DLRUN=$(abspath $(BUILD)/dlrun) E2E_LOG_DIR=$(abspath $(BUILD)/e2e) tests/e2e/run.sh

# The sanitizer build runs the unit tests and the end-to-end tests that need
# no cluster (the Slurm ones already ran against the normal build).
asan: export LSAN_OPTIONS = suppressions=$(abspath tests/lsan.supp)
asan: export UBSAN_OPTIONS = print_stacktrace=1
asan:
	$(MAKE) BUILD=build-asan SAN=1 CC=$(CC) build-asan/dlrun unit
	DLRUN=$(abspath build-asan/dlrun) DLRUN_E2E_NO_CLUSTER=1 E2E_LOG_DIR=$(abspath build-asan/e2e) tests/e2e/run.sh

fuzz-build:
	@mkdir -p $(BUILD)/fuzz
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  echo "clang $$n"; \
	  clang -std=c11 -g -O1 -D_GNU_SOURCE -Ilib -fsanitize=fuzzer,address,undefined \
	    -o $(BUILD)/fuzz/$$n $$f $(LIB_SRCS) \
	    $(ALL_CPPFLAGS) $(LDLIBS) || exit 1; done

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

install: $(BUILD)/dlrun
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7 \
	    $(DESTDIR)$(PREFIX)/share/dlrun/templates/sites \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	    $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 0755 $(BUILD)/dlrun $(DESTDIR)$(PREFIX)/bin/dlrun
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	install -m 0644 templates/*.sh.in $(DESTDIR)$(PREFIX)/share/dlrun/templates/
	install -m 0644 templates/sites/*.yaml $(DESTDIR)$(PREFIX)/share/dlrun/templates/sites/
	install -m 0644 contrib/completion/dlrun.bash \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/dlrun
	install -m 0644 contrib/completion/_dlrun $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_dlrun

clean:
	rm -rf build build-asan

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d)
