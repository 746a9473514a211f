/* Finds and dlopens backend modules. Search order: the context option's
 * directories, $MB_BACKEND_PATH, then `microbench/` beside libmicrobench.so
 * (the same relative layout in the build tree and the install tree), then
 * the configured install directory. Loading only registers a backend (its
 * vtable); it is instantiated on first use. Every failure is recorded as a
 * reason, never fatal. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define MB__MODULE_PREFIX "mb_backend_"
#define MB__MODULE_SUFFIX ".so"

static mb__backend_t *add_entry(mb_context_t *ctx, const char *name,
                                const char *path) {
  mb__backend_t *grown =
      realloc(ctx->backends, (ctx->num_backends + 1) * sizeof *grown);
  if (!grown) return NULL;
  ctx->backends = grown;
  mb__backend_t *b = &grown[ctx->num_backends++];
  memset(b, 0, sizeof *b);
  b->name = mb__strdup(name);
  b->path = mb__strdup(path);
  b->reason = mb__strdup("");
  return b;
}

static void set_reason(mb__backend_t *b, const char *fmt, ...) MB__FMT(2, 3);
static void set_reason(mb__backend_t *b, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  free(b->reason);
  b->reason = mb__strdup(msg);
}

/* The hooks the core cannot work without. */
static const char *missing_hook(const mb_backend_vtable_t *vt) {
  static const struct {
    size_t offset;
    const char *name;
  } k_required[] = {
      {offsetof(mb_backend_vtable_t, init), "init"},
      {offsetof(mb_backend_vtable_t, fini), "fini"},
      {offsetof(mb_backend_vtable_t, device_count), "device_count"},
      {offsetof(mb_backend_vtable_t, device_info), "device_info"},
      {offsetof(mb_backend_vtable_t, alloc), "alloc"},
      {offsetof(mb_backend_vtable_t, free), "free"},
      {offsetof(mb_backend_vtable_t, copy_to_device), "copy_to_device"},
      {offsetof(mb_backend_vtable_t, copy_to_host), "copy_to_host"},
      {offsetof(mb_backend_vtable_t, sync), "sync"},
      {offsetof(mb_backend_vtable_t, time_batch), "time_batch"},
  };
  for (size_t i = 0; i < sizeof k_required / sizeof k_required[0]; i++) {
    void *fn;
    memcpy(&fn, (const char *)vt + k_required[i].offset, sizeof fn);
    if (!fn) return k_required[i].name;
  }
  return NULL;
}

/* The core's copy of a module's tables at this library's size, kernels
 * beside the vtable (one block, freed at unload). A module built against an
 * older backend.h has a shorter vtable and shorter kernel entries (the
 * array's stride is its own sizeof): versioned.c's rule copies what it has
 * and leaves every hook appended since NULL, so the rest of the core reads
 * members plainly and never past the module's table. */
typedef struct mb__tables {
  mb_backend_vtable_t vt;
  mb_backend_kernel_t kernels[];
} mb__tables_t;

static mb_status_t copy_tables(const mb_backend_vtable_t *given,
                               const mb_backend_vtable_t **out) {
  mb_backend_vtable_t vt = {0};
  mb_status_t st =
      mb__struct_in(MB__STRUCT_BACKEND_VTABLE, "vtable", given, &vt);
  if (st != MB_OK) return st;
  const size_t n = vt.num_kernels;
  if (n && !vt.kernels)
    return mb__fail(MB_ERR_INVALID_ARG, "vtable: %zu kernels at NULL", n);
  /* Every entry is the module's one mb_backend_kernel_t: the first's
   * struct_size is the stride. */
  uint32_t stride = 0;
  if (n) memcpy(&stride, vt.kernels, sizeof stride);
  mb__tables_t *t = calloc(1, sizeof *t + n * sizeof t->kernels[0]);
  if (!t) return mb__fail(MB_ERR_NO_MEMORY, "out of memory for the vtable");
  t->vt = vt;
  for (size_t i = 0; i < n && st == MB_OK; i++) {
    const char *k = (const char *)vt.kernels + i * stride;
    uint32_t size;
    char what[32];
    memcpy(&size, k, sizeof size);
    snprintf(what, sizeof what, "kernels[%zu]", i);
    st = size != stride ? mb__fail(MB_ERR_INVALID_ARG,
                                   "%s: struct_size %u, kernels[0]'s %u (one "
                                   "array, one struct size)",
                                   what, size, stride)
                        : mb__struct_in(MB__STRUCT_BACKEND_KERNEL, what, k,
                                        &t->kernels[i]);
  }
  if (st != MB_OK) {
    free(t);
    return st;
  }
  t->vt.kernels = t->kernels;
  *out = &t->vt;
  return MB_OK;
}

static int same_text(const char *a, const char *b) {
  return a && b ? strcmp(a, b) == 0 : a == b;
}

static int same_kernel(const mb_backend_kernel_t *a,
                       const mb_backend_kernel_t *b) {
  return same_text(a->op, b->op) && same_text(a->name, b->name) &&
         a->dtype == b->dtype && a->dtype_out == b->dtype_out;
}

/* b->listed: the rows of its table that are not a twin of an earlier one
 * (mb__backend_t). MB_ERR_NO_MEMORY when it cannot be made. */
static mb_status_t list_kernels(mb__backend_t *b) {
  const mb_backend_vtable_t *vt = b->vt;
  b->listed =
      malloc((vt->num_kernels ? vt->num_kernels : 1) * sizeof *b->listed);
  if (!b->listed) return mb__fail(MB_ERR_NO_MEMORY, "out of memory");
  for (size_t i = 0; i < vt->num_kernels; i++) {
    size_t j = 0;
    while (j < i && !same_kernel(&vt->kernels[j], &vt->kernels[i])) j++;
    if (j == i) b->listed[b->num_listed++] = i;
  }
  return MB_OK;
}

static const mb__backend_t *find_loaded(const mb_context_t *ctx,
                                        const char *name) {
  for (size_t i = 0; i < ctx->num_backends; i++)
    if (ctx->backends[i].vt && strcmp(ctx->backends[i].name, name) == 0)
      return &ctx->backends[i];
  return NULL;
}

static int already_tried(const mb_context_t *ctx, const char *path) {
  for (size_t i = 0; i < ctx->num_backends; i++)
    if (strcmp(ctx->backends[i].path, path) == 0) return 1;
  return 0;
}

/* Code another user can change is not loaded into this process (SSH's
 * rule for keys): the module, or the directory it is in, writable by
 * every user. "" when neither is. */
static const char *writable_by_others(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && (st.st_mode & S_IWOTH)) return "the module";
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  if (slash && stat(*dir ? dir : "/", &st) == 0 && (st.st_mode & S_IWOTH))
    return "its directory";
  return "";
}

static void load_module(mb_context_t *ctx, const char *file,
                        const char *given) {
  /* Canonical path, so one file reached through two directories (build
   * dir = install dir, a symlink) is loaded once. */
  char path[PATH_MAX];
  if (!realpath(given, path)) snprintf(path, sizeof path, "%s", given);
  if (already_tried(ctx, path)) return;
  mb__backend_t *b = add_entry(ctx, file, path);
  if (!b) return;
  const char *who = writable_by_others(path);
  if (*who) {
    set_reason(b,
               "refused: %s is writable by every user, so anyone could put "
               "code into this process (chmod o-w)",
               who);
    mb__log(ctx, MB_LOG_WARN, "%s: %s", path, b->reason);
    return;
  }
  /* NODELETE: backends start threads (OpenMP teams, GPU runtimes) that
   * outlive fini() and keep thread-local storage in the module; unmapping
   * the code under them would crash the process at exit. */
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!dl) {
    const char *err = dlerror();
    set_reason(b, "cannot load: %s", err ? err : "unknown dlopen error");
    mb__loader_say(ctx, "%s: %s", path, b->reason);
    return;
  }
  mb_backend_entry_fn entry;
  void *sym = dlsym(dl, MB_BACKEND_ENTRY_SYMBOL);
  memcpy(&entry, &sym, sizeof entry); /* object -> function pointer */
  if (!sym) {
    set_reason(b, "no symbol %s: not a libmicrobench backend",
               MB_BACKEND_ENTRY_SYMBOL);
  } else {
    mb_error_clear();
    const mb_backend_vtable_t *given = entry(&ctx->host), *vt = NULL;
    const char *hook = NULL;
    if (!given) {
      set_reason(b, "entry point refused to load: %s",
                 *mb_error_last() ? mb_error_last() : "no reason given");
    } else if (given->abi_version != MB_BACKEND_ABI_VERSION) {
      set_reason(b, "ABI version mismatch: module speaks %u, library speaks %u",
                 given->abi_version, MB_BACKEND_ABI_VERSION);
    } else if (copy_tables(given, &vt) != MB_OK) {
      set_reason(b, "%s", mb_error_last());
    } else if (!vt->name || !*vt->name) {
      set_reason(b, "vtable has no name");
    } else if ((hook = missing_hook(vt)) != NULL) {
      set_reason(b, "required hook %s is NULL", hook);
    } else if (find_loaded(ctx, vt->name)) {
      set_reason(b, "backend \"%s\" already loaded from %s", vt->name,
                 find_loaded(ctx, vt->name)->path);
    } else {
      b->vt = vt;
      if (list_kernels(b) == MB_OK) {
        free(b->name);
        b->name = mb__strdup(vt->name);
        b->dl = dl;
        mb__loader_say(ctx, "%s: loaded backend \"%s\"", path, vt->name);
        return;
      }
      b->vt = NULL;
      set_reason(b, "%s", mb_error_last());
    }
    free((void *)vt); /* the copy_tables block; NULL when none was made */
  }
  mb__loader_say(ctx, "%s: %s", path, b->reason);
  dlclose(dl);
}

static int is_module_name(const char *f) {
  size_t n = strlen(f), p = strlen(MB__MODULE_PREFIX),
         s = strlen(MB__MODULE_SUFFIX);
  return n > p + s && strncmp(f, MB__MODULE_PREFIX, p) == 0 &&
         strcmp(f + n - s, MB__MODULE_SUFFIX) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every mb_backend_*.so in `dir`, in name order (deterministic). */
static void scan_dir(mb_context_t *ctx, const char *dir, int report_missing) {
  DIR *d = opendir(dir);
  if (!d) {
    int err = errno;
    mb__loader_say(ctx, "%s: cannot read directory: %s", dir, strerror(err));
    if (report_missing) {
      mb__backend_t *b = add_entry(ctx, dir, dir);
      if (b) set_reason(b, "cannot read search directory: %s", strerror(err));
    }
    return;
  }
  char **names = NULL;
  size_t count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_module_name(e->d_name)) continue;
    char **grown = realloc(names, (count + 1) * sizeof *grown);
    if (!grown) break;
    names = grown;
    names[count] = mb__strdup(e->d_name);
    if (names[count]) count++;
  }
  closedir(d);
  if (count > 1) qsort(names, count, sizeof *names, cmp_str); /* NULL if 0 */
  for (size_t i = 0; i < count; i++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    load_module(ctx, names[i], path);
    free(names[i]);
  }
  free(names);
}

/* Each non-empty component of a colon-separated list. From the
 * environment (`what` names it) only absolute directories: a relative one
 * means whatever the working directory holds, a classic way to load a
 * planted library. */
static void scan_path_list(mb_context_t *ctx, const char *list,
                           const char *what) {
  if (!list) return;
  char *copy = mb__strdup(list);
  if (!copy) return;
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir;
       dir = strtok_r(NULL, ":", &save)) {
    if (what && dir[0] != '/') {
      mb__backend_t *b = add_entry(ctx, dir, dir);
      if (b)
        set_reason(b,
                   "%s entry \"%s\" is relative: give an absolute directory "
                   "(a relative one depends on the working directory)",
                   what, dir);
      mb__log(ctx, MB_LOG_WARN, "%s: %s", dir, b ? b->reason : "relative");
      continue;
    }
    scan_dir(ctx, dir, 1);
  }
  free(copy);
}

/* `microbench/` beside the file this library was loaded from. */
static void scan_beside_library(mb_context_t *ctx) {
  Dl_info info;
  if (!dladdr((void *)mb_version, &info) || !info.dli_fname) return;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", info.dli_fname);
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  snprintf(slash, (size_t)(dir + sizeof dir - slash), "/microbench");
  scan_dir(ctx, dir, 0);
}

void mb__loader_scan(mb_context_t *ctx, const char *option_path,
                     uint32_t flags) {
  scan_path_list(ctx, option_path, NULL);
  if (flags & MB_CONTEXT_NO_DEFAULT_BACKENDS) return;
  scan_path_list(ctx, getenv("MB_BACKEND_PATH"), "MB_BACKEND_PATH");
  scan_beside_library(ctx);
  scan_dir(ctx, MB_MODULE_INSTALL_DIR_STR, 0);
}

void mb__loader_unload(mb_context_t *ctx) {
  for (size_t i = 0; i < ctx->num_backends; i++) {
    mb__backend_t *b = &ctx->backends[i];
    if (b->state && b->vt->fini) b->vt->fini(b->state);
    if (b->dl) dlclose(b->dl);
    free((void *)b->vt); /* copy_tables' block */
    free(b->listed);
    free(b->name);
    free(b->path);
    free(b->reason);
  }
  free(ctx->backends);
  ctx->backends = NULL;
  ctx->num_backends = 0;
}
