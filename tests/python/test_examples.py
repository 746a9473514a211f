"""The Python examples run, pass, and exit non-zero when a check fails."""
import os
import subprocess
import sys
import unittest

import mbsupport


def run_example(name, *args):
    path = os.path.join(mbsupport.need(mbsupport.EXAMPLES_DIR,
                                       "MB_TEST_EXAMPLES_DIR"), name)
    return subprocess.run([sys.executable, path] + list(args),
                          capture_output=True, text=True, timeout=120)


class ExamplesTest(unittest.TestCase):
    def test_sweep(self):
        p = run_example("sweep.py", "--samples", "3")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("op "))
        self.assertEqual(len(lines), 6)
        self.assertTrue(all(line.rstrip().endswith("pass")
                            for line in lines[1:]), p.stdout)

    def test_python_kernel(self):
        p = run_example("python_kernel.py", "--samples", "3", "--shape",
                        "64x64")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("py_add", p.stdout)
        self.assertIn("microbench.benchmark(py_add)", p.stdout)

    def test_python_kernel_wrong_fails(self):
        p = run_example("python_kernel.py", "--samples", "3", "--shape",
                        "64x64", "--wrong")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("check failed: wrong_add", p.stderr)


if __name__ == "__main__":
    unittest.main()
