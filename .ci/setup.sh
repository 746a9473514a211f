#!/bin/sh
# Installs everything libmicrobench needs to build and test on Debian 12.
# Idempotent; run as root (or with sudo available). clang builds the fuzz
# target; libFuzzer and clang's sanitizer runtimes are in libclang-rt-dev,
# which clang only recommends (and recommends are not installed here).
# hipcc and libamdhip64-dev (Debian's HIP 5.2) build the HIP backend module;
# no AMD GPU is needed to build it. zsh and groff let the CLI tests run the
# zsh completion and render the man page (they are skipped without).
# Open MPI (libopenmpi-dev, openmpi-bin) builds libmicrobench_mpi and runs
# its tests under mpirun. Chromium (headless) loads the HTML report in the
# browser test (tests/report); python3-pandas, for Debian's python3, lets
# ResultList.to_dataframe() be tested against real pandas.
set -eu
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates \
  libcjson-dev libyaml-dev libhwloc-dev libcmocka-dev libdnnl-dev \
  clang libclang-rt-dev libbenchmark-dev g++ \
  python3 hipcc libamdhip64-dev zsh groff-base \
  libopenmpi-dev openmpi-bin chromium python3-pandas >/dev/null
echo "setup: dependencies installed"
