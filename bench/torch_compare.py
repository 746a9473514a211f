#!/usr/bin/env python3
"""PyTorch beside libmicrobench: time with torch what our results measured.

Reads mbench result files (JSON documents or .jsonl streams) and, for each
result it knows a torch equivalent of, times that equivalent on the same
device, shapes, dtypes and cache policy. On a GPU (--device N): CUDA
events around the runs, a warm-up, then samples until --max-time (at least
--min-samples), the median reported. "hot" repeats the runs (batched so a sample lasts at least
--min-sample-time); "cold" writes a buffer of twice the L2 before each
sample, untimed ("cold" with flush "read" reads it instead). Before each
sample a spin kernel (torch.cuda._sleep) holds the GPU while the host
queues the runs, so the host's launch cost stays out of the sample, as
mbench's blocking kernel keeps it out of ours. On the CPU (--device cpu,
bench/cpu_roofs.py): the same warm-up, batching and stopping rule, each
sample timed with time.perf_counter() around its batch (torch's CPU ops
return when done); "cold" writes (or reads) a buffer of twice the
last-level cache the results' CPU reports.

Writes one JSON document (schema microbench.torch_compare/1) that
tests/gpu/acceptance_report.py joins with our results by result id. What
to mirror is decided without torch (--plan prints it), so the mapping runs
in CI; without torch or a GPU the document says why and the exit status is
0. Standard library only until torch is imported.

  bench/torch_compare.py RESULTS.json... -o torch.json [--budget S]
  bench/torch_compare.py RESULTS.json... -o torch.json --device cpu
  bench/torch_compare.py RESULTS.json... --plan
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

SCHEMA = "microbench.torch_compare/1"
FLOATS = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
FP8 = {"f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}
FP8_FNUZ = {"f8e4m3": "float8_e4m3fnuz", "f8e5m2": "float8_e5m2fnuz"}
QMAX = {"f8e4m3": 448.0, "f8e5m2": 57344.0, "i8": 127.0}
# Our activation names -> the torch call that mirrors them.
ACTIVATIONS = {
    "relu": "F.relu(x)",
    "gelu_tanh": "F.gelu(x, approximate='tanh')",
    "gelu_erf": "F.gelu(x)",
    "silu": "F.silu(x)",
    "sigmoid": "torch.sigmoid(x)",
    "leakyrelu": "F.leaky_relu(x, alpha)",
    "relu6": "F.relu6(x)",
    "hardswish": "F.hardswish(x)",
}


class NA(Exception):
    """No torch mirror for this result; the message says why."""


# ---- reading our results ----------------------------------------------------

def read_docs(paths):
    """(results, headers): every result, and each file's document minus its
    results (meta, devices), from documents or .jsonl streams."""
    results, headers = [], []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and "results" in doc:
            results.extend(doc["results"])
            headers.append({k: v for k, v in doc.items() if k != "results"})
            continue
        for line in text.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # a line a killed run left half written
            if not isinstance(obj, dict):
                continue
            if "schema" in obj and "results" not in obj and "id" not in obj:
                headers.append(obj)
            elif "id" in obj:
                results.append(obj)
    return results, headers



def cpu_threads(paths):
    """The threads our CPU results ran on (the CPU device's cores), 0 if
    unknown: torch on the CPU is given as many."""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.readline() if path.endswith(".jsonl") else f.read()
            doc = json.loads(text)
        except (OSError, ValueError):
            continue
        for d in doc.get("devices", []) if isinstance(doc, dict) else []:
            if d.get("kind") == "cpu" and int(d.get("compute_units") or 0) > 0:
                return int(d["compute_units"])
    return 0


def load_l2(paths, kind="gpu", level="l2"):
    """The largest L2 our results' devices report (bytes), 0 if none; with
    kind "cpu" and level "llc", the CPU's last-level cache."""
    best = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                # A stream's header line holds the devices.
                text = f.readline() if path.endswith(".jsonl") else f.read()
            doc = json.loads(text)
        except (OSError, ValueError):
            continue
        for d in doc.get("devices", []) if isinstance(doc, dict) else []:
            if d.get("kind") == kind:
                best = max(best, int((d.get("cache_bytes") or {}).get(level) or 0))
    return best


# ---- what each result is in torch (no torch needed) -------------------------

def _scale(p, key):
    s = p.get(key) or {}
    mode = s.get("mode", "none")
    return mode, list(s.get("block") or [])


def _float(dt, what):
    if dt not in FLOATS:
        raise NA(f"{what} {dt}: no torch mirror for this dtype here")
    return dt


def _fp8(dt):
    if dt not in FP8:
        raise NA(f"{dt}: not an fp8 dtype torch._scaled_mm takes")
    return dt


def describe_gemm(sh, dt, p):
    m, k, n = sh["M"], sh["K"], sh["N"]
    a, b, out = dt["a"], dt["b"], dt["out"]
    if p.get("alpha", 1) != 1 or p.get("beta", 0) != 0:
        raise NA("alpha/beta other than 1/0: not mirrored")
    ma, ba = _scale(p, "scale_a")
    mb, bb = _scale(p, "scale_b")
    fast = bool(p.get("fast_accum"))
    base = {"M": m, "K": k, "N": n, "out": out, "fast_accum": fast}
    if p.get("quantize_inputs"):
        q = p.get("dtype_q", "f8e4m3")
        _float(a, "input")
        _fp8(q)
        if b != a:
            raise NA(f"quantize-inputs with A {a} and B {b}: not mirrored")
        scaling = {("row", "col"): "rowwise", ("tensor", "tensor"): "tensor"}
        if (ma, mb) not in scaling:
            raise NA(f"quantize-inputs with scales {ma} x {mb}: not mirrored")
        how = (f"amax per {'row/column' if ma == 'row' else 'tensor'}, "
               f"scale, .to({FP8[q]}) of A and B, then torch._scaled_mm")
        return dict(base, kind="gemm_qi", dtype=a, q=q,
                    scaling=scaling[(ma, mb)], how=how)
    if a in FLOATS and b == a:
        if ma != "none" or mb != "none":
            raise NA(f"{a} gemm with scales {ma} x {mb}: not mirrored")
        if out != a:
            raise NA(f"{a} in, {out} out: torch.matmul returns {a}")
        tf32 = bool(p.get("tf32"))
        ta, tb = bool(p.get("trans_a")), bool(p.get("trans_b"))
        how = "torch.matmul(a, b)"
        if ta or tb:
            how = f"torch.matmul({'a.t()' if ta else 'a'}, {'b.t()' if tb else 'b'})"
        if tf32:
            how += " with allow_tf32"
        return dict(base, kind="matmul", dtype=a, tf32=tf32, trans_a=ta,
                    trans_b=tb, how=how)
    if a in FP8 and b in FP8:
        if out not in FLOATS:
            raise NA(f"fp8 gemm to {out}: _scaled_mm writes bf16/f16/f32")
        if a == "f8e5m2" and b == "f8e5m2":
            raise NA("e5m2 x e5m2: torch._scaled_mm needs an e4m3 operand")
        if (ma, mb) == ("tensor", "tensor"):
            scaling = "tensor"
        elif (ma, mb) == ("row", "col"):
            scaling = "rowwise"
        elif ma == mb == "block" and ba == [1, 128] and bb == [128, 128]:
            scaling = "block"
        else:
            raise NA(f"scales {ma}{ba or ''} x {mb}{bb or ''}: no torch._scaled_mm "
                     "form mirrored")
        how = {"tensor": "torch._scaled_mm, tensor scales",
               "rowwise": "torch._scaled_mm, row x column scales",
               "block": "torch._scaled_mm, 1x128 x 128x128 block scales"}[scaling]
        if fast:
            how += ", use_fast_accum"
        return dict(base, kind="scaled_mm", a=a, b=b, scaling=scaling, how=how)
    if a == "i8" and b == "i8" and out == "i32" and ma == mb == "none":
        return dict(base, kind="int_mm", how="torch._int_mm(a, b)")
    raise NA(f"gemm {a} x {b} -> {out}: not mirrored")


def describe_rows(op, sh, dt, p):
    """The 2-D memory-bound ops: [M, N] operands."""
    m, n = sh["M"], sh["N"]
    a, out = dt["a"], dt["out"]
    base = {"M": m, "N": n, "dtype": a, "out": out}
    if op == "copy":
        if a not in FLOATS and a not in FP8 and a not in ("i8", "i32"):
            raise NA(f"copy of {a}: no torch dtype")
        return dict(base, kind="copy", how="dst.copy_(src)")
    if op == "quantize":
        mode, _ = _scale(p, "scale_a")
        _float(a, "input")
        if out not in QMAX:
            raise NA(f"quantize to {out}: not mirrored")
        if mode not in ("row", "col", "tensor"):
            raise NA(f"quantize granularity {mode}: not mirrored")
        if p.get("transpose") or p.get("static"):
            raise NA("transposed or static-scale quantize: not mirrored")
        target = FP8.get(out, "int8 (round)")
        return dict(base, kind="quantize", mode=mode,
                    how=f"amax per {mode}{'umn' if mode == 'col' else ''}, "
                        f"scale, .to({target})")
    if op == "dequantize":
        mode, _ = _scale(p, "scale_a")
        _float(out, "output")
        if a not in QMAX:
            raise NA(f"dequantize of {a}: not mirrored")
        if mode not in ("row", "tensor"):
            raise NA(f"dequantize granularity {mode}: not mirrored")
        if p.get("static"):
            raise NA("static-scale dequantize: not mirrored")
        return dict(base, kind="dequantize", mode=mode,
                    how=f"(q.float() * s per {mode}).to({FLOATS[out]})")
    _float(a, "input")
    if out != a:
        raise NA(f"{op} {a} -> {out}: torch returns the input dtype")
    if op == "silu_mul":
        return dict(base, kind="silu_mul", how="F.silu(x) * y")
    if op == "add":
        return dict(base, kind="add", how="torch.add(x, y, out=o)")
    if op == "activation":
        act = p.get("activation", "relu")
        if act not in ACTIVATIONS:
            raise NA(f"activation {act}: not mirrored")
        return dict(base, kind="activation", act=act,
                    alpha=p.get("act_alpha", p.get("alpha", 0.01)),
                    how=ACTIVATIONS[act])
    if op in ("layernorm", "rmsnorm"):
        affine = p.get("affine", True)
        fn = "F.layer_norm" if op == "layernorm" else "F.rms_norm"
        return dict(base, kind=op, eps=p.get("eps", 1e-5), affine=affine,
                    how=f"{fn}(x, (N,), {'w, b, ' if affine else ''}eps)")
    if op == "softmax":
        return dict(base, kind="softmax", how="torch.softmax(x, dim=-1)")
    raise NA(f"no torch mirror written for op {op}")


def describe_attention(sh, dt, p):
    a = _float(dt["a"], "input")
    if dt["out"] != a:
        raise NA(f"attention {a} -> {dt['out']}: not mirrored")
    d = {k: sh[k] for k in ("B", "H", "Sq", "Skv", "D")}
    causal, bshd = bool(p.get("causal")), bool(p.get("bshd"))
    how = "F.scaled_dot_product_attention(q, k, v" + (", is_causal=True" if causal else "") + ")"
    if bshd:
        how += " on [B, S, H, D] views"
    return dict(d, kind="attention", dtype=a, causal=causal, bshd=bshd, how=how)


LINEAR_RECIPES = {"baseline": None, "float8dq-tensor": "tensor",
                  "float8dq-row": "rowwise", "float8-block": "block"}


def describe_model(r, sh, dt, p):
    op = r.get("op")
    recipe = r.get("recipe") or p.get("recipe") or "baseline"
    if (r.get("mode") or "inference") != "inference" or op == "linear_training":
        raise NA("training graphs: not mirrored")
    hp = _float(dt["a"], "high-precision dtype")
    if op == "linear":
        if recipe not in LINEAR_RECIPES:
            raise NA(f"linear under {recipe}: not mirrored")
        scaling = LINEAR_RECIPES[recipe]
        base = {"M": sh["M"], "K": sh["K"], "N": sh["N"], "dtype": hp}
        if scaling is None:
            return dict(base, kind="matmul", out=hp, tf32=False, trans_a=False,
                        trans_b=False, fast_accum=False, how="x @ w")
        return dict(base, kind="linear_fp8", scaling=scaling,
                    how=f"x quantized per {'row' if scaling == 'rowwise' else scaling}"
                        f" (timed), w quantized once, torch._scaled_mm")
    if op == "transformer_block":
        scaling = LINEAR_RECIPES.get(recipe, "none")
        if scaling not in (None, "tensor", "rowwise"):
            raise NA(f"transformer_block under {recipe}: not mirrored")
        how = ("eager block: rms_norm, q/k/v/proj matmuls, SDPA (8 heads), "
               "adds, rms_norm, fc1, gelu, fc2")
        if scaling:
            how += (f"; each linear torch._scaled_mm, its input quantized per "
                    f"{'row' if scaling == 'rowwise' else 'tensor'} (h1 once "
                    "for q/k/v), weights quantized once")
        return {"kind": "tblock", "M": sh["M"], "K": sh["K"], "dtype": hp,
                "eps": p.get("eps", 1e-5), "scaling": scaling, "how": how}
    raise NA(f"model op {op}: not mirrored")


def describe(r):
    """The torch mirror of one result: a dict with "kind", its sizes and
    "how" (the torch expression, for the report); NA when there is none."""
    sh, dt, p = r.get("shape") or {}, r.get("dtypes") or {}, r.get("params") or {}
    op = r.get("op")
    cache = r.get("cache", "cold")
    if cache not in ("cold", "hot"):
        raise NA(f"cache {cache}: not mirrored (cold and hot are)")
    if r.get("model") or op in ("linear", "linear_training", "transformer_block",
                                "ln_linear"):
        d = describe_model(r, sh, dt, p)
    elif op == "gemm":
        d = describe_gemm(sh, dt, p)
    elif op == "attention":
        d = describe_attention(sh, dt, p)
    elif op in ("copy", "add", "activation", "layernorm", "rmsnorm", "softmax",
                "quantize", "dequantize", "silu_mul"):
        d = describe_rows(op, sh, dt, p)
    else:
        raise NA(f"no torch mirror written for op {op}")
    d["cold"] = cache == "cold"
    d["flush"] = flush_of(r)
    return d


def flush_of(r):
    """How a cold result flushed: "write" (the default memset) or "read"."""
    f = r.get("flush") or (r.get("timing") or {}).get("flush") or "write"
    return f if isinstance(f, str) else "write"


def mirror_key(r):
    """Results that time the same torch code share one measurement: copy's
    native and memcpy rows are one torch.copy_."""
    return "|".join([r.get("problem") or r.get("id", ""), r.get("cache", ""),
                     flush_of(r)])


# ---- torch ------------------------------------------------------------------

class Bench:
    """Builds each mirror's tensors and times it (needs torch and a GPU)."""

    def __init__(self, torch, args, l2_bytes):
        self.T = torch
        self.F = torch.nn.functional
        self.args = args
        self._block = None
        self.cpu = args.device == "cpu"
        if self.cpu:
            # l2_bytes is the CPU's last-level cache here (main).
            self.dev = torch.device("cpu")
            self.l2 = l2_bytes or (32 << 20)
            self.flush_buf = torch.zeros((2 * self.l2 + 3) // 4, dtype=torch.float32)
            self.spin_rate = None
            self.fnuz = False
            self.name = cpu_name()
            return
        self.dev = torch.device("cuda", args.device)
        props = torch.cuda.get_device_properties(self.dev)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0) or l2_bytes or (64 << 20)
        self.l2 = l2
        # Twice the L2, as float32 so the read flush is one reduction.
        self.flush_buf = torch.zeros((2 * l2 + 3) // 4, dtype=torch.float32,
                                     device=self.dev)
        self.spin_rate = self._spin_rate()
        self._block = None
        hip = bool(getattr(torch.version, "hip", None))
        arch = getattr(props, "gcnArchName", "") or ""
        # MI300 (gfx94x) has the FNUZ fp8 formats; OCP e4m3 elsewhere.
        self.fnuz = hip and "gfx94" in arch
        self.name = props.name

    # -- timing --

    def _events(self):
        ev = self.T.cuda.Event
        return ev(enable_timing=True), ev(enable_timing=True)

    def _spin_rate(self):
        """GPU cycles per second of torch.cuda._sleep, measured; None where
        torch has no _sleep (samples then include the launch latency)."""
        sleep = getattr(self.T.cuda, "_sleep", None)
        if sleep is None:
            return None
        s, e = self._events()
        sleep(1000)
        s.record()
        sleep(2_000_000)
        e.record()
        e.synchronize()
        ms = s.elapsed_time(e)
        return 2_000_000 / (ms * 1e-3) if ms > 0 else None

    def flush(self, how, i):
        if how == "read":
            self.flush_buf.amax()
        else:
            self.flush_buf.fill_(float(i % 251))

    def measure_cpu(self, fn, cold, flush_how):
        """measure() on the CPU: torch's CPU ops return when their work is
        done, so the host clock around a batch times it."""
        a, clock = self.args, time.perf_counter
        t0, n = clock(), 0
        while n < a.warmup_runs or clock() - t0 < a.warmup:
            fn()
            n += 1
        t0 = clock()
        fn()
        one_s = max(clock() - t0, 1e-7)
        batch = 1 if cold else max(1, min(1000, math.ceil(a.min_sample_time / one_s)))
        samples, t_start = [], clock()
        while True:
            if cold:
                self.flush(flush_how, len(samples))
            t0 = clock()
            for _ in range(batch):
                fn()
            samples.append((clock() - t0) * 1e9 / batch)
            el = clock() - t_start
            if len(samples) >= a.max_samples:
                break
            if len(samples) >= a.min_samples and el >= a.max_time:
                break
            if len(samples) >= 3 and el >= 4 * a.max_time:
                break  # a slow op: what we have will do
        return samples, batch, False

    def measure(self, fn, cold, flush_how):
        if self.cpu:
            return self.measure_cpu(fn, cold, flush_how)
        T, a = self.T, self.args
        T.cuda.synchronize(self.dev)
        t0, n = time.perf_counter(), 0
        while n < a.warmup_runs or time.perf_counter() - t0 < a.warmup:
            fn()
            n += 1
        T.cuda.synchronize(self.dev)
        # The host's cost of queueing one run sizes the spin that hides it;
        # one run's GPU time sizes hot batches.
        t0 = time.perf_counter()
        for _ in range(3):
            fn()
        host_s = (time.perf_counter() - t0) / 3
        T.cuda.synchronize(self.dev)
        s, e = self._events()
        s.record()
        fn()
        e.record()
        e.synchronize()
        one_s = max(s.elapsed_time(e) * 1e-3, 1e-7)
        batch = 1 if cold else max(1, min(1000, math.ceil(a.min_sample_time / one_s)))
        spin = 0
        if self.spin_rate:
            spin = int(self.spin_rate * min(0.05, batch * host_s * 1.5 + 20e-6))
        samples, t0 = [], time.perf_counter()
        while True:
            if cold:
                self.flush(flush_how, len(samples))
            if spin:
                T.cuda._sleep(spin)
            s.record()
            for _ in range(batch):
                fn()
            e.record()
            e.synchronize()
            samples.append(s.elapsed_time(e) * 1e6 / batch)
            el = time.perf_counter() - t0
            if len(samples) >= a.max_samples:
                break
            if len(samples) >= a.min_samples and el >= a.max_time:
                break
            if len(samples) >= 3 and el >= 4 * a.max_time:
                break  # a slow op: what we have will do
        return samples, batch, bool(spin)

    # -- tensors --

    def dtype(self, name):
        T = self.T
        if name in FLOATS:
            return getattr(T, FLOATS[name])
        if name in FP8:
            attr = (FP8_FNUZ if self.fnuz else FP8)[name]
            if not hasattr(T, attr):
                raise NA(f"this torch has no {attr}")
            return getattr(T, attr)
        if name == "i8":
            return T.int8
        if name == "i32":
            return T.int32
        raise NA(f"{name}: no torch dtype")

    def randn(self, shape, dt):
        T = self.T
        if dt in ("i8", "i32"):
            return T.randint(-100, 100, shape, device=self.dev).to(self.dtype(dt))
        return T.randn(shape, device=self.dev, dtype=T.float32).to(self.dtype(dt))

    def scaled_mm(self, a, b, sa, sb, out, fast):
        r = self.T._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out,
                              use_fast_accum=fast)
        return r[0] if isinstance(r, tuple) else r  # torch < 2.4: (out, amax)

    def quantize(self, x, q, dim):
        """x's amax along dim (None: the whole tensor), scale, cast."""
        T, qmax = self.T, QMAX[q]
        amax = x.abs().amax() if dim is None else x.abs().amax(dim=dim, keepdim=True)
        scale = amax.float().clamp(min=1e-12) / qmax
        y = (x.float() / scale).clamp(-qmax, qmax)
        if q == "i8":
            return y.round().to(T.int8), scale
        return y.to(self.dtype(q)), scale

    def block_call(self):
        """How this torch takes 1x128 x 128x128 block scales, checked on a
        small problem against the dequantized product (the scale layouts
        differ between torch versions); NA with every attempt's reason."""
        if self._block is not None:
            if isinstance(self._block, NA):
                raise self._block
            return self._block
        T, F = self.T, self.F
        m, k, n = 256, 512, 384
        fp8 = self.dtype("f8e4m3")
        a = T.randn(m, k, device=self.dev).to(fp8)
        w = T.randn(n, k, device=self.dev).to(fp8)
        sa, sb, sbn = self.block_scales(m, k, n)
        kb = k // 128
        ref = (a.float() * sa.repeat_interleave(128, dim=1)) @ (
            w.float() * sbn[:, :kb].repeat_interleave(128, 0).repeat_interleave(128, 1)).t()
        calls = [("torch._scaled_mm",
                  lambda a, b, sa, sb, out, fast: self.scaled_mm(a, b, sa, sb, out, fast))]
        st = getattr(F, "ScalingType", None)
        if hasattr(F, "scaled_mm") and st is not None:
            def member(*names):
                for nm in names:
                    if hasattr(st, nm):
                        return getattr(st, nm)
                raise NA(f"ScalingType has none of {names}")
            calls.append(("F.scaled_mm", lambda a, b, sa, sb, out, fast: F.scaled_mm(
                a, b, sa, member("BlockWise1x128", "Blockwise_1x128"), sb,
                member("BlockWise128x128", "Blockwise_128x128"),
                output_dtype=out, use_fast_accum=fast)))
        why = []
        for name, call in calls:
            try:
                got = call(a, w.t(), sa, sb, T.bfloat16, False).float()
                err = float((got - ref).norm() / ref.norm())
            except Exception as ex:  # torch's own refusal, kept as the reason
                why.append(f"{name}: {first_line(ex)}")
                continue
            if err < 0.02:
                self._block = call
                return call
            why.append(f"{name}: off by {err:.2g} (relative) against the "
                       "dequantized product: scale layout not as assumed")
        self._block = NA("block scales: " + "; ".join(why))
        raise self._block

    def block_scales(self, m, k, n):
        """A's 1x128 scales [M, K/128] outer-dim-major (stride (1, M)); B's
        128x128 scales as [K/128 rounded up to 4, N/128] with stride (1, L4),
        the transpose of sbn [N/128, L4] (torch's test_scaled_mm layouts)."""
        T = self.T
        kb, nb = k // 128, (n + 127) // 128
        l4 = (kb + 3) // 4 * 4
        sa = (T.rand(kb, m, device=self.dev) + 0.5).t()
        sbn = T.rand(nb, l4, device=self.dev) + 0.5
        return sa, sbn.t(), sbn

    def build(self, d):
        """(fn, notes): the closure one run calls, over tensors made here."""
        T, F = self.T, self.F
        kind = d["kind"]
        if kind == "matmul":
            T.backends.cuda.matmul.allow_tf32 = d["tf32"]
            m, k, n = d["M"], d["K"], d["N"]
            a = self.randn((k, m) if d["trans_a"] else (m, k), d["dtype"])
            b = self.randn((n, k) if d["trans_b"] else (k, n), d["dtype"])
            a = a.t() if d["trans_a"] else a
            b = b.t() if d["trans_b"] else b
            return lambda: T.matmul(a, b)
        if kind == "int_mm":
            a = self.randn((d["M"], d["K"]), "i8")
            b = self.randn((d["N"], d["K"]), "i8").t()
            return lambda: T._int_mm(a, b)
        if kind == "scaled_mm":
            return self._build_scaled_mm(d)
        if kind == "gemm_qi":
            return self._build_gemm_qi(d)
        if kind == "linear_fp8":
            return self._build_linear_fp8(d)
        if kind == "tblock":
            return self._build_tblock(d)
        if kind == "attention":
            return self._build_attention(d)
        shape = (d["M"], d["N"])
        x = self.randn(shape, d["dtype"])
        if kind == "copy":
            dst = T.empty_like(x)
            return lambda: dst.copy_(x)
        if kind == "add":
            y = self.randn(shape, d["dtype"])
            o = T.empty(shape, device=self.dev, dtype=self.dtype(d["out"]))
            return lambda: T.add(x, y, out=o)
        if kind == "activation":
            act, alpha = d["act"], d["alpha"]
            fns = {"relu": F.relu, "gelu_erf": F.gelu, "silu": F.silu,
                   "sigmoid": T.sigmoid, "relu6": F.relu6, "hardswish": F.hardswish,
                   "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
                   "leakyrelu": lambda t: F.leaky_relu(t, alpha)}
            f = fns[act]
            return lambda: f(x)
        if kind in ("layernorm", "rmsnorm"):
            n, eps = d["N"], d["eps"]
            w = self.randn((n,), d["dtype"]) if d["affine"] else None
            if kind == "layernorm":
                b = self.randn((n,), d["dtype"]) if d["affine"] else None
                return lambda: F.layer_norm(x, (n,), w, b, eps)
            if not hasattr(F, "rms_norm"):
                raise NA("this torch has no F.rms_norm (2.4+)")
            return lambda: F.rms_norm(x, (n,), w, eps)
        if kind == "softmax":
            return lambda: T.softmax(x, dim=-1)
        if kind == "quantize":
            dim = {"row": -1, "col": 0}.get(d["mode"])
            return lambda: self.quantize(x, d["out"], dim)
        if kind == "silu_mul":
            y = self.randn(shape, d["dtype"])
            return lambda: F.silu(x) * y
        if kind == "dequantize":
            q, _ = self.quantize(self.randn(shape, "f32"), d["dtype"],
                                 -1 if d["mode"] == "row" else None)
            s = (T.rand(d["M"], 1, device=self.dev) + 0.5 if d["mode"] == "row"
                 else T.tensor(1.5, device=self.dev))
            out = self.dtype(d["out"])
            return lambda: (q.float() * s).to(out)
        raise NA(f"no builder for {kind}")

    def _build_scaled_mm(self, d):
        T = self.T
        m, k, n = d["M"], d["K"], d["N"]
        out, fast = self.dtype(d["out"]), d["fast_accum"]
        a = self.randn((m, k), d["a"])
        b = self.randn((n, k), d["b"]).t()  # column-major K x N, as cuBLASLt's TN
        if d["scaling"] == "tensor":
            sa = T.tensor(1.0, device=self.dev)
            sb = T.tensor(1.0, device=self.dev)
        elif d["scaling"] == "rowwise":
            sa = T.rand(m, 1, device=self.dev) + 0.5
            sb = T.rand(1, n, device=self.dev) + 0.5
        else:
            call = self.block_call()
            sa, sb, _ = self.block_scales(m, k, n)
            return lambda: call(a, b, sa, sb, out, fast)
        return lambda: self.scaled_mm(a, b, sa, sb, out, fast)

    def _build_gemm_qi(self, d):
        m, k, n = d["M"], d["K"], d["N"]
        out, q, fast = self.dtype(d["out"]), d["q"], d["fast_accum"]
        a = self.randn((m, k), d["dtype"])
        b = self.randn((k, n), d["dtype"])
        row = d["scaling"] == "rowwise"

        def fn():
            qa, sa = self.quantize(a, q, 1 if row else None)
            qb, sb = self.quantize(b, q, 0 if row else None)
            # B quantized along its columns, made column-major (N x K rows),
            # as our quantize-inputs writes it.
            qb = qb.t().contiguous().t()
            return self.scaled_mm(qa, qb, sa, sb, out, fast)
        return fn

    def _build_linear_fp8(self, d):
        m, k, n, hp = d["M"], d["K"], d["N"], self.dtype(d["dtype"])
        x = self.randn((m, k), d["dtype"])
        w = self.randn((k, n), d["dtype"]) / math.sqrt(k)
        scaling = d["scaling"]
        if scaling == "block":
            return self._build_linear_block(x, w, hp)
        row = scaling == "rowwise"
        wq, sw = self.quantize(w, "f8e4m3", 0 if row else None)  # setup, untimed
        wq = wq.t().contiguous().t()

        def fn():
            xq, sx = self.quantize(x, "f8e4m3", 1 if row else None)
            return self.scaled_mm(xq, wq, sx, sw, hp, False)
        return fn

    def _build_linear_block(self, x, w, hp):
        """float8-block: W in 128x128 blocks once (untimed), X in 1x128
        blocks inside the timed run, scales laid out as block_scales."""
        T = self.T
        (m, k), n = x.shape, w.shape[1]
        if k % 128 or n % 128:
            raise NA("float8-block needs K and N multiples of 128")
        call, fp8, qmax = self.block_call(), self.dtype("f8e4m3"), QMAX["f8e4m3"]
        kb, nb = k // 128, n // 128
        wb = w.view(kb, 128, nb, 128).float()
        s = wb.abs().amax(dim=(1, 3)).clamp(min=1e-12) / qmax  # [K/128, N/128]
        wq = (wb / s[:, None, :, None]).clamp(-qmax, qmax).to(fp8).view(k, n)
        wq = wq.t().contiguous().t()
        sbn = T.ones(nb, (kb + 3) // 4 * 4, device=self.dev)
        sbn[:, :kb] = s.t()
        sw = sbn.t()

        def fn():
            xb = x.view(m, kb, 128).float()
            sx = xb.abs().amax(dim=-1).clamp(min=1e-12) / qmax  # [M, K/128]
            xq = (xb / sx.unsqueeze(-1)).clamp(-qmax, qmax).to(fp8).view(m, k)
            return call(xq, wq, sx.t().contiguous().t(), sw, hp, False)
        return fn

    def _build_tblock(self, d):
        T, F = self.T, self.F
        m, k, eps, dt = d["M"], d["K"], d["eps"], d["dtype"]
        if k % 8:
            raise NA("K not a multiple of 8 (8 heads)")
        if not hasattr(F, "rms_norm") or not hasattr(F, "scaled_dot_product_attention"):
            raise NA("this torch lacks F.rms_norm or F.scaled_dot_product_attention")
        hd, t, hp = k // 8, m * 16, self.dtype(dt)
        x = self.randn((m, 16, k), dt)
        n1 = self.randn((k,), dt)
        n2 = self.randn((k,), dt)
        ws = [self.randn((k, k), dt) / math.sqrt(k) for _ in range(4)]
        ws.append(self.randn((k, 4 * k), dt) / math.sqrt(k))
        ws.append(self.randn((4 * k, k), dt) / math.sqrt(4 * k))
        scaling = d.get("scaling")
        if scaling:
            row = scaling == "rowwise"
            qw = []
            for w in ws:  # setup, untimed: per output channel or per tensor
                wq, sw = self.quantize(w, "f8e4m3", 0 if row else None)
                qw.append((wq.t().contiguous().t(), sw))

            def quant(h):  # [T, K_in] -> what every linear on it reads
                return self.quantize(h.reshape(t, -1), "f8e4m3", 1 if row else None)

            def lin(hq, i):
                return self.scaled_mm(hq[0], qw[i][0], hq[1], qw[i][1], hp, False)
        else:
            def quant(h):
                return h.reshape(t, -1)

            def lin(h2d, i):
                return h2d @ ws[i]
        wq_, wk_, wv_, wo_, w1_, w2_ = range(6)

        def heads(y):
            return y.view(m, 16, 8, hd).transpose(1, 2)

        def fn():
            h1 = quant(F.rms_norm(x, (k,), n1, eps))
            o = F.scaled_dot_product_attention(heads(lin(h1, wq_)), heads(lin(h1, wk_)),
                                               heads(lin(h1, wv_)))
            r1 = x + lin(quant(o.transpose(1, 2)), wo_).view(m, 16, k)
            h2 = quant(F.rms_norm(r1, (k,), n2, eps))
            f = quant(F.gelu(lin(h2, w1_)))
            return r1 + lin(f, w2_).view(m, 16, k)
        return fn

    def _build_attention(self, d):
        F = self.F
        if not hasattr(F, "scaled_dot_product_attention"):
            raise NA("this torch has no F.scaled_dot_product_attention (2.0+)")
        b, h, sq, skv, hd = d["B"], d["H"], d["Sq"], d["Skv"], d["D"]

        def make(s):
            if d["bshd"]:
                return self.randn((b, s, h, hd), d["dtype"]).transpose(1, 2)
            return self.randn((b, h, s, hd), d["dtype"])
        q, k, v = make(sq), make(skv), make(skv)
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=d["causal"])


def first_line(ex):
    text = str(ex).strip().splitlines()
    return (text[0] if text else type(ex).__name__)[:300]


def stats_of(samples):
    s = sorted(samples)

    def q(p):
        i = p * (len(s) - 1)
        lo = int(math.floor(i))
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (i - lo)
    med = statistics.median(s)
    return {"count": len(s), "median_ns": med, "min_ns": s[0], "max_ns": s[-1],
            "p10_ns": q(0.1), "p90_ns": q(0.9),
            "noise": ((q(0.75) - q(0.25)) / 1.349 / med) if med > 0 else None}


# ---- main -------------------------------------------------------------------

def write(path, doc):
    if path == "-":
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), else the platform's."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform  # noqa: PLC0415
    return platform.processor() or platform.machine() or "cpu"


def import_torch(cpu=False):
    """(torch, None) or (None, why not)."""
    try:
        import torch  # noqa: PLC0415 -- optional, and slow to import
    except Exception as ex:  # ImportError, or a broken install's own error
        return None, f"import torch failed: {first_line(ex)}"
    if cpu:
        return torch, None
    if not torch.cuda.is_available():
        return None, (f"torch {torch.__version__} sees no GPU "
                      "(torch.cuda.is_available() is False)")
    return torch, None


def device_arg(text):
    if text == "cpu":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a CUDA device index or cpu")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="mbench result files (.json or .jsonl)")
    ap.add_argument("-o", "--output", default="-", help="torch results JSON (default stdout)")
    ap.add_argument("--plan", action="store_true",
                    help="print what each result is mirrored by (or why not); run nothing")
    ap.add_argument("--device", type=device_arg, default=0,
                    help="CUDA device index (0), or cpu: time torch on the CPU")
    ap.add_argument("--threads", type=int, default=0,
                    help="--device cpu: torch's threads (default: the cores our "
                         "results' CPU ran on)")
    ap.add_argument("--max-time", type=float, default=0.5,
                    help="seconds of sampling per benchmark, once --min-samples are in (0.5)")
    ap.add_argument("--min-samples", type=int, default=10)
    ap.add_argument("--max-samples", type=int, default=500)
    ap.add_argument("--min-sample-time", type=float, default=200e-6,
                    help="hot: batch runs so a sample lasts at least this (200 us, as ours)")
    ap.add_argument("--warmup", type=float, default=0.05, help="warm-up seconds (0.05)")
    ap.add_argument("--warmup-runs", type=int, default=2)
    ap.add_argument("--budget", type=float, default=0,
                    help="stop starting benchmarks after this many seconds (0: no limit)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    start = time.monotonic()
    try:
        results, _ = read_docs(args.results)
    except (OSError, UnicodeDecodeError) as ex:
        print(f"torch_compare: {ex}", file=sys.stderr)
        return 2
    plan = []
    for r in results:
        try:
            plan.append((r, describe(r), None))
        except (NA, KeyError) as ex:
            why = str(ex) if isinstance(ex, NA) else f"result lacks {ex}"
            plan.append((r, None, why))
    if args.plan:
        for r, d, why in plan:
            print(f"{r.get('id')}: {d['how'] if d else 'n/a: ' + why}")
        return 0

    doc = {"schema": SCHEMA, "torch": {"available": False}, "settings": {
        k: getattr(args, k) for k in ("max_time", "min_samples", "max_samples",
                                      "min_sample_time", "warmup", "warmup_runs",
                                      "budget")}, "entries": []}
    entries = doc["entries"]
    for r, d, why in plan:
        e = {"id": r.get("id"), "name": r.get("name"), "key": mirror_key(r)}
        if d:
            e.update(status="not run", how=d["how"], reason="")
        else:
            e.update(status="n/a", how="", reason=why)
        entries.append(e)
    cpu = args.device == "cpu"
    torch, why = import_torch(cpu)
    if torch is None:
        doc["torch"]["why"] = why
        write(args.output, doc)
        print(f"torch_compare: torch: not available: {why}", file=sys.stderr)
        return 0
    try:
        bench = Bench(torch, args, load_l2(args.results, "cpu", "llc") if cpu
                      else load_l2(args.results))
    except Exception as ex:
        doc["torch"]["why"] = f"torch could not set up the GPU: {first_line(ex)}"
        write(args.output, doc)
        print(f"torch_compare: {doc['torch']['why']}", file=sys.stderr)
        return 0
    doc["torch"] = {"available": True, "version": torch.__version__,
                    "device_kind": "cpu" if cpu else "gpu",
                    "cuda": getattr(torch.version, "cuda", None),
                    "hip": getattr(torch.version, "hip", None),
                    "device": bench.name, "l2_bytes": bench.l2,
                    "flush_bytes": bench.flush_buf.numel() * 4,
                    "spin": bool(bench.spin_rate)}
    if cpu:
        threads = args.threads or cpu_threads(args.results)
        if threads > 0:
            torch.set_num_threads(threads)
        doc["torch"]["threads"] = torch.get_num_threads()
    done = {}
    for (r, d, _), e in zip(plan, entries):
        if not d:
            continue
        if e["key"] in done:
            e.update({k: v for k, v in done[e["key"]].items() if k not in ("id", "name")})
            continue
        if args.budget and time.monotonic() - start > args.budget:
            e.update(status="not run", reason="time budget spent")
            continue
        try:
            fn = bench.build(d)
            samples, batch, spun = bench.measure(fn, d["cold"], d["flush"])
            e.update(status="ok", batch=batch, spin=spun, stats=stats_of(samples),
                     samples_ns=samples)
        except NA as ex:
            e.update(status="n/a", reason=str(ex))
        except Exception as ex:  # torch's refusal or an OOM: recorded, go on
            e.update(status="error", reason=f"{type(ex).__name__}: {first_line(ex)}")
        finally:
            fn = None
            if not cpu:
                torch.cuda.synchronize(bench.dev)
                torch.cuda.empty_cache()
        done[e["key"]] = dict(e)
        line = (f"{e['stats']['median_ns'] / 1e3:.1f} us" if e["status"] == "ok"
                else f"{e['status']}: {e['reason']}")
        print(f"torch_compare: {e['id']}: {line}", file=sys.stderr)
        write(args.output, doc)  # after each: a killed run keeps what it did
    write(args.output, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
