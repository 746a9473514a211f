/* CPU backend — one thread's tile of the bf16 attention kernel
 * (cpu_attention_onednn.c) as its softmax and accumulation loops
 * (cpu_attention_loops.c) see it. */
#ifndef MB_CPU_ATTENTION_TILE_H
#define MB_CPU_ATTENTION_TILE_H

#include <stdint.h>

/* Queries per block; bf16 terms of each p (p = hi + lo). */
enum { MB_ATT_AQ = 128, MB_ATT_NT = 2 };

typedef struct mb_att_tile {
  float *s;      /* AQ x kt scores, unscaled */
  uint16_t *p;   /* NT AQ x kt: P's hi rows, then its lo rows */
  float *c;      /* NT AQ x d: the partial outputs hi V, lo V */
  float *o;      /* AQ x d unnormalised outputs */
  float *m, *l;  /* AQ running max (scaled) and sum */
  int64_t kt, d; /* keys per block, head size */
  float scale;   /* 1 / sqrt(d) */
} mb_att_tile_t;

/* One key block's online softmax: row r sees keys [0, see[r]); writes P's
 * two bf16 row sets (zero past see[r]), alpha (AQ rescale factors of what
 * was accumulated) and updates m and l. */
typedef void (*mb_att_softmax_fn)(mb_att_tile_t *t, const int64_t *see,
                                  float *alpha);
/* o = alpha o + (c_hi + c_lo), row by row. */
typedef void (*mb_att_accumulate_fn)(mb_att_tile_t *t, const float *alpha);

/* The loops this CPU runs for key blocks of kt (a multiple of 16 for the
 * AVX-512 ones). */
void mb__cpu_att_loops(int64_t kt, mb_att_softmax_fn *softmax,
                       mb_att_accumulate_fn *acc);

#endif
