/* Where an item of the JAX suite's current layout takes parameters from
 * outside the config file: its `model` presets (core/model_configs.py)
 * and `csv_shapes` files (core/csv_loader.py), read as its
 * core/config.py load_config does (jax_sweep.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/cfg_tree.h"
#include "internal.h"
#include "plan/jax_sweep.h"

/* core/model_configs.py MODELS at upstream 6a306a8, field for field. */
typedef struct preset {
  const char *name, *attn_type, *ffn_type;
  int64_t layers, seq_len, num_q_heads, num_kv_heads, head_dim, model_dim,
      shared_ffn_dim, routed_ffn_dim, num_experts, experts_activated;
} preset_t;

static const preset_t k_presets[] = {
    {"LLM-36B", "MHA", "SwiGLU", 60, 8192, 56, 56, 128, 7168, 2048, 2048, 256,
     8},
    {"LLM-100B", "GQA", "SwiGLU", 96, 16384, 64, 8, 128, 8192, 2048, 2048, 512,
     16},
    {"LLM-200B", "GQA", "SwiGLU", 80, 16384, 128, 8, 128, 16384, 4096, 4096,
     256, 8},
    {"LLM-400B", "GQA", "SwiGLU", 96, 16384, 128, 8, 128, 16384, 4096, 4096,
     512, 16},
};
#define NUM_PRESETS (sizeof k_presets / sizeof *k_presets)

/* A preset's fields in the dataclass's order: the name each has and
 * where it is (an int64_t or a string). */
static const struct {
  const char *key;
  size_t at;
  int text;
} k_fields[] = {
    {"name", offsetof(preset_t, name), 1},
    {"layers", offsetof(preset_t, layers), 0},
    {"seq_len", offsetof(preset_t, seq_len), 0},
    {"attn_type", offsetof(preset_t, attn_type), 1},
    {"num_q_heads", offsetof(preset_t, num_q_heads), 0},
    {"num_kv_heads", offsetof(preset_t, num_kv_heads), 0},
    {"head_dim", offsetof(preset_t, head_dim), 0},
    {"ffn_type", offsetof(preset_t, ffn_type), 1},
    {"model_dim", offsetof(preset_t, model_dim), 0},
    {"shared_ffn_dim", offsetof(preset_t, shared_ffn_dim), 0},
    {"routed_ffn_dim", offsetof(preset_t, routed_ffn_dim), 0},
    {"num_experts", offsetof(preset_t, num_experts), 0},
    {"experts_activated", offsetof(preset_t, experts_activated), 0},
};

static int takes(const char *const *keys, const char *key) {
  for (; *keys; keys++)
    if (!strcmp(*keys, key)) return 1;
  return 0;
}

static mb_cfg_node_t *field_node(const preset_t *p, size_t f, int line) {
  const char *at = (const char *)p + k_fields[f].at;
  if (k_fields[f].text)
    return mb__cfg_new(MB_CFG_STRING, line, *(const char *const *)at);
  char text[32];
  int64_t v;
  memcpy(&v, at, sizeof v);
  snprintf(text, sizeof text, "%lld", (long long)v);
  mb_cfg_node_t *n = mb__cfg_new(MB_CFG_NUMBER, line, text);
  if (n) n->number = (double)v;
  return n;
}

mb_status_t mb__sweep_preset(mb__pb_t *pb, const mb_cfg_node_t *n,
                             const char *path, const char *const *keys,
                             mb_cfg_node_t **out) {
  const char *name;
  *out = NULL;
  mb_status_t st = mb__pb_string(pb, n, path, &name);
  if (st != MB_OK) return st;
  const preset_t *p = NULL;
  for (size_t i = 0; i < NUM_PRESETS && !p; i++)
    if (!strcmp(k_presets[i].name, name)) p = &k_presets[i];
  if (!p) {
    char valid[256];
    size_t len = 0;
    valid[0] = '\0';
    for (size_t i = 0; i < NUM_PRESETS; i++) {
      int w = snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "",
                       k_presets[i].name);
      if (w > 0 && (size_t)w < sizeof valid - len) len += (size_t)w;
    }
    return mb__pb_error(pb, n, path,
                        "unknown model preset \"%s\"; valid (the suite's "
                        "core/model_configs.py): %s",
                        name, valid);
  }
  if (!(*out = mb__cfg_new(MB_CFG_MAP, n->line, NULL)))
    return mb__jax_no_memory();
  /* The benchmark's dataclass takes some of the fields; the suite passes
   * it all of them, which only a benchmark taking every one survives. */
  for (size_t f = 0; st == MB_OK && f < sizeof k_fields / sizeof *k_fields;
       f++) {
    if (!takes(keys, k_fields[f].key)) continue;
    mb_cfg_node_t *v = field_node(p, f, n->line);
    st = v ? mb__cfg_append(*out, k_fields[f].key, v) : mb__jax_no_memory();
  }
  if (st != MB_OK) {
    mb__cfg_free(*out);
    *out = NULL;
  }
  return st;
}

static int is_file(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

/* The suite opens the path as given (relative: to the working directory,
 * its repository's root in its own configs). A relative path not found
 * there is looked for from the config file's directory and each of its
 * parents, so a config and its shapes can travel together. */
static int locate(const char *file, const char *config, char *out, size_t cap) {
  snprintf(out, cap, "%s", file);
  if (is_file(out) || file[0] == '/' || !config) return is_file(out);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", config);
  for (char *slash; (slash = strrchr(dir, '/'));) {
    *slash = '\0';
    int w = snprintf(out, cap, "%s/%s", *dir ? dir : "", file);
    if (w > 0 && (size_t)w < cap && is_file(out)) return 1;
  }
  return 0;
}

void mb__sweep_relocate(mb_cfg_node_t *t, int line) {
  t->line = line;
  for (size_t i = 0; i < t->count; i++) mb__sweep_relocate(t->items[i], line);
}

mb_status_t mb__sweep_csv(mb__pb_t *pb, const mb_cfg_node_t *n,
                          const char *path, mb_cfg_node_t **rows, char *file,
                          size_t cap, char *why, size_t why_cap) {
  const char *written;
  *rows = NULL;
  mb_status_t st = mb__pb_string(pb, n, path, &written);
  if (st != MB_OK) return st;
  if (!strncmp(written, "http://", 7) || !strncmp(written, "https://", 8)) {
    snprintf(why, why_cap,
             "csv_shapes \"%s\" is a URL: libmicrobench reads local files "
             "only (it has no network code); download the CSV and give its "
             "path",
             written);
    return MB_OK;
  }
  if (!locate(written, pb->file, file, cap))
    return mb__pb_error(pb, n, path,
                        "csv_shapes file \"%s\" not found (looked in the "
                        "working directory, as the suite does, then from "
                        "the config file's directory up)",
                        written);
  char *text;
  size_t len;
  st = mb__read_file(file, &text, &len);
  if (st == MB_OK) {
    st = mb__cfg_parse_csv(text, len, file, rows);
    free(text);
  }
  if (st != MB_OK)
    return mb__pb_error(pb, n, path, "csv_shapes: %s", mb_error_last());
  return MB_OK;
}
