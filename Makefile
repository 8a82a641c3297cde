# stockade: GNU make. The project's flags come first, the user's CFLAGS last.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=
PKG_CONFIG ?= pkg-config
CC ?= cc

VERSION := 0.1.0
BUILD ?= build
LIBRARIES := libseccomp libmnl libcap inih

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(LIBRARIES) 2>/dev/null)
# What each program links, and nothing more. stockade itself: libmnl, and
# libcap statically (Debian ships libcap.a), so that a run loads no library
# for the few calls it makes; libseccomp's compiler runs at build time
# only (tools/gen-filters), and inih comes with stockade.ini. The unit
# tests link what the modules they test need.
LIBCAP_STATIC := -Wl,-Bstatic $(shell $(PKG_CONFIG) --libs --static libcap 2>/dev/null) -Wl,-Bdynamic
# inih too (Debian ships libinih.a): loading libinih.so.1 cost a run
# 0.13 ms (make bench's figure, against this static link).
INIH_STATIC := -Wl,-Bstatic $(shell $(PKG_CONFIG) --libs --static inih 2>/dev/null) -Wl,-Bdynamic
# Debian's inih takes its settings at run time (ini_max_line and the like);
# upstream's has them fixed at its build.
INIH_RUNTIME := $(shell grep -qs ini_max_line "$$($(PKG_CONFIG) --variable=includedir inih 2>/dev/null)/ini.h" && echo -DSTOCKADE_INIH_RUNTIME)
RUN_LIBS := $(shell $(PKG_CONFIG) --libs libmnl 2>/dev/null) $(LIBCAP_STATIC) $(INIH_STATIC)
GEN_LIBS := $(shell $(PKG_CONFIG) --libs libseccomp 2>/dev/null)
TEST_LIBS := $(GEN_LIBS) $(RUN_LIBS)
UNAME := $(shell uname -s)
ifneq ($(UNAME),Darwin)
ifeq ($(shell $(PKG_CONFIG) --exists $(LIBRARIES) && echo ok),)
$(error missing build dependencies: $(LIBRARIES) (on Debian: apt-get install pkg-config libseccomp-dev libmnl-dev libcap-dev libinih-dev))
endif
endif

WARNINGS := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
	-Werror=implicit-function-declaration -Werror=format-security \
	-Werror=incompatible-pointer-types -Werror=return-type -Werror=int-conversion
# Small code: a run's time goes to system calls and page faults, and the
# kernel maps a binary's pages in 64 KiB runs around each fault, so every
# KiB of the file is memory the run holds (make bench's peak). -Os, the
# unused functions dropped, and no unwind tables (gdb reads .debug_frame).
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -DSTOCKADE_VERSION='"$(VERSION)"' -I. \
	$(WARNINGS) -Os -g -fno-asynchronous-unwind-tables -ffunction-sections -fdata-sections \
	-fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(INIH_RUNTIME) $(CFLAGS)
# Relative relocations packed (DT_RELR, binutils 2.38 and glibc 2.36):
# 7 KiB less to map and to relocate at every start, where the linker
# knows the option.
RELR := $(shell echo 'int main(void){return 0;}' | $(CC) -Wl,-z,pack-relative-relocs -x c -o /dev/null - >/dev/null 2>&1 && echo -Wl,-z,pack-relative-relocs)
ALL_LDFLAGS = -pie -pthread -Wl,-z,relro,-z,now $(RELR) -Wl,--gc-sections $(LDFLAGS)

MODULES := lib policy handoff conf landlock mount netns seccomp supervise guard cgroup forward seatbelt jail
# What macOS builds: lib/, policy/, seatbelt/ and jail/'s verbs that are
# no Linux mechanism, with jail/main-macos.c for a main (make check-macos
# holds them to it on Linux).
MACOS_SRCS := lib/util.c lib/path.c lib/log.c lib/fd.c lib/fs.c lib/sha256.c $(wildcard policy/*.c) $(wildcard handoff/*.c) $(wildcard conf/*.c) \
	$(wildcard seatbelt/*.c) jail/cli.c jail/config.c jail/reported.c jail/explain-policy.c jail/say-policy.c jail/sbverbs.c jail/why.c jail/main-macos.c
# jail/main-macos.c is macOS's main.
SRCS := $(filter-out jail/main-macos.c,$(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
MAIN_SRC := jail/main.c
# The runtime binary does without libseccomp's compiler: its filters come
# compiled from tools/gen-filters. The unit tests and the generator link
# seccomp/compile.c (and libseccomp) too.
COMPILE_SRC := seccomp/compile.c
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(MAIN_SRC) $(COMPILE_SRC),$(SRCS))) $(BUILD)/gen/filters.o
TEST_OBJS := $(LIB_OBJS) $(BUILD)/seccomp/compile.o
GEN_OBJS := $(BUILD)/seccomp/table.o $(BUILD)/seccomp/plan.o $(BUILD)/seccomp/compile.o $(BUILD)/policy/policy.o $(BUILD)/lib/util.o $(BUILD)/lib/path.o $(BUILD)/lib/fd.o
MAIN_OBJ := $(BUILD)/jail/main.o

UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
# The probe is a program of several files, in a folder of its own.
PROBE_SRCS := $(wildcard tests/helpers/probe/*.c)
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/%,$(HELPER_SRCS)) $(BUILD)/tests/probe

.PHONY: all tests check check-macos check-layout regen-golden asan bench fuzz install uninstall analyze clean

all: stockade

stockade: $(BUILD)/stockade
	@if [ "$(BUILD)" = build ]; then cp -f $< $@; fi

ifeq ($(UNAME),Darwin)
# macOS: the seatbelt backend alone, from the sources MACOS_SRCS names
# (below); no library, and the linker's own defaults.
$(BUILD)/stockade: $(patsubst %.c,$(BUILD)/%.o,$(MACOS_SRCS))
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^
else
$(BUILD)/stockade: $(MAIN_OBJ) $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ $(RUN_LIBS)
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The seccomp filters, compiled with libseccomp from seccomp/table.c
# at build time, so that a run does not spend 1.5 ms compiling one.
$(BUILD)/tools/gen-filters: tools/gen-filters.c $(GEN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(GEN_OBJS) $(GEN_LIBS)

$(BUILD)/gen/filters.c: $(BUILD)/tools/gen-filters
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/filters.o: $(BUILD)/gen/filters.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/test-%: tests/unit/test-%.c $(TEST_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -MMD -MP -o $@ $< $(TEST_OBJS) $(TEST_LIBS)

# Helpers run inside the jail and under it: plain programs, no sanitizer,
# so that what they report is the kernel's answer and nothing else.
HELPER_CFLAGS = -std=gnu11 -D_GNU_SOURCE -I. $(WARNINGS) -O1 -g
$(BUILD)/tests/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(HELPER_CFLAGS) -o $@ $< -Wl,--as-needed -lpthread $(shell $(PKG_CONFIG) --libs libseccomp)

$(BUILD)/tests/probe: $(PROBE_SRCS) tests/helpers/probe/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(HELPER_CFLAGS) -o $@ $(PROBE_SRCS) -Wl,--as-needed -lpthread

tests: $(BUILD)/stockade $(UNIT_BINS) $(HELPER_BINS)

# `make check-macos`, run by `make check` on Linux, compiles each of
# MACOS_SRCS as macOS sees it (__linux__ undefined, __APPLE__ defined),
# the Linux-only headers shadowed by ones that stop the build and the
# Linux- and glibc-only names poisoned (tests/portable/poison.h), then
# links them into one program: nothing they call lives outside the set.
MACOS_VIEW := -std=gnu11 -D_GNU_SOURCE -U__linux__ -U__linux -Ulinux -U__gnu_linux__ -D__APPLE__ -D__MACH__ \
	-Itests/portable/shadow -include tests/portable/poison.h -I. -DSTOCKADE_VERSION='"$(VERSION)"' $(WARNINGS) -Werror
MACOS_OBJS := $(patsubst %.c,$(BUILD)/macos-view/%.o,$(MACOS_SRCS))

$(BUILD)/macos-view/%.o: %.c tests/portable/poison.h
	@mkdir -p $(dir $@)
	$(CC) $(MACOS_VIEW) -MMD -MP -c -o $@ $<

$(BUILD)/macos-view/stockade: $(MACOS_OBJS)
	$(CC) -o $@ $^ $(shell $(PKG_CONFIG) --libs inih 2>/dev/null)

# The check's own controls: each of these must stop the macOS view, or
# the check proves nothing.
MACOS_MUST_FAIL := '\#include <sys/prctl.h>' '\#include <linux/openat2.h>' '\#include <sys/mount.h>' \
	'\#include <seccomp.h>' '\#include <sys/capability.h>' '\#include <sys/syscall.h>' '\#include <libmnl/libmnl.h>' \
	'\#include <malloc.h>' 'int f(int *p) { return pipe2(p, 0); }' 'long f(void) { return syscall(0); }' \
	'int f(void) { return O_PATH; }' 'const char *f(const char *s) { return strchrnul(s, 47); }' \
	'long f(void *b) { return getrandom(b, 1, 0); }' 'int f(void) { return close_range(3, 9, 0); }'

check-macos: $(BUILD)/macos-view/stockade
	@n=0; for c in $(MACOS_MUST_FAIL); do \
		if printf '%s\n' "$$c" | $(CC) $(MACOS_VIEW) -x c -fsyntax-only - 2>/dev/null; then \
			echo "check-macos: the macOS view let through: $$c"; exit 1; fi; n=$$((n + 1)); done; \
	echo "check-macos: $(words $(MACOS_SRCS)) sources built as macOS builds them, no Linux-only header or call; $$n controls refused"

# Rewrites every golden file from what the code renders now, for review
# (git diff tests/golden) before it is committed.
regen-golden: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do STOCKADE_REGEN_GOLDEN=1 $$t >/dev/null || exit 1; done
	@git status --short tests/golden

# The rooms kept apart: no mechanism includes another, or jail/; no file
# above 1,200 lines (tools/check-layout says which ceilings it holds).
check-layout:
	@tools/check-layout .

check: tests check-macos check-layout
	@BUILD=$(BUILD) STOCKADE=$(abspath $(BUILD)/stockade) tests/run-tests.sh

asan:
	$(MAKE) BUILD=build-asan CFLAGS="$(CFLAGS) -O1 -fasynchronous-unwind-tables -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="$(LDFLAGS) -fsanitize=address,undefined" check

$(BUILD)/tools/bench-plan: tools/bench-plan.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $< $(LIB_OBJS) $(RUN_LIBS)

$(BUILD)/tools/bench-guard: tools/bench-guard.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $< $(LIB_OBJS) $(RUN_LIBS)

$(BUILD)/tools/dump-filter: tools/dump-filter.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $< $(LIB_OBJS) $(RUN_LIBS)

# make fuzz: every harness in tests/fuzz/*.c, built with clang's libFuzzer,
# ASan and UBSan against the modules (built again with them), run for
# FUZZ_TIME seconds each on its corpus tests/fuzz/NAME/ (read, never
# written: what a run finds new goes to $(BUILD)/fuzz/NAME-new/). A crash
# fails the target and leaves its input in $(BUILD)/fuzz/.
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -DSTOCKADE_VERSION='"$(VERSION)"' -I. $(PKG_CFLAGS) -g -O1 \
	-fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_HARNESSES := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/*.c))
FUZZ_OBJS := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(filter-out $(MAIN_SRC) $(COMPILE_SRC),$(SRCS))) \
	$(BUILD)/fuzz/obj/gen/filters.o

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(BUILD)/fuzz/obj/gen/filters.o: $(BUILD)/gen/filters.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(RUN_LIBS) -pthread

fuzz: $(FUZZ_HARNESSES)
	@set -e; for h in $(FUZZ_HARNESSES); do \
		n=$$(basename $$h); mkdir -p $(BUILD)/fuzz/$$n-new tests/fuzz/$$n; \
		echo "== fuzz $$n, $(FUZZ_TIME) s"; \
		st=0; (cd $(BUILD)/fuzz && ./$$n -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			$$n-new $(abspath tests/fuzz)/$$n >$$n.log 2>&1) || st=$$?; \
		grep -E '^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' $(BUILD)/fuzz/$$n.log || true; \
		if [ $$st -ne 0 ]; then echo "fuzz $$n: failed (status $$st), see $(BUILD)/fuzz/$$n.log"; exit 1; fi; \
		echo "fuzz $$n: no crash"; \
	done

# make bench BASE=REV also measures the stockade of REV (a commit, a
# branch, main), built from git's own copy of it in $(BUILD)/base/REV.
BASE ?=
BASE_REV := $(if $(BASE),$(shell git rev-parse --short $(BASE) 2>/dev/null))
BASE_STOCKADE := $(if $(BASE_REV),$(BUILD)/base/$(BASE_REV)/build/stockade)
ifneq ($(BASE),)
ifeq ($(BASE_REV),)
$(error BASE=$(BASE) is not a revision git knows)
endif
endif

$(BUILD)/base/%/build/stockade:
	rm -rf $(BUILD)/base/$*
	mkdir -p $(BUILD)/base/$*
	git archive --format=tar $* | tar -x -C $(BUILD)/base/$*
	$(MAKE) -C $(BUILD)/base/$* -s build/stockade

# make bench's peer for the static link of inih: the same stockade with
# libinih.so loaded at every start.
$(BUILD)/tools/stockade-inih-shared: $(MAIN_OBJ) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ $(shell $(PKG_CONFIG) --libs libmnl) $(LIBCAP_STATIC) \
		$(shell $(PKG_CONFIG) --libs inih)

# make bench's per-phase table: stockade built again with -DSTOCKADE_PHASES
# (lib/phase.h), whose marks go to a descriptor the bench gives. Built for
# the bench alone, in a tree of its own; the stockade a user runs has
# no mark in it.
$(BUILD)/tools/stockade-phases: FORCE
	@$(MAKE) -s BUILD=$(BUILD)/phases CFLAGS="$(CFLAGS) -DSTOCKADE_PHASES" $(BUILD)/phases/stockade
	@mkdir -p $(dir $@)
	@cp -f $(BUILD)/phases/stockade $@

.PHONY: FORCE
FORCE:

$(BUILD)/tools/bench-dirs: tools/bench-dirs.c
	@mkdir -p $(dir $@)
	$(CC) $(HELPER_CFLAGS) -o $@ $<

bench: $(BUILD)/stockade $(HELPER_BINS) $(BUILD)/tools/bench-plan $(BUILD)/tools/bench-dirs $(BUILD)/tools/bench-guard $(BUILD)/tools/dump-filter \
	$(BUILD)/tools/stockade-inih-shared $(BUILD)/tools/stockade-phases $(BASE_STOCKADE)
	@BUILD=$(BUILD) STOCKADE=$(abspath $(BUILD)/stockade) STOCKADE_BASE=$(if $(BASE_STOCKADE),$(abspath $(BASE_STOCKADE))) \
		STOCKADE_BASE_NAME="$(BASE) ($(BASE_REV))" tests/bench.sh

# Static analysis, clean or failing: cppcheck (its false findings listed
# in tests/cppcheck.suppress) and gcc's -fanalyzer on stockade itself.
analyze:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --inline-suppr \
		--suppress=missingIncludeSystem --suppressions-list=tests/cppcheck.suppress \
		-I. -D_GNU_SOURCE $(MODULES) tests
	$(MAKE) BUILD=build-analyze CFLAGS="$(CFLAGS) -fanalyzer -Werror" build-analyze/stockade

install: stockade
	install -Dm755 stockade $(DESTDIR)$(BINDIR)/stockade
	install -Dm644 stockade.1 $(DESTDIR)$(MANDIR)/man1/stockade.1
	install -Dm644 stockade.5 $(DESTDIR)$(MANDIR)/man5/stockade.5
	tools/apparmor/install.sh install $(BINDIR) "$(DESTDIR)"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/stockade $(DESTDIR)$(MANDIR)/man1/stockade.1 $(DESTDIR)$(MANDIR)/man5/stockade.5
	tools/apparmor/install.sh uninstall $(BINDIR) "$(DESTDIR)"

clean:
	rm -rf build build-asan build-analyze stockade

-include $(patsubst %.c,$(BUILD)/macos-view/%.d,$(MACOS_SRCS))
-include $(patsubst %.c,$(BUILD)/%.d,$(SRCS)) $(patsubst tests/unit/%.c,$(BUILD)/tests/%.d,$(UNIT_SRCS))
