"""One benchmark: arguments to the spec, the Result and its round trips
(dict, JSON, every report format, a results file), the C structs against
the JSON, and the errors."""
import ctypes
import csv
import io
import json
import math
import os
import tempfile
import unittest

import microbench
from microbench import _lib, _structs

import mbsupport

QUICK = mbsupport.QUICK


def setUpModule():
    global CTX, GEMM
    CTX = mbsupport.module_context()
    GEMM = CTX.run(op="gemm", shape=(64, 32, 16), dtype="f32", **QUICK)


def tearDownModule():
    CTX.close()


class DoneWhenTest(unittest.TestCase):
    def test_issue_example(self):
        # The issue's acceptance line, as written (default context, default
        # timing).
        r = microbench.run(op="gemm", shape=(512, 512, 512), dtype="f32")
        self.assertEqual(r.status, "ok", r.reason)
        self.assertTrue(r.passed)
        self.assertEqual(r.shape, (512, 512, 512))


class ResultTest(unittest.TestCase):
    def test_attributes(self):
        r = GEMM
        self.assertEqual((r.status, r.reason, r.ok), ("ok", "", True))
        self.assertEqual((r.op, r.backend, r.device_index, r.cache),
                         ("gemm", "cpu", 0, "cold"))
        self.assertEqual(r.shape, (64, 32, 16))
        self.assertEqual(r.dims, {"M": 64, "K": 32, "N": 16})
        self.assertEqual(r.dtype, "f32")
        self.assertEqual(r.dtypes["out"], "f32")
        self.assertTrue(r.impl)
        self.assertTrue(r.passed)
        self.assertTrue(r.correctness["checked"])
        self.assertEqual(len(r.samples), 3)
        self.assertEqual(r.stats["count"], 3)
        self.assertEqual(r.median_ns, sorted(r.samples)[1])
        self.assertEqual(r.min_ns, min(r.samples))
        self.assertEqual(r.flop, 2 * 64 * 32 * 16)
        self.assertGreater(r.bytes, 0)
        self.assertAlmostEqual(r.gflops, r.flop / r.median_ns, delta=1e-6)
        self.assertIsInstance(r.warnings, list)
        self.assertIsNone(r.kernel_exception)
        self.assertIsNone(r.accuracy)
        self.assertEqual(r.to_dict()["timing"]["criterion"], "fixed")

    def test_repr_is_one_line(self):
        text = repr(GEMM)
        self.assertNotIn("\n", text)
        self.assertIn("gemm 64x32x16 f32 cpu:0/", text)
        self.assertIn("check pass", text)

    def test_dict_and_json_round_trip(self):
        d = GEMM.to_dict()
        self.assertEqual(d["op"], "gemm")
        d["op"] = "changed"  # a copy: the result is unchanged
        self.assertEqual(GEMM.op, "gemm")
        again = microbench.Result.from_json(GEMM.to_json())
        self.assertEqual(again, GEMM)
        self.assertEqual(microbench.Result.from_dict(GEMM.to_dict()), GEMM)
        self.assertEqual(json.loads(GEMM.to_json(indent=2)), GEMM.to_dict())

    def test_from_json_validates(self):
        d = GEMM.to_dict()
        d["cache"] = "lukewarm"
        with self.assertRaises(microbench.Error) as cm:
            microbench.Result.from_dict(d)
        self.assertIn("cache", str(cm.exception))
        with self.assertRaises(microbench.Error) as cm:
            microbench.Result.from_json("{not json")
        self.assertTrue(cm.exception.status.startswith("MB_ERR_"))

    def test_shape_as_string(self):
        r = CTX.run(op="add", shape="32x48", **QUICK)
        self.assertEqual(r.shape, (32, 48))
        self.assertEqual(r.dtype, "f32")  # the op's default
        self.assertTrue(r.passed)

    def test_options_reach_the_result(self):
        r = CTX.run(op="gemm", shape=(16, 16, 16), dtype="bf16",
                    out_dtype="f32", alpha=2.0, beta=0.5, impl="c",
                    cache="hot", seed=7, **QUICK)
        self.assertEqual((r.impl, r.cache, r.seed), ("c", "hot", 7))
        self.assertEqual(r.dtypes["a"], "bf16")
        self.assertEqual(r.dtypes["out"], "f32")
        self.assertEqual((r.params["alpha"], r.params["beta"]), (2.0, 0.5))
        self.assertTrue(r.passed)

    def test_flags_reach_the_result(self):
        r = CTX.run(op="gemm", shape=(16, 16, 16), trans_a=True, trans_b=True,
                    **QUICK)
        self.assertTrue(r.params["trans_a"])
        self.assertTrue(r.params["trans_b"])
        self.assertTrue(r.passed, r.reason)

    def test_fast_accum(self):
        # The keyword reaches the params; the CPU's emulated fp8 declines
        # it with the reason, and a non-fp8 gemm is an input error.
        r = CTX.run(op="gemm", shape=(16, 32, 16), dtype="f8e4m3",
                    fast_accum=True, backend="cpu", **QUICK)
        self.assertTrue(r.params["fast_accum"])
        self.assertEqual(r.status, "skipped")
        self.assertIn("fast_accum: the CPU emulates fp8", r.reason)
        with self.assertRaises(microbench.Error) as cm:
            CTX.run(op="gemm", shape=(16, 32, 16), dtype="bf16",
                    fast_accum=True, **QUICK)
        self.assertIn("fast_accum applies to fp8 GEMMs only",
                      str(cm.exception))

    def test_flush(self):
        # A cold sample flushed by reading is recorded as such; a bad name
        # is an input error naming the valid ones.
        r = CTX.run(op="add", shape=(16, 16), flush="read", **QUICK)
        self.assertEqual(r.flush, "read")
        self.assertEqual(r.cache, "cold")
        self.assertTrue(r.passed, r.reason)
        self.assertEqual(CTX.run(op="add", shape=(16, 16), **QUICK).flush,
                         "write")
        with self.assertRaises(microbench.Error) as cm:
            CTX.run(op="add", shape=(16, 16), flush="erase", **QUICK)
        self.assertIn("valid: write, read", str(cm.exception))

    def test_quantize_params(self):
        r = CTX.run(op="quantize", shape=(32, 64), dtype="bf16",
                    out_dtype="i8", granularity="row", **QUICK)
        self.assertEqual(r.params["scale_a"]["mode"], "row")
        self.assertTrue(r.passed, r.reason)

    def test_timing_options(self):
        r = CTX.run(op="add", shape=(16, 16), cache="hot", criterion="stdrel",
                    min_samples=4, min_time=0.001, max_noise=0.5, timeout=2,
                    warmup=0.0, warmup_runs=2, batch=3, repetitions=2)
        t = r.to_dict()["timing"]
        self.assertEqual((t["criterion"], t["min_samples"], t["min_time_s"],
                          t["max_noise"], t["timeout_s"], t["warmup_runs"],
                          t["batch_requested"], t["repetitions"]),
                         ("stdrel", 4, 0.001, 0.5, 2, 2, 3, 2))
        self.assertEqual(r.stats["batch"], 3)
        self.assertEqual(len(r.to_dict()["repetitions"]), 2)

    def test_model(self):
        r = CTX.run(model="linear", recipe="int8dq", shape=(32, 64, 32),
                    **QUICK)
        self.assertEqual((r.op, r.model, r.recipe, r.mode),
                         ("linear", "linear", "int8dq", "inference"))
        self.assertTrue(r.accuracy["pass"], r.accuracy)
        self.assertTrue(r.steps)
        self.assertIn("forward_ns", r.phases)

    def test_model_training(self):
        r = CTX.run(model="linear", mode="training", shape=(32, 32, 32),
                    **QUICK)
        self.assertEqual((r.op, r.mode), ("linear_training", "training"))
        self.assertIsNotNone(r.phases["backward_ns"])

    def test_alias(self):
        r = CTX.run(op="matmul", shape=(16, 16, 16), **QUICK)
        self.assertEqual((r.op, r.alias), ("gemm", "matmul"))


class Snapshot:
    """A struct's fields copied into Python values (attribute access)."""

    def __init__(self, values):
        self.__dict__.update(values)


def snapshot(struct):
    values = {}
    for name, ctype in struct._fields_:
        v = getattr(struct, name)
        if isinstance(v, bytes) or (v is None and ctype is ctypes.c_char_p):
            v = _structs.text(v)
        elif isinstance(v, ctypes.Structure):
            v = snapshot(v)
        elif isinstance(v, ctypes.Array):
            v = list(v)
        values[name] = v
    return Snapshot(values)


class StructCrossCheckTest(unittest.TestCase):
    """The C structs of a result against its JSON: the same figures through
    the ctypes mirrors (what validates them beyond their layout)."""

    def assertSame(self, c_value, json_value, what=None):
        # Bit for bit: the writer prints every double so that it reads
        # back exactly (lib/json_exact.c). NaN is null in JSON.
        if isinstance(c_value, float) and math.isnan(c_value):
            self.assertIsNone(json_value, what)
            return
        self.assertEqual(c_value, json_value,
                         "%s: C %r, JSON %r" % (what, c_value, json_value))

    def read(self, fn, cls, handle):
        """The struct `fn` fills, as plain values: its strings point into
        the result, so they are read before the result is destroyed."""
        out = cls()
        _lib.check(getattr(_lib.lib(), fn)(handle, ctypes.byref(out)), fn)
        return snapshot(out)

    def test_structs_match_json(self):
        with CTX._run_handle(op="gemm", shape=(32, 16, 8), dtype="bf16",
                             out_dtype="f32", cache="hot", seed=5,
                             **QUICK) as (h, _):
            info = self.read("mb_result_info", _structs.ResultInfo, h)
            stats = self.read("mb_result_stats", _structs.Stats, h)
            corr = self.read("mb_result_correctness", _structs.Correctness, h)
            der = self.read("mb_result_derived", _structs.Derived, h)
            acc = self.read("mb_result_accuracy", _structs.Accuracy, h)
            n = ctypes.c_size_t()
            samples = _lib.lib().mb_result_samples(h, ctypes.byref(n))
            samples = [samples[i] for i in range(n.value)]
            r = microbench.Result._from_handle(h)
        d = r.to_dict()
        self.assertEqual(info.status, 0)
        self.assertEqual(info.op, d["op"])
        self.assertEqual(info.backend, d["backend"])
        self.assertEqual(info.device, d["device"])
        self.assertEqual(info.impl, d["impl"])
        self.assertEqual(info.device_index, d["device_index"])
        self.assertEqual(info.seed, 5)
        self.assertEqual(info.cache, 1)  # MB_CACHE_HOT
        self.assertEqual(info.params.ndim, 3)
        self.assertEqual(info.params.shape[:3], [32, 16, 8])
        self.assertEqual(microbench._parse.dtype_name(info.params.dtype),
                         "bf16")
        self.assertEqual(microbench._parse.dtype_name(info.params.dtype_out),
                         "f32")
        self.assertSame(info.peak_memory_bytes, d["peak_memory_bytes"])
        s = d["stats"]
        self.assertEqual((stats.count, stats.batch), (s["count"], s["batch"]))
        for c_name, key in (("min", "min_ns"), ("max", "max_ns"),
                            ("mean", "mean_ns"), ("median", "median_ns"),
                            ("p10", "p10_ns"), ("p90", "p90_ns"),
                            ("iqr", "iqr_ns"), ("wall_s", "wall_s")):
            self.assertSame(getattr(stats, c_name), s[key], key)
        self.assertEqual(stats.stop_reason, s["stop_reason"])
        self.assertEqual(stats.warmup_runs, s["warmup_runs"])
        self.assertEqual(stats.repetitions, s["repetitions"])
        self.assertEqual(len(samples), len(d["samples_ns"]))
        for a, b in zip(samples, d["samples_ns"]):
            self.assertSame(a, b, "samples_ns")
        c = d["correctness"]
        self.assertEqual((bool(corr.checked), bool(corr.pass_)),
                         (c["checked"], c["pass"]))
        self.assertEqual(corr.elements_checked, c["elements_checked"])
        self.assertEqual(corr.elements_total, c["elements_total"])
        for c_name in ("max_abs_err", "max_rel_err", "max_err_ratio",
                       "tolerance"):
            self.assertSame(getattr(corr, c_name), c[c_name], c_name)
        if c["sqnr_db"] is None:  # exact: infinity in C
            self.assertTrue(math.isinf(corr.sqnr_db))
        else:
            self.assertSame(corr.sqnr_db, c["sqnr_db"], "sqnr_db")
        for c_name in ("flop", "bytes", "intensity", "tflops", "gbps",
                       "pct_peak", "bandwidth_gbps", "roof_ns", "pct_roof"):
            self.assertSame(getattr(der, c_name), d["derived"][c_name],
                             c_name)
        # Written in TFLOP/s: a unit converted there and back.
        self.assertTrue(math.isclose(der.peak_flops,
                                     d["derived"]["peak_tflops"] * 1e12,
                                     rel_tol=1e-15), "peak_flops")
        self.assertEqual(acc.checked, 0)  # not a model

    def test_model_accuracy_struct(self):
        with CTX._run_handle(model="linear", recipe="int8wo",
                             shape=(32, 64, 32), **QUICK) as (h, _):
            acc = self.read("mb_result_accuracy", _structs.Accuracy, h)
            info = self.read("mb_result_info", _structs.ResultInfo, h)
            r = microbench.Result._from_handle(h)
        a = r.accuracy
        self.assertEqual(bool(acc.pass_), a["pass"])
        self.assertSame(acc.sqnr_db, a["sqnr_db"], "sqnr_db")
        self.assertSame(acc.rel_err, a["rel_err"], "rel_err")
        self.assertSame(acc.min_sqnr_db, a["min_sqnr_db"], "min_sqnr_db")
        self.assertEqual(acc.elements_checked, a["elements_checked"])
        self.assertEqual(info.recipe, "int8wo")
        self.assertEqual(info.model, "linear")


class ReportTest(unittest.TestCase):
    def test_every_format_as_text(self):
        results = [GEMM, CTX.run(op="add", shape=(8, 8), **QUICK)]
        table = microbench.format_table(results, context=CTX)
        self.assertEqual(table, microbench.write_report(results,
                                                        format="table"))
        lines = table.splitlines()
        self.assertTrue(lines[0].startswith("op "))
        self.assertTrue(lines[1].startswith("gemm "))
        self.assertIn("64x32x16", lines[1])
        # Fitted: no line wider than asked, the constant backend above the
        # table, a column added by key.
        fitted = microbench.format_table(results, context=CTX, width=70,
                                         columns="+p90")
        self.assertTrue(all(len(l) <= 70 for l in fitted.splitlines()
                            if not l.startswith("  ")), fitted)
        self.assertIn("backend cpu", fitted.splitlines()[0])
        self.assertIn("p90", fitted)
        with self.assertRaisesRegex(microbench.Error, "unknown table column"):
            microbench.format_table(results, context=CTX, columns="nope")

        doc = json.loads(microbench.write_report(results, format="json"))
        self.assertEqual(doc["schema"], "microbench.results/1")
        self.assertEqual([r["op"] for r in doc["results"]], ["gemm", "add"])
        self.assertEqual(doc["results"][0]["samples_ns"], GEMM.samples)
        self.assertTrue(doc["devices"])

        rows = list(csv.DictReader(io.StringIO(
            microbench.write_report(results, format="csv"))))
        self.assertEqual([r["op"] for r in rows], ["gemm", "add"])
        self.assertEqual(rows[0]["correct"], "true")
        self.assertEqual(float(rows[0]["median_ns"]), GEMM.median_ns)

        md = microbench.write_report(results, format="md")
        self.assertIn("| gemm", md)
        md2 = microbench.write_report(results, format="markdown")
        self.assertEqual(md.count("| gemm"), md2.count("| gemm"))

        records = json.loads(microbench.write_report(results, format="ossdb"))
        self.assertIn("time_ms", {r["metric"]["name"] for r in records})

    def test_single_result_and_unknown_format(self):
        self.assertIn("gemm", microbench.write_report(GEMM))
        with self.assertRaises(microbench.Error) as cm:
            microbench.write_report(GEMM, format="xml")
        self.assertIn("csv", str(cm.exception))  # lists the valid formats
        self.assertIn("format", str(cm.exception))

    def test_file_and_load_results(self):
        results = microbench.ResultList(
            [GEMM, CTX.run(op="copy", shape=(8, 8), **QUICK)])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.json")
            self.assertIsNone(microbench.write_report(results, path,
                                                      format="json"))
            self.assertFalse(os.path.exists(path + "l"))  # stream removed
            loaded = microbench.load_results(path)
            self.assertIsInstance(loaded, microbench.ResultList)
            self.assertEqual(loaded, results)
            self.assertEqual(loaded[0].samples, GEMM.samples)
            self.assertEqual(loaded.notes, [])
            with self.assertRaises(microbench.Error) as cm:
                microbench.load_results(os.path.join(tmp, "missing.json"))
            self.assertIn("missing.json", str(cm.exception))
            # A stream whose last line is cut: read, and the cut is said.
            doc = json.loads(open(path).read())
            head = {k: v for k, v in doc.items() if k != "results"}
            line = json.dumps(doc["results"][0])
            died = os.path.join(tmp, "died.jsonl")
            with open(died, "w") as f:
                f.write(json.dumps(head) + "\n" + line + "\n" + line[:50])
            loaded = microbench.load_results(died)
            self.assertEqual(len(loaded), 1)
            self.assertEqual(len(loaded.notes), 1)
            self.assertIn(died + ":3: the last line is cut short",
                          loaded.notes[0])

    def test_result_list_conversions(self):
        results = microbench.ResultList([GEMM])
        self.assertEqual(results.to_dicts(), [GEMM.to_dict()])
        self.assertEqual(json.loads(results.to_json()), [GEMM.to_dict()])
        # Every field (test_dataframe.py checks them all).
        rec = results.to_records()[0]
        self.assertEqual((rec["id"], rec["op"], rec["shape"], rec["dtype"],
                          rec["check"]),
                         (GEMM.id, "gemm", "64x32x16", "f32", "pass"))
        self.assertEqual(rec["stats.median_ns"], GEMM.median_ns)
        self.assertEqual(rec["samples_ns"], GEMM.samples)
        # A Result's own row is the table's (name, ..., check).
        row = GEMM.to_record()
        self.assertEqual(set(row), {"name", "op", "shape", "dtype", "backend",
                                    "impl", "cache", "status", "median_ns",
                                    "gflops", "gbps", "pct_peak", "pct_roof",
                                    "check"})
        self.assertEqual((row["shape"], row["check"]), ("64x32x16", "pass"))
        self.assertEqual(row["median_ns"], GEMM.median_ns)
        self.assertIn("64x32x16", results.table(context=CTX))
        self.assertTrue(results.ok)

    def test_to_dataframe(self):
        results = microbench.ResultList([GEMM])
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(microbench.Error) as cm:
                results.to_dataframe()
            self.assertIn("pip install pandas", str(cm.exception))
        else:
            df = results.to_dataframe()
            self.assertEqual(list(df["op"]), ["gemm"])


class ErrorTest(unittest.TestCase):
    def assertError(self, status, words, **kwargs):
        with self.assertRaises(microbench.Error) as cm:
            CTX.run(**kwargs)
        e = cm.exception
        self.assertEqual(e.status, status, str(e))
        for w in words:
            self.assertIn(w, str(e))
        return e

    def test_unknown_names_list_the_valid_ones(self):
        self.assertError("MB_ERR_NOT_FOUND", ["op:", "gemmm", "gemm, "],
                         op="gemmm", shape=(4, 4, 4))
        self.assertError("MB_ERR_INVALID_ARG", ["dtype:", "f33", "bf16"],
                         op="gemm", shape=(4, 4, 4), dtype="f33")
        self.assertError("MB_ERR_INVALID_ARG", ["out_dtype:", "bf16"],
                         op="gemm", shape=(4, 4, 4), out_dtype="f64")
        self.assertError("MB_ERR_NOT_FOUND", ["recipe:", "int8dq"],
                         op="linear", shape=(4, 4, 4), recipe="int9")
        self.assertError("MB_ERR_NOT_FOUND", ["backend", "nope", "cpu"],
                         op="gemm", shape=(4, 4, 4), backend="nope")
        self.assertError("MB_ERR_INVALID_ARG", ["scale_b:", "group:G"],
                         op="gemm", shape=(4, 4, 4), scale_b="diagonal")
        self.assertError("MB_ERR_INVALID_ARG", ["granularity:", "block"],
                         op="quantize", shape=(4, 4), granularity="x")
        self.assertError("MB_ERR_INVALID_ARG", ["cache:", "rotate"],
                         op="add", shape=(4, 4), cache="warm")
        self.assertError("MB_ERR_INVALID_ARG", ["criterion:", "entropy"],
                         op="add", shape=(4, 4), criterion="vibes")
        self.assertError("MB_ERR_INVALID_ARG", ["activation:", "silu"],
                         op="activation", shape=(4, 4), activation="tanh")
        self.assertError("MB_ERR_NOT_FOUND", ["model=", "linear"],
                         model="lienar", shape=(4, 4, 4))

    def test_bad_problems(self):
        self.assertError("MB_ERR_INVALID_ARG", ["needs 3", "MxKxN"],
                         op="gemm", shape=(4, 4))
        self.assertError("MB_ERR_INVALID_ARG", ["shape", "positive"],
                         op="gemm", shape=(4, 0, 4))
        self.assertError("MB_ERR_INVALID_ARG", ["shape", "positive"],
                         op="gemm", shape="4x4xq")
        self.assertError("MB_ERR_INVALID_ARG", ["shape is required"],
                         op="gemm")
        self.assertError("MB_ERR_INVALID_ARG", ["op or model"],
                         shape=(4, 4))
        self.assertError("MB_ERR_INVALID_ARG", ["both given"],
                         op="gemm", model="linear", shape=(4, 4, 4))
        self.assertError("MB_ERR_INVALID_ARG", ["mode goes with model"],
                         op="linear", mode="training", shape=(4, 4, 4))
        self.assertError("MB_ERR_INVALID_ARG", ["samples=N"],
                         op="add", shape=(4, 4), criterion="fixed")
        self.assertError("MB_ERR_INVALID_ARG",
                         ["samples=N is for criterion=\"fixed\"", "entropy"],
                         op="add", shape=(4, 4), criterion="entropy",
                         samples=5)
        self.assertError("MB_ERR_INVALID_ARG", ["granularity", "differ"],
                         op="quantize", shape=(4, 4), scale_a="row",
                         granularity="col")
        self.assertError("MB_ERR_UNSUPPORTED", ["training"],
                         model="ln_linear_gelu", mode="training",
                         shape=(4, 4, 4))

    def test_unknown_keyword_is_a_type_error(self):
        with self.assertRaises(TypeError):
            CTX.run(op="add", shape=(4, 4), colour="blue")
        # ... and an Error that names it, the closest keywords and the
        # valid ones (it named an internal function).
        with self.assertRaises(microbench.Error) as cm:
            CTX.run(op="add", shape=(4, 4), sampels=3)
        self.assertIn("run() got an unknown keyword 'sampels'; did you mean "
                      "'samples'", str(cm.exception))
        self.assertIn("valid: acc_dtype", str(cm.exception))
        with self.assertRaises(microbench.Error) as cm:
            CTX.run_config("x.yaml", sampels=3)
        self.assertIn("run_config() got an unknown keyword 'sampels'",
                      str(cm.exception))

    def test_numbers_checked_before_the_library(self):
        # ctypes wrapped samples=-3 to 4294967293 (a run that never ends),
        # device=2**40 to device 0, seed=-1 to 2**64 - 1.
        for kw, words in (
                ({"samples": -3}, "samples=-3 is out of range; valid: 1 to"),
                ({"device": 2**40}, "device=1099511627776 is out of range"),
                ({"seed": -1}, "seed=-1 is out of range; valid: 0 to"),
                ({"samples": "3"}, "samples='3': expected an integer, got "
                                   "str"),
                ({"samples": True}, "expected an integer, got bool"),
                ({"timeout": 0}, "timeout=0 is out of range; valid: > 0"),
                ({"min_time": float("nan")}, "expected a finite number"),
                ({"eps": -1.0}, "eps=-1.0 is out of range")):
            with self.assertRaises(microbench.Error) as cm:
                CTX.run(op="add", shape=(4, 4), **kw)
            self.assertIn(words, str(cm.exception))
            self.assertEqual(cm.exception.status, "MB_ERR_INVALID_ARG")
        with self.assertRaises(microbench.Error) as cm:
            CTX.run_config("x.yaml", timeout=-1)
        self.assertIn("timeout=-1 is out of range", str(cm.exception))
        # In range: the largest seed, a negative slope.
        r = CTX.run(op="add", shape=(4, 4), samples=2, seed=2**64 - 1,
                    act_alpha=-0.5)
        self.assertTrue(r.ok)

    def test_error_attributes(self):
        e = microbench.Error("boom", -2)
        self.assertEqual((e.status, e.code, str(e)),
                         ("MB_ERR_NOT_FOUND", -2, "boom"))
        self.assertIsInstance(e, Exception)

    def test_a_run_that_cannot_happen_is_a_result(self):
        # No kernel for the dtype: skipped, with the reason; not an
        # exception. It still round-trips and reports.
        r = CTX.run(op="gemm", shape=(8, 8, 8), dtype="f16", **QUICK)
        self.assertEqual(r.status, "skipped")
        self.assertIn("no gemm kernel", r.reason)
        self.assertFalse(r.ok)
        self.assertFalse(r.passed)
        self.assertIsNone(r.gflops)
        self.assertEqual(r.samples, [])
        self.assertEqual(r.to_record()["check"], "skipped")
        self.assertIn("skipped", repr(r))
        self.assertEqual(microbench.Result.from_json(r.to_json()), r)
        self.assertIn("no gemm kernel",
                      microbench.format_table([r], context=CTX))


if __name__ == "__main__":
    unittest.main()
