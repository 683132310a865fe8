#!/usr/bin/env bash
# Builds tests/packaging/autotools (configure.ac + Makefile.am, a static
# convenience library and a thread, shaped like a PVFS server) with nothing
# but the build tree's pkg-config flags in CFLAGS and LIBS, runs it, and checks
# the exact call counts of its functions in its segment.
# Usage: check_autotools.sh SOURCE_DIR BUILD_DIR LIMPWATCH_CLI
set -euo pipefail
source_dir=$1
build_dir=$2
cli=$3
work=$(mktemp -d)
name="autotools-$$"
cleanup() {
  rm -f /dev/shm/limpwatch."$name".*
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

for tool in autoreconf automake make cc pkg-config; do
  command -v "$tool" >/dev/null || fail "$tool not found (tools/setup.sh installs it)"
done

export PKG_CONFIG_PATH="$build_dir/pkgconfig"
cflags=$(pkg-config --cflags limpwatch)
libs=$(pkg-config --libs limpwatch)

cp -r "$source_dir/tests/packaging/autotools" "$work/src"
(cd "$work/src" && autoreconf -i) >"$work/autoreconf.log" 2>&1 || fail "autoreconf: $(tail -5 "$work/autoreconf.log")"
mkdir "$work/build"
(cd "$work/build" && ../src/configure CFLAGS="$cflags" LIBS="$libs") >"$work/configure.log" 2>&1 ||
  fail "configure: $(tail -5 "$work/configure.log")"
make -C "$work/build" >"$work/make.log" 2>&1 || fail "make: $(tail -5 "$work/make.log")"
grep -q -- "-finstrument-functions" "$work/make.log" || grep -q -- "-finstrument-functions" "$work/build/Makefile" ||
  fail "the build did not use -finstrument-functions"

LIMPWATCH_NAME=$name LIMPWATCH_KEEP=1 "$work/build/lwserver" >"$work/run.log" || fail "lwserver failed: $(cat "$work/run.log")"
dump=$("$cli" dump "$name" --json | tr -d "\n") || fail "no segment for $name"

expect_calls() {  # function calls
  grep -Eq "\"name\": *\"$1\"[^}]*\"calls\": *$2[,}]" <<<"$dump" || fail "$1 not recorded with exactly $2 calls"
}
expect_calls main 1
expect_calls handle_request 12
expect_calls storage_write_block 36
expect_calls checksum 36
expect_calls storage_sync 4
expect_calls network_thread 1
expect_calls poll_network 25
grep -q '"liveness": *"exited"' <<<"$dump" || fail "segment not marked exited"
echo "autotools: configure/make with pkg-config flags traced lwserver with exact call counts"
