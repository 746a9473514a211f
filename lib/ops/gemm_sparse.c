/* The sparse GEMMs of torchao's sparsity recipes: D[M,N] = A[M,K] . W[K,N]
 * with W held compressed (sparse.h), hp in, hp out, f32 accumulation.
 *
 *   gemm_sparse24:     W 2:4 along K: values K/2 x N + metadata K/8 x N
 *                      (cuSPARSELt's / torch's semi-structured form)
 *   gemm_block_sparse: W in 64x64 blocks, K/128 kept per block column
 *                      strip: values (N/64)(K/128)64 x 64 + block indices
 *                      N/64 x K/128 (i32), a fixed-fill BSR
 *
 * Ops of their own rather than gemm variants: B is two operands of other
 * shapes, and the FLOP is what they do. FLOP: the multiply-adds actually
 * done, 2 x M x N x (K/2) = M N K for both (half of the dense GEMM's; a
 * model's result counts its dense baseline instead, docs/ops.md). Bytes:
 * |A| + |values| + |metadata or indices| + |D|. The reference is the dense
 * product of the pruned weights: the kept products summed in double. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"
#include "ops/sparse.h"
#include "rng.h"

enum { GM, GK, GN };
enum { S_A, S_V, S_I, S_D };

static mb_status_t sp_resolve(mb__sparsity_t kind, mb_op_params_t *p) {
  const mb_op_t *op =
      kind == MB__SPARSE_24 ? &mb__op_gemm_sparse24 : &mb__op_gemm_block_sparse;
  if (p->dtype == MB_DTYPE_NONE) p->dtype = MB_DTYPE_BF16;
  mb__default_dtypes(p, MB_DTYPE_BF16);
  mb_status_t st = mb__check_dtype(op, "dtype", p->dtype, mb__elt_float,
                                   MB__ELT_COUNT(mb__elt_float));
  if (st == MB_OK)
    st = mb__check_dtype(op, "dtype_b", p->dtype_b, &p->dtype, 1);
  if (st == MB_OK)
    st = mb__check_dtype(op, "dtype_out", p->dtype_out, &p->dtype, 1);
  if (st == MB_OK && p->dtype_acc != MB_DTYPE_F32)
    st = mb__fail(MB_ERR_INVALID_ARG, "%s: dtype_acc must be f32, not %s",
                  op->name, mb_dtype_name(p->dtype_acc));
  return st == MB_OK ? mb__sparse_check_shape(op->name, kind, p->shape[GK],
                                              p->shape[GN])
                     : st;
}

static void sp_operand(mb__sparsity_t kind, const mb_op_params_t *p,
                       uint32_t role, mb_dtype_t *dtype, uint32_t *ndim,
                       int64_t *shape) {
  const int64_t m = p->shape[GM], k = p->shape[GK], n = p->shape[GN];
  const int64_t bs = MB__SPARSE_BS, keep = mb__sparse_block_keep(k);
  const int b24 = kind == MB__SPARSE_24;
  *ndim = 2;
  *dtype = p->dtype;
  switch (role) {
    case S_A:
      shape[0] = m, shape[1] = k;
      return;
    case S_V:
      shape[0] = b24 ? k / 2 : n / bs * keep * bs;
      shape[1] = b24 ? n : bs;
      return;
    case S_I:
      *dtype = b24 ? MB_DTYPE_I8 : MB_DTYPE_I32;
      shape[0] = b24 ? k / 8 : n / bs;
      shape[1] = b24 ? n : keep;
      return;
    default:
      *dtype = p->dtype_out;
      shape[0] = m, shape[1] = n;
  }
}

static double sp_flop(const mb_op_params_t *p) {
  return (double)p->shape[GM] * (double)p->shape[GN] * (double)p->shape[GK];
}

static double sp_bytes(mb__sparsity_t kind, const mb_op_params_t *p) {
  double b = 0.0;
  for (uint32_t r = 0; r < 4; r++) {
    mb_dtype_t dt;
    uint32_t nd;
    int64_t sh[MB_MAX_DIMS];
    sp_operand(kind, p, r, &dt, &nd, sh);
    b += mb__bytes(dt, (double)sh[0] * (double)sh[1]);
  }
  return b;
}

static int sp_reads_output(const mb_op_params_t *p) {
  (void)p;
  return 0;
}

/* A standalone run's pattern: the runner's normal fill of the values, and
 * here a seeded valid index set — a 2:4 pair per group of 4, or `keep`
 * distinct ascending blocks per strip (a partial Fisher-Yates draw). */
static mb_status_t sp_post_fill(mb__sparsity_t kind, const mb_op_params_t *p,
                                void *const *host, uint64_t seed) {
  static const uint8_t k_pairs[6] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE};
  const int64_t k = p->shape[GK], n = p->shape[GN];
  if (kind == MB__SPARSE_24) {
    uint8_t *meta = host[S_I];
    for (int64_t i = 0; i < k / 8 * n; i++) {
      const uint64_t r = mb__rng_u64(seed ^ 0x5a24u, (uint64_t)i);
      meta[i] = (uint8_t)(k_pairs[r % 6] | k_pairs[(r >> 8) % 6] << 4);
    }
    return MB_OK;
  }
  const int64_t kb = k / MB__SPARSE_BS, keep = mb__sparse_block_keep(k);
  int32_t *idx = host[S_I];
  uint8_t *take = malloc((size_t)kb);
  if (!take) return mb__fail(MB_ERR_NO_MEMORY, "gemm_block_sparse: no memory");
  for (int64_t j = 0; j < n / MB__SPARSE_BS; j++) {
    for (int64_t b = 0; b < kb; b++) take[b] = b < keep;
    for (int64_t b = kb - 1; b > 0; b--) { /* shuffle the kept flags */
      const int64_t o =
          (int64_t)(mb__rng_u64(seed ^ 0xb10cu, (uint64_t)(j * kb + b)) %
                    (uint64_t)(b + 1));
      const uint8_t t = take[b];
      take[b] = take[o], take[o] = t;
    }
    for (int64_t b = 0, t = 0; b < kb; b++)
      if (take[b]) idx[j * keep + t++] = (int32_t)b;
  }
  free(take);
  return MB_OK;
}

typedef struct sp_ref {
  const void *a, *v, *i;
  mb_dtype_t dt;
  int64_t k, n;
  mb__sparsity_t kind;
} sp_ref_t;

static mb_status_t sp_ref_prepare(mb__sparsity_t kind, const mb_op_params_t *p,
                                  const void *const *host, void **state) {
  sp_ref_t *r = malloc(sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "sparse gemm reference: no memory");
  *r = (sp_ref_t){host[S_A],    host[S_V],    host[S_I], p->dtype,
                  p->shape[GK], p->shape[GN], kind};
  *state = r;
  return MB_OK;
}

static void sp_ref_element(const void *state, uint32_t out, size_t idx,
                           double *value, double *scale) {
  const sp_ref_t *r = state;
  const int64_t row = (int64_t)idx / r->n, col = (int64_t)idx % r->n;
  const size_t arow = (size_t)(row * r->k);
  double v = 0.0, s = 0.0;
  (void)out;
  if (r->kind == MB__SPARSE_24) {
    for (int64_t g = 0; g < r->k / 4; g++) {
      const unsigned nib = mb__sparse24_nibble(r->i, r->n, g, col);
      for (unsigned h = 0; h < 2; h++) {
        const int64_t kk = 4 * g + ((h ? nib >> 2 : nib) & 3u);
        const double t =
            mb__load(r->a, r->dt, arow + (size_t)kk) *
            mb__load(r->v, r->dt, (size_t)((2 * g + h) * r->n + col));
        v += t, s += fabs(t);
      }
    }
  } else {
    const int64_t bs = MB__SPARSE_BS, keep = mb__sparse_block_keep(r->k);
    const int64_t j = col / bs, c = col % bs;
    for (int64_t t = 0; t < keep; t++) {
      const int64_t kb = ((const int32_t *)r->i)[j * keep + t];
      const size_t base = (size_t)((j * keep + t) * bs * bs);
      for (int64_t q = 0; q < bs; q++) {
        const double x = mb__load(r->a, r->dt, arow + (size_t)(kb * bs + q)) *
                         mb__load(r->v, r->dt, base + (size_t)(q * bs + c));
        v += x, s += fabs(x);
      }
    }
  }
  *value = v;
  *scale = s;
}

static void sp_ref_release(void *state) {
  free(state);
}

static double sp_ref_cost(const mb_op_params_t *p) {
  return (double)p->shape[GK] / 2.0;
}

/* As the dense GEMM's (gemm.c): one rounding to D, and f32 accumulation
 * over the K/2 kept products. A dropped group or a misread index costs
 * about 1/K of the scale or more, far above this. */
static mb__tolerance_t sp_tolerance(const mb_op_params_t *p, uint32_t out) {
  const double u32 = mb_dtype_unit_roundoff(MB_DTYPE_F32);
  (void)out;
  return (mb__tolerance_t){
      0.5, 2.0 * sqrt((double)p->shape[GK] / 2.0) * u32 + 8.0 * u32};
}

static const char *const k_dims[] = {"M", "K", "N"};
static const char *const k_operands24[] = {"A", "B_values", "B_meta", "D"};
static const char *const k_operands_bs[] = {"A", "B_blocks", "B_block_idx",
                                            "D"};

/* Each op's hooks: the shared ones above with its pattern. */
#define SPARSE_HOOKS(pre, k)                                             \
  static mb_status_t pre##_resolve(mb_op_params_t *p) {                  \
    return sp_resolve(k, p);                                             \
  }                                                                      \
  static void pre##_operand(const mb_op_params_t *p, uint32_t role,      \
                            mb_dtype_t *dtype, uint32_t *ndim,           \
                            int64_t *shape) {                            \
    sp_operand(k, p, role, dtype, ndim, shape);                          \
  }                                                                      \
  static double pre##_bytes(const mb_op_params_t *p) {                   \
    return sp_bytes(k, p);                                               \
  }                                                                      \
  static mb_status_t pre##_post_fill(const mb_op_params_t *p,            \
                                     void *const *host, uint64_t seed) { \
    return sp_post_fill(k, p, host, seed);                               \
  }                                                                      \
  static mb_status_t pre##_ref_prepare(                                  \
      const mb_op_params_t *p, const void *const *host, void **state) {  \
    return sp_ref_prepare(k, p, host, state);                            \
  }
SPARSE_HOOKS(s24, MB__SPARSE_24)
SPARSE_HOOKS(sbs, MB__SPARSE_BLOCK)

#define SPARSE_OP(var, pre, nm, sum, doc, operands)      \
  const mb_op_t var = {.name = nm,                       \
                       .summary = sum,                   \
                       .shape_syntax = "MxKxN",          \
                       .dim_names = k_dims,              \
                       .params_doc = doc,                \
                       .rank = 3,                        \
                       .num_inputs = 3,                  \
                       .num_outputs = 1,                 \
                       .operand_names = operands,        \
                       .dtypes = mb__elt_float,          \
                       .num_dtypes = 3,                  \
                       .resolve = pre##_resolve,         \
                       .operand = pre##_operand,         \
                       .flop = sp_flop,                  \
                       .bytes = pre##_bytes,             \
                       .reads_output = sp_reads_output,  \
                       .post_fill = pre##_post_fill,     \
                       .ref_cost = sp_ref_cost,          \
                       .ref_prepare = pre##_ref_prepare, \
                       .ref_element = sp_ref_element,    \
                       .ref_release = sp_ref_release,    \
                       .tolerance = sp_tolerance}

SPARSE_OP(mb__op_gemm_sparse24, s24, "gemm_sparse24",
          "D = A.W, W 2:4 sparse along K (values K/2xN, 2-bit indices); "
          "FLOP = M.N.K, the products done",
          "K a multiple of 8; dtype f32|bf16|f16 (A, values, D)", k_operands24);
SPARSE_OP(mb__op_gemm_block_sparse, sbs, "gemm_block_sparse",
          "D = A.W, W in 64x64 blocks, half of each block column kept "
          "(BSR); FLOP = M.N.K, the products done",
          "K a multiple of 128, N of 64; dtype f32|bf16|f16", k_operands_bs);
