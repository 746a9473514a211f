#!/usr/bin/env python3
"""A small sweep from Python: gemm and add over a few shapes and dtypes,
printed as the table mbench prints. Exits 1 if any benchmark fails to run
or computes a wrong result.

    PYTHONPATH=build/python python3 examples/python/sweep.py [--backend cpu]
"""
import argparse
import os
import sys

try:
    import microbench
except ImportError:  # a source checkout: the package beside build/
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "python"))
    import microbench

# (op, shape, dtype): small enough for a few seconds on two cores.
SWEEP = [
    ("gemm", (128, 128, 128), "f32"),
    ("gemm", (256, 256, 256), "f32"),
    ("gemm", (256, 256, 256), "bf16"),
    ("add", (1024, 1024), "f32"),
    ("add", (1024, 1024), "bf16"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", help="backend (default: the best one)")
    parser.add_argument("--cache", default="hot", help="cold, hot or rotate")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("-o", "--output", help="also write results as JSON")
    args = parser.parse_args()

    results = microbench.ResultList()
    for op, shape, dtype in SWEEP:
        results.append(microbench.run(op=op, shape=shape, dtype=dtype,
                                      backend=args.backend, cache=args.cache,
                                      samples=args.samples, warmup=0.01))
    print(results.table(), end="")
    if args.output:
        microbench.write_report(results, args.output, format="json")
    bad = [r for r in results if not (r.ok and r.passed)]
    for r in bad:
        print("not ok: %r %s" % (r, r.reason), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
