/* The native config schema through the public plan API: sweeps (count,
 * order, names), defaults, presets, models, the options' passes, the
 * message every bad file gets, the shipped examples, and one entry run end
 * to end on the cpu backend. */
#include <dirent.h>

#include "test_util.h"

#define FIXTURE(name) MB_TEST_CONFIG_DIR "/native/" name
#define EXAMPLES MB_TEST_SOURCE_DIR "/examples/configs"

static mb_plan_t *parse_opts(const char *text, const char *name,
                             const mb_plan_options_t *opts) {
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(text, strlen(text), name, opts, &plan) != MB_OK)
    fail_msg("%s: %s", name, mb_error_last());
  assert_string_equal(mb_plan_schema(plan), "native");
  return plan;
}

static mb_plan_t *parse(const char *text) {
  return parse_opts(text, "t.yaml", NULL);
}

static mb_plan_entry_t entry(const mb_plan_t *plan, size_t i) {
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  assert_int_equal(mb_plan_entry(plan, i, &e), MB_OK);
  return e;
}

static void assert_unique_names(const mb_plan_t *plan) {
  size_t n = mb_plan_count(plan);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (!strcmp(entry(plan, i).name, entry(plan, j).name))
        fail_msg("entries %zu and %zu are both \"%s\"", i, j,
                 entry(plan, i).name);
}

/* ---- sweeps ------------------------------------------------------------ */

/* 2 ops x 3 shapes x 2 dtypes x 2 caches, the last varying fastest. */
static void check_sweep(const mb_plan_t *plan) {
  static const char *const ops[] = {"gemm", "matmul"};
  static const int64_t shapes[3][3] = {
      {64, 64, 64}, {32, 64, 16}, {128, 16, 16}};
  static const char *const shape_names[] = {"64x64x64", "32x64x16", "tall"};
  static const mb_dtype_t dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
  static const mb_cache_policy_t caches[] = {MB_CACHE_COLD, MB_CACHE_HOT};
  assert_int_equal(mb_plan_count(plan), 24);
  size_t i = 0;
  for (size_t o = 0; o < 2; o++)
    for (size_t s = 0; s < 3; s++)
      for (size_t d = 0; d < 2; d++)
        for (size_t c = 0; c < 2; c++, i++) {
          mb_plan_entry_t e = entry(plan, i);
          char want[128];
          snprintf(want, sizeof want, "mix/%s/%s/%s/%s", ops[o], shape_names[s],
                   mb_dtype_name(dtypes[d]), mb_cache_policy_name(caches[c]));
          assert_string_equal(e.name, want);
          assert_string_equal(e.op, ops[o]);
          assert_string_equal(e.group, "mix");
          assert_string_equal(e.shape_name, s == 2 ? "tall" : "");
          assert_int_equal(e.params.ndim, 3);
          assert_memory_equal(e.params.shape, shapes[s], sizeof shapes[s]);
          assert_int_equal(e.params.dtype, dtypes[d]);
          assert_int_equal(e.spec.cache, caches[c]);
          assert_int_equal(e.spec.seed, 7);
          assert_int_equal(e.spec.criterion, MB_CRITERION_FIXED);
          assert_int_equal(e.spec.samples, 3);
          assert_int_equal(e.spec.warmup_runs, 2);
          assert_string_equal(e.spec.op, ops[o]);
          assert_non_null(e.spec.params);
          assert_int_equal(e.spec.params->dtype, dtypes[d]);
          assert_true(e.flop == 2.0 * (double)shapes[s][0] *
                                    (double)shapes[s][1] *
                                    (double)shapes[s][2]);
          assert_int_equal(e.baseline, SIZE_MAX);
        }
  assert_unique_names(plan);
}

static void test_sweep_count_and_order(void **state) {
  (void)state;
  mb_plan_t *plan = NULL;
  if (mb_plan_load(FIXTURE("sweep.yaml"), NULL, &plan) != MB_OK)
    fail_msg("%s", mb_error_last());
  check_sweep(plan);
  mb_plan_destroy(plan);
}

/* Same document, other syntax: same plan, field for field. */
static void test_json_same_as_yaml(void **state) {
  (void)state;
  mb_plan_t *y = NULL, *j = NULL;
  assert_int_equal(mb_plan_load(FIXTURE("sweep.yaml"), NULL, &y), MB_OK);
  assert_int_equal(mb_plan_load(FIXTURE("sweep.json"), NULL, &j), MB_OK);
  check_sweep(j);
  assert_int_equal(mb_plan_count(y), mb_plan_count(j));
  for (size_t i = 0; i < mb_plan_count(y); i++) {
    mb_plan_entry_t a = entry(y, i), b = entry(j, i);
    assert_string_equal(a.name, b.name);
    assert_string_equal(a.group, b.group);
    assert_string_equal(a.op, b.op);
    assert_string_equal(a.shape_name, b.shape_name);
    assert_memory_equal(&a.params, &b.params, sizeof a.params);
    assert_int_equal(a.spec.cache, b.spec.cache);
    assert_int_equal(a.spec.criterion, b.spec.criterion);
    assert_int_equal(a.spec.samples, b.spec.samples);
    assert_int_equal(a.spec.seed, b.spec.seed);
    assert_true(a.spec.min_time_s == b.spec.min_time_s);
  }
  mb_plan_destroy(y);
  mb_plan_destroy(j);
}

/* Without a name each op names its own entries and group; a field with
 * one value stays out of the name, one with several gets key=value. */
static void test_names(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "benchmarks:\n"
      "  - ops: [quantize, transpose_quantization]\n"
      "    shapes: [\"64x128\"]\n"
      "    cache: hot\n"
      "    static_scale: [0.5, 2]\n"
      "    dtype_out: f8e4m3\n");
  assert_int_equal(mb_plan_count(plan), 4);
  static const char *const want[] = {
      "quantize/64x128/bf16/static_scale=0.5",
      "quantize/64x128/bf16/static_scale=2",
      "transpose_quantization/64x128/bf16/static_scale=0.5",
      "transpose_quantization/64x128/bf16/static_scale=2"};
  for (size_t i = 0; i < 4; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name, want[i]);
    assert_string_equal(e.group, i < 2 ? "quantize" : "transpose_quantization");
    assert_true(e.params.flags & MB_PARAM_STATIC);
    assert_true(e.params.scale == (i % 2 ? 2.0 : 0.5));
    assert_int_equal(e.params.dtype_out, MB_DTYPE_F8E4M3);
    assert_int_equal(e.params.dtype, MB_DTYPE_NONE); /* as written */
    assert_int_equal(e.spec.cache, MB_CACHE_HOT);
  }
  mb_plan_destroy(plan);
}

/* fast_accum: a swept boolean like tf32, for fp8 gemms and quantize-inputs
 * to fp8 (the gemm_fp8_rowwise alias). */
static void test_fast_accum(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "benchmarks:\n"
      "  - op: gemm\n"
      "    shapes: [[32, 32, 32]]\n"
      "    dtype: f8e4m3\n"
      "    scale_a: row\n"
      "    scale_b: col\n"
      "    fast_accum: [false, true]\n"
      "  - op: gemm_fp8_rowwise\n"
      "    shapes: [[32, 32, 32]]\n"
      "    fast_accum: true\n");
  assert_int_equal(mb_plan_count(plan), 3);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "gemm/32x32x32/f8e4m3/fast_accum=false");
  assert_false(e.params.flags & MB_PARAM_FAST_ACCUM);
  e = entry(plan, 1);
  assert_string_equal(e.name, "gemm/32x32x32/f8e4m3/fast_accum=true");
  assert_true(e.params.flags & MB_PARAM_FAST_ACCUM);
  e = entry(plan, 2);
  assert_true(e.params.flags & MB_PARAM_FAST_ACCUM);
  mb_plan_destroy(plan);
}

/* flush: how cold samples flush, a spec flag; swept, and named with its
 * key (write/read alone would not say what they are). */
static void test_flush(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "benchmarks:\n"
      "  - op: add\n"
      "    shapes: [[8, 64]]\n"
      "    flush: [write, read]\n");
  assert_int_equal(mb_plan_count(plan), 2);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "add/8x64/f32/flush=write");
  assert_false(e.spec.flags & MB_BENCH_FLUSH_READ);
  e = entry(plan, 1);
  assert_string_equal(e.name, "add/8x64/f32/flush=read");
  assert_true(e.spec.flags & MB_BENCH_FLUSH_READ);
  mb_plan_destroy(plan);
}

/* kv_heads: attention's K/V heads, a swept count named key=value; one
 * that does not divide H is refused with the op's message, as is a
 * count that is not a positive integer. */
static void test_kv_heads(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "benchmarks:\n"
      "  - op: attention\n"
      "    shapes: [[1, 8, 16, 16, 8]]\n"
      "    kv_heads: [1, 2, 8]\n");
  assert_int_equal(mb_plan_count(plan), 3);
  static const char *const want[] = {"attention/1x8x16x16x8/f32/kv_heads=1",
                                     "attention/1x8x16x16x8/f32/kv_heads=2",
                                     "attention/1x8x16x16x8/f32/kv_heads=8"};
  static const int64_t heads[] = {1, 2, 8};
  for (size_t i = 0; i < 3; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name, want[i]);
    assert_int_equal(e.params.kv_heads, heads[i]);
  }
  mb_plan_destroy(plan);
  static const char *const k_bad[][2] = {
      {"kv_heads: 3", "H = 8 query heads is not a multiple of kv_heads = 3"},
      {"kv_heads: 0", "kv_heads"},
      {"kv_heads: 2.5", "kv_heads"},
  };
  for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++) {
    char doc[256];
    snprintf(doc, sizeof doc,
             "benchmarks:\n  - op: attention\n    shapes: [[1, 8, 16, 16, "
             "8]]\n    %s\n",
             k_bad[i][0]);
    mb_plan_t *bad = NULL;
    assert_int_equal(mb_plan_parse(doc, strlen(doc), "t.yaml", NULL, &bad),
                     MB_ERR_PARSE);
    assert_contains(mb_error_last(), k_bad[i][1]);
  }
}

/* Booleans become MB_PARAM_* flags, numbers their fields. */
static void test_flags_and_numbers(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "benchmarks:\n"
      "  - op: gemm\n"
      "    shapes: [[32, 32, 32]]\n"
      "    dtype: f32\n"
      "    tf32: [false, true]\n"
      "    alpha: 0.5\n"
      "    beta: 1\n"
      "  - op: layernorm\n"
      "    shapes: [[8, 64]]\n"
      "    no_affine: true\n"
      "    eps: 1e-6\n"
      "  - op: attention\n"
      "    shapes: [[1, 2, 16, 16, 8]]\n"
      "    causal: true\n"
      "  - op: activation\n"
      "    shapes: [[8, 8]]\n"
      "    activation: [silu, leakyrelu]\n"
      "    act_alpha: 0.2\n"
      "  - op: gemm\n"
      "    shapes: [[32, 32, 32]]\n"
      "    dtype: bf16\n"
      "    dtype_q: f8e4m3\n"
      "    quantize_inputs: true\n"
      "    scale_a: row\n"
      "    scale_b: col\n"
      "    device: 1\n"
      "    strict: true\n"
      "    csv: out/gemm.csv\n"
      "    backend: cpu\n"
      "    impl: naive\n");
  assert_int_equal(mb_plan_count(plan), 7);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "gemm/32x32x32/f32/tf32=false");
  assert_false(e.params.flags & MB_PARAM_TF32);
  assert_true(e.params.alpha == 0.5 && e.params.beta == 1.0);
  e = entry(plan, 1);
  assert_string_equal(e.name, "gemm/32x32x32/f32/tf32=true");
  assert_true(e.params.flags & MB_PARAM_TF32);
  e = entry(plan, 2);
  assert_true(e.params.flags & MB_PARAM_NO_WEIGHT);
  assert_true(e.params.eps == 1e-6);
  e = entry(plan, 3);
  assert_true(e.params.flags & MB_PARAM_CAUSAL);
  assert_int_equal(e.params.ndim, 5);
  e = entry(plan, 4);
  assert_string_equal(e.name, "activation/8x8/f32/silu");
  assert_int_equal(e.params.activation, MB_ACT_SILU);
  e = entry(plan, 5);
  assert_string_equal(e.name, "activation/8x8/f32/leakyrelu");
  assert_int_equal(e.params.activation, MB_ACT_LEAKYRELU);
  assert_true(e.params.act_alpha == 0.2);
  e = entry(plan, 6);
  assert_true(e.params.flags & MB_PARAM_QUANTIZE_INPUTS);
  assert_int_equal(e.params.dtype_q, MB_DTYPE_F8E4M3);
  assert_int_equal(e.params.scale_a.mode, MB_SCALE_ROW);
  assert_int_equal(e.params.scale_b.mode, MB_SCALE_COL);
  assert_int_equal(e.spec.device, 1);
  assert_true(e.spec.flags & MB_BENCH_STRICT);
  assert_string_equal(e.csv_path, "out/gemm.csv");
  assert_string_equal(e.spec.backend, "cpu");
  assert_string_equal(e.spec.impl, "naive");
  mb_plan_destroy(plan);
}

/* A benchmark's own key replaces the default's; op/model and
 * shapes/presets replace each other as a whole. */
static void test_defaults_merged(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "defaults:\n"
      "  op: gemm\n"
      "  presets: pow2\n"
      "  dtypes: [f32, bf16]\n"
      "  cache: hot\n"
      "  timing: {samples: 4}\n"
      "benchmarks:\n"
      "  - shapes: [[16, 16, 16]]\n"
      "  - op: add\n"
      "    shapes: [[8, 8]]\n"
      "    dtype: f16\n"
      "    timing: {min_samples: 5}\n"
      "  - model: linear\n"
      "    shapes: [[16, 16, 16]]\n");
  /* 2 (shapes replace the default presets) + 1 + 2 */
  assert_int_equal(mb_plan_count(plan), 5);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "gemm/16x16x16/f32");
  assert_int_equal(e.spec.cache, MB_CACHE_HOT);
  assert_int_equal(e.spec.criterion, MB_CRITERION_FIXED);
  assert_int_equal(e.spec.samples, 4);
  assert_string_equal(entry(plan, 1).name, "gemm/16x16x16/bf16");
  e = entry(plan, 2);
  assert_string_equal(e.name, "add/8x8/f16");
  assert_int_equal(e.params.dtype, MB_DTYPE_F16);
  assert_int_equal(e.spec.cache, MB_CACHE_HOT);
  assert_int_equal(e.spec.criterion, MB_CRITERION_STDREL);
  assert_int_equal(e.spec.min_samples, 5);
  e = entry(plan, 3);
  assert_string_equal(e.op, "linear");
  assert_string_equal(e.model, "linear");
  assert_string_equal(e.name, "linear/16x16x16/f32");
  mb_plan_destroy(plan);
}

/* ---- presets ----------------------------------------------------------- */

static size_t count_of(const char *text) {
  mb_plan_t *plan = parse(text);
  size_t n = mb_plan_count(plan);
  assert_unique_names(plan);
  mb_plan_destroy(plan);
  return n;
}

static void test_presets(void **state) {
  (void)state;
  assert_int_equal(count_of("benchmarks: [{op: gemm, presets: pow2}]"), 5);
  assert_int_equal(count_of("benchmarks: [{op: gemm, preset: small_sweep}]"),
                   35);
  assert_int_equal(
      count_of("benchmarks: [{op: gemm, presets: {name: pow2, min_power: 8, "
               "max_power: 9}}]"),
      2);
  assert_int_equal(
      count_of("benchmarks: [{op: gemm, presets: [{name: llama4, m_values: "
               "[64]}, pow2], shapes: [[4, 4, 4]]}]"),
      1 + 3 + 5);
  mb_plan_t *plan = parse("benchmarks: [{op: gemm, presets: llama}]");
  static const struct {
    const char *name;
    int64_t mkn[3];
  } k_llama[] = {{"attn.wqkv", {16384, 8192, 1280}},
                 {"attn.w0", {16384, 1024, 8192}},
                 {"ffn.w13", {16384, 8192, 7168}},
                 {"ffn.w2", {16384, 3584, 8192}}};
  assert_int_equal(mb_plan_count(plan), 4);
  for (size_t i = 0; i < 4; i++) {
    mb_plan_entry_t e = entry(plan, i);
    char want[64];
    snprintf(want, sizeof want, "gemm/%s/f32", k_llama[i].name);
    assert_string_equal(e.name, want);
    assert_string_equal(e.shape_name, k_llama[i].name);
    assert_memory_equal(e.params.shape, k_llama[i].mkn, sizeof k_llama[i].mkn);
  }
  mb_plan_destroy(plan);
}

/* ---- models ------------------------------------------------------------ */

static void test_model_linear(void **state) {
  (void)state;
  mb_plan_t *plan = parse(
      "benchmarks:\n"
      "  - name: lin\n"
      "    model: linear\n"
      "    recipes: [baseline]\n"
      "    mode: inference\n"
      "    shapes: [{name: small, shape: [64, 32, 16]}]\n"
      "    backends: [cpu, other]\n");
  assert_int_equal(mb_plan_count(plan), 2);
  for (size_t i = 0; i < 2; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name,
                        i ? "lin/small/bf16/other" : "lin/small/bf16/cpu");
    assert_string_equal(e.op, "linear");
    assert_string_equal(e.model, "linear");
    assert_string_equal(e.recipe, "baseline");
    assert_string_equal(e.mode, "inference");
    assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
    assert_int_equal(e.params.recipe, MB_RECIPE_BASELINE);
    assert_string_equal(e.skip_reason, "");
    int64_t mkn[3] = {64, 32, 16};
    assert_memory_equal(e.params.shape, mkn, sizeof mkn);
    /* Baselines are their own reference: no baseline entry to point at. */
    assert_int_equal(e.baseline, SIZE_MAX);
  }
  mb_plan_destroy(plan);
}

/* Every model, recipe and mode is built: a model runs as its composite op
 * with the recipe in params.recipe, each recipe linked to the baseline of
 * its model, shape and mode; what the library cannot build (a weight-only
 * recipe in training, a model without a training graph) is kept as a
 * skipped entry with the reason, on any backend. */
static void test_model_recipes_and_modes(void **state) {
  (void)state;
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.backend = "cpu"; /* lifts device skips, not these */
  mb_plan_t *plan = parse_opts(
      "benchmarks:\n"
      "  - name: train\n"
      "    model: linear\n"
      "    recipes: [int8dq, int8wo]\n"
      "    mode: training\n"
      "    shapes: [[64, 128, 64]]\n"
      "  - name: ln\n"
      "    model: ln_linear_silu\n"
      "    recipe: float8dq-row\n"
      "    shapes: [[64, 128, 64]]\n"
      "  - name: ln_train\n"
      "    model: ln_linear_silu\n"
      "    mode: training\n"
      "    shapes: [[64, 128, 64]]\n"
      "  - op: linear\n"
      "    recipes: [int4wo-32]\n"
      "    shapes: [[64, 128, 64]]\n",
      "t.yaml", &o);
  assert_int_equal(mb_plan_count(plan), 3 + 2 + 1 + 1);
  static const struct {
    const char *name, *op, *recipe, *mode;
    uint32_t recipe_value;
    size_t baseline;
    const char *skip; /* NULL: runs */
  } k_want[] = {
      {"train/64x128x64/bf16/baseline", "linear_training", "baseline",
       "training", MB_RECIPE_BASELINE, SIZE_MAX, NULL},
      {"train/64x128x64/bf16/int8dq", "linear_training", "int8dq", "training",
       MB_RECIPE_INT8DQ, 0, NULL},
      {"train/64x128x64/bf16/int8wo", "linear_training", "int8wo", "training",
       MB_RECIPE_INT8WO, 0, "recipe \"int8wo\" is weight-only"},
      {"ln/64x128x64/bf16/baseline", "ln_linear", "baseline", "inference",
       MB_RECIPE_BASELINE, SIZE_MAX, NULL},
      {"ln/64x128x64/bf16/float8dq-row", "ln_linear", "float8dq-row",
       "inference", MB_RECIPE_FLOAT8DQ_ROW, 3, NULL},
      {"ln_train/64x128x64/bf16", "ln_linear", "baseline", "training",
       MB_RECIPE_BASELINE, SIZE_MAX,
       "model \"ln_linear_silu\" has no training graph"},
      {"linear/64x128x64/bf16", "linear", "int4wo-32", "", MB_RECIPE_INT4WO_32,
       SIZE_MAX, NULL},
  };
  for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name, k_want[i].name);
    assert_string_equal(e.op, k_want[i].op);
    assert_string_equal(e.recipe, k_want[i].recipe);
    assert_string_equal(e.mode, k_want[i].mode);
    assert_int_equal(e.params.recipe, k_want[i].recipe_value);
    assert_int_equal(e.baseline, k_want[i].baseline);
    assert_string_equal(e.spec.backend, "cpu");
    if (k_want[i].skip)
      assert_contains(e.skip_reason, k_want[i].skip);
    else
      assert_string_equal(e.skip_reason, "");
    if (!strcmp(e.op, "ln_linear"))
      assert_int_equal(e.params.activation, MB_ACT_SILU);
  }
  mb_plan_destroy(plan);
}

/* ---- the options' passes ----------------------------------------------- */

static const char k_small[] =
    "benchmarks:\n"
    "  - op: gemm\n"
    "    shapes: [[64, 64, 64], [256, 256, 256]]\n"
    "    dtypes: [f32, bf16]\n"
    "    backends: [cuda, cpu]\n";

static void test_backend_override(void **state) {
  (void)state;
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.backend = "cpu";
  mb_plan_t *plan = parse_opts(k_small, "t.yaml", &o);
  assert_int_equal(mb_plan_count(plan), 8);
  for (size_t i = 0; i < 8; i++)
    assert_string_equal(entry(plan, i).spec.backend, "cpu");
  /* The file's choice still names the entries. */
  assert_string_equal(entry(plan, 0).name, "gemm/64x64x64/f32/cuda");
  int noted = 0;
  for (size_t i = 0; i < mb_plan_note_count(plan); i++)
    noted |= strstr(mb_plan_note(plan, i), "--backend cpu") != NULL;
  assert_true(noted);
  mb_plan_destroy(plan);
}

static void test_filter_and_max_flop(void **state) {
  (void)state;
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.filter = "/bf16/cpu$";
  mb_plan_t *plan = parse_opts(k_small, "t.yaml", &o);
  assert_int_equal(mb_plan_count(plan), 2);
  assert_string_equal(entry(plan, 0).name, "gemm/64x64x64/bf16/cpu");
  assert_string_equal(entry(plan, 1).name, "gemm/256x256x256/bf16/cpu");
  mb_plan_destroy(plan);

  o = (mb_plan_options_t)MB_PLAN_OPTIONS_INIT;
  o.max_flop = 1e6; /* 64^3 is 524288 FLOP; 256^3 far more */
  plan = parse_opts(k_small, "t.yaml", &o);
  assert_int_equal(mb_plan_count(plan), 4);
  for (size_t i = 0; i < 4; i++) assert_true(entry(plan, i).flop <= 1e6);
  mb_plan_destroy(plan);
}

/* The caller's timing (mbench run --config's timing options, Python's
 * run_config keywords) reaches every entry's spec, field by field: what
 * timing_fields does not name stays the file's. */
static void test_timing_override(void **state) {
  (void)state;
  static const char text[] =
      "benchmarks:\n"
      "  - op: gemm\n"
      "    shapes: [[64, 64, 64], [128, 128, 128]]\n"
      "    timing: {min_samples: 20, max_noise: 0.01, repetitions: 2}\n";
  mb_bench_spec_t t = MB_BENCH_SPEC_INIT;
  t.criterion = MB_CRITERION_FIXED;
  t.samples = 3;
  t.min_time_s = 0.25;
  t.warmup_runs = 7;
  t.max_noise = 0.5; /* not named: the file's 0.01 stays */
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.timing = &t;
  o.timing_fields = MB_TIMING_CRITERION | MB_TIMING_SAMPLES |
                    MB_TIMING_MIN_TIME | MB_TIMING_WARMUP_RUNS;
  mb_plan_t *plan = parse_opts(text, "t.yaml", &o);
  assert_int_equal(mb_plan_count(plan), 2);
  for (size_t i = 0; i < 2; i++) {
    const mb_bench_spec_t s = entry(plan, i).spec;
    assert_int_equal(s.criterion, MB_CRITERION_FIXED);
    assert_int_equal(s.samples, 3);
    assert_true(s.min_time_s == 0.25);
    assert_int_equal(s.warmup_runs, 7);
    assert_int_equal(s.min_samples, 20);
    assert_true(s.max_noise == 0.01);
    assert_int_equal(s.repetitions, 2);
  }
  mb_plan_destroy(plan);

  /* Every field it names, and none without a spec to take them from. */
  o.timing_fields = MB_TIMING_CRITERION | MB_TIMING_SAMPLES |
                    MB_TIMING_MIN_SAMPLES | MB_TIMING_MIN_TIME |
                    MB_TIMING_MAX_NOISE | MB_TIMING_TIMEOUT | MB_TIMING_WARMUP |
                    MB_TIMING_WARMUP_RUNS | MB_TIMING_REPETITIONS;
  t.min_samples = 4;
  t.timeout_s = 3;
  t.warmup_s = 0.5;
  t.repetitions = 5;
  plan = parse_opts(text, "t.yaml", &o);
  mb_bench_spec_t s = entry(plan, 1).spec;
  assert_int_equal(s.min_samples, 4);
  assert_true(s.max_noise == 0.5);
  assert_true(s.timeout_s == 3);
  assert_true(s.warmup_s == 0.5);
  assert_int_equal(s.repetitions, 5);
  mb_plan_destroy(plan);
  o.timing = NULL;
  plan = parse_opts(text, "t.yaml", &o);
  assert_int_equal(entry(plan, 0).spec.min_samples, 20);
  mb_plan_destroy(plan);

  o.timing = &t;
  o.timing_fields = 1u << 20;
  plan = NULL;
  assert_int_equal(mb_plan_parse(text, strlen(text), "t.yaml", &o, &plan),
                   MB_ERR_INVALID_ARG);
  assert_null(plan);
  assert_non_null(strstr(mb_error_last(), "MB_TIMING_"));
}

/* ---- errors ------------------------------------------------------------ */

typedef struct bad_case {
  const char *what, *text;
  const char *needles[5]; /* each must appear in the message */
} bad_case_t;

static const bad_case_t k_bad[] = {
    {"unknown top-level key",
     "benchmark: [{op: gemm}]\n",
     {"t.yaml:1: benchmark: unknown key \"benchmark\"",
      "valid: benchmarks, defaults, description"}},
    {"missing benchmarks",
     "description: nothing\n",
     {"t.yaml:1:", "missing `benchmarks`"}},
    {"unknown benchmark key",
     "benchmarks:\n  - op: gemm\n    shape: [[1, 1, 1]]\n",
     {"t.yaml:3: benchmarks[0].shape: unknown key \"shape\"", "valid: name",
      "shapes", "presets", "dtypes"}},
    {"name in defaults",
     "defaults:\n  name: x\nbenchmarks: [{op: gemm, shapes: [[1, 1, 1]]}]\n",
     {"t.yaml:2: defaults.name: unknown key \"name\"", "valid: op"}},
    {"unknown op",
     "benchmarks:\n  - op: gemmm\n    shapes: [[1, 1, 1]]\n",
     {"t.yaml:2: benchmarks[0].op:", "unknown op \"gemmm\"",
      "valid ops:", "gemm"}},
    {"unknown op in a list",
     "benchmarks:\n  - ops: [gemm, nope]\n    shapes: [[1, 1, 1]]\n",
     {"t.yaml:2: benchmarks[0].ops[1]:", "unknown op \"nope\""}},
    {"unknown dtype",
     "benchmarks:\n  - op: gemm\n    shapes: [[1, 1, 1]]\n"
     "    dtypes: [bf16, float99]\n",
     {"t.yaml:4: benchmarks[0].dtypes[1]:", "unknown dtype \"float99\"",
      "valid dtypes: f32"}},
    {"dtype the op does not take",
     "benchmarks:\n  - op: add\n    shapes: [[4, 4]]\n    dtype: i4\n",
     {"t.yaml:2: benchmarks[0]: add:", "i4"}},
    {"unknown preset",
     "benchmarks:\n  - op: gemm\n    presets: [pow2, pow3]\n",
     {"t.yaml:3: benchmarks[0].presets[1]:", "unknown shape preset \"pow3\"",
      "valid:", "small_sweep"}},
    {"custom is not a preset",
     "benchmarks:\n  - op: gemm\n    presets: custom\n",
     {"t.yaml:3: benchmarks[0].presets:", "\"custom\"", "shapes"}},
    {"preset power out of range",
     "benchmarks:\n  - op: gemm\n    presets: {name: pow2, max_power: 40}\n",
     {"t.yaml:3: benchmarks[0].presets.max_power:", "40 is out of range",
      "valid: 1 to 30"}},
    {"preset powers reversed",
     "benchmarks:\n  - op: gemm\n    presets:\n"
     "      - {name: pow2, min_power: 12, max_power: 10}\n",
     {"t.yaml:4: benchmarks[0].presets[0]:", "min_power 12, max_power 10",
      "0 <= min_power <= max_power <= 30"}},
    {"preset map without a name",
     "benchmarks:\n  - op: gemm\n    presets: {min_power: 3}\n",
     {"benchmarks[0].presets:", "needs `name`"}},
    {"preset with a rank-2 op",
     "benchmarks:\n  - op: add\n    presets: pow2\n",
     {"t.yaml:3: benchmarks[0].presets:", "[M, K, N]", "op add", "(MxN)"}},
    {"shape of the wrong rank",
     "benchmarks:\n  - ops: [gemm, add]\n    shapes:\n      - [8, 8, 8]\n",
     {"t.yaml:4: benchmarks[0].shapes[0]:", "op add takes 2 dimensions (MxN)",
      "has 3 (8x8x8)"}},
    {"model shape of the wrong rank",
     "benchmarks:\n  - model: linear\n    shapes: [\"8x8\"]\n",
     {"benchmarks[0].shapes[0]:", "model linear takes 3 dimensions (MxKxN)"}},
    {"bad shape text",
     "benchmarks:\n  - op: gemm\n    shapes: [\"8x0x8\"]\n",
     {"t.yaml:3: benchmarks[0].shapes[0]:", "shape \"8x0x8\": a dimension is 0",
      "joined by x"}},
    {"negative dimension",
     "benchmarks:\n  - op: gemm\n    shapes:\n      - [8, -1, 8]\n",
     {"t.yaml:4: benchmarks[0].shapes[0][1]:", "-1 is out of range"}},
    {"flat list for one shape",
     "benchmarks:\n  - op: gemm\n    shapes: [8, 8, 8]\n",
     {"benchmarks[0].shapes[0]:", "got number \"8\"", "[[M, K, N]]"}},
    {"no shapes",
     "benchmarks:\n  - op: gemm\n",
     {"t.yaml:2: benchmarks[0]:", "no shapes", "`shapes`", "`presets`"}},
    {"string where a number is expected",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n    alpha: fast\n",
     {"t.yaml:4: benchmarks[0].alpha:",
      "expected a number, got string "
      "\"fast\""}},
    {"string where a list is expected",
     "benchmarks: gemm\n",
     {"t.yaml:1: benchmarks:", "expected a list of benchmarks",
      "got string \"gemm\""}},
    {"string where a list of shapes is expected",
     "benchmarks:\n  - op: gemm\n    shapes: {a: 1}\n",
     {"benchmarks[0].shapes:", "expected a list of shapes, got a map"}},
    {"bad YAML",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]\n",
     {"t.yaml:", "invalid YAML"}},
    {"both dtype and dtypes",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n    dtype: f32\n"
     "    dtypes: [bf16]\n",
     {"t.yaml:5: benchmarks[0].dtypes:", "both `dtype` and `dtypes`"}},
    {"both op and model",
     "benchmarks:\n  - op: gemm\n    model: linear\n    shapes: [[8, 8, 8]]\n",
     {"t.yaml:3: benchmarks[0].model:", "both `op` and `model`"}},
    {"neither op nor model",
     "benchmarks:\n  - shapes: [[8, 8, 8]]\n",
     {"t.yaml:2: benchmarks[0]:", "`op`", "`model`"}},
    {"unknown model",
     "benchmarks:\n  - model: conv\n    shapes: [[8, 8, 8]]\n",
     {"t.yaml:2: benchmarks[0].model:", "unknown model \"conv\"",
      "valid: linear"}},
    {"unknown recipe",
     "benchmarks:\n  - model: linear\n    shapes: [[8, 8, 8]]\n"
     "    recipes: [baseline, int9]\n",
     {"t.yaml:4: benchmarks[0].recipes[1]:", "unknown recipe \"int9\"",
      "valid: baseline, int8wo"}},
    {"unknown mode",
     "benchmarks:\n  - model: linear\n    shapes: [[8, 8, 8]]\n"
     "    mode: train\n",
     {"t.yaml:4: benchmarks[0].mode:", "unknown benchmark mode \"train\"",
      "valid: inference, training"}},
    {"a dtype the model does not take (not skipped: the file's mistake)",
     "benchmarks:\n  - model: linear\n    shapes: [[8, 8, 8]]\n"
     "    dtype: i8\n    recipe: int8dq\n",
     {"t.yaml:2: benchmarks[0]:", "linear", "i8"}},
    {"recipe with an op that takes none",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    recipe: int8dq\n",
     {"t.yaml:2: benchmarks[0]:", "gemm", "int8dq"}},
    {"op parameter with a model",
     "benchmarks:\n  - model: linear\n    shapes: [[8, 8, 8]]\n"
     "    transpose: true\n",
     {"t.yaml:4: benchmarks[0].transpose:", "applies to `op` benchmarks"}},
    {"fast_accum on a gemm without fp8 operands (resolve's message)",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    dtype: bf16\n    fast_accum: true\n",
     {"t.yaml:2: benchmarks[0]:", "fast_accum applies to fp8 GEMMs only",
      "(got bf16 x bf16)"}},
    {"fast_accum not a boolean",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    dtype: f8e4m3\n    fast_accum: fast\n",
     {"t.yaml:5: benchmarks[0].fast_accum:", "true or false"}},
    {"mode with an op",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n    mode: training\n",
     {"benchmarks[0].mode:", "applies to `model`"}},
    {"unknown cache",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    cache: [hot, warm]\n",
     {"t.yaml:4: benchmarks[0].cache[1]:", "\"warm\"",
      "valid: cold, hot, rotate"}},
    {"unknown scaling",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n    scale_a: rows\n",
     {"t.yaml:4: benchmarks[0].scale_a:", "\"rows\""}},
    {"unknown activation",
     "benchmarks:\n  - op: activation\n    shapes: [[8, 8]]\n"
     "    activation: mish\n",
     {"t.yaml:4: benchmarks[0].activation:", "mish", "relu"}},
    {"empty sweep",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n    dtypes: []\n",
     {"t.yaml:4: benchmarks[0].dtypes:", "empty list"}},
    {"unknown timing key",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    timing: {repeats: 3}\n",
     {"t.yaml:4: benchmarks[0].timing.repeats:", "unknown key",
      "valid: criterion, samples"}},
    {"unknown criterion",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    timing: {criterion: best}\n",
     {"benchmarks[0].timing.criterion:", "\"best\"", "valid: stdrel, fixed"}},
    {"fixed without samples",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    timing: {criterion: fixed}\n",
     {"benchmarks[0].timing.criterion:", "needs `samples`"}},
    {"samples with stdrel",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    timing: {criterion: stdrel, samples: 5}\n",
     {"benchmarks[0].timing.samples:", "criterion fixed"}},
    {"negative time",
     "benchmarks:\n  - op: gemm\n    shapes: [[8, 8, 8]]\n"
     "    timing: {min_time: -1}\n",
     {"benchmarks[0].timing.min_time:", "-1 is out of range", ">= 0"}},
    {"runaway sweep",
     "benchmarks:\n  - op: gemm\n"
     "    presets: {name: sweep, min_power: 1, max_power: 30}\n"
     "    dtypes: [f32, bf16, f16, f8e4m3]\n",
     {"t.yaml:2: benchmarks:", "would expand to 108000 benchmarks",
      "limit of 100000"}},
    {"benchmark not a map",
     "benchmarks: [gemm]\n",
     {"t.yaml:1: benchmarks[0]:", "expected a map"}},
};

static void test_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
    mb_plan_t *plan = (mb_plan_t *)1;
    const bad_case_t *c = &k_bad[i];
    mb_status_t st =
        mb_plan_parse(c->text, strlen(c->text), "t.yaml", NULL, &plan);
    if (st != MB_ERR_PARSE)
      fail_msg("%s: status %d (%s), expected a parse error", c->what, st,
               mb_error_last());
    assert_null(plan);
    for (size_t k = 0; k < 5 && c->needles[k]; k++)
      if (!strstr(mb_error_last(), c->needles[k]))
        fail_msg("%s: \"%s\" does not contain \"%s\"", c->what, mb_error_last(),
                 c->needles[k]);
  }
}

/* Files: the message names the path given and the line. */
static void test_file_errors(void **state) {
  (void)state;
  mb_plan_t *plan = NULL;
  assert_int_equal(mb_plan_load(FIXTURE("bad_dtype.yaml"), NULL, &plan),
                   MB_ERR_PARSE);
  assert_contains(mb_error_last(),
                  FIXTURE("bad_dtype.yaml") ":7: benchmarks[0].dtypes[1]: "
                                            "unknown dtype \"bfloat61\"");
  assert_int_equal(mb_plan_load(FIXTURE("bad_syntax.yaml"), NULL, &plan),
                   MB_ERR_PARSE);
  assert_contains(mb_error_last(), FIXTURE("bad_syntax.yaml") ":4:");
  /* JSON keeps no lines for nodes: the path says where. */
  static const char k_json[] =
      "{\"benchmarks\": [{\"op\": \"gemm\", \"shapes\": [[8, 8, 8]],\n"
      "  \"dtypes\": [\"f32\", \"f33\"]}]}";
  assert_int_equal(mb_plan_parse(k_json, strlen(k_json), "t.json", NULL, &plan),
                   MB_ERR_PARSE);
  assert_contains(mb_error_last(),
                  "t.json: benchmarks[0].dtypes[1]: unknown "
                  "dtype \"f33\"");
}

/* ---- the shipped examples ---------------------------------------------- */

static int is_config(const char *name) {
  size_t n = strlen(name);
  return (n > 5 && !strcmp(name + n - 5, ".yaml")) ||
         (n > 5 && !strcmp(name + n - 5, ".json"));
}

static void test_examples_load(void **state) {
  (void)state;
  DIR *dir = opendir(EXAMPLES);
  if (!dir) fail_msg("cannot open %s", EXAMPLES);
  size_t files = 0;
  for (struct dirent *d; (d = readdir(dir));) {
    if (!is_config(d->d_name)) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", EXAMPLES, d->d_name);
    mb_plan_t *plan = NULL;
    if (mb_plan_load(path, NULL, &plan) != MB_OK)
      fail_msg("%s: %s", path, mb_error_last());
    assert_string_equal(mb_plan_schema(plan), "native");
    assert_true(mb_plan_count(plan) > 0);
    assert_unique_names(plan);
    mb_plan_destroy(plan);
    files++;
  }
  closedir(dir);
  assert_true(files >= 3);
}

/* ---- end to end -------------------------------------------------------- */

static mb_result_t *run_one(mb_context_t *ctx, mb_plan_t *plan, size_t i) {
  mb_result_t *r = NULL;
  if (mb_plan_run(ctx, plan, i, &r) != MB_OK)
    fail_msg("run %s: %s", entry(plan, i).name, mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  if (info.status != MB_RESULT_OK)
    fail_msg("%s: %s", entry(plan, i).name, info.reason);
  assert_string_equal(info.name, entry(plan, i).name);
  return r;
}

static void test_run_on_cpu(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.backend = "cpu";
  mb_plan_t *plan = parse_opts(
      "defaults:\n"
      "  shapes: [{name: tiny, shape: [16, 16, 16]}]\n"
      "  timing: {samples: 3, warmup: 0, warmup_runs: 1}\n"
      "  cache: hot\n"
      "benchmarks:\n"
      "  - op: gemm\n"
      "    dtype: f32\n"
      "    backend: cuda\n"
      "  - model: linear\n",
      "t.yaml", &o);
  assert_int_equal(mb_plan_count(plan), 2);

  mb_result_t *r = run_one(ctx, plan, 0);
  const char *json = mb_result_json(r);
  assert_non_null(json);
  assert_contains(json, "\"config\"");
  assert_contains(json, "\"native\"");
  assert_contains(json, "\"backend_override\"");
  assert_contains(json, "\"cuda\"");
  assert_contains(json, "gemm/tiny/f32");
  mb_result_destroy(r);

  /* A model's baseline is its own reference. */
  r = run_one(ctx, plan, 1);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_string_equal(info.model, "linear");
  assert_string_equal(info.recipe, "baseline");
  assert_string_equal(info.shape_name, "tiny");
  assert_true(info.speedup_vs_baseline == 1.0);
  mb_result_destroy(r);
  mb_plan_destroy(plan);
  mb_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sweep_count_and_order),
      cmocka_unit_test(test_json_same_as_yaml),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_flags_and_numbers),
      cmocka_unit_test(test_fast_accum),
      cmocka_unit_test(test_flush),
      cmocka_unit_test(test_kv_heads),
      cmocka_unit_test(test_defaults_merged),
      cmocka_unit_test(test_presets),
      cmocka_unit_test(test_model_linear),
      cmocka_unit_test(test_model_recipes_and_modes),
      cmocka_unit_test(test_backend_override),
      cmocka_unit_test(test_filter_and_max_flop),
      cmocka_unit_test(test_timing_override),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_examples_load),
      cmocka_unit_test(test_run_on_cpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
