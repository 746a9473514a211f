/* HIP backend — GEMM through hipBLASLt, loaded at run time: loading and the
 * version check, the per-device handle and workspace, prepare (descriptors,
 * heuristic), the timed run, release and notes. Which hipBLASLt problem a
 * request becomes is decided in hip_gemm_plan.c; choosing an algorithm
 * (autotuning, the tune cache) in hip_blaslt_tune.c.
 *
 * The library is found and its entry points resolved by the GPU host
 * layer's loader (gpu_host_dlopen.c, shared with CUDA). Only the entry
 * points hip_blaslt_kernel.h declares are used, from ROCm/hipBLASLt
 * library/include/hipblaslt.h (0.7 to 1.x; unchanged signatures) and
 * ROCm/hipBLAS-common library/include/hipblas-common.h (hipblasStatus_t);
 * no vendor header is needed to build. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_blaslt_kernel.h"

#define SYM(name, field) \
  { name, offsetof(struct mb_hip_blaslt, field) }
static const mb_gpuh_sym_t k_syms[] = {
    SYM("hipblasLtCreate", create),
    SYM("hipblasLtDestroy", destroy),
    SYM("hipblasLtGetVersion", get_version),
    SYM("hipblasLtMatmulDescCreate", desc_create),
    SYM("hipblasLtMatmulDescDestroy", desc_destroy),
    SYM("hipblasLtMatmulDescSetAttribute", desc_set),
    SYM("hipblasLtMatrixLayoutCreate", layout_create),
    SYM("hipblasLtMatrixLayoutDestroy", layout_destroy),
    SYM("hipblasLtMatmulPreferenceCreate", pref_create),
    SYM("hipblasLtMatmulPreferenceDestroy", pref_destroy),
    SYM("hipblasLtMatmulPreferenceSetAttribute", pref_set),
    SYM("hipblasLtMatmulAlgoGetHeuristic", heuristic),
    SYM("hipblasLtMatmul", matmul),
};
#undef SYM

/* Newest first; ROCm 7 ships libhipblaslt.so.1, ROCm 6 libhipblaslt.so.0. */
static const char *const k_sonames[] = {"libhipblaslt.so", "libhipblaslt.so.1",
                                        "libhipblaslt.so.0"};

/* ---- hipBLASLt's version ------------------------------------------------- */

/* hipblasLtGetVersion takes a handle, and a handle needs a GPU. Its
 * implementation (hipBLASLt library/src/amd_detail/hipblaslt.cpp, 0.7 to
 * 1.x) only compares the handle with nullptr and returns
 * HIPBLASLT_VERSION_MAJOR * 100000 + MINOR * 100 + PATCH, so any non-null
 * pointer will do. Should a release ever dereference it, the installed
 * file's name is the fallback: ROCm installs libhipblaslt.so.<major>.<minor>
 * .<rocm> (rocm_set_soversion), e.g. libhipblaslt.so.0.10.60300. */
static int version_from_file(const char *loaded) {
  char real[PATH_MAX];
  const char *name = realpath(loaded, real) ? real : loaded;
  const char *so = strstr(name, ".so.");
  int maj = 0, min = 0;
  if (!so || sscanf(so + 4, "%d.%d", &maj, &min) != 2) return 0;
  return MB_HIPBLASLT_VERSION(maj, min, 0);
}

static int query_version(const mb_hip_blaslt_t *lib) {
  int not_a_handle = 0, v = 0;
  if (lib->get_version(&not_a_handle, &v) == LT_STATUS_SUCCESS && v > 0)
    return v;
  return version_from_file(lib->path);
}

int mb__hip_blaslt_version_number(const mb_hip_blaslt_t *lib) {
  return lib ? lib->version : 0;
}

mb_hip_blaslt_t *mb__hip_blaslt_open(const char *path, char *why, size_t cap) {
  static const mb_gpuh_lib_t spec = MB_GPUH_LIB(
      "hipBLASLt", "MB_HIPBLASLT_LIBRARY", k_sonames, k_syms, mb_hip_blaslt_t);
  char loaded[512];
  mb_hip_blaslt_t *lib =
      mb__gpuh_load(&spec, path, loaded, sizeof loaded, why, cap);
  if (!lib) return NULL;
  snprintf(lib->path, sizeof lib->path, "%s", loaded);
  const int v = query_version(lib);
  const int maj = v / 100000, min = (v / 100) % 1000, pat = v % 100;
  if (v <= 0) {
    snprintf(why, cap,
             "hipBLASLt (%s): cannot tell its version (hipblasLtGetVersion "
             "failed and the file name carries none)",
             loaded);
    mb__hip_blaslt_close(lib);
    return NULL;
  }
  if (v < MB_HIPBLASLT_MIN_VERSION) {
    snprintf(why, cap,
             "hipBLASLt %d.%d.%d (%s) is too old: this backend needs >= "
             "0.7.0 (ROCm 6.1), the first that takes hipDataType and "
             "hipblasComputeType_t; older ones read the type values as "
             "their own enums",
             maj, min, pat, loaded);
    mb__hip_blaslt_close(lib);
    return NULL;
  }
  lib->version = v;
  snprintf(lib->version_text, sizeof lib->version_text, "hipBLASLt %d.%d.%d",
           maj, min, pat);
  return lib;
}

void mb__hip_blaslt_close(mb_hip_blaslt_t *lib) {
  if (!lib) return;
  dlclose(lib->dl);
  free(lib);
}

const char *mb__hip_blaslt_version(const mb_hip_blaslt_t *lib) {
  return lib ? lib->version_text : "";
}

/* ---- the device's handle ------------------------------------------------- */

size_t mb__hip_blaslt_workspace_bytes(const mb_hip_device_t *d) {
  return strncmp(d->arch_base, "gfx950", 6) == 0 ? (size_t)64 << 20
                                                 : (size_t)32 << 20;
}

static mb_status_t ensure_handle(mb_hip_state_t *st, mb_hip_device_t *d) {
  if (d->blaslt_handle) return MB_OK;
  mb_status_t s = mb__hip_check(st, hipSetDevice(d->base.ordinal),
                                "hipblaslt: set the device");
  void *h = NULL, *ws = NULL;
  const size_t bytes = mb__hip_blaslt_workspace_bytes(d);
  /* A hipBLASLt that cannot make a handle here has, in practice, no code
   * for this GPU: the request is declined, not failed. */
  lt_status_t ls = LT_STATUS_SUCCESS;
  if (s == MB_OK && (ls = st->blaslt->create(&h)) != LT_STATUS_SUCCESS)
    return lt_decline(st, "%s cannot make a handle on %s (%s): %s",
                      st->blaslt->version_text, d->base.name, d->arch_base,
                      lt_status_name(ls));
  if (s == MB_OK)
    s = mb__hip_check(st, hipMalloc(&ws, bytes),
                      "hipblaslt: allocate the workspace");
  if (s != MB_OK) {
    if (h) st->blaslt->destroy(h);
    return s;
  }
  d->blaslt_handle = h;
  d->blaslt_workspace = ws;
  d->blaslt_workspace_bytes = bytes;
  return MB_OK;
}

void mb__hip_blaslt_device_fini(mb_hip_state_t *st, mb_hip_device_t *d) {
  if (!d || (!d->blaslt_handle && !d->blaslt_workspace)) return;
  hipSetDevice(d->base.ordinal);
  if (d->blaslt_handle && st && st->blaslt)
    st->blaslt->destroy(d->blaslt_handle);
  if (d->blaslt_workspace) hipFree(d->blaslt_workspace);
  hipGetLastError();
  d->blaslt_handle = d->blaslt_workspace = NULL;
  d->blaslt_workspace_bytes = 0;
}

/* ---- supports ------------------------------------------------------------ */

mb_status_t mb__hip_blaslt_supports(void *bstate, uint32_t dev,
                                    const mb_op_params_t *params,
                                    const char **why) {
  mb_hip_state_t *st = bstate;
  if (!st || !params) {
    if (why) *why = "hipblaslt: no backend state";
    return MB_ERR_UNSUPPORTED;
  }
  /* Reasons with names and numbers in them: the library keeps the text
   * (host.reason), this hook only formats it. */
  char buf[512];
  mb_status_t s = MB_ERR_UNSUPPORTED;
  if (!st->blaslt) {
    snprintf(buf, sizeof buf, "hipBLASLt not loaded: %s", st->blaslt_why);
  } else if (dev >= st->base.num_devices) {
    snprintf(buf, sizeof buf, "hipblaslt: no HIP device %u", dev);
  } else {
    mb_hip_gemm_plan_t pl;
    s = mb__hip_plan_blaslt(mb__hip_device(st, dev), params,
                            st->blaslt->version, &pl, buf, sizeof buf);
  }
  if (s != MB_OK && why)
    *why = st->base.host.reason(st->base.host.host, "%s", buf);
  return s;
}

/* ---- the kernel ---------------------------------------------------------- */

static mb_status_t set_attr(lt_kernel_t *k, int attr, const void *v,
                            size_t size, const char *what) {
  return lt_check(k->st, k->st->blaslt->desc_set(k->desc, attr, v, size), what);
}

/* fp8 tensor scales: our scale_b is its A's, our scale_a its B's. */
static mb_status_t bind_scales(lt_kernel_t *k, const mb_kernel_call_t *call) {
  static const int k_attr[2] = {LT_DESC_A_SCALE_POINTER,
                                LT_DESC_B_SCALE_POINTER};
  const int used[2] = {k->plan.scale_b, k->plan.scale_a};
  const void *ptr[2] = {call->in[3], call->in[2]};
  for (int side = SIDE_A; side <= SIDE_B; side++) {
    if (!used[side] || ptr[side] == k->bound[side]) continue;
    mb_status_t s = set_attr(k, k_attr[side], &ptr[side], sizeof ptr[side],
                             "set a scale pointer");
    if (s != MB_OK) return s;
    k->bound[side] = ptr[side];
  }
  return MB_OK;
}

static mb_status_t build_descs(lt_kernel_t *k) {
  const mb_hip_blaslt_t *lib = k->st->blaslt;
  const mb_hip_gemm_plan_t *pl = &k->plan;
  const int32_t ta = pl->op_a, tb = pl->op_b;
  mb_status_t s =
      lt_check(k->st, lib->desc_create(&k->desc, pl->compute, pl->scale_type),
               "create the matmul descriptor");
  if (s == MB_OK) s = set_attr(k, LT_DESC_TRANSA, &ta, sizeof ta, "set TRANSA");
  if (s == MB_OK) s = set_attr(k, LT_DESC_TRANSB, &tb, sizeof tb, "set TRANSB");
  if (s == MB_OK)
    s = lt_check(k->st,
                 lib->layout_create(&k->la, pl->a_type, (uint64_t)pl->a_rows,
                                    (uint64_t)pl->a_cols, pl->lda),
                 "create A's layout");
  if (s == MB_OK)
    s = lt_check(k->st,
                 lib->layout_create(&k->lb, pl->b_type, (uint64_t)pl->b_rows,
                                    (uint64_t)pl->b_cols, pl->ldb),
                 "create B's layout");
  if (s == MB_OK)
    s = lt_check(k->st,
                 lib->layout_create(&k->lc, pl->d_type, (uint64_t)pl->m,
                                    (uint64_t)pl->n, pl->ldd),
                 "create D's layout");
  if (pl->int_scalars) {
    k->alpha.i = 1; /* the op: i8 -> i32 takes alpha 1, beta 0 */
    k->beta.i = 0;
  } else {
    k->alpha.f = (float)k->p.alpha;
    k->beta.f = (float)k->p.beta;
  }
  return s;
}

static void describe(lt_kernel_t *k) {
  const mb_hip_gemm_plan_t *pl = &k->plan;
  snprintf(k->operands, sizeof k->operands,
           "D^T = B^T A^T: hipBLASLt A = our B (%lldx%lld, ld %lld, op %s), "
           "B = our A (%lldx%lld, ld %lld, op %s); nothing copied",
           (long long)pl->a_rows, (long long)pl->a_cols, (long long)pl->lda,
           mb__hip_op_name(pl->op_a), (long long)pl->b_rows,
           (long long)pl->b_cols, (long long)pl->ldb,
           mb__hip_op_name(pl->op_b));
  snprintf(k->scales, sizeof k->scales,
           "scale_a %s (its B scale pointer), scale_b %s (its A scale "
           "pointer)",
           pl->scale_a ? "tensor" : "none", pl->scale_b ? "tensor" : "none");
}

void mb__hip_blaslt_release(void *kstate) {
  lt_kernel_t *k = kstate;
  if (!k) return;
  const mb_hip_blaslt_t *lib = k->st->blaslt;
  /* Host objects only: a queued matmul does not read them any more. */
  if (k->lc) lib->layout_destroy(k->lc);
  if (k->lb) lib->layout_destroy(k->lb);
  if (k->la) lib->layout_destroy(k->la);
  if (k->desc) lib->desc_destroy(k->desc);
  free(k);
}

mb_status_t mb__hip_blaslt_prepare_on(mb_hip_state_t *st, mb_hip_device_t *d,
                                      const mb_kernel_call_t *call,
                                      void **kstate) {
  *kstate = NULL;
  lt_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    st->base.host.set_error("hip: hipblaslt: out of host memory");
    return MB_ERR_NO_MEMORY;
  }
  k->st = st;
  k->d = d;
  k->p = *call->params;
  char why[512];
  if (mb__hip_plan_blaslt(d, &k->p, st->blaslt->version, &k->plan, why,
                          sizeof why) != MB_OK) {
    st->base.host.set_error("hip: hipblaslt: %s", why);
    free(k);
    return MB_ERR_UNSUPPORTED;
  }
  describe(k);
  mb_status_t s = build_descs(k);
  if (s == MB_OK) s = bind_scales(k, call);
  if (s == MB_OK) s = mb__hip_blaslt_choose(k, call);
  if (s != MB_OK) {
    mb__hip_blaslt_release(k);
    return s;
  }
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__hip_blaslt_prepare(void *bstate, const mb_kernel_call_t *call,
                                   void **kstate) {
  mb_hip_state_t *st = bstate;
  *kstate = NULL;
  if (!st->blaslt) {
    st->base.host.set_error("hip: hipblaslt: hipBLASLt not loaded: %s",
                            st->blaslt_why);
    return MB_ERR_UNSUPPORTED;
  }
  if (!call || !call->params || call->num_in < 4 || call->num_out < 1) {
    st->base.host.set_error(
        "hip: hipblaslt: the call needs A, B, scale_a, scale_b and D");
    return MB_ERR_INVALID_ARG;
  }
  mb_hip_device_t *d = mb__hip_device(st, call->device);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_status_t s = ensure_handle(st, d);
  return s == MB_OK ? mb__hip_blaslt_prepare_on(st, d, call, kstate) : s;
}

mb_status_t mb__hip_blaslt_run(void *kstate, const mb_kernel_call_t *call) {
  lt_kernel_t *k = kstate;
  mb_status_t s = bind_scales(k, call); /* another operand copy's scales */
  if (s != MB_OK) return s;
  return lt_check(k->st, matmul(k, &k->algo, call, call->out[0]), "matmul");
}

/* A fast-accumulation request (fp8 only, resolve() sees to it) runs: the
 * same fp8 GEMM torch._scaled_mm(use_fast_accum=True) runs on ROCm, where
 * PyTorch sets no such attribute either. Its f32 accumulation is at least
 * as accurate as the tolerance the flag allows, and the peak is the same
 * fp8 peak, so the number is the comparable one; the note says so. */
static const char k_fast_accum_not_applied[] =
    "not applied: hipBLASLt has no fast-accumulation mode (HIPIFY lists "
    "CUBLASLT_MATMUL_DESC_FAST_ACCUM as unsupported); its fp8 GEMM "
    "accumulates in f32";

uint32_t mb__hip_blaslt_notes(void *kstate, mb_kernel_note_t *out,
                              uint32_t max) {
  const lt_kernel_t *k = kstate;
  if (!k) return 0;
  const mb_hip_gemm_plan_t *pl = &k->plan;
  mb_kernel_note_t n[20];
  uint32_t c = 0;
  n[c++] = (mb_kernel_note_t){"library", k->st->blaslt->version_text, 0};
  n[c++] = (mb_kernel_note_t){"library_path", k->st->blaslt->path, 0};
  n[c++] = (mb_kernel_note_t){"math", pl->math, 0};
  if (k->p.flags & MB_PARAM_FAST_ACCUM)
    n[c++] = (mb_kernel_note_t){"fast_accum", k_fast_accum_not_applied, 0};
  /* Our A is hipBLASLt's B and our B its A. */
  n[c++] = (mb_kernel_note_t){
      "a_type", mb__hip_type_name(MB_HIP_LIB_BLASLT, pl->b_type), 0};
  n[c++] = (mb_kernel_note_t){
      "b_type", mb__hip_type_name(MB_HIP_LIB_BLASLT, pl->a_type), 0};
  n[c++] = (mb_kernel_note_t){
      "d_type", mb__hip_type_name(MB_HIP_LIB_BLASLT, pl->d_type), 0};
  n[c++] = (mb_kernel_note_t){
      "compute_type", mb__hip_compute_name(MB_HIP_LIB_BLASLT, pl->compute), 0};
  n[c++] = (mb_kernel_note_t){
      "scale_type", mb__hip_type_name(MB_HIP_LIB_BLASLT, pl->scale_type), 0};
  n[c++] = (mb_kernel_note_t){"operands", k->operands, 0};
  if (pl->scale_a || pl->scale_b)
    n[c++] = (mb_kernel_note_t){"scales", k->scales, 0};
  n[c++] = (mb_kernel_note_t){"algo_index", NULL, (double)k->algo_index};
  n[c++] = (mb_kernel_note_t){"algos_offered", NULL, (double)k->offered};
  n[c++] = (mb_kernel_note_t){"algos_tried", NULL, (double)k->tried};
  if (!isnan(k->best_ms)) {
    n[c++] = (mb_kernel_note_t){"tune_median_ms", NULL, k->best_ms};
    n[c++] = (mb_kernel_note_t){"tune_candidates", k->timings, 0};
  }
  n[c++] = (mb_kernel_note_t){"tune_cached", NULL, (double)k->cache_hit};
  n[c++] = (mb_kernel_note_t){"workspace_bytes", NULL, (double)k->ws};
  for (uint32_t i = 0; i < c && i < max && out; i++) out[i] = n[i];
  return c;
}
