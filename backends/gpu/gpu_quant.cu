/* quantize on the GPU: which kernels run a given quantization.
 *
 * One run function for every dtype, granularity and flag, so the GEMM's
 * "quantize inputs inside the op" can call it with its own resolved params
 * (mb__gpu_quantize_run). Dynamic quantization needs a block's absmax
 * before any of its elements can be divided; the plan reads X once where
 * the blocks allow it and twice where they do not:
 *
 *   static, not transposed     flat: elements with one scale, grid filled
 *   static, transposed         fill the grid, then apply (tiles)
 *   dynamic, not transposed,   blocks: a block per thread group, in
 *     blocks <= 32K elements     registers (row-wise, 1xG groups, 1x128,
 *     of long enough rows        128x128)
 *   blocks fitting a tile      tile FUSED: absmax, scale and Q per
 *                                shared-memory tile (short columns, small
 *                                tensors, every transposed case whose
 *                                blocks fit: coalesced both ways)
 *   anything else (tensor,     two passes: zero the grid; absmax by atomic
 *     long columns, X^T by       max on the f32 bit patterns (amax_all for
 *     rows of a tall X)          one scale, strips for blocks tall in X's
 *                                layout, tile AMAX otherwise); patterns
 *                                -> scales; then apply: flat (one scale),
 *                                apply (rows of Q), tile APPLY (transposed)
 *   i4 with odd cols            rows of Q share bytes: the last step is
 *                                i4_pairs (a byte per thread)
 *
 * Every path computes exactly the reference's numbers (gpu_quant.cuh), so
 * which one runs changes only the speed. e8m0 scales (MXFP8) have a path of
 * their own, gpu_quant_mx.cu, and so has f4e2m1 Q (MXFP4, NVFP4 and FP4
 * with f32 scales), gpu_quant_fp4.cu. */
#include "gpu_quant.cuh"

namespace {

/* Reads and checks params into *q; *why (static) says what is wrong. */
mb_status_t plan_params(const mb_op_params_t *p, mb_gq_plan_t *q,
                        const char **why) {
  memset(q, 0, sizeof *q);
  if (!mb_gq_is_hp(p->dtype) || mb_gq_qmax(p->dtype_out) == 0.0f) {
    *why =
        "quantize: X must be f32, bf16 or f16 and Q f8e4m3, f8e5m2, i8, i4 "
        "or f4e2m1";
    return MB_ERR_UNSUPPORTED;
  }
  if (p->shape[0] <= 0 || p->shape[1] <= 0) {
    *why = "quantize: the shape must be positive (M x N)";
    return MB_ERR_INVALID_ARG;
  }
  /* Indices within a row or column are 32-bit in the kernels (element
   * offsets are 64-bit: tensors may exceed 2^31 elements). */
  if (p->shape[0] >= ((int64_t)1 << 31) || p->shape[1] >= ((int64_t)1 << 31)) {
    *why = "quantize: a dimension of 2^31 or more is not implemented";
    return MB_ERR_UNSUPPORTED;
  }
  q->xdt = p->dtype;
  q->qdt = p->dtype_out;
  q->qmax = mb_gq_qmax(p->dtype_out);
  q->transpose = (p->flags & MB_PARAM_TRANSPOSE) != 0;
  q->rows = q->transpose ? p->shape[1] : p->shape[0];
  q->cols = q->transpose ? p->shape[0] : p->shape[1];
  if (p->scale_a.mode == MB_SCALE_NONE) {
    /* As lib/quant.c reads it: one block (resolve makes it row-wise). A
     * block given with it is a caller's slip, not to be guessed at. */
    if (p->scale_a.block[0] || p->scale_a.block[1]) {
      *why =
          "quantize: scale_a has a block but mode none (MB_SCALE_BLOCK "
          "takes the block)";
      return MB_ERR_INVALID_ARG;
    }
    q->bm = q->rows;
    q->bn = q->cols;
  } else {
    q->bm = p->scale_a.block[0];
    q->bn = p->scale_a.block[1];
  }
  if (q->bm <= 0 || q->bn <= 0 || q->rows % q->bm || q->cols % q->bn) {
    *why =
        "quantize: the scale block must divide the quantized tensor "
        "(params not resolved?)";
    return MB_ERR_INVALID_ARG;
  }
  q->gr = q->rows / q->bm;
  q->gc = q->cols / q->bn;
  /* lib/quant.c: static when the scale is > 0, the division by
   * (float)scale whatever that rounds to. */
  q->is_static = (p->flags & MB_PARAM_STATIC) && p->scale > 0;
  q->static_scale = (float)p->scale;
  q->mx = p->dtype_scale == MB_DTYPE_E8M0;
  q->sdt = p->dtype_scale;
  if (q->mx && q->qdt != MB_DTYPE_F8E4M3 && q->qdt != MB_DTYPE_F8E5M2 &&
      q->qdt != MB_DTYPE_F4E2M1) {
    *why = "quantize: e8m0 scales go with f8e4m3, f8e5m2 or f4e2m1 Q";
    return MB_ERR_UNSUPPORTED;
  }
  if (q->sdt == MB_DTYPE_F8E4M3 &&
      (q->qdt != MB_DTYPE_F4E2M1 || !q->is_static)) {
    *why =
        "quantize: f8e4m3 scales are NVFP4's: f4e2m1 Q and the per-tensor "
        "scale as the static scale";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

mb_status_t fail(const mb_gpu_env_t *env, mb_status_t st, const char *why) {
  env->host->set_error("%s: %s", env->backend, why);
  return st;
}

/* Q from the grid's scales. */
mb_status_t apply(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  mb_gq_tile_t t;
  if (mb_gq_apply_ok(p)) return mb_gq_launch_apply(env, p);
  if (!(p->qdt == MB_DTYPE_I4 && (p->cols & 1)) &&
      mb_gq_tile_plan(env, p, MB_GQ_APPLY, &t))
    return mb_gq_launch_tile(env, p, MB_GQ_APPLY, &t);
  if (p->qdt == MB_DTYPE_I4) return mb_gq_launch_i4_pairs(env, p);
  return fail(env, MB_ERR_UNSUPPORTED,
              "quantize: no tile of the scales fits in shared memory");
}

mb_status_t quantize(const mb_gpu_env_t *env, const mb_gq_plan_t *p) {
  mb_status_t st;
  mb_gq_tile_t t;
  if (p->qdt == MB_DTYPE_F4E2M1) return mb_gq_launch_fp4(env, p);
  if (p->mx) return mb_gq_launch_mx(env, p);
  if (p->is_static) {
    if (mb_gq_flat_ok(p)) return mb_gq_launch_flat(env, p, NULL);
    if ((st = mb_gq_launch_grid(env, p)) != MB_OK) return st;
    return apply(env, p);
  }
  if (mb_gq_blocks_ok(p)) return mb_gq_launch_blocks(env, p);
  if (mb_gq_tile_plan(env, p, MB_GQ_FUSED, &t))
    return mb_gq_launch_tile(env, p, MB_GQ_FUSED, &t);

  /* Two passes; the grid holds absmax bit patterns in between. */
  const int single = p->gr == 1 && p->gc == 1;
  const mb_gpu_error_t e =
      mb_gpu_memset_async(p->grid, 0, (size_t)(p->gr * p->gc) * sizeof(float),
                          (mb_gpu_stream_t)env->stream);
  if (e != mb_gpu_success) {
    (void)mb_gpu_get_last_error();
    env->host->set_error("%s: quantize: zeroing the scales: %s", env->backend,
                         mb_gpu_error_string(e));
    return MB_ERR_BACKEND;
  }
  if (single)
    st = mb_gq_launch_amax_all(env, p);
  else if (mb_gq_strips_ok(p))
    st = mb_gq_launch_strips(env, p);
  else if (mb_gq_tile_plan(env, p, MB_GQ_AMAX, &t))
    st = mb_gq_launch_tile(env, p, MB_GQ_AMAX, &t);
  else
    return fail(env, MB_ERR_UNSUPPORTED,
                "quantize: no tile of the absmax pass fits in shared memory");
  if (st != MB_OK || (st = mb_gq_launch_grid(env, p)) != MB_OK) return st;
  if (single && mb_gq_flat_ok(p)) return mb_gq_launch_flat(env, p, p->grid);
  return apply(env, p);
}

}  // namespace

extern "C" mb_status_t mb__gpu_quantize_supports(void *bstate, uint32_t dev,
                                                 const mb_op_params_t *params,
                                                 const char **why) {
  (void)bstate, (void)dev;
  mb_gq_plan_t p;
  const char *reason = NULL;
  const mb_status_t st = plan_params(params, &p, &reason);
  if (st != MB_OK && why) *why = reason;
  return st;
}

extern "C" mb_status_t mb__gpu_quantize_run(void *kstate,
                                            const mb_kernel_call_t *call) {
  const mb_gpu_env_t *env = (const mb_gpu_env_t *)kstate;
  mb_gq_plan_t p;
  const char *why = NULL;
  const mb_status_t st = plan_params(call->params, &p, &why);
  if (st != MB_OK) return fail(env, st, why);
  if (call->num_in < 1 || call->num_out < 2 || !call->in[0] || !call->out[0] ||
      !call->out[1])
    return fail(env, MB_ERR_INVALID_ARG,
                "quantize: the call needs X, Q and the scales");
  p.x = call->in[0];
  p.q = call->out[0];
  p.grid = (float *)call->out[1];
  return quantize(env, &p);
}
