/* CSV (RFC 4180): one header row, then one row per result with the scalar
 * fields; flushed per row so a crash keeps every finished result. Numbers
 * are written with 17 significant digits (they read back exactly); an
 * unknown one (NaN: not checked, no baseline) is an empty field. The
 * columns added with models come last, so readers that index the older
 * ones keep working: a model's accuracy against the high-precision model
 * (accuracy_*; `sqnr_db` before them is the reference check's), its
 * forward and backward times alone, and the peak memory of any result.
 *
 * Results of a torchao config are led by torchao's own columns in its
 * order (torchao.c), so its scripts read the file unchanged; ours follow,
 * under their own names (two, `name` and `device`, appear twice: a reader
 * by name that keeps the first gets torchao's, one that keeps the last
 * ours). The first row chooses the layout for the file, so the header
 * waits for it (an empty report gets ours at the end). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

static const char *const k_columns[] = {"id",
                                        "name",
                                        "problem",
                                        "op",
                                        "alias",
                                        "model",
                                        "recipe",
                                        "mode",
                                        "variant",
                                        "emulated",
                                        "shape",
                                        "shape_name",
                                        "dtype",
                                        "dtype_b",
                                        "dtype_out",
                                        "dtype_acc",
                                        "backend",
                                        "device",
                                        "impl",
                                        "cache",
                                        "status",
                                        "reason",
                                        "correct",
                                        "max_abs_err",
                                        "max_rel_err",
                                        "sqnr_db",
                                        "samples",
                                        "batch",
                                        "min_ns",
                                        "median_ns",
                                        "mean_ns",
                                        "max_ns",
                                        "stdev_ns",
                                        "rel_stdev",
                                        "p10_ns",
                                        "p25_ns",
                                        "p75_ns",
                                        "p90_ns",
                                        "p99_ns",
                                        "iqr_ns",
                                        "stop_reason",
                                        "flop",
                                        "bytes",
                                        "tflops",
                                        "gbps",
                                        "pct_peak",
                                        "speedup_vs_baseline",
                                        "accuracy_sqnr_db",
                                        "accuracy_rel_err",
                                        "accuracy_pass",
                                        "accuracy_min_sqnr_db",
                                        "forward_ns",
                                        "backward_ns",
                                        "peak_memory_bytes",
                                        "pct_roof",
                                        "bound",
                                        "bandwidth_gbps",
                                        "parts_agree"};
#define NUM_COLUMNS (sizeof k_columns / sizeof k_columns[0])

static void put_text(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\r\n")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputc(last ? '\n' : ',', f);
}

/* The number's text in buf: "" for NaN, "inf"/"-inf", else %.17g. */
typedef char num_t[32];
static const char *num(num_t buf, double v) {
  if (isnan(v))
    buf[0] = '\0';
  else
    snprintf(buf, sizeof(num_t),
             isfinite(v) ? "%.17g"
             : v > 0     ? "inf"
                         : "-inf",
             v);
  return buf;
}

static mb_status_t csv_begin(mb_report_t *rep) {
  rep->csv_layout = MB__CSV_NONE;
  return MB_OK;
}

static void put_header(mb_report_t *rep, const mb_result_t *first) {
  rep->csv_layout =
      first && mb__torchao_facts(first) ? MB__CSV_TORCHAO : MB__CSV_OURS;
  const char *name;
  for (size_t i = 0; rep->csv_layout == MB__CSV_TORCHAO &&
                     (name = mb__torchao_column(i)) != NULL;
       i++)
    put_text(rep->out, name, 0);
  for (size_t i = 0; i < NUM_COLUMNS; i++)
    put_text(rep->out, k_columns[i], i + 1 == NUM_COLUMNS);
}

static mb_status_t csv_row(mb_report_t *rep, const mb_result_t *r) {
  char id[512], problem[512], shape[128], variant[96], count[24], batch[16];
  const mb_op_params_t *p = &r->info.params;
  const mb_correctness_t *c = &r->corr;
  const mb_stats_t *s = &r->stats;
  const mb_derived_t *d = &r->derived;
  mb__result_id(r, id, sizeof id);
  mb__result_problem_id(r, problem, sizeof problem);
  mb__result_shape(r, shape, sizeof shape);
  mb__result_variant(r, variant, sizeof variant);
  snprintf(count, sizeof count, "%llu", (unsigned long long)s->count);
  snprintf(batch, sizeof batch, "%u", s->batch);
  mb_accuracy_t a = MB_ACCURACY_INIT;
  if (mb_result_accuracy(r, &a) != MB_OK) a.checked = 0;
  const double peak =
      r->info.peak_memory_bytes > 0 ? r->info.peak_memory_bytes : NAN;
  num_t n[29];
  const char *cells[] = {
      id,
      r->name,
      problem,
      r->op,
      r->alias,
      r->model,
      r->recipe,
      r->mode,
      variant,
      r->info.emulated ? "true" : "false",
      shape,
      r->shape_name,
      mb_dtype_name(p->dtype),
      mb_dtype_name(p->dtype_b),
      mb_dtype_name(p->dtype_out),
      mb_dtype_name(p->dtype_acc),
      r->backend,
      r->device,
      r->impl,
      mb_cache_policy_name(r->info.cache),
      mb_result_status_name(r->info.status),
      r->reason,
      !c->checked ? ""
      : c->pass   ? "true"
                  : "false",
      num(n[0], c->checked ? c->max_abs_err : NAN),
      num(n[1], c->checked ? c->max_rel_err : NAN),
      num(n[2], c->checked ? c->sqnr_db : NAN),
      count,
      batch,
      num(n[3], s->min),
      num(n[4], s->median),
      num(n[5], s->mean),
      num(n[6], s->max),
      num(n[7], s->stdev),
      num(n[8], s->rel_stdev),
      num(n[9], s->p10),
      num(n[10], s->p25),
      num(n[11], s->p75),
      num(n[12], s->p90),
      num(n[13], s->p99),
      num(n[14], s->iqr),
      s->stop_reason ? s->stop_reason : "",
      num(n[15], d->flop),
      num(n[16], d->bytes),
      num(n[17], d->tflops),
      num(n[18], d->gbps),
      num(n[19], d->pct_peak),
      num(n[20], r->info.speedup_vs_baseline),
      num(n[21], a.checked ? a.sqnr_db : NAN),
      num(n[22], a.checked ? a.rel_err : NAN),
      !a.checked ? ""
      : a.pass   ? "true"
                 : "false",
      num(n[23], a.checked ? a.min_sqnr_db : NAN),
      num(n[24], mb_result_phase_ns(r, MB_PHASE_FORWARD)),
      num(n[25], mb_result_phase_ns(r, MB_PHASE_BACKWARD)),
      num(n[26], peak),
      num(n[27], d->pct_roof > 0 ? d->pct_roof : NAN),
      d->bound ? d->bound : "",
      num(n[28], d->bandwidth_gbps > 0 ? d->bandwidth_gbps : NAN),
      !r->parts.checked ? ""
      : r->parts.agree  ? "true"
                        : "false"};
  _Static_assert(sizeof cells / sizeof cells[0] == NUM_COLUMNS,
                 "one cell per CSV column");
  if (rep->csv_layout == MB__CSV_NONE) put_header(rep, r);
  char text[1024];
  for (size_t i = 0;
       rep->csv_layout == MB__CSV_TORCHAO && mb__torchao_column(i); i++) {
    mb__torchao_cell(r, i, text, sizeof text);
    put_text(rep->out, text, 0);
  }
  for (size_t i = 0; i < NUM_COLUMNS; i++)
    put_text(rep->out, cells[i], i + 1 == NUM_COLUMNS);
  return fflush(rep->out) == 0 ? MB_OK : mb__fail(MB_ERR_IO, "writing CSV: %m");
}

static mb_status_t csv_end(mb_report_t *rep) {
  if (rep->csv_layout == MB__CSV_NONE) put_header(rep, NULL);
  return fflush(rep->out) == 0 ? MB_OK : mb__fail(MB_ERR_IO, "writing CSV: %m");
}

const mb__writer_t mb__writer_csv = {csv_begin, csv_row, csv_end, 0};
