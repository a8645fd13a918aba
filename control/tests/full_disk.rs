//! `railyard replay --out` on a disk that fills: a clear error naming the
//! file, a non-zero exit, and output files that end on a whole record.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::wire::MacAddr;

/// Two routed ports; the host behind Ethernet1/2 is resolved statically.
const SWITCH: &str = "hostname sw
interface Ethernet1/1
  no switchport
  mac-address 02:00:00:00:01:01
  ip address 10.0.1.1/24
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
  ip arp 10.0.2.2 02:00:00:00:00:02
";

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct SmallDisk {
    dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("small");
        std::fs::create_dir(&dir).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(st.success(), "mount a tmpfs");
        SmallDisk {
            dir,
            _parent: parent,
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// 3,000 UDP datagrams of about 1 KB from the host behind Ethernet1/1 to
/// the one behind Ethernet1/2, 10 µs apart: 3 MB, more than the disk holds.
fn write_trace(path: &Path) {
    use pcap_file::pcap::{PcapPacket, PcapWriter};
    let spec = FrameSpec {
        frame_len: 1000,
        ..FrameSpec::udp(
            MacAddr([2, 0, 0, 0, 0, 1]),
            MacAddr([2, 0, 0, 0, 1, 1]),
            "10.0.1.2".parse().unwrap(),
            "10.0.2.2".parse().unwrap(),
        )
    };
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for k in 0..3000u64 {
        let f = build(&spec, k);
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(1_000_000 + 10 * k),
            f.len() as u32,
            &f,
        ))
        .unwrap();
    }
}

/// Replays the trace into `out`, expecting the full-disk failure; returns
/// how many frames the error says the file kept.
fn replay_fails_cleanly(dir: &Path, out: &Path, file: &Path, extra: &[&str]) -> u64 {
    let conf = dir.join("sw.conf");
    std::fs::write(&conf, SWITCH).unwrap();
    let trace = dir.join("in.pcap");
    write_trace(&trace);
    let pcap = format!("e1/1={}", trace.display());
    let mut args = vec!["replay", "-c", conf.to_str().unwrap(), "--pcap", &pcap];
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o: Output = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(&args)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let file = file.display().to_string();
    let line = err
        .lines()
        .find(|l| l.starts_with("replay: "))
        .unwrap_or_else(|| panic!("no error line:\n{err}"));
    assert!(line.contains(&file), "names the file: {line}");
    assert!(line.contains("No space left on device"), "{line}");
    let kept = line
        .split("cut back to its last whole record (")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("says what the file keeps: {line}"));
    assert!(
        kept > 100,
        "a full megabyte holds hundreds of frames: {line}"
    );
    kept
}

/// What tshark reads in `file`: its frame count, and anything it says on
/// stderr (a file cut short in the middle of a packet is reported there).
fn tshark_frames(file: &Path) -> (u64, String) {
    let o = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(file)
        .args(["-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark (scripts/test.sh installs it)");
    let stderr = text(&o.stderr)
        .lines()
        .filter(|l| !l.starts_with("Running as user"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(o.status.success(), "tshark -r {}: {stderr}", file.display());
    (text(&o.stdout).lines().count() as u64, stderr)
}

#[test]
#[ignore = "needs root (mounts a tmpfs) and tshark"]
fn replay_on_a_full_disk_leaves_whole_pcap_records() {
    let disk = SmallDisk::mount("1m");
    let work = tempfile::tempdir().unwrap();
    let file = disk.dir.join("Ethernet1_2.pcap");
    let kept = replay_fails_cleanly(work.path(), &disk.dir, &file, &[]);
    let (frames, complaints) = tshark_frames(&file);
    assert_eq!(frames, kept);
    assert_eq!(complaints, "", "tshark reads it whole");
    // The records add up to the file's length exactly.
    let len = std::fs::metadata(&file).unwrap().len();
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut bytes = 24;
    while let Some(p) = r.next_packet() {
        bytes += 16 + p.unwrap().data.len() as u64;
    }
    assert_eq!(bytes, len);
}

#[test]
#[ignore = "needs root (mounts a tmpfs) and tshark"]
fn replay_on_a_full_disk_leaves_whole_pcapng_blocks() {
    let disk = SmallDisk::mount("1m");
    let work = tempfile::tempdir().unwrap();
    let file = disk.dir.join("railyard.pcapng");
    let kept = replay_fails_cleanly(work.path(), &disk.dir, &file, &["--out-format", "pcapng"]);
    let (frames, complaints) = tshark_frames(&file);
    assert_eq!(frames, kept);
    assert_eq!(complaints, "", "tshark reads it whole");
}
