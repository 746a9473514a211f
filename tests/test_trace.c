/* Traces (mb_context_trace_open): the file is the trace event format's
 * JSON array, every slice well-formed, a benchmark's samples one slice
 * each inside its slice after the warm-up, a composite's steps and
 * phases, a run killed mid-way leaving a loadable prefix; and the
 * device's profiler ranges around each benchmark, warm-up and sample. */
#include <cjson/cJSON.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "measure/trace.h"
#include "test_util.h"

static mb_context_t *g_ctx;

static int setup(void **state) {
  (void)state;
  g_ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mb_context_destroy(g_ctx);
  return 0;
}

static void trace_path(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "/tmp/mb_test_trace_%d_%s.json", (int)getpid(), name);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static cJSON *parse_file(const char *path) {
  char *text = slurp(path);
  cJSON *doc = cJSON_Parse(text);
  if (!doc) fail_msg("%s does not parse as JSON: %.200s", path, text);
  free(text);
  assert_true(cJSON_IsArray(doc));
  return doc;
}

static double num(const cJSON *ev, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);
  if (!cJSON_IsNumber(v)) fail_msg("event without a number %s", key);
  return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *args_of(const cJSON *ev) {
  return cJSON_GetObjectItemCaseSensitive(ev, "args");
}

/* Every event: a name, a phase X or M; an X with ts, dur >= 0, pid, tid
 * and args; M names its process or thread. */
static void check_well_formed(const cJSON *doc) {
  const cJSON *ev;
  int metas = 0;
  cJSON_ArrayForEach(ev, doc) {
    assert_non_null(str(ev, "name"));
    const char *ph = str(ev, "ph");
    assert_non_null(ph);
    num(ev, "pid");
    num(ev, "tid");
    if (!strcmp(ph, "M")) {
      metas++;
      continue;
    }
    assert_string_equal(ph, "X");
    assert_true(num(ev, "ts") > 0);
    assert_true(num(ev, "dur") >= 0);
    assert_true(cJSON_IsObject(args_of(ev)));
  }
  assert_true(metas >= 2); /* process and thread names */
}

static const cJSON *find(const cJSON *doc, const char *name) {
  const cJSON *ev;
  cJSON_ArrayForEach(ev, doc) {
    const char *n = str(ev, "name");
    if (n && !strcmp(n, name)) return ev;
  }
  return NULL;
}

/* The first X slice whose name starts with `prefix`. */
static const cJSON *find_prefix(const cJSON *doc, const char *prefix) {
  const cJSON *ev;
  cJSON_ArrayForEach(ev, doc) {
    const char *n = str(ev, "name");
    if (n && !strncmp(n, prefix, strlen(prefix)) && !strcmp(str(ev, "ph"), "X"))
      return ev;
  }
  return NULL;
}

/* inner lies within outer on the same process and thread (the viewers
 * nest by that); a microsecond's rounding at the ends is allowed. */
static void assert_inside(const cJSON *inner, const cJSON *outer) {
  assert_true(num(inner, "pid") == num(outer, "pid"));
  assert_true(num(inner, "tid") == num(outer, "tid"));
  const double eps = 1e-3;
  assert_true(num(inner, "ts") >= num(outer, "ts") - eps);
  assert_true(num(inner, "ts") + num(inner, "dur") <=
              num(outer, "ts") + num(outer, "dur") + eps);
}

static mb_bench_spec_t gemm_spec(mb_op_params_t *p, mb_cache_policy_t cache) {
  *p = test_shape3(MB_DTYPE_F32, 32, 32, 32);
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "gemm";
  s.params = p;
  s.backend = "cpu";
  s.cache = cache;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 7;
  s.warmup_s = 0;
  s.warmup_runs = 2;
  return s;
}

static void run_one(const mb_bench_spec_t *s, char *id, size_t cap,
                    size_t *samples) {
  mb_result_t *r = NULL;
  if (mb_bench_run(g_ctx, s, &r) != MB_OK) fail_msg("%s", mb_error_last());
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  assert_int_equal(info.status, MB_RESULT_OK);
  mb_result_samples(r, samples);
  /* The benchmark slice is named by the id the results carry. */
  cJSON *json = cJSON_Parse(mb_result_json(r));
  snprintf(id, cap, "%s", str(json, "id"));
  cJSON_Delete(json);
  mb_result_destroy(r);
}

static void test_benchmark_samples(void **state) {
  (void)state;
  char path[256], id[512];
  trace_path(path, sizeof path, "bench");
  mb_op_params_t p;
  mb_bench_spec_t s = gemm_spec(&p, MB_CACHE_COLD);
  size_t n;
  assert_int_equal(mb_context_trace_open(g_ctx, path, 0), MB_OK);
  /* One trace at a time per context. */
  assert_int_equal(mb_context_trace_open(g_ctx, path, 0), MB_ERR_INVALID_ARG);
  run_one(&s, id, sizeof id, &n);
  assert_int_equal(mb_context_trace_close(g_ctx), MB_OK);
  cJSON *doc = parse_file(path);
  check_well_formed(doc);
  const cJSON *bench = find(doc, id);
  if (!bench) fail_msg("no slice named %s", id);
  const cJSON *a = args_of(bench);
  assert_string_equal(str(a, "op"), "gemm");
  assert_string_equal(str(a, "backend"), "cpu");
  assert_string_equal(str(a, "cache"), "cold");
  assert_string_equal(str(a, "status"), "ok");
  assert_string_equal(str(a, "shape"), "32x32x32");
  assert_true(num(a, "samples") == (double)n);
  assert_true(num(a, "median_ns") > 0);
  const cJSON *warm = find(doc, "warm-up");
  assert_non_null(warm);
  assert_inside(warm, bench);
  assert_true(num(args_of(warm), "runs") >= 2);
  size_t samples = 0, flushes = 0;
  const cJSON *ev;
  cJSON_ArrayForEach(ev, doc) {
    const char *name = str(ev, "name");
    if (!strcmp(name, "flush")) {
      assert_inside(ev, bench);
      flushes++;
    }
    if (strncmp(name, "sample ", 7) != 0) continue;
    char want[32];
    snprintf(want, sizeof want, "sample %zu", samples);
    assert_string_equal(name, want); /* in order, numbered from 0 */
    assert_inside(ev, bench);
    assert_true(num(ev, "ts") >= num(warm, "ts") + num(warm, "dur") - 1e-3);
    assert_true(num(args_of(ev), "batch") == 1);
    assert_true(num(args_of(ev), "ns_per_run") > 0);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(args_of(ev), "flags")));
    samples++;
  }
  assert_int_equal(samples, n);
  assert_int_equal(flushes, n); /* cold: each sample flushed first */
  /* The context's first benchmark measured the copy bandwidth (or read
   * its cache) first, inside it. */
  const cJSON *bw = find(doc, "calibration: copy bandwidth");
  assert_non_null(bw);
  assert_inside(bw, bench);
  const cJSON *check = find(doc, "check");
  assert_non_null(check);
  assert_inside(check, bench);
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(args_of(check), "pass")));
  cJSON_Delete(doc);
  unlink(path);
}

/* A composite: its steps, each with label, op, impl and phase, and its
 * two phases, inside the benchmark's slice. */
static void test_composite_steps(void **state) {
  (void)state;
  char path[256], id[512];
  trace_path(path, sizeof path, "model");
  mb_op_params_t p = test_shape3(MB_DTYPE_NONE, 32, 64, 32);
  p.recipe = MB_RECIPE_FLOAT8DQ_ROW;
  mb_bench_spec_t s = MB_BENCH_SPEC_INIT;
  s.op = "linear_training";
  s.params = &p;
  s.backend = "cpu";
  s.cache = MB_CACHE_HOT;
  s.criterion = MB_CRITERION_FIXED;
  s.samples = 3;
  s.warmup_s = 0;
  size_t n;
  assert_int_equal(mb_context_trace_open(g_ctx, path, 0), MB_OK);
  run_one(&s, id, sizeof id, &n);
  assert_int_equal(mb_context_trace_close(g_ctx), MB_OK);
  cJSON *doc = parse_file(path);
  check_well_formed(doc);
  const cJSON *bench = find(doc, id);
  assert_non_null(bench);
  size_t steps = 0, samples = 0;
  int phases[2] = {0, 0};
  const cJSON *ev;
  cJSON_ArrayForEach(ev, doc) {
    const char *name = str(ev, "name");
    if (!strncmp(name, "sample ", 7)) samples++;
    if (!strncmp(name, "step ", 5)) {
      const cJSON *a = args_of(ev);
      assert_non_null(str(a, "label"));
      assert_true(*str(a, "op"));
      assert_true(*str(a, "impl"));
      assert_non_null(str(a, "phase"));
      assert_true(num(a, "median_ns") > 0);
      assert_inside(ev, bench);
      steps++;
    }
    if (!strcmp(name, "phase forward")) phases[0]++;
    if (!strcmp(name, "phase backward")) phases[1]++;
  }
  assert_true(steps >= 3); /* quantize, gemm forward, the backward gemms */
  assert_int_equal(phases[0], 1);
  assert_int_equal(phases[1], 1);
  /* The parts' own samples are not the benchmark's. */
  assert_int_equal(samples, n);
  assert_non_null(find_prefix(doc, "step gemm"));
  cJSON_Delete(doc);
  unlink(path);
}

/* The children below are this program again (exec'd: a fork of a process
 * whose backend started its threads would not run them). */
static pid_t spawn_self(const char *what, const char *path) {
  fflush(NULL);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Not the core this thread was pinned to by the benchmarks run so far:
     * a child started on one core runs its OpenMP team there, which
     * libgomp leaks at exit (LeakSanitizer fails the child). mbench's
     * --isolate children get their start affinity back the same way. */
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    execl("/proc/self/exe", "test_trace", what, path, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* In the child: a benchmark into path's trace (appended to it, or a new
 * one), then killed before closing it, or closed and exiting. */
static int child_main(const char *what, const char *path) {
  mb_context_t *ctx = NULL;
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  o.backend_path = getenv("MB_TEST_MODULE_DIR");
  o.flags = MB_CONTEXT_NO_DEFAULT_BACKENDS;
  const int append = !strcmp(what, "--append");
  mb_op_params_t p;
  mb_bench_spec_t s = gemm_spec(&p, MB_CACHE_HOT);
  mb_result_t *r = NULL;
  if (mb_context_create(&ctx, &o) != MB_OK ||
      mb_context_trace_open(ctx, path, append ? MB_TRACE_APPEND : 0) != MB_OK ||
      mb_bench_run(ctx, &s, &r) != MB_OK)
    return 3;
  if (!append) raise(SIGKILL);
  mb_result_destroy(r);
  const int ok = mb_context_trace_close(ctx) == MB_OK;
  mb_context_destroy(ctx);
  return ok ? 0 : 4;
}

/* A process killed after a benchmark (no close) leaves the array without
 * its "]": every finished benchmark's events are in the file, whole, and
 * the prefix, closed, parses. */
static void test_killed_prefix(void **state) {
  (void)state;
  char path[256];
  trace_path(path, sizeof path, "killed");
  const pid_t pid = spawn_self("--killed", path);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  char *text = slurp(path);
  assert_true(text[0] == '[');
  size_t len = strlen(text);
  assert_true(len > 4);
  assert_null(strstr(text, "}]"));
  /* What a viewer does with an unclosed array. */
  while (len && (text[len - 1] == '\n' || text[len - 1] == ','))
    text[--len] = '\0';
  char *closed = malloc(len + 2);
  snprintf(closed, len + 2, "%s]", text);
  cJSON *doc = cJSON_Parse(closed);
  assert_non_null(doc);
  check_well_formed(doc);
  assert_non_null(find(doc, "sample 6"));
  assert_non_null(find_prefix(doc, "gemm/32x32x32/"));
  cJSON_Delete(doc);
  free(closed);
  free(text);
  unlink(path);
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fclose(f);
  return n;
}

/* Events reach the file only whole, at a benchmark's end (one write):
 * however many a benchmark makes, a kill before its end leaves the file at
 * the last whole event, and an isolated child's writes never land inside
 * one of its parent's. */
static void test_events_written_whole(void **state) {
  (void)state;
  char path[256];
  trace_path(path, sizeof path, "whole");
  assert_int_equal(mb_context_trace_open(g_ctx, path, 0), MB_OK);
  const long opened = file_size(path);
  for (int i = 0; i < 2000; i++) { /* ~200 kB: far past any stdio buffer */
    cJSON *args;
    cJSON *ev = mb__trace_slice("sample", 1.0 + i, 2.0 + i, &args);
    assert_non_null(ev);
    cJSON_AddNumberToObject(args, "batch", i);
    mb__trace_emit(g_ctx, ev);
  }
  assert_int_equal(file_size(path), opened);
  mb__trace_flush(g_ctx);
  char *text = slurp(path);
  const size_t len = strlen(text);
  assert_true(len > 100000);
  assert_string_equal(text + len - 2, ",\n");
  free(text);
  assert_int_equal(mb_context_trace_close(g_ctx), MB_OK);
  text = slurp(path);
  cJSON *doc = cJSON_Parse(text);
  assert_non_null(doc);
  check_well_formed(doc);
  cJSON_Delete(doc);
  free(text);
  unlink(path);
}

/* An isolated child appends to its parent's trace: one array, two
 * processes' events. */
static void test_append(void **state) {
  (void)state;
  char path[256], id[512];
  trace_path(path, sizeof path, "append");
  mb_op_params_t p;
  mb_bench_spec_t s = gemm_spec(&p, MB_CACHE_HOT);
  size_t n;
  assert_int_equal(mb_context_trace_open(g_ctx, path, 0), MB_OK);
  run_one(&s, id, sizeof id, &n);
  const pid_t pid = spawn_self("--append", path);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  run_one(&s, id, sizeof id, &n);
  assert_int_equal(mb_context_trace_close(g_ctx), MB_OK);
  cJSON *doc = parse_file(path);
  check_well_formed(doc);
  int benches = 0, child_events = 0;
  const cJSON *ev;
  cJSON_ArrayForEach(ev, doc) {
    if (!strcmp(str(ev, "name"), id)) benches++;
    if (num(ev, "pid") == (double)pid) child_events++;
  }
  assert_int_equal(benches, 3);
  assert_true(child_events > 0);
  cJSON_Delete(doc);
  unlink(path);
}

/* The device's flush check runs copy benchmarks: they nest in a slice
 * that says they are calibration. Measured again (MB_REMEASURE_PEAK), then
 * read back from the roof cache: the slice, with no copies in it. */
static void test_calibration(void **state) {
  (void)state;
  char path[256];
  trace_path(path, sizeof path, "calibration");
  int first_passed = 0;
  for (int cached = 0; cached < 2; cached++) {
    if (!cached) assert_int_equal(setenv("MB_REMEASURE_PEAK", "1", 1), 0);
    mb_context_t *ctx = test_context(test_env_dir("MB_TEST_MODULE_DIR"));
    mb_device_t *dev = NULL;
    assert_int_equal(mb_device_find(ctx, "cpu", 0, &dev), MB_OK);
    assert_int_equal(mb_context_trace_open(ctx, path, 0), MB_OK);
    mb_calibration_t cal = MB_CALIBRATION_INIT;
    assert_int_equal(mb_device_calibration(dev, &cal), MB_OK);
    const int passed = cal.flush_pass;
    mb_context_destroy(ctx); /* closes the trace */
    unsetenv("MB_REMEASURE_PEAK");
    cJSON *doc = parse_file(path);
    check_well_formed(doc);
    const cJSON *flush = find(doc, "calibration: flush check");
    assert_non_null(flush);
    assert_string_equal(str(args_of(flush), "backend"), "cpu");
    const cJSON *copy = find_prefix(doc, "copy/");
    if (!cached) {
      assert_non_null(copy);
      assert_inside(copy, flush);
      first_passed = passed;
    } else if (first_passed) { /* saved, so read back: no copies */
      assert_non_null(strstr(str(args_of(flush), "note"), " ago in "));
      assert_null(copy);
    }
    cJSON_Delete(doc);
    unlink(path);
  }
}

static void test_bad_path(void **state) {
  (void)state;
  assert_int_equal(mb_context_trace_open(g_ctx, "/tmp", 0), MB_ERR_INVALID_ARG);
  assert_contains(mb_error_last(), "/tmp");
  assert_int_equal(mb_context_trace_open(g_ctx, "/nonexistent/dir/t.json", 0),
                   MB_ERR_IO);
  assert_contains(mb_error_last(), "/nonexistent/dir/t.json");
  assert_int_equal(mb_context_trace_close(g_ctx), MB_OK); /* none open */
}

/* ---- the device's ranges ------------------------------------------------ */

/* What the patched backend saw: "+name" for a push, "-" for a pop. */
static char g_calls[4096][160];
static size_t g_num_calls;

static void rec_push(void *state, uint32_t dev, const char *name) {
  (void)state;
  (void)dev;
  if (g_num_calls < 4096)
    snprintf(g_calls[g_num_calls++], sizeof g_calls[0], "+%s", name);
}

static void rec_pop(void *state, uint32_t dev) {
  (void)state;
  (void)dev;
  if (g_num_calls < 4096) snprintf(g_calls[g_num_calls++], 160, "-");
}

/* The CPU backend with range hooks, as a GPU backend has them: the
 * loader's copy of its table is the library's, patched here. */
static mb_backend_vtable_t *cpu_table(void) {
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(g_ctx, "cpu", 0, &dev), MB_OK);
  return (mb_backend_vtable_t *)dev->backend->vt;
}

static void test_ranges(void **state) {
  (void)state;
  mb_backend_vtable_t *vt = cpu_table();
  vt->range_push = rec_push;
  vt->range_pop = rec_pop;
  g_num_calls = 0;
  char id[512];
  size_t n;
  mb_op_params_t p;
  mb_bench_spec_t s = gemm_spec(&p, MB_CACHE_HOT);
  run_one(&s, id, sizeof id, &n); /* no trace: ranges still */
  vt->range_push = NULL;
  vt->range_pop = NULL;
  /* benchmark { warm-up {} sample 0 {} ... sample n-1 {} } */
  assert_int_equal(g_num_calls, 2 * (n + 2));
  char want[600];
  snprintf(want, sizeof want, "+%s", id);
  assert_string_equal(g_calls[0], want);
  snprintf(want, sizeof want, "+%s warm-up", id);
  assert_string_equal(g_calls[1], want);
  assert_string_equal(g_calls[2], "-");
  for (size_t i = 0; i < n; i++) {
    snprintf(want, sizeof want, "+%s sample %zu", id, i);
    assert_string_equal(g_calls[3 + 2 * i], want);
    assert_string_equal(g_calls[4 + 2 * i], "-");
  }
  assert_string_equal(g_calls[g_num_calls - 1], "-");
  /* A push without its pop is not called: it would nest every later
   * range in it. */
  vt->range_push = rec_push;
  g_num_calls = 0;
  run_one(&s, id, sizeof id, &n);
  vt->range_push = NULL;
  assert_int_equal(g_num_calls, 0);
}

int main(int argc, char **argv) {
  if (argc == 3) return child_main(argv[1], argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_benchmark_samples),
      cmocka_unit_test(test_composite_steps),
      cmocka_unit_test(test_killed_prefix),
      cmocka_unit_test(test_events_written_whole),
      cmocka_unit_test(test_append),
      cmocka_unit_test(test_calibration),
      cmocka_unit_test(test_bad_path),
      cmocka_unit_test(test_ranges),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
