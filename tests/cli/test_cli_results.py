"""mbench compare and mbench merge end to end, on a file the real binary
wrote and copies of it edited to known ratios. Run by ctest with MBENCH set."""
import copy
import json
import os
import subprocess
import tempfile
import unittest

MBENCH = os.environ.get("MBENCH", "mbench")


def mbench(*args):
    e = dict(os.environ)
    e.pop("MB_BACKEND_PATH", None)
    return subprocess.run([MBENCH, *args], capture_output=True, text=True,
                          env=e, timeout=600)


def scaled(doc, factor):
    """Every time in the document times `factor`: the medians, the other
    statistics in ns and each sample, so the relative noise is unchanged."""
    out = copy.deepcopy(doc)
    for r in out["results"]:
        for k, v in r["stats"].items():
            if k.endswith("_ns") and isinstance(v, (int, float)):
                r["stats"][k] = v * factor
        r["samples_ns"] = [s * factor for s in r["samples_ns"]]
    return out


def pinned(doc, noise):
    """The IQR set so the robust noise ((IQR / 1.349) / median) is `noise`,
    and the samples (as many as there were) spread evenly over median x
    (1 +- noise): the verdicts and p-values then depend on the ratio alone,
    not on how loaded the machine was while the base ran."""
    out = copy.deepcopy(doc)
    for r in out["results"]:
        s = r["stats"]
        s["iqr_ns"] = noise * 1.349 * s["median_ns"]
        s["rel_stdev"] = noise
        n = len(r["samples_ns"])
        r["samples_ns"] = [s["median_ns"] * (1 + noise * (2 * i / (n - 1) - 1))
                           for i in range(n)]
    return out


class CompareAndMerge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.real = os.path.join(cls.dir, "real.json")
        p = mbench("run", "--op", "add", "--shape", "256x256", "--samples",
                   "5", "-o", cls.real)
        if p.returncode != 0:
            raise RuntimeError("mbench run failed: " + p.stderr)
        with open(cls.real) as f:
            cls.doc = json.load(f)
        (r,) = cls.doc["results"]
        if r["status"] != "ok" or r["stats"]["count"] != 5:
            raise RuntimeError("unexpected base result: %r" % r)
        cls.base = cls.write("base.json", pinned(cls.doc, 0.01))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def write(cls, name, doc):
        path = os.path.join(cls.dir, name)
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
        return path

    def new_file(self, name, factor, edit=None, noise=0.01):
        doc = scaled(pinned(self.doc, noise), factor)
        if edit:
            edit(doc["results"][0])
        return self.write(name, doc)

    def compare(self, *args, rc):
        p = mbench("compare", *args)
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        return p

    def test_slower_is_a_regression(self):
        new = self.new_file("slower.json", 1.5)
        p = self.compare(self.base, new, rc=1)
        self.assertIn("SLOWER", p.stdout)
        self.assertIn("1.500", p.stdout)
        self.assertIn("±1.4%", p.stdout)
        self.assertRegex(p.stdout.splitlines()[0], r"ratio\s+noise\s+p\s+verdict")
        # 5 samples a side, apart: the exact p is 2 / C(10, 5).
        self.assertRegex(p.stdout, r"\b0\.008\s+SLOWER")
        self.assertIn("1 compared: 0 faster, 1 slower, 0 same", p.stdout)
        self.assertIn("geomean ratio new/base: 1.500 over 1 result timed in "
                      "both", p.stdout)
        # Stricter than the evidence 5 samples can give: not decided.
        p = self.compare(self.base, new, "--alpha", "0.001", rc=0)
        self.assertIn("NOISY", p.stdout)
        # A threshold above the change lets it through.
        p = self.compare(self.base, new, "--threshold", "60", rc=0)
        self.assertIn("SAME", p.stdout)

    def test_faster_and_same_pass(self):
        p = self.compare(self.base, self.new_file("faster.json", 0.5), rc=0)
        self.assertIn("FASTER", p.stdout)
        self.assertIn("0.500", p.stdout)
        self.assertIn("1 faster, 0 slower", p.stdout)
        p = self.compare(self.base, self.new_file("same.json", 1.01), rc=0)
        self.assertIn("SAME", p.stdout)
        self.assertIn("0 slower, 1 same", p.stdout)

    def test_real_file_against_itself(self):
        # No change at all: SAME with p = 1, however noisy the run was.
        p = self.compare(self.real, self.real, rc=0)
        self.assertRegex(p.stdout, r"\b1\.000\s+SAME\b")

    def test_failed_and_wrong_gate(self):
        def fail(r):
            r["status"] = "failed"
            r["reason"] = "kernel crashed"

        def wrong(r):
            r["correctness"]["pass"] = False

        for name, edit in (("failed.json", fail), ("wrong.json", wrong)):
            p = self.compare(self.base, self.new_file(name, 1.0, edit), rc=1)
            self.assertIn("FAILED", p.stdout)
            self.assertIn("1 failed", p.stdout)

    def test_json_format(self):
        new = self.new_file("slower_j.json", 1.5)
        p = self.compare(self.base, new, "--format", "json", rc=1)
        doc = json.loads(p.stdout)
        self.assertEqual((doc["threshold_pct"], doc["by"], doc["regressions"]),
                         (5, "id", 1))
        (row,) = doc["rows"]
        self.assertEqual(row["id"], self.doc["results"][0]["id"])
        self.assertEqual(row["verdict"], "SLOWER")
        self.assertAlmostEqual(row["ratio"], 1.5)
        self.assertAlmostEqual(row["new_ns"], 1.5 * row["base_ns"])
        self.assertAlmostEqual(row["base_noise"], 0.01)
        self.assertAlmostEqual(row["p_value"], 2 / 252)
        self.assertEqual(doc["alpha"], 0.05)
        self.assertAlmostEqual(doc["geomean_ratio"], 1.5)
        self.assertEqual(doc["geomean_count"], 1)

    def test_output_file(self):
        new = self.new_file("faster_o.json", 0.5)
        out = os.path.join(self.dir, "cmp.md")
        p = self.compare(self.base, new, "-o", out, rc=0)
        self.assertIn("1 faster", p.stdout)  # the summary stays on stdout
        with open(out) as f:
            text = f.read()
        self.assertIn("| id | base | new | ratio | noise | p | verdict |", text)
        self.assertIn("| 0.008 | FASTER |", text)
        self.assertIn("| FASTER |", text)

    def test_by_problem(self):
        def elsewhere(r):
            r["id"] = r["id"].replace("cpu:0", "cpu:1")

        new = self.new_file("moved.json", 0.5, elsewhere)
        # By id nothing matches: an error, never a pass (it used to print
        # MISSING and exit 0).
        p = self.compare(self.base, new, rc=2)
        self.assertIn("nothing to compare: ", p.stderr)
        self.assertIn("none under the same id (--by problem", p.stderr)
        p = self.compare(self.base, new, "--by", "problem", rc=0)
        self.assertIn(self.doc["results"][0]["problem"], p.stdout)
        self.assertIn("FASTER", p.stdout)

    def test_fail_on(self):
        def elsewhere(r):
            r["id"] = r["id"].replace("cpu:0", "cpu:1")

        def skip(r):
            r["status"] = "skipped"

        # +10 % within +-50 % spread, 5 a side: the test cannot tell.
        noisy = self.write("noisy_base.json", pinned(self.doc, 0.5))
        # A base with one more result than the new file: one MISSING.
        two = pinned(self.doc, 0.01)
        two["results"].append(copy.deepcopy(two["results"][0]))
        elsewhere(two["results"][1])
        cases = (
            (noisy, self.new_file("noisy.json", 1.1, noise=0.5), "noisy"),
            (self.write("base_two.json", two),
             self.new_file("same_f.json", 1.0), "missing"),
            (self.base, self.new_file("skipped.json", 1.0, skip), "skipped"))
        for base, new, state in cases:
            with self.subTest(state=state):
                p = self.compare(base, new, rc=0)
                self.assertIn(state.upper(), p.stdout)
                others = [s for _, _, s in cases if s != state]
                self.compare(base, new, "--fail-on", ",".join(others), rc=0)
                p = self.compare(base, new, "--fail-on", state, rc=1)
                self.assertIn("--fail-on: 1 result in a listed state",
                              p.stderr)
                self.compare(base, new, "--fail-on", ",".join(others + [state]),
                             rc=1)
        # A result file the reader would refuse is refused here too.
        for edit, words in ((lambda r: r.update(status="great"),
                             'status: unknown status "great"'),
                            (lambda r: r["stats"].update(median_ns=-5),
                             "stats.median_ns: -5 ns: a time is not "
                             "negative"),
                            (lambda r: r["samples_ns"].__setitem__(0, -1),
                             "samples_ns[0]: -1 ns")):
            p = self.compare(self.base, self.new_file("bad.json", 1.0, edit),
                             rc=2)
            self.assertIn("bad.json: results[0]: result JSON: " + words,
                          p.stderr)
        for bad in ("slower", "", "noisy,", "noisy,,missing", "NOISY"):
            p = self.compare(self.base, self.base, "--fail-on", bad, rc=2)
            self.assertIn("valid: missing, skipped, noisy", p.stderr)
        p = self.compare(self.base, self.base, "--alpha", "0", rc=2)
        self.assertIn("alpha", p.stderr)

    def test_geomean_over_several(self):
        # Two results, x2 and x1/8: the geometric mean is 0.5.
        two = copy.deepcopy(self.doc)
        r = two["results"][0]
        r2 = copy.deepcopy(r)
        r2["id"] = r["id"] + "/second"
        two["results"].append(r2)
        base = self.write("two_base.json", pinned(two, 0.01))
        new = pinned(two, 0.01)
        for res, f in zip(new["results"], (2.0, 0.125)):
            res["stats"]["median_ns"] *= f
            res["samples_ns"] = [s * f for s in res["samples_ns"]]
        new = self.write("two_new.json", new)
        p = self.compare(base, new, rc=1)
        self.assertIn("geomean ratio new/base: 0.500 over 2 results timed in "
                      "both", p.stdout)

    def test_stream_with_a_cut_last_line(self):
        doc = scaled(pinned(self.doc, 0.01), 1.5)
        head = {k: doc[k] for k in ("schema", "meta", "devices")}
        line = json.dumps(doc["results"][0])
        path = os.path.join(self.dir, "died.jsonl")
        with open(path, "w") as f:
            f.write(json.dumps(head) + "\n" + line + "\n" + line[:40])
        p = self.compare(self.base, path, rc=1)
        self.assertIn("SLOWER", p.stdout)
        # The cut line is said, not dropped in silence.
        said = path + ":3: the last line is cut short"
        self.assertIn("mbench compare: note: " + said, p.stderr)
        p = mbench("merge", path, "-o", os.path.join(self.dir, "m.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("mbench merge: note: " + said, p.stderr)

    def test_input_errors(self):
        missing = os.path.join(self.dir, "nope.json")
        p = self.compare(self.base, missing, rc=2)
        self.assertIn("nope.json", p.stderr)
        bad = self.write("v2.json", dict(self.doc, schema="microbench.results/2"))
        p = self.compare(bad, self.base, rc=2)
        self.assertIn("microbench.results/2", p.stderr)
        for args, needle in (((self.base,), "two result files"),
                             ((self.base, self.base, "--by", "host"),
                              "valid: id, problem"),
                             ((self.base, self.base, "--threshold", "-1"),
                              "--threshold"),
                             ((self.base, self.base, "--format", "csv"),
                              "valid: table, md, json"),
                             ((self.base, self.base, "--bogus"),
                              "unknown option")):
            p = self.compare(*args, rc=2)
            self.assertIn(needle, p.stderr)

    def test_help(self):
        for cmd in ("compare", "merge"):
            p = mbench(cmd, "--help")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("usage: mbench " + cmd, p.stdout)

    def test_merge(self):
        other = self.new_file("host2.json", 2.0)
        out = os.path.join(self.dir, "merged.json")
        p = mbench("merge", self.base, other, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("merged 2 results from 2 files into " + out, p.stdout)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "microbench.results/1")
        self.assertTrue(doc["meta"]["merged"])
        self.assertEqual([m["file"] for m in doc["meta"]["merged_from"]],
                         [self.base, other])
        self.assertEqual(doc["meta"]["version"], self.doc["meta"]["version"])
        self.assertEqual(len(doc["results"]), 2)
        host = self.doc["meta"]["host"]["hostname"]
        self.assertEqual([(r["source"]["file"], r["source"]["host"])
                          for r in doc["results"]],
                         [(self.base, host), (other, host)])
        # Same host, same devices: listed once.
        self.assertEqual(len(doc["devices"]), len(self.doc["devices"]))
        # The same id twice: comparing against it is ambiguous.
        p = self.compare(self.base, out, rc=2)
        self.assertIn("ambiguous", p.stderr)

    def test_merge_errors(self):
        out = os.path.join(self.dir, "never.json")
        for args, needle in (((self.base,), "-o OUT is required"),
                             (("-o", out), "no input files"),
                             ((self.base, os.path.join(self.dir, "gone.json"),
                               "-o", out), "gone.json")):
            p = mbench("merge", *args)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(needle, p.stderr)
        self.assertFalse(os.path.exists(out))
        # The output is no input (by any path), and no input twice: merge a
        # a -o a replaced a with a document holding its results twice.
        copy = self.write("copy.json", self.doc)
        link = os.path.join(self.dir, "link.json")
        os.symlink(copy, link)
        with open(copy) as f:
            before = f.read()
        for args, needle in (((copy, "-o", copy),
                              "is also an input (" + copy + ")"),
                             ((self.base, copy, "-o", link),
                              "is also an input (" + copy + ")"),
                             ((copy, link, "-o", out),
                              "input 2 (" + link + ") is the same file as "
                              "input 1")):
            p = mbench("merge", *args)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(needle, p.stderr)
        with open(copy) as f:
            self.assertEqual(f.read(), before)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
