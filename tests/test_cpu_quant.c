/* The CPU backend's quantization and scaled-GEMM kernels.
 *
 * Three levels: the module's fast element converters against the library's
 * generic encoder (a large sample holding every rounding boundary); the
 * quantize and dequantize kernels, called through the module's vtable,
 * against lib/quant.c's mb__quantize_ref byte for byte; and every GEMM
 * variant on every implementation through mb_bench_run, which must pass the
 * op's reference check and say whether the kernel emulates fp8. */
#include <dlfcn.h>
#include <math.h>

#include "../backends/common/mb_cvt.h"
#include "dtype_internal.h"
#include "microbench/sys/backend.h"
#include "ops/op_internal.h"
#include "test_util.h"

/* ---- the module, loaded as the library would ----------------------------- */

typedef struct fixture {
  void *dl;
  const mb_backend_vtable_t *vt;
  mb_host_api_t host;
  void *state;
  mb_context_t *ctx;
} fixture_t;

static char g_error[1024];

static void host_log(void *host, mb_log_level_t level, const char *fmt, ...) {
  (void)host, (void)level, (void)fmt;
}

static void host_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
}

static int setup(void **state) {
  const char *dir = getenv("MB_TEST_MODULE_DIR");
  char path[4096];
  if (!dir) return -1;
  snprintf(path, sizeof path, "%s/mb_backend_cpu.so", dir);
  fixture_t *fx = calloc(1, sizeof *fx);
  if (!fx || !(fx->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    free(fx);
    return -1;
  }
  mb_backend_entry_fn entry;
  void *sym = dlsym(fx->dl, MB_BACKEND_ENTRY_SYMBOL);
  memcpy(&entry, &sym, sizeof sym); /* POSIX: data -> function pointer */
  fx->host = (mb_host_api_t){MB_BACKEND_ABI_VERSION,
                             sizeof(mb_host_api_t),
                             NULL,
                             host_log,
                             host_set_error,
                             mb_convert,
                             mb_dtype_bytes,
                             mb_dtype_name,
                             NULL /* reason: the cpu kernels' are static */,
                             NULL,
                             NULL,
                             NULL /* no communicator */,
                             NULL};
  fx->vt = sym ? entry(&fx->host) : NULL;
  if (!fx->vt || fx->vt->init(&fx->host, &fx->state) != MB_OK) {
    fprintf(stderr, "cpu module: %s\n", g_error);
    dlclose(fx->dl);
    free(fx);
    return -1;
  }
  fx->ctx = test_context(dir);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture_t *fx = *state;
  mb_context_destroy(fx->ctx);
  fx->vt->fini(fx->state);
  dlclose(fx->dl);
  free(fx);
  return 0;
}

/* Roughly normal (sum of uniforms), with a spread of magnitudes. */
static float gauss(uint64_t *s) {
  double u = 0;
  for (int i = 0; i < 4; i++) u += (double)(test_splitmix64(s) >> 11) * 0x1p-53;
  return (float)((u - 2.0) * 1.7);
}

/* ---- converters ---------------------------------------------------------- */

/* What mb__quantize_ref stores for the f32 quotient v. */
static uint8_t ref_byte(mb_dtype_t dt, float v) {
  uint8_t b = 0;
  mb__store(&b, dt, 0, (double)v, MB_CONVERT_SATURATE);
  return b;
}

/* Every pattern of the top 20 bits (sign, exponent, 11 significand bits:
 * every fp8, i8, i4 and f16 rounding boundary lies there) with low bits
 * 0, 1, just below/at/above the half, all ones and one random. */
static void test_converters(void **state) {
  (void)state;
  static const uint32_t lows[] = {0x000, 0x001, 0x7FF, 0x800, 0x801, 0xFFF};
  uint64_t rng = 7;
  size_t bad = 0;
  for (uint32_t hi = 0; hi < (1u << 20); ++hi)
    for (size_t l = 0; l <= 6; ++l) {
      const uint32_t u =
          hi << 12 |
          (l < 6 ? lows[l] : (uint32_t)test_splitmix64(&rng) & 0xFFFu);
      const float x = mb__cvt_float(u);
      const uint8_t got[4] = {mb__cvt_f32_to_e4m3(x), mb__cvt_f32_to_e5m2(x),
                              (uint8_t)mb__cvt_f32_to_i8(x),
                              mb__cvt_f32_to_i4(x)};
      const uint8_t want[4] = {
          ref_byte(MB_DTYPE_F8E4M3, x), ref_byte(MB_DTYPE_F8E5M2, x),
          ref_byte(MB_DTYPE_I8, x), ref_byte(MB_DTYPE_I4, x)};
      const int f16_ok = mb__cvt_f32_to_f16(x) == mb_f32_to_f16(x, 0);
      if (memcmp(got, want, sizeof got) == 0 && f16_ok) continue;
      if (bad++ < 5)
        fprintf(stderr,
                "f32 0x%08x: e4m3 %02x/%02x e5m2 %02x/%02x i8 %02x/%02x "
                "i4 %x/%x f16 %s\n",
                u, got[0], want[0], got[1], want[1], got[2], want[2], got[3],
                want[3], f16_ok ? "ok" : "WRONG");
    }
  for (uint32_t b = 0; b < 256; ++b) {
    const float e4 = mb__cvt_e4m3_to_f32((uint8_t)b),
                e5 = mb__cvt_e5m2_to_f32((uint8_t)b);
    bad += mb__cvt_bits(e4) != mb__cvt_bits(mb_f8e4m3_to_f32((uint8_t)b));
    bad += mb__cvt_bits(e5) != mb__cvt_bits(mb_f8e5m2_to_f32((uint8_t)b));
  }
  for (uint32_t h = 0; h < 65536; ++h)
    bad += mb__cvt_bits(mb__cvt_f16_to_f32((uint16_t)h)) !=
           mb__cvt_bits(mb_f16_to_f32((uint16_t)h));
  assert_int_equal(bad, 0);
}

/* ---- kernels through the vtable ------------------------------------------ */

/* The module's first kernel for the (resolved) params, as the library
 * selects it. */
static const mb_backend_kernel_t *find_kernel(fixture_t *fx, const char *op,
                                              const mb_op_params_t *p) {
  for (size_t i = 0; i < fx->vt->num_kernels; ++i) {
    const mb_backend_kernel_t *k = &fx->vt->kernels[i];
    const char *why = NULL;
    if (strcmp(k->op, op) != 0) continue;
    if ((k->dtype && k->dtype != p->dtype) ||
        (k->dtype_out && k->dtype_out != p->dtype_out))
      continue;
    if (k->supports && k->supports(fx->state, 0, p, &why) != MB_OK) continue;
    return k;
  }
  fail_msg("no %s kernel", op);
  return NULL;
}

static void run_kernel(fixture_t *fx, const char *op, const mb_op_params_t *p,
                       void **in, uint32_t nin, void **out, uint32_t nout) {
  const mb_backend_kernel_t *k = find_kernel(fx, op, p);
  const mb_kernel_call_t call = {sizeof call, p, in, nin, out, nout, 0, 0u};
  void *ks = NULL;
  if (k->prepare(fx->state, &call, &ks) != MB_OK) fail_msg("%s", g_error);
  /* Twice: a second run must not depend on what the first left behind. */
  for (int r = 0; r < 2; ++r)
    if (k->run(ks, &call) != MB_OK) fail_msg("%s", g_error);
  k->release(ks);
}

static void *dev_alloc(fixture_t *fx, size_t bytes, int fill) {
  void *p = NULL;
  assert_int_equal(fx->vt->alloc(fx->state, 0, bytes ? bytes : 1, &p), MB_OK);
  memset(p, fill, bytes);
  return p;
}

enum { ZERO_BLOCK = 1, SPECIALS = 2, ALL_ZERO = 4 };

typedef struct qcase {
  int64_t m, n; /* X */
  mb_dtype_t x, q;
  const char *gran;
  uint32_t flags; /* MB_PARAM_TRANSPOSE, MB_PARAM_STATIC */
  double scale;   /* static */
  unsigned data;  /* ZERO_BLOCK | SPECIALS | ALL_ZERO */
} qcase_t;

/* X as f32 (exact in x's dtype), in Q's orientation for the reference. */
static void make_x(const qcase_t *c, const mb_op_params_t *p, float *xq,
                   void *xdev, uint64_t seed) {
  const int t = (c->flags & MB_PARAM_TRANSPOSE) != 0;
  const int64_t cols = t ? c->m : c->n;
  const size_t count = (size_t)(c->m * c->n);
  float *x = malloc(count * sizeof *x);
  assert_non_null(x);
  for (size_t i = 0; i < count; ++i) x[i] = gauss(&seed);
  if (c->data & SPECIALS) {
    static const float sp[] = {INFINITY,  -INFINITY, NAN,    -0.0f,
                               0x1p-140f, -3e38f,    1e-30f, -NAN};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; ++i)
      x[(i * 7919) % count] = sp[i];
  }
  /* Round to X's dtype and back: the values the kernel sees. */
  assert_int_equal(mb_convert(xdev, c->x, x, MB_DTYPE_F32, count, 0), MB_OK);
  assert_int_equal(mb_convert(x, MB_DTYPE_F32, xdev, c->x, count, 0), MB_OK);
  for (int64_t i = 0; i < c->m; ++i)
    for (int64_t j = 0; j < c->n; ++j) {
      const int64_t r = t ? j : i, q = t ? i : j;
      const int zero = (c->data & ALL_ZERO) ||
                       ((c->data & ZERO_BLOCK) && r < p->scale_a.block[0] &&
                        q < p->scale_a.block[1]);
      xq[r * cols + q] = zero ? 0.0f : x[i * c->n + j];
    }
  /* Zeros go back into X's dtype (zero is exact everywhere). */
  for (int64_t i = 0; i < c->m; ++i)
    for (int64_t j = 0; j < c->n; ++j)
      x[i * c->n + j] = xq[(t ? j : i) * cols + (t ? i : j)];
  assert_int_equal(mb_convert(xdev, c->x, x, MB_DTYPE_F32, count, 0), MB_OK);
  free(x);
}

/* sdt: params.dtype_scale, NONE (f32), e8m0 or f8e4m3 (NVFP4: c->scale is
 * the per-tensor scale, the block scales are computed). */
static void check_quantize_sd(fixture_t *fx, const qcase_t *c, mb_dtype_t sdt) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2, p.shape[0] = c->m, p.shape[1] = c->n;
  p.dtype = c->x, p.dtype_out = c->q, p.flags = c->flags, p.scale = c->scale;
  p.dtype_scale = sdt;
  const int nv = sdt == MB_DTYPE_F8E4M3;
  if (nv) p.flags |= MB_PARAM_STATIC;
  assert_int_equal(mb_scaling_from_string(c->gran, &p.scale_a), MB_OK);
  if (mb_op_resolve(mb_op_find("quantize"), &p) != MB_OK)
    fail_msg("%s", mb_error_last());
  const int t = (c->flags & MB_PARAM_TRANSPOSE) != 0;
  const int64_t rows = t ? c->n : c->m, cols = t ? c->m : c->n;
  const size_t count = (size_t)(rows * cols);
  int64_t gr, gc;
  mb__scaling_grid(&p.scale_a, rows, cols, &gr, &gc);
  const mb_dtype_t gdt = sdt == MB_DTYPE_NONE ? MB_DTYPE_F32 : sdt;
  const size_t qbytes = mb_dtype_bytes(c->q, count),
               gbytes = mb_dtype_bytes(gdt, (size_t)(gr * gc));
  float *xq = malloc(count * sizeof *xq),
        *gref = malloc((size_t)(gr * gc) * sizeof *gref);
  uint8_t *qref = calloc(1, qbytes);
  void *x = dev_alloc(fx, mb_dtype_bytes(c->x, count), 0);
  void *q = dev_alloc(fx, qbytes, 0xA5), *g = dev_alloc(fx, gbytes, 0xFF);
  assert_true(xq && gref && qref);
  make_x(c, &p, xq, x, (uint64_t)(c->m * 31 + c->n) ^ c->q);
  if (nv)
    mb__nvfp4_quantize_ref(xq, rows, cols, &p.scale_a, (float)c->scale, qref,
                           (uint8_t *)gref);
  else
    mb__quantize_ref_sd(xq, rows, cols, &p.scale_a, c->q, p.dtype_scale,
                        (c->flags & MB_PARAM_STATIC) ? c->scale : 0.0, qref,
                        gref);
  /* e8m0 scales: the reference's f32 powers of two as bytes (exact). */
  if (gdt == MB_DTYPE_E8M0)
    mb_convert(gref, gdt, gref, MB_DTYPE_F32, (size_t)(gr * gc), 0);
  void *in[1] = {x}, *out[2] = {q, g};
  run_kernel(fx, "quantize", &p, in, 1, out, 2);
  /* An odd 4-bit count leaves the last high nibble alone: not compared. */
  uint8_t *qb = q;
  if (mb_dtype_bits(c->q) == 4 && (count & 1)) qb[qbytes - 1] &= 0x0F;
  if (memcmp(gref, g, gbytes) != 0 || memcmp(qref, q, qbytes) != 0) {
    size_t i = 0;
    while (i < qbytes && qref[i] == qb[i]) ++i;
    fail_msg(
        "quantize %lldx%lld %s->%s %s%s%s: first difference at byte %zu "
        "(got %02x, want %02x); %s scales %s",
        (long long)c->m, (long long)c->n, mb_dtype_name(c->x),
        mb_dtype_name(c->q), c->gran, t ? " transposed" : "",
        (c->flags & MB_PARAM_STATIC) ? " static" : "", i,
        i < qbytes ? qb[i] : 0, i < qbytes ? qref[i] : 0, mb_dtype_name(gdt),
        memcmp(gref, g, gbytes) ? "DIFFER" : "equal");
  }
  fx->vt->free(fx->state, 0, x);
  fx->vt->free(fx->state, 0, q);
  fx->vt->free(fx->state, 0, g);
  free(xq), free(gref), free(qref);
}

static void check_quantize(fixture_t *fx, const qcase_t *c) {
  check_quantize_sd(fx, c, MB_DTYPE_NONE);
}

static const mb_dtype_t k_qdt[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2,
                                   MB_DTYPE_I8, MB_DTYPE_I4};
static const mb_dtype_t k_xdt[] = {MB_DTYPE_BF16, MB_DTYPE_F32, MB_DTYPE_F16};
static const char *const k_grans[] = {
    "tensor", "row", "col", "block:1x128", "block:128x128", "group:32"};

/* Every q dtype x granularity x transpose x dynamic/static on 256x384 (with
 * one all-zero block), then odd shapes, specials, an all-zero tensor, and
 * saturation under a small static scale. */
static void test_quantize_bitexact(void **state) {
  fixture_t *fx = *state;
  size_t n = 0;
  for (size_t qi = 0; qi < 4; ++qi)
    for (size_t gi = 0; gi < 6; ++gi)
      for (uint32_t f = 0; f < 4; ++f) {
        const qcase_t c = {256,         384, k_xdt[n++ % 3], k_qdt[qi],
                           k_grans[gi], f,   0.0625,         ZERO_BLOCK};
        check_quantize(fx, &c);
      }
  static const char *const odd_grans[] = {"tensor", "row", "col"};
  for (size_t qi = 0; qi < 4; ++qi)
    for (size_t gi = 0; gi < 3; ++gi)
      for (uint32_t f = 0; f < 2; ++f) {
        const qcase_t c = {37, 53,  k_xdt[n++ % 3], k_qdt[qi], odd_grans[gi],
                           f,  0.0, SPECIALS};
        check_quantize(fx, &c);
      }
  for (size_t qi = 0; qi < 4; ++qi) {
    const qcase_t zero = {64,       96, MB_DTYPE_BF16, k_qdt[qi],
                          "tensor", 0,  0.0,           ALL_ZERO};
    const qcase_t sat = {33,         128,     MB_DTYPE_F32,
                         k_qdt[qi],  "row",   MB_PARAM_STATIC,
                         1.0 / 4096, SPECIALS};
    const qcase_t wide = {1, 5000, MB_DTYPE_BF16, k_qdt[qi], "row", 0, 0.0, 0};
    const qcase_t tall = {
        3001, 3, MB_DTYPE_F16, k_qdt[qi], "col", MB_PARAM_TRANSPOSE, 0.0, 0};
    /* Rows longer than the vector loops' 512-element pieces, groups that
     * straddle a piece, and per-column scales on odd rows (mid-byte i4). */
    const qcase_t pieces = {16,         1152, MB_DTYPE_BF16, k_qdt[qi],
                            "group:96", 0,    0.0,           0};
    const qcase_t percol = {9,     1153, MB_DTYPE_F32, k_qdt[qi],
                            "col", 0,    0.0,          SPECIALS};
    /* A transposed Q of 96 rows of 80: whole 32 x 64 tiles, then 16
     * columns; its rows start off a cache line (the streamed stores' plain
     * head and tail). */
    const qcase_t offline = {
        80, 96, MB_DTYPE_BF16, k_qdt[qi], "row", MB_PARAM_TRANSPOSE, 0.0, 0};
    check_quantize(fx, &offline);
    check_quantize(fx, &pieces);
    check_quantize(fx, &percol);
    check_quantize(fx, &zero);
    check_quantize(fx, &sat);
    check_quantize(fx, &wide);
    check_quantize(fx, &tall);
  }
}

/* MXFP8 and MXFP4 (e8m0 scales, the OCP MX rule): the three element
 * formats (e2m1 packed two per byte), 1x32 blocks
 * and others, plain and transposed, dynamic and static (0.5 = 2^-1), with
 * an all-zero block (the smallest scale) and with NaN, infinities and f32
 * subnormals in the data (NaN and infinite blocks get the NaN scale). */
static void test_quantize_mx(void **state) {
  fixture_t *fx = *state;
  static const char *const grans[] = {"block:1x32", "block:32x1", "row",
                                      "block:32x32"};
  static const mb_dtype_t q[] = {MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2,
                                 MB_DTYPE_F4E2M1};
  size_t n = 0;
  for (size_t qi = 0; qi < 3; ++qi)
    for (size_t gi = 0; gi < 4; ++gi)
      for (uint32_t f = 0; f < 4; ++f)
        for (unsigned d = ZERO_BLOCK; d <= SPECIALS; d <<= 1) {
          const uint32_t flags =
              (f & 1 ? MB_PARAM_TRANSPOSE : 0) | (f & 2 ? MB_PARAM_STATIC : 0);
          const qcase_t c = {96,  128, k_xdt[n++ % 3], q[qi], grans[gi], flags,
                             0.5, d};
          check_quantize_sd(fx, &c, MB_DTYPE_E8M0);
        }
  /* FP4 with f32 scales (absmax / 6) on odd shapes: rows start mid-byte,
   * and threads must not split a byte. */
  static const char *const odd[] = {"tensor", "row", "col"};
  for (size_t gi = 0; gi < 3; ++gi)
    for (uint32_t f = 0; f < 2; ++f) {
      const qcase_t c = {37, 53,  k_xdt[n++ % 3], MB_DTYPE_F4E2M1, odd[gi],
                         f,  0.0, SPECIALS};
      check_quantize(fx, &c);
    }
}

/* NVFP4 (e2m1 elements, e4m3 block scales, the per-tensor scale given):
 * 1x16 blocks and others, plain and transposed, with an all-zero block and
 * with specials, under per-tensor scales that put the block scales in
 * e4m3's middle (1/448: amax 4 to 5 of the normal data maps to ~300), at
 * its top (saturating) and near its subnormals. */
static void test_quantize_nvfp4(void **state) {
  fixture_t *fx = *state;
  static const char *const grans[] = {"block:1x16", "block:16x1", "row",
                                      "block:16x16"};
  static const double tensor[] = {1.0 / 448, 1.0 / 4096, 64.0};
  size_t n = 0;
  for (size_t gi = 0; gi < 4; ++gi)
    for (size_t si = 0; si < 3; ++si)
      for (uint32_t t = 0; t < 2; ++t)
        for (unsigned d = ZERO_BLOCK; d <= SPECIALS; d <<= 1) {
          const qcase_t c = {64,
                             96,
                             k_xdt[n++ % 3],
                             MB_DTYPE_F4E2M1,
                             grans[gi],
                             t ? MB_PARAM_TRANSPOSE : 0u,
                             tensor[si],
                             d};
          check_quantize_sd(fx, &c, MB_DTYPE_F8E4M3);
        }
}

/* dequantize: round(fl32(q s)) for every code. */
static void check_dequantize(fixture_t *fx, mb_dtype_t qdt, mb_dtype_t out,
                             const char *gran, int64_t m, int64_t n,
                             mb_dtype_t sdt) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 2, p.shape[0] = m, p.shape[1] = n;
  p.dtype = qdt, p.dtype_out = out, p.dtype_scale = sdt;
  if (sdt == MB_DTYPE_F8E4M3) /* NVFP4's per-tensor scale */
    p.flags |= MB_PARAM_STATIC, p.scale = 0.0078125 * 3;
  assert_int_equal(mb_scaling_from_string(gran, &p.scale_a), MB_OK);
  if (mb_op_resolve(mb_op_find("dequantize"), &p) != MB_OK)
    fail_msg("%s", mb_error_last());
  int64_t gr, gc;
  mb__scaling_grid(&p.scale_a, m, n, &gr, &gc);
  const size_t count = (size_t)(m * n), qbytes = mb_dtype_bytes(qdt, count);
  const size_t obytes = mb_dtype_bytes(out, count);
  uint8_t *q = dev_alloc(fx, qbytes, 0), *d = dev_alloc(fx, obytes, 0xA5);
  float *g = dev_alloc(fx, (size_t)(gr * gc) * 4, 0);
  uint8_t *want = calloc(1, obytes);
  uint64_t rng = (uint64_t)m * 131 + qdt;
  for (size_t i = 0; i < qbytes; ++i) q[i] = (uint8_t)test_splitmix64(&rng);
  for (int64_t i = 0; i < gr * gc; ++i) g[i] = fabsf(gauss(&rng)) + 1e-3f;
  uint8_t *e8 = NULL;
  if (sdt == MB_DTYPE_E8M0) { /* every byte but NaN: 2^-127 .. 2^127 */
    e8 = dev_alloc(fx, (size_t)(gr * gc), 0);
    for (int64_t i = 0; i < gr * gc; ++i) {
      e8[i] = (uint8_t)(test_splitmix64(&rng) % 255);
      g[i] = (float)mb__load(e8, MB_DTYPE_E8M0, (size_t)i);
    }
  }
  if (sdt == MB_DTYPE_F8E4M3) { /* NVFP4: every positive e4m3, times S */
    e8 = dev_alloc(fx, (size_t)(gr * gc), 0);
    for (int64_t i = 0; i < gr * gc; ++i) {
      e8[i] = (uint8_t)(test_splitmix64(&rng) % 127);
      g[i] = (float)mb__load(e8, MB_DTYPE_F8E4M3, (size_t)i) * (float)p.scale;
    }
  }
  assert_non_null(want);
  for (size_t i = 0; i < count; ++i) {
    const float s =
        mb__scale_at(g, &p.scale_a, gc, (int64_t)i / n, (int64_t)i % n);
    mb__store(want, out, i, (double)((float)mb__load(q, qdt, i) * s), 0);
  }
  void *in[2] = {q, e8 ? (void *)e8 : g}, *outs[1] = {d};
  run_kernel(fx, "dequantize", &p, in, 2, outs, 1);
  for (size_t i = 0; i < count; ++i) {
    const double a = mb__load(d, out, i), b = mb__load(want, out, i);
    if (!(a == b || (isnan(a) && isnan(b))) || signbit(a) != signbit(b))
      fail_msg("dequantize %s->%s %s: X[%zu] = %g, want %g", mb_dtype_name(qdt),
               mb_dtype_name(out), gran, i, a, b);
  }
  fx->vt->free(fx->state, 0, q);
  fx->vt->free(fx->state, 0, d);
  fx->vt->free(fx->state, 0, g);
  if (e8) fx->vt->free(fx->state, 0, e8);
  free(want);
}

static void test_dequantize_bitexact(void **state) {
  fixture_t *fx = *state;
  for (size_t qi = 0; qi < 4; ++qi)
    for (size_t oi = 0; oi < 3; ++oi) {
      for (size_t gi = 0; gi < 6; ++gi)
        check_dequantize(fx, k_qdt[qi], k_xdt[oi], k_grans[gi], 256, 384,
                         MB_DTYPE_NONE);
      check_dequantize(fx, k_qdt[qi], k_xdt[oi], "row", 37, 53, MB_DTYPE_NONE);
      check_dequantize(fx, k_qdt[qi], k_xdt[oi], "col", 37, 53, MB_DTYPE_NONE);
      if (qi < 2) /* MXFP8 */
        check_dequantize(fx, k_qdt[qi], k_xdt[oi], "block:1x32", 64, 96,
                         MB_DTYPE_E8M0);
    }
  /* FP4: every code (random bytes hold all 16 nibbles), with f32 scales
   * and as MXFP4, on an odd shape too (a row starts mid-byte). */
  for (size_t oi = 0; oi < 3; ++oi) {
    check_dequantize(fx, MB_DTYPE_F4E2M1, k_xdt[oi], "row", 37, 53,
                     MB_DTYPE_NONE);
    check_dequantize(fx, MB_DTYPE_F4E2M1, k_xdt[oi], "block:1x32", 64, 96,
                     MB_DTYPE_E8M0);
    check_dequantize(fx, MB_DTYPE_F4E2M1, k_xdt[oi], "block:1x16", 64, 96,
                     MB_DTYPE_F8E4M3);
  }
}

/* ---- the harness: every GEMM variant, every implementation --------------- */

enum expect { PASS, SKIP_ONEDNN };

typedef struct gcase {
  const char *op; /* op or alias */
  int64_t m, k, n;
  const char *dtype, *dtype_b, *out, *dtype_q, *scale_a, *scale_b;
  double alpha, beta;
  int emulated;
  enum expect expect;
} gcase_t;

#define N NULL
static const gcase_t k_gemms[] = {
    {"gemm_simple", 64, 128, 96, N, N, N, N, N, N, 1, 0, 1, PASS},
    {"gemm_simple", 17, 33, 9, N, N, "f16", N, N, N, 2, 0, 1, PASS},
    {"gemm", 32, 64, 48, "f8e4m3", N, "bf16", N, "tensor", "tensor", 1, 0, 1,
     PASS},
    {"gemm_fp8", 64, 128, 96, N, N, N, N, N, N, 0.5, 0, 1, PASS},
    {"gemm_fp8", 33, 64, 17, "f8e5m2", "f8e4m3", "f32", N, N, N, 1, 0, 1, PASS},
    {"gemm_fp8", 40, 96, 72, "f8e4m3", "f8e5m2", "f16", N, N, N, 1, 0, 1, PASS},
    {"gemm_accum", 48, 64, 32, N, N, N, N, N, N, 1, 1, 1, PASS},
    {"gemm_fp8_b128", 40, 256, 128, N, N, N, N, N, N, 1, 0, 1, PASS},
    {"gemm_fp8_b128", 64, 384, 256, N, N, "f32", N, N, N, 1, -0.5, 1, PASS},
    {"fp8_2d_block_matmul", 256, 256, 128, N, N, N, N, N, N, 1, 0, 1, PASS},
    {"fp8_2d_block_matmul", 256, 512, 256, N, N, N, N, "256x256", N, 1, 0, 1,
     PASS},
    {"gemm_int8", 33, 64, 17, N, N, N, N, N, N, 1, 0, 0, PASS},
    {"gemm_int8", 70, 1100, 33, N, N, N, N, N, N, 1, 0, 0, PASS},
    {"gemm_int8", 32, 128, 48, N, N, "bf16", N, "row", "col", 1, 0, 0, PASS},
    {"gemm_int8", 16, 64, 16, N, N, "f32", N, "tensor", "tensor", 2, 0.5, 0,
     PASS},
    {"gemm_int8", 32, 256, 128, N, N, "bf16", N, "block:1x128", "block:128x128",
     1, 0, 0, SKIP_ONEDNN},
    {"gemm_int4", 16, 256, 24, N, N, N, N, N, N, 1, 0, 0, PASS},
    {"gemm_int4", 9, 64, 40, "f32", N, "f32", N, N, "group:32", 1, 0, 0, PASS},
    {"gemm_int4", 12, 128, 20, "f16", N, "f16", N, N, "group:32", 1, 0.5, 0,
     PASS},
    {"gemm_fp8_rowwise", 64, 128, 96, N, N, N, N, N, N, 1, 0, 1, PASS},
    {"gemm_fp8_rowwise", 33, 64, 17, "f32", N, "f32", "f8e5m2", N, N, 1, 0, 1,
     PASS},
    {"gemm_fp8_rowwise", 64, 256, 128, N, N, N, N, "block:1x128",
     "block:128x128", 1, 0, 1, PASS},
    {"gemm_fp8_rowwise", 32, 64, 48, N, N, N, "i8", N, N, 1, 0, 0, PASS},
    {"gemm_fp8_rowwise", 64, 256, 128, N, N, N, "i8", "block:1x128",
     "block:128x128", 1, 0, 0, SKIP_ONEDNN},
    {"quantization", 33, 256, 0, N, N, N, N, N, N, 1, 0, 0, PASS},
    {"transpose_quantization", 64, 48, 0, N, N, N, N, N, N, 1, 0, 0, PASS},
    {"dequantize", 40, 256, 0, "i4", N, "bf16", N, "group:32", N, 1, 0, 0,
     PASS},
    /* FP4 (e2m1 packed two per byte): unscaled (gemm_multiple_run with
     * dtype float4), f32 scales; the portable C kernel only (emulated). */
    {"gemm_multiple_run", 33, 64, 17, "float4", N, N, N, N, N, 1, 0, 1,
     SKIP_ONEDNN},
    {"gemm", 32, 96, 40, "f4e2m1", N, "f32", N, "row", "col", 1, 0.5, 1,
     SKIP_ONEDNN},
};
/* MXFP8: e8m0 scales (params.dtype_scale), given or computed in the op. */
static const gcase_t k_mx[] = {
    {"gemm", 64, 128, 48, "f8e4m3", N, "bf16", N, "block:1x32", "block:32x1", 1,
     0, 1, PASS},
    {"gemm", 33, 96, 64, "f8e5m2", "f8e4m3", "f32", N, "block:1x32",
     "block:32x32", 1, 0.5, 1, PASS},
    {"gemm_mxfp8_b32", 64, 256, 96, N, N, N, N, N, N, 1, 0, 1, PASS},
    {"gemm_mxfp8_b32", 17, 64, 24, "f32", N, "f32", "f8e5m2", N, N, 1, 0, 1,
     PASS},
    {"gemm_mxfp8_b32_static_scaling", 48, 128, 32, N, N, N, N, N, N, 1, 0, 1,
     PASS},
    {"quantize", 33, 256, 0, N, N, N, N, "block:1x32", N, 1, 0, 0, PASS},
    {"dequantize", 40, 256, 0, "f8e5m2", N, "f32", N, "block:1x32", N, 1, 0, 0,
     PASS},
    /* MXFP4: e2m1 elements, given or quantized inside (C kernels only). */
    {"gemm", 64, 128, 48, "f4e2m1", N, "bf16", N, "block:1x32", "block:32x1", 1,
     0, 1, SKIP_ONEDNN},
    {"gemm_mxfp8_b32", 33, 96, 24, N, N, N, "f4e2m1", N, N, 1, 0, 1,
     SKIP_ONEDNN},
    {"quantize", 33, 256, 0, N, N, "f4e2m1", N, "block:1x32", N, 1, 0, 0, PASS},
    {"dequantize", 40, 256, 0, "f4e2m1", N, "bf16", N, "block:1x32", N, 1, 0, 0,
     PASS},
};
/* NVFP4: e4m3 block scales and the per-tensor scale S (bench() gives S =
 * 1/448 as the static scale), given or quantized inside (C kernels only). */
static const gcase_t k_nv[] = {
    {"gemm", 64, 128, 48, "f4e2m1", N, "bf16", N, "block:1x16", "block:16x1", 1,
     0, 1, SKIP_ONEDNN},
    {"gemm", 33, 96, 48, "f4e2m1", N, "f32", N, "block:1x16", "block:16x16",
     0.5, 1, 1, SKIP_ONEDNN},
    {"gemm_fp8_rowwise", 33, 96, 24, N, N, N, "f4e2m1", "block:1x16",
     "block:16x1", 1, 0, 1, SKIP_ONEDNN},
};
#undef N

static void set_dtype(mb_dtype_t *field, const char *name) {
  if (name) assert_int_equal(mb_dtype_from_name(name, field), MB_OK);
}

static void set_scaling(mb_scaling_t *s, const char *text) {
  if (text) assert_int_equal(mb_scaling_from_string(text, s), MB_OK);
}

/* What a run said, copied out of the result. */
typedef struct outcome {
  mb_result_status_t status;
  char reason[256], impl[32];
  int emulated;
  mb_correctness_t corr;
} outcome_t;

/* MB_ERR_NOT_FOUND when the implementation does not exist in this build. */
static mb_status_t bench(fixture_t *fx, const gcase_t *c, mb_dtype_t sdt,
                         const char *impl, outcome_t *o) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = c->n ? 3 : 2;
  p.shape[0] = c->m, p.shape[1] = c->k, p.shape[2] = c->n;
  p.alpha = c->alpha, p.beta = c->beta;
  set_dtype(&p.dtype, c->dtype);
  set_dtype(&p.dtype_b, c->dtype_b);
  set_dtype(&p.dtype_out, c->out);
  set_dtype(&p.dtype_q, c->dtype_q);
  set_scaling(&p.scale_a, c->scale_a);
  set_scaling(&p.scale_b, c->scale_b);
  p.dtype_scale = sdt;
  if (sdt == MB_DTYPE_F8E4M3) /* NVFP4's per-tensor scale */
    p.flags |= MB_PARAM_STATIC, p.scale = 1.0 / 448;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = c->op, s.params = &p, s.backend = "cpu", s.impl = impl;
  s.criterion = MB_CRITERION_FIXED, s.samples = 1, s.cache = MB_CACHE_HOT;
  s.batch = 1, s.warmup_s = 0;
  mb_result_t *r = NULL;
  const mb_status_t st = mb_bench_run(fx->ctx, &s, &r);
  if (st == MB_ERR_NOT_FOUND) return st;
  if (st != MB_OK) fail_msg("%s/%s: %s", c->op, impl, mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  o->corr = (mb_correctness_t)MB_CORRECTNESS_INIT;
  mb_result_info(r, &info);
  mb_result_correctness(r, &o->corr);
  o->status = info.status;
  o->emulated = info.emulated;
  snprintf(o->reason, sizeof o->reason, "%s", info.reason);
  snprintf(o->impl, sizeof o->impl, "%s", info.impl);
  mb_result_destroy(r);
  return MB_OK;
}

static int run_variants(fixture_t *fx, const gcase_t *cases, size_t count,
                        mb_dtype_t sdt) {
  static const char *const impls[] = {"onednn", "c"};
  int ran = 0;
  for (size_t i = 0; i < count; ++i)
    for (size_t m = 0; m < 2; ++m) {
      const gcase_t *c = &cases[i];
      outcome_t o;
      if (bench(fx, c, sdt, impls[m], &o) == MB_ERR_NOT_FOUND) continue;
      ++ran;
      if (c->expect == SKIP_ONEDNN && m == 0) {
        if (o.status != MB_RESULT_SKIPPED)
          fail_msg("%s/onednn should be declined", c->op);
        continue;
      }
      if (o.status != MB_RESULT_OK)
        fail_msg("%s %lldx%lldx%lld/%s: %s", c->op, (long long)c->m,
                 (long long)c->k, (long long)c->n, impls[m], o.reason);
      if (!o.corr.checked || !o.corr.pass)
        fail_msg("%s %lldx%lldx%lld/%s: wrong (error/allowed %g)", c->op,
                 (long long)c->m, (long long)c->k, (long long)c->n, impls[m],
                 o.corr.max_err_ratio);
      assert_string_equal(o.impl, impls[m]);
      if (o.emulated != c->emulated)
        fail_msg("%s/%s: emulated %d, expected %d", c->op, impls[m], o.emulated,
                 c->emulated);
    }
  return ran;
}

static void test_gemm_variants(void **state) {
  fixture_t *fx = *state;
  const size_t n = sizeof k_gemms / sizeof k_gemms[0];
  assert_true(run_variants(fx, k_gemms, n, MB_DTYPE_NONE) >= (int)n);
  const size_t nmx = sizeof k_mx / sizeof k_mx[0];
  assert_true(run_variants(fx, k_mx, nmx, MB_DTYPE_E8M0) >= (int)nmx);
  const size_t nnv = sizeof k_nv / sizeof k_nv[0];
  assert_true(run_variants(fx, k_nv, nnv, MB_DTYPE_F8E4M3) >= (int)nnv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_converters),
      cmocka_unit_test(test_quantize_bitexact),
      cmocka_unit_test(test_quantize_mx),
      cmocka_unit_test(test_quantize_nvfp4),
      cmocka_unit_test(test_dequantize_bitexact),
      cmocka_unit_test(test_gemm_variants),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
