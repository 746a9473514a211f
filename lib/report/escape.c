/* Text from files and command lines (entry names, impl names, reasons that
 * quote them) made safe to print: a name holding ESC [ 2 J must not clear
 * the user's terminal, nor a newline forge a table row. */
#include <stdio.h>

#include "microbench.h"

size_t mb_escape_controls(const char *text, char *out, size_t cap) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)text; p && *p; p++) {
    char esc[5] = {(char)*p, '\0'};
    if (*p < 0x20 || *p == 0x7f) snprintf(esc, sizeof esc, "\\x%02x", *p);
    for (const char *e = esc; *e; e++, n++)
      if (n + 1 < cap) out[n] = *e;
  }
  if (cap) out[n < cap ? n : cap - 1] = '\0';
  return n;
}
