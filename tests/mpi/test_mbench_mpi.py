"""mbench run --config under mpirun (docs/distributed.md): the plan split
over the ranks gives the same results as one process, each placed; the
ranks' own result files; and a bad launch (different configs, a rank
without the backend) is an error on every rank, never a hang. Run by
ctest when libmicrobench_mpi is built (MBENCH, MPIEXEC, CONFIG_DIR,
FIXTURE_DIR)."""
import json
import os
import subprocess
import tempfile
import unittest

MBENCH = os.environ["MBENCH"]
MPIEXEC = os.environ["MPIEXEC"]
CONFIG = os.path.join(os.environ["CONFIG_DIR"], "jax", "tiny_sweep.yaml")
RUN = ["run", "--config", CONFIG, "--backend", "cpu", "--samples", "3"]


def mbench(*args, ranks=None, timeout=300):
    cmd = ([MPIEXEC, "-n", str(ranks), MBENCH] if ranks else [MBENCH]) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def load(path):
    with open(path) as f:
        return json.load(f)["results"]


class Sharded(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_same_results_as_one_process(self):
        alone = mbench(*RUN, "-o", self.path("one.json"))
        self.assertEqual(alone.returncode, 0, alone.stderr)
        want = [(r["name"], r["status"]) for r in load(self.path("one.json"))]
        self.assertTrue(all("placement" not in r
                            for r in load(self.path("one.json"))))
        for ranks, mode in ((2, "exclusive"), (4, "concurrent")):
            out = self.path("job%d.json" % ranks)
            p = mbench(*RUN, "--ranks-mode", mode, "-o", out, ranks=ranks)
            self.assertEqual(p.returncode, 0, p.stderr)
            got = load(out)
            self.assertEqual([(r["name"], r["status"]) for r in got], want)
            # every result checked, and placed: rank, of how many, host
            for r in got:
                if r["status"] == "ok":
                    self.assertTrue(r["correctness"]["pass"], r["name"])
                self.assertEqual(r["placement"]["ranks"], ranks)
            used = {r["placement"]["rank"] for r in got}
            self.assertEqual(used, set(range(ranks)), "every rank ran some")
            # each rank's own file holds exactly what it ran
            mine = []
            for k in range(ranks):
                own = load("%s.rank%d.json" % (out, k))
                self.assertTrue(all(r["placement"]["rank"] == k for r in own))
                mine += [r["name"] for r in own]
            self.assertEqual(sorted(mine), sorted(n for n, _ in want))
            # the table once, on rank 0
            self.assertEqual(p.stdout.count("rmsnorm/8x64/bfloat16"), 1)

    def test_different_configs(self):
        other = self.path("other.yaml")
        with open(CONFIG) as f, open(other, "w") as g:
            g.write(f.read() + "\n# one comment more: other bytes\n")
        cmd = [MPIEXEC, "-n", "1", MBENCH, *RUN, ":", "-n", "1", MBENCH,
               "run", "--config", other, "--backend", "cpu", "--samples", "3"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0)
        for k in (0, 1):
            self.assertIn("rank %d of 2: the ranks were not given the same "
                          "command and config file" % k, p.stderr)

    def test_a_rank_without_the_backend(self):
        # Only rank 0 is shown the emulated GPU module: rank 1 cannot check
        # a plan for it, and every rank stops before anything runs.
        emu = os.path.join(os.environ["FIXTURE_DIR"], "gpuemu")
        args = ["run", "--config", CONFIG, "--backend", "gpuemu", "-o",
                self.path("none.json")]
        cmd = [MPIEXEC, "-n", "1", "-x", "MB_BACKEND_PATH=" + emu, MBENCH,
               *args, ":", "-n", "1", "-x", "MB_BACKEND_PATH=", MBENCH, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("rank 0 of 2: 1 rank could not check the plan and its "
                      "backends (its message above); nothing ran", p.stderr)
        self.assertIn('"gpuemu"', p.stderr)  # rank 1's own message
        self.assertFalse(os.path.exists(self.path("none.json")))

    def test_dry_run_prints_once(self):
        p = mbench(*RUN, "--dry-run", ranks=2)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.count("plan: "), 1)

    def test_bad_mode(self):
        p = mbench(*RUN, "--ranks-mode", "fast", ranks=2)
        self.assertEqual(p.returncode, 2)
        self.assertIn('--ranks-mode: unknown mode "fast"; valid: exclusive, '
                      "concurrent", p.stderr)


if __name__ == "__main__":
    unittest.main()
