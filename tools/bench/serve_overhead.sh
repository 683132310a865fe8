#!/usr/bin/env bash
# What `limpwatch serve` under 100 concurrent scrapers costs the traced
# servers, measured in one run: 4 traced test-bed servers on loopback
# (analyzer on) and one `limpwatch serve` reading their segments; each
# round runs the same postmark load twice, once with no scraper and once
# with CLIENTS scrapers (serve_scrape_load, each on a kept-alive connection,
# all scraping /metrics at once every INTERVAL seconds; 0: back to back, a
# stress far beyond any Prometheus), in alternating order, and compares the
# servers' CPU time over the load (every thread's run time,
# /proc/PID/task/*/schedstat). serve only maps the segments read-only and
# copies them under their sequence locks, so the servers should not pay for
# it; on a 2-core machine the scrapers and serve still compete with them for
# the CPUs, which shows in the elapsed time rather than in the servers' CPU
# time for the same work. The verdict is the median of the per-round ratios
# (scraped / quiet).
# Usage: serve_overhead.sh BUILD_DIR [ROUNDS] [FILES] [CLIENTS] [INTERVAL]
set -euo pipefail
source "$(dirname "$0")/overhead_stats.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: serve_overhead.sh BUILD_DIR [ROUNDS] [FILES] [CLIENTS] [INTERVAL]}
rounds=${2:-5}
files=${3:-500}
clients=${4:-100}
interval=${5:-1}
transactions_per_file=3
cmake --build "$build" --target limpwatch-testbed limpwatch_cli serve_scrape_load >/dev/null
testbed=$build/tools/testbed/limpwatch-testbed
client=$build/tools/testbed/limpwatch-testbed-client
limpwatch=$build/tools/limpwatch/limpwatch
load=$build/tools/bench/serve_scrape_load
base=$(mktemp -d /var/tmp/limpwatch-serve-overhead-XXXXXX)
cluster=$base/cluster
prefix="srv$$-"
serve_pid=""
load_pid=""
cleanup() {
  [[ -n $load_pid ]] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
  [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  "$testbed" stop --dir "$cluster" --remove >/dev/null 2>&1 || true
  rm -rf "$base"
}
trap cleanup EXIT

LIMPWATCH_ANALYZE=1 LIMPWATCH_QUIET=1 LIMPWATCH_MANIFEST="$root/tools/testbed/testbed.manifest" \
  "$testbed" start --dir "$cluster" --servers 4 --base-port 0 --name-prefix "$prefix" >"$base/start.json"
server_pids() { grep -o '"pid":[0-9]*' "$base/start.json" | cut -d: -f2; }
"$limpwatch" serve --listen 127.0.0.1:0 >"$base/serve.out" &
serve_pid=$!
for _ in $(seq 50); do grep -qs http "$base/serve.out" && break; sleep 0.1; done
port=$(grep -o '127\.0\.0\.1:[0-9]*' "$base/serve.out" | cut -d: -f2)
[[ -n $port ]] || { echo "serve_overhead: limpwatch serve did not start" >&2; exit 1; }

# shellcheck source=servers_cpu.sh
source "$(dirname "${BASH_SOURCE[0]}")/servers_cpu.sh"
serve_cpu_ns() { local ns; read -r ns _ <"/proc/$serve_pid/schedstat"; echo "$ns"; }
workload() {  # [files], then the seconds it took
  local count=${1:-$files}
  LIMPWATCH_DISABLE=1 "$client" --config "$cluster/fs.conf" postmark --files "$count" \
    --transactions $((count * transactions_per_file)) \
    | grep '"event":"done"' | grep -o '"seconds":[0-9.]*' | head -1 | cut -d: -f2
}

declare -A times cpu_times
scraped_lines=()
serve_ns=0
scraped_seconds=0
idle_serve_ns=0
idle_seconds=0
measure() {  # variant
  local before after seconds serve_before serve_after
  before=$(servers_cpu_ns)
  serve_before=$(serve_cpu_ns)
  seconds=$(workload)
  after=$(servers_cpu_ns)
  serve_after=$(serve_cpu_ns)
  times[$1]+="$seconds "
  cpu_times[$1]+="$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.4f", (a - b) / 1e9 }') "
  if [[ $1 == quiet ]]; then
    # Not scraped, serve still records every server's scores once a second
    # (the dashboard's charts): what it costs when nobody looks.
    idle_serve_ns=$((idle_serve_ns + serve_after - serve_before))
    idle_seconds=$(awk -v t="$idle_seconds" -v s="$seconds" 'BEGIN { print t + s }')
  fi
}
workload 50 >/dev/null  # past the servers' start-up
scraped() {
  "$load" --port "$port" --clients "$clients" --interval "$interval" >"$base/load.out" &
  load_pid=$!
  sleep 1  # every scraper connected
  local serve_before serve_after started ended
  serve_before=$(serve_cpu_ns)
  started=$(date +%s.%N)
  measure scraped
  serve_after=$(serve_cpu_ns)
  ended=$(date +%s.%N)
  kill -INT "$load_pid"
  wait "$load_pid" || true
  load_pid=""
  scraped_lines+=("$(cat "$base/load.out")")
  serve_ns=$((serve_ns + serve_after - serve_before))
  scraped_seconds=$(awk -v t="$scraped_seconds" -v a="$started" -v b="$ended" 'BEGIN { print t + b - a }')
}
for ((round = 1; round <= rounds; ++round)); do
  # Alternating order, so that a drift of the machine's load weighs on both.
  if ((round % 2)); then
    measure quiet
    scraped
  else
    scraped
    measure quiet
  fi
  printf '\rround %d of %d' "$round" "$rounds" >&2
done
echo >&2

printf '%d interleaved rounds, postmark %d files x %d transactions on 4 traced servers (analyzer on), %d scrapers every %s s, load %s\n' \
  "$rounds" "$files" $((files * transactions_per_file)) "$clients" "$interval" "$(cut -d' ' -f1-3 /proc/loadavg)"
print_overhead_table "server cpu" "s (med)" quiet scraped
for line in "${scraped_lines[@]}"; do echo "scrapers: $line"; done
awk -v ns="$serve_ns" -v s="$scraped_seconds" 'BEGIN {
  printf "limpwatch serve itself: %.1f ms of CPU a second while scraped\n", ns / 1e6 / s }'
awk -v ns="$idle_serve_ns" -v s="$idle_seconds" 'BEGIN {
  printf "limpwatch serve itself, not scraped (its once-a-second score recording): %.2f ms of CPU a second\n", ns / 1e6 / s }'
echo "servers cpu, scraped / quiet, per round: $(round_ratios "${cpu_times[scraped]}" "${cpu_times[quiet]}")"
r=$(median_ratio cpu_times scraped quiet)
awk -v r="$r" 'BEGIN { printf "servers cpu, scraped / quiet, median per-round ratio: %.3f\n", r }'
