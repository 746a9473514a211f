/* Doubles written to JSON read back bit for bit.
 *
 * cJSON prints a double with 15 significant digits whenever those read back
 * within a relative DBL_EPSILON of it, which can drop the last bit: a
 * result read back (mb_result_from_json, --isolate's children, merged or
 * loaded files) would differ from the one written in its last place. Here a
 * number that 15 digits do not give back exactly becomes raw text with the
 * fewest digits (16 or 17) that do; the rest keep cJSON's own text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/json_exact.h"

/* The shortest %.Ng text (N = 15..17) that strtod gives back as `v`; the
 * digit count, so 15 means cJSON's own text is already exact. */
static int exact_text(double v, char *buf, size_t cap) {
  int digits = 15;
  for (; digits < 17; digits++) {
    snprintf(buf, cap, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  if (digits == 17) snprintf(buf, cap, "%.17g", v);
  /* A locale with a decimal comma: JSON wants the point (as cJSON does). */
  for (char *c = buf; *c; c++)
    if (*c == ',') *c = '.';
  return digits;
}

static void make_exact(cJSON *parent, cJSON *item) {
  const double v = item->valuedouble;
  char buf[40];
  /* Non-finite numbers are null in cJSON's text; leave them to it. */
  if (!isfinite(v) || exact_text(v, buf, sizeof buf) == 15) return;
  cJSON *raw = cJSON_CreateRaw(buf);
  if (!raw) return; /* out of memory: cJSON's 15 digits, off by an ulp */
  /* The member's key moves to the raw item (the replaced one is freed). */
  raw->string = item->string;
  raw->type |= item->type & cJSON_StringIsConst;
  item->string = NULL;
  cJSON_ReplaceItemViaPointer(parent, item, raw);
}

void mb__json_exact_numbers(cJSON *tree) {
  cJSON *next;
  for (cJSON *c = tree ? tree->child : NULL; c; c = next) {
    next = c->next;
    if (cJSON_IsNumber(c))
      make_exact(tree, c);
    else if (cJSON_IsArray(c) || cJSON_IsObject(c))
      mb__json_exact_numbers(c);
  }
}

char *mb__json_print_exact(const cJSON *tree, int formatted) {
  cJSON *copy = cJSON_Duplicate(tree, 1);
  if (!copy) return NULL;
  mb__json_exact_numbers(copy);
  char *text = formatted ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
  cJSON_Delete(copy);
  return text;
}
