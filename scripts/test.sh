#!/usr/bin/env bash
# Runs every test of the workspace: unit, pcap end-to-end, and (as root) the
# lab tests on network namespaces; builds the book in docs/ and checks its
# links. Installs the system packages the lab tests need when they are
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/packages.sh

# command=Debian package that provides it
mapfile -t missing < <(missing_packages \
  ip=iproute2 ping=iputils-ping ethtool=ethtool tshark=tshark \
  lldpd=lldpd lldpcli=lldpd lldpad=lldpad lldptool=lldpad \
  nsenter=util-linux unshare=util-linux nstat=iproute2 ss=iproute2 \
  iperf3=iperf3 tcpreplay=tcpreplay pkg-config=pkg-config vtysh=frr \
  ovs-vsctl=openvswitch-switch ovs-vswitchd=openvswitch-switch python3=python3 \
  promtool=prometheus prometheus=prometheus podman=podman runc=runc)
# The containerlab test's host image copies a static busybox.
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || missing+=(busybox-static)

# Libraries (not commands) the `dpdk` feature builds against.
pkg-config --exists libdpdk 2>/dev/null || missing+=(libdpdk-dev)
dpkg-query -W -f='${Status}' libclang-dev 2>/dev/null | grep -q "ok installed" || missing+=(libclang-dev)

root=0
[ "$(id -u)" = 0 ] && root=1

if ! install_packages test.sh "${missing[@]}"; then
  [ $root = 1 ] && exit 1
  echo "test.sh: lab tests will fail" >&2
fi

cargo fmt --all -- --check

# The exported containerlab files are checked against containerlab's schema
# in ../shared/anchors/containerlab/: here its absence fails the test
# instead of skipping it.
export RAILYARD_REQUIRE_ANCHORS=1

# The book: a page missing from docs/src/SUMMARY.md fails the build
# (create-missing = false), a broken relative link or #anchor fails the check.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v mdbook >/dev/null 2>&1; then
  echo "test.sh: installing mdbook" >&2
  cargo install mdbook --locked
fi
mdbook build docs
scripts/check-docs.sh

cargo build --workspace --all-targets
# The API docs: a doc link left dangling by a move fails the run.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# Whether the kernel can make a bond device (CONFIG_BONDING), tried in a
# namespace of its own so nothing is left behind.
bonding_available() {
  local ns="railyard-bond-probe-$$" ok=0
  ip netns add "$ns" 2>/dev/null || return 1
  ip -n "$ns" link add probe0 type bond 2>/dev/null || ok=1
  ip netns del "$ns"
  return $ok
}

if [ $root = 1 ]; then
  skip=()
  if ! bonding_available; then
    echo "test.sh: the kernel has no bonding driver; the LACP interop test against Linux bonding is skipped" >&2
    skip=(--skip linux_bonding_bundles_with_the_agent)
  fi
  # Lab tests create namespaces and veth pairs; run one at a time so their
  # traffic rates are not disturbed by each other on a small machine.
  cargo test --workspace -- --include-ignored --test-threads=1 ${skip[@]+"${skip[@]}"}
else
  echo "test.sh: not root; tests that need network namespaces are skipped" >&2
  cargo test --workspace
fi

# The DPDK backend (feature `dpdk`, against the system's DPDK): no hugepages or NICs needed.
if pkg-config --exists libdpdk 2>/dev/null; then
  cargo clippy --workspace --all-targets --features railyard-dataplane/dpdk,railyard-control/dpdk,railyard-benches/dpdk -- -D warnings
  if [ $root = 1 ]; then
    cargo test -p railyard-dataplane --features dpdk --lib --test dpdk -- --include-ignored --test-threads=1
    cargo test -p railyard-control --features dpdk --test lab_dpdk -- --include-ignored --test-threads=1
  else
    cargo test -p railyard-dataplane --features dpdk --lib --test dpdk
  fi
else
  echo "test.sh: libdpdk-dev not found; DPDK backend tests skipped" >&2
fi
