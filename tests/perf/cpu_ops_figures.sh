#!/bin/sh
# The op-catalogue figures of docs/results/cpu.md: one markdown table from a
# list of mbench runs (cold cache, stdrel, a few seconds each).
#   tests/perf/cpu_ops_figures.sh [path/to/mbench]
set -eu
MBENCH=${1:-build/bin/mbench}
T="--timeout 4"
first=1
run() {
  out=$("$MBENCH" run "$@" $T --format md)
  if [ $first = 1 ]; then echo "$out"; first=0; else echo "$out" | tail -n +3; fi
}
# GEMM 2048^3: bf16, int8 (VNNI), fp8 (emulated) variants
run --op gemm --shape 2048x2048x2048 --dtype bf16
run --op gemm --shape 2048x2048x2048 --dtype f32
run --op gemm_int8 --shape 2048x2048x2048
run --op gemm_int8 --shape 2048x2048x2048 --out-dtype bf16 --scale-a row --scale-b col
run --op gemm_fp8 --shape 2048x2048x2048
run --op gemm_simple --shape 2048x2048x2048
run --op gemm_fp8_b128 --shape 2048x2048x2048
run --op gemm_fp8_rowwise --shape 2048x2048x2048
run --op gemm_int4 --shape 2048x2048x2048
# memory-bound: copy is the bandwidth roof the others are read against
run --op copy --shape 4096x4096 --dtype f32
run --op copy --shape 4096x4096 --dtype bf16
run --op add --shape 4096x4096 --dtype f32
run --op add --shape 4096x4096 --dtype bf16
run --op add --shape 4096x4096 --dtype f8e4m3
run --op quantization --shape 4096x4096
run --op transpose_quantization --shape 4096x4096
run --op quantize --shape 4096x4096 --dtype bf16 --out-dtype f8e4m3 --granularity block:128x128
run --op quantize --shape 4096x4096 --dtype bf16 --out-dtype i8 --granularity row
run --op dequantize --shape 4096x4096 --dtype f8e4m3 --out-dtype bf16
run --op activation --shape 4096x4096 --dtype bf16 --act gelu_tanh
run --op silu_mul --shape 4096x4096 --dtype bf16
run --op layernorm --shape 4096x4096 --dtype bf16
run --op rmsnorm --shape 4096x4096 --dtype bf16
run --op softmax --shape 4096x4096 --dtype f32
run --op attention --shape 1x8x1024x1024x64 --dtype bf16
run --op attention --shape 1x8x1024x1024x64 --dtype bf16 --causal
