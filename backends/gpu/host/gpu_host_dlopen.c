/* GPU host layer — loading a vendor library at run time (hipBLASLt and
 * rocBLAS for HIP, cuBLASLt for CUDA): the file (an explicit path, an
 * environment variable, or the sonames in turn, with the most telling error
 * when none loads) and its entry points, resolved from a table into a
 * struct of typed pointers (memcpy from dlsym: ISO C has no cast between
 * object and function pointers). */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_host_dlopen.h"

static void loaded_name(void *dl, const char *fallback, char *out, size_t cap) {
  struct link_map *lm = NULL;
  if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
      lm->l_name[0])
    snprintf(out, cap, "%s", lm->l_name);
  else
    snprintf(out, cap, "%s", fallback);
}

static void *gpuh_dlopen(const char *lib, const char *path, const char *env,
                         const char *const *sonames, size_t n_sonames,
                         char *loaded, size_t loaded_cap, char *why,
                         size_t cap) {
  const char *from_env = env ? getenv(env) : NULL;
  const char *file = path ? path : (from_env && *from_env ? from_env : NULL);
  if (file) {
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
      const char *e = dlerror();
      if (path)
        snprintf(why, cap, "cannot load %s: %s", file, e ? e : "?");
      else
        snprintf(why, cap, "cannot load %s (from %s): %s", file, env,
                 e ? e : "?");
      return NULL;
    }
    loaded_name(dl, file, loaded, loaded_cap);
    return dl;
  }
  /* The first error, unless a later name exists but cannot load (a missing
   * dependency, say): that one says more than "No such file". */
  char first[200] = "";
  for (size_t i = 0; i < n_sonames; i++) {
    void *dl = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (dl) {
      loaded_name(dl, sonames[i], loaded, loaded_cap);
      return dl;
    }
    const char *e = dlerror();
    e = e ? e : "?";
    if (!first[0] ||
        (strstr(first, "No such file") && !strstr(e, "No such file")))
      snprintf(first, sizeof first, "%s", e);
  }
  char tried[200] = "";
  size_t n = 0;
  for (size_t i = 0; i < n_sonames && n < sizeof tried; i++)
    n += (size_t)snprintf(tried + n, sizeof tried - n, "%s%s", i ? ", " : "",
                          sonames[i]);
  snprintf(why, cap,
           "none of %s is on the library path (%s); set %s to the %s "
           "library's file",
           tried, first, env ? env : "its path", lib);
  return NULL;
}

static int gpuh_resolve(void *dl, void *obj, const mb_gpuh_sym_t *syms,
                        size_t n, const char *lib, const char *loaded,
                        char *why, size_t cap) {
  for (size_t i = 0; i < n; i++) {
    void *p = dlsym(dl, syms[i].name);
    if (!p) {
      snprintf(why, cap, "%s (%s) has no entry point %s", lib, loaded,
               syms[i].name);
      return -1;
    }
    memcpy((char *)obj + syms[i].offset, &p, sizeof p);
  }
  return 0;
}

void *mb__gpuh_load(const mb_gpuh_lib_t *lib, const char *path, char *loaded,
                    size_t loaded_cap, char *why, size_t cap) {
  char file[512];
  void *dl = gpuh_dlopen(lib->name, path, lib->env, lib->sonames,
                         lib->n_sonames, file, sizeof file, why, cap);
  if (!dl) return NULL;
  void **obj = calloc(1, lib->size);
  if (!obj) {
    snprintf(why, cap, "%s: out of host memory", lib->name);
  } else if (gpuh_resolve(dl, obj, lib->syms, lib->n_syms, lib->name, file, why,
                          cap) == 0) {
    *obj = dl;
    if (loaded) snprintf(loaded, loaded_cap, "%s", file);
    return obj;
  }
  free(obj);
  dlclose(dl);
  return NULL;
}
