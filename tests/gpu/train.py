#!/usr/bin/env python3
"""A small conv net trained eagerly on random data: the workload of
run_h100.sh sections 1, 2, 3, 5 and 8.

Each step (zero_grad, forward, loss, backward, SGD step) ends with
torch.cuda.synchronize(), so every kernel of step I was launched and has
run between the step's two times in the step log (gpucommon.py).

  train.py [--steps N | --seconds S [--stop-file F]] [--warmup W]
           [--step-log F] [--pid-file F] [--ready-file F]
           [--profile --prof-out F.json [--prof-trace F.trace.json]]

--ready-file is created after W steps (default 5: cuDNN and cuBLAS loaded,
caches warm). --profile runs the steps under torch.profiler (CPU and CUDA
activities), each in record_function("gb_step_I"), and writes per step the
kernels' names and counts and their summed device time (prof-out):
    {"source": "torch.profiler", "steps": {"I": {"names": {NAME: N},
     "kernels": N, "device_ns": NS}}}
A kernel belongs to the step whose range holds its launch call (by
correlation id), else its own start. Exit 77: no torch or no GPU.
"""
import argparse
import json
import os
import sys
import tempfile
import time

from gpucommon import cuda_torch, StepLog, touch, write_pid


def build(torch):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    return model, opt, x, y


def step(torch, model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()


def per_step(trace_path):
    """Kernels per gb_step_I range of a Kineto chrome trace."""
    with open(trace_path) as f:
        d = json.load(f)
    evs = d["traceEvents"] if isinstance(d, dict) else d
    steps = []
    launch_ts = {}
    kernels = []
    for e in evs:
        cat, name = e.get("cat", ""), e.get("name", "")
        if cat == "user_annotation" and name.startswith("gb_step_"):
            steps.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), name[8:]))
        elif cat in ("cuda_runtime", "cuda_driver"):
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                launch_ts[c] = float(e["ts"])
        elif cat == "kernel":
            kernels.append(e)
    steps.sort()
    out = {s[2]: {"names": {}, "kernels": 0, "device_ns": 0} for s in steps}
    by_corr = 0
    for k in kernels:
        c = (k.get("args") or {}).get("correlation")
        t = launch_ts.get(c)
        if t is not None:
            by_corr += 1
        else:
            t = float(k["ts"])
        for t0, t1, i in steps:
            if t0 <= t <= t1:
                s = out[i]
                s["names"][k["name"]] = s["names"].get(k["name"], 0) + 1
                s["kernels"] += 1
                s["device_ns"] += int(round(float(k.get("dur", 0)) * 1000))
                break
    return out, len(kernels), by_corr


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--step-log")
    p.add_argument("--pid-file")
    p.add_argument("--ready-file")
    p.add_argument("--stop-file")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--prof-out")
    p.add_argument("--prof-trace")
    a = p.parse_args()
    write_pid(a.pid_file)
    torch = cuda_torch()
    if torch is None:
        return 77
    torch.backends.cudnn.benchmark = False
    model, opt, x, y = build(torch)
    log = StepLog(a.step_log)
    prof = None
    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    t_end = time.monotonic() + a.seconds if a.seconds else None
    i = 0
    while True:
        if t_end is None and i >= a.steps:
            break
        if t_end is not None and (time.monotonic() > t_end or (a.stop_file and os.path.exists(a.stop_file))):
            break
        t0 = log.start()
        if prof is not None:
            with torch.profiler.record_function(f"gb_step_{i}"):
                step(torch, model, opt, x, y)
        else:
            step(torch, model, opt, x, y)
        log.end(i, t0)
        if i + 1 == a.warmup:
            touch(a.ready_file)
        i += 1
    log.close()
    if prof is not None:
        prof.__exit__(None, None, None)
        path = a.prof_trace or tempfile.mktemp(suffix=".trace.json")
        prof.export_chrome_trace(path)
        steps, nk, by_corr = per_step(path)
        if not a.prof_trace:
            os.unlink(path)
        if a.prof_out:
            with open(a.prof_out, "w") as f:
                json.dump({"source": f"torch.profiler (torch {torch.__version__})", "steps": steps,
                           "kernels_in_trace": nk, "kernels_by_correlation": by_corr}, f)
    print(f"steps={i} torch={torch.__version__} cuda={torch.version.cuda} "
          f"device={torch.cuda.get_device_name(0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
