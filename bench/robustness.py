#!/usr/bin/env python3
"""A battery of bad inputs against mbench and the Python package, tried as a
hostile user would, by class: each input runs in its own process under a
watchdog, and its outcome is one of

  error   exit 2 with a message on stderr (and no traceback or sanitizer
          report): the input was refused, as it should be;
  ran     exit 0 or 1 (1: a benchmark failed its check): the input was
          accepted;
  crash   killed by a signal, an exit status above 128 that is not an
          interruption asked for, a traceback, or a sanitizer report;
  hang    still running after the watchdog (120 s).

Inputs that must be refused are marked so; one that ran instead is listed.
Prints a markdown summary (classes, outcomes, whether each message names
the bad value) and, with --out, writes it with the commands that made it.

  bench/robustness.py --mbench build/bin/mbench --pythonpath build/python \\
      [--out docs/results/robustness.md [--append TITLE]] [--jobs 2]
      [--only CLASS,...]

Exit status 1 when any input crashed or hung (ctest runs a few classes:
robustness_smoke).
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time

# Generous: every input is refused or run in about a second on an idle
# machine, but CI's 2-core machines have been several times slower than
# that (a 60 s watchdog fired there on a config file this machine refuses
# in 0.2 s).
WATCHDOG_S = 120
QUICK = ["--samples", "3", "--warmup", "0", "--backend", "cpu"]
RUN_ADD = ["run", "--op", "add", "--shape", "8x8", *QUICK]
RUN_GEMM = ["run", "--op", "gemm", "--shape", "8x8x8", *QUICK]

# Odd values, each tried on every numeric option. Whether one must be
# refused depends on the option's kind: a count is a 32-bit integer >= 1,
# a seed a 64-bit one, seconds a finite double >= 0, a factor any finite
# double, eps a finite double > 0. None: either answer is fine (" 7" with a
# leading blank, which strtod accepts).
ODD_NUMBERS = ["-1", "abc", "", "1e400", "nan", "inf", "-inf", "0x10",
               "5000000000", "99999999999999999999999", "1.5.2", "  7",
               "7 ", "--", "1,000", "0"]
VALID = {
    "count": {"  7": None, "0": None},
    "seed": {"5000000000": True, "  7": None, "0": True},
    "index": {"  7": None, "0": True},
    "seconds": {"0x10": True, "5000000000": True,
                "99999999999999999999999": True, "  7": None, "0": None},
    "factor": {"-1": True, "0x10": True, "5000000000": True,
               "99999999999999999999999": True, "  7": None, "0": True},
    "positive": {"0x10": True, "5000000000": True,
                 "99999999999999999999999": True, "  7": None},
    "noise": {"0x10": None, "5000000000": None,
              "99999999999999999999999": None, "  7": None},
    "n/a": {v: False for v in ODD_NUMBERS},
}
NUMERIC_OPTIONS = {"--samples": "count", "--min-samples": "count",
                   "--min-time": "seconds", "--max-noise": "noise",
                   "--timeout": "seconds", "--warmup": "seconds",
                   "--warmup-runs": "count", "--batch": "count",
                   "--repetitions": "count", "--seed": "seed",
                   "--device": "index", "--alpha": "factor",
                   "--beta": "factor", "--act-alpha": "factor",
                   "--eps": "positive", "--static-scale": "n/a",
                   "--isolate-timeout": "seconds"}
BAD_NAMES = ["", "x" * 5000, "\x1b[31mred\x1b[0m", "f32\n", "F32 ", "../../x",
             "gemm;rm -rf /", "\u00e9t\u00e9", "%s%s%n", "none"]
NAME_OPTIONS = [("--op", RUN_ADD), ("--dtype", RUN_ADD),
                ("--out-dtype", RUN_ADD), ("--cache", RUN_ADD),
                ("--criterion", RUN_ADD), ("--format", RUN_ADD),
                ("--backend", RUN_ADD), ("--impl", RUN_ADD),
                ("--act", ["run", "--op", "activation", "--shape", "8x8",
                           *QUICK]),
                ("--scale-a", RUN_GEMM), ("--scale-b", RUN_GEMM),
                ("--flush", RUN_ADD), ("--dtype-b", RUN_GEMM),
                ("--recipe", ["run", "--model", "linear", "--shape",
                              "16x16x16", *QUICK]),
                ("--mode", ["run", "--model", "linear", "--shape",
                            "16x16x16", *QUICK])]
BAD_SHAPES = ["", "x", "8", "8x", "x8", "8xx8", "8x8x8x8x8x8x8x8x8", "0x8",
              "-8x8", "+8x8", "8x-8", "8.5x8", "8x8 ", " 8x8", "8X8",
              "18446744073709551617x2", "1099511627777x1", "8x8,8x8",
              "1e3x8", "0x10x8", "８x8", "8x\t8", "99999999x99999999"]


class Case:
    def __init__(self, cls, argv, must_fail=True, env=None, stdin=None,
                 needle=None, python=None, note=""):
        self.cls, self.argv, self.must_fail = cls, argv, must_fail
        self.env, self.stdin, self.needle = env or {}, stdin, needle
        self.python, self.note = python, note
        self.outcome, self.rc, self.stderr, self.named = None, None, "", None


def cli_cases(tmp):
    cases = []
    for opt, kind in NUMERIC_OPTIONS.items():
        for v in ODD_NUMBERS:
            argv = [*RUN_ADD, opt, v]
            if opt == "--isolate-timeout":
                argv.append("--isolate")
            valid = VALID[kind].get(v, False)
            if valid is None:
                continue  # either answer would do: not counted
            # An option the op does not take is refused whatever its value.
            named = not valid and kind != "n/a"
            cases.append(Case("CLI numbers", argv, must_fail=not valid,
                              needle=v.strip() if named else None))
    for opt, base in NAME_OPTIONS:
        for v in BAD_NAMES:
            cases.append(Case("CLI names", [*base, opt, v],
                              must_fail=v != "none" or opt not in (
                                  "--scale-a", "--scale-b"),
                              needle=v[:40] if v.isprintable() else None))
    for op, base in (("gemm", RUN_GEMM), ("add", RUN_ADD)):
        for s in BAD_SHAPES:
            argv = [x if x not in ("8x8x8", "8x8") else s for x in base]
            # "8X8" is a shape (x or X); a huge one is valid input that
            # fails as a result (out of memory, exit 1).
            ok = s in ("8X8", "99999999x99999999")
            cases.append(Case("CLI shapes", argv, must_fail=not ok,
                              needle=s if s.isprintable() and s and not ok
                              else None))
    for argv in (["run"], ["run", "--op"], ["run", "--shape", "8x8"],
                 ["bogus"], ["run", "--bogus", "1", *RUN_ADD[1:]],
                 ["run", "-", *RUN_ADD[1:]], [*RUN_ADD, "--samples"],
                 [*RUN_ADD, "--samples", "5", "--criterion", "stdrel"],
                 ["list", "nothing"],
                 ["compare"], ["merge"], [*RUN_ADD, "--trans-a"],
                 [*RUN_ADD, "--causal"], [*RUN_GEMM, "--fast-accum"],
                 [*RUN_ADD, "--quantize-inputs"],
                 ["run", "--model", "nope", "--shape", "8x8x8"],
                 ["run", "--op", "gemm", "--model", "linear", "--shape",
                  "8x8x8"]):
        cases.append(Case("CLI usage", argv))
    return cases


def config_cases(tmp):
    cases = []

    def put(name, text, mode="w"):
        path = os.path.join(tmp, name)
        with open(path, mode) as f:
            f.write(text)
        return path

    native = ("benchmarks:\n  - op: add\n    shapes: [[8, 8]]\n"
              "    backend: cpu\n")
    texts = {
        "empty.yml": "", "space.yml": "  \n\n ", "list.yml": "[1, 2]\n",
        "scalar.yml": "42\n", "tab.yml": "benchmarks:\n\t- op: add\n",
        "truncated.yml": native[:30], "truncated.json":
        '{"benchmarks": [{"op": "add", "shapes": [[8, 8]]',
        "trailing.json": '{"benchmarks": []} {}',
        "nul.yml": "benchmarks:\0\n",
        "deep_list.yml": "[" * 50000, "deep_map.yml": "{a: " * 50000,
        "deep.json": "[" * 50000 + "]" * 50000,
        "anchor_bomb.yml": "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefgh", "bcdefghi")),
        "dup.yml": native + "benchmarks: []\n",
        "unknown_key.yml": native + "    colour: blue\n",
        "no_benchmarks.yml": "description: x\n",
        "benchmarks_map.yml": "benchmarks: {op: add}\n",
        "shape_str.yml": native.replace("[[8, 8]]", '"abc"'),
        "shape_neg.yml": native.replace("[[8, 8]]", "[[-8, 8]]"),
        "shape_zero.yml": native.replace("[[8, 8]]", "[[0, 8]]"),
        "shape_huge.yml": native.replace("[[8, 8]]",
                                         "[[1099511627777, 8]]"),
        "shape_float.yml": native.replace("[[8, 8]]", "[[8.5, 8]]"),
        "shape_nested.yml": native.replace("[[8, 8]]", "[[[8]], 8]"),
        "dtype_num.yml": native + "    dtype: 5\n",
        "dtype_bad.yml": native + "    dtype: fp33\n",
        "backend_list.yml": native.replace("backend: cpu", "backend: []"),
        "backend_bad.yml": native.replace("backend: cpu", "backend: tpu"),
        "impl_bad.yml": native + "    impl: nope\n",
        "op_bad.yml": native.replace("op: add", "op: addd"),
        "op_and_model.yml": native + "    model: linear\n",
        "cache_bad.yml": native + "    cache: tepid\n",
        "samples_neg.yml": native + "    samples: -3\n",
        "samples_str.yml": native + "    samples: many\n",
        "timeout_neg.yml": native + "    timeout: -1\n",
        "recipe_bad.yml": "benchmarks:\n  - model: linear\n"
                          "    shapes: [[16, 16, 16]]\n    recipes: [zzz]\n",
        "torchao_bad.yml": "benchmark_mode: inference\n"
                           "quantization_config_recipe_names: [nope]\n"
                           "model_params: []\n",
        "torchao_types.yml": "benchmark_mode: 5\nmodel_params: 7\n",
        "jax_bad.yml": "benchmarks:\n  - benchmark_name: nope_bench\n",
        "jax_sweep.yml": "benchmarks:\n  - benchmark_name: add\n"
                         "    benchmark_sweep_params:\n"
                         "      - {m_range: {start: 64, end: 8, "
                         "multiplier: 0}}\n",
        "jax_sweep_bad.yml": "global: {dtype: float99}\nbenchmarks:\n"
                             "  - {name: hbm_bandwidth}\n",
        "jax_sweep_range.yml": "global: {}\nbenchmarks:\n"
                               "  - name: simple_add\n"
                               "    sweep: {size: {start: 8, end: 64, "
                               "multiplier: 0.5}}\n",
        "jax_sweep_name.yml": "global: {}\nbenchmarks:\n"
                              "  - {name: nope_bench}\n",
        "jax_huge.yml": "benchmarks:\n  - benchmark_name: add\n"
                        "    benchmark_sweep_params:\n"
                        "      - {m_range: {start: 1, end: 1099511627776, "
                        "increase_by: 1}, n: 8}\n",
        "many_keys.yml": "".join(f"k{i}: {i}\n" for i in range(100000)),
    }
    for name, text in texts.items():
        cases.append(Case("config files", ["run", "--config",
                                           put(name, text), "--dry-run"],
                          must_fail=True))
    put("binary.yml", os.urandom(4096), "wb")
    fifo = os.path.join(tmp, "fifo.yml")
    os.mkfifo(fifo)
    for path in (os.path.join(tmp, "binary.yml"), fifo, "/dev/zero",
                 "/dev/null", tmp, os.path.join(tmp, "missing.yml"),
                 "/proc/self/mem"):
        cases.append(Case("config files", ["run", "--config", path,
                                           "--dry-run"]))
    good = put("good.yml", native)
    for argv in (["run", "--config", good, "--filter", "(("],
                 ["run", "--config", good, "--interleave", "abc"],
                 ["run", "--config", good, "--max-flop", "-1"],
                 ["run", "--config", good, "--cache", "hot"],
                 ["run", "--config", good, "-o", good],
                 ["run", "--config", good, "--backend", "tpu"]):
        cases.append(Case("config files", argv))
    return cases


def results_cases(tmp, mbench):
    cases = []
    base = os.path.join(tmp, "base.json")
    p = subprocess.run([mbench, *RUN_ADD, "-o", base], capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("the base run failed: " + p.stderr)
    text = open(base).read()

    def edited(edit):
        doc = json.loads(text)
        edit(doc["results"][0])
        return json.dumps(doc, indent=1)

    edits = {
        "truncated.json": text[:len(text) // 2], "empty.json": "",
        "schema.json": text.replace("microbench.results/1",
                                    "microbench.results/9"),
        "status.json": edited(lambda r: r.update(status="great")),
        "median.json": edited(lambda r: r["stats"].update(median_ns=-1)),
        "samples.json": edited(lambda r: r.update(samples_ns=["x"])),
        "results_obj.json": '{"schema": "microbench.results/1", '
                            '"results": {}}',
        "not_object.json": "[1, 2, 3]",
        "id_num.json": edited(lambda r: r.update(id=5)),
        "deep.json": "[" * 50000 + "]" * 50000,
        "bad_line.jsonl": '{"schema": "microbench.results/1"}\nnot json\n'
                          '{"id": "x"}\n',
    }
    paths = {}
    for name, t in edits.items():
        paths[name] = os.path.join(tmp, name)
        with open(paths[name], "w") as f:
            f.write(t)
    for name, path in paths.items():
        cases.append(Case("result files", ["compare", base, path]))
        cases.append(Case("result files", ["merge", path, "-o",
                                           os.path.join(tmp, "m.json")]))
    fifo = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo)
    for argv in (["compare", base, fifo], ["compare", base, "/dev/zero"],
                 ["compare", base, os.path.join(tmp, "gone.json")],
                 ["compare", base, tmp], ["merge", base, base, "-o", base],
                 ["merge", base, "-o", base],
                 ["merge", base, base, "-o", os.path.join(tmp, "x.json")],
                 ["compare", base, base, "--threshold", "-5"],
                 ["compare", base, base, "--alpha", "2"]):
        cases.append(Case("result files", argv))
    return cases


def output_cases(tmp):
    cases = []
    ro = os.path.join(tmp, "ro.json")
    with open(ro, "w") as f:
        f.write("keep")
    os.chmod(ro, 0o444)
    fifo = os.path.join(tmp, "out.fifo")
    os.mkfifo(fifo)
    for path in ("/dev/full", tmp, ro, "/nonexistent/dir/x.json", fifo,
                 "/proc/self/status", os.path.join(tmp, "x.json", "y")):
        cases.append(Case("output paths", [*RUN_ADD, "-o", path]))
        cases.append(Case("output paths", [*RUN_ADD, "-o", path, "-f",
                                           "csv"]))
    return cases


def env_cases(tmp):
    cases = []
    ww = os.path.join(tmp, "world_writable")
    os.mkdir(ww)
    os.chmod(ww, 0o777)
    junk = os.path.join(tmp, "junk")
    os.mkdir(junk)
    with open(os.path.join(junk, "mb_backend_junk.so"), "wb") as f:
        f.write(os.urandom(2048))
    for value in ("relative/dir", ww, junk, "/nonexistent", "", ":::",
                  "/dev/null", "x" * 10000):
        cases.append(Case("environment", [*RUN_ADD],
                          env={"MB_BACKEND_PATH": value}, must_fail=False))
    return cases


PY_CALLS = [
    "microbench.run(op='add', shape=(8, 8), samples=-3)",
    "microbench.run(op='add', shape=(8, 8), samples=2**40)",
    "microbench.run(op='add', shape=(8, 8), samples='3')",
    "microbench.run(op='add', shape=(8, 8), sampels=3)",
    "microbench.run(op='add', shape=(8, 8), seed=-1)",
    "microbench.run(op='add', shape=(8, 8), device=2**40)",
    "microbench.run(op='add', shape=(8, 8), device=7)",
    "microbench.run(op='add', shape=(-8, 8))",
    "microbench.run(op='add', shape=(8,))",
    "microbench.run(op='add', shape='8x8x')",
    "microbench.run(op='add', shape=None)",
    "microbench.run(op=None, shape=(8, 8))",
    "microbench.run(op='addd', shape=(8, 8))",
    "microbench.run(op='add', shape=(8, 8), dtype='fp33')",
    "microbench.run(op='add', shape=(8, 8), dtype=5)",
    "microbench.run(op='add', shape=(8, 8), backend='tpu')",
    "microbench.run(op='add', shape=(8, 8), cache='tepid')",
    "microbench.run(op='add', shape=(8, 8), timeout=float('nan'))",
    "microbench.run(op='add', shape=(8, 8), max_noise=-1)",
    "microbench.run(op='gemm', shape=(8, 8, 8), alpha='x')",
    "microbench.run(op='add', shape=(2**41, 2))",
    "microbench.run_config('/dev/zero')",
    "microbench.run_config('/nonexistent.yml')",
    "microbench.load_results('/dev/zero')",
    "microbench.load_results(b'\\xff')",
    "microbench.write_report([], '/dev/full', format='json')",
    "microbench.write_report([], '/tmp', format='csv')",
    "microbench.write_report([], format='xml')",
    "microbench.Context(backend_path=5)",
]


def python_cases():
    return [Case("Python API", None, python=c) for c in PY_CALLS]


def classify(case, p_rc, stderr, timed_out):
    crash_words = ("Traceback", "ERROR: AddressSanitizer", "runtime error:",
                   "Segmentation fault", "core dumped", "LeakSanitizer")
    if timed_out:
        return "hang"
    if case.python is not None:
        # The script prints ERROR <type> or OK; anything else is a crash.
        if p_rc < 0 or "PYCRASH" in stderr:
            return "crash"
        return "error" if p_rc == 2 else "ran"
    if p_rc < 0 or (p_rc > 3 and p_rc not in (130, 143)) or any(
            w in stderr for w in crash_words):
        return "crash"
    if p_rc in (2, 3):  # 3: nothing measured, every result skipped (why)
        return "error" if stderr.strip() else "crash"
    return "ran"


PY_WRAPPER = """
import sys
import microbench
try:
    r = {call}
    if getattr(r, "status", None) == "skipped":  # refused, with the reason
        print("SKIPPED", r.reason, file=sys.stderr)
        sys.exit(2)
except microbench.Error as e:
    print('ERROR', e, file=sys.stderr)
    sys.exit(2)
except Exception as e:
    print('PYCRASH', type(e).__name__, e, file=sys.stderr)
    sys.exit(3)
"""


def run_case(case, mbench, pythonpath):
    env = dict(os.environ)
    env.pop("MB_BACKEND_PATH", None)
    env.update(case.env)
    if case.python is not None:
        argv = [sys.executable, "-c", PY_WRAPPER.format(call=case.python)]
        env["PYTHONPATH"] = pythonpath
    else:
        argv = [mbench, *case.argv]
    try:
        p = subprocess.run(argv, capture_output=True, env=env,
                           timeout=WATCHDOG_S, stdin=subprocess.DEVNULL)
        err = p.stderr.decode("utf-8", "replace")
        case.rc, case.stderr = p.returncode, err
        case.outcome = classify(case, p.returncode, err, False)
    except subprocess.TimeoutExpired:
        case.outcome = classify(case, None, "", True)
    if case.outcome == "error" and case.needle:
        case.named = case.needle in case.stderr
    return case


def command_text(case, mbench):
    if case.python is not None:
        return "python3 -c 'import microbench; " + case.python + "'"
    env = " ".join(f"{k}={shlex.quote(v[:60])}" for k, v in case.env.items())
    words = " ".join(shlex.quote(a if len(a) < 80 else a[:60] + "...")
                     for a in case.argv)
    return (env + " " if env else "") + "mbench " + words


def summary(cases, mbench, argv, wall_s):
    classes = []
    for c in cases:
        if c.cls not in classes:
            classes.append(c.cls)
    lines = ["| class | inputs | refused (exit 2 or 3, a message) | of which "
             "the message names the value | accepted | crashes | hangs |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    tot = [0] * 6
    for cls in classes:
        cs = [c for c in cases if c.cls == cls]
        named = [c for c in cs if c.named is not None]
        row = [len(cs), sum(c.outcome == "error" for c in cs),
               sum(bool(c.named) for c in named),
               sum(c.outcome == "ran" for c in cs),
               sum(c.outcome == "crash" for c in cs),
               sum(c.outcome == "hang" for c in cs)]
        tot = [a + b for a, b in zip(tot, row)]
        checked = f"{row[2]} of {len(named)}" if named else "-"
        lines.append(f"| {cls} | {row[0]} | {row[1]} | {checked} | {row[3]} "
                     f"| {row[4]} | {row[5]} |")
    lines.append(f"| **all** | **{tot[0]}** | **{tot[1]}** | | **{tot[3]}** "
                 f"| **{tot[4]}** | **{tot[5]}** |")
    out = ["\n".join(lines), ""]
    bad = [c for c in cases if c.outcome in ("crash", "hang")]
    accepted = [c for c in cases if c.outcome == "ran" and c.must_fail]
    unnamed = [c for c in cases if c.named is False]
    for title, group in (("Crashes and hangs", bad),
                         ("Accepted although an error was expected",
                          accepted),
                         ("Refused without naming the value", unnamed)):
        out.append(f"### {title}: {len(group)}\n")
        for c in group[:40]:
            first = (c.stderr.strip().splitlines() or [""])[-1][:160]
            out.append(f"- `{command_text(c, mbench)}` → {c.outcome} "
                       f"(exit {c.rc}): {first}")
        if len(group) > 40:
            out.append(f"- ... and {len(group) - 40} more")
        out.append("")
    return "\n".join(out)


# What this battery found, and where it was fixed (kept in the report).
FOUND = [
    ("a config or results file that is a FIFO blocked open(); /dev/zero "
     "was read until memory ran out", "f28c4fa: only regular files are "
     "read, up to 1 GiB"),
    ("a full disk: \"writing results: ; every result is kept in ...\" "
     "(an empty reason, and a stream claimed whole though cut)",
     "f28c4fa"),
    ("`run --config x.json -o x.json`, `merge a a -o a` replaced an input",
     "f28c4fa"),
    ("`Context(backend_path=5)` raised a TypeError", "8c51dc3"),
    ("a shape of the wrong rank was not named in the message", "8c51dc3"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mbench", required=True)
    ap.add_argument("--pythonpath", required=True)
    ap.add_argument("--out")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only")
    ap.add_argument("--append", metavar="TITLE",
                    help="add this run to --out under a heading TITLE "
                         "(a second build, e.g. under ASan)")
    args = ap.parse_args()
    mbench = os.path.abspath(args.mbench)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        cases = (cli_cases(tmp) + config_cases(tmp) +
                 results_cases(tmp, mbench) + output_cases(tmp) +
                 env_cases(tmp) + python_cases())
        if args.only:
            only = args.only.split(",")
            cases = [c for c in cases if c.cls in only]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda c: run_case(c, mbench, args.pythonpath),
                          cases))
    wall = time.monotonic() - t0
    text = summary(cases, mbench, sys.argv, wall)
    print(text)
    if args.out and args.append:
        with open(args.out, "a") as f:
            env = " ".join(f"{k}={os.environ[k]}" for k in
                           ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS")
                           if k in os.environ)
            f.write(f"\n## {args.append}\n\n{len(cases)} inputs, "
                    f"{wall:.0f} s:\n\n```sh\n" + (env + " " if env else "") +
                    " ".join(shlex.quote(a) for a in sys.argv) +
                    "\n```\n\n" + text)
    elif args.out:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        head = (
            "# Robustness: bad inputs, by class\n\n"
            f"{len(cases)} inputs tried as a hostile user would, each in its "
            f"own process under a {WATCHDOG_S} s watchdog, by "
            "[bench/robustness.py](../../bench/robustness.py) on "
            f"{datetime.date.today()} at commit {commit} ({platform.node()},"
            f" {os.cpu_count()} CPUs, {wall:.0f} s):\n\n"
            "```sh\n" + " ".join(shlex.quote(a) for a in sys.argv) +
            "\n```\n\n"
            "*refused*: exit 2 with a message (or 3: nothing was measured, "
            "every result skipped with its reason; in Python a "
            "`microbench.Error` or a skipped result); *accepted*: exit 0 "
            "or 1 for an input that is valid after all (`--timeout 0x10` "
            "is a hex float, `--alpha -1` a factor, `--shape 8X8` a shape, "
            "a shape too large for memory a failed result) — every input "
            "that must be refused is marked so, and one that ran anyway "
            "would be listed below; the environment class is accepted with "
            "a warning (a bad `MB_BACKEND_PATH` entry is skipped, the rest "
            "load); *crash*: a signal, an exit status above 128 not asked "
            "for, a traceback, any other Python exception, or a sanitizer "
            "report; *hang*: still running at the watchdog. \"Names the "
            "value\": the message contains the bad value, where it is "
            "printable and the option applies. This is a Release build; "
            "CI runs the quick classes (CLI usage, config, result files, "
            "output paths) on every build, also under ASan and UBSan "
            "(ctest `robustness_smoke`).\n\n")
        found = ("\n## Found by this battery, and fixed\n\n" + "".join(
            f"- {what} ({fix})\n" for what, fix in FOUND))
        with open(args.out, "w") as f:
            f.write(head + text + found)
    bad = sum(c.outcome in ("crash", "hang") for c in cases)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
