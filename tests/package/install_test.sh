#!/bin/sh
# The installed package, used the ways docs/embedding.md and docs/python.md
# say: `cmake --install` of this build into a fresh prefix, then
#   - the C and C++ examples built against it with find_package(microbench)
#     and with pkg-config, and run;
#   - the installed mbench;
#   - the installed Python package (issue 8's done-when: a 512^3 f32 gemm
#     whose check passes) and the Python examples;
#   - the same prefix moved elsewhere: mbench and Python still work.
# Nothing points at the build tree: no MB_BACKEND_PATH, no
# MICROBENCH_LIBRARY, no LD_LIBRARY_PATH; the installed library finds its
# installed modules by itself.
#
# Environment (set by tests/package/CMakeLists.txt): SRC BUILD CMAKE CC CXX
# PKG_CONFIG PYTHON PYDIR (the Python directory, relative to the prefix).
set -eu
unset MB_BACKEND_PATH MICROBENCH_LIBRARY LD_LIBRARY_PATH PYTHONPATH || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { printf '\n== install: %s\n' "$*"; }

step "cmake --install into $prefix"
"$CMAKE" --install "$BUILD" --prefix "$prefix" >"$tmp/install.log"
for f in include/microbench.h bin/mbench share/man/man1/mbench.1 \
  share/bash-completion/completions/mbench share/zsh/site-functions/_mbench; do
  [ -e "$prefix/$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done
libdir=$(dirname "$(find "$prefix" -name 'libmicrobench.so.[0-9]' | head -1)")
for f in "$libdir/microbench/mb_backend_cpu.so" \
  "$libdir/cmake/microbench/microbenchConfig.cmake" \
  "$libdir/cmake/microbench/microbenchConfigVersion.cmake" \
  "$libdir/pkgconfig/microbench.pc" "$prefix/$PYDIR/microbench/__init__.py"; do
  [ -e "$f" ] || { echo "install: $f is missing" >&2; exit 1; }
done

step "the installed bash completion completes an op with the installed mbench"
bash --norc -c '. "$1"; COMP_WORDS=("$2" run --op ge); COMP_CWORD=3; _mbench;
  printf "%s\n" "${COMPREPLY[@]}"' sh \
  "$prefix/share/bash-completion/completions/mbench" "$prefix/bin/mbench" |
  grep -qx gemm || { echo "install: completing --op ge gave no gemm" >&2; exit 1; }

for ex in c:C:$CC cpp:CXX:$CXX; do
  dir=${ex%%:*} lang=${ex#*:} compiler=${ex#*:*:}
  lang=${lang%%:*}
  step "examples/$dir with find_package(microbench)"
  "$CMAKE" -S "$SRC/examples/$dir" -B "$tmp/build-$dir" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_"$lang"_COMPILER="$compiler" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/cfg-$dir.log"
  "$CMAKE" --build "$tmp/build-$dir" >"$tmp/build-$dir.log"
done
"$tmp/build-c/example_gemm" 128 128 128 f32
"$tmp/build-c/example_custom_kernel"
"$tmp/build-cpp/example_cpp_gemm_sweep" cpu

step "the same examples with pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc_version=$("$PKG_CONFIG" --modversion microbench)
"$prefix/bin/mbench" --version | grep -q "libmicrobench $pc_version," ||
  { echo "install: pkg-config says $pc_version, mbench says otherwise" >&2; exit 1; }
cflags=$("$PKG_CONFIG" --cflags microbench)
libs=$("$PKG_CONFIG" --libs microbench)
rpath="-Wl,-rpath,$("$PKG_CONFIG" --variable=libdir microbench)"
# shellcheck disable=SC2086 # word splitting of the flags is intended
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -o "$tmp/pc_gemm" "$SRC/examples/c/gemm.c" $cflags $libs $rpath
# shellcheck disable=SC2086
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -o "$tmp/pc_custom" "$SRC/examples/c/custom_kernel.c" $cflags $libs $rpath
# shellcheck disable=SC2086
"$CXX" -std=c++17 -O2 -Wall -Wextra -Werror -o "$tmp/pc_cpp" "$SRC/examples/cpp/gemm_sweep.cpp" $cflags $libs $rpath
"$tmp/pc_gemm" 128 128 128 bf16
"$tmp/pc_custom"
"$tmp/pc_cpp" cpu

step "the installed mbench"
"$prefix/bin/mbench" list backends | tee "$tmp/backends.txt"
grep -q "^cpu  *ready" "$tmp/backends.txt" ||
  { echo "install: the installed mbench did not load the cpu backend" >&2; exit 1; }
"$prefix/bin/mbench" run --op add --shape 256x256 --samples 3 --warmup 0 --backend cpu

step "the installed Python package (from outside the source tree)"
cd "$tmp"
PYTHONPATH="$prefix/$PYDIR" "$PYTHON" -c '
import microbench
r = microbench.run(op="gemm", shape=(512, 512, 512), dtype="f32")
print(r)
assert microbench.library_path().startswith("'"$prefix"'"), microbench.library_path()
assert r.status == "ok" and r.correctness["pass"], r.to_dict()
'
for py in "$SRC"/examples/python/*.py; do
  PYTHONPATH="$prefix/$PYDIR" "$PYTHON" "$py"
done

step "the prefix moved elsewhere"
mv "$prefix" "$tmp/moved"
"$tmp/moved/bin/mbench" run --op add --shape 256x256 --samples 3 --warmup 0 --backend cpu
PYTHONPATH="$tmp/moved/$PYDIR" "$PYTHON" -c '
import microbench
r = microbench.run(op="add", shape=(256, 256), dtype="f32", samples=3)
assert microbench.library_path().startswith("'"$tmp/moved"'"), microbench.library_path()
assert r.status == "ok" and r.correctness["pass"], r.to_dict()
print("moved prefix:", r)
'
printf '\ninstall: the installed tree works through CMake, pkg-config, mbench and Python\n'
