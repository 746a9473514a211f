"""mbench --trace end to end: `mbench run` and `mbench suite` write a
Chrome/Perfetto trace (the trace event format's JSON array) with a slice
per benchmark named by its result id, its samples inside it; --isolate's
children append theirs to the same file; a path that cannot take the trace
is refused before anything runs (exit 2, naming it). Run by ctest with
MBENCH set."""
import json
import os
import tempfile
import unittest

from test_cli import mbench

QUICK = ["--samples", "3", "--warmup", "0", "--cache", "hot"]


def slices(path):
    with open(path) as f:
        events = json.load(f)  # the closed array is plain JSON
    assert isinstance(events, list)
    for e in events:
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] > 0, e
    return [e for e in events if e["ph"] == "X"]


def results(path):
    with open(path) as f:
        return json.load(f)["results"]


class Trace(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.trace = os.path.join(self.tmp.name, "t.json")
        self.out = os.path.join(self.tmp.name, "out.json")

    def tearDown(self):
        self.tmp.cleanup()

    def check_run(self, ev, res, isolated=False):
        ids = [r["id"] for r in res]
        benches = [e for e in ev if e["name"] in ids]
        self.assertEqual(sorted(e["name"] for e in benches), sorted(ids))
        for b in benches:
            inside = [e for e in ev if e["pid"] == b["pid"]
                      and e["name"].startswith("sample ")
                      and b["ts"] <= e["ts"] <= b["ts"] + b["dur"]]
            r = next(r for r in res if r["id"] == b["name"])
            self.assertEqual(len(inside), len(r["samples_ns"]))
            self.assertEqual(b["args"]["status"], "ok")
        return benches

    def test_run(self):
        p = mbench("run", "--op", "gemm", "--shape", "32x32x32,48x48x48",
                   "--backend", "cpu", *QUICK, "-o", self.out,
                   "--trace", self.trace)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_run(slices(self.trace), results(self.out))

    def test_suite(self):
        p = mbench("suite", "--filter", "^add/", "--dtype", "f32", *QUICK,
                   "-o", self.out, "--trace", self.trace)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_run(slices(self.trace), results(self.out))

    def test_isolate_children_append(self):
        p = mbench("run", "--op", "add", "--shape", "64x64,128x128",
                   "--backend", "cpu", *QUICK, "--isolate", "-o", self.out,
                   "--trace", self.trace)
        self.assertEqual(p.returncode, 0, p.stderr)
        benches = self.check_run(slices(self.trace), results(self.out))
        # each child is its own process on the parent's clock
        self.assertEqual(len({b["pid"] for b in benches}), 2)

    def test_trace_option_wins_over_the_config(self):
        tdir = os.path.join(self.tmp.name, "tdir")
        cfg = os.path.join(self.tmp.name, "j.yaml")
        with open(cfg, "w") as f:
            f.write('benchmarks:\n- benchmark_name: "add"\n'
                    f'  trace_dir: "{tdir}"\n'
                    '  benchmark_sweep_params:\n'
                    '    - { m: 64, n: 64, num_runs: 3 }\n')
        p = mbench("run", "--config", cfg, "--backend", "cpu", "-o",
                   self.out, "--trace", self.trace)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_run(slices(self.trace), results(self.out))
        self.assertFalse(os.path.exists(os.path.join(tdir, "j.trace.json")))
        # without --trace, trace_dir's file (its directory made)
        p = mbench("run", "--config", cfg, "--backend", "cpu", "-o",
                   self.out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_run(slices(os.path.join(tdir, "j.trace.json")),
                       results(self.out))

    def test_bad_path(self):
        for bad in (self.tmp.name, "/nonexistent/dir/t.json"):
            p = mbench("run", "--op", "add", "--shape", "64x64",
                       "--backend", "cpu", *QUICK, "-o", self.out,
                       "--trace", bad)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("--trace", p.stderr)
            self.assertIn(bad, p.stderr)
            self.assertFalse(os.path.exists(self.out))
        # the results file is no trace file
        p = mbench("run", "--op", "add", "--shape", "64x64", "--backend",
                   "cpu", *QUICK, "-o", self.out, "--trace", self.out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--trace", p.stderr)

    def test_refused_outputs_keep_the_trace(self):
        """A run refused for its results file (exit 2) neither truncates an
        existing trace nor leaves a new, empty one: the trace is opened
        for writing only once the results files are open. Both the
        command-line and the config path."""
        bad_out = os.path.join(self.tmp.name, "a_dir")  # -o: refused
        os.mkdir(bad_out)
        cfg = os.path.join(self.tmp.name, "c.yml")
        with open(cfg, "w") as f:
            f.write("benchmarks:\n  - op: add\n    shapes: [[64, 64]]\n")
        for how in (["--op", "add", "--shape", "64x64", *QUICK],
                    ["--config", cfg, "--samples", "3", "--warmup", "0"]):
            with open(self.trace, "w") as f:
                f.write("[\"an earlier trace\"]\n")
            p = mbench("run", *how, "--backend", "cpu", "-o", bad_out,
                       "--trace", self.trace)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(bad_out, p.stderr)
            with open(self.trace) as f:
                self.assertEqual(f.read(), "[\"an earlier trace\"]\n", how)
            os.unlink(self.trace)
            p = mbench("run", *how, "--backend", "cpu", "-o", bad_out,
                       "--trace", self.trace)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertFalse(os.path.exists(self.trace), how)
            # and a run that goes ahead still writes it
            p = mbench("run", *how, "--backend", "cpu", "-o", self.out,
                       "--trace", self.trace)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.check_run(slices(self.trace), results(self.out))
            os.unlink(self.trace)


if __name__ == "__main__":
    unittest.main()
