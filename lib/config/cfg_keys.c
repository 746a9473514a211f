/* Duplicate-key detection for the config readers (cfg_tree.h): open
 * addressing over indices into the map's own key array, so no key is
 * copied; the table doubles (and is rebuilt from the keys) before it is
 * half full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_tree.h"
#include "error.h"
#include "mb_fnv.h"

/* The slot where key is, or the empty one where it would go. */
static size_t *find(const mb__cfg_keyset_t *ks, char *const *keys,
                    const char *key) {
  size_t i = (size_t)mb__fnv1a_str(key) & (ks->cap - 1);
  while (ks->slots[i] && strcmp(keys[ks->slots[i] - 1], key))
    i = (i + 1) & (ks->cap - 1);
  return &ks->slots[i];
}

static mb_status_t grow(mb__cfg_keyset_t *ks, const mb_cfg_node_t *map) {
  size_t cap = ks->cap ? 2 * ks->cap : 16;
  size_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading keys");
  free(ks->slots);
  ks->slots = slots;
  ks->cap = cap;
  for (size_t i = 0; i < map->count; i++)
    *find(ks, map->keys, map->keys[i]) = i + 1;
  return MB_OK;
}

mb_status_t mb__cfg_keyset_add(mb__cfg_keyset_t *ks, const mb_cfg_node_t *map,
                               const char *key, int *dup) {
  *dup = 0;
  if (2 * (map->count + 1) > ks->cap) {
    mb_status_t st = grow(ks, map);
    if (st != MB_OK) return st;
  }
  size_t *slot = find(ks, map->keys, key);
  if (*slot)
    *dup = 1;
  else
    *slot = map->count + 1;
  return MB_OK;
}

void mb__cfg_keyset_free(mb__cfg_keyset_t *ks) {
  free(ks->slots);
  ks->slots = NULL;
  ks->cap = 0;
}
