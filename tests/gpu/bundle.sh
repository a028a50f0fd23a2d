#!/usr/bin/env bash
# tests/gpu/bundle.sh [DIR]: build gpubpf and libgpubpf_cupti.so here and
# assemble a self-contained bundle in DIR (default .gpubundle/ at the top
# of the tree, git-ignored by .gitignore) for a GPU machine that has no
# package registry:
#   DIR/bin/gpubpf                    relinked with RPATH $ORIGIN/../lib
#   DIR/lib/*.so*                     every shared library it needs beyond glibc
#   DIR/lib/gpubpf/libgpubpf_cupti.so where record --cupti looks beside the binary
#   DIR/gpu/                          run_h100.sh, the workloads, compare.py
#   DIR/wl/, DIR/bench/, DIR/bin/{uprobe_floor,bpftool}  section 9's hot-path bench
#   DIR/lib/segv_report.so            diag_cupti.sh's crash report (LD_PRELOAD)
#   DIR/MANIFEST                      commit, sizes, sha256, glibc needed
# Why an RPATH and not LD_LIBRARY_PATH: gpubpf starts the traced command
# (record -- python ...) and LD_LIBRARY_PATH would reach it, putting our
# libzstd/libelf/libstdc++ in front of the wheel's. DT_RPATH (not RUNPATH)
# also serves the bundled libraries' own dependencies (libunwind -> liblzma).
# Why not static: Debian ships no static libbpf with its BTF/ELF deps built
# for it (libbpf.a needs libelf.a and libz.a, present, but libunwind-ptrace
# and libncursesw static builds pull libtinfo/liblzma and glibc's static
# NSS for getpwuid) and a static glibc cannot dlopen; the relinked binary
# needs glibc >= the version MANIFEST states (2.34 with Debian 12's gcc).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:-$ROOT/.gpubundle}
cd "$ROOT"
make -j2 all cupti >/dev/null
CUPTI=build/cupti/libgpubpf_cupti.so
[ -r "$CUPTI" ] || { echo "bundle.sh: no $CUPTI (make cupti needs the CUDA toolkit: CUDA_HOME)" >&2; exit 1; }

TMP=$DIR.tmp
rm -rf "$TMP"
mkdir -p "$TMP/bin" "$TMP/lib/gpubpf" "$TMP/gpu"
# the Makefile's own link line for build/gpubpf, pointed at the bundle
link=$(make -n -W build/obj/src/cli/main.o build/gpubpf | grep -E -- '-o build/gpubpf( |$)' | tail -1)
[ -n "$link" ] || { echo "bundle.sh: could not get the link line from make -n" >&2; exit 1; }
link=${link/-o build\/gpubpf/-o $TMP\/bin\/gpubpf}
eval "$link -Wl,--disable-new-dtags -Wl,-rpath,'\$ORIGIN/../lib'"
install -m 0644 "$CUPTI" "$TMP/lib/gpubpf/libgpubpf_cupti.so"

# every library ldd resolves, except glibc's own (the target has its glibc) and
# libstdc++/libgcc_s (every image with torch has them; gpubpf needs only
# __cxa_demangle@CXXABI_1.3 from it, and Debian 12's copy needs glibc 2.36,
# one more than Ubuntu 22.04's)
skip='^(libc|libm|libpthread|libdl|librt|libutil|ld-linux-x86-64|linux-vdso|libgcc_s|libstdc\+\+)\.so'
ldd "$TMP/bin/gpubpf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
	base=$(basename "$lib")
	[[ $base =~ $skip ]] && continue
	cp -L "$lib" "$TMP/lib/$base"
done
if ldd "$TMP/bin/gpubpf" | grep -q 'not found'; then
	echo "bundle.sh: unresolved: $(ldd "$TMP/bin/gpubpf" | grep 'not found')" >&2
	exit 1
fi
# the binary must take the bundled copies, not the system's
if ldd "$TMP/bin/gpubpf" | grep -E 'libbpf|libzstd' | grep -qv "$TMP/bin/../lib"; then
	echo "bundle.sh: the RPATH is not used: $(ldd "$TMP/bin/gpubpf" | grep libbpf)" >&2
	exit 1
fi
cp tests/gpu/*.py tests/gpu/*.sh tests/gpu/README.md "$TMP/gpu/"
cc -O2 -g -Wall -shared -fPIC -o "$TMP/lib/segv_report.so" tests/gpu/segv_report.c
# section 9 (issue 44's hot-path table on that host): bench/launch_bench.sh with the
# fake libcuda/libnccl and their drivers, the empty-uprobe floor built here (the GPU
# image has no libbpf headers) and bpftool (its libraries are the bundle's: libelf,
# libz, libcap; run with LD_LIBRARY_PATH, it starts no traced job)
make -j2 workloads >/dev/null
mkdir -p "$TMP/wl" "$TMP/bench"
cp build/workloads/cuda_work build/workloads/libcuda.so.1 build/workloads/nccl_work \
	build/workloads/libnccl.so.2 "$TMP/wl/"
cp bench/launch_bench.sh "$TMP/bench/"
cc -O2 -Ibuild/bpf -o "$TMP/bin/uprobe_floor" bench/uprobe_floor.c -lbpf -lelf -lz \
	-Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/../lib'
if command -v bpftool >/dev/null; then
	cp "$(command -v bpftool)" "$TMP/bin/bpftool"
	for lib in $(ldd "$TMP/bin/bpftool" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
		[[ $(basename "$lib") =~ $skip ]] || [ -e "$TMP/lib/$(basename "$lib")" ] || cp -L "$lib" "$TMP/lib/"
	done
fi
# GB_PERF=1: Debian's perf and the libraries it needs beyond glibc, for diag_collector.sh
if [ "${GB_PERF:-0}" = 1 ]; then
	mkdir -p "$TMP/perf/lib"
	cp "$(readlink -f "$(command -v perf)")" "$TMP/perf/perf"
	for lib in $(ldd "$TMP/perf/perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
		[[ $(basename "$lib") =~ $skip ]] || cp -L "$lib" "$TMP/perf/lib/"
	done
fi

glibc=$(for f in "$TMP/bin/gpubpf" "$TMP"/lib/*.so* "$TMP/lib/gpubpf/libgpubpf_cupti.so"; do
	objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*'
done | sort -uV | tail -1)
cxx=$(objdump -T "$TMP/bin/gpubpf" | grep -o '\(GLIBCXX\|CXXABI\)_[0-9.]*' | sort -uV | tr '\n' ' ')
{
	echo "gpubpf $(git describe --always --dirty) ($(git rev-parse --abbrev-ref HEAD)), built $(date -u '+%F %T UTC') on $(. /etc/os-release; echo "$PRETTY_NAME")"
	echo "needs: glibc >= ${glibc#GLIBC_} (x86-64), kernel BTF; libgpubpf_cupti.so needs libcupti.so.13 (RUNPATH $(readelf -d "$CUPTI" | sed -n 's/.*runpath: \[\(.*\)\]/\1/p'))"
	echo "from the system's libstdc++.so.6: ${cxx:-nothing}"
	(cd "$TMP" && find . -type f ! -name MANIFEST | sort | xargs sha256sum)
} >"$TMP/MANIFEST"
rm -rf "$DIR"
mv "$TMP" "$DIR"

size=$(du -sb "$DIR" | cut -f1)
echo "bundle: $DIR, $((size / 1024)) KiB, $(find "$DIR" -type f | wc -l) files; $(sed -n 2p "$DIR/MANIFEST")"
"$DIR/bin/gpubpf" --version >/dev/null || { echo "bundle.sh: the bundled binary does not run" >&2; exit 1; }
max=32
[ "${GB_PERF:-0}" = 1 ] && max=48
if [ "$size" -gt $((max << 20)) ]; then
	echo "bundle.sh: $((size >> 20)) MiB: over the $max MiB this bundle should stay under (carry: 64 MiB)" >&2
	exit 1
fi
