/* CPU backend — the measured peaks, saved once per machine.
 *
 * Measuring the peaks (cpu_peak.c) takes 0.1-0.5 s, longer than everything
 * else a process does before its first benchmark, and the answer is a
 * property of the machine: so the first process saves it in a small text
 * file and later ones read it back. The file is keyed by what the peak
 * depends on: the CPU model and microcode (a microcode update can turn
 * features off or slow them), the cores and threads we run on (taskset,
 * cgroups), the loops chosen (ISA) and the library version (the loops may
 * change with it). Any other content — another key, a truncated or foreign
 * file, a time in the future — is a miss: the peaks are measured and the
 * file rewritten (a temporary file renamed over it, so a reader never sees
 * half a file). A cache that cannot be read or written is not an error:
 * the peaks are measured as before and peak_source says so.
 *
 * Where: $MB_CACHE_DIR, else $XDG_CACHE_HOME/microbench, else
 * ~/.cache/microbench. MB_REMEASURE_PEAK=1 measures whatever the file
 * holds (and saves the new figures). */
#include "cpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_FILE "cpu-peak-v1"
/* Far more than a valid file (about 500 bytes): a larger one is not ours. */
enum { MAX_FILE = 8192 };

/* ---- where --------------------------------------------------------------- */

static int nonempty(const char *s) {
  return s && *s;
}

/* The cache directory, or 0 when there is none (no HOME, or too long). */
static int cache_dir(char *buf, size_t cap) {
  const char *dir = getenv("MB_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n;
  if (nonempty(dir))
    n = snprintf(buf, cap, "%s", dir);
  else if (nonempty(xdg) && xdg[0] == '/') /* relative: invalid per XDG */
    n = snprintf(buf, cap, "%s/microbench", xdg);
  else if (nonempty(home))
    n = snprintf(buf, cap, "%s/.cache/microbench", home);
  else
    return 0;
  return n > 0 && (size_t)n < cap;
}

/* mkdir -p: each missing component made in turn. */
static int make_dirs(const char *dir) {
  char path[sizeof((mb_cpu_peak_cache_t *)0)->path];
  snprintf(path, sizeof path, "%s", dir);
  for (char *s = path + 1;; ++s) {
    const char c = *s;
    if (c != '/' && c != '\0') continue;
    *s = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    *s = c;
    if (c == '\0') return 0;
  }
}

/* ---- the key ------------------------------------------------------------- */

/* The first "microcode" line of /proc/cpuinfo (x86 has one; elsewhere there
 * is none and the key says so). Read under MB_CPU_FSROOT like the other
 * procfs reads, so tests can fake it. */
static void read_microcode(const mb_cpu_state_t *st, char *out, size_t cap) {
  snprintf(out, cap, "none");
  char path[512];
  if (!mb__cpu_fs_path(st, path, sizeof path, "/proc/cpuinfo")) return;
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[256];
  int at_start = 1; /* a long line (flags) comes in several pieces */
  while (fgets(line, sizeof line, f)) {
    const int starts = at_start;
    at_start = strchr(line, '\n') != NULL;
    if (!starts || strncmp(line, "microcode", 9) != 0) continue;
    const char *v = strchr(line, ':');
    if (!v) continue;
    v += strspn(v + 1, " \t") + 1;
    snprintf(out, cap, "%.*s", (int)strcspn(v, "\r\n"), v);
    break;
  }
  fclose(f);
}

/* A key or source line holds no line break, whatever the text. */
static void one_line(char *s) {
  for (; *s; ++s)
    if (*s == '\n' || *s == '\r') *s = ' ';
}

void mb__cpu_peak_cache_init(mb_cpu_state_t *st, const char *loops,
                             mb_cpu_peak_cache_t *c) {
  memset(c, 0, sizeof *c);
  const char *again = getenv("MB_REMEASURE_PEAK");
  c->remeasure = nonempty(again) && strcmp(again, "0") != 0;
  char dir[sizeof c->path - sizeof CACHE_FILE - 1];
  if (cache_dir(dir, sizeof dir))
    snprintf(c->path, sizeof c->path, "%s/%s", dir, CACHE_FILE);
  char model[sizeof st->name], microcode[64];
  snprintf(model, sizeof model, "%s", st->name);
  one_line(model);
  read_microcode(st, microcode, sizeof microcode);
  snprintf(c->key, sizeof c->key,
           "model=%s\nmicrocode=%s\ncores=%u\nthreads=%u\nloops=%s\n"
           "library=%d.%d.%d\n",
           model, microcode, st->cores, st->threads, loops, MB_VERSION_MAJOR,
           MB_VERSION_MINOR, MB_VERSION_PATCH);
}

/* ---- reading ------------------------------------------------------------- */

static const char header[] =
    "# microbench: this machine's CPU peaks, measured once and reused (delete "
    "the file or set MB_REMEASURE_PEAK=1 to measure again)\n";

/* The value of line "name=VALUE\n" at *p, which is advanced past it; NULL
 * when the line is another one or has no end. The value is cut at the
 * line break in place. */
static char *field(char **p, const char *name) {
  const size_t n = strlen(name);
  if (strncmp(*p, name, n) != 0 || (*p)[n] != '=') return NULL;
  char *v = *p + n + 1, *end = strchr(v, '\n');
  if (!end) return NULL;
  *end = '\0';
  *p = end + 1;
  return v;
}

/* A whole decimal number (the peaks are saved as whole FLOP/s, the time as
 * whole seconds: no decimal point, so no locale can misread them). */
static int whole(const char *s, unsigned long long *out) {
  if (!s || *s < '0' || *s > '9') return 0;
  char *end;
  errno = 0;
  *out = strtoull(s, &end, 10);
  return errno == 0 && *end == '\0';
}

static void format_age(long long s, char *buf, size_t cap) {
  if (s < 60)
    snprintf(buf, cap, "%lld s", s);
  else if (s < 3600)
    snprintf(buf, cap, "%lld min", s / 60);
  else if (s < 48 * 3600)
    snprintf(buf, cap, "%lld h", s / 3600);
  else
    snprintf(buf, cap, "%lld days", s / 86400);
}

/* The file's whole text in buf (NUL-terminated); 0 when it cannot be read
 * or is larger than any file of ours. */
static int slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  const size_t n = fread(buf, 1, cap - 1, f);
  const int whole_file = !ferror(f) && feof(f);
  fclose(f);
  buf[n] = '\0';
  return whole_file && strlen(buf) == n; /* a NUL inside: not ours */
}

int mb__cpu_peak_cache_load(mb_cpu_state_t *st, const mb_cpu_peak_cache_t *c) {
  if (!c->path[0] || c->remeasure) return 0;
  char text[MAX_FILE];
  if (!slurp(c->path, text, sizeof text)) return 0;
  const size_t hl = sizeof header - 1, kl = strlen(c->key);
  if (strncmp(text, header, hl) != 0) {
    MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu: %s is not a peak cache: measuring",
               c->path);
    return 0;
  }
  if (strncmp(text + hl, c->key, kl) != 0) {
    MB_CPU_LOG(st, MB_LOG_DEBUG,
               "cpu: %s holds the peaks of another CPU, core set or build: "
               "measuring",
               c->path);
    return 0;
  }
  char *p = text + hl + kl;
  unsigned long long f32, bf16, i8, at;
  const int ok = whole(field(&p, "peak_f32"), &f32) &&
                 whole(field(&p, "peak_bf16"), &bf16) &&
                 whole(field(&p, "peak_i8"), &i8);
  const char *source = ok ? field(&p, "source") : NULL;
  const long long now = (long long)time(NULL);
  if (!source || !*source || !whole(field(&p, "measured_at"), &at) ||
      strcmp(p, "end\n") != 0 || f32 == 0 || (long long)at > now) {
    MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu: %s is damaged: measuring", c->path);
    return 0;
  }
  st->peak[MB_DTYPE_F32] = (double)f32;
  st->peak[MB_DTYPE_BF16] = (double)bf16;
  st->peak[MB_DTYPE_I8] = (double)i8;
  char age[32];
  format_age(now - (long long)at, age, sizeof age);
  snprintf(st->peak_source, sizeof st->peak_source,
           "%.200s (cached %s ago in %s)", source, age, c->path);
  return 1;
}

/* ---- writing ------------------------------------------------------------- */

static int write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The file written beside its final name and renamed over it: readers see
 * the old file or the new one, never a part. 0, or -1 with errno. */
static int save(const mb_cpu_peak_cache_t *c, const char *text) {
  char dir[sizeof c->path];
  snprintf(dir, sizeof dir, "%s", c->path);
  *strrchr(dir, '/') = '\0';
  if (make_dirs(dir) != 0) return -1;
  char tmp[sizeof c->path + 32];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", c->path, (long)getpid());
  const int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  int rc = write_all(fd, text, strlen(text));
  if (close(fd) != 0) rc = -1;
  if (rc == 0) rc = rename(tmp, c->path);
  if (rc != 0) {
    const int e = errno;
    unlink(tmp);
    errno = e;
  }
  return rc;
}

void mb__cpu_peak_cache_store(mb_cpu_state_t *st,
                              const mb_cpu_peak_cache_t *c) {
  char source[sizeof st->peak_source];
  snprintf(source, sizeof source, "%s", st->peak_source);
  one_line(source);
  const char *why =
      c->remeasure ? "measured again for MB_REMEASURE_PEAK" : "measured now";
  if (!c->path[0]) {
    snprintf(st->peak_source, sizeof st->peak_source,
             "%.200s (%s; not cached: no cache directory, set MB_CACHE_DIR)",
             source, why);
    return;
  }
  char text[MAX_FILE];
  const int n =
      snprintf(text, sizeof text,
               "%s%speak_f32=%.0f\npeak_bf16=%.0f\npeak_i8=%.0f\nsource=%s\n"
               "measured_at=%lld\nend\n",
               header, c->key, st->peak[MB_DTYPE_F32], st->peak[MB_DTYPE_BF16],
               st->peak[MB_DTYPE_I8], source, (long long)time(NULL));
  if (n > 0 && (size_t)n < sizeof text && save(c, text) == 0) {
    snprintf(st->peak_source, sizeof st->peak_source,
             "%.200s (%s, cached in %s)", source, why, c->path);
    return;
  }
  const char *err =
      n > 0 && (size_t)n < sizeof text ? strerror(errno) : "too long";
  MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu: cannot save the peaks in %s: %s", c->path,
             err);
  snprintf(st->peak_source, sizeof st->peak_source,
           "%.200s (%s; not cached: %s: %s)", source, why, c->path, err);
}
