/* HIP backend — choosing a hipBLASLt algorithm (prepare, untimed):
 * hipblasLtMatmulAlgoGetHeuristic offers up to LT_MAX_ALGOS algorithms
 * within the device's workspace. One is taken as it is; several are each
 * timed by the GPU host layer as a benchmark is (behind the blocking
 * kernel, batches of at least 20 us of work, the median of 5), the lowest
 * median wins and the notes carry every candidate's time. The choice is
 * remembered per library instance, keyed by device and problem, so that
 * preparing the same GEMM for another operand copy does not tune again. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hip_blaslt_kernel.h"
#include "mb_fnv.h"

#define LT_MAX_ALGOS 8
#define LT_TUNE_SAMPLES 5u
/* Work per tuning sample: far above a launch's few microseconds. */
#define LT_TUNE_MIN_NS 2e4
#define LT_SLOW_NS                                          \
  250e6 /* a slower single run is sampled once, not 5 times \
         */

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
  const uint64_t h = mb__fnv1a(MB__FNV1A_BASIS, &src, sizeof src);
  return h ? h : 1; /* 0 marks an empty slot */
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

mb_status_t mb__hip_blaslt_choose(lt_kernel_t *k,
                                  const mb_kernel_call_t *call) {
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
