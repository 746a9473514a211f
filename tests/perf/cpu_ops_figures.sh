#!/bin/sh
# The op-catalogue figures of docs/results/cpu.md: one markdown table from a
# list of mbench runs (cold cache, stdrel, a few seconds each).
#   tests/perf/cpu_ops_figures.sh [path/to/mbench] [OUT_DIR]
# With OUT_DIR, each run writes its result document there instead
# (OUT_DIR/NN.json, in the order of the table; stdout gets mbench's console
# table), which bench/results.sh renders with bench/render_tables.py.
# The sizes and timing options can be changed for a quick look (bench/results.sh --quick; the published table
# uses the defaults): $FIG_GEMM (2048x2048x2048), $FIG_ELT (4096x4096),
# $FIG_ATTN (1x8x1024x1024x64), $FIG_ARGS ("--timeout 4").
set -eu
MBENCH=${1:-build/bin/mbench}
OUT=${2:-}
G=${FIG_GEMM:-2048x2048x2048}
E=${FIG_ELT:-4096x4096}
A=${FIG_ATTN:-1x8x1024x1024x64}
T=${FIG_ARGS:---timeout 4}
if [ -n "$OUT" ]; then mkdir -p "$OUT"; fi
first=1
n=0
run() {
  n=$((n + 1))
  if [ -n "$OUT" ]; then
    # The result document; mbench's console table still goes to stdout.
    # shellcheck disable=SC2086 # T is a list of options
    "$MBENCH" run "$@" $T -o "$OUT/$(printf %02d $n).json"
    return
  fi
  # shellcheck disable=SC2086
  out=$("$MBENCH" run "$@" $T --format md)
  if [ $first = 1 ]; then echo "$out"; first=0; else echo "$out" | tail -n +3; fi
}
# GEMM 2048^3: bf16, int8 (VNNI), fp8 (emulated) variants
run --op gemm --shape "$G" --dtype bf16
run --op gemm --shape "$G" --dtype f32
run --op gemm_int8 --shape "$G"
run --op gemm_int8 --shape "$G" --out-dtype bf16 --scale-a row --scale-b col
run --op gemm_fp8 --shape "$G"
run --op gemm_simple --shape "$G"
run --op gemm_fp8_b128 --shape "$G"
run --op gemm_fp8_rowwise --shape "$G"
run --op gemm_int4 --shape "$G"
# memory-bound: copy is the bandwidth roof the others are read against
run --op copy --shape "$E" --dtype f32
run --op copy --shape "$E" --dtype bf16
run --op add --shape "$E" --dtype f32
run --op add --shape "$E" --dtype bf16
run --op add --shape "$E" --dtype f8e4m3
run --op quantization --shape "$E"
run --op transpose_quantization --shape "$E"
run --op quantize --shape "$E" --dtype bf16 --out-dtype f8e4m3 --granularity block:128x128
run --op quantize --shape "$E" --dtype bf16 --out-dtype i8 --granularity row
run --op dequantize --shape "$E" --dtype f8e4m3 --out-dtype bf16
run --op activation --shape "$E" --dtype bf16 --act gelu_tanh
run --op silu_mul --shape "$E" --dtype bf16
run --op layernorm --shape "$E" --dtype bf16
run --op rmsnorm --shape "$E" --dtype bf16
run --op softmax --shape "$E" --dtype f32
run --op attention --shape "$A" --dtype bf16
run --op attention --shape "$A" --dtype bf16 --causal
