/* The thin shim that lets one kernel source build for CUDA (nvcc) and HIP
 * (hipcc): the few runtime calls and warp primitives the shared kernels use,
 * under neutral names. Launch syntax (<<<grid, block, smem, stream>>>),
 * __global__, __shared__, atomics and threadIdx are the same in both.
 *
 * HIP is selected by MB_GPU_HIP (the HIP backend's build defines it). */
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
/* HIP 5.2 has no *_sync shuffles; a wavefront is 64 lanes on CDNA. */
#define MB_GPU_WARP 64
#define mb_gpu_shfl_xor(v, mask) __shfl_xor((v), (mask))
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
#define MB_GPU_WARP 32
#define mb_gpu_shfl_xor(v, mask) __shfl_xor_sync(0xffffffffu, (v), (mask))
#endif

#endif
