/* CPU backend — the backend state and what the files of the module share.
 *
 * Everything mutable lives in one mb_cpu_state_t created by init() and freed
 * by fini(); the module has no other mutable global. */
#ifndef MB_CPU_INTERNAL_H
#define MB_CPU_INTERNAL_H

#include <microbench/sys/backend.h>

#include "mb_cache_file.h"

#include <hwloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef MB_HAVE_ONEDNN
#include <dnnl.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

/* The portable kernels are compiled for the baseline ISA and, where GCC can,
 * cloned for AVX2+FMA and AVX-512 with run-time dispatch (ifunc), so one
 * module binary is fast on every x86-64 and still runs on the oldest. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    __GNUC__ >= 12
#define MB_CPU_CLONES \
  __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define MB_CPU_CLONES
#endif

/* Where the bound cores' clock is read from (cpu_clock.c). */
typedef enum mb_cpu_clock_kind {
  MB_CPU_CLOCK_NONE,
  MB_CPU_CLOCK_CPUFREQ, /* sysfs scaling_cur_freq, one fd per bound CPU */
  MB_CPU_CLOCK_CPUINFO  /* /proc/cpuinfo "cpu MHz" */
} mb_cpu_clock_kind_t;

typedef struct mb_cpu_clock {
  mb_cpu_clock_kind_t kind;
  const char *source; /* static; the clock_source fact */
  int *fds;           /* CPUFREQ: in the order of the bound CPUs */
  unsigned num_fds;
  int cpuinfo_fd; /* CPUINFO: open while buf is */
  char *buf;      /* CPUINFO: read buffer, allocated once */
  size_t buf_size;
} mb_cpu_clock_t;

/* More than the environment facts cpu_env.c can produce. */
#define MB_CPU_MAX_FACTS 40

typedef struct mb_cpu_state {
  mb_host_api_t host; /* our copy: the caller's table need not outlive us */

  /* Topology (cpu_topology.c). */
  hwloc_topology_t topo;
  unsigned cores;   /* cores we may run on; >= 1 */
  unsigned threads; /* OpenMP threads, one per core (1 without OpenMP) */
  char name[128];   /* "AMD EPYC 9654" */
  uint64_t memory_bytes;
  uint64_t cache_bytes[3]; /* L1d per core, L2 per core, last level total */
  double clock_hz;
  hwloc_cpuset_t saved_binding; /* the init thread's binding, restored */
  pthread_t init_thread;        /* whose binding that is */
  pthread_t pinned_master;      /* whose OpenMP team is pinned */
  int pinned;
  int master_bound; /* pinned_master is on its core now (not released) */

  /* Peaks (cpu_peak.c), FLOP/s per input dtype; 0 = unknown. */
  double peak[MB_DTYPE_COUNT];
  /* The vector loops' alone (no AMX tiles): the roof of the ops that are
   * not matrix multiplies (peak_for). */
  double peak_vector[MB_DTYPE_COUNT];
  char peak_source[1024]; /* with where it came from: cache path, age */

  /* Cache flush buffer (cpu_flush.c), allocated on first use. */
  uint64_t *flush_buf;
  size_t flush_words;
  uint64_t flush_epoch;
  uint64_t flush_sink; /* what the read flush read, so it is not elided */

  char version[224];

  /* The operands' large buffers, each a mapping of its own (cpu_memory.c):
   * where each was mapped, to unmap it when the core frees it. */
  struct mb_cpu_mapping *maps;
  size_t num_maps, cap_maps;

  /* Environment facts and the bound cores' clock (cpu_env.c, cpu_clock.c),
   * read once at init after pinning. */
  char fsroot[256];     /* "" or MB_CPU_FSROOT: stands for / (tests only) */
  size_t fsroot_len;    /* its true length; >= sizeof fsroot: unusable */
  hwloc_cpuset_t bound; /* the PUs the benchmark threads are bound to */
  mb_cpu_clock_t clock;
  mb_kernel_note_t facts[MB_CPU_MAX_FACTS];
  char *fact_text[MB_CPU_MAX_FACTS]; /* what facts[i].text owns, or NULL */
  uint32_t num_facts;

#ifdef MB_HAVE_ONEDNN
  dnnl_engine_t engine; /* NULL: oneDNN unusable, see onednn_why */
  dnnl_stream_t stream;
  char onednn_why[160];
#endif
} mb_cpu_state_t;

/* c[rows x cols] += a[rows x depth] . b[depth x cols] in f32, c with `cols`
 * per row (cpu_gemm_c.c): the portable GEMMs' inner kernel, cloned per ISA. */
void mb__cpu_block_multiply(size_t rows, size_t cols, size_t depth,
                            const float *a, size_t lda, const float *b,
                            size_t ldb, float *restrict c);

/* The collectives (cpu_coll.c): a supports/prepare pair per kind
 * (mb__cpu_coll_ALL_REDUCE_prepare, ...), one run and release. */
#define MB__CPU_COLL_DECL(E, name_)                                           \
  mb_status_t mb__cpu_coll_##E##_supports(                                    \
      void *bstate, uint32_t dev, const mb_op_params_t *p, const char **why); \
  mb_status_t mb__cpu_coll_##E##_prepare(                                     \
      void *bstate, const mb_kernel_call_t *call, void **kstate);
MB_COLL_MAP(MB__CPU_COLL_DECL)
#undef MB__CPU_COLL_DECL
mb_status_t mb__cpu_coll_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_coll_release(void *kstate);

#define MB_CPU_ERROR(st, ...) ((st)->host.set_error(__VA_ARGS__))
#define MB_CPU_LOG(st, level, ...) \
  ((st)->host.log((st)->host.host, (level), __VA_ARGS__))

/* ---- OpenMP without OpenMP ------------------------------------------------
 * The module builds without OpenMP (then everything runs on one thread). */
static inline unsigned mb__cpu_thread_id(void) {
#ifdef _OPENMP
  return (unsigned)omp_get_thread_num();
#else
  return 0;
#endif
}

/* Threads in the current OpenMP team (1 outside one or without OpenMP). */
static inline unsigned mb__cpu_team_size(void) {
#ifdef _OPENMP
  return (unsigned)omp_get_num_threads();
#else
  return 1;
#endif
}

static inline double mb__cpu_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- cpu_topology.c ------------------------------------------------------ */
mb_status_t mb__cpu_topology_init(mb_cpu_state_t *st);
void mb__cpu_topology_fini(mb_cpu_state_t *st);
/* Binds the calling thread's OpenMP team one thread per core. Untimed;
 * when this thread's team is already pinned, only binds this thread again
 * if mb__cpu_release_master let it go. */
void mb__cpu_pin_threads(mb_cpu_state_t *st);
/* Gives the init thread, thread 0 of the pinned team, its own binding back
 * between our calls (init, time_batch and flush end with it): the library
 * fills operands and checks results on threads it starts from the calling
 * thread, which inherit its binding, so all of them shared thread 0's one
 * core. The other threads of the team stay on their cores. */
void mb__cpu_release_master(mb_cpu_state_t *st);

/* ---- cpu_env.c ----------------------------------------------------------- */
/* Reads the facts and opens the clock; after mb__cpu_pin_threads. Never
 * fails: what cannot be read is left out. */
void mb__cpu_env_init(mb_cpu_state_t *st);
void mb__cpu_env_fini(mb_cpu_state_t *st);
/* The vtable's environment and telemetry hooks. */
uint32_t mb__cpu_environment(void *state, uint32_t dev, mb_kernel_note_t *out,
                             uint32_t max);
mb_status_t mb__cpu_telemetry(void *state, uint32_t dev, mb_telemetry_t *out);

/* ---- cpu_clock.c --------------------------------------------------------- */
/* Picks the clock source for st->bound (sets st->clock). */
void mb__cpu_clock_open(mb_cpu_state_t *st);
void mb__cpu_clock_close(mb_cpu_clock_t *c);
/* Mean clock of the bound CPUs now, Hz; NAN when unreadable. */
double mb__cpu_clock_hz(mb_cpu_state_t *st);
/* st->fsroot followed by the formatted path; 0 when it does not fit. */
int mb__cpu_fs_path(const mb_cpu_state_t *st, char *buf, size_t size,
                    const char *fmt, ...) MB__PRINTF(4, 5);

/* ---- cpu_peak.c ---------------------------------------------------------- */
/* st->peak and st->peak_source: from the cache when it holds this machine's,
 * else measured (and saved). After pinning and mb__cpu_env_init. */
void mb__cpu_peak_measure(mb_cpu_state_t *st);

/* ---- cpu_peak_cache.c ---------------------------------------------------- */
typedef struct mb_cpu_peak_cache {
  char path[MB_CACHE_FILE_PATH]; /* "" when there is no cache directory */
  char key[512];                 /* the key lines the file must hold */
  int remeasure; /* MB_REMEASURE_PEAK set: never read, still written */
} mb_cpu_peak_cache_t;

/* Where the cache is and this machine's key; `loops` names the ISA loops
 * the measurement would use. */
void mb__cpu_peak_cache_init(mb_cpu_state_t *st, const char *loops,
                             mb_cpu_peak_cache_t *c);
/* 1 with st->peak and st->peak_source (saying "cached ... ago") set from
 * the file; 0 when it has none for this key (missing, other key, garbage,
 * MB_REMEASURE_PEAK). */
int mb__cpu_peak_cache_load(mb_cpu_state_t *st, const mb_cpu_peak_cache_t *c);
/* Saves the freshly measured st->peak and st->peak_source, then adds to
 * peak_source where they were saved, or why they were not (never fails). */
void mb__cpu_peak_cache_store(mb_cpu_state_t *st, const mb_cpu_peak_cache_t *c);

/* ---- cpu_memory.c -------------------------------------------------------- */
mb_status_t mb__cpu_alloc(mb_cpu_state_t *st, size_t bytes, void **ptr);
/* An operand's buffer (the backend's alloc and free): as mb__cpu_alloc,
 * but from 2 MiB up a fresh mapping of its own, so that a buffer's pages
 * never depend on what the process allocated and freed before. */
mb_status_t mb__cpu_operand_alloc(mb_cpu_state_t *st, size_t bytes, void **ptr);
void mb__cpu_operand_free(mb_cpu_state_t *st, void *ptr);
void mb__cpu_memory_fini(mb_cpu_state_t *st);

/* ---- cpu_simd_elt.c: one rule for every kernel that streams ------------- */
/* Whether a kernel that touches `bytes` in all (inputs and outputs) should
 * stream its output past a last-level cache of `llc_bytes` (0: unknown):
 * copy, the element-wise kernels, the norms, softmax and dequantize. */
int mb__cpu_stream_stores(unsigned long long llc_bytes, size_t bytes);

/* ---- cpu_flush.c --------------------------------------------------------- */
mb_status_t mb__cpu_flush(mb_cpu_state_t *st, mb_flush_t how);
void mb__cpu_flush_fini(mb_cpu_state_t *st);

#ifdef MB_HAVE_ONEDNN
/* ---- cpu_onednn.c -------------------------------------------------------- */
/* Engine and stream; never fails: without them the oneDNN kernels say why. */
void mb__cpu_onednn_init(mb_cpu_state_t *st);
void mb__cpu_onednn_fini(mb_cpu_state_t *st);
/* "oneDNN 2.6.3 (cpu runtime OpenMP, isa avx512_core_bf16)" */
void mb__cpu_onednn_version(char *buf, size_t size);
#endif

/* ---- kernels: prepare / run / release ------------------------------------ */
mb_status_t mb__cpu_gemm_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                   void **kstate);
mb_status_t mb__cpu_gemm_c_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_gemm_c_release(void *kstate);

mb_status_t mb__cpu_add_c_prepare(void *bstate, const mb_kernel_call_t *call,
                                  void **kstate);
mb_status_t mb__cpu_add_c_run(void *kstate, const mb_kernel_call_t *call);
void mb__cpu_add_c_release(void *kstate);

#ifdef MB_HAVE_ONEDNN
/* The oneDNN kernels differ only in the primitive they build; running and
 * releasing a primitive is shared (cpu_onednn.c). */
mb_status_t mb__cpu_gemm_onednn_prepare(void *bstate,
                                        const mb_kernel_call_t *call,
                                        void **kstate);
mb_status_t mb__cpu_add_onednn_prepare(void *bstate,
                                       const mb_kernel_call_t *call,
                                       void **kstate);
mb_status_t mb__cpu_onednn_run(void *kstate, const mb_kernel_call_t *call);
/* The same on `stream`: a kernel that runs primitives from several threads
 * at once gives each thread its own stream (and its own primitives, each
 * with its own scratchpad). */
mb_status_t mb__cpu_onednn_run_on(void *kstate, const mb_kernel_call_t *call,
                                  dnnl_stream_t stream);
void mb__cpu_onednn_release(void *kstate);
#endif

#endif
