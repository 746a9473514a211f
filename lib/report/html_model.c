/* The HTML report's model: every input file read (mb_results_load) and
 * each result's figures taken out once, so the charts never walk JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "microbench.h"
#include "report/html.h"
#include "results/results_internal.h"

static double num_at(const cJSON *obj, const char *a, const char *b) {
  return mb__json_num(cJSON_GetObjectItemCaseSensitive(obj, a), b);
}

/* The host a result ran on, when the report spans several files: its
 * merge tag, else its file's meta. */
static const char *host_of(const mb_results_t *set, const cJSON *r) {
  const char *h =
      mb__json_str(cJSON_GetObjectItemCaseSensitive(r, "source"), "host");
  if (h) return h;
  const cJSON *host =
      cJSON_GetObjectItemCaseSensitive(mb__results_meta(set), "host");
  return mb__json_str(host, "hostname");
}

static const cJSON *find_device(const mb_results_t *set, const char *backend,
                                double index, const char *host) {
  const cJSON *d;
  cJSON_ArrayForEach(d, mb__results_devices(set)) {
    const char *b = mb__json_str(d, "backend"), *h = mb__json_str(d, "host");
    if (b && strcmp(b, backend) == 0 && mb__json_num(d, "index") == index &&
        (!h || !host || strcmp(h, host) == 0))
      return d;
  }
  return NULL;
}

/* "256x256x256" from the id's second part (as the tables write it), the
 * dims' product as the size that orders shapes. */
static void shape_of(const cJSON *r, const char *id, mb__hres_t *out) {
  const char *slash = strchr(id, '/');
  const char *end = slash ? strchr(slash + 1, '/') : NULL;
  const char *name = mb__json_str(r, "shape_name");
  if (name)
    snprintf(out->shape, sizeof out->shape, "%s", name);
  else if (slash)
    snprintf(out->shape, sizeof out->shape, "%.*s",
             (int)(end ? end - slash - 1 : (long)strlen(slash + 1)), slash + 1);
  out->size = 1;
  const cJSON *d;
  cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(r, "shape")) {
    if (cJSON_IsNumber(d) && d->valuedouble > 0) out->size *= d->valuedouble;
  }
  const char *model = mb__json_str(r, "model");
  snprintf(out->column, sizeof out->column, "%s%s%s", model ? model : "",
           model ? "/" : "", out->shape);
}

static size_t device_slot(mb__html_t *m, const char *key, const cJSON *dev) {
  for (size_t i = 0; i < m->num_devs; i++)
    if (strcmp(m->devs[i].key, key) == 0) {
      if (!m->devs[i].dev) m->devs[i].dev = dev;
      return i;
    }
  mb__hdev_t *d = &m->devs[m->num_devs];
  snprintf(d->key, sizeof d->key, "%s", key);
  d->dev = dev;
  return m->num_devs++;
}

static void read_result(mb__html_t *m, size_t input, const cJSON *r,
                        mb__hres_t *out) {
  const mb_results_t *set = m->sets[input];
  *out = (mb__hres_t){.r = r, .input = input};
  out->id = mb__json_str(r, "id");
  out->op = mb__json_str(r, "op");
  out->status = mb__json_str(r, "status");
  out->recipe = mb__json_str(r, "recipe");
  out->impl = mb__json_str(r, "impl");
  out->dtype = mb__json_str(cJSON_GetObjectItemCaseSensitive(r, "dtypes"), "a");
  if (!out->op) out->op = "?";
  if (!out->status) out->status = "?";
  if (!out->dtype) out->dtype = "?";
  if (!out->impl) out->impl = "";
  const char *backend = mb__json_str(r, "backend");
  double index = mb__json_num(r, "device_index");
  const char *host = m->num_sets > 1 ? host_of(set, r) : NULL;
  char key[sizeof out->device];
  snprintf(key, sizeof key, "%s:%.0f%s%s", backend ? backend : "?",
           isfinite(index) ? index : 0, host ? "@" : "", host ? host : "");
  snprintf(out->device, sizeof out->device, "%s", key);
  device_slot(
      m, key,
      backend ? find_device(set, backend, index, host_of(set, r)) : NULL);
  shape_of(r, out->id, out);
  const char *slash = strrchr(m->paths[input], '/');
  out->run = m->num_sets < 2 ? "" : slash ? slash + 1 : m->paths[input];
  snprintf(out->row, sizeof out->row, "%s%s%s%s",
           out->recipe ? out->recipe : "", *out->run ? " [" : "", out->run,
           *out->run ? "]" : "");
  out->median_ns = num_at(r, "stats", "median_ns");
  out->flop = num_at(r, "derived", "flop");
  out->bytes = num_at(r, "derived", "bytes");
  out->intensity = num_at(r, "derived", "intensity");
  out->speedup = mb__json_num(r, "speedup_vs_baseline");
}

mb_status_t mb__html_load(mb__html_t *m, const char *const *paths,
                          size_t count) {
  m->paths = paths;
  m->num_sets = count;
  m->sets = calloc(count ? count : 1, sizeof *m->sets);
  if (!m->sets) return mb__fail(MB_ERR_NO_MEMORY, "report: out of memory");
  size_t total = 0;
  for (size_t i = 0; i < count; i++) {
    mb_status_t st = mb_results_load(paths[i], &m->sets[i]);
    if (st != MB_OK) return st;
    total += mb_results_count(m->sets[i]);
  }
  m->res = calloc(total ? total : 1, sizeof *m->res);
  m->devs = calloc(total ? total : 1, sizeof *m->devs);
  if (!m->res || !m->devs)
    return mb__fail(MB_ERR_NO_MEMORY, "report: out of memory");
  for (size_t i = 0; i < count; i++)
    for (size_t k = 0; k < mb_results_count(m->sets[i]); k++)
      read_result(m, i, mb__results_item(m->sets[i], k), &m->res[m->num_res++]);
  if (count != 2) return MB_OK;
  /* The options were checked before anything was read (mb_report_html):
   * what fails here is what the files hold (a key twice, named with its
   * file), and it only costs the report its comparison. */
  mb_status_t st =
      mb_results_compare(m->sets[0], m->sets[1], &m->compare, &m->cmp);
  if (st == MB_ERR_NO_MEMORY) return st;
  if (st != MB_OK)
    snprintf(m->cmp_error, sizeof m->cmp_error, "%s", mb_error_last());
  return MB_OK;
}

void mb__html_free(mb__html_t *m) {
  mb_comparison_destroy(m->cmp);
  for (size_t i = 0; m->sets && i < m->num_sets; i++)
    mb_results_destroy(m->sets[i]);
  free(m->sets);
  free(m->res);
  free(m->devs);
}

int mb__html_timed(const mb__hres_t *r) {
  return strcmp(r->status, "ok") == 0 && r->median_ns > 0;
}

void mb__html_tip(mb__sbuf_t *b, const mb__hres_t *r) {
  char t[32], rate[32] = "-", bw[32] = "-";
  mb_format_ns(r->median_ns, t, sizeof t);
  if (r->flop > 0 && r->median_ns > 0)
    mb__si(r->flop / r->median_ns * 1e9, rate, sizeof rate);
  if (r->bytes > 0 && r->median_ns > 0)
    mb__si(r->bytes / r->median_ns * 1e9, bw, sizeof bw);
  mb__sbuf_esc(b, r->id);
  char line[256];
  snprintf(line, sizeof line, " | %s | median %s | %sFLOP/s | %sB/s", r->status,
           t, rate, bw);
  mb__sbuf_esc(b, line);
  if (isfinite(r->speedup)) {
    snprintf(line, sizeof line, " | speedup %.3gx", r->speedup);
    mb__sbuf_esc(b, line);
  }
}

void mb__html_svg_open(mb__sbuf_t *b, const char *cls, double width,
                       double height, double *y, double *w) {
  mb__svg_open(b, cls, width, height);
  if (y) {
    mb__sbuf_printf(b, " y=\"%.0f\"", *y);
    *y += height;
  }
  if (w && width > *w) *w = width;
}
