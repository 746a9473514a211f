/* Internal: the thread-local error message behind mb_error_last(). */
#ifndef MB_LIB_ERROR_H
#define MB_LIB_ERROR_H

#include <stdarg.h>

#include "microbench/common.h"

#if defined(__GNUC__)
#define MB__FMT(f, a) __attribute__((format(printf, f, a)))
#else
#define MB__FMT(f, a)
#endif

/* Sets this thread's message and returns `status`, so a failure is one line:
 *   return mb__fail(MB_ERR_INVALID_ARG, "unknown op \"%s\"", name); */
mb_status_t mb__fail(mb_status_t status, const char *fmt, ...) MB__FMT(2, 3);
void mb__error_setv(const char *fmt, va_list ap);
void mb__error_set(const char *fmt, ...) MB__FMT(1, 2);
/* Prepends "prefix: " to the current message (adds where to what); with
 * no current message, the prefix becomes the message. */
void mb__error_prefix(const char *fmt, ...) MB__FMT(1, 2);

#endif
