/* CPU backend — the scaled-GEMM family: fp8 x fp8 with any scaling, i8 x i8
 * (exact to i32, or rescaled), bf16/f32 x i4 weights with group scales, and
 * quantize-inputs (gemm_fp8_rowwise).
 *
 *   D = alpha * sum_k (a_ik sa(i,k)) (b_kj sb(k,j)) + beta * D
 *
 * A CPU has no fp8 arithmetic: the fp8 kernels convert the operands inside
 * the timed run (the inputs are fp8 in memory, as a real kernel's are) and
 * multiply in bf16 or f32; they are marked MB_KERNEL_EMULATED. Scales that
 * do not vary along K are applied to the f32 result (exact products, f32
 * accumulation, then one scaling pass); scales that vary along K (1x128,
 * 128x128, groups) multiply the operands in f32 first. Nothing is rounded to
 * bf16 on the way (the tolerance is f32's), and the output is rounded once,
 * to nearest even. */
#ifndef MB_CPU_GEMM_SCALED_H
#define MB_CPU_GEMM_SCALED_H

#include "cpu_internal.h"

/* ---- what every scaled-GEMM kernel derives from the params --------------- */
typedef struct mb_cpu_sgemm_plan {
  int64_t m, k, n;
  mb_dtype_t ta, tb, tout;
  float alpha, beta;
  int a_scaled, b_scaled;     /* the side has a scale grid (mode != none) */
  int64_t bma, bka, bkb, bnb; /* A's blocks are bma x bka, B's bkb x bnb */
  int64_t gca, gcb;           /* grid columns */
  int64_t kq;     /* K step at which some scale changes; k when none does */
  int e8m0;       /* the grids are e8m0 bytes (params.dtype_scale; MXFP8) */
  float nv_s;     /* NVFP4: the grids are e4m3 bytes, S the static scale;
                     else 0 */
  int64_t na, nb; /* scales in A's and B's grid */
  int trans_b;    /* B stored N x K (unscaled f4e2m1 only) */
} mb_cpu_sgemm_plan_t;

void mb__cpu_sgemm_plan(const mb_op_params_t *p, mb_cpu_sgemm_plan_t *pl);

/* The scale grids as the kernels read them, f32: the call's own, or its
 * e8m0 grids (or NVFP4's e4m3 ones times S, each fl32(s_b S)) decoded into
 * `scratch` (na + nb floats, NULL for f32 grids) inside the timed run, as
 * an MX or NVFP4 kernel reads its byte scales. */
mb_status_t mb__cpu_sgemm_grids_alloc(mb_cpu_state_t *st,
                                      const mb_cpu_sgemm_plan_t *pl,
                                      float **scratch);
void mb__cpu_sgemm_grids(const mb_cpu_sgemm_plan_t *pl,
                         const mb_kernel_call_t *call, float *scratch,
                         const float **ga, const float **gb);
/* For scales constant along K: rs[i] = alpha sa(i), cs[j] = sb(j). */
void mb__cpu_sgemm_rowcol(const mb_cpu_sgemm_plan_t *pl, const float *ga,
                          const float *gb, float *rs, float *cs);

/* ---- supports hooks (cpu_gemm_scaled.c) ---------------------------------- */
mb_status_t mb__cpu_sgemm_supports_float(void *bstate, uint32_t dev,
                                         const mb_op_params_t *p,
                                         const char **why);
mb_status_t mb__cpu_sgemm_supports_c(void *bstate, uint32_t dev,
                                     const mb_op_params_t *p, const char **why);
mb_status_t mb__cpu_qi_supports_fp8(void *bstate, uint32_t dev,
                                    const mb_op_params_t *p, const char **why);
mb_status_t mb__cpu_qi_supports_fp_c(void *bstate, uint32_t dev,
                                     const mb_op_params_t *p, const char **why);
mb_status_t mb__cpu_qi_supports_i8(void *bstate, uint32_t dev,
                                   const mb_op_params_t *p, const char **why);
mb_status_t mb__cpu_qi_supports_i8_c(void *bstate, uint32_t dev,
                                     const mb_op_params_t *p, const char **why);

/* ---- portable C (cpu_gemm_scaled_c.c): every variant --------------------- */
mb_status_t mb__cpu_sgemm_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                    void **kstate);
mb_status_t mb__cpu_sgemm_c_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_sgemm_c_release(void *kstate);
/* MB_KERNEL_NOTE_MATH: the dtype the multiply-adds run in (every variant
 * widens to f32 here; oneDNN's is its inner matmul's input dtype). */
uint32_t mb__cpu_sgemm_c_notes(void *kstate, mb_kernel_note_t *out,
                               uint32_t max);

/* ---- quantize-inputs: quantize A and B, then the inner kernel ------------ */
mb_status_t mb__cpu_qi_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                 void **kstate);
mb_status_t mb__cpu_qi_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_qi_release(void *kstate);
/* The inner kernel's notes. */
uint32_t mb__cpu_qi_notes(void *kstate, mb_kernel_note_t *out, uint32_t max);

#ifdef MB_HAVE_ONEDNN
/* ---- oneDNN (cpu_gemm_scaled_onednn.c) ----------------------------------- */
mb_status_t mb__cpu_sgemm_supports_i8(void *bstate, uint32_t dev,
                                      const mb_op_params_t *p,
                                      const char **why);
mb_status_t mb__cpu_sgemm_onednn_prepare(void *bstate,
                                         const mb_kernel_call_t *call,
                                         void **kstate);
mb_status_t mb__cpu_sgemm_onednn_run(void *kstate,
                                     const mb_kernel_call_t *call);
void mb__cpu_sgemm_onednn_release(void *kstate);
uint32_t mb__cpu_sgemm_onednn_notes(void *kstate, mb_kernel_note_t *out,
                                    uint32_t max);
mb_status_t mb__cpu_qi_onednn_prepare(void *bstate,
                                      const mb_kernel_call_t *call,
                                      void **kstate);
/* bf16 x i4 weight-only on bf16 matmuls (cpu_gemm_wo_onednn.c). */
mb_status_t mb__cpu_wo_supports(void *bstate, uint32_t dev,
                                const mb_op_params_t *p, const char **why);
mb_status_t mb__cpu_wo_onednn_prepare(void *bstate,
                                      const mb_kernel_call_t *call,
                                      void **kstate);
mb_status_t mb__cpu_wo_onednn_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_wo_onednn_release(void *kstate);
uint32_t mb__cpu_wo_onednn_notes(void *kstate, mb_kernel_note_t *out,
                                 uint32_t max);
#endif

#endif
