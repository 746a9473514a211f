"""Python functions as user kernels: the harness times them with the same
statistics and checks them against the same reference as a backend's own
kernels (mb_kernel_register)."""
import ctypes
import re

from . import _parse as P
from . import _structs as S
from ._lib import check, lib
from .errors import MB_ERR_BACKEND, MB_ERR_INTERRUPTED, Error

# dtype -> memoryview format: floats narrower than 32 bits are their raw
# bits (Python has no bf16/fp8 type); i4 and f4e2m1 are raw packed bytes,
# two per byte.
_FORMATS = {"f32": "f", "f16": "H", "bf16": "H", "f8e4m3": "B",
            "f8e5m2": "B", "i8": "b", "i4": None, "i32": "i", "e8m0": "B",
            "f4e2m1": None}
_NUMPY = {"f32": "float32", "f16": "float16", "bf16": "uint16",
          "f8e4m3": "uint8", "f8e5m2": "uint8", "i8": "int8", "i4": "uint8",
          "i32": "int32", "e8m0": "uint8", "f4e2m1": "uint8"}
_PACKED = ("i4", "f4e2m1")


class Tensor:
    """A tensor a kernel receives: borrowed for the call only. After the
    kernel returns, the memoryviews its array() gave are released (using a
    kept one raises ValueError instead of writing memory the library may
    have freed), and once the benchmark is over the Tensor itself refuses
    array() and numpy(). A numpy array cannot be revoked: do not keep one.

    ``dtype`` (name), ``shape`` (tuple), ``nbytes``, ``ptr`` (the device
    address as an int: host memory on the cpu backend), ``host`` (whether
    that is host memory, which array() and numpy() can read).
    """

    __slots__ = ("dtype", "shape", "nbytes", "ptr", "host", "_views",
                 "_valid")

    def __init__(self, handle):
        L = lib()
        self.dtype = P.dtype_name(L.mb_tensor_dtype(handle))
        dims = L.mb_tensor_shape(handle)
        self.shape = tuple(dims[i] for i in range(L.mb_tensor_ndim(handle)))
        self.nbytes = L.mb_tensor_nbytes(handle)
        self.ptr = L.mb_tensor_data(handle) or 0
        info = S.DeviceInfo()
        check(L.mb_device_info(L.mb_tensor_device(handle),
                               ctypes.byref(info)), "Tensor")
        self.host = info.kind != S.DEVICE_GPU
        self._views = []
        self._valid = True

    def _release_views(self):
        """After a call: every view array() gave, newest first; a view that
        something still exports (a numpy array, a slice kept) stays."""
        for v in reversed(self._views):
            try:
                v.release()
            except BufferError:
                pass
        self._views = []

    def _invalidate(self):
        self._release_views()
        self._valid = False

    def _bytes(self):
        if not self._valid:
            raise Error("Tensor: %s was used after its benchmark ended; a "
                        "kernel's tensors are borrowed for the call" % self,
                        "MB_ERR_INVALID_ARG")
        if not self.host:
            # Reading a device address from the host would crash.
            raise Error("Tensor: %s is in device memory; use .ptr with a "
                        "library for that device (CuPy, PyTorch)" % self,
                        "MB_ERR_UNSUPPORTED")
        buf = (ctypes.c_char * self.nbytes).from_address(self.ptr)
        raw = memoryview(buf)
        view = raw.cast("B")
        self._views += [raw, view]
        return view

    def array(self, flat=False):
        """The data as a writable memoryview of the element type and shape
        (f32 'f', i8 'b', i32 'i'; f16/bf16 'H' raw bits; fp8 'B' raw
        bytes; i4 a 1-D view of the packed bytes). ``flat=True``: 1-D."""
        raw = self._bytes()
        fmt = _FORMATS.get(self.dtype)
        if fmt is None:
            return raw
        view = raw.cast(fmt) if flat else raw.cast(fmt, self.shape)
        self._views.append(view)
        return view

    def numpy(self):
        """The data as a writable numpy array over the same memory (needs
        numpy; bf16 and fp8 as their raw bits, i4 and f4e2m1 as packed
        bytes)."""
        try:
            import numpy
        except ImportError:
            raise Error("Tensor.numpy needs numpy, which is not installed; "
                        "array() gives a memoryview", "MB_ERR_UNSUPPORTED") \
                from None
        a = numpy.frombuffer(self._bytes(), dtype=_NUMPY[self.dtype])
        return a if self.dtype in _PACKED else a.reshape(self.shape)

    def __repr__(self):
        return "<Tensor %s %s at 0x%x>" % (
            self.dtype, "x".join(map(str, self.shape)), self.ptr)


class _Adapter:
    """One registered Python kernel: the C callbacks (kept alive here, and
    by the Context holding this object) around the Python functions."""

    def __init__(self, name, fn, setup, teardown):
        self.name = name
        self.exception = None
        self._key = None
        self._tensors = None
        self.c_run = S.KERNEL_FN(self._wrap(fn))
        self.c_setup = S.KERNEL_FN(self._wrap(setup)) if setup else None
        self.c_teardown = (S.KERNEL_FN(self._wrap(teardown))
                           if teardown else None)

    def reset(self):
        """Before a run: forget the last run's exception and tensors (a
        freed tensor's address may come back with another shape); a
        Tensor a kernel kept from that run refuses to be read."""
        self.end()
        self.exception = None

    def end(self):
        """After a run: its tensors are freed; a kept Tensor refuses."""
        for t in self._tensors or ():
            t._invalidate()
        self._key = None
        self._tensors = None

    def _args(self, args_p):
        """The call's tensors, inputs then outputs; reused while the
        handles are the same (every timed call of one benchmark)."""
        a = args_p.contents
        key = (tuple(a.inputs[i] for i in range(a.num_inputs)) +
               tuple(a.outputs[i] for i in range(a.num_outputs)))
        if key != self._key:
            for t in self._tensors or ():
                t._invalidate()
            self._tensors = [Tensor(h) for h in key]
            self._key = key
        return self._tensors

    def _wrap(self, fn):
        def call(user, args_p):
            # Nothing may propagate into C: the error becomes the result's
            # reason, the exception the Result's kernel_exception.
            tensors = ()
            try:
                tensors = self._args(args_p)
                fn(*tensors)
                return 0
            except BaseException as e:  # noqa: BLE001
                if self.exception is None:
                    self.exception = e
                message = "%s: %s: %s" % (self.name, type(e).__name__, e)
                lib().mb_error_set(message.encode("utf-8", "replace"))
                return (MB_ERR_BACKEND if isinstance(e, Exception)
                        else MB_ERR_INTERRUPTED)
            finally:
                for t in tensors:
                    t._release_views()
        return call


def register_kernel(context, op, name, fn, *, dtype="f32", backend="cpu",
                    out_dtype=None, setup=None, teardown=None):
    """Registers ``fn`` as kernel ``name`` ([a-z0-9_]+) for ``op`` on
    ``backend``'s memory, for inputs of ``dtype`` (and outputs of
    ``out_dtype``; None: any).

    ``fn(*tensors)`` receives the op's operands as Tensor objects, inputs
    then outputs (list_ops() names them), and writes the outputs. It is
    the timed call. ``setup`` and ``teardown``, called the same way, run
    once before the correctness check and once after measuring, untimed.
    An exception in any of them fails the benchmark: the result is
    ``failed`` with "<name>: <ExcType>: <message>" as its reason, and the
    exception is the Result's ``kernel_exception``.

    The kernel is chosen for runs that name it (``impl=name``) and for
    runs that name no implementation, on that backend and dtype.
    """
    for f in (fn, setup, teardown):
        if f is not None and not callable(f):
            raise TypeError("register_kernel: %r is not callable" % (f,))
    adapter = _Adapter(name, fn, setup, teardown)
    desc = S.KernelDesc(op=str(op).encode(), name=str(name).encode(),
                        backend=str(backend).encode(),
                        dtype=P.dtype(dtype, "dtype"),
                        dtype_out=P.dtype(out_dtype, "out_dtype"))
    desc.run = adapter.c_run
    if adapter.c_setup:
        desc.setup = adapter.c_setup
    if adapter.c_teardown:
        desc.teardown = adapter.c_teardown
    check(lib().mb_kernel_register(context._ptr(), ctypes.byref(desc)),
          "register_kernel")
    context._kernels.append(adapter)


def _kernel_name(fn, taken):
    """"py_<function name>" made valid ([a-z0-9_]+) and unused."""
    base = re.sub(r"[^a-z0-9_]", "_",
                  getattr(fn, "__name__", "kernel").lower())
    if not base.startswith("py_"):
        base = "py_" + base
    name, n = base, 2
    while name in taken:
        name, n = "%s_%d" % (base, n), n + 1
    return name


def benchmark(fn, op="add", shape=(256, 256), dtype="f32", *, name=None,
              backend="cpu", out_dtype=None, setup=None, teardown=None,
              context=None, **run_options):
    """Times a Python function as a kernel for ``op`` and checks its output
    against the op's reference; returns the Result.

    ``fn(*tensors)`` gets the op's inputs then outputs (Tensor objects)
    and must write the outputs. The kernel is registered under ``name``
    (default "py_<function name>") in ``context`` (default: a private
    context, closed afterwards). Other keywords are Context.run's
    (samples, cache, min_time, ...)::

        def add(x, y, z):
            zs = z.array(flat=True)
            for i, (a, b) in enumerate(zip(x.array(flat=True),
                                           y.array(flat=True))):
                zs[i] = a + b

        r = microbench.benchmark(add, op="add", shape=(64, 64), samples=5)
        assert r.passed
    """
    from .context import Context
    if context is None:
        with Context() as ctx:
            return benchmark(fn, op, shape, dtype, name=name, backend=backend,
                             out_dtype=out_dtype, setup=setup,
                             teardown=teardown, context=ctx, **run_options)
    if name is None:
        taken = {k["name"] for k in context.kernels() if k["user"]}
        name = _kernel_name(fn, taken)
    register_kernel(context, op, name, fn, dtype=dtype, backend=backend,
                    out_dtype=out_dtype, setup=setup, teardown=teardown)
    return context.run(op=op, shape=shape, dtype=dtype, backend=backend,
                       impl=name, out_dtype=out_dtype, **run_options)
