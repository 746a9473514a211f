/* The memory system's rate for each shape of traffic the CPU backend's
 * memory-bound kernels have (docs/results/cpu.md, issue 26): read only (an
 * absmax pass), write only, copy (one read, one write of the same size),
 * widen 1 -> 2 bytes (dequantize fp8/i8 -> bf16), widen 1 -> 4 (4-bit
 * codes -> bf16), narrow 2 -> 1 (quantize bf16 -> fp8/i8), and two reads to
 * one write (add). Each in GB/s of the
 * bytes it moves and as a share of copy's, on the same threads in one run:
 * the copy bandwidth is the roof the CPU roofs table holds every
 * memory-bound op to, and a kernel whose mix of reads and writes differs
 * from copy's meets a different ceiling.
 *
 * Last, the ceiling of a dynamic quantization with one scale for the whole
 * tensor (or per column, or transposed) on an X past the caches: its absmax
 * must read all of X before any element is divided, so X is read twice,
 * while its byte count (lib/ops/quantize.c) holds |X| + |Q| once. Time =
 * |X| / read + (|X| + |Q|) / narrow; the share of copy that leaves.
 *
 *   mem_shapes [MiB per buffer, 128] [repetitions, 5]
 *
 * Threads: OpenMP's (OMP_NUM_THREADS; pin with OMP_PROC_BIND=close). The
 * stores are non-temporal (SSE2 movntdq, the baseline of x86-64; plain
 * stores on other CPUs), as the backend's kernels write outputs past the
 * caches; the best of the repetitions is printed. A benchmark, not a
 * test. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <emmintrin.h>
typedef __m128i vec_t;
static inline vec_t vload(const void *p) {
  return _mm_load_si128((const __m128i *)p);
}
static inline void vstream(void *p, vec_t v) {
  _mm_stream_si128((__m128i *)p, v);
}
static inline vec_t vor(vec_t a, vec_t b) {
  return _mm_or_si128(a, b);
}
static inline vec_t vzero(void) {
  return _mm_setzero_si128();
}
static inline unsigned vlow(vec_t v) {
  return (unsigned)_mm_cvtsi128_si32(v);
}
static inline void fence(void) {
  _mm_sfence();
}
#else
typedef struct {
  uint64_t a, b;
} vec_t;
static inline vec_t vload(const void *p) {
  vec_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void vstream(void *p, vec_t v) {
  memcpy(p, &v, sizeof v);
}
static inline vec_t vor(vec_t a, vec_t b) {
  return (vec_t){a.a | b.a, a.b | b.b};
}
static inline vec_t vzero(void) {
  return (vec_t){0, 0};
}
static inline unsigned vlow(vec_t v) {
  return (unsigned)v.a;
}
static inline void fence(void) {}
#endif

enum { V = sizeof(vec_t) };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The buffers: a, b read; c written (n bytes each), h half of n. */
typedef struct bufs {
  unsigned char *a, *b, *c;
  size_t n;
  unsigned sink; /* keeps the reads */
} bufs_t;

/* Each shape moves `read` and `written` bytes (a multiple of V apart). The
 * loops' arithmetic is one OR at most: the memory system, not the cores,
 * sets the pace. */
static void read_only(bufs_t *m) {
  unsigned s = 0;
#pragma omp parallel reduction(| : s)
  {
    vec_t acc = vzero();
#pragma omp for schedule(static)
    for (size_t i = 0; i < m->n; i += V) acc = vor(acc, vload(m->a + i));
    s |= vlow(acc);
  }
  m->sink |= s;
}

static void write_only(bufs_t *m) {
#pragma omp parallel
  {
    const vec_t z = vzero();
#pragma omp for schedule(static)
    for (size_t i = 0; i < m->n; i += V) vstream(m->c + i, z);
    fence();
  }
}

/* n/k bytes read, n written: each vector read is stored k times over; k = 1
 * is copy, 2 and 4 the widening of dequantize. */
static void spread(bufs_t *m, size_t k) {
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (size_t i = 0; i < m->n / k; i += V) {
      const vec_t v = vload(m->a + i);
      for (size_t r = 0; r < k; ++r) vstream(m->c + k * i + r * V, v);
    }
    fence();
  }
}

static void copy(bufs_t *m) {
  spread(m, 1);
}

static void widen(bufs_t *m) {
  spread(m, 2);
}

static void widen4(bufs_t *m) {
  spread(m, 4);
}

/* n read, n/2 written. */
static void narrow(bufs_t *m) {
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (size_t i = 0; i < m->n / 2; i += V)
      vstream(m->c + i, vor(vload(m->a + 2 * i), vload(m->a + 2 * i + V)));
    fence();
  }
}

/* 2n read, n written. */
static void two_to_one(bufs_t *m) {
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (size_t i = 0; i < m->n; i += V)
      vstream(m->c + i, vor(vload(m->a + i), vload(m->b + i)));
    fence();
  }
}

typedef struct shape {
  const char *name, *like;
  void (*run)(bufs_t *);
  double read, written; /* in units of n */
} shape_t;

static const shape_t k_shapes[] = {
    {"read only", "an absmax pass", read_only, 1.0, 0.0},
    {"write only", "-", write_only, 0.0, 1.0},
    {"copy 1 : 1", "copy", copy, 1.0, 1.0},
    {"widen 1 -> 2", "dequantize fp8/i8 -> bf16", widen, 0.5, 1.0},
    {"widen 1 -> 4", "dequantize i4/e2m1 -> bf16", widen4, 0.25, 1.0},
    {"narrow 2 -> 1", "quantize bf16 -> fp8/i8", narrow, 1.0, 0.5},
    {"two reads : one write", "add", two_to_one, 2.0, 1.0},
};
enum { NSHAPES = sizeof k_shapes / sizeof k_shapes[0] };

int main(int argc, char **argv) {
  const long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 128;
  const long reps = argc > 2 ? strtol(argv[2], NULL, 10) : 5;
  if (mib < 1 || mib > 65536 || reps < 1 || reps > 1000) {
    fprintf(stderr,
            "mem_shapes: MiB per buffer in 1..65536 (got %ld), repetitions in "
            "1..1000 (got %ld)\nusage: mem_shapes [MiB] [repetitions]\n",
            mib, reps);
    return 2;
  }
  bufs_t m = {NULL, NULL, NULL, (size_t)mib << 20, 0};
  /* huge-page aligned, as mbench's; C11 wants a size the alignment divides */
  const size_t align = (size_t)2 << 20;
  const size_t bytes = (m.n + align - 1) / align * align;
  m.a = aligned_alloc(align, bytes);
  m.b = aligned_alloc(align, bytes);
  m.c = aligned_alloc(align, bytes);
  if (!m.a || !m.b || !m.c) {
    fprintf(stderr, "mem_shapes: out of memory for 3 x %ld MiB\n", mib);
    return 1;
  }
  memset(m.a, 1, m.n), memset(m.b, 2, m.n), memset(m.c, 3, m.n);
  double gbs[NSHAPES];
  for (int s = 0; s < NSHAPES; ++s) {
    double best = 1e30;
    for (long r = 0; r < reps + 1; ++r) { /* the first: a warm-up */
      const double t0 = now();
      k_shapes[s].run(&m);
      const double t = now() - t0;
      if (r > 0 && t < best) best = t;
    }
    gbs[s] =
        (k_shapes[s].read + k_shapes[s].written) * (double)m.n / best / 1e9;
  }
  const double copy_gbs = gbs[2];
  printf("| traffic | like | GB/s | of copy |\n|---|---|---:|---:|\n");
  for (int s = 0; s < NSHAPES; ++s)
    printf("| %s | %s | %.1f | %.0f %% |\n", k_shapes[s].name, k_shapes[s].like,
           gbs[s], 100.0 * gbs[s] / copy_gbs);
  /* bf16 X, 8-bit Q: |X| = 2, |Q| = 1 a element; counted 3, moved 5. */
  const double t = 2.0 / gbs[0] + 3.0 / gbs[4];
  printf(
      "\nTwo passes (bf16 X read by an absmax pass, then narrowed to "
      "8-bit Q), bytes counted once: %.1f GB/s, %.0f %% of copy.\n",
      3.0 / t, 100.0 * 3.0 / t / copy_gbs);
  printf("(%ld MiB buffers, best of %ld, checksum %u)\n", mib, reps,
         m.sink & 1u);
  free(m.a), free(m.b), free(m.c);
  return 0;
}
