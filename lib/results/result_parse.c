/* mb_result_from_json: a result read back from the JSON object that
 * mb__result_to_cjson() writes (result_json.c), so that a harness running a
 * benchmark in another process (mbench run --isolate) gets the result it
 * would have got in its own: mb_result_json() of what is read here is, byte
 * for byte, the JSON it was read from.
 *
 * What the JSON only derives (id, problem, correctness.exact and .sampled,
 * ...) is recomputed from the rest, not read (the aggregate is read). A block
 * may be missing (its defaults stand); a block that is there must have its
 * fields, of the right type, except those added to the writer later (OPT),
 * which older writers lack. Every error is MB_ERR_PARSE and names the field:
 * "result JSON: stats.median_ns: expected a number, got a string". */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op_internal.h"
#include "results/result.h"
#include "results/result_fields.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* ---- errors -------------------------------------------------------------- */

static mb_status_t bad(const char *path, const char *fmt, ...) MB__FMT(2, 3);
static mb_status_t bad(const char *path, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mb__fail(MB_ERR_PARSE, "result JSON: %s: %s", path, msg);
}

/* A library parser's error (unknown dtype, ...) as a parse error at path. */
static mb_status_t wrap(mb_status_t st, const char *path) {
  if (st == MB_OK) return MB_OK;
  mb__error_prefix("result JSON: %s", path);
  return MB_ERR_PARSE;
}

static const char *type_name(const cJSON *v) {
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsArray(v)) return "an array";
  return "an object";
}

/* ---- typed reads ----------------------------------------------------------
 */

typedef enum kind { K_NUM, K_U32, K_U64, K_BOOL, K_STR } kind_t;

#define OPT MB__FIELD_OPT     /* may be missing (added to the writer later) */
#define NULL_INF MB__NULL_INF /* null stands for +inf, not NaN */

/* Stores into *out as the kind says: double, uint32_t, uint64_t, int (0/1),
 * const char * (borrowed from the JSON). */
static mb_status_t read_item(const cJSON *v, const char *path, kind_t kind,
                             unsigned flags, void *out) {
  switch (kind) {
    case K_STR:
      if (!cJSON_IsString(v))
        return bad(path, "expected a string, got %s", type_name(v));
      *(const char **)out = v->valuestring;
      return MB_OK;
    case K_BOOL:
      if (!cJSON_IsBool(v))
        return bad(path, "expected true or false, got %s", type_name(v));
      *(int *)out = cJSON_IsTrue(v);
      return MB_OK;
    case K_NUM:
      /* The writer's null is a value JSON cannot hold: inf or NaN. */
      if (cJSON_IsNull(v)) {
        *(double *)out = (flags & NULL_INF) ? INFINITY : NAN;
        return MB_OK;
      }
      if (!cJSON_IsNumber(v))
        return bad(path, "expected a number, got %s", type_name(v));
      *(double *)out = v->valuedouble;
      return MB_OK;
    case K_U32:
    case K_U64: {
      /* Counts are written as JSON numbers: exact up to 2^53. */
      const double top = kind == K_U32 ? 4294967296.0 : 18446744073709551616.0;
      double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
      if (!(d >= 0 && d < top && d == floor(d)))
        return cJSON_IsNumber(v)
                   ? bad(path, "expected an integer in 0 .. %.0f, got %.17g",
                         top - 1, d)
                   : bad(path, "expected an integer, got %s", type_name(v));
      if (kind == K_U32)
        *(uint32_t *)out = (uint32_t)d;
      else
        *(uint64_t *)out = (uint64_t)d;
      return MB_OK;
    }
  }
  return bad(path, "internal: unknown kind");
}

/* o.key, where o is `block` ("" at the top). A missing o has no keys. */
static mb_status_t read_value(const cJSON *o, const char *block,
                              const char *key, kind_t kind, unsigned flags,
                              void *out) {
  char path[160];
  snprintf(path, sizeof path, "%s%s%s", block, *block ? "." : "", key);
  const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
  if (v) return read_item(v, path, kind, flags, out);
  return (flags & OPT) ? MB_OK : bad(path, "missing");
}

/* A block the writer always emits as an object; NULL when missing. */
static mb_status_t read_block(const cJSON *root, const char *key,
                              const cJSON **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
  *out = NULL;
  if (v && !cJSON_IsObject(v))
    return bad(key, "expected an object, got %s", type_name(v));
  *out = v;
  return MB_OK;
}

/* An array (NULL when missing and OPT) and its length. */
static mb_status_t read_array(const cJSON *o, const char *block,
                              const char *key, unsigned flags,
                              const cJSON **out, size_t *n) {
  char path[160];
  snprintf(path, sizeof path, "%s%s%s", block, *block ? "." : "", key);
  const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
  *out = NULL;
  *n = 0;
  if (!v) return (flags & OPT) ? MB_OK : bad(path, "missing");
  if (!cJSON_IsArray(v))
    return bad(path, "expected an array, got %s", type_name(v));
  *out = v;
  *n = (size_t)cJSON_GetArraySize(v);
  return MB_OK;
}

/* A block's fields into a struct (or the result) at their offsets. */
typedef struct field {
  const char *key;
  size_t off;
  kind_t kind;
  unsigned flags;
} field_t;

static mb_status_t read_fields(const cJSON *o, const char *block, void *base,
                               const field_t *f, size_t n) {
  mb_status_t st = MB_OK;
  for (size_t i = 0; i < n && st == MB_OK; i++)
    st = read_value(o, block, f[i].key, f[i].kind, f[i].flags,
                    (char *)base + f[i].off);
  return st;
}

/* ---- names back to values -------------------------------------------------
 */

/* Static, so stats.stop_reason never points into the freed JSON. */
static const char *const k_stop_reasons[] = {
    "converged", "plateau", "fixed", "unstable", "timeout", "entropy", ""};

static mb_status_t read_stop_reason(const cJSON *o, const char *block,
                                    const char **out) {
  const char *text = "";
  char path[160];
  snprintf(path, sizeof path, "%s.stop_reason", block);
  mb_status_t st = read_value(o, block, "stop_reason", K_STR, 0, &text);
  for (size_t i = 0; st == MB_OK && i < COUNT(k_stop_reasons); i++)
    if (strcmp(text, k_stop_reasons[i]) == 0) {
      *out = k_stop_reasons[i];
      return MB_OK;
    }
  return st != MB_OK ? st
                     : bad(path,
                           "unknown stop reason \"%s\"; valid: converged, "
                           "plateau, fixed, unstable, timeout, entropy, \"\"",
                           text);
}

static mb_status_t read_dtype(const cJSON *o, const char *block,
                              const char *key, mb_dtype_t *out) {
  const char *name = NULL;
  char path[160];
  snprintf(path, sizeof path, "%s.%s", block, key);
  mb_status_t st = read_value(o, block, key, K_STR, 0, &name);
  if (st != MB_OK) return st;
  /* mb_dtype_name() writes unset as "none", which no parser takes. */
  if (strcmp(name, mb_dtype_name(MB_DTYPE_NONE)) == 0) {
    *out = MB_DTYPE_NONE;
    return MB_OK;
  }
  return wrap(mb_dtype_from_name(name, out), path);
}

static mb_status_t read_status(const cJSON *root, mb_result_status_t *out) {
  const char *name = NULL;
  mb_status_t st = read_value(root, "", "status", K_STR, 0, &name);
  for (int i = MB_RESULT_OK; st == MB_OK && i <= MB_RESULT_FAILED; i++)
    if (strcmp(name, mb_result_status_name((mb_result_status_t)i)) == 0) {
      *out = (mb_result_status_t)i;
      return MB_OK;
    }
  return st != MB_OK ? st
                     : bad("status",
                           "unknown status \"%s\"; valid: ok, "
                           "skipped, failed",
                           name);
}

/* ---- the op's parameters --------------------------------------------------
 */

static mb_status_t read_scaling(const cJSON *params, const char *key,
                                mb_scaling_t *s) {
  char block[64], path[96];
  snprintf(block, sizeof block, "params.%s", key);
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(params, key);
  if (!o) return bad(block, "missing");
  if (!cJSON_IsObject(o))
    return bad(block, "expected an object, got %s", type_name(o));
  const char *mode = NULL;
  mb_status_t st = read_value(o, block, "mode", K_STR, 0, &mode);
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
    return bad(path,
               "unknown scaling mode \"%s\"; valid: none, tensor, row, col, "
               "block, group",
               mode);
  }
  if (s->mode == MB_SCALE_NONE) return MB_OK; /* block: see none_blocks() */
  const cJSON *arr;
  size_t n;
  if ((st = read_array(o, block, "block", 0, &arr, &n)) != MB_OK) return st;
  snprintf(path, sizeof path, "%s.block", block);
  if (n != 2) return bad(path, "expected 2 numbers, got %zu", n);
  for (int i = 0; i < 2 && st == MB_OK; i++) {
    uint64_t v = 0;
    st = read_item(cJSON_GetArrayItem(arr, i), path, K_U64, 0, &v);
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
  for (size_t i = 0; i < COUNT(s); i++) any |= s[i]->mode == MB_SCALE_NONE;
  if (!any || !(op->param_mask & (MB__P_SCALES | MB__P_SCALE_A))) return;
  mb_op_params_t copy = *p;
  mb_scaling_t *c[] = {&copy.scale_a, &copy.scale_b};
  for (size_t i = 0; i < COUNT(c); i++)
    if (c[i]->mode == MB_SCALE_GROUP) c[i]->mode = MB_SCALE_BLOCK;
  /* Parameters the library did not resolve keep their blocks. */
  if (mb_op_resolve(op, &copy) != MB_OK) return;
  for (size_t i = 0; i < COUNT(s); i++)
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
  mb_status_t st = read_block(root, "params", &o);
  const uint32_t m = op->param_mask;
  for (size_t i = 0; st == MB_OK && i < COUNT(k_param_flags); i++) {
    int on = 0;
    if (!(m & k_param_flags[i].mask)) continue;
    on = k_param_flags[i].inverted; /* missing (OPT): the flag is off */
    st = read_value(o, "params", k_param_flags[i].key, K_BOOL,
                    k_param_flags[i].flags, &on);
    if (on != k_param_flags[i].inverted) p->flags |= k_param_flags[i].flag;
  }
  for (size_t i = 0; st == MB_OK && i < COUNT(k_param_nums); i++)
    if ((m & k_param_nums[i].mask) &&
        (p->flags & k_param_nums[i].needs) == k_param_nums[i].needs)
      st = read_value(o, "params", k_param_nums[i].key, K_NUM, 0,
                      (char *)p + k_param_nums[i].off);
  if (st == MB_OK && (m & MB__P_QUANT) && (p->flags & MB_PARAM_QUANTIZE_INPUTS))
    st = read_dtype(o, "params", "dtype_q", &p->dtype_q);
  if (st == MB_OK && (m & (MB__P_SCALES | MB__P_SCALE_A)))
    st = read_scaling(o, "scale_a", &p->scale_a);
  if (st == MB_OK && (m & MB__P_SCALES))
    st = read_scaling(o, "scale_b", &p->scale_b);
  if (st == MB_OK && (m & MB__P_ACT)) {
    const char *act = NULL;
    st = read_value(o, "params", "activation", K_STR, 0, &act);
    if (st == MB_OK)
      st = wrap(mb_activation_from_name(act, &p->activation),
                "params.activation");
    if (st == MB_OK && p->activation == MB_ACT_LEAKYRELU)
      st = read_value(o, "params", "act_alpha", K_NUM, 0, &p->act_alpha);
  }
  if (st == MB_OK && (m & MB__P_RECIPE)) {
    const char *recipe = NULL;
    mb_recipe_t rc = MB_RECIPE_BASELINE;
    st = read_value(o, "params", "recipe", K_STR, 0, &recipe);
    if (st == MB_OK)
      st = wrap(mb_recipe_from_name(recipe, &rc), "params.recipe");
    p->recipe = (uint32_t)rc;
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
  mb_status_t st = read_block(root, "shape", &o);
  if (st == MB_OK && !o) return bad("shape", "missing");
  p->ndim = op->rank;
  for (uint32_t i = 0; st == MB_OK && i < op->rank; i++) {
    uint64_t v = 0;
    st = read_value(o, "shape", op->dim_names[i], K_U64, 0, &v);
    if (st == MB_OK && v > (uint64_t)INT64_MAX)
      st = bad("shape", "%s = %llu is beyond any shape", op->dim_names[i],
               (unsigned long long)v);
    p->shape[i] = (int64_t)v;
  }
  return st;
}

static mb_status_t read_identity(const cJSON *root, ident_t *id) {
  const char *name = NULL, *alias = "", *cache = NULL;
  mb_status_t st = read_value(root, "", "op", K_STR, 0, &name);
  if (st != MB_OK) return st;
  if (!(id->op = mb_op_find(name))) return wrap(MB_ERR_NOT_FOUND, "op");
  const cJSON *dt;
  if ((st = read_value(root, "", "alias", K_STR, OPT, &alias)) != MB_OK ||
      (st = read_shape(root, id->op, &id->params)) != MB_OK ||
      (st = read_block(root, "dtypes", &dt)) != MB_OK)
    return st;
  if (!dt) return bad("dtypes", "missing");
  const struct {
    const char *key;
    mb_dtype_t *dst;
  } dtypes[] = {{"a", &id->params.dtype},
                {"b", &id->params.dtype_b},
                {"out", &id->params.dtype_out},
                {"acc", &id->params.dtype_acc}};
  for (size_t i = 0; st == MB_OK && i < COUNT(dtypes); i++)
    st = read_dtype(dt, "dtypes", dtypes[i].key, dtypes[i].dst);
  /* The seed is a JSON number: exact up to 2^53, as the writer keeps it. */
  static const field_t k_top[] = {
      {"backend", offsetof(ident_t, spec.backend), K_STR, 0},
      {"device_index", offsetof(ident_t, spec.device), K_U32, 0},
      {"device", offsetof(ident_t, device), K_STR, 0},
      {"impl", offsetof(ident_t, spec.impl), K_STR, 0},
      {"emulated", offsetof(ident_t, emulated), K_BOOL, 0},
      {"seed", offsetof(ident_t, spec.seed), K_U64, 0},
  };
  if (st == MB_OK) st = read_params(root, id->op, &id->params);
  if (st == MB_OK) st = read_fields(root, "", id, k_top, COUNT(k_top));
  if (st == MB_OK) st = read_value(root, "", "cache", K_STR, 0, &cache);
  if (st == MB_OK)
    st = wrap(mb_cache_policy_from_name(cache, &id->spec.cache), "cache");
  /* mb__result_new() records spec.op as the alias when it is not the op. */
  id->spec.op = *alias ? alias : mb_op_name(id->op);
  return st;
}

/* ---- the measurement ------------------------------------------------------
 */

static mb_status_t set_device(mb_result_t *r, const char *device) {
  char *copy = mb__strdup(device);
  if (!copy) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  free(r->device);
  r->device = copy;
  r->info.device = copy;
  return MB_OK;
}

static mb_status_t read_timing(const cJSON *root, mb_result_t *r) {
  static const field_t k_fields[] = {
      {"min_samples", offsetof(mb_result_t, timing.min_samples), K_U32, 0},
      {"samples", offsetof(mb_result_t, timing.samples), K_U32, 0},
      {"min_time_s", offsetof(mb_result_t, timing.min_time_s), K_NUM, 0},
      {"max_noise", offsetof(mb_result_t, timing.max_noise), K_NUM, 0},
      {"timeout_s", offsetof(mb_result_t, timing.timeout_s), K_NUM, NULL_INF},
      {"warmup_s", offsetof(mb_result_t, timing.warmup_s), K_NUM, 0},
      {"warmup_runs", offsetof(mb_result_t, timing.warmup_runs), K_U32, 0},
      {"batch_requested", offsetof(mb_result_t, timing.batch), K_U32, 0},
      {"repetitions", offsetof(mb_result_t, timing.repetitions), K_U32, OPT},
  };
  const cJSON *o;
  const char *crit = NULL;
  mb_status_t st = read_block(root, "timing", &o);
  if (st != MB_OK || !o) return st;
  const char *flush = NULL;
  mb_flush_t how = MB_FLUSH_WRITE;
  if ((st = read_value(o, "timing", "criterion", K_STR, 0, &crit)) != MB_OK ||
      (st = wrap(mb_criterion_from_name(crit, &r->timing.criterion),
                 "timing.criterion")) != MB_OK ||
      /* absent in files written before there was a choice: write */
      (st = read_value(o, "timing", "flush", K_STR, OPT, &flush)) != MB_OK ||
      (flush &&
       (st = wrap(mb_flush_from_name(flush, &how), "timing.flush")) != MB_OK))
    return st;
  if (how == MB_FLUSH_READ) r->timing.flags |= MB_BENCH_FLUSH_READ;
  r->info.flush = how;
  return read_fields(o, "timing", r, k_fields, COUNT(k_fields));
}

static mb_status_t read_correctness(const cJSON *root, mb_result_t *r) {
  static const field_t k_fields[] = {
      {"pass", offsetof(mb_correctness_t, pass), K_BOOL, 0},
      {"max_abs_err", offsetof(mb_correctness_t, max_abs_err), K_NUM, 0},
      {"max_rel_err", offsetof(mb_correctness_t, max_rel_err), K_NUM, 0},
      {"max_err_ratio", offsetof(mb_correctness_t, max_err_ratio), K_NUM, 0},
      /* null: no error at all, which verify.c writes as +inf dB */
      {"sqnr_db", offsetof(mb_correctness_t, sqnr_db), K_NUM, NULL_INF},
      {"tolerance", offsetof(mb_correctness_t, tolerance), K_NUM, 0},
      {"elements_checked", offsetof(mb_correctness_t, elements_checked), K_U64,
       0},
      {"elements_total", offsetof(mb_correctness_t, elements_total), K_U64, 0},
  };
  const cJSON *o;
  mb_status_t st = read_block(root, "correctness", &o);
  if (st != MB_OK || !o) return st;
  st = read_value(o, "correctness", "checked", K_BOOL, 0, &r->corr.checked);
  if (st != MB_OK || !r->corr.checked) return st;
  return read_fields(o, "correctness", &r->corr, k_fields, COUNT(k_fields));
}

static mb_status_t read_stats(const cJSON *root, mb_result_t *r) {
#define FIELD(key, member, kind, flags) \
  {key, offsetof(mb_stats_t, member), K_##kind, flags},
  static const field_t k_fields[] = {MB__STATS_FIELDS(FIELD)};
#undef FIELD
  const cJSON *o;
  mb_status_t st = read_block(root, "stats", &o);
  if (st != MB_OK || !o) return st;
  st = read_fields(o, "stats", &r->stats, k_fields, COUNT(k_fields));
  return st != MB_OK ? st : read_stop_reason(o, "stats", &r->stats.stop_reason);
}

/* The x whose written form x * unit (or x / unit) is `shown`. The inverse
 * can be an ulp off, but only where cJSON wrote 15 digits that read back
 * within DBL_EPSILON, and then x is written as the same 15 digits; where it
 * wrote the exact value, the inverse was exact in every one of 5e6 random
 * clocks tried. */
static double unscale(double shown, double unit, int divided) {
  return divided ? shown * unit : shown / unit;
}

static mb_status_t read_derived(const cJSON *root, mb_result_t *r) {
  static const field_t k_fields[] = {
      {"flop", offsetof(mb_derived_t, flop), K_NUM, 0},
      {"bytes", offsetof(mb_derived_t, bytes), K_NUM, 0},
      {"intensity", offsetof(mb_derived_t, intensity), K_NUM, 0},
      {"tflops", offsetof(mb_derived_t, tflops), K_NUM, 0},
      {"gbps", offsetof(mb_derived_t, gbps), K_NUM, 0},
      {"pct_peak", offsetof(mb_derived_t, pct_peak), K_NUM, 0},
  };
  const cJSON *o;
  double peak_tflops = 0;
  mb_status_t st = read_block(root, "derived", &o);
  if (st != MB_OK || !o) return st;
  if ((st = read_fields(o, "derived", &r->derived, k_fields,
                        COUNT(k_fields))) != MB_OK ||
      (st = read_value(o, "derived", "peak_tflops", K_NUM, 0, &peak_tflops)) !=
          MB_OK)
    return st;
  r->derived.peak_flops = unscale(peak_tflops, 1e12, 1);
  return MB_OK;
}

static mb_status_t read_rotate(const cJSON *root, mb_result_t *r) {
  static const field_t k_fields[] = {
      {"copies", offsetof(mb_result_t, info.rotate_copies), K_U32, 0},
      {"footprint_bytes", offsetof(mb_result_t, info.footprint_bytes), K_NUM,
       0},
      {"cache_bytes", offsetof(mb_result_t, cache_bytes), K_NUM, 0},
  };
  const cJSON *o;
  mb_status_t st = read_block(root, "rotate", &o);
  if (st != MB_OK || !o) return st;
  return read_fields(o, "rotate", r, k_fields, COUNT(k_fields));
}

/* ---- per-sample arrays ----------------------------------------------------
 */

/* The writer's series, in its units (result_json.c): value x unit. */
static const struct {
  const char *key;
  size_t off;
  double unit;
  unsigned flags;
} k_series[] = {
#define SERIES(key, member, unit, flags) \
  {key, offsetof(mb_telemetry_t, member), unit, flags},
    MB__TELEMETRY_SERIES(SERIES)
#undef SERIES
};

/* telemetry: one entry per sample taken (at most num_samples); *out is
 * malloc'd, NULL when there is none. */
static mb_status_t read_telemetry(const cJSON *root, size_t num_samples,
                                  mb_telemetry_t **out, size_t *n,
                                  uint64_t *throttled) {
  const cJSON *o, *arr;
  char path[96];
  *out = NULL;
  *n = 0;
  mb_status_t st = read_block(root, "telemetry", &o);
  if (st != MB_OK || !o) return st;
  size_t len;
  if ((st = read_array(o, "telemetry", "throttle", 0, &arr, &len)) != MB_OK ||
      (st = read_value(o, "telemetry", "throttled_samples", K_U64, 0,
                       throttled)) != MB_OK)
    return st;
  if (len > num_samples)
    return bad("telemetry.throttle", "%zu entries for %zu samples", len,
               num_samples);
  mb_telemetry_t *t = malloc((len ? len : 1) * sizeof *t);
  if (!t) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for telemetry");
  for (size_t i = 0; i < len; i++) t[i] = (mb_telemetry_t)MB_TELEMETRY_INIT;
  const cJSON *v = arr->child; /* walked, not indexed: lists are linked */
  for (size_t i = 0; st == MB_OK && i < len; i++, v = v->next) {
    snprintf(path, sizeof path, "telemetry.throttle[%zu]", i);
    st = read_item(v, path, K_U32, 0, &t[i].throttle);
  }
  for (size_t k = 0; st == MB_OK && k < COUNT(k_series); k++) {
    const cJSON *s;
    size_t sn;
    st =
        read_array(o, "telemetry", k_series[k].key, k_series[k].flags, &s, &sn);
    if (st != MB_OK || !s) continue;
    if (sn != len) {
      snprintf(path, sizeof path, "telemetry.%s", k_series[k].key);
      st = bad(path, "%zu entries; telemetry.throttle has %zu", sn, len);
    }
    v = s->child;
    for (size_t i = 0; st == MB_OK && i < len; i++, v = v->next) {
      double shown = NAN;
      snprintf(path, sizeof path, "telemetry.%s[%zu]", k_series[k].key, i);
      st = read_item(v, path, K_NUM, 0, &shown);
      *(double *)((char *)&t[i] + k_series[k].off) =
          unscale(shown, k_series[k].unit, 0);
    }
  }
  if (st != MB_OK) {
    free(t);
    return st;
  }
  *out = t;
  *n = len;
  return MB_OK;
}

/* samples_ns, the telemetry taken with them, and their flags. */
static mb_status_t read_samples(const cJSON *root, mb_result_t *r) {
  const cJSON *arr, *flags;
  size_t n, nflags, ntele = 0;
  char path[64];
  uint64_t throttled = 0;
  mb_telemetry_t *tele = NULL;
  mb_status_t st = read_array(root, "", "samples_ns", OPT, &arr, &n);
  if (st == MB_OK)
    st = read_array(root, "", "sample_flags", OPT, &flags, &nflags);
  if (st == MB_OK && flags && nflags != n)
    st = bad("sample_flags", "%zu entries for %zu samples", nflags, n);
  if (st == MB_OK) st = read_telemetry(root, n, &tele, &ntele, &throttled);
  const cJSON *v = arr ? arr->child : NULL;
  for (size_t i = 0; st == MB_OK && i < n; i++, v = v->next) {
    double ns = 0;
    snprintf(path, sizeof path, "samples_ns[%zu]", i);
    if ((st = read_item(v, path, K_NUM, 0, &ns)) == MB_OK &&
        (st = mb__result_add_sample(r, ns)) == MB_OK && i < ntele)
      st = mb__result_add_telemetry(r, &tele[i]);
  }
  free(tele);
  /* Exactly the flags written: adding telemetry flagged throttled samples,
   * which the written flags already say. */
  v = flags ? flags->child : NULL;
  for (size_t i = 0; st == MB_OK && i < n; i++) {
    uint32_t f = 0;
    snprintf(path, sizeof path, "sample_flags[%zu]", i);
    if (v && (st = read_item(v, path, K_U32, 0, &f)) == MB_OK && f > 255)
      st = bad(path, "%u is not a set of MB_SAMPLE_* flags (0 .. 255)", f);
    r->flags[i] = (uint8_t)f;
    v = v ? v->next : NULL;
  }
  r->stats.throttled = throttled;
  return st;
}

/* Written only when there were several; one is the whole of the samples,
 * summarised as the stats block says. */
/* The aggregate as written (recomputing it from medians read back an ulp
 * off could change its last digits); computed when absent. */
static mb_status_t read_aggregate(const cJSON *root, mb_result_t *r) {
  static const field_t k_fields[] = {
      {"count", offsetof(mb_aggregate_t, count), K_U32, 0},
      {"mean_ns", offsetof(mb_aggregate_t, mean), K_NUM, 0},
      {"median_ns", offsetof(mb_aggregate_t, median), K_NUM, 0},
      {"stddev_ns", offsetof(mb_aggregate_t, stddev), K_NUM, 0},
      {"cv", offsetof(mb_aggregate_t, cv), K_NUM, 0},
      {"min_ns", offsetof(mb_aggregate_t, min), K_NUM, 0},
      {"max_ns", offsetof(mb_aggregate_t, max), K_NUM, 0},
  };
  const cJSON *o;
  mb_status_t st = read_block(root, "aggregate", &o);
  if (st != MB_OK) return st;
  if (!o) return mb__result_set_aggregate(r);
  mb_aggregate_t a = MB_AGGREGATE_INIT;
  st = read_fields(o, "aggregate", &a, k_fields, COUNT(k_fields));
  if (st == MB_OK) r->agg = a;
  return st;
}

static mb_status_t read_repetitions(const cJSON *root, mb_result_t *r) {
  static const field_t k_fields[] = {
      {"first_sample", offsetof(mb_repetition_t, first_sample), K_U64, 0},
      {"count", offsetof(mb_repetition_t, count), K_U64, 0},
      {"median_ns", offsetof(mb_repetition_t, median), K_NUM, 0},
      {"mean_ns", offsetof(mb_repetition_t, mean), K_NUM, 0},
      {"stdev_ns", offsetof(mb_repetition_t, stdev), K_NUM, 0},
  };
  const cJSON *arr;
  size_t n;
  char path[64];
  mb_status_t st = read_array(root, "", "repetitions", OPT, &arr, &n);
  if (st != MB_OK) return st;
  if (!arr || !n)
    return r->num_samples
               ? mb__result_add_repetition(r, 0, r->stats.stop_reason)
               : MB_OK;
  if (!(r->reps = calloc(n, sizeof *r->reps)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for repetitions");
  const cJSON *v = arr->child;
  for (size_t i = 0; st == MB_OK && i < n; i++, v = v->next) {
    mb_repetition_t *p = &r->reps[i];
    snprintf(path, sizeof path, "repetitions[%zu]", i);
    p->struct_size = sizeof *p;
    if (!cJSON_IsObject(v))
      st = bad(path, "expected an object, got %s", type_name(v));
    if (st == MB_OK) st = read_fields(v, path, p, k_fields, COUNT(k_fields));
    if (st == MB_OK) st = read_stop_reason(v, path, &p->stop_reason);
    if (st == MB_OK && (p->first_sample > r->num_samples ||
                        p->count > r->num_samples - p->first_sample))
      st =
          bad(path, "samples %llu .. %llu are beyond samples_ns (%zu samples)",
              (unsigned long long)p->first_sample,
              (unsigned long long)(p->first_sample + p->count), r->num_samples);
    if (st == MB_OK) r->num_reps = i + 1;
  }
  return st == MB_OK ? read_aggregate(root, r) : st;
}

/* ---- notes and the plan's facts -------------------------------------------
 */

static mb_status_t read_notes(const cJSON *root, mb_result_t *r) {
  const cJSON *o, *v;
  char path[160];
  mb_status_t st = read_block(root, "kernel", &o);
  if (st != MB_OK || !o) return st;
  cJSON_ArrayForEach(v, o) {
    snprintf(path, sizeof path, "kernel.%s", v->string);
    if (cJSON_IsString(v))
      st = mb__result_add_note(r, v->string, v->valuestring, 0.0);
    else if (cJSON_IsNumber(v) || cJSON_IsNull(v))
      st = mb__result_add_note(r, v->string, NULL,
                               cJSON_IsNull(v) ? NAN : v->valuedouble);
    else
      st = bad(path, "expected a string or a number, got %s", type_name(v));
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

static mb_status_t read_plan(const cJSON *root, mb_result_t *r) {
  mb__result_plan_t p = {"", "", "", "", "", NULL};
  const field_t k_fields[] = {
      {"name", offsetof(mb__result_plan_t, name), K_STR, OPT},
      {"recipe", offsetof(mb__result_plan_t, recipe), K_STR, OPT},
      {"model", offsetof(mb__result_plan_t, model), K_STR, OPT},
      {"mode", offsetof(mb__result_plan_t, mode), K_STR, OPT},
      {"shape_name", offsetof(mb__result_plan_t, shape_name), K_STR, OPT},
  };
  mb_status_t st = read_fields(root, "", &p, k_fields, COUNT(k_fields));
  if (st == MB_OK)
    st = read_value(root, "", "speedup_vs_baseline", K_NUM, OPT,
                    &r->info.speedup_vs_baseline);
  if (st != MB_OK) return st;
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(root, "config");
  if (config && !(p.config = cJSON_Duplicate(config, 1)))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result's config");
  return mb__result_set_plan(r, &p); /* takes p.config */
}

/* ---- a composite's extras (phases, steps, accuracy) and memory -----------
 */

static mb_status_t read_phase_name(const char *name, const char *path,
                                   mb_phase_t *out) {
  for (int p = MB_PHASE_FORWARD; p <= MB_PHASE_SETUP; p++)
    if (!strcmp(name, mb_phase_name((mb_phase_t)p))) {
      *out = (mb_phase_t)p;
      return MB_OK;
    }
  return bad(path, "unknown phase \"%s\"; valid: forward, backward, setup",
             name);
}

static mb_status_t read_steps(const cJSON *root, mb_result_t *r) {
  const cJSON *arr;
  size_t n;
  char block[64];
  mb_status_t st = read_array(root, "", "steps", OPT, &arr, &n);
  for (size_t i = 0; st == MB_OK && i < n; i++) {
    const cJSON *o = cJSON_GetArrayItem(arr, (int)i);
    snprintf(block, sizeof block, "steps[%zu]", i);
    if (!cJSON_IsObject(o)) return bad(block, "expected an object");
    mb_step_time_t t = MB_STEP_TIME_INIT;
    const char *phase = NULL;
    const field_t k_fields[] = {
#define ROW(key, member, kind, flags) \
  {key, offsetof(mb_step_time_t, member), K_##kind, flags},
        MB__STEP_FIELDS(ROW)
#undef ROW
    };
    st = read_fields(o, block, &t, k_fields, COUNT(k_fields));
    if (st == MB_OK) st = read_value(o, block, "phase", K_STR, 0, &phase);
    if (st == MB_OK) st = read_phase_name(phase, block, &t.phase);
    if (st == MB_OK) st = mb__result_add_step(r, &t);
  }
  return st;
}

static mb_status_t read_model(const cJSON *root, mb_result_t *r) {
  const cJSON *o;
  mb_status_t st = read_value(root, "", "peak_memory_bytes", K_NUM, OPT,
                              &r->info.peak_memory_bytes);
  if (st == MB_OK) st = read_block(root, "phases", &o);
  if (st == MB_OK && o)
    st = read_value(o, "phases", "forward_ns", K_NUM, 0, &r->phase_ns[0]);
  if (st == MB_OK && o)
    st = read_value(o, "phases", "backward_ns", K_NUM, 0, &r->phase_ns[1]);
  if (st == MB_OK) st = read_steps(root, r);
  if (st == MB_OK) st = read_block(root, "accuracy", &o);
  if (st != MB_OK || !o) return st;
  mb_accuracy_t a = MB_ACCURACY_INIT;
  const field_t k_fields[] = {
#define ROW(key, member, kind, flags) \
  {key, offsetof(mb_accuracy_t, member), K_##kind, flags},
      MB__ACCURACY_FIELDS(ROW)
#undef ROW
  };
  st = read_fields(o, "accuracy", &a, k_fields, COUNT(k_fields));
  a.checked = 1;
  if (st == MB_OK) mb__result_set_accuracy(r, &a);
  return st;
}

/* timer, warning, status and the rest of the identity. */
static mb_status_t read_texts(const cJSON *root, mb_result_t *r) {
  const char *timer = "", *warning = "", *reason = "";
  mb_result_status_t status = MB_RESULT_OK;
  mb_status_t st = read_status(root, &status);
  if (st == MB_OK) st = read_value(root, "", "reason", K_STR, 0, &reason);
  if (st == MB_OK) st = read_value(root, "", "timer", K_STR, OPT, &timer);
  if (st == MB_OK) st = read_value(root, "", "warning", K_STR, OPT, &warning);
  if (st != MB_OK) return st;
  mb__result_set_status(r, status, reason);
  mb__result_set_timer(r, timer);
  if (*warning) mb__result_warn(r, warning); /* the warning was "" */
  if (strcmp(r->reason, reason) || strcmp(r->timer, timer) ||
      strcmp(r->warning, warning))
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory for a result");
  return MB_OK;
}

/* ---- the whole ------------------------------------------------------------
 */

static mb_status_t fill(const cJSON *root, mb_result_t *r, const ident_t *id) {
  mb_status_t st = set_device(r, id->device);
  r->info.emulated = id->emulated;
  /* In the order each needs: repetitions read the samples and stats. */
  mb_status_t (*const readers[])(const cJSON *, mb_result_t *) = {
      read_texts,   read_rotate, read_timing,      read_correctness,
      read_samples, read_stats,  read_repetitions, read_derived,
      read_model,   read_notes,  read_plan};
  for (size_t i = 0; st == MB_OK && i < COUNT(readers); i++)
    st = readers[i](root, r);
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
                  type_name(root));
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
