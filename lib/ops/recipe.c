/* Quantization recipes (torchao's names), model types and modes, and the
 * their vocabulary (names, summaries, SQNR floors); models/layer_graph.c
 * turns a row into a linear layer's steps. OPS.md, "Quantization recipes":
 *
 *   recipe          activations (A)       weights (B = W[K,N])  kernel
 *   baseline        hp                    hp                    hp GEMM
 *   int8wo          hp                    i8 per channel        dequant + GEMM
 *   int8dq          i8 per row, dynamic   i8 per channel        i8 GEMM
 *   int4wo-g        hp                    i4 groups of g on K   i4 GEMM
 *   float8wo        hp                    e4m3 per channel      dequant + GEMM
 *   float8dq-tensor e4m3 per tensor       e4m3 per tensor       fp8 GEMM
 *   float8dq-row    e4m3 per row          e4m3 per channel      fp8 GEMM
 *   float8-block    e4m3 1x128            e4m3 128x128          fp8 GEMM
 *   int4wo-g-hqq    hp                    u4 groups of g, HQQ   i4 GEMM + zp
 *   gemlitewo-4-g   hp                    as int4wo-g-hqq       i4 GEMM + zp
 *   gemlitewo-8-g   hp                    i8 groups of g on K   dequant + GEMM
 *
 * "+ zp": the zero points' term, (X . G) . Zao, a GEMM of inner size K/g
 * on X's group sums, added to the i4 GEMM's output (models/hqq_step.c).
 *
 * "Per channel" is one scale per output column n of W (COL); a group of g
 * runs along K (a g x 1 block of W). Weights are quantized once in a setup
 * step (untimed) for inference; training re-quantizes them inside the step
 * since master weights change every iteration. */
#include <stdio.h>
#include <string.h>

#include "ops/recipe.h"

#define NONE_S       \
  {                  \
    MB_SCALE_NONE, { \
      0, 0           \
    }                \
  }
#define TENSOR_S       \
  {                    \
    MB_SCALE_TENSOR, { \
      0, 0             \
    }                  \
  }
#define ROW_S       \
  {                 \
    MB_SCALE_ROW, { \
      0, 0          \
    }               \
  }
#define COL_S       \
  {                 \
    MB_SCALE_COL, { \
      0, 0          \
    }               \
  }
#define GROUP_S(g)    \
  {                   \
    MB_SCALE_GROUP, { \
      0, g            \
    }                 \
  }
#define BLOCK_S(r, c) \
  {                   \
    MB_SCALE_BLOCK, { \
      r, c            \
    }                 \
  }

/* SQNR floors, 3-5 dB under the lowest SQNR measured on the CPU backend
 * (bf16 normal inputs; linear 256x512x512, 32x256x128, 128x1024x256, seeds
 * 1 and 42, inference and training where the recipe trains; and
 * transformer_block 2x128x1): close enough that a step losing a few dB (a
 * coarser group, a wrong rounding) fails, far enough that seeds and
 * shapes do not. Measured min-max dB: baseline 49.1-55.8 (49 is the
 * transformer block's, linear 55.3-55.8), int8wo 41.7-42.7, int8dq
 * 39.0-42.2, int4wo-32 20.4, int4wo-128 18.2-18.6, int4wo-256 17.6-18.1,
 * float8wo 31.4-31.9, float8dq-tensor 28.4-28.6, float8dq-row 28.4-29.4,
 * float8-block 28.5-28.8; int4wo-64 19.2-19.3 and the ln_linear models
 * (relu, sigmoid, gelu at 256x512x512, seed 42) at or above linear's
 * (ln_linear_gelu: baseline 50.0, int8wo 41.2, int8dq 38.7, float8 28.1).
 * HQQ (asymmetric, HQQ zero points; gemlitewo-4-g identical): int4wo-32-hqq
 * 22.2-22.7, -64 21.1-21.5, -128 19.7-20.4, -256 19.1-19.5; gemlitewo-8-g
 * (i8 groups): 32 43.7-44.8, 64 43.0-44.0, 128 42.5-43.4, 256 42.5-42.9
 * (2026-11-26, the same shapes and seeds).
 * A broken kernel (a lost scale or transpose) lands near 0 dB.
 * docs/ops.md, "Models". */
/* Rows leave their trailing fields (prep, kernel note, sparsity) to C's
 * zero: RTN weights, no note, dense. GCC accepts that under -Wextra; clang
 * warns on each row, so its warning is off for this table alone. */
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-field-initializers"
#endif
static const mb__recipe_row_t k_recipes[MB_RECIPE_COUNT] = {
    [MB_RECIPE_BASELINE] = {"baseline",
                            "high precision: hp GEMM, f32 accumulate",
                            MB_DTYPE_NONE, NONE_S, MB_DTYPE_NONE, NONE_S, 0,
                            45.0},
    [MB_RECIPE_INT8WO] = {"int8wo",
                          "i8 per-channel weights, dequantized + hp GEMM",
                          MB_DTYPE_I8, COL_S, MB_DTYPE_NONE, NONE_S, 1, 38.0},
    [MB_RECIPE_INT8DQ] = {"int8dq",
                          "i8 per-row dynamic activations x i8 per-channel "
                          "weights, i32 accumulate",
                          MB_DTYPE_I8, COL_S, MB_DTYPE_I8, ROW_S, 0, 35.0},
    [MB_RECIPE_INT4WO_32] = {"int4wo-32",
                             "i4 weights in groups of 32 along K, hp GEMM",
                             MB_DTYPE_I4, GROUP_S(32), MB_DTYPE_NONE, NONE_S, 0,
                             16.0},
    [MB_RECIPE_INT4WO_64] = {"int4wo-64",
                             "i4 weights in groups of 64 along K, hp GEMM",
                             MB_DTYPE_I4, GROUP_S(64), MB_DTYPE_NONE, NONE_S, 0,
                             15.0},
    [MB_RECIPE_INT4WO_128] = {"int4wo-128",
                              "i4 weights in groups of 128 along K, hp GEMM",
                              MB_DTYPE_I4, GROUP_S(128), MB_DTYPE_NONE, NONE_S,
                              0, 15.0},
    [MB_RECIPE_INT4WO_256] = {"int4wo-256",
                              "i4 weights in groups of 256 along K, hp GEMM",
                              MB_DTYPE_I4, GROUP_S(256), MB_DTYPE_NONE, NONE_S,
                              0, 14.0},
    [MB_RECIPE_FLOAT8WO] = {"float8wo",
                            "f8e4m3 per-channel weights, dequantized + hp "
                            "GEMM",
                            MB_DTYPE_F8E4M3, COL_S, MB_DTYPE_NONE, NONE_S, 1,
                            28.0},
    [MB_RECIPE_FLOAT8DQ_TENSOR] = {"float8dq-tensor",
                                   "f8e4m3 dynamic per-tensor activations x "
                                   "per-tensor weights",
                                   MB_DTYPE_F8E4M3, TENSOR_S, MB_DTYPE_F8E4M3,
                                   TENSOR_S, 0, 25.0},
    [MB_RECIPE_FLOAT8DQ_ROW] = {"float8dq-row",
                                "f8e4m3 dynamic per-row activations x "
                                "per-channel weights",
                                MB_DTYPE_F8E4M3, COL_S, MB_DTYPE_F8E4M3, ROW_S,
                                0, 25.0},
    [MB_RECIPE_FLOAT8_BLOCK] = {"float8-block",
                                "f8e4m3 1x128 activation blocks x 128x128 "
                                "weight blocks",
                                MB_DTYPE_F8E4M3, BLOCK_S(128, 128),
                                MB_DTYPE_F8E4M3, BLOCK_S(1, 128), 0, 25.0},
#define HQQ_ROW(g, floor)                                         \
  {                                                               \
    "int4wo-" #g "-hqq",                                          \
        "u4 weights in groups of " #g                             \
        " along K, HQQ scales and zero points, "                  \
        "hp GEMM",                                                \
        MB_DTYPE_I4, GROUP_S(g), MB_DTYPE_NONE, NONE_S, 0, floor, \
        MB__WPREP_HQQ, NULL                                       \
  }
    [MB_RECIPE_INT4WO_32_HQQ] = HQQ_ROW(32, 19.0),
    [MB_RECIPE_INT4WO_64_HQQ] = HQQ_ROW(64, 18.0),
    [MB_RECIPE_INT4WO_128_HQQ] = HQQ_ROW(128, 16.5),
    [MB_RECIPE_INT4WO_256_HQQ] = HQQ_ROW(256, 16.0),
/* gemlite packs 4-bit weights asymmetric with HQQ's zero points and 8-bit
 * ones symmetric (GemliteUIntXWeightOnlyConfig: use_hqq for 4 bits);
 * packing is storage only, so the values are those of int4wo-{g}-hqq and
 * of int8 groups, run on our i4 GEMM and our i8 dequantize + GEMM. */
#define GEMLITE_NOTE(path)                                    \
  "gemlite's bit-packed weights run on libmicrobench's " path \
  ", not on gemlite's Triton kernels"
#define GEMLITE4_ROW(g, floor)                                         \
  {                                                                    \
    "gemlitewo-4-" #g,                                                 \
        "gemlite u4 weights in groups of " #g                          \
        " along K (HQQ zero points) on "                               \
        "our i4 GEMM",                                                 \
        MB_DTYPE_I4, GROUP_S(g), MB_DTYPE_NONE, NONE_S, 0, floor,      \
        MB__WPREP_HQQ,                                                 \
        GEMLITE_NOTE(                                                  \
            "i4 weight-only GEMM with HQQ zero points (int4wo-g-hqq)") \
  }
#define GEMLITE8_ROW(g, floor)                                                \
  {                                                                           \
    "gemlitewo-8-" #g,                                                        \
        "gemlite i8 weights in groups of " #g                                 \
        " along K, dequantized + hp "                                         \
        "GEMM",                                                               \
        MB_DTYPE_I8, GROUP_S(g), MB_DTYPE_NONE, NONE_S, 1, floor,             \
        MB__WPREP_RTN,                                                        \
        GEMLITE_NOTE("i8 weight-only path (dequantize + hp GEMM, as int8wo)") \
  }
    [MB_RECIPE_GEMLITEWO_4_32] = GEMLITE4_ROW(32, 19.0),
    [MB_RECIPE_GEMLITEWO_4_64] = GEMLITE4_ROW(64, 18.0),
    [MB_RECIPE_GEMLITEWO_4_128] = GEMLITE4_ROW(128, 16.5),
    [MB_RECIPE_GEMLITEWO_4_256] = GEMLITE4_ROW(256, 16.0),
    [MB_RECIPE_GEMLITEWO_8_32] = GEMLITE8_ROW(32, 40.0),
    [MB_RECIPE_GEMLITEWO_8_64] = GEMLITE8_ROW(64, 40.0),
    [MB_RECIPE_GEMLITEWO_8_128] = GEMLITE8_ROW(128, 39.0),
    [MB_RECIPE_GEMLITEWO_8_256] = GEMLITE8_ROW(256, 39.0),
    /* torchao's sparsity recipes (pytorch/ao dbef6992, benchmark_runner.py's
     * get_quantization_sparsity_recipes): 2:4 pairs with baseline, int8dq and
     * float8dq-*; block with baseline only. Floors: the pruned layer is the
     * reference (linear.c), so a recipe keeps its dense twin's floor. */
    [MB_RECIPE_SEMI_SPARSE] = {"semi-sparse",
                               "2:4 sparse hp weights (2 largest |w| of 4 "
                               "along K), sparse GEMM",
                               MB_DTYPE_NONE, NONE_S, MB_DTYPE_NONE, NONE_S, 0,
                               45.0, MB__WPREP_RTN, NULL, MB__SPARSE_24},
    [MB_RECIPE_BLOCK_SPARSE] = {"block-sparse",
                                "64x64 block-sparse hp weights (half of each "
                                "block row kept by L2 norm), BSR GEMM",
                                MB_DTYPE_NONE, NONE_S, MB_DTYPE_NONE, NONE_S, 0,
                                45.0, MB__WPREP_RTN, NULL, MB__SPARSE_BLOCK},
/* torchao's runner pairs these with 2:4 but its string_to_config then
 * returns the quantization config alone (dense quantized weights); we
 * prune 2:4 first, so the numbers are those of the pruned weights, and
 * say that the GEMM is dense. */
#define SPARSE_NOTE                                                     \
  "2:4-pruned weights on libmicrobench's dense quantized GEMM (no "     \
  "quantized 2:4 kernel yet; torchao's runner at dbef6992 applies the " \
  "quantization config alone to this pair)"
    [MB_RECIPE_INT8DQ_SEMI_SPARSE] = {"int8dq-semi-sparse",
                                      "int8dq on 2:4-pruned weights",
                                      MB_DTYPE_I8, COL_S, MB_DTYPE_I8, ROW_S, 0,
                                      35.0, MB__WPREP_RTN, SPARSE_NOTE,
                                      MB__SPARSE_24},
    [MB_RECIPE_FLOAT8DQ_TENSOR_SEMI_SPARSE] =
        {"float8dq-tensor-semi-sparse", "float8dq-tensor on 2:4-pruned weights",
         MB_DTYPE_F8E4M3, TENSOR_S, MB_DTYPE_F8E4M3, TENSOR_S, 0, 25.0,
         MB__WPREP_RTN, SPARSE_NOTE, MB__SPARSE_24},
    [MB_RECIPE_FLOAT8DQ_ROW_SEMI_SPARSE] =
        {"float8dq-row-semi-sparse", "float8dq-row on 2:4-pruned weights",
         MB_DTYPE_F8E4M3, COL_S, MB_DTYPE_F8E4M3, ROW_S, 0, 25.0, MB__WPREP_RTN,
         SPARSE_NOTE, MB__SPARSE_24},
};
#ifdef __clang__
#pragma clang diagnostic pop
#endif

const mb__recipe_row_t *mb__recipe_row(mb_recipe_t r) {
  return (unsigned)r < MB_RECIPE_COUNT ? &k_recipes[r] : NULL;
}

const char *mb_recipe_name(mb_recipe_t r) {
  return mb__recipe_row(r) ? mb__recipe_row(r)->name : "?";
}

const char *mb_recipe_summary(mb_recipe_t r) {
  return mb__recipe_row(r) ? mb__recipe_row(r)->summary : "?";
}

double mb_recipe_min_sqnr_db(mb_recipe_t r) {
  return mb__recipe_row(r) ? mb__recipe_row(r)->min_sqnr_db : 0.0;
}

int mb_recipe_trains(mb_recipe_t r) {
  /* Weight-only recipes freeze their weights: no training step. */
  /* Pruned weights are frozen too: torchao sparsifies for inference. */
  const mb__recipe_row_t *row = mb__recipe_row(r);
  return row && row->sparsity == MB__SPARSE_NONE &&
         (r == MB_RECIPE_BASELINE || row->aq != MB_DTYPE_NONE);
}

mb_status_t mb_recipe_from_name(const char *name, mb_recipe_t *out) {
  char valid[1024] = "";
  size_t len = 0;
  for (int r = 0; r < MB_RECIPE_COUNT; r++) {
    if (name && !strcmp(name, k_recipes[r].name)) {
      if (out) *out = (mb_recipe_t)r;
      return MB_OK;
    }
    len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%s",
                            r ? ", " : "", k_recipes[r].name);
  }
  return mb__fail(MB_ERR_NOT_FOUND, "unknown recipe \"%s\"; valid: %s",
                  name ? name : "(null)", valid);
}
