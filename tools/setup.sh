#!/usr/bin/env bash
# Installs the Debian packages limpwatch needs to build, test and run its test-bed.
# A no-op (no apt call at all) when everything is already present.
set -euo pipefail

packages=(
  cmake g++ make pkgconf
  libunwind-dev libboost-dev liburing-dev libeigen3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  iproute2 nftables iptables util-linux procps e2fsprogs
  autoconf automake
  prometheus
  chromium  # the dashboard's test in a real browser (headless)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
