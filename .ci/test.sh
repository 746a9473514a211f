#!/bin/sh
# Builds with warnings as errors and runs every test; then does it again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMB_WERROR=ON
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMB_WERROR=ON \
  -DMB_SANITIZE=ON
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure)
# The portable build: no oneDNN, so the C kernels are the CPU backend's only
# ones; the module's own test and the conformance suite must pass on them.
cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DMB_WERROR=ON \
  -DMB_WITH_ONEDNN=OFF
cmake --build build-portable -j"$jobs"
(cd build-portable && ctest --output-on-failure -R 'test_cpu_module|test_cpu_quant|conformance|test_bench')
echo "test: all tests passed, also under ASan+UBSan and without oneDNN"
