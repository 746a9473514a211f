#!/bin/sh
# The figures of docs/results/cpu.md, "Models and recipes": torchao's linear
# model (2048x4096x1024, bf16) under every recipe, inference and training, on
# the CPU backend, default (cold) cache policy: every sample starts with
# the caches flushed.
# Usage: bench/recipes.sh BUILD_DIR OUT_DIR
#   $RECIPES_SHAPE (e.g. "128, 256, 128"), when set, replaces the configs'
#   shape (copies of them go to OUT_DIR); $MBENCH_ARGS, when set, is added to
#   every mbench command line (e.g. "--timeout 0.2"). Both are for a quick
#   look (bench/results.sh --quick); the published tables use neither.
set -eu
build=$(cd "${1:?build dir}" && pwd) # MB_BACKEND_PATH takes absolute paths
out=${2:?output dir}
here=$(dirname "$0")
mkdir -p "$out"
export MB_BACKEND_PATH="$build/lib/microbench"
for f in linear_recipes linear_training; do
  config=$here/configs/$f.yml
  if [ -n "${RECIPES_SHAPE:-}" ]; then
    sed "s/\[\[2048, 4096, 1024\]\]/[[$RECIPES_SHAPE]]/" "$config" \
      >"$out/$f.yml"
    config=$out/$f.yml
  fi
  # shellcheck disable=SC2086 # MBENCH_ARGS is a list of options
  "$build/bin/mbench" run --config "$config" --backend cpu ${MBENCH_ARGS:-} \
    -o "$out/$f.json" | tee "$out/$f.txt"
done
