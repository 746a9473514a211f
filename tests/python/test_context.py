"""Contexts: the backends they load, their devices and kernels, logging
to a logging.Logger, closing."""
import logging
import os
import unittest

import microbench

import mbsupport


class ListHandler(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


class ContextTest(unittest.TestCase):
    def test_module_dir_only(self):
        with mbsupport.module_context() as ctx:
            backends = ctx.backends()
            # Exactly the modules in that directory (cuda too where nvcc
            # built it), and nothing from anywhere else.
            present = sorted(
                f[len("mb_backend_"):-len(".so")]
                for f in os.listdir(mbsupport.MODULE_DIR)
                if f.startswith("mb_backend_") and f.endswith(".so"))
            self.assertEqual(sorted(b["name"] for b in backends), present)
            (cpu,) = [b for b in backends if b["name"] == "cpu"]
            self.assertTrue(cpu["loaded"])
            self.assertEqual(cpu["devices"], 1)
            self.assertEqual(os.path.dirname(cpu["path"]),
                             os.path.normpath(mbsupport.MODULE_DIR))

    def test_default_module_dir_beside_the_library(self):
        # The build tree mirrors the install tree: lib/microbench/ holds the
        # modules next to lib/libmicrobench.so.
        with microbench.Context() as ctx:
            cpu = [b for b in ctx.backends() if b["name"] == "cpu"]
            self.assertTrue(cpu and cpu[0]["loaded"], ctx.backends())
            libdir = os.path.dirname(os.path.realpath(
                microbench.library_path()))
            self.assertEqual(os.path.dirname(os.path.realpath(
                cpu[0]["path"])), os.path.join(libdir, "microbench"))

    def test_modules_that_fail_are_listed_with_a_reason(self):
        fixtures = mbsupport.need(mbsupport.FIXTURE_DIR, "MB_TEST_FIXTURE_DIR")
        dirs = [os.path.join(fixtures, d) for d in ("garbage", "abi")]
        with microbench.Context(backend_path=dirs,
                                no_default_backends=True) as ctx:
            backends = ctx.backends()
        self.assertEqual(len(backends), 2)
        for b in backends:
            self.assertFalse(b["loaded"])
            self.assertTrue(b["reason"])

    def test_backend_path_that_is_no_path(self):
        # Context(backend_path=5) raised os.fsencode's TypeError.
        for bad in (5, [None], ["dir", 3.5]):
            with self.assertRaises(microbench.Error) as cm:
                microbench.Context(backend_path=bad)
            self.assertIn("backend_path", str(cm.exception))
            self.assertIn("is not a path", str(cm.exception))

    def test_devices(self):
        with mbsupport.module_context() as ctx:
            devices = ctx.devices()
            self.assertEqual(len(devices), 1)
            d = devices[0]
            self.assertEqual((d["backend"], d["index"], d["kind"]),
                             ("cpu", 0, "cpu"))
            self.assertGreater(d["compute_units"], 0)
            self.assertIn("llc", d["cache_bytes"])
            self.assertIsInstance(d["environment"], dict)
            self.assertGreater(d["peak_flops"].get("f32", 0), 0)
            calibrated = ctx.devices(calibrate=True)[0]
            self.assertGreater(calibrated["timer"]["readings"], 0)
            self.assertIn("how", calibrated["flush_check"])

    def test_kernels(self):
        with mbsupport.module_context() as ctx:
            gemm = ctx.kernels(op="matmul")  # an alias of gemm
            self.assertTrue(gemm)
            self.assertTrue(all(k["op"] == "gemm" for k in gemm))
            self.assertIn("c", {k["name"] for k in gemm})
            self.assertFalse(any(k["user"] for k in gemm))
            self.assertGreater(len(ctx.kernels()), len(gemm))
            with self.assertRaises(microbench.Error) as cm:
                ctx.kernels(op="gemmm")
            self.assertEqual(cm.exception.status, "MB_ERR_NOT_FOUND")
            self.assertIn("valid ops", str(cm.exception))

    def test_closed_context(self):
        ctx = mbsupport.module_context()
        ctx.close()
        ctx.close()  # twice is fine
        self.assertTrue(ctx.closed)
        with self.assertRaises(microbench.Error):
            ctx.backends()

    def test_log_lines_go_to_the_logger(self):
        logger = logging.getLogger("microbench.test.debug")
        handler = ListHandler()
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        try:
            with mbsupport.module_context(log_level="debug",
                                          logger=logger) as ctx:
                ctx.devices()  # the cpu backend starts and says so (debug)
        finally:
            logger.removeHandler(handler)
        messages = [r.getMessage() for r in handler.records]
        self.assertTrue(any(m.startswith("cpu: ") for m in messages),
                        messages)
        self.assertTrue(all(r.levelno >= logging.DEBUG
                            for r in handler.records))

    def test_log_level_filters(self):
        logger = logging.getLogger("microbench.test.warn")
        handler = ListHandler()
        logger.addHandler(handler)
        logger.propagate = False
        try:
            with mbsupport.module_context(log_level="warn",
                                          logger=logger) as ctx:
                ctx.devices()
        finally:
            logger.removeHandler(handler)
        self.assertFalse([r for r in handler.records
                          if r.levelno < logging.WARNING])

    def test_bad_log_level(self):
        with self.assertRaises(microbench.Error) as cm:
            microbench.Context(log_level="loud")
        self.assertIn("debug", str(cm.exception))

    def test_default_context_is_shared(self):
        self.assertIs(microbench.default_context(),
                      microbench.default_context())
        names = [b["name"] for b in microbench.list_backends()]
        self.assertIn("cpu", names)
        self.assertTrue(microbench.list_devices())


if __name__ == "__main__":
    unittest.main()
