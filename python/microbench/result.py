"""Results as plain Python data: a Result is the JSON object the library
writes for it (schema ``microbench.results/1``, docs/schema.md), read once
right after the run; the C result is destroyed then, so a Result depends on
no context and outlives them all."""
import copy
import ctypes
import json

from . import _table
from ._lib import check, lib
from ._table import shape_text as _shape_text
from .errors import Error


class Result:
    """One benchmark's result.

    Attributes (None where the result has no such figure, e.g. a skipped
    result has no median):

    - ``status`` ("ok", "skipped", "failed"), ``reason`` (why, "" when ok),
      ``ok`` (status == "ok")
    - ``id``, ``problem``, ``op``, ``alias``, ``name`` (a plan entry's),
      ``backend``, ``device`` (its name), ``device_index``, ``impl``,
      ``cache``, ``seed``
    - ``shape`` (tuple of ints, in the op's order), ``dims`` (dict, e.g.
      ``{"M": 512, "K": 512, "N": 512}``), ``dtype`` (first input),
      ``dtypes`` (dict a/b/out/acc), ``params`` (the op's own parameters)
    - ``median_ns``, ``min_ns``, ``samples`` (every sample, ns per run),
      ``stats`` (dict: count, median_ns, p10_ns, ..., stop_reason)
    - ``correctness`` (dict) and ``passed`` (True when checked and within
      the tolerance)
    - ``flop``, ``bytes`` (per run), ``gflops``, ``gbps``, ``pct_peak``,
      ``pct_roof`` (% of the roofline bound), ``derived`` (dict)
    - models: ``recipe``, ``model``, ``mode``, ``accuracy`` (dict),
      ``steps`` (list of dicts), ``phases`` (dict), ``speedup_vs_baseline``
    - ``warnings`` (list of str: what makes the figures doubtful)
    - ``kernel_exception``: the exception a Python kernel raised during
      this run (register_kernel), else None

    ``to_dict()`` gives the whole schema object; ``to_json()`` its text.
    """

    def __init__(self, data, kernel_exception=None):
        if not isinstance(data, dict):
            raise TypeError("Result(data): data is the result's JSON object "
                            "(a dict); use Result.from_json for text")
        self._data = data
        self.kernel_exception = kernel_exception

    # ---- construction ---------------------------------------------------

    @classmethod
    def _from_handle(cls, handle, kernel_exception=None):
        text = lib().mb_result_json(handle)
        if text is None:
            raise Error("mb_result_json: out of memory", "MB_ERR_NO_MEMORY")
        return cls(json.loads(text.decode()), kernel_exception)

    @classmethod
    def from_json(cls, text):
        """A Result from one result object's JSON text, validated by the
        library (mb_result_from_json: an error names the bad field)."""
        if isinstance(text, str):
            text = text.encode()
        handle = ctypes.c_void_p()
        check(lib().mb_result_from_json(text, ctypes.byref(handle)),
              "Result.from_json")
        try:
            return cls._from_handle(handle)
        finally:
            lib().mb_result_destroy(handle)

    @classmethod
    def from_dict(cls, data):
        """A Result from a result object (a dict), validated as from_json."""
        return cls.from_json(json.dumps(data))

    # ---- the schema object ---------------------------------------------

    def to_dict(self):
        """The result object of docs/schema.md (a deep copy)."""
        return copy.deepcopy(self._data)

    def to_json(self, indent=None):
        """The result object as JSON text."""
        return json.dumps(self._data, indent=indent)

    def __eq__(self, other):
        return isinstance(other, Result) and self._data == other._data

    __hash__ = None

    def _get(self, *path, default=None):
        node = self._data
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    # ---- identity -------------------------------------------------------

    status = property(lambda self: self._get("status"))
    reason = property(lambda self: self._get("reason", default=""))
    ok = property(lambda self: self.status == "ok")
    id = property(lambda self: self._get("id"))
    problem = property(lambda self: self._get("problem"))
    op = property(lambda self: self._get("op"))
    alias = property(lambda self: self._get("alias"))
    name = property(lambda self: self._get("name"))
    backend = property(lambda self: self._get("backend"))
    device = property(lambda self: self._get("device"))
    device_index = property(lambda self: self._get("device_index"))
    impl = property(lambda self: self._get("impl"))
    cache = property(lambda self: self._get("cache"))
    flush = property(lambda self: self._get("timing", "flush",
                                            default="write"))
    seed = property(lambda self: self._get("seed"))
    dims = property(lambda self: dict(self._get("shape", default={})))
    dtypes = property(lambda self: dict(self._get("dtypes", default={})))
    dtype = property(lambda self: self._get("dtypes", "a"))
    params = property(lambda self: copy.deepcopy(self._get("params")))
    recipe = property(lambda self: self._get("recipe"))
    model = property(lambda self: self._get("model"))
    mode = property(lambda self: self._get("mode"))
    speedup_vs_baseline = property(
        lambda self: self._get("speedup_vs_baseline"))

    @property
    def shape(self):
        """The dimensions in the op's order, e.g. (M, K, N) for gemm."""
        return tuple(self._get("shape", default={}).values())

    # ---- measurements ---------------------------------------------------

    stats = property(lambda self: dict(self._get("stats", default={})))
    median_ns = property(lambda self: self._get("stats", "median_ns"))
    min_ns = property(lambda self: self._get("stats", "min_ns"))
    samples = property(lambda self: list(self._get("samples_ns", default=[])))
    correctness = property(
        lambda self: dict(self._get("correctness", default={})))
    derived = property(lambda self: dict(self._get("derived", default={})))
    flop = property(lambda self: self._get("derived", "flop"))
    bytes = property(lambda self: self._get("derived", "bytes"))
    gbps = property(lambda self: self._get("derived", "gbps"))
    pct_peak = property(lambda self: self._get("derived", "pct_peak"))
    pct_roof = property(lambda self: self._get("derived", "pct_roof"))
    accuracy = property(lambda self: copy.deepcopy(self._get("accuracy")))
    steps = property(lambda self: copy.deepcopy(self._get("steps")))
    phases = property(lambda self: copy.deepcopy(self._get("phases")))
    peak_memory_bytes = property(lambda self: self._get("peak_memory_bytes"))

    @property
    def passed(self):
        """True when the output was checked and is within the tolerance."""
        c = self._get("correctness", default={})
        return bool(c.get("checked") and c.get("pass"))

    @property
    def gflops(self):
        """GFLOP/s at the median (None when not timed)."""
        tflops = self._get("derived", "tflops")
        return None if tflops is None or not self.ok else tflops * 1e3

    @property
    def warnings(self):
        """What makes the figures doubtful (the result's `warning`)."""
        w = self._get("warning")
        return [w] if w else []

    def check_text(self):
        """"pass", "FAIL", or the status when it did not run."""
        if self.status != "ok":
            return self.status
        if not self._get("correctness", "checked"):
            return "unchecked"
        return "pass" if self.passed else "FAIL"

    def __repr__(self):
        median = self.median_ns
        timing = ("median %s" % _format_ns(median)
                  if median is not None and self.ok else repr(self.reason))
        return "<Result %s %s %s %s:%s/%s %s %s %s check %s>" % (
            self.op, _shape_text(self.shape), self.dtype, self.backend,
            self.device_index, self.impl, self.cache, self.status, timing,
            self.check_text())

    def to_record(self):
        """One flat dict (a table row): name, op, shape, dtype, backend,
        impl, cache, status, median_ns, gflops, gbps, pct_peak, pct_roof,
        check."""
        return {
            "name": self.name or self.id,
            "op": self.op,
            "shape": _shape_text(self.shape),
            "dtype": self.dtype,
            "backend": self.backend,
            "impl": self.impl,
            "cache": self.cache,
            "status": self.status,
            "median_ns": self.median_ns if self.ok else None,
            "gflops": self.gflops,
            "gbps": self.gbps if self.ok else None,
            "pct_peak": self.pct_peak if self.ok else None,
            "pct_roof": self.pct_roof if self.ok else None,
            "check": self.check_text(),
        }


def _format_ns(ns):
    """The table's duration text ("1.234 ms"): the library's mb_format_ns."""
    buf = ctypes.create_string_buffer(32)
    lib().mb_format_ns(ns, buf, len(buf))
    return buf.value.decode()


class ResultList(list):
    """A list of Results (what run_config and load_results return), with
    conversions for the whole set. ``notes`` holds what the config reader
    wanted said once (keys with no effect here, entries left out)."""

    def __init__(self, results=(), notes=()):
        super().__init__(results)
        self.notes = list(notes)

    def to_dicts(self):
        """The result objects (schema dicts)."""
        return [r.to_dict() for r in self]

    def to_json(self, indent=None):
        """A JSON array of the result objects."""
        return json.dumps([r._data for r in self], indent=indent)

    def to_records(self):
        """Flat dicts, one per result, with every field of its JSON object
        (docs/schema.md): nested objects as dotted keys (``stats.median_ns``,
        ``correctness.sqnr_db``, ``shape.M``, ``phases.forward_ns``), lists
        as one value (``samples_ns``, ``telemetry.power_w``, ``steps`` as a
        list of dicts). Identity first (``id``, ``name``, ``problem``,
        ``op``, ``alias``, ``model``, ``recipe``, ``mode``, ``shape`` as
        text, ``shape_name``, ``dtype``, ``backend``, ``device_index``,
        ``device``, ``impl``, ``cache``, ``status``, ``reason``), then
        ``check``, ``stats.median_ns``, ``gflops``, ``derived.gbps``,
        ``derived.pct_peak``, ``derived.pct_roof``,
        ``speedup_vs_baseline``, then every other field in the JSON's
        order. Every dict has the same keys in the same order (None where
        a result has no such field): csv.DictWriter(f, records[0]) takes
        them. Needs only the standard library."""
        return _table.records(self)[0]

    def to_dataframe(self):
        """A pandas DataFrame of to_records(): one row per result, the same
        columns in the same order (lists stay list cells). Needs pandas:
        without it, an ImportError (also a microbench.Error) that says how
        to install it."""
        rows, columns = _table.records(self)
        return _table.dataframe("to_dataframe", rows, columns)

    def step_records(self):
        """Flat dicts, one per step of every model result run as a graph
        (``steps``): the result's ``id``, the step's index ``step``, then
        the step's fields (``label``, ``op``, ``impl``, ``phase``,
        ``median_ns``, ``flop``, ...). Needs only the standard library."""
        return _table.step_records(self)[0]

    def steps_dataframe(self):
        """The steps in long form (step_records()) as a pandas DataFrame;
        join it to to_dataframe() on ``id``. Needs pandas."""
        rows, columns = _table.step_records(self)
        return _table.dataframe("steps_dataframe", rows, columns)

    def table(self, context=None):
        """The console table the CLI prints (format_table)."""
        from .report import format_table
        return format_table(self, context=context)

    @property
    def ok(self):
        """True when every result ran and passed its check."""
        return all(r.ok and r.passed for r in self)


def load_results(path):
    """The results of a results file (JSON document or .jsonl stream, as
    ``mbench`` and write_report write them) as a ResultList; its ``notes``
    say what reading dropped (a stream's last line cut short)."""
    handle = ctypes.c_void_p()
    check(lib().mb_results_load(str(path).encode(), ctypes.byref(handle)),
          "load_results")
    try:
        note = lib().mb_results_note(handle).decode()
        out = ResultList(notes=[note] if note else [])
        for i in range(lib().mb_results_count(handle)):
            out.append(Result(json.loads(
                lib().mb_results_json(handle, i).decode())))
        return out
    finally:
        lib().mb_results_destroy(handle)
