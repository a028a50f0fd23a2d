#!/usr/bin/env python3
"""The measurements of run_h100.sh: read gpubpf traces (view --json,
report --json), the workloads' step and rate logs and torch.profiler's
per-step kernels, and print, as the LAST line of stdout,
    PASS|FAIL|SKIP <one line of measured fact>
which run_h100.sh turns into "RESULT <n> ...". Details go to --detail
(JSON) where given. Only the standard library: it runs under the system
python3 or the torch venv's python alike.

  compare.py discovery --trace T --pid P --steps LOG --prof PROF.json
  compare.py device    --trace T [--pid P] [--steps LOG] [--prof PROF.json]
  compare.py inject    --trace T --trace2 T2 --pid P --steps LOG --before T0 T1 --after T2 T3
  compare.py steptime  --steps LOG --window T0 T1          (prints the median ms only)
  compare.py overhead  --rate-log LOG --windows WIN [--launches-per-step K] [--md OUT.md] [--label L]
  compare.py ioctl     --trace T [--pid P]
  compare.py nccl      --trace T [--iters N]
  compare.py stuck     --text F --json F --func REGEX --pyfunc NAME
  compare.py checksum  --json CHECK.json                    (prints the summary only)
"""
import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

GB = os.environ.get("GB", "gpubpf")
LAUNCH_APIS = ("cuda-driver", "cuda-runtime")
DETAIL = {}


def say(status, fact):
    print(f"{status} {fact}")
    return 0


def view(trace, *args):
    r = subprocess.run([GB, "view", "--json", *args, trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if r.returncode not in (0, 3):
        raise RuntimeError(f"gpubpf view --json {trace}: rc {r.returncode}: {r.stderr.decode()[:200]}")
    return [json.loads(l) for l in r.stdout.decode().splitlines() if l.strip()]


def report(trace, *args):
    r = subprocess.run([GB, "report", "--json", *args, trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    try:
        return json.loads(r.stdout.decode())
    except ValueError:
        return {}


def read_steps(path):
    """{step: (mono_start, mono_end, real_end)} from a step log."""
    out = {}
    if path and os.path.exists(path):
        for l in open(path):
            f = l.split()
            if len(f) == 5 and f[0] == "step":
                out[int(f[1])] = (int(f[2]), int(f[3]), int(f[4]))
    return out


_demangled = {}


def _cxa():
    """libstdc++'s __cxa_demangle, the demangler gpubpf itself uses."""
    import ctypes
    import ctypes.util
    try:
        cxx = ctypes.CDLL("libstdc++.so.6")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    f = cxx.__cxa_demangle
    f.restype = ctypes.c_void_p
    f.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    libc.free.argtypes = [ctypes.c_void_p]

    def dm(name):
        st = ctypes.c_int(0)
        r = f(name.encode(), None, None, ctypes.byref(st))
        if st.value or not r:
            return name
        out = ctypes.string_at(r).decode(errors="replace")
        libc.free(r)
        return out
    return dm


def demangle(names):
    """Demangle _Z names (view --json keeps a kernel's mangled name; the
    profiler shows CUPTI's demangled one)."""
    dm = _cxa()
    todo = [n for n in names if n.startswith("_Z") and n not in _demangled]
    if todo and dm:
        for n in todo:
            _demangled[n] = dm(n)
    elif todo and shutil.which("c++filt"):
        r = subprocess.run(["c++filt"], input="\n".join(todo).encode(), stdout=subprocess.PIPE)
        for a, b in zip(todo, r.stdout.decode().splitlines()):
            _demangled[a] = b
    return {n: _demangled.get(n, n) for n in names}


def norm(name):
    return re.sub(r"\s+", "", name)


def launches(evs, pid=None):
    """Outermost launches, each with the kernel name of its own record or
    of the driver launch nested in it (a runtime launch's name comes from
    its host stub's symbol, which a stripped library may not have)."""
    out = []
    last = {}	# tid -> the outermost launch made last on it
    for e in sorted(evs, key=lambda e: e["ts_ns"]):
        if pid is not None and e.get("pid") != pid:
            continue
        if e.get("api") not in LAUNCH_APIS or "Launch" not in e.get("type", "") or "Graph" in e["type"]:
            continue
        if e.get("nested"):
            o = last.get(e.get("tid"))
            if o is not None:
                if not o.get("kernel") and e.get("kernel"):
                    o["kernel"] = e["kernel"]
                if e.get("corr_id") is not None:
                    o.setdefault("corr_ids", []).append(e["corr_id"])
                # CUPTI's moment is in the driver launch: its device time is the kernel's
                if e.get("timing") == "device":
                    o["timing"] = "device"
            continue
        e = dict(e)
        e["corr_ids"] = [e["corr_id"]] if e.get("corr_id") is not None else []
        last[e.get("tid")] = e
        out.append(e)
    return out


def in_step(steps, ts):
    for i, (t0, t1, _) in steps.items():
        if t0 <= ts <= t1:
            return i
    return None


def cmd_discovery(a):
    steps = read_steps(a.steps)
    if not steps:
        return say("FAIL", f"no step log from the workload ({a.steps})")
    if not a.prof or not os.path.exists(a.prof):
        return say("FAIL", "no profiler output to compare with")
    prof = json.load(open(a.prof))["steps"]
    evs = view(a.trace, "--pid", str(a.pid))
    ls = launches(evs)
    mine = collections.defaultdict(collections.Counter)
    outside = 0
    for e in ls:
        i = in_step(steps, e["ts_ns"])
        if i is None:
            outside += 1
        else:
            mine[i][e.get("kernel") or "<unnamed>"] += 1
    allnames = set()
    for c in mine.values():
        allnames.update(c)
    for s in prof.values():
        allnames.update(s["names"])
    dm = demangle(allnames)
    same_set = same_count = same_multiset = 0
    first_diff = None
    tot_mine = tot_prof = unnamed = 0
    for i in sorted(steps):
        p = collections.Counter({norm(dm[n]): c for n, c in prof.get(str(i), {"names": {}})["names"].items()})
        m = collections.Counter()
        for n, c in mine[i].items():
            m[norm(dm.get(n, n))] += c
        unnamed += mine[i].get("<unnamed>", 0)
        tot_mine += sum(m.values())
        tot_prof += sum(p.values())
        same_set += set(m) == set(p)
        same_count += sum(m.values()) == sum(p.values())
        same_multiset += m == p
        if m != p and first_diff is None:
            first_diff = {"step": i, "gpubpf_only": dict(m - p), "profiler_only": dict(p - m)}
    n = len(steps)
    via = collections.Counter(os.path.basename((e.get("stack") or [{}])[0].get("module") or "?") for e in ls)
    rep = report(a.trace, "--pid", str(a.pid))
    rep_launches = sum(k.get("launches", 0) for k in rep.get("kernels", []))
    apis = collections.Counter(e.get("api") for e in ls)
    DETAIL.update(first_diff=first_diff, apis=dict(apis), report_kernel_launches=rep_launches,
                  launches_outside_steps=outside, unnamed=unnamed, via=dict(via))
    ok = n and same_multiset == n
    return say("PASS" if ok else "FAIL",
               f"{n} steps: same kernel names and counts in {same_multiset}/{n} (same name set {same_set}/{n}, "
               f"same count {same_count}/{n}); launches gpubpf {tot_mine} vs torch.profiler {tot_prof} "
               f"({unnamed} unnamed; by api {dict(apis)}; through {dict(via.most_common(4))}); "
               f"{outside} launches outside steps; "
               f"report --json kernel launches {rep_launches}"
               + (f"; first difference step {first_diff['step']}" if first_diff else ""))


def device_join(evs, pid):
    ls = launches(evs, pid)
    kern = [e for e in evs if e.get("type") == "gpu_kernel" and (pid is None or e.get("pid") == pid)]
    by_corr = {}
    for l in ls:
        for c in l["corr_ids"]:
            by_corr[c] = l
    joined = [(k, by_corr.get(k.get("corr_id"))) for k in kern]
    return ls, kern, joined


def misjoined(joined):
    """Kernel records joined to a launch of another kernel (both named)."""
    return sum(1 for k, l in joined if l is not None and k.get("kernel") and l.get("kernel")
               and k["kernel"] != l["kernel"])


def cmd_device(a):
    evs = view(a.trace)
    pid = a.pid
    ls, kern, joined = device_join(evs, pid)
    if not ls:
        return say("FAIL", "no launches recorded")
    timed = sum(1 for l in ls if l.get("timing") == "device")
    nj = sum(1 for _, l in joined if l is not None)
    timing = collections.Counter(l.get("timing", "none") for l in ls)
    frac = timed / len(ls)
    bad = misjoined(joined)
    fact = (f"{timed}/{len(ls)} launches device-timed ({100 * frac:.2f}%), {nj}/{len(kern)} CUPTI kernel "
            f"records joined to their launch, {bad} to a launch of another kernel; timing {dict(timing)}")
    ok = frac >= 0.99 and nj == len(kern) and bad == 0
    steps = read_steps(a.steps)
    prof = json.load(open(a.prof))["steps"] if a.prof and os.path.exists(a.prof) else None
    if steps:
        per = collections.Counter()
        for k, l in joined:
            i = in_step(steps, l["ts_ns"] if l is not None else k["ts_ns"])
            if i is not None:
                per[i] += k.get("dur_ns", 0)
        warm = [i for i in sorted(steps) if i >= a.skip]
        mine = statistics.median(per[i] for i in warm) if warm else 0
        DETAIL["gpubpf_step_device_ns"] = {i: per[i] for i in sorted(steps)}
        if prof:
            pw = [s["device_ns"] for i, s in prof.items() if int(i) >= a.skip and s.get("device_ns")]
            if pw:
                theirs = statistics.median(pw)
                d = 100.0 * (mine - theirs) / theirs
                fact += (f"; device time per step (median of steps >= {a.skip}) gpubpf {mine / 1e3:.1f} us vs "
                         f"torch.profiler {theirs / 1e3:.1f} us ({d:+.1f}%, profiler from another run)")
                ok = ok and abs(d) <= 5.0
            else:
                fact += f"; device time per step {mine / 1e3:.1f} us; profiler has none to compare"
                ok = False
        else:
            fact += f"; device time per step {mine / 1e3:.1f} us; no profiler output to compare"
            ok = False
    else:
        fact += "; no step log: per-step device time not compared"
        ok = False
    return say("PASS" if ok else "FAIL", fact)


def median_step_ms(steps, t0, t1):
    """Median start-to-start step time (ms) of the steps that ended in [t0, t1] (REALTIME ns)."""
    idx = sorted(i for i, s in steps.items() if t0 <= s[2] <= t1)
    d = [(steps[j][0] - steps[i][0]) / 1e6 for i, j in zip(idx, idx[1:]) if j == i + 1]
    return statistics.median(d) if d else None


def cmd_steptime(a):
    m = median_step_ms(read_steps(a.steps), int(a.window[0]), int(a.window[1]))
    print("none" if m is None else f"{m:.3f}")
    return 0


def cmd_inject(a):
    steps = read_steps(a.steps)
    parts = []
    ok = True
    for n, t in enumerate([a.trace, a.trace2], 1):
        if not t or not os.path.exists(t):
            parts.append(f"attach {n}: no trace")
            ok = False
            continue
        evs = view(t)
        ls, kern, joined = device_join(evs, a.pid)
        timed = sum(1 for l in ls if l.get("timing") == "device")
        bad = misjoined(joined)
        parts.append(f"attach {n}: {len(kern)} device kernels, {timed}/{len(ls)} launches device-timed, "
                     f"{bad} joined to another kernel's launch")
        ok = ok and len(kern) > 0 and bad == 0
    b = median_step_ms(steps, int(a.before[0]), int(a.before[1]))
    af = median_step_ms(steps, int(a.after[0]), int(a.after[1]))
    if b and af:
        d = 100.0 * (af - b) / b
        parts.append(f"step time before {b:.3f} ms, after detach {af:.3f} ms ({d:+.1f}%)")
        ok = ok and abs(d) <= 3.0
    else:
        parts.append(f"step time before {b} after {af}: not enough steps in a window")
        ok = False
    return say("PASS" if ok else "FAIL", "; ".join(parts))


def rate(log, t0, t1):
    """Steps per second between the first and last rate-log entries inside [t0, t1]."""
    pts = [p for p in log if t0 <= p[0] <= t1]
    if len(pts) < 2 or pts[-1][0] == pts[0][0]:
        return None
    return (pts[-1][1] - pts[0][1]) * 1e9 / (pts[-1][0] - pts[0][0])


def cmd_overhead(a):
    log = [tuple(int(x) for x in l.split()) for l in open(a.rate_log) if len(l.split()) == 3]
    wins = [l.split() for l in open(a.windows) if len(l.split()) == 3]
    r = {w[0]: rate(log, int(w[1]), int(w[2])) for w in wins}
    bases = [v for k, v in r.items() if k.startswith("untraced") and v]
    if not bases:
        return say("FAIL", f"{a.label}: no untraced rate measured")
    base = statistics.mean(bases)
    k = a.launches_per_step
    parts, rows = [], []
    for name, v in r.items():
        if v is None:
            parts.append(f"{name} not measured")
            continue
        if name.startswith("untraced"):
            parts.append(f"{name} {v:.1f}/s")
            continue
        ns = (1.0 / v - 1.0 / base) * 1e9 / k
        parts.append(f"{name} {v:.1f}/s ({100 * (v - base) / base:+.1f}%, {ns:+.0f} ns/launch)")
        rows.append(f"| {a.label} | {name} | {v:.1f} | {base:.1f} | {100 * (v - base) / base:+.1f}% | {ns:+.0f} |")
    if a.md:
        with open(a.md, "a") as f:
            for row in rows:
                f.write(row + "\n")
    u = [r.get("untraced-before"), r.get("untraced-after")]
    ok = all(v is not None for v in r.values())
    back = ""
    if all(u):
        d = 100.0 * (u[1] - u[0]) / u[0]
        back = f"; untraced after vs before {d:+.1f}%"
        ok = ok and abs(d) <= 5
    return say("PASS" if ok else "FAIL", f"{a.label} ({k} launches/step): " + ", ".join(parts) + back)


def cmd_ioctl(a):
    evs = [e for e in view(a.trace) if e.get("type") == "ioctl" and (a.pid is None or e.get("pid") == a.pid)]
    if not evs:
        return say("FAIL", "no driver ioctls recorded")
    names = collections.Counter(e.get("name") or "undecoded" for e in evs)
    devs = collections.Counter(e.get("detail", "?") for e in evs)
    dec = sum(1 for e in evs if e.get("name"))
    sub = sum(1 for e in evs if e.get("cmd_name") or e.get("hClass_name"))
    top = ", ".join(f"{n} {c}" for n, c in names.most_common(5))
    ok = dec > 0
    return say("PASS" if ok else "FAIL",
               f"{len(evs)} ioctls, {dec} named ({100 * dec / len(evs):.0f}%), {sub} with a control command or "
               f"class named; devices {dict(devs.most_common(4))}; most: {top}")


def cmd_nccl(a):
    evs = [e for e in view(a.trace) if e.get("api") == "nccl"]
    if not evs:
        return say("FAIL", "no NCCL calls recorded")
    ar = [e for e in evs if e.get("type") == "ncclAllReduce"]
    seqs = [e.get("seq") for e in ar]
    ids = {e.get("comm_id") for e in evs if e.get("comm_id")}
    inits = [e["type"] for e in evs if "Init" in e.get("type", "")]
    mono = all(s is not None for s in seqs) and seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    ok = len(ar) >= a.iters and bool(ids) and mono
    return say("PASS" if ok else "FAIL",
               f"{len(ar)} ncclAllReduce (expected {a.iters}), {len(evs)} NCCL calls; communicator ids "
               f"{sorted(ids) or 'none'}; init calls {inits}; seq {seqs[:3]}..{seqs[-2:]} "
               f"({'distinct and increasing' if mono else 'missing or not increasing'})")


def cmd_stuck(a):
    text = open(a.text).read() if os.path.exists(a.text) else ""
    try:
        d = json.load(open(a.json))
    except (OSError, ValueError):
        d = {}
    calls = d.get("calls", [])
    hit = [c for c in calls if re.search(a.func, c.get("func", ""))]
    frames = [f for c in (hit or calls) for f in c.get("stack", [])]
    py = [f for f in frames if re.search(r"python|libpython", f.get("module") or "") or
          (f.get("sym") or "").startswith(("_PyEval", "PyEval", "_PyObject", "PyObject_Vectorcall"))]
    named = any(a.pyfunc in (f.get("sym") or "") for f in frames) or a.pyfunc in text
    funcs = sorted({c.get("func") for c in calls})
    state = [f"{c.get('func')} {c.get('syscall') or c.get('state')}" for c in hit[:1]]
    ok = bool(hit) and named
    return say("PASS" if ok else "FAIL",
               f"calls {funcs or 'none'}; {a.func} {'named' if hit else 'NOT named'} {state}; "
               f"{len(frames)} frames, {len(py)} of the Python interpreter; Python function "
               f"{a.pyfunc}() {'named' if named else 'not named'}")


def cmd_checksum(a):
    """gpubpf check --json in one line (section 5)."""
    d = json.load(open(a.json))
    checks = d.get("checks", [])
    bad = [c.get("name") for c in checks if not c.get("ok")]
    print(f"gpubpf check (check.txt): {len(checks) - len(bad)} ok, not: {' '.join(bad) or 'none'}; "
          f"{len(d.get('libraries', []))} GPU libraries")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what")
    p.add_argument("--trace")
    p.add_argument("--trace2")
    p.add_argument("--pid", type=int)
    p.add_argument("--steps")
    p.add_argument("--prof")
    p.add_argument("--skip", type=int, default=5)
    p.add_argument("--before", nargs=2)
    p.add_argument("--after", nargs=2)
    p.add_argument("--window", nargs=2)
    p.add_argument("--rate-log")
    p.add_argument("--windows")
    p.add_argument("--launches-per-step", type=int, default=1)
    p.add_argument("--label", default="")
    p.add_argument("--md")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--text")
    p.add_argument("--json")
    p.add_argument("--func", default="StreamSynchronize")
    p.add_argument("--pyfunc", default="wait_for_gpu")
    p.add_argument("--detail")
    a = p.parse_args()
    fn = globals().get("cmd_" + a.what)
    if not fn:
        p.error(f"unknown measurement {a.what}")
    try:
        rc = fn(a)
    except Exception as e:	# one line, never a traceback as the result
        say("FAIL", f"{a.what}: {type(e).__name__}: {str(e)[:200]}")
        rc = 0
    if a.detail:
        with open(a.detail, "w") as f:
            json.dump(DETAIL, f, indent=1, default=str)
    return rc


if __name__ == "__main__":
    sys.exit(main())
