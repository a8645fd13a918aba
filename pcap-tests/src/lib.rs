//! Helpers for the end-to-end tests: build traces, write and read pcaps,
//! compile configurations and replay them the way `railyard replay` does.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod fabric;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::TsResolution;
use railyard_config::{parse_str, ParseOptions};
use railyard_control::compile::{compile, Compiled};
use railyard_control::replay::{output_path, replay_pcaps, ReplayOptions, ReplayReport};

/// A frame with its timestamp in nanoseconds.
pub type Timed = (u64, Vec<u8>);

/// Writes `frames` to a nanosecond-resolution Ethernet pcap.
pub fn write_pcap(path: &Path, frames: &[Timed]) {
    let header = PcapHeader {
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let file = File::create(path).expect("create pcap");
    let mut w = PcapWriter::with_header(file, header).expect("pcap header");
    for (t, f) in frames {
        w.write_packet(&PcapPacket::new(
            Duration::from_nanos(*t),
            f.len() as u32,
            f,
        ))
        .expect("write packet");
    }
}

/// Reads every frame of a pcap; an absent file reads as no frames.
pub fn read_pcap(path: &Path) -> Vec<Timed> {
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    let mut r = PcapReader::new(file).expect("pcap header");
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.expect("pcap packet");
        out.push((p.timestamp.as_nanos() as u64, p.data.into_owned()));
    }
    out
}

/// Compiles configuration text, panicking with the diagnostics on error.
pub fn compile_text(text: &str) -> Compiled {
    let parsed = parse_str(text, "test.conf", &ParseOptions::default()).unwrap_or_else(|d| {
        panic!(
            "config did not parse:\n{}",
            railyard_control::format_diagnostics(&d)
        )
    });
    compile(&parsed.config).unwrap_or_else(|e| panic!("config did not compile: {e:?}"))
}

/// A replay run in a temporary directory.
pub struct Run {
    /// Counters and timings.
    pub report: ReplayReport,
    /// Where the output pcaps are.
    pub out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Run {
    /// Frames the named interface transmitted.
    pub fn sent(&self, interface: &str) -> Vec<Timed> {
        read_pcap(&output_path(&self.out, interface))
    }

    /// Counters of the named interface.
    pub fn counters(&self, interface: &str) -> &railyard_dataplane::stats::InterfaceStats {
        &self.report.stats.interfaces[interface]
    }

    /// Drops of `reason` on the named interface.
    pub fn drops(&self, interface: &str, reason: &str) -> u64 {
        self.counters(interface).drops[reason]
    }
}

/// Replays `inputs` (interface name → frames) through the switch `config`
/// describes, through real pcap files, as `railyard replay` does.
pub fn replay(config: &str, inputs: &[(&str, Vec<Timed>)]) -> Run {
    replay_with(config, inputs, &ReplayOptions::default())
}

/// [`replay`] with every replay option.
pub fn replay_with(config: &str, inputs: &[(&str, Vec<Timed>)], options: &ReplayOptions) -> Run {
    let compiled = compile_text(config);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for (name, frames) in inputs {
        let idx = compiled
            .model
            .interfaces
            .iter()
            .position(|i| i.name == *name)
            .unwrap_or_else(|| panic!("{name} not in config"));
        let path = dir
            .path()
            .join(format!("in-{}.pcap", name.replace('/', "_")));
        write_pcap(&path, frames);
        files.push((idx, path));
    }
    let out = dir.path().join("out");
    let report = replay_pcaps(&compiled.model, &files, &out, options, |_, _| {}).expect("replay");
    Run {
        report,
        out,
        _dir: dir,
    }
}

/// A replay of a hand-built model, with what every interface sent.
pub struct ModelRun {
    /// Counters and timings.
    pub report: ReplayReport,
    /// Frames each interface transmitted, by interface index.
    pub out: Vec<Vec<Timed>>,
}

/// Replays `inputs[i]` into interface `i` of `model` through real pcap
/// files, closed-loop unless `open_loop`, and reads every output back.
pub fn replay_model(
    model: &railyard_dataplane::model::SwitchModel,
    inputs: &[Vec<Timed>],
    open_loop: bool,
) -> ModelRun {
    let options = ReplayOptions {
        open_loop,
        ..ReplayOptions::default()
    };
    replay_model_with(model, inputs, &options)
}

/// [`replay_model`] with every replay option.
pub fn replay_model_with(
    model: &railyard_dataplane::model::SwitchModel,
    inputs: &[Vec<Timed>],
    options: &ReplayOptions,
) -> ModelRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let files: Vec<(usize, PathBuf)> = inputs
        .iter()
        .enumerate()
        .map(|(i, frames)| {
            let path = dir.path().join(format!("in{i}.pcap"));
            write_pcap(&path, frames);
            (i, path)
        })
        .collect();
    let out = dir.path().join("out");
    let report = replay_pcaps(model, &files, &out, options, |_, _| {}).expect("replay");
    let out = model
        .interfaces
        .iter()
        .map(|m| read_pcap(&output_path(&out, &m.name)))
        .collect();
    ModelRun { report, out }
}

/// True when the IPv4 header at `l3` has a valid checksum.
pub fn ipv4_checksum_ok(frame: &[u8], l3: usize) -> bool {
    let ihl = usize::from(frame[l3] & 0x0f) * 4;
    railyard_dataplane::wire::checksum::data(&frame[l3..l3 + ihl]) == 0xffff
}

/// Two workers of `model`, stepped by hand with `poll`: port `i` belongs
/// to worker `i % 2`, hand-off rings hold `handoff` packets, and ports 0
/// and 1 are ring cables of `cable` frames whose host ends are returned
/// (the other ports have no backend). With `lane`, worker 0 also sends on
/// port 1 through its transmit lane.
pub fn two_ring_workers(
    model: &railyard_dataplane::model::SwitchModel,
    pool: &railyard_dataplane::Pool,
    handoff: usize,
    cable: usize,
    lane: bool,
) -> (
    railyard_dataplane::pipeline::Switch,
    railyard_dataplane::pipeline::Switch,
    [railyard_dataplane::port::ring::RingPort; 2],
) {
    use railyard_dataplane::pipeline::{Switch, WorkerLinks};
    use railyard_dataplane::port::ring::RingLink;
    use railyard_dataplane::port::Port;
    let ports = model.interfaces.len();
    let owners: Vec<usize> = (0..ports).map(|i| i % 2).collect();
    let mut links = WorkerLinks::build(2, &owners, handoff).into_iter();
    let (p0, h0, _) = RingLink::pair("p0", cable);
    let (mut p1, h1, _) = RingLink::pair("p1", cable);
    let mut backends: [Vec<Option<Box<dyn Port>>>; 2] =
        std::array::from_fn(|_| (0..ports).map(|_| None).collect());
    if lane {
        backends[0][1] = p1.tx_lane();
        assert!(backends[0][1].is_some(), "ring ports have lanes");
    }
    backends[0][0] = Some(Box::new(p0));
    backends[1][1] = Some(Box::new(p1));
    let [b0, b1] = backends;
    let mut worker = |b| {
        let link = links.next().expect("two links for two workers");
        Switch::new_worker(model, b, pool.clone(), link).0
    };
    let w0 = worker(b0);
    let w1 = worker(b1);
    (w0, w1, [h0, h1])
}

/// The addressing plan the hand-built test switches share: port `i`
/// (0-based, `Ethernet1/{i+1}`) is 10.0.{i+1}.1/24 with MAC
/// 02:aa:00:00:00:{i+1}, and one host behind it at 10.0.{i+1}.2 with MAC
/// 02:00:00:00:00:{i+1}.
pub mod plan {
    use std::net::Ipv4Addr;

    use railyard_dataplane::model::InterfaceModel;
    use railyard_dataplane::wire::MacAddr;

    /// MAC of switch port `i`.
    pub fn port_mac(i: usize) -> MacAddr {
        MacAddr([2, 0xaa, 0, 0, 0, i as u8 + 1])
    }

    /// MAC of the host behind port `i`.
    pub fn host_mac(i: usize) -> MacAddr {
        MacAddr([2, 0, 0, 0, 0, i as u8 + 1])
    }

    /// Address of the host behind port `i`.
    pub fn host_ip(i: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 0, i as u8 + 1, 2)
    }

    /// Port `i` as a routed interface with its subnet and a static ARP
    /// entry for its host.
    pub fn routed_port(i: usize) -> InterfaceModel {
        let mut m = InterfaceModel::new(&format!("Ethernet1/{}", i + 1), port_mac(i));
        m.ipv4.push((Ipv4Addr::new(10, 0, i as u8 + 1, 1), 24));
        m.static_arp.push((host_ip(i), host_mac(i)));
        m
    }
}

/// Runs tshark with `args` and returns what it printed; panics with its
/// error output when it fails.
pub fn tshark(args: &[&str]) -> String {
    let out = std::process::Command::new("tshark")
        .args(args)
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts tshark's expert information on `file` has no error and no
/// warning (it titles its groups "Errors (n)", "Warns (n)", "Notes (n)"…).
pub fn assert_tshark_expert_clean(file: &str) {
    let expert = tshark(&["-r", file, "-q", "-z", "expert"]);
    eprintln!("tshark -z expert:\n{expert}");
    for bad in ["Errors", "Warns"] {
        assert!(!expert.contains(bad), "expert info:\n{expert}");
    }
}
