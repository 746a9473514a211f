/* CPU backend — the dequantize kernel ("c"): Y = round(fl32(Q * s)) over
 * the scale grid, by the vector loops (cpu_dequant_x86.c) where the CPU
 * runs them, else the portable rows (cpu_quant_rows.c), both through
 * mb__cpu_dequant. e8m0 (MX) and NVFP4's e4m3 block scales are decoded to
 * f32 at the start of each run. */
#include "cpu_quant.h"

#include <stdlib.h>

typedef struct dequant {
  unsigned threads;
  mb_dtype_t in, out;
  int64_t rows, cols, bm, bn;
  float *grid32; /* e8m0 or e4m3 scales, decoded inside the run; NULL: f32 */
  float nv_s;    /* NVFP4: the per-tensor scale; else 0 */
  const mb_cpu_dqvec_t *vec; /* the vector loops, or NULL */
  int stream;                /* their stores past the caches */
} dequant_t;

mb_status_t mb__cpu_dequantize_c_prepare(void *bstate,
                                         const mb_kernel_call_t *call,
                                         void **kstate) {
  mb_cpu_state_t *st = bstate;
  const mb_op_params_t *p = call->params;
  if (!mb__cpu_dequant_supports(p->dtype, p->dtype_out)) {
    MB_CPU_ERROR(st, "cpu/c: dequantize %s -> %s is not implemented",
                 st->host.dtype_name(p->dtype),
                 st->host.dtype_name(p->dtype_out));
    return MB_ERR_UNSUPPORTED;
  }
  dequant_t *d = malloc(sizeof *d);
  if (!d) {
    MB_CPU_ERROR(st, "cpu/c: dequantize: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  *d = (dequant_t){st->threads,
                   p->dtype,
                   p->dtype_out,
                   p->shape[0],
                   p->shape[1],
                   p->scale_a.block[0],
                   p->scale_a.block[1],
                   NULL,
                   0.0f,
                   mb__cpu_dqvec(p->dtype, p->dtype_out),
                   0};
  /* The copy kernel's rule: stream once in and out outgrow the cache. */
  d->stream = mb__cpu_stream_stores(
      st->cache_bytes[2],
      st->host.dtype_bytes(p->dtype, (size_t)(d->rows * d->cols)) +
          st->host.dtype_bytes(p->dtype_out, (size_t)(d->rows * d->cols)));
  if (p->dtype_scale == MB_DTYPE_F8E4M3) d->nv_s = (float)p->scale;
  if ((p->dtype_scale == MB_DTYPE_E8M0 || d->nv_s > 0.0f) &&
      !(d->grid32 = malloc((size_t)(d->rows / d->bm * (d->cols / d->bn)) *
                           sizeof *d->grid32))) {
    free(d);
    MB_CPU_ERROR(st, "cpu/c: dequantize: out of memory");
    return MB_ERR_NO_MEMORY;
  }
  *kstate = d;
  return MB_OK;
}

mb_status_t mb__cpu_dequantize_c_run(void *kstate,
                                     const mb_kernel_call_t *call) {
  const dequant_t *d = kstate;
  const float *grid = call->in[1];
  const size_t n = (size_t)(d->rows / d->bm * (d->cols / d->bn));
  if (d->nv_s > 0.0f) { /* NVFP4: fl32(s_b S) per block */
    mb__cpu_e4m3_scales(d->grid32, call->in[1], d->nv_s, n);
    grid = d->grid32;
  } else if (d->grid32) { /* e8m0: every scale is an f32 power of two */
    mb__cpu_e8m0_load(d->grid32, call->in[1], n);
    grid = d->grid32;
  }
  mb__cpu_dequant(d->threads, d->vec, d->stream, call->in[0], d->in, grid,
                  d->bm, d->bn, call->out[0], d->out, d->rows, d->cols);
  return MB_OK;
}

void mb__cpu_dequantize_c_release(void *kstate) {
  dequant_t *d = kstate;
  if (d) free(d->grid32);
  free(d);
}
