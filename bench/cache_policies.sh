#!/bin/sh
# Cold vs hot vs rotate for a memory-bound op (copy f32) at operand sizes
# around the L2 (1 MiB per core on the reference machine, 2 MiB for the two
# cores the copy runs on) and the last-level cache (32 MiB): mbench runs for
# every size and policy, then a markdown table of median time and GB/s
# (docs/results/harness.md, table d).
#
# Memory bandwidth on a shared VM drifts with the neighbours' traffic, so
# the whole sweep runs ROUNDS times (policies interleaved within a round);
# the table gives the median of the rounds' medians and their range.
#
#   bench/cache_policies.sh [MBENCH] [OUTDIR]
#     MBENCH  the mbench binary (default: $MBENCH, else mbench on PATH)
#     OUTDIR  where the result files go (default: a fresh temporary folder)
#   $ROUNDS: sweeps (default 3). $TABLE_ONLY=1: run nothing, print the
#   table from the result files already in OUTDIR. $MBENCH_ARGS, when set, is added to every
#   mbench command line (e.g. "--min-time 0.1" for a quick look); the
#   published table uses none.
set -eu

mbench=${1:-${MBENCH:-mbench}}
out=${2:-$(mktemp -d)}
rounds=${ROUNDS:-3}
mkdir -p "$out"

# label and MxN shape of each operand (f32, 4 bytes an element); copy
# touches two operands, X and Y, so the footprint per run is twice this.
sizes="256KiB:256x256 1MiB:512x512 4MiB:1024x1024 16MiB:2048x2048 128MiB:4096x8192"

round=1
[ "${TABLE_ONLY:-0}" = 1 ] && round=$((rounds + 1))
while [ "$round" -le "$rounds" ]; do
  for s in $sizes; do
    label=${s%%:*}
    shape=${s#*:}
    for cache in cold hot rotate; do
      echo "round $round: copy f32 $shape ($label per operand), --cache $cache" >&2
      # shellcheck disable=SC2086 # MBENCH_ARGS is a list of options
      "$mbench" run --op copy --shape "$shape" --dtype f32 --backend cpu \
        --cache "$cache" ${MBENCH_ARGS:-} \
        -o "$out/copy_${label}_${cache}_r$round.json" >/dev/null
    done
  done
  round=$((round + 1))
done

# shellcheck disable=SC2086 # one argument per size
python3 - "$out" "$rounds" $sizes <<'PY'
import json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
sizes = [s.split(":")[0] for s in sys.argv[3:]]


def fmt(ns):
    return f"{ns / 1e3:.2f} us" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


print(f"| per operand | cache | median ({rounds} rounds) | GB/s | range of the "
      "rounds' medians | rel. stdev | batch | samples | rotate copies "
      "(footprint) | warnings |")
print("|---|---|---:|---:|---|---:|---|---:|---|---|")
for label in sizes:
    for cache in ("cold", "hot", "rotate"):
        runs = []
        for r in range(1, rounds + 1):
            with open(f"{out}/copy_{label}_{cache}_r{r}.json") as f:
                runs.append(json.load(f)["results"][0])
        bad = [r for r in runs if r["status"] != "ok"]
        if bad:
            print(f"| {label} | {cache} | {bad[0]['status']}: "
                  f"{bad[0]['reason']} | | | | | | | |")
            continue
        med = [r["stats"]["median_ns"] for r in runs]
        m = statistics.median(med)
        gbps = runs[0]["derived"]["bytes"] / m
        rel = statistics.median(r["stats"]["rel_stdev"] for r in runs)
        batches = sorted({r["stats"]["batch"] for r in runs})
        count = sum(r["stats"]["count"] for r in runs)
        rot = runs[0].get("rotate") or {}
        rot_text = (f"{rot['copies']} ({rot['footprint_bytes'] / 2**20:.0f} MiB)"
                    if rot.get("copies") else "")
        # The same warning differs between rounds only in its figures.
        warns = [r["warning"] for r in runs if r.get("warning")]
        warn = f"{warns[0]} ({len(warns)} of {rounds} rounds)" if warns else ""
        print(f"| {label} | {cache} | {fmt(m)} | {gbps:.1f} | {fmt(min(med))}"
              f" – {fmt(max(med))} | {100 * rel:.1f} % "
              f"| {', '.join(map(str, batches))} | {count} | {rot_text} "
              f"| {warn} |")
PY
echo "result files: $out" >&2
