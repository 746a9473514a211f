/* The one struct-versioning rule (docs/architecture.md, "Public API
 * conventions"): structs only grow by appending members, so a struct of a
 * given struct_size is a prefix of this library's.
 *  - Inputs (options, specs, descriptors, a module's vtable and kernels):
 *    any size from the first version's to this library's is read; what an
 *    older caller's struct lacks keeps the default (its *_INIT, NULL for a
 *    hook). Smaller is not a struct of ours; larger comes from a newer
 *    header whose extra fields this library cannot honour, and is refused
 *    rather than half-obeyed.
 *  - Outputs (info and result getters): at most the caller's struct_size
 *    is written, and struct_size says how much was.
 * Every entry point goes through these two functions, so the rule and its
 * messages exist once. */
#include <string.h>

#include "internal.h"

typedef struct mb__struct_desc {
  const char *name; /* the C type */
  const char *hint; /* what a caller whose struct is too small should do */
  size_t size_offset, first_size, size;
} mb__struct_desc_t;

/* The first version ends with `v1_last`; offsetof in today's layout is its
 * offset then, since members were only appended. */
#define MB__STRUCT_DESC(id, type, size_member, v1_last, hint_text)             \
  [MB__STRUCT_##id] = {#type, hint_text, offsetof(type, size_member),          \
                       offsetof(type, v1_last) + sizeof(((type *)0)->v1_last), \
                       sizeof(type)},
static const mb__struct_desc_t k_structs[MB__STRUCT_COUNT] = {
    MB__VERSIONED_STRUCTS(MB__STRUCT_DESC)};
#undef MB__STRUCT_DESC

static uint32_t size_of(const mb__struct_desc_t *d, const void *s) {
  uint32_t n;
  memcpy(&n, (const char *)s + d->size_offset, sizeof n);
  return n;
}

static void set_size(const mb__struct_desc_t *d, void *s, size_t n) {
  uint32_t v = (uint32_t)n;
  memcpy((char *)s + d->size_offset, &v, sizeof v);
}

static mb_status_t too_small(const mb__struct_desc_t *d, const char *fn,
                             uint32_t n) {
  return mb__fail(MB_ERR_INVALID_ARG,
                  "%s: %s.struct_size %u is smaller than its first version "
                  "(%zu bytes); this library reads %zu to %zu bytes (%s)",
                  fn, d->name, n, d->first_size, d->first_size, d->size,
                  d->hint);
}

size_t mb__struct_first_size(mb__struct_id_t id) {
  return k_structs[id].first_size;
}

mb_status_t mb__struct_in(mb__struct_id_t id, const char *fn, const void *given,
                          void *full) {
  const mb__struct_desc_t *d = &k_structs[id];
  const uint32_t n = size_of(d, given);
  if (n < d->first_size) return too_small(d, fn, n);
  if (n > d->size)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: %s.struct_size %u is larger than this library's "
                    "(it reads %zu to %zu bytes): built against a newer "
                    "microbench header, whose new fields this library "
                    "cannot honour",
                    fn, d->name, n, d->first_size, d->size);
  memcpy(full, given, n);
  set_size(d, full, d->size);
  return MB_OK;
}

mb_status_t mb__struct_out(mb__struct_id_t id, const char *fn, const void *ours,
                           void *out) {
  const mb__struct_desc_t *d = &k_structs[id];
  if (!out) return mb__fail(MB_ERR_INVALID_ARG, "%s: NULL argument", fn);
  const uint32_t n = size_of(d, out);
  if (n < d->first_size) return too_small(d, fn, n);
  const size_t written = n < d->size ? n : d->size;
  memcpy(out, ours, written);
  set_size(d, out, written);
  return MB_OK;
}
