"""mbench --isolate end to end: planted kernels that crash (SIGSEGV, abort)
or hang (never return) run in child processes; each becomes a failed result
that says why, and every other benchmark still runs and is written. Also
Ctrl-C (SIGINT) mid-run: the finished results are on disk, the exit status
is 130. The planted kernels are the copy kernels of the test fixture backend
`wrong` (tests/fixtures/fake_backend.c). Run by ctest with MBENCH and
MB_TEST_FIXTURE_DIR set."""
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

MBENCH = os.environ.get("MBENCH", "mbench")
FIXTURES = os.environ.get("MB_TEST_FIXTURE_DIR", "")

PLAN = """\
benchmarks:
  - name: planted
    op: copy
    shapes: [[64, 64]]
    dtype: f32
    backend: wrong
    impls: [ok, segv, hang, abort]
    timing: {samples: 3}
  - name: real
    op: add
    shapes: [[64, 64]]
    dtype: f32
    backend: cpu
    timing: {samples: 3}
"""


def env():
    e = dict(os.environ)
    e["MB_BACKEND_PATH"] = os.path.join(FIXTURES, "working")
    return e


@unittest.skipUnless(FIXTURES, "MB_TEST_FIXTURE_DIR not set (run via ctest)")
class Isolate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.plan = os.path.join(self.tmp.name, "plan.yaml")
        with open(self.plan, "w") as f:
            f.write(PLAN)
        self.out = os.path.join(self.tmp.name, "out.json")

    def tearDown(self):
        self.tmp.cleanup()

    def test_crashes_and_hangs_become_failed_results(self):
        start = time.monotonic()
        p = subprocess.run(
            [MBENCH, "run", "--config", self.plan, "--isolate",
             "--isolate-timeout", "3", "-o", self.out],
            capture_output=True, text=True, env=env(), timeout=300)
        elapsed = time.monotonic() - start
        self.assertEqual(p.returncode, 1, p.stderr)  # some failed
        with open(self.out) as f:
            doc = json.load(f)
        by_impl = {r["impl"]: r for r in doc["results"]
                   if r["backend"] == "wrong"}
        self.assertEqual(sorted(by_impl), ["abort", "hang", "ok", "segv"])
        self.assertEqual(by_impl["ok"]["status"], "ok")
        self.assertTrue(by_impl["ok"]["correctness"]["pass"])
        self.assertEqual(len(by_impl["ok"]["samples_ns"]), 3)
        for impl in ("segv", "abort"):
            r = by_impl[impl]
            self.assertEqual(r["status"], "failed", r)
            # A sanitizer build reports SIGSEGV itself and exits 1.
            self.assertRegex(r["reason"],
                             "crashed: .*signal|exited with status", r)
        self.assertIn("Aborted", by_impl["abort"]["reason"])
        self.assertEqual(by_impl["hang"]["status"], "failed")
        self.assertIn("hung: no result within 3 s", by_impl["hang"]["reason"])
        # The run went on after all of them.
        (real,) = [r for r in doc["results"] if r["backend"] == "cpu"]
        self.assertEqual(real["status"], "ok")
        self.assertEqual(real["name"], "real/64x64/f32")
        self.assertLess(elapsed, 120)

    def test_isolated_result_matches_in_process_identity(self):
        args = ["run", "--op", "add", "--shape", "128x64", "--dtype", "bf16",
                "--backend", "cpu", "--samples", "4", "--cache", "hot",
                "--seed", "42"]  # the same check sample in both
        a = os.path.join(self.tmp.name, "a.json")
        b = os.path.join(self.tmp.name, "b.json")
        for extra, path in (([], a), (["--isolate"], b)):
            p = subprocess.run([MBENCH, *args, *extra, "-o", path],
                               capture_output=True, text=True, env=env(),
                               timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
        with open(a) as f:
            ra = json.load(f)["results"][0]
        with open(b) as f:
            rb = json.load(f)["results"][0]
        for k in ("id", "problem", "op", "shape", "dtypes", "backend", "impl",
                  "cache", "status", "seed", "correctness"):
            self.assertEqual(ra[k], rb[k], k)
        self.assertEqual(len(rb["samples_ns"]), 4)

    def test_interrupt_keeps_finished_results(self):
        # The first benchmark finishes fast; the second hangs (isolated, with
        # a long watchdog) until SIGINT arrives.
        err = self.interrupt_after_first(self.out)
        self.assertIn("interrupted: 1 of 4 benchmarks finished", err)
        with open(self.out) as f:
            doc = json.load(f)
        self.assertEqual([r["impl"] for r in doc["results"]], ["ok"])
        self.assertFalse(os.path.exists(self.out + "l"))

    def interrupt_after_first(self, out):
        """Runs ok, hang, ok into `out` and stops it with SIGINT once the
        first result is on disk; returns stderr."""
        plan = os.path.join(self.tmp.name, "slow.yaml")
        with open(plan, "w") as f:
            f.write(PLAN.replace("[ok, segv, hang, abort]", "[ok, hang, ok]"))
        p = subprocess.Popen(
            [MBENCH, "run", "--config", plan, "--isolate",
             "--isolate-timeout", "120", "-o", out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env())
        growing = out + ("l" if out.endswith(".json") else ".partial")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.path.exists(growing):
                with open(growing) as f:
                    if sum(1 for _ in f) >= 2:  # head + the first result
                        break
            time.sleep(0.05)
        time.sleep(0.5)  # now inside the hanging one
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        return err

    def test_interrupt_keeps_an_existing_file(self):
        # An earlier run's file is not replaced by the one result that
        # finished before Ctrl-C: it stays, the result is in the stream
        # (JSON) or the .partial file (CSV), and the message says where.
        for name, growing, rows in (("earlier.json", "earlier.jsonl", 2),
                                    ("earlier.csv", "earlier.csv.partial",
                                     2)):
            out = os.path.join(self.tmp.name, name)
            with open(out, "w") as f:
                f.write("an earlier run's results\n")
            err = self.interrupt_after_first(out)
            kept = os.path.join(self.tmp.name, growing)
            self.assertIn(f"interrupted: {out} left as it was; the finished "
                          f"results are in {kept}", err)
            with open(out) as f:
                self.assertEqual(f.read(), "an earlier run's results\n")
            with open(kept) as f:
                lines = f.read().splitlines()
            self.assertEqual(len(lines), rows)  # header + the finished one
            if name.endswith(".json"):
                self.assertEqual(json.loads(lines[1])["impl"], "ok")
            else:
                self.assertIn(",ok,", lines[1])

    def test_interrupt_without_isolation(self):
        # In process: the library stops sampling at the flag.
        p = subprocess.Popen(
            [MBENCH, "run", "--op", "add", "--shape", "64x64", "--backend",
             "cpu", "--max-noise", "1e-9", "--timeout", "60", "--min-time",
             "60", "-o", self.out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env())
        time.sleep(2)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 130, err)
        with open(self.out) as f:
            doc = json.load(f)
        self.assertEqual(doc["results"], [])

    def test_interrupt_within_a_long_sample(self):
        # One sample of 10^9 runs (hours): Ctrl-C took effect only after
        # it, six minutes for 10^8. Now it stops within a part (0.25 s).
        p = subprocess.Popen(
            [MBENCH, "run", "--op", "add", "--shape", "64x64", "--backend",
             "cpu", "--cache", "hot", "--batch", "1000000000", "--samples",
             "3", "--warmup", "0", "-o", self.out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env())
        time.sleep(2)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertLess(time.monotonic() - sent, 10)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted: 0 of 1 benchmark finished", err)

    def test_interrupt_keeps_finished_repetitions(self):
        # Ctrl-C in repetition k: repetitions 1..k-1 finished and stand
        # (they were thrown away with the unfinished one).
        p = subprocess.Popen(
            [MBENCH, "run", "--op", "add", "--shape", "64x64", "--backend",
             "cpu", "--repetitions", "1000000", "--criterion", "fixed",
             "--samples", "20", "--warmup", "0", "-o", self.out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env())
        time.sleep(4)  # start-up, then a few repetitions (also under ASan)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted: 1 of 1 benchmark finished", err)
        with open(self.out) as f:
            (r,) = json.load(f)["results"]
        self.assertEqual(r["status"], "ok")
        reps = r["stats"]["repetitions"]
        self.assertTrue(1 <= reps < 1000000, reps)
        self.assertGreaterEqual(r["stats"]["count"], 20 * reps)
        self.assertIn(f"interrupted: {reps} of 1000000 repetitions "
                      "finished", r["warning"])
        self.assertEqual(r["stats"]["stop_reason"], "interrupted")

    def children_of(self, marker):
        """Pids of the processes whose command line holds `marker` (this
        test's own output path) and --child-index: isolated children."""
        pids = []
        for d in os.listdir("/proc"):
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if marker.encode() in argv and b"--child-index" in argv:
                pids.append(int(d))
        return pids

    def start_hanging(self):
        plan = os.path.join(self.tmp.name, "hang.yaml")
        with open(plan, "w") as f:
            f.write(PLAN.replace("[ok, segv, hang, abort]", "[hang]"))
        p = subprocess.Popen(
            [MBENCH, "run", "--config", plan, "--isolate",
             "--isolate-timeout", "120", "-o", self.out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env())
        deadline = time.monotonic() + 60
        while not self.children_of(self.out) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(self.children_of(self.out), "no child started")
        return p

    def test_sigterm_and_a_killed_parent(self):
        # SIGTERM: finished results kept, exit 128 + 15 (it said 130).
        p = self.start_hanging()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 143, err)
        # A parent killed outright (no handler runs): its isolated child
        # dies with it (PR_SET_PDEATHSIG), not left hanging for 120 s.
        p = self.start_hanging()
        p.kill()
        p.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while self.children_of(self.out) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.children_of(self.out), [])

    def test_child_index_out_of_range(self):
        p = subprocess.run(
            [MBENCH, "run", "--config", self.plan, "--child-index", "9"],
            capture_output=True, text=True, env=env(), timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--child-index: \"9\" is not in [0, 5)", p.stderr)


class Interleave(unittest.TestCase):
    """--interleave SEED: a seeded permutation of the plan, the same for the
    same seed; every result still written."""

    PLAN = """\
benchmarks:
  - op: add
    shapes: [[32, 32], [64, 32], [96, 32], [128, 32], [160, 32], [192, 32]]
    dtype: f32
    backend: cpu
    cache: hot
    timing: {samples: 2}
"""

    def order(self, *extra):
        with tempfile.TemporaryDirectory() as d:
            plan = os.path.join(d, "p.yaml")
            out = os.path.join(d, "o.json")
            with open(plan, "w") as f:
                f.write(self.PLAN)
            p = subprocess.run([MBENCH, "run", "--config", plan, *extra,
                                "-o", out], capture_output=True, text=True,
                               env=env(), timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                return [r["name"] for r in json.load(f)["results"]]

    def test_seeded_order(self):
        plain = self.order()
        a = self.order("--interleave", "11")
        b = self.order("--interleave", "11")
        c = self.order("--interleave", "12")
        self.assertEqual(sorted(a), sorted(plain))
        self.assertEqual(a, b)
        self.assertNotEqual(a, plain)
        self.assertNotEqual(a, c)

    def test_bad_seed_and_without_config(self):
        p = subprocess.run([MBENCH, "run", "--op", "add", "--shape", "8x8",
                            "--interleave", "3"], capture_output=True,
                           text=True, env=env(), timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("need --config", p.stderr)


if __name__ == "__main__":
    unittest.main()
