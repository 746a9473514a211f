/* CPU backend — the tile steps attention's forward (cpu_attention_c.c) and
 * backward (cpu_attention_bwd_c.c) kernels share: rows of a [B,H,S,D] or
 * [B,S,H,D] tensor loaded into f32 tiles, the 4-row score product against
 * a transposed key block, and the 4-row accumulation of a weighted sum of
 * rows. */
#ifndef MB_CPU_ATTENTION_H
#define MB_CPU_ATTENTION_H

#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"

/* QB queries x KB keys per step (the tile stays in L2), the queries in
 * groups of RG rows that share every load of K and V (scores() and
 * accumulate() are written out for RG = 4); rows are padded to a multiple
 * of VEC floats so the loops along D run in whole vectors. */
enum { QB = 64, KB = 64, VEC = 16, RG = 4 };

/* s[r][j] = scale * sum_c q[r][c] kt[c][j] for RG = 4 rows and all KB keys,
 * c in steps of 4 (d4: D rounded up to 4; q and kt are zero past D): each
 * load and store of s serves 4 FMAs, each load of K 4 rows (the pattern of
 * cpu_gemm_c.c's inner kernel, which gcc vectorises into FMAs). */
static inline void mb__cpu_att_scores(float *restrict s,
                                      const float *restrict q,
                                      const float *restrict kt, int64_t d4,
                                      int64_t dp, float scale) {
  float *restrict s0 = s, *restrict s1 = s + KB, *restrict s2 = s + 2 * KB,
                  *restrict s3 = s + 3 * KB;
  for (int j = 0; j < RG * KB; ++j) s[j] = 0.0f;
  for (int64_t c = 0; c < d4; c += 4) {
    const float *restrict k0 = kt + c * KB, *restrict k1 = k0 + KB,
                          *restrict k2 = k1 + KB, *restrict k3 = k2 + KB;
    const float *q0 = q + c, *q1 = q0 + dp, *q2 = q1 + dp, *q3 = q2 + dp;
    const float a0 = q0[0], a1 = q0[1], a2 = q0[2], a3 = q0[3];
    const float b0 = q1[0], b1 = q1[1], b2 = q1[2], b3 = q1[3];
    const float c0 = q2[0], c1 = q2[1], c2 = q2[2], c3 = q2[3];
    const float e0 = q3[0], e1 = q3[1], e2 = q3[2], e3 = q3[3];
    for (int j = 0; j < KB; ++j) {
      s0[j] += a0 * k0[j] + a1 * k1[j] + a2 * k2[j] + a3 * k3[j];
      s1[j] += b0 * k0[j] + b1 * k1[j] + b2 * k2[j] + b3 * k3[j];
      s2[j] += c0 * k0[j] + c1 * k1[j] + c2 * k2[j] + c3 * k3[j];
      s3[j] += e0 * k0[j] + e1 * k1[j] + e2 * k2[j] + e3 * k3[j];
    }
  }
  for (int j = 0; j < RG * KB; ++j) s[j] *= scale;
}

/* o[r][:] = alpha[r] o[r][:] + sum_j p[r][j] v[j][:] for RG = 4 rows, j
 * in steps of 4 (kn4: keys rounded up to 4; p is 0 and v zero past them):
 * each load and store of o serves 4 FMAs, each load of V 4 rows. p's rows
 * are KB apart. */
static inline void mb__cpu_att_accumulate(float *restrict o,
                                          const float *restrict p,
                                          const float *restrict v,
                                          const float *alpha, int64_t kn4,
                                          int64_t dp) {
  float *restrict o0 = o, *restrict o1 = o + dp, *restrict o2 = o1 + dp,
                  *restrict o3 = o2 + dp;
  for (int64_t c = 0; c < dp; ++c) {
    o0[c] *= alpha[0];
    o1[c] *= alpha[1];
    o2[c] *= alpha[2];
    o3[c] *= alpha[3];
  }
  for (int64_t j = 0; j < kn4; j += 4) {
    const float *restrict v0 = v + j * dp, *restrict v1 = v0 + dp,
                          *restrict v2 = v1 + dp, *restrict v3 = v2 + dp;
    const float *p0 = p + j, *p1 = p0 + KB, *p2 = p1 + KB, *p3 = p2 + KB;
    const float a0 = p0[0], a1 = p0[1], a2 = p0[2], a3 = p0[3];
    const float b0 = p1[0], b1 = p1[1], b2 = p1[2], b3 = p1[3];
    const float c0 = p2[0], c1 = p2[1], c2 = p2[2], c3 = p2[3];
    const float e0 = p3[0], e1 = p3[1], e2 = p3[2], e3 = p3[3];
    for (int64_t c = 0; c < dp; ++c) {
      o0[c] += a0 * v0[c] + a1 * v1[c] + a2 * v2[c] + a3 * v3[c];
      o1[c] += b0 * v0[c] + b1 * v1[c] + b2 * v2[c] + b3 * v3[c];
      o2[c] += c0 * v0[c] + c1 * v1[c] + c2 * v2[c] + c3 * v3[c];
      o3[c] += e0 * v0[c] + e1 * v1[c] + e2 * v2[c] + e3 * v3[c];
    }
  }
}

/* Element offset of row `pos` of batch b, head h in a tensor of `heads`
 * heads and `seq` rows per head, rows of d: (b heads + h) seq + pos, or
 * BSHD (b seq + pos) heads + h. */
static inline size_t mb__cpu_att_row(int bshd, int64_t d, int64_t b, int64_t h,
                                     int64_t heads, int64_t seq, int64_t pos) {
  const int64_t row =
      bshd ? (b * seq + pos) * heads + h : (b * heads + h) * seq + pos;
  return (size_t)row * (size_t)d;
}

/* Rows [0, n) of a rows x d block at `off`, rows `ld` apart in the source,
 * into a buffer with rows dp apart, zero past d and past n (up to
 * `rows_out`). */
static inline void mb__cpu_att_load_rows(float *restrict dst, const void *src,
                                         mb_dtype_t dtype, size_t off,
                                         int64_t ld, int64_t n, int64_t d,
                                         int64_t dp, int64_t rows_out) {
  for (int64_t r = 0; r < rows_out; ++r) {
    float *row = dst + r * dp;
    int64_t c = 0;
    if (r < n) {
      mb__cpu_load_f32(row, src, dtype, off + (size_t)(r * ld), (size_t)d);
      c = d;
    }
    for (; c < dp; ++c) row[c] = 0.0f;
  }
}

#endif
