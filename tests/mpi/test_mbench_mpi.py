"""mbench run --config under mpirun (docs/distributed.md): the plan split
over the ranks gives the same results as one process, each placed; the
ranks' own result files; a rank killed mid-run leaves the others' results
on disk, and mbench merge of the run's manifest names it and the
benchmarks that did not run; and a bad launch (different configs, a rank
without the backend) is an error on every rank, never a hang. Run by
ctest when libmicrobench_mpi is built (MBENCH, MPIEXEC, CONFIG_DIR,
FIXTURE_DIR)."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
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


def manifest(path):
    """The run's manifest: [(entry name, owner rank)] in plan order, and
    {rank: host}."""
    entries, hosts = [], {}
    with open(path) as f:
        assert f.readline() == "microbench.shard_plan/1\n"
        for line in f:
            kind, *fields = line.rstrip("\n").split("\t")
            if kind == "entry":
                assert int(fields[0]) == len(entries)
                entries.append((fields[2], int(fields[1])))
            elif kind == "rank":
                hosts[int(fields[0])] = fields[1]
    return entries, hosts


def streamed(out, rank):
    """What rank's own file holds: names in the order it finished them
    (its document once closed, else its stream, whose first line is the
    header and whose last may be cut short)."""
    doc = "%s.rank%d.json" % (out, rank)
    if os.path.exists(doc):
        return [r["name"] for r in load(doc)]
    names = []
    try:
        with open(doc + "l") as f:
            lines = f.read().split("\n")[1:]
    except FileNotFoundError:
        return names
    for line in lines:
        try:
            names.append(json.loads(line)["name"])
        except ValueError:
            pass
    return names


def rank_pid(rank, marker):
    """The pid of the mbench whose command line has `marker` and whose
    environment says it is rank `rank` of Open MPI's world."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if (os.path.basename(argv[0]) == b"mbench" and
                marker.encode() in argv and
                ("OMPI_COMM_WORLD_RANK=%d" % rank).encode() in env):
            return int(pid)
    return None


class Sharded(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_same_results_as_one_process(self):
        alone = mbench(*RUN, "-o", self.path("one.json"))
        self.assertEqual(alone.returncode, 0, alone.stderr)
        # A collective (the config's all_reduce) needs the job: one process
        # skips it for want of a communicator, every job runs it.
        want = [(r["name"], "ok" if r["status"] == "skipped" and
                 r["reason"].startswith("no communicator") else r["status"])
                for r in load(self.path("one.json"))]
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
            # a job that ended normally: its manifest merges to what rank 0
            # wrote, with nothing reported lost
            entries, _ = manifest(out + ".plan")
            self.assertEqual([n for n, _ in entries], [n for n, _ in want])
            m = mbench("merge", out + ".plan", "-o", out + ".merged.json")
            self.assertEqual(m.returncode, 0, m.stderr)
            self.assertNotIn("lost", m.stderr)
            self.assertEqual([(r["name"], r["placement"]["rank"])
                              for r in load(out + ".merged.json")],
                             [(r["name"], r["placement"]["rank"]) for r in got])

    def test_a_rank_killed_mid_run(self):
        # 21 entries over 3 ranks, one at a time (exclusive), each warming
        # up 0.2 s: about 4 s in all, so rank 1 is killed with most of its
        # share to run.
        out = self.path("lost.json")
        # A file of an earlier run at this output: the run must remove it,
        # or the merge would take it for rank 1's.
        with open(out + ".rank1.json", "w") as f:
            f.write("not this run's\n")
        job = subprocess.Popen(
            [MPIEXEC, "-n", "3", MBENCH, *RUN, "--warmup", "0.2", "-o", out],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            victim, deadline = None, time.time() + 120
            # once a rank other than the victim has finished a result
            while job.poll() is None and time.time() < deadline:
                if streamed(out, 0) or streamed(out, 2):
                    victim = rank_pid(1, out)
                    break
                time.sleep(0.02)
            self.assertIsNotNone(victim, "no result streamed or no rank 1")
            before = {k: streamed(out, k) for k in (0, 2)}
            os.kill(victim, signal.SIGKILL)
            _, err = job.communicate(timeout=120)
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()
        self.assertNotEqual(job.returncode, 0, err)
        self.assertFalse(os.path.exists(out), "rank 0 wrote no outputs")
        # the planted file is gone (rank 1, killed, never closed its own)
        self.assertFalse(os.path.exists(out + ".rank1.json"))
        entries, hosts = manifest(out + ".plan")
        self.assertEqual(hosts, {k: socket.gethostname() for k in range(3)})
        owner = dict(entries)
        # the others' finished results are on disk, each in its owner's file
        done = {}
        for k in range(3):
            for name in streamed(out, k):
                self.assertEqual(owner[name], k, name)
                done[name] = k
        for k, names in before.items():
            self.assertTrue(set(names) <= set(done), (k, names))
        self.assertTrue(any(before.values()))
        lost = [(n, k) for n, k in entries if n not in done]
        self.assertIn(1, [k for _, k in lost], "rank 1 had work left")

        merged = self.path("recovered.json")
        p = mbench("merge", out + ".plan", "-o", merged, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        ran1 = streamed(out, 1)
        self.assertIn(
            "rank 1 (host %s) was lost: %s" % (
                hosts[1],
                "%d of its %d benchmarks finished, the last: %s" % (
                    len(ran1), sum(k == 1 for _, k in entries), ran1[-1])
                if ran1 else "none of its"), p.stderr)
        self.assertIn("the run is incomplete: %d of %d benchmarks did not "
                      "run:\n" % (len(lost), len(entries)), p.stderr)
        listed = p.stderr.split("did not run:\n", 1)[1].splitlines()
        self.assertEqual(listed, ["  %s (rank %d)" % e for e in lost])
        # what finished, in plan order, each placed on its owner
        self.assertEqual([(r["name"], r["placement"]["rank"])
                          for r in load(merged)],
                         [(n, k) for n, k in entries if n in done])

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

    def test_trace_per_rank(self):
        # rank 0 writes FILE, rank N FILE.rankN (before the extension),
        # each with its rank as pid and its own share's benchmarks
        out, trace = self.path("t.json"), self.path("trace.json")
        p = mbench(*RUN, "-o", out, "--trace", trace, ranks=2)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = set()
        for rank, path in ((0, trace), (1, self.path("trace.rank1.json"))):
            with open(path) as f:
                events = json.load(f)
            self.assertEqual({e["pid"] for e in events}, {rank}, path)
            names |= {e["name"] for e in events if e["ph"] == "X"}
        # (an entry the plan skips never runs: no slice)
        ran = {r["id"] for r in load(out) if r["status"] != "skipped"}
        self.assertTrue(ran)
        self.assertLessEqual(ran, names)

    def test_bad_mode(self):
        p = mbench(*RUN, "--ranks-mode", "fast", ranks=2)
        self.assertEqual(p.returncode, 2)
        self.assertIn('--ranks-mode: unknown mode "fast"; valid: exclusive, '
                      "concurrent", p.stderr)


if __name__ == "__main__":
    unittest.main()
