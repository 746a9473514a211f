/* CPU backend — the element-wise family's kernels (activation, silu_mul,
 * layernorm, rmsnorm, softmax, attention, copy, and add on f16 and fp8):
 * prepare / run / release, listed in cpu_kernels_eltwise.def. */
#ifndef MB_CPU_ELTWISE_H
#define MB_CPU_ELTWISE_H

#include "cpu_internal.h"

/* Threads in the current OpenMP team (1 outside one or without OpenMP). */
static inline unsigned mb__cpu_team_size(void) {
#ifdef _OPENMP
  return (unsigned)omp_get_num_threads();
#else
  return 1;
#endif
}

/* Declares prefix_prepare, prefix_run and prefix_release. */
#define MB__CPU_ELT_DECLARE(prefix)                                        \
  mb_status_t prefix##_prepare(void *bstate, const mb_kernel_call_t *call, \
                               void **kstate);                             \
  mb_status_t prefix##_run(void *kstate, const mb_kernel_call_t *call);    \
  void prefix##_release(void *kstate)

/* Portable C (cpu_act_c.c, cpu_norm_c.c, cpu_softmax_c.c,
 * cpu_attention_c.c, cpu_copy_c.c, cpu_add_lowp_c.c). */
MB__CPU_ELT_DECLARE(mb__cpu_activation_c);
MB__CPU_ELT_DECLARE(mb__cpu_silu_mul_c);
MB__CPU_ELT_DECLARE(mb__cpu_layernorm_c);
MB__CPU_ELT_DECLARE(mb__cpu_rmsnorm_c);
MB__CPU_ELT_DECLARE(mb__cpu_softmax_c);
MB__CPU_ELT_DECLARE(mb__cpu_attention_c);
MB__CPU_ELT_DECLARE(mb__cpu_copy_c);
MB__CPU_ELT_DECLARE(mb__cpu_add_lowp_c);

#ifdef MB_HAVE_ONEDNN
/* oneDNN (cpu_eltwise_onednn.c): one primitive each, with any number of
 * operands (the shared cpu_onednn.c kernel takes exactly three), so they
 * share their own run and release. */
mb_status_t mb__cpu_activation_onednn_prepare(void *bstate,
                                              const mb_kernel_call_t *call,
                                              void **kstate);
mb_status_t mb__cpu_softmax_onednn_prepare(void *bstate,
                                           const mb_kernel_call_t *call,
                                           void **kstate);
mb_status_t mb__cpu_layernorm_onednn_prepare(void *bstate,
                                             const mb_kernel_call_t *call,
                                             void **kstate);
mb_status_t mb__cpu_eltwise_onednn_run(void *kstate,
                                       const mb_kernel_call_t *call);
void mb__cpu_eltwise_onednn_release(void *kstate);
#endif

#endif
