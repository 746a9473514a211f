/* The console table and its markdown twin: the same columns, aligned text
 * for terminals, pipes for markdown. Rows are printed as results finish. */
#include <math.h>
#include <string.h>

#include "report.h"

typedef struct column {
  const char *title;
  int width; /* table mode; negative = left-aligned */
} column_t;

static const column_t k_columns[] = {
    {"op", -18},     {"shape", -16}, {"dtype", -14},  {"variant", -18},
    {"backend", -7}, {"impl", -12},  {"cache", -5},   {"median", 11},
    {"noise", 7},    {"samples", 7}, {"GFLOP/s", 10}, {"GB/s", 9},
    {"%peak", 6},    {"speedup", 7}, {"check", -6}};
#define NUM_COLUMNS (sizeof k_columns / sizeof k_columns[0])

static void put_row(mb_report_t *rep, const char *const *cells) {
  int md = rep->format == MB_FORMAT_MARKDOWN;
  for (size_t i = 0; i < NUM_COLUMNS; i++) {
    if (md)
      fprintf(rep->out, "| %s ", cells[i]);
    else
      fprintf(rep->out, "%s%*s", i ? "  " : "", k_columns[i].width, cells[i]);
  }
  fputs(md ? "|\n" : "\n", rep->out);
}

static mb_status_t table_begin(mb_report_t *rep) {
  const char *titles[NUM_COLUMNS];
  for (size_t i = 0; i < NUM_COLUMNS; i++) titles[i] = k_columns[i].title;
  put_row(rep, titles);
  if (rep->format == MB_FORMAT_MARKDOWN) {
    for (size_t i = 0; i < NUM_COLUMNS; i++)
      fputs(k_columns[i].width < 0 ? "|:---" : "|---:", rep->out);
    fputs("|\n", rep->out);
  }
  fflush(rep->out);
  return MB_OK;
}

static void fmt_rate(double v, char *buf, size_t cap) {
  if (!(v > 0) || !isfinite(v))
    snprintf(buf, cap, "-");
  else
    snprintf(buf, cap, v >= 100 ? "%.0f" : v >= 1 ? "%.1f" : "%.3f", v);
}

static mb_status_t table_row(mb_report_t *rep, const mb_result_t *r) {
  char shape[64], dtype[48], median[32], noise[16], samples[24], gflops[24],
      gbps[24], pct[16], speedup[24], check[16], variant[160], impl[48];
  /* A plan's recipe varies the problem as the op's parameters do. */
  mb__result_variant(r, variant, sizeof variant);
  if (*r->recipe) {
    size_t len = strlen(variant);
    snprintf(variant + len, sizeof variant - len, "%s%s", len ? " " : "",
             r->recipe);
  }
  snprintf(impl, sizeof impl, "%s%s", r->impl,
           r->info.emulated ? " (emu)" : "");
  const mb_op_params_t *p = &r->info.params;
  mb__result_shape(r, shape, sizeof shape);
  if (p->dtype_out != p->dtype)
    snprintf(dtype, sizeof dtype, "%s->%s", mb_dtype_name(p->dtype),
             mb_dtype_name(p->dtype_out));
  else
    snprintf(dtype, sizeof dtype, "%s", mb_dtype_name(p->dtype));
  int ran = r->info.status == MB_RESULT_OK;
  if (ran) {
    mb_format_ns(r->stats.median, median, sizeof median);
    snprintf(noise, sizeof noise, "%.2f%%", 100.0 * r->stats.rel_stdev);
    snprintf(samples, sizeof samples, "%llu",
             (unsigned long long)r->stats.count);
    fmt_rate(r->derived.tflops * 1e3, gflops, sizeof gflops);
    fmt_rate(r->derived.gbps, gbps, sizeof gbps);
    fmt_rate(r->derived.pct_peak, pct, sizeof pct);
  } else {
    snprintf(median, sizeof median, "-");
    strcpy(noise, "-");
    strcpy(samples, "-");
    strcpy(gflops, "-");
    strcpy(gbps, "-");
    strcpy(pct, "-");
  }
  if (isfinite(r->info.speedup_vs_baseline))
    snprintf(speedup, sizeof speedup, "%.2fx", r->info.speedup_vs_baseline);
  else
    strcpy(speedup, "-");
  snprintf(check, sizeof check, "%s",
           !ran               ? mb_result_status_name(r->info.status)
           : !r->corr.checked ? "-"
           : r->corr.pass     ? "pass"
                              : "FAIL");
  const char *cells[NUM_COLUMNS] = {*r->alias ? r->alias : r->op,
                                    shape,
                                    dtype,
                                    variant,
                                    r->backend,
                                    impl,
                                    mb_cache_policy_name(r->info.cache),
                                    median,
                                    noise,
                                    samples,
                                    gflops,
                                    gbps,
                                    pct,
                                    speedup,
                                    check};
  put_row(rep, cells);
  /* Why it did not run belongs right under the row, not in a log. */
  if (!ran) fprintf(rep->out, "  %s: %s\n", check, r->reason);
  /* So are doubts about the figures it did produce. */
  if (ran && *r->warning) fprintf(rep->out, "  warning: %s\n", r->warning);
  if (ran && r->stats.throttled)
    fprintf(rep->out,
            "  warning: %llu of %llu samples taken while the device "
            "reported throttling (kept; see telemetry)\n",
            (unsigned long long)r->stats.throttled,
            (unsigned long long)r->stats.count);
  fflush(rep->out);
  return MB_OK;
}

static mb_status_t table_end(mb_report_t *rep) {
  fflush(rep->out);
  return MB_OK;
}

const mb__writer_t mb__writer_table = {table_begin, table_row, table_end, 0};
const mb__writer_t mb__writer_markdown = {table_begin, table_row, table_end, 0};
