/* The JAX suite's collective benchmarks as our collective ops, both
 * layouts (jax_collectives.h). Upstream times one XLA collective over a
 * group of a TPU device mesh, each device holding a fixed array; we run
 * the same collective over every rank of the MPI job. What becomes of the
 * suite's parameters:
 *
 * - The array each device holds fixes our N, the element count as
 *   nccl-tests counts it (all_gather: the gathered output; reduce_scatter:
 *   the input), one row of k_colls per benchmark: matrix_dim x 8 x 128
 *   (BASE_SHAPE / _BASE_N x _BASE_K), or x 256 for reduce-scatter,
 *   times the group's device count where the exchange grows with it.
 * - mesh_shape and sharding_strategy choose which devices form the group
 *   (the mesh axes whose strategy entry is above 1): we read them for the
 *   group's size and keep them in the entry's name and record; the group
 *   itself is the job's ranks (mpirun -n <that size> reproduces upstream's
 *   per-device arrays; with another count N stays and each rank's block is
 *   N / ranks).
 * - Upstream's bandwidth is nccl-tests' bus bandwidth (its bytes are
 *   the algorithm's bytes x 2 (n - 1) / n or (n - 1) / n): ours is the
 *   algbw, N x the element size / time, with busbw as a kernel note. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan/jax_collectives.h"

#define PATH_CAP MB__JAX_PATH_CAP

/* What multiplies matrix_dim x per_dim into N. */
typedef enum scale {
  BY_NONE,     /* all_reduce, all_to_all: each device's array is N */
  BY_GROUP,    /* all_gather's output, the current reduce_scatter's input
                  (n, dim, 256): x the group's device count */
  BY_STRATEGY, /* legacy psum_scatter's input (prod(sharding_strategy),
                  dim, 256) */
  BY_SQUARE    /* ppermute's (matrix_dim, matrix_dim) */
} scale_t;

typedef struct coll {
  mb__jax_layout_t layout;
  const char *name;
  int64_t per_dim;
  scale_t scale;
  int takes_reduce_op; /* CollectivesParams.reduce_op: all_reduce only */
} coll_t;

/* Legacy: Ironwood/src/benchmark_collectives.py (947f49d), and ppermute
 * from src/benchmark_collectives.py, the only ppermute_benchmark of that
 * commit (Ironwood's map names one its module lacks). Current:
 * benchmarks/collectives.py (6a306a8). */
static const coll_t k_colls[] = {
    {MB__JAX_LEGACY, "psum", 8 * 128, BY_NONE, 0},
    {MB__JAX_LEGACY, "psum_scatter", 256, BY_STRATEGY, 0},
    {MB__JAX_LEGACY, "all_gather", 8 * 128, BY_GROUP, 0},
    {MB__JAX_LEGACY, "all_to_all", 8 * 128, BY_NONE, 0},
    {MB__JAX_LEGACY, "ppermute", 1, BY_SQUARE, 0},
    {MB__JAX_SWEEP, "all_reduce", 8 * 128, BY_NONE, 1},
    {MB__JAX_SWEEP, "all_gather", 8 * 128, BY_GROUP, 0},
    {MB__JAX_SWEEP, "all_to_all", 8 * 128, BY_NONE, 0},
    {MB__JAX_SWEEP, "reduce_scatter", 256, BY_GROUP, 0},
};
#define NUM_COLLS (sizeof k_colls / sizeof *k_colls)

static const char *const k_ironwood_params[] = {
    "matrix_dim",   "ici_size", "mesh_shape", "sharding_strategy",
    "op_dimension", "topology", NULL};
/* The ICI ring of matrix_dim^2 per device; dcn_size > 1 adds a ring
 * across slices (skipped, below). */
static const char *const k_ppermute_params[] = {
    "matrix_dim", "dcn_size", "ici_size", "warmup_tries", NULL};

static const coll_t *coll_find(mb__jax_layout_t layout, const char *name) {
  for (size_t i = 0; i < NUM_COLLS; i++)
    if (k_colls[i].layout == layout && !strcmp(k_colls[i].name, name))
      return &k_colls[i];
  return NULL;
}

const char *const *mb__jax_coll_params(const char *name) {
  const coll_t *k = coll_find(MB__JAX_LEGACY, name);
  if (!k) return NULL;
  return k->scale == BY_SQUARE ? k_ppermute_params : k_ironwood_params;
}

/* ---- the parameters, from either layout's combination ------------------ */

/* Where a combination's values are: a legacy map, or the current layout's
 * layers (mb__sweep_find). */
typedef struct getter {
  const mb__jax_combo_in_t *legacy;
  const mb__sweep_combo_t *sweep;
} getter_t;

static const mb_cfg_node_t *get(const getter_t *g, const char *key, char *path,
                                size_t cap) {
  if (g->sweep) return mb__sweep_find(g->sweep, key, path, cap);
  const mb_cfg_node_t *m = g->legacy->map;
  for (size_t i = 0; i < m->count; i++)
    if (!strcmp(m->keys[i], key)) {
      mb__path_key(path, cap, g->legacy->path, g->legacy->written[i]);
      return m->items[i];
    }
  return NULL;
}

/* The error for a parameter the benchmark's function requires. */
static mb_status_t missing(mb__pb_t *pb, const getter_t *g, const char *bench,
                           const char *key) {
  const mb_cfg_node_t *at = g->sweep ? g->sweep->item->entry : g->legacy->map;
  return mb__pb_error(pb, at, g->sweep ? g->sweep->item->path : g->legacy->path,
                      "%s needs %s; \"%s\" is missing", bench, key, key);
}

/* An integer parameter; def 0: required. */
static mb_status_t get_int(mb__pb_t *pb, const getter_t *g, const char *bench,
                           const char *key, int64_t def, int64_t *out) {
  char path[PATH_CAP];
  const mb_cfg_node_t *v = get(g, key, path, sizeof path);
  *out = def;
  if (v) return mb__pb_int(pb, v, path, 1, INT64_C(1) << 40, out);
  return def ? MB_OK : missing(pb, g, bench, key);
}

/* "4x4x8" (or 16, a one-axis mesh) into dims; *n 0 when not written. */
typedef struct axes {
  const char *text;
  int64_t dims[8];
  size_t n;
} axes_t;

static mb_status_t get_axes(mb__pb_t *pb, const getter_t *g, const char *key,
                            axes_t *a) {
  char path[PATH_CAP];
  const mb_cfg_node_t *v = get(g, key, path, sizeof path);
  a->n = 0;
  a->text = NULL;
  if (!v || v->kind == MB_CFG_NULL) return MB_OK;
  if ((v->kind != MB_CFG_STRING && v->kind != MB_CFG_NUMBER) || !v->text)
    return mb__pb_error(pb, v, path,
                        "expected axis sizes like \"4x4x8\", got a %s",
                        mb__cfg_kind_name(v->kind));
  a->text = v->text;
  for (const char *t = v->text; *t;) {
    char *end;
    long long d = strtoll(t, &end, 10);
    if (end == t || d < 1 || a->n == 8 || (*end && *end != 'x'))
      return mb__pb_error(pb, v, path,
                          "\"%s\" is not axis sizes: positive integers "
                          "joined by x, at most 8 (e.g. \"4x4x8\")",
                          v->text);
    a->dims[a->n++] = d;
    t = *end ? end + 1 : end;
  }
  return MB_OK;
}

/* The devices of the group the collective spans: the mesh's axes whose
 * sharding_strategy entry is above 1 (legacy get_sharding_axis, current
 * _get_sharding_axes); 0 when no mesh is written (the current layout's
 * default mesh is every device of the job). */
static mb_status_t group_size(mb__pb_t *pb, const getter_t *g, const coll_t *k,
                              const axes_t *mesh, const axes_t *strat,
                              int64_t *out) {
  *out = 0;
  if (!mesh->n) return MB_OK;
  int all = !strat->n;
  if (strat->n < mesh->n && !all) {
    char path[PATH_CAP];
    const mb_cfg_node_t *v = get(g, "sharding_strategy", path, sizeof path);
    if (k->layout == MB__JAX_LEGACY) /* upstream indexes past its end */
      return mb__pb_error(pb, v, path,
                          "sharding_strategy \"%s\" has fewer axes than "
                          "mesh_shape \"%s\"",
                          strat->text, mesh->text);
  }
  /* The current layout warns and takes every axis when the lengths differ. */
  if (k->layout == MB__JAX_SWEEP && strat->n != mesh->n) all = 1;
  *out = 1;
  for (size_t i = 0; i < mesh->n; i++)
    if (all || strat->dims[i] > 1) *out *= mesh->dims[i];
  return MB_OK;
}

/* CollectivesParams.reduce_op, as its setup lowers it. */
static mb_status_t get_reduce(mb__pb_t *pb, const getter_t *g,
                              mb_op_params_t *p, const char **name, char *why,
                              size_t why_cap) {
  static const struct {
    const char *name;
    mb_reduce_op_t op; /* MB_REDUCE_COUNT: none of ours */
  } k_ops[] = {{"sum", MB_REDUCE_SUM},
               {"max", MB_REDUCE_MAX},
               {"min", MB_REDUCE_MIN},
               {"mean", MB_REDUCE_COUNT}};
  char path[PATH_CAP];
  const mb_cfg_node_t *v = get(g, "reduce_op", path, sizeof path);
  *name = "sum";
  mb_status_t st = v ? mb__pb_string(pb, v, path, name) : MB_OK;
  for (size_t i = 0; st == MB_OK && i < sizeof k_ops / sizeof *k_ops; i++) {
    if (strcasecmp(k_ops[i].name, *name)) continue;
    *name = k_ops[i].name;
    if (k_ops[i].op != MB_REDUCE_COUNT)
      p->reduce_op = k_ops[i].op;
    else if (!*why)
      snprintf(why, why_cap,
               "reduce_op mean (jax.lax.pmean) is not a reduction of ours "
               "(sum, prod, min, max)");
    return MB_OK;
  }
  if (st != MB_OK) return st;
  return mb__pb_error(pb, v, path,
                      "unknown reduce_op \"%s\"; valid: sum, mean, max, min "
                      "(the suite's)",
                      *name);
}

/* N, the name's tag and the skip reason of one combination. */
static mb_status_t read_coll(mb__pb_t *pb, const coll_t *k, const getter_t *g,
                             int64_t dim, mb_op_params_t *p, int64_t *group,
                             int64_t *strat_prod, char *tag, size_t tag_cap,
                             char *why, size_t why_cap) {
  axes_t mesh, strat;
  const char *reduce = NULL;
  mb_status_t st = get_axes(pb, g, "mesh_shape", &mesh);
  if (st == MB_OK) st = get_axes(pb, g, "sharding_strategy", &strat);
  if (st == MB_OK) st = group_size(pb, g, k, &mesh, &strat, group);
  if (st == MB_OK && k->takes_reduce_op)
    st = get_reduce(pb, g, p, &reduce, why, why_cap);
  if (st != MB_OK) return st;
  *strat_prod = 1;
  for (size_t i = 0; i < strat.n; i++) *strat_prod *= strat.dims[i];
  int64_t n = dim * k->per_dim;
  if (k->scale == BY_SQUARE) n = dim * dim;
  /* Upstream's legacy functions take these without a default. */
  if (k->layout == MB__JAX_LEGACY && k->scale != BY_SQUARE && !strat.n)
    return missing(pb, g, k->name, "sharding_strategy");
  if (k->layout == MB__JAX_LEGACY && k->scale != BY_SQUARE && !mesh.n)
    return missing(pb, g, k->name, "mesh_shape");
  if (k->scale == BY_STRATEGY) n *= *strat_prod;
  if (k->scale == BY_GROUP) {
    if (!*group && !*why)
      snprintf(why, why_cap,
               "%s without mesh_shape spans every device of the job, so its "
               "size grows with the device count, which a plan does not "
               "know: give mesh_shape (and sharding_strategy)",
               k->name);
    n *= *group ? *group : 1;
  }
  p->ndim = 1;
  p->shape[0] = n;
  snprintf(tag, tag_cap, "%s%s%s%s%s%s", reduce ? "/" : "",
           reduce ? reduce : "", mesh.n ? "/mesh=" : "",
           mesh.n ? mesh.text : "", strat.n ? "/shard=" : "",
           strat.n ? strat.text : "");
  return MB_OK;
}

mb_status_t mb__jax_coll_read(mb__pb_t *pb, const char *name,
                              const mb__jax_combo_in_t *in, mb_op_params_t *p,
                              char *text, size_t cap, char *tag, size_t tag_cap,
                              char *why, size_t why_cap) {
  const coll_t *k = coll_find(MB__JAX_LEGACY, name);
  const getter_t g = {in, NULL};
  int64_t dim, group, strat, dcn;
  mb_status_t st = get_int(pb, &g, name, "matrix_dim", 0, &dim);
  if (st == MB_OK)
    st = read_coll(pb, k, &g, dim, p, &group, &strat, tag, tag_cap, why,
                   why_cap);
  if (st != MB_OK) return st;
  p->reduce_op = MB_REDUCE_SUM; /* psum, psum_scatter */
  switch (k->scale) {
    case BY_SQUARE:
      snprintf(text, cap, "%" PRId64 "x%" PRId64, dim, dim);
      st = get_int(pb, &g, name, "dcn_size", 1, &dcn);
      if (st == MB_OK && dcn > 1 && !*why)
        snprintf(why, why_cap,
                 "dcn_size %" PRId64
                 " > 1: upstream also times a ring across "
                 "slices with the matrix split over them; ours is one ring "
                 "over the job's ranks (give dcn_size 1 for the ICI ring)",
                 dcn);
      return st;
    case BY_STRATEGY:
      snprintf(text, cap, "%" PRId64 "x%" PRId64 "x256", strat, dim);
      return MB_OK;
    default:
      snprintf(text, cap, "%" PRId64 "x8x128", dim);
      return MB_OK;
  }
}

mb_status_t mb__sweep_refine_collective(mb__pb_t *pb,
                                        const mb__sweep_combo_t *c,
                                        mb__plan_item_t *it, char *tag,
                                        char *why) {
  const coll_t *k = coll_find(MB__JAX_SWEEP, c->item->bench->name);
  const getter_t g = {NULL, c};
  int64_t group, strat;
  return read_coll(pb, k, &g, it->params.shape[0], &it->params, &group, &strat,
                   tag, MB__SWEEP_TAG_CAP, why, MB__SWEEP_WHY_CAP);
}
