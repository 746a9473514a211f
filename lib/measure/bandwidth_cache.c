/* Each device's copy bandwidth, measured once per machine and saved.
 *
 * The bandwidth roof behind every result's %roof is a timed copy of
 * operands twice the last-level cache (calibrate.c): about 0.2 s and
 * 200 MB in every process that runs a benchmark, longer than a small
 * benchmark itself. Like the CPU peak, it is a property of the machine, so
 * the first process saves it in a small cache file (mb_cache_file.h) and
 * later ones read it back, with its age in the calibration note.
 *
 * One file per backend and device index, keyed by what the figure depends
 * on: the device's name, compute units, caches and memory, the backend's
 * version string (its runtime and libraries, whose memcpy may be the roof;
 * the CPU module's names the threads it runs on) and the library version
 * (the copy kernels may change with it). Only a measured
 * figure is saved; a failed measurement is tried again by the next
 * process. MB_REMEASURE_PEAK=1 measures again, as for the peaks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "mb_cache_file.h"

static const char header[] =
    "# microbench: a device's copy bandwidth, measured once and reused "
    "(delete the file or set MB_REMEASURE_PEAK=1 to measure again)\n";

/* The file of this device: "copy-bandwidth-v1-<backend>-<index>", the
 * backend's name reduced to characters safe in a file name. */
static int cache_path(const mb_device_t *dev, char *path, size_t cap) {
  char name[96];
  int n = snprintf(name, sizeof name, "copy-bandwidth-v1-%s-%u",
                   dev->backend->name, dev->index);
  if (n <= 0 || (size_t)n >= sizeof name) return 0;
  for (char *c = name; *c; ++c)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                "0123456789-_.",
                *c))
      *c = '_';
  return mb__cache_file_path(name, path, cap);
}

static void make_key(const mb_device_t *dev, char *key, size_t cap) {
  const mb_device_info_t *i = &dev->info;
  const mb__backend_t *b = dev->backend;
  char name[128], version[256];
  snprintf(name, sizeof name, "%s", i->name ? i->name : "");
  mb__cache_file_one_line(name);
  snprintf(version, sizeof version, "%s",
           b->vt->version ? b->vt->version(b->state) : "");
  mb__cache_file_one_line(version);
  snprintf(key, cap,
           "backend=%s\nindex=%u\nname=%s\ncompute_units=%u\nmemory=%llu\n"
           "caches=%llu %llu %llu\nbackend_version=%s\nlibrary=%d.%d.%d\n",
           dev->backend->name, dev->index, name, i->compute_units,
           (unsigned long long)i->memory_bytes,
           (unsigned long long)i->cache_bytes[0],
           (unsigned long long)i->cache_bytes[1],
           (unsigned long long)i->cache_bytes[2], version, MB_VERSION_MAJOR,
           MB_VERSION_MINOR, MB_VERSION_PATCH);
}

int mb__bandwidth_cache_load(mb_device_t *dev, char *note, size_t cap) {
  char path[MB_CACHE_FILE_PATH], key[1024], text[MB_CACHE_FILE_MAX];
  if (mb__cache_file_remeasure() || !cache_path(dev, path, sizeof path))
    return 0;
  make_key(dev, key, sizeof key);
  const char *why = NULL;
  char *p = mb__cache_file_read(path, header, key, text, sizeof text, &why);
  unsigned long long bps = 0, bytes = 0;
  const char *how = NULL;
  if (p &&
      mb__cache_file_whole(mb__cache_file_field(&p, "bytes_per_s"), &bps) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "bytes"), &bytes))
    how = mb__cache_file_field(&p, "how");
  const long long age = how && *how && bps > 0 ? mb__cache_file_age(p) : -1;
  if (age < 0) {
    mb__log(dev->ctx, MB_LOG_DEBUG, "%s:%u: bandwidth cache %s: %s: measuring",
            dev->backend->name, dev->index, path, p ? "damaged" : why);
    return 0;
  }
  char ago[32];
  mb__cache_file_format_age(age, ago, sizeof ago);
  dev->cal.copy_gbps = (double)bps / 1e9;
  dev->cal.copy_bytes = (double)bytes;
  snprintf(note, cap, "%s (cached %s ago in %s)", how, ago, path);
  return 1;
}

void mb__bandwidth_cache_store(mb_device_t *dev, char *note, size_t cap) {
  char path[MB_CACHE_FILE_PATH], key[1024], body[1024];
  const char *again = mb__cache_file_remeasure()
                          ? "measured again for MB_REMEASURE_PEAK"
                          : "measured now";
  const size_t len = strlen(note);
  if (!cache_path(dev, path, sizeof path)) {
    snprintf(note + len, cap - len,
             " (%s; not cached: no cache directory, set MB_CACHE_DIR)", again);
    return;
  }
  make_key(dev, key, sizeof key);
  char how[512];
  snprintf(how, sizeof how, "%s", note);
  mb__cache_file_one_line(how);
  snprintf(body, sizeof body, "bytes_per_s=%.0f\nbytes=%.0f\nhow=%s\n",
           dev->cal.copy_gbps * 1e9, dev->cal.copy_bytes, how);
  if (mb__cache_file_write(path, header, key, body) == 0) {
    snprintf(note + len, cap - len, " (%s, cached in %s)", again, path);
    return;
  }
  const char *err = errno == E2BIG ? "too long" : strerror(errno);
  mb__log(dev->ctx, MB_LOG_DEBUG, "cannot save the copy bandwidth in %s: %s",
          path, err);
  snprintf(note + len, cap - len, " (%s; not cached: %s: %s)", again, path,
           err);
}
