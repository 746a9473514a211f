/* mbench under an MPI launcher (mpirun, srun): whether one started it, and
 * the communicator over its ranks from libmicrobench_mpi, loaded at run
 * time: mbench never links MPI, starts as fast without it, and a build
 * without MPI still runs everything that is not distributed. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The environment each launcher gives its ranks: Open MPI's mpirun, the
 * PMI-1/2 launchers (MPICH's hydra, srun --mpi=pmi2) and PMIx (srun
 * --mpi=pmix, Open MPI 4's own), whose size is only known once MPI is up:
 * "*" there. */
static const struct {
  const char *var;
  int gives_size;
} k_launch_vars[] = {
    {"OMPI_COMM_WORLD_SIZE", 1},
    {"PMI_SIZE", 1},
    {"PMIX_RANK", 0},
};

int cli_mpi_launched(void) {
  for (size_t i = 0; i < sizeof k_launch_vars / sizeof *k_launch_vars; i++) {
    const char *v = getenv(k_launch_vars[i].var);
    if (!v || !*v) continue;
    if (!k_launch_vars[i].gives_size) return 1;
    if (strtol(v, NULL, 10) > 1) return 1;
  }
  return 0;
}

/* libmicrobench_mpi beside libmicrobench (the build tree and an install
 * keep them together), else wherever the loader looks. */
static void *open_mpi_library(char *why, size_t cap) {
  static const char k_name[] = "libmicrobench_mpi.so.0";
  Dl_info info;
  char path[4096];
  if (dladdr((void *)mb_version, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash) {
      snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname),
               info.dli_fname, k_name);
      void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
      if (h) return h;
    }
  }
  void *h = dlopen(k_name, RTLD_NOW | RTLD_GLOBAL);
  if (!h) snprintf(why, cap, "%s", dlerror());
  return h;
}

int cli_mpi_world(const char *cmd, int *argc, char ***argv, mb_comm_t **out,
                  void **lib) {
  typedef mb_status_t (*world_fn)(int *, char ***, mb_comm_t **);
  char why[1024] = "";
  *out = NULL;
  *lib = open_mpi_library(why, sizeof why);
  world_fn world = *lib ? (world_fn)dlsym(*lib, "mb_mpi_world") : NULL;
  if (!world)
    return cli_error(cmd,
                     "an MPI launcher started this process, but "
                     "libmicrobench_mpi cannot be loaded (%s): this mbench "
                     "was built without MPI (Debian: libopenmpi-dev "
                     "openmpi-bin, then rebuild), or the library is not "
                     "beside libmicrobench",
                     *why ? why : "no mb_mpi_world in it");
  if (world(argc, argv, out) != MB_OK)
    return cli_error(cmd, "MPI: %s", mb_error_last());
  return 0;
}
