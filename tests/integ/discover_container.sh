#!/usr/bin/env bash
# Discovery acceptance 1 and 3: a "container" (own mount and pid
# namespaces, chroot into a root file system built here with its own
# ld.so, libc and GPU libraries at new inodes) started after record -a is
# ready, and a real libcudart copied into a wheel-like tree and dlopen'd by
# a process started later: every call recorded, named, with host and
# namespace pids. The loader hook never hears of these: only the kernel's
# mapping events do.
source "$(dirname "$0")/../lib.sh"
need_bpf "container discovery"
command -v unshare >/dev/null || { skip "container discovery" "unshare (util-linux) missing"; exit 0; }
[ -x "$WL/rtdl_work" ] || { skip "container discovery" "build/workloads/rtdl_work missing: run make workloads"; exit 0; }
if ! unshare --pid --mount --fork true 2>/dev/null; then
	skip "container discovery" "unshare --pid --mount not permitted here"; exit 0
fi
CUDA=${CUDA_HOME:-/usr/local/cuda}
REAL_RT=$(ls "$CUDA"/lib64/libcudart.so.13* 2>/dev/null | head -1)

# copy files and every library they need, at the same paths, into a root
rootfs_add() {
	local root=$1 f d; shift
	for f in "$@"; do
		for d in "$f" $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
			[ -e "$root$d" ] && continue
			mkdir -p "$root$(dirname "$d")"
			cp "$(readlink -f "$d")" "$root$d"
		done
	done
}
R=$T/root
mkdir -p "$R/bin" "$R/lib/gpu" "$R/tmp"
cp "$WL/rtdl_work" "$R/bin/"
cp "$WL/libcuda.so.1" "$R/lib/gpu/libcuda.so.1"
rootfs_add "$R" "$WL/rtdl_work" "$WL/libcuda.so.1" /bin/sh
[ -n "$REAL_RT" ] && cp "$REAL_RT" "$R/lib/gpu/libcudart.so.13" && rootfs_add "$R" "$REAL_RT"
check_true "the container's loader is its own file (another inode)" \
	[ "$(stat -c %i "$R/lib64/ld-linux-x86-64.so.2")" != "$(stat -Lc %i /lib64/ld-linux-x86-64.so.2)" ]

# the wheel: a real libcudart where there is one, else the fake at a new inode
W=$T/venv/lib/python3.11/site-packages/nvidia/cu13/lib
mkdir -p "$W"
cp "${REAL_RT:-$WL/libcudart.so.13}" "$W/libcudart.so.13"

start_record -a -v -o "$T/t.sbt" || { fail "record started"; exit 0; }

# wait_attached PATTERN: until the recorder says it attached a file matching it
wait_attached() {
	local i
	for ((i = 0; i < 400; i++)); do
		grep -q "mapped .*$1: attached" "$T/rec.log" && return 0
		sleep 0.05
	done
	return 1
}

# 1: driver calls from the container's own libcuda copy
unshare --pid --mount --fork --kill-child chroot "$R" /bin/rtdl_work -d -l /lib/gpu/libcuda.so.1 -n 1000 -w /tmp/go1 >"$T/c1.out" 2>&1 &
C1=$!; _bg_pids+=($C1)
check_true "the container's libcuda was attached when mapped" wait_attached "/lib/gpu/libcuda.so.1"
touch "$R/tmp/go1"
wait $C1
check_eq "driver container exits 0" 0 $?

# 1b: runtime calls from the container's copy of the real libcudart
if [ -n "$REAL_RT" ]; then
	unshare --pid --mount --fork --kill-child chroot "$R" /bin/rtdl_work -l /lib/gpu/libcudart.so.13 -n 300 -w /tmp/go2 >"$T/c2.out" 2>&1 &
	C2=$!; _bg_pids+=($C2)
	check_true "the container's real libcudart was attached when mapped" wait_attached "/lib/gpu/libcudart.so.13"
	touch "$R/tmp/go2"
	wait $C2
	check_eq "runtime container exits 0" 0 $?
else
	skip "container with the real libcudart" "no libcudart.so.13 under $CUDA/lib64"
fi

# 3: the wheel's libcudart, dlopen'd by a process started now
"$WL/rtdl_work" -l "$W/libcudart.so.13" -n 200 -w "$T/go3" >"$T/w.out" 2>&1 &
P3=$!; _bg_pids+=($P3)
check_true "the wheel's libcudart was attached when dlopen'd" wait_attached "cu13/lib/libcudart.so.13"
touch "$T/go3"
wait $P3
stop_record
check_eq "record exits 0" 0 "$REC_RC"
grep -q "discovery: kernel process events" "$T/rec.log"
check_eq "record -v says where discovery comes from" 0 $?

PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/c1.out" "$T/c2.out" "$T/w.out" "${REAL_RT:+real}" <<'PY'
import sys, collections
from events import load, produced, info, Checker
c = Checker()
trace, c1, c2, w, real = sys.argv[1:6]
ev = load(trace)
p1, pw = produced(c1), produced(w)
by_pid = collections.defaultdict(collections.Counter)
for e in ev:
    by_pid[e["pid"]][e["type"]] += 1
ctr = [pid for pid, n in by_pid.items() if n["cuLaunchKernel"]]
c.eq("container: one process made driver launches", 1, len(ctr))
n = by_pid[ctr[0]] if ctr else collections.Counter()
c.eq("container: 1000 cuLaunchKernel", 1000, n["cuLaunchKernel"])
c.eq("container: 1000 cuMemAlloc_v2", 1000, n["cuMemAlloc_v2"])
c.true("container: every launch named (cuModuleGetFunction)",
       ctr and all(e.get("kernel") == "rtdl_kernel" for e in ev if e["pid"] == ctr[0] and e["type"] == "cuLaunchKernel"))
ns = {e.get("ns_pid") for e in ev if ctr and e["pid"] == ctr[0]}
c.true("container: namespace pid as the process saw it (1), host pid another",
       ns == {p1["pid"]} and ctr[0] != p1["pid"], f"{ns} {ctr} {p1}")
if real:
    p2 = produced(c2)
    rtp = [pid for pid, n in by_pid.items() if n["cudaMalloc"] and pid != pw["pid"]]
    c.eq("real libcudart in a container: one process", 1, len(rtp))
    rt = [e for e in ev if rtp and e["pid"] == rtp[0]]
    m = collections.Counter(e["type"] for e in rt)
    c.eq("real libcudart in a container: 300 cudaMalloc", 300, m["cudaMalloc"])
    c.eq("and 300 cudaLaunchKernel", 300, m["cudaLaunchKernel"])
    c.true("in its own pid namespace", all(e.get("ns_pid") == p2["pid"] != e["pid"] for e in rt))
    c.true("with the return codes the program saw (allocations; launches: those sampled for their return)",
           all(e.get("ret", p2["ret_launch"]) == p2["ret_launch"] for e in rt if e["type"] == "cudaLaunchKernel")
           and all(e.get("ret") == p2["ret_alloc"] for e in rt if e["type"] == "cudaMalloc"), str(p2))
    c.true("launches named by the container binary's host stub",
           all(e.get("kernel") == "rtdl_kernel_stub" for e in rt if e["type"] == "cudaLaunchKernel"))
wl = [e for e in ev if e["pid"] == pw["pid"]]
m = collections.Counter(e["type"] for e in wl)
c.eq("wheel: 200 cudaLaunchKernel", 200, m["cudaLaunchKernel"])
c.eq("wheel: 200 cudaMalloc", 200, m["cudaMalloc"])
c.true("wheel: launches named", all(e.get("kernel") == "rtdl_kernel_stub" for e in wl if e["type"] == "cudaLaunchKernel"))
c.eq("the trace notes the discovery source", "perf-sideband", info(trace).get("discovery", {}).get("source"))
sys.exit(1 if c.failed else 0)
PY
check_eq "discovery checks ran to the end" 0 $?

# containers in report and export: the recorder notes each process's
# container (here its own pid namespace: "pidns-INODE"; a docker/containerd
# cgroup id where there is one); report totals per container, export groups
"$GPUBPF" report --json "$T/t.sbt" >"$T/r.json" 2>"$T/r.err" || fail "report --json ($(head -1 "$T/r.err"))"
"$GPUBPF" report "$T/t.sbt" >"$T/r.txt" 2>&1 && grep -q "^CONTAINERS" "$T/r.txt"
check_eq "report: a CONTAINERS table" 0 $?
"$GPUBPF" export -q -f json --group-by container -o "$T/g.json" "$T/t.sbt" 2>"$T/g.err"
check_eq "export --group-by container exits 0 ($(head -1 "$T/g.err"))" 0 $?
PYTHONPATH=$ROOT/tests/py python3 - "$T/r.json" "$T/g.json" "$T/c1.out" "$T/w.out" "${REAL_RT:+real}" <<'PY'
import sys, json, re
from events import produced, Checker
c = Checker()
r = json.load(open(sys.argv[1]))
p1, pw, real = produced(sys.argv[3]), produced(sys.argv[4]), sys.argv[5]
cont = {x["container"]: x for x in r.get("containers", [])}
own = sorted(k for k in cont if k != "host")
c.true("report: one container per pid namespace started (pidns-INODE; .ID where the kernel reused the first's inode), and the host",
       "host" in cont and len(own) == (2 if real else 1) and all(re.fullmatch(r"pidns-\d+(\.\d+)?", k) for k in own), str(list(cont)))
procs = {p["pid"]: p for p in r.get("processes", [])}
drv = [p for p in r.get("processes", []) if p.get("container") and p.get("launches") == 1000]
c.eq("report: the driver container's process names its container", 1, len(drv))
if drv:
    k = drv[0]["container"]
    c.true("report: that container's totals are its process's (1 process, 1000 launches, 1000 allocs)",
           cont[k]["processes"] == 1 and cont[k]["launches"] == 1000 and cont[k]["allocs"] == 1000, str(cont[k]))
c.true("report: the wheel process (started on the host) is the host's",
       "container" not in procs.get(pw["pid"], {"container": 1}) and cont["host"]["processes"] >= 1)
g = json.load(open(sys.argv[2]))
ev = g["traceEvents"] if isinstance(g, dict) else g
pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
gs = {v: k for k, v in pname.items() if v == "host" or v.startswith("container ")}
c.true("export --group-by container: a group per container and one for the host",
       set(gs) == {"host"} | {"container " + k for k in own}, str(pname))
if drv:
    gp = gs.get("container " + drv[0]["container"])
    # launches are recorded at entry: instants on their thread (slices with --launch-returns)
    n = sum(1 for e in ev if e.get("ph") in ("X", "i") and e.get("name") == "cuLaunchKernel" and e["pid"] == gp)
    c.eq("export --group-by container: the container's 1000 launches in its group", 1000, n)
hl = sum(1 for e in ev if e.get("ph") in ("X", "i") and e.get("name") == "cudaLaunchKernel" and e["pid"] == gs.get("host"))
c.eq("export --group-by container: the wheel's 200 runtime launches in the host group", 200, hl)
sys.exit(1 if c.failed else 0)
PY
check_eq "containers in report and export" 0 $?

# --lean: launches come from registers alone, without namespace ids; the
# collector reads a container process's own ids from /proc (NSpid)
start_record -a -v --lean -o "$T/l.sbt" || { fail "record --lean started"; exit 0; }
rm -f "$R/tmp/go1"
unshare --pid --mount --fork --kill-child chroot "$R" /bin/rtdl_work -d -l /lib/gpu/libcuda.so.1 -n 100 -w /tmp/go1 >"$T/l1.out" 2>&1 &
C1=$!; _bg_pids+=($C1)
check_true "--lean: the container's libcuda was attached when mapped" wait_attached "/lib/gpu/libcuda.so.1"
touch "$R/tmp/go1"
wait $C1
check_eq "--lean: driver container exits 0" 0 $?
stop_record
check_eq "record --lean exits 0" 0 "$REC_RC"
PYTHONPATH=$ROOT/tests/py python3 - "$T/l.sbt" "$T/l1.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
p = produced(sys.argv[2])
ev = [e for e in load(sys.argv[1]) if e["type"] == "cuLaunchKernel" and e.get("ns_pid") == p["pid"]]
c.eq("--lean: the container's 100 launches, with its own pid (not the host's)", 100, len(ev))
c.true("--lean: lean records, host pid another, thread id in its namespace",
       ev and all(e.get("lean") and e["pid"] != p["pid"] and e.get("ns_tid") == p["pid"] for e in ev))
sys.exit(1 if c.failed else 0)
PY
check_eq "--lean container checks ran to the end" 0 $?
