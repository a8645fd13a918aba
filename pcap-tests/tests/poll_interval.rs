//! `railyard replay --poll-interval`: the switch polls as a live worker
//! does, receiving what arrived since the last poll as one burst. It must
//! deliver exactly what the exact replay delivers, in the same order, no
//! earlier than the exact replay and at most about one interval later, in
//! far fewer polls.

use std::net::IpAddr;

use railyard_control::replay::ReplayOptions;
use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::model::SwitchModel;
use railyard_pcap_tests::plan::{host_ip, host_mac, port_mac, routed_port};
use railyard_pcap_tests::{replay_model_with, ModelRun, Timed};

const FRAMES: u64 = 2_000;
/// 64-byte frames every 10 ns on a 100 Gb/s port: two thirds of line rate.
const GAP: u64 = 10;
const INTERVAL: u64 = 1_000;
/// One 64-byte frame's time on a 100 Gb/s wire (84 bytes with preamble
/// and gap), rounded up.
const FRAME_TIME: u64 = 7;

fn run(poll_interval: u64) -> ModelRun {
    let interfaces = (0..2)
        .map(|i| {
            let mut m = routed_port(i);
            m.speed_mbps = Some(100_000);
            m
        })
        .collect();
    let model = SwitchModel {
        interfaces,
        ..SwitchModel::default()
    };
    let spec = FrameSpec::udp(
        host_mac(0),
        port_mac(0),
        IpAddr::V4(host_ip(0)),
        IpAddr::V4(host_ip(1)),
    );
    let trace: Vec<Timed> = (0..FRAMES)
        .map(|k| (1_000 + k * GAP, build(&spec, k)))
        .collect();
    let options = ReplayOptions {
        poll_interval,
        ..ReplayOptions::default()
    };
    replay_model_with(&model, &[trace, Vec::new()], &options)
}

#[test]
fn polling_every_microsecond_delivers_the_same_frames_at_most_one_interval_later() {
    let exact = run(0);
    let polled = run(INTERVAL);
    assert_eq!(exact.out[1].len(), FRAMES as usize);
    assert_eq!(polled.out[1].len(), FRAMES as usize);
    for (k, ((t_exact, f_exact), (t_polled, f_polled))) in
        exact.out[1].iter().zip(&polled.out[1]).enumerate()
    {
        assert_eq!(
            f_exact, f_polled,
            "frame {k}: same frames in the same order"
        );
        assert!(
            (*t_exact..=t_exact + INTERVAL + FRAME_TIME).contains(t_polled),
            "frame {k}: left at {t_polled} ns, exact replay {t_exact} ns"
        );
    }
    // Exact: a poll per arrival. Polled: about one per microsecond of the
    // 20 µs trace.
    assert!(exact.report.polls >= FRAMES, "{}", exact.report.polls);
    assert!(
        polled.report.polls * 20 < exact.report.polls,
        "{} polls against {}",
        polled.report.polls,
        exact.report.polls
    );
    let sent = |r: &ModelRun| r.report.stats.interfaces["Ethernet1/2"].tx_packets;
    assert_eq!(sent(&polled), FRAMES);
    assert_eq!(sent(&exact), FRAMES);
}
