/* The CPU backend's AVX-512 activation, silu_mul and add
 * (backends/cpu/cpu_simd_elt.c, compiled into this test) against the ops'
 * own references and tolerances (lib/ops/activation.c, add.c) over inputs
 * that a random tensor rarely holds: every binade from the subnormals to
 * FLT_MAX, both signs, the exp overflow and underflow edges, +-0, +-inf
 * and NaN, dense sweeps of [-12, 12]; in f32 and bf16, at offsets that
 * leave a masked head and tail, with and without streaming stores.
 *
 * An element passes where the op's check passes it; where the portable
 * kernel's formula (cpu_act_c.c's, repeated here) fails the check too (the
 * sigmoid of x < -87, whose exp overflows), the vector path must give the
 * same value. relu, relu6, leakyrelu, hardswish and add must give the
 * portable kernel's bits. On a CPU without AVX-512 the tests skip. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_eltwise_math.h"
#include "cpu_simd_elt.h"
#include "ops/op_internal.h"
#include "ops/verify.h"
#include "test_util.h"

static int have_bf16(void) {
  return TEST_CPU_HAS("avx512bf16");
}

static int have_avx512(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return 0;
#endif
}

/* The inputs: edges, every binade with a few mantissas, dense sweeps. */
static size_t make_inputs(float *v, size_t cap) {
  static const float edges[] = {
      0.0f,       -0.0f,       INFINITY,     -INFINITY,    NAN,
      -NAN,       FLT_MIN,     -FLT_MIN,     FLT_TRUE_MIN, -FLT_TRUE_MIN,
      FLT_MAX,    -FLT_MAX,    88.7228394f,  88.72284f,    -88.7228394f,
      -88.72284f, 103.972084f, -103.972084f, 104.0f,       -104.0f,
      89.0f,      -89.0f,      87.3f,        -87.3f,       6.0f,
      -3.0f,      3.0f,        1e-30f,       -1e-30f,      1e-40f,
      -1e-40f,    3.9f,        -3.9f,        5.5f,         -5.5f,
      -9.5f};
  size_t n = 0;
  for (size_t i = 0; i < sizeof edges / sizeof edges[0] && n < cap; ++i)
    v[n++] = edges[i];
  static const uint32_t mant[] = {0, 1, 0x2aaaaa, 0x400000, 0x555555, 0x7fffff};
  for (uint32_t e = 0; e < 255; ++e)
    for (size_t m = 0; m < sizeof mant / sizeof mant[0]; ++m)
      for (uint32_t s = 0; s < 2 && n < cap; ++s) {
        const uint32_t b = s << 31 | e << 23 | mant[m];
        memcpy(&v[n++], &b, sizeof b);
      }
  for (int i = -24000; i <= 24000 && n < cap; ++i) v[n++] = (float)i / 2000.0f;
  for (int i = -4000; i <= 4000 && n < cap; ++i)
    v[n++] = (float)i / 100.0f + (i < 0 ? -70.0f : 70.0f);
  return n;
}

/* The portable kernels' formulas (cpu_act_c.c). */
static float portable(mb_activation_t act, float x, float alpha) {
  const float r6 = x + 3.0f < 0 ? 0.0f : x + 3.0f > 6 ? 6.0f : x + 3.0f;
  switch (act) {
    case MB_ACT_RELU:
      return mb__cpu_selectf(x > 0, x, 0.0f);
    case MB_ACT_GELU_TANH:
      return x / (1.0f + mb__cpu_expf(-1.5957691216057308f * x *
                                      (1.0f + 0.044715f * x * x)));
    case MB_ACT_GELU_ERF:
      return 0.5f * x * erfcf(-x * 0.70710678118654752f);
    case MB_ACT_SILU:
      return x / (1.0f + mb__cpu_expf(-x));
    case MB_ACT_SIGMOID:
      return 1.0f / (1.0f + mb__cpu_expf(-x));
    case MB_ACT_LEAKYRELU:
      return mb__cpu_selectf(x > 0, x, 0.0f) +
             alpha * mb__cpu_selectf(x > 0, 0.0f, x);
    case MB_ACT_RELU6:
      return mb__cpu_selectf(x < 0, 0.0f, mb__cpu_selectf(x > 6, 6.0f, x));
    case MB_ACT_HARDSWISH:
      return x * r6 * (1.0f / 6.0f);
    default:
      return NAN;
  }
}

static int exact_act(mb_activation_t act) {
  return act == MB_ACT_RELU || act == MB_ACT_LEAKYRELU || act == MB_ACT_RELU6 ||
         act == MB_ACT_HARDSWISH;
}

static float load(const void *p, mb_dtype_t dt, size_t i) {
  return dt == MB_DTYPE_BF16 ? mb__cvt_bf16_to_f32(((const uint16_t *)p)[i])
                             : ((const float *)p)[i];
}

static float round_out(mb_dtype_t dt, float v) {
  return dt == MB_DTYPE_BF16 ? mb__cvt_bf16_to_f32(mb__cvt_f32_to_bf16(v)) : v;
}

/* `got`'s error at element i as a fraction of what the op's check allows
 * (passing: <= 1; a wrong NaN or infinity: 2). */
static double error_ratio(const mb_op_t *op, const mb_op_params_t *p, void *ref,
                          size_t i, double got) {
  double want, scale;
  op->ref_element(ref, 0, i, &want, &scale);
  if (isnan(want) || isinf(want))
    return (isnan(want) ? isnan(got) : got == want) ? 0.0 : 2.0;
  const mb__tolerance_t tol = op->tolerance(p, 0);
  const double allowed =
      tol.ulps * mb__ulp(p->dtype_out, want) + tol.rel * scale;
  const double err = fabs(got - want);
  return err == 0 ? 0.0 : isnan(err) ? 2.0 : err / allowed;
}

/* The error beyond the output's rounding, as a fraction of the compute
 * error the op allows (rel * scale): how close the maths comes to it. */
static double compute_ratio(const mb_op_t *op, const mb_op_params_t *p,
                            void *ref, size_t i, double got) {
  double want, scale;
  op->ref_element(ref, 0, i, &want, &scale);
  const mb__tolerance_t tol = op->tolerance(p, 0);
  if (!isfinite(want) || tol.rel * scale == 0) return 0;
  const double err = fabs(got - want) - tol.ulps * mb__ulp(p->dtype_out, want);
  return err > 0 ? err / (tol.rel * scale) : 0;
}

/* Whether `got` passes; the worst compute_ratio of the passing ones. */
static int passes(const mb_op_t *op, const mb_op_params_t *p, void *ref,
                  size_t i, double got, double *worst) {
  const double r = error_ratio(op, p, ref, i, got);
  const double c = r <= 1.0 ? compute_ratio(op, p, ref, i, got) : 0;
  if (c > *worst) *worst = c;
  return r <= 1.0;
}

static int same_value(float a, float b) {
  return (isnan(a) && isnan(b)) || a == b;
}

/* Fills x (dtype dt) from the f32 values v, rotated by `shift`. */
static void *fill(const float *v, size_t n, mb_dtype_t dt, size_t shift) {
  void *x = malloc(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float f = v[(i + shift) % n];
    if (dt == MB_DTYPE_BF16)
      ((uint16_t *)x)[i] = mb__cvt_f32_to_bf16(f);
    else
      ((float *)x)[i] = f;
  }
  return x;
}

enum { CAP = 1 << 17 };
/* f32; bf16 rounded in software; bf16 rounded by vcvtneps2bf16. */
static const mb_dtype_t k_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16,
                                      MB_DTYPE_BF16};
static const int k_bf16_hw[] = {0, 0, 1};
static const char *const k_variant[] = {"f32", "bf16", "bf16 (hw)"};

static void test_activation(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  float *v = malloc(CAP * sizeof *v);
  const size_t n = make_inputs(v, CAP);
  for (int a = 0; a < MB_ACT_COUNT; ++a)
    for (size_t d = 0; d < 3; ++d) {
      const mb_dtype_t dt = k_dtypes[d];
      if (k_bf16_hw[d] && !have_bf16()) continue;
      const mb_cpu_simd_un_fn fn =
          mb__cpu_simd_activation_isa((mb_activation_t)a, dt, dt, k_bf16_hw[d]);
      assert_non_null(fn);
      mb_op_params_t p = MB_OP_PARAMS_INIT;
      p.dtype = p.dtype_out = dt;
      p.dtype_acc = MB_DTYPE_F32;
      p.activation = (mb_activation_t)a;
      p.act_alpha = 0.01;
      void *x = fill(v, n, dt, 0), *y = calloc(n, 4);
      const void *host[2] = {x, y};
      void *ref = NULL;
      assert_int_equal(mb__op_activation.ref_prepare(&p, host, &ref), MB_OK);
      size_t bad = 0;
      double worst = 0, scratch = 0;
      for (int stream = 0; stream < 2; ++stream) {
        /* Odd bounds: a masked head (streaming) and tail. */
        fn(y, x, 0, 3, 0.01f, stream);
        fn(y, x, 3, n - 5, 0.01f, stream);
        fn(y, x, n - 5, n, 0.01f, stream);
        for (size_t i = 0; i < n; ++i) {
          const float xi = load(x, dt, i), got = load(y, dt, i);
          const float port = round_out(dt, portable(p.activation, xi, 0.01f));
          const int ok =
              exact_act(p.activation)
                  ? same_value(got, port)
                  : passes(&mb__op_activation, &p, ref, i, got, &worst) ||
                        (!passes(&mb__op_activation, &p, ref, i, port,
                                 &scratch) &&
                         same_value(got, port));
          if (!ok && bad++ < 5)
            fprintf(stderr, "%s %s stream %d: x = %a: got %a, portable %a\n",
                    mb_activation_name(p.activation), k_variant[d], stream, xi,
                    got, port);
        }
      }
      mb__op_activation.ref_release(ref);
      print_message("%-9s %-9s: compute error up to %.2f of the allowed\n",
                    mb_activation_name(p.activation), k_variant[d], worst);
      assert_int_equal(bad, 0);
      free(x);
      free(y);
    }
  free(v);
}

static void test_silu_mul_and_add(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  float *v = malloc(CAP * sizeof *v);
  const size_t n = make_inputs(v, CAP);
  for (size_t d = 0; d < 3; ++d) {
    const mb_dtype_t dt = k_dtypes[d];
    if (k_bf16_hw[d] && !have_bf16()) continue;
    const mb_cpu_simd_bin_fn sm = mb__cpu_simd_silu_mul_isa(dt, dt,
                                                            k_bf16_hw[d]),
                             add = mb__cpu_simd_add_isa(dt, dt, k_bf16_hw[d]);
    assert_non_null(sm);
    assert_non_null(add);
    mb_op_params_t p = MB_OP_PARAMS_INIT;
    p.dtype = p.dtype_b = p.dtype_out = dt;
    p.dtype_acc = MB_DTYPE_F32;
    /* y: the inputs rotated, so every x meets many y. */
    void *x = fill(v, n, dt, 0), *y = fill(v, n, dt, 7919), *z = calloc(n, 4);
    const void *host[3] = {x, y, z};
    void *ref = NULL;
    assert_int_equal(mb__op_silu_mul.ref_prepare(&p, host, &ref), MB_OK);
    size_t bad = 0;
    double worst = 0, scratch = 0;
    for (int stream = 0; stream < 2; ++stream) {
      sm(z, x, y, 0, 5, stream);
      sm(z, x, y, 5, n - 3, stream);
      sm(z, x, y, n - 3, n, stream);
      for (size_t i = 0; i < n; ++i) {
        const float xi = load(x, dt, i), yi = load(y, dt, i);
        const float got = load(z, dt, i);
        const float port = round_out(dt, xi / (1.0f + mb__cpu_expf(-xi)) * yi);
        const int ok = passes(&mb__op_silu_mul, &p, ref, i, got, &worst) ||
                       (!passes(&mb__op_silu_mul, &p, ref, i, port, &scratch) &&
                        same_value(got, port));
        if (!ok && bad++ < 5)
          fprintf(stderr, "silu_mul %s: x = %a, y = %a: got %a, portable %a\n",
                  k_variant[d], xi, yi, got, port);
      }
      add(z, x, y, 0, 9, stream);
      add(z, x, y, 9, n - 1, stream);
      add(z, x, y, n - 1, n, stream);
      for (size_t i = 0; i < n; ++i) {
        const float want = round_out(dt, load(x, dt, i) + load(y, dt, i));
        if (!same_value(load(z, dt, i), want) && bad++ < 5)
          fprintf(stderr, "add %s: element %zu: got %a, want %a\n",
                  k_variant[d], i, load(z, dt, i), want);
      }
    }
    mb__op_silu_mul.ref_release(ref);
    print_message("silu_mul  %-9s: compute error up to %.2f of the allowed\n",
                  k_variant[d], worst);
    assert_int_equal(bad, 0);
    free(x);
    free(y);
    free(z);
  }
  free(v);
}

/* Other dtypes keep the portable kernels. */
static void test_lookup(void **state) {
  (void)state;
  assert_null(mb__cpu_simd_activation(MB_ACT_RELU, MB_DTYPE_F16, MB_DTYPE_F16));
  assert_null(mb__cpu_simd_add(MB_DTYPE_F8E4M3, MB_DTYPE_F32));
  assert_null(mb__cpu_simd_silu_mul(MB_DTYPE_BF16, MB_DTYPE_F32));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_activation),
      cmocka_unit_test(test_silu_mul_and_add),
      cmocka_unit_test(test_lookup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
