/* A cache-blocked, multithreaded transpose of a host matrix that keeps the
 * elements' bytes (no conversion): the GEMM reference's one pass over a
 * large B (transpose.c). */
#ifndef MB_LIB_OPS_TRANSPOSE_H
#define MB_LIB_OPS_TRANSPOSE_H

#include <stdint.h>

#include "microbench/dtype.h"

/* The dtype mb__transpose writes for a `dtype` source: the same, except the
 * 4-bit ones (two to a byte, which would make neighbouring threads share
 * bytes): i4 becomes i8 and f4e2m1 f8e4m3, holding the same values. */
mb_dtype_t mb__transpose_dtype(mb_dtype_t dtype);

/* dst (cols x rows, row-major, mb__transpose_dtype(dtype)) = src (rows x
 * cols, row-major, dtype)^T. dst must not overlap src. */
void mb__transpose(const void *src, mb_dtype_t dtype, void *dst, int64_t rows,
                   int64_t cols);

#endif
