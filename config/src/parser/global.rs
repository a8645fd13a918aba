//! Global commands beyond QoS policies: the PFC watchdog, `hardware profile
//! dlb`, `ip load-sharing`, the LLDP globals and railyard's `buffer-size`
//! and `dpdk eal-args` extensions.

use super::table::Spec;
use super::value::{self, keyword};
use super::{Args, Builder, Fail, FrameKind, Section};
use crate::lldp::{
    CustomTlv, LldpTlvSelect, DEFAULT_LLDP_HOLDTIME_S, DEFAULT_LLDP_REINIT_S, DEFAULT_LLDP_TIMER_S,
    MAX_CUSTOM_TLV_INFO,
};
use crate::model::InterfaceName;
use crate::qos::{
    Dlb, DlbInterfaces, DlbMode, DlbPin, LoadSharing, PfcWatchdogTimers, DEFAULT_DLB_MAC,
    DEFAULT_FLOWLET_AGING_US, DEFAULT_FLOWLET_TABLE_SIZE, MAX_FLOWLET_TABLE_SIZE,
    MIN_FLOWLET_TABLE_SIZE,
};
use crate::validate::{At, GlobalItem};

/// Usage of `ip load-sharing`.
pub(super) const LOAD_SHARING: &str = "ip load-sharing address source|destination|source-destination [port source|destination|source-destination] [concatenation] [rocev2-dest-qp] [rotate 0-63] [universal-id N]";

/// Commands under `hardware profile dlb`.
pub(super) static DLB: &[Spec] = &[
    Spec::run(
        &["dlb-interface"],
        "dlb-interface NAME[, NAME...] | all",
        dlb_interface,
    ),
    Spec::run(
        &["no", "dlb-interface"],
        "no dlb-interface",
        no_dlb_interface,
    ),
    Spec::run(
        &["mode"],
        "mode [policy-driven] flowlet | per-packet",
        dlb_mode,
    ),
    Spec::run(&["no", "mode"], "no mode", no_dlb_mode),
    Spec::run(&["mac-address"], "mac-address XX:XX:XX:XX:XX:XX", dlb_mac),
    Spec::run(&["no", "mac-address"], "no mac-address", no_dlb_mac),
    Spec::run(&["flowlet-aging"], "flowlet-aging USEC", flowlet_aging),
    Spec::run(
        &["no", "flowlet-aging"],
        "no flowlet-aging",
        no_flowlet_aging,
    ),
    Spec::run(
        &["dre-thresholds"],
        "dre-thresholds level-1 P level-2 P ... level-7 P",
        dre_thresholds,
    ),
    Spec::run(
        &["no", "dre-thresholds"],
        "no dre-thresholds",
        no_dre_thresholds,
    ),
    Spec::run(&["decay-factor"], "decay-factor 0-15", decay_factor),
    Spec::run(&["no", "decay-factor"], "no decay-factor", no_decay_factor),
    Spec::run(
        &["sampling-interval"],
        "sampling-interval NS [nsecs]",
        sampling_interval,
    ),
    Spec::run(
        &["no", "sampling-interval"],
        "no sampling-interval",
        no_sampling_interval,
    ),
    Spec::run(&["load-awareness"], "load-awareness", load_awareness),
    Spec::run(
        &["no", "load-awareness"],
        "no load-awareness",
        no_load_awareness,
    ),
    Spec::run(
        &["flowlet-table-size"],
        "flowlet-table-size N",
        flowlet_table_size,
    ),
    Spec::run(
        &["no", "flowlet-table-size"],
        "no flowlet-table-size",
        no_flowlet_table_size,
    ),
    Spec::run(&["static-pinning"], "static-pinning", static_pinning),
    Spec::run(
        &["no", "static-pinning"],
        "no static-pinning",
        no_static_pinning,
    ),
];

/// Commands under `static-pinning` (inside `hardware profile dlb`).
pub(super) static DLB_PINNING: &[Spec] = &[
    Spec::run(&["source"], PIN_USAGE, pin_source),
    Spec::run(&["no", "source"], PIN_USAGE, no_pin_source),
];

/// Usage of a static pinning line.
const PIN_USAGE: &str = "source ETHERNET-PORT destination ETHERNET-PORT";

/// Read `on` or `off`.
fn on_off(a: &mut Args<'_>) -> Result<bool, Fail> {
    let t = a.expect("`on` or `off`")?;
    a.finish()?;
    Ok(keyword(t, &["on", "off"], "setting")? == "on")
}

/// Global `priority-flow-control watch-dog-interval on|off`.
pub(super) fn watchdog_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let on = on_off(a)?;
    b.mark(At::Global(GlobalItem::Watchdog), col);
    b.config.pfc_watchdog_interval = Some(on);
    Ok(())
}

/// Global `no priority-flow-control watch-dog-interval [on|off]`.
pub(super) fn no_watchdog_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.pfc_watchdog_interval = None;
    Ok(())
}

/// Apply a watchdog timer setting read from the line.
fn timer(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
    what: &str,
    lo: u64,
    hi: u64,
    set: fn(&mut PfcWatchdogTimers, u64),
) -> Result<(), Fail> {
    let tok = a.expect(what)?;
    a.finish()?;
    let n = value::ranged(tok, what, lo, hi)?;
    set(&mut b.config.pfc_watchdog, n);
    Ok(())
}

/// `priority-flow-control watch-dog interval MS` (100-1000).
pub(super) fn watchdog_ms(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    timer(b, a, "watch-dog interval", 100, 1000, |t, n| {
        t.interval_ms = n as u16;
    })
}

/// `priority-flow-control watch-dog shutdown-multiplier N` (1-10).
pub(super) fn shutdown_multiplier(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    timer(b, a, "shutdown-multiplier", 1, 10, |t, n| {
        t.shutdown_multiplier = n as u8;
    })
}

/// `priority-flow-control auto-restore multiplier N` (0-100).
pub(super) fn auto_restore(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    timer(b, a, "auto-restore multiplier", 0, 100, |t, n| {
        t.auto_restore_multiplier = n as u8;
    })
}

/// `priority-flow-control fixed-restore multiplier N` (0-100).
pub(super) fn fixed_restore(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    timer(b, a, "fixed-restore multiplier", 0, 100, |t, n| {
        t.fixed_restore_multiplier = n as u8;
    })
}

/// `no priority-flow-control watch-dog interval|shutdown-multiplier`, `no … auto-restore|fixed-restore multiplier`.
pub(super) fn no_timer(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let d = PfcWatchdogTimers::default();
    let t = &mut b.config.pfc_watchdog;
    match a.line.tokens.get(2).map(|t| t.text.to_ascii_lowercase()) {
        Some(w) if w.starts_with("auto") => t.auto_restore_multiplier = d.auto_restore_multiplier,
        Some(w) if w.starts_with("fixed") => {
            t.fixed_restore_multiplier = d.fixed_restore_multiplier;
        }
        _ => match a.line.tokens.get(3).map(|t| t.text.to_ascii_lowercase()) {
            Some(w) if w.starts_with('s') => t.shutdown_multiplier = d.shutdown_multiplier,
            _ => t.interval_ms = d.interval_ms,
        },
    }
    Ok(())
}

// ---------------------------------------------------------------- dlb

/// `hardware profile dlb`.
pub(super) fn hardware_profile_dlb(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let r = a.finish();
    if b.config.dlb.is_none() {
        b.config.dlb = Some(Dlb::default());
    }
    b.enter(FrameKind::Section(Section::Dlb, 0, 0));
    r
}

/// `no hardware profile dlb`.
pub(super) fn no_hardware_profile_dlb(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    b.config.dlb = None;
    Ok(())
}

/// The DLB settings being configured.
fn dlb<'b>(b: &'b mut Builder<'_>) -> &'b mut Dlb {
    b.config.dlb.get_or_insert_with(Dlb::default)
}

/// `dlb-interface NAME[, NAME...] | all`: adds to the list.
fn dlb_interface(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((rest, col)) = a.rest() else {
        return Err(a.missing("interface list or `all`"));
    };
    if rest.eq_ignore_ascii_case("all") {
        dlb(b).interfaces = DlbInterfaces::All;
        return Ok(());
    }
    let mut names: Vec<InterfaceName> = Vec::new();
    for (spec, item_col) in super::top::interface_list(rest, col)? {
        match spec {
            crate::model::IfSpec::Ethernet(list) => names.extend(list),
            other => {
                return Err(Fail::new(
                    item_col,
                    format!(
                        "DLB balances over Ethernet ports, not {} interfaces",
                        other.kind()
                    ),
                    Some("list Ethernet ports, e.g. dlb-interface Ethernet1/1-4".into()),
                ))
            }
        }
    }
    let d = dlb(b);
    let mut list = match std::mem::take(&mut d.interfaces) {
        DlbInterfaces::List(v) => v,
        DlbInterfaces::All => Vec::new(),
    };
    list.extend(names);
    list.sort();
    list.dedup();
    d.interfaces = DlbInterfaces::List(list);
    Ok(())
}

/// `no dlb-interface [...]`.
fn no_dlb_interface(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).interfaces = DlbInterfaces::default();
    Ok(())
}

/// `mode [policy-driven] flowlet|per-packet`.
fn dlb_mode(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let policy_driven = a.eat("policy-driven").is_some();
    let t = a.expect("`flowlet` or `per-packet`")?;
    a.finish()?;
    let mode = match keyword(t, &["flowlet", "per-packet"], "DLB mode")? {
        "flowlet" => DlbMode::Flowlet,
        _ => DlbMode::PerPacket,
    };
    if policy_driven {
        b.mark(At::Global(GlobalItem::DlbMode), a.line.tokens[0].col);
    }
    let d = dlb(b);
    d.mode = mode;
    d.policy_driven = policy_driven;
    Ok(())
}

/// `no mode`.
fn no_dlb_mode(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let d = dlb(b);
    d.mode = DlbMode::default();
    d.policy_driven = false;
    Ok(())
}

/// `mac-address MAC`.
fn dlb_mac(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("MAC address")?;
    a.finish()?;
    let mac = value::mac(t.text).map_err(|e| Fail::value(t, e))?;
    if mac[0] & 1 == 1 {
        return Err(Fail::new(
            t.col,
            "the DLB MAC address must be unicast",
            Some("the least significant bit of the first octet must be 0".into()),
        ));
    }
    dlb(b).mac_address = mac;
    Ok(())
}

/// `no mac-address`.
fn no_dlb_mac(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).mac_address = DEFAULT_DLB_MAC;
    Ok(())
}

/// `flowlet-aging USEC`.
fn flowlet_aging(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("flowlet aging")?;
    a.finish()?;
    let us = value::ranged(t, "flowlet-aging", 1, u64::from(u32::MAX))? as u32;
    dlb(b).flowlet_aging_us = us;
    Ok(())
}

/// `no flowlet-aging`.
fn no_flowlet_aging(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).flowlet_aging_us = DEFAULT_FLOWLET_AGING_US;
    Ok(())
}

/// The `level-N` keywords of `dre-thresholds`.
const LEVELS: [&str; 7] = [
    "level-1", "level-2", "level-3", "level-4", "level-5", "level-6", "level-7",
];

/// `dre-thresholds level-1 P ... level-7 P` (any order, all seven).
fn dre_thresholds(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let mut levels: [Option<u8>; 7] = [None; 7];
    while let Some(t) = a.next_token() {
        let k = keyword(t, &LEVELS, "DRE level")?;
        let i = LEVELS.iter().position(|l| *l == k).unwrap_or(0);
        let v = a.expect("percentage")?;
        levels[i] = Some(value::ranged(v, k, 0, 100)? as u8);
    }
    let mut out = [0u8; 7];
    for (i, l) in levels.iter().enumerate() {
        out[i] = l.ok_or_else(|| a.missing(&format!("`{} P`", LEVELS[i])))?;
    }
    b.mark(At::Global(GlobalItem::DlbDre), col);
    dlb(b).dre_thresholds = Some(out);
    Ok(())
}

/// `no dre-thresholds`.
fn no_dre_thresholds(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).dre_thresholds = None;
    Ok(())
}

/// `decay-factor N`.
fn decay_factor(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("decay factor")?;
    a.finish()?;
    let n = value::ranged(t, "decay-factor", 0, 15)? as u8;
    dlb(b).decay_factor = Some(n);
    Ok(())
}

/// `no decay-factor`.
fn no_decay_factor(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).decay_factor = None;
    Ok(())
}

/// `sampling-interval NS [nsecs]`.
fn sampling_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("sampling interval")?;
    let ns = value::ranged(t, "sampling-interval", 1, u64::from(u32::MAX))? as u32;
    if let Some(u) = a.next_token() {
        keyword(u, &["nsecs"], "unit")?;
    }
    a.finish()?;
    dlb(b).sampling_interval_ns = Some(ns);
    Ok(())
}

/// `no sampling-interval`.
fn no_sampling_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).sampling_interval_ns = None;
    Ok(())
}

/// `load-awareness`.
fn load_awareness(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    dlb(b).load_awareness = true;
    Ok(())
}

/// `no load-awareness`.
fn no_load_awareness(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).load_awareness = false;
    Ok(())
}

/// `flowlet-table-size N` (railyard extension): a power of two, 256-1048576,
/// so the dataplane can index the table by masking a flow hash.
fn flowlet_table_size(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("flowlet table size")?;
    a.finish()?;
    let hint = format!(
        "flowlet-table-size is a power of two from {MIN_FLOWLET_TABLE_SIZE} to {MAX_FLOWLET_TABLE_SIZE}"
    );
    let n = value::number(t, "flowlet-table-size", &hint)?;
    let problem =
        if !(u64::from(MIN_FLOWLET_TABLE_SIZE)..=u64::from(MAX_FLOWLET_TABLE_SIZE)).contains(&n) {
            "is out of range"
        } else if !n.is_power_of_two() {
            "is not a power of two"
        } else {
            dlb(b).flowlet_table_size = n as u32;
            return Ok(());
        };
    let shown = if t.text.len() > 20 {
        t.text.to_owned()
    } else {
        n.to_string()
    };
    Err(Fail::new(
        t.col,
        format!("flowlet-table-size {shown} {problem}"),
        Some(hint),
    ))
}

/// `no flowlet-table-size`.
fn no_flowlet_table_size(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    dlb(b).flowlet_table_size = DEFAULT_FLOWLET_TABLE_SIZE;
    Ok(())
}

/// `static-pinning`: opens the list of `source … destination …` pins.
fn static_pinning(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let r = a.finish();
    dlb(b);
    b.enter(FrameKind::Section(Section::DlbPinning, 0, 0));
    r
}

/// `no static-pinning`: removes every pin.
fn no_static_pinning(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    dlb(b).static_pinning.clear();
    Ok(())
}

/// One Ethernet port of a pin.
fn pin_port(a: &mut Args<'_>, what: &str) -> Result<(InterfaceName, usize), Fail> {
    let t = a.expect(&format!("{what} interface"))?;
    match crate::model::parse_interface_spec(t.text).map_err(|e| Fail::value(t, e))? {
        crate::model::IfSpec::Ethernet(names) if names.len() == 1 => Ok((names[0], t.col)),
        crate::model::IfSpec::Ethernet(_) => Err(Fail::new(
            t.col,
            format!("a pin names one {what} port, not the range `{}`", t.text),
            Some("write one `source … destination …` line per port".into()),
        )),
        other => Err(Fail::new(
            t.col,
            format!("DLB pins Ethernet ports, not {} interfaces", other.kind()),
            Some(format!("usage: {PIN_USAGE}")),
        )),
    }
}

/// Read `source IF destination IF`.
fn pin_args(a: &mut Args<'_>) -> Result<(DlbPin, usize), Fail> {
    let (source, col) = pin_port(a, "source")?;
    let d = a.expect("`destination`")?;
    keyword(d, &["destination"], "keyword")?;
    let (destination, _) = pin_port(a, "destination")?;
    a.finish()?;
    Ok((
        DlbPin {
            source,
            destination,
        },
        col,
    ))
}

/// `source IF destination IF`: pins the source's DLB traffic to the
/// destination; a later pin of the same source replaces the earlier one.
fn pin_source(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (pin, col) = pin_args(a)?;
    if pin.source == pin.destination {
        return Err(Fail::new(
            col,
            format!("{} is pinned to itself", pin.source),
            Some("the destination is the DLB member the source's traffic leaves on".into()),
        ));
    }
    b.mark(At::DlbPin(pin.source), col);
    let pins = &mut dlb(b).static_pinning;
    match pins.iter_mut().find(|p| p.source == pin.source) {
        Some(p) => *p = pin,
        None => pins.push(pin),
    }
    Ok(())
}

/// `no source IF destination IF`.
fn no_pin_source(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (pin, col) = pin_args(a)?;
    let pins = &mut dlb(b).static_pinning;
    match pins.iter().position(|p| *p == pin) {
        Some(i) => {
            pins.remove(i);
        }
        None => b.warn(
            col,
            format!(
                "no pin `source {} destination {}` to remove",
                pin.source, pin.destination
            ),
            None,
        ),
    }
    Ok(())
}

// ---------------------------------------------------------------- load sharing

/// Which of source and destination a `source-destination`-style keyword selects.
fn sides(a: &mut Args<'_>, what: &str) -> Result<(bool, bool), Fail> {
    let t = a.expect(&format!("{what} fields"))?;
    Ok(
        match keyword(
            t,
            &["source", "destination", "source-destination"],
            &format!("{what} fields"),
        )? {
            "source" => (true, false),
            "destination" => (false, true),
            _ => (true, true),
        },
    )
}

/// `ip load-sharing ...`.
pub(super) fn load_sharing(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let mut ls = LoadSharing::default();
    let mut address = None;
    let mut port = None;
    let mut any = false;
    while let Some(t) = a.next_token() {
        any = true;
        match keyword(
            t,
            &[
                "address",
                "port",
                "concatenation",
                "rocev2-dest-qp",
                "rotate",
                "universal-id",
            ],
            "load-sharing keyword",
        )? {
            "address" => address = Some(sides(a, "address")?),
            "port" => port = Some(sides(a, "port")?),
            "concatenation" => ls.concatenation = true,
            "rocev2-dest-qp" => ls.rocev2_dest_qp = true,
            "rotate" => {
                let v = a.expect("rotation")?;
                ls.rotate = Some(value::ranged(v, "rotate", 0, 63)? as u8);
            }
            _ => {
                let v = a.expect("universal id")?;
                ls.universal_id =
                    Some(value::ranged(v, "universal-id", 0, u64::from(u32::MAX))? as u32);
            }
        }
    }
    if !any {
        return Err(a.missing("hash fields"));
    }
    if let Some((s, d)) = address {
        (ls.src_addr, ls.dst_addr) = (s, d);
        (ls.src_port, ls.dst_port) = port.unwrap_or((false, false));
    } else if let Some((s, d)) = port {
        (ls.src_port, ls.dst_port) = (s, d);
    }
    b.config.load_sharing = ls;
    Ok(())
}

/// `no ip load-sharing ...`: back to the default hash.
pub(super) fn no_load_sharing(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.load_sharing = LoadSharing::default();
    Ok(())
}

// ---------------------------------------------------------------- lldp

/// Set one LLDP timer read from the line.
fn lldp_seconds(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
    what: &str,
    item: GlobalItem,
    lo: u64,
    hi: u64,
    set: fn(&mut crate::lldp::Lldp, u16),
) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let t = a.expect(&format!("{what} in seconds"))?;
    a.finish()?;
    let n = value::ranged(t, what, lo, hi)? as u16;
    b.mark_first(At::Global(GlobalItem::Lldp), col);
    b.mark(At::Global(item), t.col);
    set(&mut b.config.lldp, n);
    Ok(())
}

/// `lldp timer S` (5-254).
pub(super) fn lldp_timer(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    lldp_seconds(b, a, "lldp timer", GlobalItem::LldpTimer, 5, 254, |l, n| {
        l.timer_s = n
    })
}

/// `lldp holdtime S` (10-255).
pub(super) fn lldp_holdtime(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    lldp_seconds(
        b,
        a,
        "lldp holdtime",
        GlobalItem::LldpHoldtime,
        10,
        255,
        |l, n| l.holdtime_s = n,
    )
}

/// `lldp reinit S` (1-10).
pub(super) fn lldp_reinit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    lldp_seconds(
        b,
        a,
        "lldp reinit",
        GlobalItem::LldpReinit,
        1,
        10,
        |l, n| l.reinit_s = n,
    )
}

/// `no lldp timer|holdtime|reinit [S]`.
pub(super) fn no_lldp_seconds(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let l = &mut b.config.lldp;
    match a.line.tokens.get(2).map(|t| t.text.to_ascii_lowercase()) {
        Some(w) if w.starts_with('t') => l.timer_s = DEFAULT_LLDP_TIMER_S,
        Some(w) if w.starts_with('h') => l.holdtime_s = DEFAULT_LLDP_HOLDTIME_S,
        _ => l.reinit_s = DEFAULT_LLDP_REINIT_S,
    }
    Ok(())
}

/// `[no] lldp tlv-select TLV`.
fn tlv_select(b: &mut Builder<'_>, a: &mut Args<'_>, on: bool) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let t = a.expect("TLV name")?;
    a.finish()?;
    let k = keyword(t, &LldpTlvSelect::KEYWORDS, "LLDP TLV")?;
    b.mark_first(At::Global(GlobalItem::Lldp), col);
    if let Some(flag) = b.config.lldp.tlv_select.flag_mut(k) {
        *flag = on;
    }
    Ok(())
}

/// `lldp tlv-select TLV`.
pub(super) fn lldp_tlv_select(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    tlv_select(b, a, true)
}

/// `no lldp tlv-select TLV`.
pub(super) fn no_lldp_tlv_select(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    tlv_select(b, a, false)
}

/// Usage of `lldp tlv custom`, shown in hints.
pub(super) const LLDP_TLV_CUSTOM: &str = "lldp tlv custom oui XX:XX:XX subtype 0-255 [info HEX]";

/// Read `oui XX:XX:XX subtype N`, the key of an `lldp tlv custom` entry.
fn custom_tlv_key(a: &mut Args<'_>) -> Result<([u8; 3], u8), Fail> {
    let k = a.expect("`oui`")?;
    keyword(k, &["oui"], "lldp tlv custom keyword")?;
    let oui = value::oui(a.expect("OUI")?)?;
    let k = a.expect("`subtype`")?;
    keyword(k, &["subtype"], "lldp tlv custom keyword")?;
    let subtype = value::ranged(a.expect("subtype")?, "subtype", 0, 255)? as u8;
    Ok((oui, subtype))
}

/// `lldp tlv custom oui XX:XX:XX subtype N [info HEX]` (railyard extension):
/// add an organisationally specific TLV, or replace the one with the same OUI
/// and subtype where it stands.
pub(super) fn lldp_tlv_custom(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let (oui, subtype) = custom_tlv_key(a)?;
    let info = match a.next_token() {
        Some(k) => {
            keyword(k, &["info"], "lldp tlv custom keyword")?;
            let hex = a.expect("information in hex")?;
            let info = value::hex_bytes(hex, "info")?;
            if info.len() > MAX_CUSTOM_TLV_INFO {
                return Err(Fail::new(
                    hex.col,
                    format!("info is {} bytes, too long for an LLDP TLV", info.len()),
                    Some(format!(
                        "info has a {MAX_CUSTOM_TLV_INFO}-byte limit ({} hex digits): an LLDP TLV value is at most 511 bytes, less 4 for the OUI and subtype",
                        2 * MAX_CUSTOM_TLV_INFO
                    )),
                ));
            }
            info
        }
        None => Vec::new(),
    };
    a.finish()?;
    b.mark_first(At::Global(GlobalItem::Lldp), col);
    let tlv = CustomTlv { oui, subtype, info };
    let tlvs = &mut b.config.lldp.custom_tlvs;
    match tlvs
        .iter_mut()
        .find(|t| t.oui == oui && t.subtype == subtype)
    {
        Some(old) => *old = tlv,
        None => tlvs.push(tlv),
    }
    Ok(())
}

/// `no lldp tlv custom oui XX:XX:XX subtype N [info HEX]`: remove the entry
/// with that OUI and subtype (any `info` is ignored).
pub(super) fn no_lldp_tlv_custom(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (oui, subtype) = custom_tlv_key(a)?;
    a.skip_rest();
    b.config
        .lldp
        .custom_tlvs
        .retain(|t| t.oui != oui || t.subtype != subtype);
    Ok(())
}

// ---------------------------------------------------------------- extensions

/// `buffer-size N bytes|kbytes|mbytes` (railyard extension): the shared packet buffer.
pub(super) fn buffer_size(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let n = a.expect("buffer size")?;
    let u = a.expect("unit")?;
    a.finish()?;
    let bytes = value::depth(n, u, "buffer size", true)?.value();
    if bytes == 0 {
        return Err(Fail::new(
            n.col,
            "buffer size 0 leaves no room for packets",
            Some("give the shared buffer size, e.g. buffer-size 32 mbytes".into()),
        ));
    }
    b.config.buffer_bytes = Some(bytes);
    Ok(())
}

/// Usage of `dpdk eal-args`.
pub(super) const DPDK_EAL_ARGS: &str = "dpdk eal-args ARG [ARG ...]";

/// `dpdk eal-args ARG…` (railyard extension): the arguments of DPDK's EAL,
/// one per whitespace-separated word; a later line replaces an earlier one.
pub(super) fn dpdk_eal_args(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let first = a.expect("EAL argument")?;
    let mut args = vec![first.text.to_string()];
    while let Some(t) = a.next_token() {
        args.push(t.text.to_string());
    }
    b.mark(At::Global(GlobalItem::DpdkEalArgs), col);
    b.config.dpdk_eal_args = args;
    Ok(())
}

/// `no dpdk eal-args`: back to railyard's defaults.
pub(super) fn no_dpdk_eal_args(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.dpdk_eal_args.clear();
    Ok(())
}

/// `no buffer-size`.
pub(super) fn no_buffer_size(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.buffer_bytes = None;
    Ok(())
}

/// `priority-flow-control pause-quanta N` (1-65535): railyard's extension
/// setting the quanta of the pause frames the switch sends.
pub(super) fn pause_quanta(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("pause-quanta")?;
    a.finish()?;
    let n = value::ranged(tok, "pause-quanta", 1, 65535)?;
    b.config.pfc_pause_quanta = Some(n as u16);
    Ok(())
}

/// `priority-flow-control watch-dog ingress drop|forward` (railyard
/// extension): what happens to lossless traffic arriving on a port whose
/// queue for its priority the watchdog has shut. `drop` (the default) is
/// what NX-OS documents; `forward` admits it as lossy.
pub(super) fn watchdog_ingress(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("`drop` or `forward`")?;
    let forward = keyword(t, &["drop", "forward"], "watch-dog ingress action")? == "forward";
    a.finish()?;
    b.config.pfc_watchdog_ingress_forward = forward;
    Ok(())
}

/// `no priority-flow-control watch-dog ingress`: back to `drop`.
pub(super) fn no_watchdog_ingress(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.pfc_watchdog_ingress_forward = false;
    Ok(())
}

/// `no priority-flow-control pause-quanta`.
pub(super) fn no_pause_quanta(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.pfc_pause_quanta = None;
    Ok(())
}
