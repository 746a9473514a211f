/* A plan split over the ranks of a job (mb_plan_assign, plan.h): greedy
 * longest-processing-time-first over groups of entries, deterministic so
 * that every rank computes the same split without talking. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "plan/plan_internal.h"

typedef struct group {
  size_t first; /* the lowest entry index in it: the tie-break */
  double cost;
} group_t;

/* Nominal figures: what matters is the ratio between entries. Every
 * benchmark pays a fixed part (warm-up, the check, the stopping rule's
 * minimum), so that many small ones weigh like the few large ones they
 * take as long as, and then a typical number of samples. */
#define NOMINAL_FLOP_S 1e12
#define NOMINAL_BYTES_S 1e11
#define NOMINAL_FIXED_S 1.0
#define NOMINAL_SAMPLES 100.0

static double entry_cost(const mb_plan_entry_t *e) {
  if (*e->skip_reason || mb_op_is_collective(mb_op_find(e->op))) return 0.0;
  const double t = fmax(e->flop / NOMINAL_FLOP_S, e->bytes / NOMINAL_BYTES_S);
  return NOMINAL_FIXED_S + (isfinite(t) && t > 0 ? NOMINAL_SAMPLES * t : 0.0);
}

static int by_cost(const void *a, const void *b) {
  const group_t *x = a, *y = b;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The root of entry i's group: follow baselines (a baseline has none). */
static size_t root_of(const mb_plan_t *plan, size_t i) {
  mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
  mb_plan_entry(plan, i, &e);
  return e.baseline == SIZE_MAX ? i : e.baseline;
}

mb_status_t mb_plan_assign(const mb_plan_t *plan, size_t ranks, size_t *owner) {
  if (!plan || !owner || !ranks)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_plan_assign: %s",
                    !ranks ? "no ranks" : "NULL argument");
  const size_t n = mb_plan_count(plan);
  group_t *groups = calloc(n ? n : 1, sizeof *groups);
  double *load = calloc(ranks, sizeof *load);
  size_t *root = calloc(n ? n : 1, sizeof *root);
  if (!groups || !load || !root) {
    free(groups), free(load), free(root);
    return mb__fail(MB_ERR_NO_MEMORY, "mb_plan_assign: out of memory");
  }
  /* groups[r] gathers the entries whose root is r (first: r itself). */
  for (size_t i = 0; i < n; i++) groups[i] = (group_t){i, 0.0};
  for (size_t i = 0; i < n; i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    mb_plan_entry(plan, i, &e);
    root[i] = root_of(plan, i);
    groups[root[i]].cost += entry_cost(&e);
  }
  /* Only roots are groups; the rest sort last and get no rank. */
  size_t num = 0;
  for (size_t i = 0; i < n; i++)
    if (root[i] == i) groups[num++] = groups[i];
  qsort(groups, num, sizeof *groups, by_cost);
  for (size_t g = 0; g < num; g++) {
    size_t best = 0;
    for (size_t r = 1; r < ranks; r++)
      if (load[r] < load[best]) best = r;
    load[best] += groups[g].cost;
    owner[groups[g].first] = best;
  }
  for (size_t i = 0; i < n; i++) owner[i] = owner[root[i]];
  /* A collective takes every rank at once: nobody's share. */
  for (size_t i = 0; i < n; i++) {
    mb_plan_entry_t e = MB_PLAN_ENTRY_INIT;
    mb_plan_entry(plan, i, &e);
    if (mb_op_is_collective(mb_op_find(e.op))) owner[i] = MB_PLAN_EVERY_RANK;
  }
  free(groups), free(load), free(root);
  return MB_OK;
}
