/* CPU backend — AVX-512 paths of the memory-bound element-wise kernels
 * (activation, silu_mul, add) on f32 and bf16, chosen at prepare time.
 *
 * The portable kernels (cpu_act_c.c, cpu_add_c.c) are limited by their
 * chunked f32 staging and, for gelu_erf, by libm's scalar erfcf; these
 * convert bf16 in registers and compute 16 lanes at a time. Each lookup
 * returns NULL where the CPU lacks AVX-512 (or the build is not x86-64) or
 * the dtypes are not one of f32 -> f32, bf16 -> bf16: the caller then keeps
 * its portable path. The results stay within the op's tolerance
 * (lib/ops/activation.c): relu, relu6, leakyrelu, hardswish and add are
 * computed with the portable path's operations in its order (so the same
 * bits); exp and the reciprocal are approximations to a few ulp, gelu_erf's
 * erfc is Abramowitz & Stegun 7.1.26, whose error is absolute (1.5e-7): far
 * from the few ulp of libm's erfcf for x < -2, inside the op's tolerance
 * (its term relative to |x|). */
#ifndef MB_CPU_SIMD_ELT_H
#define MB_CPU_SIMD_ELT_H

#include <microbench/dtype.h>
#include <microbench/op.h>

#include <stddef.h>

/* y[i] = f(x[i]) for elements [lo, hi); alpha: leakyrelu's slope; stream:
 * write y with non-temporal stores (working sets past the last-level
 * cache: mb__cpu_stream_stores below decides). */
typedef void (*mb_cpu_simd_un_fn)(void *y, const void *x, size_t lo, size_t hi,
                                  float alpha, int stream);
/* z[i] = f(x[i], y[i]) for elements [lo, hi). */
typedef void (*mb_cpu_simd_bin_fn)(void *z, const void *x, const void *y,
                                   size_t lo, size_t hi, int stream);

mb_cpu_simd_un_fn mb__cpu_simd_activation(mb_activation_t act, mb_dtype_t in,
                                          mb_dtype_t out);
mb_cpu_simd_bin_fn mb__cpu_simd_silu_mul(mb_dtype_t in, mb_dtype_t out);
mb_cpu_simd_bin_fn mb__cpu_simd_add(mb_dtype_t in, mb_dtype_t out);

/* The same with the bf16 rounding chosen (tests): bf16_hw 0 in software,
 * 1 by vcvtneps2bf16 (AVX512-BF16: the caller checks), -1 the best. */
mb_cpu_simd_un_fn mb__cpu_simd_activation_isa(mb_activation_t act,
                                              mb_dtype_t in, mb_dtype_t out,
                                              int bf16_hw);
mb_cpu_simd_bin_fn mb__cpu_simd_silu_mul_isa(mb_dtype_t in, mb_dtype_t out,
                                             int bf16_hw);
mb_cpu_simd_bin_fn mb__cpu_simd_add_isa(mb_dtype_t in, mb_dtype_t out,
                                        int bf16_hw);

/* dst = src, `bytes` of them, with non-temporal stores (dst aligned by a
 * plain head copy): NULL without AVX-512. */
typedef void (*mb_cpu_simd_copy_fn)(void *dst, const void *src, size_t bytes);
mb_cpu_simd_copy_fn mb__cpu_simd_stream_copy(void);
/* The store fence a thread runs after its last non-temporal store, before
 * another thread reads what it wrote. */
void mb__cpu_simd_sfence(void);

#endif
