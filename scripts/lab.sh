#!/usr/bin/env bash
# Lab topologies on network namespaces: a thin wrapper over `railyard lab`.
#
#   scripts/lab.sh up TOPOLOGY [--name NAME] [--wait S]   build a lab, print
#                                  its name, wait for links and LLDP (30 s)
#   scripts/lab.sh status NAME [--json]        switches' interfaces and LLDP neighbours
#   scripts/lab.sh cabling NAME [--json]       LLDP neighbours vs the topology (exit 1 on mismatch)
#   scripts/lab.sh down NAME|TOPOLOGY | --all-of TOPOLOGY
#   scripts/lab.sh render TOPOLOGY --out DIR   the generated switch configs only
#   scripts/lab.sh list
#
# TOPOLOGY is a name in scripts/topologies (single, rail-spine) or a .topo
# file. Needs root. Builds railyard (cargo build --release) unless RAILYARD
# names a binary. State: $RAILYARD_LAB_DIR/NAME (default /run/railyard-lab).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

if [ -z "${RAILYARD:-}" ]; then
  (cd "$root" && cargo build --release -q -p railyard-control --bin railyard)
  RAILYARD="$root/target/release/railyard"
fi

cmd="$1"; shift
args=("$@")
case "$cmd" in
  up|render)
    # A bare name means scripts/topologies/NAME.topo.
    if [ ${#args[@]} -gt 0 ] && [ ! -f "${args[0]}" ] && [ -f "$root/scripts/topologies/${args[0]}.topo" ]; then
      args[0]="$root/scripts/topologies/${args[0]}.topo"
    fi
    ;;
esac
export RAILYARD_TOPOLOGIES="${RAILYARD_TOPOLOGIES:-$root/scripts/topologies}"
exec "$RAILYARD" lab "$cmd" "${args[@]}"
