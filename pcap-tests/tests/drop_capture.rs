//! `replay --out-format pcapng --capture-drops`: every frame the switch
//! dropped is in the pcapng on the port that counted it, inbound for an
//! ingress drop and outbound for an egress queue's, with its reason as the
//! packet's comment; and tshark reads the file without expert warnings and
//! filters the drops by their comment.

use std::net::IpAddr;

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use railyard_control::replay::{OutFormat, ReplayOptions, PCAPNG_FILE};
use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::wire::MacAddr;
use railyard_pcap_tests::{assert_tshark_expert_clean, replay_with, tshark, Run, Timed};

/// A 10 Gb/s port into a 1 Gb/s one whose default queue WRED-drops
/// everything past 6 KB.
const CONFIG: &str = "
hostname dropsw
policy-map type queuing OUT
  class type queuing c-out-8q-q-default
    random-detect minimum-threshold 3 kbytes maximum-threshold 6 kbytes drop-probability 100 weight 0
system qos
  service-policy type queuing output OUT
interface Ethernet1/1
  no switchport
  speed 10000
  mac-address 02:aa:00:00:00:01
  ip address 10.0.1.1/24
interface Ethernet1/2
  no switchport
  speed 1000
  mac-address 02:aa:00:00:00:02
  ip address 10.0.2.1/24
  ip arp 10.0.2.2 02:00:00:00:00:02
";

/// 40 frames of 1000 bytes at 10 Gb/s toward the 1 Gb/s port, and one
/// frame for a destination the switch has no route to.
fn inputs() -> Vec<(&'static str, Vec<Timed>)> {
    let spec = |dst: [u8; 4]| {
        let mut s = FrameSpec::udp(
            MacAddr([2, 0, 0, 0, 0, 1]),
            MacAddr([2, 0xaa, 0, 0, 0, 1]),
            IpAddr::V4([10, 0, 1, 2].into()),
            IpAddr::V4(dst.into()),
        );
        s.frame_len = 1000;
        s
    };
    let mut frames: Vec<Timed> = (0..40u64)
        .map(|i| (i * 800, build(&spec([10, 0, 2, 2]), i)))
        .collect();
    frames.push((40 * 800, build(&spec([8, 8, 8, 8]), 0)));
    vec![("Ethernet1/1", frames)]
}

fn run() -> Run {
    let options = ReplayOptions {
        out_format: OutFormat::Pcapng,
        capture_drops: true,
        ..ReplayOptions::default()
    };
    replay_with(CONFIG, &inputs(), &options)
}

/// Every packet block: (interface, flags, comment).
fn blocks(path: &std::path::Path) -> Vec<(u32, u32, Option<String>)> {
    let mut r = PcapNgReader::new(std::fs::File::open(path).expect("open")).expect("pcapng");
    let mut out = Vec::new();
    while let Some(block) = r.next_block() {
        if let Block::EnhancedPacket(p) = block.expect("block") {
            let mut flags = 0;
            let mut comment = None;
            for o in &p.options {
                match o {
                    EnhancedPacketOption::Flags(f) => flags = *f,
                    EnhancedPacketOption::Comment(c) => comment = Some(c.to_string()),
                    _ => {}
                }
            }
            out.push((p.interface_id, flags, comment));
        }
    }
    out
}

#[test]
fn dropped_frames_are_in_the_pcapng_on_their_port_with_the_reason_as_comment() {
    let run = run();
    let wred = run.drops("Ethernet1/2", "wred");
    assert!(wred > 0, "the 1 Gb/s queue dropped some: {wred}");
    assert_eq!(run.drops("Ethernet1/1", "no_route"), 1);
    let all = blocks(&run.out.join(PCAPNG_FILE));
    let with = |ifc: u32, flags: u32, comment: &str| {
        all.iter()
            .filter(|b| b.0 == ifc && b.1 == flags && b.2.as_deref() == Some(comment))
            .count() as u64
    };
    // Ethernet1/1 is interface 0, inbound = 1; Ethernet1/2 is 1, outbound = 2.
    assert_eq!(with(0, 1, "dropped: no_route"), 1);
    assert_eq!(with(1, 2, "dropped: wred"), wred);
    let sent = all.iter().filter(|b| b.2.is_none()).count() as u64;
    assert_eq!(sent, run.counters("Ethernet1/2").tx_packets);
    assert_eq!(all.len() as u64, sent + wred + 1, "nothing else: {all:?}");
    let counts = run.report.drop_capture.expect("a drop capture ran");
    assert_eq!((counts.written, counts.overflow), (wred + 1, 0));
}

#[test]
fn without_capture_drops_the_pcapng_holds_only_what_was_sent() {
    let options = ReplayOptions {
        out_format: OutFormat::Pcapng,
        ..ReplayOptions::default()
    };
    let run = replay_with(CONFIG, &inputs(), &options);
    let all = blocks(&run.out.join(PCAPNG_FILE));
    assert!(all.iter().all(|b| b.2.is_none() && b.1 == 2), "{all:?}");
    assert_eq!(all.len() as u64, run.counters("Ethernet1/2").tx_packets);
    assert!(run.report.drop_capture.is_none());
}

#[test]
#[ignore = "needs tshark; run by scripts/test.sh, which installs it"]
fn tshark_reads_the_drops_cleanly_and_filters_them_by_comment() {
    let run = run();
    let path = run.out.join(PCAPNG_FILE);
    let file = path.to_str().expect("utf-8 path");
    assert_tshark_expert_clean(file);
    let rows = tshark(&[
        "-r",
        file,
        "-Y",
        "frame.comment contains \"wred\"",
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "frame.interface_name",
        "-e",
        "frame.packet_flags_direction",
        "-e",
        "frame.comment",
        "-e",
        "ip.dst",
    ]);
    eprintln!("tshark -Y 'frame.comment contains \"wred\"' (first rows):");
    for line in rows.lines().take(3) {
        eprintln!("  {line}");
    }
    assert_eq!(
        rows.lines().count() as u64,
        run.drops("Ethernet1/2", "wred")
    );
    for line in rows.lines() {
        let r: Vec<&str> = line.split('|').collect();
        assert_eq!(r[0], "Ethernet1/2", "{line}");
        assert_eq!(r[1], "0x00000002", "outbound: {line}");
        assert_eq!(r[2], "dropped: wred", "{line}");
        assert_eq!(r[3], "10.0.2.2", "{line}");
    }
    let inbound = tshark(&[
        "-r",
        file,
        "-Y",
        "frame.comment == \"dropped: no_route\"",
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "frame.interface_name",
        "-e",
        "ip.dst",
    ]);
    assert_eq!(inbound.trim(), "Ethernet1/1|8.8.8.8", "{inbound}");
}

/// A trunk carrying VLAN 101 and an access port in it.
const L2_CONFIG: &str = "
hostname l2sw
vlan 101
interface Ethernet1/1
  switchport mode trunk
  switchport trunk allowed vlan 101
interface Ethernet1/2
  switchport access vlan 101
";

#[test]
fn a_bridged_frame_in_a_vlan_the_trunk_does_not_carry_is_captured_inbound() {
    let tagged = |vlan: u16| {
        let spec = FrameSpec::udp(
            MacAddr([2, 0, 0, 0, 0, 9]),
            MacAddr([0xff; 6]),
            IpAddr::V4([10, 1, 0, 9].into()),
            IpAddr::V4([10, 1, 0, 255].into()),
        );
        let mut f = build(&spec, 0);
        let tag = [0x81, 0x00, (vlan >> 8) as u8, vlan as u8];
        f.splice(12..12, tag);
        f
    };
    let options = ReplayOptions {
        out_format: OutFormat::Pcapng,
        capture_drops: true,
        ..ReplayOptions::default()
    };
    let inputs = vec![("Ethernet1/1", vec![(0, tagged(101)), (1000, tagged(102))])];
    let run = replay_with(L2_CONFIG, &inputs, &options);
    assert_eq!(run.drops("Ethernet1/1", "vlan_not_allowed"), 1);
    assert_eq!(
        run.counters("Ethernet1/2").tx_packets,
        1,
        "VLAN 101 flooded"
    );
    let all = blocks(&run.out.join(PCAPNG_FILE));
    assert_eq!(
        all,
        vec![
            (1, 2, None),
            (0, 1, Some("dropped: vlan_not_allowed".to_string()))
        ]
    );
}
