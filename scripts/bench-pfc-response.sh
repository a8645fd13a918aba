#!/usr/bin/env bash
# How long a PFC frame takes from one AF_PACKET port's transmit to its
# peer port's receive on veth: the delivery term of the response time a
# lossless class's headroom must cover (see docs/qos-pfc.md). Needs root.
#
#   scripts/bench-pfc-response.sh [SAMPLES]
#
# One namespace, one veth pair; benches/benches/pfc_response.rs sends a PFC
# frame every 0.5-3 ms from one end and busy-polls the other, and prints
# the one-way latency's percentiles.
set -euo pipefail
samples=${1:-300}
cd "$(dirname "$0")/.."
ns="rypr$$"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
bin=$(cargo bench -p railyard-benches --bench pfc_response --no-run 2>&1 |
    sed -n 's/.*Executable.*(\(.*\)).*/\1/p')
ip netns add "$ns"
ip -n "$ns" link add pa type veth peer name pb
ip -n "$ns" link set pa up
ip -n "$ns" link set pb up
ip netns exec "$ns" "$bin" pa pb "$samples"
