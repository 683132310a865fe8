#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, starts a
# 4-server test-bed on loopback with the analyzer in every server, runs a
# read workload, makes one server's disk slow (blkio throttle), and prints
# the alarm that names it, the resource, why, and the functions most
# affected. Nothing is trained: the analyzers learn the cluster's noise as
# they go (set LIMPWATCH_DEMO_TRAIN_S to train on a fault-free recording
# first, which narrows their start).
# Stops everything it started, also on Ctrl-C or failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LIMPWATCH_BUILD_DIR:-$root/build}
faulty=${LIMPWATCH_DEMO_SERVER:-2}
fault=${LIMPWATCH_DEMO_FAULT:-disk-busy}
train_seconds=${LIMPWATCH_DEMO_TRAIN_S:-0}

"$root/tools/setup.sh"
"$root/tools/build.sh"

testbed="$build/tools/testbed/limpwatch-testbed"
limpwatch="$build/tools/limpwatch/limpwatch"
work=$(mktemp -d /tmp/limpwatch-demo-XXXXXX)
client_pid=""
cleanup() {
  set +e
  if [ -n "$client_pid" ]; then kill -INT "$client_pid" 2>/dev/null; wait "$client_pid" 2>/dev/null; fi
  "$testbed" clear-all --dir "$work/cluster" >/dev/null 2>&1
  "$testbed" stop --dir "$work/cluster" >/dev/null 2>&1
  "$testbed" stop --dir "$work/training" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The first anomaly alarm raised at or after unix second $1: the fault-free
# part's alarms are counted above, not taken for the diagnosis.
first_alarm_since() {
  local since_ms=$(( $1 * 1000 )) line raised
  while IFS= read -r line; do
    raised=$(printf '%s' "$line" | grep -o '"raised_unix_ms":[0-9]*' | cut -d: -f2)
    if [ -n "$raised" ] && [ "$raised" -ge "$since_ms" ]; then
      printf '%s\n' "$line"
      return
    fi
  done < <(cat "$work"/*.alarms 2>/dev/null | grep '"kind":"anomaly"')
}

manifest="$root/tools/testbed/testbed.manifest"
# Every function traced; its request rule marks where the sampled request flows start.
export LIMPWATCH_QUIET=1 LIMPWATCH_MANIFEST="$manifest" LIMPWATCH_SELECT="$root/tools/testbed/testbed.select"

# Optional: train on a fault-free recording first, as an operator of a known
# cluster might; the calibrated rule needs none.
if [ "$train_seconds" -gt 0 ]; then
  echo "== training: a fault-free read workload, recorded for $train_seconds s"
  LIMPWATCH_ANALYZE=1 LIMPWATCH_RECORD="$work/training/%n.lwtrace" \
    "$testbed" start --dir "$work/training" --servers 4 --base-port 0 >"$work/training.log"
  LIMPWATCH_ANALYZE=0 LIMPWATCH_RECORD= "$testbed" run ddr --dir "$work/training" -- --size-mib 64 \
    --seconds "$train_seconds" >>"$work/training.log" 2>&1
  "$testbed" stop --dir "$work/training" >>"$work/training.log" 2>&1
  "$limpwatch" train "$work"/training/*.lwtrace -o "$work/thresholds" -m "$manifest" --pooled | head -n 1
  export LIMPWATCH_THRESHOLDS="$work/thresholds"
fi

export LIMPWATCH_ANALYZE=1 LIMPWATCH_ALARMS="$work/%n.alarms"
echo "== starting 4 traced servers on loopback, each with its analyzer (untrained: it learns the noise as it goes)"
"$testbed" start --dir "$work/cluster" --servers 4 --base-port 0 >"$work/start.log"
"$limpwatch" list

echo "== a read workload striped over all servers"
LIMPWATCH_ANALYZE=0 LIMPWATCH_ALARMS= "$testbed" run ddr --dir "$work/cluster" -- --size-mib 64 --seconds 150 \
  >"$work/workload.log" 2>&1 &
client_pid=$!
sleep 30
echo "== fault-free so far: $(cat "$work"/*.alarms 2>/dev/null | wc -l) alarm(s)"

echo "== injecting $fault on server$faulty"
injected=$(date +%s)
"$testbed" inject "$fault" --dir "$work/cluster" --server "$faulty" | tee "$work/inject.log" | head -n 3
start=$(date +%s)
alarm=""
while [ $(( $(date +%s) - start )) -lt 90 ]; do
  alarm=$(first_alarm_since "$injected")
  [ -n "$alarm" ] && break
  sleep 1
done
if [ -z "$alarm" ]; then
  echo "no alarm within 90 s" >&2
  exit 1
fi
echo "== alarm after $(( $(date +%s) - start )) s:"
python3 - "$alarm" <<'PY' 2>/dev/null || echo "$alarm"
import json, sys
alarm = json.loads(sys.argv[1])
print(f"  server   {alarm['server']}  (reported by {alarm['reporter']})")
print(f"  resource {alarm['resource']}")
print(f"  metrics  {', '.join(alarm['metrics'])}  evidence {alarm['score']:.4g} > threshold {alarm['threshold']:.4g}")
if alarm.get("reason"):
    print(f"  why      {alarm['reason']}")
print("  top functions:")
for function in alarm["top_functions"]:
    print(f"    {function['score']:10.2f}  {function['name']}  [{function['resource']}]")
PY
echo "== every server's analyzer agrees:"
grep -h '"kind":"anomaly"' "$work"/*.alarms |
  sed -e 's/.*"reporter":"\([^"]*\)","server":"\([^"]*\)","metrics":\[[^]]*\],"resource":"\([^"]*\)".*/  \1 says \2 limps on \3/' |
  sort -u
# Each analyzer tells its peers the alarms it holds open with its next
# summaries: a few seconds on, any one server's ring says how many agree.
sleep 3
reporter=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["reporter"])' "$alarm" 2>/dev/null || true)
if [ -n "$reporter" ]; then
  echo "== as the ring of $reporter says it (limpwatch alarms $reporter):"
  "$limpwatch" alarms "$reporter" | tail -n 1
fi
echo "== clearing the fault and stopping everything"
