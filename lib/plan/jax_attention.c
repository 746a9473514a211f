/* The JAX suite's tokamax_splash_attention (Ironwood/src/
 * benchmark_attention.py, upstream 947f49d) as our attention ops
 * (attention, attention_bwd, by mode): the
 * closest equivalent, not the same kernel. Splash attention is a Pallas
 * TPU kernel whose block sizes (block_q, block_kv, block_kv_compute, the
 * QKV layouts) the suite autotunes over num_samples tries; none of them is
 * a config parameter, so there is nothing of theirs to apply here: the
 * combination (num_samples and tune_pallas_only included) is recorded in
 * the result's config.params as written, and our attention kernel picks
 * its own tiling. What the suite's parameters mean for us is one table. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "plan/jax_attention.h"
#include "plan/jax_common.h"

/* A combination's integer parameters -> our shape (B, H, Sq, Skv, D) and
 * K/V heads (grouped-query attention: kv_heads < q_heads, as splash
 * attention's K and V of fewer heads), and the one that must equal another
 * for our op to run it. */
enum { SLOT_KV_HEADS = 5, SLOT_SAME = -1 };
typedef struct attn_dim {
  const char *key;
  /* index into shape[], SLOT_KV_HEADS: params.kv_heads, or SLOT_SAME:
   * checked against `same_as` */
  int slot;
  const char *same_as;
  const char *why; /* when it differs: the skip's reason */
} attn_dim_t;

static const attn_dim_t k_dims[] = {
    {"batch_size", 0, NULL, NULL},
    {"q_heads", 1, NULL, NULL},
    {"q_seq_len", 2, NULL, NULL},
    {"kv_seq_len", 3, NULL, NULL},
    {"qk_head_dim", 4, NULL, NULL},
    {"kv_heads", SLOT_KV_HEADS, NULL, NULL},
    {"v_head_dim", SLOT_SAME, "qk_head_dim",
     "our attention op takes one head dim for Q, K and V"},
};
#define NUM_DIMS (sizeof k_dims / sizeof *k_dims)

/* The suite's modes and the ops that run them. bwd times splash's
 * backward (the dkv kernel's trace events, dQ, dK and dV from the
 * forward's residuals): our attention_bwd, from the forward's O and L.
 * combined times the forward and the backward (jax.grad of the output's
 * mean, every splash kernel's events): our attention, then attention_bwd,
 * two entries whose times add up to it (as host_device's h2d and d2h). */
static const struct {
  const char *mode;
  const char *ops[2]; /* the second NULL: one entry */
} k_modes[] = {
    {"fwd", {"attention", NULL}},
    {"bwd", {"attention_bwd", NULL}},
    {"combined", {"attention", "attention_bwd"}},
};
#define NUM_MODES (sizeof k_modes / sizeof *k_modes)

static const char *const k_params[] = {
    "batch_size", "q_seq_len",   "kv_seq_len",       "q_heads",
    "kv_heads",   "qk_head_dim", "v_head_dim",       "mode",
    "causal",     "num_samples", "tune_pallas_only", NULL};

const char *const *mb__jax_attention_params(void) {
  return k_params;
}

static size_t find(const mb_cfg_node_t *map, const char *key) {
  size_t i = 0;
  while (i < map->count && strcmp(map->keys[i], key)) i++;
  return i;
}

static mb_status_t read_int(mb__pb_t *pb, const mb__jax_combo_in_t *in,
                            const char *key, int64_t *out) {
  size_t i = find(in->map, key);
  if (i == in->map->count)
    return mb__pb_error(pb, in->map, in->path,
                        "tokamax_splash_attention needs %s; \"%s\" is missing",
                        key, key);
  char here[MB__JAX_PATH_CAP];
  mb__path_key(here, sizeof here, in->path, in->written[i]);
  return mb__pb_int(pb, in->map->items[i], here, 1, INT64_C(1) << 40, out);
}

static mb_status_t read_mode(mb__pb_t *pb, const mb__jax_combo_in_t *in,
                             const char **out, const char **ops) {
  size_t i = find(in->map, "mode");
  *out = "fwd"; /* the suite's default */
  ops[0] = k_modes[0].ops[0];
  ops[1] = k_modes[0].ops[1];
  if (i == in->map->count) return MB_OK;
  char here[MB__JAX_PATH_CAP];
  const char *mode;
  mb__path_key(here, sizeof here, in->path, in->written[i]);
  mb_status_t st = mb__pb_string(pb, in->map->items[i], here, &mode);
  for (size_t m = 0; st == MB_OK && m < NUM_MODES; m++)
    if (!strcmp(k_modes[m].mode, mode)) {
      *out = k_modes[m].mode;
      ops[0] = k_modes[m].ops[0];
      ops[1] = k_modes[m].ops[1];
      return MB_OK;
    }
  if (st != MB_OK) return st;
  return mb__pb_error(pb, in->map->items[i], here,
                      "unknown mode \"%s\"; valid: fwd, bwd, combined", mode);
}

/* causal defaults to true in the suite; its mask (CausalMask with offset
 * kv_seq_len - q_seq_len) is aligned bottom-right, as ours is. */
static mb_status_t read_causal(mb__pb_t *pb, const mb__jax_combo_in_t *in,
                               mb_op_params_t *p) {
  size_t i = find(in->map, "causal");
  int causal = 1;
  if (i < in->map->count) {
    char here[MB__JAX_PATH_CAP];
    mb__path_key(here, sizeof here, in->path, in->written[i]);
    mb_status_t st = mb__pb_bool(pb, in->map->items[i], here, &causal);
    if (st != MB_OK) return st;
  }
  if (causal) p->flags |= MB_PARAM_CAUSAL;
  return MB_OK;
}

mb_status_t mb__jax_attention_read(mb__pb_t *pb, const mb__jax_combo_in_t *in,
                                   mb_op_params_t *p, char *text, size_t cap,
                                   const char **ops, char *why,
                                   size_t why_cap) {
  int64_t v[NUM_DIMS];
  mb_status_t st = MB_OK;
  for (size_t i = 0; i < NUM_DIMS && st == MB_OK; i++)
    st = read_int(pb, in, k_dims[i].key, &v[i]);
  if (st != MB_OK) return st;
  p->ndim = 5;
  for (size_t i = 0; i < NUM_DIMS; i++) {
    if (k_dims[i].slot == SLOT_KV_HEADS) {
      p->kv_heads = v[i];
      continue;
    }
    if (k_dims[i].slot >= 0) {
      p->shape[k_dims[i].slot] = v[i];
      continue;
    }
    size_t j = 0;
    while (strcmp(k_dims[j].key, k_dims[i].same_as)) j++;
    if (v[i] != v[j] && !*why)
      snprintf(why, why_cap, "%s %" PRId64 " != %s %" PRId64 ": %s",
               k_dims[i].key, v[i], k_dims[j].key, v[j], k_dims[i].why);
  }
  /* Each K/V head serves q_heads / kv_heads query heads (the suite's
   * kernel asserts it too); our op rejects any other count. */
  if (p->shape[1] % p->kv_heads && !*why)
    snprintf(why, why_cap,
             "q_heads %" PRId64 " is not a multiple of kv_heads %" PRId64
             ": grouped-query attention shares each K/V head among "
             "q_heads / kv_heads query heads",
             p->shape[1], p->kv_heads);
  const char *mode;
  if ((st = read_mode(pb, in, &mode, ops)) != MB_OK ||
      (st = read_causal(pb, in, p)) != MB_OK)
    return st;
  /* Mode and mask are in the name: upstream sweeps both over one shape. */
  snprintf(text, cap,
           "b%" PRId64 "_h%" PRId64 "_kvh%" PRId64 "_q%" PRId64 "_kv%" PRId64
           "_d%" PRId64 "_%s%s",
           v[0], v[1], v[5], v[2], v[3], v[4], mode,
           (p->flags & MB_PARAM_CAUSAL) ? "_causal" : "");
  return MB_OK;
}
