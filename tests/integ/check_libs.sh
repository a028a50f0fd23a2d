#!/usr/bin/env bash
# gpubpf check lists the GPU libraries running processes map, one fact
# changed at a time: the same fake libcuda built with and without
# -fcf-protection (its entry points start with endbr64, which gpubpf skips,
# or with push %rbp, which the kernel emulates), and a copy that exists only
# inside a container root (own mount namespace, chroot), found through
# /proc/PID/root or map_files and reported with its mount namespace and
# pid; and an executable with nvcc's static CUDA runtime inside.
source "$(dirname "$0")/../lib.sh"
need_bpf "check libraries"
[ -x "$WL/rtdl_work" ] || { skip "check libraries" "build/workloads/rtdl_work missing: run make workloads"; exit 0; }
SRC=$ROOT/tests/workloads/fake_cuda.c
PY='import json, sys
d = json.load(open(sys.argv[1]))
m = [l for l in d["libraries"] if l["path"] == sys.argv[2]]
l = m[0] if m else None'
lib() { python3 -c "$PY
$3" "$1" "$2"; }
# wait_mapped PID PATH: until the process maps PATH
wait_mapped() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q "$2" "/proc/$1/maps" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

mkdir -p "$T/e" "$T/p"
gcc -O0 -g -fcf-protection=full -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$T/e/libcuda.so.1" "$SRC" -lpthread &&
	gcc -O0 -g -fcf-protection=none -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$T/p/libcuda.so.1" "$SRC" -lpthread ||
	{ fail "build the fake libcuda with and without -fcf-protection"; exit 0; }
if ! objdump -d "$T/e/libcuda.so.1" | grep -A1 '<cuLaunchKernel>:' | grep -q endbr64; then
	skip "endbr64 library" "gcc -fcf-protection=full put no endbr64 first here"; exit 0
fi
"$WL/rtdl_work" -d -l "$T/e/libcuda.so.1" -n 1 -w "$T/go" >/dev/null 2>&1 &
E=$!; _bg_pids+=($E)
"$WL/rtdl_work" -d -l "$T/p/libcuda.so.1" -n 1 -w "$T/go" >/dev/null 2>&1 &
P=$!; _bg_pids+=($P)
wait_mapped $E "$T/e/libcuda.so.1" && wait_mapped $P "$T/p/libcuda.so.1" || { fail "workloads mapped their libcuda"; exit 0; }
"$GPUBPF" check --json >"$T/c.json" 2>"$T/c.err"
check_eq "endbr64 build: listed, host namespace, the pid that maps it" "host $E True" \
	"$(lib "$T/c.json" "$T/e/libcuda.so.1" 'print(l["namespace"], l["pid"], l["entry_points"] > 10)')"
check_eq "endbr64 build: every entry point starts with endbr64 (skipped), then push %rbp" "True True" \
	"$(lib "$T/c.json" "$T/e/libcuda.so.1" 'print(l["endbr64_skipped"] == l["entry_points"], l["push_rbp"] == l["entry_points"])')"
check_eq "endbr64 build: said in the probe text" True \
	"$(lib "$T/c.json" "$T/e/libcuda.so.1" 'print("endbr64 (skipped" in l["probe"])')"
check_eq "plain build: no endbr64, every entry on push %rbp, same count" "0 True True" \
	"$(python3 -c "$PY
e = [x for x in d['libraries'] if x['path'] == '$T/e/libcuda.so.1'][0]
print(l['endbr64_skipped'], l['push_rbp'] == l['entry_points'], l['entry_points'] == e['entry_points'])" "$T/c.json" "$T/p/libcuda.so.1")"
"$GPUBPF" check >"$T/c.txt" 2>&1
check_true "text: the endbr64 library's line says so" grep -A1 "$T/e/libcuda.so.1" "$T/c.txt" -q -e "start with endbr64"
touch "$T/go"

# a static CUDA runtime inside an executable (nvcc's default), found by its device code
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ -x "$NVCC" ] && "$NVCC" -o "$T/static_rt" "$ROOT/tests/workloads/static_rt.cu" 2>/dev/null; then
	"$T/static_rt" "$T/sgo" >/dev/null 2>&1 &
	S=$!; _bg_pids+=($S)
	wait_mapped $S "$T/static_rt"
	"$GPUBPF" check --json >"$T/s.json" 2>/dev/null
	check_eq "static runtime: the executable listed as static cudart, its runtime entry points found" "static cudart True True" \
		"$(lib "$T/s.json" "$T/static_rt" 'print(l["kind"], l["static_runtime"], l["entry_points"] > 5)')"
	check_eq "static runtime: said in the probe text" True \
		"$(lib "$T/s.json" "$T/static_rt" 'print("static CUDA runtime inside" in l["probe"])')"
	touch "$T/sgo"
else
	skip "static runtime library" "no nvcc at $NVCC (set CUDA_HOME), or it failed"
fi

# a library only inside a container root
if ! command -v unshare >/dev/null || ! unshare --mount --fork true 2>/dev/null; then
	skip "container library" "unshare --mount not permitted here"; exit 0
fi
R=$T/root
mkdir -p "$R/bin" "$R/lib/gpu" "$R/tmp"
for f in "$WL/rtdl_work" $(ldd "$WL/rtdl_work" | grep -o '/[^ ]*'); do
	mkdir -p "$R$(dirname "$f")"
	cp "$(readlink -f "$f")" "$R$f"
done
cp "$WL/rtdl_work" "$R/bin/"
cp "$T/p/libcuda.so.1" "$R/lib/gpu/libcuda.so.1"
check_true "the container's library does not exist on the host" [ ! -e /lib/gpu/libcuda.so.1 ]
"$GPUBPF" check --json >"$T/before.json" 2>/dev/null
check_eq "before the container runs: not listed" None "$(lib "$T/before.json" "$R/lib/gpu/libcuda.so.1" 'print(l)')"
unshare --mount --fork --kill-child chroot "$R" /bin/rtdl_work -d -l /lib/gpu/libcuda.so.1 -n 1 -w /tmp/go >/dev/null 2>&1 &
_bg_pids+=($!)
U=$! C=
for ((i = 0; i < 200; i++)); do
	C=$(pgrep -P $U rtdl_work)
	[ -n "$C" ] && wait_mapped "$C" /lib/gpu/libcuda.so.1 && break
	C=
	sleep 0.05
done
[ -n "$C" ] || { fail "the container's workload mapped its libcuda"; exit 0; }
_bg_pids+=($C)	# killing unshare leaves its child
"$GPUBPF" check --json >"$T/in.json" 2>/dev/null
# a chroot's maps name the file as the host's root sees it ($R/lib/gpu/...)
IN=$R/lib/gpu/libcuda.so.1
check_eq "container library: listed, namespace container, its pid" "container $C" \
	"$(lib "$T/in.json" "$IN" 'print(l["namespace"], l["pid"])')"
check_eq "container library: opened through /proc/PID (root or map_files), its mount namespace named" "True True" \
	"$(lib "$T/in.json" "$IN" "print(l['opened_as'].startswith('/proc/$C/'), l['mnt_ns'] == '$(readlink /proc/$C/ns/mnt)')")"
check_true "container library: another mount namespace than ours" [ "$(readlink /proc/$C/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]
check_eq "container library: entry points probed as on the host (push %rbp)" True \
	"$(lib "$T/in.json" "$IN" 'print(l["entry_points"] > 10 and l["push_rbp"] == l["entry_points"])')"
touch "$R/tmp/go"
