#!/usr/bin/env bash
# tests/gpu/diag_cupti.sh: why `record --cupti -- python train.py` died of
# SIGSEGV in its first cuMemcpyHtoDAsync on the first H100 run (section 2
# of run_h100.sh). Short train.py runs (3 steps), each with
# lib/segv_report.so preloaded (a crash prints its instruction, registers,
# bytes, backtrace and the stack's code addresses), to tell apart:
#   plain        python train.py                          (the baseline)
#   inj          CUDA_INJECTION64_PATH=libgpubpf_cupti.so  (our CUPTI set-up alone, no gpubpf)
#   nvtx         NVTX_INJECTION64_PATH=libgpubpf_cupti.so  (our NVTX table alone)
#   rec          gpubpf record -- python train.py          (uprobes, no CUPTI)
#   reccupti     gpubpf record --cupti -- python train.py  (what section 2 does)
# then, on whichever died first, GPUBPF_CUPTI_DIAG (cupti/gpubpf_cupti.c)
# leaves parts of our set-up out: nocb, noclock, nobuf, kernelonly; and
# for reccupti: gpubpf without --cupti but the library injected (our USDT
# probes not attached), and --cupti without NVTX injection.
# One line per run in $OUT/diag_cupti.txt ("VARIANT ok|DIED rc N ..."), the
# crash reports and the trace's last calls under it. GB_DIAG_BUDGET (200 s)
# bounds it all. GB_DRY=1: here, fakegpu.py and the fake libcuda (plumbing).
#   run(carry=[".gpubundle"], command="bash tests/gpu/diag_cupti.sh")
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${GPUBUNDLE:-$ROOT/.gpubundle}
GB=$B/bin/gpubpf
LIB=$B/lib/gpubpf/libgpubpf_cupti.so
SEGV=$B/lib/segv_report.so
PY=${GB_PYTHON:-/opt/torch/.venv/bin/python}
OUT=${OUT:-/tmp/diag-cupti-out}
BUDGET=${GB_DIAG_BUDGET:-200}
W=$(mktemp -d /tmp/gbdiagc.XXXXXX)
mkdir -p "$OUT"
D=$OUT/diag_cupti.txt
: >"$D"
say() { echo "$*" | tee -a "$D"; }
TRAIN=("$PY" "$ROOT/tests/gpu/train.py" --steps 3 --warmup 1)
RECLIBS=()
if [ "${GB_DRY:-0}" = 1 ]; then
	TRAIN=(python3 "$ROOT/tests/gpu/fakegpu.py" train --lib "$ROOT/build/workloads/libcuda.so.1" --steps 3 --warmup 1)
	RECLIBS=(--lib "$ROOT/build/workloads/libcuda.so.1")
fi
ENV=("LD_PRELOAD=$SEGV")
# the library's RUNPATH is the build host's toolkit: the wheel's libcupti otherwise (as run_h100.sh)
if ! ls /usr/local/cuda/lib64/libcupti.so.13 >/dev/null 2>&1; then
	c=$(find "$(dirname "$(dirname "$PY")")" /usr/local -name 'libcupti.so.13*' 2>/dev/null | head -1)
	[ -n "$c" ] && ENV+=("LD_LIBRARY_PATH=$(dirname "$c")")
fi
say "# diag_cupti $(date -u '+%F %T UTC') $(uname -r); bundle: $(head -1 "$B/MANIFEST" 2>/dev/null)"
say "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); env: ${ENV[*]}"
[ -x "$GB" ] && [ -r "$SEGV" ] || { say "no bundle at $B (tests/gpu/bundle.sh)"; exit 1; }

# run NAME [record ARGS... --] [VAR=VALUE...]: one train.py run; DIED[NAME] set when it did not end well
declare -A DIED
run() {
	local name=$1 rec=() vars=() unset=() t0 rc line
	shift
	if [ "${1:-}" = record ]; then
		while [ $# -gt 0 ] && [ "$1" != -- ]; do rec+=("$1"); shift; done
		shift
		rec=("$GB" "${rec[@]}" "${RECLIBS[@]}" -o "$W/$name.sbt" --)
	fi
	while [ $# -gt 0 ]; do	# -u NAME: unset in the job (env's option, before the assignments)
		if [ "$1" = -u ]; then unset+=(-u "$2"); shift; else vars+=("$1"); fi
		shift
	done
	if [ $(( BUDGET - SECONDS )) -lt 30 ]; then
		say "$name SKIP no time left in $BUDGET s"
		return
	fi
	t0=$SECONDS
	timeout -k 5 90 "${rec[@]}" env "${unset[@]}" "${ENV[@]}" "${vars[@]}" "${TRAIN[@]}" >"$W/$name.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^steps=3' "$W/$name.log"; then
		say "$name ok ($(( SECONDS - t0 )) s) ${rec[*]:+record}${unset[*]:+ ${unset[*]}}${vars[*]:+ ${vars[*]}}"
		return
	fi
	DIED[$name]=1
	line=$(grep -m1 'segv_report: instruction' "$W/$name.log" | cut -c1-200)
	say "$name DIED rc $rc ($(( SECONDS - t0 )) s) ${rec[*]:+record}${unset[*]:+ ${unset[*]}}${vars[*]:+ ${vars[*]}}: ${line:-$(tail -1 "$W/$name.log" | cut -c1-200)}"
	{
		echo "---- $name: output (segv_report and the last 30 lines)"
		grep 'segv_report' "$W/$name.log" | head -120
		grep -v 'segv_report' "$W/$name.log" | tail -30
		if [ -s "$W/$name.sbt" ]; then
			echo "---- $name: the trace's last calls"
			"$GB" view "$W/$name.sbt" 2>&1 | grep -v __cudaRegister | tail -25
		fi
		echo "----"
	} >>"$D"
}

# GB_DIAG_BISECT=1: which of the three device-buffer settings ("nobuf") the crash follows
if [ "${GB_DIAG_BISECT:-0}" = 1 ]; then
	for f in nosize nopool noflush nosize,nopool; do
		run "inj_$f" CUDA_INJECTION64_PATH="$LIB" GPUBPF_CUPTI_DIAG=$f
	done
	run reccupti record --cupti --
	say "# $SECONDS s"
	rm -rf "$W"
	exit 0
fi
run plain
[ -n "${DIED[plain]:-}" ] && { say "the plain run died: nothing to compare"; exit 1; }
run inj CUDA_INJECTION64_PATH="$LIB"
run reccupti record --cupti --
run nvtx NVTX_INJECTION64_PATH="$LIB"
run rec record --
if [ -n "${DIED[inj]:-}" ]; then
	run inj_all_off CUDA_INJECTION64_PATH="$LIB" GPUBPF_CUPTI_DIAG=nocb,noclock,nobuf,kernelonly
	for f in nobuf nocb noclock kernelonly; do
		run "inj_$f" CUDA_INJECTION64_PATH="$LIB" GPUBPF_CUPTI_DIAG=$f
	done
elif [ -n "${DIED[reccupti]:-}" ]; then
	run rec_injected record -- CUDA_INJECTION64_PATH="$LIB"
	run reccupti_nonvtx record --cupti -- -u NVTX_INJECTION64_PATH
	run reccupti_nocb record --cupti -- GPUBPF_CUPTI_DIAG=nocb
	run reccupti_nobuf record --cupti -- GPUBPF_CUPTI_DIAG=nobuf
	run reccupti_lean record --cupti --lean --
fi
dmesg 2>/dev/null | grep -E "segfault|general protection|traps:" | tail -8 | sed 's/^/dmesg: /' >>"$D"
say "# $SECONDS s"
rm -rf "$W"
