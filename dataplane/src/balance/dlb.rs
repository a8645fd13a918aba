//! Dynamic load balancing: port quality, flowlets and per-packet choice.
//!
//! # Port quality
//!
//! Each egress port keeps a discounting rate estimator (DRE, as in CONGA and
//! Cisco's Cloud Scale DLB): every `sampling-interval` T the bytes sent
//! since the last sample are added to X, then X loses 2^−`decay-factor` of
//! itself. In steady state X ≈ B · (2^d − 1) for B bytes per interval, so
//! B ≈ X / (2^d − 1), with a time constant of T · 2^d. The port's load is
//!
//! ```text
//! load % = 100 × (B + queued bytes) / (bytes the port's speed allows in T)
//! ```
//!
//! so a busy port with a standing queue reads above 100 %. The load is
//! quantised into a band 0…7 by `dre-thresholds`, whose levels are band
//! *widths*: band 0 is [0, level-1), band n starts at level-1 + … + level-n
//! (default starts 12, 25, 37, 50, 62, 75, 87 %). With levels adding up to
//! 100, as in Cisco's examples, band 7 is a port at or above full load.
//! This is how Cisco's own material reads: the Nexus 9000 CloudScale DLB
//! example (Cisco's genielibs `test_dlb_complete_cloudscale_config`, "from
//! the guide") sets 15 20 30 15 10 5 5 and APIC's DLB policy defaults
//! (developer.cisco.com, "Configuring Port Channel Dynamic Load Balancing")
//! are 5 5 10 15 15 25 25: both add up to 100 and neither rises, so neither
//! can be a list of absolute thresholds. Ports without a configured speed
//! are measured against [`REFERENCE_MBPS`].
//!
//! # Static pinning
//!
//! `static-pinning` / `source A destination B`: a packet that arrives on A
//! and is balanced over a DLB group that has B among its members leaves on
//! B, whatever the mode and the qualities, as long as B is up (otherwise it
//! is balanced as usual). Groups without B, and ECMP groups, are unaffected.
//!
//! The port's owning worker samples and publishes (load, band) into a shared
//! [`QualityBoard`] of atomics; every worker reads it without locks.

use std::sync::atomic::{AtomicU32, Ordering};

use super::GroupCounters;
use crate::clock::Nanos;
use crate::model::PortId;
use crate::model::{DlbMode, DlbModel};
use crate::nexthop::{EcmpGroup, MAX_MEMBERS};

/// Speed a port without `speed` is measured against: 100 Gb/s, the usual
/// rail and spine port of an AI fabric.
pub const REFERENCE_MBPS: u64 = 100_000;

/// Published quality of every port: load percent (16 bits) and band (8 bits)
/// in one atomic per port, written by the owning worker, read by all.
#[derive(Debug, Default)]
pub struct QualityBoard {
    ports: Vec<AtomicU32>,
}

impl QualityBoard {
    /// A board for `ports` ports, all idle.
    pub fn new(ports: usize) -> Self {
        QualityBoard {
            ports: (0..ports).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Publishes a port's load and band.
    pub fn publish(&self, port: usize, load_percent: u16, band: u8) {
        if let Some(a) = self.ports.get(port) {
            a.store(
                (u32::from(load_percent) << 8) | u32::from(band),
                Ordering::Relaxed,
            );
        }
    }

    /// A port's band, 0 (idle) … 7 (loaded).
    #[inline]
    pub fn band(&self, port: PortId) -> u8 {
        self.ports
            .get(usize::from(port))
            .map_or(0, |a| a.load(Ordering::Relaxed) as u8)
    }

    /// A port's load in percent of its speed (above 100 with a standing queue).
    pub fn load_percent(&self, port: PortId) -> u16 {
        self.ports
            .get(usize::from(port))
            .map_or(0, |a| (a.load(Ordering::Relaxed) >> 8) as u16)
    }
}

/// The rate estimator of one egress port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dre {
    x: u64,
    last_tx_bytes: u64,
}

impl Dre {
    /// Takes a sample `intervals` sampling intervals after the previous one:
    /// `tx_bytes` is the port's running total of bytes sent, `queued` what
    /// waits in its queues. Returns (load percent, band).
    pub fn sample(
        &mut self,
        model: &DlbModel,
        intervals: u64,
        tx_bytes: u64,
        queued: u64,
        speed_mbps: Option<u32>,
    ) -> (u16, u8) {
        let sent = tx_bytes.saturating_sub(self.last_tx_bytes);
        self.last_tx_bytes = tx_bytes;
        self.x = self.x.saturating_add(sent);
        let d = u32::from(model.decay_factor.min(15));
        for _ in 0..intervals.clamp(1, 64) {
            self.x -= self.x >> d;
        }
        let per_interval = if d == 0 {
            sent / intervals.max(1)
        } else {
            self.x / ((1u64 << d) - 1)
        };
        let capacity = interval_capacity(model, speed_mbps);
        let load = ((per_interval + queued).saturating_mul(100) + capacity / 2) / capacity;
        let load = load.min(u64::from(u16::MAX));
        (load as u16, band_of(model, load))
    }
}

/// Bytes a port of `speed_mbps` can send in one sampling interval.
fn interval_capacity(model: &DlbModel, speed_mbps: Option<u32>) -> u64 {
    let speed = speed_mbps.map_or(REFERENCE_MBPS, u64::from);
    // Mb/s × ns / 8000.
    (speed * model.sampling_interval_ns / 8_000).max(1)
}

/// The quality band of a load in percent: how many band starts (running
/// sums of the levels) it has reached.
#[inline]
fn band_of(model: &DlbModel, load_percent: u64) -> u8 {
    let mut start = 0u64;
    let mut band = 0u8;
    for w in model.levels {
        start += u64::from(w);
        if load_percent >= start {
            band += 1;
        }
    }
    band
}

/// Fractional bits of [`DlbState`]'s pending load.
const FIXED_SHIFT: u32 = 20;

/// One flow's last placement.
#[derive(Debug, Clone, Copy, Default)]
struct Flowlet {
    hash: u32,
    /// Group id + 1; 0 marks an empty slot.
    group: u32,
    member: u8,
    last: Nanos,
}

/// A worker's DLB state: the flowlet table, the round-robin position and
/// what it placed since the last quality sample.
///
/// The published quality is at most one sampling interval old; to keep
/// every choice made within that interval from herding onto the member that
/// looked best at its start, each worker adds the bytes it has placed on a
/// port since the interval began to the port's published load before
/// banding it.
#[derive(Debug)]
pub struct DlbState {
    model: DlbModel,
    table: Vec<Flowlet>,
    mask: usize,
    /// Load placed per port in the current interval, in percent of the
    /// port's interval capacity, fixed point with [`FIXED_SHIFT`] bits.
    pending: Vec<u64>,
    /// Fixed-point percent one byte adds on each port (so the fast path
    /// multiplies instead of dividing).
    per_byte: Vec<u64>,
    /// Band of every load percent 0…255 (255 stands for anything higher).
    bands: [u8; 256],
    /// When the current interval ends (pending bytes are then forgotten).
    interval_end: Nanos,
    /// Per-packet round-robin position, one for all groups: groups that
    /// share uplinks (every remote prefix of a leaf) then take turns instead
    /// of all starting on the same member.
    rr: u32,
    /// Per ingress port, the port its DLB traffic is pinned to.
    pins: Vec<Option<PortId>>,
}

impl DlbState {
    /// Fresh state for `model` over ports of the given speeds.
    pub fn new(model: &DlbModel, speeds_mbps: &[Option<u32>]) -> Self {
        let size = model
            .flowlet_table_size
            .clamp(1, 1 << 20)
            .next_power_of_two();
        DlbState {
            model: model.clone(),
            table: vec![Flowlet::default(); size],
            mask: size - 1,
            pending: vec![0; speeds_mbps.len()],
            per_byte: speeds_mbps
                .iter()
                .map(|s| (100 << FIXED_SHIFT) / interval_capacity(model, *s))
                .collect(),
            bands: std::array::from_fn(|load| band_of(model, load as u64)),
            interval_end: 0,
            rr: 0,
            pins: {
                let mut pins = vec![None; speeds_mbps.len()];
                for &(src, dst) in &model.pins {
                    if let Some(p) = pins.get_mut(usize::from(src)) {
                        *p = Some(dst);
                    }
                }
                pins
            },
        }
    }

    /// True when this state was built for `model` over ports of these speeds.
    pub fn fits(&self, model: &DlbModel, speeds_mbps: &[Option<u32>]) -> bool {
        self.model == *model
            && self.per_byte.len() == speeds_mbps.len()
            && self
                .per_byte
                .iter()
                .zip(speeds_mbps)
                .all(|(c, s)| *c == (100 << FIXED_SHIFT) / interval_capacity(model, *s))
    }

    /// The band a port has for this worker's next choice: its published load
    /// plus what this worker placed on it since the interval began.
    #[inline]
    fn band(&self, board: &QualityBoard, port: PortId) -> u8 {
        let pending = self
            .pending
            .get(usize::from(port))
            .map_or(0, |p| p >> FIXED_SHIFT);
        let load = (u64::from(board.load_percent(port)) + pending).min(255);
        self.bands[load as usize]
    }

    /// The settings this state was built for.
    pub fn model(&self) -> &DlbModel {
        &self.model
    }

    /// Picks a member of DLB `group` for a packet of flow `hash` that
    /// arrived on `in_port`; `None` when no member is usable.
    #[inline]
    #[allow(clippy::too_many_arguments)] // one call site, on the fast path
    pub fn choose(
        &mut self,
        group: &EcmpGroup,
        hash: u32,
        in_port: PortId,
        bytes: usize,
        now: Nanos,
        board: &QualityBoard,
        usable: &impl Fn(PortId) -> bool,
        c: &mut GroupCounters,
    ) -> Option<usize> {
        if now >= self.interval_end {
            self.pending.fill(0);
            let t = self.model.sampling_interval_ns.max(1);
            self.interval_end = now - now % t + t;
        }
        let pinned = self
            .pins
            .get(usize::from(in_port))
            .copied()
            .flatten()
            .filter(|dst| usable(*dst))
            .and_then(|dst| group.hops().iter().position(|h| h.port == dst));
        let member = match pinned {
            Some(m) => {
                c.pinned += 1;
                m
            }
            None => self.place(group, hash, now, board, usable, c)?,
        };
        let port = usize::from(group.hops()[member].port);
        if let (Some(p), Some(k)) = (self.pending.get_mut(port), self.per_byte.get(port)) {
            *p += bytes as u64 * k;
        }
        Some(member)
    }

    #[inline]
    fn place(
        &mut self,
        group: &EcmpGroup,
        hash: u32,
        now: Nanos,
        board: &QualityBoard,
        usable: &impl Fn(PortId) -> bool,
        c: &mut GroupCounters,
    ) -> Option<usize> {
        let gid = group.id() + 1;
        let idx = hash as usize & self.mask;
        let slot = self.table[idx];
        let same_flow = slot.group == gid && slot.hash == hash;
        let recent = same_flow && now.saturating_sub(slot.last) <= self.model.flowlet_aging_ns;
        let band = |port: PortId| {
            if self.model.load_awareness {
                self.band(board, port)
            } else {
                0
            }
        };
        let member = match self.model.mode {
            DlbMode::Flowlet => {
                let prev = usize::from(slot.member);
                if recent && group.hops().get(prev).is_some_and(|h| usable(h.port)) {
                    self.table[idx].last = now;
                    return Some(prev);
                }
                c.flowlets_started += 1;
                let m = best(group, band, usable, flowlet_tie_break(hash))?;
                if same_flow && m != prev {
                    c.flowlet_moves += 1;
                }
                m
            }
            DlbMode::PerPacket => {
                let m = best(group, band, usable, self.rr)?;
                self.rr = self.rr.wrapping_add(1);
                c.per_packet_choices += 1;
                m
            }
        };
        if recent && usize::from(slot.member) != member {
            c.reorder_risk += 1;
        }
        self.table[idx] = Flowlet {
            hash,
            group: gid,
            member: member as u8,
            last: now,
        };
        Some(member)
    }
}

/// Which of several equally good members a new flowlet of `hash` takes
/// (the `k`-th of `n`, k = this modulo n): the hash's upper half, because
/// the bucket table uses the lower bits and reusing them would repeat
/// ECMP's collisions whenever the members are equally idle.
#[inline]
pub fn flowlet_tie_break(hash: u32) -> u32 {
    hash >> 16
}

/// The usable member of best (lowest) band; among equals the `pick`-th
/// modulo their number.
#[inline]
fn best(
    group: &EcmpGroup,
    band: impl Fn(PortId) -> u8,
    usable: &impl Fn(PortId) -> bool,
    pick: u32,
) -> Option<usize> {
    // One pass reads every member's band (unusable ones as u8::MAX); the
    // second only compares.
    let mut bands = [u8::MAX; MAX_MEMBERS];
    let mut lowest = u8::MAX;
    let mut ties = 0u32;
    for (b, h) in bands.iter_mut().zip(group.hops()) {
        if !usable(h.port) {
            continue;
        }
        *b = band(h.port);
        if *b < lowest {
            lowest = *b;
            ties = 1;
        } else if *b == lowest {
            ties += 1;
        }
    }
    if ties == 0 {
        return None;
    }
    let k = (pick % ties) as usize;
    let n = group.hops().len().min(MAX_MEMBERS);
    bands[..n]
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == lowest)
        .nth(k)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nexthop::NextHop;

    fn group(ports: &[PortId]) -> EcmpGroup {
        let hops = ports
            .iter()
            .map(|p| NextHop {
                port: *p,
                gateway: None,
            })
            .collect();
        EcmpGroup::new(hops, 0, true)
    }

    fn counters(n: usize) -> GroupCounters {
        GroupCounters {
            members: vec![Default::default(); n],
            ..GroupCounters::default()
        }
    }

    #[test]
    fn dre_tracks_rate_and_queue() {
        let m = DlbModel::default();
        let mut dre = Dre::default();
        // 100 Gb/s for 16 µs is 200 000 bytes: send half of that per interval.
        let mut total = 0;
        let mut last = (0, 0);
        for _ in 0..40 {
            total += 100_000;
            last = dre.sample(&m, 1, total, 0, Some(100_000));
        }
        assert!((48..=52).contains(&last.0), "{last:?}");
        assert_eq!(last.1, 4, "50 % is in band 4 (50-61 %)");
        // A standing queue of one interval's worth adds 100 %.
        let (load, band) = dre.sample(&m, 1, total + 100_000, 200_000, Some(100_000));
        assert!(load >= 148, "{load}");
        assert_eq!(band, 7);
        // Idle for many intervals: back to band 0.
        let (load, band) = dre.sample(&m, 64, total + 100_000, 0, Some(100_000));
        assert_eq!((load, band), (0, 0));
    }

    #[test]
    fn flowlet_keeps_its_member_within_the_aging_and_moves_after_a_gap() {
        let m = DlbModel::default();
        let mut s = DlbState::new(&m, &[None; 4]);
        let g = group(&[0, 1, 2, 3]);
        let board = QualityBoard::new(4);
        let mut c = counters(4);
        let up = |_: PortId| true;
        let first = s.choose(&g, 42, 9, 1000, 0, &board, &up, &mut c).unwrap();
        // The chosen member becomes loaded; within the flowlet it stays.
        board.publish(usize::from(g.hops()[first].port), 200, 7);
        for t in 1..100 {
            let now = t * 4_000; // gaps of 4 µs
            assert_eq!(
                s.choose(&g, 42, 9, 1000, now, &board, &up, &mut c),
                Some(first)
            );
        }
        assert_eq!(c.flowlets_started, 1);
        // After a gap longer than the aging the flowlet moves off the loaded member.
        let later = 396_000 + m.flowlet_aging_ns + 1;
        let next = s
            .choose(&g, 42, 9, 1000, later, &board, &up, &mut c)
            .unwrap();
        assert_ne!(next, first);
        assert_eq!(
            (c.flowlets_started, c.flowlet_moves, c.reorder_risk),
            (2, 1, 0)
        );
        // A member that goes down forces a move at once, counted as a risk.
        let down = g.hops()[next].port;
        let forced = s
            .choose(&g, 42, 9, 1000, later + 1, &board, &|p| p != down, &mut c)
            .unwrap();
        assert_ne!(g.hops()[forced].port, down);
        assert_eq!(c.reorder_risk, 1);
        assert_eq!(
            s.choose(&g, 42, 9, 1000, later + 2, &board, &|_| false, &mut c),
            None
        );
    }

    #[test]
    fn per_packet_round_robins_among_the_best() {
        let m = DlbModel {
            mode: DlbMode::PerPacket,
            ..DlbModel::default()
        };
        let mut s = DlbState::new(&m, &[None; 4]);
        let g = group(&[0, 1, 2, 3]);
        let board = QualityBoard::new(4);
        board.publish(2, 90, 7);
        let mut c = counters(4);
        let mut hits = [0; 4];
        for t in 0..300 {
            hits[s
                .choose(&g, 7, 9, 1000, t, &board, &|_| true, &mut c)
                .unwrap()] += 1;
        }
        assert_eq!(hits, [100, 100, 0, 100]);
        assert_eq!(c.per_packet_choices, 300);
        assert!(c.reorder_risk >= 299, "{}", c.reorder_risk);
        // Without load awareness the loaded member takes its share too.
        let mut s = DlbState::new(
            &DlbModel {
                load_awareness: false,
                ..m
            },
            &[None; 4],
        );
        let mut hits = [0; 4];
        for t in 0..400 {
            hits[s
                .choose(&g, 7, 9, 1000, t, &board, &|_| true, &mut c)
                .unwrap()] += 1;
        }
        assert_eq!(hits, [100; 4]);
    }

    #[test]
    fn choices_within_one_interval_count_against_the_member() {
        let m = DlbModel {
            mode: DlbMode::PerPacket,
            ..DlbModel::default()
        };
        let mut s = DlbState::new(&m, &[Some(100_000); 4]);
        let g = group(&[0, 1, 2, 3]);
        let board = QualityBoard::new(4);
        for p in [0, 1, 3] {
            board.publish(p, 80, 6);
        }
        let mut c = counters(4);
        let mut hits = [0; 4];
        // 400 packets of 1000 bytes within one 16 µs interval: each is 0.5 %
        // of a 100 Gb/s port's interval, so the idle member takes about 150
        // (up to band 6 at 75 %) and then the others share.
        for t in 0..400 {
            hits[s
                .choose(&g, 7, 9, 1000, t, &board, &|_| true, &mut c)
                .unwrap()] += 1;
        }
        assert!((140..=220).contains(&hits[2]), "{hits:?}");
        assert!(hits.iter().all(|h| *h > 0), "{hits:?}");
        // The next interval starts from the published quality again.
        let next = s
            .choose(&g, 7, 9, 1000, 16_000, &board, &|_| true, &mut c)
            .unwrap();
        assert_eq!(next, 2);
    }

    #[test]
    fn dre_levels_are_band_widths() {
        // Cisco's CloudScale example: bands start at 15, 35, 65, 80, 90, 95, 100 %.
        let m = DlbModel {
            levels: [15, 20, 30, 15, 10, 5, 5],
            ..DlbModel::default()
        };
        let bands: Vec<u8> = [0, 14, 15, 34, 35, 64, 65, 80, 90, 94, 95, 99, 100, 250]
            .iter()
            .map(|l| band_of(&m, *l))
            .collect();
        assert_eq!(bands, [0, 0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7, 7]);
        // The defaults keep eight equal bands (starts 12, 25, … 87 %).
        let d = DlbModel::default();
        assert_eq!(band_of(&d, 11), 0);
        assert_eq!(band_of(&d, 25), 2);
        assert_eq!(band_of(&d, 87), 7);
        // A zero-width level is an empty band.
        let z = DlbModel {
            levels: [50, 0, 50, 0, 0, 0, 0],
            ..DlbModel::default()
        };
        assert_eq!(
            (band_of(&z, 49), band_of(&z, 50), band_of(&z, 100)),
            (0, 2, 7)
        );
    }

    #[test]
    fn a_pinned_source_always_takes_its_destination() {
        for mode in [DlbMode::Flowlet, DlbMode::PerPacket] {
            let m = DlbModel {
                mode,
                pins: vec![(9, 2)],
                ..DlbModel::default()
            };
            let mut s = DlbState::new(&m, &[None; 10]);
            let g = group(&[0, 1, 2, 3]);
            let board = QualityBoard::new(10);
            // The destination is the most loaded member: still pinned.
            board.publish(2, 300, 7);
            let mut c = counters(4);
            for t in 0..200u32 {
                let now = u64::from(t) * 1_000_000; // every packet a new flowlet
                assert_eq!(
                    s.choose(&g, t, 9, 1000, now, &board, &|_| true, &mut c),
                    Some(2)
                );
            }
            assert_eq!(c.pinned, 200);
            // Other sources are balanced away from the loaded member.
            for t in 0..50u32 {
                let got = s.choose(&g, t, 4, 1000, u64::from(t), &board, &|_| true, &mut c);
                assert_ne!(got, Some(2), "{mode:?}");
            }
            // The destination down: the source's traffic is balanced as usual.
            let got = s.choose(&g, 1, 9, 1000, 0, &board, &|p| p != 2, &mut c);
            assert!(matches!(got, Some(m) if m != 2), "{got:?}");
            assert_eq!(c.pinned, 200);
            // A group without the destination is not affected.
            let other = group(&[0, 1, 3]);
            let mut c3 = counters(3);
            assert!(s
                .choose(&other, 5, 9, 1000, 0, &board, &|_| true, &mut c3)
                .is_some());
            assert_eq!(c3.pinned, 0);
        }
    }
}
