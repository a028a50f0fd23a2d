#!/usr/bin/env bash
# tests/gpu/run_h100.sh [--dry-run] [--only "N ..."]
#
# Issue 41: gpubpf on a real GPU stack (one H100, PyTorch cu130 wheels), in
# one call. Sections 1-8 each print exactly one line
#     RESULT <n> <PASS|FAIL|SKIP> <one line of measured fact>
# and everything lands under $OUT (at most 8 files): results.txt (the
# RESULT lines and the host), check.txt (gpubpf check), overhead.md (rows
# for BENCHMARKS.md), hotpath.md (section 9: issue 44's hot-path table on
# that host), logs.tar.gz (logs, JSON, the smaller traces).
# Each section runs under `timeout` (its own budget, cut to what is left of
# GB_BUDGET, default 565 s, for all of them); a missing piece (no torch, no
# GPU, no NCCL) gives SKIP with the reason, never an abort.
#
# --dry-run (or GB_DRY=1): the same script without GPU or torch, against the
# project's fake libraries (build/workloads, build/cupti/usdt_app) and
# tests/gpu/fakegpu.py, to prove the plumbing. Here, wrap it as
#     flock /tmp/gpubpf-bpf.lock bash tests/gpu/run_h100.sh --dry-run
# Needs the bundle (tests/gpu/bundle.sh); README.md in this folder.
case " $* " in *" --section "*) ;; *) echo "uname -r: $(uname -r)" ;; esac
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DRY=${GB_DRY:-0}
SECTION=
ONLY="1 2 3 5 6 7 8 9 4"	# overhead last: the longest, cut first when time runs out
while [ $# -gt 0 ]; do
	case $1 in
	--dry-run) DRY=1 ;;
	--section) SECTION=$2; shift ;;
	--only) ONLY=$2; shift ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "run_h100.sh: unknown argument $1 (--dry-run, --only \"N ...\")" >&2; exit 2 ;;
	esac
	shift
done

# ---------------------------------------------------------------- helpers
now() { date +%s%N; }
# inside a section: a timeout that stays in the section's process group, so
# that the section's own timeout (a signal to the whole group) reaches what
# it started too (a plain `timeout` makes a group of its own)
tmo() { timeout --foreground "$@"; }
# progress in the section's log: its last line names where a timeout struck
say() { echo "[$(date +%T)] $*"; }
# result N STATUS FACT...: the section's one line
result() {
	local n=$1 st=$2
	shift 2
	echo "RESULT $n $st $*" >"$W/result.$n"
	echo "RESULT $n $st $*"
}
BG=()
bg_cleanup() {
	local p
	for p in "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ "$DRY$SECTION" = 17 ] && touch "$W/s7.release" 2>/dev/null	# the fake driver lets go
	wait 2>/dev/null
}
wait_file() {	# FILE SECS
	local i n=$(( $2 * 10 ))
	for ((i = 0; i < n; i++)); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}
# wait_pid PID SECS: until it is gone (SIGKILL after SECS); its exit status
wait_pid() {
	local i n=$(( $2 * 10 ))
	for ((i = 0; i < n; i++)); do
		kill -0 "$1" 2>/dev/null || break
		[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ] && break
		sleep 0.1
	done
	kill -0 "$1" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ] && kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
alive() { kill -0 "$1" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# start_rec NAME ARGS...: gpubpf record in the background until its probes are in
start_rec() {
	local name=$1
	shift
	"$GB" record --ready-file "$W/$name.ready" -o "$W/$name.sbt" "$@" >"$W/$name.rec.log" 2>&1 &
	REC=$!
	BG+=("$REC")
	wait_file "$W/$name.ready" 60
}
stop_rec() {
	kill -INT "$REC" 2>/dev/null
	wait_pid "$REC" 60
	REC_RC=$?
}
# cmp ARGS...: compare.py's verdict into CST (PASS/FAIL/SKIP) and CFACT
cmp() {
	local line
	line=$(GB=$GB tmo 180 "$HPY" "$HERE/compare.py" "$@" 2>>"$W/compare.err" | tail -1)
	[ -n "$line" ] || line="FAIL compare.py $1 printed nothing (compare.err)"
	CST=${line%% *}
	CFACT=${line#* }
}
# wl KIND ARGS...: the workload's command line into WLCMD (torch, or fakegpu.py in a dry run)
wl() {
	local kind=$1
	shift
	if [ "$DRY" = 1 ]; then
		WLCMD=(env "FAKE_CUDA_RELEASE=$W/s7.release" "FAKE_CUDA_BLOCKED=$W/s7.blocked"
		       "$HPY" "$HERE/fakegpu.py" "$kind" --lib "$WL/libcuda.so.1" "$@")
	else
		WLCMD=(env $WL_ENV "$PY" "$HERE/$kind.py" "$@")
	fi
}
need_torch() {	# N
	if [ "$DRY" != 1 ] && [ "$HAVE_TORCH" != 1 ]; then
		result "$1" SKIP "$TORCH_WHY"
		exit 0
	fi
}
# workload_failed N RC LOG: a SKIP (77) or FAIL line for a workload that did not run
workload_failed() {
	if [ "$2" = 77 ] || grep -q '^SKIP:' "$3" 2>/dev/null; then
		result "$1" SKIP "$(grep -m1 '^SKIP:' "$3" | cut -c7-)"
	else
		result "$1" FAIL "workload exited $2: $(tail -1 "$3" 2>/dev/null | cut -c1-200)"
	fi
}
devcount() {	# TRACE PID: device kernel records of PID
	GB=$GB "$HPY" - "$1" "$2" <<'PY' 2>/dev/null || echo 0
import json, os, subprocess, sys
out = subprocess.run([os.environ["GB"], "view", "--json", "--pid", sys.argv[2], sys.argv[1]],
                     stdout=subprocess.PIPE, timeout=120).stdout.decode()
print(sum(1 for l in out.splitlines() if l.strip() and json.loads(l).get("type") == "gpu_kernel"))
PY
}
stepms() { "$HPY" "$HERE/compare.py" steptime --steps "$1" --window "$2" "$3" 2>/dev/null || echo none; }
pct() { "$HPY" -c 'import sys; a, b = sys.argv[1:3]; print("n/a" if "none" in (a, b) else f"{100 * (float(b) - float(a)) / float(a):+.1f}%")' "$1" "$2"; }

# ---------------------------------------------------------------- sections
# 1. discovery: record -a before a 100-step training loop, vs torch.profiler per step
s1() {
	need_torch 1
	say "record -a, then train.py --steps 100 --profile"
	start_rec s1 -a $RECLIBS || { result 1 FAIL "record -a not ready in 60 s: $(tail -1 "$W/s1.rec.log")"; return; }
	wl train --steps 100 --profile --prof-out "$W/s1.prof.json" --step-log "$W/s1.steps" --pid-file "$W/s1.pid"
	tmo 150 "${WLCMD[@]}" >"$W/s1.train.log" 2>&1
	local rc=$?
	stop_rec
	[ "$rc" = 0 ] || { workload_failed 1 "$rc" "$W/s1.train.log"; return; }
	cmp discovery --trace "$W/s1.sbt" --pid "$(cat "$W/s1.pid")" --steps "$W/s1.steps" \
		--prof "$W/s1.prof.json" --detail "$W/s1.detail.json"
	result 1 "$CST" "record -a (rc $REC_RC): $CFACT"
}

# 2. record --cupti -- python train.py: device time of every kernel, vs the profiler's (section 1)
s2() {
	need_torch 2
	local pid rc
	if [ "$DRY" = 1 ]; then
		tmo 60 "$GB" record --cupti -o "$W/s2.sbt" $RECLIBS -- "$CUPTI_APP" "$CUPTI_LIB" "$WL/libcuda.so.1" 5 \
			>"$W/s2.train.log" 2>&1
		rc=$?
		pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$W/s2.train.log")
	else
		wl train --steps 60 --step-log "$W/s2.steps" --pid-file "$W/s2.pid"
		# a crash of the job (seen on the first H100 run: SIGSEGV in its first async copy):
		# Python's fault handler prints every thread's Python stack, the kernel's log
		# names the library and offset of the faulting instruction
		tmo 150 "$GB" record --cupti -o "$W/s2.sbt" -- env PYTHONFAULTHANDLER=1 "${WLCMD[@]}" \
			>"$W/s2.train.log" 2>&1
		rc=$?
		pid=$(cat "$W/s2.pid" 2>/dev/null)
		dmesg 2>/dev/null | grep -E "segfault|general protection|trap" | tail -5 >"$W/s2.dmesg"
		if [ -n "$pid" ] && "$GB" view "$W/s2.sbt" 2>/dev/null | grep -q "process_exit.*ret=[1-9]"; then
			result 2 FAIL "the job died: $("$GB" view "$W/s2.sbt" 2>/dev/null | grep -v __cudaRegister | grep -B2 process_exit | tr -s ' ' | cut -c1-160 | tr '\n' '|'); kernel: $(tail -1 "$W/s2.dmesg" | cut -c1-200)"
			return
		fi
	fi
	[ "$rc" = 0 ] && [ -n "$pid" ] || { workload_failed 2 "$rc" "$W/s2.train.log"; return; }
	cmp device --trace "$W/s2.sbt" --pid "$pid" --steps "$W/s2.steps" --prof "$W/s1.prof.json" \
		--detail "$W/s2.detail.json"
	result 2 "$CST" "$CFACT"
}

# a training loop in the background until its stop file; P its pid
start_train() {	# NAME SECONDS
	say "train.py --seconds $2 in the background"
	wl train --seconds "$2" --stop-file "$W/$1.stop" --step-log "$W/$1.steps" --pid-file "$W/$1.pid" \
		--ready-file "$W/$1.ready" --warmup 5
	"${WLCMD[@]}" >"$W/$1.train.log" 2>&1 &
	J=$!
	BG+=("$J")
	wait_file "$W/$1.ready" 90 && P=$(cat "$W/$1.pid") && sleep 1
}

# 3. record -p PID --cupti -d 10 on the running loop; step time after vs before; a second attach
s3() {
	need_torch 3
	start_train s3 200 || { workload_failed 3 "not ready in 90 s" "$W/s3.train.log"; return; }
	local t0 t1 t3 t4 r1 r2 a1 a2 jrc
	t0=$(now); sleep "$WIN"; t1=$(now)
	say "record -p $P --cupti -d $S3_D"
	tmo 60 "$GB" record -p "$P" --cupti -d "$S3_D" -o "$W/s3a.sbt" $RECLIBS >"$W/s3a.log" 2>&1
	r1=$?
	alive "$P" && a1=yes || a1=no
	sleep 1; t3=$(now); sleep "$WIN"; t4=$(now)
	say "second attach"
	tmo 40 "$GB" record -p "$P" --cupti -d 3 -o "$W/s3b.sbt" $RECLIBS >"$W/s3b.log" 2>&1
	r2=$?
	alive "$P" && a2=yes || a2=no
	touch "$W/s3.stop"
	wait_pid "$J" 30
	jrc=$?
	cmp inject --trace "$W/s3a.sbt" --trace2 "$W/s3b.sbt" --pid "$P" --steps "$W/s3.steps" \
		--before "$t0" "$t1" --after "$t3" "$t4"
	[ "$r1$r2$a1$a2$jrc" = 00yesyes0 ] || CST=FAIL
	result 3 "$CST" "-d $S3_D: $CFACT; record rc $r1/$r2; job alive after each: $a1/$a2; job exit $jrc;" \
		"$(grep -m1 -o 'library injected, [^[]*' "$W/s3a.log" | cut -c1-100)"
}

# 4. overhead: steps/s untraced vs record -a, --lean, top, --cupti; ns added per launch
s4_loop() {	# MODE LAUNCHES_PER_STEP LABEL
	local m=$1 k=$2 lbl=$3 ph args
	local win=$W/s4.$m.windows
	: >"$win"
	wl loop --mode "$m" --stop-file "$W/s4.$m.stop" --rate-log "$W/s4.$m.rates" --pid-file "$W/s4.$m.pid" \
		--ready-file "$W/s4.$m.ready" --seconds 200
	"${WLCMD[@]}" >"$W/s4.$m.log" 2>&1 &
	J=$!
	BG+=("$J")
	if ! wait_file "$W/s4.$m.ready" 90; then
		CST=FAIL; CFACT="$lbl: workload not ready: $(tail -1 "$W/s4.$m.log" | cut -c1-150)"
		grep -q '^SKIP:' "$W/s4.$m.log" && { CST=SKIP; CFACT="$lbl: $(grep -m1 '^SKIP:' "$W/s4.$m.log" | cut -c7-)"; }
		kill -9 "$J" 2>/dev/null
		return
	fi
	window() { local a; a=$(now); sleep "$WIN"; echo "$1 $a $(now)" >>"$win"; }
	window untraced-before
	for ph in "record-a:-a" "lean:-a --lean" "top:" "cupti:-a --cupti"; do
		args=${ph#*:}
		say "$m: ${ph%%:*}"
		if [ "${ph%%:*}" = top ]; then
			"$GB" top -b -q -i 1 --ready-file "$W/s4.$m.top.ready" $RECLIBS >"$W/s4.$m.top.log" 2>&1 &
			REC=$!
			BG+=("$REC")
			wait_file "$W/s4.$m.top.ready" 60 && window top
			stop_rec
		else
			start_rec "s4.$m.${ph%%:*}" $args $RECLIBS && window "${ph%%:*}"
			stop_rec
		fi
	done
	sleep 1
	window untraced-after
	touch "$W/s4.$m.stop"
	wait_pid "$J" 30
	cmp overhead --rate-log "$W/s4.$m.rates" --windows "$win" --launches-per-step "$k" --label "$lbl" \
		--md "$OUT/overhead.md"
}
s4() {
	need_torch 4
	local st1 f1
	[ -e "$OUT/overhead.md" ] || {
		echo "<!-- run_h100.sh section 4, $(date -u +%F), $HOSTDESC -->"
		echo "| loop | traced with | steps/s | untraced steps/s | change | ns added per launch |"
		echo "|---|---|---:|---:|---:|---:|"
	} >"$OUT/overhead.md"
	local fake=
	[ "$DRY" = 1 ] && fake="fake "
	s4_loop launch 100 "${fake}launch-bound (100 x add_ on 1 float)"
	st1=$CST f1=$CFACT
	s4_loop gemm 4 "${fake}GEMM-bound (4 x bf16 8192^3)"
	[ "$st1" = PASS ] && [ "$CST" = PASS ] || CST=FAIL
	result 4 "$CST" "$f1 | $CFACT"
}

# 5. --ioctl on the training loop's driver calls; gpubpf check's summary
s5() {
	need_torch 5
	local rc pid chk
	chk=$("$HPY" "$HERE/compare.py" checksum --json "$W/check.json" 2>/dev/null | tail -1)
	if [ "$DRY" = 1 ]; then
		start_rec s5 -a --ioctl-dev /dev/null=nvidia --ioctl-dev /dev/full=kfd ||
			{ result 5 FAIL "record --ioctl not ready: $(tail -1 "$W/s5.rec.log")"; return; }
		tmo 30 "$WL/ioctl_work" calls /dev/null /dev/full >"$W/s5.train.log" 2>&1
		rc=$?
		pid=$(head -1 "$W/s5.train.log")
	else
		start_rec s5 -a --ioctl || { result 5 FAIL "record -a --ioctl not ready: $(tail -1 "$W/s5.rec.log")"; return; }
		wl train --steps 20 --pid-file "$W/s5.pid"
		tmo 120 "${WLCMD[@]}" >"$W/s5.train.log" 2>&1
		rc=$?
		pid=$(cat "$W/s5.pid" 2>/dev/null)
	fi
	stop_rec
	[ "$rc" = 0 ] || { workload_failed 5 "$rc" "$W/s5.train.log"; return; }
	cmp ioctl --trace "$W/s5.sbt" --pid "$pid"
	result 5 "$CST" "$CFACT; source: $("$GB" info --json "$W/s5.sbt" 2>/dev/null | "$HPY" -c 'import json,sys; print((json.load(sys.stdin).get("ioctl") or {}).get("source"))' 2>/dev/null); $chk"
}

# 6. NCCL: one-GPU all-reduce (world size 1), communicator and sequence numbers
s6() {
	need_torch 6
	local rc
	if [ "$DRY" = 1 ]; then
		NCCL_WORK_ALLREDUCE=1 tmo 60 "$GB" record -o "$W/s6.sbt" --lib "$WL/libnccl.so.2" -- \
			"$WL/nccl_work" 0 1 "$W/s6.id" 20 >"$W/s6.log" 2>&1
	else
		wl allreduce --iters 20
		tmo 150 "$GB" record -o "$W/s6.sbt" -- "${WLCMD[@]}" >"$W/s6.log" 2>&1
	fi
	rc=$?
	grep -q '^SKIP:' "$W/s6.log" && { workload_failed 6 77 "$W/s6.log"; return; }
	[ "$rc" = 0 ] || { workload_failed 6 "$rc" "$W/s6.log"; return; }
	cmp nccl --trace "$W/s6.sbt" --iters 20
	result 6 "$CST" "$CFACT; $(grep -m1 -o 'allreduce iters=.*\|elapsed_ns.*' "$W/s6.log")"
}

# 7. gpubpf stuck -p on a process blocked in cudaStreamSynchronize behind a spinning kernel
s7() {
	need_torch 7
	local v p parts=() st=PASS
	for v in spin blocking; do
		wl hang --seconds 60 --pid-file "$W/s7.$v.pid" --waiting-file "$W/s7.$v.wait" \
			$([ $v = blocking ] && echo --blocking-sync)
		"${WLCMD[@]}" >"$W/s7.$v.log" 2>&1 &
		BG+=("$!")
	done
	for v in spin blocking; do
		if ! wait_file "$W/s7.$v.wait" 60; then
			grep -q '^SKIP:' "$W/s7.$v.log" && { workload_failed 7 77 "$W/s7.$v.log"; return; }
			parts+=("$v sync: workload never reached the sync ($(tail -1 "$W/s7.$v.log" | cut -c1-100))")
			st=FAIL
			continue
		fi
	done
	sleep 1.5
	say "stuck -p on both"
	for v in spin blocking; do
		[ -e "$W/s7.$v.wait" ] || continue
		p=$(cat "$W/s7.$v.pid")
		tmo 30 "$GB" stuck -p "$p" >"$W/s7.$v.stuck.txt" 2>&1
		tmo 30 "$GB" stuck -p "$p" --json >"$W/s7.$v.stuck.json" 2>"$W/s7.$v.stuck.err"
		cmp stuck --text "$W/s7.$v.stuck.txt" --json "$W/s7.$v.stuck.json" --func 'StreamSynchronize' \
			--pyfunc wait_for_gpu
		[ "$CST" = PASS ] || st=FAIL
		parts+=("$v sync: $CFACT")
		kill -9 "$p" 2>/dev/null
	done
	result 7 "$st" "$(IFS='|'; echo "${parts[*]}")"
}

# 8. gpubpf SIGKILLed during the attach and during the detach of record -p --cupti
s8() {
	need_torch 8
	start_train s8 200 || { workload_failed 8 "not ready in 90 s" "$W/s8.train.log"; return; }
	local t0 t1 t3 t4 ka kd aa ad n jrc b af d st=PASS
	t0=$(now); sleep "$WIN"; t1=$(now)
	"$GB" record -p "$P" --cupti -d 5 -o "$W/s8a.sbt" $RECLIBS >"$W/s8a.log" 2>&1 &
	REC=$!
	say "attach, to be killed"
	ka=$("$HPY" "$HERE/killer.py" --target "$P" --tracer "$REC" --phase attach --timeout 30)
	wait_pid "$REC" 30
	sleep 1
	alive "$P" && aa=yes || aa=no
	# -d counts from just after the injection's message: the detach starts ~2 s after it
	# and takes a few ms, so the kill aims at 2 s less a little; where the recorder
	# ended first (it detached cleanly), again a little earlier
	for after in 1.97 1.9 1.75; do
		"$GB" record -p "$P" --cupti -d 2 -o "$W/s8b.sbt" $RECLIBS >"$W/s8b.log" 2>&1 &
		REC=$!
		say "attach, killed in the detach (${after} s after the injection)"
		kd=$("$HPY" "$HERE/killer.py" --target "$P" --tracer "$REC" --phase detach --log "$W/s8b.log" --after "$after" --timeout 30)
		wait_pid "$REC" 30
		case $kd in hit*) break ;; esac
		sleep 0.5
	done
	sleep 12	# the library's lease (10 s) runs out: it switches CUPTI off by itself
	alive "$P" && ad=yes || ad=no
	t3=$(now); sleep "$WIN"; t4=$(now)
	say "a later attach"
	tmo 40 "$GB" record -p "$P" --cupti -d 2 -o "$W/s8c.sbt" $RECLIBS >"$W/s8c.log" 2>&1
	n=$(devcount "$W/s8c.sbt" "$P")
	touch "$W/s8.stop"
	wait_pid "$J" 30
	jrc=$?
	b=$(stepms "$W/s8.steps" "$t0" "$t1")
	af=$(stepms "$W/s8.steps" "$t3" "$t4")
	case "$ka $kd" in "hit "*"hit "*) ;; *) st=FAIL ;; esac
	[ "$aa$ad$jrc" = yesyes0 ] || st=FAIL
	d=$(pct "$b" "$af")
	[ "$d" != n/a ] && "$HPY" -c 'import sys; sys.exit(abs(float(sys.argv[1])) > 3)' "${d%\%}" || st=FAIL
	[ "${n:-0}" -gt 0 ] 2>/dev/null || st=FAIL
	result 8 "$st" "attach: $ka, job alive $aa; detach: $kd, job alive $ad; step time before $b ms," \
		"after $af ms ($d); a later attach: $n device kernels; job exit $jrc"
}

# 9. issue 44's hot-path table on this host: bench/launch_bench.sh from the bundle
# (fake libcuda/libnccl, no GPU use), every mode against the empty uprobe measured
# in the same run; the table goes to $OUT/hotpath.md
s9() {
	local B=$(dirname "$(dirname "$GB")") md=$W/hotpath.md fact st=PASS k v
	[ -x "$B/wl/cuda_work" ] && [ -x "$B/bin/uprobe_floor" ] || { result 9 SKIP "no wl/ or bin/uprobe_floor in the bundle (bundle.sh)"; return; }
	say "launch_bench.sh N=$S9_N ROUNDS=$S9_ROUNDS"
	N=$S9_N ROUNDS=$S9_ROUNDS WL=$B/wl FLOOR=$B/bin/uprobe_floor \
		BPFTOOL="env LD_LIBRARY_PATH=$B/lib $B/bin/bpftool" \
		bash "$B/bench/launch_bench.sh" "$(dirname "$GB")" >"$md" 2>"$W/s9.err"
	cp "$md" "$OUT/hotpath.md" 2>/dev/null
	# "× floor" of each row issue 44 sets a goal for (the table's 4th column)
	fact=$("$HPY" - "$md" <<'PY'
import re, sys
rows = {}
for l in open(sys.argv[1]):
    c = [x.strip() for x in l.strip().strip("|").split("|")]
    if len(c) >= 4 and l.startswith("|"):
        rows[c[0]] = c
want = [("default", "**`record -a`** (the default"), ("none", "`record -a --stack none`"),
        ("lean", "`record -a --lean`"), ("dwarf", "`record -a --stack dwarf`"), ("top", "**`top`**"),
        ("sync pair", "**`record -a`**: announced at entry")]
out, miss = [], 0
for k, pre in want:
    r = next((c for n, c in rows.items() if n.startswith(pre)), None)
    v = r[3] if r and re.match(r"^[0-9.]+$", r[3]) else None
    miss += v is None
    out.append(f"{k} {v or 'n/a'}x")
fl = next((c for n, c in rows.items() if n.startswith("empty uprobe (the floor)")), None)
print(("MISSING " if miss else "") + ", ".join(out) + f"; the floor adds {fl[2] if fl else 'n/a'} ns")
PY
)
	case $fact in MISSING*) st=FAIL; fact=${fact#MISSING } ;; esac
	result 9 "$st" "x the empty uprobe: $fact ($(grep -m1 '^Machine:' "$md" | cut -c10-90))"
}

# ---------------------------------------------------------------- one section (re-exec'd under timeout)
if [ -n "$SECTION" ]; then
	trap bg_cleanup EXIT
	trap 'exit 124' TERM
	"s$SECTION"
	exit 0
fi

# ---------------------------------------------------------------- the whole run
START=$SECONDS
BUDGET=${GB_BUDGET:-565}
if [ -z "${OUT:-}" ]; then
	OUT=$(mktemp -d /tmp/gpubpf-out.XXXXXX)
	echo "OUT not set: results go to $OUT"
fi
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gpubpf-gpu.XXXXXX)
RES=$OUT/results.txt
BUNDLE=${GPUBUNDLE:-$ROOT/.gpubundle}
[ -x "$HERE/../bin/gpubpf" ] && BUNDLE=$(cd "$HERE/.." && pwd)	# run from inside a bundle
GB=$BUNDLE/bin/gpubpf
PY=${GB_PYTHON:-/opt/torch/.venv/bin/python}
HPY=$(command -v python3 || echo "$PY")
WL=$ROOT/build/workloads
CUPTI_LIB=$BUNDLE/lib/gpubpf/libgpubpf_cupti.so
CUPTI_APP=$ROOT/build/cupti/usdt_app
WIN=${GB_WIN:-3}
S3_D=${GB_S3_D:-10}
S9_N=${GB_S9_N:-200000}
S9_ROUNDS=${GB_S9_ROUNDS:-2}
RECLIBS=
WL_ENV=
HAVE_TORCH=0
TORCH_WHY="no torch probe"
HOSTDESC="dry run on $(uname -r), fake libraries"
[ "$DRY" = 1 ] && { RECLIBS="--lib $WL/libcuda.so.1"; WIN=${GB_WIN:-1}; S3_D=${GB_S3_D:-3}; }

finish() {
	local big
	cp "$W/check.txt" "$OUT/check.txt" 2>/dev/null
	# the logs in one file; traces only while the archive stays well under 16 MiB
	big=$(cd "$W" && find . -name '*.sbt' -size +3M -printf '--exclude=%P\n')
	tar -C "$W" $big -czf "$OUT/logs.tar.gz" . 2>/dev/null
	if [ "$(stat -c %s "$OUT/logs.tar.gz")" -gt $((14 << 20)) ]; then
		tar -C "$W" --exclude='*.sbt' -czf "$OUT/logs.tar.gz" . 2>/dev/null
	fi
	echo "== results ($OUT: $(cd "$OUT" && echo *))"
	grep '^RESULT' "$RES"
	echo "== $(( SECONDS - START )) s in all"
	rm -rf "$W"
}
trap finish EXIT

{
	echo "# gpubpf run_h100.sh $([ "$DRY" = 1 ] && echo "--dry-run ")$(date -u '+%F %T UTC')"
	echo "# uname -r: $(uname -r)"
	echo "# bundle: $(head -1 "$BUNDLE/MANIFEST" 2>/dev/null || echo "none at $BUNDLE")"
} >"$RES"
stop_all() {	# REASON: every section SKIP, then exit
	local n
	echo "run_h100.sh: $1" | tee -a "$RES"
	for n in $ONLY; do echo "RESULT $n SKIP $1" | tee -a "$RES"; done
	exit 1
}
[ -x "$GB" ] || stop_all "no bundle at $BUNDLE: run tests/gpu/bundle.sh first and carry .gpubundle"
[ "$(id -u)" = 0 ] || stop_all "not root: BPF needs root here"
if ! "$GB" --version >"$W/version.txt" 2>&1; then
	stop_all "the bundled gpubpf does not run here: $(head -1 "$W/version.txt")"
fi
case "$(uname -r)" in 4.4.0*) stop_all "kernel $(uname -r) (gVisor?): no BPF here" ;; esac
[ -r /sys/kernel/btf/vmlinux ] || stop_all "kernel $(uname -r) has no BTF (/sys/kernel/btf/vmlinux): BPF programs cannot load"
timeout 60 "$GB" check >"$W/check.txt" 2>&1
echo "# gpubpf check exit $?" >>"$RES"
timeout 60 "$GB" check --json >"$W/check.json" 2>/dev/null
# the proof that BPF loads here: a one-second system-wide recording
if ! timeout 60 "$GB" record -a -d 1 -o "$W/probe.sbt" >"$W/probe.log" 2>&1; then
	stop_all "BPF cannot load here: gpubpf record -a -d 1 failed: $(grep -v '^$' "$W/probe.log" | tail -1 | cut -c1-200)"
fi

if [ "$DRY" = 1 ]; then
	for f in libcuda.so.1 libnccl.so.2 nccl_work ioctl_work; do
		[ -e "$WL/$f" ] || stop_all "dry run needs $WL/$f: make -j2 workloads"
	done
	[ -x "$CUPTI_APP" ] || stop_all "dry run needs $CUPTI_APP: make -j2 cupti"
else
	{
		nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
		head -1 /proc/driver/nvidia/version 2>/dev/null
	} >"$W/gpu.txt"
	if [ ! -x "$PY" ]; then
		TORCH_WHY="no python at $PY (GB_PYTHON)"
	elif timeout 90 "$PY" -c 'import torch, sys
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NO-GPU")' \
		>"$W/torch.txt" 2>&1; then
		if grep -q NO-GPU "$W/torch.txt"; then TORCH_WHY="torch sees no GPU ($(head -1 "$W/torch.txt"))"
		else HAVE_TORCH=1; fi
	else
		TORCH_WHY="no torch under $PY: $(tail -1 "$W/torch.txt" | cut -c1-150)"
	fi
	# libgpubpf_cupti.so's RUNPATH is the build host's /usr/local/cuda/lib64: where the
	# toolkit here has no libcupti.so.13, the workloads get the wheel's on LD_LIBRARY_PATH
	if ! ls /usr/local/cuda/lib64/libcupti.so.13 >/dev/null 2>&1; then
		c=$(find "$(dirname "$(dirname "$PY")")" /usr/local -name 'libcupti.so.13*' 2>/dev/null | head -1)
		[ -n "$c" ] && WL_ENV="LD_LIBRARY_PATH=$(dirname "$c")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fi
	HOSTDESC="$(head -1 "$W/gpu.txt"), kernel $(uname -r), torch $(head -1 "$W/torch.txt")"
	echo "# gpu: $(head -1 "$W/gpu.txt")" >>"$RES"
	echo "# torch: $(head -1 "$W/torch.txt")" >>"$RES"
	echo "# workload env: ${WL_ENV:-none}" >>"$RES"
fi
export S9_N S9_ROUNDS OUT W GB PY HPY WL DRY CUPTI_LIB CUPTI_APP WIN S3_D RECLIBS WL_ENV HAVE_TORCH TORCH_WHY HOSTDESC
echo "# host: $HOSTDESC" >>"$RES"

declare -A LIMIT=([1]=75 [2]=60 [3]=110 [4]=140 [5]=45 [6]=45 [7]=40 [8]=60 [9]=90)
for n in $ONLY; do
	left=$(( BUDGET - (SECONDS - START) ))
	lim=${LIMIT[$n]:-60}
	[ "$lim" -gt "$left" ] && lim=$left
	if [ "$lim" -lt 15 ]; then
		echo "RESULT $n SKIP no time left in the ${BUDGET} s budget" | tee -a "$RES"
		continue
	fi
	echo "== section $n (at most ${lim} s)"
	t=$SECONDS
	timeout -k 5 "$lim" bash "$0" --section "$n" $([ "$DRY" = 1 ] && echo --dry-run) >"$W/s$n.log" 2>&1
	rc=$?
	if [ ! -s "$W/result.$n" ]; then
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			echo "RESULT $n FAIL timed out after ${lim} s (s$n.log: $(tail -1 "$W/s$n.log" | cut -c1-120))" >"$W/result.$n"
		else
			echo "RESULT $n FAIL section ended (rc $rc) without a result: $(tail -1 "$W/s$n.log" | cut -c1-150)" >"$W/result.$n"
		fi
	fi
	cat "$W/result.$n" | tee -a "$RES"
	echo "   ($(( SECONDS - t )) s)"
done
