/* CPU backend — device memory is host memory, aligned and already touched.
 *
 * Alignment: 64 bytes (a cache line, and the widest vector) for small
 * buffers. Buffers of 2 MiB and more are aligned to 2 MiB and offered to
 * transparent huge pages: a benchmark that streams a 1 GiB operand through
 * 4 KiB pages takes a TLB miss every 4 KiB, which is not what a framework's
 * allocator (huge-page backed) sees, and makes results depend on whatever
 * the kernel had free. The cost is virtual address space only.
 *
 * Touching: the pages are written once, in parallel by the pinned threads,
 * right after allocation. On Linux a page lands on the NUMA node of the
 * thread that first writes it, so this spreads the buffer over the nodes of
 * the threads that will work on it; and page faults (and zeroing) happen
 * here, untimed, instead of in the first timed or correctness run. */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SMALL_ALIGN = 64 };
static const size_t huge_page = (size_t)2 << 20;

mb_status_t mb__cpu_alloc(mb_cpu_state_t *st, size_t bytes, void **ptr) {
  const size_t align = bytes >= huge_page ? huge_page : SMALL_ALIGN;
  void *p = NULL;
  /* A zero-byte buffer still gets a unique pointer that free() accepts. */
  const int rc = posix_memalign(&p, align, bytes ? bytes : 1);
  if (rc != 0) {
    MB_CPU_ERROR(st, "cpu: posix_memalign: %s", strerror(rc));
    return MB_ERR_NO_MEMORY;
  }
#ifdef MADV_HUGEPAGE
  /* Advice only: with THP "never" or without it this fails harmlessly. */
  if (align == huge_page) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  const long page_l = sysconf(_SC_PAGESIZE);
  const size_t page = page_l > 0 ? (size_t)page_l : 4096;
  const size_t pages = (bytes + page - 1) / page;
  unsigned char *bytes_p = p;
#pragma omp parallel for num_threads(st->threads) \
    schedule(static) if (pages >= 64)
  for (size_t i = 0; i < pages; ++i) bytes_p[i * page] = 0;
  *ptr = p;
  return MB_OK;
}
