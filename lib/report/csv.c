/* CSV (RFC 4180): one header row, then one row per result with the scalar
 * fields; flushed per row so a crash keeps every finished result. */
#include <math.h>
#include <string.h>

#include "report.h"

static const char *const k_columns[] = {
    "id",      "op",       "alias",       "variant",     "emulated",
    "shape",   "dtype",    "dtype_b",     "dtype_out",   "dtype_acc",
    "backend", "device",   "impl",        "cache",       "status",
    "reason",  "correct",  "max_abs_err", "max_rel_err", "sqnr_db",
    "samples", "batch",    "min_ns",      "median_ns",   "mean_ns",
    "max_ns",  "stdev_ns", "rel_stdev",   "p10_ns",      "p25_ns",
    "p75_ns",  "p90_ns",   "p99_ns",      "iqr_ns",      "stop_reason",
    "flop",    "bytes",    "tflops",      "gbps",        "pct_peak"};

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

static void put_num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.17g,", v);
  else
    fputs(isnan(v) ? "," : (v > 0 ? "inf," : "-inf,"), f);
}

static mb_status_t csv_begin(mb_report_t *rep) {
  size_t n = sizeof k_columns / sizeof k_columns[0];
  for (size_t i = 0; i < n; i++) put_text(rep->out, k_columns[i], i + 1 == n);
  return fflush(rep->out) == 0 ? MB_OK : mb__fail(MB_ERR_IO, "writing CSV: %m");
}

static mb_status_t csv_row(mb_report_t *rep, const mb_result_t *r) {
  FILE *f = rep->out;
  char id[512], shape[128];
  const mb_op_params_t *p = &r->info.params;
  const mb_stats_t *s = &r->stats;
  const mb_derived_t *d = &r->derived;
  mb__result_id(r, id, sizeof id);
  mb__result_shape(r, shape, sizeof shape);
  char variant[96];
  mb__result_variant(r, variant, sizeof variant);
  const char *text[] = {id,
                        r->op,
                        r->alias,
                        variant,
                        r->info.emulated ? "true" : "false",
                        shape,
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
                        !r->corr.checked ? ""
                        : r->corr.pass   ? "true"
                                         : "false"};
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
    put_text(f, text[i], 0);
  put_num(f, r->corr.checked ? r->corr.max_abs_err : NAN);
  put_num(f, r->corr.checked ? r->corr.max_rel_err : NAN);
  put_num(f, r->corr.checked ? r->corr.sqnr_db : NAN);
  fprintf(f, "%llu,%u,", (unsigned long long)s->count, s->batch);
  const double nums[] = {s->min,   s->median,    s->mean, s->max,
                         s->stdev, s->rel_stdev, s->p10,  s->p25,
                         s->p75,   s->p90,       s->p99,  s->iqr};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) put_num(f, nums[i]);
  put_text(f, s->stop_reason ? s->stop_reason : "", 0);
  put_num(f, d->flop);
  put_num(f, d->bytes);
  put_num(f, d->tflops);
  put_num(f, d->gbps);
  fprintf(f, "%.6g\n", d->pct_peak);
  return fflush(f) == 0 ? MB_OK : mb__fail(MB_ERR_IO, "writing CSV: %m");
}

static mb_status_t csv_end(mb_report_t *rep) {
  return fflush(rep->out) == 0 ? MB_OK : mb__fail(MB_ERR_IO, "writing CSV: %m");
}

const mb__writer_t mb__writer_csv = {csv_begin, csv_row, csv_end};
