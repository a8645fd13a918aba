#!/usr/bin/env bash
# Runs every test of the workspace: unit, pcap end-to-end, and (as root) the
# lab tests on network namespaces. Installs the system packages the lab tests
# need when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# command → Debian package that provides it
declare -A needs=(
  [ip]=iproute2
  [ping]=iputils-ping
  [ethtool]=ethtool
  [tshark]=tshark
  [lldpd]=lldpd
  [lldpcli]=lldpd
  [lldpad]=lldpad
  [lldptool]=lldpad
  [nsenter]=util-linux
  [unshare]=util-linux
  [nstat]=iproute2
  [ss]=iproute2
  [iperf3]=iperf3
  [tcpreplay]=tcpreplay
)

missing=()
for cmd in "${!needs[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${needs[$cmd]}")
done

root=0
[ "$(id -u)" = 0 ] && root=1

if [ ${#missing[@]} -gt 0 ]; then
  if [ $root = 1 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "test.sh: missing ${missing[*]}; lab tests will fail (run as root to install)" >&2
  fi
fi

cargo fmt --all -- --check
cargo build --workspace --all-targets

if [ $root = 1 ]; then
  # Lab tests create namespaces and veth pairs; run one at a time so their
  # traffic rates are not disturbed by each other on a small machine.
  cargo test --workspace -- --include-ignored --test-threads=1
else
  echo "test.sh: not root; tests that need network namespaces are skipped" >&2
  cargo test --workspace
fi
