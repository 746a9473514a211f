#!/bin/sh
# Builds with warnings as errors and runs every test; then does it again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
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

# The plain build compiles the HIP kernels for every offload target the
# compiler accepts (MB_HIP_ARCHITECTURES=all; the default is four,
# backends/hip/CMakeLists.txt), so a kernel that breaks on one of them fails
# here; the sanitizer build, whose device code is the same, for gfx90a
# alone.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMB_WERROR=ON \
  -DMB_WITH_CUDA="$cuda" -DMB_WITH_HIP="$hip" -DMB_HIP_ARCHITECTURES=all
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMB_WERROR=ON \
  -DMB_SANITIZE=ON -DMB_WITH_CUDA="$cuda" -DMB_WITH_HIP="$hip" \
  -DMB_HIP_ARCHITECTURES=gfx90a
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure)
# The portable build: no oneDNN, so the C kernels are the CPU backend's only
# ones; the module's own test and the conformance suite must pass on them.
cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DMB_WERROR=ON \
  -DMB_WITH_ONEDNN=OFF -DMB_WITH_CUDA=OFF -DMB_WITH_HIP=OFF
cmake --build build-portable -j"$jobs"
(cd build-portable && ctest --output-on-failure -R 'test_cpu_module|test_cpu_quant|conformance|test_bench')
# The config readers under libFuzzer (clang, ASan+UBSan), 30 s from the
# seed corpus (tests/fuzz); a crash leaves its input in
# build-fuzz/tests/fuzz/artifacts/.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMB_FUZZ=ON \
  -DMB_WITH_CUDA=OFF -DMB_WITH_HIP=OFF -DMB_WITH_ONEDNN=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build-fuzz -j"$jobs" --target fuzz_config
(cd build-fuzz && ctest -R fuzz_config_smoke --output-on-failure)
echo "test: all tests passed, also under ASan+UBSan, without oneDNN and" \
  "under the fuzzer"
