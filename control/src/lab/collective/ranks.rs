//! A job's ranks in a lab topology: one per host NIC, hosts in topology
//! order, each host's NICs in `ethN` order (NIC n on rail n), and how each
//! rank's NIC is set up.

use std::net::Ipv4Addr;

use railyard_roce::dcqcn::DcqcnParams;
use railyard_roce::nic::{CongestionControl, NicConfig};
use railyard_roce::plan::{JobOptions, JobPlan, RankAddr, Workload};
use railyard_roce::{MacAddr, Nanos};
use serde::{Deserialize, Serialize};

use crate::lab::routes::host_nics;
use crate::lab::topology::Topology;

/// How late a live rank's NIC may make up a transmission (see
/// [`NicConfig::catch_up_ns`]): longer than the wake-up delays of a busy
/// machine's scheduler, short enough that a rank descheduled for longer
/// does not flood its switch with what it owes.
const LIVE_CATCH_UP_NS: Nanos = 1_000_000;

/// One rank of a live job: a host NIC and where it is cabled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankSpec {
    /// Host index in topology order.
    pub host: usize,
    /// Host name.
    pub host_name: String,
    /// NIC index on the host (its rail): position in `ethN` order.
    pub nic: usize,
    /// Linux interface name in the host's namespace.
    pub ifname: String,
    /// The NIC's address.
    pub ip: Ipv4Addr,
    /// The switch's address on the link (the gateway to resolve).
    pub gateway: Ipv4Addr,
    /// The link's MTU.
    pub mtu: u16,
    /// The MAC of the interface (filled in from the namespace).
    pub mac: String,
}

impl RankSpec {
    /// `host.ethN`, the rank's name in reports.
    pub fn name(&self) -> String {
        format!("{}.{}", self.host_name, self.ifname)
    }
}

/// The number at the end of an interface name (`eth10` → 10), to order
/// NICs as `ethN` numbers them rather than as text.
fn if_number(ifname: &str) -> Option<u64> {
    let digits: String = ifname
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

/// The ranks of a topology: hosts in file order, each host's NICs in `ethN`
/// order (rank r of host h's NIC n is the `n`th NIC after every NIC of the
/// earlier hosts). MACs are left empty for the caller to read.
///
/// # Errors
/// A topology without at least two host NICs.
pub fn rank_specs(t: &Topology) -> Result<Vec<RankSpec>, String> {
    let mut out = Vec::new();
    for (h, host) in t.hosts.iter().enumerate() {
        let mut nics = host_nics(t, &host.name);
        nics.sort_by(|a, b| {
            (if_number(&a.ifname), &a.ifname).cmp(&(if_number(&b.ifname), &b.ifname))
        });
        for (n, nic) in nics.into_iter().enumerate() {
            out.push(RankSpec {
                host: h,
                host_name: host.name.clone(),
                nic: n,
                ifname: nic.ifname,
                ip: nic.address,
                gateway: nic.gateway,
                mtu: nic.mtu,
                mac: String::new(),
            });
        }
    }
    if out.len() < 2 {
        return Err(format!(
            "topology {} has {} host NIC(s); a job needs at least two",
            t.name,
            out.len()
        ));
    }
    Ok(out)
}

/// The rank an endpoint name means: `HOST` (its NIC 0) or `HOST.IFNAME`.
///
/// # Errors
/// A name that is no host or NIC, with the names that would do.
pub fn rank_of(ranks: &[RankSpec], name: &str) -> Result<usize, String> {
    let found = match name.split_once('.') {
        Some((host, ifname)) => ranks
            .iter()
            .position(|r| r.host_name == host && r.ifname == ifname),
        None => ranks.iter().position(|r| r.host_name == name && r.nic == 0),
    };
    found.ok_or_else(|| {
        let names: Vec<String> = ranks.iter().map(RankSpec::name).collect();
        format!(
            "{name:?} is no host or host NIC of the lab (HOST for its first NIC, or one of {})",
            names.join(", ")
        )
    })
}

/// The largest RoCE path MTU (256, 512, 1024, 2048, 4096 payload bytes)
/// whose packets fit a link of IP MTU `link_mtu`: IPv4 20, UDP 8, BTH 12,
/// RETH 16, immediate data 4 and ICRC 4 bytes around the payload of the
/// largest packet, a WRITE ONLY with immediate.
pub fn path_mtu(link_mtu: u16) -> usize {
    const OVERHEAD: usize = 20 + 8 + 12 + 16 + 4 + 4;
    [4096, 2048, 1024, 512, 256]
        .into_iter()
        .find(|p| p + OVERHEAD <= usize::from(link_mtu))
        .unwrap_or(256)
}

/// The congestion control a live or simulated job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cc {
    /// DCQCN (ConnectX defaults, or `--dcqcn-params FILE`).
    Dcqcn,
    /// None: line rate, only PFC slows a sender.
    None,
}

impl Cc {
    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Cc::Dcqcn => "dcqcn",
            Cc::None => "none",
        }
    }
}

/// Everything a rank needs to set up its NICs, the same on every host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NicSettings {
    /// Line rate, bits per second.
    pub line_rate_bps: u64,
    /// DSCP of data and ACKs.
    pub dscp: u8,
    /// 802.1p priority of data and ACKs.
    pub priority: u8,
    /// ACK coalescing.
    pub ack_every: u32,
    /// Retransmission timeout, ns.
    pub rto_ns: Nanos,
    /// Congestion control.
    pub cc: Cc,
    /// DCQCN parameters file text and its name, when given.
    pub dcqcn_params: Option<(String, String)>,
}

impl NicSettings {
    /// The congestion control these settings ask for.
    ///
    /// # Errors
    /// A DCQCN parameters file that does not parse.
    pub fn congestion_control(&self) -> Result<CongestionControl, String> {
        Ok(match self.cc {
            Cc::None => CongestionControl::None,
            Cc::Dcqcn => CongestionControl::Dcqcn(match &self.dcqcn_params {
                Some((text, origin)) => DcqcnParams::parse(text, origin)?,
                None => DcqcnParams::default(),
            }),
        })
    }

    /// The configuration of `rank`'s NIC, sending to `gateway_mac`.
    ///
    /// # Errors
    /// A bad MAC in the job, or DCQCN parameters that do not parse.
    pub fn nic_config(&self, rank: &RankSpec, gateway_mac: MacAddr) -> Result<NicConfig, String> {
        Ok(NicConfig {
            mac: parse_mac(&rank.mac)?,
            ip: rank.ip,
            gateway_mac,
            line_rate_bps: self.line_rate_bps,
            path_mtu: path_mtu(rank.mtu),
            dscp: self.dscp,
            priority: self.priority,
            cc: self.congestion_control()?,
            ack_every: self.ack_every,
            rto_ns: self.rto_ns,
            memory_bytes: 0,
            answer_arp: false,
            catch_up_ns: LIVE_CATCH_UP_NS,
        })
    }
}

fn parse_mac(s: &str) -> Result<MacAddr, String> {
    s.parse()
        .map_err(|_| format!("{s:?} is not a MAC address (xx:xx:xx:xx:xx:xx)"))
}

/// A live job as the lab command hands it to every rank process
/// (`STATE_DIR/NAME/job.json`): both build the same [`JobPlan`] from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveJob {
    /// Every rank, rank 0 first.
    pub ranks: Vec<RankSpec>,
    /// The workload.
    pub workload: Workload,
    /// Channels, chunking, GPU-to-GPU bandwidth.
    pub options: JobOptions,
    /// NIC settings.
    pub nic: NicSettings,
    /// When every rank starts: wall clock, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// How long a rank runs before it reports what it has, ns.
    pub timeout_ns: Nanos,
    /// How long a rank waits for its gateway's ARP reply, ns.
    pub arp_timeout_ns: Nanos,
}

impl LiveJob {
    /// The plan every rank and the lab command share.
    ///
    /// # Errors
    /// A bad MAC, or a workload that does not fit the ranks.
    pub fn plan(&self) -> Result<JobPlan, String> {
        let ranks = self
            .ranks
            .iter()
            .map(|r| {
                Ok(RankAddr {
                    host: r.host,
                    nic: r.nic,
                    name: r.name(),
                    ip: r.ip,
                    mac: parse_mac(&r.mac)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        JobPlan::new(self.workload.clone(), ranks, self.options.clone())
    }

    /// The ranks of host `host`, NIC 0 first.
    pub fn host_ranks(&self, host: usize) -> Vec<&RankSpec> {
        self.ranks.iter().filter(|r| r.host == host).collect()
    }

    /// Host indices with at least one rank, in order.
    pub fn hosts(&self) -> Vec<usize> {
        let mut h: Vec<usize> = self.ranks.iter().map(|r| r.host).collect();
        h.dedup();
        h
    }
}
