#!/usr/bin/env bash
# Forwarding rate on veth: railyard's backends beside testpmd and a Linux
# bridge, the same generator and topology for all, in one run. Needs root.
#
#   scripts/bench-veth.sh [SECONDS]      (default 5 per forwarder)
#
#   [gen] gen0 ==veth== sw0 [sw: forwarder] sw1 ==veth== sink0 [sink]
#
# trafgen, pinned to core 0 in the `gen` namespace, sends 64-byte RoCEv2
# frames (UDP 4791, DSCP 24, ECT(0), 1024 flows) as fast as it can; the
# forwarder runs in the `sw` namespace pinned to core 1; delivered = frames
# sink0 received. Forwarders, one after another:
#   railyard af-packet, railyard af-xdp (the demo's QoS: classify, WRED/ECN,
#   PFC accounting, strict + DWRR), testpmd io over net_af_packet
#   (qdisc_bypass) and over net_af_xdp (when dpdk-testpmd exists), and a
#   Linux bridge (which forwards in the sender's softirq, on core 0).
# Ends with `veth_ratio_vs_testpmd=R`: railyard's best backend over
# testpmd's best PMD (`n/a` without testpmd).
set -euo pipefail
secs=${1:-5}
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

tag="ryb$$"
gen="$tag-gen" sw="$tag-sw" sink="$tag-sink"
work=$(mktemp -d)
pid=""
cleanup() {
    [[ -s $work/trafgen.pid ]] && stop_trafgen "$(cat "$work/trafgen.pid")"
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    for ns in "$gen" "$sw" "$sink"; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

for ns in "$gen" "$sw" "$sink"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip link add gen0 netns "$gen" type veth peer name sw0 netns "$sw"
ip link add sink0 netns "$sink" type veth peer name sw1 netns "$sw"
for dev in sw0 sw1; do ip -n "$sw" link set "$dev" up; done
ip -n "$gen" link set gen0 up
ip -n "$sink" link set sink0 up
ip -n "$gen" addr add 10.0.1.2/24 dev gen0
ip -n "$sink" addr add 10.0.2.2/24 dev sink0
sink_mac=$(ip netns exec "$sink" cat /sys/class/net/sink0/address)

stat() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }

# trafgen configuration toward destination MAC $1.
frames() {
    roce_frame "$1" "$(ip netns exec "$gen" cat /sys/class/net/gen0/address)" \
        10.0.1.2 10.0.2.2 > "$work/frames.cfg"
}

# measure NAME: runs trafgen for $secs s (after 1 s of warm-up) and prints
# "offered delivered" in packets per second.
measure() {
    local tg
    tg=$(start_trafgen "$gen" gen0 "$work/frames.cfg")
    echo "$tg" > "$work/trafgen.pid"
    sleep 1
    local t0 r0 o0 t1 r1 o1
    o0=$(stat "$gen" gen0 tx_packets); r0=$(stat "$sink" sink0 rx_packets); t0=$(date +%s.%N)
    sleep "$secs"
    o1=$(stat "$gen" gen0 tx_packets); r1=$(stat "$sink" sink0 rx_packets); t1=$(date +%s.%N)
    stop_trafgen "$tg"
    sleep 0.5
    awk -v o=$((o1 - o0)) -v r=$((r1 - r0)) -v t0="$t0" -v t1="$t1" \
        'BEGIN { printf "%.0f %.0f\n", o / (t1 - t0), r / (t1 - t0) }'
}

declare -A offered delivered
run_railyard() {
    local backend=$1 name="railyard $1"
    {
        demo_qos
        routed_port 1 10.0.1.1/24 "$backend sw0"
        routed_port 2 10.0.2.1/24 "$backend sw1" 10.0.2.2 "$sink_mac"
    } > "$work/sw.conf"
    ip netns exec "$sw" "$railyard" run --config "$work/sw.conf" --socket "$work/sw.sock" \
        --cores "$fwd_core" --poll busy > "$work/railyard.log" 2>&1 &
    pid=$!
    local mac
    mac=$(learn_mac "$gen" gen0 10.0.1.1)
    if [[ -z $mac ]]; then
        echo "$name: the switch did not answer ARP; log:" >&2; cat "$work/railyard.log" >&2
        kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
        return
    fi
    frames "$mac"
    read -r "offered[$name]" "delivered[$name]" < <(measure)
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

run_testpmd() {
    local pmd=$1 name="testpmd $1" extra=${2:-}
    frames "$sink_mac"
    ip netns exec "$sw" dpdk-testpmd --no-huge -m 1024 --no-pci --iova-mode=va --no-shconf \
        --no-telemetry -l 0,$fwd_core \
        --vdev "${pmd}0,iface=sw0$extra" --vdev "${pmd}1,iface=sw1$extra" -- \
        --forward-mode=io --nb-cores=1 --stats-period 5 -a > "$work/testpmd.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        grep -q "Press enter\|Port statistics\|NIC statistics" "$work/testpmd.log" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "$name did not start:" >&2; tail -5 "$work/testpmd.log" >&2; pid=""
        return
    fi
    read -r "offered[$name]" "delivered[$name]" < <(measure)
    kill -INT "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

run_bridge() {
    local name="linux bridge"
    ip -n "$sw" link add br0 type bridge
    ip -n "$sw" link set sw0 master br0
    ip -n "$sw" link set sw1 master br0
    ip -n "$sw" link set br0 up
    frames "$sink_mac"
    read -r "offered[$name]" "delivered[$name]" < <(measure)
    ip -n "$sw" link del br0
}

order=("railyard af-packet" "railyard af-xdp")
echo "railyard af-packet..." >&2; run_railyard af-packet
echo "railyard af-xdp..." >&2; run_railyard af-xdp
if command -v dpdk-testpmd >/dev/null; then
    order+=("testpmd net_af_packet" "testpmd net_af_xdp")
    echo "testpmd net_af_packet..." >&2; run_testpmd net_af_packet ",qdisc_bypass=1"
    echo "testpmd net_af_xdp..." >&2; run_testpmd net_af_xdp
fi
order+=("linux bridge")
echo "linux bridge..." >&2; run_bridge

mpps() { awk -v p="${1:-0}" 'BEGIN { printf "%.3f", p / 1e6 }'; }
best() { local b=0 k; for k in "$@"; do [[ ${delivered[$k]:-0} -gt $b ]] && b=${delivered[$k]}; done; echo "$b"; }
ry=$(best "railyard af-packet" "railyard af-xdp")
tp=$(best "testpmd net_af_packet" "testpmd net_af_xdp")
echo
echo "veth benchmark: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(uname -r); 64-byte frames, generator on core 0, forwarder on core $fwd_core, $secs s each"
printf '  %-24s %14s %14s %10s\n' forwarder "offered Mpps" "delivered Mpps" "vs testpmd"
for k in "${order[@]}"; do
    [[ -n ${delivered[$k]:-} ]] || { printf '  %-24s %14s\n' "$k" "did not run"; continue; }
    ratio=$(awk -v d="${delivered[$k]}" -v t="$tp" 'BEGIN { if (t > 0) printf "%.2f", d / t; else print "-" }')
    printf '  %-24s %14s %14s %10s\n' "$k" "$(mpps "${offered[$k]}")" "$(mpps "${delivered[$k]}")" "$ratio"
done
if [[ $tp -gt 0 ]]; then
    echo "veth_ratio_vs_testpmd=$(awk -v r="$ry" -v t="$tp" 'BEGIN { printf "%.3f", r / t }')"
else
    echo "veth_ratio_vs_testpmd=n/a"
fi
