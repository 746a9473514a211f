/* STREAM's scalar q (McCalpin's STREAM: scale b = q c, triad a = b + q c),
 * one constant for the ops' definitions (lib/ops/stream.c) and every
 * backend's kernels, so they cannot disagree. 3 is exact in every float
 * format the ops take. */
#ifndef MB_STREAM_H
#define MB_STREAM_H

#define MB_STREAM_Q 3.0

#endif
