/* What the sampled check of a large GEMM costs (docs/results/cpu.md,
 * "Verification cost"; issue 20 item 4: keep the check of a 16384^3 gemm
 * under 1 s). A benchmark, not a test: a timed assertion would fail on any
 * slower or busier machine, so this prints a markdown table instead.
 *
 * It calls the library's own check (lib/ops/verify.h), the same two halves
 * mb__verify() runs: the op's ref_prepare (which transposes B once, in its
 * own dtype, for every sampled dot product to read; A is read in place)
 * and mb__verify_with (the
 * MB__VERIFY_SAMPLES + 2 elements, each recomputed exactly in double).
 * Timing the halves apart shows which one to speed up.
 *
 * The output checked is all zeros, as in tests/test_ops.c: computing the
 * real product of a 16384^3 GEMM would take minutes here, and the check
 * does the same work whatever it finds (it never stops at the first wrong
 * element), so the cost measured is the cost of checking a real output.
 *
 *   verify_cost [--reps R] [N ...]     (default: --reps 3, N = 4096 16384)
 *
 * Each N is a square N x N x N gemm, in f32 and in bf16; each column is the
 * median of R repetitions on the same inputs.
 */
#include <microbench.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/verify.h"

enum { MAX_REPS = 15, MAX_ROLES = 8 };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One operand as the op describes it: dtype and element count. */
static size_t operand_numel(const mb_op_params_t *p, uint32_t role,
                            mb_dtype_t *dtype) {
  uint32_t nd = 0;
  int64_t shape[MB_MAX_DIMS];
  if (mb_op_operand(&mb__op_gemm, p, role, dtype, &nd, shape) != MB_OK)
    return 0;
  size_t n = 1;
  for (uint32_t d = 0; d < nd; d++) n *= (size_t)shape[d];
  return n;
}

/* Times the check of one n^3 gemm of `dtype`; prints a table row.
 * Returns 0, or 1 on an error (message on stderr). */
static int one_case(int64_t n, mb_dtype_t dtype, int reps) {
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = p.shape[1] = p.shape[2] = n;
  p.dtype = dtype;
  if (mb_op_resolve(&mb__op_gemm, &p) != MB_OK) {
    fprintf(stderr, "gemm %lld^3: %s\n", (long long)n, mb_error_last());
    return 1;
  }
  const uint32_t nin = mb_op_num_inputs(&mb__op_gemm);
  const uint32_t nroles = nin + mb_op_num_outputs(&mb__op_gemm);
  if (nroles > MAX_ROLES) return 1;
  void *buf[MAX_ROLES] = {0};
  const void *host[MAX_ROLES];
  int rc = 0;
  for (uint32_t r = 0; r < nroles && rc == 0; r++) {
    mb_dtype_t dt = MB_DTYPE_F32;
    size_t numel = operand_numel(&p, r, &dt);
    /* Scales of an unscaled gemm may be empty; the reference still reads
     * one value (1.0) through their pointer, as tests/test_ops.c passes. */
    if (numel == 0) numel = 1;
    const size_t bytes = (numel * mb_dtype_bits(dt) + 7) / 8;
    buf[r] = calloc(bytes ? bytes : 1, 1); /* outputs stay zero */
    if (!buf[r]) {
      fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
      rc = 1;
      break;
    }
    host[r] = buf[r];
    if (r < 2) { /* A and B: the generator every backend uses */
      mb_fill_t f = MB_FILL_INIT;
      f.seed = r + 1;
      rc = mb_fill_host(buf[r], dt, numel, &f) != MB_OK;
    } else if (r < nin) { /* scales: 1 */
      mb_fill_t f = MB_FILL_INIT;
      f.kind = MB_FILL_CONSTANT;
      f.a = 1.0;
      rc = mb_fill_host(buf[r], dt, numel, &f) != MB_OK;
    }
  }
  double prep[MAX_REPS], check[MAX_REPS], total[MAX_REPS];
  mb_correctness_t c = MB_CORRECTNESS_INIT;
  for (int i = 0; i < reps && rc == 0; i++) {
    void *ref = NULL;
    const double t0 = now_s();
    if (mb__op_gemm.ref_prepare(&p, host, &ref) != MB_OK) {
      fprintf(stderr, "ref_prepare: %s\n", mb_error_last());
      rc = 1;
      break;
    }
    const double t1 = now_s();
    mb__verify_with(&mb__op_gemm, &p, ref, host + nin, 7, &c);
    const double t2 = now_s();
    mb__op_gemm.ref_release(ref);
    const double t3 = now_s();
    prep[i] = t1 - t0;
    check[i] = t2 - t1;
    total[i] = t3 - t0; /* what mb__verify() costs: release included */
  }
  if (rc == 0) {
    const double tot = median(total, reps);
    printf(
        "| %lldx%lldx%lld | %s | %llu of %llu | %.3f s | %.3f s | %.3f s "
        "| %s |\n",
        (long long)n, (long long)n, (long long)n, mb_dtype_name(dtype),
        (unsigned long long)c.elements_checked,
        (unsigned long long)c.elements_total, median(prep, reps),
        median(check, reps), tot, tot < 1.0 ? "yes" : "**no**");
    fflush(stdout);
  }
  for (uint32_t r = 0; r < nroles; r++) free(buf[r]);
  return rc;
}

int main(int argc, char **argv) {
  int reps = 3, first = 1;
  if (argc > 2 && strcmp(argv[1], "--reps") == 0) {
    reps = atoi(argv[2]);
    first = 3;
  }
  if (reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "--reps: %d; give 1 to %d\n", reps, MAX_REPS);
    return 2;
  }
  static const int64_t k_default[] = {4096, 16384};
  int64_t sizes[16];
  int count = 0;
  for (int i = first; i < argc && count < 16; i++) {
    sizes[count] = atoll(argv[i]);
    if (sizes[count] < 1) {
      fprintf(stderr, "N: %s; give a positive size\n", argv[i]);
      return 2;
    }
    count++;
  }
  if (count == 0)
    for (; count < 2; count++) sizes[count] = k_default[count];

  printf(
      "libmicrobench %s (commit %s); %u sampled elements per check, "
      "median of %d repetitions\n\n",
      mb_version(), mb_git_commit(), MB__VERIFY_SAMPLES + 2, reps);
  printf(
      "| gemm | dtype | elements checked | prepare (transpose B) | sampled "
      "check | total | under 1 s |\n"
      "|---|---|---:|---:|---:|---:|---|\n");
  static const mb_dtype_t k_dtypes[] = {MB_DTYPE_F32, MB_DTYPE_BF16};
  for (int i = 0; i < count; i++)
    for (size_t d = 0; d < sizeof k_dtypes / sizeof k_dtypes[0]; d++)
      if (one_case(sizes[i], k_dtypes[d], reps) != 0) return 1;
  return 0;
}
