/* Internal: running a composite op's graph (graph.h) on a device with the
 * backend's primitive kernels — the "graph" implementation every backend
 * gets for free. The runner treats it like a kernel: prepare (compose,
 * choose a kernel per step, allocate intermediates, run the setup steps),
 * run (the timed steps in order), release. */
#ifndef MB_LIB_COMPOSITE_H
#define MB_LIB_COMPOSITE_H

#include "ops/kernel.h"
#include "results/result.h"

/* The implementation name results carry. */
#define MB__COMPOSITE_IMPL "graph"

/* MB_ERR_UNSUPPORTED (a skip) when a step has no kernel on the device: the
 * message names the step and what the backend offers. */
mb_status_t mb__composite_prepare(mb_context_t *ctx, mb_device_t *dev,
                                  const mb_op_t *op,
                                  const mb_kernel_call_t *call, void **state);
mb_status_t mb__composite_run(void *state, const mb_kernel_call_t *call);
void mb__composite_release(void *state);
/* 1 when a step's kernel emulates its formats (fp8 on a CPU). */
int mb__composite_emulated(const void *state);
/* The peak FLOP/s of the math the graph's heaviest step runs on (an i8
 * GEMM under int8dq): what the composite's %peak compares against. */
double mb__composite_peak(const void *state);
/* Bytes of the buffers the timed steps touch: the model step's working
 * set (quantized weights, not the high-precision ones they came from). */
double mb__composite_working_set(const void *state);

/* The accuracy of a composite's output from its check against the
 * high-precision reference (mb__verify of the composite op itself), with
 * the recipe's floor. */
void mb__accuracy_from(const mb_correctness_t *hp, mb_recipe_t recipe,
                       mb_accuracy_t *acc);

/* After one run (synchronised): every step checked against its own
 * primitive's reference on the buffers the device gave it, folded into
 * *corr (worst step wins; its label becomes the note "worst_step"), then
 * the outputs against the composite's high-precision reference: the
 * accuracy, whose floor (the recipe's) the check must also meet. */
mb_status_t mb__composite_check(void *state, uint64_t seed,
                                mb_correctness_t *corr, mb_result_t *res);

/* One run of step `step` alone (>= 0), or of every step of `phase` in
 * order (step < 0): a part of the graph, timed by the runner as it times
 * the whole (measure/runner_parts.c). */
mb_status_t mb__composite_run_part(void *state, int step, mb_phase_t phase);
uint32_t mb__composite_step_count(const void *state);
/* Step i's label, op, impl, phase and model (FLOP, bytes); times NAN. */
void mb__composite_step(const void *state, uint32_t i, mb_step_time_t *t);

#endif
