#!/usr/bin/env bash
# limpwatch's overhead on the test-bed's metadata-heavy postmark load,
# measured side by side on 4 servers on loopback:
#   plain      limpwatch-testbed-server-plain: the same server code, not
#              instrumented, not linked with liblimpwatch
#   full       the traced server, every function traced, analyzer on
#   selected   the traced server with `limpwatch select`'s choice
#   patched    selected, plus LIMPWATCH_PATCH=1 (unselected hook calls NOPs)
# The clients are the same in every variant (LIMPWATCH_DISABLE=1), so only
# the servers differ. What is compared: the servers' CPU time over the
# workload (every thread's run time from /proc/PID/task/*/schedstat, in ns)
# and the workload's elapsed time, after a short warm-up load. Each round
# runs every variant on a fresh cluster, one after the other, so a change in
# the machine's load hits them alike; the verdict is the median of the
# per-round ratios to plain. It also prints the CPU the runtime's own threads
# (service, sampler reader, analyzer) took per server per second.
#
# Two storage set-ups:
#   disk     storage on the disk, metadata synced on every change, as PVFS
#            does: the realistic case
#   memory   storage on tmpfs (/dev/shm), no metadata sync: the servers are
#            CPU-bound, the worst case for tracing
# Usage: testbed_overhead.sh BUILD_DIR [ROUNDS] [FILES] [disk|memory]
set -euo pipefail
source "$(dirname "$0")/overhead_stats.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: testbed_overhead.sh BUILD_DIR [ROUNDS] [FILES] [disk|memory]}
rounds=${2:-7}
files=${3:-1000}
storage=${4:-disk}
transactions_per_file=3  # postmark's transactions per file created
case $storage in
  disk) base=$(mktemp -d /var/tmp/limpwatch-overhead-XXXXXX); start_flags=() ;;
  memory) base=$(mktemp -d /dev/shm/limpwatch-overhead-XXXXXX); start_flags=(--no-sync-meta) ;;
  *) echo "testbed_overhead: storage is disk or memory, not $storage" >&2; exit 2 ;;
esac
cmake --build "$build" --target limpwatch-testbed limpwatch-testbed-server-plain limpwatch_cli >/dev/null
testbed=$build/tools/testbed/limpwatch-testbed
client=$build/tools/testbed/limpwatch-testbed-client
plain_server=$build/tools/testbed/limpwatch-testbed-server-plain
limpwatch=$build/tools/limpwatch/limpwatch
cluster=$base/cluster
prefix="ovh$$-"
cleanup() {
  "$testbed" stop --dir "$cluster" --remove >/dev/null 2>&1 || true
  rm -rf "$base"
}
trap cleanup EXIT

export LIMPWATCH_ANALYZE=1 LIMPWATCH_QUIET=1 LIMPWATCH_MANIFEST="$root/tools/testbed/testbed.manifest"

start_cluster() {  # server program (empty: the traced one), then the servers' environment
  local program=$1
  shift
  env "$@" "$testbed" start --dir "$cluster" --servers 4 --base-port 0 --name-prefix "$prefix" "${start_flags[@]}" \
    ${program:+--server-program "$program"} >"$base/start.json"
}
stop_cluster() { "$testbed" stop --dir "$cluster" --remove >/dev/null; }
server_pids() { grep -o '"pid":[0-9]*' "$base/start.json" | cut -d: -f2; }
# shellcheck source=servers_cpu.sh
source "$(dirname "${BASH_SOURCE[0]}")/servers_cpu.sh"
# Run time of the runtime's own threads, by name (service "limpwatch",
# sampler reader "limpwatch-samp", analyzer "limpwatch-anlz"), in ns.
runtime_threads_ns() {
  local pid task name ns
  declare -A sums=([limpwatch]=0 [limpwatch-samp]=0 [limpwatch-anlz]=0)
  for pid in $(server_pids); do
    for task in /proc/"$pid"/task/*; do
      read -r name <"$task/comm" || continue
      [[ -v sums[$name] ]] || continue
      read -r ns _ <"$task/schedstat" && sums[$name]=$((sums[$name] + ns))
    done
  done
  echo "${sums[limpwatch]} ${sums[limpwatch-samp]} ${sums[limpwatch-anlz]}"
}
workload() {  # [files], then the seconds it took
  local count=${1:-$files}
  LIMPWATCH_DISABLE=1 "$client" --config "$cluster/fs.conf" postmark --files "$count" \
    --transactions $((count * transactions_per_file)) \
    | grep '"event":"done"' | grep -o '"seconds":[0-9.]*' | head -1 | cut -d: -f2
}

# The choice: profiles of a fully traced run, one per server, then select.
start_cluster ""
workload >/dev/null
i=0
for pid in $(server_pids); do
  "$limpwatch" dump "$pid" --json >"$base/profile$i.json"
  i=$((i + 1))
done
stop_cluster
"$limpwatch" select "$base"/profile*.json -o "$base/selection" | tail -2
echo "selection: $(grep -c '^include' "$base/selection") functions"

declare -A times cpu_times own_ns own_seconds
run() {  # variant, server program (empty: the traced one), then the servers' environment
  local variant=$1
  shift
  start_cluster "$@"
  # Past the servers' start-up, which costs once what a server running for
  # days never pays again (the first kernel sample reads /proc/kallsyms:
  # 60-85 ms of CPU), so that the rounds compare the steady state.
  workload 50 >/dev/null
  local before after seconds own_before own_after
  before=$(servers_cpu_ns)
  own_before=$(runtime_threads_ns)
  seconds=$(workload)
  own_after=$(runtime_threads_ns)
  after=$(servers_cpu_ns)
  stop_cluster
  own_ns[$variant]=$(awk -v a="$own_after" -v b="$own_before" -v s="${own_ns[$variant]:-0 0 0}" 'BEGIN {
    split(a, x); split(b, y); split(s, z); printf "%d %d %d", z[1] + x[1] - y[1], z[2] + x[2] - y[2], z[3] + x[3] - y[3] }')
  own_seconds[$variant]=$(awk -v t="${own_seconds[$variant]:-0}" -v s="$seconds" 'BEGIN { print t + s }')
  times[$variant]+="$seconds "
  cpu_times[$variant]+="$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.4f", (a - b) / 1e9 }') "
}
variants=(plain full selected patched)
for ((round = 1; round <= rounds; ++round)); do
  run plain "$plain_server"
  run full ""
  run selected "" LIMPWATCH_SELECT="$base/selection"
  run patched "" LIMPWATCH_SELECT="$base/selection" LIMPWATCH_PATCH=1
  printf '\rround %d of %d' "$round" "$rounds" >&2
done
echo >&2

printf '%d interleaved rounds, postmark %d files x %d transactions, storage %s, load %s\n' "$rounds" "$files" \
  $((files * transactions_per_file)) "$storage" "$(cut -d' ' -f1-3 /proc/loadavg)"
print_overhead_table server "cpu (med)" "${variants[@]}"
# What the runtime's own threads cost, whatever the load: CPU per server per
# second of workload, summed over the rounds. A lightly loaded server pays
# the same per second, so it weighs more in its ratio.
for variant in full selected patched; do
  awk -v name="$variant" -v ns="${own_ns[$variant]}" -v s="${own_seconds[$variant]}" 'BEGIN {
    split(ns, v); d = s * 4 * 1e6
    printf "%s: runtime threads per server, ms of CPU a second: service %.2f, sampler reader %.2f, analyzer %.2f\n",
           name, v[1] / d, v[2] / d, v[3] / d }'
done
# The verdict: the median of the per-round ratios to plain.
for variant in selected patched full; do
  target=1.05
  [[ $variant == full ]] && target=1.30
  for kind in times cpu_times; do
    label=elapsed
    [[ $kind == cpu_times ]] && label="server cpu"
    r=$(median_ratio "$kind" "$variant" plain)
    awk -v name="$variant" -v label="$label" -v r="$r" -v t="$target" \
      'BEGIN { printf "%s / plain, median per-round ratio of %s: %.3f (target <= %.2f): %s\n", name, label, r, t,
                      r <= t ? "met" : "NOT met" }'
  done
done
