/* Running median with two heaps. */
#include "measure/runmed.h"

#include <math.h>
#include <stdlib.h>

#include "error.h"

/* sign +1: max-heap, -1: min-heap (compare sign * value). */
static void sift_up(double *h, size_t i, double sign) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!(sign * h[i] > sign * h[p])) break;
    double t = h[i];
    h[i] = h[p];
    h[p] = t;
    i = p;
  }
}

static void sift_down(double *h, size_t n, size_t i, double sign) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, top = i;
    if (l < n && sign * h[l] > sign * h[top]) top = l;
    if (r < n && sign * h[r] > sign * h[top]) top = r;
    if (top == i) return;
    double t = h[i];
    h[i] = h[top];
    h[top] = t;
    i = top;
  }
}

static double pop(double *h, size_t *n, double sign) {
  double v = h[0];
  h[0] = h[--*n];
  sift_down(h, *n, 0, sign);
  return v;
}

static void push(double *h, size_t *n, double v, double sign) {
  h[*n] = v;
  sift_up(h, (*n)++, sign);
}

mb_status_t mb__runmed_push(mb__runmed_t *m, double v) {
  if (m->nlo + 1 > m->cap || m->nhi + 1 > m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    double *lo = realloc(m->lo, cap * sizeof *lo);
    if (!lo) return mb__fail(MB_ERR_NO_MEMORY, "out of memory (median)");
    m->lo = lo;
    double *hi = realloc(m->hi, cap * sizeof *hi);
    if (!hi) return mb__fail(MB_ERR_NO_MEMORY, "out of memory (median)");
    m->hi = hi;
    m->cap = cap;
  }
  if (m->nlo == 0 || v <= m->lo[0])
    push(m->lo, &m->nlo, v, 1.0);
  else
    push(m->hi, &m->nhi, v, -1.0);
  /* Rebalance so lo holds the extra value of an odd count. */
  if (m->nlo > m->nhi + 1)
    push(m->hi, &m->nhi, pop(m->lo, &m->nlo, 1.0), -1.0);
  else if (m->nhi > m->nlo)
    push(m->lo, &m->nlo, pop(m->hi, &m->nhi, -1.0), 1.0);
  return MB_OK;
}

double mb__runmed_median(const mb__runmed_t *m) {
  if (m->nlo == 0) return NAN;
  return m->nlo > m->nhi ? m->lo[0] : 0.5 * (m->lo[0] + m->hi[0]);
}

size_t mb__runmed_count(const mb__runmed_t *m) {
  return m->nlo + m->nhi;
}

void mb__runmed_fini(mb__runmed_t *m) {
  free(m->lo);
  free(m->hi);
  m->lo = m->hi = NULL;
  m->nlo = m->nhi = m->cap = 0;
}
