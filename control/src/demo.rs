//! `railyard demo`: the main job on an embedded rail switch and a synthetic
//! trace, in virtual time — no root, no files.
//!
//! Four GPU hosts hang off a rail switch with two spine uplinks, configured
//! with the book's RoCEv2 QoS policy. Hosts 1–3 send RoCEv2 (DSCP 24) to
//! host 4 at 33 Gb/s each — an incast that oversubscribes its 100 Gb/s port —
//! so queue 3 builds and WRED marks CE; host 4 answers with CNPs (DSCP 48) on
//! strict-priority queue 7, and best-effort TCP/UDP runs beside them, some of
//! it over the ECMP uplinks; a ping and an ARP request for the switch, a
//! frame with an expired TTL and a few malformed frames show the switch's own
//! handling and its drop counters.

use std::net::{IpAddr, Ipv4Addr};

use railyard_config::{parse_str, ParseOptions};
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::port::trace::TracePort;
use railyard_dataplane::port::upstream::PfcUpstream;
use railyard_dataplane::port::Port;
use railyard_dataplane::qos::shaper::{wire_bytes, WIRE_OVERHEAD_BYTES};
use railyard_dataplane::wire::MacAddr;

use crate::compile::{compile, Compiled};
use crate::replay::{run_virtual_sampled, ReplayReport};
use crate::traffic::{build, FrameSpec, Transport, BTH_CNP, BTH_RC_WRITE_ONLY};

/// The embedded configuration: a rail switch in NX-OS syntax.
pub const DEMO_CONFIG: &str = include_str!("demo.conf");

/// MAC of GPU host `n` (1-based) as the demo configures it.
pub fn host_mac(n: u8) -> MacAddr {
    MacAddr([0x02, 0x00, 0x00, 0x00, 0x00, n])
}

/// IPv4 address of GPU host `n`.
pub fn host_ip(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, n, 2)
}

/// Parses the embedded configuration.
///
/// # Errors
/// Never in a released build; the message says which line broke.
pub fn demo_config() -> Result<railyard_config::Config, String> {
    parse_str(DEMO_CONFIG, "demo.conf", &ParseOptions::default())
        .map(|p| p.config)
        .map_err(|d| crate::format_diagnostics(&d))
}

/// Compiles the embedded configuration.
///
/// # Errors
/// Never in a released build; the message says which line broke.
pub fn demo_switch() -> Result<Compiled, String> {
    compile(&demo_config()?).map_err(|d| crate::format_diagnostics(&d))
}

/// Length (without FCS) of the senders' RoCEv2 frames.
pub const ROCE_FRAME: usize = 1086;
/// Each sender's RoCEv2 rate in Mb/s of frame bytes, as the senders count it.
pub const ROCE_MBPS: u64 = 33_000;
/// Gap between one sender's RoCEv2 frames: [`ROCE_FRAME`] at [`ROCE_MBPS`],
/// rounded down to the nanosecond (263 ns).
pub const ROCE_GAP_NS: Nanos = ROCE_FRAME as Nanos * 8 * 1000 / ROCE_MBPS;
/// Length of the best-effort TCP frames each sender sends to GPU 4.
pub const TCP_FRAME: usize = 1500;
/// One TCP frame per this many RoCEv2 gaps.
pub const TCP_EVERY: u64 = 32;
/// Length of the best-effort UDP frames toward the spines.
pub const BE_FRAME: usize = 512;
/// One best-effort UDP frame per this many RoCEv2 gaps.
pub const BE_EVERY: u64 = 4;
/// One CNP from GPU 4 to each sender per this many RoCEv2 gaps.
pub const CNP_EVERY: u64 = 50;

/// The synthetic trace, per host port (index = host number − 1); each entry
/// is (time in ns, frame).
pub fn demo_trace(sw: &Compiled, packets_per_sender: u64) -> Vec<Vec<(Nanos, Vec<u8>)>> {
    let port_mac = |i: usize| sw.model.interfaces[i].mac;
    let mut trace: Vec<Vec<(Nanos, Vec<u8>)>> = vec![Vec::new(); 4];
    // Each sender runs RoCEv2 at 33 Gb/s and a little TCP to host 4: on the
    // wire that oversubscribes host 4's 100 Gb/s port (see `Incast`), so
    // queue 3 builds into the WRED band.
    let gap: Nanos = ROCE_GAP_NS;
    for n in 1..=3u8 {
        let i = usize::from(n - 1);
        let mut roce = FrameSpec::udp(
            host_mac(n),
            port_mac(i),
            IpAddr::V4(host_ip(n)),
            IpAddr::V4(host_ip(4)),
        );
        roce.dscp = 24;
        roce.ecn = 2;
        roce.frame_len = ROCE_FRAME;
        roce.src_port = 49152 + u16::from(n);
        for k in 0..packets_per_sender {
            roce.transport = Transport::Roce {
                opcode: BTH_RC_WRITE_ONLY,
                dest_qp: 0x100 + u32::from(n),
                psn: k as u32,
            };
            trace[i].push((k * gap + u64::from(n) * 7, build(&roce, k)));
        }
        // Best effort toward the spines (ECMP) and to host 4.
        let mut be = FrameSpec::udp(
            host_mac(n),
            port_mac(i),
            IpAddr::V4(host_ip(n)),
            IpAddr::V4(Ipv4Addr::new(10, 100, n, 10)),
        );
        be.frame_len = BE_FRAME;
        for k in 0..packets_per_sender / BE_EVERY {
            be.src_port = 1024 + (k % 64) as u16;
            trace[i].push((k * gap * BE_EVERY + 50, build(&be, k)));
        }
        let mut tcp = FrameSpec::udp(
            host_mac(n),
            port_mac(i),
            IpAddr::V4(host_ip(n)),
            IpAddr::V4(host_ip(4)),
        );
        tcp.transport = Transport::Tcp;
        tcp.frame_len = TCP_FRAME;
        tcp.dst_port = 5201;
        for k in 0..packets_per_sender / TCP_EVERY {
            trace[i].push((k * gap * TCP_EVERY + 30, build(&tcp, k)));
        }
    }
    // Host 4 answers each sender with CNPs (DSCP 48).
    for n in 1..=3u8 {
        let mut cnp = FrameSpec::udp(
            host_mac(4),
            port_mac(3),
            IpAddr::V4(host_ip(4)),
            IpAddr::V4(host_ip(n)),
        );
        cnp.dscp = 48;
        cnp.src_port = 49152 + u16::from(n);
        cnp.transport = Transport::Roce {
            opcode: BTH_CNP,
            dest_qp: 0x100 + u32::from(n),
            psn: 0,
        };
        for k in 0..packets_per_sender / CNP_EVERY {
            trace[3].push((k * gap * CNP_EVERY + 1_000 + u64::from(n), build(&cnp, k)));
        }
    }
    // The switch's own handling: ARP for its address, a ping, an expired TTL,
    // and malformed frames.
    trace[0].push((
        5,
        crate::traffic::arp_request(host_mac(1), host_ip(1), Ipv4Addr::new(10, 0, 1, 1)),
    ));
    let mut ping = FrameSpec::udp(
        host_mac(1),
        port_mac(0),
        IpAddr::V4(host_ip(1)),
        IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
    );
    ping.ttl = 64;
    trace[0].push((10, crate::traffic::icmp_echo(&ping, 1, 1)));
    let mut expired = FrameSpec::udp(
        host_mac(2),
        port_mac(1),
        IpAddr::V4(host_ip(2)),
        IpAddr::V4(host_ip(4)),
    );
    expired.ttl = 1;
    trace[1].push((20, build(&expired, 0)));
    let good = build(
        &FrameSpec::udp(
            host_mac(3),
            port_mac(2),
            IpAddr::V4(host_ip(3)),
            IpAddr::V4(host_ip(4)),
        ),
        0,
    );
    trace[2].push((25, good[..30].to_vec()));
    let mut bad_checksum = good.clone();
    bad_checksum[24] ^= 0xff;
    trace[2].push((26, bad_checksum));
    trace
}

/// Runs the demo: the embedded switch over the synthetic trace.
///
/// # Errors
/// An I/O or configuration message.
pub fn run_demo(packets_per_sender: u64) -> Result<(Compiled, ReplayReport), String> {
    run_demo_sampled(packets_per_sender, None)
}

/// [`run_demo`], sampling the switch every `plot_every` ns of virtual time
/// for pictures ([`ReplayReport::plot`]).
///
/// # Errors
/// An I/O or configuration message.
pub fn run_demo_sampled(
    packets_per_sender: u64,
    plot_every: Option<Nanos>,
) -> Result<(Compiled, ReplayReport), String> {
    let sw = demo_switch()?;
    let trace = demo_trace(&sw, packets_per_sender);
    let mut trace = trace.into_iter();
    let backends: Vec<Option<Box<dyn Port>>> = sw
        .model
        .interfaces
        .iter()
        .map(|ifc| {
            let frames = trace.next().unwrap_or_default();
            let port =
                TracePort::new(&ifc.name, frames).closed_loop(PfcUpstream::for_interface(ifc));
            Some(Box::new(port) as Box<dyn Port>)
        })
        .collect();
    let report = run_virtual_sampled(&sw.model, backends, 0, None, plot_every, |_, _| {})
        .map_err(|e| e.to_string())?;
    Ok((sw, report))
}

/// The offered load on GPU 4's port, from the trace's own constants: why
/// three "33 Gb/s" senders overfill a 100 Gb/s port.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Incast {
    /// One sender's RoCEv2, in Gb/s of frame bytes (what the sender counts).
    pub roce_frame_gbps: f64,
    /// The same on the wire: each frame plus the bytes the port shaper
    /// counts beyond it (FCS, preamble and start delimiter, inter-frame gap).
    pub roce_wire_gbps: f64,
    /// The best-effort TCP of the three senders to GPU 4, on the wire.
    pub tcp_wire_gbps: f64,
    /// GPU 4's port speed.
    pub port_gbps: f64,
}

/// Senders in the incast.
const SENDERS: f64 = 3.0;

impl Incast {
    /// The load the trace offers a port of `port_mbps`.
    pub fn new(port_mbps: u32) -> Incast {
        let gbps = |bytes: u64, every_ns: Nanos| (bytes * 8) as f64 / every_ns as f64;
        Incast {
            roce_frame_gbps: gbps(ROCE_FRAME as u64, ROCE_GAP_NS),
            roce_wire_gbps: gbps(wire_bytes(ROCE_FRAME), ROCE_GAP_NS),
            tcp_wire_gbps: SENDERS * gbps(wire_bytes(TCP_FRAME), ROCE_GAP_NS * TCP_EVERY),
            port_gbps: f64::from(port_mbps) / 1000.0,
        }
    }

    /// The three senders' RoCEv2 on the wire.
    pub fn roce_total_gbps(&self) -> f64 {
        SENDERS * self.roce_wire_gbps
    }

    /// What the port leaves queue 3 once the TCP beside it has its share
    /// (it asks far less than its DWRR weight gives it).
    pub fn left_for_roce_gbps(&self) -> f64 {
        self.port_gbps - self.tcp_wire_gbps
    }

    /// How fast queue 3 grows, in buffered (frame) bytes per millisecond.
    pub fn growth_bytes_per_ms(&self) -> f64 {
        let excess_wire = (self.roce_total_gbps() - self.left_for_roce_gbps()).max(0.0);
        let frame_share = ROCE_FRAME as f64 / wire_bytes(ROCE_FRAME) as f64;
        excess_wire * frame_share * 1e9 / 8.0 / 1e3
    }
}

/// What the demo's counters say, in words: why the incast builds a queue,
/// its marks on queue 3, the CNPs on queue 7, what the ports sent and PFC.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn explain(
    out: &mut dyn std::io::Write,
    sw: &Compiled,
    stats: &railyard_dataplane::stats::SwitchStats,
) -> std::io::Result<()> {
    let Some(gpu4) = stats.interfaces.get("Ethernet1/4") else {
        return Ok(());
    };
    let q3 = &gpu4.queues[3];
    writeln!(
        out,
        "\nEthernet1/4 (GPU 4, 100 Gb/s) receives three 33 Gb/s RoCEv2 senders: queue 3 peaked at {} KB;\n\
         WRED/ECN (150-3000 KB, 7 %) marked {} of {} RoCEv2 packets CE, {} WRED and {} tail drops.",
        q3.max_depth_bytes / 1024,
        q3.ecn_marked,
        q3.tx_packets,
        q3.wred_drops,
        q3.tail_drops
    )?;
    let port = |i: usize| sw.model.interfaces.get(i);
    if let Some(speed) = port(3).and_then(|p| p.speed_mbps) {
        let load = Incast::new(speed);
        writeln!(
            out,
            "Why a queue, when 3 x 33 = 99 Gb/s is less than 100? Each sender sends a {ROCE_FRAME}-byte frame every\n\
             {ROCE_GAP_NS} ns: {:.1} Gb/s of frames but {:.1} Gb/s on the wire, because each frame also takes {} bytes\n\
             the port shaper counts (FCS 4, preamble and start delimiter 8, inter-frame gap 12). Three make\n\
             {:.1} Gb/s, and the best-effort TCP to GPU 4 beside them ({TCP_FRAME}-byte frames every {} from\n\
             each sender, {:.1} Gb/s on the wire together) takes its part of the port, leaving queue 3\n\
             {:.1} Gb/s: it grows by about {:.0} KB per ms while all three send.",
            load.roce_frame_gbps,
            load.roce_wire_gbps,
            WIRE_OVERHEAD_BYTES,
            load.roce_total_gbps(),
            crate::show::duration(ROCE_GAP_NS * TCP_EVERY),
            load.tcp_wire_gbps,
            load.left_for_roce_gbps(),
            load.growth_bytes_per_ms() / 1024.0,
        )?;
        let xoff = port(0).map_or(0, |p| p.pfc.pg[3].xoff_bytes);
        let paused: u64 = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
            .iter()
            .filter_map(|n| stats.interfaces.get(*n))
            .map(|i| i.pfc.tx_pause[3])
            .sum();
        if paused > 0 && xoff > 0 {
            writeln!(
                out,
                "It levels off near 3 x {} KB = {} KB: each sender port pauses priority 3 upstream once\n\
                 {} KB of it wait in the switch (its PFC pause threshold).",
                xoff / 1024,
                3 * xoff / 1024,
                xoff / 1024
            )?;
        }
    }
    let (cnps, worst) = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
        .iter()
        .filter_map(|n| stats.interfaces.get(*n))
        .map(|i| &i.queues[7])
        .fold((0, 0), |(n, w), q| {
            (n + q.tx_packets, w.max(q.latency_ns.max))
        });
    writeln!(
        out,
        "\nCNPs (DSCP 48) rode strict-priority queue 7 back to the senders: {cnps} sent, longest wait {}.",
        crate::show::duration(worst)
    )?;
    if let Some(gpu1) = stats.interfaces.get("Ethernet1/1") {
        let queued: u64 = gpu1.queues.iter().map(|q| q.tx_packets).sum();
        let pfc: u64 = gpu1.pfc.tx_pause.iter().chain(&gpu1.pfc.tx_resume).sum();
        let answers = gpu1.tx_packets.saturating_sub(queued + pfc);
        let summary = crate::replay::Summary::of(stats, 0);
        writeln!(
            out,
            "\nTX counts every frame a port sent, the switch's own too: Ethernet1/1 sent {}, the {} CNPs of\n\
             queue 7, {} PFC pause/resume frames upstream and {} answers to the {} frames it punted (the\n\
             ARP request and the ping). The switch's own frames leave ahead of the egress queues, so no\n\
             queue counts them: in all {} sent = {} forwarded + {} of the switch's own.",
            gpu1.tx_packets,
            gpu1.queues.get(7).map_or(0, |q| q.tx_packets),
            pfc,
            answers,
            gpu1.punted,
            summary.sent,
            summary.forwarded,
            summary.originated
        )?;
    }
    let senders: Vec<_> = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
        .iter()
        .filter_map(|n| stats.interfaces.get(*n))
        .collect();
    let xoff: u64 = senders.iter().map(|i| i.pfc.tx_pause[3]).sum();
    let xon: u64 = senders.iter().map(|i| i.pfc.tx_resume[3]).sum();
    let overflow: u64 = senders
        .iter()
        .map(|i| i.drops.get("ingress_overflow").copied().unwrap_or(0))
        .sum();
    writeln!(
        out,
        "\nPFC priority 3 (lossless, `pause pfc-cos 3`): the sender ports sent {xoff} pause and {xon} resume frames\n\
         upstream. The senders honour PFC (closed-loop replay): they hold a paused priority back and\n\
         send it on resume, so {overflow} lossless packets overflowed the ingress headroom (`ingress_overflow`)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wire rate in Gb/s of the frames of `trace` that `pick` keeps, over
    /// the time they span (one RoCEv2 gap added for the last frame's slot).
    fn wire_gbps(trace: &[(Nanos, Vec<u8>)], pick: impl Fn(&[u8]) -> bool) -> f64 {
        let picked: Vec<_> = trace.iter().filter(|(_, f)| pick(f)).collect();
        let first = picked.iter().map(|(t, _)| *t).min().unwrap();
        let last = picked.iter().map(|(t, _)| *t).max().unwrap();
        let bytes: u64 = picked.iter().map(|(_, f)| wire_bytes(f.len())).sum();
        let every = (last - first) / (picked.len() as u64 - 1);
        (bytes * 8) as f64 / (last - first + every) as f64
    }

    #[test]
    fn the_incast_arithmetic_is_the_traces_own() {
        let sw = demo_switch().unwrap();
        let trace = demo_trace(&sw, 3200);
        let to_gpu4 = |f: &[u8]| {
            f.len() > 34 && f[12..14] == [0x08, 0x00] && f[30..34] == host_ip(4).octets()
        };
        let dscp = |f: &[u8]| f[15] >> 2;
        let load = Incast::new(sw.model.interfaces[3].speed_mbps.unwrap());
        let mut roce = 0.0;
        let mut tcp = 0.0;
        for sender in &trace[..3] {
            roce += wire_gbps(sender, |f| to_gpu4(f) && dscp(f) == 24);
            tcp += wire_gbps(sender, |f| to_gpu4(f) && f[23] == 6);
        }
        assert!(
            (roce - load.roce_total_gbps()).abs() < 0.01,
            "{roce} vs {load:?}"
        );
        assert!((tcp - load.tcp_wire_gbps).abs() < 0.01, "{tcp} vs {load:?}");
        assert!((load.roce_frame_gbps - 33.03).abs() < 0.01, "{load:?}");
        assert!((load.roce_total_gbps() - 101.29).abs() < 0.01, "{load:?}");
        assert!((load.left_for_roce_gbps() - 95.65).abs() < 0.01, "{load:?}");
        // 5.6 Gb/s of wire too much, 1086 of every 1110 bytes buffered.
        assert!(
            (load.growth_bytes_per_ms() - 689_400.0).abs() < 1_000.0,
            "{load:?}"
        );
        // Nothing else of the hosts' goes to GPU 4 but the expired and
        // malformed 60-byte frames, which the switch drops.
        for sender in &trace[..3] {
            assert!(sender
                .iter()
                .all(|(_, f)| !to_gpu4(f) || dscp(f) == 24 || f[23] == 6 || f.len() <= 60));
        }
    }
}
