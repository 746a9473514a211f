"""Names to the library's enums, through the library's own parsers: the same
aliases the CLI accepts, and an error that lists the valid choices."""
import ctypes

from . import _structs as S
from ._lib import check, lib
from .errors import MB_ERR_INVALID_ARG, Error

LOG_LEVELS = {"error": S.LOG_ERROR, "warn": S.LOG_WARN,
              "warning": S.LOG_WARN, "info": S.LOG_INFO,
              "debug": S.LOG_DEBUG}


def _text(value, arg):
    if not isinstance(value, str):
        raise Error("%s: expected a name (str), got %r" % (arg, value),
                    MB_ERR_INVALID_ARG)
    return value.encode()


def _enum(parser, value, arg):
    out = ctypes.c_int()
    check(getattr(lib(), parser)(_text(value, arg), ctypes.byref(out)), arg)
    return out.value


def dtype(value, arg="dtype"):
    """A dtype name ("f32", "bfloat16", "torch.float8_e4m3fn") -> mb_dtype_t;
    None -> MB_DTYPE_NONE (the op's default)."""
    return 0 if value is None else _enum("mb_dtype_from_name", value, arg)


def enum_names(name_fn, first=0):
    """(code, name) of every value of a C enum from `first` on, through its
    name function, which says "?" past the last value."""
    code = first
    while True:
        name = S.text(name_fn(code))
        if name in ("?", ""):
            return
        yield code, name
        code += 1


def dtype_name(code):
    """mb_dtype_t -> name; None for MB_DTYPE_NONE ("any"/"op default")."""
    return None if code == 0 else S.text(lib().mb_dtype_name(code))


def _enum_parser(parser, default_arg):
    """A parser of names of one enum: (value, arg=default_arg) -> code."""
    def parse(value, arg=default_arg):
        return _enum(parser, value, arg)
    parse.__name__ = default_arg
    return parse


activation = _enum_parser("mb_activation_from_name", "activation")
recipe = _enum_parser("mb_recipe_from_name", "recipe")
cache = _enum_parser("mb_cache_policy_from_name", "cache")
flush = _enum_parser("mb_flush_from_name", "flush")
criterion = _enum_parser("mb_criterion_from_name", "criterion")
report_format = _enum_parser("mb_format_from_name", "format")


def scaling(value, arg):
    """"row", "block:1x128", "group:128", ... -> mb_scaling_t."""
    out = S.Scaling()
    check(lib().mb_scaling_from_string(_text(value, arg), ctypes.byref(out)),
          arg)
    return out


def log_level(value):
    try:
        return LOG_LEVELS[value]
    except (KeyError, TypeError):
        raise Error("log_level: unknown level %r; valid: error, warn, info, "
                    "debug" % (value,), MB_ERR_INVALID_ARG) from None


def shape(value):
    """(512, 512, 512), [4096, 4096] or "512x512x512" -> list of ints, as
    ``mbench run --shape`` reads it."""
    if isinstance(value, str):
        parts = value.replace("X", "x").replace(",", "x").split("x")
    elif isinstance(value, (tuple, list)):
        parts = list(value)
    else:
        raise Error("shape: expected a tuple of ints or a string like "
                    "\"1024x1024x1024\", got %r" % (value,),
                    MB_ERR_INVALID_ARG)
    dims = []
    for p in parts:
        try:
            d = int(p.strip() if isinstance(p, str) else p)
        except (TypeError, ValueError):
            d = 0
        if d <= 0 or (not isinstance(p, str) and d != p):
            raise Error("shape %r: expected positive integers, e.g. "
                        "(1024, 1024, 1024) or \"1024x1024x1024\"" % (value,),
                        MB_ERR_INVALID_ARG)
        dims.append(d)
    if not dims or len(dims) > S.MAX_DIMS:
        raise Error("shape %r: expected 1 to %d dimensions"
                    % (value, S.MAX_DIMS), MB_ERR_INVALID_ARG)
    return dims
