#!/usr/bin/env bash
# The in-memory pipeline beside DPDK's testpmd on the same machine, in one run.
#
#   scripts/bench-pipeline.sh [SECONDS] [ROUNDS]
#       SECONDS per measurement (default 5), ROUNDS of all of them (default 3)
#
# Measures, one after another and ROUNDS times over, so a shared host's
# slow and fast minutes fall on every row alike:
#   - testpmd `io` between two net_null ports and `macswap` between two
#     net_null,copy=1 ports, one forwarding core (when dpdk-testpmd exists);
#   - railyard's whole pipeline on four null ports (railyard's net_null,copy=1)
#     with the demo's RoCEv2 QoS, pinned to the same core testpmd forwarded on;
#   - the same pipeline in the runtime with one and with two pinned workers:
#     every port sending to every other (two thirds of the packets go to
#     the other worker's ports, which each worker sends on through its own
#     transmit lanes), each port's traffic staying on its worker, and every
#     port sending to every other with the ports shaped to 100 Gb/s (so
#     those two thirds cross to the other worker); and how long a cache
#     line takes from one worker's core to the other's (a virtual
#     machine's host changes it as it moves the vCPUs);
#   - `railyard replay` of a 1 million frame pcap trace end to end, with a
#     poll per event and polling every microsecond (`--poll-interval 1us`);
#   - instructions per packet under callgrind, once (when valgrind exists;
#     this machine's `perf stat` may have no hardware counters).
# Prints one table of medians with the lowest and highest round, and ends
# with `pipeline_ratio_vs_macswap=R`: the median over the rounds of
# railyard's one-core rate over the macswap rate measured just before it
# (`n/a` without testpmd).
set -euo pipefail
secs=${1:-5}
rounds=${2:-3}
cd "$(dirname "$0")/.."

cores=$(nproc)
fwd_core=$((cores > 1 ? 1 : 0))

# The references: testpmd (dpdk-dev) and callgrind (valgrind). As root,
# install what is missing; without them their rows are left out.
source scripts/packages.sh
source scripts/stats.sh
mapfile -t ref_missing < <(missing_packages dpdk-testpmd=dpdk-dev valgrind=valgrind)
install_packages bench-pipeline.sh "${ref_missing[@]}" ||
    echo "bench-pipeline.sh: the rows of what is missing are left out" >&2

echo "building the throughput harness..." >&2
bin=$(cargo bench -p railyard-benches --bench throughput --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -1)
[[ -x $bin ]] || { echo "could not build the throughput harness" >&2; exit 1; }

value() { sed -n "s/^$1=//p" | tail -1; }

# testpmd RATE: runs testpmd with the given vdevs and forwarding mode for
# $secs seconds and prints the packets per second forwarded in total, from
# the last stats period (Tx-pps summed over both ports).
# A run that printed no rate (testpmd now and then fails to start here) is
# tried again, twice at most, rather than counted as 0.
testpmd_rate() {
    local mode=$1 vdev0=$2 vdev1=$3 out rate=0 try
    for try in 1 2 3; do
        out=$(timeout -s INT $((secs + 4)) dpdk-testpmd --no-huge -m 1024 --no-pci \
            --iova-mode=va --no-shconf --no-telemetry -l 0,$fwd_core \
            --vdev "$vdev0" --vdev "$vdev1" -- \
            --forward-mode="$mode" --nb-cores=1 --stats-period 2 -a 2>&1 || true)
        rate=$(echo "$out" | awk '/Tx-pps:/ { v[n++] = $2 } END { if (n >= 2) print v[n-1] + v[n-2]; else print 0 }')
        [[ $rate != 0 ]] && break
        echo "testpmd $mode printed no rate (try $try of 3):" >&2
        echo "$out" | tail -3 >&2
    done
    echo "$rate"
}

mpps() { awk -v p="$1" 'BEGIN { printf "%.2f", p / 1e6 }'; }
ns() { awk -v m="$1" 'BEGIN { if (m > 0) printf "%.0f", 1000 / m; else print "-" }'; }
row() { printf '  %-58s %5s %8s %11s %7s\n' "$@"; }
# stat_row LABEL CORES VALUES...: a table row of the median and the spread.
stat_row() {
    local label=$1 cores=$2 m
    shift 2
    m=$(median "$@")
    row "$label" "$cores" "$(printf '%.2f' "$m")" "$(spread 1 2 "$@")" "$(ns "$m")"
}

io=() macswap=() one=() w1=() w2=() ratio2=() c2c=() l1=() l2=() lratio=() s1=() s2=() sratio=() replay=() replay_polled=() ratio=()
for ((r = 1; r <= rounds; r++)); do
    echo "round $r of $rounds" >&2
    if command -v dpdk-testpmd >/dev/null; then
        echo "testpmd io and macswap on net_null..." >&2
        io+=("$(mpps "$(testpmd_rate io net_null0 net_null1)")")
        macswap+=("$(mpps "$(testpmd_rate macswap net_null0,copy=1 net_null1,copy=1)")")
    fi
    echo "railyard pipeline, one core..." >&2
    one+=("$(taskset -c "$fwd_core" "$bin" "$secs" | tee /dev/stderr | value mpps)")
    if [[ ${#macswap[@]} -gt 0 ]]; then
        ratio+=("$(awk -v r="${one[-1]}" -v m="${macswap[-1]}" 'BEGIN { if (m > 0) printf "%.3f", r / m; else print 0 }')")
    fi
    echo "railyard runtime, one and two workers..." >&2
    scaling=$("$bin" "$secs" scaling | tee /dev/stderr)
    w1+=("$(echo "$scaling" | sed -n 's/^  1 worker *\([0-9.]*\) Mpps.*/\1/p')")
    w2+=("$(echo "$scaling" | value mpps)")
    ratio2+=("$(echo "$scaling" | value scaling_2_over_1)")
    c2c+=("$(echo "$scaling" | value core_to_core_ns)")
    scaling=$("$bin" "$secs" scaling local | tee /dev/stderr)
    l1+=("$(echo "$scaling" | sed -n 's/^  1 worker *\([0-9.]*\) Mpps.*/\1/p')")
    l2+=("$(echo "$scaling" | value mpps)")
    lratio+=("$(echo "$scaling" | value scaling_2_over_1)")
    scaling=$("$bin" "$secs" scaling shaped | tee /dev/stderr)
    s1+=("$(echo "$scaling" | sed -n 's/^  1 worker *\([0-9.]*\) Mpps.*/\1/p')")
    s2+=("$(echo "$scaling" | value mpps)")
    sratio+=("$(echo "$scaling" | value scaling_2_over_1)")
    echo "railyard replay of a 1M-frame trace..." >&2
    replay+=("$(taskset -c "$fwd_core" "$bin" replay packets=1000000 | tee /dev/stderr | value mpps)")
    replay_polled+=("$(taskset -c "$fwd_core" "$bin" replay packets=1000000 poll-interval=1us | tee /dev/stderr | value mpps)")
done

ipp="n/a"
if command -v valgrind >/dev/null; then
    echo "instructions per packet under callgrind..." >&2
    count() {
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "packets=$1" 2>&1 |
            awk '/Collected/ { c = $4 } /packets forwarded/ { p = $3 } END { gsub(",", "", c); print c, p }'
    }
    read -r c1 p1 < <(count 100000)
    read -r c2 p2 < <(count 400000)
    ipp=$(awk -v a="$c1" -v b="$c2" -v p="$p1" -v q="$p2" 'BEGIN { printf "%.0f", (b - a) / (q - p) }')
fi

echo
echo "pipeline benchmark: $(lscpu | sed -n 's/^Model name: *//p'), $cores cores, $(uname -r)"
echo "  $rounds rounds of ${secs}s; the median of the rounds, and the lowest and highest"
row "forwarder" "cores" "Mpps" "range" "ns/pkt"
if [[ ${#macswap[@]} -gt 0 ]]; then
    stat_row "testpmd io, 2 x net_null" 1 "${io[@]}"
    stat_row "testpmd macswap, 2 x net_null,copy=1" 1 "${macswap[@]}"
fi
stat_row "railyard pipeline, 4 null ports, demo QoS" 1 "${one[@]}"
stat_row "railyard runtime, 1 worker" 1 "${w1[@]}"
stat_row "railyard runtime, 2 workers" 2 "${w2[@]}"
stat_row "railyard runtime, worker-local traffic, 1 worker" 1 "${l1[@]}"
stat_row "railyard runtime, worker-local traffic, 2 workers" 2 "${l2[@]}"
stat_row "railyard runtime, ports at 100G (hand-off), 1 worker" 1 "${s1[@]}"
stat_row "railyard runtime, ports at 100G (hand-off), 2 workers" 2 "${s2[@]}"
stat_row "railyard replay, 1M frames pcap -> pipeline -> pcap" 1 "${replay[@]}"
stat_row "railyard replay, the same, --poll-interval 1us" 1 "${replay_polled[@]}"
echo "  2 workers over 1 (each round's pair): every port to every port $(median "${ratio2[@]}")x ($(spread 1 2 "${ratio2[@]}")), worker-local $(median "${lratio[@]}")x ($(spread 1 2 "${lratio[@]}")), shaped ports (hand-off) $(median "${sratio[@]}")x ($(spread 1 2 "${sratio[@]}"))"
echo "  every port to every port, each round: $(printf '%sx ' "${ratio2[@]}")(core to core after each, one way: ${c2c[*]} ns)"
echo "  instructions/packet (pipeline, callgrind): $ipp"
if [[ ${#ratio[@]} -gt 0 ]]; then
    echo "  railyard one core over macswap, each round: ${ratio[*]}"
    echo "pipeline_ratio_vs_macswap=$(median "${ratio[@]}")"
else
    echo "pipeline_ratio_vs_macswap=n/a"
fi
