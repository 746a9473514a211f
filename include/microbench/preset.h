/* libmicrobench — GEMM shape presets (the torchao and JAX-suite names).
 *
 * A preset expands to a list of named [M, K, N] shapes, exactly as
 * docs/ops.md lists them; generated names are unique within a list.
 *
 * Threading: presets are constant data; a shape list is an independent
 * object. */
#ifndef MICROBENCH_PRESET_H
#define MICROBENCH_PRESET_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of presets, and preset i's name and one-line summary (static). */
MB_API size_t mb_preset_count(void);
MB_API const char *mb_preset_name(size_t index, const char **summary);

/* Parameters of the generated presets. 0 / NULL / 0 take the preset's
 * defaults (pow2, pow2_extended, small_sweep: 10..14; sweep: 8..15; the
 * model presets: M in {16384, 128000}). */
typedef struct mb_preset_params {
  uint32_t struct_size;
  int min_power, max_power;
  const int64_t *m_values; /* the M values of the model presets */
  size_t num_m_values;
} mb_preset_params_t;

#define MB_PRESET_PARAMS_INIT \
  { sizeof(mb_preset_params_t), 0, 0, NULL, 0u }

typedef struct mb_shape_list mb_shape_list_t;

/* Expands preset `name` (NULL params: defaults). `custom` has no shapes of
 * its own: its shapes come from a config file, so asking for it here is an
 * error that says so. Unknown names and bad powers (0..30, min <= max) are
 * errors listing the valid choices. The caller owns *out. */
MB_API mb_status_t mb_preset_shapes(const char *name,
                                    const mb_preset_params_t *params,
                                    mb_shape_list_t **out);
MB_API size_t mb_shape_list_count(const mb_shape_list_t *list);
/* Shape i: its name (owned by the list) and mkn = {M, K, N}. */
MB_API mb_status_t mb_shape_list_get(const mb_shape_list_t *list, size_t i,
                                     const char **name, int64_t mkn[3]);
/* NULL is a no-op. */
MB_API void mb_shape_list_destroy(mb_shape_list_t *list);

#ifdef __cplusplus
}
#endif
#endif
