/* A shape written as text, "1024x512x256": one parser for the CLI's
 * --shape and a config's "MxKxN" strings. strtoll alone took a sign,
 * leading spaces and a trailing x, and clamped 18446744073709551617 to
 * 2^63 - 1 without a word. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "microbench.h"

static mb_status_t bad(const char *text, const char *why) {
  return mb__fail(MB_ERR_INVALID_ARG,
                  "shape \"%s\": %s; write 1 to %d positive integers joined "
                  "by x, e.g. 1024x1024x1024",
                  text, why, MB_MAX_DIMS);
}

mb_status_t mb_shape_parse(const char *text, uint32_t *ndim, int64_t *dims) {
  if (!text || !ndim || !dims)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_shape_parse: NULL argument");
  int64_t got[MB_MAX_DIMS];
  uint32_t n = 0;
  const char *p = text;
  for (;;) {
    const size_t digits = strspn(p, "0123456789");
    if (!digits)
      return bad(text, *p ? "each dimension is a number, digits only"
                          : "a dimension is missing");
    if (n == MB_MAX_DIMS) return bad(text, "too many dimensions");
    int64_t v = 0;
    for (size_t i = 0; i < digits; i++) {
      v = 10 * v + (p[i] - '0');
      if (v > MB_MAX_DIM_SIZE)
        return bad(text, "a dimension is larger than 2^40");
    }
    if (v == 0) return bad(text, "a dimension is 0");
    got[n++] = v;
    p += digits;
    if (!*p) break;
    if (*p != 'x' && *p != 'X')
      return bad(text, *p == ',' ? "a ',' separates two shapes; give one"
                                 : "unexpected characters");
    p++;
  }
  *ndim = n;
  memcpy(dims, got, n * sizeof *dims);
  return MB_OK;
}
