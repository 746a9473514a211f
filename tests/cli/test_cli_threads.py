"""The CPU backend's oneDNN primitives that every thread runs on its own
(the int4 weight-only GEMM's tiles, attention's two matmuls) book one
thread's scratchpad, whatever the number of threads: mbench -v -v logs each
primitive's scratchpad, and a run on one core (the backend runs one thread
per core it may use) must log the same sizes as a run on two. Created where
oneDNN sees every thread, each of those scratchpads held every thread's
share: threads^2 shares in all, 344 MB of tiles on a 64-core machine.
Run by ctest (cli_threads) with MBENCH set; needs oneDNN and two CPUs."""
import os
import re
import subprocess
import unittest

MBENCH = os.environ.get("MBENCH", "mbench")
CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
QUICK = ["--samples", "1", "--warmup", "0", "-v", "-v"]
LINE = re.compile(r"cpu/onednn: (.*?)(?: uses .*)?: scratchpad (\d+) bytes")


def scratchpads(args, cpus):
    """{primitive: sorted sizes} that a run of mbench on `cpus` logged, and
    the run; None when the kernel is not in this build."""
    env = dict(os.environ)
    env.pop("MB_BACKEND_PATH", None)
    p = subprocess.run([MBENCH, "run", *args, *QUICK], capture_output=True, text=True,
                       env=env, timeout=600,
                       preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    # Not in this build, or declined on this CPU (no AVX512-BF16; oneDNN
    # without a bf16 matmul here): nothing to compare.
    if p.returncode != 0 and any(w in p.stderr for w in (
            "unknown implementation", "needs a CPU with", "has no implementation")):
        return None, p
    sizes = {}
    for what, n in LINE.findall(p.stderr):
        sizes.setdefault(what, []).append(int(n))
    return {k: sorted(v) for k, v in sizes.items()}, p


@unittest.skipUnless(len(CPUS) >= 2, "needs two CPUs to run on")
class OneThreadScratchpads(unittest.TestCase):
    def same_on_one_and_two(self, args, expect):
        one, p1 = scratchpads(args, CPUS[:1])
        if one is None:
            self.skipTest("%s: not in this build or not on this CPU: %s"
                          % (" ".join(args), p1.stderr.strip().splitlines()[-1:]))
        two, p2 = scratchpads(args, CPUS[:2])
        self.assertEqual(p1.returncode, 0, p1.stderr)
        self.assertEqual(p2.returncode, 0, p2.stderr)
        self.assertIn("pass", p2.stdout)
        self.assertIn(expect, one, p1.stderr)
        if not any(one[expect]):  # this CPU's implementation books none
            self.skipTest("%s: no scratchpad to compare here (%s)" % (expect, one))
        # One thread: one set of primitives; two: each primitive twice
        # (weight-only: a set per thread) or once (attention: shared), the
        # same size every time.
        self.assertEqual(sorted(set(two[expect])), sorted(set(one[expect])),
                         "%s: on 1 core %s, on 2 %s" % (expect, one, two))

    def test_weight_only_tiles(self):
        self.same_on_one_and_two(
            ["--op", "gemm", "--dtype", "bf16", "--dtype-b", "i4", "--scale-b",
             "group:128", "--shape", "300x256x600", "--impl", "onednn_bf16"],
            "gemm bf16->f32")

    def test_attention_matmuls(self):
        self.same_on_one_and_two(
            ["--op", "attention", "--dtype", "bf16", "--shape", "1x2x128x300x64",
             "--impl", "onednn"], "attention Q K^T")


if __name__ == "__main__":
    unittest.main()
