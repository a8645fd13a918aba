//! Captures as users bring them: pcapng from the Wireshark tools, one
//! interface of a multi-interface capture, damaged records, frames too long
//! for a buffer, timestamps going back; and the summary accounting for
//! every frame received.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use railyard_control::replay::{
    output_path, replay_traces, ReplayOptions, ReplayReport, Summary, Trace,
};
use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::port::pcap::CaptureInterface;
use railyard_dataplane::wire::MacAddr;
use railyard_pcap_tests::{compile_text, read_pcap, write_pcap, Timed};

const CONFIG: &str = "
hostname capsw
interface Ethernet1/1-3
  no switchport
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

/// UDP frames from the host behind Ethernet1/`n` to 10.0.3.2, `gap` ns apart.
fn frames(n: u8, count: u64, gap: u64) -> Vec<Timed> {
    let mut s = FrameSpec::udp(
        MacAddr([2, 0, 0, 0, 0, n]),
        MacAddr([2, 0xaa, 0, 0, 0, n]),
        IpAddr::V4([10, 0, n, 2].into()),
        IpAddr::V4([10, 0, 3, 2].into()),
    );
    s.frame_len = 200;
    (0..count)
        .map(|k| {
            (
                1_700_000_000_000_000_000 + k * gap + u64::from(n) * 7,
                build(&s, k),
            )
        })
        .collect()
}

/// Replays `traces` (switch interface, file, capture interface) and reads
/// back what Ethernet1/3 sent.
fn run(
    dir: &Path,
    traces: &[(&str, PathBuf, CaptureInterface)],
    options: &ReplayOptions,
) -> std::io::Result<(ReplayReport, Vec<Timed>)> {
    let compiled = compile_text(CONFIG);
    let inputs: Vec<_> = traces
        .iter()
        .map(|(name, path, interface)| Trace {
            port: compiled
                .model
                .interfaces
                .iter()
                .position(|i| i.name == *name)
                .expect("interface"),
            path: path.clone(),
            interface: interface.clone(),
        })
        .collect();
    let out = dir.join(format!("out-{}", rand_suffix()));
    let report = replay_traces(&compiled.model, &inputs, &out, options, |_, _| {})?;
    let sent = read_pcap(&output_path(&out, "Ethernet1/3"));
    Ok((report, sent))
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Every frame received is forwarded, punted or dropped.
fn assert_accounted(report: &ReplayReport) -> Summary {
    let s = Summary::of(&report.stats, report.virtual_ns);
    assert_eq!(s.received, s.forwarded + s.punted + s.dropped, "{s:?}");
    s
}

fn tool(cmd: &str, args: &[&str]) {
    let status = Command::new(cmd)
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(status.success(), "{cmd} {args:?}: {status}");
}

#[test]
#[ignore = "needs editcap, tshark and mergecap; run by scripts/test.sh, which installs tshark"]
fn pcapng_from_the_wireshark_tools_replays_as_its_pcap_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (a, b) = (dir.join("a.pcap"), dir.join("b.pcap"));
    write_pcap(&a, &frames(1, 50, 1_000));
    write_pcap(&b, &frames(2, 50, 1_500));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let only = CaptureInterface::Only;
    let options = ReplayOptions::default();
    let (base, base_sent) = run(
        dir,
        &[
            ("Ethernet1/1", a.clone(), only.clone()),
            ("Ethernet1/2", b.clone(), only.clone()),
        ],
        &options,
    )
    .unwrap();
    assert_eq!(base_sent.len(), 100);
    let base_summary = assert_accounted(&base);

    // One file per interface, converted by editcap and written by tshark.
    let (a_ng, b_ng) = (dir.join("a.pcapng"), dir.join("b.pcapng"));
    tool("editcap", &["-F", "pcapng", &s(&a), &s(&a_ng)]);
    tool("tshark", &["-r", &s(&b), "-F", "pcapng", "-w", &s(&b_ng)]);
    assert_eq!(
        &std::fs::read(&a_ng).unwrap()[..4],
        &[0x0a, 0x0d, 0x0d, 0x0a]
    );
    let (ng, ng_sent) = run(
        dir,
        &[
            ("Ethernet1/1", a_ng.clone(), only.clone()),
            ("Ethernet1/2", b_ng.clone(), only.clone()),
        ],
        &options,
    )
    .unwrap();
    assert_eq!(ng_sent, base_sent);
    assert_eq!(assert_accounted(&ng), base_summary);

    // Both in one capture of two interfaces, as mergecap (or dumpcap -i a -i b) writes it.
    let both = dir.join("both.pcapng");
    tool(
        "mergecap",
        &[
            "-F",
            "pcapng",
            "-I",
            "none",
            "-w",
            &s(&both),
            &s(&a),
            &s(&b),
        ],
    );
    let e = run(
        dir,
        &[("Ethernet1/1", both.clone(), only.clone())],
        &options,
    )
    .expect_err("a capture of two interfaces needs a choice");
    assert!(e.to_string().contains("several interfaces: 0 ("), "{e}");
    let (merged, merged_sent) = run(
        dir,
        &[
            ("Ethernet1/1", both.clone(), CaptureInterface::Index(0)),
            ("Ethernet1/2", both.clone(), CaptureInterface::Index(1)),
        ],
        &options,
    )
    .unwrap();
    assert_eq!(merged_sent, base_sent);
    assert_eq!(assert_accounted(&merged), base_summary);
}

#[test]
fn a_damaged_trace_fails_the_replay_unless_told_to_stop_there() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let path = dir.join("cut.pcap");
    write_pcap(&path, &frames(1, 10, 1_000));
    let bytes = std::fs::read(&path).unwrap();
    // Cut inside the eighth record's frame.
    let record = 16 + 200;
    let cut = 24 + 7 * record + 20;
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let input = [("Ethernet1/1", path.clone(), CaptureInterface::Only)];

    let e = run(dir, &input, &ReplayOptions::default()).expect_err("a damaged trace fails");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("record 8 at byte offset {}", 24 + 7 * record)),
        "{msg}"
    );
    assert!(msg.contains("cut.pcap"), "{msg}");

    let options = ReplayOptions {
        stop_at_damage: true,
        ..ReplayOptions::default()
    };
    let (report, sent) = run(dir, &input, &options).unwrap();
    assert_eq!(sent.len(), 7);
    let i = &report.stats.interfaces["Ethernet1/1"];
    assert_eq!(i.drops["capture_damaged"], 1);
    let s = assert_accounted(&report);
    assert_eq!((s.received, s.dropped, s.dropped_by_port), (8, 1, 1));
}

#[test]
fn frames_too_long_for_a_buffer_are_dropped_by_reason_and_summed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let path = dir.join("big.pcap");
    let mut trace = frames(1, 4, 1_000);
    // A GRO super-frame as a capture on a host shows it.
    trace[2].1.resize(20_000, 0);
    write_pcap(&path, &trace);
    let (report, sent) = run(
        dir,
        &[("Ethernet1/1", path, CaptureInterface::Only)],
        &ReplayOptions::default(),
    )
    .unwrap();
    assert_eq!(sent.len(), 3);
    let i = &report.stats.interfaces["Ethernet1/1"];
    assert_eq!((i.drops["oversize"], i.backend_rx_dropped), (1, 1));
    let s = assert_accounted(&report);
    assert_eq!((s.received, s.forwarded, s.dropped), (4, 3, 1));
    let mut text = Vec::new();
    railyard_control::replay::print_summary(&mut text, &report).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("replayed 4 frames"), "{text}");
    assert!(text.contains("1 dropped (1 by the ports"), "{text}");
    assert!(text.contains("oversize"), "{text}");
}
