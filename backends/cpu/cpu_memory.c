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

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SMALL_ALIGN = 64 };
static const size_t huge_page = (size_t)2 << 20;

/* Advice for a buffer of 2 MiB and more, then its pages written once. */
static void advise_and_touch(mb_cpu_state_t *st, void *p, size_t bytes,
                             int huge) {
#ifdef MADV_HUGEPAGE
  /* Advice only: with THP "never" or without it this fails harmlessly. */
  if (huge) (void)madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)huge;
#endif
  const long page_l = sysconf(_SC_PAGESIZE);
  const size_t page = page_l > 0 ? (size_t)page_l : 4096;
  const size_t pages = (bytes + page - 1) / page;
  unsigned char *bytes_p = p;
#pragma omp parallel for num_threads(st->threads) \
    schedule(static) if (pages >= 64)
  for (size_t i = 0; i < pages; ++i) bytes_p[i * page] = 0;
}

mb_status_t mb__cpu_alloc(mb_cpu_state_t *st, size_t bytes, void **ptr) {
  const size_t align = bytes >= huge_page ? huge_page : SMALL_ALIGN;
  void *p = NULL;
  /* A zero-byte buffer still gets a unique pointer that free() accepts. */
  const int rc = posix_memalign(&p, align, bytes ? bytes : 1);
  if (rc != 0) {
    MB_CPU_ERROR(st, "cpu: posix_memalign: %s", strerror(rc));
    return MB_ERR_NO_MEMORY;
  }
  advise_and_touch(st, p, bytes, align == huge_page);
  *ptr = p;
  return MB_OK;
}

/* ---- the operands' buffers ------------------------------------------------
 * A large buffer from the C library's heap may be memory an earlier
 * benchmark freed: glibc raises its mmap threshold to the largest block
 * freed (up to 32 MiB), so the next one below it comes from the heap, its
 * pages as they were left. Large transfers then depended on what ran
 * before: a 2 MiB sendrecv took 142 us inside a sweep and 44 us alone
 * (docs/results/mpi.md). A mapping of its own, advised before its first
 * write, starts the same every time. */

struct mb_cpu_mapping {
  void *ptr, *base;
  size_t len;
};

mb_status_t mb__cpu_operand_alloc(mb_cpu_state_t *st, size_t bytes,
                                  void **ptr) {
  if (bytes < huge_page) return mb__cpu_alloc(st, bytes, ptr);
  if (st->num_maps == st->cap_maps) {
    const size_t cap = st->cap_maps ? 2 * st->cap_maps : 64;
    struct mb_cpu_mapping *m = realloc(st->maps, cap * sizeof *m);
    if (!m) {
      MB_CPU_ERROR(st, "cpu: out of memory for the mappings' table");
      return MB_ERR_NO_MEMORY;
    }
    st->maps = m;
    st->cap_maps = cap;
  }
  /* One huge page more than asked, for the alignment. */
  const size_t len = bytes + huge_page;
  void *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    MB_CPU_ERROR(st, "cpu: mmap of %zu bytes: %s", len, strerror(errno));
    return MB_ERR_NO_MEMORY;
  }
  const uintptr_t a =
      ((uintptr_t)base + huge_page - 1) & ~(uintptr_t)(huge_page - 1);
  void *p = (void *)a;
  advise_and_touch(st, p, bytes, 1);
  st->maps[st->num_maps++] = (struct mb_cpu_mapping){p, base, len};
  *ptr = p;
  return MB_OK;
}

void mb__cpu_operand_free(mb_cpu_state_t *st, void *ptr) {
  /* The latest first: operands go roughly in the reverse of their order. */
  for (size_t i = st->num_maps; i-- > 0;)
    if (st->maps[i].ptr == ptr) {
      munmap(st->maps[i].base, st->maps[i].len);
      st->maps[i] = st->maps[--st->num_maps];
      return;
    }
  free(ptr);
}

void mb__cpu_memory_fini(mb_cpu_state_t *st) {
  for (size_t i = 0; i < st->num_maps; i++)
    munmap(st->maps[i].base, st->maps[i].len);
  free(st->maps);
  st->maps = NULL;
  st->num_maps = st->cap_maps = 0;
}
