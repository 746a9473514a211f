/* The thread-local error message: a fixed buffer per thread, so setting an
 * error never allocates (it must work when memory has run out). */
#include "error.h"

#include <stdio.h>
#include <string.h>

#define MB__ERROR_CAP 2048

static _Thread_local char g_error[MB__ERROR_CAP];

const char *mb_error_last(void) {
  return g_error;
}

void mb_error_clear(void) {
  g_error[0] = '\0';
}

void mb_error_set(const char *message) {
  if (!message) {
    g_error[0] = '\0';
    return;
  }
  /* The message may be mb_error_last() itself (a kernel re-raising). */
  size_t n = strnlen(message, sizeof g_error - 1);
  memmove(g_error, message, n);
  g_error[n] = '\0';
}

/* Formatted into a local buffer first: an argument may be mb_error_last()
 * itself ("%s; every result is kept in ...", mb_error_last()), and
 * vsnprintf onto its own source wrote an empty message (a disk-full error
 * read "writing results: ; every result ..."). */
void mb__error_setv(const char *fmt, va_list ap) {
  char text[MB__ERROR_CAP];
  vsnprintf(text, sizeof text, fmt, ap);
  memcpy(g_error, text, sizeof g_error);
}

void mb__error_set(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mb__error_setv(fmt, ap);
  va_end(ap);
}

mb_status_t mb__fail(mb_status_t status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mb__error_setv(fmt, ap);
  va_end(ap);
  return status;
}

void mb__error_prefix(const char *fmt, ...) {
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t plen = strlen(prefix);
  size_t olen = strnlen(g_error, sizeof g_error - 1);
  if (olen) { /* "prefix: old"; with no old message, the prefix alone */
    memcpy(prefix + plen, ": ", 3);
    plen += 2;
  }
  /* Shift the old message right (truncating its tail), then put the prefix
   * in front: no second buffer of the full size on the stack. */
  if (plen + olen > sizeof g_error - 1) olen = sizeof g_error - 1 - plen;
  memmove(g_error + plen, g_error, olen);
  memcpy(g_error, prefix, plen);
  g_error[plen + olen] = '\0';
}
