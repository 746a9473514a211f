/* Results: identity, status, correctness, statistics, derived figures and
 * every sample. Read through copy-out accessors so the structs can grow. */
#include "results/result.h"

#include "ops/op_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_status_names[] = {"ok", "skipped", "failed"};

const char *mb_result_status_name(mb_result_status_t s) {
  return (unsigned)s < 3 ? k_status_names[s] : "?";
}

mb_result_t *mb__result_new(const char *op, const char *shape_syntax,
                            const mb_op_params_t *params,
                            const mb_bench_spec_t *spec,
                            const mb_device_t *dev) {
  mb_result_t *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->reason = mb__strdup("");
  r->op = mb__strdup(op);
  r->shape_syntax = mb__strdup(shape_syntax);
  r->backend = mb__strdup(dev ? dev->backend->name : spec->backend);
  r->device = mb__strdup(dev ? dev->info.name : "");
  r->impl = mb__strdup(spec->impl ? spec->impl : "");
  r->alias = mb__strdup(spec->op && strcmp(spec->op, op) != 0 ? spec->op : "");
  r->warning = mb__strdup("");
  r->timer = mb__strdup("");
  r->place = (mb_placement_t)MB_PLACEMENT_INIT;
  char **plan_fields[] = {&r->name, &r->recipe, &r->model, &r->mode,
                          &r->shape_name};
  int plan_ok = 1;
  for (size_t i = 0; i < sizeof plan_fields / sizeof *plan_fields; i++)
    plan_ok &= (*plan_fields[i] = mb__strdup("")) != NULL;
  if (!r->reason || !r->op || !r->shape_syntax || !r->backend || !r->device ||
      !r->impl || !r->alias || !r->warning || !r->timer || !plan_ok) {
    mb_result_destroy(r);
    return NULL;
  }
  r->timing = *spec;
  r->timing.op = r->timing.backend = r->timing.impl = NULL;
  r->timing.params = NULL;
  r->info = (mb_result_info_t){.struct_size = sizeof r->info,
                               .status = MB_RESULT_OK,
                               .reason = r->reason,
                               .op = r->op,
                               .backend = r->backend,
                               .device = r->device,
                               .device_index = dev ? dev->index : spec->device,
                               .impl = r->impl,
                               .cache = spec->cache,
                               .params = *params,
                               .seed = spec->seed,
                               .alias = r->alias,
                               .warning = r->warning,
                               .timer = r->timer,
                               .name = r->name,
                               .recipe = r->recipe,
                               .model = r->model,
                               .mode = r->mode,
                               .shape_name = r->shape_name,
                               .speedup_vs_baseline = NAN,
                               .flush = (spec->flags & MB_BENCH_FLUSH_READ)
                                            ? MB_FLUSH_READ
                                            : MB_FLUSH_WRITE};
  r->corr.struct_size = sizeof r->corr;
  r->stats.struct_size = sizeof r->stats;
  r->stats.stop_reason = "";
  r->derived.struct_size = sizeof r->derived;
  r->derived.bound = "";
  for (int i = 0; i < 2; i++) {
    r->phase[i] = (mb_step_time_t)MB_STEP_TIME_INIT;
    r->phase[i].label = mb_phase_name((mb_phase_t)i);
    r->phase[i].op = r->phase[i].impl = "";
    r->phase[i].phase = (mb_phase_t)i;
  }
  r->parts = (mb_parts_check_t)MB_PARTS_CHECK_INIT;
  r->accuracy = (mb_accuracy_t)MB_ACCURACY_INIT;
  return r;
}

void mb_result_destroy(mb_result_t *r) {
  if (!r) return;
  free(r->reason);
  free(r->op);
  free(r->backend);
  free(r->device);
  free(r->impl);
  free(r->shape_syntax);
  free(r->alias);
  free(r->samples);
  free(r->tele);
  free(r->flags);
  free(r->reps);
  for (size_t i = 0; i < r->num_notes; i++) {
    free(r->notes[i].key);
    free(r->notes[i].text);
  }
  free(r->notes);
  free(r->warning);
  free(r->timer);
  free(r->name);
  free(r->recipe);
  free(r->model);
  free(r->mode);
  free(r->shape_name);
  cJSON_Delete(r->config);
  mb__result_free_steps(r);
  free(r->json);
  free(r);
}

void mb__result_set_status(mb_result_t *r, mb_result_status_t s,
                           const char *reason) {
  char *copy = mb__strdup(reason);
  r->info.status = s;
  if (copy) {
    free(r->reason);
    r->reason = copy;
    r->info.reason = copy;
  }
}

void mb__result_set_impl(mb_result_t *r, const char *impl) {
  char *copy = mb__strdup(impl);
  if (!copy) return;
  free(r->impl);
  r->impl = copy;
  r->info.impl = copy;
}

mb_status_t mb__result_add_note(mb_result_t *r, const char *key,
                                const char *text, double value) {
  struct mb__note *grown =
      realloc(r->notes, (r->num_notes + 1) * sizeof *grown);
  if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a note");
  r->notes = grown;
  struct mb__note *n = &r->notes[r->num_notes];
  n->key = mb__strdup(key ? key : "");
  n->text = text ? mb__strdup(text) : NULL;
  n->value = value;
  if (!n->key || (text && !n->text)) {
    free(n->key);
    free(n->text);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a note");
  }
  r->num_notes++;
  return MB_OK;
}

static void replace(char **slot, const char **view, char *text) {
  if (!text) return;
  free(*slot);
  *slot = text;
  *view = text;
}

void mb__result_warn(mb_result_t *r, const char *text) {
  size_t n = strlen(r->warning) + strlen(text) + 3;
  char *w = malloc(n);
  if (!w) return;
  snprintf(w, n, "%s%s%s", r->warning, *r->warning ? "; " : "", text);
  replace(&r->warning, &r->info.warning, w);
}

void mb__result_set_timer(mb_result_t *r, const char *timer) {
  replace(&r->timer, &r->info.timer, mb__strdup(timer ? timer : ""));
}

mb_status_t mb__result_set_plan(mb_result_t *r, const mb__result_plan_t *p) {
  struct {
    char **slot;
    const char **view;
    const char *text;
  } f[] = {{&r->name, &r->info.name, p->name},
           {&r->recipe, &r->info.recipe, p->recipe},
           {&r->model, &r->info.model, p->model},
           {&r->mode, &r->info.mode, p->mode},
           {&r->shape_name, &r->info.shape_name, p->shape_name}};
  mb_status_t st = MB_OK;
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
    char *copy = mb__strdup(f[i].text ? f[i].text : "");
    if (!copy) st = mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
    replace(f[i].slot, f[i].view, copy);
  }
  cJSON_Delete(r->config);
  r->config = p->config;
  free(r->json); /* built again with the new facts */
  r->json = NULL;
  return st;
}

size_t mb_result_note_count(const mb_result_t *r) {
  return r ? r->num_notes : 0;
}

mb_status_t mb_result_note(const mb_result_t *r, size_t i, const char **key,
                           const char **text, double *value) {
  if (!r || i >= r->num_notes)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_note: index %zu of %zu", i,
                    r ? r->num_notes : 0);
  if (key) *key = r->notes[i].key;
  if (text) *text = r->notes[i].text;
  if (value) *value = r->notes[i].value;
  return MB_OK;
}

static const char *const k_cache_names[] = {"cold", "hot", "rotate"};

const char *mb_cache_policy_name(mb_cache_policy_t p) {
  return (unsigned)p < 3 ? k_cache_names[p] : "?";
}

mb_status_t mb_cache_policy_from_name(const char *name,
                                      mb_cache_policy_t *out) {
  for (unsigned i = 0; i < 3; i++)
    if (name && !strcmp(name, k_cache_names[i])) {
      *out = (mb_cache_policy_t)i;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG,
                  "cache policy \"%s\"; valid: cold, hot, rotate",
                  name ? name : "(null)");
}

static const char *const k_flush_names[] = {"write", "read"};

const char *mb_flush_name(mb_flush_t f) {
  return (unsigned)f < 2 ? k_flush_names[f] : "?";
}

mb_status_t mb_flush_from_name(const char *name, mb_flush_t *out) {
  for (unsigned i = 0; i < 2; i++)
    if (name && !strcmp(name, k_flush_names[i])) {
      *out = (mb_flush_t)i;
      return MB_OK;
    }
  return mb__fail(MB_ERR_INVALID_ARG, "flush \"%s\"; valid: write, read",
                  name ? name : "(null)");
}

void mb__result_shape(const mb_result_t *r, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < r->info.params.ndim && len < cap; i++) {
    int n = snprintf(buf + len, cap - len, "%s%lld", i ? "x" : "",
                     (long long)r->info.params.shape[i]);
    if (n < 0) break;
    len += (size_t)n;
  }
}

void mb__result_problem_id(const mb_result_t *r, char *buf, size_t cap) {
  char shape[128], variant[96];
  mb__result_shape(r, shape, sizeof shape);
  mb__result_variant(r, variant, sizeof variant);
  for (char *c = variant; *c; c++) /* one path segment, no blanks */
    if (*c == ' ') *c = ',';
  const mb_op_params_t *p = &r->info.params;
  snprintf(buf, cap, "%s/%s/%s.%s.%s%s%s%s%s%s%s", r->op, shape,
           mb_dtype_name(p->dtype), mb_dtype_name(p->dtype_b),
           mb_dtype_name(p->dtype_out), *variant ? "/" : "", variant,
           *r->recipe ? "/" : "", r->recipe, *r->mode ? "/" : "", r->mode);
}

void mb__result_id(const mb_result_t *r, char *buf, size_t cap) {
  char problem[512];
  mb__result_problem_id(r, problem, sizeof problem);
  /* A cold sample flushed by reading is another measurement than one
   * flushed by writing. */
  const int read =
      r->info.cache == MB_CACHE_COLD && r->info.flush == MB_FLUSH_READ;
  snprintf(buf, cap, "%s/%s:%u/%s/%s%s", problem, r->backend,
           r->info.device_index, *r->impl ? r->impl : "-",
           mb_cache_policy_name(r->info.cache), read ? "-read" : "");
}

mb_status_t mb_result_info(const mb_result_t *r, mb_result_info_t *out) {
  if (!r) return mb__fail(MB_ERR_INVALID_ARG, "mb_result_info: NULL result");
  return mb__struct_out(MB__STRUCT_RESULT_INFO, "mb_result_info", &r->info,
                        out);
}

mb_status_t mb_result_set_placement(mb_result_t *r, const mb_placement_t *p) {
  mb_placement_t full = MB_PLACEMENT_INIT;
  if (!r || !p)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_set_placement: NULL %s",
                    r ? "placement" : "result");
  mb_status_t st =
      mb__struct_in(MB__STRUCT_PLACEMENT, "mb_result_set_placement", p, &full);
  if (st != MB_OK) return st;
  if (full.ranks < 1 || full.rank < 0 || full.rank >= full.ranks ||
      full.local_rank < 0 || full.local_rank > full.rank)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_result_set_placement: rank %d (local %d) of %d",
                    full.rank, full.local_rank, full.ranks);
  full.host[sizeof full.host - 1] = '\0';
  r->place = full;
  free(r->json); /* built again with the placement */
  r->json = NULL;
  return MB_OK;
}

mb_status_t mb_result_placement(const mb_result_t *r, mb_placement_t *out) {
  if (!r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_placement: NULL result");
  return mb__struct_out(MB__STRUCT_PLACEMENT, "mb_result_placement", &r->place,
                        out);
}

mb_status_t mb_result_correctness(const mb_result_t *r, mb_correctness_t *out) {
  if (!r)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_correctness: NULL result");
  return mb__struct_out(MB__STRUCT_CORRECTNESS, "mb_result_correctness",
                        &r->corr, out);
}

mb_status_t mb_result_stats(const mb_result_t *r, mb_stats_t *out) {
  if (!r) return mb__fail(MB_ERR_INVALID_ARG, "mb_result_stats: NULL result");
  return mb__struct_out(MB__STRUCT_STATS, "mb_result_stats", &r->stats, out);
}

mb_status_t mb_result_derived(const mb_result_t *r, mb_derived_t *out) {
  if (!r) return mb__fail(MB_ERR_INVALID_ARG, "mb_result_derived: NULL result");
  return mb__struct_out(MB__STRUCT_DERIVED, "mb_result_derived", &r->derived,
                        out);
}

const char *mb_result_json(const mb_result_t *r) {
  if (!r) return NULL;
  if (!r->json) {
    cJSON *obj = mb__result_to_cjson(r);
    if (!obj) return NULL;
    ((mb_result_t *)r)->json = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
  }
  return r->json;
}

static void scaling_text(const mb_scaling_t *s, char *buf, size_t cap) {
  if (s->mode == MB_SCALE_BLOCK || s->mode == MB_SCALE_GROUP)
    snprintf(buf, cap, "%lldx%lld", (long long)s->block[0],
             (long long)s->block[1]);
  else
    snprintf(buf, cap, "%s", mb_scale_mode_name(s->mode));
}

/* Appends " word" (or "word" at the start) to buf. */
static void put_word(char *buf, size_t cap, const char *word) {
  size_t len = strlen(buf);
  if (len < cap) snprintf(buf + len, cap - len, "%s%s", len ? " " : "", word);
}

void mb__result_variant(const mb_result_t *r, char *buf, size_t cap) {
  const mb_op_params_t *p = &r->info.params;
  const mb_op_t *op = mb_op_find(r->op);
  uint32_t m = op ? op->param_mask : 0;
  char word[96], sa[32], sb[32];
  buf[0] = '\0';
  if ((m & MB__P_SCALES) && (p->scale_a.mode || p->scale_b.mode)) {
    scaling_text(&p->scale_a, sa, sizeof sa);
    scaling_text(&p->scale_b, sb, sizeof sb);
    snprintf(word, sizeof word, "a:%s b:%s", sa, sb);
    put_word(buf, cap, word);
  }
  if ((m & MB__P_SCALE_A) && !(m & MB__P_SCALES)) {
    scaling_text(&p->scale_a, word, sizeof word);
    put_word(buf, cap, word);
  }
  if (p->dtype_scale != MB_DTYPE_NONE)
    put_word(buf, cap, mb_dtype_name(p->dtype_scale));
  if ((m & MB__P_QUANT) && (p->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    snprintf(word, sizeof word, "q:%s", mb_dtype_name(p->dtype_q));
    put_word(buf, cap, word);
  }
  if ((m & MB__P_ALPHA_BETA) && p->beta != 0) put_word(buf, cap, "beta");
  if (m & MB__P_ACT) put_word(buf, cap, mb_activation_name(p->activation));
  /* Then each flag's word, in the list's order (quantize-inputs' is the
   * q:<dtype_q> above). */
  static const struct {
    uint32_t flag, mask;
    const char *label;
  } k_flags[] = {
#define ROW(NAME, group, key, result, inverted, name, label, ...) \
  {MB_PARAM_##NAME, MB__P_##group, label},
      MB_PARAM_FLAG_LIST(ROW)
#undef ROW
  };
  for (size_t i = 0; i < sizeof k_flags / sizeof *k_flags; i++)
    if (k_flags[i].label && (m & k_flags[i].mask) &&
        (p->flags & k_flags[i].flag))
      put_word(buf, cap, k_flags[i].label);
  if (mb__gqa_kv_heads(op, p)) {
    snprintf(word, sizeof word, "kv_heads:%lld", (long long)p->kv_heads);
    put_word(buf, cap, word);
  }
  /* A collective over 2 ranks is another problem than over 8. */
  if (m & MB__P_REDUCE)
    put_word(buf, cap, mb_reduce_op_name((mb_reduce_op_t)p->reduce_op));
  if ((m & MB__P_ROOT) && p->root) {
    snprintf(word, sizeof word, "root:%d", (int)p->root);
    put_word(buf, cap, word);
  }
  if (m & MB__P_COLL) {
    snprintf(word, sizeof word, "ranks:%d", (int)p->ranks);
    put_word(buf, cap, word);
  }
}
