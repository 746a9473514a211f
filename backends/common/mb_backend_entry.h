/* The checks every backend module's mb_backend_entry() makes before handing
 * out its vtable: the host table is there, speaks this ABI version, and is
 * complete. One copy for every module (cpu, cuda, the test emulator). */
#ifndef MB_BACKENDS_COMMON_MB_BACKEND_ENTRY_H
#define MB_BACKENDS_COMMON_MB_BACKEND_ENTRY_H

#include <stddef.h>

#include "microbench/sys/backend.h"

/* 1 when the host table can be used by module `name`; otherwise 0, after
 * saying why through host->set_error when even that is possible. */
static inline int mb__backend_host_ok(const mb_host_api_t *host,
                                      const char *name) {
  /* The table must reach at least to set_error before we can complain. */
  if (!host ||
      host->struct_size <
          offsetof(mb_host_api_t, set_error) + sizeof host->set_error ||
      !host->set_error)
    return 0;
  if (host->abi_version != MB_BACKEND_ABI_VERSION) {
    host->set_error(
        "%s: backend ABI version %u, but the library offers version %u", name,
        MB_BACKEND_ABI_VERSION, host->abi_version);
    return 0;
  }
  if (host->struct_size < sizeof(mb_host_api_t) || !host->log ||
      !host->convert || !host->dtype_bytes || !host->dtype_name) {
    host->set_error(
        "%s: the library's host table is incomplete (%u bytes, this module "
        "needs %zu with every function set)",
        name, host->struct_size, sizeof(mb_host_api_t));
    return 0;
  }
  return 1;
}

#endif
