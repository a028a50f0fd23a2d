#!/usr/bin/env bash
# bench/compare_builds.sh OLD_GPUBPF [NEW_GPUBPF]: two builds side by side in one invocation:
# ns per cuLaunchKernel of the fake libcuda (workload on CPU 1, tracer on CPU 0), median
# of RUNS, for the default, --stack none and --lean modes, and each BPF program's own
# run_time_ns/run_cnt (kernel.bpf_stats_enabled). Run only on a quiet machine.
# WL_ARGS: more cuda_work arguments (-d 20: launches from 20 frames of ~500
# bytes, beyond the fp walk's window); MODES: the record modes, ;-separated
# ("top": gpubpf top -b instead); CALL=sync: cuStreamSynchronize (announced
# at entry, completed at return) against an empty uprobe + uretprobe on it.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd); WL=$ROOT/build/workloads
OLD=${1:?usage: compare_builds.sh OLD_GPUBPF [NEW_GPUBPF]}; NEW=${2:-$ROOT/build/gpubpf}
N=${N:-1000000}; RUNS=${RUNS:-5}
T=$(mktemp -d); cp $WL/libcuda.so.1 $T/libcuda.so.1; LIB=$T/libcuda.so.1
cc -O2 -I$ROOT/build/bpf -o $T/uprobe_floor $ROOT/bench/uprobe_floor.c -lbpf -lelf -lz || exit 1
sysctl -q kernel.bpf_stats_enabled=1
if [ "${CALL:-}" = sync ]; then FN=cuStreamSynchronize; FARGS=(-S); KEY=syncs; FRET=ret
else FN=cuLaunchKernel; FARGS=(-k bench); KEY=launches; FRET=; fi
one() { taskset -c 1 $WL/cuda_work -l $LIB -n $N "${FARGS[@]}" ${WL_ARGS:-} | sed -n "s/.*$KEY=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p" | awk '{printf "%.1f\n",$1/$2}'; }
med() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
meas() { local i; for ((i=0;i<RUNS;i++)); do one; done | med; }
start() { rm -f $T/ready; taskset -c 0 "$@" >$T/log 2>&1 & TP=$!; for _ in $(seq 400); do [ -e $T/ready ] && return 0; sleep 0.05; done; echo "no start: $(head -3 $T/log)"; return 1; }
bpfns() {	# run_time_ns/run_cnt of the tracer's programs
	for id in $(sed -n 's/^prog_id:[[:space:]]*//p' /proc/$TP/fdinfo/* 2>/dev/null | sort -u); do bpftool prog show id $id --json; echo; done |
	python3 -c '
import json,sys
out=[]
for l in sys.stdin:
    l=l.strip()
    if not l: continue
    p=json.loads(l)
    if p.get("run_cnt"): out.append("%s=%.0fns" % (p.get("name","?"), p["run_time_ns"]/p["run_cnt"]))
print(" ".join(out))'
}
stop() { kill -INT $TP 2>/dev/null; wait $TP 2>/dev/null; }
base=$(meas); echo "none $base"
start $T/uprobe_floor $LIB $FN $T/ready $FRET && { v=$(meas); echo "empty $v"; stop; }
IFS=';' read -r -a modes <<<"${MODES-;--stack none;--lean --stack none}"
for mode in "${modes[@]}"; do
	for b in OLD NEW; do
		bin=${!b}
		if [ "$mode" = top ]; then	# gpubpf top's programs instead
			start $bin top -b --quiet --lib $LIB --ready-file $T/ready && { v=$(meas); echo "$b top $v $(bpfns)"; stop; }
			continue
		fi
		start $bin record -a $mode -o $T/x.sbt --lib $LIB --ready-file $T/ready && { v=$(meas); echo "$b record -a ${mode:-(default fp)} $v $(bpfns)"; stop; }
	done
done
sysctl -q kernel.bpf_stats_enabled=0
rm -rf $T
