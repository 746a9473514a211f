#!/bin/sh
# Compiles every public header alone (C99 and C++11, pedantic, warnings as
# errors), then a file that uses every *_INIT macro under -Wextra.
# $4: MPI's include directories (";"-separated, as CMake lists them; as
# system headers: their warnings are not ours), for
# microbench/mpi.h, which includes <mpi.h>; empty: MPI was not found, and
# that header (of libmicrobench_mpi, not built then) is left out.
set -eu
inc=$1 cc=$2 cxx=$3 mpi_inc=${4:-}
mpi_flags=""
for d in $(printf '%s' "$mpi_inc" | tr ';' ' '); do
  mpi_flags="$mpi_flags -isystem $d"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for h in $(cd "$inc" && find . -name '*.h' | sort); do
  h=${h#./}
  if [ "$h" = microbench/mpi.h ] && [ -z "$mpi_inc" ]; then continue; fi
  printf '#include <%s>\n' "$h" >"$tmp/one.c"
  # shellcheck disable=SC2086 # one flag per directory
  "$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$inc" $mpi_flags \
    -fsyntax-only "$tmp/one.c"
  cp "$tmp/one.c" "$tmp/one.cpp"
  # shellcheck disable=SC2086
  "$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc" $mpi_flags \
    -fsyntax-only "$tmp/one.cpp"
  n=$((n + 1))
done
cat >"$tmp/init.c" <<'C'
#include <microbench.h>
int main(void) {
  mb_context_options_t a = MB_CONTEXT_OPTIONS_INIT;
  mb_backend_info_t b = MB_BACKEND_INFO_INIT;
  mb_device_info_t c = MB_DEVICE_INFO_INIT;
  mb_fill_t d = MB_FILL_INIT;
  mb_op_params_t e = MB_OP_PARAMS_INIT;
  mb_kernel_desc_t f = MB_KERNEL_DESC_INIT;
  mb_kernel_info_t g = MB_KERNEL_INFO_INIT;
  mb_bench_spec_t h = MB_BENCH_SPEC_INIT;
  mb_result_info_t i = MB_RESULT_INFO_INIT;
  mb_correctness_t j = MB_CORRECTNESS_INIT;
  mb_stats_t k = MB_STATS_INIT;
  mb_derived_t l = MB_DERIVED_INIT;
  mb_report_options_t m = MB_REPORT_OPTIONS_INIT;
  mb_comm_info_t n = MB_COMM_INFO_INIT;
  mb_placement_t o = MB_PLACEMENT_INIT;
  return (int)(a.struct_size + b.struct_size + c.struct_size + d.struct_size +
               e.struct_size + f.struct_size + g.struct_size + h.struct_size +
               i.struct_size + j.struct_size + k.struct_size + l.struct_size +
               m.struct_size + n.struct_size + o.struct_size) == 0;
}
C
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$inc" -fsyntax-only "$tmp/init.c"
cp "$tmp/init.c" "$tmp/init.cpp"
"$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc" -fsyntax-only "$tmp/init.cpp"
echo "headers: $n public headers compile alone (C99, C++11); *_INIT macros are complete"
