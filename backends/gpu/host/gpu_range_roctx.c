/* GPU host layer — roctx ranges (gpu_range.h): libroctx64 loaded at run
 * time, so the HIP module neither links nor needs it; a machine without it
 * runs the benchmarks without ranges. roctx keeps its range stack per
 * thread, as the library's calls are made. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_host_dlopen.h"
#include "gpu_range.h"

typedef struct roctx_lib {
  void *dl; /* first: mb__gpuh_load's contract */
  int (*push)(const char *message);
  int (*pop)(void);
} roctx_lib_t;

#define SYM(name, field) \
  { name, offsetof(roctx_lib_t, field) }
static const mb_gpuh_sym_t k_syms[] = {
    SYM("roctxRangePushA", push),
    SYM("roctxRangePop", pop),
};
#undef SYM
/* ROCm 6 ships libroctx64.so.4 (roctracer); the unversioned name is a
 * development link some installs have alone. */
static const char *const k_sonames[] = {"libroctx64.so.4", "libroctx64.so"};

static void *roctx_open(char *why, size_t cap) {
  static const mb_gpuh_lib_t spec =
      MB_GPUH_LIB("roctx", MB_GPUH_ROCTX_ENV, k_sonames, k_syms, roctx_lib_t);
  char file[512] = "", err[600] = "";
  roctx_lib_t *lib =
      mb__gpuh_load(&spec, NULL, file, sizeof file, err, sizeof err);
  if (lib)
    snprintf(why, cap, "roctx ranges through %s", file);
  else
    snprintf(why, cap, "no roctx ranges: %s", err);
  return lib;
}

static void roctx_push(void *r, const char *name) {
  (void)((roctx_lib_t *)r)->push(name);
}

static void roctx_pop(void *r) {
  (void)((roctx_lib_t *)r)->pop();
}

static void roctx_close(void *r) {
  roctx_lib_t *lib = r;
  if (!lib) return;
  dlclose(lib->dl);
  free(lib);
}

const mb_gpuh_range_api_t mb__gpuh_roctx_ranges = {
    .name = "roctx",
    .open = roctx_open,
    .push = roctx_push,
    .pop = roctx_pop,
    .close = roctx_close,
};
