#!/usr/bin/env bash
# Selective tracing on a metadata-heavy small-file load, measured side by side:
#   plain      the workload compiled without instrumentation
#   full       -finstrument-functions, every function traced
#   selected   the same binary with `limpwatch select`'s choice in LIMPWATCH_SELECT
#   patched    selected, plus LIMPWATCH_PATCH=1 (unselected hook calls become NOPs)
#   floor      nothing selected, patched: what the runtime costs without any
#              traced function (I/O interposers, service thread, sampler)
#              plus the NOP'd hook call sites left in every function
#   rebuilt    the workload compiled again with `limpwatch select`'s GCC
#              flags, so only the chosen functions carry hooks, run with the
#              selection: the seed's proposal (instrument only the call sites
#              that matter)
# The choice comes from a profile of a full run recorded first. Rounds are
# interleaved so that a change in the machine's load hits every variant
# alike; medians, minimums and their ratios to plain are printed, of the
# elapsed time and of the working thread's CPU time (which a shared VM's
# other guests do not inflate), target: the selection <= 1.05.
# Usage: smallfile_overhead.sh BUILD_DIR [ROUNDS] [FILES] [PASSES]
# (the rebuild uses $CC, default cc)
set -euo pipefail
source "$(dirname "$0")/overhead_stats.sh"
source_file=$(dirname "$0")/smallfile_workload.c
build=${1:?usage: smallfile_overhead.sh BUILD_DIR [ROUNDS] [FILES] [PASSES]}
rounds=${2:-11}
files=${3:-1000}
passes=${4:-200}
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

# Two passes of `limpwatch select`, as an operator would do it: a profile
# with everything traced overstates the own time of a function whose short
# children were traced too (their hooks' cost lands in it), so the choice is
# refined on a second profile recorded under the first choice, with the
# unselected hook calls patched out as in the run that matters.
profile() {  # profile JSON file, then LIMPWATCH_SELECT (empty: everything)
  env LIMPWATCH_NAME="$profile_name" LIMPWATCH_KEEP=1 LIMPWATCH_QUIET=1 ${2:+LIMPWATCH_SELECT="$2" LIMPWATCH_PATCH=1} \
    "$traced" "$work/files" "$files" "$passes" >/dev/null
  "$limpwatch" dump "$profile_name" --json >"$1"
  rm -f /dev/shm/limpwatch."$profile_name".*
}
profile "$work/profile.json" ""
"$limpwatch" select "$work/profile.json" -o "$work/first-selection" --gcc-flags "$work/first-gcc-flags" | tail -2
profile "$work/refined-profile.json" "$work/first-selection"
"$limpwatch" select "$work/refined-profile.json" -o "$work/selection" --gcc-flags "$work/refined-gcc-flags" | tail -2
# The refined profile knows only the functions the first pass kept, so its
# flags exclude only those the second pass dropped: the rebuild excludes
# what either pass dropped.
excluded=$(cat "$work/first-gcc-flags" "$work/refined-gcc-flags" | sed -n 's/^-finstrument-functions-exclude-function-list=//p' |
  tr ',' '\n' | sort -u | paste -sd,)
gcc_flags=${excluded:+-finstrument-functions-exclude-function-list=$excluded}
echo "rebuild flags: ${gcc_flags:-(none)}"
rebuilt=$work/smallfile_workload_rebuilt
# The flags of the traced build (-O2 -fno-inline, limpwatch_instrument), and these.
"${CC:-cc}" -O2 -fno-inline -finstrument-functions -fno-omit-frame-pointer $gcc_flags "$source_file" -o "$rebuilt" \
  -L"$build/hooks" -llimpwatch -Wl,-rpath,"$build/hooks"
echo "hooked functions after the rebuild: $(objdump -d "$rebuilt" | grep -c 'call.*<__cyg_profile_func_enter')" \
  "call sites (everything traced: $(objdump -d "$traced" | grep -c 'call.*<__cyg_profile_func_enter'))"
for choice in first-selection selection; do
  echo "$choice: $(grep -c '^include' "$work/$choice") functions ($(tr '\n' ' ' <<<"$(grep '^include' "$work/$choice" | cut -d' ' -f2)"))"
done

printf 'exclude *\n' >"$work/nothing"

declare -A times cpu_times
run() {  # variant, then the command
  local variant=$1
  shift
  local seconds cpu_seconds
  read -r seconds cpu_seconds < <(env LIMPWATCH_QUIET=1 "$@" "$work/files" "$files" "$passes")
  times[$variant]+="$seconds "
  cpu_times[$variant]+="$cpu_seconds "
}
variants=(plain full selected patched floor rebuilt)
for ((round = 1; round <= rounds; ++round)); do
  run plain "$plain"
  run full "$traced"
  run selected env LIMPWATCH_SELECT="$work/selection" "$traced"
  run patched env LIMPWATCH_SELECT="$work/selection" LIMPWATCH_PATCH=1 "$traced"
  run floor env LIMPWATCH_SELECT="$work/nothing" LIMPWATCH_PATCH=1 "$traced"
  run rebuilt env LIMPWATCH_SELECT="$work/selection" LIMPWATCH_PATCH=1 "$rebuilt"
  printf '\rround %d of %d' "$round" "$rounds" >&2
done
echo >&2

printf '%d interleaved rounds, %d files x %d passes, load %s\n' "$rounds" "$files" "$passes" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
print_overhead_table cpu "(median)" "${variants[@]}"
# The verdict: the median of the per-round ratios of the working thread's
# CPU time, which neither the load's drift nor other guests' time inflates.
for variant in selected patched rebuilt; do
  r=$(median_ratio cpu_times "$variant" plain)
  awk -v name="$variant" -v r="$r" \
    'BEGIN { printf "%s / plain, median per-round ratio of cpu time: %.3f (target <= 1.05): %s\n", name, r, r <= 1.05 ? "met" : "NOT met" }'
done
