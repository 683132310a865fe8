#!/usr/bin/env bash
# Configures and builds limpwatch into build/ (or $LIMPWATCH_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LIMPWATCH_BUILD_DIR:-$root/build}
jobs=${LIMPWATCH_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"
