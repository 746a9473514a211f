/* A fake rocBLAS for test_hip_vendor: a shared library exporting the entry
 * points the HIP backend calls, with the real library's names and C ABI
 * (ROCm/rocBLAS library/include/internal/rocblas-auxiliary.h,
 * rocblas-functions.h), that records every argument of rocblas_gemm_ex
 * and returns success without touching a GPU. The test reads the records
 * through fake_rb_get() (dlsym).
 *
 * Build variants (compile definitions):
 *   FAKE_VERSION="..." what rocblas_get_version_string reports (default
 *                      "4.3.0.60300-fake"; the "old" variant "3.1.0...")
 *   FAKE_NO_GEMM       leaves rocblas_gemm_ex out (a broken install) */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION "4.3.0.60300-fake"
#endif

#define EXPORT __attribute__((visibility("default")))

/* rocblas_status (rocblas-types.h) */
enum { OK = 0, INVALID_HANDLE = 1, INVALID_POINTER = 3, INVALID_SIZE = 4 };

typedef struct fake {
  int handle;
  void *stream;
  int streams_set;
  int gemms, gemm_status;
  int trans_a, trans_b;
  int32_t m, n, k, lda, ldb, ldc, ldd;
  int a_type, b_type, c_type, d_type, compute, algo;
  int32_t solution;
  uint32_t flags;
  const void *a, *b, *c;
  void *d;
  uint32_t alpha_bits, beta_bits;
} fake_t;
static fake_t g;

EXPORT int rocblas_create_handle(void **handle) {
  *handle = &g.handle;
  return OK;
}

EXPORT int rocblas_destroy_handle(void *handle) {
  return handle == &g.handle ? OK : INVALID_HANDLE;
}

EXPORT int rocblas_set_stream(void *handle, void *stream) {
  if (handle != &g.handle) return INVALID_HANDLE;
  g.stream = stream;
  g.streams_set++;
  return OK;
}

EXPORT int rocblas_get_version_string_size(size_t *len) {
  if (!len) return INVALID_POINTER;
  *len = sizeof FAKE_VERSION;
  return OK;
}

EXPORT int rocblas_get_version_string(char *buf, size_t len) {
  if (!buf) return INVALID_POINTER;
  if (len < sizeof FAKE_VERSION) return INVALID_SIZE;
  memcpy(buf, FAKE_VERSION, sizeof FAKE_VERSION);
  return OK;
}

#ifndef FAKE_NO_GEMM
EXPORT int rocblas_gemm_ex(void *handle, int trans_a, int trans_b, int32_t m,
                           int32_t n, int32_t k, const void *alpha,
                           const void *a, int a_type, int32_t lda,
                           const void *b, int b_type, int32_t ldb,
                           const void *beta, const void *c, int c_type,
                           int32_t ldc, void *d, int d_type, int32_t ldd,
                           int compute, int algo, int32_t solution,
                           uint32_t flags) {
  if (handle != &g.handle) return INVALID_HANDLE;
  if (!alpha || !beta) return INVALID_POINTER;
  g.gemms++;
  g.trans_a = trans_a, g.trans_b = trans_b;
  g.m = m, g.n = n, g.k = k;
  g.lda = lda, g.ldb = ldb, g.ldc = ldc, g.ldd = ldd;
  g.a_type = a_type, g.b_type = b_type, g.c_type = c_type, g.d_type = d_type;
  g.compute = compute, g.algo = algo, g.solution = solution, g.flags = flags;
  g.a = a, g.b = b, g.c = c, g.d = d;
  memcpy(&g.alpha_bits, alpha, sizeof g.alpha_bits);
  memcpy(&g.beta_bits, beta, sizeof g.beta_bits);
  return g.gemm_status;
}
#endif

/* ---- for the test -------------------------------------------------------- */

EXPORT void fake_rb_set(const char *key, long long v) {
  if (!strcmp(key, "reset")) memset(&g, 0, sizeof g);
  if (!strcmp(key, "gemm_status")) g.gemm_status = (int)v;
}

/* A recorded value; -1 for an unknown key. */
EXPORT long long fake_rb_get(const char *key) {
  static const struct {
    const char *key;
    size_t off;
  } k_ints[] = {
      {"gemms", offsetof(fake_t, gemms)},
      {"streams_set", offsetof(fake_t, streams_set)},
      {"trans_a", offsetof(fake_t, trans_a)},
      {"trans_b", offsetof(fake_t, trans_b)},
      {"m", offsetof(fake_t, m)},
      {"n", offsetof(fake_t, n)},
      {"k", offsetof(fake_t, k)},
      {"lda", offsetof(fake_t, lda)},
      {"ldb", offsetof(fake_t, ldb)},
      {"ldc", offsetof(fake_t, ldc)},
      {"ldd", offsetof(fake_t, ldd)},
      {"a_type", offsetof(fake_t, a_type)},
      {"b_type", offsetof(fake_t, b_type)},
      {"c_type", offsetof(fake_t, c_type)},
      {"d_type", offsetof(fake_t, d_type)},
      {"compute", offsetof(fake_t, compute)},
      {"algo", offsetof(fake_t, algo)},
      {"solution", offsetof(fake_t, solution)},
      {"flags", offsetof(fake_t, flags)},
      {"alpha_bits", offsetof(fake_t, alpha_bits)},
      {"beta_bits", offsetof(fake_t, beta_bits)},
  };
  for (size_t i = 0; i < sizeof k_ints / sizeof k_ints[0]; i++)
    if (!strcmp(key, k_ints[i].key)) {
      int32_t v;
      memcpy(&v, (const char *)&g + k_ints[i].off, sizeof v);
      return v;
    }
  if (!strcmp(key, "p_a")) return (long long)(intptr_t)g.a;
  if (!strcmp(key, "p_b")) return (long long)(intptr_t)g.b;
  if (!strcmp(key, "p_c")) return (long long)(intptr_t)g.c;
  if (!strcmp(key, "p_d")) return (long long)(intptr_t)g.d;
  if (!strcmp(key, "stream")) return (long long)(intptr_t)g.stream;
  return -1;
}
