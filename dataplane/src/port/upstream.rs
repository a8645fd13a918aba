//! A PFC-honouring upstream for replay sources: closed-loop replay.
//!
//! A trace replayed open-loop keeps sending whatever the switch says; a real
//! sender stops a priority when the switch pauses it. [`PfcUpstream`] gives
//! a replay source that behaviour: the source shows it every frame the
//! switch transmits on the interface ([`PfcUpstream::on_tx`]); PFC frames
//! (and 802.3x PAUSE, which pauses every priority) set per-priority
//! pause-until times of quanta × 512 bit times at the interface's speed,
//! and quanta 0 resumes at once.
//!
//! A pause takes effect at the sender only after the path's response time
//! ([`PfcUpstream::with_response`]; for a configured interface
//! [`PfcDelays::wire_response_ns`](crate::model::PfcDelays::wire_response_ns)
//! with the interface's delays: the cable's
//! round trip, a frame in flight at each end, the peer's reaction, each as
//! configured or the standard term): trace frames that reach the switch before
//! then still arrive, as they would from a real sender, and so does a
//! resume. Without it any headroom of one frame would replay lossless.
//!
//! On receive, a trace frame whose priority is paused at its timestamp is
//! moved aside into a per-priority queue (a NIC's per-priority queues), so
//! later frames of other priorities still pass; it is delivered when the
//! pause ends, stamped with the release time. Held frames leave one after
//! another at the interface speed, as a real sender's would, not all at the
//! instant the pause ends (a backlog arriving at once would overrun any
//! headroom sized for line rate). A frame's priority is its
//! qos-group as the interface classifies it ([`crate::pfc`]: priority n is
//! qos-group n), from the 802.1p table when the interface has one, else the
//! DSCP table (ACL rules are not consulted).
//!
//! Held frames are owned buffers (a source that reads from a file copies
//! the frame once); at most [`MAX_HELD`] are held, beyond which the trace
//! waits behind its first paused frame. This is the replay source, not the
//! switch's fast path.

use std::collections::VecDeque;

use crate::clock::Nanos;
use crate::model::pfc::{speed_or_default, PRIORITIES};
use crate::model::InterfaceModel;
use crate::pfc::quanta_ns;
use crate::qos::shaper::{ps_to_ns_ceil, serialisation_ps, wire_bytes};
use crate::wire::mac_control::{MacControlRepr, Packet as MacControl, PAUSE_DST};

/// Frames a closed-loop source holds back at most (bounds its memory).
pub const MAX_HELD: usize = 65_536;

const ETH_HEADER: usize = 14;

/// Pause state and held frames of one replayed sender (see the module doc).
#[derive(Debug, Clone)]
pub struct PfcUpstream {
    speed_mbps: Option<u32>,
    dscp_to_prio: [u8; 64],
    cos_to_prio: Option<[u8; 8]>,
    /// From a pause frame leaving the switch to the sender's frames no
    /// longer arriving (and the same for a resume).
    response_ns: Nanos,
    /// Arrivals from this time on, until `paused_until`, are paused.
    paused_from: [Nanos; PRIORITIES],
    paused_until: [Nanos; PRIORITIES],
    /// The latest of `paused_until`: at or after it no priority is paused,
    /// so the per-frame checks need not classify the frame (replay fast path).
    pause_horizon: Nanos,
    held: [VecDeque<(Nanos, Vec<u8>)>; PRIORITIES],
    held_now: usize,
    /// When the sender's wire is free after the last held frame it released.
    resume_free: Nanos,
    pause_frames: u64,
    held_frames: u64,
}

impl PfcUpstream {
    /// An upstream timing pauses at `speed_mbps` (100 Gb/s when `None`) and
    /// classifying frames with the interface's qos-group tables.
    pub fn new(speed_mbps: Option<u32>, dscp_to_qos_group: [u8; 64], cos: Option<[u8; 8]>) -> Self {
        PfcUpstream {
            speed_mbps,
            dscp_to_prio: dscp_to_qos_group.map(|g| g & 7),
            cos_to_prio: cos.map(|t| t.map(|g| g & 7)),
            response_ns: 0,
            paused_from: [0; PRIORITIES],
            paused_until: [0; PRIORITIES],
            pause_horizon: 0,
            held: std::array::from_fn(|_| VecDeque::new()),
            held_now: 0,
            resume_free: 0,
            pause_frames: 0,
            held_frames: 0,
        }
    }

    /// The upstream of a configured interface: its speed, classification
    /// and the wire's response time at that speed with the interface's
    /// delays ([`PfcModel::delays`](crate::model::PfcModel::delays)).
    pub fn for_interface(m: &InterfaceModel) -> Self {
        Self::new(m.speed_mbps, m.dscp_to_qos_group, m.cos_to_qos_group)
            .with_response(m.pfc.delays.wire_response_ns(m.speed_mbps, m.mtu))
    }

    /// The same upstream with pauses and resumes taking effect `ns` after
    /// the switch sends them (0, the default of [`new`](Self::new): at once).
    pub fn with_response(mut self, ns: Nanos) -> Self {
        self.response_ns = ns;
        self
    }

    /// The priority (qos-group) the switch gives `frame` on this interface.
    pub fn priority(&self, frame: &[u8]) -> usize {
        let Some(mut ethertype) = frame.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]))
        else {
            return 0;
        };
        let mut l3 = ETH_HEADER;
        let mut pcp = 0u8;
        let tagged = ethertype == 0x8100;
        if tagged {
            let Some(tag) = frame.get(14..18) else {
                return 0;
            };
            pcp = tag[0] >> 5;
            ethertype = u16::from_be_bytes([tag[2], tag[3]]);
            l3 += 4;
        }
        if tagged {
            // A tagged frame's PFC priority is its PCP.
            return usize::from(pcp);
        }
        if let Some(cos) = &self.cos_to_prio {
            return usize::from(cos[0]);
        }
        let dscp = match (ethertype, frame.get(l3..l3 + 2)) {
            (0x0800, Some(b)) => b[1] >> 2,
            (0x86dd, Some(b)) => (((b[0] & 0x0f) << 4) | (b[1] >> 4)) >> 2,
            _ => return 0,
        };
        usize::from(self.dscp_to_prio[usize::from(dscp)])
    }

    /// Looks at a frame the switch sent on this interface at `now`: a PFC or
    /// PAUSE frame reloads the pause timers of the priorities it names.
    pub fn on_tx(&mut self, frame: &[u8], now: Nanos) {
        if frame.len() < ETH_HEADER + 2
            || frame[..6] != PAUSE_DST.0
            || frame[12..14] != [0x88, 0x08]
        {
            return;
        }
        let Ok(repr) = MacControlRepr::parse(&MacControl::new_unchecked(&frame[ETH_HEADER..]))
        else {
            return;
        };
        let (enable, quanta) = match repr {
            MacControlRepr::Pfc { enable, quanta } => (enable, quanta),
            MacControlRepr::Pause { quanta } => (0xff, [quanta; PRIORITIES]),
            MacControlRepr::Unknown(_) => return,
        };
        self.pause_frames += 1;
        let effective = now + self.response_ns;
        for (p, q) in quanta.iter().enumerate() {
            if enable & (1 << p) == 0 {
                continue;
            }
            if *q == 0 {
                // A resume ends a pause when it reaches the sender.
                self.paused_until[p] = self.paused_until[p].min(effective);
            } else {
                // A pause still in force then is extended, not restarted.
                if self.paused_until[p] < effective {
                    self.paused_from[p] = effective;
                }
                self.paused_until[p] = effective + quanta_ns(*q, self.speed_mbps);
            }
        }
        self.pause_horizon = self.paused_until.iter().copied().max().unwrap_or(0);
    }

    /// Whether a frame stamped `t` passes untouched whatever its priority:
    /// nothing is held and no priority is paused at `t`. Lets the checks
    /// below skip classifying every frame while no pause is in force (the
    /// common case).
    #[inline]
    fn quiet_at(&self, t: Nanos) -> bool {
        self.held_now == 0 && self.pause_horizon <= t
    }

    /// When a frame of `frame`'s priority stamped `t` may leave the sender.
    #[inline]
    pub fn release_time(&self, t: Nanos, frame: &[u8]) -> Nanos {
        if self.pause_horizon <= t {
            // Every paused_until is at or before t.
            return t;
        }
        let p = self.priority(frame);
        if self.paused_from[p] <= t {
            t.max(self.paused_until[p])
        } else {
            t
        }
    }

    /// Whether a trace frame stamped `t` must be moved aside rather than
    /// sent at `t`: its priority is paused then, or earlier frames of it are
    /// held; `false` when the held queues are full (the trace then waits).
    #[inline]
    pub fn should_hold(&self, t: Nanos, frame: &[u8]) -> bool {
        if self.quiet_at(t) {
            return false;
        }
        let p = self.priority(frame);
        self.held_now < MAX_HELD
            && ((self.paused_from[p] <= t && self.paused_until[p] > t) || !self.held[p].is_empty())
    }

    /// Moves a trace frame aside until its priority resumes.
    pub fn hold(&mut self, t: Nanos, frame: Vec<u8>) {
        let p = self.priority(&frame);
        self.held[p].push_back((t, frame));
        self.held_now += 1;
        self.held_frames += 1;
    }

    /// The earliest release among held frames: (time, priority).
    #[inline]
    pub fn next_release(&self) -> Option<(Nanos, usize)> {
        if self.held_now == 0 {
            return None;
        }
        (0..PRIORITIES)
            .filter_map(|p| {
                let (t, _) = self.held[p].front()?;
                Some((self.held_release_time(*t, p), p))
            })
            .min()
    }

    /// When a held frame of priority `p` stamped `t` leaves: once its
    /// priority resumes and the frames released before it are on the wire.
    #[inline]
    fn held_release_time(&self, t: Nanos, p: usize) -> Nanos {
        t.max(self.paused_until[p]).max(self.resume_free)
    }

    /// The priority whose held frame a source should deliver next at `now`:
    /// one is due, and it leaves no later than the trace's own next frame
    /// `head` (already filtered to those due).
    #[inline]
    pub fn due_before(&self, head: Option<Nanos>, now: Nanos) -> Option<usize> {
        let (t, p) = self.next_release()?;
        (t <= now && head.is_none_or(|h| t <= h)).then_some(p)
    }

    /// Takes the oldest held frame of priority `p`, stamped with its release time.
    pub fn release(&mut self, p: usize) -> Option<(Nanos, Vec<u8>)> {
        let (t, f) = self.held.get_mut(p)?.pop_front()?;
        self.held_now -= 1;
        let at = self.held_release_time(t, p);
        let speed = speed_or_default(self.speed_mbps);
        let wire = serialisation_ps(wire_bytes(f.len()), speed * 1_000_000);
        self.resume_free = at + ps_to_ns_ceil(wire);
        Some((at, f))
    }

    /// Frames held back now.
    pub fn held_now(&self) -> usize {
        self.held_now
    }

    /// Frames held back since the start (each counted once).
    pub fn held_frames(&self) -> u64 {
        self.held_frames
    }

    /// PFC and PAUSE frames received from the switch.
    pub fn pause_frames(&self) -> u64 {
        self.pause_frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pfc::{PeerResponse, PfcDelays};
    use crate::wire::mac_control::FRAME_LEN;
    use crate::wire::MacAddr;

    fn ipv4(dscp: u8) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[15] = dscp << 2;
        f
    }

    fn pfc(prio: usize, quanta: u16) -> Vec<u8> {
        let mut q = [0u16; 8];
        q[prio] = quanta;
        let mut f = [0u8; FRAME_LEN];
        MacControlRepr::Pfc {
            enable: 1 << prio,
            quanta: q,
        }
        .emit_frame(MacAddr([2, 0, 0, 0, 0, 1]), &mut f);
        f.to_vec()
    }

    #[test]
    fn pauses_hold_and_resume_releases() {
        let mut dscp = [0u8; 64];
        dscp[24] = 3;
        let mut up = PfcUpstream::new(Some(100_000), dscp, None);
        assert_eq!(up.priority(&ipv4(24)), 3);
        assert_eq!(up.priority(&ipv4(0)), 0);
        assert!(!up.should_hold(10, &ipv4(24)));
        up.on_tx(&pfc(3, 1000), 100);
        assert_eq!(up.pause_frames(), 1);
        let until = 100 + quanta_ns(1000, Some(100_000));
        assert_eq!(up.release_time(150, &ipv4(24)), until);
        assert!(up.should_hold(150, &ipv4(24)));
        assert!(!up.should_hold(150, &ipv4(0)));
        up.hold(150, ipv4(24));
        assert_eq!(up.next_release(), Some((until, 3)));
        // A later frame of the same priority queues behind, even past the pause.
        assert!(up.should_hold(until + 1, &ipv4(24)));
        up.on_tx(&pfc(3, 0), 300);
        assert_eq!(up.next_release(), Some((300, 3)));
        assert_eq!(up.release(3).map(|(t, _)| t), Some(300));
        assert_eq!(up.held_now(), 0);
        assert_eq!(up.held_frames(), 1);
    }

    /// With a response time, what the sender sent before the pause reached
    /// it still arrives; a refresh in force extends the pause from where it
    /// began; a resume takes as long to arrive.
    #[test]
    fn pauses_and_resumes_take_the_response_time_to_act() {
        let mut dscp = [0u8; 64];
        dscp[24] = 3;
        let mut up = PfcUpstream::new(Some(100_000), dscp, None).with_response(1_000);
        up.on_tx(&pfc(3, 1000), 100);
        let q = quanta_ns(1000, Some(100_000));
        // In flight: arrives unpaused until 100 + 1000.
        assert!(!up.should_hold(1_099, &ipv4(24)));
        assert_eq!(up.release_time(1_099, &ipv4(24)), 1_099);
        assert!(up.should_hold(1_100, &ipv4(24)));
        assert_eq!(up.release_time(1_100, &ipv4(24)), 1_100 + q);
        // A refresh while paused: still paused from 1100, now until 3000 + q.
        up.on_tx(&pfc(3, 1000), 2_000);
        assert!(up.should_hold(1_100, &ipv4(24)));
        assert_eq!(up.release_time(2_500, &ipv4(24)), 3_000 + q);
        // A resume at 2500 ends the pause at 3500, not at once.
        up.on_tx(&pfc(3, 0), 2_500);
        assert!(up.should_hold(3_499, &ipv4(24)));
        assert!(!up.should_hold(3_500, &ipv4(24)));
        // The wire's terms at 100 Gb/s, MTU 9216: 1000 ns of cable, two
        // 9258-byte frames and 3840 bits: 2520 ns in all.
        let standard = PfcDelays::default();
        assert_eq!(
            standard.wire_response_ns(Some(100_000), 9216),
            1_000 + 1_520
        );
    }

    /// A configured interface's upstream waits out that interface's
    /// delays: 300 m of cable is 3000 ns of round trip where 100 m was
    /// 1000, and a peer answering in 2 µs instead of 3840 bit times adds
    /// those 2000 ns in place of 38.4.
    #[test]
    fn an_interfaces_upstream_waits_out_its_configured_delays() {
        let mut m = InterfaceModel::new("e1", crate::wire::MacAddr([2, 0, 0, 0, 0, 1]));
        m.speed_mbps = Some(100_000);
        m.mtu = 1500;
        m.dscp_to_qos_group[24] = 3;
        // Two 1542-byte frames and 3840 bits at 100 Gb/s: 246.72 + 38.4 ns.
        let standard = 1_000 + 286;
        assert_eq!(
            PfcDelays::default().wire_response_ns(m.speed_mbps, m.mtu),
            standard
        );
        m.pfc.delays.cable_metres = 300;
        m.pfc.delays.peer_response = PeerResponse::Nanos(2_000);
        // 3000 ns of cable, 246.72 ns of frames (rounded up), 2000 ns of peer.
        let configured = 3_000 + 247 + 2_000;
        assert_eq!(
            m.pfc.delays.wire_response_ns(m.speed_mbps, m.mtu),
            configured
        );
        let mut up = PfcUpstream::for_interface(&m);
        up.on_tx(&pfc(3, 1000), 100);
        assert!(!up.should_hold(100 + configured - 1, &ipv4(24)));
        assert!(up.should_hold(100 + configured, &ipv4(24)));
    }
}
