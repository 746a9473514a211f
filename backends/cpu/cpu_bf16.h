/* CPU backend — bf16 <-> f32 for the portable kernels.
 *
 * Written as branch-free integer arithmetic on the bit patterns so that gcc
 * vectorises whole rows of it. The library's mb_convert() gives the same
 * results but is a call per buffer, not per element, and not inlinable. */
#ifndef MB_CPU_BF16_H
#define MB_CPU_BF16_H

#include <stdint.h>
#include <string.h>

/* Exact: bf16 is the upper half of an f32. */
static inline float mb__cpu_bf16_to_f32(uint16_t b) {
  const uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Round to nearest, ties to even (IEEE 754 / OCP): add 0x7fff plus the lowest
 * bit that is kept, then truncate. A carry out of the mantissa correctly bumps
 * the exponent, and the largest finite values round to infinity on overflow.
 * NaN must not go through that addition (a small payload would carry into an
 * infinity, a large one into the sign), so it is truncated and made quiet:
 * NaN stays NaN with its sign. */
static inline uint16_t mb__cpu_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  const int is_nan = (u & 0x7fffffffu) > 0x7f800000u;
  return (uint16_t)(is_nan ? quiet_nan : rounded);
}

#endif
