/* torchao's own output layouts, for results of a torchao config: its CSV
 * columns (csv.c puts them first) and the figures its dashboard records
 * carry (ossdb.c), so torchao's scripts and dashboards read our files
 * unchanged.
 *
 * Followed: pytorch/ao at dbef6992fb6bc20da9c121baedfa8125625ab641, the
 * last commit with the microbenchmark runner (ac7bcee7 deleted it):
 * benchmarks/microbenchmarks/utils.py (BenchmarkConfig.to_dict,
 * BenchmarkResult.to_dict, generate_results_csv), benchmark_inference.py,
 * profiler.py and benchmarks/dashboard/ci_microbenchmark_runner.py.
 *
 * A result is torchao's when its config holds `torchao` (the entry as
 * torchao's BenchmarkConfig holds it, recorded by lib/plan/schema_torchao.c).
 * What we cannot measure the way torchao does is left empty, never made up
 * (docs/schema.md, "torchao drop-in outputs"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

const cJSON *mb__torchao_facts(const mb_result_t *r) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->config, "torchao");
  return cJSON_IsObject(f) ? f : NULL;
}

/* torch's name for the device a backend runs on: ROCm builds of PyTorch
 * call AMD GPUs "cuda" too. Other backends keep their own name. */
static const struct torch_device {
  const char *backend, *torch;
} k_torch_devices[] = {{"cpu", "cpu"}, {"cuda", "cuda"}, {"hip", "cuda"}};

const char *mb__torchao_device(const mb_result_t *r) {
  for (size_t i = 0; i < sizeof k_torch_devices / sizeof *k_torch_devices; i++)
    if (!strcmp(k_torch_devices[i].backend, r->backend))
      return k_torch_devices[i].torch;
  return r->backend;
}

void mb__torchao_figures(const mb_result_t *r, mb__torchao_figures_t *f) {
  const int ok = r->info.status == MB_RESULT_OK && isfinite(r->stats.median);
  const double speedup = r->info.speedup_vs_baseline;
  f->speedup = speedup;
  f->quantized_ms = ok ? r->stats.median / 1e6 : NAN;
  /* speedup = baseline median / this median (plan.c): the baseline's
   * median is the product, exact for the baseline itself (1.0) and
   * within an ulp or two for the others. */
  f->baseline_ms = ok && isfinite(speedup) ? speedup * f->quantized_ms : NAN;
  f->allocated_mb = ok && r->info.peak_memory_bytes > 0
                        ? r->info.peak_memory_bytes / 1e6
                        : NAN;
}

/* ---- Python's text of a value, as csv.writer writes it -----------------
 */

/* repr(float): the fewest digits that read back, positional for exponents
 * -4..15, else d.ddde+XX; "1.0", not "1". */
static void py_float(double v, char *buf, size_t cap) {
  if (!isfinite(v)) {
    snprintf(buf, cap, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return;
  }
  char e[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    if (strtod(e, NULL) == v) break;
  }
  char *x = strchr(e, 'e');
  const int exp = atoi(x + 1);
  if (exp < -4 || exp >= 16) {
    /* The mantissa is %e's; only its decimal point may be the locale's. */
    for (char *c = e; c < x; c++)
      if (*c == ',') *c = '.';
    snprintf(buf, cap, "%s", e);
    return;
  }
  char digits[24];
  size_t nd = 0;
  for (const char *c = e; c < x && nd + 1 < sizeof digits; c++)
    if (*c >= '0' && *c <= '9') digits[nd++] = *c;
  digits[nd] = '\0'; /* the fewest digits: no trailing zeros but 0's own */
  size_t len = 0;
  char out[64];
  if (signbit(v)) out[len++] = '-';
  if (exp < 0) {
    len += (size_t)snprintf(out + len, sizeof out - len, "0.%.*s%s", -exp - 1,
                            "0000", digits);
  } else {
    for (int i = 0; i <= exp; i++)
      out[len++] = (size_t)i < nd ? digits[i] : '0';
    out[len++] = '.';
    if ((size_t)exp + 1 < nd)
      len +=
          (size_t)snprintf(out + len, sizeof out - len, "%s", digits + exp + 1);
    else
      out[len++] = '0';
    out[len] = '\0';
  }
  snprintf(buf, cap, "%s", out);
}

/* str() of a value from the file's facts: an int (m, k, n) without a
 * point, None empty, booleans True/False. */
static void py_value(const cJSON *v, char *buf, size_t cap) {
  if (cJSON_IsString(v))
    snprintf(buf, cap, "%s", v->valuestring);
  else if (cJSON_IsBool(v))
    snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "True" : "False");
  else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
           fabs(v->valuedouble) < 9007199254740992.0)
    snprintf(buf, cap, "%.0f", v->valuedouble);
  else if (cJSON_IsNumber(v))
    py_float(v->valuedouble, buf, cap);
  else
    buf[0] = '\0'; /* None, or absent */
}

/* ---- the CSV columns ----------------------------------------------------
 */

typedef enum source {
  FACT,      /* the file's, from config.torchao */
  DEVICE,    /* where it ran, by torch's name */
  NOT_RUN,   /* a PyTorch profiler: never run here, so False */
  UNKNOWN,   /* torchao measures it, we cannot: empty (None) */
  BASELINE,  /* mb__torchao_figures' baseline_ms, */
  QUANTIZED, /* quantized_ms, */
  SPEEDUP,   /* speedup */
  MEMORY     /* and allocated_mb, in memory_stats */
} source_t;

/* generate_results_csv writes BenchmarkResult.to_dict()'s keys, which are
 * BenchmarkConfig.to_dict()'s (utils.py:90-106) then the result's own
 * (utils.py:128-144), in this order. Timings: torchao times eager and
 * torch.compile'd PyTorch; ours are our kernels, one timing, put in the
 * compiled columns its dashboard reads (ci_microbenchmark_runner.py:132,
 * 142, 155); the eager ones stay empty. */
static const struct column {
  const char *name;
  source_t source;
} k_columns[] = {
    {"name", FACT},
    {"quantization", FACT},
    {"sparsity", FACT},
    {"m", FACT},
    {"k", FACT},
    {"n", FACT},
    {"high_precision_dtype", FACT},
    {"torch_compile_mode", FACT},
    {"device", DEVICE},
    {"model_type", FACT},
    {"output_dir", FACT},
    {"enable_profiler", NOT_RUN},
    {"enable_memory_profiler", NOT_RUN},
    {"baseline_model_eager_inference_time_in_ms", UNKNOWN},
    {"quantized_model_eager_inference_time_in_ms", UNKNOWN},
    {"baseline_model_compiled_inference_time_in_ms", BASELINE},
    {"quantized_model_compiled_inference_time_in_ms", QUANTIZED},
    {"eager speedup on baseline", UNKNOWN},
    {"compile speedup on baseline", SPEEDUP},
    {"eager vs compile speedup", UNKNOWN},
    {"profiler_json_path", UNKNOWN},
    {"memory_profile_path", UNKNOWN},
    {"memory_visualization_path", UNKNOWN},
    {"memory_stats", MEMORY},
};

const char *mb__torchao_column(size_t i) {
  return i < sizeof k_columns / sizeof *k_columns ? k_columns[i].name : NULL;
}

static void py_number(double v, char *buf, size_t cap) {
  if (isnan(v))
    buf[0] = '\0'; /* unknown: None's empty field */
  else
    py_float(v, buf, cap);
}

void mb__torchao_cell(const mb_result_t *r, size_t i, char *buf, size_t cap) {
  mb__torchao_figures_t f;
  char num[40];
  mb__torchao_figures(r, &f);
  buf[0] = '\0';
  switch (k_columns[i].source) {
    case FACT:
      py_value(cJSON_GetObjectItemCaseSensitive(mb__torchao_facts(r),
                                                k_columns[i].name),
               buf, cap);
      break;
    case DEVICE:
      snprintf(buf, cap, "%s", mb__torchao_device(r));
      break;
    case NOT_RUN:
      snprintf(buf, cap, "False");
      break;
    case UNKNOWN:
      break;
    case BASELINE:
      py_number(f.baseline_ms, buf, cap);
      break;
    case QUANTIZED:
      py_number(f.quantized_ms, buf, cap);
      break;
    case SPEEDUP:
      py_number(f.speedup, buf, cap);
      break;
    case MEMORY:
      /* profiler.py:136-140: a dict of three peaks in 10^6 bytes; ours is
       * the peak our tensors held (allocated), none of the allocator's
       * cache (reserved) or its active blocks. */
      if (isfinite(f.allocated_mb)) {
        py_float(f.allocated_mb, num, sizeof num);
        snprintf(buf, cap, "{'allocated_bytes.all.peak': %s}", num);
      }
      break;
  }
}
