#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and shows
# limpwatch watching an instrumented server live. Stops what it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LIMPWATCH_BUILD_DIR:-$root/build}
seconds=${LIMPWATCH_DEMO_SECONDS:-12}

"$root/tools/setup.sh"
"$root/tools/build.sh"

limpwatch="$build/tools/limpwatch/limpwatch"
name="demo-$$"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT INT TERM

echo "== starting an instrumented example server (4 worker threads, ${seconds} s)"
LIMPWATCH_NAME="$name" "$build/tools/example/request_loop" "$seconds" 4 &
server_pid=$!
sleep 1

echo "== limpwatch list"
"$limpwatch" list
echo
echo "== limpwatch top $name (3 refreshes)"
"$limpwatch" top "$name" -n 3 -d 1 --limit 10
echo
echo "== limpwatch dump $name (functions)"
"$limpwatch" dump "$name" | head -n 40

wait "$server_pid"
server_pid=""
echo
echo "== the server exited normally; its segment is gone:"
"$limpwatch" list
