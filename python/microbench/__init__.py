"""libmicrobench from Python: accelerator microbenchmarks with checked
numerics, through ctypes (standard library only).

    import microbench
    r = microbench.run(op="gemm", shape=(512, 512, 512), dtype="f32")
    print(r, r.passed, r.median_ns)

The module-level functions use a default Context created on first use;
make your own Context to choose backends, route logging, register Python
kernels, or use several threads. See docs/python.md.
"""
import inspect

from . import _lib, _spec
from .catalog import list_aliases, list_models, list_ops, list_recipes
from .context import Context, default_context
from .errors import Error
from .kernel import Tensor, benchmark
from .plan import PlanEntries
from .report import format_table, write_report
from ._html import report  # after .report: the name is the function's
from .result import Result, ResultList, load_results

__all__ = [
    "Context", "Error", "PlanEntries", "Result", "ResultList", "Tensor",
    "benchmark", "default_context", "format_table", "git_commit",
    "library_path", "list_aliases", "list_backends", "list_devices",
    "list_models", "list_ops", "list_recipes", "load_results", "report",
    "run", "run_config", "version", "write_report",
]


def version():
    """The loaded library's version ("0.1.0")."""
    return _lib.lib().mb_version().decode()


def git_commit():
    """The git commit the library was built from ("unknown" outside
    git)."""
    return _lib.lib().mb_git_commit().decode()


def library_path():
    """The path of the libmicrobench file in use."""
    return _lib.library_path()


def list_backends():
    """The default context's backends (Context.backends)."""
    return default_context().backends()


def list_devices(calibrate=False):
    """The default context's devices (Context.devices)."""
    return default_context().devices(calibrate=calibrate)


def run(op=None, shape=None, dtype=None, **options):
    """Runs one benchmark in the default context (Context.run)."""
    return default_context().run(op, shape, dtype, **options)


# help(microbench.run) shows every keyword.
run.__signature__ = inspect.signature(_spec.build)


def run_config(path, backend=None, filter=None, max_flop=None,
               dry_run=False, **timing):
    """Runs a config file in the default context (Context.run_config)."""
    return default_context().run_config(path, backend=backend,
                                        filter=filter, max_flop=max_flop,
                                        dry_run=dry_run, **timing)
