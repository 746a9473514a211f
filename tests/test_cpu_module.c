/* The CPU backend module on its own: loaded with dlopen as the library would,
 * given a host table built from the public API, and checked hook by hook.
 * Every kernel in its table (each implementation, each signature) is run on
 * small odd shapes and compared with a double-precision reference computed
 * here from the same rounded inputs. Random data comes from a fixed seed so
 * a failure reproduces. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "microbench.h"
#include "microbench/sys/backend.h"
#include "test_util.h"

/* ---- the host table ------------------------------------------------------ */

static char g_last_error[1024];

static void host_log(void *host, mb_log_level_t level, const char *fmt, ...) {
  (void)host;
  if (level > MB_LOG_WARN && !getenv("MB_TEST_VERBOSE")) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[cpu module log %d] ", (int)level);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void host_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
  va_end(ap);
}

static mb_host_api_t make_host(void) {
  mb_host_api_t h = {
      .abi_version = MB_BACKEND_ABI_VERSION,
      .struct_size = sizeof(mb_host_api_t),
      .host = NULL,
      .log = host_log,
      .set_error = host_set_error,
      .convert = mb_convert,
      .dtype_bytes = mb_dtype_bytes,
      .dtype_name = mb_dtype_name,
  };
  return h;
}

/* ---- fixture: the module, loaded and initialised once -------------------- */

typedef struct fixture {
  void *dl;
  mb_backend_entry_fn entry;
  const mb_backend_vtable_t *vt;
  mb_host_api_t host;
  void *state;
  cpu_set_t before; /* this thread's binding before init */
} fixture_t;

static int group_setup(void **state) {
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  if (!dir) {
    fprintf(stderr, "MB_TEST_MODULE_DIR is not set\n");
    return -1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/mb_backend_cpu.so", dir);
  fixture_t *fx = calloc(1, sizeof *fx);
  if (!fx) return -1;
  fx->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!fx->dl) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    free(fx);
    return -1;
  }
  /* POSIX: a data pointer converts to a function pointer through memcpy. */
  void *sym = dlsym(fx->dl, MB_BACKEND_ENTRY_SYMBOL);
  if (!sym) {
    fprintf(stderr, "%s: no symbol %s\n", path, MB_BACKEND_ENTRY_SYMBOL);
    dlclose(fx->dl);
    free(fx);
    return -1;
  }
  memcpy(&fx->entry, &sym, sizeof sym);
  fx->host = make_host();
  if (sched_getaffinity(0, sizeof fx->before, &fx->before) != 0) {
    fprintf(stderr, "sched_getaffinity failed\n");
    dlclose(fx->dl);
    free(fx);
    return -1;
  }
  fx->vt = fx->entry(&fx->host);
  if (!fx->vt || fx->vt->init(&fx->host, &fx->state) != MB_OK) {
    fprintf(stderr, "cpu module: %s\n", g_last_error);
    dlclose(fx->dl);
    free(fx);
    return -1;
  }
  *state = fx;
  return 0;
}

static int group_teardown(void **state) {
  fixture_t *fx = *state;
  fx->vt->fini(fx->state);
  dlclose(fx->dl);
  free(fx);
  return 0;
}

/* ---- data ---------------------------------------------------------------- */

/* Uniform in [-1, 1). */
static float uniform(uint64_t *s) {
  return (float)((double)(test_splitmix64(s) >> 11) * 0x1p-52 - 1.0);
}

/* A device buffer of `count` elements of `dtype` and the exact values it
 * holds, as double. */
typedef struct operand {
  mb_dtype_t dtype;
  size_t count;
  void *dev;
  double *values;
} operand_t;

/* Rounds `src` (f32) to the operand's dtype, uploads it, and keeps the
 * rounded values. */
static void operand_set(fixture_t *fx, operand_t *o, const float *src) {
  const size_t bytes = mb_dtype_bytes(o->dtype, o->count);
  void *host = malloc(bytes);
  float *back = malloc(o->count * sizeof *back);
  assert_non_null(host);
  assert_non_null(back);
  assert_int_equal(mb_convert(host, o->dtype, src, MB_DTYPE_F32, o->count, 0),
                   MB_OK);
  assert_int_equal(mb_convert(back, MB_DTYPE_F32, host, o->dtype, o->count, 0),
                   MB_OK);
  for (size_t i = 0; i < o->count; ++i) o->values[i] = back[i];
  assert_int_equal(fx->vt->copy_to_device(fx->state, 0, o->dev, host, bytes),
                   MB_OK);
  free(back);
  free(host);
}

/* Downloads the operand into o->values. */
static void operand_get(fixture_t *fx, operand_t *o) {
  const size_t bytes = mb_dtype_bytes(o->dtype, o->count);
  void *host = malloc(bytes);
  float *f = malloc(o->count * sizeof *f);
  assert_non_null(host);
  assert_non_null(f);
  assert_int_equal(fx->vt->copy_to_host(fx->state, 0, host, o->dev, bytes),
                   MB_OK);
  assert_int_equal(mb_convert(f, MB_DTYPE_F32, host, o->dtype, o->count, 0),
                   MB_OK);
  for (size_t i = 0; i < o->count; ++i) o->values[i] = f[i];
  free(f);
  free(host);
}

static void operand_init(fixture_t *fx, operand_t *o, mb_dtype_t dtype,
                         size_t count) {
  o->dtype = dtype;
  o->count = count;
  o->values = calloc(count, sizeof *o->values);
  assert_non_null(o->values);
  assert_int_equal(
      fx->vt->alloc(fx->state, 0, mb_dtype_bytes(dtype, count), &o->dev),
      MB_OK);
}

/* Random values, or all NaN: an output the kernel must overwrite without
 * reading (beta = 0) is filled with NaN so reading it shows. */
static void operand_fill(fixture_t *fx, operand_t *o, uint64_t *rng, int nan) {
  float *src = malloc(o->count * sizeof *src);
  assert_non_null(src);
  for (size_t i = 0; i < o->count; ++i) src[i] = nan ? NAN : uniform(rng);
  operand_set(fx, o, src);
  free(src);
}

static void operand_fini(fixture_t *fx, operand_t *o) {
  fx->vt->free(fx->state, 0, o->dev);
  free(o->values);
}

/* ---- running one kernel -------------------------------------------------- */

/* prepare + run + release on in[0], in[1] -> out. MB_ERR_UNSUPPORTED from
 * prepare is passed back (the kernel may not run on this CPU). */
static mb_status_t run_kernel(fixture_t *fx, const mb_backend_kernel_t *k,
                              const mb_op_params_t *p, operand_t *in,
                              operand_t *out) {
  void *ins[2] = {in[0].dev, in[1].dev};
  void *outs[1] = {out->dev};
  const mb_kernel_call_t call = {sizeof call, p, ins, 2, outs, 1, 0, 0u};
  void *ks = NULL;
  g_last_error[0] = '\0';
  mb_status_t s = k->prepare(fx->state, &call, &ks);
  if (s != MB_OK) return s;
  s = k->run(ks, &call);
  k->release(ks);
  return s;
}

static mb_op_params_t params_for(const mb_backend_kernel_t *k) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.dtype = k->dtype;
  p.dtype_b = k->dtype_b;
  p.dtype_out = k->dtype_out;
  p.dtype_acc = k->dtype_acc;
  return p;
}

static void note_unsupported(const mb_backend_kernel_t *k) {
  fprintf(stderr, "note: %s/%s %s->%s unsupported here: %s\n", k->op, k->name,
          mb_dtype_name(k->dtype), mb_dtype_name(k->dtype_out), g_last_error);
}

/* Kernels a test examined and those that ran and passed every check, all
 * and the portable ("c") ones, which have no reason to decline anywhere. */
typedef struct kernel_tally {
  int ran, portable, portable_ran;
} kernel_tally_t;

static void tally_kernel(kernel_tally_t *t, const mb_backend_kernel_t *k,
                         int ran) {
  const int portable = strcmp(k->name, "c") == 0;
  t->ran += ran;
  t->portable += portable;
  t->portable_ran += portable && ran;
}

/* ---- gemm ---------------------------------------------------------------- */

/* Relative accuracy of the f32 accumulation, against sum |alpha·a·b| +
 * |beta·d|: K roundings of 2^-24 in the worst case for our K ≤ 140, far
 * less in practice. */
static const double f32_acc_tol = 1e-5;

/* With MB_PARAM_TRANS_A A is stored K x M, with MB_PARAM_TRANS_B B is
 * stored N x K: element (i, p) of A and (p, j) of B as stored. */
static size_t a_at(uint32_t flags, size_t m, size_t kk, size_t i, size_t p) {
  return (flags & MB_PARAM_TRANS_A) ? p * m + i : i * kk + p;
}
static size_t b_at(uint32_t flags, size_t kk, size_t n, size_t p, size_t j) {
  return (flags & MB_PARAM_TRANS_B) ? j * kk + p : p * n + j;
}

/* 1 when the kernel ran and matched the reference, 0 when it declined
 * (MB_ERR_UNSUPPORTED, noted); a wrong result fails the test. */
static int check_gemm(fixture_t *fx, const mb_backend_kernel_t *k, size_t m,
                      size_t kk, size_t n, double alpha, double beta,
                      uint32_t flags, uint64_t *rng) {
  mb_op_params_t p = params_for(k);
  p.ndim = 3;
  p.shape[0] = (int64_t)m;
  p.shape[1] = (int64_t)kk;
  p.shape[2] = (int64_t)n;
  p.alpha = alpha;
  p.beta = beta;
  p.flags = flags;
  operand_t in[2], d;
  operand_init(fx, &in[0], k->dtype, m * kk);
  operand_init(fx, &in[1], k->dtype_b, kk * n);
  operand_init(fx, &d, k->dtype_out, m * n);
  operand_fill(fx, &in[0], rng, 0);
  operand_fill(fx, &in[1], rng, 0);
  operand_fill(fx, &d, rng, beta == 0.0);
  double *d0 = malloc(m * n * sizeof *d0);
  assert_non_null(d0);
  memcpy(d0, d.values, m * n * sizeof *d0);

  const mb_status_t s = run_kernel(fx, k, &p, in, &d);
  if (s == MB_ERR_UNSUPPORTED) {
    note_unsupported(k);
  } else {
    if (s != MB_OK) fail_msg("gemm/%s: %s", k->name, g_last_error);
    operand_get(fx, &d);
    const double u_out = mb_dtype_unit_roundoff(k->dtype_out);
    const double *a = in[0].values, *b = in[1].values;
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double dot = 0.0, mag = 0.0;
        for (size_t p2 = 0; p2 < kk; ++p2) {
          const double x = a[a_at(flags, m, kk, i, p2)];
          const double y = b[b_at(flags, kk, n, p2, j)];
          dot += x * y;
          mag += fabs(x * y);
        }
        const double c0 = beta != 0.0 ? d0[i * n + j] : 0.0;
        const double ref = alpha * dot + beta * c0;
        const double tol = u_out * fabs(ref) +
                           f32_acc_tol * (fabs(alpha) * mag + fabs(beta * c0)) +
                           1e-30;
        const double got = d.values[i * n + j];
        if (!(fabs(got - ref) <= tol))
          fail_msg(
              "gemm/%s %s,%s->%s %zux%zux%zu alpha %g beta %g flags %u: "
              "D[%zu,%zu] = %.9g, reference %.9g (tolerance %.3g)",
              k->name, mb_dtype_name(k->dtype), mb_dtype_name(k->dtype_b),
              mb_dtype_name(k->dtype_out), m, kk, n, alpha, beta, flags, i, j,
              got, ref, tol);
      }
    }
  }
  free(d0);
  operand_fini(fx, &in[0]);
  operand_fini(fx, &in[1]);
  operand_fini(fx, &d);
  return s == MB_OK;
}

static void test_gemm_kernels(void **state) {
  fixture_t *fx = *state;
  /* Odd sizes, 1x1x1, and one that crosses every blocking boundary of the
   * portable kernel (tiles of 64 x 128 x 512). */
  static const size_t shapes[][3] = {
      {37, 53, 29}, {1, 1, 1}, {64, 128, 96}, {70, 140, 520}};
  static const double scales[][2] = {{1.5, 0.0}, {1.0, 0.5}};
  /* The layout flags on an odd shape and on one whose transposed blocks
   * end off the 8-wide gather of the portable kernel (K % 128 = 13, N %
   * 512 = 11). */
  static const size_t trans_shapes[][3] = {{37, 53, 29}, {70, 141, 523}};
  static const uint32_t trans_flags[] = {MB_PARAM_TRANS_A, MB_PARAM_TRANS_B,
                                         MB_PARAM_TRANS_A | MB_PARAM_TRANS_B};
  uint64_t rng = 42;
  /* Kernels that ran and passed every check: one that declines (even a
   * single shape) is not counted, so a kernel refusing everything cannot
   * pass by being listed. oneDNN may decline on a CPU without the ISA;
   * the portable kernels run everywhere, so each of them must. */
  kernel_tally_t t = {0, 0, 0};
  for (size_t ki = 0; ki < fx->vt->num_kernels; ++ki) {
    const mb_backend_kernel_t *k = &fx->vt->kernels[ki];
    if (strcmp(k->op, "gemm") != 0) continue;
    /* This raw-ABI check covers the plain float GEMMs (f32/bf16 in); the
     * scaled family (fp8, i8, i4) is checked through the harness by
     * tests/test_cpu_quant.c and the conformance suite. */
    if ((k->dtype != MB_DTYPE_F32 && k->dtype != MB_DTYPE_BF16) ||
        k->dtype_b != k->dtype ||
        (k->dtype_out != MB_DTYPE_F32 && k->dtype_out != MB_DTYPE_BF16))
      continue;
    int all = 1;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si)
      for (size_t ci = 0; ci < sizeof scales / sizeof scales[0]; ++ci)
        all &= check_gemm(fx, k, shapes[si][0], shapes[si][1], shapes[si][2],
                          scales[ci][0], scales[ci][1], 0u, &rng);
    for (size_t si = 0; si < sizeof trans_shapes / sizeof trans_shapes[0]; ++si)
      for (size_t fi = 0; fi < sizeof trans_flags / sizeof trans_flags[0]; ++fi)
        for (size_t ci = 0; ci < sizeof scales / sizeof scales[0]; ++ci)
          all &= check_gemm(fx, k, trans_shapes[si][0], trans_shapes[si][1],
                            trans_shapes[si][2], scales[ci][0], scales[ci][1],
                            trans_flags[fi], &rng);
    tally_kernel(&t, k, all);
  }
  printf("gemm: %d kernels ran and passed, %d of %d portable\n", t.ran,
         t.portable_ran, t.portable);
  /* three signatures of the portable kernel at least, every one run */
  assert_int_equal(t.portable_ran, t.portable);
  assert_true(t.portable_ran >= 3);
}

/* ---- add ----------------------------------------------------------------- */

/* The sum is exact in double and formed in f32 by the kernel, then rounded
 * once to the output: we expect exactly that result. */
/* 1 ran and matched, 0 declined (noted), as check_gemm. */
static int check_add(fixture_t *fx, const mb_backend_kernel_t *k, size_t m,
                     size_t n, uint64_t *rng) {
  mb_op_params_t p = params_for(k);
  p.ndim = 2;
  p.shape[0] = (int64_t)m;
  p.shape[1] = (int64_t)n;
  operand_t in[2], z;
  operand_init(fx, &in[0], k->dtype, m * n);
  operand_init(fx, &in[1], k->dtype_b, m * n);
  operand_init(fx, &z, k->dtype_out, m * n);
  operand_fill(fx, &in[0], rng, 0);
  operand_fill(fx, &in[1], rng, 0);
  operand_fill(fx, &z, rng, 1);
  const mb_status_t s = run_kernel(fx, k, &p, in, &z);
  if (s == MB_ERR_UNSUPPORTED) {
    note_unsupported(k);
  } else {
    if (s != MB_OK) fail_msg("add/%s: %s", k->name, g_last_error);
    operand_get(fx, &z);
    for (size_t i = 0; i < m * n; ++i) {
      const float sum = (float)in[0].values[i] + (float)in[1].values[i];
      float want;
      uint16_t tmp[2];
      assert_int_equal(mb_convert(tmp, k->dtype_out, &sum, MB_DTYPE_F32, 1, 0),
                       MB_OK);
      assert_int_equal(mb_convert(&want, MB_DTYPE_F32, tmp, k->dtype_out, 1, 0),
                       MB_OK);
      if ((double)want != z.values[i])
        fail_msg("add/%s %s %zux%zu: Z[%zu] = %.9g, expected %.9g", k->name,
                 mb_dtype_name(k->dtype), m, n, i, z.values[i], (double)want);
    }
  }
  operand_fini(fx, &in[0]);
  operand_fini(fx, &in[1]);
  operand_fini(fx, &z);
  return s == MB_OK;
}

/* Rounding of bf16 results at the edges, as bit patterns: ties go to even,
 * overflow goes to infinity, NaN stays NaN, signed zero and subnormals
 * survive. Except in oneDNN: its f32->bf16 conversion (vcvtneps2bf16 or its
 * emulation) flushes subnormals to zero, so there a subnormal result may be
 * a zero of the same sign. */
static int check_add_bf16_edges(fixture_t *fx, const mb_backend_kernel_t *k) {
  static const struct {
    uint16_t x, y, z;
  } cases[] = {
      {0x3f80, 0x3b80, 0x3f80}, /* 1 + 2^-8: tie, to even (down) */
      {0x3f81, 0x3b80, 0x3f82}, /* (1 + 2^-7) + 2^-8: tie, to even (up) */
      {0x3f80, 0x3bc0, 0x3f81}, /* 1 + 1.5·2^-8: above the tie, up */
      {0x7f7f, 0x7f7f, 0x7f80}, /* max + max: overflow to +inf */
      {0x8000, 0x8000, 0x8000}, /* -0 + -0 = -0 */
      {0x0001, 0x0001, 0x0002}, /* subnormal + subnormal */
      {0x7fc0, 0x3f80, 0x7fc0}, /* NaN + 1 = NaN */
      {0x7f80, 0xff80, 0x7fc0}, /* inf - inf = NaN */
  };
  enum { N = sizeof cases / sizeof cases[0] };
  mb_op_params_t p = params_for(k);
  p.ndim = 2;
  p.shape[0] = 1;
  p.shape[1] = N;
  operand_t in[2], z;
  operand_init(fx, &in[0], MB_DTYPE_BF16, N);
  operand_init(fx, &in[1], MB_DTYPE_BF16, N);
  operand_init(fx, &z, MB_DTYPE_BF16, N);
  uint16_t x[N], y[N], got[N];
  for (size_t i = 0; i < N; ++i) x[i] = cases[i].x, y[i] = cases[i].y;
  assert_int_equal(fx->vt->copy_to_device(fx->state, 0, in[0].dev, x, sizeof x),
                   MB_OK);
  assert_int_equal(fx->vt->copy_to_device(fx->state, 0, in[1].dev, y, sizeof y),
                   MB_OK);
  const mb_status_t s = run_kernel(fx, k, &p, in, &z);
  if (s == MB_ERR_UNSUPPORTED) {
    note_unsupported(k);
  } else {
    if (s != MB_OK) fail_msg("add/%s: %s", k->name, g_last_error);
    assert_int_equal(fx->vt->copy_to_host(fx->state, 0, got, z.dev, sizeof got),
                     MB_OK);
    const int may_flush = strcmp(k->name, "onednn") == 0;
    int bad = 0;
    for (size_t i = 0; i < N; ++i) {
      const uint16_t want = cases[i].z, mag = want & 0x7fff;
      const int ok = mag > 0x7f80
                         ? (got[i] & 0x7fff) > 0x7f80
                         : got[i] == want || (may_flush && mag < 0x0080 &&
                                              got[i] == (want & 0x8000));
      if (!ok) {
        fprintf(stderr,
                "add/%s bf16: 0x%04x + 0x%04x = 0x%04x, expected 0x%04x\n",
                k->name, x[i], y[i], got[i], want);
        ++bad;
      }
    }
    if (bad) fail_msg("add/%s bf16: %d edge cases wrong", k->name, bad);
  }
  operand_fini(fx, &in[0]);
  operand_fini(fx, &in[1]);
  operand_fini(fx, &z);
  return s == MB_OK;
}

static void test_add_kernels(void **state) {
  fixture_t *fx = *state;
  /* 300x200 is above the portable kernel's threshold for threads. */
  static const size_t shapes[][2] = {{37, 29}, {1, 1}, {64, 96}, {300, 200}};
  uint64_t rng = 7;
  /* Kernels that ran and passed every check, as for gemm. */
  kernel_tally_t t = {0, 0, 0};
  for (size_t ki = 0; ki < fx->vt->num_kernels; ++ki) {
    const mb_backend_kernel_t *k = &fx->vt->kernels[ki];
    if (strcmp(k->op, "add") != 0) continue;
    int all = 1;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si)
      all &= check_add(fx, k, shapes[si][0], shapes[si][1], &rng);
    if (k->dtype == MB_DTYPE_BF16 && k->dtype_out == MB_DTYPE_BF16)
      all &= check_add_bf16_edges(fx, k);
    tally_kernel(&t, k, all);
  }
  printf("add: %d kernels ran and passed, %d of %d portable\n", t.ran,
         t.portable_ran, t.portable);
  assert_int_equal(t.portable_ran, t.portable);
  assert_true(t.portable_ran >= 2);
}

/* ---- the rest of the ABI ------------------------------------------------- */

static void test_vtable(void **state) {
  fixture_t *fx = *state;
  const mb_backend_vtable_t *vt = fx->vt;
  assert_int_equal(vt->abi_version, MB_BACKEND_ABI_VERSION);
  assert_int_equal(vt->struct_size, sizeof(mb_backend_vtable_t));
  assert_string_equal(vt->name, "cpu");
  assert_non_null(vt->description);
  assert_true(vt->num_kernels >= 5);
  for (size_t i = 0; i < vt->num_kernels; ++i) {
    const mb_backend_kernel_t *k = &vt->kernels[i];
    assert_int_equal(k->struct_size, sizeof(mb_backend_kernel_t));
    assert_non_null(k->op);
    assert_non_null(k->name);
    assert_non_null(k->prepare);
    assert_non_null(k->run);
    assert_non_null(k->release);
  }
  const char *v = vt->version(fx->state);
  assert_non_null(v);
  assert_non_null(strstr(v, "hwloc"));
}

static void test_entry_refuses_bad_host(void **state) {
  fixture_t *fx = *state;
  mb_host_api_t h = make_host();
  h.abi_version = MB_BACKEND_ABI_VERSION + 1;
  g_last_error[0] = '\0';
  assert_null(fx->entry(&h));
  assert_non_null(strstr(g_last_error, "ABI"));

  h = make_host();
  h.struct_size = (uint32_t)offsetof(mb_host_api_t, convert);
  g_last_error[0] = '\0';
  assert_null(fx->entry(&h));
  assert_true(g_last_error[0] != '\0');

  assert_null(fx->entry(NULL));
}

static void test_device(void **state) {
  fixture_t *fx = *state;
  const char *why = "unset";
  assert_int_equal(fx->vt->device_count(fx->state, &why), 1);
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  assert_int_equal(fx->vt->device_info(fx->state, 0, &info), MB_OK);
  assert_int_equal(info.struct_size, sizeof info);
  assert_string_equal(info.backend, "cpu");
  assert_int_equal(info.index, 0);
  assert_int_equal(info.kind, MB_DEVICE_CPU);
  assert_non_null(info.name);
  assert_true(info.name[0] != '\0');
  assert_true(info.compute_units >= 1);
  assert_true(info.memory_bytes > 0);
  for (int i = 0; i < 3; ++i) assert_true(info.cache_bytes[i] > 0);
  assert_true(info.cache_bytes[2] >= info.cache_bytes[1]);
  assert_non_null(info.peak_source);
  assert_non_null(strstr(info.peak_source, "measured"));
  assert_int_not_equal(fx->vt->device_info(fx->state, 1, &info), MB_OK);
}

static void test_peaks(void **state) {
  fixture_t *fx = *state;
  const double f32 = fx->vt->peak_flops(fx->state, 0, MB_DTYPE_F32);
  const double bf16 = fx->vt->peak_flops(fx->state, 0, MB_DTYPE_BF16);
  fprintf(stderr, "note: peak f32 %.1f GFLOP/s, bf16 %.1f GFLOP/s\n",
          1e-9 * f32, 1e-9 * bf16);
  assert_true(f32 > 0.0);
  /* Without bf16 instructions the bf16 peak is the f32 one; with them it is
   * about twice as high. 0.9 leaves room for measurement noise. */
  assert_true(bf16 >= 0.9 * f32);
  assert_true(fx->vt->peak_flops(fx->state, 0, MB_DTYPE_F8E4M3) == 0.0);
  assert_true(fx->vt->peak_flops(fx->state, 0, MB_DTYPE_NONE) == 0.0);
}

static void test_memory(void **state) {
  fixture_t *fx = *state;
  /* A small buffer and one big enough for the huge-page alignment. */
  static const size_t sizes[] = {1000, (size_t)3 << 20};
  static const size_t aligns[] = {64, (size_t)2 << 20};
  for (size_t s = 0; s < 2; ++s) {
    const size_t n = sizes[s];
    unsigned char *src = malloc(n), *back = malloc(n);
    assert_non_null(src);
    assert_non_null(back);
    for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)(i * 31u + 7u);
    void *dev = NULL;
    assert_int_equal(fx->vt->alloc(fx->state, 0, n, &dev), MB_OK);
    assert_int_equal((uintptr_t)dev % aligns[s], 0);
    assert_int_equal(fx->vt->copy_to_device(fx->state, 0, dev, src, n), MB_OK);
    assert_int_equal(fx->vt->sync(fx->state, 0), MB_OK);
    assert_int_equal(fx->vt->copy_to_host(fx->state, 0, back, dev, n), MB_OK);
    assert_memory_equal(src, back, n);
    fx->vt->free(fx->state, 0, dev);
    free(src);
    free(back);
  }
#ifndef __SANITIZE_ADDRESS__ /* ASan aborts on absurd sizes by default */
  void *dev = NULL;
  g_last_error[0] = '\0';
  assert_int_equal(fx->vt->alloc(fx->state, 0, SIZE_MAX / 2, &dev),
                   MB_ERR_NO_MEMORY);
  assert_non_null(strstr(g_last_error, "mmap of "));
  /* An operand of 2 MiB and more is a mapping of its own, whatever was
   * freed before: after glibc has freed an 8 MiB block (its mmap threshold
   * is then 8 MiB), a 3 MiB posix_memalign would come from the heap, below
   * the program break. (ASan's allocator has no heap of that kind.) */
  void *big = malloc((size_t)8 << 20);
  assert_non_null(big);
  memset(big, 1, (size_t)8 << 20);
  free(big);
  assert_int_equal(fx->vt->alloc(fx->state, 0, (size_t)3 << 20, &dev), MB_OK);
  assert_true((uintptr_t)dev > (uintptr_t)sbrk(0));
  fx->vt->free(fx->state, 0, dev);
#endif
}

static mb_status_t failing_run(void *kstate, const mb_kernel_call_t *call) {
  (void)kstate, (void)call;
  return MB_ERR_BACKEND;
}

/* Records where the timed batch runs this thread (kstate: a cpu_set_t). */
static mb_status_t binding_run(void *kstate, const mb_kernel_call_t *call) {
  (void)call;
  return sched_getaffinity(0, sizeof(cpu_set_t), kstate) == 0 ? MB_OK
                                                              : MB_ERR_BACKEND;
}

static const mb_backend_kernel_t *find_kernel(const fixture_t *fx,
                                              const char *op, const char *name,
                                              mb_dtype_t dtype) {
  for (size_t i = 0; i < fx->vt->num_kernels; ++i) {
    const mb_backend_kernel_t *k = &fx->vt->kernels[i];
    if (!strcmp(k->op, op) && !strcmp(k->name, name) && k->dtype == dtype)
      return k;
  }
  return NULL;
}

static void test_flush_cache(void **state) {
  fixture_t *fx = *state;
  assert_int_equal(fx->vt->flush_cache(fx->state, 0), MB_OK);
  assert_int_equal(fx->vt->flush_cache(fx->state, 0), MB_OK);
  assert_int_not_equal(fx->vt->flush_cache(fx->state, 1), MB_OK);
}

/* ---- environment facts and telemetry ------------------------------------- */

/* All the facts of `state`, malloc'd; *count how many. */
static mb_kernel_note_t *facts_of(fixture_t *fx, void *state, uint32_t *count) {
  *count = fx->vt->environment(state, 0, NULL, 0);
  mb_kernel_note_t *f = calloc(*count + 1, sizeof *f);
  assert_non_null(f);
  assert_int_equal(fx->vt->environment(state, 0, f, *count), *count);
  return f;
}

static const mb_kernel_note_t *fact(const mb_kernel_note_t *f, uint32_t n,
                                    const char *key) {
  for (uint32_t i = 0; i < n; ++i)
    if (!strcmp(f[i].key, key)) return &f[i];
  return NULL;
}

static double number_fact(const mb_kernel_note_t *f, uint32_t n,
                          const char *key) {
  const mb_kernel_note_t *x = fact(f, n, key);
  if (!x) fail_msg("no environment fact %s", key);
  if (x->text) fail_msg("fact %s is \"%s\", expected a number", key, x->text);
  return x->value;
}

static const char *text_fact(const mb_kernel_note_t *f, uint32_t n,
                             const char *key) {
  const mb_kernel_note_t *x = fact(f, n, key);
  if (!x) fail_msg("no environment fact %s", key);
  if (!x->text)
    fail_msg("fact %s is the number %g, expected text", key, x->value);
  return x->text;
}

/* CPUs in an OS list such as "0-3,8,10-11". -1 when it is not one. */
static int list_weight(const char *list, int *has, int max) {
  int weight = 0;
  for (const char *p = list; *p;) {
    char *end;
    const long lo = strtol(p, &end, 10);
    if (end == p || lo < 0) return -1;
    long hi = lo;
    if (*end == '-') {
      p = end + 1;
      hi = strtol(p, &end, 10);
      if (end == p || hi < lo) return -1;
    }
    for (long c = lo; c <= hi; ++c)
      if (c < max) has[c] = 1;
    weight += (int)(hi - lo + 1);
    if (*end == ',')
      ++end;
    else if (*end)
      return -1;
    p = end;
  }
  return weight;
}

/* The binding fact "t0:pu0(core0) t1:pu3(core1)": the PU and core of each
 * thread, in thread order; returns how many threads, -1 when malformed.
 * Only a thread bound to one PU has that form; "t0:pus0-3(on pu1)" (an
 * unpinned thread) gives pu -1. */
static int parse_binding(const char *b, int *pu, int *core, int max) {
  int n = 0;
  for (const char *p = b; *p && n < max; ++n) {
    unsigned t, u, c;
    int used = 0;
    if (sscanf(p, "t%u:pu%u(core%u)%n", &t, &u, &c, &used) == 3 && used) {
      pu[n] = (int)u;
      core[n] = (int)c;
    } else if (sscanf(p, "t%u:%n", &t, &used) == 1 && used) {
      pu[n] = core[n] = -1;
      used = (int)strcspn(p, " ");
    } else {
      return -1;
    }
    if (t != (unsigned)n) return -1;
    p += used;
    if (*p == ' ') ++p;
  }
  return n;
}

static int key_ok(const char *k) {
  if (!k || !*k) return 0;
  for (; *k; ++k)
    if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_'))
      return 0;
  return 1;
}

enum { max_cpus = 4096 };

static void test_time_batch(void **state) {
  fixture_t *fx = *state;
  const mb_backend_kernel_t *k = find_kernel(fx, "add", "c", MB_DTYPE_F32);
  assert_non_null(k);
  mb_op_params_t p = params_for(k);
  p.ndim = 2;
  p.shape[0] = 256;
  p.shape[1] = 256;
  operand_t in[2], z;
  uint64_t rng = 3;
  operand_init(fx, &in[0], MB_DTYPE_F32, 256 * 256);
  operand_init(fx, &in[1], MB_DTYPE_F32, 256 * 256);
  operand_init(fx, &z, MB_DTYPE_F32, 256 * 256);
  operand_fill(fx, &in[0], &rng, 0);
  operand_fill(fx, &in[1], &rng, 0);
  void *ins[2] = {in[0].dev, in[1].dev}, *outs[1] = {z.dev};
  const mb_kernel_call_t call = {sizeof call, &p, ins, 2, outs, 1, 0, 0u};
  void *ks = NULL;
  assert_int_equal(k->prepare(fx->state, &call, &ks), MB_OK);
  /* The fastest of a few single runs: on a busy machine any one of them
   * may be preempted for longer than 50 runs take, which says nothing
   * about the timer (a preempted batch only makes `many` larger). */
  double one = INFINITY, many = 0.0;
  for (int i = 0; i < 5; i++) {
    double t = 0.0;
    assert_int_equal(fx->vt->time_batch(fx->state, 0, k->run, ks, &call, 1, &t),
                     MB_OK);
    assert_true(t > 0.0);
    if (t < one) one = t;
  }
  assert_int_equal(
      fx->vt->time_batch(fx->state, 0, k->run, ks, &call, 50, &many), MB_OK);
  assert_true(many > one);
  assert_int_equal(
      fx->vt->time_batch(fx->state, 0, failing_run, ks, &call, 3, &one),
      MB_ERR_BACKEND);
  /* The batch runs on thread 0's core (one PU of it, with OpenMP); before
   * and after, this thread has its own binding, a failed batch too. */
  cpu_set_t during, after;
  assert_int_equal(
      fx->vt->time_batch(fx->state, 0, binding_run, &during, &call, 1, &one),
      MB_OK);
  assert_int_equal(sched_getaffinity(0, sizeof after, &after), 0);
  assert_true(CPU_EQUAL(&after, &fx->before));
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, fx->state, &n);
  static int pu[max_cpus], core[max_cpus];
  const int team =
      parse_binding(text_fact(f, n, "binding"), pu, core, max_cpus);
  free(f);
  assert_true(team >= 1);
  if (pu[0] >= 0)
    assert_true(CPU_COUNT(&during) == 1 && CPU_ISSET(pu[0], &during));
  else /* a module without OpenMP pins nothing */
    assert_true(CPU_EQUAL(&during, &fx->before));
  k->release(ks);
  operand_fini(fx, &in[0]);
  operand_fini(fx, &in[1]);
  operand_fini(fx, &z);
}

static void test_environment(void **state) {
  fixture_t *fx = *state;
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, fx->state, &n);
  assert_true(n >= 10);

  /* max = 0 counts and writes nothing; a short array gets exactly max. */
  mb_kernel_note_t few[5];
  memset(few, 0xab, sizeof few);
  unsigned char untouched[sizeof few[0]];
  memset(untouched, 0xab, sizeof untouched);
  assert_int_equal(fx->vt->environment(fx->state, 0, few, 0), n);
  assert_memory_equal(&few[0], untouched, sizeof untouched);
  assert_int_equal(fx->vt->environment(fx->state, 0, few, 3), n);
  assert_string_equal(few[2].key, f[2].key);
  assert_memory_equal(&few[3], untouched, sizeof untouched);
  assert_int_equal(fx->vt->environment(fx->state, 1, few, 5), 0);

  for (uint32_t i = 0; i < n; ++i) {
    if (!key_ok(f[i].key))
      fail_msg("fact key \"%s\" is not [a-z0-9_]+", f[i].key);
    for (uint32_t j = 0; j < i; ++j)
      if (!strcmp(f[i].key, f[j].key)) fail_msg("fact %s twice", f[i].key);
    if (f[i].text ? !*f[i].text : !isfinite(f[i].value))
      fail_msg("fact %s has no value", f[i].key);
  }

  /* The topology agrees with itself and with the device info. */
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  assert_int_equal(fx->vt->device_info(fx->state, 0, &info), MB_OK);
  const double cores = number_fact(f, n, "cores");
  const double pus = number_fact(f, n, "pus");
  const double threads = number_fact(f, n, "threads");
  assert_true(cores == info.compute_units);
  assert_true(pus >= cores);
  assert_true(number_fact(f, n, "packages") >= 1);
  assert_true(number_fact(f, n, "numa_nodes") >= 1);
  const mb_kernel_note_t *smt = fact(f, n, "smt");
  assert_non_null(smt);
  if (!smt->text) assert_true(pus == cores * smt->value);
  assert_true(threads >= 1 && threads <= cores);
  static int allowed[max_cpus];
  memset(allowed, 0, sizeof allowed);
  assert_true(list_weight(text_fact(f, n, "cpuset_allowed"), allowed,
                          max_cpus) == (int)pus);
  assert_true(sysconf(_SC_NPROCESSORS_CONF) >= pus);
  /* Sizes differ between instances on hybrid parts: then a range, as text. */
  const mb_kernel_note_t *l1 = fact(f, n, "l1d_bytes");
  assert_non_null(l1);
  if (!l1->text) assert_true(l1->value >= (double)info.cache_bytes[0]);
  if (fact(f, n, "l3_bytes") && !fact(f, n, "l3_bytes")->text)
    assert_true((double)info.cache_bytes[2] >=
                number_fact(f, n, "l3_bytes") * number_fact(f, n, "l3_count"));
  assert_non_null(strstr(text_fact(f, n, "hwloc_version"), "API"));
  assert_non_null(text_fact(f, n, "clock_source"));
  assert_non_null(text_fact(f, n, "cpuset_inherited"));
  assert_null(fact(f, n, "fsroot"));

  /* One thread per core, each on its own PU, all PUs we may use; the
   * binding is the real one: this thread is thread 0 of the pinned team. */
  static int pu[max_cpus], core[max_cpus];
  const char *binding = text_fact(f, n, "binding");
  const int team = parse_binding(binding, pu, core, max_cpus);
  if (team != (int)threads)
    fail_msg("binding \"%s\": expected %g threads", binding, threads);
  for (int i = 0; i < team; ++i) {
    if (pu[i] < 0) {
      /* Only a module without OpenMP leaves its one thread unpinned. */
      assert_int_equal(team, 1);
      continue;
    }
    assert_true(pu[i] < max_cpus && allowed[pu[i]]);
    assert_true(core[i] < cores);
    for (int j = 0; j < i; ++j) {
      assert_int_not_equal(pu[i], pu[j]);
      assert_int_not_equal(core[i], core[j]);
    }
  }
  /* Between calls this thread has its own binding back (thread 0 is
   * pinned again inside time_batch: test_time_batch): the threads the
   * library starts to fill operands and check results inherit it. */
  cpu_set_t mine;
  assert_int_equal(sched_getaffinity(0, sizeof mine, &mine), 0);
  assert_true(CPU_EQUAL(&mine, &fx->before));

  /* OpenMP placement variables appear exactly when set. */
  static const char *const vars[][2] = {{"omp_places", "OMP_PLACES"},
                                        {"omp_proc_bind", "OMP_PROC_BIND"},
                                        {"omp_num_threads", "OMP_NUM_THREADS"}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
    const char *v = getenv(vars[i][1]);
    if (v && *v)
      assert_string_equal(text_fact(f, n, vars[i][0]), v);
    else
      assert_null(fact(f, n, vars[i][0]));
  }
  fprintf(stderr, "note: %u environment facts; binding %s; clock: %s\n", n,
          binding, text_fact(f, n, "clock_source"));
  free(f);
}

/* Whether this machine's /proc/cpuinfo has "cpu MHz" lines. */
static int cpuinfo_has_mhz(void) {
  FILE *in = fopen("/proc/cpuinfo", "r");
  if (!in) return 0;
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, in))
    found = !strncmp(line, "cpu MHz", 7);
  fclose(in);
  return found;
}

static void test_telemetry(void **state) {
  fixture_t *fx = *state;
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, fx->state, &n);
  const char *source = text_fact(f, n, "clock_source");

  mb_telemetry_t t = MB_TELEMETRY_INIT;
  t.clock_before_hz = 123.0; /* the runner's: must survive */
  assert_int_equal(fx->vt->telemetry(fx->state, 0, &t), MB_OK);
  fprintf(stderr, "note: bound cores at %.1f MHz (%s)\n", 1e-6 * t.sm_clock_hz,
          source);
  if (!strcmp(source, "none")) {
    assert_true(isnan(t.sm_clock_hz));
  } else {
    assert_true(isfinite(t.sm_clock_hz));
    assert_true(t.sm_clock_hz > 1e7 && t.sm_clock_hz < 1e11);
  }
  /* Without cpufreq, a /proc/cpuinfo with clocks must be the source. */
  const char *cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq";
  if (access(cpufreq, R_OK) != 0 && cpuinfo_has_mhz())
    assert_non_null(strstr(source, "/proc/cpuinfo"));
  assert_true(isnan(t.mem_clock_hz) && isnan(t.power_w) && isnan(t.temp_c));
  assert_int_equal(t.throttle, 0);
  assert_true(t.clock_before_hz == 123.0);

  /* An older caller's struct: only what it holds is written. */
  mb_telemetry_t small = {0, 7.0, 7.0, 7.0, 7.0, 7u, 7.0};
  small.struct_size = (uint32_t)offsetof(mb_telemetry_t, mem_clock_hz);
  assert_int_equal(fx->vt->telemetry(fx->state, 0, &small), MB_OK);
  assert_true(strcmp(source, "none") ? small.sm_clock_hz > 0
                                     : isnan(small.sm_clock_hz));
  assert_true(small.mem_clock_hz == 7.0 && small.power_w == 7.0 &&
              small.temp_c == 7.0 && small.throttle == 7u &&
              small.clock_before_hz == 7.0);
  small.struct_size = (uint32_t)offsetof(mb_telemetry_t, sm_clock_hz);
  small.sm_clock_hz = 7.0;
  assert_int_equal(fx->vt->telemetry(fx->state, 0, &small), MB_OK);
  assert_true(small.sm_clock_hz == 7.0);

  assert_int_equal(fx->vt->telemetry(fx->state, 1, &t), MB_ERR_NOT_FOUND);
  free(f);
}

/* ---- a fake sysfs and procfs (MB_CPU_FSROOT) ----------------------------- */

static void write_file(const char *root, const char *rel, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  for (char *s = strchr(path + strlen(root) + 1, '/'); s;
       s = strchr(s + 1, '/')) {
    *s = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
      fail_msg("mkdir %s: %s", path, strerror(errno));
    *s = '/';
  }
  FILE *out = fopen(path, "w");
  if (!out) fail_msg("cannot write %s: %s", path, strerror(errno));
  fputs(text, out);
  fclose(out);
}

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* A backend instance reading sysfs and /proc under `root`. */
static void *init_with_root(fixture_t *fx, const char *root) {
  void *st = NULL;
  assert_int_equal(setenv("MB_CPU_FSROOT", root, 1), 0);
  const mb_status_t s = fx->vt->init(&fx->host, &st);
  unsetenv("MB_CPU_FSROOT");
  if (s != MB_OK)
    fail_msg("init with MB_CPU_FSROOT=%s: %s", root, g_last_error);
  return st;
}

/* The PUs the benchmark threads of `st` are bound to, ascending. */
static int bound_pus(fixture_t *fx, void *st, int *pus, int max) {
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, st, &n);
  static int core[max_cpus], pu[max_cpus];
  const int team =
      parse_binding(text_fact(f, n, "binding"), pu, core, max_cpus);
  free(f);
  assert_true(team >= 1);
  static int seen[max_cpus];
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < team; ++i) {
    if (pu[i] < 0) skip(); /* unpinned (no OpenMP): no bound PUs to fake */
    assert_true(pu[i] < max_cpus);
    seen[pu[i]] = 1;
  }
  int count = 0;
  for (int c = 0; c < max_cpus && count < max; ++c)
    if (seen[c]) pus[count++] = c;
  return count;
}

static void make_root(char *root, size_t size) {
  snprintf(root, size, "%s/mb_cpu_fsroot_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(root)) fail_msg("mkdtemp %s: %s", root, strerror(errno));
}

static void remove_root(const char *root) {
  assert_int_equal(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static long ncpus(void) {
  const long n = sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 && n < max_cpus ? n : 1;
}

static void write_cpufreq(const char *root, long cpus, long base_khz) {
  char rel[256], val[64];
  for (long c = 0; c < cpus; ++c) {
    snprintf(rel, sizeof rel,
             "sys/devices/system/cpu/cpu%ld/cpufreq/scaling_cur_freq", c);
    snprintf(val, sizeof val, "%ld\n", base_khz + 250000 * c);
    write_file(root, rel, val);
  }
}

/* The files hold whole kHz or thousandths of MHz: the mean is exact to
 * rounding. (cmocka's assert_float_equal works in float.) */
static void assert_clock(double got, double want) {
  if (!(fabs(got - want) <= 1e-9 * want))
    fail_msg("clock %.6f Hz, expected %.6f Hz", got, want);
}

static void test_clock_from_cpufreq(void **state) {
  fixture_t *fx = *state;
  char root[4096], rel[256];
  make_root(root, sizeof root);
  const long cpus = ncpus();
  write_cpufreq(root, cpus, 1000000);
  for (long c = 0; c < cpus; ++c) {
    snprintf(rel, sizeof rel,
             "sys/devices/system/cpu/cpu%ld/cpufreq/scaling_governor", c);
    write_file(root, rel, c % 2 ? "powersave\n" : "performance\n");
    snprintf(rel, sizeof rel,
             "sys/devices/system/cpu/cpu%ld/cpufreq/scaling_driver", c);
    write_file(root, rel, "acpi-cpufreq\n");
  }
  write_file(root, "sys/devices/system/cpu/cpufreq/boost", "1\n");

  void *st = init_with_root(fx, root);
  static int pus[max_cpus];
  const int bound = bound_pus(fx, st, pus, max_cpus);
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, st, &n);
  assert_string_equal(text_fact(f, n, "fsroot"), root);
  assert_non_null(strstr(text_fact(f, n, "clock_source"), "scaling_cur_freq"));
  assert_string_equal(text_fact(f, n, "cpufreq_driver"), "acpi-cpufreq");
  assert_true(number_fact(f, n, "boost") == 1.0);
  assert_null(fact(f, n, "intel_pstate_no_turbo"));
  /* Governors that differ are listed per bound CPU. */
  char want[4096] = "";
  int mixed = 0;
  for (int i = 0; i < bound; ++i) mixed |= pus[i] % 2 != pus[0] % 2;
  for (int i = 0; i < bound && mixed; ++i)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%scpu%d:%s",
             i ? " " : "", pus[i], pus[i] % 2 ? "powersave" : "performance");
  if (!mixed)
    snprintf(want, sizeof want, "%s", pus[0] % 2 ? "powersave" : "performance");
  assert_string_equal(text_fact(f, n, "governor"), want);

  /* The clock is the mean over the bound CPUs, read anew on every call. */
  for (long base = 1000000; base <= 2000000; base += 1000000) {
    write_cpufreq(root, cpus, base);
    double sum = 0;
    for (int i = 0; i < bound; ++i)
      sum += 1e3 * (double)(base + 250000 * pus[i]);
    mb_telemetry_t t = MB_TELEMETRY_INIT;
    assert_int_equal(fx->vt->telemetry(st, 0, &t), MB_OK);
    assert_clock(t.sm_clock_hz, sum / bound);
  }
  free(f);
  fx->vt->fini(st);
  remove_root(root);
}

static void test_clock_from_cpuinfo(void **state) {
  fixture_t *fx = *state;
  char root[4096];
  make_root(root, sizeof root);
  const long cpus = ncpus();
  /* A line longer than the backend's buffer before a clock: skipped whole. */
  const size_t long_len = 40000;
  char *text = malloc(cpus * 512 + long_len + 64);
  assert_non_null(text);
  size_t len = 0;
  for (long c = 0; c < cpus; ++c) {
    len +=
        (size_t)sprintf(text + len, "processor\t: %ld\nvendor_id\t: Fake\n", c);
    if (c == 0) {
      len += (size_t)sprintf(text + len, "bugs\t\t:");
      memset(text + len, 'x', long_len);
      len += long_len;
      text[len++] = '\n';
    }
    len += (size_t)sprintf(text + len,
                           "cpu MHz\t\t: %.3f\ncache size\t: 512 KB\n"
                           "flags\t\t: fpu sse hypervisor avx\n\n",
                           1500.0 + 100.0 * (double)c);
  }
  text[len] = '\0';
  write_file(root, "proc/cpuinfo", text);
  free(text);

  void *st = init_with_root(fx, root);
  static int pus[max_cpus];
  const int bound = bound_pus(fx, st, pus, max_cpus);
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, st, &n);
  const char *source = text_fact(f, n, "clock_source");
  assert_non_null(strstr(source, "/proc/cpuinfo"));
  assert_non_null(strstr(source, "virtual machine"));
  assert_null(fact(f, n, "governor"));
  assert_null(fact(f, n, "boost"));
  double sum = 0;
  for (int i = 0; i < bound; ++i) sum += 1e6 * (1500.0 + 100.0 * pus[i]);
  mb_telemetry_t t = MB_TELEMETRY_INIT;
  assert_int_equal(fx->vt->telemetry(st, 0, &t), MB_OK);
  assert_clock(t.sm_clock_hz, sum / bound);
  free(f);
  fx->vt->fini(st);
  remove_root(root);
}

static void test_clock_none(void **state) {
  fixture_t *fx = *state;
  char root[4096];
  make_root(root, sizeof root);
  /* A cpuinfo without clocks (as on arm64) is no source either. */
  write_file(root, "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\n\n");
  void *st = init_with_root(fx, root);
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, st, &n);
  assert_string_equal(text_fact(f, n, "clock_source"), "none");
  assert_null(fact(f, n, "governor"));
  assert_true(number_fact(f, n, "cores") >= 1); /* hwloc: the real machine */
  mb_telemetry_t t = MB_TELEMETRY_INIT;
  assert_int_equal(fx->vt->telemetry(st, 0, &t), MB_OK);
  assert_true(isnan(t.sm_clock_hz));
  free(f);
  fx->vt->fini(st);
  remove_root(root);
}

/* A binding the process was started with (taskset; mpirun binds each rank
 * to its own core) bounds the team: one thread per core inside it, thread 0
 * where the process was put. Pinned over the whole machine, thread 0 of
 * every rank of an mpirun -n 2 went to the first core: two ranks polling
 * MPI on one core, milliseconds per small collective. Last in the list:
 * it leaves this thread's OpenMP team pinned for its own instance. */
static void test_started_bound(void **state) {
  fixture_t *fx = *state;
  uint32_t n;
  mb_kernel_note_t *f = facts_of(fx, fx->state, &n);
  static int allowed[max_cpus];
  memset(allowed, 0, sizeof allowed);
  const int count =
      list_weight(text_fact(f, n, "cpuset_allowed"), allowed, max_cpus);
  free(f);
  if (count < 2) skip(); /* one PU: no other place to start on */
  int top = max_cpus - 1;
  while (!allowed[top]) --top;
  cpu_set_t saved, one, after;
  assert_int_equal(sched_getaffinity(0, sizeof saved, &saved), 0);
  CPU_ZERO(&one);
  CPU_SET(top, &one);
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  void *st = NULL;
  const mb_status_t s = fx->vt->init(&fx->host, &st);
  if (s != MB_OK) fail_msg("init bound to PU %d: %s", top, g_last_error);
  static int pus[max_cpus];
  const int team = bound_pus(fx, st, pus, max_cpus);
  assert_int_equal(sched_getaffinity(0, sizeof after, &after), 0);
  fx->vt->fini(st);
  assert_int_equal(sched_setaffinity(0, sizeof saved, &saved), 0);
  if (team != 1 || pus[0] != top)
    fail_msg("started on PU %d: a team of %d threads, the first on PU %d", top,
             team, pus[0]);
  assert_true(CPU_COUNT(&after) == 1 && CPU_ISSET(top, &after));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vtable),
      cmocka_unit_test(test_entry_refuses_bad_host),
      cmocka_unit_test(test_device),
      cmocka_unit_test(test_peaks),
      cmocka_unit_test(test_memory),
      cmocka_unit_test(test_gemm_kernels),
      cmocka_unit_test(test_add_kernels),
      cmocka_unit_test(test_time_batch),
      cmocka_unit_test(test_flush_cache),
      cmocka_unit_test(test_environment),
      cmocka_unit_test(test_telemetry),
      cmocka_unit_test(test_clock_from_cpufreq),
      cmocka_unit_test(test_clock_from_cpuinfo),
      cmocka_unit_test(test_clock_none),
      cmocka_unit_test(test_started_bound),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
