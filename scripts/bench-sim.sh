#!/usr/bin/env bash
# railyard's fabric simulator beside htsim on the same fabric and traffic.
#
#   scripts/bench-sim.sh [--quick] [--json] [--seed N] [--size BYTES]
#                        [--htsim-rounds N] [--keep]
#       --quick          32 hosts (8 leaves of 4, 4 spines) instead of 128
#       --json           the summary as one JSON object on stdout (the
#                        tables go to stderr)
#       --seed N         the permutation's seed (default 1)
#       --size BYTES     bytes per flow (default 2097152, railyard's 2M)
#       --htsim-rounds N htsim runs, the median wall time counts (default 3;
#                        railyard runs once)
#       --keep           keep the work directory (topology, .cm, outputs)
#
# What is compared. htsim (the C++ simulator of the Ultra Ethernet work,
# BSD-licensed; its source is taken from $HTSIM_SRC, else
# ../shared/anchors/htsim beside the repository, else cloned from GitHub)
# is built once into ${XDG_CACHE_HOME:-~/.cache}/railyard/htsim, outside
# the repository, and its `htsim_roce` (sim/datacenter/main_roce.cpp) runs
# a 2-tier fat tree: for N = K*K/2 hosts, K leaves of K/2 hosts and K/2
# spines, every leaf cabled once to every spine (N=128: K=16, 16 leaves of
# 8 hosts, 8 spines, no oversubscription). railyard runs `railyard sim` on
# the same leaf-spine as a .topo (leaves `rail-lossless`, spines `spine`),
# with the same link speed (100 Gb/s), payload per packet, 1 us per link
# and no switch latency, PFC, ECMP on the leaves and no congestion control
# (`--cc none`: htsim_roce's RoCE sender has none either; both send at line
# rate and only PFC slows them). The traffic is one permutation: every host
# sends SIZE to one other host, all starting at 0; the pairs are the
# derangement railyard's `permutation:SIZE:SEED` draws (roce/src/plan.rs),
# written as htsim's connection matrix, and the script checks railyard's
# report against it, so both carry the same flows between the same leaves.
#
# What differs between the models:
#   - htsim's switch is a few queues: a lossless input queue per port that
#     pauses its upstream at 15 packets and resumes at 12, output queues,
#     and an ECMP hash of (flow, path id). railyard's switch is the whole
#     dataplane that forwards live: parse, classify (DSCP -> qos-group),
#     route lookup, ECMP hash of the 5-tuple, WRED/ECN, the NX-OS QoS
#     policies of the templates, per-priority PFC with the template's
#     thresholds (leaves pause at 3200 KB, resume at 100 KB per port),
#     counters, on real frame bytes.
#   - htsim's receiver ACKs every packet; railyard's RoCE NIC model ACKs
#     every 16 packets (and the last), so htsim moves about twice as many
#     packets for the same data.
#   - htsim's sender picks its ECMP path id from random() after
#     srand(time(NULL)) (roce.cpp), so its collisions, and the tail of its
#     FCTs, change from run to run; railyard's are fixed by the seed.
#   - Payload: RoCE path MTUs are powers of two, so both carry 4096 B per
#     packet (htsim `-mtu 4096`, railyard link MTU 4160, path MTU 4096);
#     htsim adds 64 B of header per data packet, railyard the real RoCEv2
#     headers (62 B, plus the RETH on a WRITE's first packet).
#   - Both FCTs run from the flow's start to the sender receiving its last
#     ACK.
#
# Packet-hops are packets times the links they cross (host-leaf, leaf-
# spine, spine-leaf, leaf-host: 4 across leaves, 2 within one). Neither
# simulator prints them today, so they are computed: htsim's from the
# finished flows' packets, its `Rtx:` count and one ACK per data packet
# (its `New:` count stays 0 in this version); railyard's from the flows,
# one ACK per 16 packets, and the NAKs, CNPs and retransmissions in its
# report -- unless the report carries an `engine` object with
# `packet_hops`, which is then used as is. PFC frames are counted in
# neither. Wall time, CPU time (user + system) and peak memory are taken
# around each whole process (topology build included). htsim runs with
# `-end 20000`: its default end, 1 ms of virtual time, can cut off a flow
# that shares an uplink with three others (900 us is seen at 128 hosts);
# after the last flow only its progress clock ticks, so the longer end
# costs nothing measurable. The summary ends with
# `sim_speed_ratio_vs_htsim=R`: railyard's packet-hops per wall second over
# htsim's (`sim_speed_ratio_cpu_vs_htsim` the same per CPU second, steadier
# on a busy host). Exit status 1 when a step fails, with what failed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

hosts=128
seed=1
size=2097152
htsim_rounds=3
json=0
keep=0
while [[ $# -gt 0 ]]; do
    case $1 in
    --quick) hosts=32 ;;
    --json) json=1 ;;
    --seed) seed=${2:?--seed needs a number}; shift ;;
    --size) size=${2:?--size needs a byte count}; shift ;;
    --htsim-rounds) htsim_rounds=${2:?--htsim-rounds needs a number}; shift ;;
    --keep) keep=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-sim.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ $seed =~ ^[0-9]+$ && $size =~ ^[0-9]+$ && $size -gt 0 && $htsim_rounds =~ ^[1-9][0-9]*$ ]] || {
    echo "bench-sim.sh: --seed, --size and --htsim-rounds take whole numbers (size, rounds > 0)" >&2
    exit 2
}

# The fabric: link speed (Mb/s), payload per packet, link MTU that gives
# railyard that path MTU, per-link latency (us).
speed=100000
payload=4096
link_mtu=4160
hop_us=1

die() { echo "bench-sim.sh: $*" >&2; exit 1; }
say() { echo "$*" >&2; }

source scripts/packages.sh
mapfile -t missing < <(missing_packages g++=g++ make=make python3=python3)
install_packages bench-sim.sh "${missing[@]}" || die "cannot go on without: ${missing[*]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-sim.XXXXXX")
if [[ $keep == 1 ]]; then
    trap 'say "work directory kept: $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi

# ---- htsim, built once outside the repository -------------------------------

cache=${XDG_CACHE_HOME:-$HOME/.cache}/railyard/htsim
htsim=$cache/sim/datacenter/htsim_roce

# htsim_source: prints a directory holding htsim's sim/ (HTSIM_SRC, the
# anchor beside the repository, or a clone in the cache).
htsim_source() {
    local d
    for d in "${HTSIM_SRC:-}" "$repo/../shared/anchors/htsim"; do
        [[ -n $d && -f $d/sim/datacenter/main_roce.cpp ]] && { (cd "$d" && pwd -P); return; }
    done
    d=${XDG_CACHE_HOME:-$HOME/.cache}/railyard/htsim-src
    if [[ ! -f $d/sim/datacenter/main_roce.cpp ]]; then
        say "no htsim source (set HTSIM_SRC); cloning https://github.com/Broadcom/csg-htsim..."
        rm -rf "$d"
        install_packages bench-sim.sh $(missing_packages git=git) >&2 || die "cloning needs git"
        git clone -q --depth 1 https://github.com/Broadcom/csg-htsim "$d" >&2 ||
            die "could not clone htsim; set HTSIM_SRC to a checkout of it"
    fi
    echo "$d"
}

# build_htsim: copies the source into the cache and builds libhtsim.a and
# htsim_roce there, unless the cached binary was built from the same source
# (a checksum of the sim/ tree).
build_htsim() {
    local src sum
    src=$(htsim_source)
    sum=$(cd "$src" && find sim -type f \( -name '*.cpp' -o -name '*.h' -o -name Makefile \) |
        LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1)
    if [[ -x $htsim && $(cat "$cache/.source-sum" 2>/dev/null) == "$sum" ]]; then
        return
    fi
    say "building htsim_roce from $src in $cache (once)..."
    rm -rf "$cache"
    mkdir -p "$(dirname "$cache")"
    cp -r "$src" "$cache"
    chmod -R u+w "$cache"
    if ! (cd "$cache/sim" && make -j"$(nproc)" libhtsim.a &&
        make -j"$(nproc)" -C datacenter htsim_roce) >"$cache/build.log" 2>&1; then
        tail -20 "$cache/build.log" >&2
        die "htsim did not build (log: $cache/build.log)"
    fi
    echo "$sum" >"$cache/.source-sum"
}
build_htsim

echo "building railyard (release)..." >&2
cargo build --release -q -p railyard-control || die "railyard did not build"
railyard=$repo/target/release/railyard

# ---- the fabric and the traffic ---------------------------------------------

# htsim's 2-tier fat tree for N hosts: the smallest K with K*K/2 >= N, which
# must be exactly N.
k=0
while ((k * k / 2 < hosts)); do k=$((k + 1)); done
((k * k / 2 == hosts && k % 2 == 0)) || die "htsim has no 2-tier fat tree of $hosts hosts"
leaves=$k
per_leaf=$((k / 2))
spines=$((k / 2))

# leaf_spine_python HOSTS LEAVES SPINES: the leaf-spine as a .topo (hosts
# h1..hN, leaf L takes hosts in order on Ethernet1/1.., every leaf one
# uplink to every spine).
leaf_spine_python() {
    python3 - "$@" "$speed" "$link_mtu" "$hop_us" <<'EOF'
import sys
hosts, leaves, spines, speed, mtu, hop = (int(a) for a in sys.argv[1:])
per = hosts // leaves
print(f"# {hosts} hosts, {leaves} leaves of {per}, {spines} spines: htsim's 2-tier fat tree")
for l in range(1, leaves + 1):
    print(f"switch leaf{l} role rail-lossless")
for s in range(1, spines + 1):
    print(f"switch spine{s} role spine")
for h in range(1, hosts + 1):
    print(f"host h{h}")
opt = f"speed {speed} mtu {mtu} delay {hop}us"
for h in range(hosts):
    l = h // per
    print(f"link h{h + 1}:eth0 leaf{l + 1}:Ethernet1/{h % per + 1} {opt} "
          f"subnet 10.{l + 1}.{h % per + 1}.0/24")
for l in range(leaves):
    for s in range(spines):
        a = (10 << 24 | 200 << 16) + 2 * (l * spines + s)  # /31s from 10.200.0.0
        print(f"link leaf{l + 1}:Ethernet1/{per + s + 1} spine{s + 1}:Ethernet1/{l + 1} {opt} "
              f"subnet 10.{a >> 16 & 255}.{a >> 8 & 255}.{a & 255}/31")
EOF
}

# leaf_spine_topo FILE: writes the fabric; with `railyard lab generate
# leaf-spine` when this railyard has it, else with leaf_spine_python.
leaf_spine_topo() {
    if "$railyard" lab generate leaf-spine --help >/dev/null 2>&1; then
        # A radix of 2·(K/2) gives K/2 host ports and K/2 uplinks (one per
        # spine) at 1:1: htsim's K leaves of K/2 hosts.
        if "$railyard" lab generate leaf-spine --hosts "$hosts" --rails 1 \
            --spines "$spines" --radix "$((2 * per_leaf))" --speed "$speed" \
            --mtu "$link_mtu" --delay "${hop_us}us" --lossless \
            >"$1" 2>"$work/generate.err"; then
            say "topology: railyard lab generate leaf-spine"
            return
        fi
        say "railyard lab generate leaf-spine failed ($(head -1 "$work/generate.err")); using the script's own generator"
    fi
    leaf_spine_python "$hosts" "$leaves" "$spines" >"$1"
    say "topology: the script's own leaf-spine generator"
}
topo=$work/leaf-spine-$hosts.topo
leaf_spine_topo "$topo"

# The connection matrix: railyard's derangement for SEED, ranks mapped to
# htsim nodes by leaf (htsim's node n hangs off leaf n / (K/2)), so the
# flows between leaves are the same in both.
python3 - "$topo" "$seed" "$size" "$per_leaf" "$work/perm.cm" "$work/ranks.json" <<'EOF' ||
import json, sys
topo, seed, size, per, cm, ranks_out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
M = (1 << 64) - 1
def mix(z):  # splitmix64's finaliser, as roce/src/plan.rs mix()
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
lines = [l.split("#")[0].split() for l in open(topo)]
hosts = [w[1] for w in lines if len(w) >= 2 and w[0] == "host"]
leaf_of, leaves, nics = {}, [], {}
for w in lines:
    if len(w) >= 3 and w[0] == "link":
        a, b = w[1].split(":")[0], w[2].split(":")[0]
        for h, sw in ((a, b), (b, a)):
            if h in hosts:
                nics[h] = nics.get(h, 0) + 1
                leaf_of[h] = sw
                if sw not in leaves:
                    leaves.append(sw)
if any(nics.get(h) != 1 for h in hosts):
    sys.exit("every host needs exactly one NIC, cabled to a leaf")
slot = {l: 0 for l in leaves}
node = {}
for h in hosts:
    l = leaf_of[h]
    if slot[l] >= per:
        sys.exit(f"leaf {l} has more than {per} hosts: not htsim's fat tree")
    node[h] = leaves.index(l) * per + slot[l]
    slot[l] += 1
n = len(hosts)
p = list(range(n))
state = seed
for i in range(n - 1, 0, -1):
    state = mix(state)
    j = state % i
    p[i], p[j] = p[j], p[i]
with open(cm, "w") as f:
    print(f"Nodes {n}", file=f)
    print(f"Connections {n}", file=f)
    for s in range(n):
        print(f"{node[hosts[s]]}->{node[hosts[p[s]]]} id {s + 1} start 0 size {size}", file=f)
json.dump({"hosts": hosts, "node": node, "leaf": leaf_of,
           "pairs": [[hosts[s], hosts[p[s]]] for s in range(n)]}, open(ranks_out, "w"))
EOF
    die "could not derive the connection matrix from $topo"

say "fabric: $hosts hosts, $leaves leaves of $per_leaf, $spines spines, $((speed / 1000)) Gb/s, $payload B payload, ${hop_us} us per link; permutation of $size B, seed $seed"

# ---- htsim ------------------------------------------------------------------

# timed STATS OUT ERR CMD...: runs CMD with its output in OUT and ERR and
# writes "WALL-S CPU-S MAX-RSS-KB" to STATS (CPU: user + system, which a
# host shared with other work leaves nearly alone while wall time grows).
timed() {
    python3 - "$@" <<'EOF'
import resource, subprocess, sys, time
stats, out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
t = time.perf_counter()
with open(out, "wb") as o, open(err, "wb") as e:
    rc = subprocess.call(cmd, stdout=o, stderr=e)
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(stats, "w") as f:
    print(f"{wall:.6f} {r.ru_utime + r.ru_stime:.6f} {r.ru_maxrss}", file=f)
sys.exit(rc)
EOF
}

for ((r = 1; r <= htsim_rounds; r++)); do
    say "htsim_roce, run $r of $htsim_rounds..."
    # -end: htsim stops at this virtual time (us), far past the slowest
    # ECMP collision (see the head of this file).
    if ! (cd "$work" && timed "htsim-$r.time" "htsim-$r.out" "htsim-$r.err" \
        "$htsim" -tm perm.cm -nodes "$hosts" -tiers 2 \
        -queue_type lossless_input -linkspeed "$speed" -mtu "$payload" \
        -hop_latency "$hop_us" -strat ecmp_host -paths 8 -seed "$seed" \
        -end 20000 -o htsim.dat); then
        tail -5 "$work/htsim-$r.out" "$work/htsim-$r.err" >&2
        die "htsim_roce failed (output above)"
    fi
done

# ---- railyard ---------------------------------------------------------------

say "railyard sim (one run)..."
if ! timed "$work/railyard.time" "$work/railyard.json" "$work/railyard.err" \
    "$railyard" sim "$topo" --workload "permutation:$size:$seed" --lb ecmp --cc none --json; then
    tail -5 "$work/railyard.err" >&2
    die "railyard sim failed (stderr above)"
fi

# ---- the numbers ------------------------------------------------------------

summary_rc=0
python3 - "$work" "$json" "$size" "$payload" "$speed" "$hop_us" "$hosts" "$leaves" "$spines" \
    "$htsim_rounds" <<'EOF' || summary_rc=$?
import json, math, os, re, sys
work, as_json = sys.argv[1], sys.argv[2] == "1"
size, payload, speed, hop_us, hosts, leaves, spines, rounds = (int(a) for a in sys.argv[3:11])

def times(path):
    wall, cpu, rss = open(path).read().split()
    return float(wall), float(cpu), int(rss)

def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

ht_runs = [times(f"{work}/htsim-{r}.time") for r in range(1, rounds + 1)]
ht_walls = [w for w, _, _ in ht_runs]
ht_wall, ht_cpu = median(ht_walls), median([c for _, c, _ in ht_runs])
ht_rss = max(m for _, _, m in ht_runs)
ry_wall, ry_cpu, ry_rss = times(f"{work}/railyard.time")
load = os.getloadavg()[0]
ranks = json.load(open(f"{work}/ranks.json"))
leaf, node = ranks["leaf"], ranks["node"]
per_leaf = hosts // leaves
rate = speed * 1e6
pkts = math.ceil(size / payload)
HDR = 64  # htsim's RocePacket::ACKSIZE, added to each data packet

def hops(a, b):
    return 2 if leaf[a] == leaf[b] else 4

def ideal_us(h):
    frame = (payload + HDR) * 8 / rate
    # Every frame through the first link, the last one stored and forwarded
    # h-1 times, h links of latency out, the ACK's h links back.
    return (pkts * frame + (h - 1) * frame + 2 * h * hop_us * 1e-6 + h * HDR * 8 / rate) * 1e6

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]

def dist(v):
    return {"min": min(v), "p50": pct(v, .5), "p90": pct(v, .9), "p99": pct(v, .99),
            "max": max(v), "mean": sum(v) / len(v)} if v else {}

problems = []
# htsim: "Flow Roce_S_D ID finished at T total bytes B"; all start at 0.
out = open(f"{work}/htsim-1.out").read()
node_host = {v: k for k, v in node.items()}
ht = {}
for m in re.finditer(r"^Flow Roce_(\d+)_(\d+) \d+ finished at ([0-9.e+-]+)", out, re.M):
    ht[(node_host[int(m[1])], node_host[int(m[2])])] = float(m[3])
m = re.search(r"^New: (\d+) Rtx: (\d+)", out, re.M)
if not m:
    sys.exit("htsim printed no `New: N Rtx: M` line")
# This htsim never counts `New` (roce.cpp only zeroes it); `Rtx` it does.
ht_rtx = int(m[2])
# Its lossless input queues hold 15 packets and pause at 15: every pause
# overruns them by the packets in flight, which it reports and keeps.
ht_overruns = len(re.findall(r"LOSSLESS not working", out))
pairs = [tuple(p) for p in ranks["pairs"]]
if len(ht) != len(pairs):
    problems.append(f"htsim finished {len(ht)} of {len(pairs)} flows")
data_hops = sum(pkts * hops(a, b) for a, b in pairs)
ht_data = sum(pkts * hops(a, b) for a, b in pairs if (a, b) in ht) + 4 * ht_rtx
ht_hops = 2 * ht_data  # one ACK (or NACK) back per data packet received
ht_fct = [ht[p] for p in pairs if p in ht]

# railyard: the JSON report.
rep = json.load(open(f"{work}/railyard.json"))
ry = {}
for f in rep["flows"]:
    a, b = f["src"].split(".")[0], f["dst"].split(".")[0]
    if f.get("fct_us") is not None:
        ry[(a, b)] = f["fct_us"]
got = sorted((f["src"].split(".")[0], f["dst"].split(".")[0]) for f in rep["flows"])
if got != sorted(pairs):
    sys.exit("railyard's flows are not the permutation the connection matrix holds "
             "(roce/src/plan.rs derangement changed?)")
if len(ry) != len(pairs) or rep.get("timed_out"):
    problems.append(f"railyard finished {len(ry)} of {len(pairs)} flows")
fab = rep["fabric"]
eng = rep.get("engine") or {}
if "packet_hops" in eng:
    ry_hops, ry_hops_src = int(eng["packet_hops"]), "engine.packet_hops"
    ry_data = None
else:
    ack_every = 16
    acks = sum(math.ceil(pkts / ack_every) * hops(a, b) for a, b in pairs)
    ry_data = data_hops + 4 * fab.get("retransmissions", 0)
    ry_hops = ry_data + acks + 4 * (fab.get("naks", 0) + fab.get("cnp_sent", 0))
    ry_hops_src = "computed"
ry_engine_wall = eng.get("wall_s")
ry_fct = [ry[p] for p in pairs if p in ry]

ht_rate, ry_rate = ht_hops / ht_wall, ry_hops / ry_wall
ratio = ry_rate / ht_rate
cpu_ratio = (ry_hops / ry_cpu) / (ht_hops / ht_cpu) if ry_cpu > 0 and ht_cpu > 0 else 0.0
cross = [p for p in pairs if hops(*p) == 4]
ideal4, ideal2 = ideal_us(4), ideal_us(2)
slow = lambda fct: [fct[p] / ideal_us(hops(*p)) for p in pairs if p in fct]

summary = {
    "hosts": hosts, "leaves": leaves, "spines": spines, "link_mbps": speed,
    "payload_bytes": payload, "hop_latency_us": hop_us, "flow_bytes": size,
    "flows": len(pairs), "cross_leaf_flows": len(cross),
    "ideal_fct_us": {"cross_leaf": ideal4, "same_leaf": ideal2},
    "load_average": load,
    "htsim": {"fct_us": dist(ht_fct), "slowdown": dist(slow(ht)), "flows_done": len(ht),
              "wall_s": ht_wall, "wall_s_runs": ht_walls, "cpu_s": ht_cpu, "max_rss_kb": ht_rss,
              "packets_rtx": ht_rtx, "lossless_queue_overruns": ht_overruns,
              "packet_hops": ht_hops, "data_packet_hops": ht_data,
              "packet_hops_source": "computed", "packet_hops_per_s": ht_rate},
    "railyard": {"fct_us": dist(ry_fct), "slowdown": dist(slow(ry)), "flows_done": len(ry),
                 "wall_s": ry_wall, "cpu_s": ry_cpu, "max_rss_kb": ry_rss,
                 "run_wall_s": rep.get("wall_ms", 0) / 1e3, "engine": eng or None,
                 "packet_hops": ry_hops, "data_packet_hops": ry_data,
                 "packet_hops_source": ry_hops_src, "packet_hops_per_s": ry_rate,
                 "virtual_us": rep.get("virtual_us"),
                 "pfc_pause_frames": fab.get("pfc_pause_frames"),
                 "retransmissions": fab.get("retransmissions"),
                 "lossless_drops": fab.get("lossless_drops")},
    "problems": problems,
    "scenario_wall_ratio_htsim_over_railyard": ht_wall / ry_wall,
    "sim_speed_ratio_cpu_vs_htsim": cpu_ratio,
    "sim_speed_ratio_vs_htsim": ratio,
}

tab = sys.stderr if as_json else sys.stdout
p = lambda *a: print(*a, file=tab)
p()
p(f"sim benchmark: {hosts} hosts ({leaves} leaves x {per_leaf}, {spines} spines), {speed // 1000} Gb/s, "
  f"{payload} B payload, {hop_us} us/link, PFC, ECMP, no CC;")
p(f"  permutation of {size} B per host, {len(cross)} of {len(pairs)} flows across leaves; "
  f"load average {load:.2f} on {os.cpu_count()} cores")
p(f"  ideal FCT at line rate on an idle fabric: {ideal4:.1f} us across leaves, {ideal2:.1f} us within a leaf")
p(f"  {'FCT us':<9} {'done':>5} {'min':>8} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8} {'mean':>8}  slowdown p50/p99")
for name in ("htsim", "railyard"):
    d, s = summary[name]["fct_us"], summary[name]["slowdown"]
    if d:
        p(f"  {name:<9} {summary[name]['flows_done']:>5} "
          + " ".join(f"{d[x]:8.1f}" for x in ("min", "p50", "p90", "p99", "max", "mean"))
          + f"  {s['p50']:.2f} / {s['p99']:.2f}")
    else:
        p(f"  {name:<9} {0:>5}  (no flow finished)")
p(f"  {'speed':<9} {'wall s':>8} {'cpu s':>8} {'MB':>6} {'packet-hops':>12} {'hops/wall s':>12} {'hops/cpu s':>12}")
for name in ("htsim", "railyard"):
    s = summary[name]
    cpu_rate = s["packet_hops"] / s["cpu_s"] if s["cpu_s"] > 0 else 0
    p(f"  {name:<9} {s['wall_s']:8.3f} {s['cpu_s']:8.3f} {s['max_rss_kb'] / 1024:6.0f} {s['packet_hops']:>12,} "
      f"{s['packet_hops_per_s']:>12,.0f} {cpu_rate:>12,.0f}  ({s['packet_hops_source']})")
p(f"  htsim wall per run: {', '.join(f'{w:.3f}' for w in ht_walls)} s (the median counts); "
  f"railyard's own run timer: {summary['railyard']['run_wall_s']:.3f} s of {ry_wall:.3f}")
p(f"  data-packet-hops (htsim ACKs every packet, railyard every 16): {ht_data:,} htsim, "
  + (f"{ry_data:,} railyard" if ry_data is not None else "n/a railyard (engine count)"))
p(f"  htsim's lossless input queues went past their 15 packets {ht_overruns:,} times (it keeps the packets); "
  f"railyard: {fab.get('pfc_pause_frames', 0):,} PFC pause frames, {fab.get('lossless_drops', 0)} lossless drops")
if load > os.cpu_count():
    p(f"  note: the host was busy (load {load:.1f}); wall times are inflated, the cpu columns much less")
for pr in problems:
    p(f"  !! {pr}")
if as_json:
    print(json.dumps(summary, indent=2))
else:
    kv = {
        "htsim_wall_s": f"{ht_wall:.3f}", "htsim_cpu_s": f"{ht_cpu:.3f}",
        "htsim_packet_hops": ht_hops, "htsim_packet_hops_per_s": f"{ht_rate:.0f}",
        "htsim_fct_p50_us": f"{summary['htsim']['fct_us'].get('p50', 0):.1f}",
        "htsim_fct_p99_us": f"{summary['htsim']['fct_us'].get('p99', 0):.1f}",
        "railyard_wall_s": f"{ry_wall:.3f}", "railyard_cpu_s": f"{ry_cpu:.3f}",
        "railyard_packet_hops": ry_hops, "railyard_packet_hops_per_s": f"{ry_rate:.0f}",
        "railyard_fct_p50_us": f"{summary['railyard']['fct_us'].get('p50', 0):.1f}",
        "railyard_fct_p99_us": f"{summary['railyard']['fct_us'].get('p99', 0):.1f}",
        "ideal_fct_us": f"{ideal4:.1f}",
        "scenario_wall_ratio_htsim_over_railyard": f"{ht_wall / ry_wall:.4f}",
        "sim_speed_ratio_cpu_vs_htsim": f"{cpu_ratio:.4f}",
    }
    print()
    for k, v in kv.items():
        print(f"{k}={v}")
    print(f"sim_speed_ratio_vs_htsim={ratio:.4f}")
if problems:
    sys.exit(3)
EOF
case $summary_rc in
0) ;;
3) die "a simulator left flows unfinished (the !! lines above)" ;;
*) die "could not read the simulators' output (--keep keeps it)" ;;
esac
