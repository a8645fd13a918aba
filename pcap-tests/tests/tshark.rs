//! The PFC frames railyard sends decode in Wireshark as 802.1Qbb class-based
//! flow control with the expected fields and no expert warnings; a pcapng
//! output holds every port's frames under the railyard interface names.

use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;

use railyard_control::replay::{OutFormat, ReplayOptions, PCAPNG_FILE};
use railyard_control::traffic::{arp_request, build, FrameSpec, Transport, BTH_RC_WRITE_ONLY};
use railyard_dataplane::wire::MacAddr;
use railyard_pcap_tests::{assert_tshark_expert_clean, replay, replay_with, tshark, Timed};

const CONFIG: &str = "
hostname pfcsw
class-map type qos match-any ROCEv2
  match dscp 24
policy-map type qos CLASSIFY
  class ROCEv2
    set qos-group 3
policy-map type queuing IN
  class type queuing c-in-q3
    pause buffer-size 60000 pause-threshold 20000 resume-threshold 10000
policy-map type network-qos NQ
  class type network-qos c-8q-nq3
    pause pfc-cos 3
system qos
  service-policy type network-qos NQ
  service-policy type queuing input IN
interface Ethernet1/1-3
  no switchport
  speed 10000
  priority-flow-control mode on
  service-policy type qos input CLASSIFY
interface Ethernet1/1
  mac-address 02:aa:00:00:00:01
  ip address 10.0.1.1/24
  ip arp 10.0.1.2 02:00:00:00:00:01
interface Ethernet1/2
  mac-address 02:aa:00:00:00:02
  ip address 10.0.2.1/24
  ip arp 10.0.2.2 02:00:00:00:00:02
interface Ethernet1/3
  ip address 10.0.3.1/24
  ip arp 10.0.3.2 02:00:00:00:00:03
";

/// Two 10 Gb/s RoCEv2 senders into one 10 Gb/s port: each ingress port
/// crosses its 20 000-byte pause threshold, then drains below resume.
fn incast() -> Vec<(&'static str, Vec<Timed>)> {
    ["Ethernet1/1", "Ethernet1/2"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let n = i as u8 + 1;
            let mut s = FrameSpec::udp(
                MacAddr([2, 0, 0, 0, 0, n]),
                MacAddr([2, 0xaa, 0, 0, 0, n]),
                IpAddr::V4([10, 0, n, 2].into()),
                IpAddr::V4([10, 0, 3, 2].into()),
            );
            s.dscp = 24;
            s.frame_len = 1000;
            let frames = (0..100u64)
                .map(|k| {
                    s.transport = Transport::Roce {
                        opcode: BTH_RC_WRITE_ONLY,
                        dest_qp: u32::from(n),
                        psn: k as u32,
                    };
                    (k * 820, build(&s, k))
                })
                .collect();
            (*name, frames)
        })
        .collect()
}

#[test]
#[ignore = "needs tshark; run by scripts/test.sh, which installs it"]
fn pfc_frames_decode_in_tshark() {
    let run = replay(CONFIG, &incast());
    let out = run.out.join("Ethernet1_1.pcap");
    let pfc: Vec<_> = run
        .sent("Ethernet1/1")
        .into_iter()
        .filter(|(_, f)| f[12..14] == [0x88, 0x08])
        .collect();
    assert!(
        pfc.len() >= 2,
        "the incast made Ethernet1/1 send XOFF and XON: {}",
        pfc.len()
    );
    let tshark = Command::new("tshark")
        .arg("-r")
        .arg(&out)
        .args([
            "-Y",
            "macc",
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "eth.dst",
            "-e",
            "macc.opcode",
            "-e",
            "macc.cbfc.enbv",
            "-e",
            "macc.cbfc.pause_time.c3",
            "-e",
            "_ws.expert",
        ])
        .output()
        .expect("run tshark");
    assert!(
        tshark.status.success(),
        "{}",
        String::from_utf8_lossy(&tshark.stderr)
    );
    let text = String::from_utf8_lossy(&tshark.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), pfc.len(), "tshark saw every PFC frame:\n{text}");
    let mut quanta = Vec::new();
    for r in &rows {
        assert_eq!(r[0], "01:80:c2:00:00:01", "{text}");
        assert_eq!(r[1], "0x0101", "PFC opcode: {text}");
        assert_eq!(r[2], "0x0008", "priority 3 enabled: {text}");
        assert_eq!(
            r.get(4).copied().unwrap_or(""),
            "",
            "no expert item: {text}"
        );
        quanta.push(r[3].parse::<u32>().expect("pause_time.c3"));
    }
    assert_eq!(quanta.first(), Some(&65535), "first an XOFF: {quanta:?}");
    assert_eq!(quanta.last(), Some(&0), "last an XON: {quanta:?}");
}

/// The incast written as one pcapng: what tshark reads from it.
fn pcapng_run() -> (railyard_pcap_tests::Run, std::path::PathBuf) {
    let options = ReplayOptions {
        out_format: OutFormat::Pcapng,
        ..ReplayOptions::default()
    };
    let run = replay_with(CONFIG, &incast_and_arp(), &options);
    let file = run.out.join(PCAPNG_FILE);
    (run, file)
}

/// The incast plus an ARP request to the switch on Ethernet1/1.
fn incast_and_arp() -> Vec<(&'static str, Vec<Timed>)> {
    let mut inputs = incast();
    let arp = arp_request(
        MacAddr([2, 0, 0, 0, 0, 1]),
        Ipv4Addr::new(10, 0, 1, 2),
        Ipv4Addr::new(10, 0, 1, 1),
    );
    inputs[0].1.insert(1, (100, arp));
    inputs
}

/// Every frame in the pcapng, read without tshark: (interface, ns, bytes).
fn read_pcapng(path: &std::path::Path) -> Vec<(u32, u64, Vec<u8>)> {
    use pcap_file::pcapng::{Block, PcapNgReader};
    let mut r = PcapNgReader::new(std::fs::File::open(path).expect("open")).expect("pcapng");
    let mut out = Vec::new();
    while let Some(block) = r.next_block() {
        if let Block::EnhancedPacket(p) = block.expect("block") {
            out.push((
                p.interface_id,
                p.timestamp.as_nanos() as u64,
                p.data.into_owned(),
            ));
        }
    }
    out
}

#[test]
fn pcapng_output_holds_what_each_port_sent_in_its_pcap() {
    let classic = replay(CONFIG, &incast_and_arp());
    let (run, file) = pcapng_run();
    let frames = read_pcapng(&file);
    // Interfaces in configuration order: Ethernet1/1..3.
    for (i, name) in ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
        .iter()
        .enumerate()
    {
        let want = classic.sent(name);
        let got: Vec<_> = frames
            .iter()
            .filter(|f| f.0 == i as u32)
            .map(|f| (f.1, f.2.clone()))
            .collect();
        assert_eq!(got.len() as u64, run.counters(name).tx_packets, "{name}");
        assert!(!got.is_empty(), "{name} sent something");
        assert_eq!(got, want, "{name}: as in its pcap");
        if i == 0 {
            // The switch's ARP answer leaves Ethernet1/1.
            assert!(
                got.iter()
                    .any(|(_, f)| f[12..14] == [0x08, 0x06] && f[20..22] == [0, 2]),
                "ARP reply on Ethernet1/1"
            );
        }
    }
    // Pause frames railyard made itself are there, on the ports it paused.
    let pfc = frames
        .iter()
        .filter(|f| f.2[12..14] == [0x88, 0x08])
        .count();
    assert!(pfc >= 4, "{pfc} PFC frames");
}

#[test]
#[ignore = "needs tshark; run by scripts/test.sh, which installs it"]
fn pcapng_output_reads_clean_in_tshark_with_railyard_interface_names() {
    let (run, file) = pcapng_run();
    let file = file.to_str().expect("utf-8 path");
    assert_tshark_expert_clean(file);
    let rows = tshark(&[
        "-r",
        file,
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "frame.interface_name",
        "-e",
        "frame.interface_description",
        "-e",
        "macc.opcode",
        "-e",
        "_ws.expert",
        "-e",
        "arp.opcode",
    ]);
    eprintln!("tshark -T fields (first rows):");
    for line in rows
        .lines()
        .take(3)
        .chain(rows.lines().filter(|l| l.contains("0x0101")).take(2))
    {
        eprintln!("  {line}");
    }
    let mut per_port = std::collections::BTreeMap::<&str, usize>::new();
    let mut pfc = 0;
    let mut arp_replies = 0;
    for line in rows.lines() {
        let r: Vec<&str> = line.split('|').collect();
        assert_eq!(r[1], format!("railyard port {}", r[0]), "{line}");
        assert_eq!(r.get(3).copied().unwrap_or(""), "", "expert item: {line}");
        *per_port.entry(r[0]).or_default() += 1;
        pfc += usize::from(r[2] == "0x0101");
        arp_replies += usize::from(r[0] == "Ethernet1/1" && r.get(4) == Some(&"2"));
    }
    assert_eq!(arp_replies, 1, "{rows}");
    let sent = |name: &str| run.report.stats.interfaces[name].tx_packets as usize;
    for name in ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"] {
        assert_eq!(
            per_port.get(name).copied().unwrap_or(0),
            sent(name),
            "{name}: {rows}"
        );
    }
    assert!(pfc >= 4, "PFC decoded as MAC control: {pfc}");
}
