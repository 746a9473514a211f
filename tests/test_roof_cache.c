/* The roofs measured once per machine and cached, through the public API:
 * the CPU peaks (backends/cpu/cpu_peak_cache.c), each device's copy
 * bandwidth and its passed flush check (lib/measure/calibration_cache.c). Each
 * context is started with MB_CACHE_DIR naming a fresh directory of this test's,
 * so the user's cache is never read or written. A value planted in a file that
 * shows up as the device's figure proves the file is read; damaged files,
 * another key and MB_REMEASURE_PEAK must all measure again and rewrite it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

/* A value no measurement gives (FLOP/s): seen as the peak, it came from
 * the file. */
#define PLANTED 123456789ull

static char g_root[512]; /* mkdtemp'd; the cache directory lies below */
static char g_dir[600];  /* MB_CACHE_DIR: made by the module (mkdir -p) */
/* The files, "<stem>-<hash of the key>": found in g_dir (locate) once a
 * context has written them. */
static char g_file[900];    /* the peaks' */
static char g_bw_file[900]; /* cpu 0's copy bandwidth */
static char g_fl_file[900]; /* cpu 0's flush check */

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static int setup(void **state) {
  (void)state;
  snprintf(g_root, sizeof g_root, "%s/mb_peak_cache_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(g_root)) return -1;
  snprintf(g_dir, sizeof g_dir, "%s/not/yet", g_root);
  unsetenv("MB_REMEASURE_PEAK");
  return setenv("MB_CACHE_DIR", g_dir, 1);
}

static int teardown(void **state) {
  (void)state;
  unsetenv("MB_CACHE_DIR");
  return nftw(g_root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* How many files of g_dir are "<stem>-" and 8 hex digits; the last one's
 * path in dst (left as it was when there is none). */
static int locate(char *dst, size_t cap, const char *stem) {
  DIR *d = opendir(g_dir);
  if (!d) return 0;
  int found = 0;
  const size_t n = strlen(stem);
  for (struct dirent *e; (e = readdir(d));) {
    if (strncmp(e->d_name, stem, n) || e->d_name[n] != '-' ||
        strlen(e->d_name + n + 1) != 8 ||
        strspn(e->d_name + n + 1, "0123456789abcdef") != 8)
      continue;
    snprintf(dst, cap, "%s/%s", g_dir, e->d_name);
    found++;
  }
  closedir(d);
  return found;
}

/* test_keys_coexist: two configurations' files, found by name there. */
static int g_two_keys;

/* The three files of this machine's one configuration. */
static void locate_all(void) {
  if (g_two_keys) return;
  assert_true(locate(g_file, sizeof g_file, "cpu-peak-v2") <= 1);
  assert_true(locate(g_bw_file, sizeof g_bw_file, "copy-bandwidth-v1-cpu-0") <=
              1);
  assert_true(locate(g_fl_file, sizeof g_fl_file, "flush-check-v1-cpu-0") <= 1);
}

/* A context's cpu device: its peak_source (copied) and f32 peak. */
static double start(char *source, size_t cap) {
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "cpu", 0, &dev), MB_OK);
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  assert_int_equal(mb_device_info(dev, &info), MB_OK);
  snprintf(source, cap, "%s", info.peak_source);
  const double f32 = mb_device_peak_flops(dev, MB_DTYPE_F32);
  mb_context_destroy(ctx);
  locate_all();
  printf("  peak f32 %.4g: %s\n", f32, source);
  return f32;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("no cache file %s: %s", path, strerror(errno));
  static char text[8192];
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("cannot write %s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
}

/* Cache file `path` with the line starting `name=` replaced by `line`. */
static void replace_in(const char *path, const char *name, const char *line) {
  const char *text = read_file(path);
  char key[64], out[8192];
  snprintf(key, sizeof key, "\n%s=", name);
  const char *at = strstr(text, key);
  if (!at) fail_msg("no %s line in %s", name, path);
  const char *end = strchr(at + 1, '\n');
  assert_non_null(end);
  snprintf(out, sizeof out, "%.*s\n%s%s", (int)(at - text), text, line, end);
  write_file(path, out);
}

/* The peaks' file. */
static char *read_cache(void) {
  return read_file(g_file);
}
static void write_cache(const char *text) {
  write_file(g_file, text);
}
static void replace_line(const char *name, const char *line) {
  replace_in(g_file, name, line);
}

/* A cache of this machine, freshly written, with PLANTED as the f32 peak. */
static void plant(void) {
  char line[64], source[1024];
  start(source, sizeof source);
  snprintf(line, sizeof line, "peak_f32=%llu", PLANTED);
  replace_line("peak_f32", line);
}

static void assert_measured(const char *source) {
  assert_contains(source, "measured: FMA loop");
  assert_contains(source, "measured now, cached in ");
  assert_contains(source, g_file);
  assert_null(strstr(source, " ago in "));
}

static void test_first_writes_second_reads(void **state) {
  (void)state;
  char source[1024];
  const double measured = start(source, sizeof source);
  assert_true(measured > 0.0);
  assert_measured(source);
  const char *text = read_cache();
  assert_contains(text, "\nmicrocode=");
  assert_contains(text, "\ncores=");
  assert_contains(text, "\nloops=f32 ");
  assert_contains(text, "\nmeasured_at=");

  /* Read back as it was saved (whole FLOP/s), and said to be cached. */
  const double again = start(source, sizeof source);
  assert_true(again > 0.0 && fabs(again - measured) <= 1.0);
  assert_contains(source, "measured: FMA loop");
  assert_contains(source, " s ago in ");
  assert_contains(source, g_file);

  replace_line("peak_f32", "peak_f32=123456789");
  assert_true(start(source, sizeof source) == (double)PLANTED);
  assert_contains(source, "(cached ");
}

static void test_garbage_is_a_miss(void **state) {
  (void)state;
  const char *bad[] = {"garbage\n", "", "# microbench\n\n\n"};
  char source[1024];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    write_cache(bad[i]);
    assert_true(start(source, sizeof source) > 0.0);
    assert_measured(source);
    assert_contains(read_cache(), "\npeak_f32=");
  }
}

/* Every prefix of a valid file is a miss, not a half-read peak. */
static void test_truncated_is_a_miss(void **state) {
  (void)state;
  plant();
  char whole[8192], source[1024];
  snprintf(whole, sizeof whole, "%s", read_cache());
  const size_t cuts[] = {strlen(whole) / 2, strlen(whole) - 1,
                         (size_t)(strstr(whole, "\nsource=") - whole)};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    char part[8192];
    snprintf(part, sizeof part, "%.*s", (int)cuts[i], whole);
    write_cache(part);
    assert_true(start(source, sizeof source) != (double)PLANTED);
    assert_measured(source);
  }
}

static void test_other_key_is_a_miss(void **state) {
  (void)state;
  const char *keys[][2] = {{"model", "model=Another CPU"},
                           {"microcode", "microcode=0xdeadbeef"},
                           {"library", "library=0.0.1"}};
  char source[1024];
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
    plant();
    replace_line(keys[i][0], keys[i][1]);
    assert_true(start(source, sizeof source) != (double)PLANTED);
    assert_measured(source);
    /* Rewritten with this machine's key. */
    assert_null(strstr(read_cache(), keys[i][1]));
  }
}

static void test_remeasure(void **state) {
  (void)state;
  plant();
  char source[1024];
  assert_int_equal(setenv("MB_REMEASURE_PEAK", "1", 1), 0);
  const double f32 = start(source, sizeof source);
  unsetenv("MB_REMEASURE_PEAK");
  assert_true(f32 != (double)PLANTED);
  assert_contains(source, "measured again for MB_REMEASURE_PEAK, cached in");
  /* The new figure replaced the planted one. */
  assert_null(strstr(read_cache(), "peak_f32=123456789\n"));
  assert_true(fabs(start(source, sizeof source) - f32) <= 1.0); /* whole */
  assert_contains(source, " ago in ");
}

/* A cache that cannot be written costs the measurement, nothing more. */
static void test_unwritable_is_not_an_error(void **state) {
  (void)state;
  char source[1024];
  assert_int_equal(setenv("MB_CACHE_DIR", "/proc/mb-no-such-dir", 1), 0);
  const double f32 = start(source, sizeof source);
  assert_int_equal(setenv("MB_CACHE_DIR", g_dir, 1), 0);
  assert_true(f32 > 0.0);
  assert_contains(source, "measured now; not cached: /proc/mb-no-such-dir");
}

/* ---- the copy bandwidth -------------------------------------------------- */

/* A bandwidth no measurement gives (bytes/s): seen as the roof, it came
 * from the file. */
#define PLANTED_BPS 123456789000ull

/* Device `backend`:0's calibration in a fresh context from `dir`, its
 * notes copied to copy_note and flush_note (cap bytes each), which the
 * record then points at. */
static mb_calibration_t calibration_in(const char *dir, const char *backend,
                                       char *copy_note, char *flush_note,
                                       size_t cap) {
  mb_context_t *ctx = test_context(dir);
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, backend, 0, &dev), MB_OK);
  mb_calibration_t cal = MB_CALIBRATION_INIT;
  assert_int_equal(mb_device_calibration(dev, &cal), MB_OK);
  snprintf(copy_note, cap, "%s", cal.copy_note);
  snprintf(flush_note, cap, "%s", cal.flush_note);
  cal.copy_note = copy_note;
  cal.flush_note = flush_note;
  mb_context_destroy(ctx);
  locate_all();
  printf("  copy %.4g GB/s: %s\n  flush %s\n", cal.copy_gbps, copy_note,
         flush_note);
  return cal;
}

/* The same, for its copy GB/s and copy note. */
static double calibrate_in(const char *dir, const char *backend, char *note,
                           size_t cap) {
  char flush[2048];
  return calibration_in(dir, backend, note, flush,
                        cap < sizeof flush ? cap : sizeof flush)
      .copy_gbps;
}

static double calibrate(char *note, size_t cap) {
  return calibrate_in(test_env_dir("MB_TEST_MODULE_DIR"), "cpu", note, cap);
}

static void assert_bw_measured(const char *note) {
  assert_contains(note, "fastest of");
  assert_contains(note, "measured now, cached in ");
  assert_contains(note, g_bw_file);
  assert_null(strstr(note, " ago in "));
}

/* A cache of cpu 0's bandwidth, freshly written, with PLANTED_BPS. */
static void plant_bw(void) {
  char note[2048], line[64];
  calibrate(note, sizeof note);
  snprintf(line, sizeof line, "bytes_per_s=%llu", PLANTED_BPS);
  replace_in(g_bw_file, "bytes_per_s", line);
}

static void test_bw_first_writes_second_reads(void **state) {
  (void)state;
  char note[2048];
  const double measured = calibrate(note, sizeof note);
  assert_true(measured > 0.0);
  assert_bw_measured(note);
  const char *text = read_file(g_bw_file);
  assert_contains(text, "\nbackend=cpu\nindex=0\n");
  assert_contains(text, "\nbackend_version=");
  assert_contains(text, " thread"); /* the cpu module names its threads */
  assert_contains(text, "\nhow=copy f32 ");

  /* Read back as saved (whole bytes/s), the measurement's note kept. */
  const double again = calibrate(note, sizeof note);
  assert_true(fabs(again - measured) <= 1e-9);
  assert_contains(note, "fastest of");
  assert_contains(note, " s ago in ");
  assert_contains(note, g_bw_file);

  /* The planted figure is every result's bandwidth roof. */
  plant_bw();
  assert_true(calibrate(note, sizeof note) == PLANTED_BPS / 1e9);
  mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  const mb_op_params_t p = test_shape2(MB_DTYPE_NONE, 256, 256);
  mb_result_t *r = test_run_cpu(ctx, "add", &p, 3);
  mb_derived_t d = MB_DERIVED_INIT;
  assert_int_equal(mb_result_derived(r, &d), MB_OK);
  assert_true(d.bandwidth_gbps == PLANTED_BPS / 1e9);
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* Garbage, every truncation and another key all measure again and
 * rewrite the file. */
static void test_bw_misses(void **state) {
  (void)state;
  char note[2048], whole[8192];
  plant_bw();
  snprintf(whole, sizeof whole, "%s", read_file(g_bw_file));
  const char *keys[][2] = {{"name", "name=Another CPU"},
                           {"backend_version", "backend_version=other"},
                           {"library", "library=0.0.1"}};
  for (size_t i = 0; i < 6; ++i) {
    write_file(g_bw_file, whole);
    if (i < 3) {
      replace_in(g_bw_file, keys[i][0], keys[i][1]);
    } else {
      const size_t cut = i == 3   ? 0
                         : i == 4 ? strlen(whole) / 2
                                  : strlen(whole) - 1;
      char part[8192];
      snprintf(part, sizeof part, "%.*s", (int)cut, whole);
      write_file(g_bw_file, part);
    }
    assert_true(calibrate(note, sizeof note) != PLANTED_BPS / 1e9);
    assert_bw_measured(note);
    assert_null(strstr(read_file(g_bw_file), "bytes_per_s=123456789000\n"));
  }
}

static void test_bw_remeasure(void **state) {
  (void)state;
  char note[2048];
  plant_bw();
  assert_int_equal(setenv("MB_REMEASURE_PEAK", "1", 1), 0);
  const double gbps = calibrate(note, sizeof note);
  unsetenv("MB_REMEASURE_PEAK");
  assert_true(gbps != PLANTED_BPS / 1e9);
  assert_contains(note, "measured again for MB_REMEASURE_PEAK, cached in");
  assert_true(fabs(calibrate(note, sizeof note) - gbps) <= 1e-9);
}

/* A failed measurement (a copy kernel that skips the work) is not saved:
 * the next process tries again. A cache that cannot be written costs the
 * measurement, nothing more. */
static void test_bw_failure_and_unwritable(void **state) {
  (void)state;
  char note[2048], lazy[8192], file[900];
  snprintf(lazy, sizeof lazy, "%s/lazy", test_env_dir("MB_TEST_FIXTURE_DIR"));
  assert_true(calibrate_in(lazy, "lazy", note, sizeof note) == 0.0);
  assert_contains(note, "not measured");
  assert_int_equal(locate(file, sizeof file, "copy-bandwidth-v1-lazy-0"), 0);

  assert_int_equal(setenv("MB_CACHE_DIR", "/proc/mb-no-such-dir", 1), 0);
  const double gbps = calibrate(note, sizeof note);
  assert_int_equal(setenv("MB_CACHE_DIR", g_dir, 1), 0);
  assert_true(gbps > 0.0);
  assert_contains(note, "measured now; not cached: /proc/mb-no-such-dir");
}

/* ---- the flush check ----------------------------------------------------- */

/* A time no measurement gives (ps): seen as the hot median, it came from
 * the file. */
#define PLANTED_PS 123456789000ull

/* cpu 0's calibration in a fresh context; the flush note copied. */
static mb_calibration_t flush_calibrate(char *note, size_t cap) {
  char copy[2048];
  mb_calibration_t cal =
      calibration_in(test_env_dir("MB_TEST_MODULE_DIR"), "cpu", copy, note,
                     cap < sizeof copy ? cap : sizeof copy);
  cal.copy_note = NULL; /* this frame's, gone */
  return cal;
}

/* Checked now (passed: only a pass is saved), the file written. A check
 * this machine fails (a loaded VM's fluke) skips the test: nothing to read
 * back. */
static int flush_measured(const mb_calibration_t *c) {
  assert_true(c->flush_checked);
  assert_contains(c->flush_note, "31 samples each: flushed p25");
  assert_null(strstr(c->flush_note, " ago in "));
  if (!c->flush_pass) {
    assert_contains(c->flush_note, "p25 <= hot median");
    assert_null(strstr(c->flush_note, "cached in"));
    assert_int_equal(access(g_fl_file, F_OK), -1); /* a failure: not saved */
    return 0;
  }
  assert_contains(c->flush_note, "measured now, cached in ");
  assert_contains(c->flush_note, g_fl_file);
  return 1;
}

/* The first context checks and saves, the next reads: a planted hot
 * median shows up as the device's. Garbage, a cut file, another key and a
 * saved failure are misses, checked again; MB_REMEASURE_PEAK checks again. */
static void test_flush_cached(void **state) {
  (void)state;
  char note[2048], line[64], whole[8192];
  locate_all();
  remove(g_fl_file); /* the earlier tests' calibrations wrote it */
  mb_calibration_t c = flush_calibrate(note, sizeof note);
  if (!flush_measured(&c)) skip();
  const char *text = read_file(g_fl_file);
  assert_contains(text, "\nbackend=cpu\nindex=0\n");
  assert_contains(text, "\npass=1\nhot_ps=");
  assert_contains(text, "\nhow=copy f32 ");

  mb_calibration_t again = flush_calibrate(note, sizeof note);
  assert_true(again.flush_checked && again.flush_pass);
  assert_true(fabs(again.flush_hot_ns - c.flush_hot_ns) <= 1e-3);
  assert_true(fabs(again.flush_cold_ns - c.flush_cold_ns) <= 1e-3);
  assert_true(again.flush_bytes == c.flush_bytes);
  assert_contains(note, "flushed p25 > hot median (cached ");
  assert_contains(note, " ago in ");

  snprintf(line, sizeof line, "hot_ps=%llu", PLANTED_PS);
  replace_in(g_fl_file, "hot_ps", line);
  snprintf(whole, sizeof whole, "%s", read_file(g_fl_file));
  again = flush_calibrate(note, sizeof note);
  assert_true(again.flush_hot_ns == PLANTED_PS / 1e3);
  assert_true(again.flush_ratio == again.flush_cold_ns / again.flush_hot_ns);

  const char *edits[][2] = {{"pass", "pass=0"},
                            {"name", "name=Another CPU"},
                            {"hot_ps", "hot_ps=x"},
                            {"library", "library=0.0.1"}};
  for (size_t i = 0; i < 6; ++i) {
    write_file(g_fl_file, whole);
    if (i < 4)
      replace_in(g_fl_file, edits[i][0], edits[i][1]);
    else if (i == 4)
      write_file(g_fl_file, "garbage\n");
    else
      assert_int_equal(setenv("MB_REMEASURE_PEAK", "1", 1), 0);
    c = flush_calibrate(note, sizeof note);
    unsetenv("MB_REMEASURE_PEAK");
    assert_true(c.flush_hot_ns != PLANTED_PS / 1e3);
    if (c.flush_pass)
      assert_contains(note, i == 5 ? "measured again for MB_REMEASURE_PEAK, "
                                     "cached in"
                                   : "measured now, cached in");
  }
}

/* ---- one file per key ---------------------------------------------------- */

/* A process bound to one core (an mpirun rank, a taskset) runs one thread,
 * another key: its figures go to files of their own, and the whole
 * machine's stay where they were, read back by the next whole-machine
 * context (one file per backend used to be rewritten in turn). */
static void test_keys_coexist(void **state) {
  (void)state;
  cpu_set_t all, one;
  assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
  if (CPU_COUNT(&all) < 2) skip(); /* one core: one key */
  char note[2048], flush[2048], source[1024], whole_bw[900], whole_peak[900];
  const char *dir = test_env_dir("MB_TEST_MODULE_DIR");
  const int passes =
      calibration_in(dir, "cpu", note, flush, sizeof note).flush_pass;
  start(source, sizeof source);
  snprintf(whole_bw, sizeof whole_bw, "%s", g_bw_file);
  snprintf(whole_peak, sizeof whole_peak, "%s", g_file);

  int first = 0;
  while (!CPU_ISSET(first, &all)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  g_two_keys = 1;
  char bw1[2048], src1[1024];
  const int passes1 =
      calibration_in(dir, "cpu", bw1, flush, sizeof bw1).flush_pass;
  start(src1, sizeof src1);
  assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
  char files[3][900];
  assert_int_equal(locate(files[0], sizeof files[0], "cpu-peak-v2"), 2);
  assert_int_equal(locate(files[1], sizeof files[1], "copy-bandwidth-v1-cpu-0"),
                   2);
  /* A flush check is saved only when it passed. */
  assert_int_equal(locate(files[2], sizeof files[2], "flush-check-v1-cpu-0"),
                   passes + passes1);
  assert_null(strstr(bw1, whole_bw));
  assert_null(strstr(src1, whole_peak));

  /* The whole machine's figures were not touched: read back, not measured. */
  snprintf(g_bw_file, sizeof g_bw_file, "%s", whole_bw);
  snprintf(g_file, sizeof g_file, "%s", whole_peak);
  calibrate(note, sizeof note);
  assert_contains(note, " ago in ");
  assert_contains(note, whole_bw);
  start(source, sizeof source);
  assert_contains(source, " ago in ");
  assert_contains(source, whole_peak);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_writes_second_reads),
      cmocka_unit_test(test_garbage_is_a_miss),
      cmocka_unit_test(test_truncated_is_a_miss),
      cmocka_unit_test(test_other_key_is_a_miss),
      cmocka_unit_test(test_remeasure),
      cmocka_unit_test(test_unwritable_is_not_an_error),
      cmocka_unit_test(test_bw_first_writes_second_reads),
      cmocka_unit_test(test_bw_misses),
      cmocka_unit_test(test_bw_remeasure),
      cmocka_unit_test(test_bw_failure_and_unwritable),
      cmocka_unit_test(test_flush_cached),
      cmocka_unit_test(test_keys_coexist), /* last: two keys' files */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
