#!/bin/sh
# The GPU acceptance run in one command (docs/gpu.md, "GPU acceptance run").
# On a machine with an NVIDIA (or AMD) GPU: build for that GPU alone, run
# the device tests and the conformance suite, the benchmarks of
# bench/configs/gpu_acceptance.yml (plus lines for flags mbench may have),
# PyTorch beside them (bench/torch_compare.py), and write one report
# (tests/gpu/acceptance_report.py) to docs/results/<device>-<date>.md and,
# when $OUT is set, to $OUT with the raw JSON and the logs. The table is
# printed last. Failures are reported and the run goes on; the exit status
# is non-zero only when the build fails (1) or there is no GPU or a bad
# option (2).
#
#   tests/gpu/acceptance.sh [--build-dir DIR] [--budget SECONDS] [--no-build]
#   tests/gpu/acceptance.sh --emulated --build-dir build   # CI self-check
#
# --emulated (or MB_ACCEPT_EMULATED=1) builds nothing: it runs the same
# steps on the test-only gpuemu backend of an existing build, tiny shapes,
# a temporary directory for everything, and then checks its own report, so
# the script cannot rot where no GPU is (ctest: gpu_acceptance_emulated).
#
# The whole run keeps within --budget (default 570 s: the lent GPU
# machines allow 600 s a command). The benchmarks come in priority order;
# those still waiting when their share of the budget is spent are stopped
# (SIGINT: mbench writes every finished result) and listed as not run.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 2
py=${PYTHON:-python3}
emulated=${MB_ACCEPT_EMULATED:-0}
build=
budget=570
keep=0
nobuild=0

usage() {
  sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --emulated) emulated=1 ;;
    --build-dir) [ $# -ge 2 ] || usage; build=$2; shift ;;
    --budget) [ $# -ge 2 ] || usage; budget=$2; shift ;;
    --keep) keep=1 ;;   # --emulated: keep the temporary directory
    --no-build) nobuild=1 ;;  # use --build-dir as it is (a build made by hand)
    -h|--help) usage ;;
    *) echo "acceptance: unknown option $1" >&2; usage ;;
  esac
  shift
done
case $budget in ''|*[!0-9]*) echo "acceptance: --budget $budget: whole seconds" >&2; exit 2 ;; esac
[ "$emulated" = 1 ] || emulated=0

t0=$(date +%s)
now() { date +%s; }
left() { echo $((t0 + budget - $(now))); }

if [ "$emulated" = 1 ]; then
  [ -n "$build" ] || { echo "acceptance: --emulated needs --build-dir (an existing build)" >&2; exit 2; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/mb-acceptance.XXXXXX") || exit 2
else
  build=${build:-build-gpu}
  work=$build/acceptance
fi
case $build in /*) ;; *) build=$root/$build ;; esac
case $work in /*) ;; *) work=$root/$work ;; esac
fresh=0
[ -d "$build" ] || fresh=1   # made here: removed again if there is no GPU
mkdir -p "$work" || exit 2
rm -f "$work"/*.json "$work"/*.jsonl "$work"/*.txt "$work"/*.log "$work"/*.md
log=$work/acceptance.log
: > "$log"

say() { echo "acceptance: $*" >&2; echo "acceptance: $*" >> "$log"; }
fact() { printf '%s: %s\n' "$1" "$2" >> "$work/facts.txt"; }
# The commands as a reader would type them, from the repository root: a
# word with characters the shell reads is single-quoted.
cmd() {
  line=
  for w in "$@"; do
    case $w in *[!A-Za-z0-9_./:=,+@%-]*|'') w="'$w'" ;; esac
    line="$line${line:+ }$w"
  done
  printf '%s\n' "$line" | sed "s#$root/##g" >> "$work/commands.txt"
}
# Runs a command with its output in the log; its status is returned.
run() { echo "+ $*" >> "$log"; "$@" >> "$log" 2>&1; }

date=$(date -u +%Y-%m-%d)
fact started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
fact date "$date"
fact budget_s "$budget"
fact mode "$([ "$emulated" = 1 ] && echo emulated || echo gpu)"
fact python "$($py --version 2>&1)"
fact cmake "$(cmake --version 2>/dev/null | head -n 1)"

# 1. The carried dependencies (tests/gpu/carry_deps.sh), where they came
#    (the emulated mode builds nothing and runs what its build linked).
if [ "$emulated" = 0 ] && [ -f .deps/env.sh ]; then
  # shellcheck disable=SC1091
  if . ./.deps/env.sh; then say "using the carried dependencies in .deps/"
  else say "warning: .deps/env.sh failed; building against the system's libraries"; fi
fi
for d in /usr/local/cuda/bin /opt/rocm/bin; do
  [ -d "$d" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH=$PATH:$d ;; esac
done
export PATH

# 2. Which GPU, and its architecture alone (a build for one target takes a
#    minute, for all of them many).
backend='' arch='' gpu_name=''
if [ "$emulated" = 1 ]; then
  backend=gpuemu
  gpu_name="emulated GPU (gpuemu)"
  export MB_BACKEND_PATH="$build/tests/fixtures/gpuemu"
elif command -v nvidia-smi >/dev/null 2>&1 &&
     q=$(nvidia-smi --query-gpu=compute_cap,name,driver_version --format=csv,noheader 2>/dev/null | head -n 1) &&
     [ -n "$q" ]; then
  backend=cuda
  cc=$(echo "$q" | cut -d, -f1 | tr -d ' ')
  gpu_name=$(echo "$q" | cut -d, -f2 | sed 's/^ *//; s/ *$//')
  fact driver "$(echo "$q" | cut -d, -f3 | tr -d ' ')"
  fact compute_cap "$cc"
  case $cc in
    9.0) arch=90a ;;  # Hopper's arch-specific features, as cuBLASLt's kernels
    [0-9]*.[0-9]*) arch=$(echo "$cc" | tr -d .) ;;
    *) say "nvidia-smi gives no compute capability ($cc): building the default architectures" ;;
  esac
  fact nvcc "$(nvcc --version 2>/dev/null | tail -n 1)"
elif arch=$( (rocm_agent_enumerator 2>/dev/null || rocminfo 2>/dev/null | grep -o 'gfx[0-9a-f]*') |
             grep -v '^gfx000$' | head -n 1) && [ -n "$arch" ]; then
  backend=hip
  gpu_name=$(rocminfo 2>/dev/null | awk '/^ *Name: *gfx/ {g = 1}
    g && /Marketing Name:/ {sub(/.*Marketing Name: */, ""); print; exit}')
  gpu_name=${gpu_name:-AMD $arch}
  fact driver "$(cat /sys/module/amdgpu/version 2>/dev/null || cat /opt/rocm/.info/version 2>/dev/null)"
  fact hipcc "$(hipcc --version 2>/dev/null | grep -i 'hip version' | head -n 1)"
else
  say "no GPU found (neither nvidia-smi nor rocminfo names one); --emulated runs the CI self-check"
  [ "$fresh" = 0 ] || rm -rf "$build"
  exit 2
fi
fact backend "$backend"
fact gpu_name "$gpu_name"
fact arch "${arch:-default}"
if [ "$emulated" = 1 ]; then slug=gpuemu; else slug=$($py tests/gpu/acceptance_report.py --slug "$gpu_name"); fi
report_name=$slug-$date.md
say "$gpu_name ($backend${arch:+, $arch}); work directory $work"

# 3. The build, for that architecture only, Release, every core.
mbench=$build/bin/mbench
if [ "$emulated" = 1 ] || [ "$nobuild" = 1 ]; then
  if [ ! -x "$mbench" ] || [ ! -d "${MB_BACKEND_PATH:-$build}" ]; then
    say "no $mbench${MB_BACKEND_PATH:+ or $MB_BACKEND_PATH}: build first"
    exit 2
  fi
  fact build "not built here (--no-build or --emulated): $build as it was"
else
  ts=$(now)
  gen=
  if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then gen="-G Ninja"; fi
  onednn=
  found=0
  for inc in /usr/include /usr/local/include $(echo "${CMAKE_PREFIX_PATH:-}" | tr ':' ' '); do
    [ -f "$inc/dnnl.h" ] || [ -f "$inc/include/dnnl.h" ] && found=1
  done
  [ "$found" = 1 ] || onednn=-DMB_WITH_ONEDNN=OFF
  if [ "$backend" = cuda ]; then
    gpu_flags="-DMB_WITH_CUDA=ON -DMB_WITH_HIP=OFF${arch:+ -DMB_CUDA_ARCHITECTURES=$arch}"
  else
    gpu_flags="-DMB_WITH_HIP=ON -DMB_WITH_CUDA=OFF -DMB_HIP_ARCHITECTURES=$arch"
  fi
  jobs=$(nproc 2>/dev/null || echo 4)
  say "building into $build ($gpu_flags${onednn:+ $onednn})"
  # shellcheck disable=SC2086  # the flags are words
  cmd cmake -S . -B "$build" $gen -DCMAKE_BUILD_TYPE=Release -DMB_BUILD_EXAMPLES=OFF $gpu_flags $onednn
  cmd cmake --build "$build" -j"$jobs"
  # shellcheck disable=SC2086
  if ! run cmake -S . -B "$build" $gen -DCMAKE_BUILD_TYPE=Release \
         -DMB_BUILD_EXAMPLES=OFF $gpu_flags $onednn ||
     ! run cmake --build "$build" -j"$jobs" || [ ! -x "$mbench" ]; then
    tail -n 40 "$log" >&2
    say "the build FAILED (above: the end of its log, $log)"
    if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then cp "$log" "$OUT/acceptance.log"; fi
    exit 1
  fi
  fact build_s $(($(now) - ts))
  fact build ok
fi
run "$mbench" list backends
"$mbench" list devices > "$work/devices.txt" 2>&1
"$mbench" list backends 2>&1 | grep -q "^$backend  *ready" ||
  fact note "mbench list backends does not show $backend ready: its results say why"

# 4. The device tests and the conformance suite, each test's outcome kept.
ts=$(now)
if [ "$emulated" = 1 ]; then
  # Inside ctest itself (CI): a ctest of its own in a scratch directory,
  # so this one does not write over the outer run's Testing/ logs.
  regex='^(conformance_gpuemu|test_gpu_emu)$'
  mkdir -p "$work/ctest"
  printf 'subdirs("%s")\n' "$build" > "$work/ctest/CTestTestfile.cmake"
  ctest_dir=$work/ctest
else
  regex="$backend|conformance"
  ctest_dir=$build
fi
echo "(cd ${ctest_dir#"$root"/} && ctest -R '$regex' --output-on-failure --timeout 180)" \
  >> "$work/commands.txt"
say "ctest -R '$regex'"
limit=$(($(left) - 300))
[ "$limit" -ge 60 ] || limit=60
(cd "$ctest_dir" && timeout -k 10 "$limit" ctest -R "$regex" --output-on-failure --timeout 180) \
  > "$work/ctest.log" 2>&1
rc=$?
[ $rc -eq 124 ] && fact note "ctest stopped after $limit s (time budget)"
fact ctest "exit $rc"
fact ctest_s $(($(now) - ts))

# 5. The benchmarks: one config file, then the lines for flags this mbench
#    may or may not have yet. Every benchmark in its own process
#    (--isolate) on a GPU: a crash or a sticky CUDA error costs one result,
#    not the rest.
ts=$(now)
config=bench/configs/gpu_acceptance.yml
if [ "$emulated" = 1 ]; then
  # Tiny shapes for the emulator; a shape added to the config without a
  # tiny twin here would run at full size for hours, so it fails the check.
  big='"8192x8192x8192"' m16='"16x8192x8192"' eltw='"16384x16384"' tblk='"512x2048x2048"'
  sed -e "s/$big/\"128x256x128\"/g; s/$m16/\"16x256x128\"/g" \
      -e "s/$eltw/\"64x256\"/g; s/$tblk/\"2x128x128\"/g" "$config" > "$work/gpu_acceptance.yml"
  config=$work/gpu_acceptance.yml
  gbig=128x256x128 gm16=16x256x128 elt=64x256 coll=4096
  timing="--samples 3 --warmup 0"
  # Each isolated child loads every backend (the CPU one measures its peak
  # at start-up), seconds a benchmark here: only the probe below isolates.
  isolate=
else
  gbig=8192x8192x8192 gm16=16x8192x8192 elt=16384x16384 coll=67108864
  timing="--timeout 3 --min-samples 20 --min-time 0.25 --warmup 0.05"
  isolate="--isolate --isolate-timeout 120"
fi
fact timing "$timing"
"$mbench" run --config "$config" --backend "$backend" --dry-run > "$work/plan.txt" 2>&1
# What torch and the report need after the benchmarks; the rest is theirs.
if $py -c 'import torch' >/dev/null 2>&1; then reserve=100; else reserve=20; fi
results=
# bench NAME ARGS...: one mbench run under what is left of the budget, or
# under $share percent of it when share is set (the first H100 run spent
# the whole budget on the GEMMs and models, and no memory-bound benchmark
# ran).
share=
bench() {
  name=$1; shift
  out=$work/mbench-$name.json
  rem=$(($(left) - reserve))
  [ -z "$share" ] || rem=$((rem * share / 100))
  if [ "$rem" -lt 20 ]; then
    fact not_run "mbench run $* (time budget spent)"
    return 0
  fi
  # shellcheck disable=SC2086  # $timing, $isolate: several words
  cmd "$mbench" run "$@" --backend "$backend" $timing $isolate -o "$out"
  say "mbench run $* ($rem s left)"
  # shellcheck disable=SC2086
  timeout -s INT -k 30 "$rem" "$mbench" run "$@" --backend "$backend" $timing \
    $isolate -o "$out" >> "$log" 2>&1
  rc=$?
  case $rc in
    0) ;;
    1) say "$name: some benchmark failed or computed a wrong result (the report says which)" ;;
    124) say "$name: stopped at the time budget"
         fact note "mbench run $name: stopped at the time budget; finished results kept" ;;
    *) say "$name: mbench exited $rc"; fact note "mbench run $name: exit $rc" ;;
  esac
  if [ -f "$out" ]; then results="$results $out"
  elif [ -f "${out}l" ]; then results="$results ${out}l"   # the stream a killed run leaves
  fi
}
# The GEMMs and models first, then the memory-bound ops (their 512 MiB
# operands are filled on the host, a few seconds each), then the extra
# lines: what the budget cuts is the end of each share and of that list.
# The shares keep each group some time: in the first three H100 runs
# (budgets of 400-555 s) the GEMMs and extras spent it all and no
# memory-bound line ever ran. The two filters together must cover the file
# (the emulated self-check counts).
share=40
bench compute --config "$config" --filter '^(gemm_|linear/|transformer_block/)'
share=50
bench memory --config "$config" --filter '^(copy|eltwise|quantize)/'
share=
help=$("$mbench" run --help 2>&1)
case $help in *--fast-accum*)
  bench fast-accum-tensor --op gemm --shape $gbig --dtype f8e4m3 --out-dtype bf16 \
    --scale-a tensor --scale-b tensor --fast-accum
  bench fast-accum-rowcol --op gemm --shape $gbig --dtype f8e4m3 --out-dtype bf16 \
    --scale-a row --scale-b col --fast-accum ;;
*) fact note "mbench run has no --fast-accum yet: those lines left out" ;;
esac
case $help in *--flush*)
  bench flush-read-copy --op copy --shape $elt --dtype bf16 --cache cold --flush read
  bench flush-read-gemm --op gemm --shape $gm16 --dtype bf16 --cache cold --flush read ;;
*) fact note "mbench run has no --flush yet: the read-flush lines left out" ;;
esac
case $help in *--reduce-op*)
  # The collectives over NCCL on one GPU (a single process: one rank, the
  # unique id made here; "NCCL not loaded: ..." where it is absent), and
  # the transfers: pinned h2d and d2h against the PCIe link's figure, d2d
  # to a second GPU (skipped with one, saying so).
  bench nccl-all-reduce --op all_reduce --shape $coll --dtype bf16 --cache hot
  bench nccl-sendrecv --op sendrecv --shape $coll --dtype f32 --cache hot
  bench h2d-pinned --op h2d --shape $elt --dtype bf16 --pinned --cache hot
  bench d2h-pinned --op d2h --shape $elt --dtype bf16 --pinned --cache hot
  bench d2d-peer --op d2d --shape $elt --dtype bf16 --peer --cache hot ;;
*) fact note "mbench run has no --reduce-op yet: the collective and transfer lines left out" ;;
esac
if [ "$emulated" = 1 ]; then
  # A variant the emulator declines (no tf32 in the native GEMM): the
  # self-check below demands it in the report's declined list.
  bench declined --op gemm --shape $gbig --dtype f32 --tf32 --isolate
fi
fact bench_s $(($(now) - ts))
[ -n "$results" ] || say "no benchmark results at all"

# 6. PyTorch beside them, where torch imports and sees the GPU.
ts=$(now)
rem=$(($(left) - 15))
[ "$rem" -ge 10 ] || rem=10
tmax=0.5
[ "$emulated" = 1 ] && tmax=0.05
# shellcheck disable=SC2086
cmd "$py" bench/torch_compare.py $results -o "$work/torch.json" --max-time $tmax --budget $((rem - 10))
say "torch beside them ($rem s left)"
# shellcheck disable=SC2086
[ -z "$results" ] ||
  timeout -k 5 "$rem" "$py" bench/torch_compare.py $results -o "$work/torch.json" \
    --max-time $tmax --budget $((rem - 10)) >> "$log" 2>&1 ||
  say "torch_compare exited $? (the report says what it has)"
fact torch_s $(($(now) - ts))
fact total_s $(($(now) - t0))

# 7. The report; the table printed last.
# shellcheck disable=SC2086  # $results: one word a file
[ "$emulated" = 1 ] || [ -z "$results" ] || "$mbench" merge $results -o "$work/mbench.json" >> "$log" 2>&1
# shellcheck disable=SC2086
"$py" tests/gpu/acceptance_report.py --results $results --torch "$work/torch.json" \
  --ctest "$work/ctest.log" --plan "$work/plan.txt" --facts "$work/facts.txt" \
  --commands "$work/commands.txt" --devices "$work/devices.txt" --backend "$backend" \
  --repo "$root" -o "$work/$report_name" > "$work/table.txt" 2>> "$log"
report_rc=$?

if [ "$emulated" = 0 ]; then
  [ $report_rc -eq 0 ] && cp "$work/$report_name" "docs/results/$report_name" &&
    say "report: docs/results/$report_name"
  if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
    for f in "$work/$report_name" "$work/mbench.json" "$work/torch.json" \
             "$work/ctest.log" "$log"; do
      [ -f "$f" ] && cp "$f" "$OUT/"
    done
  fi
  [ $report_rc -eq 0 ] || say "the report generator FAILED (see $log)"
  cat "$work/table.txt"
  exit 0
fi

# --emulated: the run checks its own output, so that CI fails when any
# step of it breaks.
fail=0
bad() { echo "acceptance: self-check FAILED: $*" >&2; fail=1; }
report=$work/$report_name
[ $report_rc -eq 0 ] || bad "acceptance_report.py exited $report_rc"
[ -f "$report" ] || bad "no report at $report"
[ ! -e "docs/results/$report_name" ] || bad "docs/results/$report_name exists: the emulated mode must not write there"
! grep -q Traceback "$log" "$work/table.txt" || bad "a Python traceback in the log"
grep -nE '"[0-9x]*[0-9]{4,}[0-9x]*"' "$config" >&2 &&
  bad "the emulated config keeps a full-size shape: give it a tiny twin in this script"
count() {  # results in the given files (documents or streams)
  $py -c 'import json, sys
n = 0
for p in sys.argv[1:]:
    t = open(p).read()
    try:
        n += len(json.loads(t)["results"])
    except ValueError:
        n += sum(1 for l in t.splitlines() if l.startswith("{\"id\""))
print(n)' "$@" 2>> "$log"
}
# shellcheck disable=SC2086
expected=$(count $results)
from_config=$(count "$work"/mbench-compute.json* "$work"/mbench-memory.json*)
planned=$(grep -cE '^[0-9]+ ' "$work/plan.txt")
[ "$from_config" = "$planned" ] ||
  bad "$from_config results from the config for $planned planned: a benchmark did not run, or the filters miss one"
rows=$(awk '/^## Benchmarks/ {t = 1; next} /^## / {t = 0} t && /^\|/ {n++} END {print n - 2}' "$report")
[ "$rows" = "$expected" ] || bad "the table has $rows rows for $expected results"
table_rows=$(grep -c '^|' "$work/table.txt")
[ "$table_rows" = $((expected + 2)) ] || bad "the printed table has $table_rows lines, not $((expected + 2))"
awk '/^## Declined/ {t = 1; next} /^## / {t = 0} t' "$report" | grep -q 'tf32.*skipped: .*tf32' ||
  bad "the declined tf32 variant is not in the report's declined list"
if ! $py -c 'import torch' >/dev/null 2>&1; then
  grep -q '^- torch: not available: ' "$report" || bad "the report does not say torch is not available"
fi
grep -q '^| conformance_gpuemu | Passed |' "$report" || bad "the ctest outcome of conformance_gpuemu is not in the report"
grep -q '^- timer: resolution ' "$report" || bad "no timer figures in the report"
grep -q '^- flush check: ' "$report" || bad "no flush check in the report"
if [ $fail = 0 ]; then
  cat "$work/table.txt"
  echo "acceptance: self-check passed: $expected results, each a row; the declined variant listed" >&2
  [ "$keep" = 1 ] || rm -rf "$work"
  exit 0
fi
echo "acceptance: the work directory is kept: $work" >&2
exit 1
