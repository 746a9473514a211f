#!/bin/sh
# Every table of docs/results/{cpu,harness,python}.md, from the programs
# that measure them (issue 20 item 14). Each table is written as its own
# markdown fragment OUT_DIR/<page>.<table>.md, and OUT_DIR/meta.md says when,
# where, at which commit and with which commands; bench/splice.py OUT_DIR
# then puts the fragments into the pages between their markers.
#
# The machine should be otherwise idle: on a shared 2-core VM the figures
# move with any other load (docs/results/harness.md, "Load").
set -eu

usage() {
  cat >&2 <<'EOF'
usage: bench/results.sh BUILD_DIR OUT_DIR [--quick]

Runs every program behind docs/results/cpu.md, harness.md and python.md
from BUILD_DIR (a Release build with the tests and bench/ programs:
mbench, cpu_vs_onednn, verify_cost, harness_*; harness_gbench needs Google
Benchmark) and writes OUT_DIR/<page>.<table>.md and OUT_DIR/meta.md
(raw outputs and result documents under OUT_DIR/raw). Then:

    python3 bench/splice.py OUT_DIR

Expected duration on the reference 2-core VM: about 27 minutes
(suite 1 min, portable C GEMMs 0.5, mbench vs oneDNN 1, verification cost
1.5, op catalogue 2.5, recipes 8, harness programs 1, Google Benchmark
3 x 2 = 6, cache policies 5, Python 0.5). Run it on an idle machine
with about 6 GiB of free memory (the check of a 16384^3 f32 gemm).

--quick  every program at tiny sizes and few samples (about 3 minutes), to
         check the scripts; its figures are never to be committed
         (bench/splice.py refuses to put them into docs/results).

Environment: MB_PYTHONS, the Python interpreters for python.md (default
python3; e.g. "/usr/bin/python3 $HOME/.pyenv/shims/python3"). A program
whose result fails its check still gets its table (check column FAIL); the
script then exits 1 naming it.
EOF
  exit 2
}

[ $# -ge 2 ] || usage
build=$1
out=$2
quick=0
if [ $# -ge 3 ]; then
  [ "$3" = --quick ] || usage
  quick=1
fi
[ -x "$build/bin/mbench" ] || {
  echo "results.sh: $build/bin/mbench not found; build first (README.md)" >&2
  exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "$build" && pwd)
bin=$build/bin
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
raw=$out/raw
render() { python3 "$here/render_tables.py" "$@"; }
export MB_BACKEND_PATH="$build/lib/microbench"
commands=$raw/commands.txt
: >"$commands"
rm -f "$raw"/commands.*.txt
# A previous run's fragments must not outlive it: a table this run cannot
# make is then missing, and bench/splice.py says so.
rm -f "$out"/*.md
failed=""
start=$(date +%s)
if [ $quick = 1 ]; then
  echo "results.sh: quick run (about 3 minutes); figures not for docs" >&2
else
  echo "results.sh: full run, expected to take about 25 minutes" >&2
fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# step NAME CMD...: runs CMD with its stdout in raw/NAME.txt, logs the
# command (for meta.md and the page's header, $page) and how long it took;
# a failure is recorded, not fatal, so one failed check does not throw away
# a long run.
step() {
  name=$1
  shift
  echo "results.sh: $name: $*" >&2
  t0=$(date +%s)
  if "$@" >"$raw/$name.txt"; then rc=0; else rc=$?; fi
  secs=$(($(date +%s) - t0))
  log_command "$@" "# $secs s$([ "$rc" = 0 ] || echo ", exit $rc")"
  if [ "$rc" != 0 ]; then failed="$failed $name"; fi
}

# log_command WORD...: the words as one shell line (quoted where they hold
# blanks), paths shortened to BUILD, OUT and the repository's relative
# ones, into the run's list and the current page's.
log_command() {
  line=""
  for w in "$@"; do
    case $w in
      "# "*) ;;
      *[[:space:]]* | "") w="'$w'" ;;
    esac
    line="$line${line:+ }$w"
  done
  echo "$line" | sed "s|$build|BUILD|g; s|$out|OUT|g; s|$root/||g" |
    tee -a "$raw/commands.$page.txt" >>"$commands"
}

# frag NAME CMD...: the fragment OUT_DIR/NAME.md from CMD's stdout; none
# (and NAME among the failures) when CMD fails, so bench/splice.py stops
# at the missing fragment rather than splicing a stale one.
frag() {
  name=$1
  shift
  rm -f "$out/$name.md"
  if "$@" >"$out/$name.md.tmp"; then
    mv "$out/$name.md.tmp" "$out/$name.md"
  else
    rm -f "$out/$name.md.tmp"
    failed="$failed $name"
  fi
}

if [ $quick = 1 ]; then
  suite_args="--timeout 0.2"
  gemm=256x256x256
  portable_args="--timeout 0.2"
  vs_args="256 256 256 2 3"
  verify_args="--reps 1 256 1024"
  export FIG_GEMM=256x256x256 FIG_ELT=512x512 FIG_ATTN=1x2x128x128x64
  export FIG_ARGS="--timeout 0.1"
  recipes_env="RECIPES_SHAPE=128,256,128"
  recipes_args="--timeout 0.1"
  timer_args=10000
  truth_args=0.2
  spin_args=0.02
  gbench_runs=1
  cache_rounds=1
  cache_args="--timeout 0.05 --min-time 0.01 --warmup 0"
else
  suite_args=""
  gemm=2048x2048x2048
  portable_args="--timeout 5"
  vs_args="2048 2048 2048 5 6"
  verify_args=""
  recipes_env="RECIPES_SHAPE="
  # Each part of a model is measured as the whole is (issue 20 item 11):
  # 4 s per measurement keeps the 15 layers to about 8 minutes.
  recipes_args="--timeout 4"
  timer_args=""
  truth_args=""
  spin_args=""
  gbench_runs=3
  cache_rounds=3
  cache_args=""
fi

# Google Benchmark runs ~2 minutes whatever the sizes; in a quick run, where
# figures do not matter, it runs beside the others to save the time.
gbench_pid=""
if [ $quick = 1 ] && [ -x "$bin/harness_gbench" ]; then
  "$bin/harness_gbench" >"$raw/harness_gbench_1.txt" 2>"$raw/gbench.err" &
  gbench_pid=$!
  page=harness log_command "$bin/harness_gbench" "# in the background"
fi

# ---- cpu.md -----------------------------------------------------------------
page=cpu
# shellcheck disable=SC2086 # *_args are lists of arguments
step suite "$bin/mbench" suite $suite_args -o "$raw/suite.json"
frag cpu.peak render peak "$raw/suite.json"
frag cpu.suite render ops "$raw/suite.json" --no-variant --caption \
  --footer "Wall time of the whole suite: $secs s."

for dt in f32 bf16; do
  # shellcheck disable=SC2086
  step "portable_$dt" "$bin/mbench" run --op gemm --shape $gemm --dtype $dt \
    --impl c --cache hot $portable_args -o "$raw/portable_$dt.json"
done
frag cpu.portable render ops "$raw/portable_f32.json" \
  "$raw/portable_bf16.json" --no-variant

# shellcheck disable=SC2086
step cpu_vs_onednn "$bin/cpu_vs_onednn" $vs_args
frag cpu.vs_onednn render extract "$raw/cpu_vs_onednn.txt" --table 1

# shellcheck disable=SC2086
step verify_cost "$bin/verify_cost" $verify_args
frag cpu.verify_cost render extract "$raw/verify_cost.txt" --table 1

rm -rf "$raw/catalogue"
step catalogue sh "$root/tests/perf/cpu_ops_figures.sh" "$bin/mbench" \
  "$raw/catalogue"
frag cpu.catalogue render ops "$raw/catalogue"/*.json

rm -rf "$raw/recipes"
# shellcheck disable=SC2086
step recipes env "$recipes_env" MBENCH_ARGS="$recipes_args" \
  sh "$here/recipes.sh" "$build" "$raw/recipes"
frag cpu.recipes_inference render recipes "$raw/recipes/linear_recipes.json"
frag cpu.recipes_training render training "$raw/recipes/linear_training.json"

# ---- harness.md -------------------------------------------------------------
page=harness
# shellcheck disable=SC2086
step harness_timer "$bin/harness_timer" $timer_args
frag harness.timer render extract "$raw/harness_timer.txt" --table 1
frag harness.clocks render extract "$raw/harness_timer.txt" --table 2
frag harness.tsc render extract "$raw/harness_timer.txt" \
  --prefix "Tick counter ("
frag harness.gaps render extract "$raw/harness_timer.txt" --table 3
# shellcheck disable=SC2086
step harness_truth "$bin/harness_truth" $truth_args
frag harness.truth render extract "$raw/harness_truth.txt" --table 1
# shellcheck disable=SC2086
step harness_spin "$bin/harness_spin" $spin_args
frag harness.spin render extract "$raw/harness_spin.txt" --table 1

if [ -x "$bin/harness_gbench" ]; then
  if [ -n "$gbench_pid" ]; then
    echo "results.sh: waiting for harness_gbench" >&2
    wait "$gbench_pid" || failed="$failed harness_gbench"
  else
    r=1
    while [ $r -le $gbench_runs ]; do
      step "harness_gbench_$r" "$bin/harness_gbench"
      r=$((r + 1))
    done
  fi
  frag harness.gbench render extract \
    "$raw/harness_gbench_$gbench_runs.txt" --table 1
  # shellcheck disable=SC2046 # one file per run
  frag harness.gbench_runs render gbench-runs \
    $(r=1; while [ $r -le $gbench_runs ]; do
        echo "$raw/harness_gbench_$r.txt"; r=$((r + 1)); done)
else
  echo "results.sh: $bin/harness_gbench was not built (no Google" \
    "Benchmark): harness.gbench and harness.gbench_runs are missing" >&2
  failed="$failed harness_gbench"
fi

rm -rf "$raw/cache"
step cache_policies env ROUNDS=$cache_rounds MBENCH_ARGS="$cache_args" \
  sh "$here/cache_policies.sh" "$bin/mbench" "$raw/cache"
frag harness.cache cat "$raw/cache_policies.txt"

# ---- python.md --------------------------------------------------------------
page=python
i=0
py_outputs=""
for py in ${MB_PYTHONS:-python3}; do
  i=$((i + 1))
  step "python_$i" env PYTHONPATH="$build/python" "$py" \
    "$here/python_overhead.py"
  # Which interpreter, for the wrapper table's rows.
  echo "interpreter $(command -v "$py" || echo "$py")" >>"$raw/python_$i.txt"
  py_outputs="$py_outputs $raw/python_$i.txt"
done
frag python.overhead render extract "$raw/python_1.txt" --table 1
# shellcheck disable=SC2086 # one file per interpreter
frag python.wrapper render python-wrapper $py_outputs

# ---- meta -------------------------------------------------------------------
end=$(date +%s)
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
lscpu_field() { LC_ALL=C lscpu | sed -n "s/^$1: *//p" | head -1; }
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then
  commit="$commit-dirty"
fi
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
backend=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("; ".join(b["version"] for b in d["meta"]["backends"] if b.get("loaded")))
print(d["meta"]["version"], d["meta"]["git_commit"])' "$raw/suite.json" ||
  printf 'backend unknown\nunknown\n')
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
os=$(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release 2>/dev/null)
hypervisor=$(lscpu_field 'Hypervisor vendor')
gpu="no GPU was used (CPU backend only)"
{
  if [ $quick = 1 ]; then
    echo "- **QUICK RUN** (\`--quick\`: tiny sizes, few samples; to check"
    echo "  the scripts, never to be published)"
  fi
  echo "- **Date:** $(date -u -d "@$start" '+%Y-%m-%d %H:%M') – $(date -u -d "@$end" '+%H:%M') UTC ($(((end - start) / 60)) min $(((end - start) % 60)) s)"
  echo "- **Machine:** $(lscpu_field 'Model name'), $(lscpu_field 'CPU(s)') CPUs" \
    "($(lscpu_field 'Thread(s) per core') thread(s) per core)," \
    "L1d $(lscpu_field 'L1d cache'), L2 $(lscpu_field 'L2 cache')," \
    "L3 $(lscpu_field 'L3 cache'), $mem memory," \
    "hypervisor: ${hypervisor:-none}," \
    "kernel $(uname -r), $os; $gpu"
  echo "- **Software:** libmicrobench $(echo "$backend" | sed -n 2p)" \
    "(as the library reports it), $(echo "$backend" | sed -n 1p);" \
    "$("$cc" --version | head -1), $build_type build"
  echo "- **Commit:** \`$commit\` (\`git rev-parse --short=12 HEAD\`;" \
    "\`-dirty\`: the working tree had uncommitted changes)"
  echo "- **Load average** (1, 5, 15 min): $load_start at the start," \
    "$load_end at the end"
  echo "- **Program:** \`bench/results.sh BUILD OUT$([ $quick = 1 ] && echo ' --quick')\`"
} >"$out/meta.page.tmp"
for page in cpu harness python; do
  {
    cat "$out/meta.page.tmp"
    case $page in
      harness)
        gb=$(dpkg-query -W -f '${Version}' libbenchmark-dev 2>/dev/null ||
          echo "version unknown")
        echo "- **Google Benchmark:** $gb (Debian \`libbenchmark-dev\`)"
        ;;
      python)
        pys=""
        for f in "$raw"/python_*.txt; do
          pys="$pys${pys:+; }$(sed -n 's/^Python //p' "$f")"
          pys="$pys ($(sed -n 's/^interpreter //p' "$f"))"
        done
        echo "- **Python:** $pys"
        ;;
    esac
    echo "- **Commands** for this page's tables, in order, with the wall"
    echo "  time of each (BUILD = the build directory, OUT = the output"
    echo "  directory):"
    echo
    echo '  ```sh'
    touch "$raw/commands.$page.txt"
    sed 's/^/  /' "$raw/commands.$page.txt"
    echo '  ```'
  } >"$out/$page.meta.md"
done
{
  echo "# bench/results.sh run"
  echo
  cat "$out/meta.page.tmp"
  echo "- **Build directory:** \`$build\` (C compiler \`$cc\`)"
  echo
  echo "Commands, in order (BUILD = the build directory, OUT = OUT_DIR),"
  echo "each with its wall time:"
  echo
  echo '```sh'
  cat "$commands"
  echo '```'
  if [ -n "$failed" ]; then
    echo
    echo "**Failed:**$failed (see OUT/raw/)"
  fi
} >"$out/meta.md"
rm -f "$out/meta.page.tmp"

echo "results.sh: wrote $(find "$out" -maxdepth 1 -name "*.md" | wc -l) files to $out in" \
  "$(((end - start) / 60)) min $(((end - start) % 60)) s" >&2
if [ -n "$failed" ]; then
  echo "results.sh: failed:$failed (see $raw)" >&2
  exit 1
fi
