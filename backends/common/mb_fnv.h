/* FNV-1a, 64-bit: the one hash of the library's in-memory tables (config
 * keys, plan entry names) and of the GPU modules' autotuning caches. Short
 * keys, nothing adversarial; the keys are never written to disk, so the
 * value only has to be stable within a run.
 *
 * The offset basis is FNV's 14695981039346656037. Four copies of this loop
 * once started from 1469598103934665603 (a digit short): still a hash, but
 * not the FNV-1a the comments named. */
#ifndef MB_FNV_H
#define MB_FNV_H

#include <stddef.h>
#include <stdint.h>

#define MB__FNV1A_BASIS UINT64_C(14695981039346656037)

/* h folded with n bytes at p: start from MB__FNV1A_BASIS, chain calls to
 * hash pieces as one. */
static inline uint64_t mb__fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(1099511628211);
  return h;
}

/* The same over a NUL-terminated string (without the NUL). */
static inline uint64_t mb__fnv1a_str(const char *s) {
  uint64_t h = MB__FNV1A_BASIS;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
  return h;
}

#endif /* MB_FNV_H */
