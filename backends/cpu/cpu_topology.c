/* CPU backend — what the machine is (hwloc) and thread pinning.
 *
 * hwloc loads only the resources this process may use (cgroups' cpuset),
 * so "cores" is what we can actually run on; a binding it was started
 * with (taskset, mpirun) bounds the threads' team, below. */
#include "cpu_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Cache levels from the outermost in, to find the last level. */
static const hwloc_obj_type_t cache_levels_outer_first[] = {
    HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
    HWLOC_OBJ_L1CACHE};

/* Size of one cache of `type` divided among the cores sharing it. */
static uint64_t cache_per_core(hwloc_topology_t topo, hwloc_obj_type_t type) {
  hwloc_obj_t c = hwloc_get_obj_by_type(topo, type, 0);
  if (!c || !c->attr) return 0;
  int sharing =
      hwloc_get_nbobjs_inside_cpuset_by_type(topo, c->cpuset, HWLOC_OBJ_CORE);
  return c->attr->cache.size / (uint64_t)(sharing > 0 ? sharing : 1);
}

/* Total size of all caches of the outermost level present. */
static uint64_t last_level_total(hwloc_topology_t topo) {
  const size_t n =
      sizeof cache_levels_outer_first / sizeof cache_levels_outer_first[0];
  for (size_t i = 0; i < n; ++i) {
    const int count =
        hwloc_get_nbobjs_by_type(topo, cache_levels_outer_first[i]);
    if (count <= 0) continue;
    uint64_t total = 0;
    for (int j = 0; j < count; ++j) {
      hwloc_obj_t c =
          hwloc_get_obj_by_type(topo, cache_levels_outer_first[i], (unsigned)j);
      if (c && c->attr) total += c->attr->cache.size;
    }
    return total;
  }
  return 0;
}

/* "AMD EPYC 9654", or "2 x AMD EPYC 9654" on a two-socket machine. */
/* hwloc sums the NUMA nodes' meminfo, which some VMs leave short of the real
 * total (memory hot-plugged outside any node: 4.4 of 24 GiB on our CI VM);
 * the kernel's physical page count is then the truer figure. */
static uint64_t memory_bytes(hwloc_topology_t topo) {
  uint64_t numa = hwloc_get_root_obj(topo)->total_memory;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  return phys > numa ? phys : numa;
}

static void model_name(hwloc_topology_t topo, char *buf, size_t size) {
  const int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  const char *model = obj ? hwloc_obj_get_info_by_name(obj, "CPUModel") : NULL;
  if (!model)
    model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "CPUModel");
  if (!model || !*model) model = "CPU";
  if (packages > 1)
    snprintf(buf, size, "%d x %s", packages, model);
  else
    snprintf(buf, size, "%s", model);
}

/* cpufreq reports kHz; virtual machines usually have no cpufreq at all. */
static double max_clock_hz(void) {
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
  if (!f) return 0.0;
  unsigned long long khz = 0;
  const int ok = fscanf(f, "%llu", &khz) == 1;
  fclose(f);
  return ok ? 1e3 * (double)khz : 0.0;
}

#ifdef _OPENMP
/* The cpuset the team is pinned inside: the binding the process was
 * started with, or the whole topology when it could not be read. */
static hwloc_const_cpuset_t team_set(const mb_cpu_state_t *st) {
  return st->saved_binding ? st->saved_binding
                           : hwloc_topology_get_topology_cpuset(st->topo);
}

/* The i-th core wholly inside the team's set, else its i-th PU (a binding
 * to single PUs of SMT cores holds no whole core). */
static hwloc_obj_t team_slot(const mb_cpu_state_t *st, unsigned i) {
  hwloc_const_cpuset_t set = team_set(st);
  hwloc_obj_t o =
      hwloc_get_obj_inside_cpuset_by_type(st->topo, set, HWLOC_OBJ_CORE, i);
  return o ? o
           : hwloc_get_obj_inside_cpuset_by_type(st->topo, set, HWLOC_OBJ_PU,
                                                 i);
}

/* How many threads the team's set holds: its cores, else its PUs; 0 when
 * it holds none of this topology's (then the machine's count stands). */
static unsigned bound_count(const mb_cpu_state_t *st) {
  hwloc_const_cpuset_t set = team_set(st);
  int n = hwloc_get_nbobjs_inside_cpuset_by_type(st->topo, set, HWLOC_OBJ_CORE);
  if (n <= 0)
    n = hwloc_get_nbobjs_inside_cpuset_by_type(st->topo, set, HWLOC_OBJ_PU);
  return n > 0 ? (unsigned)n : 0u;
}

#endif

mb_status_t mb__cpu_topology_init(mb_cpu_state_t *st) {
  if (hwloc_topology_init(&st->topo) != 0) {
    MB_CPU_ERROR(st, "cpu: hwloc_topology_init failed");
    return MB_ERR_BACKEND;
  }
  if (hwloc_topology_load(st->topo) != 0) {
    MB_CPU_ERROR(st, "cpu: hwloc_topology_load failed");
    hwloc_topology_destroy(st->topo);
    st->topo = NULL;
    return MB_ERR_BACKEND;
  }
  int cores = hwloc_get_nbobjs_by_type(st->topo, HWLOC_OBJ_CORE);
  if (cores <= 0) cores = hwloc_get_nbobjs_by_type(st->topo, HWLOC_OBJ_PU);
  st->cores = cores > 0 ? (unsigned)cores : 1u;
#ifdef _OPENMP
  st->threads = st->cores;
#else
  st->threads = 1;
#endif
  model_name(st->topo, st->name, sizeof st->name);
  st->memory_bytes = memory_bytes(st->topo);
  st->cache_bytes[0] = cache_per_core(st->topo, HWLOC_OBJ_L1CACHE);
  st->cache_bytes[1] = cache_per_core(st->topo, HWLOC_OBJ_L2CACHE);
  st->cache_bytes[2] = last_level_total(st->topo);
  st->clock_hz = max_clock_hz();

  /* Pinning binds the calling thread too (it is thread 0 of its team); keep
   * its binding so fini can give the application its thread back. */
  st->init_thread = pthread_self();
  st->saved_binding = hwloc_bitmap_alloc();
  if (st->saved_binding && hwloc_get_cpubind(st->topo, st->saved_binding,
                                             HWLOC_CPUBIND_THREAD) != 0) {
    hwloc_bitmap_free(st->saved_binding);
    st->saved_binding = NULL;
  }
#ifdef _OPENMP
  /* A launcher's binding (mpirun binds each rank to its own core; taskset,
   * numactl) is where this process is meant to run, and hwloc's allowed
   * set does not include it: the team is one thread per core inside it.
   * Pinning over the whole machine put thread 0 of every rank of an
   * mpirun -n 2 on the first core, two ranks polling MPI on one core. */
  const unsigned inside = bound_count(st);
  if (inside) st->threads = inside;
#endif
  return MB_OK;
}

void mb__cpu_topology_fini(mb_cpu_state_t *st) {
  if (!st->topo) return;
  if (st->saved_binding && st->pinned &&
      pthread_equal(st->pinned_master, pthread_self()))
    hwloc_set_cpubind(st->topo, st->saved_binding, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(st->saved_binding);
  hwloc_topology_destroy(st->topo);
  st->topo = NULL;
}

#ifdef _OPENMP
/* Binds the calling thread to one PU of the team's i-th core; 1 if not. */
static int bind_slot(const mb_cpu_state_t *st, unsigned i) {
  hwloc_obj_t core = team_slot(st, i);
  hwloc_cpuset_t set = core ? hwloc_bitmap_dup(core->cpuset) : NULL;
  if (!set) return 1;
  hwloc_bitmap_singlify(set);
  const int failed = hwloc_set_cpubind(st->topo, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return failed != 0;
}
#endif

/* One thread per core, on one PU of it (not its SMT sibling), so that timings
 * do not depend on where the scheduler happens to put threads and two threads
 * never share a core's FMA units. libgomp keeps a team's threads for the next
 * parallel region of the same size from the same thread, so this binding
 * holds for our regions and for oneDNN's, which all use `threads` threads.
 * Another calling thread has another team: time_batch and flush_cache call
 * this again; with the team already pinned it binds only this thread, and
 * only when mb__cpu_release_master let it go (one system call). */
void mb__cpu_pin_threads(mb_cpu_state_t *st) {
#ifdef _OPENMP
  if (st->pinned && pthread_equal(st->pinned_master, pthread_self())) {
    if (!st->master_bound && bind_slot(st, 0) == 0) st->master_bound = 1;
    return;
  }
  omp_set_num_threads((int)st->threads);
  int failed = 0;
#pragma omp parallel num_threads(st->threads) reduction(+ : failed)
  failed += bind_slot(st, (unsigned)omp_get_thread_num());
  if (failed)
    MB_CPU_LOG(st, MB_LOG_WARN,
               "cpu: could not pin %d of %u OpenMP threads to their cores; "
               "timings may be noisier",
               failed, st->threads);
  st->pinned_master = pthread_self();
  st->pinned = 1;
  st->master_bound = 1;
#else
  (void)st;
#endif
}

void mb__cpu_release_master(mb_cpu_state_t *st) {
#ifdef _OPENMP
  if (!st->master_bound || !st->saved_binding ||
      !pthread_equal(st->pinned_master, pthread_self()) ||
      !pthread_equal(st->init_thread, pthread_self()))
    return;
  if (hwloc_set_cpubind(st->topo, st->saved_binding, HWLOC_CPUBIND_THREAD) == 0)
    st->master_bound = 0;
#else
  (void)st;
#endif
}
