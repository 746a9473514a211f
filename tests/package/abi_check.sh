#!/bin/sh
# ABI hygiene: the symbols libmicrobench exports (nm -D) must be exactly the
# checked-in list, all functions named mb_*, each declared MB_API in a public
# header. A change to the list is a change to the ABI: review it, then
# regenerate the list with
#   sh tests/package/abi_check.sh nm build/lib/libmicrobench.so \
#     tests/package/libmicrobench.symbols include --update
set -eu
nm=$1 lib=$2 list=$3 inc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nm" -D --defined-only "$lib" | awk '{print $2, $3}' >"$tmp/all"
# Data symbols would be global state reachable from outside; anything not
# mb_* leaks an internal (visibility rules broken).
if awk '$1 != "T" || $2 !~ /^mb_/' "$tmp/all" | grep . >"$tmp/odd"; then
  echo "abi: exported symbols that are not mb_* functions:" >&2
  sed 's/^/  /' "$tmp/odd" >&2
  exit 1
fi
awk '{print $2}' "$tmp/all" | sort >"$tmp/exported"

if [ "${5:-}" = "--update" ]; then
  cp "$tmp/exported" "$list"
  echo "abi: wrote $(wc -l <"$list") symbols to $list"
  exit 0
fi

status=0
if ! diff -u "$list" "$tmp/exported" >"$tmp/diff"; then
  echo "abi: the exported symbols differ from $list" \
    "(+ exported now, - in the list):" >&2
  grep '^[+-]mb_' "$tmp/diff" | sed 's/^/  /' >&2
  echo "abi: if the change is intended, regenerate the list (see the top of" \
    "$0)" >&2
  status=1
fi

# Every MB_API declaration is exported and every export is declared.
grep -rhoE 'MB_API[^;(]*[ *](mb_[a-z0-9_]+)\(' "$inc" |
  sed -E 's/.*[ *](mb_[a-z0-9_]+)\($/\1/' | sort -u >"$tmp/declared"
if ! diff -u "$tmp/declared" "$tmp/exported" >"$tmp/diff2"; then
  echo "abi: declared (MB_API, -) and exported (+) differ:" >&2
  grep '^[+-]mb_' "$tmp/diff2" | sed 's/^/  /' >&2
  status=1
fi
[ $status = 0 ] && echo "abi: $(wc -l <"$list") exported symbols," \
  "all declared MB_API, match $list"
exit $status
