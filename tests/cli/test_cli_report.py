"""mbench report end to end (issue 25): the HTML report of files the real
binary wrote (a roofline point per ok result with FLOPs, a table row per
result, nothing fetched), two files compared with their geometric mean,
--plot as a standalone SVG that parses as XML, PNG through the first
converter on PATH, and the errors bad input gets. Run by ctest with MBENCH
set."""
import copy
import json
import os
import re
import stat
import tempfile
import unittest
import xml.etree.ElementTree as ET

from test_cli import QUICK, mbench

SVG = "{http://www.w3.org/2000/svg}"


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.real = cls.path("real.json")
        for args, out in ((["--op", "gemm", "--shape", "32x32x32,48x48x48"],
                           cls.real),
                          (["--op", "add", "--shape", "64x64"],
                           cls.path("add.json"))):
            p = mbench("run", "--backend", "cpu", *args, "--cache", "hot",
                       *QUICK, "-o", out)
            if p.returncode != 0:
                raise RuntimeError("mbench run failed: " + p.stderr)
        with open(cls.real) as f:
            cls.doc = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.dir, name)

    def write(self, name, doc):
        with open(self.path(name), "w") as f:
            json.dump(doc, f)
        return self.path(name)

    def report(self, *args, rc=0, env=None):
        p = mbench("report", *args, env=env)
        self.assertEqual(p.returncode, rc, p.stderr)
        return p

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def test_html_report(self):
        self.report(self.real, self.path("add.json"), "-o",
                    self.path("r.html"), "--title", "two <runs>")
        html = self.read("r.html")
        with open(self.path("add.json")) as f:
            docs = [self.doc, json.load(f)]
        results = [r for d in docs for r in d["results"]]
        on_roof = [r for r in results if r["status"] == "ok"
                   and r["derived"].get("flop", 0) > 0
                   and r["derived"].get("intensity")]
        self.assertEqual(len(on_roof), 3)
        self.assertEqual(html.count('class="mb-point"'), len(on_roof))
        table = html[html.index('<table id="mb-results"'):]
        self.assertEqual(table.count("<tr data-id="), len(results))
        for r in results:
            self.assertIn('data-id="%s"' % r["id"], html)
        for s in ("mb-meta", "mb-roofline", "mb-heatmap", "mb-shapes",
                  "mb-distributions", "mb-table"):
            self.assertIn('<section id="%s">' % s, html)
        self.assertIn("<title>two &lt;runs&gt;</title>", html)
        # Offline: nothing loaded from elsewhere.
        self.assertIsNone(re.search(r"<(script|link|img)[^>]*(src|href)=",
                                    html))
        self.assertEqual(re.findall(r"https?://[^\"' ]*", html),
                         ["http://www.w3.org/2000/svg"] *
                         len(re.findall(r"https?://", html)))

    def test_shapes_metric_and_merged_meta(self):
        # A streaming op (add: under one FLOP per byte) is charted in
        # bytes/s, a GEMM in FLOP/s even where it is too small to reach
        # any roof; a merged document shows each input's own time and
        # command.
        merged = self.path("merged.json")
        p = mbench("merge", self.real, self.path("add.json"), "-o", merged)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.report(merged, "-o", self.path("m.html"))
        html = self.read("m.html")
        charts = re.findall(r'<svg[^>]*class="mb-shapes"[^>]*data-op="(\w+)"'
                            r'.*?</svg>', html, re.S)
        self.assertEqual(sorted(charts), ["add", "gemm"])
        self.assertRegex(html, r'data-op="add".*?add: bytes/s by shape')
        self.assertRegex(html, r'data-op="gemm".*?gemm: FLOP/s by shape')
        with open(self.path("add.json")) as f:
            inputs = [self.doc, json.load(f)]
        self.assertEqual(html.count("<th>merged from</th>"), 2)
        for doc in inputs:
            self.assertIn("<td>%s</td>" % doc["meta"]["timestamp"], html)

    def test_two_runs_compared(self):
        half = copy.deepcopy(self.doc)
        for r in half["results"]:
            r["stats"]["median_ns"] *= 0.5
            r["samples_ns"] = [s * 0.5 for s in r["samples_ns"]]
        new = self.write("half.json", half)
        self.report(self.real, new, "-o", self.path("c.html"))
        html = self.read("c.html")
        self.assertIn('<b id="mb-geomean">0.500</b> over 2 ', html)
        table = html[html.index('<table id="mb-compare-table"'):]
        table = table[:table.index("</table>")]
        self.assertEqual(table.count("<tr data-id="), 2)
        self.report(self.real, new, "--plot", "compare", "-o",
                    self.path("c.svg"))
        root = ET.parse(self.path("c.svg")).getroot()
        self.assertEqual(len([e for e in root.iter(SVG + "rect")
                              if e.get("class") == "mb-bar"]), 2)

    def test_plot_is_standalone_svg(self):
        self.report(self.real, "--plot", "roofline", "-o",
                    self.path("roof.svg"))
        root = ET.parse(self.path("roof.svg")).getroot()
        self.assertEqual(root.tag, SVG + "svg")
        points = [e for e in root.iter(SVG + "circle")
                  if e.get("class") == "mb-point"]
        self.assertEqual(sorted(p.get("data-id") for p in points),
                         sorted(r["id"] for r in self.doc["results"]))
        labels = "".join(t.text or "" for t in root.iter(SVG + "text"))
        self.assertIn("f32 peak", labels)

    def fake_converter(self, name, script):
        bin_dir = self.path("bin-" + name)
        os.makedirs(bin_dir, exist_ok=True)
        exe = os.path.join(bin_dir, name)
        with open(exe, "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(exe, stat.S_IRWXU)
        return {"PATH": bin_dir + ":/usr/bin:/bin"}

    def test_png_through_a_converter(self):
        # rsvg-convert -f png -o OUT SVG: this one copies the SVG.
        env = self.fake_converter("rsvg-convert", 'cp "$5" "$4"\n')
        out = self.path("roof.png")
        self.report(self.real, "--plot", "roofline", "-o", out, env=env)
        with open(out) as f:
            self.assertTrue(f.read().startswith("<?xml"))
        self.assertEqual([n for n in os.listdir(self.dir)
                          if ".mbench-report-" in n], [])
        # A converter that fails: exit 2, nothing left behind.
        env = self.fake_converter("rsvg-convert", "exit 1\n")
        bad = self.path("bad.png")
        p = self.report(self.real, "--plot", "roofline", "-o", bad, rc=2,
                        env=env)
        self.assertIn("rsvg-convert could not convert", p.stderr)
        self.assertFalse(os.path.exists(bad))
        self.assertEqual([n for n in os.listdir(self.dir)
                          if ".mbench-report-" in n], [])

    def test_png_leaves_the_users_files(self):
        # The temporary SVG and PNG are in a directory of their own: a file
        # of the user's beside the output, named like the old temporaries,
        # is kept; a directory with '#' and '%' in its name converts
        # through chromium's file: URL (the fake takes the URL's path).
        env = self.fake_converter(
            "rsvg-convert", 'cp "$5" "$4"\n')
        keep = self.path("kept.png.tmp.svg")
        with open(keep, "w") as f:
            f.write("mine")
        out = self.path("kept.png")
        self.report(self.real, "--plot", "roofline", "-o", out, env=env)
        with open(keep) as f:
            self.assertEqual(f.read(), "mine")
        odd = self.path("a#b 50%")
        os.makedirs(odd, exist_ok=True)
        env = self.fake_converter(
            "chromium",
            'for a; do case "$a" in --screenshot=*) png=${a#--screenshot=};;'
            ' file://*) url=${a#file://};; esac; done\n'
            'svg=$(python3 -c "import sys, urllib.parse; '
            'print(urllib.parse.unquote(sys.argv[1]))" "$url")\n'
            'cp "$svg" "$png"\n')
        out = os.path.join(odd, "r.png")
        self.report(self.real, "--plot", "roofline", "-o", out, env=env)
        with open(out) as f:
            self.assertTrue(f.read().startswith("<?xml"))
        self.assertEqual(os.listdir(odd), ["r.png"])

    def test_png_without_a_converter(self):
        empty = self.path("empty-bin")
        os.makedirs(empty, exist_ok=True)
        out = self.path("none.png")
        p = self.report(self.real, "--plot", "roofline", "-o", out, rc=2,
                        env={"PATH": empty})
        self.assertIn("looked for rsvg-convert, chromium, convert",
                      p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_size_of_a_thousand_results(self):
        # Real samples (tests/data) for each of 1,000 results, some flagged:
        # a histogram is one path whatever the sample count, so the page
        # grows with results, not samples (docs/report.md has the figure
        # for 3,000 samples each).
        data = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "data", "cpu_add_2048_cold.txt")
        with open(data) as f:
            samples = [int(l) for l in f if l.strip()[:1].isdigit()][:500]
        doc = copy.deepcopy(self.doc)
        template = doc["results"]
        doc["results"] = []
        for i in range(1000):
            r = copy.deepcopy(template[i % len(template)])
            r["id"] += "/v%d" % i
            r["samples_ns"] = samples
            r["sample_flags"] = [int(s > 1500000) for s in samples]
            doc["results"].append(r)
        big = self.write("big.json", doc)
        self.report(big, "-o", self.path("big.html"))
        html = self.read("big.html")
        self.assertEqual(html.count('class="mb-dist"'), 1000)
        self.assertLess(len(html.encode()), 3 * 1024 * 1024)

    def test_errors(self):
        out = self.path("e.html")
        p = self.report(self.path("missing.json"), "-o", out, rc=2)
        self.assertIn("missing.json", p.stderr)
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write('{"schema": "microbench.results/1", "results": [')
        p = self.report(bad, "-o", out, rc=2)
        self.assertIn("bad.json", p.stderr)
        p = self.report(self.real, "--plot", "pie", "-o", out, rc=2)
        self.assertIn('"pie"', p.stderr)
        self.assertIn("roofline, heatmap, shapes, compare", p.stderr)
        p = self.report(self.real, rc=2)
        self.assertIn("-o OUT is required", p.stderr)
        p = self.report(self.real, "--plot", "compare", "-o", out, rc=2)
        self.assertIn("exactly two", p.stderr)
        p = self.report(self.real, self.path("add.json"), "--alpha", "7",
                        "-o", out, rc=2)
        self.assertIn("alpha 7", p.stderr)
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        for bad_in, bad_out in ((fifo, out), ("/dev/zero", out),
                                (self.real, "/dev/null")):
            p = self.report(bad_in, "-o", bad_out, rc=2)
            self.assertIn("is not a regular file", p.stderr)
        before = self.read("real.json")
        p = self.report(self.real, "-o", self.real, rc=2)
        self.assertIn("is also an input", p.stderr)
        self.assertEqual(self.read("real.json"), before)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
