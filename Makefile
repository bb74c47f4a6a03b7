# stkrec / stkreport build. `make` builds both tools; `make test` sets up a fresh Debian 12
# machine (apt-get) and runs the whole suite; `make demo` records a 5 s profile and reports it;
# `make static` builds $(OUTPUT)/stkreport-static, one file to copy to any x86-64 Linux.
# Objects go to $(OUTPUT); `make V=1` shows the commands; `SAN=address,undefined` builds
# instrumented copies into their own output directory.

.DELETE_ON_ERROR:
.SUFFIXES:

SAN ?=
OUTPUT ?= .output$(if $(SAN),-san)
PREFIX ?= /usr/local
DESTDIR ?=
WERROR ?= 1

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# pkg-config runs lazily (recursive =), so `make deps` can install it first.
PKGS_REC = libbpf libelf libdw liblz4
# libcurl and libxxhash: stkreport --clickhouse (report/http.c, report/clickhouse.c).
PKGS_REP = libelf libdw sqlite3 liblz4 liblzma libdebuginfod libcurl libxxhash
REC_LIBS = $(shell pkg-config --libs $(PKGS_REC)) -lz
REP_LIBS = $(shell pkg-config --libs $(PKGS_REP)) -liberty -lz
# The static stkreport links Debian's archives (libdw.a wants libbz2.a too: --static) but not
# libdebuginfod, which has none and would bring libcurl, TLS and NSS: it is dlopen()ed instead;
# nor libcurl itself: its --clickhouse says it has no HTTP client (report/http.c).
STATIC_LIBS = $(shell pkg-config --static --libs $(filter-out libdebuginfod libcurl,$(PKGS_REP))) \
	-liberty -lz -lm
FMT_LIBS = $(shell pkg-config --libs liblz4) -lz
SYM_LIBS = $(shell pkg-config --libs libelf libdw liblz4) -lz

SAN_FLAGS = $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all)
WARN = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers $(if $(filter 1,$(WERROR)),-Werror)
CFLAGS ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) -std=gnu11 $(WARN) -D_GNU_SOURCE -DSTK_VERSION='"$(VERSION)"' \
	-Iinclude -I$(OUTPUT) -MMD -MP $(SAN_FLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)

# Workloads are the traced programs: frame pointers everywhere, never sanitized.
WORKLOAD_CFLAGS = -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -Wall

FMT_SRCS = $(wildcard format/*.c)
SYM_SRCS = $(wildcard symbolize/*.c)
REC_SRCS = $(wildcard record/*.c record/*/*.c)
REP_SRCS = $(wildcard report/*.c report/emit/*.c)
BPF_SRCS = $(wildcard bpf/*.bpf.c)
FMT_OBJS = $(FMT_SRCS:%.c=$(OUTPUT)/%.o)
SYM_OBJS = $(SYM_SRCS:%.c=$(OUTPUT)/%.o)
REC_OBJS = $(REC_SRCS:%.c=$(OUTPUT)/%.o)
REP_OBJS = $(REP_SRCS:%.c=$(OUTPUT)/%.o)
SKELS = $(BPF_SRCS:bpf/%.bpf.c=$(OUTPUT)/%.skel.h)

LIBCAP = $(OUTPUT)/libstkcap.a
# symbolize/: the ELF reading and debug-file search both tools need (include/stk/elfobj.h:
# libelf, libdw), and the symbolizer (include/stk/symbolize.h: also liblzma, libdebuginfod,
# libiberty) with the containers it shares with report/ (stk/htab.h, stk/escape.h). A program
# takes only the members it uses from the archive: stkrec and the sym_* unit tests the ELF basics.
LIBSYM = $(OUTPUT)/libstksym.a
LIBREC = $(OUTPUT)/librec.a
LIBREP = $(OUTPUT)/librep.a
STKREC = $(OUTPUT)/stkrec
STKREPORT = $(OUTPUT)/stkreport
STKREPORT_STATIC = $(OUTPUT)/stkreport-static

# Tests: each C file is one program printing `ok NAME` / `not ok NAME: why` / `skip NAME: why`.
FMT_TESTS = $(patsubst %.c,$(OUTPUT)/%,$(wildcard tests/format/*.c))
REC_UNIT = $(patsubst %.c,$(OUTPUT)/%,$(wildcard tests/unit/rec_*.c))
REP_UNIT = $(patsubst %.c,$(OUTPUT)/%,$(wildcard tests/unit/rep_*.c))
SYM_UNIT = $(patsubst %.c,$(OUTPUT)/%,$(wildcard tests/unit/sym_*.c))
FUZZ = $(OUTPUT)/tests/fuzz/fuzz_reader
# cfidump reads record/'s unwind tables: it links librec, the other tools librep.
REC_TOOLS = $(OUTPUT)/tests/tools/cfidump
TOOLS = $(filter-out $(REC_TOOLS),$(patsubst %.c,$(OUTPUT)/%,$(wildcard tests/tools/*.c)))
# wl_dlib.c is the library wl_dlopen loads (DLIB), not a program; wl_lazy is built without
# frame pointers only, with its library (LAZY).
WORKLOADS = $(patsubst %.c,$(OUTPUT)/%,$(filter-out tests/workloads/wl_dlib.c \
	tests/workloads/wl_lazy.c tests/workloads/wl_lazylib.c,\
	$(wildcard tests/workloads/*.c))) $(DLIB)
DLIB = $(OUTPUT)/tests/workloads/libwl_dlib.so
# The same programs as production code is built: optimized, no frame pointer anywhere (nofp.sh).
NOFP_NAMES = wl_syscall wl_uprobe wl_usdt wl_burner wl_deep wl_signal wl_nocfi wl_hole wl_init \
	wl_dlopen
NOFP_WORKLOADS = $(NOFP_NAMES:%=$(OUTPUT)/tests/workloads/nofp/%) $(NOFP_DLIB)
NOFP_DLIB = $(OUTPUT)/tests/workloads/nofp/libwl_dlib.so
# C++ built as release C++ is (g++ -O2, no frame pointer; -fno-inline keeps each named function a
# frame): exceptions through libgcc's unwinder (regret.sh, bench/run's walk), calls through the
# PLT (plt.sh).
CXX_WORKLOADS = $(patsubst tests/workloads/%.cc,$(OUTPUT)/tests/workloads/nofp/%,\
	$(wildcard tests/workloads/*.cc))
# Lazy binding through ld.so's trampolines (lazy.sh): a program and the library it calls.
LAZY = $(OUTPUT)/tests/workloads/nofp/wl_lazy $(OUTPUT)/tests/workloads/nofp/libwl_lazy.so
# Inputs of tests/unit/rec_cfi: one program built with .eh_frame, and with its own functions' CFI
# in .debug_frame only. Not sanitized, and outside tests/unit/, whose programs tests/run runs.
CFI_INPUTS = $(OUTPUT)/tests/inputs/cfi_prog_eh_frame $(OUTPUT)/tests/inputs/cfi_prog_debug_frame
# tests/check/static.sh runs the static stkreport; sanitizers cannot link statically.
CHECK_BINS = $(FMT_TESTS) $(REC_UNIT) $(REP_UNIT) $(SYM_UNIT) $(FUZZ) $(TOOLS) $(REC_TOOLS) $(CFI_INPUTS) \
	$(if $(SAN),,$(STKREPORT_STATIC))

.PHONY: all tools static check-bins workloads deps check e2e test test-build demo bench bench-sym bench-many \
	bench-churn bench-alwayson install \
	uninstall golden-update clean fuzz

all: tools

tools: $(STKREC) $(STKREPORT)
check-bins: tools $(CHECK_BINS)
workloads: $(WORKLOADS) $(NOFP_WORKLOADS) $(CXX_WORKLOADS) $(LAZY)

# ---- libraries and tools ----------------------------------------------------------------

$(OUTPUT)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBCAP): $(FMT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSYM): $(SYM_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBREC): $(filter-out $(OUTPUT)/record/main.o,$(REC_OBJS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBREP): $(filter-out $(OUTPUT)/report/main.o,$(REP_OBJS))
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(STKREC): $(OUTPUT)/record/main.o $(LIBREC) $(LIBSYM) $(LIBCAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(REC_LIBS) -o $@

$(STKREPORT): $(OUTPUT)/report/main.o $(LIBREP) $(LIBSYM) $(LIBCAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(REP_LIBS) -lm -o $@

# ---- make static: stkreport as one file (issue 13) ---------------------------------------
# The dynamic stkreport needs some 40 shared libraries (libcurl and its TLS through
# libdebuginfod), so it cannot be copied to another machine alone. This one is a static,
# non-PIE executable: no interpreter, no dynamic section, no file read but the capture, the
# --symfs/--debug-dir trees and the debug paths of stkreport(1). The same objects, except
# symbolize/sym_debuginfod.c, compiled again to load libdebuginfod with dlopen() (see that file)
# and linked before libstksym.a, whose own sym_debuginfod.o is then never taken, and
# report/http.c, compiled again without libcurl (--clickhouse then says so); of libstksym.a
# only the members it uses (not debugdirs.c, stkrec's, which calls getpwuid).
#
# glibc's libc.a marks the functions that load shared objects at run time, and ld warns when a
# static program uses one. Expected here: dlopen(), in SQLite's load_extension (never enabled:
# report/sql.c refuses extensions) and in sym_debuginfod.c's dbgd_load(). Any other such warning
# (getpwnam, getgrgid, getaddrinfo...: NSS, whose modules are the target's own libnss_*.so)
# means stkreport started to depend on them: it fails the link, as -Werror would. gconv (iconv)
# gets no warning: it is linked in only for dcgettext, through which libelf and libdw translate
# their messages, and stkreport never calls setlocale(), so in the C locale dcgettext opens no
# catalog and converts nothing.
STATIC_OBJS = $(OUTPUT)/report/main.o \
	$(filter-out $(OUTPUT)/report/main.o $(OUTPUT)/report/http.o,$(REP_OBJS)) \
	$(OUTPUT)/static/report/http.o $(OUTPUT)/static/symbolize/sym_debuginfod.o $(FMT_OBJS) \
	$(LIBSYM)
STATIC_LD_EXPECTED = -e "in function .\(unixDlOpen\|dbgd_load\)':$$" \
	-e "warning: Using 'dlopen' in statically linked applications requires at runtime"

static: $(STKREPORT_STATIC)

$(OUTPUT)/static/symbolize/sym_debuginfod.o: symbolize/sym_debuginfod.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DSTK_DEBUGINFOD_DLOPEN -c $< -o $@

$(OUTPUT)/static/report/http.o: report/http.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DSTK_HTTP_NONE -c $< -o $@

$(STKREPORT_STATIC): $(STATIC_OBJS)
	$(if $(SAN),$(error make static: sanitizers do not link statically (SAN=$(SAN))))
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(ALL_LDFLAGS) $^ $(STATIC_LIBS) -o $@ 2>$@.ld || \
		{ cat $@.ld >&2; rm -f $@.ld; exit 1; }
	$(Q)if grep -v $(STATIC_LD_EXPECTED) $@.ld >&2; then \
		echo "$@: unexpected linker warnings (see the Makefile, make static)" >&2; \
		rm -f $@.ld $(if $(filter 1,$(WERROR)),$@; exit 1); fi; rm -f $@.ld

# ---- BPF: clang -target bpf, CO-RE against the committed bpf/vmlinux.h, bpftool skeletons ----

BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude -Ibpf -Wall -Werror

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) include/stk/abi.h
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp && $(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# Only record/ includes skeletons; make every record object wait for them.
$(REC_OBJS): $(SKELS)

# ---- tests ------------------------------------------------------------------------------

$(FMT_TESTS): $(OUTPUT)/tests/format/%: $(OUTPUT)/tests/format/%.o $(LIBCAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(FMT_LIBS) -o $@

$(SYM_UNIT): $(OUTPUT)/tests/%: $(OUTPUT)/tests/%.o $(LIBSYM) $(LIBCAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(SYM_LIBS) -o $@

$(REC_UNIT) $(REC_TOOLS): $(OUTPUT)/tests/%: $(OUTPUT)/tests/%.o $(LIBREC) $(LIBSYM) $(LIBCAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(REC_LIBS) -o $@

$(REP_UNIT) $(FUZZ) $(TOOLS): $(OUTPUT)/tests/%: $(OUTPUT)/tests/%.o $(LIBREP) $(LIBSYM) $(LIBCAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(REP_LIBS) -lm -o $@

$(CFI_INPUTS): $(OUTPUT)/tests/inputs/cfi_prog_%: tests/unit/inputs/cfi_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g $(if $(filter debug_frame,$*),-fno-asynchronous-unwind-tables) $< -o $@

# wl_inline's hot loop must be inlined for real (inline frames in reports): -O2, inlining on.
$(OUTPUT)/tests/workloads/wl_inline: WORKLOAD_CFLAGS = -O2 -g -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -Wall

# wl_entry is its own entry point, without a C library: rsp at argc, rbp 0, no CFI.
$(OUTPUT)/tests/workloads/wl_entry: WORKLOAD_CFLAGS = -O2 -g -nostdlib -static -no-pie -Wall

$(filter-out $(DLIB),$(WORKLOADS)): $(OUTPUT)/tests/workloads/%: tests/workloads/%.c \
		tests/workloads/wl.h
	$(call msg,WORKLOAD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -o $@

$(DLIB): tests/workloads/wl_dlib.c
	$(call msg,WORKLOAD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -shared -fPIC $< -o $@

# -fno-inline keeps each named function a frame; the sources keep calls from becoming tail calls.
NOFP_CFLAGS = -O2 -g -fomit-frame-pointer -fno-inline -Wall
$(filter-out $(NOFP_DLIB),$(NOFP_WORKLOADS)): $(OUTPUT)/tests/workloads/nofp/%: \
		tests/workloads/%.c tests/workloads/wl.h
	$(call msg,WORKLOAD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_CFLAGS) $< -o $@

$(NOFP_DLIB): tests/workloads/wl_dlib.c
	$(call msg,WORKLOAD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

$(CXX_WORKLOADS): $(OUTPUT)/tests/workloads/nofp/%: tests/workloads/%.cc
	$(call msg,WORKLOAD,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) -O2 -g -fno-inline -Wall $< -o $@

$(OUTPUT)/tests/workloads/nofp/libwl_lazy.so: tests/workloads/wl_lazylib.c tests/workloads/wl.h \
		tests/workloads/wl_lazy.h
	$(call msg,WORKLOAD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

# -z lazy: some toolchains default to -z now, which binds every function at load time.
$(OUTPUT)/tests/workloads/nofp/wl_lazy: tests/workloads/wl_lazy.c tests/workloads/wl.h \
		tests/workloads/wl_lazy.h $(OUTPUT)/tests/workloads/nofp/libwl_lazy.so
	$(call msg,WORKLOAD,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) $< -o $@ -L$(@D) -lwl_lazy \
		-Wl,-z,lazy -Wl,-rpath,'$$ORIGIN'

# ---- make fuzz: libFuzzer, every harness of tests/fuzz/fuzz_reader.c FUZZ_SECS seconds --------
# clang's libFuzzer (Debian: clang, libclang-rt-14-dev) with AddressSanitizer, UndefinedBehavior-
# Sanitizer and LeakSanitizer, over a copy of tests/fuzz/corpus; what gives new coverage is
# merged back into it, every crash is saved there (tests/fuzz/run).
FUZZ_SECS ?= 60
FUZZ_OUTPUT = .output-fuzz
FUZZ_LIBFUZZER = $(OUTPUT)/tests/fuzz/fuzz_reader-libfuzzer

fuzz:
	$(Q)scripts/install-deps
	$(Q)$(MAKE) --no-print-directory CC=$(CLANG) OUTPUT=$(FUZZ_OUTPUT) WERROR=0 \
		SAN=fuzzer-no-link,address,undefined $(FUZZ_OUTPUT)/tests/fuzz/fuzz_reader-libfuzzer
	$(Q)FUZZ_SECS=$(FUZZ_SECS) tests/fuzz/run $(FUZZ_OUTPUT)/tests/fuzz/fuzz_reader-libfuzzer

$(FUZZ_LIBFUZZER): tests/fuzz/fuzz_reader.c $(LIBREP) $(LIBSYM) $(LIBCAP)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -DSTK_LIBFUZZER -fsanitize=fuzzer $< $(LIBREP) $(LIBSYM) $(LIBCAP) \
		$(REP_LIBS) -lm -o $@

# Unprivileged tests: format, unit, fuzz corpus replay, golden reports.
check: check-bins
	$(Q)OUTPUT=$(OUTPUT) tests/run check

# Real BPF, as root.
e2e: tools workloads
	$(Q)OUTPUT=$(OUTPUT) tests/run e2e

# The README's test command: install what a fresh Debian 12 machine lacks, build everything
# (plain and with sanitizers), run the unprivileged suite under ASan+UBSan too, then real BPF.
test:
	$(Q)scripts/install-deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)tests/run all

test-build:
	$(Q)$(MAKE) --no-print-directory check-bins workloads
	$(Q)$(MAKE) --no-print-directory SAN=address,undefined,float-cast-overflow check-bins workloads

demo:
	$(Q)scripts/install-deps
	$(Q)$(MAKE) --no-print-directory tools
	$(Q)scripts/demo

bench:
	$(Q)scripts/install-deps --bench
	$(Q)$(MAKE) --no-print-directory tools workloads $(OUTPUT)/bench/floor \
		$(OUTPUT)/tests/tools/capdump
	$(Q)OUTPUT=$(OUTPUT) bench/run

# bench/floor: the least BPF program that counts stacks (bench/run's reference per event).
$(OUTPUT)/bench/floor.bpf.o: bench/floor.bpf.c bpf/vmlinux.h
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp && $(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/bench/floor.skel.h: $(OUTPUT)/bench/floor.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(OUTPUT)/bench/floor: bench/floor.c $(OUTPUT)/bench/floor.skel.h
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OUTPUT)/bench $< $(shell pkg-config --libs libbpf libelf) -lz -o $@

# stkreport's symbolization against perf on one system-wide profile (root, about 2 minutes).
bench-sym:
	$(Q)$(MAKE) --no-print-directory tools
	$(Q)OUTPUT=$(OUTPUT) bench/symbolize

# stkreport over 1,000 captures against one: time and memory of each output (bench/many).
bench-many:
	$(Q)$(MAKE) --no-print-directory tools workloads $(OUTPUT)/tests/tools/mkbig
	$(Q)OUTPUT=$(OUTPUT) bench/many

# stkrec's memory while processes come and go (root, CHURN_SECS: 600 s by default).
bench-churn:
	$(Q)$(MAKE) --no-print-directory tools workloads
	$(Q)OUTPUT=$(OUTPUT) bench/churn

# stkrec's CPU and memory over a 10-minute rotating system-wide run at 19 and 99 Hz
# (bench/alwayson; ALWAYSON_SECS shortens it).
bench-alwayson:
	$(Q)$(MAKE) --no-print-directory tools workloads
	$(Q)OUTPUT=$(OUTPUT) bench/alwayson

golden-update: check-bins
	$(Q)OUTPUT=$(OUTPUT) tests/golden/update

# The man pages name the documents under share/doc/stkrec.
INSTALLED = bin/stkrec bin/stkreport share/man/man8/stkrec.8 share/man/man1/stkreport.1 \
	share/doc/stkrec/format.md share/doc/stkrec/sql.md share/doc/stkrec/clickhouse.md \
	share/doc/stkrec/README.md \
	share/bash-completion/completions/stkrec share/bash-completion/completions/stkreport
COMPLETIONS = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
# The always-on service (stkrec(8), ALWAYS ON): systemd looks in /usr/local/lib/systemd/system too.
UNITDIR ?= $(PREFIX)/lib/systemd/system

install: tools
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/doc/stkrec $(COMPLETIONS)
	install -m 0755 $(STKREC) $(STKREPORT) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 docs/stkrec.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 docs/stkreport.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 docs/format.md docs/sql.md docs/clickhouse.md README.md \
		$(DESTDIR)$(PREFIX)/share/doc/stkrec/
	install -m 0644 scripts/completion/stkrec.bash $(COMPLETIONS)/stkrec
	install -m 0644 scripts/completion/stkrec.bash $(COMPLETIONS)/stkreport
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@BINDIR@|$(PREFIX)/bin|g' scripts/systemd/stkrec.service.in >$(DESTDIR)$(UNITDIR)/stkrec.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/stkrec.service

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED)) $(DESTDIR)$(UNITDIR)/stkrec.service
	-rmdir $(DESTDIR)$(PREFIX)/share/doc/stkrec 2>/dev/null

clean:
	rm -rf .output .output-san

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
