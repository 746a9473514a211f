/* CPU backend — which of a C kernel's two table entries accepts: the one
 * before oneDNN's kernel where the C kernel's AVX-512 loops run and beat
 * oneDNN's, the one after it otherwise (cpu_backend.c, MB__CPU_C_VEC /
 * MB__CPU_C_NOVEC). The kernel behind both is the same: it runs its
 * AVX-512 loops wherever they exist.
 *
 * On the 2-core AMX VM of docs/results/cpu.md the AVX-512 loops ran add
 * 1.4-1.5x, the activations 1.1-2.1x, layernorm 1.04-1.3x and f32 softmax
 * 1.3x as fast as oneDNN 2.6 at 8192x8192 (hot, same run); bf16 gelu_tanh,
 * 0.85x then, ran 1.4x once its loop prefetched (19-21 against 28-29 ms,
 * interleaved, 2026-11-27), so every one of them goes first; the
 * portable loops are slower than oneDNN's (the issue-26 table: portable
 * rows at half oneDNN's layernorm). Exactly one of the two entries accepts on
 * any CPU, so `--impl c` and mbench's listings see one "c" (mb_kernel_info
 * lists the table's rows, both). */
#include "cpu_eltwise.h"
#include "cpu_internal.h"
#include "cpu_simd_elt.h"
#include "cpu_simd_norm.h"

static int vec_add(const mb_op_params_t *p) {
  return mb__cpu_simd_add(p->dtype, p->dtype) != NULL;
}
static int vec_activation(const mb_op_params_t *p) {
  return (unsigned)p->activation < MB_ACT_COUNT &&
         mb__cpu_simd_activation(p->activation, p->dtype, p->dtype) != NULL;
}
static int vec_layernorm(const mb_op_params_t *p) {
  return mb__cpu_simd_norm(p->dtype) != NULL;
}
static int vec_softmax(const mb_op_params_t *p) {
  return mb__cpu_simd_softmax(p->dtype) != NULL;
}

#define MB__CPU_VEC_PAIR(op)                                                  \
  mb_status_t mb__cpu_vec_##op(void *bstate, uint32_t dev,                    \
                               const mb_op_params_t *p, const char **why) {   \
    (void)bstate, (void)dev;                                                  \
    if (vec_##op(p)) return MB_OK;                                            \
    *why =                                                                    \
        "no AVX-512 loops faster than oneDNN's for these params here (the "   \
        "entry after oneDNN's runs this kernel)";                             \
    return MB_ERR_UNSUPPORTED;                                                \
  }                                                                           \
  mb_status_t mb__cpu_novec_##op(void *bstate, uint32_t dev,                  \
                                 const mb_op_params_t *p, const char **why) { \
    (void)bstate, (void)dev;                                                  \
    if (!vec_##op(p)) return MB_OK;                                           \
    *why =                                                                    \
        "the AVX-512 loops beat oneDNN's here (the entry before "             \
        "oneDNN's)";                                                          \
    return MB_ERR_UNSUPPORTED;                                                \
  }
MB__CPU_VEC_PAIR(add)
MB__CPU_VEC_PAIR(activation)
MB__CPU_VEC_PAIR(layernorm)
MB__CPU_VEC_PAIR(softmax)
