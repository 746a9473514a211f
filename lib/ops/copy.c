/* The copies: Y[M,N] = X, any dtype, bit-exact, FLOP 0.
 *
 * copy: within the device, the memory-bandwidth op; bytes |X| + |Y| =
 * 2 MN size (read and written).
 * h2d, d2h: across the host link — X in host memory to Y on the device,
 * and X on the device to host memory (the JAX suite's host_to_device /
 * device_to_host, nccl-tests' and the OSU suite's transfer bandwidth);
 * pageable host memory unless MB_PARAM_PINNED. Bytes |X| = MN size: each
 * byte crosses the link once, and the figure is the transfer's bandwidth
 * as those suites report it. The host buffer is the kernel's (it owns the
 * pinned or pageable allocation; the core's tensors are device memory):
 * an h2d kernel stages X there untimed, a d2h kernel's collect hook brings
 * what arrived back into Y for the check.
 * d2d: X on the benchmark's device to Y's twin on a second device, the
 * peer (the kernel picks it: device (dev + 1) mod count, and records it);
 * MB_PARAM_PEER enables peer access, else the runtime stages the copy
 * through host memory. Bytes |X| = MN size, one way, as h2d's; the
 * kernel's collect hook brings the peer's buffer back into Y.
 * The device's copy bandwidth is not the transfers' roof (link_bound):
 * the link's datasheet figure is, when the kernel knows it. */
#include <math.h>
#include <stdlib.h>

#include "dtype_internal.h"
#include "ops/eltwise.h"

static const mb_dtype_t k_dtypes[] = {
    MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16, MB_DTYPE_F8E4M3, MB_DTYPE_F8E5M2,
    MB_DTYPE_I8,  MB_DTYPE_I4,   MB_DTYPE_I32, MB_DTYPE_F4E2M1};

static mb_status_t resolve_as(const mb_op_t *op, mb_op_params_t *p) {
  mb_status_t st =
      mb__elt_resolve_dtypes(op, p, k_dtypes, MB__ELT_COUNT(k_dtypes));
  if (st == MB_OK) st = mb__elt_check_numel(op, "X", mb__elt_mn(p));
  return st;
}
static mb_status_t copy_resolve(mb_op_params_t *p) {
  return resolve_as(&mb__op_copy, p);
}
static mb_status_t h2d_resolve(mb_op_params_t *p) {
  return resolve_as(&mb__op_h2d, p);
}
static mb_status_t d2h_resolve(mb_op_params_t *p) {
  return resolve_as(&mb__op_d2h, p);
}
static mb_status_t d2d_resolve(mb_op_params_t *p) {
  return resolve_as(&mb__op_d2d, p);
}

static void copy_operand(const mb_op_params_t *p, uint32_t role,
                         mb_dtype_t *dtype, uint32_t *ndim, int64_t *shape) {
  (void)role;
  mb__elt_operand_mn(p, p->dtype, dtype, ndim, shape);
}

static double copy_flop(const mb_op_params_t *p) {
  (void)p;
  return 0.0;
}
static double copy_bytes(const mb_op_params_t *p) {
  return 2.0 * mb__bytes(p->dtype, mb__elt_mn(p));
}
static double transfer_bytes(const mb_op_params_t *p) {
  return mb__bytes(p->dtype, mb__elt_mn(p));
}

typedef struct copy_ref {
  const void *x;
  mb_dtype_t dt;
} copy_ref_t;

static mb_status_t copy_ref_prepare(const mb_op_params_t *p,
                                    const void *const *host, void **state) {
  copy_ref_t *r = malloc(sizeof *r);
  if (!r) return mb__fail(MB_ERR_NO_MEMORY, "copy reference: out of memory");
  *r = (copy_ref_t){host[0], p->dtype};
  *state = r;
  return MB_OK;
}

static void copy_ref_element(const void *state, uint32_t out, size_t idx,
                             double *value, double *scale) {
  const copy_ref_t *r = state;
  (void)out;
  *value = mb__load(r->x, r->dt, idx);
  *scale = fabs(*value);
}

static void copy_ref_release(void *state) {
  free(state);
}

/* Nothing is computed: a zero allowance demands the exact value. */
static mb__tolerance_t copy_tolerance(const mb_op_params_t *p, uint32_t out) {
  (void)p;
  (void)out;
  return (mb__tolerance_t){0.0, 0.0};
}

/* What the four share: the shape, operands, dtypes and the exact
 * reference. */
#define MB__COPY_COMMON                                                        \
  .shape_syntax = "MxN", .dim_names = mb__dims_mn, .rank = 2, .num_inputs = 1, \
  .num_outputs = 1, .operand_names = mb__operands_xy, .dtypes = k_dtypes,      \
  .num_dtypes = MB__ELT_COUNT(k_dtypes), .operand = copy_operand,              \
  .flop = copy_flop, .reads_output = mb__elt_never_reads_output,               \
  .ref_cost = mb__elt_ref_cost_one, .ref_prepare = copy_ref_prepare,           \
  .ref_element = copy_ref_element, .ref_release = copy_ref_release,            \
  .tolerance = copy_tolerance

const mb_op_t mb__op_copy = {
    .name = "copy",
    .summary = "Y = X (MxN, any dtype): memory bandwidth",
    .params_doc = "",
    .resolve = copy_resolve,
    .bytes = copy_bytes,
    MB__COPY_COMMON,
};

const mb_op_t mb__op_h2d = {
    .name = "h2d",
    .summary =
        "Y = X, X in host memory (MxN, any dtype): host to device "
        "transfer bandwidth",
    .params_doc = "pinned (page-locked host memory; default pageable)",
    .param_mask = MB__P_PINNED,
    .resolve = h2d_resolve,
    .bytes = transfer_bytes,
    .link_bound = 1,
    MB__COPY_COMMON,
};

const mb_op_t mb__op_d2h = {
    .name = "d2h",
    .summary =
        "Y = X, Y in host memory (MxN, any dtype): device to host "
        "transfer bandwidth",
    .params_doc = "pinned (page-locked host memory; default pageable)",
    .param_mask = MB__P_PINNED,
    .resolve = d2h_resolve,
    .bytes = transfer_bytes,
    .link_bound = 1,
    MB__COPY_COMMON,
};

const mb_op_t mb__op_d2d = {
    .name = "d2d",
    .summary =
        "Y = X, Y on a second device (MxN, any dtype): device to device "
        "transfer bandwidth",
    .params_doc =
        "peer (peer access enabled; default: staged through host memory)",
    .param_mask = MB__P_PEER,
    .resolve = d2d_resolve,
    .bytes = transfer_bytes,
    .link_bound = 1,
    MB__COPY_COMMON,
};
