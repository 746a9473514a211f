/* The reference for docs/results/mpi.md: the MPI calls mbench's MPI
 * collectives make (lib/mpi/mpi_coll.c), made directly, timed the way
 * mbench times a collective (lib/measure/runner_sample.c, runner_lock.c)
 * and with no libmicrobench in the process:
 *
 *   warm-up   single calls, each after a barrier and timed as a sample,
 *             for at least WARMUP_S seconds and at least WARMUP_RUNS
 *             calls (mbench's timing keys warmup and warmup_runs);
 *   a sample  MPI_Barrier, then BATCH calls back to back between two
 *             clock_gettime(CLOCK_MONOTONIC), then the maximum over the
 *             ranks of that time (MPI_Allreduce MAX), divided by BATCH;
 *   result    the median of SAMPLES such samples.
 *
 * MPI is initialized at the thread level LEVEL: "funneled" is what
 * libmicrobench_mpi asks for (MPI_Init_thread, MPI_THREAD_FUNNELED: the
 * process has other threads, OpenMP's and the watchdog, that make no MPI
 * calls), "single" a plain MPI_Init, as the OSU benchmarks do. Open MPI
 * 4.1 makes small calls slower above MPI_THREAD_SINGLE; both are measured
 * (docs/results/mpi.md).
 *
 * all_reduce is MPI_Allreduce out of place (sum); sendrecv is MPI_Sendrecv
 * in a ring, to rank + 1 and from rank - 1. Buffers are allocated as the
 * CPU backend allocates them (backends/cpu/cpu_memory.c): 64-byte aligned,
 * and from 2 MiB up 2 MiB-aligned with MADV_HUGEPAGE (transparent huge
 * pages), then written once before the warm-up. With --page-aligned they
 * are aligned_alloc(4096) in 4 KiB pages instead, as a plain program's
 * would be: MPI's large transfers are much slower from them here
 * (docs/results/mpi.md), which is the buffers, not the harness.
 *
 *   mpirun -n 2 mpi_direct [--page-aligned] LEVEL SAMPLES WARMUP_S
 *                          WARMUP_RUNS OP:COUNT:BATCH...
 *
 * OP is all_reduce or sendrecv, COUNT the element count (f32), BATCH the
 * calls per sample (bench/mpi_compare.py passes mbench's own). Rank 0
 * prints one JSON line per OP:COUNT:BATCH, in order:
 *   {"op": ..., "count": N, "bytes": B, "batch": K, "median_ns": M,
 *    "samples_ns": [...]}
 * Not a test: nothing here is added to ctest. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

typedef enum { ALL_REDUCE, SENDRECV } op_t;

typedef struct job {
  op_t op;
  int count;
  long batch;
} job_t;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

/* One call: the one MPI call mbench's run makes for this op. */
static int call(const job_t *j, const float *send, float *recv, int to,
                int from) {
  if (j->op == ALL_REDUCE)
    return MPI_Allreduce(send, recv, j->count, MPI_FLOAT, MPI_SUM,
                         MPI_COMM_WORLD);
  return MPI_Sendrecv(send, j->count, MPI_FLOAT, to, 0, recv, j->count,
                      MPI_FLOAT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* A sample: barrier, `batch` calls timed, the slowest rank's time. */
static double sample_ns(const job_t *j, long batch, const float *send,
                        float *recv, int to, int from) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_ns();
  for (long i = 0; i < batch; i++)
    if (call(j, send, recv, to, from) != MPI_SUCCESS)
      MPI_Abort(MPI_COMM_WORLD, 1);
  double ns = now_ns() - t0, worst = 0;
  MPI_Allreduce(&ns, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *buffer(size_t bytes, int page_aligned) {
  const size_t page = 4096, huge = (size_t)2 << 20;
  if (page_aligned) {
    const size_t rounded = (bytes + page - 1) / page * page;
    return aligned_alloc(page, rounded ? rounded : page);
  }
  const size_t align = bytes >= huge ? huge : 64;
  void *p = NULL;
  if (posix_memalign(&p, align, bytes ? bytes : 1)) return NULL;
#ifdef MADV_HUGEPAGE
  if (align == huge) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

typedef struct opts {
  long samples, warmup_runs;
  double warmup_s;
  int page_aligned;
} opts_t;

static int run_job(const job_t *j, const opts_t *o, int rank, int size) {
  const long samples = o->samples;
  const size_t bytes = (size_t)j->count * sizeof(float);
  float *send = buffer(bytes, o->page_aligned),
        *recv = buffer(bytes, o->page_aligned);
  double *s = malloc((size_t)samples * sizeof *s);
  if (!send || !recv || !s) return 1;
  /* Small integers, as mbench's inputs: every sum is exact. */
  for (int i = 0; i < j->count; i++) {
    send[i] = (float)((rank + i) % 7);
    recv[i] = 0.0f;
  }
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  /* Every rank stops warming up together: rank 0's clock decides. */
  const double start = now_ns();
  for (long runs = 1, go = 1; go; runs++) {
    sample_ns(j, 1, send, recv, to, from);
    go = runs < o->warmup_runs || now_ns() - start < o->warmup_s * 1e9;
    MPI_Bcast(&go, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  }
  for (long i = 0; i < samples; i++)
    s[i] = sample_ns(j, j->batch, send, recv, to, from) / (double)j->batch;
  if (rank == 0) {
    printf(
        "{\"op\": \"%s\", \"count\": %d, \"bytes\": %zu, \"batch\": %ld, "
        "\"samples_ns\": [",
        j->op == ALL_REDUCE ? "all_reduce" : "sendrecv", j->count, bytes,
        j->batch);
    for (long i = 0; i < samples; i++) printf("%s%.3f", i ? ", " : "", s[i]);
    printf("], \"median_ns\": %.3f}\n", median(s, samples));
    fflush(stdout);
  }
  free(s);
  free(recv);
  free(send);
  return 0;
}

static int parse_job(const char *arg, job_t *j) {
  char name[32];
  int used = 0;
  if (sscanf(arg, "%31[a-z_]:%d:%ld%n", name, &j->count, &j->batch, &used) !=
          3 ||
      arg[used] || j->count < 1 || j->batch < 1)
    return -1;
  if (!strcmp(name, "all_reduce"))
    j->op = ALL_REDUCE;
  else if (!strcmp(name, "sendrecv"))
    j->op = SENDRECV;
  else
    return -1;
  return 0;
}

/* The thread level named by argv[1] (-1: not one of them). */
static int thread_level(int argc, char **argv) {
  static const struct {
    const char *name;
    int level;
  } k_levels[] = {{"single", MPI_THREAD_SINGLE},
                  {"funneled", MPI_THREAD_FUNNELED}};
  for (size_t i = 0; argc > 1 && i < sizeof k_levels / sizeof k_levels[0]; i++)
    if (!strcmp(argv[1], k_levels[i].name)) return k_levels[i].level;
  return -1;
}

int main(int argc, char **argv) {
  const int page_aligned = argc > 1 && !strcmp(argv[1], "--page-aligned");
  if (page_aligned) argc--, argv++;
  const int level = thread_level(argc, argv);
  int provided = -1;
  if (level == MPI_THREAD_SINGLE)
    MPI_Init(&argc, &argv);
  else
    MPI_Init_thread(&argc, &argv, level < 0 ? MPI_THREAD_SINGLE : level,
                    &provided);
  /* Shift the level off: the rest are the arguments below. */
  argc--, argv++;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const opts_t o = {argc > 4 ? atol(argv[1]) : 0, argc > 4 ? atol(argv[3]) : -1,
                    argc > 4 ? atof(argv[2]) : -1, page_aligned};
  int bad = level < 0 || (level != MPI_THREAD_SINGLE && provided < level) ||
            o.samples < 1 || o.warmup_runs < 1 || !(o.warmup_s >= 0);
  for (int a = 4; a < argc && !bad; a++) {
    job_t j;
    if (parse_job(argv[a], &j)) {
      if (rank == 0) fprintf(stderr, "mpi_direct: bad job \"%s\"\n", argv[a]);
      bad = 1;
    }
  }
  if (bad) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpirun -n N mpi_direct [--page-aligned] single|funneled "
              "SAMPLES WARMUP_S WARMUP_RUNS "
              "{all_reduce|sendrecv}:COUNT:BATCH...\n");
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  for (int a = 4; a < argc && !rc; a++) {
    job_t j;
    parse_job(argv[a], &j);
    rc = run_job(&j, &o, rank, size);
  }
  MPI_Finalize();
  return rc;
}
