/* Internal: choosing the kernel that runs a benchmark. */
#ifndef MB_LIB_KERNEL_H
#define MB_LIB_KERNEL_H

#include "ops/op_internal.h"

typedef struct mb__kernel {
  const char *name;
  const mb_backend_kernel_t *bk; /* a backend's kernel, or */
  const mb__user_kernel_t *uk;   /* a user kernel, or */
  int composite; /* the core running a composite op's graph (composite.c) */
} mb__kernel_t;

/* Finds the kernel for (op, resolved params) on `dev`: `impl` if given, else
 * a user kernel, else the backend's first match. MB_ERR_NOT_FOUND: `impl`
 * names no kernel of this op on this backend (an input error).
 * MB_ERR_UNSUPPORTED: nothing can run it; `why` says what exists. */
mb_status_t mb__kernel_select(const mb_context_t *ctx, const mb_op_t *op,
                              const mb_op_params_t *p, const mb_device_t *dev,
                              const char *impl, mb__kernel_t *out, char *why,
                              size_t why_cap);

/* The backend's own first kernel that runs (op, params) on `dev`, user
 * kernels not considered (a composite's steps run backend kernels); with
 * `after` (an entry of the backend's table whose prepare declined the
 * call), the first one behind it. */
mb_status_t mb__kernel_select_backend(
    const mb_context_t *ctx, const mb_op_t *op, const mb_op_params_t *p,
    const mb_device_t *dev, const mb_backend_kernel_t *after, mb__kernel_t *out,
    char *why, size_t why_cap);

/* MB_OK when impl is NULL or names a kernel of op on backend b (user
 * kernels too when `users`), else MB_ERR_NOT_FOUND listing the ones there
 * are: an input error, whatever the params (a config's `impl:` checked
 * before anything runs, as a run's). */
mb_status_t mb__kernel_impl_known(const mb_context_t *ctx, const mb_op_t *op,
                                  const mb__backend_t *b, const char *impl,
                                  int users);

/* The most notes a kernel's notes hook is asked for. */
#define MB__MAX_KERNEL_NOTES 32

/* The link bandwidth (GB/s) a prepared transfer kernel notes
 * (MB_KERNEL_NOTE_LINK); 0 when it notes none: the link is unknown. */
double mb__kernel_link_gbps(const mb_backend_kernel_t *bk, void *kstate);

/* The peak FLOP/s of the math a prepared kernel runs (op, p) with on dev,
 * what a result's %peak compares against: 0 for an emulated kernel (its
 * speed says nothing about the format's hardware); the peak of the dtype a
 * MB_KERNEL_NOTE_MATH note names (the kernel widened its operands to it);
 * else the backend's peak_for, else the peak of p's dtype. bk NULL (a user
 * kernel): the last two. */
double mb__kernel_peak(const mb_device_t *dev, const mb_backend_kernel_t *bk,
                       void *kstate, const mb_op_t *op,
                       const mb_op_params_t *p);

#endif
