"""The HTML report and its charts (mb_report_html): what ``mbench report``
writes, from result files or from Results in memory."""
import ctypes
import os
import tempfile

from . import _structs as S
from ._lib import check, lib
from .errors import MB_ERR_INVALID_ARG, Error
from .report import write_report
from .result import Result, ResultList

# ``by`` -> mb_compare_options_t.match_problem (mbench compare --by).
_BY = {"id": 0, "problem": 1}


def _runs(inputs):
    """The inputs as a list of runs: one run alone (a path, a Result, a
    ResultList), or each item of a list or tuple."""
    if isinstance(inputs, (str, bytes, os.PathLike, Result, ResultList)):
        return [inputs]
    if not isinstance(inputs, (list, tuple)):
        raise Error("report: inputs: expected a results file, a Result, a "
                    "ResultList or a list of them, got %r" % (inputs,),
                    MB_ERR_INVALID_ARG)
    return list(inputs)


def _compare_options(threshold_pct, alpha, by):
    """mb_compare_options_t for two runs (the library checks the values);
    None (the library's defaults) when nothing is asked."""
    if threshold_pct is None and alpha is None and by is None:
        return None
    opts = S.CompareOptions()
    if by is not None:
        if by not in _BY:
            raise Error("report: by %r; valid: id, problem" % (by,),
                        MB_ERR_INVALID_ARG)
        opts.match_problem = _BY[by]
    # Only the type is checked here (ctypes needs a number); the range is
    # the library's (mb_report_html names the value and the valid ones).
    for name, value in (("threshold_pct", threshold_pct), ("alpha", alpha)):
        if value is None:
            continue
        if not _number(value):
            raise Error("report: %s %r; expected a number" % (name, value),
                        MB_ERR_INVALID_ARG)
        setattr(opts, name, value)
    return opts


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text_arg(value, arg):
    if value is None:
        return None
    if not isinstance(value, str):
        raise Error("report: %s: expected a str, got %r" % (arg, value),
                    MB_ERR_INVALID_ARG)
    return value.encode()


def report(inputs, path, plot=None, title=None, threshold_pct=None,
           alpha=None, by=None, context=None):
    """Writes the HTML report of ``inputs`` to ``path``, as ``mbench report
    FILE... -o path`` does: one self-contained file (inline SVG, works
    offline) with a roofline per device, the recipes' speedup heatmap,
    throughput by shape, each result's samples, a sortable, filterable
    table and the runs' metadata; with two runs, their comparison
    (docs/report.md).

    ``inputs``: one run, or a list of runs (two are compared: ``[old,
    new]``). A run is a results file (a document or ``.jsonl`` stream, as
    ``mbench run -o`` or write_report write it), a ResultList (or, inside
    the list, a list of Results), or one Result. Results in memory are
    written to temporary JSON documents first (write_report, with the
    devices of ``context``: default, the default context; the roofline's
    peaks and bandwidth come from them); the report names them
    ``run1.json``, ``run2.json``, ... in a temporary directory.

    ``plot``: None for the whole report, or one chart alone as an SVG
    document: "roofline", "heatmap", "shapes", "compare". ``title``: the
    page's (default "libmicrobench report"). Two runs are compared as
    ``mbench compare`` does: ``threshold_pct`` (5: a smaller change is the
    same), ``alpha`` (0.05: the significance level of the samples' test),
    ``by`` ("id", the default, or "problem": to compare devices or
    backends).

    The file is written atomically; an error (a bad file, an unknown plot,
    nothing to plot) raises microbench.Error naming it and leaves ``path``
    as it was.
    """
    runs = _runs(inputs)
    if not runs:
        raise Error("report: no inputs (result files or Results)",
                    MB_ERR_INVALID_ARG)
    cmp = _compare_options(threshold_pct, alpha, by)
    opts = S.ReportHtmlOptions(title=_text_arg(title, "title"),
                               plot=_text_arg(plot, "plot"),
                               compare=(ctypes.pointer(cmp)
                                        if cmp is not None else None))
    with tempfile.TemporaryDirectory(prefix="microbench-report-") as tmp:
        paths = []
        for i, run in enumerate(runs):
            if isinstance(run, (str, bytes, os.PathLike)):
                paths.append(os.fsencode(run))
                continue
            if isinstance(run, Result):
                run = [run]
            elif not (isinstance(run, (list, tuple)) and
                      all(isinstance(x, Result) for x in run)):
                raise Error("report: input %d: expected a results file, a "
                            "Result or a list of Results, got %r"
                            % (i, run), MB_ERR_INVALID_ARG)
            file = os.path.join(tmp, "run%d.json" % (i + 1))
            write_report(run, file, format="json", context=context)
            paths.append(os.fsencode(file))
        array = (ctypes.c_char_p * len(paths))(*paths)
        check(lib().mb_report_html(array, len(paths), opts,
                                   os.fsencode(path)), "report")
