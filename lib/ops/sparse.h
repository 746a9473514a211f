/* Internal: torchao's sparsity patterns (sparsity_config_recipe_names) —
 * how a weight W[K,N] (the GEMM's B) is pruned and how the sparse GEMMs
 * hold it (sparse.c); the ops gemm_sparse24 and gemm_block_sparse
 * (gemm_sparse.c) read the compressed forms. docs/ops.md, "Sparse GEMM". */
#ifndef MB_LIB_OPS_SPARSE_H
#define MB_LIB_OPS_SPARSE_H

#include "ops/op_internal.h"

typedef enum mb__sparsity {
  MB__SPARSE_NONE = 0,
  MB__SPARSE_24,   /* 2:4 semi-structured along K */
  MB__SPARSE_BLOCK /* 64x64 blocks, half of each block row kept */
} mb__sparsity_t;

/* torchao's BlockSparseWeightConfig.blocksize (64 at pytorch/ao dbef6992);
 * the kept fraction is ours: torchao's microbenchmark converts a dense
 * random weight to BSR without pruning (every block kept), so we prune to
 * half, the 2:4 pattern's density, per block row (fixed operand sizes). */
#define MB__SPARSE_BS 64

/* 2:4 metadata: one nibble per group of 4 along K, idx0 | idx1 << 2 with
 * idx0 < idx1 the kept positions; two groups per byte, the even group in
 * the low nibble: byte (g / 2) * N + n of a K/8 x N i8 grid. Compressed
 * values: rows 2g and 2g + 1 of a K/2 x N matrix hold W[4g + idx0, n] and
 * W[4g + idx1, n] (torch's semi-structured layout, along B's K). */
static inline unsigned mb__sparse24_nibble(const void *meta, int64_t n,
                                           int64_t g, int64_t col) {
  const uint8_t b = ((const uint8_t *)meta)[(g / 2) * n + col];
  return (g & 1) ? (unsigned)(b >> 4) : (unsigned)(b & 15u);
}

/* The number of 64-row blocks kept in each 64-column strip of W[K,N]. */
static inline int64_t mb__sparse_block_keep(int64_t k) {
  return k / MB__SPARSE_BS / 2;
}

/* Compresses W[K,N] (f32) by its 2:4 pattern: the 2 largest |w| of each 4
 * along K (torch.ao's WeightNormSparsifier with sparse_block_shape (1, 4),
 * zeros_per_block 2, as torchao's apply_fake_sparsity; ties keep the lower
 * index). vals: K/2 x N, meta: K/8 x N bytes. An already-pruned W
 * compresses exactly. */
void mb__sparse24_compress(const float *w, int64_t k, int64_t n, float *vals,
                           uint8_t *meta);
/* Compresses W[K,N] into 64x64 blocks: in each 64-column strip j, the
 * mb__sparse_block_keep(K) k-blocks of largest L2 norm (ties: the lower
 * index), ascending; idx[j * keep + t] their block indices, vals their
 * blocks one after another, each 64x64 row-major. */
void mb__sparse_block_compress(const float *w, int64_t k, int64_t n,
                               float *vals, int32_t *idx);
/* Prunes W[K,N] in place to the pattern (zeroes what compress drops). */
mb_status_t mb__sparse_prune(float *w, int64_t k, int64_t n, mb__sparsity_t s);
/* An input error naming `who` when K x N cannot hold the pattern. */
mb_status_t mb__sparse_check_shape(const char *who, mb__sparsity_t s, int64_t k,
                                   int64_t n);

extern const mb_op_t mb__op_gemm_sparse24;
extern const mb_op_t mb__op_gemm_block_sparse;

#endif
