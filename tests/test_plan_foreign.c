/* The foreign config schemas: torchao's microbenchmark files (the seeds'
 * examples verbatim: every model, recipe and mode built, what cannot be
 * built kept as skipped entries, unknown names refused with the valid
 * ones; and baseline-only versions) and the JAX accelerator-microbenchmarks
 * files (sweeps, the benchmark name table, csv_path, ignored keys), through
 * the public plan API. */
#include "test_util.h"

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

static void config_path(char *buf, size_t cap, const char *rel) {
  snprintf(buf, cap, "%s/%s", MB_TEST_CONFIG_DIR, rel);
}

static mb_plan_t *load_opts(const char *rel, const mb_plan_options_t *opts) {
  char path[4096];
  mb_plan_t *plan = NULL;
  config_path(path, sizeof path, rel);
  if (mb_plan_load(path, opts, &plan) != MB_OK)
    fail_msg("%s: %s", rel, mb_error_last());
  return plan;
}

static mb_plan_t *load(const char *rel) {
  return load_opts(rel, NULL);
}

static mb_plan_entry_t entry(const mb_plan_t *plan, size_t i) {
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  assert_int_equal(mb_plan_entry(plan, i, &e), MB_OK);
  return e;
}

static mb_plan_t *parse(const char *name, const char *text) {
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(text, strlen(text), name, NULL, &plan) != MB_OK)
    fail_msg("%s: %s", name, mb_error_last());
  return plan;
}

/* The text must fail to parse with every needle in the message. */
typedef struct bad_case {
  const char *text;
  const char *needles[3];
} bad_case_t;

static void expect_errors(const char *name, const bad_case_t *cases,
                          size_t count) {
  for (size_t i = 0; i < count; i++) {
    mb_plan_t *plan = NULL;
    mb_status_t st =
        mb_plan_parse(cases[i].text, strlen(cases[i].text), name, NULL, &plan);
    if (st == MB_OK) {
      mb_plan_destroy(plan);
      fail_msg("case %zu loaded:\n%s", i, cases[i].text);
    }
    assert_int_equal(st, MB_ERR_PARSE);
    assert_null(plan);
    for (size_t k = 0; k < 3 && cases[i].needles[k]; k++)
      if (!strstr(mb_error_last(), cases[i].needles[k]))
        fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, mb_error_last(),
                 cases[i].needles[k]);
  }
}

static size_t notes_containing(const mb_plan_t *plan, const char *needle) {
  size_t n = 0;
  for (size_t i = 0; i < mb_plan_note_count(plan); i++)
    n += strstr(mb_plan_note(plan, i), needle) != NULL;
  return n;
}

static void expect_shape(const mb_plan_entry_t *e, uint32_t ndim, int64_t a,
                         int64_t b, int64_t c) {
  assert_int_equal(e->params.ndim, ndim);
  assert_int_equal(e->params.shape[0], a);
  assert_int_equal(e->params.shape[1], b);
  if (ndim == 3) assert_int_equal(e->params.shape[2], c);
}

/* ---- torchao ------------------------------------------------------------- */

/* The seeds' files with names that are not torchao's (their tutorials'
 * placeholders): an error at the name's line and path listing the valid
 * names, from the library's own tables. */
static void test_torchao_seed_files_unknown_names(void **state) {
  (void)state;
  static const char k_recipes[] =
      "valid: baseline, int8wo, int8dq, int4wo-32, int4wo-64, int4wo-128, "
      "int4wo-256, float8wo, float8dq-tensor, float8dq-row, float8-block";
  static const struct {
    const char *file, *needles[3];
  } k_cases[] = {
      {"torchao/tutorial_my_quantization.yml",
       {"tutorial_my_quantization.yml:5: quantization_config_recipe_names[1]: ",
        "unknown recipe \"my_new_quantization\"", k_recipes}},
      {"torchao/dashboard_quantization_config.yml",
       {"dashboard_quantization_config.yml:9: "
        "quantization_config_recipe_names[5]: ",
        "unknown recipe \"my_new_quantization\"", k_recipes}},
      {"torchao/tutorial_my_model.yml",
       {"tutorial_my_model.yml:17: model_params[0].model_type: ",
        "unknown model \"my_custom_model\"",
        "valid: linear, ln_linear_sigmoid, ln_linear_relu, "
        "ln_linear_leakyrelu, ln_linear_relu6, ln_linear_gelu, "
        "ln_linear_silu, ln_linear_hardswish, transformer_block"}},
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    char path[4096];
    mb_plan_t *plan = NULL;
    config_path(path, sizeof path, k_cases[i].file);
    assert_int_equal(mb_plan_load(path, NULL, &plan), MB_ERR_PARSE);
    assert_null(plan);
    for (size_t k = 0; k < 3; k++)
      if (!strstr(mb_error_last(), k_cases[i].needles[k]))
        fail_msg("%s: \"%s\" does not contain \"%s\"", k_cases[i].file,
                 mb_error_last(), k_cases[i].needles[k]);
  }
}

/* Each entry's recipe, op, mode and baseline link: `recipes` per shape, in
 * order (baseline first), every shape's run linked to its own baseline. */
static void expect_recipes(const mb_plan_t *plan, size_t first, size_t shapes,
                           const char *const *recipes, size_t num_recipes,
                           const char *op, const char *mode) {
  for (size_t s = 0; s < shapes; s++)
    for (size_t r = 0; r < num_recipes; r++) {
      const size_t i = first + s * num_recipes + r;
      mb_plan_entry_t e = entry(plan, i);
      mb_recipe_t want;
      assert_int_equal(mb_recipe_from_name(recipes[r], &want), MB_OK);
      assert_string_equal(e.recipe, recipes[r]);
      assert_int_equal(e.params.recipe, want);
      assert_string_equal(e.op, op);
      assert_string_equal(e.mode, mode);
      assert_string_equal(e.skip_reason, "");
      assert_int_equal(e.baseline, r ? first + s * num_recipes : SIZE_MAX);
      if (r) assert_string_equal(entry(plan, e.baseline).recipe, "baseline");
    }
}

/* The seeds' files verbatim build: every recipe of every shape, linked to
 * that shape's baseline; training runs linear_training; a
 * transformer_block group runs the composite on the preset's shapes. */
static void test_torchao_seed_files_build(void **state) {
  (void)state;
  mb_plan_t *plan = load("torchao/readme_inference.yml");
  static const char *const k_inference[] = {"baseline", "int8wo", "float8wo",
                                            "float8dq-tensor"};
  assert_int_equal(mb_plan_count(plan), 3 * 4);
  expect_recipes(plan, 0, 3, k_inference, 4, "linear", "inference");
  mb_plan_entry_t e = entry(plan, 5);
  assert_string_equal(e.name, "linear/2048x4096x1024/int8wo");
  assert_string_equal(e.model, "linear");
  assert_string_equal(e.spec.backend, "cuda");
  expect_shape(&e, 3, 2048, 4096, 1024);
  assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
  assert_true(e.flop == 2.0 * 2048 * 4096 * 1024);
  mb_plan_destroy(plan);

  plan = load("torchao/readme_training.yml");
  /* Listed float8dq-tensor, float8dq-row, baseline: baseline goes first. */
  static const char *const k_training[] = {"baseline", "float8dq-tensor",
                                           "float8dq-row"};
  assert_int_equal(mb_plan_count(plan), 3 * 3);
  expect_recipes(plan, 0, 3, k_training, 3, "linear_training", "training");
  e = entry(plan, 2);
  assert_string_equal(e.name,
                      "float8_linear_training/1024x1024x1024/float8dq-row");
  /* Forward and the two backward GEMMs, all counted. */
  assert_true(e.flop == 3 * 2.0 * 1024 * 1024 * 1024);
  mb_plan_destroy(plan);

  plan = load("torchao/dashboard_baseline.yml");
  assert_int_equal(mb_plan_count(plan), 56);
  mb_plan_destroy(plan);

  plan = load("torchao/tutorial_local_test.yml");
  static const char *const k_local[] = {"baseline", "int8wo"};
  assert_int_equal(mb_plan_count(plan), 2);
  expect_recipes(plan, 0, 1, k_local, 2, "linear", "inference");
  mb_plan_destroy(plan);

  plan = load("torchao/multiple_models.yml");
  assert_int_equal(mb_plan_count(plan), 3 + 4 + 1);
  static const char *const k_llama[] = {"attn.wqkv", "attn.w0", "ffn.w13",
                                        "ffn.w2"};
  for (size_t i = 0; i < 4; i++) {
    e = entry(plan, 3 + i);
    char want[128];
    snprintf(want, sizeof want, "transformer_models/%s/baseline", k_llama[i]);
    assert_string_equal(e.name, want);
    assert_string_equal(e.op, "transformer_block");
    assert_string_equal(e.model, "transformer_block");
    assert_string_equal(e.shape_name, k_llama[i]);
    assert_string_equal(e.skip_reason, "");
    assert_true(e.flop > 0);
  }
  e = entry(plan, 3);
  expect_shape(&e, 3, 16384, 8192, 1280);
  assert_string_equal(entry(plan, 0).op, "linear");
  assert_string_equal(entry(plan, 7).op, "linear");
  mb_plan_destroy(plan);
}

/* What the library cannot build is kept as a skipped entry with the
 * reason, whatever --backend says, and the rest of the file runs: a
 * weight-only recipe in training, a model without a training graph, a
 * recipe the shape does not fit. Its result says so and carries the
 * entry's recipe and mode. */
static void test_torchao_unbuildable_kept_skipped(void **state) {
  (void)state;
  static const char k_doc[] =
      "benchmark_mode: training\n"
      "quantization_config_recipe_names: [int8wo, float8dq-row, "
      "float8-block]\n"
      "model_params:\n"
      "  - name: lin\n"
      "    matrix_shapes: [{name: custom, shapes: [[32, 96, 32]]}]\n"
      "    device: mps\n"
      "  - name: ln\n"
      "    model_type: ln_linear_gelu\n"
      "    matrix_shapes: [{name: custom, shapes: [[32, 128, 32]]}]\n";
  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.backend = "cpu";
  mb_plan_t *plan = NULL;
  if (mb_plan_parse(k_doc, strlen(k_doc), "skip.yml", &o, &plan) != MB_OK)
    fail_msg("skip.yml: %s", mb_error_last());
  assert_int_equal(mb_plan_count(plan), 4 + 4);
  static const struct {
    const char *name, *op, *skip; /* skip NULL: runs */
  } k_want[] = {
      {"lin/32x96x32/baseline", "linear_training", NULL},
      {"lin/32x96x32/int8wo", "linear_training",
       "recipe \"int8wo\" is weight-only"},
      {"lin/32x96x32/float8dq-row", "linear_training", NULL},
      {"lin/32x96x32/float8-block", "linear_training", "128"},
      {"ln/32x128x32/baseline", "ln_linear",
       "model \"ln_linear_gelu\" has no training graph"},
      {"ln/32x128x32/int8wo", "ln_linear", "no training graph"},
      {"ln/32x128x32/float8dq-row", "ln_linear", "no training graph"},
      {"ln/32x128x32/float8-block", "ln_linear", "no training graph"},
  };
  for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name, k_want[i].name);
    assert_string_equal(e.op, k_want[i].op);
    assert_string_equal(e.mode, "training");
    assert_string_equal(e.spec.backend, "cpu");
    if (!k_want[i].skip) {
      assert_string_equal(e.skip_reason, "");
      continue;
    }
    assert_contains(e.skip_reason, k_want[i].skip);
    assert_true(e.flop == 0); /* it does no work */
  }
  /* Still linked: a recipe's speedup needs its baseline to have run. */
  assert_int_equal(entry(plan, 1).baseline, 0);
  assert_int_equal(entry(plan, 5).baseline, 4);
  for (size_t i = 1; i < sizeof k_want / sizeof *k_want; i += 4) {
    mb_result_t *r = NULL;
    assert_int_equal(mb_plan_run(g_ctx, plan, i, &r), MB_OK);
    mb_result_info_t info = MB_RESULT_INFO_INIT;
    assert_int_equal(mb_result_info(r, &info), MB_OK);
    assert_int_equal(info.status, MB_RESULT_SKIPPED);
    assert_string_equal(info.reason, entry(plan, i).skip_reason);
    assert_string_equal(info.recipe, "int8wo");
    assert_string_equal(info.mode, "training");
    assert_string_equal(info.name, k_want[i].name);
    assert_true(isnan(info.speedup_vs_baseline));
    mb_result_destroy(r);
  }
  mb_plan_destroy(plan);
}

static size_t preset_count(const char *name, int lo, int hi) {
  mb_preset_params_t pp = MB_PRESET_PARAMS_INIT;
  mb_shape_list_t *l = NULL;
  pp.min_power = lo;
  pp.max_power = hi;
  assert_int_equal(mb_preset_shapes(name, &pp, &l), MB_OK);
  size_t n = mb_shape_list_count(l);
  mb_shape_list_destroy(l);
  return n;
}

static void test_torchao_baseline_versions_expand(void **state) {
  (void)state;
  /* small_sweep 10..15: a <= b <= c over 6 powers = C(8, 3). */
  assert_int_equal(preset_count("small_sweep", 10, 15), 56);
  static const struct {
    const char *file;
    size_t count;
  } k_counts[] = {
      {"torchao/readme_inference_baseline.yml", 3},
      {"torchao/dashboard_baseline.yml", 56},
      {"torchao/multiple_models_baseline.yml", 3 + 4 + 1},
      {"torchao/presets_baseline.yml", 5 + 4},
      {"torchao/two_groups_cpu.yml", 2},
  };
  for (size_t i = 0; i < sizeof k_counts / sizeof *k_counts; i++) {
    mb_plan_t *plan = load(k_counts[i].file);
    assert_string_equal(mb_plan_schema(plan), "torchao");
    if (mb_plan_count(plan) != k_counts[i].count)
      fail_msg("%s: %zu entries, expected %zu", k_counts[i].file,
               mb_plan_count(plan), k_counts[i].count);
    for (size_t k = 0; k < mb_plan_count(plan); k++) {
      mb_plan_entry_t e = entry(plan, k);
      assert_string_equal(e.op, "linear");
      assert_string_equal(e.recipe, "baseline");
      assert_string_equal(e.model, "linear");
      assert_string_equal(e.mode, "inference");
      assert_int_equal(e.baseline, SIZE_MAX); /* is its own baseline */
    }
    mb_plan_destroy(plan);
  }

  mb_plan_t *plan = load("torchao/dashboard_baseline.yml");
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "small_bf16_linear/1024x1024x1024/baseline");
  assert_string_equal(e.group, "small_bf16_linear");
  assert_string_equal(e.shape_name, "1024x1024x1024");
  assert_string_equal(e.csv_path,
                      "benchmarks/microbenchmarks/results/results.csv");
  assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
  expect_shape(&e, 3, 1024, 1024, 1024);
  e = entry(plan, 55);
  expect_shape(&e, 3, 32768, 32768, 32768);
  mb_plan_destroy(plan);

  plan = load("torchao/multiple_models_baseline.yml");
  e = entry(plan, 3);
  assert_string_equal(e.name, "llama_models/attn.wqkv/baseline");
  assert_string_equal(e.shape_name, "attn.wqkv");
  expect_shape(&e, 3, 16384, 8192, 1280);
  assert_string_equal(e.device_request, "cuda");
  assert_string_equal(e.spec.backend, "cuda");
  assert_string_equal(e.csv_path, ""); /* no output_dir */
  e = entry(plan, 7);
  assert_string_equal(e.name, "cpu_models/512x512x512/baseline");
  assert_string_equal(e.shape_name, "");
  assert_string_equal(e.spec.backend, "cpu");
  mb_plan_destroy(plan);

  plan = load("torchao/presets_baseline.yml");
  e = entry(plan, 4);
  assert_string_equal(e.name, "pow2_defaults/pow2_16384/baseline");
  assert_int_equal(e.params.dtype, MB_DTYPE_F32);
  assert_null(e.spec.backend); /* no device: the best available */
  e = entry(plan, 5);
  assert_int_equal(e.params.dtype, MB_DTYPE_F16);
  assert_string_equal(e.csv_path, "results/results.csv");
  mb_plan_destroy(plan);
}

/* torchao's README writes model_params as one map, without a name. */
static void test_torchao_single_map(void **state) {
  (void)state;
  mb_plan_t *plan = load("torchao/readme_inference_baseline.yml");
  assert_int_equal(mb_plan_count(plan), 3);
  static const char *const k_names[] = {"linear/1024x1024x1024/baseline",
                                        "linear/2048x4096x1024/baseline",
                                        "linear/4096x4096x1024/baseline"};
  for (size_t i = 0; i < 3; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name, k_names[i]);
    assert_string_equal(e.group, "linear");
    assert_string_equal(e.skip_reason, "");
  }
  mb_plan_entry_t e = entry(plan, 1);
  expect_shape(&e, 3, 2048, 4096, 1024);
  /* compile, enable_memory_profiler: one note each; enable_profiler
   * asks for the run's trace, beside results.csv. */
  assert_int_equal(mb_plan_note_count(plan), 3);
  assert_int_equal(notes_containing(plan, "PyTorch-only"), 2);
  assert_string_equal(mb_plan_trace(plan),
                      "benchmarks/microbenchmarks/results/trace.json");
  assert_int_equal(notes_containing(plan, "the run's trace"), 1);
  assert_int_equal(notes_containing(plan,
                                    "`compile` is PyTorch-only: "
                                    "recorded, has no effect here"),
                   1);
  assert_int_equal(notes_containing(plan, "`enable_profiler`"), 1);
  assert_int_equal(notes_containing(plan, "`enable_memory_profiler`"), 1);
  assert_int_equal(notes_containing(plan, "readme_inference_baseline.yml: "),
                   3);
  mb_plan_destroy(plan);
}

static void test_torchao_baseline_first_once(void **state) {
  (void)state;
  static const char *const k_docs[] = {
      /* no recipe list */
      "model_params:\n"
      "  - name: g\n"
      "    matrix_shapes: [{name: custom, shapes: [[8, 16, 32]]}]\n",
      /* baseline listed last, twice */
      "quantization_config_recipe_names: [baseline, baseline]\n"
      "model_params:\n"
      "  - name: g\n"
      "    matrix_shapes: [{name: custom, shapes: [[8, 16, 32]]}]\n",
  };
  for (size_t i = 0; i < 2; i++) {
    mb_plan_t *plan = parse("once.yml", k_docs[i]);
    assert_int_equal(mb_plan_count(plan), 1);
    mb_plan_entry_t e = entry(plan, 0);
    assert_string_equal(e.name, "g/8x16x32/baseline");
    assert_string_equal(e.recipe, "baseline");
    mb_plan_destroy(plan);
  }
}

/* PyTorch-only keys: one note per key for the whole file. */
static void test_torchao_torch_keys_noted_once(void **state) {
  (void)state;
  mb_plan_t *plan = load("torchao/two_groups_cpu.yml");
  assert_int_equal(mb_plan_note_count(plan), 2);
  assert_int_equal(notes_containing(plan,
                                    "`torch_compile_mode` is "
                                    "PyTorch-only"),
                   1);
  assert_int_equal(notes_containing(plan,
                                    "`use_torch_compile` is "
                                    "PyTorch-only"),
                   1);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "tiny/64x64x64/baseline");
  assert_string_equal(e.csv_path, "tiny_results/results.csv");
  assert_string_equal(e.device_request, "cpu");
  assert_string_equal(e.spec.backend, "cpu");
  e = entry(plan, 1);
  assert_string_equal(e.name, "tiny_bf16/32x64x16/baseline");
  assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
  mb_plan_destroy(plan);
}

static void expect_torch_keys(const char *json) {
  assert_non_null(json);
  assert_contains(json, "\"ignored\"");
  assert_contains(json, "\"torch_compile_mode\"");
  assert_contains(json, "\"max-autotune\"");
  assert_contains(json, "\"use_torch_compile\"");
  assert_contains(json, "\"torchao\"");
}

/* device: mps is kept and reported skipped; --backend cpu runs it (the one
 * real run of these tests: torchao files cannot shorten the timing), and
 * both results carry the PyTorch-only keys. */
static void test_torchao_device_not_here(void **state) {
  (void)state;
  mb_plan_t *plan = load("torchao/apple_mps.yml");
  assert_int_equal(mb_plan_note_count(plan), 2);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.device_request, "mps");
  assert_null(e.spec.backend);
  assert_string_equal(e.skip_reason,
                      "device \"mps\" (Apple GPU) is not available here: "
                      "libmicrobench has no mps backend; override the backend "
                      "with cpu or cuda (mbench --backend, Python backend=)");
  mb_result_t *r = NULL;
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_string_equal(info.reason, e.skip_reason);
  assert_string_equal(info.name, "on_mac/64x64x64/baseline");
  expect_torch_keys(mb_result_json(r));
  mb_result_destroy(r);
  mb_plan_destroy(plan);

  mb_plan_options_t o = MB_PLAN_OPTIONS_INIT;
  o.backend = "cpu";
  plan = load_opts("torchao/apple_mps.yml", &o);
  e = entry(plan, 0);
  assert_string_equal(e.skip_reason, "");
  assert_string_equal(e.spec.backend, "cpu");
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  if (info.status != MB_RESULT_OK) fail_msg("not ok: %s", info.reason);
  assert_string_equal(info.backend, "cpu");
  assert_string_equal(info.recipe, "baseline");
  assert_string_equal(info.model, "linear");
  assert_true(info.speedup_vs_baseline == 1.0);
  const char *json = mb_result_json(r);
  expect_torch_keys(json);
  assert_contains(json, "\"backend_override\"");
  assert_contains(json, "\"mps\"");
  mb_result_destroy(r);
  mb_plan_destroy(plan);

  plan = parse("xpu.yml",
               "model_params:\n"
               "  - device: xpu\n"
               "    matrix_shapes: [{name: llama}]\n");
  assert_int_equal(mb_plan_count(plan), 4);
  e = entry(plan, 0);
  assert_contains(e.skip_reason, "device \"xpu\" (Intel GPU)");
  mb_plan_destroy(plan);
}

static void test_torchao_errors(void **state) {
  (void)state;
  static const bad_case_t k_cases[] = {
      {"benchmark_mode: inference\n"
       "model_params:\n"
       "  - name: a\n"
       "    matrix_shapes:\n"
       "      - name: pow2\n"
       "  - name: b\n"
       "    matrix_shapes:\n"
       "      - name: pow3\n",
       {"bad.yml:8: model_params[1].matrix_shapes[0].name: ",
        "unknown shape preset \"pow3\"; valid: custom, llama, llama4, "
        "deepseek_v3_236b, deepseek_v3_671b, qwen3_32b, gemma3_27b, pow2, "
        "pow2_extended, small_sweep, sweep",
        NULL}},
      {"model_params:\n"
       "  - name: a\n"
       "    batch_size: 8\n"
       "    matrix_shapes: [{name: llama}]\n",
       {"bad.yml:3: model_params[0].batch_size: unknown key \"batch_size\"; "
        "valid: name, matrix_shapes, high_precision_dtype, model_type, device",
        "enable_memory_profiler", NULL}},
      {"warmup: 3\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"bad.yml:1: warmup: unknown key \"warmup\"; valid: benchmark_mode, "
        "quantization_config_recipe_names, sparsity_config_recipe_names, "
        "output_dir, model_params",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - name: pow2\n"
       "        min_power: ten\n",
       {"bad.yml:4: model_params[0].matrix_shapes[0].min_power: expected an "
        "integer, got string \"ten\"",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes: [{name: pow2, min_power: 31}]\n",
       {"min_power: 31 is out of range; valid: 1 to 30", NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes: [{name: llama}]\n"
       "    high_precision_dtype: torch.float64\n",
       {"bad.yml:3: model_params[0].high_precision_dtype: unknown dtype "
        "\"torch.float64\"",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes: [{name: llama}]\n"
       "    high_precision_dtype: torch.int8\n",
       {"bad.yml:3: model_params[0].high_precision_dtype: \"torch.int8\" is "
        "not a high-precision dtype; valid: torch.float32, torch.bfloat16, "
        "torch.float16",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes: [{name: llama}]\n"
       "    device: tpu\n",
       {"bad.yml:3: model_params[0].device: unknown device \"tpu\"; valid: "
        "cuda, cpu, xpu, mps",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes: [{name: llama}]\n"
       "    device: [cuda]\n",
       {"bad.yml:3: model_params[0].device: expected a string, got a list",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes: [{name: llama}]\n"
       "    model_type: mlp\n",
       {"bad.yml:3: model_params[0].model_type: unknown model \"mlp\"; valid: "
        "linear, ln_linear_sigmoid",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - name: custom\n",
       {"bad.yml:3: model_params[0].matrix_shapes[0]: name \"custom\" needs "
        "`shapes",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - name: llama\n"
       "        shapes: [[1, 2, 3]]\n",
       {"bad.yml:4: model_params[0].matrix_shapes[0].shapes: `shapes` goes "
        "with name \"custom\"",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - name: custom\n"
       "        min_power: 10\n"
       "        shapes: [[1, 2, 3]]\n",
       {"bad.yml:4: model_params[0].matrix_shapes[0].min_power: does not "
        "apply to \"custom\"",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - name: custom\n"
       "        shapes:\n"
       "          - [1024, 1024, 1024]\n"
       "          - [1024, 1024]\n",
       {"bad.yml:6: model_params[0].matrix_shapes[0].shapes[1]: expected "
        "[M, K, N], got a list of 2",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - name: custom\n"
       "        shapes: [[1024, 0, 1024]]\n",
       {"model_params[0].matrix_shapes[0].shapes[0][1]: 0 is out of range",
        NULL, NULL}},
      {"model_params:\n"
       "  - matrix_shapes:\n"
       "      - size: 1024\n",
       {"bad.yml:3: model_params[0].matrix_shapes[0].size: unknown key "
        "\"size\"; valid: name, shapes, min_power, max_power",
        NULL, NULL}},
      {"scaling_granularity: blockwise\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"bad.yml:1: scaling_granularity: unknown value \"blockwise\"; valid: "
        "tensorwise, rowwise, columnwise",
        NULL, NULL}},
      {"scaling_type_input: static\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"scaling_type_input: unknown value \"static\"; valid: dynamic, "
        "disabled",
        NULL, NULL}},
      {"use_fast_accum: \"yes\"\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"bad.yml:1: use_fast_accum: expected true or false", NULL, NULL}},
      {"repeat_n: 0\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"bad.yml:1: repeat_n: 0 is out of range", NULL, NULL}},
      {"benchmark_mode: inference\n",
       {"bad.yml:1: `model_params` is missing", NULL, NULL}},
      {"model_params: linear\n",
       {"bad.yml:1: model_params: expected a non-empty list of maps (or one "
        "map), got a string",
        NULL, NULL}},
      {"model_params:\n"
       "  - name: g\n",
       {"bad.yml:2: model_params[0]: `matrix_shapes` is missing", NULL, NULL}},
      {"benchmark_mode: benchmark\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"bad.yml:1: benchmark_mode: unknown benchmark mode \"benchmark\"; "
        "valid: inference, training",
        NULL, NULL}},
      {"quantization_config_recipe_names: int8wo\n"
       "model_params: [{matrix_shapes: [{name: llama}]}]\n",
       {"bad.yml:1: quantization_config_recipe_names: expected a list of "
        "recipe names, got a string",
        NULL, NULL}},
  };
  expect_errors("bad.yml", k_cases, sizeof k_cases / sizeof *k_cases);
}

/* Training options are checked and recorded, with inference entries too;
 * mps: a skipped result carries the record without a run. */
static void test_torchao_training_options_recorded(void **state) {
  (void)state;
  mb_plan_t *plan = parse("train.yml",
                          "scaling_type_input: dynamic\n"
                          "scaling_granularity: rowwise\n"
                          "use_fast_accum: false\n"
                          "repeat_n: 7\n"
                          "model_params:\n"
                          "  - device: mps\n"
                          "    high_precision_dtype: float32\n"
                          "    matrix_shapes: [{name: custom, shapes: [[16, "
                          "16, 16]]}]\n");
  mb_result_t *r = NULL;
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  const char *json = mb_result_json(r);
  assert_contains(json, "\"training\"");
  assert_contains(json, "\"scaling_granularity\"");
  assert_contains(json, "\"rowwise\"");
  assert_contains(json, "\"repeat_n\"");
  mb_result_destroy(r);
  mb_plan_destroy(plan);
}

/* ---- JAX suite ----------------------------------------------------------- */

static void test_jax_sweeps(void **state) {
  (void)state;
  mb_plan_t *plan = load("jax/sweeps.yaml");
  assert_string_equal(mb_plan_schema(plan), "jax");
  assert_int_equal(mb_plan_count(plan), 4 + 6 + 5);
  static const struct {
    const char *name;
    uint32_t ndim;
    int64_t shape[3];
    uint32_t samples; /* 0: the default stdrel criterion */
  } k_want[] = {
      /* m_range x2 from 1024 while <= 8192; n: SAME_AS_m; num_runs 10 */
      {"add/1024x1024", 2, {1024, 1024, 0}, 10},
      {"add/2048x2048", 2, {2048, 2048, 0}, 10},
      {"add/4096x4096", 2, {4096, 4096, 0}, 10},
      {"add/8192x8192", 2, {8192, 8192, 0}, 10},
      /* m_range +256 from 256 while <= 1000, n_list; block num_runs 7 */
      {"rmsnorm_fwd/256x512", 2, {256, 512, 0}, 7},
      {"rmsnorm_fwd/256x1024", 2, {256, 1024, 0}, 7},
      {"rmsnorm_fwd/512x512", 2, {512, 512, 0}, 7},
      {"rmsnorm_fwd/512x1024", 2, {512, 1024, 0}, 7},
      {"rmsnorm_fwd/768x512", 2, {768, 512, 0}, 7},
      {"rmsnorm_fwd/768x1024", 2, {768, 1024, 0}, 7},
      /* benchmark_params first (block num_runs 5), then the sweep, whose
       * own num_runs 3 wins; last key varies fastest */
      {"gemm_multiple_run/128x256x512/bfloat16", 3, {128, 256, 512}, 5},
      {"gemm_multiple_run/64x64x64/bfloat16", 3, {64, 64, 64}, 3},
      {"gemm_multiple_run/64x64x64/float8", 3, {64, 64, 64}, 3},
      {"gemm_multiple_run/64x128x128/bfloat16", 3, {64, 128, 128}, 3},
      {"gemm_multiple_run/64x128x128/float8", 3, {64, 128, 128}, 3},
  };
  for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++) {
    mb_plan_entry_t e = entry(plan, i);
    assert_string_equal(e.name, k_want[i].name);
    expect_shape(&e, k_want[i].ndim, k_want[i].shape[0], k_want[i].shape[1],
                 k_want[i].shape[2]);
    assert_int_equal(e.spec.criterion, MB_CRITERION_FIXED);
    assert_int_equal(e.spec.samples, k_want[i].samples);
    assert_string_equal(e.shape_name, "");
    assert_string_equal(e.recipe, "");
  }
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.group, "add");
  assert_string_equal(e.op, "add");
  assert_int_equal(e.params.dtype, MB_DTYPE_BF16); /* the suite's add */
  assert_string_equal(e.csv_path, "out/add.csv");
  e = entry(plan, 12);
  assert_int_equal(e.params.dtype, MB_DTYPE_F8E4M3);
  mb_plan_destroy(plan);

  /* No num_runs anywhere: our default stopping criterion. */
  plan = parse("plain.yaml",
               "benchmarks:\n"
               "- benchmark_name: add\n"
               "  benchmark_params: [{m: 8, n: 8}]\n");
  e = entry(plan, 0);
  assert_int_equal(e.spec.criterion, MB_CRITERION_STDREL);
  assert_int_equal(e.spec.samples, 0);
  assert_string_equal(e.name, "add/8x8");
  mb_plan_destroy(plan);
}

static void test_jax_predecessor_files(void **state) {
  (void)state;
  mb_plan_t *plan = load("jax/compute_training.yaml");
  assert_int_equal(mb_plan_count(plan), 1 + 1 + 4 + 3 + 2);
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "gemm/16384x18432x16384");
  assert_string_equal(e.op, "gemm_fp8");
  assert_int_equal(e.spec.samples, 100);
  assert_string_equal(e.csv_path, "../microbenchmarks/gemm/gemm.csv");
  e = entry(plan, 1);
  assert_string_equal(e.name, "gemm_multiple_run/16384x18432x16384/bfloat16");
  assert_int_equal(e.params.dtype, MB_DTYPE_BF16);
  assert_int_equal(e.spec.samples, 100);
  assert_string_equal(e.csv_path,
                      "../microbenchmarks/gemm_multiple_run/"
                      "gemm_multiple_run.csv");
  e = entry(plan, 2);
  assert_string_equal(e.csv_path, "../microbenchmarks/add/add_rows.csv");
  e = entry(plan, 6);
  assert_string_equal(e.name, "quantization/1024x8192");
  assert_string_equal(e.csv_path, "");
  e = entry(plan, 10);
  assert_string_equal(e.name, "transpose_quantization/4096x2048");
  /* xla_dump_dir, xlml_metrics_dir: once each, whatever the number of
   * blocks that set them; trace_dir: the first asked for is the run's
   * trace (a note), the others' are not (one note). */
  assert_int_equal(mb_plan_note_count(plan), 4);
  assert_int_equal(notes_containing(plan, "has no effect here (XLA/TPU-only)"),
                   2);
  assert_int_equal(notes_containing(plan, "`trace_dir`"), 2);
  assert_int_equal(notes_containing(plan, "one trace per run"), 1);
  assert_string_equal(mb_plan_trace(plan),
                      "../microbenchmarks/gemm/compute_training.trace.json");
  assert_int_equal(notes_containing(plan, "`xla_dump_dir`"), 1);
  assert_int_equal(notes_containing(plan, "`xlml_metrics_dir`"), 1);
  mb_plan_destroy(plan);

  plan = load("jax/inference.yaml");
  assert_int_equal(mb_plan_count(plan), 2 + 2 + 1 + 1 + 1 + 3);
  e = entry(plan, 9);
  assert_string_equal(e.name, "single_device_hbm_copy/4194304/bfloat16");
  assert_string_equal(e.op, "copy");
  expect_shape(&e, 2, 1, 4194304, 0);
  assert_string_equal(e.csv_path,
                      "../microbenchmarks/hbm_bfloat16/"
                      "single_device_hbm_copy.csv");
  mb_plan_destroy(plan);
}

/* Every benchmark name we map: the op or alias, the shape, and what the
 * alias and the suite's defaults make of it. */
static void test_jax_name_table(void **state) {
  (void)state;
  static const struct {
    const char *bench, *params, *op;
    uint32_t ndim;
    int64_t shape[3];
    mb_dtype_t dtype, dtype_out; /* NONE: not checked */
    mb_scale_mode_t sa, sb;
    uint32_t flags;
    double scale;
  } k_rows[] = {
      {"gemm",
       "m: 256, k: 512, n: 128",
       "gemm_fp8",
       3,
       {256, 512, 128},
       MB_DTYPE_F8E4M3,
       MB_DTYPE_BF16,
       MB_SCALE_ROW,
       MB_SCALE_COL,
       0,
       0},
      {"gemm_simple",
       "m: 256, k: 512, n: 128",
       "gemm_simple",
       3,
       {256, 512, 128},
       MB_DTYPE_F8E4M3,
       MB_DTYPE_BF16,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"gemm_accum",
       "m: 256, k: 512, n: 128",
       "gemm_accum",
       3,
       {256, 512, 128},
       MB_DTYPE_F8E4M3,
       MB_DTYPE_F32,
       MB_SCALE_ROW,
       MB_SCALE_COL,
       0,
       0},
      {"gemm_fp8_rowwise",
       "m: 256, k: 512, n: 128",
       "gemm_fp8_rowwise",
       3,
       {256, 512, 128},
       MB_DTYPE_BF16,
       MB_DTYPE_BF16,
       MB_SCALE_ROW,
       MB_SCALE_COL,
       MB_PARAM_QUANTIZE_INPUTS,
       0},
      {"gemm_multiple_run",
       "m: 256, k: 512, n: 128",
       "gemm_multiple_run",
       3,
       {256, 512, 128},
       MB_DTYPE_F8E4M3,
       MB_DTYPE_BF16,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"gemm_fp8_b128_fp32",
       "m: 256, k: 512, n: 128",
       "gemm_fp8_b128",
       3,
       {256, 512, 128},
       MB_DTYPE_F8E4M3,
       MB_DTYPE_F32,
       MB_SCALE_BLOCK,
       MB_SCALE_BLOCK,
       0,
       0},
      {"quantization",
       "m: 256, n: 512",
       "quantization",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_F8E4M3,
       MB_SCALE_ROW,
       MB_SCALE_NONE,
       0,
       0},
      {"transpose_quantization",
       "m: 256, n: 512",
       "transpose_quantization",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_F8E4M3,
       MB_SCALE_ROW,
       MB_SCALE_NONE,
       MB_PARAM_TRANSPOSE,
       0},
      {"quantization_static_scaling",
       "m: 256, n: 512",
       "quantization",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_F8E4M3,
       MB_SCALE_ROW,
       MB_SCALE_NONE,
       MB_PARAM_STATIC,
       1.0},
      {"transpose_quantization_static_scaling",
       "m: 256, n: 512, scale: 0.5",
       "transpose_quantization",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_F8E4M3,
       MB_SCALE_ROW,
       MB_SCALE_NONE,
       MB_PARAM_STATIC | MB_PARAM_TRANSPOSE,
       0.5},
      {"add",
       "m: 256, n: 512",
       "add",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"rmsnorm_fwd",
       "m: 256, n: 512",
       "rmsnorm",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      /* X [256, 512] split into two [256, 256] halves */
      {"swiglu_fwd",
       "m: 256, n: 512",
       "silu_mul",
       2,
       {256, 256, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"rmsnorm_bwd",
       "m: 256, n: 512",
       "rmsnorm_bwd",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      /* x [256, 512] as gate and up halves, dy [256, 256] */
      {"swiglu_bwd",
       "m: 256, n: 512",
       "swiglu_bwd",
       2,
       {256, 256, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"inference_add",
       "m: 256, n: 512, dtype: float32",
       "add",
       2,
       {256, 512, 0},
       MB_DTYPE_F32,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"inference_rmsnorm",
       "m: 256, n: 512, dtype: float16",
       "rmsnorm",
       2,
       {256, 512, 0},
       MB_DTYPE_F16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"inference_silu_mul",
       "m: 256, n: 512, dtype: bfloat16",
       "silu_mul",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"inference_sigmoid",
       "m: 256, n: 512, dtype: bfloat16",
       "sigmoid",
       2,
       {256, 512, 0},
       MB_DTYPE_BF16,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
      {"single_device_hbm_copy",
       "num_elements: 4096, dtype: float8",
       "copy",
       2,
       {1, 4096, 0},
       MB_DTYPE_F8E4M3,
       MB_DTYPE_NONE,
       MB_SCALE_NONE,
       MB_SCALE_NONE,
       0,
       0},
  };
  for (size_t i = 0; i < sizeof k_rows / sizeof *k_rows; i++) {
    char doc[512];
    snprintf(doc, sizeof doc,
             "benchmarks:\n- benchmark_name: %s\n  benchmark_params:\n"
             "  - {%s}\n",
             k_rows[i].bench, k_rows[i].params);
    mb_plan_t *plan = parse("table.yaml", doc);
    mb_plan_entry_t e = entry(plan, 0);
    assert_string_equal(e.op, k_rows[i].op);
    assert_string_equal(e.group, k_rows[i].bench);
    expect_shape(&e, k_rows[i].ndim, k_rows[i].shape[0], k_rows[i].shape[1],
                 k_rows[i].shape[2]);
    mb_op_params_t p = e.params;
    assert_int_equal(mb_op_apply_alias(e.op, &p), MB_OK);
    if (p.dtype != k_rows[i].dtype)
      fail_msg("%s: dtype %s", k_rows[i].bench, mb_dtype_name(p.dtype));
    if (k_rows[i].dtype_out != MB_DTYPE_NONE &&
        p.dtype_out != k_rows[i].dtype_out)
      fail_msg("%s: dtype_out %s", k_rows[i].bench, mb_dtype_name(p.dtype_out));
    assert_int_equal(p.scale_a.mode, k_rows[i].sa);
    assert_int_equal(p.scale_b.mode, k_rows[i].sb);
    assert_int_equal(p.flags, k_rows[i].flags);
    if (k_rows[i].flags & MB_PARAM_STATIC)
      assert_true(p.scale == k_rows[i].scale);
    if (!strcmp(k_rows[i].op, "sigmoid"))
      assert_int_equal(p.activation, MB_ACT_SIGMOID);
    assert_int_equal(mb_op_resolve(mb_op_find(e.op), &p), MB_OK);
    mb_plan_destroy(plan);
  }
}

/* num_runs: exactly that many samples, and the record of the combination
 * (after SAME_AS) and the ignored keys in the result. */
static void test_jax_run_records(void **state) {
  (void)state;
  mb_plan_t *plan = load("jax/tiny_add.yaml");
  mb_plan_entry_t e = entry(plan, 0);
  assert_string_equal(e.name, "add/64x64");
  assert_string_equal(e.csv_path, "/tmp/microbenchmarks/add/add.csv");
  mb_result_t *r = NULL;
  assert_int_equal(mb_plan_run(g_ctx, plan, 0, &r), MB_OK);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  if (info.status != MB_RESULT_OK) fail_msg("not ok: %s", info.reason);
  mb_stats_t stats = MB_STATS_INIT;
  assert_int_equal(mb_result_stats(r, &stats), MB_OK);
  assert_int_equal(stats.count, 4);
  size_t n = 0;
  mb_result_samples(r, &n);
  assert_int_equal(n, 4);
  const char *json = mb_result_json(r);
  assert_contains(json, "\"jax\"");
  assert_contains(json, "\"params\"");
  /* trace_dir has an effect: the run's trace, not an ignored key */
  if (strstr(json, "\"trace_dir\"")) fail_msg("trace_dir ignored: %s", json);
  assert_string_equal(mb_plan_trace(plan),
                      "/tmp/microbenchmarks/add/tiny_add.trace.json");
  if (strstr(json, "SAME_AS")) fail_msg("SAME_AS left in %s", json);
  mb_result_destroy(r);
  mb_plan_destroy(plan);
}

static void test_jax_errors(void **state) {
  (void)state;
  static const bad_case_t k_cases[] = {
      /* A name the suite does not define (one it defines but we do not
       * run is a skipped entry: test_plan_jax2.c). */
      {"benchmarks:\n"
       "- benchmark_name: gemm\n"
       "  benchmark_params: [{m: 8, k: 8, n: 8}]\n"
       "- benchmark_name: all_gathr\n"
       "  benchmark_sweep_params: [{matrix_dim: 8}]\n",
       {"bad.yaml:4: benchmarks[1].benchmark_name: benchmark_name "
        "\"all_gathr\" is not a benchmark of the JAX suite; its benchmarks: "
        "all_gather, psum, psum_scatter",
        "single_device_hbm_copy", "host_device"}},
      {"benchmarks:\n"
       "- benchmark_name: inference_add\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, n: 8, dtype: float64}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_sweep_params[0].dtype: unknown "
        "dtype \"float64\"; valid: bfloat16, float32, float16, float8, int8, "
        "int32, float4",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: inference_add\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, n: 8}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_sweep_params[0]: inference_add "
        "needs dtype; valid: bfloat16",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: gemm\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 1024, n: 1024}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_sweep_params[0]: gemm needs m, "
        "k and n; \"k\" is missing",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_params:\n"
       "  - {n: 1024}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_params[0]: add needs m and n; "
        "\"m\" is missing",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: gemm\n"
       "  benchmark_params:\n"
       "  - {m: 8, k: 8, n: 8, dtype: bfloat16}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_params[0].dtype: unknown "
        "parameter \"dtype\" for gemm; valid: m, k, n, num_runs",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, k_range: {start: 1, end: 4, multiplier: 2}, n: 8}\n",
       {"benchmarks[0].benchmark_sweep_params[0].k_range: unknown parameter "
        "\"k\" (from \"k_range\") for add; valid: m, n, num_runs",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m_range: {start: 8, end: 64}, n: 8}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_sweep_params[0].m_range: a range "
        "needs `multiplier` or `increase_by`",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m_range: {start: 8, end: 64, multiplier: 1}, n: 8}\n",
       {"m_range: multiplier 1 from start 8 would never pass end", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m_range: {start: 0, end: 64, multiplier: 2}, n: 8}\n",
       {"need multiplier > 1 and start > 0", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m_range: {start: 8, end: 64, increase_by: 0}, n: 8}\n",
       {"m_range: increase_by 0 would never pass end", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m_range: {start: 64, end: 8, increase_by: 8}, n: 8}\n",
       {"start 64 is above end 8: the range is empty", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m_range: {start: 8, end: 64, increase_by: 8, step: 2}, n: 8}\n",
       {"m_range.step: unknown key \"step\"; valid: start, end, multiplier, "
        "increase_by",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, n: \"SAME_AS_q\"}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_sweep_params[0].n: "
        "\"SAME_AS_q\": no parameter \"q\" here; parameters: m, n",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, m_list: [8, 16], n: 8}\n",
       {"benchmarks[0].benchmark_sweep_params[0].m_list: sets \"m\" again "
        "(already set by \"m\")",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, n_list: [], num_runs: 3}\n",
       {"n_list: an empty list sweeps nothing", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: swiglu_fwd\n"
       "  benchmark_sweep_params:\n"
       "  - {m: 8, n: 7}\n",
       {"bad.yaml:4: benchmarks[0].benchmark_sweep_params[0].n: swiglu_fwd "
        "splits its [m, n] input into two halves: n must be even, got 7",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  num_runs: 0\n"
       "  benchmark_params: [{m: 8, n: 8}]\n",
       {"bad.yaml:3: benchmarks[0].num_runs: 0 is out of range", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_params: [{m: 8, n: 8, num_runs: 2.5}]\n",
       {"benchmarks[0].benchmark_params[0].num_runs: expected an integer", NULL,
        NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  mesh: 2x2x1\n"
       "  benchmark_params: [{m: 8, n: 8}]\n",
       {"bad.yaml:3: benchmarks[0].mesh: unknown key \"mesh\"; valid: "
        "benchmark_name, benchmark_params, benchmark_sweep_params, num_runs, "
        "csv_path, trace_dir, xlml_metrics_dir, xla_dump_dir, topology, "
        "warmup_tries",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  csv_path: out\n",
       {"bad.yaml:2: benchmarks[0]: add has neither benchmark_params nor "
        "benchmark_sweep_params",
        NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_params: [{m: 8, n: 8}]\n"
       "- benchmark_params: [{m: 8, n: 8}]\n",
       {"bad.yaml:4: benchmarks[1]: `benchmark_name` is missing", NULL, NULL}},
      {"benchmarks:\n"
       "- benchmark_name: add\n"
       "  benchmark_sweep_params: {m: 8, n: 8}\n",
       {"bad.yaml:3: benchmarks[0].benchmark_sweep_params: expected a list of "
        "maps, got a map",
        NULL, NULL}},
  };
  expect_errors("bad.yaml", k_cases, sizeof k_cases / sizeof *k_cases);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_torchao_seed_files_unknown_names),
      cmocka_unit_test(test_torchao_seed_files_build),
      cmocka_unit_test(test_torchao_unbuildable_kept_skipped),
      cmocka_unit_test(test_torchao_baseline_versions_expand),
      cmocka_unit_test(test_torchao_single_map),
      cmocka_unit_test(test_torchao_baseline_first_once),
      cmocka_unit_test(test_torchao_torch_keys_noted_once),
      cmocka_unit_test(test_torchao_device_not_here),
      cmocka_unit_test(test_torchao_errors),
      cmocka_unit_test(test_torchao_training_options_recorded),
      cmocka_unit_test(test_jax_sweeps),
      cmocka_unit_test(test_jax_predecessor_files),
      cmocka_unit_test(test_jax_name_table),
      cmocka_unit_test(test_jax_run_records),
      cmocka_unit_test(test_jax_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
