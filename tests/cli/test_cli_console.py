"""What mbench shows a person at a terminal: a table that fits the width it
is given, the progress line on a pseudo-terminal (and nowhere else), lists
of shapes and dtypes, and the suite's run options."""
import csv
import json
import os
import subprocess
import tempfile
import unittest

from test_cli import MBENCH, QUICK, mbench, run_on_pty


def lines_of(text):
    return [l for l in text.splitlines() if l]


class Table(unittest.TestCase):
    def test_fits_a_100_column_terminal(self):
        # Two gemms that differ in shape and dtype: op, backend, impl and
        # cache are the same in both and move above the table; every line
        # fits, none ends in a space.
        p = mbench("run", "--op", "gemm", "--shape", "64x64x64,32x48x40",
                   "--dtype", "f32,bf16", "--impl", "c", *QUICK,
                   env={"COLUMNS": "100"})
        self.assertEqual(p.returncode, 0, p.stderr)
        out = lines_of(p.stdout)
        self.assertTrue(out[0].startswith("op gemm  |  backend cpu  |  impl c"),
                        p.stdout)
        for line in out:
            self.assertLessEqual(len(line), 100, p.stdout)
            self.assertEqual(line, line.rstrip(), p.stdout)
        self.assertTrue(out[1].startswith("shape "), p.stdout)
        # dtype by dtype, each a sweep of the shapes as given.
        rows = [l.split()[:2] for l in out[2:6]]
        self.assertEqual(rows, [["64x64x64", "f32"], ["32x48x40", "f32"],
                                ["64x64x64", "bf16"], ["32x48x40", "bf16"]])

    def test_a_narrow_terminal_leaves_columns_out_and_says_so(self):
        p = mbench("run", "--op", "gemm", "--shape", "64x64x64", *QUICK,
                   env={"COLUMNS": "50"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(left out to fit 50 columns: ", p.stdout)
        for line in lines_of(p.stdout):
            self.assertLessEqual(len(line), 50, p.stdout)

    def test_columns(self):
        p = mbench("run", "--op", "add", "--shape", "64x64", *QUICK,
                   "--columns", "op,median,p10,p90,stop,check",
                   env={"COLUMNS": "200"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(lines_of(p.stdout)[0].split(),
                         ["op", "median", "p10", "p90", "stop", "check"])
        self.assertIn(" fixed ", p.stdout)
        p = mbench("run", "--op", "add", "--shape", "64x64", "--columns",
                   "median,nope")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertIn('--columns: unknown table column "nope"', p.stderr)
        self.assertIn("p90", p.stderr)
        p = mbench("run", "--op", "add", "--shape", "64x64", "--columns",
                   "help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("p90 ", p.stdout)
        self.assertIn("(not by default)", p.stdout)

    def test_csv_keeps_every_field(self):
        p = mbench("run", "--op", "add", "--shape", "64x64", *QUICK,
                   "--columns", "median", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        (row,) = csv.DictReader(p.stdout.splitlines())
        for field in ("op", "p90_ns", "stop_reason", "gbps"):
            self.assertIn(field, row)


class Lists(unittest.TestCase):
    def test_bad_items_are_errors_before_output(self):
        for args, why in ((["--shape", "64x64,"], "an empty item"),
                          (["--shape", "64x64", "--dtype", "f32,f33"],
                           'unknown dtype "f33"'),
                          (["--shape", "64x64,64x0"], "a dimension is 0")):
            p = mbench("run", "--op", "add", *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertEqual(p.stdout, "")
            self.assertIn(why, p.stderr)


class Suite(unittest.TestCase):
    def test_takes_the_run_options(self):
        p = mbench("suite", "--filter", "^add/1024", "--samples", "3",
                   "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        (row,) = csv.DictReader(p.stdout.splitlines())
        self.assertEqual((row["op"], row["shape"], row["samples"]),
                         ("add", "1024x1024", "3"))
        # A dtype by any of its names (bfloat16 is bf16).
        p = mbench("--dtype", "bfloat16", "--filter", "add", "--samples", "2",
                   "--cache", "hot", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = list(csv.DictReader(p.stdout.splitlines()))
        self.assertEqual([(r["op"], r["dtype"], r["cache"]) for r in rows],
                         [("add", "bf16", "hot")])

    def test_nothing_left_names_the_benchmarks(self):
        p = mbench("--filter", "nothing-matches")
        self.assertEqual(p.returncode, 2)
        self.assertIn("gemm/1024x1024x1024/f32", p.stderr)


class PeakCache(unittest.TestCase):
    def test_measured_once_then_read_unless_asked(self):
        def source(*extra):
            p = mbench("run", "--op", "add", "--shape", "64x64", *QUICK,
                       "--backend", "cpu", "--format", "json", *extra,
                       env={"MB_CACHE_DIR": tmp})
            self.assertEqual(p.returncode, 0, p.stderr)
            (cpu,) = [d for d in json.loads(p.stdout)["devices"]
                      if d["backend"] == "cpu"]
            return cpu["peak_source"]
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIn("measured now, cached in " + tmp, source())
            self.assertIn("(cached ", source())
            self.assertIn("measured again", source("--remeasure-peak"))


class Progress(unittest.TestCase):
    def test_on_a_terminal(self):
        # Two benchmarks, the second sampling for ~1.5 s: the line names
        # each, counts them, and is redrawn while the long one samples.
        rc, out, tty = run_on_pty(
            ["run", "--op", "add", "--shape", "64x64,128x128",
             "--criterion", "stdrel", "--max-noise", "1e-9",
             "--min-samples", "1000000", "--timeout", "1.5",
             "--format", "csv"])
        self.assertEqual(rc, 0, tty)
        self.assertIn("[1/2] add/64x64/f32", tty)
        self.assertIn("[2/2] add/128x128/f32", tty)
        self.assertIn("elapsed ", tty)
        self.assertIn("ETA ", tty)
        # Redrawn by the clock, not only at each benchmark: more draws of
        # the second than the one when it started.
        self.assertGreaterEqual(tty.count("[2/2]"), 2, tty)
        # Cleared before the results went out (an ASan build's leak
        # report may follow); stdout has none of it.
        self.assertIn("\r\x1b[K", tty[tty.rindex("ETA "):],
                      repr(tty[-80:]))
        self.assertNotIn("elapsed", out)
        self.assertEqual(len(list(csv.DictReader(out.splitlines()))), 2)

    def test_quiet_and_not_a_terminal(self):
        rc, _, tty = run_on_pty(["run", "--op", "add", "--shape", "64x64",
                                 *QUICK, "--quiet"])
        self.assertEqual(rc, 0, tty)
        self.assertNotIn("elapsed", tty)
        p = mbench("run", "--op", "add", "--shape", "64x64", *QUICK)
        self.assertNotIn("elapsed", p.stderr)


if __name__ == "__main__":
    unittest.main()
