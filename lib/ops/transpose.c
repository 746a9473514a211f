/* A large transpose is bound by memory, not arithmetic: a naive one reads
 * src down its columns, a new page (and TLB entry) for every element, and
 * a 16384^2 f32 B took seconds. Here each thread owns a band of dst rows
 * (src columns) and walks it in BLOCK x BLOCK tiles, each moved as 8 x 8
 * micro-tiles through a small buffer (f32: 4 x 4 in registers), so both
 * sides touch few pages at a time and dst is written in runs. The bytes are
 * copied, not converted: the caller reads them in their own dtype. */
#include "ops/transpose.h"

#include "parallel.h"

#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

enum { BLOCK = 128, MICRO = 8 };

#define MB__TRANSPOSE_MIN_PART ((int64_t)1 << 20) /* elements a thread */

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* dst columns [c_lo, c_hi) of a transpose of S-byte elements: one tile.
 * memcpy with a constant S compiles to one load or store and keeps char
 * pointers, so no dtype's bytes are read through another type. */
#define MB__TRANSPOSE_TILE(name, S)                                            \
  static void name(const unsigned char *src, unsigned char *dst, int64_t rows, \
                   int64_t cols, int64_t c0, int64_t ce, int64_t r0,           \
                   int64_t re) {                                               \
    for (int64_t c1 = c0; c1 < ce; c1 += MICRO)                                \
      for (int64_t r1 = r0; r1 < re; r1 += MICRO) {                            \
        if (c1 + MICRO <= ce && r1 + MICRO <= re) {                            \
          unsigned char t[MICRO][MICRO * (S)];                                 \
          for (int i = 0; i < MICRO; i++)                                      \
            for (int j = 0; j < MICRO; j++)                                    \
              memcpy(&t[j][i * (S)], src + ((r1 + i) * cols + c1 + j) * (S),   \
                     (S));                                                     \
          for (int j = 0; j < MICRO; j++)                                      \
            memcpy(dst + ((c1 + j) * rows + r1) * (S), t[j], sizeof t[j]);     \
          continue;                                                            \
        }                                                                      \
        for (int64_t c = c1; c < min64(c1 + MICRO, ce); c++)                   \
          for (int64_t r = r1; r < min64(r1 + MICRO, re); r++)                 \
            memcpy(dst + (c * rows + r) * (S), src + (r * cols + c) * (S),     \
                   (S));                                                       \
      }                                                                        \
  }

#if defined(__SSE__)
/* f32 (the large case) moves as 4 x 4 register transposes, a third less
 * time than through the buffer; SSE loads and stores keep every bit, NaN
 * payloads included, and GCC and Clang declare them free to alias. */
static void tile4(const unsigned char *src, unsigned char *dst, int64_t rows,
                  int64_t cols, int64_t c0, int64_t ce, int64_t r0,
                  int64_t re) {
  const float *s = (const float *)src;
  float *d = (float *)dst;
  for (int64_t c1 = c0; c1 < ce; c1 += 4)
    for (int64_t r1 = r0; r1 < re; r1 += 4) {
      if (c1 + 4 <= ce && r1 + 4 <= re) {
        __m128 x0 = _mm_loadu_ps(s + (r1 + 0) * cols + c1);
        __m128 x1 = _mm_loadu_ps(s + (r1 + 1) * cols + c1);
        __m128 x2 = _mm_loadu_ps(s + (r1 + 2) * cols + c1);
        __m128 x3 = _mm_loadu_ps(s + (r1 + 3) * cols + c1);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        _mm_storeu_ps(d + (c1 + 0) * rows + r1, x0);
        _mm_storeu_ps(d + (c1 + 1) * rows + r1, x1);
        _mm_storeu_ps(d + (c1 + 2) * rows + r1, x2);
        _mm_storeu_ps(d + (c1 + 3) * rows + r1, x3);
        continue;
      }
      for (int64_t c = c1; c < min64(c1 + 4, ce); c++)
        for (int64_t r = r1; r < min64(r1 + 4, re); r++)
          memcpy(dst + (c * rows + r) * 4, src + (r * cols + c) * 4, 4);
    }
}
#else
MB__TRANSPOSE_TILE(tile4, 4)
#endif
MB__TRANSPOSE_TILE(tile2, 2)
MB__TRANSPOSE_TILE(tile1, 1)

/* 4-bit formats are packed two to a byte, low nibble first; each becomes
 * one byte of a format that holds it exactly (BYTE(nib)): i4 a signed byte,
 * e2m1 an e4m3 byte. Rare (int4 weights, fp4 operands) and half the bytes,
 * so a plain tile will do. */
#define MB__TRANSPOSE_NIB(name, BYTE)                                          \
  static void name(const unsigned char *src, unsigned char *dst, int64_t rows, \
                   int64_t cols, int64_t c0, int64_t ce, int64_t r0,           \
                   int64_t re) {                                               \
    for (int64_t c = c0; c < ce; c++)                                          \
      for (int64_t r = r0; r < re; r++) {                                      \
        const int64_t e = r * cols + c;                                        \
        const unsigned nib = (src[e / 2] >> (e % 2 ? 4 : 0)) & 0xFu;           \
        dst[c * rows + r] = BYTE(nib);                                         \
      }                                                                        \
  }
#define MB__I4_BYTE(nib) \
  ((unsigned char)(signed char)((int)(nib) >= 8 ? (int)(nib)-16 : (int)(nib)))
/* e2m1's magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 as e4m3 (bias 7) patterns;
 * the sign moves from bit 3 to bit 7. */
static const unsigned char k_e2m1_e4m3[8] = {0x00, 0x30, 0x38, 0x3C,
                                             0x40, 0x44, 0x48, 0x4C};
#define MB__E2M1_BYTE(nib) \
  ((unsigned char)(k_e2m1_e4m3[(nib)&7u] | (((nib)&8u) << 4)))
MB__TRANSPOSE_NIB(tile_i4, MB__I4_BYTE)
MB__TRANSPOSE_NIB(tile_e2m1, MB__E2M1_BYTE)

typedef void (*tile_fn)(const unsigned char *, unsigned char *, int64_t,
                        int64_t, int64_t, int64_t, int64_t, int64_t);

typedef struct job {
  tile_fn tile;
  const unsigned char *src;
  unsigned char *dst;
  int64_t rows, cols;
} job_t;

/* dst rows (src columns) [lo, hi), block by block. */
static void run_band(void *arg, size_t lo, size_t hi) {
  const job_t *j = arg;
  for (int64_t c0 = (int64_t)lo; c0 < (int64_t)hi; c0 += BLOCK)
    for (int64_t r0 = 0; r0 < j->rows; r0 += BLOCK)
      j->tile(j->src, j->dst, j->rows, j->cols, c0,
              min64(c0 + BLOCK, (int64_t)hi), r0, min64(r0 + BLOCK, j->rows));
}

mb_dtype_t mb__transpose_dtype(mb_dtype_t dtype) {
  return dtype == MB_DTYPE_I4       ? MB_DTYPE_I8
         : dtype == MB_DTYPE_F4E2M1 ? MB_DTYPE_F8E4M3
                                    : dtype;
}

void mb__transpose(const void *src, mb_dtype_t dtype, void *dst, int64_t rows,
                   int64_t cols) {
  const unsigned bits = mb_dtype_bits(dtype);
  const tile_fn tile = bits == 32             ? tile4
                       : bits == 16           ? tile2
                       : bits == 8            ? tile1
                       : dtype == MB_DTYPE_I4 ? tile_i4
                                              : tile_e2m1;
  job_t job = {tile, src, dst, rows, cols};
  /* Bands of whole blocks of columns, each worth a thread's start. */
  const int64_t min_cols = MB__TRANSPOSE_MIN_PART / (rows > 0 ? rows : 1);
  mb__parallel_for((size_t)cols, (size_t)(min_cols > 0 ? min_cols : 1), BLOCK,
                   run_band, &job);
}
