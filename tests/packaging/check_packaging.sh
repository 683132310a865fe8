#!/usr/bin/env bash
# Checks that a program is traced when built the ways users build:
#   1. with the build tree's limpwatch.pc (as an autotools server would),
#   2. with find_package(limpwatch) against an installed copy,
# and that the build refuses to instrument limpwatch's own targets.
# Usage: check_packaging.sh SOURCE_DIR BUILD_DIR LIMPWATCH_CLI
set -euo pipefail
source_dir=$1
build_dir=$2
cli=$3
work=$(mktemp -d)
names=()
cleanup() {
  for name in "${names[@]}"; do rm -f /dev/shm/limpwatch."$name".*; done
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

expect_traced() {  # binary name
  local binary=$1 name=$2
  names+=("$name")
  LIMPWATCH_NAME=$name LIMPWATCH_KEEP=1 "$binary" >/dev/null || fail "$binary did not run"
  local dump
  dump=$("$cli" dump "$name" --json | tr -d "\n") || fail "no segment for $name"
  grep -q '"square"' <<<"$dump" || fail "$name: square() not recorded"
  grep -Eq '"name": *"square"[^}]*"calls": *10[,}]' <<<"$dump" || fail "$name: square() not called 10 times: $dump"
}

# 1. pkg-config, as configure scripts use it.
export PKG_CONFIG_PATH="$build_dir/pkgconfig"
cflags=$(pkg-config --cflags limpwatch)
libs=$(pkg-config --libs limpwatch)
[[ $cflags == *-finstrument-functions* ]] || fail "pkg-config --cflags lacks -finstrument-functions: $cflags"
[[ $libs == *-llimpwatch* ]] || fail "pkg-config --libs lacks -llimpwatch: $libs"
cc $cflags -o "$work/hello_pc" "$source_dir/tests/packaging/traced_hello.c" $libs
expect_traced "$work/hello_pc" "pkg-$$"

# 2. install, then find_package from a separate project.
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
[ -f "$work/prefix/include/limpwatch/limpwatch.h" ] || fail "header not installed"
[ -f "$work/prefix/lib/pkgconfig/limpwatch.pc" ] || ls "$work/prefix"/lib*/pkgconfig/limpwatch.pc >/dev/null || fail ".pc not installed"
mkdir -p "$work/consumer"
cp "$source_dir/tests/packaging/traced_hello.c" "$work/consumer/"
cp "$source_dir/tests/packaging/CMakeLists.txt.in" "$work/consumer/CMakeLists.txt"
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
expect_traced "$work/consumer/build/traced_hello" "pkgcmake-$$"

# 3. the runtime refuses to be instrumented.
if cmake -S "$source_dir" -B "$work/instrumented" -DCMAKE_CXX_FLAGS=-finstrument-functions \
     -DLIMPWATCH_BUILD_TESTS=OFF -DLIMPWATCH_BUILD_BENCHMARKS=OFF >"$work/refusal.log" 2>&1; then
  fail "configuring with -finstrument-functions in CMAKE_CXX_FLAGS succeeded"
fi
grep -q "must not be instrumented" "$work/refusal.log" || fail "refusal message missing: $(tail -5 "$work/refusal.log")"
echo "packaging: pkg-config build, installed find_package build and instrumentation refusal all OK"
