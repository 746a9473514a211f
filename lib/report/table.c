/* The console table and its markdown twin: the same columns, aligned text
 * for terminals, pipes for markdown. Rows are printed as results finish.
 * A model's row (a composite op) is followed by its details: mode,
 * accuracy against the high-precision model, peak memory, forward and
 * backward times, and each step of its graph timed alone; on the console
 * right under the row, in markdown after the table (a line under a row
 * would end the table). Rows of primitive ops have none. The same goes for
 * the one-line notes under a row (why it did not run, warnings): under it
 * on the console, in a list after the table in markdown. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"

/* Everything written so far reached the stream: a full disk or a closed
 * pipe is an error with its reason, not a table that silently stops. */
static mb_status_t flushed(mb_report_t *rep) {
  if (fflush(rep->out) == 0 && !ferror(rep->out)) return MB_OK;
  return mb__fail(MB_ERR_IO, "writing the table: %s",
                  errno ? strerror(errno) : "write error");
}

static mb_status_t table_begin(mb_report_t *rep) {
  /* Markdown is never fitted: it has no width to fit. Fitted, the
   * titles come with the rows at close (their widths are the cells'). */
  const int md = rep->format == MB_FORMAT_MARKDOWN;
  mb_status_t st =
      mb__table_new(rep->columns, md ? 0 : rep->width, &rep->table);
  if (st != MB_OK) return st;
  if (mb__table_buffered(rep->table)) return MB_OK;
  mb__table_put_titles(rep->table, rep->out, rep->format == MB_FORMAT_MARKDOWN);
  return flushed(rep);
}

static void fmt_rate(double v, char *buf, size_t cap) {
  if (!(v > 0) || !isfinite(v))
    snprintf(buf, cap, "-");
  else
    snprintf(buf, cap, v >= 100 ? "%.0f" : v >= 1 ? "%.1f" : "%.3f", v);
}

/* ---- a model's details ---------------------------------------------------
 */

static void fmt_bytes(double b, char *buf, size_t cap) {
  static const char *const k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  for (; b >= 1024 && u + 1 < sizeof k_units / sizeof *k_units; u++) b /= 1024;
  snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", b, k_units[u]);
}

/* "  inference: accuracy 40.0 dB SQNR vs the high-precision model (floor
 * 30 dB): pass, rel err 0.01; peak memory 225.0 KiB", then in training
 * "  forward 1.2 ms (noise 1.0%), backward 2.5 ms (noise 0.8%), each
 * alone", then whether the parts add up to the whole. */
static void put_summary(FILE *f, const mb_result_t *r) {
  mb_accuracy_t a = MB_ACCURACY_INIT;
  char mem[32];
  fprintf(f, "  %s", *r->mode ? r->mode : "inference");
  if (mb_result_accuracy(r, &a) == MB_OK && a.checked)
    fprintf(f,
            ": accuracy %.1f dB SQNR vs the high-precision model (floor "
            "%.0f dB): %s, rel err %.3g",
            a.sqnr_db, a.min_sqnr_db, a.pass ? "pass" : "FAIL", a.rel_err);
  if (r->info.peak_memory_bytes > 0) {
    fmt_bytes(r->info.peak_memory_bytes, mem, sizeof mem);
    fprintf(f, "; peak memory %s", mem);
  }
  fputc('\n', f);
  mb_step_time_t ph[2] = {MB_STEP_TIME_INIT, MB_STEP_TIME_INIT};
  if (mb_result_phase(r, MB_PHASE_BACKWARD, &ph[1]) == MB_OK &&
      mb_result_phase(r, MB_PHASE_FORWARD, &ph[0]) == MB_OK) {
    char t[2][32];
    for (int p = 0; p < 2; p++) mb_format_ns(ph[p].median_ns, t[p], 32);
    fprintf(f,
            "  forward %s (noise %.1f%%), backward %s (noise %.1f%%), each "
            "alone\n",
            t[0], 100.0 * ph[0].rel_stdev, t[1], 100.0 * ph[1].rel_stdev);
  }
  mb_parts_check_t c = MB_PARTS_CHECK_INIT;
  if (mb_result_parts_check(r, &c) == MB_OK && c.checked) {
    char sum[32], whole[32];
    mb_format_ns(c.sum_ns, sum, sizeof sum);
    mb_format_ns(c.whole_ns, whole, sizeof whole);
    fprintf(f, "  the %s alone add up to %s, the whole is %s (%+.0f%%): %s\n",
            c.of, sum, whole, 100.0 * (c.sum_ns / c.whole_ns - 1.0),
            c.agree ? "within noise" : "DISAGREE beyond noise");
  }
}

/* One line per step: phase, label, median alone, share of the timed
 * steps' sum (setup steps are not timed: weights quantized once). */
static void put_steps(FILE *f, const mb_result_t *r) {
  const size_t n = mb_result_step_count(r);
  double total = 0;
  if (n == 0) return; /* a fused kernel: one step, the row itself */
  for (size_t i = 0; i < n; i++) {
    mb_step_time_t s = MB_STEP_TIME_INIT;
    if (mb_result_step(r, i, &s) == MB_OK && isfinite(s.median_ns))
      total += s.median_ns;
  }
  fprintf(f, "  steps (each timed alone; share of their sum):\n");
  for (size_t i = 0; i < n; i++) {
    mb_step_time_t s = MB_STEP_TIME_INIT;
    char t[32];
    if (mb_result_step(r, i, &s) != MB_OK) continue;
    if (!isfinite(s.median_ns)) {
      fprintf(f, "    %-8s %-28s %10s  (untimed)           %s/%s\n",
              mb_phase_name(s.phase), s.label, "-", s.op, s.impl);
      continue;
    }
    mb_format_ns(s.median_ns, t, sizeof t);
    fprintf(f, "    %-8s %-28s %10s %4.0f%%  noise %5.1f%%  %s/%s\n",
            mb_phase_name(s.phase), s.label, t,
            total > 0 ? 100.0 * s.median_ns / total : 0.0, 100.0 * s.rel_stdev,
            s.op, s.impl);
  }
}

/* The details as text (malloc'd; NULL when out of memory). */
static char *details(const mb_result_t *r, const char *title) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  if (title) fprintf(f, "%s\n", title);
  put_summary(f, r);
  put_steps(f, r);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* *text += more (a malloc'd string, NULL when empty). */
static mb_status_t append_text(char **text, const char *more) {
  const size_t have = *text ? strlen(*text) : 0, add = strlen(more);
  char *grown = realloc(*text, have + add + 1);
  if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "table report: out of memory");
  memcpy(grown + have, more, add + 1);
  *text = grown;
  return MB_OK;
}

/* Markdown: kept in rep->doc (an array of texts) until the table ends;
 * fitted: appended to the row's text `under`; streamed: printed. */
static mb_status_t add_details(mb_report_t *rep, const mb_result_t *r,
                               mb__cells_t cells, char **under) {
  char title[6 * MB__CELL];
  int md = rep->format == MB_FORMAT_MARKDOWN;
  if (md)
    snprintf(title, sizeof title, "%.191s %.191s %.191s %.191s (%.191s)",
             *cells[MB__COL_NAME] ? cells[MB__COL_NAME] : cells[MB__COL_OP],
             cells[MB__COL_SHAPE], cells[MB__COL_DTYPE], cells[MB__COL_VARIANT],
             cells[MB__COL_BACKEND]);
  char *text = details(r, md ? title : NULL);
  if (!text) return mb__fail(MB_ERR_NO_MEMORY, "table report: out of memory");
  mb_status_t st = MB_OK;
  if (!md && !mb__table_buffered(rep->table)) {
    fputs(text, rep->out);
  } else if (!md) {
    st = append_text(under, text);
  } else {
    cJSON *item = NULL;
    if ((rep->doc || (rep->doc = cJSON_CreateArray())) &&
        (item = cJSON_CreateString(text)))
      cJSON_AddItemToArray(rep->doc, item);
    else
      st = mb__fail(MB_ERR_NO_MEMORY, "table report: out of memory");
  }
  free(text);
  return st;
}

static void put_kept_details(mb_report_t *rep) {
  if (cJSON_GetArraySize(rep->doc) == 0) return;
  fputs("\nModel rows, step by step:\n\n```text\n", rep->out);
  const cJSON *item;
  int first = 1;
  cJSON_ArrayForEach(item, rep->doc) {
    fprintf(rep->out, "%s%s", first ? "" : "\n", item->valuestring);
    first = 0;
  }
  fputs("```\n", rep->out);
}

/* One line about the row: under it on the console (printed, or appended
 * to `under` when fitted); in markdown kept, with the row's identity, for
 * the list after the table. */
static mb_status_t add_note(mb_report_t *rep, mb__cells_t cells,
                            const char *raw, char **under) {
  char text[1024];
  mb_escape_controls(raw, text, sizeof text);
  if (rep->format != MB_FORMAT_MARKDOWN) {
    if (!mb__table_buffered(rep->table)) {
      fprintf(rep->out, "  %s\n", text);
      return MB_OK;
    }
    char line[1040];
    snprintf(line, sizeof line, "  %s\n", text);
    return append_text(under, line);
  }
  const char *impl = cells[MB__COL_IMPL], *variant = cells[MB__COL_VARIANT];
  char line[8 * MB__CELL + 1024];
  snprintf(line, sizeof line,
           "- %.191s %.191s %.191s%s%.191s (%.191s%s%.191s): %s",
           *cells[MB__COL_NAME] ? cells[MB__COL_NAME] : cells[MB__COL_OP],
           cells[MB__COL_SHAPE], cells[MB__COL_DTYPE], *variant ? " " : "",
           variant, cells[MB__COL_BACKEND], *impl ? " " : "", impl, text);
  cJSON *item = NULL;
  if ((rep->notes || (rep->notes = cJSON_CreateArray())) &&
      (item = cJSON_CreateString(line))) {
    cJSON_AddItemToArray(rep->notes, item);
    return MB_OK;
  }
  return mb__fail(MB_ERR_NO_MEMORY, "table report: out of memory");
}

static void put_kept_notes(mb_report_t *rep) {
  if (cJSON_GetArraySize(rep->notes) == 0) return;
  fputs("\nNotes:\n\n", rep->out);
  const cJSON *item;
  cJSON_ArrayForEach(item, rep->notes) {
    fprintf(rep->out, "%s\n", item->valuestring);
  }
}

/* ---- rows ----------------------------------------------------------------
 */

static void fmt_time(double ns, int ran, char *buf) {
  if (ran)
    mb_format_ns(ns, buf, MB__CELL);
  else
    snprintf(buf, MB__CELL, "-");
}

void mb__table_cells(const mb_result_t *r, mb__cells_t cells) {
  mb__cells_t raw;
  const int ran = r->info.status == MB_RESULT_OK;
  const mb_op_params_t *p = &r->info.params;
  const mb_stats_t *s = &r->stats;
  snprintf(raw[MB__COL_NAME], MB__CELL, "%s", r->name);
  snprintf(raw[MB__COL_OP], MB__CELL, "%s", *r->alias ? r->alias : r->op);
  mb__result_shape(r, raw[MB__COL_SHAPE], MB__CELL);
  if (p->dtype_out != p->dtype)
    snprintf(raw[MB__COL_DTYPE], MB__CELL, "%s->%s", mb_dtype_name(p->dtype),
             mb_dtype_name(p->dtype_out));
  else
    snprintf(raw[MB__COL_DTYPE], MB__CELL, "%s", mb_dtype_name(p->dtype));
  /* A plan's recipe varies the problem as the op's parameters do. */
  char *variant = raw[MB__COL_VARIANT];
  mb__result_variant(r, variant, MB__CELL);
  if (*r->recipe) {
    size_t len = strlen(variant);
    snprintf(variant + len, MB__CELL - len, "%s%s", len ? " " : "", r->recipe);
  }
  snprintf(raw[MB__COL_BACKEND], MB__CELL, "%s", r->backend);
  snprintf(raw[MB__COL_IMPL], MB__CELL, "%s%s", r->impl,
           r->info.emulated ? " (emu)" : "");
  snprintf(raw[MB__COL_CACHE], MB__CELL, "%s",
           mb_cache_policy_name(r->info.cache));
  fmt_time(s->median, ran, raw[MB__COL_MEDIAN]);
  fmt_time(s->min, ran, raw[MB__COL_MIN]);
  fmt_time(s->p10, ran, raw[MB__COL_P10]);
  fmt_time(s->p90, ran, raw[MB__COL_P90]);
  fmt_time(s->max, ran, raw[MB__COL_MAX]);
  fmt_time(s->mean, ran, raw[MB__COL_MEAN]);
  snprintf(raw[MB__COL_NOISE], MB__CELL, ran ? "%.2f%%" : "-",
           100.0 * s->rel_stdev);
  snprintf(raw[MB__COL_SAMPLES], MB__CELL, ran ? "%llu" : "-",
           (unsigned long long)s->count);
  snprintf(raw[MB__COL_STOP], MB__CELL, "%s",
           ran && s->stop_reason ? s->stop_reason : "-");
  const double rates[] = {r->derived.tflops * 1e3, r->derived.gbps,
                          r->derived.pct_peak, r->derived.pct_roof};
  for (int i = 0; i < 4; i++)
    fmt_rate(ran ? rates[i] : NAN, raw[MB__COL_GFLOPS + i], MB__CELL);
  if (isfinite(r->info.speedup_vs_baseline))
    snprintf(raw[MB__COL_SPEEDUP], MB__CELL, "%.2fx",
             r->info.speedup_vs_baseline);
  else
    snprintf(raw[MB__COL_SPEEDUP], MB__CELL, "-");
  snprintf(raw[MB__COL_CHECK], MB__CELL, "%s",
           !ran               ? mb_result_status_name(r->info.status)
           : !r->corr.checked ? "-"
           : r->corr.pass     ? "pass"
                              : "FAIL");
  for (int c = 0; c < MB__COL_COUNT; c++)
    mb_escape_controls(raw[c], cells[c], MB__CELL);
}

static mb_status_t table_row(mb_report_t *rep, const mb_result_t *r) {
  mb__cells_t cells;
  mb__table_cells(r, cells);
  const int ran = r->info.status == MB_RESULT_OK;
  const int md = rep->format == MB_FORMAT_MARKDOWN;
  if (!mb__table_buffered(rep->table))
    mb__table_put_row(rep->table, rep->out, md, cells);
  /* Why it did not run belongs with the row, not in a log; so do doubts
   * about the figures it did produce. */
  char note[960], *under = NULL;
  mb_status_t st = MB_OK;
  if (!ran) {
    snprintf(note, sizeof note, "%s: %s", cells[MB__COL_CHECK], r->reason);
    st = add_note(rep, cells, note, &under);
  }
  if (st == MB_OK && ran && *r->warning) {
    snprintf(note, sizeof note, "warning: %s", r->warning);
    st = add_note(rep, cells, note, &under);
  }
  if (st == MB_OK && ran && r->stats.throttled) {
    snprintf(note, sizeof note,
             "warning: %llu of %llu samples taken while the device "
             "reported throttling (kept; see telemetry)",
             (unsigned long long)r->stats.throttled,
             (unsigned long long)r->stats.count);
    st = add_note(rep, cells, note, &under);
  }
  mb_accuracy_t a = MB_ACCURACY_INIT;
  const int model = mb_result_step_count(r) > 0 ||
                    (mb_result_accuracy(r, &a) == MB_OK && a.checked);
  if (st == MB_OK && ran && model) st = add_details(rep, r, cells, &under);
  if (st == MB_OK && mb__table_buffered(rep->table))
    st = mb__table_keep(rep->table, cells, under);
  free(under);
  return st != MB_OK ? st : flushed(rep);
}

static mb_status_t table_end(mb_report_t *rep) {
  if (mb__table_buffered(rep->table)) mb__table_render(rep->table, rep->out);
  put_kept_notes(rep);
  put_kept_details(rep);
  return flushed(rep);
}

const mb__writer_t mb__writer_table = {table_begin, table_row, table_end, 0};
const mb__writer_t mb__writer_markdown = {table_begin, table_row, table_end, 0};
