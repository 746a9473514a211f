"""mbench end to end: JSON documents, exit codes, and the messages bad input
gets. Run by ctest with MBENCH (the binary) and MB_TEST_FIXTURE_DIR set."""
import csv
import json
import os
import re
import pty
import select
import subprocess
import tempfile
import time
import unittest

MBENCH = os.environ.get("MBENCH", "mbench")
FIXTURES = os.environ.get("MB_TEST_FIXTURE_DIR", "")
QUICK = ["--samples", "3", "--warmup", "0"]


def mbench(*args, env=None):
    e = dict(os.environ)
    e.pop("MB_BACKEND_PATH", None)
    e.update(env or {})
    return subprocess.run([MBENCH, *args], capture_output=True, text=True,
                          env=e, timeout=600)


def run_on_pty(args, seconds=120):
    """Runs mbench with stderr on a pseudo-terminal (stdout a pipe);
    returns (rc, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    e = dict(os.environ)
    e.pop("MB_BACKEND_PATH", None)
    p = subprocess.Popen([MBENCH, *args], stdout=subprocess.PIPE,
                         stderr=slave, text=True, env=e)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    out = p.communicate(timeout=seconds)[0]
    os.close(master)
    return p.returncode, out, seen.decode("utf-8", "replace")


def own_stderr(text):
    """stderr without the leak-suppression summary an ASan build's
    LeakSanitizer prints at exit (CI's sanitizer stage): what mbench
    itself said."""
    return re.sub(r"-+\nSuppressions used:\n(?:.*\n)*?-+\n\n?", "", text)


# The CPU backend's oneDNN kernels exist only in a build with oneDNN
# (-DMB_WITH_ONEDNN=OFF, the portable and the lent-GPU builds, have none).
HAS_ONEDNN = "cpu: onednn" in mbench("list", "ops", "gemm").stdout
CPU_IMPLS = ("onednn", "c") if HAS_ONEDNN else ("c",)
# gemm has one more: bf16 x int4 weight-only on bf16 oneDNN matmuls, one
# per K group.
GEMM_IMPLS = CPU_IMPLS + (("onednn_bf16",) if HAS_ONEDNN else ())


class Run(unittest.TestCase):
    def json_run(self, *args, rc=0):
        p = mbench("run", *args, "--format", "json")
        self.assertEqual(p.returncode, rc, p.stderr)
        return json.loads(p.stdout)

    def test_layout_flags(self):
        # --trans-a/--trans-b and --bshd reach the op: recorded in params
        # and checked against the reference of that layout.
        doc = self.json_run("--op", "gemm", "--shape", "48x40x56",
                            "--trans-a", "--trans-b", *QUICK)
        (r,) = doc["results"]
        self.assertEqual((r["params"]["trans_a"], r["params"]["trans_b"]),
                         (True, True))
        self.assertTrue(r["correctness"]["pass"], r["correctness"])
        doc = self.json_run("--op", "attention", "--shape", "1x2x32x32x16",
                            "--bshd", *QUICK)
        (r,) = doc["results"]
        self.assertTrue(r["params"]["bshd"])
        self.assertTrue(r["correctness"]["pass"], r["correctness"])
        self.assertNotIn("kv_heads", r["params"])

    def test_kv_heads(self):
        # Grouped-query attention: --kv-heads reaches the op, is recorded
        # and in the variant, and is checked against the reference.
        doc = self.json_run("--op", "attention", "--shape", "1x4x32x32x16",
                            "--kv-heads", "2", "--causal", *QUICK)
        (r,) = doc["results"]
        self.assertEqual(r["params"]["kv_heads"], 2)
        self.assertIn("kv_heads:2", r["problem"])
        self.assertTrue(r["correctness"]["pass"], r["correctness"])

    def test_gemm_json_document(self):
        doc = self.json_run("--op", "gemm", "--shape", "256x128x64",
                            "--dtype", "f32", "--min-time", "0.05")
        self.assertEqual(doc["schema"], "microbench.results/1")
        for key in ("version", "git_commit", "argv", "host", "backends"):
            self.assertIn(key, doc["meta"])
        self.assertIn("--shape", doc["meta"]["argv"])
        self.assertGreaterEqual(len(doc["devices"]), 1)
        (r,) = doc["results"]
        self.assertEqual((r["op"], r["status"], r["backend"], r["cache"]),
                         ("gemm", "ok", "cpu", "cold"))
        self.assertEqual(r["shape"], {"M": 256, "K": 128, "N": 64})
        self.assertEqual(r["dtypes"]["a"], "f32")
        self.assertTrue(r["correctness"]["pass"])
        self.assertGreater(r["correctness"]["elements_checked"], 0)
        stats = r["stats"]
        self.assertEqual(len(r["samples_ns"]), stats["count"])
        self.assertGreaterEqual(stats["count"], 10)
        self.assertIn(stats["stop_reason"], ("converged", "plateau", "timeout"))
        for k in ("min_ns", "max_ns", "mean_ns", "median_ns", "stdev_ns",
                  "rel_stdev", "p10_ns", "p25_ns", "p75_ns", "p90_ns",
                  "p99_ns", "iqr_ns", "batch"):
            self.assertIn(k, stats)
        self.assertLessEqual(stats["min_ns"], stats["median_ns"])
        self.assertEqual(r["derived"]["flop"], 2 * 256 * 128 * 64)
        self.assertGreater(r["derived"]["tflops"], 0)

    def test_default_kernel_is_the_faster(self):
        """Where the C kernels' AVX-512 loops run they are the default for
        add, activation, layernorm and f32 softmax (faster than oneDNN
        2.6's); on a CPU without them (MB_CPU_NO_AVX512 plays one) oneDNN's
        kernel is, and --impl c runs the portable loops, checked."""
        flags = set()
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
        avx512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
        # The norm and softmax rows need AVX512-BF16 too (cpu_simd_norm.c).
        bf16 = avx512 and "avx512_bf16" in flags
        cases = ((["--op", "add"], avx512),
                 (["--op", "activation", "--act", "silu"], avx512),
                 (["--op", "layernorm"], bf16), (["--op", "softmax"], bf16))
        for off in ("", "1"):
            env = {"MB_CPU_NO_AVX512": off}
            for args, has in cases:
                vec = has and not off
                for impl in ([], ["--impl", "c"]):
                    p = mbench("run", *args, "--shape", "64x96", "--dtype",
                               "f32", "--cache", "hot", *QUICK, *impl,
                               "--format", "json", env=env)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    (r,) = json.loads(p.stdout)["results"]
                    want = "c" if impl or vec or not HAS_ONEDNN else "onednn"
                    self.assertEqual(r["impl"], want, (args, off, impl))
                    self.assertTrue(r["correctness"]["pass"], (args, off))

    def test_fixed_samples_and_impls(self):
        for impl in CPU_IMPLS:
            for dtype, out in (("f32", "f32"), ("bf16", "bf16"), ("bf16", "f32")):
                doc = self.json_run("--op", "gemm", "--shape", "65x33x17",
                                    "--dtype", dtype, "--out-dtype", out,
                                    "--impl", impl, *QUICK)
                (r,) = doc["results"]
                self.assertEqual(r["impl"], impl)
                self.assertEqual(r["dtypes"]["out"], out)
                self.assertTrue(r["correctness"]["pass"], r)
                self.assertEqual(len(r["samples_ns"]), 3)
                self.assertEqual(r["stats"]["stop_reason"], "fixed")

    def test_add_hot(self):
        # The C kernel: single-threaded at this size, so it stays short (and
        # batched) even when ctest -j loads every core.
        doc = self.json_run("--op", "add", "--shape", "64x64", "--dtype",
                            "bf16", "--cache", "hot", "--impl", "c", *QUICK)
        (r,) = doc["results"]
        self.assertEqual((r["cache"], r["status"]), ("hot", "ok"))
        self.assertGreater(r["stats"]["batch"], 1)
        self.assertEqual(r["derived"]["bytes"], 3 * 64 * 64 * 2)

    def test_add_rotate(self):
        doc = self.json_run("--op", "add", "--shape", "256x256", "--cache",
                            "rotate", "--impl", "c", *QUICK)
        (r,) = doc["results"]
        self.assertEqual((r["cache"], r["status"]), ("rotate", "ok"))
        rot = r["rotate"]
        per_copy = 3 * 256 * 256 * 4
        self.assertEqual(rot["footprint_bytes"], rot["copies"] * per_copy)
        # the copies other than the one in use exceed the last-level cache
        self.assertGreater((rot["copies"] - 1) * per_copy, rot["cache_bytes"])
        self.assertTrue(r["correctness"]["pass"])

    def test_tf32_is_declined_on_cpu(self):
        # Only skipped: nothing measured, exit 3.
        doc = self.json_run("--op", "gemm", "--shape", "32x32x32", "--tf32",
                            *QUICK, rc=3)
        (r,) = doc["results"]
        self.assertEqual(r["status"], "skipped")
        self.assertIn("no tf32", r["reason"])
        self.assertTrue(r["params"]["tf32"])
        # The CPU declined, so "try --backend cpu" would be no help.
        p = mbench("run", "--op", "gemm", "--shape", "32x32x32", "--tf32",
                   *QUICK)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("drop what the CPU backend declines", p.stderr)
        self.assertNotIn("try --backend cpu", p.stderr)

    def test_fast_accum_is_declined_on_cpu(self):
        # The CPU's fp8 GEMMs are emulations: no fp8 accumulator to relax,
        # so they decline (as tf32), for fp8 inputs and quantize-inputs
        # alike; the request is recorded in params and in the variant.
        for args in (["--op", "gemm", "--dtype", "f8e4m3"],
                     ["--op", "gemm_fp8_rowwise"],
                     ["--op", "gemm", "--dtype", "f8e5m2", "--dtype-b",
                      "f8e4m3", "--impl", "c"]):
            doc = self.json_run(*args, "--shape", "32x32x32", "--fast-accum",
                                *QUICK, rc=3)
            (r,) = doc["results"]
            self.assertEqual(r["status"], "skipped", args)
            self.assertIn("fast_accum: the CPU emulates fp8", r["reason"])
            self.assertTrue(r["params"]["fast_accum"])
        p = mbench("run", "--op", "gemm", "--dtype", "f8e4m3", "--shape",
                   "32x32x32", "--fast-accum", *QUICK)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("fast-accum", p.stdout)  # the variant column
        doc = self.json_run("--op", "gemm", "--dtype", "f8e4m3", "--shape",
                            "32x32x32", *QUICK)
        self.assertFalse(doc["results"][0]["params"]["fast_accum"])

    def test_output_files(self):
        with tempfile.TemporaryDirectory() as d:
            for ext in ("json", "csv", "md"):
                path = os.path.join(d, "r." + ext)
                p = mbench("run", "--op", "add", "--shape", "32x32", *QUICK,
                           "-o", path)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("add", p.stdout)  # the table still on stdout
                with open(path) as f:
                    text = f.read()
                if ext == "json":
                    self.assertEqual(json.loads(text)["results"][0]["op"], "add")
                elif ext == "csv":
                    rows = list(csv.DictReader(text.splitlines()))
                    self.assertEqual(rows[0]["op"], "add")
                    self.assertEqual(rows[0]["correct"], "true")
                    self.assertEqual(rows[0]["samples"], "3")
                else:
                    self.assertIn("| add ", text)


    def test_check_sample_fresh_unless_seeded(self):
        # Without --seed every run checks other elements of a large output;
        # --seed makes the check repeatable. A config's seed: likewise.
        def seed(*extra):
            (r,) = self.json_run("--op", "copy", "--shape", "64x64",
                                 "--backend", "cpu", *QUICK, *extra)["results"]
            self.assertIsInstance(r["correctness"]["sample_seed"], int)
            return r["correctness"]["sample_seed"]
        self.assertNotEqual(seed(), seed())
        self.assertEqual(seed("--seed", "7"), seed("--seed", "7"))
        with tempfile.TemporaryDirectory() as tmp:
            seeds = {}
            for given in (False, True):
                cfg = os.path.join(tmp, "c%d.yml" % given)
                with open(cfg, "w") as f:
                    f.write("benchmarks:\n  - op: copy\n    shapes: [[64, 64]]\n"
                            "    backend: cpu\n" +
                            ("    seed: 7\n" if given else ""))
                runs = []
                for _ in range(2):
                    p = mbench("run", "--config", cfg, *QUICK, "--format",
                               "json")
                    self.assertEqual(p.returncode, 0, p.stderr)
                    (r,) = json.loads(p.stdout)["results"]
                    runs.append(r["correctness"]["sample_seed"])
                seeds[given] = runs
            self.assertNotEqual(*seeds[False])
            self.assertEqual(*seeds[True])

    def test_flush_read(self):
        # --flush read: cold samples flushed by reading, recorded in the
        # result; --flush on a hot run or a bad name is a usage error.
        doc = self.json_run("--op", "add", "--shape", "64x64", "--flush",
                            "read", *QUICK)
        (r,) = doc["results"]
        self.assertEqual((r["cache"], r["timing"]["flush"]), ("cold", "read"))
        self.assertTrue(r["id"].endswith("/cold-read"), r["id"])
        doc = self.json_run("--op", "add", "--shape", "64x64", *QUICK)
        self.assertEqual(doc["results"][0]["timing"]["flush"], "write")
        for args, needle in (
                (["--flush", "erase"], "valid: write, read"),
                (["--cache", "hot", "--flush", "read"],
                 "--flush applies to --cache cold")):
            p = mbench("run", "--op", "add", "--shape", "8x8", *args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(needle, p.stderr)


class BadInput(unittest.TestCase):
    def expect_usage_error(self, args, *needles):
        p = mbench(*args)
        self.assertEqual(p.returncode, 2, (p.stdout, p.stderr))
        for n in needles:
            self.assertIn(n, p.stderr)

    def test_unknown_op(self):
        self.expect_usage_error(
            ["run", "--op", "gemmm", "--shape", "8x8x8"],
            'unknown op "gemmm"; valid ops: activation, add, ', "gemm")

    def test_unknown_dtype(self):
        self.expect_usage_error(
            ["run", "--op", "gemm", "--shape", "8x8x8", "--dtype", "fp33"],
            'unknown dtype "fp33"', "valid dtypes: f32")

    def test_unsupported_dtype_for_op(self):
        self.expect_usage_error(
            ["run", "--op", "gemm", "--shape", "8x8x8", "--dtype", "i32"],
            'dtype "i32" is not supported; valid: f32, bf16, f16, f8e4m3')

    def test_bad_shapes(self):
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8x8"],
                                "gemm: shape 8x8 has 2 dimensions; gemm "
                                "needs 3 (MxKxN)")
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8xax8"],
                                'shape "8xax8"')
        self.expect_usage_error(["run", "--op", "add", "--shape", "0x8"],
                                'shape "0x8": a dimension is 0')
        # strtoll took a sign, a trailing x and clamped a huge number.
        for shape, why in (("64x64x64x", "a dimension is missing"),
                           ("+64x64x64", "each dimension is a number, digits only"),
                           ("18446744073709551617x2",
                            "a dimension is larger than 2^40")):
            self.expect_usage_error(["run", "--op", "gemm", "--shape", shape],
                                    f'shape "{shape}": {why}')
        # A list runs each shape (ShapeAndDtypeLists); an empty or bad
        # item is an error before anything runs.
        self.expect_usage_error(
            ["run", "--op", "gemm", "--shape", "64x64x64,"],
            '--shape "64x64x64,": an empty item in the list')
        self.expect_usage_error(
            ["run", "--op", "gemm", "--shape", "64x64x64,64x64"],
            "gemm: shape 64x64 has 2 dimensions")

    def test_a_full_stdout_is_an_error(self):
        # The table to a full disk (/dev/full) exited 0 with nothing
        # written; now it fails with the reason.
        e = dict(os.environ)
        e.pop("MB_BACKEND_PATH", None)
        with open("/dev/full", "w") as full:
            p = subprocess.run([MBENCH, "run", "--op", "add", "--shape",
                                "8x8", *QUICK], stdout=full,
                               stderr=subprocess.PIPE, text=True, env=e,
                               timeout=600)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("writing the table: No space left on device", p.stderr)

    def test_given_is_not_a_value(self):
        # "Not given" was a value the user could type: --timeout -1 ran
        # 15 s, --samples 0 switched to stdrel, --static-scale 0 dropped
        # the static scale. Each is now an error naming the valid range.
        base = ["run", "--op", "add", "--shape", "8x8"]
        for opt, value, valid in (
                ("timeout", "-1", "> 0"), ("samples", "0", "1 or more"),
                ("max-noise", "-1", "> 0"), ("min-time", "-1", ">= 0"),
                ("warmup", "-1", ">= 0"), ("repetitions", "0", "1 or more"),
                ("min-samples", "0", "1 or more"), ("max-flop", "0", "> 0"),
                ("isolate-timeout", "-1", "> 0"), ("eps", "-1", "> 0"),
                ("static-scale", "0", "> 0")):
            self.expect_usage_error(
                base + [f"--{opt}", value],
                f"--{opt}: {value} is out of range; valid: {valid}")
        self.expect_usage_error(base + ["--samples", "5000000000"],
                                "5000000000 is out of range (at most")
        self.expect_usage_error(base + ["--samples", "5", "--criterion",
                                        "stdrel"], "--samples is for")
        # A negative slope is a valid value, not "not given".
        doc = Run.json_run(self, "--op", "activation", "--act", "leakyrelu",
                           "--act-alpha", "-0.5", "--shape", "8x8", *QUICK)
        self.assertEqual(doc["results"][0]["params"]["act_alpha"], -0.5)
        # A given timing option is kept whatever its value: --min-time 0.
        doc = Run.json_run(self, "--op", "add", "--shape", "8x8",
                           "--min-time", "0", "--timeout", "0.2")
        self.assertEqual(doc["results"][0]["timing"]["min_time_s"], 0)

    def test_unknown_backend_and_impl(self):
        self.expect_usage_error(
            ["run", "--op", "add", "--shape", "8x8", "--backend", "tpu"],
            'unknown backend "tpu"', "cpu (1 device)")
        self.expect_usage_error(
            ["run", "--op", "add", "--shape", "8x8", "--impl", "mine"],
            'unknown implementation "mine"', CPU_IMPLS[0])
        # The error is the only output: no table header (nor the suite's
        # device list) before it, and each implementation named once.
        p = mbench("run", "--op", "gemm", "--shape", "8x8x8", "--impl",
                   "mine", "--backend", "cpu")
        self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)
        # (The first line: a sanitizer build adds its report below.)
        listed = p.stderr.split("available:")[1].splitlines()[0].split()
        self.assertEqual(sorted(listed), sorted(GEMM_IMPLS), p.stderr)
        p = mbench("--backend", "tpu")
        self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)
        self.assertIn('unknown backend "tpu"', p.stderr)

    def test_bad_options(self):
        self.expect_usage_error(["run", "--frobnicate"], "unknown option --frobnicate")
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--samples", "-3"], "--samples")
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--cache", "warm"], "valid: cold, hot")
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--format", "xml"], "valid formats")
        self.expect_usage_error(["list", "things"],
                                "valid: ops, backends, devices, presets")
        self.expect_usage_error(["frob"], 'unknown command "frob"')
        self.expect_usage_error(["run", "--shape", "8x8"], "--op or --model (or --config FILE) is required")

    def test_kv_heads_errors(self):
        self.expect_usage_error(["run", "--op", "attention", "--shape",
                                 "1x4x32x32x16", "--kv-heads", "3"],
                                "H = 4 query heads is not a multiple of "
                                "kv_heads = 3")
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8x8x8",
                                 "--kv-heads", "2"],
                                "kv_heads (2) applies to attention and attention_bwd only")
        self.expect_usage_error(["run", "--op", "attention", "--shape",
                                 "1x4x32x32x16", "--kv-heads", "0"],
                                "--kv-heads")

    def test_inapplicable_params(self):
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8x8x8",
                                 "--causal"], '"causal" does not apply')
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--scale-a", "row"], "scales do not apply")
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--tf32"], '"tf32" does not apply')
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8x8x8",
                                 "--dtype", "bf16", "--tf32"],
                                "tf32 applies to f32 x f32 only")
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--fast-accum"],
                                '"fast_accum" does not apply')
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8x8x8",
                                 "--dtype", "bf16", "--fast-accum"],
                                "fast_accum applies to fp8 GEMMs only")
        self.expect_usage_error(["run", "--op", "gemm_fp8_rowwise",
                                 "--shape", "8x8x8", "--dtype-q", "i8",
                                 "--fast-accum"],
                                "with dtype_q f8e4m3 or f8e5m2, not i8")
        self.expect_usage_error(["run", "--model", "linear", "--recipe",
                                 "float8dq-row", "--shape", "8x8x8",
                                 "--fast-accum"],
                                '"fast_accum" does not apply')
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--cache", "lukewarm"],
                                "valid: cold, hot, rotate")
        self.expect_usage_error(["run", "--op", "add", "--shape", "8x8",
                                 "--bshd"], '"bshd" does not apply')
        self.expect_usage_error(["run", "--op", "gemm", "--shape", "8x8x8",
                                 "--dtype", "f8e4m3", "--trans-a"],
                                "trans_a applies to unscaled float gemms")

    def test_output_is_not_the_config(self):
        # run --config x.json -o x.json replaced the config with results.
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "c.yml")
            text = ("benchmarks:\n  - op: copy\n    shapes: [[64, 64]]\n"
                    "    backend: cpu\n")
            with open(cfg, "w") as f:
                f.write(text)
            link = os.path.join(d, "link.yml")
            os.symlink(cfg, link)
            for given in (cfg, link):
                self.expect_usage_error(
                    ["run", "--config", given, "-o", cfg, "-f", "json"],
                    f"-o: {cfg} is also an input ({given})")
            with open(cfg) as f:
                self.assertEqual(f.read(), text)

    def test_inputs_that_are_not_files(self):
        # A FIFO as config blocked mbench in open(); /dev/zero was read until
        # memory ran out. Only regular files are read.
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "fifo")
            os.mkfifo(fifo)
            for args in (["run", "--config", fifo, "--dry-run"],
                         ["run", "--config", "/dev/zero", "--dry-run"],
                         ["compare", fifo, "/dev/zero"],
                         ["merge", fifo, "-o", os.path.join(d, "m.json")]):
                p = subprocess.run([MBENCH, *args], capture_output=True,
                                   text=True, timeout=60)
                self.assertEqual(p.returncode, 2, (args, p.stderr))
                self.assertIn("is not a regular file", p.stderr)

    def test_disk_full(self):
        # A full disk (here: a file-size limit, EFBIG) named no error ("writing
        # results: ; every result is kept in ...") and claimed the stream was
        # whole when it was cut too.
        import resource
        import signal

        def limit(n):
            def pre():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
            return pre

        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "x.json")
            cmd = [MBENCH, "run", "--op", "add", "--shape", "64x64", *QUICK,
                   "-o", out]
            # The sizes: the document (indented) and its stream (a compact
            # header line and result line), estimated from a run without a
            # limit.
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
            os.remove(out)
            compact = dict(separators=(",", ":"))
            head = {k: v for k, v in doc.items() if k != "results"}
            head_line = len(json.dumps(head, **compact)) + 1
            result_line = len(json.dumps(doc["results"][0], **compact)) + 1
            stream = head_line + result_line
            fits = stream + stream // 10
            if fits >= len(json.dumps(doc, indent=2)):
                self.skipTest("the document is not larger than its stream")
            # The stream fits, the document does not.
            p = subprocess.run(cmd, capture_output=True, text=True,
                               preexec_fn=limit(fits), timeout=300)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(f"cannot write {out}: File too large; every result "
                          f"is kept in {out}l", p.stderr)
            with open(out + "l") as f:
                self.assertEqual(len(f.read().splitlines()), 2)
            os.remove(out + "l")
            # Neither fits, the result line is cut: the stream is not
            # claimed whole.
            p = subprocess.run(cmd, capture_output=True, text=True,
                               preexec_fn=limit(head_line + result_line // 2),
                               timeout=300)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn(f"writing {out}l: File too large", p.stderr)
            self.assertIn(f"{out}l holds only the first 0 of 1 results "
                          "(writing it failed too", p.stderr)
            self.assertNotIn("every result is kept", p.stderr)

    def test_unwritable_output(self):
        # A missing directory is found before anything runs (the file
        # itself opens at the first result): no table, one message.
        p = mbench("run", "--op", "add", "--shape", "8x8", *QUICK, "-o",
                   "/nonexistent/x.csv")
        self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)
        self.assertEqual(own_stderr(p.stderr),
                         "mbench run: -o /nonexistent/x.csv: no directory "
                         "/nonexistent (make it first)\n")
        # Only regular files: a rename over /dev/full replaced the device
        # with a file. A read-only file is kept; nothing runs first.
        run = ["run", "--op", "add", "--shape", "8x8", *QUICK, "-o"]
        for path, words in (("/dev/full", "-o: /dev/full is not a regular "
                                          "file"),
                            (tempfile.gettempdir(), "is not a regular file")):
            self.expect_usage_error(run + [path, "-f", "json"], words)
        self.assertTrue(os.path.exists("/dev/full") and
                        not os.path.isfile("/dev/full"))
        with tempfile.TemporaryDirectory() as d:
            ro = os.path.join(d, "ro.json")
            with open(ro, "w") as f:
                f.write("keep")
            os.chmod(ro, 0o444)
            self.expect_usage_error(run + [ro], "is read-only (mode 0444)")
            with open(ro) as f:
                self.assertEqual(f.read(), "keep")
            # A replaced file keeps its permissions.
            kept = os.path.join(d, "kept.json")
            with open(kept, "w") as f:
                f.write("{}")
            os.chmod(kept, 0o640)
            p = mbench(*run, kept)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(os.stat(kept).st_mode & 0o777, 0o640)


class Listing(unittest.TestCase):
    def test_lists_and_info(self):
        for args in (["list", "ops"], ["list", "backends"], ["list", "devices"],
                     ["info"], ["--version"], ["--help"], ["run", "--help"]):
            p = mbench(*args)
            self.assertEqual(p.returncode, 0, (args, p.stderr))
            self.assertTrue(p.stdout.strip(), args)
        # In table order: the C kernels where their AVX-512 loops run come
        # before oneDNN's (add, activation, layernorm, softmax).
        orders = {", ".join(CPU_IMPLS), ", ".join(reversed(CPU_IMPLS))}
        listed = mbench("list", "ops").stdout
        self.assertTrue(any("kernels: cpu: %s (f32" % o in listed
                            for o in orders), listed)

    def test_list_dtypes(self):
        """Every element type with its kind; e8m0 is a scale only."""
        rows = {line.split()[0]: line.split(None, 2)[2] for line in
                mbench("list", "dtypes").stdout.splitlines()[1:]
                if line[:1].strip() and not line.startswith("also")}
        self.assertEqual(rows["f4e2m1"], "float")
        self.assertEqual(rows["i4"], "integer")
        self.assertTrue(rows["e8m0"].startswith("scale"), rows["e8m0"])

    def test_list_presets(self):
        # a line per preset: name, shape count, summary
        p = mbench("list", "presets")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {l.split()[0]: l.split()[1] for l in p.stdout.splitlines()[1:]
                if l.strip() and not l.startswith("the shapes")}
        self.assertEqual(sorted(rows), sorted((
            "custom", "llama", "llama4", "deepseek_v3_236b",
            "deepseek_v3_671b", "qwen3_32b", "gemma3_27b", "pow2",
            "pow2_extended", "small_sweep", "sweep")))
        self.assertEqual((rows["sweep"], rows["llama"], rows["custom"]),
                         ("512", "4", "-"))
        # list presets NAME: its shapes, a line each, as --shape takes them
        p = mbench("list", "presets", "llama")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n  attn\.wqkv +16384x8192x1280\n")
        self.assertEqual(len(p.stdout.splitlines()), 1 + 4)
        self.assertEqual(len(mbench("list", "presets", "sweep")
                             .stdout.splitlines()), 1 + 512)

    def test_nonexistent_backend_path_explains(self):
        p = mbench("list", "backends", env={"MB_BACKEND_PATH": "/nonexistent"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("/nonexistent", p.stdout)
        self.assertIn("cannot read search directory", p.stdout)

    def test_verbose_loader(self):
        p = mbench("list", "backends", env={"MB_BACKEND_VERBOSE": "1",
                                            "MB_BACKEND_PATH": "/nonexistent"})
        self.assertEqual(p.returncode, 0)
        self.assertIn('loaded backend "cpu"', p.stderr)
        self.assertIn("/nonexistent: cannot read directory", p.stderr)


@unittest.skipUnless(FIXTURES, "MB_TEST_FIXTURE_DIR not set")
class WrongKernel(unittest.TestCase):
    def test_wrong_result_exit_1(self):
        env = {"MB_BACKEND_PATH": os.path.join(FIXTURES, "working")}
        p = mbench("run", "--op", "gemm", "--shape", "16x16x16", "--backend",
                   "wrong", *QUICK, env=env)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("FAIL", p.stdout)
        p = mbench("run", "--op", "gemm", "--shape", "16x16x16", "--backend",
                   "wrong", *QUICK, "--strict", "--format", "json", env=env)
        self.assertEqual(p.returncode, 1)
        (r,) = json.loads(p.stdout)["results"]
        self.assertEqual(r["status"], "failed")
        self.assertIn("wrong result", r["reason"])
        self.assertEqual(r["samples_ns"], [])

    def test_skipped_backend_without_device(self):
        # Nothing measured is exit 3 (not a pass for CI), saying why and
        # what to try.
        env = {"MB_BACKEND_PATH": os.path.join(FIXTURES, "nodevice")}
        p = mbench("run", "--op", "gemm", "--shape", "16x16x16", "--backend",
                   "nodevice", *QUICK, env=env)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("skipped: backend \"nodevice\" has no device", p.stdout)
        self.assertIn("nothing was measured", p.stderr)
        self.assertIn("no fake device: this fixture has none", p.stderr)
        self.assertIn("--backend cpu", p.stderr)
        self.assertIn("mbench list backends", p.stderr)

    def test_suite_without_device_exit_3(self):
        env = {"MB_BACKEND_PATH": os.path.join(FIXTURES, "nodevice")}
        p = mbench("suite", "--backend", "nodevice", env=env)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("every benchmark was skipped", p.stderr)
        self.assertIn("has no device", p.stderr)

    def test_nothing_measured_keeps_existing_output(self):
        # -o FILE from an earlier run survives a run that measured nothing;
        # a new file still records the skips.
        env = {"MB_BACKEND_PATH": os.path.join(FIXTURES, "nodevice")}
        args = ("run", "--op", "gemm", "--shape", "16x16x16", "--backend",
                "nodevice", *QUICK)
        with tempfile.TemporaryDirectory() as d:
            for name in ("old.json", "old.csv"):
                path = os.path.join(d, name)
                with open(path, "w") as f:
                    f.write("earlier results\n")
                p = mbench(*args, "-o", path, env=env)
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertIn("%s left as it was" % path, p.stderr)
                with open(path) as f:
                    self.assertEqual(f.read(), "earlier results\n")
                self.assertFalse(os.path.exists(path + "l"))
            path = os.path.join(d, "new.json")
            p = mbench(*args, "-o", path, env=env)
            self.assertEqual(p.returncode, 3, p.stderr)
            with open(path) as f:
                (r,) = json.load(f)["results"]
            self.assertEqual(r["status"], "skipped")


if __name__ == "__main__":
    unittest.main()
