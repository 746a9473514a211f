/* torchao's recipe lists: quantization_config_recipe_names (`baseline`
 * first and always, since every speedup is measured against it; each name
 * once) and sparsity_config_recipe_names, paired with the recipes as
 * torchao's runner pairs them; each pair is one of our recipes
 * (ops/recipe.c). docs/config.md, "torchao schema". */
#include <stdlib.h>
#include <string.h>

#include "plan/models.h"
#include "plan/torchao_recipes.h"

#define PATH_CAP 512

static mb_status_t no_memory(void) {
  return mb__fail(MB_ERR_NO_MEMORY, "out of memory reading a config");
}

/* How torchao pairs a sparsity name with the quantization recipes
 * (pytorch/ao dbef6992, benchmark_runner.py,
 * get_quantization_sparsity_recipes): a name containing "block" pairs with
 * baseline alone, whatever is listed; one containing "semi" or "2:4" with
 * each listed recipe that contains "int8dq" or "float8dq" (or "marlin",
 * which we do not have) or is "baseline". Checked in this order. */
static const struct sparse_pair {
  const char *quant, *recipe;
  int block; /* the block family */
} k_sparse_pairs[] = {
    {"baseline", "block-sparse", 1},
    {"baseline", "semi-sparse", 0},
    {"int8dq", "int8dq-semi-sparse", 0},
    {"float8dq-tensor", "float8dq-tensor-semi-sparse", 0},
    {"float8dq-row", "float8dq-row-semi-sparse", 0},
};

/* Whether `r` is one of our sparsity pairs' recipes: torchao's
 * quantization list has no such name (its own would fall back to baseline),
 * so the file means sparsity_config_recipe_names. */
static int is_sparse_recipe(const char *r) {
  for (size_t i = 0; i < sizeof k_sparse_pairs / sizeof *k_sparse_pairs; i++)
    if (!strcmp(k_sparse_pairs[i].recipe, r)) return 1;
  return 0;
}

static mb_status_t read_recipes(mb__pb_t *pb, mb__torchao_recipes_t *f) {
  static const char key[] = "quantization_config_recipe_names";
  const mb_cfg_node_t *n = mb__cfg_get(pb->root, key);
  if (n && n->kind != MB_CFG_LIST)
    return mb__pb_error(pb, n, key, "expected a list of recipe names, got a %s",
                        mb__cfg_kind_name(n->kind));
  size_t count = n ? n->count : 0;
  f->recipes = malloc((count + 1) * sizeof *f->recipes);
  if (!f->recipes) return no_memory();
  f->recipes[f->num_recipes++] = "baseline";
  for (size_t i = 0; i < count; i++) {
    char path[PATH_CAP];
    const char *r;
    mb__path_index(path, sizeof path, key, i);
    mb_status_t st = mb__pb_string(pb, n->items[i], path, &r);
    if (st == MB_OK) st = mb__recipe_check(pb, n->items[i], path, r);
    if (st == MB_OK && is_sparse_recipe(r))
      st = mb__pb_error(pb, n->items[i], path,
                        "\"%s\" is our name for a sparsity pair: torchao "
                        "lists sparsity under sparsity_config_recipe_names "
                        "(semi-sparse, 2:4, block)",
                        r);
    if (st != MB_OK) return st;
    f->listed_baseline |= !strcmp(r, "baseline");
    size_t k = 0;
    while (k < f->num_recipes && strcmp(f->recipes[k], r)) k++;
    if (k == f->num_recipes) f->recipes[f->num_recipes++] = r;
  }
  return MB_OK;
}

static void add_combo(mb__torchao_recipes_t *f, const char *recipe,
                      const char *quant, const char *sparsity) {
  for (size_t i = 0; i < f->num_combos; i++) /* torchao's set of pairs */
    if (!strcmp(f->combos[i].quant, quant) &&
        !strcmp(f->combos[i].sparsity ? f->combos[i].sparsity : "",
                sparsity ? sparsity : ""))
      return;
  f->combos[f->num_combos++] = (mb__torchao_combo_t){recipe, quant, sparsity};
}

/* The pairs of one sparsity name (k_sparse_pairs); 0: a name torchao
 * rejects. */
static int pair_sparsity(mb__torchao_recipes_t *f, const char *s) {
  const int block = strstr(s, "block") != NULL;
  if (!block && !strstr(s, "semi") && !strstr(s, "2:4")) return 0;
  for (size_t i = 0; i < sizeof k_sparse_pairs / sizeof *k_sparse_pairs; i++) {
    const struct sparse_pair *p = &k_sparse_pairs[i];
    if (p->block != block) continue;
    int listed = block || (!strcmp(p->quant, "baseline") && f->listed_baseline);
    for (size_t r = 1; !listed && r < f->num_recipes; r++)
      listed = !strcmp(f->recipes[r], p->quant);
    if (listed) add_combo(f, p->recipe, p->quant, s);
  }
  return 1;
}

/* sparsity_config_recipe_names: torchao's runner skips a null item (no
 * sparsity: the recipes already run without) and rejects any other name
 * it cannot pair, "None" as a string included. */
static mb_status_t read_sparsity(mb__pb_t *pb, mb__torchao_recipes_t *f) {
  static const char key[] = "sparsity_config_recipe_names";
  const mb_cfg_node_t *n = mb__cfg_get(pb->root, key);
  if (n && n->kind != MB_CFG_LIST)
    return mb__pb_error(pb, n, key,
                        "expected a list of sparsity names, got a %s",
                        mb__cfg_kind_name(n->kind));
  const size_t count = n ? n->count : 0;
  const size_t pairs = sizeof k_sparse_pairs / sizeof *k_sparse_pairs;
  f->combos = malloc((f->num_recipes + count * pairs) * sizeof *f->combos);
  if (!f->combos) return no_memory();
  for (size_t r = 0; r < f->num_recipes; r++)
    add_combo(f, f->recipes[r], f->recipes[r], NULL);
  for (size_t i = 0; i < count; i++) {
    char path[PATH_CAP];
    const char *s;
    if (n->items[i]->kind == MB_CFG_NULL) continue;
    mb__path_index(path, sizeof path, key, i);
    mb_status_t st = mb__pb_string(pb, n->items[i], path, &s);
    if (st != MB_OK) return st;
    if (!pair_sparsity(f, s))
      return mb__pb_error(pb, n->items[i], path,
                          "unknown sparsity \"%s\"; valid: semi-sparse, 2:4 "
                          "(2:4 semi-structured), block (64x64 block-sparse)",
                          s);
  }
  return MB_OK;
}

mb_status_t mb__torchao_read_recipes(mb__pb_t *pb, mb__torchao_recipes_t *f) {
  mb_status_t st = read_recipes(pb, f);
  return st == MB_OK ? read_sparsity(pb, f) : st;
}

void mb__torchao_recipes_free(mb__torchao_recipes_t *f) {
  free(f->recipes);
  free(f->combos);
}
