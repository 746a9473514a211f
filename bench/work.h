/* Workloads of known cost, shared by the harness programs so that Google
 * Benchmark and libmicrobench time the very same function:
 * - spin: busy-waits a given number of TSC ticks (known duration);
 * - chain: a dependent floating-point chain x = x*a + b of n steps (real
 *   arithmetic, latency-bound, its duration only estimated).
 * Each run also copies X to Y, so the workload can be registered as a user
 * kernel for the `copy` op, whose output every benchmark checks. */
#ifndef BENCH_WORK_H
#define BENCH_WORK_H

#include <microbench.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bench_work_kind {
  BENCH_SPIN = 0,
  BENCH_CHAIN = 1
} bench_work_kind_t;

typedef struct bench_work {
  bench_work_kind_t kind;
  uint64_t n;          /* spin: ticks; chain: steps */
  volatile double out; /* the chain's result, so it is computed */
} bench_work_t;

/* The known durations every harness program times: 1 us to 10 ms. */
extern const double bench_durations_s[];
extern const size_t bench_num_durations;

/* One run: the workload, then y[i] = x[i] for i < count. */
void bench_work_run(bench_work_t *w, const float *x, float *y, size_t count);
/* The chain's cost per step in ns, from `steps` steps timed with
 * CLOCK_MONOTONIC_RAW (best of 5). */
double bench_chain_ns_per_step(uint64_t steps);

/* Registers `w` as user kernel `name` for copy f32 on the CPU backend. */
mb_status_t bench_work_register(mb_context_t *ctx, const char *name,
                                bench_work_t *w);
/* A hot-cache, default-criterion (stdrel) spec for copy f32 1x1 with user
 * kernel `impl`; `params` is filled and must outlive the spec's use. */
mb_bench_spec_t bench_work_spec(const char *impl, mb_op_params_t *params);

#ifdef __cplusplus
}
#endif
#endif
