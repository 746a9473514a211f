"""The one exception the package raises for the library's errors."""

# The status codes of include/microbench/common.h (MB_STATUS_MAP). Kept here
# so an error can be named before (or without) the library being loaded.
STATUS_NAMES = {
    0: "MB_OK",
    -1: "MB_ERR_INVALID_ARG",
    -2: "MB_ERR_NOT_FOUND",
    -3: "MB_ERR_UNSUPPORTED",
    -4: "MB_ERR_NO_MEMORY",
    -5: "MB_ERR_BACKEND",
    -6: "MB_ERR_IO",
    -7: "MB_ERR_ABI",
    -8: "MB_ERR_PARSE",
    -9: "MB_ERR_NO_DEVICE",
    -10: "MB_ERR_INTERNAL",
    -11: "MB_ERR_INTERRUPTED",
}
STATUS_CODES = {name: code for code, name in STATUS_NAMES.items()}

MB_OK = 0
MB_ERR_INVALID_ARG = -1
MB_ERR_NOT_FOUND = -2
MB_ERR_BACKEND = -5
MB_ERR_ABI = -7
MB_ERR_INTERNAL = -10
MB_ERR_INTERRUPTED = -11


class Error(Exception):
    """A libmicrobench call failed, or its arguments were rejected.

    ``str(error)`` is the message: what failed and why, with the valid
    choices where there are any (the library's own ``mb_error_last()``
    text, prefixed with the argument it was about). ``error.status`` is
    the symbolic status name (``"MB_ERR_NOT_FOUND"``), ``error.code`` the
    number (``-2``).
    """

    def __init__(self, message, status="MB_ERR_INVALID_ARG"):
        if isinstance(status, int):
            code = status
            status = STATUS_NAMES.get(code, "MB_ERR_INTERNAL")
        else:
            code = STATUS_CODES.get(status, -10)
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    def __repr__(self):
        return "microbench.Error(%r, status=%r)" % (self.message, self.status)


class KeywordError(Error, TypeError):
    """A keyword the function does not take: an Error naming it and the
    keywords it does take (the closest first), and a TypeError as Python
    itself would raise."""


class MissingDependency(Error, ImportError):
    """An optional package a function needs is not installed (pandas for
    to_dataframe): an Error saying how to install it, and the ImportError
    Python itself would raise (``name`` is the missing package)."""

    def __init__(self, message, package):
        super().__init__(message, "MB_ERR_UNSUPPORTED")
        self.name = package
