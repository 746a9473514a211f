/* The emulated GPU itself (gpu_emu.h, gpu_emu.cc), on small kernels of its
 * own: what it runs right (barriers, shuffles, shared memory, atomics,
 * returned threads) and what it refuses with a reason instead of running
 * (divergent barriers, a deadlock, bad shuffles, launches CUDA would
 * refuse) — so that conformance_gpuemu passing means something. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" { /* this cmocka's header does not say it is C */
#include <cmocka.h>
}

#include "gpu_runtime.h"

namespace {

constexpr unsigned W = MB_GPU_WARP;

/* The last error's text (and the error is cleared). */
const char *last_error() {
  const mb_gpu_error_t e = mb_gpu_get_last_error();
  return e == mb_gpu_success ? "" : mb_gpu_error_string(e);
}

void assert_error(const char *needle) {
  const char *got = last_error();
  if (!strstr(got, needle))
    fail_msg("expected an error with \"%s\", got \"%s\"", needle, got);
}

/* ---- kernels ------------------------------------------------------------- */

/* out[b * n + t] = what thread t + 1 of block b wrote before the barrier. */
__global__ void rotate_kernel(unsigned *out) {
  MB_GPU_DYN_SMEM(unsigned, s);
  const unsigned t = threadIdx.x, n = blockDim.x;
  s[t] = blockIdx.x * 1000 + t;
  __syncthreads();
  out[blockIdx.x * n + t] = s[(t + 1) % n];
}

/* out[t] = the sum of the lane numbers of t's warp, by a butterfly. */
__global__ void warp_sum_kernel(float *out) {
  float v = (float)(threadIdx.x % MB_GPU_WARP);
  for (int m = MB_GPU_WARP / 2; m > 0; m >>= 1) v += mb_gpu_shfl_xor(v, m);
  out[threadIdx.x] = v;
}

/* Each block's thread count into sums[blockIdx.x] through a static
 * __shared__ variable; the maximum block index into *max. */
__global__ void static_smem_kernel(unsigned *sums, unsigned *max) {
  __shared__ unsigned count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  atomicAdd(&count, 1u);
  __syncthreads();
  if (threadIdx.x == 0) sums[blockIdx.x] = count;
  atomicMax(max, blockIdx.x);
}

/* Threads past `keep` return first; the barrier waits only for the rest. */
__global__ void early_return_kernel(unsigned keep, unsigned *out) {
  MB_GPU_DYN_SMEM(unsigned, s);
  if (threadIdx.x >= keep) return;
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[keep - 1 - threadIdx.x];
}

/* Reads dynamic shared memory nobody wrote: the poison. */
__global__ void unwritten_smem_kernel(unsigned *out) {
  MB_GPU_DYN_SMEM(unsigned, s);
  out[threadIdx.x] = s[threadIdx.x];
}

__global__ void divergent_barrier_kernel(int *out) {
  if (threadIdx.x % 2) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

/* The low half of warp 0 shuffles, every other thread waits at the
 * barrier: neither can finish. */
__global__ void deadlock_kernel(float *out) {
  float v = 1.0f;
  if (threadIdx.x < MB_GPU_WARP / 2) v = mb_gpu_shfl_xor(v, 1);
  __syncthreads();
  out[threadIdx.x] = v;
}

__global__ void shuffle_then_return_kernel(float *out) {
  if (threadIdx.x % MB_GPU_WARP == 0) return;
  out[threadIdx.x] = mb_gpu_shfl_xor(1.0f, 1);
}

__global__ void mixed_masks_kernel(float *out) {
  out[threadIdx.x] = mb_gpu_shfl_xor(1.0f, threadIdx.x % 2 ? 1 : 2);
}

__global__ void big_smem_kernel(float *out) {
  MB_GPU_DYN_SMEM(float, s);
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

/* out[i] += 1 for every thread i. */
__global__ void bump_kernel(unsigned *out) {
  out[threadIdx.x] += 1;
}

/* ---- tests --------------------------------------------------------------- */

void test_barrier_and_dynamic_smem(void **state) {
  (void)state;
  const unsigned blocks = 3, n = 96;
  unsigned out[blocks * n];
  MB_GPU_LAUNCH(rotate_kernel, blocks, n, n * sizeof(unsigned), NULL, out);
  assert_string_equal(last_error(), "");
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < n; ++t)
      assert_int_equal(out[b * n + t], b * 1000 + (t + 1) % n);
}

void test_warp_shuffles(void **state) {
  (void)state;
  float out[4 * W];
  MB_GPU_LAUNCH(warp_sum_kernel, 1, 4 * W, 0, NULL, out);
  assert_string_equal(last_error(), "");
  for (unsigned t = 0; t < 4 * W; ++t)
    assert_true(out[t] == (float)(W * (W - 1) / 2));
}

void test_static_smem_is_per_block(void **state) {
  (void)state;
  unsigned sums[5] = {0}, max = 0;
  MB_GPU_LAUNCH(static_smem_kernel, 5, 128, 0, NULL, sums, &max);
  assert_string_equal(last_error(), "");
  for (unsigned b = 0; b < 5; ++b) assert_int_equal(sums[b], 128);
  assert_int_equal(max, 4);
}

void test_returned_threads_leave_the_barrier(void **state) {
  (void)state;
  unsigned out[64];
  MB_GPU_LAUNCH(early_return_kernel, 2, 256, 64 * sizeof(unsigned), NULL, 64u,
                out);
  assert_string_equal(last_error(), "");
  for (unsigned t = 0; t < 64; ++t) assert_int_equal(out[t], 63 - t);
}

void test_shared_memory_starts_poisoned(void **state) {
  (void)state;
  unsigned out[32];
  MB_GPU_LAUNCH(unwritten_smem_kernel, 1, 32, sizeof out, NULL, out);
  assert_string_equal(last_error(), "");
  for (unsigned t = 0; t < 32; ++t) assert_int_equal(out[t], 0x7E7E7E7Eu);
}

void test_broken_kernels_are_reported(void **state) {
  (void)state;
  int iout[64];
  float fout[2 * W];
  MB_GPU_LAUNCH(divergent_barrier_kernel, 1, 64, 0, NULL, iout);
  assert_error("threads meet at different __syncthreads");
  MB_GPU_LAUNCH(deadlock_kernel, 1, 2 * W, 0, NULL, fout);
  assert_error("deadlock");
  MB_GPU_LAUNCH(shuffle_then_return_kernel, 1, W, 0, NULL, fout);
  assert_error("returned");
  MB_GPU_LAUNCH(mixed_masks_kernel, 1, W, 0, NULL, fout);
  assert_error("xor masks");
  /* A faulted launch leaves nothing behind: the next one runs. */
  MB_GPU_LAUNCH(warp_sum_kernel, 1, 2 * W, 0, NULL, fout);
  assert_string_equal(last_error(), "");
  assert_true(fout[2 * W - 1] == (float)(W * (W - 1) / 2));
}

void test_launches_cuda_refuses(void **state) {
  (void)state;
  float out[1024];
  MB_GPU_LAUNCH(warp_sum_kernel, 1, 2048, 0, NULL, out);
  assert_error("invalid configuration");
  MB_GPU_LAUNCH(warp_sum_kernel, 0, 32, 0, NULL, out);
  assert_error("invalid configuration");
  MB_GPU_LAUNCH(big_smem_kernel, dim3(1, 2), 32, 0, NULL, out);
  assert_error("1-D");
  /* Over 48 KiB only once the kernel's limit is raised, and never past
   * the device's opt-in limit. */
  const size_t big = 64 * 1024;
  MB_GPU_LAUNCH(big_smem_kernel, 1, 256, big, NULL, out);
  assert_error("limit");
  assert_int_equal(mb_gpu_func_set_max_smem(big_smem_kernel, (int)big),
                   mb_gpu_success);
  MB_GPU_LAUNCH(big_smem_kernel, 1, 256, big, NULL, out);
  assert_string_equal(last_error(), "");
  assert_true(out[0] == 1.0f);
  assert_int_not_equal(
      mb_gpu_func_set_max_smem(big_smem_kernel, (int)MB_EMU_SMEM_OPTIN + 1),
      mb_gpu_success);
  assert_error("the device allows");
}

/* Work behind a blocking kernel waits until the host releases it; its
 * events read the device clock, which only work advances. */
void test_stream_waits_behind_the_blocking_kernel(void **state) {
  (void)state;
  setenv("MB_GPUEMU_KERNEL_NS", "1000", 1);
  mb_gpu_stream_t s;
  assert_int_equal(mb_gpu_stream_create(&s), mb_gpu_success);
  unsetenv("MB_GPUEMU_KERNEL_NS");
  mb_gpu_event_t a, b;
  assert_int_equal(mb_gpu_event_create(&a), mb_gpu_success);
  assert_int_equal(mb_gpu_event_create(&b), mb_gpu_success);
  volatile int32_t flags[2] = {0, 0};
  unsigned out[32] = {0};
  assert_int_equal(mb_emu_block(s, &flags[0], &flags[1], 30.0), mb_gpu_success);
  assert_int_equal(mb_gpu_event_record(a, s), mb_gpu_success);
  for (int i = 0; i < 3; i++) MB_GPU_LAUNCH(bump_kernel, 1, 32, 0, s, out);
  assert_int_equal(mb_gpu_event_record(b, s), mb_gpu_success);
  assert_int_equal(out[0], 0u); /* still queued */
  float ms = 0;
  assert_int_not_equal(mb_gpu_event_elapsed_ms(&ms, a, b), mb_gpu_success);
  assert_error("has not executed");
  flags[0] = 1;
  assert_int_equal(mb_gpu_stream_sync(s), mb_gpu_success);
  assert_int_equal(out[31], 3u);
  assert_int_equal(flags[1], 0);
  assert_int_equal(mb_gpu_event_elapsed_ms(&ms, a, b), mb_gpu_success);
  assert_true(ms == 3e-3f); /* three kernels of exactly 1 us */
  mb_gpu_event_destroy(a);
  mb_gpu_event_destroy(b);
  mb_gpu_stream_destroy(s);
}

/* A host that fills the queue behind a blocking kernel it never releases:
 * the kernel gives up and says so, and the work then runs. */
void test_full_queue_times_the_blocking_kernel_out(void **state) {
  (void)state;
  setenv("MB_GPUEMU_QUEUE_DEPTH", "8", 1);
  mb_gpu_stream_t s;
  assert_int_equal(mb_gpu_stream_create(&s), mb_gpu_success);
  unsetenv("MB_GPUEMU_QUEUE_DEPTH");
  volatile int32_t flags[2] = {0, 0};
  unsigned out[32] = {0};
  assert_int_equal(mb_emu_block(s, &flags[0], &flags[1], 30.0), mb_gpu_success);
  for (int i = 0; i < 7; i++) MB_GPU_LAUNCH(bump_kernel, 1, 32, 0, s, out);
  assert_int_equal(flags[1], 0); /* 8 entries: still fits */
  MB_GPU_LAUNCH(bump_kernel, 1, 32, 0, s, out);
  assert_int_equal(flags[1], 1);
  assert_int_equal(mb_gpu_stream_sync(s), mb_gpu_success);
  assert_int_equal(out[0], 8u);
  mb_gpu_stream_destroy(s);
}

/* Captured work is recorded, not run; its graph replays it, each launch
 * one queue entry; a synchronisation while capturing invalidates the
 * capture, as CUDA's does. */
void test_capture_and_replay(void **state) {
  (void)state;
  mb_gpu_stream_t s;
  assert_int_equal(mb_gpu_stream_create(&s), mb_gpu_success);
  unsigned out[32] = {0};
  assert_int_equal(mb_gpu_capture_begin(s), mb_gpu_success);
  MB_GPU_LAUNCH(bump_kernel, 1, 32, 0, s, out);
  MB_GPU_LAUNCH(bump_kernel, 1, 32, 0, s, out);
  mb_gpu_graph_t g;
  assert_int_equal(mb_gpu_capture_end(s, &g), mb_gpu_success);
  assert_int_equal(out[0], 0u);
  size_t nodes = 0;
  assert_int_equal(mb_gpu_graph_nodes(g, &nodes), mb_gpu_success);
  assert_int_equal(nodes, 2);
  mb_gpu_graph_exec_t x;
  assert_int_equal(mb_gpu_graph_instantiate(&x, g), mb_gpu_success);
  mb_gpu_graph_destroy(g);
  for (int i = 0; i < 3; i++)
    assert_int_equal(mb_gpu_graph_launch(x, s), mb_gpu_success);
  assert_int_equal(mb_gpu_stream_sync(s), mb_gpu_success);
  assert_int_equal(out[5], 6u);
  mb_gpu_graph_exec_destroy(x);

  assert_int_equal(mb_gpu_capture_begin(s), mb_gpu_success);
  assert_int_not_equal(mb_gpu_stream_sync(s), mb_gpu_success);
  assert_error("capturing");
  assert_int_not_equal(mb_gpu_capture_end(s, &g), mb_gpu_success);
  assert_error("invalidated");
  assert_null(g);
  mb_gpu_stream_destroy(s);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_barrier_and_dynamic_smem),
      cmocka_unit_test(test_warp_shuffles),
      cmocka_unit_test(test_static_smem_is_per_block),
      cmocka_unit_test(test_returned_threads_leave_the_barrier),
      cmocka_unit_test(test_shared_memory_starts_poisoned),
      cmocka_unit_test(test_broken_kernels_are_reported),
      cmocka_unit_test(test_launches_cuda_refuses),
      cmocka_unit_test(test_stream_waits_behind_the_blocking_kernel),
      cmocka_unit_test(test_full_queue_times_the_blocking_kernel_out),
      cmocka_unit_test(test_capture_and_replay),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
