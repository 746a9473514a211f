/* HIP backend — GEMM through hipBLASLt, loaded at run time: loading and the
 * version check, the per-device handle and workspace, prepare (descriptors,
 * heuristic, autotuning), the timed run, release and notes. Which hipBLASLt
 * problem a request becomes is decided in hip_gemm_plan.c.
 *
 * The library is found and its entry points resolved by the GPU host
 * layer's loader (gpu_host_dlopen.c, shared with CUDA). Only the entry
 * points below are declared, from ROCm/hipBLASLt library/include/hipblaslt.h
 * (0.7 to 1.x; unchanged signatures) and ROCm/hipBLAS-common
 * library/include/hipblas-common.h (hipblasStatus_t); no vendor header is
 * needed to build.
 *
 * Autotuning (prepare, untimed): hipblasLtMatmulAlgoGetHeuristic offers up
 * to 8 algorithms within the device's workspace. One is taken as it is;
 * several are each timed by the GPU host layer as a benchmark is (behind
 * the blocking kernel, batches of at least 20 us of work, the median of 5),
 * the lowest median wins and the notes carry every candidate's time. The
 * choice is
 * remembered per library instance, keyed by device and problem, so that
 * preparing the same GEMM for another operand copy does not tune again. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_gemm_plan.h"
#include "hip_vendor.h"

#define LT_MAX_ALGOS 8
#define LT_TUNE_SAMPLES 5u
/* Work per tuning sample: far above a launch's few microseconds. */
#define LT_TUNE_MIN_NS 2e4
#define LT_SLOW_NS                                          \
  250e6 /* a slower single run is sampled once, not 5 times \
         */
#define LT_TUNE_CACHE 32

/* ---- the vendor's declarations (hipblaslt.h, hipblas-common.h) ----------- */

typedef int lt_status_t; /* hipblasStatus_t */
enum {
  LT_STATUS_SUCCESS = 0,
  LT_STATUS_ALLOC_FAILED = 2,
  LT_STATUS_NOT_SUPPORTED = 7,
  LT_STATUS_ARCH_MISMATCH = 8
};
/* hipblasStatus_t names, by value 0..11. */
static const char *const k_lt_status[] = {
    "HIPBLAS_STATUS_SUCCESS",        "HIPBLAS_STATUS_NOT_INITIALIZED",
    "HIPBLAS_STATUS_ALLOC_FAILED",   "HIPBLAS_STATUS_INVALID_VALUE",
    "HIPBLAS_STATUS_MAPPING_ERROR",  "HIPBLAS_STATUS_EXECUTION_FAILED",
    "HIPBLAS_STATUS_INTERNAL_ERROR", "HIPBLAS_STATUS_NOT_SUPPORTED",
    "HIPBLAS_STATUS_ARCH_MISMATCH",  "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
    "HIPBLAS_STATUS_INVALID_ENUM",   "HIPBLAS_STATUS_UNKNOWN"};

/* hipblasLtMatmulDescAttributes_t (TRANSA/B: int32_t; scale pointers:
 * device pointers to one float) and hipblasLtMatmulPreferenceAttributes_t
 * (MAX_WORKSPACE_BYTES: uint64_t). */
enum {
  LT_DESC_TRANSA = 0,
  LT_DESC_TRANSB = 1,
  LT_DESC_A_SCALE_POINTER = 5,
  LT_DESC_B_SCALE_POINTER = 6
};
enum { LT_PREF_MAX_WORKSPACE_BYTES = 1 };

/* hipblasLtMatmulAlgo_t and hipblasLtMatmulHeuristicResult_t. The heuristic
 * writes an array of them: the layout must be the library's exactly. */
typedef struct lt_algo {
  uint8_t data[16]; /* data[0..3]: the solution index (hipblaslt-ext.cpp,
                       getIndexFromAlgo) */
  size_t max_workspace_bytes;
} lt_algo_t;
typedef struct lt_heur {
  lt_algo_t algo;
  size_t workspace_size;
  lt_status_t state;
  float waves_count;
  int reserved[4];
} lt_heur_t;
_Static_assert(sizeof(lt_algo_t) == 16 + sizeof(size_t),
               "hipblasLtMatmulAlgo_t layout");
_Static_assert(offsetof(lt_heur_t, state) == 16 + 2 * sizeof(size_t) &&
                   sizeof(lt_heur_t) == 2 * sizeof(size_t) + 40,
               "hipblasLtMatmulHeuristicResult_t layout");

typedef struct lt_tuned {
  uint64_t key; /* 0: empty */
  lt_algo_t algo;
  size_t ws;
  int index, tried;
  double ms;
  char timings[400]; /* every candidate's median, as the note shows it */
} lt_tuned_t;

struct mb_hip_blaslt {
  void *dl;
  char path[512];
  int version; /* major * 100000 + minor * 100 + patch */
  char version_text[48];
  lt_status_t (*create)(void **handle);
  lt_status_t (*destroy)(void *handle);
  lt_status_t (*get_version)(void *handle, int *version);
  lt_status_t (*desc_create)(void **desc, int compute, int scale_type);
  lt_status_t (*desc_destroy)(void *desc);
  lt_status_t (*desc_set)(void *desc, int attr, const void *buf, size_t size);
  lt_status_t (*layout_create)(void **layout, int type, uint64_t rows,
                               uint64_t cols, int64_t ld);
  lt_status_t (*layout_destroy)(void *layout);
  lt_status_t (*pref_create)(void **pref);
  lt_status_t (*pref_destroy)(void *pref);
  lt_status_t (*pref_set)(void *pref, int attr, const void *buf, size_t size);
  lt_status_t (*heuristic)(void *handle, void *desc, void *a, void *b, void *c,
                           void *d, void *pref, int requested,
                           lt_heur_t *results, int *returned);
  lt_status_t (*matmul)(void *handle, void *desc, const void *alpha,
                        const void *a, void *adesc, const void *b, void *bdesc,
                        const void *beta, const void *c, void *cdesc, void *d,
                        void *ddesc, const lt_algo_t *algo, void *workspace,
                        size_t workspace_bytes, hipStream_t stream);
  lt_tuned_t tuned[LT_TUNE_CACHE];
};

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

/* ---- errors -------------------------------------------------------------- */

static const char *lt_status_name(lt_status_t s) {
  return (s >= 0 && (size_t)s < sizeof k_lt_status / sizeof k_lt_status[0])
             ? k_lt_status[s]
             : "unknown hipblasStatus_t";
}

/* "hip: hipblaslt: <what>: <status>"; not-supported statuses make the
 * result a skip with the reason, not a failure. */
static mb_status_t lt_check(mb_hip_state_t *st, lt_status_t s,
                            const char *what) {
  if (s == LT_STATUS_SUCCESS) return MB_OK;
  snprintf(st->base.last_error, sizeof st->base.last_error,
           "hip: hipblaslt: %s: %s", what, lt_status_name(s));
  st->base.host.set_error("%s", st->base.last_error);
  if (s == LT_STATUS_NOT_SUPPORTED || s == LT_STATUS_ARCH_MISMATCH)
    return MB_ERR_UNSUPPORTED;
  return s == LT_STATUS_ALLOC_FAILED ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

static mb_status_t lt_decline(mb_hip_state_t *st, const char *fmt, ...)
    MB__PRINTF(2, 3);
static mb_status_t lt_decline(mb_hip_state_t *st, const char *fmt, ...) {
  char buf[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  st->base.host.set_error("hip: hipblaslt: %s", buf);
  return MB_ERR_UNSUPPORTED;
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

enum { SIDE_A = 0, SIDE_B = 1 }; /* hipBLASLt's A (our B), B (our A) */

typedef struct lt_kernel {
  mb_hip_state_t *st;
  mb_hip_device_t *d;
  mb_op_params_t p;
  mb_hip_gemm_plan_t plan;
  void *desc, *la, *lb, *lc; /* lc: C and D (C = D) */
  lt_algo_t algo;
  size_t ws;
  int algo_index, offered, tried, cache_hit;
  double best_ms;    /* NAN: one algorithm offered, not timed */
  char timings[400]; /* every candidate's median */
  union {
    float f;
    int32_t i;
  } alpha, beta;
  const void *bound[2]; /* scale pointers on the descriptor */
  char operands[160];
  char scales[160];
} lt_kernel_t;

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

static lt_status_t matmul(lt_kernel_t *k, const lt_algo_t *algo,
                          const mb_kernel_call_t *call, void *pd) {
  const mb_hip_device_t *d = k->d;
  return k->st->blaslt->matmul(d->blaslt_handle, k->desc, &k->alpha,
                               call->in[1], k->la, call->in[0], k->lb, &k->beta,
                               pd, k->lc, pd, k->lc, algo, d->blaslt_workspace,
                               d->blaslt_workspace_bytes, d->base.stream);
}

/* ---- autotuning ---------------------------------------------------------- */

static uint64_t fnv1a(const void *data, size_t n) {
  const unsigned char *b = data;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h ? h : 1; /* 0 marks an empty slot */
}

static uint64_t tune_key(const lt_kernel_t *k) {
  struct {
    int32_t ordinal;
    int64_t shape[3];
    int32_t dtype, dtype_b, dtype_out, dtype_acc;
    uint32_t flags;
    int32_t beta_nonzero, scale_a, scale_b;
  } src;
  memset(&src, 0, sizeof src); /* padding too: the bytes are hashed */
  src.ordinal = k->d->base.ordinal;
  for (int i = 0; i < 3; i++) src.shape[i] = k->p.shape[i];
  src.dtype = (int32_t)k->p.dtype;
  src.dtype_b = (int32_t)k->p.dtype_b;
  src.dtype_out = (int32_t)k->p.dtype_out;
  src.dtype_acc = (int32_t)k->p.dtype_acc;
  src.flags = k->p.flags;
  src.beta_nonzero = k->p.beta != 0;
  src.scale_a = k->plan.scale_a;
  src.scale_b = k->plan.scale_b;
  return fnv1a(&src, sizeof src);
}

static lt_tuned_t *tune_slot(mb_hip_blaslt_t *lib, uint64_t key, int empty) {
  for (int i = 0; i < LT_TUNE_CACHE; i++)
    if (lib->tuned[i].key == key || (empty && lib->tuned[i].key == 0))
      return &lib->tuned[i];
  return empty ? &lib->tuned[key % LT_TUNE_CACHE] : NULL;
}

static mb_status_t hip_ok(lt_kernel_t *k, hipError_t e, const char *what) {
  return mb__hip_check(k->st, e, what);
}

/* One candidate algorithm as a run the host layer can time. */
typedef struct lt_candidate {
  lt_kernel_t *k;
  const lt_algo_t *algo;
  const mb_kernel_call_t *call;
  void *pd;
} lt_candidate_t;

static mb_status_t run_candidate(void *kstate, const mb_kernel_call_t *call) {
  (void)call;
  const lt_candidate_t *c = kstate;
  return lt_check(c->k->st, matmul(c->k, c->algo, c->call, c->pd),
                  "a tuning candidate");
}

/* Appends "#i: t ms" (or that it did not run) to the candidates' note. */
static void note_candidate(lt_kernel_t *k, int i, double ms, int ran) {
  const size_t n = strlen(k->timings);
  if (n + 1 >= sizeof k->timings) return;
  if (ran)
    snprintf(k->timings + n, sizeof k->timings - n, "%s#%d: %.4g ms",
             n ? "; " : "", i, ms);
  else
    snprintf(k->timings + n, sizeof k->timings - n, "%s#%d: did not run",
             n ? "; " : "", i);
}

/* Each candidate timed as the benchmark itself is timed (the host layer:
 * behind the blocking kernel, a batch of at least LT_TUNE_MIN_NS of work a
 * sample), the median of LT_TUNE_SAMPLES samples; the fastest wins. */
static mb_status_t tune_candidates(lt_kernel_t *k, const lt_heur_t *res,
                                   int nres, const mb_kernel_call_t *call,
                                   void *pd) {
  int best = -1;
  double best_ns = 0;
  char last[512] = "none fits the workspace";
  k->timings[0] = '\0';
  for (int i = 0; i < nres; i++) {
    if (res[i].state != LT_STATUS_SUCCESS ||
        res[i].workspace_size > k->d->blaslt_workspace_bytes)
      continue;
    lt_candidate_t c = {k, &res[i].algo, call, pd};
    double ns = 0;
    const mb_status_t s =
        mb__gpuh_time_median(&k->st->base, &k->d->base, run_candidate, &c, call,
                             LT_TUNE_SAMPLES, LT_TUNE_MIN_NS, LT_SLOW_NS, &ns);
    if (s != MB_OK) {
      snprintf(last, sizeof last, "%s", k->st->base.last_error);
      note_candidate(k, i, 0, 0);
      continue;
    }
    note_candidate(k, i, ns * 1e-6, 1);
    k->tried++;
    if (best < 0 || ns < best_ns) best = i, best_ns = ns;
  }
  if (best < 0)
    return lt_decline(
        k->st, "%s offered %d algorithms for %s (%s) but none ran (%s)",
        k->st->blaslt->version_text, nres, k->plan.math,
        mb__hip_compute_name(MB_HIP_LIB_BLASLT, k->plan.compute), last);
  k->algo = res[best].algo;
  k->ws = res[best].workspace_size;
  k->best_ms = best_ns * 1e-6;
  return MB_OK;
}

/* Several candidates: time them (on a copy of D when beta reads it). */
static mb_status_t tune(lt_kernel_t *k, const lt_heur_t *res, int nres,
                        const mb_kernel_call_t *call) {
  mb_hip_blaslt_t *lib = k->st->blaslt;
  const uint64_t key = tune_key(k);
  const lt_tuned_t *hit = tune_slot(lib, key, 0);
  if (hit) {
    k->algo = hit->algo;
    k->ws = hit->ws;
    k->tried = hit->tried;
    k->best_ms = hit->ms;
    snprintf(k->timings, sizeof k->timings, "%s", hit->timings);
    k->cache_hit = 1;
    return MB_OK;
  }
  /* The timings set the device themselves; the copy of D needs it here. */
  void *pd = call->out[0], *scratch = NULL;
  mb_status_t s = MB_OK;
  if (k->p.beta != 0)
    s = hip_ok(k, hipSetDevice(k->d->base.ordinal),
               "hipblaslt: set the device");
  if (s == MB_OK && k->p.beta != 0) {
    const size_t bytes =
        (size_t)k->plan.m * (size_t)k->plan.n *
        (k->plan.d_type == MB_HIP_R_32F || k->plan.d_type == MB_HIP_R_32I ? 4u
                                                                          : 2u);
    s = hip_ok(k, hipMalloc(&scratch, bytes),
               "hipblaslt: allocate a tuning output");
    if (s == MB_OK)
      s = hip_ok(k,
                 hipMemcpyAsync(scratch, pd, bytes, hipMemcpyDeviceToDevice,
                                k->d->base.stream),
                 "hipblaslt: copy D for tuning");
    pd = scratch;
  }
  if (s == MB_OK) s = tune_candidates(k, res, nres, call, pd);
  if (scratch) {
    hipStreamSynchronize(k->d->base.stream);
    hipFree(scratch);
    hipGetLastError();
  }
  if (s != MB_OK) return s;
  lt_tuned_t *slot = tune_slot(lib, key, 1);
  *slot = (lt_tuned_t){key, k->algo, k->ws, 0, k->tried, k->best_ms, ""};
  snprintf(slot->timings, sizeof slot->timings, "%s", k->timings);
  return MB_OK;
}

static mb_status_t choose(lt_kernel_t *k, const mb_kernel_call_t *call) {
  const mb_hip_blaslt_t *lib = k->st->blaslt;
  const mb_hip_device_t *d = k->d;
  void *pref = NULL;
  const uint64_t ws_max = d->blaslt_workspace_bytes;
  mb_status_t s =
      lt_check(k->st, lib->pref_create(&pref), "create the preference");
  if (s == MB_OK)
    s = lt_check(k->st,
                 lib->pref_set(pref, LT_PREF_MAX_WORKSPACE_BYTES, &ws_max,
                               sizeof ws_max),
                 "set the workspace limit");
  lt_heur_t res[LT_MAX_ALGOS];
  memset(res, 0, sizeof res);
  int nres = 0;
  lt_status_t hs = LT_STATUS_SUCCESS;
  if (s == MB_OK)
    hs = lib->heuristic(d->blaslt_handle, k->desc, k->la, k->lb, k->lc, k->lc,
                        pref, LT_MAX_ALGOS, res, &nres);
  if (pref) lib->pref_destroy(pref);
  if (s != MB_OK) return s;
  if (hs != LT_STATUS_SUCCESS || nres <= 0)
    return lt_decline(
        k->st,
        "%s has no algorithm for %s (%s) at %lldx%lldx%lld on %s (%s)%s%s",
        lib->version_text, k->plan.math,
        mb__hip_compute_name(MB_HIP_LIB_BLASLT, k->plan.compute),
        (long long)k->p.shape[0], (long long)k->p.shape[1],
        (long long)k->p.shape[2], d->base.name, d->arch_base,
        hs != LT_STATUS_SUCCESS ? ": " : "",
        hs != LT_STATUS_SUCCESS ? lt_status_name(hs) : "");
  k->offered = nres > LT_MAX_ALGOS ? LT_MAX_ALGOS : nres;
  if (k->offered == 1) {
    /* Nothing to choose between: no timing. */
    if (res[0].state != LT_STATUS_SUCCESS)
      return lt_check(k->st, res[0].state, "the only algorithm offered");
    k->algo = res[0].algo;
    k->ws = res[0].workspace_size;
    k->best_ms = NAN;
  } else if ((s = tune(k, res, k->offered, call)) != MB_OK) {
    return s;
  }
  int32_t index;
  memcpy(&index, k->algo.data, sizeof index);
  k->algo_index = index < 0 ? -1 : index;
  return MB_OK;
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
  if (s == MB_OK) s = choose(k, call);
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
