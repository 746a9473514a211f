#!/usr/bin/env python3
"""The CPU backend against its roofs, in one run (issue 26, item 4).

Runs bench/configs/cpu_roofs.yaml with mbench on the CPU backend (--cache
hot, bf16) and prints two markdown tables, the machine, date, commit and
command lines on top:

  memory-bound ops at 8192x8192 (copy, add, quantize to fp8 e4m3 / i8 / i4
  in every granularity, transposed and static, dequantize, layernorm,
  rmsnorm, softmax, every activation, silu_mul): GB/s and % of the copy
  bandwidth of the same moment -- the mean of the copies just before and
  just after the row in the plan, which copies between its groups of
  rows; target 85 %.

  compute-bound ops: attention 1x16x4096x4096x128 (causal and not) and the
  weight-only GEMMs at 4096^3 (int4: bf16 x i4 with group-128 scales;
  int8: torchao's int8wo linear): GFLOP/s and % of the bf16 peak, both
  the vector one (avx512_bf16 loops) and the AMX-inclusive one, as the
  CPU backend measured them (devices[].peak_flops, peak_source; the bf16
  GEMM baseline is shown for reference). The verdict uses the peak the
  backend holds the op to (the result's own derived.peak_tflops: the
  AMX-inclusive one for GEMMs and for bf16 attention on oneDNN, whose
  tile matmuls run on AMX); targets 50 % (attention) and 70 %
  (weight-only).

This VM's speed moves 2-4x within minutes, so a row is a share of the
copies nearest it in time: against the faster of one copy first and one
last, relu read 76.7-90.7 % of copy in three runs, while relu and copy
measured alternately read 93 %. With --rounds R (R > 1) the memory-bound
entries run R - 1 more times after the whole plan, copies included, and
every row is the median over the rounds of its shares, each round's share
beside it.

Each memory-bound op runs a second time in cache (unless --no-in-cache;
every memory-bound entry, whatever --filter kept): 128 rows of the same
length, whose operands (at most 6 MiB) stay in the caches between runs,
memory mostly out of the way. A row under 85 % of
copy there does not reach the target by better memory access alone: its
arithmetic on these cores is the bound (for column and transposed scales
the small shape's own overheads weigh in too).

Each row also has its traffic ceiling: the share of copy's rate the
memory system allows a kernel with that row's mix of reads and writes, from
bench/mem_shapes run in the same session (the program beside mbench in its
build; --mem-shapes PATH): an activation or norm moves copy's mix (100 %),
add and silu_mul two reads to a write, quantize narrows 2 bytes to 1,
dequantize widens; a dynamic quantization with one scale for the whole
tensor, per column or transposed reads X twice (its absmax, then the
division) where the byte count holds it once, which leaves |X| + |Q| over
|X| / read + (|X| + |Q|) / narrow. A row whose ceiling is under the target
cannot meet it on this machine with any kernel.

A failing memory-bound row says what it is bound by, the first that
applies: "traffic ceiling" (its ceiling is under the target), "arithmetic"
(under the target in cache too), "memory access" (only the run from
memory falls short), or "not known" (no in-cache run); a line after the
table counts the passes and each bound.

Each row also has its correctness check (pass / FAIL, mbench's own). Where
PyTorch imports (Debian's python3-torch, for /usr/bin/python3), the same
ops are timed in torch on the CPU in the same run (bench/torch_compare.py
--device cpu: same shapes, dtypes, cache policy and byte/FLOP counts) and
each row gets torch's GB/s (GFLOP/s) and ours / torch; rows torch has no
mirror for say why in the notes.

  python3 bench/cpu_roofs.py --mbench BUILD/bin/mbench [-o table.md]
      [--samples N] [--timeout S] [--out-dir DIR] [--no-torch] [--rounds R]
  python3 bench/cpu_roofs.py --tiny ...     small shapes (tests, a smoke run)
  python3 bench/cpu_roofs.py --results R.json [ROUND2.json ...]
      [--torch-json T.json] [--in-cache-json C.json] [--mem-shapes-md M.md]
      render the tables from an earlier run (a document, or the .jsonl
      stream a killed run left), running nothing

The result documents (roofs.json, round2.json ..., incache.json,
torch.json, mem_shapes.md) are kept in --out-dir. The full plan with --samples 3 took
21.7 min on the 2-core Intel VM at a load average of 13 (other builds
running; copy then gave 3.7 of its 22.7 GB/s), most of it per-entry setup
of the 8192x8192 operands; with --samples 5 on an idle VM, about 7 min
with the in-cache run and torch, 10 min with --rounds 3. Run it on an
idle machine. Standard library only; torch runs in a child.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import render_tables as rt  # noqa: E402 -- the sibling, by path
import torch_compare  # noqa: E402 -- its reader; torch itself runs in a child

ROOT = os.path.dirname(HERE)
CONFIG = os.path.join(HERE, "configs", "cpu_roofs.yaml")
MEMORY_OPS = ("copy", "add", "quantize", "dequantize", "layernorm", "rmsnorm",
              "softmax", "activation", "silu_mul")
TARGET_COPY = 85.0       # % of the copy bandwidth, memory-bound ops
COPY_AGAIN = "copy_end"  # the config's last copy, after the other rows
TARGET_ATTENTION = 50.0  # % of the bf16 peak the op is held to
TARGET_WO = 70.0         # % of the bf16 peak, weight-only GEMMs
# --tiny: each full-size shape of the config, as written there, and its
# stand-in (divisible by the 128 blocks and groups; i4 needs an even N).
TINY = {"[[8192, 8192]]": "[[128, 256]]",
        "[[1, 16, 4096, 4096, 128]]": "[[1, 2, 64, 64, 32]]",
        "[[4096, 4096, 4096]]": "[[32, 128, 128]]"}
# The memory-bound entries' shape (the config's default) and the in-cache
# one run beside it: 128 rows of the same length (a multiple of the 128 x
# 128 blocks), operands of at most 6 MiB at 8192 bf16 columns.
IN_CACHE = {"[[8192, 8192]]": "[[128, 8192]]", "[[128, 256]]": "[[128, 128]]"}
MEMORY_HEADER = ["op", "GB/s", "% of copy", "% of copy, each round", "GB/s in cache",
                 "in cache, % of copy", "traffic ceiling, % of copy",
                 "target", "verdict", "bound by", "check", "torch GB/s", "ours / torch"]
# A failing memory-bound row's "bound by": what keeps it under the target,
# the first that applies.
CEILING, ARITHMETIC, MEMORY_ACCESS, UNKNOWN = (
    "traffic ceiling", "arithmetic", "memory access", "not known")
# bench/mem_shapes' rows (its "traffic" column) this script reads.
READ, NARROW, WIDEN, WIDEN4, COPY_SHAPE, TWO_TO_ONE = (
    "read only", "narrow 2 -> 1", "widen 1 -> 2", "widen 1 -> 4", "copy 1 : 1",
    "two reads : one write")
# Bytes an element of a dtype takes (the memory-bound rows' dtypes).
ELEMENT_BYTES = {"f32": 4.0, "bf16": 2.0, "f16": 2.0, "f8e4m3": 1.0, "f8e5m2": 1.0,
                 "i8": 1.0, "i4": 0.5, "f4e2m1": 0.5}
COMPUTE_HEADER = ["op", "GFLOP/s", "% bf16 vector peak", "% bf16 peak (AMX)",
                  "target", "verdict", "check", "torch GFLOP/s", "ours / torch"]


def die(msg, code=2):
    print("cpu_roofs.py: " + msg, file=sys.stderr)
    sys.exit(code)


# ---- rows ---------------------------------------------------------------------

def num(v):
    return rt.num(v)


def label(r):
    """What a row measures, in words: op, output, granularity, options."""
    op, p = r.get("op", "?"), r.get("params") or {}
    if op == "copy":
        entry = str(r.get("name", "")).split("/", 1)[0]
        return "copy" if entry == "copy" else \
            "copy, again after the others" if entry == COPY_AGAIN else \
            "copy (%s)" % entry
    dt = r.get("dtypes") or {}
    mode = (p.get("scale_a") or {}).get("mode", "none")
    block = (p.get("scale_a") or {}).get("block") or []
    gran = mode
    if mode == "block" and block:
        gran = "block %s" % "x".join(str(b) for b in block)
    elif mode == "group" and block:
        gran = "group %s" % max(block)
    if op == "quantize":
        words = ["quantize → %s, %s" % (dt.get("out", "?"), gran)]
        if p.get("transpose"):
            words.append("transposed")
        if p.get("static"):
            words.append("static")
        return ", ".join(words)
    if op == "dequantize":
        return "dequantize %s → %s, %s" % (dt.get("a", "?"), dt.get("out", "?"), gran)
    if op == "activation":
        return "activation %s" % p.get("activation", "?")
    if op == "attention":
        return "attention%s" % (", causal" if p.get("causal") else "")
    if op == "gemm":
        b = dt.get("b", dt.get("a", "?"))
        if b in ("i4", "i8"):
            return "int%s weight-only GEMM (%s x %s)" % (b[1], dt.get("a"), b)
        return "%s GEMM" % dt.get("a", "?")
    recipe = r.get("recipe") or p.get("recipe")
    if op == "linear" and recipe and recipe != "baseline":
        return "linear %s (weight-only)" % recipe if "wo" in recipe else \
            "linear %s" % recipe
    if op == "linear":
        return "linear baseline (%s GEMM)" % dt.get("a", "?")
    return op


def is_weight_only(r):
    dt = r.get("dtypes") or {}
    recipe = r.get("recipe") or (r.get("params") or {}).get("recipe") or ""
    if r.get("op") == "gemm":
        return dt.get("b") in ("i4", "i8")
    return r.get("op") == "linear" and re.match(r"int[48]wo", recipe) is not None


def median_ns(r):
    return num(((r.get("stats") or {}).get("median_ns")))


def peaks(results, devices):
    """(vector bf16, AMX-inclusive bf16) peaks in FLOP/s; None unknown.
    The device's peak_flops.bf16 is the machine's best (AMX where usable);
    the vector one is read from peak_source ("amx_bf16 tdpbf16ps
    (avx512_bf16 vdpbf16ps 173 G)"), or is the best when no AMX loop
    won."""
    del results  # the results' roofs are per op (roof_of)
    dev = next((d for d in devices if d.get("kind") == "cpu"), devices[0] if devices else {})
    best = num((dev.get("peak_flops") or {}).get("bf16"))
    vector = None
    src = dev.get("peak_source") or ""
    m = re.search(r"bf16 amx\S* \S+ \(([^)]*)\)", src)
    g = re.search(r"vdpbf16ps ([0-9.]+) G", m.group(1)) if m else None
    if g:
        vector = float(g.group(1)) * 1e9
    elif best and "bf16 amx" not in src:
        vector = best
    return vector, best


def copies_of(results):
    """A round's copies, [(index in results, GB/s)] in plan order: the bf16
    ones where there are any."""
    copies = [(i, r) for i, r in enumerate(results)
              if r.get("op") == "copy" and r.get("status") == "ok"
              and num((r.get("derived") or {}).get("gbps"))]
    if any((r.get("dtypes") or {}).get("a") == "bf16" for _, r in copies):
        copies = [(i, r) for i, r in copies if (r.get("dtypes") or {}).get("a") == "bf16"]
    return [(i, r["derived"]["gbps"]) for i, r in copies]


def copy_refs(results):
    """{result name: the copy GB/s it is a share of} for a round's results
    (in plan order, as they ran): the mean of the copies just before and
    just after it (the one there is, at either end of the plan); a copy's
    own, the median of the round's copies; None without copies. This VM's
    speed moves 2-4x within minutes: against the faster of one copy first
    and one last, every row read a share of a moment it did not run in."""
    copies = copies_of(results)
    whole = median([g for _, g in copies])
    refs = {}
    for i, r in enumerate(results):
        before = [g for j, g in copies if j < i]
        after = [g for j, g in copies if j > i]
        near = before[-1:] + after[:1]
        refs[r.get("name")] = whole if r.get("op") == "copy" else \
            sum(near) / len(near) if near else None
    return refs


def median(values):
    """The median of the known values, None when none is."""
    known = [v for v in values if num(v) is not None]
    return statistics.median(known) if known else None


def pct(v, of):
    v, of = num(v), num(of)
    return 100.0 * v / of if v is not None and of else None


def fmt(v, spec="%.1f"):
    return "-" if num(v) is None else spec % v


def verdict(r, value, target):
    if r.get("status") != "ok" or value is None:
        return "-"
    return "pass" if value >= target else "FAIL"


def bound_by(verdict_cell, ceiling, in_cache):
    """Why a memory-bound row fails its target ("-" unless it fails): its
    traffic ceiling is under the target (no kernel meets it here); else it
    is under the target with its operands in the caches too (its
    arithmetic on these cores is the bound); else only the run from
    memory falls short (memory access); without the in-cache run, not
    known."""
    if verdict_cell != "FAIL":
        return "-"
    if ceiling is not None and ceiling < TARGET_COPY:
        return CEILING
    if in_cache is None:
        return UNKNOWN
    return ARITHMETIC if in_cache < TARGET_COPY else MEMORY_ACCESS


def verdict_summary(mem):
    """The line after the memory table: how many rows pass, and what bounds
    the ones that fail ([] when no row has a verdict)."""
    iv, ib = MEMORY_HEADER.index("verdict"), MEMORY_HEADER.index("bound by")
    judged = [row for row in mem if row[iv] in ("pass", "FAIL")]
    why = [row[ib] for row in judged if row[iv] == "FAIL"]
    if not judged:
        return []
    if not why:
        return ["", "Verdicts: all %d memory-bound rows pass." % len(judged)]
    return ["", "Verdicts: %d of %d memory-bound rows pass; the %d that fail are "
            "bound by %s." % (len(judged) - len(why), len(judged), len(why),
                              ", ".join("%s (%d)" % (k, why.count(k))
                                        for k in (CEILING, ARITHMETIC, MEMORY_ACCESS,
                                                  UNKNOWN) if why.count(k)))]


def torch_rate(r, entry, what):
    """torch's GB/s ("bytes") or GFLOP/s ("flop") by our result's own count
    over torch's median, and the note when torch has none."""
    if not entry:
        return None, None
    if entry.get("status") != "ok":
        return None, "%s: %s" % (entry.get("status"), entry.get("reason") or "")
    ns = num((entry.get("stats") or {}).get("median_ns"))
    amount = num((r.get("derived") or {}).get(what))
    if not ns or not amount:
        return None, None
    return amount / ns, None  # bytes/ns = GB/s, flop/ns = GFLOP/s


def in_cache_rates(cached):
    """{row label: GB/s} of the in-cache run's results (ok ones)."""
    return {label(r): num((r.get("derived") or {}).get("gbps"))
            for r in cached or [] if r.get("status") == "ok"}


def parse_mem_shapes(text):
    """{traffic: GB/s} from bench/mem_shapes' table ({} when there is none)."""
    rows = re.findall(r"^\|\s*([^|]+?)\s*\|[^|]*\|\s*([0-9]+(?:\.[0-9]+)?)\s*\|",
                      text or "", re.M)
    return {name: float(gbps) for name, gbps in rows}


def two_pass(r):
    """Whether quantize row r reads X twice from memory: dynamic, with one
    scale for the whole tensor, per column, or transposed (the CPU
    kernel's two-pass cases; rows, 1 x G groups and tall 128 x 128 blocks
    read each block while it is in cache)."""
    p = r.get("params") or {}
    mode = (p.get("scale_a") or {}).get("mode")
    return not p.get("static") and (bool(p.get("transpose")) or mode in ("tensor", "col"))


def traffic_ceiling(r, shapes):
    """(% of copy, which traffic) the memory system allows row r, from
    mem_shapes' rates (shapes); (None, None) for copy itself, or without
    the rates it needs. A dequantize takes widen 1 -> 2's rate, from 4-bit
    codes widen 1 -> 4's (1 -> 2's where mem_shapes has no 1 -> 4)."""
    op, dt = r.get("op"), r.get("dtypes") or {}
    copy = shapes.get(COPY_SHAPE)
    if op == "copy" or not copy:
        return None, None
    if op == "quantize":
        x, q = ELEMENT_BYTES.get(dt.get("a")), ELEMENT_BYTES.get(dt.get("out"))
        read, narrow = shapes.get(READ), shapes.get(NARROW)
        if not (x and q and read and narrow):
            return None, None
        if two_pass(r):
            return pct((x + q) / (x / read + (x + q) / narrow), copy), "X read twice"
        return pct(narrow, copy), "narrow"
    kind = {"dequantize": WIDEN, "add": TWO_TO_ONE, "silu_mul": TWO_TO_ONE}.get(op, COPY_SHAPE)
    if kind == WIDEN and ELEMENT_BYTES.get(dt.get("a")) == 0.5 and shapes.get(WIDEN4):
        kind = WIDEN4
    word = {WIDEN: "widen", WIDEN4: "widen 1 -> 4", TWO_TO_ONE: "2 reads : 1 write",
            COPY_SHAPE: "copy's"}[kind]
    return (pct(shapes[kind], copy), word) if shapes.get(kind) else (None, None)


def over_rounds(r, rounds, refs):
    """Row r's (GB/s, % of copy, [% of copy in each round], check) over
    the rounds (result lists, the whole plan's first) matched by name:
    medians over the rounds where it ran, each a share of its copy
    reference in that round (refs: copy_refs of each); the check FAIL if
    any round's failed."""
    rates, shares, checks = [], [], []
    for res, ref in zip(rounds, refs):
        copy = ref.get(r.get("name"))
        x = next((y for y in res if y.get("name") == r.get("name")), None)
        if x is None:
            continue
        checks.append(rt.check_of(x))
        g = num((x.get("derived") or {}).get("gbps")) if x.get("status") == "ok" else None
        rates.append(g)
        shares.append(pct(g, copy))
    check = "FAIL" if "FAIL" in checks else rt.check_of(r)
    return median(rates), median(shares), shares, check


def build_rows(results, devices, torch_doc, cached=None, more=(), shapes=None):
    """(memory rows, compute rows, notes, summary): the tables' cells;
    cached: the in-cache run's results (None: not run); more: the result
    lists of the memory-bound entries' further rounds; shapes: mem_shapes'
    rates (parse_mem_shapes; None: not run)."""
    by_id = {e.get("id"): e for e in (torch_doc or {}).get("entries", [])}
    rounds = [results] + list(more)
    refs = [copy_refs(res) for res in rounds]
    copies = [g for res in rounds for _, g in copies_of(res)]
    copy = median(copies)
    fast = in_cache_rates(cached)
    vector, best = peaks(results, devices)
    mem, comp, notes = [], [], []
    for r in results:
        op, d = r.get("op"), r.get("derived") or {}
        ok = r.get("status") == "ok"
        t_entry = by_id.get(r.get("id"))
        if op in MEMORY_OPS:
            g, share, each, check = over_rounds(r, rounds, refs)
            if not ok:
                g = share = None
            tg, why = torch_rate(r, t_entry, "bytes")
            target = None if op == "copy" else TARGET_COPY
            gc = fast.get(label(r))
            ceil, why_ceil = traffic_ceiling(r, shapes or {})
            v = "-" if target is None else verdict(r, share, target)
            mem.append([label(r), fmt(g), fmt(share),
                        ", ".join(fmt(v) for v in each) if len(rounds) > 1 else "-",
                        fmt(gc), fmt(pct(gc, copy)),
                        "-" if ceil is None else "%.1f (%s)" % (ceil, why_ceil),
                        "-" if target is None else "≥ %g %%" % target,
                        v, bound_by(v, ceil, pct(gc, copy)),
                        check, fmt(tg),
                        fmt(g / tg if g and tg else None, "%.2f")])
        elif op == "attention" or op == "gemm" or op == "linear":
            f = num(d.get("tflops")) if ok else None
            gf = f * 1e3 if f is not None else None
            pv, pb = pct(gf, vector / 1e9 if vector else None), \
                pct(gf, best / 1e9 if best else None)
            # Judged against the roof the backend holds the op to (the
            # result's own peak: AMX-inclusive where the kernel runs on
            # AMX tiles, bf16 attention on oneDNN among them), else the
            # machine's best.
            roof = num(d.get("peak_tflops"))
            own = pct(gf, roof * 1e3) if roof else pb
            if op == "attention":
                target, judged = TARGET_ATTENTION, own
            elif is_weight_only(r):
                target, judged = TARGET_WO, own
            else:
                target, judged = None, None  # the bf16 GEMM: for reference
            tf, why = torch_rate(r, t_entry, "flop")
            comp.append([label(r), fmt(gf), fmt(pv), fmt(pb),
                         "-" if target is None else "≥ %g %%" % target,
                         "-" if target is None else verdict(r, judged, target),
                         rt.check_of(r), fmt(tf),
                         fmt(gf / tf if gf and tf else None, "%.2f")])
        else:
            continue
        if not ok:
            notes.append("%s: %s%s" % (r.get("name", r.get("id")), r.get("status"),
                                       ": " + r["reason"] if r.get("reason") else ""))
        elif t_entry and why:
            notes.append("%s: torch %s" % (label(r), why))
    return mem, comp, notes, {"copy_gbps": copy, "copies": copies, "rounds": len(rounds),
                              "vector_peak": vector, "best_peak": best}


# ---- the document ---------------------------------------------------------------

def git_commit():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" with uncommitted changes" if dirty else "")


def render(doc, torch_doc, meta, cached=None, more=(), shapes_md=None):
    """The markdown: the header lines, then the two tables and notes;
    cached: the in-cache run's results, or None; more: the further
    rounds' results; shapes_md: bench/mem_shapes' output, or None."""
    results, devices = doc.get("results", []), doc.get("devices", [])
    shapes = parse_mem_shapes(shapes_md)
    mem, comp, notes, s = build_rows(results, devices, torch_doc, cached, more, shapes)
    dev = next((d for d in devices if d.get("kind") == "cpu"), {})
    out = ["## CPU roofs (issue 26)", ""]
    out.append("- machine: %s, %s cores, host %s" % (
        dev.get("name", "?"), dev.get("compute_units", "?"), meta.get("host", "?")))
    out.append("- peaks: bf16 %s GFLOP/s (AMX-inclusive), bf16 vector %s GFLOP/s "
               "(%s)" % (fmt(s["best_peak"] / 1e9 if s["best_peak"] else None, "%.0f"),
                         fmt(s["vector_peak"] / 1e9 if s["vector_peak"] else None,
                             "%.0f"), dev.get("peak_source", "peak source unknown")))
    cb = (dev.get("copy_bandwidth") or {}).get("gbps")
    c = s["copies"]
    out.append("- copy in this run: %s GB/s, the median of its %d copies (%s-%s GB/s; "
               "the roof cache's copy bandwidth: %s GB/s); each memory-bound row is a "
               "share of the mean of the copies just before and after it%s"
               % (fmt(s["copy_gbps"]), len(c), fmt(min(c) if c else None),
                  fmt(max(c) if c else None), fmt(num(cb)),
                  ", the median over %d rounds" % s["rounds"] if s["rounds"] > 1 else ""))
    out.append("- date: %s" % meta.get("date", "?"))
    out.append("- commit: %s" % meta.get("commit", "?"))
    for c in meta.get("commands", []):
        out.append("- command: `%s`" % c)
    if meta.get("load"):
        out.append("- load average when it started: %s (other work on the machine "
                   "moves every figure; copy is measured in the same run)" % meta["load"])
    t = (torch_doc or {}).get("torch") or {}
    if t.get("available"):
        out.append("- torch %s on the CPU, %s threads, same run" % (
            t.get("version"), t.get("threads", "?")))
    else:
        out.append("- torch: not run (%s)" % (t.get("why") or "no torch results"))
    out += ["", "Memory-bound ops, % of the copy bandwidth of this run:", ""]
    out.append(rt.table(MEMORY_HEADER, ["---"] + ["---:"] * 6 + ["---"] * 4 + ["---:"] * 2,
                        mem))
    out += verdict_summary(mem)
    out += ["", "Bound by (a failing row): \"%s\" when its traffic ceiling is under "
            "the target, \"%s\" when it is under the target in cache too, \"%s\" "
            "when only the run from memory falls short." % (CEILING, ARITHMETIC,
                                                           MEMORY_ACCESS)]
    out += ["", "GB/s in cache: the same op on 128 rows of the same length, its "
            "operands left in the caches between runs (%s), as a share of the "
            "median copy, memory mostly out of "
            "the way. A row under %g %% of copy there does not reach the target by "
            "better memory access alone: its arithmetic on these cores (for column "
            "and transposed scales, also the small shape's own overheads) is the "
            "bound." % ("not run" if cached is None else "same run", TARGET_COPY)]
    if shapes:
        out += ["", "Traffic ceiling: the share of copy's rate the memory system "
                "allows the row's mix of reads and writes, bench/mem_shapes in this "
                "run (%s). \"X read twice\": a dynamic quantization with one scale "
                "for the whole tensor, per column or transposed reads X for its "
                "absmax and again to divide, past the caches, while its bytes count "
                "X once. A row whose ceiling is under the target cannot meet it on "
                "this machine with any kernel."
                % ", ".join("%s %.1f GB/s" % (k, v) for k, v in shapes.items())]
    else:
        out += ["", "Traffic ceiling: not measured (bench/mem_shapes not run)."]
    out += ["", "Attention and weight-only GEMMs, % of the bf16 peak:", ""]
    out.append(rt.table(COMPUTE_HEADER, ["---"] + ["---:"] * 3 + ["---"] * 3 + ["---:"] * 2,
                        comp))
    if notes:
        out += ["", "Notes:", ""] + ["- " + n for n in notes]
    return "\n".join(out) + "\n"


# ---- running ------------------------------------------------------------------

def find_mbench(given):
    for c in [given, os.environ.get("MBENCH"), os.path.join(ROOT, "build", "bin", "mbench"),
              shutil.which("mbench")]:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    die("no mbench: give --mbench BUILD/bin/mbench")


def torch_python(given):
    """An interpreter that imports torch (this one, else Debian's), or None."""
    for py in [given] if given else [sys.executable, "/usr/bin/python3"]:
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import torch"], capture_output=True).returncode == 0:
            return py
    return None


def tiny_config(src, dst):
    with open(src, encoding="utf-8") as f:
        text = f.read()
    for full, small in TINY.items():
        if full not in text:
            die("%s: no %s to shrink for --tiny" % (src, full))
        text = text.replace(full, small)
    with open(dst, "w", encoding="utf-8") as f:
        f.write(text)


def memory_entries(text):
    """The names of a plan's memory-bound entries: those that take the
    default shape (no `shapes:` line of their own)."""
    names = []
    for block in re.split(r"\n  - name: ", text)[1:]:
        if not re.search(r"^\s+shapes:", block, re.M):
            names.append(block.split("\n", 1)[0].strip())
    return names


def memory_regex(src, text):
    """The --filter regex of the memory-bound entries of plan text (from
    file src)."""
    names = memory_entries(text)
    if not names:
        die("%s: no entry takes the default shape" % src)
    return "^(%s)/" % "|".join(re.escape(n) for n in names)


def in_cache_config(src, dst):
    """Writes src with its memory-bound shape made the in-cache one
    (IN_CACHE) to dst; returns the --filter regex of those entries."""
    with open(src, encoding="utf-8") as f:
        text = f.read()
    full = [k for k in IN_CACHE if k in text]
    if len(full) != 1:
        die("%s: expected one of %s as the memory-bound shape" % (src, ", ".join(IN_CACHE)))
    regex = memory_regex(src, text)
    with open(dst, "w", encoding="utf-8") as f:
        f.write(text.replace(full[0], IN_CACHE[full[0]]))
    return regex


def read_results(path):
    """The results of a document (or .jsonl stream), [] when unreadable."""
    try:
        return torch_compare.read_docs([path])[0]
    except (OSError, UnicodeDecodeError, ValueError):
        return []


def quote(argv):
    return " ".join(shlex.quote(a) for a in argv)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mbench", help="the mbench to run (default: $MBENCH, build/bin/mbench, PATH)")
    ap.add_argument("--config", default=CONFIG, help="the plan (bench/configs/cpu_roofs.yaml)")
    ap.add_argument("--tiny", action="store_true", help="small shapes: a smoke run (seconds)")
    ap.add_argument("--samples", type=int, help="mbench --samples (the config's otherwise)")
    ap.add_argument("--timeout", type=float, help="mbench --timeout")
    ap.add_argument("--filter", help="mbench --filter REGEX")
    ap.add_argument("--out-dir", help="where roofs.json and torch.json go (a temporary folder)")
    ap.add_argument("-o", "--output", help="also write the markdown here")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    ap.add_argument("--torch-python", help="interpreter for torch_compare.py "
                    "(default: this one if it imports torch, else /usr/bin/python3)")
    ap.add_argument("--torch-max-time", type=float, default=0.3,
                    help="torch_compare --max-time (0.3 s per op)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the memory-bound entries this many times in all (the "
                    "whole plan once, then theirs alone; with --filter, the entries "
                    "it keeps): each row the median over the rounds of its shares of "
                    "the copies nearest it (1)")
    ap.add_argument("--results", nargs="+", metavar="R.json",
                    help="render from these mbench result documents (the whole "
                    "plan's, then further rounds'); run nothing")
    ap.add_argument("--torch-json", help="with --results: torch_compare's document")
    ap.add_argument("--in-cache-json", help="with --results: the in-cache run's document")
    ap.add_argument("--mem-shapes", help="bench/mem_shapes to run for the traffic "
                    "ceilings (default: the one beside mbench)")
    ap.add_argument("--mem-shapes-md", help="with --results: mem_shapes' output")
    ap.add_argument("--no-in-cache", action="store_true",
                    help="leave out the in-cache run of the memory-bound ops "
                    "(it runs every one of them, whatever --filter keeps)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds %d: give 1 or more" % args.rounds)
    return args


def mbench_cmd(args, config, out, regex):
    """The mbench command line of a run of config into out (--filter regex
    unless None), with the timing options given."""
    cmd = [find_mbench(args.mbench), "run", "--config", config, "--backend", "cpu",
           "-o", out, "-q"]
    if args.samples:
        cmd += ["--samples", str(args.samples)]
    if args.timeout:
        cmd += ["--timeout", str(args.timeout)]
    if regex:
        cmd += ["--filter", regex]
    return cmd


def run_rounds(args, config, out_dir, meta):
    """Rounds 2..R of the memory-bound entries (those --filter keeps when
    given): their result lists, in order; a round that wrote none is
    left out, said on stderr."""
    with open(config, encoding="utf-8") as f:
        regex = args.filter or memory_regex(config, f.read())
    more = []
    for k in range(2, args.rounds + 1):
        path = os.path.join(out_dir, "round%d.json" % k)
        cmd = mbench_cmd(args, config, path, regex)
        meta["commands"].append(quote(cmd))
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
        res = read_results(path if os.path.exists(path) else path[:-5] + ".jsonl")
        if rc or not res:
            print("cpu_roofs.py: round %d exited %d with %d results" % (k, rc, len(res)),
                  file=sys.stderr)
        if res:
            more.append(res)
    return more


def run_in_cache(args, config, out_dir, meta):
    """The memory-bound entries again at the in-cache shape, on a rewritten
    plan. Their results, [] when it wrote none."""
    cconf = os.path.join(out_dir, "cpu_roofs_incache.yaml")
    cpath = os.path.join(out_dir, "incache.json")
    ccmd = mbench_cmd(args, cconf, cpath, in_cache_config(config, cconf))
    meta["commands"].append(quote(ccmd))
    rc = subprocess.run(ccmd, stdout=subprocess.DEVNULL).returncode
    cached = read_results(cpath if os.path.exists(cpath) else cpath[:-5] + ".jsonl")
    if rc or not cached:
        print("cpu_roofs.py: the in-cache run exited %d with %d results" % (rc, len(cached)),
              file=sys.stderr)
    return cached


def run_mem_shapes(args, out_dir, meta):
    """bench/mem_shapes' table (kept in out_dir/mem_shapes.md), or None
    when there is no program to run or it failed (said on stderr)."""
    prog = args.mem_shapes or os.path.join(os.path.dirname(find_mbench(args.mbench)),
                                           "mem_shapes")
    if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
        print("cpu_roofs.py: no %s: the traffic ceilings are left out" % prog,
              file=sys.stderr)
        return None
    cmd = [prog] + (["16", "2"] if args.tiny else ["128", "5"])
    meta["commands"].append(quote(cmd))
    env = dict(os.environ)
    env.setdefault("OMP_PROC_BIND", "close")
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if run.returncode:
        print("cpu_roofs.py: mem_shapes exited %d: %s" % (run.returncode, run.stderr),
              file=sys.stderr)
        return None
    with open(os.path.join(out_dir, "mem_shapes.md"), "w", encoding="utf-8") as f:
        f.write(run.stdout)
    return run.stdout


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    meta = {"host": socket.gethostname(), "commit": git_commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commands": ["python3 bench/cpu_roofs.py " + quote(argv)]}
    torch_doc, cached, more, shapes_md = None, None, [], None
    if args.results:
        path = args.results[0]
        more = [read_results(p) for p in args.results[1:]]
        if not all(more):
            die("%s: no results" % args.results[1 + more.index([])])
        if args.torch_json:
            with open(args.torch_json, encoding="utf-8") as f:
                torch_doc = json.load(f)
        if args.in_cache_json:
            cached = read_results(args.in_cache_json)
        if args.mem_shapes_md:
            with open(args.mem_shapes_md, encoding="utf-8") as f:
                shapes_md = f.read()
    else:
        out_dir = args.out_dir or tempfile.mkdtemp(prefix="cpu_roofs.")
        os.makedirs(out_dir, exist_ok=True)
        config = args.config
        if args.tiny:
            config = os.path.join(out_dir, "cpu_roofs_tiny.yaml")
            tiny_config(args.config, config)
        path = os.path.join(out_dir, "roofs.json")
        cmd = mbench_cmd(args, config, path, args.filter)
        meta["commands"].append(quote(cmd))
        if hasattr(os, "getloadavg"):
            meta["load"] = " ".join("%.1f" % v for v in os.getloadavg())
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
        if not os.path.exists(path):
            if not os.path.exists(path[:-5] + ".jsonl"):
                die("mbench exited %d and wrote no %s" % (rc, path))
            path = path[:-5] + ".jsonl"  # killed mid-run: the stream it left
        if rc:
            print("cpu_roofs.py: mbench exited %d (the table shows what it has)" % rc,
                  file=sys.stderr)
        shapes_md = run_mem_shapes(args, out_dir, meta)
        more = run_rounds(args, config, out_dir, meta)
        if not args.no_in_cache:
            cached = run_in_cache(args, config, out_dir, meta)
        py = None if args.no_torch else torch_python(args.torch_python)
        if args.no_torch:
            torch_doc = {"torch": {"available": False, "why": "--no-torch"}}
        elif py is None:
            torch_doc = {"torch": {"available": False,
                                   "why": "no python3 here imports torch "
                                          "(apt-get install python3-torch)"}}
        else:
            tpath = os.path.join(out_dir, "torch.json")
            tcmd = [py, os.path.join(HERE, "torch_compare.py"), path, "-o", tpath,
                    "--device", "cpu", "--max-time", str(args.torch_max_time)]
            meta["commands"].append(quote(tcmd))
            subprocess.run(tcmd)
            try:
                with open(tpath, encoding="utf-8") as f:
                    torch_doc = json.load(f)
            except (OSError, ValueError) as ex:
                torch_doc = {"torch": {"available": False,
                                       "why": "torch_compare wrote nothing: %s" % ex}}
        print("cpu_roofs.py: results in %s" % out_dir, file=sys.stderr)
    try:
        results, headers = torch_compare.read_docs([path])
    except (OSError, UnicodeDecodeError) as ex:
        die("%s: %s" % (path, ex))
    if not results:
        die("%s: no results" % path)
    doc = {"results": results,
           "devices": [d for h in headers for d in h.get("devices", [])]}
    run = next((h["meta"] for h in headers if isinstance(h.get("meta"), dict)), {})
    if run.get("timestamp"):
        meta["date"] = run["timestamp"].replace("T", " ").replace("Z", " UTC")
    if run.get("git_commit"):
        meta["commit"] = "mbench built at %s; checkout at %s" % (run["git_commit"],
                                                                 meta["commit"])
    if args.results and run.get("argv"):
        meta["commands"].append(quote(run["argv"]) + "  (the run rendered)")
    host = (run.get("host") or {}).get("hostname")
    if host:
        meta["host"] = host
    text = render(doc, torch_doc, meta, cached, more, shapes_md)
    sys.stdout.write(text)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
