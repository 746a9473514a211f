/* Internal: the tables of the result JSON that both its writer
 * (result_json.c) and its reader (result_parse.c) walk, so a field added to
 * one cannot be missing from the other. */
#ifndef MB_LIB_RESULT_FIELDS_H
#define MB_LIB_RESULT_FIELDS_H

/* A field the reader accepts missing: it was added to the writer later. */
#define MB__FIELD_OPT 1u

/* The numbers of the `stats` block, in written order (stop_reason, a
 * string, follows them): X(key, mb_stats_t member, NUM | U32 | U64, flags).
 * NUM is written as null when it is not finite. */
#define MB__STATS_FIELDS(X)                                         \
  X("count", count, U64, 0)                                         \
  X("batch", batch, U32, 0)                                         \
  X("min_ns", min, NUM, 0)                                          \
  X("max_ns", max, NUM, 0)                                          \
  X("mean_ns", mean, NUM, 0)                                        \
  X("median_ns", median, NUM, 0)                                    \
  X("stdev_ns", stdev, NUM, 0)                                      \
  X("rel_stdev", rel_stdev, NUM, 0)                                 \
  X("p10_ns", p10, NUM, 0)                                          \
  X("p25_ns", p25, NUM, 0)                                          \
  X("p75_ns", p75, NUM, 0)                                          \
  X("p90_ns", p90, NUM, 0)                                          \
  X("p99_ns", p99, NUM, 0)                                          \
  X("iqr_ns", iqr, NUM, 0)                                          \
  X("measured_ns", measured_ns, NUM, 0)                             \
  X("wall_s", wall_s, NUM, 0)                                       \
  X("warmup_runs", warmup_runs, U32, 0)                             \
  X("interfered", interfered, U64, MB__FIELD_OPT)                   \
  X("timer_resolution_ns", timer_resolution_ns, NUM, MB__FIELD_OPT) \
  X("timer_overhead_ns", timer_overhead_ns, NUM, MB__FIELD_OPT)     \
  X("repetitions", repetitions, U32, MB__FIELD_OPT)

/* The `correctness` block's numbers written after "sampled" (the block's
 * older keys are listed in result_json.c and result_parse_measure.c):
 * X(key, mb_correctness_t member, U32 | U64, flags). */
#define MB__CORRECTNESS_FIELDS(X)                     \
  X("runs_checked", runs_checked, U32, MB__FIELD_OPT) \
  X("sample_seed", sample_seed, U64, MB__FIELD_OPT)

/* The per-sample telemetry series, parallel to samples_ns:
 * X(key, mb_telemetry_t member, unit, flags), written as member x unit. */
#define MB__TELEMETRY_SERIES(X)             \
  X("sm_clock_mhz", sm_clock_hz, 1e-6, 0)   \
  X("mem_clock_mhz", mem_clock_hz, 1e-6, 0) \
  X("power_w", power_w, 1.0, 0)             \
  X("temp_c", temp_c, 1.0, 0)               \
  X("clock_before_mhz", clock_before_hz, 1e-6, MB__FIELD_OPT)

/* The params block's booleans for MB_PARAM_* flags, each written when the
 * op uses it (its param_mask), in MB_PARAM_FLAG_LIST's order:
 * X(key, mask, flag, inverted, flags); inverted: the key says the flag is
 * not set ("affine" for MB_PARAM_NO_WEIGHT). The list calls its macro with
 * every column, so each row becomes `X MB__PARAM_FLAG_COLS(columns)`: X is
 * not followed by "(" while the list expands, and MB__EXPAND's rescan then
 * calls it with the five. */
#define MB__EXPAND(...) __VA_ARGS__
#define MB__PARAM_FLAG_COLS(NAME, group, key, result, inverted, ...) \
  (result, MB__P_##group, MB_PARAM_##NAME, inverted,                 \
   MB__PARAM_FLAG_OPT(MB_PARAM_##NAME))
#define MB__PARAM_FLAGS(X) MB__EXPAND(MB_PARAM_FLAG_LIST(X MB__PARAM_FLAG_COLS))
/* The first result format had the flags up to MB_PARAM_TF32; results
 * written before a later flag lack its key, so the reader accepts it
 * missing. */
#define MB__PARAM_FLAG_OPT(flag) ((flag) > MB_PARAM_TF32 ? MB__FIELD_OPT : 0u)

/* A composite's `accuracy` block (written when checked):
 * X(key, mb_accuracy_t member, NUM | U64 | BOOL, flags). */
#define MB__ACCURACY_FIELDS(X)             \
  X("pass", pass, BOOL, 0)                 \
  X("sqnr_db", sqnr_db, NUM, MB__NULL_INF) \
  X("rel_err", rel_err, NUM, 0)            \
  X("max_abs_err", max_abs_err, NUM, 0)    \
  X("max_rel_err", max_rel_err, NUM, 0)    \
  X("min_sqnr_db", min_sqnr_db, NUM, 0)    \
  X("elements_checked", elements_checked, U64, 0)

/* A step's or a phase's time alone: X(key, mb_step_time_t member, NUM |
 * U64, flags); "stop_reason" (one of the criterion's) is written after.
 * The noise fields came with the parts check: older results lack them. */
#define MB__PART_TIME_FIELDS(X)                 \
  X("median_ns", median_ns, NUM, 0)             \
  X("flop", flop, NUM, 0)                       \
  X("bytes", bytes, NUM, 0)                     \
  X("samples", samples, U64, MB__FIELD_OPT)     \
  X("rel_stdev", rel_stdev, NUM, MB__FIELD_OPT) \
  X("ci_low_ns", ci_low_ns, NUM, MB__FIELD_OPT) \
  X("ci_high_ns", ci_high_ns, NUM, MB__FIELD_OPT)

/* Each of a composite's `steps`: X(key, mb_step_time_t member, NUM | U64 |
 * STR, flags); "phase" (a name) is written after "impl". */
#define MB__STEP_FIELDS(X)  \
  X("label", label, STR, 0) \
  X("op", op, STR, 0)       \
  X("impl", impl, STR, 0)   \
  MB__PART_TIME_FIELDS(X)

/* `phases.parts`, written when the parts were compared with the whole:
 * X(key, mb_parts_check_t member, NUM | BOOL, flags); "of" after. */
#define MB__PARTS_FIELDS(X)                     \
  X("agree", agree, BOOL, 0)                    \
  X("sum_ns", sum_ns, NUM, 0)                   \
  X("sum_ci_low_ns", sum_ci_low_ns, NUM, 0)     \
  X("sum_ci_high_ns", sum_ci_high_ns, NUM, 0)   \
  X("whole_ns", whole_ns, NUM, 0)               \
  X("whole_ci_low_ns", whole_ci_low_ns, NUM, 0) \
  X("whole_ci_high_ns", whole_ci_high_ns, NUM, 0)

/* A NUM whose null stands for +inf (sqnr of an exact result), not NaN. */
#define MB__NULL_INF 2u

#endif
