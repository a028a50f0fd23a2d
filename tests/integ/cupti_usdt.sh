#!/usr/bin/env bash
# Device timing through the CUPTI library's USDT probes, joined with the
# uprobe launch events by correlation id. cupti/usdt_app fires the probes
# of the real libgpubpf_cupti.so (no GPU): 5 launches through the fake
# libcuda, each with a device record 10 us after it or after the one before
# (50 us long, serial as on one stream); a 6th
# launch without one, followed by cuCtxSynchronize; a memcpy record nobody
# launched; NVTX ranges and a mark through NVTX_INJECTION64_PATH.
source "$(dirname "$0")/../lib.sh"
need_bpf "record --cupti-lib"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
APP=$ROOT/build/cupti/usdt_app
if ! "$GPUBPF" record --help 2>&1 | grep -q -- '--cupti'; then
	skip "record --cupti-lib" "this gpubpf record has no --cupti-lib option yet"
	exit 0
fi
if [ ! -x "$APP" ] || [ ! -r "$LIB" ]; then
	skip "record --cupti-lib" "no $LIB (make cupti needs CUDA headers)"
	exit 0
fi
if [ ! -r "$WL/libcuda.so.1" ]; then
	skip "record --cupti-lib" "no $WL/libcuda.so.1 (make workloads)"
	exit 0
fi

start_record -a -o "$T/t.sbt" --lib "$WL/libcuda.so.1" --cupti-lib "$LIB" ||
	{ fail "record --cupti-lib started"; exit 0; }
"$APP" "$LIB" "$WL/libcuda.so.1" 5 >"$T/app.out" || fail "usdt_app ran"
stop_record
check_eq "record exits 0 on SIGINT" 0 "$REC_RC"
pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/app.out")
f=$(sed -n 's/.* f=\([0-9]*\).*/\1/p' "$T/app.out")

PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$pid" "$f" <<'PY'
import sys
from events import load, Checker
c = Checker()
trace, pid, f = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ev = [e for e in load(trace) if e["pid"] == pid]
kern = [e for e in ev if e["type"] == "gpu_kernel"]
launch = sorted((e for e in ev if e["type"] == "cuLaunchKernel"), key=lambda e: e["ts_ns"])
c.eq("5 device kernel slices", 5, len(kern))
c.true("device slices are 50 us, named, on the launching thread",
       all(e.get("dur_ns") == 50000 and e.get("kernel") == "gb_kernel(float*)"
           and e.get("kernel_raw") == "_Z9gb_kernelPf" and e["tid"] == pid
           for e in kern), str(kern[:1]))
c.eq("6 host launches", 6, len(launch))
c.eq("launches carry correlation ids 1000..1005", list(range(1000, 1006)),
     [e.get("corr_id") for e in launch])
c.eq("timing: 5 device-measured, then 1 bounded by cuCtxSynchronize",
     ["device"] * 5 + ["bounded"], [e.get("timing") for e in launch])
c.true("launch handle is the CUfunction the probe saw", all(e.get("handle") == f for e in launch))
byc = {e["corr_id"]: e for e in kern}
# the app stamps each kernel 10 us after its launch call returned (or when the
# one before it on the stream ends, if later): so each starts at least 10 us
# after its launch's recorded return (entry + duration), whatever the trap cost
ks = [byc[l["corr_id"]] for l in launch[:5]]
late = [k["ts_ns"] - (l["ts_ns"] + l.get("dur_ns", 1 << 62)) for k, l in zip(ks, launch)]
c.true("each kernel starts 10 us or more after its launch returned (the app's stamp)",
       all(g >= 10000 for g in late), str(late))
c.true("the stream's kernels never overlap", all(b["ts_ns"] >= a["ts_ns"] + a["dur_ns"] for a, b in zip(ks, ks[1:])))
mc = [e for e in ev if e["type"] == "gpu_memcpy"]
c.eq("the orphan memcpy record is kept, HtoD 4096 bytes",
     [(999999, "HtoD", 4096)], [(e.get("corr_id"), e.get("kind"), e.get("bytes")) for e in mc])
rng = [e for e in ev if e["type"] == "nvtx_range"]
c.eq("NVTX: 5 'step' ranges and 1 'phase'", ["phase"] + ["step"] * 5, sorted(e.get("name") for e in rng))
c.eq("NVTX: mark 'done'", ["done"], [e.get("name") for e in ev if e["type"] == "nvtx_mark"])
PY

# the program marks its steps (NVTX ranges named "step"): those are its steps, exactly
"$GPUBPF" steps --json "$T/t.sbt" >"$T/steps.json" 2>"$T/steps.err" || fail "steps --json ($(head -1 "$T/steps.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$pid" "$T/steps.json" <<'PY'
import sys, json
from events import load, Checker
c = Checker()
trace, pid, sj = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = sorted(((e["ts_ns"], e["ts_ns"] + e["dur_ns"]) for e in load(trace)
              if e["pid"] == pid and e["type"] == "nvtx_range" and e.get("name") == "step"))
p = next((x for x in json.load(open(sj))["processes"] if x["pid"] == pid), {})
c.eq("steps: the NVTX 'step' ranges are the steps (source nvtx), start and end exactly",
     ("nvtx", 5, rng), (p.get("source"), p.get("steps"), [(r["start_ns"], r["end_ns"]) for r in p.get("all", [])]))
sys.exit(1 if c.failed else 0)
PY

"$GPUBPF" export "$T/t.sbt" -f json -o "$T/t.json" -q || fail "export to JSON"
python3 - "$T/t.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
evs = d["traceEvents"] if isinstance(d, dict) else d
slices = [e for e in evs if e.get("ph") == "X" and e.get("name") in ("_Z9gb_kernelPf", "gb_kernel(float*)")]
starts = [e for e in evs if e.get("ph") == "s"]
ends = [e for e in evs if e.get("ph") in ("f", "t")]
ok = lambda c, w, d="": print(("PASS: " if c else "FAIL: ") + w + ("" if c else " " + d))
ok(len(slices) == 5, "export: 5 device kernel slices", str(len(slices)))
ok(len(starts) == 5 and len(ends) == 5, "export: 5 launch -> kernel flows", f"{len(starts)} {len(ends)}")
txt = json.dumps(evs)
ok("bounded" in txt and "device" in txt, "export: timing provenance labels present")
PY

# --lean: launches recorded at entry, without a duration: each launch that
# has a kernel is still the start of its flow (a slice of no length)
start_record -a --lean -o "$T/l.sbt" --lib "$WL/libcuda.so.1" --cupti-lib "$LIB" ||
	{ fail "record --lean --cupti-lib started"; exit 0; }
"$APP" "$LIB" "$WL/libcuda.so.1" 5 >"$T/app2.out" || fail "usdt_app ran (--lean)"
stop_record
check_eq "record --lean exits 0" 0 "$REC_RC"
"$GPUBPF" export "$T/l.sbt" -f json -o "$T/l.json" -q || fail "export --lean trace to JSON"
python3 - "$T/l.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
evs = d["traceEvents"] if isinstance(d, dict) else d
launches = [e for e in evs if e.get("name") == "cuLaunchKernel" and e.get("ph") in ("X", "i")]
starts = [e for e in evs if e.get("ph") == "s"]
ends = [e for e in evs if e.get("ph") in ("f", "t")]
ok = lambda c, w, d="": print(("PASS: " if c else "FAIL: ") + w + ("" if c else " " + d))
ok(len(starts) == 5 and len(ends) == 5, "--lean export: 5 launch -> kernel flows", f"{len(starts)} {len(ends)}")
zero = [e for e in launches if e.get("ph") == "X" and e.get("dur") == 0]
ok(len(zero) == 5 and {(e["pid"], e["tid"], e["ts"]) for e in zero} == {(e["pid"], e["tid"], e["ts"]) for e in starts},
   "--lean export: each flow starts at a launch drawn as a slice of no length", f"{len(zero)} of {len(launches)}")
PY

# a kernel name longer than a record's 255 bytes (CUTLASS kernels run to
# kilobytes): whole on the device slice as on its launch, none counted as cut
start_record -a -o "$T/n.sbt" --lib "$WL/libcuda.so.1" --cupti-lib "$LIB" ||
	{ fail "record --cupti-lib (long names) started"; exit 0; }
# the app stays alive until the recorder has stopped: the names are read while it still holds them
GB_APP_LONG_NAME=1500 GB_APP_HOLD=1 "$APP" "$LIB" "$WL/libcuda.so.1" 3 >"$T/app3.out" &
app=$!
for _ in $(seq 600); do grep -q '^pid=' "$T/app3.out" 2>/dev/null && break; kill -0 $app 2>/dev/null || break; sleep 0.05; done
grep -q '^pid=' "$T/app3.out" || fail "usdt_app ran (long names)"
stop_record
kill $app 2>/dev/null
wait $app 2>/dev/null
check_eq "record (long names) exits 0" 0 "$REC_RC"
"$GPUBPF" info --json "$T/n.sbt" >"$T/n.info" 2>&1 || fail "info --json (long names)"
PYTHONPATH=$ROOT/tests/py python3 - "$T/n.sbt" "$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/app3.out")" "$T/n.info" <<'PY'
import json, sys
from events import load, Checker
c = Checker()
trace, pid, info = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = "gb_long_" + "".join(chr(ord("a") + i % 26) for i in range(8, 1500))
ev = [e for e in load(trace) if e["pid"] == pid]
name = lambda e: e.get("kernel_raw") or e.get("kernel")	# kernel_raw: only where demangling changed it
kern = [name(e) for e in ev if e["type"] == "gpu_kernel"]
launch = [name(e) for e in ev if e["type"] == "cuLaunchKernel"]
c.eq("3 device slices named with the whole 1,500-byte name", [1500] * 3, [len(k or "") for k in kern])
c.true("the device slices' name is the launch's, byte for byte", kern and all(k == want for k in kern + launch),
       str([len(k or "") for k in launch]))
q = json.load(open(info)).get("data_quality", {})
c.eq("no name counted as cut", 0, q.get("names_cut", 0))
sys.exit(1 if c.failed else 0)
PY
