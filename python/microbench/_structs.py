"""ctypes mirrors of the public structs the package passes or reads, their
``*_INIT`` defaults, and the callback types.

Every struct starts with ``struct_size`` and only grows at the end
(include/microbench/common.h), so a mirror may be a prefix of a newer
library's struct: the library reads or fills ``struct_size`` bytes. The
suite checks each mirror's size and offsets against the compiler's
(tests/python/layout_dump.c), so a header change without its mirror fails
there rather than corrupting memory.
"""
import ctypes
import math
from ctypes import (POINTER, c_char_p, c_double, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p)

MAX_DIMS = 8  # MB_MAX_DIMS

# mb_log_level_t
LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3
CONTEXT_NO_DEFAULT_BACKENDS = 1  # MB_CONTEXT_NO_DEFAULT_BACKENDS

# mb_op_params_t.flags (MB_PARAM_*; every flag of MB_PARAM_FLAG_LIST,
# which tests/python/test_layout.py checks)
PARAM_TRANSPOSE = 1
PARAM_STATIC = 2
PARAM_CAUSAL = 4
PARAM_QUANTIZE_INPUTS = 8
PARAM_NO_WEIGHT = 16
PARAM_TF32 = 32
PARAM_TRANS_A = 64
PARAM_TRANS_B = 128
PARAM_BSHD = 256
PARAM_FAST_ACCUM = 512
PARAM_PINNED = 1024
PARAM_EXPLICIT_DEQUANT = 2048
PARAM_PEER = 4096
PARAM_IN_PLACE = 8192

# mb_plan_options_t.timing_fields (MB_TIMING_*)
TIMING_CRITERION = 1
TIMING_SAMPLES = 2
TIMING_MIN_SAMPLES = 4
TIMING_MIN_TIME = 8
TIMING_MAX_NOISE = 16
TIMING_TIMEOUT = 32
TIMING_WARMUP = 64
TIMING_WARMUP_RUNS = 128
TIMING_REPETITIONS = 256

BENCH_STRICT = 1  # MB_BENCH_STRICT
BENCH_FLUSH_READ = 2  # MB_BENCH_FLUSH_READ
BENCH_FRESH_SAMPLE = 4  # MB_BENCH_FRESH_SAMPLE
FLUSH_READ = 1  # MB_FLUSH_READ
CRITERION_FIXED = 1  # MB_CRITERION_FIXED
DEVICE_GPU = 1  # MB_DEVICE_GPU
FORMAT_TABLE = 0  # MB_FORMAT_TABLE
SIZE_MAX = ctypes.c_size_t(-1).value


class _Struct(ctypes.Structure):
    """A struct whose constructor applies its ``_defaults_`` (the C
    ``*_INIT`` macro) and sets ``struct_size``; keyword arguments override
    them."""

    _defaults_ = {}

    def __init__(self, **fields):
        values = dict(self._defaults_)
        values.update(fields)
        super().__init__()
        if "struct_size" in dict(self._fields_):
            self.struct_size = ctypes.sizeof(self)
        for name, value in values.items():
            setattr(self, name, value)


class ContextOptions(_Struct):
    """mb_context_options_t"""
    _fields_ = [("struct_size", c_uint32), ("backend_path", c_char_p),
                ("log_level", c_int), ("log_fn", c_void_p),
                ("log_user", c_void_p), ("flags", c_uint32)]
    _defaults_ = {"log_level": LOG_WARN}


class BackendInfo(_Struct):
    """mb_backend_info_t"""
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p),
                ("path", c_char_p), ("version", c_char_p), ("loaded", c_int),
                ("reason", c_char_p), ("device_count", c_uint32)]


class DeviceInfo(_Struct):
    """mb_device_info_t"""
    _fields_ = [("struct_size", c_uint32), ("backend", c_char_p),
                ("index", c_uint32), ("name", c_char_p), ("kind", c_int),
                ("memory_bytes", c_uint64), ("mem_bw_bytes_per_s", c_double),
                ("compute_units", c_uint32), ("clock_hz", c_double),
                ("cache_bytes", c_uint64 * 3), ("peak_source", c_char_p)]


class Calibration(_Struct):
    """mb_calibration_t"""
    _fields_ = [("struct_size", c_uint32), ("timer_resolution_ns", c_double),
                ("timer_overhead_ns", c_double),
                ("timer_readings", c_uint32), ("flush_checked", c_int),
                ("flush_pass", c_int), ("flush_hot_ns", c_double),
                ("flush_cold_ns", c_double), ("flush_ratio", c_double),
                ("flush_bytes", c_double), ("flush_note", c_char_p),
                ("copy_gbps", c_double), ("copy_bytes", c_double),
                ("copy_note", c_char_p)]


class Scaling(ctypes.Structure):
    """mb_scaling_t (no struct_size: it is embedded in mb_op_params_t)"""
    _fields_ = [("mode", c_int), ("block", c_int64 * 2)]


class OpParams(_Struct):
    """mb_op_params_t"""
    _fields_ = [("struct_size", c_uint32), ("ndim", c_uint32),
                ("shape", c_int64 * MAX_DIMS), ("dtype", c_int),
                ("dtype_b", c_int), ("dtype_out", c_int),
                ("dtype_acc", c_int), ("alpha", c_double), ("beta", c_double),
                ("flags", c_uint32), ("scale_a", Scaling),
                ("scale_b", Scaling), ("dtype_q", c_int), ("scale", c_double),
                ("activation", c_int), ("act_alpha", c_double),
                ("eps", c_double), ("recipe", c_uint32),
                ("dtype_scale", c_int), ("kv_heads", c_int64),
                ("reduce_op", c_uint32), ("root", c_int32),
                ("ranks", c_int32), ("rank", c_int32)]
    _defaults_ = {"alpha": 1.0, "beta": 0.0, "act_alpha": 0.01, "eps": 1e-5}


class KernelArgs(_Struct):
    """mb_kernel_args_t (what a user kernel receives)"""
    _fields_ = [("struct_size", c_uint32), ("op", c_void_p),
                ("params", POINTER(OpParams)),
                ("inputs", POINTER(c_void_p)), ("num_inputs", c_uint32),
                ("outputs", POINTER(c_void_p)), ("num_outputs", c_uint32)]


# mb_kernel_fn: mb_status_t (*)(void *user, const mb_kernel_args_t *args)
KERNEL_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(KernelArgs))
# mb_log_fn: void (*)(void *user, mb_log_level_t level, const char *msg)
LOG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class KernelDesc(_Struct):
    """mb_kernel_desc_t"""
    _fields_ = [("struct_size", c_uint32), ("op", c_char_p),
                ("name", c_char_p), ("backend", c_char_p), ("dtype", c_int),
                ("dtype_out", c_int), ("setup", KERNEL_FN),
                ("run", KERNEL_FN), ("teardown", KERNEL_FN),
                ("user", c_void_p)]
    _defaults_ = {"backend": b"cpu"}


class KernelInfo(_Struct):
    """mb_kernel_info_t"""
    _fields_ = [("struct_size", c_uint32), ("op", c_char_p),
                ("name", c_char_p), ("backend", c_char_p), ("dtype", c_int),
                ("dtype_out", c_int), ("user", c_int)]


class BenchSpec(_Struct):
    """mb_bench_spec_t"""
    _fields_ = [("struct_size", c_uint32), ("op", c_char_p),
                ("params", POINTER(OpParams)), ("backend", c_char_p),
                ("device", c_uint32), ("impl", c_char_p), ("cache", c_int),
                ("criterion", c_int), ("min_samples", c_uint32),
                ("samples", c_uint32), ("min_time_s", c_double),
                ("max_noise", c_double), ("timeout_s", c_double),
                ("warmup_s", c_double), ("warmup_runs", c_uint32),
                ("batch", c_uint32), ("seed", c_uint64), ("flags", c_uint32),
                ("repetitions", c_uint32)]
    _defaults_ = {"min_samples": 10, "min_time_s": 0.5, "max_noise": 0.005,
                  "timeout_s": 15.0, "warmup_s": 0.025, "warmup_runs": 1,
                  "seed": 42, "repetitions": 1}


class ResultInfo(_Struct):
    """mb_result_info_t"""
    _fields_ = [("struct_size", c_uint32), ("status", c_int),
                ("reason", c_char_p), ("op", c_char_p),
                ("backend", c_char_p), ("device", c_char_p),
                ("device_index", c_uint32), ("impl", c_char_p),
                ("cache", c_int), ("params", OpParams), ("seed", c_uint64),
                ("emulated", c_int), ("alias", c_char_p),
                ("rotate_copies", c_uint32), ("footprint_bytes", c_double),
                ("warning", c_char_p), ("timer", c_char_p),
                ("name", c_char_p), ("recipe", c_char_p),
                ("model", c_char_p), ("mode", c_char_p),
                ("shape_name", c_char_p), ("speedup_vs_baseline", c_double),
                ("peak_memory_bytes", c_double), ("flush", c_int)]


class Correctness(_Struct):
    """mb_correctness_t"""
    _fields_ = [("struct_size", c_uint32), ("checked", c_int),
                ("pass_", c_int), ("max_abs_err", c_double),
                ("max_rel_err", c_double), ("max_err_ratio", c_double),
                ("sqnr_db", c_double), ("tolerance", c_double),
                ("elements_checked", c_uint64),
                ("elements_total", c_uint64), ("runs_checked", c_uint32),
                ("sample_seed", c_uint64)]


class Stats(_Struct):
    """mb_stats_t"""
    _fields_ = [("struct_size", c_uint32), ("count", c_uint64),
                ("batch", c_uint32), ("min", c_double), ("max", c_double),
                ("mean", c_double), ("median", c_double),
                ("stdev", c_double), ("rel_stdev", c_double),
                ("p10", c_double), ("p25", c_double), ("p75", c_double),
                ("p90", c_double), ("p99", c_double), ("iqr", c_double),
                ("measured_ns", c_double), ("wall_s", c_double),
                ("warmup_runs", c_uint32), ("stop_reason", c_char_p),
                ("throttled", c_uint64), ("interfered", c_uint64),
                ("timer_resolution_ns", c_double),
                ("timer_overhead_ns", c_double), ("repetitions", c_uint32)]


class Derived(_Struct):
    """mb_derived_t"""
    _fields_ = [("struct_size", c_uint32), ("flop", c_double),
                ("bytes", c_double), ("intensity", c_double),
                ("tflops", c_double), ("gbps", c_double),
                ("peak_flops", c_double), ("pct_peak", c_double),
                ("bandwidth_gbps", c_double), ("roof_ns", c_double),
                ("pct_roof", c_double), ("bound", c_char_p)]


class Accuracy(_Struct):
    """mb_accuracy_t"""
    _fields_ = [("struct_size", c_uint32), ("checked", c_int),
                ("pass_", c_int), ("sqnr_db", c_double),
                ("rel_err", c_double), ("max_abs_err", c_double),
                ("max_rel_err", c_double), ("min_sqnr_db", c_double),
                ("elements_checked", c_uint64)]


class PlanOptions(_Struct):
    """mb_plan_options_t"""
    _fields_ = [("struct_size", c_uint32), ("backend", c_char_p),
                ("filter", c_char_p), ("max_flop", c_double),
                ("timing", POINTER(BenchSpec)), ("timing_fields", c_uint32)]


class PlanEntry(_Struct):
    """mb_plan_entry_t"""
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p),
                ("group", c_char_p), ("op", c_char_p), ("model", c_char_p),
                ("recipe", c_char_p), ("mode", c_char_p),
                ("shape_name", c_char_p), ("device_request", c_char_p),
                ("skip_reason", c_char_p), ("csv_path", c_char_p),
                ("params", OpParams), ("spec", BenchSpec),
                ("flop", c_double), ("bytes", c_double),
                ("baseline", c_size_t)]


class ReportOptions(_Struct):
    """mb_report_options_t"""
    _fields_ = [("struct_size", c_uint32), ("format", c_int),
                ("path", c_char_p), ("stream", c_void_p), ("argc", c_int),
                ("argv", POINTER(c_char_p)), ("columns", c_char_p),
                ("width", c_uint32)]


class CompareOptions(_Struct):
    """mb_compare_options_t (ReportHtmlOptions.compare points to one; NULL:
    the library's MB_COMPARE_OPTIONS_INIT)"""
    _fields_ = [("struct_size", c_uint32), ("threshold_pct", c_double),
                ("match_problem", c_int), ("alpha", c_double)]
    _defaults_ = {"threshold_pct": 5.0, "alpha": 0.05}


class ReportHtmlOptions(_Struct):
    """mb_report_html_options_t"""
    _fields_ = [("struct_size", c_uint32), ("title", c_char_p),
                ("plot", c_char_p), ("compare", POINTER(CompareOptions))]


# mb_bench_runner_fn: mb_status_t (*)(void *user, mb_context_t *ctx,
#   size_t index, const mb_bench_spec_t *spec, mb_result_t **out)
RUNNER_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t,
                             POINTER(BenchSpec), POINTER(c_void_p))

# C name -> mirror, for the layout test. The field `pass` is a Python
# keyword, so the mirrors call it `pass_`.
MIRRORS = {
    "mb_context_options_t": ContextOptions,
    "mb_backend_info_t": BackendInfo,
    "mb_device_info_t": DeviceInfo,
    "mb_calibration_t": Calibration,
    "mb_scaling_t": Scaling,
    "mb_op_params_t": OpParams,
    "mb_kernel_args_t": KernelArgs,
    "mb_kernel_desc_t": KernelDesc,
    "mb_kernel_info_t": KernelInfo,
    "mb_bench_spec_t": BenchSpec,
    "mb_result_info_t": ResultInfo,
    "mb_correctness_t": Correctness,
    "mb_stats_t": Stats,
    "mb_derived_t": Derived,
    "mb_accuracy_t": Accuracy,
    "mb_plan_options_t": PlanOptions,
    "mb_plan_entry_t": PlanEntry,
    "mb_report_options_t": ReportOptions,
    "mb_compare_options_t": CompareOptions,
    "mb_report_html_options_t": ReportHtmlOptions,
}
FIELD_RENAMES = {"pass_": "pass"}


def text(value):
    """A ``const char *`` read through ctypes (bytes or None) as str."""
    return value.decode("utf-8", "replace") if value else ""


def number(value):
    """A C double as JSON gives it: NaN and infinities become None."""
    return value if math.isfinite(value) else None
