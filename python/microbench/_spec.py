"""Keyword arguments to an mb_bench_spec_t and its mb_op_params_t, with the
semantics of ``mbench run``'s options (cli/cmd_run.c): every name goes
through the library's parser, and an error names the argument."""
import ctypes
import difflib
import inspect
import math
import numbers

from . import _parse as P
from . import _structs as S
from ._lib import check, lib
from .errors import MB_ERR_INVALID_ARG, MB_ERR_NOT_FOUND, Error, KeywordError

# Boolean keyword -> mb_op_params_t flag: the flags of MB_PARAM_FLAG_LIST
# (op.h) that mbench run has an option for, under their `key`
# (tests/python/test_layout.py checks them against the C list). Each is a
# keyword of build() of its own, False by default.
_PARAM_FLAGS = (
    ("quantize_inputs", S.PARAM_QUANTIZE_INPUTS),
    ("transpose", S.PARAM_TRANSPOSE),
    ("causal", S.PARAM_CAUSAL),
    ("no_affine", S.PARAM_NO_WEIGHT),
    ("tf32", S.PARAM_TF32),
    ("fast_accum", S.PARAM_FAST_ACCUM),
    ("pinned", S.PARAM_PINNED),
    ("peer", S.PARAM_PEER),
    ("explicit_dequant", S.PARAM_EXPLICIT_DEQUANT),
    ("in_place", S.PARAM_IN_PLACE),
    ("trans_a", S.PARAM_TRANS_A),
    ("trans_b", S.PARAM_TRANS_B),
    ("bshd", S.PARAM_BSHD),
)

# Timing keyword -> mb_bench_spec_t field (None keeps the spec's value) and
# its MB_TIMING_* bit.
_TIMING_FIELDS = (
    ("min_samples", "min_samples", S.TIMING_MIN_SAMPLES),
    ("min_time", "min_time_s", S.TIMING_MIN_TIME),
    ("max_noise", "max_noise", S.TIMING_MAX_NOISE),
    ("timeout", "timeout_s", S.TIMING_TIMEOUT),
    ("warmup", "warmup_s", S.TIMING_WARMUP),
    ("warmup_runs", "warmup_runs", S.TIMING_WARMUP_RUNS),
    ("repetitions", "repetitions", S.TIMING_REPETITIONS),
)
TIMING_KEYWORDS = ("criterion", "samples") + tuple(
    k for k, _, _ in _TIMING_FIELDS)


def _bad(message):
    return Error(message, MB_ERR_INVALID_ARG)


_U32, _U64 = 2**32 - 1, 2**64 - 1
# Numeric keyword -> (integer?, lowest, highest, lowest excluded?), as
# ``mbench run``'s option ranges (cli/options.c). Checked before anything
# reaches ctypes, which would wrap samples=-3 to 4294967293 (a run that
# never ends) and device=2**40 to 0.
_NUMBERS = {
    "device": (True, 0, _U32, False),
    "samples": (True, 1, _U32, False),
    "min_samples": (True, 1, _U32, False),
    "repetitions": (True, 1, _U32, False),
    "warmup_runs": (True, 0, _U32, False),
    "batch": (True, 0, _U32, False),
    "seed": (True, 0, _U64, False),
    "kv_heads": (True, 1, 2**40, False),
    "min_time": (False, 0, None, False),
    "warmup": (False, 0, None, False),
    "max_noise": (False, 0, None, True),
    "timeout": (False, 0, None, True),
    "static_scale": (False, 0, None, True),
    "eps": (False, 0, None, True),
    "max_flop": (False, 0, None, True),
    "alpha": (False, None, None, False),
    "beta": (False, None, None, False),
    "act_alpha": (False, None, None, False),
}


def check_number(name, value):
    """value for keyword `name`, checked against _NUMBERS (None passes):
    an Error naming the keyword, the value and the valid range."""
    if value is None or name not in _NUMBERS:
        return value
    integer, low, high, open_low = _NUMBERS[name]
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(
            value, numbers.Integral if integer else numbers.Real):
        raise _bad("%s=%r: expected %s, got %s"
                   % (name, value, kind, type(value).__name__))
    if not integer and not math.isfinite(value):
        raise _bad("%s=%r: expected a finite number" % (name, value))
    too_low = low is not None and (value <= low if open_low else value < low)
    if too_low or (high is not None and value > high):
        valid = ("> %s" % low if open_low else
                 "%s to %s" % (low, high) if high is not None else
                 ">= %s" % low)
        raise _bad("%s=%r is out of range; valid: %s" % (name, value, valid))
    return value


def unknown_keyword(fn_name, given, valid):
    """The KeywordError for keyword `given` of fn_name(), which takes
    `valid`."""
    close = difflib.get_close_matches(given, valid, n=3)
    hint = "; did you mean %s?" % " or ".join(repr(c) for c in close) \
        if close else ""
    return KeywordError("%s() got an unknown keyword %r%s; valid: %s"
                        % (fn_name, given, hint, ", ".join(sorted(valid))))


def _opt_bytes(value):
    return None if value is None else str(value).encode()


class Spec:
    """An mb_bench_spec_t with the params and strings it points at (ctypes
    keeps them alive as long as this object)."""

    def __init__(self, spec, params):
        self.spec = spec
        self.params = params


def apply_timing(spec, criterion=None, samples=None, **timing):
    """The timing keywords over `spec` (an S.BenchSpec), as
    ``mbench run``'s timing options: `samples` alone means criterion
    "fixed"; "fixed" needs `samples`; `samples` with another criterion is
    an error. Returns the MB_TIMING_* bits of the
    fields it set (a plan's timing_fields)."""
    fields = 0
    check_number("samples", samples)
    for key, value in timing.items():
        check_number(key, value)
    if criterion is not None:
        spec.criterion = P.criterion(criterion)
        fields |= S.TIMING_CRITERION
    if samples is not None:
        spec.samples = int(samples)
        fields |= S.TIMING_SAMPLES
        if criterion is None:
            spec.criterion = S.CRITERION_FIXED
            fields |= S.TIMING_CRITERION
    if spec.criterion == S.CRITERION_FIXED and not spec.samples:
        raise _bad("criterion=\"fixed\" needs samples=N")
    if samples is not None and spec.criterion != S.CRITERION_FIXED:
        raise _bad("samples=N is for criterion=\"fixed\"; %s stops on its "
                   "own (drop samples, or use criterion=\"fixed\")"
                   % criterion)
    for key, field, bit in _TIMING_FIELDS:
        value = timing.pop(key, None)
        if value is not None:
            setattr(spec, field, value)
            fields |= bit
    if timing:
        raise TypeError("unexpected keyword argument %r" % sorted(timing)[0])
    return fields


def _apply_model(op, model, mode, recipe, activation, params):
    """--model, --mode, --recipe: the op to run (a model resolves to its
    composite op, with the model's settings in params)."""
    if model is not None and op is not None:
        raise _bad("op=%r and model=%r are both given; run either"
                   % (op, model))
    if mode is not None and model is None:
        raise _bad("mode goes with model (an op is its mode: linear or "
                   "linear_training)")
    if model is not None and activation is not None:
        raise _bad("activation goes with op; a model's activation is in its "
                   "name (ln_linear_gelu)")
    if recipe is not None:
        params.recipe = P.recipe(recipe)
    if model is None:
        if op is None:
            raise _bad("op or model is required; see microbench.list_ops(), "
                       "microbench.list_models()")
        if not lib().mb_op_find(str(op).encode()):
            check(MB_ERR_NOT_FOUND, "op")  # the message lists the ops
        return op
    resolved = ctypes.c_char_p()
    what = "model=%r%s" % (model, "" if mode is None else ", mode=%r" % mode)
    check(lib().mb_model_resolve(_opt_bytes(model), _opt_bytes(mode),
                                 ctypes.byref(resolved), ctypes.byref(params)),
          what)
    return resolved.value.decode()


def _op_params(params, dtype, out_dtype, dtype_b, dtype_q, acc_dtype,
               scale_a, scale_b, granularity, alpha, beta, static_scale,
               activation, act_alpha, eps, flags, scale_dtype=None,
               kv_heads=None):
    params.dtype = P.dtype(dtype, "dtype")
    if kv_heads is not None:
        params.kv_heads = kv_heads
    params.dtype_scale = P.dtype(scale_dtype, "scale_dtype")
    params.dtype_out = P.dtype(out_dtype, "out_dtype")
    params.dtype_b = P.dtype(dtype_b, "dtype_b")
    params.dtype_q = P.dtype(dtype_q, "dtype_q")
    params.dtype_acc = P.dtype(acc_dtype, "acc_dtype")
    if granularity is not None:
        if scale_a is not None and scale_a != granularity:
            raise _bad("scale_a=%r and granularity=%r differ (granularity is "
                       "another name for scale_a)" % (scale_a, granularity))
        scale_a, arg_a = granularity, "granularity"
    else:
        arg_a = "scale_a"
    if scale_a is not None:
        params.scale_a = P.scaling(scale_a, arg_a)
    if scale_b is not None:
        params.scale_b = P.scaling(scale_b, "scale_b")
    if activation is not None:
        params.activation = P.activation(activation)
    params.alpha = alpha
    params.beta = beta
    if act_alpha is not None:
        params.act_alpha = act_alpha
    if eps is not None:
        params.eps = eps
    if static_scale is not None:
        params.flags |= S.PARAM_STATIC
        params.scale = static_scale
    for key, flag in _PARAM_FLAGS:
        if flags.get(key):
            params.flags |= flag


def build(op=None, shape=None, dtype=None, *, model=None, mode=None,
          recipe=None, backend=None, device=0, impl=None, out_dtype=None,
          dtype_b=None, dtype_q=None, acc_dtype=None, scale_a=None,
          scale_b=None, granularity=None, alpha=1.0, beta=0.0,
          static_scale=None, activation=None, act_alpha=None, eps=None,
          scale_dtype=None, kv_heads=None, cache="cold", flush="write",
          criterion=None,
          samples=None, min_samples=None, min_time=None, max_noise=None,
          timeout=None,
          warmup=None, warmup_runs=None, batch=None, seed=None,
          repetitions=None, strict=False, **flags):
    """The Spec of one benchmark (see Context.run for the arguments); the
    op flags' keywords (_PARAM_FLAGS) come in `flags`."""
    unknown = set(flags) - set(dict(_PARAM_FLAGS))
    if unknown:
        raise unknown_keyword("run", sorted(unknown)[0],
                              list(build.__signature__.parameters))
    for name, value in (("device", device), ("batch", batch), ("seed", seed),
                        ("alpha", alpha), ("beta", beta),
                        ("static_scale", static_scale),
                        ("act_alpha", act_alpha), ("eps", eps),
                        ("kv_heads", kv_heads)):
        check_number(name, value)
    if shape is None:
        raise _bad("shape is required, e.g. shape=(1024, 1024, 1024)")
    params = S.OpParams()
    dims = P.shape(shape)
    params.ndim = len(dims)
    for i, d in enumerate(dims):
        params.shape[i] = d
    _op_params(params, dtype, out_dtype, dtype_b, dtype_q, acc_dtype,
               scale_a, scale_b, granularity, alpha, beta, static_scale,
               activation, act_alpha, eps, flags, scale_dtype, kv_heads)
    op_name = _apply_model(op, model, mode, recipe, activation, params)

    spec = S.BenchSpec(op=str(op_name).encode(),
                       backend=_opt_bytes(backend), device=device or 0,
                       impl=_opt_bytes(impl),
                       seed=42 if seed is None else seed)
    spec.params = ctypes.pointer(params)
    spec.cache = P.cache(cache)
    if P.flush(flush) == S.FLUSH_READ:
        spec.flags |= S.BENCH_FLUSH_READ
    if batch is not None:
        spec.batch = batch
    if strict:
        spec.flags |= S.BENCH_STRICT
    if seed is None:
        # As mbench without --seed: a fresh check sample at every run.
        spec.flags |= S.BENCH_FRESH_SAMPLE
    apply_timing(spec, criterion=criterion, samples=samples,
                 min_samples=min_samples, min_time=min_time,
                 max_noise=max_noise, timeout=timeout, warmup=warmup,
                 warmup_runs=warmup_runs, repetitions=repetitions)
    return Spec(spec, params)


def _with_flag_keywords(fn):
    """fn's signature with each op flag's keyword (False) in place of
    **flags, so help() and inspect list them as build() takes them."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values()
              if p.kind != inspect.Parameter.VAR_KEYWORD]
    params += [inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY,
                                 default=False) for key, _ in _PARAM_FLAGS]
    return sig.replace(parameters=params)


build.__signature__ = _with_flag_keywords(build)
