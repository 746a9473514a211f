/* The harness of the conversion tests (test_cvt_cuda.cu, compiled by nvcc
 * as host code, and test_cvt_float16.cc, by the host's C++ compiler): runs
 * a table of converters against the selects of mb_cvt.h over every input
 * pattern and demands the same bits, except that for a NaN the result only
 * has to be a NaN with the same sign (payloads may differ).
 *
 * Inputs: every 8- and 16-bit pattern; for f32, by default every pattern of
 * the top 20 bits (sign, exponent and 11 significand bits, where every f16,
 * bf16 and fp8 rounding boundary lies, subnormal targets included) with
 * low bits 0, 1, just below/at/above the half, all ones and one random, so
 * 7.3 million, a few seconds; with --all, all 2^32. Pairs take each pattern
 * with the one before it. The f32 walk is split over the host's cores. */
#ifndef MB_TESTS_CVT_CHECK_H
#define MB_TESTS_CVT_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <chrono>
#include <thread>
#include <vector>

/* An output format: its width (the top bit is the sign) and the largest
 * magnitude that is not a NaN (infinity, or e4m3's 448). */
struct mb_cvt_fmt {
  unsigned bits;
  uint32_t max_non_nan;
};

static const mb_cvt_fmt MB_CVT_F32 = {32, 0x7F800000u};
static const mb_cvt_fmt MB_CVT_F16 = {16, 0x7C00u};
static const mb_cvt_fmt MB_CVT_BF16 = {16, 0x7F80u};
static const mb_cvt_fmt MB_CVT_E4M3 = {8, 0x7Eu};
static const mb_cvt_fmt MB_CVT_E5M2 = {8, 0x7Cu};

static inline bool mb_cvt_is_nan(const mb_cvt_fmt &f, uint32_t v) {
  return (v & ((1u << (f.bits - 1)) - 1u)) > f.max_non_nan;
}

/* got agrees with want (the selects' result) in the format f. */
static inline bool mb_cvt_same(const mb_cvt_fmt &f, uint32_t got,
                               uint32_t want) {
  const uint32_t sign = 1u << (f.bits - 1);
  if (mb_cvt_is_nan(f, want))
    return mb_cvt_is_nan(f, got) && (got & sign) == (want & sign);
  return got == want;
}

/* One converter under test and its reference, on bit patterns: an input
 * of in_bits (8, 16 or 32) to an output of format out; or, with
 * pair != NULL, two f32 to two outputs packed low first. */
struct mb_cvt_case {
  const char *name;
  unsigned in_bits;
  mb_cvt_fmt out;
  uint32_t (*test)(uint32_t);
  uint32_t (*ref)(uint32_t);
  uint32_t (*pair_test)(uint32_t lo, uint32_t hi);
  uint32_t (*pair_ref)(uint32_t lo, uint32_t hi);
};

/* Runs and mismatches of one case, with the first three mismatches (hi:
 * a pair's second input). */
struct mb_cvt_tally {
  uint64_t runs = 0, bad = 0;
  uint32_t in[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  uint32_t got[3] = {0, 0, 0}, want[3] = {0, 0, 0};
  void note(uint32_t i, uint32_t h, uint32_t g, uint32_t w) {
    if (bad < 3) in[bad] = i, hi[bad] = h, got[bad] = g, want[bad] = w;
    ++bad;
  }
};

static inline void mb_cvt_one(const mb_cvt_case &c, uint32_t u, uint32_t prev,
                              mb_cvt_tally &t) {
  ++t.runs;
  if (!c.pair_test) {
    const uint32_t g = c.test(u), w = c.ref(u);
    if (!mb_cvt_same(c.out, g, w)) t.note(u, 0, g, w);
    return;
  }
  const unsigned w = c.out.bits;
  const uint32_t mask = (1u << w) - 1u;
  const uint32_t g = c.pair_test(u, prev), r = c.pair_ref(u, prev);
  if (!mb_cvt_same(c.out, g & mask, r & mask) ||
      !mb_cvt_same(c.out, (g >> w) & mask, (r >> w) & mask))
    t.note(u, prev, g, r);
}

static const uint32_t mb_cvt_lows[] = {0x000, 0x001, 0x7FF,
                                       0x800, 0x801, 0xFFF};

/* The i-th f32 pattern of the walk (2^32 of them with all, else 2^20 * 7). */
static inline uint32_t mb_cvt_pattern(uint64_t i, bool all) {
  if (all) return (uint32_t)i;
  const uint32_t hi = (uint32_t)(i / 7), l = (uint32_t)(i % 7);
  if (l < 6) return hi << 12 | mb_cvt_lows[l];
  uint32_t z = hi * 0x9E3779B9u; /* a fixed "random" low part */
  z ^= z >> 15;
  return hi << 12 | (z & 0xFFFu);
}

/* Runs the cases; prints one line each and the total; returns the number
 * of cases that failed. */
static inline int mb_cvt_run(const mb_cvt_case *cases, size_t ncases,
                             bool all) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t n32 = all ? (uint64_t)1 << 32 : (uint64_t)7 << 20;
  unsigned nth = std::thread::hardware_concurrency();
  if (nth == 0) nth = 1;
  if (nth > 64) nth = 64;
  std::vector<std::vector<mb_cvt_tally>> tallies(
      nth, std::vector<mb_cvt_tally>(ncases));
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < nth; ++k)
    threads.emplace_back([&, k] {
      std::vector<mb_cvt_tally> &tl = tallies[k];
      const uint64_t lo = n32 * k / nth, hi = n32 * (k + 1) / nth;
      uint32_t prev = mb_cvt_pattern(lo ? lo - 1 : n32 - 1, all);
      for (uint64_t i = lo; i < hi; ++i) {
        const uint32_t u = mb_cvt_pattern(i, all);
        for (size_t c = 0; c < ncases; ++c)
          if (cases[c].in_bits == 32) mb_cvt_one(cases[c], u, prev, tl[c]);
        prev = u;
      }
      if (k != 0) return; /* the narrow inputs, all of them, once */
      for (size_t c = 0; c < ncases; ++c)
        if (cases[c].in_bits < 32)
          for (uint32_t u = 0; u < (1u << cases[c].in_bits); ++u)
            mb_cvt_one(cases[c], u, 0, tl[c]);
    });
  for (std::thread &th : threads) th.join();

  int failed = 0;
  for (size_t c = 0; c < ncases; ++c) {
    mb_cvt_tally t;
    for (unsigned k = 0; k < nth; ++k) {
      const mb_cvt_tally &s = tallies[k][c];
      for (uint64_t j = 0; j < s.bad && j < 3; ++j)
        t.note(s.in[j], s.hi[j], s.got[j], s.want[j]);
      t.bad += s.bad > 3 ? s.bad - 3 : 0;
      t.runs += s.runs;
    }
    failed += t.bad != 0;
    printf("%-28s %12llu inputs  %s\n", cases[c].name,
           (unsigned long long)t.runs, t.bad ? "FAILED" : "ok");
    for (uint64_t j = 0; j < t.bad && j < 3; ++j) {
      if (cases[c].pair_test)
        printf("    in 0x%08x, 0x%08x:", t.in[j], t.hi[j]);
      else
        printf("    in 0x%08x:", t.in[j]);
      printf(" got 0x%08x, want 0x%08x\n", t.got[j], t.want[j]);
    }
    if (t.bad > 3)
      printf("    ... %llu mismatches in all\n", (unsigned long long)t.bad);
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  printf("f32 inputs: %s (%llu patterns), %u threads, %.1f s\n",
         all ? "all" : "the boundary sample", (unsigned long long)n32, nth, s);
  printf("%d passed, %d failed\n", (int)ncases - failed, failed);
  return failed;
}

/* --all: every f32 pattern; anything else is a usage error (-1). */
static inline int mb_cvt_all_arg(int argc, char **argv) {
  if (argc == 1) return 0;
  if (argc == 2 && strcmp(argv[1], "--all") == 0) return 1;
  fprintf(stderr, "usage: %s [--all]\n", argv[0]);
  return -1;
}

#endif
