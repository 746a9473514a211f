/* libmicrobench — model-level benchmarks: torchao's model types under its
 * quantization recipes, in inference or training.
 *
 * A model is a composite op (linear, linear_training, ln_linear,
 * transformer_block) defined in the core as a short graph of primitive ops —
 * quantize, dequantize, gemm, layernorm, rmsnorm, activation, attention, add —
 * so every backend with those primitives runs it; a backend may also offer a
 * fused kernel for the whole composite. The recipe (mb_op_params_t.recipe)
 * decides how every linear layer in it is quantized. Results of a composite
 * carry a per-step breakdown, forward/backward times in training, and the
 * accuracy of the output against the high-precision model (docs/ops.md,
 * "Models").
 *
 * Threading: everything here is constant data. */
#ifndef MICROBENCH_MODEL_H
#define MICROBENCH_MODEL_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* torchao's recipe names (mb_recipe_name). Weights are quantized once,
 * outside the timed region (inference); activations dynamically inside. */
typedef enum mb_recipe {
  MB_RECIPE_BASELINE = 0,        /* "baseline": the high-precision dtype */
  MB_RECIPE_INT8WO = 1,          /* "int8wo": i8 per-channel weights */
  MB_RECIPE_INT8DQ = 2,          /* "int8dq": + i8 per-token activations */
  MB_RECIPE_INT4WO_32 = 3,       /* "int4wo-32": i4 weights, groups of 32 */
  MB_RECIPE_INT4WO_64 = 4,       /* "int4wo-64" */
  MB_RECIPE_INT4WO_128 = 5,      /* "int4wo-128" */
  MB_RECIPE_INT4WO_256 = 6,      /* "int4wo-256" */
  MB_RECIPE_FLOAT8WO = 7,        /* "float8wo": e4m3 per-channel weights */
  MB_RECIPE_FLOAT8DQ_TENSOR = 8, /* "float8dq-tensor": per-tensor scales */
  MB_RECIPE_FLOAT8DQ_ROW = 9,    /* "float8dq-row": per-row/channel */
  MB_RECIPE_FLOAT8_BLOCK = 10,   /* "float8-block": 1x128 / 128x128 */
  /* "int4wo-{g}-hqq": u4 weights with zero points chosen by HQQ */
  MB_RECIPE_INT4WO_32_HQQ = 11,
  MB_RECIPE_INT4WO_64_HQQ = 12,
  MB_RECIPE_INT4WO_128_HQQ = 13,
  MB_RECIPE_INT4WO_256_HQQ = 14,
  /* "gemlitewo-{bits}-{g}": gemlite's layouts on our weight-only kernels */
  MB_RECIPE_GEMLITEWO_4_32 = 15,
  MB_RECIPE_GEMLITEWO_4_64 = 16,
  MB_RECIPE_GEMLITEWO_4_128 = 17,
  MB_RECIPE_GEMLITEWO_4_256 = 18,
  MB_RECIPE_GEMLITEWO_8_32 = 19,
  MB_RECIPE_GEMLITEWO_8_64 = 20,
  MB_RECIPE_GEMLITEWO_8_128 = 21,
  MB_RECIPE_GEMLITEWO_8_256 = 22,
  /* torchao's sparsity_config_recipe_names, alone and paired as its runner
   * pairs them (2:4 with baseline, int8dq, float8dq-*; block with baseline
   * only): weights pruned once (setup), then a sparse GEMM. */
  MB_RECIPE_SEMI_SPARSE = 23,  /* "semi-sparse" (torchao: semi-sparse, 2:4) */
  MB_RECIPE_BLOCK_SPARSE = 24, /* "block-sparse" (torchao: block) */
  /* "int8dq-semi-sparse", "float8dq-tensor-semi-sparse",
   * "float8dq-row-semi-sparse" */
  MB_RECIPE_INT8DQ_SEMI_SPARSE = 25,
  MB_RECIPE_FLOAT8DQ_TENSOR_SEMI_SPARSE = 26,
  MB_RECIPE_FLOAT8DQ_ROW_SEMI_SPARSE = 27,
  MB_RECIPE_COUNT
} mb_recipe_t;

/* The torchao name; "?" when out of range. Static. */
MB_API const char *mb_recipe_name(mb_recipe_t recipe);
/* One line: what the activations, weights and kernel are. Static. */
MB_API const char *mb_recipe_summary(mb_recipe_t recipe);
/* Parses a torchao name; the error lists every valid one. */
MB_API mb_status_t mb_recipe_from_name(const char *name, mb_recipe_t *out);
/* The lowest SQNR (dB) of the output against the high-precision model that
 * a correct implementation of the recipe stays above on normal(0, 1) data;
 * below it the result fails its accuracy check (docs/ops.md). */
MB_API double mb_recipe_min_sqnr_db(mb_recipe_t recipe);
/* 1 when the recipe defines a training step (baseline and the dynamic
 * recipes: int8dq, float8dq-*, float8-block); weight-only recipes are for
 * inference (their weights are frozen). */
MB_API int mb_recipe_trains(mb_recipe_t recipe);

/* torchao's model types: "linear", "ln_linear_<act>" (sigmoid, relu,
 * leakyrelu, relu6, gelu, silu, hardswish), "transformer_block". Name i
 * (< mb_model_count()) and its one-line summary; static strings. */
MB_API size_t mb_model_count(void);
MB_API const char *mb_model_name(size_t index, const char **summary);
/* Benchmark modes: "inference" (forward) and "training" (forward and
 * backward: dX = dY.W^T and dW = X^T.dY under the recipe's scaling). */
MB_API size_t mb_mode_count(void);
MB_API const char *mb_mode_name(size_t index);
/* The composite op that runs a model type in a mode (*op, static:
 * "linear", "linear_training", "ln_linear", "transformer_block") and the
 * model's settings filled into *params (ln_linear_gelu: activation =
 * gelu_erf, torch's nn.GELU()). mode NULL: inference. Unknown names:
 * MB_ERR_NOT_FOUND listing the valid ones; a model without a training
 * graph: MB_ERR_UNSUPPORTED saying why. */
MB_API mb_status_t mb_model_resolve(const char *model, const char *mode,
                                    const char **op, mb_op_params_t *params);

typedef enum mb_phase {
  MB_PHASE_FORWARD = 0,
  MB_PHASE_BACKWARD = 1,
  MB_PHASE_SETUP = 2 /* untimed preparation: weight quantization */
} mb_phase_t;

/* "forward", "backward", "setup"; "?" out of range. Static. */
MB_API const char *mb_phase_name(mb_phase_t phase);

/* One step of a composite's graph (or one phase: its steps together) and
 * its time measured alone, under the benchmark's own cache policy and
 * stopping criterion (warm-up, min/max samples, noise target, timeout), as
 * the whole was measured. */
typedef struct mb_step_time {
  uint32_t struct_size;
  const char *label; /* "quantize activations", "gemm", "attention";
                        a phase: "forward", "backward" */
  const char *op;    /* the primitive op ("" for a phase) */
  const char *impl;  /* the kernel that ran it ("" for a phase) */
  mb_phase_t phase;
  double median_ns;   /* median of samples of this step alone; NAN: setup
                         (not timed) */
  double flop, bytes; /* the primitive's model (a phase: its steps' sums) */
  /* ---- appended ---- */
  uint64_t samples; /* how many the criterion took */
  double rel_stdev; /* noise: stdev / mean of the samples */
  /* A 95 % confidence interval of the median (distribution-free: the
   * order statistics at n/2 -+ 0.98 sqrt(n)); NAN when not timed. */
  double ci_low_ns, ci_high_ns;
  const char *stop_reason; /* the criterion's, as mb_stats_t's; static */
} mb_step_time_t;

#define MB_STEP_TIME_INIT                                                      \
  {                                                                            \
    sizeof(mb_step_time_t), 0, 0, 0, MB_PHASE_FORWARD, NAN, 0.0, 0.0, 0u, NAN, \
        NAN, NAN, ""                                                           \
  }

/* The output of a composite against the high-precision model (the same
 * model in double precision, no quantization), on a seeded sample. */
typedef struct mb_accuracy {
  uint32_t struct_size;
  int checked;    /* 0: not a composite, or not run */
  int pass;       /* sqnr_db >= min_sqnr_db */
  double sqnr_db; /* 10 log10(sum ref^2 / sum err^2) */
  double rel_err; /* ||out - ref|| / ||ref|| (relative Frobenius) */
  double max_abs_err, max_rel_err;
  double min_sqnr_db; /* the recipe's floor */
  uint64_t elements_checked;
} mb_accuracy_t;

#define MB_ACCURACY_INIT \
  { sizeof(mb_accuracy_t), 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0u }

/* The steps of a composite's graph in execution order (0 for a primitive
 * op or a fused kernel). */
MB_API size_t mb_result_step_count(const mb_result_t *r);
MB_API mb_status_t mb_result_step(const mb_result_t *r, size_t index,
                                  mb_step_time_t *out);
/* Median time of the forward or backward steps run together, alone (ns);
 * NAN when not measured (backward in inference, a primitive op). The
 * result's own statistics time the whole step (forward + backward); in
 * inference the forward phase is the whole, not measured twice. */
MB_API double mb_result_phase_ns(const mb_result_t *r, mb_phase_t phase);
/* The same phase with its noise (label "forward"/"backward", op and impl
 * ""). MB_ERR_NOT_FOUND when not measured. */
MB_API mb_status_t mb_result_phase(const mb_result_t *r, mb_phase_t phase,
                                   mb_step_time_t *out);

/* Whether a composite's parts add up to its whole: the phases (training)
 * or the timed steps (inference), each measured alone, against the whole.
 * They disagree when the 95 % intervals of the sum (the parts' interval
 * bounds added) and of the whole's median do not overlap and the sum is
 * more than MB_PARTS_TOLERANCE away from the whole: a part alone starts
 * from the cache state its policy gives it (cold: flushed before every
 * sample), not the one the step before leaves, which moves a sum a few
 * percent by itself. A disagreement is also the result's warning. */
#define MB_PARTS_TOLERANCE 0.05
typedef struct mb_parts_check {
  uint32_t struct_size;
  int checked;    /* 0: not a composite, or not measured */
  int agree;      /* 1: within noise (or tolerance) */
  const char *of; /* "phases" or "steps"; static */
  double sum_ns;  /* the parts' medians added */
  double sum_ci_low_ns, sum_ci_high_ns;
  double whole_ns; /* the whole's median */
  double whole_ci_low_ns, whole_ci_high_ns;
} mb_parts_check_t;

#define MB_PARTS_CHECK_INIT \
  { sizeof(mb_parts_check_t), 0, 0, "", NAN, NAN, NAN, NAN, NAN, NAN }

MB_API mb_status_t mb_result_parts_check(const mb_result_t *r,
                                         mb_parts_check_t *out);
MB_API mb_status_t mb_result_accuracy(const mb_result_t *r, mb_accuracy_t *out);

#ifdef __cplusplus
}
#endif
#endif
