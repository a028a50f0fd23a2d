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


def produced(path):
    """Parse the workload's 'produced k=v ...' line into a dict of ints."""
    with open(path) as f:
        for line in f:
            if line.startswith("produced "):
                return {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    return {}


if __name__ == "__main__":
    sys.exit(0)
