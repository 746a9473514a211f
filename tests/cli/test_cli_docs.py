"""Help and docs in step (issue 22 item 7). Each command's --help prints the
option table its parser reads, so comparing the help with docs/cli.md
compares the parser with the docs: every option a command's --help lists is
named in that command's section of docs/cli.md, and every --option a
section names is one its command takes. mbench --help lists every command,
each with a section, and points at the lists of what there is to run; the
environment it lists is what the sources read, and what docs/cli.md's
table lists. mbench(1), written from the help (cli/man/mbench_man.py),
names every command and option and renders without a warning."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from test_cli import MBENCH, mbench

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "cli", "man"))
import mbench_man  # noqa: E402 (the help's blocks, as the man page reads them)
DOCS = os.path.join(ROOT, "docs", "cli.md")
OPTION = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9-]*")


def help_blocks(*args):
    """{heading: lines} of `mbench ARGS --help`, read as the man page's
    writer reads them."""
    p = mbench(*args, "--help")
    assert p.returncode == 0, (args, p.stderr)
    return mbench_man.sections(p.stdout)


def help_options(*args):
    """The long options `mbench ARGS --help` lists."""
    return [m.group(1) for m in (
        re.match(r"  (?:-\w, )? *(--[a-z0-9-]+)", l)
        for l in help_blocks(*args).get("options", [])) if m]


def commands():
    """{command: help} from mbench --help."""
    rows = (re.match(r"  ([a-z][a-z0-9-]*) +(\S.*)", l)
            for l in help_blocks()["commands"])
    return {m.group(1): m.group(2) for m in rows if m}


def doc_sections():
    """{command: its text in docs/cli.md}: each "## " section (with its
    "### " subsections) belongs to the commands its heading names, as
    `mbench CMD ...`; `mbench` alone is the suite."""
    with open(DOCS) as f:
        text = f.read()
    out = {}
    parts = re.split(r"(?m)^## ", text)
    for part in parts[1:]:
        heading = part.split("\n", 1)[0]
        for cmd in re.findall(r"`mbench(?: ([a-z]+))?[^`]*`", heading):
            out.setdefault(cmd or "suite", []).append(part)
    return {cmd: "\n".join(p) for cmd, p in out.items()}, text


class HelpAndDocs(unittest.TestCase):
    def test_every_command_has_help_and_a_section(self):
        cmds = commands()
        sections, _ = doc_sections()
        self.assertEqual(sorted(cmds), sorted(sections))
        for cmd in cmds:
            self.assertIn("--help", help_options(cmd), cmd)

    def test_options_in_help_and_docs_agree(self):
        sections, text = doc_sections()
        # -h/--help, which every command takes, is said once
        self.assertRegex(text.split("\n## ")[0],
                         r"Every command\s+takes `-h`, `--help`")
        cmds = list(commands())
        opts = {cmd: set(help_options(cmd)) for cmd in cmds}
        problems = []
        for cmd in cmds:
            # what the section names: its own command's options, except in
            # `mbench OTHER ...`, which names OTHER's; a section two
            # commands share (list, info) names the options of either
            text = sections[cmd]
            mine = OPTION.findall(re.sub(r"`mbench [^`]*`", "", text))
            cited = re.findall(r"`mbench(?: ([a-z]+))?([^`]*)`", text)
            sharing = {c for c in cmds if sections[c] == text}
            for o in sorted(opts[cmd] - set(mine) - {"--help"}):
                problems.append(f"{cmd}: {o} is in --help, not in "
                                "docs/cli.md")
            for o in sorted(set(mine)):
                if not any(o in opts[c] for c in sharing):
                    problems.append(f"{cmd}: {o} is in docs/cli.md, not "
                                    "in --help")
            for other, rest in cited:
                other = other if other in opts else "suite"
                for o in OPTION.findall(rest):
                    if o not in opts[other]:
                        problems.append(f"{cmd}: `mbench {other} {o}` in "
                                        "docs/cli.md, not in its --help")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_top_level_help(self):
        top = help_blocks()
        text = "\n".join(l for b in top.values() for l in b)
        for word in ("mbench list", "recipes", "models", "COMMAND --help"):
            self.assertIn(word, text)
        self.assertEqual(set(help_options()), {"--help", "--version"})
        self.assertEqual(mbench("--version").returncode, 0)
        # the exit status as docs/cli.md's table gives it
        _, doc = doc_sections()
        codes = [l.split()[0] for l in top["exit status"] if l.strip()]
        self.assertEqual(codes, ["0", "1", "2", "3", "130"])
        for code in codes:
            self.assertRegex(doc, r"\n\| %s[ ,|]" % code)

    def test_every_list_documented(self):
        sections, _ = doc_sections()
        lists = mbench("list", "--names").stdout.split()
        self.assertIn("dtypes", lists)
        for what in lists:
            self.assertIn(f"`list {what}", sections["list"], what)
        for word in ("--names", "completion"):
            self.assertIn(word, sections["list"])

    def test_environment(self):
        # what the sources read: every "MB_*" string in them is the name
        # of an environment variable (getenv's, or the one a backend's
        # library loader takes a path from), but for a status name and
        # main.c's table of them, which --help prints ...
        read = set()
        for top in ("lib", "backends", "cli"):
            for d, _, files in os.walk(os.path.join(ROOT, top)):
                for name in files:
                    path = os.path.join(d, name)
                    if (name.endswith((".c", ".h")) and
                            path != os.path.join(ROOT, "cli", "main.c")):
                        with open(path) as f:
                            read.update(re.findall(r'"(MB_[A-Z0-9_]+)"',
                                                   f.read()))
        read -= {"MB_UNKNOWN"}  # mb_status_name's
        self.assertIn("MB_BACKEND_PATH", read)
        # ... is what mbench --help and docs/cli.md's table list
        listed = {l.split()[0] for l in help_blocks()["environment"]
                  if l.strip()}
        self.assertEqual(listed, read)
        _, doc = doc_sections()
        env = doc.split("\n## Environment\n", 1)[1]
        first_cells = re.findall(r"(?m)^\| ([^|]*)\|", env)
        self.assertEqual(set(re.findall(r"`(MB_[A-Z0-9_]+)",
                                        "".join(first_cells))), read)


class ManPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.page = os.path.join(cls.dir, "mbench.1")
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "cli", "man", "mbench_man.py"),
                        "--mbench", MBENCH, "--module-dir", "/usr/lib/mb",
                        "-o", cls.page], check=True)
        with open(cls.page) as f:
            cls.troff = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_structure(self):
        t = self.troff
        self.assertTrue(t.startswith(".TH MBENCH 1 "))
        heads = re.findall(r"(?m)^\.SH (.*)$", t)
        self.assertEqual(heads, [
            "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS",
            "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"])
        for cmd in commands():
            self.assertIn(f'.SS "mbench {cmd}"', t)
            section = t.split(f'.SS "mbench {cmd}"')[1].split(".SS ")[0]
            for opt in help_options(cmd):
                self.assertIn("\\fB" + opt.replace("-", "\\-") + "\\fR",
                              section, (cmd, opt))
        self.assertIn("MB_BACKEND_PATH", t)
        self.assertIn("/usr/lib/mb/mb_backend_*.so", t)
        # each example is a command mbench takes
        for cmd in re.findall(r"(?m)^mbench( [a-z]+)?", t):
            self.assertIn(cmd.strip() or "suite", commands())

    @unittest.skipUnless(shutil.which("groff"), "no groff")
    def test_renders_without_warnings(self):
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", self.page],
                           capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C.UTF-8"))
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        text = re.sub(".\b", "", p.stdout)  # bold and underline overstruck
        self.assertIn("EXIT STATUS", text)
        self.assertIn("mbench run --op OP --shape", text)


if __name__ == "__main__":
    unittest.main()
