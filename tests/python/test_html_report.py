"""microbench.report(): the HTML report (mb_report_html) of result files
and of Results in memory, one run or two compared, a chart alone as SVG,
and the errors."""
import os
import re
import tempfile
import unittest

import microbench

import mbsupport

QUICK = mbsupport.QUICK

MODEL_YAML = mbsupport.MODEL_YAML


def setUpModule():
    global CTX, TMP, RUN, OTHER, RUN_FILE
    CTX = mbsupport.module_context()
    TMP = tempfile.TemporaryDirectory()
    yaml = os.path.join(TMP.name, "lin.yaml")
    with open(yaml, "w") as f:
        f.write(MODEL_YAML)
    RUN = microbench.ResultList(
        [CTX.run(op="gemm", shape=(16, 8, 4), dtype="f32", **QUICK),
         CTX.run(op="add", shape=(8, 8), **QUICK)] +
        list(CTX.run_config(yaml)))
    OTHER = microbench.ResultList(
        CTX.run(op="gemm", shape=(16, 8, 4), dtype="f32", **QUICK)
        for _ in range(1))
    RUN_FILE = os.path.join(TMP.name, "run.json")
    microbench.write_report(RUN, RUN_FILE, format="json", context=CTX)


def tearDownModule():
    CTX.close()
    TMP.cleanup()


def out(name):
    return os.path.join(TMP.name, name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def on_the_roofline(results):
    """The ids the DOM contract puts on a roofline: ok, with an intensity
    and FLOPs."""
    return sorted(r.id for r in results
                  if r.ok and (r.flop or 0) > 0 and
                  r.derived.get("intensity") is not None)


def points(html):
    """The data-id of every roofline point (`<circle class="mb-point"`)."""
    circles = re.findall(r'<circle class="mb-point"[^>]*>', html)
    ids = [re.search(r' data-id="([^"]*)"', c) for c in circles]
    return sorted(m.group(1) if m else "" for m in ids)


def compare_rows(html):
    """{row id: verdict} of the comparison's table."""
    start = html.index('<table id="mb-compare-table"')
    table = html[start:html.index("</table>", start)]
    return dict(re.findall(r'<tr data-id="([^"]*)">.*?'
                           r'<td class="mb-verdict">([A-Z]+)</td>', table))


class ReportTest(unittest.TestCase):
    def test_results_in_memory(self):
        self.assertIsNone(microbench.report(RUN, out("mem.html"),
                                            context=CTX))
        html = read(out("mem.html"))
        self.assertIn("<html", html)
        expected = on_the_roofline(RUN)
        self.assertGreaterEqual(len(expected), 3)  # gemm, add, the model
        self.assertEqual(points(html), expected)
        self.assertIn('class="mb-roofline"', html)
        self.assertIn('class="mb-heatmap"', html)  # the recipe's speedup
        for r in RUN:
            self.assertIn('<tr data-id="%s"' % r.id, html)
        self.assertNotIn('id="mb-compare-table"', html)

    def test_a_results_file_and_a_title(self):
        microbench.report(RUN_FILE, out("file.html"), title="Tiny & CPU")
        html = read(out("file.html"))
        self.assertEqual(points(html), on_the_roofline(RUN))
        self.assertIn("Tiny &amp; CPU", html)

    def test_one_result_and_lists(self):
        microbench.report(RUN[0], out("one.html"), context=CTX)
        self.assertEqual(points(read(out("one.html"))), [RUN[0].id])
        # A ResultList is one run, not a run per Result.
        microbench.report(microbench.ResultList(RUN[:2]), out("rl.html"),
                          context=CTX)
        html = read(out("rl.html"))
        self.assertEqual(points(html), on_the_roofline(RUN[:2]))
        self.assertNotIn('id="mb-compare-table"', html)
        # Inside a list, a plain list of Results is one run.
        microbench.report([list(RUN[:2])], out("list.html"), context=CTX)
        html = read(out("list.html"))
        self.assertEqual(points(html), on_the_roofline(RUN[:2]))
        self.assertNotIn('id="mb-compare-table"', html)
        # A list of two Results is two runs, compared.
        microbench.report((RUN[0], OTHER[0]), out("two.html"), context=CTX)
        self.assertEqual(set(compare_rows(read(out("two.html")))),
                         {RUN[0].id})

    def test_two_runs_are_compared(self):
        microbench.report([RUN_FILE, OTHER], out("cmp.html"), context=CTX)
        html = read(out("cmp.html"))
        self.assertIn('id="mb-compare-table"', html)
        self.assertIn('id="mb-geomean"', html)
        self.assertIn('<tr data-id="%s"' % OTHER[0].id, html)
        # With the comparison's options.
        microbench.report([RUN, OTHER], out("cmp2.html"), threshold_pct=10,
                          alpha=0.01, by="problem", context=CTX)
        self.assertIn('id="mb-compare-table"', read(out("cmp2.html")))

    def test_the_comparison_options_reach_the_comparison(self):
        # A run and a copy of it 1.5x slower in every sample: with 20
        # samples each, wholly apart, the test's p is 2/C(40, 20) = 1.5e-11
        # (exact), whatever the machine did.
        base = CTX.run(op="gemm", shape=(16, 8, 4), dtype="f32",
                       samples=20, warmup=0.0, warmup_runs=1)
        self.assertEqual(len(base.samples), 20)
        data = base.to_dict()
        data["samples_ns"] = [s * 1.5 for s in data["samples_ns"]]
        for key in ("min_ns", "max_ns", "mean_ns", "median_ns"):
            data["stats"][key] *= 1.5
        slow = microbench.Result(data)

        def verdicts(**options):
            path = out("verdict.html")
            microbench.report([base, slow], path, context=CTX, **options)
            return compare_rows(read(path))

        self.assertEqual(verdicts(), {base.id: "SLOWER"})
        self.assertEqual(verdicts(threshold_pct=60), {base.id: "SAME"})
        self.assertEqual(verdicts(alpha=1e-12), {base.id: "NOISY"})
        # Another impl of the same problem: by id they do not match, by
        # problem they do (the row's key is the problem).
        data["id"] = base.id.replace("/onednn/", "/other/")
        data["impl"] = "other"
        other = microbench.Result(data)
        path = out("by.html")
        microbench.report([base, other], path, context=CTX)
        self.assertEqual(compare_rows(read(path)),
                         {base.id: "MISSING", other.id: "NEW"})
        microbench.report([base, other], path, by="problem", context=CTX)
        self.assertEqual(compare_rows(read(path)), {base.problem: "SLOWER"})

    def test_a_chart_alone_as_svg(self):
        microbench.report(RUN, out("roof.svg"), plot="roofline",
                          context=CTX)
        svg = read(out("roof.svg"))
        self.assertTrue(svg.startswith("<?xml"), svg[:80])
        self.assertIn("<svg", svg)
        self.assertNotIn("<html", svg)
        self.assertEqual(points(svg), on_the_roofline(RUN))

    def test_bad_plot_names_the_valid_ones(self):
        target = out("kept.html")
        with open(target, "w") as f:
            f.write("before")
        with self.assertRaises(microbench.Error) as cm:
            microbench.report(RUN_FILE, target, plot="rooflin")
        text = str(cm.exception)
        for word in ("rooflin", "roofline", "heatmap", "shapes", "compare"):
            self.assertIn(word, text)
        self.assertEqual(read(target), "before")  # never destroyed

    def test_bad_arguments(self):
        cases = [
            (dict(inputs=[]), ["no inputs"]),
            (dict(inputs=[RUN_FILE, 42]), ["input 1", "42"]),
            (dict(inputs=42), ["inputs", "42"]),
            (dict(inputs=out("missing.json")), ["missing.json"]),
            (dict(inputs=[RUN, OTHER], by="device"),
             ["by", "device", "id, problem"]),
            (dict(inputs=[RUN, OTHER], alpha=2), ["alpha", "(0, 1]"]),
            (dict(inputs=[RUN, OTHER], threshold_pct=-1),
             ["threshold_pct", ">= 0"]),
            (dict(inputs=RUN, title=5), ["title"]),
        ]
        for kwargs, words in cases:
            if os.path.exists(out("bad.html")):  # a case before failed
                os.remove(out("bad.html"))
            with self.subTest(kwargs=kwargs):
                inputs = kwargs.pop("inputs")
                with self.assertRaises(microbench.Error) as cm:
                    microbench.report(inputs, out("bad.html"), context=CTX,
                                      **kwargs)
                for w in words:
                    self.assertIn(w, str(cm.exception))
                self.assertFalse(os.path.exists(out("bad.html")))


if __name__ == "__main__":
    unittest.main()
