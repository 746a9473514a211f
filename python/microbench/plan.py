"""Config files: a plan (mb_plan_load) expanded into entries, listed
(dry run) or run one by one (mb_plan_run), as ``mbench run --config``."""
import ctypes
import os

from . import _parse as P
from . import _spec
from . import _structs as S
from ._lib import check, lib
from .result import Result, ResultList


class PlanEntries(list):
    """The expanded plan of a dry run: one dict per benchmark, in the
    file's order; ``schema`` ("native", "torchao", "jax") and ``notes``."""

    def __init__(self, entries=(), schema="", notes=()):
        super().__init__(entries)
        self.schema = schema
        self.notes = list(notes)


def _entry_dict(e):
    p = e.params
    spec = e.spec
    return {
        "name": S.text(e.name), "group": S.text(e.group),
        "op": S.text(e.op), "model": S.text(e.model),
        "recipe": S.text(e.recipe), "mode": S.text(e.mode),
        "shape": tuple(p.shape[i] for i in range(p.ndim)),
        "shape_name": S.text(e.shape_name),
        "dtype": P.dtype_name(p.dtype),
        "out_dtype": P.dtype_name(p.dtype_out),
        "backend": S.text(spec.backend) or None, "device": spec.device,
        "impl": S.text(spec.impl) or None,
        "cache": S.text(lib().mb_cache_policy_name(spec.cache)),
        "device_request": S.text(e.device_request),
        "skip_reason": S.text(e.skip_reason),
        "csv_path": S.text(e.csv_path),
        "flop": e.flop, "bytes": e.bytes,
        "baseline": None if e.baseline == S.SIZE_MAX else e.baseline,
    }


def _load(path, backend, filter, max_flop, timing):
    """The plan, with the timing keywords (checked as ``mbench run``'s
    options) over every entry's timing."""
    spec = S.BenchSpec()
    fields = _spec.apply_timing(spec, **timing)
    opts = S.PlanOptions(
        backend=None if backend is None else backend.encode(),
        filter=None if filter is None else filter.encode(),
        max_flop=max_flop or 0.0, timing=ctypes.pointer(spec),
        timing_fields=fields)
    plan = ctypes.c_void_p()
    check(lib().mb_plan_load(os.fsencode(path), ctypes.byref(opts),
                             ctypes.byref(plan)), "run_config")
    return plan


def run_config(context, path, backend=None, filter=None, max_flop=None,
               dry_run=False, **timing):
    """Context.run_config (see there)."""
    unknown = set(timing) - set(_spec.TIMING_KEYWORDS)
    if unknown:
        raise _spec.unknown_keyword(
            "run_config", sorted(unknown)[0],
            ("path", "backend", "filter", "max_flop", "dry_run")
            + _spec.TIMING_KEYWORDS)
    _spec.check_number("max_flop", max_flop)
    ctx = context._ptr()
    plan = _load(path, backend, filter, max_flop, timing)
    try:
        # Every entry's backend and impl, before the first one runs.
        check(lib().mb_plan_check(ctx, plan), "run_config")
        notes = [S.text(lib().mb_plan_note(plan, i))
                 for i in range(lib().mb_plan_note_count(plan))]
        count = lib().mb_plan_count(plan)
        entries = []
        for i in range(count):
            e = S.PlanEntry()
            check(lib().mb_plan_entry(plan, i, ctypes.byref(e)), "run_config")
            entries.append(_entry_dict(e))
        if dry_run:
            return PlanEntries(entries, S.text(lib().mb_plan_schema(plan)),
                               notes)
        results = ResultList(notes=notes)
        for i in range(count):
            results.append(_run_entry(context, ctx, plan, i,
                                      entries[i]["name"]))
        return results
    finally:
        lib().mb_plan_destroy(plan)


def _run_entry(context, ctx, plan, index, name):
    out = ctypes.c_void_p()
    context._reset_kernels()
    status = lib().mb_plan_run(ctx, plan, index, ctypes.byref(out))
    exc = context._kernel_exception()
    context._end_kernels()
    check(status, "run_config: %s" % name)
    try:
        return Result._from_handle(out, context._reraise(exc))
    finally:
        lib().mb_result_destroy(out)
