//! The ports a fabric adds to its switches: hosts that play a schedule and
//! record what they receive, and taps that record what leaves a cable end.
//! Every frame carries a [`Tag`] so receivers need not keep frames.

use std::sync::{Arc, Mutex};

use railyard_control::traffic::{build, FrameSpec, Transport, ROCEV2_PORT};
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::port::{IoCounters, Port, TxDone};
use railyard_dataplane::qos::shaper::{serialisation_ps, wire_bytes};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, Pool, BURST_SIZE};

/// Which flow a frame belongs to and where it is in it, as carried in the
/// first 8 payload bytes (`traffic::build`'s sequence field: flow id in the
/// high 32 bits, sequence number in the low 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// The flow id.
    pub flow: u32,
    /// The packet's sequence number within its flow, from 0.
    pub seq: u32,
    /// The IP ECN bits as received.
    pub ecn: u8,
}

impl Tag {
    /// The 64-bit value `traffic::build` writes into the payload.
    pub fn payload(flow: u32, seq: u32) -> u64 {
        (u64::from(flow) << 32) | u64::from(seq)
    }

    /// Reads the tag of an IPv4 UDP frame built by `traffic::build` (plain
    /// UDP or RoCEv2, whose payload starts after the 12-byte BTH); `None`
    /// for anything else.
    pub fn decode(frame: &[u8]) -> Option<Tag> {
        if frame.get(12..14)? != [0x08, 0x00] {
            return None;
        }
        let ihl = usize::from(*frame.get(14)? & 0x0f) * 4;
        let ecn = *frame.get(15)? & 0b11;
        if *frame.get(23)? != 17 {
            return None;
        }
        let t = 14 + ihl;
        let dport = u16::from_be_bytes(frame.get(t + 2..t + 4)?.try_into().ok()?);
        let at = t + 8 + if dport == ROCEV2_PORT { 12 } else { 0 };
        let v = u64::from_be_bytes(frame.get(at..at + 8)?.try_into().ok()?);
        Some(Tag {
            flow: (v >> 32) as u32,
            seq: v as u32,
            ecn,
        })
    }
}

/// One frame a host sends: when, which of the host's frame templates, and
/// which flow and sequence number it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostTx {
    /// When the host puts it on the wire.
    pub time: Nanos,
    /// Index into the host's templates.
    pub template: u32,
    /// Flow id.
    pub flow: u32,
    /// Sequence number within the flow.
    pub seq: u32,
}

/// A frame a host received from its switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// When the switch transmitted it to the host.
    pub time: Nanos,
    /// Its tag (flow, sequence, ECN bits).
    pub tag: Tag,
    /// Frame length in bytes.
    pub len: u32,
}

/// A frame seen leaving through a tapped cable end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapRecord {
    /// When the switch transmitted it.
    pub time: Nanos,
    /// Its tag.
    pub tag: Tag,
}

/// What a host received, shared with the port that records it.
pub type ArrivalLog = Arc<Mutex<Vec<Arrival>>>;
/// What left through a tapped cable end, shared with the tap.
pub type TapLog = Arc<Mutex<Vec<TapRecord>>>;

/// A host on a switch port: plays a schedule of generated frames and records
/// what it receives. Frames are built when due, so a long run holds only the
/// schedule.
pub struct HostPort {
    name: String,
    templates: Vec<FrameSpec>,
    schedule: Vec<HostTx>,
    next: usize,
    arrivals: ArrivalLog,
    counters: IoCounters,
}

impl HostPort {
    /// A host sending `schedule` (sorted here by time, stably) built from
    /// `templates`; with `nic_mbps`, frames are also spaced so that none
    /// starts before the previous one has left at that line rate, as a NIC
    /// would serialise several flows.
    pub fn new(
        name: &str,
        templates: Vec<FrameSpec>,
        mut schedule: Vec<HostTx>,
        nic_mbps: Option<u32>,
    ) -> Self {
        schedule.sort_by_key(|t| t.time);
        if let Some(mbps) = nic_mbps.filter(|m| *m > 0) {
            let rate = u64::from(mbps) * 1_000_000;
            let mut free_ps = 0u64;
            for tx in &mut schedule {
                let start_ps = (tx.time * 1000).max(free_ps);
                tx.time = start_ps.div_ceil(1000);
                let len = templates
                    .get(tx.template as usize)
                    .map_or(60, |s| s.frame_len);
                free_ps = start_ps + serialisation_ps(wire_bytes(len), rate);
            }
        }
        HostPort {
            name: name.to_string(),
            templates,
            schedule,
            next: 0,
            arrivals: ArrivalLog::default(),
            counters: IoCounters::default(),
        }
    }

    /// The shared list of received frames.
    pub fn arrivals(&self) -> ArrivalLog {
        Arc::clone(&self.arrivals)
    }

    /// The schedule after NIC spacing: the times frames really leave.
    pub fn schedule(&self) -> &[HostTx] {
        &self.schedule
    }

    fn frame(&self, tx: &HostTx) -> Vec<u8> {
        let mut spec = self
            .templates
            .get(tx.template as usize)
            .copied()
            .unwrap_or_else(|| self.templates[0]);
        if let Transport::Roce { psn, .. } = &mut spec.transport {
            *psn = tx.seq & 0x00ff_ffff;
        }
        build(&spec, Tag::payload(tx.flow, tx.seq))
    }
}

impl Port for HostPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let Some(tx) = self.schedule.get(self.next).copied() else {
                break;
            };
            if tx.time > now {
                break;
            }
            self.next += 1;
            match pool.alloc_from(&self.frame(&tx)) {
                Some(mut p) => {
                    p.timestamp = tx.time;
                    burst.push(p);
                    n += 1;
                }
                None => self.counters.rx_dropped += 1,
            }
        }
        self.counters.rx_frames += n as u64;
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone {
        let n = burst.len();
        if let Ok(mut log) = self.arrivals.lock() {
            for p in burst.iter() {
                if let Some(tag) = Tag::decode(p.data()) {
                    log.push(Arrival {
                        time: now,
                        tag,
                        len: p.len() as u32,
                    });
                }
            }
        }
        burst.clear();
        self.counters.tx_frames += n as u64;
        TxDone::sent(n)
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("host {}", self.name)
    }

    fn exhausted(&self) -> bool {
        self.next >= self.schedule.len()
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.schedule.get(self.next).map(|t| t.time)
    }
}

/// A cable end that records the tag of every frame its switch sends
/// through it, to tell which path each packet took.
pub struct TapPort {
    inner: Box<dyn Port>,
    log: TapLog,
    scratch: Vec<Option<Tag>>,
}

impl TapPort {
    /// Taps `inner`; returns the port and its log.
    pub fn new(inner: Box<dyn Port>) -> (Self, TapLog) {
        let log = TapLog::default();
        (
            TapPort {
                inner,
                log: Arc::clone(&log),
                scratch: Vec::with_capacity(BURST_SIZE),
            },
            log,
        )
    }
}

impl Port for TapPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        self.inner.rx_burst(pool, burst, now)
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone {
        // Accepted packets leave the burst, so read their tags first.
        self.scratch.clear();
        self.scratch
            .extend(burst.iter().map(|p| Tag::decode(p.data())));
        let done = self.inner.tx_burst(burst, now);
        let n = done.sent;
        if let Ok(mut log) = self.log.lock() {
            log.extend(self.scratch[..n].iter().flatten().map(|tag| TapRecord {
                time: now,
                tag: *tag,
            }));
        }
        done
    }

    fn link_up(&self) -> bool {
        self.inner.link_up()
    }

    fn mac(&self) -> Option<MacAddr> {
        self.inner.mac()
    }

    fn io_counters(&self) -> IoCounters {
        self.inner.io_counters()
    }

    fn describe(&self) -> String {
        format!("tap {}", self.inner.describe())
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.inner.next_rx_time()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
