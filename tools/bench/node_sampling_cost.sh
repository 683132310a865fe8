#!/usr/bin/env bash
# What CPU sampling costs a node as traced processes are added: 1, 2 and 4
# traced processes, each with per-CPU events of its own
# (LIMPWATCH_SAMPLE_SHARE=0) or the node's one shared set (the default),
# against the same processes unsampled, interleaved round by round.
#
#   tools/bench/node_sampling_cost.sh [BUILD_DIR] [ROUNDS] [RATE_HZ] [UNITS]
#
# Per-CPU events interrupt whatever runs on their CPU, so their cost lands
# on every task of the node, not only on the process that opened them. To
# see all of it, every CPU is kept busy by measured processes: N traced
# copies of sampler_workload's CPU loop, plus unsampled copies of the same
# loop (LIMPWATCH_SAMPLE_HZ=0) on the CPUs left over, so that no event fires
# on an idle CPU where its cost would go uncounted. Each process prints the
# CPU time (all its threads, limpwatch's reader included) of its measured
# units; the sum over the node's processes is the figure. The unsampled
# configuration ("off") runs the same processes with the sampler off.
#
# The node's sampling CPU, in % of one core, is (sum sampled / sum off - 1)
# x CPUs (every CPU busy throughout), with a paired-bootstrap 95 % interval
# over the rounds (bootstrap_ratio.py). A rate well above the default
# (1999 Hz by default here) puts the cost above this machine's noise; the
# cost is proportional to the rate, so the default's is that / 10.
set -euo pipefail

BUILD_DIR=${1:-build}
ROUNDS=${2:-6}
RATE=${3:-1999}
UNITS=${4:-60000}
WARMUP=2000
WORKLOAD="$BUILD_DIR/tools/bench/sampler_workload"
HERE=$(cd "$(dirname "$0")" && pwd)
CPUS=$(nproc)

[[ -x $WORKLOAD ]] || { echo "node_sampling_cost: $WORKLOAD not built (cmake --build $BUILD_DIR --target sampler_workload)" >&2; exit 2; }
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 2 ]] || { echo "node_sampling_cost: ROUNDS must be a whole number >= 2" >&2; exit 2; }
[[ $RATE =~ ^[0-9]+$ && $RATE -ge 1 ]] || { echo "node_sampling_cost: RATE_HZ must be a whole number >= 1" >&2; exit 2; }

RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT

# run_node TRACED VARIANT: starts TRACED sampled processes (VARIANT off, own
# or shared) and the fillers, waits for all, prints the sum of their
# measured CPU seconds.
run_node() {
  local traced=$1 variant=$2 fillers=$((CPUS > $1 ? CPUS - $1 : 0))
  local outputs=() pids=() index
  for ((index = 0; index < traced + fillers; index++)); do
    local out
    out=$(mktemp)
    outputs+=("$out")
    local environment=(LIMPWATCH_NAME="nodecost$index" LIMPWATCH_SAMPLE_EVENTS=cpu)
    if ((index >= traced)) || [[ $variant == off ]]; then
      environment+=(LIMPWATCH_SAMPLE_HZ=0)
    else
      environment+=(LIMPWATCH_SAMPLE_HZ="$RATE")
      [[ $variant == own ]] && environment+=(LIMPWATCH_SAMPLE_SHARE=0)
    fi
    env "${environment[@]}" "$WORKLOAD" "$UNITS" "$WARMUP" cpu >"$out" 2>/dev/null &
    pids+=($!)
  done
  local failed=0
  for index in "${!pids[@]}"; do wait "${pids[$index]}" || failed=1; done
  local sum
  sum=$(awk '{ total += $1 } END { printf "%.6f", total }' "${outputs[@]}")
  rm -f "${outputs[@]}"
  ((failed == 0)) || { echo "node_sampling_cost: a workload failed" >&2; exit 1; }
  echo "$sum"
}

echo "node sampling cost: $CPUS CPUs, $RATE Hz, $ROUNDS rounds, $UNITS units per process"
for ((round = 1; round <= ROUNDS; round++)); do
  for traced in 1 2 4; do
    # The order of the three configurations turns with the round.
    declare -A sum=()
    variants=(off own shared)
    for ((turn = 0; turn < 3; turn++)); do
      variant=${variants[$(((turn + round) % 3))]}
      sum[$variant]=$(run_node "$traced" "$variant")
    done
    echo "own-$traced ${sum[off]} ${sum[own]}" >>"$RESULTS"
    echo "shared-$traced ${sum[off]} ${sum[shared]}" >>"$RESULTS"
    echo "round $round, $traced traced: off ${sum[off]} s, own ${sum[own]} s, shared ${sum[shared]} s"
  done
done

echo
echo "node CPU with sampling / without (sum over the node's processes):"
python3 "$HERE/bootstrap_ratio.py" <"$RESULTS" | sort
echo
echo "the node's sampling CPU, % of one core (ratio - 1) x $CPUS, at $RATE Hz:"
python3 "$HERE/bootstrap_ratio.py" <"$RESULTS" | sort |
  awk -v cpus="$CPUS" -v rate="$RATE" '{
    gsub(/[\[\],x:]/, " "); split($0, f, " ");
    printf "  %-9s %6.2f %%  [%5.2f, %5.2f]   at 199 Hz: %5.2f %%\n", f[1], (f[2] - 1) * cpus * 100,
      (f[6] - 1) * cpus * 100, (f[7] - 1) * cpus * 100, (f[2] - 1) * cpus * 100 * 199 / rate }'
