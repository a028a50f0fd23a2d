"""Helpers for integration tests: load `gpubpf view --json` output."""
import json
import os
import subprocess
import sys


def load(trace, *args):
    gpubpf = os.environ.get("GPUBPF", "build/gpubpf")
    out = subprocess.run([gpubpf, "view", "--json", *args, trace], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def info(trace):
    gpubpf = os.environ.get("GPUBPF", "build/gpubpf")
    out = subprocess.run([gpubpf, "info", "--json", trace], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    return json.loads(out)


class Checker:
    """Prints one PASS/FAIL line per check, like tests/lib.sh."""

    def __init__(self):
        self.failed = 0

    def eq(self, what, expected, actual):
        if expected == actual:
            print(f"PASS: {what}")
        else:
            self.failed += 1
            print(f"FAIL: {what} (expected {expected!r}, got {actual!r})")

    def true(self, what, cond, detail=""):
        if cond:
            print(f"PASS: {what}")
        else:
            self.failed += 1
            print(f"FAIL: {what} {detail}")


LIBRARY_APIS = {"cuda-driver", "cuda-runtime", "hip", "hsa", "nccl", "cublas", "cublaslt", "cudnn",
                "nvrtc", "nvjitlink"}


def check_callers(c, evs, caller, what):
    """Every call of a library API in evs carries its stack, with `caller`
    among its frames (the program's function that made the call); one
    PASS/FAIL line per API family seen."""
    by = {}
    for e in evs:
        if e.get("api") in LIBRARY_APIS and not e.get("nested"):
            by.setdefault(e["api"], []).append(e)
    for api, es in sorted(by.items()):
        bad = [e for e in es if caller not in [f.get("sym") for f in e.get("stack", [])]]
        c.true(f"{what}: all {len(es)} {api} calls carry their stack up to {caller}()", es and not bad,
               f"({len(bad)} without; first {bad[:1]})")
    return by


def produced(path):
    """Parse the workload's 'produced k=v ...' line into a dict of ints."""
    with open(path) as f:
        for line in f:
            if line.startswith("produced "):
                return {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    return {}


if __name__ == "__main__":
    sys.exit(0)
