#!/usr/bin/env python3
"""SIGKILL the recorder during the attach or the detach of `record -p PID
--cupti` (run_h100.sh section 8). The attach seizes one thread to load the
CUPTI library; a thread's TracerPid in /proc/PID/task/TID/status says
when. The detach stops no thread (it asks the library through its control
block), so it is hit by time: --after S seconds after the recorder's log
says the library is in (its -d), plus 0-100 ms.

  killer.py --target PID --tracer RPID --phase attach|detach [--log F] [--after S] [--timeout S]

Prints "hit PHASE after MS ms (...)" or "missed PHASE: WHY".
"""
import random
import argparse
import os
import signal
import sys
import time


def traced_thread(target, tracer):
    try:
        tids = os.listdir(f"/proc/{target}/task")
    except OSError:
        return None
    for t in tids:
        try:
            with open(f"/proc/{target}/task/{t}/status") as f:
                for l in f:
                    if l.startswith("TracerPid:"):
                        if int(l.split()[1]) == tracer:
                            return int(t)
                        break
        except OSError:
            pass
    return None


def alive(pid):
    """Running, not a zombie its parent has yet to reap."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", type=int, required=True)
    p.add_argument("--tracer", type=int, required=True)
    p.add_argument("--phase", choices=["attach", "detach"], required=True)
    p.add_argument("--log", help="the recorder's stderr (detach: wait for 'library injected')")
    p.add_argument("--after", type=float, default=2.0, help="detach: seconds after 'library injected'")
    p.add_argument("--timeout", type=float, default=20)
    a = p.parse_args()
    t0 = time.monotonic()
    armed = a.phase == "attach"
    while time.monotonic() - t0 < a.timeout:
        if not alive(a.tracer):
            print(f"missed {a.phase}: the recorder ended first")
            return 1
        if not armed:
            try:
                armed = "library injected" in open(a.log).read()
            except OSError:
                pass
            if not armed:
                time.sleep(0.005)
                continue
        if a.phase == "detach":
            time.sleep(a.after + random.uniform(0, 0.1))
            if not alive(a.tracer):
                print("missed detach: the recorder ended first")
                return 1
            os.kill(a.tracer, signal.SIGKILL)
            print(f"hit detach after {1000 * (time.monotonic() - t0):.1f} ms ({a.after} s after the injection)")
            return 0
        tid = traced_thread(a.target, a.tracer)
        if tid:
            os.kill(a.tracer, signal.SIGKILL)
            print(f"hit {a.phase} after {1000 * (time.monotonic() - t0):.1f} ms (thread {tid})")
            return 0
    print(f"missed {a.phase}: no ptrace session {'after the attach ' if a.phase == 'detach' else ''}"
          f"within {a.timeout} s")
    return 1


if __name__ == "__main__":
    sys.exit(main())
