/* Internal: a plan's entries and their storage, shared by plan.c (building,
 * reading, running) and plan_passes.c (the passes after reading). */
#ifndef MB_LIB_PLAN_PLAN_INTERNAL_H
#define MB_LIB_PLAN_PLAN_INTERNAL_H

#include "plan/plan_build.h"

typedef struct plan_entry {
  mb_plan_entry_t pub; /* strings point at the copies below */
  char *name, *group, *op, *model, *recipe, *mode, *shape_name;
  char *device_request, *skip_reason, *csv_path, *backend, *impl;
  char *baseline_key;
  int is_baseline;
  /* The skip is the library's limit, not the device's: --backend keeps
   * it, and the params may not resolve (mb__plan_item_t.unsupported). */
  int unsupported;
  cJSON *config;
  double median_ns; /* after mb_plan_run, when ok; NAN before */
} plan_entry_t;

struct mb_plan {
  const char *schema; /* static */
  plan_entry_t *entries;
  size_t count, cap;
  char **notes;
  size_t num_notes;
  /* Entry names, open addressing: unique names in O(1) per entry, so a
   * sweep of 100000 entries loads in well under a second. Slots hold an
   * entry index + 1 (0: empty); `names_cap` is a power of two. */
  size_t *names;
  size_t names_cap;
  /* Where the file asks for the run's trace (mb_plan_trace); NULL: none */
  char *trace;
};

/* An entry's storage freed; its public view re-pointed at its strings
 * (after the entry moved); the name table rebuilt for `want` entries. */
void mb__plan_entry_free(plan_entry_t *e);
void mb__plan_entry_views(plan_entry_t *e);
mb_status_t mb__plan_rehash_names(mb_plan_t *plan, size_t want);

/* --backend, --filter, --max-flop and the timing override, in that order
 * (plan_passes.c); then every recipe entry linked to its baseline. */
mb_status_t mb__plan_passes(mb__pb_t *pb, const mb_plan_options_t *opts);
void mb__plan_link_baselines(mb_plan_t *plan);

#endif
