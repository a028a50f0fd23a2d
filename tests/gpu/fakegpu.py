#!/usr/bin/env python3
"""Stand-ins for the PyTorch workloads of tests/gpu/, for run_h100.sh --dry-run.

No torch, no GPU: launches go through the project's fake libcuda
(build/workloads/libcuda.so.1) with ctypes, so gpubpf's uprobes fire as
they would on a real libcuda. The files written (step log, profile JSON,
rate log, pid/ready files) have exactly the format of train.py, loop.py
and hang.py, so run_h100.sh and compare.py take the same path on both.
The "profile" is the workload's own count of what it launched, standing in
for torch.profiler.

  fakegpu.py train --lib LIB [train.py's options]
  fakegpu.py loop --lib LIB --mode launch|gemm [loop.py's options]
  fakegpu.py hang --lib LIB [hang.py's options]
"""
import argparse
import ctypes
import json
import os
import sys
import time

from gpucommon import StepLog, touch, write_pid

# one step of the fake "training loop": kernel names and launches each
STEP_KERNELS = [("_Z10conv_fwd_kPfS_", 2), ("_Z6relu_kPf", 2), ("_Z10conv_bwd_kPfS_", 2),
                ("_Z8sgd_stepPfS_f", 1)]
FAKE_STREAM_BLOCK = 0xb10c


def native_waiter():
    """A thread outside Python, blocked in pause(): PyTorch's own threads (the
    autograd device thread waiting on its queue) are where `record -p --cupti`
    finds a safe moment; the interpreter's frames and the driver's are not."""
    libc = ctypes.CDLL(None)
    tid = ctypes.c_ulong()
    libc.pthread_create(ctypes.byref(tid), None, ctypes.cast(libc.pause, ctypes.c_void_p), None)


class Fake:
    def __init__(self, path):
        native_waiter()
        self.lib = ctypes.CDLL(path)
        self.lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + \
            [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        self.lib.cuCtxSynchronize.argtypes = []
        self.fn = {}

    def function(self, name):
        if name not in self.fn:
            f = ctypes.c_void_p()
            self.lib.cuModuleGetFunction(ctypes.byref(f), None, name.encode())
            self.fn[name] = f
        return self.fn[name]

    def launch(self, name):
        self.lib.cuLaunchKernel(self.function(name), 1, 1, 1, 32, 1, 1, 0, None, None, None)

    def sync(self):
        self.lib.cuCtxSynchronize()


def train(a):
    g = Fake(a.lib)
    write_pid(a.pid_file)
    log = StepLog(a.step_log)
    prof = {}
    i = 0
    t_end = time.monotonic() + a.seconds if a.seconds else None
    while True:
        if t_end is None and i >= a.steps:
            break
        if t_end is not None and (time.monotonic() > t_end or (a.stop_file and os.path.exists(a.stop_file))):
            break
        t0 = log.start()
        names = {}
        for name, n in STEP_KERNELS:
            for _ in range(n):
                g.launch(name)
                names[name] = names.get(name, 0) + 1
        time.sleep(a.step_ms / 1000.0)	# the GPU's work, synchronised
        g.sync()
        log.end(i, t0)
        if a.profile:
            prof[str(i)] = {"names": names, "kernels": sum(names.values()), "device_ns": None}
        if i + 1 == a.warmup:
            touch(a.ready_file)
        i += 1
    log.close()
    if a.profile and a.prof_out:
        with open(a.prof_out, "w") as f:
            json.dump({"source": "fakegpu (the workload's own count)", "steps": prof}, f)
    print(f"steps={i}")


def loop(a):
    g = Fake(a.lib)
    write_pid(a.pid_file)
    per_step = a.launches if a.mode == "launch" else 4
    names = [f"_Z6tiny_{k}Pf" for k in range(4)]
    rl = open(a.rate_log, "w", buffering=1) if a.rate_log else None
    steps = 0
    t_ready = time.monotonic() + a.warmup_s
    ready = False
    t_end = time.monotonic() + a.seconds
    while time.monotonic() < t_end and not (a.stop_file and os.path.exists(a.stop_file)):
        for _ in range(a.batch):
            for k in range(per_step):
                g.launch(names[k & 3])
            if a.mode == "gemm":
                time.sleep(0.002)	# the GEMMs' device time
            steps += 1
        g.sync()
        if rl:
            rl.write(f"{time.time_ns()} {steps} {steps * per_step}\n")
        if not ready and time.monotonic() >= t_ready:
            touch(a.ready_file)
            ready = True
    print(f"steps={steps} launches_per_step={per_step}")


def wait_for_gpu(g, a):
    """The call stuck -p must name: a stream sync behind work that never ends."""
    touch(a.waiting_file)
    g.lib.cuStreamSynchronize(ctypes.c_void_p(FAKE_STREAM_BLOCK))


def hang(a):
    g = Fake(a.lib)
    write_pid(a.pid_file)
    g.launch("_Z11spin_kernell")
    wait_for_gpu(g, a)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["train", "loop", "hang"])
    p.add_argument("--lib", required=True)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--warmup-s", type=float, default=1.0)
    p.add_argument("--step-ms", type=float, default=3.0)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--prof-out")
    p.add_argument("--step-log")
    p.add_argument("--pid-file")
    p.add_argument("--ready-file")
    p.add_argument("--stop-file")
    p.add_argument("--waiting-file")
    p.add_argument("--rate-log")
    p.add_argument("--mode", choices=["launch", "gemm"], default="launch")
    p.add_argument("--launches", type=int, default=100)
    p.add_argument("--batch", type=int, default=5)
    p.add_argument("--blocking-sync", action="store_true")
    a = p.parse_args()
    if a.what == "loop" and not a.seconds:
        a.seconds = 600
    {"train": train, "loop": loop, "hang": hang}[a.what](a)


if __name__ == "__main__":
    sys.exit(main())
