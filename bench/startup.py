#!/usr/bin/env python3
"""Start-up cost of mbench (issue 22 item 9, docs/results/startup.md).

Each command runs RUNS times as a whole process; the table gives the
median wall time and the median maximum resident set size (getrusage of
the child, so the figure is the process's own, not the harness's), with
the range of the wall times. Commands:

  list backends                          every module loaded and started
  run --op gemm --shape 64x64x64 ...     a 64^3 gemm, 5 samples, hot cache

each with the roof caches warm (the CPU peak and the copy bandwidth,
measured by an earlier process) and cold (MB_REMEASURE_PEAK=1 measures
both again in every process). The caches live in a fresh temporary
MB_CACHE_DIR, so the user's are untouched.

  bench/startup.py [--mbench PATH] [--runs N] [--backend-path DIR]

--backend-path sets MB_BACKEND_PATH (e.g. a folder holding the cpu and cuda
modules, to see what loading the CUDA module costs on a machine without a
GPU). Prints a markdown table on stdout.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    ("mbench list backends", ["list", "backends"]),
    ("mbench run --op gemm --shape 64x64x64 --samples 5 --cache hot",
     ["run", "--op", "gemm", "--shape", "64x64x64", "--samples", "5",
      "--cache", "hot"]),
]


def one_run(argv, env):
    """Wall seconds and max RSS (MiB) of one process."""
    t0 = time.perf_counter()
    pid = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL).pid
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"startup.py: {' '.join(argv)} failed ({status})")
    return wall, usage.ru_maxrss / 1024.0  # Linux: kB


def measure(argv, env, runs):
    walls, rss = [], []
    for _ in range(runs):
        w, r = one_run(argv, env)
        walls.append(w)
        rss.append(r)
    return walls, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mbench", default=os.environ.get("MBENCH", "mbench"))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--backend-path")
    args = ap.parse_args()
    env = dict(os.environ)
    env.pop("MB_REMEASURE_PEAK", None)
    if args.backend_path:
        env["MB_BACKEND_PATH"] = args.backend_path
    cache = tempfile.mkdtemp(prefix="mb-startup-cache-")
    env["MB_CACHE_DIR"] = cache
    # Fill the caches once (every command: the peak and the bandwidth);
    # the warm runs then read them.
    for _, tail in COMMANDS:
        one_run([args.mbench, *tail], env)
    cold = dict(env, MB_REMEASURE_PEAK="1")
    print("| command | roof caches | wall median | wall min-max | max RSS |")
    print("|---|---|---:|---:|---:|")
    for label, tail in COMMANDS:
        for name, e in (("warm", env), ("cold (MB_REMEASURE_PEAK=1)", cold)):
            walls, rss = measure([args.mbench, *tail], e, args.runs)
            print(f"| `{label}` | {name} | "
                  f"{statistics.median(walls) * 1e3:.0f} ms | "
                  f"{min(walls) * 1e3:.0f}-{max(walls) * 1e3:.0f} ms | "
                  f"{statistics.median(rss):.0f} MiB |", flush=True)


if __name__ == "__main__":
    main()
