"""Results as flat rows: every field of a result's JSON object
(docs/schema.md) under a dotted column name, for csv and pandas.

Nested objects become dotted columns (``stats.median_ns``,
``params.scale_a.mode``, ``phases.forward.median_ns``); lists stay one
value (``samples_ns``, ``telemetry.sm_clock_mhz``, ``steps`` as a list of
dicts), so a row holds the whole result and nothing is lost. A few columns
the JSON does not have come first, for reading and grouping: ``shape`` as
text (``64x32x16``), ``dtype`` (the first input's), ``check`` and
``gflops``."""
import copy

from .errors import MissingDependency

# Who ran what, first; then the figures one looks at first. These columns
# are in every row (None where a result has no such field); the rest follow
# in the JSON's own order, only where some result has them.
IDENTITY = ("id", "name", "problem", "op", "alias", "model", "recipe", "mode",
            "shape", "shape_name", "dtype", "backend", "device_index",
            "device", "impl", "cache", "status", "reason")
HEADLINE = ("check", "stats.median_ns", "gflops", "derived.gbps",
            "derived.pct_peak", "derived.pct_roof", "speedup_vs_baseline")
_FIRST = IDENTITY + HEADLINE


def flatten(obj, prefix="", out=None):
    """{"a": {"b": 1}, "c": [1, 2]} -> {"a.b": 1, "c": [1, 2]}: objects
    become dotted keys (an empty object, e.g. the params of an op that has
    none, has no fields and gives no key), lists and scalars stay values
    (deep copies)."""
    out = {} if out is None else out
    for key, value in obj.items():
        name = prefix + key
        if isinstance(value, dict):
            flatten(value, name + ".", out)
        else:
            out[name] = copy.deepcopy(value)
    return out


def _merge_order(columns, seen, keys, fixed):
    """Adds the keys not yet in `columns`, each after the last column of
    its own object (so a field only a later result has, e.g. a model's
    ``stats.throttled``, sits with ``stats.*``, not at the far end), never
    among the first `fixed` columns."""
    for key in keys:
        if key in seen:
            continue
        top = key.split(".", 1)[0]
        at = len(columns)
        for i in range(len(columns) - 1, fixed - 1, -1):
            if columns[i].split(".", 1)[0] == top:
                at = i + 1
                break
        columns.insert(at, key)
        seen.add(key)


def shape_text(shape):
    """(64, 32, 16) -> "64x32x16": the shape as the tables write it."""
    return "x".join(str(d) for d in shape)


def _row(result):
    data = result._data
    row = flatten(data)
    # The shape object is shape.M, shape.K, ...; "shape" is its text.
    row["shape"] = shape_text(result.shape)
    row["dtype"] = result.dtype
    row["check"] = result.check_text()
    row["gflops"] = result.gflops
    return row


def columns_of(rows, first=()):
    """The columns of `rows`: `first`, then every other key in order."""
    columns, seen = list(first), set(first)
    for row in rows:
        _merge_order(columns, seen, [k for k in row if k not in seen],
                     len(first))
    return columns


def records(results):
    """(rows, columns): one flat dict per result, every dict with every
    column in the same order (None where a result has no such field)."""
    rows = [_row(r) for r in results]
    columns = columns_of(rows, _FIRST)
    return [{c: row.get(c) for c in columns} for row in rows], columns


def step_records(results):
    """(rows, columns): one flat dict per step of every result that has
    steps, with the result's ``id`` and the step's index ``step``."""
    rows = []
    for r in results:
        for i, step in enumerate(r._data.get("steps") or ()):
            row = {"id": r.id, "step": i}
            row.update(flatten(step))
            rows.append(row)
    columns = columns_of(rows, ("id", "step"))
    return [{c: row.get(c) for c in columns} for row in rows], columns


def pandas_module(what):
    """pandas, imported on first use; without it an error that says how to
    install it (the rest of the package needs only the standard library)."""
    try:
        import pandas
    except ImportError as e:
        raise MissingDependency(
            "%s needs pandas, which is not installed (%s): pip install "
            "pandas, or on Debian/Ubuntu apt install python3-pandas; "
            "to_records() gives the same rows as dicts without it"
            % (what, e), "pandas") from None
    return pandas


def dataframe(what, rows, columns):
    pandas = pandas_module(what)
    return pandas.DataFrame.from_records(rows, columns=columns)
