//! Tests of pcapng output: blocks checked byte by byte against the spec,
//! and files read back through the pcapng reader.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use super::ng::*;
use super::*;
use crate::packet::{Burst, Pool};

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
}

/// Options from `at` to the end marker, as (code, value), checking each
/// is padded to 32 bits.
fn options(b: &[u8], mut at: usize) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    loop {
        assert_eq!(at % 4, 0, "option at {at} not 32-bit aligned");
        let code = u16_at(b, at);
        let len = usize::from(u16_at(b, at + 2));
        if code == 0 {
            assert_eq!(len, 0);
            return out;
        }
        let value = b[at + 4..at + 4 + len].to_vec();
        let padded = (len + 3) & !3;
        assert!(b[at + 4 + len..at + 4 + padded].iter().all(|&x| x == 0));
        out.push((code, value));
        at += 4 + padded;
    }
}

/// Checks a block's framing (total length at both ends, a multiple of 4)
/// and returns its type and length.
fn block(b: &[u8]) -> (u32, usize) {
    let kind = u32_at(b, 0);
    let len = u32_at(b, 4) as usize;
    assert_eq!(len % 4, 0);
    assert_eq!(u32_at(b, len - 4) as usize, len, "trailing total length");
    (kind, len)
}

#[test]
fn section_header_has_the_magics_and_unknown_length() {
    let mut w = BlockWriter::new();
    w.section_header("railyard x");
    let b = w.bytes();
    let (kind, len) = block(b);
    assert_eq!(kind, 0x0A0D_0D0A);
    assert_eq!(&b[0..4], &[0x0A, 0x0D, 0x0D, 0x0A]); // same in either order
    assert_eq!(len, b.len());
    assert_eq!(u32_at(b, 8), 0x1A2B_3C4D);
    assert_eq!((u16_at(b, 12), u16_at(b, 14)), (1, 0));
    assert_eq!(&b[16..24], &[0xff; 8]);
    // "railyard x" is 10 bytes: padded to 12.
    assert_eq!(options(b, 24), vec![(4, b"railyard x".to_vec())]);
    assert_eq!(len, 24 + 4 + 12 + 4 + 4);
}

#[test]
fn interface_block_names_the_port_and_says_nanoseconds() {
    let mut w = BlockWriter::new();
    w.interface("Ethernet1/3", "railyard port Ethernet1/3", 65_535);
    let b = w.bytes();
    let (kind, len) = block(b);
    assert_eq!((kind, len), (1, b.len()));
    assert_eq!(u16_at(b, 8), 1, "LINKTYPE_ETHERNET");
    assert_eq!(u16_at(b, 10), 0, "reserved");
    assert_eq!(u32_at(b, 12), 65_535);
    assert_eq!(
        options(b, 16),
        vec![
            (2, b"Ethernet1/3".to_vec()),
            (3, b"railyard port Ethernet1/3".to_vec()),
            (9, vec![9]),
        ]
    );
    // 16 + (4+12) + (4+28) + (4+4) + end 4 + trailer 4
    assert_eq!(len, 16 + 16 + 32 + 8 + 4 + 4);
}

#[test]
fn packet_block_holds_time_lengths_padded_data_comment_and_flags() {
    let mut w = BlockWriter::new();
    let ts = 0x0000_0001_2345_6789u64;
    let data: Vec<u8> = (0..61).collect();
    w.packet(
        3,
        ts,
        &data,
        65_535,
        FLAGS_INBOUND,
        Some("railyard drop: wred"),
    );
    let b = w.bytes();
    let (kind, len) = block(b);
    assert_eq!((kind, len), (6, b.len()));
    assert_eq!(u32_at(b, 8), 3);
    assert_eq!(u32_at(b, 12), 1);
    assert_eq!(u32_at(b, 16), 0x2345_6789);
    assert_eq!((u32_at(b, 20), u32_at(b, 24)), (61, 61));
    assert_eq!(&b[28..89], &data[..]);
    assert_eq!(&b[89..92], &[0, 0, 0]);
    assert_eq!(
        options(b, 92),
        vec![
            (1, b"railyard drop: wred".to_vec()),
            (2, FLAGS_INBOUND.to_ne_bytes().to_vec()),
        ]
    );
}

#[test]
fn snaplen_cuts_the_captured_bytes_not_the_original_length() {
    let mut w = BlockWriter::new();
    w.packet(0, 0, &[7u8; 100], 64, FLAGS_OUTBOUND, None);
    let b = w.bytes();
    block(b);
    assert_eq!((u32_at(b, 20), u32_at(b, 24)), (64, 100));
    assert_eq!(options(b, 28 + 64), vec![(2, vec![2, 0, 0, 0])]);
}

#[test]
fn an_overlong_comment_is_cut_and_the_block_stays_whole() {
    let mut w = BlockWriter::new();
    let long = "x".repeat(70_000);
    w.packet(0, 0, &[1u8; 14], 65_535, FLAGS_INBOUND, Some(&long));
    let (_, len) = block(w.bytes());
    assert_eq!(len, w.bytes().len());
    let opts = options(w.bytes(), 28 + 16);
    assert_eq!(opts[0].1.len() % 4, 0);
    assert!(opts[0].1.len() <= usize::from(u16::MAX));
}

#[test]
fn sinks_share_one_file_that_the_reader_replays_per_interface() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("railyard.pcapng");
    let cap = NgCapture::create(&path, &["Ethernet1/1", "Ethernet1/2"], 65_535).unwrap();
    let epoch = 1_700_000_000 * NANOS_PER_SEC;
    let mut a = PcapSink::pcapng(cap.clone(), 0, epoch);
    let mut b = PcapSink::pcapng(cap.clone(), 1, epoch);
    let pool = Pool::new(16);
    let send = |sink: &mut PcapSink, ts: u64, fill: u8| {
        let mut f = vec![fill; 60];
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        let mut p = pool.alloc_from(&f).unwrap();
        p.timestamp = ts;
        let mut burst = Burst::new();
        burst.push(p);
        assert_eq!(sink.tx_burst(&mut burst), 1);
        assert!(burst.is_empty());
    };
    send(&mut a, 1_000, 0xa1);
    send(&mut b, 1_500, 0xb1);
    send(&mut a, 2_000, 0xa2);
    cap.write(
        1,
        epoch + 1_700,
        &[0xb2; 60],
        FLAGS_INBOUND,
        Some("railyard drop: wred"),
    );
    a.flush().unwrap();
    b.flush().unwrap();
    assert_eq!((a.tx_frames(), b.tx_frames(), cap.frames()), (2, 1, 4));

    let read = |pick: &str| {
        let opts = TraceOptions {
            interface: pick.parse().unwrap(),
            stop_at_damage: false,
        };
        let mut src = PcapSource::open_aligned_with(&path, epoch, &opts).unwrap();
        let mut got = Vec::new();
        loop {
            let mut burst = Burst::new();
            if src.rx_burst(&pool, &mut burst, u64::MAX) == 0 {
                break;
            }
            got.extend(burst.iter().map(|p| (p.timestamp, p.data()[0])));
            crate::packet::free_burst(&mut burst);
        }
        got
    };
    assert_eq!(read("Ethernet1/1"), vec![(1_000, 0xa1), (2_000, 0xa2)]);
    assert_eq!(read("1"), vec![(1_500, 0xb1), (1_700, 0xb2)]);
}

#[test]
fn a_capture_in_a_missing_directory_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/railyard.pcapng");
    assert!(NgCapture::create(path, &["Ethernet1/1"], 65_535).is_err());
}
