/* CPU backend — AVX-512 rows of layernorm, rmsnorm and softmax on f32 and
 * bf16, chosen at prepare time (cpu_norm_c.c, cpu_softmax_c.c).
 *
 * The portable kernels stage every row through an f32 buffer with scalar
 * conversions and compute exp as gcc vectorises it; these convert bf16 in
 * registers and read each row from memory once (its later passes hit L1/L2,
 * a row of 8192 bf16 being 16 KiB). The lookups return NULL where the CPU
 * lacks AVX-512 F, BW, VL, DQ and BF16 (Cooper Lake, Sapphire Rapids, Zen 4
 * and later have them) or the build is not x86-64, or the dtype is not f32
 * or bf16: the caller keeps its portable path.
 *
 * layernorm and rmsnorm give the portable kernel's bits: the same f32
 * operations in the same order (sums in 64 lanes, element j in lane j % 64,
 * the lanes added 0..63; no FMA). softmax differs in exp (cpu_simd_exp.h,
 * within 2 ulp) and in its sum's order (64 lanes, the portable kernel's
 * 16). bf16 is rounded to nearest even, NaN quieted, as
 * mb__cvt_f32_to_bf16. */
#ifndef MB_CPU_SIMD_NORM_H
#define MB_CPU_SIMD_NORM_H

#include <microbench/dtype.h>

#include <stddef.h>
#include <stdint.h>

/* One row's parameters: N, and for the norms what cpu_norm_c.c keeps. */
typedef struct mb_cpu_norm_args {
  size_t n;
  int rms, affine;
  float eps;
  const float *w, *b; /* f32 W and Bias (affine only; b: layernorm only) */
  int stream; /* Y written with non-temporal stores (mb__cpu_stream_stores) */
} mb_cpu_norm_args_t;

/* Rows [r0, r1) of Y = f(X), X and Y M x N in one dtype; buf: N floats of
 * the calling thread's own for softmax, NULL for the norms (which re-read
 * X's row). */
typedef void (*mb_cpu_simd_rows_fn)(const mb_cpu_norm_args_t *a, void *y,
                                    const void *x, int64_t r0, int64_t r1,
                                    float *buf);

mb_cpu_simd_rows_fn mb__cpu_simd_norm(mb_dtype_t dtype);
mb_cpu_simd_rows_fn mb__cpu_simd_softmax(mb_dtype_t dtype);

#endif
