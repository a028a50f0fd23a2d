#!/usr/bin/env bash
# Portable traces (issue 40): the names of the stacks' frames -- function,
# source file, line -- travel with the trace. A recording whose executable
# is then deleted and whose library is rebuilt at the same path still shows
# every frame's name and line in view, report, Perfetto (protoc) and pprof
# (go tool pprof), read from another directory. --no-symbols stores none
# (the readers say which frames they could not name, and why), and
# `gpubpf symbolize` adds them back, the same as recording with them. A
# program built by nvcc (static CUDA runtime) survives the same way.
# TIMEOUT: 900
source "$(dirname "$0")/../lib.sh"
need_bpf "portable traces"
for f in stack_work libstacklib.so libcuda.so.1 mistakes_work; do
	[ -r "$WL/$f" ] || { skip "portable traces" "build/workloads/$f missing: run make workloads"; exit 0; }
done
B=$T/bin
mkdir -p "$B" "$T/elsewhere"
cp "$WL/stack_work" "$WL/libstacklib.so" "$WL/mistakes_work" "$B/"

# record: A with names (the default), N with --no-symbols; the same program both times
rec() {
	local out=$1; shift
	start_record -a --stack dwarf --lib "$WL/libcuda.so.1" -o "$out" "$@" || { fail "record $out started"; return 1; }
	"$B/stack_work" -l "$WL/libcuda.so.1" -n 5 >"$out.wl" 2>&1
	check_eq "$(basename "$out"): the workload ran" 0 $?
	"$B/mistakes_work" -l "$WL/libcuda.so.1" alloc >/dev/null 2>&1	# a report finding with its call site
	stop_record
	check_eq "$(basename "$out"): record exits 0" 0 "$REC_RC"
	cp "$T/rec.log" "$out.log"
}
rec "$T/a.sbt" || exit 0
rec "$T/n.sbt" --no-symbols || exit 0
"$GPUBPF" info --json "$T/a.sbt" >"$T/a.info"
"$GPUBPF" info --json "$T/n.sbt" >"$T/n.info"
# symbolize while the binaries are at hand: by path, and from a copy under --symfs
"$GPUBPF" symbolize "$T/n.sbt" -o "$T/s.sbt" 2>"$T/s.err"
check_eq "symbolize exits 0" 0 $?
mkdir -p "$T/symfs$B"
cp "$B/stack_work" "$B/libstacklib.so" "$B/mistakes_work" "$T/symfs$B/"
ln -s "$T/n.sbt" "$T/n-link.sbt"
"$GPUBPF" symbolize "$T/n.sbt" -o "$T/n-link.sbt" 2>"$T/same.err"
check_eq "symbolize onto its input (through a link) is refused with exit 2" 2 $?
check_true "... and says why ($(head -1 "$T/same.err"))" grep -q "is the input" "$T/same.err"

# the binaries go away: the executable deleted, the library rebuilt at its path
rm -f "$B/stack_work" "$B/mistakes_work"
cp "$WL/libcuda.so.1" "$B/libstacklib.so"
"$GPUBPF" symbolize "$T/n.sbt" --symfs "$T/symfs" -o "$T/f.sbt" 2>"$T/f.err"
check_eq "symbolize --symfs exits 0 (the binaries only under DIR)" 0 $?
rm -rf "$T/symfs"
for t in a n s f; do mv "$T/$t.sbt" "$T/elsewhere/"; done
cd "$T/elsewhere" || exit 1
# two nodes' traces merged (the second a copy: another inode), with none of their binaries
cp a.sbt a2.sbt
"$GPUBPF" merge -q a.sbt a2.sbt -o m.sbt 2>m.err
check_eq "merge of two traces exits 0 without their binaries ($(head -1 m.err))" 0 $?
for t in a n s f m; do
	"$GPUBPF" view --json "$t.sbt" >"$t.view" 2>"$t.view.err"
	"$GPUBPF" report --json "$t.sbt" >"$t.report" 2>"$t.report.err"
	"$GPUBPF" export -f pprof "$t.sbt" -o "$t.pb.gz" 2>/dev/null
done
"$GPUBPF" export -f perfetto a.sbt -o a.pftrace 2>/dev/null
PF=$(decode_perfetto a.pftrace "$PWD/a.pf.txt" "portable traces: Perfetto")
PP=$(pprof_raw a.pb.gz "$PWD/a.raw" "portable traces: pprof")

PYTHONPATH=$ROOT/tests/py python3 - "$B" "$PF" "$PP" <<'PY'
import sys, json, re
from events import Checker
B, PF, PP = sys.argv[1:4]
c = Checker()
exe, lib = B + "/stack_work", B + "/libstacklib.so"

def launches(t):
    ev = [json.loads(l) for l in open(t + ".view")]
    return [e for e in ev if e["type"] == "cuLaunchKernel" and e.get("stack")]

def frames(t):
    """(module, offset) -> (sym, file, line) over every launch's stack"""
    out = {}
    for e in launches(t):
        for f in e["stack"]:
            out[(f["module"], f["offset"])] = (f.get("sym"), f.get("file"), f.get("line"))
    return out

a = frames("a")
c.true("a: launches with stacks read back", len(launches("a")) >= 5, str(len(launches("a"))))
mine = {k: v for k, v in a.items() if k[0] in (exe, lib)}
c.true("a: the deleted executable's stack_f1..stack_f8 are named, each with stack_work.c and a line",
       {f"stack_f{i}" for i in range(1, 9)} <= {v[0] for v in mine.values()} and
       all(v[1] and v[1].endswith("stack_work.c") and v[2] > 0
           for v in mine.values() if v[0] and v[0].startswith("stack_f")), str(sorted(mine.values(), key=str)[:4]))
libf = [v for k, v in a.items() if k[0] == lib]
c.true("a: the rebuilt library's frames keep their recorded names (stacklib::submit, stacklib_submit) and stacklib.cc lines",
       {"stacklib_submit"} <= {v[0] for v in libf} and
       any(v[0] and v[0].startswith("stacklib::submit") and v[1] and v[1].endswith("stacklib.cc") and v[2] > 0
           for v in libf), str(libf))
info = json.load(open("../a.info"))
c.true("a: info --json counts the frame names the trace carries", info.get("frame_names", 0) >= 10, str(info.get("frame_names")))
ninfo = json.load(open("../n.info"))
c.eq("--no-symbols: the trace carries no frame names", 0, ninfo.get("frame_names", -1))
n = frames("n")
nm = {k: v for k, v in n.items() if k[0] in (exe, lib)}
c.true("--no-symbols: the program's frames read back unnamed once the binaries are gone",
       nm and all(v[0] is None for v in nm.values()), str(list(nm.values())[:3]))
nv = [f for e in launches("n") for f in e["stack"] if f["module"] in (exe, lib)]
why = {f["module"]: f.get("unnamed") for f in nv}
c.eq("--no-symbols: view --json says why per frame",
     {exe: "not found", lib: "binary changed since recording"}, why)
err = open("n.view.err").read()
c.true("--no-symbols: view says on stderr which files' frames could not be named and why",
       re.search(re.escape(exe) + r": \d+, not found", err) and
       re.search(re.escape(lib) + r": \d+, binary changed since recording", err) and "gpubpf symbolize" in err, err)
for t, what in (("s", "symbolize (binaries by path)"), ("f", "symbolize --symfs")):
    c.eq(f"{what}: every frame has the name, file and line recording gave it", a, frames(t))
    c.true(f"{what}: view is silent about unnamed frames", "could not be named" not in open(t + ".view.err").read(),
           open(t + ".view.err").read())
def site(t):
    return [f.get("site") or "" for f in json.load(open(t + ".report"))["findings"] if f.get("rule") == "alloc-in-loop"]
for t in ("a", "s", "f"):
    c.true(f"{t}: report names the finding's call site with its source lines (deleted binary)",
           any(re.match(r"alloc_loop \(mistakes_work\.c:\d+\) < main \(mistakes_work\.c:\d+\)", x) for x in site(t)), str(site(t)))
c.true("--no-symbols: report's call site is module+offset (no names, binaries gone)",
       site("n") and all("alloc_loop" not in x and "mistakes_work+0x" in x for x in site("n")), str(site("n")))
c.eq("merge: each trace's frames keep their names, files and lines", a, frames("m"))
c.true("merge: view is silent about unnamed frames", "could not be named" not in open("m.view.err").read(),
       open("m.view.err").read())
c.true("a: report is silent about unnamed frames", "could not be named" not in open("a.report.err").read(),
       open("a.report.err").read())
if PF:
    pf = open(PF).read()
    names = set(re.findall(r'function_name: "([^"]*)"', pf))
    c.true("Perfetto: the interned frames carry stack_f1..stack_f8", {f"stack_f{i}" for i in range(1, 9)} <= names,
           str(sorted(names)[:10]))
    syms = re.findall(r'module_symbols \{\s*path: "([^"]*)".*?function_name: "([^"]*)"\s*source_file_name: "([^"]*)"\s*line_number: (\d+)', pf, re.S)
    got = {(p, fn, src.rsplit("/", 1)[-1], int(ln)) for p, fn, src, ln in syms}
    want = {(k[0], v[0], v[1].rsplit("/", 1)[-1], v[2]) for k, v in a.items() if v[1] and k[0] == exe}
    c.true("Perfetto: ModuleSymbols give each of the program's frames its source file and line",
           want and want <= got, f"missing {sorted(want - got)[:3]}")
if PP:
    raw = open(PP).read()
    c.true("pprof (go tool pprof): the program's functions with stack_work.c:LINE",
           all(re.search(rf"stack_f{i} .*stack_work\.c:\d+", raw) for i in range(1, 9)),
           "\n".join(l for l in raw.splitlines() if "stack_f" in l)[:300])
sys.exit(1 if c.failed else 0)
PY

# a program built by nvcc with its defaults: the CUDA runtime is in the executable
CUDA=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA/bin/nvcc" ]; then
	skip "portable traces: static CUDA runtime" "no nvcc at $CUDA/bin/nvcc (set CUDA_HOME)"
	exit 0
fi
if ! "$CUDA/bin/nvcc" -g -o "$B/static_rt" "$ROOT/tests/workloads/static_rt.cu" 2>"$T/nvcc.err"; then
	fail "nvcc builds the program ($(head -1 "$T/nvcc.err"))"; exit 0
fi
"$GPUBPF" record -o "$T/st.sbt" -- "$B/static_rt" >"$T/st.out" 2>"$T/st.log"
check_eq "static runtime: record -- CMD exits 0" 0 $?
rm -f "$B/static_rt"
"$GPUBPF" view --json --type cudaLaunchKernel "$T/st.sbt" >"$T/st.view" 2>"$T/st.err"
python3 - "$T/st.view" "$B/static_rt" <<'PY'
import sys, json
ev = [json.loads(l) for l in open(sys.argv[1])]
fr = [f for e in ev for f in e.get("stack", []) if f["module"] == sys.argv[2]]
mains = [f for f in fr if f.get("sym") == "main"]
ok = len(ev) == 12 and mains and all(f.get("file", "").endswith("static_rt.cu") and f.get("line", 0) > 0 for f in mains)
print(("PASS" if ok else "FAIL") + ": static runtime: the deleted executable's main() is named with static_rt.cu:LINE in all 12 launches"
      + ("" if ok else f" ({len(ev)} launches, frames {fr[:3]})"))
PY
