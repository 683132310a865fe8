#!/usr/bin/env bash
# limpwatch's overhead on one server as it is deployed, one server per core:
# server0 of a 4-server test-bed is pinned alone to the last CPU; its three
# peers and the client share the others. Per round, the same two loads run
# against a plain cluster (limpwatch-testbed-server-plain: the same server
# code, not instrumented, not linked with liblimpwatch) and an instrumented
# one (defaults, as a new user runs it: every function traced, analyzer on,
# sampler on, recording on), in alternating order:
#   large   ddw of MIB MiB striped over the servers: server0's CPU per MiB
#   small   postmark of FILES files: server0's CPU per file operation
# What is compared is server0's CPU time (every thread's run time from
# /proc/PID/task/*/schedstat): on a CPU of its own, neither steal by the
# other processes nor their load moves it much, which wall time cannot
# say. The verdict per load is the ratio of the instrumented mean to the
# plain mean with a 95 % interval from a paired bootstrap over the rounds
# (bootstrap_ratio.py); wall time is printed beside it.
#
# The sampler. With per-CPU events (LIMPWATCH_SAMPLE_EVENTS=auto where the
# kernel allows), each traced process opens an event on every CPU that
# interrupts whatever runs there, and drops the samples of the others: the
# three peers' events would charge server0's CPU with interrupts a deployed
# server never takes. So the peers run with the sampler off
# (LIMPWATCH_SAMPLE_HZ=0) and only server0 samples, as on a node of its own.
# The plain variant runs no sampler; the two variants never run at once.
# Usage: pinned_overhead.sh BUILD_DIR [ROUNDS] [MIB] [FILES]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: pinned_overhead.sh BUILD_DIR [ROUNDS] [MIB] [FILES]}
rounds=${2:-12}
mib=${3:-256}
files=${4:-400}
transactions_per_file=3
cpus=$(nproc)
if ((cpus < 2)); then
  echo "pinned_overhead: needs 2 CPUs or more (one for the measured server alone), this machine has $cpus" >&2
  exit 1
fi
measured_cpu=$((cpus - 1))
others_cpus="0-$((cpus - 2))"
cmake --build "$build" --target limpwatch-testbed limpwatch-testbed-server-plain limpwatch_cli >/dev/null
testbed=$build/tools/testbed/limpwatch-testbed
client=$build/tools/testbed/limpwatch-testbed-client
plain_server=$build/tools/testbed/limpwatch-testbed-server-plain
base=$(mktemp -d /var/tmp/limpwatch-pinned-XXXXXX)
cluster=$base/cluster
prefix="pin$$-"
cleanup() {
  "$testbed" stop --dir "$cluster" --remove >/dev/null 2>&1 || true
  rm -rf "$base"
}
trap cleanup EXIT

# The launcher runs on the others' CPUs, so every server starts there.
run_on_others() { taskset -c "$others_cpus" "$@"; }
server0_pid() { "$testbed" status --dir "$cluster" | grep -o '"index":0,"alias":"[^"]*","pid":[0-9]*' | grep -o '[0-9]*$'; }
# servers_cpu_ns sums the threads of the processes server_pids names: here server0 alone.
server_pids() { server0_pid; }
# shellcheck source=servers_cpu.sh
source "$(dirname "${BASH_SOURCE[0]}")/servers_cpu.sh"
server0_cpu_ns() { servers_cpu_ns; }
# The run time of server0's threads by name, one "name ns" line each:
# limpwatch's own threads (limpwatch: the service thread, limpwatch-anlz: the
# analyzer, limpwatch-samp: the sample reader) and "server" for the rest.
server0_threads_ns() {
  local task name ns
  for task in /proc/"$(server0_pid)"/task/*; do
    name=$(cat "$task/comm" 2>/dev/null) || continue
    read -r ns _ <"$task/schedstat" 2>/dev/null || continue
    [[ $name == limpwatch || $name == limpwatch-anlz || $name == limpwatch-samp ]] || name=server
    echo "$name $ns"
  done | awk '{ ns[$1] += $2 } END { for (n in ns) print n, ns[n] }'
}
now_ns() { date +%s%N; }
start_cluster() {  # plain|traced
  if [[ $1 == plain ]]; then
    run_on_others "$testbed" start --dir "$cluster" --servers 4 --base-port 0 --name-prefix "$prefix" \
      --server-program "$plain_server" >/dev/null
  else
    LIMPWATCH_ANALYZE=1 LIMPWATCH_QUIET=1 LIMPWATCH_SAMPLE_HZ=0 LIMPWATCH_RECORD="$base/%n.lwtrace" \
      LIMPWATCH_MANIFEST="$root/tools/testbed/testbed.manifest" \
      run_on_others "$testbed" start --dir "$cluster" --servers 4 --base-port 0 --name-prefix "$prefix" >/dev/null
    # server0 again, with the sampler at its default, as on a node of its own.
    local pid
    pid=$(server0_pid)
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    LIMPWATCH_ANALYZE=1 LIMPWATCH_QUIET=1 LIMPWATCH_RECORD="$base/%n.lwtrace" \
      LIMPWATCH_MANIFEST="$root/tools/testbed/testbed.manifest" \
      run_on_others "$testbed" restart-server --dir "$cluster" --server 0 >/dev/null
  fi
  taskset -a -p -c "$measured_cpu" "$(server0_pid)" >/dev/null
}
stop_cluster() { "$testbed" stop --dir "$cluster" --remove >/dev/null; }
client_run() {  # the client's command and flags; prints the seconds it took
  LIMPWATCH_DISABLE=1 run_on_others "$client" --config "$cluster/fs.conf" "$@" \
    | grep '"event":"done"' | grep -o '"seconds":[0-9.]*' | head -1 | cut -d: -f2
}
declare -A cpu wall
measure() {  # variant
  start_cluster "$1"
  client_run postmark --files 50 --transactions 150 >/dev/null  # past start-up
  local before after seconds threads_before started
  threads_before=$(server0_threads_ns)
  started=$(now_ns)
  before=$(server0_cpu_ns)
  seconds=$(client_run ddw --size-mib "$mib")
  after=$(server0_cpu_ns)
  cpu[$1,large]=$(awk -v a="$after" -v b="$before" -v m="$mib" 'BEGIN { printf "%.6f", (a - b) / 1e6 / m }')
  wall[$1,large]=$seconds
  before=$(server0_cpu_ns)
  seconds=$(client_run postmark --files "$files" --transactions $((files * transactions_per_file)))
  after=$(server0_cpu_ns)
  cpu[$1,small]=$(awk -v a="$after" -v b="$before" -v n=$((files * (transactions_per_file + 2))) \
    'BEGIN { printf "%.6f", (a - b) / 1e3 / n }')
  wall[$1,small]=$seconds
  if [[ $1 == traced ]]; then  # each thread's share of one core over both loads
    awk -v elapsed=$(($(now_ns) - started)) 'NR == FNR { before[$1] = $2; next }
      { printf "threads %s %.4f\n", $1, 100 * ($2 - before[$1]) / elapsed }' \
      <(echo "$threads_before") <(server0_threads_ns) >>"$base/threads"
  fi
  stop_cluster
}
: >"$base/rounds"
: >"$base/threads"
for ((round = 1; round <= rounds; ++round)); do
  if ((round % 2)); then measure plain; measure traced; else measure traced; measure plain; fi
  for load in large small; do
    echo "$load-cpu ${cpu[plain,$load]} ${cpu[traced,$load]}" >>"$base/rounds"
    echo "$load-wall ${wall[plain,$load]} ${wall[traced,$load]}" >>"$base/rounds"
  done
  printf '\rround %d of %d' "$round" "$rounds" >&2
done
echo >&2
printf '%d interleaved rounds; server0 alone on CPU %d, its peers and the client on %s; load %s\n' \
  "$rounds" "$measured_cpu" "$others_cpus" "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "per round (plain, instrumented): large-cpu in ms per MiB, small-cpu in us per file operation, walls in s"
awk '{ rows[$1] = rows[$1] sprintf(" %s/%s", $2, $3) } END { for (m in rows) print "  " m ":" rows[m] }' "$base/rounds" | sort
echo "instrumented / plain:"
"$root/tools/bench/bootstrap_ratio.py" <"$base/rounds" | sort | sed 's/^/  /'
echo "instrumented server0's threads, % of one core while the loads ran (mean, min-max over the rounds):"
awk '{ n[$2]++; sum[$2] += $3; if (!($2 in lo) || $3 < lo[$2]) lo[$2] = $3; if ($3 > hi[$2]) hi[$2] = $3 }
  END { for (t in n) printf "  %-15s %7.3f %% (%.3f-%.3f)\n", t, sum[t] / n[t], lo[t], hi[t] }' "$base/threads" | sort
