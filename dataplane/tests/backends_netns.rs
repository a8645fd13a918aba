//! Live port backends against real kernel devices.
//!
//! Every test creates its own network namespace (`ry-bk-<pid>-<n>`), builds
//! its devices inside it with `ip -n`, runs the port code on a thread that
//! has `setns`'d into it, and deletes the namespace on the way out, panic or
//! not. Nothing touches the namespace the tests were started in.

use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use railyard_dataplane::port::afpacket::{AfPacketOptions, AfPacketPort, Receive};
use railyard_dataplane::port::afxdp::{AfXdpOptions, AfXdpPort};
use railyard_dataplane::port::tap::TapPort;
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::mac_control::{self, MacControlRepr};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, PacketBuf, Pool, BURST_SIZE};

/// A namespace owned by one test, deleted when dropped.
struct Netns {
    name: String,
}

static NEXT_NS: AtomicU32 = AtomicU32::new(0);

impl Netns {
    fn new() -> Netns {
        let name = format!(
            "ry-bk-{}-{}",
            std::process::id(),
            NEXT_NS.fetch_add(1, Ordering::SeqCst)
        );
        run_ip(&["netns", "add", &name]);
        Netns { name }
    }

    /// Runs `ip -n <ns> args...`, failing the test if it fails.
    fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        run_ip(&all);
    }

    /// Runs `f` on a thread that lives in the namespace, re-raising its panic.
    fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{}", self.name);
        let worker = thread::spawn(move || {
            let ns = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            // SAFETY: `ns` is an open namespace file for the duration of the
            // call; setns only changes this thread's network namespace.
            let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "setns {path}: {}", io::Error::last_os_error());
            f()
        });
        match worker.join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

fn run_ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("ip {args:?}: {e}"));
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A namespace holding an up veth pair `ryA<pid>`/`ryB<pid>`.
fn veth_pair() -> (Netns, String, String) {
    veth_pair_with(&[])
}

/// As [`veth_pair`], with extra `ip link add` attributes given to both ends
/// (e.g. `numrxqueues 1`).
fn veth_pair_with(attrs: &[&str]) -> (Netns, String, String) {
    let ns = Netns::new();
    let pid = std::process::id();
    let (a, b) = (format!("ryA{pid}"), format!("ryB{pid}"));
    let mut args = vec!["link", "add", a.as_str()];
    args.extend_from_slice(attrs);
    args.extend_from_slice(&["type", "veth", "peer", "name", b.as_str()]);
    args.extend_from_slice(attrs);
    ns.ip(&args);
    ns.ip(&["link", "set", &a, "up"]);
    ns.ip(&["link", "set", &b, "up"]);
    (ns, a, b)
}

/// A veth pair with one queue each way: an AF_XDP port serves queue 0
/// only, and a multi-queue veth spreads the peer's frames by sending CPU.
fn single_queue_veth_pair() -> (Netns, String, String) {
    veth_pair_with(&["numrxqueues", "1", "numtxqueues", "1"])
}

/// `ip args...`'s standard output, failing the test if it fails.
fn ip_output(args: &[&str]) -> String {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("ip {args:?}: {e}"));
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits (bounded) for a port's cached link state to read `want`.
fn wait_link(port: &dyn Port, want: bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if port.link_up() == want {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    port.link_up() == want
}

/// EtherType of the test frames (IEEE local experimental).
const TEST_TYPE: [u8; 2] = [0x88, 0xb5];
const MAGIC: &[u8; 4] = b"RYBK";

/// The test frame with sequence number `seq`: a length and payload that
/// both depend on `seq`, so any corruption or mix-up shows.
fn test_frame(dst: MacAddr, src: MacAddr, seq: u32) -> Vec<u8> {
    let len = 64 + (seq as usize * 37) % 1450;
    let mut f = Vec::with_capacity(len);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&TEST_TYPE);
    f.extend_from_slice(MAGIC);
    f.extend_from_slice(&seq.to_be_bytes());
    while f.len() < len {
        f.push((f.len() as u32 ^ seq) as u8);
    }
    f
}

/// The sequence number of a test frame, `None` for kernel chatter.
fn test_seq(data: &[u8]) -> Option<u32> {
    (data.len() >= 22 && data[12..14] == TEST_TYPE && &data[14..18] == MAGIC)
        .then(|| u32::from_be_bytes([data[18], data[19], data[20], data[21]]))
}

fn packet(pool: &Pool, frame: &[u8]) -> PacketBuf {
    pool.alloc_from(frame).expect("pool has room")
}

/// Sends `n` test frames from `tx` to `rx` (both up, on the two ends of a
/// link) and checks every one arrives exactly once and intact, and, when
/// `in_order`, in sequence. Returns the time taken and the `tx_burst` calls.
fn transfer(
    tx_port: &mut dyn Port,
    rx_port: &mut dyn Port,
    n: u32,
    in_order: bool,
) -> (Duration, u64) {
    let (ms, md) = (tx_port.mac().unwrap(), rx_port.mac().unwrap());
    assert_ne!(ms, md);
    let pool = Pool::new(1024);
    let mut seen = vec![false; n as usize];
    let (mut next, mut received) = (0u32, 0u32);
    let mut expect = 0u32;
    let mut tx = Burst::new();
    let mut rx = Burst::new();
    let mut tx_calls = 0u64;
    let start = Instant::now();
    let deadline = start + Duration::from_secs(30);
    while received < n && Instant::now() < deadline {
        while tx.len() < BURST_SIZE && next < n {
            tx.push(packet(&pool, &test_frame(md, ms, next)));
            next += 1;
        }
        if !tx.is_empty() {
            tx_port.tx_burst(&mut tx, 0);
            tx_calls += 1;
        }
        rx_port.rx_burst(&pool, &mut rx, 0);
        for p in rx.drain(..) {
            let Some(seq) = test_seq(p.data()) else {
                continue;
            };
            assert!(seq < n, "bogus sequence {seq}");
            assert!(!seen[seq as usize], "frame {seq} delivered twice");
            if in_order {
                assert_eq!(seq, expect, "frame {seq} out of order");
                expect += 1;
            }
            assert_eq!(
                p.data(),
                &test_frame(md, ms, seq)[..],
                "frame {seq} corrupted"
            );
            seen[seq as usize] = true;
            received += 1;
        }
    }
    let elapsed = start.elapsed();
    let missing: Vec<_> = (0..n).filter(|s| !seen[*s as usize]).take(10).collect();
    assert_eq!(received, n, "missing e.g. {missing:?}");
    (elapsed, tx_calls)
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn veth_carries_ten_thousand_frames_intact() {
    for receive in [Receive::Frames, Receive::Blocks] {
        carries_ten_thousand_frames(receive);
    }
}

fn carries_ten_thousand_frames(receive: Receive) {
    const N: u32 = 10_000;
    let (ns, a, b) = veth_pair();
    ns.run(move || {
        let opts = AfPacketOptions {
            receive,
            ..AfPacketOptions::default()
        };
        let mut pa = AfPacketPort::open(&a, opts.clone()).unwrap();
        let mut pb = AfPacketPort::open(&b, opts).unwrap();
        assert!(
            wait_link(&pa, true) && wait_link(&pb, true),
            "veth never came up"
        );
        let (ma, mb) = (pa.mac().unwrap(), pb.mac().unwrap());
        assert_ne!(ma, mb);
        assert_eq!(
            pa.describe(),
            format!("af-packet {a} (ring 32 MiB, {})", receive.name())
        );

        let (elapsed, tx_calls) = transfer(&mut pa, &mut pb, N, false);
        let ca = pa.io_counters();
        let cb = pb.io_counters();
        assert_eq!(ca.tx_frames, u64::from(N));
        assert_eq!(ca.tx_errors, 0);
        assert!(cb.rx_frames >= u64::from(N));
        assert_eq!(cb.rx_dropped, 0);
        println!(
            "veth af-packet ({}): {N} frames in {:.1} ms = {:.0} frames/s ({tx_calls} tx_burst calls)",
            receive.name(),
            elapsed.as_secs_f64() * 1e3,
            f64::from(N) / elapsed.as_secs_f64()
        );
    });
}

/// PFC frames take the port's MAC-control lane: they arrive at once, while
/// a data frame sent before them still waits in the data ring's unretired
/// block (a 3 s retire timeout here, 1 ms by default), exactly once, and
/// in buffers of the lane's own, even when the switch's pool is empty.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn pfc_frames_bypass_the_data_ring_once_and_without_the_switch_pool() {
    let (ns, a, b) = veth_pair();
    ns.run(move || {
        let slow = AfPacketOptions {
            receive: Receive::Blocks,
            retire_timeout_ms: 3_000,
            ..AfPacketOptions::default()
        };
        let mut pa = AfPacketPort::open(&a, AfPacketOptions::default()).unwrap();
        let mut pb = AfPacketPort::open(&b, slow).unwrap();
        assert!(wait_link(&pa, true) && wait_link(&pb, true));
        let (ma, mb) = (pa.mac().unwrap(), pb.mac().unwrap());
        let pool = Pool::new(64);
        let mut quanta = [0u16; 8];
        quanta[3] = 0xffff;
        let mut pfc = [0u8; mac_control::FRAME_LEN];
        MacControlRepr::Pfc {
            enable: 1 << 3,
            quanta,
        }
        .emit_frame(ma, &mut pfc);
        // The switch's pool, exhausted: nothing to receive data into.
        let empty = Pool::new(1);
        let hog = empty.alloc().unwrap();
        let mut tx = Burst::new();
        tx.push(packet(&pool, &test_frame(mb, ma, 1)));
        for _ in 0..5 {
            tx.push(packet(&pool, &pfc));
        }
        assert_eq!(pa.tx_burst(&mut tx, 0).sent, 6);
        let (mut pauses, mut data) = (0, 0);
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            let mut rx = Burst::new();
            pb.rx_burst(&empty, &mut rx, 0);
            pauses += rx.iter().filter(|p| p.data() == &pfc[..]).count();
            data += rx.iter().filter(|p| test_seq(p.data()).is_some()).count();
        }
        assert_eq!((pauses, data), (5, 0), "pauses and data frames seen");
        assert_eq!(pb.io_counters().rx_dropped, 0);
        drop(hog);
        // The data frame is still there, and no pause shows up twice.
        let mut rx = Burst::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while data == 0 && Instant::now() < deadline {
            pb.rx_burst(&pool, &mut rx, 0);
            data += rx.iter().filter(|p| test_seq(p.data()).is_some()).count();
            pauses += rx.iter().filter(|p| p.data() == &pfc[..]).count();
            rx.clear();
        }
        assert_eq!((pauses, data), (5, 1));
    });
}

/// A second worker's transmit lane: its frames reach the peer intact and in
/// order without showing up in the port's own receive ring, and what the
/// peer sends arrives once, at the port.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn a_transmit_lane_sends_on_the_link_and_receives_nothing() {
    let (ns, a, b) = veth_pair();
    ns.run(move || {
        let opts = AfPacketOptions::default();
        let mut pa = AfPacketPort::open(&a, opts.clone()).unwrap();
        let mut pb = AfPacketPort::open(&b, opts).unwrap();
        let mut lane = pa.tx_lane().expect("AF_PACKET ports have lanes");
        assert!(wait_link(lane.as_ref(), true) && wait_link(&pb, true));
        assert_eq!(lane.mac(), pa.mac());
        assert_eq!(lane.describe(), format!("af-packet {a} (lane)"));

        transfer(lane.as_mut(), &mut pb, 2_000, true);
        assert_eq!(lane.io_counters().tx_frames, 2_000);
        assert_eq!(lane.io_counters().tx_errors, 0);
        let pool = Pool::new(256);
        let own = |port: &mut dyn Port| {
            let mut seen = 0;
            let deadline = Instant::now() + Duration::from_millis(200);
            while Instant::now() < deadline {
                let mut rx = Burst::new();
                port.rx_burst(&pool, &mut rx, 0);
                seen += rx.iter().filter(|p| test_seq(p.data()).is_some()).count();
            }
            seen
        };
        assert_eq!(own(&mut pa), 0, "the port's ring saw the lane's frames");

        transfer(&mut pb, &mut pa, 1_000, true);
        assert_eq!(own(lane.as_mut()), 0);
        assert_eq!(lane.io_counters().rx_frames, 0);
    });
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn veth_keeps_vlan_tags() {
    for receive in [Receive::Frames, Receive::Blocks] {
        keeps_vlan_tags(receive);
    }
}

fn keeps_vlan_tags(receive: Receive) {
    let (ns, a, b) = veth_pair();
    ns.run(move || {
        let opts = AfPacketOptions {
            receive,
            ..AfPacketOptions::default()
        };
        let mut pa = AfPacketPort::open(&a, opts.clone()).unwrap();
        let mut pb = AfPacketPort::open(&b, opts).unwrap();
        assert!(wait_link(&pa, true) && wait_link(&pb, true));
        let pool = Pool::new(64);
        for (i, (tpid, tci)) in [(0x8100u16, 0x6064u16), (0x88a8, 0x0fff), (0x8100, 0x0000)]
            .into_iter()
            .enumerate()
        {
            let untagged = test_frame(pb.mac().unwrap(), pa.mac().unwrap(), i as u32);
            let mut tagged = untagged[..12].to_vec();
            tagged.extend_from_slice(&tpid.to_be_bytes());
            tagged.extend_from_slice(&tci.to_be_bytes());
            tagged.extend_from_slice(&untagged[12..]);
            let mut tx = Burst::new();
            tx.push(packet(&pool, &tagged));
            assert_eq!(pa.tx_burst(&mut tx, 0).sent, 1);
            let deadline = Instant::now() + Duration::from_secs(3);
            let mut got = None;
            while got.is_none() && Instant::now() < deadline {
                let mut rx = Burst::new();
                pb.rx_burst(&pool, &mut rx, 0);
                got = rx
                    .iter()
                    .find(|p| p.data().len() > 18 && p.data()[16..18] == TEST_TYPE)
                    .map(|p| p.data().to_vec());
            }
            let got = got.unwrap_or_else(|| panic!("tagged frame {tpid:#x}/{tci:#x} not received"));
            assert_eq!(got, tagged, "tag {tpid:#x}/{tci:#x} did not round-trip");
        }
    });
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn veth_link_state_follows_the_interface() {
    let (ns, a, b) = veth_pair();
    let ns_name = ns.name.clone();
    ns.run(move || {
        let opts = AfPacketOptions::default();
        let pa = AfPacketPort::open(&a, opts.clone()).unwrap();
        let pb = AfPacketPort::open(&b, opts).unwrap();
        assert!(wait_link(&pb, true), "link never came up");
        run_ip(&["-n", &ns_name, "link", "set", "dev", &b, "down"]);
        assert!(
            wait_link(&pb, false),
            "{b} still up after `ip link set down`"
        );
        // The peer loses carrier with it.
        assert!(wait_link(&pa, false), "{a} still has carrier");
        run_ip(&["-n", &ns_name, "link", "set", "dev", &b, "up"]);
        assert!(wait_link(&pb, true), "{b} did not come back");
    });
}

/// The next burst of fixed-size numbered frames, `*next` up to `sent`
/// (sequence 0 would give the 64-byte minimum, so the frame of a large
/// sequence number is rewritten with each number).
fn numbered_burst(pool: &Pool, dst: MacAddr, src: MacAddr, next: &mut u32, sent: u32) -> Burst {
    let mut tx = Burst::new();
    while tx.len() < BURST_SIZE && *next < sent {
        let mut f = test_frame(dst, src, 27);
        f[18..22].copy_from_slice(&next.to_be_bytes());
        tx.push(packet(pool, &f));
        *next += 1;
    }
    tx
}

/// Numbered frames `port` receives within 300 ms.
fn count_numbered(port: &mut dyn Port, pool: &Pool) -> u64 {
    let mut received = 0u64;
    let deadline = Instant::now() + Duration::from_millis(300);
    while Instant::now() < deadline {
        let mut rx = Burst::new();
        port.rx_burst(pool, &mut rx, 0);
        received += rx.iter().filter(|p| test_seq(p.data()).is_some()).count() as u64;
    }
    received
}

/// An overflowed receive side lost frames and counted every one it lost.
fn assert_drops_add_up(received: u64, dropped: u64, sent: u32) {
    assert!(
        received > 0 && dropped > 0,
        "received {received}, dropped {dropped}"
    );
    assert!(
        received + dropped >= u64::from(sent),
        "{received} + {dropped} < {sent}"
    );
}

/// Whether `frame` (numbered `seq`), sent from `tx`, reaches `rx` within 3 s.
fn gets_through(
    tx: &mut dyn Port,
    rx: &mut dyn Port,
    pool: &Pool,
    frame: Vec<u8>,
    seq: u32,
) -> bool {
    let mut out = Burst::new();
    out.push(packet(pool, &frame));
    assert_eq!(tx.tx_burst(&mut out, 0).sent, 1);
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let mut got = Burst::new();
        rx.rx_burst(pool, &mut got, 0);
        if got.iter().any(|p| test_seq(p.data()) == Some(seq)) {
            return true;
        }
    }
    false
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn veth_ring_overflow_is_counted_and_recovers() {
    for receive in [Receive::Frames, Receive::Blocks] {
        ring_overflow_is_counted_and_recovers(receive);
    }
}

fn ring_overflow_is_counted_and_recovers(receive: Receive) {
    const SENT: u32 = 300;
    let (ns, a, b) = veth_pair();
    ns.run(move || {
        let mut pa = AfPacketPort::open(&a, AfPacketOptions::default()).unwrap();
        // Two 16 KiB blocks: room for a few dozen of these frames at most
        // (16 slots of 2 KiB per frame).
        let small = AfPacketOptions {
            receive,
            block_size: 16 * 1024,
            block_count: 2,
            ..AfPacketOptions::default()
        };
        let mut pb = AfPacketPort::open(&b, small).unwrap();
        assert!(wait_link(&pa, true) && wait_link(&pb, true));
        let (ma, mb) = (pa.mac().unwrap(), pb.mac().unwrap());
        let pool = Pool::new(256);
        let mut next = 0;
        while next < SENT {
            let mut tx = numbered_burst(&pool, mb, ma, &mut next, SENT);
            pa.tx_burst(&mut tx, 0);
        }
        thread::sleep(Duration::from_millis(20));
        let received = count_numbered(&mut pb, &pool);
        let dropped = pb.io_counters().rx_dropped;
        assert_drops_add_up(received, dropped, SENT);
        assert_eq!(pb.io_counters().rx_dropped, dropped, "drops counted twice");
        assert_eq!(pb.kernel_drops(), dropped);

        // Drained, the ring takes frames again.
        let again = gets_through(&mut pa, &mut pb, &pool, test_frame(mb, ma, SENT), SENT);
        assert!(again, "ring did not recover after overflow");
    });
}

/// A per-frame ring hands a lone frame over at once, where a block ring
/// (retire timeout 3 s here) holds it in its unretired block, and the
/// frame wakes a `poll(2)` on the port's wake descriptors.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn a_frame_ring_hands_a_lone_frame_over_at_once_and_wakes_a_poller() {
    let (ns, a, b) = veth_pair();
    ns.run(move || {
        let mut pa = AfPacketPort::open(&a, AfPacketOptions::default()).unwrap();
        let ring = |receive| AfPacketOptions {
            receive,
            retire_timeout_ms: 3_000,
            ..AfPacketOptions::default()
        };
        let mut frames = AfPacketPort::open(&b, ring(Receive::Frames)).unwrap();
        assert!(wait_link(&pa, true) && wait_link(&frames, true));
        let (ma, mb) = (pa.mac().unwrap(), frames.mac().unwrap());
        let pool = Pool::new(64);
        let mut tx = Burst::new();
        tx.push(packet(&pool, &test_frame(mb, ma, 7)));
        assert_eq!(pa.tx_burst(&mut tx, 0).sent, 1);
        assert_eq!(
            frames.wake_fds().len(),
            2,
            "the data ring and the MAC-control lane"
        );
        assert!(wakes_a_poller(&frames), "the frame did not wake the poller");
        let mut rx = Burst::new();
        frames.rx_burst(&pool, &mut rx, 0);
        assert_eq!(
            rx.iter()
                .filter_map(|p| test_seq(p.data()))
                .collect::<Vec<_>>(),
            [7]
        );
        drop(rx);
        drop(frames);

        let mut blocks = AfPacketPort::open(&b, ring(Receive::Blocks)).unwrap();
        assert!(wait_link(&blocks, true));
        let mut tx = Burst::new();
        tx.push(packet(&pool, &test_frame(mb, ma, 8)));
        assert_eq!(pa.tx_burst(&mut tx, 0).sent, 1);
        thread::sleep(Duration::from_millis(200));
        let mut rx = Burst::new();
        blocks.rx_burst(&pool, &mut rx, 0);
        assert!(rx.is_empty(), "a block ring handed over an unretired block");
    });
}

/// Each AF_PACKET ring tells how long a frame waited in it before the
/// switch read it: a frame read at once shows next to no wait, one left
/// 150 ms shows at least that, and the counter keeps the longest.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn a_ring_tells_how_long_its_frames_waited() {
    for receive in [Receive::Frames, Receive::Blocks] {
        let (ns, a, b) = veth_pair();
        ns.run(move || {
            let mut pa = AfPacketPort::open(&a, AfPacketOptions::default()).unwrap();
            let opts = AfPacketOptions {
                receive,
                retire_timeout_ms: 1,
                ..AfPacketOptions::default()
            };
            let mut pb = AfPacketPort::open(&b, opts).unwrap();
            assert!(wait_link(&pa, true) && wait_link(&pb, true));
            let (ma, mb) = (pa.mac().unwrap(), pb.mac().unwrap());
            let pool = Pool::new(64);
            let mut read_after = |wait: Duration, seq: u32| {
                let mut tx = Burst::new();
                tx.push(packet(&pool, &test_frame(mb, ma, seq)));
                assert_eq!(pa.tx_burst(&mut tx, 0).sent, 1);
                thread::sleep(wait);
                let deadline = Instant::now() + Duration::from_secs(2);
                let mut rx = Burst::new();
                while rx.is_empty() && Instant::now() < deadline {
                    pb.rx_burst(&pool, &mut rx, 0);
                }
                assert!(rx.iter().any(|p| test_seq(p.data()) == Some(seq)));
                pb.io_counters().rx_wait_max_ns
            };
            let prompt = read_after(Duration::ZERO, 1);
            assert!(
                prompt < 50_000_000,
                "{receive:?}: a frame read at once waited {prompt} ns"
            );
            let late = read_after(Duration::from_millis(150), 2);
            assert!(
                (150_000_000..2_000_000_000).contains(&late),
                "{receive:?}: a frame left 150 ms shows a wait of {late} ns"
            );
            assert_eq!(read_after(Duration::ZERO, 3), late, "the longest is kept");
        });
    }
}

/// Whether `poll(2)` on the port's wake descriptors reports a frame within
/// 2 s.
fn wakes_a_poller(port: &dyn Port) -> bool {
    let mut fds: Vec<libc::pollfd> = port
        .wake_fds()
        .into_iter()
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    assert!(
        !fds.is_empty(),
        "{} offers nothing to poll",
        port.describe()
    );
    // SAFETY: fds is a live array of pollfds of the length given.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 2_000) };
    ready > 0
}

/// A frame longer than a per-frame ring's slot (the interface's MTU grew
/// after the port opened) is dropped and counted as oversize; the ring
/// goes on with the next frame.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn a_frame_longer_than_its_slot_is_counted_and_the_ring_goes_on() {
    let (ns, a, b) = veth_pair();
    let name = ns.name.clone();
    ns.run(move || {
        let mut pa = AfPacketPort::open(&a, AfPacketOptions::default()).unwrap();
        // Opened at MTU 1500: 2 KiB slots.
        let mut pb = AfPacketPort::open(&b, AfPacketOptions::default()).unwrap();
        for dev in [&a, &b] {
            run_ip(&["-n", &name, "link", "set", dev, "mtu", "4000"]);
        }
        assert!(wait_link(&pa, true) && wait_link(&pb, true));
        let (ma, mb) = (pa.mac().unwrap(), pb.mac().unwrap());
        let pool = Pool::new(64);
        let mut big = test_frame(mb, ma, 1);
        big.resize(3000, 0xab);
        let mut tx = Burst::new();
        tx.push(packet(&pool, &big));
        assert_eq!(pa.tx_burst(&mut tx, 0).sent, 1);
        assert!(
            gets_through(&mut pa, &mut pb, &pool, test_frame(mb, ma, 2), 2),
            "the ring stopped at the long frame"
        );
        let c = pb.io_counters();
        assert_eq!((c.rx_oversize, c.rx_dropped), (1, 1), "{c:?}");
    });
}

/// Whether `ip -d link show dev` reports an XDP program on the device.
fn xdp_attached(ns: &str, dev: &str) -> bool {
    let out = ip_output(&["-n", ns, "-d", "link", "show", "dev", dev]);
    out.contains("xdp") || out.contains("prog/")
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn af_xdp_veth_carries_ten_thousand_frames_each_way_in_order() {
    const N: u32 = 10_000;
    let (ns, a, b) = single_queue_veth_pair();
    let ns_name = ns.name.clone();
    ns.run(move || {
        let mut xa = AfXdpPort::open(&a, AfXdpOptions::default()).unwrap();
        assert!(xdp_attached(&ns_name, &a), "no XDP program on {a}");
        let mut pb = AfPacketPort::open(&b, AfPacketOptions::default()).unwrap();
        assert!(
            wait_link(&xa, true) && wait_link(&pb, true),
            "veth never came up"
        );
        assert_eq!(xa.describe(), format!("af-xdp {a}"));
        assert!(!xa.zero_copy(), "a veth cannot do zero-copy");

        let (out, out_calls) = transfer(&mut xa, &mut pb, N, true);
        let (back, back_calls) = transfer(&mut pb, &mut xa, N, true);
        let cx = xa.io_counters();
        let cb = pb.io_counters();
        assert_eq!(cx.tx_frames, u64::from(N));
        assert_eq!(cx.tx_errors, 0);
        assert!(cx.rx_frames >= u64::from(N));
        assert_eq!(cx.rx_dropped, 0);
        assert_eq!(cb.rx_dropped, 0);
        for (dir, elapsed, calls) in [("out", out, out_calls), ("back", back, back_calls)] {
            println!(
                "veth af-xdp ({} XDP, copy mode) {dir}: {N} frames in {:.1} ms = {:.0} frames/s ({calls} tx_burst calls)",
                xa.attach_mode(),
                elapsed.as_secs_f64() * 1e3,
                f64::from(N) / elapsed.as_secs_f64()
            );
        }
    });
}

/// A frame arriving on an AF_XDP port wakes a worker asleep in `poll(2)`.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn af_xdp_a_frame_wakes_a_poller() {
    let (ns, a, b) = single_queue_veth_pair();
    ns.run(move || {
        let mut xa = AfXdpPort::open(&a, AfXdpOptions::default()).unwrap();
        let mut pb = AfPacketPort::open(&b, AfPacketOptions::default()).unwrap();
        assert!(wait_link(&xa, true) && wait_link(&pb, true));
        let (ma, mb) = (xa.mac().unwrap(), pb.mac().unwrap());
        let pool = Pool::new(64);
        let mut tx = Burst::new();
        tx.push(packet(&pool, &test_frame(ma, mb, 5)));
        assert_eq!(pb.tx_burst(&mut tx, 0).sent, 1);
        assert!(wakes_a_poller(&xa), "the frame did not wake the poller");
        let mut rx = Burst::new();
        xa.rx_burst(&pool, &mut rx, 0);
        assert!(rx.iter().any(|p| test_seq(p.data()) == Some(5)));
    });
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn af_xdp_link_state_follows_the_interface() {
    let (ns, a, b) = single_queue_veth_pair();
    let ns_name = ns.name.clone();
    ns.run(move || {
        let xa = AfXdpPort::open(&a, AfXdpOptions::default()).unwrap();
        assert!(wait_link(&xa, true), "link never came up");
        // The peer going down takes our carrier with it.
        run_ip(&["-n", &ns_name, "link", "set", "dev", &b, "down"]);
        assert!(wait_link(&xa, false), "{a} still has carrier");
        run_ip(&["-n", &ns_name, "link", "set", "dev", &b, "up"]);
        assert!(wait_link(&xa, true), "{a} did not come back");
        run_ip(&["-n", &ns_name, "link", "set", "dev", &a, "down"]);
        assert!(
            wait_link(&xa, false),
            "{a} still up after `ip link set down`"
        );
        run_ip(&["-n", &ns_name, "link", "set", "dev", &a, "up"]);
        assert!(wait_link(&xa, true), "{a} did not come back up");
    });
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn af_xdp_ring_overflow_is_counted_and_recovers() {
    const SENT: u32 = 300;
    let (ns, a, b) = single_queue_veth_pair();
    ns.run(move || {
        // 64-entry rings: 64 receive frames, far fewer than SENT.
        let small = AfXdpOptions {
            ring_size: 64,
            ..AfXdpOptions::default()
        };
        let mut xa = AfXdpPort::open(&a, small).unwrap();
        let mut pb = AfPacketPort::open(&b, AfPacketOptions::default()).unwrap();
        assert!(wait_link(&xa, true) && wait_link(&pb, true));
        let (ma, mb) = (xa.mac().unwrap(), pb.mac().unwrap());
        let pool = Pool::new(256);
        let mut next = 0;
        while next < SENT {
            let mut tx = numbered_burst(&pool, ma, mb, &mut next, SENT);
            let len = tx.len();
            assert_eq!(pb.tx_burst(&mut tx, 0).sent, len);
            // Paced, so the veth's own queue keeps up and every loss is
            // the XDP socket's.
            thread::sleep(Duration::from_millis(2));
        }
        thread::sleep(Duration::from_millis(20));
        let received = count_numbered(&mut xa, &pool);
        let dropped = xa.io_counters().rx_dropped;
        println!("af-xdp overflow: sent {SENT}, received {received}, dropped {dropped}");
        assert_drops_add_up(received, dropped, SENT);
        assert_eq!(xa.io_counters().rx_dropped, dropped, "drops counted twice");
        assert_eq!(xa.kernel_drops(), dropped);

        // Drained, the rings take frames again.
        let again = gets_through(&mut pb, &mut xa, &pool, test_frame(ma, mb, SENT), SENT);
        assert!(again, "rings did not recover after overflow");
        assert_eq!(
            xa.io_counters().rx_dropped,
            dropped,
            "new drops after recovery"
        );
    });
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn af_xdp_dropping_the_port_detaches_the_program() {
    let (ns, a, _b) = single_queue_veth_pair();
    let ns_name = ns.name.clone();
    ns.run(move || {
        assert!(!xdp_attached(&ns_name, &a), "{a} has XDP before the test");
        let xa = AfXdpPort::open(&a, AfXdpOptions::default()).unwrap();
        let shown = ip_output(&["-n", &ns_name, "-d", "link", "show", "dev", &a]);
        assert!(xdp_attached(&ns_name, &a), "no XDP program on {a}: {shown}");
        println!("attached ({} XDP): {}", xa.attach_mode(), shown.trim());
        drop(xa);
        let shown = ip_output(&["-n", &ns_name, "-d", "link", "show", "dev", &a]);
        assert!(
            !xdp_attached(&ns_name, &a),
            "XDP program left on {a}: {shown}"
        );
        // And the interface can be opened again.
        let again = AfXdpPort::open(&a, AfXdpOptions::default()).unwrap();
        drop(again);
        assert!(!xdp_attached(&ns_name, &a));
    });
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn af_xdp_falls_back_to_generic_xdp() {
    // A macvlan has no native XDP: the program must attach in generic
    // mode, and frames still pass both ways (through the veth under it).
    const N: u32 = 1000;
    let (ns, a, b) = single_queue_veth_pair();
    let ns_name = ns.name.clone();
    let dev = format!("ryM{}", std::process::id());
    ns.ip(&[
        "link",
        "add",
        "link",
        &a,
        "name",
        &dev,
        "numrxqueues",
        "1",
        "numtxqueues",
        "1",
        "type",
        "macvlan",
        "mode",
        "bridge",
    ]);
    ns.ip(&["link", "set", &dev, "up"]);
    ns.run(move || {
        let mut xm = AfXdpPort::open(&dev, AfXdpOptions::default()).unwrap();
        assert_eq!(xm.attach_mode(), "generic");
        let shown = ip_output(&["-n", &ns_name, "-d", "link", "show", "dev", &dev]);
        assert!(shown.contains("xdpgeneric"), "{shown}");
        let mut pb = AfPacketPort::open(&b, AfPacketOptions::default()).unwrap();
        assert!(wait_link(&xm, true) && wait_link(&pb, true));
        transfer(&mut xm, &mut pb, N, true);
        transfer(&mut pb, &mut xm, N, true);
        assert_eq!(xm.io_counters().rx_dropped, 0);
        drop(xm);
        assert!(!xdp_attached(&ns_name, &dev), "XDP program left on {dev}");
    });
}

/// RFC 1071 checksum over `data`.
fn checksum(data: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in data.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An Ethernet/IPv4/ICMP echo request.
fn echo_request(dst: MacAddr, src: MacAddr, sip: Ipv4Addr, dip: Ipv4Addr, id: u16) -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0];
    icmp.extend_from_slice(&id.to_be_bytes());
    icmp.extend_from_slice(&1u16.to_be_bytes());
    icmp.extend_from_slice(b"railyard tap echo payload 0123");
    let c = checksum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    let total = (20 + icmp.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, 1, 0, 0]);
    ip.extend_from_slice(&sip.octets());
    ip.extend_from_slice(&dip.octets());
    let c = checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut f = Vec::new();
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ip);
    f.extend_from_slice(&icmp);
    f
}

/// Polls `port` until `pick` accepts a frame or `limit` passes, calling
/// `poke` every 300 ms to provoke the frame again.
fn poll_for<T>(
    port: &mut dyn Port,
    pool: &Pool,
    limit: Duration,
    mut poke: impl FnMut(&mut dyn Port),
    mut pick: impl FnMut(&[u8]) -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + limit;
    let mut last_poke: Option<Instant> = None;
    while Instant::now() < deadline {
        let due = match last_poke {
            None => true,
            Some(t) => t.elapsed() > Duration::from_millis(300),
        };
        if due {
            poke(&mut *port);
            last_poke = Some(Instant::now());
        }
        let mut rx = Burst::new();
        port.rx_burst(pool, &mut rx, 0);
        if let Some(v) = rx.iter().find_map(|p| pick(p.data())) {
            return Some(v);
        }
        thread::sleep(Duration::from_millis(2));
    }
    None
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn tap_exchanges_frames_with_the_kernel() {
    let ns = Netns::new();
    let ns_name = ns.name.clone();
    ns.run(move || {
        let name = format!("rytap{}", std::process::id());
        let mut tap = TapPort::open(&name).unwrap();
        assert!(tap.created_device());
        assert_eq!(tap.ifname(), name);
        assert_eq!(tap.mac(), None);
        assert_eq!(tap.describe(), format!("tap {name}"));
        run_ip(&["-n", &ns_name, "addr", "add", "10.77.0.1/24", "dev", &name]);
        assert!(wait_link(&tap, true), "tap never came up");
        let pool = Pool::new(256);

        // A frame the kernel sends out of the tap wakes a poller.
        let udp = UdpSocket::bind("0.0.0.0:0").unwrap();
        let _ = udp.send_to(b"wake", "10.77.0.4:9");
        assert!(
            wakes_a_poller(&tap),
            "the kernel's ARP request did not wake the poller"
        );

        // The kernel resolving a neighbour sends an ARP request out of the tap.
        let kernel_mac = poll_for(
            &mut tap,
            &pool,
            Duration::from_secs(5),
            |_| {
                let _ = udp.send_to(b"hello", "10.77.0.3:9");
            },
            |f| {
                let arp_request = f.len() >= 42
                    && f[12..14] == [0x08, 0x06]
                    && f[20..22] == [0, 1]
                    && f[28..32] == [10, 77, 0, 1]
                    && f[38..42] == [10, 77, 0, 3];
                arp_request.then(|| MacAddr::from_bytes(&f[22..28]))
            },
        )
        .expect("no ARP request for 10.77.0.3 from the kernel");

        // An echo request written to the tap is answered by the kernel.
        let me = MacAddr([0x02, 0, 0, 0x77, 0, 0x02]);
        run_ip(&[
            "-n",
            &ns_name,
            "neigh",
            "replace",
            "10.77.0.2",
            "lladdr",
            "02:00:00:77:00:02",
            "dev",
            &name,
            "nud",
            "permanent",
        ]);
        let req = echo_request(
            kernel_mac,
            me,
            Ipv4Addr::new(10, 77, 0, 2),
            Ipv4Addr::new(10, 77, 0, 1),
            0x7279,
        );
        let reply = poll_for(
            &mut tap,
            &pool,
            Duration::from_secs(5),
            |port| {
                let mut tx = Burst::new();
                tx.push(packet(&pool, &req));
                assert_eq!(port.tx_burst(&mut tx, 0).sent, 1);
            },
            |f| {
                let is_reply = f.len() >= 42
                    && f[..6] == me.0
                    && f[12..14] == [0x08, 0x00]
                    && f[23] == 1
                    && f[26..30] == [10, 77, 0, 1]
                    && f[30..34] == [10, 77, 0, 2]
                    && f[34] == 0
                    && f[38..40] == [0x72, 0x79];
                is_reply.then(|| f.to_vec())
            },
        );
        let reply = reply.expect("no echo reply from the kernel");
        assert_eq!(&reply[42..], &req[42..], "echo payload changed");
        let c = tap.io_counters();
        assert!(c.tx_frames >= 1 && c.rx_frames >= 2, "{c:?}");
        assert_eq!(c.tx_errors, 0);
    });
}
