#!/usr/bin/env bash
# The README's second command: installs what is missing, builds, runs the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LIMPWATCH_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "$build"
ctest --output-on-failure -j"${LIMPWATCH_JOBS:-$(nproc)}" --timeout 600
