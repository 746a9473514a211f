/* CUDA backend — GEMM through cuBLASLt: prepare (operand re-layouts, the
 * matmul descriptors, autotuning), the timed run, release and the notes a
 * result carries. The cuBLASLt problem each request becomes is chosen in
 * cuda_gemm_lt_plan.c; cuda_gemm_lt.h describes the operand swap.
 *
 * Autotuning and the tune cache are cuda_gemm_lt_tune.c's; the kernel's
 * state and the helpers both files use, cuda_gemm_lt_kernel.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_gemm_lt_kernel.h"
#include "gpu_mx.h"

/* The shared quantize kernel (backends/gpu; gpu_kernels.h declares it too,
 * through gpu_kernels_quant.def): kstate is the device's mb_gpu_env_t. */
mb_status_t mb__gpu_quantize_run(void *kstate, const mb_kernel_call_t *call);

static mb_status_t no_memory(lt_kernel_t *k, const char *what) {
  k->st->base.host.set_error("cuda: cublaslt gemm: out of host memory %s",
                             what);
  return MB_ERR_NO_MEMORY;
}

/* ---- supports ------------------------------------------------------------ */

mb_status_t mb__cuda_lt_supports(void *bstate, uint32_t dev,
                                 const mb_op_params_t *params,
                                 const char **why) {
  mb_cuda_state_t *st = bstate;
  if (!st || !params || dev >= st->base.num_devices) {
    if (why) *why = "cublaslt: no such CUDA device";
    return MB_ERR_UNSUPPORTED;
  }
  /* The plan's reason has numbers in it: the library keeps the text
   * (host.reason), this hook only formats it. */
  char buf[480];
  mb_lt_plan_t pl;
  mb_status_t s = MB_ERR_UNSUPPORTED;
  if (!st->ltlib)
    snprintf(buf, sizeof buf, "cuBLASLt not loaded: %s", st->lt_why);
  else
    s = mb__cuda_lt_plan(mb__cuda_device(st, dev), params, st->ltlib->version,
                         &pl, buf, sizeof buf);
  if (s != MB_OK && why)
    *why = st->base.host.reason(st->base.host.host, "%s", buf);
  return s;
}

/* ---- device memory (prepare only) ---------------------------------------- */

static mb_status_t download(lt_kernel_t *k, void *host, const void *dev,
                            size_t bytes) {
  mb_status_t s = ck(k,
                     cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost,
                                     k->d->base.stream),
                     "cublaslt gemm: copy an operand to the host");
  if (s == MB_OK)
    s = ck(k, cudaStreamSynchronize(k->d->base.stream),
           "cublaslt gemm: copy an operand to the host");
  return s;
}

static mb_status_t upload(lt_kernel_t *k, void *dev, const void *host,
                          size_t bytes) {
  mb_status_t s = ck(k,
                     cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice,
                                     k->d->base.stream),
                     "cublaslt gemm: copy a re-laid-out operand to the device");
  if (s == MB_OK)
    s = ck(k, cudaStreamSynchronize(k->d->base.stream),
           "cublaslt gemm: copy a re-laid-out operand to the device");
  return s;
}

/* ---- staging (prepare) --------------------------------------------------- */

/* fp8 and i8 want cuBLASLt's A transposed ("TN"): our B stored N x K with K
 * contiguous, the layout fp8 inference stacks keep their weights in. Made
 * once here through the host (untimed). */
static mb_status_t stage_b(lt_kernel_t *k, const void *b) {
  const size_t count = (size_t)k->plan.k * (size_t)k->plan.n;
  /* FP4: two elements a byte (K and N even: the plan asked for 32s) */
  const size_t bytes = k->plan.fp4 ? (count + 1) / 2 : count;
  uint8_t *h = malloc(bytes ? bytes : 1), *t = malloc(bytes ? bytes : 1);
  mb_status_t s = (h && t) ? MB_OK : no_memory(k, "transposing B");
  if (s == MB_OK) s = download(k, h, b, bytes);
  if (s == MB_OK) {
    if (k->plan.fp4)
      mb__cuda_lt_transpose_u4(h, t, k->plan.k, k->plan.n);
    else
      mb__cuda_lt_transpose_u8(h, t, k->plan.k, k->plan.n);
    s = dalloc(k, bytes, &k->bt, "cublaslt gemm: allocate B^T");
  }
  if (s == MB_OK) s = upload(k, k->bt, t, bytes);
  free(h);
  free(t);
  snprintf(k->b_layout, sizeof k->b_layout,
           "NxK (K contiguous), transposed once in prepare (untimed)");
  return s;
}

/* fp8 scales: the op's tensors where cuBLASLt reads them as they are, else
 * a copy in cuBLASLt's layout made here from this operand copy's scales. */
/* MXFP8, MXFP4, NVFP4: the scales tiled for VEC32_UE8M0 / VEC16_UE4M3
 * (one 128 x 4 layout) from a byte grid on the device whose (outer o, K
 * block kb) scale is at src[o so + kb sk]. */
static mb_status_t tile_mx(lt_kernel_t *k, int side, const void *src,
                           int64_t so, int64_t sk) {
  const mb_lt_side_t *sd = side == SIDE_A ? &k->plan.la : &k->plan.lb;
  return mb__gpu_mx_tile_scales(&k->d->base.env, src, so, sk, sd->outer,
                                k->plan.k / k->plan.scale_vec,
                                (uint8_t *)k->scale[side]);
}

/* Given byte scales: our A's grid is M x K/vec, our B's K/vec x N. */
static mb_status_t stage_mx(lt_kernel_t *k, const mb_kernel_call_t *call) {
  const int64_t kb = k->plan.k / k->plan.scale_vec, n = k->plan.n;
  mb_status_t s = MB_OK;
  for (int side = SIDE_A; side <= SIDE_B && s == MB_OK; side++) {
    const mb_lt_side_t *sd = side == SIDE_A ? &k->plan.la : &k->plan.lb;
    void *dev = NULL;
    s = dalloc(k, sd->count, &dev, "cublaslt gemm: allocate MX scales");
    k->scale[side] = dev;
    k->bound[side] = dev;
    if (s == MB_OK)
      s = side == SIDE_A ? tile_mx(k, side, call->in[3], 1, n)
                         : tile_mx(k, side, call->in[2], kb, 1);
  }
  if (s == MB_OK)
    s = ck(k, cudaStreamSynchronize(k->d->base.stream),
           "cublaslt gemm: tile the MX scales");
  return s;
}

static mb_status_t stage_scales(lt_kernel_t *k, const mb_kernel_call_t *call) {
  if (k->plan.la.src == MB_LT_SC_MX32) return stage_mx(k, call);
  for (int side = SIDE_A; side <= SIDE_B; side++) {
    const mb_lt_side_t *sd = side == SIDE_A ? &k->plan.la : &k->plan.lb;
    const int our_b = side == SIDE_A;
    const void *given = call->in[our_b ? 3 : 2];
    if (sd->src == MB_LT_SC_CALL) {
      k->bound[side] = given;
      continue;
    }
    const size_t g = mb__cuda_lt_grid_count(&k->p, our_b);
    float *grid = malloc(g * sizeof *grid);
    float *out = calloc(sd->count, sizeof *out);
    mb_status_t s = (grid && out) ? MB_OK : no_memory(k, "re-laying scales");
    if (s == MB_OK) s = download(k, grid, given, g * sizeof *grid);
    if (s == MB_OK) {
      mb__cuda_lt_relayout(&k->p, our_b, sd, grid, out);
      void *dev = NULL;
      s = dalloc(k, sd->count * sizeof *out, &dev,
                 "cublaslt gemm: allocate scales");
      k->scale[side] = dev;
    }
    if (s == MB_OK) s = upload(k, k->scale[side], out, sd->count * sizeof *out);
    free(grid);
    free(out);
    if (s != MB_OK) return s;
    k->bound[side] = k->scale[side];
  }
  return MB_OK;
}

static mb_status_t quantize(lt_kernel_t *k) {
  mb_status_t s = mb__gpu_quantize_run(&k->d->base.env, &k->qcall[SIDE_A]);
  if (s == MB_OK) s = mb__gpu_quantize_run(&k->d->base.env, &k->qcall[SIDE_B]);
  /* MXFP8 (and FP4): the quantize kernel wrote row-major byte grids (A:
   * M x K/vec, B^T: N x K/vec) into mx_grid; cuBLASLt reads them tiled. */
  for (int side = SIDE_A; side <= SIDE_B && s == MB_OK && k->mx_grid[side];
       side++)
    s = tile_mx(k, side, k->mx_grid[side], k->plan.k / k->plan.scale_vec, 1);
  return s;
}

/* Quantize-inputs: buffers for the quantized operands and their scales, and
 * the two quantize calls run() makes. B is quantized transposed
 * (MB_PARAM_TRANSPOSE): B^T is N x K, exactly cuBLASLt's TN operand, and a
 * column of B is a row of B^T, so its per-column scales come out as the N
 * floats OUTER_VEC_32F reads (the same blocks, the same absmax and the same
 * quotients as the reference's quantization of B). */
static mb_status_t stage_qi(lt_kernel_t *k, const mb_kernel_call_t *call) {
  const mb_lt_plan_t *pl = &k->plan;
  const int64_t m = pl->m, kk = pl->k, n = pl->n;
  void *sa = NULL, *sb = NULL;
  mb_status_t s =
      dalloc(k, (size_t)m * (size_t)kk, &k->qa, "cublaslt gemm: allocate qA");
  if (s == MB_OK)
    s = dalloc(k, (size_t)n * (size_t)kk, &k->bt,
               "cublaslt gemm: allocate qB^T");
  if (s == MB_OK)
    s = dalloc(k, pl->la.count * sizeof(float), &sb,
               "cublaslt gemm: allocate B scales");
  k->scale[SIDE_A] = sb;
  if (s == MB_OK)
    s = dalloc(k, pl->lb.count * sizeof(float), &sa,
               "cublaslt gemm: allocate A scales");
  k->scale[SIDE_B] = sa;
  if (s != MB_OK) return s;
  const int scalar = pl->la.mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  const int mx = pl->la.src == MB_LT_SC_QUANT_MX;
  for (int side = SIDE_A; side <= SIDE_B && mx && s == MB_OK; side++)
    s = dalloc(k,
               (size_t)(side == SIDE_A ? n : m) * (size_t)(kk / pl->scale_vec),
               &k->mx_grid[side], "cublaslt gemm: allocate MX grids");
  if (s != MB_OK) return s;
  for (int side = SIDE_A; side <= SIDE_B; side++) {
    const int our_b = side == SIDE_A;
    const int64_t rows = our_b ? kk : m, cols = our_b ? n : kk;
    const int64_t outer = our_b ? n : m; /* rows of what is quantized */
    mb_op_params_t *q = &k->qp[side];
    *q = (mb_op_params_t)MB_OP_PARAMS_INIT;
    q->ndim = 2;
    q->shape[0] = rows;
    q->shape[1] = cols;
    q->dtype = q->dtype_b = our_b ? k->p.dtype_b : k->p.dtype;
    q->dtype_out = k->p.dtype_q;
    q->dtype_acc = MB_DTYPE_F32;
    /* gemm's static scale is the quantize op's: every scale given. */
    q->flags =
        (our_b ? MB_PARAM_TRANSPOSE : 0u) | (k->p.flags & MB_PARAM_STATIC);
    q->scale = k->p.scale; /* NVFP4: the per-tensor S */
    /* The block of the quantized matrix (A, or B^T): whole, one row, or
     * MX's 32 (NVFP4's 16) along K in e8m0 (e4m3). */
    q->scale_a = mx       ? (mb_scaling_t){MB_SCALE_BLOCK, {1, pl->scale_vec}}
                 : scalar ? (mb_scaling_t){MB_SCALE_TENSOR, {outer, kk}}
                          : (mb_scaling_t){MB_SCALE_ROW, {1, kk}};
    q->dtype_scale = mx ? k->p.dtype_scale : MB_DTYPE_NONE;
    k->q_in[side][0] = call->in[our_b ? 1 : 0];
    k->q_out[side][0] = our_b ? k->bt : k->qa;
    k->q_out[side][1] = mx ? k->mx_grid[side] : k->scale[side];
    k->qcall[side] = (mb_kernel_call_t){
        sizeof(mb_kernel_call_t),
        q,
        k->q_in[side],
        1,
        k->q_out[side],
        2,
        call->device,
        MB_CALL_VARYING_IN(call) & (side == SIDE_A ? 2u : 1u) ? 1u : 0u};
    k->bound[side] = k->scale[side];
  }
  snprintf(k->b_layout, sizeof k->b_layout,
           "NxK (K contiguous), quantized transposed inside the op (timed)");
  snprintf(k->quantize_note, sizeof k->quantize_note,
           "A and B (%s) quantized to %s inside the timed op by the "
           "shared quantize kernel%s, then the %s matmul",
           k->p.dtype == MB_DTYPE_F32 ? "f32" : "bf16",
           pl->fp4 ? "f4e2m1" : "f8e4m3",
           mx ? " (byte block scales, then tiled 128x4)" : "", pl->math);
  /* Once now: the tuning multiplies real data, and errors surface here. */
  s = quantize(k);
  if (s == MB_OK)
    s = ck(k, cudaStreamSynchronize(k->d->base.stream),
           "cublaslt gemm: quantize the inputs");
  return s;
}

/* fp8 wants 16-byte aligned pointers, i8 4-byte; the buffers made here are
 * cudaMalloc'd (256). */
static mb_status_t check_alignment(lt_kernel_t *k,
                                   const mb_kernel_call_t *call) {
  const mb_lt_plan_t *pl = &k->plan;
  if (pl->variant == MB_LT_FLOAT) return MB_OK;
  const uint32_t need = pl->variant == MB_LT_I8 ? 4 : 16;
  const char *what = pl->variant == MB_LT_I8 ? "i8" : "fp8";
  if (pl->variant != MB_LT_QI && align_of(call->in[0]) < need)
    return decline(k, "A is %u-byte aligned; cuBLASLt's %s kernels need %u",
                   align_of(call->in[0]), what, need);
  if (align_of(call->out[0]) < need)
    return decline(k, "D is %u-byte aligned; cuBLASLt's %s kernels need %u",
                   align_of(call->out[0]), what, need);
  for (int side = SIDE_A; side <= SIDE_B; side++) {
    const mb_lt_side_t *sd = side == SIDE_A ? &pl->la : &pl->lb;
    if (sd->src != MB_LT_SC_CALL) continue;
    const void *ptr = call->in[side == SIDE_A ? 3 : 2];
    const uint32_t sneed =
        (sd->mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F ||
         sd->mode == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F)
            ? 16
            : 4;
    if (align_of(ptr) < sneed)
      return decline(k, "%s is %u-byte aligned; cuBLASLt needs %u",
                     side == SIDE_A ? "scale_b" : "scale_a", align_of(ptr),
                     sneed);
  }
  return MB_OK;
}

/* ---- descriptors --------------------------------------------------------- */

static mb_status_t set_attr(lt_kernel_t *k, cublasLtMatmulDescAttributes_t a,
                            const void *v, size_t size, const char *what) {
  return ck_lt(k, k->st->ltlib->desc_set(k->op, a, v, size), what);
}

static mb_status_t set_scale_mode(lt_kernel_t *k, int side) {
  const mb_lt_side_t *sd = side == SIDE_A ? &k->plan.la : &k->plan.lb;
  if (sd->mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F) return MB_OK;
  const int32_t mode = sd->mode;
  cublasStatus_t s =
      k->st->ltlib->desc_set(k->op,
                             side == SIDE_A ? CUBLASLT_MATMUL_DESC_A_SCALE_MODE
                                            : CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                             &mode, sizeof mode);
  if (s == CUBLAS_STATUS_SUCCESS) return MB_OK;
  char v[32];
  return decline(k, "this cuBLASLt (%s) refuses scale mode %d for %s: %s",
                 lt_version(k, v, sizeof v), (int)mode,
                 side == SIDE_A ? "scale_b" : "scale_a",
                 k->st->ltlib->status_string(s));
}

static mb_status_t build_descs(lt_kernel_t *k) {
  const mb_lt_plan_t *pl = &k->plan;
  const uint64_t m = (uint64_t)pl->m, kk = (uint64_t)pl->k, n = (uint64_t)pl->n;
  const cublasOperation_t ta = pl->tn ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = pl->a_t ? CUBLAS_OP_T : CUBLAS_OP_N;
  mb_status_t s =
      ck_lt(k, k->st->ltlib->desc_create(&k->op, pl->compute, pl->scale_type),
            "cublaslt gemm: create the matmul descriptor");
  if (s == MB_OK)
    s = set_attr(k, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta,
                 "cublaslt gemm: set TRANSA");
  if (s == MB_OK)
    s = set_attr(k, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb,
                 "cublaslt gemm: set TRANSB");
  if (s == MB_OK && (pl->variant == MB_LT_FP8 || pl->variant == MB_LT_QI)) {
    s = set_attr(k, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &k->bound[SIDE_A],
                 sizeof k->bound[SIDE_A], "cublaslt gemm: set A's scales");
    if (s == MB_OK)
      s = set_attr(k, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &k->bound[SIDE_B],
                   sizeof k->bound[SIDE_B], "cublaslt gemm: set B's scales");
    if (s == MB_OK) s = set_scale_mode(k, SIDE_A);
    if (s == MB_OK) s = set_scale_mode(k, SIDE_B);
    /* Off by default (full-precision promotion of the partial sums); set
     * only when asked, so a plain fp8 result measures what it always did. */
    if (s == MB_OK && pl->fast_accum)
      s = set_attr(k, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &pl->fast_accum,
                   sizeof pl->fast_accum, "cublaslt gemm: set FAST_ACCUM");
  }
  /* cuBLASLt A = our B: N x K column-major (ld N) as it is, or our B
   * stored N x K (a copy, or the caller's with trans_b) read as K x N
   * column-major (ld K) and transposed. cuBLASLt B = our A: K x M
   * column-major (ld K), or with trans_a our A stored K x M read as M x K
   * column-major (ld M) and transposed. D^T: N x M, ld N. */
  if (s == MB_OK)
    s = ck_lt(k,
              k->st->ltlib->layout_create(&k->la, pl->b_type, pl->tn ? kk : n,
                                          pl->tn ? n : kk,
                                          (int64_t)(pl->tn ? kk : n)),
              "cublaslt gemm: create A's layout");
  if (s == MB_OK)
    s = ck_lt(k,
              k->st->ltlib->layout_create(&k->lb, pl->a_type, pl->a_t ? m : kk,
                                          pl->a_t ? kk : m,
                                          (int64_t)(pl->a_t ? m : kk)),
              "cublaslt gemm: create B's layout");
  if (s == MB_OK)
    s = ck_lt(k,
              k->st->ltlib->layout_create(&k->lc, pl->d_type, n, m, (int64_t)n),
              "cublaslt gemm: create D's layout");
  if (pl->scale_type == CUDA_R_32I) {
    k->alpha.i = 1; /* plan: i8 -> i32 takes alpha 1, beta 0 */
    k->beta.i = 0;
  } else {
    /* NVFP4: the per-tensor scales ride in alpha (plan.alpha_mul). */
    k->alpha.f = (float)k->p.alpha * pl->alpha_mul;
    k->beta.f = (float)k->p.beta;
  }
  return s;
}

/* ---- the hooks ----------------------------------------------------------- */

void mb__cuda_lt_release(void *kstate) {
  lt_kernel_t *k = kstate;
  if (!k) return;
  if (k->d) {
    cudaSetDevice(k->d->base.ordinal);
    cudaStreamSynchronize(
        k->d->base.stream); /* nothing queued still uses them */
  }
  if (k->lc) k->st->ltlib->layout_destroy(k->lc);
  if (k->lb) k->st->ltlib->layout_destroy(k->lb);
  if (k->la) k->st->ltlib->layout_destroy(k->la);
  if (k->op) k->st->ltlib->desc_destroy(k->op);
  cudaFree(k->bt);
  cudaFree(k->qa);
  cudaFree(k->scale[SIDE_A]);
  cudaFree(k->scale[SIDE_B]);
  cudaFree(k->mx_grid[SIDE_A]);
  cudaFree(k->mx_grid[SIDE_B]);
  cudaGetLastError();
  free(k);
}

/* Prepare reads B (the fp8 B^T copy) and re-laid scales from the call's
 * buffers once; an input the call says varies (written inside the timed
 * run, sys/backend.h) would leave a stale copy, so such a call is declined
 * and a composite runs that step with the backend's next kernel. */
static mb_status_t check_varying(lt_kernel_t *k, const mb_kernel_call_t *call) {
  const uint32_t varying = MB_CALL_VARYING_IN(call);
  if (k->plan.variant != MB_LT_FP8 || !varying) return MB_OK;
  if (k->plan.b_copy && (varying & 2u))
    return decline(k,
                   "B is written inside the timed run and cuBLASLt's fp8 "
                   "GEMM needs it N x K: the copy prepare makes would be "
                   "stale");
  for (int side = SIDE_A; side <= SIDE_B; side++) {
    const mb_lt_side_t *sd = side == SIDE_A ? &k->plan.la : &k->plan.lb;
    const uint32_t input = side == SIDE_A ? 3u : 2u; /* scale_b, scale_a */
    const int relaid = sd->src == MB_LT_SC_OUTER ||
                       sd->src == MB_LT_SC_VEC128 ||
                       sd->src == MB_LT_SC_BLK128 || sd->src == MB_LT_SC_MX32;
    if (relaid && (varying & (1u << input)))
      return decline(k,
                     "%s is written inside the timed run and cuBLASLt reads "
                     "it re-laid out: the copy prepare makes would be stale",
                     side == SIDE_A ? "scale_b" : "scale_a");
  }
  return MB_OK;
}

mb_status_t mb__cuda_lt_prepare(void *bstate, const mb_kernel_call_t *call,
                                void **kstate) {
  mb_cuda_state_t *st = bstate;
  *kstate = NULL;
  if (!st->ltlib) {
    st->base.host.set_error("cuda: cublaslt gemm: cuBLASLt not loaded: %s",
                            st->lt_why);
    return MB_ERR_UNSUPPORTED;
  }
  if (!call || !call->params || call->num_in < 4 || call->num_out < 1) {
    st->base.host.set_error(
        "cuda: cublaslt gemm: the call needs A, B, scale_a, "
        "scale_b and D");
    return MB_ERR_INVALID_ARG;
  }
  mb_cuda_device_t *d = mb__cuda_device(st, call->device);
  if (!d) return MB_ERR_NOT_FOUND;
  mb_status_t s = mb__cuda_check(st, cudaSetDevice(d->base.ordinal),
                                 "cublaslt gemm: set the device");
  if (s != MB_OK) return s;
  lt_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    st->base.host.set_error("cuda: cublaslt gemm: out of host memory");
    return MB_ERR_NO_MEMORY;
  }
  k->st = st;
  k->d = d;
  k->p = *call->params;
  char why[320];
  if (mb__cuda_lt_plan(d, &k->p, st->ltlib->version, &k->plan, why,
                       sizeof why) != MB_OK) {
    st->base.host.set_error("cuda: cublaslt gemm: %s", why);
    free(k);
    return MB_ERR_UNSUPPORTED;
  }
  s = check_alignment(k, call);
  if (s == MB_OK) s = check_varying(k, call);
  if (s == MB_OK && k->plan.variant == MB_LT_QI) s = stage_qi(k, call);
  if (s == MB_OK && k->plan.variant != MB_LT_QI && k->plan.b_copy)
    s = stage_b(k, call->in[1]);
  if (s == MB_OK && k->plan.tn && !k->plan.b_copy)
    snprintf(k->b_layout, sizeof k->b_layout,
             "NxK (K contiguous) as given (trans_b)");
  if (s == MB_OK && k->plan.variant == MB_LT_FP8) s = stage_scales(k, call);
  if (s == MB_OK) s = build_descs(k);
  if (s == MB_OK) s = mb__cuda_lt_tune(k, call);
  if (s != MB_OK) {
    mb__cuda_lt_release(k);
    return s;
  }
  *kstate = k;
  return MB_OK;
}

/* A scale tensor read as it is follows the call (another operand copy). */
static mb_status_t rebind(lt_kernel_t *k, int side, const void *ptr) {
  const mb_lt_side_t *sd = side == SIDE_A ? &k->plan.la : &k->plan.lb;
  if (sd->src != MB_LT_SC_CALL || ptr == k->bound[side]) return MB_OK;
  mb_status_t s =
      set_attr(k,
               side == SIDE_A ? CUBLASLT_MATMUL_DESC_A_SCALE_POINTER
                              : CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
               &ptr, sizeof ptr, "cublaslt gemm: set scales");
  if (s == MB_OK) k->bound[side] = ptr;
  return s;
}

mb_status_t mb__cuda_lt_run(void *kstate, const mb_kernel_call_t *call) {
  lt_kernel_t *k = kstate;
  const void *pa, *pb;
  mb_status_t s = MB_OK;
  if (k->plan.variant == MB_LT_QI) {
    k->q_in[SIDE_A][0] = call->in[1];
    k->q_in[SIDE_B][0] = call->in[0];
    if ((s = quantize(k)) != MB_OK) return s;
  } else if (k->plan.variant == MB_LT_FP8) {
    s = rebind(k, SIDE_A, call->in[3]);
    if (s == MB_OK) s = rebind(k, SIDE_B, call->in[2]);
    if (s != MB_OK) return s;
  }
  lt_operands(k, call, &pa, &pb);
  const cublasStatus_t cs = matmul(k, &k->algo, k->ws, pa, pb, call->out[0]);
  if (cs != CUBLAS_STATUS_SUCCESS)
    return mb__cuda_check_lt(k->st, cs, "cublaslt gemm: matmul");
  return MB_OK;
}

uint32_t mb__cuda_lt_notes(void *kstate, mb_kernel_note_t *out, uint32_t max) {
  const lt_kernel_t *k = kstate;
  if (!k) return 0;
  mb_kernel_note_t n[16];
  uint32_t c = 0;
  n[c++] = (mb_kernel_note_t){"algo_id", NULL, (double)k->algo_id};
  n[c++] = (mb_kernel_note_t){"workspace_bytes", NULL, (double)k->ws};
  n[c++] = (mb_kernel_note_t){"algos_tried", NULL, (double)k->tried};
  n[c++] = (mb_kernel_note_t){"tune_median_ms", NULL, k->best_ms};
  n[c++] = (mb_kernel_note_t){"tune_candidates", k->timings, 0};
  n[c++] = (mb_kernel_note_t){"tune_cached", NULL, (double)k->cache_hit};
  n[c++] = (mb_kernel_note_t){"math", k->plan.math, 0};
  n[c++] = (mb_kernel_note_t){"compute_type", k->plan.compute_name, 0};
  if (k->plan.variant == MB_LT_FP8 || k->plan.variant == MB_LT_QI) {
    n[c++] = (mb_kernel_note_t){"scale_mode", k->plan.scale_mode, 0};
    n[c++] = (mb_kernel_note_t){"fast_accum", NULL, (double)k->plan.fast_accum};
  }
  if (k->plan.variant == MB_LT_QI)
    n[c++] = (mb_kernel_note_t){"quantize", k->quantize_note, 0};
  if (k->plan.tn) n[c++] = (mb_kernel_note_t){"b_layout", k->b_layout, 0};
  if (k->plan.a_t)
    n[c++] = (mb_kernel_note_t){"a_layout",
                                "KxM (M contiguous) as given (trans_a)", 0};
  for (uint32_t i = 0; i < c && i < max && out; i++) out[i] = n[i];
  return c;
}
