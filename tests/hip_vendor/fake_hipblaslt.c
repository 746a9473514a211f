/* A fake hipBLASLt for test_hip_vendor: a shared library exporting the
 * entry points the HIP backend calls, with the real library's names and C
 * ABI (ROCm/hipBLASLt library/include/hipblaslt.h), that records every
 * type, compute type, op and pointer handed to it and returns success
 * without touching a GPU. The test reads the records through
 * fake_lt_get() (dlsym), and steers the fake with fake_lt_set().
 *
 * Build variants (compile definitions):
 *   FAKE_VERSION=n    what hipblasLtGetVersion reports (default 100000:
 *                     1.0.0; the "old" variant reports 600: 0.6.0)
 *   FAKE_NO_MATMUL    leaves hipblasLtMatmul out (a broken install) */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 100000
#endif

#define EXPORT __attribute__((visibility("default")))

/* hipblasStatus_t (hipblas-common.h) */
enum { OK = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 3 };

/* hipblasLtMatmulDescAttributes_t, hipblasLtMatmulPreferenceAttributes_t */
enum { TRANSA = 0, TRANSB = 1, A_SCALE_POINTER = 5, B_SCALE_POINTER = 6 };
enum { PREF_MAX_WORKSPACE_BYTES = 1 };

typedef struct {
  uint8_t data[16];
  size_t max_workspace_bytes;
} algo_t;
typedef struct {
  algo_t algo;
  size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
} heur_t;

#define MAX_LAYOUTS 16

typedef struct {
  int type;
  uint64_t rows, cols;
  int64_t ld;
} layout_t;

/* Everything recorded; reset by fake_lt_set("reset", 0). */
typedef struct fake {
  int handle;    /* what hipblasLtCreate hands out */
  int desc_slot; /* the one matmul descriptor */
  int descs, compute, scale_type, transa, transb;
  const void *a_scale, *b_scale;
  int a_scale_set, b_scale_set;
  layout_t layouts[MAX_LAYOUTS];
  int num_layouts, layouts_destroyed;
  int pref_slot;
  uint64_t pref_ws;
  int candidates; /* how many algorithms the heuristic offers */
  int heuristics;
  int matmuls, matmul_status;
  int mm_a, mm_b, mm_c, mm_d; /* layout indices of the last matmul */
  const void *p_a, *p_b, *p_c, *p_d;
  uint32_t alpha_bits, beta_bits;
  int32_t algo_index;
  size_t mm_workspace;
  void *mm_stream;
} fake_t;
static fake_t g = {.candidates = 1};

static int layout_index(const void *l) {
  const layout_t *p = l;
  return (p >= g.layouts && p < g.layouts + MAX_LAYOUTS) ? (int)(p - g.layouts)
                                                         : -1;
}

EXPORT int hipblasLtGetVersion(void *handle, int *version) {
  /* As the real one: the handle is only compared with NULL. */
  if (!handle) return NOT_INITIALIZED;
  *version = FAKE_VERSION;
  return OK;
}

EXPORT int hipblasLtCreate(void **handle) {
  *handle = &g.handle;
  return OK;
}

EXPORT int hipblasLtDestroy(void *handle) {
  return handle == &g.handle ? OK : INVALID_VALUE;
}

EXPORT int hipblasLtMatmulDescCreate(void **desc, int compute, int scale) {
  g.descs++;
  g.compute = compute;
  g.scale_type = scale;
  *desc = &g.desc_slot;
  return OK;
}

EXPORT int hipblasLtMatmulDescDestroy(void *desc) {
  return desc == &g.desc_slot ? OK : INVALID_VALUE;
}

EXPORT int hipblasLtMatmulDescSetAttribute(void *desc, int attr,
                                           const void *buf, size_t size) {
  if (desc != &g.desc_slot || !buf) return INVALID_VALUE;
  switch (attr) {
    case TRANSA:
    case TRANSB:
      if (size != sizeof(int32_t)) return INVALID_VALUE;
      memcpy(attr == TRANSA ? &g.transa : &g.transb, buf, sizeof(int32_t));
      return OK;
    case A_SCALE_POINTER:
    case B_SCALE_POINTER:
      if (size != sizeof(void *)) return INVALID_VALUE;
      memcpy(attr == A_SCALE_POINTER ? &g.a_scale : &g.b_scale, buf,
             sizeof(void *));
      ++*(attr == A_SCALE_POINTER ? &g.a_scale_set : &g.b_scale_set);
      return OK;
    default:
      return INVALID_VALUE;
  }
}

EXPORT int hipblasLtMatrixLayoutCreate(void **layout, int type, uint64_t rows,
                                       uint64_t cols, int64_t ld) {
  if (g.num_layouts == MAX_LAYOUTS) return INVALID_VALUE;
  layout_t *l = &g.layouts[g.num_layouts++];
  *l = (layout_t){type, rows, cols, ld};
  *layout = l;
  return OK;
}

EXPORT int hipblasLtMatrixLayoutDestroy(void *layout) {
  if (layout_index(layout) < 0) return INVALID_VALUE;
  g.layouts_destroyed++;
  return OK;
}

EXPORT int hipblasLtMatmulPreferenceCreate(void **pref) {
  *pref = &g.pref_slot;
  return OK;
}

EXPORT int hipblasLtMatmulPreferenceDestroy(void *pref) {
  return pref == &g.pref_slot ? OK : INVALID_VALUE;
}

EXPORT int hipblasLtMatmulPreferenceSetAttribute(void *pref, int attr,
                                                 const void *buf, size_t size) {
  if (pref != &g.pref_slot || attr != PREF_MAX_WORKSPACE_BYTES ||
      size != sizeof(uint64_t))
    return INVALID_VALUE;
  memcpy(&g.pref_ws, buf, sizeof g.pref_ws);
  return OK;
}

EXPORT int hipblasLtMatmulAlgoGetHeuristic(void *handle, void *desc, void *a,
                                           void *b, void *c, void *d,
                                           void *pref, int requested,
                                           heur_t *results, int *returned) {
  (void)a, (void)b, (void)c, (void)d;
  if (handle != &g.handle || desc != &g.desc_slot || pref != &g.pref_slot ||
      requested <= 0)
    return INVALID_VALUE;
  g.heuristics++;
  int n = g.candidates < requested ? g.candidates : requested;
  for (int i = 0; i < n; i++) {
    memset(&results[i], 0, sizeof results[i]);
    const int32_t index = 42 + i; /* the solution index, as the real one */
    memcpy(results[i].algo.data, &index, sizeof index);
    results[i].state = OK;
    results[i].waves_count = 1.0f;
  }
  *returned = n;
  return OK;
}

#ifndef FAKE_NO_MATMUL
EXPORT int hipblasLtMatmul(void *handle, void *desc, const void *alpha,
                           const void *a, void *adesc, const void *b,
                           void *bdesc, const void *beta, const void *c,
                           void *cdesc, void *d, void *ddesc,
                           const algo_t *algo, void *workspace,
                           size_t workspace_bytes, void *stream) {
  (void)workspace;
  if (handle != &g.handle || desc != &g.desc_slot || !alpha || !beta || !algo)
    return INVALID_VALUE;
  g.matmuls++;
  g.mm_a = layout_index(adesc);
  g.mm_b = layout_index(bdesc);
  g.mm_c = layout_index(cdesc);
  g.mm_d = layout_index(ddesc);
  g.p_a = a, g.p_b = b, g.p_c = c, g.p_d = d;
  memcpy(&g.alpha_bits, alpha, sizeof g.alpha_bits);
  memcpy(&g.beta_bits, beta, sizeof g.beta_bits);
  memcpy(&g.algo_index, algo->data, sizeof g.algo_index);
  g.mm_workspace = workspace_bytes;
  g.mm_stream = stream;
  return g.matmul_status;
}
#endif

/* ---- for the test -------------------------------------------------------- */

EXPORT void fake_lt_set(const char *key, long long v) {
  if (!strcmp(key, "reset")) {
    memset(&g, 0, sizeof g);
    g.candidates = 1;
  } else if (!strcmp(key, "candidates")) {
    g.candidates = (int)v;
  } else if (!strcmp(key, "matmul_status")) {
    g.matmul_status = (int)v;
  }
}

/* A recorded value; `i` indexes the layouts. -1 for an unknown key. */
EXPORT long long fake_lt_get(const char *key, int i) {
  const layout_t *l = (i >= 0 && i < MAX_LAYOUTS) ? &g.layouts[i] : g.layouts;
  static const struct {
    const char *key;
    size_t off;
  } k_ints[] = {
      {"descs", offsetof(fake_t, descs)},
      {"compute", offsetof(fake_t, compute)},
      {"scale_type", offsetof(fake_t, scale_type)},
      {"transa", offsetof(fake_t, transa)},
      {"transb", offsetof(fake_t, transb)},
      {"a_scale_set", offsetof(fake_t, a_scale_set)},
      {"b_scale_set", offsetof(fake_t, b_scale_set)},
      {"layouts", offsetof(fake_t, num_layouts)},
      {"layouts_destroyed", offsetof(fake_t, layouts_destroyed)},
      {"heuristics", offsetof(fake_t, heuristics)},
      {"matmuls", offsetof(fake_t, matmuls)},
      {"mm_a", offsetof(fake_t, mm_a)},
      {"mm_b", offsetof(fake_t, mm_b)},
      {"mm_c", offsetof(fake_t, mm_c)},
      {"mm_d", offsetof(fake_t, mm_d)},
  };
  for (size_t k = 0; k < sizeof k_ints / sizeof k_ints[0]; k++)
    if (!strcmp(key, k_ints[k].key)) {
      int v;
      memcpy(&v, (const char *)&g + k_ints[k].off, sizeof v);
      return v;
    }
  if (!strcmp(key, "layout_type")) return l->type;
  if (!strcmp(key, "layout_rows")) return (long long)l->rows;
  if (!strcmp(key, "layout_cols")) return (long long)l->cols;
  if (!strcmp(key, "layout_ld")) return l->ld;
  if (!strcmp(key, "pref_ws")) return (long long)g.pref_ws;
  if (!strcmp(key, "alpha_bits")) return g.alpha_bits;
  if (!strcmp(key, "beta_bits")) return g.beta_bits;
  if (!strcmp(key, "algo_index")) return g.algo_index;
  if (!strcmp(key, "mm_workspace")) return (long long)g.mm_workspace;
  if (!strcmp(key, "p_a")) return (long long)(intptr_t)g.p_a;
  if (!strcmp(key, "p_b")) return (long long)(intptr_t)g.p_b;
  if (!strcmp(key, "p_c")) return (long long)(intptr_t)g.p_c;
  if (!strcmp(key, "p_d")) return (long long)(intptr_t)g.p_d;
  if (!strcmp(key, "a_scale")) return (long long)(intptr_t)g.a_scale;
  if (!strcmp(key, "b_scale")) return (long long)(intptr_t)g.b_scale;
  if (!strcmp(key, "stream")) return (long long)(intptr_t)g.mm_stream;
  return -1;
}
