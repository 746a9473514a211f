"""Config files: the expanded plan (dry run), running it, the options
(filter, max_flop, backend, timing overrides) and the errors."""
import json
import os
import tempfile
import unittest

import microbench

import mbsupport

SWEEP_YAML = """\
# 4 gemms + 2 element-wise + a model and its baseline = 8 benchmarks
defaults:
  backend: cpu
  cache: hot
  timing: {samples: 3, warmup: 0}
benchmarks:
  - name: mm
    op: gemm
    shapes: [[16, 16, 16], "32x16x8"]
    dtypes: [f32, bf16]
  - name: elt
    ops: [add, copy]
    shapes: ["8x8"]
  - name: lin
    model: linear
    recipes: [int8dq]
    shapes: [[32, 64, 32]]
"""

SWEEP_JSON = {
    "defaults": {"backend": "cpu", "cache": "hot",
                 "timing": {"samples": 3, "warmup": 0}},
    "benchmarks": [
        {"name": "mm", "op": "gemm", "shapes": [[16, 16, 16], "32x16x8"],
         "dtypes": ["f32", "bf16"]},
        {"name": "elt", "ops": ["add", "copy"], "shapes": ["8x8"]},
        {"name": "lin", "model": "linear", "recipes": ["int8dq"],
         "shapes": [[32, 64, 32]]},
    ],
}


class ConfigTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.yaml = cls.write("sweep.yaml", SWEEP_YAML)
        cls.json = cls.write("sweep.json", json.dumps(SWEEP_JSON))
        cls.ctx = mbsupport.module_context()

    @classmethod
    def tearDownClass(cls):
        cls.ctx.close()
        cls.tmp.cleanup()

    @classmethod
    def write(cls, name, text):
        path = os.path.join(cls.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_dry_run(self):
        plan = self.ctx.run_config(self.yaml, dry_run=True)
        self.assertIsInstance(plan, microbench.PlanEntries)
        self.assertEqual(plan.schema, "native")
        self.assertEqual(len(plan), 8)
        names = [e["name"] for e in plan]
        self.assertEqual(names[:4], ["mm/16x16x16/f32", "mm/16x16x16/bf16",
                                     "mm/32x16x8/f32", "mm/32x16x8/bf16"])
        self.assertIn("elt/add/8x8/f32", names)
        first = plan[0]
        self.assertEqual((first["op"], first["shape"], first["dtype"],
                          first["backend"], first["cache"], first["flop"],
                          first["skip_reason"]),
                         ("gemm", (16, 16, 16), "f32", "cpu", "hot",
                          2 * 16 ** 3, ""))
        self.assertGreater(first["bytes"], 0)
        recipes = {e["recipe"]: e for e in plan if e["model"] == "linear"}
        self.assertEqual(set(recipes), {"baseline", "int8dq"})
        self.assertEqual(plan[recipes["int8dq"]["baseline"]]["recipe"],
                         "baseline")

    def test_json_and_yaml_give_the_same_plan(self):
        self.assertEqual(self.ctx.run_config(self.yaml, dry_run=True),
                         self.ctx.run_config(self.json, dry_run=True))

    def test_run(self):
        results = self.ctx.run_config(self.yaml)
        self.assertIsInstance(results, microbench.ResultList)
        self.assertEqual(len(results), 8)
        for r in results:
            with self.subTest(name=r.name):
                self.assertEqual(r.status, "ok", r.reason)
                self.assertTrue(r.passed)
                self.assertEqual(len(r.samples), 3)
                self.assertEqual(r.cache, "hot")
        self.assertTrue(results.ok)
        lin = [r for r in results if r.recipe == "int8dq"][0]
        self.assertIsNotNone(lin.speedup_vs_baseline)
        self.assertEqual(lin.to_dict()["config"]["schema"], "native")
        records = results.to_records()
        self.assertEqual(records[0]["name"], "mm/16x16x16/f32")
        table = results.table(context=self.ctx).splitlines()
        self.assertTrue(table[1].startswith("gemm "))
        self.assertIn("16x16x16", table[1])

    def test_filter_max_flop_and_backend(self):
        only = self.ctx.run_config(self.yaml, filter="^elt/", dry_run=True)
        self.assertEqual([e["name"] for e in only],
                         ["elt/add/8x8/f32", "elt/copy/8x8/f32"])
        small = self.ctx.run_config(self.yaml, max_flop=1000, dry_run=True)
        self.assertEqual(len(small), 2)
        self.assertTrue(any("max" in n.lower() for n in small.notes),
                        small.notes)
        results = self.ctx.run_config(self.yaml, filter="^elt/add",
                                      backend="cpu")
        self.assertEqual(len(results), 1)
        self.assertIn("backend_override", results[0].to_dict()["config"])

    def test_timing_override(self):
        # The plan applies them (mb_plan_options_t.timing): every result
        # records the timing it ran with.
        results = self.ctx.run_config(self.yaml, filter="^elt/", samples=2,
                                      warmup_runs=3)
        self.assertEqual([len(r.samples) for r in results], [2, 2])
        for r in results:
            timing = r.to_dict()["timing"]
            self.assertEqual((timing["criterion"], timing["samples"],
                              timing["warmup_runs"]), ("fixed", 2, 3))
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.run_config(self.yaml, criterion="fixed")
        self.assertIn("samples", str(cm.exception))
        with self.assertRaises(TypeError):
            self.ctx.run_config(self.yaml, cache="cold")

    def test_python_kernel_in_a_plan(self):
        def add(x, y, z):
            zs = z.array(flat=True)
            for i, (a, b) in enumerate(zip(x.array(flat=True),
                                           y.array(flat=True))):
                zs[i] = a + b
        with mbsupport.module_context() as ctx:
            ctx.register_kernel("add", "mine", add)
            results = ctx.run_config(self.yaml, filter="^elt/add")
        self.assertEqual(results[0].impl, "mine")
        self.assertTrue(results[0].passed)

    def test_skipped_entries(self):
        path = self.write("skips.yaml", """\
benchmarks:
  - model: ln_linear_gelu
    mode: training
    shapes: [[32, 32, 32]]
    timing: {samples: 2}
""")
        plan = self.ctx.run_config(path, dry_run=True)
        self.assertEqual(len(plan), 1)
        self.assertIn("training", plan[0]["skip_reason"])
        results = self.ctx.run_config(path)
        self.assertEqual(results[0].status, "skipped")
        self.assertEqual(results[0].reason, plan[0]["skip_reason"])

    def test_errors(self):
        bad = self.write("bad.yaml", """\
benchmarks:
  - op: gemm
    shapes: [[8, 8, 8]]
    dtypes: [f32, bfloat61]
""")
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.run_config(bad)
        e = cm.exception
        self.assertEqual(e.status, "MB_ERR_PARSE")
        self.assertIn("bad.yaml:4", str(e))
        self.assertIn("bfloat61", str(e))
        self.assertIn("valid dtypes", str(e))
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.run_config(os.path.join(self.tmp.name, "missing.yaml"))
        self.assertEqual(cm.exception.status, "MB_ERR_IO")
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.run_config(self.yaml, filter="(")
        self.assertIn("(", str(cm.exception))
        # An unknown backend in the second entry: an error before the
        # first runs (and in a dry run), naming the entry.
        late = self.write("late.yaml", """\
benchmarks:
  - op: copy
    shapes: [[8, 8]]
  - op: add
    shapes: [[8, 8]]
    backend: tpu
""")
        for dry in (True, False):
            with self.assertRaises(microbench.Error) as cm:
                self.ctx.run_config(late, dry_run=dry)
            self.assertEqual(cm.exception.status, "MB_ERR_NOT_FOUND")
            self.assertIn('add/8x8/f32: unknown backend "tpu"',
                          str(cm.exception))

    def test_module_level(self):
        plan = microbench.run_config(self.yaml, filter="^elt/copy",
                                     dry_run=True)
        self.assertEqual(len(plan), 1)
        results = microbench.run_config(self.yaml, filter="^elt/copy")
        self.assertTrue(results.ok)

    def test_write_and_load(self):
        results = self.ctx.run_config(self.yaml, filter="^mm/16")
        path = os.path.join(self.tmp.name, "out.json")
        microbench.write_report(results, path, format="json",
                                context=self.ctx)
        loaded = microbench.load_results(path)
        self.assertEqual([r.name for r in loaded],
                         ["mm/16x16x16/f32", "mm/16x16x16/bf16"])
        self.assertEqual(loaded, results)


if __name__ == "__main__":
    unittest.main()
