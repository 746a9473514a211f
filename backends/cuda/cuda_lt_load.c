/* CUDA backend — cuBLASLt, loaded at run time.
 *
 * Linked, libcublasLt (about 500 MB of file, most of it kernels) was mapped
 * by every process that loaded this module, GPU or not: `mbench list
 * backends` on a machine without a driver took twice as long for it. It is
 * now dlopen'ed when the backend has a device (cuda_open), through the GPU
 * host layer's loader (gpu_host_dlopen.c, which HIP's vendor libraries use
 * too), and only the entry points below are resolved. The types and enum
 * values still come from cublasLt.h, at compile time: so the library must
 * be the major version of that header (the soname says so), found on the
 * library path, else beside the toolkit this module was built with. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_internal.h"
#include "gpu_host_dlopen.h"

/* The toolkit's library directory (CMake's CUDAToolkit_LIBRARY_DIR). */
#ifndef MB_CUDA_LIBRARY_DIR
#define MB_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

#define MB_STR_(x) #x
#define MB_STR(x) MB_STR_(x)
#define MB_CUBLASLT_SONAME "libcublasLt.so." MB_STR(CUBLAS_VER_MAJOR)

#define SYM(name, field) \
  { name, offsetof(mb_cuda_lt_t, field) }
static const mb_gpuh_sym_t k_syms[] = {
    SYM("cublasLtGetVersion", get_version),
    SYM("cublasLtGetStatusString", status_string),
    SYM("cublasLtCreate", create),
    SYM("cublasLtDestroy", destroy),
    SYM("cublasLtMatmulDescCreate", desc_create),
    SYM("cublasLtMatmulDescDestroy", desc_destroy),
    SYM("cublasLtMatmulDescSetAttribute", desc_set),
    SYM("cublasLtMatrixLayoutCreate", layout_create),
    SYM("cublasLtMatrixLayoutDestroy", layout_destroy),
    SYM("cublasLtMatmulPreferenceCreate", pref_create),
    SYM("cublasLtMatmulPreferenceDestroy", pref_destroy),
    SYM("cublasLtMatmulPreferenceSetAttribute", pref_set),
    SYM("cublasLtMatmulAlgoGetHeuristic", heuristic),
    SYM("cublasLtMatmulAlgoCheck", algo_check),
    SYM("cublasLtMatmulAlgoConfigGetAttribute", algo_config_get),
    SYM("cublasLtMatmul", matmul),
};
#undef SYM

/* The soname first (LD_LIBRARY_PATH, the module's RUNPATH, ld.so.cache),
 * then the toolkit's own copy by its full path, which a build tree finds
 * without any of those. */
static const char *const k_files[] = {
    MB_CUBLASLT_SONAME, MB_CUDA_LIBRARY_DIR "/" MB_CUBLASLT_SONAME};

mb_cuda_lt_t *mb__cuda_lt_open(char *why, size_t cap) {
  static const mb_gpuh_lib_t spec = MB_GPUH_LIB(
      "cuBLASLt", "MB_CUBLASLT_LIBRARY", k_files, k_syms, mb_cuda_lt_t);
  mb_cuda_lt_t *lt = mb__gpuh_load(&spec, NULL, NULL, 0, why, cap);
  if (!lt) return NULL;
  const size_t v = lt->get_version();
  if (v / 10000 != CUBLAS_VER_MAJOR) {
    snprintf(why, cap,
             "cuBLASLt %zu.%zu.%zu is not the major version this module "
             "was built with (%d), whose types and enums it may not share; "
             "set MB_CUBLASLT_LIBRARY to a cuBLASLt %d",
             v / 10000, (v / 100) % 100, v % 100, CUBLAS_VER_MAJOR,
             CUBLAS_VER_MAJOR);
    mb__cuda_lt_close(lt);
    return NULL;
  }
  lt->version = v;
  snprintf(lt->version_text, sizeof lt->version_text, "cuBLASLt %zu.%zu.%zu",
           v / 10000, (v / 100) % 100, v % 100);
  return lt;
}

void mb__cuda_lt_close(mb_cuda_lt_t *lt) {
  if (!lt) return;
  dlclose(lt->dl);
  free(lt);
}
