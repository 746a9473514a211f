/* gemm on the GPU, implementation "native": our own tiled SIMT kernel
 * (gpu_gemm.cuh), the GEMM of a GPU backend without a vendor BLAS and a
 * third line beside cuBLASLt / hipBLASLt. This file: which requests it
 * runs (and the reason for each it declines), the kernel arguments a
 * request becomes, the instances of the kernel, and the run of every
 * variant but quantize-inputs (gpu_gemm_qi.cu), whose kstate is the
 * device's launch environment as for the other shared kernels.
 *
 * Variants (lib/ops/gemm.c): f32, bf16, f16 x the same (trans_a, trans_b;
 * not tf32: this kernel has no tf32 mode); fp8 x fp8, e4m3 and e5m2 in any
 * mix, with every scaling (not fast_accum: no fp8 accumulator); fp4 x fp4
 * (e2m1 unscaled, f32 scales, MXFP4's e8m0, NVFP4's e4m3 and per-tensor
 * scale, all widened to f32 as fp8 is); i8 x i8, exact
 * to i32 or rescaled; f32, bf16, f16 x i4 weights with group scales; out f32,
 * bf16, f16 (i32 for exact i8). */
#include "gpu_gemm.cuh"

namespace {

typedef enum kind { K_FLOAT, K_FP8, K_I8, K_I4 } kind_t;

template <mb_dtype_t DA, mb_dtype_t DB, bool I8, bool TA, bool TB>
mb_status_t launch_t(const mb_gpu_env_t *env, const mb_gg_args_t *g) {
  const int64_t tiles = (g->m + MB_GG_BM - 1) / MB_GG_BM * g->tiles_n;
  MB_GPU_LAUNCH((mb_gg_kernel<DA, DB, I8, TA, TB>), (unsigned)tiles,
                MB_GG_THREADS, MB_GG_SMEM_BYTES, (mb_gpu_stream_t)env->stream,
                *g);
  return mb__gpu_launched(env, "native gemm");
}

typedef mb_status_t (*launch_fn)(const mb_gpu_env_t *, const mb_gg_args_t *);

/* The (A, B) dtype pairs the kernel has an instance of, by layout: [2
 * trans_a + trans_b]; the layout flags come with float inputs only. */
#define F(d) MB_DTYPE_##d
#define LAYOUTS(a, b)                             \
  {                                               \
    launch_t<F(a), F(b), false, false, false>,    \
        launch_t<F(a), F(b), false, false, true>, \
        launch_t<F(a), F(b), false, true, false>, \
        launch_t<F(a), F(b), false, true, true>   \
  }
#define PLAIN(a, b, k) \
  { launch_t<F(a), F(b), k == K_I8, false, false>, NULL, NULL, NULL }
const struct pair {
  mb_dtype_t a, b;
  kind_t kind;
  launch_fn launch[4];
} k_pairs[] = {
    {F(F32), F(F32), K_FLOAT, LAYOUTS(F32, F32)},
    {F(BF16), F(BF16), K_FLOAT, LAYOUTS(BF16, BF16)},
    {F(F16), F(F16), K_FLOAT, LAYOUTS(F16, F16)},
    {F(F8E4M3), F(F8E4M3), K_FP8, PLAIN(F8E4M3, F8E4M3, K_FP8)},
    {F(F8E4M3), F(F8E5M2), K_FP8, PLAIN(F8E4M3, F8E5M2, K_FP8)},
    {F(F8E5M2), F(F8E4M3), K_FP8, PLAIN(F8E5M2, F8E4M3, K_FP8)},
    {F(F8E5M2), F(F8E5M2), K_FP8, PLAIN(F8E5M2, F8E5M2, K_FP8)},
    /* fp4 x fp4 (packed e2m1): as fp8, widened to f32 as loaded; also B
     * stored N x K (trans_b, unscaled: packed along K) */
    {F(F4E2M1),
     F(F4E2M1),
     K_FP8,
     {launch_t<F(F4E2M1), F(F4E2M1), false, false, false>,
      launch_t<F(F4E2M1), F(F4E2M1), false, false, true>, NULL, NULL}},
    {F(I8), F(I8), K_I8, PLAIN(I8, I8, K_I8)},
    {F(F32), F(I4), K_I4, PLAIN(F32, I4, K_I4)},
    {F(BF16), F(I4), K_I4, PLAIN(BF16, I4, K_I4)},
    {F(F16), F(I4), K_I4, PLAIN(F16, I4, K_I4)},
};
#undef PLAIN
#undef LAYOUTS
#undef F

const pair *find_pair(mb_dtype_t a, mb_dtype_t b) {
  for (size_t i = 0; i < sizeof k_pairs / sizeof k_pairs[0]; ++i)
    if (k_pairs[i].a == a && k_pairs[i].b == b) return &k_pairs[i];
  return NULL;
}

bool is_float(mb_dtype_t d) {
  return d == MB_DTYPE_F32 || d == MB_DTYPE_BF16 || d == MB_DTYPE_F16;
}

bool scaled(const mb_scaling_t &s) {
  return s.mode != MB_SCALE_NONE;
}

/* The K extent of a side's scale blocks: K when it has none. */
int64_t k_block(const mb_scaling_t &s, int is_b, int64_t k) {
  return scaled(s) ? s.block[is_b ? 0 : 1] : k;
}

/* The span over which i8 sums run before they are scaled: K, or the
 * smaller K block (one divides the other). */
int64_t i8_span(const mb_op_params_t *p) {
  const int64_t k = p->shape[1];
  const int64_t ka = k_block(p->scale_a, 0, k), kb = k_block(p->scale_b, 1, k);
  return ka < kb ? ka : kb;
}

/* Reason for a request quantize-inputs rules out, NULL if none. */
const char *check_qi(const mb_op_params_t *p) {
  if (!(p->flags & MB_PARAM_QUANTIZE_INPUTS)) return NULL;
  if ((p->dtype != MB_DTYPE_BF16 && p->dtype != MB_DTYPE_F32) ||
      p->dtype_b != p->dtype)
    return "native gemm: quantize-inputs takes bf16 or f32 A and B of one "
           "dtype";
  if (p->dtype_q != MB_DTYPE_F8E4M3 && p->dtype_q != MB_DTYPE_F8E5M2 &&
      p->dtype_q != MB_DTYPE_I8 && p->dtype_q != MB_DTYPE_F4E2M1)
    return "native gemm: quantize-inputs quantizes to f8e4m3, f8e5m2, i8 or "
           "f4e2m1 (dtype_q)";
  if (!scaled(p->scale_a) || !scaled(p->scale_b))
    return "native gemm: quantize-inputs scales both sides (params not "
           "resolved?)";
  return NULL;
}

/* Reason for dims the kernel's arithmetic rules out, NULL if none. */
const char *check_dims(const mb_op_params_t *p) {
  for (int i = 0; i < 3; ++i) {
    if (p->shape[i] <= 0) return "native gemm: M, K and N must be positive";
    /* Scale blocks are found by 32-bit multiply-high divisions. */
    if (p->shape[i] >= ((int64_t)1 << 31))
      return "native gemm: M, K and N must be below 2^31 (32-bit scale "
             "block arithmetic)";
  }
  const int64_t tiles = (p->shape[0] + MB_GG_BM - 1) / MB_GG_BM *
                        ((p->shape[2] + MB_GG_BN - 1) / MB_GG_BN);
  if (tiles >= ((int64_t)1 << 31))
    return "native gemm: more than 2^31 - 1 tiles of 64 x 64 (one block a "
           "tile, one-dimensional grid)";
  return NULL;
}

/* Reason for scale blocks the kernel cannot follow, NULL if none. */
const char *check_scales(const mb_op_params_t *p, kind_t kind) {
  const int64_t rows[2] = {p->shape[0], p->shape[1]};
  const int64_t cols[2] = {p->shape[1], p->shape[2]};
  const mb_scaling_t *s[2] = {&p->scale_a, &p->scale_b};
  for (int i = 0; i < 2; ++i)
    if (scaled(*s[i]) && (s[i]->block[0] <= 0 || s[i]->block[1] <= 0 ||
                          rows[i] % s[i]->block[0] || cols[i] % s[i]->block[1]))
      return "native gemm: a scale block must divide its operand (params not "
             "resolved?)";
  if (kind == K_I4 && !scaled(p->scale_b))
    return "native gemm: i4 weights need scales (scale_b)";
  const int64_t k = p->shape[1];
  const int64_t ka = k_block(p->scale_a, 0, k), kb = k_block(p->scale_b, 1, k);
  if (kind == K_I8 && ka % kb && kb % ka)
    return "native gemm: scale_a and scale_b must cut K alike (one K block "
           "dividing the other) for i8's exact block sums";
  /* |a b| <= 2^14: 2^17 products of one block fit an i32 sum. */
  if (kind == K_I8 && i8_span(p) > ((int64_t)1 << 17))
    return "native gemm: i8 sums over more than 131072 products (of one "
           "scale block along K) could overflow i32";
  return NULL;
}

/* Reason for the output and accumulation dtypes, NULL if fine. */
const char *check_out(const mb_op_params_t *p, kind_t kind) {
  const bool i8 = kind == K_I8;
  if (p->dtype_acc != (i8 ? MB_DTYPE_I32 : MB_DTYPE_F32))
    return i8 ? "native gemm: i8 x i8 accumulates in i32 (dtype_acc i32)"
              : "native gemm: float, fp8 and i4 inputs accumulate in f32 "
                "(dtype_acc f32)";
  if (p->dtype_out == MB_DTYPE_I32) {
    if (!i8 || (p->flags & MB_PARAM_QUANTIZE_INPUTS))
      return "native gemm: only i8 x i8 gives i32; out: f32, bf16 or f16";
    if (scaled(p->scale_a) || scaled(p->scale_b))
      return "native gemm: i8 x i8 -> i32 is exact and takes no scales";
    if (p->alpha != 1 || p->beta != 0)
      return "native gemm: i8 x i8 -> i32 takes alpha 1 and beta 0";
    return NULL;
  }
  if (!is_float(p->dtype_out))
    return "native gemm: D must be f32, bf16 or f16 (i32 for unscaled i8 x "
           "i8)";
  return NULL;
}

}  // namespace

mb_status_t mb_gg_check(const mb_op_params_t *p, const char **why) {
  if (p->flags & MB_PARAM_TF32) {
    *why =
        "native gemm: no tf32: the native kernel multiplies in exact f32 on "
        "the SIMT units (no tensor cores); drop tf32 to run it";
    return MB_ERR_UNSUPPORTED;
  }
  /* Its fp8 is emulated (widened to f32 as loaded): there is no fp8
   * accumulator to relax, so a result would measure neither mode. */
  if (p->flags & MB_PARAM_FAST_ACCUM) {
    *why =
        "native gemm: no fast_accum: the native kernel emulates fp8 (f32 "
        "FMAs on the SIMT units, no fp8 tensor-core accumulator); drop "
        "fast_accum to run it";
    return MB_ERR_UNSUPPORTED;
  }
  const char *r = check_qi(p);
  const bool qi = (p->flags & MB_PARAM_QUANTIZE_INPUTS) != 0;
  const pair *pr =
      find_pair(qi ? p->dtype_q : p->dtype, qi ? p->dtype_q : p->dtype_b);
  if (!r && !pr)
    r = "native gemm: A x B must be f32, bf16 or f16 with the same, f8e4m3 "
        "or f8e5m2 with either, f4e2m1 with f4e2m1, i8 with i8, or f32, "
        "bf16 or f16 with i4 weights";
  /* f4e2m1 has an instance with B stored N x K (trans_b) too. */
  const bool fp4_tb =
      pr && pr->a == MB_DTYPE_F4E2M1 && !(p->flags & MB_PARAM_TRANS_A) && !qi;
  if (!r && pr->kind != K_FLOAT && !fp4_tb &&
      (p->flags & (MB_PARAM_TRANS_A | MB_PARAM_TRANS_B)))
    r = "native gemm: trans_a and trans_b go with f32, bf16 and f16 inputs "
        "only (trans_b with f4e2m1 too)";
  if (!r) r = check_out(p, pr->kind);
  if (!r) r = check_dims(p);
  if (!r) r = check_scales(p, pr->kind);
  if (!r) return MB_OK;
  *why = r;
  return MB_ERR_UNSUPPORTED;
}

mb_status_t mb_gg_fail(const mb_gpu_env_t *env, mb_status_t st,
                       const char *why) {
  env->host->set_error("%s: %s", env->backend, why);
  return st;
}

/* One side: element (o, k) of A is (row o, column k) of A as stored (K x M
 * with trans_a), of B (row k, column o) of B (N x K with trans_b). */
static void plan_side(const void *x, const void *grid, const mb_scaling_t &s,
                      int e8m0, float nv_s, int is_b, int trans, int i8,
                      int64_t outer, int64_t k, mb_gg_operand_t *o) {
  memset(o, 0, sizeof *o);
  o->p = x;
  o->n_o = outer;
  o->kc = is_b ? trans : !trans;
  o->so = o->kc ? k : 1;
  o->sk = o->kc ? 1 : outer;
  o->bo = o->bk = mb_gq_divisor(1);
  if (!scaled(s)) return;
  const int64_t bo = s.block[is_b ? 1 : 0], bk = s.block[is_b ? 0 : 1];
  const int64_t grid_cols = is_b ? outer / bo : k / bk;
  o->grid = grid;
  o->e8m0 = e8m0;
  o->nv_s = nv_s;
  o->bo = mb_gq_divisor((uint32_t)bo);
  o->bk = mb_gq_divisor((uint32_t)bk);
  o->g_so = is_b ? 1 : grid_cols;
  o->g_sk = is_b ? grid_cols : 1;
  /* i8 sums exactly and scales per block instead (gpu_gemm.cuh). */
  o->pre = !i8 && bk != k;
}

void mb_gg_plan(const mb_op_params_t *p, const void *a, const void *b,
                const void *ga, const void *gb, void *d, mb_gg_args_t *g) {
  const int64_t m = p->shape[0], k = p->shape[1], n = p->shape[2];
  const int i8 = p->dtype == MB_DTYPE_I8 && p->dtype_b == MB_DTYPE_I8;
  const int e8m0 = p->dtype_scale == MB_DTYPE_E8M0;
  /* NVFP4: the static scale is both sides' per-tensor S. */
  const float nv_s = p->dtype_scale == MB_DTYPE_F8E4M3 ? (float)p->scale : 0.0f;
  memset(g, 0, sizeof *g);
  plan_side(a, ga, p->scale_a, e8m0, nv_s, 0,
            (p->flags & MB_PARAM_TRANS_A) != 0, i8, m, k, &g->a);
  plan_side(b, gb, p->scale_b, e8m0, nv_s, 1,
            (p->flags & MB_PARAM_TRANS_B) != 0, i8, n, k, &g->b);
  g->d = d;
  g->dout = p->dtype_out;
  g->m = m;
  g->n = n;
  g->k = k;
  g->tiles_n = (n + MB_GG_BN - 1) / MB_GG_BN;
  g->alpha = (float)p->alpha;
  g->beta = (float)p->beta;
  g->kq = i8 ? i8_span(p) : k;
}

mb_status_t mb_gg_launch(const mb_gpu_env_t *env, mb_dtype_t da, mb_dtype_t db,
                         const mb_gg_args_t *args) {
  const pair *pr = find_pair(da, db);
  const launch_fn fn =
      pr ? pr->launch[(args->a.kc ? 0 : 2) + (args->b.kc ? 1 : 0)] : NULL;
  if (!fn)
    return mb_gg_fail(env, MB_ERR_UNSUPPORTED,
                      "native gemm: no kernel instance for these dtypes and "
                      "layouts");
  return fn(env, args);
}

extern "C" mb_status_t mb__gpu_gemm_supports(void *bstate, uint32_t dev,
                                             const mb_op_params_t *params,
                                             const char **why) {
  const char *reason = NULL;
  mb_status_t st = mb_gg_check(params, &reason);
  /* quantize-inputs matches these entries' dtypes too; its own entries
   * run it. Declining with their reason keeps a skip's message to one. */
  if (st == MB_OK && (params->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    st = MB_ERR_UNSUPPORTED;
    if (mb__gpu_gemm_qi_supports(bstate, dev, params, &reason) == MB_OK)
      reason = "native gemm: quantize-inputs runs in its own entries";
  }
  if (st != MB_OK && why) *why = reason;
  return st;
}

extern "C" mb_status_t mb__gpu_gemm_run(void *kstate,
                                        const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  const char *why = NULL;
  mb_status_t st = mb_gg_check(p, &why);
  if (st != MB_OK) return mb_gg_fail(env, st, why);
  if (p->flags & MB_PARAM_QUANTIZE_INPUTS)
    return mb_gg_fail(env, MB_ERR_INVALID_ARG,
                      "native gemm: quantize-inputs needs the prepare of its "
                      "own entries");
  if (call->num_in < 4 || call->num_out < 1 || !call->in[0] || !call->in[1] ||
      !call->out[0] || (scaled(p->scale_a) && !call->in[2]) ||
      (scaled(p->scale_b) && !call->in[3]))
    return mb_gg_fail(env, MB_ERR_INVALID_ARG,
                      "native gemm: the call needs A, B, the scales of a "
                      "scaled side and D");
  mb_gg_args_t g;
  mb_gg_plan(p, call->in[0], call->in[1], call->in[2], call->in[3],
             call->out[0], &g);
  return mb_gg_launch(env, p->dtype, p->dtype_b, &g);
}
