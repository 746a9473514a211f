/* The workloads and their copy-op kernel. */
#include "work.h"

#include "ticks.h"

const double bench_durations_s[] = {1e-6, 3e-6, 1e-5, 3e-5, 1e-4,
                                    3e-4, 1e-3, 3e-3, 1e-2};
const size_t bench_num_durations =
    sizeof bench_durations_s / sizeof bench_durations_s[0];

/* Makes x opaque to the compiler without leaving its register: a vector
 * register on x86-64 and AArch64, memory elsewhere (slower, still a chain). */
#if defined(__x86_64__) || defined(__i386__)
#define BENCH_OPAQUE(x) __asm__ volatile("" : "+x"(x))
#elif defined(__aarch64__)
#define BENCH_OPAQUE(x) __asm__ volatile("" : "+w"(x))
#else
#define BENCH_OPAQUE(x) __asm__ volatile("" : "+m"(x))
#endif

/* a < 1 and b = 1 - a: x converges to 1, so no overflow or denormals
 * however long the chain. Opaque at every step, x can be neither
 * vectorised nor the chain shortened. */
static double chain(uint64_t n, double x) {
  const double a = 0.9999999, b = 1.0 - 0.9999999;
  for (uint64_t i = 0; i < n; i++) {
    x = x * a + b;
    BENCH_OPAQUE(x);
  }
  return x;
}

void bench_work_run(bench_work_t *w, const float *x, float *y, size_t count) {
  if (w->kind == BENCH_SPIN)
    bench_spin_ticks(w->n);
  else
    w->out = chain(w->n, w->out);
  for (size_t i = 0; i < count; i++) y[i] = x[i];
}

double bench_chain_ns_per_step(uint64_t steps) {
  double best = 1e300, x = 0.5;
  for (int r = 0; r < 5; r++) {
    double t0 = bench_raw_s();
    x = chain(steps, x);
    double t = bench_raw_s() - t0;
    if (t < best) best = t;
  }
  volatile double sink = x;
  (void)sink;
  return best * 1e9 / (double)steps;
}

static mb_status_t work_kernel(void *user, const mb_kernel_args_t *a) {
  bench_work_run(user, mb_tensor_data(a->inputs[0]),
                 mb_tensor_data(a->outputs[0]), mb_tensor_numel(a->outputs[0]));
  return MB_OK;
}

mb_status_t bench_work_register(mb_context_t *ctx, const char *name,
                                bench_work_t *w) {
  mb_kernel_desc_t d = MB_KERNEL_DESC_INIT;
  d.op = "copy";
  d.name = name;
  d.dtype = MB_DTYPE_F32;
  d.run = work_kernel;
  d.user = w;
  return mb_kernel_register(ctx, &d);
}

mb_bench_spec_t bench_work_spec(const char *impl, mb_op_params_t *params) {
  *params = (mb_op_params_t)MB_OP_PARAMS_INIT;
  params->ndim = 2;
  params->shape[0] = 1;
  params->shape[1] = 1;
  params->dtype = MB_DTYPE_F32;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "copy";
  s.params = params;
  s.backend = "cpu";
  s.impl = impl;
  s.cache = MB_CACHE_HOT;
  return s;
}
