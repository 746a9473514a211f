/* libmicrobench — the ABI a backend module implements.
 *
 * A module is a shared object named mb_backend_<name>.so exporting one
 * symbol, MB_BACKEND_ENTRY_SYMBOL, of type mb_backend_entry_fn. The library
 * passes a table of host functions (so modules never link against
 * libmicrobench) and gets back a constant vtable. Loading only registers the
 * backend; init() is called on first use.
 *
 * Compatibility: the vtable, its kernel entries and the host table only
 * grow by appending members (each table marks where its appended members
 * start); `struct_size` says how much of it the side that filled it knows.
 * The library takes a module built against any earlier header of this ABI
 * version: it reads a vtable and kernel entries from their first version's
 * size (through `num_kernels` and `release`) up to its own, and a hook the
 * module's header did not have yet counts as NULL. Smaller than the first
 * version, larger than the library's (a module built against a newer
 * header), kernel entries of different sizes, or an abi_version other than
 * MB_BACKEND_ABI_VERSION: the module is refused with a reason naming the
 * struct and the sizes. The module may refuse a host table older than its
 * own header the same way (mb__backend_host_ok does for the modules here).
 * A NULL optional hook means "not supported".
 *
 * Threading: the library calls a backend from one thread at a time per
 * context; a backend may keep per-context state in `state`. */
#ifndef MICROBENCH_SYS_BACKEND_H
#define MICROBENCH_SYS_BACKEND_H

#include <stddef.h>

#include "../bench.h"
#include "../comm.h"
#include "../device.h"
#include "../op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MB_BACKEND_ABI_VERSION 1u
#define MB_BACKEND_ENTRY_SYMBOL "mb_backend_entry"

#if defined(__GNUC__)
#define MB_BACKEND_EXPORT __attribute__((visibility("default")))
#define MB__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MB_BACKEND_EXPORT
#define MB__PRINTF(f, a)
#endif

/* Functions the library offers a module. `host` is opaque: pass it back. */
typedef struct mb_host_api {
  uint32_t abi_version;
  uint32_t struct_size;
  void *host;
  /* Log through the context's log settings. */
  void (*log)(void *host, mb_log_level_t level, const char *fmt, ...)
      MB__PRINTF(3, 4);
  /* Set this thread's mb_error_last() message (say what and where). */
  void (*set_error)(const char *fmt, ...) MB__PRINTF(1, 2);
  /* The library's conversions (mb_convert) and sizes (mb_dtype_bytes). */
  mb_status_t (*convert)(void *dst, mb_dtype_t dst_dtype, const void *src,
                         mb_dtype_t src_dtype, size_t count, unsigned flags);
  size_t (*dtype_bytes)(mb_dtype_t dtype, size_t count);
  const char *(*dtype_name)(mb_dtype_t dtype);

  /* ---- appended; check struct_size before use -------------------------- */
  /* Formats a kernel's refusal for supports()' *why into storage the
   * library owns (the context's, one per context), so a backend needs no
   * buffer of its own. The text stays until the next reason() call on this
   * host; the library copies it as soon as supports() returns. */
  /* (clang-format would glue the attribute to the ")".) */
  /* clang-format off */
  const char *(*reason)(void *host, const char *fmt, ...) MB__PRINTF(2, 3);
  /* clang-format on */

  /* ---- appended: the context's communicator (comm.h), for the kernels of
   * the collective ops (mb_op_is_collective). The library runs a
   * collective on every rank in lockstep; a kernel reaches the other
   * ranks only through these. Each waits at most the communicator's
   * mb_comm_wait. Without a communicator (a single process): comm_info
   * says rank 0 of 1 and returns MB_ERR_UNSUPPORTED, saying so; bcast is
   * then a no-op and collective MB_ERR_UNSUPPORTED. ------------------- */
  mb_status_t (*comm_info)(void *host, mb_comm_info_t *out);
  /* Bytes from rank `root` to every rank: how a GPU library's unique id
   * (ncclUniqueId) reaches the ranks that join it. */
  mb_status_t (*comm_bcast)(void *host, void *buf, size_t bytes, int root);
  /* The communicator's own data plane on host buffers (MPI for
   * libmicrobench_mpi): MB_ERR_UNSUPPORTED, saying why, when it has none. */
  mb_status_t (*comm_collective)(void *host, const mb_coll_t *c);

  /* ---- appended: how long the communicator's waits are (mb_comm_wait;
   * 3600 s without a communicator), for a kernel's own wait on a library
   * the communicator does not see: a GPU library's communicator set-up
   * (ncclCommInitRank), which waits for every rank with no bound of its
   * own. ---------------------------------------------------------------- */
  double (*comm_wait)(void *host);
} mb_host_api_t;

/* Whether `host` has the communicator calls (a library from before them
 * does not). */
#define MB_HOST_HAS_COMM(host)                                       \
  ((host)->struct_size >= offsetof(mb_host_api_t, comm_collective) + \
                              sizeof((host)->comm_collective) &&     \
   (host)->comm_collective)

/* Whether `host` has comm_wait (a library from before it does not). */
#define MB_HOST_HAS_COMM_WAIT(host)                                      \
  ((host)->struct_size >=                                                \
       offsetof(mb_host_api_t, comm_wait) + sizeof((host)->comm_wait) && \
   (host)->comm_wait)

/* One kernel invocation. Pointers are device addresses, in the op's operand
 * order (inputs, then outputs); params are resolved (no NONE dtypes). */
typedef struct mb_kernel_call {
  uint32_t struct_size;
  const mb_op_params_t *params;
  void *const *in;
  uint32_t num_in;
  void *const *out;
  uint32_t num_out;
  uint32_t device;

  /* ---- appended; read through MB_CALL_VARYING_IN() --------------------- */
  /* Bit i set: input i is written by another kernel inside the timed run (a
   * composite's intermediate, such as activations quantized in the forward
   * pass). Its contents are not final at prepare and change from run to
   * run, so a prepare that reads contents (to pre-pack B, to re-lay scales)
   * must not read this input: run must read it, or prepare declines with
   * MB_ERR_UNSUPPORTED and the composite takes the backend's next kernel.
   * Inputs whose bit is clear hold their final contents when prepare is
   * called (operands filled by the runner, a composite's setup products). */
  uint32_t varying_in;
} mb_kernel_call_t;

/* A call's varying_in, 0 from a core that predates the field. */
#define MB_CALL_VARYING_IN(call)                                     \
  ((call)->struct_size >=                                            \
           offsetof(mb_kernel_call_t, varying_in) + sizeof(uint32_t) \
       ? (call)->varying_in                                          \
       : 0u)

typedef mb_status_t (*mb_kernel_run_fn)(void *kstate,
                                        const mb_kernel_call_t *call);

/* A fact about a prepared kernel that its result should carry: the
 * cuBLASLt algorithm chosen, its workspace, the math mode. `text` NULL means
 * the fact is the number `value`. */
typedef struct mb_kernel_note {
  const char *key; /* [a-z0-9_]+, e.g. "algo_id", "workspace_bytes" */
  const char *text;
  double value;
} mb_kernel_note_t;

/* A kernel a backend offers, matched on (op, dtype, dtype_b, dtype_out,
 * dtype_acc); MB_DTYPE_NONE in the table matches any. */
typedef struct mb_backend_kernel {
  uint32_t struct_size;
  const char *op;
  const char *name; /* implementation: "onednn", "c", "cublaslt" */
  mb_dtype_t dtype, dtype_b, dtype_out, dtype_acc;
  /* Optional: MB_OK if it can run these params on this device, else
   * MB_ERR_UNSUPPORTED with *why set: a static string, one the backend
   * state owns, or host->reason()'s (a formatted one). */
  mb_status_t (*supports)(void *bstate, uint32_t dev,
                          const mb_op_params_t *params, const char **why);
  /* Untimed: build plans/primitives. *kstate is passed to run/release. */
  mb_status_t (*prepare)(void *bstate, const mb_kernel_call_t *call,
                         void **kstate);
  mb_kernel_run_fn run;
  void (*release)(void *kstate);

  /* ---- appended: absent (0, NULL) in an older module's entries --------- */
  uint32_t flags; /* MB_KERNEL_* */
  /* Optional: after prepare, writes up to `max` notes and returns how many
   * there are. Strings are owned by kstate. */
  uint32_t (*notes)(void *kstate, mb_kernel_note_t *out, uint32_t max);
  /* Optional, untimed: after a run whose outputs are about to be checked
   * (and after the device's sync), brings the run's result into the
   * output tensors when the run leaves it elsewhere — a device-to-host
   * copy's host buffer (d2h), which no device tensor can be. NULL: the
   * run writes its outputs. */
  mb_status_t (*collect)(void *kstate, const mb_kernel_call_t *call);
} mb_backend_kernel_t;

/* The kernel computes the op by other means than the op's own number
 * formats (e.g. fp8 GEMM as dequantize + f32 GEMM on a CPU): its results are
 * marked "emulated": they measure the emulation, not native fp8 hardware. */
#define MB_KERNEL_EMULATED 1u
/* A copy kernel that may set the device's bandwidth roof besides the
 * backend's first copy (the runtime's own device-to-device copy, which on
 * an H200 ran 10 % faster than the first): the roof is the fastest of them.
 * Copy kernels without it (test doubles that crash, hang or skip work) are
 * never run by the calibration. */
#define MB_KERNEL_ROOF_COPY 2u

/* A kernel note whose text names the dtype its arithmetic runs in, when
 * that is not the op's (the CPU's int4 weight-only GEMM dequantizes to f32
 * and multiplies in f32): the result's %peak compares against that dtype's
 * peak instead of peak_for's. The note is recorded in the result too. */
#define MB_KERNEL_NOTE_MATH "math_dtype"
/* A kernel note whose number is the datasheet bandwidth (GB/s, 1e9, one
 * direction) of the link a transfer op (h2d, d2h, d2d) crosses: PCIe by
 * generation and width, NVLink, xGMI, as the backend read it. The result's
 * roof (% of link) compares against it instead of the device's copy
 * bandwidth; without the note a transfer has no roof. */
#define MB_KERNEL_NOTE_LINK "link_gbps"

typedef struct mb_backend_vtable {
  uint32_t abi_version; /* MB_BACKEND_ABI_VERSION */
  uint32_t struct_size; /* sizeof(mb_backend_vtable_t) the module knows */
  const char *name;     /* [a-z0-9_]+, e.g. "cpu" */
  const char *description;

  /* Instantiate: discover devices. A backend with no usable device returns
   * MB_OK, reports 0 devices and says why through device_count(). */
  mb_status_t (*init)(const mb_host_api_t *host, void **state);
  void (*fini)(void *state);
  /* Backend and library versions, e.g. "oneDNN 2.6.3 (omp), hwloc 2.9.0". */
  const char *(*version)(void *state);
  /* Devices; when 0, *why_none says why (may be NULL otherwise). */
  uint32_t (*device_count)(void *state, const char **why_none);
  /* Strings in *out are owned by the backend state. */
  mb_status_t (*device_info)(void *state, uint32_t dev, mb_device_info_t *out);
  double (*peak_flops)(void *state, uint32_t dev, mb_dtype_t dtype);

  mb_status_t (*alloc)(void *state, uint32_t dev, size_t bytes, void **ptr);
  void (*free)(void *state, uint32_t dev, void *ptr);
  mb_status_t (*copy_to_device)(void *state, uint32_t dev, void *dst,
                                const void *src, size_t bytes);
  mb_status_t (*copy_to_host)(void *state, uint32_t dev, void *dst,
                              const void *src, size_t bytes);
  mb_status_t (*sync)(void *state, uint32_t dev);

  /* Evicts the last-level cache (and private caches) of the device. Called
   * before each cold sample, outside the timed region. */
  mb_status_t (*flush_cache)(void *state, uint32_t dev);
  /* Times `batch` back-to-back runs of run(kstate, call) with the device's
   * timer and writes the elapsed nanoseconds for the whole batch; NAN, with
   * MB_OK after host->set_error saying why, for a sample the timer cannot
   * vouch for (a GPU's blocking kernel that timed out): the library drops
   * that sample and warns. */
  mb_status_t (*time_batch)(void *state, uint32_t dev, mb_kernel_run_fn run,
                            void *kstate, const mb_kernel_call_t *call,
                            uint32_t batch, double *elapsed_ns);

  const mb_backend_kernel_t *kernels;
  size_t num_kernels;

  /* ---- appended: the library treats them as NULL in an older module ---- */
  /* Optional: the device's clocks, power, temperature and throttling now;
   * called right after each sample (untimed). Unreadable fields NAN. */
  mb_status_t (*telemetry)(void *state, uint32_t dev, mb_telemetry_t *out);
  /* Optional: the peak FLOP/s of the math op `op` runs with these params
   * (tf32, fp8, int8 tensor cores for a gemm; the vector units for an
   * element-wise op); 0 unknown. Without it: peak_flops(params->dtype). */
  double (*peak_for)(void *state, uint32_t dev, const char *op,
                     const mb_op_params_t *params);
  /* Optional: how time_batch times, one line for the result ("CUDA events
   * on the stream; ..."). Static or owned by the state. */
  const char *(*timer_info)(void *state, uint32_t dev);
  /* Optional: facts about the device and how benchmarks run on it, for the
   * environment block (CPU: packages, cores, PUs, caches, NUMA nodes, the
   * benchmark threads' binding, the clock source). Writes up to `max` and
   * returns how many there are; strings owned by the state. Keys
   * [a-z0-9_]+. */
  uint32_t (*environment)(void *state, uint32_t dev, mb_kernel_note_t *out,
                          uint32_t max);
  /* Optional, all four or none: a timing. The library times one
   * run(kstate, call) batch after batch (a benchmark's warm-up and its
   * samples) between timing_begin and timing_end, so the backend may keep
   * what it learns and builds for it until then (the launches one run
   * makes, a graph of a batch, instantiated and uploaded once and reused by
   * every sample). timing_batch is time_batch's contract for that run;
   * timing_notes writes up to `max` facts about how it timed ("timing":
   * "graph of 512 runs", "launches_per_run": 3) and returns how many there
   * are, strings owned by the timing. Without these, time_batch. */
  mb_status_t (*timing_begin)(void *state, uint32_t dev, mb_kernel_run_fn run,
                              void *kstate, const mb_kernel_call_t *call,
                              void **timing);
  mb_status_t (*timing_batch)(void *timing, uint32_t batch, double *elapsed_ns);
  uint32_t (*timing_notes)(void *timing, mb_kernel_note_t *out, uint32_t max);
  void (*timing_end)(void *timing);
  /* Optional: flush_cache by the method asked for (bench.h, mb_flush_t).
   * Without it flush_cache is the backend's only flush, MB_FLUSH_WRITE. */
  mb_status_t (*flush_cache_with)(void *state, uint32_t dev, mb_flush_t how);
  /* Optional, both or none: a named range on the profiler timeline of the
   * device's own tools (CUDA: an NVTX range, HIP: a roctx range), pushed
   * around each benchmark and each of its samples and named like the
   * result, so a capture by Nsight Systems or rocprof lines up with the
   * numbers. Called outside the timed region, on the thread that runs the
   * benchmark, properly nested; must cost next to nothing when no profiler
   * listens. `name` is the caller's, valid during the call. */
  void (*range_push)(void *state, uint32_t dev, const char *name);
  void (*range_pop)(void *state, uint32_t dev);
} mb_backend_vtable_t;

/* The one exported symbol. Returns NULL (after host->set_error) on failure. */
typedef const mb_backend_vtable_t *(*mb_backend_entry_fn)(
    const mb_host_api_t *host);

#ifdef __cplusplus
}
#endif
#endif
