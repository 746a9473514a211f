/* The backend conformance suite: a table of cases (ops, aliases, dtypes,
 * scalings, odd shapes) run through the full harness on every implementation
 * the backend has for the op; every run must pass the reference check, and
 * every entry of the backend's kernel table must have RUN and passed in some
 * case, unless k_declines lists it with its reason (then it must decline).
 * A kernel that declines everything therefore fails here instead of passing
 * by never running. Which entry ran is decided from the module's own table
 * (the public ABI, microbench/sys/backend.h): mb_kernel_info has no dtype_b
 * or dtype_acc, and entries of one implementation differ only there. Run
 * once per backend (argument); exits 77 (skipped, visibly) only for a real
 * GPU backend with no device here: cpu and the emulated GPUs always have
 * one, so for them a missing device or module is a failure. */
#include <dlfcn.h>

#include "test_one_rank.h"
#include "test_util.h"

#include <microbench/sys/backend.h>

typedef struct conf_case {
  const char *op; /* op or alias */
  uint32_t ndim;
  /* An attention case's sixth number is its kv_heads (grouped-query
   * attention; 0: H), not a dimension: ndim stays 5. */
  int64_t shape[6];
  const char *dtype, *dtype_b, *out, *dtype_q, *scale_a, *scale_b, *act;
  uint32_t flags;
} conf_case_t;

#define S2(a, b)  \
  2, {            \
    a, b, 0, 0, 0 \
  }
#define S3(a, b, c) \
  3, {              \
    a, b, c, 0, 0   \
  }
#define S5(a, b, c, d, e) \
  5, {                    \
    a, b, c, d, e         \
  }
#define S5KV(a, b, c, d, e, kv) \
  5, {                          \
    a, b, c, d, e, kv           \
  }
#define S1(a)     \
  1, {            \
    a, 0, 0, 0, 0 \
  }
#define N NULL

static const conf_case_t k_cases[] = {
    /* gemm: high precision */
    {"gemm", S3(1, 1, 1), "f32", N, N, N, N, N, N, 0},
    {"gemm", S3(17, 33, 9), "f32", N, N, N, N, N, N, 0},
    {"gemm", S3(129, 257, 65), "bf16", N, N, N, N, N, N, 0},
    {"gemm", S3(64, 128, 96), "bf16", N, "f32", N, N, N, N, 0},
    {"gemm", S3(33, 40, 17), "f16", N, N, N, N, N, N, 0},
    {"gemm", S3(64, 128, 96), "f32", N, N, N, N, N, N, MB_PARAM_TF32},
    /* gemm: the layout flags (a backward pass's X^T.dY and dY.W^T without
     * a copy), each alone and both, on an odd shape and on one crossing
     * the portable kernel's blocks */
    {"gemm", S3(37, 53, 29), "f32", N, N, N, N, N, N, MB_PARAM_TRANS_A},
    {"gemm", S3(37, 53, 29), "f32", N, N, N, N, N, N, MB_PARAM_TRANS_B},
    {"gemm", S3(37, 53, 29), "f32", N, N, N, N, N, N,
     MB_PARAM_TRANS_A | MB_PARAM_TRANS_B},
    {"gemm", S3(37, 53, 29), "bf16", N, N, N, N, N, N, MB_PARAM_TRANS_A},
    {"gemm", S3(37, 53, 29), "bf16", N, N, N, N, N, N, MB_PARAM_TRANS_B},
    {"gemm", S3(37, 53, 29), "bf16", N, N, N, N, N, N,
     MB_PARAM_TRANS_A | MB_PARAM_TRANS_B},
    {"gemm", S3(70, 141, 523), "bf16", N, "f32", N, N, N, N,
     MB_PARAM_TRANS_A | MB_PARAM_TRANS_B},
    {"gemm", S3(33, 40, 17), "f16", N, N, N, N, N, N,
     MB_PARAM_TRANS_A | MB_PARAM_TRANS_B},
    {"gemm", S3(64, 128, 96), "f32", N, N, N, N, N, N,
     MB_PARAM_TF32 | MB_PARAM_TRANS_B},
    /* gemm: fp8, every scaling */
    {"gemm_simple", S3(17, 33, 9), N, N, N, N, N, N, N, 0},
    {"gemm_fp8", S3(64, 128, 96), N, N, N, N, N, N, N, 0},
    {"gemm_fp8", S3(33, 64, 17), "f8e5m2", "f8e4m3", "f32", N, N, N, N, 0},
    {"gemm", S3(32, 64, 48), "f8e4m3", N, "bf16", N, "tensor", "tensor", N, 0},
    {"gemm_accum", S3(48, 64, 32), N, N, N, N, N, N, N, 0},
    /* MXFP8's granularity: 1x32 blocks of A, 32x1 of B */
    {"gemm", S3(64, 128, 96), "f8e4m3", N, "bf16", N, "block:1x32",
     "block:32x1", N, 0},
    {"gemm_multiple_run", S3(64, 64, 64), N, N, N, N, N, N, N, 0},
    {"gemm_fp8_b128", S3(40, 256, 128), N, N, N, N, N, N, N, 0},
    {"fp8_2d_block_matmul", S3(256, 256, 128), N, N, N, N, N, N, N, 0},
    {"fp8_2d_block_matmul", S3(256, 512, 256), N, N, N, N, "256x256", N, N, 0},
    {"gemm_fp8_rowwise", S3(64, 128, 96), N, N, N, N, N, N, N, 0},
    {"gemm_fp8_rowwise", S3(33, 64, 17), "f32", N, "f32", "f8e5m2", N, N, N, 0},
    /* gemm: integers */
    {"gemm_int8", S3(33, 64, 17), N, N, N, N, N, N, N, 0},
    /* aligned as cuBLASLt's int8 and fp8 kernels need */
    {"gemm_int8", S3(64, 128, 32), N, N, N, N, N, N, N, 0},
    {"gemm_int8", S3(32, 128, 48), N, N, "bf16", N, "row", "col", N, 0},
    {"gemm_int8", S3(16, 64, 16), N, N, "f32", N, "tensor", "tensor", N, 0},
    {"gemm_fp8_rowwise", S3(32, 64, 48), N, N, N, "i8", N, N, N, 0},
    {"gemm_fp8_rowwise", S3(32, 64, 48), "f32", N, "f32", "i8", N, N, N, 0},
    /* the scales applied by a pass of their own after an f32 product */
    {"gemm_fp8_rowwise_w_dequantize", S3(33, 64, 17), N, N, N, N, N, N, N, 0},
    {"gemm", S3(40, 96, 24), "f32", N, "f16", "f8e5m2", "tensor", "col", N,
     MB_PARAM_QUANTIZE_INPUTS | MB_PARAM_EXPLICIT_DEQUANT},
    {"gemm", S3(32, 64, 48), "bf16", N, "f32", "i8", "row", "tensor", N,
     MB_PARAM_QUANTIZE_INPUTS | MB_PARAM_EXPLICIT_DEQUANT},
    {"gemm_int4", S3(16, 256, 24), N, N, N, N, N, N, N, 0},
    {"gemm_int4", S3(9, 64, 40), "f32", N, "f32", N, N, "group:32", N, 0},
    /* quantize / dequantize */
    {"quantization", S2(33, 256), N, N, N, N, N, N, N, 0},
    {"transpose_quantization", S2(64, 48), N, N, N, N, N, N, N, 0},
    {"quantize", S2(256, 384), "bf16", N, "f8e4m3", N, "block:128x128", N, N,
     0},
    {"quantize", S2(256, 384), "f32", N, "f8e5m2", N, "block:1x128", N, N, 0},
    {"quantize", S2(96, 64), "bf16", N, "i8", N, "tensor", N, N, 0},
    {"quantize", S2(96, 64), "f32", N, "i8", N, "col", N, N,
     MB_PARAM_TRANSPOSE},
    {"quantize", S2(40, 256), "bf16", N, "i4", N, "group:32", N, N, 0},
    {"quantize", S2(40, 256), "f16", N, "f8e4m3", N, "row", N, N, 0},
    {"dequantize", S2(33, 256), "f8e4m3", N, "bf16", N, "row", N, N, 0},
    {"dequantize", S2(256, 256), "f8e5m2", N, "f32", N, "block:128x128", N, N,
     0},
    {"dequantize", S2(40, 256), "i4", N, "bf16", N, "group:32", N, N, 0},
    {"dequantize", S2(64, 48), "i8", N, "f16", N, "tensor", N, N, 0},
    /* element-wise and friends */
    {"add", S2(1, 1), "f32", N, N, N, N, N, N, 0},
    {"add", S2(3, 1000), "bf16", N, N, N, N, N, N, 0},
    {"add", S2(257, 129), "f16", N, N, N, N, N, N, 0},
    {"add", S2(33, 65), "f8e4m3", N, N, N, N, N, N, 0},
    {"add", S2(33, 65), "f8e5m2", N, N, N, N, N, N, 0},
    {"add", S2(1024, 1024), "f32", N, N, N, N, N, N, 0},
    {"activation", S2(37, 129), "f32", N, N, N, N, N, "relu", 0},
    {"activation", S2(37, 129), "bf16", N, N, N, N, N, "gelu_tanh", 0},
    {"activation", S2(37, 129), "f32", N, N, N, N, N, "gelu_erf", 0},
    {"activation", S2(37, 129), "f16", N, N, N, N, N, "silu", 0},
    {"activation", S2(37, 129), "f32", N, N, N, N, N, "sigmoid", 0},
    {"activation", S2(37, 129), "bf16", N, N, N, N, N, "leakyrelu", 0},
    {"activation", S2(37, 129), "f32", N, N, N, N, N, "relu6", 0},
    {"activation", S2(37, 129), "bf16", N, N, N, N, N, "hardswish", 0},
    {"silu_mul", S2(33, 257), "bf16", N, N, N, N, N, N, 0},
    {"silu_mul", S2(33, 257), "f32", N, N, N, N, N, N, 0},
    {"layernorm", S2(33, 257), "f32", N, N, N, N, N, N, 0},
    {"layernorm", S2(33, 257), "bf16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"rmsnorm", S2(33, 257), "bf16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(33, 257), "f32", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(33, 257), "f32", N, N, N, N, N, N, 0},
    {"softmax", S2(3, 1000), "bf16", N, N, N, N, N, N, 0},
    {"attention", S5(1, 1, 1, 1, 1), "f32", N, N, N, N, N, N, 0},
    {"attention", S5(2, 3, 5, 7, 16), "bf16", N, N, N, N, N, N, 0},
    {"attention", S5(1, 2, 33, 33, 64), "f32", N, N, N, N, N, N,
     MB_PARAM_CAUSAL},
    {"attention", S5(1, 2, 5, 9, 32), "f16", N, N, N, N, N, N, MB_PARAM_CAUSAL},
    /* [B,S,H,D]: rows of a head H D apart; more than one query and key
     * block (CPU 64 x 64, GPU 64 x 32), Sq != Skv */
    {"attention", S5(2, 3, 70, 75, 16), "f32", N, N, N, N, N, N,
     MB_PARAM_BSHD | MB_PARAM_CAUSAL},
    {"attention", S5(2, 3, 67, 70, 24), "bf16", N, N, N, N, N, N,
     MB_PARAM_BSHD},
    {"attention", S5(1, 2, 5, 9, 32), "f16", N, N, N, N, N, N,
     MB_PARAM_BSHD | MB_PARAM_CAUSAL},
    /* grouped-query attention (kv_heads: query head h reads K/V head
     * h / (H / Hkv)), both layouts, with and without the mask, multi-query
     * (Hkv = 1), more than one query and key block; a kernel that maps
     * heads as h % Hkv or ignores the groups reads other keys */
    {"attention", S5KV(2, 6, 70, 75, 16, 2), "f32", N, N, N, N, N, N, 0},
    {"attention", S5KV(1, 4, 67, 70, 24, 2), "bf16", N, N, N, N, N, N,
     MB_PARAM_BSHD | MB_PARAM_CAUSAL},
    {"attention", S5KV(2, 4, 5, 9, 32, 1), "f16", N, N, N, N, N, N,
     MB_PARAM_CAUSAL},
    {"attention", S5KV(1, 8, 33, 33, 64, 4), "f32", N, N, N, N, N, N,
     MB_PARAM_BSHD},
    /* bf16 past the oneDNN kernel's tiles (cpu_attention_onednn.c: 128
     * queries x 256 keys, 128 on causal diagonals): several query and key
     * blocks, a partial last one of each, Sq != Skv, both layouts, with and
     * without the mask, grouped-query; a wrong online-softmax rescale, mask or
     * tail copy fails the reference */
    {"attention", S5(1, 2, 300, 600, 64), "bf16", N, N, N, N, N, N, 0},
    {"attention", S5(1, 2, 333, 517, 40), "bf16", N, N, N, N, N, N,
     MB_PARAM_CAUSAL},
    {"attention", S5KV(1, 4, 260, 389, 32, 2), "bf16", N, N, N, N, N, N,
     MB_PARAM_BSHD | MB_PARAM_CAUSAL},
    {"attention", S5(1, 2, 257, 513, 16), "bf16", N, N, N, N, N, N,
     MB_PARAM_BSHD},
    /* Sq = Skv, causal: every other query block's diagonal key block on
     * the half-block matmuls (128 keys), one of them the last block, in
     * place where the full block is padded */
    {"attention", S5(1, 2, 384, 384, 32), "bf16", N, N, N, N, N, N,
     MB_PARAM_CAUSAL},
    {"copy", S2(257, 129), "f32", N, N, N, N, N, N, 0},
    {"copy", S2(3, 1000), "bf16", N, N, N, N, N, N, 0},
    {"copy", S2(64, 64), "f8e4m3", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "f16", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "f8e5m2", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "i8", N, N, N, N, N, N, 0},
    {"copy", S2(33, 66), "i4", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "i32", N, N, N, N, N, N, 0},
    /* the host transfers, pinned (a GPU declines pageable: test_transfer) */
    {"h2d", S2(33, 65), "f32", N, N, N, N, N, N, MB_PARAM_PINNED},
    {"d2h", S2(33, 66), "i4", N, N, N, N, N, N, MB_PARAM_PINNED},
    /* d2d: to the second device (the emulated GPUs run with two), peer
     * access off and on; one device declines (test_transfer) */
    {"d2d", S2(33, 65), "bf16", N, N, N, N, N, N, 0},
    {"d2d", S2(33, 66), "i4", N, N, N, N, N, N, MB_PARAM_PEER},
    /* the collectives, over the one-rank communicator main() attaches (a
     * single process; their ranks: test_collective, mpi_collectives);
     * broadcast in place too: MPI's declines out of place */
    {"all_reduce", S1(37), "f32", N, N, N, N, N, N, 0},
    {"all_reduce", S1(37), "bf16", N, N, N, N, N, N, MB_PARAM_IN_PLACE},
    {"all_gather", S1(36), "f16", N, N, N, N, N, N, 0},
    {"reduce_scatter", S1(36), "i32", N, N, N, N, N, N, 0},
    {"all_to_all", S1(36), "f32", N, N, N, N, N, N, 0},
    {"broadcast", S1(37), "f32", N, N, N, N, N, N, MB_PARAM_IN_PLACE},
    {"broadcast", S1(37), "bf16", N, N, N, N, N, N, 0},
    {"reduce", S1(37), "bf16", N, N, N, N, N, N, 0},
    {"sendrecv", S1(37), "i32", N, N, N, N, N, N, 0},
    {"silu_mul", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"layernorm", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"softmax", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"activation", S2(37, 129), "bf16", N, N, N, N, N, "relu", 0},
    {"layernorm", S2(33, 257), "bf16", N, N, N, N, N, N, 0},
    {"relu", S2(5, 7), "f32", N, N, N, N, N, N, 0},
    {"causal_attention", S5(1, 1, 4, 6, 8), "f32", N, N, N, N, N, N, 0},
    /* the sparse GEMMs of torchao's sparsity recipes: rows not a multiple of
     * the CPU kernel's block of 16, each dtype */
    {"gemm_sparse24", S3(37, 72, 40), "f32", N, N, N, N, N, N, 0},
    {"gemm_sparse24", S3(19, 136, 24), "bf16", N, N, N, N, N, N, 0},
    {"gemm_sparse24", S3(17, 64, 48), "f16", N, N, N, N, N, N, 0},
    {"gemm_block_sparse", S3(21, 256, 128), "f32", N, N, N, N, N, N, 0},
    {"gemm_block_sparse", S3(9, 128, 64), "bf16", N, N, N, N, N, N, 0},
    {"gemm_block_sparse", S3(5, 384, 64), "f16", N, N, N, N, N, N, 0},
    /* The other dtype pairs the GPU backends list (gpu_kernels_*.def),
     * each on another of the quantize kernels' paths: tensor-wise (absmax
     * pass), i4 rows of odd length (pairs of nibbles across rows), a
     * transposed 128x128 tile, column strips. */
    {"quantize", S2(100, 72), "f32", N, "f8e4m3", N, "tensor", N, N, 0},
    {"quantize", S2(64, 33), "f32", N, "i4", N, "row", N, N, 0},
    {"quantize", S2(256, 128), "bf16", N, "f8e5m2", N, "block:128x128", N, N,
     MB_PARAM_TRANSPOSE},
    {"quantize", S2(100, 70), "f16", N, "f8e5m2", N, "tensor", N, N, 0},
    {"quantize", S2(96, 64), "f16", N, "i8", N, "col", N, N, 0},
    {"quantize", S2(33, 66), "f16", N, "i4", N, "tensor", N, N,
     MB_PARAM_TRANSPOSE},
    {"dequantize", S2(17, 40), "f8e4m3", N, "f32", N, "tensor", N, N, 0},
    {"dequantize", S2(8, 256), "f8e4m3", N, "f16", N, "block:1x128", N, N, 0},
    {"dequantize", S2(33, 7), "f8e5m2", N, "bf16", N, "row", N, N, 0},
    {"dequantize", S2(64, 40), "f8e5m2", N, "f16", N, "col", N, N, 0},
    {"dequantize", S2(31, 64), "i8", N, "f32", N, "row", N, N, 0},
    {"dequantize", S2(128, 256), "i8", N, "bf16", N, "block:128x128", N, N, 0},
    {"dequantize", S2(9, 64), "i4", N, "f32", N, "group:32", N, N, 0},
    {"dequantize", S2(5, 34), "i4", N, "f16", N, "tensor", N, N, 0},
    {"add", S2(7, 33), "f32", N, "bf16", N, N, N, N, 0},
    {"add", S2(64, 64), "f32", N, "f16", N, N, N, N, 0},
    {"add", S2(7, 33), "bf16", N, "f32", N, N, N, N, 0},
    {"add", S2(64, 64), "bf16", N, "f16", N, N, N, N, 0},
    {"add", S2(64, 64), "f16", N, "f32", N, N, N, N, 0},
    {"add", S2(7, 33), "f16", N, "bf16", N, N, N, N, 0},
    {"add", S2(64, 64), "f8e4m3", N, "f32", N, N, N, N, 0},
    {"add", S2(7, 33), "f8e4m3", N, "f16", N, N, N, N, 0},
    {"add", S2(7, 33), "f8e5m2", N, "f32", N, N, N, N, 0},
    {"add", S2(64, 64), "f8e5m2", N, "f16", N, N, N, N, 0},
    /* gemm across several tiles of the GPU kernel (64 x 64, K steps of 32)
     * with M, N and K past the last tile's edge, outputs of another dtype
     * than the inputs, and the dtype pairs and scalings nothing above has:
     * e4m3 x e5m2, e5m2 x e5m2, f16 x i4 (rows of odd length share bytes),
     * scales varying along K on one side only, i8 with scale blocks that
     * end inside a K step (24; 5 with K short of one step), over more than
     * 1024 products (the GPU kernel's exact f32 spans), and
     * quantize-inputs with groups */
    {"gemm", S3(130, 97, 71), "f32", N, N, N, N, N, N, 0},
    {"gemm", S3(65, 40, 67), "f32", N, "bf16", N, N, N, N, 0},
    {"gemm", S3(70, 33, 65), "f16", N, "f32", N, N, N, N, 0},
    {"gemm", S3(40, 64, 33), "f8e4m3", "f8e5m2", "f32", N, "row", "block:32x1",
     N, 0},
    {"gemm", S3(50, 96, 70), "f8e5m2", "f8e5m2", "f16", N, "block:1x32", "col",
     N, 0},
    {"gemm_int4", S3(7, 96, 65), "f16", N, "f16", N, N, "group:32", N, 0},
    {"gemm_int8", S3(20, 96, 36), N, N, "f32", N, "block:1x24", "group:48", N,
     0},
    {"gemm_int8", S3(33, 2100, 17), N, N, N, N, N, N, N, 0},
    {"gemm_int8", S3(9, 20, 11), N, N, "f32", N, "block:1x5", "group:10", N, 0},
    {"gemm_fp8_rowwise", S3(48, 96, 40), N, N, N, "i8", "block:1x32",
     "group:32", N, 0},
    /* Long rows of the norms and softmax (a block a row, gpu_rows.cuh):
     * 16384 in every dtype (whole 16-byte vectors, all in registers); 8200
     * (a last round of vectors only some threads have; bf16: half the
     * threads, the rest of the row in shared memory); 40000 (f32: past
     * the registers of 1024 threads, into shared memory); 8195 (no whole
     * vectors: single elements, registers and shared memory); 65536 f32,
     * 131072 16-bit, 45001 f32 (past shared memory too, the emulated GPU's
     * 99 KiB: re-read from memory in each pass) */
    {"layernorm", S2(4, 16384), "bf16", N, N, N, N, N, N, 0},
    {"layernorm", S2(4, 16384), "f16", N, N, N, N, N, N, 0},
    {"layernorm", S2(4, 16384), "f32", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(4, 16384), "bf16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(4, 16384), "f16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(4, 16384), "f32", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(4, 16384), "bf16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"rmsnorm", S2(4, 16384), "f16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"rmsnorm", S2(4, 16384), "f32", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(4, 16384), "bf16", N, N, N, N, N, N, 0},
    {"softmax", S2(4, 16384), "f16", N, N, N, N, N, N, 0},
    {"softmax", S2(4, 16384), "f32", N, N, N, N, N, N, 0},
    {"layernorm", S2(3, 8200), "bf16", N, N, N, N, N, N, 0},
    {"layernorm", S2(3, 8200), "f32", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(3, 8200), "f16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(3, 8200), "bf16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(3, 8200), "f32", N, N, N, N, N, N, 0},
    {"softmax", S2(3, 8200), "f16", N, N, N, N, N, N, 0},
    {"layernorm", S2(2, 40000), "f32", N, N, N, N, N, N, 0},
    {"layernorm", S2(2, 40000), "bf16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(2, 40000), "f32", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(2, 40000), "f16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(2, 40000), "f32", N, N, N, N, N, N, 0},
    {"softmax", S2(2, 40000), "bf16", N, N, N, N, N, N, 0},
    {"layernorm", S2(3, 8195), "bf16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(3, 8195), "f16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(3, 8195), "f32", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(3, 8195), "bf16", N, N, N, N, N, N, 0},
    {"layernorm", S2(2, 65536), "f32", N, N, N, N, N, N, 0},
    {"softmax", S2(2, 65536), "f32", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(2, 131072), "bf16", N, N, N, N, N, N, 0},
    {"layernorm", S2(2, 131072), "f16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(2, 45001), "f32", N, N, N, N, N, N, 0},
    /* Short rows, several to a warp (a slice of g lanes each) and a last
     * block with rows missing: vectors, and single elements (130) */
    {"layernorm", S2(65, 200), "bf16", N, N, N, N, N, N, 0},
    {"layernorm", S2(17, 24), "f16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"rmsnorm", S2(33, 130), "f32", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(33, 130), "f16", N, N, N, N, N, N, MB_PARAM_NO_WEIGHT},
    {"softmax", S2(65, 96), "f32", N, N, N, N, N, N, 0},
    {"softmax", S2(9, 130), "bf16", N, N, N, N, N, N, 0},
#include "conformance_bwd.inc"
#include "conformance_attention_bwd.inc"
#include "conformance_rope.inc"
#include "conformance_stream.inc"
#include "conformance_fp8_eltwise.inc"
#include "conformance_static.inc"
};
#define NUM_CASES (sizeof k_cases / sizeof k_cases[0])

/* Cases with more parameters: a case of the table above, its alpha and
 * beta (gemm; beta != 0 reads D) and its scales' dtype (NULL: f32). */
typedef struct conf_ab_case {
  conf_case_t c;
  double alpha, beta;
  const char *scale_dtype;
} conf_ab_case_t;

static const conf_ab_case_t k_ab_cases[] = {
    {{"gemm", S3(100, 75, 130), "bf16", N, N, N, N, N, N, 0}, 0.5, -1.5, N},
    {{"gemm", S3(33, 40, 17), "f16", N, N, N, N, N, N, MB_PARAM_TRANS_B},
     1.0,
     1.0,
     N},
    {{"gemm", S3(37, 53, 29), "f32", N, N, N, N, N, N, MB_PARAM_TRANS_A},
     2.0,
     0.25,
     N},
    {{"gemm_fp8", S3(64, 128, 96), N, N, N, N, N, N, N, 0}, 1.0, 0.5, N},
    {{"gemm_int8", S3(32, 128, 48), N, N, "bf16", N, "row", "col", N, 0},
     2.0,
     -1.0,
     N},
#include "conformance_mx.inc"
};
#define NUM_AB_CASES (sizeof k_ab_cases / sizeof k_ab_cases[0])

/* Cases with a static scale besides: NVFP4's per-tensor scale, which its
 * quantize, dequantize and gemm all take. */
typedef struct conf_fixed_case {
  conf_ab_case_t ab;
  double static_scale;
} conf_fixed_case_t;

static const conf_fixed_case_t k_fixed_cases[] = {
#include "conformance_nvfp4.inc"
};
#define NUM_FIXED_CASES (sizeof k_fixed_cases / sizeof k_fixed_cases[0])

static const char *g_backend;
static mb_context_t *g_ctx;

/* Backends whose device may be absent here (a real GPU): only they may
 * skip, and only they may meet a kernel this device lacks (fp8 units). cpu,
 * gpuemu and gpuemu64 always have their device, so neither applies. */
static const char *const k_real_gpus[] = {"cuda", "hip"};

static int is_real_gpu(const char *backend) {
  for (size_t i = 0; i < sizeof k_real_gpus / sizeof k_real_gpus[0]; i++)
    if (!strcmp(backend, k_real_gpus[i])) return 1;
  return 0;
}

/* An entry of a backend's kernel table that declines every case by design,
 * with why; dtypes by name, NULL for MB_DTYPE_NONE (any). It must decline
 * in some case and never run, so the list cannot hide a broken kernel. */
typedef struct conf_decline {
  const char *backend, *op, *impl, *dtype, *dtype_b, *out, *acc;
  const char *why;
} conf_decline_t;

static const conf_decline_t k_declines[] = {
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}, /* none yet */
};
#define NUM_DECLINES (sizeof k_declines / sizeof k_declines[0])

/* The test's own instance of the module, to read its kernel table with the
 * full key and to ask an entry's supports() which entry the library chose
 * (the first of the implementation whose key matches and that agrees). */
static const mb_backend_vtable_t *g_vt;
static void *g_vt_state;
static char g_host_error[512];
static char g_host_reason[512];

static void host_log(void *host, mb_log_level_t level, const char *fmt, ...) {
  (void)host;
  (void)level;
  (void)fmt;
}

static void host_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_host_error, sizeof g_host_error, fmt, ap);
  va_end(ap);
}

static const char *host_reason(void *host, const char *fmt, ...) {
  (void)host;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_host_reason, sizeof g_host_reason, fmt, ap);
  va_end(ap);
  return g_host_reason;
}

static const mb_host_api_t k_host = {MB_BACKEND_ABI_VERSION,
                                     sizeof(mb_host_api_t),
                                     NULL,
                                     host_log,
                                     host_set_error,
                                     mb_convert,
                                     mb_dtype_bytes,
                                     mb_dtype_name,
                                     host_reason,
                                     NULL,
                                     NULL,
                                     NULL,
                                     NULL};

/* Loads backend `name`'s module from the tests' module directory and
 * initializes an instance; 0 after printing why on failure. */
static int load_module_table(const char *name) {
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/mb_backend_%s.so", dir ? dir : ".", name);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    printf("FAILED: cannot load %s: %s\n", path, dlerror());
    return 0;
  }
  mb_backend_entry_fn entry;
  /* dlsym returns an object pointer; POSIX guarantees this conversion. */
  *(void **)&entry = dlsym(so, MB_BACKEND_ENTRY_SYMBOL);
  g_vt = entry ? entry(&k_host) : NULL;
  if (!g_vt || g_vt->init(&k_host, &g_vt_state) != MB_OK) {
    printf("FAILED: %s: no kernel table: %s\n", path, g_host_error);
    g_vt = NULL;
    return 0;
  }
  return 1;
}

static mb_dtype_t dtype_or_none(const char *name) {
  mb_dtype_t d = MB_DTYPE_NONE;
  if (name && mb_dtype_from_name(name, &d) != MB_OK)
    fail_msg("%s", mb_error_last());
  return d;
}

/* The k_declines row of entry k of this backend, or NULL. */
static const conf_decline_t *decline_of(const mb_backend_kernel_t *k) {
  for (size_t i = 0; i < NUM_DECLINES; i++) {
    const conf_decline_t *d = &k_declines[i];
    if (d->backend && !strcmp(d->backend, g_backend) && !strcmp(d->op, k->op) &&
        !strcmp(d->impl, k->name) && dtype_or_none(d->dtype) == k->dtype &&
        dtype_or_none(d->dtype_b) == k->dtype_b &&
        dtype_or_none(d->out) == k->dtype_out &&
        dtype_or_none(d->acc) == k->dtype_acc)
      return d;
  }
  return NULL;
}

/* Entry k's full key (op, dtype, dtype_b, dtype_out, dtype_acc; NONE any)
 * matches resolved params p of op `op` run by `impl`. The kernel table has
 * no scaling in its key: scaled variants are told apart by supports(). */
static int key_matches(const mb_backend_kernel_t *k, const char *op,
                       const char *impl, const mb_op_params_t *p) {
  const mb_dtype_t key[4] = {k->dtype, k->dtype_b, k->dtype_out, k->dtype_acc};
  const mb_dtype_t got[4] = {p->dtype, p->dtype_b, p->dtype_out, p->dtype_acc};
  if (strcmp(k->op, op) || strcmp(k->name, impl)) return 0;
  for (size_t i = 0; i < 4; i++)
    if (key[i] != MB_DTYPE_NONE && key[i] != got[i]) return 0;
  return 1;
}

/* 1 when entry k's supports() agrees to run p on device `dev`. */
static int entry_agrees(const mb_backend_kernel_t *k, uint32_t dev,
                        const mb_op_params_t *p, const char **why) {
  *why = "";
  if (!k->supports) return 1;
  return k->supports(g_vt_state, dev, p, why) == MB_OK;
}

static const char *key_text(const mb_backend_kernel_t *k, char *buf,
                            size_t cap) {
  snprintf(buf, cap, "%s/%s(%s x %s -> %s, acc %s)", k->op, k->name,
           mb_dtype_name(k->dtype), mb_dtype_name(k->dtype_b),
           mb_dtype_name(k->dtype_out), mb_dtype_name(k->dtype_acc));
  return buf;
}

static void set_dtype(const char *name, mb_dtype_t *field) {
  if (name && mb_dtype_from_name(name, field) != MB_OK)
    fail_msg("%s", mb_error_last());
}

static void set_scaling(const char *text, mb_scaling_t *s) {
  if (text && mb_scaling_from_string(text, s) != MB_OK)
    fail_msg("%s", mb_error_last());
}

/* Case i of the three tables, with its alpha, beta, scale dtype and static
 * scale (1, 0, NULL and 0 for the first). */
static const conf_case_t *case_at(size_t i, double *alpha, double *beta,
                                  const char **sdt, double *fixed) {
  *alpha = 1.0;
  *beta = 0.0;
  *sdt = NULL;
  *fixed = 0.0;
  if (i < NUM_CASES) return &k_cases[i];
  i -= NUM_CASES;
  const conf_ab_case_t *ab =
      i < NUM_AB_CASES ? &k_ab_cases[i] : &k_fixed_cases[i - NUM_AB_CASES].ab;
  if (i >= NUM_AB_CASES) *fixed = k_fixed_cases[i - NUM_AB_CASES].static_scale;
  *alpha = ab->alpha;
  *beta = ab->beta;
  *sdt = ab->scale_dtype;
  return &ab->c;
}

static mb_op_params_t case_params(const conf_case_t *c, double alpha,
                                  double beta, const char *sdt, double fixed) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.alpha = alpha;
  p.beta = beta;
  set_dtype(sdt, &p.dtype_scale);
  p.ndim = c->ndim;
  memcpy(p.shape, c->shape, c->ndim * sizeof *c->shape);
  p.kv_heads = c->shape[5];
  set_dtype(c->dtype, &p.dtype);
  set_dtype(c->dtype_b, &p.dtype_b);
  set_dtype(c->out, &p.dtype_out);
  set_dtype(c->dtype_q, &p.dtype_q);
  set_scaling(c->scale_a, &p.scale_a);
  set_scaling(c->scale_b, &p.scale_b);
  if (c->act && mb_activation_from_name(c->act, &p.activation) != MB_OK)
    fail_msg("%s", mb_error_last());
  p.flags = c->flags;
  if (fixed > 0) p.flags |= MB_PARAM_STATIC, p.scale = fixed;
  return p;
}

/* What tells a case apart in the printed table: its scaling or layout. */
static const char *case_label(const conf_case_t *c) {
  static const struct {
    uint32_t flags;
    const char *name;
  } k_layouts[] = {{MB_PARAM_TRANS_A | MB_PARAM_TRANS_B, "trans_a,trans_b"},
                   {MB_PARAM_TRANS_A, "trans_a"},
                   {MB_PARAM_TRANS_B, "trans_b"}};
  if (c->scale_a) return c->scale_a;
  for (size_t i = 0; i < sizeof k_layouts / sizeof k_layouts[0]; i++)
    if ((c->flags & k_layouts[i].flags) == k_layouts[i].flags)
      return k_layouts[i].name;
  return "";
}

/* Per entry of the module's table: it ran and passed (ran), or declined a
 * case its key matched (declined, with the first reason). */
typedef struct conf_tally {
  int ran, declined;
  char why[160];
} conf_tally_t;

/* Credits the result to the entry the library chose: the first of the
 * result's op and implementation whose key matches and whose supports()
 * agrees. A skipped result marks every matching entry that declines. */
static void tally(const mb_result_info_t *info, int passed,
                  conf_tally_t *tallies) {
  for (size_t j = 0; j < g_vt->num_kernels; j++) {
    const mb_backend_kernel_t *k = &g_vt->kernels[j];
    const char *why;
    if (!key_matches(k, info->op, info->impl, &info->params)) continue;
    if (!entry_agrees(k, info->device_index, &info->params, &why)) {
      if (!tallies[j].declined)
        snprintf(tallies[j].why, sizeof tallies[j].why, "%s", why ? why : "");
      tallies[j].declined = 1;
      continue;
    }
    if (info->status == MB_RESULT_OK) tallies[j].ran |= passed;
    return;
  }
}

/* Runs case c (with alpha, beta) with kernel `impl`; 1 ran and passed, 0
 * not applicable, -1 failed or wrong (printed: the suite goes on, so that
 * one run on a GPU shows every case that fails, and fails at the end). */
static int run_case(const conf_case_t *c, double alpha, double beta,
                    const char *sdt, double fixed, const char *impl,
                    conf_tally_t *tallies) {
  mb_op_params_t p = case_params(c, alpha, beta, sdt, fixed);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = c->op;
  s.params = &p;
  s.backend = g_backend;
  s.impl = impl;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 2;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, &s, &r) != MB_OK)
    fail_msg("%s [%s]: %s", c->op, impl, mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_correctness_t corr = MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &corr);
  int ran = info.status == MB_RESULT_OK, bad = 0;
  if (info.status == MB_RESULT_FAILED) {
    printf("ERROR: %s %lldx%lldx%lld [%s]: failed: %s\n", c->op,
           (long long)c->shape[0], (long long)c->shape[1],
           (long long)c->shape[2], impl, info.reason);
    bad = 1;
  }
  if (ran) {
    printf("  %-22s %-18s %6s->%-6s %-7s%s %s (err %.3g x tol)\n", c->op,
           case_label(c), mb_dtype_name(info.params.dtype),
           mb_dtype_name(info.params.dtype_out), info.impl,
           info.emulated ? " (emulated)" : "", corr.pass ? "pass" : "FAIL",
           corr.max_err_ratio);
    if (!corr.checked || !corr.pass) {
      printf(
          "ERROR: %s %s %lldx%lldx%lld alpha %g beta %g [%s]: wrong or "
          "unchecked result, error %.3g x the tolerance\n",
          c->op, case_label(c), (long long)c->shape[0], (long long)c->shape[1],
          (long long)c->shape[2], alpha, beta, impl, corr.max_err_ratio);
      bad = 1;
    }
  }
  /* A skip names the implementation asked for; a run, the one that ran. */
  if (info.status == MB_RESULT_SKIPPED && (!info.impl || !*info.impl))
    info.impl = impl;
  tally(&info, ran && corr.checked && corr.pass, tallies);
  mb_result_destroy(r);
  return bad ? -1 : ran;
}

/* Another entry of k's key (op, implementation, dtypes), the same kernel
 * behind another supports hook, ran and passed. */
static int twin_ran(const mb_backend_kernel_t *k, const conf_tally_t *tallies) {
  for (size_t i = 0; i < g_vt->num_kernels; i++) {
    const mb_backend_kernel_t *o = &g_vt->kernels[i];
    /* the same kernel (prepare) behind another supports hook */
    if (o != k && tallies[i].ran && o->prepare == k->prepare &&
        o->supports != k->supports && !strcmp(o->op, k->op) &&
        !strcmp(o->name, k->name) && o->dtype == k->dtype &&
        o->dtype_b == k->dtype_b && o->dtype_out == k->dtype_out &&
        o->dtype_acc == k->dtype_acc)
      return 1;
  }
  return 0;
}

/* Entry j's verdict: 0 fine, 1 a gap (printed). */
static int judge_entry(size_t j, const conf_tally_t *tallies) {
  const conf_tally_t *t = &tallies[j];
  const mb_backend_kernel_t *k = &g_vt->kernels[j];
  const conf_decline_t *d = decline_of(k);
  char key[160];
  key_text(k, key, sizeof key);
  /* A collective runs across ranks, and this one process has no
   * communicator: the collectives are checked by test_collective (the CPU's
   * kernels on a one-rank transport), mpi_collectives (over MPI) and
   * test_gpu_ccl (NCCL through a fake library), not here. */
  const mb_op_t *op = mb_op_find(k->op);
  if (op && mb_op_is_collective(op) && !t->ran) {
    printf("  %s: a collective, checked by its own tests\n", key);
    return 0;
  }
  if (d && t->ran) {
    printf(
        "  %s ran and passed, but k_declines says it declines (%s): "
        "drop the row\n",
        key, d->why);
    return 1;
  }
  if (d && !t->declined) {
    printf("  %s is listed as declining (%s) but no case saw it decline\n", key,
           d->why);
    return 1;
  }
  if (d) {
    printf("  %s declines as expected: %s\n", key, d->why);
    return 0;
  }
  if (t->ran) return 0;
  /* Two entries of one key are alternatives the CPU's ISA chooses between
   * (cpu_vec_first.c: the C kernel before oneDNN's where its AVX-512 loops
   * run, after it where they do not): the one that declined here is checked
   * where the other declines (ctest cpu_no_avx512). */
  if (k->supports && twin_ran(k, tallies)) {
    printf("  %s: its twin entry ran here, this one is for other CPUs\n", key);
    return 0;
  }
  /* A real GPU may lack what a kernel needs (fp8 units); its refusal is
   * reported, the emulated GPU and the CPU have no such excuse. */
  if (t->declined && is_real_gpu(g_backend)) {
    printf("  %s declined on this device: %s\n", key, t->why);
    return 0;
  }
  printf(
      "  no case ran %s%s%s: add one to k_cases (or, if it declines by "
      "design, a row to k_declines)\n",
      key, t->declined ? "; it declined: " : "", t->declined ? t->why : "");
  return 1;
}

/* Whether table row r repeats an earlier row's op, name and dtypes. */
static int is_twin(size_t r) {
  const mb_backend_kernel_t *k = &g_vt->kernels[r];
  for (size_t j = 0; j < r; j++) {
    const mb_backend_kernel_t *e = &g_vt->kernels[j];
    if (!strcmp(e->op, k->op) && !strcmp(e->name, k->name) &&
        e->dtype == k->dtype && e->dtype_out == k->dtype_out)
      return 1;
  }
  return 0;
}

static void test_every_case_on_every_kernel(void **state) {
  (void)state;
  size_t nk = mb_kernel_count(g_ctx);
  conf_tally_t *tallies = calloc(g_vt->num_kernels + 1, sizeof *tallies);
  /* The context lists the backend's entries in its table's order, each
   * kernel once: a twin (a later row with an earlier one's op, name and
   * dtypes, listed around another kernel to order the choice) is not. */
  size_t row = 0, twins = 0;
  for (size_t i = 0; i < nk; i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    mb_kernel_info(g_ctx, i, &k);
    if (strcmp(k.backend, g_backend) || k.user) continue;
    for (; row < g_vt->num_kernels && is_twin(row); ++row) twins++;
    assert_true(row < g_vt->num_kernels);
    assert_string_equal(k.op, g_vt->kernels[row].op);
    assert_string_equal(k.name, g_vt->kernels[row].name);
    assert_int_equal(k.dtype, g_vt->kernels[row].dtype);
    assert_int_equal(k.dtype_out, g_vt->kernels[row].dtype_out);
    row++;
  }
  for (; row < g_vt->num_kernels && is_twin(row); ++row) twins++;
  assert_int_equal(row, g_vt->num_kernels);
  printf("  %s: %zu twin rows, listed once\n", g_backend, twins);
  int wrong = 0;
  for (size_t c = 0; c < NUM_CASES + NUM_AB_CASES + NUM_FIXED_CASES; c++) {
    double alpha, beta, fixed;
    const char *sdt;
    const conf_case_t *cc = case_at(c, &alpha, &beta, &sdt, &fixed);
    const mb_op_t *op = mb_op_find(cc->op);
    if (!op) fail_msg("%s", mb_error_last());
    /* Each implementation name this backend has for the op, once. */
    for (size_t i = 0; i < g_vt->num_kernels; i++) {
      const mb_backend_kernel_t *k = &g_vt->kernels[i];
      if (strcmp(k->op, mb_op_name(op))) continue;
      int seen = 0;
      for (size_t j = 0; j < i && !seen; j++)
        seen = !strcmp(g_vt->kernels[j].op, k->op) &&
               !strcmp(g_vt->kernels[j].name, k->name);
      if (!seen)
        wrong += run_case(cc, alpha, beta, sdt, fixed, k->name, tallies) < 0;
    }
  }
  int gaps = 0, ran = 0;
  for (size_t j = 0; j < g_vt->num_kernels; j++) {
    gaps += judge_entry(j, tallies);
    ran += tallies[j].ran;
  }
  /* The figure that matters: entries executed, not entries listed. */
  printf("  %s: %d of %zu kernel entries ran and passed\n", g_backend, ran,
         g_vt->num_kernels);
  /* A row for a kernel the table no longer has would excuse nothing. */
  for (size_t i = 0; i < NUM_DECLINES; i++) {
    const conf_decline_t *d = &k_declines[i];
    if (!d->backend || strcmp(d->backend, g_backend)) continue;
    int found = 0;
    for (size_t j = 0; j < g_vt->num_kernels && !found; j++)
      found = decline_of(&g_vt->kernels[j]) == d;
    if (!found) {
      printf("  k_declines row %s/%s matches no kernel: drop it\n", d->op,
             d->impl);
      gaps++;
    }
  }
  free(tallies);
  if (wrong)
    printf("  %s: %d case(s) failed or wrong (ERROR lines)\n", g_backend,
           wrong);
  assert_int_equal(wrong, 0);
  assert_int_equal(gaps, 0);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_conformance BACKEND\n");
    return 2;
  }
  g_backend = argv[1];
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  o.backend_path = dir;
  if (dir && *dir) o.flags = MB_CONTEXT_NO_DEFAULT_BACKENDS;
  if (mb_context_create(&g_ctx, &o) != MB_OK) {
    fprintf(stderr, "%s\n", mb_error_last());
    return 1;
  }
  /* The collectives' communicator: one rank, its own data plane. */
  one_t one = {.planted = 0};
  mb_comm_t *comm = one_rank_comm(&one);
  mb_context_set_comm(g_ctx, comm);
  mb_device_t *dev;
  if (mb_device_find(g_ctx, g_backend, 0, &dev) != MB_OK) {
    /* Skipping is for a GPU this machine may lack; the CPU and the
     * emulated GPUs are always here, so their absence is a broken build or
     * module, which must not pass as "Skipped". */
    int skip = is_real_gpu(g_backend);
    printf("%s: backend %s: %s\n", skip ? "SKIPPED" : "FAILED", g_backend,
           mb_error_last());
    mb_context_destroy(g_ctx);
    mb_comm_destroy(comm);
    return skip ? 77 : 1;
  }
  if (!load_module_table(g_backend)) {
    mb_context_destroy(g_ctx);
    mb_comm_destroy(comm);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_case_on_every_kernel)};
  int rc = cmocka_run_group_tests_name(g_backend, tests, NULL, NULL);
  g_vt->fini(g_vt_state);
  mb_context_destroy(g_ctx);
  mb_comm_destroy(comm);
  return rc;
}
