/* libmicrobench — one benchmark: spec -> run -> result.
 *
 * A run sets up seeded inputs, runs the kernel once and checks it against
 * the op's reference, warms up, then takes samples until the stopping
 * criterion holds. A result says whether it ran (ok / skipped / failed with
 * a reason) separately from what it measured.
 *
 * Threading: as the owning context. Results are independent objects and may
 * be read from any thread once created. */
#ifndef MICROBENCH_BENCH_H
#define MICROBENCH_BENCH_H

#include <math.h> /* NAN in MB_TELEMETRY_INIT */

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mb_cache_policy {
  MB_CACHE_COLD =
      0, /* flush the last-level cache before each sample (untimed) */
  MB_CACHE_HOT = 1, /* no flush; short kernels are batched */
  MB_CACHE_ROTATE =
      2 /* cycle through N copies of the operands, N chosen so the bytes
           touched between two uses of a copy exceed the last-level cache;
           batched like hot. The result records N and the footprint. */
} mb_cache_policy_t;

/* "cold", "hot", "rotate". Static; "?" when out of range. */
MB_API const char *mb_cache_policy_name(mb_cache_policy_t p);
/* Parses those names; the error lists them. */
MB_API mb_status_t mb_cache_policy_from_name(const char *name,
                                             mb_cache_policy_t *out);

typedef enum mb_criterion {
  MB_CRITERION_STDREL = 0, /* nvbench's: noise below max_noise, or plateau */
  MB_CRITERION_FIXED = 1,  /* exactly `samples` samples */
  MB_CRITERION_ENTROPY = 2 /* nvbench's: the entropy of the samples' values
                              has stopped growing (after min_samples and
                              min_time) */
} mb_criterion_t;

/* "stdrel", "fixed", "entropy". Static; "?" when out of range. */
MB_API const char *mb_criterion_name(mb_criterion_t c);
/* Parses those names; the error lists them. */
MB_API mb_status_t mb_criterion_from_name(const char *name,
                                          mb_criterion_t *out);

/* How a cold sample's cache is flushed (recorded in the result):
 * MB_FLUSH_WRITE writes a buffer the size of the last-level cache
 * (nvbench's memset; the default), MB_FLUSH_READ reads twice that size, so
 * no dirty lines are left to be written back during the sample. */
typedef enum mb_flush { MB_FLUSH_WRITE = 0, MB_FLUSH_READ = 1 } mb_flush_t;

/* "write", "read". Static; "?" when out of range. */
MB_API const char *mb_flush_name(mb_flush_t f);
/* Parses those names; the error lists them. */
MB_API mb_status_t mb_flush_from_name(const char *name, mb_flush_t *out);

/* Record wrong results but do not time them: status becomes failed. */
#define MB_BENCH_STRICT 1u
/* Cold samples flush with MB_FLUSH_READ instead of MB_FLUSH_WRITE. */
#define MB_BENCH_FLUSH_READ 2u
/* A fresh sample for the sampled reference check at every run (its seed,
 * recorded as correctness.sample_seed, mixes `seed` with a per-context run
 * count and the clock), so repeated runs check different elements. Without
 * it the sample is drawn from `seed` alone: a repeatable check. mbench and
 * Python set it unless a seed is given (--seed, seed=, a config's seed:). */
#define MB_BENCH_FRESH_SAMPLE 4u

typedef struct mb_bench_spec {
  uint32_t struct_size;
  const char *op;               /* name or alias; borrowed during the call */
  const mb_op_params_t *params; /* borrowed during the call */
  const char *backend;          /* NULL: the best backend with a device */
  uint32_t device;              /* index within the backend */
  const char
      *impl; /* kernel name; NULL: user kernel, else the backend's first */
  mb_cache_policy_t cache;  /* default COLD */
  mb_criterion_t criterion; /* default STDREL */
  uint32_t min_samples;     /* stdrel: at least this many (10) */
  /* Exactly this many samples (0: the criterion decides). Given with the
   * default criterion STDREL it makes the criterion FIXED, as the CLI's
   * --samples N and Python's samples=N; ENTROPY ignores it. */
  uint32_t samples;
  double min_time_s;    /* stdrel: at least this much measured time (0.5) */
  double max_noise;     /* stdrel: stop below this relative stdev (0.005) */
  double timeout_s;     /* wall-clock limit for sampling (15) */
  double warmup_s;      /* warm up at least this long (0.025) ... */
  uint32_t warmup_runs; /* ... and at least this many runs (1) */
  uint32_t batch;       /* runs per sample; 0: automatic (hot only) */
  uint64_t seed;        /* input generator seed */
  uint32_t flags;       /* MB_BENCH_* */
  /* Sample this many times over, each repetition until its own criterion
   * holds (after one warm-up); the result keeps every sample, a summary per
   * repetition and aggregates over their medians (1). */
  uint32_t repetitions;
} mb_bench_spec_t;

#define MB_BENCH_SPEC_INIT                                                  \
  {                                                                         \
    sizeof(mb_bench_spec_t), 0, 0, 0, 0u, 0, MB_CACHE_COLD,                 \
        MB_CRITERION_STDREL, 10u, 0u, 0.5, 0.005, 15.0, 0.025, 1u, 0u, 42u, \
        0u, 1u                                                              \
  }

typedef struct mb_result mb_result_t;

/* The device's condition right after one sample, where its backend can read
 * it (CUDA: NVML; CPU: the pinned cores' clock). NAN: not readable. */
typedef struct mb_telemetry {
  uint32_t struct_size;
  double sm_clock_hz;  /* GPU: graphics/SM clock; CPU: core clock (mean of
                          the cores the benchmark's threads run on) */
  double mem_clock_hz; /* memory clock */
  double power_w;      /* board power draw */
  double temp_c;       /* GPU/package temperature */
  uint32_t throttle;   /* MB_THROTTLE_* active during the sample; 0: none */
  /* The same clock read right before the sample (the runner reads the
   * device before and after each sample, untimed). */
  double clock_before_hz;
} mb_telemetry_t;

#define MB_TELEMETRY_INIT \
  { sizeof(mb_telemetry_t), NAN, NAN, NAN, NAN, 0u, NAN }

#define MB_THROTTLE_POWER 1u   /* power cap or power brake */
#define MB_THROTTLE_THERMAL 2u /* software or hardware thermal slowdown */
#define MB_THROTTLE_HW 4u      /* other hardware slowdown */
#define MB_THROTTLE_OTHER 8u   /* sync boost, display clocks, ... */

/* Runs one benchmark. Invalid input (unknown op, dtype, backend, bad shape)
 * returns an error and no result. Anything that happens while running —
 * no kernel for this dtype, out of memory, a kernel error — gives MB_OK and a
 * result with status skipped/failed and the reason. The caller owns *out. */
MB_API mb_status_t mb_bench_run(mb_context_t *ctx, const mb_bench_spec_t *spec,
                                mb_result_t **out);
/* NULL is a no-op. */
MB_API void mb_result_destroy(mb_result_t *r);

typedef enum mb_result_status {
  MB_RESULT_OK = 0,
  MB_RESULT_SKIPPED = 1,
  MB_RESULT_FAILED = 2
} mb_result_status_t;

/* "ok", "skipped", "failed". Static. */
MB_API const char *mb_result_status_name(mb_result_status_t s);

/* Identity of a result. Strings owned by the result. */
typedef struct mb_result_info {
  uint32_t struct_size;
  mb_result_status_t status;
  const char *reason; /* "" when ok */
  const char *op;     /* canonical op name */
  const char *backend;
  const char *device; /* device name */
  uint32_t device_index;
  const char *impl; /* kernel that ran */
  mb_cache_policy_t cache;
  mb_op_params_t params; /* resolved */
  uint64_t seed;
  int emulated;      /* the kernel emulates the op's formats */
  const char *alias; /* the name asked for when it was an alias, else "" */
  /* cache == MB_CACHE_ROTATE: operand copies cycled, and the bytes one
   * cycle touches (copies x operand bytes); 0 otherwise. */
  uint32_t rotate_copies;
  double footprint_bytes;
  const char *warning; /* what makes the figures doubtful; "" none */
  const char *timer;   /* how the backend timed ("CUDA events ..."); "" */
  /* Set by mb_plan_run (docs/config.md); "" / NAN otherwise. */
  const char *name;           /* the plan entry's name */
  const char *recipe;         /* "baseline", "int8wo", ... */
  const char *model;          /* "linear", ... */
  const char *mode;           /* "inference", "training" */
  const char *shape_name;     /* the preset's name for the shape */
  double speedup_vs_baseline; /* baseline median / this median */
  /* The most device memory the benchmark's own tensors held at once:
   * operands, a composite's intermediates, rotate copies (kernel-private
   * workspace is not included; see the kernel's notes). */
  double peak_memory_bytes;
  /* How cold samples were flushed (MB_BENCH_FLUSH_READ in the spec). */
  mb_flush_t flush;
} mb_result_info_t;

#define MB_RESULT_INFO_INIT                                                   \
  {                                                                           \
    sizeof(mb_result_info_t), MB_RESULT_OK, 0, 0, 0, 0, 0u, 0, MB_CACHE_COLD, \
        MB_OP_PARAMS_INIT, 0u, 0, 0, 0u, 0.0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0,  \
        MB_FLUSH_WRITE                                                        \
  }

typedef struct mb_correctness {
  uint32_t struct_size;
  int checked; /* 0: not checked (skipped/failed before) */
  int pass;
  double max_abs_err;
  double max_rel_err;        /* over elements whose reference is nonzero */
  double max_err_ratio;      /* max |err| / allowed; pass <=> <= 1 */
  double sqnr_db;            /* 10 log10(sum ref^2 / sum err^2); inf if exact */
  double tolerance;          /* relative tolerance (see docs/ops.md) */
  uint64_t elements_checked; /* per check */
  uint64_t elements_total;
  /* Runs whose output was checked, in this order: the first run; the run
   * the timed ones left last (a run that reads its output, gemm with beta,
   * gets its initial output back and runs once more first); with cache
   * rotate, each other operand copy's last run. The errors above are the
   * worst of them; the warning names a check that failed. 0: read from a
   * file written before this count. */
  uint32_t runs_checked;
  /* Seed of the sampled checks' choice of elements (check k draws from
   * seed k of it); derived from the spec's seed, so --seed reproduces it. */
  uint64_t sample_seed;
} mb_correctness_t;

#define MB_CORRECTNESS_INIT \
  { sizeof(mb_correctness_t), 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0u, 0u, 0u, 0u }

/* Times are per kernel run, in nanoseconds. */
typedef struct mb_stats {
  uint32_t struct_size;
  uint64_t count; /* samples */
  uint32_t batch; /* runs per sample */
  double min, max, mean, median, stdev, rel_stdev;
  double p10, p25, p75, p90, p99, iqr;
  double measured_ns; /* sum of samples x batch (time inside the timer) */
  double wall_s;      /* wall time spent sampling, flushes included */
  uint32_t warmup_runs;
  const char *stop_reason; /* "converged", "plateau", "timeout", "fixed",
                              "unstable"; static */
  uint64_t throttled;      /* samples taken while the device reported throttling
                              (kept, flagged; see mb_result_telemetry) */
  /* Samples more than MB_INTERFERENCE_FACTOR x the median of the samples
   * before them: likely interference (kept, flagged; see
   * mb_result_sample_flags). */
  uint64_t interfered;
  /* The device timer, calibrated once per device and context
   * (mb_device_calibration): the smallest step it resolves and the cost of
   * one empty sample; the batch keeps the overhead under 0.1 % of a sample
   * where the cache policy allows batching. */
  double timer_resolution_ns;
  double timer_overhead_ns;
  uint32_t repetitions; /* repetitions sampled (mb_result_repetitions) */
} mb_stats_t;

#define MB_STATS_INIT                                                        \
  {                                                                          \
    sizeof(mb_stats_t), 0u, 0u, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, \
        0.0, 0.0, 0.0, 0.0, 0.0, 0u, 0, 0u, 0u, 0.0, 0.0, 0u                 \
  }

/* A sample this many times the median of the samples before it is flagged
 * as taken under interference. */
#define MB_INTERFERENCE_FACTOR 3.0
/* Per-sample flags (mb_result_sample_flags). */
#define MB_SAMPLE_INTERFERENCE                                            \
  1u                           /* > MB_INTERFERENCE_FACTOR x prior median \
                                */
#define MB_SAMPLE_THROTTLED 2u /* the device reported throttling */

/* One repetition's samples: [first_sample, first_sample + count) of
 * mb_result_samples(), summarised. */
typedef struct mb_repetition {
  uint32_t struct_size;
  uint64_t first_sample, count;
  double median, mean, stdev; /* ns per run */
  const char *stop_reason;    /* as mb_stats_t; static */
} mb_repetition_t;

/* Google Benchmark's aggregates over the repetitions' medians. */
typedef struct mb_aggregate {
  uint32_t struct_size;
  uint32_t count;                            /* repetitions */
  double mean, median, stddev, cv, min, max; /* ns; cv = stddev / mean */
} mb_aggregate_t;

#define MB_AGGREGATE_INIT \
  { sizeof(mb_aggregate_t), 0u, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 }

typedef struct mb_derived {
  uint32_t struct_size;
  double flop;      /* per run */
  double bytes;     /* minimal compulsory traffic per run */
  double intensity; /* flop / bytes */
  double tflops;    /* flop / median */
  double gbps;      /* bytes / median, GB/s (1e9) */
  /* The peak of the math the kernel ran: the backend's peak for the op
   * (tensor cores, VNNI), or for the dtype the kernel says it computed in
   * (a kernel note "math": the CPU's int4 weight-only GEMM dequantizes to
   * f32 and multiplies in f32); 0 unknown, and for emulated kernels (fp8
   * on a CPU), whose speed says nothing about a format's hardware. */
  double peak_flops;
  double pct_peak; /* 100 * flop rate / peak; 0 when unknown */
  /* ---- appended ---- */
  /* The device's measured copy bandwidth; for a transfer op (h2d, d2h,
   * d2d) its link's datasheet figure (one direction) instead. 0 unknown. */
  double bandwidth_gbps;
  /* The roofline bound: max(flop / peak, bytes / bandwidth) in ns, and
   * 100 * roof_ns / median. 0 when unknown: no bandwidth, or FLOPs without
   * a peak. A hot result whose operands fit in cache can pass 100 %: the
   * bandwidth roof is memory's, its bytes came from cache. */
  double roof_ns;
  double pct_roof;
  const char *bound; /* "compute", "memory" (the larger term); "link" for a
                        transfer against its link; "" unknown */
} mb_derived_t;

#define MB_DERIVED_INIT \
  { sizeof(mb_derived_t), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, "" }

MB_API mb_status_t mb_result_info(const mb_result_t *r, mb_result_info_t *out);
MB_API mb_status_t mb_result_correctness(const mb_result_t *r,
                                         mb_correctness_t *out);
MB_API mb_status_t mb_result_stats(const mb_result_t *r, mb_stats_t *out);
MB_API mb_status_t mb_result_derived(const mb_result_t *r, mb_derived_t *out);
/* Every sample (per-run ns), in the order taken. Owned by the result. */
MB_API const double *mb_result_samples(const mb_result_t *r, size_t *count);
/* Device telemetry read after each sample, parallel to mb_result_samples();
 * NULL and *count 0 when the backend reports none. Owned by the result. */
MB_API const mb_telemetry_t *mb_result_telemetry(const mb_result_t *r,
                                                 size_t *count);
/* Per-sample MB_SAMPLE_* flags, parallel to mb_result_samples(). Owned by
 * the result. */
MB_API const uint8_t *mb_result_sample_flags(const mb_result_t *r,
                                             size_t *count);
/* The repetitions (one unless the spec asked for more). Owned by the
 * result; NULL and *count 0 when nothing was sampled. */
MB_API const mb_repetition_t *mb_result_repetitions(const mb_result_t *r,
                                                    size_t *count);
/* Mean, median, stddev, cv, min and max of the repetitions' medians. */
MB_API mb_status_t mb_result_aggregate(const mb_result_t *r,
                                       mb_aggregate_t *out);
/* Facts the kernel reported (cuBLASLt algorithm id, workspace, math mode):
 * note i's key, and its text or, when *text is NULL, its number. */
MB_API size_t mb_result_note_count(const mb_result_t *r);
MB_API mb_status_t mb_result_note(const mb_result_t *r, size_t i,
                                  const char **key, const char **text,
                                  double *value);
/* Where a result was measured when a run spans processes (an MPI job:
 * docs/distributed.md); ranks 0: one process, nothing recorded. */
typedef struct mb_placement {
  uint32_t struct_size;
  int rank, ranks; /* this result's rank, of how many */
  int local_rank;  /* among the ranks on its host: the device it took */
  char host[256];
} mb_placement_t;

#define MB_PLACEMENT_INIT \
  { sizeof(mb_placement_t), 0, 0, 0, "" }

/* Records where r was measured (written in its JSON as "placement"); a
 * rank outside 0..ranks-1 is MB_ERR_INVALID_ARG. */
MB_API mb_status_t mb_result_set_placement(mb_result_t *r,
                                           const mb_placement_t *p);
MB_API mb_status_t mb_result_placement(const mb_result_t *r,
                                       mb_placement_t *out);
/* The result as one JSON object (schema microbench.results/1). Owned by the
 * result, valid for its life; NULL only on out-of-memory. */
MB_API const char *mb_result_json(const mb_result_t *r);
/* The inverse of mb_result_json(): a result read back from its JSON object
 * (e.g. one a child process wrote), equal field for field, samples and
 * telemetry included. Errors name the field. The caller owns *out. */
MB_API mb_status_t mb_result_from_json(const char *json, mb_result_t **out);
/* What mb_bench_run() would refuse as an input error about names the
 * context must know — an unknown backend, an implementation the op does
 * not have there — checked without running anything, so a program can say
 * so before it prints anything (mbench checks before its table header). A
 * backend without a device is MB_OK: its result is skipped, with why. */
MB_API mb_status_t mb_bench_check(mb_context_t *ctx,
                                  const mb_bench_spec_t *spec);

/* A result for `spec` that did not run here, with status `status` (skipped
 * or failed) and `reason`: the identity (op, params, backend, device) is
 * resolved as mb_bench_run() would, nothing runs. For harnesses that run
 * benchmarks elsewhere (mbench --isolate: a crash or hang in a child process
 * becomes a failed result). Errors as mb_bench_run. */
MB_API mb_status_t mb_bench_result_without_run(mb_context_t *ctx,
                                               const mb_bench_spec_t *spec,
                                               mb_result_status_t status,
                                               const char *reason,
                                               mb_result_t **out);

#ifdef __cplusplus
}
#endif
#endif
