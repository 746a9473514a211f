/* The emulated GPU runtime (MB_GPU_EMU): what gpu_runtime.h gives the
 * shared kernels, as plain C++ that runs them on the CPU, so the tests can
 * check every kernel against the core's references without a GPU
 * (tests/gpu_emu/, docs/gpu.md). Test scaffolding: no backend that measures
 * anything is built with it. The scheduler is tests/gpu_emu/gpu_emu.cc.
 *
 * A launch runs on the calling thread, its blocks one after another: at
 * once on an idle stream, later when it waited in a stream's queue or was
 * captured into a graph (gpu_emu_rt.h); the threads of a block are fibers
 * (stacks of their own), switched only where a GPU thread would wait:
 * __syncthreads and warp shuffles. So:
 *  - a barrier is a real one: every thread of the block that has not
 *    returned must reach the same __syncthreads (file and line), or the
 *    launch fails saying where the threads wait; a returned thread no longer
 *    counts (what GPUs do in practice with an early return);
 *  - a shuffle (full mask) needs every lane of its warp, and a lane may not
 *    return while the others of its warp wait in one;
 *  - atomics are plain read-modify-writes: no two fibers run at once;
 *  - static __shared__ variables are function statics, and that is per
 *    block because one block at a time runs in the whole process (launches
 *    hold a lock); they keep what the previous block left (g++ 12 drops a
 *    section attribute on a template's statics, so they cannot be found to
 *    be poisoned). The dynamic shared memory is a heap buffer of exactly
 *    the launch's size (AddressSanitizer sees an overrun), filled with a
 *    poison pattern before each block: a kernel that reads what it did not
 *    write in this block sees garbage;
 *  - a launch the CUDA runtime would refuse (no threads, more than 1024 a
 *    block, more dynamic shared memory than 48 KiB without raising the
 *    kernel's limit, or than the device's opt-in limit) is not run, and
 *    mb_gpu_get_last_error() says why.
 * Not emulated: __launch_bounds__ (ignored), 2-D and 3-D launches
 * (refused), concurrency between blocks (so no race across blocks can show)
 * and CUDA's math library (the host's libm computes expf, erfcf, ...). */
#ifndef MB_GPU_EMU_H
#define MB_GPU_EMU_H

#ifndef __cplusplus
#error "gpu_emu.h: the shared kernels are C++ (compile them with -x c++)"
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "gpu_emu_rt.h"

#ifndef MB_GPU_WARP
#define MB_GPU_WARP 32
#endif
#if MB_GPU_WARP != 32 && MB_GPU_WARP != 64
#error "MB_GPU_WARP: 32 (NVIDIA) or 64 (AMD wavefronts)"
#endif

/* The opt-in dynamic shared memory of the emulated device (an sm_86-class
 * 99 KiB: less than an H100's 227 KiB, so the kernels' fallbacks for
 * smaller GPUs run too). */
#define MB_EMU_SMEM_OPTIN (99u * 1024u)

/* ---- CUDA's keywords and built-in variables ------------------------------ */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
      : x(x_), y(y_), z(z_) {}
};
/* Set by the scheduler before it resumes a fiber. */
extern dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

/* ---- synchronisation ----------------------------------------------------- */

void mb_emu_syncthreads(const char *file, int line);
#define __syncthreads() mb_emu_syncthreads(__FILE__, __LINE__)

/* Lane (threadIdx.x % MB_GPU_WARP) ^ mask's bits (8 bytes at most). */
uint64_t mb_emu_shfl_xor_bits(uint64_t bits, int mask);

template <class T>
inline T mb_emu_shfl_xor(T v, int mask) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "shuffles move 4- or 8-byte values");
  uint64_t b = 0;
  memcpy(&b, &v, sizeof v);
  b = mb_emu_shfl_xor_bits(b, mask);
  memcpy(&v, &b, sizeof v);
  return v;
}
#define mb_gpu_shfl_xor(v, mask) mb_emu_shfl_xor((v), (mask))

/* ---- atomics: no other fiber runs in between ----------------------------- */

template <class T>
inline T atomicMax(T *p, T v) {
  const T old = *p;
  if (v > old) *p = v;
  return old;
}
template <class T>
inline T atomicMin(T *p, T v) {
  const T old = *p;
  if (v < old) *p = v;
  return old;
}
template <class T>
inline T atomicAdd(T *p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
template <class T>
inline T atomicExch(T *p, T v) {
  const T old = *p;
  *p = v;
  return old;
}
template <class T>
inline T atomicCAS(T *p, T cmp, T v) {
  const T old = *p;
  if (old == cmp) *p = v;
  return old;
}

/* ---- intrinsics ---------------------------------------------------------- */

/* The IEEE quotient: what host SSE/NEON division gives (no fast-math). */
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((uint64_t)a * b) >> 32);
}

/* ---- the runtime ---------------------------------------------------------
 * Streams, events, graphs, memory and errors: gpu_emu_rt.h (host code
 * includes it alone, as C). */

/* cudaFuncSetAttribute(..MaxDynamicSharedMemorySize..) for kernel `fn`. */
mb_gpu_error_t mb_emu_set_max_smem(void (*fn)(void), int bytes);

template <class F>
inline mb_gpu_error_t mb_gpu_func_set_max_smem(F fn, int bytes) {
  return mb_emu_set_max_smem(reinterpret_cast<void (*)(void)>(fn), bytes);
}

/* cudaOccupancyMaxActiveBlocksPerMultiprocessor on the emulated device:
 * MB_EMU_SM_THREADS threads, MB_EMU_SM_BLOCKS blocks and MB_EMU_SM_SMEM
 * bytes of shared memory a multiprocessor (1 KiB of it reserved per block,
 * as CUDA does); registers are not modelled. A launch the device would
 * refuse (no threads, over 1024, more dynamic shared memory than the
 * kernel's limit) is an error, as on CUDA. */
#define MB_EMU_SM_THREADS 2048u
#define MB_EMU_SM_BLOCKS 32u
#define MB_EMU_SM_SMEM (100u * 1024u)
mb_gpu_error_t mb_emu_occupancy(int *blocks, void (*fn)(void), int threads,
                                size_t smem);
template <class F>
inline mb_gpu_error_t mb_gpu_occupancy(int *blocks, F fn, int threads,
                                       size_t smem) {
  return mb_emu_occupancy(blocks, reinterpret_cast<void (*)(void)>(fn), threads,
                          smem);
}

/* ---- launches --------------------------------------------------------------
 * mb_emu_run runs a launch now, on the calling thread: the scheduler calls
 * body(ctx) once per GPU thread, with threadIdx, blockIdx and the block's
 * shared memory set; `kernel` identifies the kernel (its shared memory
 * limit) and `name` names it in errors. */
void mb_emu_run(const char *name, void (*kernel)(void), dim3 grid, dim3 block,
                size_t smem, void (*body)(void *), void *ctx);
/* The current block's dynamic shared memory. */
extern void *mb_emu_dyn_smem;

/* A launch on a stream (gpu_emu_rt.h: it may run now, wait in the stream's
 * queue, or be captured into a graph and run many times): the launch's
 * configuration is checked now, as CUDA checks it at the launch; `closure`
 * is the kernel with its arguments, run(closure) runs it once (through
 * mb_emu_run) and drop(closure) frees it when no queue or graph holds it. */
void mb_emu_submit(const char *name, void (*kernel)(void), dim3 grid,
                   dim3 block, size_t smem, mb_gpu_stream_t stream,
                   void (*run)(const char *, void (*)(void), dim3, dim3, size_t,
                               void *),
                   void *closure, void (*drop)(void *));

/* The arguments are converted to the kernel's parameters once, at the
 * launch, as CUDA does, and kept with the launch; every GPU thread gets its
 * own copy of them. */
template <class... P>
struct mb_emu_closure {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> params;

  static void body(void *self) {
    auto *c = static_cast<const mb_emu_closure *>(self);
    std::apply(c->kernel, c->params);
  }
  static void run(const char *name, void (*kernel)(void), dim3 grid, dim3 block,
                  size_t smem, void *self) {
    mb_emu_run(name, kernel, grid, block, smem, body, self);
  }
  static void drop(void *self) { delete static_cast<mb_emu_closure *>(self); }
};

template <class... P, class... A>
void mb_emu_launch(const char *name, void (*kernel)(P...), dim3 grid,
                   dim3 block, size_t smem, mb_gpu_stream_t stream,
                   A &&...args) {
  static_assert(sizeof...(P) == sizeof...(A), "a kernel's argument count");
  using C = mb_emu_closure<P...>;
  C *c =
      new C{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)};
  mb_emu_submit(name, reinterpret_cast<void (*)(void)>(kernel), grid, block,
                smem, stream, &C::run, c, &C::drop);
}

#define MB_GPU_LAUNCH(kernel, grid, block, smem, stream, ...) \
  mb_emu_launch(#kernel, kernel, grid, block, smem, stream, __VA_ARGS__)
#define MB_GPU_DYN_SMEM(type, name) \
  type *const name = static_cast<type *>(mb_emu_dyn_smem)

#endif
