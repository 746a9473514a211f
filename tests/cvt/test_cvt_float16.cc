/* The _Float16 conversions of mb_cvt.h (the _f16t functions, which HIP
 * device code runs as v_cvt_f16_f32 / v_cvt_f32_f16 instead of the
 * selects) against the selects, bit for bit but for NaN payloads, over
 * every input pattern (cvt_check.h). The host's _Float16 conversions are
 * the same IEEE ones, so the host's C++ compiler runs these bodies here;
 * no GPU or hipcc needed. --all runs every f32 pattern. */
#define MB_CVT_FLOAT16 1
#include "cvt_check.h"
#include "mb_cvt.h"

namespace {

float f(uint32_t u) {
  return mb__cvt_float(u);
}

const mb_cvt_case cases[] = {
    {"f32 -> f16 (_Float16)", 32, MB_CVT_F16,
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_f16_f16t(f(u)); },
     [](uint32_t u) -> uint32_t { return mb__cvt_f32_to_f16_sw(f(u)); },
     nullptr, nullptr},
    {"f32 x2 -> f16 x2 (_Float16)", 32, MB_CVT_F16, nullptr, nullptr,
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_f16x2_f16t(f(a), f(b));
     },
     [](uint32_t a, uint32_t b) -> uint32_t {
       return mb__cvt_f32x2_to_f16x2_sw(f(a), f(b));
     }},
    {"f16 -> f32 (_Float16)", 16, MB_CVT_F32,
     [](uint32_t h) -> uint32_t {
       return mb__cvt_bits(mb__cvt_f16_to_f32_f16t((uint16_t)h));
     },
     [](uint32_t h) -> uint32_t {
       return mb__cvt_bits(mb__cvt_f16_to_f32_sw((uint16_t)h));
     },
     nullptr, nullptr},
};

}  // namespace

int main(int argc, char **argv) {
  const int all = mb_cvt_all_arg(argc, argv);
  if (all < 0) return 2;
  return mb_cvt_run(cases, sizeof cases / sizeof cases[0], all != 0) ? 1 : 0;
}
