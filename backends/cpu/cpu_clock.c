/* CPU backend — the clock of the cores the benchmark threads are bound to,
 * read before and after every sample (untimed) for the per-sample
 * telemetry, so a slow sample can be told apart from a slow clock.
 *
 * Sources, best first; the first that reads for every bound CPU at init is
 * kept for the life of the state:
 * 1. cpufreq's scaling_cur_freq of each bound CPU (kHz): the kernel's idea of
 *    the running clock (on x86 usually an APERF/MPERF average since the last
 *    tick, with some drivers the clock last requested).
 * 2. The "cpu MHz" lines of /proc/cpuinfo: on recent x86 kernels the same
 *    APERF/MPERF average on bare metal; in a virtual machine, which usually
 *    hides APERF/MPERF, it is the nominal clock and says nothing about
 *    turbo or throttling (the clock_source fact says so).
 * 3. None: the clock is NAN.
 * Reading is cheap and allocation-free: the files are opened once and read
 * again from offset 0 with pread (sysfs and procfs regenerate a file read
 * from its start); /proc/cpuinfo is parsed as it streams through one buffer
 * allocated at init, and reading stops once every bound CPU is seen. */
#include "cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Holds any /proc/cpuinfo line we parse; a longer one (a flags line of some
 * future CPU) is skipped, which is harmless: we need no such line. */
enum { cpuinfo_buf_size = 16384 };

int mb__cpu_fs_path(const mb_cpu_state_t *st, char *buf, size_t size,
                    const char *fmt, ...) {
  if (st->fsroot_len >= sizeof st->fsroot) return 0; /* unusable root */
  const size_t root = st->fsroot_len;
  if (root >= size) return 0;
  memcpy(buf, st->fsroot, root);
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf + root, size - root, fmt, ap);
  va_end(ap);
  return n >= 0 && (size_t)n < size - root;
}

static ssize_t pread_retry(int fd, char *buf, size_t size, off_t offset) {
  ssize_t n;
  do {
    n = pread(fd, buf, size, offset);
  } while (n < 0 && errno == EINTR);
  return n;
}

/* ---- cpufreq ------------------------------------------------------------- */

static int read_khz(int fd, double *khz) {
  char buf[32];
  const ssize_t n = pread_retry(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *end;
  const double v = strtod(buf, &end);
  if (end == buf || !(v > 0) || !isfinite(v)) return 0; /* "<unknown>" */
  *khz = v;
  return 1;
}

static double cpufreq_mean_hz(const mb_cpu_clock_t *c) {
  double sum = 0.0;
  for (unsigned i = 0; i < c->num_fds; ++i) {
    double khz;
    if (!read_khz(c->fds[i], &khz)) return NAN;
    sum += khz;
  }
  return c->num_fds ? 1e3 * sum / c->num_fds : NAN;
}

static void close_cpufreq(mb_cpu_clock_t *c) {
  for (unsigned i = 0; i < c->num_fds; ++i) close(c->fds[i]);
  free(c->fds);
  c->fds = NULL;
  c->num_fds = 0;
}

static int open_cpufreq(mb_cpu_state_t *st) {
  mb_cpu_clock_t *c = &st->clock;
  const int weight = hwloc_bitmap_weight(st->bound);
  if (weight <= 0) return 0;
  c->fds = malloc((size_t)weight * sizeof *c->fds);
  if (!c->fds) return 0;
  for (int cpu = hwloc_bitmap_first(st->bound); cpu >= 0;
       cpu = hwloc_bitmap_next(st->bound, cpu)) {
    char path[4096];
    const int fd = mb__cpu_fs_path(st, path, sizeof path,
                                   "/sys/devices/system/cpu/cpu%d/cpufreq/"
                                   "scaling_cur_freq",
                                   cpu)
                       ? open(path, O_RDONLY | O_CLOEXEC)
                       : -1;
    if (fd < 0) {
      close_cpufreq(c);
      return 0;
    }
    c->fds[c->num_fds++] = fd;
  }
  if (!isfinite(cpufreq_mean_hz(c))) {
    close_cpufreq(c);
    return 0;
  }
  c->kind = MB_CPU_CLOCK_CPUFREQ;
  c->source = "cpufreq scaling_cur_freq of the bound CPUs";
  return 1;
}

/* ---- /proc/cpuinfo ------------------------------------------------------- */

typedef struct cpuinfo_scan {
  hwloc_const_bitmap_t want;
  int cpu;        /* the block we are in ("processor : N"); -1 none */
  int found;      /* bound CPUs whose clock we have */
  double sum_mhz; /* over those */
  int read_all;   /* do not stop early (init: look at the flags too) */
  int hypervisor; /* a flags line names "hypervisor" */
} cpuinfo_scan_t;

/* Whether the key of "key<blanks>: value" (the text before `colon`) is
 * exactly `name`. */
static int key_is(const char *line, const char *colon, const char *name) {
  const char *end = colon;
  while (end > line && (end[-1] == ' ' || end[-1] == '\t')) --end;
  const size_t len = strlen(name);
  return (size_t)(end - line) == len && memcmp(line, name, len) == 0;
}

static void cpuinfo_line(cpuinfo_scan_t *s, const char *line) {
  const char *colon = strchr(line, ':');
  if (!colon) return;
  char *end;
  if (key_is(line, colon, "processor")) {
    const long cpu = strtol(colon + 1, &end, 10);
    s->cpu = end != colon + 1 && cpu >= 0 && cpu <= INT32_MAX ? (int)cpu : -1;
  } else if (key_is(line, colon, "cpu MHz")) {
    const double mhz = strtod(colon + 1, &end);
    if (s->cpu >= 0 && hwloc_bitmap_isset(s->want, (unsigned)s->cpu) &&
        end != colon + 1 && mhz > 0 && isfinite(mhz)) {
      s->sum_mhz += mhz;
      ++s->found;
    }
    s->cpu = -1; /* one clock per block */
  } else if (s->read_all && key_is(line, colon, "flags") &&
             strstr(colon, " hypervisor")) {
    s->hypervisor = 1;
  }
}

/* Streams the file from its start through c->buf, line by line. */
static int cpuinfo_scan(mb_cpu_clock_t *c, cpuinfo_scan_t *s, int want) {
  size_t have = 0;
  off_t offset = 0;
  int skipping = 0; /* inside a line longer than the buffer */
  for (;;) {
    const ssize_t n = pread_retry(c->cpuinfo_fd, c->buf + have,
                                  c->buf_size - 1 - have, offset);
    if (n < 0) return 0;
    if (n == 0) { /* a last line without its newline is still a line */
      c->buf[have] = '\0';
      if (have && !skipping) cpuinfo_line(s, c->buf);
      break;
    }
    offset += n;
    have += (size_t)n;
    char *line = c->buf, *nl;
    while ((nl = memchr(line, '\n', have - (size_t)(line - c->buf)))) {
      *nl = '\0';
      if (!skipping) cpuinfo_line(s, line);
      skipping = 0;
      line = nl + 1;
    }
    size_t rest = have - (size_t)(line - c->buf);
    if (rest == c->buf_size - 1) { /* no newline in a full buffer */
      skipping = 1;
      rest = 0;
    }
    memmove(c->buf, line, rest);
    have = rest;
    if (!s->read_all && s->found == want) break;
  }
  return 1;
}

static double cpuinfo_mean_hz(mb_cpu_state_t *st, cpuinfo_scan_t *s) {
  const int want = hwloc_bitmap_weight(st->bound);
  if (want <= 0 || !cpuinfo_scan(&st->clock, s, want) || s->found != want)
    return NAN;
  return 1e6 * s->sum_mhz / want;
}

static void close_cpuinfo(mb_cpu_clock_t *c) {
  if (c->buf) close(c->cpuinfo_fd);
  free(c->buf);
  c->buf = NULL;
}

static int open_cpuinfo(mb_cpu_state_t *st) {
  mb_cpu_clock_t *c = &st->clock;
  char path[4096];
  if (!mb__cpu_fs_path(st, path, sizeof path, "/proc/cpuinfo")) return 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  c->buf = malloc(cpuinfo_buf_size);
  if (!c->buf) {
    close(fd);
    return 0;
  }
  c->buf_size = cpuinfo_buf_size;
  c->cpuinfo_fd = fd;
  cpuinfo_scan_t s = {st->bound, -1, 0, 0.0, 1, 0};
  if (!isfinite(cpuinfo_mean_hz(st, &s))) {
    close_cpuinfo(c);
    return 0;
  }
  c->kind = MB_CPU_CLOCK_CPUINFO;
  c->source =
      s.hypervisor
          ? "/proc/cpuinfo cpu MHz of the bound CPUs (virtual machine: may be "
            "the nominal clock, not the running one)"
          : "/proc/cpuinfo cpu MHz of the bound CPUs";
  return 1;
}

/* ---- the clock ----------------------------------------------------------- */

void mb__cpu_clock_open(mb_cpu_state_t *st) {
  if (open_cpufreq(st) || open_cpuinfo(st)) return;
  st->clock.kind = MB_CPU_CLOCK_NONE;
  st->clock.source = "none";
}

void mb__cpu_clock_close(mb_cpu_clock_t *c) {
  close_cpufreq(c);
  close_cpuinfo(c);
  c->kind = MB_CPU_CLOCK_NONE;
}

double mb__cpu_clock_hz(mb_cpu_state_t *st) {
  switch (st->clock.kind) {
    case MB_CPU_CLOCK_CPUFREQ:
      return cpufreq_mean_hz(&st->clock);
    case MB_CPU_CLOCK_CPUINFO: {
      cpuinfo_scan_t s = {st->bound, -1, 0, 0.0, 0, 0};
      return cpuinfo_mean_hz(st, &s);
    }
    case MB_CPU_CLOCK_NONE:
      break;
  }
  return NAN;
}
