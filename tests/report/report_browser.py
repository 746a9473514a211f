#!/usr/bin/env python3
"""The HTML report in a real browser, end to end (ctest report_browser).

Runs mbench twice on a tiny CPU config (tests/report/report_tiny.yaml:
GEMMs in two dtypes, element-wise ops, a linear layer under two recipes),
makes `mbench report a.json b.json -o report.html` (two runs: the
comparison view too) and `mbench report a.jsonl -o one.html` (one run, read
as a JSON-lines stream, written here from a.json since a run that finishes
removes its own), and checks each in headless Chromium with
browser_check.py.

  report_browser.py [--mbench PATH] [--config FILE] [--keep DIR]
                    [--screenshot PNG]

MBENCH in the environment names the binary when --mbench doesn't. Exit 0
when everything passed, 1 when something failed, 77 (ctest's skip) when no
Chromium is installed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # nothing left in the source tree
sys.path.insert(0, HERE)
import cdp  # noqa: E402

SKIP = 77


def step(what, argv, cwd, timeout):
    print("+ " + " ".join(argv), flush=True)
    t = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except subprocess.TimeoutExpired:
        print("FAIL: %s took over %d s" % (what, timeout))
        return False
    if p.returncode != 0:
        print(p.stdout[-4000:])
        print("FAIL: %s exited %d" % (what, p.returncode))
        return False
    print("  %s: %.1f s" % (what, time.monotonic() - t), flush=True)
    return True


def to_stream(doc_path, stream_path):
    """The run's document as the JSON-lines stream a run writes beside it
    while it runs (docs/schema.md; the run removes it once the document is
    whole): a header with meta and devices, then a result per line."""
    with open(doc_path, encoding="utf-8") as f:
        doc = json.load(f)
    results = doc.pop("results")
    with open(stream_path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc) + "\n")
        for r in results:
            f.write(json.dumps(r) + "\n")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mbench", default=os.environ.get("MBENCH"))
    ap.add_argument("--config", default=os.path.join(HERE, "report_tiny.yaml"))
    ap.add_argument("--keep", help="work in this directory and keep it")
    ap.add_argument("--screenshot",
                    help="also write a screenshot of the two-run report")
    args = ap.parse_args()
    if not cdp.find_chromium():
        print("SKIP: no Chromium installed (chromium, chromium-browser, "
              "google-chrome; or set MB_CHROMIUM)")
        return SKIP
    if not args.mbench:
        print("error: no mbench: give --mbench or set MBENCH", file=sys.stderr)
        return 2
    mbench = os.path.abspath(args.mbench)
    work = args.keep or tempfile.mkdtemp(prefix="mb-report-browser-")
    os.makedirs(work, exist_ok=True)
    t0 = time.monotonic()
    check = [sys.executable, os.path.join(HERE, "browser_check.py")]
    try:
        ok = (step("run a", [mbench, "run", "-q", "--config", args.config,
                             "-o", "a.json"], work, 300)
              and step("run b", [mbench, "run", "-q", "--config", args.config,
                                 "-o", "b.json"], work, 300)
              and step("report of two runs", [mbench, "report", "a.json",
                                              "b.json", "-o", "report.html"],
                       work, 120)
              and to_stream(os.path.join(work, "a.json"),
                            os.path.join(work, "a.jsonl"))
              and step("report of one stream", [mbench, "report", "a.jsonl",
                                                "-o", "one.html"], work, 120))
        if ok:
            shot = (["--screenshot", os.path.abspath(args.screenshot)]
                    if args.screenshot else [])
            ok = step("browser on the two-run report",
                      check + ["report.html", "a.json", "b.json"] + shot,
                      work, 180)
            ok = step("browser on the one-run report",
                      check + ["one.html", "a.jsonl"], work, 180) and ok
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("report_browser: %s in %.1f s" % ("passed" if ok else "FAILED",
                                            time.monotonic() - t0))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
