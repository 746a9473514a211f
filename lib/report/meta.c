/* The environment recorded with every run: library version and commit,
 * argv, host, time, backends (with their library versions) and devices. */
#include <stdio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "report/report.h"

static void add_host(cJSON *meta) {
  cJSON *host = cJSON_AddObjectToObject(meta, "host");
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  cJSON_AddStringToObject(host, "hostname", name);
  struct utsname u;
  if (uname(&u) == 0) {
    cJSON_AddStringToObject(host, "os", u.sysname);
    cJSON_AddStringToObject(host, "kernel", u.release);
    cJSON_AddStringToObject(host, "machine", u.machine);
  }
  cJSON_AddNumberToObject(host, "online_cpus",
                          (double)sysconf(_SC_NPROCESSORS_ONLN));
}

static void add_backends(cJSON *meta, mb_context_t *ctx) {
  cJSON *arr = cJSON_AddArrayToObject(meta, "backends");
  for (size_t i = 0; i < mb_backend_count(ctx); i++) {
    mb_backend_info_t bi = MB_BACKEND_INFO_INIT;
    if (mb_backend_info(ctx, i, &bi) != MB_OK) continue;
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "name", bi.name);
    cJSON_AddStringToObject(b, "path", bi.path);
    cJSON_AddStringToObject(b, "version", bi.version);
    cJSON_AddBoolToObject(b, "loaded", bi.loaded);
    cJSON_AddStringToObject(b, "reason", bi.reason);
    cJSON_AddNumberToObject(b, "devices", bi.device_count);
    cJSON_AddItemToArray(arr, b);
  }
}

cJSON *mb__meta_cjson(mb_context_t *ctx, int argc, const char *const *argv) {
  cJSON *meta = cJSON_CreateObject();
  if (!meta) return NULL;
  cJSON_AddStringToObject(meta, "library", "libmicrobench");
  cJSON_AddStringToObject(meta, "version", mb_version());
  cJSON_AddStringToObject(meta, "git_commit", mb_git_commit());
  cJSON *args = cJSON_AddArrayToObject(meta, "argv");
  for (int i = 0; argv && i < argc; i++)
    cJSON_AddItemToArray(args, cJSON_CreateString(argv[i] ? argv[i] : ""));
  char stamp[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(meta, "timestamp", stamp);
  add_host(meta);
  add_backends(meta, ctx);
  return meta;
}

static const mb_dtype_t k_peak_dtypes[] = {
    MB_DTYPE_F32,    MB_DTYPE_F16, MB_DTYPE_BF16, MB_DTYPE_F8E4M3,
    MB_DTYPE_F8E5M2, MB_DTYPE_I8,  MB_DTYPE_I4};

/* How far the device's timer and cache flush can be trusted, and the copy
 * bandwidth every %roof uses (measured once per device and context; the
 * flush check and the bandwidth run copy benchmarks). */
static void add_calibration(cJSON *d, mb_device_t *dev) {
  mb_calibration_t c = MB_CALIBRATION_INIT;
  if (mb_device_calibration(dev, &c) != MB_OK) return;
  cJSON *t = cJSON_AddObjectToObject(d, "timer");
  cJSON_AddNumberToObject(t, "resolution_ns", c.timer_resolution_ns);
  cJSON_AddNumberToObject(t, "overhead_ns", c.timer_overhead_ns);
  cJSON_AddNumberToObject(t, "readings", c.timer_readings);
  cJSON *f = cJSON_AddObjectToObject(d, "flush_check");
  cJSON_AddBoolToObject(f, "checked", c.flush_checked);
  if (c.flush_checked) {
    cJSON_AddBoolToObject(f, "pass", c.flush_pass);
    cJSON_AddNumberToObject(f, "hot_ns", c.flush_hot_ns);
    cJSON_AddNumberToObject(f, "flushed_ns", c.flush_cold_ns);
    cJSON_AddNumberToObject(f, "ratio", c.flush_ratio);
    cJSON_AddNumberToObject(f, "bytes", c.flush_bytes);
  }
  cJSON_AddStringToObject(f, "how", c.flush_note);
  cJSON *b = cJSON_AddObjectToObject(d, "copy_bandwidth");
  cJSON_AddBoolToObject(b, "measured", c.copy_gbps > 0);
  if (c.copy_gbps > 0) {
    cJSON_AddNumberToObject(b, "gbps", c.copy_gbps);
    cJSON_AddNumberToObject(b, "bytes", c.copy_bytes);
  }
  cJSON_AddStringToObject(b, "how", c.copy_note);
}

/* The backend's facts: topology, binding, clock source, driver. */
static void add_facts(cJSON *d, mb_device_t *dev) {
  size_t n = mb_device_fact_count(dev);
  if (!n) return;
  cJSON *env = cJSON_AddObjectToObject(d, "environment");
  for (size_t i = 0; i < n; i++) {
    const char *key, *text;
    double value;
    if (mb_device_fact(dev, i, &key, &text, &value) != MB_OK) continue;
    if (text)
      cJSON_AddStringToObject(env, key, text);
    else
      cJSON_AddNumberToObject(env, key, value);
  }
}

cJSON *mb__devices_cjson(mb_context_t *ctx) {
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return NULL;
  for (size_t i = 0; i < mb_device_count(ctx); i++) {
    mb_device_t *dev = mb_device_at(ctx, i);
    mb_device_info_t di = MB_DEVICE_INFO_INIT;
    mb_device_info(dev, &di);
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "backend", di.backend);
    cJSON_AddNumberToObject(d, "index", di.index);
    cJSON_AddStringToObject(d, "name", di.name);
    cJSON_AddStringToObject(d, "kind",
                            di.kind == MB_DEVICE_GPU ? "gpu" : "cpu");
    cJSON_AddNumberToObject(d, "memory_bytes", (double)di.memory_bytes);
    cJSON_AddNumberToObject(d, "mem_bw_bytes_per_s", di.mem_bw_bytes_per_s);
    cJSON_AddNumberToObject(d, "compute_units", di.compute_units);
    cJSON_AddNumberToObject(d, "clock_hz", di.clock_hz);
    cJSON *c = cJSON_AddObjectToObject(d, "cache_bytes");
    cJSON_AddNumberToObject(c, "l1d", (double)di.cache_bytes[0]);
    cJSON_AddNumberToObject(c, "l2", (double)di.cache_bytes[1]);
    cJSON_AddNumberToObject(c, "llc", (double)di.cache_bytes[2]);
    cJSON *peaks = cJSON_AddObjectToObject(d, "peak_flops");
    for (size_t k = 0; k < sizeof k_peak_dtypes / sizeof k_peak_dtypes[0];
         k++) {
      double pf = mb_device_peak_flops(dev, k_peak_dtypes[k]);
      if (pf > 0)
        cJSON_AddNumberToObject(peaks, mb_dtype_name(k_peak_dtypes[k]), pf);
    }
    cJSON_AddStringToObject(d, "peak_source", di.peak_source);
    add_calibration(d, dev);
    add_facts(d, dev);
    cJSON_AddItemToArray(arr, d);
  }
  return arr;
}
