/* Each device's calibration figures, measured once per machine and saved:
 * the copy bandwidth and the flush check (calibrate.c).
 *
 * The bandwidth roof behind every result's %roof is a timed copy of
 * operands twice the last-level cache: about 0.2 s and 200 MB in every
 * process that runs a benchmark, longer than a small benchmark itself. The
 * flush check times 31 hot and 31 flushed copies of LLC/4, each flushed one
 * after writing twice the LLC: on a VM that reports its host's 315 MB L3,
 * 0.5-1 s of every process that writes a JSON report of a cold result.
 * Like the CPU peak, both are properties of the machine, so the first
 * process saves them in small cache files (mb_cache_file.h) and later ones
 * read them back, with their age in the calibration notes.
 *
 * One file per figure, backend, device index and key (its hash in the
 * name, so a one-thread rank's figures and the whole machine's coexist),
 * the key what the figures depend on: the device's name, compute units, caches
 * and memory, the backend's version string (its runtime and libraries, whose
 * memcpy may be the roof; the CPU module's names the threads it runs on) and
 * the library version (the copy kernels and the flush may change with it). Only
 * a measured bandwidth is saved, and only a flush check that passed: a failed
 * one (a flush that does not evict, or a fluke of a loaded machine) is checked
 * again by the next process, so a cold result's warning is never an old
 * verdict. A failed measurement is tried again too. MB_REMEASURE_PEAK=1
 * measures again, as for the peaks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "mb_cache_file.h"

/* What each file holds, its header and its name's stem. */
typedef struct figure {
  const char *stem;
  const char *header;
} figure_t;

static const figure_t k_copy = {
    "copy-bandwidth-v1",
    "# microbench: a device's copy bandwidth, measured once and reused "
    "(delete the file or set MB_REMEASURE_PEAK=1 to measure again)\n"};
static const figure_t k_flush = {
    "flush-check-v1",
    "# microbench: a device's passed cache-flush check, run once and reused "
    "(delete the file or set MB_REMEASURE_PEAK=1 to check again)\n"};

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

/* This device's key (KEY_CAP) and file, "<stem>-<backend>-<index>-<key
 * hash>" (mb__cache_file_keyed_path), the backend's name reduced to
 * characters safe in a file name. */
enum { KEY_CAP = 1024 };
static int cache_path(const figure_t *f, const mb_device_t *dev, char *key,
                      char *path, size_t cap) {
  char name[128];
  make_key(dev, key, KEY_CAP);
  int n = snprintf(name, sizeof name, "%s-%s-%u", f->stem, dev->backend->name,
                   dev->index);
  if (n <= 0 || (size_t)n >= sizeof name) return 0;
  for (char *c = name; *c; ++c)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                "0123456789-_.",
                *c))
      *c = '_';
  return mb__cache_file_keyed_path(name, key, path, cap);
}

/* The saved fields of figure f for dev, read into text (NULL: measure,
 * the reason logged); path is the file's. */
static char *load(const figure_t *f, const mb_device_t *dev, char *path,
                  char *text) {
  char key[KEY_CAP];
  if (mb__cache_file_remeasure() ||
      !cache_path(f, dev, key, path, MB_CACHE_FILE_PATH))
    return NULL;
  const char *why = NULL;
  char *p =
      mb__cache_file_read(path, f->header, key, text, MB_CACHE_FILE_MAX, &why);
  if (!p)
    mb__log(dev->ctx, MB_LOG_DEBUG, "%s:%u: %s cache %s: %s: measuring",
            dev->backend->name, dev->index, f->stem, path, why);
  return p;
}

/* The file was read (p, NULL on a miss) and its fields were valid (ok, p
 * then at the closing lines): note is "how (cached AGE ago in PATH)"; 0
 * when anything is missing or damaged (logged). */
static int loaded(const figure_t *f, const mb_device_t *dev, const char *path,
                  char *p, int ok, const char *how, char *note, size_t cap) {
  if (!p) return 0;
  const long long age = ok && how && *how ? mb__cache_file_age(p) : -1;
  if (age < 0) {
    mb__log(dev->ctx, MB_LOG_DEBUG, "%s:%u: %s cache %s: damaged: measuring",
            dev->backend->name, dev->index, f->stem, path);
    return 0;
  }
  char ago[32];
  mb__cache_file_format_age(age, ago, sizeof ago);
  snprintf(note, cap, "%s (cached %s ago in %s)", how, ago, path);
  return 1;
}

/* Saves body (the figure's "name=value" lines; "how=" is added from note)
 * and appends to note where it went or why not (never fails). */
static void store(const figure_t *f, const mb_device_t *dev, const char *body,
                  char *note, size_t cap) {
  char path[MB_CACHE_FILE_PATH], key[KEY_CAP], whole[1024], how[512];
  const char *again = mb__cache_file_remeasure()
                          ? "measured again for MB_REMEASURE_PEAK"
                          : "measured now";
  const size_t len = strlen(note);
  if (!cache_path(f, dev, key, path, sizeof path)) {
    snprintf(note + len, cap - len,
             " (%s; not cached: no cache directory, set MB_CACHE_DIR)", again);
    return;
  }
  snprintf(how, sizeof how, "%s", note);
  mb__cache_file_one_line(how);
  snprintf(whole, sizeof whole, "%show=%s\n", body, how);
  if (mb__cache_file_write(path, f->header, key, whole) == 0) {
    snprintf(note + len, cap - len, " (%s, cached in %s)", again, path);
    return;
  }
  const char *err = errno == E2BIG ? "too long" : strerror(errno);
  mb__log(dev->ctx, MB_LOG_DEBUG, "cannot save the %s in %s: %s", f->stem, path,
          err);
  snprintf(note + len, cap - len, " (%s; not cached: %s: %s)", again, path,
           err);
}

/* ---- the copy bandwidth -------------------------------------------------- */

int mb__bandwidth_cache_load(mb_device_t *dev, char *note, size_t cap) {
  char path[MB_CACHE_FILE_PATH], text[MB_CACHE_FILE_MAX];
  char *p = load(&k_copy, dev, path, text);
  unsigned long long bps = 0, bytes = 0;
  const char *how = NULL;
  if (p &&
      mb__cache_file_whole(mb__cache_file_field(&p, "bytes_per_s"), &bps) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "bytes"), &bytes))
    how = mb__cache_file_field(&p, "how");
  if (!loaded(&k_copy, dev, path, p, bps > 0, how, note, cap)) return 0;
  dev->cal.copy_gbps = (double)bps / 1e9;
  dev->cal.copy_bytes = (double)bytes;
  return 1;
}

void mb__bandwidth_cache_store(mb_device_t *dev, char *note, size_t cap) {
  char body[256];
  snprintf(body, sizeof body, "bytes_per_s=%.0f\nbytes=%.0f\n",
           dev->cal.copy_gbps * 1e9, dev->cal.copy_bytes);
  store(&k_copy, dev, body, note, cap);
}

/* ---- the flush check ----------------------------------------------------- */

/* The medians are saved in whole picoseconds (a median of whole-ns samples
 * may end in .5). */
int mb__flush_cache_load(mb_device_t *dev, char *note, size_t cap) {
  char path[MB_CACHE_FILE_PATH], text[MB_CACHE_FILE_MAX];
  char *p = load(&k_flush, dev, path, text);
  unsigned long long pass = 0, hot = 0, cold = 0, bytes = 0;
  const char *how = NULL;
  if (p && mb__cache_file_whole(mb__cache_file_field(&p, "pass"), &pass) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "hot_ps"), &hot) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "flushed_ps"), &cold) &&
      mb__cache_file_whole(mb__cache_file_field(&p, "bytes"), &bytes))
    how = mb__cache_file_field(&p, "how");
  if (!loaded(&k_flush, dev, path, p, pass == 1 && hot > 0 && cold > 0, how,
              note, cap))
    return 0;
  mb_calibration_t *c = &dev->cal;
  c->flush_checked = 1;
  c->flush_pass = 1;
  c->flush_hot_ns = (double)hot / 1e3;
  c->flush_cold_ns = (double)cold / 1e3;
  c->flush_ratio = c->flush_cold_ns / c->flush_hot_ns;
  c->flush_bytes = (double)bytes;
  return 1;
}

void mb__flush_cache_store(mb_device_t *dev, char *note, size_t cap) {
  const mb_calibration_t *c = &dev->cal;
  if (!c->flush_checked || !c->flush_pass) return;
  char body[256];
  snprintf(body, sizeof body,
           "pass=1\nhot_ps=%.0f\nflushed_ps=%.0f\nbytes=%.0f\n",
           round(c->flush_hot_ns * 1e3), round(c->flush_cold_ns * 1e3),
           c->flush_bytes);
  store(&k_flush, dev, body, note, cap);
}
