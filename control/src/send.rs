//! `railyard send`: RoCEv2-like UDP traffic from a lab host, through the
//! kernel's own stack.
//!
//! Each datagram goes out of an ordinary UDP socket whose `IP_TOS` (or
//! `IPV6_TCLASS`) carries the DSCP and ECN bits, so the host's routing, ARP
//! and NIC choice apply as for any application. The UDP payload starts with
//! an InfiniBand base transport header (BTH) and ends with a 4-byte ICRC
//! placeholder, as a RoCEv2 NIC's frames do; `--cnp` sends congestion
//! notification packets (BTH opcode 0x81, DSCP 48) instead.
//!
//! Pacing sleeps: every wake-up sends the datagrams that have come due since
//! the start, so high rates go out in small batches without burning a core.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use clap::Args;

use crate::traffic::{BTH_CNP, BTH_RC_WRITE_ONLY, ROCEV2_PORT};

/// Length of the base transport header.
pub const BTH_LEN: usize = 12;
/// Length of the invariant CRC trailer (sent as zeros).
pub const ICRC_LEN: usize = 4;
/// UDP payload of a CNP: BTH, 16 reserved bytes, ICRC.
pub const CNP_LEN: usize = BTH_LEN + 16 + ICRC_LEN;
/// UDP payload when `--size` is not given and `--cnp` is not set.
pub const DEFAULT_SIZE: usize = 1024;
/// Largest UDP payload an IPv4 datagram can carry.
pub const MAX_SIZE: usize = 65_507;
/// Datagrams per second when neither `--rate` nor `--mbps` is given.
pub const DEFAULT_RATE: f64 = 1000.0;
/// Datagrams sent when neither `--count` nor `--duration` is given.
pub const DEFAULT_COUNT: u64 = 1000;
/// DSCP of RoCEv2 data in the book's QoS policy.
pub const DSCP_ROCE: u8 = 24;
/// DSCP of CNPs in the book's QoS policy.
pub const DSCP_CNP: u8 = 48;
/// Default source port of the first flow: the start of the range RoCEv2
/// NICs draw UDP source-port entropy from.
pub const DEFAULT_SPORT: u16 = 49152;
/// Datagrams sent per wake-up when unpaced (`--rate 0`).
const UNPACED_BATCH: u64 = 64;

/// Command-line arguments of `railyard send`.
#[derive(Debug, Clone, Args)]
pub struct SendArgs {
    /// Destination address (IPv4 or IPv6).
    #[arg(long)]
    pub dst: IpAddr,
    /// Destination UDP port.
    #[arg(long, default_value_t = ROCEV2_PORT)]
    pub dport: u16,
    /// Source address to send from; picks the NIC on a multi-homed host.
    #[arg(long)]
    pub bind: Option<IpAddr>,
    /// UDP source port of the first flow (RoCEv2 entropy); 0 lets the kernel pick.
    #[arg(long, default_value_t = DEFAULT_SPORT)]
    pub sport: u16,
    /// Flows to spread over: source ports SPORT.., destination QPs QP..,
    /// used in turn.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub flows: u16,
    /// Datagrams per second; 0 sends as fast as the socket takes them
    /// [default: 1000].
    #[arg(long, conflicts_with = "mbps")]
    pub rate: Option<f64>,
    /// Rate in Mb/s, counting the Ethernet frame (payload + UDP + IP + 14 bytes).
    #[arg(long)]
    pub mbps: Option<f64>,
    /// Datagrams to send [default: 1000 unless --duration is given].
    #[arg(long)]
    pub count: Option<u64>,
    /// Seconds to send for (with --count, whichever ends first).
    #[arg(long)]
    pub duration: Option<f64>,
    /// UDP payload bytes, BTH and ICRC included [default: 1024, 32 with --cnp].
    #[arg(long)]
    pub size: Option<usize>,
    /// DSCP [default: 24, 48 with --cnp].
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=63))]
    pub dscp: Option<u8>,
    /// ECN codepoint: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub ecn: u8,
    /// Send congestion notification packets (BTH opcode 0x81, DSCP 48).
    #[arg(long)]
    pub cnp: bool,
    /// Destination QP of the first flow (24 bits).
    #[arg(long, default_value_t = 1)]
    pub qp: u32,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What to send, resolved and checked from [`SendArgs`].
#[derive(Debug, Clone, PartialEq)]
pub struct SendPlan {
    /// Destination address and port.
    pub dst: SocketAddr,
    /// Local address to bind, if any.
    pub bind: Option<IpAddr>,
    /// Source port of the first flow (0: kernel-chosen).
    pub sport: u16,
    /// Number of flows.
    pub flows: u16,
    /// Destination QP of the first flow.
    pub qp: u32,
    /// Datagrams per second; `None` is unpaced.
    pub pps: Option<f64>,
    /// Stop after this many datagrams.
    pub count: Option<u64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// UDP payload length.
    pub size: usize,
    /// DSCP.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: u8,
    /// BTH opcode.
    pub opcode: u8,
}

impl SendPlan {
    /// The IP TOS byte (IPv4) or traffic class (IPv6): DSCP << 2 | ECN.
    pub fn tos(&self) -> u8 {
        (self.dscp << 2) | (self.ecn & 3)
    }

    /// Bytes of the Ethernet frame carrying one datagram (without FCS).
    pub fn frame_len(&self) -> usize {
        let ip = if self.dst.is_ipv6() { 40 } else { 20 };
        14 + ip + 8 + self.size
    }
}

impl SendArgs {
    /// Checks the arguments and fills in the defaults.
    ///
    /// # Errors
    /// A message naming the offending option.
    pub fn plan(&self) -> Result<SendPlan, String> {
        let size = self
            .size
            .unwrap_or(if self.cnp { CNP_LEN } else { DEFAULT_SIZE });
        if size < BTH_LEN + ICRC_LEN {
            return Err(format!(
                "--size {size}: at least {} bytes (BTH and ICRC)",
                BTH_LEN + ICRC_LEN
            ));
        }
        let max = if self.dst.is_ipv6() {
            MAX_SIZE + 20
        } else {
            MAX_SIZE
        };
        if size > max {
            return Err(format!("--size {size}: at most {max} bytes"));
        }
        if let Some(b) = self.bind {
            if b.is_ipv6() != self.dst.is_ipv6() {
                return Err(format!(
                    "--bind {b} and --dst {} are of different families",
                    self.dst
                ));
            }
        }
        if u32::from(self.sport) + u32::from(self.flows) - 1 > u32::from(u16::MAX)
            && self.sport != 0
        {
            return Err(format!(
                "--sport {} with --flows {}: source ports beyond 65535",
                self.sport, self.flows
            ));
        }
        if self.qp + u32::from(self.flows) - 1 > 0x00ff_ffff {
            return Err(format!(
                "--qp {} with --flows {}: QPs are 24 bits",
                self.qp, self.flows
            ));
        }
        let mut plan = SendPlan {
            dst: SocketAddr::new(self.dst, self.dport),
            bind: self.bind,
            sport: self.sport,
            flows: self.flows,
            qp: self.qp,
            pps: None,
            count: None,
            duration: None,
            size,
            dscp: self
                .dscp
                .unwrap_or(if self.cnp { DSCP_CNP } else { DSCP_ROCE }),
            ecn: self.ecn,
            opcode: if self.cnp { BTH_CNP } else { BTH_RC_WRITE_ONLY },
        };
        plan.pps = match (self.rate, self.mbps) {
            (Some(r), _) if !(r.is_finite() && r >= 0.0) => {
                return Err(format!("--rate {r}: a number of datagrams per second ≥ 0"))
            }
            (Some(0.0), _) => None,
            (Some(r), _) => Some(r),
            (None, Some(m)) if !(m.is_finite() && m > 0.0) => {
                return Err(format!("--mbps {m}: a rate in Mb/s > 0"))
            }
            (None, Some(m)) => Some(m * 1e6 / (8.0 * plan.frame_len() as f64)),
            (None, None) => Some(DEFAULT_RATE),
        };
        if let Some(d) = self.duration {
            if !(d.is_finite() && d > 0.0) {
                return Err(format!("--duration {d}: seconds > 0"));
            }
            plan.duration = Some(Duration::from_secs_f64(d));
        }
        plan.count = match (self.count, self.duration) {
            (Some(c), _) => Some(c),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_COUNT),
        };
        Ok(plan)
    }
}

/// Writes a RoCEv2 UDP payload into `buf`: BTH with `opcode`, the default
/// P_Key, `dest_qp` and PSN = `seq` mod 2^24; then (unless a CNP, whose
/// 16 bytes after the BTH are reserved) `seq` as 8 big-endian bytes when
/// they fit before the ICRC; zeros elsewhere, the ICRC included.
///
/// # Panics
/// Never; a `buf` shorter than the BTH gets as much of it as fits.
pub fn fill_payload(buf: &mut [u8], opcode: u8, dest_qp: u32, seq: u64) {
    buf.fill(0);
    let mut bth = [0u8; BTH_LEN];
    bth[0] = opcode;
    bth[2..4].copy_from_slice(&0xffffu16.to_be_bytes());
    bth[4..8].copy_from_slice(&(dest_qp & 0x00ff_ffff).to_be_bytes());
    bth[8..12].copy_from_slice(&((seq as u32) & 0x00ff_ffff).to_be_bytes());
    let n = buf.len().min(BTH_LEN);
    buf[..n].copy_from_slice(&bth[..n]);
    set_seq(buf, opcode, seq);
}

/// Updates the PSN and sequence number of a payload [`fill_payload`] wrote.
fn set_seq(buf: &mut [u8], opcode: u8, seq: u64) {
    if let Some(psn) = buf.get_mut(9..12) {
        psn.copy_from_slice(&(seq as u32).to_be_bytes()[1..]);
    }
    if opcode != BTH_CNP && buf.len() >= BTH_LEN + 8 + ICRC_LEN {
        buf[BTH_LEN..BTH_LEN + 8].copy_from_slice(&seq.to_be_bytes());
    }
}

/// What a run of `railyard send` did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SendReport {
    /// Datagrams the kernel accepted.
    pub sent: u64,
    /// Sends the kernel refused (full buffers, unreachable routes).
    pub errors: u64,
    /// UDP payload bytes sent.
    pub payload_bytes: u64,
    /// Seconds from the first send to the last.
    pub duration_s: f64,
    /// Achieved datagrams per second.
    pub pps: f64,
    /// Achieved rate in Mb/s, counting Ethernet frames as `--mbps` does.
    pub mbps: f64,
    /// Destination address and port.
    pub dst: String,
    /// DSCP sent.
    pub dscp: u8,
    /// ECN codepoint sent.
    pub ecn: u8,
    /// BTH opcode sent.
    pub opcode: u8,
    /// Flows used.
    pub flows: u16,
    /// UDP payload length.
    pub size: usize,
}

/// One socket per flow, bound to its source port, with the TOS set.
fn open_sockets(plan: &SendPlan) -> Result<Vec<UdpSocket>, String> {
    let local = plan.bind.unwrap_or(if plan.dst.is_ipv6() {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    });
    (0..plan.flows)
        .map(|k| {
            let port = if plan.sport == 0 { 0 } else { plan.sport + k };
            let sock = UdpSocket::bind(SocketAddr::new(local, port))
                .map_err(|e| format!("bind {}: {e}", SocketAddr::new(local, port)))?;
            let set = if plan.dst.is_ipv6() {
                rustix::net::sockopt::set_ipv6_tclass(&sock, u32::from(plan.tos()))
            } else {
                rustix::net::sockopt::set_ip_tos(&sock, plan.tos())
            };
            set.map_err(|e| format!("setting TOS {:#04x}: {e}", plan.tos()))?;
            Ok(sock)
        })
        .collect()
}

/// Sends what `plan` describes and reports what went out.
///
/// Sockets are not connected, so ICMP errors from a receiver without a
/// listener do not fail later sends.
///
/// # Errors
/// Opening or configuring a socket failed.
pub fn send(plan: &SendPlan) -> Result<SendReport, String> {
    let socks = open_sockets(plan)?;
    let mut bufs: Vec<Vec<u8>> = (0..plan.flows)
        .map(|k| {
            let mut b = vec![0u8; plan.size];
            fill_payload(&mut b, plan.opcode, plan.qp + u32::from(k), 0);
            b
        })
        .collect();
    let start = Instant::now();
    let deadline = plan.duration.map(|d| start + d);
    let limit = plan.count.unwrap_or(u64::MAX);
    let (mut seq, mut sent, mut errors) = (0u64, 0u64, 0u64);
    let mut last = start;
    while seq < limit {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break;
        }
        let due = match plan.pps {
            None => seq.saturating_add(UNPACED_BATCH),
            // The first datagram is due at once, the n-th at n / pps.
            Some(pps) => ((now - start).as_secs_f64() * pps) as u64 + 1,
        }
        .min(limit);
        while seq < due {
            let k = (seq % u64::from(plan.flows)) as usize;
            set_seq(&mut bufs[k], plan.opcode, seq);
            match socks[k].send_to(&bufs[k], plan.dst) {
                Ok(_) => sent += 1,
                Err(_) => errors += 1,
            }
            seq += 1;
        }
        last = Instant::now();
        if let Some(pps) = plan.pps {
            let next = start + Duration::from_secs_f64(seq as f64 / pps);
            let wake = deadline.map_or(next, |d| next.min(d));
            if let Some(wait) = wake.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    let secs = (last - start).as_secs_f64();
    let rate = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
    Ok(SendReport {
        sent,
        errors,
        payload_bytes: sent * plan.size as u64,
        duration_s: secs,
        pps: rate(sent as f64),
        mbps: rate(sent as f64 * plan.frame_len() as f64 * 8.0) / 1e6,
        dst: plan.dst.to_string(),
        dscp: plan.dscp,
        ecn: plan.ecn,
        opcode: plan.opcode,
        flows: plan.flows,
        size: plan.size,
    })
}

/// The one-line summary `railyard send` prints.
pub fn render(out: &mut dyn Write, r: &SendReport) -> std::io::Result<()> {
    let ecn = ["Not-ECT", "ECT(1)", "ECT(0)", "CE"][usize::from(r.ecn & 3)];
    let kind = if r.opcode == BTH_CNP { "CNP" } else { "RoCEv2" };
    writeln!(
        out,
        "sent {} {kind} datagrams of {} bytes to {} (DSCP {}, {ecn}, {} flow{}) in {:.3} s: \
         {:.0} pps, {:.2} Mb/s; {} send errors",
        r.sent,
        r.size,
        r.dst,
        r.dscp,
        r.flows,
        if r.flows == 1 { "" } else { "s" },
        r.duration_s,
        r.pps,
        r.mbps,
        r.errors
    )
}

/// `railyard send`: checks the arguments, sends, prints the summary.
///
/// # Errors
/// Bad arguments, a socket that could not be opened, or output that could
/// not be written.
pub fn run(args: &SendArgs, out: &mut dyn Write) -> Result<SendReport, String> {
    let plan = args.plan()?;
    let report = send(&plan)?;
    if args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        writeln!(out, "{text}").map_err(|e| e.to_string())?;
    } else {
        render(out, &report).map_err(|e| e.to_string())?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        send: SendArgs,
    }

    fn parse(args: &[&str]) -> Result<SendArgs, String> {
        let mut argv = vec!["send"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv)
            .map(|c| c.send)
            .map_err(|e| e.to_string())
    }

    fn plan(args: &[&str]) -> Result<SendPlan, String> {
        parse(args)?.plan()
    }

    #[test]
    fn defaults_are_rocev2_data_with_ect0() {
        let p = plan(&["--dst", "10.0.2.2"]).unwrap();
        assert_eq!(p.dst, "10.0.2.2:4791".parse().unwrap());
        assert_eq!((p.dscp, p.ecn, p.tos()), (24, 2, 0x62));
        assert_eq!(p.opcode, BTH_RC_WRITE_ONLY);
        assert_eq!((p.sport, p.flows, p.qp), (49152, 1, 1));
        assert_eq!(
            (p.size, p.pps, p.count, p.duration),
            (1024, Some(1000.0), Some(1000), None)
        );
        assert_eq!(p.frame_len(), 14 + 20 + 8 + 1024);
    }

    #[test]
    fn cnp_sets_dscp_48_opcode_0x81_and_the_cnp_size() {
        let p = plan(&["--dst", "10.0.2.2", "--cnp"]).unwrap();
        assert_eq!((p.dscp, p.opcode, p.size, p.tos()), (48, 0x81, 32, 0xc2));
        // An explicit DSCP still wins.
        let p = plan(&["--dst", "10.0.2.2", "--cnp", "--dscp", "46", "--ecn", "0"]).unwrap();
        assert_eq!((p.dscp, p.tos()), (46, 0xb8));
    }

    #[test]
    fn rates_counts_and_durations() {
        let p = plan(&["--dst", "fd00::2", "--mbps", "10", "--size", "1196"]).unwrap();
        // 1196 + 8 + 40 + 14 = 1258 bytes = 10064 bits: 10 Mb/s is ~993.6 pps.
        assert!((p.pps.unwrap() - 10e6 / 10064.0).abs() < 1e-6);
        let p = plan(&["--dst", "10.0.0.1", "--rate", "0", "--duration", "1.5"]).unwrap();
        assert_eq!(
            (p.pps, p.count, p.duration),
            (None, None, Some(Duration::from_millis(1500)))
        );
        let p = plan(&["--dst", "10.0.0.1", "--count", "5", "--duration", "2"]).unwrap();
        assert_eq!(p.count, Some(5));
    }

    #[test]
    fn bad_arguments_are_refused() {
        for bad in [
            &["--dst", "10.0.0.1", "--dscp", "64"][..],
            &["--dst", "10.0.0.1", "--ecn", "4"],
            &["--dst", "10.0.0.1", "--flows", "0"],
            &["--dst", "10.0.0.1", "--rate", "5", "--mbps", "1"],
            &["--dst", "not-an-ip"],
            &["--rate", "5"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
        for (bad, word) in [
            (&["--dst", "10.0.0.1", "--size", "15"][..], "--size"),
            (&["--dst", "10.0.0.1", "--size", "65508"], "--size"),
            (&["--dst", "10.0.0.1", "--rate=-1"], "--rate"),
            (&["--dst", "10.0.0.1", "--rate", "NaN"], "--rate"),
            (&["--dst", "10.0.0.1", "--mbps", "0"], "--mbps"),
            (&["--dst", "10.0.0.1", "--duration", "0"], "--duration"),
            (&["--dst", "10.0.0.1", "--bind", "fd00::1"], "families"),
            (
                &["--dst", "10.0.0.1", "--sport", "65535", "--flows", "2"],
                "--sport",
            ),
            (
                &["--dst", "10.0.0.1", "--qp", "16777215", "--flows", "2"],
                "24 bits",
            ),
        ] {
            let e = plan(bad).unwrap_err();
            assert!(e.contains(word), "{bad:?}: {e}");
        }
        assert!(plan(&["--dst", "fd00::1", "--size", "65527"]).is_ok());
    }

    #[test]
    fn payload_starts_with_a_bth() {
        let mut buf = [0xa5u8; 40];
        fill_payload(&mut buf, BTH_RC_WRITE_ONLY, 0x12_3456, 0x0102_0304_0506);
        assert_eq!(
            buf[..BTH_LEN],
            [0x0a, 0x00, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56, 0x00, 0x04, 0x05, 0x06]
        );
        assert_eq!(buf[12..20], 0x0102_0304_0506u64.to_be_bytes());
        assert!(buf[20..].iter().all(|b| *b == 0), "padding and ICRC zeroed");
        // The QP is 24 bits; higher bits are dropped.
        fill_payload(&mut buf, BTH_RC_WRITE_ONLY, 0xff00_0001, 7);
        assert_eq!(buf[4..8], [0, 0, 0, 1]);
        assert_eq!(buf[9..12], [0, 0, 7]);
    }

    #[test]
    fn cnp_payload_keeps_its_reserved_bytes_zero() {
        let mut buf = [0xa5u8; CNP_LEN];
        fill_payload(&mut buf, BTH_CNP, 9, 300);
        assert_eq!(buf[0], 0x81);
        assert_eq!(buf[9..12], [0, 1, 44]);
        assert!(buf[BTH_LEN..].iter().all(|b| *b == 0));
    }

    #[test]
    fn short_buffers_get_what_fits() {
        let mut buf = [0xa5u8; 16];
        fill_payload(&mut buf, BTH_RC_WRITE_ONLY, 1, 2);
        assert_eq!(buf[..4], [0x0a, 0, 0xff, 0xff]);
        assert!(
            buf[12..].iter().all(|b| *b == 0),
            "no room for seq: ICRC only"
        );
        let mut tiny = [0xa5u8; 3];
        fill_payload(&mut tiny, BTH_CNP, 1, 2);
        assert_eq!(tiny, [0x81, 0, 0xff]);
    }

    #[test]
    fn sends_to_loopback_with_the_tos_and_flows_asked_for() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let port = rx.local_addr().unwrap().port().to_string();
        let args = parse(&[
            "--dst",
            "127.0.0.1",
            "--dport",
            &port,
            "--sport",
            "0",
            "--flows",
            "3",
            "--count",
            "6",
            "--rate",
            "0",
            "--size",
            "64",
            "--json",
        ])
        .unwrap();
        let mut out = Vec::new();
        let report = run(&args, &mut out).unwrap();
        assert_eq!((report.sent, report.errors), (6, 0));
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(json["sent"], 6);
        let mut buf = [0u8; 128];
        let mut sources = std::collections::BTreeSet::new();
        for seq in 0..6u64 {
            let (n, from) = rx.recv_from(&mut buf).unwrap();
            assert_eq!(n, 64);
            assert_eq!(buf[0], BTH_RC_WRITE_ONLY);
            assert_eq!(buf[12..20], seq.to_be_bytes());
            sources.insert(from.port());
        }
        assert_eq!(sources.len(), 3, "one source port per flow");
    }

    #[test]
    fn the_summary_is_one_line() {
        let r = SendReport {
            sent: 10,
            errors: 0,
            payload_bytes: 320,
            duration_s: 0.5,
            pps: 20.0,
            mbps: 0.01,
            dst: "10.0.2.2:4791".into(),
            dscp: 48,
            ecn: 2,
            opcode: BTH_CNP,
            flows: 1,
            size: 32,
        };
        let mut out = Vec::new();
        render(&mut out, &r).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            "sent 10 CNP datagrams of 32 bytes to 10.0.2.2:4791 (DSCP 48, ECT(0), 1 flow) in 0.500 s: 20 pps, 0.01 Mb/s; 0 send errors\n"
        );
    }
}
