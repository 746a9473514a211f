#!/bin/sh
# Builds with warnings as errors and runs every test; then most of them
# again under AddressSanitizer + UndefinedBehaviorSanitizer (which, and why
# not the rest: the sanitizer stage below).
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

# The CUDA backend builds wherever nvcc is (it needs no GPU): demand it then,
# so a broken CUDA build fails CI instead of being silently left out. Its
# device tests skip visibly (ctest "Skipped") without a GPU.
cuda=AUTO
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda=ON
else
  echo "test: no nvcc here: the CUDA backend is not built" >&2
fi

# The same for HIP: the module builds wherever hipcc is (.ci/setup.sh
# installs Debian's); its device tests skip visibly without an AMD GPU.
hip=AUTO
if command -v hipcc >/dev/null 2>&1; then
  hip=ON
else
  echo "test: no hipcc here: the HIP backend is not built" >&2
fi

# The plain build compiles the HIP kernels for the four default offload
# targets (backends/hip/CMakeLists.txt): both wavefront sizes (GCN/CDNA's
# 64, RDNA's 32) and the families ROCm runs on. `all` (25 targets) costs
# an estimated 6 minutes more on a 2-core machine (docs/hip.md, with 15
# kernel files; there are 21 now); the 21 others compile the same source,
# and `-DMB_HIP_ARCHITECTURES=all` still builds them.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMB_WERROR=ON \
  -DMB_WITH_CUDA="$cuda" -DMB_WITH_HIP="$hip"
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure)

# The sanitizer build: the same C and C++ (the GPU modules' host files
# among them; their device code for one target each, the same code the
# plain build compiled). Every C test, the hostile-input battery
# (robustness_smoke: the CLI's error paths), the Python package, and the
# CLI files that are mostly reading and writing (cli_results, cli_report,
# cli_trace, cli_list, cli_docs, cli_completion); not what only repeats,
# several times slower, what the plain run checked by measuring: the CLI
# files that run many benchmarks (cli, cli_config, cli_console,
# cli_isolate, cli_models, cli_torchao: 9 of the plain run's 25 minutes
# on a 2-core VM), the MPI jobs end to end (the communicator, lib/comm.c
# and lib/mpi/, is sanitized under mpirun by test_comm_mpi_*), the browser
# test (the report writer: test_report_html, cli_report), and
# test_roof_cache (3 minutes of measuring the roofs again and again under
# ASan; every other test reads the roof caches through the same code), and
# cpu_no_avx512 (conformance_cpu again on the portable loops, which the
# kernel tests compare with the AVX-512 ones under ASan), and cli_threads
# (it compares the sizes oneDNN, uninstrumented, books; and its one-core
# run has LeakSanitizer report the ~400 bytes libgomp keeps for a
# one-thread team, which any mbench run bound to one core shows).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMB_WERROR=ON \
  -DMB_SANITIZE=ON -DMB_WITH_CUDA="$cuda" -DMB_WITH_HIP="$hip" \
  -DMB_CUDA_ARCHITECTURES=90a -DMB_HIP_ARCHITECTURES=gfx90a
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure \
  -E '^(cli|cli_config|cli_console|cli_isolate|cli_models|cli_torchao|mbench_mpi|mpi_collectives|mpi_config_collectives|report_browser|test_roof_cache|cpu_no_avx512|cli_threads)$')
# The portable build: no oneDNN, so the C kernels are the CPU backend's only
# ones; the module's own test and the conformance suite must pass on them.
cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DMB_WERROR=ON \
  -DMB_WITH_ONEDNN=OFF -DMB_WITH_CUDA=OFF -DMB_WITH_HIP=OFF
cmake --build build-portable -j"$jobs"
(cd build-portable && ctest --output-on-failure -R 'test_cpu_module|test_cpu_quant|test_cpu_gemm_wo|conformance|test_bench')
# The config readers under libFuzzer (clang, ASan+UBSan), 30 s from the
# seed corpus (tests/fuzz); a crash leaves its input in
# build-fuzz/tests/fuzz/artifacts/.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMB_FUZZ=ON -DMB_WERROR=ON \
  -DMB_WITH_CUDA=OFF -DMB_WITH_HIP=OFF -DMB_WITH_ONEDNN=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build-fuzz -j"$jobs" --target fuzz_config
(cd build-fuzz && ctest -R fuzz_config_smoke --output-on-failure)
# The CPU module compiles with clang as well, warnings as errors (its
# CPU-feature test once used a name only GCC's __builtin_cpu_supports
# takes: a hard error; and clang warns where GCC does not).
cmake --build build-fuzz -j"$jobs" --target mb_backend_cpu
echo "test: all tests passed, most also under ASan+UBSan, the CPU kernels" \
  "without oneDNN, the config readers under the fuzzer, the CPU module" \
  "built with clang"
