#!/usr/bin/env python3
"""Benchmark a Python function as a kernel: the harness gives it the op's
seeded inputs, times it with the same statistics as the backend's own
kernels, and checks its output against the op's reference. Exits 1 if a
check fails (--wrong registers a deliberately wrong kernel to show it).

    PYTHONPATH=build/python python3 examples/python/python_kernel.py
"""
import argparse
import array
import operator
import os
import sys

try:
    import microbench
except ImportError:  # a source checkout: the package beside build/
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "python"))
    import microbench

try:
    import numpy
except ImportError:
    numpy = None


def py_add(x, y, z):
    """Z = X + Y on the cpu backend's (host) memory, standard library
    only: memoryviews over the tensors, cast to float."""
    z.array(flat=True)[:] = array.array(
        "f", map(operator.add, x.array(flat=True), y.array(flat=True)))


def np_add(x, y, z):
    """The same with numpy, writing into the output in place."""
    numpy.add(x.numpy(), y.numpy(), out=z.numpy())


def wrong_add(x, y, z):
    """Off by one in the last element: the check catches it."""
    py_add(x, y, z)
    zs = z.array(flat=True)
    zs[len(zs) - 1] += 1.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="256x256")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--wrong", action="store_true",
                        help="also register a wrong kernel (the run fails)")
    args = parser.parse_args()

    kernels = [("py_add", py_add)]
    if numpy is not None:
        kernels.append(("np_add", np_add))
    if args.wrong:
        kernels.append(("wrong_add", wrong_add))
    timing = {"samples": args.samples, "warmup": 0.0, "cache": "hot"}

    results = microbench.ResultList()
    with microbench.Context() as ctx:
        for name, fn in kernels:
            ctx.register_kernel("add", name, fn, dtype="f32")
            results.append(ctx.run(op="add", shape=args.shape, dtype="f32",
                                   backend="cpu", impl=name, **timing))
        # The backend's own kernel on the same problem, for comparison.
        own = [k["name"] for k in ctx.kernels(op="add")
               if not k["user"] and k["backend"] == "cpu"
               and k["dtype"] in ("f32", None)][0]
        results.append(ctx.run(op="add", shape=args.shape, dtype="f32",
                               backend="cpu", impl=own, **timing))
        print(results.table(context=ctx), end="")

    # The one-call form: a private context, a generated kernel name.
    quick = microbench.benchmark(py_add, op="add", shape=(64, 64),
                                 samples=3, warmup=0.0)
    print("microbench.benchmark(py_add): %r" % quick)
    results.append(quick)

    bad = [r for r in results if not (r.ok and r.passed)]
    for r in bad:
        print("check failed: %s (%s)" % (r.impl, r.reason or r.check_text()),
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
