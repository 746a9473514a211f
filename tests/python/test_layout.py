"""The ctypes mirrors have the compiler's layout: every struct's size and
alignment and every field's offset and size (tests/python/layout_dump.c)."""
import ctypes
import subprocess
import unittest

from microbench import _structs

import mbsupport


def compiler_layout():
    """{struct: (size, align, {field: (offset, size)})} from the dump."""
    exe = mbsupport.need(mbsupport.LAYOUT_DUMP, "MB_TEST_LAYOUT_DUMP")
    out = subprocess.run([exe], check=True, capture_output=True,
                         text=True).stdout
    structs = {}
    for line in out.splitlines():
        kind, name, *numbers = line.split()
        if kind == "struct":
            structs[name] = (int(numbers[0]), int(numbers[1]), {})
        else:
            struct, field = name.split(".")
            structs[struct][2][field] = (int(numbers[0]), int(numbers[1]))
    return structs


class LayoutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.layout = compiler_layout()

    def test_every_mirror_is_dumped_and_every_dump_mirrored(self):
        self.assertEqual(set(self.layout), set(_structs.MIRRORS))

    def test_sizes_and_alignment(self):
        for name, cls in _structs.MIRRORS.items():
            size, align, _ = self.layout[name]
            with self.subTest(struct=name):
                self.assertEqual(ctypes.sizeof(cls), size)
                self.assertEqual(ctypes.alignment(cls), align)

    def test_fields(self):
        for name, cls in _structs.MIRRORS.items():
            fields = self.layout[name][2]
            mirrored = [f[0] for f in cls._fields_]
            c_names = [_structs.FIELD_RENAMES.get(f, f) for f in mirrored]
            with self.subTest(struct=name):
                # The same fields in the same order: a field the mirror
                # lacks or invents fails here, not as a wrong offset.
                self.assertEqual(c_names, list(fields))
            for field, c_name in zip(mirrored, c_names):
                with self.subTest(struct=name, field=c_name):
                    descr = getattr(cls, field)
                    self.assertEqual((descr.offset, descr.size),
                                     fields[c_name])

    def test_defaults_match_init_macros(self):
        # Spot checks of the *_INIT macros the mirrors copy.
        spec = _structs.BenchSpec()
        self.assertEqual(spec.struct_size, ctypes.sizeof(spec))
        self.assertEqual((spec.min_samples, spec.min_time_s, spec.max_noise,
                          spec.timeout_s, spec.warmup_s, spec.warmup_runs,
                          spec.seed, spec.repetitions),
                         (10, 0.5, 0.005, 15.0, 0.025, 1, 42, 1))
        params = _structs.OpParams()
        self.assertEqual((params.alpha, params.beta, params.act_alpha,
                          params.eps), (1.0, 0.0, 0.01, 1e-5))
        self.assertEqual(_structs.KernelDesc().backend, b"cpu")
        self.assertEqual(_structs.ContextOptions().log_level,
                         _structs.LOG_WARN)


if __name__ == "__main__":
    unittest.main()
