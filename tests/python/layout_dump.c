/* Prints the layout of every public struct the Python package mirrors with
 * ctypes, as the compiler lays it out:
 *
 *   struct <name> <sizeof> <alignof>
 *   field <struct>.<field> <offsetof> <sizeof>
 *
 * then the constants the package mirrors, and every op flag of
 * MB_PARAM_FLAG_LIST with its keyword and what sets it:
 *
 *   const <name> <value>
 *   flag <NAME> <key> <set_by>
 *
 * test_layout.py compares each line with the package's ctypes classes and
 * constants, so a field added, moved or resized in a header, or a flag
 * added to the list, without its mirror fails the suite instead of
 * corrupting memory or going missing from Python. */
#include <microbench.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

#define S(type) \
  printf("struct %s %zu %zu\n", #type, sizeof(type), alignof(type))
#define F(type, field)                                                  \
  printf("field %s.%s %zu %zu\n", #type, #field, offsetof(type, field), \
         sizeof(((type *)0)->field))

static void context_structs(void) {
  S(mb_context_options_t);
  F(mb_context_options_t, struct_size);
  F(mb_context_options_t, backend_path);
  F(mb_context_options_t, log_level);
  F(mb_context_options_t, log_fn);
  F(mb_context_options_t, log_user);
  F(mb_context_options_t, flags);

  S(mb_backend_info_t);
  F(mb_backend_info_t, struct_size);
  F(mb_backend_info_t, name);
  F(mb_backend_info_t, path);
  F(mb_backend_info_t, version);
  F(mb_backend_info_t, loaded);
  F(mb_backend_info_t, reason);
  F(mb_backend_info_t, device_count);

  S(mb_device_info_t);
  F(mb_device_info_t, struct_size);
  F(mb_device_info_t, backend);
  F(mb_device_info_t, index);
  F(mb_device_info_t, name);
  F(mb_device_info_t, kind);
  F(mb_device_info_t, memory_bytes);
  F(mb_device_info_t, mem_bw_bytes_per_s);
  F(mb_device_info_t, compute_units);
  F(mb_device_info_t, clock_hz);
  F(mb_device_info_t, cache_bytes);
  F(mb_device_info_t, peak_source);

  S(mb_calibration_t);
  F(mb_calibration_t, struct_size);
  F(mb_calibration_t, timer_resolution_ns);
  F(mb_calibration_t, timer_overhead_ns);
  F(mb_calibration_t, timer_readings);
  F(mb_calibration_t, flush_checked);
  F(mb_calibration_t, flush_pass);
  F(mb_calibration_t, flush_hot_ns);
  F(mb_calibration_t, flush_cold_ns);
  F(mb_calibration_t, flush_ratio);
  F(mb_calibration_t, flush_bytes);
  F(mb_calibration_t, flush_note);
  F(mb_calibration_t, copy_gbps);
  F(mb_calibration_t, copy_bytes);
  F(mb_calibration_t, copy_note);
}

static void op_structs(void) {
  S(mb_scaling_t);
  F(mb_scaling_t, mode);
  F(mb_scaling_t, block);

  S(mb_op_params_t);
  F(mb_op_params_t, struct_size);
  F(mb_op_params_t, ndim);
  F(mb_op_params_t, shape);
  F(mb_op_params_t, dtype);
  F(mb_op_params_t, dtype_b);
  F(mb_op_params_t, dtype_out);
  F(mb_op_params_t, dtype_acc);
  F(mb_op_params_t, alpha);
  F(mb_op_params_t, beta);
  F(mb_op_params_t, flags);
  F(mb_op_params_t, scale_a);
  F(mb_op_params_t, scale_b);
  F(mb_op_params_t, dtype_q);
  F(mb_op_params_t, scale);
  F(mb_op_params_t, activation);
  F(mb_op_params_t, act_alpha);
  F(mb_op_params_t, eps);
  F(mb_op_params_t, recipe);
  F(mb_op_params_t, dtype_scale);
  F(mb_op_params_t, kv_heads);
  F(mb_op_params_t, reduce_op);
  F(mb_op_params_t, root);
  F(mb_op_params_t, ranks);
  F(mb_op_params_t, rank);

  S(mb_kernel_args_t);
  F(mb_kernel_args_t, struct_size);
  F(mb_kernel_args_t, op);
  F(mb_kernel_args_t, params);
  F(mb_kernel_args_t, inputs);
  F(mb_kernel_args_t, num_inputs);
  F(mb_kernel_args_t, outputs);
  F(mb_kernel_args_t, num_outputs);

  S(mb_kernel_desc_t);
  F(mb_kernel_desc_t, struct_size);
  F(mb_kernel_desc_t, op);
  F(mb_kernel_desc_t, name);
  F(mb_kernel_desc_t, backend);
  F(mb_kernel_desc_t, dtype);
  F(mb_kernel_desc_t, dtype_out);
  F(mb_kernel_desc_t, setup);
  F(mb_kernel_desc_t, run);
  F(mb_kernel_desc_t, teardown);
  F(mb_kernel_desc_t, user);

  S(mb_kernel_info_t);
  F(mb_kernel_info_t, struct_size);
  F(mb_kernel_info_t, op);
  F(mb_kernel_info_t, name);
  F(mb_kernel_info_t, backend);
  F(mb_kernel_info_t, dtype);
  F(mb_kernel_info_t, dtype_out);
  F(mb_kernel_info_t, user);
}

static void bench_structs(void) {
  S(mb_bench_spec_t);
  F(mb_bench_spec_t, struct_size);
  F(mb_bench_spec_t, op);
  F(mb_bench_spec_t, params);
  F(mb_bench_spec_t, backend);
  F(mb_bench_spec_t, device);
  F(mb_bench_spec_t, impl);
  F(mb_bench_spec_t, cache);
  F(mb_bench_spec_t, criterion);
  F(mb_bench_spec_t, min_samples);
  F(mb_bench_spec_t, samples);
  F(mb_bench_spec_t, min_time_s);
  F(mb_bench_spec_t, max_noise);
  F(mb_bench_spec_t, timeout_s);
  F(mb_bench_spec_t, warmup_s);
  F(mb_bench_spec_t, warmup_runs);
  F(mb_bench_spec_t, batch);
  F(mb_bench_spec_t, seed);
  F(mb_bench_spec_t, flags);
  F(mb_bench_spec_t, repetitions);

  S(mb_result_info_t);
  F(mb_result_info_t, struct_size);
  F(mb_result_info_t, status);
  F(mb_result_info_t, reason);
  F(mb_result_info_t, op);
  F(mb_result_info_t, backend);
  F(mb_result_info_t, device);
  F(mb_result_info_t, device_index);
  F(mb_result_info_t, impl);
  F(mb_result_info_t, cache);
  F(mb_result_info_t, params);
  F(mb_result_info_t, seed);
  F(mb_result_info_t, emulated);
  F(mb_result_info_t, alias);
  F(mb_result_info_t, rotate_copies);
  F(mb_result_info_t, footprint_bytes);
  F(mb_result_info_t, warning);
  F(mb_result_info_t, timer);
  F(mb_result_info_t, name);
  F(mb_result_info_t, recipe);
  F(mb_result_info_t, model);
  F(mb_result_info_t, mode);
  F(mb_result_info_t, shape_name);
  F(mb_result_info_t, speedup_vs_baseline);
  F(mb_result_info_t, peak_memory_bytes);
  F(mb_result_info_t, flush);

  S(mb_correctness_t);
  F(mb_correctness_t, struct_size);
  F(mb_correctness_t, checked);
  F(mb_correctness_t, pass);
  F(mb_correctness_t, max_abs_err);
  F(mb_correctness_t, max_rel_err);
  F(mb_correctness_t, max_err_ratio);
  F(mb_correctness_t, sqnr_db);
  F(mb_correctness_t, tolerance);
  F(mb_correctness_t, elements_checked);
  F(mb_correctness_t, elements_total);
  F(mb_correctness_t, runs_checked);
  F(mb_correctness_t, sample_seed);

  S(mb_stats_t);
  F(mb_stats_t, struct_size);
  F(mb_stats_t, count);
  F(mb_stats_t, batch);
  F(mb_stats_t, min);
  F(mb_stats_t, max);
  F(mb_stats_t, mean);
  F(mb_stats_t, median);
  F(mb_stats_t, stdev);
  F(mb_stats_t, rel_stdev);
  F(mb_stats_t, p10);
  F(mb_stats_t, p25);
  F(mb_stats_t, p75);
  F(mb_stats_t, p90);
  F(mb_stats_t, p99);
  F(mb_stats_t, iqr);
  F(mb_stats_t, measured_ns);
  F(mb_stats_t, wall_s);
  F(mb_stats_t, warmup_runs);
  F(mb_stats_t, stop_reason);
  F(mb_stats_t, throttled);
  F(mb_stats_t, interfered);
  F(mb_stats_t, timer_resolution_ns);
  F(mb_stats_t, timer_overhead_ns);
  F(mb_stats_t, repetitions);

  S(mb_derived_t);
  F(mb_derived_t, struct_size);
  F(mb_derived_t, flop);
  F(mb_derived_t, bytes);
  F(mb_derived_t, intensity);
  F(mb_derived_t, tflops);
  F(mb_derived_t, gbps);
  F(mb_derived_t, peak_flops);
  F(mb_derived_t, pct_peak);
  F(mb_derived_t, bandwidth_gbps);
  F(mb_derived_t, roof_ns);
  F(mb_derived_t, pct_roof);
  F(mb_derived_t, bound);

  S(mb_accuracy_t);
  F(mb_accuracy_t, struct_size);
  F(mb_accuracy_t, checked);
  F(mb_accuracy_t, pass);
  F(mb_accuracy_t, sqnr_db);
  F(mb_accuracy_t, rel_err);
  F(mb_accuracy_t, max_abs_err);
  F(mb_accuracy_t, max_rel_err);
  F(mb_accuracy_t, min_sqnr_db);
  F(mb_accuracy_t, elements_checked);
}

static void plan_report_structs(void) {
  S(mb_plan_options_t);
  F(mb_plan_options_t, struct_size);
  F(mb_plan_options_t, backend);
  F(mb_plan_options_t, filter);
  F(mb_plan_options_t, max_flop);
  F(mb_plan_options_t, timing);
  F(mb_plan_options_t, timing_fields);

  S(mb_plan_entry_t);
  F(mb_plan_entry_t, struct_size);
  F(mb_plan_entry_t, name);
  F(mb_plan_entry_t, group);
  F(mb_plan_entry_t, op);
  F(mb_plan_entry_t, model);
  F(mb_plan_entry_t, recipe);
  F(mb_plan_entry_t, mode);
  F(mb_plan_entry_t, shape_name);
  F(mb_plan_entry_t, device_request);
  F(mb_plan_entry_t, skip_reason);
  F(mb_plan_entry_t, csv_path);
  F(mb_plan_entry_t, params);
  F(mb_plan_entry_t, spec);
  F(mb_plan_entry_t, flop);
  F(mb_plan_entry_t, bytes);
  F(mb_plan_entry_t, baseline);

  S(mb_report_options_t);
  F(mb_report_options_t, struct_size);
  F(mb_report_options_t, format);
  F(mb_report_options_t, path);
  F(mb_report_options_t, stream);
  F(mb_report_options_t, argc);
  F(mb_report_options_t, argv);
  F(mb_report_options_t, columns);
  F(mb_report_options_t, width);

  S(mb_compare_options_t);
  F(mb_compare_options_t, struct_size);
  F(mb_compare_options_t, threshold_pct);
  F(mb_compare_options_t, match_problem);
  F(mb_compare_options_t, alpha);

  S(mb_report_html_options_t);
  F(mb_report_html_options_t, struct_size);
  F(mb_report_html_options_t, title);
  F(mb_report_html_options_t, plot);
  F(mb_report_html_options_t, compare);
}

#define C(name) printf("const %s %lld\n", #name, (long long)(name))

static void constants(void) {
#define FLAG(NAME, group, key, result, inverted, name, label, set_by, ...) \
  C(MB_PARAM_##NAME);                                                      \
  printf("flag %s %s %s\n", #NAME, key, #set_by);
  MB_PARAM_FLAG_LIST(FLAG)
#undef FLAG
  C(MB_TIMING_CRITERION);
  C(MB_TIMING_SAMPLES);
  C(MB_TIMING_MIN_SAMPLES);
  C(MB_TIMING_MIN_TIME);
  C(MB_TIMING_MAX_NOISE);
  C(MB_TIMING_TIMEOUT);
  C(MB_TIMING_WARMUP);
  C(MB_TIMING_WARMUP_RUNS);
  C(MB_TIMING_REPETITIONS);
}

int main(void) {
  context_structs();
  op_structs();
  bench_structs();
  plan_report_structs();
  constants();
  return 0;
}
