/* Small keyed text files of measured figures (mb_cache_file.h). */
#include "mb_cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int nonempty(const char *s) {
  return s && *s;
}

int mb__cache_file_path(const char *name, char *path, size_t cap) {
  const char *dir = getenv("MB_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n;
  if (nonempty(dir))
    n = snprintf(path, cap, "%s/%s", dir, name);
  else if (nonempty(xdg) && xdg[0] == '/') /* relative: invalid per XDG */
    n = snprintf(path, cap, "%s/microbench/%s", xdg, name);
  else if (nonempty(home))
    n = snprintf(path, cap, "%s/.cache/microbench/%s", home, name);
  else
    n = -1;
  const int ok = n > 0 && (size_t)n < cap;
  if (!ok && cap) path[0] = '\0';
  return ok;
}

int mb__cache_file_keyed_path(const char *stem, const char *key, char *path,
                              size_t cap) {
  unsigned long h = 2166136261ul; /* FNV-1a, 32 bits */
  for (const unsigned char *c = (const unsigned char *)key; *c; ++c)
    h = ((h ^ *c) * 16777619ul) & 0xFFFFFFFFul;
  char name[160];
  const int n = snprintf(name, sizeof name, "%s-%08lx", stem, h);
  if (n <= 0 || (size_t)n >= sizeof name) {
    if (cap) path[0] = '\0';
    return 0;
  }
  return mb__cache_file_path(name, path, cap);
}

int mb__cache_file_remeasure(void) {
  const char *again = getenv("MB_REMEASURE_PEAK");
  return nonempty(again) && strcmp(again, "0") != 0;
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

char *mb__cache_file_read(const char *path, const char *header, const char *key,
                          char *buf, size_t cap, const char **why) {
  const size_t hl = strlen(header), kl = strlen(key);
  if (!slurp(path, buf, cap)) {
    *why = "no readable cache file";
    return NULL;
  }
  if (strncmp(buf, header, hl) != 0) {
    *why = "not a cache file of this kind";
    return NULL;
  }
  if (strncmp(buf + hl, key, kl) != 0) {
    *why = "it holds the figures of another device, core set or build";
    return NULL;
  }
  return buf + hl + kl;
}

char *mb__cache_file_field(char **p, const char *name) {
  const size_t n = strlen(name);
  if (strncmp(*p, name, n) != 0 || (*p)[n] != '=') return NULL;
  char *v = *p + n + 1, *end = strchr(v, '\n');
  if (!end) return NULL;
  *end = '\0';
  *p = end + 1;
  return v;
}

int mb__cache_file_whole(const char *s, unsigned long long *out) {
  if (!s || *s < '0' || *s > '9') return 0;
  char *end;
  errno = 0;
  *out = strtoull(s, &end, 10);
  return errno == 0 && *end == '\0';
}

long long mb__cache_file_age(char *p) {
  unsigned long long at;
  const long long now = (long long)time(NULL);
  if (!mb__cache_file_whole(mb__cache_file_field(&p, "measured_at"), &at) ||
      strcmp(p, "end\n") != 0 || (long long)at > now)
    return -1;
  return now - (long long)at;
}

void mb__cache_file_format_age(long long s, char *buf, size_t cap) {
  if (s < 60)
    snprintf(buf, cap, "%lld s", s);
  else if (s < 3600)
    snprintf(buf, cap, "%lld min", s / 60);
  else if (s < 48 * 3600)
    snprintf(buf, cap, "%lld h", s / 3600);
  else
    snprintf(buf, cap, "%lld days", s / 86400);
}

void mb__cache_file_one_line(char *s) {
  for (; *s; ++s)
    if (*s == '\n' || *s == '\r') *s = ' ';
}

/* mkdir -p: each missing component made in turn. */
static int make_dirs(const char *dir) {
  char path[MB_CACHE_FILE_PATH];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *s = path + 1;; ++s) {
    const char c = *s;
    if (c != '/' && c != '\0') continue;
    *s = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    *s = c;
    if (c == '\0') return 0;
  }
}

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

int mb__cache_file_write(const char *path, const char *header, const char *key,
                         const char *body) {
  char text[MB_CACHE_FILE_MAX];
  const int n = snprintf(text, sizeof text, "%s%s%smeasured_at=%lld\nend\n",
                         header, key, body, (long long)time(NULL));
  char dir[MB_CACHE_FILE_PATH], tmp[MB_CACHE_FILE_PATH + 32];
  if (n <= 0 || (size_t)n >= sizeof text ||
      snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir ||
      !strrchr(dir, '/')) {
    errno = E2BIG;
    return -1;
  }
  *strrchr(dir, '/') = '\0';
  if (dir[0] && make_dirs(dir) != 0) return -1;
  /* Beside its final name and renamed over it: readers see the old file or
   * the new one, never a part. */
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  const int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  int rc = write_all(fd, text, (size_t)n);
  if (close(fd) != 0) rc = -1;
  if (rc == 0) rc = rename(tmp, path);
  if (rc != 0) {
    const int e = errno;
    unlink(tmp);
    errno = e;
  }
  return rc;
}
