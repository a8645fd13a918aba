#!/usr/bin/env bash
# A long run of a two-switch lab under traffic, reloads and faults, to show
# whether railyard's memory, descriptors and counters stay put. Needs root.
#
#   scripts/soak.sh [DURATION]        (default 30m; e.g. 90s, 10m, 2h)
#
# The lab: h1, h2, h3 on rail1, h4 on rail2, rail1-rail2 one cable, every
# link 1 Gb/s, the `rail-lossless` role (PFC on priority 3, watchdog on).
# Traffic for the whole run (railyard send, through the kernel stack):
#   incast    h1, h2, h3 -> h4, RoCEv2 DSCP 24 (lossless), 450 Mb/s each
#   CNPs      h4 -> h1, h2, h3, 200/s each
#   best effort h2 -> h1 at 100 Mb/s and h1 -> h4 at 50 Mb/s, DSCP 0
#   LLDP      between the switches (the agent's own, every 5 s)
# Every minute the first switch's configuration is reloaded, alternating a
# valid change and a file with an error (which must be refused). Every two
# minutes a fault, in turn: the rail1-rail2 cable down for 1 s; rail2 stopped
# (SIGSTOP) for 300 ms; the cable down for 3 s. A fault is survived when
# both switches are alive afterwards and h4 receives again within 5 s.
#
# Every 10 s each switch's RSS, open descriptors, threads, pool buffers
# touched and counters go to soak.csv; soak-rss.svg plots RSS. At the end,
# with traffic stopped, `railyard lab conservation` checks the counters.
# Ends with one line:
#   soak: rss_growth_kb_per_min=R fds_growth=F faults=S/T lossless_drops=L conservation=ok|broken
# R and F are the largest over the switches, measured over the second half
# of the run (after warm-up). L counts lossless-class drops other than
# `ingress_overflow` on host ports: hosts do not honour PFC, so what they
# send past a pause lands there (reported as host_pfc_ignored).
#
# SOAK_OUT=DIR keeps the CSV, plot, logs and configurations there (default
# a new directory under /tmp, printed). RAILYARD names a binary (default:
# cargo build --release).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

seconds() {
    local d=$1
    case $d in
        *h) echo $((${d%h} * 3600)) ;;
        *m) echo $((${d%m} * 60)) ;;
        *s) echo "${d%s}" ;;
        *[!0-9]*|'') echo "soak: bad duration '$d' (e.g. 90s, 10m, 2h)" >&2; exit 2 ;;
        *) echo "$d" ;;
    esac
}
case ${1:-} in -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
total=$(seconds "${1:-30m}")
(( total >= 60 )) || { echo "soak: run at least 60s" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "soak: needs root (network namespaces)" >&2; exit 2; }

if [[ -z ${RAILYARD:-} ]]; then
    (cd "$root" && cargo build --release -q -p railyard-control --bin railyard)
    RAILYARD="$root/target/release/railyard"
fi
out=${SOAK_OUT:-$(mktemp -d /tmp/railyard-soak.XXXXXX)}
mkdir -p "$out"
name="soak$$"
state=""
senders=()

cleanup() {
    local p
    for p in "${senders[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${senders[@]}"; do wait "$p" 2>/dev/null || true; done
    if [[ -n $state ]]; then
        RAILYARD_LAB_DIR="$out/labs" "$RAILYARD" lab down "$name" > /dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

cat > "$out/soak.topo" <<'EOF'
# The soak's lab: an incast across a switch-switch cable.
switch rail1 role rail-lossless
switch rail2 role rail-lossless
host h1
host h2
host h3
host h4
link h1:eth0 rail1:Ethernet1/1 speed 1000 subnet 10.1.1.0/24
link h2:eth0 rail1:Ethernet1/2 speed 1000 subnet 10.1.2.0/24
link h3:eth0 rail1:Ethernet1/3 speed 1000 subnet 10.1.3.0/24
link h4:eth0 rail2:Ethernet1/1 speed 1000 subnet 10.2.1.0/24
link rail1:Ethernet1/32 rail2:Ethernet1/32 speed 1000 subnet 10.255.0.0/31
EOF
export RAILYARD_LAB_DIR="$out/labs"
"$RAILYARD" lab up "$out/soak.topo" --name "$name" > "$out/lab-up.log" 2>&1 \
    || { cat "$out/lab-up.log" >&2; exit 1; }
state="$RAILYARD_LAB_DIR/$name"
pid_of() { python3 -c "import json,sys; print(next(s['pid'] for s in json.load(open('$state/state.json'))['switches'] if s['name']=='$1'))"; }
switches=(rail1 rail2)
declare -A pid
for s in "${switches[@]}"; do pid[$s]=$(pid_of "$s"); done
sock() { echo "$state/$1.sock"; }
ns() { echo "$name-$1"; }

send() { # HOST ARGS...
    local h=$1; shift
    ip netns exec "$(ns "$h")" "$RAILYARD" send --duration "$total" "$@" \
        > "$out/send-${#senders[@]}-$h.log" 2>&1 &
    senders+=($!)
}
for h in h1 h2 h3; do send "$h" --dst 10.2.1.2 --mbps 450 --size 1024 --flows 4; done
for n in 1 2 3; do send h4 --dst "10.1.$n.2" --cnp --rate 200; done
send h2 --dst 10.1.1.2 --mbps 100 --dscp 0 --dport 5001
send h1 --dst 10.2.1.2 --mbps 50 --dscp 0 --dport 5002

h4_rx() { ip netns exec "$(ns h4)" cat /sys/class/net/eth0/statistics/rx_packets; }
alive() { kill -0 "${pid[rail1]}" 2>/dev/null && kill -0 "${pid[rail2]}" 2>/dev/null; }
# Whether h4 receives again within 5 s.
flowing() {
    local before now i
    before=$(h4_rx)
    for i in $(seq 1 50); do
        sleep 0.1
        now=$(h4_rx)
        (( now > before )) && return 0
    done
    return 1
}

csv="$out/soak.csv"
echo "time_s,switch,rss_kb,fds,threads,pool_touched,rx_packets,tx_packets,drops,lossless_drops,host_pfc_ignored,pfc_pause_tx" > "$csv"
sample() { # T
    local s p stats
    for s in "${switches[@]}"; do
        p=${pid[$s]}
        stats=$("$RAILYARD" show interface --json --socket "$(sock "$s")" 2>/dev/null) || stats='{}'
        python3 - "$1" "$s" "$p" "$stats" >> "$csv" <<'PY'
import json, os, sys
t, name, pid, text = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
rss = int(status["VmRSS"].split()[0])
threads = int(status["Threads"])
fds = len(os.listdir(f"/proc/{pid}/fd"))
s = json.loads(text or "{}")
ifs = s.get("interfaces", {})
rx = sum(i["rx_packets"] for i in ifs.values())
tx = sum(i["tx_packets"] for i in ifs.values())
drops = sum(sum(i["drops"].values()) for i in ifs.values())
lossless = ignored = pause = 0
for port, i in ifs.items():
    enabled = i["pfc"]["enabled"]
    pause += sum(i["pfc"]["tx_pause"])
    for q in i["queues"]:
        if enabled >> q["queue"] & 1:
            lossless += q["wred_drops"] + q["tail_drops"] + q["watchdog_drops"]
    overflow = i["drops"].get("ingress_overflow", 0)
    # Host ports are Ethernet1/1-3 (rail1) and Ethernet1/1 (rail2); the
    # cable is Ethernet1/32.
    if port == "Ethernet1/32":
        lossless += overflow
    else:
        ignored += overflow
touched = s.get("pool", {}).get("touched", 0)
print(f"{t},{name},{rss},{fds},{threads},{touched},{rx},{tx},{drops},{lossless},{ignored},{pause}")
PY
    done
}

conf1="$state/rail1.conf"
cp "$conf1" "$out/rail1.orig.conf"
reloads=0 reloads_ok=0 faults=0 survived=0
reload_next() {
    local f="$out/rail1.reload.conf" ok
    reloads=$((reloads + 1))
    if (( reloads % 2 == 1 )); then
        # A valid change: the cable's description.
        sed "s|^interface Ethernet1/32$|interface Ethernet1/32\n  description soak reload $reloads|" \
            "$out/rail1.orig.conf" > "$f"
        "$RAILYARD" reload "$f" --socket "$(sock rail1)" >> "$out/reloads.log" 2>&1 && ok=1 || ok=0
    else
        { cat "$out/rail1.orig.conf"; printf 'interface Ethernet1/32\n  speed fast\n'; } > "$f"
        "$RAILYARD" reload "$f" --socket "$(sock rail1)" >> "$out/reloads.log" 2>&1 && ok=0 || ok=1
    fi
    (( ok )) && alive && reloads_ok=$((reloads_ok + 1))
    echo "$(date +%T) reload $reloads ($([[ $((reloads % 2)) == 1 ]] && echo valid || echo invalid)): $([[ $ok == 1 ]] && echo as expected || echo UNEXPECTED)" >> "$out/events.log"
}
cable="e1-32"
fault_next() {
    local kind=$((faults % 3)) what
    faults=$((faults + 1))
    case $kind in
        0) what="cable down 1 s"
           ip -n "$(ns rail1)" link set "$cable" down; sleep 1; ip -n "$(ns rail1)" link set "$cable" up ;;
        1) what="rail2 stopped 300 ms"
           kill -STOP "${pid[rail2]}"; sleep 0.3; kill -CONT "${pid[rail2]}" ;;
        2) what="cable down 3 s"
           ip -n "$(ns rail1)" link set "$cable" down; sleep 3; ip -n "$(ns rail1)" link set "$cable" up ;;
    esac
    local result="survived"
    if alive && flowing; then survived=$((survived + 1)); else result="FAILED"; fi
    echo "$(date +%T) fault $faults ($what): $result" >> "$out/events.log"
}

echo "soak: lab $name, $total s, output in $out" >&2
start=$(date +%s)
t=0
sample 0
while (( t < total )); do
    sleep $(( 10 - ($(date +%s) - start) % 10 ))
    t=$(( $(date +%s) - start ))
    alive || { echo "soak: a switch exited" >&2; tail -20 "$state"/*.log >&2; break; }
    if (( t >= 60 && t % 60 < 10 )); then reload_next; fi
    if (( t % 120 >= 30 && t % 120 < 40 )); then fault_next; fi
    sample "$t"
    printf '\r  %5d / %d s  faults %d/%d  reloads %d/%d ' "$t" "$total" "$survived" "$faults" \
        "$reloads_ok" "$reloads" >&2
done
echo >&2
for p in "${senders[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${senders[@]}"; do wait "$p" 2>/dev/null || true; done
senders=()
sleep 3
if "$RAILYARD" lab conservation "$name" > "$out/conservation.txt" 2>&1; then
    conservation=ok
else
    conservation=broken
    cat "$out/conservation.txt" >&2
fi

python3 - "$csv" "$out/soak-rss.svg" "$faults" "$survived" "$reloads" "$reloads_ok" "$conservation" <<'PY'
import csv, sys
path, svg, faults, survived, reloads, reloads_ok, conservation = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
by = {}
for r in rows:
    by.setdefault(r["switch"], []).append(r)
end = max(int(r["time_s"]) for r in rows)
half = end / 2
growth, fds_growth, lossless, ignored = 0.0, 0, 0, 0
for name, rs in by.items():
    second = [r for r in rs if int(r["time_s"]) >= half]
    a, b = second[0], second[-1]
    minutes = max((int(b["time_s"]) - int(a["time_s"])) / 60, 1 / 60)
    growth = max(growth, (int(b["rss_kb"]) - int(a["rss_kb"])) / minutes)
    fds_growth = max(fds_growth, int(b["fds"]) - int(a["fds"]))
    lossless += int(rs[-1]["lossless_drops"])
    ignored += int(rs[-1]["host_pfc_ignored"])
    print(f"  {name}: RSS {rs[0]['rss_kb']} kB at start, {a['rss_kb']} kB at {a['time_s']} s, "
          f"{b['rss_kb']} kB at {b['time_s']} s; pool buffers touched {b['pool_touched']}; "
          f"fds {b['fds']}, threads {b['threads']}", file=sys.stderr)
print(f"  reloads {reloads_ok}/{reloads} as expected; host_pfc_ignored={ignored}", file=sys.stderr)

# The plot: RSS per switch over time.
W, H, L, B = 720, 360, 70, 40
ymax = max(int(r["rss_kb"]) for r in rows) * 1.1 / 1024
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W/2}" y="18" text-anchor="middle">railyard soak: resident memory per switch</text>',
         f'<line x1="{L}" y1="{H-B}" x2="{W-20}" y2="{H-B}" stroke="black"/>',
         f'<line x1="{L}" y1="30" x2="{L}" y2="{H-B}" stroke="black"/>',
         f'<text x="{(W+L)/2}" y="{H-8}" text-anchor="middle">time (s)</text>',
         f'<text x="14" y="{H/2}" transform="rotate(-90 14 {H/2})" text-anchor="middle">RSS (MB)</text>']
x = lambda t: L + (W - 20 - L) * t / max(end, 1)
y = lambda mb: H - B - (H - B - 30) * mb / ymax
for k in range(5):
    mb = ymax * k / 4
    parts.append(f'<text x="{L-6}" y="{y(mb)+4:.1f}" text-anchor="end">{mb:.0f}</text>')
    t = end * k / 4
    parts.append(f'<text x="{x(t):.1f}" y="{H-B+16}" text-anchor="middle">{t:.0f}</text>')
for i, (name, rs) in enumerate(sorted(by.items())):
    pts = " ".join(f"{x(int(r['time_s'])):.1f},{y(int(r['rss_kb'])/1024):.1f}" for r in rs)
    c = colours[i % len(colours)]
    parts.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{pts}"/>')
    parts.append(f'<text x="{L+10}" y="{44+16*i}" fill="{c}">{name}</text>')
parts.append("</svg>")
open(svg, "w").write("\n".join(parts) + "\n")
print(f"soak: rss_growth_kb_per_min={growth:.1f} fds_growth={fds_growth} "
      f"faults={survived}/{faults} lossless_drops={lossless} conservation={conservation}")
PY
