"""What the library defines, independent of any context: ops, aliases,
recipes and models (constant data)."""
import ctypes

from . import _parse as P
from . import _structs as S
from ._lib import lib


def _op_dict(op):
    L = lib()
    count = ctypes.c_size_t()
    dtypes = L.mb_op_dtypes(op, ctypes.byref(count))
    n_in, n_out = L.mb_op_num_inputs(op), L.mb_op_num_outputs(op)
    names = [S.text(L.mb_op_operand_name(op, r)) for r in range(n_in + n_out)]
    return {
        "name": S.text(L.mb_op_name(op)),
        "summary": S.text(L.mb_op_summary(op)),
        "rank": L.mb_op_rank(op),
        "shape": S.text(L.mb_op_shape_syntax(op)),
        "dtypes": [P.dtype_name(dtypes[i]) for i in range(count.value)],
        "composite": bool(L.mb_op_is_composite(op)),
        "inputs": names[:n_in],
        "outputs": names[n_in:],
        "params": S.text(L.mb_op_params_doc(op)),
    }


def list_ops():
    """Every op: dicts with name, summary, rank, shape (its syntax, e.g.
    "MxKxN"), dtypes (the input dtypes it defines), composite (a model op
    run as a graph), inputs and outputs (operand names, in the order a
    kernel receives them) and params (its parameters, one line)."""
    out = []
    op = lib().mb_op_next(None)
    while op:
        out.append(_op_dict(op))
        op = lib().mb_op_next(op)
    return out


def list_aliases():
    """The predecessor tools' names (gemm_fp8_rowwise, ...): dicts with
    name, op and summary. Any of them works as run(op=...)."""
    out = []
    for i in range(lib().mb_op_alias_count()):
        op, summary = ctypes.c_char_p(), ctypes.c_char_p()
        name = lib().mb_op_alias_name(i, ctypes.byref(op),
                                      ctypes.byref(summary))
        out.append({"name": S.text(name), "op": S.text(op.value),
                    "summary": S.text(summary.value)})
    return out


def list_recipes():
    """torchao's quantization recipes: dicts with name, summary, trains
    (has a training step) and min_sqnr_db (the accuracy floor)."""
    return [{"name": name,
             "summary": S.text(lib().mb_recipe_summary(code)),
             "trains": bool(lib().mb_recipe_trains(code)),
             "min_sqnr_db": lib().mb_recipe_min_sqnr_db(code)}
            for code, name in P.enum_names(lib().mb_recipe_name)]


def list_models():
    """torchao's model types: dicts with name, summary, and modes (those
    of "inference", "training" it can run in)."""
    L = lib()
    modes = [S.text(L.mb_mode_name(i)) for i in range(L.mb_mode_count())]
    out = []
    for i in range(L.mb_model_count()):
        summary = ctypes.c_char_p()
        name = L.mb_model_name(i, ctypes.byref(summary))
        out.append({"name": S.text(name), "summary": S.text(summary.value),
                    "modes": [m for m in modes if _runs_in(name, m)]})
    return out


def _runs_in(model, mode):
    op = ctypes.c_char_p()
    params = S.OpParams()
    status = lib().mb_model_resolve(model, mode.encode(), ctypes.byref(op),
                                    ctypes.byref(params))
    lib().mb_error_clear()
    return status == 0
