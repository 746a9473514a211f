/* The passes over a plan after its file is read: --backend, --filter,
 * --max-flop and the timing override (mb_plan_options_t), then each recipe
 * entry linked to its baseline. */
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_internal.h"

/* Keeps the entries `keep` says yes to, in order; returns how many went.
 * One pass and one rehash, however many go. */
static size_t keep_if(mb_plan_t *plan,
                      int (*keep)(const plan_entry_t *e, const void *arg),
                      const void *arg) {
  size_t kept = 0, before = plan->count;
  for (size_t i = 0; i < before; i++) {
    if (!keep(&plan->entries[i], arg)) {
      mb__plan_entry_free(&plan->entries[i]);
      continue;
    }
    if (kept != i) plan->entries[kept] = plan->entries[i];
    mb__plan_entry_views(&plan->entries[kept++]);
  }
  plan->count = kept;
  if (kept != before)
    mb__plan_rehash_names(plan, kept); /* on OOM the names stay
                                  unique; nothing adds more */
  return before - kept;
}

static int name_matches(const plan_entry_t *e, const void *re) {
  return regexec(re, e->name, 0, NULL, 0) == 0;
}

static mb_status_t apply_filter(mb__pb_t *pb, const char *pattern) {
  regex_t re;
  int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char why[256];
    regerror(rc, &re, why, sizeof why);
    return mb__fail(MB_ERR_INVALID_ARG, "--filter \"%s\": %s", pattern, why);
  }
  size_t before = pb->plan->count;
  keep_if(pb->plan, name_matches, &re);
  regfree(&re);
  return mb__plan_note(pb, "--filter \"%s\" kept %zu of %zu benchmarks",
                       pattern, pb->plan->count, before);
}

static int within_flop(const plan_entry_t *e, const void *max_flop) {
  return e->pub.flop <= *(const double *)max_flop;
}

static mb_status_t apply_max_flop(mb__pb_t *pb, double max_flop) {
  size_t dropped = keep_if(pb->plan, within_flop, &max_flop);
  return dropped ? mb__plan_note(pb,
                                 "--max-flop %g left out %zu benchmark%s "
                                 "above it",
                                 max_flop, dropped, dropped == 1 ? "" : "s")
                 : MB_OK;
}

/* The caller's timing over every entry's: the fields of *given that
 * `fields` names (mb_plan_options_t.timing). */
static mb_status_t apply_timing(mb__pb_t *pb, const mb_bench_spec_t *given,
                                uint32_t fields) {
#define FIELD(bit, member)                              \
  {                                                     \
    MB_TIMING_##bit, offsetof(mb_bench_spec_t, member), \
        sizeof(((mb_bench_spec_t *)0)->member)          \
  }
  static const struct {
    uint32_t bit;
    size_t at, size;
  } k_fields[] = {
      FIELD(CRITERION, criterion),     FIELD(SAMPLES, samples),
      FIELD(MIN_SAMPLES, min_samples), FIELD(MIN_TIME, min_time_s),
      FIELD(MAX_NOISE, max_noise),     FIELD(TIMEOUT, timeout_s),
      FIELD(WARMUP, warmup_s),         FIELD(WARMUP_RUNS, warmup_runs),
      FIELD(REPETITIONS, repetitions),
  };
#undef FIELD
  const size_t n = sizeof k_fields / sizeof *k_fields;
  uint32_t known = 0;
  for (size_t f = 0; f < n; f++) known |= k_fields[f].bit;
  if (fields & ~known)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_plan_options_t.timing_fields 0x%x: 0x%x are not "
                    "MB_TIMING_* bits",
                    (unsigned)fields, (unsigned)(fields & ~known));
  if (!given || !fields) return MB_OK;
  /* An older caller's spec, at today's size (what it lacks: the default). */
  mb_bench_spec_t t = MB_BENCH_SPEC_INIT;
  mb_status_t st = mb__struct_in(MB__STRUCT_BENCH_SPEC, "mb_plan", given, &t);
  for (size_t i = 0; st == MB_OK && i < pb->plan->count; i++)
    for (size_t f = 0; f < n; f++)
      if (fields & k_fields[f].bit)
        memcpy((char *)&pb->plan->entries[i].pub.spec + k_fields[f].at,
               (const char *)&t + k_fields[f].at, k_fields[f].size);
  return st;
}

/* Every entry runs on `backend`; what the file asked for is recorded. */
static mb_status_t apply_backend(mb__pb_t *pb, const char *backend) {
  for (size_t i = 0; i < pb->plan->count; i++) {
    plan_entry_t *e = &pb->plan->entries[i];
    char *b = mb__strdup(backend), *skip = mb__strdup("");
    if (!e->config) e->config = cJSON_CreateObject();
    cJSON *o = e->config ? cJSON_CreateObject() : NULL;
    if (!b || !skip || !o) {
      free(b);
      free(skip);
      cJSON_Delete(o);
      return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
    }
    cJSON_AddStringToObject(o, "requested",
                            *e->device_request ? e->device_request
                            : *e->backend      ? e->backend
                                               : "(best available)");
    cJSON_AddStringToObject(o, "used", backend);
    cJSON_DeleteItemFromObject(e->config, "backend_override");
    cJSON_AddItemToObject(e->config, "backend_override", o);
    free(e->backend);
    e->backend = b;
    if (e->unsupported) { /* no backend builds it */
      free(skip);
    } else { /* "not available here" no longer applies */
      free(e->skip_reason);
      e->skip_reason = skip;
    }
    mb__plan_entry_views(e);
  }
  return pb->plan->count ? mb__plan_note(pb,
                                         "--backend %s overrides the file's "
                                         "device choice (recorded in each "
                                         "result)",
                                         backend)
                         : MB_OK;
}

/* Baselines: same key and backend, the entry marked is_baseline. */
void mb__plan_link_baselines(mb_plan_t *plan) {
  for (size_t i = 0; i < plan->count; i++) {
    plan_entry_t *e = &plan->entries[i];
    e->pub.baseline = SIZE_MAX;
    if (!*e->baseline_key || e->is_baseline) continue;
    for (size_t k = 0; k < plan->count; k++) {
      const plan_entry_t *b = &plan->entries[k];
      if (b->is_baseline && !strcmp(b->baseline_key, e->baseline_key) &&
          !strcmp(b->backend, e->backend)) {
        e->pub.baseline = k;
        break;
      }
    }
  }
}

mb_status_t mb__plan_passes(mb__pb_t *pb, const mb_plan_options_t *opts) {
  mb_status_t st = MB_OK;
  if (opts->backend) st = apply_backend(pb, opts->backend);
  if (st == MB_OK && opts->filter) st = apply_filter(pb, opts->filter);
  if (st == MB_OK && opts->max_flop > 0)
    st = apply_max_flop(pb, opts->max_flop);
  if (st == MB_OK) st = apply_timing(pb, opts->timing, opts->timing_fields);
  return st;
}
