#!/bin/sh
# The figures of docs/results/cpu.md, "Models and recipes": torchao's linear
# model (2048x4096x1024, bf16) under every recipe, inference and training, on
# the CPU backend, default (cold) cache policy: every sample starts with
# the caches flushed.
# Usage: bench/recipes.sh BUILD_DIR OUT_DIR
set -eu
build=${1:?build dir}
out=${2:?output dir}
here=$(dirname "$0")
mkdir -p "$out"
export MB_BACKEND_PATH="$build/backends/cpu"
for f in linear_recipes linear_training; do
  "$build/bin/mbench" run --config "$here/configs/$f.yml" --backend cpu \
    -o "$out/$f.json" | tee "$out/$f.txt"
done
