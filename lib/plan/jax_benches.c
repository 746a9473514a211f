/* The JAX suite's benchmarks as our ops: one row per benchmark_name we
 * run (jax_benches.h; every name the suite defines is in jax_names.c), and
 * the errors that list the valid choices. */
#include <stdio.h>
#include <string.h>

#include "plan/jax_attention.h"
#include "plan/jax_benches.h"
#include "plan/jax_collectives.h"

#define NO MB_DTYPE_NONE
static const mb__jax_bench_t k_benches[] = {
    {"gemm", "gemm_fp8", MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    {"gemm_simple", "gemm_simple", MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    /* einsum in in_dtype_str, f32 accumulate, cast to out_dtype_str */
    {"gemm_simple_with_dtype", "gemm_simple", MB__JAX_MKN, MB__JAX_INOUT, 1, NO,
     NO, 0, 0},
    /* gemm_simple in `dtype` (float8 default), many runs back to back:
     * the clocks and throttling are in each sample's telemetry where the
     * backend reads them. The suite casts the f32 result to `dtype`; fp8 is
     * not an output of our gemm, so D is bf16 (docs/config.md). */
    {"gemm_throttling", "gemm_simple", MB__JAX_MKN, MB__JAX_DTYPE | MB__JAX_GAP,
     0, MB_DTYPE_F8E4M3, NO, 0, 0},
    {"gemm_accum", "gemm_accum", MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    {"gemm_fp8_rowwise", "gemm_fp8_rowwise", MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    /* The suite's default input is float8_e4m3fn (our alias's is bf16). */
    {"gemm_multiple_run", "gemm_multiple_run", MB__JAX_MKN, MB__JAX_DTYPE, 0,
     MB_DTYPE_F8E4M3, NO, 0, 0},
    {"gemm_fp8_b128_fp32", "gemm_fp8_b128", MB__JAX_MKN, 0, 0, NO, MB_DTYPE_F32,
     0, 0},
    /* The suite quantizes bf16 with calibration "fixed, -224, 224" (scale
     * 0.5, our alias's) and returns bf16; it takes no scale parameter. */
    {"gemm_fp8_rowwise_static_scaling", "gemm_fp8_rowwise_static_scaling",
     MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    /* acc * (sx * sy) after an unscaled f32 product, as the suite does. */
    {"gemm_fp8_rowwise_w_dequantize", "gemm_fp8_rowwise_w_dequantize",
     MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    {"gemm_fp8_b128_fp32_static_scaling", "gemm_fp8_b128_fp32_static_scaling",
     MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    /* MXFP8, quantized inside the op like gemm_fp8_rowwise; the static
     * form's calibration is the same 224/448 = 0.5, a power of two. */
    {"gemm_mxfp8_b32", "gemm_mxfp8_b32", MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    {"gemm_mxfp8_b32_static_scaling", "gemm_mxfp8_b32_static_scaling",
     MB__JAX_MKN, 0, 0, NO, NO, 0, 0},
    {"quantization", "quantization", MB__JAX_MN, MB__JAX_QDTYPE, 0, NO, NO, 0,
     0},
    {"transpose_quantization", "transpose_quantization", MB__JAX_MN, 0, 0, NO,
     NO, 0, 0},
    {"quantization_static_scaling", "quantization", MB__JAX_MN, MB__JAX_SCALE,
     0, NO, NO, MB_PARAM_STATIC, 0},
    {"transpose_quantization_static_scaling", "transpose_quantization",
     MB__JAX_MN, MB__JAX_SCALE, 0, NO, NO, MB_PARAM_STATIC, 0},
    {"add", "add", MB__JAX_MN, 0, 0, MB_DTYPE_BF16, NO, 0, 0},
    {"rmsnorm_fwd", "rmsnorm", MB__JAX_MN, 0, 0, MB_DTYPE_BF16, NO, 0, 0},
    {"swiglu_fwd", "silu_mul", MB__JAX_MN, 0, 0, MB_DTYPE_BF16, NO, 0, 1},
    /* The suite differentiates with respect to x only (its RMSNorm scale,
     * all ones, is closed over); ours also gives dW, one more reduction
     * over the rows (docs/config.md). */
    {"rmsnorm_bwd", "rmsnorm_bwd", MB__JAX_MN, 0, 0, MB_DTYPE_BF16, NO, 0, 0},
    /* x [m, n] split into gate and up halves, dy [m, n/2], dx [m, n]:
     * our da, db of [m, n/2] read and write the same bytes. */
    {"swiglu_bwd", "swiglu_bwd", MB__JAX_MN, 0, 0, MB_DTYPE_BF16, NO, 0, 1},
    {"inference_add", "add", MB__JAX_MN, MB__JAX_DTYPE, 1, NO, NO, 0, 0},
    {"inference_rmsnorm", "rmsnorm", MB__JAX_MN, MB__JAX_DTYPE, 1, NO, NO, 0,
     0},
    {"inference_silu_mul", "silu_mul", MB__JAX_MN, MB__JAX_DTYPE, 1, NO, NO, 0,
     0},
    {"inference_sigmoid", "sigmoid", MB__JAX_MN, MB__JAX_DTYPE, 1, NO, NO, 0,
     0},
    /* The closest equivalent of the Pallas kernel (docs/config.md); the
     * suite's q, k and v are jax.random.normal's f32. */
    {"tokamax_splash_attention", "attention", MB__JAX_ATTN, 0, 0, MB_DTYPE_F32,
     NO, 0, 0},
    {"single_device_hbm_copy", "copy", MB__JAX_ELEMENTS, MB__JAX_DTYPE, 1, NO,
     NO, 0, 0},
    /* device_put then np.array of a numpy (pageable) array: h2d, then d2h
     * (mb__jax_bench_then). */
    {"host_device", "h2d", MB__JAX_MIB, 0, 0, MB_DTYPE_F32, NO, 0, 0},
    /* The collectives (jax_collectives.c): psum's dtype defaults to
     * bfloat16, the others' functions take it without a default. */
    {"psum", "all_reduce", MB__JAX_COLL, MB__JAX_DTYPE, 0, MB_DTYPE_BF16, NO, 0,
     0},
    {"psum_scatter", "reduce_scatter", MB__JAX_COLL, MB__JAX_DTYPE, 1, NO, NO,
     0, 0},
    {"all_gather", "all_gather", MB__JAX_COLL, MB__JAX_DTYPE, 1, NO, NO, 0, 0},
    {"all_to_all", "all_to_all", MB__JAX_COLL, MB__JAX_DTYPE, 1, NO, NO, 0, 0},
    /* a ring shift i -> i + 1 of each device's matrix */
    {"ppermute", "sendrecv", MB__JAX_COLL, MB__JAX_DTYPE, 1, NO, NO, 0, 0},
};
#undef NO
#define NUM_BENCHES (sizeof k_benches / sizeof *k_benches)

const char *mb__jax_bench_then(const mb__jax_bench_t *b) {
  static const struct {
    const char *name, *then;
  } k_then[] = {{"host_device", "d2h"}};
  for (size_t i = 0; i < sizeof k_then / sizeof *k_then; i++)
    if (!strcmp(k_then[i].name, b->name)) return k_then[i].then;
  return NULL;
}

static const mb__jax_bench_t *bench_find(const char *name) {
  for (size_t i = 0; i < NUM_BENCHES; i++)
    if (!strcmp(k_benches[i].name, name)) return &k_benches[i];
  return NULL;
}

mb_status_t mb__jax_bench_lookup(mb__pb_t *pb, const mb_cfg_node_t *n,
                                 const char *path, const char *name,
                                 const mb__jax_bench_t **out,
                                 const mb__jax_name_t **def) {
  *def = NULL;
  if ((*out = bench_find(name))) return MB_OK;
  if ((*def = mb__jax_name_find(MB__JAX_LEGACY, name))) return MB_OK;
  return mb__jax_name_error(pb, MB__JAX_LEGACY, n, path, "benchmark_name",
                            name);
}

/* The parameter names benchmark `b` takes, NULL-terminated. */
static void bench_params(const mb__jax_bench_t *b, const char *names[16]) {
  size_t n = 0;
  if (b->dims == MB__JAX_ATTN) {
    for (const char *const *a = mb__jax_attention_params(); *a; a++)
      names[n++] = *a;
  } else if (b->dims == MB__JAX_COLL) {
    for (const char *const *a = mb__jax_coll_params(b->name); *a; a++)
      names[n++] = *a;
  } else if (b->dims == MB__JAX_ELEMENTS) {
    names[n++] = "num_elements";
  } else if (b->dims == MB__JAX_MIB) {
    names[n++] = "data_size_mib";
  } else {
    names[n++] = "m";
    if (b->dims == MB__JAX_MKN) names[n++] = "k";
    names[n++] = "n";
  }
  if (b->takes & MB__JAX_DTYPE) names[n++] = "dtype";
  if (b->takes & MB__JAX_INOUT) {
    names[n++] = "in_dtype_str";
    names[n++] = "out_dtype_str";
  }
  if (b->takes & MB__JAX_GAP) names[n++] = "gap_strategy";
  if (b->takes & MB__JAX_SCALE) names[n++] = "scale";
  if (b->takes & MB__JAX_QDTYPE) names[n++] = "quant_dtype";
  names[n++] = "num_runs";
  names[n] = NULL;
}

static void join_names(char *buf, size_t cap, const char *const *names) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; names[i] && len < cap; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
    if (w > 0) len += (size_t)w;
  }
}

mb_status_t mb__jax_check_param(mb__pb_t *pb, const mb__jax_bench_t *b,
                                const mb_cfg_node_t *at, const char *path,
                                const char *key, const char *written) {
  const char *names[16];
  bench_params(b, names);
  for (size_t i = 0; names[i]; i++)
    if (!strcmp(names[i], key)) return MB_OK;
  char valid[512];
  join_names(valid, sizeof valid, names);
  if (strcmp(key, written))
    return mb__pb_error(pb, at, path,
                        "unknown parameter \"%s\" (from \"%s\") for %s; "
                        "valid: %s",
                        key, written, b->name, valid);
  return mb__pb_error(pb, at, path,
                      "unknown parameter \"%s\" for %s; valid: %s", key,
                      b->name, valid);
}
