"""The collectives over MPI (docs/distributed.md, "Collectives"): every op,
dtype and reduction, in and out of place, sizes odd and even, under
mpirun -n 2 and -n 4, each checked exactly on every rank; the sizes and
forms a job cannot run are skipped with why; one process without a
communicator skips them all. Run by ctest when libmicrobench_mpi is built
(MBENCH, MPIEXEC)."""
import json
import os
import subprocess
import tempfile
import unittest

MBENCH = os.environ["MBENCH"]
MPIEXEC = os.environ["MPIEXEC"]

OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
       "broadcast", "reduce", "sendrecv"]
REDUCING = {"all_reduce", "reduce_scatter", "reduce"}
SIZES = [1, 7, 12, 4100]  # 1 and 7: odd; 12 and 4100: blocks for 2 and 4
DTYPES = ["f32", "bf16", "f16", "i32"]
# nccl-tests' bus-bandwidth factors over n ranks
BUS = {"all_reduce": lambda n: 2.0 * (n - 1) / n,
       "all_gather": lambda n: (n - 1) / n,
       "reduce_scatter": lambda n: (n - 1) / n,
       "all_to_all": lambda n: (n - 1) / n,
       "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0,
       "sendrecv": lambda n: 1.0}

CONFIG = """
defaults:
  cache: hot
  timing: {samples: 2, warmup_runs: 1, warmup: 0}
benchmarks:
  - name: plain
    ops: [%s]
    shapes: [%s]
    dtypes: [%s]
  - name: in_place
    ops: [all_reduce, all_gather, reduce_scatter, broadcast, reduce]
    in_place: true
    shapes: [[12]]
    dtypes: [bf16, f16, i32]
  - name: reductions
    ops: [all_reduce, reduce_scatter, reduce]
    reduce_ops: [prod, min, max]
    shapes: [[12], [7]]
    dtypes: [f16, i32]
  - name: rooted
    ops: [broadcast, reduce]
    in_place: true
    root: 1
    shapes: [[7]]
    dtypes: [f32]
""" % (", ".join(OPS), ", ".join("[%d]" % s for s in SIZES),
       ", ".join(DTYPES))


def expected_skip(r, n):
    """Why this job cannot run result r, or None."""
    op, size = r["op"], r["shape"]["N"]
    in_place = r["params"].get("in_place", False)
    if op in ("all_gather", "reduce_scatter", "all_to_all") and size % n:
        return "is not a multiple of the %d ranks" % n
    if op == "broadcast" and not in_place:
        return "MPI_Bcast works in one buffer"
    if op == "reduce_scatter" and in_place:
        return "MPI_IN_PLACE leaves the result"
    return None


class Collectives(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.config = os.path.join(self.tmp.name, "coll.yaml")
        with open(self.config, "w") as f:
            f.write(CONFIG)

    def run_job(self, ranks, rc=0):
        out = os.path.join(self.tmp.name, "c%d.json" % ranks)
        cmd = ([MPIEXEC, "-n", str(ranks)] if ranks else []) + [
            MBENCH, "run", "--config", self.config, "--backend", "cpu",
            "-o", out, "-q", "-f", "json"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, rc, p.stderr)
        if rc:
            return p
        with open(out) as f:
            return json.load(f)["results"]

    def test_every_op_dtype_and_size_checked_exactly(self):
        for n in (2, 4):
            results = self.run_job(n)
            self.assertEqual(len(results), 4 * 7 * 4 + 15 + 36 + 2)
            ran = set()
            for r in results:
                why = expected_skip(r, n)
                if why:
                    self.assertEqual(r["status"], "skipped", r["name"])
                    self.assertIn(why, r["reason"], r["name"])
                    continue
                self.assertEqual(r["status"], "ok", (r["name"], r["reason"]))
                c = r["correctness"]
                self.assertTrue(c["pass"], r["name"])
                self.assertEqual(c["max_abs_err"], 0, r["name"])
                self.assertEqual(r["impl"], "mpi")
                self.assertEqual(r["params"]["ranks"], n)
                self.assertEqual(r["placement"]["ranks"], n)
                self.assertEqual(r["placement"]["rank"], 0)
                notes = r["kernel"]
                self.assertEqual(notes["ranks"], n)
                self.assertIn("Open MPI", notes["communicator"])
                self.assertEqual(notes["ranks_on_host"], n)  # one machine
                self.assertAlmostEqual(
                    notes["busbw_gbps"],
                    r["derived"]["gbps"] * BUS[r["op"]](n), places=9)
                if r["op"] in REDUCING:
                    self.assertIn(r["params"]["reduce_op"],
                                  ("sum", "prod", "min", "max"))
                ran.add((r["op"], r["dtypes"]["a"]))
            self.assertEqual(ran, {(o, d) for o in OPS for d in DTYPES})
            self.check_files(n, results)

    def check_files(self, n, results):
        """Every rank ran each collective; rank 0 alone keeps it: its own
        file holds them all, the others' none, and the run's manifest
        merges back to the same results (mbench merge OUT.plan)."""
        out = os.path.join(self.tmp.name, "c%d.json" % n)
        names = [r["name"] for r in results]
        for k in range(n):
            with open("%s.rank%d.json" % (out, k)) as f:
                own = [r["name"] for r in json.load(f)["results"]]
            self.assertEqual(own, names if k == 0 else [])
        merged = os.path.join(self.tmp.name, "merged%d.json" % n)
        p = subprocess.run([MBENCH, "merge", out + ".plan", "-o", merged],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(merged) as f:
            self.assertEqual([r["name"] for r in json.load(f)["results"]],
                             names)

    def test_a_stopped_rank_leaves_no_one_in_a_collective(self):
        # rank 1 cannot open its results file (a directory is in the way):
        # it stops before anything runs; the collectives must not wait for
        # it (the job ends well inside the timeout) and rank 0's own
        # benchmarks still run and are written
        config = os.path.join(self.tmp.name, "mix.yaml")
        with open(config, "w") as f:
            f.write("defaults:\n  timing: {samples: 2, warmup: 0}\n"
                    "benchmarks:\n"
                    "  - {name: c, ops: [all_reduce, sendrecv], "
                    "shapes: [[64], [128]]}\n"
                    "  - {name: e, ops: [add, copy], "
                    "shapes: [[64, 64], [128, 128]]}\n")
        out = os.path.join(self.tmp.name, "x.json")
        os.mkdir(out + ".rank1.json")
        p = subprocess.run([MPIEXEC, "-n", "2", MBENCH, "run", "--config",
                            config, "--backend", "cpu", "-o", out, "-q"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("x.json.rank1.json is not a regular file", p.stderr)
        with open(out) as f:
            got = [(r["op"], r["status"]) for r in json.load(f)["results"]]
        self.assertTrue(got)
        self.assertTrue(all(op in ("add", "copy") and st == "ok"
                            for op, st in got), got)

    def test_a_ranks_sweep_runs_on_the_first_ranks(self):
        # `ranks`: the collective over the first k of the job's 4 ranks
        # (a communicator split off for them), 5 more than the job has
        config = os.path.join(self.tmp.name, "ranks.yaml")
        with open(config, "w") as f:
            f.write("defaults:\n  cache: hot\n"
                    "  timing: {samples: 2, warmup: 0}\n"
                    "benchmarks:\n"
                    "  - {name: r, ops: [all_reduce, all_gather, sendrecv],"
                    " ranks: [1, 2, 3, 4, 5], shapes: [[60]],"
                    " dtypes: [bf16]}\n"
                    "  - {name: all, op: all_reduce, shapes: [[60]]}\n")
        out = os.path.join(self.tmp.name, "ranks.json")
        p = subprocess.run([MPIEXEC, "-n", "4", MBENCH, "run", "--config",
                            config, "--backend", "cpu", "-o", out, "-q",
                            "-f", "json"],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            results = json.load(f)["results"]
        self.assertEqual(len(results), 16)
        for r in results:
            k = r["params"]["ranks"]
            if r["name"].startswith("all/"):
                self.assertEqual(k, 4)  # no `ranks`: all of them
            if k == 5:
                self.assertEqual(r["status"], "skipped")
                self.assertIn("over 5 ranks: this job has 4", r["reason"])
                continue
            self.assertEqual(r["status"], "ok", (r["name"], r["reason"]))
            self.assertTrue(r["correctness"]["pass"])
            self.assertEqual(r["kernel"]["ranks"], k)
            self.assertEqual(r["placement"]["ranks"], 4)
            self.assertIn("ranks:%d" % k, r["problem"])
            self.assertAlmostEqual(r["kernel"]["busbw_gbps"],
                                   r["derived"]["gbps"] * BUS[r["op"]](k),
                                   places=9)

    def test_a_single_op_under_a_launcher_asks_for_a_config(self):
        p = subprocess.run([MPIEXEC, "-n", "2", MBENCH, "run", "--op",
                            "all_reduce", "--shape", "64"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("under an MPI launcher, mbench run takes --config",
                      p.stderr)

    def test_one_process_has_no_communicator(self):
        # nothing measured (exit 3): every collective skipped, with why
        p = self.run_job(0, rc=3)
        self.assertIn("every benchmark was skipped (the first: no "
                      "communicator: collectives run across the ranks of "
                      "an MPI job", p.stderr)


if __name__ == "__main__":
    unittest.main()
