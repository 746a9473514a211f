/* CPU backend — the module's entry point, its vtable and kernel table, and
 * the small hooks (device info, memory, copies, timer).
 *
 * One device: the whole machine (the cores this process may use), with one
 * OpenMP thread pinned per core. */
#include "mb_backend_entry.h"
#include "cpu_internal.h"
#include "cpu_gemm_scaled.h"
#include "cpu_quant.h"
#include "cpu_eltwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hwloc reports only its API version at run time (2.9.0 has API 2.8.0); the
 * release comes from the build (pkg-config, see CMakeLists.txt). */
#ifndef MB_CPU_HWLOC_RELEASE
#define MB_CPU_HWLOC_RELEASE "?"
#endif

/* ---- instance ------------------------------------------------------------ */

static void cpu_fini(void *state) {
  mb_cpu_state_t *st = state;
  if (!st) return;
#ifdef MB_HAVE_ONEDNN
  mb__cpu_onednn_fini(st);
#endif
  mb__cpu_flush_fini(st);
  mb__cpu_memory_fini(st);
  mb__cpu_env_fini(st);
  mb__cpu_topology_fini(st);
  free(st);
}

/* The libraries and the threads the kernels run on: what the module's
 * speed depends on besides the CPU (the core keys its cached copy
 * bandwidth on it). */
static void format_version(mb_cpu_state_t *st) {
  char onednn[128] = "portable C only (built without oneDNN)";
#ifdef MB_HAVE_ONEDNN
  mb__cpu_onednn_version(onednn, sizeof onednn);
#endif
  const unsigned api = hwloc_get_api_version();
  snprintf(st->version, sizeof st->version,
           "%s, hwloc %s (API %u.%u.%u), %u thread%s", onednn,
           MB_CPU_HWLOC_RELEASE, api >> 16, (api >> 8) & 0xffu, api & 0xffu,
           st->threads, st->threads == 1 ? "" : "s");
}

static mb_status_t cpu_init(const mb_host_api_t *host, void **state) {
  mb_cpu_state_t *st = calloc(1, sizeof *st);
  if (!st) {
    host->set_error("cpu: cannot allocate the backend state");
    return MB_ERR_NO_MEMORY;
  }
  st->host = *host;
  st->host.struct_size = sizeof st->host;
  const mb_status_t status = mb__cpu_topology_init(st);
  if (status != MB_OK) {
    cpu_fini(st);
    return status;
  }
  mb__cpu_pin_threads(st);
  mb__cpu_env_init(st);
#ifdef MB_HAVE_ONEDNN
  mb__cpu_onednn_init(st);
#endif
  mb__cpu_peak_measure(st);
  format_version(st);
  MB_CPU_LOG(st, MB_LOG_DEBUG,
             "cpu: %s, %u cores, %u threads, peak f32 %.1f GFLOP/s, bf16 "
             "%.1f GFLOP/s (%s)",
             st->name, st->cores, st->threads, 1e-9 * st->peak[MB_DTYPE_F32],
             1e-9 * st->peak[MB_DTYPE_BF16], st->peak_source);
  mb__cpu_release_master(st);
  *state = st;
  return MB_OK;
}

static const char *cpu_version(void *state) {
  return ((const mb_cpu_state_t *)state)->version;
}

/* ---- device -------------------------------------------------------------- */

static uint32_t cpu_device_count(void *state, const char **why_none) {
  (void)state;
  if (why_none) *why_none = NULL;
  return 1;
}

static mb_status_t check_device(const mb_cpu_state_t *st, uint32_t dev) {
  if (dev == 0) return MB_OK;
  st->host.set_error("cpu: no device %u (the cpu backend has device 0 only)",
                     dev);
  return MB_ERR_NOT_FOUND;
}

static mb_status_t cpu_device_info(void *state, uint32_t dev,
                                   mb_device_info_t *out) {
  const mb_cpu_state_t *st = state;
  const mb_status_t status = check_device(st, dev);
  if (status != MB_OK) return status;
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  info.backend = "cpu";
  info.index = 0;
  info.name = st->name;
  info.kind = MB_DEVICE_CPU;
  info.memory_bytes = st->memory_bytes;
  info.mem_bw_bytes_per_s = 0.0; /* not measured (yet) */
  info.compute_units = st->cores;
  info.clock_hz = st->clock_hz;
  memcpy(info.cache_bytes, st->cache_bytes, sizeof info.cache_bytes);
  info.peak_source = st->peak_source;
  /* Fill only as much as the caller's struct holds. */
  const size_t size =
      out->struct_size < sizeof info ? out->struct_size : sizeof info;
  const uint32_t caller_size = out->struct_size;
  memcpy(out, &info, size);
  out->struct_size = caller_size;
  return MB_OK;
}

static double cpu_peak_flops(void *state, uint32_t dev, mb_dtype_t dtype) {
  const mb_cpu_state_t *st = state;
  if (dev != 0 || dtype <= MB_DTYPE_NONE || dtype >= MB_DTYPE_COUNT) return 0;
  return st->peak[dtype];
}

/* A matrix multiply may run on AMX tiles (oneDNN's bf16 and int8 GEMMs
 * do), so its roof is the dtype's peak, the machine's best; every other op
 * runs on the vector units, so its roof is the vector loops' peak. */
static double cpu_peak_for(void *state, uint32_t dev, const char *op,
                           const mb_op_params_t *p) {
  const mb_cpu_state_t *st = state;
  if (!strncmp(op, "gemm", 4)) return cpu_peak_flops(state, dev, p->dtype);
#ifdef MB_HAVE_ONEDNN
  /* bf16 attention's default kernel runs its Q K^T and P V tiles as
   * oneDNN matmuls, on AMX where the machine has it
   * (cpu_attention_onednn.c): held to the same roof as gemm. */
  if (!strcmp(op, "attention") && p->dtype == MB_DTYPE_BF16)
    return cpu_peak_flops(state, dev, p->dtype);
#endif
  if (dev != 0 || p->dtype <= MB_DTYPE_NONE || p->dtype >= MB_DTYPE_COUNT)
    return 0;
  return st->peak_vector[p->dtype];
}

/* ---- memory -------------------------------------------------------------- */

static mb_status_t cpu_alloc(void *state, uint32_t dev, size_t bytes,
                             void **ptr) {
  mb_cpu_state_t *st = state;
  const mb_status_t status = check_device(st, dev);
  return status != MB_OK ? status : mb__cpu_operand_alloc(st, bytes, ptr);
}

static void cpu_free(void *state, uint32_t dev, void *ptr) {
  (void)dev;
  mb__cpu_operand_free(state, ptr);
}

static mb_status_t cpu_copy(void *state, uint32_t dev, void *dst,
                            const void *src, size_t bytes) {
  (void)state, (void)dev;
  if (bytes) memcpy(dst, src, bytes);
  return MB_OK;
}

/* Every kernel has finished when it returns. */
static mb_status_t cpu_sync(void *state, uint32_t dev) {
  (void)state, (void)dev;
  return MB_OK;
}

static mb_status_t cpu_flush_cache_with(void *state, uint32_t dev,
                                        mb_flush_t how) {
  mb_cpu_state_t *st = state;
  mb_status_t status = check_device(st, dev);
  if (status == MB_OK) status = mb__cpu_flush(st, how);
  mb__cpu_release_master(st);
  return status;
}

static mb_status_t cpu_flush_cache(void *state, uint32_t dev) {
  return cpu_flush_cache_with(state, dev, MB_FLUSH_WRITE);
}

/* ---- timer --------------------------------------------------------------- */

static mb_status_t cpu_time_batch(void *state, uint32_t dev,
                                  mb_kernel_run_fn run, void *kstate,
                                  const mb_kernel_call_t *call, uint32_t batch,
                                  double *elapsed_ns) {
  mb_cpu_state_t *st = state;
  mb__cpu_pin_threads(st); /* untimed: this thread back on its core */
  (void)dev;
  struct timespec t0, t1;
  mb_status_t status = MB_OK;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint32_t i = 0; i < batch && status == MB_OK; ++i)
    status = run(kstate, call);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  mb__cpu_release_master(st); /* untimed */
  *elapsed_ns =
      1e9 * (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec);
  return status;
}

/* ---- the tables ---------------------------------------------------------- */

#define MB__CPU_KERNEL(op, impl, a, b, out, acc, prefix)                      \
  {                                                                           \
    sizeof(mb_backend_kernel_t), op, impl, MB_DTYPE_##a, MB_DTYPE_##b,        \
        MB_DTYPE_##out, MB_DTYPE_##acc, NULL, prefix##_prepare, prefix##_run, \
        prefix##_release, 0u, NULL, NULL                                      \
  }

/* A transfer (cpu_transfer_c.c): any dtype, a collect hook or NULL. */
#define MB__CPU_TRANSFER(op, prefix, collect)                               \
  {                                                                         \
    sizeof(mb_backend_kernel_t), op, "c", MB_DTYPE_NONE, MB_DTYPE_NONE,     \
        MB_DTYPE_NONE, MB_DTYPE_NONE, NULL, prefix##_prepare, prefix##_run, \
        prefix##_release, 0u, NULL, collect                                 \
  }

#define MB__CPU_ONEDNN(op, a, b, out, acc, prefix)                         \
  {                                                                        \
    sizeof(mb_backend_kernel_t), op, "onednn", MB_DTYPE_##a, MB_DTYPE_##b, \
        MB_DTYPE_##out, MB_DTYPE_##acc, NULL, prefix##_prepare,            \
        mb__cpu_onednn_run, mb__cpu_onednn_release, 0u, NULL, NULL         \
  }

/* The plain GEMM kernels do D = alpha A.B + beta D on the operands as they
 * are; scaled operands and quantize-inside variants match their dtypes too,
 * so these kernels must decline them (NULL supports would claim them). */
static mb_status_t plain_gemm_supports(void *bstate, uint32_t dev,
                                       const mb_op_params_t *p,
                                       const char **why) {
  (void)bstate;
  (void)dev;
  if (p->scale_a.mode != MB_SCALE_NONE || p->scale_b.mode != MB_SCALE_NONE ||
      (p->flags & MB_PARAM_QUANTIZE_INPUTS)) {
    *why = "plain GEMM: no scales, no quantize-inputs";
    return MB_ERR_UNSUPPORTED;
  }
  if (p->flags & MB_PARAM_TF32) {
    *why = "tf32: this CPU has no tf32 math (f32 GEMM runs in f32; drop tf32)";
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

#define MB__CPU_PLAIN_GEMM(impl, a, b, out, prefix, run, release)            \
  {                                                                          \
    sizeof(mb_backend_kernel_t), "gemm", impl, MB_DTYPE_##a, MB_DTYPE_##b,   \
        MB_DTYPE_##out, MB_DTYPE_F32, plain_gemm_supports, prefix##_prepare, \
        run, release, 0u, NULL, NULL                                         \
  }

/* A C kernel listed twice around oneDNN's entry for the same op and
 * dtype (every operand in one dtype, f32 compute): first where its AVX-512
 * loops run (faster than oneDNN 2.6's), last where they do not
 * (cpu_vec_first.c); exactly one of the two accepts on a given CPU. */
#define MB__CPU_C_VEC(op, a, prefix, sup)                                \
  {                                                                      \
    sizeof(mb_backend_kernel_t), op, "c", MB_DTYPE_##a, MB_DTYPE_##a,    \
        MB_DTYPE_##a, MB_DTYPE_F32, mb__cpu_vec_##sup, prefix##_prepare, \
        prefix##_run, prefix##_release, 0u, NULL, NULL                   \
  }
#define MB__CPU_C_NOVEC(op, a, prefix, sup)                                \
  {                                                                        \
    sizeof(mb_backend_kernel_t), op, "c", MB_DTYPE_##a, MB_DTYPE_##a,      \
        MB_DTYPE_##a, MB_DTYPE_F32, mb__cpu_novec_##sup, prefix##_prepare, \
        prefix##_run, prefix##_release, 0u, NULL, NULL                     \
  }

/* The first entry matching a request is its default: oneDNN first, but
 * where the C kernel's AVX-512 loops run (MB__CPU_C_VEC). Each family of
 * kernels lists its entries in its own .def file. */
static const mb_backend_kernel_t cpu_kernels[] = {
    MB__CPU_C_VEC("add", F32, mb__cpu_add_c, add),
    MB__CPU_C_VEC("add", BF16, mb__cpu_add_c, add),
#ifdef MB_HAVE_ONEDNN
    MB__CPU_PLAIN_GEMM("onednn", F32, F32, F32, mb__cpu_gemm_onednn,
                       mb__cpu_onednn_run, mb__cpu_onednn_release),
    MB__CPU_PLAIN_GEMM("onednn", BF16, BF16, BF16, mb__cpu_gemm_onednn,
                       mb__cpu_onednn_run, mb__cpu_onednn_release),
    MB__CPU_PLAIN_GEMM("onednn", BF16, BF16, F32, mb__cpu_gemm_onednn,
                       mb__cpu_onednn_run, mb__cpu_onednn_release),
    MB__CPU_ONEDNN("add", F32, F32, F32, F32, mb__cpu_add_onednn),
    MB__CPU_ONEDNN("add", BF16, BF16, BF16, F32, mb__cpu_add_onednn),
#endif
    MB__CPU_PLAIN_GEMM("c", F32, F32, F32, mb__cpu_gemm_c, mb__cpu_gemm_c_run,
                       mb__cpu_gemm_c_release),
    MB__CPU_PLAIN_GEMM("c", BF16, BF16, BF16, mb__cpu_gemm_c,
                       mb__cpu_gemm_c_run, mb__cpu_gemm_c_release),
    MB__CPU_PLAIN_GEMM("c", BF16, BF16, F32, mb__cpu_gemm_c, mb__cpu_gemm_c_run,
                       mb__cpu_gemm_c_release),
    MB__CPU_C_NOVEC("add", F32, mb__cpu_add_c, add),
    MB__CPU_C_NOVEC("add", BF16, mb__cpu_add_c, add),
    /* f32, bf16, f16: the ops resolve no other dtype. */
    MB__CPU_KERNEL("gemm_sparse24", "c", NONE, NONE, NONE, F32,
                   mb__cpu_gemm_sparse24_c),
    MB__CPU_KERNEL("gemm_block_sparse", "c", NONE, NONE, NONE, F32,
                   mb__cpu_gemm_block_sparse_c),
#include "cpu_kernels_quant.def"
#include "cpu_kernels_eltwise.def"
/* The collectives: any of their dtypes, through the communicator. */
#define MB__CPU_COLL(E, name)   \
  {sizeof(mb_backend_kernel_t), \
   name,                        \
   "mpi",                       \
   MB_DTYPE_NONE,               \
   MB_DTYPE_NONE,               \
   MB_DTYPE_NONE,               \
   MB_DTYPE_NONE,               \
   mb__cpu_coll_##E##_supports, \
   mb__cpu_coll_##E##_prepare,  \
   mb__cpu_coll_run,            \
   mb__cpu_coll_release,        \
   0u,                          \
   NULL,                        \
   NULL},
    MB_COLL_MAP(MB__CPU_COLL)
#undef MB__CPU_COLL
};

static const mb_backend_vtable_t cpu_vtable = {
    .abi_version = MB_BACKEND_ABI_VERSION,
    .struct_size = sizeof(mb_backend_vtable_t),
    .name = "cpu",
    .description =
        "host CPU: oneDNN and portable C kernels, OpenMP threads "
        "pinned one per core (hwloc)",
    .init = cpu_init,
    .fini = cpu_fini,
    .version = cpu_version,
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .peak_flops = cpu_peak_flops,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy,
    .copy_to_host = cpu_copy,
    .sync = cpu_sync,
    .flush_cache = cpu_flush_cache,
    .flush_cache_with = cpu_flush_cache_with,
    .time_batch = cpu_time_batch,
    .kernels = cpu_kernels,
    .num_kernels = sizeof cpu_kernels / sizeof cpu_kernels[0],
    .telemetry = mb__cpu_telemetry,
    .environment = mb__cpu_environment,
    .peak_for = cpu_peak_for,
};

/* ---- entry --------------------------------------------------------------- */

MB_BACKEND_EXPORT const mb_backend_vtable_t *mb_backend_entry(
    const mb_host_api_t *host) {
  return mb__backend_host_ok(host, "cpu") ? &cpu_vtable : NULL;
}
