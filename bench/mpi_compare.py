#!/usr/bin/env python3
"""mbench's MPI collectives beside a direct MPI program of the same calls
(docs/results/mpi.md).

In one run, under one mpirun setting: mbench (impl "mpi" on the CPU
backend, cache hot, f32) and bench/mpi_direct.c time all_reduce
(MPI_Allreduce out of place, sum) and sendrecv (MPI_Sendrecv in a ring) at
each size, the same way: a barrier, a batch of calls back to back, the
maximum over the ranks of the batch's time, the median of the samples per
call.

The direct program runs twice: at MPI_THREAD_FUNNELED, the thread level
libmicrobench_mpi asks for (the same MPI calls in the same setting: the
ratio judged), and with a plain MPI_Init (MPI_THREAD_SINGLE, as the OSU
benchmarks), to show what the thread level alone costs under this MPI.

A sizing job first lets mbench choose its batch for each size (its own
warm-up and rule, lib/measure/runner_sample.c); every measured round then
gives both programs that batch, so they time identical batches. Rounds
rotate which program goes first, to spread drift over all three. Each
round's medians are kept. The table shows each program's best round (the
smallest of its rounds' medians: on a shared machine a disturbed round is
slower, never faster, and whole rounds went about twice as slow for every
program at once) and their ratio, ours / direct, judged within 5 %; and
the median and range of the ratios within a round (each round's programs
ran minutes apart, so a round's ratio carries the drift between them).

  bench/mpi_compare.py --build BUILD [--np 2] [--rounds 6] [--samples 200]
                       [--sizes B,...] [--out DIR] [--mpirun "mpirun ..."]
  bench/mpi_compare.py --summarize DIR

Every job's files stay in DIR (--out; else a new temporary directory):
mbench's documents and logs, mpi_direct's JSON lines, rounds.jsonl (each
round's order, wall times and load average). The table, printed in
markdown and written to DIR/summary.json, is made from those files alone,
so --summarize gives it again, or for the rounds a stopped run finished.
Standard library only."""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

OPS = ["all_reduce", "sendrecv"]
F32 = 4
# 8 B to 32 MiB in powers of 4, and 64 MiB.
SIZES = [8 * 4 ** k for k in range(12)] + [64 << 20]
WARMUP_S = 0.025  # mbench's default warm-up ...
WARMUP_RUNS = 10  # ... and enough runs that the fastest sizes the batch


def load():
    with open("/proc/loadavg", encoding="ascii") as f:
        return " ".join(f.read().split()[:3])


def config(counts, samples, batches=None):
    """mbench's config: one entry per size (batches: {count: batch} fixes
    each size's batch; None lets mbench choose)."""
    lines = ["defaults:", "  backend: cpu", "  impl: mpi", "  cache: hot",
             "benchmarks:"]
    for n in counts:
        timing = "{samples: %d, warmup: %g, warmup_runs: %d%s}" % (
            samples, WARMUP_S, WARMUP_RUNS,
            ", batch: %d" % batches[n] if batches else "")
        lines += ["  - name: b%d" % (n * F32),
                  "    ops: [%s]" % ", ".join(OPS),
                  "    shapes: [[%d]]" % n,
                  "    dtypes: [f32]",
                  "    timing: %s" % timing]
    return "\n".join(lines) + "\n"


def run(cmd, log):
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, check=False)
    if log:
        with open(log, "w", encoding="utf-8") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
            f.write(p.stderr)
    if p.returncode:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                          p.stderr[-2000:]))
    return p.stdout, time.time() - t0


def read_ours(path):
    """{(op, count): median ns per call, batch, samples} of an mbench
    document, and the document."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    res = {}
    for r in doc["results"]:
        if r["status"] != "ok" or not r["correctness"]["pass"]:
            sys.exit("mbench: %s: %s %s" % (r["name"], r["status"],
                                             r.get("reason", "")))
        res[(r["op"], r["shape"]["N"])] = {
            "median_ns": r["stats"]["median_ns"],
            "batch": r["stats"]["batch"], "samples": len(r["samples_ns"])}
    return res, doc


def read_direct(path):
    """The same from mpi_direct's JSON lines."""
    res = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            res[(d["op"], d["count"])] = {"median_ns": d["median_ns"],
                                          "batch": d["batch"],
                                          "samples": len(d["samples_ns"])}
    return res


def ours(args, mpirun, work, tag, counts, batches):
    cfg = os.path.join(work, "ours-%s.yaml" % tag)
    out = os.path.join(work, "ours-%s.json" % tag)
    with open(cfg, "w", encoding="utf-8") as f:
        f.write(config(counts, args.samples, batches))
    run(mpirun + [os.path.join(args.build, "bin", "mbench"), "run",
                  "--config", cfg, "-o", out],
        os.path.join(work, "ours-%s.log" % tag))
    return out


def direct(level, args, mpirun, work, tag, counts, batches):
    jobs = ["%s:%d:%d" % (op, n, batches[n]) for n in counts for op in OPS]
    text, _ = run(mpirun + [os.path.join(args.build, "bin", "mpi_direct"),
                            level, str(args.samples), str(WARMUP_S),
                            str(WARMUP_RUNS)] + jobs,
                  os.path.join(work, "%s-%s.log" % (level, tag)))
    out = os.path.join(work, "%s-%s.jsonl" % (level, tag))
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return out


# The programs of a round: ours, and the direct one at each thread level;
# each writes its figures to a file, which the summary reads.
PROGRAMS = {
    "ours": (ours, "ours-r%d.json", lambda p: read_ours(p)[0]),
    "funneled": (lambda *a: direct("funneled", *a), "funneled-r%d.jsonl",
                 read_direct),
    "single": (lambda *a: direct("single", *a), "single-r%d.jsonl",
               read_direct),
}


def fmt_ns(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return "%.4g %s" % (ns / scale, unit)
    return "%.4g ns" % ns


def fmt_bytes(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return "%d %s" % (b // scale, unit)
    return "%d B" % b


def measure(args, work):
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else SIZES
    counts = [max(1, b // F32) for b in sizes]
    mpirun = shlex.split(args.mpirun) + ["-n", str(args.np)]
    print("load average at the start: %s" % load(), file=sys.stderr)
    sizing, _ = read_ours(ours(args, mpirun, work, "sizing", counts, None))
    # One batch per size, the larger of the two ops' (both fit it).
    batches = {n: max(sizing[(op, n)]["batch"] for op in OPS) for n in counts}
    with open(os.path.join(work, "run.json"), "w", encoding="utf-8") as f:
        json.dump({"np": args.np, "mpirun": " ".join(mpirun),
                   "samples": args.samples, "warmup_s": WARMUP_S,
                   "warmup_runs": WARMUP_RUNS}, f)
    for i in range(args.rounds):
        names = list(PROGRAMS)
        order = names[i % 3:] + names[:i % 3]
        rnd = {"round": i, "order": order, "load_before": load()}
        for who in order:
            t0 = time.time()
            PROGRAMS[who][0](args, mpirun, work, "r%d" % i, counts, batches)
            rnd[who + "_wall_s"] = round(time.time() - t0, 1)
        rnd["load_after"] = load()
        with open(os.path.join(work, "rounds.jsonl"), "a",
                  encoding="utf-8") as f:
            f.write(json.dumps(rnd) + "\n")
        print("round %d (%s): %.0f s, load %s -> %s" % (
            i + 1, ", ".join(order), sum(rnd[w + "_wall_s"] for w in order),
            rnd["load_before"], rnd["load_after"]), file=sys.stderr)


def summarize(work):
    """The table from the files of a run (every round all three programs
    finished; a run stopped early gives the rounds it has)."""
    _, doc = read_ours(os.path.join(work, "ours-sizing.json"))
    rounds = []
    while all(os.path.exists(os.path.join(work, PROGRAMS[w][1] % len(rounds)))
              for w in PROGRAMS):
        rounds.append({w: PROGRAMS[w][2](
            os.path.join(work, PROGRAMS[w][1] % len(rounds)))
            for w in PROGRAMS})
    if not rounds:
        sys.exit("%s: no finished round" % work)
    run_info = {}
    if os.path.exists(os.path.join(work, "run.json")):
        with open(os.path.join(work, "run.json"), encoding="utf-8") as f:
            run_info = json.load(f)
    rows = []
    for op in OPS:
        for (o_op, n) in sorted(k for k in rounds[0]["ours"] if k[0] == op):
            o = [r["ours"][(op, n)]["median_ns"] for r in rounds]
            d = [r["funneled"][(op, n)]["median_ns"] for r in rounds]
            s = [r["single"][(op, n)]["median_ns"] for r in rounds]
            ratios = [x / y for x, y in zip(o, d)]
            mo, md, ms = min(o), min(d), min(s)
            rows.append({"op": o_op, "bytes": n * F32, "count": n,
                         "batch": rounds[0]["ours"][(op, n)]["batch"],
                         "samples": rounds[0]["ours"][(op, n)]["samples"],
                         "ours_ns": mo, "direct_ns": md, "ratio": mo / md,
                         "ratio_median": statistics.median(ratios),
                         "ratio_min": min(ratios), "ratio_max": max(ratios),
                         "single_ns": ms, "ratio_single": mo / ms,
                         "rounds_ours_ns": o, "rounds_direct_ns": d,
                         "rounds_single_ns": s})
    with open(os.path.join(work, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"run": run_info, "rounds": len(rounds),
                   "library": doc["meta"].get("library"),
                   "transport": doc["results"][0]["kernel"].get("transport"),
                   "rows": rows}, f, indent=1)
    print("%d rounds; per round and program, %s samples of each size\n" % (
        len(rounds), run_info.get("samples", "?")))
    print("| op | size | batch | ours | direct, funneled | ours / direct "
          "| within 5 % | per round: median (range) | direct, single "
          "| ours / single |")
    print("|---|--:|--:|--:|--:|--:|:-:|--:|--:|--:|")
    for r in rows:
        print("| %s | %s | %d | %s | %s | %.3f | %s | %.3f (%.3f – %.3f) | "
              "%s | %.3f |" % (
                  r["op"], fmt_bytes(r["bytes"]), r["batch"],
                  fmt_ns(r["ours_ns"]), fmt_ns(r["direct_ns"]), r["ratio"],
                  "yes" if abs(r["ratio"] - 1) <= 0.05 else "no",
                  r["ratio_median"], r["ratio_min"], r["ratio_max"],
                  fmt_ns(r["single_ns"]), r["ratio_single"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", help="the build directory (to measure)")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--sizes", help="bytes, comma-separated (default 8 B to "
                    "32 MiB in powers of 4, and 64 MiB)")
    ap.add_argument("--mpirun", default="mpirun",
                    help="the launcher and its options, as one string")
    ap.add_argument("--out", help="keep every job's files here")
    ap.add_argument("--summarize", metavar="DIR",
                    help="measure nothing: the table of the run in DIR")
    args = ap.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    if not args.build:
        ap.error("--build or --summarize")
    work = args.out or tempfile.mkdtemp(prefix="mpi_compare.")
    os.makedirs(work, exist_ok=True)
    measure(args, work)
    summarize(work)
    print("files: %s" % work, file=sys.stderr)


if __name__ == "__main__":
    main()
