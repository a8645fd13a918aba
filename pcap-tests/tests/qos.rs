//! Egress QoS end to end: an incast replayed through a port shaped to its
//! speed, with the book's RoCEv2 policy (DSCP 24 → qos-group 3 with WRED/ECN,
//! DSCP 48 → qos-group 7 strict priority). The model is built by hand.

use std::collections::HashMap;
use std::net::IpAddr;

use railyard_control::replay::ReplayReport;
use railyard_control::traffic::{build, FrameSpec, Transport, BTH_CNP, BTH_RC_WRITE_ONLY};
use railyard_dataplane::model::{QueueModel, SwitchModel, ThresholdUnit, WredModel, KBYTE};
use railyard_dataplane::qos::shaper::{serialisation_ps, wire_bytes, PS_PER_NS};
use railyard_dataplane::stats::SwitchStats;
use railyard_pcap_tests::plan::{host_ip, host_mac, port_mac, routed_port};
use railyard_pcap_tests::{ipv4_checksum_ok, replay_model, ModelRun, Timed};

const SPEED_MBPS: u32 = 10_000;
const LINE_BPS: u64 = SPEED_MBPS as u64 * 1_000_000;
const SENDERS: usize = 3;
const EGRESS: usize = SENDERS; // Ethernet1/4
const FRAME: usize = 1024;
const WRED_MIN: u64 = 150 * KBYTE;
const WRED_MAX: u64 = 3000 * KBYTE;
const WRED_P: f64 = 0.07;

/// Four 10G ports; the book's classification on every port and its egress
/// policy (q3 `bandwidth remaining percent 50` with WRED 150 KB–3000 KB, 7 %,
/// weight 0, ecn; q7 `priority level 1`) over the NX-OS defaults.
fn model() -> SwitchModel {
    let interfaces = (0..=SENDERS)
        .map(|i| {
            let mut m = routed_port(i);
            m.mtu = 9216;
            m.speed_mbps = Some(SPEED_MBPS);
            m.dscp_to_qos_group[24] = 3;
            m.dscp_to_qos_group[48] = 7;
            // NX-OS's default-8q-out-policy, written out.
            m.queues = std::array::from_fn(|q| QueueModel {
                priority_level: (q == 7).then_some(1),
                bandwidth_remaining_percent: match q {
                    7 => None,
                    0 => Some(100),
                    _ => Some(0),
                },
                ..QueueModel::default()
            });
            m.queues[3].bandwidth_remaining_percent = Some(50);
            m.queues[3].wred = Some(WredModel {
                min: WRED_MIN,
                max: WRED_MAX,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 7,
                weight: 0,
                ecn: true,
            });
            m
        })
        .collect();
    SwitchModel {
        hostname: "incast".into(),
        interfaces,
        ..SwitchModel::default()
    }
}

/// A frame from host `i` to the host behind the egress port.
fn frame(i: usize, dscp: u8, len: usize, seq: u64) -> Vec<u8> {
    let mut s = FrameSpec::udp(
        host_mac(i),
        port_mac(i),
        IpAddr::V4(host_ip(i)),
        IpAddr::V4(host_ip(EGRESS)),
    );
    s.frame_len = len;
    s.dscp = dscp;
    s.ecn = 2; // ECT(0)
    s.src_port = 49152 + i as u16;
    s.transport = Transport::Roce {
        opcode: if dscp == 48 {
            BTH_CNP
        } else {
            BTH_RC_WRITE_ONLY
        },
        dest_qp: i as u32,
        psn: seq as u32,
    };
    build(&s, seq)
}

/// Sender `i`'s trace at full line rate: `n` RoCEv2 frames back to back,
/// starting at `start` ns, with a CNP after every 50th frame when `cnps`.
fn line_rate_trace(i: usize, n: u64, start: u64, cnps: bool) -> Vec<Timed> {
    let mut t_ps = start * PS_PER_NS;
    let mut out = Vec::new();
    let mut seq = 0;
    for k in 0..n {
        let mut frames = vec![frame(i, 24, FRAME, seq)];
        if cnps && k % 50 == 49 {
            frames.push(frame(i, 48, 64, seq + 1));
        }
        for f in frames {
            out.push((t_ps.div_ceil(PS_PER_NS), f));
            t_ps += serialisation_ps(wire_bytes(out.last().map_or(0, |o| o.1.len())), LINE_BPS);
            seq += 1;
        }
    }
    out
}

/// A finished replay and its traces.
struct Run {
    report: ReplayReport,
    inputs: Vec<Vec<Timed>>,
    sent: Vec<Timed>,
}

fn replay(model: &SwitchModel, inputs: Vec<Vec<Timed>>) -> Run {
    let ModelRun { report, mut out } = replay_model(model, &inputs, false);
    Run {
        report,
        inputs,
        sent: std::mem::take(&mut out[EGRESS]),
    }
}

/// received = sent + dropped (by reason) + still queued, for the switch and
/// for every queue; queue drops match the port's drop reasons.
fn assert_conserved(stats: &SwitchStats) {
    let mut rx = 0;
    let mut tx = 0;
    let mut drops = 0;
    let mut queued = 0;
    for (name, ifc) in &stats.interfaces {
        rx += ifc.rx_packets;
        tx += ifc.tx_packets;
        drops += ifc.total_drops();
        let mut wred = 0;
        let mut tail = 0;
        for q in &ifc.queues {
            assert_eq!(
                q.offered_packets,
                q.tx_packets + q.wred_drops + q.tail_drops + q.depth_packets,
                "{name} queue {} does not conserve packets",
                q.queue
            );
            assert_eq!(
                q.offered_bytes,
                q.tx_bytes + q.wred_drop_bytes + q.tail_drop_bytes + q.depth_bytes,
                "{name} queue {} does not conserve bytes",
                q.queue
            );
            wred += q.wred_drops;
            tail += q.tail_drops;
            queued += q.depth_packets;
        }
        assert_eq!(ifc.drops["wred"], wred, "{name}");
        assert_eq!(ifc.drops["tail_drop"], tail, "{name}");
    }
    assert_eq!(rx, tx + drops + queued, "switch-wide conservation");
}

/// Which sender a forwarded frame came from, and its sequence number.
fn origin(f: &[u8]) -> (usize, u64) {
    let sender = usize::from(f[14 + 14]) - 1; // third octet of 10.0.N.2
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&f[54..62]);
    (sender, u64::from_be_bytes(seq))
}

#[test]
fn incast_marks_ce_from_the_wred_minimum_and_departs_at_line_rate() {
    let model = model();
    // Three senders at 10 Gb/s into one 10 Gb/s port: the queue grows at
    // twice line rate, through the WRED band and past its maximum.
    // Sender 0 (which also sends CNPs) starts off the egress port's frame
    // grid, so its CNPs arrive while a frame is on the wire.
    let n = 1800;
    let inputs: Vec<Vec<Timed>> = (0..SENDERS)
        .map(|i| line_rate_trace(i, n, [400, 0, 10][i], i == 0))
        .collect();
    let run = replay(&model, inputs);
    let stats = &run.report.stats;
    assert_conserved(stats);
    let egress = &stats.interfaces["Ethernet1/4"];
    let total_in: usize = run.inputs.iter().map(Vec::len).sum();
    assert_eq!(
        run.sent.len(),
        total_in,
        "nothing dropped: ECT is marked, not dropped"
    );
    assert_eq!(egress.tx_packets as usize, total_in);
    assert_eq!(egress.total_drops(), 0);

    // Departures obey the port speed: the port is busy from the first frame
    // to the last, each frame starting exactly one serialisation time after
    // the previous one (in picoseconds, reported rounded up to the ns).
    let mut t_ps = run.sent[0].0 * PS_PER_NS;
    for w in run.sent.windows(2) {
        t_ps += serialisation_ps(wire_bytes(w[0].1.len()), LINE_BPS);
        assert_eq!(w[1].0, t_ps.div_ceil(PS_PER_NS), "departure off line rate");
    }
    // Every frame forwarded intact apart from TTL, MACs and ECN.
    assert!(run.sent.iter().all(|(_, f)| ipv4_checksum_ok(f, 14)));

    // Rebuild each RoCEv2 frame's arrival and departure, then the bytes of
    // queue 3 each one found when it arrived (frames arriving at the same ns
    // are taken in port order, as the switch polls; a frame departing at T
    // was still queued for arrivals at T).
    let arrival: HashMap<(usize, u64), (u64, usize)> = run
        .inputs
        .iter()
        .enumerate()
        .flat_map(|(i, tr)| tr.iter().map(move |(t, f)| (origin(f), (*t, i))))
        .collect();
    struct Seen {
        arrived: (u64, usize),
        departed: u64,
        len: u64,
        marked: bool,
    }
    let mut data: Vec<Seen> = run
        .sent
        .iter()
        .filter(|(_, f)| f[15] >> 2 == 24)
        .map(|(t, f)| Seen {
            arrived: arrival[&origin(f)],
            departed: *t,
            len: f.len() as u64,
            marked: f[15] & 3 == 3,
        })
        .collect();
    data.sort_by_key(|s| s.arrived);
    let depths: Vec<u64> = (0..data.len())
        .map(|k| {
            data[..k]
                .iter()
                .filter(|e| e.departed >= data[k].arrived.0)
                .map(|e| e.len)
                .sum()
        })
        .collect();
    let mut expected_in_band = 0.0;
    let mut marked_in_band = 0.0;
    let mut in_band = 0;
    let mut above_max = 0;
    for (s, &depth) in data.iter().zip(&depths) {
        if s.marked {
            assert!(depth >= WRED_MIN, "marked at depth {depth} < minimum");
        }
        if depth >= WRED_MAX {
            assert!(s.marked, "unmarked at depth {depth} ≥ maximum");
            above_max += 1;
        } else if depth >= WRED_MIN {
            in_band += 1;
            expected_in_band += WRED_P * (depth - WRED_MIN) as f64 / (WRED_MAX - WRED_MIN) as f64;
            if s.marked {
                marked_in_band += 1.0;
            }
        }
    }
    // Marking starts soon after the queue crosses the minimum.
    let first_mark = data
        .iter()
        .position(|s| s.marked)
        .expect("frames were marked");
    let crossed = depths
        .iter()
        .position(|d| *d >= WRED_MIN)
        .expect("queue crossed the minimum");
    assert!(first_mark >= crossed);
    assert!(
        depths[first_mark] < WRED_MIN + 1024 * KBYTE,
        "first mark at {} bytes, long after the minimum",
        depths[first_mark]
    );
    assert!(
        in_band > 1000 && above_max > 100,
        "{in_band} in band, {above_max} above"
    );
    // Inside the band the marks follow the curve (binomial, 5 σ).
    assert!(
        (marked_in_band - expected_in_band).abs() <= 5.0 * expected_in_band.sqrt() + 1.0,
        "{marked_in_band} marks in the band, the curve expects {expected_in_band:.1}"
    );
    let marks = data.iter().filter(|s| s.marked).count();
    let q3 = &egress.queues[3];
    assert_eq!(q3.ecn_marked as usize, marks);
    assert!(q3.max_depth_bytes > WRED_MAX);
    assert_eq!(q3.wred_drops, 0);

    // CNPs ride the strict-priority queue: however deep queue 3 is, a CNP
    // waits at most for the frame on the wire (plus one more for rounding).
    let cnp_wait = serialisation_ps(wire_bytes(FRAME), LINE_BPS).div_ceil(PS_PER_NS);
    let q7 = &egress.queues[7];
    assert_eq!(q7.tx_packets, n / 50);
    assert!(q7.latency_ns.max > 0, "CNPs did find the wire busy");
    assert!(
        q7.latency_ns.max <= 2 * cnp_wait,
        "CNP sojourn {:?} vs frame time {cnp_wait} ns",
        q7.latency_ns
    );
    assert!(q3.latency_ns.p99 > 100 * cnp_wait, "{:?}", q3.latency_ns);
    for (t, f) in run.sent.iter().filter(|(_, f)| f[15] >> 2 == 48) {
        let (at, _) = arrival[&origin(f)];
        assert!(t - at <= 2 * cnp_wait, "CNP waited {} ns", t - at);
    }
}

#[test]
fn replay_is_reproducible_and_unshaped_ports_keep_todays_timing() {
    let model = model();
    let inputs: Vec<Vec<Timed>> = (0..SENDERS)
        .map(|i| line_rate_trace(i, 600, i as u64 * 10, false))
        .collect();
    let a = replay(&model, inputs.clone());
    let b = replay(&model, inputs.clone());
    assert_eq!(a.sent, b.sent, "same seed, same marks, same times");
    assert!(a.report.stats.interfaces["Ethernet1/4"].queues[3].ecn_marked > 0);
    assert_conserved(&a.report.stats);
    // A different seed marks different frames.
    let mut reseeded = model.clone();
    reseeded.random_seed ^= 1;
    let c = replay(&reseeded, inputs.clone());
    assert_ne!(a.sent, c.sent);

    // Without a speed, frames leave when they arrive and nothing queues.
    let mut unshaped = model;
    for i in &mut unshaped.interfaces {
        i.speed_mbps = None;
    }
    let u = replay(&unshaped, inputs.clone());
    let arrivals: Vec<u64> = {
        let mut t: Vec<u64> = inputs.iter().flatten().map(|(t, _)| *t).collect();
        t.sort_unstable();
        t
    };
    let departures: Vec<u64> = u.sent.iter().map(|(t, _)| *t).collect();
    assert_eq!(departures, arrivals);
    let q3 = &u.report.stats.interfaces["Ethernet1/4"].queues[3];
    assert_eq!((q3.ecn_marked, q3.max_depth_bytes), (0, FRAME as u64));
    assert_conserved(&u.report.stats);
}
