#!/bin/sh
# Rehearses here the build on a lent GPU machine, which has a compiler,
# CMake, Python and CUDA but none of the project's libraries: runs
# tests/gpu/carry_deps.sh, then in a private mount namespace hides every
# file the carried packages installed on this machine (pkg-config among
# them) behind an overlay on /usr, sources .deps/env.sh, and
# configures, builds and runs ctest as docs/gpu.md says to on the GPU
# machine. The CUDA device tests skip (no GPU here); everything else must
# pass. Not part of CI: it takes a full build (about 10 minutes on 2 cores).
#
# Usage, as root on Debian 12: sh tests/gpu/rehearse_carry.sh [build-dir]
# (default build-carry; it is deleted first, so its name must begin with
# "build", which .gitignore covers).
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-carry}
die() { echo "rehearse_carry: $*" >&2; exit 1; }
case $build in build*) ;; *) die "the build directory must begin with 'build': $build" ;; esac
case $build in */*) die "the build directory must be a name in the repository root: $build" ;; esac
[ "$(id -u)" = 0 ] || die "needs root (a mount namespace and an overlay)"
command -v unshare >/dev/null 2>&1 || die "needs unshare (util-linux)"

sh tests/gpu/carry_deps.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/rehearse_carry.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/upper" "$work/work"
# An overlay whiteout (a 0/0 character device) for every file of the
# carried packages as installed here, and of oneDNN's and Google
# Benchmark's -dev packages, which the GPU machine lacks too: the build must
# not need them. libudev stays: every image with apt has it (libapt-pkg
# links it), and the install test, which clears LD_LIBRARY_PATH, could not
# use the carried copy (.deps/fallback/ serves only images without it).
for pkg in $(sed 's/_.*//' .deps/packages | grep -vx libudev1) pkgconf \
           pkg-config libdnnl-dev libbenchmark-dev; do
  dpkg -L "$pkg" 2>/dev/null | while read -r path; do
    if [ -d "$path" ] && [ ! -L "$path" ]; then continue; fi
    if [ ! -e "$path" ] && [ ! -L "$path" ]; then continue; fi
    case $path in /usr/*) ;; *) die "$pkg installs $path, outside /usr" ;; esac
    rel=${path#/usr}
    mkdir -p "$work/upper$(dirname "$rel")"
    [ -e "$work/upper$rel" ] || mknod "$work/upper$rel" c 0 0
  done
done
echo "rehearse_carry: hiding $(find "$work/upper" -type c | wc -l) files under /usr"

# --propagation private: the overlay must never reach the rest of the
# machine, where other builds run. The script in quotes expands in the
# namespace, from its arguments.
# shellcheck disable=SC2016
unshare --mount --propagation private sh -eu -c '
  work=$1 build=$2
  mount -t overlay overlay \
    -o "lowerdir=/usr,upperdir=$work/upper,workdir=$work/work" /usr
  for gone in /usr/include/yaml.h /usr/include/hwloc.h /usr/include/cmocka.h \
              /usr/include/cjson/cJSON.h /usr/lib/x86_64-linux-gnu/libcjson.so.1; do
    if [ -e "$gone" ] && [ ! -d "$gone" ]; then
      echo "rehearse_carry: $gone is still visible" >&2; exit 1
    fi
  done
  if command -v pkg-config >/dev/null 2>&1; then
    echo "rehearse_carry: pkg-config is still on PATH" >&2; exit 1
  fi
  . .deps/env.sh
  echo "rehearse_carry: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  rm -rf "$build"
  cmake -S . -B "$build" -DMB_WERROR=ON -DMB_WITH_ONEDNN=OFF \
    -DMB_WITH_HIP=OFF -DMB_CUDA_ARCHITECTURES=90a
  # Every library CMake resolved through pkg-config is a carried one.
  if grep "^pkgcfg_lib_[^-]*:FILEPATH=" "$build/CMakeCache.txt" |
     grep -v "=$(pwd -P)/.deps/"; then
    echo "rehearse_carry: a library was found outside .deps/" >&2; exit 1
  fi
  cmake --build "$build" -j"$(nproc)"
  ldd "$build/lib/libmicrobench.so" | grep -E "cjson|yaml|hwloc|udev"
  cd "$build" && ctest --output-on-failure
' sh "$work" "$build"
echo "rehearse_carry: built and tested with the carried libraries alone"
