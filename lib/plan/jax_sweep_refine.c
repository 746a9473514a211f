/* The JAX suite's current-layout benchmarks' own parameters, beyond shape
 * and dtype, one refine function per benchmark (jax_sweep.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "plan/jax_sweep.h"

#define PATH_CAP MB__JAX_PATH_CAP
#define TAG_CAP MB__SWEEP_TAG_CAP
#define WHY_CAP MB__SWEEP_WHY_CAP

/* GemmParams: OUT = (A.B) * alpha [+ beta C] [* sf0 sf1], cast to
 * out_dtype; the row/column factors are our row scales of A and column
 * scales of B. */
mb_status_t mb__sweep_refine_gemm(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                  mb__plan_item_t *it, char *tag, char *why) {
  int ta, tb, sf;
  mb_op_params_t *p = &it->params;
  mb_status_t st = mb__sweep_bool(pb, c, "transpose_a", 0, &ta);
  if (st == MB_OK) st = mb__sweep_bool(pb, c, "transpose_b", 0, &tb);
  if (st == MB_OK) st = mb__sweep_bool(pb, c, "use_scaling_factors", 0, &sf);
  if (st == MB_OK) st = mb__sweep_num(pb, c, "alpha", 1.0, &p->alpha);
  if (st == MB_OK) st = mb__sweep_num(pb, c, "beta", 0.0, &p->beta);
  if (st != MB_OK) return st;
  p->flags |= (ta ? MB_PARAM_TRANS_A : 0) | (tb ? MB_PARAM_TRANS_B : 0);
  if (sf) {
    p->scale_a = (mb_scaling_t){MB_SCALE_ROW, {0, 0}};
    p->scale_b = (mb_scaling_t){MB_SCALE_COL, {0, 0}};
  }
  snprintf(tag, TAG_CAP, "%s%s%s", ta ? "/ta" : "", tb ? "/tb" : "",
           sf ? "/sf" : "");
  (void)why; /* what our gemm cannot take, its resolve says */
  return MB_OK;
}

/* hbm.py's STREAM kernels, each an op of ours of the same name: copy (y =
 * x + 1: one read, one write, our copy's bytes), scale, add and triad. */
mb_status_t mb__sweep_refine_hbm(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                 mb__plan_item_t *it, char *tag, char *why) {
  static const char *const k_kernels[] = {"copy", "scale", "add", "triad"};
  const char *kind;
  const mb_cfg_node_t *at;
  char path[PATH_CAP] = "";
  int64_t device;
  mb_status_t st =
      mb__sweep_str(pb, c, "op_type", "copy", &kind, &at, path, sizeof path);
  if (st == MB_OK) st = mb__sweep_int(pb, c, "device_id", 0, 0, &device);
  if (st != MB_OK) return st;
  it->spec.device = (uint32_t)device;
  snprintf(tag, TAG_CAP, "/%s", kind);
  (void)why; /* every op_type runs; a dtype the op refuses, its resolve says */
  for (size_t i = 0; i < sizeof k_kernels / sizeof *k_kernels; i++) {
    if (strcmp(k_kernels[i], kind)) continue;
    it->op = k_kernels[i];
    return MB_OK;
  }
  return mb__pb_error(pb, at, path,
                      "unknown op_type \"%s\"; valid: copy, scale, add, "
                      "triad",
                      kind);
}

/* host_device.py: data_size_mib MiB of f32 in rows of 128, as the suite
 * allocates them (read as the shape's second dimension). */
mb_status_t mb__sweep_refine_transfer(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                      mb__plan_item_t *it, char *tag,
                                      char *why) {
  (void)pb, (void)c, (void)why;
  it->params.shape[0] = it->params.shape[1] * (1024 * 1024 / 4 / 128);
  it->params.shape[1] = 128;
  snprintf(tag, TAG_CAP, "/MiB");
  return MB_OK;
}

/* mode fwd is our attention, mode bwd our attention_bwd (upstream's
 * jax.vjp of the forward, dQ, dK, dV; ours times the backward alone, from
 * the forward's saved O and L, as FlashAttention-2's backward is timed);
 * num_kv_heads < num_q_heads is their grouped-query attention
 * (params.kv_heads). */
mb_status_t mb__sweep_refine_attention(mb__pb_t *pb, const mb__sweep_combo_t *c,
                                       mb__plan_item_t *it, char *tag,
                                       char *why) {
  const char *mode;
  const mb_cfg_node_t *at;
  char path[PATH_CAP] = "";
  int causal;
  int64_t kv;
  mb_status_t st =
      mb__sweep_str(pb, c, "mode", "fwd", &mode, &at, path, sizeof path);
  if (st == MB_OK) st = mb__sweep_bool(pb, c, "causal", 1, &causal);
  if (st == MB_OK) st = mb__sweep_int(pb, c, "num_kv_heads", 56, 1, &kv);
  if (st != MB_OK) return st;
  if (strcmp(mode, "fwd") && strcmp(mode, "bwd"))
    return mb__pb_error(pb, at, path, "unknown mode \"%s\"; valid: fwd, bwd",
                        mode);
  if (causal) it->params.flags |= MB_PARAM_CAUSAL;
  const int64_t q_heads = it->params.shape[1];
  it->params.kv_heads = kv;
  /* The K/V heads are in the name when they differ from the query heads:
   * a sweep over num_kv_heads alone must not give two entries one name. */
  char kv_tag[32] = "";
  if (kv != q_heads) snprintf(kv_tag, sizeof kv_tag, "/kv%" PRId64, kv);
  snprintf(tag, TAG_CAP, "/%s%s%s", mode, kv_tag, causal ? "/causal" : "");
  if (!strcmp(mode, "bwd")) it->op = "attention_bwd";
  /* num_q_heads not a multiple of num_kv_heads: the op's check says so,
   * and the entry is skipped with its words (refine's caller resolves). */
  (void)why;
  return MB_OK;
}
