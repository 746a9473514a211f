/* ossdb: the PyTorch OSS benchmark database's record list, as torchao's
 * dashboard runner writes it — a JSON array with one record per (result,
 * metric): time_ms, tflops, speedup(wrt baseline), correctness; for a
 * model (a composite op) also sqnr_db (its accuracy against the
 * high-precision model), peak_memory_mb (10^6 bytes) and, in training,
 * forward_time_ms and backward_time_ms (each phase alone). Written
 * whole at close; to a file, the results are streamed as JSON lines
 * meanwhile (json.c).
 *
 * A result of a torchao config gets the records torchao's runner writes
 * (pytorch/ao benchmarks/dashboard/ci_microbenchmark_runner.py at
 * dbef6992, create_benchmark_result and run_ci_benchmarks): its names for
 * the benchmark and model, and its four metrics in its order, then ours
 * that it has no metric for; its dashboard reads them as its own. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

/* The shape preset's name, else the dims joined by '-' ("1024-1024-1024"). */
static void model_name(const mb_result_t *r, char *buf, size_t cap) {
  if (*r->shape_name) {
    snprintf(buf, cap, "%s", r->shape_name);
    return;
  }
  mb__result_shape(r, buf, cap);
  for (char *c = buf; *c; c++)
    if (*c == 'x') *c = '-';
}

/* torchao's model name: "{quantization}-{M}-{K}-{N}" (runner line 73). */
static void torchao_model_name(const cJSON *facts, char *buf, size_t cap) {
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(facts, "quantization");
  double mkn[3];
  static const char *const k_dims[] = {"m", "k", "n"};
  for (int i = 0; i < 3; i++) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(facts, k_dims[i]);
    mkn[i] = cJSON_IsNumber(d) ? d->valuedouble : 0;
  }
  snprintf(buf, cap, "%s-%.0f-%.0f-%.0f",
           cJSON_IsString(q) ? q->valuestring : "", mkn[0], mkn[1], mkn[2]);
}

/* What every record of a result shares: benchmark and model, in torchao's
 * words for a torchao result (runner lines 78-93; its mode is fixed to
 * inference because it runs nothing else: ours says which ran). */
static cJSON *record_base(const mb_result_t *r, const cJSON *facts) {
  char id[512], name[128], type[160];
  cJSON *rec = cJSON_CreateObject();
  if (!rec) return NULL;
  cJSON *b = cJSON_AddObjectToObject(rec, "benchmark");
  cJSON_AddStringToObject(b, "name",
                          facts ? "micro-benchmark api" : "libmicrobench");
  cJSON_AddStringToObject(b, "mode", *r->mode ? r->mode : "inference");
  cJSON_AddStringToObject(
      b, "dtype", *r->recipe ? r->recipe : mb_dtype_name(r->info.params.dtype));
  cJSON *x = cJSON_AddObjectToObject(b, "extra_info");
  cJSON_AddStringToObject(x, "device",
                          facts ? mb__torchao_device(r) : r->backend);
  cJSON_AddStringToObject(x, "arch", r->device);
  if (facts)
    cJSON_AddItemToObject(
        x, "torch_compile_mode",
        cJSON_Duplicate(
            cJSON_GetObjectItemCaseSensitive(facts, "torch_compile_mode"), 1));
  cJSON_AddStringToObject(x, "op", r->op);
  cJSON_AddStringToObject(x, "impl", r->impl);
  cJSON_AddStringToObject(x, "cache", mb_cache_policy_name(r->info.cache));
  mb__result_id(r, id, sizeof id);
  cJSON_AddStringToObject(x, "id", id);
  cJSON *m = cJSON_AddObjectToObject(rec, "model");
  if (facts)
    torchao_model_name(facts, name, sizeof name);
  else
    model_name(r, name, sizeof name);
  cJSON_AddStringToObject(m, "name", name);
  if (facts)
    snprintf(type, sizeof type, "micro-benchmark custom layer");
  else
    snprintf(type, sizeof type, "micro-benchmark %s",
             *r->model ? r->model : r->op);
  cJSON_AddStringToObject(m, "type", type);
  cJSON *origins = cJSON_AddArrayToObject(m, "origins");
  cJSON_AddItemToArray(origins,
                       cJSON_CreateString(facts ? "torchao" : "libmicrobench"));
  return rec;
}

/* torchao's records carry metric.extra_info, with the unit when it has
 * one (runner lines 98-100, 146-148). */
static mb_status_t add_record(cJSON *doc, const mb_result_t *r,
                              const cJSON *facts, const char *metric,
                              const char *unit, double value) {
  cJSON *rec = record_base(r, facts);
  cJSON *m = rec ? cJSON_AddObjectToObject(rec, "metric") : NULL;
  cJSON *values = m ? cJSON_CreateArray() : NULL;
  if (!values) {
    cJSON_Delete(rec);
    return mb__fail(MB_ERR_NO_MEMORY, "ossdb report: out of memory");
  }
  cJSON_AddStringToObject(m, "name", metric);
  cJSON_AddItemToArray(values, cJSON_CreateNumber(value));
  cJSON_AddItemToObject(m, "benchmark_values", values);
  cJSON_AddNumberToObject(m, "target_value", 0);
  cJSON *x = facts ? cJSON_AddObjectToObject(m, "extra_info") : NULL;
  if (x && unit) cJSON_AddStringToObject(x, "unit", unit);
  cJSON_AddArrayToObject(rec, "runners");
  cJSON_AddObjectToObject(rec, "dependencies");
  cJSON_AddItemToArray(doc, rec);
  return MB_OK;
}

static mb_status_t ossdb_begin(mb_report_t *rep) {
  return (rep->doc = cJSON_CreateArray())
             ? MB_OK
             : mb__fail(MB_ERR_NO_MEMORY, "ossdb report: out of memory");
}

static mb_status_t ossdb_row(mb_report_t *rep, const mb_result_t *r) {
  cJSON *obj = mb__result_to_cjson(r);
  if (!obj) return mb__fail(MB_ERR_NO_MEMORY, "ossdb report: out of memory");
  mb_status_t st = mb__lines_put(rep, obj);
  cJSON_Delete(obj);
  /* Figures only from a result that ran; a verdict whenever there is one
   * (a wrong result in strict mode is failed, and says so here). */
  int ok = r->info.status == MB_RESULT_OK;
  /* A primitive op's records stay as they were: these are a model's (a
   * composite's graph, or a fused kernel checked for accuracy). */
  mb_accuracy_t a = MB_ACCURACY_INIT;
  if (mb_result_accuracy(r, &a) != MB_OK) a.checked = 0;
  const int model = ok && (mb_result_step_count(r) > 0 || a.checked);
  const double fwd = mb_result_phase_ns(r, MB_PHASE_FORWARD);
  const double bwd = mb_result_phase_ns(r, MB_PHASE_BACKWARD);
  const cJSON *facts = mb__torchao_facts(r);
  mb__torchao_figures_t t;
  mb__torchao_figures(r, &t);
  /* Which layout has the metric: torchao's four stand in for our time,
   * speedup and memory; the rest are in both. */
  enum { OURS = 1, TORCHAO = 2, BOTH = 3 };
  const struct {
    const char *name;
    int layouts;
    const char *unit; /* torchao's records */
    int present;
    double value;
  } k_metrics[] = {
      /* run_ci_benchmarks' order (runner lines 128-176). */
      {"Fwd Speedup (x)", TORCHAO, NULL, isfinite(t.speedup), t.speedup},
      {"Bfloat16 Fwd Time (ms)", TORCHAO, "ms", isfinite(t.baseline_ms),
       t.baseline_ms},
      {"Quantized Fwd Time (ms)", TORCHAO, "ms", isfinite(t.quantized_ms),
       t.quantized_ms},
      {"Allocated Memory (MB)", TORCHAO, "MB", isfinite(t.allocated_mb),
       t.allocated_mb},
      {"time_ms", OURS, NULL, ok && isfinite(r->stats.median),
       r->stats.median / 1e6},
      {"tflops", BOTH, NULL, ok && isfinite(r->derived.tflops),
       r->derived.tflops},
      {"speedup(wrt baseline)", OURS, NULL,
       isfinite(r->info.speedup_vs_baseline), r->info.speedup_vs_baseline},
      {"correctness", BOTH, NULL, r->corr.checked, r->corr.pass ? 1.0 : 0.0},
      {"sqnr_db", BOTH, "dB", model && a.checked && isfinite(a.sqnr_db),
       a.sqnr_db},
      {"peak_memory_mb", OURS, NULL, model && r->info.peak_memory_bytes > 0,
       r->info.peak_memory_bytes / 1e6},
      /* Training only: inference has no backward to set the forward
       * apart from the whole step. */
      {"forward_time_ms", BOTH, "ms", model && isfinite(bwd) && isfinite(fwd),
       fwd / 1e6},
      {"backward_time_ms", BOTH, "ms", model && isfinite(bwd), bwd / 1e6},
  };
  const int layout = facts ? TORCHAO : OURS;
  for (size_t i = 0; st == MB_OK && i < sizeof k_metrics / sizeof *k_metrics;
       i++)
    if (k_metrics[i].present && (k_metrics[i].layouts & layout))
      st = add_record(rep->doc, r, facts, k_metrics[i].name, k_metrics[i].unit,
                      k_metrics[i].value);
  return st;
}

static mb_status_t ossdb_end(mb_report_t *rep) {
  return mb__put_document(rep, rep->doc);
}

const mb__writer_t mb__writer_ossdb = {ossdb_begin, ossdb_row, ossdb_end, 1};
