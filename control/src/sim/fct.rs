//! Flow completion time against the ideal: what each flow would take
//! alone on an idle fabric at line rate, and how much longer it took
//! (slowdown), summarised by flow size as the datacenter transport
//! literature does (HPCC, Homa, ...).

use railyard_roce::collective::FlowOutcome;
use serde::Serialize;

use super::map::{serialise_ns, FabricMap, Hop, DEFAULT_MBPS};

/// Wire bytes around every packet's payload: Ethernet 14, IPv4 20, UDP 8,
/// BTH 12, ICRC 4, FCS 4, preamble and inter-frame gap 20.
pub const PACKET_OVERHEAD: u64 = 82;
/// Wire bytes of an acknowledgement: the headers above with an AETH (4)
/// and no payload.
pub const ACK_WIRE: u64 = PACKET_OVERHEAD + 4;

/// Upper bounds of the flow-size buckets, bytes (decimal, as the
/// literature's: <10K, 10K–100K, 100K–1M, 1M–10M, then the rest).
const BUCKETS: [(u64, &str); 4] = [
    (10_000, "<10K"),
    (100_000, "10K-100K"),
    (1_000_000, "100K-1M"),
    (10_000_000, "1M-10M"),
];
/// The name of the last bucket.
const LAST_BUCKET: &str = ">10M";

/// One flow's completion time next to its ideal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowFct {
    /// Sender (`host.ethN`).
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Bytes.
    pub bytes: u64,
    /// When it was posted, microseconds of virtual time.
    pub start_us: f64,
    /// When its last byte was acknowledged (None: it was not).
    pub end_us: Option<f64>,
    /// end − start, microseconds.
    pub fct_us: Option<f64>,
    /// Alone on the idle fabric at line rate, microseconds (None: no path).
    pub ideal_us: Option<f64>,
    /// fct / ideal (≥ 1 up to rounding).
    pub slowdown: Option<f64>,
}

/// Slowdown statistics of one flow-size bucket (or of all flows).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlowdownStats {
    /// `<10K`, `10K-100K`, `100K-1M`, `1M-10M`, `>10M` or `all`.
    pub bucket: String,
    /// Flows that finished (those the statistics are of).
    pub flows: usize,
    /// Flows in the bucket that did not finish.
    pub unfinished: usize,
    /// Mean slowdown.
    pub mean: f64,
    /// Median slowdown.
    pub p50: f64,
    /// 99th percentile slowdown.
    pub p99: f64,
}

/// FCT slowdowns by flow size.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FctSummary {
    /// Per bucket with flows, smallest first.
    pub buckets: Vec<SlowdownStats>,
    /// Every flow (None without flows).
    pub overall: Option<SlowdownStats>,
}

/// The ideal completion time of `bytes` from rank `src` to rank `dst`:
/// the store-and-forward pipeline of its packets over the path's cables
/// (packets of `mtu` payload, each with [`PACKET_OVERHEAD`]; the slowest
/// cable paces them, the first packet fills the pipe before it and the
/// last drains it after), the cables' delays, and the last ACK's way back.
/// The first cable runs at the NIC's rate `nic_bps`. `None` when the
/// topology has no path.
pub(super) fn ideal_ns(
    map: &FabricMap,
    nic_bps: u64,
    mtu: u64,
    src: usize,
    dst: usize,
    bytes: u64,
) -> Option<u64> {
    let a = map.attach.get(src)?.as_ref()?;
    let b = map.attach.get(dst)?.as_ref()?;
    let mtu = mtu.max(1);
    let mut path = vec![Hop {
        rate_bps: nic_bps,
        delay_ns: a.delay_ns,
    }];
    path.extend(map.switch_path(a.switch, b.switch, mtu + PACKET_OVERHEAD)?);
    path.push(Hop {
        rate_bps: u64::from(if b.mbps == 0 { DEFAULT_MBPS } else { b.mbps }) * 1_000_000,
        delay_ns: b.delay_ns,
    });
    Some(pipeline_ns(&path, mtu, bytes))
}

/// The store-and-forward time of `bytes` in packets of `mtu` payload over
/// `path`, and of the ACK back (see [`ideal_ns`]).
fn pipeline_ns(path: &[Hop], mtu: u64, bytes: u64) -> u64 {
    let packets = bytes.div_ceil(mtu).max(1);
    let first = bytes.min(mtu) + PACKET_OVERHEAD;
    let last = bytes.saturating_sub((packets - 1) * mtu) + PACKET_OVERHEAD;
    let all = bytes + packets * PACKET_OVERHEAD;
    // The cable that takes longest to carry everything sets the time: the
    // first packet reaches it, all pass it, the last goes on from it.
    let data = (0..path.len())
        .map(|k| {
            let before: u64 = path[..k]
                .iter()
                .map(|h| serialise_ns(first, h.rate_bps))
                .sum();
            let after: u64 = path[k + 1..]
                .iter()
                .map(|h| serialise_ns(last, h.rate_bps))
                .sum();
            before + serialise_ns(all, path[k].rate_bps) + after
        })
        .max()
        .unwrap_or(0);
    let ack: u64 = path
        .iter()
        .map(|h| serialise_ns(ACK_WIRE, h.rate_bps))
        .sum();
    let delays: u64 = path.iter().map(|h| h.delay_ns).sum();
    data + ack + 2 * delays
}

/// Per flow, its FCT next to its ideal; `names` gives rank names,
/// `nic_bps` and `mtus` each rank's line rate and path MTU.
pub(super) fn flow_fcts<'a>(
    map: &FabricMap,
    names: &[String],
    nic_bps: &[u64],
    mtus: &[usize],
    flows: impl IntoIterator<Item = &'a FlowOutcome>,
) -> Vec<FlowFct> {
    let name = |r: usize| names.get(r).cloned().unwrap_or_else(|| format!("rank{r}"));
    let mut out: Vec<FlowFct> = flows
        .into_iter()
        .map(|f| {
            let nic = nic_bps.get(f.src).copied().unwrap_or(0);
            let mtu = mtus.get(f.src).copied().unwrap_or(4096) as u64;
            let ideal = ideal_ns(map, nic, mtu, f.src, f.dst, f.bytes);
            let fct = f.end_ns.map(|e| e.saturating_sub(f.start_ns));
            FlowFct {
                src: name(f.src),
                dst: name(f.dst),
                bytes: f.bytes,
                start_us: f.start_ns as f64 / 1e3,
                end_us: f.end_ns.map(|e| e as f64 / 1e3),
                fct_us: fct.map(|t| t as f64 / 1e3),
                ideal_us: ideal.map(|t| t as f64 / 1e3),
                slowdown: match (fct, ideal) {
                    (Some(t), Some(i)) if i > 0 => Some(t as f64 / i as f64),
                    _ => None,
                },
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.start_us
            .total_cmp(&b.start_us)
            .then_with(|| (&a.src, &a.dst).cmp(&(&b.src, &b.dst)))
    });
    out
}

/// The bucket `bytes` falls in.
fn bucket_of(bytes: u64) -> usize {
    BUCKETS
        .iter()
        .position(|(max, _)| bytes < *max)
        .unwrap_or(BUCKETS.len())
}

/// `p`-th percentile of sorted `v` (nearest rank; `v` not empty).
fn percentile(v: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Statistics of the flows `flows` under the name `bucket`.
fn stats(bucket: &str, flows: &[&FlowFct]) -> SlowdownStats {
    let mut s: Vec<f64> = flows.iter().filter_map(|f| f.slowdown).collect();
    s.sort_by(f64::total_cmp);
    let unfinished = flows.iter().filter(|f| f.fct_us.is_none()).count();
    let (mean, p50, p99) = if s.is_empty() {
        (0.0, 0.0, 0.0)
    } else {
        (
            s.iter().sum::<f64>() / s.len() as f64,
            percentile(&s, 50.0),
            percentile(&s, 99.0),
        )
    };
    SlowdownStats {
        bucket: bucket.to_string(),
        flows: s.len(),
        unfinished,
        mean,
        p50,
        p99,
    }
}

/// Slowdowns by flow-size bucket (buckets without flows left out) and
/// over all flows.
pub fn summarise(flows: &[FlowFct]) -> FctSummary {
    if flows.is_empty() {
        return FctSummary::default();
    }
    let mut by: Vec<Vec<&FlowFct>> = vec![Vec::new(); BUCKETS.len() + 1];
    for f in flows {
        by[bucket_of(f.bytes)].push(f);
    }
    let buckets = by
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(i, v)| stats(BUCKETS.get(i).map_or(LAST_BUCKET, |b| b.1), v))
        .collect();
    let all: Vec<&FlowFct> = flows.iter().collect();
    FctSummary {
        buckets,
        overall: Some(stats("all", &all)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: Hop = Hop {
        rate_bps: 100_000_000_000,
        delay_ns: 1_000,
    };

    fn flow(bytes: u64, slowdown: Option<f64>) -> FlowFct {
        FlowFct {
            src: "a".into(),
            dst: "b".into(),
            bytes,
            start_us: 0.0,
            end_us: slowdown.map(|s| s * 10.0),
            fct_us: slowdown.map(|s| s * 10.0),
            ideal_us: Some(10.0),
            slowdown,
        }
    }

    #[test]
    fn one_packet_pays_every_cable_and_the_ack_way_back() {
        // 1000 B + 82 B at 100 Gb/s: 86.56 ns per cable, two cables; the
        // ACK 86 B: 6.88 ns per cable; 1 us each way per cable.
        let t = pipeline_ns(&[G100, G100], 4096, 1000);
        assert_eq!(t, 2 * 87 + 2 * 7 + 4_000);
    }

    #[test]
    fn a_long_flow_is_paced_by_the_slowest_cable() {
        let slow = Hop {
            rate_bps: 25_000_000_000,
            ..G100
        };
        let bytes = 4096 * 1000;
        let fast = pipeline_ns(&[G100, G100, G100], 4096, bytes);
        let t = pipeline_ns(&[G100, slow, G100], 4096, bytes);
        let wire = bytes + 1000 * PACKET_OVERHEAD;
        // At 25 Gb/s the whole flow takes 4x as long as at 100.
        assert!(t >= serialise_ns(wire, 25_000_000_000), "{t}");
        assert!(t > 3 * fast && t < 4 * fast + 10_000, "{t} vs {fast}");
    }

    #[test]
    fn buckets_hold_their_sizes_and_empty_ones_are_left_out() {
        let flows = vec![
            flow(1_000, Some(1.0)),
            flow(9_999, Some(3.0)),
            flow(2_000_000, Some(2.0)),
            flow(2_000_000, None),
        ];
        let s = summarise(&flows);
        let names: Vec<&str> = s.buckets.iter().map(|b| b.bucket.as_str()).collect();
        assert_eq!(names, ["<10K", "1M-10M"]);
        assert_eq!(s.buckets[0].flows, 2);
        assert!((s.buckets[0].mean - 2.0).abs() < 1e-12);
        assert_eq!(s.buckets[0].p50, 1.0);
        assert_eq!(s.buckets[0].p99, 3.0);
        assert_eq!(s.buckets[1].flows, 1);
        assert_eq!(s.buckets[1].unfinished, 1);
        let all = s.overall.expect("flows");
        assert_eq!((all.flows, all.unfinished), (3, 1));
        assert_eq!(all.p99, 3.0);
        assert_eq!(bucket_of(10_000_000), BUCKETS.len());
        assert_eq!(summarise(&[]), FctSummary::default());
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
    }
}
