/* Scaling modes as block sizes, and their names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op_internal.h"

static const char *const k_mode_names[] = {"none", "tensor", "row",
                                           "col",  "block",  "group"};
#define NUM_MODES (sizeof k_mode_names / sizeof k_mode_names[0])

const char *mb_scale_mode_name(mb_scale_mode_t mode) {
  return (unsigned)mode < NUM_MODES ? k_mode_names[mode] : "?";
}

/* "128x128" -> two positive integers. */
static int parse_pair(const char *t, int64_t *a, int64_t *b) {
  char *end;
  long long x = strtoll(t, &end, 10);
  if (end == t || x <= 0 || (*end != 'x' && *end != 'X')) return 0;
  const char *u = end + 1;
  long long y = strtoll(u, &end, 10);
  if (end == u || y <= 0 || *end) return 0;
  *a = x;
  *b = y;
  return 1;
}

mb_status_t mb_scaling_from_string(const char *text, mb_scaling_t *out) {
  static const char k_valid[] =
      "valid: none, tensor, row, col, block:BMxBN (e.g. block:1x128, "
      "block:128x128), group:G (e.g. group:128)";
  if (!text || !out)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_scaling_from_string: NULL argument");
  mb_scaling_t s = {MB_SCALE_NONE, {0, 0}};
  for (size_t i = 0; i < 4; i++)
    if (strcmp(text, k_mode_names[i]) == 0) {
      s.mode = (mb_scale_mode_t)i;
      *out = s;
      return MB_OK;
    }
  const char *body = text;
  if (strncmp(text, "block:", 6) == 0) body = text + 6;
  if (parse_pair(body, &s.block[0], &s.block[1])) {
    s.mode = MB_SCALE_BLOCK;
    *out = s;
    return MB_OK;
  }
  if (strncmp(text, "group:", 6) == 0) {
    char *end;
    long long g = strtoll(text + 6, &end, 10);
    if (end != text + 6 && g > 0 && !*end) {
      s.mode = MB_SCALE_GROUP;
      s.block[1] = g;
      *out = s;
      return MB_OK;
    }
  }
  return mb__fail(MB_ERR_INVALID_ARG, "unknown scaling \"%s\"; %s", text,
                  k_valid);
}

mb_status_t mb__scaling_resolve(const char *op, const char *operand,
                                mb_scaling_t *s, int64_t rows, int64_t cols,
                                int group_along_rows) {
  int64_t g = s->block[1];
  switch (s->mode) {
    case MB_SCALE_NONE:
      s->block[0] = rows, s->block[1] = cols;
      return MB_OK;
    case MB_SCALE_TENSOR:
      s->block[0] = rows, s->block[1] = cols;
      return MB_OK;
    case MB_SCALE_ROW:
      s->block[0] = 1, s->block[1] = cols;
      return MB_OK;
    case MB_SCALE_COL:
      s->block[0] = rows, s->block[1] = 1;
      return MB_OK;
    case MB_SCALE_GROUP:
      if (g <= 0)
        return mb__fail(MB_ERR_INVALID_ARG, "%s: %s group size must be > 0", op,
                        operand);
      s->block[0] = group_along_rows ? g : 1;
      s->block[1] = group_along_rows ? 1 : g;
      break;
    case MB_SCALE_BLOCK:
      if (s->block[0] <= 0 || s->block[1] <= 0)
        return mb__fail(MB_ERR_INVALID_ARG,
                        "%s: %s block %lldx%lld: both sides must be > 0", op,
                        operand, (long long)s->block[0],
                        (long long)s->block[1]);
      break;
    default:
      return mb__fail(MB_ERR_INVALID_ARG,
                      "%s: %s scaling mode %d; valid: none, tensor, row, col, "
                      "block, group",
                      op, operand, (int)s->mode);
  }
  if (rows % s->block[0] || cols % s->block[1])
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: %s is %lldx%lld, which %s blocks of %lldx%lld do not "
                    "divide; choose a shape that is a multiple of the block",
                    op, operand, (long long)rows, (long long)cols,
                    mb_scale_mode_name(s->mode), (long long)s->block[0],
                    (long long)s->block[1]);
  return MB_OK;
}

void mb__scaling_grid(const mb_scaling_t *s, int64_t rows, int64_t cols,
                      int64_t *grid_rows, int64_t *grid_cols) {
  if (s->mode == MB_SCALE_NONE || s->block[0] <= 0 || s->block[1] <= 0) {
    *grid_rows = *grid_cols = 1;
    return;
  }
  *grid_rows = rows / s->block[0];
  *grid_cols = cols / s->block[1];
}
