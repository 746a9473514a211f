"""bench/cpu_roofs.py: the CPU roofs table (issue 26).

A synthetic result document checks the arithmetic (% of the copies
nearest each row, the in-cache rate beside it, the traffic ceiling from
bench/mem_shapes' rates, % of both bf16 peaks, the verdicts, torch's rate
and the ratio, the medians over rounds); the
in-cache plan is derived from
the real config; with MB_TEST_MBENCH set (ctest: bench_cpu_roofs) the
script runs the whole plan at --tiny shapes without torch, in two rounds,
and every row the issue asks for must be in its table with the % of copy
recomputed from the result documents it wrote.
"""
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import cpu_roofs  # noqa: E402
import torch_compare  # noqa: E402

# The rows the table must have (labels as cpu_roofs.label writes them).
REQUIRED_MEMORY = [
    "copy", "copy, again after the others", "add",
    *["quantize → %s, %s" % (q, g) for q in ("f8e4m3", "i8")
      for g in ("tensor", "row", "col", "block 128x128", "group 128")],
    "quantize → f8e4m3, row, transposed", "quantize → i8, row, transposed",
    "quantize → f8e4m3, tensor, static", "quantize → i8, tensor, static",
    "quantize → i4, row", "quantize → i4, group 128",
    "dequantize f8e4m3 → bf16, row", "dequantize i8 → bf16, row",
    "dequantize i4 → bf16, group 128",
    "layernorm", "rmsnorm", "softmax",
    "activation gelu_erf", "activation gelu_tanh", "activation silu",
    "activation relu", "silu_mul",
]
REQUIRED_COMPUTE = ["attention", "attention, causal",
                    "int4 weight-only GEMM (bf16 x i4)", "linear int8wo (weight-only)"]


def tables(text):
    """{header tuple: [row cells]} of the markdown tables in text."""
    out, cur = {}, None
    for line in text.splitlines():
        if not line.startswith("|"):
            cur = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cur is None:
            cur = out.setdefault(tuple(cells), [])
        elif not set(line) <= set("|-: "):
            cur.append(cells)
    return out


def result(rid, op, gbps=None, tflops=None, peak=None, check=True, **kw):
    r = {"id": rid, "name": rid, "op": op, "status": "ok",
         "dtypes": kw.pop("dtypes", {"a": "bf16", "out": "bf16"}),
         "params": kw.pop("params", {}),
         "stats": {"median_ns": 1000.0},
         "derived": {"gbps": gbps, "tflops": tflops, "bytes": (gbps or 0) * 1000.0,
                     "flop": (tflops or 0) * 1e6},
         "correctness": {"checked": True, "pass": check}}
    if peak:
        r["derived"]["peak_tflops"] = peak
    r.update(kw)
    return r


COPY = "copy/8192x8192/bf16"


def nearest_copies(results):
    """{name: the copy GB/s a row is judged against}, computed here as the
    script's docs say: the mean of the copies just before and after it in
    plan order; a copy's, the median of the round's copies."""
    copies = [(i, r["derived"]["gbps"]) for i, r in enumerate(results) if r["op"] == "copy"]
    out = {}
    for i, r in enumerate(results):
        near = [g for j, g in copies if j < i][-1:] + [g for j, g in copies if j > i][:1]
        out[r["name"]] = statistics.median(g for _, g in copies) if r["op"] == "copy" \
            else statistics.mean(near)
    return out


class Arithmetic(unittest.TestCase):
    def doc(self):
        results = [
            result("c", "copy", gbps=40.0, name=COPY),
            result("q", "quantize", gbps=30.0, dtypes={"a": "bf16", "out": "f8e4m3"},
                   params={"scale_a": {"mode": "row"}}),
            result("s", "softmax", gbps=36.0, check=False),
            result("a", "attention", tflops=0.1, peak=0.2, params={"causal": True}),
            result("w", "gemm", tflops=0.7, dtypes={"a": "bf16", "b": "i4", "out": "bf16"},
                   params={"scale_b": {"mode": "group", "block": [128, 1]}}),
        ]
        dev = {"kind": "cpu", "name": "Test CPU", "compute_units": 2,
               "peak_flops": {"bf16": 1e12},
               "peak_source": "measured: bf16 amx_bf16 tdpbf16ps (avx512_bf16 vdpbf16ps 200 G)"}
        return {"results": results, "devices": [dev]}

    def test_percentages_and_verdicts(self):
        torch_doc = {"torch": {"available": True, "version": "x", "threads": 2},
                     "entries": [{"id": "q", "status": "ok", "stats": {"median_ns": 2000.0}},
                                 {"id": "s", "status": "n/a", "reason": "no mirror"}]}
        # The in-cache run: the same quantize at 20 GB/s (matched by its
        # row, not its id), and a failed softmax (no rate).
        cached = [result("q-small", "quantize", gbps=20.0,
                         dtypes={"a": "bf16", "out": "f8e4m3"},
                         params={"scale_a": {"mode": "row"}}),
                  dict(result("s-small", "softmax", gbps=99.0), status="error")]
        text = cpu_roofs.render(self.doc(), torch_doc, {"commands": ["x"]}, cached)
        t = tables(text)
        mem = {r[0]: r for r in t[tuple(cpu_roofs.MEMORY_HEADER)]}
        comp = {r[0]: r for r in t[tuple(cpu_roofs.COMPUTE_HEADER)]}
        self.assertEqual(mem["copy"][1:6], ["40.0", "100.0", "-", "-", "-"])
        # 30 / 40 = 75 %: under 85 %; in cache 20 GB/s, 50 % of copy.
        q = mem["quantize → f8e4m3, row"]
        # (no mem_shapes output: no traffic ceiling); 50 % in cache too:
        # the arithmetic is the bound.
        self.assertEqual(q[1:11], ["30.0", "75.0", "-", "20.0", "50.0", "-", "≥ 85 %",
                                   "FAIL", "arithmetic", "pass"])
        # torch: 30e3 bytes in 2000 ns = 15 GB/s; ours / torch = 2.
        self.assertEqual(q[11:], ["15.0", "2.00"])
        s = mem["softmax"]
        self.assertEqual(s[1:11], ["36.0", "90.0", "-", "-", "-", "-", "≥ 85 %", "pass", "-",
                                   "FAIL"])
        self.assertIn("Traffic ceiling: not measured", text)
        self.assertIn("GB/s in cache: the same op on 128 rows", text)
        self.assertIn("(same run)", text)
        self.assertIn("softmax: torch n/a: no mirror", text)
        # attention: 100 GFLOP/s of a 200 G vector peak (its own roof), of 1 T.
        a = comp["attention, causal"]
        self.assertEqual(a[1:6], ["100.0", "50.0", "10.0", "≥ 50 %", "pass"])
        w = comp["int4 weight-only GEMM (bf16 x i4)"]
        self.assertEqual(w[1:6], ["700.0", "350.0", "70.0", "≥ 70 %", "pass"])
        self.assertIn("copy in this run: 40.0 GB/s", text)

    def test_traffic_ceilings(self):
        """Each row's ceiling from mem_shapes' rates: its own mix of reads
        and writes as a share of copy's; X read twice for dynamic tensor,
        column and transposed quantization."""
        shapes_md = "\n".join([
            "| traffic | like | GB/s | of copy |", "|---|---|---:|---:|",
            "| read only | an absmax pass | 30.0 | 75 % |",
            "| write only | - | 50.0 | 125 % |",
            "| copy 1 : 1 | copy | 40.0 | 100 % |",
            "| widen 1 -> 2 | dequantize | 36.0 | 90 % |",
            "| widen 1 -> 4 | dequantize i4 | 32.0 | 80 % |",
            "| narrow 2 -> 1 | quantize | 38.0 | 95 % |",
            "| two reads : one write | add | 34.0 | 85 % |", "", "Two passes ..."])
        q = {"a": "bf16", "out": "i8"}
        results = [
            result("c", "copy", gbps=40.0, name=COPY),
            result("row", "quantize", gbps=30.0, dtypes=q, params={"scale_a": {"mode": "row"}}),
            result("t", "quantize", gbps=20.0, dtypes=q, params={"scale_a": {"mode": "tensor"}}),
            result("st", "quantize", gbps=30.0, dtypes=q,
                   params={"scale_a": {"mode": "tensor"}, "static": True}),
            result("tr", "quantize", gbps=10.0, dtypes=q,
                   params={"scale_a": {"mode": "row"}, "transpose": True}),
            result("i4", "quantize", gbps=10.0, dtypes={"a": "bf16", "out": "i4"},
                   params={"scale_a": {"mode": "col"}}),
            result("d", "dequantize", gbps=30.0, dtypes={"a": "i8", "out": "bf16"},
                   params={"scale_a": {"mode": "row"}}),
            result("d4", "dequantize", gbps=30.0, dtypes={"a": "i4", "out": "bf16"},
                   params={"scale_a": {"mode": "group", "block": [1, 128]}}),
            result("add", "add", gbps=30.0), result("sm", "softmax", gbps=30.0),
            result("sw", "silu_mul", gbps=30.0),
        ]
        text = cpu_roofs.render({"results": results, "devices": []}, None,
                                {"commands": ["x"]}, None, (), shapes_md)
        mem = {r[0]: r[6] for r in tables(text)[tuple(cpu_roofs.MEMORY_HEADER)]}
        self.assertEqual(mem["copy"], "-")
        self.assertEqual(mem["quantize → i8, row"], "95.0 (narrow)")
        self.assertEqual(mem["quantize → i8, tensor, static"], "95.0 (narrow)")
        # 3 bytes an element counted, 2 / 30 + 3 / 38 ns moved: 20.6 GB/s.
        twice = 100 * 3 / (2 / 30 + 3 / 38) / 40
        self.assertEqual(mem["quantize → i8, tensor"], "%.1f (X read twice)" % twice)
        self.assertEqual(mem["quantize → i8, row, transposed"], "%.1f (X read twice)" % twice)
        i4 = 100 * 2.5 / (2 / 30 + 2.5 / 38) / 40  # half a byte a code
        self.assertEqual(mem["quantize → i4, col"], "%.1f (X read twice)" % i4)
        self.assertEqual(mem["dequantize i8 → bf16, row"], "90.0 (widen)")
        self.assertEqual(mem["dequantize i4 → bf16, group 128"], "80.0 (widen 1 -> 4)")
        self.assertEqual(mem["add"], "85.0 (2 reads : 1 write)")
        self.assertEqual(mem["silu_mul"], "85.0 (2 reads : 1 write)")
        self.assertEqual(mem["softmax"], "100.0 (copy's)")
        self.assertIn("Traffic ceiling: the share of copy's rate", text)
        self.assertIn("read only 30.0 GB/s", text)

    def test_bound_by(self):
        """A failing row names its bound: a traffic ceiling under the target
        first, then its in-cache share (under the target: arithmetic; at
        or over it: memory access); passing rows and copies have none; the
        line after the table counts them."""
        shapes_md = "\n".join([
            "| traffic | like | GB/s | of copy |", "|---|---|---:|---:|",
            "| read only | an absmax pass | 30.0 | 75 % |",
            "| copy 1 : 1 | copy | 40.0 | 100 % |",
            "| narrow 2 -> 1 | quantize | 38.0 | 95 % |"])
        q = {"a": "bf16", "out": "i8"}
        results = [
            result("c", "copy", gbps=40.0, name=COPY),
            result("row", "quantize", gbps=30.0, dtypes=q, params={"scale_a": {"mode": "row"}}),
            result("t", "quantize", gbps=30.0, dtypes=q, params={"scale_a": {"mode": "tensor"}}),
            result("sm", "softmax", gbps=20.0), result("add", "add", gbps=36.0),
            result("ln", "layernorm", gbps=30.0),
        ]
        cached = [result("row-s", "quantize", gbps=40.0, dtypes=q,
                         params={"scale_a": {"mode": "row"}}),
                  result("t-s", "quantize", gbps=10.0, dtypes=q,
                         params={"scale_a": {"mode": "tensor"}}),
                  result("sm-s", "softmax", gbps=30.0), result("add-s", "add", gbps=80.0)]
        text = cpu_roofs.render({"results": results, "devices": []}, None,
                                {"commands": ["x"]}, cached, (), shapes_md)
        ib = cpu_roofs.MEMORY_HEADER.index("bound by")
        mem = {r[0]: r[ib] for r in tables(text)[tuple(cpu_roofs.MEMORY_HEADER)]}
        self.assertEqual(mem["copy"], "-")
        # 75 % from memory, 100 % in cache, ceiling 95: memory access.
        self.assertEqual(mem["quantize → i8, row"], "memory access")
        # X read twice: a ceiling of 52 %, whatever its in-cache share (25 %).
        self.assertEqual(mem["quantize → i8, tensor"], "traffic ceiling")
        self.assertEqual(mem["softmax"], "arithmetic")  # 75 % in cache
        self.assertEqual(mem["add"], "-")  # 90 %: passes
        self.assertEqual(mem["layernorm"], "not known")  # not run in cache
        self.assertIn("Verdicts: 1 of 5 memory-bound rows pass; the 4 that fail are "
                      "bound by traffic ceiling (1), arithmetic (1), memory access (1), "
                      "not known (1).", text)
        results[1:] = [result("add", "add", gbps=36.0)]
        text = cpu_roofs.render({"results": results, "devices": []}, None, {}, cached)
        self.assertIn("Verdicts: all 1 memory-bound rows pass.", text)

    def test_nearest_copies_are_the_reference(self):
        """Each row against the mean of the copies just before and after
        it: a plan copy (40), quantize, copy_2 (20), softmax, copy_end (50)."""
        doc = self.doc()
        res = doc["results"]
        res.insert(2, result("copy_2/8192x8192/bf16", "copy", gbps=20.0))
        res.append(result("copy_end/8192x8192/bf16", "copy", gbps=50.0))
        text = cpu_roofs.render(doc, None, {})
        mem = {r[0]: r for r in tables(text)[tuple(cpu_roofs.MEMORY_HEADER)]}
        self.assertEqual(mem["quantize → f8e4m3, row"][2], "100.0")  # 30 of (40 + 20) / 2
        self.assertEqual(mem["softmax"][2], "102.9")  # 36 of (20 + 50) / 2
        # The copies: shares of their median, 40; no verdict.
        self.assertEqual(mem["copy"][1:3], ["40.0", "100.0"])
        self.assertEqual(mem["copy (copy_2)"][1:3], ["20.0", "50.0"])
        self.assertEqual(mem["copy, again after the others"][1:3], ["50.0", "125.0"])
        self.assertEqual(mem["copy (copy_2)"][7], "-")
        self.assertIn("copy in this run: 40.0 GB/s, the median of its 3 copies "
                      "(20.0-50.0 GB/s", text)

    def test_vector_peak_from_peak_source(self):
        doc = self.doc()
        doc["results"] = [r for r in doc["results"] if r["op"] != "attention"]
        self.assertEqual(cpu_roofs.peaks(doc["results"], doc["devices"]), (200e9, 1e12))

    def test_no_copy_no_verdict(self):
        doc = self.doc()
        doc["results"] = doc["results"][1:]
        t = tables(cpu_roofs.render(doc, None, {}))
        q = {r[0]: r for r in t[tuple(cpu_roofs.MEMORY_HEADER)]}["quantize → f8e4m3, row"]
        self.assertEqual(q[2], "-")
        self.assertEqual(q[8], "-")

    def test_rounds(self):
        """Each row is the median of its shares of its own round's copy;
        the compute rows are the whole plan's; a FAIL in any round shows."""
        doc = self.doc()  # round 1: copy 40, quantize 30 (75 %), softmax 36 (90 %)
        r2 = [result("c", "copy", gbps=20.0, name=COPY),  # a slow round: shares hold
              result("q", "quantize", gbps=17.0), result("s", "softmax", gbps=19.0)]
        r3 = [result("c", "copy", gbps=30.0, name=COPY),
              result("copy_end/x", "copy", gbps=32.0),  # the nearer copy: 32
              result("q", "quantize", gbps=16.0), result("s", "softmax", gbps=27.2)]
        r2[1]["correctness"]["pass"] = False
        text = cpu_roofs.render(doc, None, {}, None, [r2, r3])
        t = tables(text)
        mem = {r[0]: r for r in t[tuple(cpu_roofs.MEMORY_HEADER)]}
        q = mem["quantize → f8e4m3, row"]
        # 75, 85, 50 % (of 40, 20, 32): median 75; GB/s median of 30, 17, 16.
        self.assertEqual(q[1:4], ["17.0", "75.0", "75.0, 85.0, 50.0"])
        # 75 % under 85 (no in-cache run: bound not known); round 2's check
        self.assertEqual(q[8:11], ["FAIL", "not known", "FAIL"])
        s = mem["softmax"]  # 90, 95, 85 %: median 90
        self.assertEqual(s[1:4], ["27.2", "90.0", "90.0, 95.0, 85.0"])
        self.assertEqual(s[8:11], ["pass", "-", "FAIL"])  # round 1's softmax check failed
        # A copy: a share of its round's median copy (30 of 31 in round 3).
        self.assertEqual(mem["copy"][2:4], ["100.0", "100.0, 100.0, 96.8"])
        self.assertIn("copy in this run: 31.0 GB/s, the median of its 4 copies "
                      "(20.0-40.0 GB/s", text)
        self.assertIn("the median over 3 rounds", text)
        comp = {r[0]: r for r in t[tuple(cpu_roofs.COMPUTE_HEADER)]}
        self.assertEqual(comp["attention, causal"][1], "100.0")

    def test_rounds_option(self):
        self.assertEqual(cpu_roofs.parse_args([]).rounds, 1)
        self.assertEqual(cpu_roofs.parse_args(["--rounds", "3"]).rounds, 3)
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            cpu_roofs.parse_args(["--rounds", "0"])
        self.assertEqual(cpu_roofs.parse_args(["--results", "a.json", "b.json"]).results,
                         ["a.json", "b.json"])


class InCachePlan(unittest.TestCase):
    """The in-cache run's plan, derived from the real config."""

    def test_memory_entries_and_shape(self):
        with open(cpu_roofs.CONFIG, encoding="utf-8") as f:
            names = cpu_roofs.memory_entries(f.read())
        for n in ("copy", "add", "quantize", "quantize_t", "norm", "softmax", "act",
                  "act_exp", "copy_2", "copy_end"):
            self.assertIn(n, names)
        for n in ("attention", "gemm_int4wo", "linear_int8wo"):
            self.assertNotIn(n, names)
        with tempfile.TemporaryDirectory() as tmp:
            dst = os.path.join(tmp, "c.yaml")
            regex = cpu_roofs.in_cache_config(cpu_roofs.CONFIG, dst)
            with open(dst, encoding="utf-8") as f:
                text = f.read()
        self.assertIn("shapes: [[128, 8192]]", text)
        self.assertNotIn("[[8192, 8192]]", text)
        self.assertIn("[[1, 16, 4096, 4096, 128]]", text)  # the others as they were
        self.assertEqual(regex, "^(%s)/" % "|".join(names))


class TorchMirrors(unittest.TestCase):
    """bench/torch_compare.py's mirrors the table uses (no torch needed),
    and its --device: a CUDA index as before, or cpu."""

    def describe(self, op, a="bf16", out="bf16", **params):
        return torch_compare.describe({
            "op": op, "cache": "hot", "shape": {"M": 8, "N": 16},
            "dtypes": {"a": a, "out": out}, "params": params})

    def test_mirrors(self):
        self.assertEqual(self.describe("silu_mul")["kind"], "silu_mul")
        d = self.describe("dequantize", a="i8", scale_a={"mode": "row"})
        self.assertEqual((d["kind"], d["mode"]), ("dequantize", "row"))
        d = self.describe("quantize", out="i8", scale_a={"mode": "col"})
        self.assertEqual(d["mode"], "col")
        with self.assertRaises(torch_compare.NA):
            self.describe("quantize", out="i8", scale_a={"mode": "row"}, transpose=True)

    def test_device(self):
        self.assertEqual(torch_compare.parse_args(["r.json"]).device, 0)
        self.assertEqual(torch_compare.parse_args(["r.json", "--device", "1"]).device, 1)
        self.assertEqual(torch_compare.parse_args(["r.json", "--device", "cpu"]).device, "cpu")


@unittest.skipUnless(os.environ.get("MB_TEST_MBENCH"), "MB_TEST_MBENCH not set")
class TinyRun(unittest.TestCase):
    def test_tiny_plan(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, os.path.join(BENCH, "cpu_roofs.py"), "--tiny",
                 "--no-torch", "--samples", "2", "--mbench", os.environ["MB_TEST_MBENCH"],
                 "--out-dir", tmp, "--rounds", "2"], capture_output=True, text=True,
                timeout=280)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(os.path.join(tmp, "roofs.json"), encoding="utf-8") as f:
                doc = json.load(f)
            with open(os.path.join(tmp, "round2.json"), encoding="utf-8") as f:
                round2 = {r["name"]: r for r in json.load(f)["results"]}
            # The same tables again from the documents, running nothing.
            again = subprocess.run(
                [sys.executable, os.path.join(BENCH, "cpu_roofs.py"), "--results",
                 os.path.join(tmp, "roofs.json"), os.path.join(tmp, "round2.json"),
                 "--in-cache-json", os.path.join(tmp, "incache.json"),
                 "--mem-shapes-md", os.path.join(tmp, "mem_shapes.md")],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(again.returncode, 0, again.stderr)
            with open(os.path.join(tmp, "incache.json"), encoding="utf-8") as f:
                cached = json.load(f)["results"]
        text = out.stdout
        self.assertEqual(tables(again.stdout)[tuple(cpu_roofs.MEMORY_HEADER)],
                         tables(text)[tuple(cpu_roofs.MEMORY_HEADER)])
        for head in ("- machine:", "- date:", "- commit:", "- command: `python3 bench/cpu_roofs.py",
                     "- command: `", "- torch: not run (--no-torch)"):
            self.assertIn(head, text)
        t = tables(text)
        self.assertIn(tuple(cpu_roofs.MEMORY_HEADER), t)
        self.assertIn(tuple(cpu_roofs.COMPUTE_HEADER), t)
        mem = {r[0]: r for r in t[tuple(cpu_roofs.MEMORY_HEADER)]}
        comp = {r[0]: r for r in t[tuple(cpu_roofs.COMPUTE_HEADER)]}
        for name in REQUIRED_MEMORY:
            self.assertTrue(name in mem, "no row %r in the memory-bound table" % name)
        for name in REQUIRED_COMPUTE:
            self.assertTrue(name in comp, "no row %r in the compute table" % name)
        results = doc["results"]
        # Round 2 ran the memory-bound entries alone; each row is the
        # median (of two: the mean) over the rounds of its share of the
        # copies nearest it in that round.
        refs = [nearest_copies(rs) for rs in (results, list(round2.values()))]
        copy = statistics.median(r["derived"]["gbps"] for rs in (results, round2.values())
                                 for r in rs if r["op"] == "copy")
        self.assertGreater(copy, 0)
        checked = 0
        for r in results:
            row = mem.get(cpu_roofs.label(r))
            if row is None:
                continue
            again = round2[r["name"]]
            gs = [r["derived"]["gbps"], again["derived"]["gbps"]]
            shares = [100 * g / ref[r["name"]] for g, ref in zip(gs, refs)]
            share = statistics.median(shares)
            self.assertEqual(row[1], "%.1f" % statistics.median(gs), r["name"])
            self.assertEqual(row[2], "%.1f" % share, r["name"])
            self.assertEqual(row[3], ", ".join("%.1f" % v for v in shares), r["name"])
            self.assertEqual(row[10], "pass", r["name"])  # every kernel checks out
            if r["op"] != "copy":
                self.assertEqual(row[8], "pass" if share >= 85 else "FAIL")
                # the traffic ceiling, from mem_shapes beside mbench
                self.assertRegex(row[6], r"^[0-9]+\.[0-9] \(", r["name"])
            checked += 1
        self.assertEqual(len(round2), checked)  # the memory-bound entries alone
        # Every memory-bound row ran in cache too, at the in-cache shape.
        self.assertEqual(len(cached), checked)
        for c in cached:
            self.assertEqual(c["correctness"]["pass"], True, c["name"])
            row = mem[cpu_roofs.label(c)]
            self.assertEqual(row[4], "%.1f" % c["derived"]["gbps"], c["name"])
            self.assertEqual(row[5], "%.1f" % (100 * c["derived"]["gbps"] / copy), c["name"])
        self.assertGreaterEqual(checked, len(REQUIRED_MEMORY))
        for name in REQUIRED_COMPUTE:
            self.assertEqual(comp[name][6], "pass", name)  # (the compute table's check)
            self.assertNotEqual(comp[name][1], "-", name)


if __name__ == "__main__":
    unittest.main()
