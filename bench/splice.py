#!/usr/bin/env python3
"""Puts the fragments bench/results.sh wrote into docs/results/*.md.

    python3 bench/splice.py OUT_DIR [--docs DIR] [--check]

Each generated table sits in a page between two markers:

    <!-- bench/results.sh: cpu.peak -->
    ...the table, replaced wholesale...
    <!-- end -->

and is replaced by OUT_DIR/cpu.peak.md; the prose around the markers is
kept. It fails loudly (exit 2, naming it) when a marker has no fragment or a
fragment has no marker, so no table is left stale and none is dropped; in
that case no page is written at all. --docs: the pages to edit (default
docs/results beside this script); --check: report what would change and
write nothing. Fragments of a --quick run (OUT_DIR/meta.md says so) are
refused for the repository's own docs/results.

Standard library only.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DOCS = os.path.join(os.path.dirname(HERE), "docs", "results")
BEGIN = re.compile(r"^<!-- bench/results\.sh: ([A-Za-z0-9_.-]+) -->\s*$")
END = "<!-- end -->"


def die(msg):
    print("splice.py: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    out, docs, check = None, DEFAULT_DOCS, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--docs" and i + 1 < len(argv):
            docs = argv[i + 1]
            i += 1
        elif a == "--check":
            check = True
        elif a.startswith("-") or out is not None:
            die("usage: splice.py OUT_DIR [--docs DIR] [--check]")
        else:
            out = a
        i += 1
    if out is None:
        die("usage: splice.py OUT_DIR [--docs DIR] [--check]")
    return out, docs, check


def splice_page(path, fragments, used):
    """The page's new text; records the fragments it used."""
    with open(path) as f:
        lines = f.read().split("\n")
    result, i = [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if not m:
            if lines[i].strip() == END:
                die("%s:%d: %s without a marker before it" % (path, i + 1,
                                                              END))
            result.append(lines[i])
            i += 1
            continue
        name = m.group(1)
        j = i + 1
        while j < len(lines) and lines[j].strip() != END:
            if BEGIN.match(lines[j]):
                die("%s:%d: marker %s is not closed before the next one" %
                    (path, i + 1, name))
            j += 1
        if j == len(lines):
            die("%s:%d: marker %s has no %s" % (path, i + 1, name, END))
        if name not in fragments:
            die("%s:%d: marker %s has no fragment %s.md in the output "
                "directory" % (path, i + 1, name, name))
        if name in used:
            die("%s:%d: marker %s appears twice" % (path, i + 1, name))
        used.add(name)
        result.append(lines[i])
        result.extend(fragments[name].rstrip("\n").split("\n"))
        result.append(lines[j])
        i = j + 1
    return "\n".join(result)


def main():
    out, docs, check = parse_args(sys.argv[1:])
    if not os.path.isdir(out):
        die("%s: no such directory" % out)
    if not os.path.isdir(docs):
        die("%s: no such directory" % docs)
    meta = os.path.join(out, "meta.md")
    if (os.path.realpath(docs) == os.path.realpath(DEFAULT_DOCS) and
            os.path.exists(meta) and "QUICK RUN" in open(meta).read()):
        die("%s comes from a --quick run: its figures are not for %s "
            "(use --docs on a copy to check the splicing)" % (out, docs))
    # Fragments are <page>.<table>.md; meta.md (the run's own record) is
    # not one.
    fragments = {}
    for name in sorted(os.listdir(out)):
        if name.endswith(".md") and name.count(".") >= 2:
            with open(os.path.join(out, name)) as f:
                fragments[name[:-3]] = f.read()
    pages = sorted(p for p in os.listdir(docs) if p.endswith(".md"))
    used, new = set(), {}
    for p in pages:
        path = os.path.join(docs, p)
        new[path] = splice_page(path, fragments, used)
    unused = sorted(set(fragments) - used)
    if unused:
        die("fragment(s) with no marker in %s: %s" %
            (docs, ", ".join(n + ".md" for n in unused)))
    changed = 0
    for path, text in new.items():
        with open(path) as f:
            if f.read() == text:
                continue
        changed += 1
        print("splice.py: %s %s" % ("would change" if check else "updated",
                                    path))
        if not check:
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
    print("splice.py: %d fragment(s), %d page(s) %s" %
          (len(used), changed, "to change" if check else "changed"))


if __name__ == "__main__":
    main()
