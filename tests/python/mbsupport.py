"""What the Python suite's modules share: the environment ctest gives them
(tests/python/CMakeLists.txt) and settings that keep every benchmark tiny."""
import os
import subprocess
import sys
import unittest

import microbench

MODULE_DIR = os.environ.get("MB_TEST_MODULE_DIR")
FIXTURE_DIR = os.environ.get("MB_TEST_FIXTURE_DIR")
EXAMPLES_DIR = os.environ.get("MB_TEST_EXAMPLES_DIR")
LAYOUT_DUMP = os.environ.get("MB_TEST_LAYOUT_DUMP")

# Three samples, no warm-up time: a benchmark measures in milliseconds.
QUICK = {"samples": 3, "warmup": 0.0, "warmup_runs": 1}

# A config of one linear layer under a recipe (and its baseline): results
# with recipe, speedup_vs_baseline, steps and accuracy, in seconds.
MODEL_YAML = """\
defaults:
  backend: cpu
  cache: hot
  timing: {samples: 3, warmup: 0}
benchmarks:
  - name: lin
    model: linear
    recipes: [int8dq]
    shapes: [[32, 64, 32]]
"""


def need(value, what):
    """Skips a test that needs an environment variable ctest sets."""
    if not value:
        raise unittest.SkipTest("%s is not set (run through ctest)" % what)
    return value


def module_context(**options):
    """A context with exactly the build's backend modules, as the C tests
    use (no $MB_BACKEND_PATH, no default directory)."""
    return microbench.Context(
        backend_path=need(MODULE_DIR, "MB_TEST_MODULE_DIR"),
        no_default_backends=True, **options)


def run_python(code, env=None, cwd=None, timeout=60):
    """Runs `code` in a fresh interpreter (a new library load); returns the
    CompletedProcess with text output."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    for key, value in list(full_env.items()):
        if value is None:
            del full_env[key]
    return subprocess.run([sys.executable, "-c", code], env=full_env,
                          cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
