/* mb_result_from_json: a result read back from its own JSON is the same
 * result — the JSON byte for byte, and every accessor field for field —
 * for results the CPU backend measured and results built by hand through
 * the internal API; malformed JSON is an error naming the field. */
#include <math.h>

#include "test_util.h"

#include "results/result.h"
#include "measure/stats.h"

static mb_context_t *g_ctx;

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

/* ---- comparing two results ------------------------------------------------
 */

/* Bit for bit: the writer prints every double so that it reads back
 * exactly (json_exact.c). NaN equals NaN, inf equals inf. */
static void same(double a, double b, const char *what) {
  if (a == b || (isnan(a) && isnan(b))) return;
  fail_msg("%s: %.17g != %.17g", what, a, b);
}

/* A unit converted there and back (MHz, TFLOP/s): a few ulps more. */
static void close_to(double a, double b, const char *what) {
  if (a == b || (isnan(a) && isnan(b))) return;
  if (!(fabs(a - b) <= 1e-15 * fmax(fabs(a), fabs(b))))
    fail_msg("%s: %.17g != %.17g", what, a, b);
}

/* A statistic recomputed from read-back samples (the one repetition of a
 * result is rebuilt from its samples, each possibly an ulp off): the sums
 * in a stdev can move a few more ulps. */
static void recomputed(double a, double b, const char *what) {
  if (a == b || (isnan(a) && isnan(b))) return;
  if (!(fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b))))
    fail_msg("%s: %.17g != %.17g", what, a, b);
}

static void same_scaling(const mb_scaling_t *a, const mb_scaling_t *b) {
  assert_int_equal(a->mode, b->mode);
  assert_int_equal(a->block[0], b->block[0]);
  assert_int_equal(a->block[1], b->block[1]);
}

static void same_params(const mb_op_params_t *a, const mb_op_params_t *b) {
  assert_int_equal(a->struct_size, b->struct_size);
  assert_int_equal(a->ndim, b->ndim);
  for (int i = 0; i < MB_MAX_DIMS; i++)
    assert_int_equal(a->shape[i], b->shape[i]);
  assert_int_equal(a->dtype, b->dtype);
  assert_int_equal(a->dtype_b, b->dtype_b);
  assert_int_equal(a->dtype_out, b->dtype_out);
  assert_int_equal(a->dtype_acc, b->dtype_acc);
  same(a->alpha, b->alpha, "alpha");
  same(a->beta, b->beta, "beta");
  assert_int_equal(a->flags, b->flags);
  same_scaling(&a->scale_a, &b->scale_a);
  same_scaling(&a->scale_b, &b->scale_b);
  assert_int_equal(a->dtype_q, b->dtype_q);
  same(a->scale, b->scale, "scale");
  assert_int_equal(a->activation, b->activation);
  same(a->act_alpha, b->act_alpha, "act_alpha");
  same(a->eps, b->eps, "eps");
  assert_int_equal(a->kv_heads, b->kv_heads);
}

static void same_info(const mb_result_t *a, const mb_result_t *b) {
  mb_result_info_t x = MB_RESULT_INFO_INIT, y = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(a, &x), MB_OK);
  assert_int_equal(mb_result_info(b, &y), MB_OK);
  assert_int_equal(x.status, y.status);
  const char *const sx[] = {
      x.reason, x.op,   x.backend, x.device, x.impl, x.alias,     x.warning,
      x.timer,  x.name, x.recipe,  x.model,  x.mode, x.shape_name};
  const char *const sy[] = {
      y.reason, y.op,   y.backend, y.device, y.impl, y.alias,     y.warning,
      y.timer,  y.name, y.recipe,  y.model,  y.mode, y.shape_name};
  for (size_t i = 0; i < sizeof sx / sizeof *sx; i++)
    assert_string_equal(sx[i], sy[i]);
  assert_int_equal(x.device_index, y.device_index);
  assert_int_equal(x.cache, y.cache);
  same_params(&x.params, &y.params);
  assert_true(x.seed == y.seed);
  assert_int_equal(x.emulated, y.emulated);
  assert_int_equal(x.rotate_copies, y.rotate_copies);
  same(x.footprint_bytes, y.footprint_bytes, "footprint_bytes");
  same(x.speedup_vs_baseline, y.speedup_vs_baseline, "speedup");
  same(a->cache_bytes, b->cache_bytes, "cache_bytes");
}

/* The spec's numbers the result records (flags are not written). */
static void same_timing(const mb_bench_spec_t *a, const mb_bench_spec_t *b) {
  assert_int_equal(a->cache, b->cache);
  assert_int_equal(a->criterion, b->criterion);
  assert_int_equal(a->min_samples, b->min_samples);
  assert_int_equal(a->samples, b->samples);
  same(a->min_time_s, b->min_time_s, "min_time_s");
  same(a->max_noise, b->max_noise, "max_noise");
  same(a->timeout_s, b->timeout_s, "timeout_s");
  same(a->warmup_s, b->warmup_s, "warmup_s");
  assert_int_equal(a->warmup_runs, b->warmup_runs);
  assert_int_equal(a->batch, b->batch);
  assert_true(a->seed == b->seed);
  assert_int_equal(a->device, b->device);
  assert_int_equal(a->repetitions, b->repetitions);
}

static void same_stats(const mb_result_t *a, const mb_result_t *b) {
  mb_stats_t x = MB_STATS_INIT, y = MB_STATS_INIT;
  assert_int_equal(mb_result_stats(a, &x), MB_OK);
  assert_int_equal(mb_result_stats(b, &y), MB_OK);
  assert_true(x.count == y.count);
  assert_int_equal(x.batch, y.batch);
  const double dx[] = {x.min,
                       x.max,
                       x.mean,
                       x.median,
                       x.stdev,
                       x.rel_stdev,
                       x.p10,
                       x.p25,
                       x.p75,
                       x.p90,
                       x.p99,
                       x.iqr,
                       x.measured_ns,
                       x.wall_s,
                       x.timer_resolution_ns,
                       x.timer_overhead_ns};
  const double dy[] = {y.min,
                       y.max,
                       y.mean,
                       y.median,
                       y.stdev,
                       y.rel_stdev,
                       y.p10,
                       y.p25,
                       y.p75,
                       y.p90,
                       y.p99,
                       y.iqr,
                       y.measured_ns,
                       y.wall_s,
                       y.timer_resolution_ns,
                       y.timer_overhead_ns};
  for (size_t i = 0; i < sizeof dx / sizeof *dx; i++)
    same(dx[i], dy[i], "stats");
  assert_int_equal(x.warmup_runs, y.warmup_runs);
  assert_string_equal(x.stop_reason, y.stop_reason);
  assert_true(x.throttled == y.throttled);
  assert_true(x.interfered == y.interfered);
  assert_int_equal(x.repetitions, y.repetitions);
}

static void same_correctness(const mb_result_t *a, const mb_result_t *b) {
  mb_correctness_t x = MB_CORRECTNESS_INIT, y = MB_CORRECTNESS_INIT;
  assert_int_equal(mb_result_correctness(a, &x), MB_OK);
  assert_int_equal(mb_result_correctness(b, &y), MB_OK);
  assert_int_equal(x.checked, y.checked);
  assert_int_equal(x.pass, y.pass);
  same(x.max_abs_err, y.max_abs_err, "max_abs_err");
  same(x.max_rel_err, y.max_rel_err, "max_rel_err");
  same(x.max_err_ratio, y.max_err_ratio, "max_err_ratio");
  same(x.sqnr_db, y.sqnr_db, "sqnr_db");
  same(x.tolerance, y.tolerance, "tolerance");
  assert_true(x.elements_checked == y.elements_checked);
  assert_true(x.elements_total == y.elements_total);
  assert_int_equal(x.runs_checked, y.runs_checked);
  assert_true(x.sample_seed == y.sample_seed);
}

static void same_derived(const mb_result_t *a, const mb_result_t *b) {
  mb_derived_t x = MB_DERIVED_INIT, y = MB_DERIVED_INIT;
  assert_int_equal(mb_result_derived(a, &x), MB_OK);
  assert_int_equal(mb_result_derived(b, &y), MB_OK);
  same(x.flop, y.flop, "flop");
  same(x.bytes, y.bytes, "bytes");
  same(x.intensity, y.intensity, "intensity");
  same(x.tflops, y.tflops, "tflops");
  same(x.gbps, y.gbps, "gbps");
  close_to(x.peak_flops, y.peak_flops, "peak_flops");
  same(x.pct_peak, y.pct_peak, "pct_peak");
  same(x.bandwidth_gbps, y.bandwidth_gbps, "bandwidth_gbps");
  same(x.roof_ns, y.roof_ns, "roof_ns");
  same(x.pct_roof, y.pct_roof, "pct_roof");
  assert_string_equal(x.bound, y.bound);
}

static void same_per_sample(const mb_result_t *a, const mb_result_t *b) {
  size_t n, m;
  const double *sa = mb_result_samples(a, &n), *sb = mb_result_samples(b, &m);
  assert_int_equal(n, m);
  for (size_t i = 0; i < n; i++) same(sa[i], sb[i], "sample");
  const uint8_t *fa = mb_result_sample_flags(a, &n),
                *fb = mb_result_sample_flags(b, &m);
  assert_int_equal(n, m);
  for (size_t i = 0; i < n; i++) assert_int_equal(fa[i], fb[i]);
  const mb_telemetry_t *ta = mb_result_telemetry(a, &n),
                       *tb = mb_result_telemetry(b, &m);
  assert_int_equal(n, m);
  for (size_t i = 0; i < n; i++) {
    close_to(ta[i].sm_clock_hz, tb[i].sm_clock_hz, "sm_clock_hz");
    close_to(ta[i].mem_clock_hz, tb[i].mem_clock_hz, "mem_clock_hz");
    same(ta[i].power_w, tb[i].power_w, "power_w");
    same(ta[i].temp_c, tb[i].temp_c, "temp_c");
    close_to(ta[i].clock_before_hz, tb[i].clock_before_hz, "clock_before");
    assert_int_equal(ta[i].throttle, tb[i].throttle);
  }
  const mb_repetition_t *ra = mb_result_repetitions(a, &n),
                        *rb = mb_result_repetitions(b, &m);
  assert_int_equal(n, m);
  for (size_t i = 0; i < n; i++) {
    assert_true(ra[i].first_sample == rb[i].first_sample);
    assert_true(ra[i].count == rb[i].count);
    recomputed(ra[i].median, rb[i].median, "rep median");
    recomputed(ra[i].mean, rb[i].mean, "rep mean");
    recomputed(ra[i].stdev, rb[i].stdev, "rep stdev");
    assert_string_equal(ra[i].stop_reason, rb[i].stop_reason);
  }
  mb_aggregate_t ga = MB_AGGREGATE_INIT, gb = MB_AGGREGATE_INIT;
  assert_int_equal(mb_result_aggregate(a, &ga), MB_OK);
  assert_int_equal(mb_result_aggregate(b, &gb), MB_OK);
  assert_int_equal(ga.count, gb.count);
  /* One repetition: no stored aggregate (the JSON has none), so it is
   * recomputed from the rebuilt repetition, within its tolerance. */
  if (n < 2) {
    recomputed(ga.median, gb.median, "aggregate median");
    recomputed(ga.cv, gb.cv, "aggregate cv");
    return;
  }
  same(ga.median, gb.median, "aggregate median");
  same(ga.cv, gb.cv, "aggregate cv");
}

static void same_notes(const mb_result_t *a, const mb_result_t *b) {
  assert_int_equal(mb_result_note_count(a), mb_result_note_count(b));
  for (size_t i = 0; i < mb_result_note_count(a); i++) {
    const char *ka, *kb, *ta, *tb;
    double va, vb;
    assert_int_equal(mb_result_note(a, i, &ka, &ta, &va), MB_OK);
    assert_int_equal(mb_result_note(b, i, &kb, &tb, &vb), MB_OK);
    assert_string_equal(ka, kb);
    assert_int_equal(ta == NULL, tb == NULL);
    if (ta)
      assert_string_equal(ta, tb);
    else
      same(va, vb, "note value");
  }
}

static int is_known_stop_reason(const char *s) {
  static const char *const k[] = {"converged", "plateau", "fixed", "unstable",
                                  "timeout",   "entropy", ""};
  for (size_t i = 0; i < sizeof k / sizeof *k; i++)
    if (strcmp(s, k[i]) == 0) return 1;
  return 0;
}

/* Reads r back from its JSON, checks everything, destroys r. */
static void roundtrip(mb_result_t *r) {
  const char *json = mb_result_json(r);
  assert_non_null(json);
  mb_result_t *q = NULL;
  if (mb_result_from_json(json, &q) != MB_OK)
    fail_msg("%s\n  in %s", mb_error_last(), json);
  const char *again = mb_result_json(q);
  assert_non_null(again);
  if (strcmp(json, again) != 0)
    fail_msg("JSON differs:\n  wrote %s\n  read  %s", json, again);
  same_info(r, q);
  same_timing(&r->timing, &q->timing);
  same_stats(r, q);
  same_correctness(r, q);
  same_derived(r, q);
  same_per_sample(r, q);
  same_notes(r, q);
  assert_int_equal(r->config == NULL, q->config == NULL);
  if (r->config) assert_true(cJSON_Compare(r->config, q->config, 1));
  /* Stop reasons are static strings: still readable once q is gone (ASan
   * would catch a pointer into q or its JSON). */
  mb_stats_t s = MB_STATS_INIT;
  size_t nreps;
  mb_result_stats(q, &s);
  const mb_repetition_t *reps = mb_result_repetitions(q, &nreps);
  const char *rep_reason = nreps ? reps[nreps - 1].stop_reason : "";
  mb_result_destroy(q);
  assert_true(is_known_stop_reason(s.stop_reason));
  assert_true(is_known_stop_reason(rep_reason));
  mb_result_destroy(r);
}

/* ---- results the CPU backend measured -------------------------------------
 */

static mb_op_params_t shape_of(uint32_t ndim, const int64_t *dims) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = ndim;
  for (uint32_t i = 0; i < ndim; i++) p.shape[i] = dims[i];
  return p;
}

static mb_bench_spec_t quick_spec(const char *op, const mb_op_params_t *p) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = op;
  s.params = p;
  s.backend = "cpu";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 4;
  s.warmup_s = 0;
  s.seed = 7;
  return s;
}

static mb_result_t *run(const mb_bench_spec_t *s, mb_result_status_t want) {
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  if (info.status != want)
    fail_msg("%s: status %s (%s), expected %s", s->op,
             mb_result_status_name(info.status), info.reason,
             mb_result_status_name(want));
  return r;
}

static void test_gemm_bf16_with_notes(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(3, (int64_t[]){32, 48, 16});
  p.dtype = MB_DTYPE_BF16;
  mb_bench_spec_t s = quick_spec("gemm", &p);
  mb_result_t *r = run(&s, MB_RESULT_OK);
  /* The CPU kernels report no notes; a CUDA kernel's are text and numbers. */
  assert_int_equal(mb__result_add_note(r, "algo", "cublasLt heuristic 3", 0),
                   MB_OK);
  assert_int_equal(mb__result_add_note(r, "workspace_bytes", NULL, 4194304.0),
                   MB_OK);
  assert_int_equal(mb__result_add_note(r, "waves", NULL, NAN), MB_OK);
  /* Unscaled operands: the JSON has no block; it must still come back. */
  assert_int_equal(r->info.params.scale_a.block[0], 32);
  assert_int_equal(r->info.params.scale_b.block[1], 16);
  roundtrip(r);
}

static void test_cold_add(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){64, 96});
  mb_bench_spec_t s = quick_spec("add", &p);
  s.cache = MB_CACHE_COLD;
  roundtrip(run(&s, MB_RESULT_OK));
}

static void test_rotate_copy(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){128, 128});
  mb_bench_spec_t s = quick_spec("copy", &p);
  s.cache = MB_CACHE_ROTATE;
  mb_result_t *r = run(&s, MB_RESULT_OK);
  assert_true(r->info.rotate_copies > 1);
  roundtrip(r);
}

static void test_quantize_block_scaling(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){64, 128});
  assert_int_equal(mb_scaling_from_string("block:1x32", &p.scale_a), MB_OK);
  mb_bench_spec_t s = quick_spec("quantize", &p);
  roundtrip(run(&s, MB_RESULT_OK));
  /* A static scale, transposed: the flags and the scale come back. */
  p = shape_of(2, (int64_t[]){64, 128});
  p.flags = MB_PARAM_STATIC | MB_PARAM_TRANSPOSE;
  p.scale = 0.0625;
  s = quick_spec("quantize", &p);
  roundtrip(run(&s, MB_RESULT_OK));
  /* e8m0 scales (MXFP8): the scale dtype comes back. */
  p = shape_of(2, (int64_t[]){64, 128});
  assert_int_equal(mb_scaling_from_string("block:1x32", &p.scale_a), MB_OK);
  p.dtype_scale = MB_DTYPE_E8M0;
  s = quick_spec("quantize", &p);
  mb_result_t *r = run(&s, MB_RESULT_OK);
  assert_non_null(strstr(mb_result_json(r), "\"scale_dtype\":\"e8m0\""));
  roundtrip(r);
}

static void test_attention_causal(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(5, (int64_t[]){1, 2, 16, 16, 8});
  p.flags = MB_PARAM_CAUSAL;
  mb_bench_spec_t s = quick_spec("attention", &p);
  roundtrip(run(&s, MB_RESULT_OK));
}

/* Grouped-query attention: kv_heads is written and read back; multi-head
 * results (above) leave it out and read back as H. */
static void test_attention_gqa(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(5, (int64_t[]){1, 4, 16, 16, 8});
  p.kv_heads = 2;
  p.flags = MB_PARAM_BSHD;
  mb_bench_spec_t s = quick_spec("attention", &p);
  mb_result_t *r = run(&s, MB_RESULT_OK);
  assert_non_null(strstr(mb_result_json(r), "\"kv_heads\":2"));
  roundtrip(r);
}

/* Each op's own parameters: activation with its slope, a norm without
 * affine weights, an alias. */
static void test_op_parameters(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){16, 32});
  p.activation = MB_ACT_LEAKYRELU;
  p.act_alpha = 0.2;
  mb_bench_spec_t s = quick_spec("activation", &p);
  roundtrip(run(&s, MB_RESULT_OK));
  p = shape_of(2, (int64_t[]){16, 32});
  p.flags = MB_PARAM_NO_WEIGHT;
  p.eps = 1e-6;
  s = quick_spec("layernorm", &p);
  roundtrip(run(&s, MB_RESULT_OK));
  p = shape_of(3, (int64_t[]){16, 16, 16});
  s = quick_spec("matmul", &p); /* an alias of gemm */
  mb_result_t *r = run(&s, MB_RESULT_OK);
  assert_string_equal(r->alias, "matmul");
  roundtrip(r);
}

static void test_skipped(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(3, (int64_t[]){8, 8, 8});
  p.dtype = MB_DTYPE_F16; /* valid gemm, no CPU kernel */
  mb_bench_spec_t s = quick_spec("gemm", &p);
  roundtrip(run(&s, MB_RESULT_SKIPPED));
}

/* fast_accum is written, read back and named in the variant; the CPU
 * declines it (its fp8 is emulated), so the result is a skip that says so. */
static void test_fast_accum(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(3, (int64_t[]){16, 32, 16});
  p.dtype = MB_DTYPE_F8E4M3;
  p.flags = MB_PARAM_FAST_ACCUM;
  mb_bench_spec_t s = quick_spec("gemm", &p);
  mb_result_t *r = run(&s, MB_RESULT_SKIPPED);
  assert_contains(r->info.reason, "fast_accum: the CPU emulates fp8");
  assert_contains(mb_result_json(r), "\"fast_accum\":true");
  char variant[128];
  mb__result_variant(r, variant, sizeof variant);
  assert_string_equal(variant, "fast-accum");
  mb_result_t *q = NULL;
  assert_int_equal(mb_result_from_json(mb_result_json(r), &q), MB_OK);
  assert_true(q->info.params.flags & MB_PARAM_FAST_ACCUM);
  mb_result_destroy(q);
  roundtrip(r);
}

/* Where a result ran in a job of ranks: written, read back, refused when
 * it is not a rank; absent for one process. */
static void test_placement(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){8, 8});
  mb_bench_spec_t s = quick_spec("add", &p);
  mb_result_t *r = run(&s, MB_RESULT_OK);
  mb_placement_t got = MB_PLACEMENT_INIT;
  assert_int_equal(mb_result_placement(r, &got), MB_OK);
  assert_int_equal(got.ranks, 0);
  assert_null(strstr(mb_result_json(r), "\"placement\""));
  mb_placement_t bad = {sizeof bad, 4, 4, 0, "node1"};
  assert_int_equal(mb_result_set_placement(r, &bad), MB_ERR_INVALID_ARG);
  mb_placement_t at = {sizeof at, 3, 4, 1, "node1"};
  assert_int_equal(mb_result_set_placement(r, &at), MB_OK);
  assert_contains(mb_result_json(r),
                  "\"placement\":{\"host\":\"node1\",\"rank\":3,"
                  "\"ranks\":4,\"local_rank\":1}");
  mb_result_t *q = NULL;
  assert_int_equal(mb_result_from_json(mb_result_json(r), &q), MB_OK);
  assert_int_equal(mb_result_placement(q, &got), MB_OK);
  assert_int_equal(got.rank, 3);
  assert_int_equal(got.ranks, 4);
  assert_int_equal(got.local_rank, 1);
  assert_string_equal(got.host, "node1");
  mb_result_destroy(q);
  roundtrip(r);
}

static void test_failed(void **state) {
  (void)state;
  /* 64 TiB per operand: the allocation fails, the result says so. */
  mb_op_params_t p = shape_of(3, (int64_t[]){1 << 22, 1 << 22, 1 << 22});
  mb_bench_spec_t s = quick_spec("gemm", &p);
  roundtrip(run(&s, MB_RESULT_FAILED));
  /* And one that never ran (mbench --isolate: the child crashed). */
  p = shape_of(3, (int64_t[]){8, 8, 8});
  s = quick_spec("gemm", &p);
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_result_without_run(g_ctx, &s, MB_RESULT_FAILED,
                                               "child killed by signal 11", &r),
                   MB_OK);
  roundtrip(r);
}

static void test_repetitions(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){32, 32});
  mb_bench_spec_t s = quick_spec("add", &p);
  s.cache = MB_CACHE_HOT;
  s.repetitions = 3;
  s.samples = 3;
  mb_result_t *r = run(&s, MB_RESULT_OK);
  size_t n;
  assert_non_null(mb_result_repetitions(r, &n));
  assert_int_equal(n, 3);
  roundtrip(r);
}

/* ---- results built by hand -------------------------------------------------
 */

static void set_device_name(mb_result_t *r, const char *name) {
  free(r->device);
  r->device = mb__strdup(name);
  assert_non_null(r->device);
  r->info.device = r->device;
}

/* An fp8 GEMM on a GPU with everything a result can carry. */
static mb_result_t *hand_built(void) {
  mb_op_params_t p = shape_of(3, (int64_t[]){256, 512, 128});
  p.dtype = MB_DTYPE_F8E4M3;
  p.scale_a.mode = MB_SCALE_ROW;
  p.scale_b.mode = MB_SCALE_BLOCK;
  p.scale_b.block[0] = 128;
  p.scale_b.block[1] = 128;
  p.beta = 0.5;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &p), MB_OK);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "gemm_fp8";
  s.backend = "cuda";
  s.device = 1;
  s.impl = "cublaslt";
  s.cache = MB_CACHE_ROTATE;
  s.criterion = MB_CRITERION_ENTROPY;
  s.timeout_s = INFINITY;
  /* The largest seed the JSON keeps exactly: cJSON prints 15 significant
   * digits when they read back within DBL_EPSILON, so 2^53 - 1 would come
   * back as 9007199254740990. */
  s.seed = 999999999999999u;
  s.repetitions = 2;
  mb_result_t *r = mb__result_new("gemm", "MxKxN", &p, &s, NULL);
  assert_non_null(r);
  set_device_name(r, "NVIDIA H100 80GB HBM3");
  r->info.emulated = 1;
  r->info.rotate_copies = 5;
  r->info.footprint_bytes = 5 * 229376.0;
  r->cache_bytes = 52428800.0;
  /* Two repetitions of four samples, with telemetry NaN where unreadable. */
  const double ns[] = {1021.5,   998.25, 1003.0,           4100.0,
                       1000.125, 999.0,  1.0 / 3.0 + 1000, 1002.75};
  for (size_t i = 0; i < 8; i++) {
    if (i == 4)
      assert_int_equal(mb__result_add_repetition(r, 0, "converged"), MB_OK);
    assert_int_equal(mb__result_add_sample(r, ns[i]), MB_OK);
    mb_telemetry_t t = MB_TELEMETRY_INIT;
    /* 1000182000 Hz reads back from 1000.182 MHz an ulp off. */
    t.sm_clock_hz =
        i % 3 ? (i == 1 ? 1000182000.0 : 1.98e9 - 15e6 * (double)i) : NAN;
    t.mem_clock_hz = i == 5 ? NAN : 2.619e9;
    t.power_w = 312.25 + (double)i;
    t.temp_c = i % 2 ? 61.0 : NAN;
    t.throttle = i == 6 ? MB_THROTTLE_POWER | MB_THROTTLE_THERMAL : 0;
    t.clock_before_hz = i == 0 ? NAN : 1.755e9 + 1.0 / 7.0;
    assert_int_equal(mb__result_add_telemetry(r, &t), MB_OK);
  }
  mb__result_flag_sample(r, 3, MB_SAMPLE_INTERFERENCE);
  assert_int_equal(mb__result_add_repetition(r, 4, "timeout"), MB_OK);
  assert_int_equal(mb__stats_compute(r->samples, r->num_samples, &r->stats),
                   MB_OK);
  r->stats.stop_reason = "timeout";
  r->stats.batch = 16;
  r->stats.warmup_runs = 3;
  r->stats.wall_s = 0.0123;
  r->stats.measured_ns = 8 * 16 * 1000.0;
  r->stats.interfered = 1;
  r->stats.timer_resolution_ns = 32.0;
  r->stats.timer_overhead_ns = 2150.5;
  r->stats.repetitions = 2;
  r->corr = (mb_correctness_t){
      sizeof r->corr, 1,     1,    0.0,   0.0, 0.0,
      INFINITY,       0.125, 4096, 32768, 3,   (1ull << 53) - 5};
  r->derived = (mb_derived_t){sizeof r->derived,
                              2 * 256.0 * 512 * 128,
                              229376.0,
                              146.28571428571428,
                              0.0334,
                              228.9,
                              1979e12 * 1.0 / 3.0,
                              0.005,
                              3350.25,
                              68.469,
                              0.0299,
                              "memory"};
  assert_int_equal(mb__result_add_note(r, "algo_id", NULL, 21.0), MB_OK);
  assert_int_equal(mb__result_add_note(r, "math", "fp8 fast accum", 0), MB_OK);
  mb__result_set_timer(r, "CUDA events around 16 runs");
  mb__result_warn(r, "power throttling in 1 sample");
  mb__result_warn(r,
                  "clock \"boost\" unstable\n\tsee nvidia-smi -q \xe2\x9c\x93");
  mb__result_plan_t plan = {"fp8 linear 256", "float8dq-row", "linear",
                            "inference",      "llama-8b-up",  NULL};
  plan.config = cJSON_Parse(
      "{\"shape\":[256,512,128],\"recipe\":{\"name\":\"float8dq-row\","
      "\"granularity\":\"row\"},\"flags\":[true,null,1.5]}");
  assert_non_null(plan.config);
  assert_int_equal(mb__result_set_plan(r, &plan), MB_OK);
  r->info.speedup_vs_baseline = 1.7321;
  return r;
}

static void test_hand_built(void **state) {
  (void)state;
  mb_result_t *r = hand_built();
  const char *json = mb_result_json(r);
  /* What the test relies on is in the JSON it reads. */
  assert_contains(json, "\"repetitions\":[");
  assert_contains(json, "\"sample_flags\":[0,0,0,1,0,0,2,0]");
  assert_contains(json, "\"sm_clock_mhz\":[null,");
  assert_contains(json, "\"seed\":999999999999999,");
  mb_result_t *q = NULL;
  assert_int_equal(mb_result_from_json(json, &q), MB_OK);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(q, &info);
  assert_true(info.seed == 999999999999999u);
  assert_string_equal(info.alias, "gemm_fp8");
  assert_string_equal(info.device, "NVIDIA H100 80GB HBM3");
  assert_int_equal(info.device_index, 1);
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  mb_result_correctness(q, &c);
  assert_true(isinf(c.sqnr_db)); /* null is "no error at all" */
  assert_true(isinf(q->timing.timeout_s));
  size_t n;
  const mb_telemetry_t *t = mb_result_telemetry(q, &n);
  assert_int_equal(n, 8);
  assert_true(isnan(t[0].sm_clock_hz) && isnan(t[0].clock_before_hz));
  assert_int_equal(t[6].throttle, MB_THROTTLE_POWER | MB_THROTTLE_THERMAL);
  mb_result_destroy(q);
  roundtrip(r);
}

/* One repetition: the JSON has no repetitions array; it is rebuilt from
 * the samples and the stats' stop reason. A failed result with quotes and
 * a newline in its reason, no telemetry, and a huge seed. */
static void test_hand_built_single_repetition(void **state) {
  (void)state;
  mb_op_params_t p = shape_of(2, (int64_t[]){64, 64});
  assert_int_equal(mb_op_resolve(mb_op_find("softmax"), &p), MB_OK);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.backend = "gpuemu";
  s.seed = 1;
  mb_result_t *r = mb__result_new("softmax", "MxN", &p, &s, NULL);
  assert_non_null(r);
  for (int i = 0; i < 5; i++)
    assert_int_equal(mb__result_add_sample(r, 100.0 + i * 0.1), MB_OK);
  assert_int_equal(mb__result_add_repetition(r, 0, "plateau"), MB_OK);
  assert_int_equal(mb__stats_compute(r->samples, r->num_samples, &r->stats),
                   MB_OK);
  r->stats.stop_reason = "plateau";
  r->stats.repetitions = 1;
  mb__result_set_status(r, MB_RESULT_FAILED,
                        "kernel \"softmax_v2\" said:\n\terror 700 (\\x)");
  roundtrip(r);
}

/* ---- malformed input -------------------------------------------------------
 */

/* The hand-built result's JSON with one value replaced (NULL: removed).
 * `path` is "key", "block.key" or "array[i]". */
static char *edited(const char *path, const char *value) {
  mb_result_t *r = hand_built();
  cJSON *root = cJSON_Parse(mb_result_json(r));
  mb_result_destroy(r);
  assert_non_null(root);
  char block[64] = "", key[64];
  const char *dot = strchr(path, '.'), *bracket = strchr(path, '[');
  cJSON *parent = root;
  if (dot) {
    snprintf(block, sizeof block, "%.*s", (int)(dot - path), path);
    parent = cJSON_GetObjectItemCaseSensitive(root, block);
    snprintf(key, sizeof key, "%s", dot + 1);
  } else {
    snprintf(key, sizeof key, "%s", path);
  }
  assert_non_null(parent);
  cJSON *v = value ? cJSON_Parse(value) : NULL;
  if (value) assert_non_null(v);
  if (bracket && !dot) {
    snprintf(block, sizeof block, "%.*s", (int)(bracket - path), path);
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, block);
    assert_non_null(arr);
    int i = atoi(bracket + 1);
    if (v)
      assert_true(cJSON_ReplaceItemInArray(arr, i, v));
    else
      cJSON_DeleteItemFromArray(arr, i);
  } else if (v) {
    if (!cJSON_ReplaceItemInObjectCaseSensitive(parent, key, v))
      cJSON_AddItemToObject(parent, key, v);
  } else {
    cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
  }
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  assert_non_null(text);
  return text;
}

static void expect_error(const char *json, mb_status_t want,
                         const char *message) {
  mb_result_t *r = (mb_result_t *)(uintptr_t)1; /* must become NULL */
  mb_status_t st = mb_result_from_json(json, &r);
  if (st != want)
    fail_msg("got %s (%s), expected %s for %s", mb_status_name(st),
             mb_error_last(), mb_status_name(want), json ? json : "NULL");
  assert_null(r);
  assert_contains(mb_error_last(), message);
}

static void test_malformed(void **state) {
  (void)state;
  mb_result_t *r = NULL;
  assert_int_equal(mb_result_from_json(NULL, &r), MB_ERR_INVALID_ARG);
  assert_int_equal(mb_result_from_json("{}", NULL), MB_ERR_INVALID_ARG);
  expect_error("not json", MB_ERR_PARSE, "not valid JSON at offset 0");
  expect_error("{\"op\":\"gemm\"} trailing", MB_ERR_PARSE, "not valid JSON");
  expect_error("[1,2]", MB_ERR_PARSE, "expected an object, got an array");
  expect_error("{}", MB_ERR_PARSE, "result JSON: op: missing");
  static const struct {
    const char *path, *value, *message;
  } k_cases[] = {
      {"stats.median_ns", "\"fast\"",
       "result JSON: stats.median_ns: expected a number, got a string"},
      {"stats.count", "-3", "stats.count: expected an integer in 0 .. "},
      {"stats.count", "2.5", "stats.count: expected an integer"},
      {"stats.stop_reason", "\"bored\"",
       "stats.stop_reason: unknown stop reason \"bored\"; valid: converged"},
      {"stats", "[]", "result JSON: stats: expected an object, got an array"},
      {"op", "\"gemmm\"", "result JSON: op: "},
      {"op", "7", "result JSON: op: expected a string, got a number"},
      {"dtypes.a", "\"f99\"", "result JSON: dtypes.a: unknown dtype \"f99\""},
      {"dtypes", NULL, "result JSON: dtypes: missing"},
      {"shape.K", NULL, "result JSON: shape.K: missing"},
      {"shape.M", "-1", "result JSON: shape.M: expected an integer"},
      {"params.scale_b", "{\"mode\":\"diagonal\"}",
       "params.scale_b.mode: unknown scaling mode \"diagonal\""},
      {"params.scale_b", "{\"mode\":\"block\",\"block\":[128]}",
       "params.scale_b.block: expected 2 numbers, got 1"},
      {"params.alpha", "true", "params.alpha: expected a number"},
      {"cache", "\"lukewarm\"",
       "result JSON: cache: cache policy \"lukewarm\""},
      {"status", "\"meh\"", "result JSON: status: unknown status \"meh\""},
      {"emulated", "1", "result JSON: emulated: expected true or false"},
      {"seed", "\"42\"", "result JSON: seed: expected an integer"},
      {"timing.criterion", "\"vibes\"",
       "timing.criterion: criterion \"vibes\"; valid: stdrel, fixed, entropy"},
      {"correctness.pass", NULL, "result JSON: correctness.pass: missing"},
      {"samples_ns[1]", "\"x\"", "samples_ns[1]: expected a number"},
      {"samples_ns[7]", NULL, "sample_flags: 8 entries for 7 samples"},
      {"sample_flags[2]", "300", "sample_flags[2]: 300 is not a set"},
      {"telemetry.power_w", "[1,2]",
       "telemetry.power_w: 2 entries; telemetry.throttle has 8"},
      {"telemetry.temp_c", "[1,2,3,4,5,6,7,\"hot\"]",
       "telemetry.temp_c[7]: expected a number, got a string"},
      {"kernel.algo_id", "[21]",
       "kernel.algo_id: expected a string or a number, got an array"},
      {"repetitions[1]",
       "{\"first_sample\":4,\"count\":9,\"median_ns\":1,"
       "\"mean_ns\":1,\"stdev_ns\":0,\"stop_reason\":\"\"}",
       "repetitions[1]: samples 4 .. 13 are beyond samples_ns (8 samples)"},
      {"repetitions[0]", "3", "repetitions[0]: expected an object"},
      {"warning", "false", "result JSON: warning: expected a string"},
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    char *json = edited(k_cases[i].path, k_cases[i].value);
    expect_error(json, MB_ERR_PARSE, k_cases[i].message);
    free(json);
  }
}

/* Blocks a writer may leave out: the result still reads, with defaults. */
static void test_optional_blocks(void **state) {
  (void)state;
  static const char *const k_paths[] = {
      "telemetry", "sample_flags",     "kernel",
      "config",    "warning",          "timer",
      "rotate",    "stats.interfered", "telemetry.clock_before_mhz"};
  for (size_t i = 0; i < sizeof k_paths / sizeof *k_paths; i++) {
    char *json = edited(k_paths[i], NULL);
    mb_result_t *r = NULL;
    if (mb_result_from_json(json, &r) != MB_OK)
      fail_msg("without %s: %s", k_paths[i], mb_error_last());
    mb_result_destroy(r);
    free(json);
  }
  char *json = edited("telemetry", NULL);
  mb_result_t *r = NULL;
  assert_int_equal(mb_result_from_json(json, &r), MB_OK);
  size_t n;
  assert_null(mb_result_telemetry(r, &n));
  assert_int_equal(n, 0);
  mb_stats_t s = MB_STATS_INIT;
  mb_result_stats(r, &s);
  assert_true(s.throttled == 0);
  mb_result_destroy(r);
  free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gemm_bf16_with_notes),
      cmocka_unit_test(test_cold_add),
      cmocka_unit_test(test_rotate_copy),
      cmocka_unit_test(test_quantize_block_scaling),
      cmocka_unit_test(test_attention_causal),
      cmocka_unit_test(test_attention_gqa),
      cmocka_unit_test(test_op_parameters),
      cmocka_unit_test(test_skipped),
      cmocka_unit_test(test_placement),
      cmocka_unit_test(test_fast_accum),
      cmocka_unit_test(test_failed),
      cmocka_unit_test(test_repetitions),
      cmocka_unit_test(test_hand_built),
      cmocka_unit_test(test_hand_built_single_repetition),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_optional_blocks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
