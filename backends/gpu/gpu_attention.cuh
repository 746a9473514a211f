/* What attention's forward (gpu_attention.cu) and backward
 * (gpu_attention_bwd.cu) kernels share: where a (batch, head)'s rows live
 * in a [B,H,S,D] or [B,S,H,D] tensor. */
#ifndef MB_GPU_ATTENTION_CUH
#define MB_GPU_ATTENTION_CUH

#include "gpu_eltwise.cuh"

/* Element offset of row `pos` of (batch, head) bh in a tensor of `heads`
 * heads and `seq` rows per head: [B,H,S,D] (b H + h) seq + pos rows of d;
 * [B,S,H,D] (b seq + pos) H + h. Rows of one head are ld = d, or H d,
 * apart. */
__device__ __forceinline__ size_t mb_gpu_att_row(size_t bh, size_t seq,
                                                 size_t pos, size_t heads,
                                                 int d, int bshd) {
  const size_t row =
      bshd ? (bh / heads * seq + pos) * heads + bh % heads : bh * seq + pos;
  return row * (size_t)d;
}

#endif
