"""Writing results with the library's own writers (mb_report_*): the
console table, JSON, CSV, markdown and ossdb exactly as ``mbench`` writes
them."""
import ctypes
import os
import sys
import tempfile

from . import _parse as P
from . import _structs as S
from ._lib import check, lib
from .result import Result

_EXTENSIONS = {"json": ".json", "csv": ".csv", "md": ".md",
               "markdown": ".md", "ossdb": ".json"}


def _c_result(result):
    """A C result re-created from a Result's JSON (the caller destroys)."""
    handle = ctypes.c_void_p()
    check(lib().mb_result_from_json(result.to_json().encode(),
                                    ctypes.byref(handle)), "write_report")
    return handle


def _argv():
    args = [a.encode("utf-8", "replace") for a in sys.argv if a]
    return len(args), (ctypes.c_char_p * max(len(args), 1))(*args)


def _write(context, results, path, fmt, columns, width):
    argc, argv = _argv()
    opts = S.ReportOptions(format=fmt, path=os.fsencode(path), argc=argc,
                           columns=columns.encode() if columns else None,
                           width=width)
    opts.argv = ctypes.cast(argv, ctypes.POINTER(ctypes.c_char_p))
    rep = ctypes.c_void_p()
    check(lib().mb_report_open(context._ptr(), ctypes.byref(opts),
                               ctypes.byref(rep)), "write_report")
    try:
        for r in results:
            handle = _c_result(r)
            try:
                check(lib().mb_report_add(rep, handle), "write_report")
            finally:
                lib().mb_result_destroy(handle)
    except BaseException:
        lib().mb_report_close(rep)
        raise
    check(lib().mb_report_close(rep), "write_report")


def write_report(results, path=None, format="table", context=None,
                 columns=None, width=0):
    """Writes ``results`` (a Result or a list of them) as ``format``:
    "table", "json", "csv", "md" (or "markdown"), "ossdb" — the documents
    of docs/schema.md, with meta (version, host, argv) and the devices of
    ``context`` (default: the default context).

    Tables: ``columns`` chooses them as ``mbench --columns`` does
    ("+p90,-cache", or a full list); ``width`` > 0 fits the table to that
    many characters as ``mbench`` fits the terminal (constant columns in a
    line above, long variants in a legend); 0 keeps every chosen column at
    a fixed width.

    With ``path``, writes that file (JSON and ossdb atomically, as the CLI
    does) and returns None; without, returns the text.
    """
    from .context import default_context
    if isinstance(results, Result):
        results = [results]
    fmt = P.report_format(format)
    context = context or default_context()
    if path is not None:
        _write(context, results, path, fmt, columns, width)
        return None
    with tempfile.TemporaryDirectory(prefix="microbench-") as tmp:
        file = os.path.join(tmp, "report" + _EXTENSIONS.get(format, ".txt"))
        _write(context, results, file, fmt, columns, width)
        with open(file, encoding="utf-8") as f:
            return f.read()


def format_table(results, context=None, columns=None, width=0):
    """The console table of ``results`` (a str); ``columns`` and ``width``
    as for write_report (``width=100`` lays it out as ``mbench`` does on a
    100-column terminal)."""
    return write_report(results, None, "table", context, columns, width)
