#!/usr/bin/env python3
"""What the Python package costs (docs/results/python.md):

1. a Python kernel's call overhead: an empty Python function registered for
   `copy` on a 1x16 f32 tensor, timed by the harness (hot and cold cache),
   beside the backend's own copy kernel at the same shape (the harness's
   floor for a C kernel);
2. the wrapper around one run: wall time of microbench.run() minus the time
   the library itself spent (stats.wall_s plus set-up, check and warm-up are
   in neither, so this is an upper bound on Python's share: spec building,
   the call, JSON parsing).

    PYTHONPATH=build/python python3 bench/python_overhead.py
"""
import statistics
import sys
import time

import microbench

SHAPE = (1, 16)


def empty(x, y):
    """Does nothing: what is timed is the call into Python and back."""


def kernel_overhead(cache):
    with microbench.Context() as ctx:
        ctx.register_kernel("copy", "py_empty", empty, dtype="f32")
        # The backend's own copy kernel by name: with no impl named, the
        # user kernel would be chosen.
        own = next(k["name"] for k in ctx.kernels(op="copy")
                   if not k["user"] and k["backend"] == "cpu"
                   and k["dtype"] in ("f32", None))
        rows = []
        for impl in ("py_empty", own):
            r = ctx.run(op="copy", shape=SHAPE, dtype="f32", impl=impl,
                        backend="cpu", cache=cache, min_time=0.5,
                        max_noise=0.01)
            rows.append((r.impl, cache, r.median_ns, r.stats["p10_ns"],
                         r.stats["p90_ns"], len(r.samples), r.stats["batch"]))
        return rows


def wrapper_overhead(n=20):
    """Seconds of wall time per run() beyond the library's sampling."""
    extra = []
    microbench.run(op="copy", shape=SHAPE, backend="cpu", samples=3)  # loads
    for _ in range(n):
        t0 = time.perf_counter()
        r = microbench.run(op="copy", shape=SHAPE, dtype="f32",
                           backend="cpu", cache="hot", samples=3, warmup=0)
        wall = time.perf_counter() - t0
        extra.append(wall - r.stats["wall_s"])
    return statistics.median(extra), min(extra), max(extra)


def main():
    print("libmicrobench %s (%s), %s" % (microbench.version(),
                                         microbench.git_commit(),
                                         microbench.library_path()))
    print("Python %s" % sys.version.split()[0])
    print("\n| impl | cache | median | p10 | p90 | samples | batch |")
    print("|---|---|---|---|---|---|---|")
    for cache in ("hot", "cold"):
        for impl, c, med, p10, p90, n, batch in kernel_overhead(cache):
            print("| %s | %s | %.0f ns | %.0f ns | %.0f ns | %d | %d |" %
                  (impl, c, med, p10, p90, n, batch))
    med, lo, hi = wrapper_overhead()
    print("\nrun() wall time beyond the library's sampling, 20 runs of a "
          "3-sample copy: median %.2f ms (min %.2f, max %.2f)" %
          (med * 1e3, lo * 1e3, hi * 1e3))


if __name__ == "__main__":
    main()
