/* CPU backend — activation, silu_mul and swiglu_bwd (silu_mul's gradients)
 * in portable C; activation and silu_mul also read fp8 (decoded exactly)
 * and write the op's output dtype.
 *
 * Element-wise and memory-bound: the M*N elements are split into one
 * contiguous slice per pinned thread, and each slice is walked in chunks
 * that stay in L1: converted to f32, computed, rounded once to the output.
 * exp is the vectorisable mb__cpu_expf; gelu_erf calls libm's erfcf (no
 * vector erf without fast-math flags), the one scalar loop. Where the CPU
 * has AVX-512, f32 -> f32 and bf16 -> bf16 run cpu_simd_elt.c's kernels
 * instead (chosen at prepare), these on every other dtype and CPU. */
#include "cpu_eltwise.h"
#include "cpu_eltwise_math.h"
#include "cpu_simd_elt.h"

#include <math.h>
#include <stdlib.h>

/* Below this many elements a parallel region costs more than the work. */
enum { PARALLEL_MIN = 1 << 15, CHUNK = 1024 };

/* y[i] = act(x[i]) for n f32 values; y may be x. */
typedef void (*act_fn)(float *y, const float *x, size_t n, float alpha);

MB_CPU_CLONES static void act_relu(float *y, const float *x, size_t n,
                                   float alpha) {
  (void)alpha;
  for (size_t i = 0; i < n; ++i) y[i] = mb__cpu_selectf(x[i] > 0, x[i], 0.0f);
}

/* 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)): no cancellation for x < 0. */
MB_CPU_CLONES static void act_gelu_tanh(float *y, const float *x, size_t n,
                                        float alpha) {
  const float k = 1.5957691216057308f; /* 2 sqrt(2/pi) */
  (void)alpha;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v / (1.0f + mb__cpu_expf(-k * v * (1.0f + 0.044715f * v * v)));
  }
}

/* 0.5 x (1 + erf(x/sqrt2)) = 0.5 x erfc(-x/sqrt2): no cancellation. */
MB_CPU_CLONES static void act_gelu_erf(float *y, const float *x, size_t n,
                                       float alpha) {
  (void)alpha;
  for (size_t i = 0; i < n; ++i)
    y[i] = 0.5f * x[i] * erfcf(-x[i] * 0.70710678118654752f);
}

MB_CPU_CLONES static void act_silu(float *y, const float *x, size_t n,
                                   float alpha) {
  (void)alpha;
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + mb__cpu_expf(-x[i]));
}

MB_CPU_CLONES static void act_sigmoid(float *y, const float *x, size_t n,
                                      float alpha) {
  (void)alpha;
  for (size_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + mb__cpu_expf(-x[i]));
}

MB_CPU_CLONES static void act_leakyrelu(float *y, const float *x, size_t n,
                                        float alpha) {
  /* max(x, 0) + alpha min(x, 0): the selects pick between x and 0 only. */
  for (size_t i = 0; i < n; ++i)
    y[i] = mb__cpu_selectf(x[i] > 0, x[i], 0.0f) +
           alpha * mb__cpu_selectf(x[i] > 0, 0.0f, x[i]);
}

static inline float relu6(float v) {
  return mb__cpu_selectf(v < 0, 0.0f, mb__cpu_selectf(v > 6, 6.0f, v));
}

MB_CPU_CLONES static void act_relu6(float *y, const float *x, size_t n,
                                    float alpha) {
  (void)alpha;
  for (size_t i = 0; i < n; ++i) y[i] = relu6(x[i]);
}

MB_CPU_CLONES static void act_hardswish(float *y, const float *x, size_t n,
                                        float alpha) {
  (void)alpha;
  for (size_t i = 0; i < n; ++i)
    y[i] = x[i] * relu6(x[i] + 3.0f) * (1.0f / 6.0f);
}

static const act_fn k_act_fns[MB_ACT_COUNT] = {
    [MB_ACT_RELU] = act_relu,         [MB_ACT_GELU_TANH] = act_gelu_tanh,
    [MB_ACT_GELU_ERF] = act_gelu_erf, [MB_ACT_SILU] = act_silu,
    [MB_ACT_SIGMOID] = act_sigmoid,   [MB_ACT_LEAKYRELU] = act_leakyrelu,
    [MB_ACT_RELU6] = act_relu6,       [MB_ACT_HARDSWISH] = act_hardswish,
};

typedef struct act_c {
  size_t n;
  unsigned threads;
  mb_dtype_t in, out; /* fp8 inputs may be written wider (the op's rule) */
  act_fn fn;          /* activation only */
  float alpha;
  mb_cpu_simd_un_fn vact;  /* AVX-512 activation, or NULL */
  mb_cpu_simd_bin_fn vbin; /* AVX-512 silu_mul, or NULL */
  int stream;              /* the vector kernels' non-temporal stores */
} act_c_t;

/* Elements [lo, hi): f32 to f32 straight through the function; other
 * dtypes via an f32 chunk. */
MB_CPU_CLONES static void activation_slice(const act_c_t *k,
                                           const mb_kernel_call_t *call,
                                           size_t lo, size_t hi) {
  float buf[CHUNK];
  void *y = call->out[0];
  const void *x = call->in[0];
  if (k->vact) {
    k->vact(y, x, lo, hi, k->alpha, k->stream);
    return;
  }
  for (size_t i = lo; i < hi; i += CHUNK) {
    const size_t n = hi - i < CHUNK ? hi - i : CHUNK;
    if (k->in == MB_DTYPE_F32 && k->out == MB_DTYPE_F32) {
      k->fn((float *)y + i, (const float *)x + i, n, k->alpha);
      continue;
    }
    mb__cpu_load_f32(buf, x, k->in, i, n);
    k->fn(buf, buf, n, k->alpha);
    mb__cpu_store_f32(y, k->out, i, buf, n);
  }
}

/* z = x / (1 + exp(-x)) * y over [lo, hi). */
MB_CPU_CLONES static void silu_mul_slice(const act_c_t *k,
                                         const mb_kernel_call_t *call,
                                         size_t lo, size_t hi) {
  float bx[CHUNK], by[CHUNK];
  if (k->vbin) {
    k->vbin(call->out[0], call->in[0], call->in[1], lo, hi, k->stream);
    return;
  }
  for (size_t i = lo; i < hi; i += CHUNK) {
    const size_t n = hi - i < CHUNK ? hi - i : CHUNK;
    mb__cpu_load_f32(bx, call->in[0], k->in, i, n);
    mb__cpu_load_f32(by, call->in[1], k->in, i, n);
    for (size_t j = 0; j < n; ++j)
      bx[j] = bx[j] / (1.0f + mb__cpu_expf(-bx[j])) * by[j];
    mb__cpu_store_f32(call->out[0], k->out, i, bx, n);
  }
}

/* swiglu_bwd over [lo, hi), s = sigmoid(a) computed once for both:
 * dA = dY B s (1 + a (1 - s)) (silu's derivative, no cancellation but in
 * 1 - s, which is accurate to u absolute) and dB = dY a s. */
MB_CPU_CLONES static void swiglu_bwd_slice(const act_c_t *k,
                                           const mb_kernel_call_t *call,
                                           size_t lo, size_t hi) {
  float ba[CHUNK], bb[CHUNK], bd[CHUNK];
  for (size_t i = lo; i < hi; i += CHUNK) {
    const size_t n = hi - i < CHUNK ? hi - i : CHUNK;
    mb__cpu_load_f32(ba, call->in[0], k->in, i, n);
    mb__cpu_load_f32(bb, call->in[1], k->in, i, n);
    mb__cpu_load_f32(bd, call->in[2], k->in, i, n);
    for (size_t j = 0; j < n; ++j) {
      const float a = ba[j], dy = bd[j];
      const float s = 1.0f / (1.0f + mb__cpu_expf(-a));
      ba[j] = dy * bb[j] * (s * (1.0f + a * (1.0f - s)));
      bb[j] = dy * (a * s);
    }
    mb__cpu_store_f32(call->out[0], k->out, i, ba, n);
    mb__cpu_store_f32(call->out[1], k->out, i, bb, n);
  }
}

/* fp8_io: the op reads fp8 and may write another dtype (activation,
 * silu_mul); else every operand is one float dtype (swiglu_bwd). */
static mb_status_t prepare(mb_cpu_state_t *st, const mb_kernel_call_t *call,
                           const char *what, act_fn fn, int fp8_io,
                           void **kstate) {
  const mb_op_params_t *p = call->params;
  const mb_status_t status =
      fp8_io ? mb__cpu_fp8_io_dtypes(st, what, p->dtype, p->dtype_out)
             : mb__cpu_float_dtype(st, what, p->dtype);
  if (status != MB_OK) return status;
  act_c_t *k = malloc(sizeof *k);
  if (!k) {
    MB_CPU_ERROR(st, "cpu/c: %s: out of memory", what);
    return MB_ERR_NO_MEMORY;
  }
  *k = (act_c_t){(size_t)p->shape[0] * (size_t)p->shape[1],
                 st->threads,
                 p->dtype,
                 fp8_io ? p->dtype_out : p->dtype,
                 fn,
                 (float)p->act_alpha,
                 NULL,
                 NULL,
                 0};
  *kstate = k;
  return MB_OK;
}

mb_status_t mb__cpu_activation_c_prepare(void *bstate,
                                         const mb_kernel_call_t *call,
                                         void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_activation_t act = call->params->activation;
  if ((unsigned)act >= MB_ACT_COUNT) {
    MB_CPU_ERROR(st, "cpu/c: activation %d is not implemented", (int)act);
    return MB_ERR_UNSUPPORTED;
  }
  const mb_status_t status =
      prepare(st, call, "activation", k_act_fns[act], 1, kstate);
  if (status == MB_OK) {
    act_c_t *k = *kstate;
    k->vact = mb__cpu_simd_activation(act, k->in, k->out);
    k->stream = mb__cpu_stream_stores(
        st->cache_bytes[2],
        st->host.dtype_bytes(k->in, k->n) + st->host.dtype_bytes(k->out, k->n));
  }
  return status;
}

mb_status_t mb__cpu_silu_mul_c_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_status_t status = prepare(st, call, "silu_mul", NULL, 1, kstate);
  if (status == MB_OK) {
    act_c_t *k = *kstate;
    k->vbin = mb__cpu_simd_silu_mul(k->in, k->out);
    k->stream = mb__cpu_stream_stores(st->cache_bytes[2],
                                      2 * st->host.dtype_bytes(k->in, k->n) +
                                          st->host.dtype_bytes(k->out, k->n));
  }
  return status;
}

mb_status_t mb__cpu_swiglu_bwd_c_prepare(void *bstate,
                                         const mb_kernel_call_t *call,
                                         void **kstate) {
  return prepare(bstate, call, "swiglu_bwd", NULL, 0, kstate);
}

typedef void (*slice_fn)(const act_c_t *k, const mb_kernel_call_t *call,
                         size_t lo, size_t hi);

/* One contiguous slice per thread keeps the inner loops simple enough to
 * vectorise and matches the allocator's first-touch split. */
static mb_status_t run_slices(const act_c_t *k, const mb_kernel_call_t *call,
                              slice_fn slice) {
  const size_t n = k->n;
#pragma omp parallel num_threads(k->threads) if (n >= PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    slice(k, call, n * t / nt, n * (t + 1) / nt);
  }
  return MB_OK;
}

mb_status_t mb__cpu_activation_c_run(void *kstate,
                                     const mb_kernel_call_t *call) {
  return run_slices(kstate, call, activation_slice);
}

mb_status_t mb__cpu_silu_mul_c_run(void *kstate, const mb_kernel_call_t *call) {
  return run_slices(kstate, call, silu_mul_slice);
}

mb_status_t mb__cpu_swiglu_bwd_c_run(void *kstate,
                                     const mb_kernel_call_t *call) {
  return run_slices(kstate, call, swiglu_bwd_slice);
}

void mb__cpu_activation_c_release(void *kstate) {
  free(kstate);
}
void mb__cpu_silu_mul_c_release(void *kstate) {
  free(kstate);
}
void mb__cpu_swiglu_bwd_c_release(void *kstate) {
  free(kstate);
}
