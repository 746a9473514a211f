/* Every name the JAX accelerator-microbenchmarks suite defines, one row
 * each, whether we run it (jax_benches.c, schema_jax_sweep.c map those to
 * our ops) or skip it. Kept apart from the mapping so that a name the
 * suite defines is never an input error, only a skip until we run it. */
#include <stdio.h>
#include <string.h>

#include "plan/jax_names.h"

/* A matmul sharded over a device mesh, its collectives inside the timed
 * step: neither our gemm (one device) nor our collectives (no matmul). */
#define SHARDED                                                             \
  "gemm",                                                                   \
      "a matmul sharded over a device mesh with its collectives is not an " \
      "op of libmicrobench yet"
#define CONV "gemm", "convolution is not an op of libmicrobench yet"

/* The legacy layout: BENCHMARK_MAP in Ironwood/src/run_benchmark.py (the
 * *_BENCHMARK_MAP dicts it merges), upstream commit 947f49d, 2026-08-22,
 * the last before the current layout replaced it. */
static const mb__jax_name_t k_legacy[] = {
    /* COLLECTIVE_BENCHMARK_MAP */
    {"all_gather", "all-gather across devices", "all_gather", NULL},
    {"psum", "all-reduce sum across devices", "all_reduce", NULL},
    {"psum_scatter", "reduce-scatter across devices", "reduce_scatter", NULL},
    {"all_to_all", "all-to-all across devices", "all_to_all", NULL},
    {"ppermute", "collective permute across devices", "sendrecv", NULL},
    /* benchmark_send_recv.py: a ragged_all_to_all in which only source_id
     * sends, to one target_id at a time */
    {"send_recv", "point-to-point send/receive", "sendrecv",
     "one device sends to one other while the rest idle; our sendrecv is a "
     "ring shift in which every rank sends to the next at once, a "
     "different exchange"},
    /* MATMUL_BENCHMARK_MAP */
    {"naive_matmul", "matmul sharded over the device mesh", SHARDED},
    {"single_host_naive_matmul", "matmul sharded over one host's devices",
     SHARDED},
    {"multilayer_collective_matmul",
     "layers of matmul overlapped with "
     "collectives",
     SHARDED},
    {"collective_matmul_one_direction",
     "matmul overlapped with a one-way "
     "collective",
     SHARDED},
    {"collective_matmul_two_directions",
     "matmul overlapped with a two-way "
     "collective",
     SHARDED},
    /* CONVOLUTION_BENCHMARK_MAP */
    {"numpy_convolve", "1-D convolution, NumPy on the host", CONV},
    {"scipy_signal_convolve", "N-D convolution, SciPy on the host", CONV},
    {"scipy_signal_convolve2d", "2-D convolution, SciPy on the host", CONV},
    {"lax_conv_general_dilated", "XLA convolution", CONV},
    /* ATTENTION_BENCHMARK_MAP */
    {"tokamax_splash_attention", "splash attention (tokamax)", "attention",
     NULL},
    /* HBM_BENCHMARK_MAP */
    {"single_device_hbm_copy", "HBM copy on one device", "copy", NULL},
    /* COMPUTE_BENCHMARK_MAP */
    {"gemm_simple", "fp8 GEMM, no scales", "gemm", NULL},
    {"gemm_simple_with_dtype", "gemm_simple with a dtype parameter", "gemm",
     NULL},
    {"gemm_multiple_run", "GEMM run several times", "gemm", NULL},
    {"gemm_throttling", "GEMMs back to back to provoke clock throttling",
     "gemm", NULL},
    {"gemm", "fp8 GEMM with row/column scales", "gemm", NULL},
    {"gemm_accum", "scaled fp8 GEMM accumulated into f32", "gemm", NULL},
    {"quantization", "bf16 to fp8, dynamic, per row", "quantize", NULL},
    {"transpose_quantization", "quantization of X^T", "quantize", NULL},
    {"quantization_static_scaling", "bf16 to fp8 with a given scale",
     "quantize", NULL},
    {"transpose_quantization_static_scaling", "static quantization of X^T",
     "quantize", NULL},
    {"swiglu_fwd", "SwiGLU forward", "silu_mul", NULL},
    {"swiglu_bwd", "SwiGLU backward", "swiglu_bwd", NULL},
    {"rmsnorm_fwd", "RMSNorm forward", "rmsnorm", NULL},
    {"rmsnorm_bwd", "RMSNorm backward", "rmsnorm_bwd", NULL},
    {"add", "element-wise add", "add", NULL},
    {"gemm_fp8_rowwise", "bf16 quantized to fp8 by rows inside the GEMM",
     "gemm", NULL},
    {"gemm_fp8_b128_fp32", "fp8 GEMM, 1x128/128x128 block scales", "gemm",
     NULL},
    {"gemm_fp8_rowwise_static_scaling", "rowwise fp8 GEMM, scales given",
     "gemm", NULL},
    {"gemm_fp8_b128_fp32_static_scaling",
     "block-scaled fp8 GEMM, scales "
     "given",
     "gemm", NULL},
    {"gemm_mxfp8_b32", "MXFP8 GEMM", "gemm", NULL},
    {"gemm_mxfp8_b32_static_scaling", "MXFP8 GEMM, scales given", "gemm", NULL},
    {"gemm_fp8_rowwise_w_dequantize", "rowwise fp8 GEMM then dequantize",
     "gemm", NULL},
    {"inference_add", "element-wise add, any dtype", "add", NULL},
    {"inference_rmsnorm", "RMSNorm, any dtype", "rmsnorm", NULL},
    {"inference_silu_mul", "silu(a) * b, any dtype", "silu_mul", NULL},
    {"inference_sigmoid", "sigmoid, any dtype", "activation", NULL},
    /* HOST_DEVICE_BENCHMARK_MAP */
    {"host_device", "host to device and back copies", "h2d", NULL},
};

/* The current layout: the @benchmark_registry.register(...) names of
 * src/accelerator_microbenchmarks/benchmarks/ *.py, upstream HEAD 6a306a8. */
static const mb__jax_name_t k_sweep[] = {
    {"gemm_generalized", "GEMM, in/out dtypes (matmul.py)", "gemm", NULL},
    {"hbm_bandwidth", "STREAM copy/scale/add/triad (hbm.py)", "copy", NULL},
    {"simple_add", "element-wise add (compute_ops.py)", "add", NULL},
    {"rmsnorm", "RMSNorm forward (compute_ops.py)", "rmsnorm", NULL},
    {"swiglu", "SwiGLU forward (compute_ops.py)", "silu_mul", NULL},
    {"quantization", "bf16 to fp8, per row (compute_ops.py)", "quantize", NULL},
    {"rope", "rotary position embedding (compute_ops.py)", "rope", NULL},
    {"attention_flashed", "dot-product attention (attention.py)", "attention",
     NULL},
    {"transformer_layer_moe", "a mixture-of-experts layer (components.py)",
     "moe_layer_proxy", NULL},
    {"all_reduce", "all-reduce across devices", "all_reduce", NULL},
    {"all_gather", "all-gather across devices", "all_gather", NULL},
    {"all_to_all", "all-to-all across devices", "all_to_all", NULL},
    {"reduce_scatter", "reduce-scatter across devices", "reduce_scatter", NULL},
    {"device_to_device", "copies between two devices", "copy",
     "a copy between two devices is not mapped to an op of ours yet"},
    {"host_to_device", "host to device copy (host_device.py)", "h2d", NULL},
    {"device_to_host", "device to host copy (host_device.py)", "d2h", NULL},
};

typedef struct jax_dtype {
  mb__jax_name_t def;
  mb_dtype_t dtype; /* NONE: defined by the suite, not run here */
} jax_dtype_t;

/* Legacy: run_benchmark.py's dtype_mapping (947f49d), plus int8. */
static const jax_dtype_t k_legacy_dtypes[] = {
    {{"bfloat16", "bf16", NULL, NULL}, MB_DTYPE_BF16},
    {{"float32", "f32", NULL, NULL}, MB_DTYPE_F32},
    {{"float16", "f16", NULL, NULL}, MB_DTYPE_F16},
    {{"float8", "f8e4m3", NULL, NULL}, MB_DTYPE_F8E4M3},
    {{"int8", "i8", NULL, NULL}, MB_DTYPE_I8},
    {{"int32", "i32", NULL, NULL}, MB_DTYPE_I32},
    {{"float4", "float4_e2m1fn", NULL, NULL}, MB_DTYPE_F4E2M1},
};

/* Current: utils.parse_dtype takes any jax.numpy attribute; these are its
 * array dtypes. */
static const jax_dtype_t k_sweep_dtypes[] = {
    {{"bfloat16", "bf16", NULL, NULL}, MB_DTYPE_BF16},
    {{"float32", "f32", NULL, NULL}, MB_DTYPE_F32},
    {{"float16", "f16", NULL, NULL}, MB_DTYPE_F16},
    {{"float8_e4m3fn", "f8e4m3", NULL, NULL}, MB_DTYPE_F8E4M3},
    {{"float8_e5m2", "f8e5m2", NULL, NULL}, MB_DTYPE_F8E5M2},
    {{"int8", "i8", NULL, NULL}, MB_DTYPE_I8},
    {{"int4", "i4", NULL, NULL}, MB_DTYPE_I4},
    {{"int32", "i32", NULL, NULL}, MB_DTYPE_I32},
    {{"float4_e2m1fn", "f4e2m1", NULL, NULL}, MB_DTYPE_F4E2M1},
    {{"float8_e8m0fnu", "e8m0 scale", NULL, NULL}, MB_DTYPE_NONE},
    {{"float8_e4m3", "IEEE-style e4m3 with infinities", NULL, NULL},
     MB_DTYPE_NONE},
    {{"float8_e3m4", "fp8 e3m4", NULL, NULL}, MB_DTYPE_NONE},
    {{"float8_e4m3fnuz", "fp8 e4m3, no negative zero", NULL, NULL},
     MB_DTYPE_NONE},
    {{"float8_e5m2fnuz", "fp8 e5m2, no negative zero", NULL, NULL},
     MB_DTYPE_NONE},
    {{"float8_e4m3b11fnuz", "fp8 e4m3, bias 11", NULL, NULL}, MB_DTYPE_NONE},
    {{"float64", "f64", NULL, NULL}, MB_DTYPE_NONE},
    {{"int2", "i2", NULL, NULL}, MB_DTYPE_NONE},
    {{"int16", "i16", NULL, NULL}, MB_DTYPE_NONE},
    {{"int64", "i64", NULL, NULL}, MB_DTYPE_NONE},
    {{"uint2", "u2", NULL, NULL}, MB_DTYPE_NONE},
    {{"uint4", "u4", NULL, NULL}, MB_DTYPE_NONE},
    {{"uint8", "u8", NULL, NULL}, MB_DTYPE_NONE},
    {{"uint16", "u16", NULL, NULL}, MB_DTYPE_NONE},
    {{"uint32", "u32", NULL, NULL}, MB_DTYPE_NONE},
    {{"uint64", "u64", NULL, NULL}, MB_DTYPE_NONE},
    {{"bool_", "booleans", NULL, NULL}, MB_DTYPE_NONE},
    {{"complex64", "complex f32", NULL, NULL}, MB_DTYPE_NONE},
    {{"complex128", "complex f64", NULL, NULL}, MB_DTYPE_NONE},
};

#define COUNT(a) (sizeof(a) / sizeof *(a))

static const mb__jax_name_t *names(mb__jax_layout_t layout, size_t *count) {
  *count = layout == MB__JAX_LEGACY ? COUNT(k_legacy) : COUNT(k_sweep);
  return layout == MB__JAX_LEGACY ? k_legacy : k_sweep;
}

static const jax_dtype_t *dtypes(mb__jax_layout_t layout, size_t *count) {
  *count =
      layout == MB__JAX_LEGACY ? COUNT(k_legacy_dtypes) : COUNT(k_sweep_dtypes);
  return layout == MB__JAX_LEGACY ? k_legacy_dtypes : k_sweep_dtypes;
}

const mb__jax_name_t *mb__jax_name_find(mb__jax_layout_t layout,
                                        const char *name) {
  size_t n;
  const mb__jax_name_t *t = names(layout, &n);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].name, name)) return &t[i];
  return NULL;
}

void mb__jax_skip_reason(char *buf, size_t cap, const char *key,
                         const mb__jax_name_t *def) {
  snprintf(buf, cap,
           "%s \"%s\" (%s) is defined by the JAX suite but not available in "
           "libmicrobench yet%s%s",
           key, def->name, def->what, def->why ? ": " : "",
           def->why ? def->why : "");
}

/* ", "-joined names of `count` rows `stride` bytes apart, each starting
 * with a mb__jax_name_t. */
static void join(char *buf, size_t cap, const void *rows, size_t count,
                 size_t stride) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < count && len < cap; i++) {
    const mb__jax_name_t *r =
        (const mb__jax_name_t *)((const char *)rows + i * stride);
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", r->name);
    if (w > 0) len += (size_t)w;
  }
}

mb_status_t mb__jax_name_error(mb__pb_t *pb, mb__jax_layout_t layout,
                               const mb_cfg_node_t *n, const char *path,
                               const char *key, const char *name) {
  size_t count;
  const mb__jax_name_t *t = names(layout, &count);
  char valid[2048];
  join(valid, sizeof valid, t, count, sizeof *t);
  return mb__pb_error(pb, n, path,
                      "%s \"%s\" is not a benchmark of the JAX suite; its "
                      "benchmarks: %s",
                      key, name, valid);
}

int mb__jax_dtype_lookup(mb__jax_layout_t layout, const char *name,
                         mb_dtype_t *out, const mb__jax_name_t **def) {
  size_t n;
  const jax_dtype_t *t = dtypes(layout, &n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].def.name, name)) continue;
    *def = &t[i].def;
    if (t[i].dtype == MB_DTYPE_NONE) return 0;
    *out = t[i].dtype;
    return 1;
  }
  return -1;
}

void mb__jax_dtype_names(mb__jax_layout_t layout, char *buf, size_t cap) {
  size_t n;
  const jax_dtype_t *t = dtypes(layout, &n);
  join(buf, cap, t, n, sizeof *t);
}

mb_status_t mb__jax_dtype_error(mb__pb_t *pb, mb__jax_layout_t layout,
                                const mb_cfg_node_t *n, const char *path,
                                const char *name) {
  char valid[1024];
  mb__jax_dtype_names(layout, valid, sizeof valid);
  return mb__pb_error(pb, n, path, "unknown dtype \"%s\"; valid: %s", name,
                      valid);
}
