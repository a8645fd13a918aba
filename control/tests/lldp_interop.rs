//! LLDP/DCBX interoperability: the live switch's agent against real peers
//! (lldpd, lldpad, a second railyard) over veth pairs, and Wireshark's
//! dissector on what it sends.
//!
//! Each test builds its own uniquely named namespaces (removed on drop, also
//! on failure) and stops every program it started by PID. External commands:
//! - `ip netns exec NS lldpd -d -u SOCK -I eth0 -C eth0 -O EMPTY.conf`
//!   (foreground, own control socket, only the veth, no system config), then
//!   `lldpcli -u SOCK configure system hostname NAME`, `… configure lldp
//!   portidsubtype ifname`, `… configure lldp tx-interval 1`, `… -f json0
//!   show neighbors details`, `… configure lldp custom-tlv oui 00,80,c2
//!   subtype 11 oui-info 00,10`.
//! - `ip netns exec NS unshare --ipc lldpad -p -t -f CONF` (own IPC
//!   namespace, no PID file, own config) and `nsenter --target PID --net
//!   --ipc lldptool …` (lldpad's control socket is the abstract unix socket
//!   `/com/intel/lldpad`, scoped by network namespace; its state lives in
//!   SysV shared memory, scoped by IPC namespace: enter both).
//! - `ip netns exec NS tshark -i eth0 -w FILE -f FILTER` (stopped by SIGINT)
//!   and `tshark -r FILE -T fields …`.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{in_netns, ok, run, wait_for, Daemon, Lab, Switch};

use railyard_lldp::dcbx::LocalDcbx;
use railyard_lldp::wire::lldpdu::OrgTlv;
use railyard_lldp::Agent;

/// `lldp holdtime` in the test configurations: the TTL railyard advertises.
const HOLDTIME: u64 = 10;

/// The book's RoCEv2 leaf (REFERENCE.md §5) with LLDP on short timers:
/// DSCP 24 → qos-group 3 (lossless, PFC on priority 3), DSCP 48 → 7 (strict).
fn book_config(hostname: &str, pfc_mode: &str) -> String {
    pfc_config(hostname, pfc_mode, 3)
}

/// [`book_config`] with PFC on priority `prio` instead of 3.
fn pfc_config(hostname: &str, pfc_mode: &str, prio: u8) -> String {
    format!(
        "hostname {hostname}
feature lldp
lldp timer 5
lldp holdtime {HOLDTIME}
lldp reinit 1
class-map type qos match-any ROCEv2
  match dscp 24
class-map type qos match-any CNP
  match dscp 48
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
  class CNP
    set qos-group 7
  class class-default
    set qos-group 0
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q6
    bandwidth remaining percent 0
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
  class type queuing c-out-8q-q7
    priority level 1
policy-map type network-qos qos_network
  class type network-qos c-8q-nq{prio}
    pause pfc-cos {prio}
system qos
  service-policy type network-qos qos_network
  service-policy type queuing output QOS_EGRESS_PORT
interface Ethernet1/1
  no switchport
  ip address 10.93.0.1/24
  priority-flow-control mode {pfc_mode}
  service-policy type qos input QOS_CLASSIFICATION
  bind af-packet p1
"
    )
}

/// railyard's own agent for `config` and the index of `port` in it.
fn agent_for(config: &str, port: &str) -> (Agent, usize) {
    let parsed = railyard_config::parse_str(config, "sw.conf", &Default::default())
        .unwrap_or_else(|e| panic!("config: {e:?}"));
    let compiled = railyard_control::compile::compile(&parsed.config)
        .unwrap_or_else(|e| panic!("compile: {e:?}"));
    let cfg = railyard_control::lldp::agent_config(&parsed.config, &compiled.model);
    let i = cfg
        .ports
        .iter()
        .position(|p| p.name == port)
        .expect("port in config");
    (Agent::new(cfg, 0), i)
}

/// The organisationally specific TLVs railyard's own agent builds for
/// `config` on `port` (what the live switch must put on the wire).
fn advertised(config: &str, port: &str) -> Vec<OrgTlv> {
    let (agent, i) = agent_for(config, port);
    agent
        .lldpdu(i, HOLDTIME as u16)
        .expect("lldpdu")
        .org_specific
}

/// The DCBX settings railyard's agent advertises for `config` on `port`.
fn local_dcbx(config: &str, port: &str) -> LocalDcbx {
    let (agent, i) = agent_for(config, port);
    agent.config().ports[i]
        .dcbx
        .clone()
        .expect("DCBX configured")
}

/// The 00-80-C2 TLV of `subtype` among `tlvs`.
fn ieee(tlvs: &[OrgTlv], subtype: u8) -> &OrgTlv {
    tlvs.iter()
        .find(|t| t.oui == [0x00, 0x80, 0xc2] && t.subtype == subtype)
        .unwrap_or_else(|| panic!("agent builds no 00-80-C2 subtype {subtype}"))
}

/// lldpcli's rendering of TLV bytes: `88,08`.
fn lldpcli_hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The MAC of `dev` in `ns`, as `ip` prints it (lower case).
fn mac_of(ns: &str, dev: &str) -> String {
    let out = run(&["ip", "-n", ns, "-j", "link", "show", dev]).expect("ip link");
    let v: Value = serde_json::from_str(&out).expect("ip -j");
    v[0]["address"].as_str().expect("address").to_string()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// An lldpd in a namespace with its own control socket.
struct Lldpd {
    daemon: Daemon,
    sock: String,
}

impl Lldpd {
    /// Starts lldpd on `dev` of `ns` announcing system name `name`, port ID
    /// = interface name, one LLDPDU a second.
    fn start(lab: &Lab, ns: &str, dev: &str, name: &str) -> Lldpd {
        let sock = lab.path(&format!("{name}.sock")).display().to_string();
        let conf = lab.path(&format!("{name}.conf"));
        std::fs::write(&conf, "").expect("write lldpd conf");
        let daemon = Daemon::start(
            ns,
            &[
                "lldpd",
                "-d",
                "-u",
                &sock,
                "-I",
                dev,
                "-C",
                dev,
                "-O",
                &conf.display().to_string(),
            ],
            &lab.path(&format!("{name}.log")),
        );
        let l = Lldpd { daemon, sock };
        wait_for("lldpd control socket", Duration::from_secs(10), || {
            l.cli(&["show", "configuration"])
        });
        l.configure(&["system", "hostname", name]);
        l.configure(&["lldp", "portidsubtype", "ifname"]);
        l.configure(&["lldp", "tx-interval", "1"]);
        l
    }

    /// Advertises an IEEE PFC TLV as a custom TLV: willing 0, MBC 0,
    /// capability 0, enable bitmap 0x10 (priority 4 only).
    fn advertise_pfc_4(&self) {
        self.configure(&[
            "lldp",
            "custom-tlv",
            "oui",
            "00,80,c2",
            "subtype",
            "11",
            "oui-info",
            "00,10",
        ]);
    }

    fn cli(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = vec!["lldpcli", "-u", &self.sock];
        cmd.extend_from_slice(args);
        run(&cmd)
    }

    fn configure(&self, args: &[&str]) {
        let mut cmd = vec!["configure"];
        cmd.extend_from_slice(args);
        if let Err(e) = self.cli(&cmd) {
            panic!("{e}\nlldpd log:\n{}", self.daemon.log());
        }
    }

    /// `lldpcli -f json0 show neighbors details`: the neighbour on `dev`
    /// once it has sent `unknown-tlvs` entries.
    fn neighbor(&self, dev: &str) -> Result<Value, String> {
        let out = self.cli(&["-f", "json0", "show", "neighbors", "details"])?;
        let v = json(&out);
        v["lldp"][0]["interface"]
            .as_array()
            .and_then(|a| a.iter().find(|i| i["name"] == dev))
            .filter(|i| i["unknown-tlvs"][0]["unknown-tlv"].is_array())
            .cloned()
            .ok_or(out)
    }
}

/// `show lldp neighbors --json`: the first neighbour on `port`.
fn railyard_neighbor(sw: &Switch, port: &str) -> Result<Value, String> {
    let v = json(&sw.cli(&["show", "lldp", "neighbors", "--json"])?);
    v["neighbors"][port]
        .get(0)
        .cloned()
        .ok_or_else(|| v.to_string())
}

fn dcbx(sw: &Switch, port: &str) -> Value {
    json(
        &sw.cli(&["show", "lldp", "dcbx", "interface", port, "--json"])
            .expect("show lldp dcbx"),
    )["dcbx"]
        .clone()
}

/// The PFC set in force on `port` as the dataplane reports it.
fn pfc_enabled(sw: &Switch, port: &str) -> u64 {
    let v = json(
        &sw.cli(&["show", "interface", "priority-flow-control", "--json"])
            .expect("show interface priority-flow-control"),
    );
    v["interfaces"][port]["enabled"].as_u64().expect("enabled")
}

/// A switch namespace and a peer namespace joined by veth `p1` ↔ `eth0`.
fn pair(lab: &mut Lab) -> (String, String) {
    let (sw, peer) = (lab.ns("sw"), lab.ns("peer"));
    lab.veth(&sw, "p1", &peer, "eth0");
    (sw, peer)
}

fn start_switch(lab: &Lab, ns: &str, name: &str, config: &str) -> Switch {
    let conf = lab.path(&format!("{name}.conf"));
    std::fs::write(&conf, config).expect("write config");
    Switch::start(
        ns,
        &conf,
        &lab.path(&format!("{name}.sock")),
        &lab.path(&format!("{name}.log")),
        &[],
    )
}

#[test]
#[ignore = "needs root, network namespaces and lldpd; run by scripts/test.sh"]
fn lldpd_and_railyard_see_each_other_with_dcbx_tlvs() {
    let mut lab = Lab::new();
    let (sw_ns, peer_ns) = pair(&mut lab);
    let lldpd = Lldpd::start(&lab, &peer_ns, "eth0", "peer-lldpd");
    let config = book_config("ry-lldpd", "auto");
    let sw = start_switch(&lab, &sw_ns, "sw", &config);

    let n = wait_for("lldpd to decode railyard", Duration::from_secs(10), || {
        lldpd.neighbor("eth0")
    });
    eprintln!("lldpcli neighbor: {n:#}");
    let chassis = &n["chassis"][0];
    let base = railyard_control::compile::base_mac("ry-lldpd").to_string();
    assert_eq!(chassis["id"][0]["type"], "mac", "{n}");
    assert_eq!(chassis["id"][0]["value"], base.as_str(), "{n}");
    assert_eq!(chassis["name"][0]["value"], "ry-lldpd", "{n}");
    let caps = chassis["capability"].as_array().expect("capabilities");
    assert!(
        caps.iter()
            .any(|c| c["type"] == "Router" && c["enabled"] == true),
        "{n}"
    );
    assert!(
        caps.iter()
            .any(|c| c["type"] == "Bridge" && c["enabled"] == false),
        "{n}"
    );
    assert_eq!(chassis["mgmt-ip"][0]["value"], "10.93.0.1", "{n}");
    let port = &n["port"][0];
    assert_eq!(port["id"][0]["type"], "ifname", "{n}");
    assert_eq!(port["id"][0]["value"], "Ethernet1/1", "{n}");
    assert_eq!(port["ttl"][0]["value"], HOLDTIME.to_string(), "{n}");
    assert_eq!(port["mfs"][0]["value"], "1518", "MTU 1500 + 18: {n}");

    // lldpd does not decode 802.1Qaz; it lists the TLVs raw, e.g.
    //   {"oui": "00,80,C2", "subtype": "11", "len": "2", "value": "88,08"}
    let unknown = n["unknown-tlvs"][0]["unknown-tlv"]
        .as_array()
        .expect("unknown-tlvs");
    let ours = advertised(&config, "Ethernet1/1");
    let seen: Vec<(String, String, String)> = unknown
        .iter()
        .filter(|t| t["oui"] == "00,80,C2")
        .map(|t| {
            (
                t["subtype"].as_str().unwrap_or("").to_string(),
                t["len"].as_str().unwrap_or("").to_string(),
                t["value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = [9u8, 10, 11, 12]
        .iter()
        .map(|&s| {
            let t = ieee(&ours, s);
            (
                s.to_string(),
                t.info.len().to_string(),
                lldpcli_hex(&t.info),
            )
        })
        .collect();
    assert_eq!(seen, want, "lldpd got the agent's DCBX TLVs: {n}");
    // The same bytes spelled out (REFERENCE §3): PFC willing, capability 8,
    // priority 3; APP RoCEv2 (prio 3, UDP 4791) and DSCP 24 → prio 3; ETS
    // and DSCP 48 → prio 7 (CNP); ETS willing, prio p → TC p, TC0 67 % and
    // TC3 33 % (the default queue's 100 and q3's 50 normalised to 100; TC6
    // asked for 0 %), TC7 strict. Observed from lldpd 1.0.16 exactly so.
    assert_eq!(want[2].2, "88,08");
    assert_eq!(want[3].2, "00,63,12,B7,65,00,18,E5,00,30");
    assert_eq!(
        want[0].2,
        "80,01,23,45,67,43,00,00,21,00,00,00,00,02,02,02,02,02,02,02,00"
    );
    assert_eq!(
        want[1].2,
        "00,01,23,45,67,43,00,00,21,00,00,00,00,02,02,02,02,02,02,02,00"
    );

    // And railyard sees lldpd.
    let peer_mac = mac_of(&peer_ns, "eth0");
    let r = wait_for("railyard to learn lldpd", Duration::from_secs(10), || {
        railyard_neighbor(&sw, "Ethernet1/1").and_then(|v| {
            (v["system_name"] == "peer-lldpd")
                .then_some(v)
                .ok_or_default()
        })
    });
    assert_eq!(r["port_id"], "eth0", "{r}");
    assert_eq!(r["port_id_subtype"], 5, "{r}");
    assert_eq!(r["chassis_id"], peer_mac.as_str(), "{r}");
    assert_eq!(r["chassis_id_subtype"], 4, "{r}");
    assert_eq!(r["source_mac"], peer_mac.as_str(), "{r}");
    // lldpd's TTL is tx-interval × tx-hold (4): 4 s at one frame a second.
    assert_eq!(r["ttl"], 4, "{r}");
    assert_eq!(r["dcbx_ieee"], Value::Null, "lldpd sends no DCBX: {r}");
    let text = sw
        .cli(&["show", "lldp", "neighbors"])
        .expect("show lldp neighbors");
    assert!(
        text.contains("peer-lldpd") && text.contains("eth0"),
        "{text}"
    );
    let traffic = json(
        &sw.cli(&["show", "lldp", "traffic", "--json"])
            .expect("traffic"),
    );
    assert_eq!(traffic["totals"]["frames_in_error"], 0, "{traffic}");

    // lldpd's shutdown LLDPDU on SIGTERM removes it at once: raise its TTL
    // to 60 s first so ageing cannot be what empties the table.
    lldpd.configure(&["lldp", "tx-hold", "60"]);
    wait_for("lldpd's TTL 60", Duration::from_secs(5), || {
        railyard_neighbor(&sw, "Ethernet1/1")
            .and_then(|v| (v["ttl"] == 60).then_some(()).ok_or_default())
    });
    let mut lldpd = lldpd;
    lldpd.daemon.stop_with(libc::SIGTERM);
    let t = Instant::now();
    wait_for(
        "railyard to drop lldpd",
        Duration::from_secs(3),
        || match railyard_neighbor(&sw, "Ethernet1/1") {
            Ok(v) => Err(v.to_string()),
            Err(_) => Ok(()),
        },
    );
    eprintln!("lldpd removed {:?} after its shutdown", t.elapsed());
}

/// lldpad in a namespace and IPC namespace of its own.
struct Lldpad {
    daemon: Daemon,
}

impl Lldpad {
    fn start(lab: &Lab, ns: &str) -> Lldpad {
        let conf = lab.path("lldpad.conf").display().to_string();
        let daemon = Daemon::start(
            ns,
            &["unshare", "--ipc", "lldpad", "-p", "-t", "-f", &conf],
            &lab.path("lldpad.log"),
        );
        // Its log on a fresh file: "config file failed to load, create a new
        // file." then "bound ctrl iface to /com/intel/lldpad" (an abstract
        // socket); ready once `lldptool -p` answers with its PID.
        let l = Lldpad { daemon };
        wait_for("lldpad control socket", Duration::from_secs(10), || {
            l.tool(&["-p"])
        });
        l
    }

    /// `lldptool ARGS…` inside lldpad's network and IPC namespaces.
    fn tool(&self, args: &[&str]) -> Result<String, String> {
        let pid = self.daemon.pid().to_string();
        let mut cmd = vec!["nsenter", "--target", &pid, "--net", "--ipc", "lldptool"];
        cmd.extend_from_slice(args);
        run(&cmd)
    }
}

/// `Result<T, String>` from an `Option`, for [`wait_for`].
trait OkOrDefault<T> {
    fn ok_or_default(self) -> Result<T, String>;
}

impl<T> OkOrDefault<T> for Option<T> {
    fn ok_or_default(self) -> Result<T, String> {
        self.ok_or_else(|| "not yet".to_string())
    }
}

/// `lldptool` output as lines with runs of whitespace collapsed to one
/// space. lldptool prints a DSCP list as "24," then a backspace over the
/// last comma (observed bytes "dscp:  24,\x08 "); backspaces are applied.
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let mut s = String::new();
            for c in l.chars() {
                if c == '\u{8}' {
                    s.pop();
                } else {
                    s.push(c);
                }
            }
            s.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect()
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn prios(bits: u8) -> String {
    (0..8)
        .filter(|p| bits & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What `lldptool -t -n -V PFC|ETS-CFG|ETS-REC|APP` print for a peer
/// advertising `l`, in [`lines`] form (lldptool 1.1's wording).
fn lldptool_view(l: &LocalDcbx) -> [Vec<String>; 4] {
    let prio_map = (0..8)
        .map(|p| format!("{p}:{}", l.ets.prio_tc[p]))
        .collect::<Vec<_>>()
        .join(" ");
    let bw = l
        .ets
        .tc_bandwidth
        .iter()
        .map(|b| format!("{b}%"))
        .collect::<Vec<_>>()
        .join(" ");
    let tsa = (0..8)
        .map(|t| {
            let name = match l.ets.tsa[t] {
                0 => "strict",
                1 => "cbs",
                2 => "ets",
                _ => "vendor",
            };
            format!("{t}:{name}")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let pfc = vec![
        "IEEE 8021QAZ PFC TLV".to_string(),
        format!("Willing: {}", yes_no(l.pfc.willing)),
        format!("MACsec Bypass Capable: {}", yes_no(l.pfc.mbc)),
        format!("PFC capable traffic classes: {}", l.pfc.cap),
        format!("PFC enabled: {}", prios(l.pfc.enable)),
    ];
    let ets = vec![
        "IEEE 8021QAZ ETS Configuration TLV".to_string(),
        format!("Willing: {}", yes_no(l.ets.willing)),
        "CBS: not supported".to_string(),
        "MAX_TCS: 8".to_string(),
        format!("PRIO_MAP: {prio_map}"),
        format!("TC Bandwidth: {bw}"),
        format!("TSA_MAP: {tsa}"),
    ];
    let rec = vec![
        "IEEE 8021QAZ ETS Recommendation TLV".to_string(),
        format!("PRIO_MAP: {prio_map}"),
        format!("TC Bandwidth: {bw}"),
        format!("TSA_MAP: {tsa}"),
    ];
    // Port entries numbered, then DSCP entries grouped by priority.
    let mut app = vec!["IEEE 8021QAZ APP TLV".to_string()];
    for (n, a) in l.app.iter().filter(|a| a.selector != 5).enumerate() {
        let what = match a.selector {
            1 => "Ethertype",
            2 => "TCP or SCTP Port",
            3 => "UDP or DCCP Port",
            _ => "TCP/SCTP/UDP/DCCP Port",
        };
        app.push(format!(
            "App# {n} Prio {} Sel {} P-ID {what}: {}",
            a.priority, a.selector, a.protocol
        ));
    }
    for p in 0..8 {
        let dscps: Vec<String> = l
            .app
            .iter()
            .filter(|a| a.selector == 5 && a.priority == p)
            .map(|a| a.protocol.to_string())
            .collect();
        if !dscps.is_empty() {
            app.push(format!("Prio:{p} dscp: {}", dscps.join(", ")));
        }
    }
    [pfc, ets, rec, app]
}

#[test]
#[ignore = "needs root, network namespaces and lldpad; run by scripts/test.sh"]
fn lldpad_decodes_railyard_ets_pfc_and_app() {
    let mut lab = Lab::new();
    let (sw_ns, peer_ns) = pair(&mut lab);
    let lldpad = Lldpad::start(&lab, &peer_ns);
    let out = lldpad
        .tool(&["-L", "-i", "eth0", "adminStatus=rxtx"])
        .expect("lldptool -L");
    assert!(out.contains("adminStatus = rxtx"), "{out}");
    // Not willing: `priority-flow-control mode on`.
    let config = book_config("ry-lldpad", "on");
    let _sw = start_switch(&lab, &sw_ns, "sw", &config);
    let pfc = wait_for(
        "lldpad to decode railyard's PFC",
        Duration::from_secs(10),
        || {
            lldpad
                .tool(&["-t", "-n", "-i", "eth0", "-V", "PFC"])
                .and_then(|o| o.contains("PFC enabled").then_some(o).ok_or_default())
        },
    );
    let tool = |tlv: &str| {
        lldpad
            .tool(&["-t", "-n", "-i", "eth0", "-V", tlv])
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (ets, rec, app) = (tool("ETS-CFG"), tool("ETS-REC"), tool("APP"));
    eprintln!("{pfc}{ets}{rec}{app}");
    // Observed (lldpad 1.1):
    //   IEEE 8021QAZ PFC TLV
    //        Willing: no
    //        MACsec Bypass Capable: no
    //        PFC capable traffic classes: 8
    //        PFC enabled: 3
    //   IEEE 8021QAZ ETS Configuration TLV
    //        Willing: no
    //        CBS: not supported
    //        MAX_TCS: 8
    //        PRIO_MAP: 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7
    //        TC Bandwidth: 67% 0% 0% 33% 0% 0% 0% 0%
    //        TSA_MAP: 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:ets 7:strict
    //   IEEE 8021QAZ APP TLV
    //       App#   0      Prio 3   Sel 3   P-ID    UDP or DCCP Port: 4791
    //       Prio:3   dscp:  24,<BS>
    //       Prio:7   dscp:  48,<BS>
    let local = local_dcbx(&config, "Ethernet1/1");
    let [want_pfc, want_ets, want_rec, want_app] = lldptool_view(&local);
    assert_eq!(lines(&pfc), want_pfc, "{pfc}");
    assert_eq!(lines(&ets), want_ets, "{ets}");
    assert_eq!(lines(&rec), want_rec, "{rec}");
    assert_eq!(lines(&app), want_app, "{app}");
    // The values spelled out, so a change in the agent cannot hide here.
    assert!(lines(&pfc).contains(&"Willing: no".to_string()), "{pfc}");
    assert!(lines(&pfc).contains(&"PFC enabled: 3".to_string()), "{pfc}");
    assert!(
        lines(&ets).contains(&"TC Bandwidth: 67% 0% 0% 33% 0% 0% 0% 0%".to_string()),
        "{ets}"
    );
    assert!(
        lines(&ets)
            .contains(&"TSA_MAP: 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:ets 7:strict".to_string()),
        "{ets}"
    );
    assert_eq!(
        lines(&app)[1..],
        [
            "App# 0 Prio 3 Sel 3 P-ID UDP or DCCP Port: 4791",
            "Prio:3 dscp: 24",
            "Prio:7 dscp: 48"
        ],
        "{app}"
    );
    let all = lldpad.tool(&["-t", "-n", "-i", "eth0"]).expect("all TLVs");
    let base = railyard_control::compile::base_mac("ry-lldpad").to_string();
    for want in [
        format!("MAC: {base}"),
        "Ifname: Ethernet1/1".into(),
        "ry-lldpad".into(),
        "Enabled capabilities: Router".into(),
        "IPv4: 10.93.0.1".into(),
        format!("{HOLDTIME}"),
        "1518".into(),
    ] {
        assert!(lines(&all).contains(&want), "{want:?} in:\n{all}");
    }
}

const PFC_LAB: &str = "hostname ry-pfc
feature lldp
lldp timer 5
lldp holdtime 10
class-map type qos match-any ROCEv2
  match dscp 24
class-map type qos match-any BULK4
  match dscp 32
policy-map type qos CLASSIFY
  class ROCEv2
    set qos-group 3
  class BULK4
    set qos-group 4
policy-map type queuing IN
  class type queuing c-in-q3
    pause buffer-size 60000 pause-threshold 20000 resume-threshold 10000
  class type queuing c-in-q4
    pause buffer-size 60000 pause-threshold 20000 resume-threshold 10000
policy-map type network-qos NQ
  class type network-qos c-8q-nq3
    pause pfc-cos 3
system qos
  service-policy type network-qos NQ
  service-policy type queuing input IN
interface Ethernet1/1
  no switchport
  ip address 10.94.1.1/24
  priority-flow-control mode MODE
  service-policy type qos input CLASSIFY
  bind af-packet p1
interface Ethernet1/2
  no switchport
  speed 10
  ip address 10.94.2.1/24
  bind af-packet p2
";

/// Sends 1000-byte UDP datagrams with `dscp` from `ns` to 10.94.2.2 for
/// `secs` as fast as the socket takes them; returns how many were sent.
fn blast(ns: &str, dscp: u8, secs: f64) -> u64 {
    in_netns(ns, move || {
        let sock = UdpSocket::bind("0.0.0.0:0").expect("bind");
        let tos: libc::c_int = libc::c_int::from(dscp) << 2;
        // SAFETY: setsockopt with a valid fd and an int-sized option.
        let rc = unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_TOS,
                (&tos as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0, "IP_TOS");
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let payload = [0u8; 1000];
        let mut n = 0;
        while Instant::now() < end {
            if sock.send_to(&payload, "10.94.2.2:9000").is_ok() {
                n += 1;
            }
        }
        n
    })
    .join()
    .expect("sender")
}

/// `tshark -i DEV -w FILE -f FILTER` in `ns`, running once it says so.
fn capture(lab: &Lab, ns: &str, dev: &str, filter: &str, name: &str) -> (Daemon, String) {
    let file = lab.path(&format!("{name}.pcap")).display().to_string();
    let mut d = Daemon::start(
        ns,
        &["tshark", "-i", dev, "-w", &file, "-f", filter],
        &lab.path(&format!("{name}.tshark.log")),
    );
    // tshark prints "Capturing on" as it starts dumpcap, before the capture
    // socket is open; "Capture started" comes once dumpcap has opened it and
    // its file. A frame sent between the two would be missed.
    d.wait_log("Capture started", Duration::from_secs(15));
    (d, file)
}

/// `tshark -r FILE -T fields -E separator=| -e F…`: one row per frame.
fn tshark_fields(file: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = vec!["tshark", "-r", file, "-T", "fields", "-E", "separator=|"];
    for f in fields {
        cmd.extend(["-e", f]);
    }
    let out = run(&cmd).unwrap_or_else(|e| panic!("{e}"));
    out.lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn pfc_counters(sw: &Switch, port: &str, key: &str) -> Vec<u64> {
    let v = sw.show().expect("show interface");
    v["interfaces"][port]["pfc"][key]
        .as_array()
        .unwrap_or_else(|| panic!("pfc.{key}: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap_or(0))
        .collect()
}

/// h1 ─ Ethernet1/1 (PFC `mode`) ─ railyard ─ Ethernet1/2 (10 Mb/s) ─ h2, with
/// lldpd on h1 advertising a non-willing PFC TLV for priority 4 only.
fn pfc_lab(mode: &str) -> (Lab, String, Lldpd, Switch) {
    let mut lab = Lab::new();
    let (h1, h2, sw_ns) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw_ns, "p1");
    lab.veth(&h2, "eth0", &sw_ns, "p2");
    lab.host(
        &h1,
        "eth0",
        "10.94.1.2/24",
        "10.94.1.1",
        "fd00:94:1::2/64",
        "fd00:94:1::1",
    );
    lab.host(
        &h2,
        "eth0",
        "10.94.2.2/24",
        "10.94.2.1",
        "fd00:94:2::2/64",
        "fd00:94:2::1",
    );
    let lldpd = Lldpd::start(&lab, &h1, "eth0", "peer-lldpd");
    lldpd.advertise_pfc_4();
    let sw = start_switch(&lab, &sw_ns, "sw", &PFC_LAB.replace("MODE", mode));
    wait_for(
        "railyard to hear lldpd's PFC TLV",
        Duration::from_secs(10),
        || {
            let d = dcbx(&sw, "Ethernet1/1");
            (d["peer"]["pfc"]["enable"] == 16)
                .then_some(())
                .ok_or_else(|| d.to_string())
        },
    );
    ok(&[
        "ip",
        "netns",
        "exec",
        &h1,
        "ping",
        "-c",
        "1",
        "-W",
        "2",
        "10.94.2.2",
    ]);
    (lab, h1, lldpd, sw)
}

#[test]
#[ignore = "needs root, network namespaces, lldpd and tshark; run by scripts/test.sh"]
fn willing_railyard_adopts_lldpd_pfc_and_pauses_on_it() {
    let (lab, h1, lldpd, sw) = pfc_lab("auto");
    let d = wait_for("PFC {4} in force", Duration::from_secs(5), || {
        let d = dcbx(&sw, "Ethernet1/1");
        (d["operational"]["pfc"] == 16)
            .then_some(d.clone())
            .ok_or_else(|| d.to_string())
    });
    assert_eq!(d["operational"]["pfc_source"], "peer", "{d}");
    assert_eq!(d["peer"]["pfc"]["willing"], false, "{d}");
    assert_eq!(d["configured_pfc"], 8, "{d}");
    assert_eq!(d["operational"]["mismatches"], serde_json::json!([]), "{d}");
    wait_for(
        "the dataplane to take PFC {4}",
        Duration::from_secs(5),
        || {
            let e = pfc_enabled(&sw, "Ethernet1/1");
            (e == 0x10).then_some(()).ok_or_else(|| e.to_string())
        },
    );
    let show = sw.show().expect("show interface");
    assert_eq!(
        show["interfaces"]["Ethernet1/1"]["pfc"]["enabled"], 0x10,
        "{show}"
    );
    // The adopted set is re-advertised, willing bit still set: lldpd now
    // sees 88,10 where it saw 88,08.
    wait_for(
        "lldpd to see the re-advertised set",
        Duration::from_secs(10),
        || {
            let n = lldpd.neighbor("eth0")?;
            let pfc = n["unknown-tlvs"][0]["unknown-tlv"]
                .as_array()
                .and_then(|a| a.iter().find(|t| t["subtype"] == "11").cloned());
            match pfc {
                Some(t) if t["value"] == "88,10" => Ok(()),
                other => Err(format!("{other:?}")),
            }
        },
    );

    // DSCP 32 → qos-group 4 into a 10 Mb/s egress: ingress PG 4 fills and
    // Ethernet1/1 pauses priority 4 toward h1.
    let (mut cap, file) = capture(&lab, &h1, "eth0", "ether proto 0x8808", "pfc");
    let sent = blast(&h1, 32, 1.0);
    std::thread::sleep(Duration::from_millis(300));
    cap.stop_with(libc::SIGINT);
    let tx_pause = pfc_counters(&sw, "Ethernet1/1", "tx_pause");
    eprintln!("sent {sent}; tx_pause {tx_pause:?}");
    assert!(tx_pause[4] > 0, "paused priority 4: {tx_pause:?}");
    assert_eq!(tx_pause[3], 0, "{tx_pause:?}");
    let sw_mac = sw.show().expect("show")["interfaces"]["Ethernet1/1"]["mac"]
        .as_str()
        .expect("mac")
        .to_string();
    let rows = tshark_fields(
        &file,
        &[
            "eth.src",
            "macc.opcode",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c4",
            "_ws.expert",
        ],
    );
    // Observed: "02:..:01:01|0x0101|0x0010|65535|" (XOFF), one per burst.
    assert!(!rows.is_empty(), "captured PFC frames");
    for r in &rows {
        assert_eq!(r[0], sw_mac, "{rows:?}");
        assert_eq!(r[1], "0x0101", "{rows:?}");
        assert_eq!(r[2], "0x0010", "only priority 4: {rows:?}");
        assert_eq!(
            r.get(4).map_or("", String::as_str),
            "",
            "no expert item: {rows:?}"
        );
    }
    assert!(rows.iter().any(|r| r[3] == "65535"), "an XOFF: {rows:?}");

    // lldpd leaves (its shutdown LLDPDU): no agreeing peer, so `mode auto`
    // has no PFC in force (NX-OS); the configured set is offered again.
    let mut lldpd = lldpd;
    lldpd.daemon.stop_with(libc::SIGTERM);
    wait_for("PFC off in the dataplane", Duration::from_secs(5), || {
        let e = pfc_enabled(&sw, "Ethernet1/1");
        (e == 0).then_some(()).ok_or_else(|| e.to_string())
    });
    let d = dcbx(&sw, "Ethernet1/1");
    assert_eq!(d["operational"]["pfc"], 0, "{d}");
    assert_eq!(d["operational"]["pfc_advertised"], 8, "{d}");
    assert_eq!(d["operational"]["pfc_source"], "local", "{d}");
}

#[test]
#[ignore = "needs root, network namespaces and lldpd; run by scripts/test.sh"]
fn non_willing_railyard_keeps_its_pfc_against_lldpd() {
    let (_lab, h1, lldpd, sw) = pfc_lab("on");
    let n = wait_for("lldpd to decode railyard", Duration::from_secs(10), || {
        lldpd.neighbor("eth0")
    });
    let d = dcbx(&sw, "Ethernet1/1");
    assert_eq!(d["operational"]["pfc"], 8, "{d}");
    assert_eq!(d["operational"]["pfc_source"], "local", "{d}");
    assert!(
        d["operational"]["mismatches"].to_string().contains("PFC"),
        "{d}"
    );
    assert_eq!(pfc_enabled(&sw, "Ethernet1/1"), 0x08);
    assert!(
        n.to_string().contains(r#""value":"08,08""#),
        "not willing: {n}"
    );
    // Priority 4 is lossy here: no pause; priority 3 still pauses.
    blast(&h1, 32, 0.5);
    let tx_pause = pfc_counters(&sw, "Ethernet1/1", "tx_pause");
    assert_eq!(tx_pause[4], 0, "{tx_pause:?}");
    blast(&h1, 24, 0.5);
    let tx_pause = pfc_counters(&sw, "Ethernet1/1", "tx_pause");
    assert!(tx_pause[3] > 0, "{tx_pause:?}");
    assert_eq!(tx_pause[4], 0, "{tx_pause:?}");

    // railyard's shutdown LLDPDU on SIGTERM: lldpd forgets it well before
    // the 10 s TTL would run out.
    sw.stop();
    wait_for(
        "lldpd to drop railyard",
        Duration::from_secs(3),
        || match lldpd.cli(&["-f", "json0", "show", "neighbors"]) {
            Ok(out) if !out.contains("Ethernet1/1") => Ok(()),
            Ok(out) => Err(out),
            Err(e) => Err(e),
        },
    );
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn two_willing_railyards_agree_on_the_higher_chassis_mac_set() {
    let mut lab = Lab::new();
    let (a_ns, b_ns) = (lab.ns("a"), lab.ns("b"));
    lab.veth(&a_ns, "p1", &b_ns, "p1");
    // Both willing (`mode auto`): A enables priority 3, B priority 4.
    let (a_name, b_name) = ("ry-west", "ry-east");
    let a = start_switch(&lab, &a_ns, "a", &pfc_config(a_name, "auto", 3));
    // Alone, `auto` is off (NX-OS: PFC only after DCBX negotiation succeeds).
    wait_for("A's LLDP agent", Duration::from_secs(5), || {
        let d = dcbx(&a, "Ethernet1/1");
        (d["local"]["pfc"]["enable"] == 8)
            .then_some(d.clone())
            .ok_or_else(|| d.to_string())
    });
    assert_eq!(pfc_enabled(&a, "Ethernet1/1"), 0);
    let t = a
        .cli(&["show", "interface", "priority-flow-control"])
        .expect("show interface priority-flow-control");
    let row: Vec<&str> = t
        .lines()
        .find(|l| l.starts_with("Ethernet1/1 "))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(row.get(1..3), Some(&["Auto", "Off"][..]), "{t}");
    let b = start_switch(
        &lab,
        &b_ns,
        "b",
        &pfc_config(b_name, "auto", 4).replace("10.93.0.1", "10.93.0.2"),
    );
    let (a_mac, b_mac) = (
        railyard_control::compile::base_mac(a_name),
        railyard_control::compile::base_mac(b_name),
    );
    // The chassis MAC is 02 + the first three bytes of FNV-1a(hostname):
    // ry-west → 02:e7:9c:0a:00:00, ry-east → 02:70:86:27:00:00; the higher
    // (ry-west, PFC {3}) keeps its own set and ry-east adopts it.
    assert_eq!(a_mac.to_string(), "02:e7:9c:0a:00:00");
    assert_eq!(b_mac.to_string(), "02:70:86:27:00:00");
    let (winner_set, a_source, b_source) = if a_mac.0 > b_mac.0 {
        (0x08u64, "local", "peer")
    } else {
        (0x10u64, "peer", "local")
    };
    for (sw, source, peer_mac, port) in [
        (&a, a_source, b_mac, "Ethernet1/1"),
        (&b, b_source, a_mac, "Ethernet1/1"),
    ] {
        let d = wait_for(
            "both to settle on one PFC set",
            Duration::from_secs(10),
            || {
                let d = dcbx(sw, port);
                (d["operational"]["pfc"] == winner_set && d["peer"]["pfc"]["willing"] == true)
                    .then_some(d.clone())
                    .ok_or_else(|| d.to_string())
            },
        );
        assert_eq!(d["operational"]["pfc_source"], source, "{d}");
        assert_eq!(d["peer_chassis_id"], peer_mac.to_string(), "{d}");
        assert_eq!(d["local"]["pfc"]["willing"], true, "{d}");
        wait_for("the dataplane to follow", Duration::from_secs(5), || {
            let e = pfc_enabled(sw, port);
            (e == winner_set).then_some(()).ok_or_else(|| e.to_string())
        });
    }
    // Both in force and shown so: the link between them is lossless.
    for sw in [&a, &b] {
        let v = json(
            &sw.cli(&["show", "interface", "priority-flow-control", "--json"])
                .expect("show interface priority-flow-control"),
        );
        assert_eq!(v["interfaces"]["Ethernet1/1"]["mode"], "auto", "{v}");
        assert_eq!(v["interfaces"]["Ethernet1/1"]["oper"], "on", "{v}");
    }
    // Both advertise the set in force, the winner's.
    for sw in [&a, &b] {
        wait_for("the re-advertised set", Duration::from_secs(5), || {
            let d = dcbx(sw, "Ethernet1/1");
            (d["peer"]["pfc"]["enable"] == winner_set)
                .then_some(())
                .ok_or_else(|| d.to_string())
        });
    }
}

#[test]
#[ignore = "needs root, network namespaces and tshark; run by scripts/test.sh"]
fn tshark_decodes_every_lldpdu_railyard_sends() {
    let mut lab = Lab::new();
    let (sw_ns, peer_ns) = pair(&mut lab);
    let (mut cap, file) = capture(&lab, &peer_ns, "eth0", "ether proto 0x88cc", "lldp");
    let sw = start_switch(&lab, &sw_ns, "sw", &book_config("ry-shark", "auto"));
    let sw_mac = sw.show().expect("show")["interfaces"]["Ethernet1/1"]["mac"]
        .as_str()
        .expect("mac")
        .to_string();
    // Fast start: 4 frames 1 s apart; the next comes `lldp timer` (5 s) later.
    wait_for("the fast start", Duration::from_secs(8), || {
        let t = json(&sw.cli(&["show", "lldp", "traffic", "--json"])?);
        let n = t["totals"]["frames_out"].as_u64().unwrap_or(0);
        (n >= 4).then_some(()).ok_or_else(|| t.to_string())
    });
    // SIGTERM: one shutdown LLDPDU (TTL 0) on the way out.
    sw.stop();
    std::thread::sleep(Duration::from_millis(300));
    cap.stop_with(libc::SIGINT);
    let fields = [
        "eth.src",
        "lldp.chassis.id.mac",
        "lldp.port.id",
        "lldp.time_to_live",
        "lldp.tlv.system.name",
        "lldp.ieee.802_3.max_frame_size",
        "lldp.dcbx.ieee.willing",
        "lldp.dcbx.feature.pfc.prio3",
        "lldp.dcbx.feature.pfc.prio4",
        "lldp.dcbx.ieee.ets.tsa7",
        "lldp.dcbx.ieee.app.prio",
        "lldp.dcbx.feature.app.proto",
        "_ws.expert",
        "_ws.malformed",
    ];
    let rows = tshark_fields(&file, &fields);
    let text: Vec<String> = rows.iter().map(|r| r.join("|")).collect();
    let text = text.join("\n");
    eprintln!("{text}");
    // Observed (tshark 4.0.17), four fast-start frames then the shutdown:
    //   02:13:ca:13:01:01|02:13:ca:13:00:00|Ethernet1/1|10|ry-shark|1518|1,1|1|0|0,0|3,3,7|0x12b7,0x0018,0x0030||
    //   02:13:ca:13:01:01|02:13:ca:13:00:00|Ethernet1/1|0||||||||||
    let chassis = railyard_control::compile::base_mac("ry-shark").to_string();
    let (shutdown, normal): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r[3] == "0");
    assert!(normal.len() >= 4, "the fast start's frames:\n{text}");
    assert_eq!(shutdown.len(), 1, "one shutdown LLDPDU:\n{text}");
    assert_eq!(
        rows.last().map(|r| r[3].as_str()),
        Some("0"),
        "last:\n{text}"
    );
    for r in &rows {
        assert_eq!(r[0], sw_mac, "{text}");
        assert_eq!(r[1], chassis, "{text}");
        assert_eq!(r[2], "Ethernet1/1", "{text}");
        assert_eq!(r[12], "", "no expert item:\n{text}");
        assert_eq!(r[13], "", "not malformed:\n{text}");
    }
    for r in &normal {
        let want = [
            HOLDTIME.to_string().as_str(),
            "ry-shark",
            "1518",
            "1,1", // ETS Configuration and PFC both willing
            "1",   // PFC on priority 3
            "0",   // not on 4
            "0,0", // TC7 strict in ETS Configuration and Recommendation
            "3,3,7",
            "0x12b7,0x0018,0x0030", // UDP 4791, DSCP 24, DSCP 48
        ]
        .map(str::to_string);
        assert_eq!(r[3..12], want, "{text}");
    }
    // The shutdown LLDPDU carries only the mandatory TLVs.
    assert!(shutdown[0][4..12].iter().all(String::is_empty), "{text}");
}

/// lldpd advertising a non-willing PFC TLV for priority 4, captured by
/// tshark (pcapng, as it writes by default) and replayed into a `mode auto`
/// port: the replay's agent hears lldpd, takes its set, and the stats file
/// shows both, as a live switch would.
#[test]
#[ignore = "needs root, network namespaces, lldpd and tshark; run by scripts/test.sh"]
fn a_tshark_capture_of_lldpd_replays_into_dcbx() {
    let mut lab = Lab::new();
    let (h1, sw_ns) = (lab.ns("h1"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw_ns, "p1");
    let (mut tshark, file) = capture(&lab, &h1, "eth0", "ether proto 0x88cc", "lldpd");
    let lldpd = Lldpd::start(&lab, &h1, "eth0", "peer-lldpd");
    lldpd.advertise_pfc_4();
    wait_for(
        "tshark to capture lldpd's PFC TLV",
        Duration::from_secs(15),
        || {
            let out = run(&[
                "tshark",
                "-r",
                &file,
                "-Y",
                "lldp.ieee.802_1.subtype == 0x0b",
                "-T",
                "fields",
                "-e",
                "frame.number",
            ])?;
            (!out.trim().is_empty()).then_some(()).ok_or(out)
        },
    );
    tshark.stop_with(libc::SIGINT);
    drop(lldpd);
    let conf = lab.path("replay.conf");
    std::fs::write(&conf, PFC_LAB.replace("MODE", "auto")).expect("write config");
    let stats = lab.path("stats.json");
    let (conf, stats) = (conf.display().to_string(), stats.display().to_string());
    let out_dir = lab.path("out").display().to_string();
    let pcap = format!("Ethernet1/1={file}");
    run(&[
        env!("CARGO_BIN_EXE_railyard"),
        "replay",
        "--config",
        &conf,
        "--pcap",
        &pcap,
        "--out",
        &out_dir,
        "--stats-json",
        &stats,
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let v = json(&std::fs::read_to_string(&stats).expect("stats"));
    let e1 = &v["interfaces"]["Ethernet1/1"];
    assert!(e1["punted"].as_u64().unwrap_or(0) >= 1, "{e1}");
    assert_eq!(e1["drops"]["local_unhandled"], 0, "{e1}");
    assert_eq!(
        e1["pfc"]["enabled"], 0x10,
        "lldpd's PFC {{4}} in force: {e1}"
    );
    let neighbors = run(&[
        env!("CARGO_BIN_EXE_railyard"),
        "show",
        "lldp",
        "neighbors",
        "--stats",
        &stats,
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(neighbors.contains("peer-lldpd"), "{neighbors}");
}
