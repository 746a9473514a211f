#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

char *mb__strdup(const char *s) {
  if (!s) s = "";
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

double mb__now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Config files and result files are read whole: both parsers want one
 * string, and neither is large. */
mb_status_t mb__read_file(const char *path, char **out, size_t *len) {
  /* A FIFO blocked the open, /dev/zero read until memory ran out: only a
   * regular file is read, and only up to MB__MAX_READ_BYTES. */
  struct stat sb;
  if (stat(path, &sb) != 0)
    return mb__fail(MB_ERR_IO, "%s: cannot open: %m", path);
  if (!S_ISREG(sb.st_mode))
    return mb__fail(MB_ERR_IO,
                    "%s is not a regular file (a device, FIFO, socket or "
                    "directory): give a file",
                    path);
  FILE *f = fopen(path, "rb");
  if (!f) return mb__fail(MB_ERR_IO, "%s: cannot open: %m", path);
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n > MB__MAX_READ_BYTES) {
      free(buf);
      fclose(f);
      return mb__fail(MB_ERR_IO, "%s is larger than %d MiB: not read", path,
                      MB__MAX_READ_BYTES >> 20);
    }
    if (cap - n < 65536) {
      char *grown = realloc(buf, cap = cap ? 2 * cap : 65536 + 1);
      if (!grown) {
        free(buf);
        fclose(f);
        return mb__fail(MB_ERR_NO_MEMORY, "%s: out of memory reading it", path);
      }
      buf = grown;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return mb__fail(MB_ERR_IO, "%s: read error", path);
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return MB_OK;
}

mb_status_t mb_report_check_path(const char *path) {
  return mb_report_check_output(path, NULL, 0);
}

mb_status_t mb_report_check_output(const char *path, const char *const *inputs,
                                   size_t count) {
  if (!path || (count && !inputs))
    return mb__fail(MB_ERR_INVALID_ARG, "mb_report_check_output: NULL path");
  mb_status_t st = mb__output_path_ok(path, NULL);
  return st == MB_OK ? mb__output_not_input(path, inputs, count) : st;
}

mb_status_t mb__output_path_ok(const char *path, mode_t *mode) {
  struct stat st;
  if (mode) *mode = 0;
  if (stat(path, &st) != 0) return MB_OK; /* a new file */
  if (!S_ISREG(st.st_mode))
    return mb__fail(MB_ERR_INVALID_ARG,
                    "%s is not a regular file (a device, FIFO, socket or "
                    "directory): results are written to files; give a file "
                    "path",
                    path);
  /* The owner's write bit, not access() alone: root may write anything,
   * but a file marked read-only was marked so to be kept. */
  if (!(st.st_mode & S_IWUSR) || access(path, W_OK) != 0)
    return mb__fail(MB_ERR_IO,
                    "%s is read-only (mode %04o); results are not written "
                    "over it",
                    path, (unsigned)(st.st_mode & 07777));
  if (mode) *mode = st.st_mode & 07777;
  return MB_OK;
}

/* path with its directory resolved (links, "..", "."), for a file that
 * may not exist yet; the path itself when its directory cannot be. */
static void canonical(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  char dir[PATH_MAX], real[PATH_MAX];
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path + 1), path);
  if (strlen(path) >= sizeof dir || !realpath(dir, real)) {
    snprintf(out, cap, "%s", path);
    return;
  }
  snprintf(out, cap, "%s/%s", real, slash ? slash + 1 : path);
}

int mb__same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b) return 0;
  const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return 0;
  /* Neither exists yet (two outputs): the same path once resolved. */
  char ca[2 * PATH_MAX], cb[2 * PATH_MAX];
  canonical(a, ca, sizeof ca);
  canonical(b, cb, sizeof cb);
  return strcmp(ca, cb) == 0;
}

mb_status_t mb__output_not_input(const char *path, const char *const *inputs,
                                 size_t count) {
  for (size_t i = 0; path && i < count; i++)
    if (mb__same_file(path, inputs[i]))
      return mb__fail(MB_ERR_INVALID_ARG,
                      "%s is also an input (%s): writing results there would "
                      "destroy what is being read; give another output path",
                      path, inputs[i]);
  return MB_OK;
}

mb_status_t mb__write_file_atomic(const char *path, const char *text) {
  mode_t mode;
  mb_status_t st = mb__output_path_ok(path, &mode);
  if (st != MB_OK) return st;
  size_t n = strlen(path) + 5;
  char *tmp = malloc(n);
  if (!tmp) return mb__fail(MB_ERR_NO_MEMORY, "%s: out of memory", path);
  snprintf(tmp, n, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  ok = f && fclose(f) == 0 && ok;
  /* The replaced file's permissions carry over to its replacement. */
  ok = ok && (!mode || chmod(tmp, mode) == 0);
  ok = ok && rename(tmp, path) == 0;
  int err = errno;
  if (!ok) remove(tmp);
  free(tmp);
  return ok ? MB_OK
            : mb__fail(MB_ERR_IO, "cannot write %s: %s", path, strerror(err));
}
