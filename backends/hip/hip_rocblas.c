/* HIP backend — GEMM through rocBLAS (rocblas_gemm_ex), loaded at run time:
 * loading and the version check, the per-device handle, prepare, the
 * timed run and notes. Which call a request becomes is decided in
 * hip_gemm_plan.c.
 *
 * Only the entry points below are declared, from ROCm/rocBLAS
 * library/include/internal/rocblas-auxiliary.h and rocblas-functions.h
 * (rocblas_gemm_ex: unchanged from rocBLAS 2.x to 5.x) and rocblas-types.h
 * (rocblas_status, rocblas_gemm_algo, rocblas_gemm_flags); no vendor header
 * is needed to build.
 *
 * Version: rocBLAS >= 4.0.0 (ROCm 6.0). 4.0 removed the packed int8x4
 * layout (rocblas_gemm_flags_pack_int8x4): i8 operands are plain int8_t of
 * any dimension, so flags 0 is right on every GPU; before 4.0, GPUs older
 * than gfx908 needed the packed layout (K a multiple of 4). rocblas_gemm_ex
 * takes rocblas_int (int32) sizes: the plan declines larger ones.
 *
 * The choice of kernel is rocBLAS's own (rocblas_gemm_algo_standard,
 * solution index 0): nothing to tune here. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_gemm_plan.h"
#include "hip_vendor.h"

/* ---- the vendor's declarations (rocblas-types.h) ------------------------- */

typedef int rb_status_t; /* rocblas_status */
enum {
  RB_STATUS_SUCCESS = 0,
  RB_STATUS_NOT_IMPLEMENTED = 2,
  RB_STATUS_MEMORY_ERROR = 5,
  RB_STATUS_EXCLUDED_FROM_BUILD = 14,
  RB_STATUS_ARCH_MISMATCH = 15
};
static const char *const k_rb_status[] = {"rocblas_status_success",
                                          "rocblas_status_invalid_handle",
                                          "rocblas_status_not_implemented",
                                          "rocblas_status_invalid_pointer",
                                          "rocblas_status_invalid_size",
                                          "rocblas_status_memory_error",
                                          "rocblas_status_internal_error",
                                          "rocblas_status_perf_degraded",
                                          "rocblas_status_size_query_mismatch",
                                          "rocblas_status_size_increased",
                                          "rocblas_status_size_unchanged",
                                          "rocblas_status_invalid_value",
                                          "rocblas_status_continue",
                                          "rocblas_status_check_numerics_fail",
                                          "rocblas_status_excluded_from_build",
                                          "rocblas_status_arch_mismatch"};

enum { RB_GEMM_ALGO_STANDARD = 0 }; /* rocblas_gemm_algo */
enum { RB_GEMM_FLAGS_NONE = 0 };    /* rocblas_gemm_flags */

/* The oldest rocBLAS this file is written for (see above). */
#define RB_MIN_MAJOR 4

struct mb_hip_rocblas {
  void *dl;
  char path[512];
  int major, minor, patch;
  char version_text[128];
  rb_status_t (*create)(void **handle);
  rb_status_t (*destroy)(void *handle);
  rb_status_t (*set_stream)(void *handle, hipStream_t stream);
  rb_status_t (*version_size)(size_t *len);
  rb_status_t (*version_string)(char *buf, size_t len);
  rb_status_t (*gemm_ex)(void *handle, int trans_a, int trans_b, int32_t m,
                         int32_t n, int32_t k, const void *alpha, const void *a,
                         int a_type, int32_t lda, const void *b, int b_type,
                         int32_t ldb, const void *beta, const void *c,
                         int c_type, int32_t ldc, void *d, int d_type,
                         int32_t ldd, int compute_type, int algo,
                         int32_t solution_index, uint32_t flags);
};

#define SYM(name, field) \
  { name, offsetof(struct mb_hip_rocblas, field) }
static const mb_gpuh_sym_t k_syms[] = {
    SYM("rocblas_create_handle", create),
    SYM("rocblas_destroy_handle", destroy),
    SYM("rocblas_set_stream", set_stream),
    SYM("rocblas_get_version_string_size", version_size),
    SYM("rocblas_get_version_string", version_string),
    SYM("rocblas_gemm_ex", gemm_ex),
};
#undef SYM

/* Newest first: ROCm 7 ships librocblas.so.5, ROCm 6 .so.4, ROCm 5.6/5.7
 * .so.3 (found, then refused by the version check with its version). */
static const char *const k_sonames[] = {"librocblas.so", "librocblas.so.5",
                                        "librocblas.so.4", "librocblas.so.3"};

/* ---- loading ------------------------------------------------------------- */

/* "4.3.0.60300-abcdef": rocblas_get_version_string (rocblas-auxiliary.h)
 * needs no handle and no GPU. */
static int read_version(mb_hip_rocblas_t *lib, char *text, size_t cap) {
  size_t len = 0;
  if (lib->version_size(&len) != RB_STATUS_SUCCESS || len == 0 || len > cap ||
      lib->version_string(text, cap) != RB_STATUS_SUCCESS)
    return -1;
  text[cap - 1] = '\0';
  return sscanf(text, "%d.%d.%d", &lib->major, &lib->minor, &lib->patch) >= 2
             ? 0
             : -1;
}

mb_hip_rocblas_t *mb__hip_rocblas_open(const char *path, char *why,
                                       size_t cap) {
  static const mb_gpuh_lib_t spec = MB_GPUH_LIB(
      "rocBLAS", "MB_ROCBLAS_LIBRARY", k_sonames, k_syms, mb_hip_rocblas_t);
  char loaded[512];
  mb_hip_rocblas_t *lib =
      mb__gpuh_load(&spec, path, loaded, sizeof loaded, why, cap);
  if (!lib) return NULL;
  snprintf(lib->path, sizeof lib->path, "%s", loaded);
  char text[96];
  if (read_version(lib, text, sizeof text) != 0) {
    snprintf(why, cap,
             "rocBLAS (%s): cannot tell its version "
             "(rocblas_get_version_string failed)",
             loaded);
    mb__hip_rocblas_close(lib);
    return NULL;
  }
  if (lib->major < RB_MIN_MAJOR) {
    snprintf(why, cap,
             "rocBLAS %s (%s) is too old: this backend needs >= 4.0.0 "
             "(ROCm 6.0), where i8 operands are plain int8 of any "
             "dimension (the packed int8x4 layout is gone)",
             text, loaded);
    mb__hip_rocblas_close(lib);
    return NULL;
  }
  snprintf(lib->version_text, sizeof lib->version_text, "rocBLAS %s", text);
  return lib;
}

void mb__hip_rocblas_close(mb_hip_rocblas_t *lib) {
  if (!lib) return;
  dlclose(lib->dl);
  free(lib);
}

const char *mb__hip_rocblas_version(const mb_hip_rocblas_t *lib) {
  return lib ? lib->version_text : "";
}

/* ---- errors -------------------------------------------------------------- */

static const char *rb_status_name(rb_status_t s) {
  return (s >= 0 && (size_t)s < sizeof k_rb_status / sizeof k_rb_status[0])
             ? k_rb_status[s]
             : "unknown rocblas_status";
}

static mb_status_t rb_check(mb_hip_state_t *st, rb_status_t s,
                            const char *what) {
  if (s == RB_STATUS_SUCCESS) return MB_OK;
  snprintf(st->base.last_error, sizeof st->base.last_error,
           "hip: rocblas: %s: %s", what, rb_status_name(s));
  st->base.host.set_error("%s", st->base.last_error);
  if (s == RB_STATUS_NOT_IMPLEMENTED || s == RB_STATUS_ARCH_MISMATCH ||
      s == RB_STATUS_EXCLUDED_FROM_BUILD)
    return MB_ERR_UNSUPPORTED;
  return s == RB_STATUS_MEMORY_ERROR ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

/* ---- the device's handle ------------------------------------------------- */

static mb_status_t ensure_handle(mb_hip_state_t *st, mb_hip_device_t *d) {
  if (d->rocblas_handle) return MB_OK;
  void *h = NULL;
  mb_status_t s = mb__hip_check(st, hipSetDevice(d->base.ordinal),
                                "rocblas: set the device");
  /* A rocBLAS that cannot make a handle here has, in practice, no code for
   * this GPU: the request is declined, not failed. */
  rb_status_t rs = RB_STATUS_SUCCESS;
  if (s == MB_OK && (rs = st->rocblas->create(&h)) != RB_STATUS_SUCCESS) {
    st->base.host.set_error(
        "hip: rocblas: %s cannot make a handle on %s (%s): %s",
        st->rocblas->version_text, d->base.name, d->arch_base,
        rb_status_name(rs));
    return MB_ERR_UNSUPPORTED;
  }
  /* Every call of this handle goes to the device stream. */
  if (s == MB_OK)
    s = rb_check(st, st->rocblas->set_stream(h, d->base.stream),
                 "set the stream");
  if (s != MB_OK) {
    if (h) st->rocblas->destroy(h);
    return s;
  }
  d->rocblas_handle = h;
  return MB_OK;
}

void mb__hip_rocblas_device_fini(mb_hip_state_t *st, mb_hip_device_t *d) {
  if (!d || !d->rocblas_handle) return;
  hipSetDevice(d->base.ordinal);
  if (st && st->rocblas) st->rocblas->destroy(d->rocblas_handle);
  hipGetLastError();
  d->rocblas_handle = NULL;
}

/* ---- supports ------------------------------------------------------------ */

mb_status_t mb__hip_rocblas_supports(void *bstate, uint32_t dev,
                                     const mb_op_params_t *params,
                                     const char **why) {
  mb_hip_state_t *st = bstate;
  if (!st || !params) {
    if (why) *why = "rocblas: no backend state";
    return MB_ERR_UNSUPPORTED;
  }
  /* As hipBLASLt's: formatted here, kept by the library (host.reason). */
  char buf[512];
  mb_status_t s = MB_ERR_UNSUPPORTED;
  if (!st->rocblas) {
    snprintf(buf, sizeof buf, "rocBLAS not loaded: %s", st->rocblas_why);
  } else if (dev >= st->base.num_devices) {
    snprintf(buf, sizeof buf, "rocblas: no HIP device %u", dev);
  } else {
    mb_hip_gemm_plan_t pl;
    s = mb__hip_plan_rocblas(mb__hip_device(st, dev), params, &pl, buf,
                             sizeof buf);
  }
  if (s != MB_OK && why)
    *why = st->base.host.reason(st->base.host.host, "%s", buf);
  return s;
}

/* ---- the kernel ---------------------------------------------------------- */

typedef struct rb_kernel {
  mb_hip_state_t *st;
  mb_hip_device_t *d;
  mb_hip_gemm_plan_t plan;
  union {
    float f;
    int32_t i;
  } alpha, beta; /* the compute type's: f32, or i32 for i8 */
  char operands[160];
} rb_kernel_t;

mb_status_t mb__hip_rocblas_prepare_on(mb_hip_state_t *st, mb_hip_device_t *d,
                                       const mb_kernel_call_t *call,
                                       void **kstate) {
  *kstate = NULL;
  rb_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    st->base.host.set_error("hip: rocblas: out of host memory");
    return MB_ERR_NO_MEMORY;
  }
  k->st = st;
  k->d = d;
  char why[512];
  if (mb__hip_plan_rocblas(d, call->params, &k->plan, why, sizeof why) !=
      MB_OK) {
    st->base.host.set_error("hip: rocblas: %s", why);
    free(k);
    return MB_ERR_UNSUPPORTED;
  }
  if (k->plan.int_scalars) {
    k->alpha.i = 1; /* the op: i8 -> i32 takes alpha 1, beta 0 */
    k->beta.i = 0;
  } else {
    k->alpha.f = (float)call->params->alpha;
    k->beta.f = (float)call->params->beta;
  }
  const mb_hip_gemm_plan_t *pl = &k->plan;
  snprintf(k->operands, sizeof k->operands,
           "D^T = B^T A^T: rocBLAS A = our B (%lldx%lld, ld %lld, op %s), "
           "B = our A (%lldx%lld, ld %lld, op %s); nothing copied",
           (long long)pl->a_rows, (long long)pl->a_cols, (long long)pl->lda,
           mb__hip_op_name(pl->op_a), (long long)pl->b_rows,
           (long long)pl->b_cols, (long long)pl->ldb,
           mb__hip_op_name(pl->op_b));
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__hip_rocblas_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate) {
  mb_hip_state_t *st = bstate;
  *kstate = NULL;
  if (!st->rocblas) {
    st->base.host.set_error("hip: rocblas: rocBLAS not loaded: %s",
                            st->rocblas_why);
    return MB_ERR_UNSUPPORTED;
  }
  if (!call || !call->params || call->num_in < 2 || call->num_out < 1) {
    st->base.host.set_error("hip: rocblas: the call needs A, B and D");
    return MB_ERR_INVALID_ARG;
  }
  mb_hip_device_t *d = mb__hip_device(st, call->device);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_status_t s = ensure_handle(st, d);
  return s == MB_OK ? mb__hip_rocblas_prepare_on(st, d, call, kstate) : s;
}

/* One rocblas_gemm_ex on the handle's stream (the device stream): its A is
 * our B, its B our A, C = D in place. */
mb_status_t mb__hip_rocblas_run(void *kstate, const mb_kernel_call_t *call) {
  const rb_kernel_t *k = kstate;
  const mb_hip_gemm_plan_t *pl = &k->plan;
  void *dptr = call->out[0];
  return rb_check(
      k->st,
      k->st->rocblas->gemm_ex(
          k->d->rocblas_handle, pl->op_a, pl->op_b, (int32_t)pl->m,
          (int32_t)pl->n, (int32_t)pl->k, &k->alpha, call->in[1], pl->a_type,
          (int32_t)pl->lda, call->in[0], pl->b_type, (int32_t)pl->ldb, &k->beta,
          dptr, pl->d_type, (int32_t)pl->ldd, dptr, pl->d_type,
          (int32_t)pl->ldd, pl->compute, RB_GEMM_ALGO_STANDARD, 0,
          RB_GEMM_FLAGS_NONE),
      "rocblas_gemm_ex");
}

void mb__hip_rocblas_release(void *kstate) {
  free(kstate); /* host memory only */
}

uint32_t mb__hip_rocblas_notes(void *kstate, mb_kernel_note_t *out,
                               uint32_t max) {
  const rb_kernel_t *k = kstate;
  if (!k) return 0;
  const mb_hip_gemm_plan_t *pl = &k->plan;
  mb_kernel_note_t n[12];
  uint32_t c = 0;
  n[c++] = (mb_kernel_note_t){"library", k->st->rocblas->version_text, 0};
  n[c++] = (mb_kernel_note_t){"library_path", k->st->rocblas->path, 0};
  n[c++] = (mb_kernel_note_t){"math", pl->math, 0};
  /* Our A is rocBLAS's B and our B its A. */
  n[c++] = (mb_kernel_note_t){
      "a_type", mb__hip_type_name(MB_HIP_LIB_ROCBLAS, pl->b_type), 0};
  n[c++] = (mb_kernel_note_t){
      "b_type", mb__hip_type_name(MB_HIP_LIB_ROCBLAS, pl->a_type), 0};
  n[c++] = (mb_kernel_note_t){
      "d_type", mb__hip_type_name(MB_HIP_LIB_ROCBLAS, pl->d_type), 0};
  n[c++] = (mb_kernel_note_t){
      "compute_type", mb__hip_compute_name(MB_HIP_LIB_ROCBLAS, pl->compute), 0};
  n[c++] = (mb_kernel_note_t){"operands", k->operands, 0};
  n[c++] = (mb_kernel_note_t){"algo", "rocblas_gemm_algo_standard", 0};
  n[c++] = (mb_kernel_note_t){"solution_index", NULL, 0.0};
  for (uint32_t i = 0; i < c && i < max && out; i++) out[i] = n[i];
  return c;
}
