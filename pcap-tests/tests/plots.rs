//! `replay --plot`: the pictures say what the replay did. A queue paused by
//! its peer fills to a known depth, crossing its WRED band (ECN marks) and
//! its ingress port's xOFF (pauses sent); the depth plot carries the
//! thresholds at their values, the events and that depth.

use std::net::IpAddr;

use railyard_control::replay::ReplayOptions;
use railyard_control::replay_plot::{queue_file, sojourn_file, write_all};
use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::model::{PgThresholds, SwitchModel, ThresholdUnit, WredModel};
use railyard_dataplane::wire::mac_control::{MacControlRepr, FRAME_LEN};
use railyard_pcap_tests::plan::{host_ip, host_mac, port_mac, routed_port};
use railyard_pcap_tests::{replay_model_with, Timed};

const SENDER: usize = 0;
const EGRESS: usize = 1;
const PRIO: usize = 3;
const FRAME: usize = 1000;
const FRAMES: u64 = 30;

/// Two 10G ports, DSCP 24 → queue 3, lossless with xOFF 10 KB / xON 5 KB,
/// WRED/ECN 5 KB–20 KB on queue 3.
fn model() -> SwitchModel {
    let interfaces = (0..2)
        .map(|i| {
            let mut m = routed_port(i);
            m.speed_mbps = Some(10_000);
            m.dscp_to_qos_group[24] = PRIO as u8;
            m.pfc.enabled_priorities = 1 << PRIO;
            m.pfc.pg[PRIO] = PgThresholds {
                xoff_bytes: 10_000,
                xon_bytes: 5_000,
                headroom_bytes: 1 << 20,
            };
            m.queues[PRIO].wred = Some(WredModel {
                min: 5_000,
                max: 20_000,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 100,
                weight: 0,
                ecn: true,
            });
            m
        })
        .collect();
    SwitchModel {
        hostname: "plots".into(),
        interfaces,
        ..SwitchModel::default()
    }
}

/// An ECN-capable RoCE-class frame to the host behind the egress port.
fn data(seq: u64) -> Vec<u8> {
    let mut s = FrameSpec::udp(
        host_mac(SENDER),
        port_mac(SENDER),
        IpAddr::V4(host_ip(SENDER)),
        IpAddr::V4(host_ip(EGRESS)),
    );
    s.frame_len = FRAME;
    s.dscp = 24;
    s.ecn = 2;
    build(&s, seq)
}

/// A PFC frame from the egress port's peer: `quanta` on priority 3.
fn pfc(quanta: u16) -> Vec<u8> {
    let mut q = [0u16; 8];
    q[PRIO] = quanta;
    let mut f = [0u8; FRAME_LEN];
    MacControlRepr::Pfc {
        enable: 1 << PRIO,
        quanta: q,
    }
    .emit_frame(host_mac(EGRESS), &mut f);
    f.to_vec()
}

/// The points of every `<polyline>` of an SVG, in drawing order.
fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline")
        .skip(1)
        .filter_map(|p| {
            let pts = p.split("points=\"").nth(1)?.split('"').next()?;
            Some(
                pts.split_whitespace()
                    .filter_map(|xy| {
                        let (x, y) = xy.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_paused_queue_plots_its_depth_thresholds_marks_and_pauses() {
    // The peer pauses queue 3 at 1 µs and resumes it at 40 µs; 30 frames
    // arrive 1 µs apart from 2 µs on, so from 31 µs to 40 µs the queue holds
    // all of them: 30 000 bytes.
    let sender: Vec<Timed> = (0..FRAMES).map(|k| (2_000 + k * 1_000, data(k))).collect();
    let peer: Vec<Timed> = vec![(1_000, pfc(0xffff)), (40_000, pfc(0))];
    let options = ReplayOptions {
        open_loop: true,
        plot_every: Some(1_000),
        ..ReplayOptions::default()
    };
    let run = replay_model_with(&model(), &[sender, peer], &options);
    let data = run.report.plot.as_ref().expect("plot samples");
    assert!(!data.thinned());
    // Times count from the first frame (the pause at 1 µs): 35 µs is 36 µs
    // on the trace's clock.
    let pts = data.queue_points(EGRESS, PRIO);
    let at = |t| pts.iter().find(|p| p.0 == t).map(|p| p.1).expect("sample");
    let full = at(35_000);
    assert_eq!(full.depth_bytes, FRAMES * FRAME as u64);
    assert_eq!(full.depth_packets, FRAMES);
    assert_eq!(full.pfc[2], 1, "one pause received by then");
    assert!(full.ecn_marked > 0);
    assert_eq!(pts.last().map(|p| p.1.depth_bytes), Some(0), "drained");
    // Only queues that moved: the egress queue, and the ingress port's
    // priority 3 where the pauses were sent.
    let keys: Vec<_> = data.queues.keys().copied().collect();
    assert_eq!(keys, vec![(SENDER, PRIO), (EGRESS, PRIO)]);
    let sent = data.queue_points(SENDER, PRIO);
    let last = sent.last().expect("samples").1;
    assert!(last.pfc[0] >= 1 && last.pfc[1] >= 1, "xOFF and xON sent");

    let dir = tempfile::tempdir().expect("tempdir");
    let files = write_all(dir.path(), data).expect("plots");
    assert!(files.len() >= 3, "{files:?}");
    let svg = std::fs::read_to_string(dir.path().join(queue_file("Ethernet1/2", PRIO)))
        .expect("queue plot");
    for text in [
        "queue depth: Ethernet1/2 queue 3",
        "virtual time (us)",
        "queued (KB)",
        "depth of queue 3",
        "WRED min 5 KB",
        "WRED max 20 KB",
        "PFC xOFF (ingress) 10 KB",
        "PFC xON (ingress) 5 KB",
        "ECN marked",
        "PFC pause received",
        "PFC resume received",
    ] {
        assert!(svg.contains(text), "{text:?} missing");
    }
    assert!(!svg.contains("PFC pause sent"), "sent on the other port");
    // After the axes: the depth line, then WRED min, max, xOFF, xON as
    // flat lines.
    let lines = polylines(&svg);
    assert!(lines.len() > 5, "{lines:?}");
    let lines = &lines[lines.len() - 5..];
    let depth = &lines[0];
    assert_eq!(depth.len(), pts.len());
    let flat: Vec<f64> = lines[1..]
        .iter()
        .map(|l| {
            assert_eq!(l.len(), 2);
            assert_eq!(l[0].1, l[1].1, "horizontal");
            l[0].1
        })
        .collect();
    // Pixels above the zero line, per KB: the same scale for all of them.
    let y0 = depth[0].1;
    let kb = |y: f64| y0 - y;
    let per_kb = kb(flat[0]) / 5.0;
    // Pixels are whole numbers: a few of rounding over 30 KB.
    let close = |a: f64, b: f64| (a - b).abs() <= 3.0;
    assert!(close(kb(flat[1]), 20.0 * per_kb), "WRED max");
    assert!(close(kb(flat[2]), 10.0 * per_kb), "xOFF");
    assert!(close(kb(flat[3]), 5.0 * per_kb), "xON");
    let i = pts.iter().position(|p| p.0 == 35_000).expect("35 us");
    assert!(close(kb(depth[i].1), 30.0 * per_kb), "30 KB at 35 us");

    let cdf = std::fs::read_to_string(dir.path().join(sojourn_file("Ethernet1/2", PRIO)))
        .expect("sojourn plot");
    assert!(cdf.contains("sojourn (us)") && cdf.contains("fraction of packets"));
    let t = &data.queues[&(EGRESS, PRIO)];
    assert_eq!(t.sojourn_cdf.last().map(|p| p.1), Some(1.0));
    // The first frame waited from 2 µs to the resume at 40 µs.
    assert!(t.sojourn_cdf.last().is_some_and(|p| p.0 >= 37_000));
}

#[test]
fn fine_samples_are_thinned_to_the_cap_and_keep_every_event() {
    let sender: Vec<Timed> = (0..FRAMES).map(|k| (2_000 + k * 1_000, data(k))).collect();
    let peer: Vec<Timed> = vec![(1_000, pfc(0xffff)), (40_000, pfc(0))];
    let options = ReplayOptions {
        open_loop: true,
        plot_every: Some(10),
        ..ReplayOptions::default()
    };
    let run = replay_model_with(&model(), &[sender, peer], &options);
    let data = run.report.plot.as_ref().expect("plot samples");
    // About 70 µs at 10 ns would be 7000 samples: more than the cap.
    assert!(data.thinned(), "every {}", data.every);
    assert!(data.times.len() < railyard_control::replay_plot::MAX_POINTS);
    assert!(data.times.windows(2).all(|w| w[0] < w[1]));
    let last = data.queue_points(EGRESS, PRIO).last().expect("samples").1;
    let q3 = &run.report.stats.interfaces["Ethernet1/2"].queues[PRIO];
    assert_eq!(last.ecn_marked, q3.ecn_marked, "no mark lost to thinning");
    assert_eq!((last.pfc[2], last.pfc[3]), (1, 1));
}
