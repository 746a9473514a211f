/* GPU host layer — loading a vendor library at run time (gpu_host_dlopen.c):
 * what the HIP backend (hipBLASLt, rocBLAS) and the CUDA backend (cuBLASLt)
 * share. Only libc's dynamic loader: no GPU runtime is needed, so the
 * fakes of tests/hip_vendor compile it alone. */
#ifndef MB_GPU_HOST_DLOPEN_H
#define MB_GPU_HOST_DLOPEN_H

#include <stddef.h>

typedef struct mb_gpuh_sym {
  const char *name;
  size_t offset; /* of the function pointer in the library's struct */
} mb_gpuh_sym_t;

/* A vendor library as a struct of entry points: what to load and resolve. */
typedef struct mb_gpuh_lib {
  const char *name; /* "cuBLASLt", in messages */
  const char *env;  /* the variable that names the file to load */
  const char *const *sonames;
  size_t n_sonames;
  const mb_gpuh_sym_t *syms;
  size_t n_syms;
  size_t size; /* of the struct, whose first member is `void *dl` */
} mb_gpuh_lib_t;

/* The mb_gpuh_lib_t of arrays `sonames` and `syms` and a struct `type`. */
#define MB_GPUH_LIB(name, env, sonames, syms, type)                         \
  {                                                                         \
    (name), (env), (sonames), sizeof(sonames) / sizeof(sonames)[0], (syms), \
        sizeof(syms) / sizeof(syms)[0], sizeof(type)                        \
  }

/* Loads `path`, else the file named by the environment variable lib->env,
 * else the first of lib->sonames the dynamic linker finds (the file loaded
 * goes to loaded[loaded_cap] unless `loaded` is NULL); then a zeroed struct of
 * lib->size bytes (free() it after dlclose(its dl)) holding the handle and
 * every entry point, copied from dlsym (ISO C has no cast from object to
 * function pointers). NULL with why[cap] naming lib->name and what was tried
 * when no file loads, or naming the first missing entry point. */
void *mb__gpuh_load(const mb_gpuh_lib_t *lib, const char *path, char *loaded,
                    size_t loaded_cap, char *why, size_t cap);

#endif
