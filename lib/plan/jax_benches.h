/* Internal: the JAX suite's benchmarks as our ops (jax_benches.c) — one
 * table mapping each benchmark_name to an op or alias, the parameters it
 * takes and the suite's defaults — read by the schema (schema_jax.c). */
#ifndef MB_LIB_PLAN_JAX_BENCHES_H
#define MB_LIB_PLAN_JAX_BENCHES_H

#include "plan/jax_names.h"

/* How a benchmark's parameters make our shape. */
typedef enum mb__jax_dims {
  MB__JAX_MKN,      /* m, k, n -> [M, K, N] */
  MB__JAX_MN,       /* m, n -> [M, N] */
  MB__JAX_ELEMENTS, /* num_elements -> [1, num_elements] */
  MB__JAX_MIB,      /* data_size_mib -> [MiB x 2048, 128] f32, as the
                       suite's host_device allocates it */
  MB__JAX_ATTN,     /* tokamax_splash_attention's (jax_attention.c) */
  MB__JAX_COLL      /* a collective's matrix_dim and mesh -> [N]
                       (jax_collectives.c) */
} mb__jax_dims_t;

#define MB__JAX_DTYPE 1u /* takes `dtype` */
#define MB__JAX_SCALE 2u /* takes `scale` (static scaling) */
/* takes in_dtype_str and out_dtype_str (str_to_dtype's names: fp8, bf16,
 * fp16, fp32), not `dtype` */
#define MB__JAX_INOUT 4u
/* takes gap_strategy: how the suite paces its runs (data generation and
 * blocking between them); recorded with the parameters, while our timing
 * method times the runs */
#define MB__JAX_GAP 8u
/* takes quant_dtype: the quantized output's dtype, a jax.numpy name (the
 * inference quantization's; default float8_e4m3fn) */
#define MB__JAX_QDTYPE 16u

typedef struct mb__jax_bench {
  const char *name; /* the suite's benchmark_name */
  const char *op;   /* our op or alias */
  mb__jax_dims_t dims;
  unsigned takes;     /* P_* */
  int dtype_required; /* the suite's function has no default for it */
  /* Set before the alias's presets (which fill only what is unset):
   * the suite's own defaults where they differ from the alias's. */
  mb_dtype_t dtype, dtype_out;
  uint32_t flags; /* MB_PARAM_* */
  /* swiglu_fwd splits its one [m, n] input into gate and up halves: our
   * silu_mul of [m, n/2] reads and writes the same bytes. */
  int split_n;
} mb__jax_bench_t;

/* The benchmark named `name`: *out when we run it; else *def when the
 * suite defines it (*out NULL: skip it, saying why); else an error at
 * n/path listing the names the suite defines. */
mb_status_t mb__jax_bench_lookup(mb__pb_t *pb, const mb_cfg_node_t *n,
                                 const char *path, const char *name,
                                 const mb__jax_bench_t **out,
                                 const mb__jax_name_t **def);
/* The op each combination of b runs after b->op, or NULL: the legacy
 * host_device times both directions of one transfer. */
const char *mb__jax_bench_then(const mb__jax_bench_t *b);
/* MB_OK when benchmark b takes parameter `key` (written as `written`, which
 * may carry a suffix), else an error at at/path listing what b takes. */
mb_status_t mb__jax_check_param(mb__pb_t *pb, const mb__jax_bench_t *b,
                                const mb_cfg_node_t *at, const char *path,
                                const char *key, const char *written);

#endif
