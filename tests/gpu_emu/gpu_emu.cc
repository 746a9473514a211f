/* The emulated GPU's scheduler (backends/gpu/gpu_emu.h says what it
 * emulates): the threads of a block are fibers on the launching thread,
 * each with its own stack, switched with _setjmp/_longjmp only at barriers
 * and shuffles. Fibers beat one OS thread per GPU thread here: a barrier of
 * 1024 fibers costs microseconds, not a thousand futex wake-ups on a
 * two-core CI machine, the run is deterministic, and a barrier that some
 * threads never reach is reported instead of hanging.
 *
 * Between barriers the fibers of a block run one after another, in index
 * order or in reverse, alternating with the block index plus the number of
 * launches so far (so a one-block kernel alternates between launches): any
 * order is a valid GPU schedule, and the two put the writer of shared data
 * after its reader in one of them, so a missing __syncthreads reads poison
 * (dynamic shared memory) or a stale value instead. */
/* glibc's fortified longjmp refuses to jump to another stack. */
#undef _FORTIFY_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <mutex>

#include "gpu_emu_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define MB_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MB_EMU_ASAN 1
#endif
#endif
#ifdef MB_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

dim3 threadIdx, blockIdx, blockDim, gridDim;
void *mb_emu_dyn_smem;

namespace {

constexpr unsigned MAX_THREADS = 1024, W = MB_GPU_WARP;
constexpr unsigned MAX_WARPS = MAX_THREADS / W;
/* Kernel frames are small; sanitizers make them a few times larger. Only
 * the pages touched are ever backed. */
constexpr size_t STACK_BYTES = 512 * 1024;
/* Each byte: f32 8.4e37, not a NaN that fmaxf would drop. */
constexpr unsigned char POISON = 0x7E;

enum fiber_state { FRESH, RUN, AT_BAR, AT_SHFL, DONE };

struct fiber {
  ucontext_t uc; /* the first entry */
  jmp_buf jb;    /* where it last yielded */
  char *stack;   /* guard page, then the stack */
  fiber_state state;
  unsigned gen; /* waiting for this generation of its barrier to end */
  void *fake_stack;
};

struct barrier {
  unsigned arrived, expected, gen;
  const char *file; /* __syncthreads: where the first arrival waits */
  int line;
  int mask; /* shuffles: the first lane's xor mask */
};

struct warp_state {
  barrier bar;
  unsigned exited;
  uint64_t buf[W];
};

/* One launch at a time in the process (gpu_emu.h: static shared memory). */
std::mutex g_lock;
fiber *g_fibers; /* MAX_THREADS, made on first use */
unsigned g_cur;  /* the running fiber */
jmp_buf g_sched; /* the scheduler, while a fiber runs */
unsigned g_launches;

/* The launch. */
void (*g_body)(void *);
void *g_ctx;
unsigned g_threads;
barrier g_bar;
warp_state g_warps[MAX_WARPS];
bool g_fault;
unsigned g_fault_thread; /* MAX_THREADS: none in particular (a deadlock) */
char g_fault_msg[512];
size_t g_page;

#ifdef MB_EMU_ASAN
const void *g_sched_bottom;
size_t g_sched_size;
void *g_sched_fake;
#endif

/* Errors: per host thread, as the CUDA runtime's. */
enum {
  ERR_CONFIG = MB_EMU_ERR_CONFIG,
  ERR_VALUE = MB_EMU_ERR_VALUE,
  ERR_FAULT = MB_EMU_ERR_FAULT,
  ERR_MEMORY = MB_EMU_ERR_MEMORY
};
thread_local mb_gpu_error_t t_last, t_last_seen;
thread_local char t_msg[640];

void vset_error(mb_gpu_error_t e, const char *fmt, va_list ap) {
  vsnprintf(t_msg, sizeof t_msg, fmt, ap);
  t_last = t_last_seen = e;
}

void set_error(mb_gpu_error_t e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void set_error(mb_gpu_error_t e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset_error(e, fmt, ap);
  va_end(ap);
}

/* Kernel functions and their raised dynamic shared memory limits. */
struct smem_attr {
  void (*fn)(void);
  size_t bytes;
};
smem_attr g_attrs[256];
unsigned g_nattrs;

size_t smem_limit(void (*fn)(void)) {
  for (unsigned i = 0; i < g_nattrs; ++i)
    if (g_attrs[i].fn == fn) return g_attrs[i].bytes;
  return 48 * 1024;
}

/* ---- switching ----------------------------------------------------------- */

void fiber_main();

/* Fiber -> scheduler; returns when the scheduler resumes this fiber. */
void yield() {
  fiber &f = g_fibers[g_cur];
  if (!_setjmp(f.jb)) {
#ifdef MB_EMU_ASAN
    __sanitizer_start_switch_fiber(&f.fake_stack, g_sched_bottom, g_sched_size);
#endif
    _longjmp(g_sched, 1);
  }
#ifdef MB_EMU_ASAN
  __sanitizer_finish_switch_fiber(f.fake_stack, &g_sched_bottom, &g_sched_size);
#endif
}

/* Scheduler -> fiber t until it yields. */
void resume(unsigned t) {
  fiber &f = g_fibers[t];
  g_cur = t;
  threadIdx = dim3(t, 0, 0);
  if (!_setjmp(g_sched)) {
    const size_t page = g_page;
#ifdef MB_EMU_ASAN
    __sanitizer_start_switch_fiber(&g_sched_fake, f.stack + page,
                                   STACK_BYTES - page);
#endif
    if (f.state == FRESH) {
      /* A fresh start: nothing of an abandoned run is left on the stack. */
#ifdef MB_EMU_ASAN
      __asan_unpoison_memory_region(f.stack + page, STACK_BYTES - page);
#endif
      getcontext(&f.uc);
      f.uc.uc_stack.ss_sp = f.stack + page;
      f.uc.uc_stack.ss_size = STACK_BYTES - page;
      f.uc.uc_link = NULL;
      makecontext(&f.uc, fiber_main, 0);
      f.state = RUN;
      setcontext(&f.uc);
    }
    f.state = RUN;
    _longjmp(f.jb, 1);
  }
#ifdef MB_EMU_ASAN
  __sanitizer_finish_switch_fiber(g_sched_fake, NULL, NULL);
#endif
}

/* Ends the launch from inside a fiber, which is never resumed. */
[[noreturn]] void fault(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void fault(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_fault_msg, sizeof g_fault_msg, fmt, ap);
  va_end(ap);
  g_fault = true;
  g_fault_thread = g_cur;
  yield();
  abort(); /* not reached: a faulted launch resumes no fiber */
}

/* ---- barriers ------------------------------------------------------------ */

void complete(barrier &b) {
  b.arrived = 0;
  ++b.gen;
}

/* Arrives at b (expecting b.expected) and waits for the others. */
void arrive_and_wait(barrier &b, fiber_state waiting) {
  if (++b.arrived == b.expected) {
    complete(b);
    return;
  }
  fiber &f = g_fibers[g_cur];
  f.state = waiting;
  f.gen = b.gen;
  yield();
}

/* The body of each GPU thread, block after block, launch after launch. */
void fiber_main() {
#ifdef MB_EMU_ASAN
  __sanitizer_finish_switch_fiber(NULL, &g_sched_bottom, &g_sched_size);
#endif
  for (;;) {
    g_body(g_ctx);
    const unsigned t = g_cur;
    warp_state &w = g_warps[t / W];
    if (w.bar.arrived)
      fault("thread %u returned while %u lanes of its warp wait in a shuffle",
            t, w.bar.arrived);
    ++w.exited;
    /* A returned thread no longer holds the block's barrier. */
    if (--g_bar.expected == g_bar.arrived && g_bar.arrived) complete(g_bar);
    g_fibers[t].state = DONE;
    yield();
  }
}

int wait_count(fiber_state s) {
  int n = 0;
  for (unsigned t = 0; t < g_threads; ++t) n += g_fibers[t].state == s;
  return n;
}

bool ensure_fibers() {
  if (g_fibers) return true;
  const size_t page = g_page = (size_t)sysconf(_SC_PAGESIZE);
  fiber *f = (fiber *)calloc(MAX_THREADS, sizeof *f);
  if (!f) return false;
  for (unsigned t = 0; t < MAX_THREADS; ++t) {
    void *s =
        mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (s == MAP_FAILED) {
      for (unsigned u = 0; u < t; ++u) munmap(f[u].stack, STACK_BYTES);
      free(f);
      return false;
    }
    mprotect(s, page, PROT_NONE); /* an overflow faults, not corrupts */
    f[t].stack = (char *)s;
    f[t].state = FRESH;
  }
  g_fibers = f;
  return true;
}

/* Runs block b; false when the launch faulted. */
bool run_block(unsigned b, size_t smem) {
  blockIdx = dim3(b, 0, 0);
  if (smem) memset(mb_emu_dyn_smem, POISON, smem);
  g_bar = barrier{0, g_threads, 0, NULL, 0, 0};
  for (unsigned w = 0; w * W < g_threads; ++w) {
    const unsigned lanes = g_threads - w * W < W ? g_threads - w * W : W;
    g_warps[w].bar = barrier{0, lanes, 0, NULL, 0, 0};
    g_warps[w].exited = 0;
  }
  for (unsigned t = 0; t < g_threads; ++t)
    if (g_fibers[t].state == DONE) g_fibers[t].state = RUN;
  const bool reverse = (g_launches + b) & 1;
  for (;;) {
    bool resumed = false, all_done = true;
    for (unsigned i = 0; i < g_threads; ++i) {
      const unsigned t = reverse ? g_threads - 1 - i : i;
      const fiber &f = g_fibers[t];
      if (f.state == DONE) continue;
      all_done = false;
      if (f.state == AT_BAR && f.gen == g_bar.gen) continue;
      if (f.state == AT_SHFL && f.gen == g_warps[t / W].bar.gen) continue;
      resume(t);
      resumed = true;
      if (g_fault) return false;
    }
    if (all_done) return true;
    if (!resumed) {
      snprintf(g_fault_msg, sizeof g_fault_msg,
               "deadlock: %d threads wait at __syncthreads (%s:%d), %d in a "
               "shuffle, %d returned: a barrier some threads never reach",
               wait_count(AT_BAR), g_bar.file ? g_bar.file : "?", g_bar.line,
               wait_count(AT_SHFL), wait_count(DONE));
      g_fault = true;
      g_fault_thread = MAX_THREADS;
      return false;
    }
  }
}

}  // namespace

/* ---- what the kernels call ----------------------------------------------- */

void mb_emu_syncthreads(const char *file, int line) {
  if (!g_bar.arrived) {
    g_bar.file = file;
    g_bar.line = line;
  } else if (g_bar.line != line || strcmp(g_bar.file, file)) {
    fault("threads meet at different __syncthreads: %s:%d and %s:%d",
          g_bar.file, g_bar.line, file, line);
  }
  arrive_and_wait(g_bar, AT_BAR);
  g_fibers[g_cur].state = RUN;
}

uint64_t mb_emu_shfl_xor_bits(uint64_t bits, int mask) {
  const unsigned t = g_cur, lane = t % W;
  warp_state &w = g_warps[t / W];
  if (mask < 0 || mask >= (int)W)
    fault("shuffle xor mask %d outside a warp of %u", mask, W);
  const unsigned src = lane ^ (unsigned)mask;
  if (src >= w.bar.expected)
    fault("thread %u shuffles with lane %u, past the block's last thread", t,
          src);
  if (w.exited)
    fault("thread %u shuffles after %u lanes of its warp returned", t,
          w.exited);
  if (!w.bar.arrived)
    w.bar.mask = mask;
  else if (w.bar.mask != mask)
    fault("lanes of warp %u shuffle with xor masks %d and %d at once", t / W,
          w.bar.mask, mask);
  w.buf[lane] = bits;
  arrive_and_wait(w.bar, AT_SHFL);
  const uint64_t r = w.buf[src];
  /* Nobody writes buf again before every lane has read its value. */
  arrive_and_wait(w.bar, AT_SHFL);
  g_fibers[g_cur].state = RUN;
  return r;
}

mb_gpu_error_t mb_emu_get_last_error(void) {
  const mb_gpu_error_t e = t_last;
  t_last = mb_gpu_success;
  return e;
}

void mb_emu_set_error(mb_gpu_error_t e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset_error(e, fmt, ap);
  va_end(ap);
}

namespace {
/* Each error code's name (as cudaGetErrorName) and generic message. */
const struct {
  const char *name, *text;
} k_errors[] = {
    {"mbEmuSuccess", "no error"},
    {"mbEmuErrorInvalidConfiguration",
     "emulated GPU: invalid launch configuration"},
    {"mbEmuErrorInvalidValue", "emulated GPU: invalid value"},
    {"mbEmuErrorExecutionModel",
     "emulated GPU: the kernel broke the execution model"},
    {"mbEmuErrorMemoryAllocation", "emulated GPU: out of memory"},
    {"mbEmuErrorStreamCapture",
     "emulated GPU: operation not permitted when the stream is capturing"},
    {"mbEmuErrorNotReady", "emulated GPU: the work has not completed"},
    {"mbEmuErrorNotSupported", "emulated GPU: operation not supported"},
    {"mbEmuErrorPeerAccessAlreadyEnabled",
     "emulated GPU: peer access is already enabled"},
    {"mbEmuErrorPeerAccessNotEnabled",
     "emulated GPU: peer access has not been enabled"},
};
const unsigned k_nerrors = sizeof k_errors / sizeof k_errors[0];
}  // namespace

const char *mb_emu_error_string(mb_gpu_error_t e) {
  if (e != mb_gpu_success && e == t_last_seen) return t_msg;
  return e >= 0 && (unsigned)e < k_nerrors ? k_errors[e].text
                                           : "emulated GPU: unknown error";
}

const char *mb_emu_error_name(mb_gpu_error_t e) {
  return e >= 0 && (unsigned)e < k_nerrors ? k_errors[e].name
                                           : "mbEmuErrorUnknown";
}

mb_gpu_error_t mb_emu_set_max_smem(void (*fn)(void), int bytes) {
  std::lock_guard<std::mutex> hold(g_lock);
  if (bytes < 0 || (size_t)bytes > MB_EMU_SMEM_OPTIN) {
    set_error(ERR_VALUE,
              "emulated GPU: %d bytes of dynamic shared memory: the device "
              "allows %u",
              bytes, MB_EMU_SMEM_OPTIN);
    return ERR_VALUE;
  }
  for (unsigned i = 0; i < g_nattrs; ++i)
    if (g_attrs[i].fn == fn) {
      g_attrs[i].bytes = (size_t)bytes;
      return mb_gpu_success;
    }
  if (g_nattrs == sizeof g_attrs / sizeof g_attrs[0]) {
    set_error(ERR_MEMORY, "emulated GPU: too many kernel attributes");
    return ERR_MEMORY;
  }
  g_attrs[g_nattrs++] = smem_attr{fn, (size_t)bytes};
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_occupancy(int *blocks, void (*fn)(void), int threads,
                                size_t smem) {
  std::lock_guard<std::mutex> hold(g_lock);
  if (threads <= 0 || (unsigned)threads > MAX_THREADS ||
      smem > smem_limit(fn)) {
    set_error(ERR_VALUE,
              "emulated GPU: occupancy of %d threads and %zu bytes of "
              "dynamic shared memory: not a launch the kernel allows",
              threads, smem);
    return ERR_VALUE;
  }
  unsigned n = MB_EMU_SM_THREADS / (unsigned)threads;
  if (n > MB_EMU_SM_BLOCKS) n = MB_EMU_SM_BLOCKS;
  const size_t per_block = smem + 1024u;
  if (MB_EMU_SM_SMEM / per_block < n)
    n = (unsigned)(MB_EMU_SM_SMEM / per_block);
  *blocks = (int)n;
  return mb_gpu_success;
}

namespace {
mb_gpu_error_t check_launch(const char *name, void (*kernel)(void), dim3 grid,
                            dim3 block, size_t smem) {
  if (grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1) {
    set_error(ERR_CONFIG, "emulated GPU: %s: only 1-D launches are emulated",
              name);
    return ERR_CONFIG;
  }
  if (!grid.x || grid.x > 0x7FFFFFFFu || !block.x || block.x > MAX_THREADS) {
    set_error(ERR_CONFIG,
              "emulated GPU: %s: invalid configuration: %u blocks of %u "
              "threads",
              name, grid.x, block.x);
    return ERR_CONFIG;
  }
  if (smem > smem_limit(kernel)) {
    set_error(ERR_CONFIG,
              "emulated GPU: %s: %zu bytes of dynamic shared memory, the "
              "kernel's limit is %zu",
              name, smem, smem_limit(kernel));
    return ERR_CONFIG;
  }
  return mb_gpu_success;
}
}  // namespace

mb_gpu_error_t mb_emu_check_launch(const char *name, void (*kernel)(void),
                                   dim3 grid, dim3 block, size_t smem) {
  std::lock_guard<std::mutex> hold(g_lock);
  return check_launch(name, kernel, grid, block, smem);
}

void mb_emu_run(const char *name, void (*kernel)(void), dim3 grid, dim3 block,
                size_t smem, void (*body)(void *), void *ctx) {
  std::lock_guard<std::mutex> hold(g_lock);
  if (check_launch(name, kernel, grid, block, smem) != mb_gpu_success) return;
  void *dyn = NULL;
  if (!ensure_fibers() || (smem && posix_memalign(&dyn, 16, smem))) {
    set_error(ERR_MEMORY, "emulated GPU: %s: out of host memory", name);
    return;
  }
  mb_emu_dyn_smem = dyn;
  gridDim = grid;
  blockDim = block;
  g_body = body;
  g_ctx = ctx;
  g_threads = block.x;
  g_fault = false;
  bool ok = true;
  for (unsigned b = 0; b < grid.x && ok; ++b) ok = run_block(b, smem);
  if (!ok) {
    /* Faulted fibers are stuck mid-kernel: every one starts afresh next
     * time. */
    for (unsigned t = 0; t < MAX_THREADS; ++t) g_fibers[t].state = FRESH;
    char who[32] = "";
    if (g_fault_thread < MAX_THREADS)
      snprintf(who, sizeof who, ", thread %u", g_fault_thread);
    set_error(ERR_FAULT, "emulated GPU: %s, block %u%s: %s", name, blockIdx.x,
              who, g_fault_msg);
  }
  ++g_launches;
  mb_emu_dyn_smem = NULL;
  free(dyn);
}

/* For the backend (C): the device this build emulates. */
extern "C" int mb_emu_warp_size(void) {
  return MB_GPU_WARP;
}

extern "C" size_t mb_emu_smem_optin(void) {
  return MB_EMU_SMEM_OPTIN;
}
