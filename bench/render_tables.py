#!/usr/bin/env python3
"""Markdown tables for docs/results/ from what bench/results.sh ran.

Standard library only, so it runs wherever the scripts do.

    render_tables.py ops FILE.json... [--no-variant] [--caption] [--footer T]
        one row per result of mbench's result documents (`mbench run -o`),
        the columns of mbench's own markdown table (`--format md`), plus
        `% roof` and `bound` when the results carry them
    render_tables.py peak FILE.json
        the device's measured peaks (devices[0] of a result document)
    render_tables.py recipes FILE.json     a model's inference rows
    render_tables.py training FILE.json    a model's training rows
    render_tables.py extract FILE (--table N | --prefix TEXT)
        the N-th markdown table (1-based) a program printed, or its lines
        that start with TEXT (a figure printed as a sentence)
    render_tables.py gbench-runs FILE...
        harness_gbench's agreement columns from several runs side by side
    render_tables.py python-wrapper FILE...
        one row per bench/python_overhead.py output: run()'s extra time

Numbers are formatted as mbench formats them (lib/report/), so a table
rendered here reads like the one mbench prints.
"""
import json
import math
import re
import sys


def die(msg):
    print("render_tables.py: " + msg, file=sys.stderr)
    sys.exit(2)


def load_results(paths):
    results, devices = [], []
    for p in paths:
        try:
            with open(p) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            die("%s: %s" % (p, e))
        results += doc.get("results", [])
        devices += doc.get("devices", [])
    if not results:
        die("no results in %s" % " ".join(paths))
    return results, devices


def num(v):
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def fmt_ns(ns):
    """mb_format_ns: 4 significant figures, s/ms/us/ns."""
    ns = num(ns)
    if ns is None:
        return "-"
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us"), (1, "ns")):
        if ns >= scale or unit == "ns":
            v = ns / scale
            return ("%.1f %s" if v >= 100 else
                    "%.2f %s" if v >= 10 else "%.3f %s") % (v, unit)
    return "-"


def fmt_rate(v):
    """lib/report/table.c fmt_rate."""
    v = num(v)
    if v is None or v <= 0:
        return "-"
    return ("%.0f" if v >= 100 else "%.1f" if v >= 1 else "%.3f") % v


def fmt_bytes(b):
    b = num(b)
    if b is None or b <= 0:
        return "-"
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while b >= 1024 and u + 1 < len(units):
        b /= 1024
        u += 1
    return ("%.1f %s" if u else "%.0f %s") % (b, units[u])


def roof(d):
    """% of the roofline bound and which bound, when the result has them.
    The field is being added as derived.pct_roof (the brief called it
    roof_pct): either name is read."""
    v = d.get("pct_roof", d.get("roof_pct"))
    return num(v), d.get("bound") or ""


def has_roof(results):
    return any("pct_roof" in r.get("derived", {}) or
               "roof_pct" in r.get("derived", {}) for r in results)


def shape_of(r):
    return r.get("problem", "").split("/")[1] if "/" in r.get(
        "problem", "") else "x".join(str(v) for v in r["shape"].values())


def variant_of(r):
    """The variant as mbench's table shows it: the problem id's segment
    after the dtypes (blanks written as commas there), then the recipe."""
    parts = r.get("problem", "").split("/")[3:]
    for key in ("mode", "recipe"):  # appended after the variant, in order
        if parts and r.get(key) and parts[-1] == r[key]:
            parts.pop()
    words = [p.replace(",", " ") for p in parts]
    if r.get("recipe"):
        words.append(r["recipe"])
    return " ".join(words)


def dtype_of(r):
    dt = r.get("dtypes", {})
    a, out = dt.get("a", ""), dt.get("out", "")
    return a if a == out or not out else "%s->%s" % (a, out)


def check_of(r):
    if r.get("status") != "ok":
        return r.get("status", "-")
    c = r.get("correctness", {})
    if not c.get("checked"):
        return "-"
    return "pass" if c.get("pass") else "FAIL"


def table(header, align, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def device_caption(dev):
    peaks = dev.get("peak_flops", {})
    text = ", ".join("%s %.1f GFLOP/s" % (k, v / 1e9)
                     for k, v in peaks.items() if num(v))
    return "%s:%s %s (%s cores; peak %s; %s)" % (
        dev.get("backend", "?"), dev.get("index", 0), dev.get("name", "?"),
        dev.get("compute_units", "?"), text or "unknown",
        dev.get("peak_source", "peak source unknown"))


def cmd_ops(args):
    no_variant = "--no-variant" in args
    caption = "--caption" in args
    footer = None
    if "--footer" in args:
        i = args.index("--footer")
        footer = args[i + 1]
        del args[i:i + 2]
    paths = [a for a in args if not a.startswith("--")]
    results, devices = load_results(paths)
    with_roof = has_roof(results)
    header = ["op", "shape", "dtype", "variant", "backend", "impl", "cache",
              "median", "noise", "samples", "GFLOP/s", "GB/s", "%peak"]
    align = [":---"] * 7 + ["---:"] * 6
    if with_roof:
        header += ["% roof", "bound"]
        align += ["---:", ":---"]
    header.append("check")
    align.append(":---")
    rows, notes = [], []
    for r in results:
        ok = r.get("status") == "ok"
        d, s = r.get("derived", {}), r.get("stats", {})
        row = [r.get("alias") or r.get("op", "?"), shape_of(r), dtype_of(r),
               variant_of(r), r.get("backend", ""),
               r.get("impl", "") + (" (emu)" if r.get("emulated") else ""),
               r.get("cache", "")]
        if ok:
            row += [fmt_ns(s.get("median_ns")),
                    "%.2f%%" % (100 * s.get("rel_stdev", float("nan"))),
                    s.get("count", "-"),
                    fmt_rate((num(d.get("tflops")) or 0) * 1e3),
                    fmt_rate(d.get("gbps")), fmt_rate(d.get("pct_peak"))]
        else:
            row += ["-"] * 6
            notes.append("%s %s: %s" % (row[0], row[1], r.get("reason", "")))
        if with_roof:
            pr, bound = roof(d)
            row += [fmt_rate(pr) if ok else "-", bound if ok else ""]
        row.append(check_of(r))
        if r.get("warning"):
            notes.append("%s %s %s: warning: %s" %
                         (row[0], row[1], row[2], r["warning"]))
        rows.append(row)
    if no_variant:
        header.pop(3)
        align.pop(3)
        for row in rows:
            row.pop(3)
    parts = []
    if caption and devices:
        parts.append("Device: " + device_caption(devices[0]) + "\n")
    parts.append(table(header, align, rows))
    if notes:
        parts.append("\n" + "\n".join("- " + n for n in notes))
    if footer:
        parts.append("\n" + footer)
    print("\n".join(parts))


def cmd_peak(args):
    _, devices = load_results(args)
    if not devices:
        die("no device in %s" % " ".join(args))
    dev = devices[0]
    peaks = dev.get("peak_flops", {})
    src = dev.get("peak_source", "")
    f32 = num(peaks.get("f32"))
    rows = []
    for dt, v in peaks.items():
        if not num(v):
            continue
        # peak_source names each dtype's instruction set: "f32 avx512f".
        m = re.search(r"\b%s ([A-Za-z0-9_]+)" % re.escape(dt), src)
        how = "measured, %s" % m.group(1) if m else "measured"
        if f32 and dt != "f32":
            how += "; %.2f × the f32 rate" % (v / f32)
        unit = "G ops/s" if dt.startswith("i") else "GFLOP/s"
        rows.append((dt, "%.1f %s" % (v / 1e9, unit), how))
    bw = num(dev.get("mem_bw_bytes_per_s"))
    if bw:
        rows.append(("memory", "%.1f GB/s" % (bw / 1e9), "measured copy"))
    print("Device: %s\n" % device_caption(dev))
    print(table(["dtype", "peak", "how"], [":---", "---:", ":---"], rows))


def model_rows(path, mode):
    results, _ = load_results([path])
    rows = [r for r in results if (r.get("mode") or "inference") == mode]
    if not rows:
        die("%s: no %s results" % (path, mode))
    return rows


def sqnr_text(r):
    a = r.get("accuracy", {})
    s, floor = num(a.get("sqnr_db")), num(a.get("min_sqnr_db"))
    if s is None:
        return "-"
    return "%.1f dB (%g)" % (s, floor) if floor is not None else "%.1f dB" % s


def speedup_text(r):
    if r.get("recipe") == "baseline":
        return "1.00×"
    v = num(r.get("speedup_vs_baseline"))
    return "%.2f×" % v if v is not None else "-"


def biggest_step(r):
    steps = [s for s in r.get("steps", []) if num(s.get("median_ns"))]
    if not steps:
        return ""
    total = sum(s["median_ns"] for s in steps)
    big = max(steps, key=lambda s: s["median_ns"])
    return "%s (%s/%s) %.0f %%" % (big.get("label", "?"), big.get("op", "?"),
                                   big.get("impl", "?"),
                                   100 * big["median_ns"] / total)


def cmd_recipes(args):
    rows = model_rows(args[0], "inference")
    with_roof = has_roof(rows)
    header = ["recipe", "median", "GFLOP/s", "speedup", "SQNR (floor)",
              "rel err", "peak memory", "biggest step"]
    align = [":---", "---:", "---:", "---:", "---:", "---:", "---:", ":---"]
    if with_roof:
        header.insert(3, "% roof")
        align.insert(3, "---:")
    out = []
    for r in rows:
        s, d = r.get("stats", {}), r.get("derived", {})
        gf = fmt_rate((num(d.get("tflops")) or 0) * 1e3)
        if num(d.get("pct_peak")):
            gf += " (%.0f %% of peak)" % d["pct_peak"]
        rel = num(r.get("accuracy", {}).get("rel_err"))
        row = [r.get("recipe", "?") + ("" if check_of(r) == "pass" else
                                       " (%s)" % check_of(r)),
               fmt_ns(s.get("median_ns")), gf, speedup_text(r), sqnr_text(r),
               "%.2g" % rel if rel is not None else "-",
               fmt_bytes(r.get("peak_memory_bytes")), biggest_step(r)]
        if with_roof:
            row.insert(3, fmt_rate(roof(d)[0]))
        out.append(row)
    print(table(header, align, out))


def phase_text(phases, name):
    """A phase's median (timed alone, under the whole's criterion) and its
    noise: the relative stdev of its samples."""
    v = fmt_ns(phases.get(name + "_ns"))
    noise = num(phases.get(name, {}).get("rel_stdev"))
    return v + (" (%.1f %%)" % (100 * noise) if noise is not None else "")


def parts_text(phases):
    """Whether forward + backward alone add up to the whole: the sum, its
    distance from the whole and the verdict (docs/measurement.md)."""
    p = phases.get("parts")
    if not p:
        return "-"
    off = 100 * (p["sum_ns"] / p["whole_ns"] - 1)
    return "%s (%+.0f %%), %s" % (fmt_ns(p["sum_ns"]), off,
                                  "agree" if p["agree"] else "**disagree**")


def cmd_training(args):
    rows = model_rows(args[0], "training")
    header = ["recipe", "total", "forward (noise)", "backward (noise)",
              "forward + backward", "speedup", "SQNR (floor)", "peak memory"]
    align = [":---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]
    out = []
    for r in rows:
        s, ph = r.get("stats", {}), r.get("phases", {})
        out.append([r.get("recipe", "?") + ("" if check_of(r) == "pass" else
                                            " (%s)" % check_of(r)),
                    fmt_ns(s.get("median_ns")), phase_text(ph, "forward"),
                    phase_text(ph, "backward"), parts_text(ph),
                    speedup_text(r), sqnr_text(r),
                    fmt_bytes(r.get("peak_memory_bytes"))])
    print(table(header, align, out))


def read_text(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError as e:
        die("%s: %s" % (path, e))


def tables_in(lines):
    found, cur = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            found.append(cur)
            cur = []
    return found


def cmd_extract(args):
    if len(args) != 3 or args[1] not in ("--table", "--prefix"):
        die("usage: extract FILE (--table N | --prefix TEXT)")
    lines = read_text(args[0])
    if args[1] == "--table":
        found = tables_in(lines)
        n = int(args[2])
        if not 1 <= n <= len(found):
            die("%s: no table %d (%d found)" % (args[0], n, len(found)))
        print("\n".join(found[n - 1]))
    else:
        hits = [l for l in lines if l.startswith(args[2])]
        if not hits:
            die("%s: no line starts with %r" % (args[0], args[2]))
        print("\n".join(hits))


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def cmd_gbench_runs(args):
    runs = []
    for p in args:
        t = tables_in(read_text(p))
        if not t:
            die("%s: no table" % p)
        head = cells(t[0][0])
        try:
            med = head.index("agreement (mb-gb)/gb")
            mean = head.index("(mb mean-gb)/gb")
        except ValueError:
            die("%s: not harness_gbench's table" % p)
        runs.append({cells(l)[0]: (cells(l)[med], cells(l)[mean])
                     for l in t[0][2:]})
    header = ["workload"]
    for i in range(len(runs)):
        header += ["run %d median" % (i + 1), "run %d mean" % (i + 1)]
    rows = []
    for w in runs[0]:
        row = [w]
        for run in runs:
            row += list(run.get(w, ("-", "-")))
        rows.append(row)
    print(table(header, ["---"] + ["---:"] * (len(header) - 1), rows))


def cmd_python_wrapper(args):
    rows = []
    for p in args:
        lines = read_text(p)
        ver = next((l.split()[1] for l in lines if l.startswith("Python ")),
                   "?")
        exe = next((l.split(None, 1)[1] for l in lines
                    if l.startswith("interpreter ")), "")
        m = next((re.search(r"median ([0-9.]+) ms \(min ([0-9.]+), max "
                            r"([0-9.]+)\)", l) for l in lines
                  if "beyond the library" in l), None)
        if not m:
            die("%s: no run() line" % p)
        rows.append(("%s (%s)" % (ver, exe) if exe else ver,
                     m.group(1) + " ms", m.group(2) + " ms",
                     m.group(3) + " ms"))
    print(table(["Python", "median", "min", "max"],
                ["---", "---", "---", "---"], rows))


COMMANDS = {"ops": cmd_ops, "peak": cmd_peak, "recipes": cmd_recipes,
            "training": cmd_training, "extract": cmd_extract,
            "gbench-runs": cmd_gbench_runs,
            "python-wrapper": cmd_python_wrapper}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        die("usage: render_tables.py {%s} ARGS... (see the docstring)" %
            "|".join(COMMANDS))
    COMMANDS[sys.argv[1]](sys.argv[2:])
