"""torchao drop-in outputs: a torchao config's results written as torchao's
runner writes them — the CSV led by its result columns in its order, and
`--format ossdb` with its dashboard runner's benchmark and model names and
metrics (docs/schema.md, "torchao drop-in outputs"). Run by ctest with
MBENCH set."""
import ast
import csv
import json
import os
import tempfile
import unittest

from test_cli_config import mbench  # with cwd: output_dir is relative

HERE = os.path.dirname(os.path.abspath(__file__))
# Two named groups on the cpu, f32 and bf16, one torch_compile_mode each,
# output_dir "tiny_results"; recipe baseline.
CONFIG = os.path.join(HERE, "..", "configs", "torchao", "two_groups_cpu.yml")
QUICK = ["--samples", "2", "--warmup", "0"]

# Copied from pytorch/ao at dbef6992fb6bc20da9c121baedfa8125625ab641 (the
# last commit with the microbenchmark runner):
# benchmarks/microbenchmarks/utils.py, generate_results_csv writes the keys
# of BenchmarkResult.to_dict() — BenchmarkConfig.to_dict() (lines 92-105)
# then the result's own (lines 132-142).
TORCHAO_COLUMNS = [
    "name", "quantization", "sparsity", "m", "k", "n",
    "high_precision_dtype", "torch_compile_mode", "device", "model_type",
    "output_dir", "enable_profiler", "enable_memory_profiler",
    "baseline_model_eager_inference_time_in_ms",
    "quantized_model_eager_inference_time_in_ms",
    "baseline_model_compiled_inference_time_in_ms",
    "quantized_model_compiled_inference_time_in_ms",
    "eager speedup on baseline", "compile speedup on baseline",
    "eager vs compile speedup", "profiler_json_path", "memory_profile_path",
    "memory_visualization_path", "memory_stats",
]
# benchmarks/dashboard/ci_microbenchmark_runner.py (same commit): the
# metrics of run_ci_benchmarks (lines 131, 141, 154, 167), in its order,
# with their metric.extra_info; the record's shape is
# create_benchmark_result's (lines 78-104).
TORCHAO_METRICS = [
    ("Fwd Speedup (x)", {}),
    ("Bfloat16 Fwd Time (ms)", {"unit": "ms"}),
    ("Quantized Fwd Time (ms)", {"unit": "ms"}),
    ("Allocated Memory (MB)", {"unit": "MB"}),
]


class DropIn(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_config(self, fmt, out):
        path = os.path.join(self.dir, out)
        p = mbench("run", "--config", CONFIG, *QUICK, "-f", fmt, "-o", path,
                   cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(path) as f:
            return f.read()

    def check_csv(self, text):
        rows = list(csv.reader(text.splitlines()))
        header, body = rows[0], rows[1:]
        self.assertEqual(header[:len(TORCHAO_COLUMNS)], TORCHAO_COLUMNS)
        # Ours follow, whole: the header a native run writes.
        p = mbench("run", "--op", "add", "--shape", "16x16", "--backend",
                   "cpu", *QUICK, "-f", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        ours = next(csv.reader(p.stdout.splitlines()))
        self.assertEqual(ours[0], "id")
        self.assertEqual(header[len(TORCHAO_COLUMNS):], ours)
        self.assertEqual(len(body), 2)
        # What torchao's scripts read: its columns by their first position.
        rs = [dict(zip(TORCHAO_COLUMNS, r)) for r in body]
        want = [("tiny", "64", "64", "64", "torch.float32", "max-autotune"),
                ("tiny_bf16", "32", "64", "16", "torch.bfloat16", "default")]
        for r, w in zip(rs, want):
            self.assertEqual((r["name"], r["m"], r["k"], r["n"],
                              r["high_precision_dtype"],
                              r["torch_compile_mode"]), w)
            self.assertEqual((r["quantization"], r["sparsity"], r["device"],
                              r["model_type"], r["output_dir"]),
                             ("baseline", "", "cpu", "linear",
                              "tiny_results/inference"))
            self.assertEqual(r["compile speedup on baseline"], "1.0")
            base = float(r["baseline_model_compiled_inference_time_in_ms"])
            self.assertGreater(base, 0)
            self.assertEqual(
                float(r["quantized_model_compiled_inference_time_in_ms"]),
                base)
            # No eager run, no PyTorch profiler: left empty, not made up.
            for key in ("baseline_model_eager_inference_time_in_ms",
                        "eager speedup on baseline", "profiler_json_path"):
                self.assertEqual(r[key], "")
            stats = ast.literal_eval(r["memory_stats"])
            self.assertEqual(list(stats), ["allocated_bytes.all.peak"])
            self.assertGreater(stats["allocated_bytes.all.peak"], 0)
        return body

    def test_csv(self):
        body = self.check_csv(self.run_config("csv", "r.csv"))
        # The file's own CSV (output_dir) has the same layout.
        with open(os.path.join(self.dir, "tiny_results", "results.csv")) as f:
            self.assertEqual(len(self.check_csv(f.read())), len(body))

    def test_ossdb(self):
        recs = json.loads(self.run_config("ossdb", "r.ossdb"))
        by_model = {}
        for rec in recs:
            self.assertEqual(list(rec), ["benchmark", "model", "metric",
                                         "runners", "dependencies"])
            b, m = rec["benchmark"], rec["model"]
            self.assertEqual((b["name"], b["mode"], b["dtype"]),
                             ("micro-benchmark api", "inference", "baseline"))
            self.assertEqual(list(b["extra_info"])[:3],
                             ["device", "arch", "torch_compile_mode"])
            self.assertEqual(b["extra_info"]["device"], "cpu")
            self.assertEqual((m["type"], m["origins"]),
                             ("micro-benchmark custom layer", ["torchao"]))
            self.assertEqual(list(rec["metric"]), [
                "name", "benchmark_values", "target_value", "extra_info"])
            self.assertEqual(rec["metric"]["target_value"], 0)
            self.assertEqual((rec["runners"], rec["dependencies"]), ([], {}))
            by_model.setdefault(m["name"], []).append(rec)
        self.assertEqual(sorted(by_model),
                         ["baseline-32-64-16", "baseline-64-64-64"])
        for name, rs in by_model.items():
            # torchao's four first, in its order; ours it has none for follow.
            got = [(r["metric"]["name"], r["metric"]["extra_info"])
                   for r in rs[:4]]
            self.assertEqual(got, TORCHAO_METRICS, name)
            self.assertEqual([r["metric"]["name"] for r in rs[4:]],
                             ["tflops", "correctness", "sqnr_db"])
            v = {r["metric"]["name"]: r["metric"]["benchmark_values"][0]
                 for r in rs}
            self.assertEqual(v["Fwd Speedup (x)"], 1.0)
            self.assertEqual(v["Bfloat16 Fwd Time (ms)"],
                             v["Quantized Fwd Time (ms)"])
            self.assertGreater(v["Allocated Memory (MB)"], 0)
            self.assertEqual(v["correctness"], 1)
        modes = {r["model"]["name"]:
                 r["benchmark"]["extra_info"]["torch_compile_mode"]
                 for r in recs}
        self.assertEqual(modes, {"baseline-64-64-64": "max-autotune",
                                 "baseline-32-64-16": "default"})

    def test_native_ossdb_unchanged(self):
        p = mbench("run", "--op", "add", "--shape", "16x16", "--backend",
                   "cpu", *QUICK, "-f", "ossdb")
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = json.loads(p.stdout)
        self.assertEqual([r["metric"]["name"] for r in recs],
                         ["time_ms", "tflops", "correctness"])
        for r in recs:
            self.assertEqual(r["benchmark"]["name"], "libmicrobench")
            self.assertEqual(r["model"]["origins"], ["libmicrobench"])
            self.assertNotIn("extra_info", r["metric"])


if __name__ == "__main__":
    unittest.main()
