"""Python functions as user kernels: timed and checked like any kernel; a
wrong one fails its check, one that raises fails with the exception's text
in the reason."""
import array
import operator
import os
import threading
import unittest

import microbench

import mbsupport

QUICK = mbsupport.QUICK


def add(x, y, z):
    z.array(flat=True)[:] = array.array(
        "f", map(operator.add, x.array(flat=True), y.array(flat=True)))


def wrong_add(x, y, z):
    z.array(flat=True)[:] = array.array(
        "f", map(operator.sub, x.array(flat=True), y.array(flat=True)))


def boom(x, y, z):
    raise ValueError("no adding today")


def copy(x, y):
    y.array(flat=True)[:] = x.array(flat=True)


class KernelTest(unittest.TestCase):
    def setUp(self):
        self.ctx = mbsupport.module_context()

    def tearDown(self):
        self.ctx.close()

    def test_correct_kernel_passes(self):
        self.ctx.register_kernel("add", "mine", add)
        r = self.ctx.run(op="add", shape=(32, 64), impl="mine", **QUICK)
        self.assertEqual((r.status, r.impl, r.backend), ("ok", "mine", "cpu"))
        self.assertTrue(r.passed, r.correctness)
        self.assertEqual(len(r.samples), 3)
        self.assertTrue(all(s > 0 for s in r.samples))
        self.assertIsNone(r.kernel_exception)
        mine = [k for k in self.ctx.kernels(op="add") if k["user"]]
        self.assertEqual(mine, [{"op": "add", "name": "mine",
                                 "backend": "cpu", "dtype": "f32",
                                 "dtype_out": None, "user": True}])

    def test_user_kernel_is_chosen_without_impl(self):
        self.ctx.register_kernel("add", "mine", add)
        r = self.ctx.run(op="add", shape=(8, 8), **QUICK)
        self.assertEqual(r.impl, "mine")

    def test_wrong_kernel_fails_its_check(self):
        self.ctx.register_kernel("add", "wrong", wrong_add)
        r = self.ctx.run(op="add", shape=(16, 16), impl="wrong", **QUICK)
        self.assertEqual(r.status, "ok")  # it ran and was timed ...
        self.assertTrue(r.correctness["checked"])
        self.assertFalse(r.passed)  # ... and is wrong
        self.assertEqual(r.check_text(), "FAIL")
        strict = self.ctx.run(op="add", shape=(16, 16), impl="wrong",
                              strict=True, **QUICK)
        self.assertEqual(strict.status, "failed")
        self.assertIn("wrong result", strict.reason)

    def test_raising_kernel_fails_with_the_exception(self):
        self.ctx.register_kernel("add", "boom", boom)
        r = self.ctx.run(op="add", shape=(16, 16), impl="boom", **QUICK)
        self.assertEqual(r.status, "failed")
        self.assertIn("boom: ValueError: no adding today", r.reason)
        self.assertIsInstance(r.kernel_exception, ValueError)
        self.assertIsNotNone(r.kernel_exception.__traceback__)
        # The next run starts clean.
        self.ctx.register_kernel("add", "mine", add)
        ok = self.ctx.run(op="add", shape=(16, 16), impl="mine", **QUICK)
        self.assertIsNone(ok.kernel_exception)

    def test_setup_and_teardown(self):
        calls = []
        self.ctx.register_kernel(
            "add", "staged", add,
            setup=lambda *t: calls.append(("setup", len(t))),
            teardown=lambda *t: calls.append(("teardown", len(t))))
        r = self.ctx.run(op="add", shape=(8, 8), impl="staged", **QUICK)
        self.assertTrue(r.passed)
        self.assertEqual(calls, [("setup", 3), ("teardown", 3)])

    def test_setup_that_raises(self):
        def setup(*tensors):
            raise RuntimeError("no workspace")
        self.ctx.register_kernel("add", "nosetup", add, setup=setup)
        r = self.ctx.run(op="add", shape=(8, 8), impl="nosetup", **QUICK)
        self.assertEqual(r.status, "failed")
        self.assertIn("nosetup: RuntimeError: no workspace", r.reason)

    def test_tensors(self):
        seen = {}

        def inspect(x, y):
            seen["x"] = (x.dtype, x.shape, x.nbytes, x.array().format,
                         x.array().shape, x.array(flat=True).shape)
            seen["ptr"] = x.ptr
            seen["thread"] = threading.get_ident()
            copy(x, y)

        self.ctx.register_kernel("copy", "inspect", inspect, dtype="bf16")
        r = self.ctx.run(op="copy", shape=(4, 6), dtype="bf16",
                         impl="inspect", **QUICK)
        self.assertTrue(r.passed, r.reason)
        self.assertEqual(seen["x"], ("bf16", (4, 6), 48, "H", (4, 6), (24,)))
        self.assertGreater(seen["ptr"], 0)
        # Callbacks run on the thread that called run().
        self.assertEqual(seen["thread"], threading.get_ident())

    def test_f32_tensor_view(self):
        seen = {}

        def inspect(x, y):
            a = x.array()
            seen["x"] = (a.format, a.shape, a[1, 2] == a.tolist()[1][2])
            copy(x, y)

        self.ctx.register_kernel("copy", "view", inspect)
        r = self.ctx.run(op="copy", shape=(3, 5), impl="view", **QUICK)
        self.assertTrue(r.passed, r.reason)
        self.assertEqual(seen["x"], ("f", (3, 5), True))

    def test_kept_arrays_are_revoked(self):
        # A kernel that keeps its arrays or Tensors past the call: writing
        # through them later would write memory the library freed; now the
        # kept view raises ValueError and the kept Tensor an Error.
        kept = {}

        def keeper(x, y):
            kept["view"] = y.array(flat=True)
            kept["tensor"] = y
            copy(x, y)

        self.ctx.register_kernel("copy", "keeper", keeper)
        r = self.ctx.run(op="copy", shape=(4, 4), impl="keeper", **QUICK)
        self.assertTrue(r.passed, r.reason)
        with self.assertRaises(ValueError):
            kept["view"][0] = 1.0
        with self.assertRaises(microbench.Error) as cm:
            kept["tensor"].array()
        self.assertIn("used after its benchmark ended", str(cm.exception))

    def test_numpy_view(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            def probe(x, y):
                with self.assertRaises(microbench.Error):
                    x.numpy()
                copy(x, y)
        else:
            def probe(x, y):
                y.numpy()[...] = x.numpy()
        self.ctx.register_kernel("copy", "np", probe)
        r = self.ctx.run(op="copy", shape=(4, 4), impl="np", **QUICK)
        self.assertTrue(r.passed, r.reason)

    def test_device_memory_is_not_read_from_the_host(self):
        # The emulated GPU backend (a test fixture) says its memory is a
        # device's: array() refuses rather than dereference it.
        fixtures = mbsupport.need(mbsupport.FIXTURE_DIR, "MB_TEST_FIXTURE_DIR")
        module = os.path.join(fixtures, "gpuemu", "mb_backend_gpuemu.so")
        if not os.path.exists(module):
            self.skipTest("the gpuemu fixture is not built (no ucontext.h)")
        seen = {}

        def probe(x, y, z):
            seen["host"] = x.host
            with self.assertRaises(microbench.Error) as cm:
                x.array()
            seen["error"] = str(cm.exception)

        with microbench.Context(backend_path=os.path.join(fixtures, "gpuemu"),
                                no_default_backends=True) as ctx:
            ctx.register_kernel("add", "probe", probe, backend="gpuemu")
            r = ctx.run(op="add", shape=(8, 8), backend="gpuemu",
                        impl="probe", **QUICK)
        self.assertEqual(r.status, "ok", r.reason)
        self.assertFalse(seen["host"])
        self.assertIn("device memory", seen["error"])

    def test_keyboard_interrupt_is_not_swallowed(self):
        def interrupted(x, y, z):
            raise KeyboardInterrupt

        self.ctx.register_kernel("add", "ctrlc", interrupted)
        with self.assertRaises(KeyboardInterrupt):
            self.ctx.run(op="add", shape=(8, 8), impl="ctrlc", **QUICK)

    def test_registration_errors(self):
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.register_kernel("add", "Bad-Name", add)
        self.assertIn("[a-z0-9_]+", str(cm.exception))
        self.ctx.register_kernel("add", "twice", add)
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.register_kernel("add", "twice", add)
        self.assertIn("already registered", str(cm.exception))
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.register_kernel("addd", "x", add)
        self.assertIn("valid ops", str(cm.exception))
        with self.assertRaises(microbench.Error) as cm:
            self.ctx.register_kernel("add", "x", add, dtype="f99")
        self.assertIn("dtype:", str(cm.exception))
        with self.assertRaises(TypeError):
            self.ctx.register_kernel("add", "x", "not a function")


class BenchmarkTest(unittest.TestCase):
    def test_benchmark_in_a_private_context(self):
        r = microbench.benchmark(add, op="add", shape=(16, 16), **QUICK)
        self.assertEqual(r.impl, "py_add")
        self.assertTrue(r.passed)

    def test_wrong_function(self):
        r = microbench.benchmark(wrong_add, op="add", shape=(16, 16), **QUICK)
        self.assertFalse(r.passed)

    def test_names_are_made_unique_in_a_given_context(self):
        with mbsupport.module_context() as ctx:
            a = microbench.benchmark(add, shape=(8, 8), context=ctx, **QUICK)
            b = microbench.benchmark(add, shape=(8, 8), context=ctx, **QUICK)
            c = microbench.benchmark(lambda x, y, z: add(x, y, z),
                                     shape=(8, 8), context=ctx, **QUICK)
        self.assertEqual((a.impl, b.impl, c.impl),
                         ("py_add", "py_add_2", "py__lambda_"))
        self.assertTrue(a.passed and b.passed and c.passed)


if __name__ == "__main__":
    unittest.main()
