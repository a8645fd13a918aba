#!/usr/bin/env bash
# Forwarding rate on veth: railyard's backends beside testpmd and a Linux
# bridge, the same generator and topology for all, in one run. Needs root.
#
#   scripts/bench-veth.sh [SECONDS] [ROUNDS]
#       SECONDS per forwarder (default 5), ROUNDS of all of them (default 3)
#
#   [gen] gen0 ==veth== sw0 [sw: forwarder] sw1 ==veth== sink0 [sink]
#
# trafgen, pinned to core 0 in the `gen` namespace, sends 64-byte RoCEv2
# frames (UDP 4791, DSCP 24, ECT(0), 1024 flows) as fast as it can; the
# forwarder runs in the `sw` namespace pinned to core 1; delivered = frames
# sink0 received. Forwarders, one after another:
#   railyard af-packet (per-frame receive ring, the default), railyard
#   af-packet blocks (`receive blocks`), railyard af-xdp (the demo's QoS:
#   classify, WRED/ECN, PFC accounting, strict + DWRR), testpmd io over net_af_packet
#   (qdisc_bypass) and over net_af_xdp (when dpdk-testpmd exists), and a
#   Linux bridge (which forwards in the sender's softirq, on core 0).
# All of them run once per round, so a shared host's slow and fast minutes
# fall on every row alike; the table gives each one's median and range.
# Each railyard backend is also set against its counterpart PMD round by
# round (af-packet over net_af_packet, af-xdp over net_af_xdp). Ends with
# `veth_ratio_vs_testpmd=R`: the median over the rounds of railyard's best
# backend over testpmd's best PMD in that round (`n/a` without testpmd).
set -euo pipefail
secs=${1:-5}
rounds=${2:-3}
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh
source scripts/stats.sh
# testpmd for the reference rows (Debian's dpdk-dev); without it they are left out.
mapfile -t ref_missing < <(missing_packages dpdk-testpmd=dpdk-dev)
install_packages bench-veth.sh "${ref_missing[@]}" ||
    echo "bench-veth.sh: no dpdk-testpmd; its rows are left out" >&2

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

# Per forwarder, the rates of every round so far, space-separated.
declare -A offered delivered
# record NAME: appends one measurement to NAME's rates.
record() {
    local o d
    read -r o d < <(measure)
    offered[$1]+="$o " delivered[$1]+="$d "
}
# failed NAME: a round NAME could not run counts as nothing delivered.
failed() { offered[$1]+="0 " delivered[$1]+="0 "; }
# run_railyard BACKEND [BIND-OPTIONS LABEL]: railyard forwarding over
# BACKEND, its bind lines ending in BIND-OPTIONS, named "railyard BACKEND LABEL".
run_railyard() {
    local backend=$1 opts=${2:+ $2} name="railyard $1${3:+ $3}"
    {
        demo_qos
        routed_port 1 10.0.1.1/24 "$backend sw0$opts"
        routed_port 2 10.0.2.1/24 "$backend sw1$opts" 10.0.2.2 "$sink_mac"
    } > "$work/sw.conf"
    ip netns exec "$sw" "$railyard" run --config "$work/sw.conf" --socket "$work/sw.sock" \
        --cores "$fwd_core" --poll busy > "$work/railyard.log" 2>&1 &
    pid=$!
    local mac
    mac=$(learn_mac "$gen" gen0 10.0.1.1)
    if [[ -z $mac ]]; then
        echo "$name: the switch did not answer ARP; log:" >&2; cat "$work/railyard.log" >&2
        kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
        failed "$name"
        return
    fi
    frames "$mac"
    record "$name"
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
        failed "$name"
        return
    fi
    record "$name"
    kill -INT "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

run_bridge() {
    local name="linux bridge"
    ip -n "$sw" link add br0 type bridge
    ip -n "$sw" link set sw0 master br0
    ip -n "$sw" link set sw1 master br0
    ip -n "$sw" link set br0 up
    frames "$sink_mac"
    record "$name"
    ip -n "$sw" link del br0
}

testpmd=$(command -v dpdk-testpmd || true)
order=("railyard af-packet" "railyard af-packet blocks" "railyard af-xdp")
[[ -n $testpmd ]] && order+=("testpmd net_af_packet" "testpmd net_af_xdp")
order+=("linux bridge")
for ((r = 1; r <= rounds; r++)); do
    echo "round $r of $rounds" >&2
    echo "railyard af-packet..." >&2; run_railyard af-packet
    echo "railyard af-packet blocks..." >&2; run_railyard af-packet "receive blocks" blocks
    echo "railyard af-xdp..." >&2; run_railyard af-xdp
    if [[ -n $testpmd ]]; then
        echo "testpmd net_af_packet..." >&2; run_testpmd net_af_packet ",qdisc_bypass=1"
        echo "testpmd net_af_xdp..." >&2; run_testpmd net_af_xdp
    fi
    echo "linux bridge..." >&2; run_bridge
done

mpps() { awk -v p="${1:-0}" 'BEGIN { printf "%.3f", p / 1e6 }'; }
# nth NAME R: NAME's delivered rate in round R.
nth() { local -a v; read -r -a v <<< "${delivered[$1]:-}"; echo "${v[$(($2 - 1))]:-0}"; }
# best R NAME...: the highest rate any of NAME delivered in round R.
best() {
    local r=$1 k v b=0
    shift
    for k in "$@"; do v=$(nth "$k" "$r"); [[ $v -gt $b ]] && b=$v; done
    echo "$b"
}
# round_ratios A... / B...: per round, the best of the A forwarders over the
# best of the B forwarders (rounds where B delivered nothing left out).
round_ratios() {
    local -a a=() out=()
    while [[ $1 != / ]]; do a+=("$1"); shift; done
    shift
    local r x y
    for ((r = 1; r <= rounds; r++)); do
        x=$(best "$r" "${a[@]}") y=$(best "$r" "$@")
        [[ $y -gt 0 ]] && out+=("$(awk -v x="$x" -v y="$y" 'BEGIN { printf "%.3f", x / y }')")
    done
    echo "${out[*]}"
}

declare -A med
for k in "${order[@]}"; do
    # shellcheck disable=SC2086 # the rates are a space-separated list
    [[ -n ${delivered[$k]:-} ]] && med[$k]=$(printf '%.0f' "$(median ${delivered[$k]})")
done
tp=0
for k in "testpmd net_af_packet" "testpmd net_af_xdp"; do
    [[ ${med[$k]:-0} -gt $tp ]] && tp=${med[$k]}
done
echo
echo "veth benchmark: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(uname -r); 64-byte frames, generator on core 0, forwarder on core $fwd_core"
echo "  $rounds rounds of ${secs}s per forwarder; the median of the rounds, and the lowest and highest"
printf '  %-24s %14s %14s %13s %10s\n' forwarder "offered Mpps" "delivered Mpps" "range" "vs testpmd"
for k in "${order[@]}"; do
    [[ -n ${delivered[$k]:-} ]] || { printf '  %-24s %14s\n' "$k" "did not run"; continue; }
    ratio=$(awk -v d="${med[$k]}" -v t="$tp" 'BEGIN { if (t > 0) printf "%.2f", d / t; else print "-" }')
    # shellcheck disable=SC2086
    printf '  %-24s %14s %14s %13s %10s\n' "$k" "$(mpps "$(median ${offered[$k]})")" \
        "$(mpps "${med[$k]}")" "$(spread 1e6 3 ${delivered[$k]})" "$ratio"
done
if [[ $tp != 0 ]]; then
    for pair in "af-packet|net_af_packet" "af-packet blocks|net_af_packet" "af-xdp|net_af_xdp"; do
        IFS='|' read -r ours theirs <<< "$pair"
        ratios=$(round_ratios "railyard $ours" / "testpmd $theirs")
        # shellcheck disable=SC2086
        [[ -n $ratios ]] && echo "  railyard $ours over testpmd $theirs, each round: $ratios (median $(median $ratios))"
    done
    ratios=$(round_ratios "railyard af-packet" "railyard af-packet blocks" "railyard af-xdp" \
        / "testpmd net_af_packet" "testpmd net_af_xdp")
    # shellcheck disable=SC2086
    echo "veth_ratio_vs_testpmd=$(median $ratios)"
else
    echo "veth_ratio_vs_testpmd=n/a"
fi
