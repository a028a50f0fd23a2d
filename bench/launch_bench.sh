#!/usr/bin/env bash
# bench/launch_bench.sh [BUILD]: the hot path, every mode side by side in one
# invocation. N cuLaunchKernel calls of the fake libcuda per run (workload
# pinned to CPU 1, tracer to CPU 0), ROUNDS interleaved rounds (each round
# starts every tracer once, in turn), medians. Then one more run per mode
# with kernel.bpf_stats_enabled=1 for the BPF programs' own ns per call
# (run_time_ns / run_cnt; the timing rounds run with stats off, since
# stats add two clock reads per program run). Prints a Markdown section.
#   N=1000000 ROUNDS=3 bash bench/launch_bench.sh   (NN: ncclAllReduce calls per run, default N/4)
# Elsewhere (tests/gpu/run_h100.sh, from a bundle without a compiler): WL (the
# workloads), FLOOR (a built uprobe_floor) and BPFTOOL override the defaults.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
G=$B/gpubpf
WL=${WL:-$ROOT/build/workloads}
BPFTOOL=${BPFTOOL:-bpftool}
N=${N:-1000000}
ROUNDS=${ROUNDS:-3}
SN=${SN:-$((N / 4))}	# calls in the bpf_stats run
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$G" ] && [ -x "$WL/cuda_work" ] || { echo "build first: make all workloads" >&2; exit 1; }
T=$(mktemp -d /tmp/gpubpf-bench.XXXXXX)
TP=
STATS0=$(sysctl -n kernel.bpf_stats_enabled)
trap '[ -n "$TP" ] && kill -INT $TP 2>/dev/null; wait 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled=$STATS0; rm -rf "$T"' EXIT
sysctl -qw kernel.bpf_stats_enabled=0
# a private copy: probes other tools put on the shared file must not count here
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"
LIB=$T/libcuda.so.1
UF=${FLOOR:-$T/uprobe_floor}
[ -n "${FLOOR:-}" ] || cc -O2 -I"$B/bpf" -o "$UF" "$ROOT/bench/uprobe_floor.c" -lbpf -lelf -lz || exit 1
HAVE_BT=0
command -v bpftrace >/dev/null && HAVE_BT=1

# mode table: key | label | command (run on CPU 0; must create $T/ready)
MODES=(none floor floor_ret)
[ $HAVE_BT = 1 ] && MODES+=(bt_count bt_hist)
MODES+=(lean stack_none stack_none_rets default default_rets dwarf top)
label() {
	case $1 in
	none) echo "no tracing" ;;
	floor) echo "empty uprobe (the floor)" ;;
	floor_ret) echo "empty uprobe + empty uretprobe" ;;
	bt_count) echo "bpftrace \`count()\`" ;;
	bt_hist) echo "bpftrace entry+return \`hist(nsecs - @t[tid])\`" ;;
	lean) echo "\`record -a --lean\` (registers only, no stack)" ;;
	stack_none) echo "\`record -a --stack none\`" ;;
	stack_none_rets) echo "\`record -a --stack none --launch-returns\` (entry + return)" ;;
	default) echo "**\`record -a\`** (the default: launches at entry, 1 in 64 with its return, fp stacks)" ;;
	default_rets) echo "\`record -a --launch-returns\` (the default before: entry + return)" ;;
	dwarf) echo "\`record -a --stack dwarf\`" ;;
	top) echo "**\`top\`**" ;;
	esac
}
start_mode() {	# KEY: start its tracer on CPU 0, wait for it to be attached
	rm -f "$T/ready" "$T/out.sbt"
	TP=
	case $1 in
	none) return 0 ;;
	floor) taskset -c 0 "$UF" "$LIB" cuLaunchKernel "$T/ready" >"$T/log" 2>&1 & ;;
	floor_ret) taskset -c 0 "$UF" "$LIB" cuLaunchKernel "$T/ready" ret >"$T/log" 2>&1 & ;;
	bt_count) taskset -c 0 bpftrace --unsafe -e "uprobe:$LIB:cuLaunchKernel { @c = count(); }
		BEGIN { system(\"touch $T/ready\"); }" >"$T/log" 2>&1 & ;;
	bt_hist) taskset -c 0 bpftrace --unsafe -e "uprobe:$LIB:cuLaunchKernel { @t[tid] = nsecs; }
		uretprobe:$LIB:cuLaunchKernel /@t[tid]/ { @h = hist(nsecs - @t[tid]); delete(@t[tid]); }
		BEGIN { system(\"touch $T/ready\"); }" >"$T/log" 2>&1 & ;;
	lean) taskset -c 0 "$G" record -a --lean -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	stack_none) taskset -c 0 "$G" record -a --stack none -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	default) taskset -c 0 "$G" record -a -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	stack_none_rets) taskset -c 0 "$G" record -a --stack none --launch-returns -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	default_rets) taskset -c 0 "$G" record -a --launch-returns -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	dwarf) taskset -c 0 "$G" record -a --stack dwarf -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	top) taskset -c 0 "$G" top -b --quiet --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	nccl_none) return 0 ;;
	nccl_floor) taskset -c 0 "$UF" "$NLIB" ncclAllReduce "$T/ready" >"$T/log" 2>&1 & ;;
	nccl_default) taskset -c 0 "$G" record -a -o "$T/out.sbt" --lib "$NLIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	sync_none) return 0 ;;
	sync_floor) taskset -c 0 "$UF" "$LIB" cuStreamSynchronize "$T/ready" ret >"$T/log" 2>&1 & ;;
	sync_default) taskset -c 0 "$G" record -a -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	deep_none) return 0 ;;
	deep_floor) taskset -c 0 "$UF" "$LIB" cuLaunchKernel "$T/ready" >"$T/log" 2>&1 & ;;
	deep_stack_none) taskset -c 0 "$G" record -a --stack none -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	deep_default) taskset -c 0 "$G" record -a -o "$T/out.sbt" --lib "$LIB" --ready-file "$T/ready" >"$T/log" 2>&1 & ;;
	esac
	TP=$!
	for _ in $(seq 600); do
		[ -e "$T/ready" ] && return 0
		kill -0 $TP 2>/dev/null || break
		sleep 0.05
	done
	echo "$1 did not start: $(head -3 "$T/log")" >&2
	kill -INT $TP 2>/dev/null; wait $TP 2>/dev/null; TP=
	return 1
}
stop_mode() { [ -n "$TP" ] && { kill -INT $TP 2>/dev/null; wait $TP 2>/dev/null; }; TP=; }
one_run() {	# CALLS: ns per launch of one pinned workload run
	taskset -c 1 "$WL/cuda_work" -l "$LIB" -n "$1" -k bench | \
		sed -n 's/.*launches=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p' | awk '{ printf "%.1f\n", $1 / $2 }'
}
# CALLS: ns per ncclAllReduce of the fake libnccl (one rank, FAKE_NCCL_US=0: no set time)
nccl_run() {
	FAKE_NCCL_DIR=$T FAKE_NCCL_US=0 NCCL_WORK_ALLREDUCE=1 LD_LIBRARY_PATH=$T \
		taskset -c 1 "$WL/nccl_work" 0 1 "$T/ncclid.$RANDOM$RANDOM" "$1" | \
		sed -n 's/.* n=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p' | awk '{ printf "%.1f\n", $1 / $2 }'
}
# CALLS: ns per launch made DEEP (20) frames of ~500 bytes further down the stack than one_run's
DEEP=${DEEP:-20}
deep_run() {
	taskset -c 1 "$WL/cuda_work" -l "$LIB" -n "$1" -k bench -d "$DEEP" | \
		sed -n 's/.*launches=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p' | awk '{ printf "%.1f\n", $1 / $2 }'
}
# CALLS: ns per cuStreamSynchronize of the fake libcuda (returns at once)
sync_run() {
	taskset -c 1 "$WL/cuda_work" -l "$LIB" -n "$1" -S | \
		sed -n 's/.*syncs=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p' | awk '{ printf "%.1f\n", $1 / $2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
# run_time_ns and run_cnt of every loaded program, by name
prog_stats() { $BPFTOOL prog show -j 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    print(p["id"], p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))'; }

declare -A R BPF DROPS
for ((r = 0; r < ROUNDS; r++)); do
	for m in "${MODES[@]}"; do
		start_mode "$m" || continue
		echo "$(one_run "$N")" >>"$T/t.$m"
		stop_mode
		if [ "$m" = dwarf ] || [ "$m" = default ]; then
			d=$(sed -n 's/^gpubpf: \([0-9][0-9]*\) events\? dropped.*/\1/p' "$T/log" | tail -1)
			k=$(sed -n 's/.* \([0-9][0-9]*\) call stacks could not be taken.*/\1/p' "$T/log" | tail -1)
			echo "${d:-0} ${k:-0}" >>"$T/d.$m"
		fi
	done
done
# collectives: ncclAllReduce (announced at entry, completed at return: two records)
NMODES=(nccl_none nccl_floor nccl_default)
NN=${NN:-$((N / 4))}
cp "$WL/libnccl.so.2" "$T/libnccl.so.2"
NLIB=$T/libnccl.so.2
# RUN MODE...: ROUNDS interleaved rounds of "RUN $NN" under each mode, ns per call in $T/t.MODE
rounds() {
	local run=$1 r m
	shift
	for ((r = 0; r < ROUNDS; r++)); do
		for m in "$@"; do
			start_mode "$m" || continue
			echo "$($run "$NN")" >>"$T/t.$m"
			stop_mode
		done
	done
}
rounds nccl_run "${NMODES[@]}"
# calls that can block (sync, copy, alloc): announced at entry, completed at
# return; against an empty uprobe + uretprobe pair on the same function
SMODES=(sync_none sync_floor sync_default)
rounds sync_run "${SMODES[@]}"
# a deep stack: ~10 KiB of frames, one user read per page of them (gb_fp_walk)
DMODES=(deep_none deep_floor deep_stack_none deep_default)
rounds deep_run "${DMODES[@]}"
sysctl -qw kernel.bpf_stats_enabled=1
if start_mode deep_default; then
	prog_stats >"$T/s0"
	deep_run "$NN" >/dev/null
	prog_stats >"$T/s1"
	stop_mode
	BPF[deep_default]=$(awk -v n="$NN" 'NR == FNR { t[$1] = $3; c[$1] = $4; next }
		($1 in c) && $4 > c[$1] { tot += $3 - t[$1] } END { if (tot) printf "%.0f", tot / n }' "$T/s0" "$T/s1")
fi
sysctl -qw kernel.bpf_stats_enabled=0
for m in "${MODES[@]}" "${SMODES[@]}" "${NMODES[@]}" "${DMODES[@]}"; do [ -s "$T/t.$m" ] && R[$m]=$(median <"$T/t.$m"); done
for m in default dwarf; do
	[ -s "$T/d.$m" ] && DROPS[$m]=$(sort -n "$T/d.$m" | tail -1 | awk -v n="$N" \
		'{ printf "%d calls (%.1f%%) and %d stacks (%.1f%%) of %d", $1, 100 * $1 / n, $2, 100 * $2 / n, n }')
done

# the BPF programs' own cost, one run per mode with stats on
sysctl -qw kernel.bpf_stats_enabled=1
for m in "${MODES[@]}"; do
	[ "$m" = none ] && continue
	start_mode "$m" || continue
	prog_stats >"$T/s0"
	one_run "$SN" >/dev/null
	prog_stats >"$T/s1"
	stop_mode
	BPF[$m]=$(awk -v n="$SN" 'NR == FNR { t[$1] = $3; c[$1] = $4; next }
		($1 in c) && $4 > c[$1] { dc = $4 - c[$1]; dt = $3 - t[$1]; tot += dt
			s = s sprintf("%s%s %.0f", s == "" ? "" : ", ", $2, dt / dc) }
		END { if (s != "") printf "%.0f (%s)", tot / n, s }' "$T/s0" "$T/s1")
done
# what a call record is made of: one program per primitive, alone on the
# same function (bench_empty.bpf.c), ns per run less the empty program's
PRIMS="prim_read24 prim_read256 prim_read256_ts prim_read24_ring prim_read24_ring_sub prim_pc16 prim_pc512 prim_pc1024 prim_ktime prim_ring prim_ring192 prim_comm prim_storage prim_preempt prim_get_stack"
declare -A PRIM
for p in bench_empty $PRIMS; do
	rm -f "$T/ready"
	taskset -c 0 "$UF" "$LIB" cuLaunchKernel "$T/ready" "$p" >"$T/log" 2>&1 &
	TP=$!
	for _ in $(seq 200); do [ -e "$T/ready" ] && break; kill -0 $TP 2>/dev/null || break; sleep 0.05; done
	prog_stats >"$T/s0"
	one_run "$SN" >/dev/null
	prog_stats >"$T/s1"
	stop_mode
	PRIM[$p]=$(awk -v p="$p" 'NR == FNR { t[$1] = $3; c[$1] = $4; next }
		$2 == p && ($1 in c) && $4 > c[$1] { printf "%.0f", ($3 - t[$1]) / ($4 - c[$1]) }' "$T/s0" "$T/s1")
done
sysctl -qw kernel.bpf_stats_enabled=0
# a library op range (issue 25): N/10 cublasSgemm_v2 of the fake libcublas, each
# making one launch through the fake libcuda; ns per GEMM untraced and under
# record -a --stack none: the op's added cost is that less one traced launch's
OPN=$((N / 10))
op_run() { taskset -c 1 "$WL/blas_work" -n "$OPN" -e 0 -k 64 | \
	sed -n 's/.*sgemm=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p' | awk '{ printf "%.1f\n", $1 / $2 }'; }
OPBLAS=$WL/blas/libcublas.so.13
declare -A OP
if [ -x "$WL/blas_work" ] && [ -e "$OPBLAS" ]; then
	for ((r = 0; r < ROUNDS; r++)); do
		op_run >>"$T/op.none"
		rm -f "$T/ready"
		taskset -c 0 "$G" record -a --stack none -o "$T/out.sbt" --lib "$WL/libcuda.so.1" --lib "$OPBLAS" \
			--ready-file "$T/ready" >"$T/log" 2>&1 &
		TP=$!
		for _ in $(seq 600); do [ -e "$T/ready" ] && break; kill -0 $TP 2>/dev/null || break; sleep 0.05; done
		[ -e "$T/ready" ] && op_run >>"$T/op.rec"
		stop_mode
	done
	OP[none]=$(median <"$T/op.none")
	[ -s "$T/op.rec" ] && OP[rec]=$(median <"$T/op.rec")
fi
op_line() {
	[ -n "${OP[rec]:-}" ] || { echo "n/a (build blas_work first: make workloads)"; return; }
	# the op is a range (entry + return): set against a launch event with its
	# return (--launch-returns), and against one recorded at entry
	awk -v n="${OP[none]}" -v r="${OP[rec]}" -v l="${R[stack_none]:-0}" -v lr="${R[stack_none_rets]:-0}" -v b="$base" 'BEGIN {
		a = r - n; o = a - (l - b); printf "%.1f ns per GEMM untraced, %.1f traced: %.1f added, of which %.1f for its traced launch (`--stack none` above): the op range %.1f ns (%.2f x a launch event with its return, %.2f x one recorded at entry)", n, r, a, l - b, o, ((lr - b) > 0 ? o / (lr - b) : 0), ((l - b) > 0 ? o / (l - b) : 0) }'
}
prim() { awk -v v="${PRIM[$1]:-}" -v e="${PRIM[bench_empty]:-0}" 'BEGIN { if (v == "") print "n/a"; else printf "%.0f", v - e }'; }
# ns of primitive $1 above primitive $2 (each less the empty program's)
pdiff() { awk -v v="${PRIM[$1]:-}" -v b="${PRIM[$2]:-}" 'BEGIN { if (v == "" || b == "") print "n/a"; else printf "%.0f", v - b }'; }

base=${R[none]}
floor=$(awk -v e="${R[floor]:-0}" -v b="$base" 'BEGIN { print e - b }')
row() {	# KEY
	local v=${R[$1]:-}
	[ -n "$v" ] || { echo "| $(label "$1") | n/a | | | |"; return; }
	awk -v l="$(label "$1")" -v v="$v" -v b="$base" -v f="$floor" -v s="${BPF[$1]:-–}" 'BEGIN {
		a = v - b; printf "| %s | %.1f | %.1f | %s | %s |\n", l, v, a,
			(f > 0 && a > 0) ? sprintf("%.2f", a / f) : "–", s }'
}
nrow() {	# KEY LABEL [PREFIX]: the ncclAllReduce table (PREFIX sync: the sync table)
	local p=${3:-nccl}
	local v=${R[$1]:-} b=${R[${p}_none]:-} f
	[ -n "$v" ] && [ -n "$b" ] || { echo "| $2 | n/a | | |"; return; }
	f=$(awk -v e="${R[${p}_floor]:-0}" -v b="$b" 'BEGIN { print e - b }')
	awk -v l="$2" -v v="$v" -v b="$b" -v f="$f" 'BEGIN { a = v - b
		printf "| %s | %.1f | %.1f | %s |\n", l, v, a, (f > 0 && a > 0) ? sprintf("%.2f", a / f) : "–" }'
}
cat <<MD
## Hot path: cost per traced call, every mode (bench/launch_bench.sh)

\`bash bench/launch_bench.sh\` (from \`make bench\`; N=$N ROUNDS=$ROUNDS): $N \`cuLaunchKernel\`
calls of the fake libcuda per run, one thread pinned to CPU 1, the tracer on CPU 0,
$ROUNDS interleaved rounds (every tracer started once per round), medians. "× floor" is
the added cost divided by the empty uprobe's added cost. "BPF ns/call" is the BPF
programs' own run time per traced call (\`kernel.bpf_stats_enabled\`, one more run of
$SN calls per mode), then per program: ns per run.
Machine: $(nproc) vCPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r).

| mode | ns per call | added ns | × floor | BPF ns/call (per program) |
|---|---:|---:|---:|---|
$(for m in "${MODES[@]}"; do row "$m"; done)

\`ncclAllReduce\` of the fake libnccl ($NN calls per run, one rank, no set time: the
call itself is a few ns), same rounds; "× floor" against the empty uprobe on \`ncclAllReduce\`:

| mode | ns per call | added ns | × floor |
|---|---:|---:|---:|
$(nrow nccl_none "no tracing"; nrow nccl_floor "empty uprobe on \`ncclAllReduce\` (the floor)"; nrow nccl_default "**\`record -a\`**: \`ncclAllReduce\` announced at entry, completed at return")

A call that can block (\`cuStreamSynchronize\` of the fake libcuda, $NN calls per run, returns at
once), same rounds; "× floor" against an empty uprobe and an empty uretprobe on it (issue 44: ≤ 1.5):

| mode | ns per call | added ns | × floor |
|---|---:|---:|---:|
$(nrow sync_none "no tracing" sync; nrow sync_floor "empty uprobe + empty uretprobe on \`cuStreamSynchronize\` (the floor)" sync; nrow sync_default "**\`record -a\`**: announced at entry with its stack, completed at return" sync)

Launches from a stack $DEEP frames deeper (\`cuda_work -d $DEEP\`: $((DEEP + 3)) frames, each past the first
two ~500 bytes: ~10 KiB, 3 pages of stack), $NN calls per run, same rounds; "× floor" against
the empty uprobe on this stack:

| mode | ns per call | added ns | × floor |
|---|---:|---:|---:|
$(nrow deep_none "no tracing" deep; nrow deep_floor "empty uprobe (the floor)" deep; nrow deep_stack_none "\`record -a --stack none\`" deep; nrow deep_default "**\`record -a\`** (fp stacks)" deep)

BPF ns per launch on this stack, default: ${BPF[deep_default]:-n/a} (the fp walk reads the stack a page at a time: one user read per page of frames, bpf/cuda.bpf.c).

Lost to a full ring (default ring: 8 MiB, 64 MiB with \`--stack dwarf\`; worst round): default ${DROPS[default]:-n/a}; \`--stack dwarf\` ${DROPS[dwarf]:-n/a}.
Library op range (a fake \`cublasSgemm_v2\` making one launch, $OPN calls, \`record -a --stack none\`): $(op_line).
Frame-pointer stack cost (default − \`--stack none\`): $(awk -v a="${R[default]:-0}" -v b="${R[stack_none]:-0}" 'BEGIN { printf "%.0f", a - b }') ns per call.

bpf_stats adds ${PRIM[bench_empty]:-n/a} ns to every program run (the empty program's figure): the
BPF ns above include it once per program. What a call record is made of, one program per
primitive (bpf/bench_empty.bpf.c) alone on the same function, ns per run less the empty
program's: a user read of 24 bytes to the task's kernel stack $(prim prim_read24), of 256 bytes to a
per-CPU private stack (a BPF frame of 64 bytes or more, 6.13+) $(prim prim_read256); \`bpf_ktime_get_ns\` $(prim prim_ktime);
a ring record written whole and read by a consumer, 64 bytes $(prim prim_ring), 192 bytes $(prim prim_ring192); \`bpf_get_current_comm\` $(prim prim_comm); a task-storage
lookup $(prim prim_storage); \`bpf_get_stack(BPF_F_USER_STACK)\` of this 4-frame stack $(prim prim_get_stack);
\`bpf_preempt_disable\` and \`_enable\` $(prim prim_preempt) (the guard on kernels that preempt, host/preempt.h).
Where a user read goes costs as much as the copy (the kernel checks the destination): 256 bytes
into task storage (a slab object) $(pdiff prim_read256_ts prim_storage) against $(prim prim_read256) to the private stack;
24 bytes into a 64-byte ring record $(pdiff prim_read24_ring prim_ring), $(pdiff prim_read24_ring_sub prim_ring) read to a small
subprogram's frame (the task's stack) and copied, as the hot path reads a launch's stack arguments.
What size costs (into a per-CPU map value, as the fp walk reads its window): 16 bytes $(prim prim_pc16), 512 bytes
$(prim prim_pc512) (within the page of sp here), 1 KiB $(prim prim_pc1024) (across its end).
MD
