/* CPU backend — facts about the machine and how the benchmarks run on it
 * (the result's environment block), and the per-sample telemetry hook.
 *
 * Everything is read once, at init, right after the OpenMP team is pinned:
 * the topology and caches from hwloc; where each benchmark thread is bound,
 * asked of the OS from inside the team rather than assumed; the cpufreq
 * policy of the bound CPUs from sysfs; the OpenMP variables that move
 * threads. A fact that cannot be read (no cpufreq in a VM, no NUMA memory
 * size, an unset variable) is left out, never guessed.
 *
 * MB_CPU_FSROOT, for tests only (like hwloc's HWLOC_FSROOT): sysfs and
 * /proc/cpuinfo are read under this directory instead of /, so the cpufreq
 * path can be tested where there is no cpufreq. The facts then say so
 * (`fsroot`); the topology still comes from the real machine. */
#include "cpu_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hwloc reports only its API version at run time; the release is
 * pkg-config's (see CMakeLists.txt). */
#ifndef MB_CPU_HWLOC_RELEASE
#define MB_CPU_HWLOC_RELEASE NULL
#endif

/* ---- adding facts -------------------------------------------------------- */

/* `owned` (malloc'd) becomes the state's; otherwise `text` must be static.
 * Both NULL: the fact is the number `value`. */
static void add(mb_cpu_state_t *st, const char *key, const char *text,
                char *owned, double value) {
  if (st->num_facts == MB_CPU_MAX_FACTS) {
    MB_CPU_LOG(st, MB_LOG_WARN,
               "cpu: more than %d environment facts; %s is left out "
               "(raise MB_CPU_MAX_FACTS)",
               MB_CPU_MAX_FACTS, key);
    free(owned);
    return;
  }
  mb_kernel_note_t *f = &st->facts[st->num_facts];
  f->key = key;
  f->text = owned ? owned : text;
  f->value = f->text ? 0.0 : value;
  st->fact_text[st->num_facts++] = owned;
}

static void add_number(mb_cpu_state_t *st, const char *key, double value) {
  add(st, key, NULL, NULL, value);
}

static void add_copy(mb_cpu_state_t *st, const char *key, const char *text) {
  char *copy = strdup(text);
  if (copy) add(st, key, NULL, copy, 0.0);
}

/* A growing string; on allocation failure it is dropped, and so the fact. */
typedef struct text {
  char *buf;
  size_t len, cap;
  int failed;
} text_t;

static void text_addf(text_t *t, const char *fmt, ...) MB__PRINTF(2, 3);
static void text_addf(text_t *t, const char *fmt, ...) {
  if (t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(t->buf ? t->buf + t->len : NULL,
                            t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) break;
    if (t->buf && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    const size_t cap = 2 * (t->len + (size_t)n + 1);
    char *grown = realloc(t->buf, cap);
    if (!grown) break;
    t->buf = grown;
    t->cap = cap;
  }
  t->failed = 1;
}

static void add_text(mb_cpu_state_t *st, const char *key, text_t *t) {
  if (t->failed || !t->buf) {
    free(t->buf);
    return;
  }
  add(st, key, NULL, t->buf, 0.0);
}

/* A number when every instance agrees, else "min-max". */
static void add_range(mb_cpu_state_t *st, const char *key, uint64_t min,
                      uint64_t max) {
  if (min == max) {
    add_number(st, key, (double)min);
    return;
  }
  text_t t = {0};
  text_addf(&t, "%llu-%llu", (unsigned long long)min, (unsigned long long)max);
  add_text(st, key, &t);
}

/* ---- topology (hwloc) ---------------------------------------------------- */

static void count_facts(mb_cpu_state_t *st) {
  static const struct {
    const char *key;
    hwloc_obj_type_t type;
  } counts[] = {{"packages", HWLOC_OBJ_PACKAGE},
                {"cores", HWLOC_OBJ_CORE},
                {"pus", HWLOC_OBJ_PU},
                {"numa_nodes", HWLOC_OBJ_NUMANODE}};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    const int n = hwloc_get_nbobjs_by_type(st->topo, counts[i].type);
    if (n > 0) add_number(st, counts[i].key, n);
  }
}

/* PUs per core: 1 without SMT; a range on hybrid parts (P and E cores). */
static void smt_fact(mb_cpu_state_t *st) {
  const int cores = hwloc_get_nbobjs_by_type(st->topo, HWLOC_OBJ_CORE);
  uint64_t min = UINT64_MAX, max = 0;
  for (int i = 0; i < cores; ++i) {
    hwloc_obj_t core =
        hwloc_get_obj_by_type(st->topo, HWLOC_OBJ_CORE, (unsigned)i);
    const int pus = hwloc_get_nbobjs_inside_cpuset_by_type(
        st->topo, core->cpuset, HWLOC_OBJ_PU);
    if (pus <= 0) continue;
    if ((uint64_t)pus < min) min = (uint64_t)pus;
    if ((uint64_t)pus > max) max = (uint64_t)pus;
  }
  if (max > 0) add_range(st, "smt", min, max);
}

/* "node0:5722MiB node1:5722MiB" by OS node number. hwloc's figures, which
 * some VMs leave short of the machine's memory (see cpu_topology.c). */
static void numa_memory_fact(mb_cpu_state_t *st) {
  const int nodes = hwloc_get_nbobjs_by_type(st->topo, HWLOC_OBJ_NUMANODE);
  text_t t = {0};
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t node =
        hwloc_get_obj_by_type(st->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
    /* 0 is what hwloc says when it does not know: left out. */
    if (!node->attr || !node->attr->numanode.local_memory) continue;
    text_addf(&t, "%snode%u:%lluMiB", t.len ? " " : "", node->os_index,
              (unsigned long long)(node->attr->numanode.local_memory >> 20));
  }
  add_text(st, "numa_memory", &t);
}

/* Size of one instance (a range when instances differ) and how many. */
static void cache_facts(mb_cpu_state_t *st) {
  static const struct {
    hwloc_obj_type_t type;
    const char *bytes_key, *count_key;
  } levels[] = {{HWLOC_OBJ_L1CACHE, "l1d_bytes", "l1d_count"},
                {HWLOC_OBJ_L2CACHE, "l2_bytes", "l2_count"},
                {HWLOC_OBJ_L3CACHE, "l3_bytes", "l3_count"}};
  for (size_t l = 0; l < sizeof levels / sizeof levels[0]; ++l) {
    const int n = hwloc_get_nbobjs_by_type(st->topo, levels[l].type);
    if (n <= 0) continue;
    uint64_t min = UINT64_MAX, max = 0;
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t c =
          hwloc_get_obj_by_type(st->topo, levels[l].type, (unsigned)i);
      if (!c->attr || !c->attr->cache.size) continue; /* size unknown */
      if (c->attr->cache.size < min) min = c->attr->cache.size;
      if (c->attr->cache.size > max) max = c->attr->cache.size;
    }
    if (max > 0) add_range(st, levels[l].bytes_key, min, max);
    add_number(st, levels[l].count_key, n);
  }
}

/* "0-3,8-11" in OS CPU numbers. */
static void add_cpuset(mb_cpu_state_t *st, const char *key,
                       hwloc_const_cpuset_t set) {
  char *list = NULL;
  if (set && hwloc_bitmap_list_asprintf(&list, set) >= 0 && list)
    add(st, key, NULL, list, 0.0);
  else
    free(list);
}

/* ---- where the benchmark threads run ------------------------------------- */

typedef struct place {
  hwloc_bitmap_t set; /* the thread's binding; NULL when unreadable */
  int last;           /* the PU it last ran on; -1 unknown */
} place_t;

static void read_place(hwloc_topology_t topo, place_t *p) {
  hwloc_bitmap_t where = hwloc_bitmap_alloc();
  p->last = -1;
  if (where &&
      hwloc_get_last_cpu_location(topo, where, HWLOC_CPUBIND_THREAD) == 0)
    p->last = hwloc_bitmap_first(where);
  hwloc_bitmap_free(where);
  p->set = hwloc_bitmap_alloc();
  if (p->set && hwloc_get_cpubind(topo, p->set, HWLOC_CPUBIND_THREAD) != 0) {
    hwloc_bitmap_free(p->set);
    p->set = NULL;
  }
}

/* Each thread of the team the benchmarks use (the same size, from this
 * thread, so libgomp hands back the pinned team) reports its own binding.
 * Returns the team size; places[0..team) are filled. */
static unsigned read_team(mb_cpu_state_t *st, place_t *places) {
#ifdef _OPENMP
  unsigned team = 0;
  hwloc_topology_t topo = st->topo;
  const unsigned n = st->threads;
#pragma omp parallel num_threads(n)
  {
    const unsigned t = (unsigned)omp_get_thread_num();
    if (t == 0) team = (unsigned)omp_get_num_threads();
    if (t < n) read_place(topo, &places[t]);
  }
  return team < n ? team : n;
#else
  read_place(st->topo, &places[0]);
  return 1;
#endif
}

/* "t0:pu0(core0) t1:pu1(core1)": the OS CPU number and hwloc's logical core
 * index; "t0:pus0-3(on pu2)" for a thread bound to several PUs (pinning
 * failed), with the one it last ran on. */
static void place_text(hwloc_topology_t topo, text_t *t, unsigned thread,
                       const place_t *p) {
  text_addf(t, "%st%u:", t->len ? " " : "", thread);
  if (p->set && hwloc_bitmap_weight(p->set) == 1) {
    const unsigned pu = (unsigned)hwloc_bitmap_first(p->set);
    text_addf(t, "pu%u", pu);
    hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(topo, pu);
    hwloc_obj_t core =
        obj ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, obj) : NULL;
    if (core) text_addf(t, "(core%u)", core->logical_index);
    return;
  }
  char *list = NULL;
  if (p->set && hwloc_bitmap_list_asprintf(&list, p->set) >= 0 && list)
    text_addf(t, "pus%s", list);
  else
    text_addf(t, "unknown");
  free(list);
  if (p->last >= 0) text_addf(t, "(on pu%d)", p->last);
}

/* The threads and binding facts, and st->bound: the PUs the threads are
 * bound to, or where unreadable, where they ran; if nothing at all is
 * known, every PU we may use. */
static void binding_facts(mb_cpu_state_t *st) {
  st->bound = hwloc_bitmap_alloc();
  place_t *places = calloc(st->threads, sizeof *places);
  if (!st->bound || !places) {
    free(places);
    return;
  }
  mb__cpu_pin_threads(st); /* a no-op: init pinned this thread's team */
  const unsigned team = read_team(st, places);
  text_t t = {0};
  for (unsigned i = 0; i < team; ++i) {
    place_text(st->topo, &t, i, &places[i]);
    if (places[i].set)
      hwloc_bitmap_or(st->bound, st->bound, places[i].set);
    else if (places[i].last >= 0)
      hwloc_bitmap_set(st->bound, (unsigned)places[i].last);
  }
  if (hwloc_bitmap_iszero(st->bound))
    hwloc_bitmap_copy(st->bound, hwloc_topology_get_allowed_cpuset(st->topo));
  if (team) add_number(st, "threads", team);
  add_text(st, "binding", &t);
  for (unsigned i = 0; i < st->threads; ++i) hwloc_bitmap_free(places[i].set);
  free(places);
}

/* ---- sysfs and the environment ------------------------------------------- */

/* The first line of a small file under the fs root, without its newline. */
static int read_line(const mb_cpu_state_t *st, const char *path, char *buf,
                     size_t size) {
  char full[4096];
  if (!mb__cpu_fs_path(st, full, sizeof full, "%s", path)) return 0;
  FILE *f = fopen(full, "r");
  if (!f) return 0;
  const int ok = fgets(buf, (int)size, f) != NULL;
  fclose(f);
  if (!ok) return 0;
  buf[strcspn(buf, "\n")] = '\0';
  return buf[0] != '\0';
}

/* One value per bound CPU: the value when they all agree, else
 * "cpu0:performance cpu1:powersave" for those readable. */
static void per_cpu_fact(mb_cpu_state_t *st, const char *key,
                         const char *file) {
  text_t list = {0};
  char first[128] = "", value[128], path[256];
  int read = 0, same = 1;
  for (int cpu = hwloc_bitmap_first(st->bound); cpu >= 0;
       cpu = hwloc_bitmap_next(st->bound, cpu)) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/%s", cpu, file);
    if (!read_line(st, path, value, sizeof value)) {
      same = 0;
      continue;
    }
    if (!read++) snprintf(first, sizeof first, "%s", value);
    same = same && strcmp(first, value) == 0;
    text_addf(&list, "%scpu%d:%s", list.len ? " " : "", cpu, value);
  }
  if (read && same) {
    free(list.buf);
    add_copy(st, key, first);
  } else if (read) {
    add_text(st, key, &list);
  } else {
    free(list.buf);
  }
}

/* A file holding one value: a number when it is one. */
static void file_fact(mb_cpu_state_t *st, const char *key, const char *path) {
  char value[128];
  if (!read_line(st, path, value, sizeof value)) return;
  char *end;
  const double v = strtod(value, &end);
  if (end != value && *end == '\0')
    add_number(st, key, v);
  else
    add_copy(st, key, value);
}

static void cpufreq_facts(mb_cpu_state_t *st) {
  static const struct {
    const char *key, *file;
  } per_cpu[] = {{"governor", "cpufreq/scaling_governor"},
                 {"cpufreq_driver", "cpufreq/scaling_driver"}};
  /* boost: 1 lets cores run above the base clock (acpi-cpufreq,
   * amd-pstate); intel_pstate says the same inverted, in no_turbo. */
  static const struct {
    const char *key, *path;
  } global[] = {{"boost", "/sys/devices/system/cpu/cpufreq/boost"},
                {"intel_pstate_no_turbo",
                 "/sys/devices/system/cpu/intel_pstate/no_turbo"}};
  for (size_t i = 0; i < sizeof per_cpu / sizeof per_cpu[0]; ++i)
    per_cpu_fact(st, per_cpu[i].key, per_cpu[i].file);
  for (size_t i = 0; i < sizeof global / sizeof global[0]; ++i)
    file_fact(st, global[i].key, global[i].path);
}

/* Variables that decide how many OpenMP threads run and where, when set.
 * The pinning overrides placement for our own team, but oneDNN and the
 * caller's regions may follow them; the wait policy decides whether idle
 * threads spin or sleep between regions, which short kernels feel. */
static void openmp_facts(mb_cpu_state_t *st) {
  static const struct {
    const char *key, *var;
  } vars[] = {{"omp_num_threads", "OMP_NUM_THREADS"},
              {"omp_thread_limit", "OMP_THREAD_LIMIT"},
              {"omp_places", "OMP_PLACES"},
              {"omp_proc_bind", "OMP_PROC_BIND"},
              {"omp_wait_policy", "OMP_WAIT_POLICY"},
              {"gomp_cpu_affinity", "GOMP_CPU_AFFINITY"},
              {"kmp_affinity", "KMP_AFFINITY"}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
    const char *v = getenv(vars[i].var);
    if (v && *v) add_copy(st, vars[i].key, v);
  }
}

static void hwloc_version_fact(mb_cpu_state_t *st) {
  const unsigned api = hwloc_get_api_version();
  const char *release = MB_CPU_HWLOC_RELEASE;
  text_t t = {0};
  if (release) text_addf(&t, "%s ", release);
  text_addf(&t, "(API %u.%u.%u)", api >> 16, (api >> 8) & 0xffu, api & 0xffu);
  add_text(st, "hwloc_version", &t);
}

static void read_fsroot(mb_cpu_state_t *st) {
  const char *root = getenv("MB_CPU_FSROOT");
  if (!root || !*root) return;
  st->fsroot_len = strlen(root);
  if (st->fsroot_len >= sizeof st->fsroot) {
    MB_CPU_LOG(st, MB_LOG_WARN,
               "cpu: MB_CPU_FSROOT is %zu characters long, at most %zu are "
               "supported; no sysfs or /proc facts and no clock",
               st->fsroot_len, sizeof st->fsroot - 1);
    return;
  }
  memcpy(st->fsroot, root, st->fsroot_len + 1);
  MB_CPU_LOG(st, MB_LOG_WARN,
             "cpu: MB_CPU_FSROOT=%s: sysfs and /proc/cpuinfo are read there, "
             "not from this machine (a setting for tests)",
             st->fsroot);
}

/* ---- the hooks ----------------------------------------------------------- */

void mb__cpu_env_init(mb_cpu_state_t *st) {
  read_fsroot(st);
  count_facts(st);
  smt_fact(st);
  numa_memory_fact(st);
  cache_facts(st);
  binding_facts(st);
  add_cpuset(st, "cpuset_allowed", hwloc_topology_get_allowed_cpuset(st->topo));
  /* What the process was started with (taskset, numactl, a launcher). */
  add_cpuset(st, "cpuset_inherited", st->saved_binding);
  if (st->bound) {
    mb__cpu_clock_open(st);
    add(st, "clock_source", st->clock.source, NULL, 0.0);
    cpufreq_facts(st);
  }
  openmp_facts(st);
  hwloc_version_fact(st);
  if (st->fsroot[0]) add_copy(st, "fsroot", st->fsroot);
}

void mb__cpu_env_fini(mb_cpu_state_t *st) {
  mb__cpu_clock_close(&st->clock);
  for (uint32_t i = 0; i < st->num_facts; ++i) free(st->fact_text[i]);
  st->num_facts = 0;
  hwloc_bitmap_free(st->bound);
  st->bound = NULL;
}

uint32_t mb__cpu_environment(void *state, uint32_t dev, mb_kernel_note_t *out,
                             uint32_t max) {
  const mb_cpu_state_t *st = state;
  if (dev != 0) return 0;
  const uint32_t n = max < st->num_facts ? max : st->num_facts;
  if (n) memcpy(out, st->facts, n * sizeof *out);
  return st->num_facts;
}

/* Only the members the caller's struct holds; clock_before_hz is the
 * runner's (it keeps the clock read before the sample there). */
#define MB__CPU_HOLDS(out, member) \
  ((out)->struct_size >=           \
   offsetof(mb_telemetry_t, member) + sizeof((out)->member))

mb_status_t mb__cpu_telemetry(void *state, uint32_t dev, mb_telemetry_t *out) {
  mb_cpu_state_t *st = state;
  if (dev != 0) {
    MB_CPU_ERROR(st, "cpu: no device %u (the cpu backend has device 0 only)",
                 dev);
    return MB_ERR_NOT_FOUND;
  }
  if (MB__CPU_HOLDS(out, sm_clock_hz)) out->sm_clock_hz = mb__cpu_clock_hz(st);
  /* Not read by this backend: package power would need RAPL (root-only on
   * current kernels), temperature a hwmon driver we cannot name portably. */
  if (MB__CPU_HOLDS(out, mem_clock_hz)) out->mem_clock_hz = NAN;
  if (MB__CPU_HOLDS(out, power_w)) out->power_w = NAN;
  if (MB__CPU_HOLDS(out, temp_c)) out->temp_c = NAN;
  if (MB__CPU_HOLDS(out, throttle)) out->throttle = 0;
  return MB_OK;
}
