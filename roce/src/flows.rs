//! Background traffic: flow sizes from published distributions and Poisson
//! arrivals, generated from a seed so that every host (and every rerun)
//! derives the same flows, byte for byte.
//!
//! The size distributions are the empirical CDFs the HPCC simulator ships
//! (alibaba-edu/High-Precision-Congestion-Control, `traffic_gen/*.txt`),
//! which most RDMA congestion-control papers since use:
//!
//! * [`WEBSEARCH`]: `WebSearch_distribution.txt`, the web-search cluster of
//!   Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010.
//! * [`HADOOP`]: `FbHdp_distribution.txt`, Facebook's Hadoop cluster from
//!   Roy et al., "Inside the Social Network's (Datacenter) Network",
//!   SIGCOMM 2015.
//! * [`STORAGE`]: `AliStorage2019.txt`, Alibaba's storage cluster as
//!   published with Li et al., "HPCC: High Precision Congestion Control",
//!   SIGCOMM 2019.
//!
//! Each table is (flow size in bytes, cumulative percent), read as HPCC's
//! `traffic_gen` reads it: the CDF is linear between points, a size is
//! drawn by inverting it at a uniform percentile, and its mean is the
//! trapezoid sum.

use crate::splitmix::mix;
use crate::Nanos;

/// Web search (DCTCP, SIGCOMM 2010), from HPCC's
/// `traffic_gen/WebSearch_distribution.txt`: (bytes, cumulative %).
pub const WEBSEARCH: &[(u64, f64)] = &[
    (0, 0.0),
    (10_000, 15.0),
    (20_000, 20.0),
    (30_000, 30.0),
    (50_000, 40.0),
    (80_000, 53.0),
    (200_000, 60.0),
    (1_000_000, 70.0),
    (2_000_000, 80.0),
    (5_000_000, 90.0),
    (10_000_000, 97.0),
    (30_000_000, 100.0),
];

/// Facebook Hadoop (Roy et al., SIGCOMM 2015), from HPCC's
/// `traffic_gen/FbHdp_distribution.txt`: (bytes, cumulative %).
pub const HADOOP: &[(u64, f64)] = &[
    (0, 0.0),
    (100, 1.0),
    (200, 2.0),
    (300, 5.0),
    (350, 15.0),
    (400, 20.0),
    (500, 30.0),
    (600, 40.0),
    (700, 50.0),
    (1_000, 60.0),
    (2_000, 67.0),
    (7_000, 70.0),
    (30_000, 72.0),
    (50_000, 82.0),
    (80_000, 87.0),
    (120_000, 90.0),
    (300_000, 95.0),
    (1_000_000, 97.5),
    (2_000_000, 99.0),
    (10_000_000, 100.0),
];

/// Alibaba storage 2019 (HPCC, SIGCOMM 2019), from HPCC's
/// `traffic_gen/AliStorage2019.txt`: (bytes, cumulative %).
pub const STORAGE: &[(u64, f64)] = &[
    (0, 0.0),
    (4_000, 22.93),
    (8_000, 69.21),
    (16_000, 80.61),
    (32_000, 90.47),
    (64_000, 93.53),
    (128_000, 96.77),
    (256_000, 97.53),
    (2_000_000, 100.0),
];

/// Where background flow sizes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FlowSizes {
    /// [`WEBSEARCH`].
    WebSearch,
    /// [`HADOOP`].
    Hadoop,
    /// [`STORAGE`].
    Storage,
    /// Every flow this many bytes.
    Fixed(u64),
}

impl FlowSizes {
    /// The CDF table (None for fixed sizes).
    pub fn table(&self) -> Option<&'static [(u64, f64)]> {
        match self {
            FlowSizes::WebSearch => Some(WEBSEARCH),
            FlowSizes::Hadoop => Some(HADOOP),
            FlowSizes::Storage => Some(STORAGE),
            FlowSizes::Fixed(_) => None,
        }
    }

    /// The name the workload grammar uses (`websearch`, `hadoop`,
    /// `storage`, `fixed`).
    pub fn name(&self) -> &'static str {
        match self {
            FlowSizes::WebSearch => "websearch",
            FlowSizes::Hadoop => "hadoop",
            FlowSizes::Storage => "storage",
            FlowSizes::Fixed(_) => "fixed",
        }
    }

    /// Mean flow size in bytes: the trapezoid sum over the CDF.
    pub fn mean_bytes(&self) -> f64 {
        match self.table() {
            None => match self {
                FlowSizes::Fixed(b) => *b as f64,
                _ => 0.0,
            },
            Some(t) => {
                t.windows(2)
                    .map(|w| (w[0].0 + w[1].0) as f64 / 2.0 * (w[1].1 - w[0].1))
                    .sum::<f64>()
                    / 100.0
            }
        }
    }

    /// The size at uniform `u` in [0, 1): the CDF inverted, linear between
    /// its points; at least 1 byte.
    pub fn size_at(&self, u: f64) -> u64 {
        let Some(t) = self.table() else {
            return match self {
                FlowSizes::Fixed(b) => (*b).max(1),
                _ => 1,
            };
        };
        let y = u.clamp(0.0, 1.0) * 100.0;
        for w in t.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if y <= y1 {
                let x = x0 as f64 + (x1 - x0) as f64 / (y1 - y0) * (y - y0);
                return (x.round() as u64).max(1);
            }
        }
        t.last().map_or(1, |l| l.0.max(1))
    }
}

/// A small seeded generator (splitmix64 over a counter): portable, so every
/// host draws the same numbers.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` and `stream` (one stream per sending rank, so
    /// a rank's flows do not depend on how many other ranks there are).
    pub fn new(seed: u64, stream: u64) -> Rng {
        Rng(mix(seed ^ mix(stream.wrapping_add(0x5eed))))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
        }
    }

    /// Exponential with mean `mean`.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -(1.0 - self.uniform()).ln() * mean
    }
}

/// A background workload: Poisson flow arrivals on every sending NIC.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Background {
    /// Flow sizes.
    pub sizes: FlowSizes,
    /// Offered load per sending NIC, parts per million of its line rate.
    pub load_ppm: u32,
    /// Seed of arrivals, destinations and sizes.
    pub seed: u64,
    /// Flows arrive over [0, duration).
    pub duration_ns: Nanos,
}

/// Default arrival window of a background workload: 1 ms.
pub const DEFAULT_DURATION_NS: Nanos = 1_000_000;

/// One background flow: `src` sends `bytes` to `dst`, arriving `at` after
/// the workload starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// Bytes.
    pub bytes: u64,
    /// Arrival, from the workload's start.
    pub at: Nanos,
}

impl Background {
    /// Flows of this workload over ranks whose hosts are `hosts[r]`, each
    /// NIC at `nic_bps`: per sending rank, arrivals at rate load × line
    /// rate ÷ mean size (exponential gaps) over [0, duration), each to a
    /// uniformly random rank on another host (any rail: background traffic
    /// runs between any hosts, so most of it crosses the spines). Sorted by
    /// (src, at). Ranks whose host is the only one send nothing.
    pub fn generate(&self, hosts: &[usize], nic_bps: u64) -> Vec<FlowSpec> {
        let n = hosts.len();
        let mean = self.sizes.mean_bytes().max(1.0);
        let load = f64::from(self.load_ppm) / 1e6;
        let mut out = Vec::new();
        if load <= 0.0 || nic_bps == 0 {
            return out;
        }
        // Mean gap between arrivals, ns.
        let gap_ns = mean * 8.0 / (load * nic_bps as f64) * 1e9;
        for src in 0..n {
            let others = hosts.iter().filter(|&&h| h != hosts[src]).count() as u64;
            if others == 0 {
                continue;
            }
            let mut rng = Rng::new(self.seed, src as u64);
            let mut t = 0.0f64;
            loop {
                t += rng.exp(gap_ns);
                if t >= self.duration_ns as f64 {
                    break;
                }
                // The k-th rank on another host.
                let mut k = rng.below(others);
                let mut dst = 0;
                for (r, &h) in hosts.iter().enumerate() {
                    if h != hosts[src] {
                        if k == 0 {
                            dst = r;
                            break;
                        }
                        k -= 1;
                    }
                }
                let bytes = self.sizes.size_at(rng.uniform());
                out.push(FlowSpec {
                    src,
                    dst,
                    bytes,
                    at: t as Nanos,
                });
            }
        }
        out
    }
}

/// Reads a duration: a number with `ns`, `us`, `ms` or `s` (a bare number
/// is nanoseconds).
///
/// # Errors
///
/// A message naming the text and the accepted forms.
pub fn parse_duration(text: &str) -> Result<Nanos, String> {
    let t = text.trim();
    let bad = || {
        format!("bad duration {text:?}: expected a number with ns, us, ms or s, like 50us or 2ms")
    };
    let digits = t
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    if digits == 0 {
        return Err(bad());
    }
    let (num, unit) = t.split_at(digits);
    let v: f64 = num.parse().map_err(|_| bad())?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(bad()),
    };
    let ns = v * scale;
    if !ns.is_finite() || ns > 1e18 {
        return Err(bad());
    }
    Ok(ns.round() as Nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_cdfs() {
        for t in [WEBSEARCH, HADOOP, STORAGE] {
            assert_eq!(t[0], (0, 0.0));
            assert_eq!(t[t.len() - 1].1, 100.0);
            assert!(t.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 > w[0].1));
        }
    }

    #[test]
    fn inverse_cdf_hits_the_table_points() {
        assert_eq!(FlowSizes::WebSearch.size_at(0.53), 80_000);
        assert_eq!(FlowSizes::WebSearch.size_at(0.999_999_9), 29_999_933);
        assert_eq!(FlowSizes::Storage.size_at(0.6921), 8_000);
        assert_eq!(FlowSizes::Hadoop.size_at(0.0), 1);
        assert_eq!(FlowSizes::Fixed(4096).size_at(0.3), 4096);
    }

    #[test]
    fn table_means_are_the_trapezoid_sums() {
        assert_eq!(FlowSizes::WebSearch.mean_bytes(), 1_711_250.0);
        assert_eq!(FlowSizes::Hadoop.mean_bytes(), 120_420.75);
        assert!((FlowSizes::Storage.mean_bytes() - 40_869.8).abs() < 1e-6);
        assert_eq!(FlowSizes::Fixed(777).mean_bytes(), 777.0);
    }

    #[test]
    fn sampled_sizes_have_the_table_mean() {
        for sizes in [FlowSizes::WebSearch, FlowSizes::Hadoop, FlowSizes::Storage] {
            let mut rng = Rng::new(42, 0);
            let n = 400_000;
            let xs: Vec<f64> = (0..n)
                .map(|_| sizes.size_at(rng.uniform()) as f64)
                .collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            // Five standard errors either side.
            let tol = 5.0 * (var / n as f64).sqrt();
            let want = sizes.mean_bytes();
            assert!(
                (mean - want).abs() < tol,
                "{sizes:?}: sampled mean {mean} vs {want} ± {tol}"
            );
            let max = sizes.table().unwrap().last().unwrap().0 as f64;
            assert!(xs.iter().all(|&x| x >= 1.0 && x <= max));
        }
    }

    /// Four hosts of two NICs.
    fn hosts8() -> Vec<usize> {
        (0..8).map(|r| r / 2).collect()
    }

    #[test]
    fn arrivals_are_poisson_at_the_offered_load() {
        let bg = Background {
            sizes: FlowSizes::Fixed(10_000),
            load_ppm: 500_000,
            seed: 3,
            duration_ns: 100_000_000,
        };
        let flows = bg.generate(&hosts8(), 100_000_000_000);
        // λ = 0.5 × 100 Gb/s ÷ 80,000 bits = 625,000 flows/s: 62,500 per
        // sender in 100 ms, σ = 250.
        for src in 0..8 {
            let mine: Vec<&FlowSpec> = flows.iter().filter(|f| f.src == src).collect();
            let k = mine.len() as f64;
            assert!((k - 62_500.0).abs() < 5.0 * 250.0, "rank {src}: {k} flows");
            assert!(mine.windows(2).all(|w| w[0].at <= w[1].at));
            assert!(mine.iter().all(|f| f.at < bg.duration_ns));
            // Exponential gaps: coefficient of variation 1.
            let gaps: Vec<f64> = mine
                .windows(2)
                .map(|w| (w[1].at - w[0].at) as f64)
                .collect();
            let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
            assert!((m - 1600.0).abs() < 30.0, "mean gap {m} ns");
            assert!((sd / m - 1.0).abs() < 0.03, "cv {}", sd / m);
            // Destinations: every rank of another host, about equally.
            let mut per = [0usize; 8];
            for f in &mine {
                assert_ne!(f.dst / 2, src / 2, "a flow to its own host");
                per[f.dst] += 1;
            }
            for (d, &c) in per.iter().enumerate() {
                if d / 2 != src / 2 {
                    let want = k / 6.0;
                    assert!((c as f64 - want).abs() < 5.0 * want.sqrt(), "{per:?}");
                }
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_flows() {
        let bg = Background {
            sizes: FlowSizes::WebSearch,
            load_ppm: 300_000,
            seed: 7,
            duration_ns: 2_000_000,
        };
        let a = bg.generate(&hosts8(), 400_000_000_000);
        assert_eq!(a, bg.generate(&hosts8(), 400_000_000_000));
        assert!(a.len() > 50, "{} flows", a.len());
        let other = Background {
            seed: 8,
            ..bg.clone()
        };
        assert_ne!(a, other.generate(&hosts8(), 400_000_000_000));
        // A rank's flows do not depend on the ranks after it.
        let fewer = bg.generate(&hosts8()[..6], 400_000_000_000);
        let r0 = |v: &[FlowSpec]| {
            v.iter()
                .filter(|f| f.src == 0)
                .map(|f| (f.at, f.bytes))
                .collect::<Vec<_>>()
        };
        assert_eq!(r0(&a), r0(&fewer));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2ms"), Ok(2_000_000));
        assert_eq!(parse_duration("50us"), Ok(50_000));
        assert_eq!(parse_duration("1.5us"), Ok(1_500));
        assert_eq!(parse_duration("700"), Ok(700));
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000));
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("3 parsecs").is_err());
    }
}
