#!/usr/bin/env bash
# Issue 44 (discovery): a process whose first calls may have come before its
# probes were live is named in the trace, and every reader says so. Under
# record -a, a process that maps a library file new to the recorder (its
# own copy of libcuda) and launches at once: the probes are made only after
# the kernel reports the mapping, so its first calls are not in the trace;
# info names the process, the file and how late; the data-quality line of
# info and report counts it. Under -p --children, a GPU process's forked
# child is named too; a shell's child without GPU code is not, and nothing
# is where the launcher holds each child until acknowledged (--ack-dir).
source "$(dirname "$0")/../lib.sh"
need_bpf "late probes"

mkdir -p "$T/lib"
cp "$WL/libcuda.so.1" "$T/lib/libcuda.so.1"	# a new inode: attached when first mapped
start_record -a -o "$T/a.sbt" || { fail "record -a started"; exit 0; }
"$WL/cuda_work" -l "$T/lib/libcuda.so.1" -n 200 -k early >"$T/w.out"
P=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' "$T/w.out")
stop_record
"$GPUBPF" info --json "$T/a.sbt" >"$T/a.json" 2>"$T/a.err"
late=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
l = [x for x in d.get("late_probes", []) if x["pid"] == int(sys.argv[2])]
print(len(l), l[0]["after"] if l else "", 1 if l and l[0]["late_ns"] > 0 else 0, d["data_quality"]["processes_probed_late"])' "$T/a.json" "$P")
check_eq "info --json names the process, the file, a lateness > 0; data_quality counts it (pid $P)" \
	"1 $T/lib/libcuda.so.1 1 1" "$late"
"$GPUBPF" info "$T/a.sbt" >"$T/a.txt" 2>&1
check_true "info's text lists it under 'probes late'" \
	bash -c "grep -A3 '^probes late' '$T/a.txt' | grep -q 'pid $P .* ms after $T/lib/libcuda.so.1'"
"$GPUBPF" report "$T/a.sbt" >/dev/null 2>"$T/r.err"
for f in a.err r.err; do
	check_true "${f%.err}: the data-quality line says one process may miss its first calls" \
		grep -q '^gpubpf: data quality: 1 process probed late (its first calls may be missing' "$T/$f"
done

# -p --children: a GPU process's child forked after the recorder started
# (it has the library mapped from the fork on, and calls at once) is named
# late; a shell's child that maps no GPU code is not; with --ack-dir (the
# launcher holds each child until it is acknowledged) nothing is
cat >"$T/launcher.sh" <<EOF2
#!/bin/sh
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 50 -f 1 -w "$T/go" -k fam >"$T/fam.out" &
while [ ! -e "$T/go" ]; do sleep 0.02; done
wait
sleep 0.1
EOF2
chmod +x "$T/launcher.sh"
for mode in stream ack; do
	rm -f "$T/go"
	"$T/launcher.sh" &
	L=$!; _bg_pids+=($L)
	wait_for_cmd "pgrep -P $L -f cuda_work >/dev/null" 20 || { fail "$mode: the launcher's GPU process started"; continue; }
	CW=$(pgrep -P "$L" -f cuda_work)
	extra=()
	[ $mode = ack ] && { mkdir -p "$T/ack"; extra=(--ack-dir "$T/ack"); }
	start_record -p "$L" --children "${extra[@]}" -o "$T/$mode.sbt" --lib "$WL/libcuda.so.1" ||
		{ fail "record -p --children ($mode) started"; continue; }
	touch "$T/go"
	wait "$L"
	wait_for_cmd "! kill -0 $REC_PID 2>/dev/null" 20
	stop_record
	C=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' "$T/fam.out" | grep -vx "$CW")
	got=$("$GPUBPF" info --json "$T/$mode.sbt" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(str(x["pid"]) for x in d.get("late_probes", [])) or "none")')
	if [ $mode = stream ]; then
		check_eq "--children: the GPU process's forked child ($C) is named late, nothing else" "$C" "$got"
	else
		check_eq "--children --ack-dir: nothing named late (each child is held)" none "$got"
	fi
done
