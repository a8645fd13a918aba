//! Priority flow control (802.1Qbb) and 802.3x PAUSE: the per-port model,
//! the pause timers a received frame sets, and the ingress accounting that
//! decides when the switch itself sends XOFF and XON.
//!
//! # Priorities, groups and queues
//!
//! A priority is lossless on a port when bit n of
//! [`PfcModel::enabled_priorities`](crate::model::PfcModel::enabled_priorities) is set. Priority n is served by
//! qos-group n and egress queue n (the book's configuration maps CoS 3 to
//! qos-group 3), so a PFC frame pausing priority n pauses queue n, and
//! lossless traffic of qos-group n is accounted in ingress priority group n.
//!
//! # Pause timing
//!
//! One quantum is 512 bit times at the port's speed (100 Gb/s when the port
//! has none): `pause_ns = ceil(quanta × 512 × 1000 / speed_mbps)`. A new
//! frame reloads the timer (it does not add); quanta 0 resumes at once.
//!
//! # Default thresholds
//!
//! When the ingress queuing policy gives no `pause` line for a lossless
//! group, [`PgThresholds::default_for`] computes (REFERENCE §7), from the
//! link's [`PfcDelays`](crate::model::PfcDelays) (each term as the interface
//! configures it, else the standard one):
//!
//! * headroom = 2 × (MTU + [`FRAME_OVERHEAD_BYTES`](crate::model::pfc::FRAME_OVERHEAD_BYTES)) (a frame in flight at
//!   each end) + 2 × cable delay × rate (the round trip of the cable,
//!   [`DEFAULT_CABLE_METRES`](crate::model::pfc::DEFAULT_CABLE_METRES) at [`CABLE_NS_PER_METRE`](crate::model::pfc::CABLE_NS_PER_METRE)) +
//!   [`PEER_RESPONSE_BITS`](crate::model::pfc::PEER_RESPONSE_BITS) at the port's rate (the peer's reaction time);
//!   at 100 Gb/s, MTU 9216 and 100 m that is 18 508 + 12 500 + 480 bytes;
//! * xOFF = port buffer / [`XOFF_BUFFER_DIVISOR`](crate::model::pfc::XOFF_BUFFER_DIVISOR) (1 MiB of the default
//!   8 MiB buffer);
//! * xON = xOFF / 2.
//!
//! # Watchdog
//!
//! With [`PfcModel::watchdog`](crate::model::PfcModel::watchdog) set, an egress queue that holds packets and
//! stays paused by its peer for `interval × shutdown_multiplier` is declared
//! stormed: its packets are flushed, new packets for it are dropped
//! (`pfc_watchdog`), pause frames no longer pause it, and the port stops
//! sending PFC for that priority. Traffic of that priority arriving on the
//! port is dropped (`pfc_watchdog_ingress`, as NX-OS documents), or with
//! [`WatchdogModel::forward_ingress`](crate::model::WatchdogModel::forward_ingress)
//! admitted as lossy and counted. It is
//! restored once no pause frame for the priority has arrived for
//! `interval × restore_multiplier` (0: never by itself), or, with a
//! `fixed_restore_multiplier`, `interval × fixed_restore_multiplier` after
//! the storm even while pause frames keep arriving (NX-OS `fixed-restore`),
//! whichever comes first.
//!
//! # Ingress accounting
//!
//! [`IngressAccounting`] holds, per ingress port and priority group, the
//! bytes of that port's lossless traffic still buffered in any egress queue.
//! The ingress port's worker counts a packet in when it admits it, whichever
//! worker sends or drops it counts it out, and the ingress port's worker
//! compares what is left with xOFF/xON and sends the frames. Every total has
//! a single writer, so the accounting is exact with one worker and with
//! several, with no lock and no locked instruction.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::Nanos;
use crate::model::pfc::{speed_or_default, PgThresholds, WatchdogModel, PRIORITIES};
use crate::packet::PacketBuf;

/// Nanoseconds `quanta` pause quanta last at `speed_mbps` (100 Gb/s when `None`).
pub fn quanta_ns(quanta: u16, speed_mbps: Option<u32>) -> Nanos {
    let speed = speed_or_default(speed_mbps);
    (u64::from(quanta) * 512 * 1000).div_ceil(speed)
}

/// Bytes of lossless traffic buffered per ingress port and priority group,
/// shared by every worker.
///
/// Only an ingress port's own worker admits its packets, but any worker may
/// send or drop them. So each port keeps running totals per group, each with
/// a single writer and on cache lines of its own: bytes admitted, written by
/// the port's worker, and per worker the bytes that worker released. What is
/// buffered is the admitted total less every worker's released total. A
/// single writer updates its total with a plain load and store; a shared
/// total would take a locked read-modify-write (some 20 cycles) for every
/// lossless packet, and both cores would take turns owning its line.
/// Admission reads the other workers' totals only near xOFF (see
/// [`admit`](Self::admit)), for the same reason.
#[derive(Debug)]
pub struct IngressAccounting {
    workers: usize,
    ports: usize,
    /// By port.
    admitted: Box<[GroupTotals]>,
    /// By worker, then port: a worker releases through its own slice.
    released: Box<[GroupTotals]>,
}

/// One port's totals of one kind. 128-byte alignment keeps them off other
/// writers' cache lines and their adjacent-line prefetch pairs.
#[derive(Debug, Default)]
#[repr(align(128))]
struct GroupTotals([AtomicU64; PRIORITIES]);

impl IngressAccounting {
    /// Zeroed counters for `ports` ports served by `workers` workers.
    pub fn new(ports: usize, workers: usize) -> Self {
        let totals = |n: usize| (0..n).map(|_| GroupTotals::default()).collect();
        let workers = workers.max(1);
        IngressAccounting {
            workers,
            ports,
            admitted: totals(ports),
            released: totals(ports * workers),
        }
    }

    /// Bytes of `port`'s traffic of group `pg` buffered now.
    #[inline]
    pub fn get(&self, port: usize, pg: usize) -> u64 {
        let Some(admitted) = self.admitted.get(port) else {
            return 0;
        };
        // Released first: bytes released were admitted before (the packet
        // reached the releasing worker after its admission), so the admitted
        // total read next includes them.
        let released = self.released_by(port, None)[pg & 7];
        admitted.0[pg & 7]
            .load(Ordering::Relaxed)
            .saturating_sub(released)
    }

    /// What every worker (but `skip`) has released of each of `port`'s
    /// groups.
    #[inline]
    fn released_by(&self, port: usize, skip: Option<usize>) -> [u64; PRIORITIES] {
        let mut sum = [0u64; PRIORITIES];
        for w in (0..self.workers).filter(|&w| Some(w) != skip) {
            if let Some(r) = self.released.get(w * self.ports + port) {
                for (s, t) in sum.iter_mut().zip(&r.0) {
                    *s += t.load(Ordering::Acquire);
                }
            }
        }
        sum
    }

    /// What `port`'s group `pg` holds of `kept` (admitted less `worker`'s
    /// own releases) with every other worker's releases read afresh into
    /// `seen`. Out of line: admission needs it only near xOFF.
    #[cold]
    #[inline(never)]
    fn recount(
        &self,
        worker: usize,
        port: usize,
        pg: usize,
        kept: u64,
        seen: &mut [u64; PRIORITIES],
    ) -> u64 {
        *seen = self.released_by(port, Some(worker));
        kept.saturating_sub(seen[pg & 7])
    }

    /// Counts `len` bytes of `port`'s group `pg` entering a queue unless the
    /// group would then hold more than its xOFF plus headroom, and returns
    /// what it holds then; `None` (nothing counted) over that limit or for
    /// an unknown port. Only the worker that owns `port` may call it, as
    /// `worker`: the admitted total has a single writer.
    ///
    /// `seen` is the caller's copy of what other workers had released of
    /// `port`'s groups, starting at zeros. Admission reads their totals
    /// only when the group, counted with that copy, reaches xOFF, and then
    /// refreshes the copy. Read for every packet, the other workers' lines
    /// would bounce between cores whenever one of them transmits `port`'s
    /// traffic while this worker receives it. Totals only grow, so the copy
    /// can only make the group look fuller: below xOFF with it is below
    /// xOFF in fact, and from there on the decision is made on fresh totals.
    #[inline]
    pub fn admit(
        &self,
        worker: usize,
        port: usize,
        pg: usize,
        len: u64,
        th: &PgThresholds,
        seen: &mut [u64; PRIORITIES],
    ) -> Option<u64> {
        let pg = pg & 7;
        let total = &self.admitted.get(port)?.0[pg];
        let own = self
            .released
            .get(worker * self.ports + port)
            .map_or(0, |r| r.0[pg].load(Ordering::Relaxed));
        let admitted = total.load(Ordering::Relaxed);
        let mut held = admitted.saturating_sub(own + seen[pg]) + len;
        if held >= th.xoff_bytes {
            held = self.recount(worker, port, pg, admitted.saturating_sub(own), seen) + len;
        }
        if held > th.xoff_bytes.saturating_add(th.headroom_bytes) {
            return None;
        }
        total.store(admitted + len, Ordering::Relaxed);
        Some(held)
    }

    /// Counts `len` bytes of `port`'s group `pg` leaving the switch through
    /// `worker`, which must be the calling worker: each worker's total has a
    /// single writer.
    #[inline]
    pub fn sub(&self, worker: usize, port: usize, pg: usize, len: u64) {
        self.releaser(worker).sub(port, pg, len);
    }

    /// Gives back, through `worker`, what a packet held in its ingress group,
    /// as it leaves the switch or is dropped after admission; nothing for
    /// `None`.
    #[inline]
    pub fn release(&self, worker: usize, charge: Option<IngressCharge>) {
        self.releaser(worker).release(charge);
    }

    /// `worker`'s totals, found once for a burst of releases (nothing for a
    /// worker number out of range).
    #[inline]
    pub fn releaser(&self, worker: usize) -> Releaser<'_> {
        let first = worker.saturating_mul(self.ports);
        Releaser {
            totals: self
                .released
                .get(first..first.saturating_add(self.ports))
                .unwrap_or(&[]),
        }
    }
}

/// One worker's released totals (see [`IngressAccounting::releaser`]).
#[derive(Debug, Clone, Copy)]
pub struct Releaser<'a> {
    totals: &'a [GroupTotals],
}

impl Releaser<'_> {
    /// Counts `len` bytes of `port`'s group `pg` released.
    #[inline]
    fn sub(&self, port: usize, pg: usize, len: u64) {
        if let Some(r) = self.totals.get(port) {
            let total = &r.0[pg & 7];
            total.store(total.load(Ordering::Relaxed) + len, Ordering::Release);
        }
    }

    /// As [`IngressAccounting::release`].
    #[inline]
    pub fn release(&self, charge: Option<IngressCharge>) {
        if let Some(c) = charge {
            self.sub(c.port, c.pg, c.bytes);
        }
    }
}

/// The bytes a lossless packet holds in its ingress port's priority group
/// (its PFC priority: the PCP when it arrived tagged, which need not be its
/// qos-group), taken before the packet itself is handed on or dropped.
#[derive(Debug, Clone, Copy)]
pub struct IngressCharge {
    port: usize,
    pg: usize,
    bytes: u64,
}

impl IngressCharge {
    /// `None` for a packet that is not lossless (it was never counted).
    #[inline]
    pub fn of(pkt: &PacketBuf) -> Option<Self> {
        pkt.meta.lossless.then(|| IngressCharge {
            port: usize::from(pkt.in_port),
            pg: usize::from(pkt.meta.pfc_priority),
            bytes: pkt.len() as u64,
        })
    }
}

/// The PFC state of one port, owned by the worker polling it.
#[derive(Debug, Clone, Copy, Default)]
pub struct PfcPortState {
    /// Bit n: queue n is paused by the peer.
    pub rx_paused: u8,
    /// When each paused queue resumes.
    pub paused_until: [Nanos; PRIORITIES],
    /// When each paused queue was paused (for the paused-time counter).
    pub paused_since: [Nanos; PRIORITIES],
    /// Bit n: XOFF sent for priority n and not yet released.
    pub tx_xoff: u8,
    /// When each XOFF must be refreshed.
    pub refresh_at: [Nanos; PRIORITIES],
    /// Bit n: queue n is stormed (watchdog).
    pub stormed: u8,
    /// When a pause frame last arrived for each priority.
    pub last_rx_pause: [Nanos; PRIORITIES],
    /// When each stormed queue was declared stormed (for the fixed restore).
    pub stormed_at: [Nanos; PRIORITIES],
}

impl PfcPortState {
    /// The earliest pause expiry among paused queues in `mask`.
    pub fn next_expiry(&self, mask: u8) -> Option<Nanos> {
        let mut m = self.rx_paused & mask;
        let mut t = None::<Nanos>;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            t = Some(t.map_or(self.paused_until[q], |t| t.min(self.paused_until[q])));
        }
        t
    }

    /// The earliest watchdog deadline: a storm declared for a paused queue
    /// in `nonempty`, or a stormed queue restored.
    pub fn next_watchdog(&self, nonempty: u8, wd: &WatchdogModel) -> Option<Nanos> {
        let mut t = None::<Nanos>;
        let mut m = self.rx_paused & nonempty & !self.stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            let d = self.paused_since[q] + wd.detect_ns();
            t = Some(t.map_or(d, |t| t.min(d)));
        }
        let mut m = self.stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if let Some(d) = self.restore_at(q, wd) {
                t = Some(t.map_or(d, |t| t.min(d)));
            }
        }
        t
    }

    /// When stormed queue `q` is restored: `restore_ns` after the last pause
    /// frame, or `fixed_restore_ns` after the storm, whichever is first;
    /// `None` when neither is configured.
    pub fn restore_at(&self, q: usize, wd: &WatchdogModel) -> Option<Nanos> {
        let auto = wd.restore_ns().map(|r| self.last_rx_pause[q] + r);
        let fixed = wd.fixed_restore_ns().map(|r| self.stormed_at[q] + r);
        match (auto, fixed) {
            (Some(a), Some(f)) => Some(a.min(f)),
            (a, f) => a.or(f),
        }
    }

    /// The earliest XOFF refresh due.
    pub fn next_refresh(&self) -> Option<Nanos> {
        let mut m = self.tx_xoff;
        let mut t = None::<Nanos>;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            t = Some(t.map_or(self.refresh_at[q], |t| t.min(self.refresh_at[q])));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PfcDelays;

    #[test]
    fn quanta_at_two_speeds() {
        // REFERENCE §1: 65535 quanta ≈ 335 µs at 100G, ≈ 84 µs at 400G.
        assert_eq!(quanta_ns(0xFFFF, None), 335_540);
        assert_eq!(quanta_ns(0xFFFF, Some(400_000)), 83_885);
        assert_eq!(quanta_ns(1, Some(10_000)), 52); // 51.2 ns, rounded up
        assert_eq!(quanta_ns(0, Some(10_000)), 0);
    }

    #[test]
    fn default_thresholds() {
        let d = PfcDelays::default();
        let t = PgThresholds::default_for(None, 9216, 8 << 20, &d);
        assert_eq!(t.xoff_bytes, 1 << 20);
        assert_eq!(t.xon_bytes, 512 << 10);
        assert_eq!(t.headroom_bytes, 2 * 9258 + 12_500 + 480);
        let slow = PgThresholds::default_for(Some(10_000), 1500, 8 << 20, &d);
        assert_eq!(slow.headroom_bytes, 2 * 1542 + 1250 + 480);
        // A software path adds 10 ms at the port's speed: 1 250 000 bytes
        // at 1 Gb/s; at 100 Gb/s the 125 MB it would take is cut to the buffer.
        let (gig, capped) = PgThresholds::software_default_for(Some(1000), 1500, 8 << 20, &d);
        assert_eq!(gig.headroom_bytes, 2 * 1542 + 125 + 480 + 1_250_000);
        assert_eq!(
            (gig.xoff_bytes, gig.xon_bytes, capped),
            (1 << 20, 512 << 10, None)
        );
        let (fast, capped) = PgThresholds::software_default_for(None, 1500, 8 << 20, &d);
        assert_eq!(fast.headroom_bytes, 8 << 20);
        assert_eq!(capped, Some(2 * 1542 + 12_500 + 480 + 125_000_000));
    }

    /// Thresholds with xOFF at `xoff` and `headroom` beyond it.
    fn pg(xoff: u64, headroom: u64) -> PgThresholds {
        PgThresholds {
            xoff_bytes: xoff,
            xon_bytes: 0,
            headroom_bytes: headroom,
        }
    }

    #[test]
    fn accounting_adds_and_subtracts() {
        let a = IngressAccounting::new(2, 1);
        let (th, seen) = (pg(150, 50), &mut [0; PRIORITIES]);
        assert_eq!(a.admit(0, 1, 3, 100, &th, seen), Some(100));
        assert_eq!(a.admit(0, 1, 3, 50, &th, seen), Some(150));
        // Over xOFF plus headroom: refused, nothing counted.
        assert_eq!(a.admit(0, 1, 3, 51, &th, seen), None);
        assert_eq!(a.get(1, 3), 150);
        a.sub(0, 1, 3, 100);
        assert_eq!(a.get(1, 3), 50);
        // What left makes room again.
        assert_eq!(a.admit(0, 1, 3, 150, &th, seen), Some(200));
        a.sub(0, 1, 3, 150);
        assert_eq!(a.get(1, 3), 50);
        assert_eq!(a.get(0, 3), 0);
        assert_eq!(a.get(9, 3), 0);
        assert_eq!(a.admit(0, 9, 3, 1, &pg(u64::MAX, 0), seen), None);
        // An unknown port or worker counts nothing and panics nowhere.
        a.sub(0, 9, 3, 100);
        a.sub(5, 1, 3, 100);
        assert_eq!(a.get(1, 3), 50);
        assert_eq!(seen, &[0; PRIORITIES], "one worker: nothing elsewhere");
    }

    #[test]
    fn other_workers_release_what_the_owner_admitted() {
        let a = std::sync::Arc::new(IngressAccounting::new(2, 3));
        let seen = &mut [0; PRIORITIES];
        for _ in 0..1000 {
            a.admit(0, 0, 3, 100, &pg(u64::MAX, 0), seen);
        }
        let releasers: Vec<_> = (1..3)
            .map(|worker| {
                let a = std::sync::Arc::clone(&a);
                std::thread::spawn(move || {
                    for _ in 0..400 {
                        a.sub(worker, 0, 3, 100);
                    }
                })
            })
            .collect();
        a.sub(0, 0, 3, 100);
        for r in releasers {
            r.join().unwrap();
        }
        assert_eq!(a.get(0, 3), 199 * 100);
        assert_eq!(a.get(0, 2) + a.get(1, 3), 0);
        // Far below xOFF the owner counts with its old copy, which makes
        // the group look fuller, and leaves the others' lines alone...
        let th = pg(100_000, 0);
        assert_eq!(a.admit(0, 0, 3, 1, &th, seen), Some(999 * 100 + 1));
        assert_eq!(seen, &[0; PRIORITIES]);
        // ...and at xOFF it reads them and decides on what they released
        // (its own release it always reads).
        let th = pg(99_000, 0);
        assert_eq!(a.admit(0, 0, 3, 1, &th, seen), Some(199 * 100 + 2));
        assert_eq!(seen[3], 800 * 100);
        assert_eq!(seen.iter().sum::<u64>(), 800 * 100);
        // Every total sits on a cache-line pair of its own.
        assert_eq!(std::mem::size_of::<GroupTotals>(), 128);
        assert_eq!(std::mem::align_of::<GroupTotals>(), 128);
    }
}
