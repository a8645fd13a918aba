//! Priority flow control end to end, in virtual time: pause frames received
//! on the egress port hold its lossless queue for exactly quanta × 512 bit
//! times; a congested ingress port sends XOFF at its threshold, absorbs its
//! headroom, drops beyond it, and sends XON once drained below xON.

use std::net::IpAddr;

use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::model::{PgThresholds, SwitchModel};
use railyard_dataplane::pfc::quanta_ns;
use railyard_dataplane::wire::mac_control::{MacControlRepr, FRAME_LEN};
use railyard_dataplane::wire::MacAddr;
use railyard_pcap_tests::plan::{host_ip, host_mac, port_mac, routed_port};
use railyard_pcap_tests::{replay_model, two_ring_workers, ModelRun, Timed};

const SENDER: usize = 0;
const EGRESS: usize = 1;
const PRIO: usize = 3;
const FRAME: usize = 1000;

/// Two ports at `speed` (None: no shaping, pause timed at 100 Gb/s); DSCP 24
/// → qos-group 3, lossless on both ports when `pfc`.
fn model(speed: Option<u32>, pfc: bool, pg: PgThresholds) -> SwitchModel {
    let interfaces = (0..2)
        .map(|i| {
            let mut m = routed_port(i);
            m.speed_mbps = speed;
            m.dscp_to_qos_group[24] = PRIO as u8;
            if pfc {
                m.pfc.enabled_priorities = 1 << PRIO;
            }
            m.pfc.pg[PRIO] = pg;
            m
        })
        .collect();
    SwitchModel {
        hostname: "pfc".into(),
        interfaces,
        ..SwitchModel::default()
    }
}

/// A frame from the sender to the host behind the egress port with `dscp`
/// (not ECN-capable), 802.1Q-tagged with priority `pcp` if given.
fn frame(dscp: u8, pcp: Option<u16>, seq: u64) -> Vec<u8> {
    let mut s = FrameSpec::udp(
        host_mac(SENDER),
        port_mac(SENDER),
        IpAddr::V4(host_ip(SENDER)),
        IpAddr::V4(host_ip(EGRESS)),
    );
    s.frame_len = FRAME;
    s.dscp = dscp;
    s.vlan_tci = pcp.map(|p| p << 13);
    build(&s, seq)
}

/// A RoCE-class frame (DSCP 24, untagged).
fn data(seq: u64) -> Vec<u8> {
    frame(24, None, seq)
}

/// A PFC frame from the egress port's peer pausing `priority` for `quanta`.
fn pause(priority: usize, quanta: u16) -> Vec<u8> {
    let mut q = [0u16; 8];
    q[priority] = quanta;
    let mut f = [0u8; FRAME_LEN];
    MacControlRepr::Pfc {
        enable: 1 << priority,
        quanta: q,
    }
    .emit_frame(host_mac(EGRESS), &mut f);
    f.to_vec()
}

/// A PFC frame from the egress port's peer pausing priority 3 for `quanta`.
fn pfc(quanta: u16) -> Vec<u8> {
    pause(PRIO, quanta)
}

type Run = ModelRun;

/// Open loop: these tests drive the switch past its thresholds on purpose.
fn replay(model: &SwitchModel, inputs: Vec<Vec<Timed>>) -> Run {
    replay_model(model, &inputs, true)
}

/// Departure time of each data frame leaving the egress port.
fn departures(run: &Run) -> Vec<u64> {
    run.out[EGRESS]
        .iter()
        .filter(|(_, f)| f.len() == FRAME)
        .map(|(t, _)| *t)
        .collect()
}

#[test]
fn pause_lasts_quanta_times_512_bit_times_at_two_speeds() {
    for speed in [Some(10_000), None, Some(400_000)] {
        let m = model(speed, true, roomy());
        let quanta = 1000;
        let run = replay(&m, vec![vec![(2_000, data(0))], vec![(1_000, pfc(quanta))]]);
        let expect = 1_000 + quanta_ns(quanta, speed);
        assert_eq!(departures(&run), vec![expect], "speed {speed:?}");
        let e = &run.report.stats.interfaces["Ethernet1/2"];
        assert_eq!(e.pfc.rx_pause[PRIO], 1);
        assert_eq!(e.pfc.paused_ns[PRIO], quanta_ns(quanta, speed));
    }
    // 1000 quanta = 512 000 bit times: 51.2 µs at 10G, 5.12 µs at 100G.
    assert_eq!(quanta_ns(1000, Some(10_000)), 51_200);
    assert_eq!(quanta_ns(1000, None), 5_120);
}

#[test]
fn a_new_frame_reloads_and_quanta_zero_resumes() {
    let speed = Some(10_000);
    let m = model(speed, true, roomy());
    let d = quanta_ns(1000, speed);
    // Reload: a second XOFF half-way restarts the full pause time.
    let run = replay(
        &m,
        vec![
            vec![(2_000, data(0))],
            vec![(1_000, pfc(1000)), (1_000 + d / 2, pfc(1000))],
        ],
    );
    assert_eq!(departures(&run), vec![1_000 + d / 2 + d]);
    // Resume: quanta 0 releases at once.
    let run = replay(
        &m,
        vec![
            vec![(2_000, data(0))],
            vec![(1_000, pfc(1000)), (5_000, pfc(0))],
        ],
    );
    assert_eq!(departures(&run), vec![5_000]);
    let e = &run.report.stats.interfaces["Ethernet1/2"];
    assert_eq!((e.pfc.rx_pause[PRIO], e.pfc.rx_resume[PRIO]), (1, 1));
    assert_eq!(e.pfc.paused_ns[PRIO], 4_000);
}

#[test]
fn pause_8023x_pauses_every_queue_only_without_pfc() {
    let speed = Some(10_000);
    let mut pause = [0u8; FRAME_LEN];
    MacControlRepr::Pause { quanta: 1000 }.emit_frame(host_mac(EGRESS), &mut pause);
    let inputs = || vec![vec![(2_000, data(0))], vec![(1_000, pause.to_vec())]];
    let run = replay(&model(speed, false, roomy()), inputs());
    assert_eq!(departures(&run), vec![1_000 + quanta_ns(1000, speed)]);
    // With PFC on the port, PAUSE is not honoured.
    let run = replay(&model(speed, true, roomy()), inputs());
    assert_eq!(departures(&run), vec![2_000]);
}

#[test]
fn bad_mac_control_frames_are_counted_and_dropped() {
    let m = model(None, true, roomy());
    let mut unknown = pfc(0xFFFF);
    unknown[14..16].copy_from_slice(&[0x00, 0x02]);
    let short = pfc(0xFFFF)[..20].to_vec();
    let run = replay(
        &m,
        vec![
            vec![(2_000, data(0))],
            vec![(1_000, unknown), (1_100, short)],
        ],
    );
    assert_eq!(departures(&run), vec![2_000], "nothing paused");
    let e = &run.report.stats.interfaces["Ethernet1/2"];
    assert_eq!(e.drops["bad_mac_control"], 2);
    assert_eq!(e.pfc.rx_pause[PRIO], 0);
}

/// REFERENCE §1's XOFF for priority 3, 0xFFFF quanta, from `src`.
fn reference_xoff(src: MacAddr) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&[
        0x88, 0x08, 0x01, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]);
    f.resize(60, 0);
    f
}

/// The PFC frames a port sent: (time, priority-3 quanta).
fn pfc_sent(run: &Run, port: usize) -> Vec<(u64, u16)> {
    run.out[port]
        .iter()
        .filter(|(_, f)| f.len() == FRAME_LEN && f[12..14] == [0x88, 0x08])
        .map(|(t, f)| (*t, u16::from_be_bytes([f[24], f[25]])))
        .collect()
}

const XOFF: u64 = 10 * FRAME as u64;
const XON: u64 = 5 * FRAME as u64;
const HEADROOM: u64 = 5 * FRAME as u64;

/// The lossless thresholds of the buffer tests: ten frames to xOFF, five
/// more of headroom, xON at five.
fn thresholds() -> PgThresholds {
    PgThresholds {
        xoff_bytes: XOFF,
        xon_bytes: XON,
        headroom_bytes: HEADROOM,
    }
}

/// The SONiC buffer threshold test: with the egress paused, fill the
/// ingress priority group to one below xOFF (no PFC, no drop), one more
/// (exactly one XOFF), to the end of the headroom (no drop), one more (one
/// `ingress_overflow`); release the egress and see exactly one XON.
#[test]
fn xoff_at_threshold_headroom_then_overflow_and_one_xon() {
    let mut m = model(Some(10_000), true, thresholds());
    // A queue limit of two frames: lossless traffic ignores it.
    m.interfaces[EGRESS].queues[PRIO].limit =
        railyard_dataplane::model::QueueLimit::Bytes(2 * FRAME as u64);
    let t = |k: u64| 10_000 + 1_000 * k;
    let n = XOFF / FRAME as u64 + HEADROOM / FRAME as u64 + 1; // 16
    let sender: Vec<Timed> = (0..n).map(|k| (t(k), data(k))).collect();
    let release = 100_000;
    let run = replay(
        &m,
        vec![sender, vec![(1_000, pfc(0xFFFF)), (release, pfc(0))]],
    );
    let s = &run.report.stats.interfaces["Ethernet1/1"];
    let sent = pfc_sent(&run, SENDER);
    assert_eq!(sent.len(), 2, "one XOFF and one XON: {sent:?}");
    // The 10th frame (k = 9) reaches xOFF; the XOFF leaves with it.
    let (xoff_t, xoff_q) = sent[0];
    assert_eq!(xoff_q, 0xFFFF);
    assert!(xoff_t >= t(9) && xoff_t < t(10), "XOFF at {xoff_t}");
    let xoff_frame = &run.out[SENDER]
        .iter()
        .find(|(tt, _)| *tt == xoff_t)
        .unwrap()
        .1;
    assert_eq!(xoff_frame, &reference_xoff(port_mac(SENDER)));
    // The 16th frame finds the headroom used up.
    assert_eq!(s.drops["ingress_overflow"], 1);
    assert_eq!(s.total_drops(), 1);
    let e = &run.report.stats.interfaces["Ethernet1/2"];
    assert_eq!(e.total_drops(), 0, "never tail-dropped: {:?}", e.drops);
    assert_eq!(departures(&run).len() as u64, n - 1);
    // Released at 100 µs: the XON goes once the group drains below xON.
    let (xon_t, xon_q) = sent[1];
    assert_eq!(xon_q, 0);
    assert!(xon_t >= release);
    let deps = departures(&run);
    let below_xon = (n - 1 - XON / FRAME as u64) as usize; // 10th departure leaves 5 queued
    assert!(
        xon_t >= deps[below_xon - 1] && xon_t <= deps[below_xon],
        "XON at {xon_t}, departures {deps:?}"
    );
    assert_eq!(s.pfc.tx_pause[PRIO], 1);
    assert_eq!(s.pfc.tx_resume[PRIO], 1);
}

/// Held above xON, the XOFF is refreshed at half its pause time.
#[test]
fn xoff_is_refreshed_at_half_the_pause_time() {
    let speed = Some(10_000);
    let mut m = model(speed, true, thresholds());
    m.interfaces[SENDER].pfc.quanta = 1000; // 51.2 µs at 10G
    let sender: Vec<Timed> = (0..10).map(|k| (10_000 + 1_000 * k, data(k))).collect();
    let release = 100_000;
    let run = replay(
        &m,
        vec![sender, vec![(1_000, pfc(0xFFFF)), (release, pfc(0))]],
    );
    let sent = pfc_sent(&run, SENDER);
    let half = quanta_ns(1000, speed) / 2;
    let first = sent[0].0;
    let expect: Vec<(u64, u16)> = (0..)
        .map(|k| (first + k * half, 1000))
        .take_while(|(t, _)| *t < release)
        .collect();
    assert_eq!(&sent[..expect.len()], &expect[..]);
    assert_eq!(sent.len(), expect.len() + 1);
    assert_eq!(sent.last().unwrap().1, 0, "ends with XON");
}

/// Thresholds the pause tests never reach.
fn roomy() -> PgThresholds {
    PgThresholds::default_for(None, 1500, 8 << 20, &Default::default())
}

/// A watchdog that trips after 1 ms of pause and restores 2 ms later.
fn watchdog() -> railyard_dataplane::model::WatchdogModel {
    railyard_dataplane::model::WatchdogModel {
        interval_ns: 1_000_000,
        shutdown_multiplier: 1,
        restore_multiplier: 2,
        fixed_restore_multiplier: 0,
        forward_ingress: false,
    }
}

/// xOFF within one frame and xON at the first byte back, so every lossless
/// arrival and every return shows as a PFC frame.
fn xoff_at_once() -> PgThresholds {
    PgThresholds {
        xoff_bytes: FRAME as u64 / 2,
        xon_bytes: 1,
        headroom_bytes: 100 * FRAME as u64,
    }
}

/// A queue paused past the watchdog's detection time is flushed, new packets
/// for it are dropped while the pauses continue, and it is restored once
/// they stop; afterwards pause frames act again.
#[test]
fn watchdog_flushes_a_stormed_queue_and_restores_it() {
    let speed = Some(10_000);
    let mut m = model(speed, true, roomy());
    m.interfaces[EGRESS].pfc.watchdog = Some(watchdog());
    let run = replay(
        &m,
        vec![
            vec![(2_000, data(0)), (1_500_000, data(1)), (3_100_000, data(2))],
            vec![(1_000, pfc(0xFFFF)), (3_000_000, pfc(10_000))],
        ],
    );
    // data(0) flushed at 1.001 ms, data(1) dropped while stormed; restored
    // at 2.001 ms; data(2) waits for the new pause (512 µs at 10G).
    assert_eq!(departures(&run), vec![3_000_000 + quanta_ns(10_000, speed)]);
    let e = &run.report.stats.interfaces["Ethernet1/2"];
    assert_eq!(e.drops["pfc_watchdog"], 2);
    assert_eq!(e.pfc.watchdog_storms[PRIO], 1);
    assert_eq!(e.pfc.watchdog_restores[PRIO], 1);
    assert_eq!(e.queues[PRIO].watchdog_drops, 1);
    assert_eq!(e.pfc.paused_ns[PRIO], 1_000_000 + quanta_ns(10_000, speed));
}

/// With the ingress and egress ports on different workers, the shared
/// accounting lets the ingress worker send XOFF for packets the egress
/// worker holds, and XON once the egress worker has sent them.
#[test]
fn two_workers_share_the_ingress_accounting() {
    use railyard_dataplane::Pool;

    let m = model(None, true, thresholds());
    let pool = Pool::new(1024);
    let (mut w0, mut w1, [mut h0, mut h1]) = two_ring_workers(&m, &pool, 256, 256, false);
    let pfc_frames = |h: &mut railyard_dataplane::port::ring::RingPort| {
        let mut out = Vec::new();
        while let Some(p) = h.recv() {
            if p.data()[12..14] == [0x88, 0x08] {
                out.push(u16::from_be_bytes([p.data()[24], p.data()[25]]));
            }
        }
        out
    };
    h1.send(pool.alloc_from(&pfc(0xFFFF)).unwrap()).unwrap();
    w1.poll(1_000);
    for k in 0..10 {
        h0.send(pool.alloc_from(&data(k)).unwrap()).unwrap();
    }
    w0.poll(2_000); // routes and hands off; the 10th frame reaches xOFF
    w1.poll(3_000); // queues them behind the pause
    assert_eq!(pfc_frames(&mut h0), vec![0xFFFF], "one XOFF from worker 0");
    assert_eq!(w1.queues(EGRESS as u16).unwrap().depth_packets(PRIO), 10);
    w0.poll(4_000);
    assert_eq!(pfc_frames(&mut h0), Vec::<u16>::new(), "still above xON");
    h1.send(pool.alloc_from(&pfc(0)).unwrap()).unwrap();
    w1.poll(5_000); // resumed: worker 1 sends all ten
    assert_eq!(w1.queues(EGRESS as u16).unwrap().depth_packets(PRIO), 0);
    w0.poll(6_000);
    assert_eq!(pfc_frames(&mut h0), vec![0], "XON once drained");
    // Worker 0 last read what worker 1 released at the first XOFF, before
    // the ten were sent. Counted with that, the group looks full; it reads
    // again, sees the ten sent, and the group fills from empty again, with
    // XOFF at the tenth frame as before.
    for k in 10..19 {
        h0.send(pool.alloc_from(&data(k)).unwrap()).unwrap();
    }
    w0.poll(7_000);
    assert_eq!(
        pfc_frames(&mut h0),
        Vec::<u16>::new(),
        "nine frames, no XOFF"
    );
    h0.send(pool.alloc_from(&data(19)).unwrap()).unwrap();
    w0.poll(8_000);
    assert_eq!(pfc_frames(&mut h0), vec![0xFFFF], "XOFF at the tenth");
    assert_eq!(w0.counters(SENDER as u16).unwrap().total_drops(), 0);
}

#[test]
fn a_tagged_frame_is_lossless_by_its_pcp_and_untagged_by_its_dscp() {
    // Egress paused; xOFF within one frame so any lossless arrival shows.
    let pg = xoff_at_once();
    let m = model(Some(10_000), true, pg);
    let pause = vec![(0, pfc(0xffff))];
    // Tagged PCP 3 with DSCP 0: lossless by its PCP, so XOFF for priority 3.
    let tagged = replay(&m, vec![vec![(1_000, frame(0, Some(3), 0))], pause.clone()]);
    let s = &tagged.report.stats.interfaces["Ethernet1/1"];
    assert_eq!(
        s.pfc.tx_pause[PRIO], 1,
        "PCP 3 counts against priority group 3"
    );
    // Untagged DSCP 0 is qos-group 0: lossy, no pause.
    let untagged = replay(&m, vec![vec![(1_000, frame(0, None, 0))], pause.clone()]);
    assert_eq!(
        untagged.report.stats.interfaces["Ethernet1/1"].pfc.tx_pause,
        [0; 8]
    );
    // Tagged PCP 1 with DSCP 24: the PCP decides, and priority 1 is lossy.
    let pcp1 = replay(&m, vec![vec![(1_000, frame(24, Some(1), 0))], pause]);
    assert_eq!(
        pcp1.report.stats.interfaces["Ethernet1/1"].pfc.tx_pause,
        [0; 8]
    );
}

/// A lossless frame dropped at egress gives its bytes back to the ingress
/// priority group it was counted in: for a tagged frame its PCP, even when
/// its DSCP puts it in another queue. Here PCP 3 / DSCP 0 frames go to
/// queue 0, which the peer pauses until the watchdog flushes it; the
/// ingress port then sends XON for priority 3.
#[test]
fn a_lossless_drop_returns_its_bytes_to_the_pcp_priority_group() {
    let pg = xoff_at_once();
    let mut m = model(Some(10_000), true, pg);
    for ifc in &mut m.interfaces {
        ifc.pfc.enabled_priorities |= 1;
        ifc.pfc.pg[0] = pg;
    }
    m.interfaces[EGRESS].pfc.watchdog = Some(watchdog());
    // The first frame is flushed when the watchdog trips (1.001 ms); the
    // second arrives while queue 0 is stormed and is dropped on arrival.
    let run = replay(
        &m,
        vec![
            vec![
                (2_000, frame(0, Some(3), 0)),
                (1_500_000, frame(0, Some(3), 1)),
            ],
            vec![(1_000, pause(0, 0xFFFF))],
        ],
    );
    let e = &run.report.stats.interfaces["Ethernet1/2"];
    assert_eq!(e.drops["pfc_watchdog"], 2);
    let quanta: Vec<u16> = pfc_sent(&run, SENDER).iter().map(|(_, q)| *q).collect();
    assert_eq!(
        &quanta[..quanta.len().min(4)],
        &[0xFFFF, 0],
        "priority 3: one XOFF, then XON once both frames' bytes are returned \
         ({} PFC frames in all)",
        quanta.len()
    );
}

/// On a port without a line rate another worker sends through its own
/// lane and queues (see `railyard_dataplane::lanes`): a pause the owner
/// receives holds the lane's queue too and the resume releases it, and
/// the owner's watchdog trips on packets only the lane holds, which the
/// lane then flushes and drops.
#[test]
fn a_pause_the_owner_receives_holds_the_lanes_of_other_workers() {
    use railyard_dataplane::counters::DropReason;
    use railyard_dataplane::port::ring::RingPort;
    use railyard_dataplane::Pool;

    let mut m = model(None, true, roomy());
    m.interfaces[EGRESS].pfc.watchdog = Some(watchdog());
    let pool = Pool::new(1024);
    let (mut w0, mut w1, [mut h0, mut h1]) = two_ring_workers(&m, &pool, 256, 256, true);
    let delivered = |h: &mut RingPort| {
        let mut n = 0;
        while let Some(p) = h.recv() {
            n += usize::from(p.data()[12..14] == [0x08, 0x00]);
        }
        n
    };
    let send = |h: &mut RingPort, f: Vec<u8>| h.send(pool.alloc_from(&f).unwrap()).unwrap();
    let egress = EGRESS as u16;

    // Not paused: worker 0 sends on port 1 itself; worker 1 never polls.
    send(&mut h0, data(0));
    w0.poll(1_000);
    assert_eq!(delivered(&mut h1), 1);

    // The owner's peer pauses priority 3: worker 0's lane holds its packets.
    send(&mut h1, pfc(0xFFFF));
    w1.poll(2_000);
    for k in 1..4 {
        send(&mut h0, data(k));
    }
    w0.poll(3_000);
    assert_eq!(delivered(&mut h1), 0);
    assert_eq!(w0.queues(egress).unwrap().depth_packets(PRIO), 3);
    // The resume releases them.
    send(&mut h1, pfc(0));
    w1.poll(4_000);
    w0.poll(5_000);
    assert_eq!(delivered(&mut h1), 3);

    // Paused again and kept paused (a pause lasts 335 µs at the 100 Gb/s
    // default); only the lane holds packets, and the owner's watchdog
    // trips on them after 1 ms.
    send(&mut h1, pfc(0xFFFF));
    w1.poll(10_000);
    send(&mut h0, data(4));
    send(&mut h0, data(5));
    w0.poll(11_000);
    for t in [300_000, 600_000, 900_000] {
        send(&mut h1, pfc(0xFFFF));
        w1.poll(t);
        w0.poll(t + 1);
    }
    assert_eq!(w0.queues(egress).unwrap().depth_packets(PRIO), 2);
    w1.poll(1_020_000);
    assert_eq!(w1.counters(egress).unwrap().pfc.watchdog_storms[PRIO], 1);
    w0.poll(1_021_000);
    let lane = w0.counters(egress).unwrap();
    assert_eq!(lane.queues[PRIO].watchdog_drops, 2, "the lane flushed");
    assert_eq!(lane.drops[DropReason::PfcWatchdog as usize], 2);
    // While stormed, the lane drops new packets of the class.
    send(&mut h0, data(6));
    w0.poll(1_022_000);
    assert_eq!(
        w0.counters(egress).unwrap().drops[DropReason::PfcWatchdog as usize],
        3
    );
    assert_eq!(delivered(&mut h1), 0);
    assert_eq!(w0.counters(SENDER as u16).unwrap().total_drops(), 0);
}
