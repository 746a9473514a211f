#include "ops/verify.h"

#include <math.h>

#include "dtype_internal.h"
#include "parallel.h"
#include "rng.h"

/* Smallest normal exponent of each float format (subnormal spacing below). */
static int min_exponent(mb_dtype_t dt) {
  switch (dt) {
    case MB_DTYPE_F16:
      return -14;
    case MB_DTYPE_F8E4M3:
      return -6;
    case MB_DTYPE_F8E5M2:
      return -14;
    default:
      return -126; /* f32, bf16 */
  }
}

/* Spacing of `dt` at |x|: 2^(e - (p - 1)), e = max(exponent of x, emin);
 * 1 for integers. */
double mb__ulp(mb_dtype_t dt, double x) {
  if (!mb_dtype_is_float(dt)) return 1.0;
  double u = mb_dtype_unit_roundoff(dt); /* 2^-p */
  int e = min_exponent(dt);
  if (x != 0 && isfinite(x)) {
    int ex;
    frexp(fabs(x), &ex); /* |x| = m 2^ex, m in [0.5, 1) */
    if (ex - 1 > e) e = ex - 1;
  }
  return ldexp(2.0 * u, e);
}

typedef struct err_acc {
  double max_abs, max_rel, max_ratio, sig, noise;
  int nonfinite;
} err_acc_t;

/* Element idx's result against its reference value `want` (and the
 * magnitude `scale` the rel tolerance multiplies), into e. */
static void account(double want, double scale, const void *got_base,
                    mb_dtype_t dt, mb__tolerance_t tol, size_t idx,
                    err_acc_t *e) {
  double got = mb__load(got_base, dt, idx);
  double err = fabs(got - want);
  if (!isfinite(got) && isfinite(want)) e->nonfinite = 1;
  if (err > e->max_abs || isnan(err)) e->max_abs = err;
  if (want != 0 && err / fabs(want) > e->max_rel) e->max_rel = err / fabs(want);
  /* A zero allowance (exact integer results) allows exactly zero error. */
  double allowed = tol.ulps * mb__ulp(dt, want) + tol.rel * scale;
  double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
  if (ratio > e->max_ratio || isnan(ratio)) e->max_ratio = ratio;
  e->sig += want * want;
  e->noise += err * err;
}

static void check_one(const mb_op_t *op, const void *ref, uint32_t out,
                      const void *got_base, mb_dtype_t dt, mb__tolerance_t tol,
                      size_t idx, err_acc_t *e) {
  double want, scale;
  op->ref_element(ref, out, idx, &want, &scale);
  account(want, scale, got_base, dt, tol, idx, e);
}

/* Elements are checked this many at a time (their indices and reference
 * values on the stack). */
enum { LIST = 1024 };

/* The reference values of elements idx[lo, hi) of one output. */
typedef struct ref_job {
  const mb_op_t *op;
  const void *ref;
  uint32_t out;
  const size_t *idx;
  double *want, *scale;
} ref_job_t;

static void ref_part(void *arg, size_t lo, size_t hi) {
  const ref_job_t *j = arg;
  for (size_t k = lo; k < hi; k++)
    j->op->ref_element(j->ref, j->out, j->idx[k], &j->want[k], &j->scale[k]);
}

/* Elements idx[0, n) (n <= LIST) of output `out`, accounted in that order.
 * An op whose reference is pure (ref_pure) has the values computed first,
 * on as many threads as give each at least 2^22 of its work: one by one,
 * the check of attention's backward at 1x4x2048^2x128 took 8 s (on the
 * H100's host, its 32 heads at 4096^2 had not finished setting up and
 * checking in 45 s). Accounted in the same order, the result is the same
 * on any machine. */
static void check_list(const mb_op_t *op, const mb_op_params_t *p,
                       const void *ref, uint32_t out, const void *got_base,
                       mb_dtype_t dt, mb__tolerance_t tol, const size_t *idx,
                       size_t n, err_acc_t *e) {
  if (!op->ref_pure) {
    for (size_t k = 0; k < n; k++)
      check_one(op, ref, out, got_base, dt, tol, idx[k], e);
    return;
  }
  double want[LIST], scale[LIST];
  ref_job_t job = {op, ref, out, idx, want, scale};
  const double cost = op->ref_cost(p);
  const double per = cost > 0 ? 0x1p22 / cost : (double)n; /* a thread's */
  const size_t min_part = per >= (double)n ? n : per < 1 ? 1 : (size_t)per;
  mb__parallel_for(n, min_part, 1, ref_part, &job);
  for (size_t k = 0; k < n; k++)
    account(want[k], scale[k], got_base, dt, tol, idx[k], e);
}

void mb__sampler_init(mb__sampler_t *s, size_t total, uint64_t cols,
                      uint64_t seed) {
  if (cols == 0 || cols > total) cols = total ? total : 1;
  *s = (mb__sampler_t){
      total, cols, (total + cols - 1) / cols, MB__VERIFY_TILE, 0, 0, 0, seed};
  for (;; s->tile *= 2) {
    s->tiles_r = (s->rows + s->tile - 1) / s->tile;
    s->tiles_c = (s->cols + s->tile - 1) / s->tile;
    if (s->tiles_r * s->tiles_c <= MB__VERIFY_SAMPLES / 2) break;
  }
  s->tiles = s->tiles_r * s->tiles_c;
}

size_t mb__sampler_index(const mb__sampler_t *s, uint32_t i) {
  const uint64_t rnd = mb__rng_u64(s->seed, i);
  if (i >= s->tiles) return (size_t)(rnd % s->total);
  /* Tile i (row-major), and a place in it from the two halves of rnd; an
   * edge tile is cut to what the output has. */
  const uint64_t r0 = i / s->tiles_c * s->tile, c0 = i % s->tiles_c * s->tile;
  const uint64_t h = s->rows - r0 < s->tile ? s->rows - r0 : s->tile;
  const uint64_t w = s->cols - c0 < s->tile ? s->cols - c0 : s->tile;
  const size_t idx =
      (size_t)((r0 + (rnd >> 32) % h) * s->cols + c0 + (rnd & 0xFFFFFFFFu) % w);
  return idx < s->total ? idx : (size_t)(rnd % s->total);
}

mb_status_t mb__verify(const mb_op_t *op, const mb_op_params_t *p,
                       const void *const *host, const void *const *outs,
                       uint64_t seed, mb_correctness_t *c) {
  void *ref = NULL;
  mb_status_t st = op->ref_prepare(p, host, &ref);
  if (st != MB_OK) return st;
  mb__verify_with(op, p, ref, outs, seed, c);
  op->ref_release(ref);
  return MB_OK;
}

void mb__verify_with(const mb_op_t *op, const mb_op_params_t *p,
                     const void *ref, const void *const *outs, uint64_t seed,
                     mb_correctness_t *c) {
  err_acc_t e = {0, 0, 0, 0, 0, 0};
  uint64_t checked = 0, total_all = 0;
  double max_tol = 0;
  for (uint32_t out = 0; out < op->num_outputs; out++) {
    uint32_t role = op->num_inputs + out;
    mb_dtype_t dt;
    uint32_t nd;
    int64_t shape[MB_MAX_DIMS];
    op->operand(p, role, &dt, &nd, shape);
    size_t total = mb__operand_numel(op, p, role);
    mb__tolerance_t tol = op->tolerance(p, out);
    if (tol.rel > max_tol) max_tol = tol.rel;
    total_all += total;
    if ((double)total * op->ref_cost(p) <= (double)MB__VERIFY_FULL_WORK ||
        total <= MB__VERIFY_SAMPLES) {
      size_t idx[LIST];
      for (size_t i0 = 0; i0 < total; i0 += LIST) {
        const size_t n = total - i0 < LIST ? total - i0 : LIST;
        for (size_t k = 0; k < n; k++) idx[k] = i0 + k;
        check_list(op, p, ref, out, outs[out], dt, tol, idx, n, &e);
      }
      checked += total;
    } else {
      mb__sampler_t smp;
      mb__sampler_init(&smp, total, nd ? (uint64_t)shape[nd - 1] : total,
                       seed + out);
      /* The corners first: they catch edge-handling bugs uniform sampling
       * may miss; then the samples, LIST at a time. */
      size_t idx[LIST] = {0, total - 1}, n = 2;
      for (uint32_t s = 0; s < MB__VERIFY_SAMPLES; s++) {
        /* An op whose reference costs more for some elements than others
         * (a transformer block computes whole sequences) picks where, so
         * it is not made to visit every tile. */
        idx[n++] =
            op->ref_sample
                ? op->ref_sample(p, out, mb__rng_u64(seed + out, s)) % total
                : mb__sampler_index(&smp, s);
        if (n == LIST || s + 1 == MB__VERIFY_SAMPLES) {
          check_list(op, p, ref, out, outs[out], dt, tol, idx, n, &e);
          n = 0;
        }
      }
      checked += MB__VERIFY_SAMPLES + 2;
    }
  }
  c->checked = 1;
  c->max_abs_err = e.max_abs;
  c->max_rel_err = e.max_rel;
  c->max_err_ratio = e.max_ratio;
  c->sqnr_db = e.noise > 0 ? 10.0 * log10(e.sig / e.noise) : INFINITY;
  c->tolerance = max_tol;
  c->elements_checked = checked;
  c->elements_total = total_all;
  c->pass = !e.nonfinite && e.max_ratio <= 1.0;
}
