#!/usr/bin/env python3
"""Compare gpubpf's import of an XRay log with llvm-xray's reading of it.

  xray_compare.py --yaml LLVM.yaml --events IMPORT.jsonl [--trace-event LLVM.json]

LLVM.yaml: `llvm-xray-14 convert --symbolize --output-format=yaml --instr_map=BIN LOG`
IMPORT.jsonl: gpubpf's events (view --json, or import --dump), xray ones used.
LLVM.json: `llvm-xray-14 convert --output-format=trace_event ...` (optional):
its B/E microsecond timestamps must match the import within llvm's
floating-point error.

The expected slices are rebuilt from llvm's records with the rules of
llvm-xray's trace_event converter (shared/xray-format.md 7.2). Checks, per
thread: the same functions in the same order, the same ids, the logged
arguments, how each slice ended (exit, tail exit, still open), and start
and end times equal after a single offset (TSC -> CLOCK_MONOTONIC).
Prints one summary line; exit 0 when everything matches.
"""
import argparse
import json
import re
import sys
from collections import defaultdict

REC = re.compile(
    r"- \{ type: (\d+), func-id: (\d+), function: (.*?), (?:args: \[ ?(.*?) ?\], )?"
    r"cpu: (\d+), thread: (\d+), (?:process: (\d+), )?kind: ([\w-]+), tsc: (\d+), "
    r"data: (.*) \}$")


def unquote(s):
    if len(s) >= 2 and s[0] == s[-1] == "'":
        return s[1:-1].replace("''", "'")
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return json.loads(s)
    return s


def read_yaml(path):
    freq, recs = None, []
    for line in open(path):
        line = line.strip()
        if line.startswith("cycle-frequency:"):
            freq = int(line.split(":")[1])
            continue
        m = REC.match(line)
        if not m:
            continue
        recs.append({
            "func_id": int(m.group(2)), "func": unquote(m.group(3)),
            "args": [int(a) for a in m.group(4).split(",")] if m.group(4) else [],
            "tid": int(m.group(6)), "kind": m.group(8), "tsc": int(m.group(9)),
            "data": unquote(m.group(10)),
        })
    if freq is None:
        sys.exit("xray_compare: no cycle-frequency in %s" % path)
    return freq, recs


def tsc_ns(tsc, freq):
    return tsc * 10**9 // freq


def expected_slices(recs, freq):
    """Per tid: list of dicts in start order, built like llvm-xray's trace_event."""
    out, stacks, last = defaultdict(list), defaultdict(list), {}
    for r in recs:
        tid, t = r["tid"], tsc_ns(r["tsc"], freq)
        last[tid] = t
        k = r["kind"]
        if k in ("function-enter", "function-enter-arg"):
            s = {"func": r["func"], "func_id": r["func_id"], "start": t, "end": None,
                 "arg": r["args"][0] if r["args"] else None, "how": "open"}
            out[tid].append(s)
            stacks[tid].append(s)
        elif k in ("function-exit", "function-tail-exit"):
            st = stacks[tid]
            while st:
                s = st.pop()
                s["end"] = t
                s["how"] = "tail" if k == "function-tail-exit" else "exit"
                if s["func_id"] == r["func_id"]:
                    break
        elif k in ("custom-event", "typed-event"):
            out[tid].append({"event": True, "start": t, "data": r["data"]})
    for tid, st in stacks.items():
        for s in st:
            s["end"] = last[tid]
    return out


def imported(path):
    out, prev = defaultdict(list), None
    for n, line in enumerate(open(path), 1):
        e = json.loads(line)
        if e.get("api") != "xray":
            continue
        if prev is not None and e["ts_ns"] < prev:
            sys.exit("FAIL: import not in time order at line %d" % n)
        prev = e["ts_ns"]
        out[e["tid"]].append(e)
    return out


def how(e):
    d = e.get("detail", "")
    return "tail" if d == "tail call" else "open" if d.startswith("no exit") else "exit"


def compare(exp, got):
    errs, offsets, n = [], set(), 0
    if sorted(exp) != sorted(got):
        return ["threads differ: llvm %s, import %s" % (sorted(exp), sorted(got))], 0
    for tid in exp:
        a, b = exp[tid], got[tid]
        if len(a) != len(b):
            errs.append("tid %d: llvm has %d slices/events, import %d" % (tid, len(a), len(b)))
            continue
        for i, (x, y) in enumerate(zip(a, b)):
            n += 1
            where = "tid %d #%d" % (tid, i)
            offsets.add(y["ts_ns"] - x["start"])
            if x.get("event"):
                if y["type"] != "xray_event" or y.get("bytes") != len(x["data"]) or \
                        y.get("detail", x["data"]) != x["data"]:
                    errs.append("%s: event %r vs %r" % (where, x, y))
                continue
            if y["type"] != "xray" or y.get("func") != x["func"] or y.get("func_id") != x["func_id"]:
                errs.append("%s: llvm %s(%d), import %s(%s)" % (
                    where, x["func"], x["func_id"], y.get("func"), y.get("func_id")))
            if y.get("arg") != x["arg"]:
                errs.append("%s %s: arg llvm %s import %s" % (where, x["func"], x["arg"], y.get("arg")))
            if how(y) != x["how"]:
                errs.append("%s %s: ended by %s in llvm, %s in import" % (where, x["func"], x["how"], how(y)))
            if y.get("dur_ns") != x["end"] - x["start"]:
                errs.append("%s %s: duration llvm %d import %s" % (
                    where, x["func"], x["end"] - x["start"], y.get("dur_ns")))
    if len(offsets) > 1:
        errs.append("timestamps are not one offset from llvm's: %d different offsets (%d..%d)"
                    % (len(offsets), min(offsets), max(offsets)))
    return errs, n


def check_trace_event(path, got, offset):
    """llvm's B/E in us (double, quantised): each B at a slice start."""
    te = json.load(open(path))["traceEvents"]
    starts = defaultdict(list)
    for e in te:
        if e["ph"] == "B":
            starts[int(e["tid"])].append(float(e["ts"]))
    errs, worst = [], 0.0
    for tid, ss in starts.items():
        mine = [e["ts_ns"] - offset for e in got.get(tid, []) if e["type"] == "xray"]
        if len(mine) != len(ss):
            errs.append("trace_event tid %d: %d B events, import %d slices" % (tid, len(ss), len(mine)))
            continue
        for us, ns in zip(ss, mine):
            worst = max(worst, abs(us * 1000 - ns))
    if worst > 1000:	# llvm: 1e6/f*tsc in double, ~0.25 us steps at epoch ns
        errs.append("trace_event timestamps off by up to %.0f ns" % worst)
    return errs, worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yaml", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--trace-event")
    a = ap.parse_args()
    freq, recs = read_yaml(a.yaml)
    if not recs:
        sys.exit("xray_compare: llvm-xray gave no records in %s" % a.yaml)
    exp, got = expected_slices(recs, freq), imported(a.events)
    errs, n = compare(exp, got)
    worst = 0.0
    if not errs and a.trace_event:
        first = next(iter(exp))
        offset = got[first][0]["ts_ns"] - exp[first][0]["start"]
        e2, worst = check_trace_event(a.trace_event, got, offset)
        errs += e2
    if errs:
        print("MISMATCH: %d problems; first: %s" % (len(errs), "; ".join(errs[:5])))
        return 1
    print("OK: %d records, %d slices/events on %d threads match llvm-xray "
          "(trace_event within %.0f ns)" % (len(recs), n, len(exp), worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
