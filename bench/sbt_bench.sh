#!/usr/bin/env bash
# bench/sbt_bench.sh [EVENTS]: .sbt write/read throughput (one core) and
# size, next to TraceSmith SBT v0.1 for the same events. Prints a Markdown
# section on stdout. Targets: >= 10M events/s written, >= 20M events/s read.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
N=${1:-1000000}
make -s -C "$ROOT" BUILD="$BUILD" "$BUILD/libgpubpf.a" >&2
${CC:-gcc} -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$ROOT/src" -I"$ROOT" -I"$ROOT/bpf" -I"$ROOT/tests/unit" \
	-o "$BUILD/bench_sbt" "$ROOT/bench/bench_sbt.c" "$BUILD/libgpubpf.a" \
	-lzstd -lz -lstdc++ -lm
dir=$(mktemp -d /tmp/sbt_bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "## .sbt trace file: write/read throughput and size"
echo
echo "One core, best of 3; write = sbt_writer_add of pre-built events + close (zstd level 1),"
echo "read = open + sbt_reader_next over every event. The v0.1 rows are the same events"
echo "through gb_export_tracesmith (its time includes reading the gpubpf file) and read"
echo "back through our v0.1 reader. Targets: write >= 10 M/s, read >= 20 M/s."
echo
taskset -c 0 "$BUILD/bench_sbt" "$N" "$dir" 2>/dev/null || "$BUILD/bench_sbt" "$N" "$dir"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, $(uname -r); "\
"file system of $dir: $(df -T "$dir" | awk 'NR==2 {print $2}')."
echo "Command: \`bash bench/sbt_bench.sh $N\`"
