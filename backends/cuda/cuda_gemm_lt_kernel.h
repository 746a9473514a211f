/* CUDA backend — the cuBLASLt GEMM kernel's state and the small helpers
 * shared by its two files: cuda_gemm_lt.c (prepare: staging, descriptors;
 * run, release, notes) and cuda_gemm_lt_tune.c (autotuning and the tune
 * cache). Private to them. */
#ifndef MB_CUDA_GEMM_LT_KERNEL_H
#define MB_CUDA_GEMM_LT_KERNEL_H

#include <stdarg.h>
#include <stdio.h>

#include "cuda_gemm_lt.h"

enum { SIDE_A = 0, SIDE_B = 1 }; /* cuBLASLt's A (our B), B (our A) */

typedef struct lt_kernel {
  mb_cuda_state_t *st;
  mb_cuda_device_t *d;
  mb_op_params_t p;
  mb_lt_plan_t plan;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc; /* lc: C and D (C = D) */
  cublasLtMatmulAlgo_t algo;
  size_t ws;
  int algo_id, tried, cache_hit;
  double best_ms;
  char timings[400]; /* every candidate's median (the tune cache keeps it) */
  union {
    float f;
    int32_t i;
  } alpha, beta;
  /* Device buffers owned by the kernel. */
  void *bt;             /* our B stored N x K (plan.b_copy) */
  void *qa;             /* quantize-inputs: A in fp8 (M x K) */
  float *scale[2];      /* [SIDE_A], [SIDE_B]: re-laid out or quantizer's */
  void *mx_grid[2];     /* MXFP8 quantize-inputs: the quantizer's row-major
                           e8m0 grids, tiled into scale[] in the op */
  const void *bound[2]; /* the scale pointers set on the descriptor */
  /* quantize-inputs: [SIDE_A] quantizes B^T, [SIDE_B] quantizes A */
  mb_op_params_t qp[2];
  void *q_in[2][1];
  void *q_out[2][2];
  mb_kernel_call_t qcall[2];
  char b_layout[96];
  char quantize_note[256];
} lt_kernel_t;

/* ---- errors, device memory, the matmul call ------------------------------ */

static inline mb_status_t ck(lt_kernel_t *k, cudaError_t e, const char *what) {
  if (e == cudaSuccess) return MB_OK;
  cudaGetLastError(); /* no stale error for the next launch check */
  return mb__cuda_check(k->st, e, what);
}

static inline mb_status_t ck_lt(lt_kernel_t *k, cublasStatus_t s,
                                const char *what) {
  return mb__cuda_check_lt(k->st, s, what);
}

static inline mb_status_t decline(lt_kernel_t *k, const char *fmt, ...)
    MB__PRINTF(2, 3);
static inline mb_status_t decline(lt_kernel_t *k, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  k->st->base.host.set_error("cuda: cublaslt gemm: %s", buf);
  return MB_ERR_UNSUPPORTED;
}

static inline const char *lt_version(const lt_kernel_t *k, char *buf,
                                     size_t cap) {
  const size_t v = k->st->ltlib->version;
  snprintf(buf, cap, "%zu.%zu.%zu", v / 10000, (v / 100) % 100, v % 100);
  return buf;
}

static inline mb_status_t dalloc(lt_kernel_t *k, size_t bytes, void **p,
                                 const char *what) {
  *p = NULL;
  return ck(k, cudaMalloc(p, bytes ? bytes : 1), what);
}

/* The largest power of two, up to 256, that p is aligned to. */
static inline uint32_t align_of(const void *p) {
  const uintptr_t a = (uintptr_t)p;
  uint32_t al = 256;
  while (al > 1 && (a & (al - 1))) al >>= 1;
  return al;
}

static inline cublasStatus_t matmul(lt_kernel_t *k,
                                    const cublasLtMatmulAlgo_t *algo, size_t ws,
                                    const void *pa, const void *pb, void *pd) {
  return k->st->ltlib->matmul(k->d->lt, k->op, &k->alpha, pa, k->la, pb, k->lb,
                              &k->beta, pd, k->lc, pd, k->lc, algo,
                              k->d->workspace, ws, k->d->base.stream);
}

/* The operands cuBLASLt multiplies (for alignment and tuning). */
static inline void lt_operands(const lt_kernel_t *k,
                               const mb_kernel_call_t *call, const void **pa,
                               const void **pb) {
  *pa = k->plan.b_copy ? k->bt : call->in[1];
  *pb = k->plan.variant == MB_LT_QI ? k->qa : call->in[0];
}

/* Autotuning (cuda_gemm_lt_tune.c, prepare): k->algo, k->ws and the notes'
 * candidate timings from the tune cache or from timing the heuristic's
 * candidates; MB_ERR_UNSUPPORTED when none runs. */
mb_status_t mb__cuda_lt_tune(lt_kernel_t *k, const mb_kernel_call_t *call);

#endif /* MB_CUDA_GEMM_LT_KERNEL_H */
