/* ossdb: the PyTorch OSS benchmark database's record list, as torchao's
 * dashboard runner writes it — a JSON array with one record per (result,
 * metric): time_ms, tflops, speedup(wrt baseline), correctness; for a
 * model (a composite op) also sqnr_db (its accuracy against the
 * high-precision model), peak_memory_mb (10^6 bytes) and, in training,
 * forward_time_ms and backward_time_ms (each phase alone). Written
 * whole at close; to a file, the results are streamed as JSON lines
 * meanwhile (json.c). */
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

/* What every record of a result shares: benchmark and model. */
static cJSON *record_base(const mb_result_t *r) {
  char id[512], name[128], type[160];
  cJSON *rec = cJSON_CreateObject();
  if (!rec) return NULL;
  cJSON *b = cJSON_AddObjectToObject(rec, "benchmark");
  cJSON_AddStringToObject(b, "name", "libmicrobench");
  cJSON_AddStringToObject(b, "mode", *r->mode ? r->mode : "inference");
  cJSON_AddStringToObject(
      b, "dtype", *r->recipe ? r->recipe : mb_dtype_name(r->info.params.dtype));
  cJSON *x = cJSON_AddObjectToObject(b, "extra_info");
  cJSON_AddStringToObject(x, "device", r->backend);
  cJSON_AddStringToObject(x, "arch", r->device);
  cJSON_AddStringToObject(x, "op", r->op);
  cJSON_AddStringToObject(x, "impl", r->impl);
  cJSON_AddStringToObject(x, "cache", mb_cache_policy_name(r->info.cache));
  mb__result_id(r, id, sizeof id);
  cJSON_AddStringToObject(x, "id", id);
  cJSON *m = cJSON_AddObjectToObject(rec, "model");
  model_name(r, name, sizeof name);
  cJSON_AddStringToObject(m, "name", name);
  snprintf(type, sizeof type, "micro-benchmark %s",
           *r->model ? r->model : r->op);
  cJSON_AddStringToObject(m, "type", type);
  cJSON *origins = cJSON_AddArrayToObject(m, "origins");
  cJSON_AddItemToArray(origins, cJSON_CreateString("libmicrobench"));
  return rec;
}

static mb_status_t add_record(cJSON *doc, const mb_result_t *r,
                              const char *metric, double value) {
  cJSON *rec = record_base(r);
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
  const struct {
    const char *name;
    int present;
    double value;
  } k_metrics[] = {
      {"time_ms", ok && isfinite(r->stats.median), r->stats.median / 1e6},
      {"tflops", ok && isfinite(r->derived.tflops), r->derived.tflops},
      {"speedup(wrt baseline)", isfinite(r->info.speedup_vs_baseline),
       r->info.speedup_vs_baseline},
      {"correctness", r->corr.checked, r->corr.pass ? 1.0 : 0.0},
      {"sqnr_db", model && a.checked && isfinite(a.sqnr_db), a.sqnr_db},
      {"peak_memory_mb", model && r->info.peak_memory_bytes > 0,
       r->info.peak_memory_bytes / 1e6},
      /* Training only: inference has no backward to set the forward
       * apart from the whole step. */
      {"forward_time_ms", model && isfinite(bwd) && isfinite(fwd), fwd / 1e6},
      {"backward_time_ms", model && isfinite(bwd), bwd / 1e6},
  };
  for (size_t i = 0; st == MB_OK && i < sizeof k_metrics / sizeof *k_metrics;
       i++)
    if (k_metrics[i].present)
      st = add_record(rep->doc, r, k_metrics[i].name, k_metrics[i].value);
  return st;
}

static mb_status_t ossdb_end(mb_report_t *rep) {
  return mb__put_document(rep, rep->doc);
}

const mb__writer_t mb__writer_ossdb = {ossdb_begin, ossdb_row, ossdb_end, 1};
