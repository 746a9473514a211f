/* CUDA backend — autotuning a cuBLASLt GEMM (prepare, untimed):
 * cublasLtMatmulAlgoGetHeuristic offers up to LT_MAX_ALGOS algorithms within
 * the device's workspace; each is timed by the host layer as a benchmark is
 * (behind the blocking kernel, batches of at least 20 us of work, the median
 * of 5); the lowest median wins, and the result's notes carry every
 * candidate's time. The choice is remembered in the device's tune cache,
 * keyed by a hash of the params, the plan, the operands' alignment and the
 * implementation, so preparing the same GEMM for another operand copy does
 * not tune again (cublasLtMatmulAlgoCheck re-validates a cached choice). */
#include <stdio.h>
#include <string.h>

#include "cuda_gemm_lt_kernel.h"
#include "mb_fnv.h"

#define LT_MAX_ALGOS 8
#define LT_TUNE_SAMPLES 5u
/* Work per tuning sample: far above a launch's few microseconds. */
#define LT_TUNE_MIN_NS 2e4
/* A candidate whose single run takes longer is sampled once, not 5 times:
 * huge GEMMs would otherwise make prepare take minutes. */
#define LT_SLOW_NS 250e6

static uint64_t tune_key(const lt_kernel_t *k, const uint32_t align[4]) {
  struct {
    int64_t shape[3];
    int32_t dtype, dtype_b, dtype_out, dtype_acc, dtype_q;
    uint32_t flags;
    int32_t sa_mode, sb_mode;
    int64_t sa_block[2], sb_block[2];
    int32_t beta_nonzero, variant, la_mode, lb_mode;
    uint32_t align[4];
    char impl[16];
  } src;
  memset(&src, 0, sizeof src); /* padding too: the bytes are hashed */
  const mb_op_params_t *p = &k->p;
  for (int i = 0; i < 3; i++) src.shape[i] = p->shape[i];
  src.dtype = (int32_t)p->dtype;
  src.dtype_b = (int32_t)p->dtype_b;
  src.dtype_out = (int32_t)p->dtype_out;
  src.dtype_acc = (int32_t)p->dtype_acc;
  src.dtype_q = (int32_t)p->dtype_q;
  src.flags = p->flags;
  src.sa_mode = (int32_t)p->scale_a.mode;
  src.sb_mode = (int32_t)p->scale_b.mode;
  for (int i = 0; i < 2; i++) {
    src.sa_block[i] = p->scale_a.block[i];
    src.sb_block[i] = p->scale_b.block[i];
  }
  src.beta_nonzero = p->beta != 0;
  src.variant = (int32_t)k->plan.variant;
  src.la_mode = k->plan.la.mode;
  src.lb_mode = k->plan.lb.mode;
  memcpy(src.align, align, sizeof src.align);
  snprintf(src.impl, sizeof src.impl, "cublaslt");
  const uint64_t h = mb__fnv1a(MB__FNV1A_BASIS, &src, sizeof src);
  return h ? h : 1; /* 0 marks an empty slot */
}

static mb_cuda_tuned_t *tune_lookup(mb_cuda_device_t *d, uint64_t key) {
  for (int i = 0; i < MB_CUDA_TUNE_CACHE; i++)
    if (d->tuned[i].key == key) return &d->tuned[i];
  return NULL;
}

static void tune_remember(mb_cuda_device_t *d, uint64_t key,
                          const lt_kernel_t *k) {
  mb_cuda_tuned_t *slot = NULL;
  for (int i = 0; i < MB_CUDA_TUNE_CACHE && !slot; i++)
    if (d->tuned[i].key == key || d->tuned[i].key == 0) slot = &d->tuned[i];
  if (!slot) slot = &d->tuned[key % MB_CUDA_TUNE_CACHE];
  slot->key = key;
  slot->algo = k->algo;
  slot->workspace = k->ws;
  slot->algo_id = k->algo_id;
  slot->candidates = k->tried;
  slot->best_ms = k->best_ms;
  snprintf(slot->timings, sizeof slot->timings, "%s", k->timings);
}

/* One candidate algorithm as a run the host layer can time. */
typedef struct lt_candidate {
  lt_kernel_t *k;
  const cublasLtMatmulHeuristicResult_t *r;
  const void *pa, *pb;
  void *pd;
} lt_candidate_t;

static mb_status_t run_candidate(void *kstate, const mb_kernel_call_t *call) {
  (void)call;
  const lt_candidate_t *c = kstate;
  const cublasStatus_t s =
      matmul(c->k, &c->r->algo, c->r->workspaceSize, c->pa, c->pb, c->pd);
  return mb__cuda_check_lt(c->k->st, s, "cublaslt gemm: a tuning candidate");
}

/* Appends "id N: t ms" (or why it did not run) to the candidates' note. */
static void note_candidate(lt_kernel_t *k, int id, double ms,
                           const char *failed) {
  const size_t n = strlen(k->timings);
  if (n + 1 >= sizeof k->timings) return;
  if (failed)
    snprintf(k->timings + n, sizeof k->timings - n, "%sid %d: did not run",
             n ? "; " : "", id);
  else
    snprintf(k->timings + n, sizeof k->timings - n, "%sid %d: %.4g ms",
             n ? "; " : "", id, ms);
}

static int algo_id(const lt_kernel_t *k, const cublasLtMatmulAlgo_t *algo) {
  int32_t id = -1;
  size_t written = 0;
  if (k->st->ltlib->algo_config_get(algo, CUBLASLT_ALGO_CONFIG_ID, &id,
                                    sizeof id,
                                    &written) != CUBLAS_STATUS_SUCCESS)
    id = -1;
  return id;
}

/* Each candidate timed as the benchmark itself is timed (the host layer:
 * behind the blocking kernel, a batch of at least LT_TUNE_MIN_NS of work a
 * sample, so a small GEMM is not judged by its launch latency), the median
 * of LT_TUNE_SAMPLES samples; the fastest wins. A candidate that does not
 * run is passed over and named in the note. */
static mb_status_t tune_candidates(lt_kernel_t *k,
                                   const cublasLtMatmulHeuristicResult_t *res,
                                   int nres, const void *pa, const void *pb,
                                   void *pd) {
  const mb_kernel_call_t none = {sizeof none, &k->p, NULL,        0,
                                 NULL,        0,     (uint32_t)0, 0u};
  int best = -1;
  double best_ns = 0;
  char last[512] = "none fits the workspace";
  k->tried = 0;
  k->timings[0] = '\0';
  for (int i = 0; i < nres; i++) {
    if (res[i].state != CUBLAS_STATUS_SUCCESS ||
        res[i].workspaceSize > MB_CUDA_WORKSPACE_BYTES)
      continue;
    lt_candidate_t c = {k, &res[i], pa, pb, pd};
    double ns = 0;
    const mb_status_t s = mb__gpuh_time_median(
        &k->st->base, &k->d->base, run_candidate, &c, &none, LT_TUNE_SAMPLES,
        LT_TUNE_MIN_NS, LT_SLOW_NS, &ns);
    const int id = algo_id(k, &res[i].algo);
    if (s != MB_OK) {
      snprintf(last, sizeof last, "%s", k->st->base.last_error);
      note_candidate(k, id, 0, last);
      continue;
    }
    note_candidate(k, id, ns * 1e-6, NULL);
    k->tried++;
    if (best < 0 || ns < best_ns) best = i, best_ns = ns;
  }
  if (best < 0)
    return decline(k,
                   "cuBLASLt offered %d algorithms for %s (%s) at "
                   "%lldx%lldx%lld but none ran (%s)",
                   nres, k->plan.math, k->plan.compute_name,
                   (long long)k->plan.m, (long long)k->plan.k,
                   (long long)k->plan.n, last);
  k->algo = res[best].algo;
  k->ws = res[best].workspaceSize;
  k->best_ms = best_ns * 1e-6;
  k->algo_id = algo_id(k, &k->algo);
  return MB_OK;
}

mb_status_t mb__cuda_lt_tune(lt_kernel_t *k, const mb_kernel_call_t *call) {
  mb_cuda_device_t *d = k->d;
  const void *pa, *pb;
  void *pd = call->out[0];
  lt_operands(k, call, &pa, &pb);
  const uint32_t align[4] = {align_of(pa), align_of(pb), align_of(pd),
                             align_of(pd)};
  const uint64_t key = tune_key(k, align);
  mb_cuda_tuned_t *hit = tune_lookup(d, key);
  if (hit) {
    cublasLtMatmulHeuristicResult_t r;
    memset(&r, 0, sizeof r);
    if (k->st->ltlib->algo_check(d->lt, k->op, k->la, k->lb, k->lc, k->lc,
                                 &hit->algo, &r) == CUBLAS_STATUS_SUCCESS &&
        r.workspaceSize <= MB_CUDA_WORKSPACE_BYTES) {
      k->algo = hit->algo;
      k->ws =
          hit->workspace > r.workspaceSize ? hit->workspace : r.workspaceSize;
      k->algo_id = hit->algo_id;
      k->tried = hit->candidates;
      k->best_ms = hit->best_ms;
      snprintf(k->timings, sizeof k->timings, "%s", hit->timings);
      k->cache_hit = 1;
      return MB_OK;
    }
  }
  cublasLtMatmulPreference_t pref = NULL;
  mb_status_t s = ck_lt(k, k->st->ltlib->pref_create(&pref),
                        "cublaslt gemm: create the preference");
  const uint64_t ws_max = MB_CUDA_WORKSPACE_BYTES;
  if (s == MB_OK)
    s = ck_lt(
        k,
        k->st->ltlib->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                               &ws_max, sizeof ws_max),
        "cublaslt gemm: set the workspace limit");
  static const cublasLtMatmulPreferenceAttributes_t k_align[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4 && s == MB_OK; i++)
    s = ck_lt(
        k, k->st->ltlib->pref_set(pref, k_align[i], &align[i], sizeof align[i]),
        "cublaslt gemm: set an alignment");
  cublasLtMatmulHeuristicResult_t res[LT_MAX_ALGOS];
  memset(res, 0, sizeof res);
  int nres = 0;
  cublasStatus_t hs = CUBLAS_STATUS_SUCCESS;
  if (s == MB_OK)
    hs = k->st->ltlib->heuristic(d->lt, k->op, k->la, k->lb, k->lc, k->lc, pref,
                                 LT_MAX_ALGOS, res, &nres);
  if (pref) k->st->ltlib->pref_destroy(pref);
  if (s != MB_OK) return s;
  if (hs != CUBLAS_STATUS_SUCCESS || nres <= 0) {
    char v[32];
    return decline(
        k,
        "cuBLASLt %s has no algorithm for %s (%s%s%s) at %lldx%lldx%lld on "
        "%s (compute capability %d.%d)%s%s",
        lt_version(k, v, sizeof v), k->plan.math, k->plan.compute_name,
        k->plan.scale_mode[0] ? "; " : "", k->plan.scale_mode,
        (long long)k->plan.m, (long long)k->plan.k, (long long)k->plan.n,
        d->base.name, d->cc_major, d->cc_minor,
        hs != CUBLAS_STATUS_SUCCESS ? ": " : "",
        hs != CUBLAS_STATUS_SUCCESS ? k->st->ltlib->status_string(hs) : "");
  }
  /* beta != 0 reads D: tune on a copy so D still holds its inputs. */
  void *scratch = NULL;
  if (k->p.beta != 0) {
    const size_t bytes =
        (size_t)k->plan.m * (size_t)k->plan.n * k->plan.d_bytes;
    s = dalloc(k, bytes, &scratch, "cublaslt gemm: allocate a tuning output");
    if (s == MB_OK)
      s = ck(k,
             cudaMemcpyAsync(scratch, pd, bytes, cudaMemcpyDeviceToDevice,
                             d->base.stream),
             "cublaslt gemm: copy D for tuning");
    pd = scratch;
  }
  if (s == MB_OK) s = tune_candidates(k, res, nres, pa, pb, pd);
  if (scratch) {
    cudaStreamSynchronize(d->base.stream);
    cudaFree(scratch);
  }
  if (s == MB_OK) tune_remember(d, key, k);
  return s;
}
