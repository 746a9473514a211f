/* The GPU backends' links: which device a copy between devices goes to,
 * and the datasheet figure of the link a transfer crosses, read through
 * the vendor's link hook (NVML on CUDA, rocm-smi on HIP) and recorded as
 * the device's environment facts. A link nobody could read is "unknown",
 * never a guess: the transfer's result then has no roof. */
#include <stdio.h>
#include <string.h>

#include "gpu_host.h"

void mb__gpuh_link_init(mb_gpuh_state_t *st, mb_gpuh_device_t *d) {
  d->host_link_gbps = -1;
  snprintf(d->host_link, sizeof d->host_link,
           "unknown: the %s backend reads no link figures", st->vendor->name);
  if (st->vendor->link)
    d->host_link_gbps =
        st->vendor->link(st, d, NULL, d->host_link, sizeof d->host_link);
  if (!(d->host_link_gbps > 0)) d->host_link_gbps = -1;
}

uint32_t mb__gpuh_link_facts(const mb_gpuh_device_t *d, mb_kernel_note_t *out,
                             uint32_t n, uint32_t max) {
  const mb_kernel_note_t facts[] = {
      {"host_link", d->host_link, 0},
      {"host_link_gbps", NULL, d->host_link_gbps},
  };
  /* The figure only when it is known: the text says "unknown" otherwise. */
  const uint32_t mine = d->host_link_gbps > 0 ? 2u : 1u;
  for (uint32_t i = 0; i < mine; i++)
    if (n + i < max) out[n + i] = facts[i];
  return n + mine;
}

mb_status_t mb__gpu_peer_of(void *bstate, uint32_t dev, uint32_t flags,
                            mb_gpu_peer_t *out, const char **why) {
  mb_gpuh_state_t *st = bstate;
  if (st->num_devices < 2) {
    *why = st->host.reason(st->host.host,
                           "d2d needs 2 devices: this machine has %u (%s "
                           "devices the %s backend can use)",
                           st->num_devices, st->vendor->device_word,
                           st->vendor->name);
    return MB_ERR_UNSUPPORTED;
  }
  mb_gpuh_device_t *d = mb__gpuh_device(st, dev);
  if (!d) {
    *why = st->host.reason(st->host.host, "%s: no device %u", st->vendor->name,
                           dev);
    return MB_ERR_NOT_FOUND;
  }
  out->index = (dev + 1) % st->num_devices;
  out->ordinal = mb__gpuh_device(st, out->index)->ordinal;
  out->self_ordinal = d->ordinal;
  out->can_access = 0;
  if (mb_gpu_can_access_peer(&out->can_access, d->ordinal, out->ordinal) !=
      mb_gpu_success) {
    (void)mb_gpu_get_last_error();
    out->can_access = 0;
  }
  if ((flags & MB_PARAM_PEER) && !out->can_access) {
    *why = st->host.reason(
        st->host.host,
        "peer access is not possible from device %u to device %u (the "
        "runtime's can-access-peer says no): run d2d without peer, staged "
        "through host memory",
        dev, out->index);
    return MB_ERR_UNSUPPORTED;
  }
  return MB_OK;
}

double mb__gpu_link(void *bstate, uint32_t dev, int peer, char *what,
                    size_t cap) {
  mb_gpuh_state_t *st = bstate;
  mb_gpuh_device_t *d = mb__gpuh_device(st, dev);
  mb_gpuh_device_t *p = peer < 0 ? NULL : mb__gpuh_device(st, (uint32_t)peer);
  if (!d || (peer >= 0 && !p)) {
    snprintf(what, cap, "unknown: no such device");
    return -1;
  }
  if (!p) {
    snprintf(what, cap, "%s", d->host_link);
    return d->host_link_gbps;
  }
  snprintf(what, cap, "unknown: the %s backend reads no link figures",
           st->vendor->name);
  return st->vendor->link ? st->vendor->link(st, d, p, what, cap) : -1;
}
