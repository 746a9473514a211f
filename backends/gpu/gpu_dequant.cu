/* dequantize on the GPU: X = round(fl32(q * s)), s the scale of q's block.
 *
 * One kernel: rows of Q, a power-of-two number of threads per row (up to
 * the block's 256, several rows per block when rows are short), each
 * taking vectors of VEC elements along the row (16 bytes of the output)
 * when the row length and the pointers allow it, else single elements.
 * A vector lies in one block when bn % VEC == 0 and then has one scale;
 * the block of an element is found with multiply-high divisions by bm and
 * bn, never a hardware division. The product is rounded once to f32 and
 * then once to the output (the reference's fl32(q s)), as the CPU does.
 * e8m0 scales (MXFP8) are gpu_quant_mx.cu's, f4e2m1 Q gpu_quant_fp4.cu's. */
#include "gpu_quant.cuh"

namespace {

struct dq_args {
  mb_gq_rows_t r;
  const void *q;
  void *x;
};

/* N quantized values from element e (for i4 with N >= 2, e is even). */
template <mb_dtype_t DQ, int N>
__device__ __forceinline__ void load_q(const void *q, int64_t e,
                                       float (&v)[N]) {
  const uint8_t *b = (const uint8_t *)q;
  if constexpr (mb_gq_q<DQ>::per_byte == 1) {
    uint8_t r[N];
    mb_gq_ld<uint8_t, N>(b + e, r);
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = mb_gq_q<DQ>::dec(r[k]);
  } else if constexpr (N == 1) {
    v[0] = mb_gq_q<DQ>::dec((uint32_t)b[e / 2] >> (4 * (e & 1)));
  } else {
    uint8_t r[N / 2];
    mb_gq_ld<uint8_t, N / 2>(b + e / 2, r);
#pragma unroll
    for (int k = 0; k < N / 2; ++k) {
      v[2 * k] = mb_gq_q<DQ>::dec(r[k]);
      v[2 * k + 1] = mb_gq_q<DQ>::dec((uint32_t)r[k] >> 4);
    }
  }
}

/* x[row + j, + VEC) from the loaded q values v. */
template <mb_dtype_t DO, int VEC>
__device__ __forceinline__ void dequant_store(const dq_args &a,
                                              const float *srow, int64_t row,
                                              int j, const float (&v)[VEC]) {
  typedef typename mb_gq_x<DO>::raw R;
  R out[VEC];
  if (a.r.per_chunk) {
    const float s = mb_gq_row_scale(a.r, srow, j);
#pragma unroll
    for (int e = 0; e < VEC; ++e) out[e] = mb_gq_x<DO>::put(v[e] * s);
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e)
      out[e] = mb_gq_x<DO>::put(v[e] * mb_gq_row_scale(a.r, srow, j + e));
  }
  mb_gq_st<R, VEC>((R *)a.x + row + j, out);
}

template <mb_dtype_t DQ, mb_dtype_t DO, int VEC>
__global__ void __launch_bounds__(MB_GQ_BLOCK) dequant_kernel(dq_args a) {
  mb_gq_walk_rows<VEC>(
      a.r, [&](int64_t e, float(&v)[VEC]) { load_q<DQ, VEC>(a.q, e, v); },
      [&](const float *srow, int64_t row, int j, float(&v)[VEC]) {
        dequant_store<DO, VEC>(a, srow, row, j, v);
      });
}

template <mb_dtype_t DQ, mb_dtype_t DO, int VEC>
mb_status_t launch_t(const mb_gpu_env_t *env, const mb_op_params_t *p,
                     const mb_kernel_call_t *call) {
  dq_args a;
  a.q = call->in[0];
  a.x = call->out[0];
  a.r = mb_gq_rows_plan((const float *)call->in[1], p->shape[0], p->shape[1],
                        p->scale_a.block[0], p->scale_a.block[1], VEC);
  return mb_gq_launch(env, "dequantize", dequant_kernel<DQ, DO, VEC>,
                      (size_t)a.r.nrg, a);
}

mb_status_t check(const mb_op_params_t *p, const char **why) {
  if (!mb_gq_is_hp(p->dtype_out) || mb_gq_qmax(p->dtype) == 0.0f) {
    *why =
        "dequantize: Q must be f8e4m3, f8e5m2, i8, i4 or f4e2m1 and X f32, "
        "bf16 or f16";
    return MB_ERR_UNSUPPORTED;
  }
  /* NVFP4's per-tensor scale is the one static scale dequantize reads. */
  const int nv = p->dtype_scale == MB_DTYPE_F8E4M3;
  if ((p->flags & MB_PARAM_TRANSPOSE) ||
      ((p->flags & MB_PARAM_STATIC) && !nv)) {
    *why = "dequantize: transpose and static scales belong to quantize";
    return MB_ERR_INVALID_ARG;
  }
  if (nv && (p->dtype != MB_DTYPE_F4E2M1 || !(p->flags & MB_PARAM_STATIC) ||
             !(p->scale > 0))) {
    *why =
        "dequantize: f8e4m3 scales are NVFP4's: f4e2m1 Q and the per-tensor "
        "scale as the static scale";
    return MB_ERR_INVALID_ARG;
  }
  if (p->shape[0] <= 0 || p->shape[1] <= 0) {
    *why = "dequantize: the shape must be positive (M x N)";
    return MB_ERR_INVALID_ARG;
  }
  if (p->shape[0] >= ((int64_t)1 << 31) || p->shape[1] >= ((int64_t)1 << 31)) {
    *why = "dequantize: a dimension of 2^31 or more is not implemented";
    return MB_ERR_UNSUPPORTED;
  }
  const int64_t bm = p->scale_a.block[0], bn = p->scale_a.block[1];
  if (p->scale_a.mode == MB_SCALE_NONE || bm <= 0 || bn <= 0 ||
      p->shape[0] % bm || p->shape[1] % bn) {
    *why = "dequantize: the scale block must divide Q (params not resolved?)";
    return MB_ERR_INVALID_ARG;
  }
  return MB_OK;
}

}  // namespace

extern "C" mb_status_t mb__gpu_dequantize_supports(void *bstate, uint32_t dev,
                                                   const mb_op_params_t *params,
                                                   const char **why) {
  (void)bstate, (void)dev;
  const char *reason = NULL;
  const mb_status_t st = check(params, &reason);
  if (st != MB_OK && why) *why = reason;
  return st;
}

extern "C" mb_status_t mb__gpu_dequantize_run(void *kstate,
                                              const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  const mb_op_params_t *p = call->params;
  const char *why = NULL;
  mb_status_t st = check(p, &why);
  if (st == MB_OK && (call->num_in < 2 || call->num_out < 1 || !call->in[0] ||
                      !call->in[1] || !call->out[0])) {
    why = "dequantize: the call needs Q, the scales and X";
    st = MB_ERR_INVALID_ARG;
  }
  if (st != MB_OK) {
    env->host->set_error("%s: %s", env->backend, why);
    return st;
  }
  if (p->dtype == MB_DTYPE_F4E2M1)
    return mb_gq_launch_fp4_dequant(env, p, call);
  if (p->dtype_scale == MB_DTYPE_E8M0)
    return mb_gq_launch_mx_dequant(env, p, call);
  const int i4 = p->dtype == MB_DTYPE_I4;
  const int so = mb_gq_hp_size(p->dtype_out), vmax = 16 / so;
  /* Whole vectors a row, and both pointers aligned to their vectors. */
  const int vec = p->shape[1] % vmax == 0 && mb_gq_aligned(call->out[0], 16) &&
                  mb_gq_aligned(call->in[0], (size_t)(i4 ? vmax / 2 : vmax));
  /* (Q dtype, X dtype) as in quantize's dispatch, the other way round. */
  return mb_gq_dispatch(
      p->dtype_out, p->dtype, [&](auto dout, auto dq) -> mb_status_t {
        constexpr mb_dtype_t DO = decltype(dout)::value;
        constexpr mb_dtype_t DQ = decltype(dq)::value;
        constexpr int VMAX = 16 / (int)sizeof(typename mb_gq_x<DO>::raw);
        return vec ? launch_t<DQ, DO, VMAX>(env, p, call)
                   : launch_t<DQ, DO, 1>(env, p, call);
      });
}
