//! The training-step workload (`training:dp=D,ep=E,pp=P[,...]`): its
//! grammar, its phases and which ranks form each phase's groups.

use serde::{Deserialize, Serialize};

use super::{parse_size, RankAddr, Workload, MAX_RANKS};
use crate::flows::parse_duration;
use crate::Nanos;

/// A training job as the book's chapter 13 draws it: `dp × ep × pp` ranks,
/// numbered as Megatron and DeepSpeed number them — expert-parallel
/// innermost (consecutive ranks: a server's GPUs, then the next server's),
/// data-parallel next, pipeline-parallel outermost:
/// `rank = stage·dp·ep + replica·ep + expert`. With `ep` a multiple of the
/// NICs per host, a data-parallel group (same stage and expert slot) and a
/// pipeline (same replica and expert slot) stay on one rail, and an
/// expert-parallel group spans `ep / R` servers and every rail.
///
/// Each iteration runs, on every rank, a `compute_ns` gap and then each
/// phase in turn: the expert-parallel AllToAll of `tokens` bytes (token
/// dispatch), the pipeline exchange of `act` bytes with the neighbouring
/// stages ([`Workload::Pipeline`]), and the data-parallel AllReduce of `grad`
/// bytes. A phase starts on a rank when its previous phase has finished on
/// that rank and the gap has passed; a phase whose groups have one rank, or
/// whose size is 0, is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Training {
    /// Data-parallel degree (replicas of each stage and expert slot).
    pub dp: usize,
    /// Expert-parallel degree (ranks sharing a stage's experts).
    pub ep: usize,
    /// Pipeline-parallel degree (stages).
    pub pp: usize,
    /// Iterations (training steps).
    pub iters: usize,
    /// Compute time before each communication phase, virtual nanoseconds.
    pub compute_ns: Nanos,
    /// Gradient bytes per rank, all-reduced over its data-parallel group.
    pub grad: u64,
    /// Token bytes per rank, exchanged over its expert-parallel group.
    pub tokens: u64,
    /// Activation bytes a stage sends to each neighbouring stage.
    pub act: u64,
}

/// Iterations of a training workload that does not say.
pub const TRAINING_ITERS: usize = 2;
/// Compute gap of a training workload that does not say: 50 µs.
pub const TRAINING_COMPUTE_NS: Nanos = 50_000;
/// Gradient size of a training workload that does not say: 16 MiB.
pub const TRAINING_GRAD: u64 = 16 << 20;
/// Token size of a training workload that does not say: 4 MiB.
pub const TRAINING_TOKENS: u64 = 4 << 20;
/// Activation size of a training workload that does not say: 1 MiB.
pub const TRAINING_ACT: u64 = 1 << 20;
/// The most iterations a training workload may have.
pub const MAX_TRAINING_ITERS: usize = 1_000;

/// The communication phases of a training step, in the order each
/// iteration runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Expert-parallel AllToAll (token dispatch), crossing rails.
    EpAllToAll,
    /// Pipeline-parallel exchange with the neighbouring stages, on one rail.
    PpSendRecv,
    /// Data-parallel AllReduce of the gradients, on one rail.
    DpAllReduce,
}

impl Phase {
    /// The phase's name in reports (`ep-alltoall`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Phase::EpAllToAll => "ep-alltoall",
            Phase::PpSendRecv => "pp-sendrecv",
            Phase::DpAllReduce => "dp-allreduce",
        }
    }
}

pub(super) const TRAINING_FORM: &str = "training:dp=D,ep=E,pp=P[,iters=N][,compute=DURATION][,grad=SIZE][,tokens=SIZE][,act=SIZE], like training:dp=2,ep=2,pp=2,iters=3,compute=20us,grad=1M";

impl Training {
    /// Reads the options of `training:OPTIONS` (`key=value`, comma
    /// separated; see [`Workload::parse`]).
    ///
    /// # Errors
    ///
    /// A message naming the bad field and what would be accepted.
    pub fn parse(spec: &str, options: &str) -> Result<Training, String> {
        let mut t = Training {
            dp: 0,
            ep: 0,
            pp: 0,
            iters: TRAINING_ITERS,
            compute_ns: TRAINING_COMPUTE_NS,
            grad: TRAINING_GRAD,
            tokens: TRAINING_TOKENS,
            act: TRAINING_ACT,
        };
        let mut seen: Vec<String> = Vec::new();
        for field in options.split(',') {
            let field = field.trim();
            let Some((key, value)) = field.split_once('=') else {
                return Err(format!(
                    "workload {spec:?}: field {field:?} is not key=value; expected {TRAINING_FORM}"
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            let key = key.to_ascii_lowercase();
            if seen.contains(&key) {
                return Err(format!("workload {spec:?}: {key} is given twice"));
            }
            seen.push(key.clone());
            let degree = |v: &str| -> Result<usize, String> {
                v.parse::<usize>()
                    .ok()
                    .filter(|d| (1..=MAX_RANKS).contains(d))
                    .ok_or_else(|| {
                        format!(
                            "workload {spec:?}: bad {key}={v:?}: expected a whole number of ranks from 1 to {MAX_RANKS}"
                        )
                    })
            };
            let size = |v: &str| -> Result<u64, String> {
                parse_size(v)
                    .map_err(|e| format!("workload {spec:?}: {key}: {e} (0 leaves the phase out)"))
            };
            match key.as_str() {
                "dp" => t.dp = degree(value)?,
                "ep" => t.ep = degree(value)?,
                "pp" => t.pp = degree(value)?,
                "iters" => {
                    t.iters = value
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=MAX_TRAINING_ITERS).contains(n))
                        .ok_or_else(|| {
                            format!(
                                "workload {spec:?}: bad iters={value:?}: expected a whole number from 1 to {MAX_TRAINING_ITERS}"
                            )
                        })?
                }
                "compute" => {
                    t.compute_ns = parse_duration(value)
                        .map_err(|e| format!("workload {spec:?}: compute: {e}"))?
                }
                "grad" => t.grad = size(value)?,
                "tokens" => t.tokens = size(value)?,
                "act" => t.act = size(value)?,
                _ => {
                    return Err(format!(
                        "workload {spec:?}: unknown field {key:?}; expected dp, ep, pp, iters, compute, grad, tokens or act"
                    ))
                }
            }
        }
        for (name, v) in [("dp", t.dp), ("ep", t.ep), ("pp", t.pp)] {
            if v == 0 {
                return Err(format!(
                    "workload {spec:?}: {name}= is missing; expected {TRAINING_FORM}"
                ));
            }
        }
        Ok(t)
    }

    /// The phases an iteration runs, in order: those whose groups have
    /// two ranks or more and whose size is more than 0.
    pub fn phases(&self) -> Vec<Phase> {
        let mut v = Vec::new();
        if self.ep >= 2 && self.tokens > 0 {
            v.push(Phase::EpAllToAll);
        }
        if self.pp >= 2 && self.act > 0 {
            v.push(Phase::PpSendRecv);
        }
        if self.dp >= 2 && self.grad > 0 {
            v.push(Phase::DpAllReduce);
        }
        v
    }

    /// The collective a phase runs in each of its groups.
    pub fn workload(&self, phase: Phase) -> Workload {
        match phase {
            Phase::EpAllToAll => Workload::AllToAll(self.tokens),
            Phase::PpSendRecv => Workload::Pipeline(self.act),
            Phase::DpAllReduce => Workload::AllReduce(self.grad),
        }
    }

    /// The groups of `phase` over `ranks` ranks: each the job's ranks in
    /// the group's own order (a group's rank k is its rank k), every rank
    /// in exactly one (see [`Training`] for the numbering).
    ///
    /// # Errors
    ///
    /// `dp × ep × pp` is not the number of ranks.
    pub fn groups(&self, phase: Phase, ranks: usize) -> Result<Vec<Vec<usize>>, String> {
        let (dp, ep, pp) = (self.dp, self.ep, self.pp);
        let product = dp.checked_mul(ep).and_then(|x| x.checked_mul(pp));
        if product != Some(ranks) {
            return Err(format!(
                "training: dp × ep × pp = {dp} × {ep} × {pp} must be the job's {ranks} ranks (one per NIC)"
            ));
        }
        let rank =
            |stage: usize, replica: usize, expert: usize| stage * dp * ep + replica * ep + expert;
        let mut out = Vec::new();
        match phase {
            Phase::EpAllToAll => {
                for s in 0..pp {
                    for d in 0..dp {
                        out.push((0..ep).map(|e| rank(s, d, e)).collect());
                    }
                }
            }
            Phase::PpSendRecv => {
                for d in 0..dp {
                    for e in 0..ep {
                        out.push((0..pp).map(|s| rank(s, d, e)).collect());
                    }
                }
            }
            Phase::DpAllReduce => {
                for s in 0..pp {
                    for e in 0..ep {
                        out.push((0..dp).map(|d| rank(s, d, e)).collect());
                    }
                }
            }
        }
        Ok(out)
    }

    /// Checks the layout against the job's ranks: every host has the same
    /// number of NICs R, ranks are in host order (rank = host·R + NIC), and
    /// `ep` is a multiple of R, so that data-parallel groups and pipelines
    /// stay on one rail.
    ///
    /// # Errors
    ///
    /// A message saying which rule the job breaks and what would fit.
    pub fn check(&self, ranks: &[RankAddr]) -> Result<(), String> {
        let n = ranks.len();
        let mut hosts: Vec<usize> = ranks.iter().map(|a| a.host).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let r = n / hosts.len().max(1);
        let aligned = r > 0
            && n.is_multiple_of(hosts.len())
            && ranks
                .iter()
                .enumerate()
                .all(|(i, a)| a.nic == i % r && hosts.binary_search(&a.host) == Ok(i / r));
        if !aligned {
            return Err(format!(
                "training needs every host to have the same number of NICs, ranks in host order ({n} ranks on {} hosts)",
                hosts.len()
            ));
        }
        let (dp, ep, pp) = (self.dp, self.ep, self.pp);
        let product = dp.checked_mul(ep).and_then(|x| x.checked_mul(pp));
        if product != Some(n) {
            return Err(format!(
                "training: dp × ep × pp = {dp} × {ep} × {pp} must be the job's {n} ranks ({} hosts × {r} NICs)",
                hosts.len()
            ));
        }
        if !ep.is_multiple_of(r) {
            return Err(format!(
                "training: ep={ep} must be a multiple of the {r} NICs per host, so that every data-parallel group and pipeline stays on one rail (ep={r}: a server's GPUs, whose AllToAll stays inside the server)"
            ));
        }
        if self.phases().is_empty() {
            return Err(
                "training: no phase has two ranks and bytes to move (dp, ep or pp above 1 with grad, tokens or act above 0)"
                    .to_string(),
            );
        }
        Ok(())
    }
}
