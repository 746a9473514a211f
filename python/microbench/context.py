"""The context: loaded backends, their devices, user kernels and logging.
Every benchmark runs in one."""
import atexit
import contextlib
import ctypes
import inspect
import logging
import os
import threading

from . import _parse as P
from . import _spec
from . import _structs as S
from ._lib import check, lib
from .errors import MB_ERR_INVALID_ARG, MB_ERR_NOT_FOUND, Error
from .result import Result

# mb_log_level_t -> logging level.
_PY_LEVELS = {S.LOG_ERROR: logging.ERROR, S.LOG_WARN: logging.WARNING,
              S.LOG_INFO: logging.INFO, S.LOG_DEBUG: logging.DEBUG}


def _backend_path(value):
    if value is None:
        return None
    paths = value if isinstance(value, (list, tuple)) else [value]
    for p in paths:
        if not isinstance(p, (str, bytes, os.PathLike)):
            raise Error("Context: backend_path: %r is not a path (a str, "
                        "bytes or os.PathLike, or a list of them)" % (p,))
    if isinstance(value, (list, tuple)):
        return os.pathsep.join(os.fsdecode(p) for p in value).encode()
    return os.fsencode(value)


def all_dtypes():
    """Every dtype name the library knows, in its order."""
    # Code 0 is MB_DTYPE_NONE ("none"), not a dtype.
    return [name for _, name in P.enum_names(lib().mb_dtype_name, first=1)]


class Context:
    """A libmicrobench context (mb_context_t).

    ``Context()`` loads the backend modules from ``backend_path`` (a
    directory, or a list of them), then ``$MB_BACKEND_PATH`` and the
    library's own module directory (``microbench/`` beside
    libmicrobench.so) unless ``no_default_backends``. Library log lines at
    or above ``log_level`` ("error", "warn", "info", "debug") go to
    ``logger`` (a logging.Logger) when given, else to stderr.

    Use it as a context manager, or call close(). One thread at a time
    per context; use one context per thread (docs/python.md).
    """

    def __init__(self, backend_path=None, no_default_backends=False,
                 log_level="warn", logger=None):
        self._handle = None
        self._kernels = []  # the Python kernels' adapters, kept alive
        self._log_fn = None
        opts = S.ContextOptions(backend_path=_backend_path(backend_path),
                                log_level=P.log_level(log_level))
        if no_default_backends:
            opts.flags |= S.CONTEXT_NO_DEFAULT_BACKENDS
        if logger is not None:
            # Kept on self: the library calls it until mb_context_destroy.
            self._log_fn = S.LOG_FN(self._logger_callback(logger))
            opts.log_fn = ctypes.cast(self._log_fn, ctypes.c_void_p)
        handle = ctypes.c_void_p()
        check(lib().mb_context_create(ctypes.byref(handle),
                                      ctypes.byref(opts)), "Context")
        self._handle = handle

    @staticmethod
    def _logger_callback(logger):
        def on_log(user, level, msg):
            # An exception must not cross into C; a broken logger loses the
            # line rather than the benchmark.
            try:
                logger.log(_PY_LEVELS.get(level, logging.INFO),
                           S.text(msg).rstrip("\n"))
            except Exception:  # noqa: BLE001
                pass
        return on_log

    # ---- lifetime -------------------------------------------------------

    def close(self):
        """Unloads the backends. The context cannot be used afterwards;
        results already returned stay valid (they are plain data)."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            lib().mb_context_destroy(handle)
        self._kernels = []
        self._log_fn = None

    @property
    def closed(self):
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    def _ptr(self):
        if self._handle is None:
            raise Error("the context is closed", MB_ERR_INVALID_ARG)
        return self._handle

    # ---- what is loaded -------------------------------------------------

    def backends(self):
        """Every backend module tried, loaded or not, in search order:
        dicts with name, path, version, loaded, reason, devices."""
        out = []
        ctx = self._ptr()
        for i in range(lib().mb_backend_count(ctx)):
            b = S.BackendInfo()
            check(lib().mb_backend_info(ctx, i, ctypes.byref(b)), "backends")
            out.append({"name": S.text(b.name), "path": S.text(b.path),
                        "version": S.text(b.version),
                        "loaded": bool(b.loaded), "reason": S.text(b.reason),
                        "devices": b.device_count})
        return out

    def devices(self, calibrate=False):
        """Every device of every loaded backend: dicts with backend, index,
        name, kind, memory_bytes, mem_bw_bytes_per_s, compute_units,
        clock_hz, cache_bytes, peak_flops (per dtype, where known),
        peak_source and environment (the backend's facts). With
        ``calibrate``, also timer and flush_check: the library measures
        them on first use (a fraction of a second per device)."""
        ctx = self._ptr()
        return [_device_dict(lib().mb_device_at(ctx, i), calibrate)
                for i in range(lib().mb_device_count(ctx))]

    def kernels(self, op=None):
        """Every kernel the context knows (user kernels first): dicts with
        op, name, backend, dtype, dtype_out (None: any) and user. ``op``
        (a name or alias) keeps that op's only."""
        want = _canonical_op(op) if op is not None else None
        ctx = self._ptr()
        out = []
        for i in range(lib().mb_kernel_count(ctx)):
            k = S.KernelInfo()
            check(lib().mb_kernel_info(ctx, i, ctypes.byref(k)), "kernels")
            if want is not None and S.text(k.op) != want:
                continue
            out.append({"op": S.text(k.op), "name": S.text(k.name),
                        "backend": S.text(k.backend),
                        "dtype": P.dtype_name(k.dtype),
                        "dtype_out": P.dtype_name(k.dtype_out),
                        "user": bool(k.user)})
        return out

    # ---- running --------------------------------------------------------

    def run(self, op=None, shape=None, dtype=None, **options):
        """Runs one benchmark and returns its Result.

        ``op`` is an op or alias (list_ops(), list_aliases()) — or give
        ``model`` (list_models()) with ``mode`` ("inference", "training")
        and ``recipe`` (list_recipes()). ``shape`` is a tuple of ints or a
        string ("512x512x512"). ``dtype`` is the input dtype (the op's
        default when None: f32 for most ops).

        Op parameters: out_dtype, dtype_b, dtype_q, acc_dtype, scale_a /
        granularity and scale_b ("none", "tensor", "row", "col",
        "block:1x128", "group:128"), scale_dtype ("f32", "e8m0": MX
        power-of-two scales, "f8e4m3": NVFP4 block scales with
        static_scale the per-tensor scale), alpha, beta, quantize_inputs,
        transpose, static_scale, activation, act_alpha, eps, no_affine,
        causal, tf32, fast_accum (fp8 gemm: torch's use_fast_accum),
        trans_a, trans_b, bshd, kv_heads (attention: K/V heads dividing H,
        grouped-query; default H).

        Where and how: backend (None: the best with a device), device
        (index within it), impl (kernel name), cache ("cold", "hot",
        "rotate"), flush (cold samples: "write", the default, or "read":
        twice the cache read, no dirty lines left), criterion ("stdrel", "fixed", "entropy"; "fixed" when
        samples is given), samples, min_samples, min_time, max_noise,
        timeout, warmup (seconds), warmup_runs, batch, seed (42; given, the sampled check is repeatable),
        repetitions, strict (a wrong result fails and is not timed).

        Invalid input raises Error naming the argument and the valid
        choices; anything that happens while running (no kernel for the
        dtype, a kernel error, a wrong result) is in the Result's status,
        reason and correctness.
        """
        with self._run_handle(op, shape, dtype, **options) as (handle, exc):
            return Result._from_handle(handle, exc)

    @contextlib.contextmanager
    def _run_handle(self, op=None, shape=None, dtype=None, **options):
        """Runs one benchmark and yields (mb_result_t handle, the exception
        a Python kernel raised or None); the result is destroyed after."""
        built = _spec.build(op, shape, dtype, **options)
        ctx = self._ptr()
        out = ctypes.c_void_p()
        self._reset_kernels()
        status = lib().mb_bench_run(ctx, ctypes.byref(built.spec),
                                    ctypes.byref(out))
        exc = self._kernel_exception()
        self._end_kernels()
        check(status, "run")
        try:
            yield out, self._reraise(exc)
        finally:
            lib().mb_result_destroy(out)

    def _reset_kernels(self):
        """Before a run: no Python kernel has raised yet."""
        for k in self._kernels:
            k.reset()

    def _end_kernels(self):
        """After a run: the tensors the library freed are refused from now
        on, wherever a kernel kept them."""
        for k in self._kernels:
            k.end()

    def _kernel_exception(self):
        """The first exception a Python kernel raised since the reset."""
        return next((k.exception for k in self._kernels
                     if k.exception is not None), None)

    @staticmethod
    def _reraise(exc):
        """A KeyboardInterrupt or SystemExit raised in a kernel ends the
        program's run, as it would have without the C frames between; an
        ordinary exception becomes the result's kernel_exception."""
        if exc is not None and not isinstance(exc, Exception):
            raise exc
        return exc

    def run_config(self, path, backend=None, filter=None, max_flop=None,
                   dry_run=False, **timing):
        """Runs every benchmark of a config file (JSON or YAML: the native,
        torchao or JAX schema; docs/config.md) and returns a ResultList.

        ``backend`` runs everything there instead of where the file says;
        ``filter`` (a POSIX extended regex) keeps the entries whose name
        matches; ``max_flop`` leaves out entries above that many FLOP per
        run. Timing keywords (criterion, samples, min_samples, min_time,
        max_noise, timeout, warmup, warmup_runs, repetitions) override
        every entry's timing, as ``mbench run --config`` does.

        ``dry_run=True`` runs nothing and returns the expanded plan: a
        list of dicts (name, op, shape, dtype, flop, bytes, skip_reason,
        ...) with ``.notes`` and ``.schema``.
        """
        from .plan import run_config
        return run_config(self, path, backend=backend, filter=filter,
                          max_flop=max_flop, dry_run=dry_run, **timing)

    def register_kernel(self, op, name, fn, *, dtype="f32", backend="cpu",
                        out_dtype=None, setup=None, teardown=None):
        """Registers a Python function as a kernel for ``op`` (see
        microbench.kernel.register_kernel)."""
        from .kernel import register_kernel
        return register_kernel(self, op, name, fn, dtype=dtype,
                               backend=backend, out_dtype=out_dtype,
                               setup=setup, teardown=teardown)

    def __repr__(self):
        if self._handle is None:
            return "<microbench.Context closed>"
        names = [b["name"] for b in self.backends() if b["loaded"]]
        return "<microbench.Context backends=%s>" % ",".join(names)


def _signature_with_self(fn):
    params = list(inspect.signature(fn).parameters.values())
    self_param = inspect.Parameter("self",
                                   inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return inspect.Signature([self_param] + params)


# help(Context.run) shows every keyword _spec.build takes.
Context.run.__signature__ = _signature_with_self(_spec.build)


def _canonical_op(name):
    op = lib().mb_op_find(name.encode())
    if not op:
        check(MB_ERR_NOT_FOUND, "op")
    return S.text(lib().mb_op_name(op))


def _device_dict(dev, calibrate):
    d = S.DeviceInfo()
    check(lib().mb_device_info(dev, ctypes.byref(d)), "devices")
    peaks = {}
    for code, name in enumerate(all_dtypes(), start=1):
        flops = lib().mb_device_peak_flops(dev, code)
        if flops > 0:
            peaks[name] = flops
    out = {"backend": S.text(d.backend), "index": d.index,
           "name": S.text(d.name),
           "kind": "gpu" if d.kind == S.DEVICE_GPU else "cpu",
           "memory_bytes": d.memory_bytes,
           "mem_bw_bytes_per_s": d.mem_bw_bytes_per_s,
           "compute_units": d.compute_units, "clock_hz": d.clock_hz,
           "cache_bytes": {"l1d": d.cache_bytes[0], "l2": d.cache_bytes[1],
                           "llc": d.cache_bytes[2]},
           "peak_flops": peaks, "peak_source": S.text(d.peak_source),
           "environment": _device_facts(dev)}
    if calibrate:
        out.update(_calibration(dev))
    return out


def _device_facts(dev):
    facts = {}
    for i in range(lib().mb_device_fact_count(dev)):
        key, txt = ctypes.c_char_p(), ctypes.c_char_p()
        value = ctypes.c_double()
        if lib().mb_device_fact(dev, i, ctypes.byref(key), ctypes.byref(txt),
                                ctypes.byref(value)) != 0:
            continue
        if txt.value is not None:
            facts[S.text(key.value)] = S.text(txt.value)
        else:  # counts read as counts, as the JSON writer prints them
            v = value.value
            facts[S.text(key.value)] = int(v) if v.is_integer() else v
    return facts


def _calibration(dev):
    c = S.Calibration()
    check(lib().mb_device_calibration(dev, ctypes.byref(c)), "calibration")
    return {
        "timer": {"resolution_ns": c.timer_resolution_ns,
                  "overhead_ns": c.timer_overhead_ns,
                  "readings": c.timer_readings},
        "flush_check": {"checked": bool(c.flush_checked),
                        "pass": bool(c.flush_pass),
                        "hot_ns": c.flush_hot_ns,
                        "flushed_ns": c.flush_cold_ns,
                        "ratio": S.number(c.flush_ratio),
                        "bytes": c.flush_bytes,
                        "how": S.text(c.flush_note)},
        "copy_bandwidth": {"measured": c.copy_gbps > 0,
                           "gbps": c.copy_gbps, "bytes": c.copy_bytes,
                           "how": S.text(c.copy_note)},
    }


# ---- the default context: module-level functions use it ----------------

_default = None
_default_lock = threading.Lock()


def default_context():
    """The context the module-level functions (microbench.run, ...) use,
    created on first use with the default backends and closed at exit."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Context()
            atexit.register(_default.close)
        return _default
