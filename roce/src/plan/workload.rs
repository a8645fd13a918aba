//! Workload specs as users write them (`allreduce:64M`,
//! `incast:1M:h1,h2:h3`, `flows:websearch:0.3`, ...) and what they say.

use super::training::TRAINING_FORM;
use super::{parse_size, Training, Workload};
use crate::flows::{parse_duration, Background, FlowSizes, DEFAULT_DURATION_NS};

const GRAMMAR: &str = "allreduce:SIZE, allgather:SIZE, reducescatter:SIZE, alltoall:SIZE, sendrecv:SIZE, pipeline:SIZE, training:dp=D,ep=E,pp=P[,...], incast:SIZE:SRC1,SRC2,...:DST, permutation:SIZE[:SEED] or flows:CDF:LOAD[:SEED[:DURATION]] (CDF websearch, hadoop, storage or fixed:SIZE)";

impl Workload {
    /// Reads a workload spec (`allreduce:SIZE`, `allgather:SIZE`,
    /// `reducescatter:SIZE`, `alltoall:SIZE`, `sendrecv:SIZE`,
    /// `incast:SIZE:SRC1,SRC2,...:DST`, `permutation:SIZE[:SEED]`,
    /// `flows:CDF:LOAD[:SEED[:DURATION]]` with CDF `websearch`, `hadoop`,
    /// `storage` or `fixed:SIZE`, LOAD a fraction of line rate like `0.3`,
    /// DURATION like `2ms` (default 1 ms); SIZE like `64M`, `512K`, `1G`,
    /// `4096`), resolving endpoint names with `rank_of`.
    ///
    /// `pipeline:SIZE`: rank r sends SIZE to ranks r−1 and r+1 (no wrap).
    ///
    /// `training:dp=D,ep=E,pp=P[,iters=N][,compute=DURATION][,grad=SIZE]
    /// [,tokens=SIZE][,act=SIZE]`: a training job (see [`Training`]); `dp`,
    /// `ep` and `pp` are required and multiply to the job's ranks, `ep` a
    /// multiple of the NICs per host; `iters` defaults to 2, `compute` (the
    /// gap before each phase) to 50us, `grad` to 16M, `tokens` to 4M, `act`
    /// to 1M; a size of 0 leaves its phase out.
    ///
    /// # Errors
    ///
    /// A message naming the bad part and what would be accepted.
    pub fn parse(
        spec: &str,
        rank_of: &dyn Fn(&str) -> Result<usize, String>,
    ) -> Result<Workload, String> {
        let parts: Vec<&str> = spec.trim().split(':').collect();
        let op = parts[0].to_ascii_lowercase();
        let size = |i: usize| -> Result<u64, String> {
            let text = parts
                .get(i)
                .ok_or_else(|| format!("workload {spec:?}: {op} needs a SIZE, like {op}:64M"))?;
            let n = parse_size(text).map_err(|e| format!("workload {spec:?}: {e}"))?;
            if n == 0 {
                return Err(format!("workload {spec:?}: SIZE must be more than 0 bytes"));
            }
            Ok(n)
        };
        let arity = |want: &[usize], form: &str| -> Result<(), String> {
            if want.contains(&parts.len()) {
                Ok(())
            } else {
                Err(format!("workload {spec:?}: expected {form}"))
            }
        };
        match op.as_str() {
            "allreduce" | "allgather" | "reducescatter" | "alltoall" | "sendrecv" | "pipeline" => {
                arity(&[2], &format!("{op}:SIZE"))?;
                let n = size(1)?;
                Ok(match op.as_str() {
                    "allreduce" => Workload::AllReduce(n),
                    "allgather" => Workload::AllGather(n),
                    "reducescatter" => Workload::ReduceScatter(n),
                    "alltoall" => Workload::AllToAll(n),
                    "pipeline" => Workload::Pipeline(n),
                    _ => Workload::SendRecv(n),
                })
            }
            "training" => {
                let options = spec.trim().split_once(':').map_or("", |x| x.1);
                if options.trim().is_empty() {
                    return Err(format!("workload {spec:?}: expected {TRAINING_FORM}"));
                }
                Ok(Workload::Training(Training::parse(spec, options)?))
            }
            "incast" => {
                arity(&[4], "incast:SIZE:SRC1,SRC2,...:DST")?;
                let bytes = size(1)?;
                let mut srcs = Vec::new();
                for name in parts[2].split(',') {
                    let name = name.trim();
                    if name.is_empty() {
                        return Err(format!(
                            "workload {spec:?}: empty source name in {:?}; list senders like h1,h2.eth1",
                            parts[2]
                        ));
                    }
                    let r = rank_of(name)
                        .map_err(|e| format!("workload {spec:?}: source {name:?}: {e}"))?;
                    if srcs.contains(&r) {
                        return Err(format!(
                            "workload {spec:?}: source {name:?} is listed twice"
                        ));
                    }
                    srcs.push(r);
                }
                let dname = parts[3].trim();
                let dst = rank_of(dname)
                    .map_err(|e| format!("workload {spec:?}: destination {dname:?}: {e}"))?;
                if srcs.contains(&dst) {
                    return Err(format!(
                        "workload {spec:?}: destination {dname:?} is also a source"
                    ));
                }
                Ok(Workload::Incast { bytes, srcs, dst })
            }
            "permutation" => {
                arity(&[2, 3], "permutation:SIZE[:SEED]")?;
                let bytes = size(1)?;
                let seed = match parts.get(2) {
                    None => 1,
                    Some(s) => s.trim().parse().map_err(|_| {
                        format!("workload {spec:?}: bad SEED {s:?}: expected a whole number")
                    })?,
                };
                Ok(Workload::Permutation { bytes, seed })
            }
            "flows" => {
                let form = "flows:CDF:LOAD[:SEED[:DURATION]] (CDF websearch, hadoop, storage or fixed:SIZE), like flows:websearch:0.3:7:2ms";
                let cdf = parts
                    .get(1)
                    .map(|c| c.trim().to_ascii_lowercase())
                    .ok_or_else(|| format!("workload {spec:?}: expected {form}"))?;
                let (sizes, rest) = match cdf.as_str() {
                    "websearch" => (FlowSizes::WebSearch, 2),
                    "hadoop" => (FlowSizes::Hadoop, 2),
                    "storage" => (FlowSizes::Storage, 2),
                    "fixed" => (FlowSizes::Fixed(size(2)?), 3),
                    other => {
                        return Err(format!(
                            "workload {spec:?}: unknown flow-size distribution {other:?}; expected websearch, hadoop, storage or fixed:SIZE"
                        ))
                    }
                };
                if parts.len() < rest + 1 || parts.len() > rest + 3 {
                    return Err(format!("workload {spec:?}: expected {form}"));
                }
                let lt = parts[rest].trim();
                let load: f64 = lt
                    .parse()
                    .ok()
                    .filter(|l: &f64| *l > 0.0 && *l <= 1.0)
                    .ok_or_else(|| {
                        format!("workload {spec:?}: bad LOAD {lt:?}: expected a fraction of line rate above 0 and at most 1, like 0.3")
                    })?;
                let seed = match parts.get(rest + 1) {
                    None => 1,
                    Some(s) => s.trim().parse().map_err(|_| {
                        format!("workload {spec:?}: bad SEED {s:?}: expected a whole number")
                    })?,
                };
                let duration_ns = match parts.get(rest + 2) {
                    None => DEFAULT_DURATION_NS,
                    Some(d) => parse_duration(d).map_err(|e| format!("workload {spec:?}: {e}"))?,
                };
                if duration_ns == 0 {
                    return Err(format!("workload {spec:?}: DURATION must be more than 0"));
                }
                Ok(Workload::Flows(Background {
                    sizes,
                    load_ppm: (load * 1e6).round() as u32,
                    seed,
                    duration_ns,
                }))
            }
            _ => Err(format!(
                "workload {spec:?}: unknown operation {:?}; expected {GRAMMAR}",
                parts[0]
            )),
        }
    }

    /// The operation's name as reports print it (`allreduce`, `incast`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Workload::AllReduce(_) => "allreduce",
            Workload::AllGather(_) => "allgather",
            Workload::ReduceScatter(_) => "reducescatter",
            Workload::AllToAll(_) => "alltoall",
            Workload::SendRecv(_) => "sendrecv",
            Workload::Incast { .. } => "incast",
            Workload::Permutation { .. } => "permutation",
            Workload::Flows(_) => "flows",
            Workload::Pipeline(_) => "pipeline",
            Workload::Training(_) => "training",
        }
    }

    /// The size the workload names (per rank, or per sender for flows; for
    /// background flows the distribution's mean, rounded).
    pub fn bytes(&self) -> u64 {
        match self {
            Workload::AllReduce(b)
            | Workload::AllGather(b)
            | Workload::ReduceScatter(b)
            | Workload::AllToAll(b)
            | Workload::SendRecv(b)
            | Workload::Pipeline(b) => *b,
            Workload::Training(t) => t.grad.max(t.tokens).max(t.act),
            Workload::Incast { bytes, .. } | Workload::Permutation { bytes, .. } => *bytes,
            Workload::Flows(b) => b.sizes.mean_bytes().round() as u64,
        }
    }

    /// Whether it is a set of point-to-point flows (incast, permutation,
    /// background) rather than a collective.
    pub fn is_flows(&self) -> bool {
        matches!(
            self,
            Workload::Incast { .. } | Workload::Permutation { .. } | Workload::Flows(_)
        )
    }
}
