/* CPU backend — the measured peaks, saved once per machine.
 *
 * Measuring the peaks (cpu_peak.c) takes 0.1-0.5 s, longer than everything
 * else a process does before its first benchmark, and the answer is a
 * property of the machine: so the first process saves it in a small cache
 * file (mb_cache_file.h: where it lives, how it is read and written) and
 * later ones read it back. The file is keyed by what the peak depends on:
 * the CPU model and microcode (a microcode update can turn features off or
 * slow them), the cores and threads we run on (taskset, cgroups), the loops
 * chosen (ISA) and the library version (the loops may change with it). A
 * cache that cannot be read or written is not an error: the peaks are
 * measured as before and peak_source says so. MB_REMEASURE_PEAK=1
 * measures whatever the file holds (and saves the new figures). */
#include "cpu_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v2: the bf16 and int8 peaks include the AMX tile loops; a v1 file holds
 * the vector loops' figures alone, below what an AMX GEMM reaches. */
#define CACHE_FILE "cpu-peak-v2"

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

void mb__cpu_peak_cache_init(mb_cpu_state_t *st, const char *loops,
                             mb_cpu_peak_cache_t *c) {
  memset(c, 0, sizeof *c);
  c->remeasure = mb__cache_file_remeasure();
  char model[sizeof st->name], microcode[64];
  snprintf(model, sizeof model, "%s", st->name);
  mb__cache_file_one_line(model);
  read_microcode(st, microcode, sizeof microcode);
  snprintf(c->key, sizeof c->key,
           "model=%s\nmicrocode=%s\ncores=%u\nthreads=%u\nloops=%s\n"
           "library=%d.%d.%d\n",
           model, microcode, st->cores, st->threads, loops, MB_VERSION_MAJOR,
           MB_VERSION_MINOR, MB_VERSION_PATCH);
  mb__cache_file_keyed_path(CACHE_FILE, c->key, c->path, sizeof c->path);
}

/* ---- reading ------------------------------------------------------------- */

static const char header[] =
    "# microbench: this machine's CPU peaks, measured once and reused (delete "
    "the file or set MB_REMEASURE_PEAK=1 to measure again)\n";

int mb__cpu_peak_cache_load(mb_cpu_state_t *st, const mb_cpu_peak_cache_t *c) {
  if (!c->path[0] || c->remeasure) return 0;
  char text[MB_CACHE_FILE_MAX];
  const char *why = NULL;
  char *p =
      mb__cache_file_read(c->path, header, c->key, text, sizeof text, &why);
  if (!p) {
    MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu: peak cache %s: %s: measuring", c->path,
               why);
    return 0;
  }
  unsigned long long f32 = 0, bf16 = 0, i8 = 0, bf16_vec = 0, i8_vec = 0;
  const int ok =
      mb__cache_file_whole(mb__cache_file_field(&p, "peak_f32"), &f32) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "peak_bf16"), &bf16) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "peak_i8"), &i8) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "peak_bf16_vector"),
                           &bf16_vec) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "peak_i8_vector"), &i8_vec);
  const char *source = ok ? mb__cache_file_field(&p, "source") : NULL;
  const long long age = source && *source ? mb__cache_file_age(p) : -1;
  if (age < 0 || f32 == 0) {
    MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu: %s is damaged: measuring", c->path);
    return 0;
  }
  st->peak[MB_DTYPE_F32] = (double)f32;
  st->peak[MB_DTYPE_BF16] = (double)bf16;
  st->peak[MB_DTYPE_I8] = (double)i8;
  st->peak_vector[MB_DTYPE_F32] = (double)f32;
  st->peak_vector[MB_DTYPE_BF16] = (double)bf16_vec;
  st->peak_vector[MB_DTYPE_I8] = (double)i8_vec;
  char ago[32];
  mb__cache_file_format_age(age, ago, sizeof ago);
  snprintf(st->peak_source, sizeof st->peak_source,
           "%.300s (cached %s ago in %s)", source, ago, c->path);
  return 1;
}

/* ---- writing ------------------------------------------------------------- */

void mb__cpu_peak_cache_store(mb_cpu_state_t *st,
                              const mb_cpu_peak_cache_t *c) {
  char source[sizeof st->peak_source];
  snprintf(source, sizeof source, "%s", st->peak_source);
  mb__cache_file_one_line(source);
  const char *why =
      c->remeasure ? "measured again for MB_REMEASURE_PEAK" : "measured now";
  if (!c->path[0]) {
    snprintf(st->peak_source, sizeof st->peak_source,
             "%.300s (%s; not cached: no cache directory, set MB_CACHE_DIR)",
             source, why);
    return;
  }
  char body[MB_CACHE_FILE_MAX];
  snprintf(body, sizeof body,
           "peak_f32=%.0f\npeak_bf16=%.0f\npeak_i8=%.0f\n"
           "peak_bf16_vector=%.0f\npeak_i8_vector=%.0f\nsource=%s\n",
           st->peak[MB_DTYPE_F32], st->peak[MB_DTYPE_BF16],
           st->peak[MB_DTYPE_I8], st->peak_vector[MB_DTYPE_BF16],
           st->peak_vector[MB_DTYPE_I8], source);
  if (mb__cache_file_write(c->path, header, c->key, body) == 0) {
    snprintf(st->peak_source, sizeof st->peak_source,
             "%.300s (%s, cached in %s)", source, why, c->path);
    return;
  }
  const char *err = errno == E2BIG ? "too long" : strerror(errno);
  MB_CPU_LOG(st, MB_LOG_DEBUG, "cpu: cannot save the peaks in %s: %s", c->path,
             err);
  snprintf(st->peak_source, sizeof st->peak_source,
           "%.300s (%s; not cached: %s: %s)", source, why, c->path, err);
}
