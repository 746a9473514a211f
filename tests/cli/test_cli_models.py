"""Models end to end: mbench run --model/--recipe/--mode, mbench list
recipes|models, and torchao's README configs run on the cpu backend with
the timing options shortening them (baseline and recipe rows, speedups,
training's forward/backward, the accuracy check, the file's CSV). Run by
ctest with MBENCH set."""
import csv
import json
import os
import subprocess
import tempfile
import textwrap
import unittest

MBENCH = os.environ.get("MBENCH", "mbench")
HERE = os.path.dirname(os.path.abspath(__file__))
TORCHAO = os.path.join(HERE, "..", "configs", "torchao")
QUICK = ["--samples", "2", "--warmup", "0"]
RECIPES = ("baseline, int8wo, int8dq, int4wo-32, int4wo-64, int4wo-128, "
           "int4wo-256, float8wo, float8dq-tensor, float8dq-row, "
           "float8-block, int4wo-32-hqq, int4wo-64-hqq, int4wo-128-hqq, "
           "int4wo-256-hqq, gemlitewo-4-32, gemlitewo-4-64, gemlitewo-4-128, "
           "gemlitewo-4-256, gemlitewo-8-32, gemlitewo-8-64, gemlitewo-8-128, "
           "gemlitewo-8-256, semi-sparse, block-sparse, int8dq-semi-sparse, "
           "float8dq-tensor-semi-sparse, float8dq-row-semi-sparse")
HQQ_GEMLITE = RECIPES.split(", ")[11:23]


def mbench(*args, cwd=None):
    e = dict(os.environ)
    e.pop("MB_BACKEND_PATH", None)
    return subprocess.run([MBENCH, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=e, cwd=cwd,
                          timeout=600)


def check_accuracy(test, r):
    """A model's result: its steps, forward time and accuracy vs the floor."""
    test.assertEqual(r["status"], "ok", r.get("reason"))
    test.assertTrue(r["correctness"]["pass"], r["id"])
    a = r["accuracy"]
    test.assertTrue(a["pass"], r["id"])
    test.assertGreaterEqual(a["sqnr_db"], a["min_sqnr_db"])
    test.assertGreater(len(r["steps"]), 0)
    test.assertGreater(r["phases"]["forward_ns"], 0)
    test.assertGreater(r["peak_memory_bytes"], 0)


def check_speedups(test, results, recipes):
    """Per shape: the recipes in order, baseline first at 1.00x, each other
    one at the baseline's median over its own."""
    test.assertEqual([r["recipe"] for r in results], list(recipes))
    base = results[0]
    test.assertEqual(base["speedup_vs_baseline"], 1.0)
    for r in results[1:]:
        want = base["stats"]["median_ns"] / r["stats"]["median_ns"]
        test.assertAlmostEqual(r["speedup_vs_baseline"], want, places=9)


class Run(unittest.TestCase):
    def test_model_under_a_recipe(self):
        p = mbench("run", "--model", "linear", "--recipe", "int8dq",
                   "--shape", "128x256x128", "--backend", "cpu", *QUICK,
                   "-f", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)["results"][0]
        self.assertEqual((r["op"], r["model"], r["recipe"], r["mode"]),
                         ("linear", "linear", "int8dq", "inference"))
        check_accuracy(self, r)
        self.assertEqual(r["accuracy"]["min_sqnr_db"], 35)
        labels = [s["label"] for s in r["steps"]]
        self.assertIn("quantize activations", labels)
        self.assertIn("gemm", labels)
        self.assertIsNone(r["phases"]["backward_ns"])
        # The table prints the steps under the row.
        p = mbench("run", "--model", "linear", "--recipe", "int8dq",
                   "--shape", "128x256x128", "--backend", "cpu", *QUICK)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("  inference: accuracy ", p.stdout)
        self.assertIn("(floor 35 dB): pass", p.stdout)
        self.assertIn("    forward  quantize activations", p.stdout)
        # --recipe with --op: the composite op directly.
        p = mbench("run", "--op", "linear", "--recipe", "int4wo-64",
                   "--shape", "64x128x64", "--backend", "cpu", *QUICK,
                   "-f", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["results"][0]["recipe"],
                         "int4wo-64")

    def test_training(self):
        p = mbench("run", "--model", "linear", "--recipe", "float8dq-row",
                   "--mode", "training", "--shape", "64x128x64",
                   "--backend", "cpu", *QUICK, "-f", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        row = next(csv.DictReader(p.stdout.splitlines()))
        self.assertEqual((row["op"], row["mode"], row["recipe"]),
                         ("linear_training", "training", "float8dq-row"))
        self.assertGreater(float(row["forward_ns"]), 0)
        self.assertGreater(float(row["backward_ns"]), 0)
        self.assertEqual(row["accuracy_pass"], "true")
        self.assertGreater(float(row["peak_memory_bytes"]), 0)

    def test_unknown_recipe_lists_the_valid_ones(self):
        p = mbench("run", "--model", "linear", "--recipe", "int9",
                   "--shape", "64x64x64")
        self.assertEqual(p.returncode, 2)
        self.assertIn('--recipe: unknown recipe "int9"; valid: ' + RECIPES,
                      p.stderr)
        self.assertEqual(p.stdout, "")
        p = mbench("run", "--model", "mlp", "--shape", "64x64x64")
        self.assertEqual(p.returncode, 2)
        self.assertIn('unknown model "mlp"; valid: linear, ln_linear_sigmoid',
                      p.stderr)

    def test_what_cannot_be_built_says_why(self):
        cases = [
            (["--model", "ln_linear_gelu", "--mode", "training"],
             'model "ln_linear_gelu" has no training graph'),
            (["--model", "transformer_block", "--mode", "training"],
             "training is built for: linear"),
            (["--model", "linear", "--recipe", "int8wo", "--mode",
              "training"], 'recipe "int8wo" is weight-only'),
            (["--op", "gemm", "--recipe", "int8dq"], "gemm"),
            (["--model", "linear", "--mode", "train"],
             'unknown benchmark mode "train"; valid: inference, training'),
            (["--op", "linear", "--mode", "training"],
             "--mode goes with --model"),
            (["--op", "gemm", "--model", "linear"], "run either"),
            (["--model", "ln_linear_gelu", "--act", "relu"],
             "activation is in its name"),
        ]
        for args, needle in cases:
            p = mbench("run", *args, "--shape", "64x128x64", "--backend",
                       "cpu", *QUICK)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(needle, p.stderr, args)
            self.assertEqual(p.stdout, "", args)  # not even a table header


class Lists(unittest.TestCase):
    def test_list_recipes(self):
        p = mbench("list", "recipes")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {l.split()[0]: l.split() for l in p.stdout.splitlines()[1:]}
        self.assertEqual(sorted(rows), sorted(RECIPES.split(", ")))
        self.assertEqual(rows["int8dq"][1:4], ["yes", "35", "dB"])
        self.assertEqual(rows["int8wo"][1:4], ["no", "38", "dB"])
        self.assertEqual(rows["int4wo-128"][1], "no")
        self.assertEqual(rows["float8-block"][1:4], ["yes", "25", "dB"])
        self.assertIn("i8 per-row dynamic activations", p.stdout)

    def test_list_models(self):
        p = mbench("list", "models")
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout
        self.assertIn("linear\n    one Linear K->N", text)
        self.assertIn("modes: inference (op linear) training "
                      "(op linear_training)", text)
        for act in ("sigmoid", "relu", "leakyrelu", "relu6", "gelu", "silu",
                    "hardswish"):
            self.assertIn("ln_linear_%s\n" % act, text)
        self.assertIn("transformer_block\n", text)
        self.assertIn("modes: inference (op transformer_block)\n", text)
        self.assertNotIn("training (op ln_linear)", text)
        p = mbench("list", "nope")
        self.assertEqual(p.returncode, 2)
        self.assertIn("recipes, models", p.stderr)


class TorchaoConfigs(unittest.TestCase):
    """torchao's README files as written (device: cuda), run on the cpu with
    --backend, one shape kept by --filter, two samples each."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_config(self, name, *extra):
        out = os.path.join(self.dir, "r.json")
        p = mbench("run", "--config", os.path.join(TORCHAO, name),
                   "--backend", "cpu", *QUICK, *extra, "-o", out,
                   cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the timing options given override", p.stderr)
        with open(out) as f:
            results = json.load(f)["results"]
        for r in results:
            self.assertEqual(r["stats"]["count"], 2)  # the override held
        return p, results

    def test_readme_inference(self):
        p, rs = self.run_config(
            "readme_inference.yml",
            "--filter", "1024x1024x1024/(baseline|int8wo|float8wo)")
        check_speedups(self, rs, ("baseline", "int8wo", "float8wo"))
        for r in rs:
            self.assertEqual((r["op"], r["model"], r["mode"]),
                             ("linear", "linear", "inference"))
            self.assertEqual(r["shape"], {"M": 1024, "K": 1024, "N": 1024})
            check_accuracy(self, r)
            self.assertEqual(r["config"]["backend_override"]["requested"],
                             "cuda")
        # output_dir: the file's own CSV, with the model columns.
        path = os.path.join(self.dir, "benchmarks", "microbenchmarks",
                            "results", "results.csv")
        with open(path) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["recipe"] for r in rows],
                         ["baseline", "int8wo", "float8wo"])
        for row in rows:
            self.assertEqual(row["accuracy_pass"], "true")
            self.assertNotEqual(row["speedup_vs_baseline"], "")
            self.assertEqual(row["backward_ns"], "")

    def test_hqq_and_gemlite_recipes(self):
        """Every int4wo-{g}-hqq and gemlitewo-{bits}-{g} of a torchao file
        plans (--dry-run lists each) and runs checked on the cpu; HQQ says
        what its weights cost to prepare, gemlite which kernels ran."""
        path = os.path.join(TORCHAO, "hqq_gemlite_cpu.yml")
        p = mbench("run", "--config", path, "--backend", "cpu", "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in HQQ_GEMLITE:
            self.assertIn(f"small/64x256x128/{name} ", p.stdout, name)
        p, rs = self.run_config("hqq_gemlite_cpu.yml")
        check_speedups(self, rs, ["baseline"] + HQQ_GEMLITE)
        for r in rs:
            check_accuracy(self, r)
            notes = r.get("kernel", {})
            if "hqq" in r["recipe"] or "gemlitewo-4" in r["recipe"]:
                self.assertRegex(notes["weight_prep"],
                                 r"^HQQ weights: \d+ solver rounds, weight "
                                 r"error .* 0\.\d+ \(int4wo's round-to-"
                                 r"nearest: 0\.\d+\)$")
                self.assertIn("core", [s["impl"] for s in r["steps"]])
            if "gemlite" in r["recipe"]:
                self.assertIn("not on gemlite's Triton kernels",
                              notes["recipe_kernel"])

    def test_sparsity_recipes(self):
        """torchao's sparsity_config_recipe_names: each (quantization,
        sparsity) pair its runner makes plans (--dry-run lists it) and runs
        checked on the cpu against the pruned layer; the CSV's sparsity
        column says the file's name; the weights are pruned in setup."""
        path = os.path.join(TORCHAO, "sparsity_cpu.yml")
        p = mbench("run", "--config", path, "--backend", "cpu", "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        pairs = [(q, s) for s in ("semi-sparse", "2:4")
                 for q in ("baseline", "int8dq", "float8dq-tensor",
                           "float8dq-row")] + [("baseline", "block")]
        for q, s in pairs:
            self.assertIn(f"small/64x256x128/{q}+{s} ", p.stdout)
        self.assertNotIn("int8wo+", p.stdout)
        p, rs = self.run_config("sparsity_cpu.yml")
        self.assertEqual(len(rs), 5 + len(pairs))
        for r in rs:
            check_accuracy(self, r)
            t = r["config"]["torchao"]
            if t["sparsity"] is None:
                continue
            self.assertIn((t["quantization"], t["sparsity"]), pairs)
            steps = r["steps"]
            self.assertEqual((steps[0]["label"], steps[0]["phase"],
                              steps[0]["impl"]),
                             ("prune weights", "setup", "core"))
            self.assertRegex(r["kernel"]["weight_prep"],
                             r"weight error .* 0\.\d+$")
            if t["quantization"] == "baseline":
                want = ("gemm_block_sparse" if t["sparsity"] == "block"
                        else "gemm_sparse24")
                self.assertEqual(steps[-1]["op"], want)
            else:
                self.assertIn("dense quantized GEMM",
                              r["kernel"]["recipe_kernel"])
        with open(os.path.join(self.dir, "sparsity_results",
                               "results.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["quantization"], r["sparsity"]) for r in rows],
                         [(q, "") for q in ("baseline", "int8wo", "int8dq",
                                            "float8dq-tensor",
                                            "float8dq-row")] + pairs)

    def test_readme_training(self):
        p, rs = self.run_config(
            "readme_training.yml",
            "--filter", "1024x1024x1024/(baseline|float8dq-tensor)")
        check_speedups(self, rs, ("baseline", "float8dq-tensor"))
        for r in rs:
            self.assertEqual((r["op"], r["mode"]),
                             ("linear_training", "training"))
            check_accuracy(self, r)
            ph = r["phases"]
            self.assertGreater(ph["backward_ns"], 0)
            self.assertIn("backward", [s["phase"] for s in r["steps"]])
            training = r["config"]["training"]
            self.assertEqual(training["scaling_granularity"], "tensorwise")
            self.assertEqual(training["repeat_n"], 100)
        # The table shows each row's forward and backward times.
        lines = p.stdout.splitlines()
        self.assertEqual(len([l for l in lines if l.startswith(
            "  forward ") and ", backward " in l]), 2)

    def test_what_cannot_be_built_is_skipped_and_the_rest_runs(self):
        path = os.path.join(self.dir, "t.yml")
        with open(path, "w") as f:
            f.write(textwrap.dedent("""\
                benchmark_mode: training
                quantization_config_recipe_names: [int8wo, int8dq]
                model_params:
                  - name: lin
                    matrix_shapes: [{name: custom, shapes: [[32, 64, 32]]}]
                    device: cpu
                  - name: ln
                    model_type: ln_linear_relu
                    matrix_shapes: [{name: custom, shapes: [[32, 64, 32]]}]
                    device: cpu
                """))
        p = mbench("run", "--config", path, "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("6 benchmarks", p.stdout)
        self.assertEqual(p.stdout.count("skipped: "), 4)
        out = os.path.join(self.dir, "r.json")
        p = mbench("run", "--config", path, *QUICK, "-o", out, cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            rs = {r["name"]: r for r in json.load(f)["results"]}
        self.assertEqual(len(rs), 6)
        self.assertEqual(rs["lin/32x64x32/baseline"]["status"], "ok")
        self.assertEqual(rs["lin/32x64x32/int8dq"]["status"], "ok")
        self.assertGreater(rs["lin/32x64x32/int8dq"]["speedup_vs_baseline"],
                           0)
        skipped = rs["lin/32x64x32/int8wo"]
        self.assertEqual(skipped["status"], "skipped")
        self.assertIn("weight-only", skipped["reason"])
        self.assertEqual((skipped["recipe"], skipped["mode"]),
                         ("int8wo", "training"))
        for recipe in ("baseline", "int8wo", "int8dq"):
            r = rs["ln/32x64x32/" + recipe]
            self.assertEqual(r["status"], "skipped")
            self.assertIn("no training graph", r["reason"])

    def test_unknown_recipe_in_the_dashboard_file(self):
        p = mbench("run", "--config",
                   os.path.join(TORCHAO, "dashboard_quantization_config.yml"),
                   "--dry-run")
        self.assertEqual(p.returncode, 2)
        self.assertIn("dashboard_quantization_config.yml:9: "
                      "quantization_config_recipe_names[5]: unknown recipe "
                      '"my_new_quantization"; valid: ' + RECIPES, p.stderr)

    def test_timing_options_are_checked_with_config(self):
        p = mbench("run", "--config",
                   os.path.join(TORCHAO, "readme_inference.yml"),
                   "--criterion", "fixed")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--criterion fixed needs --samples", p.stderr)
        p = mbench("run", "--config",
                   os.path.join(TORCHAO, "readme_inference.yml"),
                   "--criterion", "stdrel", "--samples", "5")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--samples is for --criterion fixed; stdrel stops on "
                      "its own", p.stderr)
        p = mbench("run", "--config",
                   os.path.join(TORCHAO, "readme_inference.yml"),
                   "--recipe", "int8dq")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--recipe cannot be combined with --config", p.stderr)


if __name__ == "__main__":
    unittest.main()
