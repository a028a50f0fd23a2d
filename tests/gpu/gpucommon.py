"""Shared by the workloads of tests/gpu/ (torch ones and fakegpu.py).

Step log, one line per step, written as the step ends:
    step I MONO_START_NS MONO_END_NS REAL_END_NS
MONO is CLOCK_MONOTONIC (time.monotonic_ns on Linux), the clock of gpubpf's
ts_ns, so launches are put in steps by their host time; REAL is
CLOCK_REALTIME, the clock of `date +%s%N` in run_h100.sh's windows.
"""
import os
import sys
import time


def cuda_torch():
    """torch with a GPU it can use, or None after one SKIP line (the caller
    exits 77: what run_h100.sh reports as SKIP with the reason)."""
    try:
        import torch
    except Exception as e:
        print(f"SKIP: no torch: {e}", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print("SKIP: torch sees no GPU", file=sys.stderr)
        return None
    return torch


def touch(path):
    if path:
        with open(path, "a"):
            pass


def write_pid(path):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.rename(path + ".tmp", path)


class StepLog:
    def __init__(self, path):
        self.f = open(path, "w", buffering=1) if path else None

    @staticmethod
    def start():
        return time.monotonic_ns()

    def end(self, i, t0):
        if self.f:
            self.f.write(f"step {i} {t0} {time.monotonic_ns()} {time.time_ns()}\n")

    def close(self):
        if self.f:
            self.f.close()
