#!/usr/bin/env bash
# `railyard sim` at cluster scale: 1,024 GPU NICs (8 rails x 128 hosts, 48
# switches, 400 Gb/s) running an AllToAll, stopped at a virtual time, once
# per thread count. Prints, per run, the build time, the run's wall time,
# simulated packet-hops and events per wall second and the peak resident
# memory, then one `key=value` line per figure.
#
#   scripts/bench-sim-scale.sh [--until TIME] [--threads "1 2"] [--size SIZE]
#
#       --until TIME     virtual time to stop at (default 1ms)
#       --threads LIST   thread counts to run with (default "1 2")
#       --size SIZE      AllToAll size per rank (default 64M; the run stops
#                        at --until long before it finishes)
#
# Needs no root. Builds railyard in release first.
set -euo pipefail
cd "$(dirname "$0")/.."

until_t=1ms
threads="1 2"
size=64M
while [[ $# -gt 0 ]]; do
    case $1 in
        --until) until_t=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        *) echo "usage: $0 [--until TIME] [--threads LIST] [--size SIZE]" >&2; exit 2 ;;
    esac
done

cargo build --release -q -p railyard-control
bin=target/release/railyard
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" lab generate rail-optimised --hosts 128 --rails 8 > "$work/gpu1024.topo"
grep -E '^# (hosts|switches):' "$work/gpu1024.topo" | sed 's/^# /fabric: /'
echo "workload: alltoall:$size, --until $until_t, data-free"
echo
printf '%-8s %8s %8s %12s %14s %12s %10s\n' threads total_s run_s packet_hops hops/wall_s events/wall_s peak_MB
for t in $threads; do
    /usr/bin/time -f '%e %M' -o "$work/time" \
        "$bin" sim "$work/gpu1024.topo" --workload "alltoall:$size" --until "$until_t" \
        --threads "$t" --json > "$work/out.json" 2> "$work/err" || {
        cat "$work/err" >&2
        echo "railyard sim failed" >&2
        exit 1
    }
    read -r total peak_kb < "$work/time"
    python3 - "$work/out.json" "$t" "$total" "$peak_kb" <<'EOF'
import json, sys
path, t, total, peak_kb = sys.argv[1:]
e = json.load(open(path))["engine"]
peak_mb = int(peak_kb) // 1024
print(f"{t:<8} {float(total):8.1f} {e['wall_s']:8.1f} {e['packet_hops']:12,} "
      f"{e['hops_per_wall_s']:14,.0f} {e['events_per_wall_s']:12,.0f} {peak_mb:10,}",
      file=sys.stderr)
print(f"threads_{t}_total_s={float(total):.1f}")
print(f"threads_{t}_run_s={e['wall_s']:.1f}")
print(f"threads_{t}_packet_hops_per_s={e['hops_per_wall_s']:.0f}")
print(f"threads_{t}_peak_mb={peak_mb}")
EOF
done 2>&1 >"$work/keys"
echo
cat "$work/keys"
