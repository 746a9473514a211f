// The same functions timed by Google Benchmark and by libmicrobench in one
// process: the TSC spin of known duration (1 us .. 10 ms) and a dependent
// floating-point chain of about the same durations. Per workload, Google
// Benchmark runs first, then libmicrobench, so drift hits both alike.
//
// Google Benchmark: UseRealTime, MinTime(0.5 s), Repetitions(5); the figure
// is the median aggregate of real time per iteration. libmicrobench: hot
// cache, default stdrel criterion; the figure is the median of the samples
// (per run). Markdown on stdout.
//
//   harness_gbench [--benchmark_* flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ticks.h"
#include "work.h"

namespace {

// A run's error text. Google Benchmark 1.8 replaced error_occurred and
// error_message with skipped and skip_message; the overload that compiles
// is the one for the installed version (Debian's is older than the one
// some GPU machines carry).
template <typename R>
auto run_error(const R &r, int) -> decltype(r.error_occurred, std::string()) {
  return r.error_occurred ? r.error_message : std::string();
}
template <typename R>
auto run_error(const R &r, long) -> decltype(r.skipped, std::string()) {
  return r.skipped != decltype(r.skipped)() ? r.skip_message : std::string();
}

// Keeps what the runs of one benchmark report: the median aggregate of real
// time and its coefficient of variation, and each repetition's iterations.
class Capture : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context &) override { return true; }
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &r : runs) {
      std::string e = run_error(r, 0);
      if (!e.empty()) error = e;
      if (r.run_type == Run::RT_Iteration) {
        iterations.push_back(static_cast<long long>(r.iterations));
      } else if (r.aggregate_name == "median") {
        median_ns = r.GetAdjustedRealTime();  // unit: ns (the default)
      } else if (r.aggregate_name == "cv") {
        cv = r.real_accumulated_time;  // a fraction, not a time per iteration
      }
    }
  }
  double median_ns = 0, cv = 0;
  std::vector<long long> iterations;
  std::string error;
};

struct Workload {
  std::string name;  // Google Benchmark's name and the table's label
  std::string impl;  // libmicrobench user kernel
  double target_s;   // the duration aimed at (the truth for spins)
  bench_work_t work;
};

int fail(const char *what) {
  std::fprintf(stderr, "%s: %s\n", what, mb_error_last());
  return 1;
}

std::string label(double s) {
  char b[32];
  if (s < 1e-3)
    std::snprintf(b, sizeof b, "%.0fus", s * 1e6);
  else
    std::snprintf(b, sizeof b, "%.0fms", s * 1e3);
  return b;
}

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  mb_context_t *ctx;
  mb_device_t *dev;
  if (mb_context_create(&ctx, nullptr) != MB_OK ||
      mb_device_find(ctx, "cpu", 0, &dev) != MB_OK)
    return fail("context");
  // Calibrating first also pins this thread the way every mb sample does, so
  // Google Benchmark runs on the same core from its first workload on.
  mb_calibration_t cal = MB_CALIBRATION_INIT;
  if (mb_device_calibration(dev, &cal) != MB_OK) return fail("calibration");

  bench_ticks_t ticks;
  bench_ticks_calibrate(&ticks, 0.5);
  const double step_ns = bench_chain_ns_per_step(10000000u);
  std::printf(
      "libmicrobench %s (commit %s); spin on %s at %.6f GHz (over %.3f s of "
      "CLOCK_MONOTONIC_RAW); chain step %.4f ns; timer overhead %.1f ns\n\n",
      mb_version(), mb_git_commit(), ticks.source, ticks.hz / 1e9,
      ticks.calib_s, step_ns, cal.timer_overhead_ns);

  // Stable addresses: kernels and benchmarks keep pointers to the workloads.
  std::vector<Workload> loads(2 * bench_num_durations);
  for (size_t i = 0; i < bench_num_durations; i++) {
    const double s = bench_durations_s[i];
    Workload &spin = loads[2 * i], &chain = loads[2 * i + 1];
    spin.name = "spin/" + label(s);
    spin.impl = "spin_" + label(s);
    spin.target_s = s;
    spin.work.kind = BENCH_SPIN;
    spin.work.n = static_cast<uint64_t>(s * ticks.hz + 0.5);
    chain.name = "chain/" + label(s);
    chain.impl = "chain_" + label(s);
    chain.target_s = s;
    chain.work.kind = BENCH_CHAIN;
    chain.work.n = static_cast<uint64_t>(s * 1e9 / step_ns + 0.5);
    chain.work.out = 0.5;
  }
  float x = 1.5f, y = 0.0f;  // the copy each run does, as the mb kernel
  for (Workload &w : loads) {
    if (bench_work_register(ctx, w.impl.c_str(), &w.work) != MB_OK)
      return fail("register");
    bench_work_t *wp = &w.work;
    benchmark::RegisterBenchmark(w.name.c_str(),
                                 [wp, &x, &y](benchmark::State &st) {
                                   for (auto _ : st)
                                     bench_work_run(wp, &x, &y, 1);
                                 })
        ->UseRealTime()
        ->MinTime(0.5)
        ->Repetitions(5);
  }

  std::printf(
      "| workload | target | GB median | GB cv | GB iterations | mb median | "
      "mb rel. stdev | mb batch x samples | mb stop | agreement (mb-gb)/gb "
      "| mb mean | (mb mean-gb)/gb |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
  int bad = 0;
  for (const Workload &w : loads) {
    Capture gb;
    benchmark::RunSpecifiedBenchmarks(&gb, "^" + w.name + "/");
    if (!gb.error.empty() || gb.median_ns <= 0) {
      std::fprintf(stderr, "%s: Google Benchmark: %s\n", w.name.c_str(),
                   gb.error.empty() ? "no median" : gb.error.c_str());
      bad = 1;
      continue;
    }
    mb_op_params_t p;
    mb_bench_spec_t s = bench_work_spec(w.impl.c_str(), &p);
    mb_result_t *r;
    if (mb_bench_run(ctx, &s, &r) != MB_OK) return fail("mb_bench_run");
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_stats_t st = MB_STATS_INIT;
    mb_correctness_t c = MB_CORRECTNESS_INIT;
    mb_result_info(r, &info);
    mb_result_stats(r, &st);
    mb_result_correctness(r, &c);
    if (info.status != MB_RESULT_OK || !c.pass) {
      std::fprintf(stderr, "%s: libmicrobench: %s%s\n", w.name.c_str(),
                   info.reason, c.pass ? "" : " (check failed)");
      bad = 1;
    }
    std::printf(
        "| %s | %s | %.4f us | %.3f %% | %lld | %.4f us | %.3f %% | %u x %llu "
        "| %s | %+.3f %% | %.4f us | %+.3f %% |\n",
        w.name.c_str(), label(w.target_s).c_str(), gb.median_ns / 1e3,
        100.0 * gb.cv, gb.iterations.empty() ? 0LL : gb.iterations.front(),
        st.median / 1e3, 100.0 * st.rel_stdev, st.batch,
        static_cast<unsigned long long>(st.count), st.stop_reason,
        100.0 * (st.median - gb.median_ns) / gb.median_ns, st.mean / 1e3,
        100.0 * (st.mean - gb.median_ns) / gb.median_ns);
    std::fflush(stdout);
    mb_result_destroy(r);
  }
  benchmark::Shutdown();
  mb_context_destroy(ctx);
  return bad;
}
