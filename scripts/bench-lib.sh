# Shared by the namespace benchmarks (bench-veth.sh, bench-memory.sh);
# sourced, not run. Expects to be sourced from the repository root.

[[ $(id -u) == 0 ]] || { echo "needs root (network namespaces)" >&2; exit 1; }
# The commands the benchmarks run.
source scripts/packages.sh
mapfile -t bench_missing < <(missing_packages trafgen=netsniff-ng ping=iputils-ping \
    ip=iproute2 taskset=util-linux)
install_packages "$(basename "$0")" "${bench_missing[@]}"
# The forwarder's core; the generator takes core 0.
fwd_core=$(($(nproc) > 1 ? 1 : 0))

echo "building railyard (release)..." >&2
cargo build --release -q -p railyard-control
railyard=$PWD/target/release/railyard

# The demo's QoS and system sections (everything before its interfaces).
demo_qos() { sed -e '/^interface /,$d' control/src/demo.conf; }

# routed_port N ADDRESS/LEN BIND [ARP-IP ARP-MAC]: one routed port with the
# demo's classification and PFC, bound to BIND (e.g. `af-packet veth0`).
routed_port() {
    cat <<EOF
interface Ethernet1/$1
  no switchport
  mtu 9216
  priority-flow-control mode on
  service-policy type qos input QOS_CLASSIFICATION
  ip address $2
  bind $3
EOF
    [[ -n ${4:-} ]] && echo "  ip arp $4 $5"
    echo "  no shutdown"
}

# roce_frame DST-MAC SRC-MAC SRC-IP DST-IP: a trafgen packet, 64 bytes on the
# wire: UDP 4791 with a BTH (RDMA write only), DSCP 24, ECT(0), 1024 flows.
roce_frame() {
    cat <<EOF
{
  eth(da=$1, sa=$2, type=0x0800),
  ipv4(tos=0x62, ttl=64, sa=$3, da=$4),
  udp(sp=dinc(49152, 50175), dp=4791),
  0x0a, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
  fill(0x00, 6)
}
EOF
}

# learn_mac NS DEV IP: the MAC of IP, learned by pinging it from DEV the way
# a host would (empty when it never answers).
learn_mac() {
    local mac=""
    ip -n "$1" neigh flush dev "$2"
    for _ in $(seq 50); do
        ip netns exec "$1" ping -c 1 -W 0.2 "$3" >/dev/null 2>&1 || true
        mac=$(ip -n "$1" neigh show "$3" | awk '/lladdr/ { print $5 }')
        [[ -n $mac ]] && break
        sleep 0.1
    done
    echo "$mac"
}

# start_trafgen NS DEV CONFIG: trafgen pinned to core 0, as fast as it can;
# prints its PID.
start_trafgen() {
    ip netns exec "$1" taskset -c 0 trafgen --dev "$2" --conf "$3" --cpus 1 \
        --no-sock-mem >/dev/null 2>&1 &
    echo $!
}

# stop_trafgen PID: trafgen's sender processes stop on SIGINT (a background
# job's parent ignores it), then the parent follows.
stop_trafgen() {
    pkill -INT -P "$1" 2>/dev/null || true
    kill -INT "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
