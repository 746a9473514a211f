/* CPU backend — the element-wise family's kernels (activation, silu_mul,
 * layernorm, rmsnorm, softmax, attention, copy, add on f16 and fp8, and the
 * backward ops rmsnorm_bwd and swiglu_bwd):
 * prepare / run / release, listed in cpu_kernels_eltwise.def. */
#ifndef MB_CPU_ELTWISE_H
#define MB_CPU_ELTWISE_H

#include "cpu_internal.h"

/* The portable float kernels (activation, silu_mul, layernorm, rmsnorm,
 * softmax, attention) compute in f32 and read and write their data through
 * mb__cpu_load_f32 / mb__cpu_store_f32, which take f32, bf16 and f16: MB_OK
 * for those, else MB_ERR_UNSUPPORTED with a message naming `op`. */
static inline mb_status_t mb__cpu_float_dtype(mb_cpu_state_t *st,
                                              const char *op,
                                              mb_dtype_t dtype) {
  if (dtype == MB_DTYPE_F32 || dtype == MB_DTYPE_BF16 || dtype == MB_DTYPE_F16)
    return MB_OK;
  MB_CPU_ERROR(st, "cpu/c: %s on %s is not implemented", op,
               st->host.dtype_name(dtype));
  return MB_ERR_UNSUPPORTED;
}

/* The ops that also read fp8 (activation, silu_mul, add; the op chose the
 * pair by its output rule): `in` and `out` each one mb__cpu_load_f32 /
 * mb__cpu_store_f32 take — f32, bf16, f16, f8e4m3, f8e5m2. MB_OK, else
 * MB_ERR_UNSUPPORTED with a message naming `op`. */
static inline mb_status_t mb__cpu_fp8_io_dtypes(mb_cpu_state_t *st,
                                                const char *op, mb_dtype_t in,
                                                mb_dtype_t out) {
  static const mb_dtype_t k_io[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16,
                                    MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2};
  int in_ok = 0, out_ok = 0;
  for (size_t i = 0; i < sizeof k_io / sizeof k_io[0]; ++i) {
    in_ok |= k_io[i] == in;
    out_ok |= k_io[i] == out;
  }
  if (in_ok && out_ok) return MB_OK;
  MB_CPU_ERROR(st, "cpu/c: %s %s -> %s is not implemented", op,
               st->host.dtype_name(in), st->host.dtype_name(out));
  return MB_ERR_UNSUPPORTED;
}

/* ---- row-wise kernels (softmax, layernorm, rmsnorm) -----------------------
 * Each row of N is computed whole, in f32, by one thread: `rows` computes
 * rows [r0, r1) of Y = f(X) for its kernel state `k`, with `buf` the
 * thread's N floats for a row that is not f32. */
typedef void (*mb_cpu_rows_fn)(const void *k, void *y, const void *x,
                               int64_t r0, int64_t r1, float *buf);

/* Below this many elements a parallel region costs more than the work. */
enum { MB_CPU_ROWS_PARALLEL_MIN = 1 << 15 };

/* Runs `rows` over the M x N operands in[0] -> out[0] of `call`, the rows
 * split contiguously across the pinned threads (the allocator's first-touch
 * split), thread t with floats [t N, (t + 1) N) of `rowbuf`. */
static inline void mb__cpu_run_rows(mb_cpu_rows_fn rows, const void *k,
                                    unsigned threads, int64_t m, int64_t n,
                                    float *rowbuf,
                                    const mb_kernel_call_t *call) {
  (void)threads; /* only the pragma uses it: unused without OpenMP */
  const void *x = call->in[0];
  void *y = call->out[0];
#pragma omp parallel num_threads(threads) if (m * n >= MB_CPU_ROWS_PARALLEL_MIN)
  {
    const unsigned nt = mb__cpu_team_size(), t = mb__cpu_thread_id();
    rows(k, y, x, m * t / nt, m * (t + 1) / nt,
         rowbuf ? rowbuf + (size_t)t * (size_t)n : NULL);
  }
}

/* Declares prefix_prepare, prefix_run and prefix_release. */
#define MB__CPU_ELT_DECLARE(prefix)                                        \
  mb_status_t prefix##_prepare(void *bstate, const mb_kernel_call_t *call, \
                               void **kstate);                             \
  mb_status_t prefix##_run(void *kstate, const mb_kernel_call_t *call);    \
  void prefix##_release(void *kstate)

/* The supports hooks of the C kernels listed around oneDNN's
 * (cpu_vec_first.c): vec accepts where their AVX-512 loops run, novec where
 * they do not. */
#define MB__CPU_VEC_DECLARE(op)                                            \
  mb_status_t mb__cpu_vec_##op(void *bstate, uint32_t dev,                 \
                               const mb_op_params_t *p, const char **why); \
  mb_status_t mb__cpu_novec_##op(void *bstate, uint32_t dev,               \
                                 const mb_op_params_t *p, const char **why)
MB__CPU_VEC_DECLARE(add);
MB__CPU_VEC_DECLARE(activation);
MB__CPU_VEC_DECLARE(layernorm);
MB__CPU_VEC_DECLARE(softmax);

/* Portable C (cpu_act_c.c, cpu_norm_c.c, cpu_norm_bwd_c.c, cpu_softmax_c.c,
 * cpu_attention_c.c, cpu_copy_c.c, cpu_add_lowp_c.c). */
MB__CPU_ELT_DECLARE(mb__cpu_activation_c);
MB__CPU_ELT_DECLARE(mb__cpu_silu_mul_c);
MB__CPU_ELT_DECLARE(mb__cpu_swiglu_bwd_c);
MB__CPU_ELT_DECLARE(mb__cpu_layernorm_c);
MB__CPU_ELT_DECLARE(mb__cpu_rmsnorm_c);
MB__CPU_ELT_DECLARE(mb__cpu_rmsnorm_bwd_c);
MB__CPU_ELT_DECLARE(mb__cpu_softmax_c);
MB__CPU_ELT_DECLARE(mb__cpu_attention_c);
MB__CPU_ELT_DECLARE(mb__cpu_copy_c);
MB__CPU_ELT_DECLARE(mb__cpu_add_lowp_c);
/* Rotary position embedding (cpu_rope_c.c). */
MB__CPU_ELT_DECLARE(mb__cpu_rope_c);
/* STREAM's scale and triad (cpu_stream_c.c). */
MB__CPU_ELT_DECLARE(mb__cpu_scale_c);
MB__CPU_ELT_DECLARE(mb__cpu_triad_c);
/* Attention's backward (cpu_attention_bwd_c.c). */
MB__CPU_ELT_DECLARE(mb__cpu_attention_bwd_c);
/* The sparse GEMMs (cpu_gemm_sparse_c.c). */
MB__CPU_ELT_DECLARE(mb__cpu_gemm_sparse24_c);
MB__CPU_ELT_DECLARE(mb__cpu_gemm_block_sparse_c);
/* Host transfers (cpu_transfer_c.c): h2d and d2h, whose "device" memory is
 * host memory here; d2h also has a collect hook. */
MB__CPU_ELT_DECLARE(mb__cpu_h2d_c);
MB__CPU_ELT_DECLARE(mb__cpu_d2h_c);
mb_status_t mb__cpu_d2h_c_collect(void *kstate, const mb_kernel_call_t *call);

/* dst = src, `bytes` of them, one contiguous slice per thread cut at cache
 * lines (cpu_copy_c.c: the copy kernel's loop, shared with the transfers). */
void mb__cpu_parallel_copy(void *dst, const void *src, size_t bytes,
                           unsigned threads);

#ifdef MB_HAVE_ONEDNN
/* oneDNN (cpu_eltwise_onednn.c): one primitive each over the shared kernel
 * (cpu_onednn.c), which runs and releases activation and softmax; layer
 * norm wraps it, for its f32 scale and shift. */
mb_status_t mb__cpu_activation_onednn_prepare(void *bstate,
                                              const mb_kernel_call_t *call,
                                              void **kstate);
mb_status_t mb__cpu_softmax_onednn_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate);
MB__CPU_ELT_DECLARE(mb__cpu_layernorm_onednn);
/* bf16 attention on oneDNN matmul tiles (cpu_attention_onednn.c). */
MB__CPU_ELT_DECLARE(mb__cpu_attention_onednn);
#endif

#endif
