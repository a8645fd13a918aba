//! The `railyard lab` subcommands (the `railyard` binary forwards to
//! [`dispatch`]).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;

use super::report::{cabling, render_cabling, render_status, status, wait_ready};
use super::run::{
    default_state_root, down, down_target, final_dir, labs_of, list, load_state, up, DownTarget,
    UpOptions,
};
use super::{render, topology};

/// `railyard lab …`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "\
TOPOLOGY is a topology file, or the name of one in ./scripts/topologies \
(`rail-spine` → scripts/topologies/rail-spine.topo; $RAILYARD_TOPOLOGIES \
overrides the directory). Its format is described in scripts/topologies/README.md.

Every lab has a state directory, $RAILYARD_LAB_DIR/NAME (default \
/run/railyard-lab/NAME), holding state.json, the generated switch \
configurations, their logs (SWITCH.log), management sockets \
(SWITCH.sock) and SWITCH.out, where a switch prints its final counters when \
it stops: `down` keeps SWITCH.out, SWITCH.log and SWITCH.conf in \
/run/railyard-lab/NAME.final/. The sockets serve `railyard show … --socket \
/run/railyard-lab/NAME/rail1.sock`. Namespaces are NAME-NODE: `ip netns exec NAME-h1 ping …`.

Needs root, iproute2 and ethtool.")]
pub struct LabArgs {
    /// State directory root (default $RAILYARD_LAB_DIR, else /run/railyard-lab).
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: LabCommand,
}

/// The lab subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum LabCommand {
    /// Build a lab from a topology: a namespace per switch and host, a veth
    /// pair per link, one `railyard run` per switch; prints the lab's name,
    /// then waits until links are up and LLDP sees every switch–switch
    /// cable (`--wait`).
    Up {
        /// Topology file or name.
        topology: String,
        /// Lab name (namespace prefix); default TOPOLOGY-XXXX, random.
        #[arg(long)]
        name: Option<String>,
        /// Seconds to wait for each switch to answer on its socket.
        #[arg(long, default_value_t = 20)]
        timeout: u64,
        /// Seconds to wait, once the switches answer, until every switch
        /// port is up and every switch–switch cable is seen by LLDP on both
        /// ends (what `cabling` checks); 0 returns at once. On timeout the
        /// lab stays up, what is missing is listed and the exit status is 1.
        #[arg(long, default_value_t = 30, value_name = "S")]
        wait: u64,
    },
    /// Remove a lab: stop its switches by PID (SIGTERM, then SIGKILL after
    /// 5 s), keep their final counters, logs and configurations in
    /// STATE_DIR/NAME.final/, delete its namespaces and state directory. Removing a lab that
    /// is already gone succeeds. A topology name (or file) instead of a lab
    /// name removes that topology's only lab; with several it names them
    /// and fails.
    Down {
        /// Lab name, or a topology with exactly one lab.
        #[arg(required_unless_present = "all_of", conflicts_with = "all_of")]
        name: Option<String>,
        /// Remove every lab built from this topology (name or file).
        #[arg(long, value_name = "TOPOLOGY")]
        all_of: Option<String>,
    },
    /// Every switch's interfaces (link, address, speed, packets, cable) and
    /// LLDP neighbours, and the hosts' addresses.
    Status {
        /// Lab name.
        name: String,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check the cabling: each switch port's LLDP neighbour against the
    /// topology. Prints a table (mismatches red on a terminal, marked `!!`
    /// otherwise); exits 1 if a switch-switch port is MISSING or MISMATCHed.
    /// Host ports are listed as `host`: hosts run no LLDP.
    Cabling {
        /// Lab name.
        name: String,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check that every switch's counters add up: each egress queue's
    /// offered packets were sent, dropped with a reason or are still queued,
    /// and each switch-switch cable delivered at one end what the other end
    /// sent (true once traffic has stopped). Prints the imbalances and a
    /// summary line; exits 1 if there are any.
    Conservation {
        /// Lab name.
        name: String,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the switch configurations a topology generates (SWITCH.conf)
    /// without starting anything; checks that each parses and compiles.
    Render {
        /// Topology file or name.
        topology: String,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the topology for containerlab (`--format containerlab`):
    /// DIR/TOPOLOGY.clab.yml, with every switch a `kind: linux` node of the
    /// railyard image (its configuration, rendered as `render` does with
    /// its ports bound to the container's `eth1`, `eth2`, …, mounted in)
    /// and every host a node of the host image whose `exec` list sets the
    /// addresses and routes `up` would; and DIR/SWITCH.conf. A `routing
    /// bgp` topology's switches use the FRR image instead. See
    /// docs/src/labs-beyond-one-machine.md.
    Export {
        /// Topology file or name.
        topology: String,
        /// Output format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// The switches' image [default: railyard:VERSION].
        #[arg(long)]
        image: Option<String>,
        /// The switches' image in a `routing bgp` topology, one with FRR
        /// (`scripts/image.sh --frr`) [default: railyard-frr:VERSION].
        #[arg(long)]
        frr_image: Option<String>,
        /// The hosts' image [default: railyard-host:VERSION].
        #[arg(long)]
        host_image: Option<String>,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
    /// The labs that exist (their state directories).
    List,
    /// Print a generated fabric as a topology file: rail-optimised (rail
    /// leaves and spines), leaf-spine or three-tier (pods under
    /// super-spines), sized from hosts, rails, radix and oversubscription.
    Generate(super::generate::Spec),
    /// Run a collective live: one RoCEv2 rank per host NIC (hosts in
    /// topology order, NICs in ethN order; NIC n on rail n), speaking over
    /// AF_PACKET through the lab's switches. Prints nccl-tests' table
    /// (size count type redop time algbw busbw #wrong) and a fabric
    /// summary: CE marks, CNPs, rate cuts, PFC pauses, retransmissions,
    /// drops. Exits 1 when the job does not complete in --timeout.
    Collective {
        /// Lab name.
        name: String,
        /// allreduce, allgather, reducescatter, alltoall, sendrecv,
        /// permutation.
        op: String,
        /// Bytes per rank: 4096, 512K, 16M, 1G.
        size: String,
        /// Options of the live job.
        #[command(flatten)]
        live: super::collective::LiveArgs,
    },
    /// Run an incast live: each SRC sends SIZE to DST over RoCEv2 (an
    /// endpoint is HOST for its NIC 0, or HOST.ethN). Prints each flow's
    /// completion time and the fabric summary.
    Incast {
        /// Lab name.
        name: String,
        /// Bytes per sender: 4096, 512K, 16M.
        size: String,
        /// Senders, then the receiver.
        #[arg(num_args = 2.., required = true, value_name = "SRC... DST")]
        endpoints: Vec<String>,
        /// Options of the live job.
        #[command(flatten)]
        live: super::collective::LiveArgs,
    },
}

/// What `lab export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A containerlab topology file and the switch configurations.
    Containerlab,
}

/// Resolves TOPOLOGY: an existing file, else `NAME.topo` in
/// `$RAILYARD_TOPOLOGIES` or `./scripts/topologies`.
pub fn resolve_topology(arg: &str) -> Result<PathBuf, String> {
    let p = Path::new(arg);
    if p.is_file() {
        return Ok(p.to_path_buf());
    }
    let dir = std::env::var_os("RAILYARD_TOPOLOGIES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("scripts/topologies"));
    let candidate = dir.join(format!("{arg}.topo"));
    if candidate.is_file() {
        return Ok(candidate);
    }
    let known: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".topo").map(str::to_string)
        })
        .collect();
    Err(format!(
        "no topology {arg:?}: not a file, and no {} {}",
        candidate.display(),
        if known.is_empty() {
            "(run from the repository root or set RAILYARD_TOPOLOGIES)".to_string()
        } else {
            format!("(known: {})", known.join(", "))
        }
    ))
}

fn json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    writeln!(out, "{text}").map_err(|e| e.to_string())
}

/// Where an earlier `down` of lab `name` kept its final counters, if it did.
fn kept_note(root: &Path, name: &str) -> String {
    let dir = final_dir(root, name);
    if dir.is_dir() {
        format!("; its final counters are in {}", dir.display())
    } else {
        String::new()
    }
}

/// Says on stderr where each role's template was found (a file beside the
/// topology, or the built-in copy of a shipped role); a role without one is
/// left to rendering, which fails with the reason.
fn say_roles(t: &topology::Topology) {
    for (role, source) in render::role_sources(t) {
        if let Ok(src) = source {
            eprintln!("role {role}: {src}");
        }
    }
}

/// Runs a `railyard lab` command, writing to `out`.
///
/// # Errors
/// What went wrong; for `cabling`, how many ports failed the check.
pub fn dispatch(args: LabArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let root = args.state_dir.unwrap_or_else(default_state_root);
    match args.command {
        LabCommand::Up {
            topology,
            name,
            timeout,
            wait,
        } => {
            let railyard =
                std::env::current_exe().map_err(|e| format!("locating railyard: {e}"))?;
            let topology = resolve_topology(&topology)?;
            say_roles(&topology::parse_file(&topology)?);
            let state = up(&UpOptions {
                topology,
                name,
                state_root: root,
                railyard,
                timeout: Duration::from_secs(timeout),
            })?;
            // The name first, so that a caller has it even when the wait fails.
            writeln!(out, "{}", state.name).map_err(io)?;
            out.flush().map_err(io)?;
            if wait == 0 {
                return Ok(());
            }
            match wait_ready(&state, Duration::from_secs(wait)) {
                Ok(r) => {
                    let cables = if r.cables == 0 {
                        "no switch-switch cables to check".to_string()
                    } else {
                        format!(
                            "{} switch-switch cable(s) seen by LLDP on both ends",
                            r.cables
                        )
                    };
                    eprintln!(
                        "{}: {} switch port(s) up, {cables}, after {:.1} s",
                        state.name,
                        r.ports,
                        r.after.as_secs_f64()
                    );
                    Ok(())
                }
                Err(missing) => Err(format!(
                    "{name}: not ready after {wait} s (--wait); still missing:\n  {}\n\
                     the lab is up: `railyard lab cabling {name}` checks it again, \
                     `railyard lab down {name}` removes it",
                    missing.join("\n  "),
                    name = state.name
                )),
            }
        }
        LabCommand::Down { name, all_of } => {
            let names: Vec<String> = match (name, all_of) {
                (Some(arg), _) => match down_target(&root, &arg) {
                    DownTarget::Lab(n) => vec![n],
                    DownTarget::OnlyLabOf { topology, lab } => {
                        eprintln!("{arg}: no lab of that name; removing {lab}, the only lab of topology {topology}");
                        vec![lab]
                    }
                    DownTarget::Ambiguous { topology, labs } => {
                        return Err(format!(
                            "{arg}: no lab of that name, but topology {topology} has {} labs: {}\n\
                             remove one with `railyard lab down NAME`, or all of them with \
                             `railyard lab down --all-of {topology}`",
                            labs.len(),
                            labs.join(", ")
                        ))
                    }
                    DownTarget::Nothing => {
                        eprintln!(
                            "{arg}: no such lab (nothing to do){}",
                            kept_note(&root, &arg)
                        );
                        vec![]
                    }
                },
                (None, Some(t)) => labs_of(&root, &t),
                (None, None) => return Err("name a lab, or give --all-of TOPOLOGY".into()),
            };
            for n in names {
                match down(&root, &n)? {
                    Some(r) => {
                        writeln!(
                            out,
                            "{n}: stopped {} switch(es){}, deleted {} namespace(s)",
                            r.terminated.len(),
                            if r.killed.is_empty() {
                                String::new()
                            } else {
                                format!(" ({} needed SIGKILL)", r.killed.len())
                            },
                            r.namespaces.len()
                        )
                        .map_err(io)?;
                        if let Some(kept) = &r.kept {
                            writeln!(
                                out,
                                "{n}: final counters (SWITCH.out), logs and configurations kept in {}{}",
                                kept.display(),
                                if r.no_counters.is_empty() {
                                    String::new()
                                } else {
                                    format!(" (no counters from {})", r.no_counters.join(", "))
                                }
                            )
                            .map_err(io)?;
                        }
                    }
                    None => eprintln!("{n}: no such lab (nothing to do){}", kept_note(&root, &n)),
                }
            }
            Ok(())
        }
        LabCommand::Status {
            name,
            json: as_json,
        } => {
            let state = load_state(&root, &name)?;
            let st = status(&state);
            if as_json {
                json(
                    out,
                    &serde_json::json!({
                        "name": state.name, "topology": state.topology_name,
                        "dir": state.dir, "switches": st, "hosts": state.hosts,
                    }),
                )
            } else {
                render_status(out, &state, &st).map_err(io)
            }
        }
        LabCommand::Cabling {
            name,
            json: as_json,
        } => {
            let state = load_state(&root, &name)?;
            let rows = cabling(&state);
            if as_json {
                json(out, &rows)?;
            } else {
                render_cabling(out, &rows, std::io::stdout().is_terminal()).map_err(io)?;
            }
            let bad = rows.iter().filter(|r| r.is_bad()).count();
            if bad > 0 {
                Err(format!(
                    "{name}: {bad} port(s) cabled differently from the topology"
                ))
            } else {
                Ok(())
            }
        }
        LabCommand::Conservation {
            name,
            json: as_json,
        } => {
            let state = load_state(&root, &name)?;
            let c = super::conservation::of_lab(&state)?;
            if as_json {
                json(out, &c)?;
            } else {
                for p in &c.problems {
                    writeln!(out, "{p}").map_err(io)?;
                }
                writeln!(out, "conservation: {}", c.summary()).map_err(io)?;
            }
            if c.ok() {
                Ok(())
            } else {
                Err(format!("{name}: counters do not add up"))
            }
        }
        LabCommand::Render { topology, out: dir } => {
            let t = topology::parse_file(&resolve_topology(&topology)?)?;
            say_roles(&t);
            let rendered = render::render_all(&t)?;
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for r in rendered {
                let path = dir.join(format!("{}.conf", r.switch));
                std::fs::write(&path, &r.config)
                    .map_err(|e| format!("writing {}: {e}", path.display()))?;
                writeln!(out, "{}", path.display()).map_err(io)?;
            }
            Ok(())
        }
        LabCommand::Export {
            topology,
            format: ExportFormat::Containerlab,
            image,
            frr_image,
            host_image,
            out: dir,
        } => {
            let t = topology::parse_file(&resolve_topology(&topology)?)?;
            say_roles(&t);
            let defaults = super::containerlab::ExportOptions::default();
            let opts = super::containerlab::ExportOptions {
                image: image.unwrap_or(defaults.image),
                frr_image: frr_image.unwrap_or(defaults.frr_image),
                host_image: host_image.unwrap_or(defaults.host_image),
            };
            let done = super::containerlab::export(&t, &opts, &dir)?;
            writeln!(out, "{}", done.topology_file.display()).map_err(io)?;
            for p in done.configs {
                writeln!(out, "{}", p.display()).map_err(io)?;
            }
            Ok(())
        }
        LabCommand::Collective {
            name,
            op,
            size,
            live,
        } => {
            let state = load_state(&root, &name)?;
            let spec = super::collective::collective_spec(&op, &size);
            super::collective::run_live(&state, &spec, &live, out)
        }
        LabCommand::Incast {
            name,
            size,
            endpoints,
            live,
        } => {
            let state = load_state(&root, &name)?;
            let spec = super::collective::incast_spec(&size, &endpoints)?;
            super::collective::run_live(&state, &spec, &live, out)
        }
        LabCommand::Generate(spec) => super::generate::run(&spec, out),
        LabCommand::List => {
            for s in list(&root) {
                let running = s
                    .switches
                    .iter()
                    .filter(|sw| super::run::switch_alive(sw))
                    .count();
                writeln!(
                    out,
                    "{:<24} topology {:<14} {}/{} switches running  {}",
                    s.name,
                    s.topology_name,
                    running,
                    s.switches.len(),
                    s.dir.display()
                )
                .map_err(io)?;
            }
            Ok(())
        }
    }
}
