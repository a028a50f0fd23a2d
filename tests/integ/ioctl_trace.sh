#!/usr/bin/env bash
# GPU driver ioctls through the syscall-tracepoint source: /dev/null stands in
# for an NVIDIA device and /dev/full for /dev/kfd (--ioctl-dev PATH=KIND).
# ioctl_work issues NV_ESC_RM_ALLOC, NV_ESC_RM_CONTROL and
# AMDKFD_IOC_ALLOC_MEMORY_OF_GPU with known argument structs, the same calls
# on /dev/zero and a pipe, an unknown cmd, a NULL, an unmapped, a short and a
# page-crossing argument. Checks names, fields, exact counts, ENOTTY returns,
# the undecoded flag, the source note and the version fallback.
source "$(dirname "$0")/../lib.sh"
need_bpf "ioctl trace"
[ -x "$WL/ioctl_work" ] || { skip "ioctl trace" "build/workloads/ioctl_work missing: run make workloads"; exit 0; }

"$GPUBPF" record --ioctl-dev /dev/null=nvidia --ioctl-dev /dev/full=kfd -o "$T/io.sbt" \
	-- "$WL/ioctl_work" calls /dev/null /dev/full >"$T/io.out" 2>"$T/io.err"
check_eq "record --ioctl-dev -- ioctl_work exits 0" 0 "$?"
"$GPUBPF" view --json "$T/io.sbt" >"$T/io.json" 2>&1
check_eq "view --json of the ioctl trace exits 0" 0 "$?"
python3 - "$T/io.json" "$(cat "$T/io.out")" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
pid = int(sys.argv[2])
io = [e for e in ev if e["type"] == "ioctl" and e["pid"] == pid]
def check(what, exp, got):
    print(("PASS: %s" % what) if exp == got else "FAIL: %s (expected %r, got %r)" % (what, exp, got))
check("exactly the 8 ioctls on the stand-in devices, none on /dev/zero or the pipe",
      ["/dev/null"] * 2 + ["/dev/full"] + ["/dev/null"] * 5, [e.get("detail") for e in io])
check("every ioctl ends in ENOTTY (-25) with a duration",
      [(-25, True)] * 8, [(e.get("ret"), e.get("dur_ns", 0) > 0) for e in io])
check("names", ["NV_ESC_RM_ALLOC", "NV_ESC_RM_CONTROL", "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", None,
                "NV_ESC_RM_CONTROL", "NV_ESC_RM_CONTROL", "NV_ESC_RM_ALLOC", "NV_ESC_RM_CONTROL"],
      [e.get("name") for e in io])
if len(io) == 8:
    a, c, k = io[0], io[1], io[2]
    check("RM_ALLOC fields (NVOS21)", {"hRoot": 0xc1d00001, "hObjectParent": 0xc1d00002,
          "hObjectNew": 0xcafe0001, "hClass": 0x40, "paramsSize": 16, "status": 0}, a.get("fields"))
    check("RM_ALLOC cmd split", {"dir": "rw", "type": ord("F"), "nr": 0x2b, "size": 32}, a.get("ioc"))
    check("RM_ALLOC class name", "NV01_MEMORY_LOCAL_USER", a.get("hClass_name"))
    check("RM_CONTROL fields (NVOS54)", {"hClient": 0xc1d00001, "hObject": 0x5c000001,
          "cmd": 0x20800102, "flags": 0, "paramsSize": 0x88, "status": 0}, c.get("fields"))
    check("RM_CONTROL command name", "NV2080_CTRL_CMD_GPU_GET_INFO_V2", c.get("cmd_name"))
    check("KFD alloc fields", {"va_addr": 0x7f0000000000, "size": 0x200000, "handle": 0,
          "gpu_id": 0x1234, "flags": 2}, k.get("fields"))
    check("KFD alloc bytes", 0x200000, k.get("bytes"))
    check("decoded calls carry no fault flag", [False] * 3, [e.get("arg_fault", False) for e in io[:3]])
    check("unknown cmd, NULL, unmapped, short and page-crossing args: undecoded and flagged",
          [(False, True)] * 5, [(e.get("decoded"), e.get("arg_fault", False)) for e in io[3:]])
PY
"$GPUBPF" info --json "$T/io.sbt" | python3 -c '
import json, sys
i = json.load(sys.stdin).get("ioctl") or {}
ok = i.get("source") == "tracepoint" and "--ioctl-dev" in (i.get("reason") or "")
print("PASS: info names the ioctl source and why" if ok else "FAIL: info names the ioctl source (got %r)" % i)'
"$GPUBPF" info "$T/io.sbt" | grep -Eq "source +tracepoint"
check_eq "info (text) shows the ioctl source" 0 "$?"

# a driver version older than the known layouts: cmd only, and said so
"$GPUBPF" record --ioctl-dev /dev/null=nvidia@300.1 -o "$T/old.sbt" \
	-- "$WL/ioctl_work" calls /dev/null /dev/null >"$T/old.out" 2>/dev/null
check_eq "record with @300.1 exits 0" 0 "$?"
"$GPUBPF" view --json "$T/old.sbt" | python3 -c '
import json, sys
pid = int(sys.argv[1])
io = [e for e in map(json.loads, sys.stdin) if e["type"] == "ioctl" and e["pid"] == pid]
ok = len(io) == 8 and not any(e.get("decoded") for e in io) and io[0].get("name") == "NV_ESC_RM_ALLOC"
print("PASS: unknown driver version: named, not decoded" if ok else
      "FAIL: unknown driver version: named, not decoded (%r)" % [(e.get("name"), e.get("decoded")) for e in io])' "$(cat "$T/old.out")"
"$GPUBPF" info "$T/old.sbt" | grep -q "unknown layout version, cmd only"
check_eq "info says the layouts fell back to cmd only" 0 "$?"

# bad --ioctl-dev: one line naming the fix, non-zero exit, nothing started
"$GPUBPF" record --ioctl-dev /dev/null -o "$T/bad.sbt" -- true 2>"$T/bad.err"
rc=$?
check_true "--ioctl-dev without a type fails" test "$rc" -ne 0
check_eq "--ioctl-dev error is one line naming =nvidia" "1 1" \
	"$(wc -l <"$T/bad.err") $(grep -c '=nvidia' "$T/bad.err")"
