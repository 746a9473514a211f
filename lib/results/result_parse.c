/* mb_result_from_json: a result read back from the JSON object that
 * mb__result_to_cjson() writes (result_json.c), so that a harness running a
 * benchmark in another process (mbench run --isolate) gets the result it
 * would have got in its own: mb_result_json() of what is read here is, byte
 * for byte, the JSON it was read from.
 *
 * What the JSON only derives (id, problem, correctness.exact and .sampled,
 * ...) is recomputed from the rest, not read (the aggregate is read). A block
 * may be missing (its defaults stand); a block that is there must have its
 * fields, of the right type, except those added to the writer later
 * (MB__FIELD_OPT), which older writers lack. Every error is MB_ERR_PARSE and
 * names the field: "result JSON: stats.median_ns: expected a number, got a
 * string". */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op_internal.h"
#include "results/result_read.h"

/* ---- names back to values -------------------------------------------------
 */

static mb_status_t read_dtype(const cJSON *o, const char *block,
                              const char *key, mb_dtype_t *out) {
  const char *name = NULL;
  char path[160];
  snprintf(path, sizeof path, "%s.%s", block, key);
  mb_status_t st = mb__rj_value(o, block, key, MB__RJ_STR, 0, &name);
  if (st != MB_OK) return st;
  /* mb_dtype_name() writes unset as "none", which no parser takes. */
  if (strcmp(name, mb_dtype_name(MB_DTYPE_NONE)) == 0) {
    *out = MB_DTYPE_NONE;
    return MB_OK;
  }
  return mb__rj_wrap(mb_dtype_from_name(name, out), path);
}

/* ---- the op's parameters --------------------------------------------------
 */

static mb_status_t read_scaling(const cJSON *params, const char *key,
                                mb_scaling_t *s) {
  char block[64], path[96];
  snprintf(block, sizeof block, "params.%s", key);
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(params, key);
  if (!o) return mb__rj_bad(block, "missing");
  if (!cJSON_IsObject(o))
    return mb__rj_bad(block, "expected an object, got %s", mb__rj_type_name(o));
  const char *mode = NULL;
  mb_status_t st = mb__rj_value(o, block, "mode", MB__RJ_STR, 0, &mode);
  if (st != MB_OK) return st;
  int found = 0;
  for (int i = 0;
       !found && strcmp(mb_scale_mode_name((mb_scale_mode_t)i), "?") != 0; i++)
    if (strcmp(mode, mb_scale_mode_name((mb_scale_mode_t)i)) == 0) {
      s->mode = (mb_scale_mode_t)i;
      found = 1;
    }
  if (!found) {
    snprintf(path, sizeof path, "%s.mode", block);
    return mb__rj_bad(
        path,
        "unknown scaling mode \"%s\"; valid: none, tensor, row, col, "
        "block, group",
        mode);
  }
  if (s->mode == MB_SCALE_NONE) return MB_OK; /* block: see none_blocks() */
  const cJSON *arr;
  size_t n;
  if ((st = mb__rj_array(o, block, "block", 0, &arr, &n)) != MB_OK) return st;
  snprintf(path, sizeof path, "%s.block", block);
  if (n != 2) return mb__rj_bad(path, "expected 2 numbers, got %zu", n);
  for (int i = 0; i < 2 && st == MB_OK; i++) {
    uint64_t v = 0;
    st = mb__rj_item(cJSON_GetArrayItem(arr, i), path, MB__RJ_U64, 0, &v);
    s->block[i] = (int64_t)v;
  }
  return st;
}

/* The writer omits the block of an unscaled operand; resolving puts the
 * operand's own rows x cols there, so a copy is resolved to find it. Group
 * scalings become the explicit blocks they resolved to (resolving a group
 * again would read the block as a new group size). */
static void none_blocks(const mb_op_t *op, mb_op_params_t *p) {
  mb_scaling_t *s[] = {&p->scale_a, &p->scale_b};
  int any = 0;
  for (size_t i = 0; i < MB__COUNT(s); i++) any |= s[i]->mode == MB_SCALE_NONE;
  if (!any || !(op->param_mask & (MB__P_SCALES | MB__P_SCALE_A))) return;
  mb_op_params_t copy = *p;
  mb_scaling_t *c[] = {&copy.scale_a, &copy.scale_b};
  for (size_t i = 0; i < MB__COUNT(c); i++)
    if (c[i]->mode == MB_SCALE_GROUP) c[i]->mode = MB_SCALE_BLOCK;
  /* Parameters the library did not resolve keep their blocks. */
  if (mb_op_resolve(op, &copy) != MB_OK) return;
  for (size_t i = 0; i < MB__COUNT(s); i++)
    if (s[i]->mode == MB_SCALE_NONE && c[i]->mode == MB_SCALE_NONE)
      memcpy(s[i]->block, c[i]->block, sizeof s[i]->block);
}

/* Booleans the writer gives for MB_PARAM_* flags, each when the op uses it. */
static const struct {
  const char *key;
  uint32_t mask, flag;
  int inverted; /* "affine" is the absence of MB_PARAM_NO_WEIGHT */
  unsigned flags;
} k_param_flags[] = {
#define ROW(key, mask, flag, inverted, flags) \
  {key, mask, flag, inverted, flags},
    MB__PARAM_FLAGS(ROW)
#undef ROW
};

/* Numbers, each when the op uses it and (needs) that flag is set. */
static const struct {
  const char *key;
  uint32_t mask, needs;
  size_t off;
} k_param_nums[] = {
    {"alpha", MB__P_ALPHA_BETA, 0, offsetof(mb_op_params_t, alpha)},
    {"beta", MB__P_ALPHA_BETA, 0, offsetof(mb_op_params_t, beta)},
    {"scale", MB__P_STATIC, MB_PARAM_STATIC, offsetof(mb_op_params_t, scale)},
    {"eps", MB__P_EPS, 0, offsetof(mb_op_params_t, eps)},
};

/* What the op does not use keeps MB_OP_PARAMS_INIT's value: the writer
 * records only what the op uses (its param_mask). */
static mb_status_t read_params(const cJSON *root, const mb_op_t *op,
                               mb_op_params_t *p) {
  const cJSON *o;
  mb_status_t st = mb__rj_block(root, "params", &o);
  const uint32_t m = op->param_mask;
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(k_param_flags); i++) {
    int on = 0;
    if (!(m & k_param_flags[i].mask)) continue;
    on = k_param_flags[i]
             .inverted; /* missing (MB__FIELD_OPT): the flag is off */
    st = mb__rj_value(o, "params", k_param_flags[i].key, MB__RJ_BOOL,
                      k_param_flags[i].flags, &on);
    if (on != k_param_flags[i].inverted) p->flags |= k_param_flags[i].flag;
  }
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(k_param_nums); i++)
    if ((m & k_param_nums[i].mask) &&
        (p->flags & k_param_nums[i].needs) == k_param_nums[i].needs)
      st = mb__rj_value(o, "params", k_param_nums[i].key, MB__RJ_NUM, 0,
                        (char *)p + k_param_nums[i].off);
  if (st == MB_OK && (m & MB__P_QUANT) && (p->flags & MB_PARAM_QUANTIZE_INPUTS))
    st = read_dtype(o, "params", "dtype_q", &p->dtype_q);
  if (st == MB_OK && (m & (MB__P_SCALES | MB__P_SCALE_A)))
    st = read_scaling(o, "scale_a", &p->scale_a);
  if (st == MB_OK && (m & MB__P_SCALES))
    st = read_scaling(o, "scale_b", &p->scale_b);
  /* Written only when not f32, so absent means f32 (MB_DTYPE_NONE). */
  if (st == MB_OK && (m & (MB__P_SCALES | MB__P_SCALE_A)) &&
      cJSON_GetObjectItemCaseSensitive(o, "scale_dtype"))
    st = read_dtype(o, "params", "scale_dtype", &p->dtype_scale);
  if (st == MB_OK && (m & MB__P_ACT)) {
    const char *act = NULL;
    st = mb__rj_value(o, "params", "activation", MB__RJ_STR, 0, &act);
    if (st == MB_OK)
      st = mb__rj_wrap(mb_activation_from_name(act, &p->activation),
                       "params.activation");
    if (st == MB_OK && p->activation == MB_ACT_LEAKYRELU)
      st = mb__rj_value(o, "params", "act_alpha", MB__RJ_NUM, 0, &p->act_alpha);
  }
  if (st == MB_OK && (m & MB__P_RECIPE)) {
    const char *recipe = NULL;
    mb_recipe_t rc = MB_RECIPE_BASELINE;
    st = mb__rj_value(o, "params", "recipe", MB__RJ_STR, 0, &recipe);
    if (st == MB_OK)
      st = mb__rj_wrap(mb_recipe_from_name(recipe, &rc), "params.recipe");
    p->recipe = (uint32_t)rc;
  }
  if (st == MB_OK && (m & MB__P_KV_HEADS)) {
    /* Written only for grouped-query attention (mb__gqa_kv_heads): absent
     * is H, what resolving fills in. */
    uint64_t kv = (uint64_t)p->shape[1];
    st = mb__rj_value(o, "params", "kv_heads", MB__RJ_U64, MB__FIELD_OPT, &kv);
    if (st == MB_OK && (kv == 0 || kv > (uint64_t)p->shape[1]))
      st = mb__rj_bad("params.kv_heads", "%llu is not 1 to H = %lld",
                      (unsigned long long)kv, (long long)p->shape[1]);
    p->kv_heads = (int64_t)kv;
  }
  if (st == MB_OK && (m & MB__P_REDUCE)) {
    const char *red = NULL;
    st = mb__rj_value(o, "params", "reduce_op", MB__RJ_STR, 0, &red);
    uint32_t r = 0;
    while (st == MB_OK && r < MB_REDUCE_COUNT &&
           strcmp(red, mb_reduce_op_name((mb_reduce_op_t)r)) != 0)
      r++;
    if (st == MB_OK && r == MB_REDUCE_COUNT)
      st = mb__rj_bad("params.reduce_op", "\"%s\"; valid: sum, prod, min, max",
                      red);
    p->reduce_op = r;
  }
  /* root and ranks: below 2^31 (a rank is an int); ranks 0: a collective
   * that never ran on a communicator (skipped before it knew them) */
  static const struct {
    const char *key;
    uint32_t mask;
    size_t off;
    uint64_t low;
  } k_ints[] = {{"root", MB__P_ROOT, offsetof(mb_op_params_t, root), 0},
                {"ranks", MB__P_COLL, offsetof(mb_op_params_t, ranks), 0}};
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(k_ints); i++) {
    if (!(m & k_ints[i].mask)) continue;
    uint64_t v = 0;
    st = mb__rj_value(o, "params", k_ints[i].key, MB__RJ_U64, 0, &v);
    if (st == MB_OK && (v < k_ints[i].low || v > INT32_MAX))
      st = mb__rj_bad(k_ints[i].key, "%llu is not a rank count or rank",
                      (unsigned long long)v);
    int32_t iv = (int32_t)v;
    memcpy((char *)p + k_ints[i].off, &iv, sizeof iv);
  }
  if (st == MB_OK) none_blocks(op, p);
  return st;
}

/* ---- identity: what mb__result_new() takes --------------------------------
 */

typedef struct ident {
  const mb_op_t *op;
  mb_op_params_t params;
  mb_bench_spec_t spec; /* backend, impl and alias borrowed from the JSON */
  const char *device;
  int emulated;
} ident_t;

static mb_status_t read_shape(const cJSON *root, const mb_op_t *op,
                              mb_op_params_t *p) {
  const cJSON *o;
  mb_status_t st = mb__rj_block(root, "shape", &o);
  if (st == MB_OK && !o) return mb__rj_bad("shape", "missing");
  p->ndim = op->rank;
  for (uint32_t i = 0; st == MB_OK && i < op->rank; i++) {
    uint64_t v = 0;
    st = mb__rj_value(o, "shape", op->dim_names[i], MB__RJ_U64, 0, &v);
    if (st == MB_OK && v > (uint64_t)INT64_MAX)
      st = mb__rj_bad("shape", "%s = %llu is beyond any shape",
                      op->dim_names[i], (unsigned long long)v);
    p->shape[i] = (int64_t)v;
  }
  return st;
}

static mb_status_t read_identity(const cJSON *root, ident_t *id) {
  const char *name = NULL, *alias = "", *cache = NULL;
  mb_status_t st = mb__rj_value(root, "", "op", MB__RJ_STR, 0, &name);
  if (st != MB_OK) return st;
  if (!(id->op = mb_op_find(name))) return mb__rj_wrap(MB_ERR_NOT_FOUND, "op");
  const cJSON *dt;
  if ((st = mb__rj_value(root, "", "alias", MB__RJ_STR, MB__FIELD_OPT,
                         &alias)) != MB_OK ||
      (st = read_shape(root, id->op, &id->params)) != MB_OK ||
      (st = mb__rj_block(root, "dtypes", &dt)) != MB_OK)
    return st;
  if (!dt) return mb__rj_bad("dtypes", "missing");
  const struct {
    const char *key;
    mb_dtype_t *dst;
  } dtypes[] = {{"a", &id->params.dtype},
                {"b", &id->params.dtype_b},
                {"out", &id->params.dtype_out},
                {"acc", &id->params.dtype_acc}};
  for (size_t i = 0; st == MB_OK && i < MB__COUNT(dtypes); i++)
    st = read_dtype(dt, "dtypes", dtypes[i].key, dtypes[i].dst);
  /* The seed is a JSON number: exact up to 2^53, as the writer keeps it. */
  static const mb__rj_field_t k_top[] = {
      {"backend", offsetof(ident_t, spec.backend), MB__RJ_STR, 0},
      {"device_index", offsetof(ident_t, spec.device), MB__RJ_U32, 0},
      {"device", offsetof(ident_t, device), MB__RJ_STR, 0},
      {"impl", offsetof(ident_t, spec.impl), MB__RJ_STR, 0},
      {"emulated", offsetof(ident_t, emulated), MB__RJ_BOOL, 0},
      {"seed", offsetof(ident_t, spec.seed), MB__RJ_U64, 0},
  };
  if (st == MB_OK) st = read_params(root, id->op, &id->params);
  if (st == MB_OK) st = mb__rj_fields(root, "", id, k_top, MB__COUNT(k_top));
  if (st == MB_OK) st = mb__rj_value(root, "", "cache", MB__RJ_STR, 0, &cache);
  if (st == MB_OK)
    st =
        mb__rj_wrap(mb_cache_policy_from_name(cache, &id->spec.cache), "cache");
  /* mb__result_new() records spec.op as the alias when it is not the op. */
  id->spec.op = *alias ? alias : mb_op_name(id->op);
  return st;
}
/* ---- the whole ------------------------------------------------------------
 */

static mb_status_t set_device(mb_result_t *r, const char *device) {
  char *copy = mb__strdup(device);
  if (!copy) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  free(r->device);
  r->device = copy;
  r->info.device = copy;
  return MB_OK;
}

/* "placement" (a run across processes; absent otherwise). */
static mb_status_t read_placement(const cJSON *root, mb_result_t *r) {
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "placement");
  if (!o) return MB_OK;
  mb_placement_t p = MB_PLACEMENT_INIT;
  const char *host = NULL;
  uint32_t v[3];
  static const char *const k_keys[] = {"rank", "ranks", "local_rank"};
  mb_status_t st = mb__rj_value(o, "placement", "host", MB__RJ_STR, 0, &host);
  for (size_t i = 0; st == MB_OK && i < 3; i++)
    st = mb__rj_value(o, "placement", k_keys[i], MB__RJ_U32, 0, &v[i]);
  if (st != MB_OK) return st;
  if (v[1] > INT32_MAX || v[0] >= v[1] || v[2] > v[0])
    return mb__rj_bad("placement", "rank %u (local %u) of %u", v[0], v[2],
                      v[1]);
  p.rank = (int)v[0], p.ranks = (int)v[1], p.local_rank = (int)v[2];
  snprintf(p.host, sizeof p.host, "%s", host);
  return mb__rj_wrap(mb_result_set_placement(r, &p), "placement");
}

static mb_status_t fill(const cJSON *root, mb_result_t *r, const ident_t *id) {
  mb_status_t st = set_device(r, id->device);
  r->info.emulated = id->emulated;
  if (st == MB_OK) st = read_placement(root, r);
  if (st == MB_OK) st = mb__rj_measurement(root, r);
  return st;
}

mb_status_t mb_result_from_json(const char *json, mb_result_t **out) {
  if (out) *out = NULL;
  if (!json || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_result_from_json: %s is NULL",
                    json ? "out" : "json");
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
  if (!root) {
    /* cJSON points `end` at where it stopped, inside json. */
    const char *at = end && end >= json ? end : json;
    return mb__fail(
        MB_ERR_PARSE,
        "result JSON: not valid JSON at offset %zu (near \"%.24s\")",
        (size_t)(at - json), at);
  }
  mb_status_t st = MB_OK;
  mb_result_t *r = NULL;
  ident_t id = {NULL, MB_OP_PARAMS_INIT, MB_BENCH_SPEC_INIT, "", 0};
  if (!cJSON_IsObject(root))
    st = mb__fail(MB_ERR_PARSE, "result JSON: expected an object, got %s",
                  mb__rj_type_name(root));
  if (st == MB_OK) st = read_identity(root, &id);
  if (st == MB_OK) {
    r = mb__result_new(mb_op_name(id.op), id.op->shape_syntax, &id.params,
                       &id.spec, NULL);
    if (!r) st = mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  }
  if (st == MB_OK) st = fill(root, r, &id);
  cJSON_Delete(root);
  if (st != MB_OK) {
    mb_result_destroy(r);
    return st;
  }
  *out = r;
  return MB_OK;
}
