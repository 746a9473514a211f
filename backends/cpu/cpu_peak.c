/* CPU backend — peak FLOP/s, measured.
 *
 * A table of clock × vector width × FMA ports is wrong as often as it is
 * right (AVX-512 frequency licences, Zen 4 issuing 512-bit FMAs as two
 * halves, virtual machines, power limits), so we measure: every pinned thread
 * runs a loop of independent multiply-adds at the same time, and the peak is
 * the sum of their rates, each the best of several short rounds since
 * anything else running on the machine can only make a round slower. The loop
 * has enough accumulators to hide the FMA latency on every FMA port (latency
 * 4-6 × 2 ports ≤ 16), and the accumulators are combined and stored to a
 * volatile so nothing is elided.
 *
 * bf16 and int8 have two kinds of loop on a CPU with AMX: the vector
 * dot-products and the tile ones (cpu_peak_amx.c). Every loop the machine can
 * run is measured and the dtype's peak is the fastest, since a GEMM may use
 * whichever unit is faster: the peak is the machine's best for the dtype, not
 * one instruction set's.
 *
 * This file is always compiled optimised and uninstrumented (see
 * CMakeLists.txt): at -O0, or under a sanitizer, the accumulators live in
 * memory and the "peak" is a store-forwarding benchmark. */
#include "cpu_internal.h"
#include "cpu_peak_amx.h"

#include <stdio.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MB_CPU_X86 1
#endif

enum {
  CHUNK_ITERS = 4096, /* iterations between two clock reads: ~10-50 µs */
};
static const double warmup_s = 0.005; /* wakes the FPU up to full clock */
static const double round_s = 0.002;  /* 16 rounds: ~40 ms per dtype */
enum { ROUNDS = 16 };

typedef float (*peak_loop_fn)(uint64_t iters);

typedef struct peak_loop {
  const char *isa;
  int (*supported)(void); /* NULL: an AMX loop, see amx */
  unsigned amx;           /* the MB_CPU_AMX_* feature an AMX loop needs */
  double flop_per_iter;
  peak_loop_fn run;
} peak_loop_t;

/* ---- f32 loops ----------------------------------------------------------- */

/* acc = acc * a + b converges to b / (1 - a) = 1: no overflow, no denormal. */
#define MB_PEAK_A 0.999f
#define MB_PEAK_B 0.001f

#ifdef MB_CPU_X86
enum { AVX512_ACC = 16, AVX2_ACC = 12 }; /* 32 zmm / 16 ymm registers */

__attribute__((target("avx512f"))) static float fma_avx512(uint64_t iters) {
  const __m512 a = _mm512_set1_ps(MB_PEAK_A), b = _mm512_set1_ps(MB_PEAK_B);
  __m512 acc[AVX512_ACC];
  for (int i = 0; i < AVX512_ACC; ++i) acc[i] = _mm512_set1_ps((float)i);
  for (uint64_t n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < AVX512_ACC; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  for (int i = 1; i < AVX512_ACC; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) static float fma_avx2(uint64_t iters) {
  const __m256 a = _mm256_set1_ps(MB_PEAK_A), b = _mm256_set1_ps(MB_PEAK_B);
  __m256 acc[AVX2_ACC];
  for (int i = 0; i < AVX2_ACC; ++i) acc[i] = _mm256_set1_ps((float)i);
  for (uint64_t n = 0; n < iters; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < AVX2_ACC; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  for (int i = 1; i < AVX2_ACC; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, acc[0]);
  float sum = 0.0f;
  for (int i = 0; i < 8; ++i) sum += lanes[i];
  return sum;
}

/* vdpbf16ps: each 32-bit lane adds two bf16 products, so one 512-bit
 * instruction is 32 multiply-adds = 64 FLOP. The accumulators grow by
 * 2 × 0.01² per step: far from overflow for any measuring time. */
__attribute__((target("avx512f,avx512bf16"))) static float dp_bf16_avx512(
    uint64_t iters) {
  const __m512 x = _mm512_set1_ps(0.01f);
  const __m512bh a = _mm512_cvtne2ps_pbh(x, x);
  __m512 acc[AVX512_ACC];
  for (int i = 0; i < AVX512_ACC; ++i) acc[i] = _mm512_set1_ps((float)i);
  for (uint64_t n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < AVX512_ACC; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, a);
  }
  for (int i = 1; i < AVX512_ACC; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  return _mm512_reduce_add_ps(acc[0]);
}

/* vpdpbusd: each 32-bit lane adds four u8 x s8 products, so one 512-bit
 * instruction is 64 multiply-adds = 128 integer ops, the int8 GEMM's "FLOP".
 * Integer lanes wrap harmlessly; the sum only defeats dead-code removal. */
__attribute__((target("avx512f,avx512vnni"))) static float dp_i8_avx512(
    uint64_t iters) {
  const __m512i a = _mm512_set1_epi8(1);
  __m512i acc[AVX512_ACC];
  for (int i = 0; i < AVX512_ACC; ++i) acc[i] = _mm512_set1_epi32(i);
  for (uint64_t n = 0; n < iters; ++n) {
#pragma GCC unroll 16
    for (int i = 0; i < AVX512_ACC; ++i)
      acc[i] = _mm512_dpbusd_epi32(acc[i], a, a);
  }
  for (int i = 1; i < AVX512_ACC; ++i)
    acc[0] = _mm512_add_epi32(acc[0], acc[i]);
  return (float)_mm512_reduce_add_epi32(acc[0]);
}

/* __builtin_cpu_supports wants a literal, hence one function per feature.
 * It also checks that the OS saves the vector registers (XCR0). */
static int has_avx512f(void) {
  return __builtin_cpu_supports("avx512f") != 0;
}
static int has_avx2_fma(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static int has_avx512_bf16(void) {
  return has_avx512f() && __builtin_cpu_supports("avx512bf16") != 0;
}
static int has_avx512_vnni(void) {
  return has_avx512f() && __builtin_cpu_supports("avx512vnni") != 0;
}
#endif /* MB_CPU_X86 */

enum { SCALAR_ACC = 8 };

/* Whatever the compiler makes of a multiply-add on this target. */
static float fma_scalar(uint64_t iters) {
  float acc[SCALAR_ACC];
  for (int i = 0; i < SCALAR_ACC; ++i) acc[i] = (float)i;
  for (uint64_t n = 0; n < iters; ++n) {
#pragma GCC unroll 8
    for (int i = 0; i < SCALAR_ACC; ++i)
      acc[i] = acc[i] * MB_PEAK_A + MB_PEAK_B;
  }
  float sum = 0.0f;
  for (int i = 0; i < SCALAR_ACC; ++i) sum += acc[i];
  return sum;
}

static int always(void) {
  return 1;
}

/* Widest first; the first supported entry is used. */
static const peak_loop_t f32_loops[] = {
#ifdef MB_CPU_X86
    {"avx512f", has_avx512f, 0u, 2.0 * 16 * AVX512_ACC, fma_avx512},
    {"avx2+fma", has_avx2_fma, 0u, 2.0 * 8 * AVX2_ACC, fma_avx2},
#endif
    {"scalar", always, 0u, 2.0 * SCALAR_ACC, fma_scalar},
};

/* Every usable entry is measured; the fastest is the peak. */
static const peak_loop_t bf16_loops[] = {
    {"amx_bf16 tdpbf16ps", NULL, MB_CPU_AMX_BF16, MB_CPU_AMX_BF16_FLOP_PER_ITER,
     mb__cpu_amx_bf16_loop},
#ifdef MB_CPU_X86
    {"avx512_bf16 vdpbf16ps", has_avx512_bf16, 0u, 64.0 * AVX512_ACC,
     dp_bf16_avx512},
#endif
};

static const peak_loop_t i8_loops[] = {
    {"amx_int8 tdpbssd", NULL, MB_CPU_AMX_INT8, MB_CPU_AMX_I8_FLOP_PER_ITER,
     mb__cpu_amx_i8_loop},
#ifdef MB_CPU_X86
    {"avx512_vnni vpdpbusd", has_avx512_vnni, 0u, 128.0 * AVX512_ACC,
     dp_i8_avx512},
#endif
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Whether this machine runs `loop`; amx: what mb__cpu_amx_usable granted. */
static int usable(const peak_loop_t *loop, unsigned amx) {
  return loop->supported ? loop->supported() : (loop->amx & amx) != 0;
}

static const peak_loop_t *first_supported(const peak_loop_t *loops, size_t n,
                                          unsigned amx) {
  for (size_t i = 0; i < n; ++i)
    if (usable(&loops[i], amx)) return &loops[i];
  return NULL;
}

/* The usable loops' names joined by '+' ("amx_bf16 tdpbf16ps+avx512_bf16
 * vdpbf16ps"), or `none`: what the cache is keyed by. */
static void names(const peak_loop_t *loops, size_t n, unsigned amx,
                  const char *none, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n; ++i)
    if (usable(&loops[i], amx) && len < cap)
      len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "+" : "",
                              loops[i].isa);
  if (!out[0]) snprintf(out, cap, "%s", none);
}

/* Runs `loop` on this thread for at least `seconds`; returns FLOP/s. */
static double rate(const peak_loop_t *loop, double seconds) {
  volatile float sink = 0.0f;
  uint64_t iters = 0;
  const double t0 = mb__cpu_now_s();
  double t;
  do {
    sink = loop->run(CHUNK_ITERS);
    iters += CHUNK_ITERS;
    t = mb__cpu_now_s();
  } while (t - t0 < seconds);
  (void)sink;
  return (double)iters * loop->flop_per_iter / (t - t0);
}

/* All threads run at once (so the clock is the all-core one), each in short
 * rounds, keeping its best: another process sharing a core takes whole
 * scheduler slices of a few ms, so some round of each thread runs alone. The
 * peak is the sum of the threads' best rates. */
static double measure(const mb_cpu_state_t *st, const peak_loop_t *loop) {
  (void)st; /* only the pragma uses it: unused without OpenMP */
  double total = 0.0;
#pragma omp parallel num_threads(st->threads) reduction(+ : total)
  {
    (void)rate(loop, warmup_s);
#pragma omp barrier
    double best = 0.0;
    for (int r = 0; r < ROUNDS; ++r) {
      const double mine = rate(loop, round_s);
      if (mine > best) best = mine;
    }
    total += best;
  }
  return total;
}

/* One measurement can be spoiled whole (seen: exactly one core's worth, and
 * two low ones in a row, while the same process's GEMM later ran faster than
 * that "peak"). The peak is a property of the machine, so measure until one
 * comes within 3 % of the best so far (at least two, at most six), pausing
 * between tries so a passing disturbance can pass, and keep the best. */
static double measure_stable(const mb_cpu_state_t *st,
                             const peak_loop_t *loop) {
  double best = measure(st, loop);
  for (int i = 1; i < 6; ++i) {
    const struct timespec pause = {0, 5000000};
    nanosleep(&pause, NULL);
    const double now = measure(st, loop);
    const int agrees = now >= 0.97 * best;
    if (now > best) best = now;
    if (agrees) break;
  }
  return best;
}

/* The fastest of the usable `loops` (FLOP/s; 0 with none), the fastest
 * vector (not AMX) one in *vector, and, in `won`,
 * its name followed by the others' rates ("amx_bf16 tdpbf16ps (avx512_bf16
 * vdpbf16ps 173 G)"), so peak_source shows that each was measured. */
static double fastest(const mb_cpu_state_t *st, const peak_loop_t *loops,
                      size_t n, unsigned amx, double *vector, char *won,
                      size_t cap) {
  double rates[4] = {0};
  size_t best = n;
  *vector = 0.0;
  for (size_t i = 0; i < n && i < COUNT(rates); ++i) {
    if (!usable(&loops[i], amx)) continue;
    rates[i] = measure_stable(st, &loops[i]);
    if (best == n || rates[i] > rates[best]) best = i;
    if (!loops[i].amx && rates[i] > *vector) *vector = rates[i];
  }
  if (best == n) return 0.0;
  size_t len = (size_t)snprintf(won, cap, "%s", loops[best].isa);
  const char *open = " (";
  for (size_t i = 0; i < n && i < COUNT(rates) && len < cap; ++i) {
    if (i == best || rates[i] == 0.0) continue;
    len += (size_t)snprintf(won + len, cap - len, "%s%s %.0f G", open,
                            loops[i].isa, 1e-9 * rates[i]);
    open = ", ";
  }
  if (open[0] == ',' && len < cap) snprintf(won + len, cap - len, ")");
  return rates[best];
}

void mb__cpu_peak_measure(mb_cpu_state_t *st) {
  /* Asked before any loop runs on the pinned threads: the tile permission
   * is the process's, and the cache key says whether AMX is in. */
  char no_amx[160];
  const unsigned amx = mb__cpu_amx_usable(no_amx, sizeof no_amx);
  const peak_loop_t *f32 = first_supported(f32_loops, COUNT(f32_loops), amx);
  char bf16[96], i8[96], loops[224];
  /* Without bf16 dot-products bf16 math is converted to f32; without int8
   * ones there is no int8 roof worth quoting. */
  names(bf16_loops, COUNT(bf16_loops), amx, "as f32", bf16, sizeof bf16);
  names(i8_loops, COUNT(i8_loops), amx, "unknown", i8, sizeof i8);
  snprintf(loops, sizeof loops, "f32 %s, bf16 %s, i8 %s", f32->isa, bf16, i8);
  mb_cpu_peak_cache_t cache;
  mb__cpu_peak_cache_init(st, loops, &cache);
  if (mb__cpu_peak_cache_load(st, &cache)) return;
  st->peak[MB_DTYPE_F32] = measure_stable(st, f32);
  st->peak_vector[MB_DTYPE_F32] = st->peak[MB_DTYPE_F32];
  st->peak[MB_DTYPE_BF16] =
      fastest(st, bf16_loops, COUNT(bf16_loops), amx,
              &st->peak_vector[MB_DTYPE_BF16], bf16, sizeof bf16);
  if (st->peak_vector[MB_DTYPE_BF16] == 0.0)
    st->peak_vector[MB_DTYPE_BF16] = st->peak[MB_DTYPE_F32];
  if (st->peak[MB_DTYPE_BF16] == 0.0)
    st->peak[MB_DTYPE_BF16] = st->peak[MB_DTYPE_F32];
  st->peak[MB_DTYPE_I8] = fastest(st, i8_loops, COUNT(i8_loops), amx,
                                  &st->peak_vector[MB_DTYPE_I8], i8, sizeof i8);
  snprintf(st->peak_source, sizeof st->peak_source,
           "measured: FMA loops, f32 %s, bf16 %s, i8 %s, %u thread%s%s%s",
           f32->isa, bf16, i8, st->threads, st->threads == 1 ? "" : "s",
           no_amx[0] ? "; " : "", no_amx);
  mb__cpu_peak_cache_store(st, &cache);
}
