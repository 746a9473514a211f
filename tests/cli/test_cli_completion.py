"""Shell completion (cli/completion/): the bash script sourced into bash
with COMP_WORDS/COMP_CWORD set as bash sets them, its function called, and
COMPREPLY read back; the zsh script the same way with the completion
system's builtins (compadd, _describe, _files) replaced by functions that
print what they are offered. Each completes from the mbench under test:
commands, options, and names from `mbench list LIST --names`."""
import os
import shutil
import subprocess
import tempfile
import unittest

from test_cli import MBENCH, mbench

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BASH_SCRIPT = os.path.join(ROOT, "cli", "completion", "mbench.bash")
ZSH_SCRIPT = os.path.join(ROOT, "cli", "completion", "_mbench")

# Sources the script, then completes the words given as arguments (the
# last is the one under the cursor); a script that does not source, does
# not register _mbench for mbench, or whose function fails, exits non-zero.
BASH_DRIVER = r"""
source "$0" || exit 90
complete -p mbench | grep -q -- '-F _mbench' || exit 91
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
_mbench || exit 92
printf '%s\n' "${COMPREPLY[@]}"
"""

ZSH_DRIVER = r"""
compadd() {
  while [[ $1 == -* && $1 != -- ]]; do shift; done
  [[ $1 == -- ]] && shift
  local w
  for w in "$@"; do [[ $w == ${cur}* ]] && print -r -- $w; done
}
_describe() {
  local e
  for e in "${(@P)4}"; do [[ $e == ${cur}* ]] && print -r -- ${e%%:*}; done
}
_files() { print -r -- "<files>"; }
compset() { : }
source $1 >/dev/null || exit 90
shift
words=("$@")
CURRENT=${#words}
_mbench || exit 92
"""


def commands():
    lines = mbench("--help").stdout.split("commands:\n")[1]
    return [l.split()[0] for l in lines.split("\n\n")[0].splitlines()]


class Bash(unittest.TestCase):
    def complete(self, *words):
        p = subprocess.run(["bash", "--norc", "-c", BASH_DRIVER, BASH_SCRIPT,
                            MBENCH, *words], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual((p.returncode, p.stderr), (0, ""), words)
        return [w for w in p.stdout.split("\n") if w]

    def test_op_names(self):
        got = self.complete("run", "--op", "ge")
        self.assertIn("gemm", got)
        self.assertIn("gemm_fp8_rowwise", got)  # aliases too
        self.assertTrue(all(w.startswith("ge") for w in got), got)
        # --op=ge, as bash splits it at "=" and as one word
        self.assertIn("gemm", self.complete("run", "--op", "=", "ge"))
        self.assertIn("gemm", self.complete("run", "--op=ge"))

    def test_commands_and_options(self):
        self.assertEqual(self.complete(""), commands())
        self.assertEqual(sorted(self.complete("run", "--dt")),
                         ["--dtype", "--dtype-b", "--dtype-q"])
        self.assertIn("--names", self.complete("list", "--"))
        # no command: the suite's options, and --version
        got = self.complete("--")
        self.assertIn("--backend", got)
        self.assertIn("--version", got)
        self.assertNotIn("--op", got)

    def test_values(self):
        self.assertEqual(self.complete("run", "--dtype", "b"), ["bf16"])
        # --dtype DT[,...]: a list of them, the last completed
        self.assertEqual(self.complete("run", "--dtype", "f32,b"),
                         ["f32,bf16"])
        self.assertEqual(self.complete("run", "--cache", ""),
                         ["cold", "hot", "rotate"])
        self.assertEqual(self.complete("run", "-f", "j"), ["json"])
        self.assertEqual(self.complete("run", "--recipe", "int8"),
                         ["int8wo", "int8dq", "int8dq-semi-sparse"])
        self.assertIn("ln_linear_gelu",
                      self.complete("run", "--model", "ln_"))
        self.assertIn("cpu", self.complete("--backend", ""))
        self.assertEqual(self.complete("run", "--shape", ""), [])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.json")
            open(path, "w").close()
            self.assertEqual(self.complete("run", "-o", path[:-3]), [path])
            self.assertEqual(self.complete("compare", path[:-3]), [path])
            self.assertEqual(self.complete("report", path[:-3]), [path])
        self.assertEqual(self.complete("report", "--plot", ""),
                         ["roofline", "heatmap", "shapes", "compare"])

    def test_list(self):
        self.assertEqual(self.complete("list", ""),
                         mbench("list", "--names").stdout.split())
        self.assertEqual(self.complete("list", "presets", "ll"),
                         ["llama", "llama4"])
        self.assertIn("rms_norm",
                      self.complete("list", "ops", "--all", "rms"))
        self.assertEqual(self.complete("list", "recipes", ""), [])


@unittest.skipUnless(shutil.which("zsh"), "no zsh")
class Zsh(unittest.TestCase):
    def complete(self, *words):
        p = subprocess.run(["zsh", "-f", "-c", ZSH_DRIVER, "zsh", ZSH_SCRIPT,
                            MBENCH, *words], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual((p.returncode, p.stderr), (0, ""), words)
        return [w for w in p.stdout.split("\n") if w]

    def test_syntax(self):
        p = subprocess.run(["zsh", "-n", ZSH_SCRIPT], capture_output=True,
                           text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))

    def test_completes(self):
        got = self.complete("run", "--op", "ge")
        self.assertIn("gemm", got)
        self.assertTrue(all(w.startswith("ge") for w in got), got)
        self.assertIn("gemm", self.complete("run", "--op=ge"))
        self.assertEqual(self.complete(""), commands())
        self.assertEqual(sorted(self.complete("run", "--dt")),
                         ["--dtype", "--dtype-b", "--dtype-q"])
        self.assertEqual(self.complete("run", "--cache", "h"), ["hot"])
        self.assertEqual(self.complete("run", "--dtype", "b"), ["bf16"])
        self.assertEqual(self.complete("run", "--dtype", "f32,b"),
                         ["bf16"])  # after the "f32," compset took
        self.assertEqual(self.complete("list", "presets", "ll"),
                         ["llama", "llama4"])
        self.assertEqual(self.complete("run", "-o", "x"), ["<files>"])


if __name__ == "__main__":
    unittest.main()
