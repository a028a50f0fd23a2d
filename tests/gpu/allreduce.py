#!/usr/bin/env python3
"""One-GPU torch.distributed all-reduce on the NCCL backend, world size 1
(run_h100.sh section 6): --iters all-reduces of 1M float32, then prints
"allreduce iters=N nccl=VERSION". Exit 77: no torch, no GPU or no NCCL.
"""
import argparse
import os
import sys
import tempfile

from gpucommon import cuda_torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=20)
    a = p.parse_args()
    torch = cuda_torch()
    if torch is None:
        return 77
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_nccl_available():
        print("SKIP: this torch has no NCCL backend", file=sys.stderr)
        return 77
    torch.cuda.set_device(0)
    store = tempfile.mktemp(prefix="gb-nccl-")
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    t = torch.ones(1 << 20, device="cuda")
    for _ in range(a.iters):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    v = torch.cuda.nccl.version()
    dist.destroy_process_group()
    if os.path.exists(store):
        os.unlink(store)
    print(f"allreduce iters={a.iters} nccl={v} value={t[0].item()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
