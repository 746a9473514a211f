/* Internal: the running median of a stream, O(log n) per value (a max-heap
 * of the lower half and a min-heap of the upper half), for flagging samples
 * far above the samples before them. */
#ifndef MB_LIB_RUNMED_H
#define MB_LIB_RUNMED_H

#include <stddef.h>

#include "microbench/common.h"

typedef struct mb__runmed {
  double *lo, *hi; /* lo: max-heap, hi: min-heap; |lo| - |hi| in {0, 1} */
  size_t nlo, nhi, cap;
} mb__runmed_t;

#define MB__RUNMED_INIT \
  { NULL, NULL, 0, 0, 0 }

mb_status_t mb__runmed_push(mb__runmed_t *m, double v);
/* The median of the values pushed so far (the mean of the middle two for an
 * even count); NAN when empty. */
double mb__runmed_median(const mb__runmed_t *m);
size_t mb__runmed_count(const mb__runmed_t *m);
void mb__runmed_fini(mb__runmed_t *m);

#endif
