/* HIP backend — hipBLASLt as the GEMM kernel sees it: the vendor's
 * declarations (hipblaslt.h, hipblas-common.h; see hip_blaslt.c), the loaded
 * library, the kernel's state and the helpers shared by hip_blaslt.c
 * (loading, prepare, run, release, notes) and hip_blaslt_tune.c (choosing
 * an algorithm: the heuristic, autotuning, the tune cache). Private to
 * them. */
#ifndef MB_HIP_BLASLT_KERNEL_H
#define MB_HIP_BLASLT_KERNEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "hip_gemm_plan.h"
#include "hip_vendor.h"

#define LT_TUNE_CACHE 32

/* ---- the vendor's declarations (hipblaslt.h, hipblas-common.h) ----------- */

typedef int lt_status_t; /* hipblasStatus_t */
enum {
  LT_STATUS_SUCCESS = 0,
  LT_STATUS_ALLOC_FAILED = 2,
  LT_STATUS_NOT_SUPPORTED = 7,
  LT_STATUS_ARCH_MISMATCH = 8
};
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

/* ---- errors -------------------------------------------------------------- */

/* hipblasStatus_t's name, by value 0..11. */
static inline const char *lt_status_name(lt_status_t s) {
  static const char *const k_lt_status[] = {
      "HIPBLAS_STATUS_SUCCESS",        "HIPBLAS_STATUS_NOT_INITIALIZED",
      "HIPBLAS_STATUS_ALLOC_FAILED",   "HIPBLAS_STATUS_INVALID_VALUE",
      "HIPBLAS_STATUS_MAPPING_ERROR",  "HIPBLAS_STATUS_EXECUTION_FAILED",
      "HIPBLAS_STATUS_INTERNAL_ERROR", "HIPBLAS_STATUS_NOT_SUPPORTED",
      "HIPBLAS_STATUS_ARCH_MISMATCH",  "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
      "HIPBLAS_STATUS_INVALID_ENUM",   "HIPBLAS_STATUS_UNKNOWN"};
  return (s >= 0 && (size_t)s < sizeof k_lt_status / sizeof k_lt_status[0])
             ? k_lt_status[s]
             : "unknown hipblasStatus_t";
}

/* "hip: hipblaslt: <what>: <status>"; not-supported statuses make the
 * result a skip with the reason, not a failure. */
static inline mb_status_t lt_check(mb_hip_state_t *st, lt_status_t s,
                                   const char *what) {
  if (s == LT_STATUS_SUCCESS) return MB_OK;
  snprintf(st->base.last_error, sizeof st->base.last_error,
           "hip: hipblaslt: %s: %s", what, lt_status_name(s));
  st->base.host.set_error("%s", st->base.last_error);
  if (s == LT_STATUS_NOT_SUPPORTED || s == LT_STATUS_ARCH_MISMATCH)
    return MB_ERR_UNSUPPORTED;
  return s == LT_STATUS_ALLOC_FAILED ? MB_ERR_NO_MEMORY : MB_ERR_BACKEND;
}

static inline mb_status_t lt_decline(mb_hip_state_t *st, const char *fmt, ...)
    MB__PRINTF(2, 3);
static inline mb_status_t lt_decline(mb_hip_state_t *st, const char *fmt, ...) {
  char buf[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  st->base.host.set_error("hip: hipblaslt: %s", buf);
  return MB_ERR_UNSUPPORTED;
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

static inline lt_status_t matmul(lt_kernel_t *k, const lt_algo_t *algo,
                                 const mb_kernel_call_t *call, void *pd) {
  const mb_hip_device_t *d = k->d;
  return k->st->blaslt->matmul(d->blaslt_handle, k->desc, &k->alpha,
                               call->in[1], k->la, call->in[0], k->lb, &k->beta,
                               pd, k->lc, pd, k->lc, algo, d->blaslt_workspace,
                               d->blaslt_workspace_bytes, d->base.stream);
}

/* The algorithm (hip_blaslt_tune.c, prepare): the heuristic's only offer,
 * else the fastest of its offers, timed or from the tune cache; k->algo,
 * k->ws, k->algo_index and the notes' timings. */
mb_status_t mb__hip_blaslt_choose(lt_kernel_t *k, const mb_kernel_call_t *call);

#endif /* MB_HIP_BLASLT_KERNEL_H */
