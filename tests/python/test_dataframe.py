"""ResultList as flat rows: to_records() and step_records() (standard
library only), and to_dataframe() and steps_dataframe() against real
pandas, on results of real tiny runs: a gemm, an element-wise add and a
config's linear model with a recipe and its baseline (recipe,
speedup_vs_baseline, steps, accuracy, phases).

The pandas tests skip where pandas is missing; ctest runs this module a
second time with an interpreter that has pandas (test python_pandas) and
MB_TEST_REQUIRE_PANDAS=1, which makes a missing pandas a failure."""
import math
import os
import sys
import tempfile
import unittest
from unittest import mock

import microbench

import mbsupport

QUICK = mbsupport.QUICK

MODEL_YAML = mbsupport.MODEL_YAML


def setUpModule():
    global CTX, RESULTS, MODEL
    CTX = mbsupport.module_context()
    gemm = CTX.run(op="gemm", shape=(16, 8, 4), dtype="f32", **QUICK)
    add = CTX.run(op="add", shape=(8, 8), **QUICK)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lin.yaml")
        with open(path, "w") as f:
            f.write(MODEL_YAML)
        models = CTX.run_config(path)
    RESULTS = microbench.ResultList([gemm, add] + list(models))
    MODEL = [r for r in models if r.recipe == "int8dq"][0]


def tearDownModule():
    CTX.close()


def walk(obj, prefix=""):
    """(dotted key, value) of every leaf of a result's JSON object: what
    the rows must hold (independent of the package's flattening; an empty
    object has no leaves)."""
    for key, value in obj.items():
        if isinstance(value, dict):
            yield from walk(value, prefix + key + ".")
        else:
            yield prefix + key, value


def same(a, b):
    """Equal, with NaN (pandas' missing number) equal to None."""
    missing = (lambda v: v is None or (isinstance(v, float) and
                                       math.isnan(v)))
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return a == b


class RecordsTest(unittest.TestCase):
    """to_records() and step_records(): no pandas needed."""

    def test_the_runs_have_what_the_rows_must_show(self):
        self.assertEqual([r.status for r in RESULTS], ["ok"] * 4,
                         [r.reason for r in RESULTS])
        self.assertIsNotNone(MODEL.speedup_vs_baseline)
        self.assertTrue(MODEL.steps)
        self.assertIsNotNone(MODEL.accuracy)

    def test_every_field_of_the_json(self):
        records = RESULTS.to_records()
        self.assertEqual(len(records), len(RESULTS))
        leaves = set()
        for r, rec in zip(RESULTS, records):
            for key, value in walk(r.to_dict()):
                leaves.add(key)
                with self.subTest(id=r.id, key=key):
                    self.assertIn(key, rec)
                    self.assertEqual(rec[key], value)
        # And nothing else: the JSON's fields and the identity and headline
        # columns (None where a result has no such field; shape, dtype,
        # check and gflops are not in the JSON).
        from microbench import _table
        first = set(_table.IDENTITY + _table.HEADLINE)
        self.assertTrue({"shape", "dtype", "check", "gflops"} <= first)
        self.assertEqual(set(records[0]) - leaves - first, set())

    def test_values_are_the_result_attributes(self):
        gemm, add = RESULTS[0], RESULTS[1]
        rec = RESULTS.to_records()
        g, a, m = rec[0], rec[1], rec[RESULTS.index(MODEL)]
        for r, row in ((gemm, g), (add, a), (MODEL, m)):
            with self.subTest(id=r.id):
                self.assertEqual(
                    (row["id"], row["op"], row["backend"], row["device"],
                     row["impl"], row["cache"], row["status"]),
                    (r.id, r.op, r.backend, r.device, r.impl, r.cache,
                     r.status))
                self.assertEqual(row["shape"], "x".join(map(str, r.shape)))
                self.assertEqual(row["dtype"], r.dtype)
                self.assertEqual(row["dtypes.a"], r.dtypes["a"])
                self.assertEqual(row["stats.median_ns"], r.median_ns)
                self.assertEqual(row["stats.min_ns"], r.min_ns)
                self.assertEqual(row["samples_ns"], r.samples)
                self.assertEqual(row["gflops"], r.gflops)
                self.assertEqual(row["check"], r.check_text())
                self.assertEqual(row["derived.pct_peak"], r.pct_peak)
                self.assertEqual(row["derived.gbps"], r.gbps)
                self.assertEqual(row["correctness.sqnr_db"],
                                 r.correctness["sqnr_db"])
                self.assertEqual(row["correctness.pass"], r.passed)
                for dim, size in r.dims.items():
                    self.assertEqual(row["shape." + dim], size)
        self.assertEqual(g["shape"], "16x8x4")
        self.assertEqual((g["shape.M"], g["shape.K"], g["shape.N"]),
                         (16, 8, 4))
        self.assertEqual(g["params.alpha"], gemm.params["alpha"])
        self.assertEqual(g["params.scale_a.mode"],
                         gemm.params["scale_a"]["mode"])
        self.assertIsNone(g["recipe"])
        self.assertIsNone(g["speedup_vs_baseline"])
        # The model's own fields.
        self.assertEqual((m["recipe"], m["model"], m["mode"]),
                         (MODEL.recipe, MODEL.model, MODEL.mode))
        self.assertEqual(m["speedup_vs_baseline"], MODEL.speedup_vs_baseline)
        self.assertEqual(m["steps"], MODEL.steps)
        self.assertIsInstance(m["steps"][0], dict)
        self.assertEqual(m["accuracy.sqnr_db"], MODEL.accuracy["sqnr_db"])
        self.assertEqual(m["accuracy.pass"], MODEL.accuracy["pass"])
        self.assertEqual(m["phases.forward_ns"], MODEL.phases["forward_ns"])
        self.assertEqual(m["params.recipe"], MODEL.params["recipe"])
        kernel = MODEL.to_dict()["kernel"]
        for key, value in kernel.items():
            self.assertEqual(m["kernel." + key], value)

    def test_columns_identity_first_and_the_same_in_every_row(self):
        records = RESULTS.to_records()
        columns = list(records[0])
        for rec in records:
            self.assertEqual(list(rec), columns)
        self.assertEqual(columns[:10], ["id", "name", "problem", "op",
                                        "alias", "model", "recipe", "mode",
                                        "shape", "shape_name"])
        self.assertLess(columns.index("status"),
                        columns.index("stats.median_ns"))
        # Each object's fields sit together, also one only the model has
        # (params.recipe after the gemm's params.*).
        from microbench import _table
        rest = columns[len(_table.IDENTITY + _table.HEADLINE):]
        self.assertIn("params.recipe", rest)
        tops = [c.split(".", 1)[0] for c in rest]
        for top in set(tops):
            at = [i for i, t in enumerate(tops) if t == top]
            self.assertEqual(at, list(range(at[0], at[-1] + 1)), top)
        self.assertEqual(microbench.ResultList().to_records(), [])

    def test_step_records(self):
        # The model and its baseline both run as graphs: every step of
        # each, in order, with its result's id.
        expected = [(r.id, i, step) for r in RESULTS
                    for i, step in enumerate(r.steps or ())]
        self.assertIn(MODEL.id, {e[0] for e in expected})
        steps = RESULTS.step_records()
        self.assertEqual(len(steps), len(expected))
        for row, (rid, i, step) in zip(steps, expected):
            self.assertEqual((row["id"], row["step"]), (rid, i))
            for key, value in step.items():
                self.assertEqual(row[key], value)

    def test_without_pandas_a_clear_error(self):
        # sys.modules[name] = None makes `import name` raise ImportError.
        with mock.patch.dict(sys.modules, {"pandas": None}):
            for fn in (RESULTS.to_dataframe, RESULTS.steps_dataframe):
                with self.assertRaises(ImportError) as cm:
                    fn()
                text = str(cm.exception)
                self.assertIn("pip install pandas", text)
                self.assertIn("apt install python3-pandas", text)
                self.assertIsInstance(cm.exception, microbench.Error)
                self.assertEqual(cm.exception.name, "pandas")


def pandas_or_skip():
    try:
        import pandas
    except ImportError as e:
        if os.environ.get("MB_TEST_REQUIRE_PANDAS"):
            raise AssertionError("MB_TEST_REQUIRE_PANDAS is set but %s "
                                 "cannot import pandas: %s"
                                 % (sys.executable, e)) from None
        raise unittest.SkipTest("pandas is not installed for %s (ctest's "
                                "python_pandas runs these)" % sys.executable)
    return pandas


class DataFrameTest(unittest.TestCase):
    """to_dataframe() and steps_dataframe() with real pandas."""

    @classmethod
    def setUpClass(cls):
        cls.pd = pandas_or_skip()

    def test_every_record_column_and_value(self):
        df = RESULTS.to_dataframe()
        self.assertIsInstance(df, self.pd.DataFrame)
        records = RESULTS.to_records()
        self.assertEqual(list(df.columns), list(records[0]))
        self.assertEqual(len(df), len(RESULTS))
        for i, rec in enumerate(records):
            for column, value in rec.items():
                with self.subTest(row=i, column=column):
                    self.assertTrue(same(df[column].iloc[i], value),
                                    (df[column].iloc[i], value))

    def test_values_are_the_result_attributes(self):
        df = RESULTS.to_dataframe().set_index("id")
        for r in RESULTS:
            row = df.loc[r.id]
            with self.subTest(id=r.id):
                self.assertEqual(row["op"], r.op)
                self.assertEqual(row["stats.median_ns"], r.median_ns)
                self.assertEqual(list(row["samples_ns"]), r.samples)
                self.assertTrue(same(row["correctness.sqnr_db"],
                                     r.correctness["sqnr_db"]))
                self.assertTrue(same(row["derived.pct_peak"], r.pct_peak))
                self.assertEqual(row["dtypes.a"], r.dtype)
                self.assertTrue(same(row["recipe"], r.recipe))
                self.assertTrue(same(row["speedup_vs_baseline"],
                                     r.speedup_vs_baseline))
        m = df.loc[MODEL.id]
        self.assertEqual(m["steps"], MODEL.steps)
        self.assertEqual(m["accuracy.sqnr_db"], MODEL.accuracy["sqnr_db"])
        self.assertEqual(m["phases.forward_ns"], MODEL.phases["forward_ns"])
        self.assertEqual(df.loc[RESULTS[0].id, "shape.M"], 16)

    def test_speedup_by_recipe_and_shape(self):
        # The docs' example: a pivot of the speedup, recipe x shape.
        df = RESULTS.to_dataframe()
        models = df[df["recipe"].notna()]
        pivot = models.pivot_table(index="recipe", columns="shape",
                                   values="speedup_vs_baseline")
        self.assertEqual(pivot.loc["int8dq", "32x64x32"],
                         MODEL.speedup_vs_baseline)
        self.assertEqual(pivot.loc["baseline", "32x64x32"], 1.0)

    def test_steps_dataframe(self):
        steps = RESULTS.steps_dataframe()
        self.assertEqual(list(steps.columns)[:2], ["id", "step"])
        expected = [s for r in RESULTS for s in r.steps or ()]
        self.assertEqual(len(steps), len(expected))
        self.assertEqual(list(steps["label"]), [s["label"] for s in expected])
        self.assertTrue(all(same(a, s["median_ns"]) for a, s in
                            zip(steps["median_ns"], expected)))
        joined = steps.merge(RESULTS.to_dataframe()[["id", "recipe"]],
                             on="id")
        self.assertEqual(len(joined), len(expected))
        self.assertEqual(set(joined["recipe"]), {"int8dq", "baseline"})

    def test_empty(self):
        df = microbench.ResultList().to_dataframe()
        self.assertEqual(len(df), 0)
        self.assertEqual(list(df.columns)[:2], ["id", "name"])


if __name__ == "__main__":
    unittest.main()
