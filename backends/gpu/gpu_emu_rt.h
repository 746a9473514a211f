/* The emulated GPU's runtime for host code (C and C++): what gpu_runtime.h
 * maps the runtime's host calls to under MB_GPU_EMU, so the backends' host
 * layer (backends/gpu/host/) runs on the emulated GPU exactly as it runs on
 * CUDA and HIP. Test scaffolding (tests/gpu_emu/gpu_emu_stream.cc): no
 * backend that measures anything is built with it.
 *
 * What it emulates, and why each part is there:
 *  - Streams with a launch queue of finite depth (MB_GPUEMU_QUEUE_DEPTH,
 *    1024 entries by default, the usual figure for a CUDA stream). Work on
 *    an idle stream runs at once, on the calling thread; work behind a
 *    blocking kernel waits in the queue until the host releases the kernel
 *    and synchronises. A host that fills the queue behind a blocking kernel
 *    would block in the launch until the kernel times out: here the kernel
 *    times out at once (the device clock jumps by its timeout and its
 *    timed-out flag is set), which is what a GPU does, only without the
 *    wait. The NULL stream never queues (the emulator's own tests).
 *  - A device clock (ns) that advances only while work executes: each
 *    kernel, memset and copy adds its own execution time on the CPU, or
 *    exactly MB_GPUEMU_KERNEL_NS when that is set (deterministic tests).
 *    Events read it when they execute, so an elapsed time is the device's,
 *    never the host's enqueue time.
 *  - Graphs by stream capture: captured work is recorded, not run; an
 *    executable graph replays it as one queue entry. A graph launched
 *    before it was uploaded pays its upload on the device clock first (one
 *    kernel's cost per node), as a first launch does on a GPU.
 *    MB_GPUEMU_CAPTURE=fail makes every launch under capture fail and
 *    invalidates the capture (a library that cannot be captured);
 *    =unsupported makes beginning a capture fail.
 *  - Execution errors of queued work surface at the next synchronisation,
 *    as CUDA's do; work that runs at once reports through the last error.
 *  - Host-mapped memory is host memory (the device pointer is the host
 *    pointer); device memory is host memory too.
 *  - Devices: one, or MB_GPUEMU_DEVICES of them (at most 8) sharing that
 *    memory and one device clock, so a copy to a second device (d2d) runs
 *    its real code path. Peer access is possible between any two unless
 *    MB_GPUEMU_PEER=none; enabling it is recorded per (device, peer) pair,
 *    with the runtime's "already enabled" / "not enabled" errors. */
#ifndef MB_GPU_EMU_RT_H
#define MB_GPU_EMU_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void *mb_gpu_stream_t;
typedef void *mb_gpu_event_t;
typedef void *mb_gpu_graph_t;
typedef void *mb_gpu_graph_exec_t;
typedef int mb_gpu_error_t;
#define mb_gpu_success 0

/* Errors: the last error per host thread, cleared by reading it. */
mb_gpu_error_t mb_emu_get_last_error(void);
const char *mb_emu_error_string(mb_gpu_error_t e);
const char *mb_emu_error_name(mb_gpu_error_t e);
#define MB_EMU_ERR_MEMORY 4           /* the out-of-memory error */
#define MB_EMU_ERR_PEER_ENABLED 8     /* peer access already enabled */
#define MB_EMU_ERR_PEER_NOT_ENABLED 9 /* peer access was not enabled */

mb_gpu_error_t mb_emu_device_count(int *n);
mb_gpu_error_t mb_emu_set_device(int ordinal);
mb_gpu_error_t mb_emu_can_access_peer(int *can, int dev, int peer);
mb_gpu_error_t mb_emu_enable_peer_access(int peer);
mb_gpu_error_t mb_emu_disable_peer_access(int peer);
mb_gpu_error_t mb_emu_memcpy_peer_async(void *dst, int dst_dev, const void *src,
                                        int src_dev, size_t n,
                                        mb_gpu_stream_t s);

mb_gpu_error_t mb_emu_malloc(void **p, size_t bytes);
mb_gpu_error_t mb_emu_free(void *p);
mb_gpu_error_t mb_emu_mem_info(size_t *free_bytes, size_t *total_bytes);
mb_gpu_error_t mb_emu_host_alloc_mapped(void **p, size_t bytes);
mb_gpu_error_t mb_emu_host_device_ptr(void **dev, void *host);
mb_gpu_error_t mb_emu_host_free(void *p);

mb_gpu_error_t mb_emu_stream_create(mb_gpu_stream_t *s);
mb_gpu_error_t mb_emu_stream_destroy(mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_stream_sync(mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_memset_async(void *p, int v, size_t n, mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_memcpy_async(void *dst, const void *src, size_t n,
                                   mb_gpu_stream_t s);

mb_gpu_error_t mb_emu_event_create(mb_gpu_event_t *e);
mb_gpu_error_t mb_emu_event_destroy(mb_gpu_event_t e);
mb_gpu_error_t mb_emu_event_record(mb_gpu_event_t e, mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_event_elapsed_ms(float *ms, mb_gpu_event_t start,
                                       mb_gpu_event_t stop);

mb_gpu_error_t mb_emu_capture_begin(mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_capture_end(mb_gpu_stream_t s, mb_gpu_graph_t *g);
mb_gpu_error_t mb_emu_graph_nodes(mb_gpu_graph_t g, size_t *n);
mb_gpu_error_t mb_emu_graph_instantiate(mb_gpu_graph_exec_t *x,
                                        mb_gpu_graph_t g);
mb_gpu_error_t mb_emu_graph_destroy(mb_gpu_graph_t g);
mb_gpu_error_t mb_emu_graph_upload(mb_gpu_graph_exec_t x, mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_graph_launch(mb_gpu_graph_exec_t x, mb_gpu_stream_t s);
mb_gpu_error_t mb_emu_graph_exec_destroy(mb_gpu_graph_exec_t x);

/* The blocking kernel: holds stream `s` until *flag is non-zero; when it
 * gives up instead (the queue behind it overflowed, or the host waited on
 * the stream without releasing it) it sets *timed_out to 1 and the device
 * clock jumps by timeout_s. */
mb_gpu_error_t mb_emu_block(mb_gpu_stream_t s, volatile int32_t *flag,
                            volatile int32_t *timed_out, double timeout_s);

#ifdef __cplusplus
}
#endif
#endif
