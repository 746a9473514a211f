/* MXFP8 helpers of the shared GPU kernels that a vendor's GEMM calls
 * (gpu_quant_mx.cu): e8m0 scale grids re-laid into cuBLASLt's
 * VEC32_UE8M0 tiles, on the device (in prepare for given scales, inside
 * the timed run for scales the quantize kernel has just written). */
#ifndef MB_GPU_MX_H
#define MB_GPU_MX_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the tiled layout of outer x kblocks scales (padded to 128 x 4). */
size_t mb__gpu_mx_tiled_bytes(int64_t outer, int64_t kblocks);
/* Enqueues on env->stream: dst (mb__gpu_mx_tiled_bytes, device) = the
 * scales src[o so + kb sk] (o < outer, kb < kblocks; device) in cuBLASLt's
 * 128 x 4 tiles ((o % 32) 16 + (o % 128 / 32) 4 + kb % 4 within a tile,
 * tiles row-major), padding 0. */
mb_status_t mb__gpu_mx_tile_scales(const mb_gpu_env_t *env, const uint8_t *src,
                                   int64_t so, int64_t sk, int64_t outer,
                                   int64_t kblocks, uint8_t *dst);

#ifdef __cplusplus
}
#endif
#endif
