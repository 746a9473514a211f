/* The loader: every failure is a reason, never a crash. */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static char g_path[4096];

static const char *fixture(const char *name) {
  snprintf(g_path, sizeof g_path, "%s/%s", test_env_dir("MB_TEST_FIXTURE_DIR"),
           name);
  return g_path;
}

/* Loads only `dir` and returns its single entry. */
static void single_entry(const char *dir, mb_backend_info_t *b,
                         mb_context_t **ctx) {
  *ctx = test_context(dir);
  assert_int_equal(mb_backend_count(*ctx), 1);
  *b = (mb_backend_info_t)MB_BACKEND_INFO_INIT;
  assert_int_equal(mb_backend_info(*ctx, 0, b), MB_OK);
}

static void expect_refused(const char *dir, const char *reason) {
  mb_context_t *ctx;
  mb_backend_info_t b;
  single_entry(fixture(dir), &b, &ctx);
  assert_false(b.loaded);
  assert_int_equal(b.device_count, 0);
  assert_contains(b.reason, reason);
  assert_int_equal(mb_device_count(ctx), 0);
  mb_context_destroy(ctx);
}

static void test_missing_dir(void **state) {
  (void)state;
  mb_context_t *ctx;
  mb_backend_info_t b;
  single_entry("/nonexistent/backends", &b, &ctx);
  assert_false(b.loaded);
  assert_string_equal(b.path, "/nonexistent/backends");
  assert_contains(b.reason, "cannot read search directory");
  assert_contains(b.reason, "No such file");
  mb_context_destroy(ctx);
}

static void test_garbage(void **s) {
  (void)s;
  expect_refused("garbage", "cannot load");
}
static void test_no_entry(void **s) {
  (void)s;
  expect_refused("noentry", "no symbol mb_backend_entry");
}
static void test_abi_mismatch(void **s) {
  (void)s;
  expect_refused("abi", "ABI version mismatch: module speaks 999");
}
static void test_refuse(void **s) {
  (void)s;
  expect_refused("refuse", "refusing to load: this fixture always refuses");
}
static void test_no_hook(void **s) {
  (void)s;
  expect_refused("nohook", "required hook time_batch is NULL");
}

static void test_no_device(void **state) {
  (void)state;
  mb_context_t *ctx;
  mb_backend_info_t b;
  single_entry(fixture("nodevice"), &b, &ctx);
  assert_true(b.loaded);
  assert_string_equal(b.name, "nodevice");
  assert_int_equal(b.device_count, 0);
  assert_contains(b.reason, "no fake device");
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "nodevice", 0, &dev), MB_ERR_NO_DEVICE);
  assert_contains(mb_error_last(), "no fake device");
  /* A benchmark there is skipped with the reason, not an input error. */
  mb_op_params_t p = MB_OP_PARAMS_INIT;
  p.ndim = 3;
  p.shape[0] = p.shape[1] = p.shape[2] = 8;
  mb_bench_spec_t spec = MB_BENCH_SPEC_INIT;
  spec.op = "gemm";
  spec.params = &p;
  spec.backend = "nodevice";
  mb_result_t *r = NULL;
  assert_int_equal(mb_bench_run(ctx, &spec, &r), MB_OK);
  mb_result_info_t info = MB_RESULT_INFO_INIT;
  mb_result_info(r, &info);
  assert_int_equal(info.status, MB_RESULT_SKIPPED);
  assert_contains(info.reason, "no fake device");
  mb_result_destroy(r);
  mb_context_destroy(ctx);
}

/* The module directory holds the cpu module and whichever GPU modules this
 * build made (cuda where nvcc exists). */
static size_t modules_in(const char *dir) {
  DIR *d = opendir(dir);
  size_t n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    n += strncmp(e->d_name, "mb_backend_", 11) == 0 &&
         strstr(e->d_name, ".so") != NULL;
  if (d) closedir(d);
  return n;
}

static void test_cpu_and_failures_together(void **state) {
  (void)state;
  char path[8192];
  const char *fx = test_env_dir("MB_TEST_FIXTURE_DIR");
  snprintf(path, sizeof path, "/nonexistent:%s/garbage:%s/abi:%s", fx, fx,
           test_env_dir("MB_TEST_MODULE_DIR"));
  mb_context_t *ctx = test_context(path);
  assert_int_equal(mb_backend_count(ctx),
                   3 + modules_in(test_env_dir("MB_TEST_MODULE_DIR")));
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "cpu", 0, &dev), MB_OK);
  mb_device_info_t info = MB_DEVICE_INFO_INIT;
  assert_int_equal(mb_device_info(dev, &info), MB_OK);
  assert_string_equal(info.backend, "cpu");
  assert_true(info.compute_units >= 1);
  /* An unknown backend names the valid ones and why others are missing. */
  assert_int_equal(mb_device_find(ctx, "nosuch", 0, &dev), MB_ERR_NOT_FOUND);
  assert_contains(mb_error_last(), "unknown backend \"nosuch\"");
  assert_contains(mb_error_last(), "cpu (1 device)");
  assert_contains(mb_error_last(), "ABI version mismatch");
  assert_int_equal(mb_device_find(ctx, "cpu", 7, &dev), MB_ERR_NO_DEVICE);
  mb_context_destroy(ctx);
}

static void test_same_module_twice(void **state) {
  (void)state;
  char path[8192];
  const char *dir = test_env_dir("MB_TEST_MODULE_DIR");
  snprintf(path, sizeof path, "%s:%s/.", dir, dir);
  mb_context_t *ctx = test_context(path);
  /* each file loaded once */
  assert_int_equal(mb_backend_count(ctx), modules_in(dir));
  mb_context_destroy(ctx);
}

/* Modules inside their trust boundary: a relative MB_BACKEND_PATH entry
 * (whatever the working directory holds) and a module that every user can
 * write, or in a directory every user can write, are refused with the
 * reason. */
static void copy_module(const char *dir, mode_t dir_mode, mode_t file_mode,
                        char *file, size_t cap) {
  char cmd[8192];
  snprintf(file, cap, "%s/mb_backend_fake.so", dir);
  snprintf(cmd, sizeof cmd, "cp %s/mb_backend_wrong.so %s", fixture("working"),
           file);
  assert_int_equal(system(cmd), 0);
  assert_int_equal(chmod(file, file_mode), 0);
  assert_int_equal(chmod(dir, dir_mode), 0);
}

static void test_trust_boundary(void **state) {
  (void)state;
  char dir[] = "/tmp/mb_test_loader_XXXXXX", file[512];
  assert_non_null(mkdtemp(dir));
  const struct {
    mode_t dir, file;
    const char *reason; /* NULL: loads */
  } k_cases[] = {{0755, 0755, NULL},
                 {0777, 0755, "refused: its directory is writable by every"},
                 {0755, 0757, "refused: the module is writable by every"}};
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    copy_module(dir, k_cases[i].dir, k_cases[i].file, file, sizeof file);
    mb_context_t *ctx;
    mb_backend_info_t b;
    single_entry(dir, &b, &ctx);
    assert_int_equal(b.loaded, k_cases[i].reason == NULL);
    if (k_cases[i].reason) assert_contains(b.reason, k_cases[i].reason);
    mb_context_destroy(ctx);
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(unlink(file), 0);
  }
  assert_int_equal(rmdir(dir), 0);
  /* The environment's list: absolute directories only. */
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  setenv("MB_BACKEND_PATH", "lib/microbench", 1);
  mb_context_t *ctx = NULL;
  assert_int_equal(mb_context_create(&ctx, &o), MB_OK);
  int said = 0;
  for (size_t i = 0; i < mb_backend_count(ctx); i++) {
    mb_backend_info_t b = MB_BACKEND_INFO_INIT;
    assert_int_equal(mb_backend_info(ctx, i, &b), MB_OK);
    said |= b.reason && strstr(b.reason,
                               "MB_BACKEND_PATH entry "
                               "\"lib/microbench\" is relative") != NULL;
  }
  assert_true(said);
  mb_context_destroy(ctx);
  unsetenv("MB_BACKEND_PATH");
}

/* One of this project's backends that is not loaded here (a build without
 * CUDA) is a device that is not available, so a config written for it
 * skips; a name no build has is an input error. */
static void test_shipped_backend_not_built(void **state) {
  (void)state;
  mb_context_t *ctx = test_context(fixture("working"));
  mb_device_t *dev = NULL;
  assert_int_equal(mb_device_find(ctx, "hip", 0, &dev), MB_ERR_NO_DEVICE);
  assert_contains(mb_error_last(), "backend \"hip\" is not available here");
  assert_int_equal(mb_device_find(ctx, "tpu", 0, &dev), MB_ERR_NOT_FOUND);
  assert_contains(mb_error_last(), "unknown backend \"tpu\"");
  mb_context_destroy(ctx);
}

static void test_options_struct_size(void **state) {
  (void)state;
  mb_context_options_t o = MB_CONTEXT_OPTIONS_INIT;
  mb_context_t *ctx = NULL;
  o.struct_size = 3;
  assert_int_equal(mb_context_create(&ctx, &o), MB_ERR_INVALID_ARG);
  assert_null(ctx);
  assert_contains(mb_error_last(), "struct_size");
  mb_context_destroy(NULL); /* a no-op */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_dir),
      cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_no_entry),
      cmocka_unit_test(test_abi_mismatch),
      cmocka_unit_test(test_refuse),
      cmocka_unit_test(test_no_hook),
      cmocka_unit_test(test_no_device),
      cmocka_unit_test(test_cpu_and_failures_together),
      cmocka_unit_test(test_same_module_twice),
      cmocka_unit_test(test_trust_boundary),
      cmocka_unit_test(test_shipped_backend_not_built),
      cmocka_unit_test(test_options_struct_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
