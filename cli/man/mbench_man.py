#!/usr/bin/env python3
"""Writes mbench(1) from the built mbench's own help, so the man page says
what that mbench does: its commands, each command's usage, description and
options (the tables the parser reads), the exit status and the environment
(`mbench --help`). Only what help has no place for is written here: the
name line, the files, the examples and the see-also list.

    mbench_man.py --mbench build/bin/mbench --module-dir /usr/lib/microbench \
        -o build/cli/man/mbench.1
"""
import argparse
import re
import subprocess

# The examples: each ran as shown on a CPU-only machine.
EXAMPLES = [
    ("What there is to measure, and the kernels of each op:",
     "mbench list ops"),
    ("A bf16 GEMM on the best backend with a device:",
     "mbench run --op gemm --shape 4096x4096x4096 --dtype bf16"),
    ("torchao's linear layer under a quantization recipe:",
     "mbench run --model linear --recipe int8dq --shape 1024x1024x1024"),
    ("A torchao config file on the CPU, three samples each, planned first:",
     "mbench run --config readme_inference.yml --backend cpu --dry-run\n"
     "mbench run --config readme_inference.yml --backend cpu --samples 3"),
    ("The default suite into a file, then a later run against it "
     "(exit 1 on a regression):",
     "mbench -o base.json\nmbench -o new.json\n"
     "mbench compare base.json new.json"),
]

SEE_ALSO = ("The project's docs/cli.md (every command and option), "
            "docs/config.md (config files), docs/measurement.md (how samples "
            "are taken and compared), docs/embedding.md (the C library), "
            "docs/python.md (the Python package).")


def help_text(mbench, *args):
    return subprocess.run([mbench, *args, "--help"], check=True,
                          capture_output=True, text=True).stdout


def esc(text):
    """Text as troff prints it: backslashes and dashes escaped, a line
    that would start with a control character guarded."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + l if l[:1] in (".", "'") else l
                     for l in text.split("\n"))


def sections(text):
    """A help text's blocks: {heading: lines} for blocks that start with
    "heading:" alone on a line; what comes before the first, under ""."""
    out, key = {"": []}, ""
    for line in text.rstrip("\n").split("\n"):
        m = re.fullmatch(r"([a-z][a-z ]*):", line)
        if m:
            key = m.group(1)
            out[key] = []
        else:
            out[key].append(line)
    return out


def two_columns(lines):
    """ "  name   text" lines as (name, text); a line that continues the
    previous entry's text is added to it."""
    rows = []
    for line in lines:
        m = re.match(r"  (\S.*?)(?:\s{2,}|$)(.*)", line)
        if not line.strip():
            continue
        if line.startswith("   ") and rows:
            rows[-1] = (rows[-1][0], rows[-1][1] + " " + line.strip())
        elif m:
            rows.append((m.group(1).strip(), m.group(2).strip()))
    return rows


def option_rows(lines):
    """Option lines, "  -o, --output FILE    help", as (left, help): the
    left column is 30 wide, or longer and then one space from the help."""
    rows = []
    for line in lines:
        m = re.match(r"  (.{30}) (.*)$", line)
        if not m or not m.group(1).lstrip().startswith("-"):
            m = re.match(r"  ((?:-\w, )?\s*--\S+(?: \S+)?) (.*)$", line)
        if m:
            rows.append((m.group(1).strip(), m.group(2).strip()))
    return rows


def option_term(left):
    """ "-o, --output FILE" in bold names and an italic metavar."""
    m = re.fullmatch(r"(?:(-\w), )?(--\S+)(?: (\S+))?", left)
    short, name, meta = m.groups()
    term = (f"\\fB{esc(short)}\\fR, " if short else "") + \
        f"\\fB{esc(name)}\\fR"
    return term + (f" \\fI{esc(meta)}\\fR" if meta else "")


def tagged(rows, term=lambda t: f"\\fB{esc(t)}\\fR"):
    return "".join(f".TP\n{term(t)}\n{esc(h)}\n" for t, h in rows)


def paragraph(lines):
    text = " ".join(l.strip() for l in lines if l.strip())
    return f".PP\n{esc(text)}\n" if text else ""


def command_section(mbench, name):
    """ .SS for `mbench NAME`: its usage (as printed), what it says about
    itself, its options. """
    blocks = sections(help_text(mbench, name))
    head = blocks[""]
    usage, rest = [], []
    for line in head:
        (usage if not rest and (line.startswith("usage:") or
                                (usage and line.startswith(" ")))
         else rest).append(line)
    out = [f'.SS "mbench {name}"\n.nf\n']
    # "usage: " off the first line, and its width off those under it
    out += [esc(l[len("usage: "):]) + "\n" for l in usage]
    out.append(".fi\n")
    # The rest: prose, and tables of "  word   text" (list's lists).
    para = []
    for line in rest:
        if re.match(r"  \S+\s{2,}\S", line):
            out.append(paragraph(para))
            para = []
            out.append(tagged(two_columns([line])))
        else:
            para.append(line)
    out.append(paragraph(para))
    out.append(tagged(option_rows(blocks.get("options", [])), option_term))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mbench", required=True)
    ap.add_argument("--module-dir", required=True,
                    help="where the backend modules are installed")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    version = subprocess.run([a.mbench, "--version"], check=True,
                             capture_output=True, text=True).stdout.split()[1]
    top = sections(help_text(a.mbench))
    # the command table, then prose (where each command's options are)
    commands = two_columns([l for l in top["commands"] if l[:1] == " "])
    after = [l for l in top["commands"] if l[:1] not in ("", " ")]
    description = [l for l in top[""] if not l.startswith("usage:")]

    page = [
        f'.TH MBENCH 1 "" "mbench {esc(version)}" "User Commands"\n.nh\n',
        ".SH NAME\nmbench \\- accelerator microbenchmarks with checked "
        "numerics\n",
        ".SH SYNOPSIS\n.B mbench\n[\\fIcommand\\fR] [\\fIoptions\\fR]\n",
        ".SH DESCRIPTION\n", paragraph(description),
        ".SH COMMANDS\n", tagged(commands), paragraph(after),
    ]
    page.append(".SH OPTIONS\n")
    page.append(tagged(option_rows(top["options"]), option_term))
    page += [command_section(a.mbench, name) for name, _ in commands]
    page.append(".SH EXIT STATUS\n")
    page.append(tagged(two_columns(top["exit status"])))
    page.append(".SH ENVIRONMENT\n")
    page.append(tagged(two_columns(top["environment"])))
    page.append(".SH FILES\n" + tagged([
        (f"{a.module_dir}/mb_backend_*.so",
         "the backend modules (cpu, cuda, hip), loaded at start-up; "
         "MB_BACKEND_PATH is searched first"),
        ("$XDG_CACHE_HOME/microbench/cpu-peak-v2-KEYHASH",
         "the CPU backend's cached peak (MB_CACHE_DIR, MB_REMEASURE_PEAK); "
         "one file per key (cores, threads, ...), KEYHASH its hash"),
        ("$XDG_CACHE_HOME/microbench/copy-bandwidth-v1-BACKEND-INDEX-KEYHASH",
         "a device's cached copy bandwidth, the %roof bandwidth "
         "(MB_CACHE_DIR, MB_REMEASURE_PEAK)"),
        ("$XDG_CACHE_HOME/microbench/flush-check-v1-BACKEND-INDEX-KEYHASH",
         "a device's passed cache-flush check "
         "(MB_CACHE_DIR, MB_REMEASURE_PEAK)")]))
    page.append(".SH EXAMPLES\n")
    for what, cmds in EXAMPLES:
        page.append(f".PP\n{esc(what)}\n.PP\n.nf\n.RS 4\n{esc(cmds)}\n.RE\n"
                    ".fi\n")
    page.append(f".SH SEE ALSO\n{esc(SEE_ALSO)}\n")
    with open(a.output, "w") as f:
        f.write("".join(page))


if __name__ == "__main__":
    main()
