/* The MXFP8 scale tiling of the shared GPU kernels (gpu_mx.h), run on the
 * emulated GPU: cuBLASLt's VEC32_UE8M0 layout, checked against torchao's
 * to_blocked (torchao/prototype/mx_formats/utils.py) transcribed step by
 * step — pad to 128 x 4, view (rb, 128, cb, 4), permute to (rb, cb, 128,
 * 4), reshape (-1, 4, 32, 4), transpose(1, 2), flatten — so the two
 * formulations check each other. The CUDA module feeds cuBLASLt with it
 * on compute capability 10.0; no GPU here can run that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" { /* this cmocka's header does not say it is C */
#include <cmocka.h>
}

#include "gpu_mx.h"
#include "gpu_runtime.h"

/* gpu_common.cu's prepare asks the backend for a device; no backend here. */
extern "C" mb_status_t mb__gpu_device_env(void *bstate, uint32_t dev,
                                          const mb_gpu_env_t **env) {
  (void)bstate, (void)dev, (void)env;
  return MB_ERR_NOT_FOUND;
}

namespace {

char g_error[512];

void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
}

/* torchao's to_blocked on a rows x cols byte matrix. */
void to_blocked(const uint8_t *m, int64_t rows, int64_t cols, uint8_t *out) {
  const int64_t rb = (rows + 127) / 128, cb = (cols + 3) / 4;
  int64_t o = 0;
  for (int64_t r = 0; r < rb; r++)     /* permute(0, 2, 1, 3): (rb, cb, ...) */
    for (int64_t c = 0; c < cb; c++)   /* one 128 x 4 block, as (4, 32, 4) */
      for (int64_t j = 0; j < 32; j++) /* transpose(1, 2): (32, 4, 4) */
        for (int64_t i = 0; i < 4; i++)
          for (int64_t k = 0; k < 4; k++) {
            const int64_t row = r * 128 + i * 32 + j, col = c * 4 + k;
            out[o++] = row < rows && col < cols ? m[row * cols + col] : 0;
          }
}

void check(int64_t outer, int64_t kblocks, int outer_major) {
  mb_host_api_t host;
  memset(&host, 0, sizeof host);
  host.set_error = set_error;
  mb_gpu_env_t env;
  memset(&env, 0, sizeof env);
  env.host = &host;
  env.backend = "gpuemu";
  env.sm_count = 4;
  env.warp_size = MB_GPU_WARP;
  mb_gpu_stream_t s;
  assert_int_equal(mb_gpu_stream_create(&s), mb_gpu_success);
  env.stream = (void *)s;
  const size_t n = (size_t)(outer * kblocks);
  const size_t tiled = mb__gpu_mx_tiled_bytes(outer, kblocks);
  assert_int_equal(tiled, (size_t)((outer + 127) / 128 * 128) *
                              (size_t)((kblocks + 3) / 4 * 4));
  uint8_t *m = (uint8_t *)malloc(n), *want = (uint8_t *)malloc(tiled);
  uint8_t *src = NULL, *dst = NULL;
  assert_int_equal(mb_gpu_malloc((void **)&src, n), mb_gpu_success);
  assert_int_equal(mb_gpu_malloc((void **)&dst, tiled), mb_gpu_success);
  for (size_t i = 0; i < n; i++) m[i] = (uint8_t)(i * 37 + 11);
  /* The grid as the op stores it: outer-major (A's M x K/32) or K-major
   * (B's K/32 x N). */
  for (int64_t o = 0; o < outer; o++)
    for (int64_t kb = 0; kb < kblocks; kb++)
      src[outer_major ? o * kblocks + kb : kb * outer + o] =
          m[o * kblocks + kb];
  memset(dst, 0xA5, tiled); /* padding must be written, not left */
  to_blocked(m, outer, kblocks, want);
  const mb_status_t st =
      mb__gpu_mx_tile_scales(&env, src, outer_major ? kblocks : 1,
                             outer_major ? 1 : outer, outer, kblocks, dst);
  if (st != MB_OK) fail_msg("%s", g_error);
  assert_int_equal(mb_gpu_stream_sync(s), mb_gpu_success);
  for (size_t i = 0; i < tiled; i++)
    if (dst[i] != want[i])
      fail_msg("%lld x %lld: byte %zu = %u, to_blocked %u", (long long)outer,
               (long long)kblocks, i, dst[i], want[i]);
  mb_gpu_free(src);
  mb_gpu_free(dst);
  mb_gpu_stream_destroy(s);
  free(m);
  free(want);
}

void test_tiles(void **state) {
  (void)state;
  check(128, 4, 1); /* one whole tile */
  check(256, 8, 0); /* 2 x 2 tiles, K-major source */
  check(200, 5, 1); /* padded both ways */
  check(33, 3, 0);  /* less than a tile */
  check(1, 1, 1);   /* one scale */
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_tiles)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
