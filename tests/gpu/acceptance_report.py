#!/usr/bin/env python3
"""The GPU acceptance report (tests/gpu/acceptance.sh): our results and
PyTorch's (bench/torch_compare.py) joined in one markdown table, with what
was declined and why, what the time budget left out, the timer and flush
check figures, the per-test ctest outcome, the device, driver, runtime,
commit, date and the commands that ran.

Writes the report to -o and prints a short failure summary and the table
on stdout (the table last). Standard library only.

  acceptance_report.py --results R.json... [--torch T.json] [--ctest LOG]
      [--plan PLAN.txt] [--facts FACTS.txt] [--commands CMDS.txt]
      [--devices DEVICES.txt] [--repo DIR] -o REPORT.md
  acceptance_report.py --slug "NVIDIA H100 80GB HBM3"      # -> h100
"""
import argparse
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone

# One reader of result files for both scripts: bench/torch_compare.py's
# (it imports torch only when it measures).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
from torch_compare import read_docs  # noqa: E402

# Ops whose figure is FLOP/s against the compute peak; the rest move bytes
# and are held against the memory bandwidth.
COMPUTE_OPS = {"gemm", "linear", "linear_training", "ln_linear",
               "transformer_block", "attention"}
VENDOR_WORDS = {"nvidia", "amd", "instinct", "geforce", "tesla", "radeon",
                "graphics", "ati"}


def slug(name):
    """A file-name slug for a device: the first word with a digit, after
    the word before it if any, vendor words left out: "NVIDIA H100 80GB
    HBM3" -> "h100", "NVIDIA GeForce RTX 4090" -> "rtx-4090", "AMD
    Instinct MI300X" -> "mi300x"."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower())
             if w and w not in VENDOR_WORDS]
    for i, w in enumerate(words):
        if re.search(r"\d", w):
            return "-".join(words[max(0, i - 1):i + 1])
    return "-".join(words[:3]) or "gpu"


# ---- inputs -----------------------------------------------------------------

def read_facts(path):
    """key: value lines; a key may repeat (a list)."""
    facts = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.rstrip("\n").partition(": ")
                if sep:
                    facts.setdefault(key.strip(), []).append(value.strip())
    return facts


def fact(facts, key, default=""):
    v = facts.get(key)
    return v[-1] if v else default


def read_text(path):
    if path and os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    return None


def plan_names(text):
    """The entry names of `mbench run --config ... --dry-run`."""
    names = []
    for line in (text or "").splitlines():
        m = re.match(r"^\d+\s+(\S+)\s", line)
        if m:
            names.append(m.group(1))
    return names


CTEST_LINE = re.compile(
    r"Test\s+#\d+:\s+(\S+)\s+\.*\s*(?:\*\*\*)?(.+?)\s+([\d.]+)\s+sec\s*$")


def ctest_outcomes(text):
    """[(test, outcome, seconds)] from ctest's console output."""
    out = []
    for line in (text or "").splitlines():
        m = CTEST_LINE.search(line)
        if m:
            out.append((m.group(1), m.group(2).strip(), m.group(3)))
    return out


def commit_of(repo, headers):
    """(commit, where from): git where the tree has it, else the
    .deps/commit file tests/gpu/carry_deps.sh writes for a tree that
    travelled without .git, else the commit compiled into mbench."""
    if repo and os.path.exists(os.path.join(repo, ".git")):
        try:
            head = subprocess.run(["git", "-C", repo, "rev-parse", "--short=12", "HEAD"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain",
                                    "--untracked-files=no"],
                                   capture_output=True, text=True, check=True).stdout.strip()
            return head + ("-dirty" if dirty else ""), "git"
        except (OSError, subprocess.CalledProcessError):
            pass
    path = os.path.join(repo or ".", ".deps", "commit")
    text = read_text(path)
    if text:
        kv = dict(line.split("=", 1) for line in text.splitlines()
                  if "=" in line and not line.startswith("#"))
        head = kv.get("MB_SOURCE_COMMIT", "").strip()
        if head:
            c = head[:12]
            if kv.get("MB_SOURCE_DIRTY", "").strip() == "yes":
                c += "-dirty"
                if kv.get("MB_SOURCE_DIFF_SHA256"):
                    c += f" (diff sha256 {kv['MB_SOURCE_DIFF_SHA256'].strip()[:12]})"
            return c, ".deps/commit"
        first = text.strip().splitlines()[0].strip()
        if first and not first.startswith("#"):
            return first, ".deps/commit"
    for h in headers:
        c = (h.get("meta") or {}).get("git_commit")
        if c:
            return c, "compiled into mbench"
    return "unknown", "no git, no .deps/commit"


# ---- formatting -------------------------------------------------------------

def fmt_ns(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.4g} {unit}"
    return f"{ns:.4g} ns"


def fmt_num(x, digits=4):
    return "-" if x is None else f"{x:.{digits}g}"


def variant(r):
    """What distinguishes the row beyond op, shape, dtype: scales, the
    activation, the recipe, ..."""
    p, op, parts = r.get("params") or {}, r.get("op"), []
    if op == "gemm":
        if p.get("quantize_inputs"):
            parts.append(f"q:{p.get('dtype_q', 'f8e4m3')}")
        for side in ("a", "b"):
            s = p.get(f"scale_{side}") or {}
            mode = s.get("mode", "none")
            if mode == "block":
                parts.append(f"{side}:{'x'.join(str(v) for v in s.get('block', []))}")
            elif mode != "none":
                parts.append(f"{side}:{mode}")
        for flag, text in (("tf32", "tf32"), ("fast_accum", "fast-accum"),
                           ("trans_a", "trans-a"), ("trans_b", "trans-b")):
            if p.get(flag):
                parts.append(text)
    elif op == "activation":
        parts.append(str(p.get("activation", "")))
    elif op in ("quantize", "dequantize"):
        parts.append((p.get("scale_a") or {}).get("mode", ""))
    elif op == "attention":
        parts += [k for k in ("causal", "bshd") if p.get(k)]
    if r.get("recipe"):
        parts.append(r["recipe"])
    return " ".join(x for x in parts if x)


def cache_of(r):
    flush = r.get("flush") or (r.get("timing") or {}).get("flush")
    c = r.get("cache", "")
    return f"{c} ({flush} flush)" if c == "cold" and flush and flush != "write" else c


def shape_of(r):
    return "x".join(str(v) for v in (r.get("shape") or {}).values())


def dtype_of(r):
    d = r.get("dtypes") or {}
    return d.get("a", "") if d.get("out") in (None, d.get("a")) else f"{d.get('a')}->{d.get('out')}"


def label(r):
    return " ".join(x for x in (r.get("alias") or r.get("model") or r.get("op"),
                                shape_of(r), dtype_of(r), variant(r),
                                r.get("impl", ""), cache_of(r)) if x)


def check_of(r):
    if r.get("status") != "ok":
        return r.get("status", "?")
    c = r.get("correctness") or {}
    if not c.get("checked"):
        return "-"
    return "pass" if c.get("pass") else "FAIL"


def why_bad(r):
    """A failed result's reason, or what a wrong one got wrong."""
    if r.get("status") == "failed":
        return f"failed: {r.get('reason') or '(no reason given)'}"
    c = r.get("correctness") or {}
    return (f"wrong result: max abs err {fmt_num(c.get('max_abs_err'), 3)}, max rel err "
            f"{fmt_num(c.get('max_rel_err'), 3)}, SQNR {fmt_num(c.get('sqnr_db'), 3)} dB "
            f"(tolerance {fmt_num(c.get('tolerance'), 3)})")


def byte_roof(dv, device):
    """% roof of a GB/s row: a transfer against the link it crosses (the
    result's own roof, `derived.bound` "link": pinned h2d at 55 GB/s is 87 %
    of PCIe, not 1.6 % of HBM); a row the library gives no roof (a
    collective on one rank crosses no link) none; the rest against the
    device's memory bandwidth."""
    if dv.get("bound") == "link":
        return f"{dv['pct_roof']:.1f}" if (dv.get("pct_roof") or 0) > 0 else "-"
    if not dv.get("bound"):
        return "-"
    bw = (device or {}).get("mem_bw_bytes_per_s") or 0
    return f"{dv.get('gbps', 0) * 1e9 / bw * 100:.1f}" if bw > 0 else "-"


class Row:
    def __init__(self, r, device, torch_entry):
        self.r, self.t = r, torch_entry or {}
        st = r.get("stats") or {}
        dv = r.get("derived") or {}
        self.ok = r.get("status") == "ok"
        self.ours_ns = st.get("median_ns") if self.ok else None
        compute = r.get("op") in COMPUTE_OPS and (dv.get("flop") or 0) > 0
        if not self.ok:
            self.rate, self.roof = "-", "-"
        elif compute:
            self.rate = f"{dv.get('tflops', 0):.4g} TFLOP/s"
            self.roof = (f"{dv['pct_peak']:.1f}" if (dv.get("peak_tflops") or 0) > 0
                         and dv.get("pct_peak") is not None else "-")
        else:
            self.rate = f"{dv.get('gbps', 0):.4g} GB/s"
            self.roof = byte_roof(dv, device)
        ts = self.t.get("status")
        self.torch_ns = (self.t.get("stats") or {}).get("median_ns") if ts == "ok" else None
        self.torch = fmt_ns(self.torch_ns) if ts == "ok" else (
            {"n/a": "n/a", "error": "error"}.get(ts, "-"))
        self.ratio = (f"{self.ours_ns / self.torch_ns:.2f}"
                      if self.ours_ns and self.torch_ns else "-")

    def cells(self):
        r = self.r
        impl = r.get("impl") or "-"
        if r.get("emulated"):
            impl += " (emu)"
        return [r.get("alias") or r.get("model") or r.get("op", ""), shape_of(r),
                dtype_of(r), variant(r) or "", impl, cache_of(r),
                fmt_ns(self.ours_ns), self.rate, self.roof, self.torch,
                self.ratio, check_of(r)]


HEADER = ["op", "shape", "dtype", "variant", "impl", "cache", "ours (median)",
          "rate", "% roof", "torch (median)", "ours/torch", "check"]


def md_table(rows):
    lines = ["| " + " | ".join(HEADER) + " |",
             "|" + "|".join("---" for _ in HEADER) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row.cells()) + " |")
    return lines


# ---- the report -------------------------------------------------------------

def our_device(headers, results, backend):
    """The devices[] entry our results ran on, and the meta.backends[] entry
    of its backend."""
    ran = next((r for r in results if r.get("backend") == backend), None)
    index = ran.get("device_index", 0) if ran else 0
    dev = be = None
    for h in headers:
        for d in h.get("devices") or []:
            if dev is None and d.get("backend") == backend and d.get("index", 0) == index:
                dev = d
        for b in (h.get("meta") or {}).get("backends") or []:
            if be is None and b.get("name") == backend:
                be = b
    return dev, be


def timer_lines(dev):
    if not dev:
        return ["- the results name no device of this backend"]
    t, fc = dev.get("timer") or {}, dev.get("flush_check") or {}
    out = [f"- device: {dev.get('name')} ({dev.get('compute_units')} compute units, "
           f"last-level cache {(dev.get('cache_bytes') or {}).get('llc', 0) / 2**20:.1f} MiB, "
           f"memory bandwidth {(dev.get('mem_bw_bytes_per_s') or 0) / 1e9:.0f} GB/s; "
           f"peaks: {dev.get('peak_source') or 'unknown'})",
           f"- timer: resolution {fmt_ns(t.get('resolution_ns'))}, per-sample "
           f"overhead {fmt_ns(t.get('overhead_ns'))} ({t.get('readings', 0)} empty samples)"]
    if fc.get("checked"):
        out.append(f"- flush check: {'pass' if fc.get('pass') else 'FAIL'}: hot "
                   f"{fmt_ns(fc.get('hot_ns'))}, flushed {fmt_ns(fc.get('flushed_ns'))}, "
                   f"ratio {fmt_num(fc.get('ratio'), 3)}, {fc.get('bytes', 0) / 1e6:.3g} MB "
                   f"({fc.get('how', '')})")
    else:
        out.append(f"- flush check: {fc.get('how') or 'not reported'}")
    env = dev.get("environment") or {}
    if env:
        out.append("- environment: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    return out


def build_report(a):
    results, headers = read_docs(a.results)
    facts = read_facts(a.facts)
    tdoc = {}
    if a.torch and os.path.exists(a.torch):
        with open(a.torch, encoding="utf-8") as f:
            tdoc = json.load(f)
    tentries = {e.get("id"): e for e in tdoc.get("entries", [])}
    backend = a.backend or fact(facts, "backend") or (
        results[0].get("backend") if results else "")
    dev, be = our_device(headers, results, backend)
    rows = [Row(r, dev, tentries.get(r.get("id"))) for r in results]
    planned = plan_names(read_text(a.plan))
    ran = {r.get("name") for r in results if r.get("name")}
    not_run = [n for n in planned if n not in ran]
    tests = ctest_outcomes(read_text(a.ctest))
    commit, commit_from = commit_of(a.repo, headers)
    date = fact(facts, "date") or datetime.now(timezone.utc).strftime("%Y-%m-%d")
    device_name = (dev or {}).get("name") or fact(facts, "gpu_name") or backend
    emulated = fact(facts, "mode") == "emulated"

    bad = [x for x in rows if x.r.get("status") == "failed" or check_of(x.r) == "FAIL"]
    declined = [x for x in rows if x.r.get("status") == "skipped"]
    failed_tests = [t for t in tests if t[1] not in ("Passed", "Skipped")]
    tinfo = tdoc.get("torch") or {}
    L = [f"# GPU acceptance run: {device_name}, {date}", ""]
    if emulated:
        L += ["**Emulated mode** (`tests/gpu/acceptance.sh --emulated`, the CI "
              "self-check): the `gpuemu` backend on CPU fibers, tiny shapes. "
              "Its timings are the emulator's, not a GPU's.", ""]
    L += [f"Commit `{commit}` ({commit_from}); started {fact(facts, 'started', '?')}; "
          f"tests/gpu/acceptance.sh, bench/configs/gpu_acceptance.yml.", "",
          "## Summary", ""]
    n_ok = sum(1 for x in rows if x.ok)
    checked = [x for x in rows if x.ok and check_of(x.r) in ("pass", "FAIL")]
    L.append(f"- benchmarks: {len(planned) or len(results)} planned"
             f"{' + extra lines' if len(results) > len(ran) and planned else ''}, "
             f"{len(results)} ran: {n_ok} ok ({sum(1 for x in checked if check_of(x.r) == 'pass')} "
             f"checked and right, {sum(1 for x in checked if check_of(x.r) == 'FAIL')} wrong), "
             f"{len(declined)} declined/skipped, "
             f"{sum(1 for x in rows if x.r.get('status') == 'failed')} failed; "
             f"{len(not_run)} not run (time budget)")
    L.append(f"- ctest: {sum(1 for t in tests if t[1] == 'Passed')} passed, "
             f"{len(failed_tests)} failed, {sum(1 for t in tests if t[1] == 'Skipped')} "
             f"skipped of {len(tests)}" if tests else
             f"- ctest: no outcome recorded ({fact(facts, 'ctest', 'not run')})")
    if tinfo.get("available"):
        n_t = sum(1 for e in tentries.values() if e.get("status") == "ok")
        L.append(f"- torch: {tinfo.get('version')} (CUDA {tinfo.get('cuda')}"
                 f"{', HIP ' + str(tinfo.get('hip')) if tinfo.get('hip') else ''}) on "
                 f"{tinfo.get('device')}: {n_t} of {len(tentries)} mirrored")
    else:
        L.append(f"- torch: not available: {tinfo.get('why') or fact(facts, 'torch', 'not run')}")
    spent = [f"{text} {fact(facts, key)} s" for key, text in (
        ("build_s", "build"), ("ctest_s", "ctest"), ("bench_s", "benchmarks"),
        ("torch_s", "torch"), ("total_s", "total")) if fact(facts, key)]
    if spent:
        L.append(f"- time: {', '.join(spent)} (budget {fact(facts, 'budget_s', '?')} s)")
    for note in facts.get("note", []):
        L.append(f"- {note}")
    if bad or failed_tests:
        L += ["", "What failed:", ""]
        L += [f"- {label(x.r)}: {why_bad(x.r)}" for x in bad]
        L += [f"- ctest {t[0]}: {t[1]}" for t in failed_tests]

    L += ["", "## Benchmarks", ""] + md_table(rows) + [
        "",
        "ours: mbench's median per run; rate: TFLOP/s for GEMMs, models and "
        "attention, else GB/s (the op's minimal traffic); % roof: for TFLOP/s "
        "rows the result's `derived.pct_peak` (against the peak of the math it "
        "ran), for GB/s rows the rate against the device's memory bandwidth "
        "(`devices[].mem_bw_bytes_per_s`), transfers against their link's "
        "(`derived.pct_roof`), none where the result has no roof (a collective "
        "on one rank); torch: bench/torch_compare.py's "
        "median (same shapes, dtypes, cache policy); ours/torch below 1: ours "
        "is faster; check: our result against its double-precision reference."]

    L += ["", "## Declined and skipped (ours)", ""]
    L += [f"- {label(x.r)}: {x.r.get('status')}: {x.r.get('reason')}" for x in declined] or ["- none"]
    L += ["", "## Not run (time budget)", ""]
    L += [f"- {n}" for n in not_run] + [f"- {s}" for s in facts.get("not_run", [])] or ["- none"]
    warn = [x for x in rows if x.r.get("warning") or (x.r.get("stats") or {}).get("interfered")
            or (x.r.get("telemetry") or {}).get("throttled_samples")]
    if warn:
        L += ["", "## Warnings", ""]
        for x in warn:
            st, tel = x.r.get("stats") or {}, x.r.get("telemetry") or {}
            bits = [x.r["warning"]] if x.r.get("warning") else []
            if st.get("interfered"):
                bits.append(f"{st['interfered']} samples flagged as interfered")
            if tel.get("throttled_samples"):
                bits.append(f"{tel['throttled_samples']} samples throttled")
            L.append(f"- {label(x.r)}: {'; '.join(bits)}")
    L += ["", "## Torch: not mirrored", ""]
    tna = [(x, x.t) for x in rows if x.t.get("status") in ("n/a", "error", "not run")
           and tinfo.get("available")]
    L += [f"- {label(x.r)}: {e.get('status')}: {e.get('reason') or '-'}" for x, e in tna] or (
        ["- none"] if tinfo.get("available") else
        [f"- all: torch: not available: {tinfo.get('why') or 'no torch results'}"])
    if tinfo.get("available"):
        L += ["", "torch timing: CUDA events, warm-up, median of samples; hot batches runs "
              f"to >= {tdoc.get('settings', {}).get('min_sample_time', 0) * 1e6:.0f} us a "
              f"sample; cold writes (or reads) {tinfo.get('flush_bytes', 0) / 2**20:.0f} MiB "
              f"(2x L2) before each, untimed; launch cost hidden behind torch.cuda._sleep: "
              f"{'yes' if tinfo.get('spin') else 'no'}."]
    L += ["", "## Timer and flush check", ""] + timer_lines(dev)

    L += ["", "## Tests (ctest)", ""]
    if tests:
        L += ["| test | outcome | seconds |", "|---|---|---|"]
        L += [f"| {t} | {o} | {s} |" for t, o, s in tests]
    else:
        L.append(f"- no outcome recorded ({fact(facts, 'ctest', 'not run')})")

    L += ["", "## Environment", ""]
    for key, text in (("gpu_name", "GPU"), ("compute_cap", "compute capability"),
                      ("driver", "driver"), ("arch", "built for"), ("nvcc", "nvcc"),
                      ("hipcc", "hipcc"), ("cmake", "cmake"), ("python", "python")):
        if fact(facts, key):
            L.append(f"- {text}: {fact(facts, key)}")
    if be:
        L.append(f"- backend {be.get('name')}: {be.get('version')}")
    host = next(((h.get("meta") or {}).get("host") for h in headers
                 if (h.get("meta") or {}).get("host")), None)
    if host:
        L.append(f"- host: {host.get('hostname')}, {host.get('os')} {host.get('kernel')} "
                 f"{host.get('machine')}, {host.get('online_cpus')} CPUs")
    meta = next((h.get("meta") for h in headers if h.get("meta")), {}) or {}
    if meta:
        L.append(f"- libmicrobench {meta.get('version')} (compiled-in commit "
                 f"{meta.get('git_commit')})")
    devices = read_text(a.devices)
    if devices:
        L += ["", "```text", devices.rstrip(), "```"]
    cmds = read_text(a.commands)
    L += ["", "## Commands", "", "```sh", (cmds or "(not recorded)").rstrip(), "```", ""]
    return L, rows, bad, declined, failed_tests, not_run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slug", metavar="DEVICE", help="print DEVICE's file-name slug and exit")
    ap.add_argument("--results", nargs="*", default=[])
    ap.add_argument("--torch")
    ap.add_argument("--ctest")
    ap.add_argument("--plan")
    ap.add_argument("--facts")
    ap.add_argument("--commands")
    ap.add_argument("--devices")
    ap.add_argument("--backend")
    ap.add_argument("--repo", default=".")
    ap.add_argument("-o", "--output")
    a = ap.parse_args(argv)
    if a.slug is not None:
        print(slug(a.slug))
        return 0
    if not a.output:
        ap.error("-o is required (or --slug)")
    lines, rows, bad, declined, failed_tests, not_run = build_report(a)
    tmp = a.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(tmp, a.output)
    for x in bad:
        print(f"acceptance: FAILED: {label(x.r)}: {why_bad(x.r)}")
    for t in failed_tests:
        print(f"acceptance: FAILED: ctest {t[0]}: {t[1]}")
    if declined:
        print(f"acceptance: {len(declined)} declined/skipped (listed in the report)")
    if not_run:
        print(f"acceptance: {len(not_run)} not run: the time budget ran out")
    print(f"acceptance: report: {a.output}")
    print()
    print("\n".join(md_table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
