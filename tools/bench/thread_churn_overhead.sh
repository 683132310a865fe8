#!/usr/bin/env bash
# What the runtime adds to a short-lived thread, measured side by side on a
# server-like program that starts one thread per request (OrangeFS's alt-aio
# does, for every bstream read and write) after 1,000 functions are known:
#   plain      the workload compiled without instrumentation
#   traced     -finstrument-functions and liblimpwatch, the sampler off
#              (its one-time kernel-symbol load would dominate a short run)
#   sampled    the same with the sampler at its default rate
# Rounds are interleaved; printed: microseconds per thread, elapsed and
# process CPU, median, minimum and the median per-round ratio to plain.
# Usage: thread_churn_overhead.sh BUILD_DIR [ROUNDS] [THREADS]
set -euo pipefail
source "$(dirname "$0")/overhead_stats.sh"
build=${1:?usage: thread_churn_overhead.sh BUILD_DIR [ROUNDS] [THREADS]}
rounds=${2:-15}
threads=${3:-5000}
plain=$build/tools/bench/thread_churn_workload_plain
traced=$build/tools/bench/thread_churn_workload
for program in "$plain" "$traced"; do
  [[ -x $program ]] || { echo "thread_churn_overhead: $program is not built" >&2; exit 1; }
done
work=$(mktemp -d /dev/shm/limpwatch-churn-XXXXXX)
trap 'rm -rf "$work"' EXIT

declare -A times cpu_times
run() {  # variant, then the command
  local variant=$1 per_thread cpu_per_thread
  shift
  read -r per_thread cpu_per_thread < <(env LIMPWATCH_QUIET=1 "$@" "$work" "$threads")
  times[$variant]+="$per_thread "
  cpu_times[$variant]+="$cpu_per_thread "
}
for ((round = 1; round <= rounds; ++round)); do
  run plain "$plain"
  run traced env LIMPWATCH_SAMPLE_HZ=0 "$traced"
  run sampled "$traced"
  printf '\rround %d of %d' "$round" "$rounds" >&2
done
echo >&2
printf '%d interleaved rounds of %d threads, us per thread, load %s\n' "$rounds" "$threads" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
print_overhead_table "CPU" "(median)" plain traced sampled
