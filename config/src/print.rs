//! The printer: canonical NX-OS-like text for a model, which parses back to an equal model.
//!
//! Layout, blocks separated by blank lines: `hostname`; `feature` lines;
//! the `vlan` list and each named VLAN; the global `mac address-table` and
//! `lacp system-priority` lines; railyard's `buffer-size`; access lists; class-maps; `policy-map type
//! qos`, `queuing` and `network-qos`; `system qos`; the global PFC watchdog;
//! `hardware profile dlb`; `ip load-sharing`; LLDP globals; the global
//! `bfd interval`; prefix-lists; route-map entries; one block per
//! interface, VLAN interfaces first, then port-channels, then Ethernet
//! ports, as NX-OS orders them (sub-commands indented two spaces, in a
//! fixed order, `no shutdown` spelled out); static routes in their original order; `router
//! bgp` last, as NX-OS prints it. Settings
//! at their default are left out. MACs print in NX-OS dotted form (DLB's in
//! colon form, as NX-OS writes it); DSCP and CoS sets as sorted lists of
//! values and ranges; byte counts in the largest unit that divides them.

use std::fmt::{self, Write as _};

use crate::bgp::{Afi, Bgp, BgpAf, PeerConfig, PrefixList, RouteMap};
use crate::l2::{
    ChannelMode, LacpRate, MacTable, PortChannel, Svi, Switchport, SwitchportMode, Vlans,
    DEFAULT_MAC_AGING_SECS, DEFAULT_VLAN,
};
use crate::lldp::{Lldp, LldpTlvSelect};
use crate::mac::Mac;
use crate::model::{Config, Interface, IpPrefix, StaticRoute, DEFAULT_MTU};
use crate::qos::{
    AccessList, AclEntry, Bandwidth, ClassMap, DcbxVersion, DlbInterfaces, DlbMode, GroupClassMap,
    LoadSharing, Match, NetworkQosPolicy, PeerResponse, PfcMode, PfcWatchdogTimers, QosPolicy,
    QueueLimit, QueuingPolicy, SystemQos, Threshold, Wred, KBYTE, MBYTE,
};

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut blocks: Vec<String> = Vec::new();
        let mut head = String::new();
        if let Some(h) = &self.hostname {
            writeln!(head, "hostname {h}")?;
        }
        for feature in &self.features {
            writeln!(head, "feature {feature}")?;
        }
        blocks.push(head);
        blocks.push(vlans(&self.vlans));
        blocks.push(layer2_globals(&self.mac_table, self.lacp_system_priority));
        if let Some(bytes) = self.buffer_bytes {
            blocks.push(format!("buffer-size {}\n", Bytes(bytes)));
        }
        if !self.dpdk_eal_args.is_empty() {
            blocks.push(format!("dpdk eal-args {}\n", self.dpdk_eal_args.join(" ")));
        }
        if let Some(q) = self.pfc_pause_quanta {
            blocks.push(format!("priority-flow-control pause-quanta {q}\n"));
        }
        if self.pfc_watchdog_ingress_forward {
            blocks.push("priority-flow-control watch-dog ingress forward\n".to_string());
        }
        blocks.extend(self.access_lists.iter().map(ToString::to_string));
        blocks.extend(self.class_maps.iter().map(ToString::to_string));
        blocks.extend(
            self.queuing_class_maps
                .iter()
                .map(|c| group_class_map("queuing", c)),
        );
        blocks.extend(
            self.network_qos_class_maps
                .iter()
                .map(|c| group_class_map("network-qos", c)),
        );
        blocks.extend(self.qos_policies.iter().map(ToString::to_string));
        blocks.extend(self.queuing_policies.iter().map(ToString::to_string));
        blocks.extend(self.network_qos_policies.iter().map(ToString::to_string));
        blocks.push(self.system_qos.to_string());
        blocks.push(watchdog(self.pfc_watchdog_interval, &self.pfc_watchdog));
        if let Some(dlb) = &self.dlb {
            blocks.push(dlb_block(dlb));
        }
        blocks.push(load_sharing(&self.load_sharing));
        blocks.push(lldp(&self.lldp));
        if let Some(b) = &self.bfd_interval {
            blocks.push(format!("{b}\n"));
        }
        blocks.extend(self.prefix_lists.iter().map(ToString::to_string));
        blocks.extend(route_maps(&self.route_maps));
        // As NX-OS orders them: VLAN interfaces, port-channels, Ethernet ports.
        blocks.extend(self.svis.iter().map(ToString::to_string));
        blocks.extend(self.port_channels.iter().map(ToString::to_string));
        blocks.extend(self.interfaces.iter().map(ToString::to_string));
        blocks.extend(self.monitor_sessions.iter().map(ToString::to_string));
        let mut routes = String::new();
        for route in &self.routes {
            writeln!(routes, "{route}")?;
        }
        blocks.push(routes);
        if let Some(bgp) = &self.bgp {
            blocks.push(bgp.to_string());
        }
        let mut first = true;
        for block in blocks.iter().filter(|b| !b.is_empty()) {
            if !first {
                writeln!(f)?;
            }
            f.write_str(block)?;
            first = false;
        }
        Ok(())
    }
}

/// A byte count in the largest of `mbytes`, `kbytes`, `bytes` that divides it.
struct Bytes(u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n != 0 && n & (MBYTE - 1) == 0 {
            write!(f, "{} mbytes", n / MBYTE)
        } else if n != 0 && n & (KBYTE - 1) == 0 {
            write!(f, "{} kbytes", n / KBYTE)
        } else {
            write!(f, "{n} bytes")
        }
    }
}

/// A threshold with its unit.
struct Depth(Threshold);

impl fmt::Display for Depth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Threshold::Bytes(n) => Bytes(n).fmt(f),
            Threshold::Packets(n) => write!(f, "{n} packets"),
        }
    }
}

/// A rate in the largest of `gbps`, `mbps`, `kbps`, `bps` that divides it.
struct Rate(u64);

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (unit, div) in [
            ("gbps", 1_000_000_000),
            ("mbps", 1_000_000),
            ("kbps", 1_000),
        ] {
            if n != 0 && n / div * div == n {
                return write!(f, "{} {unit}", n / div);
            }
        }
        write!(f, "{n} bps")
    }
}

/// A delay in the largest of `ms`, `us`, `ns` that divides it.
struct Delay(u64);

impl fmt::Display for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (unit, div) in [("ms", 1_000_000), ("us", 1_000)] {
            if n != 0 && n.is_multiple_of(div) {
                return write!(f, "{} {unit}", n / div);
            }
        }
        write!(f, "{n} ns")
    }
}

/// A set of small values (bit n = value n) as a list of values and ranges: `1,3-5`.
pub(crate) struct ValueSet(pub u64);

impl fmt::Display for ValueSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut v = 0u32;
        while v < 64 {
            if self.0 & (1u64 << v) == 0 {
                v += 1;
                continue;
            }
            let start = v;
            while v + 1 < 64 && self.0 & (1u64 << (v + 1)) != 0 {
                v += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == v {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{v}")?;
            }
            v += 1;
        }
        Ok(())
    }
}

/// A MAC in colon form, `00:cc:cc:cc:cc:cc`.
struct ColonMac<'a>(&'a [u8; 6]);

impl fmt::Display for ColonMac<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// The `ip access-list` block.
impl fmt::Display for AccessList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "ip access-list {}", self.name)?;
        for e in &self.entries {
            writeln!(f, "  {e}")?;
        }
        Ok(())
    }
}

/// One access-list entry with its sequence number, without a newline.
impl fmt::Display for AclEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.permit { "permit" } else { "deny" };
        write!(f, "{} {verb} ", self.seq)?;
        if let Some(u) = &self.unevaluated {
            // Printed as written: railyard reads back what it cannot evaluate.
            return f.write_str(&u.text);
        }
        match self.protocol {
            None => f.write_str("ip")?,
            Some(p) => match crate::parser::protocol_name(p) {
                Some(name) => f.write_str(name)?,
                None => write!(f, "{p}")?,
            },
        }
        let addr = |p: &Option<IpPrefix>| p.map_or_else(|| "any".to_string(), |p| p.to_string());
        write!(f, " {}", addr(&self.src))?;
        if let Some(p) = self.src_port {
            write!(f, " {p}")?;
        }
        write!(f, " {}", addr(&self.dst))?;
        if let Some(p) = self.dst_port {
            write!(f, " {p}")?;
        }
        if let Some(d) = self.dscp {
            write!(f, " dscp {d}")?;
        }
        Ok(())
    }
}

/// The `class-map type qos` block.
impl fmt::Display for ClassMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "class-map type qos {} {}",
            self.match_mode.keyword(),
            self.name
        )?;
        for m in &self.matches {
            match m {
                Match::Dscp(s) => writeln!(f, "  match dscp {}", ValueSet(*s))?,
                Match::Cos(s) => writeln!(f, "  match cos {}", ValueSet(u64::from(*s)))?,
                Match::Precedence(s) => {
                    writeln!(f, "  match precedence {}", ValueSet(u64::from(*s)))?;
                }
                Match::AccessGroup(n) => writeln!(f, "  match access-group name {n}")?,
            }
        }
        Ok(())
    }
}

/// A `class-map type queuing|network-qos NAME` block of the older dialect.
fn group_class_map(kind: &str, c: &GroupClassMap) -> String {
    let mut s = format!("class-map type {kind} {}\n", c.name);
    if let Some(g) = c.qos_group {
        s.push_str(&format!("  match qos-group {g}\n"));
    }
    s
}

/// The `policy-map type qos` block.
impl fmt::Display for QosPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "policy-map type qos {}", self.name)?;
        for c in &self.classes {
            writeln!(f, "  class {}", c.class)?;
            if let Some(g) = c.set_qos_group {
                writeln!(f, "    set qos-group {g}")?;
            }
        }
        Ok(())
    }
}

/// The `random-detect` line's arguments.
struct RandomDetect<'a>(&'a Wred);

impl fmt::Display for RandomDetect<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.0;
        let ecn = if w.ecn { " ecn" } else { "" };
        match w.preset {
            Some(p) => write!(f, "threshold {}{ecn}", p.keyword()),
            None => write!(
                f,
                "minimum-threshold {} maximum-threshold {} drop-probability {} weight {}{ecn}",
                Depth(w.min),
                Depth(w.max),
                w.drop_probability,
                w.weight
            ),
        }
    }
}

/// The `policy-map type queuing` block.
impl fmt::Display for QueuingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "policy-map type queuing {}", self.name)?;
        for c in &self.classes {
            match &c.class {
                Some(name) => writeln!(f, "  class type queuing {name}")?,
                None => writeln!(
                    f,
                    "  class type queuing {}",
                    self.direction.class_name(c.queue)
                )?,
            }
            if let Some(l) = c.priority_level {
                writeln!(f, "    priority level {l}")?;
            }
            match c.bandwidth {
                Some(Bandwidth::Percent(p)) => writeln!(f, "    bandwidth percent {p}")?,
                Some(Bandwidth::RemainingPercent(p)) => {
                    writeln!(f, "    bandwidth remaining percent {p}")?;
                }
                Some(Bandwidth::Rate(r)) => writeln!(f, "    bandwidth {}", Rate(r))?,
                None => {}
            }
            if let Some(s) = c.shape {
                writeln!(
                    f,
                    "    shape min {} max {}",
                    Rate(s.min_bps),
                    Rate(s.max_bps)
                )?;
            }
            if let Some(w) = &c.wred {
                writeln!(f, "    random-detect {}", RandomDetect(w))?;
            }
            match c.queue_limit {
                Some(QueueLimit::Bytes(n)) => writeln!(f, "    queue-limit {}", Bytes(n))?,
                Some(QueueLimit::Packets(n)) => writeln!(f, "    queue-limit {n} packets")?,
                Some(QueueLimit::Percent(p)) => writeln!(f, "    queue-limit percent {p}")?,
                Some(QueueLimit::Dynamic(a)) => writeln!(f, "    queue-limit dynamic {a}")?,
                None => {}
            }
            if let Some(p) = c.pause {
                writeln!(
                    f,
                    "    pause buffer-size {} pause-threshold {} resume-threshold {}",
                    p.buffer_size, p.xoff, p.xon
                )?;
            }
        }
        Ok(())
    }
}

/// The `policy-map type network-qos` block.
impl fmt::Display for NetworkQosPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "policy-map type network-qos {}", self.name)?;
        for c in &self.classes {
            if let Some(name) = &c.class {
                writeln!(f, "  class type network-qos {name}")?;
            } else if c.qos_group == 0 {
                writeln!(f, "  class type network-qos c-8q-nq-default")?;
            } else {
                writeln!(f, "  class type network-qos c-8q-nq{}", c.qos_group)?;
            }
            if let Some(m) = c.mtu {
                writeln!(f, "    mtu {m}")?;
            }
            let list: Vec<String> = c.pause_pfc_cos.iter().map(u8::to_string).collect();
            match (c.no_drop, list.is_empty()) {
                (true, true) => writeln!(f, "    pause no-drop")?,
                (true, false) => writeln!(f, "    pause no-drop pfc-cos {}", list.join(","))?,
                (false, false) => writeln!(f, "    pause pfc-cos {}", list.join(","))?,
                (false, true) => {}
            }
        }
        Ok(())
    }
}

/// The `system qos` block (nothing when no policy is set).
impl fmt::Display for SystemQos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        writeln!(f, "system qos")?;
        let lines = [
            ("type network-qos", &self.network_qos),
            ("type queuing output", &self.queuing_output),
            ("type queuing input", &self.queuing_input),
            ("type qos input", &self.qos_input),
        ];
        for (words, name) in lines {
            if let Some(n) = name {
                writeln!(f, "  service-policy {words} {n}")?;
            }
        }
        Ok(())
    }
}

/// The global PFC watchdog lines (empty at the defaults).
fn watchdog(on: Option<bool>, t: &PfcWatchdogTimers) -> String {
    let d = PfcWatchdogTimers::default();
    let mut s = String::new();
    if let Some(on) = on {
        let v = if on { "on" } else { "off" };
        s += &format!("priority-flow-control watch-dog-interval {v}\n");
    }
    if t.interval_ms != d.interval_ms {
        s += &format!(
            "priority-flow-control watch-dog interval {}\n",
            t.interval_ms
        );
    }
    if t.shutdown_multiplier != d.shutdown_multiplier {
        s += &format!(
            "priority-flow-control watch-dog shutdown-multiplier {}\n",
            t.shutdown_multiplier
        );
    }
    if t.auto_restore_multiplier != d.auto_restore_multiplier {
        s += &format!(
            "priority-flow-control auto-restore multiplier {}\n",
            t.auto_restore_multiplier
        );
    }
    if t.fixed_restore_multiplier != d.fixed_restore_multiplier {
        s += &format!(
            "priority-flow-control fixed-restore multiplier {}\n",
            t.fixed_restore_multiplier
        );
    }
    s
}

/// The `hardware profile dlb` block.
fn dlb_block(d: &crate::qos::Dlb) -> String {
    let dflt = crate::qos::Dlb::default();
    let mut s = String::from("hardware profile dlb\n");
    match &d.interfaces {
        DlbInterfaces::All => s += "  dlb-interface all\n",
        DlbInterfaces::List(l) if !l.is_empty() => {
            let names: Vec<String> = l.iter().map(ToString::to_string).collect();
            s += &format!("  dlb-interface {}\n", names.join(", "));
        }
        DlbInterfaces::List(_) => {}
    }
    let mode = match d.mode {
        DlbMode::Flowlet => "flowlet",
        DlbMode::PerPacket => "per-packet",
    };
    if d.policy_driven {
        s += &format!("  mode policy-driven {mode}\n");
    } else if d.mode == DlbMode::PerPacket {
        s += "  mode per-packet\n";
    }
    if d.mac_address != dflt.mac_address {
        s += &format!("  mac-address {}\n", ColonMac(&d.mac_address));
    }
    if d.flowlet_aging_us != dflt.flowlet_aging_us {
        s += &format!("  flowlet-aging {}\n", d.flowlet_aging_us);
    }
    if let Some(t) = d.dre_thresholds {
        s += "  dre-thresholds";
        for (i, v) in t.iter().enumerate() {
            s += &format!(" level-{} {v}", i + 1);
        }
        s += "\n";
    }
    if let Some(n) = d.decay_factor {
        s += &format!("  decay-factor {n}\n");
    }
    if let Some(n) = d.sampling_interval_ns {
        s += &format!("  sampling-interval {n} nsecs\n");
    }
    if !d.load_awareness {
        s += "  no load-awareness\n";
    }
    if d.flowlet_table_size != dflt.flowlet_table_size {
        s += &format!("  flowlet-table-size {}\n", d.flowlet_table_size);
    }
    if !d.static_pinning.is_empty() {
        s += "  static-pinning\n";
        for p in &d.static_pinning {
            s += &format!("    source {} destination {}\n", p.source, p.destination);
        }
    }
    s
}

/// `source`, `destination` or `source-destination`.
fn sides(src: bool, dst: bool) -> &'static str {
    match (src, dst) {
        (true, false) => "source",
        (false, true) => "destination",
        _ => "source-destination",
    }
}

/// The `ip load-sharing` line (empty at the default).
fn load_sharing(l: &LoadSharing) -> String {
    if *l == LoadSharing::default() {
        return String::new();
    }
    let mut s = format!("ip load-sharing address {}", sides(l.src_addr, l.dst_addr));
    if l.src_port || l.dst_port {
        s += &format!(" port {}", sides(l.src_port, l.dst_port));
    }
    if l.concatenation {
        s += " concatenation";
    }
    if l.rocev2_dest_qp {
        s += " rocev2-dest-qp";
    }
    if let Some(r) = l.rotate {
        s += &format!(" rotate {r}");
    }
    if let Some(u) = l.universal_id {
        s += &format!(" universal-id {u}");
    }
    s + "\n"
}

/// The LLDP global lines (empty at the defaults).
fn lldp(l: &Lldp) -> String {
    let d = Lldp::default();
    let mut s = String::new();
    if l.timer_s != d.timer_s {
        s += &format!("lldp timer {}\n", l.timer_s);
    }
    if l.holdtime_s != d.holdtime_s {
        s += &format!("lldp holdtime {}\n", l.holdtime_s);
    }
    if l.reinit_s != d.reinit_s {
        s += &format!("lldp reinit {}\n", l.reinit_s);
    }
    for k in LldpTlvSelect::KEYWORDS {
        if !l.tlv_select.flag(k) {
            s += &format!("no lldp tlv-select {k}\n");
        }
    }
    for t in &l.custom_tlvs {
        let [a, b, c] = t.oui;
        s += &format!(
            "lldp tlv custom oui {a:02x}:{b:02x}:{c:02x} subtype {}",
            t.subtype
        );
        if !t.info.is_empty() {
            s += " info ";
            for byte in &t.info {
                s += &format!("{byte:02x}");
            }
        }
        s += "\n";
    }
    s
}

/// The `vlan` lines: the list of VLANs, then a block per named VLAN
/// (empty when VLAN 1 alone exists with its default name).
fn vlans(v: &Vlans) -> String {
    let mut s = String::new();
    if v.len() == 1 && v.iter().all(|x| x.id == DEFAULT_VLAN && x.name.is_none()) {
        return s;
    }
    s += &format!("vlan {}\n", v.ids());
    for x in v {
        if let Some(n) = &x.name {
            s += &format!("vlan {}\n  name {n}\n", x.id);
        }
    }
    s
}

/// The global `mac address-table` and `lacp system-priority` lines (empty at the defaults).
fn layer2_globals(t: &MacTable, lacp_system_priority: Option<u16>) -> String {
    let mut s = String::new();
    if t.aging_secs != DEFAULT_MAC_AGING_SECS {
        s += &format!("mac address-table aging-time {}\n", t.aging_secs);
    }
    for m in &t.statics {
        s += &format!(
            "mac address-table static {} vlan {} interface {}\n",
            Mac(&m.mac),
            m.vlan,
            m.target
        );
    }
    if let Some(p) = lacp_system_priority {
        s += &format!("lacp system-priority {p}\n");
    }
    s
}

/// The `switchport` lines of a Layer 2 port that differ from the defaults.
fn switchport_lines(f: &mut fmt::Formatter<'_>, sp: &Switchport) -> fmt::Result {
    let d = Switchport::default();
    if sp.mode != SwitchportMode::Access {
        writeln!(f, "  switchport mode {}", sp.mode.keyword())?;
    }
    if sp.access_vlan != d.access_vlan {
        writeln!(f, "  switchport access vlan {}", sp.access_vlan)?;
    }
    if sp.native_vlan != d.native_vlan {
        writeln!(f, "  switchport trunk native vlan {}", sp.native_vlan)?;
    }
    if sp.trunk_allowed != d.trunk_allowed {
        writeln!(f, "  switchport trunk allowed vlan {}", sp.trunk_allowed)?;
    }
    Ok(())
}

/// The state line every interface block ends with.
fn state(f: &mut fmt::Formatter<'_>, shutdown: bool) -> fmt::Result {
    writeln!(f, "  {}", if shutdown { "shutdown" } else { "no shutdown" })
}

/// The `interface VlanN` block.
impl fmt::Display for Svi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "interface {}", self.name())?;
        if let Some(d) = &self.description {
            writeln!(f, "  description {d}")?;
        }
        if let Some(v) = &self.vrf {
            writeln!(f, "  vrf member {v}")?;
        }
        if self.mtu != DEFAULT_MTU {
            writeln!(f, "  mtu {}", self.mtu)?;
        }
        if let Some(mac) = &self.mac {
            writeln!(f, "  mac-address {}", Mac(mac))?;
        }
        for (i, p) in self.ipv4.iter().enumerate() {
            let secondary = if i == 0 { "" } else { " secondary" };
            writeln!(f, "  ip address {p}{secondary}")?;
        }
        for p in &self.ipv6 {
            writeln!(f, "  ipv6 address {p}")?;
        }
        state(f, self.shutdown)
    }
}

/// The `interface port-channelN` block.
impl fmt::Display for PortChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "interface {}", self.name())?;
        if let Some(d) = &self.description {
            writeln!(f, "  description {d}")?;
        }
        if self.routed {
            writeln!(f, "  no switchport")?;
        } else {
            switchport_lines(f, &self.switchport)?;
        }
        if let Some(v) = &self.vrf {
            writeln!(f, "  vrf member {v}")?;
        }
        if self.mtu != DEFAULT_MTU {
            writeln!(f, "  mtu {}", self.mtu)?;
        }
        for (i, p) in self.ipv4.iter().enumerate() {
            let secondary = if i == 0 { "" } else { " secondary" };
            writeln!(f, "  ip address {p}{secondary}")?;
        }
        for p in &self.ipv6 {
            writeln!(f, "  ipv6 address {p}")?;
        }
        if let Some(p) = &self.service_policy_qos_input {
            writeln!(f, "  service-policy type qos input {p}")?;
        }
        if let Some(p) = &self.service_policy_queuing_input {
            writeln!(f, "  service-policy type queuing input {p}")?;
        }
        if let Some(p) = &self.service_policy_queuing_output {
            writeln!(f, "  service-policy type queuing output {p}")?;
        }
        if let Some(n) = self.min_links {
            writeln!(f, "  lacp min-links {n}")?;
        }
        state(f, self.shutdown)
    }
}

/// The `interface` block, header and sub-commands, each line ending in a newline.
impl fmt::Display for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "interface {}", self.name)?;
        if let Some(d) = &self.description {
            writeln!(f, "  description {d}")?;
        }
        if self.routed {
            writeln!(f, "  no switchport")?;
        } else {
            switchport_lines(f, &self.switchport)?;
        }
        if let Some(v) = &self.vrf {
            writeln!(f, "  vrf member {v}")?;
        }
        if let Some(s) = self.speed_mbps {
            writeln!(f, "  speed {s}")?;
        }
        if self.mtu != DEFAULT_MTU {
            writeln!(f, "  mtu {}", self.mtu)?;
        }
        if let Some(mac) = &self.mac {
            writeln!(f, "  mac-address {}", Mac(mac))?;
        }
        if let Some(b) = &self.bind {
            write!(f, "  bind {b}")?;
            if let Some(mib) = self.rx_ring_mib {
                write!(f, " ring {mib}")?;
            }
            if let Some(h) = self.rx_handover {
                write!(f, " receive {}", h.keyword())?;
            }
            writeln!(f)?;
        }
        for (i, p) in self.ipv4.iter().enumerate() {
            let secondary = if i == 0 { "" } else { " secondary" };
            writeln!(f, "  ip address {p}{secondary}")?;
        }
        for p in &self.ipv6 {
            writeln!(f, "  ipv6 address {p}")?;
        }
        for (ip, mac) in &self.arp {
            writeln!(f, "  ip arp {ip} {}", Mac(mac))?;
        }
        for (ip, mac) in &self.nd {
            writeln!(f, "  ipv6 neighbor {ip} {}", Mac(mac))?;
        }
        if self.pfc_mode != PfcMode::Auto || self.pfc_send_tlv {
            let tlv = if self.pfc_send_tlv { " send-tlv" } else { "" };
            writeln!(
                f,
                "  priority-flow-control mode {}{tlv}",
                self.pfc_mode.keyword()
            )?;
        }
        if let Some(on) = self.pfc_watchdog {
            let v = if on { "on" } else { "off" };
            writeln!(f, "  priority-flow-control watch-dog-interval {v}")?;
        }
        let d = &self.pfc_delays;
        if let Some(m) = d.cable_metres {
            writeln!(f, "  priority-flow-control cable-length {m}")?;
        }
        match d.peer_response {
            Some(PeerResponse::Bits(n)) => {
                writeln!(f, "  priority-flow-control peer-response {n} bits")?;
            }
            Some(PeerResponse::Nanos(ns)) => {
                writeln!(f, "  priority-flow-control peer-response {}", Delay(ns))?;
            }
            None => {}
        }
        if let Some(ns) = d.software_response_ns {
            writeln!(f, "  priority-flow-control software-response {}", Delay(ns))?;
        }
        if let Some(p) = &self.service_policy_qos_input {
            writeln!(f, "  service-policy type qos input {p}")?;
        }
        if let Some(p) = &self.service_policy_queuing_input {
            writeln!(f, "  service-policy type queuing input {p}")?;
        }
        if let Some(p) = &self.service_policy_queuing_output {
            writeln!(f, "  service-policy type queuing output {p}")?;
        }
        if !self.lldp_transmit {
            writeln!(f, "  no lldp transmit")?;
        }
        if !self.lldp_receive {
            writeln!(f, "  no lldp receive")?;
        }
        if self.dcbx_version != DcbxVersion::Auto {
            writeln!(f, "  lldp dcbx version {}", self.dcbx_version.keyword())?;
        }
        if let Some(b) = &self.bfd_interval {
            writeln!(f, "  {b}")?;
        }
        if let Some(p) = self.lacp_port_priority {
            writeln!(f, "  lacp port-priority {p}")?;
        }
        if self.lacp_rate != LacpRate::Normal {
            writeln!(f, "  lacp rate {}", self.lacp_rate.keyword())?;
        }
        match self.channel_group {
            Some(g) if g.mode == ChannelMode::On => writeln!(f, "  channel-group {}", g.id)?,
            Some(g) => writeln!(f, "  channel-group {} mode {}", g.id, g.mode.keyword())?,
            None => {}
        }
        state(f, self.shutdown)
    }
}

/// The `ip route` / `ipv6 route` line, without a newline.
impl fmt::Display for StaticRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let family = match self.prefix {
            IpPrefix::V4(_) => "ip",
            IpPrefix::V6(_) => "ipv6",
        };
        write!(f, "{family} route {} {}", self.prefix, self.target)
    }
}

/// `ip prefix-list` / `ipv6 prefix-list` lines, the description first.
impl fmt::Display for PrefixList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let family = match self.afi {
            Afi::Ipv4 => "ip",
            Afi::Ipv6 => "ipv6",
        };
        if let Some(d) = &self.description {
            writeln!(f, "{family} prefix-list {} description {d}", self.name)?;
        }
        for r in &self.rules {
            write!(
                f,
                "{family} prefix-list {} seq {} {} {}",
                self.name,
                r.seq,
                r.action.keyword(),
                r.prefix
            )?;
            if let Some(ge) = r.ge {
                write!(f, " ge {ge}")?;
            }
            if let Some(le) = r.le {
                write!(f, " le {le}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// One block per route-map entry.
fn route_maps(entries: &[RouteMap]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            let mut s = format!("route-map {} {} {}\n", e.name, e.action.keyword(), e.seq);
            if let Some(d) = &e.description {
                s.push_str(&format!("  description {d}\n"));
            }
            if !e.match_ipv4.is_empty() {
                s.push_str(&format!(
                    "  match ip address prefix-list {}\n",
                    e.match_ipv4.join(" ")
                ));
            }
            if !e.match_ipv6.is_empty() {
                s.push_str(&format!(
                    "  match ipv6 address prefix-list {}\n",
                    e.match_ipv6.join(" ")
                ));
            }
            for set in &e.sets {
                s.push_str(&format!("  {set}\n"));
            }
            s
        })
        .collect()
}

/// A router-level address-family block at two spaces.
fn router_af(f: &mut fmt::Formatter<'_>, afi: Afi, af: &BgpAf) -> fmt::Result {
    writeln!(f, "  address-family {} unicast", afi.keyword())?;
    for n in &af.networks {
        write!(f, "    network {}", n.prefix)?;
        if let Some(rm) = &n.route_map {
            write!(f, " route-map {rm}")?;
        }
        writeln!(f)?;
    }
    if let Some(rm) = &af.redistribute_direct {
        writeln!(f, "    redistribute direct route-map {rm}")?;
    }
    for a in &af.aggregates {
        write!(f, "    aggregate-address {}", a.prefix)?;
        if a.as_set {
            f.write_str(" as-set")?;
        }
        if a.summary_only {
            f.write_str(" summary-only")?;
        }
        writeln!(f)?;
    }
    if let Some(n) = af.maximum_paths {
        writeln!(f, "    maximum-paths {n}")?;
    }
    if let Some(n) = af.maximum_paths_ibgp {
        writeln!(f, "    maximum-paths ibgp {n}")?;
    }
    Ok(())
}

/// A neighbor's or template's statements at four spaces.
fn peer(f: &mut fmt::Formatter<'_>, p: &PeerConfig) -> fmt::Result {
    if let Some(t) = &p.inherit {
        writeln!(f, "    inherit peer {t}")?;
    }
    if let Some(asn) = p.remote_as {
        writeln!(f, "    remote-as {asn}")?;
    }
    if let Some(d) = &p.description {
        writeln!(f, "    description {d}")?;
    }
    if let Some(s) = &p.update_source {
        writeln!(f, "    update-source {s}")?;
    }
    if p.bfd {
        writeln!(f, "    bfd")?;
    }
    if p.shutdown {
        writeln!(f, "    shutdown")?;
    }
    for afi in [Afi::Ipv4, Afi::Ipv6] {
        let Some(af) = p.af(afi) else { continue };
        writeln!(f, "    address-family {} unicast", afi.keyword())?;
        if af.send_community {
            writeln!(f, "      send-community")?;
        }
        if af.send_community_extended {
            writeln!(f, "      send-community extended")?;
        }
        if let Some(rm) = &af.route_map_in {
            writeln!(f, "      route-map {rm} in")?;
        }
        if let Some(rm) = &af.route_map_out {
            writeln!(f, "      route-map {rm} out")?;
        }
    }
    Ok(())
}

/// The `router bgp` section as NX-OS lays it out: globals, address
/// families, templates, neighbors.
impl fmt::Display for Bgp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "router bgp {}", self.asn)?;
        if let Some(id) = self.router_id {
            writeln!(f, "  router-id {id}")?;
        }
        if self.multipath_relax {
            writeln!(f, "  bestpath as-path multipath-relax")?;
        }
        if self.log_neighbor_changes {
            writeln!(f, "  log-neighbor-changes")?;
        }
        if let Some(af) = &self.ipv4 {
            router_af(f, Afi::Ipv4, af)?;
        }
        if let Some(af) = &self.ipv6 {
            router_af(f, Afi::Ipv6, af)?;
        }
        for t in &self.templates {
            writeln!(f, "  template peer {}", t.name)?;
            peer(f, &t.peer)?;
        }
        for n in &self.neighbors {
            writeln!(f, "  neighbor {}", n.addr)?;
            peer(f, &n.peer)?;
        }
        Ok(())
    }
}
