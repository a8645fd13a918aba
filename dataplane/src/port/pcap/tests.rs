//! Tests of the pcap port: reading, replay timing, the sink and the
//! closed loop.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};

use std::fs::File;
use std::io::ErrorKind;
use std::path::Path;

use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, TsResolution};

use super::sink::STASH;
use super::*;
use crate::clock::Nanos;
use crate::packet::{Burst, Pool, BURST_SIZE, MAX_FRAME};
use crate::port::upstream::PfcUpstream;
use crate::port::Port;

const T0: u64 = 1_700_000_000 * NANOS_PER_SEC;

fn frame(seq: u8, len: usize) -> Vec<u8> {
    let mut f = vec![seq; len];
    f[..12].copy_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f
}

/// Writes `(abs ns, captured bytes, original length)` records.
fn write_pcap(path: &Path, res: TsResolution, link: DataLink, recs: &[(u64, Vec<u8>, u32)]) {
    let header = PcapHeader {
        ts_resolution: res,
        datalink: link,
        snaplen: 65_535,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(File::create(path).unwrap(), header).unwrap();
    for (ts, data, orig) in recs {
        w.write_packet(&PcapPacket::new(Duration::from_nanos(*ts), *orig, data))
            .unwrap();
    }
}

fn simple(path: &Path, res: TsResolution, times: &[u64]) {
    let recs: Vec<_> = times
        .iter()
        .enumerate()
        .map(|(i, t)| (*t, frame(i as u8, 60), 60))
        .collect();
    write_pcap(path, res, DataLink::ETHERNET, &recs);
}

#[test]
fn replay_is_gated_by_virtual_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.pcap");
    simple(
        &path,
        TsResolution::MicroSecond,
        &[T0, T0 + 10_000, T0 + 25_000],
    );
    let pool = Pool::new(8);
    let mut src = PcapSource::open(&path, 500).unwrap();
    let mut burst = Burst::new();
    assert_eq!(src.next_rx_time(), Some(500));
    assert_eq!(src.rx_burst(&pool, &mut burst, 499), 0);
    assert_eq!(src.rx_burst(&pool, &mut burst, 500), 1);
    assert_eq!(burst[0].timestamp, 500);
    assert_eq!(burst[0].data(), &frame(0, 60)[..]);
    assert_eq!(src.next_rx_time(), Some(10_500));
    assert_eq!(src.rx_burst(&pool, &mut burst, 10_499), 0);
    assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 2);
    assert_eq!(burst[1].timestamp, 10_500);
    assert_eq!(burst[2].timestamp, 25_500);
    assert_eq!(burst[2].data(), &frame(2, 60)[..]);
    assert!(src.exhausted());
    assert_eq!(src.next_rx_time(), None);
    assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 0);
    assert_eq!(
        (src.rx_frames(), src.rx_dropped(), src.read_errors()),
        (3, 0, 0)
    );
}

#[test]
fn nanosecond_traces_keep_their_precision() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ns.pcap");
    simple(
        &path,
        TsResolution::NanoSecond,
        &[T0 + 7, T0 + 1_000_000_123],
    );
    let mut src = PcapSource::open(&path, 0).unwrap();
    let pool = Pool::new(4);
    let mut burst = Burst::new();
    assert_eq!(src.rx_burst(&pool, &mut burst, 0), 1);
    assert_eq!(src.next_rx_time(), Some(1_000_000_116));
    assert_eq!(PcapSource::first_timestamp(&path).unwrap(), Some(T0 + 7));
}

#[test]
fn bursts_are_capped_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.pcap");
    simple(&path, TsResolution::MicroSecond, &[T0; 40]);
    let pool = Pool::new(64);
    let mut src = PcapSource::open(&path, 0).unwrap();
    let mut burst = Burst::new();
    assert_eq!(src.rx_burst(&pool, &mut burst, 0), BURST_SIZE);
    assert_eq!(src.rx_burst(&pool, &mut burst, 0), 0);
    burst.clear();
    assert_eq!(src.rx_burst(&pool, &mut burst, 0), 8);
    assert_eq!(burst[7].data()[20], 39);
    assert!(src.exhausted());
}

#[test]
fn files_align_to_a_common_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.pcap"), dir.path().join("b.pcap"));
    simple(&a, TsResolution::MicroSecond, &[T0 + 5_000, T0 + 6_000]);
    simple(&b, TsResolution::NanoSecond, &[T0 + 1, T0 + 5_500]);
    let epoch = [&a, &b]
        .iter()
        .filter_map(|p| PcapSource::first_timestamp(p).unwrap())
        .min()
        .unwrap();
    assert_eq!(epoch, T0 + 1);
    let sa = PcapSource::open_aligned(&a, epoch).unwrap();
    let sb = PcapSource::open_aligned(&b, epoch).unwrap();
    assert_eq!(sa.next_rx_time(), Some(4_999));
    assert_eq!(sb.next_rx_time(), Some(0));
    // Frames before the epoch arrive at time zero rather than wrapping.
    let late = PcapSource::open_aligned(&b, T0 + 100).unwrap();
    assert_eq!(late.next_rx_time(), Some(0));
}

#[test]
fn oversize_frames_and_pool_misses_are_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.pcap");
    let recs = vec![
        (T0, frame(0, MAX_FRAME + 1), (MAX_FRAME + 1) as u32),
        (T0 + 1_000, frame(1, MAX_FRAME), MAX_FRAME as u32),
        (T0 + 2_000, frame(2, 64), 64),
        (T0 + 3_000, frame(3, 64), 64),
    ];
    write_pcap(&path, TsResolution::MicroSecond, DataLink::ETHERNET, &recs);
    let pool = Pool::new(1);
    let mut src = PcapSource::open(&path, 0).unwrap();
    let mut burst = Burst::new();
    assert_eq!(src.rx_burst(&pool, &mut burst, 1_000), 1);
    assert_eq!(burst[0].len(), MAX_FRAME);
    assert_eq!(src.rx_dropped(), 1);
    // The only buffer is still held: the next frame finds the pool empty.
    assert_eq!(src.rx_burst(&pool, &mut burst, 2_000), 0);
    assert_eq!(src.rx_dropped(), 2);
    burst.clear();
    assert_eq!(src.rx_burst(&pool, &mut burst, 3_000), 1);
    assert_eq!(burst[0].data(), &frame(3, 64)[..]);
    assert_eq!(src.rx_frames(), 2);
}

#[test]
fn records_spanning_read_buffer_refills_arrive_intact() {
    // Far more than one read buffer of records of varying lengths, with
    // oversize records (one a quarter of the read buffer) between
    // them: every frame arrives whole, in order, with its own time.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.pcap");
    let mut recs = Vec::new();
    let mut expect = Vec::new();
    for i in 0..6_000u64 {
        let len = 60 + (i as usize * 37) % 1_400;
        let f = frame(i as u8, len);
        recs.push((T0 + i * 10, f.clone(), len as u32));
        expect.push((i * 10, f));
        if i % 2_000 == 999 {
            let big = if i == 999 { 65_535 } else { MAX_FRAME + 1 };
            recs.push((T0 + i * 10 + 5, frame(0, big), big as u32));
        }
    }
    write_pcap(&path, TsResolution::NanoSecond, DataLink::ETHERNET, &recs);
    assert!(std::fs::metadata(&path).unwrap().len() > 3 * READ_BUF as u64);
    let pool = Pool::new(64);
    let mut src = PcapSource::open(&path, 0).unwrap();
    let mut got = Vec::new();
    while !src.exhausted() {
        let mut burst = Burst::new();
        src.rx_burst(&pool, &mut burst, u64::MAX);
        got.extend(burst.iter().map(|p| (p.timestamp, p.data().to_vec())));
    }
    assert_eq!(got.len(), expect.len());
    assert!(got == expect, "frames differ");
    assert_eq!(
        (src.rx_frames(), src.rx_dropped(), src.read_errors()),
        (6_000, 3, 0)
    );
}

#[test]
fn truncated_captures_are_delivered_as_captured() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snap.pcap");
    write_pcap(
        &path,
        TsResolution::MicroSecond,
        DataLink::ETHERNET,
        &[(T0, frame(0, 54), 1500), (T0, frame(1, 60), 60)],
    );
    let pool = Pool::new(4);
    let mut src = PcapSource::open(&path, 0).unwrap();
    let mut burst = Burst::new();
    assert_eq!(src.rx_burst(&pool, &mut burst, 0), 2);
    assert_eq!(burst[0].len(), 54);
    assert_eq!(src.truncated(), 1);
}

#[test]
fn non_ethernet_and_non_pcap_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.pcap");
    write_pcap(&raw, TsResolution::MicroSecond, DataLink::RAW, &[]);
    let e = PcapSource::open(&raw, 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData);
    assert!(e.to_string().contains("not Ethernet"), "{e}");

    let junk = dir.path().join("junk.pcap");
    std::fs::write(&junk, [0x0a, 0x0d, 0x0d, 0x0a].repeat(8)).unwrap();
    let e = PcapSource::open(&junk, 0).unwrap_err();
    assert!(e.to_string().contains("not a pcap file"), "{e}");

    let empty = dir.path().join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    assert!(PcapSource::open(&empty, 0).is_err());
    assert!(PcapSource::open(dir.path().join("missing.pcap"), 0).is_err());
}

#[test]
fn a_trace_without_frames_is_exhausted_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.pcap");
    write_pcap(&path, TsResolution::NanoSecond, DataLink::ETHERNET, &[]);
    let src = PcapSource::open(&path, 0).unwrap();
    assert!(src.exhausted());
    assert_eq!(src.next_rx_time(), None);
    assert_eq!(PcapSource::first_timestamp(&path).unwrap(), None);
}

#[test]
fn a_damaged_file_ends_the_trace_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.pcap");
    simple(&good, TsResolution::MicroSecond, &[T0, T0 + 1, T0 + 2]);
    let bytes = std::fs::read(&good).unwrap();
    let pool = Pool::new(8);
    // Cut at every length: never a panic, never more frames than whole records.
    for cut in FILE_HEADER_LEN..bytes.len() {
        let path = dir.path().join(format!("cut{cut}.pcap"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let mut src = PcapSource::open(&path, 0).unwrap();
        let mut burst = Burst::new();
        let n = src.rx_burst(&pool, &mut burst, u64::MAX);
        let whole = (cut - FILE_HEADER_LEN) / (RECORD_HEADER_LEN + 60);
        assert_eq!(n, whole, "cut at {cut}");
        assert!(src.exhausted());
        let clean = whole * (RECORD_HEADER_LEN + 60) == cut - FILE_HEADER_LEN;
        assert_eq!(src.read_errors(), u64::from(!clean), "cut at {cut}");
    }
    // A record claiming an absurd length is corruption, not an allocation.
    let mut bad = bytes.clone();
    let second = FILE_HEADER_LEN + RECORD_HEADER_LEN + 60;
    bad[second + 8..second + 12].copy_from_slice(&u32::MAX.to_ne_bytes());
    let path = dir.path().join("bad.pcap");
    std::fs::write(&path, &bad).unwrap();
    let mut src = PcapSource::open(&path, 0).unwrap();
    let mut burst = Burst::new();
    assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 1);
    assert_eq!(src.read_errors(), 1);
    assert!(src.exhausted());
}

#[test]
fn sink_writes_departure_times_in_nanoseconds_from_the_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.pcap");
    let epoch = T0 + 123;
    let mut sink = PcapSink::create(&path, epoch);
    assert!(!path.exists());
    let pool = Pool::new(4);
    let mut burst = Burst::new();
    let departing = |f: &[u8], t: Nanos| {
        let mut p = pool.alloc_from(f).unwrap();
        p.timestamp = t;
        p
    };
    burst.push(departing(&frame(1, 60), 1_500));
    burst.push(departing(&frame(2, 1514), 1_507));
    assert_eq!(sink.tx_burst(&mut burst), 2);
    assert!(burst.is_empty());
    assert_eq!(
        pool.available(),
        2,
        "written frames wait to go back together"
    );
    sink.flush().unwrap();
    assert_eq!(pool.available(), 4, "a flush gives them back");
    burst.push(departing(&frame(3, 64), 2_000_000_000));
    assert_eq!(sink.tx_burst(&mut burst), 1);
    sink.flush().unwrap();
    assert!(sink.created());
    assert_eq!((sink.tx_frames(), sink.tx_errors()), (3, 0));

    let mut r = PcapReader::new(File::open(&path).unwrap()).unwrap();
    assert_eq!(r.header().ts_resolution, TsResolution::NanoSecond);
    assert_eq!(r.header().datalink, DataLink::ETHERNET);
    let p = r.next_packet().unwrap().unwrap();
    assert_eq!(p.timestamp, Duration::from_nanos(epoch + 1_500));
    assert_eq!(&p.data[..], &frame(1, 60)[..]);
    let p = r.next_packet().unwrap().unwrap();
    assert_eq!((p.data.len(), p.orig_len), (1514, 1514));
    assert_eq!(p.timestamp, Duration::from_nanos(epoch + 1_507));
    let p = r.next_packet().unwrap().unwrap();
    assert_eq!(p.timestamp, Duration::from_nanos(epoch + 2_000_000_000));
    assert!(r.next_packet().is_none());

    // Read back through the replay side, aligned to the same epoch.
    let mut src = PcapSource::open_aligned(&path, epoch).unwrap();
    assert_eq!(src.next_rx_time(), Some(1_500));
    assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 3);
    assert_eq!(burst[2].timestamp, 2_000_000_000);
}

#[test]
fn a_sink_that_never_transmits_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quiet.pcap");
    let mut sink = PcapSink::create(&path, 0);
    let mut burst = Burst::new();
    assert_eq!(sink.tx_burst(&mut burst), 0);
    sink.flush().unwrap();
    drop(sink);
    assert!(!path.exists());
}

#[test]
fn a_sink_holds_no_more_than_a_few_written_frames() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = PcapSink::create(dir.path().join("out.pcap"), 0);
    let pool = Pool::new(STASH + 1);
    for i in 0..10 * STASH {
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&frame(i as u8, 60)).unwrap());
        assert_eq!(sink.tx_burst(&mut burst), 1);
        assert!(pool.available() >= 1, "frame {i}");
    }
    assert_eq!(sink.tx_frames(), 10 * STASH as u64);
}

#[test]
fn frames_that_do_not_reach_a_full_disk_are_counted_as_errors() {
    // /dev/full takes the open and refuses every write, as a full disk.
    let mut sink = PcapSink::create("/dev/full", 0);
    let pool = Pool::new(64);
    let frames = 2 * crate::port::spool::CHUNK / 1514 + 1;
    for i in 0..frames {
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&frame(i as u8, 1514)).unwrap());
        assert_eq!(sink.tx_burst(&mut burst), 1);
    }
    let e = sink.flush().unwrap_err();
    assert!(e.to_string().contains("/dev/full"), "{e}");
    assert_eq!((sink.tx_frames(), sink.tx_errors()), (0, frames as u64));
    let mut burst = Burst::new();
    burst.push(pool.alloc_from(&frame(1, 60)).unwrap());
    assert_eq!(sink.tx_burst(&mut burst), 1);
    assert_eq!((sink.tx_frames(), sink.tx_errors()), (0, frames as u64 + 1));
    sink.flush().unwrap_err();
    assert_eq!(pool.available(), 64, "every buffer went back");
}

#[test]
fn a_sink_that_cannot_create_its_file_counts_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = PcapSink::create(dir.path().join("no/such/dir/x.pcap"), 0);
    let pool = Pool::new(4);
    for _ in 0..2 {
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&frame(1, 60)).unwrap());
        burst.push(pool.alloc_from(&frame(2, 60)).unwrap());
        assert_eq!(sink.tx_burst(&mut burst), 2);
        assert!(burst.is_empty());
    }
    assert!(!sink.created());
    assert_eq!((sink.tx_frames(), sink.tx_errors()), (0, 4));
    sink.flush().unwrap();
    assert_eq!(pool.available(), 4);
}

#[test]
fn pcap_port_joins_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (dir.path().join("in.pcap"), dir.path().join("out.pcap"));
    simple(&inp, TsResolution::MicroSecond, &[T0, T0 + 1_000]);
    let mut port = PcapPort::new(
        Some(PcapSource::open(&inp, 0).unwrap()),
        Some(PcapSink::create(&out, T0)),
    );
    assert_eq!(
        port.describe(),
        format!("pcap in={} out={}", inp.display(), out.display())
    );
    let pool = Pool::new(4);
    let mut burst = Burst::new();
    assert_eq!(port.next_rx_time(), Some(0));
    assert_eq!(port.rx_burst(&pool, &mut burst, 0), 1);
    assert!(!port.exhausted());
    assert_eq!(port.tx_burst(&mut burst, 10).sent, 1);
    assert_eq!(port.rx_burst(&pool, &mut burst, 1_000), 1);
    assert!(port.exhausted());
    port.flush().unwrap();
    let c = port.io_counters();
    assert_eq!(
        (c.rx_frames, c.tx_frames, c.rx_dropped, c.tx_errors),
        (2, 1, 0, 0)
    );
    assert!(out.exists());

    let idle = PcapPort::new(None, None);
    assert!(idle.exhausted());
    assert_eq!(idle.describe(), "pcap");
    assert_eq!(idle.next_rx_time(), None);
}

#[test]
fn closed_loop_holds_paused_frames_and_stamps_their_release() {
    let ip = |dscp: u8, seq: u8| {
        let mut f = frame(seq, 60);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[15] = dscp << 2;
        f
    };
    let dir = tempfile::tempdir().unwrap();
    let (inp, out) = (dir.path().join("in.pcap"), dir.path().join("out.pcap"));
    let recs = vec![
        (T0 + 1_000, ip(24, 1), 60),
        (T0 + 2_000, ip(0, 2), 60),
        (T0 + 3_000, ip(24, 3), 60),
    ];
    write_pcap(&inp, TsResolution::NanoSecond, DataLink::ETHERNET, &recs);
    let mut dscp = [0u8; 64];
    dscp[24] = 3;
    let src = PcapSource::open(&inp, 1_000)
        .unwrap()
        .closed_loop(PfcUpstream::new(Some(100_000), dscp, None));
    let mut port = PcapPort::new(Some(src), Some(PcapSink::create(&out, 0)));
    let pool = Pool::new(8);
    // The switch pauses priority 3 for 1000 quanta (5120 ns) at time 500.
    let mut q = [0u16; 8];
    q[3] = 1000;
    let mut xoff = [0u8; crate::wire::mac_control::FRAME_LEN];
    crate::wire::mac_control::MacControlRepr::Pfc {
        enable: 1 << 3,
        quanta: q,
    }
    .emit_frame(crate::wire::MacAddr([2, 0, 0, 0, 0, 9]), &mut xoff);
    let mut tx = Burst::new();
    tx.push(pool.alloc_from(&xoff).unwrap());
    port.tx_burst(&mut tx, 500);
    // Priority 0 passes the held priority-3 frame.
    assert_eq!(port.next_rx_time(), Some(2_000));
    let mut b = Burst::new();
    assert_eq!(port.rx_burst(&pool, &mut b, 5_000), 1);
    assert_eq!((b[0].timestamp, b[0].data()[20]), (2_000, 2));
    assert_eq!(port.next_rx_time(), Some(5_620));
    assert!(!port.exhausted());
    assert_eq!(port.rx_burst(&pool, &mut b, 10_000), 2);
    assert_eq!((b[1].timestamp, b[1].data()[20]), (5_620, 1));
    // One frame time later: 60 + 24 bytes on the wire at 100 Gb/s.
    assert_eq!((b[2].timestamp, b[2].data()[20]), (5_627, 3));
    assert!(port.exhausted());
    assert_eq!(port.io_counters().rx_frames, 3);
}
