/* Internal: element access by dtype, for reference kernels and ops that work
 * in double and round once on the way out. All functions are pure; `dtype`
 * must be a valid type (not MB_DTYPE_NONE), the caller checks that. */
#ifndef MB_LIB_DTYPE_INTERNAL_H
#define MB_LIB_DTYPE_INTERNAL_H

#include <stddef.h>

#include "microbench/dtype.h"

/* Element i of an array of `dtype`, exactly, as double (i4: signed nibble,
 * low nibble first). NaN patterns give a NaN with the pattern's sign. */
double mb__load(const void *base, mb_dtype_t dtype, size_t i);

/* Rounds v once to `dtype` (nearest even; float overflow per `flags`, see
 * dtype.h; integers always saturate, NaN -> 0) and stores it as element i.
 * For i4 only that element's nibble changes. NaN is stored as the format's
 * canonical quiet NaN with v's sign. */
void mb__store(void *base, mb_dtype_t dtype, size_t i, double v,
               unsigned flags);

/* v rounded to the value set of `dtype` as mb__store would, returned as
 * double (f32: (float)v in round-to-nearest-even, ±max with
 * MB_CONVERT_SATURATE). */
double mb__round(double v, mb_dtype_t dtype, unsigned flags);

#endif
