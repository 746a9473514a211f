/* GEMM shape presets: one table of the fixed model shapes, one generator
 * per power-of-two family. Numbers and names as docs/ops.md (from OPS.md:
 * torchao's presets, with unique names where torchao reused them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "microbench/preset.h"

struct mb_shape_list {
  size_t count, cap;
  struct shape {
    char name[48];
    int64_t mkn[3];
  } * items;
};

/* A layer of a model preset: [M, K, N] with M from the preset's M list
 * (m = 0) or fixed. */
typedef struct layer {
  const char *name;
  int64_t m, k, n;
} layer_t;

static const layer_t k_llama[] = {
    {"attn.wqkv", 16384, 8192, 1280},
    {"attn.w0", 16384, 1024, 8192},
    {"ffn.w13", 16384, 8192, 7168},
    {"ffn.w2", 16384, 3584, 8192},
};
static const layer_t k_llama4[] = {{"FFN", 0, 8192, 5120},
                                   {"QO_proj", 0, 8192, 8192},
                                   {"KV_proj", 0, 8192, 1024}};
static const layer_t k_ds236[] = {{"FFN", 0, 1536, 5120},
                                  {"QKVO_proj", 0, 7168, 7168}};
static const layer_t k_ds671[] = {{"FFN", 0, 2048, 7168},
                                  {"QKVO_proj", 0, 7168, 7168}};
static const layer_t k_qwen3[] = {{"QO_proj", 0, 5120, 5120},
                                  {"KV_proj", 0, 5120, 640}};
static const layer_t k_gemma3[] = {{"QO_proj", 0, 4096, 4096},
                                   {"KV_proj", 0, 4096, 1024}};

typedef enum gen {
  GEN_NONE,
  GEN_LAYERS,
  GEN_POW2,
  GEN_POW2_EXT,
  GEN_SMALL_SWEEP,
  GEN_SWEEP
} gen_t;

typedef struct preset {
  const char *name, *summary;
  gen_t gen;
  const layer_t *layers;
  size_t num_layers;
  int min_power, max_power; /* defaults of the generated families */
} preset_t;

#define LAYERS(t) GEN_LAYERS, t, sizeof t / sizeof t[0], 0, 0

static const preset_t k_presets[] = {
    {"custom", "the shapes listed in the config file", GEN_NONE, NULL, 0, 0, 0},
    {"llama", "Llama-2-70B, fused wqkv and w13, M = 16384", LAYERS(k_llama)},
    {"llama4", "Llama 4: FFN, QO_proj, KV_proj for M in {16384, 128000}",
     LAYERS(k_llama4)},
    {"deepseek_v3_236b", "DeepSeek-V3 236B: FFN, QKVO_proj for each M",
     LAYERS(k_ds236)},
    {"deepseek_v3_671b", "DeepSeek-V3 671B: FFN, QKVO_proj for each M",
     LAYERS(k_ds671)},
    {"qwen3_32b", "Qwen3 32B: QO_proj, KV_proj for each M", LAYERS(k_qwen3)},
    {"gemma3_27b", "Gemma 3 27B: QO_proj, KV_proj for each M",
     LAYERS(k_gemma3)},
    {"pow2", "cubes 2^p, p in [min_power, max_power] (10..14)", GEN_POW2, NULL,
     0, 10, 14},
    {"pow2_extended", "cubes 2^p and 2^p + 2^(p-1), p in [min, max] (10..14)",
     GEN_POW2_EXT, NULL, 0, 10, 14},
    {"small_sweep", "(2^a, 2^b, 2^c), a <= b <= c in [min, max] (10..14)",
     GEN_SMALL_SWEEP, NULL, 0, 10, 14},
    {"sweep", "every (2^a, 2^b, 2^c), a, b, c in [min, max] (8..15)", GEN_SWEEP,
     NULL, 0, 8, 15},
};
#define NUM_PRESETS (sizeof k_presets / sizeof k_presets[0])

static const int64_t k_default_m[] = {16384, 128000};

size_t mb_preset_count(void) {
  return NUM_PRESETS;
}

const char *mb_preset_name(size_t index, const char **summary) {
  if (index >= NUM_PRESETS) return NULL;
  if (summary) *summary = k_presets[index].summary;
  return k_presets[index].name;
}

static mb_status_t add(mb_shape_list_t *l, const char *name, int64_t m,
                       int64_t k, int64_t n) {
  if (l->count == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    struct shape *grown = realloc(l->items, cap * sizeof *grown);
    if (!grown) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for shapes");
    l->items = grown;
    l->cap = cap;
  }
  struct shape *s = &l->items[l->count++];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->mkn[0] = m;
  s->mkn[1] = k;
  s->mkn[2] = n;
  return MB_OK;
}

/* "<prefix><m>" for the pow2 cubes, "MxKxN" (prefix NULL) for sweeps. */
static mb_status_t add_cube_named(mb_shape_list_t *l, const char *prefix,
                                  int64_t m, int64_t k, int64_t n) {
  char name[48];
  if (prefix)
    snprintf(name, sizeof name, "%s%lld", prefix, (long long)m);
  else
    snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)m, (long long)k,
             (long long)n);
  return add(l, name, m, k, n);
}

/* Model presets: fixed-M layers once, the others once per M value, named
 * "<layer>.M<m>" so that every name is unique. */
static mb_status_t gen_layers(mb_shape_list_t *l, const preset_t *p,
                              const int64_t *ms, size_t nm) {
  mb_status_t st = MB_OK;
  for (size_t i = 0; i < p->num_layers && st == MB_OK; i++) {
    const layer_t *y = &p->layers[i];
    if (y->m) {
      st = add(l, y->name, y->m, y->k, y->n);
      continue;
    }
    for (size_t j = 0; j < nm && st == MB_OK; j++) {
      char name[48];
      snprintf(name, sizeof name, "%s.M%lld", y->name, (long long)ms[j]);
      st = add(l, name, ms[j], y->k, y->n);
    }
  }
  return st;
}

static mb_status_t gen_powers(mb_shape_list_t *l, const preset_t *p, int lo,
                              int hi) {
  mb_status_t st = MB_OK;
  for (int a = lo; a <= hi && st == MB_OK; a++) {
    const int64_t x = (int64_t)1 << a;
    switch (p->gen) {
      case GEN_POW2:
        st = add_cube_named(l, "pow2_", x, x, x);
        break;
      case GEN_POW2_EXT:
        st = add_cube_named(l, "pow2_", x, x, x);
        if (st == MB_OK && a > 0)
          st = add_cube_named(l, "pow2_", x + x / 2, x + x / 2, x + x / 2);
        break;
      default:
        for (int b = p->gen == GEN_SMALL_SWEEP ? a : lo; b <= hi; b++)
          for (int c = p->gen == GEN_SMALL_SWEEP ? b : lo; c <= hi; c++)
            if (st == MB_OK)
              st = add_cube_named(l, NULL, x, (int64_t)1 << b, (int64_t)1 << c);
    }
  }
  return st;
}

static void list_names(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NUM_PRESETS && len < cap; i++) {
    int n = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
                     k_presets[i].name);
    if (n > 0) len += (size_t)n;
  }
}

mb_status_t mb_preset_shapes(const char *name, const mb_preset_params_t *params,
                             mb_shape_list_t **out) {
  if (!out) return mb__fail(MB_ERR_INVALID_ARG, "mb_preset_shapes: NULL out");
  *out = NULL;
  mb_preset_params_t full = MB_PRESET_PARAMS_INIT;
  const mb_preset_params_t *pp = &full;
  mb_status_t st;
  if (params &&
      (st = mb__struct_in(MB__STRUCT_PRESET_PARAMS, "mb_preset_shapes", params,
                          &full)) != MB_OK)
    return st;
  const preset_t *p = NULL;
  for (size_t i = 0; i < NUM_PRESETS && !p; i++)
    if (name && !strcmp(name, k_presets[i].name)) p = &k_presets[i];
  char valid[512];
  list_names(valid, sizeof valid);
  if (!p)
    return mb__fail(MB_ERR_NOT_FOUND, "unknown shape preset \"%s\"; valid: %s",
                    name ? name : "(null)", valid);
  if (p->gen == GEN_NONE)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "shape preset \"custom\" has no shapes of its own: list "
                    "them with it (shapes: [[M, K, N], ...])");
  int lo = pp->min_power ? pp->min_power : p->min_power;
  int hi = pp->max_power ? pp->max_power : p->max_power;
  if (p->gen != GEN_LAYERS && (lo < 0 || hi > 30 || lo > hi))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "shape preset \"%s\": min_power %d, max_power %d; need "
                    "0 <= min_power <= max_power <= 30",
                    p->name, lo, hi);
  if (p->gen == GEN_LAYERS && (pp->min_power || pp->max_power))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "shape preset \"%s\" has fixed shapes: min_power and "
                    "max_power do not apply",
                    p->name);
  for (size_t i = 0; i < pp->num_m_values; i++)
    if (pp->m_values[i] <= 0)
      return mb__fail(MB_ERR_INVALID_ARG,
                      "shape preset \"%s\": M values must be positive (got "
                      "%lld)",
                      p->name, (long long)pp->m_values[i]);
  mb_shape_list_t *l = calloc(1, sizeof *l);
  if (!l) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for shapes");
  st = p->gen == GEN_LAYERS
           ? gen_layers(l, p, pp->num_m_values ? pp->m_values : k_default_m,
                        pp->num_m_values ? pp->num_m_values : 2)
           : gen_powers(l, p, lo, hi);
  if (st != MB_OK) {
    mb_shape_list_destroy(l);
    return st;
  }
  *out = l;
  return MB_OK;
}

size_t mb_shape_list_count(const mb_shape_list_t *list) {
  return list ? list->count : 0;
}

mb_status_t mb_shape_list_get(const mb_shape_list_t *list, size_t i,
                              const char **name, int64_t mkn[3]) {
  if (!list || i >= list->count)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_shape_list_get: index %zu of %zu",
                    i, list ? list->count : 0);
  if (name) *name = list->items[i].name;
  if (mkn) memcpy(mkn, list->items[i].mkn, sizeof list->items[i].mkn);
  return MB_OK;
}

void mb_shape_list_destroy(mb_shape_list_t *list) {
  if (!list) return;
  free(list->items);
  free(list);
}
