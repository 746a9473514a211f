/* The backend conformance suite: a table of cases (ops, aliases, dtypes,
 * scalings, odd shapes) run through the full harness on every implementation
 * the backend has for the op; every run must pass the reference check, and
 * every kernel the backend lists must be exercised by some case. Run once
 * per backend (argument); exits 77 (skipped, visibly) when the backend has no
 * device here. */
#include "test_util.h"

typedef struct conf_case {
  const char *op; /* op or alias */
  uint32_t ndim;
  int64_t shape[5];
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
    {"copy", S2(257, 129), "f32", N, N, N, N, N, N, 0},
    {"copy", S2(3, 1000), "bf16", N, N, N, N, N, N, 0},
    {"copy", S2(64, 64), "f8e4m3", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "f16", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "f8e5m2", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "i8", N, N, N, N, N, N, 0},
    {"copy", S2(33, 66), "i4", N, N, N, N, N, N, 0},
    {"copy", S2(33, 65), "i32", N, N, N, N, N, N, 0},
    {"silu_mul", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"layernorm", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"rmsnorm", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"softmax", S2(33, 257), "f16", N, N, N, N, N, N, 0},
    {"activation", S2(37, 129), "bf16", N, N, N, N, N, "relu", 0},
    {"layernorm", S2(33, 257), "bf16", N, N, N, N, N, N, 0},
    {"relu", S2(5, 7), "f32", N, N, N, N, N, N, 0},
    {"causal_attention", S5(1, 1, 4, 6, 8), "f32", N, N, N, N, N, N, 0},
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
};
#define NUM_CASES (sizeof k_cases / sizeof k_cases[0])

/* gemm with alpha and beta (beta != 0 reads D): a case of the table above
 * and its alpha and beta. */
typedef struct conf_ab_case {
  conf_case_t c;
  double alpha, beta;
} conf_ab_case_t;

static const conf_ab_case_t k_ab_cases[] = {
    {{"gemm", S3(100, 75, 130), "bf16", N, N, N, N, N, N, 0}, 0.5, -1.5},
    {{"gemm", S3(33, 40, 17), "f16", N, N, N, N, N, N, MB_PARAM_TRANS_B},
     1.0,
     1.0},
    {{"gemm", S3(37, 53, 29), "f32", N, N, N, N, N, N, MB_PARAM_TRANS_A},
     2.0,
     0.25},
    {{"gemm_fp8", S3(64, 128, 96), N, N, N, N, N, N, N, 0}, 1.0, 0.5},
    {{"gemm_int8", S3(32, 128, 48), N, N, "bf16", N, "row", "col", N, 0},
     2.0,
     -1.0},
};
#define NUM_AB_CASES (sizeof k_ab_cases / sizeof k_ab_cases[0])

static const char *g_backend;
static mb_context_t *g_ctx;

static void set_dtype(const char *name, mb_dtype_t *field) {
  if (name && mb_dtype_from_name(name, field) != MB_OK)
    fail_msg("%s", mb_error_last());
}

static void set_scaling(const char *text, mb_scaling_t *s) {
  if (text && mb_scaling_from_string(text, s) != MB_OK)
    fail_msg("%s", mb_error_last());
}

/* Case i of both tables, with its alpha and beta (1 and 0 for the first). */
static const conf_case_t *case_at(size_t i, double *alpha, double *beta) {
  *alpha = 1.0;
  *beta = 0.0;
  if (i < NUM_CASES) return &k_cases[i];
  *alpha = k_ab_cases[i - NUM_CASES].alpha;
  *beta = k_ab_cases[i - NUM_CASES].beta;
  return &k_ab_cases[i - NUM_CASES].c;
}

static mb_op_params_t case_params(const conf_case_t *c, double alpha,
                                  double beta) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.alpha = alpha;
  p.beta = beta;
  p.ndim = c->ndim;
  memcpy(p.shape, c->shape, sizeof c->shape);
  set_dtype(c->dtype, &p.dtype);
  set_dtype(c->dtype_b, &p.dtype_b);
  set_dtype(c->out, &p.dtype_out);
  set_dtype(c->dtype_q, &p.dtype_q);
  set_scaling(c->scale_a, &p.scale_a);
  set_scaling(c->scale_b, &p.scale_b);
  if (c->act && mb_activation_from_name(c->act, &p.activation) != MB_OK)
    fail_msg("%s", mb_error_last());
  p.flags = c->flags;
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

/* Kernel k ran (same op, implementation and dtypes as a result). */
static int covers(const mb_kernel_info_t *k, const mb_result_info_t *r) {
  return !strcmp(k->op, r->op) && !strcmp(k->name, r->impl) &&
         (k->dtype == MB_DTYPE_NONE || k->dtype == r->params.dtype) &&
         (k->dtype_out == MB_DTYPE_NONE || k->dtype_out == r->params.dtype_out);
}

/* Runs case c (with alpha, beta) with kernel `impl`; 1 ran and passed, 0
 * not applicable. */
static int run_case(const conf_case_t *c, double alpha, double beta,
                    const char *impl, int *covered) {
  mb_op_params_t p = case_params(c, alpha, beta);
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
  int ran = info.status == MB_RESULT_OK;
  /* A kernel this device cannot run (fp8 on a GPU without fp8 units) is
   * skipped with its reason: reported, and counted as declined. */
  if (info.status == MB_RESULT_SKIPPED && impl) {
    for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
      mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
      mb_kernel_info(g_ctx, i, &k);
      if (!strcmp(k.backend, g_backend) && !strcmp(k.name, impl) &&
          covers(&k, &info) && !covered[i]) {
        covered[i] = -1;
        printf("  %-22s %-18s %6s->%-6s %-7s declined here: %s\n", c->op,
               case_label(c), mb_dtype_name(info.params.dtype),
               mb_dtype_name(info.params.dtype_out), impl, info.reason);
      }
    }
  }
  if (info.status == MB_RESULT_FAILED)
    fail_msg("%s %lldx%lldx%lld [%s]: failed: %s", c->op,
             (long long)c->shape[0], (long long)c->shape[1],
             (long long)c->shape[2], impl, info.reason);
  if (ran) {
    printf("  %-22s %-18s %6s->%-6s %-7s%s %s (err %.3g x tol)\n", c->op,
           case_label(c), mb_dtype_name(info.params.dtype),
           mb_dtype_name(info.params.dtype_out), impl,
           info.emulated ? " (emulated)" : "", corr.pass ? "pass" : "FAIL",
           corr.max_err_ratio);
    if (!corr.pass)
      fail_msg("%s [%s]: wrong result, error %.3g x the tolerance", c->op, impl,
               corr.max_err_ratio);
    for (size_t i = 0; i < mb_kernel_count(g_ctx); i++) {
      mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
      mb_kernel_info(g_ctx, i, &k);
      if (!strcmp(k.backend, g_backend) && covers(&k, &info)) covered[i] = 1;
    }
  }
  mb_result_destroy(r);
  return ran;
}

static void test_every_case_on_every_kernel(void **state) {
  (void)state;
  size_t nk = mb_kernel_count(g_ctx);
  int *covered = calloc(nk + 1, sizeof *covered);
  for (size_t c = 0; c < NUM_CASES + NUM_AB_CASES; c++) {
    double alpha, beta;
    const conf_case_t *cc = case_at(c, &alpha, &beta);
    const mb_op_t *op = mb_op_find(cc->op);
    if (!op) fail_msg("%s", mb_error_last());
    /* Each implementation name this backend has for the op, once. */
    for (size_t i = 0; i < nk; i++) {
      mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
      mb_kernel_info(g_ctx, i, &k);
      if (strcmp(k.backend, g_backend) || strcmp(k.op, mb_op_name(op)))
        continue;
      int seen = 0;
      for (size_t j = 0; j < i && !seen; j++) {
        mb_kernel_info_t e = MB_KERNEL_INFO_INIT;
        mb_kernel_info(g_ctx, j, &e);
        seen = !strcmp(e.backend, k.backend) && !strcmp(e.op, k.op) &&
               !strcmp(e.name, k.name);
      }
      if (!seen) run_case(cc, alpha, beta, k.name, covered);
    }
  }
  int gaps = 0;
  for (size_t i = 0; i < nk; i++) {
    mb_kernel_info_t k = MB_KERNEL_INFO_INIT;
    mb_kernel_info(g_ctx, i, &k);
    if (strcmp(k.backend, g_backend) || covered[i]) continue;
    printf("  no case exercised %s/%s(%s->%s): add one to k_cases\n", k.op,
           k.name, mb_dtype_name(k.dtype), mb_dtype_name(k.dtype_out));
    gaps++;
  }
  free(covered);
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
  mb_device_t *dev;
  if (mb_device_find(g_ctx, g_backend, 0, &dev) != MB_OK) {
    printf("SKIPPED: backend %s: %s\n", g_backend, mb_error_last());
    mb_context_destroy(g_ctx);
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_case_on_every_kernel)};
  int rc = cmocka_run_group_tests_name(g_backend, tests, NULL, NULL);
  mb_context_destroy(g_ctx);
  return rc;
}
