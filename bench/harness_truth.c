/* libmicrobench against the truth: a user kernel that busy-waits exactly T
 * on the TSC (calibrated against CLOCK_MONOTONIC_RAW, a clock the harness
 * does not use), timed with mb_bench_run (hot cache, default stdrel
 * criterion) for T from 1 us to 10 ms. Markdown on stdout.
 *
 *   harness_truth [calibration-seconds]     (default 0.5, at least 0.2)
 */
#include <microbench.h>
#include <stdio.h>
#include <stdlib.h>

#include "ticks.h"
#include "work.h"

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, mb_error_last());
  return 1;
}

int main(int argc, char **argv) {
  double calib_s = argc > 1 ? atof(argv[1]) : 0.5;
  if (!(calib_s >= 0.2)) {
    fprintf(stderr, "calibration-seconds: %s; give at least 0.2\n", argv[1]);
    return 2;
  }
  mb_context_t *ctx;
  if (mb_context_create(&ctx, NULL) != MB_OK) return fail("context");
  static bench_work_t work = {BENCH_SPIN, 0, 0.0};
  if (bench_work_register(ctx, "spin", &work) != MB_OK) return fail("register");
  bench_ticks_t ticks;
  bench_ticks_calibrate(&ticks, calib_s);
  printf(
      "libmicrobench %s (commit %s); spin on %s at %.6f GHz (calibrated over "
      "%.3f s of CLOCK_MONOTONIC_RAW)\n\n",
      mb_version(), mb_git_commit(), ticks.source, ticks.hz / 1e9,
      ticks.calib_s);
  printf(
      "| truth | median | error | median - truth | min | p90 | rel. stdev | "
      "batch | samples | "
      "stop | interfered | check |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n");
  int bad = 0;
  for (size_t i = 0; i < bench_num_durations; i++) {
    const double t_ns = bench_durations_s[i] * 1e9;
    work.n = (uint64_t)(bench_durations_s[i] * ticks.hz + 0.5);
    mb_op_params_t p;
    mb_bench_spec_t s = bench_work_spec("spin", &p);
    mb_result_t *r;
    if (mb_bench_run(ctx, &s, &r) != MB_OK) return fail("mb_bench_run");
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_stats_t st = MB_STATS_INIT;
    mb_correctness_t c = MB_CORRECTNESS_INIT;
    mb_result_info(r, &info);
    mb_result_stats(r, &st);
    mb_result_correctness(r, &c);
    if (info.status != MB_RESULT_OK) {
      fprintf(stderr, "spin %.0f ns: %s\n", t_ns, info.reason);
      bad = 1;
    }
    printf(
        "| %.0f us | %.4f us | %+.3f %% | %+.0f ns | %.4f us | %.4f us | %.3f "
        "%% | %u | "
        "%llu | %s | %llu | %s |\n",
        t_ns / 1e3, st.median / 1e3, 100.0 * (st.median - t_ns) / t_ns,
        st.median - t_ns, st.min / 1e3, st.p90 / 1e3, 100.0 * st.rel_stdev,
        st.batch, (unsigned long long)st.count, st.stop_reason,
        (unsigned long long)st.interfered, c.pass ? "pass" : "FAIL");
    bad |= !c.pass;
    mb_result_destroy(r);
  }
  mb_context_destroy(ctx);
  return bad;
}
