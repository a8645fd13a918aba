#!/usr/bin/env bash
# Resident memory of `railyard run` with eight ports and default buffers, and
# whether it grows during a soak at full rate. Needs root.
#
#   scripts/bench-memory.sh [SECONDS]      (default 600: a 10-minute soak)
#
# Eight veth pairs between a `host` and a `sw` namespace; railyard binds the
# eight switch ends with AF_PACKET and the demo's RoCEv2 QoS. trafgen on
# host0 sends 64-byte RoCEv2 frames to the hosts behind the seven other
# ports as fast as it can, for the whole soak. The switch's VmRSS is sampled
# every 10 s. Prints the idle size, the samples, and ends with
# `rss_growth_kb=N` (last sample minus the first sample under load).
set -euo pipefail
secs=${1:-600}
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh
ports=8

tag="rym$$"
host="$tag-host" sw="$tag-sw"
work=$(mktemp -d)
pid="" tg=""
cleanup() {
    [[ -n $tg ]] && stop_trafgen "$tg"
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    ip netns del "$host" 2>/dev/null || true
    ip netns del "$sw" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$host"; ip netns add "$sw"
demo_qos > "$work/sw.conf"
for i in $(seq 0 $((ports - 1))); do
    ip link add "h$i" netns "$host" type veth peer name "s$i" netns "$sw"
    ip -n "$sw" link set "s$i" up
    ip -n "$host" link set "h$i" up
    mac=$(ip netns exec "$host" cat "/sys/class/net/h$i/address")
    routed_port $((i + 1)) "10.0.$i.1/24" "af-packet s$i" "10.0.$i.2" "$mac" >> "$work/sw.conf"
done
ip -n "$host" addr add 10.0.0.2/24 dev h0

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
# Frames the hosts behind the seven egress ports received.
delivered() {
    local n=0 p
    for p in $(seq 1 $((ports - 1))); do
        n=$((n + $(ip netns exec "$host" cat "/sys/class/net/h$p/statistics/rx_packets")))
    done
    echo "$n"
}

ip netns exec "$sw" "$railyard" run --config "$work/sw.conf" --socket "$work/sw.sock" \
    --cores "$fwd_core" --poll busy > "$work/railyard.log" 2>&1 &
pid=$!
sleep 3
kill -0 "$pid" || { cat "$work/railyard.log" >&2; exit 1; }
idle=$(rss)

switch_mac=$(learn_mac "$host" h0 10.0.0.1)
[[ -n $switch_mac ]] || { echo "the switch did not answer ARP" >&2; cat "$work/railyard.log" >&2; exit 1; }
# One frame to each of the seven other ports' hosts in turn.
src_mac=$(ip netns exec "$host" cat /sys/class/net/h0/address)
for p in $(seq 1 $((ports - 1))); do
    roce_frame "$switch_mac" "$src_mac" 10.0.0.2 "10.0.$p.2"
done > "$work/frames.cfg"
tg=$(start_trafgen "$host" h0 "$work/frames.cfg")
echo "railyard run, $ports AF_PACKET ports, default buffers: idle VmRSS ${idle} kB"
printf '  %8s %12s %14s\n' seconds "VmRSS kB" "delivered"
first="" last="" max=0 t=0
while (( t < secs )); do
    sleep 10; t=$((t + 10))
    kill -0 "$pid" || { echo "railyard exited" >&2; cat "$work/railyard.log" >&2; exit 1; }
    r=$(rss); [[ -z $first ]] && first=$r; last=$r; (( r > max )) && max=$r
    printf '  %8d %12d %14s\n' "$t" "$r" "$(delivered)"
done
echo "idle ${idle} kB, first sample under load ${first} kB, last ${last} kB, max ${max} kB"
echo "rss_growth_kb=$((last - first))"
