/* The distinct names a chart meets (html.h, mb__names_t): one list kept in
 * order of first appearance, with a number each, for every chart's ops,
 * dtypes, shapes and recipe rows. */
#include <stdlib.h>
#include <string.h>

#include "report/html.h"

int mb__names_init(mb__names_t *l, size_t cap) {
  *l = (mb__names_t){0};
  l->name = calloc(cap ? cap : 1, sizeof *l->name);
  l->value = calloc(cap ? cap : 1, sizeof *l->value);
  l->cap = cap;
  if (l->name && l->value) return 1;
  mb__names_free(l);
  return 0;
}

void mb__names_free(mb__names_t *l) {
  free(l->name);
  free(l->value);
  *l = (mb__names_t){0};
}

size_t mb__names_index(mb__names_t *l, const char *name, double value) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->name[i], name) == 0) return i;
  if (l->n == l->cap) return l->cap; /* only past the caller's bound */
  l->name[l->n] = name;
  l->value[l->n] = value;
  return l->n++;
}

void mb__names_sort(mb__names_t *l) {
  for (size_t i = 1; i < l->n; i++) /* insertion sort: stable, few names */
    for (size_t j = i; j > 0 && l->value[j - 1] > l->value[j]; j--) {
      const double v = l->value[j];
      const char *s = l->name[j];
      l->value[j] = l->value[j - 1], l->name[j] = l->name[j - 1];
      l->value[j - 1] = v, l->name[j - 1] = s;
    }
}
