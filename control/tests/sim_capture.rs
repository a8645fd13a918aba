//! `railyard sim --capture`: the frames of chosen switch ports as one
//! pcapng in virtual time, checked against the switch's own counters, read
//! back by tshark, and byte-identical from run to run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use railyard_control::sim::{Cc, DataMode, SimReport, CAPTURE_EPOCH_NS};

mod common;
use common::{sim, sim_json, topology};

/// Eight senders at line rate into h9 without congestion control: the
/// queue to h9 fills and the switch pauses the senders.
const WORKLOAD: &str = "incast:4M:h1,h2,h3,h4,h5,h6,h7,h8:h9";
const PORTS: [&str; 2] = ["rail1:Ethernet1/1", "rail1:Ethernet1/9"];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "railyard-sim-capture-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The workload with `PORTS` captured to `file` on `threads` threads.
fn captured(file: &Path, threads: usize, data: DataMode) -> SimReport {
    sim("incast", WORKLOAD, |o| {
        o.cc = Cc::None;
        o.data = data;
        o.threads = Some(threads);
        o.keep_switch_stats = true;
        o.capture = PORTS.iter().map(|p| p.to_string()).collect();
        o.capture_out = Some(file.to_path_buf());
    })
}

/// A packet block: (interface, ns, EPB flags, frame).
type Frame = (u32, u64, u32, Vec<u8>);

/// The interfaces' names and every packet block.
fn read_pcapng(path: &Path) -> (Vec<String>, Vec<Frame>) {
    use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
    use pcap_file::pcapng::{Block, PcapNgReader};
    let mut r = PcapNgReader::new(std::fs::File::open(path).expect("open")).expect("pcapng");
    let (mut names, mut frames) = (Vec::new(), Vec::new());
    while let Some(block) = r.next_block() {
        match block.expect("block") {
            Block::InterfaceDescription(i) => {
                names.extend(i.options.iter().filter_map(|o| match o {
                    InterfaceDescriptionOption::IfName(n) => Some(n.to_string()),
                    _ => None,
                }))
            }
            Block::EnhancedPacket(p) => {
                let flags = p
                    .options
                    .iter()
                    .find_map(|o| match o {
                        EnhancedPacketOption::Flags(f) => Some(*f),
                        _ => None,
                    })
                    .unwrap_or(0);
                frames.push((
                    p.interface_id,
                    p.timestamp.as_nanos() as u64,
                    flags,
                    p.data.into_owned(),
                ))
            }
            _ => {}
        }
    }
    (names, frames)
}

#[test]
fn a_captured_port_holds_every_frame_its_counters_count_both_ways_in_time_order() {
    let dir = scratch("counts");
    let file = dir.join("cap.pcapng");
    let r = captured(&file, 1, DataMode::On);
    assert!(r.results[0].completed, "{:?}", r.results);
    assert!(
        r.fabric.pfc_pause_frames > 0,
        "the incast paused: {:?}",
        r.fabric
    );
    let (names, frames) = read_pcapng(&file);
    assert_eq!(names, PORTS);
    let stats = &r.switch_stats.as_ref().expect("switch stats")[0].interfaces;
    for (i, port) in PORTS.iter().enumerate() {
        let ifname = port.split_once(':').unwrap().1;
        let counted = &stats[ifname];
        let mine: Vec<_> = frames.iter().filter(|f| f.0 == i as u32).collect();
        let inbound = mine.iter().filter(|f| f.2 & 3 == 1).count() as u64;
        let outbound = mine.iter().filter(|f| f.2 & 3 == 2).count() as u64;
        assert_eq!(inbound, counted.rx_packets, "{port} received");
        assert_eq!(outbound, counted.tx_packets, "{port} sent");
        assert_eq!(
            inbound + outbound,
            mine.len() as u64,
            "{port}: a direction on every frame"
        );
        assert_eq!(r.captures[i].interface, *port);
        assert_eq!(r.captures[i].frames, mine.len() as u64);
        assert_eq!(r.captures[i].left_out, 0);
    }
    // Virtual time from the fixed epoch, in order, within the run.
    let ts: Vec<u64> = frames.iter().map(|f| f.1).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "time order");
    assert!(ts[0] >= CAPTURE_EPOCH_NS);
    assert!(ts[ts.len() - 1] - CAPTURE_EPOCH_NS <= (r.virtual_us * 1e3) as u64);
    // The pauses the switch sent toward h1: MAC control, opcode 0x0101.
    let pfc_out = frames
        .iter()
        .filter(|f| f.0 == 0 && f.2 & 3 == 2 && f.3[12..16] == [0x88, 0x08, 0x01, 0x01])
        .count();
    assert!(pfc_out > 0, "no PFC frame toward h1");
    // No part file left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["cap.pcapng"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_run_writes_the_same_capture_byte_for_byte_on_any_number_of_threads() {
    let dir = scratch("same");
    // Without data too: a payload's bytes are then whatever its buffer
    // held, which depends on the threads, so the capture blanks them.
    for data in [DataMode::On, DataMode::Off] {
        let (a, b) = (dir.join("a.pcapng"), dir.join("b.pcapng"));
        captured(&a, 1, data);
        captured(&b, 3, data);
        let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        assert!(a.len() > 100_000, "{} bytes", a.len());
        assert!(
            a == b,
            "{data:?}: the captures differ ({} and {} bytes)",
            a.len(),
            b.len()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn capture_limit_writes_that_many_frames_and_counts_the_rest() {
    let dir = scratch("limit");
    let file = dir.join("cap.pcapng");
    let v = sim_json(
        "incast",
        &[
            "--workload",
            WORKLOAD,
            "--capture",
            "rail1:e1/9",
            "--capture-out",
            file.to_str().unwrap(),
            "--capture-limit",
            "100",
        ],
    );
    let c = &v["captures"][0];
    assert_eq!(c["interface"], "rail1:Ethernet1/9");
    assert_eq!(c["frames"], 100);
    assert!(c["left_out"].as_u64().unwrap() > 0, "{c}");
    assert_eq!(read_pcapng(&file).1.len(), 100);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_capture_of_an_unknown_port_names_the_nearest() {
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .arg("sim")
        .arg(topology("incast"))
        .args(["--workload", WORKLOAD, "--capture", "rail1:Ethernet1/19"])
        .args(["--capture-out", "/nonexistent/x.pcapng"])
        .output()
        .expect("run railyard sim");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--capture rail1:Ethernet1/19: rail1 has no cabled interface Ethernet1/19")
            && err.contains("did you mean `Ethernet1/1`"),
        "{err}"
    );
}

fn tshark(args: &[&str]) -> String {
    let out = Command::new("tshark")
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

#[test]
#[ignore = "needs tshark; run by scripts/test.sh, which installs it"]
fn tshark_reads_the_capture_clean_with_rocev2_and_pfc_decoded() {
    let dir = scratch("tshark");
    let file = dir.join("cap.pcapng");
    let v = sim_json(
        "incast",
        &[
            "--workload",
            WORKLOAD,
            "--cc",
            "none",
            "--capture",
            PORTS[0],
            "--capture",
            PORTS[1],
            "--capture-out",
            file.to_str().unwrap(),
        ],
    );
    let f = file.to_str().unwrap();
    let expert = tshark(&["-r", f, "-q", "-z", "expert"]);
    eprintln!("tshark -z expert:\n{expert}");
    for bad in ["Errors", "Warns"] {
        assert!(!expert.contains(bad), "expert info:\n{expert}");
    }
    let rows = tshark(&[
        "-r",
        f,
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "frame.interface_name",
        "-e",
        "frame.interface_description",
        "-e",
        "udp.dstport",
        "-e",
        "infiniband.bth.opcode",
        "-e",
        "macc.opcode",
    ]);
    let mut per_port = BTreeMap::<&str, u64>::new();
    let (mut roce, mut bth, mut pfc) = (0, 0, 0);
    for line in rows.lines() {
        let r: Vec<&str> = line.split('|').collect();
        assert!(
            r[1].starts_with("railyard sim: switch rail1 interface "),
            "{line}"
        );
        *per_port.entry(r[0]).or_default() += 1;
        roce += u64::from(r[2] == "4791");
        bth += u64::from(r[2] == "4791" && !r[3].is_empty());
        pfc += u64::from(r[4] == "0x0101");
    }
    for (i, port) in PORTS.iter().enumerate() {
        assert_eq!(
            per_port.get(port).copied(),
            v["captures"][i]["frames"].as_u64(),
            "{port}"
        );
    }
    assert!(roce > 100, "{roce} RoCEv2 frames");
    assert_eq!(bth, roce, "every UDP 4791 frame decoded as InfiniBand");
    let ib = tshark(&[
        "-r",
        f,
        "-Y",
        "infiniband",
        "-T",
        "fields",
        "-e",
        "frame.number",
    ]);
    assert_eq!(ib.lines().count() as u64, roce, "-Y infiniband");
    assert!(pfc > 0, "PFC frames decoded as MAC control");
    eprintln!("{per_port:?}: {roce} RoCEv2 frames, {pfc} PFC frames");
    std::fs::remove_dir_all(&dir).unwrap();
}
