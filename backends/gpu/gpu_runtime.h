/* The thin shim that lets one kernel source build for CUDA (nvcc), HIP
 * (hipcc) and the emulated GPU of the tests (g++): the few runtime calls,
 * warp primitives, launches and dynamic shared memory the shared kernels
 * use, under neutral names. __global__, __shared__, __syncthreads, atomics
 * and threadIdx are the same in all three.
 *
 * HIP is selected by MB_GPU_HIP (the HIP backend's build defines it), the
 * emulation by MB_GPU_EMU (gpu_emu.h; tests/gpu_emu/ builds it).
 *
 * MB_GPU_WARP is for device code. Host code sizes launches with the
 * device's mb_gpu_env_t.warp_size: one HIP build serves 64-lane CDNA and
 * 32-lane RDNA GPUs.
 *
 * mb_gpu_occupancy(&blocks, kernel, threads, smem) is
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor: how many blocks of
 * `threads` threads and `smem` bytes of dynamic shared memory one
 * multiprocessor holds at once for this kernel (its registers, shared
 * memory and block size), so grids are sized from what the compiled kernel
 * needs rather than from a fixed guess.
 *
 * Launches and dynamic shared memory go through two macros, so that the
 * emulation needs no launch syntax of its own:
 *
 *   MB_GPU_LAUNCH(kernel, grid, block, smem, stream, args...)
 *       kernel<<<grid, block, smem, stream>>>(args...) — every argument is
 *       required, and a kernel name with a comma (a template-id with several
 *       arguments) goes in parentheses, or the preprocessor splits it:
 *       MB_GPU_LAUNCH((k<A, B>), grid, 256, 0, stream, x, n). Forgetting
 *       them does not compile.
 *   MB_GPU_DYN_SMEM(type, name);
 *       extern __shared__ type name[] — the launch's dynamic shared memory;
 *       use `name` as an array or a pointer, never sizeof(name). */
#ifndef MB_GPU_RUNTIME_H
#define MB_GPU_RUNTIME_H

#if defined(MB_GPU_HIP)
#include <hip/hip_runtime.h>
typedef hipStream_t mb_gpu_stream_t;
typedef hipError_t mb_gpu_error_t;
#define mb_gpu_success hipSuccess
#define mb_gpu_get_last_error hipGetLastError
#define mb_gpu_error_string hipGetErrorString
#define mb_gpu_memset_async hipMemsetAsync
#define mb_gpu_memcpy_async(dst, src, bytes, stream) \
  hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, stream)
#define mb_gpu_func_set_max_smem(fn, bytes) \
  hipFuncSetAttribute((const void *)(fn),   \
                      hipFuncAttributeMaxDynamicSharedMemorySize, bytes)
#define mb_gpu_occupancy(blocks, fn, threads, smem)                   \
  hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, (const void *)(fn), \
                                               threads, smem)
/* HIP 5.2 has no *_sync shuffles. A wavefront is 64 lanes on GCN/CDNA and
 * 32 on RDNA (HIP refuses wave64 there), so device code takes the size of
 * the target it is compiled for; the host pass has no target, and host
 * code (launch plans) must use mb_gpu_env_t.warp_size, the device's. */
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define MB_GPU_WARP __AMDGCN_WAVEFRONT_SIZE
#else
#define MB_GPU_WARP 64
#endif
#define mb_gpu_shfl_xor(v, mask) __shfl_xor((v), (mask))
#define MB_GPU_LAUNCH(kernel, grid, block, smem, stream, ...) \
  kernel<<<grid, block, smem, stream>>>(__VA_ARGS__)
#define MB_GPU_DYN_SMEM(type, name) extern __shared__ type name[]
#elif defined(MB_GPU_EMU)
/* Everything above as plain C++ on CPU fibers; MB_GPU_WARP 32 unless the
 * build sets it (64 emulates AMD wavefronts). */
#include "gpu_emu.h"
#else
#include <cuda_runtime.h>
typedef cudaStream_t mb_gpu_stream_t;
typedef cudaError_t mb_gpu_error_t;
#define mb_gpu_success cudaSuccess
#define mb_gpu_get_last_error cudaGetLastError
#define mb_gpu_error_string cudaGetErrorString
#define mb_gpu_memset_async cudaMemsetAsync
#define mb_gpu_memcpy_async(dst, src, bytes, stream) \
  cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)
#define mb_gpu_func_set_max_smem(fn, bytes) \
  cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
#define mb_gpu_occupancy(blocks, fn, threads, smem) \
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, fn, threads, smem)
#define MB_GPU_WARP 32
#define mb_gpu_shfl_xor(v, mask) __shfl_xor_sync(0xffffffffu, (v), (mask))
#define MB_GPU_LAUNCH(kernel, grid, block, smem, stream, ...) \
  kernel<<<grid, block, smem, stream>>>(__VA_ARGS__)
#define MB_GPU_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

#endif
