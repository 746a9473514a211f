/* Sweep ranges {start, end, multiplier | increase_by} expanded into their
 * values (plan_range.h), with the guards against the ranges on which the
 * loop never ends or runs away. */
#include <math.h>
#include <stdio.h>

#include "config/cfg_tree.h"
#include "internal.h"
#include "plan/plan_range.h"

/* The JAX suite runs at most 1000 combinations of a sweep (core/config.py),
 * and a native size sweep of 1000 values would take days: no more of a
 * range's values can be useful, so a longer range is refused rather than
 * built (a fuzzed {start: 1024, end: 3e12, increase_by: 2048} took seconds
 * to expand, growing its list one value at a time). */
#define MAX_RANGE_VALUES 1000u
#define PATH_CAP 512

static const char *const k_range_keys[] = {"start", "end", "multiplier",
                                           "increase_by", NULL};

typedef struct range {
  double start, end, mult, inc;
  int has_mult, has_inc;
} range_t;

static mb_cfg_node_t *number_node(double v, int line) {
  char text[64];
  if (v == floor(v) && fabs(v) < 9007199254740992.0)
    snprintf(text, sizeof text, "%.0f", v);
  else
    snprintf(text, sizeof text, "%.17g", v);
  mb_cfg_node_t *n = mb__cfg_new(MB_CFG_NUMBER, line, text);
  if (n) n->number = v;
  return n;
}

static mb_status_t range_number(mb__pb_t *pb, const mb_cfg_node_t *range,
                                const char *path, const char *key, int need,
                                mb__range_number_fn number, double *out,
                                int *given) {
  const mb_cfg_node_t *n = mb__cfg_get(range, key);
  char here[PATH_CAP];
  *given = n != NULL;
  if (!n && need)
    return mb__pb_error(pb, range, path,
                        "a range needs `%s` ({start, end, multiplier | "
                        "increase_by})",
                        key);
  if (!n) return MB_OK;
  mb__path_key(here, sizeof here, path, key);
  return number(pb, n, here, out);
}

static mb_status_t read_range(mb__pb_t *pb, const mb_cfg_node_t *m,
                              const char *path, mb__range_number_fn number,
                              range_t *r) {
  int given;
  mb_status_t st = mb__pb_check_keys(pb, m, path, k_range_keys);
  if (st == MB_OK)
    st = range_number(pb, m, path, "start", 1, number, &r->start, &given);
  if (st == MB_OK)
    st = range_number(pb, m, path, "end", 1, number, &r->end, &given);
  if (st == MB_OK)
    st = range_number(pb, m, path, "multiplier", 0, mb__pb_number, &r->mult,
                      &r->has_mult);
  if (st == MB_OK)
    st = range_number(pb, m, path, "increase_by", 0, mb__pb_number, &r->inc,
                      &r->has_inc);
  return st;
}

static mb_status_t one_step(mb__pb_t *pb, const mb_cfg_node_t *m,
                            const char *path, range_t *r) {
  if (!r->has_mult && !r->has_inc)
    return mb__pb_error(pb, m, path,
                        "a range needs `multiplier` or `increase_by`");
  if (r->has_mult && r->has_inc)
    return mb__pb_error(pb, m, path,
                        "give `multiplier` or `increase_by`, not both");
  return MB_OK;
}

/* Below 1 the suite's loop never ends. */
static mb_status_t sweep_step(mb__pb_t *pb, const mb_cfg_node_t *m,
                              const char *path, range_t *r) {
  if (!r->has_mult) r->mult = 1;
  if (r->mult > 1) {
    r->has_mult = 1;
    r->has_inc = 0;
    return MB_OK;
  }
  if (r->mult < 1)
    return mb__pb_error(pb, m, path,
                        "multiplier %g would never pass end: need multiplier "
                        "> 1, or 1 with increase_by",
                        r->mult);
  if (!r->has_inc) r->inc = 1;
  r->has_mult = 0;
  r->has_inc = 1;
  return MB_OK;
}

mb_status_t mb__range_expand(mb__pb_t *pb, const mb_cfg_node_t *m,
                             const char *path, mb__range_rule_t rule,
                             mb__range_number_fn number,
                             mb_cfg_node_t *values) {
  range_t r = {0, 0, 0, 0, 0, 0};
  mb_status_t st = read_range(pb, m, path, number, &r);
  if (st == MB_OK)
    st = rule == MB__RANGE_ONE_STEP ? one_step(pb, m, path, &r)
                                    : sweep_step(pb, m, path, &r);
  if (st != MB_OK) return st;
  if (r.has_mult && (r.mult <= 1 || r.start <= 0))
    return mb__pb_error(pb, m, path,
                        "multiplier %g from start %g would never pass end: "
                        "need multiplier > 1 and start > 0",
                        r.mult, r.start);
  if (r.has_inc && r.inc <= 0)
    return mb__pb_error(pb, m, path,
                        "increase_by %g would never pass end: need "
                        "increase_by > 0",
                        r.inc);
  if (r.start > r.end)
    return mb__pb_error(pb, m, path,
                        "start %g is above end %g: the range is empty", r.start,
                        r.end);
  for (double v = r.start; v <= r.end;
       v = r.has_mult ? v * r.mult : v + r.inc) {
    if (values->count == MAX_RANGE_VALUES)
      return mb__pb_error(pb, m, path,
                          "the range gives more than %u values (a sweep runs "
                          "at most %u combinations): raise start, lower end "
                          "or take larger steps",
                          MAX_RANGE_VALUES, MAX_RANGE_VALUES);
    mb_cfg_node_t *n = number_node(v, m->line);
    if (!n || mb__cfg_append(values, NULL, n) != MB_OK)
      return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
  }
  return MB_OK;
}
