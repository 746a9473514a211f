/* The thin shim that lets one source build for CUDA (nvcc), HIP (hipcc)
 * and the emulated GPU of the tests (g++): the runtime calls, warp
 * primitives, launches and dynamic shared memory the shared kernels and
 * the backends' host layer (backends/gpu/host/) use, under neutral names.
 * __global__, __shared__, __syncthreads, atomics and threadIdx are the same
 * in all three.
 *
 * HIP is selected by MB_GPU_HIP (the HIP backend's build defines it), the
 * emulation by MB_GPU_EMU (gpu_emu.h for kernels, gpu_emu_rt.h for host
 * code; tests/gpu_emu/ builds it). The host half below is plain C, so the
 * host layer's C files include this header too.
 *
 * Host calls, each the runtime's call of the same meaning and returning
 * its error code (cudaX / hipX):
 *   mb_gpu_device_count(&n), mb_gpu_set_device(i)
 *   mb_gpu_malloc(&p, bytes), mb_gpu_free(p), mb_gpu_mem_info(&free, &total)
 *   mb_gpu_host_alloc_mapped(&p, bytes) (page-locked, mapped into the
 *       device), mb_gpu_host_device_ptr(&dev, host), mb_gpu_host_free(p)
 *   mb_gpu_stream_create(&s) (non-blocking), mb_gpu_stream_destroy(s),
 *       mb_gpu_stream_sync(s)
 *   mb_gpu_memset_async(p, v, n, s), mb_gpu_memcpy_async(dst, src, n, s)
 *       (device to device), mb_gpu_copy_async(dst, src, n, s) (any
 *       direction: unified addressing tells host from device)
 *   mb_gpu_can_access_peer(&can, dev, peer), mb_gpu_enable_peer_access(peer)
 *       and mb_gpu_disable_peer_access(peer) (from the current device;
 *       mb_gpu_error_peer_enabled and mb_gpu_error_peer_not_enabled are
 *       their "already so" codes), mb_gpu_memcpy_peer_async(dst, dst_dev,
 *       src, src_dev, n, s) (device ordinals)
 *   mb_gpu_event_create(&e), _destroy(e), _record(e, s),
 *       mb_gpu_event_elapsed_ms(&ms, start, stop)
 *   mb_gpu_capture_begin(s) (thread-local mode: another thread's calls do
 *       not break it), mb_gpu_capture_end(s, &graph),
 *       mb_gpu_graph_nodes(graph, &count), mb_gpu_graph_instantiate(&exec,
 *       graph), mb_gpu_graph_destroy(graph), mb_gpu_graph_upload(exec, s),
 *       mb_gpu_graph_launch(exec, s), mb_gpu_graph_exec_destroy(exec)
 *   mb_gpu_get_last_error(), mb_gpu_error_string(e), mb_gpu_error_name(e);
 *       mb_gpu_error_oom is the out-of-memory code.
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
/* hip_runtime.h is C++ (hipcc); the host layer's C files take the API. */
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <hip/hip_runtime_api.h>
#endif
typedef hipStream_t mb_gpu_stream_t;
typedef hipError_t mb_gpu_error_t;
typedef hipEvent_t mb_gpu_event_t;
typedef hipGraph_t mb_gpu_graph_t;
typedef hipGraphExec_t mb_gpu_graph_exec_t;
#define mb_gpu_success hipSuccess
#define mb_gpu_error_oom hipErrorOutOfMemory
#define mb_gpu_get_last_error hipGetLastError
#define mb_gpu_error_string hipGetErrorString
#define mb_gpu_error_name hipGetErrorName
#define mb_gpu_device_count hipGetDeviceCount
#define mb_gpu_set_device hipSetDevice
#define mb_gpu_malloc hipMalloc
#define mb_gpu_free hipFree
#define mb_gpu_mem_info hipMemGetInfo
#define mb_gpu_host_alloc_mapped(p, bytes) \
  hipHostMalloc(p, bytes, hipHostMallocMapped)
#define mb_gpu_host_device_ptr(dev, host) hipHostGetDevicePointer(dev, host, 0)
#define mb_gpu_host_free hipHostFree
#define mb_gpu_stream_create(s) \
  hipStreamCreateWithFlags(s, hipStreamNonBlocking)
#define mb_gpu_stream_destroy hipStreamDestroy
#define mb_gpu_stream_sync hipStreamSynchronize
#define mb_gpu_memset_async hipMemsetAsync
#define mb_gpu_memcpy_async(dst, src, bytes, stream) \
  hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, stream)
#define mb_gpu_copy_async(dst, src, bytes, stream) \
  hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, stream)
#define mb_gpu_can_access_peer hipDeviceCanAccessPeer
#define mb_gpu_enable_peer_access(peer) hipDeviceEnablePeerAccess(peer, 0)
#define mb_gpu_disable_peer_access hipDeviceDisablePeerAccess
#define mb_gpu_error_peer_enabled hipErrorPeerAccessAlreadyEnabled
#define mb_gpu_error_peer_not_enabled hipErrorPeerAccessNotEnabled
#define mb_gpu_memcpy_peer_async hipMemcpyPeerAsync
#define mb_gpu_event_create hipEventCreate
#define mb_gpu_event_destroy hipEventDestroy
#define mb_gpu_event_record hipEventRecord
#define mb_gpu_event_elapsed_ms hipEventElapsedTime
#define mb_gpu_capture_begin(s) \
  hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal)
#define mb_gpu_capture_end hipStreamEndCapture
#define mb_gpu_graph_nodes(g, n) hipGraphGetNodes(g, NULL, n)
#define mb_gpu_graph_instantiate(x, g) hipGraphInstantiate(x, g, NULL, NULL, 0)
#define mb_gpu_graph_destroy hipGraphDestroy
/* hipGraphUpload came with ROCm 6; before it, one untimed launch is what
 * uploads a graph (it runs the work once more, outside any sample). */
#if defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR >= 6
#define mb_gpu_graph_upload hipGraphUpload
#else
#define mb_gpu_graph_upload hipGraphLaunch
#endif
#define mb_gpu_graph_launch hipGraphLaunch
#define mb_gpu_graph_exec_destroy hipGraphExecDestroy
#define mb_gpu_func_set_max_smem(fn, bytes) \
  hipFuncSetAttribute((const void *)(fn),   \
                      hipFuncAttributeMaxDynamicSharedMemorySize, bytes)
#define mb_gpu_occupancy(blocks, fn, threads, smem)                        \
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
/* Host calls as C (gpu_emu_rt.h); kernels, launches and warp primitives as
 * plain C++ on CPU fibers (gpu_emu.h), MB_GPU_WARP 32 unless the build sets
 * it (64 emulates AMD wavefronts). */
#include "gpu_emu_rt.h"
#define mb_gpu_error_oom MB_EMU_ERR_MEMORY
#define mb_gpu_get_last_error mb_emu_get_last_error
#define mb_gpu_error_string mb_emu_error_string
#define mb_gpu_error_name mb_emu_error_name
#define mb_gpu_device_count mb_emu_device_count
#define mb_gpu_set_device mb_emu_set_device
#define mb_gpu_malloc mb_emu_malloc
#define mb_gpu_free mb_emu_free
#define mb_gpu_mem_info mb_emu_mem_info
#define mb_gpu_host_alloc_mapped mb_emu_host_alloc_mapped
#define mb_gpu_host_device_ptr mb_emu_host_device_ptr
#define mb_gpu_host_free mb_emu_host_free
#define mb_gpu_stream_create mb_emu_stream_create
#define mb_gpu_stream_destroy mb_emu_stream_destroy
#define mb_gpu_stream_sync mb_emu_stream_sync
#define mb_gpu_memset_async mb_emu_memset_async
#define mb_gpu_memcpy_async mb_emu_memcpy_async
#define mb_gpu_copy_async mb_emu_memcpy_async
#define mb_gpu_can_access_peer mb_emu_can_access_peer
#define mb_gpu_enable_peer_access mb_emu_enable_peer_access
#define mb_gpu_disable_peer_access mb_emu_disable_peer_access
#define mb_gpu_error_peer_enabled MB_EMU_ERR_PEER_ENABLED
#define mb_gpu_error_peer_not_enabled MB_EMU_ERR_PEER_NOT_ENABLED
#define mb_gpu_memcpy_peer_async mb_emu_memcpy_peer_async
#define mb_gpu_event_create mb_emu_event_create
#define mb_gpu_event_destroy mb_emu_event_destroy
#define mb_gpu_event_record mb_emu_event_record
#define mb_gpu_event_elapsed_ms mb_emu_event_elapsed_ms
#define mb_gpu_capture_begin mb_emu_capture_begin
#define mb_gpu_capture_end mb_emu_capture_end
#define mb_gpu_graph_nodes mb_emu_graph_nodes
#define mb_gpu_graph_instantiate mb_emu_graph_instantiate
#define mb_gpu_graph_destroy mb_emu_graph_destroy
#define mb_gpu_graph_upload mb_emu_graph_upload
#define mb_gpu_graph_launch mb_emu_graph_launch
#define mb_gpu_graph_exec_destroy mb_emu_graph_exec_destroy
#if defined(__cplusplus)
#include "gpu_emu.h"
#endif
#else
#include <cuda_runtime.h>
typedef cudaStream_t mb_gpu_stream_t;
typedef cudaError_t mb_gpu_error_t;
typedef cudaEvent_t mb_gpu_event_t;
typedef cudaGraph_t mb_gpu_graph_t;
typedef cudaGraphExec_t mb_gpu_graph_exec_t;
#define mb_gpu_success cudaSuccess
#define mb_gpu_error_oom cudaErrorMemoryAllocation
#define mb_gpu_get_last_error cudaGetLastError
#define mb_gpu_error_string cudaGetErrorString
#define mb_gpu_error_name cudaGetErrorName
#define mb_gpu_device_count cudaGetDeviceCount
#define mb_gpu_set_device cudaSetDevice
#define mb_gpu_malloc cudaMalloc
#define mb_gpu_free cudaFree
#define mb_gpu_mem_info cudaMemGetInfo
#define mb_gpu_host_alloc_mapped(p, bytes) \
  cudaHostAlloc(p, bytes, cudaHostAllocMapped)
#define mb_gpu_host_device_ptr(dev, host) cudaHostGetDevicePointer(dev, host, 0)
#define mb_gpu_host_free cudaFreeHost
#define mb_gpu_stream_create(s) \
  cudaStreamCreateWithFlags(s, cudaStreamNonBlocking)
#define mb_gpu_stream_destroy cudaStreamDestroy
#define mb_gpu_stream_sync cudaStreamSynchronize
#define mb_gpu_memset_async cudaMemsetAsync
#define mb_gpu_memcpy_async(dst, src, bytes, stream) \
  cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)
#define mb_gpu_copy_async(dst, src, bytes, stream) \
  cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream)
#define mb_gpu_can_access_peer cudaDeviceCanAccessPeer
#define mb_gpu_enable_peer_access(peer) cudaDeviceEnablePeerAccess(peer, 0)
#define mb_gpu_disable_peer_access cudaDeviceDisablePeerAccess
#define mb_gpu_error_peer_enabled cudaErrorPeerAccessAlreadyEnabled
#define mb_gpu_error_peer_not_enabled cudaErrorPeerAccessNotEnabled
#define mb_gpu_memcpy_peer_async cudaMemcpyPeerAsync
#define mb_gpu_event_create cudaEventCreate
#define mb_gpu_event_destroy cudaEventDestroy
#define mb_gpu_event_record cudaEventRecord
#define mb_gpu_event_elapsed_ms cudaEventElapsedTime
#define mb_gpu_capture_begin(s) \
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)
#define mb_gpu_capture_end cudaStreamEndCapture
#define mb_gpu_graph_nodes(g, n) cudaGraphGetNodes(g, NULL, n)
#define mb_gpu_graph_instantiate(x, g) cudaGraphInstantiate(x, g, 0)
#define mb_gpu_graph_destroy cudaGraphDestroy
#define mb_gpu_graph_upload cudaGraphUpload
#define mb_gpu_graph_launch cudaGraphLaunch
#define mb_gpu_graph_exec_destroy cudaGraphExecDestroy
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
