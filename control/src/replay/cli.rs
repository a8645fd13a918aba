//! `railyard replay`: its options and what it prints, beside the replay
//! itself ([`super`]), as `lab` and `sim` keep theirs.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::OutFormat;

/// What a damaged or truncated record in a trace does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Truncated {
    /// The replay fails, naming the file, the record and its byte offset.
    Error,
    /// The trace ends there; the record is counted as a `capture_damaged` drop.
    Ok,
}

/// `railyard replay`'s options.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// NX-OS style configuration file.
    #[arg(long, short)]
    pub config: PathBuf,
    /// `INTERFACE=FILE`: a trace received on an interface (repeatable);
    /// pcap or pcapng. `FILE@N` or `FILE@NAME` picks one interface of a
    /// pcapng capture of several (by Wireshark's number or `if_name`).
    #[arg(long = "pcap", value_name = "INTERFACE=FILE[@N]")]
    pub pcaps: Vec<String>,
    /// Directory for the output: one pcap per transmitting interface,
    /// or with `--out-format pcapng` one `railyard.pcapng`.
    #[arg(long)]
    pub out: PathBuf,
    /// `pcap`: one classic pcap per transmitting interface. `pcapng`:
    /// one file, an interface per configured port named as railyard
    /// names it (what Wireshark's own tools write).
    #[arg(long, value_enum, default_value = "pcap")]
    pub out_format: OutFormat,
    /// Write the frames the switch dropped into the pcapng too, each on
    /// the port that dropped it (inbound, or outbound for a queue's drop)
    /// with the comment `dropped: REASON` (Wireshark: `frame.comment
    /// contains "wred"`). Needs `--out-format pcapng`.
    #[arg(long)]
    pub capture_drops: bool,
    /// Write every counter as JSON to this file.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Treat unsupported configuration sections as errors.
    #[arg(long)]
    pub strict: bool,
    /// Replay the traces unchanged instead of holding back priorities the switch pauses.
    #[arg(long)]
    pub open_loop: bool,
    /// Poll like a live worker, at least this far apart in virtual time
    /// (e.g. `1us`): frames arriving in between are received as one
    /// burst. Faster on dense traces; a frame may leave up to about one
    /// interval later. 0 (the default) polls at every event's exact time.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = super::parse_poll_interval)]
    pub poll_interval: railyard_dataplane::clock::Nanos,
    /// A damaged or truncated record in a trace: `error` fails the
    /// replay; `ok` ends that trace there and counts it as a drop.
    #[arg(long, value_enum, default_value = "error")]
    pub truncated: Truncated,
    /// Write SVG pictures to this directory: per queue that held a
    /// packet its depth over time (WRED and PFC thresholds, ECN marks
    /// and PFC frames) and sojourn CDF; per ECMP/DLB group, each
    /// member's load.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Virtual time between two samples for --plot (e.g. `1us`); it
    /// doubles as often as needed to keep at most 4096 points.
    #[arg(long, value_name = "DURATION", default_value = "10us", value_parser = crate::replay_plot::parse_plot_every)]
    pub plot_every: railyard_dataplane::clock::Nanos,
}

/// Runs `railyard replay` and prints its summary to `out`.
///
/// # Errors
/// A configuration, trace, output or plot problem, with a hint where one
/// helps.
pub fn dispatch(args: ReplayArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let ReplayArgs {
        config,
        pcaps,
        out: dir,
        out_format,
        capture_drops,
        stats_json,
        strict,
        open_loop,
        poll_interval,
        truncated,
        plot,
        plot_every,
    } = args;
    if capture_drops && out_format != OutFormat::Pcapng {
        return Err("--capture-drops writes into a pcapng: add --out-format pcapng".into());
    }
    if let Some(d) = &plot {
        crate::replay_plot::prepare_dir(d)?;
    }
    let loaded = crate::load_config(&config, strict)?;
    for w in &loaded.warnings {
        eprintln!("{w}");
    }
    let compiled = loaded.compiled;
    let mut inputs = Vec::new();
    for spec in &pcaps {
        let (ifname, file) = spec.split_once('=').ok_or_else(|| {
            format!("--pcap {spec:?}: expected INTERFACE=FILE, e.g. Ethernet1/1=in.pcap")
        })?;
        let canonical = ifname
            .parse::<railyard_config::InterfaceName>()
            .map_err(|e| format!("--pcap {spec:?}: {e}"))?
            .to_string();
        let idx = compiled
            .model
            .interfaces
            .iter()
            .position(|i| i.name == canonical)
            .ok_or_else(|| {
                format!(
                    "--pcap {spec:?}: {canonical} is not configured in {}",
                    config.display()
                )
            })?;
        inputs.push(
            super::Trace::parse_file(idx, file).map_err(|e| format!("--pcap {spec:?}: {e}"))?,
        );
    }
    for (i, bind) in compiled.binds.iter().enumerate() {
        if let Some(railyard_config::Bind::Pcap(p)) = bind {
            if !inputs.iter().any(|t| t.port == i) {
                let text = p.to_string_lossy();
                inputs.push(
                    super::Trace::parse_file(i, &text)
                        .map_err(|e| format!("bind pcap {text}: {e}"))?,
                );
            }
        }
    }
    if inputs.is_empty() {
        return Err("nothing to replay: give --pcap INTERFACE=FILE (or `bind pcap FILE` under an interface)".into());
    }
    let options = super::ReplayOptions {
        open_loop,
        poll_interval,
        stop_at_damage: truncated == Truncated::Ok,
        lldp: Some(crate::lldp::agent_config(&loaded.config, &compiled.model)),
        out_format: match out_format {
            OutFormat::Pcap => super::OutFormat::Pcap,
            OutFormat::Pcapng => super::OutFormat::Pcapng,
        },
        plot_every: plot.is_some().then_some(plot_every),
        capture_drops,
    };
    let report = super::replay_traces(&compiled.model, &inputs, &dir, &options, |rx, t| {
        eprintln!("  … {rx} frames, {:.3} ms virtual", t as f64 / 1e6);
    })
    .map_err(|e| {
        let e = e.to_string();
        let hint = if e.contains("several interfaces") {
            " (e.g. --pcap Ethernet1/1=FILE@0)"
        } else if e.contains("was not replayed") {
            " (--truncated ok replays up to the damage and counts it as a drop)"
        } else {
            ""
        };
        format!("replay: {e}{hint}")
    })?;
    for w in &report.warnings {
        eprintln!("warning: route {}: {}", w.route, w.message);
    }
    if let Some(path) = &stats_json {
        let summary = super::Summary::of(&report.stats, report.virtual_ns);
        let running_config = loaded.config.to_string();
        let json = serde_json::to_string_pretty(&super::SnapshotJson {
            stats: crate::show::StatsJson(&report.stats),
            summary: Some(&summary),
            narrative: None,
            running_config: Some(&running_config),
            lldp: report.lldp.as_ref(),
        })
        .map_err(|e| e.to_string())?;
        std::fs::write(path, json).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    super::print_summary(out, &report).map_err(io)?;
    match out_format {
        OutFormat::Pcap => writeln!(out, "\noutput pcaps in {}", dir.display()),
        OutFormat::Pcapng => writeln!(
            out,
            "\noutput pcapng: {}",
            dir.join(super::PCAPNG_FILE).display()
        ),
    }
    .map_err(io)?;
    if let Some(c) = &report.drop_capture {
        write!(out, "dropped frames in the pcapng: {}", c.written).map_err(io)?;
        if c.overflow > 0 {
            write!(
                out,
                " ({} more found the capture ring full and are only counted)",
                c.overflow
            )
            .map_err(io)?;
        }
        writeln!(out, " (Wireshark: frame.comment contains \"dropped\")").map_err(io)?;
    }
    if let (Some(d), Some(data)) = (&plot, &report.plot) {
        let files = crate::replay_plot::write_all(d, data)?;
        crate::replay_plot::print_written(out, d, data, files.len()).map_err(io)?;
    }
    match &stats_json {
        Some(path) => writeln!(
            out,
            "counters in {0}: read them with `railyard show … --stats {0}`",
            path.display()
        ),
        None => writeln!(
            out,
            "(add --stats-json FILE to keep the counters for `railyard show … --stats FILE`)"
        ),
    }
    .map_err(io)
}
