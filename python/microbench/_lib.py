"""Finding and loading libmicrobench, and the prototypes of the functions
the package calls.

The library is loaded on first use, not on import, so ``import microbench``
works (and ``help()`` reads) where the library is missing; the first call
that needs it raises :class:`microbench.Error` listing every place tried.
"""
import ctypes
import ctypes.util
import os
import threading
from ctypes import (POINTER, c_char_p, c_double, c_int, c_size_t, c_uint,
                    c_uint32, c_void_p)

from . import _location
from . import _structs as S
from .errors import MB_ERR_ABI, MB_ERR_NOT_FOUND, Error

# The library major version this package speaks (MB_VERSION_MAJOR): the
# same major means the same ABI.
EXPECTED_MAJOR = 0
ENV_VAR = "MICROBENCH_LIBRARY"
SONAME = "libmicrobench.so.%d" % EXPECTED_MAJOR

_P = c_void_p  # an opaque handle: mb_context_t *, mb_result_t *, ...
_PP = POINTER(c_void_p)
_STATUS = c_int

# name: (restype, argtypes). Only what the package calls.
PROTOTYPES = {
    # common.h
    "mb_version": (c_char_p, []),
    "mb_version_number": (c_uint, []),
    "mb_git_commit": (c_char_p, []),
    "mb_status_name": (c_char_p, [c_int]),
    "mb_error_last": (c_char_p, []),
    "mb_error_clear": (None, []),
    "mb_error_set": (None, [c_char_p]),
    # context.h
    "mb_context_create": (_STATUS, [_PP, POINTER(S.ContextOptions)]),
    "mb_context_destroy": (None, [_P]),
    # device.h
    "mb_backend_count": (c_size_t, [_P]),
    "mb_backend_info": (_STATUS, [_P, c_size_t, POINTER(S.BackendInfo)]),
    "mb_device_count": (c_size_t, [_P]),
    "mb_device_at": (_P, [_P, c_size_t]),
    "mb_device_info": (_STATUS, [_P, POINTER(S.DeviceInfo)]),
    "mb_device_peak_flops": (c_double, [_P, c_int]),
    "mb_device_calibration": (_STATUS, [_P, POINTER(S.Calibration)]),
    "mb_device_fact_count": (c_size_t, [_P]),
    "mb_device_fact": (_STATUS, [_P, c_size_t, POINTER(c_char_p),
                                 POINTER(c_char_p), POINTER(c_double)]),
    # dtype.h
    "mb_dtype_name": (c_char_p, [c_int]),
    "mb_dtype_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    # tensor.h
    "mb_tensor_dtype": (c_int, [_P]),
    "mb_tensor_ndim": (c_uint32, [_P]),
    "mb_tensor_shape": (POINTER(ctypes.c_int64), [_P]),
    "mb_tensor_nbytes": (c_size_t, [_P]),
    "mb_tensor_data": (c_void_p, [_P]),
    "mb_tensor_device": (_P, [_P]),
    # op.h
    "mb_op_find": (_P, [c_char_p]),
    "mb_op_next": (_P, [_P]),
    "mb_op_name": (c_char_p, [_P]),
    "mb_op_summary": (c_char_p, [_P]),
    "mb_op_is_composite": (c_int, [_P]),
    "mb_op_rank": (c_uint32, [_P]),
    "mb_op_shape_syntax": (c_char_p, [_P]),
    "mb_op_num_inputs": (c_uint32, [_P]),
    "mb_op_num_outputs": (c_uint32, [_P]),
    "mb_op_operand_name": (c_char_p, [_P, c_uint32]),
    "mb_op_params_doc": (c_char_p, [_P]),
    "mb_op_dtypes": (POINTER(c_int), [_P, POINTER(c_size_t)]),
    "mb_op_alias_count": (c_size_t, []),
    "mb_op_alias_name": (c_char_p, [c_size_t, POINTER(c_char_p),
                                    POINTER(c_char_p)]),
    "mb_scaling_from_string": (_STATUS, [c_char_p, POINTER(S.Scaling)]),
    "mb_activation_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    "mb_kernel_register": (_STATUS, [_P, POINTER(S.KernelDesc)]),
    "mb_kernel_count": (c_size_t, [_P]),
    "mb_kernel_info": (_STATUS, [_P, c_size_t, POINTER(S.KernelInfo)]),
    # bench.h
    "mb_cache_policy_name": (c_char_p, [c_int]),
    "mb_cache_policy_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    "mb_flush_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    "mb_criterion_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    "mb_bench_run": (_STATUS, [_P, POINTER(S.BenchSpec), _PP]),
    "mb_result_destroy": (None, [_P]),
    "mb_result_json": (c_char_p, [_P]),
    "mb_result_from_json": (_STATUS, [c_char_p, _PP]),
    "mb_result_info": (_STATUS, [_P, POINTER(S.ResultInfo)]),
    "mb_result_correctness": (_STATUS, [_P, POINTER(S.Correctness)]),
    "mb_result_stats": (_STATUS, [_P, POINTER(S.Stats)]),
    "mb_result_derived": (_STATUS, [_P, POINTER(S.Derived)]),
    "mb_result_samples": (POINTER(c_double), [_P, POINTER(c_size_t)]),
    # model.h
    "mb_recipe_name": (c_char_p, [c_int]),
    "mb_recipe_summary": (c_char_p, [c_int]),
    "mb_recipe_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    "mb_recipe_min_sqnr_db": (c_double, [c_int]),
    "mb_recipe_trains": (c_int, [c_int]),
    "mb_model_count": (c_size_t, []),
    "mb_model_name": (c_char_p, [c_size_t, POINTER(c_char_p)]),
    "mb_mode_count": (c_size_t, []),
    "mb_mode_name": (c_char_p, [c_size_t]),
    "mb_model_resolve": (_STATUS, [c_char_p, c_char_p, POINTER(c_char_p),
                                   POINTER(S.OpParams)]),
    "mb_result_accuracy": (_STATUS, [_P, POINTER(S.Accuracy)]),
    # report.h
    "mb_format_from_name": (_STATUS, [c_char_p, POINTER(c_int)]),
    "mb_format_ns": (None, [c_double, ctypes.c_char_p, c_size_t]),
    "mb_report_open": (_STATUS, [_P, POINTER(S.ReportOptions), _PP]),
    "mb_report_add": (_STATUS, [_P, _P]),
    "mb_report_close": (_STATUS, [_P]),
    # plan.h
    "mb_plan_load": (_STATUS, [c_char_p, POINTER(S.PlanOptions), _PP]),
    "mb_plan_check": (_STATUS, [_P, _P]),
    "mb_plan_destroy": (None, [_P]),
    "mb_plan_schema": (c_char_p, [_P]),
    "mb_plan_count": (c_size_t, [_P]),
    "mb_plan_entry": (_STATUS, [_P, c_size_t, POINTER(S.PlanEntry)]),
    "mb_plan_note_count": (c_size_t, [_P]),
    "mb_plan_note": (c_char_p, [_P, c_size_t]),
    "mb_plan_run": (_STATUS, [_P, _P, c_size_t, _PP]),
    "mb_plan_run_with": (_STATUS, [_P, _P, c_size_t, S.RUNNER_FN, c_void_p,
                                   _PP]),
    # results.h
    "mb_results_load": (_STATUS, [c_char_p, _PP]),
    "mb_results_destroy": (None, [_P]),
    "mb_results_count": (c_size_t, [_P]),
    "mb_results_note": (c_char_p, [_P]),
    "mb_results_json": (c_char_p, [_P, c_size_t]),
    "mb_report_html": (_STATUS, [POINTER(c_char_p), c_size_t,
                                 POINTER(S.ReportHtmlOptions), c_char_p]),
}

_lock = threading.Lock()
_loaded = None  # (CDLL, path): the library, once loaded


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def candidates():
    """The places searched after $MICROBENCH_LIBRARY, in order: (what,
    path or soname) pairs; path None when that way found nothing."""
    pkg = _package_dir()
    if _location.LIBRARY_RELPATH is not None:
        # The build tree or the install tree: CMake wrote where the library
        # is relative to this package (python/location.py.in).
        path = os.path.join(pkg, _location.LIBRARY_RELPATH,
                            _location.LIBRARY_FILE)
        first = ("beside the package (_location.py)", os.path.normpath(path))
    else:
        # A source checkout: <repo>/python/microbench next to <repo>/build.
        repo = os.path.dirname(os.path.dirname(pkg))
        first = ("the source checkout's build directory",
                 os.path.join(repo, "build", "lib", SONAME))
    return [first,
            ("ctypes.util.find_library('microbench')",
             ctypes.util.find_library("microbench")),
            ("the system loader", SONAME)]


def _open(path):
    return ctypes.CDLL(path)


def _locate():
    """(CDLL, path) of the first library that loads; Error otherwise."""
    env = os.environ.get(ENV_VAR)
    if env:
        # An explicit choice is never silently replaced by another library.
        try:
            return _open(env), env
        except OSError as e:
            raise Error("%s=%s: cannot load it: %s" % (ENV_VAR, env, e),
                        MB_ERR_NOT_FOUND) from None
    tried = ["$%s: not set" % ENV_VAR]
    for what, path in candidates():
        if path is None:
            tried.append("%s: not found" % what)
        elif os.sep in path and not os.path.exists(path):
            tried.append("%s: %s: no such file" % (what, path))
        else:
            try:
                return _open(path), path
            except OSError as e:
                tried.append("%s: %s: %s" % (what, path, e))
    raise Error("libmicrobench not found; tried:\n  " + "\n  ".join(tried) +
                "\nSet %s to the library's path, or put the package and the "
                "library where CMake installs them (docs/python.md)."
                % ENV_VAR, MB_ERR_NOT_FOUND)


def _declare(dll):
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(dll, name)
        fn.restype = restype
        fn.argtypes = argtypes


def _check_version(dll, path):
    number = dll.mb_version_number()
    major = number // 10000
    if major != EXPECTED_MAJOR:
        raise Error(
            "%s is libmicrobench %s (major %d); this package needs major %d: "
            "install the package that came with that library"
            % (path, dll.mb_version().decode(), major, EXPECTED_MAJOR),
            MB_ERR_ABI)


def _path_of(dll, fallback):
    """The file actually loaded (the loader resolves a bare soname)."""
    try:
        libc = ctypes.CDLL(None)

        class DlInfo(ctypes.Structure):
            _fields_ = [("fname", c_char_p), ("fbase", c_void_p),
                        ("sname", c_char_p), ("saddr", c_void_p)]

        info = DlInfo()
        libc.dladdr.argtypes = [c_void_p, POINTER(DlInfo)]
        addr = ctypes.cast(dll.mb_version, c_void_p)
        if libc.dladdr(addr, ctypes.byref(info)) and info.fname:
            return os.path.abspath(os.fsdecode(info.fname))
    except (OSError, AttributeError):
        pass
    return fallback


def lib():
    """The loaded library (ctypes.CDLL), loading it on first call."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                dll, path = _locate()
                _declare(dll)
                _check_version(dll, path)
                _loaded = (dll, _path_of(dll, path))
    return _loaded[0]


def library_path():
    """The path of the libmicrobench file in use (loads it if needed)."""
    lib()
    return _loaded[1]


def last_error():
    """This thread's mb_error_last() as str."""
    return S.text(lib().mb_error_last())


def check(status, what=None):
    """Raises Error for a non-MB_OK status, with the library's message
    prefixed by `what` (the argument or call it was about)."""
    if status == 0:
        return
    message = last_error() or lib().mb_status_name(status).decode()
    if what:
        message = "%s: %s" % (what, message)
    raise Error(message, status)
