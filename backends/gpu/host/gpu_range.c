/* GPU host layer — the vtable's range_push / range_pop over the vendor's
 * range provider (gpu_range.h). Opened once per backend instance when it
 * has a device; a provider that does not open (no roctx library, no NVTX
 * headers) leaves the hooks no-ops, said once in the debug log. The device
 * does not matter: NVTX and roctx ranges belong to the calling thread. */
#include <stdio.h>

#include "gpu_host.h"
#include "gpu_range.h"

void mb__gpuh_ranges_open(mb_gpuh_state_t *st) {
  const mb_gpuh_range_api_t *api = st->vendor->ranges;
  if (!api || !st->num_devices) return;
  char what[700] = "";
  st->ranges = api->open(what, sizeof what);
  MB_GPUH_LOG(st, MB_LOG_DEBUG, "%s: %s", st->vendor->name, what);
}

void mb__gpuh_ranges_close(mb_gpuh_state_t *st) {
  if (st->ranges) st->vendor->ranges->close(st->ranges);
  st->ranges = NULL;
}

void mb__gpuh_range_push(void *state, uint32_t dev, const char *name) {
  const mb_gpuh_state_t *st = state;
  (void)dev;
  if (st->ranges && name) st->vendor->ranges->push(st->ranges, name);
}

void mb__gpuh_range_pop(void *state, uint32_t dev) {
  const mb_gpuh_state_t *st = state;
  (void)dev;
  if (st->ranges) st->vendor->ranges->pop(st->ranges);
}
