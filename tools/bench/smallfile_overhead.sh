#!/usr/bin/env bash
# Selective tracing on a metadata-heavy small-file load, measured side by side:
#   plain      the workload compiled without instrumentation
#   full       -finstrument-functions, every function traced
#   selected   the same binary with `limpwatch select`'s choice in LIMPWATCH_SELECT
#   patched    selected, plus LIMPWATCH_PATCH=1 (unselected hook calls become NOPs)
# The choice comes from a profile of a full run recorded first. Rounds are
# interleaved so that a change in the machine's load hits every variant
# alike; medians, minimums and their ratios to plain are printed (target:
# the selection <= 1.05). Usage: smallfile_overhead.sh BUILD_DIR [ROUNDS] [FILES] [PASSES]
set -euo pipefail
build=${1:?usage: smallfile_overhead.sh BUILD_DIR [ROUNDS] [FILES] [PASSES]}
rounds=${2:-9}
files=${3:-500}
passes=${4:-40}
plain=$build/tools/bench/smallfile_workload_plain
traced=$build/tools/bench/smallfile_workload
limpwatch=$build/tools/limpwatch/limpwatch
for program in "$plain" "$traced" "$limpwatch"; do
  [[ -x $program ]] || { echo "smallfile_overhead: $program is not built" >&2; exit 1; }
done
# On tmpfs: the file system's own time would otherwise drown the tracing cost
# in noise (and a disk-backed run only makes the relative overhead smaller).
work=$(mktemp -d /dev/shm/limpwatch-smallfile-XXXXXX)
profile_name="smallfile-profile-$$"
cleanup() {
  rm -rf "$work"
  rm -f /dev/shm/limpwatch."$profile_name".*
}
trap cleanup EXIT
mkdir "$work/files"

LIMPWATCH_NAME=$profile_name LIMPWATCH_KEEP=1 LIMPWATCH_QUIET=1 "$traced" "$work/files" "$files" "$passes" >/dev/null
"$limpwatch" dump "$profile_name" --json >"$work/profile.json"
"$limpwatch" select "$work/profile.json" -o "$work/selection" --gcc-flags "$work/gcc-flags" | tail -2
echo "selection: $(grep -c '^include' "$work/selection") functions ($(tr '\n' ' ' <<<"$(grep '^include' "$work/selection" | cut -d' ' -f2)"))"

declare -A times
run() {  # variant, then the command
  local variant=$1
  shift
  local seconds
  seconds=$(env LIMPWATCH_QUIET=1 "$@" "$work/files" "$files" "$passes")
  times[$variant]+="$seconds "
}
for ((round = 1; round <= rounds; ++round)); do
  run plain "$plain"
  run full "$traced"
  run selected env LIMPWATCH_SELECT="$work/selection" "$traced"
  run patched env LIMPWATCH_SELECT="$work/selection" LIMPWATCH_PATCH=1 "$traced"
  printf '\rround %d of %d' "$round" "$rounds" >&2
done
echo >&2

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
minimum() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | head -1; }
# The minimum is what the variant costs when nothing else on the machine
# interferes; on a shared VM single rounds vary by 2x, so it carries the verdict.
base_median=$(median "${times[plain]}")
base_minimum=$(minimum "${times[plain]}")
printf '%-9s %9s %9s %9s %9s   (%d interleaved rounds, %d files x %d passes, load %s)\n' variant median "/ plain" \
  minimum "/ plain" "$rounds" "$files" "$passes" "$(cut -d' ' -f1-3 /proc/loadavg)"
for variant in plain full selected patched; do
  m=$(median "${times[$variant]}")
  n=$(minimum "${times[$variant]}")
  printf '%-9s %9.3f %9.3f %9.3f %9.3f\n' "$variant" "$m" "$(awk -v v="$m" -v b="$base_median" 'BEGIN { print v / b }')" \
    "$n" "$(awk -v v="$n" -v b="$base_minimum" 'BEGIN { print v / b }')"
done
for variant in selected patched; do
  awk -v name="$variant" -v v="$(minimum "${times[$variant]}")" -v b="$base_minimum" \
    'BEGIN { r = v / b; printf "%s / plain = %.3f, minimum (target <= 1.05): %s\n", name, r, r <= 1.05 ? "met" : "NOT met" }'
done
