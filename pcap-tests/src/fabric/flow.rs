//! What a two-tier run sends: flows between hosts (elephants and mice) and
//! the balancing mode the leaves use.

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::qos::shaper::{serialisation_ps, wire_bytes};

/// How the leaves spread traffic over their uplinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balance {
    /// Static hash (resilient buckets).
    Ecmp,
    /// Flowlet DLB over the uplinks.
    Flowlet,
    /// Per-packet DLB over the uplinks.
    PerPacket,
}

impl Balance {
    /// Every mode, in the order a comparison prints them.
    pub const ALL: [Balance; 3] = [Balance::Ecmp, Balance::Flowlet, Balance::PerPacket];

    /// The name `GroupStats::mode` uses.
    pub fn name(self) -> &'static str {
        match self {
            Balance::Ecmp => "ecmp",
            Balance::Flowlet => "flowlet",
            Balance::PerPacket => "per-packet",
        }
    }
}

/// A host: leaf number and host number on that leaf, both from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId {
    /// The leaf (rail switch) it hangs off.
    pub leaf: usize,
    /// Its port on that leaf.
    pub host: usize,
}

impl HostId {
    /// Host `host` of leaf `leaf`.
    pub fn new(leaf: usize, host: usize) -> Self {
        HostId { leaf, host }
    }
}

/// Elephant or mouse: only changes how results are summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowKind {
    /// A long, fast flow (bursts of a collective).
    Elephant,
    /// A short flow of a few packets.
    Mouse,
}

/// A RoCEv2-like flow between two hosts: bursts of back-to-back frames at a
/// rate, all with one UDP source port (the entropy ECMP hashes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Sender.
    pub src: HostId,
    /// Receiver.
    pub dst: HostId,
    /// UDP source port: the flow's entropy.
    pub entropy: u16,
    /// Frame length without FCS.
    pub frame_len: usize,
    /// Sending rate within a burst, in Mb/s (wire bytes, as the shaper counts).
    pub rate_mbps: u32,
    /// Frames per burst.
    pub packets_per_burst: u32,
    /// When each burst starts.
    pub burst_starts: Vec<Nanos>,
    /// Elephant or mouse.
    pub kind: FlowKind,
}

impl Flow {
    /// An elephant: `bursts` bursts of `packets_per_burst` frames of
    /// `frame_len` bytes at `rate_mbps`, the first at `start`, each next one
    /// `gap_ns` after the previous one's last frame (gap 0: one long stream).
    #[allow(clippy::too_many_arguments)] // reason: a flow is all of these, named at the call
    pub fn elephant(
        src: HostId,
        dst: HostId,
        entropy: u16,
        frame_len: usize,
        rate_mbps: u32,
        start: Nanos,
        packets_per_burst: u32,
        bursts: u32,
        gap_ns: Nanos,
    ) -> Flow {
        let mut f = Flow {
            src,
            dst,
            entropy,
            frame_len,
            rate_mbps,
            packets_per_burst,
            burst_starts: Vec::new(),
            kind: FlowKind::Elephant,
        };
        let period = f.burst_ns() + gap_ns;
        f.burst_starts = (0..u64::from(bursts)).map(|b| start + b * period).collect();
        f
    }

    /// A mouse: `packets` frames of `frame_len` bytes at `rate_mbps` from `start`.
    pub fn mouse(
        src: HostId,
        dst: HostId,
        entropy: u16,
        frame_len: usize,
        rate_mbps: u32,
        start: Nanos,
        packets: u32,
    ) -> Flow {
        Flow {
            src,
            dst,
            entropy,
            frame_len,
            rate_mbps,
            packets_per_burst: packets,
            burst_starts: vec![start],
            kind: FlowKind::Mouse,
        }
    }

    /// Frames in the whole flow.
    pub fn packets(&self) -> u64 {
        u64::from(self.packets_per_burst) * self.burst_starts.len() as u64
    }

    fn spacing_ps(&self) -> u64 {
        serialisation_ps(
            wire_bytes(self.frame_len),
            u64::from(self.rate_mbps.max(1)) * 1_000_000,
        )
    }

    /// How long one burst takes to send, from its first frame's start to its
    /// last frame's end.
    pub fn burst_ns(&self) -> Nanos {
        (u64::from(self.packets_per_burst) * self.spacing_ps()).div_ceil(1000)
    }

    /// Intended send time of every frame, with its sequence number.
    pub(super) fn sends(&self) -> impl Iterator<Item = (Nanos, u32)> + '_ {
        let spacing = self.spacing_ps();
        let n = self.packets_per_burst;
        self.burst_starts
            .iter()
            .enumerate()
            .flat_map(move |(b, s)| {
                (0..n).map(move |i| (s + (u64::from(i) * spacing) / 1000, b as u32 * n + i))
            })
    }
}
