//! Tests of pcapng input: blocks built byte by byte in both byte orders,
//! timestamp resolutions, interface choice, skipped blocks, damage.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly
use std::path::Path;

use pcap_file::TsResolution;

use super::*;
use crate::clock::Nanos;
use crate::packet::{Burst, Pool, MAX_FRAME};

const T0_S: u64 = 1_700_000_000;
const T0: u64 = T0_S * NANOS_PER_SEC;

fn frame(seq: u8, len: usize) -> Vec<u8> {
    let mut f = vec![seq; len];
    f[..12].copy_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f
}

/// A pcapng file built block by block, in either byte order.
struct Ng {
    be: bool,
    out: Vec<u8>,
}

impl Ng {
    fn new(be: bool) -> Ng {
        let mut ng = Ng {
            be,
            out: Vec::new(),
        };
        ng.section();
        ng
    }

    fn u16(&self, v: u16) -> [u8; 2] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    fn u32(&self, v: u32) -> [u8; 4] {
        if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }

    /// Options with their end marker.
    fn options(&self, opts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut o = Vec::new();
        for (code, v) in opts {
            o.extend(self.u16(*code));
            o.extend(self.u16(v.len() as u16));
            o.extend(v);
            o.resize(o.len().div_ceil(4) * 4, 0);
        }
        if !opts.is_empty() {
            o.extend([0; 4]);
        }
        o
    }

    fn block(&mut self, kind: u32, body: &[u8]) -> &mut Ng {
        let mut body = body.to_vec();
        body.resize(body.len().div_ceil(4) * 4, 0);
        let total = self.u32(12 + body.len() as u32);
        self.out.extend(self.u32(kind));
        self.out.extend(total);
        self.out.extend(body);
        self.out.extend(total);
        self
    }

    fn section(&mut self) -> &mut Ng {
        let mut b = Vec::new();
        b.extend(self.u32(0x1A2B_3C4D));
        b.extend(self.u16(1));
        b.extend(self.u16(0));
        b.extend([0xff; 8]); // section length unknown
        b.extend(self.options(&[(4, b"railyard test".to_vec())]));
        self.block(0x0A0D_0D0A, &b)
    }

    fn interface(&mut self, link: u16, name: &str, tsresol: Option<u8>) -> &mut Ng {
        let mut b = Vec::new();
        b.extend(self.u16(link));
        b.extend(self.u16(0));
        b.extend(self.u32(262_144));
        let mut opts = vec![(2, name.as_bytes().to_vec())];
        if let Some(r) = tsresol {
            opts.push((9, vec![r]));
        }
        b.extend(self.options(&opts));
        self.block(1, &b)
    }

    fn enhanced(&mut self, iface: u32, raw_ts: u64, data: &[u8], orig: u32) -> &mut Ng {
        let mut b = Vec::new();
        b.extend(self.u32(iface));
        b.extend(self.u32((raw_ts >> 32) as u32));
        b.extend(self.u32(raw_ts as u32));
        b.extend(self.u32(data.len() as u32));
        b.extend(self.u32(orig));
        b.extend(data);
        b.resize(b.len().div_ceil(4) * 4, 0);
        // A comment and a flags word, as Wireshark writes them.
        b.extend(self.options(&[(1, b"edited".to_vec()), (2, self.u32(1).to_vec())]));
        self.block(6, &b)
    }

    fn simple(&mut self, data: &[u8], orig: u32) -> &mut Ng {
        let mut b = Vec::new();
        b.extend(self.u32(orig));
        b.extend(data);
        self.block(3, &b)
    }

    /// Blocks a replay has no use for: name resolution, interface
    /// statistics, a custom block, decryption secrets.
    fn noise(&mut self) -> &mut Ng {
        let mut nrb = Vec::new();
        nrb.extend(self.u16(1));
        nrb.extend(self.u16(14));
        nrb.extend([10, 0, 0, 1]);
        nrb.extend(b"host.local\0");
        nrb.resize(nrb.len().div_ceil(4) * 4, 0);
        nrb.extend([0; 4]);
        self.block(4, &nrb);
        let mut isb = Vec::new();
        isb.extend(self.u32(0));
        isb.extend([0; 8]);
        self.block(5, &isb);
        self.block(0x4000_0BAD, &[0x00, 0x00, 0x7e, 0xd9, 1, 2, 3]);
        self.block(0x0000_000A, &[0x4b, 0x53, 0x4c, 0x4b, 0, 0, 0, 0])
    }

    fn write(&self, path: &Path) {
        std::fs::write(path, &self.out).unwrap();
    }
}

/// Every frame of a trace with its trace time.
fn drain(src: &mut PcapSource) -> Vec<(Nanos, Vec<u8>)> {
    let pool = Pool::new(256);
    let mut got = Vec::new();
    loop {
        let mut burst = Burst::new();
        if src.rx_burst(&pool, &mut burst, u64::MAX) == 0 {
            break;
        }
        got.extend(burst.iter().map(|p| (p.timestamp, p.data().to_vec())));
    }
    got
}

fn open(path: &Path, interface: CaptureInterface) -> std::io::Result<PcapSource> {
    PcapSource::open_aligned_with(
        path,
        T0,
        &TraceOptions {
            interface,
            stop_at_damage: false,
        },
    )
}

fn classic(path: &Path, recs: &[(u64, Vec<u8>)]) {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let header = PcapHeader {
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(std::fs::File::create(path).unwrap(), header).unwrap();
    for (ts, data) in recs {
        let p = PcapPacket::new(
            std::time::Duration::from_nanos(*ts),
            data.len() as u32,
            data,
        );
        w.write_packet(&p).unwrap();
    }
}

#[test]
fn pcapng_in_both_byte_orders_replays_as_its_pcap_does() {
    let dir = tempfile::tempdir().unwrap();
    let times = [T0, T0 + 1_000, T0 + 2_500_000, T0 + 3_000_000_001];
    let recs: Vec<_> = times
        .iter()
        .enumerate()
        .map(|(i, t)| (*t, frame(i as u8, 60 + i)))
        .collect();
    let pcap = dir.path().join("a.pcap");
    classic(&pcap, &recs);
    let expected = drain(&mut open(&pcap, CaptureInterface::Only).unwrap());
    assert_eq!(expected.len(), 4);
    assert_eq!(expected[3].0, 3_000_000_001);
    for be in [false, true] {
        let mut ng = Ng::new(be);
        ng.noise().interface(1, "eth0", Some(9));
        for (t, f) in &recs {
            ng.enhanced(0, *t, f, f.len() as u32).noise();
        }
        let path = dir.path().join(format!("a-{be}.pcapng"));
        ng.write(&path);
        assert_eq!(
            PcapSource::first_timestamp(&path).unwrap(),
            Some(T0),
            "big endian {be}"
        );
        let mut src = open(&path, CaptureInterface::Only).unwrap();
        assert_eq!(drain(&mut src), expected, "big endian {be}");
        assert!(src.exhausted());
        assert_eq!((src.read_errors(), src.damage()), (0, None));
    }
}

#[test]
fn timestamp_resolutions_are_per_interface_including_powers_of_two() {
    let dir = tempfile::tempdir().unwrap();
    let mut ng = Ng::new(false);
    // Interface 0: the default microseconds; 1: 2^-10 s; 2: 10^-9 s.
    ng.interface(1, "usec", None)
        .interface(1, "pow2", Some(0x80 | 10))
        .interface(1, "nsec", Some(9));
    ng.enhanced(0, T0_S * 1_000_000 + 250_000, &frame(0, 60), 60)
        .enhanced(1, T0_S * 1024 + 512, &frame(1, 60), 60)
        .enhanced(2, T0 + 750_000_001, &frame(2, 60), 60);
    let path = dir.path().join("res.pcapng");
    ng.write(&path);
    let at = |i: u32| {
        let mut src = open(&path, CaptureInterface::Index(i)).unwrap();
        let got = drain(&mut src);
        assert_eq!(got.len(), 1, "interface {i}");
        assert_eq!(got[0].1, frame(i as u8, 60));
        got[0].0
    };
    assert_eq!(at(0), 250_000_000);
    assert_eq!(at(1), 500_000_000);
    assert_eq!(at(2), 750_000_001);
}

#[test]
fn one_interface_of_several_is_picked_by_number_or_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut ng = Ng::new(true);
    ng.interface(1, "eth0", Some(9))
        .interface(1, "eth1", Some(9))
        .interface(113, "any", Some(9));
    for k in 0..6u64 {
        ng.enhanced((k % 2) as u32, T0 + k * 100, &frame(k as u8, 64), 64);
    }
    let path = dir.path().join("multi.pcapng");
    ng.write(&path);

    let e = PcapSource::first_timestamp(&path).unwrap_err().to_string();
    assert!(e.contains("several interfaces"), "{e}");
    assert!(
        e.contains("0 (eth0, Ethernet), 1 (eth1, Ethernet), 2 (any, link type 113)"),
        "{e}"
    );
    assert!(e.contains("record 1 at byte offset"), "{e}");

    for pick in [
        CaptureInterface::Index(1),
        CaptureInterface::Name("eth1".into()),
    ] {
        let got = drain(&mut open(&path, pick.clone()).unwrap());
        let want: Vec<_> = [1u64, 3, 5]
            .iter()
            .map(|k| (k * 100, frame(*k as u8, 64)))
            .collect();
        assert_eq!(got, want, "{pick:?}");
    }
    let e = PcapSource::first_timestamp_of(&path, &CaptureInterface::Index(7))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no interface 7; its interfaces: 0 (eth0"), "{e}");
    let e = PcapSource::first_timestamp_of(&path, &CaptureInterface::Name("any".into()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 (any, link type 113) is not Ethernet"), "{e}");

    // A classic pcap has only interface 0.
    let pcap = dir.path().join("one.pcap");
    classic(&pcap, &[(T0, frame(0, 60))]);
    assert!(PcapSource::first_timestamp_of(&pcap, &CaptureInterface::Index(0)).is_ok());
    let e = PcapSource::first_timestamp_of(&pcap, &CaptureInterface::Index(1)).unwrap_err();
    assert!(e.to_string().contains("single interface"), "{e}");
}

#[test]
fn simple_packet_blocks_take_the_time_before_them_and_the_snaplen() {
    let dir = tempfile::tempdir().unwrap();
    let mut ng = Ng::new(false);
    ng.interface(1, "eth0", Some(9));
    ng.enhanced(0, T0 + 40, &frame(0, 60), 60)
        .simple(&frame(1, 70), 70)
        // Captured 64 of a 1500-byte frame: delivered as captured.
        .enhanced(0, T0 + 90, &frame(2, 64), 1500);
    let path = dir.path().join("spb.pcapng");
    ng.write(&path);
    let mut src = open(&path, CaptureInterface::Only).unwrap();
    let got = drain(&mut src);
    assert_eq!(
        got,
        vec![(40, frame(0, 60)), (40, frame(1, 70)), (90, frame(2, 64))]
    );
    assert_eq!(src.truncated(), 1);
}

#[test]
fn oversize_pcapng_frames_are_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut ng = Ng::new(false);
    ng.interface(1, "eth0", Some(9));
    let big = frame(1, MAX_FRAME + 1);
    ng.enhanced(0, T0, &frame(0, 60), 60)
        .enhanced(0, T0 + 1, &big, big.len() as u32)
        .enhanced(0, T0 + 2, &frame(2, 60), 60);
    let path = dir.path().join("big.pcapng");
    ng.write(&path);
    let mut src = open(&path, CaptureInterface::Only).unwrap();
    assert_eq!(drain(&mut src).len(), 2);
    assert_eq!((src.rx_dropped(), src.rx_oversize()), (1, 1));
    assert_eq!(src.damage(), None);
}

#[test]
fn a_damaged_pcapng_names_the_record_and_offset_and_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut ng = Ng::new(false);
    let shb = ng.out.len();
    ng.interface(1, "eth0", Some(9));
    let start = ng.out.len();
    for k in 0..3u64 {
        ng.enhanced(0, T0 + k, &frame(k as u8, 60), 60);
    }
    let epb = (ng.out.len() - start) / 3;
    let bytes = ng.out.clone();
    for cut in 0..bytes.len() {
        let path = dir.path().join(format!("cut{cut}.pcapng"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let Ok(mut src) = open(&path, CaptureInterface::Only) else {
            assert!(cut < 24, "cut at {cut}");
            continue;
        };
        let got = drain(&mut src);
        let whole = cut.saturating_sub(start) / epb;
        assert_eq!(got.len(), whole, "cut at {cut}");
        // Clean cuts: between blocks.
        let clean = cut == shb || cut == start + whole * epb;
        assert_eq!(
            src.damage().is_some(),
            !clean,
            "cut at {cut}: {:?}",
            src.damage()
        );
    }
    // The second block cut short: record 2, at its own offset.
    let path = dir.path().join("cut.pcapng");
    std::fs::write(&path, &bytes[..start + epb + 30]).unwrap();
    let mut src = open(&path, CaptureInterface::Only).unwrap();
    assert_eq!(drain(&mut src).len(), 1);
    let e = src.damage().unwrap();
    assert!(
        e.contains(&format!("record 2 at byte offset {}", start + epb)),
        "{e}"
    );
    // A trailing length that disagrees is damage too.
    let mut bad = bytes.clone();
    bad[start + epb - 4] ^= 0x40;
    std::fs::write(&path, &bad).unwrap();
    let mut src = open(&path, CaptureInterface::Only).unwrap();
    assert_eq!(drain(&mut src).len(), 0);
    let e = src.damage().unwrap();
    assert!(e.contains("does not match its trailing length"), "{e}");
}

#[test]
fn a_trace_told_to_stop_at_damage_counts_it_as_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.pcap");
    classic(&path, &[(T0, frame(0, 60)), (T0 + 5, frame(1, 60))]);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();

    let mut strict = open(&path, CaptureInterface::Only).unwrap();
    assert_eq!(drain(&mut strict).len(), 1);
    let e = strict.damage().unwrap();
    let second = FILE_HEADER_LEN + RECORD_HEADER_LEN + 60;
    assert!(
        e.contains(&format!(
            "record 2 at byte offset {second}: file ends inside a record"
        )),
        "{e}"
    );
    let mut port = PcapPort::new(Some(strict), None);
    assert!(crate::port::Port::flush(&mut port).is_err());

    let options = TraceOptions {
        interface: CaptureInterface::Only,
        stop_at_damage: true,
    };
    let lenient = PcapSource::open_aligned_with(&path, T0, &options).unwrap();
    let mut port = PcapPort::new(Some(lenient), None);
    let pool = Pool::new(8);
    let mut burst = Burst::new();
    use crate::port::Port;
    assert_eq!(port.rx_burst(&pool, &mut burst, u64::MAX), 1);
    assert!(port.flush().is_ok());
    let c = port.io_counters();
    assert_eq!((c.rx_frames, c.rx_dropped, c.rx_damaged), (1, 1, 1));
}

#[test]
fn timestamps_going_back_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("back.pcap");
    classic(
        &path,
        &[
            (T0 + 100, frame(0, 60)),
            (T0 + 50, frame(1, 60)),
            (T0 + 200, frame(2, 60)),
            (T0 + 150, frame(3, 60)),
        ],
    );
    let mut src = open(&path, CaptureInterface::Only).unwrap();
    let got = drain(&mut src);
    assert_eq!(got.len(), 4);
    // Delivered in file order.
    assert_eq!(got[1].1, frame(1, 60));
    assert_eq!(src.out_of_order(), 2);
}
