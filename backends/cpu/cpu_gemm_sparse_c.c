/* CPU backend — the sparse GEMMs of torchao's sparsity recipes in portable
 * C (lib/ops/sparse.h has the formats): D[M,N] = A[M,K] . W[K,N] with W
 * compressed.
 *
 *   gemm_sparse24:     per group of 4 along K, two products per output,
 *                      the kept rows' values times A's element picked by
 *                      the 2-bit index: K/2 multiply-adds per output
 *   gemm_block_sparse: per 64-column strip, only its kept 64x64 blocks
 *
 * Rows of A are split across the pinned threads in blocks of RB; each
 * block is widened to f32 once, accumulates in f32 (the values are widened
 * per group or block, a 1/RB overhead) and is rounded once to D. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"

#include <stdlib.h>

enum { RB = 16, BS = 64 };

typedef struct sparse_c {
  int64_t m, k, n, keep;
  mb_dtype_t dt, dout;
  unsigned threads;
  size_t per_thread; /* floats of scratch each thread owns */
  float *scratch;
} sparse_c_t;

static mb_status_t prepare(void *bstate, const mb_kernel_call_t *call,
                           void **kstate, int block) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  sparse_c_t *k = calloc(1, sizeof *k);
  if (!k) goto oom;
  *k = (sparse_c_t){
      p->shape[0], p->shape[1],  p->shape[2], p->shape[1] / (2 * BS),
      p->dtype,    p->dtype_out, st->threads, 0,
      NULL};
  /* A's rows, their accumulators, and the widened values: two rows of N
   * (2:4, and its decoded indices in one more row's bytes) or one 64x64
   * block. */
  k->per_thread = (size_t)(RB * k->k + RB * k->n) +
                  (block ? (size_t)(BS * BS) : (size_t)(3 * k->n));
  k->scratch = malloc(k->per_thread * k->threads * sizeof *k->scratch);
  if (!k->scratch) goto oom;
  *kstate = k;
  return MB_OK;
oom:
  if (k) free(k->scratch);
  free(k);
  MB_CPU_ERROR(st, "cpu/c: sparse gemm: out of memory");
  return MB_ERR_NO_MEMORY;
}

mb_status_t mb__cpu_gemm_sparse24_c_prepare(void *bstate,
                                            const mb_kernel_call_t *call,
                                            void **kstate) {
  return prepare(bstate, call, kstate, 0);
}

mb_status_t mb__cpu_gemm_block_sparse_c_prepare(void *bstate,
                                                const mb_kernel_call_t *call,
                                                void **kstate) {
  return prepare(bstate, call, kstate, 1);
}

/* acc[r][n] += a[r][4g + i0(n)] v0[n] + a[r][4g + i1(n)] v1[n], over every
 * group g: the kept half of the products. */
MB_CPU_CLONES static void rows24(const sparse_c_t *k, void *const *in,
                                 int64_t rows, const float *a, float *acc,
                                 float *buf) {
  const int64_t n = k->n;
  float *v0 = buf, *v1 = buf + n;
  uint8_t *i0 = (uint8_t *)(buf + 2 * n), *i1 = i0 + n; /* decoded indices */
  const uint8_t *meta = in[2];
  for (int64_t g = 0; g < k->k / 4; g++) {
    mb__cpu_load_f32(v0, in[1], k->dt, (size_t)(2 * g * n), (size_t)n);
    mb__cpu_load_f32(v1, in[1], k->dt, (size_t)((2 * g + 1) * n), (size_t)n);
    const uint8_t *mb = meta + g / 2 * n;
    const int sh = (int)(4 * (g & 1));
    for (int64_t c = 0; c < n; c++) {
      const unsigned nib = (unsigned)(mb[c] >> sh) & 15u;
      i0[c] = (uint8_t)(nib & 3u);
      i1[c] = (uint8_t)(nib >> 2);
    }
    for (int64_t r = 0; r < rows; r++) {
      /* The group's 4 elements of A, picked by selects rather than an
       * indexed load: i0 is 0..2 and i1 1..3, and selects vectorise. */
      const float *ar = a + r * k->k + 4 * g;
      const float a0 = ar[0], a1 = ar[1], a2 = ar[2], a3 = ar[3];
      float *dr = acc + r * n;
      for (int64_t c = 0; c < n; c++) {
        const float x0 = i0[c] == 0 ? a0 : i0[c] == 1 ? a1 : a2;
        const float x1 = i1[c] == 3 ? a3 : i1[c] == 2 ? a2 : a1;
        dr[c] += x0 * v0[c] + x1 * v1[c];
      }
    }
  }
}

/* acc[r][64j ..] += a[r][64 kb ..] . block, over each strip j's kept
 * blocks kb only. */
MB_CPU_CLONES static void rows_block(const sparse_c_t *k, void *const *in,
                                     int64_t rows, const float *a, float *acc,
                                     float *blk) {
  const int32_t *idx = in[2];
  for (int64_t j = 0; j < k->n / BS; j++)
    for (int64_t t = 0; t < k->keep; t++) {
      const int64_t kb = idx[j * k->keep + t];
      mb__cpu_load_f32(blk, in[1], k->dt, (size_t)((j * k->keep + t) * BS * BS),
                       BS * BS);
      for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * k->k + kb * BS;
        float *dr = acc + r * k->n + j * BS;
        for (int64_t q = 0; q < BS; q++)
          for (int64_t c = 0; c < BS; c++) dr[c] += ar[q] * blk[q * BS + c];
      }
    }
}

static void run_rows(const sparse_c_t *k, const mb_kernel_call_t *call,
                     int block) {
  const int64_t nblocks = (k->m + RB - 1) / RB;
#pragma omp parallel num_threads(k->threads) if (k->m > 1)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    float *a = k->scratch + (size_t)t * k->per_thread;
    float *acc = a + RB * k->k, *buf = acc + RB * k->n;
    for (int64_t b = t; b < nblocks; b += nt) {
      const int64_t r0 = b * RB, rows = k->m - r0 < RB ? k->m - r0 : RB;
      mb__cpu_load_f32(a, call->in[0], k->dt, (size_t)(r0 * k->k),
                       (size_t)(rows * k->k));
      for (int64_t i = 0; i < rows * k->n; i++) acc[i] = 0.0f;
      if (block)
        rows_block(k, call->in, rows, a, acc, buf);
      else
        rows24(k, call->in, rows, a, acc, buf);
      mb__cpu_store_f32(call->out[0], k->dout, (size_t)(r0 * k->n), acc,
                        (size_t)(rows * k->n));
    }
  }
}

mb_status_t mb__cpu_gemm_sparse24_c_run(void *kstate,
                                        const mb_kernel_call_t *call) {
  run_rows(kstate, call, 0);
  return MB_OK;
}

mb_status_t mb__cpu_gemm_block_sparse_c_run(void *kstate,
                                            const mb_kernel_call_t *call) {
  run_rows(kstate, call, 1);
  return MB_OK;
}

static void release(void *kstate) {
  sparse_c_t *k = kstate;
  if (k) free(k->scratch);
  free(k);
}

void mb__cpu_gemm_sparse24_c_release(void *kstate) {
  release(kstate);
}

void mb__cpu_gemm_block_sparse_c_release(void *kstate) {
  release(kstate);
}
