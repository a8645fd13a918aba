//! DCQCN (Zhu et al., SIGCOMM 2015): the notification point that answers CE
//! marks with CNPs and the reaction point that sets a queue pair's rate.
//!
//! # The algorithm, as modelled here
//!
//! The reaction point follows NVIDIA ConnectX (ConnectX-4 and later) where
//! its documentation says how, and the DCQCN paper where it does not. The
//! reference simulator in the HPCC repository (`rdma-hw.cc`, "Mellanox's
//! version of DCQCN") was a second reading; where it differs from the
//! ConnectX documentation the difference is noted at the spot.
//!
//! * **Rate limiter.** A queue pair sends at line rate until its first CNP;
//!   that CNP allocates a rate limiter (current rate RC, target rate RT,
//!   α = `initial_alpha_value`). When RC climbs back to `rpg_max_rate`
//!   (0 = line rate) the limiter is released ("the flow is not rate limited
//!   any more", mlxconfig), so the next CNP is a first CNP again.
//! * **Cut.** On a CNP: RT = RC when `clamp_tgt_rate`, or when the rate was
//!   raised since the last cut by the byte counter, or by the timer with
//!   `clamp_tgt_rate_after_time_inc`; then RC = RC·(1 − α/2^`rpg_gd`) with α
//!   a 10-bit fraction (so the default `rpg_gd` 11 gives the paper's
//!   RC·(1 − α/2)), but not below RC·`rpg_min_dec_fac`/100 nor below
//!   `rpg_min_rate`. At most one cut per `rate_reduce_monitor_period`: a CNP
//!   inside the period is remembered and cuts when the period ends. A first
//!   CNP with `rate_to_set_on_first_cnp` ≠ 0 sets RC = RT to that rate
//!   instead of cutting. A cut resets the byte counter, the increase timer
//!   and both stage counters.
//! * **α.** Every `dce_tcp_rtt` µs: α = α·G/1024 + (1024 − G) if a CNP
//!   arrived in the period, else α = α·G/1024, with G = `dce_tcp_g` and α
//!   in 1/1024. In the paper's terms g = 1 − G/1024 (5/1024 ≈ 1/205 by
//!   default, the paper uses 1/256). NVIDIA's parameter page states this
//!   form; the older register description in mstflint states the inverse
//!   (G is the weight of the new sample), together with an old default of 64
//!   (g = 1/16). With today's default 1019 only the first reading is sane.
//! * **Increase.** The timer (`rpg_time_reset` µs) and the byte counter
//!   (`rpg_byte_reset` bytes, 0 = off) each count increase events since the
//!   last cut, T and B. On each event, with F = `rpg_threshold`:
//!   max(T, B) ≤ F is fast recovery (RC = (RT + RC)/2); min(T, B) > F is
//!   hyper increase (RT += (min(T, B) − F)·`rpg_hai_rate`, then the same
//!   average); otherwise additive increase (RT += `rpg_ai_rate`, then the
//!   average). RT never exceeds the maximum rate. The average rounds up so
//!   RC reaches RT instead of approaching it forever.
//!
//! # Where the HPCC simulator differs (followed ConnectX here)
//!
//! * It has no byte counter: stages come from the timer alone, additive
//!   increase at exactly `rpg_threshold` timer events and hyper increase
//!   after, so a timer-only flow goes hyper. Here, as in QCN and ConnectX,
//!   hyper increase needs both counters past the threshold.
//! * It starts α at 1 on the first CNP and does not count that CNP in the
//!   first α update; here α starts at `initial_alpha_value` and every CNP
//!   counts for the period it arrives in.
//! * It checks for a cut on a fixed 4 µs grid started 4 µs after the first
//!   CNP; here a CNP cuts at once unless a cut happened less than
//!   `rate_reduce_monitor_period` ago, and then cuts when that period ends.
//! * Its EWMA gain is the weight of the new sample (default 1/16), the
//!   paper's g; ConnectX's `dce_tcp_g` is the weight of the old α.
//! * It has no `rpg_min_dec_fac`, takes the first-CNP rate as a fraction of
//!   the current rate, clamps RT only after a timer increase and never
//!   releases the rate limiter.
//!
//! All arithmetic is on integers (rates in bit/s as `u64`, products in
//! `u128`, saturating sums), so nothing here overflows or panics.

use std::fmt::Write as _;

use serde::Serialize;

use crate::Nanos;

/// Which sysfs directory a parameter lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// `/sys/class/net/IF/ecn/roce_np`: the notification point (receiver).
    RoceNp,
    /// `/sys/class/net/IF/ecn/roce_rp`: the reaction point (sender).
    RoceRp,
}

impl Section {
    /// The directory name, also the optional prefix in an override file.
    pub fn name(self) -> &'static str {
        match self {
            Section::RoceNp => "roce_np",
            Section::RoceRp => "roce_rp",
        }
    }
}

/// What one parameter is: its name, unit, legal range, default and meaning.
struct Spec {
    section: Section,
    name: &'static str,
    unit: &'static str,
    min: u32,
    max: u32,
    default: u32,
    meaning: &'static str,
}

// Sources of the defaults (ConnectX-4 and later, current firmware):
// [mlxconfig] `mlxconfig -d DEV query` dumps of ConnectX-5/6 cards (RPG_*,
//   DCE_*, CNP_*: 300, 32767, 1, 0, 5, 50, 11, 50, 1, 0, 1019, 1, 4, 1023,
//   4, 6, 48, CLAMP_TGT_RATE False, CLAMP_TGT_RATE_AFTER_TIME_INC True);
// [nvidia] NVIDIA's "DCQCN parameters" page (community DOC-2790, DOCA
//   "DCQCN CC Parameters"): units, ranges and the same defaults;
// [prm] the register description shipped with mstflint
//   (tools_open_roce_cc_ecn): field widths and units (older defaults).
// An older ConnectX-4 dump shows min_time_between_cnps 2; newer ones 4.
const SPECS: &[Spec] = &[
    Spec {
        section: Section::RoceNp,
        name: "min_time_between_cnps",
        unit: "µs",
        min: 0,
        max: 131_071,
        default: 4,
        meaning: "at most one CNP per queue pair in this time [mlxconfig]",
    },
    Spec {
        section: Section::RoceNp,
        name: "cnp_dscp",
        unit: "DSCP",
        min: 0,
        max: 63,
        default: 48,
        meaning: "DSCP of the CNPs sent [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceNp,
        name: "cnp_802p_prio",
        unit: "priority",
        min: 0,
        max: 7,
        default: 6,
        meaning: "802.1p priority of the CNPs sent [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceRp,
        name: "clamp_tgt_rate",
        unit: "0/1",
        min: 0,
        max: 1,
        default: 0,
        meaning: "on a cut, always set the target rate to the current rate [mlxconfig]",
    },
    Spec {
        section: Section::RoceRp,
        name: "clamp_tgt_rate_after_time_inc",
        unit: "0/1",
        min: 0,
        max: 1,
        default: 1,
        meaning: "on a cut, set the target rate to the current rate also when the timer \
                  (not only the byte counter) raised the rate since the last cut [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_time_reset",
        unit: "µs",
        min: 1,
        max: 131_071,
        default: 300,
        meaning: "period of the rate-increase timer [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_byte_reset",
        unit: "bytes",
        min: 0,
        max: 32_767,
        default: 32_767,
        meaning: "bytes sent per byte-counter rate-increase event; 0 = off [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_threshold",
        unit: "events",
        min: 1,
        max: 31,
        default: 1,
        meaning: "increase events of fast recovery before additive and hyper increase \
                  [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_max_rate",
        unit: "Mb/s",
        min: 0,
        max: 1_000_000,
        default: 0,
        meaning: "rate at which the limiter is released; 0 = line rate [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_ai_rate",
        unit: "Mb/s",
        min: 1,
        max: 1_000_000,
        default: 5,
        meaning: "target-rate step of additive increase [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_hai_rate",
        unit: "Mb/s",
        min: 1,
        max: 1_000_000,
        default: 50,
        meaning: "target-rate step of hyper increase, times the stage [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_gd",
        unit: "shift",
        min: 0,
        max: 15,
        default: 11,
        meaning: "a cut is RC·(1 − α/2^rpg_gd), α in 1/1024: 11 gives RC·(1 − α/2) \
                  [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_min_dec_fac",
        unit: "%",
        min: 0,
        max: 100,
        default: 50,
        meaning: "a cut keeps at least this share of the rate; 100 = never cut [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rpg_min_rate",
        unit: "Mb/s",
        min: 1,
        max: 1_000_000,
        default: 1,
        meaning: "the rate never falls below this [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rate_to_set_on_first_cnp",
        unit: "Mb/s",
        min: 0,
        max: 1_000_000,
        default: 0,
        meaning: "current and target rate set by a first CNP; 0 = cut as usual [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceRp,
        name: "dce_tcp_g",
        unit: "1/1024",
        min: 0,
        max: 1023,
        default: 1019,
        meaning: "α memory: each period α = α·G/1024, plus (1024 − G)/1024 if a CNP came \
                  [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceRp,
        name: "dce_tcp_rtt",
        unit: "µs",
        min: 1,
        max: 131_071,
        default: 1,
        meaning: "period of the α update [mlxconfig, nvidia]",
    },
    Spec {
        section: Section::RoceRp,
        name: "rate_reduce_monitor_period",
        unit: "µs",
        min: 0,
        max: 131_071,
        default: 4,
        meaning: "at most one cut per period; a CNP inside it cuts when it ends [mlxconfig, prm]",
    },
    Spec {
        section: Section::RoceRp,
        name: "initial_alpha_value",
        unit: "1/1024",
        min: 0,
        max: 1023,
        default: 1023,
        meaning: "α when a first CNP allocates the rate limiter [mlxconfig, nvidia]",
    },
];

/// DCQCN's parameters, named and scaled exactly as NVIDIA ConnectX exposes
/// them under `/sys/class/net/IF/ecn/roce_np` and `roce_rp` (and mlxconfig),
/// so a tuning that works on a NIC can be tried here unchanged.
///
/// `Default` gives the ConnectX defaults; every field keeps the sysfs unit
/// (µs, Mb/s, bytes, 1/1024) and the accessors convert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DcqcnParams {
    /// NP: minimum time between two CNPs for one queue pair, µs (default 4).
    pub min_time_between_cnps: u32,
    /// NP: DSCP of CNPs (default 48).
    pub cnp_dscp: u32,
    /// NP: 802.1p priority of CNPs (default 6).
    pub cnp_802p_prio: u32,
    /// RP: a cut always sets RT = RC, 0/1 (default 0).
    pub clamp_tgt_rate: u32,
    /// RP: a cut sets RT = RC also after a timer increase, 0/1 (default 1).
    pub clamp_tgt_rate_after_time_inc: u32,
    /// RP: rate-increase timer period, µs (default 300).
    pub rpg_time_reset: u32,
    /// RP: bytes per byte-counter increase event, 0 = off (default 32767).
    pub rpg_byte_reset: u32,
    /// RP: fast-recovery events before additive increase (default 1).
    pub rpg_threshold: u32,
    /// RP: rate releasing the limiter, Mb/s, 0 = line rate (default 0).
    pub rpg_max_rate: u32,
    /// RP: additive-increase step, Mb/s (default 5).
    pub rpg_ai_rate: u32,
    /// RP: hyper-increase step, Mb/s (default 50).
    pub rpg_hai_rate: u32,
    /// RP: cut shift, RC·(1 − α/2^rpg_gd) with α in 1/1024 (default 11).
    pub rpg_gd: u32,
    /// RP: smallest share of the rate a cut keeps, % (default 50).
    pub rpg_min_dec_fac: u32,
    /// RP: rate floor, Mb/s (default 1).
    pub rpg_min_rate: u32,
    /// RP: rate set by a first CNP, Mb/s, 0 = cut instead (default 0).
    pub rate_to_set_on_first_cnp: u32,
    /// RP: α memory G, α = α·G/1024 (+ (1024 − G) with a CNP) (default 1019).
    pub dce_tcp_g: u32,
    /// RP: α update period, µs (default 1).
    pub dce_tcp_rtt: u32,
    /// RP: minimum time between two cuts, µs (default 4).
    pub rate_reduce_monitor_period: u32,
    /// RP: α of a new rate limiter, 1/1024 (default 1023).
    pub initial_alpha_value: u32,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        let mut p = DcqcnParams {
            min_time_between_cnps: 0,
            cnp_dscp: 0,
            cnp_802p_prio: 0,
            clamp_tgt_rate: 0,
            clamp_tgt_rate_after_time_inc: 0,
            rpg_time_reset: 0,
            rpg_byte_reset: 0,
            rpg_threshold: 0,
            rpg_max_rate: 0,
            rpg_ai_rate: 0,
            rpg_hai_rate: 0,
            rpg_gd: 0,
            rpg_min_dec_fac: 0,
            rpg_min_rate: 0,
            rate_to_set_on_first_cnp: 0,
            dce_tcp_g: 0,
            dce_tcp_rtt: 0,
            rate_reduce_monitor_period: 0,
            initial_alpha_value: 0,
        };
        for s in SPECS {
            if let Some(v) = p.field_mut(s.name) {
                *v = s.default;
            }
        }
        p
    }
}

/// One parameter as listed by [`DcqcnParams::entries`], for `--help`, the
/// docs and a `--json` dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParamEntry {
    /// `roce_np` or `roce_rp`.
    pub section: Section,
    /// The sysfs file name.
    pub name: &'static str,
    /// The value in force.
    pub value: u32,
    /// The ConnectX default.
    pub default: u32,
    /// Unit of `value` (µs, Mb/s, bytes, 1/1024, ...).
    pub unit: &'static str,
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// What it does, with the sources of the default in brackets.
    pub meaning: &'static str,
}

impl DcqcnParams {
    /// Read an override file: one `name value` per line, names as the sysfs
    /// files (optionally prefixed `roce_np.` / `roce_rp.`), `#` comments and
    /// blank lines; every parameter not named keeps its ConnectX default.
    ///
    /// # Errors
    ///
    /// Every problem in the file, one diagnostic after another, each as
    /// `origin:line:col: error: message`, the line, a caret under the token
    /// at fault and a hint (the closest known name, or the unit and range).
    pub fn parse(text: &str, origin: &str) -> Result<DcqcnParams, String> {
        let mut params = DcqcnParams::default();
        let mut seen: Vec<(&'static str, usize)> = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let code = raw.split('#').next().unwrap_or("");
            let tokens = tokens(code);
            let Some(&(name_col, name_tok)) = tokens.first() else {
                continue;
            };
            let diag = |col: usize, message: String, hint: String| {
                render(origin, line_no, col, raw, &message, &hint)
            };
            let (prefix, bare) = match name_tok.split_once('.') {
                Some((p, b)) => (Some(p), b),
                None => (None, name_tok),
            };
            let Some(spec) = SPECS.iter().find(|s| s.name == bare) else {
                let hint = match closest(bare) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None => "names are the files of /sys/class/net/IF/ecn/roce_np and roce_rp, \
                             e.g. `rpg_time_reset`; `railyard sim --help` lists them"
                        .to_owned(),
                };
                errors.push(diag(
                    name_col,
                    format!("unknown DCQCN parameter `{bare}`"),
                    hint,
                ));
                continue;
            };
            if let Some(p) = prefix {
                if p != spec.section.name() {
                    errors.push(diag(
                        name_col,
                        format!("`{}` is not in `{p}`", spec.name),
                        format!("write `{}.{}`", spec.section.name(), spec.name),
                    ));
                    continue;
                }
            }
            let Some(&(value_col, value_tok)) = tokens.get(1) else {
                let end = raw.chars().count() + 1;
                errors.push(diag(
                    end,
                    format!("`{}` needs a value", spec.name),
                    range_hint(spec),
                ));
                continue;
            };
            if let Some(&(extra_col, _)) = tokens.get(2) {
                errors.push(diag(
                    extra_col,
                    "unexpected text after the value".to_owned(),
                    "one `name value` per line; comments start with `#`".to_owned(),
                ));
                continue;
            }
            let value = match value_tok.parse::<u32>() {
                Ok(v) if (spec.min..=spec.max).contains(&v) => v,
                Ok(_) | Err(_) => {
                    errors.push(diag(
                        value_col,
                        format!("invalid value `{value_tok}` for `{}`", spec.name),
                        range_hint(spec),
                    ));
                    continue;
                }
            };
            if let Some(&(_, first)) = seen.iter().find(|(n, _)| *n == spec.name) {
                errors.push(diag(
                    name_col,
                    format!("`{}` is set twice", spec.name),
                    format!("first set on line {first}; keep one"),
                ));
                continue;
            }
            seen.push((spec.name, line_no));
            if let Some(v) = params.field_mut(spec.name) {
                *v = value;
            }
        }
        if errors.is_empty() {
            Ok(params)
        } else {
            Err(errors.join("\n"))
        }
    }

    /// Every parameter with its value, default, unit, range and meaning, in
    /// sysfs order (`roce_np` first), for `--help`, the docs and `--json`.
    pub fn entries(&self) -> Vec<ParamEntry> {
        SPECS
            .iter()
            .map(|s| ParamEntry {
                section: s.section,
                name: s.name,
                value: self.get(s.name).unwrap_or(s.default),
                default: s.default,
                unit: s.unit,
                min: s.min,
                max: s.max,
                meaning: s.meaning,
            })
            .collect()
    }

    /// These parameters as an override file [`DcqcnParams::parse`] reads back
    /// unchanged: every parameter, prefixed by its section, with its unit and
    /// meaning as a comment (a template to edit).
    pub fn to_override_file(&self) -> String {
        let mut out = String::from("# DCQCN parameters (ConnectX names and units)\n");
        for e in self.entries() {
            let _ = writeln!(
                out,
                "{}.{} {}  # {}, default {}: {}",
                e.section.name(),
                e.name,
                e.value,
                e.unit,
                e.default,
                e.meaning
            );
        }
        out
    }

    /// The value of the parameter named as in sysfs, if there is one.
    pub fn get(&self, name: &str) -> Option<u32> {
        let mut copy = self.clone();
        copy.field_mut(name).map(|v| *v)
    }

    /// Set the parameter named as in sysfs (e.g. from a command-line flag).
    ///
    /// # Errors
    ///
    /// An unknown name (with the closest known one) or a value out of range
    /// (with the unit and range).
    pub fn set(&mut self, name: &str, value: u32) -> Result<(), String> {
        let Some(spec) = SPECS.iter().find(|s| s.name == name) else {
            return Err(match closest(name) {
                Some(c) => format!("unknown DCQCN parameter `{name}`; did you mean `{c}`?"),
                None => format!("unknown DCQCN parameter `{name}`"),
            });
        };
        if !(spec.min..=spec.max).contains(&value) {
            return Err(format!(
                "invalid value {value} for `{name}`: {}",
                range_hint(spec)
            ));
        }
        if let Some(v) = self.field_mut(name) {
            *v = value;
        }
        Ok(())
    }

    /// DSCP the NIC writes into CNPs (the switch's CNP class matches it).
    pub fn cnp_dscp(&self) -> u8 {
        u8::try_from(self.cnp_dscp.min(63)).unwrap_or(48)
    }

    /// 802.1p priority of CNPs (PFC class and VLAN PCP when tagged).
    pub fn cnp_priority(&self) -> u8 {
        u8::try_from(self.cnp_802p_prio.min(7)).unwrap_or(6)
    }

    /// The notification point's CNP spacing per queue pair, in ns.
    pub fn min_time_between_cnps_ns(&self) -> Nanos {
        us(self.min_time_between_cnps)
    }

    fn field_mut(&mut self, name: &str) -> Option<&mut u32> {
        Some(match name {
            "min_time_between_cnps" => &mut self.min_time_between_cnps,
            "cnp_dscp" => &mut self.cnp_dscp,
            "cnp_802p_prio" => &mut self.cnp_802p_prio,
            "clamp_tgt_rate" => &mut self.clamp_tgt_rate,
            "clamp_tgt_rate_after_time_inc" => &mut self.clamp_tgt_rate_after_time_inc,
            "rpg_time_reset" => &mut self.rpg_time_reset,
            "rpg_byte_reset" => &mut self.rpg_byte_reset,
            "rpg_threshold" => &mut self.rpg_threshold,
            "rpg_max_rate" => &mut self.rpg_max_rate,
            "rpg_ai_rate" => &mut self.rpg_ai_rate,
            "rpg_hai_rate" => &mut self.rpg_hai_rate,
            "rpg_gd" => &mut self.rpg_gd,
            "rpg_min_dec_fac" => &mut self.rpg_min_dec_fac,
            "rpg_min_rate" => &mut self.rpg_min_rate,
            "rate_to_set_on_first_cnp" => &mut self.rate_to_set_on_first_cnp,
            "dce_tcp_g" => &mut self.dce_tcp_g,
            "dce_tcp_rtt" => &mut self.dce_tcp_rtt,
            "rate_reduce_monitor_period" => &mut self.rate_reduce_monitor_period,
            "initial_alpha_value" => &mut self.initial_alpha_value,
            _ => return None,
        })
    }
}

/// Microseconds (sysfs unit) to nanoseconds.
fn us(v: u32) -> Nanos {
    u64::from(v) * 1_000
}

/// Megabits per second (sysfs unit) to bits per second.
fn mbps(v: u32) -> u64 {
    u64::from(v) * 1_000_000
}

/// Whitespace-separated tokens with their 1-based character columns.
fn tokens(code: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte, col)
    for (col0, (byte, c)) in code.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((byte, col0 + 1)),
            (true, Some((b, col))) => {
                out.push((col, &code[b..byte]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((b, col)) = start {
        out.push((col, &code[b..]));
    }
    out
}

fn range_hint(spec: &Spec) -> String {
    format!(
        "`{}` is in {} ({}), {}–{}; the ConnectX default is {}",
        spec.name,
        spec.unit,
        spec.meaning.split(" [").next().unwrap_or(spec.meaning),
        spec.min,
        spec.max,
        spec.default
    )
}

/// A diagnostic in the compiler-like form the configuration parser uses.
fn render(origin: &str, line: usize, col: usize, source: &str, msg: &str, hint: &str) -> String {
    let number = line.to_string();
    let gutter = " ".repeat(3 + number.len());
    let lead: String = source
        .chars()
        .take(col.saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let pad = " ".repeat(col.saturating_sub(1).saturating_sub(lead.chars().count()));
    let width = source
        .chars()
        .skip(col.saturating_sub(1))
        .take_while(|c| !c.is_whitespace() && *c != '#')
        .count()
        .max(1);
    format!(
        "{origin}:{line}:{col}: error: {msg}\n   {number} | {source}\n{gutter} | {lead}{pad}{}\n   = hint: {hint}",
        "^".repeat(width)
    )
}

/// The known name closest in spelling to `word`, if close enough to suggest.
fn closest(word: &str) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &'static str)> = None;
    for s in SPECS {
        let d = edit_distance(&lower, s.name);
        let close = d <= 3.max(s.name.len() / 4);
        if close && !matches!(best, Some((bd, _)) if bd <= d) {
            best = Some((d, s.name));
        }
    }
    best.map(|(_, n)| n)
}

/// Edit distance between two short strings, a swap of neighbours counting
/// as one edit (optimal string alignment), so `rpg_hia_rate` suggests
/// `rpg_hai_rate`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j - 1] + cost)
                .min(d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The notification point of one queue pair: decides which CE-marked
/// packets are answered with a CNP.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotificationPoint {
    last_cnp: Option<Nanos>,
    stats: NpStats,
}

/// What a notification point saw and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NpStats {
    /// CE-marked packets seen.
    pub ce_seen: u64,
    /// CNPs decided (one per `min_time_between_cnps` at most).
    pub cnps: u64,
    /// CE marks not answered because a CNP went out less than
    /// `min_time_between_cnps` before.
    pub ce_coalesced: u64,
}

impl NotificationPoint {
    /// A queue pair that has sent no CNP yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A CE-marked packet arrived at `now`: whether to send a CNP for this
    /// queue pair now (at most one per `min_time_between_cnps`; ConnectX
    /// documents the spacing per port in older firmware, the model keeps it
    /// per queue pair as DCQCN's NP does).
    pub fn on_ce(&mut self, now: Nanos, p: &DcqcnParams) -> bool {
        self.stats.ce_seen = self.stats.ce_seen.saturating_add(1);
        let gap = p.min_time_between_cnps_ns();
        let send = match self.last_cnp {
            None => true,
            // A clock that went backwards counts as inside the gap.
            Some(last) => now >= last.saturating_add(gap),
        };
        if send {
            self.last_cnp = Some(now);
            self.stats.cnps = self.stats.cnps.saturating_add(1);
        } else {
            self.stats.ce_coalesced = self.stats.ce_coalesced.saturating_add(1);
        }
        send
    }

    /// What this notification point saw and did.
    pub fn stats(&self) -> NpStats {
        self.stats
    }
}

/// What a reaction point did, for the fabric summary and `--json`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RpStats {
    /// CNPs received.
    pub cnps: u64,
    /// Rate reductions (cuts, and rates set by a first CNP).
    pub cuts: u64,
    /// CNPs that arrived inside `rate_reduce_monitor_period` and were folded
    /// into one cut at its end.
    pub cnps_deferred: u64,
    /// Rate limiters allocated (first CNPs).
    pub limiters_allocated: u64,
    /// Rate limiters released on reaching the maximum rate.
    pub limiters_released: u64,
    /// Cuts that stopped at `rpg_min_rate`.
    pub min_rate_floor_hits: u64,
    /// Cuts that stopped at `rpg_min_dec_fac`.
    pub min_dec_fac_hits: u64,
    /// Lowest rate reached, bit/s (the line rate if never cut).
    pub min_rate_bps: u64,
    /// Increase events from the timer (`rpg_time_reset`).
    pub timer_events: u64,
    /// Increase events from the byte counter (`rpg_byte_reset`).
    pub byte_events: u64,
    /// Increase events in fast recovery.
    pub fast_recovery: u64,
    /// Increase events in additive increase.
    pub additive_increase: u64,
    /// Increase events in hyper increase.
    pub hyper_increase: u64,
}

/// Which counter raised an increase event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Timer,
    Bytes,
}

/// The fastest line rate a reaction point models (10 Tb/s).
pub const MAX_LINE_BPS: u64 = 10_000_000_000_000;

/// The reaction point of one queue pair: the rate it may send at, cut by
/// CNPs and raised again by its timer and byte counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactionPoint {
    // Parameters in the units used here.
    max_bps: u64,
    min_bps: u64,
    ai_bps: u64,
    hai_bps: u64,
    first_cnp_bps: u64,
    time_reset_ns: Nanos,
    byte_reset: u64,
    threshold: u32,
    gd: u32,
    min_dec_fac: u64,
    g: u64,
    alpha_period_ns: Nanos,
    monitor_ns: Nanos,
    initial_alpha: u32,
    clamp: bool,
    clamp_after_time_inc: bool,
    // State.
    rc: u64,
    rt: u64,
    alpha: u32,
    limited: bool,
    cnp_in_alpha_period: bool,
    next_alpha: Option<Nanos>,
    last_cut: Option<Nanos>,
    pending_cut: Option<Nanos>,
    next_increase: Option<Nanos>,
    time_stage: u32,
    byte_stage: u32,
    bytes: u64,
    timer_inc_since_cut: bool,
    byte_inc_since_cut: bool,
    stats: RpStats,
}

impl ReactionPoint {
    /// A queue pair sending at `line_rate_bps` with no rate limiter yet.
    ///
    /// The line rate is taken between 1 bit/s and 10 Tb/s, which bounds the
    /// number of increase events between a cut and the release of the
    /// limiter (and so the work of one [`ReactionPoint::on_time`]).
    pub fn new(p: &DcqcnParams, line_rate_bps: u64) -> Self {
        let line = line_rate_bps.clamp(1, MAX_LINE_BPS);
        let max_bps = match p.rpg_max_rate {
            0 => line,
            m => mbps(m).min(line),
        };
        ReactionPoint {
            max_bps,
            min_bps: mbps(p.rpg_min_rate).min(max_bps),
            ai_bps: mbps(p.rpg_ai_rate),
            hai_bps: mbps(p.rpg_hai_rate),
            first_cnp_bps: mbps(p.rate_to_set_on_first_cnp),
            time_reset_ns: us(p.rpg_time_reset.max(1)),
            byte_reset: u64::from(p.rpg_byte_reset),
            threshold: p.rpg_threshold,
            gd: p.rpg_gd.min(63),
            min_dec_fac: u64::from(p.rpg_min_dec_fac.min(100)),
            g: u64::from(p.dce_tcp_g.min(1024)),
            alpha_period_ns: us(p.dce_tcp_rtt.max(1)),
            monitor_ns: us(p.rate_reduce_monitor_period),
            initial_alpha: p.initial_alpha_value.min(1023),
            clamp: p.clamp_tgt_rate != 0,
            clamp_after_time_inc: p.clamp_tgt_rate_after_time_inc != 0,
            rc: max_bps,
            rt: max_bps,
            alpha: 0,
            limited: false,
            cnp_in_alpha_period: false,
            next_alpha: None,
            last_cut: None,
            pending_cut: None,
            next_increase: None,
            time_stage: 0,
            byte_stage: 0,
            bytes: 0,
            timer_inc_since_cut: false,
            byte_inc_since_cut: false,
            stats: RpStats {
                min_rate_bps: max_bps,
                ..RpStats::default()
            },
        }
    }

    /// The rate this queue pair may send at now (RC), bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rc
    }

    /// The target rate (RT) increases climb back towards, bit/s.
    pub fn target_rate_bps(&self) -> u64 {
        self.rt
    }

    /// α, the congestion estimate, in 1/1024 (0 without a rate limiter).
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// Whether a rate limiter is allocated (a CNP came since the rate last
    /// stood at the maximum).
    pub fn is_limited(&self) -> bool {
        self.limited
    }

    /// A CNP for this queue pair arrived at `now`: cut the rate now, or at
    /// the end of the current `rate_reduce_monitor_period`.
    pub fn on_cnp(&mut self, now: Nanos) {
        self.on_time(now);
        self.stats.cnps = self.stats.cnps.saturating_add(1);
        self.cnp_in_alpha_period = true;
        if self.next_alpha.is_none() {
            self.next_alpha = Some(now.saturating_add(self.alpha_period_ns));
        }
        if !self.limited {
            self.limited = true;
            self.stats.limiters_allocated = self.stats.limiters_allocated.saturating_add(1);
            self.alpha = self.initial_alpha;
            self.rt = self.max_bps;
            self.rc = self.max_bps;
            if self.first_cnp_bps > 0 {
                let r = self.first_cnp_bps.clamp(self.min_bps, self.max_bps);
                self.rc = r;
                self.rt = r;
                self.stats.cuts = self.stats.cuts.saturating_add(1);
                self.after_cut(now);
                return;
            }
            self.cut(now);
            return;
        }
        match self.last_cut {
            Some(last) if now < last.saturating_add(self.monitor_ns) => {
                self.stats.cnps_deferred = self.stats.cnps_deferred.saturating_add(1);
                if self.pending_cut.is_none() {
                    self.pending_cut = Some(last.saturating_add(self.monitor_ns));
                }
            }
            _ => self.cut(now),
        }
    }

    /// `bytes` of this queue pair went out at `now`: feed the byte counter.
    pub fn on_sent(&mut self, now: Nanos, bytes: u64) {
        self.on_time(now);
        if !self.limited || self.byte_reset == 0 {
            return;
        }
        self.bytes = self.bytes.saturating_add(bytes);
        // Bounded: a huge `bytes` cannot spin; the rest of the count is lost.
        let mut budget = 4096u32;
        while self.limited && self.bytes >= self.byte_reset && budget > 0 {
            self.bytes -= self.byte_reset;
            budget -= 1;
            self.increase(Source::Bytes);
        }
        if budget == 0 {
            self.bytes %= self.byte_reset;
        }
    }

    /// Run, in time order, every timer due by `now`: α updates, a deferred
    /// cut, rate-increase timer events.
    pub fn on_time(&mut self, now: Nanos) {
        while let Some(t) = self.next_timer() {
            if t > now {
                break;
            }
            // At equal times: α first (a cut uses the α of its instant, as
            // a CNP arriving then would), then a deferred cut (which pushes
            // the increase timer on), then the increase timer.
            if self.next_alpha == Some(t) {
                self.update_alpha(t);
            } else if self.pending_cut == Some(t) {
                self.pending_cut = None;
                self.cut(t);
            } else if self.next_increase == Some(t) {
                self.next_increase = Some(t.saturating_add(self.time_reset_ns));
                self.increase(Source::Timer);
            } else {
                break; // unreachable: `t` is one of the three
            }
        }
    }

    /// When [`ReactionPoint::on_time`] next has work; `None` at line rate
    /// with nothing to do.
    pub fn next_timer(&self) -> Option<Nanos> {
        [self.pending_cut, self.next_alpha, self.next_increase]
            .into_iter()
            .flatten()
            .min()
    }

    /// What this reaction point did.
    pub fn stats(&self) -> RpStats {
        self.stats
    }

    fn update_alpha(&mut self, t: Nanos) {
        let a = u64::from(self.alpha) * self.g / 1024;
        let a = if self.cnp_in_alpha_period {
            a + (1024 - self.g)
        } else {
            a
        };
        self.alpha = u32::try_from(a.min(1023)).unwrap_or(1023);
        self.cnp_in_alpha_period = false;
        self.next_alpha = if self.alpha == 0 || !self.limited {
            // Nothing left to decay: sleep until the next CNP restarts it.
            None
        } else {
            Some(t.saturating_add(self.alpha_period_ns))
        };
    }

    fn cut(&mut self, now: Nanos) {
        if !self.limited {
            return;
        }
        let clamp = self.clamp
            || self.byte_inc_since_cut
            || (self.clamp_after_time_inc && self.timer_inc_since_cut);
        if clamp {
            self.rt = self.rc;
        }
        let rc = u128::from(self.rc);
        let dec = (rc * u128::from(self.alpha)) >> self.gd;
        let cut = u64::try_from(rc.saturating_sub(dec)).unwrap_or(0);
        let keep = u64::try_from(rc * u128::from(self.min_dec_fac) / 100).unwrap_or(self.rc);
        let mut new = cut;
        if keep > new {
            new = keep;
            self.stats.min_dec_fac_hits = self.stats.min_dec_fac_hits.saturating_add(1);
        }
        if self.min_bps >= new {
            new = self.min_bps;
            self.stats.min_rate_floor_hits = self.stats.min_rate_floor_hits.saturating_add(1);
        }
        self.rc = new.min(self.rc.max(self.min_bps));
        self.stats.cuts = self.stats.cuts.saturating_add(1);
        self.after_cut(now);
    }

    fn after_cut(&mut self, now: Nanos) {
        self.stats.min_rate_bps = self.stats.min_rate_bps.min(self.rc);
        self.last_cut = Some(now);
        self.pending_cut = None;
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.timer_inc_since_cut = false;
        self.byte_inc_since_cut = false;
        self.next_increase = Some(now.saturating_add(self.time_reset_ns));
    }

    fn increase(&mut self, source: Source) {
        if !self.limited {
            return;
        }
        match source {
            Source::Timer => {
                self.time_stage = self.time_stage.saturating_add(1);
                self.timer_inc_since_cut = true;
                self.stats.timer_events = self.stats.timer_events.saturating_add(1);
            }
            Source::Bytes => {
                self.byte_stage = self.byte_stage.saturating_add(1);
                self.byte_inc_since_cut = true;
                self.stats.byte_events = self.stats.byte_events.saturating_add(1);
            }
        }
        let hi = self.time_stage.max(self.byte_stage);
        let lo = self.time_stage.min(self.byte_stage);
        if hi <= self.threshold {
            self.stats.fast_recovery = self.stats.fast_recovery.saturating_add(1);
        } else if lo > self.threshold {
            let i = u64::from(lo - self.threshold);
            self.rt = self.rt.saturating_add(i.saturating_mul(self.hai_bps));
            self.stats.hyper_increase = self.stats.hyper_increase.saturating_add(1);
        } else {
            self.rt = self.rt.saturating_add(self.ai_bps);
            self.stats.additive_increase = self.stats.additive_increase.saturating_add(1);
        }
        self.rt = self.rt.min(self.max_bps);
        // (RT + RC)/2 rounded up, without overflow.
        self.rc = self.rc / 2 + self.rt / 2 + (self.rc % 2 + self.rt % 2).div_ceil(2);
        self.rc = self.rc.min(self.max_bps);
        if self.rc >= self.max_bps {
            self.release();
        }
    }

    fn release(&mut self) {
        self.limited = false;
        self.stats.limiters_released = self.stats.limiters_released.saturating_add(1);
        self.rc = self.max_bps;
        self.rt = self.max_bps;
        self.alpha = 0;
        self.cnp_in_alpha_period = false;
        self.next_alpha = None;
        self.pending_cut = None;
        self.next_increase = None;
        self.last_cut = None;
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
    }
}
