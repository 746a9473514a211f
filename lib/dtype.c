/* Data types and bit-exact conversions. Every float format is a row of one
 * table driving one encoder and one decoder, so f16, bf16 and both fp8 types
 * cannot drift apart; the bit-trick paths for f32<->bf16/f16 exist only for
 * speed and are tested against the generic ones bit for bit. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype_internal.h"
#include "error.h"
#include "microbench/dtype.h"

typedef struct dtype_info {
  const char *name;
  unsigned bits;
  int is_float;
} dtype_info_t;

#define MB__DTYPE_ROW(e, nm, b, flt) [MB_DTYPE_##e] = {nm, b, flt},
static const dtype_info_t k_dtypes[MB_DTYPE_COUNT] = {
    [MB_DTYPE_NONE] = {"none", 0, 0}, /* so mb_dtype_name() needs no case */
    MB_DTYPE_MAP(MB__DTYPE_ROW)};
#undef MB__DTYPE_ROW

#define MB__DTYPE_LIST(e, nm, b, flt) ", " nm
/* ", f32, f16, ..." — skip the first two characters. */
static const char k_valid_names[] = MB_DTYPE_MAP(MB__DTYPE_LIST);
#undef MB__DTYPE_LIST

typedef struct float_format {
  unsigned exp_bits, man_bits;
  int bias;
  int has_inf;
  uint32_t max_bits; /* largest finite magnitude pattern */
  uint32_t nan_bits; /* canonical quiet NaN, positive */
  double max;
} float_format_t;

/* e4m3 is OCP "e4m3fn": no infinities, so exponent field 1111 holds normal
 * numbers up to 1.110b * 2^8 = 448 and only S.1111.111 is NaN. */
static const float_format_t k_float_formats[MB_DTYPE_COUNT] = {
    [MB_DTYPE_F32] = {8, 23, 127, 1, 0x7F7FFFFFu, 0x7FC00000u, FLT_MAX},
    [MB_DTYPE_F16] = {5, 10, 15, 1, 0x7BFFu, 0x7E00u, 65504.0},
    [MB_DTYPE_BF16] = {8, 7, 127, 1, 0x7F7Fu, 0x7FC0u, 0x1.FEp127},
    [MB_DTYPE_F8E4M3] = {4, 3, 7, 0, 0x7Eu, 0x7Fu, 448.0},
    [MB_DTYPE_F8E5M2] = {5, 2, 15, 1, 0x7Bu, 0x7Eu, 57344.0},
    /* e8m0: no sign, no significand; read only for its max and unit
     * roundoff (2^-1), converted by e8m0_encode/e8m0_decode below. */
    [MB_DTYPE_E8M0] = {8, 0, 127, 0, 0xFEu, 0xFFu, 0x1p127},
    /* e2m1 (OCP FP4) has neither infinity nor NaN: 0.11.1b = 6 is the
     * largest pattern, so its "NaN" is 6 as well and encode() saturates
     * every overflow, an infinity and a NaN (sign kept) whatever the
     * flags. */
    [MB_DTYPE_F4E2M1] = {2, 1, 1, 0, 0x7u, 0x7u, 6.0},
};

static const struct {
  double min, max;
} k_int_ranges[MB_DTYPE_COUNT] = {
    [MB_DTYPE_I8] = {-128.0, 127.0},
    [MB_DTYPE_I4] = {-8.0, 7.0},
    [MB_DTYPE_I32] = {-2147483648.0, 2147483647.0},
};

static int dtype_valid(mb_dtype_t t) {
  return (int)t > (int)MB_DTYPE_NONE && (int)t < (int)MB_DTYPE_COUNT;
}

static uint32_t inf_bits(const float_format_t *f) {
  return ((1u << f->exp_bits) - 1u) << f->man_bits;
}

/* Rounds v once, from its exact value, to format f.
 *
 * The significand is cut at f's quantum for v's exponent (clamped to the
 * subnormal exponent) with round to nearest even, as if f's exponent range
 * were unbounded; only then is the result compared with the largest finite
 * pattern. That is IEEE 754's overflow rule and also what the software path
 * of CUDA's cuda_fp8.hpp does: its overflow thresholds are max + half an ulp
 * and a value exactly there takes the normal rounding path. Hence for e4m3
 * exactly 464 (the tie between 448 = 1.110b * 2^8, even, and 480) rounds to
 * 448 and anything above overflows, while for e5m2 exactly 61440 (the tie
 * between 57344 = 1.11b * 2^15, odd, and 2^16) overflows. Because the bit
 * patterns are monotone in magnitude, "exceeds max" is a plain compare. */
static uint32_t encode(const float_format_t *f, double v, unsigned flags) {
  uint64_t x;
  memcpy(&x, &v, sizeof x);
  uint32_t sign = (uint32_t)(x >> 63) << (f->exp_bits + f->man_bits);
  uint64_t a = x & ~(UINT64_C(1) << 63);
  const uint64_t dbl_inf = UINT64_C(0x7FF0000000000000);
  if (a > dbl_inf) return sign | f->nan_bits;

  uint64_t bits = UINT64_MAX; /* infinity: beyond every max_bits */
  if (a < dbl_inf) {
    int e = (int)(a >> 52);
    uint64_t m = a & ((UINT64_C(1) << 52) - 1);
    if (e == 0)
      e = 1; /* double subnormal: same scale as the smallest normal */
    else
      m |= UINT64_C(1) << 52;
    int exp = e - 1023, emin = 1 - f->bias;
    int eq = exp > emin ? exp : emin;
    int shift = 52 - (int)f->man_bits + (eq - exp);
    uint64_t r = 0; /* m < 2^53 is below half a quantum past shift 54 */
    if (shift <= 54) {
      uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
      uint64_t half = UINT64_C(1) << (shift - 1);
      r = m >> shift;
      r += rem > half || (rem == half && (r & 1));
    }
    /* A carry out of the significand bumps the exponent field by itself. */
    bits = ((uint64_t)(eq - emin) << f->man_bits) + r;
  }
  if (bits > f->max_bits) {
    if (flags & MB_CONVERT_SATURATE)
      bits = f->max_bits;
    else
      bits = f->has_inf ? inf_bits(f) : f->nan_bits;
  }
  return sign | (uint32_t)bits;
}

/* 2^e for e in the normal double range, built directly: cheaper than
 * ldexp() and exact. */
static double pow2(int e) {
  uint64_t b = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

static double decode(const float_format_t *f, uint32_t bits) {
  int m = (int)f->man_bits, width = (int)f->exp_bits + m;
  uint32_t mag = bits & ((1u << width) - 1u);
  int exp = (int)(mag >> m);
  uint32_t frac = mag & ((1u << m) - 1u);
  double v;
  if (mag > f->max_bits)
    v = f->has_inf && mag == inf_bits(f) ? INFINITY : NAN;
  else if (exp == 0)
    v = (double)frac * pow2(1 - f->bias - m);
  else
    v = (double)(frac | (1u << m)) * pow2(exp - f->bias - m);
  return (bits >> width) & 1u ? -v : v;
}

/* Round half to even without consulting the floating-point environment, so
 * integer targets round the same whatever mode the caller left set. */
static double round_half_even(double v) {
  double fl = floor(v), d = v - fl; /* exact: the fraction of a double */
  if (d > 0.5 || (d == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0;
  return fl;
}

static double round_int(double v, mb_dtype_t t) {
  if (isnan(v)) return 0.0;
  if (v <= k_int_ranges[t].min) return k_int_ranges[t].min;
  if (v >= k_int_ranges[t].max) return k_int_ranges[t].max;
  return round_half_even(v);
}

/* e8m0 (OCP MX scales, torch's float8_e8m0fnu): 2^(b - 127), 0xFF NaN.
 * Encoding follows torch's cast from f32 (c10's fp8e8m0fnu_from_fp32_value)
 * on the exact value, so a double that an f32 holds gives torch's byte: the
 * sign is dropped; from 2^-126 up, 2^e * m (m in [1, 2)) rounds up to
 * 2^(e+1) when m >= 1.5 (the guard bit, ties up); below, anything above
 * 2^-127 rounds up to 2^-126 and the rest, zero included, to 2^-127 (there
 * is no zero). Past 2^127, and for infinities: NaN, or 2^127 saturating. */
static uint32_t e8m0_encode(double v, unsigned flags) {
  const double a = fabs(v);
  if (isnan(v)) return 0xFFu;
  if (a < 0x1p-126) return a > 0x1p-127 ? 1u : 0u;
  int e;
  const double m = 2.0 * frexp(a, &e); /* a = m 2^(e-1), m in [1, 2) */
  const long biased = isinf(a) ? 255 : (long)(e - 1) + 127 + (m >= 1.5);
  if (biased <= 254) return (uint32_t)biased;
  return flags & MB_CONVERT_SATURATE ? 0xFEu : 0xFFu;
}

static double e8m0_decode(uint32_t b) {
  return b == 0xFFu ? NAN : ldexp(1.0, (int)b - 127);
}

/* ---- fast paths: must match encode()/decode() bit for bit ---------------- */

static inline uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline float f32_from_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Branch-free so the bulk loop vectorises: a non-NaN input rounds to at most
 * 0x7F80 (inf), so one min() applies saturation. */
static inline uint16_t bf16_from_f32_bits(uint32_t u, unsigned flags) {
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
  uint32_t r = (a + 0x7FFFu + ((a >> 16) & 1u)) >> 16; /* RNE, 16 bits */
  uint32_t lim = flags & MB_CONVERT_SATURATE ? 0x7F7Fu : 0x7F80u;
  r = r > lim ? lim : r;
  r = a > 0x7F800000u ? 0x7FC0u : r;
  return (uint16_t)(sign | r);
}

static inline uint32_t f32_bits_from_bf16(uint16_t h) {
  if ((h & 0x7FFFu) > 0x7F80u) return ((h & 0x8000u) << 16) | 0x7FC00000u;
  return (uint32_t)h << 16;
}

static inline uint16_t f16_from_f32_bits(uint32_t u, unsigned flags) {
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);
  /* 65520 = 65504 + half an ulp; 65504's last bit is odd, so the tie is
   * already an overflow. */
  if (a >= 0x477FF000u)
    return (uint16_t)(sign | (flags & MB_CONVERT_SATURATE ? 0x7BFFu : 0x7C00u));
  if (a >= 0x38800000u) { /* f16 normal, from 2^-14 */
    a += 0xFFFu + ((a >> 13) & 1u);
    return (uint16_t)(sign | ((a - 0x38000000u) >> 13)); /* rebias 127->15 */
  }
  if (a < 0x33000000u) return (uint16_t)sign; /* below 2^-25: to zero */
  /* f16 subnormal: from f32 quantum 2^(e-150) to 2^-24, shift 14..24. */
  uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | 0x800000u;
  uint32_t shift = 126u - e;
  uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  r += rem > half || (rem == half && (r & 1u));
  return (uint16_t)(sign | r);
}

static inline uint32_t f32_bits_from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return sign | (m ? 0x7FC00000u : 0x7F800000u);
  if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
  return sign | f32_bits((float)m * 0x1p-24f); /* exact: m < 2^10 */
}

/* ---- public scalar conversions ------------------------------------------ */

uint16_t mb_f32_to_bf16(float x, unsigned flags) {
  return bf16_from_f32_bits(f32_bits(x), flags);
}
float mb_bf16_to_f32(uint16_t bits) {
  return f32_from_bits(f32_bits_from_bf16(bits));
}
uint16_t mb_f32_to_f16(float x, unsigned flags) {
  return f16_from_f32_bits(f32_bits(x), flags);
}
float mb_f16_to_f32(uint16_t bits) {
  return f32_from_bits(f32_bits_from_f16(bits));
}
uint8_t mb_f32_to_f8e4m3(float x, unsigned flags) {
  return (uint8_t)encode(&k_float_formats[MB_DTYPE_F8E4M3], x, flags);
}
float mb_f8e4m3_to_f32(uint8_t bits) {
  return (float)decode(&k_float_formats[MB_DTYPE_F8E4M3], bits);
}
uint8_t mb_f32_to_f8e5m2(float x, unsigned flags) {
  return (uint8_t)encode(&k_float_formats[MB_DTYPE_F8E5M2], x, flags);
}
float mb_f8e5m2_to_f32(uint8_t bits) {
  return (float)decode(&k_float_formats[MB_DTYPE_F8E5M2], bits);
}

/* ---- metadata ------------------------------------------------------------ */

const char *mb_dtype_name(mb_dtype_t dtype) {
  if ((int)dtype < 0 || (int)dtype >= (int)MB_DTYPE_COUNT) return "?";
  return k_dtypes[dtype].name;
}

/* torch's FP4 is the packed pair float4_e2m1fn_x2, which is our storage
 * too, so its name is an alias. */
static const struct {
  const char *alias;
  mb_dtype_t dtype;
} k_aliases[] = {
    {"fp32", MB_DTYPE_F32},        {"float32", MB_DTYPE_F32},
    {"float", MB_DTYPE_F32},       {"torch.float32", MB_DTYPE_F32},
    {"fp16", MB_DTYPE_F16},        {"float16", MB_DTYPE_F16},
    {"half", MB_DTYPE_F16},        {"torch.float16", MB_DTYPE_F16},
    {"bfloat16", MB_DTYPE_BF16},   {"torch.bfloat16", MB_DTYPE_BF16},
    {"fp8e4m3", MB_DTYPE_F8E4M3},  {"float8_e4m3fn", MB_DTYPE_F8E4M3},
    {"e4m3", MB_DTYPE_F8E4M3},     {"torch.float8_e4m3fn", MB_DTYPE_F8E4M3},
    {"fp8e5m2", MB_DTYPE_F8E5M2},  {"float8_e5m2", MB_DTYPE_F8E5M2},
    {"e5m2", MB_DTYPE_F8E5M2},     {"torch.float8_e5m2", MB_DTYPE_F8E5M2},
    {"int8", MB_DTYPE_I8},         {"torch.int8", MB_DTYPE_I8},
    {"int4", MB_DTYPE_I4},         {"int32", MB_DTYPE_I32},
    {"torch.int32", MB_DTYPE_I32}, {"float8_e8m0fnu", MB_DTYPE_E8M0},
    {"e8m0fnu", MB_DTYPE_E8M0},    {"torch.float8_e8m0fnu", MB_DTYPE_E8M0},
    {"float4", MB_DTYPE_F4E2M1},   {"float4_e2m1fn", MB_DTYPE_F4E2M1},
    {"fp4", MB_DTYPE_F4E2M1},      {"torch.float4_e2m1fn_x2", MB_DTYPE_F4E2M1},
    {"e2m1", MB_DTYPE_F4E2M1},     {"float4_e2m1fn_x2", MB_DTYPE_F4E2M1},
};

mb_status_t mb_dtype_from_name(const char *name, mb_dtype_t *out) {
  if (!name || !out)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_dtype_from_name: %s is NULL",
                    name ? "out" : "name");
  for (int t = MB_DTYPE_NONE + 1; t < MB_DTYPE_COUNT; t++) {
    if (strcmp(name, k_dtypes[t].name) == 0) {
      *out = (mb_dtype_t)t;
      return MB_OK;
    }
  }
  for (size_t i = 0; i < sizeof k_aliases / sizeof k_aliases[0]; i++) {
    if (strcmp(name, k_aliases[i].alias) == 0) {
      *out = k_aliases[i].dtype;
      return MB_OK;
    }
  }
  return mb__fail(MB_ERR_INVALID_ARG, "unknown dtype \"%s\"; valid dtypes: %s",
                  name, k_valid_names + 2);
}

unsigned mb_dtype_bits(mb_dtype_t dtype) {
  return dtype_valid(dtype) ? k_dtypes[dtype].bits : 0;
}

size_t mb_dtype_bytes(mb_dtype_t dtype, size_t count) {
  unsigned bits = mb_dtype_bits(dtype);
  if (bits == 4) return count / 2 + count % 2; /* (count+1)/2 may wrap */
  return count * (bits / 8);
}

int mb_dtype_is_float(mb_dtype_t dtype) {
  return dtype_valid(dtype) && k_dtypes[dtype].is_float;
}

double mb_dtype_unit_roundoff(mb_dtype_t dtype) {
  if (!mb_dtype_is_float(dtype)) return 0.0;
  return ldexp(1.0, -(int)k_float_formats[dtype].man_bits - 1);
}

double mb_dtype_max(mb_dtype_t dtype) {
  if (!dtype_valid(dtype)) return 0.0;
  return k_dtypes[dtype].is_float ? k_float_formats[dtype].max
                                  : k_int_ranges[dtype].max;
}

/* ---- element access ------------------------------------------------------ */

static uint32_t load_bits(const void *base, unsigned bits, size_t i) {
  const unsigned char *p = (const unsigned char *)base + i * (bits / 8);
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  switch (bits) {
    case 8:
      memcpy(&u8, p, 1);
      return u8;
    case 16:
      memcpy(&u16, p, 2);
      return u16;
    default:
      memcpy(&u32, p, 4);
      return u32;
  }
}

static void store_bits(void *base, unsigned bits, size_t i, uint32_t v) {
  unsigned char *p = (unsigned char *)base + i * (bits / 8);
  uint8_t u8 = (uint8_t)v;
  uint16_t u16 = (uint16_t)v;
  switch (bits) {
    case 8:
      memcpy(p, &u8, 1);
      break;
    case 16:
      memcpy(p, &u16, 2);
      break;
    default:
      memcpy(p, &v, 4);
      break;
  }
}

/* The nibble of element i of a packed 4-bit buffer (low nibble first). */
static uint32_t load_nibble(const unsigned char *b, size_t i) {
  return (b[i / 2] >> (4 * (i % 2))) & 0xFu;
}

static void store_nibble(unsigned char *b, size_t i, uint32_t v) {
  const unsigned shift = 4 * (unsigned)(i % 2);
  b[i / 2] = (uint8_t)((b[i / 2] & ~(0xFu << shift)) | ((v & 0xFu) << shift));
}

double mb__load(const void *base, mb_dtype_t dtype, size_t i) {
  const unsigned char *b = base;
  int32_t i32;
  switch (dtype) {
    case MB_DTYPE_F32:
      return f32_from_bits(load_bits(base, 32, i)); /* exact widening */
    case MB_DTYPE_F16:
    case MB_DTYPE_BF16:
    case MB_DTYPE_F8E4M3:
    case MB_DTYPE_F8E5M2:
      return decode(&k_float_formats[dtype],
                    load_bits(base, k_dtypes[dtype].bits, i));
    case MB_DTYPE_I8:
      return (int8_t)b[i];
    case MB_DTYPE_I4:
      return (int)(load_nibble(b, i) ^ 8u) - 8;
    case MB_DTYPE_F4E2M1:
      return decode(&k_float_formats[dtype], load_nibble(b, i));
    case MB_DTYPE_I32:
      memcpy(&i32, b + 4 * i, 4);
      return i32;
    case MB_DTYPE_E8M0:
      return e8m0_decode(b[i]);
    default:
      return NAN;
  }
}

void mb__store(void *base, mb_dtype_t dtype, size_t i, double v,
               unsigned flags) {
  unsigned char *b = base;
  int32_t i32;
  switch (dtype) {
    case MB_DTYPE_F32:
    case MB_DTYPE_F16:
    case MB_DTYPE_BF16:
    case MB_DTYPE_F8E4M3:
    case MB_DTYPE_F8E5M2:
      store_bits(base, k_dtypes[dtype].bits, i,
                 encode(&k_float_formats[dtype], v, flags));
      break;
    case MB_DTYPE_I8:
      b[i] = (uint8_t)(int8_t)round_int(v, dtype);
      break;
    case MB_DTYPE_I4:
      store_nibble(b, i, (uint32_t)(int)round_int(v, dtype));
      break;
    case MB_DTYPE_F4E2M1:
      store_nibble(b, i, encode(&k_float_formats[dtype], v, flags));
      break;
    case MB_DTYPE_I32:
      i32 = (int32_t)round_int(v, dtype);
      memcpy(b + 4 * i, &i32, 4);
      break;
    case MB_DTYPE_E8M0:
      b[i] = (uint8_t)e8m0_encode(v, flags);
      break;
    default:
      break;
  }
}

double mb__round(double v, mb_dtype_t dtype, unsigned flags) {
  if (!dtype_valid(dtype)) return NAN;
  if (!k_dtypes[dtype].is_float) return round_int(v, dtype);
  if (dtype == MB_DTYPE_E8M0) return e8m0_decode(e8m0_encode(v, flags));
  const float_format_t *f = &k_float_formats[dtype];
  return decode(f, encode(f, v, flags));
}

/* ---- bulk conversion ----------------------------------------------------- */

typedef void (*convert_fn)(void *dst, const void *src, size_t n,
                           unsigned flags);

/* f32 <-> a 16-bit float, element by element: the loops differ only in
 * the conversion of one element, so one body each way. */
#define MB__NARROW_N(name, from_f32_bits)                                  \
  static void name(void *dst, const void *src, size_t n, unsigned flags) { \
    unsigned char *d = dst;                                                \
    const unsigned char *s = src;                                          \
    for (size_t i = 0; i < n; i++) {                                       \
      uint32_t u;                                                          \
      memcpy(&u, s + 4 * i, 4);                                            \
      uint16_t h = from_f32_bits(u, flags);                                \
      memcpy(d + 2 * i, &h, 2);                                            \
    }                                                                      \
  }
#define MB__WIDEN_N(name, to_f32_bits)                                     \
  static void name(void *dst, const void *src, size_t n, unsigned flags) { \
    (void)flags;                                                           \
    unsigned char *d = dst;                                                \
    const unsigned char *s = src;                                          \
    for (size_t i = 0; i < n; i++) {                                       \
      uint16_t h;                                                          \
      memcpy(&h, s + 2 * i, 2);                                            \
      uint32_t u = to_f32_bits(h);                                         \
      memcpy(d + 4 * i, &u, 4);                                            \
    }                                                                      \
  }
MB__NARROW_N(f32_to_bf16_n, bf16_from_f32_bits)
MB__WIDEN_N(bf16_to_f32_n, f32_bits_from_bf16)
MB__NARROW_N(f32_to_f16_n, f16_from_f32_bits)
MB__WIDEN_N(f16_to_f32_n, f32_bits_from_f16)

static const struct {
  mb_dtype_t dst, src;
  convert_fn fn;
} k_fast_paths[] = {
    {MB_DTYPE_BF16, MB_DTYPE_F32, f32_to_bf16_n},
    {MB_DTYPE_F32, MB_DTYPE_BF16, bf16_to_f32_n},
    {MB_DTYPE_F16, MB_DTYPE_F32, f32_to_f16_n},
    {MB_DTYPE_F32, MB_DTYPE_F16, f16_to_f32_n},
};

/* A same-type conversion is a copy, NaN payloads included. For an odd
 * count of a 4-bit type the last byte's high nibble is not ours to
 * overwrite. */
static void copy_same(void *dst, mb_dtype_t dtype, const void *src,
                      size_t count) {
  if (k_dtypes[dtype].bits != 4) {
    memcpy(dst, src, mb_dtype_bytes(dtype, count));
    return;
  }
  memcpy(dst, src, count / 2);
  if (count % 2) {
    unsigned char *d = (unsigned char *)dst + count / 2;
    const unsigned char *s = (const unsigned char *)src + count / 2;
    *d = (uint8_t)((*d & 0xF0u) | (*s & 0x0Fu));
  }
}

mb_status_t mb_convert(void *dst, mb_dtype_t dst_dtype, const void *src,
                       mb_dtype_t src_dtype, size_t count, unsigned flags) {
  if (!dtype_valid(dst_dtype) || !dtype_valid(src_dtype))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "mb_convert: invalid dtype (src %d \"%s\", dst %d \"%s\")",
                    (int)src_dtype, mb_dtype_name(src_dtype), (int)dst_dtype,
                    mb_dtype_name(dst_dtype));
  if (count == 0) return MB_OK;
  if (!dst || !src)
    return mb__fail(MB_ERR_INVALID_ARG, "mb_convert: %s is NULL with count %zu",
                    dst ? "src" : "dst", count);
  if (dst_dtype == src_dtype) {
    copy_same(dst, dst_dtype, src, count);
    return MB_OK;
  }
  for (size_t k = 0; k < sizeof k_fast_paths / sizeof k_fast_paths[0]; k++) {
    if (k_fast_paths[k].dst == dst_dtype && k_fast_paths[k].src == src_dtype) {
      k_fast_paths[k].fn(dst, src, count, flags);
      return MB_OK;
    }
  }
  /* Every source value is exact in double, so one rounding in mb__store. */
  for (size_t i = 0; i < count; i++)
    mb__store(dst, dst_dtype, i, mb__load(src, src_dtype, i), flags);
  return MB_OK;
}
