//! Two NICs wired back to back through a small virtual-time loop: each
//! direction is a cable with a propagation delay that carries one frame at a
//! time at line rate, and a hook in the middle may drop or mark frames (the
//! switch's part).

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use proptest::prelude::*;
use railyard_dataplane::wire::MacControlRepr;
use railyard_roce::dcqcn::DcqcnParams;
use railyard_roce::nic::{
    Completion, CongestionControl, Nic, NicConfig, QpConfig, WriteRequest, TX_BUFFER_LEN,
};
use railyard_roce::wire::{is_write, Opcode, RxFrame, ECN_CE};
use railyard_roce::{MacAddr, Nanos};

const GBPS_100: u64 = 100_000_000_000;
const DELAY_NS: Nanos = 1_000;
const MAC_A: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
const MAC_B: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0b]);
const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

fn config(
    mac: MacAddr,
    ip: Ipv4Addr,
    peer: MacAddr,
    cc: CongestionControl,
    mem: usize,
) -> NicConfig {
    NicConfig {
        mac,
        ip,
        gateway_mac: peer,
        line_rate_bps: GBPS_100,
        path_mtu: 4096,
        dscp: 24,
        priority: 3,
        cc,
        ack_every: 16,
        rto_ns: 100_000,
        memory_bytes: mem,
        answer_arp: true,
        catch_up_ns: 0,
    }
}

/// A frame seen on a cable.
#[derive(Debug, Clone)]
struct Seen {
    /// When it started on the wire.
    at: Nanos,
    /// 0: A sent it, 1: B sent it.
    from: usize,
    opcode: Option<Opcode>,
    dscp: u8,
}

/// What the hook does with a frame in flight.
enum Fate {
    Deliver,
    Drop,
}

struct Lab {
    nics: [Nic; 2],
    /// Frames on the way to NIC i: (arrival, bytes).
    inbound: [VecDeque<(Nanos, Vec<u8>)>; 2],
    now: Nanos,
    seen: Vec<Seen>,
    buf: Vec<u8>,
}

impl Lab {
    fn new(cc: CongestionControl, mem: usize) -> Lab {
        let mut a = Nic::new(config(MAC_A, IP_A, MAC_B, cc.clone(), mem));
        let mut b = Nic::new(config(MAC_B, IP_B, MAC_A, cc, mem));
        for q in 0..4u32 {
            a.connect(QpConfig {
                local_qpn: 0x100 + q,
                remote_ip: IP_B,
                remote_qpn: 0x200 + q,
                udp_sport: 0xc000 + q as u16,
            })
            .unwrap();
            b.connect(QpConfig {
                local_qpn: 0x200 + q,
                remote_ip: IP_A,
                remote_qpn: 0x100 + q,
                udp_sport: 0xd000 + q as u16,
            })
            .unwrap();
        }
        Lab {
            nics: [a, b],
            inbound: [VecDeque::new(), VecDeque::new()],
            now: 0,
            seen: vec![],
            buf: vec![0; TX_BUFFER_LEN],
        }
    }

    /// Runs until `done` or nothing is left to do, at most `limit` ns.
    fn run(
        &mut self,
        limit: Nanos,
        hook: &mut dyn FnMut(usize, Nanos, &mut Vec<u8>) -> Fate,
        done: &mut dyn FnMut(&mut Lab) -> bool,
    ) {
        let mut steps = 0u64;
        loop {
            if done(self) {
                return;
            }
            let mut next: Option<Nanos> = None;
            for i in 0..2 {
                for t in [
                    self.nics[i].next_wakeup(),
                    self.inbound[i].front().map(|f| f.0),
                ]
                .into_iter()
                .flatten()
                {
                    next = Some(next.map_or(t, |n: Nanos| n.min(t)));
                }
            }
            let Some(t) = next else { return };
            self.now = self.now.max(t);
            assert!(self.now <= limit, "ran past {limit} ns");
            steps += 1;
            assert!(steps < 50_000_000, "the loop does not advance");
            for i in 0..2 {
                while self.inbound[i].front().is_some_and(|f| f.0 <= self.now) {
                    let (_, f) = self.inbound[i].pop_front().unwrap();
                    self.nics[i].receive(self.now, &f);
                }
            }
            for i in 0..2 {
                if let Some(n) = self.nics[i].transmit(self.now, &mut self.buf) {
                    let mut f = self.buf[..n].to_vec();
                    let (opcode, dscp) = match RxFrame::parse(&f) {
                        Ok(RxFrame::Roce(r)) => (Some(r.bth.opcode), r.dscp),
                        _ => (None, 0),
                    };
                    self.seen.push(Seen {
                        at: self.now,
                        from: i,
                        opcode,
                        dscp,
                    });
                    // Whole frame received after serialisation and delay.
                    let ser = ((n as u64 + 24) * 8 * 1_000_000_000).div_ceil(GBPS_100);
                    if let Fate::Deliver = hook(i, self.now, &mut f) {
                        self.inbound[1 - i].push_back((self.now + ser + DELAY_NS, f));
                    }
                }
            }
        }
    }
}

fn fill(nic: &mut Nic, seed: u8) {
    for (i, b) in nic.memory_mut().iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 12) as u8;
    }
}

fn opcode_of(f: &[u8]) -> Option<Opcode> {
    match RxFrame::parse(f) {
        Ok(RxFrame::Roce(r)) => Some(r.bth.opcode),
        _ => None,
    }
}

fn deliver_all(_: usize, _: Nanos, _: &mut Vec<u8>) -> Fate {
    Fate::Deliver
}

/// Posts `len` bytes A→B on QP 0x100, offset 0 to offset 0, with immediate.
fn post(lab: &mut Lab, wr_id: u64, qp: u32, off: usize, len: usize) {
    lab.nics[0]
        .post_write(
            qp,
            WriteRequest {
                wr_id,
                local_offset: off,
                remote_offset: off as u64,
                len,
                imm: Some(wr_id as u32),
            },
        )
        .unwrap();
}

/// Runs until `want` Sent completions at A; returns them with their times.
fn run_until_sent(
    lab: &mut Lab,
    want: usize,
    limit: Nanos,
    hook: &mut dyn FnMut(usize, Nanos, &mut Vec<u8>) -> Fate,
) -> Vec<(Nanos, u64)> {
    let mut sent = vec![];
    lab.run(limit, hook, &mut |lab| {
        while let Some(c) = lab.nics[0].poll_completion() {
            if let Completion::Sent { wr_id, .. } = c {
                sent.push((lab.now, wr_id));
            }
        }
        sent.len() >= want
    });
    sent
}

const MB: usize = 1 << 20;

#[test]
fn a_4mb_write_arrives_byte_exact() {
    let mut lab = Lab::new(CongestionControl::None, 4 * MB);
    fill(&mut lab.nics[0], 7);
    post(&mut lab, 1, 0x100, 0, 4 * MB);
    let sent = run_until_sent(&mut lab, 1, 10_000_000, &mut deliver_all);
    assert_eq!(sent.len(), 1);
    assert_eq!(lab.nics[0].memory(), lab.nics[1].memory());
    assert_eq!(
        lab.nics[1].poll_completion(),
        Some(Completion::Received {
            qpn: 0x200,
            imm: 1,
            offset: 0,
            len: 4 * MB
        })
    );
    let a = lab.nics[0].stats();
    let b = lab.nics[1].stats();
    assert_eq!(a.data_packets, 1024);
    assert_eq!(a.retransmitted, 0);
    assert_eq!(b.acks_sent, a.rx_frames);
    assert!(b.acks_sent >= 1024 / 16);
    assert_eq!(b.rx_dropped, Default::default());
    // Data and ACKs carry DSCP 24.
    assert!(lab.seen.iter().all(|s| s.dscp == 24));
    // Let the ACKs drain: both NICs end idle.
    lab.run(20_000_000, &mut deliver_all, &mut |lab| {
        lab.nics[0].idle() && lab.nics[1].idle()
    });
    assert!(lab.nics[0].idle() && lab.nics[1].idle());
}

#[test]
fn one_qp_reaches_97_percent_of_goodput_at_100g() {
    let len = 16 * MB;
    let mut lab = Lab::new(CongestionControl::None, len);
    post(&mut lab, 1, 0x100, 0, len);
    let sent = run_until_sent(&mut lab, 1, 10_000_000, &mut deliver_all);
    let first = lab
        .seen
        .iter()
        .find(|s| s.opcode.is_some_and(is_write))
        .unwrap()
        .at;
    let elapsed = sent[0].0 - first;
    // Wire bytes per packet: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 +
    // FCS 4 + preamble/IFG 20, plus RETH 16 on the first and ImmDt 4 on the
    // last.
    let packets = (len / 4096) as f64;
    let per_packet = 14.0 + 20.0 + 8.0 + 12.0 + 4.0 + 4.0 + 20.0;
    let wire = packets * (4096.0 + per_packet) + 16.0 + 4.0;
    let bound_gbps = len as f64 / wire * 100.0;
    let goodput_gbps = len as f64 * 8.0 / elapsed as f64;
    eprintln!("goodput {goodput_gbps:.3} Gb/s of a {bound_gbps:.3} Gb/s bound");
    assert!(
        goodput_gbps >= 0.97 * bound_gbps,
        "goodput {goodput_gbps:.2} Gb/s, bound {bound_gbps:.2} Gb/s"
    );
    assert!(
        goodput_gbps <= bound_gbps * 1.0001,
        "faster than the wire: {goodput_gbps}"
    );
}

#[test]
fn every_message_completes_under_loss() {
    let mut lab = Lab::new(CongestionControl::None, 4 * MB);
    fill(&mut lab.nics[0], 3);
    let msgs = 32;
    let size = 4 * MB / msgs;
    for m in 0..msgs {
        let qp = 0x100 + (m % 4) as u32;
        post(&mut lab, m as u64, qp, m * size, size);
    }
    let mut n = 0u64;
    let mut drop_every_97th_data = |from: usize, _: Nanos, f: &mut Vec<u8>| {
        if from == 0 && opcode_of(f).is_some_and(is_write) {
            n += 1;
            if n.is_multiple_of(97) {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    };
    let sent = run_until_sent(&mut lab, msgs, 200_000_000, &mut drop_every_97th_data);
    let mut ids: Vec<_> = sent.iter().map(|s| s.1).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..msgs as u64).collect::<Vec<_>>());
    assert_eq!(lab.nics[0].memory(), lab.nics[1].memory());
    let a = lab.nics[0].stats();
    let b = lab.nics[1].stats();
    assert!(a.retransmitted > 0);
    assert!(b.naks_sent > 0 && a.naks_received > 0);
    assert!(b.rx_dropped.out_of_sequence > 0);
    let mut received = 0;
    while let Some(c) = lab.nics[1].poll_completion() {
        assert!(matches!(c, Completion::Received { len, .. } if len == size));
        received += 1;
    }
    assert_eq!(received, msgs, "each message received exactly once");
}

#[test]
fn losing_acks_and_last_packets_recovers_by_timeout() {
    let mut lab = Lab::new(CongestionControl::None, MB);
    fill(&mut lab.nics[0], 5);
    for m in 0..8 {
        post(&mut lab, m as u64, 0x100, m * MB / 8, MB / 8);
    }
    let mut acks = 0u64;
    let mut lasts = 0u64;
    let mut final_dropped = false;
    let mut hook = |from: usize, _: Nanos, f: &mut Vec<u8>| {
        let (op, imm) = match RxFrame::parse(f) {
            Ok(RxFrame::Roce(r)) => (Some(r.bth.opcode), r.imm),
            _ => (None, None),
        };
        if from == 1 && op == Some(Opcode::RcAcknowledge) {
            acks += 1;
            if acks.is_multiple_of(5) {
                return Fate::Drop;
            }
        }
        if op == Some(Opcode::RcRdmaWriteLastImm) {
            lasts += 1;
            // Nothing follows the last message's last packet: only the
            // timer can recover it.
            if imm == Some(7) && !final_dropped {
                final_dropped = true;
                return Fate::Drop;
            }
            if lasts.is_multiple_of(3) {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    };
    let sent = run_until_sent(&mut lab, 8, 100_000_000, &mut hook);
    assert_eq!(sent.len(), 8);
    assert_eq!(lab.nics[0].memory(), lab.nics[1].memory());
    assert!(lab.nics[0].stats().timeouts > 0);
}

/// A PFC frame from the switch: priority `prio` paused for `quanta`.
fn pfc(prio: u8, quanta: u16) -> Vec<u8> {
    let mut q = [0u16; 8];
    q[usize::from(prio)] = quanta;
    let mut f = [0u8; 60];
    MacControlRepr::Pfc {
        enable: 1 << prio,
        quanta: q,
    }
    .emit_frame(MAC_B, &mut f);
    f.to_vec()
}

/// A full pause (65535 quanta × 512 bit times) at 100 Gb/s.
const FULL_PAUSE_NS: Nanos = (65_535 * 512 * 1_000_000_000u64).div_ceil(GBPS_100);

/// The hook that CE-marks every WRITE B sends, so A owes B CNPs.
#[allow(clippy::ptr_arg)] // the type `Lab::run` takes hooks of
fn ce_mark_from_b(from: usize, _: Nanos, f: &mut Vec<u8>) -> Fate {
    if from == 1 && opcode_of(f).is_some_and(is_write) {
        set_ce(f);
    }
    Fate::Deliver
}

#[test]
fn pfc_pause_of_priority_3_stops_data_and_cnps_still_go() {
    let cc = CongestionControl::Dcqcn(DcqcnParams::default());
    let mut lab = Lab::new(cc, 8 * MB);
    // Data both ways; B→A is CE-marked so A, as notification point, owes B
    // CNPs while its own data is paused.
    post(&mut lab, 1, 0x100, 0, 8 * MB);
    lab.nics[1]
        .post_write(
            0x201,
            WriteRequest {
                wr_id: 2,
                local_offset: 0,
                remote_offset: 0,
                len: 8 * MB,
                imm: None,
            },
        )
        .unwrap();
    let pause_at: Nanos = 50_000;
    lab.inbound[0].push_back((pause_at, pfc(3, 0xffff)));
    let mut mark = ce_mark_from_b;
    let pause_ns = FULL_PAUSE_NS;
    lab.run(10_000_000, &mut mark, &mut |lab| {
        lab.now > pause_at + pause_ns + 20_000
    });
    let a_tx = |lo: Nanos, hi: Nanos| -> Vec<Seen> {
        lab.seen
            .iter()
            .filter(|s| s.from == 0 && s.at >= lo && s.at < hi)
            .cloned()
            .collect()
    };
    // One frame may have started before the pause arrived; none after it.
    let during = a_tx(pause_at + 1_000, pause_at + pause_ns);
    assert!(during
        .iter()
        .all(|s| !s.opcode.is_some_and(is_write) && s.opcode != Some(Opcode::RcAcknowledge)));
    let cnps: Vec<_> = during
        .iter()
        .filter(|s| s.opcode == Some(Opcode::Cnp))
        .collect();
    assert!(
        !cnps.is_empty(),
        "priority-6 CNPs go while priority 3 is paused"
    );
    assert!(cnps.iter().all(|s| s.dscp == 48));
    // Data resumes as the pause ends.
    let after = a_tx(pause_at + pause_ns, pause_at + pause_ns + 2_000);
    assert!(
        after.iter().any(|s| s.opcode.is_some_and(is_write)),
        "{after:?}"
    );
    let st = lab.nics[0].stats();
    assert_eq!(st.pfc_pause_frames, 1);
    assert_eq!(st.paused_ns, pause_ns);
}

/// Frames NIC A of `lab` sends at `now` back to back (until its line is
/// busy past `now`).
fn burst_at(lab: &mut Lab, now: Nanos) -> usize {
    let mut n = 0;
    while lab.nics[0].transmit(now, &mut lab.buf).is_some() {
        n += 1;
    }
    n
}

#[test]
fn a_late_wake_up_is_made_up_only_within_the_catch_up_allowance() {
    // 4 KB frames at 100 Gb/s leave every ~330 ns; the NIC is next woken
    // 10 µs late, as a live rank's OS may wake it.
    let late_by = 10_000;
    let frames = |catch_up_ns| {
        let mut lab = Lab::new(CongestionControl::None, 4 * MB);
        lab.nics[0] = {
            let mut cfg = lab.nics[0].config().clone();
            cfg.catch_up_ns = catch_up_ns;
            let mut nic = Nic::new(cfg);
            nic.connect(QpConfig {
                local_qpn: 0x100,
                remote_ip: IP_B,
                remote_qpn: 0x200,
                udp_sport: 0xc000,
            })
            .unwrap();
            nic
        };
        post(&mut lab, 1, 0x100, 0, 4 * MB);
        assert_eq!(burst_at(&mut lab, 0), 1, "one frame at a time on time");
        burst_at(&mut lab, late_by)
    };
    // Without an allowance (virtual time) the lost time is lost: one frame.
    assert_eq!(frames(0), 1);
    // With one, the frames owed since the wire freed go out back to back:
    // 10 µs of 4 KB frames at 100 Gb/s is about 30.
    let caught_up = frames(1_000_000);
    assert!((28..=32).contains(&caught_up), "{caught_up} frames");
    // A wake-up later than the allowance starts afresh.
    assert_eq!(frames(late_by / 2), 1);
}

#[test]
fn pfc_resume_ends_the_pause_early_and_pause_time_counts_it() {
    let mut lab = Lab::new(CongestionControl::None, 4 * MB);
    post(&mut lab, 1, 0x100, 0, 4 * MB);
    lab.inbound[0].push_back((10_000, pfc(3, 0xffff)));
    lab.inbound[0].push_back((30_000, pfc(3, 0)));
    // PAUSE (802.3x) stops everything for 1000 quanta = 5.12 µs.
    let mut pause = [0u8; 60];
    MacControlRepr::Pause { quanta: 1000 }.emit_frame(MAC_B, &mut pause);
    lab.inbound[0].push_back((60_000, pause.to_vec()));
    lab.run(10_000_000, &mut deliver_all, &mut |lab| lab.now > 80_000);
    let a_data = |lo: Nanos, hi: Nanos| {
        lab.seen
            .iter()
            .filter(|s| s.from == 0 && s.at >= lo && s.at < hi && s.opcode.is_some_and(is_write))
            .count()
    };
    assert_eq!(a_data(11_000, 30_000), 0);
    assert!(a_data(30_000, 31_000) > 0);
    assert_eq!(a_data(61_000, 65_120), 0);
    assert!(a_data(65_120, 66_000) > 0);
    let st = lab.nics[0].stats();
    assert_eq!(st.pfc_pause_frames, 2, "the resume is not a pause");
    assert_eq!(st.paused_ns, 20_000 + 5_120);
}

fn set_ce(f: &mut [u8]) {
    // IPv4 TOS at 15; fix the header checksum as a switch does.
    let old = u16::from_be_bytes([f[14], f[15]]);
    f[15] |= 0x03;
    let new = u16::from_be_bytes([f[14], f[15]]);
    let ck = u16::from_be_bytes([f[24], f[25]]);
    // RFC 1624: HC' = ~(~HC + ~m + m')
    let mut sum = u32::from(!ck) + u32::from(!old) + u32::from(new);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

#[test]
fn ce_marks_yield_cnps_and_the_sender_is_cut() {
    let cc = CongestionControl::Dcqcn(DcqcnParams::default());
    let mut lab = Lab::new(cc, 4 * MB);
    fill(&mut lab.nics[0], 9);
    post(&mut lab, 1, 0x100, 0, 4 * MB);
    let mut marked = 0u64;
    let mut mark = |from: usize, _: Nanos, f: &mut Vec<u8>| {
        if from == 0 && opcode_of(f).is_some_and(is_write) && marked < 200 {
            marked += 1;
            set_ce(f);
            assert_eq!(
                match RxFrame::parse(f) {
                    Ok(RxFrame::Roce(r)) => r.ecn,
                    _ => 0,
                },
                ECN_CE,
                "the marked frame still parses (ICRC masks the TOS)"
            );
        }
        Fate::Deliver
    };
    let mut min_rate = u64::MAX;
    let sent = {
        let mut sent = 0;
        lab.run(100_000_000, &mut mark, &mut |lab| {
            min_rate = min_rate.min(lab.nics[0].qp_rate_bps(0x100).unwrap());
            while let Some(c) = lab.nics[0].poll_completion() {
                sent += matches!(c, Completion::Sent { .. }) as usize;
            }
            sent == 1
        });
        sent
    };
    assert_eq!(sent, 1);
    assert_eq!(lab.nics[0].memory(), lab.nics[1].memory());
    let a = lab.nics[0].stats();
    let b = lab.nics[1].stats();
    assert_eq!(b.ce_received, 200);
    assert!(
        b.cnp_sent > 0 && b.cnp_sent < 200,
        "CNPs are paced: {}",
        b.cnp_sent
    );
    assert_eq!(a.cnp_received, b.cnp_sent);
    assert!(a.rate_cuts > 0);
    assert!(a.min_rate_bps < GBPS_100);
    assert!(min_rate < GBPS_100);
    let cnps: Vec<_> = lab
        .seen
        .iter()
        .filter(|s| s.opcode == Some(Opcode::Cnp))
        .collect();
    assert!(cnps.iter().all(|s| s.from == 1 && s.dscp == 48));
}

#[test]
fn without_congestion_control_ce_gets_no_cnp() {
    let mut lab = Lab::new(CongestionControl::None, MB);
    post(&mut lab, 1, 0x100, 0, MB);
    let mut mark = |from: usize, _: Nanos, f: &mut Vec<u8>| {
        if from == 0 && opcode_of(f).is_some_and(is_write) {
            set_ce(f);
        }
        Fate::Deliver
    };
    let sent = run_until_sent(&mut lab, 1, 10_000_000, &mut mark);
    assert_eq!(sent.len(), 1);
    let b = lab.nics[1].stats();
    assert_eq!(b.ce_received, 256);
    assert_eq!(b.cnp_sent, 0);
}

#[test]
fn answers_arp_for_its_address_only() {
    let mut nic = Nic::new(config(MAC_A, IP_A, MAC_B, CongestionControl::None, 1024));
    let mut req = [0u8; 60];
    req[..6].copy_from_slice(&[0xff; 6]);
    req[6..12].copy_from_slice(&MAC_B.0);
    req[12..14].copy_from_slice(&[0x08, 0x06]);
    req[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    req[22..28].copy_from_slice(&MAC_B.0);
    req[28..32].copy_from_slice(&IP_B.octets());
    req[38..42].copy_from_slice(&IP_A.octets());
    nic.receive(0, &req);
    let mut other = req;
    other[38..42].copy_from_slice(&[10, 9, 9, 9]);
    nic.receive(0, &other);
    assert!(!nic.idle());
    assert_eq!(nic.next_wakeup(), Some(0));
    let mut buf = vec![0u8; TX_BUFFER_LEN];
    let n = nic.transmit(0, &mut buf).unwrap();
    match RxFrame::parse(&buf[..n]) {
        Ok(RxFrame::Arp { dst_mac, arp, .. }) => {
            assert_eq!(dst_mac, MAC_B);
            assert_eq!(
                (arp.source_hw, arp.source_ip, arp.target_ip),
                (MAC_A, IP_A, IP_B)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(nic.transmit(1_000, &mut buf).is_none());
    assert_eq!(nic.stats().rx_dropped.not_for_us, 1);
    assert!(nic.idle());
    assert_eq!(nic.next_wakeup(), None);
}

#[test]
fn a_buffer_too_small_or_a_busy_line_sends_nothing() {
    let mut lab = Lab::new(CongestionControl::None, MB);
    post(&mut lab, 1, 0x100, 0, MB);
    let mut small = vec![0u8; 1000];
    assert!(lab.nics[0].transmit(0, &mut small).is_none());
    let mut buf = vec![0u8; TX_BUFFER_LEN];
    let n = lab.nics[0].transmit(0, &mut buf).unwrap();
    assert!(lab.nics[0].transmit(0, &mut buf).is_none(), "line busy");
    // The next frame's turn: one full frame time later, rounded up.
    let ser = ((n as u64 + 24) * 8 * 1_000_000_000).div_ceil(GBPS_100);
    assert_eq!(lab.nics[0].next_wakeup(), Some(ser));
    assert!(lab.nics[0].transmit(ser - 1, &mut buf).is_none());
    assert!(lab.nics[0].transmit(ser, &mut buf).is_some());
}

#[test]
fn post_write_checks_qp_and_range() {
    use railyard_roce::nic::NicError;
    let mut lab = Lab::new(CongestionControl::None, 1024);
    let wr = WriteRequest {
        wr_id: 0,
        local_offset: 1000,
        remote_offset: 0,
        len: 25,
        imm: None,
    };
    assert_eq!(
        lab.nics[0].post_write(0x999, wr),
        Err(NicError::UnknownQp(0x999))
    );
    assert_eq!(
        lab.nics[0].post_write(0x100, wr),
        Err(NicError::OutOfMemoryRange)
    );
    let wr = WriteRequest {
        local_offset: usize::MAX,
        ..wr
    };
    assert_eq!(
        lab.nics[0].post_write(0x100, wr),
        Err(NicError::OutOfMemoryRange)
    );
    let dup = QpConfig {
        local_qpn: 0x100,
        remote_ip: IP_B,
        remote_qpn: 1,
        udp_sport: 1,
    };
    assert_eq!(lab.nics[0].connect(dup), Err(NicError::DuplicateQp(0x100)));
}

#[test]
fn qps_are_found_by_number_however_they_are_numbered() {
    use railyard_roce::nic::NicError;
    // Numbers that share a group of the NIC's dense index (0x100-0x17f),
    // a group's later members connected first, and numbers far above it.
    let mut nic = Nic::new(config(MAC_A, IP_A, MAC_B, CongestionControl::None, 1024));
    let qpns = [0x17f, 0x100, 0x101, 0x0f_ff80, 0x10_0000, 0xff_fffe];
    for (k, &q) in qpns.iter().enumerate() {
        nic.connect(QpConfig {
            local_qpn: q,
            remote_ip: IP_B,
            remote_qpn: 0x200 + k as u32,
            udp_sport: 0xc000 + k as u16,
        })
        .unwrap();
    }
    let wr = WriteRequest {
        wr_id: 0,
        local_offset: 0,
        remote_offset: 0,
        len: 8,
        imm: None,
    };
    for &q in &qpns {
        assert_eq!(nic.post_write(q, wr), Ok(()), "QP {q:#x}");
    }
    for q in [0x102, 0x17e, 0x0f_ff81, 0xff_ffff, 0x100 | 1 << 24] {
        assert_eq!(nic.post_write(q, wr), Err(NicError::UnknownQp(q)));
    }
    // Each post went to its own QP: one frame per QP, to its remote QPN.
    let mut buf = vec![0; TX_BUFFER_LEN];
    let mut dests = Vec::new();
    let mut now = 0;
    while dests.len() < qpns.len() && now < 1_000_000 {
        if let Some(n) = nic.transmit(now, &mut buf) {
            if let Ok(RxFrame::Roce(r)) = RxFrame::parse_with(&buf[..n], true) {
                dests.push(r.bth.dest_qp);
            }
        }
        now += 100;
    }
    dests.sort_unstable();
    assert_eq!(
        dests,
        (0x200..0x200 + qpns.len() as u32).collect::<Vec<_>>()
    );
}

#[test]
fn receiving_notes_a_writes_source_and_size() {
    let mut lab = Lab::new(CongestionControl::None, 64 * 1024);
    // 5,000 bytes with immediate: WRITE FIRST (RETH + 4,096) and WRITE LAST
    // with immediate (904 + 4), each with a 4-byte ICRC.
    post(&mut lab, 7, 0x100, 0, 5_000);
    let mut buf = vec![0; TX_BUFFER_LEN];
    let mut notes = Vec::new();
    let mut now = 0;
    while notes.len() < 2 && now < 1_000_000 {
        if let Some(n) = lab.nics[0].transmit(now, &mut buf) {
            notes.push(lab.nics[1].receive_noting(now, &buf[..n]));
        }
        now += 100;
    }
    assert_eq!(
        notes,
        [Some((IP_A, 16 + 4_096 + 4)), Some((IP_A, 4 + 904 + 4))]
    );
    // The receiver's ACK is no WRITE.
    let n = (now..now + 1_000_000)
        .step_by(100)
        .find_map(|t| lab.nics[1].transmit(t, &mut buf))
        .unwrap();
    assert_eq!(opcode_of(&buf[..n]), Some(Opcode::RcAcknowledge));
    assert_eq!(lab.nics[0].receive_noting(now, &buf[..n]), None);
    assert_eq!(lab.nics[1].stats().rx_frames, 2);
}

#[test]
fn a_data_free_nic_checks_ranges_against_virtual_memory() {
    use railyard_roce::nic::NicError;
    let cfg = config(MAC_A, IP_A, MAC_B, CongestionControl::None, 64 * 1024);
    let mut a = Nic::with_data(cfg, false);
    let mut b = Nic::with_data(
        config(MAC_B, IP_B, MAC_A, CongestionControl::None, 8 * 1024),
        false,
    );
    assert!(a.memory().is_empty() && !a.carries_data());
    assert_eq!(a.memory_len(), 64 * 1024);
    a.connect(QpConfig {
        local_qpn: 0x100,
        remote_ip: IP_B,
        remote_qpn: 0x200,
        udp_sport: 0xc000,
    })
    .unwrap();
    b.connect(QpConfig {
        local_qpn: 0x200,
        remote_ip: IP_A,
        remote_qpn: 0x100,
        udp_sport: 0xd000,
    })
    .unwrap();
    let wr = |local_offset, remote_offset, len| WriteRequest {
        wr_id: 1,
        local_offset,
        remote_offset,
        len,
        imm: Some(7),
    };
    assert_eq!(
        a.post_write(0x100, wr(60 * 1024, 0, 8 * 1024)),
        Err(NicError::OutOfMemoryRange)
    );
    // In range locally; the first lands inside B's 8 KiB, the second runs
    // past it and is refused by the responder as malformed.
    a.post_write(0x100, wr(0, 4096, 4096)).unwrap();
    a.post_write(0x100, wr(0, 6144, 4096)).unwrap();
    let mut buf = vec![0xa5u8; TX_BUFFER_LEN];
    let mut t = 0;
    let mut got = Vec::new();
    while let Some(n) = a.transmit(t, &mut buf) {
        assert!(n > 4096, "a full-length frame");
        b.receive(t, &buf[..n]);
        while let Some(c) = b.poll_completion() {
            got.push(c);
        }
        t += 1_000;
    }
    assert_eq!(
        got,
        [Completion::Received {
            qpn: 0x200,
            imm: 7,
            offset: 4096,
            len: 4096
        }]
    );
    assert_eq!(b.stats().rx_dropped.malformed, 1);
    assert_eq!(b.stats().rx_dropped.icrc, 0);
    assert!(b.memory().is_empty());
}

#[test]
fn truncated_frames_are_counted_malformed() {
    let mut lab = Lab::new(CongestionControl::None, MB);
    post(&mut lab, 1, 0x100, 0, 8192);
    let mut buf = vec![0u8; TX_BUFFER_LEN];
    let n = lab.nics[0].transmit(0, &mut buf).unwrap();
    let b = &mut lab.nics[1];
    for cut in 0..n {
        b.receive(0, &buf[..cut]);
    }
    let s = b.stats();
    assert_eq!(s.rx_frames, n as u64);
    assert_eq!(s.rx_dropped.malformed, n as u64);
    // A flipped payload bit fails the ICRC; another QP number is unknown.
    let mut bad = buf[..n].to_vec();
    bad[200] ^= 1;
    b.receive(0, &bad);
    assert_eq!(b.stats().rx_dropped.icrc, 1);
    assert!(b.memory().iter().all(|&x| x == 0));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_frames_never_panic_and_are_counted(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..300),
        ethertype in prop_oneof![Just(None), Just(Some([0x08u8, 0x00])), Just(Some([0x88, 0x08])),
                                 Just(Some([0x08, 0x06])), Just(Some([0x81, 0x00]))],
    ) {
        if let (Some(e), true) = (ethertype, bytes.len() >= 14) {
            bytes[12..14].copy_from_slice(&e);
        }
        let mut nic = Nic::new(config(MAC_A, IP_A, MAC_B, CongestionControl::Dcqcn(DcqcnParams::default()), 4096));
        nic.connect(QpConfig { local_qpn: 1, remote_ip: IP_B, remote_qpn: 2, udp_sport: 3 }).unwrap();
        nic.receive(5, &bytes);
        let s = nic.stats();
        let d = &s.rx_dropped;
        let dropped = d.malformed + d.icrc + d.unknown_qp + d.out_of_sequence + d.duplicate + d.not_for_us;
        prop_assert_eq!(s.rx_frames, 1);
        // Only a well-formed PFC/PAUSE or ARP frame may be taken.
        let taken_ok = bytes.len() >= 14 && matches!(&bytes[12..14], [0x88, 0x08] | [0x08, 0x06]);
        prop_assert!(dropped == 1 || (dropped == 0 && taken_ok), "{:?}", s);
        let mut buf = vec![0u8; TX_BUFFER_LEN];
        let _ = nic.transmit(10, &mut buf);
        let _ = nic.next_wakeup();
    }
}

/// With several QPs owing ACKs and CNPs while data is paused, the control
/// queue sends the CNPs, holds the ACKs (without losing its place in the
/// queue) and sends them once the pause ends.
#[test]
fn a_pause_holds_the_acks_of_many_qps_while_their_cnps_go() {
    let cc = CongestionControl::Dcqcn(DcqcnParams::default());
    let mut lab = Lab::new(cc, 8 * MB);
    for q in 0..4u32 {
        lab.nics[1]
            .post_write(
                0x200 + q,
                WriteRequest {
                    wr_id: u64::from(q),
                    local_offset: q as usize * 2 * MB,
                    remote_offset: q as u64 * 2 * MB as u64,
                    len: 2 * MB,
                    imm: None,
                },
            )
            .unwrap();
    }
    let pause_at: Nanos = 30_000;
    lab.inbound[0].push_back((pause_at, pfc(3, 0xffff)));
    let mut mark = ce_mark_from_b;
    let end = pause_at + FULL_PAUSE_NS;
    lab.run(10_000_000, &mut mark, &mut |lab| lab.now > end + 50_000);
    let a = |lo: Nanos, hi: Nanos, op: Opcode| {
        lab.seen
            .iter()
            .filter(|s| s.from == 0 && s.at >= lo && s.at < hi && s.opcode == Some(op))
            .count()
    };
    assert_eq!(a(pause_at + 1_000, end, Opcode::RcAcknowledge), 0);
    assert!(
        a(pause_at + 1_000, end, Opcode::Cnp) >= 4,
        "CNPs go while paused"
    );
    assert!(
        a(end, end + 50_000, Opcode::RcAcknowledge) >= 4,
        "ACKs resume"
    );
}
