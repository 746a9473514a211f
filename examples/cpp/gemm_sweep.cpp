// A C++ program on the C API: RAII owners for the context and results, a
// small GEMM sweep over shapes and dtypes, a table, and exit status 1 when a
// result is not ok or not right.
//
//   gemm_sweep [backend]        e.g.  gemm_sweep cpu
//
// Built against an installed libmicrobench with find_package(microbench)
// (CMakeLists.txt here), or pkg-config:
//   c++ -std=c++17 gemm_sweep.cpp $(pkg-config --cflags --libs microbench)
#include <microbench.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The library's message for the last failure on this thread, as an exception.
struct Error : std::runtime_error {
  explicit Error(const std::string &what)
      : std::runtime_error(what + ": " + mb_error_last()) {}
};

void check(mb_status_t st, const char *what) {
  if (st != MB_OK) throw Error(what);
}

struct ContextDeleter {
  void operator()(mb_context_t *c) const { mb_context_destroy(c); }
};
struct ResultDeleter {
  void operator()(mb_result_t *r) const { mb_result_destroy(r); }
};
using Context = std::unique_ptr<mb_context_t, ContextDeleter>;
using Result = std::unique_ptr<mb_result_t, ResultDeleter>;

Context make_context() {
  mb_context_t *ctx = nullptr;
  check(mb_context_create(&ctx, nullptr), "creating the context");
  return Context(ctx);
}

struct Problem {
  long long m, k, n;
  const char *dtype;
};

Result run_gemm(mb_context_t *ctx, const Problem &pb, const char *backend) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = pb.m;
  p.shape[1] = pb.k;
  p.shape[2] = pb.n;
  check(mb_dtype_from_name(pb.dtype, &p.dtype), "dtype");
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  spec.op = "gemm";
  spec.params = &p;
  spec.backend = backend;
  spec.cache = MB_CACHE_HOT;
  spec.min_time_s = 0.05;
  spec.timeout_s = 2.0;
  mb_result_t *r = nullptr;
  check(mb_bench_run(ctx, &spec, &r), "gemm");
  return Result(r);
}

}  // namespace

int main(int argc, char **argv) try {
  const char *backend = argc > 1 ? argv[1] : nullptr;  // nullptr: the best
  const std::vector<Problem> sweep = {
      {128, 128, 128, "f32"}, {256, 256, 256, "f32"}, {256, 256, 256, "bf16"}};
  Context ctx = make_context();
  std::printf("libmicrobench %s\n%-14s %-5s %-8s %-10s %12s %10s  %s\n",
              mb_version(), "shape", "dtype", "backend", "impl", "median us",
              "GFLOP/s", "check");
  int failed = 0;
  for (const Problem &pb : sweep) {
    Result r = run_gemm(ctx.get(), pb, backend);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    mb_stats_t stats = MB_STATS_INIT;
    mb_correctness_t corr = MB_CORRECTNESS_INIT;
    mb_derived_t d = MB_DERIVED_INIT;
    check(mb_result_info(r.get(), &info), "result");
    mb_result_stats(r.get(), &stats);
    mb_result_correctness(r.get(), &corr);
    mb_result_derived(r.get(), &d);
    std::string shape = std::to_string(pb.m) + "x" + std::to_string(pb.k) +
                        "x" + std::to_string(pb.n);
    if (info.status != MB_RESULT_OK) {
      std::printf("%-14s %-5s %s: %s\n", shape.c_str(), pb.dtype,
                  mb_result_status_name(info.status), info.reason);
      failed = 1;
      continue;
    }
    std::printf("%-14s %-5s %-8s %-10s %12.1f %10.1f  %s\n", shape.c_str(),
                pb.dtype, info.backend, info.impl, stats.median / 1e3,
                d.tflops * 1e3, corr.pass ? "pass" : "FAIL");
    failed |= !corr.pass;
  }
  return failed;
} catch (const std::exception &e) {
  std::fprintf(stderr, "gemm_sweep: %s\n", e.what());
  return 2;
}
