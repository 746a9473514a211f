"""Finding and loading the library: the order of the places searched, the
errors when it is not found, lazy loading, the version check."""
import os
import shutil
import tempfile
import textwrap
import unittest

import microbench
from microbench import _lib

import mbsupport

PACKAGE_DIR = os.path.dirname(os.path.abspath(microbench.__file__))


def copy_package(dest_root, relpath, file):
    """A copy of the package under dest_root whose _location.py says
    LIBRARY_RELPATH = relpath; returns the directory to put on PYTHONPATH
    (dest_root)."""
    pkg = os.path.join(dest_root, "microbench")
    shutil.copytree(PACKAGE_DIR, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(pkg, "_location.py"), "w") as f:
        f.write("LIBRARY_RELPATH = %r\nLIBRARY_FILE = %r\n" % (relpath, file))
    return dest_root


def system_has_library():
    """Whether the system search alone finds a libmicrobench (asked in a
    fresh process: this one has loaded the build's, and dlopen of its
    soname would return that)."""
    p = mbsupport.run_python(
        "import ctypes, ctypes.util\n"
        "found = bool(ctypes.util.find_library('microbench'))\n"
        "try:\n"
        "    ctypes.CDLL(%r); found = True\n"
        "except OSError:\n"
        "    pass\n"
        "print(found)" % _lib.SONAME, env={"LD_LIBRARY_PATH": None})
    return p.stdout.strip() != "False"


class LibraryTest(unittest.TestCase):
    def test_version_and_commit(self):
        self.assertRegex(microbench.version(), r"^0\.\d+\.\d+$")
        self.assertTrue(microbench.git_commit())

    def test_status_table_is_the_librarys(self):
        # errors.py names statuses before the library is loaded; its table
        # must be common.h's MB_STATUS_MAP, code for code.
        from microbench import errors
        for code, name in errors.STATUS_NAMES.items():
            self.assertEqual(_lib.lib().mb_status_name(code).decode(), name)
        # One past the last code is not a status (the map is complete).
        last = min(errors.STATUS_NAMES)
        self.assertNotIn(_lib.lib().mb_status_name(last - 1).decode(),
                         errors.STATUS_NAMES.values())

    def test_library_path_is_the_build_tree_library(self):
        # The build tree's package finds build/lib through _location.py.
        path = microbench.library_path()
        self.assertTrue(os.path.isfile(path), path)
        expected = os.path.normpath(os.path.join(
            PACKAGE_DIR, microbench._location.LIBRARY_RELPATH,
            microbench._location.LIBRARY_FILE))
        self.assertEqual(os.path.realpath(path), os.path.realpath(expected))

    def test_import_does_not_load(self):
        # A missing library fails the first call, not the import.
        p = mbsupport.run_python(
            "import microbench, microbench._lib as L\n"
            "assert L._loaded is None\n"
            "print(microbench.Error.__name__)",
            env={"MICROBENCH_LIBRARY": "/nonexistent/libmicrobench.so"})
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_environment_variable_that_does_not_load(self):
        p = mbsupport.run_python(
            "import microbench\n"
            "try:\n"
            "    microbench.version()\n"
            "except microbench.Error as e:\n"
            "    print(e.status); print(e)\n",
            env={"MICROBENCH_LIBRARY": "/nonexistent/libmicrobench.so"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("MB_ERR_NOT_FOUND", p.stdout)
        # Names the variable, the path and the loader's reason; no fall
        # through to the library beside the package.
        self.assertIn("MICROBENCH_LIBRARY=/nonexistent/libmicrobench.so",
                      p.stdout)
        self.assertIn("No such file", p.stdout)

    def test_environment_variable_chooses_the_library(self):
        real = microbench.library_path()
        p = mbsupport.run_python(
            "import microbench; print(microbench.library_path())",
            env={"MICROBENCH_LIBRARY": real})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.path.realpath(p.stdout.strip()),
                         os.path.realpath(real))

    def test_not_found_lists_every_place_tried(self):
        if system_has_library():
            self.skipTest("libmicrobench is installed system-wide here")
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_package(tmp, "../nowhere", "libmicrobench.so.0")
            p = mbsupport.run_python(
                "import microbench\n"
                "try:\n"
                "    microbench.run(op='add', shape=(4, 4))\n"
                "except microbench.Error as e:\n"
                "    print(e.status); print(e)\n",
                env={"PYTHONPATH": root, "MICROBENCH_LIBRARY": None,
                     "LD_LIBRARY_PATH": None})
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        self.assertIn("MB_ERR_NOT_FOUND", out)
        self.assertIn("$MICROBENCH_LIBRARY: not set", out)
        self.assertIn("beside the package (_location.py): %s: no such file"
                      % os.path.join(tmp, "nowhere", "libmicrobench.so.0"),
                      out)
        self.assertIn("ctypes.util.find_library('microbench'): not found",
                      out)
        self.assertIn("the system loader: libmicrobench.so.0", out)

    def test_source_checkout_finds_build_lib(self):
        # <repo>/python/microbench with LIBRARY_RELPATH None looks in
        # <repo>/build/lib.
        real = os.path.realpath(microbench.library_path())
        with tempfile.TemporaryDirectory() as repo:
            root = copy_package(os.path.join(repo, "python"), None, None)
            os.makedirs(os.path.join(repo, "build", "lib"))
            os.symlink(real, os.path.join(repo, "build", "lib",
                                          _lib.SONAME))
            p = mbsupport.run_python(
                "import microbench; print(microbench.library_path())",
                env={"PYTHONPATH": root, "MICROBENCH_LIBRARY": None})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(),
                         os.path.join(repo, "build", "lib", _lib.SONAME))

    def test_major_version_mismatch(self):
        p = mbsupport.run_python(textwrap.dedent("""
            import microbench, microbench._lib as L
            L.EXPECTED_MAJOR = 7
            try:
                microbench.version()
            except microbench.Error as e:
                print(e.status); print(e)
            """))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("MB_ERR_ABI", p.stdout)
        self.assertIn("this package needs major 7", p.stdout)


if __name__ == "__main__":
    unittest.main()
