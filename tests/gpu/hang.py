#!/usr/bin/env python3
"""A job hung behind a spinning kernel (run_h100.sh section 7).

torch.cuda._sleep(CYCLES) queues a kernel that spins on the GPU clock; then
wait_for_gpu() blocks in torch.cuda.current_stream().synchronize(), i.e.
cudaStreamSynchronize, until the kernel ends (about --seconds) or the
process is killed. --waiting-file is created just before the sync.
--blocking-sync first sets cudaDeviceScheduleBlockingSync through the
wheel's libcudart, so the sync sleeps in the driver instead of spinning on
a CPU (the default with a core per GPU to spare). Exit 77: no torch/GPU.
"""
import argparse
import ctypes
import sys

from gpucommon import cuda_torch, touch, write_pid


def wait_for_gpu(torch, waiting_file):
    """The call gpubpf stuck -p must name, with this function in its stack."""
    touch(waiting_file)
    torch.cuda.current_stream().synchronize()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--pid-file")
    p.add_argument("--waiting-file")
    p.add_argument("--blocking-sync", action="store_true")
    a = p.parse_args()
    write_pid(a.pid_file)
    torch = cuda_torch()
    if torch is None:
        return 77
    if a.blocking_sync:
        rt = ctypes.CDLL("libcudart.so.13")	# the one torch loaded (same soname)
        err = rt.cudaSetDeviceFlags(4)	# cudaDeviceScheduleBlockingSync
        print(f"cudaSetDeviceFlags(BlockingSync) = {err}", flush=True)
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    # clock rate in kHz when torch exposes it, else an H100's ~1.98 GHz
    khz = getattr(torch.cuda.get_device_properties(0), "clock_rate", 0) or 1980000
    torch.cuda._sleep(int(a.seconds * khz * 1000))
    wait_for_gpu(torch, a.waiting_file)
    print("the kernel ended")
    return 0


if __name__ == "__main__":
    sys.exit(main())
