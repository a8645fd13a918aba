#!/usr/bin/env bash
# Round-trip time through a lab's switches: `rail-spine` brought up once
# per receive ring (`bind af-packet … receive frames`, the default, and
# `receive blocks`), then pings from h1 to h2 on rail 1 (two switch
# traversals per round trip) and from h1's rail-1 NIC to h3's rail-2 NIC
# (rail, spine, rail each way: six traversals). Needs root.
#
#   scripts/bench-lab-latency.sh [COUNT]
#       COUNT pings per pair and ring (default 200, 20 ms apart)
#
# Prints per ring and pair the median, 99th percentile and maximum round
# trip in microseconds, then one `lab_rtt_us_<ring>_<pair>=P50` line each.
set -euo pipefail
count=${1:-200}
cd "$(dirname "$0")/.."

cargo build --release -q -p railyard-control
bin=$PWD/target/release/railyard
work=$(mktemp -d)
export RAILYARD_LAB_DIR=$work/state
lab=""
cleanup() {
    [[ -n $lab ]] && "$bin" lab down "$lab" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# A copy of rail-spine whose templates bind with `receive $1`.
topology() {
    local dir=$work/$1
    mkdir -p "$dir/templates"
    cp scripts/topologies/rail-spine.topo "$dir/"
    for t in rail spine; do
        sed "s/^\( *bind af-packet {{ifname}}\)\$/\1 receive $1/" \
            "scripts/topologies/templates/$t.conf" > "$dir/templates/$t.conf"
        grep -q "receive $1" "$dir/templates/$t.conf"
    done
    echo "$dir/rail-spine.topo"
}

# rtts NS ARGS...: the round-trip times of `ping ARGS`, in microseconds.
rtts() {
    local ns=$1
    shift
    ip netns exec "$ns" ping -q -n -i 0.02 -c 20 "$@" >/dev/null # warm-up: ARP, caches
    ip netns exec "$ns" ping -n -i 0.02 -c "$count" "$@" |
        sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' |
        awk '{ printf "%.0f\n", $1 * 1000 }'
}

# pct P VALUES...: the P-th percentile (nearest rank).
pct() {
    local p=$1
    shift
    printf '%s\n' "$@" | sort -n |
        awk -v p="$p" '{ v[NR] = $1 } END { i = int((NR * p + 99) / 100); if (i < 1) i = 1; print v[i] }'
}

printf '%-8s %-22s %8s %8s %8s\n' ring pair p50_us p99_us max_us
declare -a keys=()
for ring in frames blocks; do
    lab=$("$bin" lab up "$(topology "$ring")" --name "rylat$$-$ring" --wait 30 | head -1)
    for pair in same-rail cross-rail; do
        case $pair in
            same-rail) mapfile -t v < <(rtts "$lab-h1" 10.1.2.2) ;;
            cross-rail) mapfile -t v < <(rtts "$lab-h1" -I 10.1.1.2 10.2.3.2) ;;
        esac
        p50=$(pct 50 "${v[@]}")
        printf '%-8s %-22s %8s %8s %8s\n' "$ring" "$pair (${#v[@]} pings)" "$p50" \
            "$(pct 99 "${v[@]}")" "$(pct 100 "${v[@]}")"
        keys+=("lab_rtt_us_${ring}_${pair//-/_}=$p50")
    done
    "$bin" lab down "$lab" >/dev/null
    lab=""
done
printf '%s\n' "${keys[@]}"
