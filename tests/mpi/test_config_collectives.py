"""Collectives planned from config files (docs/config.md, "Sizes" and
"Collectives from the JAX suite") run under mpirun -n 2 and are checked
exactly: the JAX suite's both layouts (small files in its style under
tests/configs/jax/collectives/) and the native `sizes` key. Run by ctest
when libmicrobench_mpi is built (MBENCH, MPIEXEC, CONFIG_DIR)."""
import json
import os
import subprocess
import tempfile
import unittest

MBENCH = os.environ["MBENCH"]
MPIEXEC = os.environ["MPIEXEC"]
CONFIGS = os.environ["CONFIG_DIR"]

SIZES = """
defaults:
  sizes: [8, 1KiB, "12 KiB"]
  dtypes: [f32, bf16]
  cache: hot
  timing: {samples: 2, warmup_runs: 1, warmup: 0}
benchmarks:
  - op: all_reduce
  - op: sendrecv
  - op: all_gather
"""


class ConfigCollectives(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_job(self, config):
        out = os.path.join(self.tmp.name, "r.json")
        p = subprocess.run(
            [MPIEXEC, "-n", "2", MBENCH, "run", "--config", config,
             "--backend", "cpu", "-o", out, "-q", "-f", "json"],
            capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return {r["name"]: r for r in json.load(f)["results"]}

    def check(self, r, op, n, dtype):
        self.assertEqual(r["status"], "ok", (r["name"], r.get("reason")))
        self.assertEqual(r["op"], op, r["name"])
        self.assertEqual(r["shape"]["N"], n, r["name"])
        self.assertEqual(r["dtypes"]["a"], dtype, r["name"])
        self.assertTrue(r["correctness"]["pass"], r["name"])
        self.assertEqual(r["params"]["ranks"], 2, r["name"])

    def test_jax_current_layout(self):
        rs = self.run_job(os.path.join(CONFIGS, "jax", "collectives",
                                       "small_current.yaml"))
        self.assertEqual(len(rs), 6 + 3)
        for dim in (1, 3):
            for op in ("sum", "max", "min"):
                r = rs["all_reduce/%d/float32/%s/mesh=2" % (dim, op)]
                self.check(r, "all_reduce", dim * 1024, "f32")
                self.assertEqual(r["params"]["reduce_op"], op)
                self.assertEqual(len(r["samples_ns"]), 2)
        # gathered over the mesh's 2 devices: 2 x 3 x 8 x 128
        self.check(rs["all_gather/3/bfloat16/mesh=1x2/shard=1x2"],
                   "all_gather", 2 * 3 * 1024, "bf16")
        # (2, 3, 256) on each device
        self.check(rs["reduce_scatter/3/float32/mesh=2"], "reduce_scatter",
                   2 * 3 * 256, "f32")
        self.check(rs["all_to_all/2/int32"], "all_to_all", 2048, "i32")

    def test_jax_legacy_layout(self):
        rs = self.run_job(os.path.join(CONFIGS, "jax", "collectives",
                                       "small_legacy.yaml"))
        self.assertEqual(len(rs), 3 + 4)
        for dim in (1, 2, 4):
            self.check(rs["psum/%dx8x128/float32/mesh=2/shard=2" % dim],
                       "all_reduce", dim * 1024, "f32")
        self.check(rs["psum_scatter/2x3x256/bfloat16/mesh=2x1/shard=2x1"],
                   "reduce_scatter", 2 * 3 * 256, "bf16")
        self.check(rs["all_gather/3x8x128/float16/mesh=2/shard=2"],
                   "all_gather", 2 * 3 * 1024, "f16")
        self.check(rs["all_to_all/2x8x128/int32/mesh=2/shard=2"],
                   "all_to_all", 2048, "i32")
        # ppermute's ring of each device's 33 x 33 matrix (odd: no blocks)
        self.check(rs["ppermute/33x33/float32"], "sendrecv", 33 * 33, "f32")

    def test_native_sizes(self):
        config = os.path.join(self.tmp.name, "sizes.yaml")
        with open(config, "w") as f:
            f.write(SIZES)
        rs = self.run_job(config)
        self.assertEqual(len(rs), 3 * 3 * 2)
        for op in ("all_reduce", "sendrecv", "all_gather"):
            for label, size in (("8B", 8), ("1KiB", 1024), ("12KiB", 12288)):
                for dtype, width in (("f32", 4), ("bf16", 2)):
                    r = rs["%s/%s/%s" % (op, label, dtype)]
                    self.check(r, op, size // width, dtype)
                    # the bytes written, whatever the dtype: GB/s is algbw
                    self.assertEqual(r["derived"]["bytes"], size, r["name"])


if __name__ == "__main__":
    unittest.main()
