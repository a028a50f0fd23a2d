# gpubpf - system-wide GPU tracer built on eBPF
#
#   make            build ./build/gpubpf
#   make deps       install missing Debian packages (root), or print the command
#   make demo       deps + build + record the bundled demo workload + info
#   make test       unit, integration (root, real BPF), fuzz smoke; then all again under ASan+UBSan
#   make bench      benchmarks, writes BENCHMARKS.md
#   make bench-soak long soak of record at 50k events/s (SOAK_SECONDS, default 600)
#   make fuzz       libFuzzer targets, FUZZ_SECONDS each (default 60)
#   make vmlinux    regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF
#   make man        man pages from each command's --help (help2man) into $(BUILD)/man
#   make spank      the Slurm SPANK plugin (needs libslurm-dev) into build/slurm
#   make install    install (PREFIX=/usr/local, DESTDIR): binary, CUPTI library and
#                   Slurm plugin when built, man pages, bash completion, systemd unit
#   make uninstall  remove what make install put there

VERSION := 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# private: the CUPTI injection library, found there by record --cupti
GB_LIBDIR ?= $(PREFIX)/lib/gpubpf
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
BUILD ?= build
BPFBUILD := build/bpf
WL := build/workloads
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda))

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	  -std=gnu11 -D_GNU_SOURCE -DGPUBPF_VERSION='"$(VERSION)"' \
	  -I$(BPFBUILD) -Isrc -I. -Ibpf -fno-omit-frame-pointer
LDLIBS := -lbpf -lcap -ldw -lelf -lz -lzstd -lncursesw -lunwind-ptrace -lunwind-generic -lunwind -lstdc++ -lpthread -lm
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

DEB_PKGS := clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev libzstd-dev libxxhash-dev \
	libncurses-dev libunwind-dev libcmocka-dev protobuf-compiler \
	systemtap-sdt-dev libclang-rt-14-dev llvm-14 python3 tmux libcap2-bin \
	util-linux iproute2 valgrind prometheus libamdhip64-dev bpftrace gcc g++ make pkg-config curl \
	golang-go help2man man-db bash-completion debhelper dpkg-dev fakeroot lintian libcap-dev \
	chromium libslurm-dev slurmctld slurmd slurm-client munge binutils file time procps

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BPFBUILD)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BPFBUILD)/%.skel.h,$(BPF_SRCS))
SRC_DIRS := $(sort $(dir $(wildcard src/*/*.c)))
MAIN_SRC := src/cli/main.c
LIB_SRCS := $(filter-out $(MAIN_SRC),$(wildcard src/*/*.c))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
HDRS := $(wildcard bpf/*.h src/*/*.h)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WL_SRCS := $(wildcard tests/workloads/*.c)

.SECONDARY:
.PHONY: all deps demo test test-only bench bench-soak fuzz vmlinux install uninstall man clean workloads unit cupti spank FORCE

all: $(BUILD)/gpubpf

deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all Debian packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing && \
		apt-get clean; \
	else echo "deps: missing$$missing; run: sudo apt-get install$$missing"; exit 1; fi

vmlinux:
	mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

# --- BPF: compiled once, shared by the normal and sanitizer builds ---
$(BPFBUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
		-I/usr/include/$(MULTIARCH) -Wall -Wno-unused-function $(BPF_EXTRA) -c $< -o $@.tmp	# BPF_EXTRA: experiments (-mcpu=v3, -DNAME)
	llvm-strip -g $@.tmp -o $@ 2>/dev/null || cp $@.tmp $@
	@rm -f $@.tmp

$(BPFBUILD)/%.skel.h: $(BPFBUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# --- user space ---
$(BUILD)/obj/%.o: %.c $(HDRS) $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the installed CUPTI library's directory is compiled in: rebuild when it changes
$(BUILD)/libdir.txt: FORCE
	@mkdir -p $(@D)
	@echo '$(GB_LIBDIR)' | cmp -s - $@ || echo '$(GB_LIBDIR)' >$@
$(BUILD)/obj/src/cupti/cupti_attach.o: $(BUILD)/libdir.txt
$(BUILD)/obj/src/cupti/cupti_attach.o: CFLAGS += -DGPUBPF_LIBDIR='"$(GB_LIBDIR)"'

$(BUILD)/libgpubpf.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# whole archive: subcommands are found through weak references in main.c
$(BUILD)/gpubpf: $(BUILD)/obj/src/cli/main.o $(BUILD)/libgpubpf.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/src/cli/main.o -Wl,--whole-archive $(BUILD)/libgpubpf.a -Wl,--no-whole-archive $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libgpubpf.a $(HDRS) $(wildcard tests/unit/*.h) tests/workloads/keep_vec.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(BUILD)/libgpubpf.a -lcmocka $(LDLIBS)

unit: $(UNIT_BINS)

# --- test workloads and fake vendor libraries (never sanitized: they are the traced) ---
workloads:
	@$(MAKE) --no-print-directory -C tests/workloads OUT=$(CURDIR)/$(WL)

# --- the Slurm SPANK plugin (optional: needs libslurm-dev) ---
spank:
	@$(MAKE) --no-print-directory -C slurm OUT=$(CURDIR)/build/slurm GPUBPF_BIN=$(BINDIR)/gpubpf \
		GPUBPF_CUPTI=$(GB_LIBDIR)/libgpubpf_cupti.so

# --- CUPTI injection library (optional) ---
cupti:
	@$(MAKE) --no-print-directory -C cupti OUT=$(CURDIR)/build/cupti CUDA_HOME=$(CUDA_HOME)

demo: deps all workloads
	@bash tests/demo.sh

test: deps
	@bash tests/run_all.sh

# the suite alone against an existing build (used by run_all.sh)
test-only: all unit workloads cupti spank
	@bash tests/run.sh $(BUILD)

bench: all workloads cupti
	@bash bench/run.sh

# long runs: record at 50k launches/s for SOAK_SECONDS (default 600), RSS/CPU/drops
# every 10 s; then 50 short GPU processes a second for CHURN_SECONDS (default
# 1800) under record -a and record -a --flight, the recorder's RSS
bench-soak: all workloads
	@bash bench/soak.sh $(BUILD)
	@bash bench/churn_bench.sh $(BUILD)

fuzz:
	@$(MAKE) --no-print-directory -C tests/fuzz OUT=$(CURDIR)/build/fuzz
	@bash tests/fuzz/run.sh $(CURDIR)/build/fuzz $${FUZZ_SECONDS:-60}

# man pages: gpubpf(1) and gpubpf-COMMAND(1) for every command 'gpubpf --help'
# lists, made from the --help texts with docs/man/*.h2m added (docs/man/mkman.sh)
$(BUILD)/man/.stamp: $(BUILD)/gpubpf $(BUILD)/libdir.txt docs/man/mkman.sh $(wildcard docs/man/*.h2m)
	@bash docs/man/mkman.sh $(BUILD)/gpubpf $(BUILD)/man $(VERSION) '$(GB_LIBDIR)'
	@touch $@

man: $(BUILD)/man/.stamp

CUPTI_SO := build/cupti/libgpubpf_cupti.so
SPANK_SO := build/slurm/libgpubpf_spank.so
INSTALLED_MAN = $(notdir $(wildcard $(BUILD)/man/gpubpf*.1))

install: all man cupti spank
	install -D -m 0755 $(BUILD)/gpubpf $(DESTDIR)$(BINDIR)/gpubpf
	@if [ -f $(SPANK_SO) ]; then set -x; \
		install -D -m 0644 $(SPANK_SO) $(DESTDIR)$(GB_LIBDIR)/libgpubpf_spank.so; \
	else echo "install: no $(SPANK_SO) (make spank needs libslurm-dev): no Slurm plugin"; fi
	@if [ -f $(CUPTI_SO) ]; then set -x; \
		install -D -m 0644 $(CUPTI_SO) $(DESTDIR)$(GB_LIBDIR)/libgpubpf_cupti.so; \
	else echo "install: no $(CUPTI_SO) (make cupti needs the CUDA toolkit): record --cupti will not find it"; fi
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(addprefix $(BUILD)/man/,$(INSTALLED_MAN)) $(DESTDIR)$(MANDIR)/man1/
	install -D -m 0644 docs/bash-completion/gpubpf $(DESTDIR)$(BASHCOMPDIR)/gpubpf
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/local/bin/gpubpf|$(BINDIR)/gpubpf|' docs/gpubpf-top.service >$(DESTDIR)$(SYSTEMDUNITDIR)/gpubpf-top.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/gpubpf-top.service

# exactly what install put there (man pages: gpubpf.1 and gpubpf-*.1, ours alone)
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpubpf $(DESTDIR)$(GB_LIBDIR)/libgpubpf_cupti.so \
		$(DESTDIR)$(GB_LIBDIR)/libgpubpf_spank.so \
		$(DESTDIR)$(MANDIR)/man1/gpubpf.1 $(DESTDIR)$(MANDIR)/man1/gpubpf-*.1 \
		$(DESTDIR)$(BASHCOMPDIR)/gpubpf $(DESTDIR)$(SYSTEMDUNITDIR)/gpubpf-top.service
	rmdir $(DESTDIR)$(GB_LIBDIR) 2>/dev/null || true

clean:
	rm -rf build

FORCE:
