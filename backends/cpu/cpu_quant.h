/* CPU backend — quantize and dequantize in portable C, and the pieces the
 * scaled GEMMs reuse (quantizing their inputs, dequantizing or widening
 * their operands inside the timed run).
 *
 * Semantics (lib/quant.c, lib/ops/quantize.c): one f32 scale per block of
 * the quantized tensor; dynamic s = fl32(absmax / qmax) per block (an
 * all-zero or non-finite block: 1), static s = the given scale;
 * q = RNE_saturate(fl32(x / s)); dequantize x = round(fl32(q * s)). The
 * kernels reproduce mb__quantize_ref bit for bit: the same f32 division
 * (not a multiplication by 1/s, which is one ulp off now and then — and is
 * why oneDNN's reorder with scales, which multiplies, is not used here),
 * the same maximum (NaN ignored as fmaxf does), exact converters
 * (backends/common/mb_cvt.h). */
#ifndef MB_CPU_QUANT_H
#define MB_CPU_QUANT_H

#include <stdatomic.h>

#include "cpu_internal.h"

/* ---- kernels (cpu_kernels_quant.def) ------------------------------------- */
mb_status_t mb__cpu_quantize_c_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate);
mb_status_t mb__cpu_quantize_c_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_quantize_c_release(void *kstate);
mb_status_t mb__cpu_quantize_portable_prepare(void *bstate,
                                              const mb_kernel_call_t *call,
                                              void **kstate);
mb_status_t mb__cpu_quantize_portable_run(void *kstate,
                                          const mb_kernel_call_t *call);
void mb__cpu_quantize_portable_release(void *kstate);

mb_status_t mb__cpu_dequantize_c_prepare(void *bstate,
                                         const mb_kernel_call_t *call,
                                         void **kstate);
mb_status_t mb__cpu_dequantize_c_run(void *kstate,
                                     const mb_kernel_call_t *call);
void mb__cpu_dequantize_c_release(void *kstate);

/* The element loops of this family are cloned for x86-64-v4 rather than
 * MB_CPU_CLONES' plain "avx512f": converting to and from bytes and halves
 * wants AVX512BW/VL (vpmovdb, masked blends, vpternlog), without which gcc
 * emits 256-bit code that packs with vpackus/vpermq and spills; measured
 * 1.5-1.7x faster on Zen 4 for fp8 quantization. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    __GNUC__ >= 12
#define MB_CPU_QCLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MB_CPU_QCLONES
#endif

/* Two elements per byte (i4, e2m1): threads must not split a byte. */
static inline int mb__cpu_is_nibble(mb_dtype_t t) {
  return t == MB_DTYPE_I4 || t == MB_DTYPE_F4E2M1;
}

/* Element i of a 4-bit array (low nibble first) set to v: only its nibble
 * changes, the other may be a neighbour's. */
static inline void mb__cpu_set_nibble(uint8_t *p, size_t i, uint8_t v) {
  const unsigned shift = 4u * (unsigned)(i & 1u);
  p[i / 2] = (uint8_t)((p[i / 2] & ~(0xFu << shift)) | ((unsigned)v << shift));
}

/* A span cut at the edges of blocks bn wide (one scale each): the end of
 * the piece of [c, hi) in c's block, block c / bn. The loops read
 *   for (int64_t c = lo, end; c < hi; c = end) {
 *     end = mb__cpu_block_end(c, bn, hi); ... [c, end) ...
 *   } */
static inline int64_t mb__cpu_block_end(int64_t c, int64_t bn, int64_t hi) {
  const int64_t e = (c / bn + 1) * bn;
  return e < hi ? e : hi;
}

/* The same walk for the vector loops' block-at-a-time calls (quantg, amaxg,
 * deqg), without mb__cpu_block_end's division a block (a group of 32 is a
 * few vectors of work): n elements that start `off` into a block of g,
 * piece k starting j elements in and `len` long, the first the rest of its
 * block. The statement after it is the loop's body. It steps by the whole
 * block (len##_full) and clips len to n apart: stepping by the clipped len
 * cost deqg on i4 groups of 128 12 % (one thread, in L1, Zen 4). */
#define MB__CPU_PIECES(k, j, len, g, off, n)             \
  for (size_t k = 0, j = 0, len##_full = (g) - (off),    \
              len = (n) < len##_full ? (n) : len##_full; \
       j < (n); ++k, j += len##_full, len##_full = (g),  \
              len = (n)-j < len##_full ? (n)-j : len##_full)

/* ---- row operations (cpu_quant_rows.c) -------------------------------------
 * Every loop over elements lives here, one function per dtype, so gcc
 * vectorises each (and clones it for AVX2/AVX-512). Element offsets count
 * elements, so a row of i4 or e2m1 may start in the middle of a byte. */
typedef struct mb_cpu_qrow {
  mb_dtype_t dtype;
  /* n elements from element e0 of src, exactly, as f32. */
  void (*load)(float *dst, const void *src, size_t e0, size_t n);
  /* f32 -> dtype at element e0 of dst (RNE; floats only, else NULL). */
  void (*store)(void *dst, size_t e0, const float *src, size_t n);
  /* Quantized dtypes (else NULL): q = RNE_sat(x / s) at element e0, with
   * one scale (quant1) or one per element (quantv). */
  void (*quant1)(void *dst, size_t e0, const float *x, float s, size_t n);
  void (*quantv)(void *dst, size_t e0, const float *x, const float *s,
                 size_t n);
  float qmax; /* 448, 57344, 127, 7 (mb_dtype_max) */
} mb_cpu_qrow_t;

/* The row operations of a dtype; NULL when there are none (i32). */
const mb_cpu_qrow_t *mb__cpu_qrow(mb_dtype_t dtype);
/* The largest |x[j]| as an f32 pattern, NaN skipped (fmaxf's rule) unless
 * keep_nan (then any NaN wins: its pattern is above infinity's). */
uint32_t mb__cpu_amax_bits(const float *x, size_t n, int keep_nan);
/* m[j] = max(m[j], |x[j]|) as patterns, NaN skipped unless keep_nan. */
void mb__cpu_amax_bits_v(uint32_t *m, const float *x, size_t n, int keep_nan);
/* e8m0 scales to f32 and back (exact both ways: powers of two, NaN). */
void mb__cpu_e8m0_load(float *dst, const uint8_t *src, size_t n);
void mb__cpu_e8m0_store(uint8_t *dst, const float *src, size_t n);
/* NVFP4: e4m3 block scales times the per-tensor s, each fl32(s_b s). */
void mb__cpu_e4m3_scales(float *dst, const uint8_t *src, float s, size_t n);
/* x[j] *= s, or *= s[j]. */
void mb__cpu_scale1(float *x, float s, size_t n);
void mb__cpu_scalev(float *x, const float *s, size_t n);

/* ---- AVX-512 loops (cpu_quant_x86.c) ---------------------------------------
 * Read X's dtype directly (bf16, f16, f32) and write whole bytes (e4m3,
 * e5m2, i8) or nibble pairs (i4), bit for bit what the row operations
 * above give. */
typedef struct mb_cpu_qvec {
  mb_dtype_t xdt, qdt;
  /* The largest |x| pattern of n elements from element e0, as
   * mb__cpu_amax_bits (NaN skipped unless keep_nan). */
  uint32_t (*amax)(const void *x, size_t e0, size_t n, int keep_nan);
  /* m[j] = max(m[j], |x[e0 + r * ld + j]| pattern), j < n, r < rows: a
   * scale per column, as mb__cpu_amax_bits_v row by row; NULL: the
   * portable loop (f16, whose NaN patterns the portable widening
   * rewrites). */
  void (*amaxv)(uint32_t *m, const void *x, size_t e0, size_t ld, size_t rows,
                size_t n, int keep_nan);
  /* q[qe + j] = cvt(x[xe + j] / s), j < n. nt: whole lines of Q from a
   * line-aligned start are written with non-temporal stores (the caller
   * fences, mb__cpu_simd_sfence, before another thread reads Q); a piece
   * that starts off a line keeps plain stores. */
  void (*quant1)(void *q, size_t qe, const void *x, size_t xe, float s,
                 size_t n, int nt);
  /* The same with one scale per element, s[j]. */
  void (*quantv)(void *q, size_t qe, const void *x, size_t xe, const float *s,
                 size_t n, int nt);
  /* A transposed 16 x 16 tile as f32: t[i * ld + j] = x[xe + j * xld + i]
   * (X's column xe + i, row j), i, j < 16. */
  void (*tile16)(float *t, size_t ld, const void *x, size_t xe, size_t xld);
  /* A row's blocks in one call: m[k] = max(m[k], amax of elements [e0 + k g,
   * e0 + (k + 1) g)) over the n from e0 (the last block may be short). */
  void (*amaxg)(uint32_t *m, const void *x, size_t e0, size_t n, size_t g,
                int keep_nan);
  /* quant1 over blocks of g, for n elements that start `off` into a block
   * (the first piece is the rest of it); piece k with the scale s[k]. */
  void (*quantg)(void *q, size_t qe, const void *x, size_t xe, const float *s,
                 size_t g, size_t off, size_t n, int nt);
  /* tile16 quantized to byte codes: c[i * ld + j] = cvt(x[xe + j * xld + i]
   * / s[i]), i, j < 16 (Q row i has the scale s[i]); NULL for i4. */
  void (*tileq16)(uint8_t *c, size_t ld, const void *x, size_t xe, size_t xld,
                  const float *s);
  /* rows x w bytes of codes (rows ld apart) to Q from element qe, its rows
   * qld apart, whole lines streamed as quant1 does (nt). */
  void (*put_rows)(void *q, size_t qe, size_t qld, const uint8_t *c, size_t ld,
                   size_t rows, size_t w, int nt);
} mb_cpu_qvec_t;

/* Whether this CPU runs the vector loops of quantization and dequantization
 * (AVX-512 F/BW/VL/DQ and F16C, MB_CPU_NO_AVX512 unset). */
int mb__cpu_quant_vec_cpu(void);
/* The loops for xdt -> qdt when this CPU runs them, else NULL. */
const mb_cpu_qvec_t *mb__cpu_qvec(mb_dtype_t xdt, mb_dtype_t qdt);

/* ---- a quantizer, planned once (untimed) and run many times -------------- */
typedef struct mb_cpu_quant {
  mb_dtype_t xdt, qdt;
  int64_t rows, cols; /* of Q: X is rows x cols, or cols x rows transposed */
  int64_t bm, bn;     /* block of Q (resolved scaling) */
  int64_t gr, gc;     /* scale grid */
  int transpose;
  float static_scale; /* > 0: static, else dynamic absmax */
  int mx_emax;        /* e8m0 scales: emax_elem (MX rule); 0: f32 scales */
  float *grid32;      /* e8m0 scales: the grid in f32 before it is stored;
                         NVFP4: each block's fl32(s_b S) */
  float nv_s;         /* NVFP4 (e4m3 block scales): the per-tensor S; else 0 */
  uint8_t *nv_sb;     /* NVFP4: the e4m3 block scales, stored after the run */
  int fused;          /* per block row: absmax then quantize, in cache */
  int stream;         /* the vector loops write Q past the caches */
  unsigned threads;
  atomic_uint *amax; /* gr x gc absmax patterns (two-pass mode) */
  uint32_t *local;   /* per thread: local_each block maxima */
  size_t local_each;
  /* Vector loops chosen at plan time (NULL: the portable ones): from X's
   * dtype, and from f32 (the transposed tiles). */
  const mb_cpu_qvec_t *vx, *vt;
} mb_cpu_quant_t;

/* Plans quantizing a rows x cols Q (of X, or of X^T with `transpose`) with
 * resolved scaling `s`. MB_ERR_UNSUPPORTED for dtypes it does not handle. */
mb_status_t mb__cpu_quant_init(mb_cpu_state_t *st, mb_cpu_quant_t *q,
                               mb_dtype_t xdt, mb_dtype_t qdt, int64_t rows,
                               int64_t cols, const mb_scaling_t *s,
                               int transpose, double static_scale);
/* Makes a planned quantizer write e8m0 scales (sdtype MB_DTYPE_E8M0, the
 * OCP MX rule; a static scale must be a power of two) instead of f32 ones;
 * MB_DTYPE_NONE and f32 leave it as it is. */
mb_status_t mb__cpu_quant_scales(mb_cpu_state_t *st, mb_cpu_quant_t *q,
                                 mb_dtype_t sdtype);
/* Writes Q (qdt) and the scale grid (f32, or e8m0 bytes). Runs its own
 * OpenMP team. */
void mb__cpu_quant_run(const mb_cpu_quant_t *q, const void *x, void *out,
                       void *grid);
void mb__cpu_quant_fini(mb_cpu_quant_t *q);

/* ---- dequantize / widen a matrix -------------------------------------------
 * dst = round(fl32(src * s)) for a rows x cols matrix, s from a grid of
 * bm x bn blocks (grid NULL: no scaling, an exact widening for fp8, i8, i4,
 * bf16, f16 to f32, and fp8 to bf16). src: any float or quantized dtype but
 * i32; dst: f32, bf16 or f16. */
int mb__cpu_dequant_supports(mb_dtype_t in, mb_dtype_t out);

/* What one scale makes of every code for a 16-bit output (bf16, f16):
 * v[c] for the 256 byte codes, or the first 16 for 4-bit ones. The
 * dequantize loops build it from their own arithmetic when the scale or
 * the formats change and then look outputs up, bit for bit what they
 * compute; the caller keeps one per thread between calls (a row's chunks
 * share its scale). key 0: empty. */
typedef struct mb_cpu_dqtab {
  uint16_t v[256];
  uint32_t key;    /* in << 16 | out of the loops that built it */
  uint32_t s_bits; /* the scale's bit pattern */
} mb_cpu_dqtab_t;

/* AVX-512 dequantize loops (cpu_dequant_x86.c), bit for bit the portable
 * load, scaling and store: y[ye + j] = cvt(fl32(q[qe + j] * s)) with one
 * scale (deq1) or one per element, s[j] (deqv), j < n; element offsets, so
 * a 4-bit span may start in the middle of a byte. nt: non-temporal stores
 * where aligned, which a thread ends with fence() before others read Y.
 * tab: deq1's lookup table for 16-bit outputs (NULL: none, compute).
 * deqg: one scale per group of g elements, s[k] the k-th group's from the
 * one holding element qe, which starts `off` elements into its group (a
 * row's groups in one call). */
typedef struct mb_cpu_dqvec {
  mb_dtype_t in, out;
  void (*deq1)(void *y, size_t ye, const void *q, size_t qe, float s, size_t n,
               int nt, mb_cpu_dqtab_t *tab);
  void (*deqv)(void *y, size_t ye, const void *q, size_t qe, const float *s,
               size_t n, int nt);
  void (*deqg)(void *y, size_t ye, const void *q, size_t qe, const float *s,
               size_t g, size_t off, size_t n, int nt, mb_cpu_dqtab_t *tab);
  void (*fence)(void);
} mb_cpu_dqvec_t;

/* The loops for in -> out when this CPU runs them, else NULL; chosen when
 * a kernel is prepared (it reads MB_CPU_NO_AVX512), never per run.
 * Quantized inputs (fp8, i8, i4, e2m1) to f32, bf16 or f16. */
const mb_cpu_dqvec_t *mb__cpu_dqvec(mb_dtype_t in, mb_dtype_t out);

/* vec: mb__cpu_dqvec(in, out), or NULL for the portable loops; stream:
 * the vector loops store past the caches (mb__cpu_stream_stores). */
void mb__cpu_dequant(unsigned threads, const mb_cpu_dqvec_t *vec, int stream,
                     const void *src, mb_dtype_t in, const float *grid,
                     int64_t bm, int64_t bn, void *dst, mb_dtype_t out,
                     int64_t rows, int64_t cols);

/* Rows [r0, r1) of D = round(fl32(fl32(acc * rs[i]) * cs[j]) + beta * D)
 * where acc is f32 or i32 (acc_i32), rs per row (NULL: alpha), cs per
 * column (NULL: 1). beta == 0 never reads D. The scaled GEMMs' epilogue;
 * runs its own OpenMP team. */
void mb__cpu_scale_out(unsigned threads, const void *acc, int acc_i32,
                       float alpha, const float *rs, const float *cs,
                       float beta, void *d, mb_dtype_t out, int64_t rows,
                       int64_t cols);

#endif
