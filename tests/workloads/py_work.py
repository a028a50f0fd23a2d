"""py_work.py - Python driving the fake libcuda through ctypes from nested
functions (outer_step -> middle_step -> launch_once), for --python stacks.

    python3 py_work.py LIBCUDA [N] [SECS]

Prints "produced launches=N pid=P" and, per function, the line of its call:
"line launch_once=L middle_step=L outer_step=L".
"""
import ctypes
import os
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
linger = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
func = ctypes.c_void_p()
lib.cuModuleGetFunction(ctypes.byref(func), None, b"py_kernel")
LINES = {}


def launch_once(i):
    LINES["launch_once"] = sys._getframe().f_lineno + 1
    return lib.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, None, None, None)


def middle_step(i):
    LINES["middle_step"] = sys._getframe().f_lineno + 1
    return launch_once(i)


def outer_step(i):
    LINES["outer_step"] = sys._getframe().f_lineno + 1
    return middle_step(i)


for i in range(n):
    outer_step(i)
print(f"produced launches={n} pid={os.getpid()}")
print("line " + " ".join(f"{k}={v}" for k, v in sorted(LINES.items())))
sys.stdout.flush()
time.sleep(linger)
