/* The collectives: every rank of the context's communicator runs the op
 * together (mb_op_is_collective). Shape [N]: the size of the exchange in
 * elements as nccl-tests counts it, the same on every rank (OPS.md,
 * docs/distributed.md); n ranks, this one `me`, blocks of b = N / n:
 *
 *   all_reduce      X[N] -> Y[N]  Y = reduction over ranks of X
 *   all_gather      X[b] -> Y[N]  block r of Y = rank r's X
 *   reduce_scatter  X[N] -> Y[b]  Y = reduction of block me of every X
 *   all_to_all      X[N] -> Y[N]  block r of Y = block me of rank r's X
 *   broadcast       X[N] -> Y[N]  Y = the root's X
 *   reduce          X[N] -> Y[N]  on the root Y = the reduction; elsewhere
 *                                 Y is left as it was
 *   sendrecv        X[N] -> Y[N]  X to rank me+1, Y from rank me-1 (a ring)
 *
 * In place (MB_PARAM_IN_PLACE), Y holds the input too, as NCCL lays it
 * out: all of Y, all_gather's block me, reduce_scatter's N elements with
 * the result in block me; X is then one unused element.
 *
 * Bytes: S = N x the element size for every collective, so the result's
 * GB/s is nccl-tests' algbw (S / t); its busbw (the links' load, comparable
 * across rank counts) is algbw x mb__coll_bus_factor. FLOP 0: the
 * reductions' arithmetic is not what is measured.
 *
 * The inputs are a function of (rank, index) alone, small integers that
 * every reduction keeps exact in every dtype in any order (sums stay
 * within +-256, bf16's exact integers; products are +-1 or +-2), so the
 * reference computes every rank's input and demands the exact value. */
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/op_internal.h"

static const mb_dtype_t k_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16,
                                      MB_DTYPE_I32};
static const char *const k_dims[] = {"N"};

/* What sets one collective apart from another. */
typedef struct kind {
  int in_block, out_block;       /* X, Y hold b = N / n rather than N */
  int reduces, rooted, in_place; /* takes reduce_op, root; has in place */
  /* busbw = algbw x num (n - minus) / n; num 0: x 1 */
  double bus_num, bus_minus;
} kind_t;

/* nccl-tests' bus bandwidth factors: all_reduce 2 (n - 1) / n; all_gather,
 * reduce_scatter and all_to_all (n - 1) / n; broadcast, reduce and
 * sendrecv 1 (every byte crosses one link once). */
static const kind_t k_kinds[MB_COLL_COUNT] = {
    [MB_COLL_ALL_REDUCE] = {0, 0, 1, 0, 1, 2, 1},
    [MB_COLL_ALL_GATHER] = {1, 0, 0, 0, 1, 1, 1},
    [MB_COLL_REDUCE_SCATTER] = {0, 1, 1, 0, 1, 1, 1},
    [MB_COLL_ALL_TO_ALL] = {0, 0, 0, 0, 0, 1, 1},
    [MB_COLL_BROADCAST] = {0, 0, 0, 1, 1, 0, 0},
    [MB_COLL_REDUCE] = {0, 0, 1, 1, 1, 0, 0},
    [MB_COLL_SENDRECV] = {0, 0, 0, 0, 0, 0, 0},
};

double mb__coll_bus_factor(mb_coll_kind_t kind, int ranks) {
  const kind_t *k = &k_kinds[kind];
  if (!k->bus_num || ranks < 1) return 1.0;
  return k->bus_num * (ranks - k->bus_minus) / ranks;
}

static int64_t ranks_of(const mb_op_params_t *p) {
  return p->ranks > 0 ? p->ranks : 1;
}
static int in_place(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_IN_PLACE) != 0;
}

/* ---- the inputs --------------------------------------------------------- */

/* A mixing of (rank, index): which small integer each input holds. */
static uint32_t mix(int64_t rank, int64_t i) {
  uint64_t h = (uint64_t)i * UINT64_C(0x9E3779B97F4A7C15) ^
               (uint64_t)(rank + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);
  h ^= h >> 31;
  h *= UINT64_C(0xBF58476D1CE4E5B9);
  return (uint32_t)(h >> 32);
}

/* Rank r's input element i. Sums of n values stay within 256 in any order
 * (k = 256 / n, at most 4); a product is the sign of n values of +-1,
 * times 2 from the one rank i mod n; moves (no reduction) carry a value
 * that differs between ranks and places, so a block in the wrong place
 * shows. */
static double input(const mb_op_params_t *p, int reduces, int64_t r,
                    int64_t i) {
  const int64_t n = ranks_of(p);
  const uint32_t h = mix(r, i);
  if (!reduces) return (double)((int64_t)(h % 401) - 200);
  if (p->reduce_op == MB_REDUCE_PROD)
    return (h & 1u ? -1.0 : 1.0) * (i % n == r ? 2.0 : 1.0);
  const int64_t k = n >= 64 ? 256 / n : 4;
  return (double)((int64_t)(h % (uint32_t)(2 * (k ? k : 1) + 1)) - (k ? k : 1));
}

static double reduce2(uint32_t op, double a, double b) {
  switch (op) {
    case MB_REDUCE_PROD:
      return a * b;
    case MB_REDUCE_MIN:
      return b < a ? b : a;
    case MB_REDUCE_MAX:
      return b > a ? b : a;
    default:
      return a + b;
  }
}

/* The reduction over every rank of element i. */
static double reduced(const mb_op_params_t *p, int64_t i) {
  double v = input(p, 1, 0, i);
  for (int64_t r = 1; r < ranks_of(p); r++)
    v = reduce2(p->reduce_op, v, input(p, 1, r, i));
  return v;
}

/* ---- per kind ----------------------------------------------------------- */

static mb_status_t resolve_kind(const mb_op_t *op, mb_coll_kind_t kind,
                                mb_op_params_t *p) {
  const kind_t *k = &k_kinds[kind];
  if (p->dtype == MB_DTYPE_NONE) p->dtype = MB_DTYPE_F32;
  if (p->dtype_b == MB_DTYPE_NONE) p->dtype_b = p->dtype;
  if (p->dtype_out == MB_DTYPE_NONE) p->dtype_out = p->dtype;
  if (p->dtype_acc == MB_DTYPE_NONE) p->dtype_acc = p->dtype;
  mb_status_t st;
  if ((st = mb__check_dtype(op, "dtype", p->dtype, k_dtypes,
                            sizeof k_dtypes / sizeof *k_dtypes)) != MB_OK ||
      (st = mb__check_dtype(op, "dtype_b", p->dtype_b, &p->dtype, 1)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_out", p->dtype_out, &p->dtype, 1)) !=
          MB_OK ||
      (st = mb__check_dtype(op, "dtype_acc", p->dtype_acc, &p->dtype, 1)) !=
          MB_OK)
    return st;
  if (p->reduce_op >= MB_REDUCE_COUNT)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: reduce_op %u; valid: sum, prod, min, max", op->name,
                    p->reduce_op);
  if (p->ranks < 0 || p->rank < 0 || (p->ranks && p->rank >= p->ranks))
    return mb__fail(MB_ERR_INVALID_ARG, "%s: rank %d of %d is not a rank",
                    op->name, p->rank, p->ranks);
  if (in_place(p) && !k->in_place)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s has no in-place form (all_reduce, all_gather, "
                    "reduce_scatter, broadcast and reduce have)",
                    op->name);
  /* What depends on the ranks is checked once they are known: a plan
   * (ranks 0) is the same file for any job. */
  if (!p->ranks) return MB_OK;
  const int64_t n = p->ranks;
  if (p->root < 0 || p->root >= n)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: root %d is not a rank (0 to %lld here)", op->name,
                    p->root, (long long)(n - 1));
  if ((k->in_block || k->out_block || kind == MB_COLL_ALL_TO_ALL) &&
      p->shape[0] % n)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: N = %lld is not a multiple of the %lld ranks (each "
                    "rank's block is N / ranks)",
                    op->name, (long long)p->shape[0], (long long)n);
  return MB_OK;
}

static void operand_kind(mb_coll_kind_t kind, const mb_op_params_t *p,
                         uint32_t role, mb_dtype_t *dtype, uint32_t *ndim,
                         int64_t *shape) {
  const kind_t *k = &k_kinds[kind];
  const int64_t n = ranks_of(p), N = p->shape[0];
  *dtype = p->dtype;
  *ndim = 1;
  if (role == 0)
    shape[0] = in_place(p) ? 1 : k->in_block ? N / n : N;
  else /* in place, Y holds the input too: reduce_scatter's N */
    shape[0] = k->out_block && !in_place(p) ? N / n : N;
}

/* Y's initial contents matter where the op leaves some of them: in place
 * (the input), and reduce's non-root ranks (left as they were). */
static int reads_output_kind(mb_coll_kind_t kind, const mb_op_params_t *p) {
  return in_place(p) || kind == MB_COLL_REDUCE;
}

/* Rank me's input into X, or in place into Y in NCCL's layout. */
static mb_status_t post_fill_kind(mb_coll_kind_t kind, const mb_op_params_t *p,
                                  void *const *host) {
  const kind_t *k = &k_kinds[kind];
  const int64_t n = ranks_of(p), N = p->shape[0], b = N / n, me = p->rank;
  void *dst = in_place(p) ? host[1] : host[0];
  /* In place, all_gather's input is block me of Y. */
  const int64_t first = in_place(p) && k->in_block ? me * b : 0;
  const int64_t count = k->in_block ? b : N;
  for (int64_t i = 0; i < count; i++)
    mb__store(dst, p->dtype, (size_t)(first + i), input(p, k->reduces, me, i),
              0u);
  return MB_OK;
}

typedef struct coll_ref {
  mb_op_params_t p;
  mb_coll_kind_t kind;
  const void *y0; /* Y's initial contents */
} coll_ref_t;

static mb_status_t ref_prepare_kind(mb_coll_kind_t kind,
                                    const mb_op_params_t *p,
                                    const void *const *host, void **state) {
  coll_ref_t *r = malloc(sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "collective reference: no memory");
  *r = (coll_ref_t){*p, kind, host[1]};
  *state = r;
  return MB_OK;
}

static void ref_element(const void *state, uint32_t out, size_t idx,
                        double *value, double *scale) {
  const coll_ref_t *r = state;
  const mb_op_params_t *p = &r->p;
  const int64_t n = ranks_of(p), N = p->shape[0], b = N / n, me = p->rank;
  const int64_t i = (int64_t)idx;
  (void)out;
  double v;
  switch (r->kind) {
    case MB_COLL_ALL_GATHER:
      v = input(p, 0, i / b, i % b);
      break;
    case MB_COLL_REDUCE_SCATTER:
      /* In place, only block me changes. */
      v = !in_place(p)  ? reduced(p, me * b + i)
          : i / b == me ? reduced(p, i)
                        : mb__load(r->y0, p->dtype, idx);
      break;
    case MB_COLL_ALL_TO_ALL:
      v = input(p, 0, i / b, me * b + i % b);
      break;
    case MB_COLL_BROADCAST:
      v = input(p, 0, p->root, i);
      break;
    case MB_COLL_REDUCE:
      v = me == p->root ? reduced(p, i) : mb__load(r->y0, p->dtype, idx);
      break;
    case MB_COLL_SENDRECV:
      v = input(p, 0, (me + n - 1) % n, i);
      break;
    default: /* all_reduce */
      v = reduced(p, i);
      break;
  }
  *value = v;
  *scale = v < 0 ? -v : v;
}

static void ref_release(void *state) {
  free(state);
}

static double coll_flop(const mb_op_params_t *p) {
  (void)p;
  return 0.0;
}
static double coll_bytes(const mb_op_params_t *p) {
  return mb__bytes(p->dtype, (double)p->shape[0]);
}
static double ref_cost(const mb_op_params_t *p) {
  return (double)ranks_of(p);
}
/* Exact: every input and every partial result is representable. */
static mb__tolerance_t exact(const mb_op_params_t *p, uint32_t out) {
  (void)p;
  (void)out;
  return (mb__tolerance_t){0.0, 0.0};
}

/* One descriptor per collective: the functions that need the kind. */
#define COLL_FUNCS(E, nm)                                                      \
  static mb_status_t nm##_resolve(mb_op_params_t *p) {                         \
    return resolve_kind(&mb__op_##nm, MB_COLL_##E, p);                         \
  }                                                                            \
  static void nm##_operand(const mb_op_params_t *p, uint32_t role,             \
                           mb_dtype_t *dtype, uint32_t *ndim,                  \
                           int64_t *shape) {                                   \
    operand_kind(MB_COLL_##E, p, role, dtype, ndim, shape);                    \
  }                                                                            \
  static int nm##_reads_output(const mb_op_params_t *p) {                      \
    return reads_output_kind(MB_COLL_##E, p);                                  \
  }                                                                            \
  static mb_status_t nm##_post_fill(const mb_op_params_t *p,                   \
                                    void *const *host, uint64_t seed) {        \
    (void)seed;                                                                \
    return post_fill_kind(MB_COLL_##E, p, host);                               \
  }                                                                            \
  static mb_status_t nm##_ref_prepare(const mb_op_params_t *p,                 \
                                      const void *const *host, void **state) { \
    return ref_prepare_kind(MB_COLL_##E, p, host, state);                      \
  }
#define COLL_OP(E, nm, summary_text, doc, mask)         \
  COLL_FUNCS(E, nm)                                     \
  const mb_op_t mb__op_##nm = {                         \
      .name = #nm,                                      \
      .summary = summary_text,                          \
      .shape_syntax = "N",                              \
      .dim_names = k_dims,                              \
      .params_doc = doc,                                \
      .param_mask = (mask),                             \
      .rank = 1,                                        \
      .num_inputs = 1,                                  \
      .num_outputs = 1,                                 \
      .operand_names = mb__operands_xy,                 \
      .dtypes = k_dtypes,                               \
      .num_dtypes = sizeof k_dtypes / sizeof *k_dtypes, \
      .resolve = nm##_resolve,                          \
      .operand = nm##_operand,                          \
      .flop = coll_flop,                                \
      .bytes = coll_bytes,                              \
      .reads_output = nm##_reads_output,                \
      .post_fill = nm##_post_fill,                      \
      .ref_cost = ref_cost,                             \
      .ref_prepare = nm##_ref_prepare,                  \
      .ref_element = ref_element,                       \
      .ref_release = ref_release,                       \
      .tolerance = exact,                               \
      .link_bound = 1,                                  \
      .coll = 1 + MB_COLL_##E,                          \
  };

#define P_RED (MB__P_COLL | MB__P_REDUCE)
COLL_OP(ALL_REDUCE, all_reduce,
        "Y = X reduced over the ranks (N, f32/bf16/f16/i32): collective",
        "reduce_op (sum, prod, min, max), in_place", P_RED | MB__P_IN_PLACE)
COLL_OP(ALL_GATHER, all_gather,
        "Y = every rank's X of N / ranks, in rank order: collective",
        "in_place", MB__P_COLL | MB__P_IN_PLACE)
COLL_OP(REDUCE_SCATTER, reduce_scatter,
        "Y = block `rank` of X reduced over the ranks (X of N): collective",
        "reduce_op (sum, prod, min, max), in_place", P_RED | MB__P_IN_PLACE)
COLL_OP(ALL_TO_ALL, all_to_all,
        "block r of Y = block `rank` of rank r's X (N each): collective", "",
        MB__P_COLL)
COLL_OP(BROADCAST, broadcast, "Y = the root's X (N): collective",
        "root, in_place", MB__P_COLL | MB__P_ROOT | MB__P_IN_PLACE)
COLL_OP(REDUCE, reduce,
        "Y on the root = X reduced over the ranks (N): collective",
        "reduce_op (sum, prod, min, max), root, in_place",
        P_RED | MB__P_ROOT | MB__P_IN_PLACE)
COLL_OP(SENDRECV, sendrecv,
        "X to the next rank, Y from the previous (a ring, N): point to "
        "point",
        "", MB__P_COLL)
