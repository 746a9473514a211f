#!/usr/bin/env python3
"""Loads an HTML report of `mbench report` in headless Chromium and checks
it the way a reader would use it (issue 25, docs/report.md's DOM contract):

  - it loads from file:// without console errors, exceptions or requests
    for anything but itself (the report is self-contained);
  - one svg.mb-roofline per device, one circle.mb-point per ok result with
    FLOPs (counted from the input files themselves), painted;
  - one row of #mb-results per result; a heatmap cell per result with a
    speedup, of its value; a distribution per result with samples; with two
    inputs a comparison row per result ok in both, and their geometric
    mean;
  - hovering a point shows #mb-tooltip with that point's id;
  - typing into #mb-filter hides the rows that don't match; clicking a
    column's header sorts the rows by it;
  - a screenshot of the roofline is not blank.

  browser_check.py REPORT.html INPUT.json... [--screenshot PNG]

Exit 0 when every check passes, 1 naming each that failed, 2 on bad usage,
77 (ctest's skip) when no Chromium is installed.
"""

import argparse
import json
import math
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import png  # noqa: E402

SKIP = 77
# The sections the contract promises; mb-compare only for two inputs.
SECTIONS = ("mb-meta", "mb-roofline", "mb-heatmap", "mb-shapes",
            "mb-distributions", "mb-table")


# -- what the inputs say the page must show ---------------------------------

def read_results(path):
    """The results of a results document or JSON-lines stream."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
        return doc.get("results", [])
    except json.JSONDecodeError:
        pass
    results = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            if n == len(text.splitlines()):
                break  # a cut last line, as the stream's reader allows
            raise SystemExit("%s:%d: not JSON" % (path, n))
        if "results" not in value and "schema" not in value:
            results.append(value)
    return results


def expected(paths):
    results = [r for p in paths for r in read_results(p)]
    points = []
    devices = set()
    for r in results:
        devices.add((r.get("backend"), r.get("device_index"), r.get("device")))
        d = r.get("derived") or {}
        if (r.get("status") == "ok" and (d.get("flop") or 0) > 0
                and d.get("intensity") is not None):
            points.append(r["id"])
    want = {"ids": sorted(r["id"] for r in results), "points": sorted(points),
            "devices": devices,
            "speedups": sorted(r["speedup_vs_baseline"] for r in results
                               if r.get("speedup_vs_baseline") is not None),
            "dists": sorted(r["id"] for r in results if r.get("samples_ns"))}
    if len(paths) == 2:
        # What mbench compare matches: ids ok in both runs; the geometric
        # mean of their median ratios, new over base.
        base, new = ({r["id"]: r for r in read_results(p)
                      if r.get("status") == "ok"} for p in paths)
        both = sorted(i for i in base if i in new)
        want["compared"] = both
        if both:
            want["geomean"] = math.exp(sum(
                math.log(new[i]["stats"]["median_ns"]
                         / base[i]["stats"]["median_ns"]) for i in both)
                / len(both))
    return want


# -- the checks ----------------------------------------------------------------

class Checker:
    def __init__(self, browser, want, inputs):
        self.b = browser
        self.want = want
        self.inputs = inputs
        self.failures = []

    def check(self, ok, what):
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        if not ok:
            self.failures.append(what)
        return ok

    def js(self, expr):
        return self.b.evaluate(expr)

    def structure(self):
        for sec in SECTIONS + (("mb-compare",) if self.inputs == 2 else ()):
            self.check(self.js("!!document.querySelector('section#%s')" % sec),
                       "section#%s is there" % sec)
        if self.inputs != 2:
            self.check(not self.js("!!document.getElementById('mb-compare')"),
                       "no section#mb-compare for %d input(s)" % self.inputs)
        svgs = self.js("[...document.querySelectorAll('svg.mb-roofline')]"
                       ".map(s => s.getAttribute('data-device'))")
        self.check(len(svgs) == len(self.want["devices"]),
                   "one svg.mb-roofline per device: %d svg (%s) for %d "
                   "device(s)" % (len(svgs), ", ".join(map(str, svgs)),
                                  len(self.want["devices"])))
        points = self.js(
            "[...document.querySelectorAll('svg.mb-roofline circle.mb-point')]"
            ".map(c => c.getAttribute('data-id'))")
        self.check(sorted(points) == self.want["points"],
                   "one circle.mb-point per ok result with FLOPs: %d points, "
                   "%d such results%s" % (len(points), len(self.want["points"]),
                                          _diff(points, self.want["points"])))
        # Painted: inside the page, with a size, not hidden.
        hidden = self.js(
            "[...document.querySelectorAll('circle.mb-point')].filter(c => {"
            " const r = c.getBoundingClientRect();"
            " const s = getComputedStyle(c);"
            " return !(r.width > 0 && r.height > 0) || s.display == 'none'"
            " || s.visibility == 'hidden' || s.opacity == '0'"
            " }).map(c => c.getAttribute('data-id'))")
        self.check(not hidden, "every point has a size and is visible%s"
                   % (": not " + ", ".join(hidden[:5]) if hidden else ""))
        rows = self.js("[...document.querySelectorAll("
                       "'table#mb-results tbody tr[data-id]')]"
                       ".map(r => r.getAttribute('data-id'))")
        self.check(sorted(rows) == self.want["ids"],
                   "#mb-results has one row per result: %d rows, %d results%s"
                   % (len(rows), len(self.want["ids"]),
                      _diff(rows, self.want["ids"])))

    def charts(self):
        """The heatmap's cells, the distributions and the comparison
        against what the inputs hold."""
        cells = self.js("[...document.querySelectorAll('svg.mb-heatmap "
                        "rect.mb-cell')].map(c => parseFloat("
                        "c.getAttribute('data-speedup')))")
        want = self.want["speedups"]
        self.check(len(cells) == len(want) and all(
            abs(a - b) <= 1e-4 * max(abs(b), 1e-9)
            for a, b in zip(sorted(cells), want)),
                   "one heatmap cell per result with a speedup, of its value: "
                   "%d cells, %d such results" % (len(cells), len(want)))
        if cells:
            x, y = self.centre("document.querySelector('svg.mb-heatmap "
                               "rect.mb-cell')")
            self.move_mouse(x, y)
            tip = self.tooltip_state()
            recipe = self.js("document.querySelector('svg.mb-heatmap "
                             "rect.mb-cell').getAttribute('data-recipe')")
            self.check(tip["shown"] and recipe and recipe in tip["text"],
                       "hovering a heatmap cell shows the tooltip with its "
                       "recipe %r (text %r)" % (recipe, tip["text"][:120]))
        dists = self.js("[...document.querySelectorAll('svg.mb-dist')]"
                        ".map(s => s.getAttribute('data-id'))")
        self.check(sorted(dists) == self.want["dists"],
                   "one svg.mb-dist per result with samples: %d, %d such "
                   "results%s" % (len(dists), len(self.want["dists"]),
                                  _diff(dists, self.want["dists"])))
        if "compared" not in self.want:
            return
        rows = self.js("[...document.querySelectorAll('table#mb-compare-table"
                       " tr[data-id]')].map(r => r.getAttribute('data-id'))")
        self.check(sorted(rows) == self.want["compared"],
                   "#mb-compare-table has a row per result ok in both runs: "
                   "%d rows, %d such results%s"
                   % (len(rows), len(self.want["compared"]),
                      _diff(rows, self.want["compared"])))
        self.check(self.js("!!document.querySelector('svg.mb-compare')"),
                   "svg.mb-compare is there")
        text = self.js("(document.getElementById('mb-geomean') || {})"
                       ".textContent || ''")
        got = _number(text)
        want = self.want.get("geomean")
        self.check(got is not None and want is not None
                   and abs(got - want) <= 0.01 * want,
                   "#mb-geomean %r is the geometric mean of the new/base "
                   "median ratios (%.4g)" % (text, want or 0))

    def move_mouse(self, x, y):
        self.b.send("Input.dispatchMouseEvent",
                    {"type": "mouseMoved", "x": x, "y": y})

    def click(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.b.send("Input.dispatchMouseEvent",
                        {"type": kind, "x": x, "y": y, "button": "left",
                         "clickCount": 1})

    def centre(self, selector_expr):
        """Scrolls the element into view; its centre in viewport pixels."""
        return self.js(
            "(() => { const e = %s; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
            % selector_expr)

    def tooltip_state(self):
        return self.js(
            "(() => { const t = document.getElementById('mb-tooltip');"
            " if (!t) return null; const s = getComputedStyle(t);"
            " return {shown: s.display != 'none' && s.visibility != 'hidden',"
            " text: t.textContent}; })()")

    def hover(self):
        tip = self.tooltip_state()
        if not self.check(tip is not None, "div#mb-tooltip is there"):
            return
        self.check(not tip["shown"], "the tooltip is hidden before a hover")
        n = self.js("document.querySelectorAll('svg.mb-roofline "
                    "circle.mb-point').length")
        if not n:
            return
        # Two points with different ids, so a tooltip that kept its first
        # text fails; the id expected is the point on top at the centre
        # (two runs of one benchmark can overlap).
        seen = []
        for k in range(n):
            sel = ("document.querySelectorAll('svg.mb-roofline "
                   "circle.mb-point')[%d]" % k)
            if self.js(sel + ".getAttribute('data-id')") in seen:
                continue
            x, y = self.centre(sel)
            top = self.js("(() => { const e = document.elementFromPoint(%f, %f);"
                          " return e && e.classList.contains('mb-point') ?"
                          " e.getAttribute('data-id') : null; })()" % (x, y))
            if top is None or top in seen:
                continue
            seen.append(top)
            self.move_mouse(x, y)
            tip = self.tooltip_state()
            self.check(tip["shown"] and top in tip["text"],
                       "hovering point %s shows the tooltip with its id "
                       "(shown %s, text %r)" % (top, tip["shown"],
                                                tip["text"][:200]))
            if len(seen) == 2:
                break
        self.check(len(seen) == min(2, len(set(self.want["points"]))),
                   "%d point(s) could be hovered (a point is on top at its "
                   "centre)" % len(seen))

    def visible_rows(self):
        return self.js(
            "[...document.querySelectorAll('table#mb-results tbody tr')]"
            ".filter(r => r.style.display != 'none' &&"
            " getComputedStyle(r).display != 'none')"
            ".map(r => r.getAttribute('data-id'))")

    def choose_filter(self):
        """A word that some rows' text contains and others' doesn't."""
        texts = self.js("[...document.querySelectorAll("
                        "'table#mb-results tbody tr')].map(r => "
                        "r.textContent.toLowerCase())")
        ids = self.want["ids"]
        words = []
        for rid in ids:
            words += [w for w in rid.lower().split("/") if len(w) >= 3]
        for w in sorted(set(words)):
            n = sum(w in t for t in texts)
            if 0 < n < len(texts):
                return w, texts
        return None, texts

    def filter(self):
        word, texts = self.choose_filter()
        if not self.check(word is not None,
                          "the results differ in some word to filter by"):
            return
        want = sum(word in t for t in texts)
        x, y = self.centre("document.getElementById('mb-filter')")
        self.click(x, y)
        self.b.send("Input.insertText", {"text": word})
        value = self.js("document.getElementById('mb-filter').value")
        shown = self.visible_rows()
        self.check(len(shown) == want and value == word,
                   "typing %r into #mb-filter leaves the %d of %d rows that "
                   "contain it (%d shown)" % (value, want, len(texts),
                                              len(shown)))
        self.js("(() => { const f = document.getElementById('mb-filter');"
                " f.value = ''; f.dispatchEvent(new Event('input',"
                " {bubbles: true})); })()")
        self.check(len(self.visible_rows()) == len(texts),
                   "clearing the filter shows every row again")

    def column_values(self, col):
        return self.js(
            "[...document.querySelectorAll('table#mb-results tbody tr')]"
            ".map(r => { const c = r.cells[%d]; if (!c) return null;"
            " return c.getAttribute('data-v') ?? c.getAttribute("
            "'data-value') ?? c.getAttribute('data-sort') ??"
            " c.textContent.trim(); })" % col)

    def sort(self):
        heads = self.js("[...document.querySelectorAll('table#mb-results "
                        "thead th')].map(t => t.textContent.trim())")
        ncols = len(heads)
        col = None
        # A numeric column whose values differ and whose rows are not in
        # order yet, so a click that does nothing is seen.
        for c in range(ncols):
            vals = [_number(v) for v in self.column_values(c)]
            if (len(vals) > 2 and all(v is not None for v in vals)
                    and len(set(vals)) > 2 and not _ordered(vals)):
                col = c
                break
        if not self.check(col is not None,
                          "the table has a numeric column not yet in order "
                          "(headers %s)" % heads):
            return
        before = self.js("[...document.querySelectorAll('table#mb-results "
                         "tbody tr')].map(r => r.getAttribute('data-id'))")
        x, y = self.centre("document.querySelectorAll('table#mb-results "
                           "thead th')[%d]" % col)
        self.click(x, y)
        vals = [_number(v) for v in self.column_values(col)]
        after = self.js("[...document.querySelectorAll('table#mb-results "
                        "tbody tr')].map(r => r.getAttribute('data-id'))")
        self.check(_ordered(vals) and sorted(after) == sorted(before),
                   "clicking header %r sorts the rows by it numerically "
                   "(first values %s)" % (heads[col], vals[:6]))

    def screenshot(self, shot_path):
        """The roofline's box: not blank, and its points painted."""
        box = self.js(
            "(() => { const s = document.querySelector('svg.mb-roofline');"
            " s.scrollIntoView({block: 'start'});"
            " const r = s.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height];"
            " })()")
        x, y, w, h = box
        if not self.check(w >= 50 and h >= 50,
                          "the roofline is at least 50x50 px (%dx%d)" % (w, h)):
            return
        shot = self.b.send("Page.captureScreenshot",
                           {"format": "png", "captureBeyondViewport": True,
                            "clip": {"x": x, "y": y, "width": w, "height": h,
                                     "scale": 1}})
        import base64
        data = base64.b64decode(shot["data"])
        if shot_path:
            with open(shot_path + ".roofline.png", "wb") as f:
                f.write(data)
        width, height, ch, rows = png.decode(data)
        pix = png.pixels(width, height, ch, rows)
        counts = {}
        for p in pix:
            counts[p] = counts.get(p, 0) + 1
        background = max(counts, key=counts.get)
        painted = 1 - counts[background] / len(pix)
        self.check(len(counts) >= 4 and painted >= 0.005,
                   "the roofline's screenshot is not blank: %d colours, %.1f %%"
                   " of %dx%d px not background" % (len(counts), 100 * painted,
                                                     width, height))
        # Each point's centre pixel (in the clip's coordinates) differs from
        # the background: the dots are drawn, not only in the DOM.
        centres = self.js(
            "(() => { const s = document.querySelector('svg.mb-roofline');"
            " const b = s.getBoundingClientRect();"
            " return [...s.querySelectorAll('circle.mb-point')].map(c => {"
            " const r = c.getBoundingClientRect();"
            " return [r.left + r.width / 2 - b.left,"
            " r.top + r.height / 2 - b.top]; }); })()")
        blank = [c for c in centres
                 if png.pixels(width, height, ch, rows,
                               (c[0], c[1], c[0] + 1, c[1] + 1)) == [background]]
        self.check(centres and not blank,
                   "every point of the first roofline is painted (%d of %d at "
                   "background colour)" % (len(blank), len(centres)))


def _diff(got, want):
    g, w = set(got), set(want)
    extra, missing = sorted(g - w)[:3], sorted(w - g)[:3]
    out = ""
    if missing:
        out += "; missing " + ", ".join(missing)
    if extra:
        out += "; unexpected " + ", ".join(extra)
    return out


_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0}


def _number(text):
    if text is None:
        return None
    parts = text.replace(",", "").replace("x", " ").split()
    if not parts:
        return None
    try:
        v = float(parts[0].rstrip("%"))
    except ValueError:
        return None
    if len(parts) > 1 and parts[1] in _UNITS:
        v *= _UNITS[parts[1]]
    return v


def _ordered(vals):
    return (all(a <= b for a, b in zip(vals, vals[1:]))
            or all(a >= b for a, b in zip(vals, vals[1:])))


# -- the run -------------------------------------------------------------------

def run(args):
    chromium = cdp.find_chromium(args.chromium)
    if not chromium:
        print("SKIP: no Chromium installed (chromium, chromium-browser, "
              "google-chrome; or set MB_CHROMIUM)")
        return SKIP
    report = os.path.abspath(args.report)
    if not os.path.isfile(report):
        print("error: %s: no such report" % args.report, file=sys.stderr)
        return 2
    want = expected(args.inputs)
    url = "file://" + report
    t0 = time.monotonic()
    with cdp.Browser(chromium, timeout=args.timeout) as b:
        b.attach_page()
        b.send("Runtime.enable")
        b.send("Log.enable")
        b.send("Network.enable")
        b.send("Page.enable")
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1,
                "mobile": False})
        mark = len(b.events)
        nav = b.send("Page.navigate", {"url": url})
        if nav.get("errorText"):
            print("FAIL: loading %s: %s" % (url, nav["errorText"]))
            return 1
        b.wait_event("Page.loadEventFired", since=mark)
        print("loaded %s in %.2f s (%s)" % (args.report, time.monotonic() - t0,
                                             chromium))
        c = Checker(b, want, len(args.inputs))
        for stage in (c.structure, c.hover, c.charts, c.filter, c.sort,
                      lambda: c.screenshot(args.screenshot)):
            try:
                stage()
            except cdp.CdpError as e:
                if not e.page_error:
                    raise  # the browser is stuck or gone: stop here
                c.check(False, "a check's script failed on this page: %s" % e)
        if args.screenshot:
            # From the top, as a reader first sees it: sticky table headers
            # are drawn where the last scroll left them.
            b.evaluate("window.scrollTo(0, 0)")
            full = b.send("Page.captureScreenshot",
                          {"format": "png", "captureBeyondViewport": True,
                           "clip": {"x": 0, "y": 0, "width": 1280,
                                    "height": args.screenshot_height,
                                    "scale": 1}})
            import base64
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(full["data"]))
            print("wrote %s" % args.screenshot)
        b.pump(0.2)  # messages logged late still count
        problems = console_problems(b.events, url)
        for p in problems:
            print("  " + p)
        c.check(not problems, "no console errors, exceptions or fetches "
                "(%d found)" % len(problems))
    if c.failures:
        print("browser_check: %d check(s) failed:\n  %s"
              % (len(c.failures), "\n  ".join(c.failures)))
        return 1
    print("browser_check: all checks passed in %.1f s"
          % (time.monotonic() - t0))
    return 0


def console_problems(events, url):
    out = []
    for name, p in events:
        if name == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            desc = d.get("exception", {}).get("description") or d.get("text")
            out.append("exception: %s (line %s)" % (desc, d.get("lineNumber")))
        elif (name == "Runtime.consoleAPICalled"
              and p.get("type") in ("error", "warning", "assert")):
            text = " ".join(str(a.get("value", a.get("description", "")))
                            for a in p.get("args", []))
            out.append("console.%s: %s" % (p["type"], text))
        elif (name == "Log.entryAdded"
              and p.get("entry", {}).get("level") == "error"):
            out.append("log error: %s" % p["entry"].get("text"))
        elif name == "Network.requestWillBeSent":
            req = p.get("request", {}).get("url", "")
            if req != url and not req.startswith("data:"):
                out.append("fetched %s (the report must be self-contained)"
                           % req)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report")
    ap.add_argument("inputs", nargs="+",
                    help="the results files the report was made from")
    ap.add_argument("--screenshot", help="also write a 1280 px wide PNG of "
                    "the page's top (and PNG.roofline.png)")
    ap.add_argument("--screenshot-height", type=int, default=2000)
    ap.add_argument("--chromium", help="the browser (default: on PATH)")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds any one browser step may take")
    args = ap.parse_args()
    try:
        return run(args)
    except cdp.CdpError as e:
        print("FAIL: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
