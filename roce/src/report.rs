//! Results as nccl-tests prints them, from every host's outcome.
//!
//! Conventions, as nccl-tests' `doc/PERFORMANCE.md`: the `size` column is
//! S, the size of the whole array — for AllReduce, AlltoAll and SendRecv a
//! rank's buffer, for AllGather the output (every rank's share, i.e.
//! `sendcount × n × 4`) and for ReduceScatter the input (`recvcount × n ×
//! 4`), which is what [`Workload`](crate::plan::Workload)'s sizes already mean. `algbw = S / t` in
//! GB/s (10^9 bytes per second) with t from the job's start to the last
//! rank's end; `busbw = algbw × factor`: AllReduce 2(n−1)/n, AllGather,
//! ReduceScatter and AlltoAll (n−1)/n, SendRecv 1. Flow workloads (incast,
//! permutation) report S = the bytes of every flow together, t to the last
//! flow's acknowledgement, and busbw = algbw.

use std::io::{self, Write};

use serde::Serialize;

use crate::host::HostOutcome;
use crate::plan::JobPlan;

/// One row of the nccl-tests table (or of a flow workload's summary).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobResult {
    /// `allreduce`, `allgather`, `reducescatter`, `alltoall`, `sendrecv`,
    /// `incast`, `permutation`.
    pub op: String,
    /// Size in bytes, as nccl-tests' `size` column.
    pub bytes: u64,
    /// Elements (float32).
    pub count: u64,
    /// Time from start to the last rank finishing, microseconds.
    pub time_us: f64,
    /// bytes / time, GB/s (10^9 bytes per second), as nccl-tests.
    pub algbw_gbps: f64,
    /// algbw times the op's bus factor (nccl-tests PERFORMANCE.md).
    pub busbw_gbps: f64,
    /// Wrong elements over all ranks (bytes for flow workloads).
    pub wrong: u64,
    /// Whether every rank finished.
    pub completed: bool,
    /// Point-to-point transfers (flow workloads; empty for collectives).
    pub flows: Vec<FlowResult>,
}

/// One transfer's completion time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowResult {
    /// Sender (`host.ethN`).
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Bytes.
    pub bytes: u64,
    /// Flow completion time, microseconds (None: did not complete).
    pub fct_us: Option<f64>,
}

/// nccl-tests' bus bandwidth factor for `op` over `n` ranks (1 for
/// point-to-point operations and flows).
pub fn bus_factor(op: &str, n: usize) -> f64 {
    let n = n.max(1) as f64;
    match op {
        "allreduce" => 2.0 * (n - 1.0) / n,
        "allgather" | "reducescatter" | "alltoall" => (n - 1.0) / n,
        _ => 1.0,
    }
}

fn gbps(bytes: u64, time_ns: u64) -> f64 {
    if time_ns == 0 {
        0.0
    } else {
        bytes as f64 / time_ns as f64
    }
}

/// Combines every host's outcome into the result of the job's first (or
/// only) workload.
pub fn summarise(plan: &JobPlan, outcomes: &[HostOutcome]) -> JobResult {
    summarise_workloads(plan, outcomes)
        .into_iter()
        .next()
        .unwrap_or_else(|| summarise_one(plan, outcomes))
}

/// One result per workload of the job, in the order the plan lists them
/// ([`JobPlan::parts`]): each timed from its own start, with its own
/// ranks' and flows' outcomes.
pub fn summarise_workloads(plan: &JobPlan, outcomes: &[HostOutcome]) -> Vec<JobResult> {
    plan.parts()
        .iter()
        .enumerate()
        .map(|(k, part)| {
            let mine: Vec<HostOutcome> = outcomes
                .iter()
                .map(|o| HostOutcome {
                    host: o.host,
                    start_ns: o.start_ns.saturating_add(part.start_ns),
                    ranks: o
                        .ranks
                        .iter()
                        .filter(|r| r.workload == k)
                        .cloned()
                        .collect(),
                    flows: o
                        .flows
                        .iter()
                        .filter(|f| f.workload == k)
                        .cloned()
                        .collect(),
                    nics: Vec::new(),
                })
                .collect();
            summarise_one(part.plan, &mine)
        })
        .collect()
}

fn summarise_one(plan: &JobPlan, outcomes: &[HostOutcome]) -> JobResult {
    let w = plan.workload();
    let n = plan.ranks().len();
    let start = outcomes.iter().map(|o| o.start_ns).min().unwrap_or(0);
    let ranks: Vec<_> = outcomes.iter().flat_map(|o| o.ranks.iter()).collect();
    let wrong = ranks.iter().map(|r| r.wrong).sum();
    let name = |r: usize| {
        plan.ranks()
            .get(r)
            .map_or_else(|| format!("rank{r}"), |a| a.name.clone())
    };
    if w.is_flows() {
        let flows: Vec<_> = outcomes.iter().flat_map(|o| o.flows.iter()).collect();
        let bytes: u64 = plan.flow_specs().iter().map(|f| f.bytes).sum();
        let completed = flows.len() == plan.flows().len()
            && flows.iter().all(|f| f.end_ns.is_some())
            && ranks.len() == n
            && ranks.iter().all(|r| r.end_ns.is_some());
        let end = flows.iter().filter_map(|f| f.end_ns).max().unwrap_or(start);
        let t = end.saturating_sub(start);
        let algbw = gbps(bytes, t);
        let mut list: Vec<FlowResult> = flows
            .iter()
            .map(|f| FlowResult {
                src: name(f.src),
                dst: name(f.dst),
                bytes: f.bytes,
                fct_us: f
                    .end_ns
                    .map(|e| e.saturating_sub(f.start_ns) as f64 / 1000.0),
            })
            .collect();
        list.sort_by(|a, b| (&a.src, &a.dst).cmp(&(&b.src, &b.dst)));
        return JobResult {
            op: w.name().to_string(),
            bytes,
            count: bytes / 4,
            time_us: t as f64 / 1000.0,
            algbw_gbps: algbw,
            busbw_gbps: algbw,
            wrong,
            completed,
            flows: list,
        };
    }
    let bytes = w.bytes();
    let completed = ranks.len() == n && ranks.iter().all(|r| r.end_ns.is_some());
    let end = ranks.iter().filter_map(|r| r.end_ns).max().unwrap_or(start);
    let t = end.saturating_sub(start);
    let algbw = gbps(bytes, t);
    JobResult {
        op: w.name().to_string(),
        bytes,
        count: bytes / 4,
        time_us: t as f64 / 1000.0,
        algbw_gbps: algbw,
        busbw_gbps: algbw * bus_factor(w.name(), n),
        wrong,
        completed,
        flows: Vec::new(),
    }
}

/// `value` right-aligned in `width` characters with as many decimals as
/// fit (two at most), switching to an exponent when even none fit.
fn fit(value: f64, width: usize) -> String {
    for decimals in [2usize, 1, 0] {
        let s = format!("{value:>width$.decimals$}");
        if s.len() <= width {
            return s;
        }
    }
    format!("{value:>width$.1e}")
}

/// Prints results as nccl-tests does (`size count type redop time algbw
/// busbw #wrong`), then, for flow workloads, each flow's FCT.
///
/// # Errors
///
/// Errors of `out`.
pub fn render_table(out: &mut dyn Write, results: &[JobResult]) -> io::Result<()> {
    writeln!(
        out,
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}",
        "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong"
    )?;
    writeln!(
        out,
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}",
        "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", ""
    )?;
    for r in results {
        let redop = match r.op.as_str() {
            "allreduce" | "reducescatter" => "sum",
            _ => "none",
        };
        write!(
            out,
            "{:>12}  {:>12}  {:>8}  {:>6}",
            r.bytes, r.count, "float", redop
        )?;
        if r.completed {
            writeln!(
                out,
                "  {}  {}  {}  {:>6}",
                fit(r.time_us, 7),
                fit(r.algbw_gbps, 6),
                fit(r.busbw_gbps, 6),
                r.wrong
            )?;
        } else {
            writeln!(
                out,
                "  {:>7}  {:>6}  {:>6}  {:>6}",
                "N/A", "N/A", "N/A", r.wrong
            )?;
        }
    }
    let wrong: u64 = results.iter().map(|r| r.wrong).sum();
    let done: Vec<_> = results.iter().filter(|r| r.completed).collect();
    writeln!(
        out,
        "# Out of bounds values : {} {}",
        wrong,
        if wrong == 0 && done.len() == results.len() {
            "OK"
        } else {
            "FAILED"
        }
    )?;
    let avg = if done.is_empty() {
        0.0
    } else {
        done.iter().map(|r| r.busbw_gbps).sum::<f64>() / done.len() as f64
    };
    writeln!(out, "# Avg bus bandwidth    : {avg:.3} ")?;
    for r in results.iter().filter(|r| !r.flows.is_empty()) {
        writeln!(out, "#")?;
        writeln!(out, "# {} flows:", r.op)?;
        writeln!(
            out,
            "# {:>14}  {:>14}  {:>12}  {:>10}",
            "src", "dst", "size(B)", "fct(us)"
        )?;
        for f in &r.flows {
            let fct = f
                .fct_us
                .map_or_else(|| format!("{:>10}", "N/A"), |v| fit(v, 10));
            writeln!(
                out,
                "  {:>14}  {:>14}  {:>12}  {}",
                f.src, f.dst, f.bytes, fct
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coll_bus_factors_follow_performance_md() {
        assert_eq!(bus_factor("allreduce", 8), 1.75);
        assert_eq!(bus_factor("allreduce", 2), 1.0);
        assert_eq!(bus_factor("allgather", 4), 0.75);
        assert_eq!(bus_factor("reducescatter", 4), 0.75);
        assert_eq!(bus_factor("alltoall", 16), 15.0 / 16.0);
        assert_eq!(bus_factor("sendrecv", 8), 1.0);
        assert_eq!(bus_factor("incast", 8), 1.0);
    }

    #[test]
    fn coll_fit_keeps_width() {
        assert_eq!(fit(12.345, 7), "  12.35");
        assert_eq!(fit(123456.7, 7), " 123457");
        assert_eq!(fit(1234.56, 7), "1234.56");
        assert_eq!(fit(1234567.0, 7), "1234567");
        assert_eq!(fit(12345.0, 6), " 12345");
        assert_eq!(fit(97.5, 6), " 97.50");
    }
}
