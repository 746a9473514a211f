/* torchao's sparsity patterns on a weight W[K,N]: which elements a 2:4 or
 * block-sparse weight keeps, and its compressed forms (sparse.h). The
 * pruned layer's reference, the weight-preparation steps and the standalone
 * sparse GEMMs' inputs all come from these functions, so every path agrees
 * on one pattern. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/sparse.h"

/* The kept pair of w[0], w[s], w[2s], w[3s]: the 2 largest |w|, ties to
 * the lower index, as a nibble idx0 | idx1 << 2 with idx0 < idx1. */
static unsigned pick24(const float *w, int64_t stride) {
  unsigned best = 0, second = 1;
  float a[4];
  for (int i = 0; i < 4; i++) a[i] = fabsf(w[i * stride]);
  if (a[1] > a[0]) best = 1, second = 0;
  for (unsigned i = 2; i < 4; i++) {
    if (a[i] > a[best])
      second = best, best = i;
    else if (a[i] > a[second])
      second = i;
  }
  const unsigned lo = best < second ? best : second;
  const unsigned hi = best < second ? second : best;
  return lo | hi << 2;
}

void mb__sparse24_compress(const float *w, int64_t k, int64_t n, float *vals,
                           uint8_t *meta) {
  memset(meta, 0, (size_t)(k / 8 * n));
  for (int64_t g = 0; g < k / 4; g++)
    for (int64_t c = 0; c < n; c++) {
      const float *col = w + 4 * g * n + c;
      const unsigned nib = pick24(col, n);
      vals[2 * g * n + c] = col[(nib & 3u) * n];
      vals[(2 * g + 1) * n + c] = col[(nib >> 2) * n];
      meta[g / 2 * n + c] |= (uint8_t)(nib << (4 * (g & 1)));
    }
}

/* Strip j's kept k-blocks, ascending, into idx[0 .. keep). */
static void pick_blocks(const float *w, int64_t k, int64_t n, int64_t j,
                        double *norm, int32_t *idx) {
  const int64_t kb = k / MB__SPARSE_BS, keep = mb__sparse_block_keep(k);
  for (int64_t b = 0; b < kb; b++) {
    double s = 0.0;
    for (int64_t r = 0; r < MB__SPARSE_BS; r++)
      for (int64_t c = 0; c < MB__SPARSE_BS; c++) {
        const double v = w[(b * MB__SPARSE_BS + r) * n + j * MB__SPARSE_BS + c];
        s += v * v;
      }
    norm[b] = s;
  }
  /* A block is kept when fewer than `keep` blocks beat it (a larger norm,
   * or an equal one at a lower index): exactly `keep` are, in order. */
  int64_t t = 0;
  for (int64_t b = 0; b < kb; b++) {
    int64_t ahead = 0;
    for (int64_t o = 0; o < kb; o++)
      ahead += norm[o] > norm[b] || (norm[o] == norm[b] && o < b);
    if (ahead < keep) idx[t++] = (int32_t)b;
  }
}

void mb__sparse_block_compress(const float *w, int64_t k, int64_t n,
                               float *vals, int32_t *idx) {
  const int64_t keep = mb__sparse_block_keep(k), bs = MB__SPARSE_BS;
  double *norm = malloc((size_t)(k / bs) * sizeof *norm);
  if (!norm) return;
  for (int64_t j = 0; j < n / bs; j++) {
    pick_blocks(w, k, n, j, norm, idx + j * keep);
    for (int64_t t = 0; t < keep; t++) {
      float *dst = vals + (j * keep + t) * bs * bs;
      const int64_t kb = idx[j * keep + t];
      for (int64_t r = 0; r < bs; r++)
        memcpy(dst + r * bs, w + (kb * bs + r) * n + j * bs,
               (size_t)bs * sizeof *dst);
    }
  }
  free(norm);
}

mb_status_t mb__sparse_prune(float *w, int64_t k, int64_t n, mb__sparsity_t s) {
  const int64_t bs = MB__SPARSE_BS, keep = mb__sparse_block_keep(k);
  if (s == MB__SPARSE_24) {
    for (int64_t g = 0; g < k / 4; g++)
      for (int64_t c = 0; c < n; c++) {
        float *col = w + 4 * g * n + c;
        const unsigned nib = pick24(col, n);
        for (unsigned i = 0; i < 4; i++)
          if (i != (nib & 3u) && i != nib >> 2) col[i * n] = 0.0f;
      }
    return MB_OK;
  }
  if (s != MB__SPARSE_BLOCK) return MB_OK;
  double *norm = malloc((size_t)(k / bs) * sizeof *norm);
  int32_t *idx = malloc((size_t)(keep > 0 ? keep : 1) * sizeof *idx);
  if (!norm || !idx) {
    free(norm);
    free(idx);
    return mb__fail(MB_ERR_NO_MEMORY, "block sparsity: out of memory");
  }
  for (int64_t j = 0; j < n / bs; j++) {
    pick_blocks(w, k, n, j, norm, idx);
    for (int64_t b = 0, t = 0; b < k / bs; b++) {
      if (t < keep && idx[t] == b) {
        t++;
        continue;
      }
      for (int64_t r = 0; r < bs; r++)
        memset(w + (b * bs + r) * n + j * bs, 0, (size_t)bs * sizeof *w);
    }
  }
  free(norm);
  free(idx);
  return MB_OK;
}

mb_status_t mb__sparse_check_shape(const char *who, mb__sparsity_t s, int64_t k,
                                   int64_t n) {
  if (s == MB__SPARSE_24 && k % 8)
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: 2:4 sparsity keeps 2 of every 4 along K and packs "
                    "two groups' indices per byte: K = %lld is not a "
                    "multiple of 8",
                    who, (long long)k);
  if (s == MB__SPARSE_BLOCK && (k % (2 * MB__SPARSE_BS) || n % MB__SPARSE_BS))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s: block sparsity keeps half of the %dx%d blocks of "
                    "each block row: K = %lld must be a multiple of %d and "
                    "N = %lld of %d",
                    who, MB__SPARSE_BS, MB__SPARSE_BS, (long long)k,
                    2 * MB__SPARSE_BS, (long long)n, MB__SPARSE_BS);
  return MB_OK;
}
