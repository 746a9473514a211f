/* The CUDA hardware conversions of mb_cvt.h (the _hw functions, which
 * device code from sm_80/sm_89 on runs instead of the selects) against the
 * selects, bit for bit but for NaN payloads, over every input pattern
 * (cvt_check.h). Host code: cuda_fp16.h, cuda_bf16.h and cuda_fp8.h model
 * the instructions there, so this needs nvcc and no GPU. --all runs every
 * f32 pattern instead of the boundary sample. */
#include "cvt_check.h"
#include "mb_cvt.h"

namespace {

float f(uint32_t u) {
  return mb__cvt_float(u);
}

const mb_cvt_case cases[] = {
    {"f32 -> f16", 32, MB_CVT_F16,
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_f16_hw(f(u)); },
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_f16_sw(f(u)); },
     nullptr, nullptr},
    {"f32 -> bf16", 32, MB_CVT_BF16,
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_bf16_hw(f(u)); },
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_bf16_sw(f(u)); },
     nullptr, nullptr},
    {"f32 -> e4m3", 32, MB_CVT_E4M3,
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_e4m3_hw(f(u)); },
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_e4m3_sw(f(u)); },
     nullptr, nullptr},
    {"f32 -> e5m2", 32, MB_CVT_E5M2,
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_e5m2_hw(f(u)); },
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_e5m2_sw(f(u)); },
     nullptr, nullptr},
    {"f32 x2 -> f16 x2", 32, MB_CVT_F16, nullptr, nullptr,
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_f16x2_hw(f(a), f(b));
     },
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_f16x2_sw(f(a), f(b));
     }},
    {"f32 x2 -> bf16 x2", 32, MB_CVT_BF16, nullptr, nullptr,
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_bf16x2_hw(f(a), f(b));
     },
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_bf16x2_sw(f(a), f(b));
     }},
    {"f32 x2 -> e4m3 x2", 32, MB_CVT_E4M3, nullptr, nullptr,
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_e4m3x2_hw(f(a), f(b));
     },
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_e4m3x2_sw(f(a), f(b));
     }},
    {"f32 x2 -> e5m2 x2", 32, MB_CVT_E5M2, nullptr, nullptr,
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_e5m2x2_hw(f(a), f(b));
     },
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_e5m2x2_sw(f(a), f(b));
     }},
    {"f16 -> f32", 16, MB_CVT_F32,
     [](uint32_t h) -> uint32_t {
       return mb__cvt_bits(mb__cvt_f16_to_f32_hw((uint16_t)h));
     },
     [](uint32_t h) -> uint32_t {
       return mb__cvt_bits(mb__cvt_f16_to_f32_sw((uint16_t)h));
     },
     nullptr, nullptr},
    /* Ours stays a shift on every target; CUDA's must agree with it. */
    {"bf16 -> f32", 16, MB_CVT_F32,
     [](uint32_t b) -> uint32_t {
       __nv_bfloat16_raw r;
       r.x = (unsigned short)b;
       return mb__cvt_bits(__bfloat162float(__nv_bfloat16(r)));
     },
     [](uint32_t b) -> uint32_t {
       return mb__cvt_bits(mb__cvt_bf16_to_f32((uint16_t)b));
     },
     nullptr, nullptr},
    {"e4m3 -> f32", 8, MB_CVT_F32,
     [](uint32_t b) -> uint32_t {
       return mb__cvt_bits(mb__cvt_e4m3_to_f32_hw((uint8_t)b));
     },
     [](uint32_t b) -> uint32_t {
       return mb__cvt_bits(mb__cvt_e4m3_to_f32_sw((uint8_t)b));
     },
     nullptr, nullptr},
    /* What mb__cvt_e5m2_to_f32 is in device code: the f16 conversion. */
    {"e5m2 -> f32", 8, MB_CVT_F32,
     [](uint32_t b) -> uint32_t {
       return mb__cvt_bits(mb__cvt_f16_to_f32_hw((uint16_t)(b << 8)));
     },
     [](uint32_t b) -> uint32_t {
       return mb__cvt_bits(mb__cvt_e5m2_to_f32_sw((uint8_t)b));
     },
     nullptr, nullptr},
};

}  // namespace

int main(int argc, char **argv) {
  const int all = mb_cvt_all_arg(argc, argv);
  if (all < 0) return 2;
  return mb_cvt_run(cases, sizeof cases / sizeof cases[0], all != 0) ? 1 : 0;
}
