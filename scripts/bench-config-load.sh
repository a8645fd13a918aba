#!/usr/bin/env bash
# How long a large configuration takes to load: parse and validate, compile
# and FIB build for a million static routes, for 65 025 interfaces, and for
# both together (see docs/performance.md).
#
#   scripts/bench-config-load.sh                    # all three scenarios
#   scripts/bench-config-load.sh routes 250000      # one scenario, one size
#   scripts/bench-config-load.sh interfaces 16000
#   scripts/bench-config-load.sh both 1000000 65025
#
# The configuration is generated in memory; nothing is written to disk.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench -p railyard-benches --bench config_load -- "$@"
