#!/usr/bin/env python3
"""Overhead workloads of run_h100.sh section 4, run until --stop-file.

  loop.py --mode launch [--launches K]   a launch-bound loop: a step is K
                                         in-place adds on a 1-element tensor
                                         (one tiny kernel each, eager)
  loop.py --mode gemm                    a compute-bound loop: a step is 4
                                         bf16 GEMMs of 8192x8192
Every --batch steps it synchronises and appends to --rate-log
    REAL_NS STEPS_SO_FAR LAUNCHES_SO_FAR
(CLOCK_REALTIME, as `date +%s%N`); --ready-file once --warmup-s has passed.
Exit 77: no torch or no GPU.
"""
import argparse
import os
import sys
import time

from gpucommon import cuda_torch, touch, write_pid


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["launch", "gemm"], required=True)
    p.add_argument("--launches", type=int, default=100)
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--warmup-s", type=float, default=2.0)
    p.add_argument("--rate-log")
    p.add_argument("--pid-file")
    p.add_argument("--ready-file")
    p.add_argument("--stop-file")
    a = p.parse_args()
    write_pid(a.pid_file)
    torch = cuda_torch()
    if torch is None:
        return 77
    if a.mode == "launch":
        x = torch.zeros(1, device="cuda")
        per_step = a.launches
        batch = a.batch or 20

        def step():
            for _ in range(per_step):
                x.add_(1.0)
    else:
        n = 8192
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        per_step = 4
        batch = a.batch or 5

        def step():
            for _ in range(per_step):
                torch.matmul(A, B, out=C)
    rl = open(a.rate_log, "w", buffering=1) if a.rate_log else None
    steps = 0
    t_ready = time.monotonic() + a.warmup_s
    t_end = time.monotonic() + a.seconds
    ready = False
    while time.monotonic() < t_end and not (a.stop_file and os.path.exists(a.stop_file)):
        for _ in range(batch):
            step()
        torch.cuda.synchronize()
        steps += batch
        if rl:
            rl.write(f"{time.time_ns()} {steps} {steps * per_step}\n")
        if not ready and time.monotonic() >= t_ready:
            touch(a.ready_file)
            ready = True
    print(f"steps={steps} launches_per_step={per_step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
