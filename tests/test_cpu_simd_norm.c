/* The CPU backend's AVX-512 layernorm, rmsnorm and softmax rows
 * (backends/cpu/cpu_simd_norm.c, compiled into this test) against the
 * portable kernels' formulas (cpu_norm_c.c, cpu_softmax_c.c, repeated
 * here) and the ops' own references and tolerances (lib/ops/norm.c,
 * softmax.c), in f32 and bf16, over row lengths around the vector width
 * (masked tails) and rows that a random tensor rarely holds: +-inf, NaN,
 * huge and subnormal values, a large mean against a small spread, large
 * negatives under softmax's max.
 *
 * The norms must give the portable kernel's bits. softmax must pass the
 * op's check wherever the portable formula does, and give its value (NaN
 * included) where it does not. The vector exp alone must be within 2 ulp
 * of exp over every binade. On a CPU without AVX-512 the tests skip. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_eltwise_math.h"
#include "cpu_simd_exp.h"
#include "cpu_simd_norm.h"
#include "ops/op_internal.h"
#include "ops/verify.h"
#include "test_util.h"

static int have_avx512(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return 0;
#endif
}

/* A small deterministic generator (xorshift) and a normal deviate. */
static float normal(uint64_t *s) {
  double u[2];
  for (int i = 0; i < 2; ++i) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    u[i] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
  }
  return (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
}

/* Row r of M rows of N: kind r % 8 decides what it holds. */
static float value(int64_t r, int64_t j, int64_t n, uint64_t *s) {
  const float g = normal(s);
  switch (r % 8) {
    case 1:
      return 1000.0f + 0.01f * g; /* large mean, small spread */
    case 2:
      return j == n / 2 ? INFINITY : g;
    case 3:
      return j == n - 1 ? NAN : g;
    case 4:
      return j % 3 ? -INFINITY : 30.0f * g; /* softmax: exp(-inf) */
    case 5:
      return j % 2 ? -200.0f + g : 1e-40f * g; /* subnormals */
    case 6:
      return 80.0f * g; /* a wide range under exp */
    case 7:
      return j % 5 ? 1e30f * g : -1e30f;
    default:
      return g;
  }
}

static float load(const void *p, mb_dtype_t dt, size_t i) {
  return dt == MB_DTYPE_BF16 ? mb__cvt_bf16_to_f32(((const uint16_t *)p)[i])
                             : ((const float *)p)[i];
}

static void put(void *p, mb_dtype_t dt, size_t i, float v) {
  if (dt == MB_DTYPE_BF16)
    ((uint16_t *)p)[i] = mb__cvt_f32_to_bf16(v);
  else
    ((float *)p)[i] = v;
}

static int same_value(float a, float b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Does `got` pass the op's check against the reference at element i? */
static int passes(const mb_op_t *op, const mb_op_params_t *p, void *ref,
                  size_t i, double got) {
  double want, scale;
  op->ref_element(ref, 0, i, &want, &scale);
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  const mb__tolerance_t tol = op->tolerance(p, 0);
  return fabs(got - want) <=
         tol.ulps * mb__ulp(p->dtype_out, want) + tol.rel * scale;
}

/* The portable row (cpu_norm_c.c's norm_rows), into out (f32). */
static void portable_norm(const float *row, size_t n, int rms, int affine,
                          float eps, const float *w, const float *b,
                          float *out) {
  float lane[64] = {0}, sum = 0, ss = 0;
  for (size_t i = 0; i < n; ++i) lane[i % 64] += row[i];
  for (int l = 0; l < 64; ++l) sum += lane[l];
  const float mean = rms ? 0.0f : sum / (float)n;
  for (int l = 0; l < 64; ++l) lane[l] = 0;
  for (size_t i = 0; i < n; ++i)
    lane[i % 64] += (row[i] - mean) * (row[i] - mean);
  for (int l = 0; l < 64; ++l) ss += lane[l];
  const float rstd = 1.0f / sqrtf(ss / (float)n + eps);
  for (size_t j = 0; j < n; ++j)
    out[j] = !affine ? (row[j] - mean) * rstd
             : rms   ? row[j] * rstd * w[j]
                     : (row[j] - mean) * rstd * w[j] + b[j];
}

/* The portable row (cpu_softmax_c.c's softmax_rows), into out (f32). */
static void portable_softmax(const float *row, size_t n, float *out) {
  float lane[16];
  for (int l = 0; l < 16; ++l) lane[l] = -INFINITY;
  for (size_t i = 0; i < n; ++i)
    lane[i % 16] = mb__cpu_maxf(row[i], lane[i % 16]);
  float mx = lane[0];
  for (int l = 1; l < 16; ++l) mx = mb__cpu_maxf(lane[l], mx);
  for (size_t j = 0; j < n; ++j) out[j] = mb__cpu_expf(row[j] - mx);
  const float inv = 1.0f / mb__cpu_sum_f32(out, n);
  for (size_t j = 0; j < n; ++j) out[j] *= inv;
}

static const mb_dtype_t k_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
static const int64_t k_ns[] = {1, 5, 15, 16, 17, 31, 33, 100, 257, 1000, 8200};
enum { ROWS = 24 };

/* X (dtype dt) of ROWS x n, W ~ 1, Bias ~ 0 (rounded to dt, then f32). */
static void *make_x(mb_dtype_t dt, int64_t n, uint64_t seed) {
  void *x = malloc((size_t)(ROWS * n) * 4);
  for (int64_t r = 0; r < ROWS; ++r)
    for (int64_t j = 0; j < n; ++j)
      put(x, dt, (size_t)(r * n + j), value(r, j, n, &seed));
  return x;
}

static void test_norms(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  for (size_t d = 0; d < 2; ++d)
    for (size_t ni = 0; ni < sizeof k_ns / sizeof k_ns[0]; ++ni)
      for (int variant = 0; variant < 8; ++variant) {
        const mb_dtype_t dt = k_dtypes[d];
        const int64_t n = k_ns[ni];
        const int rms = variant & 1, affine = variant >> 1 & 1,
                  stream = variant >> 2; /* non-temporal stores */
        const mb_cpu_simd_rows_fn fn = mb__cpu_simd_norm(dt);
        assert_non_null(fn);
        void *x = make_x(dt, n, 0x9e3779b97f4a7c15u + (uint64_t)n);
        void *y = calloc((size_t)(ROWS * n), 4);
        void *wq = malloc((size_t)n * 4), *bq = malloc((size_t)n * 4);
        float *w = malloc((size_t)n * 4), *b = malloc((size_t)n * 4);
        float *row = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
        float *buf = malloc((size_t)n * 4);
        uint64_t s = 12345;
        for (int64_t j = 0; j < n; ++j) {
          put(wq, dt, (size_t)j, 1.0f + 0.1f * normal(&s));
          put(bq, dt, (size_t)j, 0.1f * normal(&s));
          w[j] = load(wq, dt, (size_t)j);
          b[j] = load(bq, dt, (size_t)j);
        }
        const mb_cpu_norm_args_t a = {(size_t)n, rms, affine, 1e-5f,
                                      w,         b,   stream};
        /* Rows split at an odd place, as two threads would take them. */
        fn(&a, y, x, 0, 7, buf);
        fn(&a, y, x, 7, ROWS, buf);
        size_t bad = 0;
        for (int64_t r = 0; r < ROWS; ++r) {
          for (int64_t j = 0; j < n; ++j)
            row[j] = load(x, dt, (size_t)(r * n + j));
          portable_norm(row, (size_t)n, rms, affine, 1e-5f, w, b, out);
          for (int64_t j = 0; j < n; ++j) {
            float want = out[j];
            if (dt == MB_DTYPE_BF16)
              want = mb__cvt_bf16_to_f32(mb__cvt_f32_to_bf16(want));
            const float got = load(y, dt, (size_t)(r * n + j));
            if (!same_value(got, want) && bad++ < 5)
              fprintf(stderr,
                      "%s %s n %lld affine %d row %lld col %lld: got %a, "
                      "portable %a\n",
                      rms ? "rmsnorm" : "layernorm", mb_dtype_name(dt),
                      (long long)n, affine, (long long)r, (long long)j, got,
                      want);
          }
        }
        assert_int_equal(bad, 0);
        free(x), free(y), free(wq), free(bq), free(w), free(b);
        free(row), free(out), free(buf);
      }
}

static void test_softmax(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  for (size_t d = 0; d < 4; ++d)
    for (size_t ni = 0; ni < sizeof k_ns / sizeof k_ns[0]; ++ni) {
      const mb_dtype_t dt = k_dtypes[d % 2];
      const int64_t n = k_ns[ni];
      const int stream = (int)(d / 2); /* non-temporal stores */
      const mb_cpu_simd_rows_fn fn = mb__cpu_simd_softmax(dt);
      assert_non_null(fn);
      void *x = make_x(dt, n, 0x2545f4914f6cdd1du + (uint64_t)n);
      void *y = calloc((size_t)(ROWS * n), 4);
      float *row = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
      float *buf = malloc((size_t)n * 4);
      const mb_cpu_norm_args_t a = {.n = (size_t)n, .stream = stream};
      fn(&a, y, x, 0, 5, buf);
      fn(&a, y, x, 5, ROWS, buf);
      mb_op_params_t p = MB_OP_PARAMS_INIT;
      p.dtype = p.dtype_out = dt;
      p.dtype_acc = MB_DTYPE_F32;
      p.shape[0] = ROWS;
      p.shape[1] = n;
      const void *host[2] = {x, y};
      void *ref = NULL;
      assert_int_equal(mb__op_softmax.ref_prepare(&p, host, &ref), MB_OK);
      size_t bad = 0;
      for (int64_t r = 0; r < ROWS; ++r) {
        for (int64_t j = 0; j < n; ++j)
          row[j] = load(x, dt, (size_t)(r * n + j));
        portable_softmax(row, (size_t)n, out);
        for (int64_t j = 0; j < n; ++j) {
          const size_t i = (size_t)(r * n + j);
          float port = out[j];
          if (dt == MB_DTYPE_BF16)
            port = mb__cvt_bf16_to_f32(mb__cvt_f32_to_bf16(port));
          const float got = load(y, dt, i);
          const int ok = passes(&mb__op_softmax, &p, ref, i, got) ||
                         (!passes(&mb__op_softmax, &p, ref, i, port) &&
                          same_value(got, port));
          if (!ok && bad++ < 5)
            fprintf(stderr,
                    "softmax %s n %lld row %lld col %lld: x %a got %a, "
                    "portable %a\n",
                    mb_dtype_name(dt), (long long)n, (long long)r, (long long)j,
                    row[j], got, port);
        }
      }
      mb__op_softmax.ref_release(ref);
      assert_int_equal(bad, 0);
      free(x), free(y), free(row), free(out), free(buf);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) static void exp16(const float *x, float *y) {
  _mm512_storeu_ps(y, mb__cpu_simd_expf(_mm512_loadu_ps(x)));
}
#endif

/* Every binade of both signs (a few mantissas each), the edges, and a
 * dense sweep of [-110, 90]: within 2 ulp of exp (to the least subnormal
 * below FLT_MIN), inf above the range, exactly 0 below -105 (-inf too),
 * NaN for NaN. */
static void test_exp(void **state) {
  (void)state;
  if (!have_avx512()) skip();
#if defined(__x86_64__) && defined(__GNUC__)
  enum { CAP = 1 << 19 };
  float *v = malloc(CAP * sizeof *v), *e = malloc(CAP * sizeof *e);
  size_t n = 0;
  static const float edges[] = {
      0.0f,         -0.0f,        INFINITY,    -INFINITY,   NAN,
      -NAN,         88.7228394f,  88.72284f,   89.0f,       89.5f,
      -87.3365479f, -103.972084f, -103.97209f, -104.0f,     -109.9f,
      -110.0f,      -110.1f,      -1e30f,      FLT_MAX,     -FLT_MAX,
      FLT_TRUE_MIN, -FLT_MIN,     0.34657359f, -0.34657359f};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; ++i) v[n++] = edges[i];
  static const uint32_t mant[] = {0, 1, 0x2aaaaa, 0x400000, 0x555555, 0x7fffff};
  for (uint32_t ex = 0; ex < 255; ++ex)
    for (size_t m = 0; m < sizeof mant / sizeof mant[0]; ++m)
      for (uint32_t s = 0; s < 2; ++s) {
        const uint32_t bits = s << 31 | ex << 23 | mant[m];
        memcpy(&v[n++], &bits, sizeof bits);
      }
  for (int i = 0; n < CAP - 16; ++i) v[n++] = -110.0f + (float)i * 0.0005f;
  n -= n % 16;
  for (size_t i = 0; i < n; i += 16) exp16(v + i, e + i);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double want = exp((double)v[i]);
    const double ulp =
        want < FLT_MIN ? FLT_TRUE_MIN : mb__ulp(MB_DTYPE_F32, want);
    const int ok = isnan(v[i])      ? isnan(e[i])
                   : want > FLT_MAX ? isinf(e[i]) && e[i] > 0
                   : v[i] < -105.0f ? e[i] == 0.0f
                                    : fabs(e[i] - want) <= 2.0 * ulp;
    if (!ok && bad++ < 5)
      fprintf(stderr, "exp(%a) = %a, want %a\n", v[i], e[i], want);
  }
  assert_int_equal(bad, 0);
  free(v);
  free(e);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_norms),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_exp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
