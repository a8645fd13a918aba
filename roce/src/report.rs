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
use crate::plan::{JobPlan, Start};
use crate::Nanos;

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
        .unwrap_or_else(|| summarise_one(plan, outcomes, plan.ranks().len(), None))
}

/// One result per workload of the job, in the order the plan lists them
/// ([`JobPlan::parts`]): each timed from its own start, with its own
/// ranks' and flows' outcomes. A part that starts after another
/// ([`Start::After`]: a training job's phases) is timed from its first
/// rank's start to its last rank's end, over all its groups, with the bus
/// factor of one group.
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
            let start = match part.start {
                Start::At(_) => None,
                Start::After { .. } => Some(
                    mine.iter()
                        .flat_map(|o| o.ranks.iter())
                        .filter_map(|r| r.start_ns)
                        .min()
                        .unwrap_or(0),
                ),
            };
            summarise_one(part.plan, &mine, plan.ranks().len(), start)
        })
        .collect()
}

/// `ranks` is how many rank outcomes a finished workload has; `start`
/// overrides the hosts' start (parts that start rank by rank).
fn summarise_one(
    plan: &JobPlan,
    outcomes: &[HostOutcome],
    ranks_expected: usize,
    start: Option<Nanos>,
) -> JobResult {
    let w = plan.workload();
    let n = plan.ranks().len();
    let start = start.unwrap_or_else(|| outcomes.iter().map(|o| o.start_ns).min().unwrap_or(0));
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
            && ranks.len() == ranks_expected
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
    let completed = ranks.len() == ranks_expected && ranks.iter().all(|r| r.end_ns.is_some());
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

/// One phase of one iteration of a training job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseResult {
    /// The iteration, from 0.
    pub iteration: usize,
    /// `ep-alltoall`, `pp-sendrecv` or `dp-allreduce`.
    pub phase: String,
    /// Its index in the job's results (and parts).
    pub part: usize,
    /// Groups running it side by side.
    pub groups: usize,
    /// Ranks in each group.
    pub group_ranks: usize,
    /// Bytes per rank (nccl-tests' size of the collective).
    pub bytes: u64,
    /// When its first rank started, microseconds after the job's start.
    pub start_us: f64,
    /// When its last rank finished (None: one did not).
    pub end_us: Option<f64>,
    /// From its first rank's start to its last rank's end, microseconds.
    pub time_us: f64,
    /// Bus bandwidth of one group, GB/s (nccl-tests' factor).
    pub busbw_gbps: f64,
    /// The least time, over ranks, between the rank finishing its
    /// previous phase (or the job's start, for the first) and starting
    /// this one, microseconds: the compute gap when phases follow each
    /// other on every rank (None: some rank did not start it).
    pub min_gap_us: Option<f64>,
    /// Wrong elements over all its ranks.
    pub wrong: u64,
    /// Whether every rank finished it.
    pub completed: bool,
}

/// One iteration (training step) of a training job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IterationResult {
    /// The iteration, from 0.
    pub iteration: usize,
    /// When it ended: its last phase finished on every rank, microseconds
    /// after the job's start (None: it did not).
    pub end_us: Option<f64>,
    /// From the previous iteration's end (the job's start for the first)
    /// to its own, microseconds.
    pub time_us: f64,
    /// The compute gaps on each rank's way through it, microseconds.
    pub compute_us: f64,
}

/// A training job's steps (see [`Training`](crate::plan::Training)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingResult {
    /// Which of the job's workloads it is (0 for the first).
    pub workload: usize,
    /// Data-parallel degree.
    pub dp: usize,
    /// Expert-parallel degree.
    pub ep: usize,
    /// Pipeline-parallel degree.
    pub pp: usize,
    /// Compute gap before each phase, microseconds.
    pub compute_us: f64,
    /// When it started (its first compute gap began), microseconds after
    /// the job's start.
    pub start_us: f64,
    /// Every phase of every iteration, in order.
    pub phases: Vec<PhaseResult>,
    /// Every iteration.
    pub iterations: Vec<IterationResult>,
    /// From its start to its last phase's end on every rank, microseconds
    /// (to the last end seen, when it did not finish).
    pub total_us: f64,
    /// Wrong elements over every phase.
    pub wrong: u64,
    /// Whether every phase finished on every rank.
    pub completed: bool,
}

/// The training jobs of `plan` (none when it has none), from every host's
/// outcome and the per-part `results` of [`summarise_workloads`].
pub fn summarise_training(
    plan: &JobPlan,
    outcomes: &[HostOutcome],
    results: &[JobResult],
) -> Vec<TrainingResult> {
    let parts = plan.parts();
    let n = plan.ranks().len();
    let job_start = outcomes.iter().map(|o| o.start_ns).min().unwrap_or(0);
    let us = |t: Nanos| t.saturating_sub(job_start) as f64 / 1e3;
    // (start, end) per part and rank.
    let mut times: Vec<Vec<(Option<Nanos>, Option<Nanos>)>> =
        vec![vec![(None, None); n]; parts.len()];
    for r in outcomes.iter().flat_map(|o| o.ranks.iter()) {
        if let Some(x) = times.get_mut(r.workload).and_then(|v| v.get_mut(r.rank)) {
            *x = (r.start_ns, r.end_ns);
        }
    }
    let mut out: Vec<TrainingResult> = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let Some(tag) = part.phase else { continue };
        let t = tag.training;
        let begin = job_start.saturating_add(tag.start_ns);
        if out.last().is_none_or(|x| x.workload != tag.workload) {
            out.push(TrainingResult {
                workload: tag.workload,
                dp: t.dp,
                ep: t.ep,
                pp: t.pp,
                compute_us: t.compute_ns as f64 / 1e3,
                start_us: us(begin),
                phases: Vec::new(),
                iterations: Vec::new(),
                total_us: 0.0,
                wrong: 0,
                completed: true,
            });
        }
        let Some(tr) = out.last_mut() else { continue };
        let mine = &times[k];
        let before: Vec<Option<Nanos>> = match part.start {
            Start::After { part: q, .. } => times[q].iter().map(|x| x.1).collect(),
            Start::At(_) => vec![Some(begin); n],
        };
        let starts: Vec<Nanos> = mine.iter().filter_map(|x| x.0).collect();
        let min_gap = (starts.len() == n)
            .then(|| {
                mine.iter()
                    .zip(&before)
                    .filter_map(|(x, b)| Some(x.0?.saturating_sub((*b)?)))
                    .min()
            })
            .flatten();
        let res = results.get(k);
        let completed = res.is_some_and(|r| r.completed);
        let end = mine.iter().filter_map(|x| x.1).max();
        let first = starts.iter().copied().min();
        tr.phases.push(PhaseResult {
            iteration: tag.iteration,
            phase: tag.phase.name().to_string(),
            part: k,
            groups: part.groups().len(),
            group_ranks: part.plan.ranks().len(),
            bytes: part.plan.workload().bytes(),
            start_us: first.map_or(0.0, us),
            end_us: end.filter(|_| completed).map(us),
            time_us: res.map_or(0.0, |r| r.time_us),
            busbw_gbps: res.map_or(0.0, |r| r.busbw_gbps),
            min_gap_us: min_gap.map(|g| g as f64 / 1e3),
            wrong: res.map_or(0, |r| r.wrong),
            completed,
        });
        tr.wrong += res.map_or(0, |r| r.wrong);
        tr.completed &= completed;
        if let Some(e) = end {
            tr.total_us = tr.total_us.max(us(e) - tr.start_us);
        }
    }
    for tr in &mut out {
        let per_iter = tr.phases.iter().filter(|p| p.iteration == 0).count();
        let iters = tr.phases.last().map_or(0, |p| p.iteration + 1);
        let mut prev = Some(tr.start_us);
        for i in 0..iters {
            let last = tr.phases.iter().rfind(|p| p.iteration == i);
            let end = last.and_then(|p| p.end_us);
            tr.iterations.push(IterationResult {
                iteration: i,
                end_us: end,
                time_us: match (prev, end) {
                    (Some(a), Some(b)) => b - a,
                    _ => 0.0,
                },
                compute_us: tr.compute_us * per_iter as f64,
            });
            prev = end;
        }
    }
    out
}

/// Prints training jobs: each phase of each iteration (its groups, time
/// and bus bandwidth), then each iteration's time and the total.
///
/// # Errors
///
/// Errors of `out`.
pub fn render_training(out: &mut dyn Write, jobs: &[TrainingResult]) -> io::Result<()> {
    for t in jobs {
        writeln!(
            out,
            "# training (workload {}): dp={} ep={} pp={}, compute {:.1} us before each phase",
            t.workload + 1,
            t.dp,
            t.ep,
            t.pp,
            t.compute_us
        )?;
        writeln!(
            out,
            "# {:>4}  {:<12}  {:>6}  {:>5}  {:>10}  {:>9}  {:>9}  {:>8}  {:>6}  {:>7}  {:>6}",
            "iter",
            "phase",
            "groups",
            "ranks",
            "size(B)",
            "start(us)",
            "end(us)",
            "time(us)",
            "busbw",
            "gap(us)",
            "#wrong"
        )?;
        let opt =
            |v: Option<f64>, w: usize| v.map_or_else(|| format!("{:>w$}", "N/A"), |x| fit(x, w));
        for p in &t.phases {
            writeln!(
                out,
                "  {:>4}  {:<12}  {:>6}  {:>5}  {:>10}  {}  {}  {}  {}  {}  {:>6}",
                p.iteration,
                p.phase,
                p.groups,
                p.group_ranks,
                p.bytes,
                fit(p.start_us, 9),
                opt(p.end_us, 9),
                opt(p.completed.then_some(p.time_us), 8),
                opt(p.completed.then_some(p.busbw_gbps), 6),
                opt(p.min_gap_us, 7),
                p.wrong
            )?;
        }
        writeln!(
            out,
            "# {:>4}  {:>9}  {:>9}  {:>10}",
            "iter", "end(us)", "time(us)", "compute(us)"
        )?;
        for i in &t.iterations {
            writeln!(
                out,
                "  {:>4}  {}  {}  {}",
                i.iteration,
                opt(i.end_us, 9),
                opt(i.end_us.map(|_| i.time_us), 9),
                fit(i.compute_us, 10)
            )?;
        }
        if t.completed {
            writeln!(
                out,
                "# training step total: {:.2} us over {} iterations, #wrong {}",
                t.total_us,
                t.iterations.len(),
                t.wrong
            )?;
        } else {
            writeln!(
                out,
                "# training did not finish: {:.2} us seen, #wrong {}",
                t.total_us, t.wrong
            )?;
        }
    }
    Ok(())
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
