"""mbench list: kernels grouped per backend (those with a device unless
--all), the primitives a composite runs on, flags spelled as options,
presets a line each, and --names for completion scripts."""
import os
import re
import unittest

from test_cli import FIXTURES, mbench, own_stderr


def kernel_lines(text):
    """The lines under an op that name a backend's kernels."""
    out = []
    for line in text.splitlines():
        if line.startswith("    kernels: "):
            out.append(line[len("    kernels: "):])
        elif out and line.startswith("             "):
            out.append(line.strip())
    return out


class Ops(unittest.TestCase):
    def test_kernels_a_line_per_backend_without_repeats(self):
        p = mbench("list", "ops", "gemm")
        self.assertEqual(p.returncode, 0, p.stderr)
        (line,) = kernel_lines(p.stdout)
        backend, rest = line.split(": ", 1)
        self.assertEqual(backend, "cpu")
        impls, dtypes = re.fullmatch(r"(.*) \((.*)\)", rest).groups()
        for words in (impls.split(", "), dtypes.split(", ")):
            self.assertEqual(len(words), len(set(words)), line)
        self.assertIn("c", impls.split(", "))
        self.assertIn("f32", dtypes.split(", "))
        self.assertNotIn("->", line)  # pairs only with --all
        self.assertLess(len(line), 120)

    @unittest.skipUnless(FIXTURES, "MB_TEST_FIXTURE_DIR not set")
    def test_backends_without_a_device_only_with_all(self):
        env = {"MB_BACKEND_PATH": ":".join(
            os.path.join(FIXTURES, d) for d in ("nodevice", "gpuemu"))}
        p = mbench("list", "ops", "copy", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = kernel_lines(p.stdout)
        self.assertEqual([l.split(":")[0] for l in lines], ["gpuemu", "cpu"])
        self.assertIn("gpuemu: native, memcpy (f32, bf16", p.stdout)
        self.assertNotIn("nodevice", p.stdout)
        for flag in ("--all", "-a", "-v"):
            p = mbench("list", "ops", "copy", flag, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            names = [l.split(":")[0] for l in kernel_lines(p.stdout)]
            # The build's own GPU modules (CI builds cuda and hip) follow,
            # without a device on a machine without a GPU.
            self.assertEqual(names[:3],
                             ["nodevice (no device)", "gpuemu", "cpu"])
            for name in names[3:]:
                self.assertIn(name, ("cuda (no device)", "hip (no device)",
                                     "cuda", "hip"))
            self.assertIn("nodevice (no device): ok (f32->any), segv "
                          "(f32->any)", p.stdout)
            self.assertIn("cpu: c (f32->f32, bf16->bf16", p.stdout)

    def test_composites_name_their_primitives(self):
        p = mbench("list", "ops")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("none loaded", p.stdout)
        ops = dict(re.findall(r"(?m)^(\w+)  \S+\n((?:    .*\n)+)", p.stdout))
        graph = {op: re.search(r"runs as a graph of: (.*) \(", text)
                 for op, text in ops.items()}
        runs = {op: m.group(1).split(", ") for op, m in graph.items() if m}
        self.assertEqual(sorted(runs), ["linear", "linear_training",
                                        "ln_linear", "moe_layer_proxy",
                                        "transformer_block"])
        # add: the HQQ recipes' zero-point term (lib/models/layer_graph.c);
        # the sparse GEMMs: the sparsity recipes'
        self.assertEqual(runs["linear"],
                         ["add", "dequantize", "gemm", "gemm_block_sparse",
                          "gemm_sparse24", "quantize"])
        for prim in ("attention", "rmsnorm", "gemm", "add"):
            self.assertIn(prim, runs["transformer_block"])
        # the JAX suite's MoE layer proxy: no recipe, so no quantize
        self.assertEqual(runs["moe_layer_proxy"], ["add", "gemm", "layernorm"])
        for op, prims in runs.items():
            for prim in prims:
                self.assertIn(prim, ops, op)  # each a listed op
                self.assertNotIn(prim, runs)  # and a primitive

    def test_flags_spelled_as_options(self):
        p = mbench("list", "ops")
        self.assertEqual(p.returncode, 0, p.stderr)
        options = set(re.findall(r"--[a-z0-9-]+",
                                 mbench("run", "--help").stdout))
        params = [l for l in p.stdout.splitlines()
                  if l.startswith("    params: ")]
        named = set(re.findall(r"--[a-z0-9-]+", "\n".join(params)))
        self.assertLessEqual(named, options)
        for flag in ("--no-affine", "--causal", "--bshd", "--tf32",
                     "--fast-accum", "--trans-a", "--quantize-inputs",
                     "--transpose"):
            self.assertIn(flag, named)
        self.assertNotIn("no-weight", p.stdout)
        self.assertNotIn("no_affine", p.stdout)
        self.assertIn("params: eps (1e-5); --no-affine: no W, Bias",
                      mbench("list", "ops", "layernorm").stdout)

    def test_one_op_and_an_alias(self):
        p = mbench("list", "ops", "rms_norm")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("rmsnorm  MxN\n"), p.stdout)
        self.assertNotIn("aliases", p.stdout)
        p = mbench("list", "ops", "nope")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn('unknown op "nope"', p.stderr)


class Presets(unittest.TestCase):
    def test_unknown_preset_and_names_elsewhere(self):
        p = mbench("list", "presets", "nope")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn("valid: custom, llama", p.stderr)
        p = mbench("list", "presets", "custom")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "custom: the shapes listed in the config "
                                   "file\n")
        p = mbench("list", "recipes", "int8dq")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn("list recipes takes no name", p.stderr)


class Names(unittest.TestCase):
    def names(self, *args):
        p = mbench("list", *args, "--names")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(own_stderr(p.stderr), "")
        words = p.stdout.split("\n")
        self.assertEqual(words[-1], "")  # a line each, nothing else
        for w in words[:-1]:
            self.assertRegex(w, r"^[a-z0-9_.:-]+$")
        return words[:-1]

    def test_every_list_names_what_it_lists(self):
        lists = self.names()
        self.assertEqual(lists, ["ops", "backends", "devices", "presets",
                                 "recipes", "models", "dtypes"])
        for what in lists:
            self.assertEqual(mbench("list", what).returncode, 0, what)
            self.assertTrue(self.names(what), what)
        ops = self.names("ops")
        self.assertIn("gemm", ops)
        self.assertIn("transformer_block", ops)
        self.assertIn("gemm_fp8_rowwise", ops)  # aliases too
        self.assertEqual(len(ops), len(set(ops)))
        self.assertEqual(self.names("dtypes"), [
            "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i8", "i4", "i32",
            "e8m0", "f4e2m1"])
        recipes = mbench("list", "recipes").stdout.splitlines()[1:]
        self.assertEqual(self.names("recipes"), [l.split()[0] for l in recipes])
        self.assertIn("ln_linear_gelu", self.names("models"))
        self.assertIn("sweep", self.names("presets"))
        self.assertIn("cpu", self.names("backends"))
        self.assertIn("cpu:0", self.names("devices"))

    def test_names_take_no_name(self):
        p = mbench("list", "presets", "llama", "--names")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        p = mbench("list", "things", "--names")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn("valid: ops, backends, devices, presets, recipes, "
                      "models, dtypes", p.stderr)


class Devices(unittest.TestCase):
    @unittest.skipUnless(FIXTURES, "MB_TEST_FIXTURE_DIR not set")
    def test_caches_only_the_levels_known(self):
        # A GPU's L2 is its last level: no per-unit L2 to print as 0 KiB.
        env = {"MB_BACKEND_PATH": os.path.join(FIXTURES, "gpuemu")}
        p = mbench("list", "devices", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        caches = re.findall(r"(?m)^    caches: (.*)$", p.stdout)
        self.assertEqual(len(caches), 2, p.stdout)  # gpuemu:0, cpu:0
        gpu, cpu = caches
        self.assertRegex(gpu, r"^last level \d+ KiB$")
        self.assertRegex(cpu, r"^L1d \d+ KiB, L2 \d+ KiB, last level \d+ KiB$")
        self.assertNotIn(" 0 KiB", p.stdout)


if __name__ == "__main__":
    unittest.main()
