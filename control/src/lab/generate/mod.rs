//! `railyard lab generate KIND`: a fabric of the book's chapter-13 designs
//! written as an ordinary `.topo` file, for `lab up` (small ones) and
//! `railyard sim` (any size).
//!
//! Kinds:
//! - `rail-optimised` (or `rail-optimized`): NIC n (ethN) of every host goes
//!   to a leaf of rail n+1; every leaf to every spine. A rail gets as many
//!   leaves as its hosts need ports.
//! - `leaf-spine`: hosts' NICs spread over plain leaves in host order;
//!   every leaf to every spine.
//! - `three-tier`: rail-aligned leaves and their spines grouped into pods
//!   (as many leaves per pod as a spine's ports allow with 1:1 uplinks);
//!   spine S of every pod to every super-spine of plane S.
//!
//! The parts: sizing ([`plan`]), addresses ([`address`]), names and ports
//! ([`mod@layout`]), the file's text ([`text`]).

pub mod address;
pub mod layout;
pub mod plan;
pub mod text;

#[cfg(test)]
mod tests;

use std::io::Write;

use address::Addressing;
use layout::{layout, Layout, Style};
use plan::{Demand, Plan};

/// A fabric design `generate` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Rail-aligned leaves (NIC n of every host on rail n+1) under spines.
    #[value(name = "rail-optimised", alias = "rail-optimized")]
    RailOptimised,
    /// Plain leaves (a host's NICs side by side) under spines.
    LeafSpine,
    /// Rail-aligned leaves and spines in pods under super-spines.
    ThreeTier,
}

impl Kind {
    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Kind::RailOptimised => "rail-optimised",
            Kind::LeafSpine => "leaf-spine",
            Kind::ThreeTier => "three-tier",
        }
    }

    /// Whether NIC n of every host goes to a leaf of rail n.
    pub fn rail_aligned(self) -> bool {
        self != Kind::LeafSpine
    }
}

/// Why a fabric cannot be generated, and what would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateError {
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub hint: String,
}

impl GenerateError {
    /// An error with its hint.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> GenerateError {
        GenerateError {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl std::fmt::Display for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "lab generate: {}\n   = hint: {}",
            self.message, self.hint
        )
    }
}

/// Parses a ratio: `2`, `1.5` or `3:1`.
fn parse_ratio(s: &str) -> Result<f64, String> {
    let bad = || format!("`{s}` is not a ratio: write 1, 1.5 or 3:1");
    let x = match s.split_once(':') {
        Some((a, b)) => {
            let a: f64 = a.trim().parse().map_err(|_| bad())?;
            let b: f64 = b.trim().parse().map_err(|_| bad())?;
            a / b
        }
        None => s.trim().parse().map_err(|_| bad())?,
    };
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(format!(
            "oversubscription {s} leaves no uplink capacity: it must be above 0 (1 is non-blocking)"
        ))
    }
}

/// Parses a cable delay as the topology's `delay` keyword takes it.
fn parse_delay(s: &str) -> Result<u64, String> {
    match humantime::parse_duration(s) {
        Ok(d) if d.as_nanos() <= 1_000_000_000 => Ok(d.as_nanos() as u64),
        _ => Err(format!(
            "`{s}` is not a cable delay: a duration up to 1s, e.g. 1us or 500ns"
        )),
    }
}

/// `railyard lab generate KIND [OPTIONS]`: what to generate.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "\
Prints a .topo file on stdout and a one-line summary on stderr:
  railyard lab generate rail-optimised --hosts 128 --rails 8 > gpu1024.topo
  railyard sim gpu1024.topo --workload alltoall:1M
  railyard lab generate rail-optimised --hosts 4 --rails 2 --spines 2 --speed 10000 > small.topo
  railyard lab up small.topo

A leaf gives as many ports to hosts as its radix allows once it has the
uplinks the oversubscription asks for (rounded up to the same number of
links to every spine); a rail needing more host ports gets several leaves
(rail1-1, rail1-2, ...). Without --spines (--superspines), the fewest that
fit the radix are used. The file's header records the full command and the
fabric's counts, oversubscription and bisection bandwidth.")]
pub struct Spec {
    /// rail-optimised (rail-optimized), leaf-spine or three-tier.
    #[arg(value_enum)]
    pub kind: Kind,
    /// Hosts (GPU servers).
    #[arg(long)]
    pub hosts: u32,
    /// NICs per host: rails of a rail-optimised or three-tier fabric
    /// (default 8); a leaf-spine host's NICs (default 1).
    #[arg(long)]
    pub rails: Option<u32>,
    /// Spines (per pod in a three-tier fabric); default the fewest that fit.
    #[arg(long)]
    pub spines: Option<u32>,
    /// Super-spines of a three-tier fabric, a multiple of --spines (one
    /// plane per spine of a pod); default the fewest that fit.
    #[arg(long)]
    pub superspines: Option<u32>,
    /// Ports per switch (1-255).
    #[arg(long, default_value_t = 64)]
    pub radix: u32,
    /// Host link speed in Mb/s (400000 = 400 Gb/s).
    #[arg(long, default_value_t = 400_000)]
    pub speed: u32,
    /// Switch–switch link speed in Mb/s; default --speed.
    #[arg(long)]
    pub uplink_speed: Option<u32>,
    /// A leaf's downlink:uplink capacity ratio: 1 (non-blocking), 2, 3:1.
    #[arg(long, value_parser = parse_ratio, default_value = "1")]
    pub oversubscription: f64,
    /// Cable delay of every link (`railyard sim`), e.g. 1us, 500ns;
    /// default the topology's (1us).
    #[arg(long = "delay", value_parser = parse_delay, value_name = "DURATION")]
    pub delay_ns: Option<u64>,
    /// MTU of every link.
    #[arg(long, default_value_t = 9216)]
    pub mtu: u16,
    /// Leaves take role `rail-lossless` (PFC pause thresholds under the
    /// WRED ones) instead of `rail`.
    #[arg(long)]
    pub lossless: bool,
    /// Leaf role (template); default `rail`, or `rail-lossless` with --lossless.
    #[arg(long, value_name = "ROLE")]
    pub role_leaf: Option<String>,
    /// Spine and super-spine role (template); default `spine`.
    #[arg(long, value_name = "ROLE")]
    pub role_spine: Option<String>,
}

impl Spec {
    /// A spec with the command line's defaults.
    pub fn new(kind: Kind, hosts: u32) -> Spec {
        Spec {
            kind,
            hosts,
            rails: None,
            spines: None,
            superspines: None,
            radix: 64,
            speed: 400_000,
            uplink_speed: None,
            oversubscription: 1.0,
            delay_ns: None,
            mtu: 9216,
            lossless: false,
            role_leaf: None,
            role_spine: None,
        }
    }

    /// NICs per host.
    pub fn nics(&self) -> u32 {
        self.rails
            .unwrap_or(if self.kind.rail_aligned() { 8 } else { 1 })
    }

    /// Switch–switch link speed.
    pub fn uplink_speed(&self) -> u32 {
        self.uplink_speed.unwrap_or(self.speed)
    }

    /// The leaves' role.
    pub fn leaf_role(&self) -> String {
        self.role_leaf.clone().unwrap_or_else(|| {
            if self.lossless {
                "rail-lossless".into()
            } else {
                "rail".into()
            }
        })
    }

    /// The spines' role.
    pub fn spine_role(&self) -> String {
        self.role_spine.clone().unwrap_or_else(|| "spine".into())
    }

    /// The command that regenerates the same file: every option, with the
    /// spine counts `plan` settled on.
    pub fn command_line(&self, plan: &Plan) -> String {
        let mut c = format!(
            "railyard lab generate {} --hosts {} --rails {} --spines {}",
            self.kind.name(),
            self.hosts,
            self.nics(),
            plan.spines
        );
        if plan.three_tier() {
            c += &format!(" --superspines {}", plan.superspines);
        }
        c += &format!(
            " --radix {} --speed {} --uplink-speed {} --oversubscription {} --mtu {}",
            self.radix,
            self.speed,
            self.uplink_speed(),
            self.oversubscription,
            self.mtu
        );
        if let Some(d) = self.delay_ns {
            c += &format!(" --delay {}", text::delay(d));
        }
        if self.role_leaf.is_some() || self.lossless {
            c += &format!(" --role-leaf {}", self.leaf_role());
        }
        if self.role_spine.is_some() {
            c += &format!(" --role-spine {}", self.spine_role());
        }
        c
    }

    /// Checks the options on their own.
    ///
    /// # Errors
    /// The first option out of range, with what would do.
    fn validate(&self) -> Result<(), GenerateError> {
        if self.hosts == 0 {
            return Err(GenerateError::new(
                "--hosts 0: a fabric needs at least one host",
                "e.g. --hosts 128",
            ));
        }
        if !(2..=255).contains(&self.radix) {
            return Err(GenerateError::new(
                format!("--radix {} is not a switch's port count", self.radix),
                "2-255 ports (interfaces are Ethernet1/1 to Ethernet1/RADIX), e.g. --radix 64",
            ));
        }
        let nics = self.nics();
        if nics == 0 {
            return Err(GenerateError::new(
                "--rails 0: every host needs a NIC",
                "e.g. --rails 8 (a GPU server's eight NICs)",
            ));
        }
        if nics > self.radix {
            return Err(GenerateError::new(
                format!(
                    "--rails {nics} is more than a switch has ports (--radix {})",
                    self.radix
                ),
                "a host's NICs are counted in ports; use fewer rails or a larger --radix",
            ));
        }
        for (opt, speed) in [
            ("--speed", self.speed),
            ("--uplink-speed", self.uplink_speed()),
        ] {
            let snippet = format!("interface Ethernet1/1\n  speed {speed}\n");
            if railyard_config::parse_str(&snippet, "speed", &Default::default()).is_err() {
                return Err(GenerateError::new(
                    format!("{opt} {speed} is not a port speed railyard configures"),
                    "Mb/s as NX-OS writes it: 1000, 10000, 25000, 40000, 50000, 100000, \
                     200000, 400000, 800000",
                ));
            }
        }
        if !(self.oversubscription.is_finite() && self.oversubscription > 0.0) {
            return Err(GenerateError::new(
                format!(
                    "--oversubscription {} leaves no uplink capacity",
                    self.oversubscription
                ),
                "a ratio above 0: 1 is non-blocking, 3 (3:1) has a third of the host capacity up",
            ));
        }
        if !(576..=9216).contains(&self.mtu) {
            return Err(GenerateError::new(
                format!("--mtu {} is out of range", self.mtu),
                "576-9216 bytes; RoCEv2 fabrics run 9216",
            ));
        }
        if self.spines == Some(0) || self.superspines == Some(0) {
            return Err(GenerateError::new(
                "0 spines leaves the leaves unconnected",
                "give at least 1, or leave the count out for the fewest that fit",
            ));
        }
        if self.superspines.is_some() && self.kind != Kind::ThreeTier {
            return Err(GenerateError::new(
                format!(
                    "--superspines is for three-tier fabrics, not {}",
                    self.kind.name()
                ),
                "generate `three-tier`, or leave --superspines out",
            ));
        }
        for role in [self.leaf_role(), self.spine_role()] {
            let ok = role.len() <= 32
                && role.starts_with(|c: char| c.is_ascii_alphabetic())
                && role
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok {
                return Err(GenerateError::new(
                    format!("`{role}` is not a role name"),
                    "a letter, then letters, digits, `-` or `_` (at most 32); built-in roles: \
                     rail, rail-dlb, rail-lossless, spine",
                ));
            }
        }
        Ok(())
    }
}

/// A generated fabric.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The sizing.
    pub plan: Plan,
    /// Switches, hosts and cables.
    pub layout: Layout,
    /// The `.topo` file.
    pub text: String,
    /// One line for stderr.
    pub summary: String,
}

/// Generates the fabric `spec` describes.
///
/// # Errors
/// An option out of range, or a fabric the radix or the address plan
/// cannot hold, with a hint.
pub fn generate(spec: &Spec) -> Result<Generated, GenerateError> {
    spec.validate()?;
    let nics = spec.nics();
    let rail = spec.kind.rail_aligned();
    let endpoints = if rail {
        spec.hosts
    } else {
        spec.hosts.checked_mul(nics).ok_or_else(|| {
            GenerateError::new(
                "too many host NICs",
                "generate fewer hosts or NICs per host",
            )
        })?
    };
    let demand = Demand {
        planes: if rail { nics } else { 1 },
        endpoints,
        radix: spec.radix,
        speed: spec.speed,
        uplink_speed: spec.uplink_speed(),
        oversubscription: spec.oversubscription,
        spines: spec.spines,
        superspines: (spec.kind == Kind::ThreeTier).then_some(spec.superspines),
    };
    let plan = plan::plan(&demand)?;
    let lower = plan.leaves()
        + if plan.three_tier() {
            plan.all_spines()
        } else {
            0
        };
    let addressing = Addressing::new(
        spec.hosts,
        nics,
        lower,
        plan.leaf_uplinks.max(plan.spine_uplinks),
    )?;
    let style = Style {
        rail_aligned: rail,
        nics,
        hosts: spec.hosts,
        leaf_role: spec.leaf_role(),
        spine_role: spec.spine_role(),
        speed: spec.speed,
        uplink_speed: spec.uplink_speed(),
    };
    let layout = layout(&plan, &style, &addressing);
    let text = text::write(spec, &plan, &layout);
    let summary = text::summary(spec, &plan, &layout);
    Ok(Generated {
        plan,
        layout,
        text,
        summary,
    })
}

/// Runs `railyard lab generate`: the file on `out`, the summary on stderr.
///
/// # Errors
/// What [`generate`] refuses, or output that cannot be written.
pub fn run(spec: &Spec, out: &mut dyn Write) -> Result<(), String> {
    let g = generate(spec).map_err(|e| e.to_string())?;
    out.write_all(g.text.as_bytes())
        .map_err(|e| e.to_string())?;
    eprintln!("{}", g.summary);
    Ok(())
}
