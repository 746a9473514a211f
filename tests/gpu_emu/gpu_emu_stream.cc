/* The emulated GPU's streams, events, graphs and memory (gpu_emu_rt.h says
 * what they emulate and why). One device, or MB_GPUEMU_DEVICES; one clock,
 * which advances only while work executes. Every entry point holds one
 * lock, so the state below is never touched by two host threads at once;
 * kernels run under it through mb_emu_run, which takes the scheduler's own
 * lock inside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu_emu_internal.h"

namespace {

std::mutex s_lock;
double s_clock_ns; /* the device clock */

/* What the environment asks of the emulated device, read when a stream is
 * made (tests set it before they create their context). */
enum capture_mode { CAPTURE_OK, CAPTURE_FAIL, CAPTURE_UNSUPPORTED };
struct config {
  size_t queue_depth = 1024;
  double kernel_ns = -1; /* < 0: each kernel's own execution time */
  capture_mode capture = CAPTURE_OK;
};

config read_config() {
  config c;
  const char *v = getenv("MB_GPUEMU_QUEUE_DEPTH");
  if (v && atol(v) >= 2) c.queue_depth = (size_t)atol(v);
  v = getenv("MB_GPUEMU_KERNEL_NS");
  if (v && *v) c.kernel_ns = atof(v);
  v = getenv("MB_GPUEMU_CAPTURE");
  if (v && !strcmp(v, "fail")) c.capture = CAPTURE_FAIL;
  if (v && !strcmp(v, "unsupported")) c.capture = CAPTURE_UNSUPPORTED;
  return c;
}

}  // namespace

/* What the environment changed from the default device, for its name:
 * a device that runs every kernel in a fixed time is another device (the
 * copy bandwidth cached for one must not be read for the other). */
extern "C" void mb_emu_describe(char *buf, size_t cap) {
  const config c = read_config();
  const char *capture[] = {"", ", capture fails", ", no capture"};
  int n = snprintf(buf, cap, "%s", capture[c.capture]);
  if (n >= 0 && (size_t)n < cap && c.queue_depth != config().queue_depth)
    n += snprintf(buf + n, cap - (size_t)n, ", queue %zu", c.queue_depth);
  if (n >= 0 && (size_t)n < cap && c.kernel_ns >= 0)
    snprintf(buf + n, cap - (size_t)n, ", every kernel %g ns", c.kernel_ns);
}

namespace {

double now_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

struct stream;

/* One unit of device work: a queue entry, or a node of a graph. */
struct op {
  virtual ~op() = default;
  /* Runs it, advancing the device clock. */
  virtual void exec(const config &c) = 0;
  /* A blocking kernel the host has not released: nothing behind it runs. */
  virtual bool holds() const { return false; }
};
using op_ptr = std::shared_ptr<op>;

/* Work that costs its own execution time, or exactly kernel_ns. */
template <class F>
void timed_work(const config &c, F f) {
  const double t0 = now_ns();
  f();
  s_clock_ns += c.kernel_ns >= 0 ? c.kernel_ns : now_ns() - t0;
}

struct kernel_op : op {
  const char *name;
  void (*kernel)(void);
  dim3 grid, block;
  size_t smem;
  void (*run)(const char *, void (*)(void), dim3, dim3, size_t, void *);
  void *closure;
  void (*drop)(void *);
  ~kernel_op() override { drop(closure); }
  void exec(const config &c) override {
    timed_work(c, [&] { run(name, kernel, grid, block, smem, closure); });
  }
};

struct memset_op : op {
  void *p;
  int v;
  size_t n;
  void exec(const config &c) override {
    timed_work(c, [&] { memset(p, v, n); });
  }
};

struct memcpy_op : op {
  void *dst;
  const void *src;
  size_t n;
  void exec(const config &c) override {
    timed_work(c, [&] { memmove(dst, src, n); });
  }
};

struct event {
  double ns = 0;
  bool done = false;
};

struct record_op : op {
  event *e;
  void exec(const config &) override {
    e->ns = s_clock_ns;
    e->done = true;
  }
};

/* The blocking kernel. Executed while still held, it is giving up: the
 * device clock jumps by its timeout and it says so through *timed_out. */
struct block_op : op {
  volatile int32_t *flag, *timed_out;
  double timeout_ns;
  bool holds() const override { return *flag == 0; }
  void exec(const config &) override {
    if (*flag == 0) {
      s_clock_ns += timeout_ns;
      *timed_out = 1;
    }
  }
};

struct graph {
  std::vector<op_ptr> nodes;
};

struct graph_exec {
  std::vector<op_ptr> nodes;
  bool uploaded = false;
};

/* A graph launch: one queue entry that runs every node. A graph that was
 * never uploaded pays for it now, on the device's time. */
struct graph_op : op {
  std::shared_ptr<graph_exec> x;
  void exec(const config &c) override {
    if (!x->uploaded) {
      s_clock_ns +=
          (double)x->nodes.size() * (c.kernel_ns >= 0 ? c.kernel_ns : 1e3);
      x->uploaded = true;
    }
    for (const op_ptr &n : x->nodes) n->exec(c);
  }
};

struct stream {
  config cfg;
  std::deque<op_ptr> queue;
  bool capturing = false, broken = false;
  std::vector<op_ptr> captured;
  mb_gpu_error_t sticky = mb_gpu_success;
  char sticky_msg[640] = "";
};

/* Runs queued work: an execution error is kept for the next
 * synchronisation, as a GPU's is. */
void exec_queued(stream *s, const op_ptr &o) {
  (void)mb_emu_get_last_error();
  o->exec(s->cfg);
  const mb_gpu_error_t e = mb_emu_get_last_error();
  if (e != mb_gpu_success && s->sticky == mb_gpu_success) {
    s->sticky = e;
    snprintf(s->sticky_msg, sizeof s->sticky_msg, "%s", mb_emu_error_string(e));
  }
}

/* Runs the queue up to a blocking kernel the host still holds; with
 * `force`, that kernel gives up (times out) and the rest runs too. */
void drain(stream *s, bool force) {
  while (!s->queue.empty()) {
    op_ptr head = s->queue.front();
    if (head->holds() && !force) return;
    s->queue.pop_front();
    exec_queued(s, head);
  }
}

void submit(stream *s, op_ptr o) {
  if (!s) { /* the NULL stream never queues */
    o->exec(config{});
    return;
  }
  if (s->capturing) {
    if (s->cfg.capture == CAPTURE_FAIL) {
      mb_emu_set_error(MB_EMU_ERR_CAPTURE,
                       "emulated GPU: operation not permitted when the "
                       "stream is capturing (MB_GPUEMU_CAPTURE=fail)");
      s->broken = true;
      return;
    }
    s->captured.push_back(std::move(o));
    return;
  }
  drain(s, false);
  if (s->queue.empty() && !o->holds()) {
    o->exec(s->cfg); /* an idle stream: now, errors through the last error */
    return;
  }
  /* A full queue: the host would wait in this call until the blocking
   * kernel at its head gave up. */
  if (s->queue.size() >= s->cfg.queue_depth) {
    op_ptr head = s->queue.front();
    s->queue.pop_front();
    exec_queued(s, head);
    drain(s, false);
  }
  s->queue.push_back(std::move(o));
}

mb_gpu_error_t invalid(const char *what) {
  mb_emu_set_error(MB_EMU_ERR_VALUE, "emulated GPU: %s", what);
  return MB_EMU_ERR_VALUE;
}

}  // namespace

/* ---- launches ------------------------------------------------------------ */

void mb_emu_submit(const char *name, void (*kernel)(void), dim3 grid,
                   dim3 block, size_t smem, mb_gpu_stream_t queue,
                   void (*run)(const char *, void (*)(void), dim3, dim3, size_t,
                               void *),
                   void *closure, void (*drop)(void *)) {
  auto k = std::make_shared<kernel_op>();
  k->name = name;
  k->kernel = kernel;
  k->grid = grid;
  k->block = block;
  k->smem = smem;
  k->run = run;
  k->closure = closure;
  k->drop = drop;
  if (mb_emu_check_launch(name, kernel, grid, block, smem) != mb_gpu_success)
    return; /* refused at the launch, as CUDA refuses it */
  std::lock_guard<std::mutex> hold(s_lock);
  submit(static_cast<stream *>(queue), k);
}

/* ---- devices and memory -------------------------------------------------- */

namespace {

/* MB_GPUEMU_DEVICES: how many devices (1 to 8) the runtime reports. They
 * share host memory and the device clock; what differs is the current
 * device of each host thread and the peer access enabled between them. */
enum { MAX_DEVICES = 8 };
bool s_peer[MAX_DEVICES][MAX_DEVICES]; /* [dev][peer] enabled; s_lock */
thread_local int t_current;

int devices() {
  const char *v = getenv("MB_GPUEMU_DEVICES");
  const int n = v && *v ? atoi(v) : 1;
  return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

bool is_device(int d) {
  return d >= 0 && d < devices();
}

/* MB_GPUEMU_PEER=none: no two devices can access each other (GPUs on
 * different PCIe root complexes, or a virtual machine without P2P). */
bool peer_possible(int dev, int peer) {
  const char *v = getenv("MB_GPUEMU_PEER");
  return dev != peer && is_device(dev) && is_device(peer) &&
         !(v && !strcmp(v, "none"));
}

}  // namespace

mb_gpu_error_t mb_emu_device_count(int *n) {
  *n = devices();
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_set_device(int ordinal) {
  if (!is_device(ordinal)) return invalid("no such device");
  t_current = ordinal;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_can_access_peer(int *can, int dev, int peer) {
  if (!is_device(dev) || !is_device(peer)) return invalid("no such device");
  *can = peer_possible(dev, peer);
  return mb_gpu_success;
}

/* As cudaDeviceEnablePeerAccess: from the current device to `peer`; the
 * second call says it is already enabled. */
mb_gpu_error_t mb_emu_enable_peer_access(int peer) {
  std::lock_guard<std::mutex> hold(s_lock);
  if (!peer_possible(t_current, peer))
    return invalid("peer access is not possible between these devices");
  if (s_peer[t_current][peer]) {
    mb_emu_set_error(MB_EMU_ERR_PEER_ENABLED,
                     "emulated GPU: peer access is already enabled");
    return MB_EMU_ERR_PEER_ENABLED;
  }
  s_peer[t_current][peer] = true;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_disable_peer_access(int peer) {
  std::lock_guard<std::mutex> hold(s_lock);
  if (!is_device(peer)) return invalid("no such device");
  if (!s_peer[t_current][peer]) {
    mb_emu_set_error(MB_EMU_ERR_PEER_NOT_ENABLED,
                     "emulated GPU: peer access has not been enabled");
    return MB_EMU_ERR_PEER_NOT_ENABLED;
  }
  s_peer[t_current][peer] = false;
  return mb_gpu_success;
}

/* Every device's memory is host memory: with or without peer access the
 * copy is one memcpy on the stream (a GPU stages it through host memory
 * when peer access is off; the emulator has nothing to stage). */
mb_gpu_error_t mb_emu_memcpy_peer_async(void *dst, int dst_dev, const void *src,
                                        int src_dev, size_t n,
                                        mb_gpu_stream_t s) {
  if (!is_device(dst_dev) || !is_device(src_dev))
    return invalid("no such device");
  return mb_emu_memcpy_async(dst, src, n, s);
}

/* Aligned as cudaMalloc's (256) and of exactly the size asked for, so
 * AddressSanitizer sees a kernel reading past it. */
mb_gpu_error_t mb_emu_malloc(void **p, size_t bytes) {
  if (posix_memalign(p, 256, bytes ? bytes : 1) == 0) return mb_gpu_success;
  *p = NULL;
  mb_emu_set_error(MB_EMU_ERR_MEMORY, "emulated GPU: out of host memory");
  return MB_EMU_ERR_MEMORY;
}

mb_gpu_error_t mb_emu_free(void *p) {
  free(p);
  return mb_gpu_success;
}

/* Host memory backs it: nothing meaningful to report. */
mb_gpu_error_t mb_emu_mem_info(size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = *total_bytes = 0;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_host_alloc_mapped(void **p, size_t bytes) {
  return mb_emu_malloc(p, bytes);
}

mb_gpu_error_t mb_emu_host_device_ptr(void **dev, void *host) {
  *dev = host;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_host_free(void *p) {
  return mb_emu_free(p);
}

/* ---- streams ------------------------------------------------------------- */

mb_gpu_error_t mb_emu_stream_create(mb_gpu_stream_t *s) {
  stream *st = new stream;
  st->cfg = read_config();
  *s = st;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_stream_destroy(mb_gpu_stream_t s) {
  std::lock_guard<std::mutex> hold(s_lock);
  stream *st = static_cast<stream *>(s);
  if (st) drain(st, true);
  delete st;
  return mb_gpu_success;
}

/* Waits for everything queued. A blocking kernel still held gives up first:
 * the host waits on the GPU, which waits on the host. */
mb_gpu_error_t mb_emu_stream_sync(mb_gpu_stream_t s) {
  std::lock_guard<std::mutex> hold(s_lock);
  stream *st = static_cast<stream *>(s);
  if (!st) return mb_gpu_success;
  if (st->capturing) {
    st->broken = true;
    mb_emu_set_error(MB_EMU_ERR_CAPTURE,
                     "emulated GPU: synchronising a stream that is capturing "
                     "(the capture is invalidated)");
    return MB_EMU_ERR_CAPTURE;
  }
  drain(st, true);
  const mb_gpu_error_t e = st->sticky;
  if (e != mb_gpu_success) {
    mb_emu_set_error(e, "%s", st->sticky_msg);
    st->sticky = mb_gpu_success;
  }
  return e;
}

mb_gpu_error_t mb_emu_memset_async(void *p, int v, size_t n,
                                   mb_gpu_stream_t s) {
  auto o = std::make_shared<memset_op>();
  o->p = p;
  o->v = v;
  o->n = n;
  std::lock_guard<std::mutex> hold(s_lock);
  submit(static_cast<stream *>(s), o);
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_memcpy_async(void *dst, const void *src, size_t n,
                                   mb_gpu_stream_t s) {
  auto o = std::make_shared<memcpy_op>();
  o->dst = dst;
  o->src = src;
  o->n = n;
  std::lock_guard<std::mutex> hold(s_lock);
  submit(static_cast<stream *>(s), o);
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_block(mb_gpu_stream_t s, volatile int32_t *flag,
                            volatile int32_t *timed_out, double timeout_s) {
  if (!s) return invalid("a blocking kernel on the NULL stream never returns");
  auto o = std::make_shared<block_op>();
  o->flag = flag;
  o->timed_out = timed_out;
  o->timeout_ns = timeout_s * 1e9;
  std::lock_guard<std::mutex> hold(s_lock);
  submit(static_cast<stream *>(s), o);
  return mb_gpu_success;
}

/* ---- events -------------------------------------------------------------- */

mb_gpu_error_t mb_emu_event_create(mb_gpu_event_t *e) {
  *e = new event;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_event_destroy(mb_gpu_event_t e) {
  delete static_cast<event *>(e);
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_event_record(mb_gpu_event_t e, mb_gpu_stream_t s) {
  auto o = std::make_shared<record_op>();
  o->e = static_cast<event *>(e);
  std::lock_guard<std::mutex> hold(s_lock);
  o->e->done = false;
  submit(static_cast<stream *>(s), o);
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_event_elapsed_ms(float *ms, mb_gpu_event_t start,
                                       mb_gpu_event_t stop) {
  std::lock_guard<std::mutex> hold(s_lock);
  const event *a = static_cast<event *>(start), *b = static_cast<event *>(stop);
  if (!a->done || !b->done) {
    mb_emu_set_error(MB_EMU_ERR_NOT_READY,
                     "emulated GPU: an event has not executed yet");
    return MB_EMU_ERR_NOT_READY;
  }
  *ms = (float)((b->ns - a->ns) * 1e-6);
  return mb_gpu_success;
}

/* ---- graphs -------------------------------------------------------------- */

mb_gpu_error_t mb_emu_capture_begin(mb_gpu_stream_t s) {
  std::lock_guard<std::mutex> hold(s_lock);
  stream *st = static_cast<stream *>(s);
  if (!st || st->capturing)
    return invalid("capture on the NULL stream or one already capturing");
  if (st->cfg.capture == CAPTURE_UNSUPPORTED) {
    mb_emu_set_error(MB_EMU_ERR_NOT_SUPPORTED,
                     "emulated GPU: stream capture is not supported "
                     "(MB_GPUEMU_CAPTURE=unsupported)");
    return MB_EMU_ERR_NOT_SUPPORTED;
  }
  drain(st, false);
  st->capturing = true;
  st->broken = false;
  st->captured.clear();
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_capture_end(mb_gpu_stream_t s, mb_gpu_graph_t *g) {
  std::lock_guard<std::mutex> hold(s_lock);
  stream *st = static_cast<stream *>(s);
  *g = NULL;
  if (!st || !st->capturing) return invalid("no capture to end");
  st->capturing = false;
  if (st->broken) {
    st->captured.clear();
    mb_emu_set_error(MB_EMU_ERR_CAPTURE,
                     "emulated GPU: the capture was invalidated");
    return MB_EMU_ERR_CAPTURE;
  }
  graph *gr = new graph;
  gr->nodes.swap(st->captured);
  *g = gr;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_graph_nodes(mb_gpu_graph_t g, size_t *n) {
  *n = static_cast<graph *>(g)->nodes.size();
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_graph_instantiate(mb_gpu_graph_exec_t *x,
                                        mb_gpu_graph_t g) {
  auto *e = new std::shared_ptr<graph_exec>(std::make_shared<graph_exec>());
  (*e)->nodes = static_cast<graph *>(g)->nodes;
  *x = e;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_graph_destroy(mb_gpu_graph_t g) {
  delete static_cast<graph *>(g);
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_graph_upload(mb_gpu_graph_exec_t x, mb_gpu_stream_t s) {
  (void)s;
  std::lock_guard<std::mutex> hold(s_lock);
  (*static_cast<std::shared_ptr<graph_exec> *>(x))->uploaded = true;
  return mb_gpu_success;
}

mb_gpu_error_t mb_emu_graph_launch(mb_gpu_graph_exec_t x, mb_gpu_stream_t s) {
  auto o = std::make_shared<graph_op>();
  o->x = *static_cast<std::shared_ptr<graph_exec> *>(x);
  std::lock_guard<std::mutex> hold(s_lock);
  submit(static_cast<stream *>(s), o);
  return mb_gpu_success;
}

/* A launched graph keeps its nodes alive until it has run. */
mb_gpu_error_t mb_emu_graph_exec_destroy(mb_gpu_graph_exec_t x) {
  delete static_cast<std::shared_ptr<graph_exec> *>(x);
  return mb_gpu_success;
}
