/* One kernel per converter of mb_cvt.h, compiled to PTX for a few targets
 * at build time; check_ptx.cmake then demands the conversion instruction
 * in each kernel exactly on the targets that have it (the MB_CVT_HW_*
 * table), so a dispatcher that fell back to the selects, or used an
 * instruction a target lacks, fails the test. */
#include "mb_cvt.h"

#define MB_K(name, in_t, out_t, expr)                                 \
  extern "C" __global__ void name(const in_t *in, out_t *out) {       \
    const in_t x = in[threadIdx.x], y = in[threadIdx.x + blockDim.x]; \
    (void)y;                                                          \
    out[threadIdx.x] = (expr);                                        \
  }

MB_K(k_f32_to_f16, float, uint16_t, mb__cvt_f32_to_f16(x))
MB_K(k_f16_to_f32, uint16_t, float, mb__cvt_f16_to_f32(x))
MB_K(k_f32_to_bf16, float, uint16_t, mb__cvt_f32_to_bf16(x))
MB_K(k_f32_to_e4m3, float, uint8_t, mb__cvt_f32_to_e4m3(x))
MB_K(k_f32_to_e5m2, float, uint8_t, mb__cvt_f32_to_e5m2(x))
MB_K(k_e4m3_to_f32, uint8_t, float, mb__cvt_e4m3_to_f32(x))
MB_K(k_e5m2_to_f32, uint8_t, float, mb__cvt_e5m2_to_f32(x))
MB_K(k_f32x2_to_f16x2, float, uint32_t, mb__cvt_f32x2_to_f16x2(x, y))
MB_K(k_f32x2_to_bf16x2, float, uint32_t, mb__cvt_f32x2_to_bf16x2(x, y))
MB_K(k_f32x2_to_e4m3x2, float, uint16_t, mb__cvt_f32x2_to_e4m3x2(x, y))
MB_K(k_f32x2_to_e5m2x2, float, uint16_t, mb__cvt_f32x2_to_e5m2x2(x, y))
