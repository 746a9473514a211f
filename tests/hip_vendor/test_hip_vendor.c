/* The HIP backend's vendor GEMM (backends/hip/hip_gemm_plan.c,
 * hip_blaslt.c, hip_rocblas.c), without a GPU:
 *   (a) the plan tables: the types each library is handed (bf16 as bf16,
 *       never f16), the compute types, the layouts, and the reasons for
 *       declining (tf32 without xf32, FNUZ fp8, the native-only variants);
 *   (b) the real code paths that issue the library calls, driven through
 *       fake libraries (fake_hipblaslt.c, fake_rocblas.c) that record what
 *       they are handed, with a synthetic state and device;
 *   (c) loading: a missing file, a too old version, a missing entry point;
 *   (d) the supports hooks when a library is not loaded. */
#include <dlfcn.h>
#include <math.h>

#include "../test_util.h"
#include "hip_gemm_plan.h"
#include "hip_vendor.h"

/* ---- what hip_backend.c (the lead's) defines, for this test -------------- */

static char g_error[2048];

static void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
}

static void log_nothing(void *host, mb_log_level_t level, const char *fmt,
                        ...) {
  (void)host, (void)level, (void)fmt;
}

/* The GPU host layer's calls these sources make, without the host layer
 * (no runtime, no device): errors are formatted as it formats them, the one
 * device is the fixture's, and a tuning candidate is run once and "takes"
 * the time the fake library's next_time says, so the choice is checked. */
mb_status_t mb__gpuh_check(mb_gpuh_state_t *st, hipError_t e,
                           const char *what) {
  if (e == hipSuccess) return MB_OK;
  snprintf(st->last_error, sizeof st->last_error, "hip: %s: error %d", what,
           (int)e);
  st->host.set_error("%s", st->last_error);
  return MB_ERR_BACKEND;
}

mb_gpuh_device_t *mb__gpuh_device(mb_gpuh_state_t *st, uint32_t dev) {
  if (dev < st->num_devices) return (mb_gpuh_device_t *)(void *)st->devices;
  st->host.set_error("hip: no device %u", dev);
  return NULL;
}

static unsigned g_timed; /* candidates timed */

mb_status_t mb__gpuh_time_median(mb_gpuh_state_t *st, mb_gpuh_device_t *d,
                                 mb_kernel_run_fn run, void *kstate,
                                 const mb_kernel_call_t *call, uint32_t samples,
                                 double min_ns, double slow_ns,
                                 double *median_ns) {
  (void)st, (void)d, (void)samples, (void)min_ns, (void)slow_ns;
  const mb_status_t s = run(kstate, call);
  /* Candidate i takes 1000 - i ns: the last one offered is the fastest. */
  *median_ns = 1000.0 - g_timed++;
  return s;
}

/* ---- fixtures ------------------------------------------------------------ */

static mb_hip_device_t make_device(const char *arch, int fnuz) {
  mb_hip_device_t d;
  memset(&d, 0, sizeof d);
  snprintf(d.base.name, sizeof d.base.name, "test GPU %s", arch);
  snprintf(d.arch, sizeof d.arch, "%s:sramecc+:xnack-", arch);
  snprintf(d.arch_base, sizeof d.arch_base, "%s", arch);
  d.fp8_fnuz = fnuz;
  d.base.stream = NULL; /* the fakes never touch it */
  return d;
}

static mb_op_params_t gemm(mb_dtype_t a, mb_dtype_t b, mb_dtype_t out,
                           mb_dtype_t acc) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = 3; /* M */
  p.shape[1] = 5; /* K */
  p.shape[2] = 7; /* N */
  p.dtype = a;
  p.dtype_b = b;
  p.dtype_out = out;
  p.dtype_acc = acc;
  return p;
}

/* Tensor scales as mb_op_resolve leaves them: the whole operand. */
static void tensor_scales(mb_op_params_t *p) {
  p->scale_a = (mb_scaling_t){MB_SCALE_TENSOR, {p->shape[0], p->shape[1]}};
  p->scale_b = (mb_scaling_t){MB_SCALE_TENSOR, {p->shape[1], p->shape[2]}};
}

static const int k_lt_new = MB_HIPBLASLT_VERSION(1, 0, 0);

static mb_hip_gemm_plan_t lt_plan(const char *arch, int fnuz,
                                  const mb_op_params_t *p) {
  const mb_hip_device_t d = make_device(arch, fnuz);
  mb_hip_gemm_plan_t pl;
  char why[512] = "";
  if (mb__hip_plan_blaslt(&d, p, k_lt_new, &pl, why, sizeof why) != MB_OK)
    fail_msg("hipBLASLt declined on %s: %s", arch, why);
  return pl;
}

static mb_hip_gemm_plan_t rb_plan(const char *arch, const mb_op_params_t *p) {
  const mb_hip_device_t d = make_device(arch, 0);
  mb_hip_gemm_plan_t pl;
  char why[512] = "";
  if (mb__hip_plan_rocblas(&d, p, &pl, why, sizeof why) != MB_OK)
    fail_msg("rocBLAS declined on %s: %s", arch, why);
  return pl;
}

/* The reason hipBLASLt (version) / rocBLAS gives; fails if it accepts. */
static const char *lt_no(const char *arch, int fnuz, int version,
                         const mb_op_params_t *p) {
  static char why[512];
  const mb_hip_device_t d = make_device(arch, fnuz);
  mb_hip_gemm_plan_t pl;
  why[0] = '\0';
  assert_int_equal(mb__hip_plan_blaslt(&d, p, version, &pl, why, sizeof why),
                   MB_ERR_UNSUPPORTED);
  assert_true(why[0] != '\0');
  return why;
}

static const char *rb_no(const char *arch, const mb_op_params_t *p) {
  static char why[512];
  const mb_hip_device_t d = make_device(arch, 0);
  mb_hip_gemm_plan_t pl;
  why[0] = '\0';
  assert_int_equal(mb__hip_plan_rocblas(&d, p, &pl, why, sizeof why),
                   MB_ERR_UNSUPPORTED);
  assert_true(why[0] != '\0');
  return why;
}

static const char *const k_archs[] = {"gfx90a", "gfx942", "gfx950", "gfx1100"};
#define NARCH (sizeof k_archs / sizeof k_archs[0])

/* ---- (a) the plan tables ------------------------------------------------- */

/* bf16 means bf16: HIP_R_16BF / rocblas_datatype_bf16_r for A and B on every
 * device, never the f16 values (the old harness's bug). */
static void test_plan_bf16_is_bf16(void **state) {
  (void)state;
  const mb_dtype_t outs[] = {MB_DTYPE_BF16, MB_DTYPE_F32};
  for (size_t i = 0; i < NARCH; i++)
    for (size_t o = 0; o < 2; o++) {
      const mb_op_params_t p =
          gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, outs[o], MB_DTYPE_F32);
      const mb_hip_gemm_plan_t lt = lt_plan(k_archs[i], 0, &p);
      assert_int_equal(lt.a_type, MB_HIP_R_16BF);
      assert_int_equal(lt.b_type, MB_HIP_R_16BF);
      assert_int_not_equal(lt.a_type, MB_HIP_R_16F);
      assert_int_equal(lt.d_type, o == 0 ? MB_HIP_R_16BF : MB_HIP_R_32F);
      assert_int_equal(lt.compute, MB_HIPBLAS_COMPUTE_32F);
      assert_int_equal(lt.scale_type, MB_HIP_R_32F);
      assert_string_equal(mb__hip_type_name(MB_HIP_LIB_BLASLT, lt.a_type),
                          "HIP_R_16BF");
      assert_string_equal(lt.math, "bf16");

      const mb_hip_gemm_plan_t rb = rb_plan(k_archs[i], &p);
      assert_int_equal(rb.a_type, MB_ROCBLAS_DATATYPE_BF16_R);
      assert_int_equal(rb.b_type, MB_ROCBLAS_DATATYPE_BF16_R);
      assert_int_not_equal(rb.b_type, MB_ROCBLAS_DATATYPE_F16_R);
      assert_int_equal(rb.d_type, o == 0 ? MB_ROCBLAS_DATATYPE_BF16_R
                                         : MB_ROCBLAS_DATATYPE_F32_R);
      assert_int_equal(rb.compute, MB_ROCBLAS_DATATYPE_F32_R);
      assert_string_equal(mb__hip_type_name(MB_HIP_LIB_ROCBLAS, rb.a_type),
                          "rocblas_datatype_bf16_r");
    }
}

static void test_plan_f16_is_f16(void **state) {
  (void)state;
  const mb_dtype_t outs[] = {MB_DTYPE_F16, MB_DTYPE_F32};
  for (size_t o = 0; o < 2; o++) {
    const mb_op_params_t p =
        gemm(MB_DTYPE_F16, MB_DTYPE_F16, outs[o], MB_DTYPE_F32);
    const mb_hip_gemm_plan_t lt = lt_plan("gfx942", 1, &p);
    assert_int_equal(lt.a_type, MB_HIP_R_16F);
    assert_int_equal(lt.b_type, MB_HIP_R_16F);
    assert_int_equal(lt.d_type, o == 0 ? MB_HIP_R_16F : MB_HIP_R_32F);
    const mb_hip_gemm_plan_t rb = rb_plan("gfx942", &p);
    assert_int_equal(rb.a_type, MB_ROCBLAS_DATATYPE_F16_R);
    assert_int_equal(rb.b_type, MB_ROCBLAS_DATATYPE_F16_R);
    assert_int_equal(rb.d_type, o == 0 ? MB_ROCBLAS_DATATYPE_F16_R
                                       : MB_ROCBLAS_DATATYPE_F32_R);
    assert_int_equal(rb.compute, MB_ROCBLAS_DATATYPE_F32_R);
  }
}

static void test_plan_f32_and_tf32(void **state) {
  (void)state;
  mb_op_params_t p =
      gemm(MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_F32);
  mb_hip_gemm_plan_t lt = lt_plan("gfx90a", 0, &p);
  assert_int_equal(lt.a_type, MB_HIP_R_32F);
  assert_int_equal(lt.compute, MB_HIPBLAS_COMPUTE_32F);
  assert_int_equal(rb_plan("gfx90a", &p).compute, MB_ROCBLAS_DATATYPE_F32_R);

  p.flags |= MB_PARAM_TF32;
  lt = lt_plan("gfx942", 1, &p);
  assert_int_equal(lt.compute, MB_HIPBLAS_COMPUTE_32F_FAST_TF32);
  assert_int_equal(lt.a_type, MB_HIP_R_32F);
  assert_string_equal(mb__hip_compute_name(MB_HIP_LIB_BLASLT, lt.compute),
                      "HIPBLAS_COMPUTE_32F_FAST_TF32");
  /* No xf32 matrix math: declined, saying so. */
  const char *why = lt_no("gfx90a", 0, k_lt_new, &p);
  assert_contains(why, "xf32");
  assert_contains(why, "gfx90a");
  assert_contains(lt_no("gfx950", 0, k_lt_new, &p), "xf32");
  assert_contains(rb_no("gfx942", &p), "tf32");
}

static void test_plan_i8_exact(void **state) {
  (void)state;
  const mb_op_params_t p =
      gemm(MB_DTYPE_I8, MB_DTYPE_I8, MB_DTYPE_I32, MB_DTYPE_I32);
  const mb_hip_gemm_plan_t lt = lt_plan("gfx90a", 0, &p);
  assert_int_equal(lt.a_type, MB_HIP_R_8I);
  assert_int_equal(lt.b_type, MB_HIP_R_8I);
  assert_int_equal(lt.d_type, MB_HIP_R_32I);
  assert_int_equal(lt.compute, MB_HIPBLAS_COMPUTE_32I);
  assert_int_equal(lt.scale_type, MB_HIP_R_32I);
  assert_true(lt.int_scalars);
  const mb_hip_gemm_plan_t rb = rb_plan("gfx90a", &p);
  assert_int_equal(rb.a_type, MB_ROCBLAS_DATATYPE_I8_R);
  assert_int_equal(rb.b_type, MB_ROCBLAS_DATATYPE_I8_R);
  assert_int_equal(rb.d_type, MB_ROCBLAS_DATATYPE_I32_R);
  assert_int_equal(rb.compute, MB_ROCBLAS_DATATYPE_I32_R);
  assert_true(rb.int_scalars);
}

/* OCP fp8 on gfx950 / gfx12: the OCP types, its A being our B. */
static void test_plan_fp8_ocp(void **state) {
  (void)state;
  mb_op_params_t p =
      gemm(MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2, MB_DTYPE_BF16, MB_DTYPE_F32);
  mb_hip_gemm_plan_t lt = lt_plan("gfx950", 0, &p);
  assert_int_equal(lt.b_type, MB_HIP_R_8F_E4M3); /* its B = our A */
  assert_int_equal(lt.a_type, MB_HIP_R_8F_E5M2); /* its A = our B */
  assert_int_equal(lt.d_type, MB_HIP_R_16BF);
  assert_int_equal(lt.compute, MB_HIPBLAS_COMPUTE_32F);
  assert_false(lt.scale_a || lt.scale_b); /* no scales: no pointers */
  assert_string_equal(lt.math, "fp8 e4m3 x e5m2");

  tensor_scales(&p);
  p.dtype_b = MB_DTYPE_F8E4M3;
  p.dtype_out = MB_DTYPE_F32;
  lt = lt_plan("gfx1201", 0, &p);
  assert_int_equal(lt.a_type, MB_HIP_R_8F_E4M3);
  assert_int_equal(lt.b_type, MB_HIP_R_8F_E4M3);
  assert_int_equal(lt.d_type, MB_HIP_R_32F);
  assert_true(lt.scale_a && lt.scale_b);

  /* A hipBLASLt before the OCP types. */
  const char *why = lt_no("gfx950", 0, MB_HIPBLASLT_VERSION(0, 8, 0), &p);
  assert_contains(why, "0.8.0");
  assert_contains(why, "0.10");
  /* Row x column scales: the native implementation's. */
  p.scale_a = (mb_scaling_t){MB_SCALE_ROW, {1, p.shape[1]}};
  p.scale_b = (mb_scaling_t){MB_SCALE_COL, {p.shape[1], 1}};
  why = lt_no("gfx950", 0, k_lt_new, &p);
  assert_contains(why, "scale_a row / scale_b col");
  assert_contains(why, "native");
  /* e8m0 scales, even tensor-wise: the scale pointers hold f32, so the
   * bytes would be misread; both libraries leave MXFP8 to native. */
  tensor_scales(&p);
  p.dtype_scale = MB_DTYPE_E8M0;
  assert_contains(lt_no("gfx950", 0, k_lt_new, &p), "e8m0");
  assert_contains(rb_no("gfx950", &p), "e8m0");
}

/* MI300's fp8 is FNUZ: our OCP bytes would be misread, so declined. */
static void test_plan_fp8_fnuz_declined(void **state) {
  (void)state;
  mb_op_params_t p =
      gemm(MB_DTYPE_F8E4M3, MB_DTYPE_F8E4M3, MB_DTYPE_BF16, MB_DTYPE_F32);
  tensor_scales(&p);
  for (int fnuz = 0; fnuz <= 1; fnuz++) {
    const char *why = lt_no("gfx942", fnuz, k_lt_new, &p);
    assert_contains(why, "matrix cores read the FNUZ");
    assert_contains(why, "wrong values");
    assert_contains(why, "OCP");
    assert_contains(why, "native");
  }
  /* The device's flag wins over the name. */
  assert_contains(lt_no("gfx950", 1, k_lt_new, &p), "read the FNUZ");
  assert_contains(lt_no("gfx90a", 0, k_lt_new, &p), "no fp8 matrix math");
  const char *why = rb_no("gfx950", &p);
  assert_contains(why, "rocblas_gemm_ex3");
  assert_contains(why, "FNUZ");
}

/* The layout flags become the ops, nothing copied (hip_gemm_plan.h). */
static void test_plan_layouts(void **state) {
  (void)state;
  for (int ta = 0; ta <= 1; ta++)
    for (int tb = 0; tb <= 1; tb++) {
      mb_op_params_t p =
          gemm(MB_DTYPE_F16, MB_DTYPE_F16, MB_DTYPE_F16, MB_DTYPE_F32);
      p.flags = (ta ? MB_PARAM_TRANS_A : 0u) | (tb ? MB_PARAM_TRANS_B : 0u);
      const mb_hip_gemm_plan_t pls[2] = {lt_plan("gfx90a", 0, &p),
                                         rb_plan("gfx90a", &p)};
      for (int l = 0; l < 2; l++) {
        const mb_hip_gemm_plan_t *pl = &pls[l];
        assert_int_equal(pl->m, 7); /* N */
        assert_int_equal(pl->n, 3); /* M */
        assert_int_equal(pl->k, 5);
        assert_int_equal(pl->op_a, tb ? 112 : 111);
        assert_int_equal(pl->a_rows, tb ? 5 : 7);
        assert_int_equal(pl->a_cols, tb ? 7 : 5);
        assert_int_equal(pl->lda, tb ? 5 : 7);
        assert_int_equal(pl->op_b, ta ? 112 : 111);
        assert_int_equal(pl->b_rows, ta ? 3 : 5);
        assert_int_equal(pl->b_cols, ta ? 5 : 3);
        assert_int_equal(pl->ldb, ta ? 3 : 5);
        assert_int_equal(pl->ldd, 7);
      }
    }
}

/* Variants only the native implementation runs, on both libraries. */
static void test_plan_native_only(void **state) {
  (void)state;
  mb_op_params_t qi =
      gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_F32);
  qi.flags = MB_PARAM_QUANTIZE_INPUTS;
  qi.dtype_q = MB_DTYPE_F8E4M3;
  mb_op_params_t i4 =
      gemm(MB_DTYPE_BF16, MB_DTYPE_I4, MB_DTYPE_BF16, MB_DTYPE_F32);
  i4.scale_b = (mb_scaling_t){MB_SCALE_GROUP, {5, 1}};
  mb_op_params_t ri8 =
      gemm(MB_DTYPE_I8, MB_DTYPE_I8, MB_DTYPE_BF16, MB_DTYPE_I32);
  ri8.scale_a = (mb_scaling_t){MB_SCALE_ROW, {1, 5}};
  const struct {
    const mb_op_params_t *p;
    const char *what;
  } cases[] = {{&qi, "quantize-inputs"},
               {&i4, "int4 weight-only"},
               {&ri8, "rescaled i8"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *why = lt_no("gfx950", 0, k_lt_new, cases[i].p);
    assert_contains(why, cases[i].what);
    assert_contains(why, "--impl native");
    why = rb_no("gfx950", cases[i].p);
    assert_contains(why, cases[i].what);
    assert_contains(why, "--impl native");
  }
}

static void test_plan_other_declines(void **state) {
  (void)state;
  /* Not in the table: says what the library writes instead. */
  mb_op_params_t p =
      gemm(MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F32);
  assert_contains(lt_no("gfx942", 1, k_lt_new, &p), "writes f32");
  assert_contains(rb_no("gfx942", &p), "writes f32");
  /* Beyond rocblas_int. */
  p = gemm(MB_DTYPE_F16, MB_DTYPE_F16, MB_DTYPE_F16, MB_DTYPE_F32);
  p.shape[2] = (int64_t)1 << 31;
  assert_contains(rb_no("gfx942", &p), "2^31");
  assert_contains(lt_no("gfx942", 1, k_lt_new, &p), "2^31");
}

/* ---- (b) the real calls, through the fake libraries ---------------------- */

typedef struct fixture {
  mb_hip_state_t st;
  mb_hip_device_t dev;
  void *in[4], *out[1];
  mb_op_params_t p;
  mb_kernel_call_t call;
  char reason[512]; /* the host's reason() storage, as a context's */
} fixture_t;

/* host.reason as the library's: formatted into storage the host owns. */
static const char *host_reason(void *host, const char *fmt, ...) {
  fixture_t *f = host;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->reason, sizeof f->reason, fmt, ap);
  va_end(ap);
  return f->reason;
}

static void fixture_init(fixture_t *f, const char *arch, int fnuz) {
  memset(f, 0, sizeof *f);
  f->st.base.host.host = f;
  f->st.base.host.set_error = set_error;
  f->st.base.host.log = log_nothing;
  f->st.base.host.reason = host_reason;
  f->dev = make_device(arch, fnuz);
  f->st.base.devices = (char *)&f->dev;
  f->st.base.num_devices = 1;
  g_timed = 0;
  /* Distinct addresses the fakes only record. */
  f->in[0] = (void *)(uintptr_t)0x1000;  /* A */
  f->in[1] = (void *)(uintptr_t)0x2000;  /* B */
  f->in[2] = (void *)(uintptr_t)0x3000;  /* scale_a */
  f->in[3] = (void *)(uintptr_t)0x4000;  /* scale_b */
  f->out[0] = (void *)(uintptr_t)0x5000; /* D */
  f->call = (mb_kernel_call_t){
      sizeof(mb_kernel_call_t), &f->p, f->in, 4, f->out, 1, 0, 0u};
  g_error[0] = '\0';
}

/* The fake's own entry points, reached through the same loaded copy. */
typedef struct fake {
  void *dl;
  long long (*lt_get)(const char *, int);
  void (*lt_set)(const char *, long long);
  long long (*rb_get)(const char *);
  void (*rb_set)(const char *, long long);
  int (*create)(void **);
} fake_t;

static fake_t fake_open(const char *path, int blaslt) {
  fake_t fk = {0};
  fk.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(fk.dl);
  void *p;
  if (blaslt) {
    p = dlsym(fk.dl, "fake_lt_get");
    assert_non_null(p);
    memcpy(&fk.lt_get, &p, sizeof p);
    p = dlsym(fk.dl, "fake_lt_set");
    assert_non_null(p);
    memcpy(&fk.lt_set, &p, sizeof p);
    p = dlsym(fk.dl, "hipblasLtCreate");
    fk.lt_set("reset", 0);
  } else {
    p = dlsym(fk.dl, "fake_rb_get");
    assert_non_null(p);
    memcpy(&fk.rb_get, &p, sizeof p);
    p = dlsym(fk.dl, "fake_rb_set");
    assert_non_null(p);
    memcpy(&fk.rb_set, &p, sizeof p);
    p = dlsym(fk.dl, "rocblas_create_handle");
    fk.rb_set("reset", 0);
  }
  assert_non_null(p);
  memcpy(&fk.create, &p, sizeof p);
  return fk;
}

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static const char *note_text(uint32_t (*notes)(void *, mb_kernel_note_t *,
                                               uint32_t),
                             void *k, const char *key, double *value) {
  mb_kernel_note_t n[32];
  const uint32_t c = notes(k, n, 32);
  assert_true(c <= 32);
  for (uint32_t i = 0; i < c; i++)
    if (!strcmp(n[i].key, key)) {
      if (value) *value = n[i].value;
      return n[i].text ? n[i].text : "";
    }
  fail_msg("no note \"%s\"", key);
  return NULL;
}

static mb_hip_blaslt_t *open_lt(void) {
  char why[512] = "";
  mb_hip_blaslt_t *lib = mb__hip_blaslt_open(FAKE_HIPBLASLT, why, sizeof why);
  if (!lib) fail_msg("fake hipBLASLt refused: %s", why);
  return lib;
}

/* bf16 goes to hipBLASLt as HIP_R_16BF: the matmul descriptor, the three
 * layouts (its A = our B, its B = our A, D^T) and the matmul call. */
static void test_blaslt_calls_bf16(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f, "gfx942", 1);
  f.st.blaslt = open_lt();
  assert_string_equal(mb__hip_blaslt_version(f.st.blaslt), "hipBLASLt 1.0.0");
  const fake_t fk = fake_open(FAKE_HIPBLASLT, 1);
  assert_int_equal(fk.create(&f.dev.blaslt_handle), 0);
  f.p = gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_F32);
  f.p.alpha = 2.0;

  void *k = NULL;
  assert_int_equal(mb__hip_blaslt_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_non_null(k);
  assert_int_equal(fk.lt_get("descs", 0), 1);
  assert_int_equal(fk.lt_get("compute", 0), MB_HIPBLAS_COMPUTE_32F);
  assert_int_equal(fk.lt_get("scale_type", 0), MB_HIP_R_32F);
  assert_int_equal(fk.lt_get("transa", 0), MB_HIPBLAS_OP_N);
  assert_int_equal(fk.lt_get("transb", 0), MB_HIPBLAS_OP_N);
  assert_int_equal(fk.lt_get("layouts", 0), 3);
  const long long want[3][4] = {{MB_HIP_R_16BF, 7, 5, 7},  /* our B */
                                {MB_HIP_R_16BF, 5, 3, 5},  /* our A */
                                {MB_HIP_R_16BF, 7, 3, 7}}; /* D^T */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(fk.lt_get("layout_type", i), want[i][0]);
    assert_int_equal(fk.lt_get("layout_rows", i), want[i][1]);
    assert_int_equal(fk.lt_get("layout_cols", i), want[i][2]);
    assert_int_equal(fk.lt_get("layout_ld", i), want[i][3]);
  }
  /* One candidate: taken untimed (no HIP events without a GPU). */
  assert_int_equal(fk.lt_get("heuristics", 0), 1);
  assert_int_equal(fk.lt_get("matmuls", 0), 0);

  assert_int_equal(mb__hip_blaslt_run(k, &f.call), MB_OK);
  assert_int_equal(fk.lt_get("matmuls", 0), 1);
  assert_int_equal(fk.lt_get("mm_a", 0), 0);
  assert_int_equal(fk.lt_get("mm_b", 0), 1);
  assert_int_equal(fk.lt_get("mm_c", 0), 2);
  assert_int_equal(fk.lt_get("mm_d", 0), 2);
  assert_int_equal(fk.lt_get("p_a", 0), 0x2000); /* our B */
  assert_int_equal(fk.lt_get("p_b", 0), 0x1000); /* our A */
  assert_int_equal(fk.lt_get("p_c", 0), 0x5000);
  assert_int_equal(fk.lt_get("p_d", 0), 0x5000);
  assert_int_equal(fk.lt_get("alpha_bits", 0), float_bits(2.0f));
  assert_int_equal(fk.lt_get("beta_bits", 0), float_bits(0.0f));
  assert_int_equal(fk.lt_get("algo_index", 0), 42);

  double v = 0;
  assert_string_equal(note_text(mb__hip_blaslt_notes, k, "a_type", NULL),
                      "HIP_R_16BF");
  assert_string_equal(note_text(mb__hip_blaslt_notes, k, "b_type", NULL),
                      "HIP_R_16BF");
  assert_string_equal(note_text(mb__hip_blaslt_notes, k, "compute_type", NULL),
                      "HIPBLAS_COMPUTE_32F");
  assert_string_equal(note_text(mb__hip_blaslt_notes, k, "library", NULL),
                      "hipBLASLt 1.0.0");
  note_text(mb__hip_blaslt_notes, k, "algo_index", &v);
  assert_true(v == 42.0);

  /* A status other than success: the error names the call and status. */
  fk.lt_set("matmul_status", 7); /* HIPBLAS_STATUS_NOT_SUPPORTED */
  assert_int_equal(mb__hip_blaslt_run(k, &f.call), MB_ERR_UNSUPPORTED);
  assert_contains(g_error,
                  "hip: hipblaslt: matmul: "
                  "HIPBLAS_STATUS_NOT_SUPPORTED");
  fk.lt_set("matmul_status", 5); /* EXECUTION_FAILED */
  assert_int_equal(mb__hip_blaslt_run(k, &f.call), MB_ERR_BACKEND);
  mb__hip_blaslt_release(k);
  assert_int_equal(fk.lt_get("layouts_destroyed", 0), 3);

  /* Several offered: each timed through the host layer's timer (the stub
   * above makes the last the fastest), the fastest chosen, every
   * candidate's time in the notes. */
  fk.lt_set("matmul_status", 0);
  fk.lt_set("candidates", 3);
  k = NULL;
  assert_int_equal(mb__hip_blaslt_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(g_timed, 3);
  assert_int_equal(mb__hip_blaslt_run(k, &f.call), MB_OK);
  assert_int_equal(fk.lt_get("algo_index", 0), 44);
  note_text(mb__hip_blaslt_notes, k, "algos_tried", &v);
  assert_true(v == 3.0);
  assert_string_equal(
      note_text(mb__hip_blaslt_notes, k, "tune_candidates", NULL),
      "#0: 0.001 ms; #1: 0.000999 ms; #2: 0.000998 ms");
  mb__hip_blaslt_release(k);

  /* No algorithm offered: declined with the reason. */
  fk.lt_set("candidates", 0);
  k = NULL;
  assert_int_equal(mb__hip_blaslt_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_ERR_UNSUPPORTED);
  assert_null(k);
  assert_contains(g_error, "no algorithm for bf16");
  mb__hip_blaslt_close(f.st.blaslt);
  dlclose(fk.dl);
}

/* The layouts follow the trans flags; f16 is HIP_R_16F; tf32 is xf32. */
static void test_blaslt_calls_trans_tf32(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f, "gfx942", 1);
  f.st.blaslt = open_lt();
  const fake_t fk = fake_open(FAKE_HIPBLASLT, 1);
  assert_int_equal(fk.create(&f.dev.blaslt_handle), 0);
  f.p = gemm(MB_DTYPE_F16, MB_DTYPE_F16, MB_DTYPE_F32, MB_DTYPE_F32);
  f.p.flags = MB_PARAM_TRANS_A | MB_PARAM_TRANS_B;
  void *k = NULL;
  assert_int_equal(mb__hip_blaslt_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(fk.lt_get("transa", 0), MB_HIPBLAS_OP_T);
  assert_int_equal(fk.lt_get("transb", 0), MB_HIPBLAS_OP_T);
  assert_int_equal(fk.lt_get("layout_type", 0), MB_HIP_R_16F);
  assert_int_equal(fk.lt_get("layout_rows", 0), 5); /* B stored N x K */
  assert_int_equal(fk.lt_get("layout_ld", 0), 5);
  assert_int_equal(fk.lt_get("layout_rows", 1), 3); /* A stored K x M */
  assert_int_equal(fk.lt_get("layout_ld", 1), 3);
  assert_int_equal(fk.lt_get("layout_type", 2), MB_HIP_R_32F);
  mb__hip_blaslt_release(k);

  fk.lt_set("reset", 0);
  assert_int_equal(fk.create(&f.dev.blaslt_handle), 0);
  f.p = gemm(MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_F32);
  f.p.flags = MB_PARAM_TF32;
  assert_int_equal(mb__hip_blaslt_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(fk.lt_get("compute", 0), MB_HIPBLAS_COMPUTE_32F_FAST_TF32);
  mb__hip_blaslt_release(k);
  mb__hip_blaslt_close(f.st.blaslt);
  dlclose(fk.dl);
}

/* OCP fp8 on gfx950 with tensor scales: OCP types, our scale_b as its A's
 * scale pointer, our scale_a as its B's, re-bound for another copy. */
static void test_blaslt_calls_fp8(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f, "gfx950", 0);
  f.st.blaslt = open_lt();
  const fake_t fk = fake_open(FAKE_HIPBLASLT, 1);
  assert_int_equal(fk.create(&f.dev.blaslt_handle), 0);
  f.p = gemm(MB_DTYPE_F8E5M2, MB_DTYPE_F8E4M3, MB_DTYPE_BF16, MB_DTYPE_F32);
  tensor_scales(&f.p);
  void *k = NULL;
  assert_int_equal(mb__hip_blaslt_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(fk.lt_get("layout_type", 0), MB_HIP_R_8F_E4M3); /* B */
  assert_int_equal(fk.lt_get("layout_type", 1), MB_HIP_R_8F_E5M2); /* A */
  assert_int_equal(fk.lt_get("layout_type", 2), MB_HIP_R_16BF);
  assert_int_equal(fk.lt_get("a_scale", 0), 0x4000);
  assert_int_equal(fk.lt_get("b_scale", 0), 0x3000);
  assert_int_equal(fk.lt_get("a_scale_set", 0), 1);
  /* Another operand copy with its own scales. */
  f.in[3] = (void *)(uintptr_t)0x6000;
  assert_int_equal(mb__hip_blaslt_run(k, &f.call), MB_OK);
  assert_int_equal(fk.lt_get("a_scale", 0), 0x6000);
  assert_int_equal(fk.lt_get("a_scale_set", 0), 2);
  assert_int_equal(fk.lt_get("b_scale_set", 0), 1);
  assert_string_equal(note_text(mb__hip_blaslt_notes, k, "a_type", NULL),
                      "HIP_R_8F_E5M2");
  mb__hip_blaslt_release(k);
  mb__hip_blaslt_close(f.st.blaslt);
  dlclose(fk.dl);
}

static mb_hip_rocblas_t *open_rb(void) {
  char why[512] = "";
  mb_hip_rocblas_t *lib = mb__hip_rocblas_open(FAKE_ROCBLAS, why, sizeof why);
  if (!lib) fail_msg("fake rocBLAS refused: %s", why);
  return lib;
}

/* bf16 goes to rocblas_gemm_ex as rocblas_datatype_bf16_r, operands
 * swapped, C = D. */
static void test_rocblas_calls_bf16(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f, "gfx90a", 0);
  f.st.rocblas = open_rb();
  assert_string_equal(mb__hip_rocblas_version(f.st.rocblas),
                      "rocBLAS 4.3.0.60300-fake");
  const fake_t fk = fake_open(FAKE_ROCBLAS, 0);
  assert_int_equal(fk.create(&f.dev.rocblas_handle), 0);
  f.p = gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_F32);
  f.p.beta = 1.0;
  void *k = NULL;
  assert_int_equal(mb__hip_rocblas_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(mb__hip_rocblas_run(k, &f.call), MB_OK);
  assert_int_equal(fk.rb_get("gemms"), 1);
  assert_int_equal(fk.rb_get("a_type"), MB_ROCBLAS_DATATYPE_BF16_R);
  assert_int_equal(fk.rb_get("b_type"), MB_ROCBLAS_DATATYPE_BF16_R);
  assert_int_equal(fk.rb_get("c_type"), MB_ROCBLAS_DATATYPE_BF16_R);
  assert_int_equal(fk.rb_get("d_type"), MB_ROCBLAS_DATATYPE_BF16_R);
  assert_int_equal(fk.rb_get("compute"), MB_ROCBLAS_DATATYPE_F32_R);
  assert_int_equal(fk.rb_get("trans_a"), MB_ROCBLAS_OP_NONE);
  assert_int_equal(fk.rb_get("trans_b"), MB_ROCBLAS_OP_NONE);
  assert_int_equal(fk.rb_get("m"), 7);
  assert_int_equal(fk.rb_get("n"), 3);
  assert_int_equal(fk.rb_get("k"), 5);
  assert_int_equal(fk.rb_get("lda"), 7);
  assert_int_equal(fk.rb_get("ldb"), 5);
  assert_int_equal(fk.rb_get("ldc"), 7);
  assert_int_equal(fk.rb_get("ldd"), 7);
  assert_int_equal(fk.rb_get("p_a"), 0x2000);
  assert_int_equal(fk.rb_get("p_b"), 0x1000);
  assert_int_equal(fk.rb_get("p_c"), 0x5000);
  assert_int_equal(fk.rb_get("p_d"), 0x5000);
  assert_int_equal(fk.rb_get("algo"), 0);
  assert_int_equal(fk.rb_get("solution"), 0);
  assert_int_equal(fk.rb_get("flags"), 0);
  assert_int_equal(fk.rb_get("alpha_bits"), float_bits(1.0f));
  assert_int_equal(fk.rb_get("beta_bits"), float_bits(1.0f));
  assert_string_equal(note_text(mb__hip_rocblas_notes, k, "a_type", NULL),
                      "rocblas_datatype_bf16_r");
  assert_string_equal(note_text(mb__hip_rocblas_notes, k, "library", NULL),
                      "rocBLAS 4.3.0.60300-fake");

  fk.rb_set("gemm_status", 2); /* rocblas_status_not_implemented */
  assert_int_equal(mb__hip_rocblas_run(k, &f.call), MB_ERR_UNSUPPORTED);
  assert_contains(g_error,
                  "hip: rocblas: rocblas_gemm_ex: "
                  "rocblas_status_not_implemented");
  fk.rb_set("gemm_status", 6); /* internal_error */
  assert_int_equal(mb__hip_rocblas_run(k, &f.call), MB_ERR_BACKEND);
  mb__hip_rocblas_release(k);
  mb__hip_rocblas_close(f.st.rocblas);
  dlclose(fk.dl);
}

/* i8 -> i32 with integer alpha/beta; the trans flags as ops. */
static void test_rocblas_calls_i8_trans(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f, "gfx942", 1);
  f.st.rocblas = open_rb();
  const fake_t fk = fake_open(FAKE_ROCBLAS, 0);
  assert_int_equal(fk.create(&f.dev.rocblas_handle), 0);
  f.p = gemm(MB_DTYPE_I8, MB_DTYPE_I8, MB_DTYPE_I32, MB_DTYPE_I32);
  void *k = NULL;
  assert_int_equal(mb__hip_rocblas_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(mb__hip_rocblas_run(k, &f.call), MB_OK);
  assert_int_equal(fk.rb_get("a_type"), MB_ROCBLAS_DATATYPE_I8_R);
  assert_int_equal(fk.rb_get("d_type"), MB_ROCBLAS_DATATYPE_I32_R);
  assert_int_equal(fk.rb_get("compute"), MB_ROCBLAS_DATATYPE_I32_R);
  assert_int_equal(fk.rb_get("alpha_bits"), 1); /* int32 1 */
  mb__hip_rocblas_release(k);

  f.p = gemm(MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_F32, MB_DTYPE_F32);
  f.p.flags = MB_PARAM_TRANS_B;
  assert_int_equal(mb__hip_rocblas_prepare_on(&f.st, &f.dev, &f.call, &k),
                   MB_OK);
  assert_int_equal(mb__hip_rocblas_run(k, &f.call), MB_OK);
  assert_int_equal(fk.rb_get("trans_a"), MB_ROCBLAS_OP_TRANSPOSE);
  assert_int_equal(fk.rb_get("trans_b"), MB_ROCBLAS_OP_NONE);
  assert_int_equal(fk.rb_get("lda"), 5);
  assert_int_equal(fk.rb_get("a_type"), MB_ROCBLAS_DATATYPE_F32_R);
  mb__hip_rocblas_release(k);
  mb__hip_rocblas_close(f.st.rocblas);
  dlclose(fk.dl);
}

/* ---- (c) loading --------------------------------------------------------- */

static void test_open_failures(void **state) {
  (void)state;
  char why[512];
  why[0] = '\0';
  assert_null(
      mb__hip_blaslt_open("/nonexistent/libhipblaslt.so", why, sizeof why));
  assert_contains(why, "/nonexistent/libhipblaslt.so");
  why[0] = '\0';
  assert_null(mb__hip_blaslt_open(FAKE_HIPBLASLT_OLD, why, sizeof why));
  assert_contains(why, "hipBLASLt 0.6.0");
  assert_contains(why, "too old");
  why[0] = '\0';
  assert_null(mb__hip_blaslt_open(FAKE_HIPBLASLT_NOMATMUL, why, sizeof why));
  assert_contains(why, "hipblasLtMatmul");

  why[0] = '\0';
  assert_null(
      mb__hip_rocblas_open("/nonexistent/librocblas.so", why, sizeof why));
  assert_contains(why, "/nonexistent/librocblas.so");
  why[0] = '\0';
  assert_null(mb__hip_rocblas_open(FAKE_ROCBLAS_OLD, why, sizeof why));
  assert_contains(why, "rocBLAS 3.1.0");
  assert_contains(why, "too old");
  why[0] = '\0';
  assert_null(mb__hip_rocblas_open(FAKE_ROCBLAS_NOGEMM, why, sizeof why));
  assert_contains(why, "rocblas_gemm_ex");
}

/* path NULL: the environment variable, else the sonames. */
static void test_open_search(void **state) {
  (void)state;
  char why[512] = "";
  assert_int_equal(setenv("MB_HIPBLASLT_LIBRARY", FAKE_HIPBLASLT, 1), 0);
  mb_hip_blaslt_t *lt = mb__hip_blaslt_open(NULL, why, sizeof why);
  if (!lt) fail_msg("MB_HIPBLASLT_LIBRARY not used: %s", why);
  mb__hip_blaslt_close(lt);
  assert_int_equal(setenv("MB_ROCBLAS_LIBRARY", "/nonexistent/rb.so", 1), 0);
  assert_null(mb__hip_rocblas_open(NULL, why, sizeof why));
  assert_contains(why, "/nonexistent/rb.so");
  assert_contains(why, "MB_ROCBLAS_LIBRARY");
  unsetenv("MB_HIPBLASLT_LIBRARY");
  unsetenv("MB_ROCBLAS_LIBRARY");
  /* Where no hipBLASLt is installed (this test's machines), the reason
   * lists the sonames tried. */
  void *real = dlopen("libhipblaslt.so.0", RTLD_NOW | RTLD_LOCAL);
  if (real) {
    dlclose(real);
    return;
  }
  why[0] = '\0';
  lt = mb__hip_blaslt_open(NULL, why, sizeof why);
  if (lt) {
    mb__hip_blaslt_close(lt);
    return;
  }
  assert_contains(why, "libhipblaslt.so.1");
  assert_contains(why, "MB_HIPBLASLT_LIBRARY");
}

/* ---- (d) supports when a library is not loaded --------------------------- */

static void test_supports_not_loaded(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f, "gfx942", 1);
  snprintf(f.st.blaslt_why, sizeof f.st.blaslt_why,
           "none of libhipblaslt.so is on the library path");
  snprintf(f.st.rocblas_why, sizeof f.st.rocblas_why,
           "none of librocblas.so is on the library path");
  const mb_op_params_t p =
      gemm(MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_BF16, MB_DTYPE_F32);
  const char *why = NULL;
  assert_int_equal(mb__hip_blaslt_supports(&f.st, 0, &p, &why),
                   MB_ERR_UNSUPPORTED);
  /* The text is the host's (host.reason), not a buffer of the module's. */
  assert_ptr_equal(why, f.reason);
  assert_string_equal(why,
                      "hipBLASLt not loaded: none of libhipblaslt.so is on "
                      "the library path");
  why = NULL;
  assert_int_equal(mb__hip_rocblas_supports(&f.st, 0, &p, &why),
                   MB_ERR_UNSUPPORTED);
  assert_ptr_equal(why, f.reason);
  assert_string_equal(why,
                      "rocBLAS not loaded: none of librocblas.so is on the "
                      "library path");
  /* prepare, had it been chosen, declines the same way. */
  void *k = (void *)1;
  assert_int_equal(mb__hip_blaslt_prepare(&f.st, &f.call, &k),
                   MB_ERR_UNSUPPORTED);
  assert_null(k);
  assert_contains(g_error, "hipBLASLt not loaded: none of libhipblaslt.so");
  assert_int_equal(mb__hip_rocblas_prepare(&f.st, &f.call, &k),
                   MB_ERR_UNSUPPORTED);
  assert_contains(g_error, "rocBLAS not loaded: none of librocblas.so");

  /* Loaded: the hooks give the plan's reasons and accept what it takes. */
  f.st.blaslt = open_lt();
  mb_op_params_t fp8 =
      gemm(MB_DTYPE_F8E4M3, MB_DTYPE_F8E4M3, MB_DTYPE_BF16, MB_DTYPE_F32);
  tensor_scales(&fp8);
  assert_int_equal(mb__hip_blaslt_supports(&f.st, 0, &fp8, &why),
                   MB_ERR_UNSUPPORTED);
  assert_ptr_equal(why, f.reason);
  assert_contains(why, "read the FNUZ");
  assert_int_equal(mb__hip_blaslt_supports(&f.st, 0, &p, &why), MB_OK);
  assert_int_equal(mb__hip_blaslt_supports(&f.st, 1, &p, &why),
                   MB_ERR_UNSUPPORTED);
  mb__hip_blaslt_close(f.st.blaslt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plan_bf16_is_bf16),
      cmocka_unit_test(test_plan_f16_is_f16),
      cmocka_unit_test(test_plan_f32_and_tf32),
      cmocka_unit_test(test_plan_i8_exact),
      cmocka_unit_test(test_plan_fp8_ocp),
      cmocka_unit_test(test_plan_fp8_fnuz_declined),
      cmocka_unit_test(test_plan_layouts),
      cmocka_unit_test(test_plan_native_only),
      cmocka_unit_test(test_plan_other_declines),
      cmocka_unit_test(test_blaslt_calls_bf16),
      cmocka_unit_test(test_blaslt_calls_trans_tf32),
      cmocka_unit_test(test_blaslt_calls_fp8),
      cmocka_unit_test(test_rocblas_calls_bf16),
      cmocka_unit_test(test_rocblas_calls_i8_trans),
      cmocka_unit_test(test_open_failures),
      cmocka_unit_test(test_open_search),
      cmocka_unit_test(test_supports_not_loaded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
