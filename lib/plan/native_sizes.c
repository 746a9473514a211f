/* The native schema's `sizes`: a benchmark of rank-1 ops (the collectives,
 * copy, the transfers) swept by size in bytes, as nccl-tests sweeps its
 * collectives (-b 8 -e 1G -f 2). Each size becomes shape [bytes / element
 * size] once the entry's dtype is known, so one list of sizes serves every
 * dtype of the sweep and the bytes moved stay the ones written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/native.h"
#include "plan/plan_range.h"

/* A size larger than this is surely a typo (1 PiB). */
#define MAX_BYTES ((int64_t)1 << 50)

/* The units a size may carry: binary, as nccl-tests reads -b/-e (its K,
 * M, G are 1024-based), and their IEC names. */
static const struct {
  const char *name;
  int shift;
} k_units[] = {{"B", 0},    {"KiB", 10}, {"K", 10},   {"MiB", 20}, {"M", 20},
               {"GiB", 30}, {"G", 30},   {"TiB", 40}, {"T", 40}};
#define NUM_UNITS (sizeof k_units / sizeof *k_units)
#define VALID_UNITS "B, KiB (or K), MiB (M), GiB (G), TiB (T)"

/* "64MiB", "1 GiB", "8": an integer, optional blanks, a unit. */
static mb_status_t parse_text(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, double *out) {
  const char *t = n->text;
  char *end = NULL;
  if (*t < '0' || *t > '9')
    return mb__pb_error(pb, n, path,
                        "\"%s\" is not a size: a whole number of bytes with "
                        "an optional unit (%s), e.g. 8, 64KiB, 1GiB",
                        t, VALID_UNITS);
  unsigned long long v = strtoull(t, &end, 10);
  while (*end == ' ') end++;
  int shift = -1;
  if (!*end) shift = 0;
  for (size_t i = 0; shift < 0 && i < NUM_UNITS; i++)
    if (!strcmp(end, k_units[i].name)) shift = k_units[i].shift;
  if (shift < 0)
    return mb__pb_error(pb, n, path, "\"%s\": unknown unit \"%s\"; valid: %s",
                        t, end, VALID_UNITS);
  *out = (double)v * (double)((int64_t)1 << shift);
  return MB_OK;
}

/* A size in bytes (a number, or text with a unit) in [1, MAX_BYTES]. */
static mb_status_t read_bytes(const mb__pb_t *pb, const mb_cfg_node_t *n,
                              const char *path, double *out) {
  mb_status_t st = n->kind == MB_CFG_STRING ? parse_text(pb, n, path, out)
                                            : mb__pb_number(pb, n, path, out);
  if (st != MB_OK) return st;
  if (*out < 1 || *out > (double)MAX_BYTES || *out != (double)(int64_t)*out)
    return mb__pb_error(pb, n, path,
                        "%s (%g bytes) is not a size: give a whole number of "
                        "bytes from 1 to 1 PiB",
                        n->text ? n->text : "this value", *out);
  return MB_OK;
}

static mb_status_t push_size(bench_t *b, double bytes) {
  shape_t s = {0};
  s.ndim = 1;
  s.bytes = (int64_t)bytes;
  s.origin = b->num_origins - 1;
  return mb__native_push_shape(b, &s);
}

mb_status_t mb__native_read_sizes(mb__pb_t *pb, bench_t *b, const found_t *f) {
  const mb_cfg_node_t *n = f->node;
  double v;
  if (n->kind == MB_CFG_MAP) { /* a range, its values checked one by one */
    mb_cfg_node_t *values = mb__cfg_new(MB_CFG_LIST, n->line, NULL);
    if (!values) return mb__native_no_memory();
    mb_status_t st = mb__range_expand(pb, n, f->path, MB__RANGE_ONE_STEP,
                                      read_bytes, values);
    if (st == MB_OK) st = mb__native_add_origin(b, n, f->path, FROM_SIZES);
    for (size_t i = 0; st == MB_OK && i < values->count; i++) {
      char here[PATH_CAP];
      mb__path_index(here, sizeof here, f->path, i);
      st = read_bytes(pb, values->items[i], here, &v);
      if (st == MB_OK) st = push_size(b, v);
    }
    mb__cfg_free(values);
    return st;
  }
  if (n->kind == MB_CFG_LIST && !n->count)
    return mb__pb_error(pb, n, f->path, "empty list; give at least one size");
  size_t count = n->kind == MB_CFG_LIST ? n->count : 1;
  for (size_t i = 0; i < count; i++) {
    const mb_cfg_node_t *item = n->kind == MB_CFG_LIST ? n->items[i] : n;
    char here[PATH_CAP];
    if (n->kind == MB_CFG_LIST)
      mb__path_index(here, sizeof here, f->path, i);
    else
      snprintf(here, sizeof here, "%s", f->path);
    mb_status_t st = read_bytes(pb, item, here, &v);
    if (st == MB_OK) st = mb__native_add_origin(b, item, here, FROM_SIZES);
    if (st == MB_OK) st = push_size(b, v);
    if (st != MB_OK) return st;
  }
  return MB_OK;
}

void mb__native_bytes_text(int64_t bytes, char *buf, size_t cap) {
  static const char *const k_names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  while (u + 1 < sizeof k_names / sizeof *k_names && bytes % 1024 == 0) {
    bytes /= 1024;
    u++;
  }
  snprintf(buf, cap, "%" PRId64 "%s", bytes, k_names[u]);
}

mb_status_t mb__native_size_shape(const mb__pb_t *pb, const bench_t *b,
                                  const shape_t *s, mb_dtype_t dtype,
                                  mb_op_params_t *p) {
  const origin_t *at = &b->origins[s->origin];
  const unsigned bits = mb_dtype_bits(dtype);
  char text[32];
  mb__native_bytes_text(s->bytes, text, sizeof text);
  /* bits is 0 only for a dtype the op does not know: its resolve says so */
  if (bits && (s->bytes * 8) % bits)
    return mb__pb_error(pb, at->at, at->path,
                        "size %s (%" PRId64
                        " bytes) is not a whole number of %s elements (%u "
                        "bytes each); give a multiple of %u bytes",
                        text, s->bytes, mb_dtype_name(dtype), bits / 8,
                        bits / 8);
  p->ndim = 1;
  p->shape[0] = bits ? s->bytes * 8 / bits : s->bytes;
  return MB_OK;
}
