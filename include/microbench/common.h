/* libmicrobench — common definitions: export macro, version, status codes,
 * the thread-local error message, log levels.
 *
 * Threading: everything here is safe to call from any thread.
 * mb_error_last() is per thread. */
#ifndef MICROBENCH_COMMON_H
#define MICROBENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MB_BUILDING_LIBRARY)
#define MB_API __attribute__((visibility("default")))
#else
#define MB_API
#endif

/* Versioning policy: the same major version means the same ABI. Structs that
 * may grow start with `struct_size` and only ever grow at the end. */
#define MB_VERSION_MAJOR 0
#define MB_VERSION_MINOR 1
#define MB_VERSION_PATCH 0
#define MB_VERSION_NUMBER \
  (MB_VERSION_MAJOR * 10000 + MB_VERSION_MINOR * 100 + MB_VERSION_PATCH)

/* "0.1.0". Static storage. */
MB_API const char *mb_version(void);
/* MB_VERSION_NUMBER of the library actually loaded. */
MB_API unsigned mb_version_number(void);
/* The git commit the library was built from ("unknown" outside git). */
MB_API const char *mb_git_commit(void);

/* Every status code, from one table: X(NAME, value, description). */
#define MB_STATUS_MAP(X)                     \
  X(OK, 0, "success")                        \
  X(ERR_INVALID_ARG, -1, "invalid argument") \
  X(ERR_NOT_FOUND, -2, "not found")          \
  X(ERR_UNSUPPORTED, -3, "not supported")    \
  X(ERR_NO_MEMORY, -4, "out of memory")      \
  X(ERR_BACKEND, -5, "backend error")        \
  X(ERR_IO, -6, "input/output error")        \
  X(ERR_ABI, -7, "ABI version mismatch")     \
  X(ERR_PARSE, -8, "parse error")            \
  X(ERR_NO_DEVICE, -9, "no device")          \
  X(ERR_INTERNAL, -10, "internal error")     \
  X(ERR_INTERRUPTED, -11, "interrupted")

typedef enum mb_status {
#define MB__STATUS_ENUM(name, value, text) MB_##name = value,
  MB_STATUS_MAP(MB__STATUS_ENUM)
#undef MB__STATUS_ENUM
} mb_status_t;

/* Description of a status ("out of memory"); never NULL, static storage. */
MB_API const char *mb_status_str(mb_status_t status);
/* Symbolic name of a status ("MB_ERR_NO_MEMORY"); never NULL, static. */
MB_API const char *mb_status_name(mb_status_t status);

/* The message of the last failing call on this thread: what failed and where,
 * e.g. `unknown op "gemmm"; valid ops: add, gemm`. Never NULL ("" when no
 * error). Owned by the library; valid until the next library call on this
 * thread that fails or calls mb_error_clear(). */
MB_API const char *mb_error_last(void);
MB_API void mb_error_clear(void);
/* Sets this thread's message to `message` (copied, truncated to 2047 bytes;
 * NULL clears it). For user kernels: a kernel that returns an error sets
 * the message first, and the result's reason says it. Not a format. */
MB_API void mb_error_set(const char *message);

typedef enum mb_log_level {
  MB_LOG_ERROR = 0,
  MB_LOG_WARN = 1,
  MB_LOG_INFO = 2,
  MB_LOG_DEBUG = 3
} mb_log_level_t;

#ifdef __cplusplus
}
#endif
#endif
