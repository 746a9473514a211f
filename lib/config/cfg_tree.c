/* The config tree: construction, look-up, and the file front door. */
#include "config/cfg_tree.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "internal.h"

mb_cfg_node_t *mb__cfg_new(mb_cfg_kind_t kind, int line, const char *text) {
  mb_cfg_node_t *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->kind = kind;
  n->line = line;
  if (text && !(n->text = strdup(text))) {
    free(n);
    return NULL;
  }
  return n;
}

void mb__cfg_free(mb_cfg_node_t *n) {
  if (!n) return;
  for (size_t i = 0; i < n->count; i++) {
    mb__cfg_free(n->items[i]);
    if (n->keys) free(n->keys[i]);
  }
  free(n->items);
  free(n->keys);
  free(n->text);
  free(n);
}

/* The arrays grow geometrically: their capacity is count rounded up to a
 * power of two (appending is the only way they grow), so they are
 * reallocated when count is one. Growing by one element made reading n
 * children O(n^2) wherever realloc cannot extend in place: a 100,000-key
 * file took minutes under ASan (test_cfg_tree, and robustness_smoke's
 * many_keys.yml in CI). */
static size_t capacity_after(size_t count) {
  return (count & (count - 1)) == 0 ? (count ? 2 * count : 1) : 0;
}

mb_status_t mb__cfg_append(mb_cfg_node_t *parent, const char *key,
                           mb_cfg_node_t *child) {
  const size_t cap = capacity_after(parent->count); /* 0: room left */
  mb_cfg_node_t **items = parent->items;
  if (cap) {
    items = realloc(parent->items, cap * sizeof *items);
    if (items) parent->items = items;
  }
  char **keys = NULL, *k = NULL;
  if (items && parent->kind == MB_CFG_MAP) {
    keys = parent->keys;
    if (cap) {
      keys = realloc(parent->keys, cap * sizeof *keys);
      if (keys) parent->keys = keys;
    }
    k = keys ? strdup(key ? key : "") : NULL;
  }
  if (!items || (parent->kind == MB_CFG_MAP && !k)) {
    mb__cfg_free(child);
    return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
  }
  if (k) parent->keys[parent->count] = k;
  parent->items[parent->count++] = child;
  return MB_OK;
}

int mb__cfg_number(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  /* strtod also takes "inf", "nan" and hex: YAML spells those otherwise. */
  return *s && !*end && errno == 0 && isfinite(*v) && !strpbrk(s, "xXiInN");
}

const mb_cfg_node_t *mb__cfg_get(const mb_cfg_node_t *map, const char *key) {
  if (!map || map->kind != MB_CFG_MAP) return NULL;
  for (size_t i = 0; i < map->count; i++)
    if (!strcmp(map->keys[i], key)) return map->items[i];
  return NULL;
}

const char *mb__cfg_kind_name(mb_cfg_kind_t kind) {
  static const char *const k_names[] = {"null",   "boolean", "number",
                                        "string", "list",    "map"};
  return (unsigned)kind < 6 ? k_names[kind] : "?";
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

/* JSON by extension, else by its first character; YAML otherwise. */
static int looks_like_json(const char *path, const char *text) {
  if (ends_with(path, ".json")) return 1;
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return 0;
  text += strspn(text, " \t\r\n");
  return *text == '{' || *text == '[';
}

mb_status_t mb__cfg_parse_file(const char *path, mb_cfg_node_t **out) {
  *out = NULL;
  char *text;
  size_t len;
  mb_status_t st = mb__read_file(path, &text, &len);
  if (st != MB_OK) return st;
  st = mb__cfg_parse_text(text, len, path, out);
  free(text);
  return st;
}

mb_status_t mb__cfg_parse_text(const char *text, size_t len, const char *name,
                               mb_cfg_node_t **out) {
  *out = NULL;
  if (strlen(text) != len)
    return mb__fail(MB_ERR_PARSE, "%s: contains a NUL byte (not a text file?)",
                    name);
  return looks_like_json(name, text) ? mb__cfg_parse_json(text, name, out)
                                     : mb__cfg_parse_yaml(text, len, name, out);
}
