/* HIP backend — which hipBLASLt or rocBLAS problem a GEMM request becomes,
 * and why it is declined when it cannot be one (hip_gemm_plan.h has the
 * operand swap and the support matrix). Pure host code: no HIP call.
 *
 * Each library has ONE table mapping our (dtype, dtype_b, dtype_out,
 * dtype_acc, tf32) to the library's type enums for our A, our B and C/D,
 * its compute type and its alpha/beta type. bf16 is handed as bf16
 * (HIP_R_16BF, rocblas_datatype_bf16_r), never as f16: the ROCm GEMM
 * harness this replaces ran fp16 on hipBLASLt when asked for bf16.
 *
 * Sources: hipBLASLt docs/reference/data-type-support.rst (type
 * combinations; "hipblaslt_f8 and hipblaslt_bf8 [OCP] are only supported
 * on the gfx950 and gfx12 platforms", the FNUZ ones on gfx94x); hipBLASLt
 * clients (HIPBLAS_COMPUTE_32F_FAST_TF32 is its xf32); rocBLAS
 * rocblas_gemm_ex documentation (supported types: f32, f16 -> f16 | f32,
 * bf16 -> bf16 | f32 with f32_r compute, i8 -> i32 with i32_r compute) and
 * deprecations (rocBLAS 4.0 removed packed int8x4: i8 of any dimension;
 * fp8 only through rocblas_gemm_ex3, whose f8_r/bf8_r are the FNUZ
 * formats, deprecated in 4.2 and removed in 5.0). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hip_gemm_plan.h"

enum { GM, GK, GN };

#define NATIVE "the native implementation (--impl native) runs it"

static mb_status_t refuse(char *why, size_t cap, const char *fmt, ...)
    MB__PRINTF(3, 4);
static mb_status_t refuse(char *why, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return MB_ERR_UNSUPPORTED;
}

/* The plan runs inside the module, which does not link libmicrobench. */
static const char *dname(mb_dtype_t t) {
  static const char *const k_names[MB_DTYPE_COUNT] = {
      [MB_DTYPE_NONE] = "none",     [MB_DTYPE_F32] = "f32",
      [MB_DTYPE_F16] = "f16",       [MB_DTYPE_BF16] = "bf16",
      [MB_DTYPE_F8E4M3] = "f8e4m3", [MB_DTYPE_F8E5M2] = "f8e5m2",
      [MB_DTYPE_I8] = "i8",         [MB_DTYPE_I4] = "i4",
      [MB_DTYPE_I32] = "i32"};
  return ((int)t >= 0 && t < MB_DTYPE_COUNT && k_names[t]) ? k_names[t] : "?";
}

static int is_fp8(mb_dtype_t t) {
  return t == MB_DTYPE_F8E4M3 || t == MB_DTYPE_F8E5M2;
}

/* ---- the vendors' names -------------------------------------------------- */

typedef struct enum_name {
  int32_t value;
  const char *name;
} enum_name_t;

static const enum_name_t k_hip_types[] = {
    {MB_HIP_R_32F, "HIP_R_32F"},
    {MB_HIP_R_16F, "HIP_R_16F"},
    {MB_HIP_R_8I, "HIP_R_8I"},
    {MB_HIP_R_32I, "HIP_R_32I"},
    {MB_HIP_R_16BF, "HIP_R_16BF"},
    {MB_HIP_R_8F_E4M3, "HIP_R_8F_E4M3"},
    {MB_HIP_R_8F_E5M2, "HIP_R_8F_E5M2"},
    {MB_HIP_R_8F_E4M3_FNUZ, "HIP_R_8F_E4M3_FNUZ"},
    {MB_HIP_R_8F_E5M2_FNUZ, "HIP_R_8F_E5M2_FNUZ"},
    {0, NULL}};

static const enum_name_t k_hip_computes[] = {
    {MB_HIPBLAS_COMPUTE_32F, "HIPBLAS_COMPUTE_32F"},
    {MB_HIPBLAS_COMPUTE_32F_FAST_TF32, "HIPBLAS_COMPUTE_32F_FAST_TF32"},
    {MB_HIPBLAS_COMPUTE_32I, "HIPBLAS_COMPUTE_32I"},
    {0, NULL}};

static const enum_name_t k_rocblas_types[] = {
    {MB_ROCBLAS_DATATYPE_F16_R, "rocblas_datatype_f16_r"},
    {MB_ROCBLAS_DATATYPE_F32_R, "rocblas_datatype_f32_r"},
    {MB_ROCBLAS_DATATYPE_I8_R, "rocblas_datatype_i8_r"},
    {MB_ROCBLAS_DATATYPE_I32_R, "rocblas_datatype_i32_r"},
    {MB_ROCBLAS_DATATYPE_BF16_R, "rocblas_datatype_bf16_r"},
    {0, NULL}};

static const char *lookup_name(const enum_name_t *t, int32_t v) {
  for (; t->name; t++)
    if (t->value == v) return t->name;
  return "?";
}

const char *mb__hip_type_name(mb_hip_gemm_lib_t lib, int32_t type) {
  return lookup_name(lib == MB_HIP_LIB_ROCBLAS ? k_rocblas_types : k_hip_types,
                     type);
}

const char *mb__hip_compute_name(mb_hip_gemm_lib_t lib, int32_t compute) {
  return lookup_name(
      lib == MB_HIP_LIB_ROCBLAS ? k_rocblas_types : k_hip_computes, compute);
}

const char *mb__hip_op_name(int32_t op) {
  return op == MB_HIPBLAS_OP_N ? "N" : op == MB_HIPBLAS_OP_T ? "T" : "?";
}

/* ---- what the device's matrix cores can do ------------------------------- */

enum {
  ARCH_XF32 = 1,     /* xf32 matrix math (HIPBLAS_COMPUTE_32F_FAST_TF32) */
  ARCH_FNUZ_FP8 = 2, /* fp8 MFMA in the FNUZ formats */
  ARCH_OCP_FP8 = 4   /* fp8 matrix math in the OCP formats we hold */
};

/* By processor-name prefix. gfx94x is CDNA3 (MI300): xf32 and FNUZ fp8;
 * gfx950 (CDNA4) and gfx12 (RDNA4) read OCP fp8 (hipBLASLt's data-type
 * support page). Everything else: neither. */
static const struct {
  const char *prefix;
  unsigned features;
} k_arch_features[] = {
    {"gfx940", ARCH_XF32 | ARCH_FNUZ_FP8},
    {"gfx941", ARCH_XF32 | ARCH_FNUZ_FP8},
    {"gfx942", ARCH_XF32 | ARCH_FNUZ_FP8},
    {"gfx950", ARCH_OCP_FP8},
    {"gfx12", ARCH_OCP_FP8},
};

static unsigned arch_features(const mb_hip_device_t *d) {
  unsigned f = 0;
  for (size_t i = 0; i < sizeof k_arch_features / sizeof k_arch_features[0];
       i++)
    if (!strncmp(d->arch_base, k_arch_features[i].prefix,
                 strlen(k_arch_features[i].prefix)))
      f |= k_arch_features[i].features;
  /* The device's own flag wins: fp8 in the FNUZ format is never OCP. */
  if (d->fp8_fnuz) f = (f | ARCH_FNUZ_FP8) & ~(unsigned)ARCH_OCP_FP8;
  return f;
}

/* ---- the tables ---------------------------------------------------------- */

typedef enum need {
  NEED_NONE = 0,
  NEED_XF32 = 1,   /* xf32 matrix math */
  NEED_OCP_FP8 = 2 /* OCP fp8 matrix math, hipBLASLt >= 0.10 */
} need_t;

typedef struct gemm_row {
  mb_dtype_t a, b, out, acc;      /* ours */
  int tf32;                       /* the MB_PARAM_TF32 variant */
  int32_t type_a, type_b, type_d; /* our A, our B, C/D as the library's */
  int32_t compute, scale;
  need_t need;
  const char *math;
} gemm_row_t;

#define ROW(a, b, out, acc, tf32, ta, tb, td, comp, scale, need, math)        \
  {                                                                           \
    MB_DTYPE_##a, MB_DTYPE_##b, MB_DTYPE_##out, MB_DTYPE_##acc, tf32, ta, tb, \
        td, comp, scale, need, math                                           \
  }

#define C32F MB_HIPBLAS_COMPUTE_32F
/* hipBLASLt fp8: one row per output type; compute and scales f32. */
#define LT_FP8(a, b, ta, tb, math)                                     \
  ROW(a, b, BF16, F32, 0, ta, tb, MB_HIP_R_16BF, C32F, MB_HIP_R_32F,   \
      NEED_OCP_FP8, math),                                             \
      ROW(a, b, F16, F32, 0, ta, tb, MB_HIP_R_16F, C32F, MB_HIP_R_32F, \
          NEED_OCP_FP8, math),                                         \
      ROW(a, b, F32, F32, 0, ta, tb, MB_HIP_R_32F, C32F, MB_HIP_R_32F, \
          NEED_OCP_FP8, math)

static const gemm_row_t k_blaslt_rows[] = {
    ROW(F32, F32, F32, F32, 0, MB_HIP_R_32F, MB_HIP_R_32F, MB_HIP_R_32F, C32F,
        MB_HIP_R_32F, NEED_NONE, "f32"),
    ROW(F32, F32, F32, F32, 1, MB_HIP_R_32F, MB_HIP_R_32F, MB_HIP_R_32F,
        MB_HIPBLAS_COMPUTE_32F_FAST_TF32, MB_HIP_R_32F, NEED_XF32,
        "tf32 (xf32)"),
    ROW(BF16, BF16, BF16, F32, 0, MB_HIP_R_16BF, MB_HIP_R_16BF, MB_HIP_R_16BF,
        C32F, MB_HIP_R_32F, NEED_NONE, "bf16"),
    ROW(BF16, BF16, F32, F32, 0, MB_HIP_R_16BF, MB_HIP_R_16BF, MB_HIP_R_32F,
        C32F, MB_HIP_R_32F, NEED_NONE, "bf16"),
    ROW(F16, F16, F16, F32, 0, MB_HIP_R_16F, MB_HIP_R_16F, MB_HIP_R_16F, C32F,
        MB_HIP_R_32F, NEED_NONE, "f16"),
    ROW(F16, F16, F32, F32, 0, MB_HIP_R_16F, MB_HIP_R_16F, MB_HIP_R_32F, C32F,
        MB_HIP_R_32F, NEED_NONE, "f16"),
    /* Exact: i32 accumulation, int32 alpha/beta (scale type HIP_R_32I). */
    ROW(I8, I8, I32, I32, 0, MB_HIP_R_8I, MB_HIP_R_8I, MB_HIP_R_32I,
        MB_HIPBLAS_COMPUTE_32I, MB_HIP_R_32I, NEED_NONE, "i8"),
    LT_FP8(F8E4M3, F8E4M3, MB_HIP_R_8F_E4M3, MB_HIP_R_8F_E4M3,
           "fp8 e4m3 x e4m3"),
    LT_FP8(F8E4M3, F8E5M2, MB_HIP_R_8F_E4M3, MB_HIP_R_8F_E5M2,
           "fp8 e4m3 x e5m2"),
    LT_FP8(F8E5M2, F8E4M3, MB_HIP_R_8F_E5M2, MB_HIP_R_8F_E4M3,
           "fp8 e5m2 x e4m3"),
    LT_FP8(F8E5M2, F8E5M2, MB_HIP_R_8F_E5M2, MB_HIP_R_8F_E5M2,
           "fp8 e5m2 x e5m2"),
};

/* rocblas_gemm_ex: compute (and alpha/beta) f32_r for floats, i32_r for
 * i8. */
#define RF32 MB_ROCBLAS_DATATYPE_F32_R
static const gemm_row_t k_rocblas_rows[] = {
    ROW(F32, F32, F32, F32, 0, RF32, RF32, RF32, RF32, RF32, NEED_NONE, "f32"),
    ROW(BF16, BF16, BF16, F32, 0, MB_ROCBLAS_DATATYPE_BF16_R,
        MB_ROCBLAS_DATATYPE_BF16_R, MB_ROCBLAS_DATATYPE_BF16_R, RF32, RF32,
        NEED_NONE, "bf16"),
    ROW(BF16, BF16, F32, F32, 0, MB_ROCBLAS_DATATYPE_BF16_R,
        MB_ROCBLAS_DATATYPE_BF16_R, RF32, RF32, RF32, NEED_NONE, "bf16"),
    ROW(F16, F16, F16, F32, 0, MB_ROCBLAS_DATATYPE_F16_R,
        MB_ROCBLAS_DATATYPE_F16_R, MB_ROCBLAS_DATATYPE_F16_R, RF32, RF32,
        NEED_NONE, "f16"),
    ROW(F16, F16, F32, F32, 0, MB_ROCBLAS_DATATYPE_F16_R,
        MB_ROCBLAS_DATATYPE_F16_R, RF32, RF32, RF32, NEED_NONE, "f16"),
    ROW(I8, I8, I32, I32, 0, MB_ROCBLAS_DATATYPE_I8_R, MB_ROCBLAS_DATATYPE_I8_R,
        MB_ROCBLAS_DATATYPE_I32_R, MB_ROCBLAS_DATATYPE_I32_R,
        MB_ROCBLAS_DATATYPE_I32_R, NEED_NONE, "i8"),
};

typedef struct lib_desc {
  mb_hip_gemm_lib_t lib;
  const char *name;
  const gemm_row_t *rows;
  size_t count;
} lib_desc_t;

static const lib_desc_t k_blaslt = {
    MB_HIP_LIB_BLASLT, "hipBLASLt", k_blaslt_rows,
    sizeof k_blaslt_rows / sizeof k_blaslt_rows[0]};
static const lib_desc_t k_rocblas = {
    MB_HIP_LIB_ROCBLAS, "rocBLAS", k_rocblas_rows,
    sizeof k_rocblas_rows / sizeof k_rocblas_rows[0]};

static int tf32_of(const mb_op_params_t *p) {
  return (p->flags & MB_PARAM_TF32) != 0;
}

static const gemm_row_t *find_row(const lib_desc_t *lib,
                                  const mb_op_params_t *p) {
  for (size_t i = 0; i < lib->count; i++) {
    const gemm_row_t *r = &lib->rows[i];
    if (r->a == p->dtype && r->b == p->dtype_b && r->out == p->dtype_out &&
        r->acc == p->dtype_acc && r->tf32 == tf32_of(p))
      return r;
  }
  return NULL;
}

/* No row: say what the table does take for these inputs. */
static mb_status_t no_row(const lib_desc_t *lib, const mb_op_params_t *p,
                          char *why, size_t cap) {
  char outs[96] = "";
  size_t n = 0;
  mb_dtype_t acc = MB_DTYPE_NONE;
  for (size_t i = 0; i < lib->count; i++) {
    const gemm_row_t *r = &lib->rows[i];
    if (r->a != p->dtype || r->b != p->dtype_b || r->tf32) continue;
    n += (size_t)snprintf(outs + n, n < sizeof outs ? sizeof outs - n : 0,
                          "%s%s", n ? " | " : "", dname(r->out));
    acc = r->acc;
  }
  if (!n)
    return refuse(why, cap, "%s x %s has no %s GEMM in this backend",
                  dname(p->dtype), dname(p->dtype_b), lib->name);
  return refuse(why, cap,
                "%s x %s: %s writes %s accumulating in %s, not %s accumulating "
                "in %s",
                dname(p->dtype), dname(p->dtype_b), lib->name, outs, dname(acc),
                dname(p->dtype_out), dname(p->dtype_acc));
}

/* ---- scales -------------------------------------------------------------- */

/* "none", "tensor", "row", "col" or "BMxBN" (A: M x K, B: K x N). */
static const char *scale_name(const mb_op_params_t *p, int our_b, char *buf,
                              size_t cap) {
  const mb_scaling_t *s = our_b ? &p->scale_b : &p->scale_a;
  const int64_t rows = our_b ? p->shape[GK] : p->shape[GM];
  const int64_t cols = our_b ? p->shape[GN] : p->shape[GK];
  if (s->mode == MB_SCALE_NONE) return "none";
  if (s->block[0] == rows && s->block[1] == cols) return "tensor";
  if (!our_b && s->block[0] == 1 && s->block[1] == cols) return "row";
  if (our_b && s->block[0] == rows && s->block[1] == 1) return "col";
  snprintf(buf, cap, "%lldx%lld", (long long)s->block[0],
           (long long)s->block[1]);
  return buf;
}

/* One f32 for the whole operand (or none): what a hipBLASLt scale pointer
 * (HIPBLASLT_MATMUL_DESC_A/B_SCALE_POINTER) holds. */
static int tensor_or_none(const mb_op_params_t *p, int our_b) {
  char buf[48];
  const char *n = scale_name(p, our_b, buf, sizeof buf);
  return !strcmp(n, "none") || !strcmp(n, "tensor");
}

/* ---- declines shared by both libraries ----------------------------------- */

static mb_status_t common_declines(const lib_desc_t *lib,
                                   const mb_op_params_t *p, char *why,
                                   size_t cap) {
  if (p->ndim != 3 || p->shape[GM] <= 0 || p->shape[GK] <= 0 ||
      p->shape[GN] <= 0)
    return refuse(why, cap, "gemm takes a positive M x K x N shape");
  if (p->flags & MB_PARAM_QUANTIZE_INPUTS)
    return refuse(
        why, cap,
        "quantize-inputs (A and B quantized to %s inside the op, "
        "then the scaled GEMM): %s has no fused quantize step; " NATIVE,
        dname(p->dtype_q), lib->name);
  if (p->dtype_b == MB_DTYPE_I4)
    return refuse(why, cap,
                  "int4 weight-only (%s x i4 with group scales): %s takes no "
                  "i4 operands; " NATIVE,
                  dname(p->dtype), lib->name);
  if (p->dtype == MB_DTYPE_I8 && p->dtype_out != MB_DTYPE_I32)
    return refuse(why, cap,
                  "rescaled i8 (i8 x i8 -> %s with row/column scales): %s's "
                  "i8 GEMM is the exact i8 x i8 -> i32 and applies no scale "
                  "vectors; " NATIVE,
                  dname(p->dtype_out), lib->name);
  /* Its scale pointers hold f32: e8m0 bytes read as such would be wrong. */
  if (p->dtype_scale == MB_DTYPE_E8M0)
    return refuse(why, cap,
                  "e8m0 scales (MXFP8): this backend hands %s f32 scales "
                  "only; " NATIVE,
                  lib->name);
  return MB_OK;
}

/* rocblas_int is int32_t; hipBLASLt's layouts take only "values that can be
 * expressed as int32_t" (hipblaslt.h, HIPBLASLT_MATRIX_LAYOUT_ROWS). */
static mb_status_t check_int32(const lib_desc_t *lib,
                               const mb_hip_gemm_plan_t *pl, char *why,
                               size_t cap) {
  const int64_t v[] = {pl->m, pl->n, pl->k, pl->lda, pl->ldb, pl->ldd};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] > INT32_MAX)
      return refuse(why, cap,
                    "%s takes dimensions and leading dimensions up to "
                    "2^31 - 1; this GEMM has %lld",
                    lib->name, (long long)v[i]);
  return MB_OK;
}

/* The operand swap and the layouts (hip_gemm_plan.h). */
static void fill(const lib_desc_t *lib, const gemm_row_t *r,
                 const mb_op_params_t *p, mb_hip_gemm_plan_t *pl) {
  const int64_t m = p->shape[GM], k = p->shape[GK], n = p->shape[GN];
  const int ta = (p->flags & MB_PARAM_TRANS_A) != 0;
  const int tb = (p->flags & MB_PARAM_TRANS_B) != 0;
  pl->lib = lib->lib;
  pl->m = n;
  pl->n = m;
  pl->k = k;
  pl->op_a = tb ? MB_HIPBLAS_OP_T : MB_HIPBLAS_OP_N;
  pl->a_rows = tb ? k : n;
  pl->a_cols = tb ? n : k;
  pl->lda = pl->a_rows;
  pl->op_b = ta ? MB_HIPBLAS_OP_T : MB_HIPBLAS_OP_N;
  pl->b_rows = ta ? m : k;
  pl->b_cols = ta ? k : m;
  pl->ldb = pl->b_rows;
  pl->ldd = n;
  pl->a_type = r->type_b; /* its A is our B */
  pl->b_type = r->type_a;
  pl->d_type = r->type_d;
  pl->compute = r->compute;
  pl->scale_type = r->scale;
  pl->int_scalars =
      r->scale == (lib->lib == MB_HIP_LIB_ROCBLAS ? MB_ROCBLAS_DATATYPE_I32_R
                                                  : MB_HIP_R_32I);
  snprintf(pl->math, sizeof pl->math, "%s", r->math);
}

/* ---- hipBLASLt ----------------------------------------------------------- */

static mb_status_t blaslt_needs(const mb_hip_device_t *d, const gemm_row_t *r,
                                int version, char *why, size_t cap) {
  const unsigned f = arch_features(d);
  if (r->need == NEED_XF32 && !(f & ARCH_XF32))
    return refuse(why, cap,
                  "tf32: hipBLASLt runs it as xf32 "
                  "(HIPBLAS_COMPUTE_32F_FAST_TF32), matrix math that only "
                  "gfx940/941/942 (MI300) have; this GPU (%s, %s) has none "
                  "(run without tf32 for exact f32)",
                  d->base.name, d->arch_base);
  if (r->need != NEED_OCP_FP8) return MB_OK;
  if (f & ARCH_FNUZ_FP8)
    return refuse(why, cap,
                  "fp8 on %s (%s): our f8e4m3/f8e5m2 tensors hold the OCP "
                  "formats, but this GPU's matrix cores read the FNUZ "
                  "variants (exponent bias one higher, so every value would "
                  "read as half of itself, and 0x80 is NaN instead of -0): "
                  "handing them our bytes would compute wrong values, so "
                  "hipBLASLt does not run it; the native implementation "
                  "(--impl native) does",
                  d->arch_base, d->base.name);
  if (!(f & ARCH_OCP_FP8))
    return refuse(why, cap,
                  "fp8: this GPU (%s, %s) has no fp8 matrix math (fp8 MFMA "
                  "came with gfx94x in the FNUZ format, OCP fp8 with gfx950 "
                  "and gfx12); the native implementation (--impl native) "
                  "runs fp8 GEMMs here",
                  d->base.name, d->arch_base);
  if (version < MB_HIPBLASLT_OCP_FP8_VERSION)
    return refuse(why, cap,
                  "fp8: hipBLASLt %d.%d.%d predates the OCP fp8 types "
                  "(HIP_R_8F_E4M3/E5M2 arrived with hipBLASLt 0.10, ROCm "
                  "6.3)",
                  version / 100000, (version / 100) % 1000, version % 100);
  return MB_OK;
}

mb_status_t mb__hip_plan_blaslt(const mb_hip_device_t *d,
                                const mb_op_params_t *p, int version,
                                mb_hip_gemm_plan_t *pl, char *why, size_t cap) {
  memset(pl, 0, sizeof *pl);
  mb_status_t s = common_declines(&k_blaslt, p, why, cap);
  if (s != MB_OK) return s;
  const gemm_row_t *r = find_row(&k_blaslt, p);
  if (!r) return no_row(&k_blaslt, p, why, cap);
  if ((s = blaslt_needs(d, r, version, why, cap)) != MB_OK) return s;
  const int fp8 = is_fp8(p->dtype);
  if (fp8 && (!tensor_or_none(p, 0) || !tensor_or_none(p, 1))) {
    char ba[48], bb[48];
    return refuse(why, cap,
                  "fp8 with scale_a %s / scale_b %s: this backend hands "
                  "hipBLASLt tensor-wide scales only (one f32 per operand, "
                  "its A/B scale pointers); row, column and block scales "
                  "run on the native implementation (--impl native)",
                  scale_name(p, 0, ba, sizeof ba),
                  scale_name(p, 1, bb, sizeof bb));
  }
  if (!fp8 &&
      (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE))
    return refuse(why, cap, "%s inputs take no scales", dname(p->dtype));
  fill(&k_blaslt, r, p, pl);
  pl->scale_a = fp8 && p->scale_a.mode != MB_SCALE_NONE;
  pl->scale_b = fp8 && p->scale_b.mode != MB_SCALE_NONE;
  return check_int32(&k_blaslt, pl, why, cap);
}

/* ---- rocBLAS ------------------------------------------------------------- */

mb_status_t mb__hip_plan_rocblas(const mb_hip_device_t *d,
                                 const mb_op_params_t *p,
                                 mb_hip_gemm_plan_t *pl, char *why,
                                 size_t cap) {
  memset(pl, 0, sizeof *pl);
  mb_status_t s = common_declines(&k_rocblas, p, why, cap);
  if (s != MB_OK) return s;
  if (is_fp8(p->dtype) || is_fp8(p->dtype_b))
    return refuse(why, cap,
                  "fp8: rocBLAS takes fp8 only through rocblas_gemm_ex3, "
                  "whose f8_r/bf8_r are the FNUZ formats of gfx94x, not the "
                  "OCP e4m3/e5m2 our tensors hold (and rocBLAS 5.0 removed "
                  "it); hipBLASLt runs OCP fp8 on gfx950/gfx12, the native "
                  "implementation (--impl native) elsewhere");
  if (tf32_of(p))
    return refuse(why, cap,
                  "tf32: rocblas_gemm_ex multiplies f32 exactly here (xf32 "
                  "would need rocblas_set_math_mode, which this backend does "
                  "not use); --impl hipblaslt runs xf32 on gfx94x, this GPU "
                  "is %s",
                  d->arch_base);
  const gemm_row_t *r = find_row(&k_rocblas, p);
  if (!r) return no_row(&k_rocblas, p, why, cap);
  if (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE)
    return refuse(why, cap, "%s inputs take no scales", dname(p->dtype));
  fill(&k_rocblas, r, p, pl);
  return check_int32(&k_rocblas, pl, why, cap);
}
