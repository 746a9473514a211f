/* GPU host layer — NVTX ranges (gpu_range.h). NVTX 3 is header-only (the
 * CUDA toolkit's nvtx3/): each call goes through a function pointer that
 * stays a no-op until a tool (Nsight Systems, or any library named by
 * NVTX_INJECTION64_PATH) attaches at NVTX's first call, here open's
 * nvtxDomainCreateA. Its globals are NVTX's own, hidden per module. Our
 * ranges go to a domain of their own, so a capture can show or hide them
 * apart from the application's. The HIP module, and an emulated GPU built
 * where no NVTX header is, get a table whose open says there is none. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_range.h"

#if !defined(MB_GPU_HIP) && defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define MB_HAVE_NVTX3 1
#endif
#endif

#ifdef MB_HAVE_NVTX3
/* NVTX's loader casts dlsym's object pointer to a function pointer, which
 * POSIX allows and ISO C does not: its code, not ours. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

typedef struct nvtx_ranges {
  nvtxDomainHandle_t domain; /* NULL while no tool listens: still valid */
} nvtx_ranges_t;

static void *nvtx_open(char *why, size_t cap) {
  nvtx_ranges_t *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(why, cap, "no NVTX ranges: out of host memory");
    return NULL;
  }
  r->domain = nvtxDomainCreateA(MB_GPUH_NVTX_DOMAIN);
  snprintf(why, cap, "NVTX ranges in domain %s%s", MB_GPUH_NVTX_DOMAIN,
           r->domain ? "" : " (no NVTX tool attached)");
  return r;
}

static void nvtx_push(void *ranges, const char *name) {
  const nvtx_ranges_t *r = ranges;
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  (void)nvtxDomainRangePushEx(r->domain, &a);
}

static void nvtx_pop(void *ranges) {
  (void)nvtxDomainRangePop(((const nvtx_ranges_t *)ranges)->domain);
}

static void nvtx_close(void *ranges) {
  nvtx_ranges_t *r = ranges;
  if (!r) return;
  if (r->domain) nvtxDomainDestroy(r->domain);
  free(r);
}

#else /* no NVTX 3 headers in this build */

static void *nvtx_open(char *why, size_t cap) {
  snprintf(why, cap,
           "no NVTX ranges: this build had no NVTX 3 headers "
           "(nvtx3/nvToolsExt.h)");
  return NULL;
}
static void nvtx_push(void *ranges, const char *name) {
  (void)ranges, (void)name;
}
static void nvtx_pop(void *ranges) {
  (void)ranges;
}
static void nvtx_close(void *ranges) {
  (void)ranges;
}

#endif

const mb_gpuh_range_api_t mb__gpuh_nvtx_ranges = {
    .name = "NVTX",
    .open = nvtx_open,
    .push = nvtx_push,
    .pop = nvtx_pop,
    .close = nvtx_close,
};
