"""The ctypes mirrors have the compiler's layout: every struct's size and
alignment and every field's offset and size; and the constants the package
mirrors have the headers' values, every op flag of MB_PARAM_FLAG_LIST
included (tests/python/layout_dump.c)."""
import ctypes
import inspect
import subprocess
import unittest

from microbench import _spec, _structs

import mbsupport


def compiler_dump():
    """The dump's lines: ({struct: (size, align, {field: (offset, size)})},
    {constant: value}, [(flag NAME, key, set_by)])."""
    exe = mbsupport.need(mbsupport.LAYOUT_DUMP, "MB_TEST_LAYOUT_DUMP")
    out = subprocess.run([exe], check=True, capture_output=True,
                         text=True).stdout
    structs, constants, flags = {}, {}, []
    for line in out.splitlines():
        kind, name, *rest = line.split()
        if kind == "struct":
            structs[name] = (int(rest[0]), int(rest[1]), {})
        elif kind == "field":
            struct, field = name.split(".")
            structs[struct][2][field] = (int(rest[0]), int(rest[1]))
        elif kind == "const":
            constants[name] = int(rest[0])
        else:
            flags.append((name, rest[0], rest[1]))
    return structs, constants, flags


class LayoutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.layout, _, _ = compiler_dump()

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
        cmp = _structs.CompareOptions()  # MB_COMPARE_OPTIONS_INIT
        self.assertEqual((cmp.threshold_pct, cmp.match_problem, cmp.alpha),
                         (5.0, 0, 0.05))
        self.assertEqual(_structs.ContextOptions().log_level,
                         _structs.LOG_WARN)


class ConstantsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        _, cls.constants, cls.flags = compiler_dump()

    def test_constants(self):
        # MB_PARAM_X is _structs.PARAM_X, MB_TIMING_X _structs.TIMING_X.
        for name, value in self.constants.items():
            with self.subTest(constant=name):
                self.assertEqual(getattr(_structs, name[len("MB_"):], None),
                                 value)

    def test_every_flag_of_the_c_list_and_no_other(self):
        # A flag added to MB_PARAM_FLAG_LIST without its PARAM_ constant
        # fails here, and so does a constant C no longer has.
        c_flags = {"PARAM_" + name: self.constants["MB_PARAM_" + name]
                   for name, _, _ in self.flags}
        mirrored = {name: value for name, value in vars(_structs).items()
                    if name.startswith("PARAM_")}
        self.assertEqual(mirrored, c_flags)

    def test_every_flag_option_is_a_keyword(self):
        # The flags mbench run has an option for are run()'s keywords of
        # the same key; the one a static scale implies is not.
        want = {key: self.constants["MB_PARAM_" + name]
                for name, key, set_by in self.flags if set_by != "IMPLIED"}
        self.assertEqual(dict(_spec._PARAM_FLAGS), want)
        self.assertEqual(len(_spec._PARAM_FLAGS), len(want))
        keywords = inspect.signature(_spec.build).parameters
        for key in want:
            self.assertIs(keywords[key].default, False, key)


if __name__ == "__main__":
    unittest.main()
