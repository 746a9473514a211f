/* Grouped-query attention (params.kv_heads): the op's model — K and V of
 * Hkv heads in both layouts, FLOP unchanged, bytes with K and V at
 * B Hkv Skv D — the errors for a kv_heads that does not divide H or on
 * another op, and planted bugs: user kernels that map query head h to K/V
 * head h % Hkv (torch's repeat instead of repeat_interleave) or to head 0
 * must fail the reference check, their right twin (h / (H / Hkv)) pass,
 * in both layouts, with and without the causal mask. The library's own
 * kernels are checked by the conformance suite (cpu, gpuemu, gpuemu64). */
#include <math.h>
#include <string.h>

#include "test_util.h"

static mb_context_t *g_ctx;

enum map { MAP_RIGHT, MAP_MODULO, MAP_FIRST };
static const enum map k_maps[] = {MAP_RIGHT, MAP_MODULO, MAP_FIRST};
static const char *const k_names[] = {"right", "modulo", "first"};

/* Which K/V head query head h of H reads, under each mapping. */
static int64_t kv_head(enum map m, int64_t h, int64_t heads, int64_t kv) {
  const int64_t by_map[] = {h / (heads / kv), h % kv, 0};
  return by_map[m];
}

/* Element offset of row `pos` of (b, h) in a tensor of `heads` heads and
 * `seq` rows per head, [B,H,S,D] or (bshd) [B,S,H,D]. */
static size_t row_at(int bshd, int64_t b, int64_t h, int64_t heads, int64_t seq,
                     int64_t pos, int64_t d) {
  const int64_t row =
      bshd ? (b * seq + pos) * heads + h : (b * heads + h) * seq + pos;
  return (size_t)(row * d);
}

/* f32 attention, each output row on its own in double. */
static mb_status_t attention_f32(void *user, const mb_kernel_args_t *a) {
  const enum map m = *(const enum map *)user;
  const mb_op_params_t *p = a->params;
  const int64_t nb = p->shape[0], nh = p->shape[1], sq = p->shape[2],
                skv = p->shape[3], d = p->shape[4], kv = p->kv_heads;
  const int bshd = (p->flags & MB_PARAM_BSHD) != 0;
  const int causal = (p->flags & MB_PARAM_CAUSAL) != 0;
  const float *q = mb_tensor_data(a->inputs[0]),
              *k = mb_tensor_data(a->inputs[1]),
              *v = mb_tensor_data(a->inputs[2]);
  float *o = mb_tensor_data(a->outputs[0]);
  double w[64];
  if (skv > 64) return MB_ERR_UNSUPPORTED;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t h = 0; h < nh; h++)
      for (int64_t i = 0; i < sq; i++) {
        const float *qi = q + row_at(bshd, b, h, nh, sq, i, d);
        const int64_t g = kv_head(m, h, nh, kv);
        const int64_t last = causal ? i + skv - sq : skv - 1;
        double mx = -INFINITY, z = 0;
        for (int64_t j = 0; j <= last; j++) {
          const float *kj = k + row_at(bshd, b, g, kv, skv, j, d);
          double s = 0;
          for (int64_t c = 0; c < d; c++) s += (double)qi[c] * kj[c];
          w[j] = s / sqrt((double)d);
          mx = fmax(mx, w[j]);
        }
        for (int64_t j = 0; j <= last; j++) z += w[j] = exp(w[j] - mx);
        float *oi = o + row_at(bshd, b, h, nh, sq, i, d);
        for (int64_t c = 0; c < d; c++) {
          double acc = 0;
          for (int64_t j = 0; j <= last; j++)
            acc += w[j] * v[row_at(bshd, b, g, kv, skv, j, d) + (size_t)c];
          oi[c] = (float)(acc / z);
        }
      }
  return MB_OK;
}

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  for (size_t i = 0; i < sizeof k_maps / sizeof *k_maps; i++) {
    mb_kernel_desc_t desc = MB_KERNEL_DESC_INIT;
    desc.op = "attention";
    desc.name = k_names[i];
    desc.dtype = MB_DTYPE_F32;
    desc.dtype_out = MB_DTYPE_F32;
    desc.run = attention_f32;
    desc.user = (void *)&k_maps[i];
    assert_int_equal(mb_kernel_register(g_ctx, &desc), MB_OK);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static mb_op_params_t attention(int64_t b, int64_t h, int64_t sq, int64_t skv,
                                int64_t d, int64_t kv, uint32_t flags) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  const int64_t shape[] = {b, h, sq, skv, d};
  p.ndim = 5;
  memcpy(p.shape, shape, sizeof shape);
  p.dtype = MB_DTYPE_F32;
  p.kv_heads = kv;
  p.flags = flags;
  return p;
}

/* K and V are [B, Hkv, Skv, D] ([B, Skv, Hkv, D] with bshd), Q and O keep
 * H; the FLOP are those of multi-head attention, the bytes count K and V
 * at Hkv heads; resolving fills an unset kv_heads with H. */
static void test_model(void **state) {
  (void)state;
  const mb_op_t *op = mb_op_find("attention");
  for (uint32_t bshd = 0; bshd < 2; bshd++) {
    mb_op_params_t p = attention(2, 8, 5, 7, 16, 2, bshd ? MB_PARAM_BSHD : 0u);
    assert_int_equal(mb_op_resolve(op, &p), MB_OK);
    assert_int_equal(p.kv_heads, 2);
    const int64_t want[4][4] = {
        {2, 8, 5, 16}, {2, 2, 7, 16}, {2, 2, 7, 16}, {2, 8, 5, 16}};
    for (uint32_t role = 0; role < 4; role++) {
      mb_dtype_t dt;
      uint32_t nd;
      int64_t shape[MB_MAX_DIMS];
      assert_int_equal(mb_op_operand(op, &p, role, &dt, &nd, shape), MB_OK);
      assert_int_equal(nd, 4);
      const int64_t heads = want[role][1], seq = want[role][2];
      assert_int_equal(shape[0], want[role][0]);
      assert_int_equal(shape[1], bshd ? seq : heads);
      assert_int_equal(shape[2], bshd ? heads : seq);
      assert_int_equal(shape[3], want[role][3]);
    }
    mb_op_params_t mha = attention(2, 8, 5, 7, 16, 0, p.flags);
    assert_int_equal(mb_op_resolve(op, &mha), MB_OK);
    assert_int_equal(mha.kv_heads, 8);
    assert_true(mb_op_flop(op, &p) == mb_op_flop(op, &mha));
    assert_true(mb_op_flop(op, &p) == 4.0 * 2 * 8 * 16 * 5 * 7);
    /* f32: Q and O 2*8*5*16 each, K and V 2*2*7*16 each */
    assert_true(mb_op_bytes(op, &p) ==
                4.0 * (2 * 2 * 8 * 5 * 16 + 2 * 2 * 2 * 7 * 16));
  }
}

/* A kv_heads that does not divide H is an error naming both; so is one
 * given to an op without K/V heads. */
static void test_errors(void **state) {
  (void)state;
  const mb_op_t *op = mb_op_find("attention");
  const int64_t bad[] = {4, 12, 5, -1};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    mb_op_params_t p = attention(1, 6, 4, 4, 8, bad[i], 0);
    assert_int_equal(mb_op_resolve(op, &p), MB_ERR_INVALID_ARG);
    char want[32];
    snprintf(want, sizeof want, "kv_heads = %lld", (long long)bad[i]);
    assert_contains(mb_error_last(), want);
    assert_contains(mb_error_last(), "H = 6");
  }
  mb_op_params_t g = test_shape3(MB_DTYPE_F32, 8, 8, 8);
  g.kv_heads = 2;
  assert_int_equal(mb_op_resolve(mb_op_find("gemm"), &g), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "kv_heads");
}

/* The reference reads K/V head h / (H / Hkv): a kernel that maps heads
 * any other way fails, in both layouts, masked or not, multi-query too
 * (where only the right mapping and "first" agree). */
static void test_planted_mappings(void **state) {
  (void)state;
  const uint32_t flags[] = {0, MB_PARAM_CAUSAL, MB_PARAM_BSHD,
                            MB_PARAM_BSHD | MB_PARAM_CAUSAL};
  for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
    mb_op_params_t p = attention(2, 4, 9, 11, 8, 2, flags[f]);
    assert_true(test_impl_passes(g_ctx, "attention", &p, "right"));
    assert_false(test_impl_passes(g_ctx, "attention", &p, "modulo"));
    assert_false(test_impl_passes(g_ctx, "attention", &p, "first"));
    mb_op_params_t mqa = attention(1, 3, 6, 6, 8, 1, flags[f]);
    assert_true(test_impl_passes(g_ctx, "attention", &mqa, "right"));
    assert_true(test_impl_passes(g_ctx, "attention", &mqa, "first"));
  }
}

/* One sample on the CPU backend's own kernel ("c": the registered ones
 * would be chosen otherwise). */
static mb_result_t *run_c(const mb_op_params_t *p) {
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "attention";
  s.params = p;
  s.backend = "cpu";
  s.impl = "c";
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 1;
  s.warmup_s = 0;
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, &s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  return r;
}

/* The library's CPU kernel on a grouped-query problem, with its variant
 * word; a multi-head one keeps its old identity (no kv_heads anywhere). */
static void test_cpu_kernel_and_identity(void **state) {
  (void)state;
  mb_op_params_t p = attention(2, 6, 70, 75, 16, 3, MB_PARAM_CAUSAL);
  mb_result_t *r = run_c(&p);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_true(test_result_passes(r, info.impl));
  assert_int_equal(info.params.kv_heads, 3);
  assert_contains(mb_result_json(r), "\"kv_heads\":3");
  assert_contains(mb_result_json(r), "kv_heads:3");
  mb_result_destroy(r);
  mb_op_params_t mha = attention(1, 2, 8, 8, 8, 2, 0);
  r = run_c(&mha);
  assert_int_equal(mb_result_info(r, &info), MB_OK);
  assert_int_equal(info.params.kv_heads, 2);
  assert_null(strstr(mb_result_json(r), "kv_heads"));
  mb_result_destroy(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_planted_mappings),
      cmocka_unit_test(test_cpu_kernel_and_identity),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
