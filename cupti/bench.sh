#!/usr/bin/env bash
# cupti/bench.sh: cost per device activity record in libgpubpf_cupti.so
# (record conversion + the "activity" USDT probe site), untraced and with a
# BPF program attached to the probe (bpftrace count(), the trap floor), for
# the shipped 5-byte-nop probe sites and for sdt.h's stock 1-byte nop.
# Median of 5 runs of N records each. Prints a Markdown section.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${CUPTI_BENCH_RECORDS:-200000}
O=${CUPTI_BENCH_OUT:-$ROOT/build/cupti}
echo "## CUPTI library: cost per activity record"
echo
if ! make --no-print-directory -s -C "$ROOT/cupti" OUT="$O" bench >/dev/null 2>&1 ||
   [ ! -x "$O/bench/bench_emit" ]; then
	echo "skipped: the CUPTI library does not build here (needs CUDA headers)"
	exit 0
fi
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
run() {	# LIB -> median ns per record
	for _ in 1 2 3 4 5; do "$O/bench/bench_emit" "$1" "$N" | sed 's/ns_per_record=//'; done | median
}
traced() {	# LIB -> median ns with a BPF program on the probe
	local log pid r i
	log=$(mktemp)
	bpftrace -e "usdt:$1:gpubpf:activity { @n = count(); }" >"$log" 2>&1 &
	pid=$!
	for i in $(seq 100); do grep -q Attaching "$log" && break; sleep 0.1; done
	sleep 0.5
	r=$(run "$1")
	kill -INT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	rm -f "$log"
	echo "$r"
}
nop5=$O/libgpubpf_cupti.so
nop1=$O/bench/libgpubpf_cupti_nop1.so
u5=$(run "$nop5"); u1=$(run "$nop1")
if [ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null; then
	t5=$(traced "$nop5"); t1=$(traced "$nop1")
else
	t5="n/a (needs root and bpftrace)"; t1=$t5
fi
echo "| probe site | untraced ns/record | BPF attached ns/record |"
echo "|---|---:|---:|"
echo "| 5-byte nop (shipped) | $u5 | $t5 |"
echo "| 1-byte nop (sys/sdt.h default) | $u1 | $t1 |"
echo
echo "Machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')."
echo "Command: \`bash cupti/bench.sh\` ($N records per run, median of 5; tracer: bpftrace count() on gpubpf:activity)."
